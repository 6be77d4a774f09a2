//! `transcript::replace_lone_surrogates` (the bindings run it on the JSON text of every
//! message that crosses from JavaScript): JSON text as `JSON.stringify` writes it from
//! arbitrary UTF-16, lone surrogates included, and arbitrary text.
//!
//! * never panics; deterministic;
//! * on a JS-style JSON string of arbitrary UTF-16 code units, the result parses and is
//!   `String::from_utf16_lossy` of the units (each lone surrogate becomes U+FFFD, nothing
//!   else changes);
//! * text that serde_json already accepts comes back unchanged;
//! * applying it twice changes nothing more.

#![no_main]

use arbitrary::Arbitrary;
use context_compaction::transforms::transcript::replace_lone_surrogates;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

#[derive(Debug, Arbitrary)]
struct Input {
    units: Vec<u16>,
    /// Escape every non-ASCII unit as `\uXXXX` (else write paired ones as UTF-8).
    escape_all: bool,
    text: String,
}

/// A JSON string literal of `units` as JavaScript's `JSON.stringify` writes it (lone
/// surrogates as `\uXXXX`; other characters raw or, with `escape_all`, escaped).
fn js_stringify(units: &[u16], escape_all: bool) -> String {
    let mut out = String::from("\"");
    for r in char::decode_utf16(units.iter().copied()) {
        match r {
            Ok('"') => out.push_str("\\\""),
            Ok('\\') => out.push_str("\\\\"),
            Ok(c) if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            Ok(c) if escape_all && !c.is_ascii() => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{:04x}", u));
                }
            }
            Ok(c) => out.push(c),
            Err(e) => out.push_str(&format!("\\u{:04x}", e.unpaired_surrogate())),
        }
    }
    out.push('"');
    out
}

fuzz_target!(|input: Input| {
    let units: Vec<u16> = input.units.into_iter().take(512).collect();
    let json = js_stringify(&units, input.escape_all);
    let fixed = replace_lone_surrogates(&json);
    assert_eq!(fixed, replace_lone_surrogates(&json));
    let v: Value = serde_json::from_str(&fixed)
        .unwrap_or_else(|e| panic!("not JSON after replacing: {e}\n in: {json}\nout: {fixed}"));
    assert_eq!(
        v,
        Value::String(String::from_utf16_lossy(&units)),
        "in: {json}\nout: {fixed}"
    );
    assert_eq!(replace_lone_surrogates(&fixed), fixed, "not idempotent");

    let text = input.text;
    let out = replace_lone_surrogates(&text);
    assert_eq!(out, replace_lone_surrogates(&text));
    if serde_json::from_str::<Value>(&text).is_ok() {
        assert_eq!(out, text, "valid JSON changed");
    }
    assert_eq!(replace_lone_surrogates(&out), out, "not idempotent");
});
