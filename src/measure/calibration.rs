//! What the messages alone do not show, learned from the usage seen: the tokens every request
//! sends besides the messages (system prompt, tool definitions) and the conversation's own
//! ratio of real tokens to estimated ones (code and JSON run above the chars/4 estimate).
//!
//! Each response that reports usage is one observation: `x`, the estimate of the messages its
//! request sent (everything since the context began, before the response), and `y`, the
//! request's real input (`input + cache_creation + cache_read`). The relation is close to a
//! line, `y ≈ overhead + ratio · x`, fitted by least squares over at most
//! [`MAX_OBSERVATIONS`] observations kept spread over the estimates seen (see
//! [`Calibration::observe`]). Where no usage anchors the count (a session's start, right after
//! a compaction), the count is that line at the estimate of the messages held.
//!
//! On the shared long session the first request after its compaction was 36,081 tokens for
//! messages estimated at 3,936: the raw estimate is 89 % short, the fitted line 6 % short.
//! On four other real sessions of the same agent (not in this repository) the latest 64
//! observations alone, all from late in the conversation, put the overhead anywhere from 19.9K
//! to 42.3K tokens and missed the first request after a compaction by −27 % to +8 %, −31 %
//! once; observations kept spread over the estimates put it at 25.4K–32.5K and missed by
//! −19 % to −0.3 % (the rest is what the agent re-attached after its compaction without
//! writing it to the transcript, which no count of the transcript can see).
//!
//! Micro-compaction (SPEC §10) replaces old tool results with a placeholder. A usage reported
//! before that measured the results; the estimate of the edited messages sees only the
//! placeholder: paired, such observations fall far off the line (on the shared long session,
//! micro-compacted, they scattered past [`MAX_SCATTER`] and nothing was learned: the count
//! after its compaction was the summary's bare estimate, 576 tokens instead of ~30K). A usage
//! reported after it measured the placeholder and is as good as any. Which of the two a usage
//! was, the messages do not tell, so the calibration keeps two sets: every observation, and
//! those whose request held no cleared result (see [`Calibration::observe_as`]). The line is
//! fitted to every observation, unless they fit none or their line misses the second set,
//! which then gives it (see [`Calibration::fit`]): nothing valid is thrown away, and what a
//! clearing spoilt does not spoil the line.
//!
//! The observations are whole numbers, so a calibration saved as JSON comes back exact, and
//! the fit (computed from them) is the same on every machine.

/// Observations kept (see [`Calibration::observe`] for which).
pub const MAX_OBSERVATIONS: usize = 64;
/// Of those, the latest kept whatever their estimates.
pub const KEEP_LATEST: usize = 32;
/// The ratio the fit may give, at least: real tokens run above chars/4 for code and JSON,
/// rarely far below it.
pub const MIN_RATIO: f64 = 0.75;
/// The ratio the fit may give, at most.
pub const MAX_RATIO: f64 = 3.0;
/// Below this spread of estimates (standard deviation, tokens) the observations cannot tell
/// the overhead from the ratio: nothing is learned yet.
pub const MIN_SPREAD: f64 = 1_000.0;
/// With too little spread for a line, the smallest observation gives the overhead alone (at
/// ratio 1) when its messages are at most this share of its real size: a session's first
/// requests, where the system prompt and tools are most of what is sent.
pub const OVERHEAD_ALONE_SHARE: f64 = 0.25;
/// The overhead one observation alone may give, at most: more than any system prompt and tool
/// definitions, more likely content the estimate missed (an image, a document).
pub const MAX_OVERHEAD_ALONE: f64 = 100_000.0;
/// Observations farther from the line than this (root mean square of the relative errors)
/// follow no line: something the estimate misses comes and goes (images, a changed system
/// prompt). The line is then the one the latest observations follow, if they follow one
/// (see [`Calibration::fit`]).
pub const MAX_SCATTER: f64 = 0.2;
/// Where no line fits every observation, the most the line through the latest ones may miss
/// an older one by (relative error) for it to be on that line: see [`Calibration::fit`].
pub const LATEST_MISS: f64 = 0.1;
/// The line of the latest observations (see [`Calibration::fit`]) needs one request among them
/// whose messages were at most this share of it: the overhead measured nearly alone (the
/// first request after a compaction).
pub const LATEST_OVERHEAD_SHARE: f64 = 0.1;

/// One response's usage against the estimate of what its request sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observation {
    /// Estimated tokens of the messages the request sent.
    pub estimated: u64,
    /// The request's real input tokens (`input + cache_creation + cache_read`).
    pub real: u64,
}

/// The learned line: `real ≈ overhead + ratio · estimated`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fit {
    /// Tokens every request sends besides the messages (system prompt, tool definitions).
    pub overhead: f64,
    /// Real tokens per estimated token of the messages.
    pub ratio: f64,
    /// How many observations the fit is made of.
    pub observations: usize,
}

impl Fit {
    /// The predicted real size of a request whose messages are estimated at `estimated`.
    pub fn predict(&self, estimated: u64) -> u64 {
        let v = self.overhead + self.ratio * estimated as f64;
        if v.is_finite() && v > 0.0 {
            v.round() as u64
        } else {
            estimated
        }
    }

    /// The most estimated tokens of messages whose request stays within `real` tokens by this
    /// line (the inverse of [`Fit::predict`]); `None` when the line cannot be inverted (a
    /// ratio that is not positive, numbers that are not finite).
    pub fn estimated_within(&self, real: u64) -> Option<u64> {
        (self.ratio.is_finite() && self.ratio > 0.0 && self.overhead.is_finite())
            .then(|| ((real as f64 - self.overhead.max(0.0)) / self.ratio).max(0.0) as u64)
    }
}

/// An observation as the running count makes it: the usage of a response against the
/// estimate of what its request sent, and whether that request held a tool result cleared
/// since (the usage may then have measured the result, the estimate sees the placeholder).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Observed {
    /// The observation.
    pub observation: Observation,
    /// Its request held a tool result that is the cleared placeholder now.
    pub spans_clearing: bool,
}

/// The observations of a conversation, latest last.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Calibration {
    /// Every observation (at most [`MAX_OBSERVATIONS`], see [`Calibration::observe`]).
    seen: Vec<Observation>,
    /// Those whose request held no cleared tool result, kept the same way (the same as `seen`
    /// until one did).
    clean: Vec<Observation>,
    /// An observation spanned a clearing: `clean` may differ from `seen`.
    spanned: bool,
    /// The line the observations give ([`Calibration::fit`]), worked out the first time it is
    /// read after they changed (`None` until then): the count reads it on every message
    /// pushed, and working it out takes up to `MAX_OBSERVATIONS²` steps ([`latest_line`]);
    /// a count over a whole conversation adds many observations and reads it once.
    line: Line,
}

/// [`Calibration::line`]: a function of the observations, so never what tells two
/// calibrations apart.
#[derive(Clone, Debug, Default)]
struct Line(std::cell::Cell<Option<Option<Fit>>>);

impl PartialEq for Line {
    fn eq(&self, _: &Line) -> bool {
        true
    }
}

impl Eq for Line {}

impl Calibration {
    /// A calibration from saved observations (oldest first; only the latest
    /// [`MAX_OBSERVATIONS`] are kept).
    pub fn from_observations(obs: impl IntoIterator<Item = Observation>) -> Calibration {
        let mut c = Calibration::default();
        for o in obs {
            keep(&mut c.seen, o);
            keep(&mut c.clean, o);
        }
        c.refit();
        c
    }

    /// Adds an observation. When [`MAX_OBSERVATIONS`] are kept, the latest [`KEEP_LATEST`]
    /// stay (a changed system prompt is learned again), and of the older ones the one dropped
    /// is the one whose neighbours (by estimate) are closest, never the smallest or largest
    /// estimate (the oldest of equals): the observations stay spread from the smallest
    /// estimate seen (a session's first request, the first after a compaction) to the latest,
    /// so the overhead is measured near where it is used instead of extrapolated from the end
    /// of a long conversation.
    ///
    /// The observation is of a request that held no cleared tool result: see
    /// [`observe_as`](Self::observe_as).
    pub fn observe(&mut self, o: Observation) {
        keep(&mut self.seen, o);
        keep(&mut self.clean, o);
        self.refit();
    }

    /// Adds an observation the running count made ([`observe`](Self::observe)). One whose
    /// request held a tool result cleared since (`spans_clearing`) joins every observation,
    /// not the set of those that held none: its usage may have measured the result before
    /// the clearing (micro-compacting a conversation already sent) or the placeholder (a
    /// conversation that went on after it); [`fit`](Self::fit) falls back on that set only
    /// when the line through every observation fits none or misses it.
    pub fn observe_as(&mut self, o: Observed) {
        if o.spans_clearing {
            self.spanned = true;
            keep(&mut self.seen, o.observation);
            self.refit();
        } else {
            self.observe(o.observation);
        }
    }

    /// A calibration from saved observations: every one kept (oldest first, as
    /// [`observations`](Self::observations) gives them) and, when some spanned a clearing,
    /// those that did not (as [`observations_clean`](Self::observations_clean) gives them).
    pub fn from_sets(
        all: impl IntoIterator<Item = Observation>,
        clean: Option<impl IntoIterator<Item = Observation>>,
    ) -> Calibration {
        let mut c = Calibration::from_observations(all);
        if let Some(clean) = clean {
            c.clean.clear();
            for o in clean {
                keep(&mut c.clean, o);
            }
            c.spanned = true;
            c.refit();
        }
        c
    }

    /// The observations, oldest first.
    pub fn observations(&self) -> impl ExactSizeIterator<Item = &Observation> {
        self.seen.iter()
    }

    /// The observations whose request held no cleared tool result, oldest first; `None` when
    /// that is every one ([`observations`](Self::observations)).
    pub fn observations_clean(&self) -> Option<impl ExactSizeIterator<Item = &Observation>> {
        self.spanned.then(|| self.clean.iter())
    }

    /// Whether nothing was observed.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// What the observations teach: the line through them, by least squares, with the ratio
    /// kept within [`MIN_RATIO`]..=[`MAX_RATIO`] (the overhead then refitted for that ratio)
    /// and the overhead never negative; `None` when they scatter more than [`MAX_SCATTER`]
    /// around it.
    ///
    /// While the observations cannot separate the overhead from the ratio (one, or estimates
    /// that barely differ: a short session), the smallest one gives the overhead alone at
    /// ratio 1 — only when its messages are at most [`OVERHEAD_ALONE_SHARE`] of its real size
    /// and the rest at most [`MAX_OVERHEAD_ALONE`]: then the rest is the system prompt and
    /// tools, whatever the ratio. Otherwise (a large conversation seen once: overhead, a
    /// ratio or missed content?) `None`. (An overhead past a low auto-compact threshold makes
    /// compacting futile: the automatic compaction checks for it.)
    ///
    /// When some observations spanned a clearing ([`observe_as`](Self::observe_as)), the
    /// line through all of them stands only if it also fits the others, those no clearing
    /// touched (within [`MAX_SCATTER`], as any line fits its own): usage that measured results
    /// cleared since lies above it, by what was cleared, and either scatters past any line or
    /// tilts it away from the requests before the clearing. Otherwise the line is the one the
    /// others fit (the line through all, if they fit none).
    ///
    /// When none of that gives a line, the latest observations may still follow one: the
    /// requests before them sent something else besides the messages (the application
    /// changed its system prompt or tools half-way, content the estimate misses came into
    /// the context). The line is then the one the latest observations follow: taken from the
    /// latest back, each older one joins while the line through those after it misses it by
    /// at most [`LATEST_MISS`]; the first it misses by more is where the requests changed
    /// (a run reaching across the change could fit, within [`MAX_SCATTER`], a line between
    /// the two that describes neither); the run must hold a request that measured the
    /// overhead nearly alone (see [`latest_line`]), and when some observations spanned a
    /// clearing it is taken from the others. Without it, the observations from before the change
    /// (the smallest estimate is never dropped) would keep every line out for the rest of the
    /// session.
    pub fn fit(&self) -> Option<Fit> {
        if let Some(line) = self.line.0.get() {
            return line;
        }
        let line = self.line_of_observations();
        self.line.0.set(Some(line));
        line
    }

    /// Marks [`Calibration::line`] to be worked out again, after the observations changed.
    fn refit(&mut self) {
        self.line.0.set(None);
    }

    /// The line of [`Calibration::fit`], from the observations.
    fn line_of_observations(&self) -> Option<Fit> {
        let all = fit_of(&self.seen);
        let clean = &self.clean;
        match all {
            _ if !self.spanned => all,
            Some(f) if clean.is_empty() || scatter(&f, clean) <= MAX_SCATTER => all,
            _ => fit_of(clean).or(all),
        }
        .or_else(|| latest_line(if self.spanned { clean } else { &self.seen }))
    }
}

/// Adds `o` to the observations `seen` (see [`Calibration::observe`] for which stay).
fn keep(seen: &mut Vec<Observation>, o: Observation) {
    seen.push(o);
    if seen.len() > MAX_OBSERVATIONS {
        let mut order: Vec<usize> = (0..seen.len()).collect();
        order.sort_by_key(|&i| (seen[i].estimated, i));
        // Of the observations before the latest KEEP_LATEST, an inner one (never the
        // smallest or largest estimate) whose neighbours are closest, the oldest of those.
        let older = seen.len() - KEEP_LATEST;
        let drop = order
            .windows(3)
            .filter(|w| w[1] < older)
            .min_by_key(|w| (seen[w[2]].estimated - seen[w[0]].estimated, w[1]))
            .map_or(0, |w| w[1]);
        seen.remove(drop);
    }
}

/// The line the latest observations of `seen` follow, back to the first older one it misses
/// by more than [`LATEST_MISS`] (see [`Calibration::fit`]); `None` when there is no such one
/// (the line would be that of every observation), or when none of them is a request whose
/// messages were at most [`LATEST_OVERHEAD_SHARE`] of it: usage that measured tool results
/// cleared since (a conversation micro-compacted after it was sent, a snapshot from before
/// the observations were told apart) also follows a line, far above what is sent now, but
/// only late in a conversation, where the messages are more of each request (on the shared
/// long session micro-compacted, 23 % of the request at the least of its latest run).
fn latest_line(seen: &[Observation]) -> Option<Fit> {
    let mut start = seen.len().checked_sub(1)?;
    while start > 0 {
        if let Some(f) = fit_of(&seen[start..]) {
            if scatter(&f, &seen[start - 1..start]) > LATEST_MISS {
                // Only with the overhead measured where it is used: a request whose messages
                // were a small part of it (after a compaction, at a session's start).
                let measured = seen[start..]
                    .iter()
                    .any(|o| o.estimated as f64 <= LATEST_OVERHEAD_SHARE * o.real as f64);
                return measured.then_some(f);
            }
        }
        start -= 1;
    }
    None
}

/// The line through the observations `seen` (see [`Calibration::fit`]).
fn fit_of(seen: &[Observation]) -> Option<Fit> {
    let n = seen.len();
    if n < 2 || spread(seen) < MIN_SPREAD {
        return overhead_alone(seen);
    }
    let nf = n as f64;
    let (mut sx, mut sy) = (0.0f64, 0.0f64);
    for o in seen {
        sx += o.estimated as f64;
        sy += o.real as f64;
    }
    let (mx, my) = (sx / nf, sy / nf);
    let (mut sxx, mut sxy) = (0.0f64, 0.0f64);
    for o in seen {
        let dx = o.estimated as f64 - mx;
        sxx += dx * dx;
        sxy += dx * (o.real as f64 - my);
    }
    let ratio = (sxy / sxx).clamp(MIN_RATIO, MAX_RATIO);
    let overhead = (my - ratio * mx).max(0.0);
    let fit = Fit {
        overhead,
        ratio,
        observations: n,
    };
    (scatter(&fit, seen) <= MAX_SCATTER).then_some(fit)
}

/// How far the observations `seen` (at least one) are from the line `fit`: the root mean
/// square of the relative errors.
fn scatter(fit: &Fit, seen: &[Observation]) -> f64 {
    let mut sum = 0.0f64;
    for o in seen {
        let real = (o.real as f64).max(1.0);
        let off = (fit.overhead + fit.ratio * o.estimated as f64 - real) / real;
        sum += off * off;
    }
    (sum / seen.len() as f64).sqrt()
}

/// The standard deviation of the estimates observed (0 for none).
fn spread(seen: &[Observation]) -> f64 {
    let n = seen.len();
    if n == 0 {
        return 0.0;
    }
    let nf = n as f64;
    let mx = seen.iter().map(|o| o.estimated as f64).sum::<f64>() / nf;
    let sxx: f64 = seen.iter().map(|o| (o.estimated as f64 - mx).powi(2)).sum();
    (sxx / nf).sqrt()
}

/// The overhead the smallest observation shows alone, at ratio 1 (see [`Calibration::fit`]).
fn overhead_alone(seen: &[Observation]) -> Option<Fit> {
    let least = seen.iter().min_by_key(|o| (o.estimated, o.real))?;
    let overhead = least.real as f64 - least.estimated as f64;
    (least.estimated as f64 <= OVERHEAD_ALONE_SHARE * least.real as f64
        && overhead > 0.0
        && overhead <= MAX_OVERHEAD_ALONE)
        .then_some(Fit {
            overhead,
            ratio: 1.0,
            observations: seen.len(),
        })
}

/// The line through every observation of `c` alone, if they follow one (what
/// [`Calibration::fit`] tries first).
#[cfg(test)]
pub(crate) fn line_of_every(c: &Calibration) -> Option<Fit> {
    fit_of(&c.seen)
}

/// Asserts that `f` is the line `overhead + ratio × estimate`, the overhead within
/// `overhead_tolerance` tokens and the ratio within 0.01 (the tests' learned lines).
#[cfg(test)]
pub(crate) fn assert_line(f: &Fit, overhead: f64, ratio: f64, overhead_tolerance: f64) {
    assert!(
        (f.overhead - overhead).abs() < overhead_tolerance && (f.ratio - ratio).abs() < 0.01,
        "{f:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(estimated: u64, real: u64) -> Observation {
        Observation { estimated, real }
    }

    #[test]
    fn the_line_kept_is_the_line_of_the_observations_after_every_change() {
        // A session whose overhead changes half-way, with requests that spanned a clearing:
        // after each observation (and a restore from the saved sets) the line read is the
        // one the observations give.
        let mut c = Calibration::default();
        let mut x: u64 = 7;
        for k in 0..150u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let estimated = 2_000 + (x >> 33) % 90_000;
            let overhead = if k < 70 { 20_000 } else { 33_000 };
            let o = obs(estimated, overhead + estimated * 5 / 4 + (x >> 60));
            c.observe_as(Observed {
                observation: o,
                spans_clearing: k % 17 == 5,
            });
            assert_eq!(c.fit(), c.line_of_observations(), "after observation {k}");
            let back = Calibration::from_sets(
                c.observations().copied(),
                c.observations_clean()
                    .map(|o| o.copied().collect::<Vec<_>>()),
            );
            assert_eq!(back.fit(), c.fit(), "restored after observation {k}");
        }
        assert!(c.fit().is_some());
    }

    #[test]
    fn estimated_within_is_the_inverse_of_predict() {
        let f = Fit {
            overhead: 26_000.0,
            ratio: 1.25,
            observations: 3,
        };
        for e in [0u64, 1, 800, 40_000, 123_457] {
            let within = f.estimated_within(f.predict(e)).unwrap();
            assert!(within.abs_diff(e) <= 1, "{e}: {within}");
            assert!(f.predict(within) <= f.predict(e));
        }
        // Below the overhead nothing fits; a line that cannot be inverted says so.
        assert_eq!(f.estimated_within(1_000), Some(0));
        for ratio in [0.0, -1.0, f64::NAN] {
            assert_eq!(Fit { ratio, ..f }.estimated_within(50_000), None);
        }
        assert_eq!(
            Fit {
                overhead: f64::INFINITY,
                ..f
            }
            .estimated_within(50_000),
            None
        );
    }

    #[test]
    fn nothing_observed_is_no_fit() {
        assert_eq!(Calibration::default().fit(), None);
    }

    #[test]
    fn one_observation_teaches_the_overhead_only_when_the_messages_are_a_small_part() {
        // 150,000 real for 100,000 estimated: overhead, missed content or a ratio? Unknown.
        assert_eq!(
            Calibration::from_observations([obs(100_000, 150_000)]).fit(),
            None
        );
        // A session's first request: 37 tokens of messages in 25,882. The overhead is the
        // rest, the ratio unknown (1).
        let f = Calibration::from_observations([obs(37, 25_882)])
            .fit()
            .unwrap();
        assert_eq!((f.overhead, f.ratio, f.observations), (25_845.0, 1.0, 1));
        assert_eq!(f.predict(1_000), 26_845);
        // A short session: estimates too close for a line; the smallest gives the overhead.
        let f =
            Calibration::from_observations([obs(900, 27_000), obs(37, 25_900), obs(1_500, 27_700)])
                .fit()
                .unwrap();
        assert_eq!((f.overhead, f.ratio, f.observations), (25_863.0, 1.0, 3));
        // Messages a little more than a quarter of it: not taken as overhead.
        assert_eq!(
            Calibration::from_observations([obs(7_000, 26_000)]).fit(),
            None
        );
        // Nothing over the messages: no overhead to learn.
        assert_eq!(
            Calibration::from_observations([obs(5_000, 4_000)]).fit(),
            None
        );
        // More than any system prompt and tools: more likely content the estimate missed.
        assert_eq!(
            Calibration::from_observations([obs(1_000, 150_000)]).fit(),
            None
        );
        let two = Calibration::from_observations([obs(40, 26_450), obs(6_000, 33_600)]);
        let f = two.fit().unwrap();
        assert_line(&f, 26_400.0, 1.2, 50.0);
    }

    #[test]
    fn a_line_is_recovered_exactly() {
        let c = Calibration::from_observations(
            (1..=20).map(|k| obs(k * 5_000, 28_000 + (k * 5_000) * 5 / 4)),
        );
        let f = c.fit().unwrap();
        assert!((f.ratio - 1.25).abs() < 1e-9, "{f:?}");
        assert!((f.overhead - 28_000.0).abs() < 1e-6, "{f:?}");
        assert_eq!(f.predict(4_000), 33_000);
    }

    #[test]
    fn the_ratio_stays_in_bounds_and_the_overhead_non_negative() {
        // A slope a little above the bound: capped, the overhead refitted for it.
        let c =
            Calibration::from_observations((1..=10).map(|k| obs(k * 10_000, 5_000 + k * 32_000)));
        let f = c.fit().unwrap();
        assert_eq!(f.ratio, MAX_RATIO);
        assert!(f.overhead >= 0.0, "{f:?}");
        // Code-heavy content a little below chars/4 … and below the bound: kept at it.
        let c = Calibration::from_observations((1..=10).map(|k| obs(k * 10_000, k * 7_200)));
        let f = c.fit().unwrap();
        assert_eq!((f.ratio, f.overhead), (MIN_RATIO, 0.0));
    }

    #[test]
    fn observations_that_follow_no_line_teach_nothing() {
        // Real sizes that fall steeply as the estimate grows.
        let c =
            Calibration::from_observations((1..=10).map(|k| obs(k * 10_000, 200_000 - k * 15_000)));
        assert_eq!(c.fit(), None);
        // A jump the estimate does not see (an image pasted half-way): no line through
        // every observation; the requests since the jump follow one, but none of them
        // measured the overhead nearly alone (the messages 13 % of the request at least).
        let c = Calibration::from_observations((1..=10).map(|k| {
            obs(
                k * 2_000,
                20_000 + k * 2_000 + if k > 5 { 60_000 } else { 0 },
            )
        }));
        assert_eq!(c.fit(), None);
        // Then requests of 3,000 tokens of messages in 83,000 and more, on the same line:
        // the line of the requests since the jump.
        let mut c = c;
        for k in 0..3 {
            c.observe(obs(3_000 + k * 2_000, 80_000 + 3_000 + k * 2_000));
        }
        let f = c.fit().unwrap();
        assert_eq!((f.overhead, f.ratio, f.observations), (80_000.0, 1.0, 8));
    }

    #[test]
    fn a_system_prompt_changed_half_way_is_learned_again() {
        // 20 requests with 4,000 tokens of system prompt and tools, then the application
        // adds 12,000 (tools of a server it connected): a compaction, and 30 requests with
        // 16,000. Every observation together follows no line (sessions19: no line for the
        // rest of the session, the count after each later compaction missing the 16,000).
        let mut c = Calibration::default();
        for k in 0..20u64 {
            c.observe(obs(5 + k * 1_500, 4_000 + k * 1_500 * 5 / 4));
        }
        assert!(c.fit().is_some());
        for k in 0..30u64 {
            c.observe(obs(800 + k * 1_200, 16_000 + (800 + k * 1_200) * 5 / 4));
            if k == 2 {
                // Three requests since the change are enough to tell the new line.
                assert!(c.fit().unwrap().overhead > 15_000.0, "{:?}", c.fit());
            }
        }
        assert_eq!(fit_of(&c.seen), None);
        let f = c.fit().unwrap();
        assert_line(&f, 16_000.0, 1.25, 10.0);
        assert_eq!(f.observations, 30);
        // Saved and read back: the same line.
        assert_eq!(
            Calibration::from_observations(c.observations().copied()).fit(),
            Some(f)
        );
    }

    fn spanning(estimated: u64, real: u64) -> Observed {
        Observed {
            observation: obs(estimated, real),
            spans_clearing: true,
        }
    }

    #[test]
    fn observations_spanning_a_clearing_are_learned_from_unless_they_spoil_the_line() {
        // Before any clearing the two sets are one: nothing else is kept.
        let mut c = Calibration::from_observations([obs(37, 26_450), obs(2_400, 29_400)]);
        assert!(c.observations_clean().is_none());
        // Requests that sent the placeholder (the conversation went on after a clearing, or
        // a tool's output merely is its text): on the same line, every one is learned from.
        for k in 1..=20u64 {
            c.observe_as(spanning(k * 2_000, 26_400 + k * 2_500));
        }
        assert_eq!(c.observations().len(), 22);
        assert_eq!(c.observations_clean().map(|o| o.len()), Some(2));
        let f = c.fit().unwrap();
        assert_eq!(f.observations, 22);
        assert_line(&f, 26_400.0, 1.25, 100.0);

        // Usage reported before the clearing: it measured the results, the estimate sees
        // the placeholder (a growing share of what was sent). Together they fit no line …
        let mut c = Calibration::from_observations([obs(37, 26_450)]);
        for k in 1..=40u64 {
            let cleared = if k > 3 { (k - 3) * 2_500 } else { 0 };
            c.observe_as(spanning(k * 400, 26_400 + k * 500 + cleared));
        }
        assert_eq!(fit_of(&c.seen), None);
        // … and the line is the one the others fit: the overhead of the first request.
        let f = c.fit().unwrap();
        assert_eq!((f.overhead, f.ratio, f.observations), (26_413.0, 1.0, 1));

        // Cleared as the conversation grew, a little more each time: the observations after
        // the clearing lie on a steeper line, and all together fit one that misses the
        // requests before it (+40 % at the first).
        // Micro-compacted with the latest 4 results kept (an agent's session: each result
        // 2,000 tokens, 20,000 of system prompt and tools, 5/4 real tokens per estimated
        // one): the usage of each request after the first clearing measured 2,524 more than
        // the one before, its estimate 27 more; those after the latest clearing measured the
        // kept results too. Together they fit a line, tilted away from the request before the
        // clearing (+45 % at it).
        let after: Vec<Observation> = (1..=7u64)
            .map(|k| obs(6 + 27 * k, 20_008 + 2_524 * k))
            .chain((0..4u64).map(|k| obs(2_214 + 2_019 * k, 40_198 + 2_524 * k)))
            .collect();
        let tilted = |first: Observation| {
            let mut c = Calibration::from_observations([first]);
            for &o in &after {
                c.observe_as(spanning(o.estimated, o.real));
            }
            c
        };
        let c = tilted(obs(6, 20_008));
        let all = Calibration::from_observations(c.observations().copied())
            .fit()
            .unwrap();
        assert!(all.predict(6) > 29_000, "{all:?}");
        // The line is the request before the clearing: the system prompt and tools.
        let f = c.fit().unwrap();
        assert_eq!((f.overhead, f.ratio, f.observations), (20_002.0, 1.0, 1));
        // Had that request been on the line of all (within MAX_SCATTER), it would stand.
        let c = tilted(obs(6, 25_000));
        assert_eq!(
            c.fit(),
            Calibration::from_observations(c.observations().copied()).fit()
        );
        assert_eq!(c.fit().unwrap().observations, 12);

        // Observations that follow no line, none of them spanning a clearing: no fallback.
        let c =
            Calibration::from_observations((1..=10).map(|k| obs(k * 10_000, 200_000 - k * 15_000)));
        assert_eq!(c.fit(), None);
    }

    #[test]
    fn the_observations_before_a_clearing_outlast_the_ones_after_it() {
        // The clean set is kept the way every set is: many observations spanning a clearing
        // thin out the set of all of them, not the clean one.
        let mut c = Calibration::default();
        for k in 0..10u64 {
            c.observe(obs(37 + k * 300, 26_450 + k * 360));
        }
        for k in 0..200u64 {
            c.observe_as(spanning(5_000 + k * 500, 90_000 + k * 7_000));
        }
        assert_eq!(c.observations().len(), MAX_OBSERVATIONS);
        let clean: Vec<Observation> = c.observations_clean().unwrap().copied().collect();
        assert_eq!(clean.len(), 10);
        assert_eq!(clean[0], obs(37, 26_450));
        // A clean observation joins both.
        c.observe(obs(3_100, 30_130));
        assert_eq!(c.observations_clean().unwrap().len(), 11);
        assert_eq!(c.observations().last(), Some(&obs(3_100, 30_130)));
        // Saved and read back, the same calibration (the same fit).
        let back = Calibration::from_sets(
            c.observations().copied(),
            c.observations_clean()
                .map(|o| o.copied().collect::<Vec<_>>()),
        );
        assert_eq!(back, c);
        assert_eq!(back.fit(), c.fit());
        let f = c.fit().unwrap();
        assert!((f.overhead - 26_400.0).abs() < 100.0, "{f:?}");
        // Without a clean set: as before.
        let plain = Calibration::from_sets(c.observations().copied(), None::<Vec<Observation>>);
        assert!(plain.observations_clean().is_none());
        assert_eq!(
            plain,
            Calibration::from_observations(c.observations().copied())
        );
    }

    #[test]
    fn estimates_that_barely_differ_teach_nothing() {
        let c = Calibration::from_observations([obs(10_000, 30_000), obs(10_200, 31_000)]);
        assert_eq!(c.fit(), None);
    }

    #[test]
    fn the_observations_kept_stay_spread_over_the_estimates() {
        // A long conversation: the first request (37 estimated), then 200 requests growing
        // from 1,000 to 200,000. The first request and the latest stay; the rest thin out
        // evenly instead of keeping only the end.
        let mut c = Calibration::default();
        c.observe(obs(37, 25_900));
        for k in 1..=200u64 {
            c.observe(obs(k * 1_000, 26_000 + k * 1_250));
        }
        assert_eq!(c.observations().len(), MAX_OBSERVATIONS);
        let xs: Vec<u64> = c.observations().map(|o| o.estimated).collect();
        assert_eq!((xs[0], *xs.last().unwrap()), (37, 200_000));
        let gaps: Vec<u64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(gaps.iter().all(|&g| g <= 8_000), "{xs:?}");
        // In the order seen.
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "{xs:?}");
        // The overhead is the line's, near the first request's.
        let f = c.fit().unwrap();
        assert!((f.overhead - 26_000.0).abs() < 300.0, "{f:?}");
        // The latest observations all stay, whatever their estimates (after a compaction,
        // with a changed system prompt).
        for k in 1..=64u64 {
            c.observe(obs(k * 100, 30_000 + k * 125));
        }
        assert_eq!(c.observations().len(), MAX_OBSERVATIONS);
        let latest: Vec<u64> = c
            .observations()
            .skip(MAX_OBSERVATIONS - KEEP_LATEST)
            .map(|o| o.estimated)
            .collect();
        assert_eq!(latest, (33..=64u64).map(|k| k * 100).collect::<Vec<_>>());
    }
}
