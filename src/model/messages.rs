//! The message model (SPEC §2): both input shapes, every content block type, and the
//! unknown fields and line types that must survive untouched.
//!
//! * API shape: `{role, content}` as sent to the Anthropic Messages API.
//! * Transcript shape: a Claude Code session line `{type, uuid, parentUuid, message: {role,
//!   content, id, usage, …}, …}`.
//!
//! Fields the library inspects are typed; every other field is kept in an `extra` map, in
//! its original order, so that a message the library does not change comes back equal.
//! Fields that may legitimately be `null` are [`Nullable`] so that `null` and "absent" are
//! not confused.

use serde::de::{self, Deserializer};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The deepest nesting of objects and arrays a message or transcript line is read to (the
/// message itself is level 1). The caller's messages may be deeper (a model's tool input can
/// be any depth, and the caller cannot change it): what the core reads of an object or array
/// below this level is its JSON text, as a string ([`fold_text_deeper_than`]), counted and
/// summarized as text, and marked ([`Message::folded`]). Such a message is never written back
/// from what the core read: the functions that return messages return the caller's own
/// objects, and those that would write it (`toApiMessages`, which checks the mark) refuse it, as `parseTranscript` refuses a deeper
/// line and [`Message::from_value`] a deeper value (a pinned message, a template).
pub const MAX_NESTING: usize = 100;

/// The error for a message nested deeper than [`MAX_NESTING`] levels where it would be
/// written back (see [`MAX_NESTING`]); the caller adds where.
pub fn too_deep() -> Error {
    Error::invalid_message(format!(
        "nested deeper than {MAX_NESTING} levels of objects and arrays, more than a message the library writes back may be"
    ))
}

/// `text` (a JSON text) with every object or array nested more than `limit` levels deep (the
/// value itself is level 1) replaced by a JSON string holding its text: the same value read
/// to `limit` levels, parseable without deep recursion. One pass over the bytes, without
/// recursion; brackets inside strings do not count. Borrowed when nothing is that deep.
pub fn fold_text_deeper_than(text: &str, limit: usize) -> std::borrow::Cow<'_, str> {
    if !text_nested_deeper_than(text, limit) {
        return std::borrow::Cow::Borrowed(text);
    }
    let b = text.as_bytes();
    // The end (exclusive) of the string whose opening quote is at `i`.
    let string_end = |mut i: usize| {
        i += 1;
        while i < b.len() && b[i] != b'"' {
            i += if b[i] == b'\\' { 2 } else { 1 };
        }
        (i + 1).min(b.len())
    };
    let mut out = String::with_capacity(text.len() + 64);
    let mut copied = 0;
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i = string_end(i);
                continue;
            }
            b'{' | b'[' if depth == limit => {
                // The end of this value: where its brackets close.
                let start = i;
                let mut inner = 0usize;
                while i < b.len() {
                    match b[i] {
                        b'"' => {
                            i = string_end(i);
                            continue;
                        }
                        b'{' | b'[' => inner += 1,
                        b'}' | b']' => {
                            inner -= 1;
                            if inner == 0 {
                                i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                out.push_str(&text[copied..start]);
                // Brackets and quotes are ASCII: `start` and `i` are character boundaries.
                out.push_str(&serde_json::to_string(&text[start..i]).unwrap_or_default());
                copied = i;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    out.push_str(&text[copied..]);
    std::borrow::Cow::Owned(out)
}

/// Whether `v` nests objects and arrays more than `limit` levels deep (without recursion).
pub fn nested_deeper_than(v: &Value, limit: usize) -> bool {
    let mut stack: Vec<(&Value, usize)> = vec![(v, 1)];
    while let Some((v, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        if depth > limit {
            return true;
        }
        for c in children {
            if c.is_array() || c.is_object() {
                stack.push((c, depth + 1));
            }
        }
    }
    false
}

/// [`nested_deeper_than`] on JSON text: whether the JSON value written in `text` nests
/// objects and arrays more than `limit` levels deep, found by one pass over its bytes
/// (brackets inside strings do not count). For valid JSON text it answers what
/// [`nested_deeper_than`] answers on the parsed value.
pub fn text_nested_deeper_than(text: &str, limit: usize) -> bool {
    let b = text.as_bytes();
    // No more opening brackets in all than the limit (inside strings too): not deeper.
    // Counted eight bytes at a time, a block at a time, stopping past the limit.
    let mut brackets = 0;
    for block in b.chunks(1024) {
        brackets += super::swar::count_opening_brackets(block);
        if brackets > limit {
            break;
        }
    }
    if brackets <= limit {
        return false;
    }
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'"' => {
                // Jump over the string: to its closing quote, past any escapes (eight bytes
                // at a time while none of them is a quote or a backslash).
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    if let Some(w) = b.get(i..i + 8) {
                        let word =
                            u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
                        if !super::swar::has_byte(word, b'"') && !super::swar::has_byte(word, b'\\')
                        {
                            i += 8;
                            continue;
                        }
                    }
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if i >= b.len() {
                    return false;
                }
            }
            b'{' | b'[' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    false
}
use crate::model::error::{Error, Result};

/// A field that may be absent, present as `null`, or present with a value.
/// Serialized back exactly as it came in.
pub type Nullable<T> = Option<Option<T>>;

/// Serde helpers for [`Nullable`] fields.
pub(crate) mod nullable {
    use super::*;

    pub fn serialize<S: Serializer, T: Serialize>(
        v: &Nullable<T>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(Some(t)) => t.serialize(s),
            _ => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Nullable<T>, D::Error> {
        Ok(Some(Option::<T>::deserialize(d)?))
    }
}

/// The roles a `{role, …}` message may have, over every shape the library reads: the
/// Messages API's `user` and `assistant`, `system`, OpenAI's `developer`, `tool` and
/// `function` (Chat Completions; `tool` is also the AI SDK's), and `human` and `ai`
/// (LangChain's `{role, content}` dicts). A message of another role is an error
/// ([`unknown_role`]), never a message silently left out.
pub const MESSAGE_ROLES: &[&str] = &[
    "user",
    "assistant",
    "system",
    "developer",
    "tool",
    "function",
    "human",
    "ai",
];

/// The roles of an API message in the native model (Anthropic messages, and the Anthropic
/// form the bindings convert other shapes to).
pub const API_ROLES: &[&str] = &["user", "assistant", "system", "developer"];

/// The `INVALID_MESSAGE` error for a message whose role is `role`, none of `accepted`: names
/// the role, the one it probably misspells, and the accepted ones (the caller adds where:
/// `messages[3].role`).
pub fn unknown_role(role: &str, accepted: &[&str]) -> Error {
    // Quoted as JSON writes a string (not through `Value`'s `Display`: that would bring its
    // whole writer into the counting module).
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let hint = crate::model::names::likely_meant(role, accepted)
        .map(|m| format!(" (did you mean {}?)", quote(m)))
        .unwrap_or_default();
    Error::invalid_message(format!(
        "unknown role {}{hint}: a message's role is one of {}",
        quote(role),
        accepted.join(", ")
    ))
}

/// The role of an API message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// `"user"`
    User,
    /// `"assistant"`
    Assistant,
    /// Any other value (e.g. `"system"` from OpenAI-style histories), kept verbatim.
    Other(String),
}

impl Role {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Other(s) => s,
        }
    }

    /// Parses the wire string.
    pub fn parse(s: &str) -> Role {
        match s {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            other => Role::Other(other.to_string()),
        }
    }
}

impl Serialize for Role {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Role {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(Role::parse(&s))
    }
}

/// Message content: a plain string or an array of blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    /// `content: "text"`
    Text(String),
    /// `content: [block, …]`
    Blocks(Vec<Block>),
}

impl Content {
    /// True when there is nothing in it (empty string or empty array).
    pub fn is_empty(&self) -> bool {
        match self {
            Content::Text(t) => t.is_empty(),
            Content::Blocks(b) => b.is_empty(),
        }
    }
}

/// Token usage reported by the API for one response. Numbers are validated when read
/// (see [`crate::model::view`]); here they are kept as JSON numbers, spelled as they came.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Usage {
    /// Uncached input tokens.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub input_tokens: Nullable<serde_json::Number>,
    /// Input tokens written to the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub cache_creation_input_tokens: Nullable<serde_json::Number>,
    /// Input tokens read from the prompt cache.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub cache_read_input_tokens: Nullable<serde_json::Number>,
    /// Output tokens.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub output_tokens: Nullable<serde_json::Number>,
    /// Everything else (`cache_creation`, `service_tier`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The API message inside a transcript line (`line.message`), or a whole API-shape message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct ApiMessage {
    /// `user` or `assistant`.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub role: Nullable<Role>,
    /// The content.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub content: Nullable<Content>,
    /// The API response id (`msg_…`), shared by every line of one response.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub id: Nullable<String>,
    /// Usage of the response.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub usage: Nullable<Usage>,
    /// Everything else (`model`, `stop_reason`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One item of a conversation: an API-shape message or a transcript line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Default)]
pub struct Message {
    /// Transcript line type (`user`, `assistant`, `system`, `attachment`, `progress`, …).
    #[serde(
        rename = "type",
        default,
        skip_serializing_if = "Option::is_none",
        with = "nullable"
    )]
    pub line_type: Nullable<String>,
    /// API shape: role.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub role: Nullable<Role>,
    /// API shape: content.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub content: Nullable<Content>,
    /// Transcript shape: the API message.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub message: Nullable<ApiMessage>,
    /// System line subtype (`compact_boundary`, …).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub subtype: Nullable<String>,
    /// Line id.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub uuid: Nullable<String>,
    /// Sub-agent line.
    #[serde(
        rename = "isSidechain",
        default,
        skip_serializing_if = "Option::is_none",
        with = "nullable"
    )]
    pub is_sidechain: Nullable<bool>,
    /// Meta line (not shown to the user).
    #[serde(
        rename = "isMeta",
        default,
        skip_serializing_if = "Option::is_none",
        with = "nullable"
    )]
    pub is_meta: Nullable<bool>,
    /// The summary line written after a compaction.
    #[serde(
        rename = "isCompactSummary",
        default,
        skip_serializing_if = "Option::is_none",
        with = "nullable"
    )]
    pub is_compact_summary: Nullable<bool>,
    /// ISO-8601 time of the line.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub timestamp: Nullable<String>,
    /// Everything else, in input order.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// Whether the line belongs to the conversation, when that is not what its `isSidechain`
    /// says (set by [`crate::transforms::transcript::mark_conversation`]: a line of a branch
    /// the `parentUuid` chain from the leaf leaves out, or a line of a sub-agent's own file).
    /// Never written, and not compared: it describes the line's place, not the line.
    #[serde(skip)]
    pub conversation: ConversationMark,
    /// Where the message was read with its parts below [`MAX_NESTING`] as text (set by
    /// [`crate::transforms::transcript::message_from_json_text`]): what was read is not what
    /// the caller holds, so a function that writes it back refuses it ([`too_deep`]). Never
    /// written, and not compared.
    #[serde(skip)]
    pub folded: FoldMark,
}

/// [`Message::folded`]: the location (as errors name it) of a message read with its parts
/// below [`MAX_NESTING`] as text, `None` for a message read whole. Equal to every other mark.
#[derive(Clone, Debug, Default)]
pub struct FoldMark(pub Option<Box<str>>);

impl PartialEq for FoldMark {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// [`Message::conversation`]: `Some(true)` the line is part of the conversation although it
/// is a sub-agent line, `Some(false)` it is a line of a branch the chain from the leaf leaves
/// out (a main-chain line, or a sub-agent's own file's line), `None` its `isSidechain`
/// decides. Equal to every other mark (two lines are the same line wherever
/// they sit).
#[derive(Clone, Copy, Debug, Default)]
pub struct ConversationMark(pub Option<bool>);

impl PartialEq for ConversationMark {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// Whether `messages[i]`, a provider's opaque compaction alone (an OpenAI Responses
/// `compaction` item), closes the window OpenAI's `/responses/compact` returns: the user (and
/// system, developer) messages it kept, then the item. The provider reads those messages, so
/// the context does not start at the item (`js_view.js` `closesWindow` says the same of JS
/// messages).
pub fn closes_compact_window(messages: &[Message], i: usize) -> bool {
    i > 0
        && i < messages.len()
        && messages[i].is_only_opaque_compaction()
        && messages[..i].iter().all(Message::is_window_input)
}

/// The opaque compaction that closes the `/responses/compact` window `messages` begin with
/// ([`closes_compact_window`]), when they do.
pub fn compact_window_end(messages: &[Message]) -> Option<usize> {
    let i = messages.iter().position(|m| !m.is_window_input())?;
    closes_compact_window(messages, i).then_some(i)
}

/// `type` of the Messages API's server-side compaction block (`compact_20260112`, on-demand
/// compaction): `{type: 'compaction', content, encrypted_content | signature}`.
pub const COMPACTION_BLOCK: &str = "compaction";
/// The field of a system message given as a message that says when the model stops reading it.
pub const CLEAR_AT: &str = "clear_at";
/// [`CLEAR_AT`]'s value for a message the model no longer reads once a later user message exists.
pub const CLEAR_AT_NEXT_USER: &str = "next_user_message";
/// A system message's block that makes a tool available from there on.
pub const TOOL_ADDITION_BLOCK: &str = "tool_addition";
/// The field of a `compaction` block that lists the tool changes of the range it replaced.
pub const COMPACTION_TOOL_CHANGES: &str = "tool_changes";
/// A system message's block that withdraws a tool from there on.
pub const TOOL_REMOVAL_BLOCK: &str = "tool_removal";

/// Whether the `compaction` block `v` is opaque: no `content` key, a non-empty
/// `encrypted_content` string (the provider's summary, readable by the provider only).
pub fn is_opaque_compaction(v: &serde_json::Value) -> bool {
    v.get("content").is_none()
        && v.get("encrypted_content")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|e| !e.is_empty())
}

/// The coarse kind of a message or line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A user message / `type: "user"` line.
    User,
    /// An assistant message / `type: "assistant"` line.
    Assistant,
    /// A `type: "system"` line (or an API message with role `system`).
    System,
    /// A `type: "attachment"` line (sent to the model as user context).
    Attachment,
    /// Any other line type (progress, file-history-snapshot, summary, …): carried through.
    Other,
}

impl Kind {
    /// Kind from a transcript `type`.
    #[cfg_attr(cc_speed, optimize(speed))]
    pub fn from_line_type(t: &str) -> Kind {
        // Told by the first byte and the length, then compared once.
        let (kind, word) = match (t.as_bytes().first(), t.len()) {
            (Some(b'u'), 4) => (Kind::User, "user"),
            (Some(b'a'), 9) => (Kind::Assistant, "assistant"),
            (Some(b's'), 6) => (Kind::System, "system"),
            (Some(b'a'), 10) => (Kind::Attachment, "attachment"),
            _ => return Kind::Other,
        };
        if t == word {
            kind
        } else {
            Kind::Other
        }
    }

    /// Kind from an API role (`developer`, OpenAI's name for system instructions, is a
    /// system message, as the JavaScript view reads it).
    pub fn from_role(r: &str) -> Kind {
        match r {
            "user" => Kind::User,
            "assistant" => Kind::Assistant,
            "system" | "developer" => Kind::System,
            _ => Kind::Other,
        }
    }
}

impl Message {
    /// Puts back a string that was sent apart from the message's JSON text, `""` left in its
    /// place there: `slot` 0 is a string `content`, `b + 1` the `text` of text block `b` or
    /// the string `content` of tool result `b`, `b + 1 + (k + 1) * 2^21` the string field of
    /// the input of tool use `b` that is the input's `k`-th, in `message.content` for a
    /// transcript line and in `content` otherwise. False, and nothing changed, when that
    /// place does not hold an empty string (the message was then not read as the sender saw
    /// it).
    pub fn put_apart_text(&mut self, slot: usize, text: String) -> bool {
        let content = match &mut self.message {
            Some(Some(api)) => &mut api.content,
            _ => &mut self.content,
        };
        let Some(Some(content)) = content else {
            return false;
        };
        let (block, field) = (slot & 0x1F_FFFF, slot >> 21);
        let place = match (content, block.checked_sub(1)) {
            (Content::Text(t), None) if field == 0 => t,
            (Content::Blocks(blocks), Some(b)) => match (blocks.get_mut(b), field) {
                (Some(Block::Text(t)), 0) => &mut t.text,
                (
                    Some(Block::ToolResult(ToolResultBlock {
                        content: Some(Some(ToolResultContent::Text(t))),
                        ..
                    })),
                    0,
                ) => t,
                (
                    Some(Block::ToolUse(ToolUseBlock {
                        input: Some(Some(Value::Object(input))),
                        ..
                    })),
                    k @ 1..,
                ) => match input.values_mut().nth(k - 1) {
                    Some(Value::String(t)) => t,
                    _ => return false,
                },
                _ => return false,
            },
            _ => return false,
        };
        if !place.is_empty() {
            return false;
        }
        *place = text;
        true
    }

    /// Parses one message from a JSON value, naming `location` in errors.
    pub fn from_value(value: Value, location: &str) -> Result<Message> {
        Message::from_value_with_roles(value, location, API_ROLES)
    }

    /// [`Message::from_value`] for a message that may still be in another shape (a role of
    /// [`MESSAGE_ROLES`]: OpenAI's `tool`, LangChain's `human`, …), which the bindings convert
    /// to the Anthropic form before it is used (`context.pinned`); other roles are errors.
    pub fn from_value_of_any_shape(value: Value, location: &str) -> Result<Message> {
        Message::from_value_with_roles(value, location, MESSAGE_ROLES)
    }

    /// [`Message::from_value`] accepting the `{role}` messages of `roles`.
    fn from_value_with_roles(value: Value, location: &str, roles: &[&str]) -> Result<Message> {
        if !value.is_object() {
            return Err(Error::invalid_message(format!(
                "expected an object, got {}",
                json_type_name(&value)
            ))
            .at(location));
        }
        if nested_deeper_than(&value, MAX_NESTING) {
            return Err(too_deep().at(location));
        }
        let msg = Message::from_object(value)
            .map_err(|e| Error::invalid_message(e.to_string()).at(location))?;
        if msg.line_type().is_none() && msg.role().is_none() {
            return Err(Error::invalid_message(
                "neither `type` (transcript line) nor `role` (API message) is present",
            )
            .at(location));
        }
        msg.check_role_in(roles, &|| location.to_string())?;
        Ok(msg)
    }

    /// Checks the role of an API message (not of a transcript line, whose `type` says what
    /// it is): one of [`API_ROLES`], else an `INVALID_MESSAGE` error at
    /// `location().role` naming it — a misspelt role (`asistant`) would otherwise leave the
    /// message out of what is counted and sent, silently.
    pub fn check_role(&self, location: &dyn Fn() -> String) -> Result<()> {
        self.check_role_in(API_ROLES, location)
    }

    /// [`Message::check_role`] against the roles `roles`.
    fn check_role_in(&self, roles: &[&str], location: &dyn Fn() -> String) -> Result<()> {
        match self.role() {
            Some(Role::Other(r)) if !self.is_transcript() && !roles.contains(&r.as_str()) => {
                Err(unknown_role(r, roles).at(format!("{}.role", location())))
            }
            _ => Ok(()),
        }
    }

    /// Reads a JSON object (`value` must be one). A line of a type the library does not use
    /// (progress, summary, queue-operation, future ones) is carried through even when a field
    /// the library types on other lines (`uuid`, `content`, `timestamp`, …) holds another JSON
    /// type there: such fields are kept among the unknown ones. Lines the library reads
    /// (user, assistant, system, attachment, API messages) must have the types it reads.
    pub fn from_object(value: Value) -> std::result::Result<Message, serde_json::Error> {
        if !is_carried_line(&value) {
            return serde_json::from_value(value);
        }
        match value {
            Value::Object(map) => carried_line(map),
            other => serde_json::from_value(other),
        }
    }

    /// Parses an array of messages, naming `messages[i]` in errors.
    pub fn parse_all(value: Value) -> Result<Vec<Message>> {
        match value {
            Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| Message::from_value(v, &format!("messages[{i}]")))
                .collect(),
            other => Err(Error::invalid_argument(format!(
                "messages must be an array, got {}",
                json_type_name(&other)
            ))),
        }
    }

    /// The message back as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Whether `self` and `other` are the same message as far as a compaction can tell: equal
    /// in everything it reads. The fields of [`COMPACTION_UNREAD_FIELDS`] are not compared,
    /// nor the payload of a line whose payload is never read (only its
    /// [`COMPACTION_LINE_FIELDS`]), so that the caller's whole message matches the copy the
    /// compaction paths read without them.
    pub fn same_when_compacting(&self, other: &Message) -> bool {
        let (a, b) = (self, other);
        // Destructured so that a new typed field is not forgotten here.
        let Message {
            line_type,
            role,
            content,
            message,
            subtype,
            uuid,
            is_sidechain,
            is_meta,
            is_compact_summary,
            timestamp,
            extra: _,
            conversation: _,
            folded: _,
        } = a;
        let typed_equal = *line_type == b.line_type
            && *role == b.role
            && *content == b.content
            && *message == b.message
            && *subtype == b.subtype
            && *uuid == b.uuid
            && *is_sidechain == b.is_sidechain
            && *is_meta == b.is_meta
            && *is_compact_summary == b.is_compact_summary
            && *timestamp == b.timestamp;
        if !typed_equal {
            return false;
        }
        if !payload_is_read(a.line_type(), a.role().map(Role::as_str), a.subtype()) {
            return true;
        }
        let read = |k: &&String| !compaction_unread(k);
        a.extra
            .iter()
            .filter(|(k, _)| read(k))
            .eq(b.extra.iter().filter(|(k, _)| read(k)))
    }

    /// Whether this is a transcript line (has `type`) rather than an API message. A Messages
    /// API response body (`type: "message"` with a `role`) is an API message.
    #[cfg_attr(cc_speed, optimize(speed))]
    pub fn is_transcript(&self) -> bool {
        match self.line_type() {
            None => false,
            Some("message") => self.role().is_none(),
            Some(_) => true,
        }
    }

    /// The API role (API shape), when present and not null.
    pub fn role(&self) -> Option<&Role> {
        self.role.as_ref().and_then(|r| r.as_ref())
    }

    /// The kind of the message.
    #[cfg_attr(cc_speed, optimize(speed))]
    pub fn kind(&self) -> Kind {
        // What `is_transcript` tells, from `type` and the role read once each (every pass
        // over a conversation asks each message's kind).
        match (self.line_type(), self.role()) {
            (Some(t), role) if t != "message" || role.is_none() => Kind::from_line_type(t),
            (_, Some(Role::User)) => Kind::User,
            (_, Some(Role::Assistant)) => Kind::Assistant,
            (_, Some(Role::Other(r))) => Kind::from_role(r),
            (_, None) => Kind::Other,
        }
    }

    /// The transcript line `type`, when present and a string.
    pub fn line_type(&self) -> Option<&str> {
        self.line_type.as_ref().and_then(|t| t.as_deref())
    }

    /// The API message of a transcript line.
    pub fn api_message(&self) -> Option<&ApiMessage> {
        self.message.as_ref().and_then(|m| m.as_ref())
    }

    /// Mutable API message of a transcript line.
    pub fn api_message_mut(&mut self) -> Option<&mut ApiMessage> {
        self.message.as_mut().and_then(|m| m.as_mut())
    }

    /// The content, wherever the shape keeps it.
    pub fn content(&self) -> Option<&Content> {
        if self.is_transcript() {
            self.api_message()
                .and_then(|m| m.content.as_ref())
                .and_then(|c| c.as_ref())
        } else {
            self.content.as_ref().and_then(|c| c.as_ref())
        }
    }

    /// Mutable content, wherever the shape keeps it.
    pub fn content_mut(&mut self) -> Option<&mut Content> {
        if self.is_transcript() {
            self.api_message_mut()
                .and_then(|m| m.content.as_mut())
                .and_then(|c| c.as_mut())
        } else {
            self.content.as_mut().and_then(|c| c.as_mut())
        }
    }

    /// The response id (`message.id`) of a transcript assistant line.
    pub fn message_id(&self) -> Option<&str> {
        self.api_message()
            .and_then(|m| m.id.as_ref())
            .and_then(|i| i.as_deref())
    }

    /// The usage of a transcript assistant line (or an API-shape message carrying `usage`).
    pub fn usage_raw(&self) -> Option<Usage> {
        self.usage_ref().map(std::borrow::Cow::into_owned)
    }

    /// [`Message::usage_raw`] without copying the usage a transcript line types (borrowed;
    /// only an API-shape message's `usage`, kept among the unknown fields, is read into a new
    /// [`Usage`]).
    pub fn usage_ref(&self) -> Option<std::borrow::Cow<'_, Usage>> {
        if let Some(u) = self
            .api_message()
            .and_then(|m| m.usage.as_ref())
            .and_then(|u| u.as_ref())
        {
            return Some(std::borrow::Cow::Borrowed(u));
        }
        // API-shape messages from SDKs sometimes carry the response usage beside the content.
        self.extra
            .get("usage")
            .and_then(|u| serde_json::from_value::<Usage>(u.clone()).ok())
            .map(std::borrow::Cow::Owned)
    }

    /// Makes this message carry `usage` as the response usage the API reported for it (a
    /// transcript line's `message.usage`, an API-shape message's `usage`), replacing what it
    /// carried: how usage the caller gave beside the messages (`Compactor.setUsage`) reaches
    /// the counts of a compaction that reads these messages.
    pub fn give_usage(&mut self, usage: Usage) {
        if let Some(m) = self.api_message_mut() {
            m.usage = Some(Some(usage));
        } else if let Ok(v) = serde_json::to_value(&usage) {
            self.extra.insert("usage".to_owned(), v);
        }
    }

    /// `uuid` when present.
    pub fn uuid(&self) -> Option<&str> {
        self.uuid.as_ref().and_then(|u| u.as_deref())
    }

    /// `subtype` when present.
    pub fn subtype(&self) -> Option<&str> {
        self.subtype.as_ref().and_then(|u| u.as_deref())
    }

    /// Whether the line is left out of the conversation: a sub-agent line (`isSidechain:
    /// true`), unless [`Message::conversation`] says otherwise.
    pub fn is_sidechain(&self) -> bool {
        match self.conversation.0 {
            Some(part) => !part,
            None => matches!(self.is_sidechain, Some(Some(true))),
        }
    }

    /// Whether the line is of a branch of its file's conversation that the `parentUuid` chain
    /// from the leaf leaves out (a rewind's abandoned branch; see
    /// [`crate::transforms::transcript::other_branches`]): not sent, but its usage is learned
    /// from.
    pub fn on_other_branch(&self) -> bool {
        self.conversation.0 == Some(false)
    }

    /// Whether this is a `compact_boundary` system line.
    pub fn is_compact_boundary(&self) -> bool {
        self.kind() == Kind::System && self.subtype() == Some("compact_boundary")
    }

    /// Whether what the library adds to `messages` is written as Claude Code transcript lines:
    /// a message besides the `compact_boundary` lines is one. An API conversation holds the
    /// boundary line each compaction puts in front of it (always a line); its later compactions
    /// still answer in API messages (they answered in lines, the summary a line marked
    /// `isVisibleInTranscriptOnly` among the caller's API messages).
    pub fn written_as_lines(messages: &[Message]) -> bool {
        messages
            .iter()
            .any(|m| m.is_transcript() && !m.is_compact_boundary())
    }

    /// Whether this message begins with a `compaction` block whose `content` is not `null`
    /// (the Messages API's server-side compaction, threshold or on demand): the API ignores
    /// every message before it. A `null` content is a failed compaction, which changes nothing.
    /// An opaque one ([`Self::holds_opaque_compaction`]) counts too.
    pub fn holds_compaction(&self) -> bool {
        self.first_compaction_block()
            .is_some_and(|v| match v.get("content") {
                Some(c) => !c.is_null(),
                None => is_opaque_compaction(v),
            })
    }

    /// Whether this message begins with a compaction whose summary cannot be read: no
    /// `content`, only the provider's `encrypted_content` (what an OpenAI Responses
    /// `{type: 'compaction', encrypted_content}` item reads as). It stands for the
    /// conversation before it, and only the provider can read it.
    pub fn holds_opaque_compaction(&self) -> bool {
        self.first_compaction_block()
            .is_some_and(is_opaque_compaction)
    }

    /// Whether this message holds nothing but an opaque compaction (what an OpenAI Responses
    /// `compaction` item reads as), not a transcript line.
    pub fn is_only_opaque_compaction(&self) -> bool {
        !self.is_transcript()
            && self.holds_opaque_compaction()
            && matches!(self.content(), Some(Content::Blocks(b)) if b.len() == 1)
    }

    /// Whether this is a user or system message (not a transcript line) holding no tool
    /// result: what OpenAI's `/responses/compact` keeps in front of its compaction item.
    pub fn is_window_input(&self) -> bool {
        !self.is_transcript()
            && matches!(self.kind(), Kind::User | Kind::System)
            && !matches!(self.content(), Some(Content::Blocks(b)) if b.iter().any(|b| matches!(b, Block::ToolResult(_))))
    }

    /// Whether this is a system message given as a message with `clear_at:
    /// "next_user_message"` (the Messages API's per-turn reminders): it stays in the array and
    /// is sent unchanged, but the model no longer reads it once a later `role: "user"` message
    /// exists ([`crate::measure::tokens::is_read`] counts it 0 then).
    pub fn clears_at_next_user(&self) -> bool {
        self.kind() == Kind::System
            && !self.is_transcript()
            && self.extra.get(CLEAR_AT).and_then(Value::as_str) == Some(CLEAR_AT_NEXT_USER)
    }

    /// Whether this is a system message given as a message whose content changes the tool set
    /// from that point on: a `tool_addition` or `tool_removal` block (the Messages API's
    /// mid-conversation tool changes; an OpenAI Responses `additional_tools` item reads as one).
    /// A compaction keeps such a message verbatim: summarized, the tools it added would no
    /// longer be offered and those it withdrew would be offered again.
    pub fn changes_tools(&self) -> bool {
        if self.kind() != Kind::System || self.is_transcript() {
            return false;
        }
        match self.content() {
            Some(Content::Blocks(bs)) => bs
                .iter()
                .any(|b| matches!(b.type_name(), TOOL_ADDITION_BLOCK | TOOL_REMOVAL_BLOCK)),
            _ => false,
        }
    }

    /// The `tool_changes` of the `compaction` block this message begins with, when it
    /// carries any (a non-empty array): the `tool_addition` / `tool_removal` entries that take
    /// the request's `tools` to the tool set in effect after the range the block replaced.
    /// The model reads the tools they add; a compaction that summarizes the message keeps
    /// them as a system message of those entries ([`Self::tool_changes_message`]).
    pub fn compaction_tool_changes(&self) -> Option<&[serde_json::Value]> {
        self.first_compaction_block()?
            .get(COMPACTION_TOOL_CHANGES)?
            .as_array()
            .filter(|a| !a.is_empty())
            .map(Vec::as_slice)
    }

    /// A system message given as a message whose content is the `tool_changes` of the
    /// compaction block this message begins with, verbatim (`None` when it carries none):
    /// what a compaction that summarizes this message keeps in its place. The Messages API
    /// takes such entries as the content blocks of an in-`messages` system message (they are
    /// the same `tool_addition` / `tool_removal` blocks), and from there the tool set changes
    /// as it did after the block.
    pub fn tool_changes_message(&self) -> Option<Message> {
        let entries = self.compaction_tool_changes()?;
        Message::from_value(
            serde_json::json!({"role": "system", "content": entries}),
            "tool_changes",
        )
        .ok()
    }

    /// Whether the content begins with a `compaction` block.
    pub fn begins_with_compaction(&self) -> bool {
        self.first_compaction_block().is_some()
    }

    /// The first block of the content when it is a `compaction` block.
    fn first_compaction_block(&self) -> Option<&serde_json::Value> {
        match self.content() {
            Some(Content::Blocks(bs)) => match bs.first() {
                Some(Block::Unknown(v))
                    if v.get("type").and_then(serde_json::Value::as_str)
                        == Some(COMPACTION_BLOCK) =>
                {
                    Some(v)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether this is the summary line written by a compaction.
    pub fn is_compact_summary(&self) -> bool {
        matches!(self.is_compact_summary, Some(Some(true)))
    }

    /// `timestamp` when present.
    pub fn timestamp(&self) -> Option<&str> {
        self.timestamp.as_ref().and_then(|u| u.as_deref())
    }

    /// `attachment.type` of an attachment line.
    pub fn attachment_type(&self) -> Option<&str> {
        self.extra
            .get("attachment")
            .and_then(|a| a.get("type"))
            .and_then(Value::as_str)
    }

    /// A new API-shape message of `role` with `blocks` as its content.
    pub fn api_blocks(role: Role, blocks: Vec<Block>) -> Message {
        Message {
            role: Some(Some(role)),
            content: Some(Some(Content::Blocks(blocks))),
            ..Default::default()
        }
    }

    /// A new API-shape user message with string content.
    pub fn api_user_text(text: impl Into<String>) -> Message {
        Message {
            role: Some(Some(Role::User)),
            content: Some(Some(Content::Text(text.into()))),
            ..Default::default()
        }
    }
}

/// The JSON names of [`Message`]'s typed fields.
pub const TYPED_FIELDS: [&str; 10] = [
    "type",
    "role",
    "content",
    "message",
    "subtype",
    "uuid",
    "isSidechain",
    "isMeta",
    "isCompactSummary",
    "timestamp",
];

/// Whether `value` is a line the library carries through without reading it: a string
/// `type` of [`Kind::Other`] that is not a Messages API response body (`type: "message"`
/// with a string `role`, as [`Message::is_transcript`] judges it).
fn is_carried_line(value: &Value) -> bool {
    match value.get("type").and_then(Value::as_str) {
        Some("message") => value.get("role").and_then(Value::as_str).is_none(),
        Some(t) => Kind::from_line_type(t) == Kind::Other,
        None => false,
    }
}

/// Whether `v` can be read into [`Message`]'s typed field `key`. Flags and strings are
/// judged by their JSON type; `role`, `content` and `message` by reading a copy of them
/// alone (small on the lines this is for).
fn field_fits(key: &str, v: &Value) -> bool {
    match key {
        "isSidechain" | "isMeta" | "isCompactSummary" => v.is_boolean() || v.is_null(),
        "type" | "subtype" | "uuid" | "timestamp" | "role" => v.is_string() || v.is_null(),
        _ => {
            let mut one = Map::new();
            one.insert(key.to_string(), v.clone());
            serde_json::from_value::<Message>(Value::Object(one)).is_ok()
        }
    }
}

/// A carried-through line: typed fields whose JSON type does not fit are moved among the
/// unknown fields (in their input order, after the others), the rest stay typed. The big
/// payloads of such lines (`data` of progress lines) are moved, never copied.
fn carried_line(mut map: Map<String, Value>) -> std::result::Result<Message, serde_json::Error> {
    let mut odd = Map::new();
    let misfits: Vec<&str> = TYPED_FIELDS
        .into_iter()
        .filter(|k| map.get(*k).is_some_and(|v| !field_fits(k, v)))
        .collect();
    if !misfits.is_empty() {
        // Keep the input order of the misfits.
        let order: Vec<String> = map
            .keys()
            .filter(|k| misfits.contains(&k.as_str()))
            .cloned()
            .collect();
        for k in order {
            if let Some(v) = map.shift_remove(&k) {
                odd.insert(k, v);
            }
        }
    }
    let mut msg: Message = serde_json::from_value(Value::Object(map))?;
    msg.extra.extend(odd);
    Ok(msg)
}

/// A content block. Known types are typed; any other type is kept as its JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// `{type: "text", text}`
    Text(TextBlock),
    /// `{type: "image", source}`
    Image(MediaBlock),
    /// `{type: "document", source}`
    Document(MediaBlock),
    /// `{type: "tool_use", id, name, input}`
    ToolUse(ToolUseBlock),
    /// `{type: "server_tool_use", id, name, input}`
    ServerToolUse(ToolUseBlock),
    /// `{type: "tool_result", tool_use_id, content?, is_error?}`
    ToolResult(ToolResultBlock),
    /// A server tool's result (`web_search_tool_result`, `web_fetch_tool_result`, …): any
    /// block type ending in `_tool_result` that carries a `tool_use_id`.
    ServerToolResult(ServerToolResultBlock),
    /// `{type: "thinking", thinking, signature}` — never edited.
    Thinking(ThinkingBlock),
    /// `{type: "redacted_thinking", data}` — never edited.
    RedactedThinking(RedactedThinkingBlock),
    /// Any other block, verbatim.
    Unknown(Value),
}

/// A text block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TextBlock {
    /// The text.
    pub text: String,
    /// Other fields (`citations`, `cache_control`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An image or document block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MediaBlock {
    /// `source` (base64, url, file, text, content); `None` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub source: Nullable<Value>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl MediaBlock {
    /// The `source` object as given (`None` when absent or null).
    pub fn source(&self) -> Option<&Value> {
        self.source.as_ref().and_then(|s| s.as_ref())
    }

    /// The media type (e.g. `image/png`) when the source says it.
    pub fn media_type(&self) -> Option<&str> {
        self.source()?.get("media_type").and_then(Value::as_str)
    }

    /// The texts of a plain-text document: a `text` source's `data`, or a `content` source
    /// (a string, or blocks that are all text). `None` for a document of media (base64, URL,
    /// file), whose size the model reads as media.
    pub fn plain_texts(&self) -> Option<Vec<&str>> {
        let source = self.source()?;
        match source.get("type").and_then(Value::as_str)? {
            "text" => Some(vec![source.get("data")?.as_str()?]),
            "content" => match source.get("content")? {
                Value::String(s) => Some(vec![s.as_str()]),
                Value::Array(items) => items
                    .iter()
                    .map(|b| {
                        (b.get("type").and_then(Value::as_str) == Some("text"))
                            .then(|| b.get("text").and_then(Value::as_str))
                            .flatten()
                    })
                    .collect(),
                _ => None,
            },
            _ => None,
        }
    }

    /// The length (by `len`) of the texts a document's reader sees besides its plain text or
    /// its media (`plain`: it has plain text): its `context` string, and the text blocks of a
    /// `content` source that also holds images (each counted as text; `js_view.js`
    /// `sideTextLen` reads the same).
    pub fn side_text_units(&self, plain: bool, len: &dyn Fn(&str) -> usize) -> usize {
        let text = |v: &Value| v.get("text").and_then(Value::as_str).map_or(0, len);
        let mut n = self
            .extra
            .get("context")
            .and_then(Value::as_str)
            .map_or(0, len);
        if let (false, Some(Value::Array(items))) =
            (plain, self.source().and_then(|s| s.get("content")))
        {
            for b in items {
                if b.get("type").and_then(Value::as_str) == Some("text") {
                    n += text(b);
                }
            }
        }
        n
    }

    /// The size in bytes of base64 data, when the source is base64.
    pub fn base64_bytes(&self) -> Option<usize> {
        let source = self.source()?;
        let data = source.get("data")?.as_str()?;
        if source.get("type").and_then(Value::as_str) != Some("base64") {
            return None;
        }
        let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
        Some(data.len() / 4 * 3 - padding.min(2))
    }
}

/// A client or server tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolUseBlock {
    /// Call id (`toolu_…`).
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments; `None` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub input: Nullable<Value>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Content of a tool result: a string or blocks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolResultContent {
    /// `content: "…"`
    Text(String),
    /// `content: [block, …]`
    Blocks(Vec<Block>),
}

/// A tool result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolResultBlock {
    /// The id of the `tool_use` it answers.
    pub tool_use_id: String,
    /// The content (may be absent).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub content: Nullable<ToolResultContent>,
    /// Other fields (`is_error`, `cache_control`, …).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A server tool's result block.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerToolResultBlock {
    /// The block type, e.g. `web_search_tool_result`.
    pub block_type: String,
    /// The id of the `server_tool_use` it answers.
    pub tool_use_id: String,
    /// The whole block, verbatim.
    pub raw: Map<String, Value>,
}

/// A thinking block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThinkingBlock {
    /// The reasoning text.
    pub thinking: String,
    /// The signature the API checks.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "nullable")]
    pub signature: Nullable<String>,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A redacted thinking block.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RedactedThinkingBlock {
    /// Encrypted reasoning.
    pub data: String,
    /// Other fields.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Block {
    /// The block's `type` string.
    pub fn type_name(&self) -> &str {
        match self {
            Block::Text(_) => "text",
            Block::Image(_) => "image",
            Block::Document(_) => "document",
            Block::ToolUse(_) => "tool_use",
            Block::ServerToolUse(_) => "server_tool_use",
            Block::ToolResult(_) => "tool_result",
            Block::ServerToolResult(b) => &b.block_type,
            Block::Thinking(_) => "thinking",
            Block::RedactedThinking(_) => "redacted_thinking",
            Block::Unknown(v) => v.get("type").and_then(Value::as_str).unwrap_or(""),
        }
    }

    /// A text block with no extra fields.
    pub fn text(text: impl Into<String>) -> Block {
        Block::Text(TextBlock {
            text: text.into(),
            extra: Map::new(),
        })
    }

    /// Parses a block from its JSON value.
    pub fn from_value(value: Value) -> std::result::Result<Block, String> {
        let Value::Object(map) = value else {
            return Err(format!(
                "content block must be an object, got {}",
                json_type_name(&value)
            ));
        };
        let ty = match map.get("type") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => {
                return Err(format!(
                    "content block `type` must be a string, got {}",
                    json_type_name(other)
                ))
            }
            None => return Err("content block without `type`".to_string()),
        };
        fn typed<T: for<'de> Deserialize<'de>>(
            mut map: Map<String, Value>,
            ty: &str,
        ) -> std::result::Result<T, String> {
            map.shift_remove("type");
            serde_json::from_value(Value::Object(map)).map_err(|e| format!("{ty} block: {e}"))
        }
        Ok(match ty.as_str() {
            "text" => Block::Text(typed(map, &ty)?),
            "image" => Block::Image(typed(map, &ty)?),
            "document" => Block::Document(typed(map, &ty)?),
            "tool_use" => Block::ToolUse(typed(map, &ty)?),
            "server_tool_use" => Block::ServerToolUse(typed(map, &ty)?),
            "tool_result" => Block::ToolResult(typed(map, &ty)?),
            "thinking" => Block::Thinking(typed(map, &ty)?),
            "redacted_thinking" => Block::RedactedThinking(typed(map, &ty)?),
            t if t.ends_with("_tool_result") => match map.get("tool_use_id") {
                Some(Value::String(id)) => Block::ServerToolResult(ServerToolResultBlock {
                    block_type: t.to_string(),
                    tool_use_id: id.clone(),
                    raw: map,
                }),
                _ => Block::Unknown(Value::Object(map)),
            },
            _ => Block::Unknown(Value::Object(map)),
        })
    }

    /// The block back as JSON (`type` first).
    pub fn to_value(&self) -> Value {
        fn tagged<T: Serialize>(ty: &str, body: &T) -> Value {
            let mut out = Map::new();
            out.insert("type".into(), Value::String(ty.into()));
            if let Ok(Value::Object(fields)) = serde_json::to_value(body) {
                out.extend(fields);
            }
            Value::Object(out)
        }
        match self {
            Block::Text(b) => tagged("text", b),
            Block::Image(b) => tagged("image", b),
            Block::Document(b) => tagged("document", b),
            Block::ToolUse(b) => tagged("tool_use", b),
            Block::ServerToolUse(b) => tagged("server_tool_use", b),
            Block::ToolResult(b) => tagged("tool_result", b),
            Block::Thinking(b) => tagged("thinking", b),
            Block::RedactedThinking(b) => tagged("redacted_thinking", b),
            Block::ServerToolResult(b) => Value::Object(b.raw.clone()),
            Block::Unknown(v) => v.clone(),
        }
    }
}

impl Serialize for Block {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.to_value() {
            Value::Object(map) => {
                let mut m = s.serialize_map(Some(map.len()))?;
                for (k, v) in &map {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
            other => other.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Block {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Block::from_value(v).map_err(de::Error::custom)
    }
}

/// A line's identity: what a compaction reads of a line whose payload is never read (see
/// [`payload_is_read`]).
pub const COMPACTION_LINE_FIELDS: &[&str] =
    &["type", "subtype", "uuid", "isSidechain", "timestamp"];

/// Where and in which session a transcript line was written, and by which sub-agent
/// (`agentId`, on every line of a sub-agent's own file). A new boundary copies them from the
/// [`session_template`] line; nothing else reads them.
pub const SESSION_FIELDS: &[&str] = &[
    "userType",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "agentId",
    "slug",
];

/// Fields of a transcript line that nothing in the library reads, even on the lines whose
/// payload it reads: Claude Code's `toolUseResult` (the tool's structured result for its own
/// UI, beside the `tool_result` block the model sees; often a third of a session's bytes). The
/// bindings leave them out of the text that crosses into the core, whose copies of the
/// caller's messages are only read (what a compaction returns is the caller's own objects, or
/// new messages).
pub const UNREAD_FIELDS: &[&str] = &["toolUseResult"];

/// Chain links, request ids and Claude Code's own UI state: read by nothing either, but kept
/// by the readers of whole conversations (a `Compactor`'s snapshot carries them).
pub const BOOKKEEPING_FIELDS: &[&str] = &[
    "parentUuid",
    "logicalParentUuid",
    "requestId",
    "sourceToolAssistantUUID",
    "thinkingMetadata",
    "todos",
    "permissionMode",
];

/// The fields kept of a line whose payload is never read by the readers of whole
/// conversations: its identity and session fields, enough to carry it through.
pub const UNREAD_LINE_FIELDS: [&[&str]; 2] = [COMPACTION_LINE_FIELDS, SESSION_FIELDS];

/// Transcript-line fields a compaction never reads, even on the lines whose payload it reads:
/// [`UNREAD_FIELDS`], [`BOOKKEEPING_FIELDS`] and the [`SESSION_FIELDS`] (read only from the
/// [`session_template`] line, which the compaction paths read again whole). Left out of the
/// text that crosses into the core on the compaction paths, so that they are neither copied
/// nor parsed.
pub const COMPACTION_UNREAD_FIELDS: [&[&str]; 3] =
    [UNREAD_FIELDS, BOOKKEEPING_FIELDS, SESSION_FIELDS];

/// Whether a compaction never reads the transcript-line field `key`
/// ([`COMPACTION_UNREAD_FIELDS`]).
pub fn compaction_unread(key: &str) -> bool {
    COMPACTION_UNREAD_FIELDS.iter().any(|l| l.contains(&key))
}

/// The line a new compact boundary copies its session fields (`cwd`, `sessionId`, …) from:
/// the last transcript line of the conversation (of the main chain, or of a sub-agent's own
/// file once its lines are marked as its conversation, [`Message::conversation`]). Judged by
/// typed fields only, so a message read without its session fields is found as well as a
/// whole one.
pub fn session_template(messages: &[Message]) -> Option<usize> {
    messages
        .iter()
        .rposition(|m| m.is_transcript() && !m.is_sidechain())
}

/// Whether the library reads the payload of a message with this transcript `type`, API `role`
/// and `subtype`: API messages (no `type`, or `type: "message"` with a role), the lines that
/// are sent (`user`, `assistant`, `attachment`) and compact boundaries. Other lines (progress,
/// file-history snapshots, other system lines, …) are read with only their
/// identity fields ([`COMPACTION_LINE_FIELDS`], and [`UNREAD_LINE_FIELDS`] when a whole
/// conversation is read), however large their payload.
pub fn payload_is_read(line_type: Option<&str>, role: Option<&str>, subtype: Option<&str>) -> bool {
    match line_type {
        None | Some("user" | "assistant" | "attachment") => true,
        Some("message") => role.is_some(),
        Some("system") => subtype == Some("compact_boundary"),
        Some(_) => false,
    }
}

/// A short name of a JSON value's type, for error messages.
pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_compaction_block_s_tool_changes_become_a_system_message_of_them() {
        let m = |v: serde_json::Value| Message::from_value(v, "m").unwrap();
        let tc = serde_json::json!([
            {"type": "tool_addition", "tool": {"type": "tool_reference", "name": "deploy"}},
            {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "read"}}]);
        let with = |changes: serde_json::Value| {
            m(serde_json::json!({"role": "user", "content": [
                {"type": "compaction", "content": "S.", "tool_changes": changes},
                {"type": "text", "text": "go on"}]}))
        };
        let kept = with(tc.clone()).tool_changes_message().unwrap();
        assert!(kept.changes_tools(), "kept as the tool changes it is");
        assert_eq!(
            serde_json::to_value(&kept).unwrap(),
            serde_json::json!({"role": "system", "content": tc})
        );
        for none in [serde_json::json!([]), serde_json::Value::Null] {
            assert!(with(none).tool_changes_message().is_none());
        }
        // Only a block that begins the content is the context's compaction.
        let later = m(serde_json::json!({"role": "user", "content": [
            {"type": "text", "text": "x"},
            {"type": "compaction", "content": "S.", "tool_changes": tc}]}));
        assert!(later.tool_changes_message().is_none());
    }

    #[test]
    fn a_system_message_of_tool_additions_or_removals_changes_the_tools() {
        let m = |v: serde_json::Value| Message::from_value(v, "m").unwrap();
        let add = serde_json::json!({"type": "tool_addition", "tool": {"type": "tool_reference", "name": "deploy"}});
        let remove = serde_json::json!({"type": "tool_removal", "tool": {"type": "tool_reference", "name": "read"}});
        for b in [&add, &remove] {
            let text = serde_json::json!({"type": "text", "text": "Deploy when ready."});
            assert!(m(serde_json::json!({"role": "system", "content": [text, b]})).changes_tools());
            // Only a system message changes the tool set.
            assert!(!m(serde_json::json!({"role": "user", "content": [b]})).changes_tools());
        }
        assert!(!m(serde_json::json!({"role": "system", "content": "Be brief."})).changes_tools());
        assert!(!m(
            serde_json::json!({"role": "system", "content": [{"type": "text", "text": "t"}]})
        )
        .changes_tools());
    }

    #[test]
    fn an_opaque_compaction_starts_the_context_a_failed_one_does_not() {
        let m = |block: serde_json::Value| {
            Message::from_value(
                serde_json::json!({"role": "assistant", "content": [block]}),
                "m",
            )
            .unwrap()
        };
        let opaque = m(serde_json::json!({"type": "compaction", "encrypted_content": "E"}));
        assert!(opaque.holds_compaction() && opaque.holds_opaque_compaction());
        let readable =
            m(serde_json::json!({"type": "compaction", "content": "s", "encrypted_content": "E"}));
        assert!(readable.holds_compaction() && !readable.holds_opaque_compaction());
        for failed in [
            serde_json::json!({"type": "compaction", "content": null, "encrypted_content": "E"}),
            serde_json::json!({"type": "compaction", "encrypted_content": ""}),
            serde_json::json!({"type": "compaction"}),
        ] {
            let f = m(failed);
            assert!(!f.holds_compaction() && !f.holds_opaque_compaction());
        }
    }

    #[test]
    fn the_compact_endpoints_window_is_read_its_compaction_starts_nothing() {
        use crate::model::view::ConversationView;
        let all = |v: serde_json::Value| Message::parse_all(v).unwrap();
        let opaque = serde_json::json!({"role": "assistant", "content": [{"type": "compaction", "encrypted_content": "E"}]});
        // `/responses/compact`: the user messages it kept, then its item.
        let window = all(serde_json::json!([
            {"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "first"}]},
            {"role": "user", "content": "second"},
            opaque,
            {"role": "user", "content": "next"},
        ]));
        assert!(super::closes_compact_window(&window, 3));
        assert!(!window.as_slice().starts_context(3));
        assert_eq!(super::compact_window_end(&window), Some(3));
        // Anything else before it: the item replaced it (server-side compaction) and starts
        // the context.
        for before in [
            serde_json::json!({"role": "assistant", "content": "a"}),
            serde_json::json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}),
        ] {
            let m = all(serde_json::json!([{"role": "user", "content": "first"}, before, opaque]));
            assert!(!super::closes_compact_window(&m, 2));
            assert!(m.as_slice().starts_context(2));
            assert_eq!(super::compact_window_end(&m), None);
        }
        // First in the array, or a readable block (the Messages API's): a start as before.
        let first = all(serde_json::json!([opaque, {"role": "user", "content": "x"}]));
        assert!(first.as_slice().starts_context(0));
        let readable = all(serde_json::json!([
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": [{"type": "compaction", "content": "s"}]},
        ]));
        assert!(readable.as_slice().starts_context(1));
    }
    use super::{compaction_unread, payload_is_read, session_template, Message};

    #[test]
    fn a_text_sent_apart_goes_back_where_its_empty_string_was() {
        use serde_json::json;
        let long = "line one\nline \"two\" \u{e9}\u{1f600}".to_string();
        let read = |v: serde_json::Value| Message::from_value(v, "m").unwrap();
        let placed = |mut v: serde_json::Value, path: &[&str]| {
            let mut at = &mut v;
            for p in path {
                at = match p.parse::<usize>() {
                    Ok(i) => &mut at[i],
                    Err(_) => &mut at[*p],
                };
            }
            *at = json!(long);
            v
        };
        let line = |content| json!({"type": "user", "uuid": "u", "message": {"role": "user", "content": content}});
        let api = |content| json!({"role": "assistant", "content": content, "id": "x"});
        let blocks = json!([
            {"type": "text", "text": "", "cache_control": {"type": "ephemeral"}},
            {"type": "tool_result", "tool_use_id": "t", "content": "", "is_error": true},
            {"type": "thinking", "thinking": "", "signature": "s"},
            {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": ""}]},
            {"type": "text", "text": "not empty"},
            {"type": "mystery", "content": ""},
            {"type": "tool_use", "id": "i", "name": "Write", "input": {"file_path": "/a", "content": "", "n": ""}},
            {"type": "server_tool_use", "id": "s", "name": "web_search", "input": {"query": ""}}
        ]);
        // The place of field `k` of the input of tool use `b`.
        let field = |b: usize, k: usize| b + 1 + (k + 1) * (1 << 21);
        // Where it goes back: the same message as the JSON with the string in place.
        for (v, slot, path) in [
            (line(json!("")), 0, vec!["message", "content"]),
            (api(json!("")), 0, vec!["content"]),
            (
                line(blocks.clone()),
                1,
                vec!["message", "content", "0", "text"],
            ),
            (
                line(blocks.clone()),
                2,
                vec!["message", "content", "1", "content"],
            ),
            (api(blocks.clone()), 1, vec!["content", "0", "text"]),
            (api(blocks.clone()), 2, vec!["content", "1", "content"]),
            (
                line(blocks.clone()),
                field(6, 1),
                vec!["message", "content", "6", "input", "content"],
            ),
            (
                api(blocks.clone()),
                field(6, 2),
                vec!["content", "6", "input", "n"],
            ),
            // `message: null`: the line's own `content` (where the sender looks too).
            (
                json!({"type": "user", "message": null, "content": ""}),
                0,
                vec!["content"],
            ),
        ] {
            let mut m = read(v.clone());
            assert!(m.put_apart_text(slot, long.clone()), "{v} {slot}");
            assert_eq!(m, read(placed(v, &path)));
        }
        // Where it cannot: nothing changes.
        for (v, slot) in [
            (line(json!("")), 1),
            (line(json!("x")), 0),
            (line(blocks.clone()), 0),
            (line(blocks.clone()), 3),
            (line(blocks.clone()), 4),
            (line(blocks.clone()), 5),
            (line(blocks.clone()), 6),
            (line(blocks.clone()), 7),
            (line(blocks.clone()), 8),
            (line(blocks.clone()), field(6, 0)),
            (line(blocks.clone()), field(6, 3)),
            (line(blocks.clone()), field(7, 0)),
            (line(blocks.clone()), field(0, 0)),
            (line(blocks.clone()), field(1, 0)),
            (line(json!("")), 1 << 21),
            (api(json!(null)), 0),
            (json!({"type": "system", "subtype": "x"}), 0),
        ] {
            let mut m = read(v.clone());
            let before = m.clone();
            assert!(!m.put_apart_text(slot, long.clone()), "{v} {slot}");
            assert_eq!(m, before);
        }
    }

    #[test]
    fn kind_is_the_line_type_of_a_transcript_line_else_the_role() {
        // As `kind` was first written: through `is_transcript`, and the role as a string.
        let reference = |m: &Message| {
            if !m.is_transcript() {
                return m
                    .role()
                    .map_or(Kind::Other, |r| Kind::from_role(r.as_str()));
            }
            let t = m.line_type().unwrap_or_default();
            match t {
                "user" => Kind::User,
                "assistant" => Kind::Assistant,
                "system" => Kind::System,
                "attachment" => Kind::Attachment,
                _ => Kind::Other,
            }
        };
        let types = [
            None,
            Some(None),
            Some(Some("user")),
            Some(Some("assistant")),
            Some(Some("system")),
            Some(Some("attachment")),
            Some(Some("message")),
            Some(Some("progress")),
            Some(Some("")),
            Some(Some("usex")),
            Some(Some("assistanT")),
            Some(Some("attachmenz")),
            Some(Some("sistem")),
            Some(Some("a")),
            Some(Some("ässistant")),
        ];
        let roles = [
            None,
            Some(None),
            Some(Some("user")),
            Some(Some("assistant")),
            Some(Some("system")),
            Some(Some("developer")),
            Some(Some("tool")),
            Some(Some("")),
        ];
        for t in types {
            for r in roles {
                let m = Message {
                    line_type: t.map(|t| t.map(str::to_string)),
                    role: r.map(|r| r.map(Role::parse)),
                    ..Message::default()
                };
                assert_eq!(m.kind(), reference(&m), "{t:?} {r:?}");
            }
        }
        // A role kept as another string that names a known one.
        let m = Message {
            role: Some(Some(Role::Other("user".into()))),
            ..Message::default()
        };
        assert_eq!(m.kind(), Kind::User);
    }

    use serde_json::Value;

    fn line(v: Value) -> Message {
        Message::from_value(v, "m").unwrap()
    }

    /// `v` without the fields a compaction does not read, as the compaction paths read it.
    fn as_compaction_reads(v: &Value) -> Message {
        let mut v = v.clone();
        let o = v.as_object_mut().unwrap();
        o.retain(|k, _| !compaction_unread(k));
        line(v)
    }

    #[test]
    fn a_whole_line_is_the_same_as_what_a_compaction_reads_of_it() {
        let whole = json!({"parentUuid": "p", "cwd": "/x", "sessionId": "s", "type": "user",
            "message": {"role": "user", "content": "hi"}, "uuid": "u1", "toolUseResult": {"a": 1},
            "custom": 7});
        let read = as_compaction_reads(&whole);
        assert!(line(whole.clone()).same_when_compacting(&read));
        assert!(read.same_when_compacting(&line(whole.clone())));
        // A field a compaction reads (or keeps) tells them apart.
        let mut other = whole.clone();
        other["custom"] = json!(8);
        assert!(!line(other).same_when_compacting(&read));
        let mut other = whole.clone();
        other["message"]["content"] = json!("ho");
        assert!(!line(other).same_when_compacting(&read));
        // A carried line: its identity decides.
        let p = json!({"type": "progress", "uuid": "u2", "data": {"big": "x"}});
        let slim = line(json!({"type": "progress", "uuid": "u2"}));
        assert!(line(p).same_when_compacting(&slim));
        assert!(!line(json!({"type": "progress", "uuid": "u3"})).same_when_compacting(&slim));
    }

    #[test]
    fn the_session_template_is_the_last_main_chain_line() {
        let ms = [
            line(json!({"type": "user", "uuid": "a", "message": {"role": "user", "content": "x"}})),
            line(json!({"type": "progress", "uuid": "b"})),
            line(json!({"type": "user", "uuid": "c", "isSidechain": true})),
            line(json!({"role": "user", "content": "api"})),
        ];
        assert_eq!(session_template(&ms), Some(1));
        assert_eq!(session_template(&ms[3..]), None);
    }

    #[test]
    fn the_payload_of_unsent_lines_is_not_read() {
        for (t, role, sub, read) in [
            (None, None, None, true),
            (None, Some("user"), None, true),
            (Some("user"), None, None, true),
            (Some("assistant"), None, None, true),
            (Some("attachment"), None, None, true),
            (Some("message"), Some("assistant"), None, true),
            (Some("message"), None, None, false),
            (Some("system"), None, Some("compact_boundary"), true),
            (Some("system"), None, Some("api_error"), false),
            (Some("system"), None, None, false),
            (Some("progress"), None, None, false),
            (Some("file-history-snapshot"), None, None, false),
        ] {
            assert_eq!(
                payload_is_read(t, role, sub),
                read,
                "{t:?} {role:?} {sub:?}"
            );
        }
    }

    use super::*;
    use serde_json::json;

    /// The boundary lines compactions put in front of an API conversation do not make it
    /// transcript lines; any other line does.
    #[test]
    fn only_lines_besides_boundaries_make_a_conversation_lines() {
        let boundary = json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "uuid": "b"});
        let api = Message::parse_all(json!([boundary.clone(), {"role": "user", "content": "s"}, {"role": "assistant", "content": "a"}])).unwrap();
        assert!(!Message::written_as_lines(&api));
        let lines = Message::parse_all(json!([boundary, {"type": "user", "uuid": "u", "message": {"role": "user", "content": "s"}}])).unwrap();
        assert!(Message::written_as_lines(&lines));
    }

    #[test]
    fn api_and_transcript_shapes_parse() {
        let api = Message::from_value(json!({"role": "user", "content": "hi"}), "m").unwrap();
        assert_eq!(api.kind(), Kind::User);
        assert!(!api.is_transcript());
        assert_eq!(api.content(), Some(&Content::Text("hi".into())));

        let line = Message::from_value(
            json!({"type": "assistant", "uuid": "u1", "parentUuid": null,
                   "message": {"role": "assistant", "id": "msg_1", "content": [{"type": "text", "text": "ok"}],
                               "usage": {"input_tokens": 3, "output_tokens": 5}, "stop_reason": null}}),
            "m",
        )
        .unwrap();
        assert_eq!(line.kind(), Kind::Assistant);
        assert_eq!(line.message_id(), Some("msg_1"));
        assert_eq!(
            line.usage_raw().unwrap().input_tokens,
            Some(Some(serde_json::Number::from(3)))
        );
    }

    #[test]
    fn a_null_type_survives() {
        let v = json!({"type": null, "role": "user", "content": "x"});
        let m = Message::from_value(v.clone(), "m").unwrap();
        assert_eq!(m.to_value(), v);
        assert_eq!(m.kind(), Kind::User);
    }

    #[test]
    fn a_response_body_is_an_api_message() {
        let m = Message::from_value(
            json!({"id": "msg_1", "type": "message", "role": "assistant",
                   "content": [{"type": "text", "text": "hi"}], "usage": {"input_tokens": 1000, "output_tokens": 5}}),
            "m",
        )
        .unwrap();
        assert!(!m.is_transcript());
        assert_eq!(m.kind(), Kind::Assistant);
        assert!(m.usage_raw().is_some());
    }

    #[test]
    fn every_block_type_round_trips() {
        let blocks = json!([
            {"type": "text", "text": "a", "citations": null},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
            {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "x"}, "title": "t"},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}},
            {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "r"}], "is_error": false},
            {"type": "tool_result", "tool_use_id": "t2"},
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "redacted_thinking", "data": "xyz"},
            {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}},
            {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
            {"type": "brand_new_block", "payload": [1, 2, {"deep": true}]}
        ]);
        let parsed: Vec<Block> = serde_json::from_value(blocks.clone()).unwrap();
        assert!(matches!(parsed[8], Block::ServerToolUse(_)));
        assert!(matches!(parsed[9], Block::ServerToolResult(_)));
        assert!(matches!(parsed[10], Block::Unknown(_)));
        assert_eq!(serde_json::to_value(&parsed).unwrap(), blocks);
    }

    #[test]
    fn unknown_fields_and_nulls_survive() {
        let v = json!({"parentUuid": null, "type": "user", "uuid": null, "weird": {"a": [1, 2.5]},
                       "message": {"role": "user", "content": "x", "id": null}});
        let m = Message::from_value(v.clone(), "m").unwrap();
        assert_eq!(m.to_value(), v);
    }

    #[test]
    fn unknown_line_types_carry_fields_of_other_types() {
        for v in [
            json!({"type": "queue-operation", "content": [1, {"y": null}], "uuid": "q1"}),
            json!({"type": "progress", "uuid": 5, "parentUuid": "p"}),
            json!({"type": "summary", "timestamp": 1_770_000_000, "summary": "s"}),
            json!({"type": "future-thing", "message": {"content": 7}, "isMeta": "yes"}),
        ] {
            let m = Message::from_value(v.clone(), "m").unwrap();
            assert_eq!(m.kind(), Kind::Other);
            assert_eq!(m.to_value(), v, "nothing lost");
            assert_eq!(Message::from_value(m.to_value(), "m").unwrap(), m);
        }
        // A null role does not make a response body (as `is_transcript` judges it).
        let v = json!({"type": "message", "role": null, "content": 7});
        let m = Message::from_value(v.clone(), "m").unwrap();
        assert_eq!((m.kind(), m.to_value()), (Kind::Other, v));
        // Fields with their types stay typed.
        let m = Message::from_value(
            json!({"type": "progress", "uuid": "u1", "timestamp": 5}),
            "m",
        )
        .unwrap();
        assert_eq!(m.uuid(), Some("u1"));
        assert_eq!(m.extra.get("timestamp"), Some(&json!(5)));
        // Lines the library reads keep their types checked.
        for v in [
            json!({"type": "user", "uuid": 5, "message": {"role": "user", "content": "x"}}),
            json!({"type": "assistant", "message": {"role": "assistant", "content": 7}}),
            json!({"type": "message", "role": "assistant", "content": 7}),
            json!({"role": "user", "content": [1]}),
        ] {
            let e = Message::from_value(v.clone(), "m").unwrap_err();
            assert_eq!(
                e.code,
                crate::model::error::ErrorCode::InvalidMessage,
                "{v}"
            );
        }
    }

    #[test]
    fn bad_messages_name_the_location() {
        let e = Message::parse_all(json!([{"role": "user", "content": "a"}, 5])).unwrap_err();
        assert_eq!(e.code, crate::model::error::ErrorCode::InvalidMessage);
        assert!(e.message.starts_with("messages[1]"), "{}", e.message);
        let e = Message::parse_all(json!({"role": "user"})).unwrap_err();
        assert_eq!(e.code, crate::model::error::ErrorCode::InvalidArgument);
        let e = Message::parse_all(json!([{"role": "user", "content": [{"type": "text"}]}]))
            .unwrap_err();
        assert!(e.message.contains("messages[0]"), "{}", e.message);
    }

    #[test]
    fn base64_size() {
        let b = MediaBlock {
            source: Some(Some(
                json!({"type": "base64", "media_type": "image/png", "data": "QUJD"}),
            )),
            extra: Map::new(),
        };
        assert_eq!(b.base64_bytes(), Some(3));
        assert_eq!(b.media_type(), Some("image/png"));
    }
}
