//! Every option parser of every exported function on arbitrary JSON: the `context` of a
//! compaction (with `pinned`, `config`, `hooks`, `readFileState`, `retryBaseMs`,
//! `summaryTimeoutMs`, …) and of a `Compactor`, the options of `compactConversation`,
//! `Compactor.compact`, `shouldAutoCompact`, `tokenCountWithEstimation`, `microCompact`,
//! `truncateHeadForPTLRetry`, `offlineSummarizer`, `createCompactBoundaryMessage`, every
//! `shape` option, `tracking`, `setUsage`'s usage object, a `config` alone, a snapshot for
//! `Compactor.restore`, and the error argument of `parseContextOverflowError` /
//! `reactiveCompact`.
//!
//! The value reaches the parsers the way the bindings hand it over: as JSON text read by
//! serde_json (its 128-level nesting limit), so deep nesting, huge numbers, wrong types and
//! unknown keys are all reachable. Inputs:
//!
//! * bytes starting with `0xff`: a value built by `arbitrary` from the options' own
//!   vocabulary (every key the parsers know, shape names, edge numbers), optionally wrapped
//!   in up to 140 levels of arrays or objects at a known key (`pinned`, `config`, …);
//! * anything else: the bytes as JSON text (non-JSON bytes become a string).
//!
//! Invariants: never a panic; every parser gives a value or a typed error whose code is one
//! an options argument may give (`INVALID_ARGUMENT`, `INVALID_CONFIG`, `INVALID_TOKEN_COUNT`,
//! `INVALID_MESSAGE`, `INVALID_SNAPSHOT`, `UNSUPPORTED_SNAPSHOT_VERSION`, `UNSUPPORTED_SHAPE`)
//! with a message; the
//! same input gives the same answer; a `context` that parses drives a whole compaction of a
//! small transcript (scripted summarizer) to a result or a typed error, and a result's
//! messages write as JSON and read back equal; pinned items come after the summary verbatim.

#![no_main]

use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use context_compaction::drive::options::{self, Source};
use context_compaction::drive::pipeline::{compact_conversation, CompactOptions};
use context_compaction::drive::retry::RetryPolicy;
use context_compaction::drive::snapshot::SessionSnapshot;
use context_compaction::model::config::Config;
use context_compaction::model::error::{Error, ErrorCode};
use context_compaction::model::messages::Message;
use context_compaction_test_support::env::{block_on, transcript, Scripted};
use context_compaction_test_support::typed::{arbitrary_json_with, Vocabulary};
use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

/// Keys the option parsers read, besides those of the public key lists.
const MORE_KEYS: &[&str] = &[
    "path",
    "name",
    "content",
    "timestamp",
    "description",
    "role",
    "type",
    "text",
    "message",
    "status",
    "statusCode",
    "error",
    "body",
    "code",
    "format",
    "version",
    "messages",
    "usage",
    "at",
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "turnsSinceCompaction",
    "rapidRefills",
    "thrashing",
    "pausedAtThreshold",
    "check",
    "thrash",
    "tracking",
    "model",
    "agentId",
    "prompt",
    "uuid",
    "isSidechain",
];

const STRINGS: &[&str] = &[
    "claude-sonnet-4-5",
    "claude-opus-4-1",
    "gpt-5",
    "",
    "auto",
    "anthropic",
    "openai",
    "ai-sdk",
    "langchain",
    "gemini",
    "compact",
    "session_memory",
    "marble_origami",
    "repl_main_thread",
    "user",
    "assistant",
    "prompt is too long: 300000 tokens > 200000 maximum",
    "context-compaction/compactor",
    "/w/a.rs",
    "Read",
    "all",
    "1e400",
    "NaN",
    "Infinity",
];

/// Every key some option parser reads.
fn keys() -> Vec<&'static str> {
    let mut k: Vec<&'static str> = Vec::new();
    k.extend(options::CONTEXT_KEYS);
    k.extend(options::COMPACTOR_EXTRA_KEYS);
    k.extend(options::HOOK_KEYS);
    k.extend(options::TRACKING_KEYS);
    for (_, list) in options::OPTION_OBJECTS {
        k.extend(*list);
    }
    k.extend(Config::FIELDS);
    k.extend(MORE_KEYS);
    k
}

fn number(u: &mut Unstructured<'_>) -> ArbResult<Value> {
    Ok(match u.int_in_range(0..=9)? {
        0 => json!(u.arbitrary::<u16>()?),
        1 => json!(-i64::from(u.arbitrary::<u32>()?)),
        2 => json!(u.arbitrary::<u64>()?),
        3 => serde_json::Number::from_f64(u.arbitrary::<f64>()?).map_or(Value::Null, Value::Number),
        4 => json!(1e15 + f64::from(u.arbitrary::<u8>()?)),
        5 => json!(2_147_483_647.0 + f64::from(u.arbitrary::<u8>()?) - 128.0),
        6 => json!(1e300),
        7 => json!(-0.0),
        8 => json!(f64::from(u.arbitrary::<u16>()?) / 8.0),
        _ => json!(9_007_199_254_740_993u64),
    })
}

/// A value of the options' vocabulary (every key some parser reads, their edge numbers).
fn value(u: &mut Unstructured<'_>, keys: &[&'static str], depth: u32) -> ArbResult<Value> {
    let vocabulary = Vocabulary {
        keys,
        strings: STRINGS,
        number,
        max_depth: 6,
    };
    arbitrary_json_with(u, &vocabulary, depth)
}

/// A structured input: a vocabulary value, perhaps wrapped deep at a known key.
struct Structured(Value);

impl<'a> Arbitrary<'a> for Structured {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        let keys = keys();
        let mut v = value(u, &keys, 0)?;
        if u.ratio(1, 4)? {
            // Deep nesting where a parser looks: `{"pinned": [[[…v…]]]}` and the like. Built
            // as text (a deep Value would be dropped recursively), then read like any input.
            let depth = u.int_in_range(1..=140)?;
            let at = keys[usize::from(u.arbitrary::<u16>()?) % keys.len()];
            let array = u.arbitrary::<bool>()?;
            let inner = v.to_string();
            let (open, close) = if array { ("[", "]") } else { ("{\"a\":", "}") };
            let text = format!(
                "{{\"model\":\"claude-sonnet-4-5\",\"{at}\":{}{inner}{}}}",
                open.repeat(depth),
                close.repeat(depth)
            );
            v = serde_json::from_str(&text).unwrap_or(Value::String(text));
        }
        Ok(Structured(v))
    }
}

/// The codes an options argument may give.
const OPTION_CODES: &[ErrorCode] = &[
    ErrorCode::InvalidArgument,
    ErrorCode::InvalidConfig,
    ErrorCode::InvalidTokenCount,
    ErrorCode::InvalidMessage,
    ErrorCode::InvalidSnapshot,
    ErrorCode::UnsupportedSnapshotVersion,
    ErrorCode::UnsupportedShape,
];

fn check_err(what: &str, e: &Error) {
    assert!(
        OPTION_CODES.contains(&e.code),
        "{what}: unexpected code {:?}: {}",
        e.code,
        e.message
    );
    assert!(!e.message.is_empty(), "{what}: an error without a message");
}

/// Runs parser `f` twice on `v`: same answer both times (by `Debug`), errors typed.
fn parse<T: std::fmt::Debug>(
    what: &str,
    v: &Value,
    f: impl Fn(&Value) -> Result<T, Error>,
) -> Option<T> {
    let a = f(v);
    let b = f(v);
    assert_eq!(
        format!("{a:?}"),
        format!("{b:?}"),
        "{what}: not deterministic"
    );
    match a {
        Ok(t) => Some(t),
        Err(e) => {
            check_err(what, &e);
            None
        }
    }
}

/// Writes `m` as JSON text and reads it back: the same message.
fn round_trips(what: &str, m: &Message) {
    let text = serde_json::to_string(&m.to_value()).expect("a message writes as JSON");
    let v: Value = serde_json::from_str(&text).expect("what was written reads back");
    let back = Message::from_value(v, what).expect("a written message parses");
    assert_eq!(&back, m, "{what}: changed by a write and read");
}

fn run(v: &Value) {
    // Every parser on the value itself, and on the value as each argument of each export.
    parse("check_object", v, |v| options::check_object(v, "options"));
    let _ = options::error_text(v);
    parse("retry_policy", v, |v| options::retry_policy(v, "context"));
    parse("auto_options", v, |v| options::auto_options(v));
    parse("compact_options", v, |v| options::compact_options(v));
    parse("compactor_compact_options", v, |v| {
        options::compactor_compact_options(v, RetryPolicy::default())
    });
    parse("tracking", v, |v| options::tracking(v));
    parse("should_auto_compact_options", v, |v| {
        options::should_auto_compact_options(v)
    });
    parse("token_count_options", v, |v| {
        options::token_count_options(v)
    });
    parse("usage_counts", v, |v| options::usage_counts(v, "usage"));
    parse("truncate_head_options", v, |v| {
        options::truncate_head_options(v)
    });
    parse("offline_summarizer_budget", v, |v| {
        options::offline_summarizer_budget(v, 8_000)
    });
    parse("micro_compact_options", v, |v| {
        options::micro_compact_options(v, || 1_770_000_000_000.0)
    });
    parse("boundary_options", v, |v| options::boundary_options(v));
    parse("shape_option", v, |v| options::shape_option(v, "options"));
    parse("shape_options", v, |v| options::shape_options(v));
    parse("config", v, |v| v.to_config());
    parse("config of the value's config", v, |v| {
        Source::get(v, "config").to_config()
    });
    parse("snapshot", v, |v| SessionSnapshot::parse(v));
    parse("compactor_context", v, |v| options::compactor_context(v));
    let Some(c) = parse("context", v, |v| options::context(v)) else {
        return;
    };
    // A context that parses drives a whole compaction: a result or a typed error.
    let messages = transcript(4, 300);
    let opts = parse("compact_options", v, |v| options::compact_options(v)).unwrap_or_else(|| {
        CompactOptions {
            is_auto_compact: false,
            ..Default::default()
        }
    });
    let env = Scripted::summary("The user read four files.");
    match block_on(compact_conversation(&messages, &c.context, &opts, &env)) {
        Ok(r) => {
            assert!(!r.summary_messages.is_empty(), "a result without a summary");
            round_trips("boundary", &r.boundary_marker);
            for (i, m) in r.summary_messages.iter().enumerate() {
                round_trips(&format!("summary_messages[{i}]"), m);
            }
            // Pinned items follow the summary, each the item given (a message as it was).
            for (n, &k) in r.pinned_added.iter().enumerate() {
                let added = &r.summary_messages[n + 1];
                if let Some(options_pinned) = c.context.pinned.get(k) {
                    if let context_compaction::drive::pinned::Pinned::Message(p) = options_pinned {
                        assert_eq!(added, &**p, "pinned[{k}] changed");
                    }
                }
            }
            for &i in &r.messages_to_keep {
                assert!(i < messages.len(), "kept index {i} out of range");
            }
        }
        Err(e) => {
            assert!(
                !e.error.message.is_empty(),
                "a compaction error without a message"
            );
            assert!(
                !matches!(e.error.code, ErrorCode::SerializationFailed),
                "compaction: {:?} {}",
                e.error.code,
                e.error.message
            );
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let v: Value = match data.split_first() {
        Some((0xff, rest)) => {
            let mut u = Unstructured::new(rest);
            match Structured::arbitrary(&mut u) {
                Ok(s) => s.0,
                Err(_) => return,
            }
        }
        _ => match serde_json::from_slice(data) {
            Ok(v) => v,
            Err(_) => Value::String(String::from_utf8_lossy(data).into_owned()),
        },
    };
    run(&v);
});
