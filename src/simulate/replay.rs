//! The replay: a session's calls, one by one, under one policy, through the cache model.
//!
//! The conversation a policy holds is a list of segments (the hidden prefix, then one per
//! line, or a summary, or restored files). Before each recorded call the lines added since
//! the previous one are appended, the policy acts (clears, summarizes, swaps in a
//! background summary), the provider's own edits are applied, and the request goes through
//! [`PrefixCache`] at the call's recorded time. Every policy sees the same lines, the same
//! responses and the same clock; only what they send differs.

use crate::drive::ahead::{Background, Ticket};
use crate::drive::autocompact::{SkipReason, ThrashDetector, MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES};
use crate::drive::bound::{post_compact_fits, PostCompactSizes, MAX_POST_COMPACT_RATIO};
use crate::drive::preemptive::{Ahead, EarlyLine};
use crate::measure::calibration::Fit;
use crate::measure::tokens::text_tokens;
use crate::model::messages::{Content, Message};
use crate::model::view::CLEARED_PLACEHOLDER;
use crate::simulate::cache::{chain, key_of, PrefixCache, Segment, Ttl};
use crate::simulate::policy::{CompactRule, MicroCompactRule, Policy};
use crate::simulate::prices::Prices;
use crate::simulate::report::{Accumulator, BreakAt, ClientBreak, PolicyReport};
use crate::simulate::timeline::{ItemKind, Timeline};
use crate::summarize::loss::{loss_report, LossReport};
use crate::summarize::offline::summarize_messages;
use crate::transforms::microcompact::{default_compactable, Compactable, LARGE_RESULT_TOKENS};
use crate::transforms::restore::{
    POST_COMPACT_MAX_FILES_TO_RESTORE, POST_COMPACT_MAX_TOKENS_PER_FILE, POST_COMPACT_TOKEN_BUDGET,
};

/// A recorded read this much shorter than the model's, at a request after a user prompt,
/// counts as a change the agent made to its prompt that the transcript does not show.
pub const BREAK_TOLERANCE_TOKENS: u64 = 256;

/// Tokens of the summary instruction appended to the conversation for a summary call.
pub const SUMMARY_PROMPT_TOKENS: u64 = 1_000;

/// Output tokens of the round trip that reads a file again (the model's `Read` call). The
/// recorded responses holding only a `Read` call are 1–520 tokens, most under 110; this is
/// above most of them, so a re-read is not priced low.
pub const REREAD_OUTPUT_TOKENS: u64 = 150;

/// Settings every replay of one simulation shares.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Prices of the billing classes.
    pub prices: Prices,
    /// Output speed of a summary, tokens per second.
    pub summary_tokens_per_second: f64,
    /// Size budget of a summary (tokens): the offline summary is written within it.
    pub summary_tokens: u64,
    /// The model's auto-compact threshold (SPEC §4).
    pub threshold: u64,
    /// The model's warning line (SPEC §4).
    pub warning: u64,
    /// The model's blocking limit (SPEC §4): a thrashing pause does not hold there.
    pub blocking: u64,
    /// Tokens of the hidden prefix.
    pub hidden_tokens: u64,
}

#[derive(Clone, Copy, Debug)]
struct Seg {
    key: u64,
    tokens: u64,
    item: Option<usize>,
    cleared: bool,
}

/// A pre-emptive summary being written: it lands in the [`Background`] at `done_ms`.
struct Writing {
    ticket: Ticket,
    ahead: Ahead,
    done_ms: f64,
}

/// A file a compaction did not restore where Claude Code's rules would have, waiting for the
/// session's next tool call on it.
#[derive(Clone, Debug)]
struct Unrestored {
    path: String,
    /// Tokens of its latest read.
    tokens: u64,
}

/// One replay in progress.
pub struct Run<'a> {
    t: &'a Timeline,
    messages: &'a [Message],
    s: &'a Settings,
    policy: &'a Policy,
    segs: Vec<Seg>,
    n_hidden: usize,
    cache: PrefixCache,
    appended: usize,
    chain: usize,
    last_call_ms: Option<f64>,
    /// The policy's summaries written ahead, decided by the library's own rules.
    background: Background,
    /// The one being written now, with when it lands.
    writing: Option<Writing>,
    /// For each pre-emptive summary's cut (a segment index), the end of the lines it
    /// summarizes (an item index), for its loss report.
    cut_history: Vec<(usize, usize)>,
    /// Sizes as the library's bound counts them: the hidden prefix is what every request
    /// sends besides the conversation, and the replay's tokens are real tokens.
    fit: Fit,
    /// Files to read again before the next tool call on them.
    unrestored: Vec<Unrestored>,
    /// Whether re-reads are modelled (off for the replay that prices them).
    rereads: bool,
    /// For each call, the files the tool calls of its response work on.
    uses: Vec<Vec<String>>,
    fresh: u64,
    server_cleared: usize,
    placeholder_tokens: u64,
    /// Failed automatic compactions in a row, as the `Compactor` counts them: at
    /// [`MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES`] its circuit breaker opens.
    failures: u32,
    /// The `Compactor`'s thrashing detection, one turn per request.
    thrash: ThrashDetector,
    acc: Accumulator,
}

impl<'a> Run<'a> {
    /// A replay of `t` under `policy`.
    pub fn new(
        t: &'a Timeline,
        messages: &'a [Message],
        s: &'a Settings,
        policy: &'a Policy,
    ) -> Run<'a> {
        let hidden = s.hidden_tokens;
        let a = if t.warm_tokens > 0 && t.warm_tokens < hidden {
            t.warm_tokens
        } else {
            hidden
        };
        let mut segs = vec![Seg {
            key: key_of("hidden", 0, 0),
            tokens: a,
            item: None,
            cleared: false,
        }];
        if hidden > a {
            segs.push(Seg {
                key: key_of("hidden", 1, 0),
                tokens: hidden - a,
                item: None,
                cleared: false,
            });
        }
        let n_hidden = segs.len();
        let mut cache = PrefixCache::new();
        if t.warm_tokens > 0 {
            if let Some(first) = t.calls.first() {
                let ttl = first.recorded.map_or(Ttl::FiveMinutes, |r| r.ttl);
                cache.seed(&as_segments(&segs[..1]), first.time_ms, ttl);
            }
        }
        let placeholder_tokens =
            ((text_tokens(CLEARED_PLACEHOLDER) as f64) * t.ratio).ceil() as u64;
        let early_line = policy
            .compact
            .as_ref()
            .filter(|c| c.pre_emptive)
            .map(|c| early_line_of(c, s.threshold));
        let mut uses: Vec<Vec<String>> = vec![Vec::new(); t.calls.len()];
        for it in &t.items {
            if let Some(k) = it.call {
                uses[k].extend(it.file_uses.iter().map(|(_, p)| p.clone()));
            }
        }
        Run {
            t,
            messages,
            s,
            policy,
            segs,
            n_hidden,
            cache,
            appended: 0,
            chain: 0,
            last_call_ms: None,
            background: Background::with_line(early_line),
            writing: None,
            cut_history: Vec::new(),
            fit: Fit {
                overhead: hidden as f64,
                ratio: 1.0,
                observations: 1,
            },
            unrestored: Vec::new(),
            rereads: true,
            uses,
            fresh: 1,
            server_cleared: 0,
            placeholder_tokens,
            failures: 0,
            thrash: ThrashDetector::default(),
            acc: Accumulator::default(),
        }
    }

    /// The same replay without modelling re-reads of files not restored (to price them).
    pub fn without_rereads(mut self) -> Run<'a> {
        self.rereads = false;
        self
    }

    fn fresh_key(&mut self, label: &str) -> u64 {
        self.fresh += 1;
        key_of(label, self.fresh, 0)
    }

    fn size(&self) -> u64 {
        self.segs.iter().map(|s| s.tokens).sum()
    }

    fn ttl(&self) -> Ttl {
        self.policy.ttl
    }

    fn append_until(&mut self, end: usize) {
        while self.appended < end {
            let j = self.appended;
            self.appended += 1;
            let it = &self.t.items[j];
            if it.kind == ItemKind::RecordedCompaction && !self.policy.recorded {
                continue;
            }
            self.segs.push(Seg {
                key: key_of("item", j as u64, 0),
                tokens: it.tokens,
                item: Some(j),
                cleared: false,
            });
        }
    }

    fn breakpoints(&self, len: usize) -> Vec<usize> {
        let mut b = vec![1, self.n_hidden, len];
        b.dedup();
        b
    }

    /// Replays the recorded requests; when `find_breaks`, a request after a user prompt
    /// that read less than the model would counts as a change the agent made, applied
    /// from the recorded read on. Returns the breaks found.
    ///
    /// The requests are rebuilt from the recorded sizes: each one is the previous one plus
    /// a segment of its recorded growth (or the previous one cut short, with a new tail,
    /// when the agent sent less than before).
    pub fn replay_recorded(&mut self, find_breaks: bool) -> Vec<ClientBreak> {
        let mut breaks = Vec::new();
        let mut prev_input: Option<u64> = None;
        for k in 0..self.t.calls.len() {
            let call = &self.t.calls[k];
            if call.chain != self.chain {
                self.recorded_compaction(call.chain_start, call.time_ms);
                self.chain = call.chain;
                prev_input = None;
            }
            let input = match call.recorded_input() {
                Some(x) => x,
                None => {
                    let added: u64 = self.t.items
                        [self.appended.min(call.request_end)..call.request_end]
                        .iter()
                        .map(|i| i.tokens)
                        .sum();
                    prev_input.unwrap_or(self.s.hidden_tokens) + added
                }
            };
            self.appended = call.request_end;
            let base = prev_input.unwrap_or_else(|| self.segs.iter().map(|s| s.tokens).sum());
            if input >= base {
                if input > base {
                    let key = key_of("recorded", k as u64, 0);
                    self.segs.push(Seg {
                        key,
                        tokens: input - base,
                        item: None,
                        cleared: false,
                    });
                }
            } else {
                self.truncate_to(input);
            }
            prev_input = Some(input);
            let ttl = call.recorded.map_or(Ttl::FiveMinutes, |r| r.ttl);
            let now = call.time_ms;
            if let (true, true, Some(rec)) = (find_breaks, call.prompt, call.recorded) {
                let recorded_read = rec.usage.cache_read_input_tokens;
                let model_read = self.cache.peek_read(&as_segments(&self.segs), now);
                if recorded_read + BREAK_TOLERANCE_TOKENS < model_read {
                    self.split_and_break(recorded_read, now, ttl);
                    breaks.push(ClientBreak {
                        call: k,
                        line: self.t.items[call.request_end.saturating_sub(1)].line,
                        at_tokens: recorded_read,
                        model_read,
                        at: self.item_at(k, recorded_read),
                    });
                }
            }
            self.send(k, now, ttl);
        }
        breaks
    }

    /// Cuts the request to its first `tokens` tokens; the cut segment gets a new key (its
    /// content is not what was cached).
    fn truncate_to(&mut self, tokens: u64) {
        let mut cum = 0u64;
        let mut keep = self.segs.len();
        for (i, s) in self.segs.iter().enumerate() {
            if cum + s.tokens >= tokens {
                keep = i + 1;
                break;
            }
            cum += s.tokens;
        }
        self.segs.truncate(keep);
        if let Some(last) = self.segs.last_mut() {
            if cum + last.tokens > tokens {
                last.tokens = tokens - cum;
            }
        }
        let salt = self.fresh_key("shrunk");
        if let Some(last) = self.segs.last_mut() {
            last.key = chain(last.key, salt);
        }
    }

    /// Where recorded token position `p` of call `k`'s request falls: in the hidden
    /// prefix, or at an item (by the items' calibrated sizes).
    fn item_at(&self, k: usize, p: u64) -> BreakAt {
        let call = &self.t.calls[k];
        if p <= self.s.hidden_tokens {
            return BreakAt::Hidden(p);
        }
        let mut cum = self.s.hidden_tokens;
        for j in call.chain_start..call.request_end {
            cum += self.t.items[j].tokens;
            if cum > p {
                return BreakAt::Item(j);
            }
        }
        BreakAt::Item(call.request_end.saturating_sub(1))
    }

    /// The recorded compaction before a new recorded conversation: its summary call
    /// (modelled: the conversation so far read, the summary written), the wait, and what
    /// the recorded summary lost.
    fn recorded_compaction(&mut self, chain_start: usize, now: f64) {
        let covered = self.history(chain_start);
        let summary_item = (chain_start..self.t.items.len())
            .find(|&j| self.t.items[j].kind == ItemKind::RecordedCompaction);
        let summary_text = summary_item
            .map(|j| message_text(&self.messages[self.t.items[j].line]))
            .unwrap_or_default();
        let summary_tokens = text_tokens(&summary_text).max(1);
        self.summary_call(now, summary_tokens);
        self.acc.blocked_seconds += summary_tokens as f64 / self.s.summary_tokens_per_second;
        self.acc.waits += 1;
        self.acc.compactions += 1;
        let msgs = self.lines(&covered);
        merge_loss(&mut self.acc.loss, loss_report(&msgs, &summary_text));
        self.segs.truncate(self.n_hidden);
    }

    /// Splits the segment holding token position `p` there, gives everything after it new
    /// keys, and marks the prefix up to `p` as cached (the provider read that far).
    fn split_and_break(&mut self, p: u64, now: f64, ttl: Ttl) {
        let mut cum = 0u64;
        let mut idx = self.segs.len();
        for (i, s) in self.segs.iter().enumerate() {
            if cum + s.tokens > p {
                idx = i;
                break;
            }
            cum += s.tokens;
        }
        if idx < self.segs.len() && cum < p {
            let s = self.segs[idx];
            let head = Seg {
                key: chain(s.key, self.fresh_key("split")),
                tokens: p - cum,
                ..s
            };
            let tail = Seg {
                key: s.key,
                tokens: s.tokens - (p - cum),
                ..s
            };
            self.segs[idx] = head;
            self.segs.insert(idx + 1, tail);
            idx += 1;
        }
        self.rekey_from(idx);
        if idx > 0 {
            self.cache.seed(&as_segments(&self.segs[..idx]), now, ttl);
        }
    }

    fn rekey_from(&mut self, idx: usize) {
        let salt = self.fresh_key("break");
        let from = idx.min(self.segs.len());
        for s in &mut self.segs[from..] {
            s.key = chain(s.key, salt);
        }
    }

    /// Applies a break found in the recording to this policy's request.
    fn apply_break(&mut self, at: BreakAt, now: f64) {
        let idx = match at {
            BreakAt::Hidden(p) => {
                let mut cum = 0u64;
                let mut idx = self.n_hidden;
                for (i, s) in self.segs[..self.n_hidden].iter().enumerate() {
                    if cum + s.tokens > p {
                        idx = i;
                        break;
                    }
                    cum += s.tokens;
                }
                idx
            }
            BreakAt::Item(j) => match self
                .segs
                .iter()
                .position(|s| s.item.is_some_and(|i| i >= j))
            {
                Some(i) => i,
                None => return,
            },
        };
        self.rekey_from(idx);
        if idx > 0 {
            let ttl = self.ttl();
            self.cache.seed(&as_segments(&self.segs[..idx]), now, ttl);
        }
    }

    /// Replays the session under the policy, applying `breaks` (from the recorded replay).
    ///
    /// One check per call, before its request, as the `Compactor` checks before each
    /// request: a pre-emptive summary that is done by then lands, the check is observed
    /// ([`Background::observe_check`]), the compaction runs when due (at the threshold, or
    /// a check early when [`Background::swap_early`] says so), and otherwise a summary starts
    /// or is refreshed when [`Background::wants_start`] says so. Then the files the policy
    /// did not restore are read again before the call that uses them.
    pub fn replay_policy(&mut self, breaks: &[ClientBreak]) {
        for k in 0..self.t.calls.len() {
            let call = &self.t.calls[k];
            let now = call.time_ms;
            // The lines of this call's turn (the previous response and what answered it)
            // stay verbatim in a summary started now, as the library's cut keeps the latest
            // API turn.
            let turn_start = (self.segs.len(), self.appended);
            self.append_until(call.request_end);
            if let Some(m) = self.policy.micro_compact.clone() {
                self.client_micro_compact(&m, now);
            }
            if let Some(c) = self.policy.compact.clone() {
                self.compact_check(&c, now, turn_start, k);
            }
            if self.rereads {
                self.read_again(k, now);
            }
            for b in breaks.iter().filter(|b| b.call == k) {
                self.apply_break(b.at, now);
            }
            if let Some(sc) = self.policy.server.as_ref().and_then(|s| s.compact.clone()) {
                if self.server_view().iter().map(|s| s.tokens).sum::<u64>() >= sc.trigger {
                    self.server_compaction(now);
                }
            }
            let ttl = self.ttl();
            self.send(k, now, ttl);
        }
    }

    /// A check paused for thrashing at the blocking limit, as a `Compactor`'s: the circuit
    /// breaker still holds (then for the rest of the session), else a full compaction runs.
    fn at_blocking_limit(&mut self, now: f64, threshold: u64, k: usize) {
        if self.failures >= MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES {
            self.acc.paused = Some((SkipReason::CircuitBreakerOpen.as_str(), k as u64));
        } else {
            self.full_compaction(now, true, threshold);
        }
    }

    /// The client's compaction check before request `k` (see
    /// [`replay_policy`](Self::replay_policy)), under the `Compactor`'s rules for automatic
    /// compactions: one that would not leave the conversation below the threshold (nor
    /// smaller than it was) is a failure, nothing committed; after
    /// [`MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES`] in a row the circuit breaker stays open, and
    /// after three rapid refills in a row ([`ThrashDetector`]) automatic compaction pauses. The
    /// breaker ends this policy's compactions for the rest of the session (reported as
    /// `paused`): without them a summary that alone fills the threshold would be written again
    /// at nearly every request. The thrashing pause holds below the blocking limit only, as a
    /// `Compactor`'s does: there the next request would not fit, and a full compaction runs
    /// (the pause stays on after it).
    fn compact_check(&mut self, c: &CompactRule, now: f64, turn_start: (usize, usize), k: usize) {
        let threshold = c.threshold.unwrap_or(self.s.threshold);
        self.thrash.turn();
        let size = self.size();
        if self.thrash.thrashing && self.acc.paused.is_some_and(|(why, _)| why == "thrashing") {
            if !self.thrash.pauses(size, self.s.blocking) {
                self.at_blocking_limit(now, threshold, k);
            }
            return;
        }
        if self.acc.paused.is_some() {
            return;
        }
        if c.pre_emptive {
            if self.writing.as_ref().is_some_and(|w| w.done_ms <= now) {
                if let Some(w) = self.writing.take() {
                    self.background.landed(w.ticket, Ok(w.ahead));
                }
            }
            self.background.observe_check(self.size());
        }
        let cold = self
            .last_call_ms
            .is_some_and(|last| now - last > self.ttl().ms());
        let cold_due = cold && c.when_cache_cold_above.is_some_and(|x| size >= x);
        let early = !cold_due
            && c.pre_emptive
            && self.background.swap_early(size, threshold, Some(&self.fit));
        if cold_due || size >= threshold || early {
            let why = if self.thrash.thrashing {
                Some(SkipReason::Thrashing)
            } else if self.failures >= MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES {
                Some(SkipReason::CircuitBreakerOpen)
            } else {
                None
            };
            if let Some(why) = why {
                self.acc.paused = Some((why.as_str(), k as u64));
                self.background.drop_all();
                self.writing = None;
                if why == SkipReason::Thrashing && !self.thrash.pauses(size, self.s.blocking) {
                    self.at_blocking_limit(now, threshold, k);
                }
                return;
            }
        }
        if cold_due {
            self.full_compaction(now, true, threshold);
            return;
        }
        if size >= threshold || early {
            if self.swap_in(size < threshold, threshold)
                || (size >= threshold && self.catch_up(now, turn_start, threshold))
            {
                self.failures = 0;
                self.thrash.compacted(threshold);
                return;
            }
            if size >= threshold {
                self.full_compaction(now, true, threshold);
                return;
            }
        }
        if self.background.wants_start(size, false, Some(&self.fit)) {
            self.start_background_summary(now, turn_start);
        }
    }

    /// The request as the provider processes it (after `clear_tool_uses`).
    fn server_view(&mut self) -> Vec<Seg> {
        let Some(rule) = self
            .policy
            .server
            .as_ref()
            .and_then(|s| s.clear_tool_uses.clone())
        else {
            return self.segs.clone();
        };
        let size: u64 = self.segs.iter().map(|s| s.tokens).sum();
        if size < rule.trigger {
            return self.segs.clone();
        }
        let t = self.t;
        let eligible = |s: &Seg| {
            s.item.is_some_and(|j| {
                let it = &t.items[j];
                it.kind == ItemKind::ToolResults
                    && !it.tools.iter().any(|n| rule.exclude_tools.contains(n))
            })
        };
        // Keep the last `keep` tool uses.
        let mut kept = 0usize;
        let mut cut = self.segs.len();
        for (i, s) in self.segs.iter().enumerate().rev() {
            if s.item
                .is_some_and(|j| t.items[j].kind == ItemKind::ToolResults)
            {
                kept += s.item.map_or(0, |j| t.items[j].tools.len().max(1));
                if kept >= rule.keep {
                    cut = i;
                    break;
                }
            }
        }
        let mut view = self.segs.clone();
        let mut freed = 0u64;
        let mut cleared = 0usize;
        for s in view[..cut].iter_mut() {
            if !s.cleared && eligible(s) {
                let j = s.item.unwrap_or(0);
                let ph = self.placeholder_tokens * t.items[j].tools.len().max(1) as u64;
                if s.tokens > ph {
                    freed += s.tokens - ph;
                    s.tokens = ph;
                    s.key = key_of("cleared", j as u64, 0);
                    s.cleared = true;
                    cleared += 1;
                }
            }
        }
        if cleared == 0 || freed < rule.clear_at_least {
            return self.segs.clone();
        }
        if cleared > self.server_cleared {
            self.acc.micro_compactions += 1;
        }
        self.server_cleared = cleared;
        view
    }

    fn send(&mut self, _k: usize, now: f64, ttl: Ttl) {
        let view = if self.policy.recorded {
            self.segs.clone()
        } else {
            self.server_view()
        };
        let segments = as_segments(&view);
        let bps = self.breakpoints(segments.len());
        let u = self.cache.request(&segments, &bps, now, ttl);
        let call = &self.t.calls[_k];
        self.acc.add_request(u, ttl, call.output_tokens);
        self.last_call_ms = Some(now);
    }

    fn lines(&self, items: &[usize]) -> Vec<Message> {
        items
            .iter()
            .map(|&j| self.messages[self.t.items[j].line].clone())
            .collect()
    }

    /// The conversation's own lines up to item `end` (what a summary made now covers).
    fn history(&self, end: usize) -> Vec<usize> {
        (0..end)
            .filter(|&j| self.t.items[j].kind != ItemKind::RecordedCompaction)
            .collect()
    }

    /// Writes the offline summary of everything up to now; returns its size and merges its
    /// loss report.
    fn write_summary(&mut self) -> u64 {
        let items = self.history(self.appended);
        let msgs = self.lines(&items);
        let summary = summarize_messages(&msgs, self.s.summary_tokens);
        merge_loss(&mut self.acc.loss, loss_report(&msgs, &summary));
        text_tokens(&summary).max(1)
    }

    /// The summary call: the conversation so far plus the instruction, read from and
    /// written to the cache like any request; the summary is its output.
    fn summary_call(&mut self, now: f64, summary_tokens: u64) {
        let segments = as_segments(&self.segs);
        self.summary_request(segments, now, summary_tokens);
    }

    /// A summary call reading `input` plus the instruction.
    fn summary_request(&mut self, mut segments: Vec<Segment>, now: f64, summary_tokens: u64) {
        segments.push(Segment {
            key: self.fresh_key("summary-prompt"),
            tokens: SUMMARY_PROMPT_TOKENS,
        });
        let ttl = self.ttl();
        let bps = self.breakpoints(segments.len());
        let u = self.cache.request(&segments, &bps, now, ttl);
        self.acc.add_summary_call(u, ttl, summary_tokens);
    }

    /// The policy's budget for restored files (SPEC §9's 50,000 unless it says otherwise).
    fn restore_budget(&self) -> u64 {
        self.policy
            .compact
            .as_ref()
            .and_then(|c| c.restore_budget)
            .unwrap_or(POST_COMPACT_TOKEN_BUDGET)
    }

    /// Files a compaction restores within `budget` (SPEC §9): the most recently read ones
    /// among `covered` segments not shown by a `kept` one, each and all within their budgets.
    /// Each as the item of its latest read and the tokens restored.
    fn restore_plan(&self, covered: &[Seg], kept: &[Seg], budget: u64) -> Vec<(usize, u64)> {
        let mut plan = Vec::new();
        if budget == 0 {
            return plan;
        }
        let mut seen: Vec<&str> = Vec::new();
        let mut total = 0u64;
        let kept_paths: Vec<&str> = kept
            .iter()
            .filter_map(|s| s.item)
            .filter_map(|j| self.t.items[j].read_path.as_deref())
            .collect();
        for s in covered.iter().rev() {
            let Some(j) = s.item else { continue };
            let Some(path) = self.t.items[j].read_path.as_deref() else {
                continue;
            };
            if seen.contains(&path) || kept_paths.contains(&path) {
                continue;
            }
            seen.push(path);
            let full = self.t.items[j].tokens;
            let add = full
                .min(POST_COMPACT_MAX_TOKENS_PER_FILE)
                .min(budget - total);
            total += add;
            plan.push((j, add));
            if seen.len() >= POST_COMPACT_MAX_FILES_TO_RESTORE || total >= budget {
                break;
            }
        }
        plan
    }

    fn compacted_segs(&mut self, summary_tokens: u64, restored: u64, kept: Vec<Seg>) {
        // The conversation is replaced: a summary written ahead is dropped (a running one
        // is ignored when it lands), as the library drops it.
        self.background.drop_all();
        self.writing = None;
        self.cut_history.clear();
        self.segs.truncate(self.n_hidden);
        let key = self.fresh_key("summary");
        self.segs.push(Seg {
            key,
            tokens: summary_tokens,
            item: None,
            cleared: false,
        });
        if restored > 0 {
            let key = self.fresh_key("restored");
            self.segs.push(Seg {
                key,
                tokens: restored,
                item: None,
                cleared: false,
            });
        }
        self.segs.extend(kept);
        self.acc.compactions += 1;
    }

    /// Claude Code's full compaction: the user waits while the summary is written. When
    /// the summary and the files it restores would not be below `threshold`, or not smaller
    /// than the conversation they replace, it fails as the library's automatic compaction
    /// fails: the summary call is paid for and waited on, nothing is committed, and the
    /// failure is counted towards the circuit breaker.
    fn full_compaction(&mut self, now: f64, wait: bool, threshold: u64) {
        let summary_tokens = self.write_summary();
        self.summary_call(now, summary_tokens);
        if wait {
            self.acc.blocked_seconds += summary_tokens as f64 / self.s.summary_tokens_per_second;
            self.acc.waits += 1;
        }
        let covered: Vec<Seg> = self.segs[self.n_hidden..].to_vec();
        let budget = self.restore_budget();
        let restored = self.restore_plan(&covered, &[], budget);
        let restored_tokens: u64 = restored.iter().map(|r| r.1).sum();
        let after = summary_tokens.saturating_add(restored_tokens);
        let before: u64 = covered.iter().map(|s| s.tokens).sum();
        if after >= threshold || after >= before {
            self.acc.failed_compactions += 1;
            self.failures += 1;
            return;
        }
        self.failures = 0;
        self.thrash.compacted(threshold);
        self.note_unrestored(&covered, &[], &restored);
        self.compacted_segs(summary_tokens, restored_tokens, Vec::new());
    }

    /// Starts (or refreshes) the summary written ahead, as the library's [`Background`]
    /// starts one: it stands for the conversation before this call's turn (`turn_start`:
    /// the segment and item it starts at). A first summary is read from the conversation's
    /// cached prefix; a refresh is chained, as the library chains it: the ready summary and
    /// the lines since its cut, a new request. It lands when written, at the summary speed.
    fn start_background_summary(&mut self, now: f64, turn_start: (usize, usize)) {
        let (cut, history_end) = turn_start;
        if cut <= self.n_hidden || cut > self.segs.len() {
            return;
        }
        let size = self.size();
        let tail: u64 = self.segs[cut..].iter().map(|s| s.tokens).sum();
        let (ticket, earlier) = self.background.start(cut, size, tail);
        let items = self.history(history_end);
        let summary = summarize_messages(&self.lines(&items), self.s.summary_tokens);
        let summary_tokens = text_tokens(&summary).max(1);
        let input: Vec<Segment> = match &earlier {
            None => as_segments(&self.segs[..cut]),
            Some(e) => {
                let mut segs = as_segments(&self.segs[..self.n_hidden]);
                segs.push(Segment {
                    key: self.fresh_key("summary-so-far"),
                    tokens: text_tokens(&e.summary).max(1),
                });
                let salt = self.fresh_key("chained");
                let from = e.cut.clamp(self.n_hidden, cut);
                segs.extend(self.segs[from..cut].iter().map(|s| Segment {
                    key: chain(s.key, salt),
                    tokens: s.tokens,
                }));
                segs
            }
        };
        self.summary_request(input, now, summary_tokens);
        self.cut_history.retain(|&(c, _)| c != cut);
        self.cut_history.push((cut, history_end));
        let secs = summary_tokens as f64 / self.s.summary_tokens_per_second;
        self.writing = Some(Writing {
            ticket,
            ahead: Ahead {
                cut,
                summary,
                usage: None,
                pre: Default::default(),
                calls: earlier.map_or(0, |e| e.calls) + 1,
            },
            done_ms: now + secs * 1000.0,
        });
    }

    /// Swaps the ready summary written ahead in (`early`: a check before the threshold), as
    /// the library's swap does: the lines since its cut kept verbatim, the files restored,
    /// and only when the context it leaves is within [`MAX_POST_COMPACT_RATIO`] times the
    /// synchronous path's ([`post_compact_fits`]) and below `threshold`. Returns whether it
    /// was swapped in; a refusal is counted, and the caller runs the synchronous path.
    fn swap_in(&mut self, early: bool, threshold: u64) -> bool {
        let Some(ahead) = self.background.ready().cloned() else {
            return false;
        };
        if !self.swap_fits(&ahead, threshold) {
            self.acc.refused_swaps += 1;
            self.background.refused();
            return false;
        }
        self.commit_swap(&ahead);
        if early {
            self.acc.early_swaps += 1;
        } else {
            self.acc.swaps += 1;
        }
        true
    }

    /// The library's catch-up ([`crate::drive::preemptive::catch_up`]) of the ready summary
    /// a swap just refused: one chained call (the summary and the lines from its cut to this
    /// call's turn, `turn_start`), which the conversation waits for, then the swap of the
    /// summary it writes, keeping the turn. Not tried when the turn alone would put that
    /// swap over the bound (a summary as large, the same files restored), as the library
    /// checks before paying for the call. Returns whether it was swapped in.
    fn catch_up(&mut self, now: f64, (cut, history_end): (usize, usize), threshold: u64) -> bool {
        let Some(stale) = self.background.ready().cloned() else {
            return false;
        };
        if cut <= stale.cut.max(self.n_hidden) || cut > self.segs.len() {
            return false;
        }
        let planned = Ahead {
            cut,
            ..stale.clone()
        };
        if !self.swap_fits(&planned, threshold) {
            return false;
        }
        let items = self.history(history_end);
        let summary = summarize_messages(&self.lines(&items), self.s.summary_tokens);
        let summary_tokens = text_tokens(&summary).max(1);
        let mut input = as_segments(&self.segs[..self.n_hidden]);
        input.push(Segment {
            key: self.fresh_key("summary-so-far"),
            tokens: text_tokens(&stale.summary).max(1),
        });
        let salt = self.fresh_key("chained");
        input.extend(
            self.segs[stale.cut.max(self.n_hidden)..cut]
                .iter()
                .map(|s| Segment {
                    key: chain(s.key, salt),
                    tokens: s.tokens,
                }),
        );
        self.summary_request(input, now, summary_tokens);
        self.acc.blocked_seconds += summary_tokens as f64 / self.s.summary_tokens_per_second;
        self.acc.waits += 1;
        self.cut_history.retain(|&(c, _)| c != cut);
        self.cut_history.push((cut, history_end));
        let fresh = Ahead {
            cut,
            summary,
            calls: stale.calls + 1,
            ..stale
        };
        if !self.swap_fits(&fresh, threshold) {
            return false;
        }
        self.commit_swap(&fresh);
        self.acc.caught_up += 1;
        true
    }

    /// Whether a swap of `ahead` leaves a context within the bound ([`post_compact_fits`]),
    /// below `threshold` (the library refuses a swap the next check would compact again) and
    /// smaller than now.
    fn swap_fits(&self, ahead: &Ahead, threshold: u64) -> bool {
        let cut = ahead.cut;
        if cut <= self.n_hidden || cut > self.segs.len() {
            return false;
        }
        let covered: Vec<Seg> = self.segs[self.n_hidden..cut].to_vec();
        let kept: Vec<Seg> = self.segs[cut..].to_vec();
        let budget = self.restore_budget();
        let restored = self.restore_plan(&covered, &kept, budget);
        let sizes = PostCompactSizes {
            summary: text_tokens(&ahead.summary).max(1),
            kept: kept.iter().map(|s| s.tokens).sum(),
            attachments: restored.iter().map(|r| r.1).sum(),
        };
        let after = sizes.swapped(Some(&self.fit));
        post_compact_fits(&sizes, Some(&self.fit), MAX_POST_COMPACT_RATIO)
            && after < threshold
            && after < self.size()
    }

    /// Commits the swap of `ahead` ([`Self::swap_fits`] said it fits): the lines since its
    /// cut kept verbatim, the files restored.
    fn commit_swap(&mut self, ahead: &Ahead) {
        let cut = ahead.cut;
        let covered: Vec<Seg> = self.segs[self.n_hidden..cut].to_vec();
        let kept: Vec<Seg> = self.segs[cut..].to_vec();
        let budget = self.restore_budget();
        let restored = self.restore_plan(&covered, &kept, budget);
        let restored_tokens: u64 = restored.iter().map(|r| r.1).sum();
        let summary_tokens = text_tokens(&ahead.summary).max(1);
        let history_end = self
            .cut_history
            .iter()
            .find(|&&(c, _)| c == cut)
            .map_or(self.appended, |&(_, h)| h);
        let msgs = self.lines(&self.history(history_end));
        merge_loss(&mut self.acc.loss, loss_report(&msgs, &ahead.summary));
        self.note_unrestored(&covered, &kept, &restored);
        self.compacted_segs(summary_tokens, restored_tokens, kept);
    }

    /// `compact_20260112`: the provider summarizes inside the call (the user waits), and
    /// from then on processes only the compaction block and what follows it. It restores
    /// no files.
    fn server_compaction(&mut self, now: f64) {
        let summary_tokens = self.write_summary();
        self.summary_call(now, summary_tokens);
        self.acc.blocked_seconds += summary_tokens as f64 / self.s.summary_tokens_per_second;
        self.acc.waits += 1;
        let covered: Vec<Seg> = self.segs[self.n_hidden..].to_vec();
        self.note_unrestored(&covered, &[], &[]);
        self.compacted_segs(summary_tokens, 0, Vec::new());
    }

    /// Records the files Claude Code's rules would restore after a compaction of `covered`
    /// (keeping `kept`) that this one did not (`restored`): each is read again before the
    /// session's next tool call on it. Files restored now need no re-read.
    fn note_unrestored(&mut self, covered: &[Seg], kept: &[Seg], restored: &[(usize, u64)]) {
        let path = |j: usize| self.t.items[j].read_path.clone().unwrap_or_default();
        let restored: Vec<String> = restored.iter().map(|r| path(r.0)).collect();
        let visible: Vec<String> = kept
            .iter()
            .filter_map(|s| s.item)
            .filter_map(|j| self.t.items[j].read_path.clone())
            .collect();
        self.unrestored
            .retain(|u| !restored.contains(&u.path) && !visible.contains(&u.path));
        for (j, _) in self.restore_plan(covered, kept, POST_COMPACT_TOKEN_BUDGET) {
            let p = path(j);
            if restored.contains(&p) {
                continue;
            }
            let tokens = self.t.items[j].tokens;
            match self.unrestored.iter_mut().find(|u| u.path == p) {
                Some(u) => u.tokens = tokens,
                None => self.unrestored.push(Unrestored { path: p, tokens }),
            }
        }
    }

    /// Before call `k`: each file not restored that its response works on is read again
    /// first — a round trip (the request as it stands, answered by a `Read` call), then the
    /// file joins the conversation.
    fn read_again(&mut self, k: usize, now: f64) {
        if self.unrestored.is_empty() {
            return;
        }
        let uses = std::mem::take(&mut self.uses[k]);
        for p in &uses {
            let Some(i) = self.unrestored.iter().position(|u| &u.path == p) else {
                continue;
            };
            let u = self.unrestored.remove(i);
            let view = self.server_view();
            let segments = as_segments(&view);
            let bps = self.breakpoints(segments.len());
            let ttl = self.ttl();
            let used = self.cache.request(&segments, &bps, now, ttl);
            self.acc
                .add_reread(used, ttl, REREAD_OUTPUT_TOKENS, u.tokens);
            let key = self.fresh_key("reread");
            self.segs.push(Seg {
                key,
                tokens: REREAD_OUTPUT_TOKENS + u.tokens,
                item: None,
                cleared: false,
            });
        }
        self.uses[k] = uses;
    }

    /// Client-side clearing of old tool results by `m`'s rules.
    fn client_micro_compact(&mut self, m: &MicroCompactRule, now: f64) {
        let idle = self
            .last_call_ms
            .map_or(0.0, |last| (now - last) / 60_000.0);
        let cold = self.last_call_ms.is_some() && idle * 60_000.0 > self.ttl().ms();
        let by_time = m
            .idle_minutes
            .is_some_and(|i| idle >= i && self.last_call_ms.is_some());
        let by_cold = m.when_cache_cold && cold;
        let size = self.size();
        let by_size = m.trigger.is_some_and(|t| size >= t);
        if !(by_time || by_cold || by_size) {
            return;
        }
        let t = self.t;
        let compactable = |j: usize| {
            let it = &t.items[j];
            it.kind == ItemKind::ToolResults
                && !it.tools.is_empty()
                && it.tools.iter().all(|n| match default_compactable(n) {
                    Compactable::Always => true,
                    Compactable::IfLarge => it.tokens >= LARGE_RESULT_TOKENS,
                    Compactable::Never => false,
                })
        };
        // The most recent `keep_recent` compactable results stay.
        let mut kept = 0usize;
        let mut cut = self.segs.len();
        for (i, s) in self.segs.iter().enumerate().rev() {
            if kept >= m.keep_recent {
                break;
            }
            if let Some(j) = s.item {
                if compactable(j) {
                    kept += t.items[j].tools.len();
                    cut = i;
                }
            }
        }
        if kept < m.keep_recent {
            cut = 0;
        }
        let mut plan: Vec<(usize, u64)> = Vec::new();
        let mut freed = 0u64;
        for (i, s) in self.segs[..cut].iter().enumerate() {
            let Some(j) = s.item else { continue };
            if s.cleared || !compactable(j) {
                continue;
            }
            let ph = self.placeholder_tokens * t.items[j].tools.len() as u64;
            if s.tokens > ph {
                freed += s.tokens - ph;
                plan.push((i, ph));
            }
        }
        if plan.is_empty() {
            return;
        }
        // The size rule pays a rewrite only for a large enough gain; the time rules clear
        // whatever there is (the prefix is rewritten anyway).
        if !(by_time || by_cold) && freed < m.clear_at_least {
            return;
        }
        for (i, ph) in plan {
            let j = self.segs[i].item.unwrap_or(0);
            self.segs[i].tokens = ph;
            self.segs[i].key = key_of("cleared", j as u64, 0);
            self.segs[i].cleared = true;
        }
        self.acc.micro_compactions += 1;
    }

    /// The report of this replay.
    pub fn finish(self) -> PolicyReport {
        self.acc.report(self.policy, &self.s.prices)
    }

    /// The accumulated numbers so far (for calibration).
    pub fn accumulator(&self) -> &Accumulator {
        &self.acc
    }
}

/// The early line of a pre-emptive policy: its `earlyAt`, or the library's automatic line
/// below its threshold ([`EarlyLine::below`]: halfway between the warning line and the
/// threshold, moved down for large turns to the warning line).
fn early_line_of(c: &CompactRule, model_threshold: u64) -> EarlyLine {
    match c.early_at {
        Some(e) => EarlyLine::Fixed(e),
        None => EarlyLine::below(c.threshold.unwrap_or(model_threshold)),
    }
}

fn as_segments(segs: &[Seg]) -> Vec<Segment> {
    segs.iter()
        .map(|s| Segment {
            key: s.key,
            tokens: s.tokens,
        })
        .collect()
}

/// The text of a message's content (string content, or its text blocks joined).
fn message_text(m: &Message) -> String {
    match m.content() {
        Some(Content::Text(t)) => t.clone(),
        Some(Content::Blocks(b)) => b
            .iter()
            .filter_map(|x| match x {
                crate::model::messages::Block::Text(t) => Some(t.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        None => String::new(),
    }
}

/// Adds `more` to `into` without repeats.
fn merge_loss(into: &mut LossReport, more: LossReport) {
    for f in more.files {
        if !into.files.contains(&f) {
            into.files.push(f);
        }
    }
    for u in more.user_messages {
        if !into.user_messages.contains(&u) {
            into.user_messages.push(u);
        }
    }
    for e in more.errors {
        if !into.errors.contains(&e) {
            into.errors.push(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::policy::{builtin, ClearToolUses, CompactRule, ServerCompact, ServerRule};
    use crate::simulate::prices::Prices;
    use crate::simulate::timeline::build_timeline;
    use serde_json::json;

    fn ts(s: f64) -> String {
        let ms = (s * 1000.0).round() as i64;
        let (sec, milli) = (ms / 1000, ms % 1000);
        format!(
            "2026-01-01T{:02}:{:02}:{:02}.{:03}Z",
            sec / 3600,
            (sec / 60) % 60,
            sec % 60,
            milli
        )
    }

    /// A session without usage: `prompt`, then one call per step `(time, tool, path, result
    /// tokens)`: the tool's `tool_use` on `path`, answered a second later with that many
    /// tokens (by the estimate).
    fn calls(prompt: &str, steps: &[(f64, &str, String, usize)]) -> Vec<Message> {
        let mut out = vec![Message::from_value(
            json!({"type": "user", "timestamp": ts(0.0),
                   "message": {"role": "user", "content": prompt}}),
            "t",
        )
        .unwrap()];
        for (k, (t, tool, path, tokens)) in steps.iter().enumerate() {
            out.push(
                Message::from_value(
                    json!({"type": "assistant", "timestamp": ts(*t),
                       "message": {"role": "assistant", "id": format!("m{k}"), "model": "claude-opus-4-6",
                         "content": [{"type": "tool_use", "id": format!("t{k}"), "name": tool,
                                      "input": {"file_path": path}}]}}),
                    "t",
                )
                .unwrap(),
            );
            out.push(
                Message::from_value(
                    json!({"type": "user", "timestamp": ts(t + 1.0),
                       "message": {"role": "user", "content": [{"type": "tool_result",
                         "tool_use_id": format!("t{k}"), "content": "x".repeat(tokens * 4)}]}}),
                    "t",
                )
                .unwrap(),
            );
        }
        out
    }

    /// A session without usage: a prompt, then `rounds` calls, each reading a file whose
    /// result is `result_tokens` tokens (by the estimate), `gaps[k]` seconds after the
    /// previous call.
    fn session(rounds: usize, result_tokens: usize, gaps: &[f64]) -> Vec<Message> {
        let mut t = 0.0;
        let steps: Vec<_> = (0..rounds)
            .map(|k| {
                t += gaps.get(k).copied().unwrap_or(5.0);
                (t, "Read", format!("/src/f{k}.rs"), result_tokens)
            })
            .collect();
        calls("please read the files", &steps)
    }

    /// A session without usage: a prompt, then one call per step, 5 s apart: `(tool, path,
    /// result tokens)` — a `Read` of `path` answered with that many tokens, or another tool
    /// (`Edit`) on it answered briefly.
    fn session_of(steps: &[(&str, &str, usize)]) -> Vec<Message> {
        let steps: Vec<_> = steps
            .iter()
            .enumerate()
            .map(|(k, &(tool, path, tokens))| {
                (5.0 * (k + 1) as f64, tool, path.to_string(), tokens)
            })
            .collect();
        calls("work on the files", &steps)
    }

    fn settings(threshold: u64, speed: f64) -> Settings {
        Settings {
            prices: Prices::for_model("claude-opus-4-6"),
            summary_tokens_per_second: speed,
            summary_tokens: 500,
            threshold,
            warning: threshold.saturating_sub(20_000),
            blocking: threshold + 10_000,
            hidden_tokens: 2_000,
        }
    }

    fn replay(msgs: &[Message], s: &Settings, p: &Policy) -> PolicyReport {
        let t = build_timeline(msgs).unwrap();
        let mut run = Run::new(&t, msgs, s, p);
        run.replay_policy(&[]);
        run.finish()
    }

    fn policy(json: serde_json::Value) -> Policy {
        Policy::from_json(&json).unwrap()
    }

    #[test]
    fn claude_code_compacts_at_the_threshold_and_the_user_waits_for_the_summary() {
        let msgs = session(30, 1_000, &[]);
        let s = settings(20_000, 50.0);
        let r = replay(&msgs, &s, &builtin("claude-code").unwrap());
        assert_eq!(r.requests, 30);
        assert!(r.compactions >= 1, "{r:?}");
        assert!(r.peak_context < 21_500, "{r:?}");
        assert_eq!(r.summary_calls, r.compactions);
        // Each summary is written while the user waits: its size / speed.
        assert!(r.blocked_seconds > 0.0);
        assert!(r.lost == 0, "{:?}", r.loss);
        // Without compaction the context keeps growing.
        let none = replay(&msgs, &s, &policy(json!({"name": "none"})));
        assert!(none.peak_context > 30_000 && none.compactions == 0);
        assert!(none.tokens.cache_read > r.tokens.cache_read);
    }

    #[test]
    fn a_background_summary_finished_in_time_costs_no_wait() {
        let msgs = session(30, 1_000, &[]);
        let pre = policy(
            json!({"name": "pre", "compact": {"threshold": 20000, "preEmptive": true, "earlyAt": 12000}}),
        );
        let sync = policy(json!({"name": "sync", "compact": {"threshold": 20000}}));
        // Fast summaries: done long before the threshold.
        let fast = settings(20_000, 1_000.0);
        let r = replay(&msgs, &fast, &pre);
        assert!(r.compactions >= 1);
        assert_eq!(r.blocked_seconds, 0.0, "{r:?}");
        assert!(replay(&msgs, &fast, &sync).blocked_seconds > 0.0);
        // Slow summaries: the swap waits for the rest.
        let slow = settings(20_000, 1.0);
        assert!(replay(&msgs, &slow, &pre).blocked_seconds > 0.0);
    }

    /// A ready summary refused at the threshold (large turns since its cut) is brought up to
    /// date and swapped in, as the library's `Compactor` does: the conversation waits for the
    /// chained call (a wait, not a swap); nothing fails and the context stays near the
    /// threshold.
    #[test]
    fn a_refused_summary_is_caught_up_at_the_threshold_as_the_library_does() {
        let msgs = session(40, 2_000, &[]);
        let pre = policy(
            json!({"name": "pre", "compact": {"threshold": 20000, "preEmptive": true, "earlyAt": 6000}}),
        );
        let r = replay(&msgs, &settings(20_000, 1_000.0), &pre);
        assert!(r.caught_up >= 1, "{r:?}");
        assert!(r.caught_up <= r.refused_swaps, "{r:?}");
        assert_eq!(r.compactions, r.swaps + r.early_swaps + r.waits, "{r:?}");
        assert_eq!(r.failed_compactions, 0, "{r:?}");
        assert!(r.peak_context < 22_000, "{r:?}");
    }

    #[test]
    fn pre_emptive_summaries_follow_the_library_s_decisions() {
        let msgs = session(30, 1_000, &[]);
        let pre = policy(
            json!({"name": "pre", "compact": {"threshold": 20000, "preEmptive": true, "earlyAt": 12000}}),
        );
        let count = |r: &PolicyReport| r.swaps + r.early_swaps + r.waits;
        // Summaries written fast: each compaction is a swap, nobody waits.
        let fast = replay(&msgs, &settings(20_000, 1_000.0), &pre);
        assert!(fast.swaps + fast.early_swaps >= 1, "{fast:?}");
        assert_eq!((fast.waits, fast.blocked_seconds), (0, 0.0), "{fast:?}");
        assert_eq!(count(&fast), fast.compactions);
        assert!(fast.summary_calls >= fast.compactions);
        // Written so slowly that none is ready at the threshold: the library does not wait
        // for a summary still being written; today's path runs, and the user waits for it.
        let slow = replay(&msgs, &settings(20_000, 0.5), &pre);
        assert_eq!(
            slow.swaps + slow.early_swaps + slow.refused_swaps,
            0,
            "{slow:?}"
        );
        assert_eq!(slow.waits, slow.compactions);
        assert!(slow.blocked_seconds > 0.0);
        // Without an early line the library's automatic one applies: halfway between the
        // warning line and the threshold (here 10,000 and 20,000).
        let auto = replay(
            &msgs,
            &settings(20_000, 1_000.0),
            &policy(json!({"name": "auto", "compact": {"threshold": 20000, "preEmptive": true}})),
        );
        assert!(auto.swaps + auto.early_swaps >= 1, "{auto:?}");
        assert_eq!(auto.waits, 0);
    }

    #[test]
    fn a_swap_over_the_bound_is_refused_and_the_conversation_waits_for_today_s_path() {
        // 1,000-token reads, then one of 9,000 that crosses the threshold: the summary ready
        // then would keep it verbatim, far over 1.3x the synchronous context.
        let mut steps: Vec<(&str, &str, usize)> = vec![("Read", "/a.rs", 1_000); 14];
        steps.push(("Read", "/big.rs", 9_000));
        steps.extend([("Read", "/b.rs", 500); 3]);
        let msgs = session_of(&steps);
        let pre = policy(
            json!({"name": "pre", "compact": {"threshold": 20000, "preEmptive": true, "earlyAt": 12000}}),
        );
        let r = replay(&msgs, &settings(20_000, 1_000.0), &pre);
        assert!(r.refused_swaps >= 1, "{r:?}");
        assert!(r.waits >= 1 && r.blocked_seconds > 0.0, "{r:?}");
        // The same session without the large read: swapped in, no wait.
        let small: Vec<_> = steps.iter().map(|s| (s.0, s.1, s.2.min(1_000))).collect();
        let r = replay(&session_of(&small), &settings(20_000, 1_000.0), &pre);
        assert_eq!((r.refused_swaps, r.waits), (0, 0), "{r:?}");
    }

    #[test]
    fn a_file_not_restored_is_read_again_before_the_next_call_that_uses_it() {
        // Three files read, a compaction, then an edit of one of them and a read of another.
        let mut steps: Vec<(&str, &str, usize)> = vec![
            ("Read", "/a.rs", 3_000),
            ("Read", "/b.rs", 3_000),
            ("Read", "/c.rs", 3_000),
        ];
        steps.extend([("Bash", "", 1_000); 8]);
        steps.extend([
            ("Edit", "/a.rs", 50),
            ("Bash", "", 100),
            ("Read", "/b.rs", 3_000),
        ]);
        let msgs = session_of(&steps);
        let s = settings(15_000, 1_000.0);
        let restoring = replay(
            &msgs,
            &s,
            &policy(json!({"name": "restore", "compact": {"threshold": 15000}})),
        );
        assert!(restoring.compactions >= 1);
        assert_eq!(restoring.rereads, 0, "Claude Code's rules restore them");
        let none = replay(
            &msgs,
            &s,
            &policy(json!({"name": "none", "compact": {"threshold": 15000, "restoreBudget": 0}})),
        );
        assert!(none.compactions >= 1);
        // /a.rs before its edit, /b.rs before its read; /c.rs is never used again.
        assert_eq!(none.rereads, 2, "{none:?}");
        let per_file = none.reread_tokens / 2;
        assert!((2_000..4_000).contains(&per_file), "{none:?}");
        let without = {
            let t = build_timeline(&msgs).unwrap();
            let p = policy(
                json!({"name": "none", "compact": {"threshold": 15000, "restoreBudget": 0}}),
            );
            let mut run = Run::new(&t, &msgs, &s, &p).without_rereads();
            run.replay_policy(&[]);
            run.finish()
        };
        assert_eq!(without.rereads, 0);
        // Each re-read is a round trip more, and its file is read by every later request.
        assert_eq!(
            none.tokens.output,
            without.tokens.output + 2 * REREAD_OUTPUT_TOKENS
        );
        assert!(
            none.tokens.cache_read > without.tokens.cache_read + 6_000,
            "{none:?} {without:?}"
        );
        assert!(none.cost > without.cost, "{none:?} {without:?}");
        // The provider's compaction restores nothing: it re-reads too.
        let api = Policy {
            server: Some(ServerRule {
                clear_tool_uses: None,
                compact: Some(ServerCompact { trigger: 50_000 }),
            }),
            ..policy(json!({"name": "api"}))
        };
        let mut long = steps.clone();
        long.splice(3..3, [("Bash", "", 5_000); 9]);
        let r = replay(&session_of(&long), &s, &api);
        assert_eq!(r.compactions, 1);
        assert_eq!(r.rereads, 2, "{r:?}");
    }

    #[test]
    fn batched_clearing_pays_a_rewrite_only_for_a_large_enough_gain() {
        let msgs = session(20, 1_000, &[]);
        let s = settings(1_000_000, 50.0);
        let every =
            policy(json!({"name": "every", "microCompact": {"trigger": 5000, "keepRecent": 2}}));
        let batched = policy(
            json!({"name": "batched", "microCompact": {"trigger": 5000, "keepRecent": 2, "clearAtLeast": 6000}}),
        );
        let a = replay(&msgs, &s, &every);
        let b = replay(&msgs, &s, &batched);
        assert!(a.micro_compactions > b.micro_compactions, "{a:?} {b:?}");
        assert!(b.micro_compactions >= 1);
        // Fewer rewrites: less written.
        assert!(b.tokens.cache_write < a.tokens.cache_write, "{a:?} {b:?}");
    }

    #[test]
    fn clearing_when_the_cache_is_cold_writes_no_more_than_not_clearing() {
        let mut gaps = vec![5.0; 20];
        gaps[15] = 600.0; // 10 minutes: the 5-minute cache has expired.
        let msgs = session(20, 1_000, &gaps);
        let s = settings(1_000_000, 50.0);
        let cold = replay(
            &msgs,
            &s,
            &policy(json!({"name": "cold", "microCompact": {"whenCacheCold": true}})),
        );
        let none = replay(&msgs, &s, &policy(json!({"name": "none"})));
        assert_eq!(cold.micro_compactions, 1);
        assert!(
            cold.tokens.cache_write < none.tokens.cache_write,
            "{cold:?} {none:?}"
        );
        assert!(cold.cost < none.cost);
        // With a one-hour cache the same gap keeps it warm: nothing is cleared.
        let warm = replay(
            &msgs,
            &s,
            &policy(
                json!({"name": "cold1h", "ttl": "1h", "microCompact": {"whenCacheCold": true}}),
            ),
        );
        assert_eq!(warm.micro_compactions, 0);
    }

    #[test]
    fn the_api_clears_all_but_the_last_tool_uses_above_its_trigger() {
        let msgs = session(20, 1_000, &[]);
        let s = settings(1_000_000, 50.0);
        let p = Policy {
            server: Some(ServerRule {
                clear_tool_uses: Some(ClearToolUses {
                    trigger: 10_000,
                    keep: 3,
                    ..Default::default()
                }),
                compact: None,
            }),
            ..policy(json!({"name": "api"}))
        };
        let r = replay(&msgs, &s, &p);
        assert!(r.micro_compactions >= 1);
        // Every request above the trigger keeps only 3 results (about 3K) beyond the rest.
        assert!(r.peak_context < 10_000 + 2_000, "{r:?}");
        // clear_at_least larger than anything it could free: never applied.
        let mut q = p.clone();
        if let Some(ServerRule {
            clear_tool_uses: Some(c),
            ..
        }) = q.server.as_mut()
        {
            c.clear_at_least = 1_000_000;
        }
        assert_eq!(replay(&msgs, &s, &q).micro_compactions, 0);
    }

    #[test]
    fn the_api_compacts_inside_the_call_at_its_trigger() {
        let msgs = session(80, 1_000, &[]);
        let s = settings(1_000_000, 50.0);
        let p = Policy {
            server: Some(ServerRule {
                clear_tool_uses: None,
                compact: Some(ServerCompact { trigger: 50_000 }),
            }),
            ..policy(json!({"name": "api-compact"}))
        };
        let r = replay(&msgs, &s, &p);
        assert_eq!(r.compactions, 1, "{r:?}");
        assert!(r.peak_context < 52_000 + 2_000, "{r:?}");
        assert!(r.blocked_seconds > 0.0);
    }

    /// A chat without tools: `n` lines, user prompts of 100 tokens (by the estimate) and
    /// answers of 50, one call per answer, 5 s apart.
    fn chat(n: usize) -> Vec<Message> {
        (0..n)
            .map(|i| {
                let v = if i % 2 == 0 {
                    json!({"type": "user", "timestamp": ts(5.0 * i as f64),
                           "message": {"role": "user", "content": format!("{i} {}", "q".repeat(400))}})
                } else {
                    json!({"type": "assistant", "timestamp": ts(5.0 * i as f64),
                           "message": {"role": "assistant", "id": format!("m{i}"), "model": "claude-opus-4-6",
                             "content": [{"type": "text", "text": "x".repeat(200)}]}})
                };
                Message::from_value(v, "t").unwrap()
            })
            .collect()
    }

    #[test]
    fn a_thrashing_pause_does_not_hold_at_the_blocking_limit_as_the_library_s() {
        // Each call reads a 9,000-token file: every compaction is refilled within two
        // requests, and after three the pause starts. Paused for good, the context grew by
        // 9,000 tokens a request to the session's end (a Compactor's pause, since round 18,
        // holds below the blocking limit only).
        let s = settings(20_000, 1_000.0);
        let r = replay(
            &session(60, 9_000, &[]),
            &s,
            &builtin("claude-code").unwrap(),
        );
        assert_eq!(r.paused.as_deref(), Some("thrashing"), "{r:?}");
        let paused_at = r.paused_at_request.unwrap();
        assert!(paused_at < 30, "{r:?}");
        assert!(
            r.peak_context < s.blocking + 10_000,
            "peak {}",
            r.peak_context
        );
        assert!(r.compactions > 10, "{}", r.compactions);
    }

    #[test]
    fn a_summary_that_alone_fills_the_threshold_stops_automatic_compaction_as_the_library_does() {
        // Every user prompt is kept by the offline summary: past some length the summary
        // alone is over the threshold. The Compactor then fails three times in a row (or
        // detects thrashing first) and compacts no more; the replay did so at nearly every
        // request, writing the whole session's summary each time.
        let s = settings(20_000, 1_000.0);
        let cc = builtin("claude-code").unwrap();
        let short = replay(&chat(400), &s, &cc);
        let long = replay(&chat(1_600), &s, &cc);
        assert_eq!(long.requests, 800);
        assert!(long.paused.is_some(), "{long:?}");
        let at = long.paused_at_request.unwrap();
        assert!(at < 800, "{long:?}");
        // A few compactions (or failures) before the pause, none after it: the count does
        // not grow with the session.
        let attempts = |r: &PolicyReport| r.compactions + r.failed_compactions;
        assert!(attempts(&long) <= 40, "{long:?}");
        let longer = replay(&chat(3_200), &s, &cc);
        assert_eq!(attempts(&longer), attempts(&long), "{longer:?}");
        assert_eq!(longer.summary_calls, long.summary_calls);
        assert_eq!(longer.paused, long.paused);
        // Each failure was waited on and paid for, nothing committed.
        assert_eq!(long.waits, attempts(&long));
        assert_eq!(long.summary_calls, attempts(&long));
        // A session that never reaches that point compacts as before, and never stops.
        assert!(
            short.compactions >= 1 && short.paused.is_none(),
            "{short:?}"
        );
        assert_eq!(short.failed_compactions, 0);
    }

    #[test]
    fn three_failed_compactions_open_the_circuit_breaker() {
        // A threshold below what the summary of the first lines already holds: every
        // compaction fails; the third opens the breaker and no summary is written again.
        let mut s = settings(2_500, 1_000.0);
        s.summary_tokens = 5_000;
        let r = replay(
            &chat(200),
            &s,
            &policy(json!({"name": "low", "compact": {"threshold": 2500}})),
        );
        assert_eq!(r.compactions, 0, "{r:?}");
        assert_eq!(
            r.failed_compactions,
            u64::from(MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES)
        );
        assert_eq!(r.paused.as_deref(), Some("circuitBreakerOpen"), "{r:?}");
        assert_eq!(r.summary_calls, 3);
    }

    #[test]
    fn no_restored_files_means_a_smaller_context_after_compaction() {
        let msgs = session(30, 1_000, &[]);
        let s = settings(20_000, 50.0);
        let with = replay(
            &msgs,
            &s,
            &policy(json!({"name": "a", "compact": {"threshold": 20000}})),
        );
        let without = Policy {
            compact: Some(CompactRule {
                threshold: Some(20_000),
                restore_budget: Some(0),
                ..Default::default()
            }),
            ..policy(json!({"name": "b"}))
        };
        let without = replay(&msgs, &s, &without);
        assert!(
            without.mean_context < with.mean_context,
            "{with:?} {without:?}"
        );
    }
}
