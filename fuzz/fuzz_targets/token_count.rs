//! Token accounting on structured random conversations whose `usage` may carry anything JSON
//! can: plausible counts, null, floats, negative numbers, 1e300, integers above 1e15; and
//! `check_token_count` on arbitrary `f64` (NaN and infinities included).
//!
//! * `RunningCount`, fed message by message, equals `token_count_checked` of every prefix,
//!   and `token_count_with_estimation` of every prefix without a session-memory boundary
//!   (`compactMetadata.keptMessages` > 0);
//! * a message whose usage is negative or implausibly large gives an `INVALID_TOKEN_COUNT`
//!   error, never a panic and never a count; plausible usage never gives an error;
//! * `check_token_count(v)` is `Ok(round(v))` exactly for finite `0 <= v <= 1e15`.

#![no_main]

use arbitrary::Arbitrary;
use context_compaction::measure::tokens::{
    message_facts, token_count_checked, token_count_with_estimation, RunningCount,
};
use context_compaction::model::error::{check_token_count, ErrorCode};
use context_compaction::model::messages::{Kind, Message};
use context_compaction::model::view::{ConversationView, UsageCounts};
use context_compaction_test_support::{plausible_usage, Convo};
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Input {
    convo: Convo,
    raw: [Option<f64>; 4],
}

/// Whether the usage of message `m`, as the view reads it, is invalid.
fn usage_invalid(m: &Message) -> bool {
    let Some(u) = m.usage_raw() else { return false };
    [
        &u.input_tokens,
        &u.cache_creation_input_tokens,
        &u.cache_read_input_tokens,
        &u.output_tokens,
    ]
    .iter()
    .any(|n| match n {
        Some(Some(n)) => {
            let v = n.as_f64().unwrap();
            !(0.0..=1e15).contains(&v)
        }
        _ => false,
    })
}

fuzz_target!(|input: Input| {
    for v in input.raw.iter().flatten() {
        let r = check_token_count(*v, "x");
        if v.is_finite() && *v >= 0.0 && *v <= 1e15 {
            assert_eq!(r, Ok(v.round() as u64), "{v}");
        } else {
            assert_eq!(r.unwrap_err().code, ErrorCode::InvalidTokenCount, "{v}");
        }
    }
    let r = UsageCounts::from_raw(input.raw, || "loc".to_string());
    let all_ok = input
        .raw
        .iter()
        .flatten()
        .all(|v| v.is_finite() && *v >= 0.0 && *v <= 1e15);
    assert_eq!(r.is_ok(), all_ok, "{:?}", input.raw);
    if let Ok(u) = r {
        assert_eq!(u.context_total(), u.input_total() + u.output_tokens);
    }

    let msgs = input.convo.messages();
    context_compaction_test_support::typed::dump(&msgs);
    let plausible = plausible_usage(&input.convo);
    let view = msgs.as_slice();
    let mut running = RunningCount::default();
    let mut session_memory_boundary = false;
    for i in 0..msgs.len() {
        let facts = message_facts(view, i);
        let invalid = msgs[i].kind() == Kind::Assistant && usage_invalid(&msgs[i]);
        match &facts {
            Ok(_) => assert!(!invalid, "messages[{i}]: invalid usage accepted"),
            Err(e) => {
                assert!(invalid, "messages[{i}]: error without invalid usage: {e}");
                assert_eq!(e.code, ErrorCode::InvalidTokenCount);
                assert!(!plausible);
            }
        }
        let Ok(facts) = facts else {
            // The batch counts may or may not read this message; they must not panic.
            for j in i..msgs.len() {
                let _ = token_count_with_estimation(&msgs[..=j]);
                let _ = token_count_checked(&msgs[..=j]);
            }
            return;
        };
        running.push(&facts);
        if view.is_compact_boundary(i) && !view.is_sidechain(i) {
            session_memory_boundary = view.boundary_kept(i) > 0;
        }
        let prefix = &msgs[..=i];
        let checked = token_count_checked(prefix).expect("every message read fine");
        assert_eq!(
            running.total(),
            checked.total,
            "running count != checked count after messages[{i}]"
        );
        let plain = token_count_with_estimation(prefix).expect("every message read fine");
        if plain.calibrated {
            // The line learned before the context began (system prompt and tools in it):
            // nothing anchors the count.
            assert!(
                plain.from_usage == 0 && plain.anchor.is_none(),
                "a calibrated count with an anchor: {plain:?}"
            );
        } else {
            assert_eq!(
                plain.total,
                plain.from_usage + plain.estimated,
                "total != from_usage + estimated: {plain:?}"
            );
        }
        if !session_memory_boundary {
            assert_eq!(
                running.total(),
                plain.total,
                "running count != batch count after messages[{i}]"
            );
            assert_eq!(checked, plain);
        }
    }
});
