//! A conversation that keeps its own token count and compacts itself: the rules of the JS
//! `Compactor`, over any message handle `M` (the bindings keep the caller's JS objects, native
//! code and tests keep [`Message`](crate::model::messages::Message)s).
//!
//! The session decides everything; the caller only converts and runs the compaction:
//!
//! * [`Session::push_all`] reads every new message before adding any (all or none) and keeps
//!   the running count, so a turn costs the work of its new messages.
//! * [`Session::check_auto_compact`] counts a turn and says whether an automatic compaction
//!   is due, with the checks of [`autocompact`] in their one order, after the session's own
//!   (a compaction running, thrashing).
//! * [`Session::begin`] starts a compaction on the messages held now and hands back a
//!   [`Compaction`]; it ends exactly once, with [`Session::commit`] (the compacted
//!   conversation, followed in order by the messages pushed meanwhile) or
//!   [`Session::abandon`] (the conversation unchanged, pushes kept).
//! * [`Session::snapshot`] and [`Session::restore`] save the session's state as plain data
//!   and rebuild it over the same messages, on any machine ([`crate::drive::snapshot`]).

use crate::drive::ahead::{Background, Cancel, Ticket};
use crate::drive::autocompact::{
    self, AutoCompactOutcome, ShouldAutoCompactOptions, SkipReason, ThrashDetector, Tracking,
};
use crate::drive::preemptive::{Ahead, AheadCut, EarlyLine};
use crate::drive::snapshot::{Fingerprint, SessionSnapshot};
use crate::measure::thresholds::{self, TokenWarningState};
use crate::measure::tokens::{message_facts, MessageFacts, Preamble, RunningCount};
use crate::model::config::Config;
use crate::model::error::{Error, ErrorCode, Result};
use crate::model::view::ConversationView;
use crate::transforms::boundary::Trigger;

/// A compaction in progress: the messages it works on and what was pushed since.
#[derive(Debug, Default)]
struct Running {
    /// How many messages the compaction took (the first ones held).
    taken: usize,
    /// The facts of the messages pushed since it began, for the count after the commit.
    pushed: Vec<MessageFacts>,
}

/// A stateful conversation: the messages, their running token count, auto-compaction
/// tracking, thrashing detection and the compaction in progress, if any.
#[derive(Debug)]
pub struct Session<M> {
    model: String,
    config: Config,
    messages: Vec<M>,
    count: RunningCount,
    /// The fingerprint of `messages`, kept up to date like the count.
    fingerprint: Fingerprint,
    tracking: Tracking,
    thrash: ThrashDetector,
    running: Option<Running>,
    preamble: Option<Preamble>,
    /// The usage given with [`set_usage`](Self::set_usage) and how many messages were held
    /// then (a snapshot carries it: the messages do not).
    given_usage: Option<(usize, crate::model::view::UsageCounts)>,
    /// The summary written ahead of the threshold (off unless
    /// [`set_early_line`](Self::set_early_line) turns it on); never in a snapshot.
    background: Background,
    /// What the usage taught before the messages held from `learned.1` on (of messages
    /// compacted away, or restored from a snapshot): a [`recount`](Self::recount) learns from
    /// those messages again on top of it.
    learned: (crate::measure::calibration::Calibration, usize),
    /// The estimate of the content of each message held that a recount found on another
    /// branch, kept for the next recount (a held message does not change).
    branch_tokens: Vec<Option<u64>>,
    /// The observations the last recount learned on top of `learned.0`, and what they gave:
    /// a recount whose observations begin with them (a push rarely changes the earlier ones)
    /// observes only the new ones.
    relearned: (
        Vec<crate::measure::calibration::Observed>,
        crate::measure::calibration::Calibration,
    ),
}

/// A compaction started by [`Session::begin`]; give it back to [`Session::commit`] or
/// [`Session::abandon`].
#[derive(Debug)]
#[must_use = "a compaction must end with Session::commit or Session::abandon"]
pub struct Compaction {
    trigger: Trigger,
    /// An automatic one begun below the threshold to swap the summary written ahead in a
    /// check early ([`Background::swap_early`]).
    early: bool,
}

impl Compaction {
    /// Automatic (`maybeAutoCompact`) or manual (`compact`).
    pub fn trigger(&self) -> Trigger {
        self.trigger
    }

    /// Whether it swaps the summary written ahead in a check before the threshold (the
    /// automatic compaction then swaps even though the count is below it).
    pub fn swap_early(&self) -> bool {
        self.early
    }
}

impl<M> Session<M> {
    /// An empty conversation for `model`, with `config` for its thresholds.
    pub fn new(model: String, config: Config) -> Self {
        Session {
            model,
            config,
            messages: Vec::new(),
            count: RunningCount::default(),
            fingerprint: Fingerprint::default(),
            tracking: Tracking::default(),
            thrash: ThrashDetector::default(),
            running: None,
            preamble: None,
            given_usage: None,
            background: Background::default(),
            learned: Default::default(),
            branch_tokens: Vec::new(),
            relearned: Default::default(),
        }
    }

    /// Turns pre-emptive summaries on from `early_line` tokens (`None`: off, the default).
    pub fn set_early_line(&mut self, early_line: Option<EarlyLine>) {
        self.background = Background::with_line(early_line);
    }

    /// The summary written ahead: its state, the ready one, the last failure.
    pub fn background(&self) -> &Background {
        &self.background
    }

    /// The automatic-compaction threshold of the session's model and configuration.
    fn threshold(&self) -> u64 {
        thresholds::auto_compact_threshold(&self.model, &self.config)
    }

    /// Whether a summary should be written ahead now: pre-emptive summaries on, the count
    /// past the early line and compaction not yet due (when due, the next check compacts
    /// anyway — the ready summary or today's path — and drops a summary started now; while
    /// automatic compaction is paused, nothing would swap it in), no compaction running, none
    /// running or fresh. Due as [`check_auto_compact`](Self::check_auto_compact) decides it:
    /// the tokens snipping freed (`snip_tokens_freed`, read only when the count is at the
    /// threshold or above) are taken off the count first, at the count it would land at.
    pub fn wants_ahead(&self, snip_tokens_freed: impl FnOnce() -> u64) -> bool {
        if !self.background.wants_start(
            self.token_count(),
            self.compacting(),
            self.calibration().fit().as_ref(),
        ) {
            return false;
        }
        // Nor one that would land past the point where compaction is due (the count grows by
        // the flight while it is written): that compaction drops it before it lands. Where
        // summaries are slower than the stretch from the early line to the threshold (a slow
        // summarizer; a 1M window, whose line is 20,000 tokens below it) none ever lands, and
        // each would be paid for and never used (sessions16 S3).
        let threshold = self.threshold();
        let lands_at = self.token_count().saturating_add(self.background.flight());
        lands_at < threshold || !autocompact::is_due(lands_at, snip_tokens_freed(), threshold)
    }

    /// Where a summary written ahead of `view` (the messages held, as read for it) would cut
    /// ([`crate::drive::preemptive::ahead_cut`]), when there is an earlier turn to summarize
    /// and such a summary is worth starting ([`Background::worth_starting`]).
    pub fn ahead_plan<V: ConversationView + ?Sized>(&self, view: &V) -> Result<Option<AheadCut>> {
        Ok(crate::drive::preemptive::ahead_cut(view)?.filter(|plan| {
            self.background.worth_starting(
                (plan.tail, plan.pending),
                self.token_count(),
                self.threshold(),
                self.calibration().fit().as_ref(),
            )
        }))
    }

    /// Whether the summary written ahead should be swapped in now, a check before the
    /// threshold (see [`Background::swap_early`]): then [`check_auto_compact`]
    /// (Self::check_auto_compact) does not skip, and the automatic compaction
    /// [`begin`](Self::begin)s says so ([`Compaction::swap_early`]).
    fn swap_early(&self) -> bool {
        !self.compacting()
            && self.background.swap_early(
                self.token_count(),
                self.threshold(),
                self.calibration().fit().as_ref(),
            )
    }

    /// Records a summary written ahead started for the messages before `cut`, `tail`
    /// estimated tokens since it: its ticket and the ready one to chain it after.
    pub fn start_ahead(&mut self, cut: usize, tail: u64) -> (Ticket, Option<Ahead>) {
        let count = self.token_count();
        self.background.start(cut, count, tail)
    }

    /// Sets how to cancel the summary written ahead started with `ticket` (see
    /// [`Background::set_cancel`]).
    pub fn set_ahead_cancel(&mut self, ticket: Ticket, cancel: Cancel) {
        self.background.set_cancel(ticket, cancel);
    }

    /// The automatic `compaction` ran: `swapped` says whether the summary written ahead was
    /// swapped in. One begun to swap early that did not swap (refused, aborted, vetoed) marks
    /// that summary refused (see [`Background::refused`]): not offered early again, and a
    /// refresh replaces it.
    pub fn ahead_tried(&mut self, compaction: &Compaction, swapped: bool) {
        if compaction.early && !swapped {
            self.background.refused();
        }
    }

    /// A summary written ahead landed (see [`Background::landed`]).
    pub fn ahead_landed(&mut self, ticket: Ticket, result: std::result::Result<Ahead, Error>) {
        let count = self.token_count();
        self.background.landed_at(ticket, result, count);
    }

    /// Drops the summary written ahead (a manual compaction replaces the conversation).
    pub fn drop_ahead(&mut self) {
        self.background.drop_all();
    }

    /// What every request sends besides the messages (system prompt, tool definitions):
    /// counted while no response's usage anchors the count (usage includes it).
    pub fn set_preamble(&mut self, preamble: Option<Preamble>) {
        self.preamble = preamble;
    }

    /// Usage the provider reported for the latest response, which its message does not
    /// carry (the AI SDK's, OpenAI's): the count is anchored there, exactly as if the message
    /// carried it. An error when there is no response since the last compaction to give it to.
    /// A usage whose input counts are all 0 (a provider that reported none) changes nothing
    /// ([`UsageCounts::is_zero`](crate::model::view::UsageCounts::is_zero)).
    pub fn set_usage(&mut self, usage: crate::model::view::UsageCounts) -> Result<()> {
        if usage.is_zero() {
            return Ok(());
        }
        if self.count.anchor_latest(usage) {
            self.given_usage = Some((self.messages.len(), usage));
            Ok(())
        } else {
            Err(Error::invalid_argument(
                "setUsage: no assistant response has been pushed since the conversation began or was compacted; push the response first",
            ))
        }
    }

    /// The usage given by [`set_usage`](Self::set_usage) for the conversation held now, with
    /// the number of messages held when it was given (it belongs to the latest assistant
    /// response among those); `None` when none was given since it began or was compacted.
    pub fn given_usage(&self) -> Option<(usize, crate::model::view::UsageCounts)> {
        self.given_usage
    }

    /// The model the thresholds are for.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The configuration the thresholds are computed with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Appends the messages of `view`, `item(view, i)` being the handle kept for message `i`.
    /// Every message is read first: on an error nothing is added.
    pub fn push_all<V: ConversationView + ?Sized>(
        &mut self,
        view: &V,
        item: fn(&V, usize) -> M,
    ) -> Result<()> {
        self.push_range(view, 0..view.len(), item)
    }

    /// [`push_all`](Self::push_all) of the messages `range` of `view`.
    fn push_range<V: ConversationView + ?Sized>(
        &mut self,
        view: &V,
        range: std::ops::Range<usize>,
        item: fn(&V, usize) -> M,
    ) -> Result<()> {
        let mut facts = Vec::with_capacity(crate::model::view::reserve_for(range.len()));
        for i in range.clone() {
            facts.push(message_facts(view, i)?);
        }
        // All read and valid: only now is anything added.
        self.messages.reserve(facts.len());
        for (i, f) in range.zip(facts) {
            self.count.push(&f);
            self.fingerprint.push(&f);
            self.messages.push(item(view, i));
            if let Some(r) = &mut self.running {
                r.pushed.push(f);
            }
        }
        Ok(())
    }

    /// Reads the running count again from `view`, the messages held (one for one), as it
    /// reads them now: a Claude Code session file whose conversation the latest push changed
    /// (a rewind, a resume under another parent, a sub-agent's own file) is then counted
    /// along its chain, as a compaction reads it. The usage given by
    /// [`set_usage`](Self::set_usage) is given again where it was. What the usage taught
    /// before the messages held stays; the messages held are learned from again as
    /// [`learned_before`](crate::measure::tokens::learned_before) learns from them — the usage
    /// of the chain's responses and of the branches it leaves out, in file order — so that the
    /// count is `tokenCountWithEstimation`'s however the messages were pushed. Nothing while a
    /// compaction runs (its result is read when it lands), or when `view` holds other
    /// messages; on an error the count is unchanged.
    pub fn recount<V: ConversationView + ?Sized>(&mut self, view: &V) -> Result<()> {
        if self.compacting() || view.len() != self.messages.len() {
            return Ok(());
        }
        let mut facts = Vec::with_capacity(crate::model::view::reserve_for(view.len()));
        for i in 0..view.len() {
            facts.push(message_facts(view, i)?);
        }
        let from = self.learned.1;
        let mut seen = Vec::new();
        let mut learn = |i: usize, o: Option<crate::measure::calibration::Observed>| {
            if let (true, Some(o)) = (i >= from, o) {
                seen.push(o);
            }
        };
        let branches = view.has_other_branches();
        let kept = &mut self.branch_tokens;
        kept.resize(if branches { view.len() } else { 0 }, None);
        let mut count = RunningCount::default();
        let mut written = RunningCount::default();
        let mut fingerprint = Fingerprint::default();
        for (i, f) in facts.into_iter().enumerate() {
            if let Some((at, usage)) = self.given_usage {
                if at == i {
                    learn(i, count.anchor_latest_observed(usage).flatten());
                }
            }
            learn(i, count.push_observed(&f));
            fingerprint.push(&f);
            if branches {
                let content = || match kept[i] {
                    Some(t) => Ok(t),
                    None => {
                        let c = view.content(i, crate::model::view::Detail::Estimate)?;
                        let t = crate::measure::tokens::estimate_content(&c);
                        kept[i] = Some(t);
                        Ok(t)
                    }
                };
                learn(
                    i,
                    written.push_as_written_with(view.on_other_branch(i), f, content)?,
                );
            }
        }
        if let Some((at, usage)) = self.given_usage {
            if at == view.len() {
                learn(at, count.anchor_latest_observed(usage).flatten());
            }
        }
        // The base and what the messages held teach, observed in order.
        let (before, cached) = &self.relearned;
        let hit = !before.is_empty() && seen.starts_with(before);
        let mut learned = if hit {
            cached.clone()
        } else {
            self.learned.0.clone()
        };
        let known = if hit { before.len() } else { 0 };
        for &o in &seen[known..] {
            learned.observe_as(o);
        }
        self.relearned = (seen, learned.clone());
        count.set_calibration(learned);
        self.count = count;
        self.fingerprint = fingerprint;
        Ok(())
    }

    /// The conversation.
    pub fn messages(&self) -> &[M] {
        &self.messages
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        self.messages.len()
    }

    /// Whether the conversation is empty.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The context size in tokens, the same as `tokenCountWithEstimation` of
    /// [`messages`](Self::messages) with the [preamble](Self::set_preamble), in O(1).
    pub fn token_count(&self) -> u64 {
        match &self.preamble {
            Some(p) if !self.count.is_anchored() && !self.count.is_calibrated() => {
                self.count.total() + p.tokens()
            }
            _ => self.count.total(),
        }
    }

    /// `calculateTokenWarningState` for the current size and the model.
    pub fn warning_state(&self) -> TokenWarningState {
        thresholds::token_warning_state(self.token_count(), &self.model, &self.config)
    }

    /// The auto-compaction tracking (failures in a row).
    pub fn tracking(&self) -> &Tracking {
        &self.tracking
    }

    /// Whether automatic compaction is paused for thrashing.
    pub fn thrashing(&self) -> bool {
        self.thrash.thrashing
    }

    /// Whether a compaction is running.
    pub fn compacting(&self) -> bool {
        self.running.is_some()
    }

    /// `maybeAutoCompact`'s decision, once per turn (a turn is counted for thrashing
    /// detection), with the `querySource` and `snipTokensFreed` of the `Compactor`'s options
    /// (`options`), read as `autoCompactIfNeeded` reads them. `Some`: the outcome to report, nothing attempted. `None`: automatic
    /// compaction is due by the running count; [`begin`](Self::begin) one and run
    /// `autoCompactIfNeeded` (which checks again on the full count).
    ///
    /// The order: a compaction already running, thrashing (reported only when due, with a
    /// `THRASHING` error), then [`autocompact::auto_compact_guard`], then the threshold.
    pub fn check_auto_compact(
        &mut self,
        options: &ShouldAutoCompactOptions,
    ) -> Option<AutoCompactOutcome> {
        self.thrash.turn();
        if !self.compacting() {
            self.background.observe_check(self.token_count());
        }
        let threshold = self.threshold();
        let due = autocompact::is_due(self.token_count(), options.snip_tokens_freed, threshold)
            || self.swap_early();
        let why = if self.compacting() {
            Some(SkipReason::Compacting)
        } else if due
            && self.thrash.pauses(
                self.token_count().saturating_sub(options.snip_tokens_freed),
                thresholds::blocking_limit(&self.model, &self.config),
            )
        {
            Some(SkipReason::Thrashing)
        } else if let Some(why) =
            autocompact::auto_compact_guard(&self.config, &self.tracking, options)
        {
            Some(why)
        } else if !due {
            Some(SkipReason::BelowThreshold)
        } else if autocompact::is_futile(
            self.count.is_calibrated(),
            self.calibration().fit().as_ref(),
            threshold,
        ) {
            Some(SkipReason::OverheadAboveThreshold)
        } else {
            None
        };
        why.map(|w| AutoCompactOutcome::skipped(w, self.tracking.consecutive_failures))
    }

    /// Starts a compaction of the messages held now: `read` converts them for it (its error
    /// is returned and nothing starts). Fails when one is already running.
    pub fn begin<T>(
        &mut self,
        trigger: Trigger,
        read: impl FnOnce(&[M]) -> Result<T>,
    ) -> Result<(Compaction, T)> {
        if self.compacting() {
            return Err(Error::invalid_argument(
                "a compaction is already running on this Compactor",
            ));
        }
        let input = read(&self.messages)?;
        let early = trigger == Trigger::Auto && self.swap_early();
        self.running = Some(Running {
            taken: self.messages.len(),
            pushed: Vec::new(),
        });
        Ok((Compaction { trigger, early }, input))
    }

    /// Ends a compaction that failed or produced nothing: the conversation stays as it is,
    /// with what was pushed meanwhile.
    #[inline(never)] // one copy of the drop of what was pushed meanwhile (wasm size)
    pub fn abandon(&mut self, compaction: Compaction) {
        let _ = compaction;
        self.running = None;
    }

    /// Sets the automatic compactions' failure count (one that failed before it began: its
    /// messages could not be read).
    pub fn set_consecutive_failures(&mut self, n: u32) {
        self.tracking.consecutive_failures = n;
    }

    /// Records what an automatic compaction (`autoCompactIfNeeded`) reported: its failure
    /// count becomes the session's. Returns the compaction to [`commit`](Self::commit) when
    /// it produced a result; otherwise it is ended here, the conversation unchanged.
    pub fn auto_finished(
        &mut self,
        compaction: Compaction,
        outcome: &AutoCompactOutcome,
    ) -> Option<Compaction> {
        self.tracking.consecutive_failures = outcome.consecutive_failures;
        if let Some(r) = &outcome.result {
            self.background.from_memory(r.from_session_memory);
            Some(compaction)
        } else {
            self.abandon(compaction);
            None
        }
    }

    /// Ends a compaction with its result: the conversation becomes the messages of
    /// `compacted` (`item(view, i)` the handle kept for message `i`) followed, in order, by the
    /// messages pushed while it ran, and the count starts over from them. An automatic
    /// compaction counts towards thrashing; a manual one resets the detection. Either closes
    /// the circuit breaker (the failures in a row are 0).
    ///
    /// When `compacted` cannot be read (or is an error), the compaction is abandoned (the
    /// conversation unchanged) and an `INVALID_MESSAGE` error returned.
    pub fn commit<V: ConversationView + ?Sized>(
        &mut self,
        compaction: Compaction,
        compacted: Result<&V>,
        item: fn(&V, usize) -> M,
    ) -> Result<()> {
        let running = self.running.take().unwrap_or_default();
        let pushed = self.messages.split_off(running.taken);
        let taken = std::mem::take(&mut self.messages);
        let count = std::mem::take(&mut self.count);
        let fingerprint = std::mem::take(&mut self.fingerprint);
        // What the usage taught stays: the first request after the compaction is counted by it.
        self.count.set_calibration(count.calibration().clone());
        let learned = std::mem::replace(&mut self.learned, (count.calibration().clone(), 0));
        self.branch_tokens.clear();
        let relearned = std::mem::take(&mut self.relearned);
        // Not running any more: the compacted messages are read like a push.
        if let Err(e) = compacted.and_then(|view| self.push_all(view, item)) {
            self.messages = taken;
            self.messages.extend(pushed);
            self.count = count;
            self.fingerprint = fingerprint;
            self.learned = learned;
            self.relearned = relearned;
            return Err(Error::new(
                ErrorCode::InvalidMessage,
                format!(
                    "the compacted conversation could not be read back: {}",
                    e.message
                ),
            ));
        }
        self.messages.extend(pushed);
        for f in &running.pushed {
            self.count.push(f);
            self.fingerprint.push(f);
        }
        // The usage given before measured the old conversation; a summary written ahead
        // summarized it.
        self.given_usage = None;
        self.background.drop_all();
        self.background.compacted(self.token_count());
        match compaction.trigger {
            Trigger::Auto => self.thrash.compacted(self.threshold()),
            Trigger::Manual => self.thrash.reset(),
        }
        // A compaction that succeeded, of either trigger, ends the failures in a row: the
        // summarizer works again, so the circuit breaker closes (a manual or reactive one
        // after an outage must not leave automatic compaction off for good).
        self.tracking.consecutive_failures = 0;
        Ok(())
    }

    /// How many messages the boundary of compaction `r` must count among those it keeps from
    /// the old context besides its own `keptMessages`: the sent messages pushed while it ran,
    /// when one of them carries usage ([`Self::pushed_with_old_usage`]), and the restored
    /// attachments and hook results that come between the kept messages and them. 0 when no
    /// such message was pushed.
    pub fn kept_with_pushed(&self, r: &crate::drive::pipeline::CompactionResult) -> Result<usize> {
        let pushed = self.pushed_with_old_usage();
        if pushed == 0 {
            return Ok(0);
        }
        let sent = crate::drive::pipeline::sent_count;
        Ok(pushed + sent(&r.attachments)? + sent(&r.hook_results)?)
    }

    /// How many sent messages were pushed while the running compaction ran, when one of them
    /// carries usage (0 otherwise): that usage measured the conversation the compaction
    /// replaces (its request was sent before the commit), so the compacted conversation's
    /// boundary must count those messages among the ones it keeps from the old context
    /// (`compactMetadata.keptMessages`), else the count after the commit is the old
    /// context's size and the next check compacts again.
    pub fn pushed_with_old_usage(&self) -> usize {
        let Some(r) = &self.running else {
            return 0;
        };
        if !r.pushed.iter().any(|f| f.usage.is_some() && !f.sidechain) {
            return 0;
        }
        r.pushed
            .iter()
            .filter(|f| {
                !f.sidechain
                    && matches!(
                        f.kind,
                        Some(
                            crate::model::messages::Kind::User
                                | crate::model::messages::Kind::Assistant
                                | crate::model::messages::Kind::Attachment
                        )
                    )
            })
            .count()
    }

    /// The state to save: the failures in a row, the thrashing detection, and the number,
    /// fingerprint and count of the messages held now (a compaction running is left out:
    /// restored, the conversation is the one held now; so is a summary written ahead, running
    /// or ready: the restored session starts without one). O(1).
    pub fn snapshot(&self) -> SessionSnapshot {
        SessionSnapshot {
            messages: self.messages.len(),
            fingerprint: self.fingerprint.value(),
            token_count: self.token_count(),
            consecutive_failures: self.tracking.consecutive_failures,
            thrash: self.thrash.clone(),
            usage: self.given_usage,
            calibration: self.count.calibration().clone(),
        }
    }

    /// What the usage seen so far (also before compactions) teaches about the messages' real
    /// size: see [`crate::measure::calibration`].
    pub fn calibration(&self) -> &crate::measure::calibration::Calibration {
        self.count.calibration()
    }

    /// Rebuilds, in this new and empty session (made for the same model and options), the
    /// session saved by [`snapshot`](Self::snapshot), over the messages of `view`
    /// (`item(view, i)` the handle kept for message `i`): the same count, failures in a row
    /// and thrashing detection, hence the same decisions. The messages are read as
    /// [`push_all`](Self::push_all) reads them. When they are not the ones of the snapshot
    /// (number, fingerprint or count) it is a `SNAPSHOT_MISMATCH` error; on any error the
    /// session stays empty. A session that holds messages is an `INVALID_ARGUMENT` error.
    pub fn restore<V: ConversationView + ?Sized>(
        &mut self,
        snapshot: &SessionSnapshot,
        view: &V,
        item: fn(&V, usize) -> M,
    ) -> Result<()> {
        if !self.is_empty() || self.compacting() {
            return Err(Error::invalid_argument(
                "a snapshot is restored into a new Compactor, not one that holds messages",
            ));
        }
        if view.len() != snapshot.messages {
            // Before reading them: the cheapest check first.
            return snapshot.check_messages(view.len(), 0, 0);
        }
        let (count, fingerprint) = (self.count.clone(), self.fingerprint);
        let read = match snapshot.usage {
            // The usage given then is given again where it was: after the messages held then.
            Some((at, usage)) if at <= view.len() => {
                self.push_range(view, 0..at, item).and_then(|()| {
                    if self.count.anchor_latest(usage) {
                        self.given_usage = Some((at, usage));
                        self.push_range(view, at..view.len(), item)
                    } else {
                        Err(Error::new(
                            ErrorCode::SnapshotMismatch,
                            format!("the snapshot's usage belongs to a response before message {at}, and there is none"),
                        ))
                    }
                })
            }
            Some((at, _)) => Err(Error::new(
                ErrorCode::SnapshotMismatch,
                format!("the snapshot's usage was given after {at} messages; there are {}", view.len()),
            )),
            None => self.push_all(view, item),
        };
        // The calibration saved also learned from messages compacted away since.
        if read.is_ok() {
            self.count.set_calibration(snapshot.calibration.clone());
            self.learned = (snapshot.calibration.clone(), view.len());
            self.branch_tokens.clear();
            self.relearned = Default::default();
        }
        let checked = read.and_then(|()| {
            snapshot.check_messages(self.len(), self.fingerprint.value(), self.token_count())
        });
        if let Err(e) = checked {
            self.messages.clear();
            self.count = count;
            self.fingerprint = fingerprint;
            self.given_usage = None;
            self.learned = Default::default();
            self.relearned = Default::default();
            return Err(e);
        }
        self.tracking.consecutive_failures = snapshot.consecutive_failures;
        self.thrash = snapshot.thrash.clone();
        self.thrash.threshold_is(self.threshold());
        Ok(())
    }
}
