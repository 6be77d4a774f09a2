//! Context windows, output limits and the thresholds derived from them (SPEC §4).

use serde::Serialize;

use crate::model::config::Config;

/// Tokens kept free below the effective window before auto-compaction fires.
pub const AUTOCOMPACT_BUFFER_TOKENS: u64 = 13_000;
/// Distance of the warning line below the threshold.
pub const WARNING_THRESHOLD_BUFFER_TOKENS: u64 = 20_000;
/// Distance of the error line below the threshold.
pub const ERROR_THRESHOLD_BUFFER_TOKENS: u64 = 20_000;
/// Room kept for a manual compaction: the blocking limit is the effective window minus this.
pub const MANUAL_COMPACT_BUFFER_TOKENS: u64 = 3_000;
/// Output reserved for the summary (the largest measured summary was 17,387 tokens).
pub const MAX_OUTPUT_TOKENS_FOR_SUMMARY: u64 = 20_000;
/// Default context window.
pub const DEFAULT_CONTEXT_WINDOW: u64 = 200_000;
/// Context window of 1M-context models.
pub const ONE_MILLION_CONTEXT_WINDOW: u64 = 1_000_000;
/// Default max output tokens of an unknown model.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 32_000;

/// Output limits of a model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OutputLimits {
    /// The default `max_tokens`.
    pub default: u64,
    /// The largest `max_tokens` the model accepts.
    pub upper_limit: u64,
}

/// (substring of the model id, default, upper limit), most specific first.
const OUTPUT_TABLE: &[(&str, u64, u64)] = &[
    ("opus-4-6", 64_000, 128_000),
    ("sonnet-4-6", 32_000, 128_000),
    ("opus-4-5", 32_000, 64_000),
    ("sonnet-4-5", 32_000, 64_000),
    ("haiku-4-5", 32_000, 64_000),
    ("opus-4-1", 32_000, 32_000),
    ("sonnet-4", 32_000, 64_000),
    ("haiku-4", 32_000, 64_000),
    ("opus-4", 32_000, 32_000),
    ("3-7-sonnet", 32_000, 64_000),
    ("3-5-sonnet", 8_192, 8_192),
    ("3-5-haiku", 8_192, 8_192),
    ("claude-3-opus", 4_096, 4_096),
    ("claude-3-haiku", 4_096, 4_096),
];

/// Models whose 1M context can be enabled by configuration.
const ONE_MILLION_CAPABLE: &[&str] = &["sonnet-4-6", "sonnet-4-5", "sonnet-4", "opus-4-6"];

/// Output limits of `model` from the table; unknown models get 32K/32K.
pub fn output_limits(model: &str) -> OutputLimits {
    let m = model.to_ascii_lowercase();
    OUTPUT_TABLE
        .iter()
        .find(|(key, _, _)| m.contains(key))
        .map_or(
            OutputLimits {
                default: DEFAULT_MAX_OUTPUT_TOKENS,
                upper_limit: DEFAULT_MAX_OUTPUT_TOKENS,
            },
            |&(_, default, upper_limit)| OutputLimits {
                default,
                upper_limit,
            },
        )
}

/// Whether the model id asks for the 1M context (`[1m]` suffix).
pub fn has_1m_suffix(model: &str) -> bool {
    model.trim_end().to_ascii_lowercase().ends_with("[1m]")
}

/// `getContextWindowForModel`: 200K; 1M with the `[1m]` suffix or when enabled by config for a
/// capable model; `config.contextWindow` always wins.
pub fn context_window_for_model(model: &str, config: &Config) -> u64 {
    if let Some(w) = config.context_window {
        return w as u64;
    }
    if has_1m_suffix(model) {
        return ONE_MILLION_CONTEXT_WINDOW;
    }
    if config.enable_1m_context == Some(true) {
        let m = model.to_ascii_lowercase();
        if ONE_MILLION_CAPABLE.iter().any(|k| m.contains(k)) {
            return ONE_MILLION_CONTEXT_WINDOW;
        }
    }
    DEFAULT_CONTEXT_WINDOW
}

/// `getMaxOutputTokensForModel`: the model's default max output tokens;
/// `config.maxOutputTokens` wins, capped at the model's upper limit.
pub fn max_output_tokens_for_model(model: &str, config: &Config) -> u64 {
    let limits = output_limits(model);
    match config.max_output_tokens {
        Some(v) => (v as u64).min(limits.upper_limit),
        None => limits.default,
    }
}

/// `getEffectiveContextWindowSize`: min(window, autoCompactWindow) − min(max output, 20,000).
pub fn effective_context_window(model: &str, config: &Config) -> u64 {
    let mut window = context_window_for_model(model, config);
    if let Some(cap) = config.auto_compact_window {
        window = window.min(cap as u64);
    }
    let reserve = max_output_tokens_for_model(model, config).min(MAX_OUTPUT_TOKENS_FOR_SUMMARY);
    window.saturating_sub(reserve)
}

/// `getAutoCompactThreshold`: effective − 13,000, or lower with `autoCompactPctOverride`.
pub fn auto_compact_threshold(model: &str, config: &Config) -> u64 {
    let effective = effective_context_window(model, config);
    let threshold = effective.saturating_sub(AUTOCOMPACT_BUFFER_TOKENS);
    match config.auto_compact_pct_override {
        Some(pct) if pct.is_finite() && pct > 0.0 && pct <= 100.0 => {
            let by_pct = (effective as f64 * pct / 100.0).floor() as u64;
            by_pct.min(threshold)
        }
        _ => threshold,
    }
}

/// The blocking limit: effective − 3,000 unless overridden.
pub fn blocking_limit(model: &str, config: &Config) -> u64 {
    match config.blocking_limit_override {
        Some(v) => v as u64,
        None => {
            effective_context_window(model, config).saturating_sub(MANUAL_COMPACT_BUFFER_TOKENS)
        }
    }
}

/// Result of `calculateTokenWarningState`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenWarningState {
    /// Percent of the threshold still free, 0–100.
    pub percent_left: u64,
    /// At or above the warning line (the UI shows orange).
    pub is_above_warning_threshold: bool,
    /// At or above the error line (the UI shows red).
    pub is_above_error_threshold: bool,
    /// At or above the auto-compact threshold (and auto-compaction is enabled).
    pub is_above_auto_compact_threshold: bool,
    /// At or above the blocking limit: the next request would not fit.
    pub is_at_blocking_limit: bool,
}

/// `calculateTokenWarningState` (SPEC §4).
pub fn token_warning_state(token_usage: u64, model: &str, config: &Config) -> TokenWarningState {
    let auto = config.is_auto_compact_enabled();
    let auto_threshold = auto_compact_threshold(model, config);
    let threshold = if auto {
        auto_threshold
    } else {
        effective_context_window(model, config)
    };
    let warning = threshold.saturating_sub(WARNING_THRESHOLD_BUFFER_TOKENS);
    let error = threshold.saturating_sub(ERROR_THRESHOLD_BUFFER_TOKENS);
    let percent_left = if threshold == 0 {
        0
    } else {
        let p = (threshold as f64 - token_usage as f64) / threshold as f64 * 100.0;
        p.round().max(0.0) as u64
    };
    TokenWarningState {
        percent_left,
        is_above_warning_threshold: token_usage >= warning,
        is_above_error_threshold: token_usage >= error,
        is_above_auto_compact_threshold: auto && token_usage >= auto_threshold,
        is_at_blocking_limit: token_usage >= blocking_limit(model, config),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none() -> Config {
        Config::default()
    }

    #[test]
    fn model_table() {
        let cases = [
            ("claude-opus-4-6", 64_000, 128_000),
            ("claude-sonnet-4-6", 32_000, 128_000),
            ("claude-opus-4-5-20251101", 32_000, 64_000),
            ("claude-sonnet-4-5-20250929", 32_000, 64_000),
            ("claude-sonnet-4-20250514", 32_000, 64_000),
            ("claude-haiku-4-5", 32_000, 64_000),
            ("claude-opus-4-20250514", 32_000, 32_000),
            ("claude-opus-4-1-20250805", 32_000, 32_000),
            ("claude-3-7-sonnet-20250219", 32_000, 64_000),
            ("claude-3-5-sonnet-20241022", 8_192, 8_192),
            ("claude-3-5-haiku-20241022", 8_192, 8_192),
            ("claude-3-opus-20240229", 4_096, 4_096),
            ("claude-3-haiku-20240307", 4_096, 4_096),
            ("gpt-something", 32_000, 32_000),
            ("", 32_000, 32_000),
        ];
        for (m, d, u) in cases {
            assert_eq!(
                output_limits(m),
                OutputLimits {
                    default: d,
                    upper_limit: u
                },
                "{m}"
            );
        }
    }

    #[test]
    fn windows() {
        assert_eq!(
            context_window_for_model("claude-opus-4-6", &none()),
            200_000
        );
        assert_eq!(
            context_window_for_model("claude-opus-4-6[1m]", &none()),
            1_000_000
        );
        let on = Config {
            enable_1m_context: Some(true),
            ..none()
        };
        assert_eq!(
            context_window_for_model("claude-sonnet-4-5", &on),
            1_000_000
        );
        assert_eq!(context_window_for_model("claude-3-haiku", &on), 200_000);
        let fixed = Config {
            context_window: Some(64_000.0),
            ..none()
        };
        assert_eq!(
            context_window_for_model("claude-opus-4-6[1m]", &fixed),
            64_000
        );
    }

    #[test]
    fn worked_example_of_spec_section_4() {
        let m = "claude-opus-4-6";
        assert_eq!(effective_context_window(m, &none()), 180_000);
        assert_eq!(auto_compact_threshold(m, &none()), 167_000);
        assert_eq!(blocking_limit(m, &none()), 177_000);
        let s = token_warning_state(147_000, m, &none());
        assert!(s.is_above_warning_threshold && s.is_above_error_threshold);
        assert!(!s.is_above_auto_compact_threshold && !s.is_at_blocking_limit);
        let s = token_warning_state(146_999, m, &none());
        assert!(!s.is_above_warning_threshold);
        let s = token_warning_state(167_000, m, &none());
        assert!(s.is_above_auto_compact_threshold);
        assert_eq!(s.percent_left, 0);
        assert!(token_warning_state(177_000, m, &none()).is_at_blocking_limit);
        assert_eq!(token_warning_state(0, m, &none()).percent_left, 100);
        assert_eq!(token_warning_state(83_500, m, &none()).percent_left, 50);
        assert_eq!(token_warning_state(500_000, m, &none()).percent_left, 0);
    }

    #[test]
    fn small_output_models_reserve_less() {
        // 3-5-sonnet: 8,192 output → effective 191,808.
        assert_eq!(
            effective_context_window("claude-3-5-sonnet", &none()),
            191_808
        );
    }

    #[test]
    fn overrides() {
        let m = "claude-opus-4-6";
        let pct = Config {
            auto_compact_pct_override: Some(50.0),
            ..none()
        };
        assert_eq!(auto_compact_threshold(m, &pct), 90_000);
        let high = Config {
            auto_compact_pct_override: Some(99.0),
            ..none()
        };
        assert_eq!(auto_compact_threshold(m, &high), 167_000, "can only lower");
        let win = Config {
            auto_compact_window: Some(100_000.0),
            ..none()
        };
        assert_eq!(effective_context_window(m, &win), 80_000);
        let out = Config {
            max_output_tokens: Some(8_000.0),
            ..none()
        };
        assert_eq!(effective_context_window(m, &out), 192_000);
        let capped = Config {
            max_output_tokens: Some(1e9),
            ..none()
        };
        assert_eq!(max_output_tokens_for_model(m, &capped), 128_000);
        let block = Config {
            blocking_limit_override: Some(150_000.0),
            ..none()
        };
        assert!(token_warning_state(150_000, m, &block).is_at_blocking_limit);
    }

    #[test]
    fn threshold_is_effective_window_when_auto_compact_is_off() {
        let off = Config {
            disable_auto_compact: Some(true),
            ..none()
        };
        let s = token_warning_state(160_000, "claude-opus-4-6", &off);
        assert!(
            s.is_above_warning_threshold,
            "warning at 160,000 = 180,000 − 20,000"
        );
        assert!(!s.is_above_auto_compact_threshold);
        assert_eq!(s.percent_left, 11);
    }
}
