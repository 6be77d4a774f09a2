//! The transient-retry policy of the summary request: a 408/409/429/5xx/529, overloaded,
//! rate-limit or network failure is retried up to [`MAX_TRANSIENT_RETRIES`] times with an
//! exponential backoff and jitter (or the delay the server asked for), unless the summarizer
//! says it already retried and gave up. Prompt-too-long handling is elsewhere
//! ([`crate::transforms::ptl`]).

use crate::drive::env::CallError;

/// Transient failures of the summary request retried by the pipeline (on top of any retries
/// the summarizer does itself, unless it says it already gave up).
pub const MAX_TRANSIENT_RETRIES: u32 = 3;
/// First backoff delay for transient failures, in ms (doubled each time, with jitter).
pub const DEFAULT_RETRY_BASE_MS: u64 = 1_000;
/// Longest backoff delay, in ms.
pub const MAX_RETRY_DELAY_MS: u64 = 32_000;

/// How transient failures of the summary request are retried (`retryBaseMs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// First backoff delay, in ms; each retry doubles it (up to [`MAX_RETRY_DELAY_MS`]).
    pub base_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy::with_base_ms(DEFAULT_RETRY_BASE_MS)
    }
}

impl RetryPolicy {
    /// A policy whose first backoff delay is `base_ms`.
    pub const fn with_base_ms(base_ms: u64) -> Self {
        RetryPolicy { base_ms }
    }

    /// The delay before retry number `retries_so_far + 1` of the failure `e`, or `None`
    /// when `e` is not retried (not transient, the summarizer gave up, or the retries are
    /// used up). `random` is in [0, 1) and draws the jitter: half the backoff plus a random
    /// part of the other half. A server's `retry-after` wins (capped at twice the longest
    /// backoff).
    pub fn delay_ms(&self, e: &CallError, retries_so_far: u32, random: f64) -> Option<u64> {
        if !e.is_transient() || e.retries_exhausted || retries_so_far >= MAX_TRANSIENT_RETRIES {
            return None;
        }
        let backoff = self
            .base_ms
            .saturating_mul(1 << retries_so_far)
            .min(MAX_RETRY_DELAY_MS);
        let jittered = backoff / 2 + (random * (backoff / 2) as f64) as u64;
        Some(
            e.retry_after_ms
                .unwrap_or(jittered)
                .min(MAX_RETRY_DELAY_MS * 2),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overloaded() -> CallError {
        CallError {
            status: Some(529),
            ..Default::default()
        }
    }

    #[test]
    fn backoff_doubles_with_jitter_and_stops_after_the_limit() {
        let p = RetryPolicy::with_base_ms(100);
        assert_eq!(p.delay_ms(&overloaded(), 0, 0.0), Some(50));
        assert_eq!(p.delay_ms(&overloaded(), 0, 0.999), Some(99));
        assert_eq!(p.delay_ms(&overloaded(), 1, 0.0), Some(100));
        assert_eq!(p.delay_ms(&overloaded(), 2, 0.0), Some(200));
        assert_eq!(p.delay_ms(&overloaded(), MAX_TRANSIENT_RETRIES, 0.0), None);
        let big = RetryPolicy::with_base_ms(u64::MAX);
        assert_eq!(
            big.delay_ms(&overloaded(), 2, 0.0),
            Some(MAX_RETRY_DELAY_MS / 2)
        );
        assert_eq!(RetryPolicy::default().base_ms, DEFAULT_RETRY_BASE_MS);
    }

    #[test]
    fn retry_after_wins_and_non_transient_failures_are_not_retried() {
        let p = RetryPolicy::default();
        let e = CallError {
            retry_after_ms: Some(7),
            ..overloaded()
        };
        assert_eq!(p.delay_ms(&e, 0, 0.5), Some(7));
        let e = CallError {
            retry_after_ms: Some(u64::MAX),
            ..overloaded()
        };
        assert_eq!(p.delay_ms(&e, 0, 0.5), Some(MAX_RETRY_DELAY_MS * 2));
        let gave_up = CallError {
            retries_exhausted: true,
            ..overloaded()
        };
        assert_eq!(p.delay_ms(&gave_up, 0, 0.5), None);
        let bad = CallError {
            status: Some(400),
            ..Default::default()
        };
        assert_eq!(p.delay_ms(&bad, 0, 0.5), None);
    }
}
