//! Whether automatic compaction is enabled and due (SPEC §5).

use crate::config::Config;
use crate::error::Result;
use crate::thresholds::auto_compact_threshold;
use crate::tokens::token_count_with_estimation;
use crate::view::ConversationView;

/// Query sources whose requests must never trigger compaction: they are the compaction's
/// own forked requests (compacting them would recurse).
pub const NON_COMPACTING_QUERY_SOURCES: &[&str] = &["session_memory", "compact"];

/// The query source used by context collapse.
pub const CONTEXT_COLLAPSE_QUERY_SOURCE: &str = "marble_origami";

/// `isAutoCompactEnabled`: false with `disableCompact` or `disableAutoCompact`, else the
/// `autoCompactEnabled` setting (default true).
pub fn is_auto_compact_enabled(config: &Config) -> bool {
    if config.disable_compact == Some(true) || config.disable_auto_compact == Some(true) {
        return false;
    }
    config.auto_compact_enabled.unwrap_or(true)
}

/// Options of `shouldAutoCompact`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShouldAutoCompactOptions {
    /// Who is making the request (`repl_main_thread`, `compact`, `session_memory`, …).
    pub query_source: Option<String>,
    /// Tokens already freed by snipping this turn, subtracted from the count.
    pub snip_tokens_freed: u64,
}

/// Why `shouldAutoCompact` answered as it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoCompactDecision {
    /// The answer.
    pub should_compact: bool,
    /// Token count used (0 when a guard answered before counting).
    pub token_count: u64,
    /// The threshold compared against.
    pub threshold: u64,
    /// The guard that said no, if any.
    pub blocked_by: Option<&'static str>,
}

/// `shouldAutoCompact` with its reasons.
pub fn should_auto_compact<V: ConversationView + ?Sized>(
    view: &V,
    model: &str,
    options: &ShouldAutoCompactOptions,
    config: &Config,
) -> Result<AutoCompactDecision> {
    let threshold = auto_compact_threshold(model, config);
    let no = |why: &'static str| AutoCompactDecision {
        should_compact: false,
        token_count: 0,
        threshold,
        blocked_by: Some(why),
    };
    let source = options.query_source.as_deref();
    if let Some(s) = source {
        if NON_COMPACTING_QUERY_SOURCES.contains(&s) {
            return Ok(no("querySource"));
        }
    }
    let collapse = config.context_collapse == Some(true);
    if collapse && source == Some(CONTEXT_COLLAPSE_QUERY_SOURCE) {
        return Ok(no("querySource"));
    }
    if config.reactive_only == Some(true) {
        return Ok(no("reactiveOnly"));
    }
    if collapse {
        return Ok(no("contextCollapse"));
    }
    if !is_auto_compact_enabled(config) {
        return Ok(no("disabled"));
    }
    let count = token_count_with_estimation(view)?.total;
    let effective = count.saturating_sub(options.snip_tokens_freed);
    Ok(AutoCompactDecision {
        should_compact: effective >= threshold,
        token_count: effective,
        threshold,
        blocked_by: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::Message;
    use serde_json::json;

    fn history(tokens: u64) -> Vec<Message> {
        Message::parse_all(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
             "usage": {"input_tokens": tokens, "output_tokens": 0}}
        ]))
        .unwrap()
    }

    fn ask(tokens: u64, opts: ShouldAutoCompactOptions, cfg: Config) -> AutoCompactDecision {
        should_auto_compact(history(tokens).as_slice(), "claude-opus-4-6", &opts, &cfg).unwrap()
    }

    #[test]
    fn enablement() {
        assert!(is_auto_compact_enabled(&Config::default()));
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
            assert!(!is_auto_compact_enabled(&cfg));
        }
    }

    #[test]
    fn fires_at_threshold() {
        let d = ask(167_000, Default::default(), Config::default());
        assert!(d.should_compact);
        assert!(!ask(166_999, Default::default(), Config::default()).should_compact);
    }

    #[test]
    fn snip_tokens_are_subtracted() {
        let d = ask(
            170_000,
            ShouldAutoCompactOptions {
                snip_tokens_freed: 5_000,
                ..Default::default()
            },
            Config::default(),
        );
        assert!(!d.should_compact);
        assert_eq!(d.token_count, 165_000);
    }

    #[test]
    fn every_guard() {
        let src = |s: &str| ShouldAutoCompactOptions {
            query_source: Some(s.into()),
            ..Default::default()
        };
        assert!(!ask(190_000, src("compact"), Config::default()).should_compact);
        assert!(!ask(190_000, src("session_memory"), Config::default()).should_compact);
        assert!(ask(190_000, src("marble_origami"), Config::default()).should_compact);
        let collapse = Config {
            context_collapse: Some(true),
            ..Default::default()
        };
        assert_eq!(
            ask(190_000, src("marble_origami"), collapse.clone()).blocked_by,
            Some("querySource")
        );
        assert_eq!(
            ask(190_000, Default::default(), collapse).blocked_by,
            Some("contextCollapse")
        );
        let reactive = Config {
            reactive_only: Some(true),
            ..Default::default()
        };
        assert!(!ask(190_000, Default::default(), reactive).should_compact);
        let off = Config {
            disable_auto_compact: Some(true),
            ..Default::default()
        };
        assert_eq!(
            ask(190_000, Default::default(), off).blocked_by,
            Some("disabled")
        );
    }
}
