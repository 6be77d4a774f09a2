//! The outside world as the pipeline sees it: the summarizer, file reads, hooks, session
//! memory, timers, progress and cancellation. The core awaits these through the
//! [`Environment`] trait; the WebAssembly bindings implement it with JS callbacks and
//! Promises, native tests with plain Rust.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use serde::Serialize;
use serde_json::Value;

use crate::summarize::summary::{SummaryRequest, SummaryResponse};

/// A boxed future that need not be `Send` (JS callbacks live on one thread).
pub type LocalFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// A failed callback: what the caller's function threw or rejected with.
#[derive(Clone, Default)]
pub struct CallError {
    /// HTTP status, when the error carries one.
    pub status: Option<u16>,
    /// The error's text (message and API error body).
    pub message: String,
    /// Cancelled through the abort signal.
    pub aborted: bool,
    /// The callback already retried transient failures itself and gave up.
    pub retries_exhausted: bool,
    /// The caller's time limit for the callback ran out.
    pub timed_out: bool,
    /// Delay the server asked for before a retry, in ms.
    pub retry_after_ms: Option<u64>,
    /// The original error value (a JS value in the bindings), kept as `cause`.
    pub cause: Option<Rc<dyn Any>>,
}

impl fmt::Debug for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallError")
            .field("status", &self.status)
            .field("message", &self.message)
            .field("aborted", &self.aborted)
            .field("retries_exhausted", &self.retries_exhausted)
            .finish()
    }
}

impl CallError {
    /// An error with a message only.
    pub fn new(message: impl Into<String>) -> Self {
        CallError {
            message: message.into(),
            ..Default::default()
        }
    }

    /// The cancellation error.
    pub fn aborted() -> Self {
        CallError {
            message: "the operation was aborted".into(),
            aborted: true,
            ..Default::default()
        }
    }

    /// Whether retrying later may succeed: HTTP 408/409/429/5xx/529, an overloaded or
    /// rate-limit error, or a network failure (no status).
    pub fn is_transient(&self) -> bool {
        if self.aborted || self.timed_out {
            return false;
        }
        if let Some(s) = self.status {
            return matches!(s, 408 | 409 | 429 | 500 | 502 | 503 | 504 | 529);
        }
        let m = self.message.to_ascii_lowercase();
        [
            "overloaded",
            "rate_limit",
            "fetch failed",
            "network",
            "econnreset",
            "econnrefused",
            "socket hang up",
            "timed out",
            "timeout",
        ]
        .iter()
        .any(|k| m.contains(k))
    }
}

/// The hooks the pipeline runs (SPEC §15).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum HookKind {
    /// Before compaction.
    PreCompact,
    /// After compaction, as a session start with source `compact`.
    SessionStart,
    /// After compaction.
    PostCompact,
}

impl HookKind {
    /// The JS name (`preCompact`, `sessionStart`, `postCompact`).
    pub fn name(self) -> &'static str {
        match self {
            HookKind::PreCompact => "preCompact",
            HookKind::SessionStart => "sessionStart",
            HookKind::PostCompact => "postCompact",
        }
    }
}

/// What a hook may return.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HookOutput {
    /// Extra summary instructions (PreCompact).
    pub instructions: Option<String>,
    /// A message to show the user.
    pub user_display_message: Option<String>,
    /// Texts to add to the conversation after compaction (SessionStart).
    pub messages: Vec<String>,
    /// What the answer had that could not be used (a field of the wrong type, one this hook
    /// does not read, a misspelt one), each in words naming the field: reported with the
    /// hook's errors, never dropped silently.
    pub problems: Vec<String>,
}

/// A progress event for the caller's `onProgress`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressEvent {
    /// `start`, `preCompactHook`, `summarizing`, `retryPromptTooLong`, `retryTransient`,
    /// `summarized`, `restoring`, `sessionStartHook`, `postCompactHook`, `done`.
    pub phase: &'static str,
    /// Attempt number of the summary request (1-based), when summarizing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// A token count relevant to the phase.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// Extra detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The event is of a summary written ahead in the background (the `Compactor`'s
    /// `preemptive` option), not of a compaction the conversation waits for.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub background: bool,
}

impl ProgressEvent {
    /// An event with a phase only.
    pub fn phase(phase: &'static str) -> Self {
        ProgressEvent {
            phase,
            attempt: None,
            tokens: None,
            detail: None,
            background: false,
        }
    }
}

/// Everything the pipeline needs from outside.
pub trait Environment {
    /// Sends the summary request (SPEC §16).
    fn summarize(
        &self,
        request: &SummaryRequest,
    ) -> LocalFuture<'_, Result<SummaryResponse, CallError>>;
    /// Whether a `readFile` callback is available (fresh file content for restoration).
    fn has_read_file(&self) -> bool;
    /// Reads a file (`Ok(None)`: not readable).
    fn read_file(&self, path: &str) -> LocalFuture<'_, Result<Option<String>, CallError>>;
    /// Runs a hook; `None` when no hook of that kind is registered.
    fn run_hook(
        &self,
        kind: HookKind,
        input: Value,
    ) -> Option<LocalFuture<'_, Result<HookOutput, CallError>>>;
    /// The session-memory text (SPEC §12), if the caller keeps one.
    fn session_memory(&self) -> LocalFuture<'_, Result<Option<String>, CallError>>;
    /// Whether the caller gave a session memory at all (without reading it): today's path
    /// then tries a compaction from it, with no model call, before summarizing.
    fn has_session_memory(&self) -> bool;
    /// Waits `ms` milliseconds (abortable).
    fn sleep(&self, ms: u64) -> LocalFuture<'_, Result<(), CallError>>;
    /// The most the waits before retries of one compaction may take together, in ms (the
    /// caller's time limit, `summaryTimeoutMs`); `None`: no limit but the longest single
    /// wait ([`crate::drive::retry::MAX_SERVER_DELAY_MS`]).
    fn wait_limit_ms(&self) -> Option<u64> {
        None
    }
    /// `Err` once the caller's abort signal fired.
    fn check_abort(&self) -> Result<(), CallError>;
    /// A checkpoint between two long synchronous passes over the conversation: lets the
    /// caller's event loop run (an abort, a timer, a Ctrl-C handler), then `Err` once the
    /// caller aborted. The default only checks the abort (a native caller has no event loop
    /// to yield to); the WebAssembly bindings wait for the next turn of the event loop.
    fn pause(&self) -> LocalFuture<'_, Result<(), CallError>> {
        Box::pin(std::future::ready(self.check_abort()))
    }
    /// The caller's tokenizer (`tokenCounter`), when it gave one: every count of a
    /// compaction (the size before and after, the checks against them, what a summary
    /// call consumed when it reports no usage) is then in its tokens.
    fn text_counter(&self) -> Option<&dyn crate::measure::tokens::TextCounter> {
        None
    }
    /// Reports progress.
    fn progress(&self, event: &ProgressEvent);
    /// A new line id.
    fn new_uuid(&self) -> String;
    /// The current time, ISO-8601.
    fn now_iso(&self) -> String;
    /// A random number in [0, 1) for backoff jitter.
    fn random(&self) -> f64;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transient_classification() {
        for s in [429, 500, 502, 503, 504, 529] {
            assert!(
                CallError {
                    status: Some(s),
                    ..Default::default()
                }
                .is_transient(),
                "{s}"
            );
        }
        for s in [400, 401, 403, 404, 413] {
            assert!(
                !CallError {
                    status: Some(s),
                    ..Default::default()
                }
                .is_transient(),
                "{s}"
            );
        }
        assert!(CallError::new("TypeError: fetch failed").is_transient());
        assert!(CallError::new("{\"type\":\"overloaded_error\"}").is_transient());
        assert!(!CallError::aborted().is_transient());
        assert!(!CallError::new("bad request").is_transient());
    }
}
