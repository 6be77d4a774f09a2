//! The summary request and its answer (SPEC §14): what is sent to the summarizing model,
//! how its reply becomes the summary, and the message that carries the summary into the
//! compacted conversation. The prompt is this project's own wording.

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::measure::thresholds::{
    output_limits, MAX_OUTPUT_TOKENS_FOR_SUMMARY, MIN_SUMMARY_OUTPUT_TOKENS,
    SMALL_SUMMARY_WINDOW_INPUT_TOKENS,
};
use crate::model::messages::{Block, Content, Kind, MediaBlock, Message, ToolResultContent};
use crate::model::view::{is_opaque, json_text, media_in, string_units, UsageCounts};
use crate::transforms::strip::media_placeholder;

/// System prompt of the summary request.
pub const SUMMARY_SYSTEM_PROMPT: &str = "You summarize working sessions between a user and an AI coding assistant. \
The assistant's earlier messages are about to be removed from its context window; your summary is all it will keep. \
Be precise and complete about what matters for continuing the work, and brief about everything else.";

/// The instruction appended after the conversation.
pub const SUMMARY_INSTRUCTION: &str = "Stop the task for a moment: the conversation above has to be condensed so the work can go on in a fresh context.

Do not call any tools. Reply with text only, in two parts.

First, inside <analysis></analysis> tags, go through the conversation in order and note, for each stretch: what the user asked for and how their intent developed, what you did about it, the decisions and reasons, the files you read, created or changed (with the important code), the commands you ran, the errors you met and how each was resolved, and any feedback or correction from the user. This part is scratch work and will be thrown away.

Then, inside <summary></summary> tags, write the summary with these numbered sections:
1. Primary request and intent: everything the user asked for, in detail, including constraints and preferences.
2. Key technical concepts: languages, frameworks, libraries, tools and ideas the work relies on.
3. Files and code sections: every file read, created or modified, with why it matters, what changed, and the code snippets needed to continue (full where short).
4. Errors and fixes: every error or failure met, how it was fixed, and any user feedback about it.
5. Problem solving: problems solved and investigations still open.
6. All user messages: every message the user wrote (not tool results), verbatim where short, closely paraphrased where long, in order.
7. Pending tasks: work the user asked for that is not done yet.
8. Current work: exactly what was being done right before this summary, with file names and code.
9. Optional next step: the next step, only if it follows directly from the user's latest request; quote the latest request and where the work stopped. Leave this out if the last task was finished.";

/// Header of the added instructions in the summary request.
pub const CUSTOM_INSTRUCTIONS_HEADER: &str = "Additional instructions for this summary:";

/// First line of the summary message in the compacted conversation.
pub const SUMMARY_MESSAGE_INTRO: &str = "This conversation continues an earlier one that was compacted to save context. The summary below stands for the earlier messages; it is not a new request from the user.";

/// Added to the summary message after an automatic compaction.
pub const AUTO_CONTINUE_TEXT: &str = "Carry on with the last task from where it stopped, without asking the user anything further first.";

/// Most characters of one tool result rendered into the summary request (head and tail are
/// kept around a marker).
pub const MAX_RENDERED_TOOL_RESULT_CHARS: usize = 40_000;

/// A Messages API request body for the summarizer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SummaryRequest {
    /// Model id.
    pub model: String,
    /// System prompt (left out when empty: the API's on-demand compaction has its own).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub system: String,
    /// The conversation followed by the summary instruction.
    pub messages: Vec<RequestMessage>,
    /// Output limit.
    pub max_tokens: u64,
    /// `{type: "summarize", instructions?}`: the request asks the Messages API's on-demand
    /// compaction for the summary (`messages` are then the conversation itself, as it is
    /// sent to the API); absent for the library's own summary prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compaction: Option<Value>,
}

impl SummaryRequest {
    /// The messages as JSON values (what [`Self::messages`] serialize to).
    pub fn messages_json(&self) -> Vec<Value> {
        self.messages.iter().map(RequestMessage::to_value).collect()
    }
}

/// One message of a [`SummaryRequest`]: the library's rendering of the conversation, or a
/// message as given. Serialized as the Messages API message it is (untagged).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum RequestMessage {
    /// `{role, content: [{type: "text", text}, …]}`, rendered by [`render_conversation`].
    Text(TextMessage),
    /// A message as it is sent (the API's on-demand compaction sends the conversation
    /// itself).
    Raw(Value),
}

impl RequestMessage {
    /// The message as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            RequestMessage::Text(m) => m.to_value(),
            RequestMessage::Raw(v) => v.clone(),
        }
    }
}

/// A message of text blocks, as the summary request sends the conversation. A typed value
/// rather than a JSON tree: it is built, measured and handed to JS without a map per block
/// (its field names and its `role` and `type` values are the same few strings every time).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TextMessage {
    /// Who said it.
    pub role: Role,
    /// Its text blocks.
    pub content: Vec<TextPart>,
}

impl TextMessage {
    /// The message as a JSON value: `{role, content: [{type: "text", text}, …]}`.
    pub fn to_value(&self) -> Value {
        let content = self
            .content
            .iter()
            .map(|p| json!({"type": "text", "text": p.text}))
            .collect::<Vec<_>>();
        json!({"role": self.role, "content": content})
    }

    /// Length of its JSON text in UTF-16 units ([`crate::model::view::json_units`] of
    /// [`Self::to_value`]), counted from the texts without writing anything.
    pub fn json_units(&self) -> usize {
        // `{"role":"user","content":[` … `]}` and, per block, `{"type":"text","text":` … `}`.
        const MESSAGE: usize = r#"{"role":,"content":[]}"#.len();
        const BLOCK: usize = r#"{"type":"text","text":}"#.len();
        let role = self.role.as_str().len() + 2; // quoted
        MESSAGE
            + role
            + self.content.len().saturating_sub(1)
            + self
                .content
                .iter()
                .map(|p| BLOCK + string_units(&p.text))
                .sum::<usize>()
    }
}

/// [`TextMessage::json_units`] of a JSON array of `messages`.
pub fn messages_units(messages: &[TextMessage]) -> usize {
    2 + messages.len().saturating_sub(1)
        + messages.iter().map(TextMessage::json_units).sum::<usize>()
}

/// The role of a [`TextMessage`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// `user`
    User,
    /// `assistant`
    Assistant,
}

impl Role {
    /// The role's name as the request writes it (its serde form; a test checks they agree).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// `{type: "text", text}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TextPart {
    /// Always `text`.
    #[serde(rename = "type")]
    pub kind: TextKind,
    /// The text.
    pub text: String,
}

impl TextPart {
    /// A text block.
    pub fn new(text: String) -> TextPart {
        TextPart {
            kind: TextKind::Text,
            text,
        }
    }
}

/// The `type` of a [`TextPart`]: a unit variant, so that a serializer may write it as a
/// constant (serde-wasm-bindgen keeps one JS string for it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum TextKind {
    /// `text`
    #[serde(rename = "text")]
    Text,
}

/// What the summarizer answered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SummaryResponse {
    /// All text of the answer.
    pub text: String,
    /// `stop_reason`, when given.
    pub stop_reason: Option<String>,
    /// `usage`, when given.
    pub usage: Option<UsageCounts>,
    /// The answer's `compaction` block (the API's on-demand compaction), as it came.
    pub compaction: Option<Value>,
    /// What in the answer was not text where text was looked for (`content[0].text of type
    /// number`), when something was: said when the summary comes out empty.
    pub problem: Option<String>,
}

/// Why a summary answer cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SummaryProblem {
    /// Cut off at `max_tokens`.
    Truncated,
    /// Stopped before its end for another reason (the `stop_reason`).
    Stopped(String),
    /// No summary text.
    Empty,
}

/// `max_tokens` of the summary request: at most 20,000 and at most the model's limit.
pub fn summary_max_tokens(model: &str) -> u64 {
    MAX_OUTPUT_TOKENS_FOR_SUMMARY.min(output_limits(model).upper_limit)
}

/// The room a summary window of `window` tokens keeps for the summary, which the request's
/// input must leave free: the model's [`summary_max_tokens`] (`max_tokens`), as SPEC §4 and §14
/// reserve it, in every window that also leaves the input
/// [`SMALL_SUMMARY_WINDOW_INPUT_TOKENS`] (16,384) besides. A smaller window (a summary model
/// of 8K, 16K or 32K) cannot hold both: the reserve is then what the window has beyond those
/// 16,384 tokens, and never less than a quarter of the window, so that an 8K window keeps
/// 2,048 for the summary and 6,144 for the request (a request that asked for more output than
/// its window holds would be refused by every API).
pub fn summary_output_reserve(max_tokens: u64, window: u64) -> u64 {
    max_tokens.min((window / 4).max(window.saturating_sub(SMALL_SUMMARY_WINDOW_INPUT_TOKENS)))
}

/// `max_tokens` of a summary request whose input takes `input` of a `window`-token summary
/// window: all the window leaves, up to the model's `max_tokens` (20,000 at most); never
/// less than [`MIN_SUMMARY_OUTPUT_TOKENS`] (or the window's whole reserve when smaller), even
/// when the input leaves less (a request that large is refused as too long and then cut).
pub fn summary_max_tokens_within(max_tokens: u64, window: u64, input: u64) -> u64 {
    let floor = MIN_SUMMARY_OUTPUT_TOKENS.min(summary_output_reserve(max_tokens, window));
    window
        .saturating_sub(input)
        .clamp(floor, max_tokens.max(floor))
}

/// Put before the text of a meta user line (added by the agent or its tools, e.g. a
/// reminder or a skill body) in the summary request, so that neither a summarizing model nor
/// [`crate::summarize::offline`] takes it for something the user wrote.
pub const META_TEXT_MARKER: &str = "[added automatically, not written by the user]";

/// Put before the text of a system message given as a message in the middle of the
/// conversation (`role: 'system'` / `'developer'`, a LangChain `SystemMessage`) in the summary
/// request: the app's instruction, which the summary must carry while it still applies (the
/// system messages that open the conversation are kept verbatim instead, and not sent).
pub const SYSTEM_TEXT_MARKER: &str = "[system message: an instruction the application gave the assistant at this point, not written by the user; the summary must keep it (under Primary request and intent) if it still applies]";

/// Put before the text of the summary line of an earlier compaction in the summary request.
pub const EARLIER_SUMMARY_MARKER: &str =
    "[summary of the conversation before an earlier compaction]";

/// Put before the readable `content` of a provider's `compaction` block (the Messages API's
/// server-side compaction) in the summary request: the provider's summary of the conversation
/// before it, which the new summary must carry on.
pub const PROVIDER_SUMMARY_MARKER: &str =
    "[summary of the conversation before this point, written by the provider's server-side compaction]";

/// What the summary request shows for an opaque `compaction` item (an OpenAI Responses
/// compaction: encrypted, readable by the provider only). The item itself is kept in front of
/// the new summary, so the model still receives what it stands for.
pub const OPAQUE_COMPACTION_NOTE: &str = "[The conversation before this point was compacted by the provider's server-side compaction. Its summary is encrypted and cannot be shown here; it is kept ahead of the new summary, so the model still receives it. Summarize every message shown here, and do not claim that nothing else happened before it.]";

/// Keeps the head and the tail of `s` (at most `max_chars` characters in all) around a
/// marker saying how many characters were left out.
pub(crate) fn cut_middle(s: &str, max_chars: usize) -> String {
    // No more bytes than `max_chars`: no more characters either, nothing to count.
    if s.len() <= max_chars {
        return s.to_string();
    }
    let count = s.chars().count();
    if count <= max_chars {
        return s.to_string();
    }
    let head: String = s.chars().take(max_chars / 2).collect();
    let tail: String = s.chars().skip(count - max_chars / 2).collect();
    format!(
        "{head}\n[… {} characters left out …]\n{tail}",
        count - max_chars
    )
}

/// A JSON value as text of at most about `max_chars` characters that stays valid JSON when
/// it can: long strings inside are cut in the middle first (a tool input's `content` or
/// `new_string` is what makes it long); only when that is not enough is the text itself cut.
fn render_json(v: &Value, max_chars: usize) -> String {
    let s = json_text(v);
    if s.len() <= max_chars || s.chars().count() <= max_chars {
        return s;
    }
    fn shorten(v: &Value, cap: usize) -> Value {
        match v {
            Value::String(t) if t.chars().count() > cap => Value::String(cut_middle(t, cap)),
            Value::Array(a) => Value::Array(a.iter().map(|x| shorten(x, cap)).collect()),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| (k.clone(), shorten(x, cap)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    for cap in [max_chars / 2, max_chars / 8, max_chars / 32, 200] {
        let t = json_text(&shorten(v, cap));
        if t.chars().count() <= max_chars {
            return t;
        }
    }
    cut_middle(&s, max_chars)
}

/// A document as the summarizer reads it: a plain-text document's text (cut in the middle
/// past the bound a tool result has), else a marker (its media were stripped before).
fn render_document(d: &MediaBlock) -> String {
    let Some(texts) = d.plain_texts() else {
        return "[document]".to_string();
    };
    let title = d.extra.get("title").and_then(Value::as_str);
    format!(
        "[document{}]\n{}",
        title.map_or(String::new(), |t| format!(": {t}")),
        cut_middle(&texts.join("\n\n"), MAX_RENDERED_TOOL_RESULT_CHARS)
    )
}

/// `v` (a server tool's result) without what the summarizer cannot read: media inside become
/// markers naming their type and size, opaque values (`encrypted_content`) are left out.
fn readable(v: &Value) -> Value {
    if let Some(kind) = media_in(v) {
        return match Block::from_value(v.clone()) {
            Ok(Block::Image(m)) | Ok(Block::Document(m)) => {
                Value::String(media_placeholder(kind, &m))
            }
            _ => Value::String("[media]".to_string()),
        };
    }
    match v {
        Value::Array(a) => Value::Array(a.iter().map(readable).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, x)| !is_opaque(k, x))
                .map(|(k, x)| (k.clone(), readable(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn render_tool_result(content: Option<&ToolResultContent>) -> String {
    match content {
        None => String::new(),
        Some(ToolResultContent::Text(t)) => cut_middle(t, MAX_RENDERED_TOOL_RESULT_CHARS),
        Some(ToolResultContent::Blocks(bs)) => {
            let parts: Vec<String> = bs
                .iter()
                .map(|b| match b {
                    Block::Text(t) => t.text.clone(),
                    Block::Image(_) => "[image]".to_string(),
                    Block::Document(d) => render_document(d),
                    other => json_text(&other.to_value()),
                })
                .collect();
            cut_middle(&parts.join("\n"), MAX_RENDERED_TOOL_RESULT_CHARS)
        }
    }
}

/// Blocks of one message as they go into the summary request: text stays text; tool calls
/// and results become readable text (so the request needs no tool definitions); thinking
/// is left out (it is the model's scratch work, and its signatures belong to another
/// request); media were stripped before.
fn render_blocks(content: &Content) -> Vec<TextPart> {
    match content {
        // A text of whitespace only (Claude Code writes a response's leading "\n\n" as a line
        // of its own) says nothing, and the Messages API refuses such a text block.
        Content::Text(t) if t.trim().is_empty() => Vec::new(),
        Content::Text(t) => vec![TextPart::new(t.clone())],
        Content::Blocks(blocks) => blocks
            .iter()
            .filter_map(|b| {
                let text = match b {
                    Block::Text(t) if t.text.trim().is_empty() => return None,
                    Block::Text(t) => t.text.clone(),
                    Block::Thinking(_) | Block::RedactedThinking(_) => return None,
                    Block::Image(_) => "[image]".to_string(),
                    Block::Document(d) => render_document(d),
                    Block::ToolUse(t) | Block::ServerToolUse(t) => {
                        format!(
                            "[tool call {} ({}): {}]",
                            t.name,
                            t.id,
                            t.input.as_ref().and_then(|i| i.as_ref()).map_or(
                                "{}".to_string(),
                                |v| match v {
                                    // A custom tool's free-form input (a patch, a query) as
                                    // it was written, not as an escaped JSON string.
                                    Value::String(text) =>
                                        cut_middle(text, MAX_RENDERED_TOOL_RESULT_CHARS),
                                    v => render_json(v, MAX_RENDERED_TOOL_RESULT_CHARS),
                                }
                            )
                        )
                    }
                    Block::ToolResult(r) => {
                        let error = r.extra.get("is_error") == Some(&Value::Bool(true));
                        let content = r.content.as_ref().and_then(|c| c.as_ref());
                        let head = format!(
                            "[tool result for {}{}]\n",
                            r.tool_use_id,
                            if error { ", an error" } else { "" },
                        );
                        match content {
                            // A text that needs no cut is copied once, after the head.
                            Some(ToolResultContent::Text(t))
                                if t.len() <= MAX_RENDERED_TOOL_RESULT_CHARS =>
                            {
                                let mut text = head;
                                text.push_str(t);
                                text
                            }
                            _ => head + &render_tool_result(content),
                        }
                    }
                    Block::ServerToolResult(r) => format!(
                        "[{} for {}]\n{}",
                        r.block_type,
                        r.tool_use_id,
                        cut_middle(
                            &json_text(&readable(&Value::Object(r.raw.clone()))),
                            MAX_RENDERED_TOOL_RESULT_CHARS
                        )
                    ),
                    Block::Unknown(v)
                        if v.get("type").and_then(Value::as_str)
                            == Some(crate::model::messages::COMPACTION_BLOCK) =>
                    {
                        render_compaction(v)?
                    }
                    Block::Unknown(v) => cut_middle(&json_text(v), MAX_RENDERED_TOOL_RESULT_CHARS),
                };
                Some(TextPart::new(text))
            })
            .collect(),
    }
}

/// A provider's `compaction` block as the summary request shows it: its readable summary
/// whole (it stands for everything before it), a note for an opaque one, nothing for a failed
/// one (`content: null`). Its encrypted form is never shown (no model but the provider's reads
/// it).
fn render_compaction(v: &Value) -> Option<String> {
    if crate::model::messages::is_opaque_compaction(v) {
        return Some(OPAQUE_COMPACTION_NOTE.to_string());
    }
    match v.get("content") {
        Some(Value::String(t)) if !t.trim().is_empty() => {
            Some(format!("{PROVIDER_SUMMARY_MARKER}\n{t}"))
        }
        // A summary given as blocks: their texts.
        Some(Value::Array(parts)) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .filter(|t| !t.trim().is_empty())
                .collect();
            (!texts.is_empty()).then(|| format!("{PROVIDER_SUMMARY_MARKER}\n{}", texts.join("\n")))
        }
        _ => None,
    }
}

/// The role a message is sent with, or `None` for lines that are not sent.
fn sent_role(m: &Message) -> Option<Role> {
    if m.is_sidechain() {
        return None;
    }
    match m.kind() {
        Kind::User | Kind::Attachment => Some(Role::User),
        Kind::Assistant => Some(Role::Assistant),
        // A system message given as a message (not a Claude Code system line, which is a
        // local note): an instruction the model read, shown to the summarizer as user text.
        Kind::System if !m.is_transcript() => Some(Role::User),
        _ => None,
    }
}

/// Text of an attachment line as it goes into the summary request.
fn render_attachment(m: &Message) -> Option<TextPart> {
    let a = m.extra.get("attachment")?;
    Some(TextPart::new(format!(
        "[attachment] {}",
        cut_middle(&json_text(a), MAX_RENDERED_TOOL_RESULT_CHARS)
    )))
}

/// The `name` of an API-shape user or assistant message, when it names a participant.
fn speaker(m: &Message) -> Option<&str> {
    if m.is_transcript() || !matches!(m.kind(), Kind::User | Kind::Assistant) {
        return None;
    }
    m.extra
        .get("name")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|n| !n.is_empty())
}

/// The conversation as Messages API messages for the summarizer: sent lines only (main chain,
/// no system/progress lines), consecutive messages of one role merged (this also joins the
/// lines of a split response), nothing empty, a user message first. Texts of meta user lines
/// start with [`META_TEXT_MARKER`] and the summary line of an earlier compaction with
/// [`EARLIER_SUMMARY_MARKER`], so that they are not taken for the user's words; tool inputs
/// stay valid JSON (long strings inside are cut in the middle).
///
/// A system message with `clear_at: "next_user_message"` that a later user message among
/// `messages` clears is left out: the model read it for one turn only and reads it no more, so
/// the summary must not carry it forward as a standing instruction.
pub fn render_conversation(messages: &[Message]) -> Vec<TextMessage> {
    let mut out: Vec<TextMessage> = Vec::new();
    let last_user = messages
        .iter()
        .rposition(|m| m.kind() == Kind::User && !m.is_sidechain());
    for (i, m) in messages.iter().enumerate() {
        if m.clears_at_next_user() && last_user.is_some_and(|u| u > i) {
            continue;
        }
        let Some(role) = sent_role(m) else { continue };
        let mut blocks = if m.kind() == Kind::Attachment {
            render_attachment(m).into_iter().collect()
        } else {
            m.content().map(render_blocks).unwrap_or_default()
        };
        let marker = if m.kind() == Kind::System {
            Some(SYSTEM_TEXT_MARKER)
        } else if m.kind() != Kind::User {
            None
        } else if m.is_compact_summary() {
            Some(EARLIER_SUMMARY_MARKER)
        } else if matches!(m.is_meta, Some(Some(true))) {
            Some(META_TEXT_MARKER)
        } else {
            None
        };
        if let Some(marker) = marker {
            for b in &mut blocks {
                if !b.text.starts_with("[tool result for ") {
                    b.text = format!("{marker}\n{}", b.text);
                }
            }
        }
        // A participant's name (OpenAI Chat's `name` on a message): in a conversation of
        // several people the summary can say who said what.
        if let Some(name) = speaker(m) {
            if let Some(b) = blocks
                .iter_mut()
                .find(|b| !b.text.starts_with("[tool result for "))
            {
                b.text = format!("{name}: {}", b.text);
            }
        }
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => out.push(TextMessage {
                role,
                content: blocks,
            }),
        }
    }
    if out.first().is_some_and(|m| m.role == Role::Assistant) {
        out.insert(
            0,
            TextMessage {
                role: Role::User,
                content: vec![TextPart::new("[The conversation so far:]".to_string())],
            },
        );
    }
    out
}

/// The full summary instruction: the fixed text plus any custom instructions.
pub fn instruction_text(custom_instructions: &[String]) -> String {
    let extra: Vec<&str> = custom_instructions
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if extra.is_empty() {
        SUMMARY_INSTRUCTION.to_string()
    } else {
        format!(
            "{SUMMARY_INSTRUCTION}\n\n{CUSTOM_INSTRUCTIONS_HEADER}\n{}",
            extra.join("\n")
        )
    }
}

/// Builds the summary request for `messages` (media already stripped).
pub fn build_summary_request(
    model: &str,
    messages: &[Message],
    custom_instructions: &[String],
) -> SummaryRequest {
    summary_request_from(model, render_conversation(messages), custom_instructions)
}

/// [`build_summary_request`] from the messages [`render_conversation`] already made.
pub fn summary_request_from(
    model: &str,
    mut msgs: Vec<TextMessage>,
    custom_instructions: &[String],
) -> SummaryRequest {
    let instruction = TextPart::new(instruction_text(custom_instructions));
    match msgs.last_mut() {
        Some(last) if last.role == Role::User => last.content.push(instruction),
        _ => msgs.push(TextMessage {
            role: Role::User,
            content: vec![instruction],
        }),
    }
    SummaryRequest {
        model: model.to_string(),
        system: SUMMARY_SYSTEM_PROMPT.to_string(),
        messages: msgs.into_iter().map(RequestMessage::Text).collect(),
        max_tokens: summary_max_tokens(model),
        compaction: None,
    }
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let rest = &text[start..];
    Some(match rest.rfind(close) {
        Some(end) => &rest[..end],
        None => rest,
    })
}

/// Extracts the summary from the model's reply: the `<summary>` part when present, else the
/// reply without its `<analysis>` part.
pub fn extract_summary(text: &str) -> String {
    if let Some(s) = between(text, "<summary>", "</summary>") {
        return s.trim().to_string();
    }
    let mut t = text.to_string();
    if let Some(start) = t.find("<analysis>") {
        match t[start..].find("</analysis>") {
            Some(end) => t.replace_range(start..start + end + "</analysis>".len(), ""),
            None => t.truncate(start),
        }
    }
    t.trim().to_string()
}

/// Checks a reply and returns its summary text. A reply the API stopped before its end is no
/// summary, whatever text it holds: cut at `max_tokens`, at the model's context window
/// (`model_context_window_exceeded`, which Claude 4.5 models answer instead of a 400), or
/// stopped by a refusal (`refusal`: the partial text of a reply the model's safety
/// classifiers ended, also what the library's summarizers make of a content filter).
pub fn summary_from_response(r: &SummaryResponse) -> Result<String, SummaryProblem> {
    match r.stop_reason.as_deref() {
        Some("max_tokens") => return Err(SummaryProblem::Truncated),
        Some(why @ ("model_context_window_exceeded" | "refusal")) => {
            return Err(SummaryProblem::Stopped(why.to_string()))
        }
        _ => {}
    }
    let s = extract_summary(&r.text);
    if s.is_empty() {
        return Err(SummaryProblem::Empty);
    }
    Ok(s)
}

/// Text of the summary message put into the compacted conversation.
pub fn summary_message_text(
    summary: &str,
    auto: bool,
    suppress_follow_up_questions: bool,
) -> String {
    let mut t = format!("{SUMMARY_MESSAGE_INTRO}\n\n<summary>\n{summary}\n</summary>");
    if auto || suppress_follow_up_questions {
        t.push_str("\n\n");
        t.push_str(AUTO_CONTINUE_TEXT);
    }
    t
}

/// The summary message in the conversation's shape: an API user message, or a transcript
/// user line with `isCompactSummary: true` (Claude Code resumes after it).
pub fn summary_message(
    text: &str,
    transcript: bool,
    uuid: &str,
    parent_uuid: &str,
    timestamp: &str,
    session_fields: &Map<String, Value>,
) -> Message {
    if !transcript {
        return Message::api_user_text(text);
    }
    let mut v = Map::new();
    v.insert("parentUuid".into(), json!(parent_uuid));
    v.insert("isSidechain".into(), Value::Bool(false));
    for (k, val) in session_fields {
        v.insert(k.clone(), val.clone());
    }
    v.insert("type".into(), json!("user"));
    v.insert("message".into(), json!({"role": "user", "content": text}));
    v.insert("isVisibleInTranscriptOnly".into(), Value::Bool(true));
    v.insert("isCompactSummary".into(), Value::Bool(true));
    v.insert("uuid".into(), json!(uuid));
    v.insert("timestamp".into(), json!(timestamp));
    Message::from_value(Value::Object(v), "summary").expect("summary line is well-formed")
}

#[cfg(test)]
mod tests {

    /// SPEC §4/§14's reserve of 20,000 stands in every window with room for it and 16,384
    /// tokens of request; a smaller window shares itself, never asking for more output than it
    /// holds; the reserve and the input's room both grow with the window.
    #[test]
    fn the_summary_reserve_fits_the_summary_window() {
        let r = |w| summary_output_reserve(20_000, w);
        assert_eq!(r(1_000_000), 20_000);
        assert_eq!(r(200_000), 20_000);
        assert_eq!(r(64_000), 20_000);
        assert_eq!(r(36_384), 20_000);
        assert_eq!(r(32_768), 16_384);
        assert_eq!(r(16_384), 4_096);
        assert_eq!(r(8_192), 2_048);
        assert_eq!(r(4_096), 1_024);
        // A model whose own limit is lower keeps it.
        assert_eq!(summary_output_reserve(4_096, 200_000), 4_096);
        assert_eq!(summary_output_reserve(4_096, 8_192), 2_048);
        let mut last = (0, 0);
        for w in (4_096..300_000).step_by(97) {
            let (out, input) = (r(w), w - r(w));
            assert!(
                out < w && out >= (w / 4).min(20_000) && out <= 20_000,
                "{w}: {out}"
            );
            assert!(
                out >= last.0 && input >= last.1,
                "{w}: {out}, {input} after {last:?}"
            );
            last = (out, input);
        }
    }

    #[test]
    fn max_tokens_is_what_the_window_leaves_the_input() {
        let m = |w, input| summary_max_tokens_within(20_000, w, input);
        // A request fitted to a large window asks the SPEC's 20,000.
        assert_eq!(m(200_000, 180_000), 20_000);
        assert_eq!(m(200_000, 1_000), 20_000);
        // A small window: what the input leaves, never beyond it.
        assert_eq!(m(16_384, 12_000), 4_384);
        assert_eq!(m(8_192, 900), 7_292);
        assert_eq!(m(8_192, 6_144), 2_048);
        // An input too large for the window (it is refused and cut): the floor.
        assert_eq!(m(8_192, 8_000), 1_024);
        assert_eq!(m(8_192, 100_000), 1_024);
        assert_eq!(summary_max_tokens_within(4_096, 200_000, 1_000), 4_096);
    }

    #[test]
    fn a_provider_compaction_is_shown_by_its_readable_summary_or_a_note_never_encrypted() {
        let conv = |block: Value| {
            vec![
                Message::from_value(json!({"role": "assistant", "content": [block, {"type": "text", "text": "after"}]}), "m").unwrap(),
                Message::from_value(json!({"role": "user", "content": "go on"}), "m").unwrap(),
            ]
        };
        let texts = |ms: &[Message]| -> String {
            render_conversation(ms)
                .iter()
                .flat_map(|m| m.content.iter().map(|p| p.text.clone()))
                .collect::<Vec<_>>()
                .join("|")
        };
        let readable = texts(&conv(
            json!({"type": "compaction", "content": "SUM", "encrypted_content": "ENC"}),
        ));
        assert!(
            readable.contains(&format!("{PROVIDER_SUMMARY_MARKER}\nSUM"))
                && !readable.contains("ENC"),
            "{readable}"
        );
        let opaque = texts(&conv(
            json!({"type": "compaction", "encrypted_content": "ENC"}),
        ));
        assert!(
            opaque.contains(OPAQUE_COMPACTION_NOTE) && !opaque.contains("ENC"),
            "{opaque}"
        );
        let failed = texts(&conv(
            json!({"type": "compaction", "content": null, "encrypted_content": "ENC"}),
        ));
        assert!(
            !failed.contains("compaction") && !failed.contains("ENC") && failed.contains("after"),
            "{failed}"
        );
    }
    use super::*;

    fn msgs(v: Value) -> Vec<Message> {
        Message::parse_all(v).unwrap()
    }

    #[test]
    fn a_role_is_named_as_serde_writes_it() {
        for role in [Role::User, Role::Assistant] {
            assert_eq!(json!(role), json!(role.as_str()));
        }
    }

    #[test]
    fn request_renders_tools_as_text_and_drops_thinking() {
        let m = msgs(json!([
            {"role": "user", "content": "fix the bug"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "secret", "signature": "s"},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a.rs"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "fn main() {}"}]},
            {"type": "progress", "data": {}}
        ]));
        let r = build_summary_request("claude-opus-4-6", &m, &["focus on tests".into()]);
        assert_eq!(r.max_tokens, 20_000);
        assert_eq!(r.messages.len(), 3);
        let all = serde_json::to_string(&r.messages).unwrap();
        assert!(!all.contains("secret"));
        assert!(all.contains("[tool call Read (t1)"));
        assert!(all.contains("fn main() {}"));
        let messages = r.messages_json();
        let last = messages.last().unwrap();
        assert_eq!(last["role"], "user");
        let text = last["content"].as_array().unwrap().last().unwrap()["text"]
            .as_str()
            .unwrap();
        assert!(text.contains("<summary>") && text.ends_with("focus on tests"));
        assert!(
            !all.contains("\"tool_use\""),
            "no tool blocks: no tool definitions needed"
        );
    }

    #[test]
    fn request_starts_with_user_and_merges_split_responses() {
        let m = msgs(json!([
            {"type": "assistant", "message": {"role": "assistant", "id": "a", "content": [{"type": "text", "text": "one"}]}},
            {"type": "assistant", "message": {"role": "assistant", "id": "a", "content": [{"type": "text", "text": "two"}]}}
        ]));
        let r = build_summary_request("claude-3-5-haiku", &m, &[]);
        assert_eq!(r.max_tokens, 8_192);
        let messages = r.messages_json();
        assert_eq!(messages[0]["role"], "user");
        assert_eq!(messages[1]["content"].as_array().unwrap().len(), 2);
        assert_eq!(messages[2]["role"], "user");
    }

    #[test]
    fn summary_extraction() {
        assert_eq!(
            extract_summary("<analysis>scratch</analysis>\n<summary>\nThe gist.\n</summary>"),
            "The gist."
        );
        assert_eq!(extract_summary("<analysis>x</analysis> plain"), "plain");
        assert_eq!(extract_summary("<analysis>unterminated"), "");
        assert_eq!(extract_summary("<summary>open ended"), "open ended");
        let cut = SummaryResponse {
            text: "<summary>partial".into(),
            stop_reason: Some("max_tokens".into()),
            usage: None,
            compaction: None,
            problem: None,
        };
        assert_eq!(summary_from_response(&cut), Err(SummaryProblem::Truncated));
        let empty = SummaryResponse {
            text: "<analysis>only</analysis>".into(),
            ..Default::default()
        };
        assert_eq!(summary_from_response(&empty), Err(SummaryProblem::Empty));
        // Stopped before its end for another reason: never a summary (round 11).
        for why in ["model_context_window_exceeded", "refusal"] {
            let stopped = SummaryResponse {
                text: "<summary>1. Primary request: the user asked to".into(),
                stop_reason: Some(why.into()),
                ..Default::default()
            };
            assert_eq!(
                summary_from_response(&stopped),
                Err(SummaryProblem::Stopped(why.into()))
            );
        }
        for why in ["end_turn", "stop_sequence"] {
            let done = SummaryResponse {
                text: "<summary>S</summary>".into(),
                stop_reason: Some(why.into()),
                ..Default::default()
            };
            assert_eq!(summary_from_response(&done), Ok("S".into()));
        }
    }

    #[test]
    fn summary_message_shapes() {
        let t = summary_message_text("S", true, false);
        assert!(t.starts_with(SUMMARY_MESSAGE_INTRO) && t.ends_with(AUTO_CONTINUE_TEXT));
        assert!(!summary_message_text("S", false, false).contains(AUTO_CONTINUE_TEXT));
        let api = summary_message("x", false, "u", "p", "t", &Map::new());
        assert_eq!(api.kind(), Kind::User);
        assert!(!api.is_transcript());
        let line = summary_message("x", true, "u", "p", "t", &Map::new());
        assert!(line.is_compact_summary());
        assert_eq!(line.to_value()["parentUuid"], "p");
    }

    #[test]
    fn meta_lines_and_earlier_summaries_are_marked_and_tool_inputs_stay_json() {
        let m = msgs(json!([
            {"type": "user", "isCompactSummary": true, "message": {"role": "user", "content": "old summary"}},
            {"type": "user", "isMeta": true, "message": {"role": "user", "content": "<system-reminder>x</system-reminder>"}},
            {"type": "user", "message": {"role": "user", "content": "real words"}},
            {"type": "assistant", "message": {"role": "assistant", "id": "a", "content": [
                {"type": "tool_use", "id": "t", "name": "Write",
                 "input": {"file_path": "/a", "content": "z".repeat(100_000)}}]}}
        ]));
        let r = build_summary_request("m", &m, &[]);
        let messages = r.messages_json();
        let user = messages[0]["content"].as_array().unwrap();
        assert_eq!(
            user[0]["text"],
            format!("{EARLIER_SUMMARY_MARKER}\nold summary")
        );
        assert_eq!(
            user[1]["text"],
            format!("{META_TEXT_MARKER}\n<system-reminder>x</system-reminder>")
        );
        assert_eq!(user[2]["text"], "real words");
        let call = messages[1]["content"][0]["text"].as_str().unwrap();
        let json = call
            .strip_prefix("[tool call Write (t): ")
            .and_then(|c| c.strip_suffix(']'))
            .unwrap();
        let input: Value = serde_json::from_str(json).unwrap();
        assert_eq!(input["file_path"], "/a");
        assert!(input["content"]
            .as_str()
            .unwrap()
            .contains("characters left out"));
        assert!(json.chars().count() <= MAX_RENDERED_TOOL_RESULT_CHARS);
    }

    /// Claude Code's "\n\n" line before a response's thinking (a split response) is no text
    /// block of the summary request: the Messages API refuses a whitespace-only text.
    #[test]
    fn a_whitespace_only_text_is_not_rendered() {
        let m = msgs(json!([
            {"type": "user", "message": {"role": "user", "content": "start the server"}},
            {"type": "assistant", "message": {"id": "r1", "role": "assistant", "content": [{"type": "text", "text": "\n\n"}]}},
            {"type": "assistant", "message": {"id": "r1", "role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}]}},
            {"type": "assistant", "message": {"id": "r1", "role": "assistant", "content": [{"type": "text", "text": "Starting it."}]}},
            {"type": "user", "message": {"role": "user", "content": " \n"}},
            {"type": "user", "message": {"role": "user", "content": "thanks"}},
        ]));
        let r = render_conversation(&m);
        let texts: Vec<Vec<&str>> = r
            .iter()
            .map(|m| m.content.iter().map(|p| p.text.as_str()).collect())
            .collect();
        assert_eq!(
            texts,
            [
                vec!["start the server"],
                vec!["Starting it."],
                vec!["thanks"]
            ]
        );
    }

    #[test]
    fn a_participant_name_goes_before_what_they_said() {
        let m = msgs(json!([
            {"role": "user", "name": "alice", "content": "I vote yes."},
            {"role": "assistant", "content": "Recorded."},
            {"role": "user", "name": " ", "content": "Anyone else?"},
            {"role": "user", "name": "bob", "content": [{"type": "text", "text": "No from me."}]},
            // A transcript line's `name` is no participant.
            {"type": "user", "name": "x", "message": {"role": "user", "content": "line"}},
        ]));
        let r = render_conversation(&m);
        let texts: Vec<Vec<&str>> = r
            .iter()
            .map(|m| m.content.iter().map(|p| p.text.as_str()).collect())
            .collect();
        assert_eq!(
            texts,
            [
                vec!["alice: I vote yes."],
                vec!["Recorded."],
                vec!["Anyone else?", "bob: No from me.", "line"]
            ]
        );
    }

    #[test]
    fn a_free_form_tool_input_is_shown_as_written() {
        let patch = "*** Begin Patch\n*** Update File: a.py\n-x = \"1\"\n+x = \"2\"\n*** End Patch";
        let m = msgs(json!([
            {"role": "user", "content": "patch it"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "c1", "name": "apply_patch", "input": patch}]},
        ]));
        let r = render_conversation(&m);
        let text = &r[1].content[0].text;
        assert_eq!(text, &format!("[tool call apply_patch (c1): {patch}]"));
        // Past the bound a tool result has, cut in the middle as text.
        let long = "y".repeat(MAX_RENDERED_TOOL_RESULT_CHARS * 2);
        let m = msgs(json!([
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "c2", "name": "apply_patch", "input": long}]},
        ]));
        let r = render_conversation(&m);
        let text = &r.last().unwrap().content.last().unwrap().text;
        assert!(
            text.starts_with("[tool call apply_patch (c2): yyy"),
            "{text:.80}"
        );
        assert!(text.contains("characters left out") && !text.contains('"'));
    }

    #[test]
    fn a_reminder_a_later_user_message_cleared_is_not_shown_to_the_summarizer() {
        let m = msgs(json!([
            {"role": "user", "content": "hi"},
            {"role": "system", "clear_at": "next_user_message", "content": "REMINDER one"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "next"},
            {"role": "system", "clear_at": "next_user_message", "content": "REMINDER two"},
            {"role": "system", "clear_at": "never", "content": "STANDING rule"}
        ]));
        let all = serde_json::to_string(&build_summary_request("m", &m, &[])).unwrap();
        // Cleared: left out; not cleared yet, or never cleared: shown marked.
        assert!(!all.contains("REMINDER one"), "{all}");
        assert!(
            all.contains("REMINDER two") && all.contains("STANDING rule"),
            "{all}"
        );
    }

    #[test]
    fn system_messages_given_as_messages_are_shown_marked_and_system_lines_are_not() {
        let m = msgs(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "system", "content": "From now on answer in French."},
            {"role": "developer", "content": [{"type": "text", "text": "Be brief."}]},
            {"role": "user", "content": "ok"}
        ]));
        let r = build_summary_request("m", &m, &[]);
        let messages = r.messages_json();
        assert_eq!(messages.len(), 3, "{messages:?}");
        let user = messages[2]["content"].as_array().unwrap();
        assert_eq!(
            user[0]["text"],
            format!("{SYSTEM_TEXT_MARKER}\nFrom now on answer in French.")
        );
        assert_eq!(user[1]["text"], format!("{SYSTEM_TEXT_MARKER}\nBe brief."));
        assert_eq!(user[2]["text"], "ok");
        // Claude Code's own system lines are local notes: not sent, not shown.
        let lines = msgs(json!([
            {"type": "user", "uuid": "u", "message": {"role": "user", "content": "hi"}},
            {"type": "system", "uuid": "s", "subtype": "api_error", "content": "retrying"}
        ]));
        let all = serde_json::to_string(&build_summary_request("m", &lines, &[])).unwrap();
        assert!(!all.contains("retrying"), "{all}");
        // The offline summarizer reads them back as system messages.
        let back = crate::summarize::offline::request::conversation_from_request(
            &serde_json::to_value(&r).unwrap(),
        );
        assert!(back.messages.iter().any(|m| m.kind() == Kind::System
            && serde_json::to_string(&m.to_value())
                .unwrap()
                .contains("French")));
    }

    #[test]
    fn typed_messages_measure_and_write_as_their_json_values() {
        let m = msgs(json!([
            {"type": "assistant", "message": {"role": "assistant", "id": "a", "content": [
                {"type": "text", "text": "tab\there \"quoted\" back\\slash \u{1} é 😀 中文"},
                {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls\n"}}]}},
            {"type": "user", "isMeta": true, "message": {"role": "user", "content": "<system-reminder>x</system-reminder>"}},
            {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": "a\r\nb", "is_error": true}]}},
            {"type": "attachment", "attachment": {"type": "plan", "content": "p"}},
            {"type": "user", "message": {"role": "user", "content": ""}}
        ]));
        for rendered in [
            Vec::new(),
            render_conversation(&m),
            render_conversation(&m[2..]),
        ] {
            let values: Vec<Value> = rendered.iter().map(TextMessage::to_value).collect();
            assert_eq!(
                messages_units(&rendered),
                crate::model::view::array_units(&values)
            );
            assert_eq!(
                messages_units(&rendered),
                serde_json::to_string(&values)
                    .unwrap()
                    .encode_utf16()
                    .count()
            );
            assert_eq!(
                serde_json::to_string(&rendered).unwrap(),
                serde_json::to_string(&values).unwrap()
            );
        }
        let r = build_summary_request("m", &m, &[]);
        assert_eq!(
            serde_json::to_value(&r).unwrap()["messages"],
            Value::Array(r.messages_json())
        );
        assert_eq!(
            r.messages_json()[0]["content"][0]["text"],
            "[The conversation so far:]"
        );
    }

    #[test]
    fn huge_tool_results_are_cut_in_the_middle() {
        let big = "a".repeat(100_000);
        let m = msgs(json!([
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": big}]}
        ]));
        let r = build_summary_request("m", &m, &[]);
        let s = serde_json::to_string(&r.messages).unwrap();
        assert!(s.len() < 50_000);
        assert!(s.contains("characters left out"));
    }
}
