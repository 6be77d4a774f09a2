//! A read-only view of a conversation, and the edits the core decides on.
//!
//! The core's decisions (how many tokens, which results to clear, where to cut) need only a
//! message's *structure*: its kind, its usage, its block types, ids and text lengths. The
//! [`ConversationView`] trait exposes exactly that, one property at a time, so that:
//!
//! * natively, `[Message]` implements it over the typed serde model;
//! * in WebAssembly, the bindings implement it over the caller's JS objects, reading
//!   properties in place (a string's length without copying it) instead of converting the
//!   whole conversation into Rust.
//!
//! The core answers with [`Edit`]s (what to replace) that the caller's side applies to its own
//! objects, so every message the core does not touch comes back as the same object.

use crate::model::error::{check_token_count, Error, Result};
use crate::model::messages::{Block, Content, Kind, Message, ToolResultContent, Usage};

/// Largest `keptMessages` the library reads (more than any conversation holds).
pub const MAX_KEPT_MESSAGES: f64 = 4_294_967_295.0;

/// `compactMetadata.keptMessages` as the token counters read it: a whole number from 0 to
/// [`MAX_KEPT_MESSAGES`]; anything else (absent, fractional, negative, not a number) is 0, so
/// no usage is ignored on the strength of a malformed value. The same rule natively and on
/// JavaScript objects.
pub fn kept_messages_from(value: Option<f64>) -> usize {
    match value {
        Some(v) if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= MAX_KEPT_MESSAGES => {
            v as usize
        }
        _ => 0,
    }
}

/// How many items to reserve room for when `n` items are read from one of the caller's
/// arrays: `n`, up to a bound. A JS array's `length` does not say how many items it holds (a
/// sparse array of length 2^32 − 1 holds a few), so reserving `length` up front could run out
/// of memory before the first hole is reported as an error; past the bound the vector grows
/// as items are read.
pub fn reserve_for(n: usize) -> usize {
    n.min(4096)
}

/// Validated token counts of one API response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UsageCounts {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
    /// Tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
}

/// Puts `usage`, which the caller gave beside its messages after `held` of them
/// (`Compactor.setUsage`: messages of the AI SDK and OpenAI carry none), on the message of
/// `typed` it belongs to, so that every count of a compaction of `typed` sees it as the
/// caller's count did: the last main-chain assistant message read from the caller's first
/// `held` messages. `origin[k]` is the caller's message `typed[k]` was read from (`None`: one
/// for one).
pub fn give_usage(
    typed: &mut [Message],
    origin: Option<&[usize]>,
    held: usize,
    usage: UsageCounts,
) {
    let from = |k: usize| origin.map_or(k, |o| o.get(k).copied().unwrap_or(usize::MAX));
    let target = (0..typed.len()).rev().find(|&k| {
        from(k) < held && typed[k].kind() == Kind::Assistant && !typed[k].is_sidechain()
    });
    if let Some(k) = target {
        typed[k].give_usage(usage.into());
    }
}

impl From<UsageCounts> for crate::model::messages::Usage {
    /// The four counts as a message's `usage` (what [`crate::model::messages::Message::give_usage`]
    /// puts on a message).
    fn from(u: UsageCounts) -> Self {
        let n = |v: u64| Some(Some(serde_json::Number::from(v)));
        crate::model::messages::Usage {
            input_tokens: n(u.input_tokens),
            cache_creation_input_tokens: n(u.cache_creation_input_tokens),
            cache_read_input_tokens: n(u.cache_read_input_tokens),
            output_tokens: n(u.output_tokens),
            extra: Default::default(),
        }
    }
}

impl UsageCounts {
    /// Size of the request's input: `input + cache_creation + cache_read`.
    pub fn input_total(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }

    /// Size of the context up to and including the response: input total + output.
    pub fn context_total(&self) -> u64 {
        self.input_total() + self.output_tokens
    }

    /// Whether its input counts are all 0: no response's usage (a request always has input).
    /// Claude Code writes its own assistant messages (an API error, an interrupted turn; model
    /// `<synthetic>`) with every count 0, SDKs leave every count out when the provider
    /// reports none, and a stream's `message_delta` usage may give the output alone
    /// (`input_tokens: null`): anchored there, 30K tokens of conversation counted 50. A view
    /// reads such a message as carrying no usage ([`ConversationView::usage`]), so the count
    /// neither starts from it nor stops its search there (js_view.js `carriesUsage` says the
    /// same of JS messages).
    pub fn is_zero(&self) -> bool {
        self.input_total() == 0
    }

    /// [`UsageCounts::from_raw`] without its error: `None` when a count is not valid.
    #[inline]
    pub fn from_valid_raw(raw: &[Option<f64>; 4]) -> Option<UsageCounts> {
        let mut out = [0u64; 4];
        for (o, v) in out.iter_mut().zip(raw) {
            if let Some(v) = v {
                *o = crate::model::error::token_count_value(*v)?;
            }
        }
        Some(UsageCounts {
            input_tokens: out[0],
            cache_creation_input_tokens: out[1],
            cache_read_input_tokens: out[2],
            output_tokens: out[3],
        })
    }

    /// Validates raw numbers (absent or null counts are 0), naming `location()` in errors
    /// (built only when there is an error): [`UsageCounts::from_valid_raw`], or the error of
    /// the first count that is not valid.
    pub fn from_raw(raw: [Option<f64>; 4], location: impl Fn() -> String) -> Result<UsageCounts> {
        const NAMES: [&str; 4] = [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
            "output_tokens",
        ];
        Self::from_valid_raw(&raw).ok_or_else(|| {
            raw.iter()
                .zip(NAMES)
                .find_map(|(v, name)| v.and_then(|v| check_token_count(v, name).err()))
                .unwrap_or_else(|| Error::invalid_token_count("a usage count is not valid"))
                .at(location())
        })
    }

    fn from_usage(u: &Usage, location: impl Fn() -> String) -> Result<UsageCounts> {
        // A number too large for f64 cannot occur in JSON we parsed; absent/null count 0.
        let f = |v: &Option<Option<serde_json::Number>>| {
            v.as_ref()
                .and_then(|x| x.as_ref())
                .map(|n| n.as_f64().unwrap_or(f64::NAN))
        };
        // Another ecosystem's names (the AI SDK's `inputTokens`, OpenAI Chat's
        // `prompt_tokens`, …), as `setUsage` reads them, where the Messages API's are absent:
        // the first given (not null), or its `total` (an AI SDK provider's
        // `{total, noCache, …}`); one that is not a number is reported as the Messages API's
        // names are (js_view.js `otherUsage`).
        let other = |names: [&str; 2]| {
            names
                .iter()
                .find_map(|k| u.extra.get(*k).filter(|v| !v.is_null()))
                .map(|v| v.get("total").unwrap_or(v))
                .filter(|v| !v.is_null())
                .map(|v| v.as_f64().unwrap_or(f64::NAN))
        };
        Self::from_raw(
            [
                f(&u.input_tokens).or_else(|| other(["inputTokens", "prompt_tokens"])),
                f(&u.cache_creation_input_tokens),
                f(&u.cache_read_input_tokens),
                f(&u.output_tokens).or_else(|| other(["outputTokens", "completion_tokens"])),
            ],
            location,
        )
    }
}

/// The type of a content block, as far as the core distinguishes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// `text`
    Text,
    /// `image`
    Image,
    /// `document`
    Document,
    /// `tool_use`
    ToolUse,
    /// `server_tool_use`
    ServerToolUse,
    /// `tool_result`
    ToolResult,
    /// A server tool's `*_tool_result` with a `tool_use_id`.
    ServerToolResult,
    /// `thinking`
    Thinking,
    /// `redacted_thinking`
    RedactedThinking,
    /// `tool_reference`: a tool a tool search loaded (inside a tool result); the API puts the
    /// referenced tool's definition into the context.
    ToolReference,
    /// Anything else.
    Other,
}

impl BlockKind {
    /// Kind from a block `type` string (`has_tool_use_id` tells server tool results apart).
    pub fn from_type(t: &str, has_tool_use_id: bool) -> BlockKind {
        match t {
            "text" => BlockKind::Text,
            "image" => BlockKind::Image,
            "document" => BlockKind::Document,
            "tool_use" => BlockKind::ToolUse,
            "server_tool_use" => BlockKind::ServerToolUse,
            "tool_result" => BlockKind::ToolResult,
            "thinking" => BlockKind::Thinking,
            "redacted_thinking" => BlockKind::RedactedThinking,
            "tool_reference" => BlockKind::ToolReference,
            t if t.ends_with("_tool_result") && has_tool_use_id => BlockKind::ServerToolResult,
            _ => BlockKind::Other,
        }
    }

    /// Whether a block of this kind is media (counted at a fixed size).
    pub fn is_media(self) -> bool {
        matches!(self, BlockKind::Image | BlockKind::Document)
    }
}

/// How much a view must measure when describing content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Detail {
    /// Ids, names, kinds and text lengths only (cheap).
    Structure,
    /// Also the serialized length of tool inputs and unknown blocks (for token estimates).
    /// Ids, names and paths may be left out.
    Estimate,
}

/// A shared, immutable string (ids, names, paths): one allocation per distinct value, however
/// many blocks refer to it.
pub type Str = std::rc::Rc<str>;

/// The structure of one content block.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockInfo {
    /// The block's kind.
    pub kind: Option<BlockKind>,
    /// Length in UTF-16 code units of the block's prose: `text`, `thinking`, redacted `data`,
    /// a tool result's string content.
    pub text_units: usize,
    /// Length of serialized JSON: a tool call's `name` + `input`, or a whole unknown block.
    /// Zero when measured with [`Detail::Structure`].
    pub json_units: usize,
    /// `id` of a tool call.
    pub id: Option<Str>,
    /// `name` of a tool call.
    pub name: Option<Str>,
    /// `input.file_path` / `input.path` / `input.notebook_path` of a tool call.
    pub path: Option<Str>,
    /// `tool_use_id` of a tool result.
    pub tool_use_id: Option<Str>,
    /// `caller.tool_id` of a client tool call made by a server tool's code (Anthropic
    /// programmatic tool calling: a `tool_use` whose `caller` names the `server_tool_use`
    /// of the `code_execution` it runs under). `None` for a direct call.
    pub caller: Option<Str>,
    /// A tool result whose content is already the cleared placeholder.
    pub is_cleared: bool,
    /// A plain-text document (a `text` or `content` source): the model reads its text
    /// (`text_units` of it), not media of a fixed size.
    pub is_plain_text: bool,
    /// Blocks inside a tool result's content array.
    pub nested: Vec<BlockInfo>,
}

/// The structure of a message's content.
#[derive(Clone, Debug, PartialEq)]
pub enum ContentInfo {
    /// No content (non-API lines).
    None,
    /// String content of this many UTF-16 code units.
    Text(usize),
    /// Block content.
    Blocks(Vec<BlockInfo>),
    /// A payload that is not Messages API content but is sent to the model as context
    /// (attachment lines): its serialized length.
    Json(usize),
}

/// A tool call found in an assistant message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolUseEntry {
    /// Message index.
    pub message: usize,
    /// The tool name, as an index into [`ToolIndex::names`].
    pub name: u32,
    /// The file path it works on (`input.file_path` / `path` / `notebook_path`) as a symbol:
    /// equal paths have equal symbols (below [`ToolIndex::path_count`]). Only read when
    /// paths were asked for.
    pub path: Option<u32>,
}

/// A tool result found in a user message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolResultEntry {
    /// Message index.
    pub message: usize,
    /// Block index in the message content.
    pub block: usize,
    /// The call it answers, as an index into [`ToolIndex::uses`] (`None`: no such call).
    pub call: Option<usize>,
    /// UTF-16 length of its text: string content, or the sum of its nested text blocks.
    pub text_units: usize,
    /// Number of images and documents inside it.
    pub media: usize,
    /// Its content is already the cleared placeholder.
    pub is_cleared: bool,
}

/// Every client tool call and tool result of the main chain, calls and results matched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolIndex {
    /// Calls, in conversation order.
    pub uses: Vec<ToolUseEntry>,
    /// Results, in conversation order.
    pub results: Vec<ToolResultEntry>,
    /// Distinct tool names.
    pub names: Vec<Str>,
    /// Number of distinct path symbols.
    pub path_count: usize,
}

/// Interns strings as dense symbols.
#[derive(Default)]
pub struct Interner {
    map: crate::model::hash::FastMap<Str, u32>,
    strings: Vec<Str>,
}

impl Interner {
    /// The symbol of `s`.
    pub fn sym(&mut self, s: &Str) -> u32 {
        if let Some(&k) = self.map.get(s) {
            return k;
        }
        let k = self.strings.len() as u32;
        self.strings.push(s.clone());
        self.map.insert(s.clone(), k);
        k
    }

    /// The strings, by symbol.
    pub fn into_strings(self) -> Vec<Str> {
        self.strings
    }
}

/// Read-only, property-by-property view of a conversation.
///
/// Indices are positions in the caller's array. Methods may fail when a message is
/// malformed; errors name the index.
pub trait ConversationView {
    /// Number of messages.
    fn len(&self) -> usize;
    /// Whether there are no messages.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Kind of message `i`.
    fn kind(&self, i: usize) -> Result<Kind>;
    /// Whether message `i` is a transcript line (has `type`).
    fn is_transcript(&self, i: usize) -> bool;
    /// Validated usage of message `i`, when it carries one (a usage whose counts are all 0
    /// is none: [`UsageCounts::is_zero`]).
    fn usage(&self, i: usize) -> Result<Option<UsageCounts>>;
    /// `message.id` of message `i`.
    fn message_id(&self, i: usize) -> Option<String>;
    /// Whether messages `i` and `j` are lines of one API response (both carry the same
    /// `message.id`). Compared in place, without copying the ids.
    fn same_response(&self, i: usize, j: usize) -> bool {
        match (self.message_id(i), self.message_id(j)) {
            (Some(a), Some(b)) => a == b,
            _ => false,
        }
    }
    /// Whether the usage of message `i` was logged before its response finished: a transcript
    /// line whose `message.stop_reason` is present and `null` (Claude Code writes each
    /// streamed block with the usage known so far, `output_tokens` often 1).
    fn usage_is_partial(&self, i: usize) -> bool;
    /// Whether message `i` is a sub-agent line.
    fn is_sidechain(&self, i: usize) -> bool;
    /// Whether message `i` is of a branch of a session file's conversation that the
    /// `parentUuid` chain from the leaf leaves out (a rewind's abandoned branch): it reads as
    /// a sub-agent line ([`Self::is_sidechain`]: not sent, not counted), but its usage measured
    /// a request of the same session, with the same system prompt and tools, and the
    /// calibration learns from it ([`crate::measure::tokens::learned_before`]). `false` unless
    /// [`Self::has_other_branches`].
    fn on_other_branch(&self, _i: usize) -> bool {
        false
    }
    /// Whether some message is [on another branch](Self::on_other_branch) (a cheap answer
    /// where the view knows it; `false` for any conversation read as written).
    fn has_other_branches(&self) -> bool {
        false
    }
    /// Whether message `i` is a `compact_boundary` system line.
    fn is_compact_boundary(&self, i: usize) -> bool;
    /// Whether message `i` begins with the Messages API's `compaction` block (see
    /// [`Message::holds_compaction`]): what is sent starts with it, so the context starts
    /// at `i` (a boundary line's context starts after it).
    fn starts_context(&self, _i: usize) -> bool {
        false
    }
    /// Whether message `i` is a user or system message (not a transcript line) holding no
    /// tool result: what OpenAI's `/responses/compact` keeps in front of its compaction item
    /// ([`Message::is_window_input`]).
    fn is_window_input(&self, _i: usize) -> bool {
        false
    }
    /// Whether message `i` is a provider's opaque compaction alone (an OpenAI Responses
    /// `compaction` item): after only window inputs ([`Self::is_window_input`]) it closes the
    /// `/responses/compact` window instead of starting the context
    /// ([`crate::model::messages::closes_compact_window`]).
    fn is_opaque_item(&self, _i: usize) -> bool {
        false
    }
    /// Whether message `i` is a system message the model stops reading once a later user
    /// message exists (`clear_at: "next_user_message"`, [`Message::clears_at_next_user`]).
    fn clears_at_next_user(&self, _i: usize) -> bool {
        false
    }
    /// Whether a main-chain user message comes after message `i` (read back from the end: the
    /// latest user message is normally near it, so this costs a few headers).
    fn user_after(&self, i: usize) -> Result<bool> {
        for j in (i + 1..self.len()).rev() {
            if self.kind(j)? == Kind::User && !self.is_sidechain(j) {
                return Ok(true);
            }
        }
        Ok(false)
    }
    /// `compactMetadata.keptMessages` of boundary line `i`: how many sent messages after its
    /// summary were kept verbatim (0 when none, malformed or not a boundary; see
    /// [`kept_messages_from`]).
    fn boundary_kept(&self, i: usize) -> usize;
    /// `attachment.type` of attachment line `i`.
    fn attachment_type(&self, i: usize) -> Option<String>;
    /// `timestamp` of message `i`.
    fn timestamp(&self, i: usize) -> Option<String>;
    /// `uuid` of message `i`.
    fn uuid(&self, i: usize) -> Option<String>;
    /// Whether message `i` is a user message whose whole content is exactly `text`
    /// (a string, or a single text block).
    fn content_equals(&self, i: usize, text: &str) -> bool;
    /// The structure of message `i`'s content.
    fn content(&self, i: usize, detail: Detail) -> Result<ContentInfo>;
    /// Index of the last main-chain (non-sidechain) message before `end` that is what `find`
    /// asks for. A view may search in place without reading each message separately.
    fn rfind(&self, end: usize, find: Find) -> Result<Option<usize>> {
        for i in (0..end).rev() {
            let kind = self.kind(i)?;
            if self.is_sidechain(i) {
                continue;
            }
            let hit = (find.boundary && (self.is_compact_boundary(i) || self.starts_context(i)))
                || (kind == Kind::Assistant
                    && (find.assistant || (find.assistant_with_usage && self.usage(i)?.is_some())));
            if hit {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }
    /// The latest main-chain assistant message carrying usage before `end`, unless a
    /// compact boundary comes first (a view may search and read the usage in one pass).
    fn latest_usage(&self, end: usize) -> Result<Latest> {
        let find = Find {
            assistant_with_usage: true,
            boundary: true,
            ..Find::default()
        };
        Ok(match self.rfind(end, find)? {
            None => Latest::None,
            Some(i) if self.is_compact_boundary(i) => Latest::Boundary(i),
            Some(i) => usage_or_start(i, self.usage(i)?, self.starts_context(i)),
        })
    }

    /// The nearest main-chain assistant line before `before`, if it is a line of the same
    /// response as `last` (a compact boundary in between ends the search).
    fn previous_sibling(&self, before: usize, last: usize) -> Result<Option<usize>> {
        let find = Find {
            assistant: true,
            boundary: true,
            ..Find::default()
        };
        Ok(self
            .rfind(before, find)?
            .filter(|&j| !self.is_compact_boundary(j) && self.same_response(j, last)))
    }

    /// Calls `each` with the structure of every message in `range`, in order: what
    /// [`ConversationView::contents`] gives, without collecting it (a view may decode the
    /// messages one at a time into the same lists).
    fn each_content(
        &self,
        range: std::ops::Range<usize>,
        detail: Detail,
        each: &mut dyn FnMut(usize, &ContentInfo) -> Result<()>,
    ) -> Result<()> {
        for i in range {
            each(i, &self.content(i, detail)?)?;
        }
        Ok(())
    }

    /// The structure of every message in `range` (a view may read them in one pass).
    fn contents(&self, range: std::ops::Range<usize>, detail: Detail) -> Result<Vec<ContentInfo>> {
        range.map(|i| self.content(i, detail)).collect()
    }

    /// Every tool call (assistant messages) and tool result (user messages) of the main chain
    /// from message `from` on, each result matched with its call. Paths are read only when
    /// `with_paths`.
    fn tool_index(&self, from: usize, with_paths: bool) -> Result<ToolIndex> {
        let mut names = Interner::default();
        let mut paths = Interner::default();
        let mut call_of: crate::model::hash::FastMap<Str, usize> = Default::default();
        let mut index = ToolIndex::default();
        let contents = self.contents(from..self.len(), Detail::Structure)?;
        for (i, content) in (from..).zip(contents) {
            let kind = self.kind(i)?;
            if self.is_sidechain(i) || !matches!(kind, Kind::User | Kind::Assistant) {
                continue;
            }
            let ContentInfo::Blocks(blocks) = content else {
                continue;
            };
            for (b, info) in blocks.iter().enumerate() {
                match (kind, info.kind) {
                    (Kind::Assistant, Some(BlockKind::ToolUse)) => {
                        if let (Some(id), Some(name)) = (&info.id, &info.name) {
                            call_of.insert(id.clone(), index.uses.len());
                            index.uses.push(ToolUseEntry {
                                message: i,
                                name: names.sym(name),
                                path: if with_paths {
                                    info.path.as_ref().map(|p| paths.sym(p))
                                } else {
                                    None
                                },
                            });
                        }
                    }
                    (Kind::User, Some(BlockKind::ToolResult)) => {
                        // Its text, and its blocks of other kinds (a `search_result`) as
                        // their JSON, as the count weighs them.
                        let nested_text: usize = info
                            .nested
                            .iter()
                            .map(|n| match n.kind {
                                Some(BlockKind::Text) => n.text_units,
                                Some(BlockKind::Other) => n.json_units,
                                _ if n.is_plain_text => n.text_units,
                                _ => 0,
                            })
                            .sum();
                        index.results.push(ToolResultEntry {
                            message: i,
                            block: b,
                            call: info
                                .tool_use_id
                                .as_ref()
                                .and_then(|id| call_of.get(id).copied()),
                            text_units: info.text_units + nested_text,
                            media: info
                                .nested
                                .iter()
                                .filter(|n| {
                                    n.kind.is_some_and(BlockKind::is_media) && !n.is_plain_text
                                })
                                .count(),
                            is_cleared: info.is_cleared,
                        });
                    }
                    _ => {}
                }
            }
        }
        index.names = names.into_strings();
        index.path_count = paths.into_strings().len();
        Ok(index)
    }

    /// The `tool_use_id` of the tool result at block `block` of message `message`.
    fn tool_use_id_at(&self, message: usize, block: usize) -> Result<Option<String>> {
        Ok(match self.content(message, Detail::Structure)? {
            ContentInfo::Blocks(b) => b
                .get(block)
                .and_then(|info| info.tool_use_id.as_ref())
                .map(|s| s.to_string()),
            _ => None,
        })
    }
}

/// What the latest message found by [`ConversationView::latest_usage`] at `i` gives: its
/// usage; or, for a message that begins with a `compaction` block and carries no usage (or
/// the all-zero usage of an on-demand compaction's answer), the start of the context.
pub fn usage_or_start(i: usize, usage: Option<UsageCounts>, starts_context: bool) -> Latest {
    match usage {
        Some(u) if !starts_context || u.context_total() > 0 => Latest::Usage(i, u),
        _ if starts_context => Latest::Start(i),
        _ => Latest::None,
    }
}

/// What [`ConversationView::latest_usage`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latest {
    /// The assistant message at this index carries this usage.
    Usage(usize, UsageCounts),
    /// A compact boundary at this index comes first.
    Boundary(usize),
    /// A message that begins with a `compaction` block (and carries no usage) comes first:
    /// the context starts with it.
    Start(usize),
    /// Neither.
    None,
}

/// What [`ConversationView::rfind`] looks for (any of the set flags matches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Find {
    /// An assistant message that carries `usage`.
    pub assistant_with_usage: bool,
    /// Any assistant message.
    pub assistant: bool,
    /// A `compact_boundary` line.
    pub boundary: bool,
}

/// Whether assistant messages `p < i` belong to one API turn: lines of one response (same
/// `message.id`), or consecutive assistant messages with no user message between them (the
/// API merges those into one turn, so a cut between them would split it).
pub fn same_turn<V: ConversationView + ?Sized>(view: &V, p: usize, i: usize) -> Result<bool> {
    if view.same_response(p, i) {
        return Ok(true);
    }
    for k in p + 1..i {
        if view.is_sidechain(k) {
            continue;
        }
        if matches!(view.kind(k)?, Kind::User | Kind::Attachment) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// What the core decides to change in one message. The caller's side applies it to a copy
/// of the message; all other messages are reused as they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edit {
    /// Replace a content block (or, with `nested`, a block inside a tool result's content
    /// array) by a text block `{type: "text", text}`.
    ReplaceWithText {
        /// Message index.
        message: usize,
        /// Block index in the message content.
        block: usize,
        /// Block index inside the tool result's content, when the media is nested there.
        nested: Option<usize>,
        /// The replacement text.
        text: String,
    },
    /// Set a tool result's `content` to a string, keeping its other fields.
    SetToolResultContent {
        /// Message index.
        message: usize,
        /// Block index in the message content.
        block: usize,
        /// The new content.
        text: String,
    },
}

impl Edit {
    /// Index of the message the edit changes.
    pub fn message(&self) -> usize {
        match self {
            Edit::ReplaceWithText { message, .. } | Edit::SetToolResultContent { message, .. } => {
                *message
            }
        }
    }
}

/// UTF-16 length of a Rust string (what JavaScript's `string.length` reports).
pub fn utf16_len(s: &str) -> usize {
    // From the UTF-8 bytes, without decoding, eight at a time: every byte that starts a
    // character is one unit, and a 4-byte character (lead byte 0xF0 or above) is a surrogate
    // pair, one more.
    crate::model::swar::utf16_len(s.as_bytes())
}

/// `v` as compact JSON text, what `v.to_string()` and `serde_json::to_string` give. Written
/// here rather than by `serde_json::to_string` (whose writer still writes the numbers): its
/// strings are copied eight bytes at a time where nothing needs an escape, where serde_json
/// looks at each byte (tool inputs holding whole files are most of what the summary request
/// renders as JSON).
pub fn json_text(v: &serde_json::Value) -> String {
    let mut out = Vec::new();
    write_json(v, &mut out);
    // The bytes of UTF-8 strings and ASCII punctuation, escapes and numbers.
    String::from_utf8(out).unwrap_or_default()
}

/// Appends `v`'s compact JSON text to `out` (see [`json_text`]).
fn write_json(v: &serde_json::Value, out: &mut Vec<u8>) {
    use serde_json::Value;
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // Infallible: a number always serializes.
        Value::Number(n) => serde_json::to_writer(&mut *out, n).unwrap_or_default(),
        Value::String(s) => write_json_string(s, out),
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json(x, out);
            }
            out.push(b']');
        }
        Value::Object(o) => {
            out.push(b'{');
            for (i, (k, x)) in o.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json_string(k, out);
                out.push(b':');
                write_json(x, out);
            }
            out.push(b'}');
        }
    }
}

/// How JSON (serde_json, `JSON.stringify`) writes byte `c` of a UTF-8 string: `None` as it
/// is; `Some(e)` escaped, as `\e` (`"`, `\`, `b`, `f`, `n`, `r`, `t`), or as `\u00XX` when `e`
/// is 0 (the other control characters).
#[inline]
fn json_escape(c: u8) -> Option<u8> {
    match c {
        b'"' => Some(b'"'),
        b'\\' => Some(b'\\'),
        b'\n' => Some(b'n'),
        b'\r' => Some(b'r'),
        b'\t' => Some(b't'),
        0x08 => Some(b'b'),
        0x0C => Some(b'f'),
        0x00..=0x1F => Some(0),
        _ => None,
    }
}

/// Appends `s` as a quoted JSON string with serde_json's escapes: `\"`, `\\`, `\b`, `\f`,
/// `\n`, `\r`, `\t`, the other control characters as `\u00xx`; everything else as it is.
fn write_json_string(s: &str, out: &mut Vec<u8>) {
    let b = s.as_bytes();
    out.push(b'"');
    let mut run = 0;
    let mut i = 0;
    while i < b.len() {
        if let Some(w) = b.get(i..i + 8) {
            let word = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
            if crate::model::swar::json_plain(word) {
                i += 8;
                continue;
            }
        }
        let c = b[i];
        let Some(short) = json_escape(c) else {
            i += 1;
            continue;
        };
        out.extend_from_slice(&b[run..i]);
        if short == 0 {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(c >> 4)]);
            out.push(HEX[usize::from(c & 0xF)]);
        } else {
            out.push(b'\\');
            out.push(short);
        }
        i += 1;
        run = i;
    }
    out.extend_from_slice(&b[run..]);
    out.push(b'"');
}

/// `s` as a quoted JSON string (`"a\"b"`), how error messages quote a caller's text. Not
/// `format!("{s:?}")`: no message of the library formats with `Debug` (the package is built
/// with `-Z fmt-debug=shallow`, docs/size.md; tests/layers.rs checks).
pub fn quoted(s: &str) -> String {
    // serde_json's writer, which the counting module has anyway (the JSON writer above is
    // not in it: 0.8 KB gzip more there).
    serde_json::to_string(s).unwrap_or_default()
}

/// The length in UTF-16 units of `v`'s JSON text as `serde_json::to_string` writes it
/// (compact, its escapes), computed from the value: the text is never built.
pub fn json_units(v: &serde_json::Value) -> usize {
    use serde_json::Value;
    match v {
        Value::Null | Value::Bool(true) => 4,
        Value::Bool(false) => 5,
        Value::Number(n) => number_units(n),
        Value::String(s) => string_units(s),
        Value::Array(a) => array_units(a),
        Value::Object(o) => object_units(o),
    }
}

/// [`json_units`] of a JSON array of `items`.
pub fn array_units(items: &[serde_json::Value]) -> usize {
    2 + items.len().saturating_sub(1) + items.iter().map(json_units).sum::<usize>()
}

/// [`json_units`] of a JSON object.
pub fn object_units(o: &serde_json::Map<String, serde_json::Value>) -> usize {
    2 + o.len().saturating_sub(1)
        + o.iter()
            .map(|(k, v)| string_units(k) + 1 + json_units(v))
            .sum::<usize>()
}

/// A JSON string literal's length in UTF-16 units, quotes included: `"` and `\` and the
/// control characters escaped as serde_json escapes them (`\n`-style where one exists,
/// `\u00XX` otherwise), everything else as it is.
#[cfg_attr(cc_speed, optimize(speed))]
pub(crate) fn string_units(s: &str) -> usize {
    let byte_units = |b: u8| match json_escape(b) {
        Some(0) => 6,
        Some(_) => 2,
        None => usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0),
    };
    // Eight bytes at a time: a word of plain ASCII (no control character, quote or
    // backslash) is eight units; any other word is counted byte by byte.
    let words = s.as_bytes().chunks_exact(8);
    let tail = words.remainder();
    let mut units = 2;
    for w in words {
        let word = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        units += if crate::model::swar::plain_ascii(word) {
            8
        } else if let Some(n) = crate::model::swar::json_escaped_units(word) {
            // Non-ASCII characters, quotes, backslashes, `\n`, `\t`, `\r`: counted at once.
            n as usize
        } else {
            w.iter().map(|&b| byte_units(b)).sum()
        };
    }
    units + tail.iter().map(|&b| byte_units(b)).sum::<usize>()
}

/// A JSON number's length: integers by their digits, floats as serde_json writes them.
fn number_units(n: &serde_json::Number) -> usize {
    let digits = |mut u: u64| {
        let mut d = 1;
        while u >= 10 {
            u /= 10;
            d += 1;
        }
        d
    };
    if let Some(u) = n.as_u64() {
        digits(u)
    } else if let Some(i) = n.as_i64() {
        1 + digits(i.unsigned_abs())
    } else {
        n.to_string().len()
    }
}

/// The kind of media `v` is, when it is an image or a document whose source the model reads
/// as media (base64, URL, file: counted at a fixed size), not as text.
pub fn media_in(v: &serde_json::Value) -> Option<BlockKind> {
    let kind = match v.get("type")?.as_str()? {
        "image" => BlockKind::Image,
        "document" => BlockKind::Document,
        _ => return None,
    };
    let source = v.get("source")?;
    match source.get("type").and_then(serde_json::Value::as_str) {
        Some("text") | Some("content") => None,
        _ if source.is_object() => Some(kind),
        _ => None,
    }
}

/// What inside a server tool's result is counted apart from its JSON: the media
/// ([`media_in`]) and the `tool_reference`s of a server-side tool search (each loads a tool's
/// definition, counted at [`crate::measure::tokens::TOOL_REFERENCE_TOKENS`]).
pub fn counted_apart(v: &serde_json::Value) -> Option<BlockKind> {
    if v.get("type").and_then(serde_json::Value::as_str) == Some("tool_reference") {
        return Some(BlockKind::ToolReference);
    }
    media_in(v)
}

/// Whether `key` holds a value of `v` that the model does not read as text: an
/// `encrypted_content` string (web search results' pages, which the API expands itself;
/// `encryptedContent` in an AI SDK provider-executed result).
pub fn is_opaque(key: &str, v: &serde_json::Value) -> bool {
    (key == "encrypted_content" || key == "encryptedContent") && v.is_string()
}

/// [`object_units`] of a server tool's result without what the model does not read as text:
/// media inside (each pushed on `media`, counted at its fixed size) and opaque values
/// ([`is_opaque`]). The JSON text `JSON.stringify` writes with a replacer that drops them
/// (`js_view.js`, serverResultLen): an object's member left out, an array's element `null`.
pub fn readable_object_units(
    o: &serde_json::Map<String, serde_json::Value>,
    media: &mut Vec<BlockKind>,
) -> usize {
    fn units(v: &serde_json::Value, media: &mut Vec<BlockKind>) -> usize {
        match v {
            serde_json::Value::Array(a) => {
                2 + a.len().saturating_sub(1)
                    + a.iter()
                        .map(|x| match counted_apart(x) {
                            Some(k) => {
                                media.push(k);
                                4
                            }
                            None => units(x, media),
                        })
                        .sum::<usize>()
            }
            serde_json::Value::Object(o) => readable_object_units(o, media),
            other => json_units(other),
        }
    }
    let mut kept = 0usize;
    let mut total = 0;
    for (k, v) in o {
        if is_opaque(k, v) {
            continue;
        }
        if let Some(kind) = counted_apart(v) {
            media.push(kind);
            continue;
        }
        kept += 1;
        total += string_units(k) + 1 + units(v, media);
    }
    2 + kept.saturating_sub(1) + total
}

/// The placeholder that replaces cleared tool results (SPEC §10).
pub const CLEARED_PLACEHOLDER: &str = "[Old tool result content cleared]";

fn tool_path(input: Option<&serde_json::Value>) -> Option<Str> {
    let input = input?;
    ["file_path", "path", "notebook_path"]
        .iter()
        .find_map(|k| input.get(*k).and_then(|v| v.as_str()))
        .map(Str::from)
}

/// How the native side of the view measures what the model reads, in the units the estimate
/// divides (`measure::tokens`: prose and JSON at 4 units per token, a tool call's name and
/// input at 2): by their UTF-16 length ([`Utf16`]), or by a caller's tokenizer
/// (`measure::tokens::Counted`), whose count times those units makes the estimate its count.
pub trait Lengths {
    /// A prose text (text, thinking, a tool result's string, a plain-text document).
    fn text(&self, s: &str) -> usize;
    /// A tool call: its name and its input as JSON (`None`: `{}`).
    fn call(&self, name: &str, input: Option<&serde_json::Value>) -> usize;
    /// A value read as its JSON text (an unknown block, an attachment's payload).
    fn json(&self, v: &serde_json::Value) -> usize;
    /// A server tool's result read as JSON without what the model does not read as text
    /// ([`readable_object_units`]; the media inside are pushed on `media`).
    fn readable(
        &self,
        o: &serde_json::Map<String, serde_json::Value>,
        media: &mut Vec<BlockKind>,
    ) -> usize;
}

/// The input of a call whose input is counted apart (a free-form text): nothing.
static NO_INPUT: serde_json::Value = serde_json::Value::String(String::new());

/// [`Lengths`] in UTF-16 code units (JavaScript's `string.length`), without writing any JSON.
#[derive(Clone, Copy, Debug, Default)]
pub struct Utf16;

impl Lengths for Utf16 {
    fn text(&self, s: &str) -> usize {
        utf16_len(s)
    }
    fn call(&self, name: &str, input: Option<&serde_json::Value>) -> usize {
        // A string input is JSON already (as `js_view.js` reads one).
        utf16_len(name)
            + match input {
                None => 2,
                Some(serde_json::Value::String(s)) => utf16_len(s),
                Some(v) => json_units(v),
            }
    }
    fn json(&self, v: &serde_json::Value) -> usize {
        json_units(v)
    }
    fn readable(
        &self,
        o: &serde_json::Map<String, serde_json::Value>,
        media: &mut Vec<BlockKind>,
    ) -> usize {
        readable_object_units(o, media)
    }
}

/// The JSON text [`readable_object_units`] measures: `o` without its opaque values and the
/// media inside (each pushed on `media`); an array's media element becomes `null`, as
/// `JSON.stringify`'s replacer writes it.
pub fn readable_object_text(
    o: &serde_json::Map<String, serde_json::Value>,
    media: &mut Vec<BlockKind>,
) -> String {
    use serde_json::Value;
    fn strip(v: &Value, media: &mut Vec<BlockKind>) -> Value {
        match v {
            Value::Array(a) => Value::Array(
                a.iter()
                    .map(|x| match counted_apart(x) {
                        Some(k) => {
                            media.push(k);
                            Value::Null
                        }
                        None => strip(x, media),
                    })
                    .collect(),
            ),
            Value::Object(o) => Value::Object(strip_object(o, media)),
            other => other.clone(),
        }
    }
    fn strip_object(
        o: &serde_json::Map<String, Value>,
        media: &mut Vec<BlockKind>,
    ) -> serde_json::Map<String, Value> {
        let mut out = serde_json::Map::new();
        for (k, v) in o {
            if is_opaque(k, v) {
                continue;
            }
            if let Some(kind) = counted_apart(v) {
                media.push(kind);
                continue;
            }
            out.insert(k.clone(), strip(v, media));
        }
        out
    }
    json_text(&Value::Object(strip_object(o, media)))
}

/// The `caller.tool_id` of a client `tool_use` (its other fields, `extra`): the
/// `server_tool_use` whose code made the call (Anthropic programmatic tool calling). `None`
/// for a direct call (`caller: {type: "direct"}`) or no `caller`.
pub fn caller_of(extra: &serde_json::Map<String, serde_json::Value>) -> Option<&str> {
    extra.get("caller")?.get("tool_id")?.as_str()
}

/// The main-chain messages (from `from`) that a server tool call ties together across
/// messages, as `(call, other)` message index pairs with `call < other`: the message holding
/// a `server_tool_use` and a later one holding its result, or a later client `tool_use` its
/// code made ([`BlockInfo::caller`]). With Anthropic programmatic tool calling the server
/// tool waits for the client tools its code calls, and its result comes in a later
/// assistant message, after the user's `tool_result`s: nothing may be cut between them.
/// An ordinary server tool's result is in its call's message, which gives no pair.
pub fn server_call_links<V: ConversationView + ?Sized>(
    view: &V,
    from: usize,
) -> Result<Vec<(usize, usize)>> {
    let mut at: crate::model::hash::FastMap<Str, usize> = Default::default();
    let mut links = Vec::new();
    let contents = view.contents(from..view.len(), Detail::Structure)?;
    for (i, content) in (from..).zip(&contents) {
        if view.is_sidechain(i) || view.kind(i)? != Kind::Assistant {
            continue;
        }
        let ContentInfo::Blocks(blocks) = content else {
            continue;
        };
        for b in blocks {
            match b.kind {
                Some(BlockKind::ServerToolUse) => {
                    if let Some(id) = &b.id {
                        at.entry(id.clone()).or_insert(i);
                    }
                }
                Some(BlockKind::ServerToolResult) => {
                    if let Some(&c) = b.tool_use_id.as_ref().and_then(|id| at.get(id)) {
                        if c < i {
                            links.push((c, i));
                        }
                    }
                }
                Some(BlockKind::ToolUse) => {
                    if let Some(&c) = b.caller.as_ref().and_then(|id| at.get(id)) {
                        if c < i {
                            links.push((c, i));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    Ok(links)
}

/// Describes one typed block (native side of the view), its lengths in UTF-16 units.
pub fn block_info(b: &Block, detail: Detail) -> BlockInfo {
    block_info_with(b, detail, &Utf16)
}

/// [`block_info`] with the lengths measured by `lengths`.
pub fn block_info_with(b: &Block, detail: Detail, lengths: &dyn Lengths) -> BlockInfo {
    let est = detail == Detail::Estimate;
    match b {
        Block::Text(t) => BlockInfo {
            kind: Some(BlockKind::Text),
            text_units: lengths.text(&t.text),
            ..Default::default()
        },
        Block::Image(_) => BlockInfo {
            kind: Some(BlockKind::Image),
            ..Default::default()
        },
        // A plain-text document is read as its text (`js_view.js` describes it so too); its
        // `context`, and the text of a `content` source that also holds images, are text the
        // model reads too (MediaBlock::side_text_units).
        Block::Document(d) => {
            let texts = d.plain_texts();
            let side = d.side_text_units(texts.is_some(), &|t| lengths.text(t));
            BlockInfo {
                kind: Some(BlockKind::Document),
                is_plain_text: texts.is_some(),
                text_units: texts.map_or(0, |ts| ts.iter().map(|t| lengths.text(t)).sum()) + side,
                ..Default::default()
            }
        }
        Block::ToolUse(t) | Block::ServerToolUse(t) => BlockInfo {
            kind: Some(if matches!(b, Block::ToolUse(_)) {
                BlockKind::ToolUse
            } else {
                BlockKind::ServerToolUse
            }),
            // A string input is free-form text (an OpenAI custom tool's, `js_view.js`
            // counts it so too): the name at the call's rate, the input as text.
            json_units: match t.input.as_ref().and_then(|i| i.as_ref()) {
                _ if !est => 0,
                Some(serde_json::Value::String(_)) => lengths.call(&t.name, Some(&NO_INPUT)),
                input => lengths.call(&t.name, input),
            },
            text_units: match t.input.as_ref() {
                Some(Some(serde_json::Value::String(s))) if est => lengths.text(s),
                _ => 0,
            },
            // An estimate reads no ids, names or paths: none is copied for it.
            id: (!est).then(|| t.id.as_str().into()),
            name: (!est).then(|| t.name.as_str().into()),
            path: if est {
                None
            } else {
                tool_path(t.input.as_ref().and_then(|i| i.as_ref()))
            },
            caller: match b {
                Block::ToolUse(t) if !est => caller_of(&t.extra).map(Into::into),
                _ => None,
            },
            ..Default::default()
        },
        Block::ToolResult(r) => {
            let mut info = BlockInfo {
                kind: Some(BlockKind::ToolResult),
                tool_use_id: (!est).then(|| r.tool_use_id.as_str().into()),
                ..Default::default()
            };
            match r.content.as_ref().and_then(|c| c.as_ref()) {
                Some(ToolResultContent::Text(s)) => {
                    info.text_units = lengths.text(s);
                    info.is_cleared = s == CLEARED_PLACEHOLDER;
                }
                // An unknown block inside (a `search_result`) is measured as its JSON even
                // for a structure: micro-compaction weighs the result by it, as the count
                // does (`js_view.js` describes it so too).
                Some(ToolResultContent::Blocks(bs)) => {
                    info.nested = bs
                        .iter()
                        .map(|b| {
                            let mut n = block_info_with(b, detail, lengths);
                            if let (Block::Unknown(v), false, Some(BlockKind::Other)) =
                                (b, est, n.kind)
                            {
                                n.json_units = lengths.json(v);
                            }
                            n
                        })
                        .collect();
                }
                None => {}
            }
            info
        }
        Block::ServerToolResult(r) => {
            let mut media = Vec::new();
            let json_units = if est {
                lengths.readable(&r.raw, &mut media)
            } else {
                0
            };
            BlockInfo {
                kind: Some(BlockKind::ServerToolResult),
                tool_use_id: (!est).then(|| r.tool_use_id.as_str().into()),
                json_units,
                nested: media
                    .into_iter()
                    .map(|kind| BlockInfo {
                        kind: Some(kind),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            }
        }
        Block::Thinking(t) => BlockInfo {
            kind: Some(BlockKind::Thinking),
            text_units: lengths.text(&t.thinking),
            ..Default::default()
        },
        Block::RedactedThinking(t) => BlockInfo {
            kind: Some(BlockKind::RedactedThinking),
            text_units: lengths.text(&t.data),
            ..Default::default()
        },
        // The server-side compaction block counts as its summary text (its encrypted form
        // is what the API reads instead of the messages it replaced, at about that size); an
        // opaque one (no readable `content`) as its encrypted text, as `js_view.js` counts
        // an OpenAI Responses compaction item.
        Block::Unknown(v)
            if v.get("type").and_then(serde_json::Value::as_str)
                == Some(crate::model::messages::COMPACTION_BLOCK) =>
        {
            let key = if crate::model::messages::is_opaque_compaction(v) {
                "encrypted_content"
            } else {
                "content"
            };
            // Its `tool_changes` (tools added by value or by name, tools withdrawn): the
            // model reads the tools they add, counted as their JSON, as a system message's
            // `tool_addition` block is; none (absent, null, `[]`) adds nothing.
            let tool_changes = match v.get(crate::model::messages::COMPACTION_TOOL_CHANGES) {
                None | Some(serde_json::Value::Null) => 0,
                Some(serde_json::Value::Array(a)) if a.is_empty() => 0,
                Some(t) => lengths.json(t),
            };
            BlockInfo {
                kind: Some(BlockKind::Text),
                text_units: v
                    .get(key)
                    .and_then(serde_json::Value::as_str)
                    .map_or(0, |t| lengths.text(t))
                    + tool_changes,
                ..Default::default()
            }
        }
        Block::Unknown(v) => BlockInfo {
            kind: Some(
                if v.get("type").and_then(serde_json::Value::as_str) == Some("tool_reference") {
                    BlockKind::ToolReference
                } else {
                    BlockKind::Other
                },
            ),
            json_units: if est { lengths.json(v) } else { 0 },
            ..Default::default()
        },
    }
}

/// The content of message `m` as a view describes it, its lengths measured by `lengths`
/// (the native view's [`ConversationView::content`] with [`Utf16`]).
pub fn message_content(m: &Message, detail: Detail, lengths: &dyn Lengths) -> ContentInfo {
    if m.kind() == Kind::Attachment {
        return match m.extra.get("attachment") {
            Some(a) => ContentInfo::Json(lengths.json(a)),
            None => ContentInfo::None,
        };
    }
    match m.content() {
        None => ContentInfo::None,
        Some(Content::Text(t)) => ContentInfo::Text(lengths.text(t)),
        Some(Content::Blocks(bs)) => ContentInfo::Blocks(
            bs.iter()
                .map(|b| block_info_with(b, detail, lengths))
                .collect(),
        ),
    }
}

impl ConversationView for [Message] {
    fn len(&self) -> usize {
        <[Message]>::len(self)
    }

    fn kind(&self, i: usize) -> Result<Kind> {
        Ok(self[i].kind())
    }

    fn is_transcript(&self, i: usize) -> bool {
        self[i].is_transcript()
    }

    fn usage(&self, i: usize) -> Result<Option<UsageCounts>> {
        let m = &self[i];
        match m.usage_ref() {
            None => Ok(None),
            Some(u) => {
                let loc = || {
                    if m.is_transcript() {
                        format!("messages[{i}].message.usage")
                    } else {
                        format!("messages[{i}].usage")
                    }
                };
                Ok(Some(UsageCounts::from_usage(&u, loc)?).filter(|u| !u.is_zero()))
            }
        }
    }

    fn message_id(&self, i: usize) -> Option<String> {
        self[i].message_id().map(str::to_string)
    }

    fn same_response(&self, i: usize, j: usize) -> bool {
        matches!((self[i].message_id(), self[j].message_id()), (Some(a), Some(b)) if a == b)
    }

    fn usage_is_partial(&self, i: usize) -> bool {
        self[i]
            .api_message()
            .is_some_and(|m| m.extra.get("stop_reason") == Some(&serde_json::Value::Null))
    }

    fn is_sidechain(&self, i: usize) -> bool {
        self[i].is_sidechain()
    }

    fn on_other_branch(&self, i: usize) -> bool {
        self[i].on_other_branch()
    }

    fn has_other_branches(&self) -> bool {
        self.iter().any(Message::on_other_branch)
    }

    fn is_compact_boundary(&self, i: usize) -> bool {
        self[i].is_compact_boundary()
    }

    fn starts_context(&self, i: usize) -> bool {
        self[i].holds_compaction() && !crate::model::messages::closes_compact_window(self, i)
    }

    fn is_window_input(&self, i: usize) -> bool {
        self[i].is_window_input()
    }

    fn is_opaque_item(&self, i: usize) -> bool {
        self[i].is_only_opaque_compaction()
    }

    fn clears_at_next_user(&self, i: usize) -> bool {
        self[i].clears_at_next_user()
    }

    fn attachment_type(&self, i: usize) -> Option<String> {
        self[i].attachment_type().map(str::to_string)
    }

    fn boundary_kept(&self, i: usize) -> usize {
        if !self[i].is_compact_boundary() {
            return 0;
        }
        kept_messages_from(
            self[i]
                .extra
                .get("compactMetadata")
                .and_then(|m| m.get("keptMessages"))
                .and_then(serde_json::Value::as_f64),
        )
    }

    fn timestamp(&self, i: usize) -> Option<String> {
        self[i].timestamp().map(str::to_string)
    }

    fn uuid(&self, i: usize) -> Option<String> {
        self[i].uuid().map(str::to_string)
    }

    fn content_equals(&self, i: usize, text: &str) -> bool {
        if self[i].kind() != Kind::User {
            return false;
        }
        match self[i].content() {
            Some(Content::Text(t)) => t == text,
            Some(Content::Blocks(bs)) => {
                matches!(bs.as_slice(), [Block::Text(t)] if t.text == text)
            }
            None => false,
        }
    }

    fn content(&self, i: usize, detail: Detail) -> Result<ContentInfo> {
        Ok(message_content(&self[i], detail, &Utf16))
    }
}

/// Applies edits to typed messages, returning a new vector; unedited messages are clones
/// of the input (equal to it).
pub fn apply_edits(messages: &[Message], edits: &[Edit]) -> Result<Vec<Message>> {
    let mut out = messages.to_vec();
    for e in edits {
        let idx = e.message();
        let msg = out
            .get_mut(idx)
            .ok_or_else(|| Error::invalid_argument(format!("edit targets messages[{idx}]")))?;
        let Some(Content::Blocks(blocks)) = msg.content_mut() else {
            return Err(
                Error::invalid_message("edit targets a message without blocks")
                    .at(format!("messages[{idx}]")),
            );
        };
        match e {
            Edit::ReplaceWithText {
                block,
                nested,
                text,
                ..
            } => {
                let target = blocks.get_mut(*block).ok_or_else(|| {
                    Error::invalid_argument(format!("no block {block} in messages[{idx}]"))
                })?;
                match nested {
                    None => *target = Block::text(text.clone()),
                    Some(n) => {
                        let Block::ToolResult(r) = target else {
                            return Err(Error::invalid_argument(format!(
                                "messages[{idx}].content[{block}] is not a tool_result"
                            )));
                        };
                        let Some(Some(ToolResultContent::Blocks(inner))) = r.content.as_mut()
                        else {
                            return Err(Error::invalid_argument(format!(
                                "messages[{idx}].content[{block}] has no content array"
                            )));
                        };
                        let slot = inner.get_mut(*n).ok_or_else(|| {
                            Error::invalid_argument(format!(
                                "no block {n} in messages[{idx}].content[{block}].content"
                            ))
                        })?;
                        *slot = Block::text(text.clone());
                    }
                }
            }
            Edit::SetToolResultContent { block, text, .. } => {
                let Some(Block::ToolResult(r)) = blocks.get_mut(*block) else {
                    return Err(Error::invalid_argument(format!(
                        "messages[{idx}].content[{block}] is not a tool_result"
                    )));
                };
                r.content = Some(Some(ToolResultContent::Text(text.clone())));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn readable_object_text_is_what_readable_object_units_measures() {
        use super::{readable_object_text, readable_object_units, utf16_len};
        use serde_json::json;
        let cases = [
            json!({"type": "web_search_tool_result", "tool_use_id": "s", "content": [
            {"type": "web_search_result", "url": "https://é", "encrypted_content": "Zm9v"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}]}),
            json!({"type": "x_tool_result", "tool_use_id": "s", "doc": {"type": "document", "source": {"type": "url", "url": "u"}},
               "text": {"type": "document", "source": {"type": "text", "data": "kept"}}, "n": [1, 2.5, null]}),
        ];
        for v in cases {
            let o = v.as_object().unwrap();
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let text = readable_object_text(o, &mut a);
            assert_eq!(utf16_len(&text), readable_object_units(o, &mut b), "{text}");
            assert_eq!(a, b);
            assert!(
                !text.contains("encrypted_content") && !text.contains("base64"),
                "{text}"
            );
        }
    }

    #[test]
    fn given_usage_is_read_back_as_the_message_s_own() {
        use crate::model::messages::Message;
        use serde_json::json;

        let usage = super::UsageCounts {
            input_tokens: 170_000,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 3,
            output_tokens: 10,
        };
        let n =
            |v: &Option<Option<serde_json::Number>>| v.clone().flatten().and_then(|n| n.as_u64());
        for v in [
            json!({"role": "assistant", "content": "Done."}),
            json!({"type": "assistant", "uuid": "a", "message": {"role": "assistant", "content": "Done.",
                   "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        ] {
            let mut m = Message::from_value(v, "m").unwrap();
            m.give_usage(usage.into());
            let u = m.usage_raw().unwrap();
            assert_eq!(n(&u.input_tokens), Some(170_000));
            assert_eq!(n(&u.cache_read_input_tokens), Some(3));
            assert_eq!(n(&u.output_tokens), Some(10));
            // The content is untouched.
            assert_eq!(m.content().map(|c| c.is_empty()), Some(false));
        }
    }

    /// A usage whose counts are all 0 (Claude Code's `<synthetic>` error lines, an SDK's
    /// usage of a provider that reported none) is no usage: the count's search passes it.
    #[test]
    fn a_usage_of_zeros_is_none_and_the_search_passes_it() {
        use super::{ConversationView, Latest};
        use crate::model::messages::Message;
        use serde_json::json;
        let typed = Message::parse_all(json!([
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b", "usage": {"input_tokens": 900, "output_tokens": 9}},
            {"role": "user", "content": "c"},
            {"type": "assistant", "uuid": "x", "message": {"role": "assistant", "model": "<synthetic>",
             "content": [{"type": "text", "text": "API Error"}],
             "usage": {"input_tokens": 0, "output_tokens": 0, "cache_read_input_tokens": 0}}},
            {"role": "assistant", "content": "d", "usage": {}},
            {"role": "assistant", "content": "e", "usage": {"inputTokens": null}},
            {"role": "assistant", "content": "f", "usage": {"input_tokens": null, "cache_read_input_tokens": null, "output_tokens": 50}},
            {"role": "assistant", "content": "g", "usage": {"outputTokens": 50}}
        ]))
        .unwrap();
        let view: &[Message] = &typed;
        for i in 3..8 {
            assert_eq!(view.usage(i).unwrap(), None, "message {i}");
        }
        assert!(
            matches!(view.latest_usage(8).unwrap(), Latest::Usage(1, u) if u.context_total() == 909)
        );
    }

    /// Another ecosystem's names are read as `setUsage` reads them: the first given (not null),
    /// and a count that is not a number is reported, as under the Messages API's names (it was
    /// skipped: `{prompt_tokens: 1000, completion_tokens: '50'}` counted 1,000 and
    /// `{inputTokens: '1000'}` no usage, where `setUsage` refused both).
    #[test]
    fn another_ecosystems_count_that_is_no_number_is_reported() {
        use crate::model::messages::Message;
        use serde_json::json;
        for usage in [
            json!({"prompt_tokens": 1000, "completion_tokens": "50"}),
            json!({"inputTokens": "1000", "outputTokens": 50}),
            json!({"outputTokens": "50"}),
            json!({"inputTokens": {"total": "1000"}}),
        ] {
            let typed = Message::parse_all(json!([
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "b", "usage": usage.clone()}
            ]))
            .unwrap();
            let view: &[Message] = &typed;
            let e = view.usage(1).unwrap_err();
            assert_eq!(e.code, crate::ErrorCode::InvalidTokenCount, "{usage}");
        }
        // An AI SDK provider's counts (LanguageModelV3Usage) are read by their totals.
        let typed = Message::parse_all(json!([
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b", "usage": {"inputTokens": {"total": 1000, "cacheRead": 900}, "outputTokens": {"total": 7}}}
        ]))
        .unwrap();
        let view: &[Message] = &typed;
        let u = view.usage(1).unwrap().unwrap();
        assert_eq!((u.input_total(), u.output_tokens), (1000, 7));
        // A null name passes to the next, as in setUsage.
        let typed = Message::parse_all(json!([
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b", "usage": {"inputTokens": null, "prompt_tokens": 900, "completion_tokens": 9}}
        ]))
        .unwrap();
        let view: &[Message] = &typed;
        assert_eq!(view.usage(1).unwrap().map(|u| u.context_total()), Some(909));
    }

    #[test]
    fn given_usage_goes_on_the_last_assistant_message_read_from_the_messages_held_then() {
        use crate::model::messages::Message;
        use serde_json::json;
        let usage = super::UsageCounts {
            input_tokens: 170_000,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 10,
        };
        // The caller's 3 messages read as 5 (origin): the usage was given after 2 of them.
        let mut typed = Message::parse_all(json!([
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "assistant", "content": "c"},
            {"role": "user", "content": "d"},
            {"role": "assistant", "content": "e"}
        ]))
        .unwrap();
        super::give_usage(&mut typed, Some(&[0, 1, 1, 1, 2]), 2, usage);
        let has = |m: &Message| m.usage_raw().is_some();
        assert_eq!(
            typed.iter().map(has).collect::<Vec<_>>(),
            [false, false, true, false, false]
        );
        // One for one: the last assistant message before `held`.
        let mut plain = typed.clone();
        for m in &mut plain {
            m.extra.remove("usage");
        }
        super::give_usage(&mut plain, None, 2, usage);
        assert_eq!(
            plain.iter().map(has).collect::<Vec<_>>(),
            [false, true, false, false, false]
        );
    }

    #[test]
    fn quoted_writes_a_json_string() {
        assert_eq!(super::quoted("compct"), "\"compct\"");
        assert_eq!(super::quoted("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
        assert_eq!(super::quoted(""), "\"\"");
    }

    #[test]
    fn json_text_is_what_serde_json_writes() {
        use serde_json::json;
        let mut strings = vec![
            String::new(),
            "plain ascii, long enough for words".to_string(),
        ];
        // Every byte that needs an escape, and some that do not, at every offset of a word.
        for special in (0u8..0x20)
            .map(|b| char::from(b).to_string())
            .chain(["\"", "\\", "/", "\u{7f}", "é", "😀", "中", "\u{2028}"].map(String::from))
        {
            for at in 0..10 {
                strings.push(format!(
                    "{}{special}{}",
                    "a".repeat(at),
                    "b".repeat(17 - at)
                ));
            }
        }
        strings.push((0u8..0x80).map(char::from).collect::<String>().repeat(3));
        for s in &strings {
            let v = json!({ s.as_str(): [s, 1, -2, 1.5, 1e300, -0.0, 18446744073709551615u64, null, true, false, {}, []] });
            assert_eq!(
                super::json_text(&v),
                serde_json::to_string(&v).unwrap(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn string_units_are_the_utf16_length_of_the_written_string() {
        let mut cases = vec![
            String::new(),
            "plain ascii text, long enough for several words".to_string(),
            "tab\there \"quoted\" back\\slash\u{1}\u{1f}\u{7f} é 😀 中文 end".to_string(),
        ];
        // Every special byte at every offset of an eight-byte word.
        for special in [
            "\"", "\\", "\n", "\t", "\r", "\u{8}", "\u{c}", "\u{0}", "é", "😀", "中",
        ] {
            for at in 0..9 {
                cases.push(format!(
                    "{}{special}{}",
                    "a".repeat(at),
                    "b".repeat(17 - at)
                ));
            }
        }
        for s in &cases {
            let written = serde_json::to_string(s).unwrap();
            assert_eq!(
                super::json_units(&serde_json::Value::String(s.clone())),
                written.encode_utf16().count(),
                "{s:?}"
            );
        }
    }
    use super::*;

    #[test]
    fn usage_from_raw_names_the_first_count_that_is_not_valid() {
        let ok = [Some(3.0), None, Some(2.4), Some(7.5)];
        let counts = UsageCounts::from_raw(ok, || "here".into()).unwrap();
        assert_eq!(Some(counts), UsageCounts::from_valid_raw(&ok));
        assert_eq!(
            (counts.input_tokens, counts.cache_creation_input_tokens),
            (3, 0)
        );
        assert_eq!(
            (counts.cache_read_input_tokens, counts.output_tokens),
            (2, 8)
        );
        let bad = [Some(1.0), Some(-1.0), Some(f64::NAN), None];
        assert_eq!(UsageCounts::from_valid_raw(&bad), None);
        let e = UsageCounts::from_raw(bad, || "messages[4].usage".into()).unwrap_err();
        assert_eq!(e.code, crate::model::error::ErrorCode::InvalidTokenCount);
        assert!(
            e.message
                .contains("cache_creation_input_tokens must not be negative"),
            "{}",
            e.message
        );
        assert!(e.message.contains("messages[4].usage"), "{}", e.message);
    }
    use serde_json::json;

    /// A message whose role is misspelt was read as a message of no kind, left out of the
    /// count and of what is sent without a word; it is an error at its `role` naming the role,
    /// the one it probably meant and the accepted ones, read as a value or as JSON text. The
    /// roles the native model reads, and transcript lines (whose `type` says what they are),
    /// pass.
    #[test]
    fn an_unknown_role_is_an_error_naming_it() {
        let value = |v: serde_json::Value| Message::from_value(v, "messages[1]");
        let text = |v: serde_json::Value| {
            crate::transforms::transcript::message_from_json_text(&v.to_string(), &|| {
                "messages[1]".into()
            })
        };
        for read in [value, text] {
            for bad in [
                json!({"role": "asistant", "content": "x"}),
                json!({"type": "message", "role": "asistant", "content": "x"}),
            ] {
                let e = read(bad).unwrap_err();
                assert_eq!(e.code, crate::model::error::ErrorCode::InvalidMessage);
                assert_eq!(
                    e.message,
                    "messages[1].role: unknown role \"asistant\" (did you mean \"assistant\"?): \
                     a message's role is one of user, assistant, system, developer"
                );
            }
            let e = read(json!({"role": "model", "content": "x"})).unwrap_err();
            assert!(!e.message.contains("did you mean"), "{}", e.message);
            for ok in [
                json!({"role": "user", "content": "x"}),
                json!({"role": "assistant", "content": "x"}),
                json!({"role": "system", "content": "x"}),
                json!({"role": "developer", "content": "x"}),
                json!({"type": "summary", "summary": "s", "leafUuid": "u"}),
                json!({"type": "user", "uuid": "u", "message": {"role": "user", "content": "x"}}),
            ] {
                assert!(read(ok.clone()).is_ok(), "{ok}");
            }
        }
        // OpenAI's developer instructions are a system prompt, as the bindings read them.
        let dev = Message::from_value(json!({"role": "developer", "content": "x"}), "m").unwrap();
        assert_eq!(dev.kind(), Kind::System);
    }

    #[test]
    fn json_units_counts_what_to_string_writes_without_writing_it() {
        let every_ascii: String = (0u8..0x80).map(char::from).collect();
        let mut cases = vec![
            json!(null),
            json!(true),
            json!(false),
            json!("plain"),
            json!(every_ascii),
            json!({"é": "ü\u{1F600}\n\"tab\t\u{0001}\u{7f}/", "n": [1, 2.5, -3e7, true]}),
            json!([{"x": "\u{FFFF}\u{10000}"}, "日本語", {}, []]),
            json!([
                0,
                -1,
                u64::MAX,
                i64::MIN,
                0.1,
                -0.0,
                1e300,
                5e-324,
                123456.789,
                1e21
            ]),
            json!({"": "", "k\u{0}\u{1f}": {"deep": [[[{"a": null}]]]}}),
        ];
        for c in 0u32..0x3000 {
            if let Some(ch) = char::from_u32(c) {
                cases.push(json!({ ch.to_string(): format!("{ch}x{ch}") }));
            }
        }
        for v in cases {
            let text = serde_json::to_string(&v).unwrap();
            assert_eq!(json_units(&v), text.encode_utf16().count(), "{text}");
            if let serde_json::Value::Array(a) = &v {
                assert_eq!(array_units(a), json_units(&v));
            }
            if let serde_json::Value::Object(o) = &v {
                assert_eq!(object_units(o), json_units(&v));
            }
        }
    }

    fn msgs(v: serde_json::Value) -> Vec<Message> {
        Message::parse_all(v).unwrap()
    }

    #[test]
    fn kept_messages_must_be_a_whole_number() {
        assert_eq!(kept_messages_from(Some(3.0)), 3);
        assert_eq!(kept_messages_from(Some(0.0)), 0);
        for bad in [
            None,
            Some(1.5),
            Some(-2.0),
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(1e300),
        ] {
            assert_eq!(kept_messages_from(bad), 0, "{bad:?}");
        }
        assert_eq!(kept_messages_from(Some(MAX_KEPT_MESSAGES)), 4_294_967_295);
        // Read from a line, natively: a huge value is ignored, never an overflow.
        let m = crate::model::messages::Message::parse_all(json!([
            {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"keptMessages": 2.0}},
            {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"keptMessages": 18446744073709551615u64}},
            {"type": "system", "subtype": "compact_boundary", "compactMetadata": {"keptMessages": 1.5}}
        ]))
        .unwrap();
        let v = m.as_slice();
        assert_eq!(
            (v.boundary_kept(0), v.boundary_kept(1), v.boundary_kept(2)),
            (2, 0, 0)
        );
        assert!(crate::measure::tokens::token_count_checked(v).is_ok());
    }

    #[test]
    fn utf16_matches_js_length() {
        assert_eq!(utf16_len("abc"), 3);
        assert_eq!(utf16_len("é"), 1);
        assert_eq!(utf16_len("😀"), 2);
        for s in [
            "",
            "a\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}",
            "日本語 😀 é\n",
            "\u{0}",
        ] {
            assert_eq!(utf16_len(s), s.encode_utf16().count(), "{s:?}");
        }
    }

    #[test]
    fn native_view_reads_structure() {
        let m = msgs(json!([
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/x"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": CLEARED_PLACEHOLDER}]}
        ]));
        let v: &[Message] = &m;
        let ContentInfo::Blocks(b) = v.content(0, Detail::Estimate).unwrap() else {
            panic!()
        };
        assert_eq!(b[0].json_units, 4 + r#"{"file_path":"/x"}"#.len());
        assert_eq!(
            b[0].path, None,
            "an estimate reads no paths: none is copied"
        );
        let ContentInfo::Blocks(b) = v.content(0, Detail::Structure).unwrap() else {
            panic!()
        };
        assert_eq!(b[0].path.as_deref(), Some("/x"));
        assert_eq!(b[0].name.as_deref(), Some("Read"));
        let ContentInfo::Blocks(b) = v.content(1, Detail::Structure).unwrap() else {
            panic!()
        };
        assert!(b[0].is_cleared);
    }

    /// A `compaction` block's `tool_changes` count as their JSON besides its summary text
    /// (the model reads the tools they add); none, `null` or `[]` adds nothing.
    #[test]
    fn a_compaction_block_counts_its_tool_changes() {
        let tc = json!([{"type": "tool_addition", "tool": {"type": "tool_definition",
            "definition": {"name": "deploy", "input_schema": {"type": "object"}}}},
            {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "read"}}]);
        let units = |changes: Option<serde_json::Value>| {
            let mut b = json!({"type": "compaction", "content": "Summary."});
            if let Some(c) = changes {
                b["tool_changes"] = c;
            }
            let m = msgs(json!([{"role": "user", "content": [b]}]));
            let v: &[Message] = &m;
            let ContentInfo::Blocks(b) = v.content(0, Detail::Estimate).unwrap() else {
                panic!()
            };
            b[0].text_units
        };
        assert_eq!(units(None), "Summary.".len());
        assert_eq!(units(Some(json!(null))), "Summary.".len());
        assert_eq!(units(Some(json!([]))), "Summary.".len());
        assert_eq!(
            units(Some(tc.clone())),
            "Summary.".len() + serde_json::to_string(&tc).unwrap().len()
        );
    }

    #[test]
    fn negative_usage_is_an_error() {
        let m = msgs(
            json!([{"type": "assistant", "message": {"role": "assistant", "content": [],
            "usage": {"input_tokens": -4}}}]),
        );
        let v: &[Message] = &m;
        let e = v.usage(0).unwrap_err();
        assert_eq!(e.code, crate::model::error::ErrorCode::InvalidTokenCount);
        assert!(
            e.message
                .contains("messages[0].message.usage: input_tokens"),
            "{}",
            e.message
        );
    }

    #[test]
    fn edits_touch_only_their_target() {
        let m = msgs(json!([
            {"role": "user", "content": "a"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [
                {"type": "text", "text": "x"}, {"type": "image", "source": {}}]}]}
        ]));
        let out = apply_edits(
            &m,
            &[Edit::ReplaceWithText {
                message: 1,
                block: 0,
                nested: Some(1),
                text: "[image]".into(),
            }],
        )
        .unwrap();
        assert_eq!(out[0], m[0]);
        assert_eq!(
            out[1].to_value()["content"][0]["content"][1],
            json!({"type": "text", "text": "[image]"})
        );
    }
}
