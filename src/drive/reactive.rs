//! Reactive compaction (SPEC §13): after the API rejected a request because the context is
//! too large, compact once for that turn and let the caller retry; never twice in a row for
//! the same turn.

use crate::drive::autocompact::Tracking;
use crate::drive::env::Environment;
use crate::drive::pipeline::{
    compact_conversation, pre_compact_hooks, CompactContext, CompactError, CompactOptions,
    CompactionResult,
};
use crate::drive::retry::RetryPolicy;
use crate::drive::session_memory::try_session_memory_compaction;
use crate::model::error::ErrorCode;
use crate::model::messages::Message;
use crate::transforms::boundary::Trigger;
use crate::transforms::ptl::parse_context_overflow_error;

/// Why an API rejection calls for compaction (passed to the pre-compact hooks as `reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RejectionReason {
    /// The prompt is over the context window (or HTTP 413).
    PromptTooLong,
    /// An image, PDF or document is over the API's size limit.
    MediaTooLarge,
    /// The response hit its output limit.
    MaxOutputTokens,
}

/// Why the API's rejection calls for compaction, if it does.
pub fn rejection_reason(text: &str, status: Option<u16>) -> Option<RejectionReason> {
    if parse_context_overflow_error(text, status).is_some() {
        return Some(RejectionReason::PromptTooLong);
    }
    let t = text.to_ascii_lowercase();
    if (t.contains("image") || t.contains("media") || t.contains("pdf") || t.contains("document"))
        && (t.contains("too large") || t.contains("exceeds") || t.contains("too big"))
    {
        return Some(RejectionReason::MediaTooLarge);
    }
    if t.contains("max_output_tokens") || (t.contains("max_tokens") && t.contains("stop_reason")) {
        return Some(RejectionReason::MaxOutputTokens);
    }
    None
}

/// `reactiveCompact`: compacts once for the turn named in `tracking.turn_id` after an API
/// rejection (`error_text`, `status`). Returns the result and the tracking to keep.
pub async fn reactive_compact<E: Environment + ?Sized>(
    messages: &[Message],
    ctx: &CompactContext,
    error_text: &str,
    status: Option<u16>,
    tracking: &Tracking,
    retry: &RetryPolicy,
    env: &E,
) -> Result<(CompactionResult, Tracking), CompactError> {
    let Some(reason) = rejection_reason(error_text, status) else {
        return Err(CompactError::from(crate::model::error::Error::new(
            ErrorCode::ReactiveNotApplicable,
            "the error is not a context-size rejection (prompt too long, 413, media too large, max_output_tokens)",
        )));
    };
    if tracking.turn_id.is_some() && tracking.reactive_turn_id == tracking.turn_id {
        return Err(CompactError::from(crate::model::error::Error::new(
            ErrorCode::ReactiveAlreadyTried,
            "reactive compaction already ran for this turn; not compacting twice in a row",
        )));
    }
    let pre_tokens = ctx.pre_count(messages)?;
    // `start` before the hooks, once for whichever compaction follows.
    crate::drive::pipeline::announce(env, pre_tokens);
    let pre = pre_compact_hooks(
        env,
        ctx,
        Trigger::Auto,
        None,
        pre_tokens,
        serde_json::json!({"reactive": true, "reason": reason}),
    )
    .await?;
    let mut next = tracking.clone();
    next.reactive_turn_id = tracking.turn_id.clone();
    match try_session_memory_compaction(messages, ctx, Some(pre.clone()), env).await {
        Ok(r) => return Ok((r, next)),
        Err(e) if e.error.code == ErrorCode::Aborted => return Err(e),
        Err(_) => {}
    }
    let options = CompactOptions {
        is_auto_compact: true,
        suppress_follow_up_questions: true,
        retry: *retry,
        pre_compact: Some(pre),
        announced: true,
        ..Default::default()
    };
    let r = compact_conversation(messages, ctx, &options, env).await?;
    Ok((r, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons() {
        assert_eq!(
            rejection_reason("prompt is too long: 5 tokens > 4 maximum", Some(400)),
            Some(RejectionReason::PromptTooLong)
        );
        assert_eq!(
            rejection_reason("Request Entity Too Large", Some(413)),
            Some(RejectionReason::PromptTooLong)
        );
        assert_eq!(
            rejection_reason(
                "image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes",
                Some(400)
            ),
            Some(RejectionReason::MediaTooLarge)
        );
        assert_eq!(
            rejection_reason("max_tokens reached (stop_reason: max_tokens)", None),
            Some(RejectionReason::MaxOutputTokens)
        );
        assert_eq!(rejection_reason("Overloaded", Some(529)), None);
        // The hooks see the same strings as before.
        assert_eq!(
            serde_json::to_value(RejectionReason::MediaTooLarge).unwrap(),
            "mediaTooLarge"
        );
    }
}
