//! The reliability suite of issue 5 (see RELIABILITY.md): one or more tests per compaction
//! failure mode that users of other agents report, run natively on the core.
//!
//! Test names start with `modeNN_` (the row of RELIABILITY.md they prove) or `prop_` for the
//! property tests, whose doc comments name the modes they cover. The property tests draw
//! random conversations from the generator of the test-support crate — both input shapes, parallel tool calls
//! (interleaved with their results in transcripts), server tools, thinking and redacted
//! thinking, split responses, media, attachments, sub-agent and non-API lines, earlier
//! compaction boundaries — and check every output with an independent checker of the
//! Messages API invariants (SPEC §2) *and* with the library's own `validate_for_api`.
//!
//! Cases per property: the number given at each `proptest!` block, or `RELIABILITY_CASES`
//! when set (e.g. `RELIABILITY_CASES=5000 cargo test --release --test reliability`).
//! No test looks at wall-clock time: the scripted environment never waits.

use std::collections::{HashMap, HashSet};

use context_compaction::drive::autocompact::{
    auto_compact_if_needed, should_auto_compact, ShouldAutoCompactOptions, SkipReason, Tracking,
    MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES,
};
use context_compaction::drive::env::{CallError, HookKind, HookOutput};
use context_compaction::drive::pipeline::{
    compact_conversation, CompactContext, CompactError, CompactOptions, CompactionResult,
};
use context_compaction::drive::reactive::reactive_compact;
use context_compaction::drive::retry::RetryPolicy;
use context_compaction::drive::session_memory::try_session_memory_compaction;
use context_compaction::measure::thresholds::{auto_compact_threshold, context_window_for_model};
use context_compaction::measure::tokens::{
    estimate_message, text_tokens, token_count_with_estimation, MEDIA_TOKENS,
};
use context_compaction::model::config::Config;
use context_compaction::model::error::ErrorCode;
use context_compaction::model::messages::Message;
use context_compaction::model::view::{apply_edits, CLEARED_PLACEHOLDER};
use context_compaction::summarize::summary::{
    SummaryRequest, SummaryResponse, SUMMARY_MESSAGE_INTRO,
};
use context_compaction::transforms::messages_api::validate_for_api;
use context_compaction::transforms::microcompact::{
    default_compactable, micro_compact, Compactable, MicroCompactOptions,
};
use context_compaction::transforms::ptl::{
    parse_context_overflow_error, ptl_marker_message, MAX_PTL_RETRIES,
};
use context_compaction::transforms::restore::{
    budget_files, is_probably_binary, FileSnapshot, POST_COMPACT_MAX_FILES_TO_RESTORE,
    POST_COMPACT_MAX_TOKENS_PER_FILE, POST_COMPACT_TOKEN_BUDGET, TRUNCATION_MARKER,
};
use context_compaction::transforms::session_memory::{choose_cut, SessionMemoryConfig};
use context_compaction::transforms::strip::{reinjected_attachments, strip_images};
use context_compaction::transforms::transcript::{parse_transcript, serialize_transcript};
use context_compaction_test_support::env::{Scripted, Summarizer};
use context_compaction_test_support::model::{
    words, Convo, Response, ResultBody, Style, Thought, Tool, Turn, Txt, UserBlock,
};
use context_compaction_test_support::oracle::{
    block_type, check_api, check_thinking, is_sidechain, sent_line, view_start,
};
use context_compaction_test_support::strategies::{convo, finished_convo_with};
use context_compaction_test_support::{block_on, ptl_error, summary_answer};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{json, Value};

const OPUS: &str = "claude-opus-4-6";

fn parse(vals: &[Value]) -> Vec<Message> {
    Message::parse_all(Value::Array(vals.to_vec())).expect("generated messages parse")
}

fn values(msgs: &[Message]) -> Vec<Value> {
    msgs.iter().map(Message::to_value).collect()
}

/// A long deterministic conversation: `rounds` rounds of a question, a Read call, its result
/// of `result_chars` and an answer (about `result_chars / 4 + 300` tokens a round).
fn rounds_convo(rounds: usize, result_chars: usize, transcript: bool) -> Vec<Value> {
    let w = |len: usize, seed: usize| Txt::Words {
        len: len as u16,
        seed: seed as u16,
    };
    let turns = (0..rounds)
        .map(|i| Turn {
            prompt: vec![UserBlock::Text(Txt::Raw(format!(
                "Q{i}: {}",
                words(600, 3 * i)
            )))],
            prompt_as_string: true,
            meta: false,
            attachments: vec![],
            responses: vec![
                Response {
                    thoughts: vec![Thought::Thinking(w(200, 3 * i + 1))],
                    tools: vec![Tool {
                        name: 0,
                        path: Some((i % 4) as u8),
                        result: ResultBody::Str(w(result_chars, result_chars + i % 4)),
                        is_error: false,
                        finish: 0,
                    }],
                    split: true,
                    stop_every_line: true,
                    api_usage: true,
                    ..Response::text(w(100, 3 * i + 2))
                },
                Response {
                    api_usage: true,
                    ..Response::text(w(400, 3 * i + 3))
                },
            ],
        })
        .collect();
    Convo {
        transcript,
        turns,
        noise: vec![],
        boundary_after: None,
        boundary_kept: None,
        damage: None,
        style: Style::ClaudeCode,
        step_seconds: 1,
    }
    .to_json()
}

/// The output of a transformation of `input`: the independent checker accepts it, and the
/// library's `validate_for_api` accepts it whenever it accepted the input (whether the
/// validator itself is right is `prop_validate_for_api_agrees_with_the_independent_checker`).
fn check_out(input: &[Message], out: &[Message]) -> Result<(), String> {
    check_api(&values(out))?;
    if validate_for_api(input).is_empty() {
        let problems = validate_for_api(out);
        if !problems.is_empty() {
            return Err(format!(
                "validate_for_api (it accepted the input): {problems:?}"
            ));
        }
    }
    Ok(())
}

/// [`check_api`] and the library's own `validate_for_api` must both accept `msgs`.
fn check_valid(msgs: &[Message]) -> Result<(), String> {
    check_api(&values(msgs))?;
    let problems = validate_for_api(msgs);
    if !problems.is_empty() {
        return Err(format!("validate_for_api: {problems:?}"));
    }
    Ok(())
}

fn tc(e: String) -> TestCaseError {
    TestCaseError::fail(e)
}

/// Cases per property: `default`, or `RELIABILITY_CASES` when set.
fn cfg(default: u32) -> ProptestConfig {
    let cases = std::env::var("RELIABILITY_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The summary reply of the reliability tests (usage: 4,000 in, 300 out).
fn answer(summary: &str) -> SummaryResponse {
    summary_answer(summary, 4_000, 300)
}

/// A scripted environment whose summarizer always answers `text` (see [`answer`]).
fn summary_env(text: &str) -> Scripted {
    Scripted::answering(text, 4_000, 300)
}

type SummarizeFn = Summarizer;

fn ctx() -> CompactContext {
    CompactContext {
        model: OPUS.into(),
        ..Default::default()
    }
}

fn manual() -> CompactOptions {
    CompactOptions {
        retry: RetryPolicy::with_base_ms(1),
        ..Default::default()
    }
}

fn compact(
    msgs: &[Message],
    c: &CompactContext,
    o: &CompactOptions,
    env: &Scripted,
) -> Result<CompactionResult, CompactError> {
    block_on(compact_conversation(msgs, c, o, env))
}

/// What the summarizer model is sent, in estimated tokens (text of the system prompt and of
/// every text block / string content, 4 characters a token) — how a strict fake API sizes
/// the request.
fn request_tokens(r: &SummaryRequest) -> u64 {
    let mut chars = r.system.chars().count();
    for m in &r.messages_json() {
        match &m["content"] {
            Value::String(s) => chars += s.chars().count(),
            Value::Array(a) => {
                for b in a {
                    chars += b["text"].as_str().map_or(0, |t| t.chars().count());
                }
            }
            _ => {}
        }
    }
    (chars as u64).div_ceil(4)
}

/// A summarizer that rejects requests above `limit` tokens (see [`request_tokens`]) with the
/// real 400 body, and answers the others.
fn strict_summarizer(limit: u64) -> SummarizeFn {
    Box::new(move |r, _| {
        let n = request_tokens(r);
        if n > limit {
            Err(ptl_error(n, limit))
        } else {
            Ok(answer(
                "The user is fixing the parser; the work went on until the last question.",
            ))
        }
    })
}

fn request_text(r: &SummaryRequest) -> String {
    serde_json::to_string(r).unwrap()
}

/// The first `chars` characters of `s` as they appear inside serialized JSON (escaped), for
/// searching serialized requests and conversations.
fn json_fragment(s: &str, chars: usize) -> String {
    let head: String = s.chars().take(chars).collect();
    let q = serde_json::to_string(&head).unwrap();
    q[1..q.len() - 1].to_string()
}

/// Index of the latest user message the user wrote (with text, not a tool result, not a
/// summary) among what is sent: main chain, after the last compact boundary (lines before it
/// are never sent, so no truncation keeps them).
fn latest_real_user(vals: &[Value]) -> Option<usize> {
    let start = view_start(vals);
    (start..vals.len()).rev().find(|&i| {
        let v = &vals[i];
        let Some((true, blocks, _)) = sent_line(v) else {
            return false;
        };
        v.get("type").is_none_or(|t| t == "user")
            && v.get("isCompactSummary").is_none()
            && blocks.iter().any(|b| block_type(b) == "text")
            && !blocks.iter().any(|b| block_type(b) == "tool_result")
    })
}

// =============================================================================================
// Property tests: every exported transformation on random histories.
// =============================================================================================

#[derive(Clone, Debug)]
struct McOpts {
    keep_recent: usize,
    keep_latest_per_path: bool,
}

fn mc_opts() -> impl Strategy<Value = McOpts> {
    (
        prop_oneof![Just(0usize), Just(5usize), 0..9usize],
        any::<bool>(),
    )
        .prop_map(|(keep_recent, keep_latest_per_path)| McOpts {
            keep_recent,
            keep_latest_per_path,
        })
}

/// Compactable results, in order, with the path their call names (main chain, after the
/// last boundary).
fn compactable_results(vals: &[Value]) -> Vec<(String, Option<String>)> {
    let mut calls: HashMap<String, Option<String>> = HashMap::new();
    let mut out = Vec::new();
    for v in vals.iter().skip(view_start(vals)) {
        let Some((user, blocks, _)) = sent_line(v) else {
            continue;
        };
        for b in blocks {
            match (user, block_type(&b)) {
                (false, "tool_use")
                    if default_compactable(b["name"].as_str().unwrap_or(""))
                        != Compactable::Never =>
                {
                    let path = b["input"]["file_path"]
                        .as_str()
                        .or(b["input"]["path"].as_str())
                        .map(str::to_string);
                    calls.insert(b["id"].as_str().unwrap_or("").to_string(), path);
                }
                (true, "tool_result") => {
                    let id = b["tool_use_id"].as_str().unwrap_or("").to_string();
                    if let Some(p) = calls.get(&id) {
                        out.push((id, p.clone()));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(cfg(600))]

    /// Modes 2, 8, 14, 16 — `microCompact`: tool pairs intact, thinking untouched, valid for
    /// the API; the `keep_recent` newest compactable results and (with
    /// `keep_latest_per_path`) the latest result of each path are never cleared; the same
    /// input gives a byte-identical output, and a second pass changes nothing.
    #[test]
    fn prop_micro_compact_keeps_pairs_thinking_latest_and_is_deterministic(c in finished_convo_with(8), o in mc_opts()) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        check_api(&vals).map_err(tc)?;
        let opts = MicroCompactOptions {
            keep_recent: o.keep_recent,
            keep_latest_per_path: o.keep_latest_per_path,
            ..Default::default()
        };
        let plan = micro_compact(msgs.as_slice(), &opts).unwrap();
        let out = apply_edits(&msgs, &plan.edits).unwrap();
        let out_vals = values(&out);
        check_out(&msgs, &out).map_err(tc)?;
        check_thinking(&vals, &out_vals).map_err(tc)?;

        let candidates = compactable_results(&vals);
        let cleared: HashSet<&String> = plan.cleared_tool_use_ids.iter().collect();
        for (id, _) in candidates.iter().rev().take(o.keep_recent) {
            prop_assert!(!cleared.contains(id), "{} is among the {} newest results", id, o.keep_recent);
        }
        if o.keep_latest_per_path {
            let mut latest: HashMap<&str, &str> = HashMap::new();
            for (id, p) in &candidates {
                if let Some(p) = p {
                    latest.insert(p, id);
                }
            }
            for id in latest.values() {
                prop_assert!(!plan.cleared_tool_use_ids.iter().any(|x| x == id), "{} is the latest result of its path", id);
            }
        }
        for id in &plan.cleared_tool_use_ids {
            prop_assert!(candidates.iter().any(|(c, _)| c == id), "{} is not a compactable result", id);
        }
        // Byte-identical across runs (also from a re-parse of the same JSON).
        let again = micro_compact(parse(&vals).as_slice(), &opts).unwrap();
        prop_assert_eq!(&plan, &again);
        let out2 = apply_edits(&msgs, &again.edits).unwrap();
        prop_assert_eq!(serialize_transcript(&out).unwrap(), serialize_transcript(&out2).unwrap());
        let second = micro_compact(out.as_slice(), &opts).unwrap();
        prop_assert!(second.edits.is_empty(), "a second pass edits: {:?}", second.edits);
        // Tokens never grow.
        prop_assert!(token_count_with_estimation(out.as_slice()).unwrap().total
            <= token_count_with_estimation(msgs.as_slice()).unwrap().total);
    }

    /// Modes 2, 7, 8, 14 — `stripImagesFromMessages` and `stripReinjectedAttachments`: pairs,
    /// thinking and validity kept; no image or document is left in a user message.
    #[test]
    fn prop_strip_media_and_attachments_keep_pairs_and_thinking(c in finished_convo_with(8)) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        let edits = strip_images(msgs.as_slice()).unwrap();
        let out = apply_edits(&msgs, &edits).unwrap();
        let out_vals = values(&out);
        check_out(&msgs, &out).map_err(tc)?;
        check_thinking(&vals, &out_vals).map_err(tc)?;
        for v in out_vals.iter().skip(view_start(&out_vals)) {
            if let Some((true, blocks, _)) = sent_line(v) {
                for b in &blocks {
                    let mut inner = vec![b.clone()];
                    if let Some(a) = b["content"].as_array() {
                        inner.extend(a.iter().cloned());
                    }
                    prop_assert!(!inner.iter().any(|x| matches!(block_type(x), "image" | "document")), "media left: {}", b);
                }
            }
        }
        let drop = reinjected_attachments(out.as_slice()).unwrap();
        let kept: Vec<Message> = out
            .iter()
            .enumerate()
            .filter(|(i, _)| !drop.contains(i))
            .map(|(_, m)| m.clone())
            .collect();
        check_out(&msgs, &kept).map_err(tc)?;
        check_thinking(&vals, &values(&kept)).map_err(tc)?;
    }

    /// Modes 1, 2, 8, 14 — `truncateHeadForPTLRetry` applied as the pipeline does, up to
    /// MAX_PTL_RETRIES times with random gaps: pairs intact, no response cut in two, thinking
    /// untouched, a user message first.
    #[test]
    fn prop_truncation_keeps_pairs_whole_responses_and_thinking(c in finished_convo_with(8), gaps in prop::collection::vec(0..400_000u64, 3)) {
        let vals = c.to_json();
        let input = parse(&vals);
        let mut msgs = input.clone();
        for out in truncations(&mut msgs, &gaps) {
            check_out(&input, &out).map_err(tc)?;
            check_thinking(&vals, &values(&out)).map_err(tc)?;
        }
    }

    /// Mode 1 — the latest user turn survives every prompt-too-long retry: the message the
    /// user last wrote (with text, among what is sent) is still sent after MAX_PTL_RETRIES
    /// truncations, whatever the gaps.
    #[test]
    fn prop_truncation_never_drops_the_latest_user_prompt(c in convo(), gaps in prop::collection::vec(0..400_000u64, 3)) {
        let vals = c.to_json();
        let mut msgs = parse(&vals);
        let last_user = latest_real_user(&vals).map(|i| vals[i].clone());
        let _ = truncations(&mut msgs, &gaps);
        if let Some(u) = last_user {
            prop_assert!(values(&msgs).contains(&u), "the latest user message was dropped: {}", u);
        }
    }

    /// Mode 14 — the exported validator is right: it accepts every valid history (parallel
    /// calls whose results are interleaved with the lines of their response included, as SPEC
    /// §2 defines the API view) and reports a history with one tool_result removed, exactly
    /// as the independent checker does.
    #[test]
    fn prop_validate_for_api_agrees_with_the_independent_checker(c in finished_convo_with(8), pick in any::<prop::sample::Index>()) {
        let vals = c.to_json();
        check_api(&vals).map_err(tc)?;
        let msgs = parse(&vals);
        let problems = validate_for_api(&msgs);
        prop_assert!(problems.is_empty(), "a valid history is rejected: {:?}", problems);
        // Remove one tool_result block that is sent.
        let mut broken = vals.clone();
        let start = view_start(&broken);
        let spots: Vec<(usize, usize)> = broken
            .iter()
            .enumerate()
            .skip(start)
            .filter(|(_, v)| sent_line(v).is_some_and(|(u, _, _)| u))
            .flat_map(|(i, v)| {
                let c = if v.get("type").is_some() { &v["message"]["content"] } else { &v["content"] };
                c.as_array()
                    .map(|a| a.iter().enumerate().filter(|(_, b)| block_type(b) == "tool_result").map(|(k, _)| (i, k)).collect::<Vec<_>>())
                    .unwrap_or_default()
            })
            .collect();
        if !spots.is_empty() {
            let (i, k) = spots[pick.index(spots.len())];
            let c = if broken[i].get("type").is_some() { &mut broken[i]["message"]["content"] } else { &mut broken[i]["content"] };
            c.as_array_mut().unwrap().remove(k);
            prop_assert!(check_api(&broken).is_err(), "the checker misses a removed tool_result");
            prop_assert!(!validate_for_api(&parse(&broken)).is_empty(), "validate_for_api misses a removed tool_result");
        }
    }

    /// Modes 1, 4, 14, 16 — accounting: the count is the latest response's usage (input +
    /// cache creation + cache read + output, its split lines counted once) plus the estimate
    /// of every sent line after that response's first line that is not one of its lines; with
    /// no usage, the estimate of what is sent. Usage logged mid-stream (`stop_reason: null`
    /// on the anchor line) does not cover the response: its output counts as the larger of
    /// `output_tokens` and the estimate of the response's lines.
    #[test]
    fn prop_token_count_is_latest_usage_once_plus_estimate(c in convo()) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        let start = view_start(&vals);
        let count = token_count_with_estimation(msgs.as_slice()).unwrap();
        let anchor = (start..vals.len()).rev().find(|&i| {
            sent_line(&vals[i]).is_some_and(|(u, _, _)| !u) && vals_usage(&vals[i]).is_some()
        });
        let sent = |i: usize| sent_line(&vals[i]).is_some();
        let expected = match anchor {
            None => {
                let raw = (start..vals.len()).filter(|&i| sent(i)).map(|i| estimate_message(msgs.as_slice(), i).unwrap()).sum::<u64>();
                // With usage before the context's start, the line it teaches at that estimate.
                prop_assert_eq!(count.estimated, raw);
                let learned = context_compaction::measure::tokens::learned_before(msgs.as_slice(), start).unwrap();
                prop_assert_eq!(count.calibrated, learned.fit().is_some());
                learned.fit().map_or(raw, |f| f.predict(raw))
            }
            Some(a) => {
                let u = vals_usage(&vals[a]).unwrap();
                let id = vals[a]["message"]["id"].clone();
                let own = |i: usize| !id.is_null() && vals[i]["type"] == "assistant" && vals[i]["message"]["id"] == id;
                let first = if id.is_null() { a } else { (start..=a).find(|&i| own(i) && !is_sidechain(&vals[i])).unwrap_or(a) };
                let after: u64 = (first + 1..vals.len())
                    .filter(|&i| sent(i) && !(own(i) && i <= a))
                    .map(|i| estimate_message(msgs.as_slice(), i).unwrap())
                    .sum();
                let [input, creation, read, output] = u;
                let streamed = vals[a]["message"].get("stop_reason") == Some(&Value::Null);
                let output = if streamed {
                    let content: u64 = (first..=a)
                        .filter(|&i| sent(i) && (i == a || own(i)))
                        .map(|i| estimate_message(msgs.as_slice(), i).unwrap())
                        .sum();
                    output.max(content)
                } else {
                    output
                };
                input + creation + read + output + after
            }
        };
        prop_assert_eq!(count.total, expected, "{:?}", count);
    }
}

/// Applies `truncate_head_for_ptl_retry` up to MAX_PTL_RETRIES times (one per gap) as the
/// pipeline does — keep `messages[start..]`, after a marker or the kept latest user request
/// when asked — and returns each
/// intermediate conversation; `msgs` ends as the last one.
fn truncations(msgs: &mut Vec<Message>, gaps: &[u64]) -> Vec<Vec<Message>> {
    let mut all = Vec::new();
    for gap in gaps.iter().take(MAX_PTL_RETRIES as usize) {
        let e = parse_context_overflow_error(
            &format!(
                "prompt is too long: {} tokens > 200000 maximum",
                200_000 + gap
            ),
            Some(400),
        );
        let Some(t) =
            context_compaction::transforms::ptl::truncate_head(msgs.as_slice(), e.as_ref(), true)
                .unwrap()
        else {
            break;
        };
        let transcript = msgs[t.start..].iter().any(Message::is_transcript);
        let mut out = Vec::new();
        if t.insert_marker {
            out.push(ptl_marker_message(transcript, Some("marker-uuid")));
        }
        // The latest user request, when the drop took its round, stays at the head.
        if let Some(p) = t.keep_prompt {
            out.push(msgs[p].clone());
        }
        out.extend_from_slice(&msgs[t.start..]);
        *msgs = out.clone();
        all.push(out);
    }
    all
}

/// The four usage counts of a sent assistant line.
fn vals_usage(v: &Value) -> Option<[u64; 4]> {
    let u = if v.get("type").is_some() {
        &v["message"]["usage"]
    } else {
        &v["usage"]
    };
    if !u.is_object() {
        return None;
    }
    let n = |k: &str| u[k].as_u64().unwrap_or(0);
    Some([
        n("input_tokens"),
        n("cache_creation_input_tokens"),
        n("cache_read_input_tokens"),
        n("output_tokens"),
    ])
}

proptest! {
    #![proptest_config(cfg(250))]

    /// Modes 2, 6, 8, 14, 19, 21 — full compaction: when it succeeds, the compacted
    /// conversation is valid (independent checker and `validate_for_api`), kept thinking is
    /// byte-identical, the summary message says it is a summary, custom instructions are only
    /// in the request, and written to JSONL then read back it counts as the post-compaction
    /// estimate. A failure is only ever a coded refusal.
    #[test]
    fn prop_full_compaction_result_is_valid_and_resumable(c in finished_convo_with(8)) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        let env = summary_env("Short summary of the work.");
        let opts = CompactOptions { custom_instructions: Some("CI_MARKER_QX81".into()), ..manual() };
        match compact(&msgs, &ctx(), &opts, &env) {
            Ok(r) => {
                let post = r.post_compact_messages(&msgs);
                check_out(&msgs, &post).map_err(tc)?;
                check_thinking(&vals, &values(&post)).map_err(tc)?;
                prop_assert!(request_text(&env.requests.borrow()[0]).contains("CI_MARKER_QX81"));
                prop_assert!(!serde_json::to_string(&post).unwrap().contains("CI_MARKER_QX81"));
                let s = serde_json::to_string(&r.summary_messages[0]).unwrap();
                prop_assert!(s.contains(&SUMMARY_MESSAGE_INTRO[..40]) && s.contains("<summary>"));
                let mut all = msgs.clone();
                all.extend(post.iter().cloned());
                let back = parse_transcript(&serialize_transcript(&all).unwrap()).unwrap();
                // The file read back counts the new context as reported (with what the history's
                // usage taught, when there was some).
                prop_assert_eq!(token_count_with_estimation(back.as_slice()).unwrap().total, r.true_post_compact_token_count);
                // Smaller than before, unless a learned line says what every request sends
                // besides the messages (generated usage may make that most of it): the size
                // check itself compares the messages' estimate.
                prop_assert!(r.true_post_compact_token_count < r.pre_compact_token_count || r.calibration.is_some());
            }
            Err(e) => prop_assert!(
                matches!(e.error.code, ErrorCode::CompactionNotSmaller | ErrorCode::NothingToCompact),
                "unexpected failure {:?}", e.error
            ),
        }
    }

    /// Modes 2, 8, 14, 21 — session-memory compaction: the kept suffix keeps tool pairs and
    /// whole responses (thinking byte-identical), the result is valid, and read back from
    /// JSONL it counts as the post-compaction estimate (kept lines' old usage ignored).
    #[test]
    fn prop_session_memory_result_is_valid_and_resumable(c in finished_convo_with(12)) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        let mut env = summary_env("unused");
        env.memory = Some("Session memory: the parser work, the cache bug, the failing test.".into());
        match block_on(try_session_memory_compaction(&msgs, &ctx(), None, &env)) {
            Ok(r) => {
                prop_assert_eq!(env.calls(), 0);
                let post = r.post_compact_messages(&msgs);
                check_out(&msgs, &post).map_err(tc)?;
                check_thinking(&vals, &values(&post)).map_err(tc)?;
                let first = r.messages_to_keep.first().copied().unwrap_or(msgs.len());
                prop_assert_eq!(&r.messages_to_keep, &(first..msgs.len()).collect::<Vec<_>>());
                let mut all = msgs.clone();
                all.extend(post.iter().cloned());
                let back = parse_transcript(&serialize_transcript(&all).unwrap()).unwrap();
                let after = context_compaction::measure::tokens::token_count_checked(back.as_slice()).unwrap().total;
                prop_assert_eq!(after, r.true_post_compact_token_count);
            }
            Err(e) => prop_assert_eq!(e.error.code, ErrorCode::SessionMemoryNotApplicable, "{:?}", e.error),
        }
        // The cut itself never splits a pair or a response.
        if let Some(cut) = choose_cut(msgs.as_slice(), &SessionMemoryConfig { min_tokens: 500, min_text_messages: 1, max_tokens: 4_000 }).unwrap() {
            let mut kept = vec![Message::api_user_text("summary")];
            if msgs.iter().any(Message::is_transcript) {
                kept = vec![ptl_marker_message(true, Some("s"))];
            }
            kept.extend_from_slice(&msgs[cut.keep_from..]);
            check_out(&msgs, &kept).map_err(tc)?;
            check_thinking(&vals, &values(&kept)).map_err(tc)?;
        }
    }

    /// Modes 2, 14 — auto and reactive compaction on random histories (low threshold): every
    /// result valid; failures reported, never thrown.
    #[test]
    fn prop_auto_and_reactive_results_are_valid(c in finished_convo_with(8)) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        let low = CompactContext { config: Config { auto_compact_pct_override: Some(1.0), ..Default::default() }, ..ctx() };
        let env = summary_env("s");
        let out = block_on(auto_compact_if_needed(&msgs, &low, &Tracking::default(), &Default::default(), &RetryPolicy::with_base_ms(1), &env)).unwrap();
        if let Some(r) = &out.result {
            check_out(&msgs, &r.post_compact_messages(&msgs)).map_err(tc)?;
        }
        let env = summary_env("s");
        let t = Tracking { turn_id: Some("t1".into()), ..Default::default() };
        if let Ok((r, next)) = block_on(reactive_compact(&msgs, &ctx(), "prompt is too long: 210000 tokens > 200000 maximum", Some(400), &t, &RetryPolicy::with_base_ms(1), &env)) {
            check_out(&msgs, &r.post_compact_messages(&msgs)).map_err(tc)?;
            prop_assert_eq!(next.reactive_turn_id.as_deref(), Some("t1"));
        }
    }

    /// Mode 15 — restored files: at most 5, each at most 5,000 tokens, 50,000 in all, the
    /// reported tokens exactly those of the restored text, binary content never restored,
    /// untruncated content byte-identical, truncated content a head of the file plus the
    /// marker.
    #[test]
    fn prop_restored_file_budgets_are_exact(files in prop::collection::vec((0..12u8, 0..40_000usize, 0..6u8), 0..14)) {
        let input: Vec<(String, String)> = files
            .iter()
            .map(|&(p, len, kind)| {
                let path = if kind == 5 { format!("/bin/f{p}.png") } else { format!("/src/f{p}.rs") };
                let content = match kind {
                    4 => format!("ELF\u{0}\u{1}{}", "\u{0}".repeat(len % 50)),
                    _ => words(len, usize::from(p)),
                };
                (path, content)
            })
            .collect();
        let out = budget_files(input.clone());
        prop_assert!(out.len() <= POST_COMPACT_MAX_FILES_TO_RESTORE);
        prop_assert!(out.iter().map(|f| f.tokens).sum::<u64>() <= POST_COMPACT_TOKEN_BUDGET);
        let mut seen = HashSet::new();
        for f in &out {
            prop_assert!(seen.insert(f.path.clone()), "{} restored twice", f.path);
            prop_assert!(f.tokens <= POST_COMPACT_MAX_TOKENS_PER_FILE, "{}: {} tokens", f.path, f.tokens);
            prop_assert_eq!(f.tokens, text_tokens(&f.content));
            prop_assert!(!is_probably_binary(&f.content) && !f.path.ends_with(".png"));
            // The entry it came from (a path may be listed more than once).
            let from_entry = input.iter().filter(|(p, _)| *p == f.path).any(|(_, original)| {
                match f.content.strip_suffix(TRUNCATION_MARKER) {
                    Some(head) if f.truncated => {
                        original.starts_with(head) && text_tokens(original) > POST_COMPACT_MAX_TOKENS_PER_FILE
                    }
                    _ => !f.truncated && f.content == *original,
                }
            });
            prop_assert!(from_entry, "{}: not the file's content or a head of it", f.path);
        }
    }

    /// Mode 22 — malformed JSONL never panics: every line is either read or reported with its
    /// line number (nothing silently dropped); what is read writes back byte for byte.
    #[test]
    fn prop_any_jsonl_is_read_or_reported_by_line(lines in prop::collection::vec(jsonl_line(), 0..8)) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        match parse_transcript(&text) {
            Ok(m) => {
                prop_assert_eq!(m.len(), lines.len());
                prop_assert_eq!(serialize_transcript(&m).unwrap(), text);
            }
            Err(e) => {
                prop_assert_eq!(e.code, ErrorCode::MalformedTranscript);
                prop_assert!(e.message.starts_with("line "), "{}", e.message);
            }
        }
    }
}

/// One JSONL line: a valid compact object, or something broken.
fn jsonl_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just(r#"{"type":"user","message":{"role":"user","content":"hi"}}"#.to_string()),
        2 => Just(r#"{"type":"progress","data":{"x":[1,null]},"unknownField":"é😀"}"#.to_string()),
        1 => Just(r#"{"type":"user","message":{"role":"user","content":"lone \ud800 surrogate"}}"#.to_string()),
        1 => Just(String::new()),
        1 => Just("{oops".to_string()),
        1 => Just("[1,2,3]".to_string()),
        1 => Just("null".to_string()),
        1 => Just(r#"{"type":"assistant","message":{"role":"assistant","content":5}}"#.to_string()),
        1 => "[ -~]{0,40}".prop_map(|s| s),
    ]
}

// =============================================================================================
// Mode 1 — the summary request is itself too long.
// =============================================================================================

/// History at 1.3× the 200K window; the summarizer answers the real 400 body above M.
#[test]
fn mode01_history_at_1_3x_window_succeeds_within_3_retries_using_the_gap() {
    let vals = rounds_convo(115, 8_000, true);
    let msgs = parse(&vals);
    let window = context_window_for_model(OPUS, &Config::default());
    let pre = token_count_with_estimation(msgs.as_slice()).unwrap().total;
    assert!(
        pre >= window * 13 / 10,
        "the history is {pre} tokens, not 1.3× {window}"
    );
    let last_user = vals[latest_real_user(&vals).unwrap()]["message"]["content"]
        .as_str()
        .unwrap()
        .to_string();
    for limit in [window, 100_000, 60_000] {
        let env = Scripted::new(strict_summarizer(limit));
        let r = compact(&msgs, &ctx(), &manual(), &env)
            .unwrap_or_else(|e| panic!("limit {limit}: {:?}", e.error));
        let reqs = env.requests.borrow();
        assert!(
            r.ptl_retries <= MAX_PTL_RETRIES,
            "limit {limit}: {} retries",
            r.ptl_retries
        );
        assert_eq!(reqs.len() as u32, r.ptl_retries + 1);
        let sizes: Vec<u64> = reqs.iter().map(request_tokens).collect();
        assert!(
            *sizes.last().unwrap() <= limit,
            "limit {limit}: sizes {sizes:?}"
        );
        // Using the gap: each retry drops at least the gap the API reported (one retry
        // suffices when the error states the size), never the blind 20%-of-rounds fallback.
        for w in sizes.windows(2) {
            if w[0] > limit {
                assert!(
                    w[1] <= limit || w[0] - w[1] >= (w[0] - limit) * 9 / 10,
                    "limit {limit}: sizes {sizes:?}"
                );
            }
        }
        // The blind fallback (20% of the rounds a retry) would need 3 retries for 100,000 and
        // could not reach 60,000 at all.
        assert!(
            r.ptl_retries <= 2,
            "limit {limit}: {} retries for a known gap ({sizes:?})",
            r.ptl_retries
        );
        // The latest user turn is in the final request, intact.
        let last = request_text(reqs.last().unwrap());
        assert!(
            last.contains(&json_fragment(&last_user, usize::MAX)),
            "limit {limit}: the latest user message is not in the request, intact"
        );
        assert_eq!(reqs.last().unwrap().messages_json()[0]["role"], "user");
        check_valid(&r.post_compact_messages(&msgs)).unwrap();
    }
}

/// A summarizer whose window (config.summaryContextWindow) is smaller than the main model's:
/// the first request already fits, with its max_tokens — no 400 is ever seen.
#[test]
fn mode01_smaller_summary_window_first_request_fits() {
    let vals = rounds_convo(115, 8_000, false);
    let msgs = parse(&vals);
    let last_user = vals[latest_real_user(&vals).unwrap()]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let c = CompactContext {
        config: Config {
            summary_context_window: Some(64_000.0),
            ..Default::default()
        },
        ..ctx()
    };
    let env = Scripted::new(Box::new(|r, _| {
        let n = request_tokens(r);
        if n + r.max_tokens > 64_000 {
            Err(CallError {
                status: Some(400),
                message: format!(
                    "input length and `max_tokens` exceed context limit: {n} + {} > 64000, decrease input length or `max_tokens` and try again",
                    r.max_tokens
                ),
                ..Default::default()
            })
        } else {
            Ok(answer("fits"))
        }
    }));
    let r = compact(&msgs, &c, &manual(), &env).unwrap();
    assert_eq!(
        env.calls(),
        1,
        "a 400 was seen: the first request did not fit"
    );
    assert_eq!(r.ptl_retries, 0);
    let req = &env.requests.borrow()[0];
    assert!(request_tokens(req) + req.max_tokens <= 64_000);
    assert!(
        request_text(req).contains(&json_fragment(&last_user, usize::MAX)),
        "the latest user message is sent intact"
    );
}

/// A conversation whose usage runs 1.5 times its estimate (dense code): the summary request
/// is sized by the ratio learned, so the first one fits a 64,000-token summary window as the
/// model counts it — no 400 is seen (before: one refusal, then a retry).
#[test]
fn mode01_summary_request_sized_by_the_ratio_learned() {
    use context_compaction::measure::calibration::{Calibration, Observation};
    let msgs = parse(&rounds_convo(115, 8_000, false));
    let seen = [(10_000, 20_000), (30_000, 50_000), (60_000, 95_000)]
        .map(|(estimated, real)| Observation { estimated, real });
    let learned = Calibration::from_observations(seen);
    let fit = learned.fit().expect("a line through them");
    assert!((fit.ratio - 1.5).abs() < 0.01, "{fit:?}");
    let c = CompactContext {
        config: Config {
            summary_context_window: Some(64_000.0),
            ..Default::default()
        },
        calibration: Some(learned),
        ..ctx()
    };
    // The model's count: 1.5 tokens per estimated token of the request.
    let real = |r: &SummaryRequest| request_tokens(r) * 3 / 2;
    let env = Scripted::new(Box::new(move |r, _| {
        let n = real(r);
        if n + r.max_tokens > 64_000 {
            Err(CallError {
                status: Some(400),
                message: format!(
                    "prompt is too long: {} tokens > 64000 maximum",
                    n + r.max_tokens
                ),
                ..Default::default()
            })
        } else {
            Ok(answer("fits"))
        }
    }));
    let r = compact(&msgs, &c, &manual(), &env).unwrap();
    assert_eq!(
        env.calls(),
        1,
        "a 400 was seen: the first request did not fit"
    );
    assert_eq!(r.ptl_retries, 0);
    let req = &env.requests.borrow()[0];
    assert!(real(req) + req.max_tokens <= 64_000);
    // And it is not sized smaller than it must be: most of the room is used.
    assert!(real(req) + req.max_tokens > 48_000, "{}", real(req));
}

/// A summary model with an input limit below its window (GPT-5: 272,000 input tokens in a
/// 400,000-token window): the first request stays within the input limit — no 400 is seen —
/// and uses the room there is beyond the 200K default.
#[test]
fn mode01_summary_model_input_limit_first_request_fits() {
    let msgs = parse(&rounds_convo(150, 8_000, false));
    let pre = token_count_with_estimation(msgs.as_slice()).unwrap().total;
    assert!(pre > 300_000, "the history is {pre} tokens");
    let c = CompactContext {
        summary_model: Some("openai/gpt-5".into()),
        ..ctx()
    };
    let env = Scripted::new(Box::new(|r, _| {
        let n = request_tokens(r);
        if n > 272_000 || n + r.max_tokens > 400_000 {
            Err(CallError {
                status: Some(400),
                message: format!(
                    "Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in {n} tokens."
                ),
                ..Default::default()
            })
        } else {
            Ok(answer("fits"))
        }
    }));
    compact(&msgs, &c, &manual(), &env).unwrap();
    assert_eq!(
        env.calls(),
        1,
        "a 400 was seen: the first request did not fit"
    );
    let n = request_tokens(&env.requests.borrow()[0]);
    assert!((200_000..=272_000).contains(&n), "{n} tokens sent");
}

/// The PTL retries give up with a clear, coded error — never loop, never deadlock.
#[test]
fn mode01_impossible_limit_fails_with_prompt_too_long_after_3_retries() {
    let msgs = parse(&rounds_convo(30, 4_000, true));
    let env = Scripted::new(strict_summarizer(10));
    let e = compact(&msgs, &ctx(), &manual(), &env).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::PromptTooLong);
    assert!(env.calls() <= MAX_PTL_RETRIES as usize + 1);
    assert!(e.error.message.contains("too long"), "{}", e.error.message);
}

// =============================================================================================
// Mode 3 — thrashing (core part: a result not below the threshold is a failure).
// =============================================================================================

/// Auto-compaction whose result would still be at or above the auto-compact threshold is a
/// failure (COMPACTION_NOT_SMALLER), counted; after 3 the breaker opens and nothing runs.
#[test]
fn mode03_auto_result_not_below_threshold_is_a_failure_and_opens_the_breaker() {
    // Threshold: 5% of the effective window = 9,000 tokens; history ≈ 40,000 tokens; the
    // summary alone ≈ 12,000 tokens: smaller than before, still above the threshold.
    let msgs = parse(&rounds_convo(20, 7_000, false));
    let c = CompactContext {
        config: Config {
            auto_compact_pct_override: Some(5.0),
            ..Default::default()
        },
        ..ctx()
    };
    let threshold = auto_compact_threshold(OPUS, &c.config);
    assert_eq!(threshold, 9_000);
    let big = words(48_000, 3);
    let env = Scripted::new(Box::new(move |_, _| Ok(answer(&big))));
    let mut t = Tracking::default();
    for i in 1..=MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES {
        let out = block_on(auto_compact_if_needed(
            &msgs,
            &c,
            &t,
            &Default::default(),
            &RetryPolicy::with_base_ms(1),
            &env,
        ))
        .unwrap();
        assert!(
            !out.was_compacted,
            "attempt {i}: a result above the threshold was committed"
        );
        let e = out.error.expect("the failure is reported");
        assert_eq!(
            e.error.code,
            ErrorCode::CompactionNotSmaller,
            "{:?}",
            e.error
        );
        assert_eq!(out.consecutive_failures, i);
        t.consecutive_failures = out.consecutive_failures;
    }
    let calls = env.calls();
    let out = block_on(auto_compact_if_needed(
        &msgs,
        &c,
        &t,
        &Default::default(),
        &RetryPolicy::with_base_ms(1),
        &env,
    ))
    .unwrap();
    assert_eq!(out.skipped, Some(SkipReason::CircuitBreakerOpen));
    assert_eq!(
        env.calls(),
        calls,
        "the breaker is open: no summary request"
    );
}

// =============================================================================================
// Mode 4 — token accounting.
// =============================================================================================

#[test]
fn mode04_latest_output_and_cache_tokens_counted_once_split_response_once() {
    let usage = json!({"input_tokens": 7, "cache_creation_input_tokens": 1_000, "cache_read_input_tokens": 50_000, "output_tokens": 300});
    let line = |c: Value| json!({"type": "assistant", "message": {"role": "assistant", "id": "msg_a", "content": [c], "usage": usage, "stop_reason": "tool_use"}});
    let result = |id: &str, n: usize| json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "r".repeat(n)}]}});
    let msgs = parse(&[
        json!({"type": "user", "message": {"role": "user", "content": "x".repeat(40_000)}}),
        line(json!({"type": "thinking", "thinking": "t".repeat(4_000), "signature": "s"})),
        line(json!({"type": "tool_use", "id": "a", "name": "Read", "input": {}})),
        result("a", 400),
        line(json!({"type": "tool_use", "id": "b", "name": "Read", "input": {}})),
        result("b", 800),
    ]);
    let count = token_count_with_estimation(msgs.as_slice()).unwrap();
    // Usage once (not once per line), cache tokens included, output once; the interleaved
    // results estimated; the 40,000-char prompt before the response is inside the usage.
    assert_eq!(count.total, 7 + 1_000 + 50_000 + 300 + 100 + 200);
}

#[test]
fn mode04_images_and_documents_count_2000_never_by_base64_length() {
    for n in [10usize, 1_000_000] {
        let msgs = parse(&[json!({"role": "user", "content": [
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A".repeat(n)}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "B".repeat(n)}},
            {"type": "tool_result", "tool_use_id": "t", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": "C".repeat(n)}}]}
        ]})]);
        assert_eq!(
            token_count_with_estimation(msgs.as_slice()).unwrap().total,
            3 * MEDIA_TOKENS
        );
    }
}

// =============================================================================================
// Mode 6 — the current task kept, the summary labelled.
// =============================================================================================

/// With `keep_last_user_message` (`keepLastUserMessage`), the latest message the user wrote
/// (not a tool result) is kept verbatim after the summary; the summary says it is a summary.
#[test]
fn mode06_full_compaction_keeps_the_latest_user_message_verbatim() {
    for transcript in [false, true] {
        let mut vals = rounds_convo(12, 3_000, transcript);
        let ask = "LATEST-TASK: rename parse_line to parse_record everywhere, then run the tests.";
        let pending = if transcript {
            json!({"type": "user", "uuid": "pending-1", "parentUuid": null, "isSidechain": false,
                   "message": {"role": "user", "content": ask}})
        } else {
            json!({"role": "user", "content": ask})
        };
        vals.push(pending.clone());
        let msgs = parse(&vals);
        let env = summary_env("Earlier work on the parser.");
        let o = CompactOptions {
            keep_last_user_message: true,
            ..manual()
        };
        let r = compact(&msgs, &ctx(), &o, &env).unwrap();
        let last = msgs.len() - 1;
        assert!(
            r.messages_to_keep.contains(&last),
            "transcript {transcript}: the latest user message is not kept (kept {:?})",
            r.messages_to_keep
        );
        let post = r.post_compact_messages(&msgs);
        let post_vals = values(&post);
        assert_eq!(
            post_vals.iter().filter(|v| **v == pending).count(),
            1,
            "kept byte-identical, exactly once"
        );
        let s = serde_json::to_string(&r.summary_messages[0]).unwrap();
        assert!(s.contains(&SUMMARY_MESSAGE_INTRO[..60]) && s.contains("<summary>"));
        let at_summary = post_vals
            .iter()
            .position(|v| v.to_string().contains("<summary>"))
            .unwrap();
        let at_task = post_vals.iter().position(|v| *v == pending).unwrap();
        assert!(at_task > at_summary, "the task follows the summary");
        check_valid(&post).unwrap();
    }
}

#[test]
fn mode06_summary_message_is_labelled_as_a_summary_not_a_request() {
    let msgs = parse(&rounds_convo(8, 2_000, true));
    for auto in [false, true] {
        let env = summary_env("The user asked for the parser fix.");
        let o = CompactOptions {
            is_auto_compact: auto,
            ..manual()
        };
        let r = compact(&msgs, &ctx(), &o, &env).unwrap();
        let v = r.summary_messages[0].to_value();
        let text = v["message"]["content"].as_str().unwrap();
        assert!(text.starts_with(SUMMARY_MESSAGE_INTRO), "{text}");
        assert!(text.contains("<summary>\nThe user asked for the parser fix.\n</summary>"));
        assert_eq!(v["isCompactSummary"], true);
    }
}

// =============================================================================================
// Mode 7 — images never reach the summarizer.
// =============================================================================================

#[test]
fn mode07_25_images_of_1mb_become_typed_sized_placeholders() {
    // 1,398,104 base64 characters = 1,048,576 bytes; half the images at the top level of a
    // user message, half inside tool results.
    let data = "iVBORw0K".repeat(1_398_104 / 8);
    let img = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}});
    let mut vals = Vec::new();
    for i in 0..25 {
        let mut content = Vec::new();
        if i > 0 {
            let body = if i % 2 == 1 {
                json!([{"type": "text", "text": "captured"}, img])
            } else {
                json!("ok")
            };
            content.push(
                json!({"type": "tool_result", "tool_use_id": format!("t{i}"), "content": body}),
            );
        }
        if i % 2 == 0 {
            content.push(json!({"type": "text", "text": format!("screenshot {i}")}));
            content.push(img.clone());
        }
        vals.push(json!({"role": "user", "content": content}));
        vals.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("looked at {i}")},
            {"type": "tool_use", "id": format!("t{}", i + 1), "name": "Screenshot", "input": {}}]}));
    }
    vals.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t25", "content": "ok"},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "A".repeat(16_384)}}]}));
    let msgs = parse(&vals);
    check_valid(&msgs).unwrap();
    let env = summary_env("screens");
    let r = compact(&msgs, &ctx(), &manual(), &env).unwrap();
    let req = request_text(&env.requests.borrow()[0]);
    assert!(
        !req.contains("iVBORw0KiVBORw0K"),
        "base64 reached the summarizer"
    );
    assert!(req.len() < 200_000, "request of {} chars", req.len());
    assert_eq!(
        req.matches("[image: image/png, 1.0 MB]").count(),
        25,
        "{}",
        &req[..2_000.min(req.len())]
    );
    assert_eq!(req.matches("[document: application/pdf, 12 KB]").count(), 1);
    check_valid(&r.post_compact_messages(&msgs)).unwrap();
}

// =============================================================================================
// Modes 9, 10 — unusable summaries are never committed, and count as failures.
// =============================================================================================

#[test]
fn mode09_summary_cut_at_max_tokens_is_never_committed() {
    let msgs = parse(&rounds_convo(20, 3_000, true));
    let cut = || -> SummarizeFn {
        Box::new(|_, _| {
            Ok(SummaryResponse {
                text: "<summary>The user asked for".into(),
                stop_reason: Some("max_tokens".into()),
                usage: None,
                compaction: None,
                problem: None,
            })
        })
    };
    let mut env = Scripted::new(cut());
    env.hook = Box::new(|_, _| Some(Ok(HookOutput::default())));
    let e = compact(&msgs, &ctx(), &manual(), &env).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::SummaryTruncated);
    assert!(
        env.hook_calls(HookKind::PostCompact).is_empty(),
        "no PostCompact for a failure"
    );
    assert!(!env.phases.borrow().contains(&"done"));
    // Through auto-compaction: reported, counted, nothing committed.
    let low = CompactContext {
        config: Config {
            auto_compact_pct_override: Some(5.0),
            ..Default::default()
        },
        ..ctx()
    };
    let env = Scripted::new(cut());
    let out = block_on(auto_compact_if_needed(
        &msgs,
        &low,
        &Tracking::default(),
        &Default::default(),
        &RetryPolicy::with_base_ms(1),
        &env,
    ))
    .unwrap();
    assert!(!out.was_compacted && out.result.is_none());
    assert_eq!(out.consecutive_failures, 1);
    assert_eq!(out.error.unwrap().error.code, ErrorCode::SummaryTruncated);
}

#[test]
fn mode10_compaction_that_grows_the_context_is_discarded_and_counted() {
    let msgs = parse(&rounds_convo(3, 400, false));
    let huge = words(400_000, 1);
    let env = Scripted::new(Box::new(move |_, _| Ok(answer(&huge))));
    let e = compact(&msgs, &ctx(), &manual(), &env).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::CompactionNotSmaller);
    let low = CompactContext {
        config: Config {
            auto_compact_pct_override: Some(1.0),
            ..Default::default()
        },
        ..ctx()
    };
    // Above the 1,800-token threshold, so that auto-compaction runs.
    let msgs = parse(&rounds_convo(10, 400, false));
    let huge = words(400_000, 2);
    let env = Scripted::new(Box::new(move |_, _| Ok(answer(&huge))));
    let t = Tracking {
        consecutive_failures: 2,
        ..Default::default()
    };
    let out = block_on(auto_compact_if_needed(
        &msgs,
        &low,
        &t,
        &Default::default(),
        &RetryPolicy::with_base_ms(1),
        &env,
    ))
    .unwrap();
    assert!(!out.was_compacted);
    assert_eq!(out.consecutive_failures, 3, "counted as a failure");
    assert_eq!(
        out.error.unwrap().error.code,
        ErrorCode::CompactionNotSmaller
    );
}

// =============================================================================================
// Modes 11, 12 — transient errors, aborts at every step.
// =============================================================================================

#[test]
fn mode11_overloaded_twice_then_success() {
    let msgs = parse(&rounds_convo(10, 3_000, true));
    let env = Scripted::new(Box::new(|_, n| {
        if n <= 2 {
            Err(CallError {
                status: Some(529),
                message: r#"529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(),
                ..Default::default()
            })
        } else {
            Ok(answer("after two 529s"))
        }
    }));
    let r = compact(&msgs, &ctx(), &manual(), &env).unwrap();
    assert_eq!(r.transient_retries, 2);
    assert_eq!(r.ptl_retries, 0);
    assert_eq!(env.calls(), 3);
    assert_eq!(env.sleeps.borrow().len(), 2, "a backoff before each retry");
    let reqs = env.requests.borrow();
    assert_eq!(reqs[0], reqs[2], "the same request is retried");
}

/// An abort at any phase (each is followed by an abort check) fails with ABORTED; nothing
/// is returned to commit, PostCompact does not run after it.
#[test]
fn mode11_12_abort_at_every_phase_fails_with_aborted_and_no_result() {
    let msgs = parse(&rounds_convo(10, 3_000, true));
    let phases = [
        "start",
        "preCompactHook",
        "summarizing",
        "retryTransient",
        "summarized",
        "restoring",
        "sessionStartHook",
        "postCompactHook",
    ];
    for phase in phases {
        let mut env = Scripted::new(Box::new(|_, n| {
            if n == 1 {
                Err(CallError {
                    status: Some(529),
                    message: "overloaded".into(),
                    ..Default::default()
                })
            } else {
                Ok(answer("s"))
            }
        }));
        env.abort_at = Some(phase);
        env.hook = Box::new(|_, _| Some(Ok(HookOutput::default())));
        let c = CompactContext {
            read_file_state: vec![FileSnapshot {
                path: "/a.rs".into(),
                content: Some("fn a() {}\n".into()),
                timestamp_ms: 1.0,
            }],
            ..ctx()
        };
        let e = compact(&msgs, &c, &manual(), &env).unwrap_err();
        assert_eq!(
            e.error.code,
            ErrorCode::Aborted,
            "abort at {phase}: {:?}",
            e.error
        );
        assert!(
            env.phases.borrow().contains(&phase),
            "{phase} was never reached"
        );
        assert!(!env.phases.borrow().contains(&"done"), "{phase}");
    }
    // An abort inside a callback (readFile) too.
    let mut env = summary_env("s");
    env.files = Some(vec![("/a.rs".into(), Err("abort".into()))]);
    let c = CompactContext {
        read_file_state: vec![FileSnapshot {
            path: "/a.rs".into(),
            content: None,
            timestamp_ms: 1.0,
        }],
        ..ctx()
    };
    let e = compact(&msgs, &c, &manual(), &env).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::Aborted);
}

// =============================================================================================
// Mode 15 — restored files.
// =============================================================================================

#[test]
fn mode15_restored_files_binary_skipped_present_not_duplicated_budgets_exact() {
    let msgs = parse(&rounds_convo(60, 4_000, false));
    let snap = |p: &str, c: &str, t: f64| FileSnapshot {
        path: p.into(),
        content: Some(c.into()),
        timestamp_ms: t,
    };
    let exact = "x".repeat(20_000); // exactly 5,000 tokens: not cut
    let over = "y".repeat(20_004); // 5,001 tokens: cut to at most 5,000
    let c = CompactContext {
        read_file_state: vec![
            snap("/a.rs", "fn a() {}\n", 1.0),
            snap("/exact.txt", &exact, 2.0),
            snap("/over.txt", &over, 3.0),
            snap("/bin.dat", "MZ\u{0}\u{0}\u{3}binary", 4.0),
            snap("/logo.png", "looks like text", 5.0),
            snap("/b.rs", "fn b() {}\n", 6.0),
            snap("/c.rs", "fn c() {}\n", 7.0),
            snap("/d.rs", "fn d() {}\n", 0.5),
        ],
        ..ctx()
    };
    let env = summary_env("files");
    let r = compact(&msgs, &c, &manual(), &env).unwrap();
    let names: Vec<&str> = r.restored_files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        ["/c.rs", "/b.rs", "/over.txt", "/exact.txt", "/a.rs"]
    );
    let by = |n: &str| r.restored_files.iter().find(|f| f.name == n).unwrap();
    assert!(!by("/exact.txt").truncated);
    assert_eq!(by("/exact.txt").tokens, 5_000);
    assert!(by("/over.txt").truncated);
    assert!(by("/over.txt").tokens <= 5_000);
    let json = serde_json::to_string(&r.attachments).unwrap();
    assert!(!json.contains("binary") && !json.contains("looks like text"));
    assert_eq!(json.matches("fn a() {}").count(), 1);

    // Content already in the kept messages (session memory keeps the recent rounds) is not
    // restored again.
    let vals = rounds_convo(60, 4_000, false);
    let last_result = vals[vals.len() - 2]["content"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    let msgs = parse(&vals);
    let c = CompactContext {
        read_file_state: vec![
            snap("/kept.rs", &last_result, 9.0),
            snap("/other.rs", "fn other() {}\n", 1.0),
        ],
        ..ctx()
    };
    let mut env = summary_env("unused");
    env.memory = Some("memory".into());
    let r = block_on(try_session_memory_compaction(&msgs, &c, None, &env)).unwrap();
    assert!(r.messages_to_keep.contains(&(vals.len() - 2)));
    let names: Vec<&str> = r.restored_files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["/other.rs"]);
    let post = serde_json::to_string(&r.post_compact_messages(&msgs)).unwrap();
    let kept = serde_json::to_string(
        &r.messages_to_keep
            .iter()
            .map(|&i| &msgs[i])
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let frag = json_fragment(&last_result, 300);
    assert!(kept.contains(&frag));
    assert_eq!(
        post.matches(&frag).count(),
        kept.matches(&frag).count(),
        "the file content is not added a second time"
    );

    // Unreadable or binary fresh content (readFile) is skipped, not an error.
    let mut env = summary_env("s");
    env.files = Some(vec![
        ("/a.rs".into(), Err("EACCES".into())),
        ("/b.rs".into(), Ok(Some("\u{0}\u{0}\u{1}".into()))),
        ("/c.rs".into(), Ok(Some("fn fresh() {}\n".into()))),
    ]);
    let c = CompactContext {
        read_file_state: vec![
            snap("/a.rs", "x", 1.0),
            snap("/b.rs", "y", 2.0),
            snap("/c.rs", "z", 3.0),
        ],
        ..ctx()
    };
    let r = compact(&msgs, &c, &manual(), &env).unwrap();
    let names: Vec<&str> = r.restored_files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["/c.rs"]);
    assert!(serde_json::to_string(&r.attachments)
        .unwrap()
        .contains("fn fresh() {}"));
}

// =============================================================================================
// Mode 16 — micro-compaction (see also the property above).
// =============================================================================================

#[test]
fn mode16_micro_compact_never_clears_latest_of_a_path_or_the_last_n_and_is_byte_stable() {
    // 12 Read results of 4 paths (3 reads each), plus Bash results.
    let vals = rounds_convo(12, 3_000, false);
    let msgs = parse(&vals);
    for keep in [0usize, 2, 5] {
        let opts = MicroCompactOptions {
            keep_recent: keep,
            keep_latest_per_path: true,
            ..Default::default()
        };
        let plan = micro_compact(msgs.as_slice(), &opts).unwrap();
        let results = compactable_results(&vals);
        let mut latest: HashMap<String, String> = HashMap::new();
        for (id, p) in &results {
            latest.insert(p.clone().unwrap(), id.clone());
        }
        for id in latest.values() {
            assert!(
                !plan.cleared_tool_use_ids.contains(id),
                "keep {keep}: {id} cleared"
            );
        }
        for (id, _) in results.iter().rev().take(keep) {
            assert!(!plan.cleared_tool_use_ids.contains(id));
        }
        // 4 paths read 3 times each: the 8 older re-reads go, minus those among the newest N.
        let expected = if keep == 5 { 7 } else { 8 };
        assert_eq!(plan.cleared_tool_use_ids.len(), expected, "keep {keep}");
        let a = serialize_transcript(&apply_edits(&msgs, &plan.edits).unwrap()).unwrap();
        let b = serialize_transcript(
            &apply_edits(&msgs, &micro_compact(msgs.as_slice(), &opts).unwrap().edits).unwrap(),
        )
        .unwrap();
        assert_eq!(a, b);
        assert_eq!(a.matches(CLEARED_PLACEHOLDER).count(), expected);
    }
}

// =============================================================================================
// Mode 17 — one tool result larger than the whole window.
// =============================================================================================

/// `rounds_convo(4, 2_000)` with the tool result of round `round` made 1,000,000 characters
/// (250,000 tokens, more than the whole 200K window); returns it and the result's id.
fn with_huge_result(round: usize) -> (Vec<Value>, String) {
    let mut vals = rounds_convo(4, 2_000, true);
    let i = vals
        .iter()
        .enumerate()
        .filter(|(_, v)| v["message"]["content"][0]["type"] == "tool_result")
        .map(|(i, _)| i)
        .nth(round)
        .unwrap();
    let id = vals[i]["message"]["content"][0]["tool_use_id"]
        .as_str()
        .unwrap()
        .to_string();
    vals[i]["message"]["content"][0]["content"] = json!("z".repeat(1_000_000));
    (vals, id)
}

/// The huge result in the latest round: it reaches the summarizer trimmed to head and tail
/// around a marker that keeps its tool_use_id; the first request fits; compaction succeeds.
#[test]
fn mode17_huge_tool_result_in_the_latest_round_is_trimmed_to_a_marker() {
    let (vals, huge_id) = with_huge_result(3);
    let msgs = parse(&vals);
    let window = context_window_for_model(OPUS, &Config::default());
    assert!(token_count_with_estimation(msgs.as_slice()).unwrap().total > window);
    let env = Scripted::new(strict_summarizer(window - 20_000));
    let r = compact(&msgs, &ctx(), &manual(), &env).unwrap();
    let reqs = env.requests.borrow();
    assert_eq!(reqs.len(), 1, "the first request already fits");
    let first = request_text(&reqs[0]);
    assert!(
        first.contains(&format!("tool result for {huge_id}")),
        "the marker keeps the tool_use_id"
    );
    assert!(!first.contains(&"z".repeat(100_000)));
    assert!(r.true_post_compact_token_count < window);
    check_valid(&r.post_compact_messages(&msgs)).unwrap();
}

/// The huge result in the first round: trimmed in the request, it no longer fills the window,
/// so the turns around it are not pushed out of the request — every user question reaches
/// the summarizer, the huge one as its marker.
#[test]
fn mode17_huge_tool_result_does_not_push_other_turns_out_of_the_request() {
    let (vals, huge_id) = with_huge_result(0);
    let msgs = parse(&vals);
    let window = context_window_for_model(OPUS, &Config::default());
    let env = Scripted::new(strict_summarizer(window - 20_000));
    let r = compact(&msgs, &ctx(), &manual(), &env).unwrap();
    let reqs = env.requests.borrow();
    assert_eq!(reqs.len(), 1, "the first request already fits");
    let first = request_text(&reqs[0]);
    assert!(
        first.contains(&format!("tool result for {huge_id}")),
        "the trimmed result (its marker keeping the tool_use_id) is in the request"
    );
    for v in vals.iter().filter(|v| v["message"]["content"].is_string()) {
        let q = v["message"]["content"].as_str().unwrap();
        assert!(
            first.contains(&json_fragment(q, 200)),
            "a user question was left out of the request"
        );
    }
    assert_eq!(r.ptl_retries, 0);
}

// =============================================================================================
// Mode 18 — hooks on every path, with counts; a throwing hook's policy.
// =============================================================================================

#[test]
fn mode18_pre_compact_once_with_counts_on_manual_auto_and_reactive_paths() {
    let msgs = parse(&rounds_convo(40, 3_000, true));
    let pre_tokens = token_count_with_estimation(msgs.as_slice()).unwrap().total;
    let low = CompactContext {
        config: Config {
            auto_compact_pct_override: Some(5.0),
            ..Default::default()
        },
        ..ctx()
    };
    let spy = || {
        let mut e = summary_env("s");
        e.hook = Box::new(|_, _| Some(Ok(HookOutput::default())));
        e
    };
    let check = |env: &Scripted, trigger: &str, threshold: u64, ci: Value, path: &str| {
        let pre = env.hook_calls(HookKind::PreCompact);
        assert_eq!(pre.len(), 1, "{path}: PreCompact {} times", pre.len());
        let p = &pre[0];
        assert_eq!(p["trigger"], trigger, "{path}");
        assert_eq!(p["preTokens"], pre_tokens, "{path}");
        assert_eq!(p["threshold"], threshold, "{path}");
        assert_eq!(p["window"], 200_000, "{path}");
        assert_eq!(p["customInstructions"], ci, "{path}");
        assert_eq!(env.hook_calls(HookKind::SessionStart).len(), 1, "{path}");
        assert_eq!(env.hook_calls(HookKind::PostCompact).len(), 1, "{path}");
    };
    let env = spy();
    let o = CompactOptions {
        custom_instructions: Some("keep the API notes".into()),
        ..manual()
    };
    compact(&msgs, &ctx(), &o, &env).unwrap();
    check(
        &env,
        "manual",
        167_000,
        json!("keep the API notes"),
        "manual",
    );

    let env = spy();
    let out = block_on(auto_compact_if_needed(
        &msgs,
        &low,
        &Tracking::default(),
        &Default::default(),
        &RetryPolicy::with_base_ms(1),
        &env,
    ))
    .unwrap();
    assert!(out.was_compacted);
    check(&env, "auto", 9_000, Value::Null, "auto (full)");

    // Session memory keeps 10K–40K tokens: it applies below a 27,000-token threshold.
    let mid = CompactContext {
        config: Config {
            auto_compact_pct_override: Some(15.0),
            ..Default::default()
        },
        ..ctx()
    };
    let mut env = spy();
    env.memory = Some("memory of the session".into());
    let out = block_on(auto_compact_if_needed(
        &msgs,
        &mid,
        &Tracking::default(),
        &Default::default(),
        &RetryPolicy::with_base_ms(1),
        &env,
    ))
    .unwrap();
    assert!(out.was_compacted && out.result.unwrap().from_session_memory);
    check(&env, "auto", 27_000, Value::Null, "auto (session memory)");

    let env = spy();
    let t = Tracking {
        turn_id: Some("turn-9".into()),
        ..Default::default()
    };
    block_on(reactive_compact(
        &msgs,
        &ctx(),
        "prompt is too long: 230000 tokens > 200000 maximum",
        Some(400),
        &t,
        &RetryPolicy::with_base_ms(1),
        &env,
    ))
    .unwrap();
    check(&env, "auto", 167_000, Value::Null, "reactive");
}

#[test]
fn mode18_throwing_hooks_are_reported_and_compaction_goes_on() {
    let msgs = parse(&rounds_convo(10, 3_000, true));
    let mut env = summary_env("s");
    env.hook = Box::new(|k, _| Some(Err(CallError::new(format!("{} exploded", k.name())))));
    let r = compact(&msgs, &ctx(), &manual(), &env).unwrap();
    let hooks: Vec<&str> = r.hook_failures.iter().map(|f| f.hook).collect();
    assert_eq!(hooks, ["preCompact", "sessionStart", "postCompact"]);
    assert!(r.hook_failures[0].message.contains("preCompact exploded"));
    check_valid(&r.post_compact_messages(&msgs)).unwrap();
}

// =============================================================================================
// Mode 19 — custom instructions only in the request.
// =============================================================================================

#[test]
fn mode19_custom_instructions_reach_the_request_and_nothing_else() {
    for transcript in [false, true] {
        let msgs = parse(&rounds_convo(10, 2_000, transcript));
        let mut env = summary_env("s");
        env.hook = Box::new(|k, _| {
            Some(Ok(HookOutput {
                instructions: (k == HookKind::PreCompact).then(|| "HOOK_CI_Z42".to_string()),
                ..Default::default()
            }))
        });
        let o = CompactOptions {
            custom_instructions: Some("USER_CI_Q17".into()),
            ..manual()
        };
        let r = compact(&msgs, &ctx(), &o, &env).unwrap();
        let req = request_text(&env.requests.borrow()[0]);
        assert!(req.contains("USER_CI_Q17") && req.contains("HOOK_CI_Z42"));
        let post = serde_json::to_string(&r.post_compact_messages(&msgs)).unwrap();
        assert!(!post.contains("USER_CI_Q17") && !post.contains("HOOK_CI_Z42"));
        assert!(!r.summary.contains("USER_CI_Q17"));
    }
}

// =============================================================================================
// Mode 20 — auto-compaction never runs while disabled.
// =============================================================================================

#[test]
fn mode20_disabled_auto_compaction_never_summarizes_over_1000_turns() {
    for config in [
        Config {
            disable_auto_compact: Some(true),
            ..Default::default()
        },
        Config {
            disable_compact: Some(true),
            ..Default::default()
        },
        Config {
            auto_compact_enabled: Some(false),
            ..Default::default()
        },
    ] {
        let c = CompactContext {
            config: config.clone(),
            ..ctx()
        };
        let env = summary_env("never");
        let mut msgs: Vec<Message> = Vec::new();
        let mut t = Tracking::default();
        for turn in 0..1_000u64 {
            msgs.extend(parse(&[
                json!({"role": "user", "content": format!("turn {turn}")}),
                json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                       "usage": {"input_tokens": 150_000 + turn * 100, "output_tokens": 10}}),
            ]));
            let out = block_on(auto_compact_if_needed(
                &msgs,
                &c,
                &t,
                &Default::default(),
                &RetryPolicy::with_base_ms(1),
                &env,
            ))
            .unwrap();
            assert!(!out.was_compacted, "{config:?}: turn {turn}");
            assert_eq!(
                out.skipped,
                Some(SkipReason::Disabled),
                "{config:?}: turn {turn}"
            );
            t.consecutive_failures = out.consecutive_failures;
        }
        assert_eq!(env.calls(), 0, "{config:?}");
        assert!(env.hooks.borrow().is_empty());
        assert!(
            !should_auto_compact(
                msgs.as_slice(),
                OPUS,
                &ShouldAutoCompactOptions::default(),
                &config
            )
            .unwrap()
            .should_compact
        );
    }
    // Control: the same history does compact when enabled.
    let env = summary_env("yes");
    let msgs = parse(&[
        json!({"role": "user", "content": "x".repeat(4_000)}),
        json!({"role": "assistant", "content": [{"type": "text", "text": "ok"}], "usage": {"input_tokens": 250_000, "output_tokens": 10}}),
        json!({"role": "user", "content": "next"}),
    ]);
    let out = block_on(auto_compact_if_needed(
        &msgs,
        &ctx(),
        &Tracking::default(),
        &Default::default(),
        &RetryPolicy::with_base_ms(1),
        &env,
    ))
    .unwrap();
    assert!(out.skipped.is_none());
    assert_eq!(env.calls(), 1);
}

// =============================================================================================
// Mode 21 — resuming after compaction.
// =============================================================================================

#[test]
fn mode21_serialize_parse_resumes_after_the_boundary_with_the_post_count() {
    let vals = rounds_convo(30, 4_000, true);
    let msgs = parse(&vals);
    let env = summary_env("resume here");
    let r = compact(&msgs, &ctx(), &manual(), &env).unwrap();
    let post = r.post_compact_messages(&msgs);
    // Claude Code appends the new lines to the session file.
    let mut file = serialize_transcript(&msgs).unwrap();
    file.push_str(&serialize_transcript(&post).unwrap());
    let back = parse_transcript(&file).unwrap();
    assert_eq!(back.len(), msgs.len() + post.len());
    assert_eq!(
        token_count_with_estimation(back.as_slice()).unwrap().total,
        r.true_post_compact_token_count
    );
    let api = context_compaction::transforms::messages_api::to_api_messages(&back);
    let sent = serde_json::to_string(&api).unwrap();
    assert!(sent.contains("resume here"));
    let first_q = vals[0]["message"]["content"].as_str().unwrap();
    assert!(
        !sent.contains(&json_fragment(first_q, 80)),
        "the pre-compaction history is not sent again"
    );
    check_valid(&back).unwrap();
}

/// After a session-memory compaction, the session file read back counts as the compacted
/// context with the count `tokenCountWithEstimation` exports (not only the checked count the
/// decisions use): the kept lines' usage is that of the old context.
#[test]
fn mode21_session_memory_resume_counts_the_post_compaction_size() {
    let msgs = parse(&rounds_convo(60, 4_000, true));
    // Usage on every response, as Claude Code writes it: the context grows about 1.4 real
    // tokens per estimated one (at 1,200 a line it grew 3.5 per estimated token, past any
    // real ratio and the fit's bound).
    let mut vals = values(&msgs);
    let mut context = 2_000u64;
    for v in vals.iter_mut() {
        if v["type"] == "assistant" {
            context += 480;
            v["message"]["usage"] =
                json!({"input_tokens": 3, "cache_read_input_tokens": context, "output_tokens": 50});
        }
    }
    let msgs = parse(&vals);
    let mut env = summary_env("unused");
    env.memory = Some("memory of the session".into());
    let r = block_on(try_session_memory_compaction(&msgs, &ctx(), None, &env)).unwrap();
    let mut file = serialize_transcript(&msgs).unwrap();
    file.push_str(&serialize_transcript(&r.post_compact_messages(&msgs)).unwrap());
    let back = parse_transcript(&file).unwrap();
    let count = context_compaction::measure::tokens::token_count_checked(back.as_slice()).unwrap();
    assert_eq!(count.total, r.true_post_compact_token_count);
    // The line the usage before the boundary teaches, at the new context's estimate: the old
    // context grew 480 tokens a line over a 2,000-token start.
    assert!(
        count.calibrated && count.total > count.estimated,
        "{count:?}"
    );
    // The per-turn count reads the latest usage as is (until the next response, the kept
    // lines' usage is the old context's); the decision does not act on it.
    let due = context_compaction::drive::autocompact::should_auto_compact(
        back.as_slice(),
        "claude-opus-4-6",
        &Default::default(),
        &Default::default(),
    )
    .unwrap();
    assert!(!due.should_compact, "{due:?}");
}

// =============================================================================================
// Mode 22 — bad input: coded errors, never a panic, nothing lost.
// =============================================================================================

#[test]
fn mode22_bad_messages_are_coded_errors_naming_where() {
    let bad = [
        json!(5),
        json!(null),
        json!("user"),
        json!([]),
        json!({}),
        json!({"role": "user", "content": 5}),
        json!({"role": "user", "content": [{"type": "tool_result"}]}),
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": 7}]}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text"}]}}),
        json!({"role": "assistant", "content": "x", "usage": {"input_tokens": -1}}),
    ];
    for (i, v) in bad.iter().enumerate() {
        let arr = json!([{"role": "user", "content": "ok"}, v]);
        let res = Message::parse_all(arr)
            .and_then(|m| token_count_with_estimation(m.as_slice()).map(|c| c.total));
        if let Err(e) = res {
            assert!(
                matches!(
                    e.code,
                    ErrorCode::InvalidMessage
                        | ErrorCode::InvalidTokenCount
                        | ErrorCode::InvalidArgument
                ),
                "{i}: {e:?}"
            );
            assert!(e.message.contains("messages[1]"), "{i}: {}", e.message);
        }
    }
    // Unknown block types and line types are carried through untouched.
    let odd = json!([{"role": "user", "content": [{"type": "hologram", "data": {"z": [1, null]}}, {"type": "text", "text": "hi"}]},
                     {"type": "future-line", "payload": 1}]);
    let m = Message::parse_all(odd.clone()).unwrap();
    assert_eq!(Value::Array(values(&m)), odd);
}

#[test]
fn mode22_malformed_jsonl_reports_the_line_and_lone_surrogates_never_panic() {
    let e = parse_transcript("{\"type\":\"user\"}\n{\"type\":\n{\"a\":1}\n").unwrap_err();
    assert_eq!(e.code, ErrorCode::MalformedTranscript);
    assert!(e.message.starts_with("line 2"), "{}", e.message);
    let e = parse_transcript("{\"a\":1}\n\n{\"b\":2}\n").unwrap_err();
    assert!(e.message.starts_with("line 2"), "{}", e.message);
    // JSON escapes of a lone surrogate: read (and written back byte for byte) or reported
    // with its line number — never a panic, never silently dropped.
    let text = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"a\\ud800b\"}}\n";
    match parse_transcript(text) {
        Ok(m) => assert_eq!(serialize_transcript(&m).unwrap(), text),
        Err(e) => {
            assert_eq!(e.code, ErrorCode::MalformedTranscript);
            assert!(e.message.starts_with("line 1"), "{}", e.message);
        }
    }
    // Huge strings are counted, not copied into trouble.
    let huge = parse(&[json!({"role": "user", "content": "h".repeat(20_000_000)})]);
    assert_eq!(
        token_count_with_estimation(huge.as_slice()).unwrap().total,
        5_000_000
    );
}
