//! Property tests of the core transformations against the API invariants of SPEC §2.
//!
//! The generator of the test-support crate (`context_compaction_test_support::strategies`)
//! builds random, valid conversations in both input shapes:
//! * API shape: `{role, content}` messages, strictly alternating;
//! * Claude Code transcript lines: one response split over several assistant lines sharing
//!   `message.id` (one block each), tool_result user lines interleaved with them as parallel
//!   tools finish, plus lines the API never sees (progress, system, file-history-snapshot,
//!   queue-operation, summary, sub-agent sidechain lines), attachment lines, and sometimes a
//!   `compact_boundary` followed by its `isCompactSummary` line.
//!
//! Content covers text, thinking / redacted_thinking with signatures, several tool_use /
//! tool_result pairs per turn, server_tool_use + web_search_tool_result, images and
//! documents (top level and inside tool_result content) and block types the library does not
//! know.
//!
//! The checker (`context_compaction_test_support::oracle`) computes the API view of a conversation independently of the library, from the
//! JSON of each message (SPEC §2: lines merged by `message.id`, following user lines merged,
//! sidechain and non-API lines skipped, nothing before the last `compact_boundary`).

use std::collections::{HashMap, HashSet};

use context_compaction::measure::tokens::{
    active_start, estimate_message, token_count_with_estimation,
};
use context_compaction::model::messages::Message;
use context_compaction::model::view::{apply_edits, Edit, CLEARED_PLACEHOLDER};
use context_compaction::transforms::microcompact::{
    default_compactable, micro_compact, parse_timestamp_ms, Compactable, MicroCompactOptions,
    MicroCompactPlan, MicroCompactSkip,
};
use context_compaction::transforms::ptl::{
    group_by_api_round, parse_context_overflow_error, ptl_marker_message,
    truncate_head_for_ptl_retry, ContextOverflow, Truncation, MAX_PTL_RETRIES, PTL_MARKER_TEXT,
};
use context_compaction::transforms::strip::{
    reinjected_attachments, strip_images, DOCUMENT_PLACEHOLDER, IMAGE_PLACEHOLDER,
    REINJECTED_ATTACHMENT_TYPES,
};
use context_compaction::transforms::transcript::{parse_transcript, serialize_transcript};
use context_compaction_test_support::oracle::{
    apply_edits_json, block_type as ty, check_api, content_of, is_sidechain, sent_line, sent_view,
    thinking_blocks, view_start as root_start,
};
use context_compaction_test_support::strategies::{
    convo, convo_with, convo_with_boundary, txt, Boundary,
};
use context_compaction_test_support::ALL_TOOL_NAMES as TOOL_NAMES;
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use serde_json::{json, Value};

fn parse(values: &[Value]) -> Vec<Message> {
    Message::parse_all(Value::Array(values.to_vec())).expect("generated messages parse")
}

fn to_values(msgs: &[Message]) -> Vec<Value> {
    msgs.iter().map(Message::to_value).collect()
}

/// What removing content must never grow: the count, or where it is the line learned from
/// the usage before a boundary, the estimate it is taken at (less content before the boundary
/// teaches a larger overhead for the same usage: the learned line may rise).
fn message_size(msgs: &[Message]) -> u64 {
    let c = token_count_with_estimation(msgs).unwrap();
    if c.calibrated {
        c.estimated
    } else {
        c.total
    }
}

/// Estimated tokens of what is sent (after the last boundary, main chain).
fn sent_estimate(msgs: &[Message]) -> u64 {
    let vals = to_values(msgs);
    (root_start(&vals)..msgs.len())
        .map(|i| estimate_message(msgs, i).unwrap())
        .sum()
}

/// Estimated tokens of every main-chain line, boundary or not.
fn all_estimate(msgs: &[Message]) -> u64 {
    (0..msgs.len())
        .map(|i| estimate_message(msgs, i).unwrap())
        .sum()
}

fn fail(s: String) -> TestCaseError {
    TestCaseError::fail(s)
}

/// Unedited messages are equal to the input and serialize to the same JSON; edited ones are
/// exactly the input with the edit applied.
fn check_edits_applied(
    input: &[Message],
    output: &[Message],
    edits: &[Edit],
) -> Result<(), TestCaseError> {
    prop_assert_eq!(input.len(), output.len());
    let touched: HashSet<usize> = edits.iter().map(Edit::message).collect();
    for (i, (a, b)) in input.iter().zip(output).enumerate() {
        if !touched.contains(&i) {
            prop_assert_eq!(a, b, "message {} changed without an edit", i);
            prop_assert_eq!(
                serde_json::to_string(a).unwrap(),
                serde_json::to_string(b).unwrap()
            );
        }
    }
    let expected = apply_edits_json(&to_values(input), edits);
    prop_assert_eq!(
        &to_values(output),
        &expected,
        "edits not applied as described"
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Options and errors.
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
struct McOpts {
    keep_recent: usize,
    keep_latest_per_path: bool,
    tools: Option<Vec<bool>>,
    /// Minutes between the last assistant message and "now" for the time-based variant.
    idle: Option<u32>,
}

fn mc_opts() -> impl Strategy<Value = McOpts> {
    (
        prop_oneof![1 => Just(0usize), 1 => Just(5usize), 2 => 0..9usize],
        any::<bool>(),
        prop::option::weighted(0.2, prop::collection::vec(any::<bool>(), TOOL_NAMES.len())),
        prop::option::weighted(0.25, 0..180u32),
    )
        .prop_map(|(keep_recent, keep_latest_per_path, tools, idle)| McOpts {
            keep_recent,
            keep_latest_per_path,
            tools,
            idle,
        })
}

fn last_assistant_ms(vals: &[Value]) -> Option<f64> {
    vals.iter()
        .rev()
        .filter(|v| !is_sidechain(v) && v.get("type").and_then(Value::as_str) == Some("assistant"))
        .find_map(|v| v["timestamp"].as_str().and_then(parse_timestamp_ms))
}

fn mc_options(o: &McOpts, vals: &[Value]) -> MicroCompactOptions {
    let compactable_tools = o.tools.as_ref().map(|mask| {
        TOOL_NAMES
            .iter()
            .zip(mask)
            .filter(|(_, on)| **on)
            .map(|(n, _)| (*n).to_string())
            .collect()
    });
    let (idle_minutes, now_ms) = match o.idle {
        Some(m) => (
            Some(60.0),
            last_assistant_ms(vals).map(|t| t + f64::from(m) * 60_000.0),
        ),
        None => (None, None),
    };
    MicroCompactOptions {
        keep_recent: o.keep_recent,
        idle_minutes,
        now_ms,
        last_assistant_ms: None,
        keep_latest_per_path: o.keep_latest_per_path,
        compactable_tools,
        resolve_ids: true,
    }
}

/// An overflow error: a prompt-too-long form with a gap up to `1.3 ×` the conversation's
/// estimate, the `A + B > C` form, a 413 without numbers, or no parseable error.
#[derive(Clone, Debug)]
enum ErrSpec {
    PromptTooLong(u32),
    InputPlusMax(u32),
    TooLarge,
    Unparsed,
}

fn err_spec() -> impl Strategy<Value = ErrSpec> {
    prop_oneof![
        5 => (0..=1300u32).prop_map(ErrSpec::PromptTooLong),
        2 => (0..=1300u32).prop_map(ErrSpec::InputPlusMax),
        1 => Just(ErrSpec::TooLarge),
        1 => Just(ErrSpec::Unparsed),
    ]
}

fn overflow_of(e: &ErrSpec, total: u64) -> Option<ContextOverflow> {
    let gap = |permille: u32| total * u64::from(permille) / 1000;
    let limit = 200_000u64;
    match e {
        ErrSpec::PromptTooLong(p) => parse_context_overflow_error(
            &format!(
                "{{\"type\":\"error\",\"error\":{{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: {} tokens > {limit} maximum\"}}}}",
                limit + gap(*p)
            ),
            Some(400),
        ),
        ErrSpec::InputPlusMax(p) => parse_context_overflow_error(
            &format!(
                "input length and `max_tokens` exceed context limit: {} + 20000 > {limit}, decrease input length or `max_tokens` and try again",
                limit - 20_000 + gap(*p)
            ),
            Some(400),
        ),
        ErrSpec::TooLarge => parse_context_overflow_error("Request Entity Too Large", Some(413)),
        ErrSpec::Unparsed => None,
    }
}

fn cfg(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// The tool_use_ids (and the path their call names) of compactable results in conversation
/// order, as SPEC §10 defines them: main-chain tool results whose tool_use names an allowed
/// tool.
fn compactable_results(
    vals: &[Value],
    allowed: &dyn Fn(&str) -> bool,
) -> Vec<(String, Option<String>)> {
    let mut calls = HashMap::new();
    let mut out = Vec::new();
    for v in vals.iter().filter(|v| !is_sidechain(v)) {
        let Some((user, blocks, _)) = sent_line(v) else {
            continue;
        };
        for b in blocks {
            match (user, ty(&b)) {
                (false, "tool_use") if allowed(b["name"].as_str().unwrap_or("")) => {
                    let path = ["file_path", "path", "notebook_path"]
                        .iter()
                        .find_map(|k| b["input"][*k].as_str())
                        .map(str::to_string);
                    calls.insert(b["id"].as_str().unwrap_or("").to_string(), path);
                }
                (true, "tool_result") => {
                    let id = b["tool_use_id"].as_str().unwrap_or("").to_string();
                    if let Some(path) = calls.get(&id) {
                        out.push((id, path.clone()));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// `tokens_freed` is `lost` padded by 4/3, up to rounding: micro-compaction rounds a cleared
/// result's text as one piece, the token count rounds each nested block on its own (half a
/// token each way per block).
fn check_freed(plan: &MicroCompactPlan, lost: u64, vals: &[Value]) -> Result<(), TestCaseError> {
    let mut blocks = 0u64;
    for e in &plan.edits {
        if let Edit::SetToolResultContent { message, block, .. } = e {
            let inner = &content_of(&vals[*message])[*block]["content"];
            blocks += inner.as_array().map_or(1, |a| a.len().max(1) as u64);
        }
    }
    let exact = (lost * 4).div_ceil(3);
    let slack = (blocks * 4).div_ceil(6) + 1;
    prop_assert!(
        plan.tokens_freed.abs_diff(exact) <= slack,
        "tokens_freed {} but the estimate lost {} (4/3: {}, slack {})",
        plan.tokens_freed,
        lost,
        exact,
        slack
    );
    Ok(())
}

/// Whether a tool's results may be cleared: the options' list (`*`: every tool), or the
/// default rule (Claude Code's tools, and other tools whose names read as re-obtainable).
fn allowed_tools(o: &MicroCompactOptions) -> Box<dyn Fn(&str) -> bool> {
    match &o.compactable_tools {
        Some(l) => {
            let set: HashSet<String> = l.iter().cloned().collect();
            Box::new(move |n| set.contains("*") || set.contains(n))
        }
        None => Box::new(|n| default_compactable(n) != Compactable::Never),
    }
}

// ---------------------------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(cfg(256))]

    /// The generator only produces conversations that satisfy the invariants, whose token
    /// count without usage is the estimate of what is sent, and that survive a transcript
    /// round trip.
    #[test]
    fn generated_conversations_are_valid(c in convo()) {
        let vals = c.to_json();
        check_api(&vals).map_err(fail)?;
        let msgs = parse(&vals);
        // (Numbers compared by value: see `lossless_to_value_is_identity`.)
        let back: Vec<Value> = to_values(&msgs).iter().map(numbers_as_f64).collect();
        let orig: Vec<Value> = vals.iter().map(numbers_as_f64).collect();
        prop_assert_eq!(back, orig);
        if c.transcript {
            let text = serialize_transcript(&msgs).unwrap();
            prop_assert_eq!(&parse_transcript(&text).unwrap(), &msgs);
        }
        let count = token_count_with_estimation(msgs.as_slice()).unwrap();
        if count.anchor.is_none() {
            // Calibrated (usage before a boundary): the learned line at that estimate.
            prop_assert_eq!(count.estimated, sent_estimate(&msgs));
            if !count.calibrated {
                prop_assert_eq!(count.total, sent_estimate(&msgs));
            }
        }
    }

    /// micro_compact + apply_edits: (a) tool pairs stay valid, (b) thinking byte-identical,
    /// (c) first message user and nothing empty, (d) only edited messages change and exactly as
    /// the edit says, (g) the token count does not grow; only old, large, compactable results
    /// are cleared, the `keep_recent` newest are kept, and `tokens_freed` is 4/3 of what the
    /// estimate lost.
    #[test]
    fn micro_compact_keeps_invariants(c in convo(), o in mc_opts()) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        let opts = mc_options(&o, &vals);
        let plan = micro_compact(msgs.as_slice(), &opts).unwrap();
        let out = apply_edits(&msgs, &plan.edits).unwrap();
        let out_vals = to_values(&out);

        check_api(&out_vals).map_err(fail)?;
        prop_assert_eq!(thinking_blocks(&vals), thinking_blocks(&out_vals));
        check_edits_applied(&msgs, &out, &plan.edits)?;

        let before = message_size(msgs.as_slice());
        let after = message_size(out.as_slice());
        prop_assert!(after <= before, "tokens grew: {} -> {}", before, after);

        // Only SetToolResultContent with the placeholder, on compactable results; the
        // `keep_recent` newest compactable results are never cleared.
        let candidates_with_paths = compactable_results(&vals, &*allowed_tools(&opts));
        let candidates: Vec<String> = candidates_with_paths.iter().map(|(id, _)| id.clone()).collect();
        let protected: HashSet<&String> =
            candidates.iter().rev().take(opts.keep_recent).collect();
        let mut ids = Vec::new();
        for e in &plan.edits {
            let Edit::SetToolResultContent { message, block, text } = e else {
                return Err(fail(format!("unexpected edit {e:?}")));
            };
            prop_assert_eq!(text, CLEARED_PLACEHOLDER);
            let b = &content_of(&vals[*message])[*block];
            prop_assert_eq!(ty(b), "tool_result");
            let id = b["tool_use_id"].as_str().unwrap().to_string();
            prop_assert!(candidates.contains(&id), "{} is not compactable", id);
            prop_assert!(!protected.contains(&id), "{} is among the {} most recent", id, opts.keep_recent);
            prop_assert_ne!(&b["content"], &json!(CLEARED_PLACEHOLDER), "already cleared");
            ids.push(id);
        }
        prop_assert_eq!(&ids, &plan.cleared_tool_use_ids);
        let unique: HashSet<String> = plan.edits.iter().map(|e| format!("{e:?}")).collect();
        prop_assert_eq!(unique.len(), plan.edits.len(), "duplicate edits");
        if opts.keep_latest_per_path {
            let mut latest: HashMap<&str, &str> = HashMap::new();
            for (id, path) in &candidates_with_paths {
                if let Some(p) = path {
                    latest.insert(p, id);
                }
            }
            for id in latest.values() {
                prop_assert!(!ids.iter().any(|x| x == id), "{} is the latest result for its path", id);
            }
        }

        // tokens_freed is what the estimate lost (over all main-chain lines), padded by 4/3.
        let lost = all_estimate(&msgs) - all_estimate(&out);
        check_freed(&plan, lost, &vals)?;
    }

    /// (e) micro_compact on its own output makes no edits; (f) the same input (also re-parsed
    /// from its JSON) gives the same plan and byte-identical output; the time-based variant
    /// is the plain one or nothing.
    #[test]
    fn micro_compact_idempotent_and_deterministic(c in convo(), o in mc_opts()) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        let opts = mc_options(&o, &vals);
        let plan = micro_compact(msgs.as_slice(), &opts).unwrap();
        let again = micro_compact(parse(&vals).as_slice(), &opts).unwrap();
        prop_assert_eq!(&plan, &again);
        let out = apply_edits(&msgs, &plan.edits).unwrap();
        let out2 = apply_edits(&msgs, &again.edits).unwrap();
        prop_assert_eq!(
            serialize_transcript(&out).unwrap(),
            serialize_transcript(&out2).unwrap()
        );

        let second = micro_compact(out.as_slice(), &opts).unwrap();
        prop_assert!(second.edits.is_empty(), "second pass edits: {:?}", second.edits);
        prop_assert_eq!(second.tokens_freed, 0);

        if opts.idle_minutes.is_some() {
            let plain = micro_compact(
                msgs.as_slice(),
                &MicroCompactOptions { idle_minutes: None, now_ms: None, ..opts.clone() },
            )
            .unwrap();
            let idle_enough = o.idle.is_some_and(|m| m >= 60) && opts.now_ms.is_some();
            if idle_enough {
                prop_assert_eq!(&plan, &plain);
            } else {
                prop_assert_eq!(&plan, &MicroCompactPlan { skipped: Some(MicroCompactSkip::NotIdle), ..Default::default() });
            }
        }
    }

    /// strip_images + apply_edits: invariants (a)–(d), (g); every image / document in a user
    /// message (top level or inside a tool_result) and nothing else becomes its placeholder;
    /// (e) a second pass makes no edits; (f) deterministic.
    #[test]
    fn strip_images_keeps_invariants(c in convo()) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        let edits = strip_images(msgs.as_slice()).unwrap();
        prop_assert_eq!(&edits, &strip_images(parse(&vals).as_slice()).unwrap());
        let out = apply_edits(&msgs, &edits).unwrap();
        let out_vals = to_values(&out);

        check_api(&out_vals).map_err(fail)?;
        prop_assert_eq!(thinking_blocks(&vals), thinking_blocks(&out_vals));
        check_edits_applied(&msgs, &out, &edits)?;
        let before = message_size(msgs.as_slice());
        let after = message_size(out.as_slice());
        prop_assert!(after <= before, "tokens grew: {} -> {}", before, after);

        let mut expected = 0;
        for (i, v) in vals.iter().enumerate() {
            let user = v.get("type").map_or(v["role"] == "user", |t| t == "user");
            let Some(blocks) = content_of(v).as_array() else { continue };
            for (bi, b) in blocks.iter().enumerate() {
                let mut media = vec![(None, b)];
                if ty(b) == "tool_result" {
                    if let Some(inner) = b["content"].as_array() {
                        media = inner.iter().enumerate().map(|(n, x)| (Some(n), x)).collect();
                    }
                }
                for (nested, m) in media {
                    let text = match ty(m) {
                        "image" => IMAGE_PLACEHOLDER,
                        "document" => DOCUMENT_PLACEHOLDER,
                        _ => continue,
                    };
                    let edit = Edit::ReplaceWithText { message: i, block: bi, nested, text: text.into() };
                    prop_assert_eq!(user, edits.contains(&edit), "{:?}", edit);
                    expected += usize::from(user);
                }
            }
        }
        prop_assert_eq!(expected, edits.len());
        prop_assert!(strip_images(out.as_slice()).unwrap().is_empty());
    }

    /// reinjected_attachments: exactly the skill_listing / skill_discovery attachment lines
    /// are named; dropping them leaves a valid conversation whose other lines are unchanged.
    #[test]
    fn reinjected_attachments_drop_only_skill_lines(c in convo()) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        let drop = reinjected_attachments(msgs.as_slice()).unwrap();
        let expected: Vec<usize> = vals
            .iter()
            .enumerate()
            .filter(|(_, v)| {
                v["type"] == "attachment"
                    && REINJECTED_ATTACHMENT_TYPES.contains(&v["attachment"]["type"].as_str().unwrap_or(""))
            })
            .map(|(i, _)| i)
            .collect();
        prop_assert_eq!(&drop, &expected);
        let kept: Vec<Message> = msgs
            .iter()
            .enumerate()
            .filter(|(i, _)| !drop.contains(i))
            .map(|(_, m)| m.clone())
            .collect();
        let kept_vals = to_values(&kept);
        check_api(&kept_vals).map_err(fail)?;
        prop_assert_eq!(thinking_blocks(&vals), thinking_blocks(&kept_vals));
        let before = message_size(msgs.as_slice());
        let after = message_size(kept.as_slice());
        prop_assert!(after <= before);
    }

    /// truncate_head_for_ptl_retry, applied as the caller does (keep `messages[start..]`,
    /// prepend the marker when asked), up to MAX_PTL_RETRIES times: (a) tool pairs valid,
    /// (b) no response is cut in two (thinking goes with its whole turn), (c) the first
    /// message sent is a user message, nothing empty, (d) kept messages are the input's;
    /// the drop covers the gap unless only one round is left; the marker is never counted
    /// as a round; (f) deterministic.
    #[test]
    fn truncation_keeps_invariants(c in convo(), e in err_spec()) {
        let vals = c.to_json();
        let mut msgs = parse(&vals);
        let total = all_estimate(&msgs);
        let overflow = overflow_of(&e, total);
        let mut has_marker = false;
        for _retry in 0..MAX_PTL_RETRIES {
            // Rounds are counted from what is sent: after the last boundary, past a marker.
            let from = active_start(msgs.as_slice()).unwrap() + usize::from(has_marker);
            let groups = group_by_api_round(msgs.as_slice(), from).unwrap();
            let t = truncate_head_for_ptl_retry(msgs.as_slice(), overflow.as_ref()).unwrap();
            prop_assert_eq!(&t, &truncate_head_for_ptl_retry(msgs.as_slice(), overflow.as_ref()).unwrap());
            let Some(t) = t else {
                prop_assert!(groups.len() < 2, "{} rounds but nothing dropped", groups.len());
                break;
            };
            let Truncation { start, keep_system, insert_marker, keep_prompt, keep_compaction, dropped_groups, dropped_tokens } = t;
            prop_assert!(keep_compaction.is_none(), "no compaction block in these histories");
            prop_assert!(dropped_groups >= 1 && dropped_groups < groups.len());
            prop_assert_eq!(start, groups[dropped_groups].start);
            let counted: u64 = (from..start)
                .filter(|&i| Some(i) != keep_prompt)
                .map(|i| estimate_message(msgs.as_slice(), i).unwrap())
                .sum();
            prop_assert_eq!(dropped_tokens, counted);
            if let Some(gap) = overflow.as_ref().and_then(|o| o.gap) {
                let kept_back = keep_prompt.map_or(0, |p| estimate_message(msgs.as_slice(), p).unwrap());
                prop_assert!(
                    dropped_tokens + kept_back >= gap || dropped_groups == groups.len() - 1,
                    "dropped {} tokens for a gap of {} with rounds left", dropped_tokens, gap
                );
            }

            let mut out: Vec<Message> = msgs[keep_system].to_vec();
            if let Some(p) = keep_prompt {
                prop_assert!(p < start && !insert_marker);
                out.push(msgs[p].clone());
            }
            if insert_marker {
                out.push(ptl_marker_message(c.transcript, Some("marker-uuid")));
            }
            out.extend_from_slice(&msgs[start..]);
            let in_vals = to_values(&msgs);
            let out_vals = to_values(&out);
            check_api(&out_vals).map_err(fail)?;
            let head = usize::from(insert_marker) + usize::from(keep_prompt.is_some());
            prop_assert_eq!(&out[head..], &msgs[start..]);
            // Without a boundary in the kept part, the marker is there exactly when the kept
            // part would start with an assistant message (and no request is kept before it).
            let kept = &in_vals[start..];
            if root_start(kept) == 0 && keep_prompt.is_none() {
                let starts_with_assistant = sent_view(kept).unwrap_or_default().first().is_some_and(|m| !m.user);
                prop_assert_eq!(insert_marker, starts_with_assistant);
            }
            // No response is cut in two.
            let ids = |r: &[Value]| -> HashSet<String> {
                r.iter()
                    .filter(|v| !is_sidechain(v) && v["type"] == "assistant")
                    .filter_map(|v| v["message"]["id"].as_str().map(str::to_string))
                    .collect()
            };
            let split: Vec<String> = ids(&in_vals[..start]).intersection(&ids(kept)).cloned().collect();
            prop_assert!(split.is_empty(), "responses cut in two: {:?}", split);
            has_marker = insert_marker && keep_prompt.is_none();
            msgs = out;
        }
    }
}

proptest! {
    #![proptest_config(cfg(128))]

    /// SPEC §2: what precedes a compact boundary is no longer sent, so micro-compaction must
    /// neither clear it nor count it as freed.
    #[test]
    fn micro_compact_leaves_pre_boundary_lines_alone(c in convo_with_boundary(), o in mc_opts()) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        let opts = mc_options(&o, &vals);
        let plan = micro_compact(msgs.as_slice(), &opts).unwrap();
        let start = root_start(&vals);
        for e in &plan.edits {
            prop_assert!(e.message() >= start, "edit {:?} before the boundary at {}", e, start - 1);
        }
        let out = apply_edits(&msgs, &plan.edits).unwrap();
        let lost = sent_estimate(&msgs) - sent_estimate(&out);
        check_freed(&plan, lost, &vals)?;
    }

    /// SPEC §2 + §8: the tokens a truncation reports as dropped are gone from what is sent.
    #[test]
    fn truncation_drops_only_sent_context(c in convo_with_boundary(), e in err_spec()) {
        let vals = c.to_json();
        let msgs = parse(&vals);
        let overflow = overflow_of(&e, all_estimate(&msgs));
        let Some(t) = truncate_head_for_ptl_retry(msgs.as_slice(), overflow.as_ref()).unwrap() else {
            return Ok(());
        };
        // The latest request, when its round is dropped, stays at the head.
        let mut kept: Vec<Message> = t.keep_prompt.map(|p| msgs[p].clone()).into_iter().collect();
        kept.extend_from_slice(&msgs[t.start..]);
        let lost = sent_estimate(&msgs) - sent_estimate(&kept);
        prop_assert_eq!(t.dropped_tokens, lost, "start {} boundary at {}", t.start, root_start(&vals));
    }
}

// ---------------------------------------------------------------------------------------------
// Losslessness (h): random messages with random unknown fields and nulls.
// ---------------------------------------------------------------------------------------------

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<u64>().prop_map(|n| json!(n)),
        (-4000i32..4000).prop_map(|n| json!(f64::from(n) / 4.0)),
        txt(0, 20).prop_map(|t| Value::String(t.make())),
    ]
}

fn json_any() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((0..6u8, inner), 0..4).prop_map(|kv| {
                Value::Object(kv.into_iter().map(|(k, v)| (format!("k{k}"), v)).collect())
            }),
        ]
    })
}

/// Unknown fields to sprinkle on an object (`x_…` names never collide with known ones).
fn extras() -> impl Strategy<Value = Vec<(u8, Value)>> {
    prop::collection::vec((0..8u8, json_any()), 0..3)
}

/// A known field to set to `null`, by position in a list of nullable fields.
fn nulls() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(0..16u8, 0..3)
}

fn sprinkle(v: &mut Value, extra: &[(u8, Value)]) {
    if let Value::Object(m) = v {
        for (k, x) in extra {
            m.insert(format!("x_{k}"), x.clone());
        }
    }
}

/// Sets some of the fields the library models as nullable to `null`.
fn null_out(v: &mut Value, which: &[u8], fields: &[&str]) {
    if let Value::Object(m) = v {
        for &w in which {
            if let Some(f) = fields.get(usize::from(w)) {
                if m.contains_key(*f) || w % 2 == 0 {
                    m.insert((*f).to_string(), Value::Null);
                }
            }
        }
    }
}

/// A generated message (either shape) with unknown fields on the message, its inner
/// message, its usage and every block, and nulls in nullable known fields.
fn lossless_message() -> impl Strategy<Value = Value> {
    (
        convo_with(3, Boundary::Sometimes(0.2)),
        any::<prop::sample::Index>(),
        prop::collection::vec((extras(), nulls()), 8),
    )
        .prop_map(|(c, pick, per)| {
            let vals = c.to_json();
            let mut v = vals[pick.index(vals.len())].clone();
            sprinkle(&mut v, &per[0].0);
            null_out(
                &mut v,
                &per[0].1,
                &[
                    "uuid",
                    "isSidechain",
                    "isMeta",
                    "isCompactSummary",
                    "timestamp",
                    "subtype",
                    "parentUuid",
                ],
            );
            if let Some(inner) = v.get_mut("message") {
                sprinkle(inner, &per[1].0);
                null_out(inner, &per[1].1, &["id", "usage", "stop_reason", "model"]);
                if let Some(u) = inner.get_mut("usage") {
                    sprinkle(u, &per[2].0);
                    null_out(
                        u,
                        &per[2].1,
                        &[
                            "input_tokens",
                            "cache_creation_input_tokens",
                            "cache_read_input_tokens",
                            "output_tokens",
                        ],
                    );
                }
            }
            let content = if v.get("type").is_some() {
                v.get_mut("message").and_then(|m| m.get_mut("content"))
            } else {
                v.get_mut("content")
            };
            if let Some(Value::Array(blocks)) = content {
                for (k, b) in blocks.iter_mut().enumerate() {
                    let (ex, nu) = &per[3 + k % 5];
                    sprinkle(b, ex);
                    null_out(
                        b,
                        nu,
                        &["signature", "content", "citations", "cache_control"],
                    );
                    if let Some(Value::Array(inner)) = b.get_mut("content") {
                        for x in inner {
                            sprinkle(x, ex);
                        }
                    }
                }
            }
            v
        })
}

/// `v` with every number replaced by its f64 value (JSON-number spelling ignored).
fn numbers_as_f64(v: &Value) -> Value {
    match v {
        Value::Number(n) => json!(n.as_f64()),
        Value::Array(a) => Value::Array(a.iter().map(numbers_as_f64).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| (k.clone(), numbers_as_f64(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

proptest! {
    #![proptest_config(cfg(512))]

    /// (h) parse → to_value → parse gives an equal message, and the JSON text round trip too.
    #[test]
    fn lossless_parse_to_value_parse(v in lossless_message()) {
        let m = Message::from_value(v.clone(), "m").unwrap();
        let back = m.to_value();
        prop_assert_eq!(&Message::from_value(back.clone(), "m").unwrap(), &m);
        let text = serde_json::to_string(&m).unwrap();
        prop_assert_eq!(&serde_json::from_str::<Message>(&text).unwrap(), &m);
        prop_assert_eq!(numbers_as_f64(&back), numbers_as_f64(&v));
    }

    /// (h) strict: parse → to_value gives back the very JSON value that went in.
    #[test]
    fn lossless_to_value_is_identity(v in lossless_message()) {
        let m = Message::from_value(v.clone(), "m").unwrap();
        prop_assert_eq!(&m.to_value(), &v);
    }
}

/// Hand-picked shapes that lose or add a field on a round trip.
#[test]
fn lossless_edge_cases() {
    for v in [
        json!({"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "x"}]}),
        json!({"role": "user", "content": [{"type": "image"}]}),
        json!({"type": "user", "message": {"role": null, "content": "x"}}),
        json!({"type": "assistant", "message": {"role": "assistant", "content": [], "usage": {"input_tokens": 3}}}),
    ] {
        let m = Message::from_value(v.clone(), "m").unwrap();
        assert_eq!(m.to_value(), v);
    }
}

/// The checker itself catches what it must.
#[test]
fn checker_rejects_broken_conversations() {
    let tu = json!({"type": "tool_use", "id": "t1", "name": "Read", "input": {}});
    let tr = json!({"type": "tool_result", "tool_use_id": "t1", "content": "x"});
    let ok = vec![
        json!({"role": "user", "content": "go"}),
        json!({"role": "assistant", "content": [tu]}),
        json!({"role": "user", "content": [tr]}),
    ];
    assert_eq!(check_api(&ok), Ok(()));
    assert!(check_api(&ok[1..]).is_err(), "assistant first");
    assert!(check_api(&ok[..2]).is_err(), "unanswered tool_use");
    let mut orphan = ok.clone();
    orphan.remove(1);
    assert!(check_api(&orphan).is_err(), "orphan tool_result");
    let mut empty = ok.clone();
    empty[0] = json!({"role": "user", "content": []});
    assert!(check_api(&empty).is_err(), "empty content");
    // Interleaved split response: valid.
    let line = |ty: &str, content: Value| json!({"type": ty, "message": {"role": ty, "id": "m1", "content": content}});
    let tu2 = json!({"type": "tool_use", "id": "t2", "name": "Read", "input": {}});
    let tr2 = json!({"type": "tool_result", "tool_use_id": "t2", "content": "y"});
    let interleaved = vec![
        json!({"type": "user", "message": {"role": "user", "content": "go"}}),
        line("assistant", json!([tu])),
        json!({"type": "user", "message": {"role": "user", "content": [tr]}}),
        line("assistant", json!([tu2])),
        json!({"type": "user", "message": {"role": "user", "content": [tr2]}}),
    ];
    assert_eq!(check_api(&interleaved), Ok(()));
    assert_eq!(sent_view(&interleaved).unwrap().len(), 3);
    assert_eq!(
        ptl_marker_message(false, None).to_value(),
        json!({"role": "user", "content": PTL_MARKER_TEXT})
    );
}
