//! Claude Code session files (SPEC §17): JSONL in, JSONL out, nothing lost.
//!
//! Splitting and validation live here; the JSON of each line is parsed by the caller's side
//! (`serde_json` natively, the engine's `JSON.parse` in JavaScript) so key order and number
//! formatting survive a round trip.

use serde_json::Value;

use crate::model::error::{Error, ErrorCode, Result};
use crate::model::messages::{
    fold_text_deeper_than, json_type_name, nested_deeper_than, Kind, Message, MAX_NESTING,
    TYPED_FIELDS,
};

/// One non-empty line of a JSONL text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based line number in the file.
    pub number: usize,
    /// The line's text, without its line ending.
    pub text: &'a str,
}

/// The byte-order mark some editors put at the start of a file (ignored).
pub const BOM: u16 = 0xfeff;

/// What to do with one line of a JSONL text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineAction {
    /// Parse it as JSON.
    Parse,
    /// Skip it (the empty text after the final line ending).
    Skip,
}

/// Decides about line `number` (1-based): blank lines are an error, except the empty text
/// after the final line ending.
pub fn classify_line(number: usize, is_last: bool, is_blank: bool) -> Result<LineAction> {
    match (is_blank, is_last) {
        (false, _) => Ok(LineAction::Parse),
        (true, true) => Ok(LineAction::Skip),
        (true, false) => Err(blank_line(number)),
    }
}

/// The error for a blank line.
pub fn blank_line(number: usize) -> Error {
    Error::new(
        ErrorCode::MalformedTranscript,
        format!("line {number}: blank line in a JSONL transcript"),
    )
}

/// Splits JSONL text into lines. A final line ending is allowed; a blank line elsewhere is
/// an error naming its number (it is never silently dropped).
pub fn split_lines(text: &str) -> Result<Vec<Line<'_>>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut parts = text.split('\n').peekable();
    let mut number = 0;
    while let Some(raw) = parts.next() {
        number += 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let is_last = parts.peek().is_none();
        if classify_line(number, is_last, line.trim().is_empty())? == LineAction::Parse {
            out.push(Line { number, text: line });
        }
    }
    Ok(out)
}

/// The error for a line whose JSON did not parse.
pub fn malformed_line(number: usize, detail: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::MalformedTranscript,
        format!("line {number}: invalid JSON: {detail}"),
    )
}

/// The error for a line nested deeper than [`MAX_NESTING`] levels.
pub fn too_deep_line(number: usize) -> Error {
    Error::new(
        ErrorCode::MalformedTranscript,
        format!(
            "line {number}: nested deeper than {MAX_NESTING} levels of objects and arrays (the limit of parseTranscript, so that every line it reads can be written back as it was)"
        ),
    )
}

/// The error for a line that parsed to something other than an object.
pub fn non_object_line(number: usize, what: &str) -> Error {
    Error::new(
        ErrorCode::MalformedTranscript,
        format!("line {number}: expected a JSON object, got {what}"),
    )
}

/// JSON text with every `\uXXXX` escape of a lone UTF-16 surrogate (which JavaScript strings
/// may hold and `JSON.stringify` writes, but Rust strings cannot) replaced by `\ufffd`.
pub fn replace_lone_surrogates(json: &str) -> String {
    let b = json.as_bytes();
    let hex_at = |i: usize| -> Option<u32> {
        let h = json.get(i..i + 4)?;
        u32::from_str_radix(h, 16).ok()
    };
    let mut out = String::with_capacity(json.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            i += 2; // another escape, e.g. \\ or \"
            continue;
        }
        let Some(cp) = hex_at(i + 2) else {
            i += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&cp);
        let is_low = (0xDC00..0xE000).contains(&cp);
        let paired = is_high
            && b.get(i + 6) == Some(&b'\\')
            && b.get(i + 7) == Some(&b'u')
            && hex_at(i + 8).is_some_and(|c| (0xDC00..0xE000).contains(&c));
        if paired {
            i += 12;
        } else if is_high || is_low {
            out.push_str(&json[last..i]);
            out.push_str("\\ufffd");
            i += 6;
            last = i;
        } else {
            i += 6;
        }
    }
    out.push_str(&json[last..]);
    out
}

/// A message from its JSON text (as `JSON.stringify` writes a caller's message), naming
/// `location()` in errors (made only for an error or the value path). The same message, and the same errors, as parsing the text into a
/// JSON value and reading that with [`Message::from_value`], which is what happens when the
/// direct reading cannot be used: an object within the nesting limit is read straight into
/// the typed message (no intermediate value); anything else (not an object, too deep, a lone
/// UTF-16 surrogate that JavaScript strings may hold, a carried-through line with a field of
/// another type, any error) takes the value path, whose errors name what is wrong.
pub fn message_from_json_text(text: &str, location: &dyn Fn() -> String) -> Result<Message> {
    // Below MAX_NESTING levels the message is read as text (see MAX_NESTING): parsed without
    // deep recursion (serde_json refuses more than 128 levels).
    let folded = fold_text_deeper_than(text, MAX_NESTING);
    let mark = |mut m: Message| {
        if let std::borrow::Cow::Owned(_) = folded {
            m.folded = crate::model::messages::FoldMark(Some(location().into()));
        }
        m
    };
    let text = &*folded;
    if text.starts_with('{') {
        if let Some(m) = crate::model::direct::message_from_text(text) {
            if m.line_type().is_some() || m.role().is_some() {
                m.check_role(location)?;
                return Ok(mark(m));
            }
        }
    }
    let at = &location();
    let v: Value = serde_json::from_str(text)
        .or_else(|_| serde_json::from_str(&replace_lone_surrogates(text)))
        .map_err(|e| Error::invalid_message(e.to_string()).at(at))?;
    Message::from_value(v, at).map(mark)
}

/// One field of a carried line as the JS side can hand it over without JSON: absent (or its
/// getter threw), a boolean or a string. Other values cross as JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field<'a> {
    /// Not there (`undefined`).
    Absent,
    /// `true` or `false`.
    Bool(bool),
    /// A string.
    Str(&'a str),
}

/// A line whose payload is never read ([`crate::model::messages::payload_is_read`]) from
/// the fields picked of it, in their order: the same message, and the same errors, as
/// [`message_from_json_text`] gives for the JSON object of those that are not absent. The
/// identity fields (`type`, `subtype`, `uuid`, `timestamp` as strings, `isSidechain` as a
/// boolean) go straight into the typed message and any other field into its unknown fields;
/// anything else (no `type`, a typed field of another type) is read as that object would be.
pub fn message_from_fields(
    fields: &[(&str, Field<'_>)],
    location: &dyn Fn() -> String,
) -> Result<Message> {
    let mut m = Message::default();
    let text = |s: &str| Some(Some(s.to_string()));
    let mut direct = true;
    for &(key, value) in fields {
        match (key, value) {
            (_, Field::Absent) => {}
            ("type", Field::Str(s)) => m.line_type = text(s),
            ("subtype", Field::Str(s)) => m.subtype = text(s),
            ("uuid", Field::Str(s)) => m.uuid = text(s),
            ("timestamp", Field::Str(s)) => m.timestamp = text(s),
            ("isSidechain", Field::Bool(b)) => m.is_sidechain = Some(Some(b)),
            (k, _) if TYPED_FIELDS.contains(&k) => direct = false,
            (k, Field::Str(s)) => {
                m.extra.insert(k.to_string(), Value::String(s.to_string()));
            }
            (k, Field::Bool(b)) => {
                m.extra.insert(k.to_string(), Value::Bool(b));
            }
        }
    }
    if direct && m.line_type.is_some() {
        return Ok(m);
    }
    let mut object = serde_json::Map::new();
    for &(k, v) in fields {
        let v = match v {
            Field::Absent => continue,
            Field::Bool(b) => Value::Bool(b),
            Field::Str(s) => Value::String(s.to_string()),
        };
        object.insert(k.to_string(), v);
    }
    Message::from_value(Value::Object(object), &location())
}

/// Where a line's `parentUuid` (or a boundary's `logicalParentUuid`) points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parent {
    /// No parent: `null`, absent or not a string.
    None,
    /// The line at this index (the first line carrying that `uuid`).
    At(usize),
    /// A `uuid` no line of the list carries: the chain is broken here.
    Missing,
    /// No `parentUuid` at all (or one that is neither a string nor `null`): the line says
    /// nothing of its place (a line made by hand). It stays in the conversation, and a chain
    /// that reaches it is not followed.
    Absent,
}

/// What [`conversation_mask`] reads of one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// The line has a string `uuid` (lines without one — summary, file-history-snapshot,
    /// queue-operation — are on no chain).
    pub has_uuid: bool,
    /// Its `parentUuid`.
    pub parent: Parent,
    /// Its `logicalParentUuid` (a `compact_boundary` line's link over the boundary).
    pub logical_parent: Parent,
    /// The nearest line above it that is not a progress line (following `parentUuid`), if
    /// any.
    pub anchor: Option<usize>,
    /// `isSidechain: true`.
    pub sidechain: bool,
    /// A `user` or `assistant` line (a turn of the conversation).
    pub turn: bool,
    /// A user line holding a `tool_result` for a `tool_use` of its anchor line. Claude Code
    /// hangs the result of each of a response's parallel calls from the line of its call,
    /// so all but the last are off the chain the next turn continues: they are followed too.
    pub answers_parent: bool,
    /// An assistant line of the same response (`message.id`) as its anchor line: a later
    /// block of a response whose parallel calls the chain may have left at an earlier one.
    pub continues_parent: bool,
    /// An `attachment` line (what a hook or reminder added after its anchor line: it goes
    /// with a parallel call's result the chain left).
    pub attachment: bool,
    /// A `compact_boundary` system line.
    pub boundary: bool,
}

/// Which lines form the conversation (`true`), when that differs from "every line that is
/// not a sub-agent line" (`None` otherwise, the usual case):
///
/// * a sub-agent's own file (no main-chain turn, some sub-agent turn): its sub-agent lines
///   are the conversation;
/// * a file holding several branches (a resume or rewind wrote a turn again under another
///   parent): the conversation is the `parentUuid` chain from the leaf — the last turn with a
///   `uuid`, what Claude Code resumes — through `logicalParentUuid` across a compact
///   boundary, plus the later lines that hang from it (a compact boundary by its
///   `logicalParentUuid`). Lines of other branches are left out;
///   lines without a `uuid` are kept.
///
/// A chain that is broken (a parent no line carries, a loop) is not followed: the lines are
/// then read in file order, so that no message is lost to a damaged file. Where the chain
/// stops at a boundary it cannot cross, the lines before that boundary stay (they are not sent
/// anyway).
pub fn conversation_mask(links: &[Link]) -> Option<Vec<bool>> {
    let own = is_own_file(links);
    let considered = |l: &Link| own || !l.sidechain;
    let base: Vec<bool> = links.iter().map(considered).collect();
    let chained = follow_chain(links, &base).unwrap_or_else(|| base.clone());
    let differs = chained.iter().zip(links).any(|(&on, l)| on == l.sidechain);
    differs.then_some(chained)
}

/// The lines of the file's conversation — its main-chain lines, or a sub-agent's own file's
/// lines — that `mask` ([`conversation_mask`] of `links`) leaves out: the branches a rewind or
/// a resume under another parent abandoned. They are not sent and not counted, but their
/// responses' usage measured requests of the same session (the same system prompt and tools):
/// the calibration learns from it ([`crate::measure::tokens::learned_before`]).
pub fn other_branches(links: &[Link], mask: &[bool]) -> Vec<bool> {
    let own = is_own_file(links);
    links
        .iter()
        .zip(mask)
        .map(|(l, &on)| !on && (own || !l.sidechain))
        .collect()
}

/// Whether the lines are a sub-agent's own file: no main-chain turn, some sub-agent turn.
fn is_own_file(links: &[Link]) -> bool {
    !links.iter().any(|l| l.turn && !l.sidechain) && links.iter().any(|l| l.turn)
}

/// [`conversation_mask`] when it changes what a count reads: a line that is ever counted or
/// sent (a turn, an attachment, a boundary) on the other side of what `isSidechain` says. A
/// progress line the chain passes by changes nothing counted: `None` then, as when file order
/// is the conversation.
pub fn counted_mask(links: &[Link]) -> Option<Vec<bool>> {
    let mask = conversation_mask(links)?;
    let counted =
        |(&on, l): (&bool, &Link)| on == l.sidechain && (l.turn || l.attachment || l.boundary);
    mask.iter().zip(links).any(counted).then_some(mask)
}

/// A line with a `uuid` whose `parentUuid` is `null` and that has no `logicalParentUuid`: the
/// start of a conversation.
fn is_root(l: &Link) -> bool {
    l.has_uuid && l.parent == Parent::None && l.logical_parent == Parent::None
}

/// The lines of the chain from the leaf among the `considered` ones (see
/// [`conversation_mask`]), or `None` when the chain is broken or leaves nothing out.
fn follow_chain(links: &[Link], considered: &[bool]) -> Option<Vec<bool>> {
    let leaf = (0..links.len())
        .rev()
        .find(|&i| considered[i] && links[i].turn && links[i].has_uuid)?;
    let last_boundary = (0..links.len())
        .rev()
        .find(|&i| considered[i] && links[i].boundary);
    let mut on = vec![false; links.len()];
    let mut i = leaf;
    // Where the walk stopped at a boundary it could not cross: lines before it stay.
    let mut keep_before = 0;
    loop {
        if on[i] {
            return None; // a loop
        }
        on[i] = true;
        let l = &links[i];
        let next = match (l.parent, l.logical_parent) {
            (Parent::At(p), _) | (Parent::None, Parent::At(p)) => p,
            (Parent::Missing | Parent::Absent, _) => return None,
            (Parent::None, Parent::Missing | Parent::Absent) => {
                keep_before = i;
                break;
            }
            // A root. When an earlier turn is a root too and no turn of the file names a
            // parent, the lines carry no chain at all (written by hand with `parentUuid: null`
            // each, or by a tool that does not link them): reading only the last would lose
            // the others. Read in file order. (Where turns are linked, a second root is a
            // rewind to the first message: the branch before it is left out.)
            (Parent::None, Parent::None) => {
                let linked = || {
                    (0..links.len()).any(|j| {
                        considered[j] && links[j].turn && matches!(links[j].parent, Parent::At(_))
                    })
                };
                if (0..i).any(|j| considered[j] && links[j].turn && is_root(&links[j])) && !linked()
                {
                    return None;
                }
                break;
            }
        };
        i = next;
    }
    // A chain from after the last boundary that does not go through it (the lines a
    // compaction kept, written again after its summary with their old parents) is not what
    // is resumed: such a file is read in file order.
    if last_boundary.is_some_and(|b| b < leaf && !on[b]) {
        return None;
    }
    // The blocks and results of parallel calls hanging from the chain's calls, and the later
    // lines that hang from the chain (written after the leaf: an attachment, a system line);
    // parents come before their children, so a pass or two finds them all.
    let walked = on.clone();
    let mut grew = true;
    while grew {
        grew = false;
        for (j, l) in links.iter().enumerate() {
            // A compact boundary hangs by its logicalParentUuid (written after the leaf: its
            // summary is not written yet; the context was compacted all the same), or by
            // nothing when that names no line of the file (as the chain crosses it).
            let after_leaf = match (l.parent, l.logical_parent) {
                (Parent::At(p), _) | (Parent::None, Parent::At(p)) => j > leaf && on[p],
                (Parent::None, Parent::Missing) => j > leaf && l.boundary,
                _ => false,
            };
            let hangs = l.anchor.is_some_and(|a| {
                on[a] && (l.answers_parent || l.continues_parent || (l.attachment && !walked[a]))
            });
            if !on[j] && considered[j] && (after_leaf || hangs) {
                on[j] = true;
                grew = true;
            }
        }
    }
    let mut left_out = false;
    for (j, l) in links.iter().enumerate() {
        if !considered[j] {
            on[j] = false;
            continue;
        }
        if !l.has_uuid || l.parent == Parent::Absent || j < keep_before {
            on[j] = true;
        } else if !on[j] {
            left_out = true;
        }
    }
    left_out.then_some(on)
}

/// The [`Link`]s of `messages`, read from their `uuid`, `parentUuid`, `logicalParentUuid`
/// and `isSidechain` fields.
pub fn links_of(messages: &[Message]) -> Vec<Link> {
    let mut at: crate::model::hash::FastMap<&str, usize> = Default::default();
    for (i, m) in messages.iter().enumerate() {
        if let Some(u) = m.uuid() {
            at.entry(u).or_insert(i);
        }
    }
    let find = |u: &str| at.get(u).map_or(Parent::Missing, |&i| Parent::At(i));
    // `parentUuid: null` is a root; no `parentUuid` at all says nothing (a chain reaching
    // such a line is not followed).
    let parents: Vec<Parent> = messages
        .iter()
        .map(|m| match m.extra.get("parentUuid") {
            Some(Value::Null) => Parent::None,
            Some(Value::String(u)) => find(u),
            _ => Parent::Absent,
        })
        .collect();
    let is_progress = |i: usize| messages[i].line_type() == Some("progress");
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let logical_parent = match m.extra.get("logicalParentUuid") {
                Some(Value::String(u)) => find(u),
                _ => Parent::None,
            };
            let anchor = anchor_of(i, &parents, &is_progress);
            let (answers_parent, continues_parent) = match anchor {
                Some(p) => {
                    let up = &messages[p];
                    let same = m.kind() == Kind::Assistant
                        && up.kind() == Kind::Assistant
                        && m.message_id().is_some()
                        && m.message_id() == up.message_id();
                    (m.kind() == Kind::User && answers(m, up), same)
                }
                None => (false, false),
            };
            Link {
                has_uuid: m.uuid().is_some(),
                parent: parents[i],
                logical_parent,
                anchor,
                sidechain: matches!(m.is_sidechain, Some(Some(true))),
                turn: m.is_transcript() && matches!(m.kind(), Kind::User | Kind::Assistant),
                answers_parent,
                continues_parent,
                attachment: m.is_transcript() && m.kind() == Kind::Attachment,
                boundary: m.is_compact_boundary(),
            }
        })
        .collect()
}

/// The nearest line above line `i` (by `parents`) that is not a progress line
/// (`is_progress`): Claude Code hangs a response's later parallel call from the progress lines
/// of the call before.
pub fn anchor_of(
    i: usize,
    parents: &[Parent],
    is_progress: &dyn Fn(usize) -> bool,
) -> Option<usize> {
    let mut p = match parents[i] {
        Parent::At(p) => p,
        _ => return None,
    };
    for _ in 0..parents.len() {
        if !is_progress(p) {
            return Some(p);
        }
        p = match parents[p] {
            Parent::At(q) => q,
            _ => return None,
        };
    }
    None
}

/// Whether `result` holds a `tool_result` for a `tool_use` of `call`.
fn answers(result: &Message, call: &Message) -> bool {
    use crate::model::messages::{Block, Content};
    fn blocks(m: &Message) -> &[Block] {
        match m.content() {
            Some(Content::Blocks(b)) => b,
            _ => &[],
        }
    }
    if call.kind() != Kind::Assistant {
        return false;
    }
    let calls = blocks(call);
    blocks(result).iter().any(|b| match b {
        Block::ToolResult(r) => calls
            .iter()
            .any(|c| matches!(c, Block::ToolUse(u) if u.id == r.tool_use_id)),
        _ => false,
    })
}

/// Marks which of `messages` form the conversation ([`Message::conversation`]), as
/// [`conversation_mask`] decides from `links` (one per message): every function that reads
/// the marked messages as a conversation (the API view, counts, the summary request, a
/// compaction) then follows the chain from the leaf, or reads a sub-agent's own file as its
/// conversation. The lines themselves are unchanged. Marks already set are cleared first.
pub fn mark_conversation(messages: &mut [Message], links: &[Link]) {
    for m in messages.iter_mut() {
        m.conversation = Default::default();
    }
    if links.len() != messages.len() {
        return;
    }
    if let Some(mask) = conversation_mask(links) {
        let other = other_branches(links, &mask);
        for (m, ((on, l), other)) in messages
            .iter_mut()
            .zip(mask.into_iter().zip(links).zip(other))
        {
            // A line of a branch left out is marked even when `isSidechain` already leaves it
            // out (a sub-agent's own file): its usage is learned from.
            if on == l.sidechain || other {
                m.conversation = crate::model::messages::ConversationMark(Some(on));
            }
        }
    }
}

/// `parseTranscript` natively: every line as a [`Message`] (unknown line types included),
/// marked as [`mark_conversation`] decides (the lines themselves as read).
pub fn parse_transcript(text: &str) -> Result<Vec<Message>> {
    let mut lines = parse_lines(text)?;
    let links = links_of(&lines);
    mark_conversation(&mut lines, &links);
    Ok(lines)
}

fn parse_lines(text: &str) -> Result<Vec<Message>> {
    split_lines(text)?
        .into_iter()
        .map(|line| {
            let v: Value =
                serde_json::from_str(line.text).map_err(|e| malformed_line(line.number, e))?;
            if !v.is_object() {
                return Err(non_object_line(line.number, json_type_name(&v)));
            }
            if nested_deeper_than(&v, MAX_NESTING) {
                return Err(too_deep_line(line.number));
            }
            Message::from_object(v).map_err(|e| {
                Error::new(
                    ErrorCode::MalformedTranscript,
                    format!("line {}: {e}", line.number),
                )
            })
        })
        .collect()
}

/// `serializeTranscript` natively: one JSON object per line, each line ending in `\n`.
pub fn serialize_transcript(messages: &[Message]) -> Result<String> {
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        let line = serde_json::to_string(m).map_err(|e| {
            Error::new(
                ErrorCode::SerializationFailed,
                format!("messages[{i}]: {e}"),
            )
        })?;
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {

    #[test]
    fn picked_fields_give_what_their_json_object_gives() {
        use super::{message_from_fields, Field, Field::*};
        let s = Field::Str;
        let cases: Vec<Vec<(&str, Field)>> = vec![
            vec![
                ("type", s("progress")),
                ("subtype", Absent),
                ("uuid", s("u-1")),
                ("isSidechain", Bool(false)),
                ("timestamp", s("2025-01-01T00:00:00.000Z")),
            ],
            // Session fields go to the unknown fields, in their order.
            vec![
                ("type", s("file-history-snapshot")),
                ("uuid", Absent),
                ("cwd", s("/w")),
                ("isSidechain", Bool(true)),
                ("userType", s("external")),
                ("isTeammate", Bool(false)),
                ("version", s("2.0")),
            ],
            // A typed field of another type, no type, nothing at all.
            vec![("type", s("progress")), ("isSidechain", s("no"))],
            vec![("type", s("progress")), ("uuid", Bool(true))],
            vec![("type", Bool(true)), ("uuid", s("u"))],
            vec![
                ("type", s("x")),
                ("isMeta", Bool(true)),
                ("role", s("user")),
            ],
            vec![
                ("type", s("x")),
                ("content", s("c")),
                ("message", Bool(false)),
            ],
            vec![("uuid", s("u"))],
            vec![],
            // Strings JSON escapes; an empty one.
            vec![
                ("type", s("x\"\\\n\u{0}\u{e9}\u{1f600}")),
                ("timestamp", s("")),
            ],
            vec![("type", s("system")), ("subtype", s("informational"))],
        ];
        for f in cases {
            let object: serde_json::Map<String, Value> = f
                .iter()
                .filter_map(|&(k, v)| match v {
                    Absent => None,
                    Bool(b) => Some((k.to_string(), Value::Bool(b))),
                    Str(t) => Some((k.to_string(), Value::String(t.to_string()))),
                })
                .collect();
            let json = serde_json::to_string(&object).unwrap();
            let at = || "messages[3]".to_string();
            match (
                message_from_json_text(&json, &at),
                message_from_fields(&f, &at),
            ) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{json}");
                    assert_eq!(
                        serde_json::to_string(&a).unwrap(),
                        serde_json::to_string(&b).unwrap()
                    );
                }
                (Err(a), Err(b)) => assert_eq!((a.code, a.message), (b.code, b.message)),
                (a, b) => panic!("{json}: {a:?} / {b:?}"),
            }
        }
    }

    #[test]
    fn typed_fields_are_the_names_a_message_writes() {
        let m = Message {
            line_type: Some(None),
            role: Some(None),
            content: Some(None),
            message: Some(None),
            subtype: Some(None),
            uuid: Some(None),
            is_sidechain: Some(None),
            is_meta: Some(None),
            is_compact_summary: Some(None),
            timestamp: Some(None),
            extra: Default::default(),
            conversation: Default::default(),
            folded: Default::default(),
        };
        let v = serde_json::to_value(&m).unwrap();
        let mut written: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let mut typed = TYPED_FIELDS.to_vec();
        written.sort_unstable();
        typed.sort_unstable();
        assert_eq!(written, typed);
    }

    /// A line `extra` levels deeper than the line object itself: `{"type":"user",…,"x":[[…]]}`.
    fn line_nested(extra: usize) -> String {
        format!(
            r#"{{"type":"user","message":{{"role":"user","content":"hi"}},"x":{}0{}}}"#,
            "[".repeat(extra),
            "]".repeat(extra)
        )
    }

    #[test]
    fn one_nesting_rule_for_lines() {
        // The line is level 1; `x` holds `extra` arrays: depth 1 + extra.
        let ok = line_nested(MAX_NESTING - 1);
        let parsed = parse_transcript(&ok).unwrap();
        assert_eq!(serialize_transcript(&parsed).unwrap().trim_end(), ok);
        let e = parse_transcript(&line_nested(MAX_NESTING)).unwrap_err();
        assert_eq!(e.code, ErrorCode::MalformedTranscript);
        assert!(
            e.message
                .starts_with("line 1: nested deeper than 100 levels"),
            "{}",
            e.message
        );
        let v: Value = serde_json::from_str(&ok).unwrap();
        assert!(!nested_deeper_than(&v, MAX_NESTING));
        assert!(nested_deeper_than(&v, MAX_NESTING - 1));
        assert!(
            !nested_deeper_than(&Value::from(3), 0),
            "a scalar has no levels"
        );
    }

    use super::*;

    #[test]
    fn splits_and_numbers_lines() {
        let l = split_lines("{\"a\":1}\r\n{\"b\":2}\n").unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].number, 2);
        assert_eq!(l[0].text, "{\"a\":1}");
        assert!(split_lines("").unwrap().is_empty());
    }

    #[test]
    fn blank_and_malformed_lines_are_reported() {
        let e = split_lines("{}\n\n{}\n").unwrap_err();
        assert_eq!(e.code, ErrorCode::MalformedTranscript);
        assert!(e.message.starts_with("line 2"), "{}", e.message);
        let e = parse_transcript("{\"type\":\"user\"}\n{oops\n").unwrap_err();
        assert!(
            e.message.starts_with("line 2: invalid JSON"),
            "{}",
            e.message
        );
        let e = parse_transcript("[1,2]\n").unwrap_err();
        assert!(e.message.contains("expected a JSON object"));
    }

    #[test]
    fn lone_surrogate_escapes_are_replaced() {
        let text = r#"{"a":"x\ud800y","b":"\ud83d\ude00","c":"\\ud800","d":"\udc00"}"#;
        let fixed = replace_lone_surrogates(text);
        let v: Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["a"], "x\u{fffd}y");
        assert_eq!(v["b"], "😀");
        assert_eq!(v["c"], "\\ud800");
        assert_eq!(v["d"], "\u{fffd}");
    }

    #[test]
    fn unknown_lines_round_trip() {
        let text = "{\"type\":\"queue-operation\",\"operation\":\"enqueue\",\"x\":[1,{\"y\":null}]}\n{\"no_type\":true}\n\
                    {\"type\":\"queue-operation\",\"content\":[1,{\"y\":null}]}\n\
                    {\"type\":\"progress\",\"uuid\":5}\n{\"type\":\"summary\",\"timestamp\":1770000000}\n";
        let m = parse_transcript(text).unwrap();
        let back = serialize_transcript(&m).unwrap();
        assert_eq!(back, text);
    }
}

#[cfg(test)]
mod json_text_tests {
    use super::*;
    use crate::model::error::ErrorCode;
    use crate::model::messages::text_nested_deeper_than;

    /// What the value path alone gives: parse into a value (lone surrogates replaced), read it.
    fn by_value(text: &str) -> Result<Message> {
        let v: Value = serde_json::from_str(text)
            .or_else(|_| serde_json::from_str(&replace_lone_surrogates(text)))
            .map_err(|e| Error::invalid_message(e.to_string()).at("messages[3]"))?;
        Message::from_value(v, "messages[3]")
    }

    #[test]
    fn direct_reading_gives_what_the_value_path_gives() {
        let texts = [
            r#"{"type":"user","uuid":"u1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"ok"}],"is_error":false}]},"zz":{"b":1,"a":[1.5,-0,12345678901234567890]}}"#,
            r#"{"type":"assistant","message":{"id":"m","role":"assistant","model":"x","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"/a"}},{"type":"mystery","n":null}],"usage":{"input_tokens":3,"output_tokens":null,"service_tier":"standard"}},"timestamp":"2025-01-01T00:00:00Z"}"#,
            r#"{"role":"user","content":"hi \ud83d\ude00 \u00e9","extra":[{}]}"#,
            r#"{"type":"progress","uuid":5,"data":{"type":"x"},"content":{"nested":true},"timestamp":7}"#,
            r#"{"type":"progress","uuid":"p","isSidechain":"no"}"#,
            r#"{"role":"user","content":"lone \ud800 surrogate"}"#,
            r#"{"type":"message","role":"assistant","content":[{"type":"compaction","content":"s"}]}"#,
            r#"{"type":"system","subtype":"compact_boundary","compactMetadata":{"preTokens":1}}"#,
            r#"{"type":"user","message":null,"isMeta":null}"#,
        ];
        for t in texts {
            let direct = message_from_json_text(t, &|| "messages[3]".into()).unwrap();
            assert_eq!(direct, by_value(t).unwrap(), "{t}");
            assert_eq!(
                serde_json::to_string(&direct).unwrap(),
                serde_json::to_string(&by_value(t).unwrap()).unwrap()
            );
        }
    }

    #[test]
    fn direct_reading_keeps_the_value_paths_errors() {
        for t in [
            "[1,2]",
            "null",
            "5",
            r#"{"content":"no type or role"}"#,
            r#"{"type":"user","message":{"role":"user","content":5}}"#,
            r#"{"role":"user","content":[{"text":"no type"}]}"#,
        ] {
            let e = message_from_json_text(t, &|| "messages[3]".into()).unwrap_err();
            let v = by_value(t).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidMessage, "{t}");
            assert_eq!((e.code, &e.message), (v.code, &v.message), "{t}");
            assert!(e.message.contains("messages[3]"), "{}", e.message);
        }
    }

    /// A message nested `levels` deep: the message is level 1, its content 2, the block 3,
    /// and its tool input's objects levels 4 to `levels`.
    fn deep_tool_use(levels: usize) -> String {
        let inner = format!(
            "{}\"x\"{}",
            "{\"a\":".repeat(levels - 3),
            "}".repeat(levels - 3)
        );
        format!(
            r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"t","name":"Edit","input":{inner}}}],"z":1}}"#
        )
    }

    #[test]
    fn a_message_nested_deeper_than_max_nesting_is_read_with_the_rest_as_text() {
        for levels in [MAX_NESTING, MAX_NESTING + 1, 127, 128, 129, 150, 5_000] {
            let t = deep_tool_use(levels);
            let m = message_from_json_text(&t, &|| "messages[3]".into())
                .unwrap_or_else(|e| panic!("{levels}: {}", e.message));
            let v = serde_json::to_value(&m).unwrap();
            assert!(!nested_deeper_than(&v, MAX_NESTING), "{levels}");
            // What is below MAX_NESTING is there as its JSON text, whole.
            let mut at = &v["content"][0]["input"];
            let mut depth = 4;
            while let Some(next) = at.get("a") {
                at = next;
                depth += 1;
            }
            if levels <= MAX_NESTING {
                assert_eq!((depth, at), (levels + 1, &Value::from("x")), "{levels}");
            } else {
                assert_eq!(depth, MAX_NESTING + 1, "{levels}");
                let below = at.as_str().unwrap();
                let n = levels - MAX_NESTING;
                let want = format!("{}\"x\"{}", "{\"a\":".repeat(n), "}".repeat(n));
                assert_eq!(below, want, "{levels}");
            }
            assert_eq!(v["z"], 1);
            // The value path reads the folded text the same.
            assert_eq!(
                m,
                by_value(&fold_text_deeper_than(&t, MAX_NESTING)).unwrap(),
                "{levels}"
            );
            assert_eq!(
                m.folded.0.as_deref(),
                (levels > MAX_NESTING).then_some("messages[3]"),
                "{levels}"
            );
            // The value path alone refuses what it would have to write back.
            if levels > MAX_NESTING && levels < 128 {
                let e = by_value(&t).unwrap_err();
                assert!(
                    e.message.contains("nested deeper than 100 levels"),
                    "{}",
                    e.message
                );
            }
        }
    }

    #[test]
    fn folding_skips_brackets_in_strings_and_keeps_shallow_text() {
        let t = r#"{"role":"user","content":"[[[[{{{{ \" ]]]","d":[[["]]]"]]]}"#;
        assert!(matches!(
            fold_text_deeper_than(t, 4),
            std::borrow::Cow::Borrowed(_)
        ));
        let folded = fold_text_deeper_than(t, 2);
        let v: Value = serde_json::from_str(&folded).unwrap();
        assert_eq!(v["d"], serde_json::json!([r#"[["]]]"]]"#]));
        assert_eq!(v["content"], "[[[[{{{{ \" ]]]");
    }

    #[test]
    fn nesting_on_text_agrees_with_nesting_on_values() {
        let cases = [
            r#"{}"#.to_string(),
            r#"{"a":"[[[[{{{{","b":"\\\"[[[["}"#.to_string(),
            r#"[[],[[]],{"a":[{"b":{}}]}]"#.to_string(),
            format!("{}{}", "[".repeat(100), "]".repeat(100)),
            format!("{}{}", "[".repeat(101), "]".repeat(101)),
            format!(
                r#"{{"s":"]]]]","x":{}1{}}}"#,
                "[".repeat(99),
                "]".repeat(99)
            ),
            // Long strings (skipped eight bytes at a time) with quotes, escapes and brackets
            // at every offset of a word, around nesting just at and past the limit.
            format!(
                r#"{{"s":"abcdefgh\"[[[[ijklmnop\\","t":"{}\\\"{{{{{{","x":{}"{}"{}}}"#,
                "é".repeat(13),
                "[".repeat(100),
                r#"x\\y\"z["#.repeat(9),
                "]".repeat(100)
            ),
            format!(
                r#"{{"s":"{}","x":{}"a\"{}\\"{}}}"#,
                r#"0123456\\"#.repeat(5),
                "[".repeat(99),
                "]".repeat(17),
                "]".repeat(99)
            ),
        ];
        for t in &cases {
            let v: Value = serde_json::from_str(t).expect(t);
            for limit in [1, 2, 3, 99, 100, 101] {
                assert_eq!(
                    text_nested_deeper_than(t, limit),
                    nested_deeper_than(&v, limit),
                    "{t} at {limit}"
                );
            }
        }
    }
}

#[cfg(test)]
mod chain_tests {
    use super::*;

    /// A line of `kind` with `uuid` under `parent` (`""`: none), optional extra fields.
    fn line(kind: &str, uuid: &str, parent: &str, more: &str) -> String {
        let parent = if parent.is_empty() {
            "null".to_string()
        } else {
            format!("\"{parent}\"")
        };
        let body = match kind {
            "assistant" => r#","message":{"role":"assistant","content":"a"}"#,
            "user" => r#","message":{"role":"user","content":"u"}"#,
            _ => "",
        };
        format!(r#"{{"type":"{kind}","uuid":"{uuid}","parentUuid":{parent}{more}{body}}}"#)
    }

    /// Which lines of the file are read as the conversation.
    fn on(lines: &[String]) -> Vec<bool> {
        let text = lines.join("\n") + "\n";
        let parsed = parse_transcript(&text).unwrap();
        // The lines themselves are as read.
        let values = |t: &str| -> Vec<Value> {
            t.lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        assert_eq!(
            values(&serialize_transcript(&parsed).unwrap()),
            values(&text)
        );
        parsed.iter().map(|m| !m.is_sidechain()).collect()
    }

    #[test]
    fn one_chain_is_read_as_it_is() {
        let lines = [
            line("user", "a", "", ""),
            line("assistant", "b", "a", ""),
            r#"{"type":"summary","summary":"s","leafUuid":"b"}"#.to_string(),
            line("user", "s", "b", r#","isSidechain":true"#),
            line("user", "c", "b", ""),
        ];
        assert_eq!(on(&lines), [true, true, true, false, true]);
        let text = lines.join("\n");
        let parsed = parse_lines(&text).unwrap();
        assert_eq!(conversation_mask(&links_of(&parsed)), None);
    }

    #[test]
    fn a_mask_that_leaves_out_only_progress_lines_changes_no_count() {
        // A progress line of a branch the chain does not pass: left out of the conversation,
        // but never counted.
        let lines = [
            line("user", "a", "", ""),
            line("progress", "p", "a", ""),
            line("assistant", "b", "a", ""),
        ];
        let parsed = parse_lines(&lines.join("\n")).unwrap();
        let links = links_of(&parsed);
        if let Some(mask) = conversation_mask(&links) {
            assert!(mask[0] && mask[2]);
        }
        assert_eq!(counted_mask(&links), None);
        // A rewound turn is counted: the mask is kept.
        let lines = [
            line("user", "a", "", ""),
            line("assistant", "b1", "a", ""),
            line("assistant", "b2", "a", ""),
        ];
        let parsed = parse_lines(&lines.join("\n")).unwrap();
        assert_eq!(
            counted_mask(&links_of(&parsed)),
            Some(vec![true, false, true])
        );
    }

    #[test]
    fn unlinked_turns_are_read_in_file_order() {
        // Lines written by hand with `parentUuid: null` each: no chain joins them, so none is
        // left out (the leaf alone would be one message of six).
        let lines: Vec<String> = (0..6)
            .map(|k| {
                line(
                    if k % 2 == 0 { "user" } else { "assistant" },
                    &format!("l{k}"),
                    "",
                    "",
                )
            })
            .collect();
        assert_eq!(on(&lines), [true; 6]);
        // Linked turns with a second root: a rewind to the first message, whose branch is
        // what is resumed.
        let lines = [
            line("user", "a", "", ""),
            line("assistant", "b", "a", ""),
            line("user", "c", "", ""),
            line("assistant", "d", "c", ""),
        ];
        assert_eq!(on(&lines), [false, false, true, true]);
    }

    #[test]
    fn a_rewound_branch_is_left_out() {
        // b2 re-answers a under another parent: the leaf's chain is a, p, b2, c.
        let lines = [
            line("user", "a", "", ""),
            line("assistant", "b1", "a", ""),
            line("user", "r1", "b1", ""),
            line("progress", "p", "a", ""),
            line("assistant", "b2", "p", ""),
            r#"{"type":"file-history-snapshot","messageId":"x"}"#.to_string(),
            line("user", "c", "b2", ""),
            line("system", "t", "c", r#","subtype":"turn_duration""#),
        ];
        assert_eq!(
            on(&lines),
            [true, false, false, true, true, true, true, true]
        );
    }

    #[test]
    fn the_results_of_parallel_calls_are_followed() {
        // Two parallel calls of one response: each result hangs from its call's line, and the
        // next turn continues from the last result only.
        let call = |uuid: &str, parent: &str, id: &str| {
            format!(
                r#"{{"type":"assistant","uuid":"{uuid}","parentUuid":"{parent}","message":{{"id":"m","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"Read","input":{{}}}}]}}}}"#
            )
        };
        let result = |uuid: &str, parent: &str, id: &str| {
            format!(
                r#"{{"type":"user","uuid":"{uuid}","parentUuid":"{parent}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"ok"}}]}}}}"#
            )
        };
        let lines = [
            line("user", "a", "", ""),
            call("c1", "a", "t1"),
            call("c2", "c1", "t2"),
            result("r1", "c1", "t1"),
            line("progress", "p", "r1", ""),
            result("r2", "c2", "t2"),
            line("assistant", "b", "r2", ""),
            // A result that does not answer its parent's call is not followed.
            result("x", "c1", "t9"),
            line("user", "d", "b", ""),
        ];
        assert_eq!(
            on(&lines),
            [true, true, true, true, false, true, true, false, true]
        );
        // The next turn continues from the first call's result: the second call's line and
        // its result are still followed (same response as their parent, its answer).
        let lines = [
            line("user", "a", "", ""),
            call("c1", "a", "t1"),
            call("c2", "c1", "t2"),
            result("r2", "c2", "t2"),
            result("r1", "c1", "t1"),
            line("assistant", "b", "r1", ""),
        ];
        assert_eq!(on(&lines), [true; 6]);
        // Claude Code 2.1 hangs the next parallel call from the progress lines of the one
        // before: followed through them.
        let lines = [
            line("user", "a", "", ""),
            call("c1", "a", "t1"),
            line("progress", "p1", "c1", ""),
            call("c2", "p1", "t2"),
            line("progress", "p2", "c2", ""),
            result("r1", "c1", "t1"),
            call("c3", "r1", "t3"),
            result("r2", "p2", "t2"),
            // What a hook added after the result the chain left goes with it; what hangs from
            // the chain itself is another branch.
            line("attachment", "h2", "r2", ""),
            line("attachment", "h1", "c3", ""),
            result("r3", "c3", "t3"),
            line("assistant", "b", "r3", ""),
        ];
        assert_eq!(
            on(&lines),
            [true, true, false, true, false, true, true, true, true, false, true, true]
        );
        // A response written again under the same parent is not pulled back in.
        let lines = [
            line("user", "a", "", ""),
            call("old", "a", "t1"),
            result("r-old", "old", "t1"),
            call("new", "a", "t1"),
            result("r-new", "new", "t1"),
        ];
        assert_eq!(on(&lines), [true, false, false, true, true]);
    }

    #[test]
    fn a_broken_or_looping_chain_is_read_in_file_order() {
        // A line that names no parent at all (not `null`) says nothing of its place: it stays,
        // and a chain reaching it is not followed.
        let unlinked = [
            r#"{"type":"user","uuid":"a","message":{"role":"user","content":"u"}}"#.to_string(),
            r#"{"type":"assistant","uuid":"b","message":{"role":"assistant","content":"a"}}"#
                .to_string(),
        ];
        assert_eq!(on(&unlinked), [true, true]);
        let inserted = [
            line("user", "a", "", ""),
            line("assistant", "b1", "a", ""),
            r#"{"type":"user","uuid":"g","message":{"role":"user","content":"u"}}"#.to_string(),
            line("assistant", "b2", "a", ""),
        ];
        assert_eq!(on(&inserted), [true, false, true, true]);
        let broken = [
            line("user", "a", "", ""),
            line("assistant", "b1", "a", ""),
            line("assistant", "b2", "gone", ""),
        ];
        assert_eq!(on(&broken), [true, true, true]);
        let looping = [
            line("user", "a", "c", ""),
            line("assistant", "b1", "a", ""),
            line("user", "c", "a", ""),
        ];
        assert_eq!(on(&looping), [true, true, true]);
    }

    #[test]
    fn the_chain_crosses_a_boundary_by_its_logical_parent() {
        let boundary = |logical: &str| {
            line(
                "system",
                "k",
                "",
                &format!(r#","subtype":"compact_boundary","logicalParentUuid":"{logical}""#),
            )
        };
        let lines = [
            line("user", "a", "", ""),
            line("assistant", "b1", "a", ""),
            line("assistant", "b2", "a", ""),
            boundary("b2"),
            line("user", "s", "k", r#","isCompactSummary":true"#),
        ];
        assert_eq!(on(&lines), [true, false, true, true, true]);
        // Lines a compaction kept, written again after its summary with their old parents:
        // the chain from them misses the boundary, so the file is read in file order.
        let mut kept = lines.to_vec();
        kept.push(line("assistant", "b2", "a", ""));
        assert_eq!(on(&kept), [true; 6]);
        // Over a boundary whose logical parent is not in the file: what precedes it stays.
        let mut cut = lines.to_vec();
        cut[3] = boundary("elsewhere");
        cut.push(line("assistant", "x", "a", ""));
        cut.push(line("user", "y", "s", ""));
        assert_eq!(on(&cut), [true, true, true, true, true, false, true]);
        // A boundary written after the leaf, its summary not yet: it hangs from the chain by
        // its logical parent (the file as written), unless it names a branch left behind.
        let trailing = &lines[..4];
        assert_eq!(on(trailing), [true, false, true, true]);
        let text = trailing.join("\n");
        let mut file_order = parse_lines(&text).unwrap();
        file_order.remove(1);
        assert_eq!(conversation_mask(&links_of(&file_order)), None);
        let mut left = trailing.to_vec();
        left[3] = boundary("b1");
        assert_eq!(on(&left), [true, false, true, false]);
        left[3] = boundary("elsewhere");
        assert_eq!(on(&left), [true, false, true, true]);
    }

    #[test]
    fn a_sub_agent_file_is_its_own_conversation() {
        let side = r#","isSidechain":true"#;
        let lines = [
            line("user", "a", "", side),
            line("assistant", "b", "a", side),
            line("user", "c", "b", side),
        ];
        assert_eq!(on(&lines), [true, true, true]);
        // Its branches are followed as a main file's are.
        let mut forked = lines.to_vec();
        forked.push(line("user", "d", "a", side));
        assert_eq!(on(&forked), [true, false, false, true]);
        // Marks already set are cleared when marking again.
        let text = forked.join("\n");
        let mut parsed = parse_transcript(&text).unwrap();
        parsed.truncate(3);
        let links = links_of(&parsed);
        mark_conversation(&mut parsed, &links);
        assert!(parsed.iter().all(|m| !m.is_sidechain()));
        parsed[2].is_sidechain = Some(Some(false));
        let links = links_of(&parsed);
        mark_conversation(&mut parsed, &links);
        assert!(parsed[0].is_sidechain() && parsed[1].is_sidechain());
        assert!(!parsed[2].is_sidechain());
    }
}
