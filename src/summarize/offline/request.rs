//! Reading a summary request back into messages: the offline summarizer receives the same
//! Messages API request body a model would ([`crate::summarize::summary::build_summary_request`])
//! and rebuilds the conversation from its rendered text ([`conversation_from_request`]).

use serde_json::{json, Value};

use crate::model::messages::{Block, Content, Message, ToolResultContent};
use crate::summarize::summary::{
    CUSTOM_INSTRUCTIONS_HEADER, EARLIER_SUMMARY_MARKER, META_TEXT_MARKER, SUMMARY_INSTRUCTION,
    SYSTEM_TEXT_MARKER,
};
use crate::transforms::ptl::PTL_MARKER_TEXT;

/// The conversation carried by a summary request: the messages rebuilt from the rendered
/// text, and the custom instructions found after the summary instruction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestConversation {
    /// The conversation, as API-shape messages (attachments as attachment lines).
    pub messages: Vec<Message>,
    /// Custom instructions of the request.
    pub instructions: Vec<String>,
}

/// Parses `[tool call NAME (ID): INPUT]` (the input as JSON, or a free-form input's text).
fn parse_tool_call(text: &str) -> Option<Block> {
    let rest = text.strip_prefix("[tool call ")?;
    let (name, rest) = rest.split_once(" (")?;
    let (id, rest) = rest.split_once("): ")?;
    let raw = rest.strip_suffix(']').unwrap_or(rest);
    // JSON, JSON cut in the middle, or a custom tool's free-form input written as it is.
    let input = serde_json::from_str::<Value>(raw).unwrap_or_else(|_| {
        if raw.trim_start().starts_with('{') {
            salvage_fields(raw)
        } else {
            Value::String(raw.to_string())
        }
    });
    Some(Block::ToolUse(crate::model::messages::ToolUseBlock {
        id: id.to_string(),
        name: name.to_string(),
        input: Some(Some(input)),
        extra: Default::default(),
    }))
}

/// The string fields that can still be read from JSON text that was cut in the middle.
fn salvage_fields(raw: &str) -> Value {
    let mut out = serde_json::Map::new();
    for key in [
        "file_path",
        "notebook_path",
        "path",
        "command",
        "description",
        "pattern",
        "new_string",
        "content",
    ] {
        let needle = format!("\"{key}\":");
        if let Some(p) = raw.find(&needle) {
            let mut it = serde_json::Deserializer::from_str(raw[p + needle.len()..].trim_start())
                .into_iter::<Value>();
            if let Some(Ok(v @ Value::String(_))) = it.next() {
                out.insert(key.to_string(), v);
            }
        }
    }
    Value::Object(out)
}

/// Parses `[tool result for ID]\ncontent` (`, an error` before `]` for errors).
fn parse_tool_result(text: &str) -> Option<Block> {
    let rest = text.strip_prefix("[tool result for ")?;
    let (head, content) = match rest.split_once("]\n") {
        Some(x) => x,
        None => (rest.strip_suffix(']')?, ""),
    };
    let (id, is_error) = match head.strip_suffix(", an error") {
        Some(id) => (id, true),
        None => (head, false),
    };
    let mut extra = serde_json::Map::new();
    if is_error {
        extra.insert("is_error".into(), Value::Bool(true));
    }
    Some(Block::ToolResult(crate::model::messages::ToolResultBlock {
        tool_use_id: id.to_string(),
        content: Some(Some(ToolResultContent::Text(content.to_string()))),
        extra,
    }))
}

/// Rebuilds the conversation from a summary request built by
/// [`crate::summarize::summary::build_summary_request`] (or any Messages API request of that form):
/// tool calls and results rendered as text become blocks again, meta texts and earlier
/// summaries (marked by [`META_TEXT_MARKER`] / [`EARLIER_SUMMARY_MARKER`]) become meta and
/// summary lines, system messages ([`SYSTEM_TEXT_MARKER`]) system messages again,
/// `[attachment] …` texts attachment lines; the summary instruction is
/// removed and its custom instructions returned. Unknown shapes are read as plain text.
pub fn conversation_from_request(request: &Value) -> RequestConversation {
    let mut out = RequestConversation::default();
    let Some(msgs) = request.get("messages").and_then(Value::as_array) else {
        return out;
    };
    for (mi, m) in msgs.iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        let texts: Vec<String> = match m.get("content") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(bs)) => bs
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str).map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        let last = mi + 1 == msgs.len();
        let mut cur: Vec<Block> = Vec::new();
        let push = |cur: &mut Vec<Block>, out: &mut Vec<Message>| {
            if !cur.is_empty() {
                out.push(api_message(role, std::mem::take(cur)));
            }
        };
        for text in texts {
            if role == "assistant" {
                cur.push(parse_tool_call(&text).unwrap_or_else(|| Block::text(text)));
                continue;
            }
            if last && text.starts_with(SUMMARY_INSTRUCTION) {
                if let Some((_, extra)) = text.split_once(CUSTOM_INSTRUCTIONS_HEADER) {
                    out.instructions.extend(
                        extra
                            .lines()
                            .map(str::trim)
                            .filter(|l| !l.is_empty())
                            .map(str::to_string),
                    );
                }
                continue;
            }
            if text == "[The conversation so far:]" || text.ends_with(PTL_MARKER_TEXT) {
                continue;
            }
            if let Some(b) = parse_tool_result(&text) {
                cur.push(b);
            } else if let Some(body) = text.strip_prefix(EARLIER_SUMMARY_MARKER) {
                push(&mut cur, &mut out.messages);
                let mut msg = api_message("user", vec![Block::text(body.trim_start())]);
                msg.is_compact_summary = Some(Some(true));
                out.messages.push(msg);
            } else if let Some(body) = text.strip_prefix(SYSTEM_TEXT_MARKER) {
                push(&mut cur, &mut out.messages);
                out.messages
                    .push(api_message("system", vec![Block::text(body.trim_start())]));
            } else if let Some(body) = text.strip_prefix(META_TEXT_MARKER) {
                push(&mut cur, &mut out.messages);
                let mut msg = api_message("user", vec![Block::text(body.trim_start())]);
                msg.is_meta = Some(Some(true));
                out.messages.push(msg);
            } else if let Some(body) = text.strip_prefix("[attachment] ") {
                push(&mut cur, &mut out.messages);
                let a = serde_json::from_str::<Value>(body)
                    .unwrap_or_else(|_| json!({"type": "unknown", "content": body}));
                if let Ok(msg) =
                    Message::from_value(json!({"type": "attachment", "attachment": a}), "request")
                {
                    out.messages.push(msg);
                }
            } else if text == "[image]" || text == "[document]" {
                cur.push(Block::Image(crate::model::messages::MediaBlock {
                    source: None,
                    extra: Default::default(),
                }));
            } else {
                cur.push(Block::text(text));
            }
        }
        push(&mut cur, &mut out.messages);
    }
    out
}

fn api_message(role: &str, blocks: Vec<Block>) -> Message {
    Message {
        role: Some(Some(crate::model::messages::Role::parse(role))),
        content: Some(Some(Content::Blocks(blocks))),
        ..Default::default()
    }
}
