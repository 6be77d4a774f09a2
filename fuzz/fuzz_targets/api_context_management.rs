//! The `buildApiContextManagement` and `applyApiCompaction` paths on arbitrary JSON:
//! `drive::options::context_management_options` → `build_api_context_management`, and
//! `drive::options::apply_api_compaction_options` → `apply_api_compaction` with an arbitrary
//! response body, on a small valid conversation.
//!
//! Inputs: bytes starting with `0xff` build `[options, response]` from the options' own
//! vocabulary (field names, edit types, stop reasons, edge numbers), optionally wrapped in up
//! to 140 levels of nesting; other bytes are JSON text read as the options (and, when it is
//! an array of two, as options and response), the way the bindings read them (serde_json's
//! 128-level limit).
//!
//! Invariants: never a panic; options give a value or an `INVALID_CONFIG` /
//! `INVALID_ARGUMENT` error with a message (`INVALID_ARGUMENT` for the context-management
//! options only when they are not an object), the same twice; the parameter built is `None` or
//! `{"edits": [...]}` with at least one edit, each of a known type, every `input_tokens` value
//! a whole number ≤ 10^15, a compaction trigger ≥ the API's minimum, `clear_at_least` never
//! above the trigger; it writes as JSON text and reads back equal. `apply_api_compaction`
//! gives a report or `INVALID_ARGUMENT` (`INVALID_TOKEN_COUNT` for bad usage counts): its indices lie within the conversation, a response
//! is never both compacted and failed, and `paused` only with a compaction block.

#![no_main]

use arbitrary::{Result as ArbResult, Unstructured};
use context_compaction::drive::options::{
    apply_api_compaction_options, context_management_options,
};
use context_compaction::model::error::ErrorCode;
use context_compaction::model::messages::Message;
use context_compaction::transforms::context_management::{
    apply_api_compaction, build_api_context_management, ApplyApiCompactionOptions,
    ContextManagementOptions, CLEAR_THINKING_EDIT, CLEAR_TOOL_USES_EDIT, COMPACT_EDIT,
    MIN_COMPACT_TRIGGER_INPUT_TOKENS,
};
use context_compaction_test_support::typed::{arbitrary_json_with, Vocabulary};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

/// Keys of responses and blocks, besides the options' own (`ContextManagementOptions::FIELDS`,
/// `ApplyApiCompactionOptions::FIELDS`).
const RESPONSE_KEYS: &[&str] = &[
    "type",
    "value",
    "content",
    "stop_reason",
    "usage",
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "iterations",
    "text",
];

/// The fuzzer's keys: every option the readers know, and the response's.
fn keys() -> &'static [&'static str] {
    static KEYS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    KEYS.get_or_init(|| {
        ContextManagementOptions::FIELDS
            .iter()
            .chain(ApplyApiCompactionOptions::FIELDS)
            .chain(RESPONSE_KEYS)
            .copied()
            .collect()
    })
}

const STRINGS: &[&str] = &[
    "all",
    "thinking_turns",
    "compaction",
    "text",
    "end_turn",
    "model_context_window_exceeded",
    "max_tokens",
    "Bash",
    "Read",
    "",
    " ",
    "Summary of the work so far.",
];

fn number(u: &mut Unstructured<'_>) -> ArbResult<Value> {
    Ok(match u.int_in_range(0..=8)? {
        0 => json!(u.arbitrary::<u32>()?),
        1 => json!(-i64::from(u.arbitrary::<u16>()?)),
        2 => json!(u.arbitrary::<u64>()?),
        3 => serde_json::Number::from_f64(u.arbitrary::<f64>()?).map_or(Value::Null, Value::Number),
        4 => json!(MIN_COMPACT_TRIGGER_INPUT_TOKENS as f64 + f64::from(u.arbitrary::<i8>()?)),
        5 => json!(1e15 + f64::from(u.arbitrary::<i8>()?)),
        6 => json!(1e300),
        7 => json!(f64::from(u.arbitrary::<u16>()?) / 4.0),
        _ => json!(0),
    })
}

/// A value of the context-management vocabulary (its keys and edge numbers).
fn value(u: &mut Unstructured<'_>, depth: u32) -> ArbResult<Value> {
    let vocabulary = Vocabulary {
        keys: keys(),
        strings: STRINGS,
        number,
        max_depth: 5,
    };
    arbitrary_json_with(u, &vocabulary, depth)
}

/// A response body: usually a `content` array whose first block may be a compaction block.
fn response(u: &mut Unstructured<'_>) -> ArbResult<Value> {
    if u.ratio(1, 4)? {
        return value(u, 0);
    }
    let mut content = Vec::new();
    if u.arbitrary()? {
        let c = match u.int_in_range(0..=3)? {
            0 => Value::Null,
            1 => json!("Summary of the work so far."),
            2 => json!(""),
            _ => value(u, 2)?,
        };
        content.push(json!({"type": "compaction", "content": c}));
    }
    for _ in 0..u.int_in_range(0..=2)? {
        content.push(value(u, 2)?);
    }
    let mut r = json!({"content": content});
    if u.arbitrary()? {
        r["stop_reason"] = Value::String(STRINGS[usize::from(u.arbitrary::<u8>()?) % 7].into());
    }
    if u.arbitrary()? {
        r["usage"] = value(u, 1)?;
    }
    Ok(r)
}

/// Wraps the text of `v` in `depth` levels of arrays or objects.
fn deep(v: &Value, depth: usize, array: bool) -> Value {
    let inner = v.to_string();
    let (open, close) = if array { ("[", "]") } else { ("{\"a\":", "}") };
    let text = format!("{}{inner}{}", open.repeat(depth), close.repeat(depth));
    serde_json::from_str(&text).unwrap_or(Value::String(text))
}

fn conversation() -> Vec<Message> {
    Message::parse_all(json!([
        {"role": "user", "content": "Fix the failing test."},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "cargo test"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "1 failed"}]},
        {"role": "assistant", "content": "The parser drops the last line."},
        {"role": "user", "content": "Go on."}
    ]))
    .expect("a valid conversation")
}

fn whole_count(v: &Value, what: &str) -> u64 {
    let n = v
        .get("value")
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{what}: not a whole count: {v}"));
    assert!(n <= 1_000_000_000_000_000, "{what}: {n} above 10^15");
    n
}

fn check_built(p: &Value) {
    let text = serde_json::to_string(p).expect("the parameter writes as JSON");
    let back: Value = serde_json::from_str(&text).expect("and reads back");
    assert_eq!(&back, p, "the parameter changed in a JSON round trip");
    let edits = p["edits"].as_array().expect("edits is an array");
    assert!(
        !edits.is_empty(),
        "an empty edits list is sent as null instead"
    );
    for e in edits {
        let t = e["type"].as_str().expect("every edit has a type");
        assert!(
            [CLEAR_THINKING_EDIT, CLEAR_TOOL_USES_EDIT, COMPACT_EDIT].contains(&t),
            "unknown edit {t}"
        );
        if t == COMPACT_EDIT {
            let trigger = whole_count(&e["trigger"], "compact trigger");
            assert!(
                trigger >= MIN_COMPACT_TRIGGER_INPUT_TOKENS,
                "compact trigger {trigger}"
            );
            if let Some(i) = e.get("instructions") {
                assert!(
                    !i.as_str().unwrap_or("").trim().is_empty(),
                    "blank instructions"
                );
            }
        }
        if t == CLEAR_TOOL_USES_EDIT {
            let trigger = whole_count(&e["trigger"], "tool-use trigger");
            assert!(trigger > 0, "a zero trigger");
            if let Some(c) = e.get("clear_at_least") {
                assert!(
                    whole_count(c, "clear_at_least") <= trigger,
                    "clear_at_least above the trigger"
                );
            }
        }
    }
}

fn run(options: &Value, resp: &Value) {
    let a = context_management_options(options);
    let b = context_management_options(options);
    assert_eq!(
        format!("{a:?}"),
        format!("{b:?}"),
        "options: not deterministic"
    );
    match a {
        Ok(o) => {
            let built = build_api_context_management(&o);
            assert_eq!(
                built,
                build_api_context_management(&o),
                "build: not deterministic"
            );
            if let Some(p) = built {
                check_built(&p);
            }
        }
        Err(e) => {
            let not_an_object = !options.is_object() && !options.is_null();
            assert!(
                e.code == ErrorCode::InvalidConfig
                    || (not_an_object && e.code == ErrorCode::InvalidArgument),
                "{:?}: {}",
                e.code,
                e.message
            );
            assert!(!e.message.is_empty());
        }
    }
    let opts = match apply_api_compaction_options(options) {
        Ok(o) => o,
        Err(e) => {
            assert_eq!(e.code, ErrorCode::InvalidArgument, "{}", e.message);
            ApplyApiCompactionOptions::default()
        }
    };
    let messages = conversation();
    match apply_api_compaction(&messages, resp, &opts) {
        Ok(r) => {
            assert!(
                r.drop_before <= messages.len(),
                "drop_before {}",
                r.drop_before
            );
            assert!(
                r.readd.iter().all(|&i| i < messages.len()),
                "readd {:?}",
                r.readd
            );
            assert!(!(r.compacted && r.failed), "compacted and failed");
            if r.paused {
                assert!(r.compacted || r.failed, "paused without a compaction block");
            }
        }
        Err(e) => {
            assert!(
                matches!(
                    e.code,
                    ErrorCode::InvalidArgument | ErrorCode::InvalidTokenCount
                ),
                "{:?}: {}",
                e.code,
                e.message
            );
            assert!(!e.message.is_empty());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (options, resp) = match data.split_first() {
        Some((0xff, rest)) => {
            let mut u = Unstructured::new(rest);
            let Ok(mut options) = value(&mut u, 0) else {
                return;
            };
            let Ok(mut resp) = response(&mut u) else {
                return;
            };
            if u.ratio(1, 5).unwrap_or(false) {
                let depth = u.int_in_range(1..=140).unwrap_or(1);
                let array = u.arbitrary().unwrap_or(false);
                if u.arbitrary().unwrap_or(false) {
                    options = deep(&options, depth, array);
                } else {
                    resp = deep(&resp, depth, array);
                }
            }
            (options, resp)
        }
        _ => match serde_json::from_slice::<Value>(data) {
            Ok(Value::Array(mut a)) if a.len() == 2 => {
                let r = a.pop().unwrap_or(Value::Null);
                (a.pop().unwrap_or(Value::Null), r)
            }
            Ok(v) => (v.clone(), v),
            Err(_) => {
                let s = Value::String(String::from_utf8_lossy(data).into_owned());
                (s.clone(), s)
            }
        },
    };
    run(&options, &resp);
});
