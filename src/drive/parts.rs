//! Summarizing in parts (`context.summarizeInParts`): a conversation too long for the
//! summarizer's window is summarized oldest part first, and each later part is sent with the
//! summary so far in front of it, so the last answer summarizes every round. Dropping the
//! oldest rounds (SPEC §8) stays only as the last resort, for one round that does not fit
//! the window on its own; what it loses shows in the loss report.
//!
//! The window is known up front (`config.summaryContextWindow`, else the summary model's own
//! window), or learnt from a prompt-too-long answer: the parts are then planned again, from
//! the part that was refused, for the window the answer implies. Parts end between API turns
//! ([`group_by_api_turn`]), so a tool call and its result are always in the same part.

use serde_json::json;

use crate::drive::env::{Environment, ProgressEvent};
use crate::drive::failure::CompactError;
use crate::drive::retry::RetryPolicy;
use crate::drive::summary_call::{send_summary, truncating, Retries, Sent};
use crate::model::error::ErrorCode;
use crate::model::messages::Message;
use crate::model::view::{utf16_len, UsageCounts};
use crate::summarize::summary::{self, SummaryRequest};
use crate::transforms::ptl::{group_by_api_turn, ContextOverflow, OverflowKind, MAX_PTL_RETRIES};

/// The instruction added to the request of every part after the first: the summary in front
/// stands for the earlier part, and the answer must cover both.
pub const PART_INSTRUCTION: &str = "This request holds only the later part of the conversation: the first message is the summary of everything before it. Write one summary of the whole conversation: carry over everything that summary records (files, user messages, errors and fixes, decisions, pending tasks) and add what the later messages bring.";

/// Times the parts are planned again after prompt-too-long answers (each one for a smaller
/// window), before the last resort of dropping rounds.
pub const MAX_REPLANS: u32 = 2 * MAX_PTL_RETRIES;

/// What summarizing in parts produced.
pub(crate) struct PartsSummary {
    /// The summary of the whole conversation (the last part's answer).
    pub text: String,
    /// The usage of every call, summed (`None` when no call reported any).
    pub usage: Option<UsageCounts>,
    /// The last request.
    pub request: SummaryRequest,
    /// Summary calls that answered (1: the conversation fit in one request).
    pub parts: u32,
}

/// Estimated tokens of `text` (SPEC §3: UTF-16 length / 4, rounded up).
fn tokens_of(text: &str) -> u64 {
    (utf16_len(text) as u64).div_ceil(4)
}

/// What the summary request for `messages` needs of the window: its body's estimated tokens
/// plus the output reserve.
pub fn needed_tokens(model: &str, messages: &[Message], instructions: &[String]) -> u64 {
    let request = summary::build_summary_request(model, messages, instructions);
    let body = serde_json::to_string(&request).unwrap_or_default();
    tokens_of(&body) + request.max_tokens
}

/// The summary of the earlier parts as the first message of a part's request: a summary line
/// of an earlier compaction, which the request marks as such.
pub fn earlier_part_message(summary: &str) -> Message {
    Message::from_value(
        json!({"type": "user", "isCompactSummary": true, "isSidechain": false,
               "message": {"role": "user", "content": summary}}),
        "the summary of the earlier parts",
    )
    .expect("the summary line is well-formed")
}

/// A smaller window after the summarizer refused a request it was told needs `needed`
/// tokens (`max_tokens` of them the output reserve): what the answer's numbers imply, scaled
/// by its limit over its count (so the estimate's own error cancels out), or less its gap,
/// or halved when it gives neither; with 5 % to spare. The Anthropic `prompt is too long` and
/// Gemini forms count the input only, the others input and output.
pub fn shrink_window(window: u64, needed: u64, max_tokens: u64, overflow: &ContextOverflow) -> u64 {
    let input_only = matches!(
        overflow.kind,
        OverflowKind::PromptTooLong | OverflowKind::Gemini
    );
    let reserve = if input_only {
        max_tokens.min(needed)
    } else {
        0
    };
    let ours = needed - reserve;
    let implied = match (overflow.actual, overflow.limit, overflow.gap) {
        (Some(actual), Some(limit), _) if actual > 0 && limit < actual => {
            (ours as u128 * limit as u128 / actual as u128) as u64
        }
        (_, _, Some(gap)) if gap < ours => ours - gap,
        _ => ours / 2,
    };
    (implied - implied / 20 + reserve).min(window.min(needed).saturating_sub(1))
}

fn attempt_max_tokens(model: &str) -> u64 {
    summary::summary_max_tokens(model)
}

/// The request of one part: the earlier summary, if any, then the messages of `groups`.
fn part_messages(
    messages: &[Message],
    groups: &[std::ops::Range<usize>],
    earlier: Option<&str>,
) -> Vec<Message> {
    let mut out = Vec::new();
    out.extend(earlier.map(earlier_part_message));
    if let (Some(first), Some(last)) = (groups.first(), groups.last()) {
        out.extend_from_slice(&messages[first.start..last.end]);
    }
    out
}

/// The instructions of a part's request.
fn part_instructions(instructions: &[String], chained: bool) -> Vec<String> {
    let mut v = instructions.to_vec();
    if chained {
        v.push(PART_INSTRUCTION.to_string());
    }
    v
}

/// How many of `groups` (at least one) the next part takes: as many as fit `window` with the
/// earlier summary in front.
fn plan_part(
    model: &str,
    messages: &[Message],
    groups: &[std::ops::Range<usize>],
    earlier: Option<&str>,
    instructions: &[String],
    window: u64,
) -> usize {
    let fits = |k: usize| {
        needed_tokens(
            model,
            &part_messages(messages, &groups[..k], earlier),
            instructions,
        ) <= window
    };
    if fits(groups.len()) {
        return groups.len();
    }
    // The largest k that fits (a request grows with k): binary search, at least one group.
    let (mut lo, mut hi) = (1usize, groups.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

fn add_usage(sum: &mut Option<UsageCounts>, u: Option<UsageCounts>) {
    if let Some(u) = u {
        let s = sum.get_or_insert_with(UsageCounts::default);
        s.input_tokens += u.input_tokens;
        s.output_tokens += u.output_tokens;
        s.cache_creation_input_tokens += u.cache_creation_input_tokens;
        s.cache_read_input_tokens += u.cache_read_input_tokens;
    }
}

/// Summarizes `messages` (what a full compaction summarizes: media and re-announced
/// attachments already stripped) in as many parts as `window` requires, oldest first, each
/// later part with the summary so far in front. A refused part is planned again for the
/// window the answer implies ([`shrink_window`]); a part of one API turn that is still too
/// long falls back to dropping its oldest rounds (SPEC §8).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn summarize_in_parts<E: Environment + ?Sized>(
    env: &E,
    model: &str,
    messages: &[Message],
    window: u64,
    instructions: &[String],
    retry: &RetryPolicy,
    retries: &mut Retries,
) -> Result<PartsSummary, CompactError> {
    let groups = group_by_api_turn(messages, 0)?;
    if groups.is_empty() {
        return Err(CompactError::new(
            ErrorCode::NothingToCompact,
            "there is no conversation to summarize",
        ));
    }
    let mut window = window;
    let mut next = 0usize;
    let mut earlier: Option<String> = None;
    let mut usage = None;
    let mut parts = 0u32;
    let mut replans = 0u32;
    let mut n = 0u32;
    loop {
        let rest = &groups[next..];
        let part_instr = part_instructions(instructions, earlier.is_some());
        let take = plan_part(
            model,
            messages,
            rest,
            earlier.as_deref(),
            &part_instr,
            window,
        );
        let attempt = part_messages(messages, &rest[..take], earlier.as_deref());
        let last = take == rest.len();
        if !(last && earlier.is_none()) {
            env.progress(&ProgressEvent {
                attempt: Some(parts + 1),
                tokens: Some(needed_tokens(model, &attempt, &part_instr)),
                detail: Some(format!(
                    "summarizing API turns {}–{} of {}{}",
                    next + 1,
                    next + take,
                    groups.len(),
                    if earlier.is_some() {
                        " after the summary of the earlier ones"
                    } else {
                        ""
                    }
                )),
                ..ProgressEvent::phase("summarizingPart")
            });
        }
        let answer = send_summary(
            env,
            model,
            &attempt,
            None,
            &part_instr,
            retry,
            retries,
            &mut n,
        )
        .await?;
        let (text, u, request) = match answer {
            Sent::Summary(text, u, request) => (text, u, request),
            Sent::TooLong(overflow, e) if take > 1 && replans < MAX_REPLANS => {
                replans += 1;
                retries.prompt_too_long += 1;
                let needed = needed_tokens(model, &attempt, &part_instr);
                window = shrink_window(window, needed, attempt_max_tokens(model), &overflow);
                env.progress(&ProgressEvent {
                    tokens: Some(window),
                    detail: Some(format!(
                        "the summarizer refused {needed} estimated tokens ({}); planning smaller parts",
                        e.message.chars().take(200).collect::<String>()
                    )),
                    ..ProgressEvent::phase("retryPromptTooLong")
                });
                continue;
            }
            Sent::TooLong(overflow, e) => {
                // The last resort: this part's oldest rounds are dropped (SPEC §8).
                truncating(
                    env,
                    model,
                    std::borrow::Cow::Owned(attempt),
                    None,
                    &part_instr,
                    retry,
                    retries,
                    &mut n,
                    Some((overflow, e)),
                )
                .await?
            }
        };
        parts += 1;
        add_usage(&mut usage, u);
        if last {
            return Ok(PartsSummary {
                text,
                usage,
                request,
                parts,
            });
        }
        earlier = Some(text);
        next += take;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overflow_of(
        kind: OverflowKind,
        actual: Option<u64>,
        limit: Option<u64>,
        gap: Option<u64>,
    ) -> ContextOverflow {
        ContextOverflow {
            kind,
            actual,
            limit,
            gap,
        }
    }

    #[test]
    fn a_refusal_shrinks_the_window_below_what_was_refused() {
        use OverflowKind::*;
        // Input and output counted (`A + B > C`): scaled by limit / actual.
        let o = overflow_of(InputPlusMaxTokens, Some(200), Some(100), None);
        assert_eq!(shrink_window(1_000_000, 100_000, 20_000, &o), 47_500);
        // Input only (`prompt is too long`): the input is scaled, the reserve kept.
        let o = overflow_of(PromptTooLong, Some(160), Some(80), None);
        assert_eq!(shrink_window(1_000_000, 100_000, 20_000, &o), 58_000);
        // The gap alone.
        let o = overflow_of(OpenAi, None, None, Some(40_000));
        assert_eq!(shrink_window(1_000_000, 100_000, 20_000, &o), 57_000);
        // Nothing parsed: halved.
        let o = overflow_of(Generic, None, None, None);
        assert_eq!(shrink_window(1_000_000, 100_000, 20_000, &o), 47_500);
        // Never at or above what was refused, nor above the window known before.
        let o = overflow_of(InputPlusMaxTokens, Some(100), Some(99), None);
        assert_eq!(shrink_window(30_000, 100_000, 20_000, &o), 29_999);
        let o = overflow_of(InputPlusMaxTokens, Some(10), Some(10), None);
        assert!(shrink_window(1_000, 100_000, 20_000, &o) < 1_000);
    }

    #[test]
    fn the_earlier_summary_is_sent_as_such() {
        let m = earlier_part_message("the story so far");
        assert!(m.is_compact_summary());
        let r = summary::build_summary_request("claude-opus-4-6", &[m], &[]);
        let messages = r.messages_json();
        let first = messages[0]["content"][0]["text"].as_str().unwrap();
        assert!(
            first.starts_with(summary::EARLIER_SUMMARY_MARKER),
            "{first}"
        );
        assert!(first.contains("the story so far"));
    }
}
