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
/// In a summary window too small for [`MAX_OUTPUT_TOKENS_FOR_SUMMARY`] next to this many
/// tokens of request, the summary's reserve shrinks so that the request keeps them (three
/// quarters of a window smaller than 21,846): see `summary::summary_output_reserve`.
pub const SMALL_SUMMARY_WINDOW_INPUT_TOKENS: u64 = 16_384;
/// The least `max_tokens` a summary request asks for, however full its window.
pub const MIN_SUMMARY_OUTPUT_TOKENS: u64 = 1_024;
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

/// A model of another provider (OpenAI, Google) in the model table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelSpec {
    /// The model id without provider prefix or date suffix, e.g. `gpt-4.1-mini`.
    pub id: &'static str,
    /// The context window the provider documents, in tokens.
    pub window: u64,
    /// The largest output the model writes (also its default `max_tokens`).
    pub max_output: u64,
    /// The largest input the API accepts, when lower than the window minus the output (the
    /// GPT-5 family documents a 400,000-token window but refuses more than 272,000 input
    /// tokens).
    pub max_input: Option<u64>,
}

/// A model whose input may fill its window minus its output.
const fn spec(id: &'static str, window: u64, max_output: u64) -> ModelSpec {
    ModelSpec {
        id,
        window,
        max_output,
        max_input: None,
    }
}

/// A GPT-5-family model: a 400,000-token window of which at most 272,000 are input, and
/// 128,000 output tokens.
const fn gpt5(id: &'static str) -> ModelSpec {
    ModelSpec {
        id,
        window: 400_000,
        max_output: 128_000,
        max_input: Some(272_000),
    }
}

/// OpenAI and Gemini models, as their providers document them. An id matches an entry when,
/// once a provider prefix is removed (see [`other_model`]), it is the entry's id, possibly
/// followed by a date or release suffix (`-2025-04-14`, `-preview`, `-latest`, `-exp`, `-001`).
/// Variants with other limits (the `-chat` models, `o1-preview`) are entries of their own;
/// variants not listed (`gpt-4o-audio-preview`, `gpt-5-pro`, image models) are unknown.
pub const OTHER_MODELS: &[ModelSpec] = &[
    // OpenAI GPT-5 family.
    gpt5("gpt-5"),
    gpt5("gpt-5-mini"),
    gpt5("gpt-5-nano"),
    gpt5("gpt-5-codex"),
    spec("gpt-5-chat", 128_000, 16_384),
    gpt5("gpt-5.1"),
    gpt5("gpt-5.1-codex"),
    gpt5("gpt-5.1-codex-mini"),
    gpt5("gpt-5.1-codex-max"),
    spec("gpt-5.1-chat", 128_000, 16_384),
    gpt5("gpt-5.2"),
    spec("gpt-5.2-chat", 128_000, 16_384),
    // OpenAI GPT-4.1 and GPT-4o.
    spec("gpt-4.1", 1_047_576, 32_768),
    spec("gpt-4.1-mini", 1_047_576, 32_768),
    spec("gpt-4.1-nano", 1_047_576, 32_768),
    spec("gpt-4o", 128_000, 16_384),
    spec("gpt-4o-mini", 128_000, 16_384),
    spec("gpt-4o-2024-05-13", 128_000, 4_096),
    // OpenAI o-series reasoning models.
    spec("o1", 200_000, 100_000),
    spec("o1-pro", 200_000, 100_000),
    spec("o1-mini", 128_000, 65_536),
    spec("o1-preview", 128_000, 32_768),
    spec("o3", 200_000, 100_000),
    spec("o3-pro", 200_000, 100_000),
    spec("o3-mini", 200_000, 100_000),
    spec("o4-mini", 200_000, 100_000),
    // Google Gemini (the window is the input token limit).
    spec("gemini-3-pro", 1_048_576, 65_536),
    spec("gemini-3.1-pro", 1_048_576, 65_536),
    spec("gemini-3-flash", 1_048_576, 65_536),
    spec("gemini-2.5-pro", 1_048_576, 65_536),
    spec("gemini-2.5-flash", 1_048_576, 65_536),
    spec("gemini-2.5-flash-lite", 1_048_576, 65_536),
    spec("gemini-2.0-flash", 1_048_576, 8_192),
    spec("gemini-2.0-flash-lite", 1_048_576, 8_192),
];

/// Whether `rest`, what follows a table id in a model id, is a date or release suffix:
/// nothing, or `-` followed by `-`-separated numbers, `preview`, `latest` or `exp`.
fn is_release_suffix(rest: &str) -> bool {
    match rest.strip_prefix('-') {
        None => rest.is_empty(),
        Some(tail) => tail.split('-').all(|t| {
            (!t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                || matches!(t, "preview" | "latest" | "exp")
        }),
    }
}

/// The entry of [`OTHER_MODELS`] a bare id (no provider prefix) names, the longest that fits.
fn other_model_by_id(id: &str) -> Option<&'static ModelSpec> {
    OTHER_MODELS
        .iter()
        .filter(|s| id.strip_prefix(s.id).is_some_and(is_release_suffix))
        .max_by_key(|s| s.id.len())
}

/// The OpenAI or Gemini model `model` names, if it is in the table. Case is ignored, and so
/// are surrounding spaces, a `[1m]` suffix, a path (`openai/gpt-4o`, `models/gemini-2.5-flash`,
/// a Vertex AI resource name), a version after `@`, and a LangChain-style `provider:` prefix
/// (`openai:gpt-4.1`) or a router's `:variant` suffix (`o3-mini:nitro`). Ids that name a Claude
/// model never match.
pub fn other_model(model: &str) -> Option<&'static ModelSpec> {
    let m = model.trim().to_ascii_lowercase();
    if m.contains("claude") {
        return None;
    }
    let m = m.strip_suffix("[1m]").unwrap_or(&m);
    let last = m.rsplit('/').next().unwrap_or(m);
    let last = last.split('@').next().unwrap_or(last).trim();
    match last.split_once(':') {
        Some((before, after)) => other_model_by_id(after).or_else(|| other_model_by_id(before)),
        None => other_model_by_id(last),
    }
}

/// The Claude entry of the output table `model` names (a substring of its id).
fn claude_limits(model: &str) -> Option<OutputLimits> {
    let m = model.to_ascii_lowercase();
    OUTPUT_TABLE
        .iter()
        .find(|(key, _, _)| m.contains(key))
        .map(|&(_, default, upper_limit)| OutputLimits {
            default,
            upper_limit,
        })
}

/// What the thresholds read from a model id, worked out once per id: each threshold asks
/// several of these, and a per-turn check asks on every call with the same id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ModelFacts {
    /// [`claude_limits`].
    claude: Option<OutputLimits>,
    /// [`other_model`].
    other: Option<&'static ModelSpec>,
    /// [`has_1m_suffix`].
    one_m_suffix: bool,
    /// Whether the id names a model that supports the 1M context ([`ONE_MILLION_CAPABLE`]).
    one_m_capable: bool,
}

impl ModelFacts {
    fn of(model: &str) -> ModelFacts {
        let m = model.to_ascii_lowercase();
        ModelFacts {
            claude: claude_limits(model),
            other: other_model(model),
            one_m_suffix: has_1m_suffix(model),
            one_m_capable: ONE_MILLION_CAPABLE.iter().any(|k| m.contains(k)),
        }
    }
}

/// [`ModelFacts::of`] `model`, kept for the last id asked about (the facts are a function of
/// the id alone).
fn model_facts(model: &str) -> ModelFacts {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(String, ModelFacts)>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with(|last| {
        if let Some((id, facts)) = &*last.borrow() {
            if id == model {
                return *facts;
            }
        }
        let facts = ModelFacts::of(model);
        *last.borrow_mut() = Some((model.to_string(), facts));
        facts
    })
}

/// Output limits of `model` from the table (Claude models, then OpenAI and Gemini models,
/// whose default is their maximum); unknown models get 32K/32K.
pub fn output_limits(model: &str) -> OutputLimits {
    output_limits_of(&model_facts(model))
}

fn output_limits_of(facts: &ModelFacts) -> OutputLimits {
    facts
        .claude
        .or_else(|| {
            facts.other.map(|spec| OutputLimits {
                default: spec.max_output,
                upper_limit: spec.max_output,
            })
        })
        .unwrap_or(OutputLimits {
            default: DEFAULT_MAX_OUTPUT_TOKENS,
            upper_limit: DEFAULT_MAX_OUTPUT_TOKENS,
        })
}

/// Whether the model id asks for the 1M context (`[1m]` suffix).
pub fn has_1m_suffix(model: &str) -> bool {
    model.trim_end().to_ascii_lowercase().ends_with("[1m]")
}

/// Where a context window comes from (`contextWindowSource` in JS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ContextWindowSource {
    /// The configuration: `config.contextWindow`, or `config.enable1mContext` for a model
    /// that supports the 1M context.
    Config,
    /// The model: the model table, or the `[1m]` suffix of its id.
    Model,
    /// Neither: the model is not in the table and gets [`DEFAULT_CONTEXT_WINDOW`].
    Default,
}

/// A model's context window and where it comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextWindow {
    /// The window in tokens (`getContextWindowForModel`).
    pub tokens: u64,
    /// Where it comes from.
    pub source: ContextWindowSource,
    /// The model's input limit when it is lower than the window minus the output (GPT-5);
    /// never set when the window comes from the configuration.
    pub max_input: Option<u64>,
}

impl ContextWindow {
    /// The part of the window a request that reserves `output` tokens for the answer can use:
    /// the window, but no more than the input limit plus `output`, so that the input stays
    /// within the model's input limit.
    pub fn for_request(&self, output: u64) -> u64 {
        match self.max_input {
            Some(max_input) => self.tokens.min(max_input.saturating_add(output)),
            None => self.tokens,
        }
    }
}

/// The context window of `model` and its source: `config.contextWindow` always wins; then
/// 1M with the `[1m]` suffix, or when `config.enable1mContext` is set for a capable model;
/// then the model table (OpenAI and Gemini models, 200K for the Claude models of the output
/// table); else the default 200K, reported as such.
pub fn context_window(model: &str, config: &Config) -> ContextWindow {
    let window = |tokens, source| ContextWindow {
        tokens,
        source,
        max_input: None,
    };
    if let Some(w) = config.context_window {
        return window(w as u64, ContextWindowSource::Config);
    }
    let facts = model_facts(model);
    if facts.one_m_suffix {
        return window(ONE_MILLION_CONTEXT_WINDOW, ContextWindowSource::Model);
    }
    if config.enable_1m_context == Some(true) && facts.one_m_capable {
        return window(ONE_MILLION_CONTEXT_WINDOW, ContextWindowSource::Config);
    }
    if let Some(spec) = facts.other {
        return ContextWindow {
            tokens: spec.window,
            source: ContextWindowSource::Model,
            max_input: spec.max_input,
        };
    }
    if facts.claude.is_some() {
        return window(DEFAULT_CONTEXT_WINDOW, ContextWindowSource::Model);
    }
    window(DEFAULT_CONTEXT_WINDOW, ContextWindowSource::Default)
}

/// `getContextWindowForModel`: the window of [`context_window`], in tokens.
pub fn context_window_for_model(model: &str, config: &Config) -> u64 {
    context_window(model, config).tokens
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
///
/// For a model whose input limit is lower than its window minus that reserve (GPT-5: 272,000
/// input tokens in a 400,000-token window), the input limit.
pub fn effective_context_window(model: &str, config: &Config) -> u64 {
    let reserve = max_output_tokens_for_model(model, config).min(MAX_OUTPUT_TOKENS_FOR_SUMMARY);
    let mut window = context_window(model, config).for_request(reserve);
    if let Some(cap) = window_cap(model, config) {
        window = window.min(cap);
    }
    window.saturating_sub(reserve)
}

/// The cap on the window auto-compaction works in: `config.autoCompactWindow`, else the
/// `CLAUDE_CODE_AUTO_COMPACT_WINDOW` default when it leaves `model` room ([`check_room`]).
/// One that does not is ignored, as an unparseable value is (SPEC §5: the variables give
/// defaults; the caller never set it, so it must not fail the caller's calls).
fn window_cap(model: &str, config: &Config) -> Option<u64> {
    if let Some(cap) = config.auto_compact_window {
        return Some(cap as u64);
    }
    let env = config.env_auto_compact_window? as u64;
    let reserve = max_output_tokens_for_model(model, config).min(MAX_OUTPUT_TOKENS_FOR_SUMMARY);
    let buffer = if config.is_auto_compact_enabled() {
        AUTOCOMPACT_BUFFER_TOKENS
    } else {
        0
    };
    (env > reserve + buffer).then_some(env)
}

/// Checks that `config` leaves `model` room to work in, so that no threshold is 0 (a
/// conversation of any size, even empty, would be at it: every turn would compact, each
/// compaction bound to fail):
///
/// - the window a request may fill (the context window, capped by `autoCompactWindow` and
///   the model's input limit) must be larger than the output reserve, min(max output tokens,
///   20,000);
/// - with automatic compaction on, the effective window (that window minus the reserve) must
///   be larger than the auto-compact buffer of 13,000 tokens.
///
/// `INVALID_CONFIG` otherwise, naming the numbers and what to change. The SPEC's formulas
/// stand for every window that passes; small windows work with a smaller
/// `config.maxOutputTokens` (a smaller reserve) or with automatic compaction off.
pub fn check_room(model: &str, config: &Config) -> crate::model::error::Result<()> {
    use crate::model::error::Error;
    let max_output = max_output_tokens_for_model(model, config);
    let reserve = max_output.min(MAX_OUTPUT_TOKENS_FOR_SUMMARY);
    let full = context_window(model, config);
    let mut window = full.for_request(reserve);
    let mut from = match full.source {
        ContextWindowSource::Config if config.context_window.is_some() => "config.contextWindow",
        _ => "the model's context window",
    };
    if window < full.tokens {
        from = "the model's input limit plus the output reserve";
    }
    if let Some(cap) = window_cap(model, config) {
        if cap < window {
            window = cap;
            from = "config.autoCompactWindow";
        }
    }
    let reserve_words = format!(
        "the output reserve of {reserve} tokens (the smaller of the max output tokens, {max_output}, and {MAX_OUTPUT_TOKENS_FOR_SUMMARY})"
    );
    if window <= reserve {
        return Err(Error::invalid_config(format!(
            "the window of {window} tokens ({from}) must be larger than {reserve_words}: \
             nothing would be left for the conversation; give a larger window or a smaller \
             config.maxOutputTokens"
        )));
    }
    let effective = window - reserve;
    if config.is_auto_compact_enabled() && effective <= AUTOCOMPACT_BUFFER_TOKENS {
        return Err(Error::invalid_config(format!(
            "the effective window of {effective} tokens ({window} from {from}, less \
             {reserve_words}) must be larger than the auto-compact buffer of \
             {AUTOCOMPACT_BUFFER_TOKENS} tokens, or every turn would compact; give a larger \
             window, a smaller config.maxOutputTokens, or turn automatic compaction off \
             (config.autoCompactEnabled: false)"
        )));
    }
    Ok(())
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
    /// The context window the thresholds derive from (`getContextWindowForModel`).
    pub context_window: u64,
    /// Where that window comes from: `default` means the model is not in the table and the
    /// 200,000-token default was assumed.
    pub context_window_source: ContextWindowSource,
}

/// `calculateTokenWarningState` (SPEC §4).
pub fn token_warning_state(token_usage: u64, model: &str, config: &Config) -> TokenWarningState {
    let auto = config.is_auto_compact_enabled();
    let window = context_window(model, config);
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
        context_window: window.tokens,
        context_window_source: window.source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The facts kept for the last model id are the facts of the id asked about, whatever
    /// was asked before (ids alternate, repeat, differ only in case or suffix).
    #[test]
    fn kept_model_facts_are_the_facts_of_the_id() {
        let ids = [
            "claude-opus-4-6",
            "claude-opus-4-6",
            "Claude-Opus-4-6",
            "claude-opus-4-6[1m]",
            "gpt-5",
            "openai/gpt-5-mini",
            "gpt-5",
            "",
            "claude-sonnet-4-5 ",
            "gemini-2.5-pro",
            "claude-3-haiku",
            "claude-opus-4-6",
        ];
        for _ in 0..2 {
            for id in ids {
                assert_eq!(model_facts(id), ModelFacts::of(id), "{id:?}");
            }
        }
    }

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

    /// A window that leaves nothing after the output reserve, or (with automatic compaction
    /// on) nothing above the auto-compact buffer, is a coded error naming the numbers; the
    /// smallest windows that leave room pass, with a threshold above 0.
    #[test]
    fn a_window_must_leave_room_after_the_reserve_and_the_buffer() {
        let cfg = |window: f64, more: Config| Config {
            context_window: Some(window),
            ..more
        };
        let sonnet = "claude-sonnet-4-5";
        for (window, words) in [
            (1.0, "the window of 1 tokens (config.contextWindow) must be larger than the output reserve of 20000"),
            (20_000.0, "the window of 20000 tokens (config.contextWindow)"),
            (20_001.0, "the effective window of 1 tokens"),
            (33_000.0, "the effective window of 13000 tokens"),
        ] {
            let e = check_room(sonnet, &cfg(window, Config::default())).unwrap_err();
            assert_eq!(e.code, crate::model::error::ErrorCode::InvalidConfig);
            assert!(e.message.contains(words), "{window}: {}", e.message);
        }
        assert!(check_room(sonnet, &cfg(33_001.0, Config::default())).is_ok());
        assert_eq!(
            auto_compact_threshold(sonnet, &cfg(33_001.0, Config::default())),
            1
        );
        // A smaller reserve, or automatic compaction off, makes a small window usable.
        let small_output = Config {
            max_output_tokens: Some(1_000.0),
            ..Config::default()
        };
        assert!(check_room(sonnet, &cfg(20_000.0, small_output.clone())).is_ok());
        assert_eq!(
            auto_compact_threshold(sonnet, &cfg(20_000.0, small_output)),
            6_000
        );
        let manual = Config {
            auto_compact_enabled: Some(false),
            ..Config::default()
        };
        assert!(check_room(sonnet, &cfg(25_000.0, manual.clone())).is_ok());
        assert!(
            check_room(sonnet, &cfg(20_000.0, manual)).is_err(),
            "no room at all"
        );
        // autoCompactWindow caps the window, and is named when it is what is too small.
        let capped = Config {
            auto_compact_window: Some(15_000.0),
            ..Config::default()
        };
        let e = check_room(sonnet, &capped).unwrap_err();
        assert!(
            e.message.contains("(config.autoCompactWindow)"),
            "{}",
            e.message
        );
        // A CLAUDE_CODE_AUTO_COMPACT_WINDOW too small for the model is ignored, never an
        // error naming a config field the caller did not set; one that leaves room caps.
        let env =
            |w: &str| Config::from_env(|k| (k == "CLAUDE_CODE_AUTO_COMPACT_WINDOW").then_some(w));
        assert!(check_room(sonnet, &env("15000")).is_ok());
        assert_eq!(effective_context_window(sonnet, &env("15000")), 180_000);
        assert_eq!(effective_context_window(sonnet, &env("100000")), 80_000);
        let explicit = Config {
            auto_compact_window: Some(120_000.0),
            ..Config::default()
        };
        assert_eq!(
            effective_context_window(sonnet, &explicit.over(&env("15000"))),
            100_000
        );
        // The same value fits a model with a smaller output reserve (claude-3-haiku: 4,096).
        assert_eq!(
            effective_context_window("claude-3-haiku", &env("30000")),
            30_000 - 4_096
        );
        // The models of the table all leave room.
        for model in [
            "claude-3-haiku",
            "claude-opus-4-6",
            "gpt-5",
            "gpt-4o",
            "my-local-model",
        ] {
            assert!(check_room(model, &Config::default()).is_ok(), "{model}");
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

    /// (id, window, max output, effective window) for every family of the table.
    const OTHER_FAMILIES: &[(&str, u64, u64, u64)] = &[
        ("gpt-5", 400_000, 128_000, 272_000),
        ("gpt-5-mini", 400_000, 128_000, 272_000),
        ("gpt-5-nano", 400_000, 128_000, 272_000),
        ("gpt-5-codex", 400_000, 128_000, 272_000),
        ("gpt-5-chat-latest", 128_000, 16_384, 111_616),
        ("gpt-5.1", 400_000, 128_000, 272_000),
        ("gpt-5.1-codex-max", 400_000, 128_000, 272_000),
        ("gpt-5.1-chat-latest", 128_000, 16_384, 111_616),
        ("gpt-5.2", 400_000, 128_000, 272_000),
        ("gpt-5.2-chat-latest", 128_000, 16_384, 111_616),
        ("gpt-4.1", 1_047_576, 32_768, 1_027_576),
        ("gpt-4.1-mini", 1_047_576, 32_768, 1_027_576),
        ("gpt-4.1-nano", 1_047_576, 32_768, 1_027_576),
        ("gpt-4o", 128_000, 16_384, 111_616),
        ("gpt-4o-mini", 128_000, 16_384, 111_616),
        ("gpt-4o-2024-05-13", 128_000, 4_096, 123_904),
        ("o1", 200_000, 100_000, 180_000),
        ("o1-mini", 128_000, 65_536, 108_000),
        ("o1-preview", 128_000, 32_768, 108_000),
        ("o3", 200_000, 100_000, 180_000),
        ("o3-pro", 200_000, 100_000, 180_000),
        ("o3-mini", 200_000, 100_000, 180_000),
        ("o4-mini", 200_000, 100_000, 180_000),
        ("gemini-3-pro-preview", 1_048_576, 65_536, 1_028_576),
        ("gemini-3.1-pro-preview", 1_048_576, 65_536, 1_028_576),
        ("gemini-3-flash-preview", 1_048_576, 65_536, 1_028_576),
        ("gemini-2.5-pro", 1_048_576, 65_536, 1_028_576),
        ("gemini-2.5-flash", 1_048_576, 65_536, 1_028_576),
        ("gemini-2.5-flash-lite", 1_048_576, 65_536, 1_028_576),
        ("gemini-2.0-flash", 1_048_576, 8_192, 1_040_384),
        ("gemini-2.0-flash-lite", 1_048_576, 8_192, 1_040_384),
    ];

    #[test]
    fn openai_and_gemini_models() {
        for &(m, window, out, effective) in OTHER_FAMILIES {
            let w = context_window(m, &none());
            assert_eq!(w.tokens, window, "{m}");
            assert_eq!(w.source, ContextWindowSource::Model, "{m}");
            assert_eq!(context_window_for_model(m, &none()), window, "{m}");
            assert_eq!(
                output_limits(m),
                OutputLimits {
                    default: out,
                    upper_limit: out
                },
                "{m}"
            );
            assert_eq!(effective_context_window(m, &none()), effective, "{m}");
        }
    }

    #[test]
    fn provider_prefixes_case_and_date_suffixes_are_ignored() {
        let same = [
            ("gpt-4o", "openai/gpt-4o"),
            ("gpt-4o", "openai:gpt-4o"),
            ("gpt-4o", "azure_openai:gpt-4o-2024-08-06"),
            ("gpt-4o", " GPT-4o "),
            ("gpt-4.1", "openai:gpt-4.1"),
            ("gpt-4.1", "gpt-4.1-2025-04-14"),
            ("gpt-4.1-mini", "openai/gpt-4.1-mini-2025-04-14"),
            ("gpt-5", "gpt-5-2025-08-07"),
            ("gpt-5-mini", "openai/gpt-5-mini-2025-08-07"),
            ("gpt-5.2", "gpt-5.2-2025-12-11"),
            ("gpt-5-chat", "gpt-5-chat-latest"),
            ("o3", "o3-2025-04-16"),
            ("o3-mini", "openai/o3-mini:nitro"),
            ("o4-mini", "openai:o4-mini-2025-04-16"),
            ("gemini-2.5-pro", "google/gemini-2.5-pro"),
            ("gemini-2.5-pro", "google-genai:gemini-2.5-pro"),
            ("gemini-2.5-pro", "gemini-2.5-pro-preview-06-05"),
            ("gemini-2.5-pro", "gemini-2.5-pro-exp-03-25"),
            (
                "gemini-2.5-pro",
                "projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro",
            ),
            ("gemini-2.5-flash", "models/gemini-2.5-flash"),
            ("gemini-2.5-flash", "gemini-2.5-flash-preview-09-2025"),
            (
                "gemini-2.5-flash-lite",
                "models/gemini-2.5-flash-lite-preview-06-17",
            ),
            ("gemini-2.0-flash", "gemini-2.0-flash-001"),
            ("gemini-2.0-flash", "gemini-2.0-flash@001"),
            ("gemini-3-pro", "google_genai:gemini-3-pro-preview"),
        ];
        for (id, variant) in same {
            assert_eq!(
                other_model(variant).map(|s| s.id),
                Some(id),
                "{variant} names {id}"
            );
            assert_eq!(output_limits(variant), output_limits(id), "{variant}");
            assert_eq!(
                context_window(variant, &none()),
                context_window(id, &none()),
                "{variant}"
            );
        }
    }

    #[test]
    fn unlisted_variants_and_other_models_get_the_default_and_say_so() {
        for m in [
            "gpt-4o-audio-preview",
            "gpt-4o-search-preview",
            "gpt-5-pro",
            "gpt-5.3",
            "gpt-4",
            "gpt-3.5-turbo",
            "o3-deep-research",
            "gemini-2.5-flash-image",
            "gemini-2.5-flash-preview-tts",
            "gemini-1.5-pro",
            "gpt-oss:20b",
            "o33",
            "no3",
            "llama-3.1-70b",
            "gpt-something",
            "",
        ] {
            assert_eq!(other_model(m), None, "{m}");
            let w = context_window(m, &none());
            assert_eq!(w.tokens, DEFAULT_CONTEXT_WINDOW, "{m}");
            assert_eq!(w.source, ContextWindowSource::Default, "{m}");
            assert_eq!(
                output_limits(m).upper_limit,
                DEFAULT_MAX_OUTPUT_TOKENS,
                "{m}"
            );
        }
    }

    #[test]
    fn claude_ids_never_reach_the_other_table() {
        for m in [
            "claude-opus-4-6",
            "anthropic/claude-sonnet-4-5",
            "claude-3-5-sonnet-20241022",
            "claude-o3",
            "claude-gpt-4o",
        ] {
            assert_eq!(other_model(m), None, "{m}");
        }
        // A Claude model of the table is known; another Claude id gets the default, said so.
        assert_eq!(
            context_window("claude-haiku-4-5", &none()).source,
            ContextWindowSource::Model
        );
        let unknown = context_window("claude-2.1", &none());
        assert_eq!(unknown.tokens, DEFAULT_CONTEXT_WINDOW);
        assert_eq!(unknown.source, ContextWindowSource::Default);
    }

    #[test]
    fn window_sources() {
        let src = |m: &str, c: &Config| context_window(m, c).source;
        assert_eq!(src("claude-opus-4-6", &none()), ContextWindowSource::Model);
        assert_eq!(
            src("claude-opus-4-6[1m]", &none()),
            ContextWindowSource::Model
        );
        assert_eq!(src("my-model[1m]", &none()), ContextWindowSource::Model);
        let on = Config {
            enable_1m_context: Some(true),
            ..none()
        };
        assert_eq!(src("claude-sonnet-4-5", &on), ContextWindowSource::Config);
        assert_eq!(src("claude-3-haiku", &on), ContextWindowSource::Model);
        let fixed = Config {
            context_window: Some(64_000.0),
            ..none()
        };
        for m in ["my-model", "gpt-5", "claude-opus-4-6"] {
            let w = context_window(m, &fixed);
            assert_eq!((w.tokens, w.source), (64_000, ContextWindowSource::Config));
            assert_eq!(w.max_input, None, "the configured window is taken as given");
        }
        assert_eq!(effective_context_window("gpt-5", &fixed), 44_000);
        let s = token_warning_state(0, "my-model", &none());
        assert_eq!(s.context_window, DEFAULT_CONTEXT_WINDOW);
        assert_eq!(s.context_window_source, ContextWindowSource::Default);
        let s = token_warning_state(0, "gpt-4.1", &none());
        assert_eq!(s.context_window, 1_047_576);
        assert_eq!(s.context_window_source, ContextWindowSource::Model);
        assert_eq!(
            serde_json::to_value(ContextWindowSource::Default).unwrap(),
            "default"
        );
    }

    #[test]
    fn gpt5_thresholds_stay_within_its_input_limit() {
        let m = "gpt-5";
        assert_eq!(effective_context_window(m, &none()), 272_000);
        assert_eq!(auto_compact_threshold(m, &none()), 259_000);
        assert_eq!(blocking_limit(m, &none()), 269_000);
        assert!(token_warning_state(259_000, m, &none()).is_above_auto_compact_threshold);
        let capped = Config {
            auto_compact_window: Some(200_000.0),
            ..none()
        };
        assert_eq!(effective_context_window(m, &capped), 180_000);
        let w = context_window(m, &none());
        assert_eq!(w.for_request(20_000), 292_000);
        assert_eq!(w.for_request(128_000), 400_000);
    }

    #[test]
    fn claude_results_are_unchanged_by_the_other_table() {
        let claude = [
            "claude-opus-4-6",
            "claude-sonnet-4-6",
            "claude-opus-4-5-20251101",
            "claude-sonnet-4-5-20250929",
            "claude-haiku-4-5",
            "claude-opus-4-1-20250805",
            "claude-3-7-sonnet-20250219",
            "claude-3-5-haiku-20241022",
            "claude-3-haiku-20240307",
            "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        ];
        for m in claude {
            assert_eq!(context_window_for_model(m, &none()), 200_000, "{m}");
            let out = output_limits(m).default.min(MAX_OUTPUT_TOKENS_FOR_SUMMARY);
            assert_eq!(effective_context_window(m, &none()), 200_000 - out, "{m}");
        }
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
