//! One conversation model: a small description of a conversation (turns, responses, tool
//! calls, noise lines, damage) that [`crate::render`] turns into Claude Code transcript lines
//! or Anthropic API messages.
//!
//! The model derives [`arbitrary::Arbitrary`] for the fuzz targets, and
//! [`crate::strategies`] builds proptest strategies over it. Fields and variants marked
//! `#[arbitrary(default)]` / `#[arbitrary(skip)]` are reached by the proptest strategies only:
//! they were added after fuzz inputs were recorded (`fuzz/regressions/*/*.fuzz-input`), and
//! skipping them keeps those bytes decoding into the same conversations.

use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};

/// Text: `len` characters from one of a few alphabets, deterministic words, or raw fuzzer
/// text.
#[derive(Clone, Debug, PartialEq)]
pub enum Txt {
    /// `len` characters cycling through alphabet `alpha` (modulo [`ALPHABETS`]).
    Cycle {
        /// Characters.
        len: u16,
        /// Index into [`ALPHABETS`] (modulo its length).
        alpha: u8,
    },
    /// Text straight from the fuzzer (at most 200 characters).
    Raw(String),
    /// `len` characters of words (some non-BMP, accented, quoted, escaped); `seed` picks them.
    Words {
        /// Characters.
        len: u16,
        /// Picks the words.
        seed: u16,
    },
}

impl<'a> Arbitrary<'a> for Txt {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        Ok(if u.ratio(1, 5)? {
            let s: String = u.arbitrary()?;
            Txt::Raw(s.chars().take(200).collect())
        } else {
            Txt::Cycle {
                len: u.int_in_range(0..=3000)?,
                alpha: u.arbitrary()?,
            }
        })
    }
}

/// The alphabets of [`Txt::Cycle`]: ASCII prose, non-BMP / accented characters, JSON-looking
/// text, escapes, then tags and phrases the library looks for.
pub const ALPHABETS: &[&str] = &[
    "lorem ipsum dolor sit amet, consectetur ",
    "é😀ß中文 ab ",
    "{\"k\": [1, 2.5, null], \"s\": \"v\"}\n",
    "\"quoted\" \\back\\slash\ttab\r\n",
    "<system-reminder>remember</system-reminder> fix the bug in src/main.rs ",
    "<command-name>/compact</command-name><command-args>keep it</command-args>",
    "Error: ENOENT: no such file or directory, open '/tmp/x' ",
    "<summary>s</summary><analysis>a</analysis>",
    "[Request interrupted by user] ",
    "<bash-input>ls</bash-input><bash-stdout>a b</bash-stdout>",
];

/// The words of [`Txt::Words`].
pub const WORDS: &[&str] = &[
    "parser",
    "token",
    "window",
    "résumé",
    "cache",
    "😀",
    "thread",
    "quoted\"",
    "back\\slash",
    "line\n",
    "tab\t",
    "中文",
    "alpha",
    "bravo",
];

/// Deterministic text of `len` characters made of [`WORDS`]; `k` picks the words.
pub fn words(len: usize, k: usize) -> String {
    let mut s = String::with_capacity(len + 16);
    let mut count = 0;
    let mut i = k;
    while count < len {
        let w = WORDS[i % WORDS.len()];
        s.push_str(w);
        s.push(' ');
        count += w.chars().count() + 1;
        i = i.wrapping_mul(31).wrapping_add(7);
    }
    s.chars().take(len).collect()
}

impl Txt {
    /// The text.
    pub fn make(&self) -> String {
        match self {
            Txt::Raw(s) => s.clone(),
            Txt::Cycle { len, alpha } => {
                let a = ALPHABETS[usize::from(*alpha) % ALPHABETS.len()];
                a.chars().cycle().take(usize::from(*len)).collect()
            }
            Txt::Words { len, seed } => words(usize::from(*len), usize::from(*seed)),
        }
    }
}

/// A block of a user prompt.
#[derive(Clone, Debug, Arbitrary, PartialEq)]
pub enum UserBlock {
    /// A text block.
    Text(Txt),
    /// An image (the number picks its source).
    Image(u8),
    /// A document (the number picks its source).
    Document(u8),
    /// A block type the library does not know (`future_block_N`).
    Unknown(u8),
    /// A `container_upload` block (a type the library does not model).
    #[arbitrary(skip)]
    Upload,
}

/// A block inside a tool result's content array.
#[derive(Clone, Debug, Arbitrary, PartialEq)]
pub enum Nested {
    /// A text block.
    Text(Txt),
    /// An image.
    Image(u8),
    /// A document.
    Document(u8),
}

/// A tool result's content.
#[derive(Clone, Debug, Arbitrary, PartialEq)]
pub enum ResultBody {
    /// String content.
    Str(Txt),
    /// The placeholder of an already cleared result.
    Cleared,
    /// A block array.
    Blocks(Vec<Nested>),
    /// No `content` field.
    Absent,
}

/// A client tool call and its result.
#[derive(Clone, Debug, Arbitrary, PartialEq)]
pub struct Tool {
    /// Index into [`TOOL_NAMES`] (modulo its length).
    pub name: u8,
    /// The file the call names, if any.
    pub path: Option<u8>,
    /// The result's content.
    pub result: ResultBody,
    /// `is_error: true` on the result.
    pub is_error: bool,
    /// When the tool finishes (parallel calls). Minimal style: bit 0 writes the results of
    /// the calls so far before the next call, bits 1.. order the results within that batch.
    /// Claude Code style: results are written in `finish` order, each after the assistant
    /// line `finish` lines (modulo) after its own call.
    pub finish: u8,
}

/// A thinking block.
#[derive(Clone, Debug, Arbitrary, PartialEq)]
pub enum Thought {
    /// `thinking` with a signature.
    Thinking(Txt),
    /// `redacted_thinking`; the number sizes or names its data.
    Redacted(u16),
}

/// A token count as it may appear in `usage`.
#[derive(Clone, Debug, Arbitrary, PartialEq)]
pub enum Count {
    /// A plausible count.
    Int(u32),
    /// `null`.
    Null,
    /// The field is missing.
    Absent,
    /// A float `a + b / 256`.
    Float(u16, u8),
    /// A count above `u32`.
    Big(u64),
    /// A negative count.
    Negative(i32),
    /// `1e300`.
    Huge,
    /// `1e-300`.
    Tiny,
}

impl Count {
    /// A plausible count (what the API sends).
    pub fn plausible(&self) -> bool {
        matches!(self, Count::Int(_) | Count::Null | Count::Absent)
    }
}

/// One API response of the assistant.
#[derive(Clone, Debug, Arbitrary, PartialEq)]
pub struct Response {
    /// Thinking blocks, first.
    pub thoughts: Vec<Thought>,
    /// A text block.
    pub text: Option<Txt>,
    /// A server_tool_use + web_search_tool_result pair.
    pub search: bool,
    /// A block type the library does not know.
    pub unknown: bool,
    /// Client tool calls, last.
    pub tools: Vec<Tool>,
    /// `usage`: input, cache creation, cache read, output.
    pub usage: Option<[Count; 4]>,
    /// Transcript: one line per block (split response).
    pub split: bool,
    /// Transcript: the usage was logged mid-stream (`stop_reason: null` on every line).
    pub partial: bool,
    /// API shape: usage beside the content (SDK style). Transcript split response: usage on
    /// its first line only (its later lines carry none).
    pub api_usage: bool,
    /// Transcript: the stop reason on every line of the response, not only the last.
    #[arbitrary(default)]
    pub stop_every_line: bool,
    /// The server tool pair before the text block instead of after it.
    #[arbitrary(default)]
    pub search_first: bool,
}

impl Response {
    /// A response with only a text block.
    pub fn text(t: Txt) -> Self {
        Response {
            thoughts: vec![],
            text: Some(t),
            search: false,
            unknown: false,
            tools: vec![],
            usage: None,
            split: false,
            partial: false,
            api_usage: false,
            stop_every_line: false,
            search_first: false,
        }
    }
}

/// A user turn and the responses it caused.
#[derive(Clone, Debug, Arbitrary, PartialEq)]
pub struct Turn {
    /// The prompt's blocks (`"go on"` when empty).
    pub prompt: Vec<UserBlock>,
    /// A text-only prompt is sent as a string.
    pub prompt_as_string: bool,
    /// Transcript: the prompt line is `isMeta`.
    pub meta: bool,
    /// Transcript: attachment lines (index into [`ATTACHMENT_TYPES`]).
    pub attachments: Vec<u8>,
    /// The responses (one text response when empty).
    pub responses: Vec<Response>,
}

/// A line the API never sees, or a sub-agent line.
#[derive(Clone, Debug, Arbitrary, PartialEq)]
pub enum Noise {
    /// A `progress` line.
    Progress,
    /// A `system` line (informational).
    System,
    /// A `file-history-snapshot` line.
    Snapshot,
    /// A line of a type the library does not know (`queue-operation`).
    Unknown,
    /// A sub-agent user line.
    SidechainUser(Txt),
    /// A sub-agent response: huge usage, a tool call without a result in sight.
    SidechainAssistant(u32),
    /// A sub-agent compact boundary.
    SidechainBoundary,
    /// A `system` line of another subtype (`turn_duration`, `stop_hook_summary`,
    /// `local_command`).
    #[arbitrary(skip)]
    SystemSubtype(u8),
    /// A sub-agent user line with a tool_result and an image.
    #[arbitrary(skip)]
    SidechainResult,
    /// A `summary` line (older Claude Code).
    #[arbitrary(skip)]
    Summary,
}

/// Something that breaks the conversation (the "stays valid" checks are then skipped, the
/// "never panics, deterministic" ones are not).
#[derive(Clone, Debug, Arbitrary, PartialEq)]
pub enum Damage {
    /// Removes a line.
    Remove(u16),
    /// Duplicates a line.
    Duplicate(u16),
    /// Swaps two lines.
    Swap(u16, u16),
    /// Points a tool_result at an unknown id.
    RenameResult(u16),
}

/// How transcript lines look. Both shapes (transcript, API) exist in both styles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Style {
    /// Envelopes with the fields the library reads only, short ids, the fuzz targets'
    /// sizes caps and tool result batches (the rendering the fuzz inputs were recorded with).
    #[default]
    Minimal,
    /// Envelopes as Claude Code writes them (cwd, sessionId, version, requestId, model,
    /// usage with `cache_creation` and `service_tier`, `toolUseResult`…), UUID-shaped ids,
    /// richer tool inputs, media sources and noise lines, tool results in finish order, and
    /// the agent loop (a response without tool calls ends the turn).
    ClaudeCode,
}

/// A whole generated conversation.
#[derive(Clone, Debug, Arbitrary, PartialEq)]
pub struct Convo {
    /// Claude Code transcript lines (`true`) or API messages.
    pub transcript: bool,
    /// The turns.
    pub turns: Vec<Turn>,
    /// Transcript: noise lines and where they go (position modulo the length).
    pub noise: Vec<(u16, Noise)>,
    /// Transcript: a compact boundary (and its summary line) after this turn (modulo).
    pub boundary_after: Option<u16>,
    /// `compactMetadata.keptMessages` of the boundary.
    pub boundary_kept: Option<u8>,
    /// Something that breaks the conversation.
    pub damage: Option<Damage>,
    /// How the lines look.
    #[arbitrary(default)]
    pub style: Style,
    /// Seconds between two timestamps (`0`: 61).
    #[arbitrary(default)]
    pub step_seconds: u32,
}

/// The tool names of [`Tool::name`] in the minimal style (the fuzz targets index this list
/// with their own bytes, so it only grows at its end in [`ALL_TOOL_NAMES`]).
pub const TOOL_NAMES: &[&str] = &[
    "Read",
    "Bash",
    "Grep",
    "Glob",
    "WebSearch",
    "WebFetch",
    "Edit",
    "Write",
    "Task",
    "TodoWrite",
    "NotebookEdit",
    "mcp__github__get_issue",
];

/// The tool names of [`Tool::name`] in the Claude Code style: [`TOOL_NAMES`] and more.
pub const ALL_TOOL_NAMES: &[&str] = &[
    "Read",
    "Bash",
    "Grep",
    "Glob",
    "WebSearch",
    "WebFetch",
    "Edit",
    "Write",
    "Task",
    "TodoWrite",
    "NotebookEdit",
    "mcp__github__get_issue",
    "mcp__db__query",
];

/// The attachment types of [`Turn::attachments`].
pub const ATTACHMENT_TYPES: &[&str] = &[
    "skill_listing",
    "skill_discovery",
    "new_file",
    "todo_reminder",
    "plan_mode",
];

/// Whether every usage count of the conversation is a plausible API value (so that the
/// token count must succeed).
pub fn plausible_usage(c: &Convo) -> bool {
    let caps = crate::render::Caps::of(c.style);
    c.turns.iter().take(caps.turns).all(|t| {
        t.responses.iter().take(caps.responses).all(|r| {
            r.usage
                .as_ref()
                .is_none_or(|u| u.iter().all(Count::plausible))
        })
    })
}
