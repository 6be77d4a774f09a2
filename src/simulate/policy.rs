//! Policies: when to clear old tool results, when and how to summarize, and what the
//! provider does on its side. A policy is plain data (JSON with camelCase keys), so users
//! can write their own; the built-in ones are named ([`builtin`]).

use serde::{Deserialize, Serialize};

use crate::model::error::{Error, Result};
use crate::simulate::cache::Ttl;

/// A replay policy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Policy {
    /// Its name in reports.
    pub name: String,
    /// One line saying what it does.
    #[serde(default)]
    pub description: String,
    /// Replay the recorded requests as they happened (the built-in `recorded` policy).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recorded: bool,
    /// Time-to-live of the cache entries the requests write (default 5 minutes).
    #[serde(default)]
    pub ttl: Ttl,
    /// Client-side summarizing compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact: Option<CompactRule>,
    /// Client-side clearing of old tool results.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub micro_compact: Option<MicroCompactRule>,
    /// The Anthropic API's server-side context management.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerRule>,
}

/// When the client summarizes the conversation.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CompactRule {
    /// Context size (tokens) at which the conversation is compacted; absent: the model's
    /// auto-compact threshold (SPEC §4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<u64>,
    /// Pre-emptive summaries, decided as the library's `Compactor` decides them
    /// ([`crate::drive::ahead::Background`]): from the early line on, a summary of the
    /// conversation so far is written in the background, and refreshed when stale; at the
    /// threshold (or a check early) the ready one replaces what it covers, every line since
    /// its cut kept verbatim — only when the context it leaves is within 1.3× the
    /// synchronous path's. Otherwise, or with none ready, the synchronous path runs and the
    /// conversation waits.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pre_emptive: bool,
    /// The early line of pre-emptive summaries (tokens); absent: the library's automatic
    /// line ([`crate::drive::preemptive::EarlyLine::below`] the threshold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub early_at: Option<u64>,
    /// Also compact when the cached prefix has expired (the rewrite is paid anyway) and the
    /// context is at least this large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when_cache_cold_above: Option<u64>,
    /// Token budget of the files restored after a compaction (default 50,000, SPEC §9;
    /// 0 restores none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_budget: Option<u64>,
}

/// When the client clears old tool results (SPEC §10's rules: only compactable tools, the
/// most recent kept).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MicroCompactRule {
    /// Most recent compactable results never cleared (default 5).
    #[serde(default = "default_keep_recent")]
    pub keep_recent: usize,
    /// Time-based: clear when the previous request is at least this old (minutes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_minutes: Option<f64>,
    /// Clear whenever the cached prefix has expired (the rewrite is paid anyway).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub when_cache_cold: bool,
    /// Size-based: clear when the context is at least this large…
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<u64>,
    /// …and only when the clearing frees at least this many tokens (the idea of the API's
    /// `clear_at_least`: a cache rewrite is paid only for a large enough gain).
    #[serde(default)]
    pub clear_at_least: u64,
}

fn default_keep_recent() -> usize {
    crate::transforms::microcompact::DEFAULT_KEEP_RECENT
}

impl Default for MicroCompactRule {
    fn default() -> Self {
        MicroCompactRule {
            keep_recent: default_keep_recent(),
            idle_minutes: None,
            when_cache_cold: false,
            trigger: None,
            clear_at_least: 0,
        }
    }
}

/// The Anthropic API's own context management (FIELD.md): edits the provider applies to
/// each request before processing it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerRule {
    /// `clear_tool_uses_20250919`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear_tool_uses: Option<ClearToolUses>,
    /// `compact_20260112`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact: Option<ServerCompact>,
}

/// `clear_tool_uses_20250919`: above `trigger` input tokens, every tool result but the
/// last `keep` is replaced by a placeholder, unless that frees less than `clear_at_least`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClearToolUses {
    /// Input tokens from which the edit applies (API default 100,000).
    #[serde(default = "default_clear_trigger")]
    pub trigger: u64,
    /// Most recent tool uses kept (API default 3).
    #[serde(default = "default_clear_keep")]
    pub keep: usize,
    /// Skip the edit unless it frees at least this many tokens (default 0).
    #[serde(default)]
    pub clear_at_least: u64,
    /// Tools whose results are never cleared.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_tools: Vec<String>,
}

fn default_clear_trigger() -> u64 {
    100_000
}
fn default_clear_keep() -> usize {
    3
}

impl Default for ClearToolUses {
    fn default() -> Self {
        ClearToolUses {
            trigger: default_clear_trigger(),
            keep: default_clear_keep(),
            clear_at_least: 0,
            exclude_tools: Vec::new(),
        }
    }
}

/// `compact_20260112`: above `trigger` input tokens the provider summarizes everything
/// before the request's end inside the same call, and ignores it on later requests.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServerCompact {
    /// Input tokens from which it compacts (API default 150,000, minimum 50,000).
    #[serde(default = "default_server_compact_trigger")]
    pub trigger: u64,
}

fn default_server_compact_trigger() -> u64 {
    150_000
}

/// The smallest `trigger` the API accepts for `compact_20260112`.
pub const SERVER_COMPACT_MIN_TRIGGER: u64 = 50_000;

impl Policy {
    /// Checks the values a JSON policy may get wrong.
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| {
            Err(Error::invalid_argument(format!(
                "policy {}: {what}",
                crate::model::view::quoted(&self.name)
            )))
        };
        if self.name.trim().is_empty() {
            return Err(Error::invalid_argument("a policy needs a non-empty name"));
        }
        if let Some(c) = &self.compact {
            if c.threshold == Some(0) {
                return bad("compact.threshold must be > 0");
            }
            if c.early_at.is_some() && !c.pre_emptive {
                return bad("compact.earlyAt needs compact.preEmptive: true");
            }
            if let (Some(e), Some(t)) = (c.early_at, c.threshold) {
                if e >= t {
                    return bad("compact.earlyAt must be below compact.threshold");
                }
            }
        }
        if let Some(m) = &self.micro_compact {
            if let Some(i) = m.idle_minutes {
                if !i.is_finite() || i < 0.0 {
                    return bad("microCompact.idleMinutes must be a finite number ≥ 0");
                }
            }
            if m.idle_minutes.is_none() && !m.when_cache_cold && m.trigger.is_none() {
                return bad(
                    "microCompact needs idleMinutes, whenCacheCold or trigger (when to clear)",
                );
            }
        }
        if let Some(ServerRule {
            compact: Some(c), ..
        }) = &self.server
        {
            if c.trigger < SERVER_COMPACT_MIN_TRIGGER {
                return bad("server.compact.trigger must be at least 50000 (the API's minimum)");
            }
        }
        Ok(())
    }

    /// Reads a policy from JSON (a name of a built-in one, or a policy object).
    pub fn from_json(value: &serde_json::Value) -> Result<Policy> {
        if let Some(name) = value.as_str() {
            return builtin(name).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "unknown policy {}; the built-in ones are {}",
                    crate::model::view::quoted(name),
                    BUILTIN_NAMES.join(", ")
                ))
            });
        }
        let p: Policy = serde_json::from_value(value.clone())
            .map_err(|e| Error::invalid_argument(format!("invalid policy: {e}")))?;
        p.validate()?;
        Ok(p)
    }
}

/// Names of the built-in policies, in the order reports list them.
pub const BUILTIN_NAMES: &[&str] = &[
    "recorded",
    "claude-code",
    "batched-clearing",
    "pre-emptive",
    "api-clear-tool-uses",
    "api-compaction",
    "recommended",
];

/// The policies compared by default (all built-in ones).
pub fn default_policies() -> Vec<Policy> {
    BUILTIN_NAMES.iter().filter_map(|n| builtin(n)).collect()
}

/// Claude Code's time-based micro-compaction (SPEC §10).
fn claude_code_micro() -> MicroCompactRule {
    MicroCompactRule {
        idle_minutes: Some(crate::transforms::microcompact::DEFAULT_IDLE_MINUTES),
        ..Default::default()
    }
}

/// The recommended policy's compaction threshold (tokens). Chosen on the shared sessions
/// (docs/simulate.md): a small context is read at every request, and the cache reads are
/// most of the bill.
pub const RECOMMENDED_THRESHOLD: u64 = 55_000;
/// The recommended policy's early line: its background summary starts here. Fixed, not the
/// library's automatic line: below a small threshold the automatic line goes down to the
/// warning line (20,000 tokens below) after one large turn, and the summaries then swap in
/// a check early, long before the threshold (docs/simulate.md).
pub const RECOMMENDED_EARLY_AT: u64 = 50_000;

/// The built-in `recorded` policy: the requests as they were made.
pub fn recorded() -> Policy {
    Policy {
        name: "recorded".to_string(),
        description: "the requests as recorded, with their recorded cache time-to-live".to_string(),
        recorded: true,
        ttl: Ttl::FiveMinutes,
        compact: None,
        micro_compact: None,
        server: None,
    }
}

/// A built-in policy by name.
pub fn builtin(name: &str) -> Option<Policy> {
    let p = |description: &str| Policy {
        name: name.to_string(),
        description: description.to_string(),
        recorded: false,
        ttl: Ttl::FiveMinutes,
        compact: None,
        micro_compact: None,
        server: None,
    };
    Some(match name {
        "recorded" => recorded(),
        "claude-code" => Policy {
            compact: Some(CompactRule::default()),
            micro_compact: Some(claude_code_micro()),
            ..p("Claude Code's defaults: summarize at the auto-compact threshold, clear old tool results after 60 idle minutes")
        },
        "batched-clearing" => Policy {
            compact: Some(CompactRule::default()),
            micro_compact: Some(MicroCompactRule {
                trigger: Some(100_000),
                clear_at_least: 40_000,
                ..claude_code_micro()
            }),
            ..p("Claude Code's, plus clearing old tool results above 100K tokens when it frees at least 40K")
        },
        "pre-emptive" => Policy {
            compact: Some(CompactRule {
                pre_emptive: true,
                ..Default::default()
            }),
            micro_compact: Some(claude_code_micro()),
            ..p("Claude Code's, with the summary written in the background from the library's automatic early line, refreshed when stale, swapped in only within 1.3x the synchronous context")
        },
        "api-clear-tool-uses" => Policy {
            compact: Some(CompactRule::default()),
            server: Some(ServerRule {
                clear_tool_uses: Some(ClearToolUses::default()),
                compact: None,
            }),
            ..p("the API's clear_tool_uses_20250919 with its defaults (100K trigger, keep 3), summaries at the threshold")
        },
        "api-compaction" => Policy {
            server: Some(ServerRule {
                clear_tool_uses: None,
                compact: Some(ServerCompact {
                    trigger: default_server_compact_trigger(),
                }),
            }),
            ..p("the API's compact_20260112 at its default 150K trigger")
        },
        "recommended" => Policy {
            compact: Some(CompactRule {
                threshold: Some(RECOMMENDED_THRESHOLD),
                pre_emptive: true,
                early_at: Some(RECOMMENDED_EARLY_AT),
                when_cache_cold_above: None,
                // Files restored as Claude Code restores them: a file not restored is read
                // again when the agent uses it, which costs as much and a round trip more.
                restore_budget: None,
            }),
            micro_compact: Some(MicroCompactRule {
                when_cache_cold: true,
                ..Default::default()
            }),
            ..p("summaries started in the background at 50K and swapped in at 55K, files restored as Claude Code restores them, old tool results cleared whenever the cache has expired")
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_builtin_name_resolves_and_validates() {
        for n in BUILTIN_NAMES {
            let p = builtin(n).unwrap();
            assert_eq!(p.name, *n);
            p.validate().unwrap();
            assert!(!p.description.is_empty());
        }
        assert!(builtin("nope").is_none());
    }

    #[test]
    fn a_custom_policy_reads_from_json_with_defaults() {
        let p = Policy::from_json(&json!({
            "name": "mine", "ttl": "1h",
            "compact": {"threshold": 120000},
            "microCompact": {"trigger": 80000, "clearAtLeast": 10000}
        }))
        .unwrap();
        assert_eq!(p.ttl, Ttl::OneHour);
        assert_eq!(p.compact.unwrap().threshold, Some(120_000));
        let m = p.micro_compact.unwrap();
        assert_eq!(
            (m.keep_recent, m.trigger, m.clear_at_least),
            (5, Some(80_000), 10_000)
        );
    }

    #[test]
    fn bad_policies_are_refused_with_what_is_wrong() {
        for (v, needle) in [
            (json!({"name": "x", "compact": {"thresold": 1}}), "thresold"),
            (
                json!({"name": "x", "compact": {"threshold": 100, "preEmptive": true, "earlyAt": 200}}),
                "earlyAt",
            ),
            (
                json!({"name": "x", "compact": {"earlyAt": 200}}),
                "preEmptive",
            ),
            (json!({"name": "x", "microCompact": {}}), "when to clear"),
            (
                json!({"name": "x", "server": {"compact": {"trigger": 1000}}}),
                "50000",
            ),
            (json!({"name": ""}), "name"),
            (json!("no-such-policy"), "built-in"),
            (json!({"name": "x", "ttl": "2h"}), "2h"),
        ] {
            let e = Policy::from_json(&v).unwrap_err();
            assert_eq!(e.code, crate::model::error::ErrorCode::InvalidArgument);
            assert!(e.to_string().contains(needle), "{e} lacks {needle}");
        }
    }
}
