//! The API view of a conversation (SPEC §2): what is actually sent to the Messages API,
//! and a validator for the invariants the API enforces.
//!
//! Transcript lines are followed in order after the last `compact_boundary`; sub-agent lines
//! and lines that are not sent (system, progress, …) are skipped; consecutive messages of one
//! role are merged (which also joins the lines of a split response and the tool results of
//! parallel calls); attachment lines become user text.

use serde::Serialize;
use serde_json::{json, Value};

use crate::model::messages::{Block, Content, Kind, Message};
use crate::model::view::json_text;

fn role_of(m: &Message) -> Option<&'static str> {
    if m.is_sidechain() {
        return None;
    }
    match m.kind() {
        Kind::User | Kind::Attachment => Some("user"),
        Kind::Assistant => Some("assistant"),
        _ => None,
    }
}

/// A block of the API view, borrowed from the message it comes from: one of its blocks, or
/// the text block its text content or attachment is sent as. What [`to_api_messages`] writes
/// and what [`validate_for_api`] checks, without building the JSON of the whole view.
enum Sent<'a> {
    Block(&'a Block),
    Text(std::borrow::Cow<'a, str>),
}

impl<'a> Sent<'a> {
    /// The string at `key` of the block as sent (`b[key].as_str()` of its JSON).
    fn get(&self, key: &str) -> Option<&str> {
        match self {
            Sent::Text(t) => match key {
                "type" => Some("text"),
                "text" => Some(t),
                _ => None,
            },
            Sent::Block(b) => block_field(b, key),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Sent::Block(b) => api_block(b),
            Sent::Text(t) => json!({"type": "text", "text": t}),
        }
    }
}

impl Serialize for Sent<'_> {
    /// The block as [`Sent::into_value`] gives it, written without building its JSON value
    /// (tests/validate_parity.rs checks the text is the same): the blocks most of a
    /// conversation is made of written field by field as [`Block::to_value`] orders them
    /// (`type`, its own fields, then the others); the rest (and a free-form call input, which
    /// [`api_block`] rewrites) through their value.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        fn others<M: SerializeMap>(
            m: &mut M,
            extra: &serde_json::Map<String, Value>,
        ) -> Result<(), M::Error> {
            extra.iter().try_for_each(|(k, v)| m.serialize_entry(k, v))
        }
        let b = match self {
            Sent::Text(t) => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("type", "text")?;
                m.serialize_entry("text", t)?;
                return m.end();
            }
            Sent::Block(b) => b,
        };
        match b {
            Block::Text(x) => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("type", "text")?;
                m.serialize_entry("text", &x.text)?;
                others(&mut m, &x.extra)?;
                m.end()
            }
            Block::ToolUse(x) if !matches!(x.input, Some(Some(Value::String(_)))) => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("type", "tool_use")?;
                m.serialize_entry("id", &x.id)?;
                m.serialize_entry("name", &x.name)?;
                if let Some(input) = &x.input {
                    m.serialize_entry("input", input)?;
                }
                others(&mut m, &x.extra)?;
                m.end()
            }
            Block::ToolResult(x) => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("type", "tool_result")?;
                m.serialize_entry("tool_use_id", &x.tool_use_id)?;
                if let Some(content) = &x.content {
                    m.serialize_entry("content", content)?;
                }
                others(&mut m, &x.extra)?;
                m.end()
            }
            Block::ServerToolResult(x) => x.raw.serialize(s),
            Block::Unknown(v) => v.serialize(s),
            _ => api_block(b).serialize(s),
        }
    }
}

/// One message of [`api_view`].
#[derive(Serialize)]
struct ApiMessage<'a> {
    role: &'static str,
    content: Vec<Sent<'a>>,
    /// A system message's `clear_at`, as the caller gave it ([`SYSTEM_FIELDS`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    clear_at: Option<&'a Value>,
    /// A system message's `output_config`, as the caller gave it ([`SYSTEM_FIELDS`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<&'a Value>,
}

/// The fields of a system message the Messages API takes besides `role` and `content`: the
/// only ones the view sends of a system message it keeps in place. Another SDK's fields on it
/// (the AI SDK's `providerOptions`, OpenAI Chat's `name`) would make the API refuse the
/// request, as they are left out of user and assistant messages.
const SYSTEM_FIELDS: [&str; 2] = ["clear_at", "output_config"];

/// What [`to_api_messages`] gives, written by the serializer without building its JSON values
/// first (`toApiMessages` writes it as JSON text for the engine's `JSON.parse`).
pub fn api_view(messages: &[Message]) -> impl Serialize + '_ {
    let (groups, systems) = api_groups_with_systems(messages, None);
    groups
        .into_iter()
        .zip(systems)
        .map(|((role, content), system)| {
            let field = |k: &str| system.and_then(|m| m.extra.get(k));
            ApiMessage {
                role,
                content,
                clear_at: field(SYSTEM_FIELDS[0]),
                output_config: field(SYSTEM_FIELDS[1]),
            }
        })
        .collect::<Vec<_>>()
}

/// `b.to_value()[key].as_str()` without writing the block: a typed block is written as its
/// `type`, its own fields, then its other fields (`extra`, which wins over a field of the same
/// name: the later key of the written object).
fn block_field<'a>(b: &'a Block, key: &str) -> Option<&'a str> {
    let (name, extra, own): (&str, &'a serde_json::Map<String, Value>, Option<&'a str>) = match b {
        Block::Text(t) => ("text", &t.extra, (key == "text").then_some(t.text.as_str())),
        Block::Image(m) => ("image", &m.extra, None),
        Block::Document(m) => ("document", &m.extra, None),
        Block::ToolUse(t) => ("tool_use", &t.extra, tool_use_field(t, key)),
        Block::ServerToolUse(t) => ("server_tool_use", &t.extra, tool_use_field(t, key)),
        Block::ToolResult(r) => (
            "tool_result",
            &r.extra,
            (key == "tool_use_id").then_some(r.tool_use_id.as_str()),
        ),
        Block::Thinking(t) => (
            "thinking",
            &t.extra,
            (key == "thinking").then_some(t.thinking.as_str()),
        ),
        Block::RedactedThinking(t) => (
            "redacted_thinking",
            &t.extra,
            (key == "data").then_some(t.data.as_str()),
        ),
        Block::ServerToolResult(r) => return r.raw.get(key).and_then(Value::as_str),
        Block::Unknown(v) => return v.get(key).and_then(Value::as_str),
    };
    match extra.get(key) {
        Some(v) => v.as_str(),
        None if key == "type" => Some(name),
        None => own,
    }
}

fn tool_use_field<'a>(t: &'a crate::model::messages::ToolUseBlock, key: &str) -> Option<&'a str> {
    match key {
        "id" => Some(&t.id),
        "name" => Some(&t.name),
        _ => None,
    }
}

/// The blocks `m` sends.
fn sent_of(m: &Message) -> Vec<Sent<'_>> {
    if m.kind() == Kind::Attachment {
        let Some(a) = m.extra.get("attachment") else {
            return Vec::new();
        };
        // A file or skill this crate restored is sent naming it, as in API shape.
        let text = match (
            crate::transforms::restore::restored_attachment_text(a),
            a.get("content").and_then(Value::as_str),
        ) {
            (Some(t), _) => std::borrow::Cow::Owned(t),
            (None, Some(t)) => std::borrow::Cow::Borrowed(t),
            (None, None) => std::borrow::Cow::Owned(json_text(a)),
        };
        // An attachment with nothing to say (a hook that printed nothing) sends nothing: the
        // API refuses a text block without non-whitespace text.
        if text.trim().is_empty() {
            return Vec::new();
        }
        return vec![Sent::Text(text)];
    }
    // Claude Code writes each block of a streamed response as a line of its own, a leading
    // "\n\n" text included, and leaves such whitespace-only texts out of what it sends (the
    // API refuses a text block without non-whitespace text). A transcript line's blank text
    // is therefore not sent; an API message's is the caller's and stays (validateForApi
    // reports it).
    let blank = |t: &str| {
        if m.is_transcript() {
            t.trim().is_empty()
        } else {
            t.is_empty()
        }
    };
    match m.content() {
        None => Vec::new(),
        Some(Content::Text(t)) if blank(t) => Vec::new(),
        Some(Content::Text(t)) => vec![Sent::Text(std::borrow::Cow::Borrowed(t))],
        Some(Content::Blocks(bs)) => bs
            .iter()
            .filter(|b| !(m.is_transcript() && matches!(b, Block::Text(t) if blank(&t.text))))
            .map(Sent::Block)
            .collect(),
    }
}

/// A block as the API takes it: a call's free-form (string) input, which the Messages API
/// does not take, as `{"input": text}`.
fn api_block(b: &Block) -> Value {
    let mut v = b.to_value();
    if let (Block::ToolUse(t), Some(o)) = (b, v.as_object_mut()) {
        if let Some(Some(s @ Value::String(_))) = &t.input {
            let mut input = serde_json::Map::new();
            input.insert("input".into(), s.clone());
            o.insert("input".into(), Value::Object(input));
        }
    }
    v
}

/// `toApiMessages`: the messages to send, as `{role, content}` Messages API messages. All
/// lines of one response (same `message.id`) form one assistant message, even when Claude
/// Code wrote the tool results of its parallel calls between them; those results, and any
/// user lines until the next response, form the user message after it.
pub fn to_api_messages(messages: &[Message]) -> Vec<Value> {
    let (groups, systems) = api_groups_with_systems(messages, None);
    groups
        .into_iter()
        .zip(systems)
        .map(|((role, content), system)| {
            let content: Vec<Value> = content.into_iter().map(Sent::into_value).collect();
            let mut v = json!({"role": role, "content": content});
            if let (Some(m), Some(o)) = (system, v.as_object_mut()) {
                for k in SYSTEM_FIELDS {
                    if let Some(x) = m.extra.get(k) {
                        o.insert(k.to_string(), x.clone());
                    }
                }
            }
            v
        })
        .collect()
}

/// Whether `m` is a system message given as a message that the view sends in place: one of
/// the API's messages (`role: "system"` inside `messages`, the Messages API's beta form: an
/// instruction read there, a tool set change, a per-turn reminder), not a Claude Code line.
fn sent_in_place(m: &Message) -> bool {
    m.kind() == Kind::System && !m.is_transcript() && !m.is_sidechain()
}

/// The view's messages: each one's role and the blocks it sends.
type Groups<'a> = Vec<(&'static str, Vec<Sent<'a>>)>;

/// Where an API message (the caller's own message, not a transcript line) went in the view.
struct Placed {
    /// Its index in the messages.
    message: usize,
    /// Its role in the view.
    role: &'static str,
    /// The view message holding its blocks; for a message with nothing to send, the last
    /// view message of the messages before it (0 when none).
    at: usize,
    /// Its content is empty (`""` or `[]`): the view leaves it out.
    empty: bool,
}

/// The messages [`to_api_messages`] sends, as their roles and the blocks each sends, noting in `placed` where each API message (not a transcript line) went.
fn api_groups_noting<'a>(
    messages: &'a [Message],
    placed: Option<&mut Vec<Placed>>,
) -> Vec<(&'static str, Vec<Sent<'a>>)> {
    api_groups_with_systems(messages, placed).0
}

/// [`api_groups_noting`], with the system message each view message is (`None`: a user or
/// assistant message). System messages given as messages that open the conversation are left
/// out (they are the request's `system` parameter); one after the first message sent is sent
/// in place, as its own message (`role: "system"`, its content and other fields as given).
fn api_groups_with_systems<'a>(
    messages: &'a [Message],
    mut placed: Option<&mut Vec<Placed>>,
) -> (Groups<'a>, Vec<Option<&'a Message>>) {
    // After the last boundary line, or from the last message that begins with the API's
    // `compaction` block (the API reads nothing before it; the compaction closing the window
    // of OpenAI's `/responses/compact` starts nothing: crate::model::view starts_context).
    let start = (0..messages.len())
        .rev()
        .find(|&i| {
            let m = &messages[i];
            (m.is_compact_boundary()
                || (m.holds_compaction()
                    && !crate::model::messages::closes_compact_window(messages, i)))
                && !m.is_sidechain()
        })
        .map_or(0, |b| {
            if messages[b].is_compact_boundary() {
                b + 1
            } else {
                b
            }
        });
    let mut out: Vec<(&'static str, Vec<Sent>)> = Vec::new();
    // Whether each message of `out` holds a transcript line's blocks.
    let mut lines: Vec<bool> = Vec::new();
    // The open response: its id and its assistant message's index in `out`.
    let mut open: Option<(&str, usize)> = None;
    // User blocks seen while a response is open: they follow it, after all its lines; and
    // whether a transcript line gave some of them.
    let mut pending: Vec<Sent> = Vec::new();
    let mut pending_line = false;
    // The system message of each view message pushed in place (see above).
    let mut systems: Vec<(usize, &'a Message)> = Vec::new();
    let mut began = false;
    fn push<'a>(
        out: &mut Vec<(&'static str, Vec<Sent<'a>>)>,
        lines: &mut Vec<bool>,
        role: &'static str,
        blocks: Vec<Sent<'a>>,
        line: bool,
    ) {
        if blocks.is_empty() {
            return;
        }
        match out.last_mut() {
            Some((r, b)) if *r == role => {
                b.extend(blocks);
                if let Some(l) = lines.last_mut() {
                    *l |= line;
                }
            }
            _ => {
                out.push((role, blocks));
                lines.push(line);
            }
        }
    }
    for (k, m) in messages.iter().enumerate().skip(start) {
        if began && sent_in_place(m) {
            let pending_blocks = std::mem::take(&mut pending);
            push(&mut out, &mut lines, "user", pending_blocks, pending_line);
            pending_line = false;
            open = None;
            systems.push((out.len(), m));
            out.push(("system", sent_of(m)));
            lines.push(false);
            if let Some(placed) = placed.as_deref_mut() {
                placed.push(Placed {
                    message: k,
                    role: "system",
                    at: out.len() - 1,
                    empty: false,
                });
            }
            continue;
        }
        let Some(role) = role_of(m) else { continue };
        began = true;
        let blocks = sent_of(m);
        let line = m.is_transcript();
        // The last view message of the messages before it: the user blocks held back while
        // a response is open come as one message after it.
        let before = (out.len() + usize::from(!pending.is_empty())).saturating_sub(1);
        let sends = !blocks.is_empty();
        let at = if role == "assistant" {
            let id = m.message_id();
            match (&open, &id) {
                (Some((open_id, at)), Some(id)) if open_id == id => {
                    out[*at].1.extend(blocks);
                    *at
                }
                _ => {
                    let pending_blocks = std::mem::take(&mut pending);
                    push(&mut out, &mut lines, "user", pending_blocks, pending_line);
                    pending_line = false;
                    push(&mut out, &mut lines, "assistant", blocks, line);
                    open = match (id, out.last()) {
                        (Some(id), Some(("assistant", _))) => Some((id, out.len() - 1)),
                        _ => None,
                    };
                    out.len().saturating_sub(1)
                }
            }
        } else if open.is_some() {
            pending_line |= line && sends;
            pending.extend(blocks);
            out.len()
        } else {
            push(&mut out, &mut lines, "user", blocks, line);
            out.len().saturating_sub(1)
        };
        if let Some(placed) = placed.as_deref_mut() {
            if !line && m.kind() != Kind::Attachment {
                let empty = match m.content() {
                    Some(Content::Text(t)) => t.is_empty(),
                    Some(Content::Blocks(bs)) => bs.is_empty(),
                    None => false,
                };
                placed.push(Placed {
                    message: k,
                    role,
                    at: if sends { at } else { before },
                    empty,
                });
            }
        }
    }
    push(&mut out, &mut lines, "user", pending, pending_line);
    // Claude Code writes each tool result as a line of its own, and may write other user
    // lines (attachments, hook outputs, an interruption's text) between the results of
    // parallel calls or before them; merged into one user message, the API requires the
    // tool_result blocks first. A user message made of transcript lines sends its
    // tool_result blocks first, the others after them, each in its order. API messages are
    // sent in their own order (the API merges consecutive user messages as they are, and
    // validateForApi reports a result after another block).
    for ((role, content), line) in out.iter_mut().zip(lines) {
        if *role == "user" && line {
            // Stable: the results keep their order, the other blocks theirs.
            content.sort_by_key(|b| b.get("type") != Some("tool_result"));
        }
    }
    let mut of = vec![None; out.len()];
    for (at, m) in systems {
        of[at] = Some(m);
    }
    (out, of)
}

/// One broken API invariant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// Index in the API view (see [`to_api_messages`]).
    pub message: usize,
    /// What is wrong.
    pub problem: String,
}

/// The `key` strings of the blocks of type `ty` of `content`.
fn ids<'a>(content: &'a [Sent<'a>], ty: &'a str, key: &'a str) -> impl Iterator<Item = &'a str> {
    content
        .iter()
        .filter(move |b| b.get("type") == Some(ty))
        .filter_map(move |b| b.get(key))
}

/// The problem of the tool_result answering tool_use `id` placed after a `before` block.
fn not_first(id: &str, before: &str) -> String {
    format!(
        "tool_result of tool_use {id} comes after a {before} block (the tool_result blocks \
         answering tool_use must come first in the next message)"
    )
}

/// The `caller.tool_id` of a client `tool_use` as sent: the `server_tool_use` whose code
/// made the call (programmatic tool calling).
fn sent_caller<'a>(b: &Sent<'a>) -> Option<&'a str> {
    match b {
        Sent::Block(Block::ToolUse(t)) => crate::model::view::caller_of(&t.extra),
        _ => None,
    }
}

/// The type and `tool_use_id` of each server tool result of `content` (a `…_tool_result`
/// block other than a client `tool_result`).
fn server_results<'a>(content: &'a [Sent<'a>]) -> impl Iterator<Item = (&'a str, &'a str)> {
    content.iter().filter_map(|b| {
        let ty = b
            .get("type")
            .filter(|t| *t != "tool_result" && t.ends_with("_tool_result"))?;
        Some((ty, b.get("tool_use_id")?))
    })
}

/// Of the server tool calls `waiting`, which called client tools from their code
/// (programmatic tool calling), those whose result can no longer come after the messages
/// that hold them (`after`, the view after their message). A call's result may come in the
/// first later assistant message, or that message calls more client tools from the same code
/// (then the next one is looked at), or is the last message (a paused turn); a conversation
/// that ends before (with the client tools' results) is waiting for it. One pass over `after`
/// for all of them: each assistant message's results and callers are read once.
fn programmatic_results_missing<'a>(
    after: &[(&'static str, Vec<Sent<'_>>)],
    mut waiting: Vec<&'a str>,
) -> std::collections::HashSet<&'a str> {
    let mut missing = std::collections::HashSet::new();
    for (k, (role, content)) in after.iter().enumerate() {
        if waiting.is_empty() {
            break;
        }
        if *role != "assistant" {
            continue;
        }
        let results: std::collections::HashSet<&str> =
            server_results(content).map(|(_, r)| r).collect();
        let again: std::collections::HashSet<&str> =
            content.iter().filter_map(sent_caller).collect();
        let last = k + 1 == after.len();
        waiting.retain(|&id| {
            if results.contains(id) {
                return false;
            }
            if !again.contains(id) && !last {
                missing.insert(id);
                return false;
            }
            true
        });
    }
    missing
}

/// What the Messages API refuses in an image or document block of the view (or one inside a
/// tool result's content), `None` when nothing: a block without a `source` object; a base64
/// source whose `data` is not a non-empty string, or is a data URL (the API takes the base64
/// text after its comma), or that has no `media_type`; a `url` source without a URL; a
/// `file` source without a `file_id`; a `text` source whose `data` is not a string. A source
/// of a type the API may add later is not judged.
fn sent_media_problem(b: &Sent<'_>) -> Option<String> {
    match b {
        Sent::Block(Block::ToolResult(r)) => match &r.content {
            Some(Some(crate::model::messages::ToolResultContent::Blocks(inner))) => {
                inner.iter().find_map(media_problem)
            }
            _ => None,
        },
        Sent::Block(b) => media_problem(b),
        Sent::Text(_) => None,
    }
}

/// [`sent_media_problem`] of an image or document block (`None` for any other block).
fn media_problem(b: &Block) -> Option<String> {
    match b {
        Block::Image(m) => media_source_problem("image", m.source()),
        Block::Document(m) => media_source_problem("document", m.source()),
        _ => None,
    }
}

/// [`sent_media_problem`] of one `{type: kind, source}` block, given its `source`.
pub fn media_source_problem(kind: &str, source: Option<&Value>) -> Option<String> {
    let a = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    let Some(source) = source.filter(|s| s.is_object()) else {
        return Some(format!("{a} {kind} block without a source object"));
    };
    let text = |key: &str| source.get(key).and_then(Value::as_str);
    let what = match source.get("type").and_then(Value::as_str)? {
        "base64" => match text("data") {
            None | Some("") => "a base64 source without data (source.data must be a non-empty base64 string)",
            Some(d) if d.starts_with("data:") => {
                "a base64 source whose data is a data URL (source.data takes the base64 text after its comma)"
            }
            Some(_) if text("media_type").is_none_or(str::is_empty) => {
                "a base64 source without a media_type"
            }
            Some(_) => return None,
        },
        "url" if text("url").is_none_or(str::is_empty) => "a url source without a URL",
        "file" if text("file_id").is_none_or(str::is_empty) => "a file source without a file_id",
        "text" if text("data").is_none() => "a text source whose data is not a string",
        _ => return None,
    };
    Some(format!("{a} {kind} block with {what}"))
}

/// `validateForApi`: the problems the Messages API would reject (an empty list means
/// valid): no message, a first message that is not a user message, empty content or an
/// empty text block, an image or document block whose source the API refuses (no data, a
/// data URL as base64 data, no media type or URL: [`media_source_problem`]), a tool call id
/// used twice, a
/// `tool_use` not answered by a `tool_result` in the very next message, a `tool_result`
/// without its `tool_use` right before, a `tool_result` answering the message before that
/// comes after another block of its message (a user message between a call and its result,
/// merged with it), a server tool call without its result in the same
/// message (except in the last message: a turn the API paused, continued by sending it back;
/// and a call whose code called client tools — programmatic tool calling, a `tool_use` whose
/// `caller` names it — whose result comes in the assistant message after their results), a
/// server tool result that answers no call of its message or an earlier one; and, last, each
/// of the caller's messages (not transcript lines) with empty content (`""` or `[]`) but a
/// final assistant one: the view leaves it out, but the API refuses such a message when the
/// messages are sent as they are (only the final assistant message, a prefill, may be
/// empty). Its problem is placed at the view message before it.
pub fn validate_for_api(messages: &[Message]) -> Vec<Problem> {
    validate(messages, Some(&[]), true)
}

/// How the caller's messages reached [`validate_as_given`].
#[derive(Clone, Copy, Debug)]
pub struct AsGiven<'a> {
    /// Read from another ecosystem's shape: never sent to the Messages API as they are (only
    /// their API view is), so only the view is checked.
    pub converted: bool,
    /// Declared Anthropic's (`shape: 'anthropic'`), not detected: their empty content is
    /// checked as the API reads them. `[user, {role: 'assistant', content: ''}, user]` fits
    /// OpenAI Chat and the AI SDK as well, where such a message is valid, so detected
    /// messages are not reported for it.
    pub declared: bool,
    /// The indices (ascending) of the messages holding a lone UTF-16 surrogate, which the
    /// caller's messages may hold (JavaScript strings can; Rust strings cannot, so the typed
    /// messages hold U+FFFD in its place, as the view does): the API refuses the JSON text
    /// `JSON.stringify` writes of one (a `\ud800` escape unpaired). Transcript lines are not
    /// reported (they are sent through their view).
    pub lone: &'a [usize],
}

/// [`validate_for_api`] of the caller's messages as they reached the library (`validateForApi`):
/// the view's checks, and those of the messages as given that `given` allows.
pub fn validate_as_given(messages: &[Message], given: AsGiven<'_>) -> Vec<Problem> {
    if given.converted {
        validate(messages, None, false)
    } else {
        validate(messages, Some(given.lone), given.declared)
    }
}

/// The checks of [`validate_for_api`]; with `given` (the indices of the messages holding a
/// lone surrogate), those of the caller's own messages as given too (their empty content only
/// with `empty`).
fn validate(messages: &[Message], given: Option<&[usize]>, empty: bool) -> Vec<Problem> {
    use std::collections::HashSet;
    // Checked on the view's blocks as they are borrowed from the messages: the same view as
    // `toApiMessages`'s, read as its JSON would be, without writing it (tests/properties.rs
    // checks both agree with the checks on the JSON of `to_api_messages`).
    let mut placed = Vec::new();
    let view = api_groups_noting(messages, given.is_some().then_some(&mut placed));
    let mut problems = Vec::new();
    let mut say = |message: usize, problem: String| problems.push(Problem { message, problem });
    if view.is_empty() {
        say(0, "there is no message to send".into());
        return problems;
    }
    let compaction_first = view[0].1.first().and_then(|b| b.get("type"))
        == Some(crate::model::messages::COMPACTION_BLOCK);
    if view[0].0 != "user" && !compaction_first {
        say(
            0,
            "the first message must be a user message (or begin with a compaction block)".into(),
        );
    }
    // Every tool call's id, across the conversation: the API requires them unique.
    let mut seen_calls: HashSet<&str> = HashSet::new();
    // Every block id up to the message checked: a server tool's result answers one of them.
    let mut seen_ids: HashSet<&str> = HashSet::new();
    for (i, (role, content)) in view.iter().enumerate() {
        // A system message may hold its `output_config` only (the API takes it then).
        if content.is_empty() && *role != "system" {
            say(i, "empty content".into());
        }
        // The API refuses a text block with no text and one of whitespace only alike.
        if content.iter().any(|b| {
            b.get("type") == Some("text") && b.get("text").is_some_and(|t| t.trim().is_empty())
        }) {
            say(
                i,
                "an empty or blank text block (text blocks must contain non-whitespace text)"
                    .into(),
            );
        }
        for problem in content.iter().filter_map(sent_media_problem) {
            say(i, problem);
        }
        for id in ids(content, "tool_use", "id").chain(ids(content, "server_tool_use", "id")) {
            if !seen_calls.insert(id) {
                say(i, format!("tool_use id {id} is used more than once"));
            }
        }
        // A server tool's result answers a call of its own message, or of an earlier one (a
        // server tool whose code called client tools: programmatic tool calling).
        seen_ids.extend(content.iter().filter_map(|b| b.get("id")));
        for (ty, id) in server_results(content) {
            if !seen_ids.contains(id) {
                say(i, format!("{ty} {id} answers no server_tool_use before it"));
            }
        }
        if *role == "assistant" {
            let answered: HashSet<&str> = match view.get(i + 1) {
                Some(("user", next)) => ids(next, "tool_result", "tool_use_id").collect(),
                _ => HashSet::new(),
            };
            for c in ids(content, "tool_use", "id") {
                if !answered.contains(c) {
                    say(
                        i,
                        format!("tool_use {c} has no tool_result in the next message"),
                    );
                }
            }
            // A server tool call without its result ends a turn the API paused
            // (`stop_reason: "pause_turn"`): sent back as it is, as the last message, the
            // turn continues. Anywhere else its result is missing.
            let paused = i + 1 == view.len();
            if !paused {
                let server_results: HashSet<&str> = content
                    .iter()
                    .filter(|b| b.get("type").is_some_and(|t| t.ends_with("_tool_result")))
                    .filter_map(|b| b.get("tool_use_id"))
                    .collect();
                // Calls whose code called client tools (programmatic tool calling): their
                // results come after those tools' results, in a later assistant message.
                let callers: HashSet<&str> = content.iter().filter_map(sent_caller).collect();
                let waiting = ids(content, "server_tool_use", "id")
                    .filter(|c| !server_results.contains(c) && callers.contains(c))
                    .collect();
                let missing = programmatic_results_missing(&view[i + 1..], waiting);
                for c in ids(content, "server_tool_use", "id") {
                    if server_results.contains(c) {
                        continue;
                    }
                    if callers.contains(c) {
                        if missing.contains(c) {
                            say(
                                i,
                                format!(
                                    "server_tool_use {c} has no result in the response after \
                                     the results of the client tools its code called"
                                ),
                            );
                        }
                        continue;
                    }
                    say(
                        i,
                        format!("server_tool_use {c} has no result in the same message"),
                    );
                }
            }
        } else {
            let previous_calls: HashSet<&str> = match i.checked_sub(1).map(|p| &view[p]) {
                Some(("assistant", previous)) => ids(previous, "tool_use", "id").collect(),
                _ => HashSet::new(),
            };
            for r in ids(content, "tool_result", "tool_use_id") {
                if !previous_calls.contains(r) {
                    say(i, format!("tool_result {r} does not follow its tool_use"));
                }
            }
            // The results answering the calls come first, before any other block: the API
            // refuses a message following tool_use blocks that does not begin with their
            // tool_result blocks (a user message between a call and its result, merged with
            // it, puts its text first).
            let first_other = content
                .iter()
                .position(|b| b.get("type") != Some("tool_result"));
            if let Some(k) = first_other {
                let before = content[k].get("type").unwrap_or("untyped");
                for r in ids(&content[k..], "tool_result", "tool_use_id") {
                    if previous_calls.contains(r) {
                        say(i, not_first(r, before));
                    }
                }
            }
        }
    }
    // The caller's own messages with empty content, which the view leaves out: sent as they
    // are, the API refuses every one but a final assistant message (an empty prefill).
    let last_sent = messages.iter().rposition(|m| role_of(m).is_some());
    for p in placed.iter().filter(|p| empty && p.empty) {
        let (k, role) = (p.message, p.role);
        if role == "assistant" && Some(k) == last_sent {
            continue;
        }
        say(
            p.at,
            format!(
                "messages[{k}] ({role}) has empty content: the API refuses it anywhere but as \
                 the final assistant message (toApiMessages leaves it out)"
            ),
        );
    }
    // The caller's messages holding a lone surrogate (text cut inside a surrogate pair).
    let lone = given.unwrap_or(&[]);
    if !lone.is_empty() {
        for p in &placed {
            if lone.binary_search(&p.message).is_ok() {
                say(
                    p.at,
                    format!(
                        "messages[{}] holds a lone UTF-16 surrogate (text cut inside a \
                         surrogate pair?): the API refuses the request body as invalid JSON \
                         (toApiMessages writes U+FFFD in its place)",
                        p.message
                    ),
                );
            }
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::transforms::test_fixtures::ptc;

    /// The Messages API's beta form: a system message inside `messages` is read there (an
    /// instruction, a tool set change, a per-turn reminder). The view sends it in place with
    /// its other fields; those that open the conversation are the `system` parameter's.
    #[test]
    fn system_messages_after_the_first_message_are_sent_in_place() {
        let messages = m(json!([
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "start"},
            {"role": "system", "clear_at": "next_user_message", "content": [
                {"type": "text", "text": "From now on answer in French."},
                {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "deploy"}}]},
            {"role": "assistant", "content": "ok"},
            {"role": "system", "output_config": {"effort": "low"}, "name": "ops",
             "providerOptions": {"x": {}}},
            {"role": "user", "content": "go"}
        ]));
        let view = to_api_messages(&messages);
        let roles: Vec<&str> = view.iter().map(|v| v["role"].as_str().unwrap()).collect();
        assert_eq!(roles, ["user", "system", "assistant", "system", "user"]);
        assert_eq!(view[1]["clear_at"], "next_user_message");
        assert_eq!(view[1]["content"][1]["type"], "tool_addition");
        assert_eq!(view[3]["output_config"]["effort"], "low");
        // Another SDK's fields on a system message are not sent (the API refuses them).
        assert_eq!(view[3].as_object().unwrap().len(), 3, "{}", view[3]);
        assert!(!serde_json::to_string(&view).unwrap().contains("terse"));
        // The serializer writes the same.
        let written = serde_json::to_value(api_view(&messages)).unwrap();
        assert_eq!(written, Value::Array(view));
        assert_eq!(validate_for_api(&messages), vec![]);
    }

    /// Programmatic tool calling: a `server_tool_use` whose code called a client tool gets
    /// its result in the assistant message after the client tool's result; a conversation
    /// ending before it is waiting for it. Without a result after, or without a caller
    /// naming it, it is a problem, and so is a server result that answers no call.
    #[test]
    fn a_programmatic_server_call_gets_its_result_in_a_later_message() {
        let problems = |v: Vec<Value>| validate_for_api(&m(Value::Array(v)));
        let one = ptc(0, 1);
        assert_eq!(problems(one.clone()), vec![]);
        assert_eq!(problems([ptc(0, 1), ptc(1, 1)].concat()), vec![]);
        // Waiting: the client tool's result sent, the server result not come yet.
        assert_eq!(problems(one[..3].to_vec()), vec![]);
        // The code calls a second client tool before it finishes.
        let again = json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_b", "name": "get", "input": {},
             "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_0"}}]});
        let answer = json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_b", "content": "r"}]});
        let chain = [&one[..3], &[again, answer], &one[3..]].concat();
        assert_eq!(problems(chain.clone()), vec![]);
        assert_eq!(problems(chain[..5].to_vec()), vec![]);
        // The next response does not hold the result and calls nothing from the code.
        let mut missing = one[..3].to_vec();
        missing.push(json!({"role": "assistant", "content": "done"}));
        missing.push(json!({"role": "user", "content": "ok"}));
        let p = problems(missing);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].message, 1);
        assert!(p[0]
            .problem
            .contains("server_tool_use srvtoolu_0 has no result"));
        // A caller naming another server call does not make it programmatic.
        let mut other = one.clone();
        other[1]["content"][2]["caller"]["tool_id"] = json!("srvtoolu_x");
        let p = problems(other);
        assert!(p
            .iter()
            .any(|p| p.problem == "server_tool_use srvtoolu_0 has no result in the same message"));
        // A server result whose call is gone.
        let mut orphan = vec![json!({"role": "user", "content": "q"})];
        orphan.extend_from_slice(&one[3..]);
        orphan.push(json!({"role": "user", "content": "thanks"}));
        let p = problems(orphan);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(
            p[0].problem,
            "code_execution_tool_result srvtoolu_0 answers no server_tool_use before it"
        );
        // The API view keeps the call's `caller` as it is.
        let sent = to_api_messages(&m(Value::Array(one.clone())));
        assert_eq!(
            sent[1]["content"][2]["caller"],
            one[1]["content"][2]["caller"]
        );
    }

    /// The caller's API message with empty content (`""` or `[]`) is left out of the view
    /// (its neighbours merge there) but reported, wherever the API refuses it: anywhere but
    /// as the final assistant message. Transcript lines with nothing to send are not.
    #[test]
    fn an_empty_api_message_is_reported_unless_it_is_the_final_assistant_one() {
        let problems = |v: Value| validate_for_api(&m(v));
        let user = json!({"role": "user", "content": "hi"});
        let again = json!({"role": "user", "content": "again"});
        for empty in [json!(""), json!([])] {
            let a = json!({"role": "assistant", "content": empty});
            let u = json!({"role": "user", "content": empty});
            let mid = json!([user, a, again]);
            assert_eq!(to_api_messages(&m(mid.clone())).len(), 1);
            // Read from another shape (never sent as given), only the view is checked.
            assert_eq!(
                validate_as_given(
                    &m(mid.clone()),
                    AsGiven {
                        converted: true,
                        declared: true,
                        lone: &[],
                    },
                ),
                vec![]
            );
            let p = problems(mid);
            assert_eq!(p.len(), 1, "{p:?}");
            assert_eq!(p[0].message, 0);
            assert!(p[0]
                .problem
                .starts_with("messages[1] (assistant) has empty content"));
            // A final (prefill) assistant message may be empty.
            assert_eq!(problems(json!([user, a])), vec![]);
            let done = json!({"role": "assistant", "content": "done"});
            assert_eq!(problems(json!([user, done, a])), vec![]);
            // An empty user message is refused anywhere, the last one too.
            let p = problems(json!([user, done, u]));
            assert_eq!(p.len(), 1, "{p:?}");
            assert_eq!(p[0].message, 1);
            assert!(p[0]
                .problem
                .starts_with("messages[2] (user) has empty content"));
            // Two of them, each reported.
            assert_eq!(problems(json!([u, user, a, done, again])).len(), 2);
        }
        // A transcript line with nothing to send is not the caller's message to send.
        let line = |ty: &str, uuid: &str, content: Value| {
            json!({"type": ty, "uuid": uuid, "parentUuid": null, "sessionId": "s",
                   "message": {"role": ty, "content": content}})
        };
        let lines = json!([
            line("user", "u1", json!("hi")),
            line("assistant", "a1", json!([])),
            line("user", "u2", json!("again"))
        ]);
        assert_eq!(problems(lines), vec![]);
    }

    /// The caller's messages found holding a lone surrogate are reported at the view message
    /// their blocks went to; transcript lines (sent through their view, where U+FFFD stands in
    /// its place) are not.
    #[test]
    fn a_message_with_a_lone_surrogate_is_reported_where_it_is_sent() {
        let v = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "a\u{fffd}b"},
            {"role": "user", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "x\u{fffd}"}]},
            {"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "s",
             "message": {"role": "user", "content": "line"}}
        ]);
        let msgs = m(v);
        assert_eq!(validate_for_api(&msgs), vec![]);
        let p = validate_as_given(
            &msgs,
            AsGiven {
                converted: false,
                declared: true,
                lone: &[1, 3, 4],
            },
        );
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!((p[0].message, p[1].message), (1, 2));
        assert!(p[0]
            .problem
            .starts_with("messages[1] holds a lone UTF-16 surrogate"));
        assert!(p[1]
            .problem
            .starts_with("messages[3] holds a lone UTF-16 surrogate"));
        // Read from another shape, only the view is checked.
        assert_eq!(
            validate_as_given(
                &msgs,
                AsGiven {
                    converted: true,
                    declared: true,
                    lone: &[1, 3, 4],
                },
            ),
            vec![]
        );
    }

    /// A call's free-form input (an OpenAI custom tool's) goes to the API as the object the
    /// Messages API takes.
    #[test]
    fn a_free_form_call_input_is_sent_as_an_object() {
        let m = Message::parse_all(json!([
            {"role": "user", "content": "patch it"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "c", "name": "apply_patch", "input": "*** Begin Patch"},
                {"type": "tool_use", "id": "d", "name": "Read", "input": {"file_path": "/a"}}]}]))
        .unwrap();
        let api = to_api_messages(&m);
        assert_eq!(
            api[1]["content"][0]["input"],
            json!({"input": "*** Begin Patch"})
        );
        assert_eq!(api[1]["content"][1]["input"], json!({"file_path": "/a"}));
    }

    #[test]
    fn a_compaction_block_starts_what_is_sent() {
        let m = Message::parse_all(json!([
            {"role": "user", "content": "old request"},
            {"role": "assistant", "content": "old answer"},
            {"role": "assistant", "content": [
                {"type": "compaction", "content": "Summary of the work so far.", "encrypted_content": "Eq=="},
                {"type": "text", "text": "Continuing."}]},
            {"role": "user", "content": "next"}
        ]))
        .unwrap();
        let view = to_api_messages(&m);
        assert_eq!(view.len(), 2);
        assert_eq!(view[0]["content"][0]["type"], "compaction");
        assert!(
            validate_for_api(&m).is_empty(),
            "{:?}",
            validate_for_api(&m)
        );
        // A failed compaction (`content: null`) changes nothing.
        let failed = Message::parse_all(json!([
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": [{"type": "compaction", "content": null}, {"type": "text", "text": "b"}]}
        ]))
        .unwrap();
        assert_eq!(to_api_messages(&failed).len(), 2);
    }

    fn m(v: Value) -> Vec<Message> {
        Message::parse_all(v).unwrap()
    }

    /// A split Claude Code response often begins with a line of "\n\n" text before its
    /// thinking; Claude Code does not send it, and the API would refuse it. An API message's
    /// own blank text stays, for validateForApi to report.
    #[test]
    fn a_transcript_lines_whitespace_only_text_is_not_sent() {
        let msgs = m(json!([
            {"type": "user", "message": {"role": "user", "content": "go"}},
            {"type": "assistant", "message": {"id": "r1", "role": "assistant", "content": [{"type": "text", "text": "\n\n"}]}},
            {"type": "assistant", "message": {"id": "r1", "role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]}},
            {"type": "assistant", "message": {"id": "r1", "role": "assistant", "content": [{"type": "text", "text": "done"}]}},
            {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": " "}, {"type": "text", "text": "ok"}]}},
        ]));
        let v = to_api_messages(&msgs);
        assert_eq!(v.len(), 3);
        assert_eq!(v[1]["content"].as_array().unwrap().len(), 2);
        assert_eq!(v[1]["content"][0]["type"], "thinking");
        assert_eq!(v[2]["content"], json!([{"type": "text", "text": "ok"}]));
        assert!(
            validate_for_api(&msgs).is_empty(),
            "{:?}",
            validate_for_api(&msgs)
        );
        // Only whitespace: the response sends nothing, the line is left out.
        let only = m(json!([
            {"type": "user", "message": {"role": "user", "content": "go"}},
            {"type": "assistant", "message": {"id": "r1", "role": "assistant", "content": [{"type": "text", "text": "\n"}]}},
            {"type": "assistant", "message": {"id": "r1", "role": "assistant", "content": [{"type": "text", "text": "hi"}]}},
        ]));
        assert_eq!(
            to_api_messages(&only)[1]["content"],
            json!([{"type": "text", "text": "hi"}])
        );
        let api = m(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "text", "text": "\n\n"}, {"type": "text", "text": "hi"}]},
        ]));
        assert_eq!(
            to_api_messages(&api)[1]["content"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(validate_for_api(&api).len(), 1);
    }

    #[test]
    fn transcript_lines_become_api_messages() {
        let msgs = m(json!([
            {"type": "user", "message": {"role": "user", "content": "old"}},
            {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
            {"type": "user", "isCompactSummary": true, "message": {"role": "user", "content": "summary"}},
            {"type": "attachment", "attachment": {"type": "restored_file", "content": "file text"}},
            {"type": "attachment", "attachment": {"type": "hook_success", "content": "", "stdout": ""}},
            {"type": "attachment", "attachment": {"type": "hook_success", "content": " \n"}},
            {"type": "assistant", "message": {"role": "assistant", "id": "a", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}},
            {"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}},
            {"type": "assistant", "message": {"role": "assistant", "id": "a", "content": [{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]}},
            {"type": "progress", "data": {}},
            {"type": "user", "isSidechain": true, "message": {"role": "user", "content": "side"}}
        ]));
        let v = to_api_messages(&msgs);
        // summary + attachment (the empty hook outputs send nothing); both lines of response
        // a; the result of t1.
        assert_eq!(v.len(), 3);
        assert_eq!(
            v[0]["content"].as_array().unwrap().len(),
            2,
            "summary + attachment"
        );
        assert_eq!(v[1]["content"].as_array().unwrap().len(), 2, "one response");
        assert!(!serde_json::to_string(&v).unwrap().contains("old"));
        let problems = validate_for_api(&msgs);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].problem.contains("t2"));
    }

    #[test]
    fn parallel_calls_with_interleaved_results_form_one_turn() {
        let a = |id: &str| {
            json!({"type": "assistant", "message": {"role": "assistant", "id": "r1",
            "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {}}]}})
        };
        let u = |id: &str| {
            json!({"type": "user", "message": {"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": id, "content": "x"}]}})
        };
        let msgs = m(json!([
            {"type": "user", "message": {"role": "user", "content": "go"}},
            a("t1"), u("t1"), a("t2"), a("t3"), u("t3"), u("t2"),
            {"type": "assistant", "message": {"role": "assistant", "id": "r2", "content": [{"type": "text", "text": "done"}]}}
        ]));
        let v = to_api_messages(&msgs);
        assert_eq!(v.len(), 4);
        assert_eq!(v[1]["content"].as_array().unwrap().len(), 3);
        assert_eq!(v[2]["content"].as_array().unwrap().len(), 3);
        assert!(
            validate_for_api(&msgs).is_empty(),
            "{:?}",
            validate_for_api(&msgs)
        );
    }

    #[test]
    fn a_media_source_the_api_refuses_is_a_problem() {
        let problems = |source: Value, kind: &str| -> Vec<String> {
            let msgs = json!([{"role": "user", "content": [
                {"type": "text", "text": "see"}, {"type": kind, "source": source}
            ]}]);
            validate_for_api(&m(msgs))
                .into_iter()
                .map(|p| p.problem)
                .collect()
        };
        let b64 = |data: Value| json!({"type": "base64", "media_type": "image/png", "data": data});
        let no_data = "an image block with a base64 source without data (source.data must be a non-empty base64 string)";
        assert_eq!(problems(b64(json!(5)), "image"), [no_data]);
        assert_eq!(problems(b64(json!("")), "image"), [no_data]);
        assert_eq!(problems(b64(json!(null)), "image"), [no_data]);
        assert_eq!(
            problems(b64(json!("data:image/png;base64,iVBORw0KGgo=")), "image"),
            ["an image block with a base64 source whose data is a data URL (source.data takes the base64 text after its comma)"]
        );
        assert_eq!(
            problems(json!({"type": "base64", "data": "JVBERi0="}), "document"),
            ["a document block with a base64 source without a media_type"]
        );
        assert_eq!(
            problems(json!({"type": "url", "url": 5}), "image"),
            ["an image block with a url source without a URL"]
        );
        assert_eq!(
            problems(json!({"type": "file"}), "document"),
            ["a document block with a file source without a file_id"]
        );
        assert_eq!(
            problems(
                json!({"type": "text", "media_type": "text/plain", "data": 1}),
                "document"
            ),
            ["a document block with a text source whose data is not a string"]
        );
        assert_eq!(
            problems(json!("iVBORw0KGgo="), "image"),
            ["an image block without a source object"]
        );
        // What the API takes, and a source type it may add later, are not problems.
        for (source, kind) in [
            (b64(json!("iVBORw0KGgo=")), "image"),
            (
                json!({"type": "url", "url": "https://example.com/a.png"}),
                "image",
            ),
            (json!({"type": "file", "file_id": "file_1"}), "document"),
            (
                json!({"type": "text", "media_type": "text/plain", "data": ""}),
                "document",
            ),
            (json!({"type": "content", "content": "x"}), "document"),
            (json!({"type": "future_kind", "ref": 1}), "image"),
        ] {
            assert!(problems(source.clone(), kind).is_empty(), "{source}");
        }
        // Inside a tool result's content too.
        let nested = json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Shot", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": [
                {"type": "image", "source": b64(json!(""))}
            ]}]}
        ]);
        let found: Vec<_> = validate_for_api(&m(nested))
            .into_iter()
            .map(|p| (p.message, p.problem))
            .collect();
        assert_eq!(found, [(2, no_data.to_string())]);
    }

    #[test]
    fn an_empty_text_block_and_a_reused_tool_id_are_problems() {
        let problems = |v: Value| -> Vec<String> {
            validate_for_api(&m(v))
                .into_iter()
                .map(|p| p.problem)
                .collect()
        };
        let empty_text = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": ""}]}
        ]);
        assert_eq!(
            problems(empty_text),
            ["an empty or blank text block (text blocks must contain non-whitespace text)"]
        );
        let blank_text = json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": " \n\t"}]}
        ]);
        assert_eq!(
            problems(blank_text),
            ["an empty or blank text block (text blocks must contain non-whitespace text)"]
        );
        let call = |id: &str| json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {}}]});
        let result = |id: &str| json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "r"}]});
        let twice = json!([{"role": "user", "content": "go"}, call("t1"), result("t1"), call("t1"), result("t1")]);
        assert_eq!(problems(twice), ["tool_use id t1 is used more than once"]);
        let distinct = json!([{"role": "user", "content": "go"}, call("t1"), result("t1"), call("t2"), result("t2")]);
        assert!(problems(distinct).is_empty());
    }

    #[test]
    fn detects_each_problem() {
        assert!(!validate_for_api(&[]).is_empty());
        let first_assistant = m(json!([{"role": "assistant", "content": "hi"}]));
        assert!(validate_for_api(&first_assistant)[0]
            .problem
            .contains("first message"));
        let orphan = m(json!([
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x", "content": "r"}]}
        ]));
        assert!(validate_for_api(&orphan)[0]
            .problem
            .contains("does not follow"));
        let ok = m(json!([
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": [{"type": "server_tool_use", "id": "s", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": "s", "content": []}]}
        ]));
        assert!(validate_for_api(&ok).is_empty());
    }

    /// The tool_result blocks answering a call come first in the next message: text before
    /// them (in the message, or a user message of its own merged with the results) is a
    /// problem naming the message and the call.
    #[test]
    fn a_tool_result_after_another_block_is_a_problem() {
        let call = json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {}},
            {"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]});
        let result = |id: &str| json!({"type": "tool_result", "tool_use_id": id, "content": "r"});
        let go = json!({"role": "user", "content": "go"});
        // In one message.
        let within = validate_for_api(&m(json!([go, call,
            {"role": "user", "content": [{"type": "text", "text": "also b"}, result("t1"), result("t2")]}])));
        assert_eq!(
            within,
            ["t1", "t2"].map(|id| Problem {
                message: 2,
                problem: not_first(id, "text")
            })
        );
        // A user message between the call and its results.
        let between = validate_for_api(&m(json!([go, call,
            {"role": "user", "content": "also b"},
            {"role": "user", "content": [result("t1"), result("t2")]}])));
        assert_eq!(between.len(), 2, "{between:?}");
        assert_eq!(between[0].message, 2);
        assert!(between[0].problem.contains("tool_use t1"));
        // Between two results: only the later one.
        let middle = validate_for_api(&m(json!([go, call,
            {"role": "user", "content": [result("t1"), {"type": "text", "text": "also b"}, result("t2")]}])));
        assert_eq!(
            middle,
            [Problem {
                message: 2,
                problem: not_first("t2", "text")
            }]
        );
        // Results first, text after: valid.
        let after = validate_for_api(&m(json!([go, call,
            {"role": "user", "content": [result("t1"), result("t2"), {"type": "text", "text": "also b"}]}])));
        assert!(after.is_empty(), "{after:?}");
        // A result answering no call of the message before is reported once, as such.
        let orphan = validate_for_api(&m(json!([go, {"role": "assistant", "content": "hi"},
            {"role": "user", "content": [{"type": "text", "text": "x"}, result("t9")]}])));
        assert_eq!(orphan.len(), 1, "{orphan:?}");
        assert!(orphan[0].problem.contains("does not follow"));
    }

    /// Claude Code writes each tool result as a line of its own and other user lines (hook
    /// outputs, attachments, an interruption's text) around them: the user message they are
    /// merged into sends the results first, as the API requires, the other blocks after them
    /// A file or skill restored as a transcript attachment line is sent naming it, with the
    /// same text the API-shape restoration sends.
    #[test]
    fn restored_files_and_skills_in_transcript_lines_are_sent_with_their_names() {
        use crate::transforms::restore::{
            file_attachment_message, file_attachment_text, skill_attachment_message,
            skill_attachment_text, RestoredFile, RestoredSkill,
        };
        let file = RestoredFile {
            path: "/repo/src/lib.rs".into(),
            content: "pub fn f() {}".into(),
            tokens: 4,
            truncated: true,
        };
        let skill = RestoredSkill {
            name: "release-notes".into(),
            content: "Write the notes.".into(),
            tokens: 4,
            truncated: false,
        };
        let mut msgs = m(json!([{"type": "user", "message": {"role": "user", "content": "go"}}]));
        msgs.push(file_attachment_message(&file, true, Some("a1")));
        msgs.push(skill_attachment_message(&skill, true, Some("a2")));
        let v = to_api_messages(&msgs);
        let texts: Vec<&str> = v[0]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            texts,
            [
                "go",
                file_attachment_text(&file).as_str(),
                skill_attachment_text(&skill).as_str()
            ]
        );
        assert!(texts[1].contains("/repo/src/lib.rs") && texts[1].contains("only the beginning"));
        assert!(texts[2].contains("release-notes"));
        // Another attachment with a string content is still sent as that content.
        let other = m(
            json!([{"type": "attachment", "attachment": {"type": "restored_file", "content": "no path"}}]),
        );
        assert_eq!(to_api_messages(&other)[0]["content"][0]["text"], "no path");
    }

    /// in their order.
    #[test]
    fn transcript_lines_merged_send_their_tool_results_first() {
        let a = |id: &str| {
            json!({"type": "assistant", "message": {"role": "assistant", "id": "r1",
            "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {}}]}})
        };
        let u = |id: &str| {
            json!({"type": "user", "message": {"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": id, "content": "x"}]}})
        };
        let hook = |t: &str| json!({"type": "attachment", "attachment": {"type": "hook_success", "content": t}});
        let msgs = m(json!([
            {"type": "user", "message": {"role": "user", "content": "go"}},
            a("t1"), hook("busy 1"), u("t1"), a("t2"), u("t2"), hook("busy 2"),
            {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}]}},
        ]));
        let v = to_api_messages(&msgs);
        assert_eq!(v.len(), 3);
        let types: Vec<&str> = v[2]["content"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            ["tool_result", "tool_result", "text", "text", "text"]
        );
        assert_eq!(v[2]["content"][0]["tool_use_id"], "t1");
        assert_eq!(v[2]["content"][2]["text"], "busy 1");
        assert_eq!(
            serde_json::to_value(api_view(&msgs)).unwrap(),
            Value::Array(v)
        );
        assert!(
            validate_for_api(&msgs).is_empty(),
            "{:?}",
            validate_for_api(&msgs)
        );
    }

    /// A response that stopped with `pause_turn` ends with a `server_tool_use` whose result
    /// has not come: sent back as the last message, the API continues the turn. The same
    /// message with a message after it lacks its result.
    #[test]
    fn a_paused_server_tool_call_is_valid_only_in_the_last_message() {
        let paused = json!({"role": "assistant", "content": [
            {"type": "text", "text": "Searching."},
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "X"}}]});
        let user = |t: &str| json!({"role": "user", "content": t});
        assert!(validate_for_api(&m(json!([user("search X"), paused.clone()]))).is_empty());
        let later = validate_for_api(&m(json!([
            user("search X"),
            paused,
            user("and then?"),
            {"role": "assistant", "content": "done"}
        ])));
        assert_eq!(later.len(), 1);
        assert_eq!(later[0].message, 1);
        assert!(later[0]
            .problem
            .contains("server_tool_use srvtoolu_1 has no result"));
    }

    /// Many programmatic server calls in one response, their client calls and results in one
    /// user message and their server results in the next response: valid, read in one pass
    /// over the later messages; the one whose result never comes is the one reported.
    #[test]
    fn many_programmatic_server_calls_in_one_response_are_checked_together() {
        let k = 300;
        let mut calls = Vec::new();
        let mut results = Vec::new();
        let mut server_results = Vec::new();
        for i in 0..k {
            let (s, t) = (format!("srvtoolu_{i}"), format!("toolu_{i}"));
            calls.push(
                json!({"type": "server_tool_use", "id": s, "name": "code_execution", "input": {}}),
            );
            calls.push(
                json!({"type": "tool_use", "id": t, "name": "get", "input": {},
                "caller": {"type": "code_execution_20250825", "tool_id": s}}),
            );
            results.push(json!({"type": "tool_result", "tool_use_id": t, "content": "r"}));
            if i != 7 {
                server_results.push(json!({"type": "code_execution_tool_result", "tool_use_id": s,
                    "content": {"type": "code_execution_result", "stdout": "", "stderr": "", "return_code": 0, "content": []}}));
            }
        }
        server_results.push(json!({"type": "text", "text": "done"}));
        let convo = |with_all: bool| {
            let mut sr = server_results.clone();
            if with_all {
                sr.insert(0, json!({"type": "code_execution_tool_result", "tool_use_id": "srvtoolu_7",
                    "content": {"type": "code_execution_result", "stdout": "", "stderr": "", "return_code": 0, "content": []}}));
            }
            m(json!([
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": calls.clone()},
                {"role": "user", "content": results.clone()},
                {"role": "assistant", "content": sr},
                {"role": "user", "content": "thanks"},
            ]))
        };
        let all = convo(true);
        assert!(
            validate_for_api(&all).is_empty(),
            "{:?}",
            validate_for_api(&all)
        );
        let one_missing = validate_for_api(&convo(false));
        assert_eq!(one_missing.len(), 1, "{one_missing:?}");
        assert_eq!(one_missing[0].message, 1);
        assert!(one_missing[0]
            .problem
            .contains("server_tool_use srvtoolu_7 has no result"));
    }
}
