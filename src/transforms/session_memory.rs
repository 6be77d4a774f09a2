//! Session-memory compaction (SPEC §12): where to cut a conversation when a caller-provided
//! session-memory text replaces its older part.
//!
//! No model is called: the memory becomes the summary and the most recent messages are kept
//! verbatim. This module decides *which* messages are kept — `messages[keep_from..]` — so
//! that the kept suffix is large enough to carry on the work (at least
//! [`SessionMemoryConfig::min_tokens`] and [`SessionMemoryConfig::min_text_messages`]), small
//! enough to be worth it (at most [`SessionMemoryConfig::max_tokens`]), and still a valid
//! Messages API conversation once it follows the summary.
//!
//! # Valid cut points
//!
//! A cut keeps `messages[keep_from..]` and drops everything before. It is valid when:
//!
//! * **tool pairs stay together**: no kept main-chain user message holds a `tool_result`
//!   whose `tool_use` is before the cut (with transcript lines, the results of parallel calls
//!   are interleaved with the lines of the response that made them);
//! * **responses stay whole**: no API response (transcript lines sharing `message.id`, its
//!   thinking blocks included) has lines on both sides of the cut;
//! * **something is kept**: at least one message sent to the model; it may be an assistant
//!   message, since the summary (a user message) comes right before it;
//! * **other lines follow the suffix**: sidechain lines and lines that are not sent (progress,
//!   system, …) do not affect validity; those between the last dropped message and the first
//!   kept one are kept, so `messages[keep_from - 1]` is always a dropped main-chain message.
//!
//! Only what follows the last `compact_boundary` line counts ([`active_start`]).
//!
//! # Choosing among valid cuts
//!
//! Valid cuts are walked from the end of the conversation backwards (the kept suffix grows),
//! and the first that applies wins:
//!
//! 1. the *latest* cut whose suffix has at least `min_tokens` tokens and at least
//!    `min_text_messages` messages with text, if that suffix is within `max_tokens`;
//! 2. otherwise (the minimums cannot be met within `max_tokens`), the *earliest* cut whose
//!    suffix is within `max_tokens` — the largest valid suffix that fits;
//! 3. otherwise (even the smallest valid suffix exceeds `max_tokens`, e.g. one huge tool
//!    result in the last round), the *latest* valid cut — the smallest valid suffix. Its
//!    [`SessionMemoryCut::kept_tokens`] is then above `max_tokens`; the caller checks the
//!    compacted conversation against the auto-compact threshold anyway (SPEC §12) and falls
//!    back to full compaction when it is still too large.
//!
//! When the choice would keep the whole active conversation (nothing to drop), or there is no
//! main-chain message at all, the answer is `None`.

use crate::measure::tokens::{active_start, estimate_content};
use crate::model::error::Result;
use crate::model::hash::FastMap;
use crate::model::messages::Kind;
use crate::model::view::{
    server_call_links, BlockKind, ContentInfo, ConversationView, Detail, Find,
};

/// Default least number of estimated tokens kept verbatim.
pub const DEFAULT_MIN_TOKENS: u64 = 10_000;
/// Default least number of kept messages with text.
pub const DEFAULT_MIN_TEXT_MESSAGES: usize = 5;
/// Default most estimated tokens kept verbatim.
pub const DEFAULT_MAX_TOKENS: u64 = 40_000;

/// Messages read from the view at a time while walking back from the end.
const CHUNK: usize = 64;

/// How much of the recent conversation session-memory compaction keeps verbatim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionMemoryConfig {
    /// The kept messages must have at least this many estimated tokens (default 10,000).
    pub min_tokens: u64,
    /// The kept messages must include at least this many user or assistant messages with
    /// text (default 5); see [`has_text`].
    pub min_text_messages: usize,
    /// The kept messages may have at most this many estimated tokens (default 40,000). When
    /// it is below `min_tokens`, the minimums can never be met and the largest valid suffix
    /// within it is kept.
    pub max_tokens: u64,
}

impl Default for SessionMemoryConfig {
    fn default() -> Self {
        SessionMemoryConfig {
            min_tokens: DEFAULT_MIN_TOKENS,
            min_text_messages: DEFAULT_MIN_TEXT_MESSAGES,
            max_tokens: DEFAULT_MAX_TOKENS,
        }
    }
}

/// Where session-memory compaction cuts: `messages[keep_from..]` are kept verbatim after the
/// summary; everything before is replaced by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionMemoryCut {
    /// Index of the first kept message (always after the last `compact_boundary`, and after at
    /// least one dropped main-chain message).
    pub keep_from: usize,
    /// Estimated tokens of the kept messages ([`crate::measure::tokens::estimate_message`] summed).
    /// May exceed [`SessionMemoryConfig::max_tokens`] when no valid suffix fits (see the
    /// module documentation).
    pub kept_tokens: u64,
    /// Kept user and assistant messages with text ([`has_text`]).
    pub kept_text_messages: usize,
}

/// Whether a message's content counts as a "message with text": a non-empty string, or a
/// non-empty `text` block. Tool results (even with text inside), thinking, media and
/// attachment payloads do not count.
pub fn has_text(content: &ContentInfo) -> bool {
    match content {
        ContentInfo::Text(units) => *units > 0,
        ContentInfo::Blocks(blocks) => blocks
            .iter()
            .any(|b| b.kind == Some(BlockKind::Text) && b.text_units > 0),
        ContentInfo::None | ContentInfo::Json(_) => false,
    }
}

/// A valid cut met while walking back: the suffix from `first_kept` on (`None`: the whole
/// active conversation).
#[derive(Clone, Copy, Debug)]
struct Candidate {
    first_kept: Option<usize>,
    tokens: u64,
    text: usize,
}

/// Decides the session-memory cut (SPEC §12): the most recent messages to keep verbatim
/// behind a caller-provided session-memory summary. See the module documentation for the
/// rules.
///
/// Returns `None` when there are no messages, when nothing would be dropped (the whole
/// active conversation is needed to meet the minimums, or fits them without dropping
/// anything), or when no valid cut exists. Errors come from malformed messages.
pub fn choose_cut<V: ConversationView + ?Sized>(
    view: &V,
    config: &SessionMemoryConfig,
) -> Result<Option<SessionMemoryCut>> {
    let len = view.len();
    let active = active_start(view)?;
    if active >= len {
        return Ok(None);
    }
    let meets = |c: &Candidate| c.tokens >= config.min_tokens && c.text >= config.min_text_messages;
    let fits = |c: &Candidate| c.tokens <= config.max_tokens;

    // For each user message holding tool results: the earliest message holding a call it
    // answers. A cut after that message would separate the pair. Results without a call in
    // the active conversation do not constrain the cut.
    let index = view.tool_index(active, false)?;
    let mut earliest_call: FastMap<usize, usize> = FastMap::default();
    for result in &index.results {
        if let Some(call) = result.call {
            let at = index.uses[call].message;
            earliest_call
                .entry(result.message)
                .and_modify(|e| *e = (*e).min(at))
                .or_insert(at);
        }
    }
    // A server tool call and its result in a later assistant message, or the later client
    // calls its code made (programmatic tool calling): a cut after the call would separate
    // them too. For each such later message, the earliest call it is tied to.
    let mut earliest_server_call: FastMap<usize, usize> = FastMap::default();
    for (call, other) in server_call_links(view, active)? {
        earliest_server_call
            .entry(other)
            .and_modify(|e| *e = (*e).min(call))
            .or_insert(call);
    }
    let previous_assistant = Find {
        assistant: true,
        ..Find::default()
    };
    // The first line of each response (`message.id`) in the active conversation: a kept
    // line of a response ties the cut to that line even when other lines sit between them
    // (a resumed or merged transcript may scatter a response).
    let mut first_line: FastMap<String, usize> = FastMap::default();
    for i in active..len {
        if view.kind(i)? == Kind::Assistant && !view.is_sidechain(i) {
            if let Some(id) = view.message_id(i) {
                first_line.entry(id).or_insert(i);
            }
        }
    }

    // Walk back from the end. `need`: the cut may not be after this index (a kept message is
    // tied to it by a tool pair or a shared response).
    let mut tokens = 0u64;
    let mut text = 0usize;
    let mut need = usize::MAX;
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut complete = true;
    let mut hi = len;
    'walk: while hi > active {
        let lo = hi.saturating_sub(CHUNK).max(active);
        let contents = view.contents(lo..hi, Detail::Estimate)?;
        for i in (lo..hi).rev() {
            let kind = view.kind(i)?;
            if view.is_sidechain(i)
                || !matches!(kind, Kind::User | Kind::Assistant | Kind::Attachment)
            {
                continue;
            }
            let content = &contents[i - lo];
            tokens += estimate_content(content);
            if kind != Kind::Attachment && has_text(content) {
                text += 1;
            }
            match kind {
                Kind::User => {
                    if let Some(&call) = earliest_call.get(&i) {
                        need = need.min(call);
                    }
                }
                Kind::Assistant => {
                    if let Some(&call) = earliest_server_call.get(&i) {
                        need = need.min(call);
                    }
                    // Consecutive assistant messages form one turn; all lines of a response
                    // go together wherever they are.
                    if let Some(p) = view.rfind(i, previous_assistant)? {
                        if p >= active && crate::model::view::same_turn(view, p, i)? {
                            need = need.min(p);
                        }
                    }
                    if let Some(&first) = view.message_id(i).and_then(|id| first_line.get(&id)) {
                        need = need.min(first);
                    }
                }
                _ => {}
            }
            // Any message may start the kept part (an assistant one too: the summary message,
            // a user message, comes right before it), as long as nothing is split.
            if need >= i {
                let candidate = Candidate {
                    first_kept: Some(i),
                    tokens,
                    text,
                };
                candidates.push(candidate);
                // Later candidates only grow: the first to meet the minimums is the answer
                // (rule 1) or, if it does not fit, rule 2 or 3 applies among those seen.
                if meets(&candidate) {
                    complete = false;
                    break 'walk;
                }
            }
            // Nothing further back fits any more; rules 2 and 3 only need what was seen.
            if tokens > config.max_tokens && !candidates.is_empty() {
                complete = false;
                break 'walk;
            }
        }
        hi = lo;
    }
    if complete {
        // Keeping everything is always possible: it means dropping nothing.
        candidates.push(Candidate {
            first_kept: None,
            tokens,
            text,
        });
    }

    // Tokens never decrease along `candidates`, so those that fit form a prefix.
    let rule1 = candidates
        .iter()
        .position(meets)
        .filter(|&k| fits(&candidates[k]));
    let fitting = candidates.iter().take_while(|c| fits(c)).count();
    let rule2 = fitting.checked_sub(1);
    let rule3 = (!candidates.is_empty()).then_some(0);
    let Some(chosen) = rule1.or(rule2).or(rule3).map(|k| candidates[k]) else {
        return Ok(None);
    };
    let Some(first_kept) = chosen.first_kept else {
        return Ok(None);
    };
    // Lines between the last dropped message and the first kept one go with the suffix.
    for j in (active..first_kept).rev() {
        if crate::measure::tokens::is_sent(view, j)? {
            return Ok(Some(SessionMemoryCut {
                keep_from: j + 1,
                kept_tokens: chosen.tokens,
                kept_text_messages: chosen.text,
            }));
        }
    }
    // Nothing sent before the first kept message: nothing would be dropped.
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::tokens::{estimate_message, estimate_range, is_sent};
    use crate::model::messages::Message;
    use serde_json::{json, Value};

    fn parse(v: Value) -> Vec<Message> {
        Message::parse_all(v).unwrap()
    }

    use crate::transforms::test_fixtures::ptc;

    /// The cut never keeps a programmatic server call's result (in a later response)
    /// without the call.
    #[test]
    fn a_cut_keeps_a_programmatic_server_call_with_its_later_result() {
        let mut v: Vec<Value> = (0..4).flat_map(|i| ptc(i, 300)).collect();
        v.push(json!({"role": "user", "content": "thanks"}));
        let m = parse(Value::Array(v));
        for min_tokens in [1, 50, 200, 400, 700, 1000] {
            for min_text in [0, 1, 2, 3] {
                if let Some(c) = cut(&m, &cfg(min_tokens, min_text, 100_000)) {
                    assert!(
                        c.keep_from % 4 != 2 && c.keep_from % 4 != 3,
                        "min {min_tokens}/{min_text}: kept from {} inside an exchange",
                        c.keep_from
                    );
                }
            }
        }
    }

    fn cut(m: &[Message], config: &SessionMemoryConfig) -> Option<SessionMemoryCut> {
        choose_cut(m, config).unwrap()
    }

    fn cfg(min_tokens: u64, min_text_messages: usize, max_tokens: u64) -> SessionMemoryConfig {
        SessionMemoryConfig {
            min_tokens,
            min_text_messages,
            max_tokens,
        }
    }

    /// `n` tokens of text (4 characters per token).
    fn words(n: usize) -> String {
        "w".repeat(n * 4)
    }

    fn user(tokens: usize) -> Value {
        json!({"role": "user", "content": words(tokens)})
    }

    fn assistant(tokens: usize) -> Value {
        json!({"role": "assistant", "content": [{"type": "text", "text": words(tokens)}]})
    }

    /// `n` alternating user/assistant text messages of `tokens` each.
    fn chat(n: usize, tokens: usize) -> Vec<Message> {
        parse(Value::Array(
            (0..n)
                .map(|k| {
                    if k % 2 == 0 {
                        user(tokens)
                    } else {
                        assistant(tokens)
                    }
                })
                .collect(),
        ))
    }

    #[test]
    fn defaults_match_the_spec() {
        assert_eq!(
            SessionMemoryConfig::default(),
            cfg(10_000, 5, 40_000),
            "SPEC §12: at least 10,000 tokens and 5 messages with text, at most 40,000"
        );
    }

    #[test]
    fn a_scattered_response_is_never_split() {
        // Fuzzing finding F1: the lines of response `msg_A` are not consecutive (a resumed or
        // merged transcript). Keeping the last line of it means keeping the first too.
        let line = |id: &str, tokens: usize| {
            json!({"type": "assistant", "message": {"role": "assistant", "id": id,
                "content": [{"type": "text", "text": words(tokens)}]}})
        };
        let u = |tokens: usize| json!({"type": "user", "message": {"role": "user", "content": words(tokens)}});
        let m = parse(json!([
            u(100),
            line("msg_0", 100),
            u(100),
            line("msg_A", 100),
            u(100),
            line("msg_B", 100),
            u(100),
            line("msg_A", 100),
            u(100)
        ]));
        let c = cut(&m, &cfg(250, 2, 10_000)).unwrap();
        assert!(c.keep_from <= 3, "{c:?}");
        assert!(c.keep_from > 0, "{c:?}");
        // Without the scattered line the cut may fall right after msg_A's first line.
        let mut plain = m.clone();
        plain[7] = parse(json!([line("msg_C", 100)])).remove(0);
        assert!(cut(&plain, &cfg(250, 2, 10_000)).unwrap().keep_from > 3);
    }

    #[test]
    fn nothing_to_cut() {
        let empty: Vec<Message> = Vec::new();
        assert_eq!(cut(&empty, &SessionMemoryConfig::default()), None);
        // Everything is needed to meet the minimums.
        assert_eq!(cut(&chat(6, 1_000), &SessionMemoryConfig::default()), None);
        // Only non-API lines.
        let lines =
            parse(json!([{"type": "progress", "data": {}}, {"type": "system", "content": "x"}]));
        assert_eq!(cut(&lines, &SessionMemoryConfig::default()), None);
    }

    #[test]
    fn keeps_the_latest_suffix_that_meets_both_minimums() {
        // 40 messages of 1,000 tokens: 10 messages meet 10,000 tokens, and the cut must be
        // before a user message (even index) → keep the last 10 (index 30 is a user).
        let m = chat(40, 1_000);
        let c = cut(&m, &SessionMemoryConfig::default()).unwrap();
        assert_eq!(
            c,
            SessionMemoryCut {
                keep_from: 30,
                kept_tokens: 10_000,
                kept_text_messages: 10
            }
        );
        // 11 messages needed for 10,000 with 950 each (an assistant may come first).
        let m = chat(40, 950);
        let c = cut(&m, &SessionMemoryConfig::default()).unwrap();
        assert_eq!(c.keep_from, 29);
        assert_eq!(c.kept_tokens, 11 * 950);
    }

    #[test]
    fn text_message_minimum_dominates_with_small_messages() {
        let m = chat(40, 100);
        let c = cut(&m, &cfg(100, 5, 40_000)).unwrap();
        // 5 messages with text (an assistant may come first).
        assert_eq!(c.keep_from, 35);
        assert_eq!(c.kept_text_messages, 5);
        assert_eq!(c.kept_tokens, 500);
    }

    #[test]
    fn largest_suffix_within_max_when_minimums_cannot_be_met() {
        // Each user message is 15,000 tokens: a suffix starting at a user is 15,001, 30,002 …
        let mut v = Vec::new();
        for _ in 0..6 {
            v.push(user(15_000));
            v.push(assistant(1));
        }
        let m = parse(Value::Array(v));
        // 5 text messages fit from the assistant before the last two users: 30,003 tokens.
        let c = cut(&m, &SessionMemoryConfig::default()).unwrap();
        assert_eq!(c.keep_from, 7);
        assert_eq!(c.kept_tokens, 30_003);
        assert_eq!(c.kept_text_messages, 5);
    }

    #[test]
    fn smallest_valid_suffix_when_even_the_last_round_is_too_large() {
        let m = parse(json!([
            user(100), assistant(100),
            user(100), assistant(100),
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": words(50_000)}]}
        ]));
        let c = cut(&m, &SessionMemoryConfig::default()).unwrap();
        assert_eq!(c.keep_from, 5, "cannot separate the result from its call");
        assert!(c.kept_tokens > 50_000);
        assert_eq!(c.kept_text_messages, 0);
    }

    #[test]
    fn tool_pairs_are_never_split() {
        // The tool result message alone would satisfy the minimums.
        let m = parse(json!([
            user(1_000), assistant(1_000),
            {"role": "user", "content": "read it"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "s"},
                {"type": "text", "text": "reading"},
                {"type": "tool_use", "id": "a", "name": "Read", "input": {}},
                {"type": "tool_use", "id": "b", "name": "Read", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": words(6_000)},
                {"type": "tool_result", "tool_use_id": "b", "content": words(6_000)}]},
            assistant(10)
        ]));
        let c = cut(&m, &cfg(10_000, 1, 40_000)).unwrap();
        assert_eq!(c.keep_from, 3, "the calls stay with their results");
        // Tool-result-only user messages do not count as text.
        assert_eq!(c.kept_text_messages, 2);
    }

    #[test]
    fn transcript_responses_and_interleaved_results_stay_whole() {
        let line = |id: &str, content: Value| json!({"type": "assistant", "uuid": id, "message": {"role": "assistant", "id": "m2", "content": content}});
        let result = |id: &str, size: usize| {
            json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": words(size)}]}})
        };
        let m = parse(json!([
            {"type": "user", "message": {"role": "user", "content": words(1_000)}},
            {"type": "assistant", "message": {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": "ok"}]}},
            {"type": "user", "message": {"role": "user", "content": "now in parallel"}},
            {"type": "progress", "data": {}},
            line("l1", json!([{"type": "thinking", "thinking": "t", "signature": "s"}])),
            line("l2", json!([{"type": "tool_use", "id": "a", "name": "Bash", "input": {}}])),
            result("a", 4_000),
            {"type": "user", "message": {"role": "user", "content": "interrupting"}},
            line("l3", json!([{"type": "tool_use", "id": "b", "name": "Bash", "input": {}}])),
            result("b", 4_000),
            {"type": "assistant", "message": {"role": "assistant", "id": "m3", "content": [{"type": "text", "text": "done"}]}}
        ]));
        // Index 7 ("interrupting") alone would meet 8,000 tokens / 2 text messages, but it
        // sits inside response m2; index 6 holds a result of a call before it. The whole
        // response m2 is kept, with the progress line before it.
        let c = cut(&m, &cfg(8_000, 2, 40_000)).unwrap();
        assert_eq!(c.keep_from, 3);
        // "interrupting", "done": thinking, calls and results are not text.
        assert_eq!(c.kept_text_messages, 2);
    }

    #[test]
    fn non_api_and_sidechain_lines_go_with_the_suffix() {
        let m = parse(json!([
            {"type": "user", "message": {"role": "user", "content": words(500)}},
            {"type": "assistant", "message": {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": words(500)}]}},
            {"type": "progress", "data": {}},
            {"type": "assistant", "isSidechain": true, "message": {"role": "assistant", "id": "s", "content": [{"type": "text", "text": words(9_000)}]}},
            {"type": "system", "subtype": "informational", "content": "x"},
            {"type": "user", "message": {"role": "user", "content": words(500)}},
            {"type": "assistant", "message": {"role": "assistant", "id": "m2", "content": [{"type": "text", "text": words(500)}]}},
            {"type": "file-history-snapshot", "snapshot": {}}
        ]));
        let c = cut(&m, &cfg(1_000, 2, 40_000)).unwrap();
        assert_eq!(
            c.keep_from, 2,
            "progress, sidechain and system lines are kept"
        );
        assert_eq!(c.kept_tokens, 1_000, "sidechain lines are not counted");
        assert_eq!(c.kept_text_messages, 2);
    }

    #[test]
    fn only_the_conversation_after_the_last_boundary_counts() {
        let m = parse(json!([
            {"type": "user", "message": {"role": "user", "content": words(30_000)}},
            {"type": "assistant", "message": {"role": "assistant", "id": "m0", "content": [{"type": "text", "text": "x"}]}},
            {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
            {"type": "user", "isCompactSummary": true, "message": {"role": "user", "content": words(2_000)}},
            {"type": "user", "message": {"role": "user", "content": words(2_000)}},
            {"type": "assistant", "message": {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": words(2_000)}]}}
        ]));
        assert_eq!(cut(&m, &cfg(3_000, 1, 40_000)).unwrap().keep_from, 4);
        // Everything after the boundary is needed: nothing to drop, even though the lines
        // before the boundary would go.
        assert_eq!(cut(&m, &cfg(5_000, 1, 40_000)), None);
        assert_eq!(cut(&m, &SessionMemoryConfig::default()), None);
        // A boundary as the last line: nothing after it.
        let mut only = m.clone();
        only.truncate(3);
        assert_eq!(cut(&only, &cfg(0, 0, 40_000)), None);
    }

    #[test]
    fn attachments_may_start_the_suffix_but_are_not_text() {
        let m = parse(json!([
            {"type": "user", "message": {"role": "user", "content": words(100)}},
            {"type": "assistant", "message": {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": words(100)}]}},
            {"type": "attachment", "attachment": {"type": "todo", "content": words(500)}},
            {"type": "user", "message": {"role": "user", "content": words(100)}},
            {"type": "assistant", "message": {"role": "assistant", "id": "m2", "content": [{"type": "text", "text": words(100)}]}}
        ]));
        let c = cut(&m, &cfg(400, 2, 40_000)).unwrap();
        assert_eq!(c.keep_from, 2);
        assert_eq!(c.kept_text_messages, 2);
        assert!(c.kept_tokens > 600);
    }

    #[test]
    fn empty_text_and_tool_results_are_not_text_messages() {
        let m = parse(json!([
            user(10), assistant(10),
            {"role": "user", "content": ""},
            {"role": "assistant", "content": [{"type": "text", "text": ""}, {"type": "tool_use", "id": "t", "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "long text"}]}]},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "x", "signature": "s"}, {"type": "text", "text": "ok"}]}
        ]));
        // The last message alone holds the only text ("ok"): it may start the kept part.
        let c = cut(&m, &cfg(0, 1, 40_000)).unwrap();
        assert_eq!(c.keep_from, 5);
        assert_eq!(c.kept_text_messages, 1);
    }

    #[test]
    fn orphan_results_do_not_block_cuts() {
        let m = parse(json!([
            user(500), assistant(500),
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "gone", "content": "x"},
                {"type": "text", "text": words(500)}]},
            assistant(500)
        ]));
        assert_eq!(cut(&m, &cfg(1_000, 2, 40_000)).unwrap().keep_from, 2);
    }

    #[test]
    fn an_assistant_message_may_start_the_kept_part() {
        // The summary (a user message) comes right before the kept part.
        let m = parse(json!([assistant(5_000), user(5_000), assistant(5_000)]));
        assert_eq!(cut(&m, &cfg(11_000, 1, 40_000)), None);
        assert_eq!(cut(&m, &cfg(6_000, 1, 40_000)).unwrap().keep_from, 1);
        assert_eq!(cut(&m, &cfg(1_000, 1, 40_000)).unwrap().keep_from, 2);
    }

    #[test]
    fn min_above_max_keeps_the_largest_fitting_suffix() {
        let m = chat(20, 1_000);
        let c = cut(&m, &cfg(50_000, 1, 5_000)).unwrap();
        assert_eq!(c.keep_from, 15);
        assert_eq!(c.kept_tokens, 5_000);
    }

    // ---- Generated conversations ----------------------------------------------------

    /// splitmix64: a small deterministic generator for reproducible cases.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            if n == 0 {
                0
            } else {
                self.next() % n
            }
        }

        fn chance(&mut self, percent: u64) -> bool {
            self.below(100) < percent
        }

        /// Text of 0–`max_tokens` tokens (empty now and then).
        fn text(&mut self, max_tokens: u64) -> String {
            if self.chance(5) {
                String::new()
            } else {
                "t".repeat(self.below(max_tokens * 4 + 1) as usize)
            }
        }
    }

    /// API-shape conversation: user prompts and tool loops, assistant responses with
    /// thinking, text and parallel tool calls.
    fn gen_api(rng: &mut Rng, scale: u64) -> Vec<Message> {
        let mut v = Vec::new();
        let mut pending: Vec<String> = Vec::new();
        let mut call = 0;
        if rng.chance(5) {
            v.push(json!({"role": "assistant", "content": [{"type": "text", "text": rng.text(scale)}]}));
        }
        for _ in 0..rng.below(30) {
            // User side.
            let mut blocks: Vec<Value> = pending
                .drain(..)
                .map(|id| json!({"type": "tool_result", "tool_use_id": id, "content": rng.text(scale * 2)}))
                .collect();
            if blocks.is_empty() || rng.chance(10) {
                if rng.chance(50) {
                    blocks.push(json!({"type": "text", "text": rng.text(scale)}));
                } else if blocks.is_empty() {
                    v.push(json!({"role": "user", "content": rng.text(scale)}));
                }
                if rng.chance(10) {
                    blocks.push(json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}));
                }
                if rng.chance(5) {
                    blocks.push(
                        json!({"type": "tool_result", "tool_use_id": "orphan", "content": "x"}),
                    );
                }
            }
            if !blocks.is_empty() {
                v.push(json!({"role": "user", "content": blocks}));
            }
            // Assistant side.
            let mut blocks = Vec::new();
            if rng.chance(30) {
                blocks.push(
                    json!({"type": "thinking", "thinking": rng.text(scale), "signature": "sig"}),
                );
            }
            if rng.chance(70) {
                blocks.push(json!({"type": "text", "text": rng.text(scale)}));
            }
            for _ in 0..rng.below(4) {
                call += 1;
                let id = format!("toolu_{call}");
                blocks.push(json!({"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": "/f"}}));
                pending.push(id);
            }
            if blocks.is_empty() {
                blocks.push(json!({"type": "text", "text": "ok"}));
            }
            v.push(json!({"role": "assistant", "content": blocks}));
        }
        if !pending.is_empty() && rng.chance(70) {
            let blocks: Vec<Value> = pending
                .drain(..)
                .map(|id| json!({"type": "tool_result", "tool_use_id": id, "content": rng.text(scale)}))
                .collect();
            v.push(json!({"role": "user", "content": blocks}));
        }
        parse(Value::Array(v))
    }

    /// Transcript-shape conversation: responses split into one line per block, results of
    /// parallel calls interleaved with them, a user line now and then inside a response,
    /// progress/system/sidechain/attachment lines, and sometimes an earlier compaction.
    fn gen_transcript(rng: &mut Rng, scale: u64, tag: &str) -> Vec<Message> {
        let mut v: Vec<Value> = Vec::new();
        let mut call = 0;
        let user_line = |content: Value| json!({"type": "user", "message": {"role": "user", "content": content}});
        let result_line = |id: &str, text: String| {
            json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": text}]}})
        };
        let noise = |rng: &mut Rng, v: &mut Vec<Value>| {
            if rng.chance(10) {
                v.push(json!({"type": "progress", "data": {"x": 1}}));
            }
            if rng.chance(5) {
                v.push(json!({"type": "system", "subtype": "informational", "content": "i"}));
            }
            if rng.chance(5) {
                let kind = if rng.chance(50) { "user" } else { "assistant" };
                v.push(json!({"type": kind, "isSidechain": true, "message": {"role": kind, "id": "side",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": rng.text(scale)}]}}));
            }
        };
        if rng.chance(25) {
            v.push(user_line(json!(rng.text(scale * 4))));
            v.push(json!({"type": "assistant", "message": {"role": "assistant", "id": "old", "content": [
                {"type": "tool_use", "id": "old_call", "name": "Read", "input": {}}]}}));
            v.push(json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"}));
            v.push(json!({"type": "user", "isCompactSummary": true, "message": {"role": "user", "content": rng.text(scale)}}));
            if rng.chance(30) {
                v.push(result_line("old_call", rng.text(scale)));
            }
        }
        let mut pending: Vec<String> = Vec::new();
        for r in 0..rng.below(25) {
            // User side (the results of the previous response are already out).
            if pending.is_empty() {
                if rng.chance(15) {
                    v.push(json!({"type": "attachment", "attachment": {"type": "todo", "content": rng.text(scale)}}));
                }
                v.push(user_line(json!(rng.text(scale))));
                noise(rng, &mut v);
            }
            // The response, one line per block.
            let id = format!("msg_{tag}{r}");
            let mut blocks = Vec::new();
            if rng.chance(30) {
                blocks.push(
                    json!({"type": "thinking", "thinking": rng.text(scale), "signature": "sig"}),
                );
            }
            if rng.chance(60) {
                blocks.push(json!({"type": "text", "text": rng.text(scale)}));
            }
            let calls = rng.below(4);
            for _ in 0..calls {
                call += 1;
                blocks.push(json!({"type": "tool_use", "id": format!("toolu_{tag}{call}"), "name": "Bash", "input": {}}));
            }
            if blocks.is_empty() {
                blocks.push(json!({"type": "text", "text": "ok"}));
            }
            let n = blocks.len();
            for (k, b) in blocks.into_iter().enumerate() {
                if let Some(tool) = b.get("id").and_then(Value::as_str) {
                    pending.push(tool.to_string());
                }
                v.push(json!({"type": "assistant", "uuid": format!("{id}_{k}"),
                    "message": {"role": "assistant", "id": id, "content": [b]}}));
                noise(rng, &mut v);
                if k + 1 < n {
                    // Results of calls that already finished, interleaved with the response.
                    while !pending.is_empty() && rng.chance(40) {
                        let t = pending.remove(rng.below(pending.len() as u64) as usize);
                        v.push(result_line(&t, rng.text(scale * 2)));
                    }
                    if rng.chance(5) {
                        v.push(user_line(json!(rng.text(scale))));
                    }
                }
            }
            let last_round = rng.chance(10);
            if !last_round || rng.chance(50) {
                while !pending.is_empty() {
                    let t = pending.remove(rng.below(pending.len() as u64) as usize);
                    v.push(result_line(&t, rng.text(scale * 2)));
                    noise(rng, &mut v);
                }
            }
            if last_round {
                break;
            }
        }
        parse(Value::Array(v))
    }

    fn main_sent(m: &[Message], i: usize) -> bool {
        is_sent(m, i).unwrap()
    }

    fn tool_result_ids(m: &Message) -> Vec<String> {
        match m.content() {
            Some(crate::Content::Blocks(bs)) => bs
                .iter()
                .filter_map(|b| match b {
                    crate::Block::ToolResult(r) => Some(r.tool_use_id.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn tool_use_ids(m: &Message) -> Vec<String> {
        match m.content() {
            Some(crate::Content::Blocks(bs)) => bs
                .iter()
                .filter_map(|b| match b {
                    crate::Block::ToolUse(t) => Some(t.id.clone()),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }

    fn is_text_message(m: &[Message], i: usize) -> bool {
        let v: &[Message] = m;
        main_sent(m, i)
            && matches!(m[i].kind(), Kind::User | Kind::Assistant)
            && has_text(&v.content(i, Detail::Structure).unwrap())
    }

    /// Whether keeping `m[k..]` is a valid cut, checked straight from the definitions.
    fn valid_by_definition(m: &[Message], active: usize, k: usize) -> bool {
        // The last dropped line is a main-chain message (other lines go with the suffix).
        if k <= active || !main_sent(m, k - 1) {
            return false;
        }
        // Something is kept (the summary, a user message, comes before it, so an assistant
        // message may come first).
        if !(k..m.len()).any(|i| main_sent(m, i)) {
            return false;
        }
        // No kept result answers a dropped call.
        let dropped_calls: Vec<String> = (active..k)
            .filter(|&i| main_sent(m, i) && m[i].kind() == Kind::Assistant)
            .flat_map(|i| tool_use_ids(&m[i]))
            .collect();
        let split_pair = (k..m.len())
            .filter(|&i| main_sent(m, i) && m[i].kind() == Kind::User)
            .flat_map(|i| tool_result_ids(&m[i]))
            .any(|id| dropped_calls.contains(&id));
        // No response on both sides.
        let split_response = (active..k).any(|i| {
            main_sent(m, i)
                && m[i].kind() == Kind::Assistant
                && (k..m.len()).any(|j| {
                    main_sent(m, j)
                        && m[j].kind() == Kind::Assistant
                        && m[i].message_id().is_some()
                        && m[i].message_id() == m[j].message_id()
                })
        });
        !split_pair && !split_response
    }

    /// The rules of the module documentation, applied by brute force over every index.
    fn oracle(m: &[Message], config: &SessionMemoryConfig) -> Option<SessionMemoryCut> {
        let active = active_start(m).unwrap();
        if active >= m.len() {
            return None;
        }
        let stats = |k: usize| SessionMemoryCut {
            keep_from: k,
            kept_tokens: estimate_range(m, k..m.len()).unwrap(),
            kept_text_messages: (k..m.len()).filter(|&i| is_text_message(m, i)).count(),
        };
        // Latest first, then "keep everything" (keep_from = active, meaning None).
        let mut options: Vec<SessionMemoryCut> = (active + 1..=m.len())
            .rev()
            .filter(|&k| valid_by_definition(m, active, k))
            .map(stats)
            .collect();
        options.push(stats(active));
        let meets = |c: &SessionMemoryCut| {
            c.kept_tokens >= config.min_tokens && c.kept_text_messages >= config.min_text_messages
        };
        let fits = |c: &SessionMemoryCut| c.kept_tokens <= config.max_tokens;
        let chosen = match options.iter().find(|c| meets(c)) {
            Some(c) if fits(c) => *c,
            _ => match options.iter().rfind(|c| fits(c)) {
                Some(c) => *c,
                None => options[0],
            },
        };
        (chosen.keep_from > active).then_some(chosen)
    }

    /// Checks one generated case against the invariants and the oracle.
    fn check(m: &[Message], config: &SessionMemoryConfig, seed: u64) {
        let ctx = || {
            format!(
                "seed {seed}, config {config:?}, conversation {}",
                Value::Array(m.iter().map(Message::to_value).collect())
            )
        };
        let got = cut(m, config);
        assert_eq!(got, cut(m, config), "deterministic; {}", ctx());
        let expected = oracle(m, config);
        assert_eq!(got, expected, "{}", ctx());
        let Some(c) = got else { return };
        let active = active_start(m).unwrap();
        assert!(c.keep_from > active && c.keep_from <= m.len(), "{}", ctx());
        assert!(valid_by_definition(m, active, c.keep_from), "{}", ctx());
        assert!((c.keep_from..m.len()).any(|i| main_sent(m, i)), "{}", ctx());
        let tokens: u64 = (c.keep_from..m.len())
            .map(|i| estimate_message(m, i).unwrap())
            .sum();
        assert_eq!(c.kept_tokens, tokens, "{}", ctx());
        // Limits hold whenever some valid cut allows them.
        let active_valid: Vec<usize> = (active + 1..=m.len())
            .filter(|&k| valid_by_definition(m, active, k))
            .collect();
        let stats = |k: usize| {
            (
                estimate_range(m, k..m.len()).unwrap(),
                (k..m.len()).filter(|&i| is_text_message(m, i)).count(),
            )
        };
        let possible = active_valid.iter().any(|&k| {
            let (t, n) = stats(k);
            t >= config.min_tokens && n >= config.min_text_messages && t <= config.max_tokens
        });
        if possible {
            assert!(c.kept_tokens >= config.min_tokens, "{}", ctx());
            assert!(
                c.kept_text_messages >= config.min_text_messages,
                "{}",
                ctx()
            );
            assert!(c.kept_tokens <= config.max_tokens, "{}", ctx());
        }
        if c.kept_tokens > config.max_tokens {
            // Only when no valid suffix fits, and then the smallest one.
            assert!(
                active_valid.iter().all(|&k| stats(k).0 > config.max_tokens),
                "{}",
                ctx()
            );
            assert_eq!(Some(&c.keep_from), active_valid.last(), "{}", ctx());
        }
    }

    fn random_config(rng: &mut Rng, scale: u64) -> SessionMemoryConfig {
        let min_tokens = rng.below(scale * 8);
        SessionMemoryConfig {
            min_tokens,
            min_text_messages: rng.below(8) as usize,
            max_tokens: if rng.chance(10) {
                rng.below(scale * 4)
            } else {
                min_tokens + rng.below(scale * 16)
            },
        }
    }

    #[test]
    fn generated_api_conversations() {
        for seed in 0..600 {
            let mut rng = Rng(seed);
            let scale = [10, 100, 1_000][rng.below(3) as usize];
            let m = gen_api(&mut rng, scale);
            check(&m, &random_config(&mut rng, scale), seed);
        }
    }

    #[test]
    fn generated_transcripts() {
        for seed in 0..600 {
            let mut rng = Rng(seed ^ 0xABCD);
            let scale = [10, 100, 1_000][rng.below(3) as usize];
            let m = gen_transcript(&mut rng, scale, "");
            check(&m, &random_config(&mut rng, scale), seed);
        }
    }

    #[test]
    fn generated_with_default_config() {
        let config = SessionMemoryConfig::default();
        for seed in 0..150u64 {
            let mut rng = Rng(seed.wrapping_mul(31) + 7);
            let m = if seed % 2 == 0 {
                gen_api(&mut rng, 3_000)
            } else {
                gen_transcript(&mut rng, 3_000, "")
            };
            check(&m, &config, seed);
        }
    }

    #[test]
    fn long_conversations_read_in_chunks() {
        // More than one chunk of lines walked, with a long tool loop at the end.
        let mut v = vec![user(10)];
        for k in 0..200 {
            v.push(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": format!("t{k}"), "name": "Read", "input": {}}]}));
            v.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{k}"), "content": words(100)}]}));
        }
        let m = parse(Value::Array(v));
        // The only valid cut is before the first user message: nothing to drop.
        assert_eq!(cut(&m, &SessionMemoryConfig::default()), None);
        let mut rng = Rng(99);
        for seed in 0..20 {
            let mut long = gen_transcript(&mut rng, 200, "a");
            for tag in ["b", "c", "d", "e"] {
                long.extend(gen_transcript(&mut rng, 200, tag));
            }
            check(&long, &random_config(&mut rng, 200), seed);
        }
    }
}
