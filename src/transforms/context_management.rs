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
//! The function is pure: the caller says whether extended thinking is on (the thinking edit
//! only makes sense then) and gives the times needed to judge idleness.

use serde::de::{self, Deserializer};
use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::model::error::{Error, Result};

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
                    "thinkingKeep must be \"all\" or a whole number of turns ≥ 1, got {n}"
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
                    "thinkingKeep object must have type \"all\" or \"thinking_turns\", got {v}"
                )),
            },
            other => Err(format!(
                "thinkingKeep must be \"all\" or a whole number of turns ≥ 1, got {other}"
            )),
        }
    }
}

impl<'de> Deserialize<'de> for ThinkingKeep {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        ThinkingKeep::from_value(&v).map_err(de::Error::custom)
    }
}

/// `clear_tool_inputs`: all tools or none (a boolean), or the named tools.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
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
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
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
    /// `keep` in tool uses; absent: the API's default.
    pub keep_tool_uses: Option<f64>,
    /// `clear_tool_inputs`; default [`DEFAULT_CLEAR_TOOL_INPUTS`]. An empty list omits it.
    pub clear_tool_inputs: Option<ClearToolInputs>,
    /// `exclude_tools`; default [`DEFAULT_EXCLUDE_TOOLS`]. An empty list omits it.
    pub exclude_tools: Option<Vec<String>>,
}

/// A finite, non-negative number rounded to a whole count, or `None`.
fn count(v: Option<f64>) -> Option<u64> {
    v.filter(|x| x.is_finite() && *x >= 0.0 && *x <= 1e15)
        .map(|x| x.round() as u64)
}

impl ContextManagementOptions {
    /// Parses options from JSON (`null` or absent → all defaults) and validates them.
    pub fn from_value(v: Value) -> Result<ContextManagementOptions> {
        if v.is_null() {
            return Ok(Self::default());
        }
        let opts: ContextManagementOptions = serde_json::from_value(v)
            .map_err(|e| Error::invalid_config(format!("context management options: {e}")))?;
        opts.validate()?;
        Ok(opts)
    }

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
            ("keepToolUses", self.keep_tool_uses),
        ];
        for (name, v) in fields {
            if let Some(x) = v {
                if count(Some(x)).is_none() {
                    return Err(Error::invalid_config(format!(
                        "{name} must be a finite, non-negative number, got {x}"
                    )));
                }
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

/// `buildApiContextManagement`: the `context_management` request parameter
/// `{edits: [...]}`, or `None` when no edit applies.
///
/// The thinking edit (when enabled) comes first, as the API requires when both are sent.
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
    if edits.is_empty() {
        None
    } else {
        Some(json!({ "edits": edits }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(v: Value) -> Option<Value> {
        build_api_context_management(&ContextManagementOptions::from_value(v).unwrap())
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
    fn invalid_options_are_rejected_with_the_field_name() {
        for (v, field) in [
            (json!({"triggerInputTokens": -1}), "triggerInputTokens"),
            (json!({"triggerInputTokens": 0}), "triggerInputTokens"),
            (json!({"clearAtLeast": 200000}), "clearAtLeast"),
            (json!({"thinkingKeep": 0}), "thinkingKeep"),
            (json!({"thinkingKeep": 1.5}), "thinkingKeep"),
            (json!({"thinkingKeep": "some"}), "thinkingKeep"),
            (json!({"idleMinutes": -3}), "idleMinutes"),
            (json!({"clearThinkng": true}), "clearThinkng"),
            (json!({"excludeTools": "Edit"}), ""),
        ] {
            let e = ContextManagementOptions::from_value(v.clone()).unwrap_err();
            assert_eq!(e.code, crate::model::error::ErrorCode::InvalidConfig, "{v}");
            assert!(e.message.contains(field), "{v}: {}", e.message);
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
    fn constants_match_the_spec() {
        assert_eq!(DEFAULT_CLEAR_AT_LEAST, 140_000);
        assert_eq!(DEFAULT_TRIGGER_INPUT_TOKENS, 180_000);
        assert_eq!(CONTEXT_MANAGEMENT_BETA, "context-management-2025-06-27");
    }
}
