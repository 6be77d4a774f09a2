//! Prompt-too-long retry (SPEC §8): recognising context-overflow errors from several
//! providers, grouping a conversation into API rounds, and dropping the oldest rounds.

use serde::Serialize;

use crate::measure::tokens::{active_start, estimate_range};
use crate::model::error::Result;
use crate::model::messages::{Content, Kind, Message, Role};
use crate::model::view::{server_call_links, ConversationView};

/// Most prompt-too-long retries of one summary request.
pub const MAX_PTL_RETRIES: u32 = 3;

/// Share of API rounds dropped when the error gives no numbers.
pub const FALLBACK_DROP_FRACTION: f64 = 0.2;

/// Text of the user message put at the head of a truncated conversation (the API wants a
/// user message first). Recognised and removed again on the next retry.
pub const PTL_MARKER_TEXT: &str = "[Earlier turns of this conversation were left out so that the request fits the model's context window.]";

/// Which provider form an overflow error had.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OverflowKind {
    /// A count of the input alone over the limit: Anthropic's `prompt is too long: N tokens > M
    /// maximum`, xAI's `maximum prompt length is M but the request contains N tokens`, the
    /// llama.cpp server's `request (N tokens) exceeds the available context size (M tokens)`.
    PromptTooLong,
    /// Anthropic: `input length and max_tokens exceed context limit: A + B > C`.
    InputPlusMaxTokens,
    /// HTTP 413 / `request_too_large`.
    RequestTooLarge,
    /// OpenAI `context_length_exceeded` and its texts.
    #[serde(rename = "openai")]
    OpenAi,
    /// Gemini: `input token count (N) exceeds the maximum number of tokens allowed (M)`.
    Gemini,
    /// Another recognisable "context too long" text without numbers.
    Generic,
}

/// A recognised context-overflow error.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ContextOverflow {
    /// The form it had.
    pub kind: OverflowKind,
    /// Tokens the request had (for `A + B > C`: A + B).
    pub actual: Option<u64>,
    /// The limit it exceeded.
    pub limit: Option<u64>,
    /// `actual − limit`: how many tokens must go.
    pub gap: Option<u64>,
}

/// All integers in `s` from byte `from` on, accepting `1,234` and `1_234` separators.
fn numbers_after(s: &str, from: usize) -> Vec<u64> {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = from;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let mut n: u64 = 0;
            let mut overflow = false;
            while i < bytes.len() {
                let b = bytes[i];
                if b.is_ascii_digit() {
                    match n
                        .checked_mul(10)
                        .and_then(|x| x.checked_add(u64::from(b - b'0')))
                    {
                        Some(v) => n = v,
                        None => overflow = true,
                    }
                    i += 1;
                } else if (b == b',' || b == b'_')
                    && i + 1 < bytes.len()
                    && bytes[i + 1].is_ascii_digit()
                {
                    i += 1;
                } else {
                    break;
                }
            }
            if !overflow {
                out.push(n);
            }
        } else {
            i += 1;
        }
    }
    out
}

fn first_number_after(s: &str, needle: &str) -> Option<u64> {
    s.find(needle)
        .and_then(|p| numbers_after(s, p + needle.len()).first().copied())
}

fn overflow(kind: OverflowKind, actual: Option<u64>, limit: Option<u64>) -> ContextOverflow {
    let gap = match (actual, limit) {
        (Some(a), Some(l)) => Some(a.saturating_sub(l)),
        _ => None,
    };
    ContextOverflow {
        kind,
        actual,
        limit,
        gap,
    }
}

/// `parseContextOverflowError`: recognises an overflow error from its text (and HTTP status,
/// when known). Returns `None` for any other error.
pub fn parse_context_overflow_error(text: &str, status: Option<u16>) -> Option<ContextOverflow> {
    let s = text.to_ascii_lowercase();
    if let Some(p) = s.find("prompt is too long") {
        let n = numbers_after(&s, p);
        return Some(overflow(
            OverflowKind::PromptTooLong,
            n.first().copied(),
            n.get(1).copied(),
        ));
    }
    if let Some(p) = s.find("exceed context limit") {
        let n = numbers_after(&s, p);
        return Some(if n.len() >= 3 {
            overflow(
                OverflowKind::InputPlusMaxTokens,
                Some(n[0].saturating_add(n[1])),
                Some(n[2]),
            )
        } else {
            overflow(OverflowKind::InputPlusMaxTokens, None, None)
        });
    }
    if s.contains("input token count") && s.contains("maximum number of tokens allowed") {
        return Some(overflow(
            OverflowKind::Gemini,
            first_number_after(&s, "input token count"),
            first_number_after(&s, "maximum number of tokens allowed"),
        ));
    }
    // The input alone over the limit. xAI: `maximum prompt length is M but the request contains
    // N tokens`. The llama.cpp server: `request (N tokens) exceeds the available context size (M
    // tokens)`, or the same without the numbers.
    if s.contains("maximum prompt length is") || s.contains("available context size") {
        let after = |keys: [&str; 2]| keys.iter().find_map(|k| first_number_after(&s, k));
        return Some(overflow(
            OverflowKind::PromptTooLong,
            after(["request contains", "request ("]),
            after(["maximum prompt length is", "available context size ("]),
        ));
    }
    if s.contains("maximum context length") || s.contains("context_length_exceeded") {
        let limit = first_number_after(&s, "maximum context length");
        let actual = ["resulted in", "you requested", "requested"]
            .iter()
            .find_map(|k| first_number_after(&s, k));
        return Some(overflow(OverflowKind::OpenAi, actual, limit));
    }
    if status == Some(413) || s.contains("request_too_large") || s.contains("request too large") {
        return Some(overflow(OverflowKind::RequestTooLarge, None, None));
    }
    const GENERIC: &[&str] = &[
        "exceeds the context window",
        "context window exceeded",
        "context length exceeded",
        "too many tokens",
        "input is too long",
        "exceeds the maximum number of tokens",
    ];
    if GENERIC.iter().any(|g| s.contains(g)) {
        return Some(overflow(OverflowKind::Generic, None, None));
    }
    None
}

/// `groupMessagesByApiRound`: ranges of message indices, one per API round. A round starts
/// at an assistant message that is not a line of the previous assistant's response (lines of
/// one split response, sharing `message.id`, stay together) and runs up to the next one;
/// what precedes the first assistant message is the first round.
pub fn group_by_api_round<V: ConversationView + ?Sized>(
    view: &V,
    from: usize,
) -> Result<Vec<std::ops::Range<usize>>> {
    group(view, from, false)
}

/// Like [`group_by_api_round`], but consecutive assistant messages with no user message
/// between them stay in one group too: the API merges them into one turn, so a cut between
/// them could separate a tool call from its result. Truncation cuts at these groups.
pub fn group_by_api_turn<V: ConversationView + ?Sized>(
    view: &V,
    from: usize,
) -> Result<Vec<std::ops::Range<usize>>> {
    group(view, from, true)
}

fn group<V: ConversationView + ?Sized>(
    view: &V,
    from: usize,
    whole_turns: bool,
) -> Result<Vec<std::ops::Range<usize>>> {
    let mut groups = Vec::new();
    let mut start = from;
    let mut previous: Option<usize> = None;
    for i in from..view.len() {
        if view.is_sidechain(i) || view.kind(i)? != Kind::Assistant {
            continue;
        }
        let same = match previous {
            Some(p) if whole_turns => crate::model::view::same_turn(view, p, i)?,
            Some(p) => view.same_response(p, i),
            None => false,
        };
        if !same && i > start {
            groups.push(start..i);
            start = i;
        }
        previous = Some(i);
    }
    if start < view.len() {
        groups.push(start..view.len());
    }
    join_server_calls(view, from, groups)
}

/// `groups` with those a server tool call spans joined: a `server_tool_use` whose client
/// calls (programmatic tool calling) run first gets its result in a later assistant
/// message, and the rounds from its call to its result (or to the latest client call its
/// code made) form one ([`server_call_links`]). A cut between them would keep a server
/// tool's result whose call it dropped.
fn join_server_calls<V: ConversationView + ?Sized>(
    view: &V,
    from: usize,
    groups: Vec<std::ops::Range<usize>>,
) -> Result<Vec<std::ops::Range<usize>>> {
    let links = server_call_links(view, from)?;
    if links.is_empty() {
        return Ok(groups);
    }
    let group_of = |i: usize| groups.partition_point(|g| g.end <= i);
    // For each group, the last group one of its server calls reaches.
    let mut reach: Vec<usize> = (0..groups.len()).collect();
    for (call, other) in links {
        let (a, b) = (group_of(call), group_of(other));
        if a < reach.len() && b > reach[a] {
            reach[a] = b.min(groups.len() - 1);
        }
    }
    let mut joined: Vec<std::ops::Range<usize>> = Vec::with_capacity(groups.len());
    let mut k = 0;
    while k < groups.len() {
        let mut last = reach[k];
        let mut j = k;
        while j <= last {
            last = last.max(reach[j]);
            j += 1;
        }
        joined.push(groups[k].start..groups[last].end);
        k = last + 1;
    }
    Ok(joined)
}

/// The decision of `truncateHeadForPTLRetry`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Truncation {
    /// Keep `messages[start..]`.
    pub start: usize,
    /// Keep these system messages first: they open the context (an OpenAI or AI SDK
    /// `system`/`developer` message, a LangChain `SystemMessage`) and are the app's
    /// instructions, not history. Empty when there are none.
    pub keep_system: std::ops::Range<usize>,
    /// Put a user marker message ([`PTL_MARKER_TEXT`]) before them.
    pub insert_marker: bool,
    /// Keep this earlier message — the latest user request, which the drop would have taken —
    /// verbatim before them (then no marker is needed: it is a user message).
    pub keep_prompt: Option<usize>,
    /// Keep this message first: it begins with the Messages API's `compaction` block, which
    /// the API wants first and which stands for everything before it.
    pub keep_compaction: Option<usize>,
    /// API rounds dropped.
    pub dropped_groups: usize,
    /// Estimated tokens dropped.
    pub dropped_tokens: u64,
}

/// One message of a truncated conversation, in order (see [`Truncation::layout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    /// The caller's message at this index.
    Message(usize),
    /// The marker ([`ptl_marker_message`]): a transcript line when any kept message is one.
    Marker {
        /// Whether to write it as a transcript line.
        transcript: bool,
    },
}

impl Truncation {
    /// The truncated conversation over `view`, in order: the leading system messages, the
    /// compaction message, the kept prompt, the marker, then `messages[start..]`.
    pub fn layout<V: ConversationView + ?Sized>(&self, view: &V) -> Vec<Kept> {
        let mut out = Vec::with_capacity(crate::model::view::reserve_for(
            view.len().saturating_sub(self.start) + self.keep_system.len() + 2,
        ));
        out.extend(self.keep_system.clone().map(Kept::Message));
        out.extend(self.keep_compaction.map(Kept::Message));
        out.extend(self.keep_prompt.map(Kept::Message));
        if self.insert_marker {
            out.push(Kept::Marker {
                transcript: (self.start..view.len()).any(|i| view.is_transcript(i)),
            });
        }
        out.extend((self.start..view.len()).map(Kept::Message));
        out
    }
}

/// `truncateHeadForPTLRetry`: drops the oldest API rounds until their estimated tokens cover
/// the overflow's gap (20% of the rounds when no gap is known), always keeping one round.
/// A marker inserted by a previous retry is removed before counting. Returns `None` when
/// nothing can be dropped.
pub fn truncate_head_for_ptl_retry<V: ConversationView + ?Sized>(
    view: &V,
    overflow: Option<&ContextOverflow>,
) -> Result<Option<Truncation>> {
    truncate_head(view, overflow, false)
}

/// [`truncate_head_for_ptl_retry`], optionally keeping the latest user request: when its round
/// is dropped it stays at the head (instead of the marker), so the summarizer still sees the
/// current task in the user's words. The pipeline's summary request uses this.
pub fn truncate_head<V: ConversationView + ?Sized>(
    view: &V,
    overflow: Option<&ContextOverflow>,
    keep_latest_request: bool,
) -> Result<Option<Truncation>> {
    truncate_head_measured(view, overflow, keep_latest_request, &|r| {
        estimate_range(view, r)
    })
}

/// [`truncate_head`], the tokens of a range of messages given by `measure` (the caller's
/// tokenizer's count, say, for a gap an API reported in real tokens).
pub fn truncate_head_measured<V: ConversationView + ?Sized>(
    view: &V,
    overflow: Option<&ContextOverflow>,
    keep_latest_request: bool,
    measure: &dyn Fn(std::ops::Range<usize>) -> Result<u64>,
) -> Result<Option<Truncation>> {
    // Only what is sent counts: after the last compaction boundary, and without a marker a
    // previous retry put at the head.
    let mut from = active_start(view)?;
    // The system messages that open the context are the app's instructions, not history:
    // they stay first, never dropped (as every compaction keeps them).
    let system_start = from;
    from = crate::transforms::boundary::leading_system_from(view, from)?;
    let keep_system = system_start..from;
    // A message that begins with the API's compaction block stays first, never dropped.
    let keep_compaction = (from < view.len() && view.starts_context(from)).then_some(from);
    if keep_compaction.is_some() {
        from += 1;
    }
    if from < view.len() && view.content_equals(from, PTL_MARKER_TEXT) {
        from += 1;
    }
    let groups = group_by_api_turn(view, from)?;
    if groups.len() < 2 {
        return Ok(None);
    }
    let max_drop = groups.len() - 1;
    // The latest user request is never dropped (it is kept at the head if its round goes).
    let request = if keep_latest_request {
        latest_user_request(view, from)?
    } else {
        None
    };
    let request_tokens = match request {
        Some(p) => measure(p..p + 1)?,
        None => 0,
    };
    let dropped_of = |range: std::ops::Range<usize>| -> Result<u64> {
        let mut t = measure(range.clone())?;
        if request.is_some_and(|p| range.contains(&p)) {
            t = t.saturating_sub(request_tokens);
        }
        Ok(t)
    };
    let mut drop = 0;
    let mut dropped_tokens = 0;
    match overflow.and_then(|o| o.gap) {
        Some(gap) => {
            while drop < max_drop && (dropped_tokens < gap || drop == 0) {
                dropped_tokens += dropped_of(groups[drop].clone())?;
                drop += 1;
            }
        }
        None => {
            drop = ((groups.len() as f64 * FALLBACK_DROP_FRACTION).floor() as usize)
                .clamp(1, max_drop);
            dropped_tokens = dropped_of(groups[0].start..groups[drop].start)?;
        }
    }
    // A drop that takes nothing but the latest request drops nothing: the request is put
    // back at the head, and the conversation is the one that was refused. Drop further, or
    // when no other round is left, there is nothing to drop.
    let drops_only_request = |drop: usize| (from..groups[drop].start).all(|i| request == Some(i));
    while drop < max_drop && drops_only_request(drop) {
        dropped_tokens += dropped_of(groups[drop].clone())?;
        drop += 1;
    }
    if drops_only_request(drop) {
        return Ok(None);
    }
    let start = groups[drop].start;
    let mut insert_marker = false;
    for i in start..view.len() {
        if view.is_sidechain(i) {
            continue;
        }
        match view.kind(i)? {
            Kind::Assistant => {
                insert_marker = true;
                break;
            }
            Kind::User | Kind::Attachment => break,
            _ => {}
        }
    }
    // The latest user request survives: if the drop took it, it stays at the head.
    let keep_prompt = request.filter(|&p| p < start);
    if keep_prompt.is_some() {
        insert_marker = false;
    }
    Ok(Some(Truncation {
        start,
        keep_system,
        insert_marker,
        keep_prompt,
        keep_compaction,
        dropped_groups: drop,
        dropped_tokens,
    }))
}

/// Index of the latest user request from `from` on: a main-chain user message with text and
/// no tool results (not a marker of an earlier retry).
pub fn latest_user_request<V: ConversationView + ?Sized>(
    view: &V,
    from: usize,
) -> Result<Option<usize>> {
    use crate::model::view::{BlockKind, ContentInfo, Detail};
    for i in (from..view.len()).rev() {
        if view.is_sidechain(i) || view.kind(i)? != Kind::User {
            continue;
        }
        if view.content_equals(i, PTL_MARKER_TEXT) {
            continue;
        }
        let is_request = match view.content(i, Detail::Structure)? {
            ContentInfo::Text(n) => n > 0,
            ContentInfo::Blocks(bs) => {
                bs.iter().all(|b| b.kind != Some(BlockKind::ToolResult))
                    && bs
                        .iter()
                        .any(|b| b.kind == Some(BlockKind::Text) && b.text_units > 0)
            }
            _ => false,
        };
        if is_request {
            return Ok(Some(i));
        }
    }
    Ok(None)
}

/// The marker message, in the shape of the conversation (`transcript` lines get `type`,
/// `isMeta` and the given `uuid`).
pub fn ptl_marker_message(transcript: bool, uuid: Option<&str>) -> Message {
    if !transcript {
        return Message::api_user_text(PTL_MARKER_TEXT);
    }
    let mut m = Message {
        line_type: Some(Some("user".into())),
        message: Some(Some(crate::model::messages::ApiMessage {
            role: Some(Some(Role::User)),
            content: Some(Some(Content::Text(PTL_MARKER_TEXT.into()))),
            ..Default::default()
        })),
        is_meta: Some(Some(true)),
        ..Default::default()
    };
    if let Some(u) = uuid {
        m.uuid = Some(Some(u.to_string()));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::transforms::test_fixtures::ptc;

    /// A programmatic server tool call and its result in a later response are one round:
    /// truncation never keeps the result without its call.
    #[test]
    fn a_programmatic_server_call_and_its_later_result_are_one_round() {
        let mut v: Vec<Value> = (0..3).flat_map(|i| ptc(i, 200)).collect();
        v.push(json!({"role": "user", "content": "thanks"}));
        let m = Message::parse_all(Value::Array(v)).unwrap();
        let rounds = group_by_api_round(m.as_slice(), 0).unwrap();
        assert_eq!(rounds, vec![0..1, 1..5, 5..9, 9..13]);
        assert_eq!(group_by_api_turn(m.as_slice(), 0).unwrap(), rounds);
        for gap in [1, 250, 450] {
            let o = parse_context_overflow_error(
                &format!("prompt is too long: {} tokens > 1000 maximum", 1000 + gap),
                None,
            );
            let t = truncate_head_for_ptl_retry(m.as_slice(), o.as_ref())
                .unwrap()
                .unwrap();
            assert!(
                t.start % 4 == 1,
                "gap {gap}: kept from {} (not an exchange's call)",
                t.start
            );
        }
    }
    use serde_json::{json, Value};

    #[test]
    fn the_compaction_block_is_never_cut() {
        let mut v = vec![
            serde_json::json!({"role": "user", "content": "before the compaction"}),
            serde_json::json!({"role": "assistant", "content": [
                {"type": "compaction", "content": "summary", "encrypted_content": "e"}]}),
        ];
        for k in 0..6 {
            v.push(serde_json::json!({"role": "user", "content": format!("question {k} {}", "x".repeat(4000))}));
            v.push(serde_json::json!({"role": "assistant", "content": format!("answer {k}")}));
        }
        let m = Message::parse_all(serde_json::Value::Array(v)).unwrap();
        let t = truncate_head_for_ptl_retry(m.as_slice(), None)
            .unwrap()
            .unwrap();
        assert_eq!(t.keep_compaction, Some(1));
        let layout = t.layout(m.as_slice());
        assert_eq!(layout[0], Kept::Message(1));
        assert!(t.start > 2, "rounds after the block were dropped");
    }

    #[test]
    fn anthropic_forms() {
        let o = parse_context_overflow_error(
            "prompt is too long: 213462 tokens > 200000 maximum",
            Some(400),
        )
        .unwrap();
        assert_eq!(o.kind, OverflowKind::PromptTooLong);
        assert_eq!(
            (o.actual, o.limit, o.gap),
            (Some(213_462), Some(200_000), Some(13_462))
        );

        let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"input length and `max_tokens` exceed context limit: 188059 + 20000 > 200000, decrease input length or `max_tokens` and try again"}}"#;
        let o = parse_context_overflow_error(body, Some(400)).unwrap();
        assert_eq!(o.kind, OverflowKind::InputPlusMaxTokens);
        assert_eq!(
            (o.actual, o.limit, o.gap),
            (Some(208_059), Some(200_000), Some(8_059))
        );

        let o = parse_context_overflow_error("Request Entity Too Large", Some(413)).unwrap();
        assert_eq!(o.kind, OverflowKind::RequestTooLarge);
        assert_eq!(o.gap, None);
        let o = parse_context_overflow_error(
            r#"{"type":"error","error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}"#,
            None,
        )
        .unwrap();
        assert_eq!(o.kind, OverflowKind::RequestTooLarge);
    }

    #[test]
    fn openai_and_gemini_forms() {
        let o = parse_context_overflow_error("This model's maximum context length is 128000 tokens. However, your messages resulted in 130,512 tokens. Please reduce the length of the messages.", Some(400)).unwrap();
        assert_eq!(o.kind, OverflowKind::OpenAi);
        assert_eq!(
            (o.actual, o.limit, o.gap),
            (Some(130_512), Some(128_000), Some(2_512))
        );
        let o = parse_context_overflow_error("This model's maximum context length is 8192 tokens, however you requested 9000 tokens (8000 in your prompt; 1000 for the completion).", None).unwrap();
        assert_eq!((o.actual, o.limit), (Some(9000), Some(8192)));
        let o = parse_context_overflow_error(
            r#"{"error":{"code":"context_length_exceeded","message":"Your input exceeds the context window of this model."}}"#,
            Some(400),
        )
        .unwrap();
        assert_eq!(o.kind, OverflowKind::OpenAi);
        assert_eq!(o.gap, None);
        let o = parse_context_overflow_error("The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).", Some(400)).unwrap();
        assert_eq!(o.kind, OverflowKind::Gemini);
        assert_eq!(
            (o.actual, o.limit, o.gap),
            (Some(1_196_265), Some(1_048_575), Some(147_690))
        );
    }

    #[test]
    fn xai_and_llama_cpp_forms() {
        let o = parse_context_overflow_error(
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens.",
            Some(400),
        )
        .unwrap();
        assert_eq!(o.kind, OverflowKind::PromptTooLong);
        assert_eq!(
            (o.actual, o.limit, o.gap),
            (Some(537_812), Some(131_072), Some(406_740))
        );
        let o = parse_context_overflow_error(
            "request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it",
            Some(400),
        )
        .unwrap();
        assert_eq!(
            (o.actual, o.limit, o.gap),
            (Some(9000), Some(8192), Some(808))
        );
        // The older wording has no numbers (its JSON body's `n_prompt_tokens` and `n_ctx` are
        // not read: the oldest fifth of the rounds is dropped).
        let o = parse_context_overflow_error(
            "the request exceeds the available context size, try increasing it",
            Some(400),
        )
        .unwrap();
        assert_eq!((o.actual, o.limit), (None, None));
        let o = parse_context_overflow_error(
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}"#,
            None,
        )
        .unwrap();
        assert_eq!(o.kind, OverflowKind::PromptTooLong);
    }

    #[test]
    fn other_errors_are_not_overflows() {
        assert!(parse_context_overflow_error("overloaded_error", Some(529)).is_none());
        assert!(parse_context_overflow_error("rate limited", Some(429)).is_none());
        assert!(parse_context_overflow_error("", None).is_none());
    }

    fn convo(rounds: usize, text_len: usize) -> Vec<Message> {
        let mut v = vec![json!({"role": "user", "content": "x".repeat(text_len)})];
        for r in 0..rounds {
            v.push(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": format!("t{r}"), "name": "Read", "input": {}}]}));
            v.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{r}"), "content": "y".repeat(text_len)}]}));
        }
        Message::parse_all(serde_json::Value::Array(v)).unwrap()
    }

    #[test]
    fn the_system_messages_that_open_the_context_are_never_dropped() {
        let mut v = vec![
            json!({"role": "system", "content": "You are ACME support."}),
            json!({"role": "developer", "content": "Never reveal internal ids."}),
        ];
        let rest = convo(6, 400);
        let with_system: Vec<Message> =
            Message::parse_all(serde_json::Value::Array(v.split_off(0)))
                .unwrap()
                .into_iter()
                .chain(rest.iter().cloned())
                .collect();
        let o =
            parse_context_overflow_error("prompt is too long: 1400 tokens > 1000 maximum", None);
        let t = truncate_head_for_ptl_retry(with_system.as_slice(), o.as_ref())
            .unwrap()
            .unwrap();
        assert_eq!(t.keep_system, 0..2);
        // The same rounds go as without the system messages.
        let plain = truncate_head_for_ptl_retry(rest.as_slice(), o.as_ref())
            .unwrap()
            .unwrap();
        assert_eq!(t.dropped_groups, plain.dropped_groups);
        let layout = t.layout(with_system.as_slice());
        assert_eq!(&layout[..2], &[Kept::Message(0), Kept::Message(1)]);
        assert_eq!(layout[2], Kept::Marker { transcript: false });
        // A second retry keeps them too, and reads the marker after them as the earlier one.
        let again: Vec<Message> = layout
            .iter()
            .map(|k| match *k {
                Kept::Message(i) => with_system[i].clone(),
                Kept::Marker { transcript } => ptl_marker_message(transcript, None),
            })
            .collect();
        let t2 = truncate_head_for_ptl_retry(again.as_slice(), o.as_ref())
            .unwrap()
            .unwrap();
        assert_eq!(t2.keep_system, 0..2);
        let layout2 = t2.layout(again.as_slice());
        assert_eq!(
            layout2
                .iter()
                .filter(|k| matches!(k, Kept::Marker { .. }))
                .count(),
            1
        );
        assert!(
            t2.start > 3,
            "the earlier marker is not a round: {}",
            t2.start
        );
    }

    #[test]
    fn groups_follow_responses() {
        let m = convo(3, 40);
        let g = group_by_api_round(m.as_slice(), 0).unwrap();
        assert_eq!(g, vec![0..1, 1..3, 3..5, 5..7]);
        let split = Message::parse_all(json!([
            {"type": "user", "message": {"role": "user", "content": "go"}},
            {"type": "assistant", "message": {"role": "assistant", "id": "a", "content": []}},
            {"type": "user", "message": {"role": "user", "content": []}},
            {"type": "assistant", "message": {"role": "assistant", "id": "a", "content": []}},
            {"type": "assistant", "message": {"role": "assistant", "id": "b", "content": []}}
        ]))
        .unwrap();
        assert_eq!(
            group_by_api_round(split.as_slice(), 0).unwrap(),
            vec![0..1, 1..4, 4..5]
        );
        // Response b follows a with no user message between: the API merges them into one
        // turn, which truncation never splits.
        assert_eq!(
            group_by_api_turn(split.as_slice(), 0).unwrap(),
            vec![0..1, 1..5]
        );
    }

    #[test]
    fn drops_oldest_rounds_to_cover_gap() {
        let m = convo(5, 400); // 100 tokens per message
        let o =
            parse_context_overflow_error("prompt is too long: 1250 tokens > 1000 maximum", None);
        // SPEC §8 as is: the oldest rounds go, a marker heads an assistant-first remainder.
        let plain = truncate_head_for_ptl_retry(m.as_slice(), o.as_ref())
            .unwrap()
            .unwrap();
        assert_eq!(plain.dropped_groups, 3);
        assert!(plain.dropped_tokens >= 250);
        assert_eq!(plain.start, 5);
        assert!(plain.insert_marker && plain.keep_prompt.is_none());
        let t = truncate_head(m.as_slice(), o.as_ref(), true)
            .unwrap()
            .unwrap();
        // Round 0 is the user's request (100 tokens): it is kept, so it frees nothing; each
        // tool round frees ≈ 100 + the call → rounds 1–3 cover the 250.
        assert_eq!(t.dropped_groups, 4);
        assert!(t.dropped_tokens >= 250);
        assert_eq!(t.start, 7);
        assert_eq!(
            t.keep_prompt,
            Some(0),
            "the latest request stays at the head"
        );
        assert!(
            !t.insert_marker,
            "the kept request is the user message first"
        );
        // The layouts: the kept prompt then the rest; the marker then the rest.
        let kept: Vec<Kept> = std::iter::once(Kept::Message(0))
            .chain((7..m.len()).map(Kept::Message))
            .collect();
        assert_eq!(t.layout(m.as_slice()), kept);
        let marked = plain.layout(m.as_slice());
        assert_eq!(marked[0], Kept::Marker { transcript: false });
        assert_eq!(
            marked[1..],
            (5..m.len()).map(Kept::Message).collect::<Vec<_>>()[..]
        );
    }

    #[test]
    fn the_gap_is_covered_in_the_measures_tokens() {
        use crate::measure::tokens::TwoCharsAToken as Dense;
        let m = convo(5, 400); // 100 estimated tokens per message, 200 counted
        let o =
            parse_context_overflow_error("prompt is too long: 1400 tokens > 1000 maximum", None);
        let plain = truncate_head_for_ptl_retry(&m[..], o.as_ref())
            .unwrap()
            .unwrap();
        let counted = crate::measure::tokens::CountedMessages::new(&m, &Dense);
        let dense =
            truncate_head_measured(&m[..], o.as_ref(), false, &|r| estimate_range(&counted, r))
                .unwrap()
                .unwrap();
        assert!(dense.dropped_groups < plain.dropped_groups);
        assert!(dense.dropped_tokens >= 400, "{}", dense.dropped_tokens);
    }

    #[test]
    fn without_gap_drops_twenty_percent_and_keeps_one() {
        let m = convo(9, 40); // 10 groups
        let t = truncate_head_for_ptl_retry(m.as_slice(), None)
            .unwrap()
            .unwrap();
        assert_eq!(t.dropped_groups, 2);
        let huge =
            parse_context_overflow_error("prompt is too long: 999999 tokens > 1 maximum", None);
        let t = truncate_head_for_ptl_retry(m.as_slice(), huge.as_ref())
            .unwrap()
            .unwrap();
        assert_eq!(t.dropped_groups, 9, "always keeps one group");
        let one = convo(0, 40);
        assert_eq!(
            truncate_head_for_ptl_retry(one.as_slice(), None).unwrap(),
            None
        );
    }

    /// Keeping the latest request, a drop that would take nothing but the request (which is
    /// put back at the head) is no drop: it drops the next round too, and when none is left
    /// there is nothing to drop (the conversation would be sent again as refused).
    #[test]
    fn a_drop_of_the_kept_request_alone_is_no_drop() {
        let o = parse_context_overflow_error(
            "prompt is too long: 250000 tokens > 200000 maximum",
            None,
        );
        // The layout a first retry leaves: the request, then the one round always kept.
        let last = Message::parse_all(json!([
            {"role": "user", "content": "question 39"},
            {"role": "assistant", "content": "answer 39"}
        ]))
        .unwrap();
        assert_eq!(
            truncate_head(last.as_slice(), o.as_ref(), true).unwrap(),
            None
        );
        assert_eq!(truncate_head(last.as_slice(), None, true).unwrap(), None);
        // The request alone in the first round, two rounds after it: the 20% drop without a
        // gap takes the request's round, then the next one.
        let m = Message::parse_all(json!([
            {"role": "user", "content": "do it"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "file"}]},
            {"role": "assistant", "content": "done"}
        ]))
        .unwrap();
        let t = truncate_head(m.as_slice(), None, true).unwrap().unwrap();
        assert_eq!(t.keep_prompt, Some(0));
        assert_eq!(t.start, 3);
        assert_eq!(
            t.layout(m.as_slice()),
            vec![Kept::Message(0), Kept::Message(3)]
        );
        // Without keeping the request, the first round is dropped as before.
        let plain = truncate_head(m.as_slice(), None, false).unwrap().unwrap();
        assert_eq!(plain.start, 1);
    }

    #[test]
    fn previous_marker_is_removed_before_counting() {
        let mut m = convo(4, 40);
        m.insert(0, ptl_marker_message(false, None));
        let g = group_by_api_round(m.as_slice(), 1).unwrap();
        let t = truncate_head_for_ptl_retry(m.as_slice(), None)
            .unwrap()
            .unwrap();
        assert_eq!(t.start, g[1].start, "marker not counted as a round");
    }
}
