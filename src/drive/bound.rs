//! Issue 14's bound on a swap of a summary written ahead: the complete context it leaves,
//! as the next request sends it, against the synchronous path's. Shared by the pipeline's
//! finishing steps (which check it once the attachments are known) and
//! [`crate::drive::preemptive`].

use crate::drive::failure::CompactError;
use crate::measure::calibration::Fit;
use crate::model::error::ErrorCode;

/// The most the context after a swap may be, as a multiple of what the synchronous path
/// would leave (issue 14's bound).
pub const MAX_POST_COMPACT_RATIO: f64 = 1.3;

/// The estimated sizes (tokens, before calibration) of what a swap leaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PostCompactSizes {
    /// The summary message.
    pub summary: u64,
    /// The messages kept verbatim since the cut.
    pub kept: u64,
    /// Restored files, skills and announcements.
    pub attachments: u64,
}

impl PostCompactSizes {
    /// The next request's size after the swap: the learned line (system prompt and tools,
    /// tokens per estimated token) at the estimate of everything it leaves; without a fit,
    /// the plain estimate.
    pub fn swapped(&self, fit: Option<&Fit>) -> u64 {
        predict(fit, self.summary + self.kept + self.attachments)
    }

    /// The next request's size after the synchronous path, which keeps nothing: its summary
    /// (not written yet: this one's size stands in for it) and the same attachments (the
    /// synchronous path restores at least these, as no kept message shows their files).
    pub fn synchronous(&self, fit: Option<&Fit>) -> u64 {
        predict(fit, self.summary + self.attachments)
    }
}

fn predict(fit: Option<&Fit>, estimated: u64) -> u64 {
    fit.map_or(estimated, |f| f.predict(estimated))
}

/// Issue 14's bound: the complete context a swap leaves, as the next request sends it, is at
/// most `ratio` times the synchronous path's ([`PostCompactSizes`]).
pub fn post_compact_fits(sizes: &PostCompactSizes, fit: Option<&Fit>, ratio: f64) -> bool {
    sizes.swapped(fit) as f64 <= ratio * sizes.synchronous(fit) as f64
}

/// Whether the next request after a swap of these sizes stays below the auto-compact
/// `threshold` (the learned line's prediction, else the estimate and `preamble`, the system
/// prompt and tools given): a swap at or above it would be compacted again at the next check,
/// a summary call and its wait after all, where the synchronous path keeps nothing since the
/// cut.
pub fn swap_below_threshold(
    sizes: &PostCompactSizes,
    fit: Option<&Fit>,
    preamble: u64,
    threshold: u64,
) -> bool {
    sizes.swapped(fit) + fit.map_or(preamble, |_| 0) < threshold
}

/// Where a swap refused for the bound leaves the sizes it measured and the learned line it
/// predicted them with (a catch-up checks its own swap against them before paying for a
/// summary, [`crate::drive::preemptive::catch_up`]).
pub type Refusal = std::rc::Rc<std::cell::Cell<Option<(PostCompactSizes, Option<Fit>)>>>;

/// The `PREEMPTIVE_NOT_APPLICABLE` error of a swap over the bound, with its numbers.
pub fn not_applicable(sizes: &PostCompactSizes, fit: Option<&Fit>, ratio: f64) -> CompactError {
    CompactError::new(
        ErrorCode::PreemptiveNotApplicable,
        format!(
            "the summary written ahead does not apply: the context it leaves ({} tokens: summary {}, {} kept since its cut, {} restored, as the next request counts them) is more than {ratio}× the synchronous path's ({} tokens)",
            sizes.swapped(fit),
            sizes.summary,
            sizes.kept,
            sizes.attachments,
            sizes.synchronous(fit)
        ),
    )
}
