//! Typed errors of the core.
//!
//! Every failure the library can report is an [`Error`] value with a stable
//! [`ErrorCode`] (the `code` property of the JS `Error` the bindings throw) and a
//! message that says what was wrong and where.

use std::fmt;

/// Stable, machine-readable error codes. The string form (see [`ErrorCode::as_str`])
/// is part of the public JS API: do not rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// An argument had the wrong type or shape (e.g. `messages` is not an array), or an
    /// options object has an unknown key or a misspelt value.
    InvalidArgument,
    /// A message or content block is malformed (missing `role`, content of the wrong type…).
    InvalidMessage,
    /// A token count is negative, NaN, infinite or absurdly large.
    InvalidTokenCount,
    /// A configuration value is out of range or of the wrong type.
    InvalidConfig,
    /// A JSONL transcript line is blank or not valid JSON.
    MalformedTranscript,
    /// A line could not be written back as JSON.
    SerializationFailed,
    /// The caller's abort signal fired; nothing was committed.
    Aborted,
    /// The summary was cut off at `max_tokens`; nothing was committed.
    SummaryTruncated,
    /// The summarizer returned no summary text; nothing was committed.
    EmptySummary,
    /// The summary request stayed too long after the allowed retries (or an agent loop's
    /// request was still too long after its compaction).
    PromptTooLong,
    /// The summarizer failed (non-transient error, or transient retries exhausted).
    SummarizerFailed,
    /// The compacted context would not be smaller than before; nothing was committed.
    CompactionNotSmaller,
    /// Compaction is disabled by configuration.
    CompactDisabled,
    /// There is nothing to summarize.
    NothingToCompact,
    /// Session-memory compaction did not apply (no memory, or the result would still be
    /// above the threshold).
    SessionMemoryNotApplicable,
    /// A summary written ahead (pre-emptive) does not fit the conversation now (too many
    /// messages since its cut); today's path runs instead.
    PreemptiveNotApplicable,
    /// Reactive compaction was asked for an error that is not about the context's size.
    ReactiveNotApplicable,
    /// Reactive compaction already ran for this turn.
    ReactiveAlreadyTried,
    /// The summarizer did not answer within the configured time.
    Timeout,
    /// Automatic compaction is paused: the context refilled right after each of the last
    /// compactions.
    Thrashing,
    /// The messages of one array are of different shapes (e.g. an OpenAI Chat Completions
    /// message among AI SDK messages); the message names both indices.
    MixedShapes,
    /// A message could not be written in the caller's shape (a LangChain array of instances
    /// with no `HumanMessage` whose class could build the summary); nothing was changed.
    UnsupportedShape,
    /// The Messages API refused its on-demand compaction because of the conversation's own
    /// `compaction` block (`compaction_block_misplaced`, `compaction_signature_invalid`,
    /// `compaction_content_mismatch`): that block was moved or edited, and the next
    /// ordinary request would be refused too; nothing was committed.
    ApiCompactionRejected,
    /// A `Compactor` snapshot is not one (another format), has a field of the wrong type or
    /// an unknown one, or was edited or damaged after it was written (its check fails).
    InvalidSnapshot,
    /// A `Compactor` snapshot of a version this library does not read (e.g. written by a
    /// newer release).
    UnsupportedSnapshotVersion,
    /// The messages given to `Compactor.restore` are not the ones the snapshot was taken of
    /// (their number, fingerprint or count differs).
    SnapshotMismatch,
    /// The browser entry was used before its `init()` resolved, or `init()` could not load
    /// the `.wasm` (raised by the package's JS entry, listed here with every other code).
    NotInitialized,
    /// The WebAssembly instance trapped (`unreachable`, memory access out of bounds, stack
    /// overflow) and was replaced by a fresh one: the call that trapped, the calls that were
    /// pending in it, and objects created in it (a `Compactor`, an `offlineSummarizer`
    /// function) fail with this code; later calls run on the fresh instance (raised by the
    /// package's JS glue, listed here with every other code).
    InstanceReset,
    /// An agent loop (`runToolLoop`, `runChatToolLoop`) still called tools after its
    /// `maxSteps` requests (raised by the agent helpers' JS, listed here with every other code).
    MaxStepsExceeded,
    /// A provider's reply an agent loop cannot use (a Chat Completions answer without
    /// `choices[0].message`; raised by the agent helpers' JS, listed here with every other code).
    InvalidResponse,
    /// An agent loop's request to the provider failed (the SDK threw: an error status, a
    /// network failure); the SDK's own error is the `cause` (raised by the agent helpers' JS,
    /// listed here with every other code).
    ProviderError,
}

impl ErrorCode {
    /// Every code, in declaration order (exported to JS as `errorCodes()`; the type check
    /// compares it with the TS `ErrorCode` union).
    pub const ALL: [ErrorCode; 31] = [
        ErrorCode::InvalidArgument,
        ErrorCode::InvalidMessage,
        ErrorCode::InvalidTokenCount,
        ErrorCode::InvalidConfig,
        ErrorCode::MalformedTranscript,
        ErrorCode::SerializationFailed,
        ErrorCode::Aborted,
        ErrorCode::SummaryTruncated,
        ErrorCode::EmptySummary,
        ErrorCode::PromptTooLong,
        ErrorCode::SummarizerFailed,
        ErrorCode::CompactionNotSmaller,
        ErrorCode::CompactDisabled,
        ErrorCode::NothingToCompact,
        ErrorCode::SessionMemoryNotApplicable,
        ErrorCode::ReactiveNotApplicable,
        ErrorCode::ReactiveAlreadyTried,
        ErrorCode::Timeout,
        ErrorCode::Thrashing,
        ErrorCode::MixedShapes,
        ErrorCode::UnsupportedShape,
        ErrorCode::ApiCompactionRejected,
        ErrorCode::InvalidSnapshot,
        ErrorCode::UnsupportedSnapshotVersion,
        ErrorCode::SnapshotMismatch,
        ErrorCode::NotInitialized,
        ErrorCode::InstanceReset,
        ErrorCode::PreemptiveNotApplicable,
        ErrorCode::MaxStepsExceeded,
        ErrorCode::InvalidResponse,
        ErrorCode::ProviderError,
    ];

    /// The stable string used as the JS `error.code`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArgument => "INVALID_ARGUMENT",
            ErrorCode::InvalidMessage => "INVALID_MESSAGE",
            ErrorCode::InvalidTokenCount => "INVALID_TOKEN_COUNT",
            ErrorCode::InvalidConfig => "INVALID_CONFIG",
            ErrorCode::MalformedTranscript => "MALFORMED_TRANSCRIPT",
            ErrorCode::SerializationFailed => "SERIALIZATION_FAILED",
            ErrorCode::Aborted => "ABORTED",
            ErrorCode::SummaryTruncated => "SUMMARY_TRUNCATED",
            ErrorCode::EmptySummary => "EMPTY_SUMMARY",
            ErrorCode::PromptTooLong => "PROMPT_TOO_LONG",
            ErrorCode::SummarizerFailed => "SUMMARIZER_FAILED",
            ErrorCode::CompactionNotSmaller => "COMPACTION_NOT_SMALLER",
            ErrorCode::CompactDisabled => "COMPACT_DISABLED",
            ErrorCode::NothingToCompact => "NOTHING_TO_COMPACT",
            ErrorCode::SessionMemoryNotApplicable => "SESSION_MEMORY_NOT_APPLICABLE",
            ErrorCode::PreemptiveNotApplicable => "PREEMPTIVE_NOT_APPLICABLE",
            ErrorCode::ReactiveNotApplicable => "REACTIVE_NOT_APPLICABLE",
            ErrorCode::ReactiveAlreadyTried => "REACTIVE_ALREADY_TRIED",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::Thrashing => "THRASHING",
            ErrorCode::MixedShapes => "MIXED_SHAPES",
            ErrorCode::UnsupportedShape => "UNSUPPORTED_SHAPE",
            ErrorCode::ApiCompactionRejected => "API_COMPACTION_REJECTED",
            ErrorCode::InvalidSnapshot => "INVALID_SNAPSHOT",
            ErrorCode::UnsupportedSnapshotVersion => "UNSUPPORTED_SNAPSHOT_VERSION",
            ErrorCode::SnapshotMismatch => "SNAPSHOT_MISMATCH",
            ErrorCode::NotInitialized => "NOT_INITIALIZED",
            ErrorCode::InstanceReset => "INSTANCE_RESET",
            ErrorCode::MaxStepsExceeded => "MAX_STEPS_EXCEEDED",
            ErrorCode::InvalidResponse => "INVALID_RESPONSE",
            ErrorCode::ProviderError => "PROVIDER_ERROR",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An error of the library: a code and a human-readable message naming what and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// Stable code, see [`ErrorCode`].
    pub code: ErrorCode,
    /// What was wrong and where (e.g. `messages[3].content[1]: tool_result without tool_use_id`).
    pub message: String,
}

impl Error {
    /// Builds an error from a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    /// Shorthand for [`ErrorCode::InvalidArgument`].
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }

    /// Shorthand for [`ErrorCode::InvalidMessage`].
    pub fn invalid_message(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidMessage, message)
    }

    /// Shorthand for [`ErrorCode::InvalidTokenCount`].
    pub fn invalid_token_count(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidTokenCount, message)
    }

    /// Shorthand for [`ErrorCode::InvalidConfig`].
    pub fn invalid_config(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidConfig, message)
    }

    /// Prefixes the message with a location, e.g. `messages[4]`.
    pub fn at(mut self, location: impl fmt::Display) -> Self {
        self.message = format!("{location}: {}", self.message);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[{}] {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

/// Result alias of the core.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A valid token count as `u64`; `None` for what [`check_token_count`] rejects (NaN,
/// infinities, negative numbers, more than 1e15) without building its error.
#[inline]
pub fn token_count_value(value: f64) -> Option<u64> {
    // NaN fails the range test too.
    (0.0..=1e15).contains(&value).then(|| round_count(value))
}

/// `value.round() as u64` (half away from zero) for 0 ≤ value ≤ 1e15, without the library
/// call `round` is in WebAssembly (`floor` is one instruction; `value - floor` is exact here).
#[inline]
fn round_count(value: f64) -> u64 {
    let floor = value.floor();
    (if value - floor >= 0.5 {
        floor + 1.0
    } else {
        floor
    }) as u64
}

/// Checks that a token count is a finite, non-negative number and returns it as `u64`.
pub fn check_token_count(value: f64, what: &str) -> Result<u64> {
    if value.is_nan() {
        return Err(Error::invalid_token_count(format!(
            "{what} must be a number of tokens, got NaN or a non-number"
        )));
    }
    if value.is_infinite() {
        return Err(Error::invalid_token_count(format!(
            "{what} must be a finite number of tokens, got {}Infinity",
            if value < 0.0 { "-" } else { "" }
        )));
    }
    if value < 0.0 {
        return Err(Error::invalid_token_count(format!(
            "{what} must not be negative, got {}",
            crate::model::number::Plain(value)
        )));
    }
    if value > 1e15 {
        return Err(Error::invalid_token_count(format!(
            "{what} is implausibly large ({}; at most 1e15)",
            crate::model::number::js_text(value)
        )));
    }
    Ok(round_count(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_are_validated() {
        assert_eq!(check_token_count(12.0, "x").unwrap(), 12);
        assert_eq!(
            check_token_count(f64::NAN, "usage.input_tokens")
                .unwrap_err()
                .code,
            ErrorCode::InvalidTokenCount
        );
        let e = check_token_count(-1.0, "usage.output_tokens").unwrap_err();
        assert!(e.message.contains("usage.output_tokens"));
        assert!(check_token_count(f64::INFINITY, "x").is_err());
        // Past 1e15: the bound, and the number as JavaScript writes it (not 301 digits).
        assert_eq!(
            check_token_count(1e300, "x").unwrap_err().message,
            "x is implausibly large (1e+300; at most 1e15)"
        );
    }

    #[test]
    fn token_counts_round_as_f64_round_does() {
        let mut values = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            0.5000000000000001,
            562_949_953_421_311.5,
            999_999_999_999_999.5,
            1e15,
            999_999_999_999_999.4,
            f64::MIN_POSITIVE,
            f64::EPSILON,
        ];
        // A sweep of fractions and magnitudes (a fixed linear congruential sequence).
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let mantissa = (x >> 11) as f64 / (1u64 << 53) as f64;
            let scale = 10f64.powi(((x >> 3) % 16) as i32);
            values.push(mantissa * scale);
        }
        for v in values {
            let want = v.round() as u64;
            assert_eq!(check_token_count(v, "x").unwrap(), want, "{v:e}");
            assert_eq!(token_count_value(v), Some(want), "{v:e}");
        }
        for bad in [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -1.0,
            -0.4,
            1e15 + 1.0,
            1e300,
        ] {
            assert!(check_token_count(bad, "x").is_err(), "{bad}");
            assert_eq!(token_count_value(bad), None, "{bad}");
        }
    }

    /// `ALL` lists every variant once: the match below stops compiling when a variant is
    /// added, and its index must then be `ALL`'s position of it.
    #[test]
    fn all_lists_every_code_once() {
        fn position(c: ErrorCode) -> usize {
            match c {
                ErrorCode::InvalidArgument => 0,
                ErrorCode::InvalidMessage => 1,
                ErrorCode::InvalidTokenCount => 2,
                ErrorCode::InvalidConfig => 3,
                ErrorCode::MalformedTranscript => 4,
                ErrorCode::SerializationFailed => 5,
                ErrorCode::Aborted => 6,
                ErrorCode::SummaryTruncated => 7,
                ErrorCode::EmptySummary => 8,
                ErrorCode::PromptTooLong => 9,
                ErrorCode::SummarizerFailed => 10,
                ErrorCode::CompactionNotSmaller => 11,
                ErrorCode::CompactDisabled => 12,
                ErrorCode::NothingToCompact => 13,
                ErrorCode::SessionMemoryNotApplicable => 14,
                ErrorCode::ReactiveNotApplicable => 15,
                ErrorCode::ReactiveAlreadyTried => 16,
                ErrorCode::Timeout => 17,
                ErrorCode::Thrashing => 18,
                ErrorCode::MixedShapes => 19,
                ErrorCode::UnsupportedShape => 20,
                ErrorCode::ApiCompactionRejected => 21,
                ErrorCode::InvalidSnapshot => 22,
                ErrorCode::UnsupportedSnapshotVersion => 23,
                ErrorCode::SnapshotMismatch => 24,
                ErrorCode::NotInitialized => 25,
                ErrorCode::InstanceReset => 26,
                ErrorCode::PreemptiveNotApplicable => 27,
                ErrorCode::MaxStepsExceeded => 28,
                ErrorCode::InvalidResponse => 29,
                ErrorCode::ProviderError => 30,
            }
        }
        for (i, c) in ErrorCode::ALL.iter().enumerate() {
            assert_eq!(position(*c), i, "{c} is not at its place in ErrorCode::ALL");
        }
        let names: std::collections::HashSet<_> =
            ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
        assert_eq!(
            names.len(),
            ErrorCode::ALL.len(),
            "two codes share a string"
        );
    }

    #[test]
    fn location_prefix() {
        let e = Error::invalid_message("no role").at("messages[3]");
        assert_eq!(e.message, "messages[3]: no role");
        assert_eq!(e.to_string(), "[INVALID_MESSAGE] messages[3]: no role");
    }
}
