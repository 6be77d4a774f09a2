//! Configuration shared by every entry point, and its environment-variable defaults.
//!
//! In Node the bindings read `DISABLE_COMPACT`, `DISABLE_AUTO_COMPACT`,
//! `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE` and `CLAUDE_CODE_AUTO_COMPACT_WINDOW` into a default
//! [`Config`]; a config passed explicitly wins field by field ([`Config::over`]).

use crate::model::error::{Error, Result};
use crate::model::names::likely_meant;
use crate::model::number::Plain;

/// The smallest `config.summaryContextWindow`: a quarter of it is the least room a summary
/// gets (1,024 tokens), and the rest holds the summary request's own prompt (about 600
/// tokens) with some conversation. A smaller window could never hold a usable request.
pub const MIN_SUMMARY_CONTEXT_WINDOW: f64 = 4_096.0;

/// The largest token size a config field takes (a window, an output cap): 10^12 tokens, far
/// above any model's, and small enough that every sum of them stays an exact integer.
pub const MAX_TOKENS: f64 = 1e12;

/// A config field's value as the caller set it (see [`Config::read`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Given {
    /// Not set, `undefined` or `null`.
    Absent,
    /// A number.
    Number(f64),
    /// A boolean.
    Bool(bool),
    /// Anything else, described (`"a string"`, `"an object"`, …).
    Other(&'static str),
}

impl Given {
    /// What the value is, for error messages.
    fn describe(self) -> String {
        match self {
            Given::Absent => "nothing".into(),
            Given::Number(n) => format!("the number {}", Plain(n)),
            Given::Bool(b) => format!("{b}"),
            Given::Other(what) => what.into(),
        }
    }
}

/// Options that change windows, thresholds and enablement. Every field is optional; absent
/// fields take the SPEC defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    /// Overrides the model's context window.
    pub context_window: Option<f64>,
    /// Overrides the model's default max output tokens (capped at the model's upper limit).
    pub max_output_tokens: Option<f64>,
    /// Enables the 1M-token context for models that support it.
    pub enable_1m_context: Option<bool>,
    /// Caps the window used for auto-compaction (`CLAUDE_CODE_AUTO_COMPACT_WINDOW`).
    pub auto_compact_window: Option<f64>,
    /// Percent (1–100) of the effective window at which to auto-compact; can only lower the
    /// threshold (`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`).
    pub auto_compact_pct_override: Option<f64>,
    /// Overrides the blocking limit (default: effective window − 3,000).
    pub blocking_limit_override: Option<f64>,
    /// Disables all compaction, manual included (`DISABLE_COMPACT`).
    pub disable_compact: Option<bool>,
    /// Disables automatic compaction; manual stays allowed (`DISABLE_AUTO_COMPACT`).
    pub disable_auto_compact: Option<bool>,
    /// The user setting for auto-compaction (default true).
    pub auto_compact_enabled: Option<bool>,
    /// Reactive-only mode: no proactive auto-compaction, compact only when the API rejects.
    pub reactive_only: Option<bool>,
    /// Context-collapse mode: another mechanism manages the context.
    pub context_collapse: Option<bool>,
    /// Context window of the model that writes summaries, when smaller than the main one.
    pub summary_context_window: Option<f64>,
    /// The `CLAUDE_CODE_AUTO_COMPACT_WINDOW` default, kept apart from `auto_compact_window`:
    /// it caps the window only where it leaves the model room (the output reserve and the
    /// auto-compact buffer; `measure::thresholds::window_cap`), and is ignored elsewhere, as
    /// any unusable environment value is, instead of failing calls over a setting the
    /// caller never passed.
    pub env_auto_compact_window: Option<f64>,
}

impl Config {
    /// `isAutoCompactEnabled`: false with `disableCompact` or `disableAutoCompact`, else the
    /// `autoCompactEnabled` setting (default true).
    pub fn is_auto_compact_enabled(&self) -> bool {
        if self.disable_compact == Some(true) || self.disable_auto_compact == Some(true) {
            return false;
        }
        self.auto_compact_enabled.unwrap_or(true)
    }

    /// The JS names of the fields, for checking the keys of a config object.
    pub const FIELDS: &'static [&'static str] = &[
        "contextWindow",
        "maxOutputTokens",
        "enable1mContext",
        "autoCompactWindow",
        "autoCompactPctOverride",
        "blockingLimitOverride",
        "disableCompact",
        "disableAutoCompact",
        "autoCompactEnabled",
        "reactiveOnly",
        "contextCollapse",
        "summaryContextWindow",
    ];

    /// Rejects a key that is not a config field, suggesting the field it probably meant
    /// (a misspelt `disableAutocompact` must not silently leave auto-compaction on).
    pub fn check_key(key: &str) -> Result<()> {
        if Self::FIELDS.contains(&key) {
            return Ok(());
        }
        let hint = likely_meant(key, Self::FIELDS)
            .map(|f| format!(" (did you mean `{f}`?)"))
            .unwrap_or_default();
        Err(Error::invalid_config(format!(
            "config.{key} is not a known option{hint}; known: {}",
            Self::FIELDS.join(", ")
        )))
    }

    /// Reads a config object field by field: `field` gives the value the caller set for
    /// each JS name of [`Config::FIELDS`] (its keys checked first with [`Config::check_key`]).
    /// A field of the wrong type is `INVALID_CONFIG` naming it; the ranges are checked too
    /// ([`Config::validate`]).
    pub fn read(field: impl Fn(&str) -> Given) -> Result<Config> {
        let wrong = |key: &str, expected: &str, got: Given| {
            Error::invalid_config(format!(
                "config.{key} must be {expected}, got {}",
                got.describe()
            ))
        };
        let number = |key: &str| match field(key) {
            Given::Absent => Ok(None),
            Given::Number(n) => Ok(Some(n)),
            got => Err(wrong(key, "a number", got)),
        };
        let flag = |key: &str| match field(key) {
            Given::Absent => Ok(None),
            Given::Bool(b) => Ok(Some(b)),
            got => Err(wrong(key, "a boolean", got)),
        };
        let c = Config {
            context_window: number("contextWindow")?,
            max_output_tokens: number("maxOutputTokens")?,
            enable_1m_context: flag("enable1mContext")?,
            auto_compact_window: number("autoCompactWindow")?,
            auto_compact_pct_override: number("autoCompactPctOverride")?,
            blocking_limit_override: number("blockingLimitOverride")?,
            disable_compact: flag("disableCompact")?,
            disable_auto_compact: flag("disableAutoCompact")?,
            auto_compact_enabled: flag("autoCompactEnabled")?,
            reactive_only: flag("reactiveOnly")?,
            context_collapse: flag("contextCollapse")?,
            summary_context_window: number("summaryContextWindow")?,
            env_auto_compact_window: None,
        };
        c.validate()?;
        Ok(c)
    }

    /// `self` with every absent field taken from `defaults`.
    pub fn over(&self, defaults: &Config) -> Config {
        macro_rules! pick {
            ($($f:ident),*) => { Config { $($f: self.$f.or(defaults.$f)),* } };
        }
        pick!(
            context_window,
            max_output_tokens,
            enable_1m_context,
            auto_compact_window,
            auto_compact_pct_override,
            blocking_limit_override,
            disable_compact,
            disable_auto_compact,
            auto_compact_enabled,
            reactive_only,
            context_collapse,
            summary_context_window,
            env_auto_compact_window
        )
    }

    /// Checks that `summaryContextWindow`, when given, is at least
    /// [`MIN_SUMMARY_CONTEXT_WINDOW`]: called where a summary is asked for, so that counting and
    /// thresholds, which never use it, work whatever it is.
    pub fn check_summary_window(&self) -> Result<()> {
        match self.summary_context_window {
            Some(w) if w < MIN_SUMMARY_CONTEXT_WINDOW => Err(Error::invalid_config(format!(
                "the window of {} tokens (config.summaryContextWindow) is too small for a \
                 summary request: it must be at least {} tokens, \
                 for the request's prompt (about 600 tokens), a summary of at least 1024 \
                 tokens and some conversation; give the summary model's real window",
                Plain(w),
                Plain(MIN_SUMMARY_CONTEXT_WINDOW)
            ))),
            _ => Ok(()),
        }
    }

    /// Checks ranges: token sizes finite, at least 1 and at most [`MAX_TOKENS`] (a fraction below 1 would be read as a
    /// window of 0 tokens), the percent within 1–100 (the summary window's least size is checked
    /// where a summary is asked for: [`Config::check_summary_window`]). Whether a window leaves room for the
    /// output reserve depends on the model too (`measure::thresholds::check_room`).
    pub fn validate(&self) -> Result<()> {
        let sizes = [
            ("contextWindow", self.context_window),
            ("maxOutputTokens", self.max_output_tokens),
            ("autoCompactWindow", self.auto_compact_window),
            ("blockingLimitOverride", self.blocking_limit_override),
            ("summaryContextWindow", self.summary_context_window),
        ];
        for (name, v) in sizes {
            if let Some(v) = v {
                let got = crate::model::number::js_text(v);
                if v > MAX_TOKENS {
                    return Err(Error::invalid_config(format!(
                        "config.{name} must be at most 1,000,000,000,000 tokens, got {got}"
                    )));
                }
                if !(1.0..=MAX_TOKENS).contains(&v) {
                    return Err(Error::invalid_config(format!(
                        "config.{name} must be a positive number of tokens (at least 1), got {got}"
                    )));
                }
            }
        }
        if let Some(p) = self.auto_compact_pct_override {
            if !p.is_finite() || !(1.0..=100.0).contains(&p) {
                return Err(Error::invalid_config(format!(
                    "config.autoCompactPctOverride must be a percent between 1 and 100, got {}",
                    Plain(p)
                )));
            }
        }
        Ok(())
    }

    /// Defaults read from environment variables (name → value). Unparseable or out-of-range
    /// values are ignored, as a shell user would expect from a mistyped variable.
    pub fn from_env<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Config {
        let truthy = |name: &str| {
            get(name).map(|v| {
                let v = v.trim().to_ascii_lowercase();
                matches!(v.as_str(), "1" | "true" | "yes" | "on")
            })
        };
        let number = |name: &str| get(name).and_then(|v| crate::model::number::parse_f64(v.trim()));
        let cfg = Config {
            disable_compact: truthy("DISABLE_COMPACT").filter(|b| *b),
            disable_auto_compact: truthy("DISABLE_AUTO_COMPACT").filter(|b| *b),
            auto_compact_pct_override: number("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE")
                .filter(|p| (1.0..=100.0).contains(p)),
            env_auto_compact_window: number("CLAUDE_CODE_AUTO_COMPACT_WINDOW")
                .filter(|w| w.is_finite() && (1.0..=MAX_TOKENS).contains(w)),
            ..Config::default()
        };
        debug_assert!(cfg.validate().is_ok());
        cfg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enablement() {
        assert!(Config::default().is_auto_compact_enabled());
        for cfg in [
            Config {
                disable_compact: Some(true),
                ..Default::default()
            },
            Config {
                disable_auto_compact: Some(true),
                ..Default::default()
            },
            Config {
                auto_compact_enabled: Some(false),
                ..Default::default()
            },
        ] {
            assert!(!cfg.is_auto_compact_enabled());
        }
    }

    #[test]
    fn explicit_beats_defaults() {
        let env = Config {
            disable_auto_compact: Some(true),
            auto_compact_window: Some(100_000.0),
            ..Default::default()
        };
        let explicit = Config {
            disable_auto_compact: Some(false),
            ..Default::default()
        };
        let merged = explicit.over(&env);
        assert_eq!(merged.disable_auto_compact, Some(false));
        assert_eq!(merged.auto_compact_window, Some(100_000.0));
    }

    #[test]
    fn env_parsing() {
        let vars = [
            ("DISABLE_AUTO_COMPACT", "1"),
            ("CLAUDE_AUTOCOMPACT_PCT_OVERRIDE", "50"),
            ("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "nonsense"),
        ];
        let cfg = Config::from_env(|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| *v));
        assert_eq!(cfg.disable_auto_compact, Some(true));
        assert_eq!(cfg.disable_compact, None);
        assert_eq!(cfg.auto_compact_pct_override, Some(50.0));
        assert_eq!(cfg.auto_compact_window, None);
    }

    #[test]
    fn unknown_keys_are_rejected_with_a_hint() {
        assert!(Config::check_key("disableAutoCompact").is_ok());
        let e = Config::check_key("disableAutocompact").unwrap_err();
        assert!(
            e.message.contains("did you mean `disableAutoCompact`"),
            "{}",
            e.message
        );
        assert_eq!(e.code, crate::model::error::ErrorCode::InvalidConfig);
        let e = Config::check_key("contextWindw").unwrap_err();
        assert!(
            e.message.contains("did you mean `contextWindow`"),
            "{}",
            e.message
        );
        let e = Config::check_key("colour").unwrap_err();
        assert!(!e.message.contains("did you mean"), "{}", e.message);
        assert!(e.message.contains("known: contextWindow"), "{}", e.message);
        // Every listed field is read, and nothing else is asked for.
        let asked = std::cell::RefCell::new(Vec::new());
        Config::read(|k| {
            asked.borrow_mut().push(k.to_string());
            Given::Absent
        })
        .unwrap();
        assert_eq!(asked.into_inner(), Config::FIELDS);
    }

    #[test]
    fn fields_are_read_by_type() {
        let c = Config::read(|k| match k {
            "contextWindow" => Given::Number(64_000.0),
            "disableAutoCompact" => Given::Bool(true),
            _ => Given::Absent,
        })
        .unwrap();
        assert_eq!(c.context_window, Some(64_000.0));
        assert_eq!(c.disable_auto_compact, Some(true));
        assert!(!c.is_auto_compact_enabled());
        for (key, given, words) in [
            (
                "contextWindow",
                Given::Other("a string"),
                "config.contextWindow must be a number, got a string",
            ),
            (
                "reactiveOnly",
                Given::Number(1.0),
                "config.reactiveOnly must be a boolean, got the number 1",
            ),
            (
                "enable1mContext",
                Given::Other("an object"),
                "config.enable1mContext must be a boolean",
            ),
            (
                "autoCompactPctOverride",
                Given::Number(150.0),
                "between 1 and 100",
            ),
        ] {
            let e = Config::read(|k| if k == key { given } else { Given::Absent }).unwrap_err();
            assert_eq!(e.code, crate::model::error::ErrorCode::InvalidConfig);
            assert!(e.message.contains(words), "{key}: {}", e.message);
        }
    }

    #[test]
    fn validation_names_the_field() {
        let e = Config {
            auto_compact_pct_override: Some(0.0),
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.message.contains("autoCompactPctOverride"));
        assert!(Config {
            context_window: Some(f64::NAN),
            ..Default::default()
        }
        .validate()
        .is_err());
    }

    /// The config fields that hold a token size.
    const TOKEN_SIZE_FIELDS: [&str; 5] = [
        "contextWindow",
        "maxOutputTokens",
        "autoCompactWindow",
        "blockingLimitOverride",
        "summaryContextWindow",
    ];

    /// Above the limit, the message names the limit (not "at least 1") and writes a huge
    /// value as JavaScript does, not in hundreds of digits.
    #[test]
    fn token_sizes_above_the_limit_name_the_limit() {
        for name in TOKEN_SIZE_FIELDS {
            for (v, got) in [
                (1e13, "10000000000000"),
                (1e300, "1e+300"),
                (f64::INFINITY, "Infinity"),
            ] {
                let e = Config::read(|k| {
                    if k == name {
                        Given::Number(v)
                    } else {
                        Given::Absent
                    }
                })
                .unwrap_err();
                assert_eq!(e.code, crate::model::error::ErrorCode::InvalidConfig);
                assert_eq!(
                    e.message,
                    format!("config.{name} must be at most 1,000,000,000,000 tokens, got {got}")
                );
            }
            assert!(Config::read(|k| if k == name {
                Given::Number(MAX_TOKENS)
            } else {
                Given::Absent
            })
            .is_ok());
        }
    }

    /// A fraction below 1 is no window at all (it would be read as 0 tokens, which is
    /// rejected): every token size takes at least 1, and a whole window's fraction passes.
    #[test]
    fn token_sizes_below_one_are_rejected_like_zero() {
        let sized = |name: &str, v: f64| {
            Config::read(|k| {
                if k == name {
                    Given::Number(v)
                } else {
                    Given::Absent
                }
            })
        };
        for name in TOKEN_SIZE_FIELDS {
            for bad in [0.0, 0.5, 0.999, -1.0] {
                let e = sized(name, bad).unwrap_err();
                assert_eq!(e.code, crate::model::error::ErrorCode::InvalidConfig);
                assert!(
                    e.message.contains(&format!("config.{name}")),
                    "{}",
                    e.message
                );
                assert!(e.message.contains(&format!("got {bad}")), "{}", e.message);
            }
            if name != "summaryContextWindow" {
                assert!(sized(name, 1.0).is_ok(), "{name}");
            }
            assert!(sized(name, 64_000.5).is_ok(), "{name}");
        }
        let env = Config::from_env(|k| (k == "CLAUDE_CODE_AUTO_COMPACT_WINDOW").then_some("0.5"));
        assert_eq!(env.env_auto_compact_window, None);
    }

    /// A summary window that cannot hold the summary request's prompt and a minimal summary
    /// is refused up front, naming it, as an unusable `contextWindow` is; the smallest usable
    /// one and every larger one pass.
    #[test]
    fn an_unusable_summary_window_is_rejected() {
        let with = |w: f64| {
            Config::read(|k| {
                if k == "summaryContextWindow" {
                    Given::Number(w)
                } else {
                    Given::Absent
                }
            })
        };
        for bad in [1.0, 100.0, 1_000.0, 4_095.0, 4_095.9] {
            // Read (counting never uses it), refused where a summary is asked for.
            let e = with(bad).unwrap().check_summary_window().unwrap_err();
            assert_eq!(e.code, crate::model::error::ErrorCode::InvalidConfig);
            assert!(
                e.message.contains("config.summaryContextWindow")
                    && e.message.contains(&format!("{bad} tokens"))
                    && e.message.contains("at least 4096"),
                "{}",
                e.message
            );
        }
        for good in [MIN_SUMMARY_CONTEXT_WINDOW, 8_192.0, 16_384.0, 200_000.0] {
            assert!(with(good).unwrap().check_summary_window().is_ok(), "{good}");
        }
    }
}
