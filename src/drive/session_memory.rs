//! Session-memory compaction (SPEC §12): the caller's session memory becomes the summary and
//! the most recent messages are kept verbatim, with no model call. Where to cut is decided by
//! [`crate::transforms::session_memory::choose_cut`]; this drives it over the
//! [`Environment`] and finishes like a full compaction.

use serde_json::json;

use crate::drive::env::Environment;
use crate::drive::failure::{check_abort, CompactError};
use crate::drive::pipeline::{
    finish, pre_compact_hooks, CompactContext, CompactionResult, Finish, PreCompactOutcome,
    SizeBefore,
};
use crate::drive::summary_call::Retries;
use crate::measure::tokens::active_start;
use crate::model::error::ErrorCode;
use crate::model::messages::Message;
use crate::transforms::boundary::Trigger;

/// `trySessionMemoryCompaction` (SPEC §12): the caller's session memory becomes the summary
/// and the most recent messages are kept verbatim; no model call. Fails with
/// `SESSION_MEMORY_NOT_APPLICABLE` when there is no memory, nothing to drop, or the result
/// would still be at or above the auto-compact threshold (full compaction then runs).
pub async fn try_session_memory_compaction<E: Environment + ?Sized>(
    messages: &[Message],
    ctx: &CompactContext,
    pre: Option<PreCompactOutcome>,
    env: &E,
) -> Result<CompactionResult, CompactError> {
    let not = |why: &str| {
        CompactError::new(
            ErrorCode::SessionMemoryNotApplicable,
            format!("session-memory compaction does not apply: {why}"),
        )
    };
    check_abort(env, "reading session memory")?;
    let memory = match env.session_memory().await {
        Ok(Some(m)) => m,
        Ok(None) => return Err(not("no session memory")),
        Err(e) if e.aborted => {
            return Err(CompactError::from_call(
                ErrorCode::Aborted,
                "aborted reading session memory",
                e,
            ))
        }
        Err(e) => {
            return Err(CompactError::from_call(
                ErrorCode::SessionMemoryNotApplicable,
                "the session memory could not be read",
                e,
            ))
        }
    };
    let SizeBefore {
        reported: pre_tokens,
        estimated: size_before,
        fit,
    } = ctx.size_before(messages, env.text_counter())?;
    // SPEC §12's 10,000 to 40,000 tokens kept are a 200K window's: on a small one (64K:
    // threshold 43,000) 40,000 tokens kept would land the context just below the threshold,
    // and the next turns would compact again and again. At most what leaves the next request
    // below the warning line (half the threshold on the smallest windows), as restored files
    // do; the minimum never above that most.
    let memory_tokens = crate::measure::tokens::text_tokens_counted(&memory, env.text_counter())?;
    let room = crate::drive::pipeline::room_line(ctx, fit.as_ref()).saturating_sub(memory_tokens);
    let defaults = crate::transforms::session_memory::SessionMemoryConfig::default();
    let config = crate::transforms::session_memory::SessionMemoryConfig {
        max_tokens: defaults.max_tokens.min(room),
        min_tokens: defaults.min_tokens.min(room),
        ..defaults
    };
    // The kept part's size in the caller's tokens when it gave a tokenizer.
    let cut = match env.text_counter() {
        Some(counter) => crate::transforms::session_memory::choose_cut(
            &crate::measure::tokens::CountedMessages::new(messages, counter),
            &config,
        )?,
        None => crate::transforms::session_memory::choose_cut(messages, &config)?,
    };
    let Some(cut) = cut else {
        return Err(not("nothing to drop"));
    };
    let pre = match pre {
        // The caller's path ran the hooks, and announced the compaction before them.
        Some(p) => p,
        None => {
            crate::drive::pipeline::announce(env, pre_tokens);
            pre_compact_hooks(
                env,
                ctx,
                Trigger::Auto,
                None,
                pre_tokens,
                json!({"sessionMemory": true}),
            )
            .await?
        }
    };
    let start = active_start(messages)?;
    let loss_report = crate::summarize::loss::loss_report(&messages[start..cut.keep_from], &memory);
    finish(
        env,
        messages,
        ctx,
        Finish {
            summary_message: None,
            loss_report,
            summary_text: memory,
            kept: (cut.keep_from..messages.len()).collect(),
            trigger: Trigger::Auto,
            auto: true,
            suppress_follow_up_questions: true,
            pre_tokens,
            pre_display: pre.user_display_message,
            failures: pre.failures,
            usage: None,
            post_compact_token_count: 0,
            retries: Retries::default(),
            from_session_memory: true,
            summary_parts: 0,
            size_before,
            fit,
            preemptive_bound: None,
            refusal: None,
        },
    )
    .await
}
