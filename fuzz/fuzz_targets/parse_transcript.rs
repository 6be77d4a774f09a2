//! `transcript::parse_transcript` on arbitrary bytes (as UTF-8, lossily).
//!
//! * never panics;
//! * on success, `serialize_transcript` succeeds and parsing its output gives the same
//!   messages; serializing again gives the same text (a fixpoint);
//! * one message per non-blank line;
//! * nothing lost (SPEC §17): each serialized line is, as JSON, the input line (object keys
//!   compared without their order).

#![no_main]

use context_compaction::transforms::transcript::{
    parse_transcript, serialize_transcript, split_lines,
};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(messages) = parse_transcript(&text) else {
        return;
    };
    let lines = split_lines(&text).expect("parsed text must split");
    assert_eq!(lines.len(), messages.len(), "one message per line");
    let out = serialize_transcript(&messages).expect("parsed messages must serialize");
    let back = parse_transcript(&out).expect("serialized transcript must parse");
    assert_eq!(back, messages, "serialize -> parse is not the identity");
    let out2 = serialize_transcript(&back).unwrap();
    assert_eq!(out, out2, "serialization is not a fixpoint");
    for (line, written) in lines.iter().zip(out.lines()) {
        let a: Value = serde_json::from_str(line.text).unwrap();
        let b: Value = serde_json::from_str(written).unwrap();
        assert_eq!(
            a, b,
            "line {} changed in the round trip:\n in: {}\nout: {}",
            line.number, line.text, written
        );
    }
});
