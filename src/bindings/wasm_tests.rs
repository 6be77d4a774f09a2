//! The exported functions exercised from inside WebAssembly (`wasm-pack test`).
//!
//! These tests call the `pub fn`s of [`super::exports`] with real JavaScript values, so they cover
//! what `cargo test` cannot: the conversions at the boundary, the JS readers of `js_view.js`,
//! object identity of untouched messages, and the `code` of thrown errors.
//!
//! The same binary runs in Node and in headless Chrome. There is deliberately no
//! `wasm_bindgen_test_configure!` (`run_in_browser` would make `--node` skip the suite): the
//! environment is chosen by `scripts/test.sh` through the runner's environment variables.
//! `WASM_BINDGEN_USE_BROWSER=1` is what makes `wasm-pack test --headless --chrome` run the
//! suite instead of skipping it; `WASM_BINDGEN_USE_NODE_EXPERIMENTAL=1` makes the Node run
//! load the glue as an ES module, so that the ES-module snippet `src/bindings/js_view.js`
//! also loads on Node versions without `require(esm)` (before 20.19).

use js_sys::{Array, Object, Reflect};
use serde_json::json;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

use super::exports::*;

/// A JS value from a `serde_json` value, converted the way the bindings convert (plain
/// objects, not `Map`s).
fn js(v: serde_json::Value) -> JsValue {
    super::convert::to_js(&v).expect("serializable test value")
}

/// A JS value parsed by the engine's own `JSON.parse`.
fn parse(text: &str) -> JsValue {
    js_sys::JSON::parse(text).expect("valid JSON in test")
}

/// `JSON.stringify(v)`, to compare structures.
fn stringify(v: &JsValue) -> String {
    js_sys::JSON::stringify(v)
        .expect("stringifiable")
        .as_string()
        .expect("a string")
}

/// Reads `obj[key]`.
fn get(obj: &JsValue, key: &str) -> JsValue {
    Reflect::get(obj, &key.into()).expect("readable property")
}

/// Reads `obj[key]` as a number.
fn num(obj: &JsValue, key: &str) -> f64 {
    get(obj, key)
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number"))
}

/// Reads `obj[key]` as a boolean.
fn flag(obj: &JsValue, key: &str) -> bool {
    get(obj, key)
        .as_bool()
        .unwrap_or_else(|| panic!("{key} is not a boolean"))
}

/// Element `i` of an array value.
fn at(arr: &JsValue, i: u32) -> JsValue {
    arr.dyn_ref::<Array>().expect("an array").get(i)
}

/// Length of an array value.
fn len(arr: &JsValue) -> u32 {
    arr.dyn_ref::<Array>().expect("an array").length()
}

#[wasm_bindgen::prelude::wasm_bindgen(module = "/src/bindings/js_error.js")]
extern "C" {
    /// The class the package exports; every coded error is an instance of it.
    type ContextCompactionError;
}

/// Asserts that `r` failed with a real `Error` carrying `code`; returns its message.
fn expect_code<T: std::fmt::Debug>(r: Result<T, JsValue>, code: &str) -> String {
    let e = r.expect_err("expected an error");
    let err = e
        .dyn_ref::<js_sys::Error>()
        .unwrap_or_else(|| panic!("thrown value is not an Error: {e:?}"));
    assert!(
        e.is_instance_of::<ContextCompactionError>(),
        "thrown value is not a ContextCompactionError: {e:?}"
    );
    assert_eq!(get(&e, "code").as_string().as_deref(), Some(code));
    assert_eq!(String::from(err.name()), "ContextCompactionError");
    String::from(err.message())
}

/// The summary request handed to JS is built field by field (`request_js`): it must be the
/// request's `Serialize` form, key for key and in order, for both kinds of message, with and
/// without `system` and `compaction`, and with texts that JSON would escape.
#[wasm_bindgen_test]
fn summary_request_object_is_its_serialized_form() {
    use crate::summarize::summary::{build_summary_request, RequestMessage};
    let lines: Vec<crate::model::messages::Message> = serde_json::from_value(json!([
        {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "quote \" and \\ and \u{1} and é and 😀"}},
        {"type": "assistant", "uuid": "a1", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "line one\nline two"},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/x"}}]}},
        {"type": "user", "uuid": "u2", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "file text"}]}}
    ]))
    .expect("messages");
    let mut request = build_summary_request("claude-test", &lines, &["be brief".to_string()]);
    for system in ["", "a system prompt"] {
        for compaction in [
            None,
            Some(json!({"type": "summarize", "instructions": "x"})),
        ] {
            request.system = system.to_string();
            request.compaction = compaction;
            request.messages.push(RequestMessage::Raw(
                json!({"role": "user", "content": [{"type": "text", "text": "as given", "extra": [1, null]}]}),
            ));
            let built = super::env::request_js(&request).expect("request object");
            assert_eq!(
                stringify(&built),
                serde_json::to_string(&request).expect("json")
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Token counting (SPEC §3)

#[wasm_bindgen_test]
fn rough_estimation_counts_utf16_units() {
    let est = |s: &str, bpt: Option<f64>| {
        rough_token_count_estimation(s.into(), bpt.map_or(JsValue::UNDEFINED, JsValue::from))
            .unwrap()
    };
    assert_eq!(est("", None), 0.0);
    assert_eq!(est("abcdefgh", None), 2.0);
    assert_eq!(est("abcdefgh", Some(2.0)), 4.0);
    // Rounded, not truncated: 10 / 4 = 2.5 → 3 (round half away from zero).
    assert_eq!(est("abcdefghij", None), 3.0);
    // Two astral characters are four UTF-16 code units (JavaScript's `length`), not 8 bytes.
    assert_eq!(est("😀😀", None), 1.0);
    assert_eq!(est("é", Some(1.0)), 1.0);
}

#[wasm_bindgen_test]
fn token_count_uses_latest_usage_then_estimates() {
    let messages = js(json!([
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}],
         "usage": {"input_tokens": 100, "cache_creation_input_tokens": 20,
                   "cache_read_input_tokens": 30, "output_tokens": 50}},
        {"role": "user", "content": "x".repeat(400)},
    ]));
    // 100 + 20 + 30 + 50 from usage, then 400 characters / 4.
    assert_eq!(
        token_count_with_estimation(messages, JsValue::UNDEFINED).unwrap(),
        300.0
    );

    // No usage anywhere: everything is estimated; images count a flat 2,000.
    let messages = js(json!([
        {"role": "user", "content": [
            {"type": "text", "text": "y".repeat(800)},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "A".repeat(100_000)}}
        ]},
    ]));
    assert_eq!(
        token_count_with_estimation(messages, JsValue::UNDEFINED).unwrap(),
        2_200.0
    );
}

#[wasm_bindgen_test]
fn token_count_counts_split_response_once() {
    // One API response written as two transcript lines sharing message.id and usage.
    let usage = json!({"input_tokens": 10, "cache_creation_input_tokens": 0,
                       "cache_read_input_tokens": 990, "output_tokens": 5});
    let lines = js(json!([
        {"type": "user", "uuid": "u1", "parentUuid": null,
         "message": {"role": "user", "content": "go"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1",
         "message": {"id": "msg_1", "role": "assistant", "usage": usage,
                     "content": [{"type": "text", "text": "one"}]}},
        {"type": "assistant", "uuid": "a2", "parentUuid": "a1",
         "message": {"id": "msg_1", "role": "assistant", "usage": usage,
                     "content": [{"type": "text", "text": "two"}]}},
        {"type": "progress", "uuid": "p1", "data": {"anything": true}},
    ]));
    assert_eq!(
        token_count_with_estimation(lines, JsValue::UNDEFINED).unwrap(),
        1_005.0
    );
}

// ---------------------------------------------------------------------------------------------
// Thresholds (SPEC §4, worked example)

#[wasm_bindgen_test]
fn spec_worked_example_opus_4_6() {
    let model = || JsValue::from_str("claude-opus-4-6");
    let none = || JsValue::UNDEFINED;
    assert_eq!(
        get_context_window_for_model(model(), none()).unwrap(),
        200_000.0
    );
    assert_eq!(
        get_effective_context_window_size(model(), none()).unwrap(),
        180_000.0
    );
    assert_eq!(
        get_auto_compact_threshold(model(), none()).unwrap(),
        167_000.0
    );

    let state =
        |tokens: f64| calculate_token_warning_state(tokens.into(), model(), none()).unwrap();

    let s = state(0.0);
    assert_eq!(num(&s, "percentLeft"), 100.0);
    for k in [
        "isAboveWarningThreshold",
        "isAboveErrorThreshold",
        "isAboveAutoCompactThreshold",
        "isAtBlockingLimit",
    ] {
        assert!(!flag(&s, k), "{k} at 0 tokens");
    }

    // Warning and error lines are both at 167,000 − 20,000 = 147,000.
    let s = state(146_999.0);
    assert!(!flag(&s, "isAboveWarningThreshold"));
    assert!(!flag(&s, "isAboveErrorThreshold"));
    let s = state(147_000.0);
    assert!(flag(&s, "isAboveWarningThreshold"));
    assert!(flag(&s, "isAboveErrorThreshold"));
    assert!(!flag(&s, "isAboveAutoCompactThreshold"));
    // (167,000 − 147,000) / 167,000 = 11.98 % → 12.
    assert_eq!(num(&s, "percentLeft"), 12.0);

    // Auto-compaction at 167,000.
    assert!(!flag(&state(166_999.0), "isAboveAutoCompactThreshold"));
    let s = state(167_000.0);
    assert!(flag(&s, "isAboveAutoCompactThreshold"));
    assert_eq!(num(&s, "percentLeft"), 0.0);
    assert!(!flag(&s, "isAtBlockingLimit"));

    // Blocking at 180,000 − 3,000 = 177,000; percentLeft never goes below 0.
    assert!(!flag(&state(176_999.0), "isAtBlockingLimit"));
    let s = state(177_000.0);
    assert!(flag(&s, "isAtBlockingLimit"));
    assert_eq!(num(&state(250_000.0), "percentLeft"), 0.0);

    // With auto-compaction off the threshold is the effective window: warning at 160,000.
    let off = js(json!({"autoCompactEnabled": false}));
    let s = calculate_token_warning_state(159_999.0.into(), model(), off.clone()).unwrap();
    assert!(!flag(&s, "isAboveWarningThreshold"));
    let s = calculate_token_warning_state(160_000.0.into(), model(), off).unwrap();
    assert!(flag(&s, "isAboveWarningThreshold"));
    assert!(!flag(&s, "isAboveAutoCompactThreshold"));
}

#[wasm_bindgen_test]
fn constants_match_spec() {
    let c = get_constants().unwrap();
    for (k, v) in [
        ("AUTOCOMPACT_BUFFER_TOKENS", 13_000.0),
        ("WARNING_THRESHOLD_BUFFER_TOKENS", 20_000.0),
        ("ERROR_THRESHOLD_BUFFER_TOKENS", 20_000.0),
        ("MANUAL_COMPACT_BUFFER_TOKENS", 3_000.0),
        ("MAX_OUTPUT_TOKENS_FOR_SUMMARY", 20_000.0),
        ("MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES", 3.0),
        ("MAX_PTL_RETRIES", 3.0),
        ("POST_COMPACT_MAX_FILES_TO_RESTORE", 5.0),
        ("POST_COMPACT_TOKEN_BUDGET", 50_000.0),
        ("MICROCOMPACT_KEEP_RECENT", 5.0),
    ] {
        assert_eq!(num(&c, k), v, "{k}");
    }
    assert_eq!(
        get(&c, "CLEARED_TOOL_RESULT_PLACEHOLDER")
            .as_string()
            .as_deref(),
        Some("[Old tool result content cleared]")
    );
}

// ---------------------------------------------------------------------------------------------
// stripImagesFromMessages (SPEC §7 step 2)

#[wasm_bindgen_test]
fn strip_images_replaces_media_in_user_messages_only() {
    let png = json!({"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="});
    let input = js(json!([
        {"role": "user", "content": [
            {"type": "text", "text": "look"},
            {"type": "image", "source": png},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "d"}}
        ]},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a.png"}}
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1",
             "content": [{"type": "image", "source": png}, {"type": "text", "text": "ok"}]}
        ]},
        {"role": "assistant", "content": [{"type": "image", "source": png}]},
        {"role": "user", "content": "plain text, no media"},
    ]));
    let before = stringify(&input);
    let out: JsValue = strip_images_from_messages(input.clone(), JsValue::UNDEFINED)
        .unwrap()
        .into();

    assert_eq!(len(&out), 5);
    assert_eq!(stringify(&input), before, "the input is not mutated");
    assert!(!Object::is(&out, &input), "a new array");

    let m0 = at(&out, 0);
    assert_eq!(
        stringify(&get(&m0, "content")),
        r#"[{"type":"text","text":"look"},{"type":"text","text":"[image]"},{"type":"text","text":"[document]"}]"#
    );
    let m2 = at(&out, 2);
    assert_eq!(
        stringify(&get(&m2, "content")),
        r#"[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"[image]"},{"type":"text","text":"ok"}]}]"#
    );
    // Assistant messages and messages without media are the very same objects.
    for i in [1, 3, 4] {
        assert!(Object::is(&at(&out, i), &at(&input, i)), "message {i}");
    }
}

// ---------------------------------------------------------------------------------------------
// microCompact (SPEC §10)

/// `n` Read calls, each answered by a large result, as API-shape messages.
fn read_conversation(n: usize) -> serde_json::Value {
    let mut v = vec![json!({"role": "user", "content": "read the files"})];
    for k in 0..n {
        v.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": format!("toolu_{k}"), "name": "Read",
             "input": {"file_path": format!("/src/file{k}.rs")}}
        ]}));
        v.push(json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("toolu_{k}"),
             "content": format!("{k}:{}", "line of code\n".repeat(400))}
        ]}));
    }
    v.push(json!({"role": "assistant", "content": [{"type": "text", "text": "done"}]}));
    serde_json::Value::Array(v)
}

#[wasm_bindgen_test]
fn micro_compact_clears_old_results_and_keeps_identity() {
    let input = js(read_conversation(7));
    let before = stringify(&input);
    let r = micro_compact(input.clone(), JsValue::UNDEFINED).unwrap();
    let out = get(&r, "messages");
    assert_eq!(stringify(&input), before, "the input is not mutated");
    assert_eq!(len(&out), len(&input));

    // 7 results, the 5 most recent are kept: toolu_0 and toolu_1 are cleared.
    assert_eq!(
        stringify(&get(&r, "clearedToolUseIds")),
        r#"["toolu_0","toolu_1"]"#
    );
    assert!(num(&r, "tokensFreed") > 0.0);
    for i in 0..len(&out) {
        let same = Object::is(&at(&out, i), &at(&input, i));
        let cleared = i == 2 || i == 4; // the user messages answering toolu_0 and toolu_1
        assert_eq!(same, !cleared, "identity of message {i}");
    }
    let block = at(&get(&at(&out, 2), "content"), 0);
    assert_eq!(
        get(&block, "content").as_string().as_deref(),
        Some("[Old tool result content cleared]")
    );
    assert_eq!(
        get(&block, "tool_use_id").as_string().as_deref(),
        Some("toolu_0")
    );

    // Running it again changes nothing more, and returns every message as the same object.
    let again = micro_compact(out.clone(), JsValue::UNDEFINED).unwrap();
    assert_eq!(len(&get(&again, "clearedToolUseIds")), 0);
    let out2 = get(&again, "messages");
    for i in 0..len(&out) {
        assert!(Object::is(&at(&out2, i), &at(&out, i)), "message {i}");
    }

    // Identical input gives byte-identical output.
    let r2 = micro_compact(js(read_conversation(7)), JsValue::UNDEFINED).unwrap();
    assert_eq!(stringify(&get(&r2, "messages")), stringify(&out));
}

#[wasm_bindgen_test]
fn micro_compact_options() {
    let input = js(read_conversation(3));
    let r = micro_compact(input.clone(), js(json!({"keepRecent": 1}))).unwrap();
    assert_eq!(
        stringify(&get(&r, "clearedToolUseIds")),
        r#"["toolu_0","toolu_1"]"#
    );
    // Time-based variant: not idle long enough → nothing is cleared.
    let r = micro_compact(
        input.clone(),
        js(
            json!({"keepRecent": 0, "idleMinutes": 60, "now": 10_000_000.0,
                  "lastAssistantTimestamp": 10_000_000.0 - 59.0 * 60_000.0}),
        ),
    )
    .unwrap();
    assert_eq!(len(&get(&r, "clearedToolUseIds")), 0);
    let r = micro_compact(
        input,
        js(
            json!({"keepRecent": 0, "idleMinutes": 60, "now": 10_000_000.0,
                  "lastAssistantTimestamp": 10_000_000.0 - 61.0 * 60_000.0}),
        ),
    )
    .unwrap();
    assert_eq!(len(&get(&r, "clearedToolUseIds")), 3);
}

// ---------------------------------------------------------------------------------------------
// truncateHeadForPTLRetry (SPEC §8)

/// `rounds` API rounds of about 5,000 tokens each (20,000 characters).
fn big_rounds(rounds: usize) -> JsValue {
    let mut v = vec![json!({"role": "user", "content": "start"})];
    for k in 0..rounds {
        v.push(json!({"role": "assistant", "content": format!("a{k} {}", "z".repeat(10_000))}));
        v.push(json!({"role": "user", "content": format!("u{k} {}", "q".repeat(10_000))}));
    }
    js(serde_json::Value::Array(v))
}

#[wasm_bindgen_test]
fn ptl_retry_with_anthropic_400() {
    let messages = big_rounds(10);
    // The body the Messages API answers with HTTP 400, as SDKs expose it.
    let body = parse(
        r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213462 tokens > 200000 maximum"}}"#,
    );
    let sdk_error = Object::new();
    Reflect::set(&sdk_error, &"status".into(), &400.into()).unwrap();
    Reflect::set(&sdk_error, &"error".into(), &body).unwrap();

    let overflow =
        parse_context_overflow_error(sdk_error.clone().into(), JsValue::UNDEFINED).unwrap();
    assert_eq!(num(&overflow, "gap"), 13_462.0);

    let out = truncate_head_for_ptl_retry(messages.clone(), sdk_error.into(), JsValue::UNDEFINED)
        .unwrap();
    // Groups: [start], then one per assistant response (≈5,000 tokens each, the first
    // group only a token). Covering 13,462 tokens drops the first 4 groups (1 + 3 × 5,000):
    // the kept part starts at the 4th assistant message (index 7), so a user marker leads.
    let marker = at(&out, 0);
    assert_eq!(get(&marker, "role").as_string().as_deref(), Some("user"));
    let consts = get_constants().unwrap();
    assert_eq!(
        stringify(&get(&marker, "content")),
        stringify(&get(&consts, "PTL_MARKER_TEXT"))
    );
    assert_eq!(len(&out), 1 + len(&messages) - 7);
    for i in 1..len(&out) {
        assert!(
            Object::is(&at(&out, i), &at(&messages, i + 6)),
            "message {i} is the caller's object"
        );
    }

    // The same text in a plain `Error` works too, and on the next retry the previous marker
    // is removed before counting (the output still starts with exactly one marker).
    let err: JsValue =
        js_sys::Error::new("prompt is too long: 213462 tokens > 200000 maximum").into();
    let again = truncate_head_for_ptl_retry(out.clone(), err, JsValue::UNDEFINED).unwrap();
    assert_eq!(
        stringify(&get(&at(&again, 0), "content")),
        stringify(&get(&consts, "PTL_MARKER_TEXT"))
    );
    assert_ne!(
        stringify(&get(&at(&again, 1), "content")),
        stringify(&get(&consts, "PTL_MARKER_TEXT"))
    );
    assert!(len(&again) < len(&out));

    // No parsable gap: 20% of the 11 groups (2) are dropped.
    let out = truncate_head_for_ptl_retry(messages.clone(), JsValue::UNDEFINED, JsValue::UNDEFINED)
        .unwrap();
    assert_eq!(len(&out), 1 + len(&messages) - 3);

    // A single round cannot be truncated: null.
    let one = js(json!([{"role": "user", "content": "hi"}]));
    assert!(
        truncate_head_for_ptl_retry(one, JsValue::UNDEFINED, JsValue::UNDEFINED)
            .unwrap()
            .is_null()
    );
}

// ---------------------------------------------------------------------------------------------
// Transcripts (SPEC §17)

const TRANSCRIPT: &str = concat!(
    r#"{"type":"file-history-snapshot","messageId":"m0","snapshot":{"trackedFileBackups":{}},"isSnapshotUpdate":false}"#,
    "\n",
    r#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"Grüße 😀 \"quoted\" \\ tab\t"},"uuid":"u1","timestamp":"2026-02-10T21:11:56.906Z"}"#,
    "\n",
    r#"{"parentUuid":"u1","isSidechain":false,"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-6","content":[{"type":"thinking","thinking":"hm","signature":"sig"}],"stop_reason":null,"usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":1}},"uuid":"a1","timestamp":"2026-02-10T21:11:58.000Z"}"#,
    "\n",
    r#"{"parentUuid":"a1","isSidechain":false,"type":"assistant","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-6","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":100,"output_tokens":1}},"uuid":"a2","timestamp":"2026-02-10T21:11:59.000Z"}"#,
    "\n",
    r#"{"type":"some-future-line","zeta":1,"alpha":[1.5,-2,null,true],"nested":{"b":{},"a":[]}}"#,
    "\n",
);

#[wasm_bindgen_test]
fn transcript_round_trip_is_byte_identical() {
    let lines = parse_transcript(TRANSCRIPT.into()).unwrap();
    assert_eq!(lines.length(), 5);
    assert_eq!(
        get(&lines.get(4), "type").as_string().as_deref(),
        Some("some-future-line")
    );
    let back = serialize_transcript(lines.clone().into()).unwrap();
    assert_eq!(String::from(back), TRANSCRIPT);
    // The split response counts once: 3 + 0 + 100 + 1.
    assert_eq!(
        token_count_with_estimation(lines.into(), JsValue::UNDEFINED).unwrap(),
        104.0
    );
}

#[wasm_bindgen_test]
fn transcript_errors_name_the_line() {
    let msg = expect_code(
        parse_transcript("{\"type\":\"user\"}\n{not json}\n".into()),
        "MALFORMED_TRANSCRIPT",
    );
    assert!(msg.starts_with("line 2:"), "names line 2: {msg}");
    let msg = expect_code(
        parse_transcript("{\"type\":\"user\"}\n\n{\"type\":\"user\"}\n".into()),
        "MALFORMED_TRANSCRIPT",
    );
    assert!(msg.starts_with("line 2:"), "names the blank line 2: {msg}");
    expect_code(parse_transcript("[1,2]\n".into()), "MALFORMED_TRANSCRIPT");
    expect_code(parse_transcript(JsValue::from(42)), "INVALID_ARGUMENT");
}

// ---------------------------------------------------------------------------------------------
// Errors (STYLE.md: real `Error` objects with a stable `code`)

#[wasm_bindgen_test]
fn errors_are_errors_with_a_code() {
    expect_code(
        token_count_with_estimation("not an array".into(), JsValue::UNDEFINED),
        "INVALID_ARGUMENT",
    );
    expect_code(
        rough_token_count_estimation(JsValue::from(5), JsValue::UNDEFINED),
        "INVALID_ARGUMENT",
    );
    expect_code(
        rough_token_count_estimation("abc".into(), JsValue::from(0.0)),
        "INVALID_ARGUMENT",
    );
    expect_code(
        calculate_token_warning_state((-1.0).into(), "claude-opus-4-6".into(), JsValue::UNDEFINED),
        "INVALID_TOKEN_COUNT",
    );
    expect_code(
        calculate_token_warning_state(
            f64::NAN.into(),
            "claude-opus-4-6".into(),
            JsValue::UNDEFINED,
        ),
        "INVALID_TOKEN_COUNT",
    );
    expect_code(
        get_auto_compact_threshold(
            "claude-opus-4-6".into(),
            js(json!({"autoCompactPctOverride": 250})),
        ),
        "INVALID_CONFIG",
    );
    expect_code(
        strip_images_from_messages(js(json!([{"content": "no role"}])), JsValue::UNDEFINED),
        "INVALID_MESSAGE",
    );
    expect_code(
        micro_compact(js(json!([])), js(json!({"keepRecent": -1}))),
        "INVALID_ARGUMENT",
    );
}

// ---------------------------------------------------------------------------------------------
// Error codes at run time

#[wasm_bindgen_test]
fn error_codes_are_the_rust_codes() {
    let codes = super::errors::error_codes();
    let want: Vec<&str> = crate::ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let got: Vec<String> = codes.iter().map(|v| v.as_string().unwrap()).collect();
    assert_eq!(got, want);
    // A fresh array each call: mutating one does not change the next.
    codes.set_length(0);
    assert_eq!(super::errors::error_codes().length() as usize, want.len());
}
