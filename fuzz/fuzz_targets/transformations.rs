//! The exported transformations on structured random conversations (both shapes, parallel
//! tool calls, thinking, images, boundaries, sidechains, unknown blocks):
//!
//! * `micro_compact` + `apply_edits`, `strip_images` + `apply_edits`: edits apply; messages not
//!   edited are equal to the input; only the targeted blocks change (and only as documented);
//!   tool ids and thinking blocks are untouched; the result is valid for the API where the
//!   input was; the recent / latest-per-path results are never cleared; idempotent;
//!   deterministic.
//! * `truncate_head_for_ptl_retry` and `truncate_head(…, keep_latest_request = true)`, applied
//!   as the pipeline applies them (kept request or marker, then the kept suffix) up to
//!   `MAX_PTL_RETRIES` times: the cut is at an API turn (`group_by_api_turn`) after the active
//!   start, a turn is always kept, `dropped_tokens` is the estimate of what was dropped (less
//!   the kept request) and covers the gap (or everything droppable was dropped), the latest
//!   user request survives when asked for, the result is valid where the input was;
//!   deterministic.
//! * `session_memory::choose_cut`: the cut is inside the active conversation, after a dropped
//!   main-chain message, before a kept one; no response is split; `kept_tokens` and
//!   `kept_text_messages` describe the kept suffix; summary + kept suffix is valid where the
//!   input was; deterministic.

#![no_main]

use arbitrary::Arbitrary;
use context_compaction::measure::tokens::{
    active_start, estimate_range, is_sent, token_count_with_estimation,
};
use context_compaction::model::messages::{Block, Content, Kind, Message};
use context_compaction::model::view::{
    apply_edits, ConversationView, Detail, Edit, CLEARED_PLACEHOLDER,
};
use context_compaction::transforms::messages_api::validate_for_api;
use context_compaction::transforms::microcompact::{
    default_compactable, micro_compact, Compactable, MicroCompactOptions, EVERY_TOOL,
};
use context_compaction::transforms::ptl::{
    group_by_api_turn, latest_user_request, ptl_marker_message, truncate_head,
    truncate_head_for_ptl_retry, ContextOverflow, OverflowKind, Truncation, MAX_PTL_RETRIES,
    PTL_MARKER_TEXT,
};
use context_compaction::transforms::session_memory::{choose_cut, has_text, SessionMemoryConfig};
use context_compaction::transforms::strip::{
    strip_images, DOCUMENT_PLACEHOLDER, IMAGE_PLACEHOLDER,
};
use context_compaction_test_support::typed::{result_is, thinking_blocks, tool_ids};
use context_compaction_test_support::{Convo, TOOL_NAMES};
use libfuzzer_sys::fuzz_target;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Arbitrary)]
struct McOpts {
    keep_recent: u8,
    keep_latest_per_path: bool,
    tools: Option<Vec<u8>>,
    idle: Option<(u16, i32)>,
}

#[derive(Debug, Arbitrary)]
enum Overflow {
    None,
    Gap(u32),
    NoGap,
}

#[derive(Debug, Arbitrary)]
struct CutOpts {
    min_tokens: u16,
    min_text: u8,
    max_tokens: u16,
}

#[derive(Debug, Arbitrary)]
struct Input {
    convo: Convo,
    mc: McOpts,
    overflow: Overflow,
    cut: CutOpts,
}

fuzz_target!(|input: Input| {
    let msgs = input.convo.messages();
    context_compaction_test_support::typed::dump(&msgs);
    let valid = validate_for_api(&msgs).is_empty();
    if input.convo.damage.is_none() {
        assert!(
            valid,
            "generator made an invalid conversation: {:?}",
            validate_for_api(&msgs)
        );
    }
    check_micro_compact(&msgs, &input.mc, valid);
    check_strip(&msgs, valid);
    check_truncation(&msgs, &input.overflow, valid, false);
    check_truncation(&msgs, &input.overflow, valid, true);
    check_cut(&msgs, &input.cut, valid);
});

/// Last non-sidechain compact boundary + 1 (computed without the library).
fn my_active_start(msgs: &[Message]) -> usize {
    msgs.iter()
        .rposition(|m| m.is_compact_boundary() && !m.is_sidechain())
        .map_or(0, |b| b + 1)
}

fn blocks(m: &Message) -> &[Block] {
    match m.content() {
        Some(Content::Blocks(b)) => b,
        _ => &[],
    }
}

/// Common checks of an edit-based transformation.
fn check_edits(msgs: &[Message], edits: &[Edit], out: &[Message], valid: bool, what: &str) {
    assert_eq!(out.len(), msgs.len(), "{what}: message count changed");
    let edited: HashSet<usize> = edits.iter().map(Edit::message).collect();
    for (i, (a, b)) in msgs.iter().zip(out).enumerate() {
        if !edited.contains(&i) {
            assert_eq!(a, b, "{what}: messages[{i}] not edited but changed");
        } else {
            // Everything but the content is the same.
            let mut a2 = a.clone();
            let mut b2 = b.clone();
            *a2.content_mut().unwrap() = Content::Text(String::new());
            *b2.content_mut().unwrap() = Content::Text(String::new());
            assert_eq!(a2, b2, "{what}: messages[{i}] changed outside its content");
            assert_eq!(
                blocks(a).len(),
                blocks(b).len(),
                "{what}: block count changed"
            );
        }
    }
    assert_eq!(
        thinking_blocks(msgs),
        thinking_blocks(out),
        "{what}: thinking changed"
    );
    assert_eq!(tool_ids(msgs), tool_ids(out), "{what}: tool ids changed");
    if valid {
        let problems = validate_for_api(out);
        assert!(
            problems.is_empty(),
            "{what}: valid input became invalid: {problems:?}"
        );
    }
}

fn check_micro_compact(msgs: &[Message], o: &McOpts, valid: bool) {
    let mut options = MicroCompactOptions {
        keep_recent: usize::from(o.keep_recent % 8),
        keep_latest_per_path: o.keep_latest_per_path,
        compactable_tools: o.tools.as_ref().map(|t| {
            t.iter()
                .take(6)
                .map(|k| TOOL_NAMES[usize::from(*k) % TOOL_NAMES.len()].to_string())
                .collect()
        }),
        ..Default::default()
    };
    if let Some((idle, now)) = o.idle {
        options.idle_minutes = Some(f64::from(idle % 240));
        options.now_ms = Some(1_770_000_000_000.0 + f64::from(now) * 1000.0);
    }
    let plan = micro_compact(msgs, &options).expect("micro_compact failed on parsed messages");
    let again = micro_compact(msgs, &options).unwrap();
    assert_eq!(plan, again, "micro_compact is not deterministic");
    if plan.skipped.is_some() {
        assert!(plan.edits.is_empty());
    }
    assert_eq!(plan.edits.is_empty(), plan.tokens_freed == 0, "{plan:?}");
    assert_eq!(plan.cleared_tool_use_ids.len(), plan.edits.len());
    // Independent model of the candidates: results in main-chain user messages after the
    // active start, whose call (an earlier main-chain assistant tool_use) is compactable.
    // The caller's list, or the default rule (Claude Code's tools by name, other agents' tools
    // whose names read as re-obtainable, e.g. `mcp__github__get_issue`, since 42fb846).
    let allowed = |name: &str| match &options.compactable_tools {
        Some(l) => l.iter().any(|t| t == name || t == EVERY_TOOL),
        None => default_compactable(name) != Compactable::Never,
    };
    let start = my_active_start(msgs);
    let mut calls: HashMap<String, (String, Option<String>)> = HashMap::new();
    let mut candidates: Vec<(usize, usize, Option<String>)> = Vec::new();
    for (i, m) in msgs.iter().enumerate().skip(start) {
        if m.is_sidechain() {
            continue;
        }
        for (k, b) in blocks(m).iter().enumerate() {
            match (m.kind(), b) {
                (Kind::Assistant, Block::ToolUse(t)) => {
                    let path = t.input.clone().flatten().and_then(|v| {
                        v.get("file_path")
                            .and_then(|p| p.as_str())
                            .map(String::from)
                    });
                    calls.insert(t.id.clone(), (t.name.clone(), path));
                }
                (Kind::User, Block::ToolResult(r)) => {
                    if let Some((name, path)) = calls.get(&r.tool_use_id) {
                        if allowed(name) {
                            candidates.push((i, k, path.clone()));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    let targets: HashSet<(usize, usize)> = plan
        .edits
        .iter()
        .map(|e| match e {
            Edit::SetToolResultContent {
                message,
                block,
                text,
            } => {
                assert_eq!(text, CLEARED_PLACEHOLDER);
                (*message, *block)
            }
            other => panic!("micro_compact made a non-clearing edit: {other:?}"),
        })
        .collect();
    assert_eq!(targets.len(), plan.edits.len(), "a result cleared twice");
    let cand_pos: HashSet<(usize, usize)> = candidates.iter().map(|c| (c.0, c.1)).collect();
    for t in &targets {
        assert!(
            cand_pos.contains(t),
            "cleared a result that is not a candidate: {t:?}"
        );
        assert!(
            !result_is(&blocks(&msgs[t.0])[t.1], CLEARED_PLACEHOLDER),
            "cleared an already cleared result"
        );
    }
    let protected = candidates.len().saturating_sub(options.keep_recent);
    for c in &candidates[protected..] {
        assert!(
            !targets.contains(&(c.0, c.1)),
            "cleared one of the {} most recent results",
            options.keep_recent
        );
    }
    if options.keep_latest_per_path {
        let mut latest: HashMap<&str, (usize, usize)> = HashMap::new();
        for c in &candidates {
            if let Some(p) = &c.2 {
                latest.insert(p, (c.0, c.1));
            }
        }
        for (p, pos) in latest {
            assert!(!targets.contains(&pos), "cleared the latest result of {p}");
        }
    }
    let out = apply_edits(msgs, &plan.edits).expect("micro_compact edits do not apply");
    check_edits(msgs, &plan.edits, &out, valid, "micro_compact");
    // Each cleared id is the id at its edit.
    for (e, id) in plan.edits.iter().zip(&plan.cleared_tool_use_ids) {
        let Edit::SetToolResultContent { message, block, .. } = e else {
            unreachable!()
        };
        let Block::ToolResult(r) = &blocks(&out[*message])[*block] else {
            panic!("cleared block is not a tool_result")
        };
        assert_eq!(&r.tool_use_id, id);
    }
    // Idempotent: nothing more to clear with the same options.
    let second = micro_compact(out.as_slice(), &options).unwrap();
    assert!(
        second.edits.is_empty(),
        "micro_compact not idempotent: {:?}",
        second.edits
    );
    // Clearing never grows the count.
    if let (Ok(before), Ok(after)) = (
        token_count_with_estimation(msgs),
        token_count_with_estimation(out.as_slice()),
    ) {
        assert!(
            after.total <= before.total,
            "micro_compact grew the count: {} -> {}",
            before.total,
            after.total
        );
    }
}

fn media_count(msgs: &[Message]) -> usize {
    msgs.iter()
        .filter(|m| m.kind() == Kind::User)
        .flat_map(|m| blocks(m).iter())
        .map(|b| match b {
            Block::Image(_) | Block::Document(_) => 1,
            Block::ToolResult(r) => match &r.content {
                Some(Some(context_compaction::model::messages::ToolResultContent::Blocks(
                    inner,
                ))) => inner
                    .iter()
                    .filter(|n| matches!(n, Block::Image(_) | Block::Document(_)))
                    .count(),
                _ => 0,
            },
            _ => 0,
        })
        .sum()
}

fn check_strip(msgs: &[Message], valid: bool) {
    let edits = strip_images(msgs).expect("strip_images failed on parsed messages");
    assert_eq!(
        edits,
        strip_images(msgs).unwrap(),
        "strip_images not deterministic"
    );
    assert_eq!(
        edits.len(),
        media_count(msgs),
        "strip_images missed or invented media"
    );
    for e in &edits {
        let Edit::ReplaceWithText { text, .. } = e else {
            panic!("strip_images made a non-replacing edit: {e:?}")
        };
        assert!(
            text == IMAGE_PLACEHOLDER || text == DOCUMENT_PLACEHOLDER,
            "{text}"
        );
    }
    let out = apply_edits(msgs, &edits).expect("strip_images edits do not apply");
    check_edits(msgs, &edits, &out, valid, "strip_images");
    assert_eq!(media_count(&out), 0, "media left after strip_images");
    assert!(
        strip_images(out.as_slice()).unwrap().is_empty(),
        "strip_images not idempotent"
    );
    // Assistant messages are never touched.
    for (a, b) in msgs.iter().zip(&out) {
        if a.kind() != Kind::User {
            assert_eq!(a, b);
        }
    }
}

/// The truncation applied as the pipeline applies it (`apply_truncation` in
/// src/pipeline.rs): the kept request, or the marker, then the kept suffix.
fn apply_truncation(messages: &[Message], t: &Truncation) -> Vec<Message> {
    let mut out = Vec::new();
    if let Some(p) = t.keep_prompt {
        out.push(messages[p].clone());
    }
    if t.insert_marker {
        out.push(ptl_marker_message(
            messages[t.start..].iter().any(Message::is_transcript),
            None,
        ));
    }
    out.extend_from_slice(&messages[t.start..]);
    out
}

fn check_truncation(msgs: &[Message], o: &Overflow, valid: bool, keep_request: bool) {
    let overflow = match o {
        Overflow::None => None,
        Overflow::Gap(g) => Some(ContextOverflow {
            kind: OverflowKind::PromptTooLong,
            actual: Some(u64::from(*g) + 1000),
            limit: Some(1000),
            gap: Some(u64::from(*g)),
        }),
        Overflow::NoGap => Some(ContextOverflow {
            kind: OverflowKind::RequestTooLarge,
            actual: None,
            limit: None,
            gap: None,
        }),
    };
    let truncate = |view: &[Message]| {
        if keep_request {
            truncate_head(view, overflow.as_ref(), true)
        } else {
            truncate_head_for_ptl_retry(view, overflow.as_ref())
        }
    };
    let mut attempt = msgs.to_vec();
    for round in 0..MAX_PTL_RETRIES {
        let view = attempt.as_slice();
        let t = truncate(view).expect("truncate failed");
        assert_eq!(t, truncate(view).unwrap(), "truncate not deterministic");
        let mut from = active_start(view).unwrap();
        if from < view.len() && view.content_equals(from, PTL_MARKER_TEXT) {
            from += 1;
        }
        let groups = group_by_api_turn(view, from).unwrap();
        let Some(t) = t else {
            // Nothing droppable: one turn, or (the latest request kept) the turns before the
            // last hold nothing but that request, which would be put back (no progress).
            let request = if keep_request {
                latest_user_request(view, from).unwrap()
            } else {
                None
            };
            let last = groups.last().map_or(from, |g| g.start);
            let only_request = request.is_some_and(|p| (from..last).all(|i| i == p));
            assert!(
                groups.len() < 2 || only_request,
                "round {round}: nothing dropped though {} turns",
                groups.len()
            );
            return;
        };
        assert!(
            t.start > from && t.start < view.len(),
            "round {round}: cut {} outside {from}..{}",
            t.start,
            view.len()
        );
        assert!(
            t.dropped_groups >= 1 && t.dropped_groups < groups.len(),
            "{t:?}"
        );
        assert_eq!(
            groups[t.dropped_groups].start, t.start,
            "cut not at a turn start"
        );
        assert_eq!(view.kind(t.start).unwrap(), Kind::Assistant);
        let request = if keep_request {
            latest_user_request(view, from).unwrap()
        } else {
            None
        };
        let kept_request = request.filter(|&p| p < t.start);
        assert_eq!(t.keep_prompt, kept_request, "keep_prompt");
        let request_tokens = kept_request.map_or(0, |p| estimate_range(view, p..p + 1).unwrap());
        assert_eq!(
            t.dropped_tokens,
            estimate_range(view, from..t.start).unwrap() - request_tokens,
            "dropped_tokens is not the estimate of what was dropped"
        );
        if let Some(gap) = overflow.as_ref().and_then(|o| o.gap) {
            assert!(
                t.dropped_tokens >= gap || t.dropped_groups == groups.len() - 1,
                "gap {gap} not covered: {t:?} of {} turns",
                groups.len()
            );
        }
        let next = apply_truncation(view, &t);
        assert!(next.len() <= attempt.len());
        assert_eq!(
            &next[next.len() - (view.len() - t.start)..],
            &view[t.start..]
        );
        if let Some(p) = request {
            assert!(
                next.iter().any(|m| m == &view[p]),
                "round {round}: the latest user request was dropped"
            );
        }
        if valid {
            let problems = validate_for_api(&next);
            assert!(
                problems.is_empty(),
                "round {round}: truncation made the conversation invalid: {t:?} {problems:?}"
            );
        }
        attempt = next;
    }
}

fn check_cut(msgs: &[Message], o: &CutOpts, valid: bool) {
    let config = SessionMemoryConfig {
        min_tokens: u64::from(o.min_tokens),
        min_text_messages: usize::from(o.min_text % 12),
        max_tokens: u64::from(o.max_tokens),
    };
    let cut = choose_cut(msgs, &config).expect("choose_cut failed");
    assert_eq!(
        cut,
        choose_cut(msgs, &config).unwrap(),
        "choose_cut not deterministic"
    );
    let Some(cut) = cut else { return };
    let active = my_active_start(msgs);
    let k = cut.keep_from;
    assert!(
        k > active && k < msgs.len(),
        "keep_from {k} outside {active}..{}",
        msgs.len()
    );
    assert!(
        is_sent(msgs, k - 1).unwrap(),
        "messages[keep_from - 1] is not a dropped main-chain message"
    );
    assert!(
        (k..msgs.len()).any(|i| is_sent(msgs, i).unwrap()),
        "nothing sent is kept"
    );
    assert_eq!(
        cut.kept_tokens,
        estimate_range(msgs, k..msgs.len()).unwrap(),
        "kept_tokens"
    );
    let text = (k..msgs.len())
        .filter(|&i| {
            is_sent(msgs, i).unwrap()
                && msgs[i].kind() != Kind::Attachment
                && has_text(&msgs.content(i, Detail::Structure).unwrap())
        })
        .count();
    assert_eq!(cut.kept_text_messages, text, "kept_text_messages");
    // No response split across the cut, even when its lines are scattered (finding F1).
    let dropped_ids: HashSet<&str> = msgs[active..k]
        .iter()
        .filter(|m| !m.is_sidechain() && m.kind() == Kind::Assistant)
        .filter_map(Message::message_id)
        .collect();
    for m in &msgs[k..] {
        if !m.is_sidechain() && m.kind() == Kind::Assistant {
            if let Some(id) = m.message_id() {
                assert!(
                    !dropped_ids.contains(id),
                    "response {id} split by the cut at {k}"
                );
            }
        }
    }
    if valid {
        let transcript = msgs.iter().any(Message::is_transcript);
        let summary = context_compaction::summarize::summary::summary_message(
            "summary text",
            transcript,
            "uuid-summary",
            "uuid-parent",
            "2026-02-10T21:11:56.906Z",
            &Default::default(),
        );
        let mut compacted = vec![summary];
        compacted.extend_from_slice(&msgs[k..]);
        let problems = validate_for_api(&compacted);
        assert!(
            problems.is_empty(),
            "summary + kept suffix from {k} invalid: {problems:?}"
        );
    }
}
