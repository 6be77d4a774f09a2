//! The summary from the Messages API's on-demand compaction (beta `compact-2026-09-04`):
//! instead of the library's summary prompt, the conversation itself is sent with
//! `compaction: {type: "summarize", instructions?}`, and the API answers with one
//! `{type: "compaction", content, signature}` block. That block, byte for byte, then stands
//! first in the compacted conversation in place of the messages it summarizes.
//!
//! The rules (all decided here; the summarizer only transports):
//! - Used when the summarizer says it can (`summarize.onDemandCompaction === true`) and the
//!   conversation is Anthropic messages (the block has no place in transcript lines or in
//!   another ecosystem's messages); otherwise the summary prompt is used.
//! - The summarized range ends before a trailing assistant turn that calls a tool without
//!   a result (the API refuses such a request); with `keepLastUserMessage` it ends before
//!   the latest user request. What follows the cut is kept verbatim after the block.
//! - `compaction_unavailable` (529) is retried like any transient failure, then the
//!   summary prompt is used instead. So is a refused request (400/404/413/422 that names
//!   no compaction error), a prompt that is too long for the API's own summary, a failed
//!   summary (a 200 with no block content: `max_tokens`, `model_context_window_exceeded`,
//!   `tool_use`, `refusal`, `end_turn`) and instructions longer than the API takes.
//! - `compaction_nothing_to_summarize` is `NOTHING_TO_COMPACT` (a no-op, nothing changed).
//! - `compaction_block_misplaced`, `compaction_signature_invalid` and
//!   `compaction_content_mismatch` are `API_COMPACTION_REJECTED`: the conversation's own
//!   earlier block was moved or edited, so every later request would fail as well; the
//!   caller must repair the conversation (no silent fallback hides that).

use serde_json::{json, Value};

use crate::drive::env::{CallError, Environment, ProgressEvent};
use crate::drive::failure::{check_abort, CompactError};
use crate::drive::retry::RetryPolicy;
use crate::drive::summary_call::Retries;
use crate::model::error::ErrorCode;
use crate::model::messages::{Block, Content, Kind, Message};
use crate::model::view::UsageCounts;
use crate::summarize::summary::{self, SummaryRequest};
use crate::transforms::messages_api::to_api_messages;
use crate::transforms::ptl::parse_context_overflow_error;

/// The beta header value of the API's on-demand compaction.
pub const ON_DEMAND_COMPACTION_BETA: &str = "compact-2026-09-04";
/// The most characters the API takes in `compaction.instructions`.
pub const MAX_COMPACTION_INSTRUCTIONS_CHARS: usize = 16_384;
/// The API's error names that mean the conversation's own compaction block is not valid.
pub const REJECTED_BLOCK_ERRORS: [&str; 3] = [
    "compaction_block_misplaced",
    "compaction_signature_invalid",
    "compaction_content_mismatch",
];
/// The API's error name for a conversation with nothing to summarize.
pub const NOTHING_TO_SUMMARIZE_ERROR: &str = "compaction_nothing_to_summarize";
/// The API's error name (529) for on-demand compaction being unavailable for now.
pub const UNAVAILABLE_ERROR: &str = "compaction_unavailable";

/// What the on-demand compaction gave.
#[derive(Debug)]
pub(crate) enum OnDemand {
    /// The block, its summary text, the indices kept verbatim after it, the usage.
    Done {
        block: Value,
        text: String,
        kept: Vec<usize>,
        usage: Option<UsageCounts>,
    },
    /// Use the summary prompt instead, for this reason.
    Fallback(String),
}

/// Where the summarized range ends (`messages[start..cut]`); the rest is kept verbatim.
pub(crate) fn cut_point(
    messages: &[Message],
    start: usize,
    last_user_request: Option<usize>,
) -> usize {
    if let Some(i) = last_user_request.filter(|&i| i > start) {
        return i;
    }
    let n = messages.len();
    if n > start {
        let last = &messages[n - 1];
        let open_call = last.kind() == Kind::Assistant
            && matches!(last.content(), Some(Content::Blocks(bs))
                if bs.iter().any(|b| matches!(b, Block::ToolUse(_))));
        if open_call {
            return n - 1;
        }
    }
    n
}

/// The on-demand compaction request for `messages[..cut]` (the API view: what follows the
/// last compaction block, the block first).
pub(crate) fn request(
    model: &str,
    messages: &[Message],
    instructions: &[String],
) -> SummaryRequest {
    let text = instructions
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut compaction = json!({"type": "summarize"});
    if !text.is_empty() {
        compaction["instructions"] = Value::String(text);
    }
    SummaryRequest {
        model: model.to_string(),
        system: String::new(),
        messages: to_api_messages(messages)
            .into_iter()
            .map(summary::RequestMessage::Raw)
            .collect(),
        max_tokens: summary::summary_max_tokens(model),
        compaction: Some(compaction),
    }
}

fn names(e: &CallError, name: &str) -> bool {
    e.message.contains(name)
}

/// Asks the API's on-demand compaction for the summary of `messages[start..cut]`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn on_demand_summary<E: Environment + ?Sized>(
    env: &E,
    model: &str,
    messages: &[Message],
    start: usize,
    cut: usize,
    instructions: &[String],
    retry: &RetryPolicy,
    retries: &mut Retries,
) -> Result<OnDemand, CompactError> {
    let joined: usize = instructions.iter().map(|s| s.chars().count() + 2).sum();
    if joined > MAX_COMPACTION_INSTRUCTIONS_CHARS {
        return Ok(OnDemand::Fallback(format!(
            "the summary instructions are longer than the {MAX_COMPACTION_INSTRUCTIONS_CHARS} characters the API's compaction takes"
        )));
    }
    let summarized = &messages[..cut];
    if !summarized[start..]
        .iter()
        .any(|m| matches!(m.kind(), Kind::User | Kind::Assistant))
    {
        return Err(CompactError::new(
            ErrorCode::NothingToCompact,
            "there is no conversation to summarize before the turn that stays",
        ));
    }
    let request = request(model, summarized, instructions);
    let mut n = 0;
    loop {
        n += 1;
        check_abort(env, "the compaction request")?;
        env.progress(&ProgressEvent {
            attempt: Some(n),
            detail: Some("on-demand compaction".into()),
            ..ProgressEvent::phase("summarizing")
        });
        let e = match env.summarize(&request).await {
            Ok(r) => {
                check_abort(env, "using the compaction")?;
                let text = r
                    .compaction
                    .as_ref()
                    .and_then(|b| b.get("content"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .filter(|t| !t.trim().is_empty());
                return Ok(match (r.compaction, text) {
                    (Some(block), Some(text)) => OnDemand::Done {
                        block,
                        text,
                        kept: (cut..messages.len()).collect(),
                        usage: r.usage,
                    },
                    _ => OnDemand::Fallback(format!(
                        "the API's compaction returned no summary (stop_reason {})",
                        r.stop_reason.as_deref().unwrap_or("none")
                    )),
                });
            }
            Err(e) => e,
        };
        let e = crate::drive::summary_call::stopped(
            e,
            "compaction request aborted",
            "the compaction request timed out; nothing was committed",
        )?;
        if names(&e, NOTHING_TO_SUMMARIZE_ERROR) {
            return Err(CompactError::from_call(
                ErrorCode::NothingToCompact,
                "the API found nothing to summarize (compaction_nothing_to_summarize); nothing was changed",
                e,
            ));
        }
        if let Some(name) = REJECTED_BLOCK_ERRORS.iter().find(|n| names(&e, n)) {
            return Err(CompactError::from_call(
                ErrorCode::ApiCompactionRejected,
                &format!(
                    "the API refused the conversation's compaction block ({name}): it must be the \
                     first message's first block, exactly as the API returned it, and only one; \
                     nothing was committed"
                ),
                e,
            ));
        }
        let unavailable = names(&e, UNAVAILABLE_ERROR);
        if crate::drive::summary_call::wait_to_retry(env, retry, retries, &e).await? {
            continue;
        }
        if unavailable {
            return Ok(OnDemand::Fallback(
                "the API's compaction is unavailable (compaction_unavailable)".into(),
            ));
        }
        if parse_context_overflow_error(&e.message, e.status).is_some() {
            return Ok(OnDemand::Fallback(
                "the conversation is too long for the API's compaction".into(),
            ));
        }
        if matches!(e.status, Some(400 | 404 | 413 | 422)) {
            return Ok(OnDemand::Fallback(format!(
                "the API refused the compaction request: {}",
                e.message.lines().next().unwrap_or("")
            )));
        }
        return Err(CompactError::from_call(
            ErrorCode::SummarizerFailed,
            "the summarizer failed",
            e,
        ));
    }
}
