//! What a simulation reports: per policy, the requests, context sizes, compactions, tokens
//! by billing class, cost, time blocked and loss; for the session, how well the cache model
//! reproduced the recorded usage.

use serde::Serialize;

use crate::simulate::cache::{CacheUse, Ttl};
use crate::simulate::policy::Policy;
use crate::simulate::prices::Prices;
use crate::summarize::loss::LossReport;

/// Tokens by billing class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenClasses {
    /// Uncached input (`input_tokens`).
    pub input: u64,
    /// Cache writes, both time-to-lives (`cache_creation_input_tokens`).
    pub cache_write: u64,
    /// The part of `cache_write` made with the 1-hour time-to-live.
    pub cache_write_1h: u64,
    /// Cache reads (`cache_read_input_tokens`).
    pub cache_read: u64,
    /// Output.
    pub output: u64,
}

impl TokenClasses {
    fn add(&mut self, u: CacheUse, ttl: Ttl, output: u64) {
        self.input += u.input;
        self.cache_write += u.write;
        if ttl == Ttl::OneHour {
            self.cache_write_1h += u.write;
        }
        self.cache_read += u.read;
        self.output += output;
    }

    /// Cost in dollars at `p`.
    pub fn cost(&self, p: &Prices) -> f64 {
        let m = 1_000_000.0;
        (self.input as f64 * p.input
            + (self.cache_write - self.cache_write_1h) as f64 * p.cache_write_5m
            + self.cache_write_1h as f64 * p.cache_write_1h
            + self.cache_read as f64 * p.cache_read
            + self.output as f64 * p.output)
            / m
    }
}

/// Sums kept during a replay.
#[derive(Clone, Debug, Default)]
pub struct Accumulator {
    /// Conversation requests sent.
    pub requests: u64,
    /// Summary calls made.
    pub summary_calls: u64,
    /// Largest request (tokens).
    pub peak_context: u64,
    /// Sum of request sizes (for the mean).
    pub context_sum: u64,
    /// Summarizing compactions.
    pub compactions: u64,
    /// Clearings of old tool results (client or provider side).
    pub micro_compactions: u64,
    /// Tokens of the conversation requests.
    pub conversation: TokenClasses,
    /// Tokens of the summary calls.
    pub summaries: TokenClasses,
    /// Seconds the conversation waited for summaries.
    pub blocked_seconds: f64,
    /// Compactions the conversation waited for (a summary written at the threshold).
    pub waits: u64,
    /// Pre-emptive summaries swapped in at the threshold.
    pub swaps: u64,
    /// Pre-emptive summaries swapped in a check before the threshold.
    pub early_swaps: u64,
    /// Ready pre-emptive summaries refused at the threshold (over the bound).
    pub refused_swaps: u64,
    /// Refused pre-emptive summaries brought up to date at the threshold and swapped in.
    pub caught_up: u64,
    /// Automatic compactions that failed: the summary (and restored files) would not have
    /// been below the threshold.
    pub failed_compactions: u64,
    /// Why automatic compaction stopped, and at which request (`"thrashing"`,
    /// `"circuitBreakerOpen"`).
    pub paused: Option<(&'static str, u64)>,
    /// Files read again because the policy did not restore them.
    pub rereads: u64,
    /// Tokens of those files.
    pub reread_tokens: u64,
    /// Tokens of the re-read round trips (their requests and Read calls).
    pub reread_calls: TokenClasses,
    /// What the summaries did not mention.
    pub loss: LossReport,
    /// Each conversation request's use of the cache, in order.
    pub per_request: Vec<CacheUse>,
}

impl Accumulator {
    /// Counts a conversation request.
    pub fn add_request(&mut self, u: CacheUse, ttl: Ttl, output: u64) {
        let size = u.read + u.write + u.input;
        self.requests += 1;
        self.peak_context = self.peak_context.max(size);
        self.context_sum += size;
        self.conversation.add(u, ttl, output);
        self.per_request.push(u);
    }

    /// Counts a summary call.
    pub fn add_summary_call(&mut self, u: CacheUse, ttl: Ttl, output: u64) {
        self.summary_calls += 1;
        self.summaries.add(u, ttl, output);
    }

    /// Counts the round trip of a file read again (`file_tokens`: the file's own tokens,
    /// which join the conversation after it).
    pub fn add_reread(&mut self, u: CacheUse, ttl: Ttl, output: u64, file_tokens: u64) {
        self.rereads += 1;
        self.reread_tokens += file_tokens;
        self.reread_calls.add(u, ttl, output);
    }

    /// The report of a finished replay.
    pub fn report(&self, policy: &Policy, prices: &Prices) -> PolicyReport {
        let mut tokens = self.conversation;
        for s in [self.summaries, self.reread_calls] {
            tokens.input += s.input;
            tokens.cache_write += s.cache_write;
            tokens.cache_write_1h += s.cache_write_1h;
            tokens.cache_read += s.cache_read;
            tokens.output += s.output;
        }
        let lost = self.loss.files.len() + self.loss.user_messages.len() + self.loss.errors.len();
        PolicyReport {
            name: policy.name.clone(),
            description: policy.description.clone(),
            requests: self.requests,
            summary_calls: self.summary_calls,
            peak_context: self.peak_context,
            mean_context: self.context_sum.checked_div(self.requests).unwrap_or(0),
            compactions: self.compactions,
            micro_compactions: self.micro_compactions,
            tokens,
            cost: tokens.cost(prices),
            relative_cost: None,
            blocked_seconds: self.blocked_seconds,
            waits: self.waits,
            swaps: self.swaps,
            early_swaps: self.early_swaps,
            refused_swaps: self.refused_swaps,
            caught_up: self.caught_up,
            failed_compactions: self.failed_compactions,
            paused: self.paused.map(|p| p.0.to_string()),
            paused_at_request: self.paused.map(|p| p.1),
            rereads: self.rereads,
            reread_tokens: self.reread_tokens,
            // Filled by `simulate`, which replays the policy again without the re-reads.
            reread_cost: 0.0,
            lost,
            loss: self.loss.clone(),
        }
    }
}

/// The result of one policy on one session.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PolicyReport {
    /// The policy's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// Conversation requests (the recorded calls).
    pub requests: u64,
    /// Summary calls added by the policy.
    pub summary_calls: u64,
    /// Largest request, tokens.
    pub peak_context: u64,
    /// Mean request, tokens.
    pub mean_context: u64,
    /// Summarizing compactions.
    pub compactions: u64,
    /// Clearings of old tool results.
    pub micro_compactions: u64,
    /// Tokens by billing class, summary calls and re-read round trips included.
    pub tokens: TokenClasses,
    /// Cost in dollars at the simulation's prices.
    pub cost: f64,
    /// Cost relative to the baseline policy (`claude-code`), when it was simulated too.
    pub relative_cost: Option<f64>,
    /// Seconds the conversation waited for summaries.
    pub blocked_seconds: f64,
    /// Compactions the conversation waited for (a summary written at the threshold, by
    /// the client or the provider).
    pub waits: u64,
    /// Pre-emptive summaries swapped in at the threshold (no wait).
    pub swaps: u64,
    /// Pre-emptive summaries swapped in a check before the threshold, because one more
    /// turn like the largest seen could have put the swap over the bound (no wait).
    pub early_swaps: u64,
    /// Ready pre-emptive summaries refused at the threshold: the context they would leave
    /// was over 1.3× the synchronous path's, so the conversation waited for that path.
    pub refused_swaps: u64,
    /// Of those, the ones brought up to date and swapped in (the library's catch-up): one
    /// chained call on the summary and what came after its cut, which the conversation
    /// waited for (counted in `waits`), keeping the latest turn.
    pub caught_up: u64,
    /// Automatic compactions that failed as the library's fail: the summary and the files
    /// it restores would not have been below the threshold (or not smaller than what they
    /// replace). Each summary was written, paid for and waited on; nothing was committed.
    pub failed_compactions: u64,
    /// Why the policy's automatic compaction stopped for the rest of the session, as the
    /// library's `Compactor` stops it: `"circuitBreakerOpen"` (three failed compactions in a
    /// row) or `"thrashing"` (the context refilled to the threshold within three requests
    /// after each of three compactions in a row). `None`: it never stopped.
    pub paused: Option<String>,
    /// The request (0-based) at which it was first due and skipped for `paused`.
    pub paused_at_request: Option<u64>,
    /// Files read again: a file Claude Code's rules would have restored after a
    /// compaction, which this policy did not, read again before the session's next tool
    /// call on it.
    pub rereads: u64,
    /// Tokens of the files read again (each joins the conversation at its re-read).
    pub reread_tokens: u64,
    /// Dollars the re-reads add to `cost`: this cost minus the same replay's without them
    /// (the round trips, and the files' tokens written and read by every later request
    /// until the next compaction; 0 without re-reads).
    pub reread_cost: f64,
    /// Number of items the summaries did not mention.
    pub lost: usize,
    /// What the summaries did not mention (files, user messages, errors).
    pub loss: LossReport,
}

/// Where the agent changed its prompt in a recorded request (found by the recorded
/// replay, applied to every policy at the same call).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BreakAt {
    /// Inside the hidden prefix, at this many tokens.
    Hidden(u64),
    /// At this item.
    Item(usize),
}

/// A change of the prompt the agent made at a user prompt, which the transcript does not
/// show but the recorded usage does (the provider read less than the model expected).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientBreak {
    /// Index of the call.
    pub call: usize,
    /// Transcript line (0-based) of the last line before the call.
    pub line: usize,
    /// Tokens the provider read (where the change was).
    pub at_tokens: u64,
    /// Tokens the cache model would have read.
    pub model_read: u64,
    /// Where it is applied in the other policies' requests.
    #[serde(skip)]
    pub at: BreakAt,
}

/// Cache reads and writes of the recorded calls: recorded vs simulated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheTotals {
    /// Tokens read.
    pub cache_read: u64,
    /// Tokens written.
    pub cache_write: u64,
}

/// How well the cache model reproduces the recorded session.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Calibration {
    /// Recorded calls compared.
    pub calls: u64,
    /// The recorded usage, summed over calls (each response once).
    pub recorded: CacheTotals,
    /// The replay of the recorded policy, with the agent's prompt changes at user prompts
    /// taken from the recording.
    pub simulated: CacheTotals,
    /// Relative error of `simulated.cache_read` (percent).
    pub read_error_percent: f64,
    /// Relative error of `simulated.cache_write` (percent).
    pub write_error_percent: f64,
    /// The same replay from the transcript alone (no prompt changes taken from the usage).
    pub model_only: CacheTotals,
    /// Relative error of `model_only.cache_read` (percent).
    pub model_only_read_error_percent: f64,
    /// Relative error of `model_only.cache_write` (percent).
    pub model_only_write_error_percent: f64,
    /// The prompt changes found.
    pub client_breaks: Vec<ClientBreak>,
}

/// Percent error of `sim` against `rec` (0 when both are 0).
pub fn error_percent(sim: u64, rec: u64) -> f64 {
    if rec == 0 {
        if sim == 0 {
            0.0
        } else {
            100.0
        }
    } else {
        (sim as f64 - rec as f64) / rec as f64 * 100.0
    }
}

/// Everything a simulation of one session reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SimulationReport {
    /// The model the prices and thresholds are for.
    pub model: String,
    /// The prices used.
    pub prices: Prices,
    /// Summary output speed used (tokens per second).
    pub summary_tokens_per_second: f64,
    /// Summary budget used (tokens).
    pub summary_tokens: u64,
    /// The auto-compact threshold used.
    pub threshold: u64,
    /// Tokens of the hidden prefix (system prompt, tools, unrecorded context).
    pub hidden_tokens: u64,
    /// Calls replayed.
    pub calls: u64,
    /// One report per policy, in the order asked.
    pub policies: Vec<PolicyReport>,
    /// The recorded policy's calibration (sessions with recorded usage).
    pub calibration: Option<Calibration>,
    /// The policy the simulator recommends: the cheapest that loses nothing more than
    /// the baseline's summaries do.
    pub recommended: Option<String>,
}
