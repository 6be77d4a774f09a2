//! Why a compaction flow failed: a coded [`Error`] and the callback error behind it. Every
//! flow of this layer fails with a [`CompactError`], and nothing was committed when it does.

use crate::drive::env::{CallError, Environment};
use crate::model::error::{Error, ErrorCode};

/// Why a compaction failed. Nothing was committed.
#[derive(Clone, Debug)]
pub struct CompactError {
    /// Code and message.
    pub error: Error,
    /// The callback error behind it, if any.
    pub cause: Option<CallError>,
}

impl CompactError {
    /// A failure of the library's own making.
    pub(crate) fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        CompactError {
            error: Error::new(code, message),
            cause: None,
        }
    }

    /// A failure of a callback (`e`), coded `code` unless the caller aborted.
    pub(crate) fn from_call(code: ErrorCode, what: &str, e: CallError) -> Self {
        let code = if e.aborted { ErrorCode::Aborted } else { code };
        CompactError {
            error: Error::new(code, format!("{what}: {}", e.message)),
            cause: Some(e),
        }
    }
}

impl From<Error> for CompactError {
    fn from(error: Error) -> Self {
        CompactError { error, cause: None }
    }
}

/// Stops with `ABORTED` if the caller aborted (`step` says before what).
pub(crate) fn check_abort<E: Environment + ?Sized>(
    env: &E,
    step: &str,
) -> Result<(), CompactError> {
    env.check_abort().map_err(|e| {
        CompactError::from_call(ErrorCode::Aborted, &format!("aborted before {step}"), e)
    })
}

/// A checkpoint between two long passes of a compaction ([`Environment::pause`]): the
/// caller's event loop runs, then an abort stops the compaction (`ABORTED`, naming the pass
/// that was next).
pub(crate) async fn checkpoint<E: Environment + ?Sized>(
    env: &E,
    step: &str,
) -> Result<(), CompactError> {
    env.pause().await.map_err(|e| {
        CompactError::from_call(ErrorCode::Aborted, &format!("aborted before {step}"), e)
    })
}
