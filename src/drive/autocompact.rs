//! Whether automatic compaction is enabled and due (SPEC §5).

use serde::Serialize;

use crate::measure::thresholds::auto_compact_threshold;

use crate::model::config::Config;
use crate::model::error::{Error, ErrorCode, Result};
use crate::model::view::ConversationView;

/// Query sources whose requests must never trigger compaction: they are the compaction's
/// own forked requests (compacting them would recurse).
pub const NON_COMPACTING_QUERY_SOURCES: &[&str] = &["session_memory", "compact"];

/// The query source used by context collapse.
pub const CONTEXT_COLLAPSE_QUERY_SOURCE: &str = "marble_origami";

/// Options of `shouldAutoCompact`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ShouldAutoCompactOptions {
    /// Who is making the request (`repl_main_thread`, `compact`, `session_memory`, …).
    pub query_source: Option<String>,
    /// Tokens already freed by snipping this turn, subtracted from the count.
    pub snip_tokens_freed: u64,
    /// Usage the caller gives for messages that carry none (see
    /// [`crate::measure::tokens::GivenUsage`]).
    pub given_usage: Option<crate::measure::tokens::GivenUsage>,
    /// The system prompt and tools the caller gives (counted where nothing anchors).
    pub preamble: Option<crate::measure::tokens::Preamble>,
    /// The line learned from the usage seen that the caller gives back (a compaction
    /// result's `calibration`): the count where no usage anchors it, instead of what the
    /// messages alone teach (see [`crate::measure::tokens::with_calibration`]).
    pub calibration: Option<crate::measure::calibration::Fit>,
}

/// Why an automatic compaction was not attempted: the `skipped` of `autoCompactIfNeeded`'s and
/// `Compactor.maybeAutoCompact`'s outcome, and the guard that made `shouldAutoCompact` say no.
/// Serialized as the strings of the TypeScript `AutoCompactSkipReason`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SkipReason {
    /// `disableCompact`, `disableAutoCompact` or `autoCompactEnabled: false` (`"disabled"`).
    Disabled,
    /// Three failures in a row: the circuit breaker is open (`"circuitBreakerOpen"`).
    CircuitBreakerOpen,
    /// The context is below the auto-compact threshold (`"belowThreshold"`).
    BelowThreshold,
    /// The request is the compaction's own, or context collapse's (`"querySource"`).
    QuerySource,
    /// Reactive-only mode (`"reactiveOnly"`).
    ReactiveOnly,
    /// Context-collapse mode (`"contextCollapse"`).
    ContextCollapse,
    /// (a session only) a compaction is already running (`"compacting"`).
    Compacting,
    /// (a session only) paused after three rapid refills in a row (`"thrashing"`).
    Thrashing,
    /// No response reported usage since the last compaction, and what every request sends
    /// besides the messages (the overhead learned from the usage seen before it) is itself at
    /// or above the threshold: compacting again cannot bring the context below it
    /// (`"overheadAboveThreshold"`, see [`is_futile`]).
    OverheadAboveThreshold,
}

impl SkipReason {
    /// The JS string, as serialized (for the bindings, without going through serde).
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Disabled => "disabled",
            SkipReason::CircuitBreakerOpen => "circuitBreakerOpen",
            SkipReason::BelowThreshold => "belowThreshold",
            SkipReason::QuerySource => "querySource",
            SkipReason::ReactiveOnly => "reactiveOnly",
            SkipReason::ContextCollapse => "contextCollapse",
            SkipReason::Compacting => "compacting",
            SkipReason::Thrashing => "thrashing",
            SkipReason::OverheadAboveThreshold => "overheadAboveThreshold",
        }
    }

    /// The error reported with the skip, if any: only thrashing has one (`THRASHING`).
    pub fn error(self) -> Option<Error> {
        match self {
            SkipReason::Thrashing => {
                Some(Error::new(ErrorCode::Thrashing, ThrashDetector::message()))
            }
            _ => None,
        }
    }
}

/// The guards of `shouldAutoCompact` that do not depend on the conversation, in their order
/// (SPEC §5): the request's source, reactive-only mode, context collapse, auto-compaction
/// disabled. `None`: the token count decides.
pub fn blocked_by(options: &ShouldAutoCompactOptions, config: &Config) -> Option<SkipReason> {
    let source = options.query_source.as_deref();
    if source.is_some_and(|s| NON_COMPACTING_QUERY_SOURCES.contains(&s)) {
        return Some(SkipReason::QuerySource);
    }
    let collapse = config.context_collapse == Some(true);
    if collapse && source == Some(CONTEXT_COLLAPSE_QUERY_SOURCE) {
        return Some(SkipReason::QuerySource);
    }
    if config.reactive_only == Some(true) {
        return Some(SkipReason::ReactiveOnly);
    }
    if collapse {
        return Some(SkipReason::ContextCollapse);
    }
    if !config.is_auto_compact_enabled() {
        return Some(SkipReason::Disabled);
    }
    None
}

/// The guards of `autoCompactIfNeeded` before any counting, in their order (SPEC §6):
/// compaction disabled, the circuit breaker, then [`blocked_by`]. `None`: the token count
/// decides ([`is_due`]).
pub fn auto_compact_guard(
    config: &Config,
    tracking: &Tracking,
    query: &ShouldAutoCompactOptions,
) -> Option<SkipReason> {
    if config.disable_compact == Some(true) {
        return Some(SkipReason::Disabled);
    }
    if tracking.consecutive_failures >= MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES {
        return Some(SkipReason::CircuitBreakerOpen);
    }
    blocked_by(query, config)
}

/// Whether compacting again is futile: the count rests on the line learned from the usage
/// seen (no response reported usage since the last compaction, `calibrated`), and that line's
/// overhead alone — what every request sends besides the messages, which no compaction
/// removes — reaches the `threshold`. An automatic compaction would only call the summarizer
/// to land above the threshold again (a short session under a low threshold: compacted again
/// at every check), so none is attempted ([`SkipReason::OverheadAboveThreshold`]). Once a
/// response reports usage the count is that usage, and the threshold decides as usual.
pub fn is_futile(
    calibrated: bool,
    fit: Option<&crate::measure::calibration::Fit>,
    threshold: u64,
) -> bool {
    calibrated && fit.is_some_and(|f| f.overhead.is_finite() && f.overhead >= threshold as f64)
}

/// The decision `due` for `view` counted as `count`, unless compacting again is futile
/// ([`is_futile`]): by the line the caller gave (`given`), else the one the usage before the
/// boundary teaches. Costs a pass over the messages only when due on a count calibrated by
/// the messages' own usage.
fn unless_futile<V: ConversationView + ?Sized>(
    view: &V,
    count: &crate::measure::tokens::TokenCount,
    given: Option<crate::measure::calibration::Fit>,
    due: AutoCompactDecision,
) -> Result<AutoCompactDecision> {
    if !due.should_compact || !count.calibrated {
        return Ok(due);
    }
    // No usage since the boundary (else the count were anchored): the observations before it
    // are all there are.
    let fit = match given {
        Some(f) => Some(f),
        None => crate::measure::tokens::learned_before(view, view.len())?.fit(),
    };
    Ok(if is_futile(true, fit.as_ref(), due.threshold) {
        AutoCompactDecision {
            should_compact: false,
            blocked_by: Some(SkipReason::OverheadAboveThreshold),
            ..due
        }
    } else {
        due
    })
}

/// Whether a context of `count` tokens, `snip_tokens_freed` of them already freed by snipping,
/// has reached the auto-compact `threshold`.
pub fn is_due(count: u64, snip_tokens_freed: u64, threshold: u64) -> bool {
    count.saturating_sub(snip_tokens_freed) >= threshold
}

/// Why `shouldAutoCompact` answered as it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AutoCompactDecision {
    /// The answer.
    pub should_compact: bool,
    /// Token count used (0 when a guard answered before counting).
    pub token_count: u64,
    /// The threshold compared against.
    pub threshold: u64,
    /// The guard that said no, if any (never [`SkipReason::BelowThreshold`]: a count below
    /// the threshold is `should_compact: false` with no guard).
    pub blocked_by: Option<SkipReason>,
}

impl AutoCompactDecision {
    /// A guard said no before counting.
    fn blocked(threshold: u64, why: SkipReason) -> AutoCompactDecision {
        AutoCompactDecision {
            should_compact: false,
            token_count: 0,
            threshold,
            blocked_by: Some(why),
        }
    }

    /// The decision for the count `count` (the tokens snipped this turn taken off).
    fn at(count: u64, threshold: u64, options: &ShouldAutoCompactOptions) -> AutoCompactDecision {
        AutoCompactDecision {
            should_compact: is_due(count, options.snip_tokens_freed, threshold),
            token_count: count.saturating_sub(options.snip_tokens_freed),
            threshold,
            blocked_by: None,
        }
    }
}

/// `shouldAutoCompact` with its reasons.
pub fn should_auto_compact<V: ConversationView + ?Sized>(
    view: &V,
    model: &str,
    options: &ShouldAutoCompactOptions,
    config: &Config,
) -> Result<AutoCompactDecision> {
    let threshold = auto_compact_threshold(model, config);
    if let Some(why) = blocked_by(options, config) {
        return Ok(AutoCompactDecision::blocked(threshold, why));
    }
    use crate::measure::tokens::{
        token_count_checked_from, token_count_given, with_calibration, with_preamble,
    };
    let (given, preamble, fit) = (options.given_usage, options.preamble, options.calibration);
    let fast = token_count_given(view, given)?;
    let mut count = with_preamble(with_calibration(fast.clone(), fit), preamble);
    if is_due(count.total, options.snip_tokens_freed, threshold) {
        // Due by the fast count: make sure it does not rest on usage a session-memory
        // compaction kept from the old context (that would compact again at once).
        let checked = token_count_checked_from(view, fast)?;
        count = with_preamble(with_calibration(checked, fit), preamble);
    }
    unless_futile(
        view,
        &count,
        fit,
        AutoCompactDecision::at(count.total, threshold, options),
    )
}

/// [`should_auto_compact`] of `messages` for a compaction of `ctx`: with the count the caller
/// already made of them ([`crate::drive::pipeline::CompactContext::counted`]: its tokenizer,
/// the usage it holds), the decision is that count's, as the caller's own check decided.
pub fn decide_for<V: ConversationView + ?Sized>(
    messages: &V,
    ctx: &crate::drive::pipeline::CompactContext,
    options: &ShouldAutoCompactOptions,
) -> Result<AutoCompactDecision> {
    let Some(count) = ctx.counted else {
        return should_auto_compact(messages, &ctx.model, options, &ctx.config);
    };
    let threshold = auto_compact_threshold(&ctx.model, &ctx.config);
    Ok(match blocked_by(options, &ctx.config) {
        Some(why) => AutoCompactDecision::blocked(threshold, why),
        None => AutoCompactDecision::at(count, threshold, options),
    })
}

/// What `shouldAutoCompact` without options decides from besides the count: the model's
/// threshold and whether a guard says no, both fixed by the model and the configuration
/// (a per-turn caller keeps it while they stay the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PerTurnRule {
    /// [`crate::measure::thresholds::auto_compact_threshold`] of the model.
    pub threshold: u64,
    /// A guard ([`blocked_by`] with no options) says no whatever the count.
    pub blocked: bool,
}

impl PerTurnRule {
    /// The rule for `model` under `config`.
    pub fn new(model: &str, config: &Config) -> PerTurnRule {
        PerTurnRule {
            threshold: crate::measure::thresholds::auto_compact_threshold(model, config),
            blocked: blocked_by(&ShouldAutoCompactOptions::default(), config).is_some(),
        }
    }

    /// The answer from the count [`should_auto_compact`] starts with (`tokens`, the total of
    /// [`crate::measure::tokens::token_count_given`] or [`crate::measure::tokens::count_tail`]):
    /// `Some(answer)` when that settles it (a guard says no, or the count is below the
    /// threshold), `None` when [`should_auto_compact`] must decide (due by the fast count: the
    /// checked count decides).
    pub fn decide(&self, tokens: u64) -> Option<bool> {
        (self.blocked || !is_due(tokens, 0, self.threshold)).then_some(false)
    }
}

/// The outcome of `autoCompactIfNeeded` when no compaction is due, decided on a view of the
/// caller's messages (its guards, then the threshold), as `Err`; when one is due, `Ok` with
/// the count it was decided with (for [`crate::drive::pipeline::CompactContext::counted`]).
/// Lets a caller answer "not due" for messages it could not yet compact.
pub fn outcome_if_not_due<V: ConversationView + ?Sized>(
    view: &V,
    ctx: &crate::drive::pipeline::CompactContext,
    tracking: &Tracking,
    query: &ShouldAutoCompactOptions,
) -> Result<std::result::Result<u64, AutoCompactOutcome>> {
    let skipped = |why| AutoCompactOutcome::skipped(why, tracking.consecutive_failures);
    if let Some(why) = auto_compact_guard(&ctx.config, tracking, query) {
        return Ok(Err(skipped(why)));
    }
    let decision = should_auto_compact(view, &ctx.model, query, &ctx.config)?;
    if !decision.should_compact {
        return Ok(Err(skipped(
            decision.blocked_by.unwrap_or(SkipReason::BelowThreshold),
        )));
    }
    Ok(Ok(decision
        .token_count
        .saturating_add(query.snip_tokens_freed)))
}

/// Consecutive failed auto-compactions after which the circuit breaker opens (sessions have
/// been seen retrying thousands of times without one).
pub const MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES: u32 = 3;

/// State the caller keeps across turns for auto-compaction.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tracking {
    /// Failed auto-compactions in a row.
    pub consecutive_failures: u32,
    /// Turn counter of the caller (for reactive compaction's once-per-turn rule).
    pub turn_id: Option<String>,
    /// The turn in which reactive compaction last ran.
    pub reactive_turn_id: Option<String>,
}

/// The answer of `autoCompactIfNeeded`.
#[derive(Debug)]
pub struct AutoCompactOutcome {
    /// Whether the conversation was compacted (apply `result`).
    pub was_compacted: bool,
    /// The compaction, when one happened.
    pub result: Option<crate::drive::pipeline::CompactionResult>,
    /// The new failure count (0 after a success).
    pub consecutive_failures: u32,
    /// The failure, reported rather than thrown.
    pub error: Option<crate::drive::pipeline::CompactError>,
    /// Why nothing was attempted.
    pub skipped: Option<SkipReason>,
}

impl AutoCompactOutcome {
    /// A compaction that produced `result`: the failures in a row end.
    pub fn compacted(result: crate::drive::pipeline::CompactionResult) -> Self {
        AutoCompactOutcome {
            was_compacted: true,
            result: Some(result),
            consecutive_failures: 0,
            error: None,
            skipped: None,
        }
    }

    /// Nothing attempted because of `why`; the failure count stays `consecutive_failures`. The
    /// error of the reason, if it has one, is reported with it.
    pub fn skipped(why: SkipReason, consecutive_failures: u32) -> Self {
        AutoCompactOutcome {
            was_compacted: false,
            result: None,
            consecutive_failures,
            error: why.error().map(Into::into),
            skipped: Some(why),
        }
    }

    /// Attempted and failed with `e`, after `consecutive_failures` failures before it. A
    /// compaction the caller aborted (`ABORTED`: the user cancelled it, or the agent's turn
    /// ended) is reported but not counted: it says nothing of whether compaction works, and a
    /// user who cancels three times would otherwise switch automatic compaction off for the
    /// session.
    pub fn failed(e: crate::drive::pipeline::CompactError, consecutive_failures: u32) -> Self {
        let aborted = e.error.code == crate::model::error::ErrorCode::Aborted;
        AutoCompactOutcome {
            was_compacted: false,
            result: None,
            consecutive_failures: consecutive_failures + u32::from(!aborted),
            error: Some(e),
            skipped: None,
        }
    }

    /// The outcome of an automatic compaction whose messages could not be read for it
    /// (`reading`'s error): a message it cannot read is a failure of the compaction, reported
    /// and counted towards the breaker like any other, not thrown into the caller's turn.
    /// Other errors (the caller's arguments) stay errors.
    pub fn unless_unreadable(
        reading: crate::model::error::Error,
        consecutive_failures: u32,
    ) -> std::result::Result<Self, crate::model::error::Error> {
        if reading.code == crate::model::error::ErrorCode::InvalidMessage {
            Ok(Self::failed(reading.into(), consecutive_failures))
        } else {
            Err(reading)
        }
    }
}

/// `autoCompactIfNeeded` (SPEC §6): guards, circuit breaker, session memory first, then full
/// compaction. A failure is returned in the outcome (never thrown into the caller's turn)
/// and counts towards the breaker.
pub async fn auto_compact_if_needed<E: crate::drive::env::Environment + ?Sized>(
    messages: &[crate::model::messages::Message],
    ctx: &crate::drive::pipeline::CompactContext,
    tracking: &Tracking,
    query: &ShouldAutoCompactOptions,
    retry: &crate::drive::retry::RetryPolicy,
    env: &E,
) -> Result<AutoCompactOutcome> {
    auto_compact(messages, ctx, (tracking, false), query, retry, env).await
}

/// [`auto_compact_if_needed`] on a path that may have announced the compaction already
/// (`announced`: [`crate::drive::pipeline::CompactOptions::announced`]).
pub(crate) async fn auto_compact<E: crate::drive::env::Environment + ?Sized>(
    messages: &[crate::model::messages::Message],
    ctx: &crate::drive::pipeline::CompactContext,
    (tracking, announced): (&Tracking, bool),
    query: &ShouldAutoCompactOptions,
    retry: &crate::drive::retry::RetryPolicy,
    env: &E,
) -> Result<AutoCompactOutcome> {
    let skip = |why| {
        Ok(AutoCompactOutcome::skipped(
            why,
            tracking.consecutive_failures,
        ))
    };
    if let Some(why) = auto_compact_guard(&ctx.config, tracking, query) {
        return skip(why);
    }
    let decision = decide_for(messages, ctx, query)?;
    if !decision.should_compact {
        return skip(decision.blocked_by.unwrap_or(SkipReason::BelowThreshold));
    }
    let failed = |e| AutoCompactOutcome::failed(e, tracking.consecutive_failures);
    // `start` before the hooks: the first event of the compaction, whichever of session
    // memory or the full compaction then does it.
    if !announced {
        crate::drive::pipeline::announce(env, decision.token_count);
    }
    let pre = match crate::drive::pipeline::pre_compact_hooks(
        env,
        ctx,
        crate::transforms::boundary::Trigger::Auto,
        None,
        decision.token_count,
        serde_json::json!({}),
    )
    .await
    {
        Ok(p) => p,
        Err(e) => return Ok(failed(e)),
    };
    match crate::drive::session_memory::try_session_memory_compaction(
        messages,
        ctx,
        Some(pre.clone()),
        env,
    )
    .await
    {
        Ok(r) => return Ok(AutoCompactOutcome::compacted(r)),
        Err(e) if e.error.code == crate::model::error::ErrorCode::Aborted => return Ok(failed(e)),
        Err(_) => {} // not applicable: full compaction
    }
    let options = crate::drive::pipeline::CompactOptions {
        is_auto_compact: true,
        suppress_follow_up_questions: true,
        retry: *retry,
        pre_compact: Some(pre),
        announced: true,
        ..Default::default()
    };
    match crate::drive::pipeline::compact_conversation(messages, ctx, &options, env).await {
        Ok(r) => Ok(AutoCompactOutcome::compacted(r)),
        Err(e) => Ok(failed(e)),
    }
}

/// Turns within which a refill counts as rapid.
pub const THRASH_REFILL_TURNS: u32 = 3;
/// Rapid refills in a row that mean thrashing.
pub const THRASH_REPEATS: u32 = 3;

/// Detects thrashing: the context refilled to the threshold within
/// [`THRASH_REFILL_TURNS`] turns after each of [`THRASH_REPEATS`] compactions in a row, so
/// compacting every turn would only burn summaries (the recurring content — e.g. large files
/// read again each turn — is more than compaction can free).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThrashDetector {
    /// Turns since the last automatic compaction (`None`: none yet, or reset).
    pub turns_since_compaction: Option<u32>,
    /// Compactions in a row after which the context refilled within
    /// [`THRASH_REFILL_TURNS`] turns.
    pub rapid_refills: u32,
    /// Set once thrashing is detected; automatic compaction should pause.
    pub thrashing: bool,
    /// The automatic-compaction threshold the refills were measured against when the pause
    /// began (`None`: no pause, or a snapshot written before this was kept).
    pub paused_at: Option<u64>,
}

impl ThrashDetector {
    /// Whether the pause holds for a context of `tokens`: while thrashing, below the
    /// `blocking_limit` only. At the limit the next request would be refused, and only a
    /// compaction lets the conversation go on (sessions18: paused for good, an agent's
    /// context grew to 467,201 tokens on a 32K window and 265 of 300 requests were refused).
    /// The `Compactor` and the simulator decide by it.
    pub fn pauses(&self, tokens: u64, blocking_limit: u64) -> bool {
        self.thrashing && tokens < blocking_limit
    }

    /// A turn passed (the caller checks for auto-compaction once per turn).
    pub fn turn(&mut self) {
        if let Some(t) = &mut self.turns_since_compaction {
            *t += 1;
        }
    }

    /// An automatic compaction happened this turn; `threshold` is the automatic-compaction
    /// threshold it was due at.
    pub fn compacted(&mut self, threshold: u64) {
        match self.turns_since_compaction {
            Some(t) if t <= THRASH_REFILL_TURNS => self.rapid_refills += 1,
            _ => self.rapid_refills = 0,
        }
        self.turns_since_compaction = Some(0);
        if self.rapid_refills >= THRASH_REPEATS {
            self.thrashing = true;
            self.paused_at = Some(threshold);
        }
    }

    /// The threshold is `threshold` now (a `Compactor` restored with a larger model or
    /// window). A pause measured against a lower threshold no longer says anything: refilling
    /// a small window within a few turns does not mean a larger one refills as fast, so the
    /// detection starts over. Against the same or a higher threshold the pause holds.
    pub fn threshold_is(&mut self, threshold: u64) {
        if matches!(self.paused_at, Some(t) if threshold > t) {
            self.reset();
        }
    }

    /// Starts over (after a manual compaction, or when the caller changed the conversation).
    pub fn reset(&mut self) {
        *self = ThrashDetector::default();
    }

    /// The message explaining the pause.
    pub fn message() -> String {
        format!(
            "automatic compaction is paused: the context refilled to the threshold within {THRASH_REFILL_TURNS} turns after each of the last {} compactions, so compacting again would not help (recurring content such as large files read every turn is more than compaction can free); it compacts again only at the blocking limit, where the next request would not fit; compact manually or reduce what is re-read each turn",
            THRASH_REPEATS + 1
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::messages::Message;
    use serde_json::json;

    fn history(tokens: u64) -> Vec<Message> {
        Message::parse_all(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
             "usage": {"input_tokens": tokens, "output_tokens": 0}}
        ]))
        .unwrap()
    }

    fn ask(tokens: u64, opts: ShouldAutoCompactOptions, cfg: Config) -> AutoCompactDecision {
        should_auto_compact(history(tokens).as_slice(), "claude-opus-4-6", &opts, &cfg).unwrap()
    }

    /// A compacted API conversation holds no usage: the line the caller gives back (a
    /// compaction result's `calibration`) counts what its messages do not show, and says when
    /// compacting again is futile, where the bare estimate saw a few tokens.
    #[test]
    fn a_line_given_back_counts_a_conversation_without_usage() {
        use crate::measure::calibration::Fit;
        let m = Message::parse_all(json!([
            {"role": "user", "content": "the summary of what came before"},
            {"role": "assistant", "content": [{"type": "text", "text": "ok"}]},
            {"role": "user", "content": "x".repeat(40_000)}
        ]))
        .unwrap();
        let ask = |fit: Option<Fit>| {
            let opts = ShouldAutoCompactOptions {
                calibration: fit,
                ..Default::default()
            };
            should_auto_compact(m.as_slice(), "claude-opus-4-6", &opts, &Config::default()).unwrap()
        };
        let bare = ask(None);
        assert!(!bare.should_compact);
        assert!(bare.token_count < 12_000, "{}", bare.token_count);
        let line = |overhead: f64| Fit {
            overhead,
            ratio: 1.25,
            observations: 12,
        };
        let due = ask(Some(line(160_000.0)));
        assert_eq!(due.token_count, line(160_000.0).predict(bare.token_count));
        assert!(due.should_compact, "{due:?}");
        // An overhead past the threshold: no compaction can bring the context below it.
        let futile = ask(Some(line(170_000.0)));
        assert!(!futile.should_compact);
        assert_eq!(futile.blocked_by, Some(SkipReason::OverheadAboveThreshold));
    }

    /// A failure counts towards the breaker; a compaction the caller aborted does not.
    #[test]
    fn an_aborted_compaction_is_reported_but_not_counted() {
        use crate::drive::pipeline::CompactError;
        use crate::model::error::ErrorCode;
        let failed = AutoCompactOutcome::failed(
            CompactError::new(ErrorCode::SummarizerFailed, "the summarizer threw"),
            1,
        );
        assert_eq!(failed.consecutive_failures, 2);
        let aborted = AutoCompactOutcome::failed(
            CompactError::new(ErrorCode::Aborted, "aborted while summarizing"),
            1,
        );
        assert_eq!(aborted.consecutive_failures, 1);
        assert_eq!(aborted.error.unwrap().error.code, ErrorCode::Aborted);
        assert!(!aborted.was_compacted);
    }

    #[test]
    fn the_per_turn_decision_settles_only_what_the_fast_count_settles() {
        let model = "claude-opus-4-6";
        for tokens in [0, 100_000, 166_999, 167_000, 180_000] {
            for cfg in [
                Config::default(),
                Config {
                    auto_compact_enabled: Some(false),
                    ..Config::default()
                },
            ] {
                let m = history(tokens);
                let fast =
                    crate::measure::tokens::token_count_with_estimation(m.as_slice()).unwrap();
                let rule = PerTurnRule::new(model, &cfg);
                assert_eq!(rule.threshold, auto_compact_threshold(model, &cfg));
                let full = should_auto_compact(m.as_slice(), model, &Default::default(), &cfg)
                    .unwrap()
                    .should_compact;
                match rule.decide(fast.total) {
                    Some(answer) => assert_eq!(answer, full, "{tokens}"),
                    None => assert!(full, "{tokens}: left to the checked count only when due"),
                }
            }
        }
    }

    #[test]
    fn a_count_the_caller_made_decides_with_the_same_rule() {
        let model = "claude-opus-4-6";
        let estimated = history(0); // the messages alone: a handful of tokens
        for (counted, snip, cfg, due) in [
            (166_999, 0, Config::default(), false),
            (167_000, 0, Config::default(), true),
            (180_000, 20_000, Config::default(), false),
            (
                180_000,
                0,
                Config {
                    auto_compact_enabled: Some(false),
                    ..Config::default()
                },
                false,
            ),
        ] {
            let ctx = crate::drive::pipeline::CompactContext {
                model: model.into(),
                config: cfg.clone(),
                counted: Some(counted),
                ..Default::default()
            };
            let opts = ShouldAutoCompactOptions {
                snip_tokens_freed: snip,
                ..Default::default()
            };
            let d = decide_for(estimated.as_slice(), &ctx, &opts).unwrap();
            assert_eq!(d.should_compact, due, "{counted} − {snip}");
            // The same answer as the estimate gives for messages whose usage says `counted`.
            let same = should_auto_compact(history(counted).as_slice(), model, &opts, &cfg);
            assert_eq!(d, same.unwrap(), "{counted}");
            assert_eq!(ctx.pre_count(estimated.as_slice()).unwrap(), counted);
        }
        // Without a count, the estimate.
        let ctx = crate::drive::pipeline::CompactContext {
            model: model.into(),
            ..Default::default()
        };
        assert!(ctx.pre_count(estimated.as_slice()).unwrap() < 100);
    }

    #[test]
    fn thrashing_is_three_rapid_refills_in_a_row() {
        let mut d = ThrashDetector::default();
        d.compacted(15_000); // the first compaction
        for _ in 0..3 {
            assert!(!d.thrashing);
            d.turn();
            d.turn();
            d.compacted(15_000); // refilled within 2 turns
        }
        assert!(d.thrashing);
        assert_eq!(d.paused_at, Some(15_000));
        let mut slow = ThrashDetector::default();
        slow.compacted(15_000);
        for _ in 0..5 {
            for _ in 0..4 {
                slow.turn();
            }
            slow.compacted(15_000); // refilled after 4 turns: not rapid
        }
        assert!(!slow.thrashing);
        d.reset();
        assert!(!d.thrashing);
    }

    #[test]
    fn a_pause_ends_when_the_threshold_grows_and_holds_otherwise() {
        let paused = || {
            let mut d = ThrashDetector::default();
            for _ in 0..=THRASH_REPEATS {
                d.turn();
                d.compacted(35_000);
            }
            assert!(d.thrashing);
            d
        };
        // The same window, or a smaller one (it refills at least as fast): still paused.
        for t in [35_000, 20_000] {
            let mut d = paused();
            d.threshold_is(t);
            assert!(d.thrashing, "{t}");
        }
        // A larger window: the refills measured against 35,000 say nothing about it.
        let mut d = paused();
        d.threshold_is(167_000);
        assert_eq!(d, ThrashDetector::default());
        // A pause of unknown threshold (a snapshot written before it was kept) holds.
        let mut d = paused();
        d.paused_at = None;
        d.threshold_is(167_000);
        assert!(d.thrashing);
    }

    #[test]
    fn skip_reasons_serialize_to_the_js_strings() {
        // The strings of `AutoCompactSkipReason` in types/index.d.ts.
        for (why, js) in [
            (SkipReason::Disabled, "disabled"),
            (SkipReason::CircuitBreakerOpen, "circuitBreakerOpen"),
            (SkipReason::BelowThreshold, "belowThreshold"),
            (SkipReason::QuerySource, "querySource"),
            (SkipReason::ReactiveOnly, "reactiveOnly"),
            (SkipReason::ContextCollapse, "contextCollapse"),
            (SkipReason::Compacting, "compacting"),
            (SkipReason::Thrashing, "thrashing"),
        ] {
            assert_eq!(serde_json::to_value(why).unwrap(), json!(js));
            assert_eq!(why.as_str(), js);
            assert_eq!(why.error().is_some(), why == SkipReason::Thrashing);
        }
    }

    #[test]
    fn fires_at_threshold() {
        let d = ask(167_000, Default::default(), Config::default());
        assert!(d.should_compact);
        assert!(!ask(166_999, Default::default(), Config::default()).should_compact);
    }

    #[test]
    fn snip_tokens_are_subtracted() {
        let d = ask(
            170_000,
            ShouldAutoCompactOptions {
                snip_tokens_freed: 5_000,
                ..Default::default()
            },
            Config::default(),
        );
        assert!(!d.should_compact);
        assert_eq!(d.token_count, 165_000);
    }

    #[test]
    fn every_guard() {
        let src = |s: &str| ShouldAutoCompactOptions {
            query_source: Some(s.into()),
            ..Default::default()
        };
        assert!(!ask(190_000, src("compact"), Config::default()).should_compact);
        assert!(!ask(190_000, src("session_memory"), Config::default()).should_compact);
        assert!(ask(190_000, src("marble_origami"), Config::default()).should_compact);
        let collapse = Config {
            context_collapse: Some(true),
            ..Default::default()
        };
        assert_eq!(
            ask(190_000, src("marble_origami"), collapse.clone()).blocked_by,
            Some(SkipReason::QuerySource)
        );
        assert_eq!(
            ask(190_000, Default::default(), collapse).blocked_by,
            Some(SkipReason::ContextCollapse)
        );
        let reactive = Config {
            reactive_only: Some(true),
            ..Default::default()
        };
        assert!(!ask(190_000, Default::default(), reactive).should_compact);
        let off = Config {
            disable_auto_compact: Some(true),
            ..Default::default()
        };
        assert_eq!(
            ask(190_000, Default::default(), off).blocked_by,
            Some(SkipReason::Disabled)
        );
    }
}
