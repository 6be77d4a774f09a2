//! The simulator: replays a recorded session request by request under compaction policies
//! and reports what each would have cost (`simulateSession`, `context-compaction simulate`).
//!
//! - [`timeline`]: the session as items (lines sent to the model, sized on the recorded
//!   usage) and calls (when, what was billed).
//! - [`cache`]: the provider's prompt-prefix cache with its time-to-live.
//! - [`prices`]: prices of the billing classes.
//! - [`policy`]: what a policy does, as data; the built-in ones.
//! - [`replay`]: one replay of the session under one policy.
//! - [`report`]: the numbers reported, and the calibration against the recorded usage.
//!
//! Method and calibration numbers: docs/simulate.md.

pub mod cache;
pub mod policy;
pub mod prices;
pub mod replay;
pub mod report;
pub mod timeline;

use serde::Deserialize;

use crate::measure::thresholds::{
    auto_compact_threshold, blocking_limit, WARNING_THRESHOLD_BUFFER_TOKENS,
};
use crate::model::config::Config;
use crate::model::error::{Error, Result};
use crate::model::messages::Message;
use policy::{default_policies, Policy};
use prices::{PriceOverrides, Prices};
use replay::{Run, Settings};
use report::{error_percent, CacheTotals, Calibration, SimulationReport};
use timeline::build_timeline;

/// Default output speed of a summary, tokens per second.
pub const DEFAULT_SUMMARY_TOKENS_PER_SECOND: f64 = 50.0;
/// The slowest summary a simulation takes, tokens per second: slower, its wait would be no
/// finite number of seconds (and no summary is that slow).
pub const MIN_SUMMARY_TOKENS_PER_SECOND: f64 = 0.001;
/// Default size budget of a summary, tokens (about the recorded Claude Code summary).
pub const DEFAULT_SUMMARY_TOKENS: u64 = 4_000;
/// Model assumed when the session names none.
pub const DEFAULT_MODEL: &str = "claude-opus-4-6";
/// The policy costs are compared with.
pub const BASELINE_POLICY: &str = "claude-code";

/// Options of a simulation (`simulateSession(lines, options)`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SimulateOptions {
    /// Policies to compare: built-in names or policy objects (default: every built-in one).
    #[serde(default)]
    pub policies: Option<Vec<serde_json::Value>>,
    /// Model for prices and thresholds (default: the session's).
    #[serde(default)]
    pub model: Option<String>,
    /// Prices overriding the model's list prices ($/MTok).
    #[serde(default)]
    pub prices: Option<PriceOverrides>,
    /// Summary output speed, tokens per second (default 50).
    #[serde(default)]
    pub summary_tokens_per_second: Option<f64>,
    /// Summary size budget, tokens (default 4,000).
    #[serde(default)]
    pub summary_tokens: Option<u64>,
    /// Tokens of the hidden prefix (default: measured on the first recorded request).
    #[serde(default)]
    pub hidden_tokens: Option<u64>,
}

impl SimulateOptions {
    /// Reads options from JSON (`null` or absent: defaults).
    pub fn from_json(v: &serde_json::Value) -> Result<SimulateOptions> {
        if v.is_null() {
            return Ok(SimulateOptions::default());
        }
        serde_json::from_value(v.clone())
            .map_err(|e| Error::invalid_argument(format!("simulateSession options: {e}")))
    }
}

/// Replays `messages` (transcript lines) under each policy of `options`.
pub fn simulate(messages: &[Message], options: &SimulateOptions) -> Result<SimulationReport> {
    let t = build_timeline(messages)?;
    let model = options
        .model
        .clone()
        .or_else(|| t.model.clone())
        .unwrap_or_else(|| DEFAULT_MODEL.to_string());
    let prices = options
        .prices
        .unwrap_or_default()
        .apply(Prices::for_model(&model))?;
    let speed = options
        .summary_tokens_per_second
        .unwrap_or(DEFAULT_SUMMARY_TOKENS_PER_SECOND);
    if !speed.is_finite() || speed < MIN_SUMMARY_TOKENS_PER_SECOND {
        return Err(Error::invalid_argument(format!(
            "summaryTokensPerSecond must be a finite number of at least 0.001 (tokens per second), got {}",
            crate::model::number::js_text(speed)
        )));
    }
    let summary_tokens = options.summary_tokens.unwrap_or(DEFAULT_SUMMARY_TOKENS);
    if summary_tokens == 0 {
        return Err(Error::invalid_argument("summaryTokens must be > 0"));
    }
    for (name, n) in [
        ("summaryTokens", Some(summary_tokens)),
        ("hiddenTokens", options.hidden_tokens),
    ] {
        if n.is_some_and(|n| n as f64 > crate::model::config::MAX_TOKENS) {
            return Err(Error::invalid_argument(format!(
                "{name} must be at most 1,000,000,000,000 tokens, got {}",
                n.unwrap_or_default()
            )));
        }
    }
    let config = Config::default();
    let threshold = auto_compact_threshold(&model, &config);
    let warning = threshold.saturating_sub(WARNING_THRESHOLD_BUFFER_TOKENS);
    let policies: Vec<Policy> = match &options.policies {
        None => default_policies(),
        Some(list) if list.is_empty() => {
            return Err(Error::invalid_argument(
                "policies is empty: give at least one policy name or object",
            ))
        }
        Some(list) => list
            .iter()
            .enumerate()
            .map(|(i, v)| Policy::from_json(v).map_err(|e| e.at(format!("policies[{i}]"))))
            .collect::<Result<_>>()?,
    };
    let settings = Settings {
        prices,
        summary_tokens_per_second: speed,
        summary_tokens,
        threshold,
        warning,
        blocking: blocking_limit(&model, &config),
        hidden_tokens: options.hidden_tokens.unwrap_or(t.hidden_tokens),
    };

    // The recorded replay first: its prompt changes apply to every policy.
    let has_usage = t.calls.iter().any(|c| c.recorded.is_some());
    let mut calibration = None;
    let mut breaks = Vec::new();
    if has_usage {
        let recorded = policy::recorded();
        let mut pure = Run::new(&t, messages, &settings, &recorded);
        pure.replay_recorded(false);
        let mut with = Run::new(&t, messages, &settings, &recorded);
        breaks = with.replay_recorded(true);
        let rec = CacheTotals {
            cache_read: t
                .calls
                .iter()
                .filter_map(|c| c.recorded)
                .map(|r| r.usage.cache_read_input_tokens)
                .sum(),
            cache_write: t
                .calls
                .iter()
                .filter_map(|c| c.recorded)
                .map(|r| r.usage.cache_creation_input_tokens)
                .sum(),
        };
        let totals = |r: &Run| CacheTotals {
            cache_read: r.accumulator().conversation.cache_read,
            cache_write: r.accumulator().conversation.cache_write,
        };
        let (sim, model_only) = (totals(&with), totals(&pure));
        calibration = Some(Calibration {
            calls: t.calls.iter().filter(|c| c.recorded.is_some()).count() as u64,
            recorded: rec,
            simulated: sim,
            read_error_percent: error_percent(sim.cache_read, rec.cache_read),
            write_error_percent: error_percent(sim.cache_write, rec.cache_write),
            model_only,
            model_only_read_error_percent: error_percent(model_only.cache_read, rec.cache_read),
            model_only_write_error_percent: error_percent(model_only.cache_write, rec.cache_write),
            client_breaks: breaks.clone(),
        });
    }

    let mut reports = Vec::new();
    for p in &policies {
        if p.recorded && !has_usage {
            continue;
        }
        let mut run = Run::new(&t, messages, &settings, p);
        if p.recorded {
            run.replay_recorded(true);
            reports.push(run.finish());
            continue;
        }
        run.replay_policy(&breaks);
        let mut report = run.finish();
        if report.rereads > 0 {
            // What the re-reads add: the same replay without them.
            let mut without = Run::new(&t, messages, &settings, p).without_rereads();
            without.replay_policy(&breaks);
            report.reread_cost = report.cost - without.finish().cost;
        }
        reports.push(report);
    }
    if let Some(base) = reports
        .iter()
        .find(|r| r.name == BASELINE_POLICY)
        .map(|r| r.cost)
    {
        for r in &mut reports {
            if base > 0.0 {
                r.relative_cost = Some(r.cost / base);
            }
        }
    }
    let recommended = reports
        .iter()
        // A policy whose automatic compaction stopped lets the context outgrow the
        // threshold: it does not hold the session, however cheap.
        .filter(|r| r.name != "recorded" && r.lost == 0 && r.paused.is_none())
        .filter(|r| r.cost.is_finite())
        .min_by(|a, b| a.cost.total_cmp(&b.cost))
        .map(|r| r.name.clone());
    Ok(SimulationReport {
        model,
        prices,
        summary_tokens_per_second: speed,
        summary_tokens,
        threshold,
        hidden_tokens: settings.hidden_tokens,
        calls: t.calls.len() as u64,
        policies: reports,
        calibration,
        recommended,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn session() -> Vec<Message> {
        let mut lines = Vec::new();
        for i in 0..4 {
            lines.push(json!({"type": "user", "uuid": format!("u{i}"),
                "timestamp": format!("2026-01-01T00:0{i}:00.000Z"),
                "message": {"role": "user", "content": "x".repeat(400)}}));
            lines.push(json!({"type": "assistant", "uuid": format!("a{i}"),
                "timestamp": format!("2026-01-01T00:0{i}:30.000Z"),
                "message": {"role": "assistant", "id": format!("m{i}"), "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": "y".repeat(400)}],
                    "usage": {"input_tokens": 10, "output_tokens": 100,
                        "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}}));
        }
        lines
            .into_iter()
            .map(|l| Message::from_value(l, "t").unwrap())
            .collect()
    }

    fn options(v: serde_json::Value) -> SimulateOptions {
        SimulateOptions::from_json(&v).unwrap()
    }

    /// A speed so slow that a summary's wait is no finite number, or a token count beyond
    /// the exact integers of a report, is refused naming the field and its limit; at the
    /// limit, every number of the report is finite.
    #[test]
    fn rates_and_sizes_that_make_no_finite_report_are_refused() {
        let m = session();
        let early = json!({"name": "early", "compact": {"threshold": 1}});
        for (opts, words) in [
            (
                json!({"summaryTokensPerSecond": 5e-324}),
                "summaryTokensPerSecond must be a finite number of at least 0.001 (tokens per second), got 5e-324",
            ),
            (
                json!({"hiddenTokens": 10_000_000_000_000u64}),
                "hiddenTokens must be at most 1,000,000,000,000 tokens",
            ),
            (
                json!({"summaryTokens": 10_000_000_000_000u64}),
                "summaryTokens must be at most 1,000,000,000,000 tokens",
            ),
        ] {
            let e = simulate(&m, &options(opts)).unwrap_err();
            assert_eq!(e.code, crate::model::error::ErrorCode::InvalidArgument);
            assert!(e.message.starts_with(words), "{}", e.message);
        }
        let r = simulate(
            &m,
            &options(json!({
                "policies": [early, "claude-code"],
                "summaryTokensPerSecond": MIN_SUMMARY_TOKENS_PER_SECOND,
                "summaryTokens": 1_000_000_000_000u64,
                "hiddenTokens": 1_000_000_000_000u64,
                "prices": {"input": prices::MAX_PRICE, "output": prices::MAX_PRICE,
                           "cacheRead": prices::MAX_PRICE}
            })),
        )
        .unwrap();
        for p in &r.policies {
            assert!(p.cost.is_finite() && p.blocked_seconds.is_finite(), "{p:?}");
            assert!(p.relative_cost.is_none_or(f64::is_finite), "{p:?}");
        }
        // The prices at their limit: every cost finite, and the cheapest recommended.
        let r = simulate(
            &m,
            &options(json!({
                "policies": ["claude-code"],
                "prices": {"input": prices::MAX_PRICE, "output": prices::MAX_PRICE}
            })),
        )
        .unwrap();
        assert!(r.policies[0].cost.is_finite() && r.policies[0].cost > 0.0);
        assert_eq!(r.recommended.as_deref(), Some("claude-code"));
    }
}
