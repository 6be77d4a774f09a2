//! `Message::parse_all` on arbitrary JSON: the bytes parsed by serde_json (bytes that are
//! not JSON are wrapped as a one-element array of a string, so every input reaches it), or,
//! for inputs starting with 0xff, an array of values `arbitrary` builds from the library's
//! field names and type strings.
//!
//! * never panics: Ok or Err;
//! * on Ok: one message per element; `to_value` -> `from_value` gives the same message; and
//!   `to_value` gives the input element back (objects compared without key order): nothing
//!   lost, nothing invented;
//! * the typed accessors used everywhere (`kind`, `content`, `usage_raw`, …) and the native
//!   view (`content`, `usage`) never panic on what parsed.

#![no_main]

use context_compaction::model::messages::Message;
use context_compaction::model::view::{ConversationView, Detail};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    // An input starting with 0xff is structured: an array of JSON values built from the
    // library's vocabulary (`context_compaction_test_support::typed::Json`); anything else is JSON text.
    let value: Value = match data.split_first() {
        Some((0xff, rest)) => {
            let mut u = arbitrary::Unstructured::new(rest);
            let items: Vec<context_compaction_test_support::typed::Json> =
                u.arbitrary().unwrap_or_default();
            Value::Array(items.into_iter().map(|j| j.0).collect())
        }
        _ => match serde_json::from_slice(data) {
            Ok(v) => v,
            Err(_) => Value::Array(vec![Value::String(
                String::from_utf8_lossy(data).into_owned(),
            )]),
        },
    };
    let Ok(messages) = Message::parse_all(value.clone()) else {
        return;
    };
    let items = value.as_array().expect("parse_all accepted a non-array");
    assert_eq!(items.len(), messages.len());
    for (i, (m, item)) in messages.iter().zip(items).enumerate() {
        let v = m.to_value();
        let back = Message::from_value(v.clone(), "m").expect("to_value output must parse");
        assert_eq!(
            &back, m,
            "messages[{i}]: to_value -> from_value is not the identity"
        );
        assert_eq!(&v, item, "messages[{i}] changed in the round trip");
        let _ = (
            m.kind(),
            m.content(),
            m.usage_raw(),
            m.message_id(),
            m.is_compact_boundary(),
        );
    }
    let view = messages.as_slice();
    for i in 0..view.len() {
        let _ = view.content(i, Detail::Estimate);
        let _ = view.usage(i);
        let _ = view.boundary_kept(i);
    }
    let _ = context_compaction::measure::tokens::token_count_with_estimation(view);
    let _ = context_compaction::transforms::messages_api::validate_for_api(&messages);
});
