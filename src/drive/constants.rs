//! The library's named constants in one table (SPEC §4, §8, §9, §10): what `getConstants()`
//! and `constants` show in JS, read from the modules that own each value, so the bindings only
//! copy them.

use crate::drive::autocompact::MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES;
use crate::measure::thresholds as t;
use crate::measure::tokens::MEDIA_TOKENS;
use crate::model::view::CLEARED_PLACEHOLDER;
use crate::transforms::microcompact::{DEFAULT_IDLE_MINUTES, DEFAULT_KEEP_RECENT};
use crate::transforms::ptl::{MAX_PTL_RETRIES, PTL_MARKER_TEXT};
use crate::transforms::restore as r;

/// The numeric constants, by their JS names.
pub const NUMBERS: &[(&str, f64)] = &[
    (
        "AUTOCOMPACT_BUFFER_TOKENS",
        t::AUTOCOMPACT_BUFFER_TOKENS as f64,
    ),
    (
        "WARNING_THRESHOLD_BUFFER_TOKENS",
        t::WARNING_THRESHOLD_BUFFER_TOKENS as f64,
    ),
    (
        "ERROR_THRESHOLD_BUFFER_TOKENS",
        t::ERROR_THRESHOLD_BUFFER_TOKENS as f64,
    ),
    (
        "MANUAL_COMPACT_BUFFER_TOKENS",
        t::MANUAL_COMPACT_BUFFER_TOKENS as f64,
    ),
    (
        "MAX_OUTPUT_TOKENS_FOR_SUMMARY",
        t::MAX_OUTPUT_TOKENS_FOR_SUMMARY as f64,
    ),
    ("DEFAULT_CONTEXT_WINDOW", t::DEFAULT_CONTEXT_WINDOW as f64),
    (
        "ONE_MILLION_CONTEXT_WINDOW",
        t::ONE_MILLION_CONTEXT_WINDOW as f64,
    ),
    (
        "DEFAULT_MAX_OUTPUT_TOKENS",
        t::DEFAULT_MAX_OUTPUT_TOKENS as f64,
    ),
    (
        "MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES",
        MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES as f64,
    ),
    ("MAX_PTL_RETRIES", MAX_PTL_RETRIES as f64),
    (
        "POST_COMPACT_MAX_FILES_TO_RESTORE",
        r::POST_COMPACT_MAX_FILES_TO_RESTORE as f64,
    ),
    (
        "POST_COMPACT_MAX_TOKENS_PER_FILE",
        r::POST_COMPACT_MAX_TOKENS_PER_FILE as f64,
    ),
    (
        "POST_COMPACT_TOKEN_BUDGET",
        r::POST_COMPACT_TOKEN_BUDGET as f64,
    ),
    (
        "POST_COMPACT_MAX_TOKENS_PER_SKILL",
        r::POST_COMPACT_MAX_TOKENS_PER_SKILL as f64,
    ),
    (
        "POST_COMPACT_SKILLS_TOKEN_BUDGET",
        r::POST_COMPACT_SKILLS_TOKEN_BUDGET as f64,
    ),
    ("IMAGE_TOKENS", MEDIA_TOKENS as f64),
    ("MICROCOMPACT_KEEP_RECENT", DEFAULT_KEEP_RECENT as f64),
    ("MICROCOMPACT_IDLE_MINUTES", DEFAULT_IDLE_MINUTES),
];

/// The text constants, by their JS names.
pub const TEXTS: &[(&str, &str)] = &[
    ("CLEARED_TOOL_RESULT_PLACEHOLDER", CLEARED_PLACEHOLDER),
    ("PTL_MARKER_TEXT", PTL_MARKER_TEXT),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// SPEC's numbers, written out once more on purpose: a change of any owner's value
    /// must be a deliberate change here too.
    #[test]
    fn the_table_has_the_spec_values_once_each() {
        let expected = [
            ("AUTOCOMPACT_BUFFER_TOKENS", 13_000.0),
            ("WARNING_THRESHOLD_BUFFER_TOKENS", 20_000.0),
            ("ERROR_THRESHOLD_BUFFER_TOKENS", 20_000.0),
            ("MANUAL_COMPACT_BUFFER_TOKENS", 3_000.0),
            ("MAX_OUTPUT_TOKENS_FOR_SUMMARY", 20_000.0),
            ("DEFAULT_CONTEXT_WINDOW", 200_000.0),
            ("ONE_MILLION_CONTEXT_WINDOW", 1_000_000.0),
            ("DEFAULT_MAX_OUTPUT_TOKENS", 32_000.0),
            ("MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES", 3.0),
            ("MAX_PTL_RETRIES", 3.0),
            ("POST_COMPACT_MAX_FILES_TO_RESTORE", 5.0),
            ("POST_COMPACT_MAX_TOKENS_PER_FILE", 5_000.0),
            ("POST_COMPACT_TOKEN_BUDGET", 50_000.0),
            ("POST_COMPACT_MAX_TOKENS_PER_SKILL", 5_000.0),
            ("POST_COMPACT_SKILLS_TOKEN_BUDGET", 25_000.0),
            ("IMAGE_TOKENS", 2_000.0),
            ("MICROCOMPACT_KEEP_RECENT", 5.0),
            ("MICROCOMPACT_IDLE_MINUTES", 60.0),
        ];
        assert_eq!(NUMBERS, &expected[..]);
        let names: std::collections::BTreeSet<_> = NUMBERS
            .iter()
            .map(|(n, _)| *n)
            .chain(TEXTS.iter().map(|(n, _)| *n))
            .collect();
        assert_eq!(names.len(), NUMBERS.len() + TEXTS.len());
        assert_eq!(TEXTS[0].1, "[Old tool result content cleared]");
    }
}
