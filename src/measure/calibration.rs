//! What the messages alone do not show, learned from the usage seen: the tokens every request
//! sends besides the messages (system prompt, tool definitions) and the conversation's own
//! ratio of real tokens to estimated ones (code and JSON run above the chars/4 estimate).
//!
//! Each response that reports usage is one observation: `x`, the estimate of the messages its
//! request sent (everything since the context began, before the response), and `y`, the
//! request's real input (`input + cache_creation + cache_read`). The relation is close to a
//! line, `y ≈ overhead + ratio · x`, fitted by least squares over the latest
//! [`MAX_OBSERVATIONS`] observations. Where no usage anchors the count (a session's start,
//! right after a compaction), the count is that line at the estimate of the messages held.
//!
//! On the shared long session the first request after its compaction was 36,081 tokens for
//! messages estimated at 3,936: the raw estimate is 89 % short, the fitted line 6 % short.
//!
//! The observations are whole numbers, so a calibration saved as JSON comes back exact, and
//! the fit (computed from them) is the same on every machine.

use std::collections::VecDeque;

/// Observations kept: the latest ones (the system prompt and tools may change in a session).
pub const MAX_OBSERVATIONS: usize = 64;
/// The ratio the fit may give, at least: real tokens run above chars/4 for code and JSON,
/// rarely far below it.
pub const MIN_RATIO: f64 = 0.75;
/// The ratio the fit may give, at most.
pub const MAX_RATIO: f64 = 3.0;
/// Below this spread of estimates (standard deviation, tokens) the observations cannot tell
/// the overhead from the ratio: nothing is learned yet.
pub const MIN_SPREAD: f64 = 1_000.0;
/// Observations farther from the line than this (root mean square of the relative errors)
/// follow no line: something the estimate misses comes and goes (images, a changed system
/// prompt), and nothing is learned.
pub const MAX_SCATTER: f64 = 0.2;

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
}

/// The observations of a conversation, latest last.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Calibration {
    seen: VecDeque<Observation>,
}

impl Calibration {
    /// A calibration from saved observations (oldest first; only the latest
    /// [`MAX_OBSERVATIONS`] are kept).
    pub fn from_observations(obs: impl IntoIterator<Item = Observation>) -> Calibration {
        let mut c = Calibration::default();
        for o in obs {
            c.observe(o);
        }
        c
    }

    /// Adds an observation.
    pub fn observe(&mut self, o: Observation) {
        if self.seen.len() == MAX_OBSERVATIONS {
            self.seen.pop_front();
        }
        self.seen.push_back(o);
    }

    /// The observations, oldest first.
    pub fn observations(&self) -> impl ExactSizeIterator<Item = &Observation> {
        self.seen.iter()
    }

    /// Whether nothing was observed.
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// The line through the observations, by least squares, with the ratio kept within
    /// [`MIN_RATIO`]..=[`MAX_RATIO`] (the overhead then refitted for that ratio) and the
    /// overhead never negative.
    ///
    /// `None` while the observations cannot separate the overhead from the ratio — fewer than
    /// two, or estimates that barely differ (a single observation would put the whole
    /// conversation's underestimate into the overhead, and a count right after a compaction
    /// would keep it) — and when they scatter more than [`MAX_SCATTER`] around the line.
    pub fn fit(&self) -> Option<Fit> {
        let n = self.seen.len();
        if n < 2 {
            return None;
        }
        let nf = n as f64;
        let (mut sx, mut sy) = (0.0f64, 0.0f64);
        for o in &self.seen {
            sx += o.estimated as f64;
            sy += o.real as f64;
        }
        let (mx, my) = (sx / nf, sy / nf);
        let (mut sxx, mut sxy) = (0.0f64, 0.0f64);
        for o in &self.seen {
            let dx = o.estimated as f64 - mx;
            sxx += dx * dx;
            sxy += dx * (o.real as f64 - my);
        }
        if (sxx / nf).sqrt() < MIN_SPREAD {
            return None;
        }
        let ratio = (sxy / sxx).clamp(MIN_RATIO, MAX_RATIO);
        let overhead = (my - ratio * mx).max(0.0);
        let fit = Fit {
            overhead,
            ratio,
            observations: n,
        };
        let mut scatter = 0.0f64;
        for o in &self.seen {
            let real = (o.real as f64).max(1.0);
            let off = (overhead + ratio * o.estimated as f64 - real) / real;
            scatter += off * off;
        }
        ((scatter / nf).sqrt() <= MAX_SCATTER).then_some(fit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(estimated: u64, real: u64) -> Observation {
        Observation { estimated, real }
    }

    #[test]
    fn nothing_observed_is_no_fit() {
        assert_eq!(Calibration::default().fit(), None);
    }

    #[test]
    fn one_observation_teaches_nothing_yet() {
        // 150,000 real for 1,000 estimated: overhead, missed content or a ratio? Unknown.
        assert_eq!(
            Calibration::from_observations([obs(1_000, 150_000)]).fit(),
            None
        );
        let two = Calibration::from_observations([obs(40, 26_450), obs(6_000, 33_600)]);
        let f = two.fit().unwrap();
        assert!(
            (f.ratio - 1.2).abs() < 0.01 && (f.overhead - 26_400.0).abs() < 50.0,
            "{f:?}"
        );
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
        // A jump the estimate does not see (an image pasted half-way).
        let c = Calibration::from_observations((1..=10).map(|k| {
            obs(
                k * 2_000,
                20_000 + k * 2_000 + if k > 5 { 60_000 } else { 0 },
            )
        }));
        assert_eq!(c.fit(), None);
    }

    #[test]
    fn estimates_that_barely_differ_teach_nothing() {
        let c = Calibration::from_observations([obs(10_000, 30_000), obs(10_200, 31_000)]);
        assert_eq!(c.fit(), None);
    }

    #[test]
    fn only_the_latest_observations_are_kept() {
        let mut c = Calibration::default();
        for k in 0..(MAX_OBSERVATIONS as u64 + 10) {
            c.observe(obs(k, k));
        }
        assert_eq!(c.observations().len(), MAX_OBSERVATIONS);
        assert_eq!(c.observations().next().unwrap().estimated, 10);
    }
}
