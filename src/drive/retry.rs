//! The transient-retry policy of the summary request: a 408/409/429/5xx/529, overloaded,
//! rate-limit or network failure is retried up to [`MAX_TRANSIENT_RETRIES`] times with an
//! exponential backoff and jitter (or the delay the server asked for), unless the summarizer
//! says it already retried and gave up. Waits are bounded: no single wait is longer than
//! [`MAX_SERVER_DELAY_MS`], and all the waits of one compaction together stay within the
//! caller's time limit (`summaryTimeoutMs`); a failure that would need a longer wait is not
//! retried ([`Retry::TooLong`]) and the compaction fails at once. Prompt-too-long handling is
//! elsewhere ([`crate::transforms::ptl`]).

use crate::drive::env::CallError;

/// Transient failures of the summary request retried by the pipeline (on top of any retries
/// the summarizer does itself, unless it says it already gave up).
pub const MAX_TRANSIENT_RETRIES: u32 = 3;
/// First backoff delay for transient failures, in ms (doubled each time, with jitter).
pub const DEFAULT_RETRY_BASE_MS: u64 = 1_000;
/// Longest backoff delay, in ms.
pub const MAX_RETRY_DELAY_MS: u64 = 32_000;
/// Longest wait a server may ask for (`retryAfterMs`), in ms: a failure that asks for more is
/// not retried (a retry sooner than asked would fail again, and a longer wait would hold the
/// compaction, and a `Compactor`, for that long).
pub const MAX_SERVER_DELAY_MS: u64 = 2 * MAX_RETRY_DELAY_MS;

/// What to do after a failure of the summary request ([`RetryPolicy::decide`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// Not retried: not transient, the summarizer gave up, or the retries are used up.
    No,
    /// Retried after this many ms.
    After(u64),
    /// Retryable, but only after `wait_ms`, more than the `limit_ms` a wait may take: the
    /// compaction fails at once instead of waiting.
    TooLong {
        /// The wait the failure needs (what the server asked for, or the backoff).
        wait_ms: u64,
        /// The longest this wait may be.
        limit_ms: u64,
        /// Whether the limit is what is left of the caller's time limit (`summaryTimeoutMs`);
        /// `false`: the longest wait a server may ask for ([`MAX_SERVER_DELAY_MS`]).
        deadline: bool,
    },
}

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
    /// when `e` is not retried (not transient, the summarizer gave up, the retries are used
    /// up, or the server asked for a wait longer than [`MAX_SERVER_DELAY_MS`]). `random` is in
    /// [0, 1) and draws the jitter: half the backoff plus a random part of the other half. A
    /// server's `retry-after` wins. No time limit: see [`Self::decide`].
    pub fn delay_ms(&self, e: &CallError, retries_so_far: u32, random: f64) -> Option<u64> {
        match self.decide(e, retries_so_far, random, None) {
            Retry::After(ms) => Some(ms),
            Retry::No | Retry::TooLong { .. } => None,
        }
    }

    /// What to do after the failure `e` ([`Self::delay_ms`]'s rules), when the waits may
    /// take at most `budget_ms` more (what is left of the caller's time limit; `None`: no
    /// limit). A wait longer than the budget, or a server's wait longer than
    /// [`MAX_SERVER_DELAY_MS`], is [`Retry::TooLong`]: never shortened (a retry before the
    /// server's time would fail again), never waited.
    pub fn decide(
        &self,
        e: &CallError,
        retries_so_far: u32,
        random: f64,
        budget_ms: Option<u64>,
    ) -> Retry {
        if !e.is_transient() || e.retries_exhausted || retries_so_far >= MAX_TRANSIENT_RETRIES {
            return Retry::No;
        }
        let backoff = self
            .base_ms
            .saturating_mul(1 << retries_so_far)
            .min(MAX_RETRY_DELAY_MS);
        let jittered = backoff / 2 + (random * (backoff / 2) as f64) as u64;
        let wait_ms = e.retry_after_ms.unwrap_or(jittered);
        if wait_ms > MAX_SERVER_DELAY_MS {
            return Retry::TooLong {
                wait_ms,
                limit_ms: MAX_SERVER_DELAY_MS,
                deadline: false,
            };
        }
        match budget_ms {
            Some(limit_ms) if wait_ms > limit_ms => Retry::TooLong {
                wait_ms,
                limit_ms,
                deadline: true,
            },
            _ => Retry::After(wait_ms),
        }
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
            retry_after_ms: Some(MAX_SERVER_DELAY_MS),
            ..overloaded()
        };
        assert_eq!(p.delay_ms(&e, 0, 0.5), Some(MAX_SERVER_DELAY_MS));
        // A server asking for longer is not retried (not retried early either).
        let e = CallError {
            retry_after_ms: Some(u64::MAX),
            ..overloaded()
        };
        assert_eq!(p.delay_ms(&e, 0, 0.5), None);
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

    #[test]
    fn a_wait_past_the_limit_or_the_longest_server_wait_is_too_long_never_shortened() {
        let p = RetryPolicy::with_base_ms(1_000);
        let asked = |ms| CallError {
            retry_after_ms: Some(ms),
            ..overloaded()
        };
        // The server's wait beyond the longest one: too long, whatever the budget.
        for budget in [None, Some(u64::MAX)] {
            assert_eq!(
                p.decide(&asked(1_000_000_000_000), 0, 0.5, budget),
                Retry::TooLong {
                    wait_ms: 1_000_000_000_000,
                    limit_ms: MAX_SERVER_DELAY_MS,
                    deadline: false
                }
            );
        }
        // Within it, the budget decides: at most the budget is waited.
        assert_eq!(
            p.decide(&asked(5_000), 0, 0.5, Some(5_000)),
            Retry::After(5_000)
        );
        assert_eq!(
            p.decide(&asked(5_001), 0, 0.5, Some(5_000)),
            Retry::TooLong {
                wait_ms: 5_001,
                limit_ms: 5_000,
                deadline: true
            }
        );
        // The backoff too (base 1e12 ms: the longest backoff, 16 to 32 s).
        let huge = RetryPolicy::with_base_ms(1_000_000_000_000);
        assert_eq!(
            huge.decide(&overloaded(), 0, 0.0, Some(1_000)),
            Retry::TooLong {
                wait_ms: MAX_RETRY_DELAY_MS / 2,
                limit_ms: 1_000,
                deadline: true
            }
        );
        assert_eq!(
            huge.decide(&overloaded(), 0, 0.0, None),
            Retry::After(MAX_RETRY_DELAY_MS / 2)
        );
        // What is not retried stays so.
        assert_eq!(
            p.decide(&overloaded(), MAX_TRANSIENT_RETRIES, 0.0, Some(0)),
            Retry::No
        );
    }
}
