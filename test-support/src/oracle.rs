//! One oracle of the Messages API rules (SPEC §2), computed from the JSON of each message and
//! written independently of the library (it never calls `validate_for_api`).
//!
//! The API view of a conversation: lines after the last main-chain `compact_boundary`,
//! sub-agent (sidechain) and non-API lines left out, attachment lines sent as user text, the
//! lines of one response (same `message.id`, possibly interleaved with tool_result lines)
//! merged into one assistant message, consecutive messages of one role merged (as the API
//! does). [`check_api`] checks its invariants, [`check_thinking`] the thinking rule of a
//! transformation's output.

use std::collections::{HashMap, HashSet};

use context_compaction::model::view::Edit;
use serde_json::{json, Value};

/// One message of the API view: its role, the response id of its last assistant line, its
/// blocks and the indices of the lines it was built from.
#[derive(Clone, Debug)]
pub struct Sent {
    /// `true`: a user message.
    pub user: bool,
    /// `message.id` of the (last) response merged into it, for assistant messages.
    pub id: Option<String>,
    /// The blocks sent (string content as one text block).
    pub blocks: Vec<Value>,
    /// The indices of the lines merged into this message.
    pub lines: Vec<usize>,
}

/// The `type` of a block (`""` when missing).
pub fn block_type(b: &Value) -> &str {
    b.get("type").and_then(Value::as_str).unwrap_or("")
}

/// Whether a line is a sub-agent (sidechain) line.
pub fn is_sidechain(v: &Value) -> bool {
    v.get("isSidechain") == Some(&Value::Bool(true))
}

/// Whether a line is a main-chain `compact_boundary`.
pub fn is_boundary(v: &Value) -> bool {
    !is_sidechain(v)
        && v.get("type").and_then(Value::as_str) == Some("system")
        && v.get("subtype").and_then(Value::as_str) == Some("compact_boundary")
}

/// Index of the first line after the last main-chain compact boundary (0 without one).
pub fn view_start(vals: &[Value]) -> usize {
    vals.iter().rposition(is_boundary).map_or(0, |b| b + 1)
}

/// The content of a line, wherever its shape keeps it (`message.content` for transcript
/// lines, `content` for API messages).
pub fn content_of(v: &Value) -> &Value {
    if v.get("type").is_some() {
        &v["message"]["content"]
    } else {
        &v["content"]
    }
}

/// [`content_of`], mutably.
pub fn content_of_mut(v: &mut Value) -> &mut Value {
    if v.get("type").is_some() {
        &mut v["message"]["content"]
    } else {
        &mut v["content"]
    }
}

/// The blocks of a content value: a non-empty string is one text block; an empty string or
/// anything that is neither string nor array, no block.
pub fn blocks_of(content: &Value) -> Vec<Value> {
    match content {
        Value::String(s) if s.is_empty() => Vec::new(),
        Value::String(s) => vec![json!({"type": "text", "text": s})],
        Value::Array(a) => a.clone(),
        _ => Vec::new(),
    }
}

/// `(user?, blocks, response id)` of a line that is sent to the model; `None` for lines the
/// API never sees (sidechain, system, progress, snapshots, unknown types…).
pub fn sent_line(v: &Value) -> Option<(bool, Vec<Value>, Option<String>)> {
    if is_sidechain(v) {
        return None;
    }
    match v.get("type").and_then(Value::as_str) {
        Some("user") => Some((true, blocks_of(&v["message"]["content"]), None)),
        Some("assistant") => Some((
            false,
            blocks_of(&v["message"]["content"]),
            v["message"]["id"].as_str().map(str::to_string),
        )),
        Some("attachment") => Some((
            true,
            vec![json!({"type": "text", "text": v["attachment"].to_string()})],
            None,
        )),
        Some(_) => None,
        None => match v.get("role").and_then(Value::as_str) {
            Some("user") => Some((true, blocks_of(&v["content"]), None)),
            Some("assistant") => Some((false, blocks_of(&v["content"]), None)),
            _ => None,
        },
    }
}

/// The conversation as the API receives it (see the module documentation). Fails when a
/// line is sent with empty content.
pub fn sent_view(vals: &[Value]) -> Result<Vec<Sent>, String> {
    let mut out: Vec<Sent> = Vec::new();
    for (i, v) in vals.iter().enumerate().skip(view_start(vals)) {
        let Some((user, blocks, id)) = sent_line(v) else {
            continue;
        };
        if blocks.is_empty() {
            return Err(format!(
                "line {i} is sent with empty content: {}",
                content_of(v)
            ));
        }
        if !user && id.is_some() {
            if let Some(p) = out.iter().rposition(|m| !m.user) {
                if out[p].id == id && out.len() - p <= 2 {
                    out[p].blocks.extend(blocks);
                    out[p].lines.push(i);
                    continue;
                }
            }
        }
        match out.last_mut() {
            Some(last) if last.user == user => {
                last.blocks.extend(blocks);
                last.lines.push(i);
                if !user {
                    last.id = id;
                }
            }
            _ => out.push(Sent {
                user,
                id,
                blocks,
                lines: vec![i],
            }),
        }
    }
    Ok(out)
}

fn is_server_result(b: &Value) -> bool {
    let t = block_type(b);
    t != "tool_result" && t.ends_with("_tool_result")
}

/// Every invariant the Messages API enforces on what `vals` sends: something is sent, a user
/// message first, no empty content or text block, each tool_use id unique, in an assistant
/// message and answered in the very next message, each tool_result right after its tool_use
/// and only once per message, server tool calls in assistant messages and answered in their
/// own message, each server tool result after its server_tool_use.
pub fn check_api(vals: &[Value]) -> Result<(), String> {
    let view = sent_view(vals)?;
    let Some(first) = view.first() else {
        return Err("nothing is sent".into());
    };
    if !first.user {
        return Err(format!(
            "the first message sent is an assistant message (lines {:?})",
            first.lines
        ));
    }
    let mut all_uses = HashSet::new();
    for (k, m) in view.iter().enumerate() {
        let mut server: Vec<String> = Vec::new();
        let mut results_here: HashMap<String, usize> = HashMap::new();
        for b in &m.blocks {
            let t = block_type(b);
            if t == "text" && b["text"].as_str().is_none_or(str::is_empty) {
                return Err(format!(
                    "empty text block in message {k} (lines {:?})",
                    m.lines
                ));
            }
            if t == "tool_use" {
                let id = b["id"].as_str().unwrap_or("").to_string();
                if m.user {
                    return Err(format!("tool_use {id} sent in a user message"));
                }
                if !all_uses.insert(id.clone()) {
                    return Err(format!("tool_use id {id} appears twice"));
                }
                let answered = view.get(k + 1).is_some_and(|n| {
                    n.user
                        && n.blocks.iter().any(|r| {
                            block_type(r) == "tool_result" && r["tool_use_id"].as_str() == Some(&id)
                        })
                });
                if !answered {
                    return Err(format!(
                        "tool_use {id} (message {k}, lines {:?}) is not answered in the next message",
                        m.lines
                    ));
                }
            }
            if t == "tool_result" {
                let id = b["tool_use_id"].as_str().unwrap_or("").to_string();
                *results_here.entry(id.clone()).or_default() += 1;
                let follows = m.user
                    && k > 0
                    && view[k - 1]
                        .blocks
                        .iter()
                        .any(|u| block_type(u) == "tool_use" && u["id"].as_str() == Some(&id));
                if !follows {
                    return Err(format!(
                        "tool_result {id} (message {k}, lines {:?}) does not follow its tool_use",
                        m.lines
                    ));
                }
            }
            if t == "server_tool_use" {
                if m.user {
                    return Err("server_tool_use in a user message".into());
                }
                server.push(b["id"].as_str().unwrap_or("").to_string());
            }
            if is_server_result(b) {
                let id = b["tool_use_id"].as_str().unwrap_or("");
                if !server.iter().any(|s| s == id) {
                    return Err(format!("{t} {id} does not follow its server_tool_use"));
                }
            }
        }
        if let Some((id, _)) = results_here.iter().find(|(_, n)| **n > 1) {
            return Err(format!("tool_result {id} answered twice in message {k}"));
        }
        for s in &server {
            let answered = m
                .blocks
                .iter()
                .any(|b| is_server_result(b) && b["tool_use_id"].as_str() == Some(s));
            if !answered {
                return Err(format!("server_tool_use {s} has no result in its message"));
            }
        }
    }
    Ok(())
}

/// SPEC §2 / failure mode 8: thinking is kept byte-identical or dropped with its whole
/// response. Every sent assistant response of `out` that holds thinking is, line for line,
/// a response of `input` (transcripts: all lines of that `message.id`; API shape: the whole
/// message), and no thinking block appears in a user message. Compared as JSON values
/// (strings exactly, object keys in any order).
pub fn check_thinking(input: &[Value], out: &[Value]) -> Result<(), String> {
    let has_thinking = |v: &Value| {
        content_of(v).as_array().is_some_and(|a| {
            a.iter()
                .any(|b| matches!(block_type(b), "thinking" | "redacted_thinking"))
        })
    };
    let lines_of = |vals: &[Value], id: &str| -> Vec<Value> {
        vals.iter()
            .skip(view_start(vals))
            .filter(|v| !is_sidechain(v) && v["type"] == "assistant" && v["message"]["id"] == id)
            .map(|v| v["message"].clone())
            .collect()
    };
    for (i, v) in out.iter().enumerate().skip(view_start(out)) {
        let Some((user, _, id)) = sent_line(v) else {
            continue;
        };
        if !has_thinking(v) {
            continue;
        }
        if user {
            return Err(format!("line {i}: a thinking block in a user message"));
        }
        match id {
            Some(id) => {
                let (a, b) = (lines_of(input, &id), lines_of(out, &id));
                if a != b {
                    return Err(format!(
                        "response {id}: its lines were edited or split ({} in, {} out)",
                        a.len(),
                        b.len()
                    ));
                }
            }
            None if !input.contains(v) => {
                return Err(format!(
                    "line {i}: an assistant message with thinking was edited"
                ));
            }
            None => {}
        }
    }
    Ok(())
}

/// Every thinking / redacted_thinking block of the conversation, serialized, in order.
pub fn thinking_blocks(vals: &[Value]) -> Vec<String> {
    vals.iter()
        .flat_map(|v| content_of(v).as_array().cloned().unwrap_or_default())
        .filter(|b| matches!(block_type(b), "thinking" | "redacted_thinking"))
        .map(|b| b.to_string())
        .collect()
}

/// The library's [`Edit`]s applied to JSON, independently of the library.
pub fn apply_edits_json(vals: &[Value], edits: &[Edit]) -> Vec<Value> {
    let mut out = vals.to_vec();
    for e in edits {
        match e {
            Edit::ReplaceWithText {
                message,
                block,
                nested,
                text,
            } => {
                let b = &mut content_of_mut(&mut out[*message])[*block];
                let target = match nested {
                    None => b,
                    Some(n) => &mut b["content"][*n],
                };
                *target = json!({"type": "text", "text": text});
            }
            Edit::SetToolResultContent {
                message,
                block,
                text,
            } => {
                content_of_mut(&mut out[*message])[*block]["content"] = json!(text);
            }
        }
    }
    out
}
