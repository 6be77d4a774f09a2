//! Timing of each pass of a compaction on the shared long session (`cargo test --release
//! --test prof_pipeline -- --ignored --nocapture`): a profiling aid, never run by default and
//! asserting nothing about time.

use std::time::Instant;

use serde_json::{Map, Value};

use context_compaction::drive::pipeline::{compact_conversation, CompactContext, CompactOptions};
use context_compaction::measure::tokens::token_count_with_estimation;
use context_compaction::model::messages::{payload_is_read, UNREAD_FIELDS, UNREAD_LINE_FIELDS};
use context_compaction::transforms::transcript::message_from_json_text;
use context_compaction_test_support::env::{block_on, Scripted};

/// The lines before the first compact boundary, as the JS side writes them.
fn texts() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/transcripts/cc_long_autocompact_4d5611e5.jsonl"
    );
    let Ok(file) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in file.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        let s = |k: &str| v.get(k).and_then(Value::as_str);
        if s("type") == Some("system") && s("subtype") == Some("compact_boundary") {
            break;
        }
        let Value::Object(o) = &v else { continue };
        let kept: Map<String, Value> = if payload_is_read(s("type"), s("role"), s("subtype")) {
            o.iter()
                .filter(|(k, _)| !UNREAD_FIELDS.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        } else {
            UNREAD_LINE_FIELDS
                .iter()
                .flat_map(|l| l.iter())
                .filter_map(|k| o.get(*k).map(|v| (k.to_string(), v.clone())))
                .collect()
        };
        out.push(serde_json::to_string(&Value::Object(kept)).unwrap());
    }
    out
}

/// The text of the session's own summary (the compact-summary line after its first
/// boundary), as a summarizer would answer it.
fn real_summary() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/transcripts/cc_long_autocompact_4d5611e5.jsonl"
    );
    let file = std::fs::read_to_string(path).unwrap_or_default();
    for line in file.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line).unwrap();
        if v["isCompactSummary"] == Value::Bool(true) {
            return match &v["message"]["content"] {
                Value::String(s) => s.clone(),
                Value::Array(a) => a.iter().filter_map(|b| b["text"].as_str()).collect(),
                _ => String::new(),
            };
        }
    }
    String::new()
}

fn time<T>(what: &str, runs: usize, mut f: impl FnMut() -> T) -> T {
    if std::env::var("PROF_ONLY").is_ok_and(|o| !what.starts_with(&o))
        && !what.starts_with("read (")
    {
        return f();
    }
    // With PROF_ONLY, the read (always done: the other passes need its messages) runs once.
    let runs = if std::env::var("PROF_ONLY").is_ok() && what.starts_with("read (") {
        1
    } else {
        std::env::var("PROF_RUNS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(runs)
    };
    let mut best = f64::MAX;
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let r = f();
        best = best.min(t.elapsed().as_secs_f64() * 1e3);
        last = Some(r);
    }
    println!("{what:<40} {best:8.3} ms (best of {runs})");
    last.unwrap()
}

#[test]
#[ignore]
fn time_each_pass() {
    let texts = texts();
    if texts.is_empty() {
        return;
    }
    let bytes: usize = texts.iter().map(String::len).sum();
    println!("{} lines, {} bytes", texts.len(), bytes);
    let msgs = time("read (message_from_json_text)", 15, || {
        texts
            .iter()
            .map(|t| message_from_json_text(t, &|| "m".into()).unwrap())
            .collect::<Vec<_>>()
    });
    time("depth check", 15, || {
        texts
            .iter()
            .filter(|t| context_compaction::model::messages::text_nested_deeper_than(t, 100))
            .count()
    });
    time("parse as Value", 15, || {
        texts
            .iter()
            .map(|t| serde_json::from_str::<Value>(t).unwrap())
            .collect::<Vec<_>>()
    });
    time("read + drop", 15, || {
        drop(
            texts
                .iter()
                .map(|t| message_from_json_text(t, &|| "m".into()).unwrap())
                .collect::<Vec<_>>(),
        )
    });
    time("count", 15, || {
        token_count_with_estimation(msgs.as_slice()).unwrap().total
    });
    time("clone", 15, || msgs.clone());
    time("loss report", 15, || {
        context_compaction::summarize::loss::loss_report(&msgs, "A summary.")
    });
    let summary = real_summary();
    time("loss report (the session's summary)", 15, || {
        context_compaction::summarize::loss::loss_report(&msgs, &summary)
    });
    let ctx = CompactContext {
        model: "claude-opus-4-6".into(),
        ..Default::default()
    };
    let opts = CompactOptions::default();
    time("compact_conversation (typed)", 15, || {
        let env = Scripted::summary("The user asked for things.");
        block_on(compact_conversation(&msgs, &ctx, &opts, &env)).unwrap()
    });
}
