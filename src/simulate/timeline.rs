//! A recorded session as the simulator replays it: the conversation's items (the lines sent
//! to the model, each with its size in tokens) and the API calls between them (when, what
//! they sent, what the provider billed).
//!
//! Sizes come from the recorded usage wherever it exists: between two calls of the same
//! conversation, the recorded request grew by exactly the tokens of what was added in
//! between (the previous response and the user lines after it), so those lines share that
//! growth in proportion to their estimated tokens (SPEC §3's estimate). Lines no usage
//! measures (before the first call, in sessions without usage) get the estimate times the
//! session's measured tokens-per-estimate ratio. What the first request held beyond its
//! lines is the hidden prefix: the system prompt, the tool definitions and the context the
//! agent adds without writing it to the transcript.

use crate::measure::tokens::message_facts;
use crate::model::error::Result;
use crate::model::messages::{Block, Content, Kind, Message};
use crate::model::view::UsageCounts;
use crate::simulate::cache::Ttl;
use crate::transforms::microcompact::parse_timestamp_ms;

/// Time assumed between two calls when a line has no usable timestamp, in milliseconds.
pub const DEFAULT_CALL_GAP_MS: f64 = 10_000.0;

/// A recorded read at least this much shorter than the previous request counts as a fall
/// back to an earlier cached prefix (see [`Timeline::hidden_tokens`]).
pub const FALLBACK_MARGIN_TOKENS: u64 = 256;

/// What a line of the conversation is, for the policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    /// A message the user typed (text or media, no tool result).
    Prompt,
    /// A user line answering tool calls.
    ToolResults,
    /// A line of an assistant response.
    Assistant,
    /// Other context the agent sent (meta lines, attachments).
    Context,
    /// The recorded compaction's own lines (its summary and what came with it): replayed
    /// only by the recorded policy.
    RecordedCompaction,
}

/// One line sent to the model.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// Index of the line in the transcript.
    pub line: usize,
    /// What it is.
    pub kind: ItemKind,
    /// Estimated tokens (SPEC §3).
    pub estimate: u64,
    /// Tokens, calibrated on the recorded usage where it exists.
    pub tokens: u64,
    /// Names of the tools whose results the line holds (tool-result lines).
    pub tools: Vec<String>,
    /// File path of a `Read` result the line holds (for post-compaction restoration).
    pub read_path: Option<String>,
    /// Files the tool calls of an assistant line work on: `(tool, path)` for each call whose
    /// input names one (`file_path`, `notebook_path`: Read, Edit, Write, MultiEdit,
    /// NotebookEdit…), in order. A file a policy did not restore after a compaction is
    /// read again before such a call (see [`crate::simulate::replay`]).
    pub file_uses: Vec<(String, String)>,
    /// The call this assistant line belongs to.
    pub call: Option<usize>,
}

/// What the provider billed for a recorded call.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Recorded {
    /// The usage, counted once per response.
    pub usage: UsageCounts,
    /// The time-to-live its cache writes were made with.
    pub ttl: Ttl,
}

/// One API call of the session.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// When it was made (ms since the epoch; from the first line of its response).
    pub time_ms: f64,
    /// How many items came before its response (its request holds items before this).
    pub request_end: usize,
    /// Its recorded usage, when the transcript has one.
    pub recorded: Option<Recorded>,
    /// Output tokens of its response (calibrated like the items).
    pub output_tokens: u64,
    /// The user typed a message since the previous call.
    pub prompt: bool,
    /// Number of recorded compactions before it.
    pub chain: usize,
    /// First item of its recorded conversation (after the last recorded compaction).
    pub chain_start: usize,
}

impl Call {
    /// Tokens its recorded request sent (input + cache writes + cache reads).
    pub fn recorded_input(&self) -> Option<u64> {
        self.recorded.map(|r| r.usage.input_total())
    }
}

/// A recorded session, ready to replay.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    /// The conversation's lines in order.
    pub items: Vec<Item>,
    /// The API calls in order.
    pub calls: Vec<Call>,
    /// Tokens every request sends before the conversation (system prompt, tools, hidden
    /// context).
    pub hidden_tokens: u64,
    /// Tokens the first recorded request read from the cache (a prefix other sessions had
    /// written: the session started with it warm).
    pub warm_tokens: u64,
    /// Measured tokens per estimated token (1 without usage).
    pub ratio: f64,
    /// The model of the session (first assistant line naming one).
    pub model: Option<String>,
    /// Indices of the transcript lines of each recorded compaction boundary.
    pub boundaries: Vec<usize>,
}

fn ttl_of(m: &Message) -> Ttl {
    let one_hour = m
        .usage_raw()
        .and_then(|u| u.extra.get("cache_creation").cloned())
        .and_then(|c| c.get("ephemeral_1h_input_tokens").and_then(|v| v.as_f64()))
        .is_some_and(|v| v > 0.0);
    if one_hour {
        Ttl::OneHour
    } else {
        Ttl::FiveMinutes
    }
}

fn blocks(m: &Message) -> &[Block] {
    match m.content() {
        Some(Content::Blocks(b)) => b,
        _ => &[],
    }
}

fn is_prompt(m: &Message) -> bool {
    if m.kind() != Kind::User || m.is_compact_summary() || m.is_meta == Some(Some(true)) {
        return false;
    }
    match m.content() {
        Some(Content::Text(t)) => !t.is_empty(),
        Some(Content::Blocks(b)) => {
            !b.is_empty() && !b.iter().any(|x| matches!(x, Block::ToolResult(_)))
        }
        None => false,
    }
}

fn model_of(m: &Message) -> Option<String> {
    m.api_message()
        .and_then(|a| a.extra.get("model"))
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

/// The file a tool call's input names (`file_path`, or a notebook's `notebook_path`).
fn file_path_of(input: Option<&serde_json::Value>) -> Option<String> {
    let input = input?;
    ["file_path", "notebook_path"]
        .iter()
        .find_map(|k| input.get(*k).and_then(|p| p.as_str()))
        .filter(|p| !p.is_empty())
        .map(str::to_string)
}

/// Reads a transcript (or API-shape messages) into a [`Timeline`].
pub fn build_timeline(messages: &[Message]) -> Result<Timeline> {
    let convo: Vec<usize> = (0..messages.len())
        .filter(|&i| matches!(messages[i].kind(), Kind::User | Kind::Assistant))
        .collect();
    // A sub-agent's own file: every line is a sidechain line; read it as its own conversation.
    let own = !convo.is_empty() && convo.iter().all(|&i| messages[i].is_sidechain());

    let mut items: Vec<Item> = Vec::new();
    let mut calls: Vec<Call> = Vec::new();
    let mut tool_names: std::collections::HashMap<String, (String, Option<String>)> =
        Default::default();
    let mut seen_ids: std::collections::HashSet<String> = Default::default();
    let mut call_of_id: std::collections::HashMap<String, usize> = Default::default();
    let mut boundaries = Vec::new();
    let mut chain = 0usize;
    let mut chain_start = 0usize;
    let mut after_boundary = false;
    let mut prompt_since = false;
    let mut last_time: Option<f64> = None;
    let mut model = None;

    for (i, m) in messages.iter().enumerate() {
        let facts = message_facts(messages, i)?;
        if facts.sidechain && !own {
            continue;
        }
        if let Some(t) = m.timestamp().and_then(parse_timestamp_ms) {
            last_time = Some(t);
        }
        if facts.boundary {
            boundaries.push(i);
            chain += 1;
            chain_start = items.len();
            after_boundary = true;
            continue;
        }
        let kind = m.kind();
        let sent = matches!(kind, Kind::User | Kind::Assistant | Kind::Attachment)
            || (kind == Kind::System && !m.is_transcript());
        if !sent {
            continue;
        }
        let mut item = Item {
            line: i,
            kind: ItemKind::Context,
            estimate: facts.tokens,
            tokens: facts.tokens,
            tools: Vec::new(),
            read_path: None,
            file_uses: Vec::new(),
            call: None,
        };
        if kind == Kind::Assistant {
            item.kind = ItemKind::Assistant;
            if model.is_none() {
                model = model_of(m).filter(|s| !s.starts_with('<'));
            }
            for b in blocks(m) {
                if let Block::ToolUse(t) = b {
                    if let Some(p) = file_path_of(t.input.as_ref().and_then(|v| v.as_ref())) {
                        item.file_uses.push((t.name.clone(), p));
                    }
                    let path = (t.name == "Read")
                        .then(|| {
                            t.input
                                .as_ref()
                                .and_then(|v| v.as_ref())
                                .and_then(|v| v.get("file_path"))
                                .and_then(|p| p.as_str())
                                .map(str::to_string)
                        })
                        .flatten();
                    tool_names.insert(t.id.clone(), (t.name.clone(), path));
                }
            }
            let synthetic = model_of(m).is_some_and(|s| s.starts_with('<'));
            let id = facts.id.clone().unwrap_or_else(|| format!("line-{i}"));
            // A response with usage 0 is not a model call (Claude Code's synthetic lines).
            let is_call = !synthetic && facts.usage.is_none_or(|u| u.input_total() > 0);
            if let Some(&c) = call_of_id.get(&id) {
                item.call = Some(c);
            } else if is_call && seen_ids.insert(id.clone()) {
                let time_ms = match (m.timestamp().and_then(parse_timestamp_ms), calls.last()) {
                    (Some(t), _) => t,
                    (None, Some(prev)) => prev.time_ms + DEFAULT_CALL_GAP_MS,
                    (None, None) => last_time.unwrap_or(0.0),
                };
                let recorded = facts.usage.map(|usage| Recorded {
                    usage,
                    ttl: ttl_of(m),
                });
                calls.push(Call {
                    time_ms,
                    request_end: items.len(),
                    recorded,
                    output_tokens: 0,
                    prompt: prompt_since,
                    chain,
                    chain_start,
                });
                call_of_id.insert(id, calls.len() - 1);
                item.call = Some(calls.len() - 1);
                prompt_since = false;
                after_boundary = false;
            }
        } else if m.is_compact_summary() || (after_boundary && !is_prompt(m)) {
            item.kind = ItemKind::RecordedCompaction;
        } else if is_prompt(m) {
            item.kind = ItemKind::Prompt;
            prompt_since = true;
        } else if blocks(m).iter().any(|b| matches!(b, Block::ToolResult(_))) {
            item.kind = ItemKind::ToolResults;
            for b in blocks(m) {
                if let Block::ToolResult(r) = b {
                    let (name, path) = tool_names
                        .get(&r.tool_use_id)
                        .cloned()
                        .unwrap_or_else(|| (String::new(), None));
                    if item.read_path.is_none() {
                        item.read_path = path;
                    }
                    item.tools.push(name);
                }
            }
        }
        items.push(item);
    }
    let mut t = Timeline {
        items,
        calls,
        hidden_tokens: 0,
        warm_tokens: 0,
        ratio: 1.0,
        model,
        boundaries,
    };
    calibrate(&mut t);
    Ok(t)
}

/// Gives the items their sizes from the recorded usage (see the module's documentation).
fn calibrate(t: &mut Timeline) {
    // Groups of items between two calls of the same recorded conversation, with the
    // recorded growth.
    let mut groups: Vec<(std::ops::Range<usize>, u64)> = Vec::new();
    for k in 1..t.calls.len() {
        let (a, b) = (&t.calls[k - 1], &t.calls[k]);
        if a.chain != b.chain {
            continue;
        }
        if let (Some(x), Some(y)) = (a.recorded_input(), b.recorded_input()) {
            if y > x {
                groups.push((a.request_end..b.request_end, y - x));
            }
        }
    }
    let (mut sum_d, mut sum_e) = (0u64, 0u64);
    for (r, d) in &groups {
        let e: u64 = t.items[r.clone()].iter().map(|i| i.estimate).sum();
        if e > 0 {
            sum_d += d;
            sum_e += e;
        }
    }
    t.ratio = if sum_e > 0 {
        (sum_d as f64 / sum_e as f64).clamp(0.2, 5.0)
    } else {
        1.0
    };
    let ratio = t.ratio;
    for it in &mut t.items {
        it.tokens = (it.estimate as f64 * ratio).round() as u64;
    }
    for (r, d) in &groups {
        let e: u64 = t.items[r.clone()].iter().map(|i| i.estimate).sum();
        if e == 0 {
            continue;
        }
        let mut given = 0u64;
        let last = r.end - 1;
        for j in r.clone() {
            let share = if j == last {
                d - given
            } else {
                ((*d as f64) * t.items[j].estimate as f64 / e as f64).floor() as u64
            };
            given += share;
            t.items[j].tokens = share;
        }
    }
    // The hidden prefix: what the first recorded request held beyond its lines, or, when
    // the agent's requests fell back to a shorter cached prefix (after a compaction, or when
    // the agent changed its prompt), the longest such prefix: that is where the stable part
    // (system prompt and tools) ends.
    if let Some(first) = t.calls.iter().position(|c| c.recorded.is_some()) {
        let c = &t.calls[first];
        let range = c.chain_start..c.request_end;
        let lines: u64 = t.items[range.clone()].iter().map(|i| i.tokens).sum();
        let input = c.recorded_input().unwrap_or(0);
        let mut hidden = input.saturating_sub(lines);
        t.warm_tokens = c
            .recorded
            .map(|r| r.usage.cache_read_input_tokens)
            .unwrap_or(0);
        let fallback = (1..t.calls.len())
            .filter_map(|k| {
                let prev = t.calls[k - 1].recorded_input()?;
                let read = t.calls[k].recorded?.usage.cache_read_input_tokens;
                (read > t.warm_tokens && read + FALLBACK_MARGIN_TOKENS < prev && read <= hidden)
                    .then_some(read)
            })
            .max();
        if let Some(f) = fallback {
            // The first request's lines carry what it held beyond that prefix.
            let extra = hidden - f;
            hidden = f;
            let est: u64 = t.items[range.clone()].iter().map(|i| i.tokens).sum();
            if let Some(last) = range.clone().last() {
                let mut given = 0u64;
                for j in range.clone() {
                    let share = if j == last {
                        extra - given
                    } else if est > 0 {
                        ((extra as f64) * t.items[j].tokens as f64 / est as f64).floor() as u64
                    } else {
                        0
                    };
                    given += share;
                    t.items[j].tokens += share;
                }
            }
        }
        t.hidden_tokens = hidden;
    }
    // After a recorded compaction, its own lines carry what the first request after it held
    // beyond the hidden prefix and the conversation's lines (restored files and the like).
    for k in 0..t.calls.len() {
        let c = &t.calls[k];
        let first_of_chain = k == 0 || t.calls[k - 1].chain != c.chain;
        if c.chain == 0 || !first_of_chain {
            continue;
        }
        let Some(input) = c.recorded_input() else {
            continue;
        };
        let range = c.chain_start..c.request_end;
        let lines: u64 = t.items[range.clone()].iter().map(|i| i.tokens).sum();
        let extra = input.saturating_sub(lines + t.hidden_tokens);
        if let Some(j) = range
            .clone()
            .find(|&j| t.items[j].kind == ItemKind::RecordedCompaction)
        {
            t.items[j].tokens += extra;
        }
    }
    // Output of each call: its response lines.
    let mut out = vec![0u64; t.calls.len()];
    for it in &t.items {
        if let Some(c) = it.call {
            out[c] += it.tokens;
        }
    }
    for (k, c) in t.calls.iter_mut().enumerate() {
        let recorded = c.recorded.map_or(0, |r| r.usage.output_tokens);
        c.output_tokens = out[k].max(recorded);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn line(v: serde_json::Value) -> Message {
        Message::from_value(v, "test").unwrap()
    }

    fn assistant(id: &str, ts: &str, text: &str, usage: [u64; 3]) -> Message {
        line(json!({"type": "assistant", "uuid": id, "timestamp": ts,
            "message": {"role": "assistant", "id": id, "model": "claude-opus-4-6",
                "content": [{"type": "text", "text": text}],
                "usage": {"input_tokens": usage[0], "cache_creation_input_tokens": usage[1],
                          "cache_read_input_tokens": usage[2], "output_tokens": 1}}}))
    }

    fn user(text: &str) -> Message {
        line(json!({"type": "user", "message": {"role": "user", "content": text}}))
    }

    #[test]
    fn growth_between_calls_is_shared_by_the_lines_added() {
        let msgs = vec![
            user(&"a".repeat(400)),
            assistant(
                "m1",
                "2026-01-01T00:00:00Z",
                &"b".repeat(400),
                [0, 1000, 5000],
            ),
            user(&"c".repeat(1200)),
            assistant("m2", "2026-01-01T00:00:10Z", "d", [0, 800, 6000]),
        ];
        let t = build_timeline(&msgs).unwrap();
        assert_eq!(t.calls.len(), 2);
        assert_eq!(t.calls[1].request_end, 3);
        // 6,800 − 6,000 = 800 tokens for an answer of 100 estimated and a prompt of 300.
        assert_eq!(t.items[1].tokens + t.items[2].tokens, 800);
        assert_eq!(t.items[1].tokens, 200);
        assert_eq!(t.ratio, 2.0);
        // First request: 6,000 tokens, its one line 100 × 2: the rest is hidden.
        assert_eq!(t.hidden_tokens, 6000 - 200);
        assert_eq!(t.warm_tokens, 5000);
        assert!(t.calls[0].prompt && t.calls[1].prompt);
    }

    #[test]
    fn the_files_each_tool_call_works_on_are_kept() {
        let call = line(
            json!({"type": "assistant", "timestamp": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "id": "m1", "model": "claude-opus-4-6", "content": [
                {"type": "tool_use", "id": "a", "name": "Edit", "input": {"file_path": "/x.rs", "old_string": "1"}},
                {"type": "tool_use", "id": "b", "name": "NotebookEdit", "input": {"notebook_path": "/n.ipynb"}},
                {"type": "tool_use", "id": "c", "name": "Grep", "input": {"path": "/src", "pattern": "x"}},
                {"type": "tool_use", "id": "d", "name": "Read", "input": {"file_path": ""}}]}}),
        );
        let t = build_timeline(&[user("go"), call]).unwrap();
        assert_eq!(
            t.items[1].file_uses,
            vec![
                ("Edit".to_string(), "/x.rs".to_string()),
                ("NotebookEdit".to_string(), "/n.ipynb".to_string())
            ]
        );
        assert!(t.items[0].file_uses.is_empty());
    }

    #[test]
    fn one_response_over_several_lines_is_one_call() {
        let mut second = assistant("m1", "2026-01-01T00:00:01Z", "more", [0, 1000, 5000]);
        second.uuid = Some(Some("other".into()));
        let msgs = vec![
            user("hi"),
            assistant("m1", "2026-01-01T00:00:00Z", "x", [0, 1000, 5000]),
            second,
        ];
        let t = build_timeline(&msgs).unwrap();
        assert_eq!(t.calls.len(), 1);
        assert_eq!(t.items[2].call, Some(0));
    }
}
