//! API context management (SPEC §11): `buildApiContextManagement(options)` builds the
//! `context_management` parameter of a Messages API request, for the API's server-side
//! context editing (beta header [`CONTEXT_MANAGEMENT_BETA`]).
//!
//! Two edits exist, and when both are sent the thinking edit must come first in `edits`:
//!
//! * [`CLEAR_THINKING_EDIT`] (`clear_thinking_20251015`): `keep` is `"all"` (every thinking
//!   block stays, so the cached prompt prefix stays valid) or
//!   `{type: "thinking_turns", value: N}` (N > 0). By default the library keeps all, and
//!   keeps only the last thinking turn when the session has been idle for more than an hour:
//!   the provider's prompt cache has expired by then, so clearing costs nothing in cache and
//!   saves the uncached tokens.
//! * [`CLEAR_TOOL_USES_EDIT`] (`clear_tool_uses_20250919`): once the prompt exceeds
//!   `trigger` (`{type: "input_tokens", value}`), the API clears old tool results; fields
//!   `keep` (`{type: "tool_uses", value}`), `clear_at_least` (`{type: "input_tokens",
//!   value}`: clear at least this much or nothing, so a cache break is worth it),
//!   `clear_tool_inputs` (`true`/`false`, or the names of the tools whose inputs are
//!   cleared too) and `exclude_tools` (names of tools whose uses are never cleared).
//!
//! A third edit belongs to the API's threshold compaction (beta header [`COMPACT_BETA`]):
//!
//! * [`COMPACT_EDIT`] (`compact_20260112`): once the prompt reaches `trigger`
//!   (`{type: "input_tokens", value}`, at least [`MIN_COMPACT_TRIGGER_INPUT_TOKENS`], default
//!   [`DEFAULT_COMPACT_TRIGGER_INPUT_TOKENS`]), the API summarizes the conversation itself and
//!   answers with a `compaction` block first; `pause_after_compaction` makes it stop right
//!   after the block (`stop_reason: "compaction"`) so the client can add turns back;
//!   `instructions` replaces the API's summary prompt. [`apply_api_compaction`] reads such a
//!   response back into the conversation.
//!
//! The function is pure: the caller says whether extended thinking is on (the thinking edit
//! only makes sense then) and gives the times needed to judge idleness.

use serde_json::{json, Map, Value};

use crate::model::error::{Error, ErrorCode, Result};
use crate::model::messages::{Block, Content, Kind, Message, COMPACTION_BLOCK};
use crate::model::number::js_text;
use crate::model::view::UsageCounts;

/// `v` as JSON for an error message, cut after 60 characters (a long string given by mistake
/// is not repeated whole).
fn json_text(v: &Value) -> String {
    let text = crate::model::view::json_text(v);
    match text.char_indices().nth(60) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// The beta header value that enables context editing.
pub const CONTEXT_MANAGEMENT_BETA: &str = "context-management-2025-06-27";
/// `type` of the thinking-clearing edit.
pub const CLEAR_THINKING_EDIT: &str = "clear_thinking_20251015";
/// `type` of the tool-use-clearing edit.
pub const CLEAR_TOOL_USES_EDIT: &str = "clear_tool_uses_20250919";
/// Default `trigger`: clear once the prompt exceeds this many input tokens.
pub const DEFAULT_TRIGGER_INPUT_TOKENS: u64 = 180_000;
/// Where clearing should bring the context: the default `clear_at_least` is the trigger
/// minus this (180,000 − 40,000 = 140,000).
pub const DEFAULT_TARGET_INPUT_TOKENS: u64 = 40_000;
/// Default `clear_at_least` (with the default trigger).
pub const DEFAULT_CLEAR_AT_LEAST: u64 = DEFAULT_TRIGGER_INPUT_TOKENS - DEFAULT_TARGET_INPUT_TOKENS;
/// Default `clear_tool_inputs`: tools whose inputs are cleared along with their results
/// (reads and searches: cheap to redo, useless once acted on).
pub const DEFAULT_CLEAR_TOOL_INPUTS: &[&str] =
    &["Bash", "Glob", "Grep", "Read", "WebFetch", "WebSearch"];
/// Default `exclude_tools`: tools whose uses are never cleared (their inputs are the edits
/// the agent made).
pub const DEFAULT_EXCLUDE_TOOLS: &[&str] = &["Edit", "Write", "NotebookEdit"];
/// Idle time after which only the last thinking turn is kept (Claude Code's default: one
/// hour, about the lifetime of the provider's extended prompt cache).
pub const DEFAULT_IDLE_THRESHOLD_MINUTES: f64 = 60.0;
/// Thinking turns kept after an idle period.
pub const IDLE_KEEP_THINKING_TURNS: u64 = 1;
/// The beta header value that enables the API's threshold compaction.
pub const COMPACT_BETA: &str = "compact-2026-01-12";
/// `type` of the threshold-compaction edit.
pub const COMPACT_EDIT: &str = "compact_20260112";
/// The API's default `trigger` of the compaction edit, in input tokens.
pub const DEFAULT_COMPACT_TRIGGER_INPUT_TOKENS: u64 = 150_000;
/// The smallest `trigger` the API accepts for the compaction edit.
pub const MIN_COMPACT_TRIGGER_INPUT_TOKENS: u64 = 50_000;

/// The `keep` of the thinking edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThinkingKeep {
    /// `"all"`: keep every thinking block.
    All,
    /// `{type: "thinking_turns", value: N}`: keep the thinking of the last N assistant turns
    /// (N ≥ 1).
    Turns(u64),
}

impl ThinkingKeep {
    /// The JSON the API expects.
    pub fn to_value(self) -> Value {
        match self {
            ThinkingKeep::All => json!("all"),
            ThinkingKeep::Turns(n) => json!({"type": "thinking_turns", "value": n}),
        }
    }

    /// Reads `"all"`, a whole number N ≥ 1, `{type: "all"}` or
    /// `{type: "thinking_turns", value: N}`.
    pub fn from_value(v: &Value) -> std::result::Result<ThinkingKeep, String> {
        fn turns(n: &Value) -> std::result::Result<ThinkingKeep, String> {
            match n.as_f64() {
                Some(x) if x.is_finite() && x >= 1.0 && x.fract() == 0.0 && x <= 1e9 => {
                    Ok(ThinkingKeep::Turns(x as u64))
                }
                _ => Err(format!(
                    "thinkingKeep must be \"all\" or a whole number of turns ≥ 1, got {}",
                    json_text(n)
                )),
            }
        }
        match v {
            Value::String(s) if s == "all" => Ok(ThinkingKeep::All),
            Value::Number(_) => turns(v),
            Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                Some("all") => Ok(ThinkingKeep::All),
                Some("thinking_turns") => turns(o.get("value").unwrap_or(&Value::Null)),
                _ => Err(format!(
                    "thinkingKeep object must have type \"all\" or \"thinking_turns\", got {}",
                    json_text(v)
                )),
            },
            other => Err(format!(
                "thinkingKeep must be \"all\" or a whole number of turns ≥ 1, got {}",
                json_text(other)
            )),
        }
    }
}

/// `clear_tool_inputs`: all tools or none (a boolean), or the named tools.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClearToolInputs {
    /// `true`: clear the inputs of every cleared tool use; `false`: results only.
    All(bool),
    /// Clear the inputs of these tools only.
    Tools(Vec<String>),
}

/// Options of `buildApiContextManagement`. Every field is optional; JS names are camelCase.
///
/// An edit is sent when its switch is `true`, or when its switch is absent and one of its
/// own settings is given (`thinkingKeep` for thinking; `triggerInputTokens`, `clearAtLeast`,
/// `targetInputTokens`, `keepToolUses`, `clearToolInputs`, `excludeTools` for tool uses).
/// A switch set to `false` always wins. The idleness inputs (`isIdle`, `idleMinutes`,
/// `lastAssistantMs`, `nowMs`, `idleThresholdMinutes`) never switch anything on.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ContextManagementOptions {
    /// Send the thinking edit. Set it when the request enables extended thinking.
    pub clear_thinking: Option<bool>,
    /// A fixed `keep` for the thinking edit; wins over the idleness rule. Absent: `"all"`,
    /// or [`IDLE_KEEP_THINKING_TURNS`] after an idle period.
    pub thinking_keep: Option<ThinkingKeep>,
    /// Whether the session is idle (wins over the other idleness inputs).
    pub is_idle: Option<bool>,
    /// Minutes since the last assistant message.
    pub idle_minutes: Option<f64>,
    /// Time of the last assistant message (ms since the epoch); used with `now_ms`.
    pub last_assistant_ms: Option<f64>,
    /// The current time (ms since the epoch); used with `last_assistant_ms`.
    pub now_ms: Option<f64>,
    /// Idle beyond this many minutes (strictly more) counts as idle; default
    /// [`DEFAULT_IDLE_THRESHOLD_MINUTES`].
    pub idle_threshold_minutes: Option<f64>,
    /// Send the tool-use edit.
    pub clear_tool_uses: Option<bool>,
    /// `trigger` in input tokens; default [`DEFAULT_TRIGGER_INPUT_TOKENS`].
    pub trigger_input_tokens: Option<f64>,
    /// `clear_at_least` in input tokens; 0 omits it. Default: trigger − target.
    pub clear_at_least: Option<f64>,
    /// Where clearing should bring the context, used for the default `clear_at_least`;
    /// default [`DEFAULT_TARGET_INPUT_TOKENS`].
    pub target_input_tokens: Option<f64>,
    /// `keep` in tool uses, a whole number ≥ 0; absent: the API's default.
    pub keep_tool_uses: Option<f64>,
    /// `clear_tool_inputs`; default [`DEFAULT_CLEAR_TOOL_INPUTS`]. An empty list omits it.
    pub clear_tool_inputs: Option<ClearToolInputs>,
    /// `exclude_tools`; default [`DEFAULT_EXCLUDE_TOOLS`]. An empty list omits it.
    pub exclude_tools: Option<Vec<String>>,
    /// Send the threshold-compaction edit ([`COMPACT_EDIT`]).
    pub compact: Option<bool>,
    /// Its `trigger` in input tokens, a whole number ≥ [`MIN_COMPACT_TRIGGER_INPUT_TOKENS`];
    /// default [`DEFAULT_COMPACT_TRIGGER_INPUT_TOKENS`].
    pub compact_trigger_input_tokens: Option<f64>,
    /// Its `pause_after_compaction`: the response stops right after the compaction block.
    pub pause_after_compaction: Option<bool>,
    /// Its `instructions`: the summary prompt that replaces the API's (not blank).
    pub compact_instructions: Option<String>,
}

/// A finite, non-negative number rounded to a whole count, or `None`.
fn count(v: Option<f64>) -> Option<u64> {
    v.filter(|x| x.is_finite() && *x >= 0.0 && *x <= 1e15)
        .map(|x| x.round() as u64)
}

impl ContextManagementOptions {
    /// Checks that numbers are finite and non-negative (token counts and times), the trigger
    /// positive, and that `clear_at_least` does not exceed the trigger.
    pub fn validate(&self) -> Result<()> {
        let fields = [
            ("idleMinutes", self.idle_minutes),
            ("lastAssistantMs", self.last_assistant_ms),
            ("nowMs", self.now_ms),
            ("idleThresholdMinutes", self.idle_threshold_minutes),
            ("triggerInputTokens", self.trigger_input_tokens),
            ("clearAtLeast", self.clear_at_least),
            ("targetInputTokens", self.target_input_tokens),
        ];
        for (name, v) in fields {
            if let Some(x) = v {
                if count(Some(x)).is_none() {
                    return Err(Error::invalid_config(format!(
                        "{name} must be a finite number from 0 to 1e15, got {}",
                        js_text(x)
                    )));
                }
            }
        }
        // A count of tool uses: a whole number (the API reads `keep.value` as an integer).
        if let Some(k) = self.keep_tool_uses {
            if count(Some(k)).is_none() || k.fract() != 0.0 {
                return Err(Error::invalid_config(format!(
                    "keepToolUses must be a whole number of tool uses ≥ 0, got {}",
                    js_text(k)
                )));
            }
        }
        if let Some(t) = self.compact_trigger_input_tokens {
            if !(t.is_finite() && t.fract() == 0.0 && t <= 1e15)
                || t < MIN_COMPACT_TRIGGER_INPUT_TOKENS as f64
            {
                return Err(Error::invalid_config(format!(
                    "compactTriggerInputTokens must be a whole number of input tokens of at least \
                     {MIN_COMPACT_TRIGGER_INPUT_TOKENS} (the API's minimum) and at most 1e15, got {}",
                    js_text(t)
                )));
            }
        }
        if let Some(i) = &self.compact_instructions {
            if i.trim().is_empty() {
                return Err(Error::invalid_config(
                    "compactInstructions must be a non-blank string (leave it out to use the API's \
                     summary prompt)",
                ));
            }
        }
        if self.trigger_input_tokens == Some(0.0) {
            return Err(Error::invalid_config(
                "triggerInputTokens must be a positive number of tokens, got 0",
            ));
        }
        if let (Some(c), t) = (count(self.clear_at_least), self.trigger()) {
            if c > t {
                return Err(Error::invalid_config(format!(
                    "clearAtLeast ({c}) cannot exceed triggerInputTokens ({t}): nothing would \
                     ever be cleared"
                )));
            }
        }
        Ok(())
    }

    fn trigger(&self) -> u64 {
        count(self.trigger_input_tokens)
            .filter(|t| *t > 0)
            .unwrap_or(DEFAULT_TRIGGER_INPUT_TOKENS)
    }

    /// Whether the session counts as idle: `is_idle` when given; else `idle_minutes`, else
    /// `now_ms − last_assistant_ms`, compared (strictly greater) with the threshold. Without
    /// usable inputs: not idle.
    pub fn idle(&self) -> bool {
        if let Some(b) = self.is_idle {
            return b;
        }
        let threshold = self
            .idle_threshold_minutes
            .filter(|x| x.is_finite() && *x >= 0.0)
            .unwrap_or(DEFAULT_IDLE_THRESHOLD_MINUTES);
        let minutes = match (self.idle_minutes, self.last_assistant_ms, self.now_ms) {
            (Some(m), _, _) => Some(m),
            (None, Some(last), Some(now)) => Some((now - last) / 60_000.0),
            _ => None,
        };
        minutes.is_some_and(|m| m.is_finite() && m > threshold)
    }

    fn thinking_enabled(&self) -> bool {
        self.clear_thinking.unwrap_or(self.thinking_keep.is_some())
    }

    fn tool_uses_enabled(&self) -> bool {
        self.clear_tool_uses.unwrap_or(
            self.trigger_input_tokens.is_some()
                || self.clear_at_least.is_some()
                || self.target_input_tokens.is_some()
                || self.keep_tool_uses.is_some()
                || self.clear_tool_inputs.is_some()
                || self.exclude_tools.is_some(),
        )
    }

    fn compact_enabled(&self) -> bool {
        self.compact.unwrap_or(
            self.compact_trigger_input_tokens.is_some()
                || self.pause_after_compaction.is_some()
                || self.compact_instructions.is_some(),
        )
    }

    /// The `keep` the thinking edit gets.
    pub fn thinking_keep(&self) -> ThinkingKeep {
        match self.thinking_keep {
            Some(k) => k,
            None if self.idle() => ThinkingKeep::Turns(IDLE_KEEP_THINKING_TURNS),
            None => ThinkingKeep::All,
        }
    }
}

fn tokens_obj(kind: &str, value: u64) -> Value {
    json!({"type": kind, "value": value})
}

fn names(list: &[String]) -> Value {
    Value::Array(list.iter().cloned().map(Value::String).collect())
}

fn default_names(list: &[&str]) -> Value {
    Value::Array(
        list.iter()
            .map(|s| Value::String((*s).to_string()))
            .collect(),
    )
}

fn tool_uses_edit(o: &ContextManagementOptions) -> Value {
    let trigger = o.trigger();
    let mut e = Map::new();
    e.insert("type".into(), json!(CLEAR_TOOL_USES_EDIT));
    e.insert("trigger".into(), tokens_obj("input_tokens", trigger));
    if let Some(k) = count(o.keep_tool_uses) {
        e.insert("keep".into(), tokens_obj("tool_uses", k));
    }
    let clear_at_least = match count(o.clear_at_least) {
        Some(c) => c,
        None => {
            let target = count(o.target_input_tokens).unwrap_or(DEFAULT_TARGET_INPUT_TOKENS);
            trigger.saturating_sub(target)
        }
    };
    if clear_at_least > 0 {
        e.insert(
            "clear_at_least".into(),
            tokens_obj("input_tokens", clear_at_least),
        );
    }
    match &o.clear_tool_inputs {
        None => {
            e.insert(
                "clear_tool_inputs".into(),
                default_names(DEFAULT_CLEAR_TOOL_INPUTS),
            );
        }
        Some(ClearToolInputs::All(b)) => {
            e.insert("clear_tool_inputs".into(), Value::Bool(*b));
        }
        Some(ClearToolInputs::Tools(t)) if !t.is_empty() => {
            e.insert("clear_tool_inputs".into(), names(t));
        }
        Some(ClearToolInputs::Tools(_)) => {}
    }
    match &o.exclude_tools {
        None => {
            e.insert("exclude_tools".into(), default_names(DEFAULT_EXCLUDE_TOOLS));
        }
        Some(t) if !t.is_empty() => {
            e.insert("exclude_tools".into(), names(t));
        }
        Some(_) => {}
    }
    Value::Object(e)
}

fn compact_edit(o: &ContextManagementOptions) -> Value {
    let trigger = o
        .compact_trigger_input_tokens
        .filter(|t| t.is_finite() && *t >= MIN_COMPACT_TRIGGER_INPUT_TOKENS as f64 && *t <= 1e15)
        .map_or(DEFAULT_COMPACT_TRIGGER_INPUT_TOKENS, |t| t.round() as u64);
    let mut e = Map::new();
    e.insert("type".into(), json!(COMPACT_EDIT));
    e.insert("trigger".into(), tokens_obj("input_tokens", trigger));
    if let Some(p) = o.pause_after_compaction {
        e.insert("pause_after_compaction".into(), Value::Bool(p));
    }
    if let Some(i) = o
        .compact_instructions
        .as_ref()
        .filter(|i| !i.trim().is_empty())
    {
        e.insert("instructions".into(), Value::String(i.clone()));
    }
    Value::Object(e)
}

/// `buildApiContextManagement`: the `context_management` request parameter
/// `{edits: [...]}`, or `None` when no edit applies.
///
/// The thinking edit (when enabled) comes first, as the API requires when both are sent;
/// the compaction edit (when enabled) comes last.
/// With everything at its default (both edits switched on):
///
/// ```json
/// {"edits": [
///   {"type": "clear_thinking_20251015", "keep": "all"},
///   {"type": "clear_tool_uses_20250919",
///    "trigger": {"type": "input_tokens", "value": 180000},
///    "clear_at_least": {"type": "input_tokens", "value": 140000},
///    "clear_tool_inputs": ["Bash", "Glob", "Grep", "Read", "WebFetch", "WebSearch"],
///    "exclude_tools": ["Edit", "Write", "NotebookEdit"]}
/// ]}
/// ```
///
/// Numbers that are not finite and non-negative fall back to their defaults here (use
/// [`ContextManagementOptions::validate`] to reject them instead).
pub fn build_api_context_management(options: &ContextManagementOptions) -> Option<Value> {
    let mut edits = Vec::new();
    if options.thinking_enabled() {
        edits.push(json!({
            "type": CLEAR_THINKING_EDIT,
            "keep": options.thinking_keep().to_value(),
        }));
    }
    if options.tool_uses_enabled() {
        edits.push(tool_uses_edit(options));
    }
    if options.compact_enabled() {
        edits.push(compact_edit(options));
    }
    if edits.is_empty() {
        None
    } else {
        Some(json!({ "edits": edits }))
    }
}

/// What a Messages API response of a request that carried the [`COMPACT_EDIT`] (or any
/// response) reports back about compaction, and how `applyApiCompaction` applies it to the
/// caller's conversation: the caller's messages `[drop_before..]`, then the response as an
/// assistant message (its `content` as it came, byte for byte), then the caller's messages
/// at `readd`, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct ApiCompactionReport {
    /// The response begins with a `compaction` block whose `content` is not `null`: from the
    /// next request on the API reads nothing before it.
    pub compacted: bool,
    /// The response carries a `compaction` block with `content: null`: the compaction
    /// failed and changed nothing (the block is appended all the same, as the API expects).
    pub failed: bool,
    /// `stop_reason` is `compaction` (`pause_after_compaction`): the response holds only the
    /// block; the next request continues the task from the messages put back after it.
    pub paused: bool,
    /// `stop_reason` is `model_context_window_exceeded`: the context did not fit even so.
    pub context_window_exceeded: bool,
    /// The response's `stop_reason`.
    pub stop_reason: Option<String>,
    /// What the request was billed: the sum of `usage.iterations` (one entry per step:
    /// the compaction, then the message), or the top-level `usage` when there are none.
    /// The top-level usage leaves the compaction step out.
    pub billed_usage: UsageCounts,
    /// The `usage.iterations` entries as the response gave them.
    pub iterations: Vec<Value>,
    /// How many of the caller's messages are left out at the head (only with
    /// `dropIgnored` after a compaction: the API ignores them).
    pub drop_before: usize,
    /// The caller's messages put back after the compaction block when the response paused
    /// (from the latest user request on, unless `keepLastRequest` is `false`).
    pub readd: Vec<usize>,
    /// Those of `readd` that carry a response's `usage`: it measured the context before the
    /// compaction, so they are put back without it (else the count after the block would
    /// rest on the old context's size).
    pub readd_without_usage: Vec<usize>,
}

/// Options of `applyApiCompaction`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ApplyApiCompactionOptions {
    /// Leave out the messages before the compaction block (the API ignores them anyway);
    /// default `false`: the whole history is kept and the block marks where the context starts.
    pub drop_ignored: Option<bool>,
    /// After a pause, put the messages from the latest user request on back after the block
    /// so the next request answers it; default `true`.
    pub keep_last_request: Option<bool>,
}

impl ContextManagementOptions {
    /// The option keys, as JS names them (any other key is an error).
    pub const FIELDS: &'static [&'static str] = &[
        "clearThinking",
        "thinkingKeep",
        "isIdle",
        "idleMinutes",
        "lastAssistantMs",
        "nowMs",
        "idleThresholdMinutes",
        "clearToolUses",
        "triggerInputTokens",
        "clearAtLeast",
        "targetInputTokens",
        "keepToolUses",
        "clearToolInputs",
        "excludeTools",
        "compact",
        "compactTriggerInputTokens",
        "pauseAfterCompaction",
        "compactInstructions",
    ];
}

impl ApplyApiCompactionOptions {
    /// The option keys, as JS names them (any other key is an error).
    pub const FIELDS: &'static [&'static str] = &["dropIgnored", "keepLastRequest"];
}

/// The latest real user request of `messages` (a user message with text and no tool
/// result), where the model's next answer starts from.
fn latest_request(messages: &[Message]) -> Option<usize> {
    (0..messages.len()).rev().find(|&i| {
        let m = &messages[i];
        if m.kind() != Kind::User {
            return false;
        }
        match m.content() {
            Some(Content::Text(t)) => !t.trim().is_empty(),
            Some(Content::Blocks(bs)) => {
                bs.iter().all(|b| !matches!(b, Block::ToolResult(_)))
                    && bs
                        .iter()
                        .any(|b| matches!(b, Block::Text(t) if !t.text.trim().is_empty()))
            }
            None => false,
        }
    })
}

fn usage_counts(u: &Value, at: &str) -> Result<UsageCounts> {
    let n = |k: &str| u.get(k).and_then(Value::as_f64);
    UsageCounts::from_raw(
        [
            n("input_tokens"),
            n("cache_creation_input_tokens"),
            n("cache_read_input_tokens"),
            n("output_tokens"),
        ],
        || at.to_string(),
    )
}

/// `applyApiCompaction(messages, response)`: reads what a Messages API `response` reports
/// about the API's compaction and how it goes into `messages` (Anthropic messages, the
/// request's conversation without the response). See [`ApiCompactionReport`].
///
/// A response that is not a Messages API response body (no `content` array, a
/// `compaction` block that is not the first block, bad usage counts) is an
/// `INVALID_ARGUMENT` error naming what is wrong; Claude Code transcript lines are
/// `UNSUPPORTED_SHAPE` (the API's blocks have no place there).
pub fn apply_api_compaction(
    messages: &[Message],
    response: &Value,
    options: &ApplyApiCompactionOptions,
) -> Result<ApiCompactionReport> {
    // The `compact_boundary` line a compaction of the library puts in front of the Anthropic
    // messages it compacted is not a transcript of them (`Message::written_as_lines`).
    if let Some(i) = messages
        .iter()
        .position(|m| m.is_transcript() && !m.is_compact_boundary())
    {
        return Err(Error::new(
            ErrorCode::UnsupportedShape,
            format!(
                "messages[{i}] is a Claude Code transcript line: applyApiCompaction takes the \
                 Anthropic messages the request was sent with"
            ),
        ));
    }
    let content = response
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            Error::invalid_argument(
                "response: expected a Messages API response body with a `content` array",
            )
        })?;
    let is_compaction = |b: &Value| b.get("type").and_then(Value::as_str) == Some(COMPACTION_BLOCK);
    if let Some(i) = content.iter().skip(1).position(is_compaction) {
        return Err(Error::invalid_argument(format!(
            "response.content[{}]: a compaction block must be the first block of the response",
            i + 1
        )));
    }
    let block = content.first().filter(|b| is_compaction(b));
    let compacted = block.is_some_and(|b| b.get("content").is_some_and(|c| !c.is_null()));
    let failed = block.is_some() && !compacted;
    let stop_reason = response
        .get("stop_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    let paused = compacted && stop_reason.as_deref() == Some("compaction");
    let usage = response.get("usage").filter(|u| u.is_object());
    let iterations: Vec<Value> = usage
        .and_then(|u| u.get("iterations"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let billed_usage = if iterations.is_empty() {
        match usage {
            Some(u) => usage_counts(u, "response.usage")?,
            None => UsageCounts::default(),
        }
    } else {
        let mut sum = UsageCounts::default();
        for (i, it) in iterations.iter().enumerate() {
            let c = usage_counts(it, &format!("response.usage.iterations[{i}]"))?;
            sum.input_tokens += c.input_tokens;
            sum.cache_creation_input_tokens += c.cache_creation_input_tokens;
            sum.cache_read_input_tokens += c.cache_read_input_tokens;
            sum.output_tokens += c.output_tokens;
        }
        sum
    };
    let drop_before = if compacted && options.drop_ignored == Some(true) {
        messages.len()
    } else {
        0
    };
    let readd = if paused && options.keep_last_request != Some(false) {
        latest_request(messages).map_or_else(Vec::new, |i| (i..messages.len()).collect())
    } else {
        Vec::new()
    };
    let readd_without_usage = readd
        .iter()
        .copied()
        .filter(|&i| messages[i].usage_ref().is_some())
        .collect();
    Ok(ApiCompactionReport {
        readd_without_usage,
        compacted,
        failed,
        paused,
        context_window_exceeded: stop_reason.as_deref() == Some("model_context_window_exceeded"),
        stop_reason,
        billed_usage,
        iterations,
        drop_before,
        readd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options as `buildApiContextManagement` reads them (the reader lives with the
    /// others in `drive::options`).
    fn read_options(v: &Value) -> Result<ContextManagementOptions> {
        crate::drive::options::context_management_options(v)
    }

    /// The options as `applyApiCompaction` reads them.
    fn read_apply_options(v: &Value) -> Result<ApplyApiCompactionOptions> {
        crate::drive::options::apply_api_compaction_options(v)
    }

    fn build(v: Value) -> Option<Value> {
        build_api_context_management(&read_options(&v).unwrap())
    }

    fn default_tool_edit() -> Value {
        json!({
            "type": "clear_tool_uses_20250919",
            "trigger": {"type": "input_tokens", "value": 180000},
            "clear_at_least": {"type": "input_tokens", "value": 140000},
            "clear_tool_inputs": ["Bash", "Glob", "Grep", "Read", "WebFetch", "WebSearch"],
            "exclude_tools": ["Edit", "Write", "NotebookEdit"]
        })
    }

    #[test]
    fn nothing_applies_gives_none() {
        assert_eq!(build(Value::Null), None);
        assert_eq!(build(json!({})), None);
        assert_eq!(
            build(json!({"clearThinking": false, "clearToolUses": false})),
            None
        );
        // Idleness alone switches nothing on.
        assert_eq!(build(json!({"isIdle": true, "idleMinutes": 500})), None);
        // A switch set to false beats settings.
        assert_eq!(
            build(json!({"clearToolUses": false, "triggerInputTokens": 1000})),
            None
        );
        assert_eq!(
            build(json!({"clearThinking": false, "thinkingKeep": "all"})),
            None
        );
    }

    #[test]
    fn thinking_keeps_all_when_active() {
        let expected = json!({"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]});
        assert_eq!(
            build(json!({"clearThinking": true})),
            Some(expected.clone())
        );
        assert_eq!(
            build(json!({"clearThinking": true, "idleMinutes": 60})),
            Some(expected.clone()),
            "exactly one hour is not more than an hour"
        );
        assert_eq!(
            build(json!({"clearThinking": true, "lastAssistantMs": 0, "nowMs": 3_600_000})),
            Some(expected.clone())
        );
        assert_eq!(
            build(json!({"clearThinking": true, "isIdle": false, "idleMinutes": 999})),
            Some(expected)
        );
    }

    #[test]
    fn thinking_keeps_one_turn_after_an_idle_hour() {
        let expected = json!({"edits": [{"type": "clear_thinking_20251015",
            "keep": {"type": "thinking_turns", "value": 1}}]});
        for opts in [
            json!({"clearThinking": true, "isIdle": true}),
            json!({"clearThinking": true, "idleMinutes": 61}),
            json!({"clearThinking": true, "lastAssistantMs": 0, "nowMs": 3_600_001}),
            json!({"clearThinking": true, "idleMinutes": 11, "idleThresholdMinutes": 10}),
        ] {
            assert_eq!(build(opts.clone()), Some(expected.clone()), "{opts}");
        }
        // idleMinutes wins over the timestamps.
        assert_eq!(
            build(json!({"clearThinking": true, "idleMinutes": 5,
                         "lastAssistantMs": 0, "nowMs": 1e10})),
            Some(json!({"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}))
        );
    }

    #[test]
    fn explicit_thinking_keep_wins_and_switches_the_edit_on() {
        assert_eq!(
            build(json!({"thinkingKeep": 3, "isIdle": true})),
            Some(json!({"edits": [{"type": "clear_thinking_20251015",
                "keep": {"type": "thinking_turns", "value": 3}}]}))
        );
        assert_eq!(
            build(json!({"thinkingKeep": "all", "isIdle": true})),
            Some(json!({"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}))
        );
        assert_eq!(
            build(json!({"thinkingKeep": {"type": "thinking_turns", "value": 2}})),
            Some(json!({"edits": [{"type": "clear_thinking_20251015",
                "keep": {"type": "thinking_turns", "value": 2}}]}))
        );
        assert_eq!(
            build(json!({"thinkingKeep": {"type": "all"}})),
            Some(json!({"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]}))
        );
    }

    #[test]
    fn tool_uses_defaults() {
        assert_eq!(
            build(json!({"clearToolUses": true})),
            Some(json!({"edits": [default_tool_edit()]}))
        );
    }

    #[test]
    fn both_edits_thinking_first() {
        let v =
            build(json!({"clearToolUses": true, "clearThinking": true, "isIdle": true})).unwrap();
        assert_eq!(
            v,
            json!({"edits": [
                {"type": "clear_thinking_20251015", "keep": {"type": "thinking_turns", "value": 1}},
                default_tool_edit()
            ]})
        );
        // Key order as documented (serde_json keeps insertion order).
        let keys: Vec<&String> = v["edits"][1].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "type",
                "trigger",
                "clear_at_least",
                "clear_tool_inputs",
                "exclude_tools"
            ]
        );
    }

    #[test]
    fn tool_uses_overrides() {
        let v = build(json!({
            "triggerInputTokens": 100000,
            "keepToolUses": 3,
            "clearToolInputs": true,
            "excludeTools": ["web_search"]
        }))
        .unwrap();
        assert_eq!(
            v,
            json!({"edits": [{
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 100000},
                "keep": {"type": "tool_uses", "value": 3},
                "clear_at_least": {"type": "input_tokens", "value": 60000},
                "clear_tool_inputs": true,
                "exclude_tools": ["web_search"]
            }]})
        );
        // Explicit clear_at_least, target, empty lists and `false`.
        let v = build(json!({
            "clearToolUses": true,
            "clearAtLeast": 5000,
            "clearToolInputs": [],
            "excludeTools": []
        }))
        .unwrap();
        assert_eq!(
            v,
            json!({"edits": [{
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 180000},
                "clear_at_least": {"type": "input_tokens", "value": 5000}
            }]})
        );
        let v = build(json!({"targetInputTokens": 100000, "clearToolInputs": false})).unwrap();
        assert_eq!(v["edits"][0]["clear_at_least"]["value"], 80000);
        assert_eq!(v["edits"][0]["clear_tool_inputs"], false);
        // clearAtLeast 0, or a target at or above the trigger, omits clear_at_least.
        let v = build(json!({"clearAtLeast": 0})).unwrap();
        assert!(v["edits"][0].get("clear_at_least").is_none());
        let v = build(json!({"triggerInputTokens": 30000})).unwrap();
        assert!(v["edits"][0].get("clear_at_least").is_none());
        let v = build(json!({"clearToolInputs": ["Read"]})).unwrap();
        assert_eq!(v["edits"][0]["clear_tool_inputs"], json!(["Read"]));
    }

    #[test]
    fn options_are_read_field_by_field() {
        let o = read_options(&json!({
            "clearThinking": null, "clearToolInputs": ["Bash"], "excludeTools": [],
            "keepToolUses": 3, "compactInstructions": "keep the plan"
        }))
        .unwrap();
        assert_eq!(o.clear_thinking, None, "null reads as absent");
        assert_eq!(
            o.clear_tool_inputs,
            Some(ClearToolInputs::Tools(vec!["Bash".into()]))
        );
        assert_eq!(o.exclude_tools, Some(vec![]));
        assert_eq!(o.keep_tool_uses, Some(3.0));
        assert_eq!(o.compact_instructions.as_deref(), Some("keep the plan"));
        let o = read_options(&json!({"clearToolInputs": false})).unwrap();
        assert_eq!(o.clear_tool_inputs, Some(ClearToolInputs::All(false)));
        for (v, words) in [
            (
                json!({"clearToolInputs": [1]}),
                "options.clearToolInputs must be an array of strings",
            ),
            (json!({"isIdle": "yes"}), "options.isIdle must be a boolean"),
            (
                json!({"nowMs": "5"}),
                "options.nowMs must be a finite number",
            ),
            (json!([]), "options must be an object"),
            (json!({"excludeTool": []}), "did you mean `excludeTools`"),
        ] {
            let e = read_options(&v.clone()).unwrap_err();
            assert!(e.message.contains(words), "{v}: {}", e.message);
        }
        let a = read_apply_options(&json!({"dropIgnored": true})).unwrap();
        assert_eq!(a.drop_ignored, Some(true));
        assert_eq!(a.keep_last_request, None);
    }

    #[test]
    fn invalid_options_are_rejected_with_the_field_name() {
        for (v, field) in [
            (json!({"triggerInputTokens": -1}), "triggerInputTokens"),
            (json!({"triggerInputTokens": 0}), "triggerInputTokens"),
            (json!({"clearAtLeast": 200000}), "clearAtLeast"),
            (json!({"thinkingKeep": 0}), "thinkingKeep"),
            (json!({"thinkingKeep": 1.5}), "thinkingKeep"),
            (json!({"thinkingKeep": "some"}), "thinkingKeep"),
            (json!({"idleMinutes": -3}), "idleMinutes"),
            (
                json!({"keepToolUses": 2.5}),
                "keepToolUses must be a whole number of tool uses ≥ 0, got 2.5",
            ),
            (json!({"keepToolUses": -1}), "keepToolUses"),
            (json!({"clearThinkng": true}), "clearThinkng"),
            (json!({"excludeTools": "Edit"}), ""),
        ] {
            let e = read_options(&v.clone()).unwrap_err();
            assert_eq!(e.code, crate::model::error::ErrorCode::InvalidConfig, "{v}");
            assert!(e.message.contains(field), "{v}: {}", e.message);
        }
    }

    #[test]
    fn errors_state_the_upper_bound_and_stay_short() {
        // 1e300 is finite and non-negative: the message names the bound it passes, written as
        // JavaScript writes the number (it spelt out 301 digits); a long string is cut.
        for (v, words) in [
            (json!({"idleMinutes": 1e300}), "from 0 to 1e15, got 1e+300"),
            (
                json!({"triggerInputTokens": 1e16}),
                "from 0 to 1e15, got 10000000000000000",
            ),
            (json!({"keepToolUses": 1e300}), "got 1e+300"),
            (
                json!({"compactTriggerInputTokens": 1e300}),
                "at most 1e15, got 1e+300",
            ),
            (json!({"thinkingKeep": "x".repeat(100_000)}), "xxxx…"),
        ] {
            let e = read_options(&v).unwrap_err();
            assert!(e.message.contains(words), "{}", e.message);
            assert!(e.message.len() < 200, "{}", e.message.len());
        }
    }

    #[test]
    fn unvalidated_bad_numbers_fall_back_to_defaults() {
        let o = ContextManagementOptions {
            clear_tool_uses: Some(true),
            trigger_input_tokens: Some(f64::NAN),
            keep_tool_uses: Some(-2.0),
            ..Default::default()
        };
        assert_eq!(
            build_api_context_management(&o),
            Some(json!({"edits": [default_tool_edit()]}))
        );
        let o = ContextManagementOptions {
            clear_thinking: Some(true),
            last_assistant_ms: Some(f64::NAN),
            now_ms: Some(1e12),
            ..Default::default()
        };
        assert!(!o.idle());
        assert_eq!(o.thinking_keep(), ThinkingKeep::All);
    }

    #[test]
    fn compact_edit_defaults_and_settings() {
        assert_eq!(
            build(json!({"compact": true})),
            Some(json!({"edits": [{"type": "compact_20260112",
                "trigger": {"type": "input_tokens", "value": 150000}}]}))
        );
        let v = build(json!({
            "compactTriggerInputTokens": 50000,
            "pauseAfterCompaction": true,
            "compactInstructions": "Keep the test plan."
        }))
        .unwrap();
        assert_eq!(
            v,
            json!({"edits": [{"type": "compact_20260112",
                "trigger": {"type": "input_tokens", "value": 50000},
                "pause_after_compaction": true,
                "instructions": "Keep the test plan."}]})
        );
        let keys: Vec<&String> = v["edits"][0].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["type", "trigger", "pause_after_compaction", "instructions"]
        );
        // Beside the other edits, last; a switch set to false wins.
        let v = build(json!({"clearThinking": true, "clearToolUses": true,
                             "pauseAfterCompaction": false}))
        .unwrap();
        let types: Vec<&str> = v["edits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap())
            .collect();
        assert_eq!(
            types,
            [CLEAR_THINKING_EDIT, CLEAR_TOOL_USES_EDIT, COMPACT_EDIT]
        );
        assert_eq!(v["edits"][2]["pause_after_compaction"], false);
        assert_eq!(
            build(json!({"compact": false, "compactTriggerInputTokens": 90000})),
            None
        );
        assert_eq!(COMPACT_BETA, "compact-2026-01-12");
    }

    #[test]
    fn compact_edit_rejects_what_the_api_would() {
        for (v, words) in [
            (
                json!({"compactTriggerInputTokens": 49_999}),
                "at least 50000",
            ),
            (
                json!({"compactTriggerInputTokens": 0}),
                "compactTriggerInputTokens",
            ),
            (
                json!({"compactTriggerInputTokens": 60_000.5}),
                "whole number",
            ),
            (json!({"compactTriggerInputTokens": "100000"}), ""),
            (json!({"compactInstructions": "  "}), "compactInstructions"),
            (json!({"compactInstructions": 3}), ""),
            (json!({"pauseAfterCompaction": "yes"}), ""),
            (json!({"compactTrigger": 60000}), "compactTrigger"),
        ] {
            let e = read_options(&v.clone()).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidConfig, "{v}");
            assert!(e.message.contains(words), "{v}: {}", e.message);
        }
    }

    fn conversation() -> Vec<Message> {
        Message::parse_all(json!([
            {"role": "user", "content": "fix the parser"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "src"}]},
            {"role": "assistant", "content": "done"},
            {"role": "user", "content": [{"type": "text", "text": "now the tests"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "ok"}]}
        ]))
        .unwrap()
    }

    #[test]
    fn a_threshold_compaction_response_is_read_and_billed_by_its_iterations() {
        let m = conversation();
        let response = json!({
            "role": "assistant",
            "content": [{"type": "compaction", "content": "Summary.", "encrypted_content": "Eq=="},
                        {"type": "text", "text": "Tests pass."}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 4000, "output_tokens": 30,
                "iterations": [
                    {"type": "compaction", "input_tokens": 160000, "output_tokens": 2500},
                    {"type": "message", "input_tokens": 4000, "output_tokens": 30,
                     "cache_read_input_tokens": 100}]}
        });
        let r = apply_api_compaction(&m, &response, &Default::default()).unwrap();
        assert!(r.compacted && !r.failed && !r.paused && !r.context_window_exceeded);
        assert_eq!(r.stop_reason.as_deref(), Some("end_turn"));
        assert_eq!(
            r.billed_usage,
            UsageCounts {
                input_tokens: 164_000,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: 100,
                output_tokens: 2_530
            }
        );
        assert_eq!(r.iterations.len(), 2);
        assert_eq!((r.drop_before, r.readd.clone()), (0, vec![]));
        let dropped = apply_api_compaction(
            &m,
            &response,
            &ApplyApiCompactionOptions {
                drop_ignored: Some(true),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(dropped.drop_before, m.len());
    }

    #[test]
    fn a_pause_puts_the_latest_request_back_and_a_failure_changes_nothing() {
        let m = conversation();
        let paused = json!({
            "content": [{"type": "compaction", "content": "Summary.", "encrypted_content": "Eq=="}],
            "stop_reason": "compaction",
            "usage": {"input_tokens": 0, "output_tokens": 0}
        });
        let r = apply_api_compaction(&m, &paused, &Default::default()).unwrap();
        assert!(r.paused && r.compacted);
        assert_eq!(
            r.readd,
            vec![4, 5, 6],
            "from `now the tests` on, pairs whole"
        );
        assert!(r.readd_without_usage.is_empty());
        // A put-back response's usage measured the context before the compaction.
        let mut with_usage = conversation();
        with_usage[5] = Message::from_value(
            json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}],
                   "usage": {"input_tokens": 140_000, "output_tokens": 20}}),
            "a response",
        )
        .unwrap();
        let r = apply_api_compaction(&with_usage, &paused, &Default::default()).unwrap();
        assert_eq!(
            (r.readd.clone(), r.readd_without_usage),
            (vec![4, 5, 6], vec![5])
        );
        let off = ApplyApiCompactionOptions {
            keep_last_request: Some(false),
            ..Default::default()
        };
        assert!(apply_api_compaction(&m, &paused, &off)
            .unwrap()
            .readd
            .is_empty());
        let failed = json!({
            "content": [{"type": "compaction", "content": null, "encrypted_content": null},
                        {"type": "text", "text": "answer"}],
            "stop_reason": "model_context_window_exceeded",
            "usage": {"input_tokens": 190000, "output_tokens": 10}
        });
        let r = apply_api_compaction(
            &m,
            &failed,
            &ApplyApiCompactionOptions {
                drop_ignored: Some(true),
                ..Default::default()
            },
        )
        .unwrap();
        assert!(r.failed && !r.compacted && !r.paused && r.context_window_exceeded);
        assert_eq!(r.drop_before, 0, "a failed compaction drops nothing");
        assert_eq!(r.billed_usage.input_tokens, 190_000);
        // An ordinary response: nothing about compaction.
        let plain = json!({"content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"});
        let r = apply_api_compaction(&m, &plain, &Default::default()).unwrap();
        assert!(!r.compacted && !r.failed && !r.paused);
    }

    #[test]
    fn bad_responses_and_transcripts_are_refused() {
        let m = conversation();
        for (bad, words) in [
            (json!({"role": "assistant"}), "content"),
            (
                json!({"content": [{"type": "text", "text": "a"},
                                {"type": "compaction", "content": "s"}]}),
                "content[1]",
            ),
            (
                json!({"content": [], "usage": {"iterations": [{"input_tokens": -5}]}}),
                "iterations[0]",
            ),
        ] {
            let e = apply_api_compaction(&m, &bad, &Default::default()).unwrap_err();
            assert!(
                matches!(
                    e.code,
                    ErrorCode::InvalidArgument | ErrorCode::InvalidTokenCount
                ),
                "{bad}: {e}"
            );
            assert!(e.to_string().contains(words), "{bad}: {e}");
        }
        let lines = Message::parse_all(json!([{"type": "user", "uuid": "u1",
            "message": {"role": "user", "content": "a"}}]))
        .unwrap();
        let e =
            apply_api_compaction(&lines, &json!({"content": []}), &Default::default()).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedShape);
        let e = read_apply_options(&json!({"dropIgnore": true})).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArgument);
    }

    /// Anthropic messages the library compacted hold its `compact_boundary` line in front:
    /// still the messages the request was sent with (they were `UNSUPPORTED_SHAPE`, "a Claude
    /// Code transcript line"), a pause continued from their latest request.
    #[test]
    fn messages_compacted_by_the_library_take_the_api_compaction() {
        let m = Message::parse_all(json!([
            {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "uuid": "b"},
            {"role": "user", "content": "This session is being continued. Summary: s"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "next task"}
        ]))
        .unwrap();
        let paused = json!({"content": [{"type": "compaction", "content": "the API's summary"}],
            "stop_reason": "compaction", "usage": {"input_tokens": 10, "output_tokens": 5}});
        let r = apply_api_compaction(&m, &paused, &Default::default()).unwrap();
        assert!(r.compacted && r.paused);
        assert_eq!(r.readd, vec![3]);
        // A transcript line besides the boundary is still refused.
        let mut lines = m.clone();
        lines.extend(
            Message::parse_all(json!([{"type": "user", "uuid": "u1",
                "message": {"role": "user", "content": "a"}}]))
            .unwrap(),
        );
        let e = apply_api_compaction(&lines, &paused, &Default::default()).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnsupportedShape);
        assert!(e.message.contains("messages[4]"), "{}", e.message);
    }

    #[test]
    fn constants_match_the_spec() {
        assert_eq!(DEFAULT_CLEAR_AT_LEAST, 140_000);
        assert_eq!(DEFAULT_TRIGGER_INPUT_TOKENS, 180_000);
        assert_eq!(CONTEXT_MANAGEMENT_BETA, "context-management-2025-06-27");
    }
}
