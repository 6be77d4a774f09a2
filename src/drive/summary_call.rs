//! The summary call (SPEC §7 step 4, §8): the request fitted to the summary model's window,
//! then sent with prompt-too-long truncation and transient retries.

use crate::drive::env::{CallError, Environment, ProgressEvent};
use crate::drive::failure::{check_abort, CompactError};
use crate::drive::retry::{Retry, RetryPolicy};
use crate::measure::calibration::Fit;
use crate::model::error::ErrorCode;
use crate::model::messages::{Block, Message};
use crate::model::view::UsageCounts;
use crate::summarize::summary::{
    self, RequestMessage, SummaryProblem, SummaryRequest, TextMessage,
};
use std::borrow::Cow;

use crate::transforms::ptl::{
    parse_context_overflow_error, ptl_marker_message, truncate_head, ContextOverflow, Kept,
    OverflowKind, Truncation, MAX_PTL_RETRIES,
};

/// Retries the summary request used.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Retries {
    /// Prompt-too-long retries (oldest rounds dropped).
    pub prompt_too_long: u32,
    /// Transient-failure retries (after a backoff).
    pub transient: u32,
    /// The time waited before those retries, in ms (all waits of a compaction together stay
    /// within [`Environment::wait_limit_ms`]).
    pub waited_ms: u64,
}

/// Cuts the oldest rounds before the first attempt when the request cannot fit the summary
/// model's window (`config.summaryContextWindow`, or the summary model's own window) with
/// `reserve` tokens left for the summary. Also gives the rendered messages of the attempt it
/// returns (the request is then made from them, not rendered a second time) and the tokens of
/// its input (the rendered messages and `instruction_tokens`), which set its `max_tokens`.
/// The messages are measured in the model's tokens by `fit`'s ratio where the usage seen ran
/// above the estimate (never below it: an estimate that runs high only leaves room).
pub(crate) async fn fit_summary_window<'a, E: Environment + ?Sized>(
    env: &E,
    mut attempt: Cow<'a, [Message]>,
    window: u64,
    reserve: u64,
    instruction_tokens: u64,
    fit: Option<Fit>,
) -> Result<(Cow<'a, [Message]>, Vec<TextMessage>, u64), CompactError> {
    let ratio = fit.map_or(1.0, |f| f.ratio);
    const ROUNDS: u32 = 16;
    for round in 0..=ROUNDS {
        // Each round renders the whole attempt: a checkpoint before each.
        crate::drive::failure::checkpoint(env, "fitting the summary request").await?;
        // The size of what is actually sent: the rendered request (huge tool results are
        // cut there), not the raw messages.
        let rendered = summary::render_conversation(&attempt);
        let conversation = scaled(rendered_tokens(&rendered, env.text_counter())?, ratio);
        let input = conversation + instruction_tokens;
        let needed = input + reserve;
        if needed <= window || round == ROUNDS {
            return Ok((attempt, rendered, input));
        }
        // The rounds dropped are measured on the messages, not on their rendering (which
        // adds its JSON): the gap is scaled to the messages' measure, or dropping would
        // overshoot, down to the last round for a window a few rounds wide.
        let gap = needed - window;
        let measured = match env.text_counter() {
            Some(c) => crate::measure::tokens::estimate_range(
                &crate::measure::tokens::CountedMessages::new(&attempt, c),
                0..attempt.len(),
            )?,
            None => crate::measure::tokens::estimate_range(&*attempt, 0..attempt.len())?,
        };
        let gap = match conversation {
            0 => gap,
            n => ((gap as u128 * measured as u128).div_ceil(n as u128) as u64).max(1),
        };
        let overflow = ContextOverflow {
            kind: OverflowKind::PromptTooLong,
            actual: Some(needed),
            limit: Some(window),
            gap: Some(gap),
        };
        match truncate_counted(env, &attempt, &overflow)? {
            Some(t) => attempt = Cow::Owned(apply_truncation(&attempt, &t)),
            None => return Ok((attempt, rendered, input)),
        }
    }
    unreachable!("the last round returns")
}

/// `window` in the measure of the estimate where the usage seen ran above it (`fit`'s ratio
/// past 1): what the estimate may fill of it.
pub(crate) fn in_estimate(window: u64, fit: Option<Fit>) -> u64 {
    match fit.map(|f| f.ratio) {
        Some(r) if r.is_finite() && r > 1.0 => (window as f64 / r) as u64,
        _ => window,
    }
}

/// `tokens` times `ratio` when the ratio is above 1 (and finite), rounded up; else `tokens`.
fn scaled(tokens: u64, ratio: f64) -> u64 {
    if ratio.is_finite() && ratio > 1.0 {
        (tokens as f64 * ratio).ceil() as u64
    } else {
        tokens
    }
}

/// Tokens of a summary request besides its conversation: the system prompt, the instruction
/// (with `instructions`) and the JSON around them, as the request for `model` writes them; the
/// texts in the caller's tokens when it gave a tokenizer (`counter`), as [`rendered_tokens`]
/// counts. With [`rendered_tokens`] of the conversation, at least the estimate of the whole
/// request body, so that the `max_tokens` set from them never takes the window past its size.
pub(crate) fn prompt_tokens(
    model: &str,
    instructions: &[String],
    counter: Option<&dyn crate::measure::tokens::TextCounter>,
) -> crate::Result<u64> {
    let frame = summary::summary_request_from(model, Vec::new(), instructions);
    let units = crate::model::view::utf16_len(&serde_json::to_string(&frame).unwrap_or_default());
    let Some(counter) = counter else {
        return Ok((units as u64).div_ceil(4));
    };
    let instruction = summary::instruction_text(instructions);
    let text_units = crate::model::view::utf16_len(&instruction)
        + crate::model::view::utf16_len(summary::SUMMARY_SYSTEM_PROMPT);
    Ok(
        crate::measure::tokens::text_tokens_counted(&instruction, Some(counter))?
            + crate::measure::tokens::text_tokens_counted(
                summary::SUMMARY_SYSTEM_PROMPT,
                Some(counter),
            )?
            + (units.saturating_sub(text_units) as u64).div_ceil(4),
    )
}

/// Tokens of a rendered summary request's messages: their JSON's estimate, or with the
/// caller's tokenizer (`counter`) its count of every text plus the estimate of the JSON
/// around them, so the fit to the summary model's window is in the tokens the caller's other
/// counts are in.
pub(crate) fn rendered_tokens(
    rendered: &[TextMessage],
    counter: Option<&dyn crate::measure::tokens::TextCounter>,
) -> crate::Result<u64> {
    let units = summary::messages_units(rendered);
    let Some(counter) = counter else {
        return Ok((units as u64).div_ceil(4));
    };
    let mut tokens = 0;
    let mut text_units = 0;
    for part in rendered.iter().flat_map(|m| &m.content) {
        tokens += crate::measure::tokens::text_tokens_counted(&part.text, Some(counter))?;
        text_units += crate::model::view::utf16_len(&part.text);
    }
    Ok(tokens + (units.saturating_sub(text_units) as u64).div_ceil(4))
}

/// [`truncate_head`] for a gap the API reported (in the model's tokens): the rounds dropped
/// are measured in the caller's tokens when it gave a tokenizer, as the compaction's other
/// counts are, so that they cover the gap as the caller's tokenizer sees it.
fn truncate_counted<E: Environment + ?Sized>(
    env: &E,
    attempt: &[Message],
    overflow: &ContextOverflow,
) -> crate::Result<Option<Truncation>> {
    match env.text_counter() {
        Some(c) => {
            let counted = crate::measure::tokens::CountedMessages::new(attempt, c);
            crate::transforms::ptl::truncate_head_measured(attempt, Some(overflow), true, &|r| {
                crate::measure::tokens::estimate_range(&counted, r)
            })
        }
        None => truncate_head(attempt, Some(overflow), true),
    }
}

/// The conversation after a truncation ([`Truncation::layout`]).
fn apply_truncation(messages: &[Message], t: &Truncation) -> Vec<Message> {
    t.layout(messages)
        .into_iter()
        .map(|k| match k {
            Kept::Message(i) => messages[i].clone(),
            Kept::Marker { transcript } => ptl_marker_message(transcript, None),
        })
        .collect()
}

/// What one summary request came back with, transient retries done.
pub(crate) enum Sent {
    /// The summary text, the usage reported and the request that produced it.
    Summary(String, Option<UsageCounts>, SummaryRequest),
    /// The summarizer said the request is too long for its window.
    TooLong(ContextOverflow, CallError),
}

/// Sends the summary request for `attempt`, retrying transient failures (after a backoff);
/// a prompt-too-long answer is handed back for the caller's rule (truncation, or parts).
/// `n` counts the attempts across calls (for the progress events). `rendered`: `attempt`
/// already rendered ([`summary::render_conversation`]), when the caller has it. `max_tokens`:
/// the request's, fitted to the summary window
/// ([`summary::summary_max_tokens_within`]).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn send_summary<E: Environment + ?Sized>(
    env: &E,
    model: &str,
    attempt: &[Message],
    rendered: Option<Vec<TextMessage>>,
    instructions: &[String],
    max_tokens: u64,
    retry: &RetryPolicy,
    retries: &mut Retries,
    n: &mut u32,
) -> Result<Sent, CompactError> {
    // The same request for every transient retry.
    let mut request = match rendered {
        Some(r) => summary::summary_request_from(model, r, instructions),
        None => summary::build_summary_request(model, attempt, instructions),
    };
    request.max_tokens = max_tokens;
    loop {
        *n += 1;
        check_abort(env, "the summary request")?;
        env.progress(&ProgressEvent {
            attempt: Some(*n),
            ..ProgressEvent::phase("summarizing")
        });
        let e = match env.summarize(&request).await {
            Ok(response) => {
                check_abort(env, "using the summary")?;
                return match summary::summary_from_response(&response) {
                    Ok(text) => Ok(Sent::Summary(text, response.usage, request)),
                    Err(SummaryProblem::Truncated) => Err(CompactError::new(
                        ErrorCode::SummaryTruncated,
                        "the summary was cut off at max_tokens; nothing was committed",
                    )),
                    Err(SummaryProblem::Stopped(why)) => Err(CompactError::new(
                        ErrorCode::SummaryTruncated,
                        format!("the summary was cut off (stop_reason {why}); nothing was committed"),
                    )),
                    Err(SummaryProblem::Empty) => Err(CompactError::new(
                        ErrorCode::EmptySummary,
                        match &response.problem {
                            Some(p) => format!(
                                "the summarizer returned no summary text: the summarizer's answer has {p}; nothing was committed"
                            ),
                            None => "the summarizer returned no summary text; nothing was committed"
                                .to_string(),
                        },
                    )),
                };
            }
            Err(e) => e,
        };
        let e = stopped(
            e,
            "summary request aborted",
            "the summarizer timed out; nothing was committed",
        )?;
        if let Some(overflow) = parse_context_overflow_error(&e.message, e.status) {
            return Ok(Sent::TooLong(overflow, e));
        }
        if wait_to_retry(env, retry, retries, &e).await? {
            continue;
        }
        return Err(CompactError::from_call(
            ErrorCode::SummarizerFailed,
            "the summarizer failed",
            e,
        ));
    }
}

/// The summary call with prompt-too-long truncation (SPEC §8) and transient retries, asking
/// for `max_tokens` of output.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn request_summary<E: Environment + ?Sized>(
    env: &E,
    model: &str,
    attempt: Cow<'_, [Message]>,
    rendered: Option<Vec<TextMessage>>,
    instructions: &[String],
    max_tokens: u64,
    output_floor: u64,
    retry: &RetryPolicy,
    retries: &mut Retries,
) -> Result<(String, Option<UsageCounts>, SummaryRequest), CompactError> {
    let mut n = 0;
    truncating(
        env,
        model,
        attempt,
        rendered,
        instructions,
        (max_tokens, output_floor),
        retry,
        retries,
        &mut n,
        None,
    )
    .await
}

/// [`request_summary`] from a known overflow of `attempt` (`Some`: it was already refused
/// as too long, so the oldest rounds are dropped before the first send).
#[allow(clippy::too_many_arguments)]
pub(crate) async fn truncating<E: Environment + ?Sized>(
    env: &E,
    model: &str,
    mut attempt: Cow<'_, [Message]>,
    mut rendered: Option<Vec<TextMessage>>,
    instructions: &[String],
    (mut max_tokens, output_floor): (u64, u64),
    retry: &RetryPolicy,
    retries: &mut Retries,
    n: &mut u32,
    mut refused: Option<(ContextOverflow, CallError)>,
) -> Result<(String, Option<UsageCounts>, SummaryRequest), CompactError> {
    if refused.is_some() {
        rendered = None; // `attempt` is truncated before the first send
    }
    loop {
        let lower = refused
            .as_ref()
            .and_then(|(o, _)| output_within(o, max_tokens, output_floor))
            .filter(|_| retries.prompt_too_long < MAX_PTL_RETRIES);
        if let Some(lower) = lower {
            // The input fits with less output: the same rounds again, nothing dropped.
            refused = None;
            retries.prompt_too_long += 1;
            max_tokens = lower;
        }
        if let Some((overflow, e)) = refused.take() {
            if retries.prompt_too_long >= MAX_PTL_RETRIES {
                return Err(CompactError::from_call(
                    ErrorCode::PromptTooLong,
                    &format!(
                        "the summary request was still too long after {MAX_PTL_RETRIES} retries dropping the oldest turns"
                    ),
                    e,
                ));
            }
            match truncate_counted(env, &attempt, &overflow)? {
                Some(t) => {
                    retries.prompt_too_long += 1;
                    env.progress(&ProgressEvent {
                        tokens: Some(t.dropped_tokens),
                        detail: Some(format!("dropped {} oldest API rounds", t.dropped_groups)),
                        ..ProgressEvent::phase("retryPromptTooLong")
                    });
                    attempt = Cow::Owned(apply_truncation(&attempt, &t));
                }
                None => {
                    return Err(CompactError::from_call(
                        ErrorCode::PromptTooLong,
                        "the summary request is too long and no older turn is left to drop",
                        e,
                    ))
                }
            }
        }
        // `rendered` is `attempt` as given: the first send uses it (a truncation drops it).
        match send_summary(
            env,
            model,
            &attempt,
            rendered.take(),
            instructions,
            max_tokens,
            retry,
            retries,
            n,
        )
        .await?
        {
            Sent::Summary(text, usage, request) => return Ok((text, usage, request)),
            Sent::TooLong(overflow, e) => refused = Some((overflow, e)),
        }
    }
}

/// The `max_tokens` that fits a request refused as `input length and max_tokens exceed
/// context limit: A + B > C` (B being `max_tokens`): C − A, when that still leaves the
/// summary `floor` tokens or more (the room the request was fitted for; the input is as the
/// API counted it, which an estimate can miss by more than the window's spare room).
fn output_within(overflow: &ContextOverflow, max_tokens: u64, floor: u64) -> Option<u64> {
    if overflow.kind != OverflowKind::InputPlusMaxTokens {
        return None;
    }
    let input = overflow.actual?.checked_sub(max_tokens)?;
    let room = overflow.limit?.checked_sub(input)?;
    (floor..max_tokens).contains(&room).then_some(room)
}

/// The messages of a summary request, read back (those that parse). The library's own
/// text messages are built typed, without a JSON copy to read.
pub(crate) fn request_as_messages(request: &SummaryRequest) -> Vec<Message> {
    request
        .messages
        .iter()
        .filter_map(|m| match m {
            RequestMessage::Text(t) => Some(Message::api_blocks(
                crate::model::messages::Role::parse(t.role.as_str()),
                t.content
                    .iter()
                    .map(|p| Block::text(p.text.as_str()))
                    .collect(),
            )),
            RequestMessage::Raw(v) => Message::from_value(v.clone(), "request").ok(),
        })
        .collect()
}

/// A call the caller aborted, or that timed out, as the compaction's error (`ABORTED`,
/// `TIMEOUT`, with these messages); any other failure is handed back for the caller's rules.
pub(crate) fn stopped(
    e: CallError,
    aborted: &str,
    timed_out: &str,
) -> std::result::Result<CallError, CompactError> {
    if e.aborted {
        return Err(CompactError::from_call(ErrorCode::Aborted, aborted, e));
    }
    if e.timed_out {
        return Err(CompactError::from_call(ErrorCode::Timeout, timed_out, e));
    }
    Ok(e)
}

/// After the summarizer's error `e`: when it is transient and retries are left, reports the
/// wait, sleeps the backoff and answers `true` (send again); `false` when it is not retried.
/// A wait that would take the compaction's waits past the caller's time limit
/// ([`Environment::wait_limit_ms`], `summaryTimeoutMs`) fails at once with `TIMEOUT`; a server
/// asking for a wait longer than [`crate::drive::retry::MAX_SERVER_DELAY_MS`] fails at once
/// with `SUMMARIZER_FAILED`. Both say why; the summarizer's error stays the cause. An abort
/// during the wait ends it (`ABORTED`).
pub(crate) async fn wait_to_retry<E: Environment + ?Sized>(
    env: &E,
    retry: &RetryPolicy,
    retries: &mut Retries,
    e: &CallError,
) -> Result<bool, CompactError> {
    let budget = env
        .wait_limit_ms()
        .map(|limit| limit.saturating_sub(retries.waited_ms));
    let delay = match retry.decide(e, retries.transient, env.random(), budget) {
        Retry::No => return Ok(false),
        Retry::After(ms) => ms,
        Retry::TooLong {
            wait_ms,
            limit_ms,
            deadline: true,
        } => {
            return Err(CompactError::from_call(
                ErrorCode::Timeout,
                &format!(
                    "the summarizer failed and a retry would wait {wait_ms} ms, past the time limit (summaryTimeoutMs: {limit_ms} ms left of {} ms); not retried, nothing was committed",
                    env.wait_limit_ms().unwrap_or(limit_ms)
                ),
                e.clone(),
            ))
        }
        Retry::TooLong {
            wait_ms, limit_ms, ..
        } => {
            return Err(CompactError::from_call(
                ErrorCode::SummarizerFailed,
                &format!(
                    "the summarizer failed and asked to retry after {wait_ms} ms, longer than the longest wait ({limit_ms} ms); not retried, nothing was committed"
                ),
                e.clone(),
            ))
        }
    };
    retries.transient += 1;
    retries.waited_ms = retries.waited_ms.saturating_add(delay);
    env.progress(&ProgressEvent {
        detail: Some(format!("waiting {delay} ms after: {}", e.message)),
        ..ProgressEvent::phase("retryTransient")
    });
    env.sleep(delay).await.map_err(|e| {
        CompactError::from_call(ErrorCode::Aborted, "aborted while waiting to retry", e)
    })?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::measure::tokens::TwoCharsAToken as Dense;

    /// `A + B > C`: the output that fits is C − A, never below the room the request was
    /// fitted for; other refusals (and one that leaves too little) drop rounds instead.
    #[test]
    fn a_refusal_of_input_plus_max_tokens_lowers_the_output_when_the_room_allows() {
        let refusal = |a: u64, b: u64, c: u64| {
            crate::transforms::ptl::parse_context_overflow_error(
                &format!("input length and `max_tokens` exceed context limit: {a} + {b} > {c}, decrease input length or `max_tokens` and try again"),
                Some(400),
            )
            .unwrap()
        };
        // A 32K window, fitted for 16,384 of output: the input was 13,987 by the API's count.
        assert_eq!(
            output_within(&refusal(13_987, 20_000, 32_768), 20_000, 16_384),
            Some(18_781)
        );
        assert_eq!(
            output_within(&refusal(17_000, 20_000, 32_768), 20_000, 16_384),
            None
        );
        // A 200K window keeps its 20,000: a long input is dropped from, as SPEC §8 says.
        assert_eq!(
            output_within(&refusal(188_059, 20_000, 200_000), 20_000, 20_000),
            None
        );
        let ptl = crate::transforms::ptl::parse_context_overflow_error(
            "prompt is too long: 40000 tokens > 32768 maximum",
            Some(400),
        )
        .unwrap();
        assert_eq!(output_within(&ptl, 20_000, 1_024), None);
    }

    /// The request's messages read back typed are those its JSON reads back to.
    #[test]
    fn request_messages_read_back_as_their_json_reads() {
        let m = Message::parse_all(json!([
            {"role": "user", "content": "fix the ünïcode bug"},
            {"role": "assistant", "content": [{"type": "text", "text": "on it"},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a.rs"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "fn main() {}"}]},
        ]))
        .unwrap();
        let mut request = summary::build_summary_request("claude-sonnet-4-5", &m, &[]);
        request.messages.push(RequestMessage::Raw(
            json!({"role": "assistant", "content": "raw"}),
        ));
        let typed = request_as_messages(&request);
        let from_json: Vec<Message> = request
            .messages_json()
            .into_iter()
            .map(|v| Message::from_value(v, "request").unwrap())
            .collect();
        assert_eq!(typed.len(), request.messages.len());
        assert_eq!(typed, from_json);
    }

    #[test]
    fn the_request_is_fitted_in_the_callers_tokens() {
        let m = Message::parse_all(json!([
            {"role": "user", "content": "a".repeat(4_000)},
            {"role": "assistant", "content": "b".repeat(4_000)},
        ]))
        .unwrap();
        let rendered = summary::render_conversation(&m);
        let plain = rendered_tokens(&rendered, None).unwrap();
        assert_eq!(
            plain,
            (summary::messages_units(&rendered) as u64).div_ceil(4)
        );
        let counted = rendered_tokens(&rendered, Some(&Dense)).unwrap();
        // 8,000 characters of text at 2 a token, and the JSON around them as estimated.
        assert!((4_000..4_050).contains(&counted), "{counted}");
        assert!(counted > plain * 19 / 10, "{counted} vs {plain}");
    }
}
