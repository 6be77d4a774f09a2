//! Pre-emptive background summaries: compaction nobody waits for.
//!
//! When the context crosses an early line ([`early_line`]: by default halfway between the
//! warning line and the auto-compact threshold), the summary of the conversation so far is
//! written in the background ([`summarize_ahead`]) while the conversation goes on; each later
//! one is chained (the summary so far in front of the messages since its cut), so refreshing
//! it costs little. At the threshold, [`swap`] puts that summary in place of the messages
//! before its cut and keeps every message since the cut verbatim, as session-memory
//! compaction does — no model call on the critical path.
//!
//! The swap does not apply (and today's path runs) when the messages since the cut are too
//! large — the complete context it leaves, as the next request sends it (the line learned
//! from the usage seen, system prompt and tools included, at the estimate of the summary, the
//! kept messages and the restored attachments), would exceed [`MAX_POST_COMPACT_RATIO`] times
//! the synchronous path's (the same without the kept messages; [`post_compact_fits`]) — or
//! when the summary belongs to a conversation that has changed since, or it failed or was
//! aborted. Everything else is a compaction like any other: the PreCompact
//! hooks run when the summary is started (their instructions shape it), restoration,
//! pinned content, SessionStart and PostCompact hooks, the size check and the loss report
//! when it is swapped in.

use crate::drive::autocompact::{
    auto_compact, auto_compact_guard, decide_for, AutoCompactOutcome, ShouldAutoCompactOptions,
    Tracking,
};
use crate::drive::env::{Environment, ProgressEvent};
use crate::drive::failure::CompactError;
use crate::drive::parts::{earlier_part_message, PART_INSTRUCTION};
use crate::drive::pipeline::{
    finish, last_user_request, pre_compact_hooks, summarize_messages, summary_input,
    CompactContext, CompactionResult, Finish, PreCompactOutcome, SizeBefore,
};
use crate::drive::retry::RetryPolicy;
use crate::drive::summary_call::Retries;
use crate::measure::calibration::Fit;
use crate::measure::thresholds::{auto_compact_threshold, WARNING_THRESHOLD_BUFFER_TOKENS};
use crate::measure::tokens::{
    active_start, estimate_all, estimate_range, text_tokens, text_tokens_counted,
    token_count_with_estimation,
};
use crate::model::config::Config;
use crate::model::error::{ErrorCode, Result};
use crate::model::messages::Message;
use crate::model::view::{ConversationView, UsageCounts};
use crate::transforms::boundary::Trigger;
use crate::transforms::ptl::group_by_api_turn;

pub use crate::drive::bound::{
    not_applicable, post_compact_fits, PostCompactSizes, Refusal, MAX_POST_COMPACT_RATIO,
};

/// The default early line for `model`, before any turn is seen: halfway between the warning
/// line (threshold − 20,000) and the auto-compact threshold — 157,000 tokens for a 200K
/// model whose threshold is 167,000. [`EarlyLine::auto`] moves it down as turns grow.
pub fn early_line(model: &str, config: &Config) -> u64 {
    EarlyLine::below(auto_compact_threshold(model, config)).at(0)
}

/// Where summaries written ahead start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EarlyLine {
    /// At this many tokens, as the caller set it.
    Fixed(u64),
    /// The default ([`EarlyLine::auto`]): `line` ([`early_line`]), moved down to `threshold`
    /// minus the largest turn seen, but never below `floor` (the warning line): a summary
    /// takes a while to write, and one turn as large as the largest seen could otherwise
    /// carry the count from the line over the threshold before the summary lands.
    Auto {
        /// The line before any turn is seen.
        line: u64,
        /// The lowest it goes: the warning line.
        floor: u64,
        /// The auto-compact threshold.
        threshold: u64,
    },
}

impl EarlyLine {
    /// The default for `model` under `config` (see [`EarlyLine::Auto`]).
    pub fn auto(model: &str, config: &Config) -> EarlyLine {
        EarlyLine::below(auto_compact_threshold(model, config))
    }

    /// The automatic line below an auto-compact `threshold` (see [`EarlyLine::Auto`]): halfway
    /// between the warning line (`threshold` − 20,000) and the threshold before any turn is
    /// seen, never below the warning line. [`EarlyLine::auto`] is this at the model's
    /// threshold; the simulator uses it at a policy's own.
    pub fn below(threshold: u64) -> EarlyLine {
        let buffer = WARNING_THRESHOLD_BUFFER_TOKENS.min(threshold);
        EarlyLine::Auto {
            line: threshold - buffer / 2,
            floor: threshold - buffer,
            threshold,
        }
    }

    /// The line in tokens when the largest turn seen between two checks is `headroom`.
    pub fn at(&self, headroom: u64) -> u64 {
        match *self {
            EarlyLine::Fixed(n) => n,
            EarlyLine::Auto {
                line,
                floor,
                threshold,
            } => line.min(threshold.saturating_sub(headroom)).max(floor),
        }
    }
}

/// A summary written ahead of the threshold.
#[derive(Clone, Debug)]
pub struct Ahead {
    /// It stands for `messages[..cut]`; the messages from `cut` on are kept verbatim.
    pub cut: usize,
    /// The summary text.
    pub summary: String,
    /// The usage of its call(s), when reported.
    pub usage: Option<UsageCounts>,
    /// What the PreCompact hooks gave when the first summary of the chain was started.
    pub pre: PreCompactOutcome,
    /// Summary calls behind it (a chain of refreshes counts each).
    pub calls: u32,
}

/// Where a summary started now cuts: at the start of the latest API turn (that turn, whose
/// tool results may still be coming, stays verbatim; a tool call and its result are never
/// split). `None` when there is no earlier turn to summarize.
pub fn cut_point<V: ConversationView + ?Sized>(view: &V) -> Result<Option<usize>> {
    let start = active_start(view)?;
    let groups = group_by_api_turn(view, start)?;
    Ok(groups
        .last()
        .map(|g| g.start)
        .filter(|&c| c > start && groups.len() > 1))
}

/// Where a summary started now cuts ([`cut_point`]) and what it leaves after the cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AheadCut {
    /// The cut: the summary covers the messages before it.
    pub cut: usize,
    /// The estimated tokens after the cut (the latest turn, kept verbatim).
    pub tail: u64,
    /// The turn after the cut still waits for its tool results.
    pub pending: bool,
}

/// [`cut_point`], with the estimate of what the cut leaves and whether that turn still waits
/// for tool results; `None` when there is no earlier turn to summarize.
pub fn ahead_cut<V: ConversationView + ?Sized>(view: &V) -> Result<Option<AheadCut>> {
    let Some(cut) = cut_point(view)? else {
        return Ok(None);
    };
    let start = active_start(view)?;
    Ok(Some(AheadCut {
        cut,
        tail: estimate_range(view, cut..view.len())?,
        pending: crate::transforms::boundary::pending_turn(view, start)?.is_some(),
    }))
}

/// Writes the summary of `messages[..cut]`, chained after `earlier` when given (its summary
/// in front of `messages[earlier.cut..cut]`). The PreCompact hooks run for the first of a
/// chain (trigger `auto`). Its own progress events, `start` (the tokens it summarizes; only
/// when `announce` is set: a [`catch_up`] after a swap that announced the compaction does not
/// announce it again) and `summarized`, are marked `background` when `background` is set (a
/// summary written ahead; not a [`catch_up`], which the conversation waits for); the
/// environment of a summary written ahead marks the summary call's (`summarizing`, retries)
/// itself (the bindings' `JsEnv::for_background`),
/// so the pipeline is not instantiated a second time for a wrapper.
pub async fn summarize_ahead<E: Environment + ?Sized>(
    env: &E,
    messages: &[Message],
    (cut, background, announce): (usize, bool, bool),
    earlier: Option<&Ahead>,
    ctx: &CompactContext,
    retry: &RetryPolicy,
) -> std::result::Result<Ahead, CompactError> {
    let start = active_start(messages)?;
    if announce {
        env.progress(&ProgressEvent {
            tokens: Some(estimate_range(messages, start.min(cut)..cut)?),
            background,
            ..ProgressEvent::phase("start")
        });
    }
    let pre = match earlier {
        Some(e) => e.pre.clone(),
        None => {
            let pre_tokens = token_count_with_estimation(&messages[..cut])?.total;
            pre_compact_hooks(
                env,
                ctx,
                Trigger::Auto,
                None,
                pre_tokens,
                serde_json::json!({"preemptive": true}),
            )
            .await?
        }
    };
    let mut instructions: Vec<String> = pre.instructions.iter().cloned().collect();
    instructions.extend(crate::drive::pipeline::summary_length_instruction(
        ctx,
        ctx.calibration.as_ref().and_then(|c| c.fit()).as_ref(),
    ));
    let (from, mut input) = match earlier {
        Some(e) if e.cut <= cut => {
            instructions.push(PART_INSTRUCTION.to_string());
            (e.cut.max(start), vec![earlier_part_message(&e.summary)])
        }
        // The system messages that open the conversation are kept, not summarized.
        _ => (
            crate::transforms::boundary::leading_system_from(messages, start)?.min(cut),
            Vec::new(),
        ),
    };
    input.extend(summary_input(env, &messages[from..cut]).await?.into_owned());
    let model = ctx.request_model();
    let mut retries = Retries::default();
    let (summary, usage, _, parts) = summarize_messages(
        env,
        ctx,
        &model,
        std::borrow::Cow::Owned(input),
        ctx.calibration.as_ref().and_then(|c| c.fit()),
        &instructions,
        retry,
        &mut retries,
    )
    .await?;
    env.progress(&ProgressEvent {
        background,
        ..ProgressEvent::phase("summarized")
    });
    Ok(Ahead {
        cut,
        summary,
        usage,
        pre,
        calls: earlier.map_or(0, |e| e.calls) + parts,
    })
}

/// Estimated tokens of the messages a swap would keep verbatim (`messages[ahead.cut..]`).
pub fn tail_tokens<V: ConversationView + ?Sized>(view: &V, ahead: &Ahead) -> Result<u64> {
    estimate_range(view, ahead.cut.min(view.len())..view.len())
}

/// Whether the messages since the summary's cut are small enough for a swap, before the
/// attachments are known: [`post_compact_fits`] with none (restored files and announcements,
/// on both paths, only make the bound easier, so `true` here means the swap fits). `fit` is
/// what the usage seen teaches (`Session::calibration`); without one, the kept messages must
/// stay within 30 % of the summary.
pub fn tail_fits<V: ConversationView + ?Sized>(
    view: &V,
    ahead: &Ahead,
    fit: Option<&Fit>,
) -> Result<bool> {
    let sizes = PostCompactSizes {
        summary: text_tokens(&ahead.summary),
        kept: tail_tokens(view, ahead)?,
        attachments: 0,
    };
    Ok(post_compact_fits(&sizes, fit, MAX_POST_COMPACT_RATIO))
}

/// The compaction with a summary written ahead: `messages[..ahead.cut]` replaced by it, every
/// message since kept verbatim, finished like any compaction (restoration, pinned content,
/// hooks, the size check). `PREEMPTIVE_NOT_APPLICABLE` (nothing committed, nothing counted as
/// a failure, no hook run) when the summary does not fit these messages (the bound of
/// [`post_compact_fits`], checked once the attachments are restored; a cut beyond them): the
/// caller then runs today's path.
pub async fn swap<E: Environment + ?Sized>(
    env: &E,
    messages: &[Message],
    ctx: &CompactContext,
    (ahead, refusal): (&Ahead, Option<&Refusal>),
) -> std::result::Result<CompactionResult, CompactError> {
    let not = |why: String| {
        CompactError::new(
            ErrorCode::PreemptiveNotApplicable,
            format!("the summary written ahead does not apply: {why}"),
        )
    };
    let start = active_start(messages)?;
    if ahead.cut > messages.len() || ahead.cut <= start {
        return Err(not(format!(
            "it cuts at message {} of {}",
            ahead.cut,
            messages.len()
        )));
    }
    let SizeBefore {
        reported: pre_tokens,
        estimated: size_before,
        fit,
    } = ctx.size_before(messages, env.text_counter())?;
    // A swap after one refused for its size (the summary brought up to date) does not
    // announce the compaction again: one `start` per compaction the conversation waits for.
    if refusal.is_none_or(|r| r.get().is_none()) {
        env.progress(&ProgressEvent {
            tokens: Some(pre_tokens),
            ..ProgressEvent::phase("start")
        });
    }
    let loss_report =
        crate::summarize::loss::loss_report(&messages[start..ahead.cut], &ahead.summary);
    let kept = swap_kept(messages, ctx, ahead, start);
    finish(
        env,
        messages,
        ctx,
        Finish {
            summary_text: ahead.summary.clone(),
            summary_message: None,
            loss_report,
            kept,
            trigger: Trigger::Auto,
            auto: true,
            suppress_follow_up_questions: true,
            pre_tokens,
            pre_display: ahead.pre.user_display_message.clone(),
            failures: ahead.pre.failures.clone(),
            usage: ahead.usage,
            post_compact_token_count: ahead.usage.map_or(0, |u| u.input_total() + u.output_tokens),
            retries: Retries::default(),
            from_session_memory: false,
            summary_parts: ahead.calls,
            size_before,
            fit,
            preemptive_bound: Some(MAX_POST_COMPACT_RATIO),
            refusal: refusal.cloned(),
        },
    )
    .await
}

/// What a swap of `ahead` keeps verbatim (`start`: where the active context starts): every
/// message since the cut, and (`keepLastUserMessage`) the latest user request when the cut
/// went past it, as today's path keeps it: else it would reach the model only in the
/// summary's words.
fn swap_kept(
    messages: &[Message],
    ctx: &CompactContext,
    ahead: &Ahead,
    start: usize,
) -> Vec<usize> {
    let mut kept: Vec<usize> = Vec::new();
    if ctx.keep_last_user_message {
        kept.extend(last_user_request(messages, start).filter(|&i| i < ahead.cut));
    }
    kept.extend(ahead.cut..messages.len());
    kept
}

/// Whether a swap of `ahead` fails the checks [`finish`] ends it with before anything is
/// restored: its summary message and the messages it keeps ([`swap_kept`], not those of an
/// abandoned branch), measured as [`finish`] measures them (the caller's tokenizer, the
/// learned line), are not smaller than the messages they replace, or not below the
/// auto-compact threshold (as messages, or as the next request,
/// [`crate::drive::bound::swap_below_threshold`]). The swap keeps at least these and
/// restoration only adds to them; a reminder a later message would clear is not counted.
fn swap_doomed<E: Environment + ?Sized>(
    env: &E,
    messages: &[Message],
    ctx: &CompactContext,
    ahead: &Ahead,
) -> Result<bool> {
    let start = active_start(messages)?;
    if ahead.cut > messages.len() || ahead.cut <= start {
        // The swap refuses its cut itself, before announcing anything.
        return Ok(false);
    }
    let counter = env.text_counter();
    let text = crate::summarize::summary::summary_message_text(&ahead.summary, true, true);
    let tail: Vec<Message> = swap_kept(messages, ctx, ahead, start)
        .into_iter()
        .map(|i| &messages[i])
        .filter(|m| !crate::transforms::boundary::of_abandoned_branch(m))
        .cloned()
        .collect();
    // The swap's bound, as `finish` checks it (its summary text, its kept messages).
    let sizes = PostCompactSizes {
        summary: text_tokens_counted(&text, counter)?,
        kept: estimate_all(&tail, counter)?,
        attachments: 0,
    };
    // The compacted messages `finish` measures: the summary message, then the kept ones, then
    // a user message after them all (what it restores may clear a trailing reminder).
    let transcript = Message::written_as_lines(messages);
    let after_last = Message::api_user_text("");
    let mut after = vec![crate::summarize::summary::summary_message(
        &text,
        transcript,
        "",
        "",
        "",
        &serde_json::Map::new(),
    )];
    after.extend(tail);
    after.push(after_last.clone());
    let lower = estimate_all(&after, counter)?
        .saturating_sub(estimate_all(std::slice::from_ref(&after_last), counter)?);
    let SizeBefore {
        estimated: size_before,
        fit,
        ..
    } = ctx.size_before(messages, counter)?;
    let threshold = auto_compact_threshold(&ctx.model, &ctx.config);
    let below = crate::drive::bound::swap_below_threshold(
        &sizes,
        fit.as_ref(),
        ctx.preamble_tokens,
        threshold,
    );
    Ok(!below || crate::drive::pipeline::fails_size_checks(lower, size_before, Some(threshold)))
}

/// A ready summary written ahead, offered to [`auto_compact_with_ahead`].
#[derive(Clone, Copy, Debug)]
pub struct AheadSwap<'a> {
    /// The summary.
    pub summary: &'a Ahead,
    /// Swap it in now even below the threshold
    /// ([`crate::drive::ahead::Background::swap_early`] said so at this check).
    pub early: bool,
}

/// What [`auto_compact_with_ahead`] did with the summary written ahead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AheadUse {
    /// Not used: today's path ran (or nothing was due).
    None,
    /// Swapped in as it was: no model call.
    Swapped,
    /// Brought up to date first ([`catch_up`]): one model call on what came after its cut.
    CaughtUp,
}

/// A ready summary that a swap refused at the threshold (the messages since its cut put the
/// context over the bound), brought up to date: the messages from its cut to the latest turn
/// summarized after it, as a refresh would have ([`summarize_ahead`], chained), for a swap
/// that keeps the latest turn. The conversation waits for that call, as it would for today's
/// path, but the call reads the summary and what came after it, not the whole conversation
/// again: fewer tokens paid for, and a shorter wait. `Ok(None)` when there is nothing after
/// the summary's cut to add, or when its swap would be refused too (`refused`: the sizes the
/// refused swap measured; with the latest turn in place of what it kept, a summary as large
/// and the same restored files, still over the bound): no call is paid for then. The
/// summarizer's failure (after its retries) or an abort is the error: today's path would call
/// the same summarizer again, and the conversation would wait for as many retries twice.
pub async fn catch_up<E: Environment + ?Sized>(
    env: &E,
    messages: &[Message],
    ctx: &CompactContext,
    (stale, refused): (&Ahead, Option<(PostCompactSizes, Option<Fit>)>),
    retry: &RetryPolicy,
) -> std::result::Result<Option<Ahead>, CompactError> {
    let Some(plan) = ahead_cut(messages)? else {
        return Ok(None);
    };
    if plan.cut <= stale.cut {
        return Ok(None);
    }
    if let Some((sizes, fit)) = refused {
        let caught_up = PostCompactSizes {
            kept: plan.tail,
            ..sizes
        };
        let threshold = crate::measure::thresholds::auto_compact_threshold(&ctx.model, &ctx.config);
        if !post_compact_fits(&caught_up, fit.as_ref(), MAX_POST_COMPACT_RATIO)
            || !crate::drive::bound::swap_below_threshold(
                &caught_up,
                fit.as_ref(),
                ctx.preamble_tokens,
                threshold,
            )
        {
            return Ok(None);
        }
    }
    // The swap refused for its size announced the compaction (`start`); one refused before
    // (its cut) did not.
    let announce = refused.is_none();
    summarize_ahead(
        env,
        messages,
        (plan.cut, false, announce),
        Some(stale),
        ctx,
        retry,
    )
    .await
    .map(Some)
}

/// `autoCompactIfNeeded` with a summary written ahead: when `ahead` is given and the
/// compaction is due — or `early` (a check before the threshold when waiting a turn more
/// could put the swap over the bound, [`crate::drive::ahead::Background::swap_early`]) — it is
/// swapped in ([`swap`], no model call). When it does not apply (`PREEMPTIVE_NOT_APPLICABLE`)
/// and the count is at the threshold, it is brought up to date and swapped in
/// ([`catch_up`]; not when the latest turn alone is over the bound) — unless the caller keeps
/// a session memory, which today's path tries first with no model call; failing that, today's
/// path runs ([`auto_compact_if_needed`]), which
/// compacts only when due. Any other failure of the swap (an abort, a hook's veto) is
/// reported like a failed compaction, and counts towards the circuit breaker. The
/// [`AheadUse`] says which path compacted.
pub async fn auto_compact_with_ahead<E: Environment + ?Sized>(
    messages: &[Message],
    ctx: &CompactContext,
    tracking: &Tracking,
    query: &ShouldAutoCompactOptions,
    retry: &RetryPolicy,
    env: &E,
    ahead: Option<AheadSwap<'_>>,
) -> Result<(AutoCompactOutcome, AheadUse)> {
    // A swap that failed otherwise (a hook's veto, an abort) counts towards the breaker.
    let failed = |e| AutoCompactOutcome {
        was_compacted: false,
        result: None,
        consecutive_failures: tracking.consecutive_failures + 1,
        error: Some(e),
        skipped: None,
    };
    // Whether a refused swap (or the catch-up after it) announced the compaction: today's
    // path then does not announce it again.
    let mut announced = false;
    if let Some(AheadSwap { summary: a, early }) = ahead {
        if auto_compact_guard(&ctx.config, tracking, query).is_none() {
            let mut at_threshold = None;
            let mut by_count = || -> Result<bool> {
                Ok(*match &mut at_threshold {
                    Some(d) => d,
                    slot => slot.insert(decide_for(messages, ctx, query)?.should_compact),
                })
            };
            // Offered early (nothing due), a swap whose summary and kept messages alone
            // already fail the checks it ends with (what it restores only adds) is not
            // tried: it would report `start`, restore files and run the SessionStart hooks,
            // then fail — refused, or as not smaller (`COMPACTION_NOT_SMALLER`, a failure
            // counted towards the breaker) — with no compaction after it. At the threshold
            // it is tried: refused for the bound (which catches those there), its sizes let
            // the catch-up check its own swap.
            let doomed_early = early && !by_count()? && swap_doomed(env, messages, ctx, a)?;
            if !doomed_early && (early || by_count()?) {
                // The summary offered, then (refused at the threshold) the one brought up
                // to date: one swap call site for both (wasm size).
                let mut caught_up: Option<Ahead> = None;
                let refusal = Refusal::default();
                loop {
                    let offered = caught_up.as_ref().unwrap_or(a);
                    match swap(env, messages, ctx, (offered, Some(&refusal))).await {
                        Ok(r) => {
                            let used = if caught_up.is_some() {
                                AheadUse::CaughtUp
                            } else {
                                AheadUse::Swapped
                            };
                            return Ok((AutoCompactOutcome::compacted(r), used));
                        }
                        Err(e) if e.error.code == ErrorCode::PreemptiveNotApplicable => {
                            // With a session memory, today's path compacts from it first,
                            // with no model call: a catch-up would pay one where none was.
                            if caught_up.is_some() || env.has_session_memory() || !by_count()? {
                                break;
                            }
                            match catch_up(env, messages, ctx, (a, refusal.get()), retry).await {
                                Ok(Some(fresh)) => caught_up = Some(fresh),
                                Ok(None) => break,
                                // In place of today's path, failing as it would (after as
                                // many retries again): an abort (the caller's) is not counted
                                // towards the breaker.
                                Err(e) => {
                                    return Ok((
                                        AutoCompactOutcome::failed(
                                            e,
                                            tracking.consecutive_failures,
                                        ),
                                        AheadUse::None,
                                    ))
                                }
                            }
                        }
                        Err(e) => return Ok((failed(e), AheadUse::None)),
                    }
                }
                announced = refusal.get().is_some() || caught_up.is_some();
            }
        }
    }
    let out = auto_compact(messages, ctx, (tracking, announced), query, retry, env).await?;
    Ok((out, AheadUse::None))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_early_line_is_halfway_between_warning_and_threshold() {
        assert_eq!(early_line("claude-opus-4-6", &Config::default()), 157_000);
        let small = Config {
            context_window: Some(30_000.0),
            ..Default::default()
        };
        let t = auto_compact_threshold("claude-opus-4-6", &small);
        assert!(early_line("claude-opus-4-6", &small) <= t);
    }

    #[test]
    fn the_automatic_line_moves_down_for_large_turns_to_the_warning_line() {
        let auto = EarlyLine::auto("claude-opus-4-6", &Config::default());
        assert_eq!(auto.at(0), 157_000);
        assert_eq!(auto.at(10_000), 157_000);
        assert_eq!(auto.at(14_000), 153_000);
        assert_eq!(auto.at(26_422), 147_000, "not below the warning line");
        assert_eq!(EarlyLine::Fixed(5).at(1_000_000), 5);
        assert_eq!(EarlyLine::below(167_000), auto);
        let low = EarlyLine::below(55_000);
        assert_eq!(
            (low.at(0), low.at(12_000), low.at(40_000)),
            (45_000, 43_000, 35_000)
        );
        assert_eq!(
            EarlyLine::below(10_000).at(0),
            5_000,
            "a threshold under the buffer"
        );
    }

    #[test]
    fn the_cut_keeps_the_latest_turn_and_its_tool_pairs() {
        let m = Message::parse_all(serde_json::json!([
            {"role": "user", "content": "read a"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "A"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]},
        ]))
        .unwrap();
        assert_eq!(cut_point(m.as_slice()).unwrap(), Some(3));
        assert_eq!(cut_point(&m[..2]).unwrap(), Some(1));
        assert_eq!(cut_point(&m[..1]).unwrap(), None);
    }
}
