//! Summarizing in parts (`context.summarizeInParts`): a conversation too long for the
//! summarizer's window is summarized oldest part first, and each later part is sent with the
//! summary so far in front of it, so the last answer summarizes every round. Dropping the
//! oldest rounds (SPEC §8) stays only as the last resort, for one round that does not fit
//! the window on its own; what it loses shows in the loss report.
//!
//! The window is known up front (`config.summaryContextWindow`, else the summary model's own
//! window), or learnt from a prompt-too-long answer: the parts are then planned again, from
//! the part that was refused, for the window the answer implies. Each part fills the room the
//! window leaves the request ([`Room`]) besides the summary's reserve
//! ([`summary::summary_output_reserve`]), and asks for what the window leaves its input as
//! `max_tokens`, so a small window (8K, 16K) takes as few parts as it can hold and never asks
//! for more output than it has. Parts end between API turns ([`group_by_api_turn`]), so a
//! tool call and its result are always in the same part.

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

/// The estimated tokens of the summary request for `messages`: its body (the input; its
/// `max_tokens` is set from them, see [`Room::max_tokens`]).
pub fn request_tokens(model: &str, messages: &[Message], instructions: &[String]) -> u64 {
    let request = summary::build_summary_request(model, messages, instructions);
    tokens_of(&serde_json::to_string(&request).unwrap_or_default())
}

/// What a part's request may take of the summary window: `input` tokens of request, with
/// `output` tokens left for the summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Room {
    /// The most tokens a part's request may have (its body, estimated).
    pub input: u64,
    /// The least room left for the summary.
    pub output: u64,
}

impl Room {
    /// The room in a window of `window` tokens for the summary model `model`: the summary's
    /// reserve ([`summary::summary_output_reserve`]: the SPEC's 20,000 where the window has
    /// room for it), the rest for the request.
    pub fn of(model: &str, window: u64) -> Room {
        let output = summary::summary_output_reserve(summary::summary_max_tokens(model), window);
        Room {
            input: window.saturating_sub(output),
            output,
        }
    }

    /// The window this room is a share of.
    pub fn window(self) -> u64 {
        self.input + self.output
    }

    /// `max_tokens` of a request of `input` tokens: all the window leaves it, up to the
    /// model's `max_tokens` ([`summary::summary_max_tokens_within`]).
    pub fn max_tokens(self, model: &str, input: u64) -> u64 {
        summary::summary_max_tokens_within(summary::summary_max_tokens(model), self.window(), input)
    }

    /// The room after the summarizer refused a request of `input` tokens that asked for
    /// `max_tokens`: the window the answer implies ([`shrink_window`]); an answer that counts
    /// the input only (Anthropic's `prompt is too long`, Gemini's) limits the input and keeps
    /// the output's room.
    pub fn after_refusal(
        self,
        model: &str,
        input: u64,
        max_tokens: u64,
        overflow: &ContextOverflow,
    ) -> Room {
        let needed = input + max_tokens;
        let window = shrink_window(self.window(), needed, max_tokens, overflow);
        if counts_input_only(overflow) {
            let reserve = max_tokens.min(needed);
            Room {
                input: window.saturating_sub(reserve).min(self.input),
                output: self.output,
            }
        } else {
            Room::of(model, window)
        }
    }
}

/// Whether a prompt-too-long answer's numbers count the input only (Anthropic's `prompt is
/// too long`, Gemini's), not the input and `max_tokens` together.
fn counts_input_only(overflow: &ContextOverflow) -> bool {
    matches!(
        overflow.kind,
        OverflowKind::PromptTooLong | OverflowKind::Gemini
    )
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
    let reserve = if counts_input_only(overflow) {
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

/// How many of `groups` (at least one) the next part takes: as many as fit a request of
/// `budget` tokens with the earlier summary in front.
fn plan_part(
    model: &str,
    messages: &[Message],
    groups: &[std::ops::Range<usize>],
    earlier: Option<&str>,
    instructions: &[String],
    budget: u64,
) -> usize {
    let fits = |k: usize| {
        request_tokens(
            model,
            &part_messages(messages, &groups[..k], earlier),
            instructions,
        ) <= budget
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
    let mut room = Room::of(model, window);
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
            room.input,
        );
        let attempt = part_messages(messages, &rest[..take], earlier.as_deref());
        let input = request_tokens(model, &attempt, &part_instr);
        let max_tokens = room.max_tokens(model, input);
        let last = take == rest.len();
        if !(last && earlier.is_none()) {
            env.progress(&ProgressEvent {
                attempt: Some(parts + 1),
                tokens: Some(input + max_tokens),
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
            max_tokens,
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
                let needed = input + max_tokens;
                room = room.after_refusal(model, input, max_tokens, &overflow);
                env.progress(&ProgressEvent {
                    tokens: Some(room.window()),
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
                    (max_tokens, max_tokens),
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

    /// The room a part has: the SPEC's 20,000 for the summary wherever the window has room
    /// for it; a small window shares itself. A refusal shrinks the room below what was refused;
    /// an input-only refusal keeps the summary's room.
    #[test]
    fn a_part_fills_the_room_its_window_leaves_the_summary() {
        let model = "claude-sonnet-4-5";
        assert_eq!(
            Room::of(model, 200_000),
            Room {
                input: 180_000,
                output: 20_000
            }
        );
        assert_eq!(
            Room::of(model, 16_384),
            Room {
                input: 12_288,
                output: 4_096
            }
        );
        assert_eq!(
            Room::of(model, 8_192),
            Room {
                input: 6_144,
                output: 2_048
            }
        );
        // max_tokens: what the window leaves the request, at most 20,000.
        let small = Room::of(model, 16_384);
        assert_eq!(small.max_tokens(model, 12_288), 4_096);
        assert_eq!(small.max_tokens(model, 900), 15_484);
        assert_eq!(Room::of(model, 200_000).max_tokens(model, 900), 20_000);
        // Refused (input and output counted): the window the answer implies, shared again.
        let o = overflow_of(
            OverflowKind::InputPlusMaxTokens,
            Some(16_384),
            Some(8_192),
            None,
        );
        let r = small.after_refusal(model, 12_000, 4_384, &o);
        assert!(
            r.window() < 16_384 && r.input + r.output == r.window(),
            "{r:?}"
        );
        assert_eq!(r, Room::of(model, r.window()));
        // Refused for its input alone: the input's room shrinks, the summary's stays.
        let o = overflow_of(OverflowKind::PromptTooLong, Some(12_000), Some(8_000), None);
        let r = small.after_refusal(model, 12_000, 4_384, &o);
        assert_eq!(r.output, 4_096);
        assert!(r.input < 8_000, "{r:?}");
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
