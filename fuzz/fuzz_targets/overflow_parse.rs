//! `ptl::parse_context_overflow_error` on arbitrary strings and statuses.
//!
//! * never panics; deterministic;
//! * `gap` is present exactly when `actual` and `limit` are, and is `actual − limit`
//!   (saturating at 0);
//! * case does not matter (the text is matched lower-cased);
//! * a 413 status is always an overflow.

#![no_main]

use arbitrary::Arbitrary;
use context_compaction::transforms::ptl::parse_context_overflow_error;
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Input {
    status: Option<u16>,
    prefix: u8,
    text: String,
}

const PREFIXES: &[&str] = &[
    "",
    "prompt is too long: ",
    "input length and max_tokens exceed context limit: ",
    "This model's maximum context length is ",
    "The input token count (",
    "context_length_exceeded ",
    "request_too_large ",
    "exceeds the maximum number of tokens allowed (",
];

fuzz_target!(|input: Input| {
    let prefix = PREFIXES[usize::from(input.prefix) % PREFIXES.len()];
    let text = format!("{prefix}{}", input.text);
    let r = parse_context_overflow_error(&text, input.status);
    assert_eq!(
        r,
        parse_context_overflow_error(&text, input.status),
        "not deterministic"
    );
    if input.status == Some(413) {
        assert!(r.is_some(), "a 413 is an overflow");
    }
    let upper = parse_context_overflow_error(&text.to_ascii_uppercase(), input.status);
    assert_eq!(r, upper, "case changed the answer");
    if let Some(o) = r {
        match (o.actual, o.limit) {
            (Some(a), Some(l)) => assert_eq!(o.gap, Some(a.saturating_sub(l)), "{o:?}"),
            _ => assert_eq!(o.gap, None, "gap without both numbers: {o:?}"),
        }
    }
});
