//! Every readable reproducer of a fuzzing finding (`fuzz/regressions/<target>/*.json[l]`,
//! docs/fuzzing.md) replayed natively with the invariant its finding broke, so that `cargo
//! test` keeps fixed findings fixed without the fuzzer. The minimized `.fuzz-input` files
//! are replayed through the targets themselves by `scripts/fuzz.sh`.

use std::path::{Path, PathBuf};

use context_compaction::measure::tokens::{message_facts, token_count_checked, RunningCount};
use context_compaction::model::messages::Message;
use context_compaction::summarize::loss::{append_missing, loss_report};
use context_compaction::transforms::messages_api::validate_for_api;
use context_compaction::transforms::ptl::{
    parse_context_overflow_error, ptl_marker_message, truncate_head_for_ptl_retry,
};
use context_compaction::transforms::transcript::{
    parse_transcript, serialize_transcript, split_lines,
};
use context_compaction_test_support::oracle::check_api;
use serde_json::Value;

fn regressions(target: &str, ext: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().and_then(|x| x.to_str()) == Some(ext))
        .collect();
    files.sort();
    assert!(
        !files.is_empty(),
        "no .{ext} reproducer in {}",
        dir.display()
    );
    files
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// F2 (numbers), F6 (`"type": null`): parse → serialize → parse is the identity and every
/// written line equals its input line as JSON.
#[test]
fn parse_transcript_reproducers_round_trip() {
    for p in regressions("parse_transcript", "jsonl") {
        let text = read(&p);
        let m = parse_transcript(&text).unwrap_or_else(|e| panic!("{}: {e}", name(&p)));
        let out = serialize_transcript(&m).unwrap();
        let back = parse_transcript(&out).unwrap();
        assert_eq!(
            back,
            m,
            "{}: serialize → parse is not the identity",
            name(&p)
        );
        assert_eq!(serialize_transcript(&back).unwrap(), out, "{}", name(&p));
        for (line, written) in split_lines(&text).unwrap().iter().zip(out.lines()) {
            let a: Value = serde_json::from_str(line.text).unwrap();
            let b: Value = serde_json::from_str(written).unwrap();
            assert_eq!(a, b, "{}: line {} changed", name(&p), line.number);
        }
    }
}

/// F6: a message read and written back equals its input.
#[test]
fn messages_from_json_reproducers_are_lossless() {
    for p in regressions("messages_from_json", "json") {
        let v: Value = serde_json::from_str(&read(&p)).unwrap();
        let items = v.as_array().cloned().unwrap_or_else(|| vec![v.clone()]);
        let m = Message::parse_all(Value::Array(items.clone())).unwrap();
        for (msg, item) in m.iter().zip(&items) {
            assert_eq!(&msg.to_value(), item, "{}", name(&p));
        }
    }
}

/// F1 (scattered response), F4 (a response across a session-memory stale window): the
/// running count equals the checked batch count after every line.
#[test]
fn token_count_reproducers_agree_at_every_prefix() {
    for p in regressions("token_count", "jsonl") {
        let m = parse_transcript(&read(&p)).unwrap();
        let mut running = RunningCount::default();
        for i in 0..m.len() {
            running.push(&message_facts(m.as_slice(), i).unwrap());
            let checked = token_count_checked(&m[..=i]).unwrap().total;
            assert_eq!(running.total(), checked, "{} after line {i}", name(&p));
        }
    }
}

/// F5: after `append_missing`, the loss report finds nothing missing.
#[test]
fn loss_report_reproducers_are_complete_after_append_missing() {
    for p in regressions("summary_and_offline", "json") {
        let m = Message::parse_all(serde_json::from_str(&read(&p)).unwrap()).unwrap();
        let summary = "A summary that names nothing.";
        let report = loss_report(&m, summary);
        assert!(
            !report.is_empty(),
            "{}: the reproducer reports something",
            name(&p)
        );
        let after = loss_report(&m, &append_missing(summary, &report));
        assert!(after.is_empty(), "{}: still missing {after:?}", name(&p));
    }
}

/// F3: a prompt-too-long truncation of a valid conversation stays valid, for the library's
/// validator and for the independent oracle of the test-support crate.
#[test]
fn truncation_reproducers_stay_valid() {
    let values = |m: &[Message]| m.iter().map(Message::to_value).collect::<Vec<_>>();
    for p in regressions("transformations", "json") {
        let m = Message::parse_all(serde_json::from_str(&read(&p)).unwrap()).unwrap();
        assert!(validate_for_api(&m).is_empty(), "{}: input valid", name(&p));
        check_api(&values(&m)).unwrap_or_else(|e| panic!("{}: input valid: {e}", name(&p)));
        let overflow =
            parse_context_overflow_error("prompt is too long: 1010 tokens > 1000 maximum", None);
        let t = truncate_head_for_ptl_retry(m.as_slice(), overflow.as_ref())
            .unwrap()
            .unwrap_or_else(|| panic!("{}: something can be dropped", name(&p)));
        let mut out = Vec::new();
        if t.insert_marker {
            out.push(ptl_marker_message(false, None));
        }
        out.extend(t.keep_prompt.map(|k| m[k].clone()));
        out.extend(m[t.start..].iter().cloned());
        let problems = validate_for_api(&out);
        assert!(problems.is_empty(), "{}: {problems:?}", name(&p));
        check_api(&values(&out)).unwrap_or_else(|e| panic!("{}: {e}", name(&p)));
    }
}

/// F1: the session-memory cut never splits a response whose lines are scattered, whatever
/// the minimums ask for.
#[test]
fn session_memory_cut_reproducers_split_no_response() {
    use context_compaction::transforms::session_memory::{choose_cut, SessionMemoryConfig};
    for p in regressions("transformations", "jsonl") {
        let m = parse_transcript(&read(&p)).unwrap();
        let mut cuts = 0;
        for min_tokens in (0..1_000).step_by(50) {
            for min_text_messages in 0..6 {
                let config = SessionMemoryConfig {
                    min_tokens,
                    min_text_messages,
                    max_tokens: 10_000,
                };
                let Some(cut) = choose_cut(m.as_slice(), &config).unwrap() else {
                    continue;
                };
                cuts += 1;
                let dropped: Vec<&str> = m[..cut.keep_from]
                    .iter()
                    .filter_map(Message::message_id)
                    .collect();
                for kept in &m[cut.keep_from..] {
                    if let Some(id) = kept.message_id() {
                        assert!(
                            !dropped.contains(&id),
                            "{}: {config:?} cuts at {} and splits {id}",
                            name(&p),
                            cut.keep_from
                        );
                    }
                }
            }
        }
        assert!(cuts > 0, "{}: some configuration cuts", name(&p));
    }
}
