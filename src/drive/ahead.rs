//! The `Compactor`'s summary written ahead: when to start one, what it holds while it runs
//! and once it lands, and when it is dropped. The summary itself is written by
//! [`crate::drive::preemptive::summarize_ahead`] and swapped in by
//! [`crate::drive::preemptive::swap`]; this module only keeps the state (see
//! [`crate::drive::session::Session`], which owns one).
//!
//! * Off by default ([`Background::new`] with `None`): a summary written ahead is a model
//!   call a conversation may never need (it may end before the threshold).
//! * Started ([`Background::start`]) when the count crosses the early line, no compaction is
//!   running, and no summary is running or fresh (a ready one is stale when the messages since
//!   its cut would already put a swap over the bound, see [`Background::stale`]).
//! * Landed ([`Background::landed`]) with the ticket it was started with: a summary whose
//!   conversation was replaced meanwhile (a compaction committed, a manual `compact()`) has
//!   an old ticket and is dropped; a failure is kept as the last error, never thrown, and the
//!   next one waits until the count has grown ([`RETRY_STEP_TOKENS`], doubled per failure).
//! * Swapped in by the automatic compaction at the threshold, or one check before it
//!   ([`Background::swap_early`]) when waiting one more turn could put the swap over the
//!   bound: the largest growth seen between two checks ([`Background::observe_check`]) is
//!   the turn to come. Swapping a turn early leaves a context within the bound with no wait;
//!   swapping a turn late would be refused, and the conversation would wait for today's path.

use crate::drive::preemptive::{
    post_compact_fits, Ahead, EarlyLine, PostCompactSizes, MAX_POST_COMPACT_RATIO,
};
use crate::measure::calibration::Fit;
use crate::measure::tokens::text_tokens;
use crate::model::error::Error;
use std::rc::Rc;

/// What the background holds.
#[derive(Clone, Debug, Default)]
pub enum AheadState {
    /// No summary written ahead.
    #[default]
    Idle,
    /// One is being written for the messages before `cut`.
    Running {
        /// Its cut (index into the conversation).
        cut: usize,
    },
    /// One is ready.
    Ready(Ahead),
}

/// How to cancel the summary running now: given by the caller that started it (the bindings
/// abort its request), called by [`Background::drop_all`] when its conversation is replaced,
/// so a summary nobody will use stops costing tokens.
#[derive(Clone, Default)]
pub struct Cancel(Option<Rc<dyn Fn()>>);

impl Cancel {
    /// A cancel that calls `f` (at most once).
    pub fn new(f: impl Fn() + 'static) -> Cancel {
        Cancel(Some(Rc::new(f)))
    }

    fn fire(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Cancel(set)"
        } else {
            "Cancel(none)"
        })
    }
}

/// The summary written ahead of the threshold, for one session.
#[derive(Clone, Debug, Default)]
pub struct Background {
    /// Where summaries start; `None`: pre-emptive summaries are off.
    early_line: Option<EarlyLine>,
    state: AheadState,
    /// The running or ready summary's [`Mark`].
    mark: Mark,
    /// A ready summary kept while a refresh runs (swapped in if the refresh is late), with
    /// its mark.
    previous: Option<(Ahead, Mark)>,
    /// The ticket of the summary running now; a landing with another is dropped.
    ticket: u64,
    /// The last background summary that failed, until the next one starts.
    error: Option<Error>,
    /// The count at the last check (`None` before the first and after the conversation was
    /// replaced).
    last_check: Option<u64>,
    /// The largest growth of the count between two checks: the turn that may come next.
    headroom: u64,
    /// Cancels the summary running now, when its conversation is replaced.
    cancel: Cancel,
    /// Background summaries that failed in a row (reset by one that lands).
    failures: u32,
    /// After a failure, no summary starts before the count reaches this
    /// ([`RETRY_STEP_TOKENS`], doubled for each failure in a row).
    retry_at: u64,
    /// The count right after the latest compaction ([`compacted`](Self::compacted); 0 before
    /// one, and after a restore): an automatic line stays at least halfway from it to the
    /// threshold.
    base: u64,
    /// The estimated tokens of the latest summary that landed (0 before one): the size the
    /// next is expected to have.
    summary_tokens: u64,
    /// The growth of the count between the last two checks: the size of the latest turn.
    last_growth: u64,
    /// How much the count grows while a summary is written: from the latest summary's start
    /// to when it landed (while one runs, at least what it took so far; 0: none measured).
    /// Halved at a compaction no summary was started for, so that one measured in a busy
    /// stretch does not keep summaries from starting for good.
    flight: u64,
    /// A summary was started since the latest compaction.
    started: bool,
    /// The latest automatic compaction came from the session memory (no model call, no
    /// wait): while it does, no summary is written ahead (see
    /// [`from_memory`](Self::from_memory)).
    memory: bool,
}

/// How much the count must grow after a failed background summary before another starts;
/// doubled for each failure in a row. A summarizer that is down is not called on every push
/// (the threshold still runs today's path, which reports the failure).
pub const RETRY_STEP_TOKENS: u64 = 2_000;

/// What the background knows of one summary besides its text.
#[derive(Clone, Copy, Debug, Default)]
struct Mark {
    /// The count when it was started.
    count: u64,
    /// The estimated tokens since its cut then.
    tail: u64,
    /// A swap of it was refused ([`Background::refused`]): it is not offered again early,
    /// and a refresh replaces it.
    refused: bool,
    /// The ticket it was started with.
    ticket: u64,
}

impl Mark {
    /// Whether a swap of `ready` at `count` tokens, with `more` tokens still to come, stays
    /// within the bound (before restored files, which only make it easier). The tail is
    /// estimated as the tail when it started plus what the count grew since.
    fn fits(&self, ready: &Ahead, count: u64, more: u64, fit: Option<&Fit>) -> bool {
        let sizes = PostCompactSizes {
            summary: text_tokens(&ready.summary),
            kept: self.tail + count.saturating_sub(self.count) + more,
            attachments: 0,
        };
        post_compact_fits(&sizes, fit, MAX_POST_COMPACT_RATIO)
    }
}

/// A started summary's identity: give it back to [`Background::landed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u64);

impl Background {
    /// A background that starts summaries from `early_line` tokens on (`None`: never).
    pub fn new(early_line: Option<u64>) -> Background {
        Background::with_line(early_line.map(EarlyLine::Fixed))
    }

    /// A background that starts summaries from `early_line` on (`None`: never); with
    /// [`EarlyLine::Auto`] the line moves down as larger turns are seen.
    pub fn with_line(early_line: Option<EarlyLine>) -> Background {
        Background {
            early_line,
            ..Default::default()
        }
    }

    /// The early line now, when pre-emptive summaries are on (an automatic one moves down as
    /// larger turns are seen, see [`EarlyLine::at`], but stays at least halfway between the
    /// count a compaction left and the threshold: where a compaction leaves the context at
    /// the warning line or above it — small windows, large turns — a line there would start a
    /// summary of little more than the last one right after each compaction, refresh it on
    /// every turn and swap it in for nothing gained).
    pub fn early_line(&self) -> Option<u64> {
        self.early_line.map(|l| match l {
            EarlyLine::Auto { threshold, .. } => l
                .at(self.headroom)
                .max(self.base + threshold.saturating_sub(self.base) / 2),
            EarlyLine::Fixed(_) => l.at(self.headroom),
        })
    }

    /// The conversation was compacted and counts `count` tokens now (see
    /// [`early_line`](Self::early_line)).
    pub fn compacted(&mut self, count: u64) {
        self.base = count;
        if !self.started {
            self.flight /= 2;
        }
        self.started = false;
    }

    /// The latest automatic compaction did (`true`) or did not come from the session memory.
    /// While it does, [`wants_start`](Self::wants_start) starts nothing: the next compaction
    /// is expected from the memory too, with no model call and no wait, and a summary written
    /// ahead would be paid for and dropped (its swap refused when stale, and no catch-up is
    /// made with a session memory). One that did not (the memory gave nothing to compact
    /// from) starts them again.
    pub fn from_memory(&mut self, yes: bool) {
        self.memory = yes;
    }

    /// Idle, running or ready.
    pub fn state(&self) -> &AheadState {
        &self.state
    }

    /// The last background summary that failed (cleared when another starts).
    pub fn error(&self) -> Option<&Error> {
        self.error.as_ref()
    }

    /// Whether a ready summary is stale at `count` tokens: the messages since its cut
    /// (estimated as its tail when started plus what the count grew since) would put a swap
    /// over the bound even before restored files are counted.
    pub fn stale(&self, ready: &Ahead, count: u64, fit: Option<&Fit>) -> bool {
        !self.mark.fits(ready, count, 0, fit)
    }

    /// The summary a swap would take ([`ready`](Self::ready)) and its mark.
    fn offered(&self) -> Option<(&Ahead, &Mark)> {
        match &self.state {
            AheadState::Ready(a) => Some((a, &self.mark)),
            AheadState::Running { .. } => self.previous.as_ref().map(|(a, m)| (a, m)),
            AheadState::Idle => None,
        }
    }

    /// Records a check for an automatic compaction (one per request) at `count` tokens: the
    /// growth since the last check, when it is the largest seen, becomes the headroom a swap
    /// keeps for the turn to come.
    /// While a summary runs, what the count grew since it started is the least its flight
    /// will be (see [`worth_starting`](Self::worth_starting)).
    pub fn observe_check(&mut self, count: u64) {
        if let Some(last) = self.last_check {
            self.last_growth = count.saturating_sub(last);
            self.headroom = self.headroom.max(self.last_growth);
        }
        self.last_check = Some(count);
        if matches!(self.state, AheadState::Running { .. }) {
            self.flight = self.flight.max(count.saturating_sub(self.mark.count));
        }
    }

    /// How much the count grows while a summary is written (see
    /// [`worth_starting`](Self::worth_starting)), landed or not: a summary started now lands
    /// at about the count plus this. Measured before any has landed too (while one runs, what
    /// the count grew since it started), so that where none lands before the compaction drops
    /// it, the next is not started ([`crate::drive::session::Session::wants_ahead`]).
    pub fn flight(&self) -> u64 {
        self.flight
    }

    /// The largest growth of the count seen between two checks (0 before the second check).
    pub fn headroom(&self) -> u64 {
        self.headroom
    }

    /// Whether the ready summary should be swapped in now, at `count` tokens below the
    /// `threshold`: it fits now, but the next turn, as large as the largest seen
    /// ([`headroom`](Self::headroom)), could both carry the count over the threshold and put
    /// the swap over the bound — when it would be refused and the conversation would wait
    /// for today's path. Never before the early line, nor without a ready summary.
    pub fn swap_early(&self, count: u64, threshold: u64, fit: Option<&Fit>) -> bool {
        let Some(line) = self.early_line() else {
            return false;
        };
        let Some((ready, mark)) = self.offered() else {
            return false;
        };
        !mark.refused
            && count >= line
            && count < threshold
            && count + self.headroom >= threshold
            && mark.fits(ready, count, 0, fit)
            && !mark.fits(ready, count, self.headroom, fit)
    }

    /// Whether a summary should start now, at `count` tokens (`compacting`: a compaction is
    /// running, which replaces the conversation anyway).
    pub fn wants_start(&self, count: u64, compacting: bool, fit: Option<&Fit>) -> bool {
        let Some(line) = self.early_line() else {
            return false;
        };
        if compacting || self.memory || count < line.max(self.retry_at) {
            return false;
        }
        match &self.state {
            AheadState::Idle => true,
            AheadState::Running { .. } => false,
            AheadState::Ready(a) => self.mark.refused || self.stale(a, count, fit),
        }
    }

    /// Whether a summary that keeps `tail` estimated tokens after its cut (the latest turn) is
    /// worth starting now, at `count` tokens below `threshold`. Always before a first summary
    /// has landed; after, one as large as the latest that landed must
    /// - not be [`stale`](Self::stale) from the start: it would be refreshed on the next push,
    ///   and where every turn is that large, on every push (a summary call per turn, never
    ///   swapped in). A `pending` turn (tool results still to come) is taken to grow as the
    ///   latest turn did;
    /// - when it refreshes a ready one, still fit once the count has grown to where a swap
    ///   happens (the threshold, less the headroom a swap keeps for the next turn): far below
    ///   it, a refresh goes stale again before it can be swapped in;
    /// - still fit when it lands: the count grows while it is written, by as much as it grew
    ///   while the latest measured one ran (its flight). Where turns are large and summaries
    ///   slow, every summary started lands stale: each would be paid for and refused.
    ///
    /// The swap's context without the kept messages is taken as the larger of the last summary
    /// and what the last compaction left (which holds the files and skills it restored: a swap
    /// restores them too, and they widen its bound; the summary alone would refuse every turn
    /// larger than 0.3 of it).
    pub fn worth_starting(
        &self,
        (tail, pending): (u64, bool),
        count: u64,
        threshold: u64,
        fit: Option<&Fit>,
    ) -> bool {
        if self.summary_tokens == 0 {
            return true;
        }
        let fits_keeping = |kept: u64| {
            let sizes = PostCompactSizes {
                summary: self.summary_tokens.max(self.base),
                kept,
                attachments: 0,
            };
            post_compact_fits(&sizes, fit, MAX_POST_COMPACT_RATIO)
        };
        let now = if pending {
            tail.max(self.last_growth)
        } else {
            tail
        };
        let growth = threshold.saturating_sub(count.saturating_add(self.headroom));
        fits_keeping(now)
            && fits_keeping(tail.saturating_add(self.flight))
            && (!matches!(self.state, AheadState::Ready(_))
                || fits_keeping(tail.saturating_add(growth)))
    }

    /// A swap of the ready summary was refused (its actual context over the bound, which the
    /// estimate of [`swap_early`](Self::swap_early) can miss, e.g. when the conversation
    /// changed below its cut): it is not offered early again, and
    /// [`wants_start`](Self::wants_start) asks for a refresh. At the threshold it is still
    /// the one tried (the alternative is today's path).
    pub fn refused(&mut self) {
        match (&self.state, &mut self.previous) {
            (AheadState::Ready(_), _) => self.mark.refused = true,
            (AheadState::Running { .. }, Some((_, mark))) => mark.refused = true,
            _ => {}
        }
    }

    /// Records a summary started for the messages before `cut`, at `count` tokens with
    /// `tail` estimated tokens since the cut. Returns its ticket and the ready summary to
    /// chain it after (kept meanwhile, for a threshold reached before the refresh lands).
    pub fn start(&mut self, cut: usize, count: u64, tail: u64) -> (Ticket, Option<Ahead>) {
        let earlier = match std::mem::take(&mut self.state) {
            AheadState::Ready(a) => Some(a),
            _ => None,
        };
        self.previous = earlier.clone().map(|a| (a, self.mark));
        self.ticket += 1;
        self.started = true;
        self.mark = Mark {
            count,
            tail,
            refused: false,
            ticket: self.ticket,
        };
        self.error = None;
        self.state = AheadState::Running { cut };
        (Ticket(self.ticket), earlier)
    }

    /// Sets how to cancel the summary started with `ticket`, if it is still the one running
    /// (see [`Cancel`]).
    pub fn set_cancel(&mut self, ticket: Ticket, cancel: Cancel) {
        if ticket.0 == self.ticket && matches!(self.state, AheadState::Running { .. }) {
            self.cancel = cancel;
        }
    }

    /// [`landed`](Self::landed), at `count` tokens: a summary that landed (the one running
    /// now) measures the flight (see [`worth_starting`](Self::worth_starting)).
    pub fn landed_at(
        &mut self,
        ticket: Ticket,
        result: std::result::Result<Ahead, Error>,
        count: u64,
    ) {
        if ticket.0 == self.ticket
            && result.is_ok()
            && matches!(self.state, AheadState::Running { .. })
        {
            self.flight = count.saturating_sub(self.mark.count);
        }
        self.landed(ticket, result);
    }

    /// A started summary landed. Kept when it is the one running now; otherwise (the
    /// conversation was replaced, or it was dropped) ignored. A failure is kept as the last
    /// error and the previous ready summary, if any, stays.
    pub fn landed(&mut self, ticket: Ticket, result: std::result::Result<Ahead, Error>) {
        if ticket.0 != self.ticket || !matches!(self.state, AheadState::Running { .. }) {
            return;
        }
        self.cancel = Cancel::default();
        match result {
            Ok(a) => {
                self.summary_tokens = text_tokens(&a.summary);
                self.previous = None;
                self.failures = 0;
                self.retry_at = 0;
                self.state = AheadState::Ready(a);
            }
            Err(e) => {
                self.error = Some(e);
                self.failures = self.failures.saturating_add(1);
                let step = RETRY_STEP_TOKENS.saturating_mul(1 << (self.failures - 1).min(16));
                self.retry_at = self.mark.count.saturating_add(step);
                self.state = match self.previous.take() {
                    Some((a, mark)) => {
                        self.mark = mark;
                        AheadState::Ready(a)
                    }
                    None => AheadState::Idle,
                };
            }
        }
    }

    /// The ready summary for a swap at the threshold: the latest landed one, or, while a
    /// refresh runs, the one before it (the refresh is not waited for). It stays until the
    /// compaction ends ([`drop_all`](Self::drop_all) when the conversation is replaced).
    pub fn ready(&self) -> Option<&Ahead> {
        self.offered().map(|(a, _)| a)
    }

    /// The ticket the [`ready`](Self::ready) summary was started with (what the caller kept
    /// of its start, such as the state it read then, is found by it).
    pub fn ready_ticket(&self) -> Option<Ticket> {
        self.offered().map(|(_, m)| Ticket(m.ticket))
    }

    /// Drops everything (the conversation was replaced, or restored): a summary running now
    /// is cancelled ([`Cancel`], when one was set) and ignored when it lands.
    pub fn drop_all(&mut self) {
        if matches!(self.state, AheadState::Running { .. }) {
            self.cancel.fire();
        }
        self.cancel = Cancel::default();
        self.ticket += 1;
        self.state = AheadState::Idle;
        self.previous = None;
        self.failures = 0;
        self.retry_at = 0;
        self.base = 0;
        // The next check measures a step of the new conversation, not the drop to it.
        self.last_check = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::error::ErrorCode;

    fn ahead(cut: usize, summary: &str) -> Ahead {
        Ahead {
            cut,
            summary: summary.into(),
            usage: None,
            pre: Default::default(),
            calls: 1,
        }
    }

    #[test]
    fn off_by_default_never_starts() {
        let b = Background::default();
        assert!(!b.wants_start(u64::MAX, false, None));
    }

    #[test]
    fn starts_past_the_early_line_once_and_not_while_compacting() {
        let mut b = Background::new(Some(100));
        assert!(!b.wants_start(99, false, None));
        assert!(!b.wants_start(100, true, None));
        assert!(b.wants_start(100, false, None));
        let (t, earlier) = b.start(3, 100, 0);
        assert!(earlier.is_none());
        assert!(!b.wants_start(500, false, None), "one at a time");
        assert!(b.ready().is_none());
        b.landed(t, Ok(ahead(3, &"s".repeat(400))));
        assert_eq!(b.ready().unwrap().cut, 3);
        // 100 tokens of summary: 30 tokens since the cut fit, 31 do not.
        assert!(!b.wants_start(130, false, None));
        assert!(b.wants_start(131, false, None));
    }

    #[test]
    fn a_refresh_keeps_the_ready_one_until_it_lands() {
        let mut b = Background::new(Some(0));
        let (t1, _) = b.start(1, 10, 0);
        b.landed(t1, Ok(ahead(1, "first")));
        let (t2, earlier) = b.start(5, 50, 0);
        assert_eq!(earlier.unwrap().summary, "first");
        assert_eq!(
            b.ready().unwrap().summary,
            "first",
            "usable while the refresh runs"
        );
        b.landed(t2, Err(Error::new(ErrorCode::SummarizerFailed, "down")));
        assert_eq!(b.error().unwrap().message, "down");
        assert_eq!(
            b.ready().unwrap().summary,
            "first",
            "a failed refresh keeps it"
        );
        let (t3, _) = b.start(6, 60, 0);
        assert!(b.error().is_none());
        b.landed(t3, Ok(ahead(6, "third")));
        assert_eq!(b.ready().unwrap().cut, 6);
    }

    #[test]
    fn the_ready_ticket_is_the_start_of_the_summary_a_swap_takes() {
        let mut b = Background::new(Some(0));
        assert_eq!(b.ready_ticket(), None);
        let (t1, _) = b.start(1, 10, 0);
        assert_eq!(b.ready_ticket(), None, "nothing ready while the first runs");
        b.landed(t1, Ok(ahead(1, "first")));
        assert_eq!(b.ready_ticket(), Some(t1));
        let (t2, _) = b.start(5, 50, 0);
        assert_ne!(t1, t2);
        assert_eq!(
            b.ready_ticket(),
            Some(t1),
            "the one before, while a refresh runs"
        );
        b.landed(t2, Ok(ahead(5, "second")));
        assert_eq!(b.ready_ticket(), Some(t2));
        let (t3, _) = b.start(6, 60, 0);
        b.landed(t3, Err(Error::new(ErrorCode::SummarizerFailed, "down")));
        assert_eq!(
            b.ready_ticket(),
            Some(t2),
            "a failed refresh keeps the one before"
        );
        b.drop_all();
        assert_eq!(b.ready_ticket(), None);
    }

    #[test]
    fn a_summary_landing_after_the_conversation_was_replaced_is_dropped() {
        let mut b = Background::new(Some(0));
        let (t, _) = b.start(2, 10, 0);
        b.drop_all();
        b.landed(t, Ok(ahead(2, "old")));
        assert!(b.ready().is_none());
        assert!(matches!(b.state(), AheadState::Idle));
        let (t, _) = b.start(2, 10, 0);
        b.drop_all();
        b.landed(t, Err(Error::new(ErrorCode::SummarizerFailed, "late")));
        assert!(
            b.error().is_none(),
            "a dropped summary's failure is not reported"
        );
    }

    #[test]
    fn the_headroom_is_the_largest_step_between_checks() {
        let mut b = Background::new(Some(0));
        b.observe_check(100);
        assert_eq!(b.headroom(), 0, "one check is no step");
        b.observe_check(400);
        b.observe_check(350);
        b.observe_check(500);
        assert_eq!(b.headroom(), 300);
        b.drop_all();
        b.observe_check(10);
        assert_eq!(
            b.headroom(),
            300,
            "the drop to a new conversation is no step"
        );
    }

    #[test]
    fn a_ready_summary_is_swapped_a_turn_early_only_when_the_next_turn_could_lose_it() {
        // Threshold 870, early line 800; a summary of 100 tokens leaves room for 30 kept.
        let mut b = Background::new(Some(800));
        b.observe_check(830);
        b.observe_check(850);
        assert_eq!(b.headroom(), 20);
        assert!(!b.swap_early(860, 870, None), "nothing ready");
        let (t, _) = b.start(3, 850, 0);
        b.landed(t, Ok(ahead(3, &"s".repeat(400))));
        // 10 kept now, 30 after a turn like the largest (20): still within the bound, so
        // the swap waits for the threshold.
        assert!(!b.swap_early(860, 870, None));
        b.observe_check(875);
        assert_eq!(b.headroom(), 25);
        // 10 kept now, 35 after a turn like the largest (25): over the bound, and the turn
        // could cross the threshold: swap now.
        assert!(b.swap_early(860, 870, None));
        // Far from the threshold the next turn cannot make it due: no early swap.
        assert!(!b.swap_early(860, 2000, None));
        // Over the bound already: not swapped (stale: a refresh starts instead).
        assert!(!b.swap_early(890, 900, None));
        // At the threshold it is not early.
        assert!(!b.swap_early(870, 870, None));
        // Below the early line, never.
        let mut low = Background::new(Some(900));
        low.observe_check(0);
        low.observe_check(500);
        let (t, _) = low.start(3, 850, 0);
        low.landed(t, Ok(ahead(3, &"s".repeat(400))));
        assert!(!low.swap_early(860, 870, None));
    }

    #[test]
    fn while_a_refresh_runs_the_ready_one_is_judged_by_its_own_tail() {
        let mut b = Background::new(Some(0));
        b.observe_check(0);
        b.observe_check(25);
        let (t, _) = b.start(3, 100, 0);
        b.landed(t, Ok(ahead(3, &"s".repeat(400))));
        // The refresh starts at 120 with nothing since its cut; the ready one has 20 kept.
        let (_t2, _) = b.start(5, 120, 0);
        // 20 + 25 = 45 over 30: swap the ready one early.
        assert!(b.swap_early(120, 140, None));
    }

    #[test]
    fn dropping_a_running_summary_cancels_it_once_and_a_landed_one_is_not_cancelled() {
        use std::cell::Cell;
        let fired = Rc::new(Cell::new(0));
        let cancel = || {
            let f = fired.clone();
            Cancel::new(move || f.set(f.get() + 1))
        };
        let mut b = Background::new(Some(0));
        let (t, _) = b.start(2, 10, 0);
        b.set_cancel(t, cancel());
        b.drop_all();
        b.drop_all();
        assert_eq!(fired.get(), 1, "cancelled once");
        b.set_cancel(t, cancel());
        b.drop_all();
        assert_eq!(fired.get(), 1, "a stale ticket sets nothing");
        let (t, _) = b.start(2, 10, 0);
        b.set_cancel(t, cancel());
        b.landed(t, Ok(ahead(2, "done")));
        b.drop_all();
        assert_eq!(fired.get(), 1, "a landed summary is not cancelled");
    }

    #[test]
    fn a_refused_summary_is_not_offered_early_again_and_a_refresh_replaces_it() {
        let mut b = Background::new(Some(800));
        b.observe_check(850);
        b.observe_check(875);
        let (t, _) = b.start(3, 850, 0);
        b.landed(t, Ok(ahead(3, &"s".repeat(400))));
        assert!(b.swap_early(860, 870, None));
        assert!(!b.wants_start(860, false, None), "fresh");
        b.refused();
        assert!(!b.swap_early(860, 870, None), "not offered early again");
        assert!(b.wants_start(860, false, None), "a refresh replaces it");
        assert!(b.ready().is_some(), "still the one tried at the threshold");
        let (t2, _) = b.start(5, 860, 0);
        assert!(
            !b.swap_early(860, 870, None),
            "the refused one, while the refresh runs"
        );
        b.landed(t2, Err(Error::new(ErrorCode::SummarizerFailed, "down")));
        assert!(!b.swap_early(860, 870, None), "back to the refused one");
        let (t3, _) = b.start(6, 850, 0);
        b.landed(t3, Ok(ahead(6, &"s".repeat(400))));
        assert!(b.swap_early(860, 870, None), "a fresh one is offered");
    }

    #[test]
    fn after_a_failure_the_next_summary_waits_for_the_count_to_grow_doubling_per_failure() {
        let mut b = Background::new(Some(100));
        let fail = |b: &mut Background, count| {
            let (t, _) = b.start(2, count, 0);
            b.landed(t, Err(Error::new(ErrorCode::SummarizerFailed, "down")));
        };
        fail(&mut b, 1_000);
        assert!(!b.wants_start(1_000, false, None), "not on the next push");
        assert!(!b.wants_start(2_999, false, None));
        assert!(b.wants_start(3_000, false, None), "2,000 tokens later");
        fail(&mut b, 3_000);
        assert!(!b.wants_start(6_999, false, None));
        assert!(b.wants_start(7_000, false, None), "4,000 tokens later");
        let (t, _) = b.start(2, 7_000, 0);
        b.landed(t, Ok(ahead(2, "fine")));
        fail(&mut b, 7_100);
        assert!(
            b.wants_start(9_100, false, None),
            "a summary that landed resets the doubling"
        );
    }

    #[test]
    fn an_automatic_line_stays_halfway_from_where_a_compaction_left_the_context() {
        // A 15,672-token threshold (32K window, 4K output): the line sits at 7,836, about
        // where a compaction leaves the context.
        let mut b = Background::with_line(Some(EarlyLine::below(15_672)));
        assert_eq!(b.early_line(), Some(7_836));
        b.compacted(7_600);
        assert_eq!(b.early_line(), Some(7_600 + (15_672 - 7_600) / 2));
        b.drop_all();
        assert_eq!(b.early_line(), Some(7_836), "unknown after a restore");
        // A fixed line is the caller's.
        let mut f = Background::new(Some(100));
        f.compacted(7_600);
        assert_eq!(f.early_line(), Some(100));
    }

    #[test]
    fn a_summary_stale_from_the_start_is_not_worth_starting() {
        // At the threshold: no growth left before a swap.
        let worth = |b: &Background, tail, pending| b.worth_starting((tail, pending), 0, 0, None);
        let mut b = Background::new(Some(0));
        assert!(worth(&b, 1_000_000, false), "before any landed");
        let (t, _) = b.start(3, 100, 0);
        b.landed(t, Ok(ahead(3, &"s".repeat(4_000)))); // 1,000 tokens
        assert!(worth(&b, 300, false));
        assert!(!worth(&b, 301, false));
        // A turn still waiting for its results grows as the latest turn did.
        b.observe_check(1_000);
        b.observe_check(3_000);
        assert!(worth(&b, 100, false));
        assert!(!worth(&b, 100, true));
        // What the last compaction left holds the files it restored, which a swap restores
        // too: its bound is that much wider.
        b.compacted(5_000);
        assert!(worth(&b, 1_500, false));
        assert!(!worth(&b, 1_501, false));
    }

    #[test]
    fn a_summary_that_would_land_stale_is_not_started() {
        let worth = |b: &Background, tail| b.worth_starting((tail, false), 0, 0, None);
        let mut b = Background::new(Some(0));
        let (t, _) = b.start(3, 100, 0);
        // 1,000 tokens: 300 may be kept. The count grew by 250 while it was written.
        b.landed_at(t, Ok(ahead(3, &"s".repeat(4_000))), 350);
        assert!(worth(&b, 50));
        assert!(
            !worth(&b, 51),
            "50 kept now + 250 while it is written > 300"
        );
        // A compaction after a summary was started keeps the measure.
        b.compacted(0);
        assert!(!worth(&b, 51));
        // One with no summary started before it halves it (a busy stretch does not keep
        // summaries off for good).
        b.compacted(0);
        assert!(worth(&b, 175));
        assert!(!worth(&b, 176));
        // While one runs, what the count grew since it started is the least its flight is.
        let (t, _) = b.start(5, 1_000, 0);
        b.observe_check(1_000);
        b.observe_check(1_290);
        assert_eq!(b.flight, 290);
        // A failure measures nothing.
        b.landed_at(
            t,
            Err(Error::new(ErrorCode::SummarizerFailed, "down")),
            5_000,
        );
        assert_eq!(b.flight, 290);
    }

    /// A summary the compaction dropped before it landed still measured its flight (what the
    /// count grew while it ran), which a compaction with none started halves.
    #[test]
    fn the_flight_of_a_summary_dropped_before_it_landed_is_kept() {
        let mut b = Background::new(Some(0));
        b.start(3, 157_000, 0);
        b.observe_check(157_000);
        b.observe_check(168_000);
        b.drop_all();
        b.compacted(40_000);
        assert_eq!(b.flight(), 11_000);
        b.compacted(40_000);
        assert_eq!(b.flight(), 5_500);
    }

    #[test]
    fn a_refresh_is_worth_it_only_when_it_can_still_be_fresh_at_the_threshold() {
        let worth =
            |b: &Background, tail, count| b.worth_starting((tail, false), count, 100_000, None);
        let mut b = Background::new(Some(0));
        assert!(worth(&b, 0, 0), "none ready");
        let (t, _) = b.start(3, 100, 0);
        // 1,000 tokens: 300 may be kept.
        b.landed(t, Ok(ahead(3, &"s".repeat(4_000))));
        // 200 kept now, 100 more before the threshold: still within the bound there.
        assert!(worth(&b, 200, 99_900));
        // Far below the threshold it would go stale again before any swap.
        assert!(!worth(&b, 200, 90_000));
        // The headroom a swap keeps for the next turn brings the swap point closer.
        b.observe_check(80_000);
        b.observe_check(89_950);
        assert!(worth(&b, 200, 90_000));
    }
}
