//! The Compactor's rules, natively: a [`Session`] of typed messages driven the way the JS
//! `Compactor` drives its session, over the scripted environment of the test-support crate.

use serde_json::{json, Value};

use context_compaction::drive::autocompact::{
    auto_compact_if_needed, AutoCompactOutcome, ShouldAutoCompactOptions, SkipReason,
};
use context_compaction::drive::pipeline::{compact_conversation, CompactContext, CompactOptions};
use context_compaction::drive::retry::RetryPolicy;
use context_compaction::drive::session::Session;
use context_compaction::measure::thresholds;
use context_compaction::measure::tokens::token_count_with_estimation;
use context_compaction::model::config::Config;
use context_compaction::model::error::{Error, ErrorCode, Result};
use context_compaction::model::messages::{Kind, Message};
use context_compaction::model::view::{ContentInfo, ConversationView, Detail, UsageCounts};
use context_compaction::summarize::summary::SummaryResponse;
use context_compaction::transforms::boundary::Trigger;
use context_compaction_test_support::env::{block_on, transcript, Scripted};

const OPUS: &str = "claude-opus-4-6";

/// Auto-compact threshold 9,000 tokens for Opus.
fn low() -> Config {
    Config {
        auto_compact_pct_override: Some(5.0),
        ..Default::default()
    }
}

fn session(config: Config) -> Session<Message> {
    Session::new(OPUS.into(), config)
}

fn parse(v: Value) -> Vec<Message> {
    Message::parse_all(v).unwrap()
}

/// One API round: a request, a Read call and its result of `chars` characters (about
/// `chars / 4` tokens), ids prefixed with `p`.
fn round(p: &str, chars: usize) -> Vec<Message> {
    parse(json!([
        {"role": "user", "content": format!("{p} please read the file")},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": format!("{p}_t"), "name": "Read", "input": {"file_path": format!("/{p}.rs")}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("{p}_t"), "content": "x ".repeat(chars / 2)}]}
    ]))
}

fn rounds(n: usize, chars: usize) -> Vec<Message> {
    (0..n)
        .flat_map(|r| round(&format!("r{r}"), chars))
        .collect()
}

fn push(s: &mut Session<Message>, msgs: &[Message]) {
    s.push_all(msgs, |v, i| v[i].clone()).unwrap();
}

fn batch_count(s: &Session<Message>) -> u64 {
    token_count_with_estimation(s.messages()).unwrap().total
}

fn summary_of(text: &str, stop: &str) -> Scripted {
    let (text, stop) = (text.to_string(), stop.to_string());
    Scripted::new(Box::new(move |_, _| {
        Ok(SummaryResponse {
            text: format!("<summary>{text}</summary>"),
            stop_reason: Some(stop.clone()),
            usage: None,
            compaction: None,
            problem: None,
        })
    }))
}

fn context(s: &Session<Message>) -> CompactContext {
    CompactContext {
        model: s.model().into(),
        config: s.config().clone(),
        ..Default::default()
    }
}

/// `maybeAutoCompact` as the bindings run it; `during` runs while the compaction is in
/// progress (after the snapshot, before the summarizer answers).
fn maybe_auto_compact_with(
    s: &mut Session<Message>,
    env: &Scripted,
    during: impl FnOnce(&mut Session<Message>),
) -> AutoCompactOutcome {
    let query = ShouldAutoCompactOptions::default();
    if let Some(skipped) = s.check_auto_compact(&query) {
        return skipped;
    }
    let (c, input) = s.begin(Trigger::Auto, |m| Ok(m.to_vec())).unwrap();
    assert_eq!(c.trigger(), Trigger::Auto);
    assert!(s.compacting());
    during(s);
    let ctx = context(s);
    let tracking = s.tracking().clone();
    let outcome = block_on(auto_compact_if_needed(
        &input,
        &ctx,
        &tracking,
        &query,
        &RetryPolicy::with_base_ms(0),
        env,
    ))
    .unwrap();
    if let Some(c) = s.auto_finished(c, &outcome) {
        let post = outcome
            .result
            .as_ref()
            .unwrap()
            .post_compact_messages(&input);
        s.commit(c, Ok(post.as_slice()), |v, i| v[i].clone())
            .unwrap();
    }
    assert!(!s.compacting());
    outcome
}

fn maybe_auto_compact(s: &mut Session<Message>, env: &Scripted) -> AutoCompactOutcome {
    maybe_auto_compact_with(s, env, |_| {})
}

/// `compact()` as the bindings run it.
fn compact(
    s: &mut Session<Message>,
    env: &Scripted,
    during: impl FnOnce(&mut Session<Message>),
) -> Result<Vec<Message>> {
    let (c, input) = s.begin(Trigger::Manual, |m| Ok(m.to_vec()))?;
    during(s);
    let opts = CompactOptions {
        retry: RetryPolicy::with_base_ms(0),
        ..Default::default()
    };
    match block_on(compact_conversation(&input, &context(s), &opts, env)) {
        Ok(r) => {
            let post = r.post_compact_messages(&input);
            s.commit(c, Ok(post.as_slice()), |v, i| v[i].clone())?;
            Ok(post)
        }
        Err(e) => {
            s.abandon(c);
            Err(e.error)
        }
    }
}

/// Sets the session's failure count as an automatic compaction that reports `failures`
/// failures in a row does (through [`Session::auto_finished`]), with nothing else changed.
fn set_consecutive_failures(s: &mut Session<Message>, failures: u32) {
    let (c, ()) = s.begin(Trigger::Auto, |_| Ok(())).unwrap();
    let reported = AutoCompactOutcome::skipped(SkipReason::BelowThreshold, failures);
    assert!(s.auto_finished(c, &reported).is_none());
    assert_eq!(s.tracking().consecutive_failures, failures);
    assert!(!s.compacting());
}

#[test]
fn running_count_equals_the_batch_count() {
    let mut s = session(Config::default());
    assert_eq!((s.len(), s.token_count()), (0, 0));
    assert!(s.is_empty());
    // Transcript lines one by one, then in batches.
    let lines = transcript(8, 2_000);
    for m in &lines {
        push(&mut s, std::slice::from_ref(m));
        assert_eq!(s.token_count(), batch_count(&s));
    }
    let mut api = session(Config::default());
    let msgs = rounds(5, 1_000);
    push(&mut api, &msgs[..4]);
    push(&mut api, &msgs[4..]);
    assert_eq!(api.token_count(), batch_count(&api));
    // A response with usage anchors the count; what follows is estimated.
    let more = parse(json!([
        {"role": "assistant", "content": "with usage", "usage": {"input_tokens": 50_000, "output_tokens": 10}},
        {"role": "user", "content": "x".repeat(400)}
    ]));
    push(&mut api, &more[..1]);
    assert_eq!(api.token_count(), 50_010);
    push(&mut api, &more[1..]);
    assert_eq!(api.token_count(), 50_110);
    assert_eq!(api.token_count(), batch_count(&api));
    assert_eq!(api.messages().len(), msgs.len() + 2);
}

/// Messages of which message `bad` cannot be read (as a malformed JS object would be).
struct Unreadable<'a> {
    messages: &'a [Message],
    bad: usize,
}

impl ConversationView for Unreadable<'_> {
    fn len(&self) -> usize {
        self.messages.len()
    }
    fn kind(&self, i: usize) -> Result<Kind> {
        if i == self.bad {
            return Err(Error::invalid_message("unreadable").at(format!("messages[{i}]")));
        }
        self.messages.kind(i)
    }
    fn is_transcript(&self, i: usize) -> bool {
        self.messages.is_transcript(i)
    }
    fn usage(&self, i: usize) -> Result<Option<UsageCounts>> {
        self.messages.usage(i)
    }
    fn message_id(&self, i: usize) -> Option<String> {
        self.messages.message_id(i)
    }
    fn usage_is_partial(&self, i: usize) -> bool {
        self.messages.usage_is_partial(i)
    }
    fn is_sidechain(&self, i: usize) -> bool {
        self.messages.is_sidechain(i)
    }
    fn is_compact_boundary(&self, i: usize) -> bool {
        self.messages.is_compact_boundary(i)
    }
    fn boundary_kept(&self, i: usize) -> usize {
        self.messages.boundary_kept(i)
    }
    fn attachment_type(&self, i: usize) -> Option<String> {
        self.messages.attachment_type(i)
    }
    fn timestamp(&self, i: usize) -> Option<String> {
        self.messages.timestamp(i)
    }
    fn uuid(&self, i: usize) -> Option<String> {
        self.messages.uuid(i)
    }
    fn content_equals(&self, i: usize, text: &str) -> bool {
        self.messages.content_equals(i, text)
    }
    fn content(&self, i: usize, detail: Detail) -> Result<ContentInfo> {
        self.messages.content(i, detail)
    }
}

#[test]
fn a_malformed_batch_adds_nothing() {
    let mut s = session(Config::default());
    push(&mut s, &rounds(2, 400));
    let (len, count) = (s.len(), s.token_count());
    let batch = rounds(2, 400);
    for bad in [0, 3, 5] {
        let view = Unreadable {
            messages: &batch,
            bad,
        };
        let err = s.push_all(&view, |v, i| v.messages[i].clone()).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidMessage);
        assert_eq!((s.len(), s.token_count()), (len, count));
    }
}

#[test]
fn a_result_that_cannot_be_read_back_leaves_the_conversation() {
    let env = Scripted::summary("summary");
    let mut s = session(Config::default());
    let input = rounds(6, 4_000);
    push(&mut s, &input);
    let (c, typed) = s.begin(Trigger::Auto, |m| Ok(m.to_vec())).unwrap();
    let late = round("late", 400);
    push(&mut s, &late);
    let opts = CompactOptions::default();
    let r = block_on(compact_conversation(&typed, &context(&s), &opts, &env)).unwrap();
    let post = r.post_compact_messages(&typed);
    let view = Unreadable {
        messages: &post,
        bad: 1,
    };
    let err = s
        .commit(c, Ok(&view), |v, i| v.messages[i].clone())
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidMessage);
    assert!(err.message.contains("could not be read back"), "{err:?}");
    assert!(!s.compacting());
    assert_eq!(&s.messages()[..input.len()], input.as_slice());
    assert_eq!(&s.messages()[input.len()..], late.as_slice());
    assert_eq!(s.token_count(), batch_count(&s));
    assert!(!s.thrashing());
}

#[test]
fn warning_state_follows_the_running_count() {
    for config in [Config::default(), low()] {
        let mut s = session(config.clone());
        for r in 0..6 {
            push(&mut s, &round(&format!("w{r}"), 8_000));
            assert_eq!(
                s.warning_state(),
                thresholds::token_warning_state(batch_count(&s), OPUS, &config)
            );
        }
    }
    assert_eq!(session(Config::default()).warning_state().percent_left, 100);
}

#[test]
fn below_the_threshold_nothing_is_attempted() {
    let env = Scripted::summary("never");
    let mut s = session(Config::default());
    let msgs = rounds(4, 400);
    push(&mut s, &msgs);
    let out = maybe_auto_compact(&mut s, &env);
    assert_eq!(out.skipped, Some(SkipReason::BelowThreshold));
    assert!(!out.was_compacted && out.error.is_none() && out.consecutive_failures == 0);
    assert!(env.requests.borrow().is_empty());
    assert_eq!(s.messages(), msgs.as_slice());
}

#[test]
fn an_auto_compaction_replaces_the_history_and_the_count_drops() {
    let env = Scripted::summary("what happened so far");
    let mut s = session(low());
    push(&mut s, &rounds(12, 4_000));
    let pre = s.token_count();
    let out = maybe_auto_compact(&mut s, &env);
    assert!(out.was_compacted, "{:?}", out.error);
    let r = out.result.as_ref().unwrap();
    assert_eq!(r.pre_compact_token_count, pre);
    assert_eq!(s.token_count(), r.true_post_compact_token_count);
    assert_eq!(s.token_count(), batch_count(&s));
    assert!(s.token_count() < pre / 3);
    assert_eq!(env.requests.borrow().len(), 1);
    assert_eq!(s.tracking().consecutive_failures, 0);
    assert!(!s.thrashing());
}

#[test]
fn messages_pushed_during_an_auto_compaction_follow_the_result_in_order() {
    let env = Scripted::summary("summary");
    let mut s = session(low());
    let input = rounds(12, 4_000);
    push(&mut s, &input);
    let meanwhile = parse(json!([
        {"role": "user", "content": "pushed while compacting (1)"},
        {"role": "assistant", "content": [{"type": "text", "text": "pushed while compacting (2)"}]},
        {"role": "user", "content": "pushed while compacting (3)"}
    ]));
    let out = maybe_auto_compact_with(&mut s, &env, |s| {
        push(s, &meanwhile[..1]);
        push(s, &meanwhile[1..]);
        assert_eq!(s.len(), input.len() + 3, "pushes are held at once");
        // One compaction at a time.
        let again = s.check_auto_compact(&Default::default()).expect("skipped");
        assert_eq!(again.skipped, Some(SkipReason::Compacting));
        assert!(s.begin(Trigger::Manual, |_| Ok(())).is_err());
    });
    assert!(out.was_compacted, "{:?}", out.error);
    let post = out.result.as_ref().unwrap().post_compact_messages(&input);
    assert_eq!(s.len(), post.len() + 3, "none lost, none duplicated");
    assert_eq!(&s.messages()[..post.len()], post.as_slice());
    assert_eq!(&s.messages()[post.len()..], meanwhile.as_slice());
    assert_eq!(s.token_count(), batch_count(&s));
    assert_eq!(env.requests.borrow().len(), 1);
}

#[test]
fn messages_pushed_during_a_manual_compaction_follow_the_result_in_order() {
    let env = Scripted::summary("summary");
    let mut s = session(Config::default());
    push(&mut s, &rounds(6, 4_000));
    let meanwhile = rounds(2, 400);
    let post = compact(&mut s, &env, |s| push(s, &meanwhile)).unwrap();
    assert_eq!(&s.messages()[..post.len()], post.as_slice());
    assert_eq!(&s.messages()[post.len()..], meanwhile.as_slice());
    assert_eq!(s.token_count(), batch_count(&s));
    assert!(!s.compacting());
}

#[test]
fn a_failed_compaction_leaves_the_conversation_and_keeps_pushes() {
    // Automatic: reported in the outcome, counted.
    let env = summary_of("cut", "max_tokens");
    let mut s = session(low());
    let input = rounds(12, 4_000);
    push(&mut s, &input);
    let count = s.token_count();
    let late = round("late", 400);
    let out = maybe_auto_compact_with(&mut s, &env, |s| push(s, &late));
    assert!(!out.was_compacted);
    assert_eq!(
        out.error.as_ref().unwrap().error.code,
        ErrorCode::SummaryTruncated
    );
    assert_eq!(out.consecutive_failures, 1);
    assert_eq!(s.tracking().consecutive_failures, 1);
    assert_eq!(&s.messages()[..input.len()], input.as_slice());
    assert_eq!(&s.messages()[input.len()..], late.as_slice());
    assert!(s.token_count() > count);
    assert_eq!(s.token_count(), batch_count(&s));
    // Manual: an error, the conversation unchanged, the failure not counted.
    let before = s.messages().to_vec();
    let err = compact(&mut s, &env, |_| {}).unwrap_err();
    assert_eq!(err.code, ErrorCode::SummaryTruncated);
    assert_eq!(s.messages(), before.as_slice());
    assert_eq!(s.tracking().consecutive_failures, 1);
    assert!(!s.compacting());
}

#[test]
fn the_circuit_breaker_opens_after_three_failures() {
    let env = summary_of("cut", "max_tokens");
    let mut s = session(low());
    let msgs = rounds(12, 4_000);
    push(&mut s, &msgs);
    let count = s.token_count();
    for i in 1..=3 {
        let out = maybe_auto_compact(&mut s, &env);
        assert_eq!(out.error.unwrap().error.code, ErrorCode::SummaryTruncated);
        assert_eq!(
            (out.consecutive_failures, s.tracking().consecutive_failures),
            (i, i)
        );
        assert!(!s.thrashing());
    }
    let fourth = maybe_auto_compact(&mut s, &env);
    assert_eq!(fourth.skipped, Some(SkipReason::CircuitBreakerOpen));
    assert_eq!(fourth.consecutive_failures, 3);
    assert!(fourth.error.is_none());
    assert_eq!(env.requests.borrow().len(), 3);
    assert_eq!(s.token_count(), count);
    assert_eq!(s.messages(), msgs.as_slice());
    // A manual compaction is still allowed, and its success closes the breaker: automatic
    // compaction runs again when due (it stayed off for good before).
    let ok = Scripted::summary("fine");
    compact(&mut s, &ok, |_| {}).unwrap();
    assert_eq!(s.tracking().consecutive_failures, 0);
    push(&mut s, &rounds(12, 4_000));
    let again = maybe_auto_compact(&mut s, &ok);
    assert!(again.was_compacted, "{:?}", again.skipped);
}

#[test]
fn a_result_not_below_the_threshold_is_a_failure_and_counts_towards_the_breaker() {
    // About 12,000 tokens of summary: smaller than the 40,000 before, above the 9,000
    // threshold.
    let env = summary_of(&"word ".repeat(9_600), "end_turn");
    let mut s = session(low());
    let msgs = rounds(10, 16_000);
    push(&mut s, &msgs);
    for i in 1..=3 {
        let out = maybe_auto_compact(&mut s, &env);
        assert!(!out.was_compacted);
        assert_eq!(
            out.error.unwrap().error.code,
            ErrorCode::CompactionNotSmaller
        );
        assert_eq!(out.consecutive_failures, i);
    }
    let open = maybe_auto_compact(&mut s, &env);
    assert_eq!(open.skipped, Some(SkipReason::CircuitBreakerOpen));
    assert_eq!(env.requests.borrow().len(), 3);
    assert_eq!(s.messages(), msgs.as_slice());
}

#[test]
fn thrashing_is_detected_reported_and_reset_by_a_manual_compaction() {
    let env = Scripted::summary("short summary");
    let mut s = session(low());
    let mut outcomes = Vec::new();
    for turn in 0..8 {
        // About 10,000 tokens a turn: above the 9,000 threshold at once after each compaction.
        push(&mut s, &round(&format!("t{turn}"), 40_000));
        outcomes.push(maybe_auto_compact(&mut s, &env));
    }
    let at = outcomes
        .iter()
        .position(|o| o.skipped == Some(SkipReason::Thrashing))
        .expect("thrashing never reported");
    let compactions = outcomes[..at].iter().filter(|o| o.was_compacted).count();
    assert_eq!(compactions, 4, "the first and three rapid refills after it");
    let o = &outcomes[at];
    assert!(!o.was_compacted);
    let e = &o.error.as_ref().expect("the skip carries an error").error;
    assert_eq!(e.code, ErrorCode::Thrashing);
    assert!(e.message.contains("refilled") && e.message.contains('3'));
    assert!(s.thrashing());
    assert!(outcomes[at..].iter().all(|o| !o.was_compacted));
    assert_eq!(env.requests.borrow().len(), compactions);
    // A manual compaction resets the detection; automatic compaction runs again when due.
    compact(&mut s, &env, |_| {}).unwrap();
    assert!(!s.thrashing());
    let below = maybe_auto_compact(&mut s, &env);
    assert_eq!(below.skipped, Some(SkipReason::BelowThreshold));
    push(&mut s, &round("after", 40_000));
    assert!(maybe_auto_compact(&mut s, &env).was_compacted);
}

#[test]
fn sessions18_a_thrashing_pause_does_not_hold_at_the_blocking_limit() {
    // A 32K window with 4K of output: threshold 15,000, blocking limit 25,000. Turns of about
    // 7,000 tokens refill the context within 3 turns after each compaction: paused.
    let config = Config {
        context_window: Some(32_000.0),
        max_output_tokens: Some(4_000.0),
        ..Default::default()
    };
    let (threshold, blocking) = (
        thresholds::auto_compact_threshold(OPUS, &config),
        thresholds::blocking_limit(OPUS, &config),
    );
    assert_eq!((threshold, blocking), (15_000, 25_000));
    let env = Scripted::summary("short summary");
    let mut s = session(config);
    let mut turn = 0;
    while !s.thrashing() {
        assert!(turn < 40, "thrashing never detected");
        push(&mut s, &round(&format!("t{turn}"), 28_000));
        maybe_auto_compact(&mut s, &env);
        turn += 1;
    }
    // Paused: above the threshold, below the blocking limit, nothing is compacted.
    let calls = env.requests.borrow().len();
    let mut skipped = 0;
    while s.token_count() < blocking {
        if s.token_count() >= threshold {
            let o = maybe_auto_compact(&mut s, &env);
            assert_eq!(o.skipped, Some(SkipReason::Thrashing));
            let e = &o.error.as_ref().expect("the skip carries an error").error;
            assert!(e.message.contains("blocking limit"), "{}", e.message);
            skipped += 1;
        }
        push(&mut s, &round(&format!("t{turn}"), 28_000));
        turn += 1;
    }
    assert!(skipped >= 1);
    assert_eq!(env.requests.borrow().len(), calls);
    // At the blocking limit the next request would be refused: the pause does not hold
    // (snap20: skipped as thrashing at every turn, the context grew past the window).
    let o = maybe_auto_compact(&mut s, &env);
    assert!(o.was_compacted, "{:?}", o.skipped);
    assert!(s.token_count() < threshold);
    assert_eq!(env.requests.borrow().len(), calls + 1);
    // Still paused below the blocking limit.
    assert!(s.thrashing());
    push(&mut s, &round("again", 60_000));
    assert!(s.token_count() >= threshold && s.token_count() < blocking);
    assert_eq!(
        maybe_auto_compact(&mut s, &env).skipped,
        Some(SkipReason::Thrashing)
    );
}

#[test]
fn compactions_spaced_more_than_three_turns_apart_are_not_thrashing() {
    let env = Scripted::summary("short summary");
    let mut s = session(low());
    let mut compactions = 0;
    for turn in 0..40 {
        // About 1,100 tokens a turn.
        push(&mut s, &round(&format!("s{turn}"), 4_400));
        let o = maybe_auto_compact(&mut s, &env);
        assert_ne!(o.skipped, Some(SkipReason::Thrashing), "turn {turn}");
        compactions += usize::from(o.was_compacted);
    }
    assert!(compactions >= 3, "{compactions} compactions");
    assert!(!s.thrashing());
}

#[test]
fn disabled_auto_compaction_never_runs_but_manual_compaction_does() {
    let configs = [
        Config {
            disable_auto_compact: Some(true),
            ..low()
        },
        Config {
            disable_compact: Some(true),
            ..low()
        },
        Config {
            auto_compact_enabled: Some(false),
            ..low()
        },
    ];
    for config in configs {
        let env = Scripted::summary("never");
        let mut s = session(config.clone());
        for turn in 0..20 {
            push(&mut s, &round(&format!("d{turn}"), 4_000));
            let o = maybe_auto_compact(&mut s, &env);
            assert_eq!(o.skipped, Some(SkipReason::Disabled), "{config:?}");
            assert!(!o.was_compacted && o.error.is_none());
        }
        assert!(s.token_count() > thresholds::auto_compact_threshold(OPUS, &config));
        assert!(env.requests.borrow().is_empty());
        let manual = compact(&mut s, &env, |_| {});
        if config.disable_compact == Some(true) {
            assert!(manual.is_err(), "compaction is off altogether");
        } else {
            manual.unwrap();
            assert_eq!(env.requests.borrow().len(), 1);
        }
    }
}

#[test]
fn the_checks_are_those_of_auto_compact_if_needed_in_their_order() {
    // Reactive-only and context-collapse modes are reported as such (as by
    // `autoCompactIfNeeded`).
    for (config, why) in [
        (
            Config {
                reactive_only: Some(true),
                ..low()
            },
            SkipReason::ReactiveOnly,
        ),
        (
            Config {
                context_collapse: Some(true),
                ..low()
            },
            SkipReason::ContextCollapse,
        ),
    ] {
        let mut s = session(config);
        push(&mut s, &rounds(12, 4_000));
        assert_eq!(
            s.check_auto_compact(&Default::default()).unwrap().skipped,
            Some(why)
        );
    }
    // The same answer as the stateless driver, for every guard and every query: the
    // compaction's own requests and context collapse's are skipped, and tokens freed by
    // snipping are taken off the count (the rounds less 40K are below the threshold).
    let env = summary_of("cut", "max_tokens");
    let queries = [
        ShouldAutoCompactOptions::default(),
        ShouldAutoCompactOptions {
            query_source: Some("compact".into()),
            snip_tokens_freed: 0,
            ..Default::default()
        },
        ShouldAutoCompactOptions {
            query_source: Some("session_memory".into()),
            snip_tokens_freed: 0,
            ..Default::default()
        },
        ShouldAutoCompactOptions {
            query_source: Some("repl_main_thread".into()),
            snip_tokens_freed: 40_000,
            ..Default::default()
        },
    ];
    for (failures, query) in [0, 3]
        .into_iter()
        .flat_map(|f| queries.iter().map(move |q| (f, q)))
    {
        for config in [
            low(),
            Config {
                disable_compact: Some(true),
                ..low()
            },
            Config {
                disable_auto_compact: Some(true),
                ..low()
            },
            Config {
                reactive_only: Some(true),
                ..low()
            },
        ] {
            let mut s = session(config.clone());
            let msgs = rounds(12, 4_000);
            push(&mut s, &msgs);
            set_consecutive_failures(&mut s, failures);
            let ours = s.check_auto_compact(query).map(|o| o.skipped);
            let tracking = s.tracking().clone();
            let theirs = block_on(auto_compact_if_needed(
                &msgs,
                &context(&s),
                &tracking,
                query,
                &RetryPolicy::with_base_ms(0),
                &env,
            ))
            .unwrap()
            .skipped;
            match ours {
                Some(why) => assert_eq!(
                    why, theirs,
                    "{config:?} {query:?} after {failures} failures"
                ),
                None => assert_eq!(theirs, None),
            }
        }
    }
}

/// Usage given for the latest response anchors the running count exactly as the stateless
/// count with the same usage does; the preamble counts only while nothing anchors.
#[test]
fn given_usage_and_the_preamble_match_the_stateless_count() {
    use context_compaction::measure::tokens::{
        token_count_given, with_preamble, GivenUsage, Preamble,
    };
    let mut s = session(Config::default());
    let preamble = Preamble {
        system_units: 8_000,
        tools_units: 6_000,
    };
    s.set_preamble(Some(preamble));
    let msgs = rounds(3, 4_000);
    push(&mut s, &msgs);
    let plain = token_count_with_estimation(msgs.as_slice()).unwrap().total;
    assert_eq!(
        s.token_count(),
        plain + 2_000 + 3_000,
        "estimated: the preamble counts"
    );
    let usage = UsageCounts {
        input_tokens: 30_000,
        output_tokens: 200,
        ..Default::default()
    };
    // The latest response is the last Read call; its result follows it.
    s.set_usage(usage).unwrap();
    let last_assistant = (0..msgs.len())
        .rev()
        .find(|&i| msgs[i].kind() == Kind::Assistant)
        .unwrap();
    let given = token_count_given(
        msgs.as_slice(),
        Some(GivenUsage {
            at: Some(last_assistant),
            usage,
        }),
    )
    .unwrap();
    let stateless = with_preamble(given, Some(preamble)).total;
    assert_eq!(s.token_count(), stateless);
    assert!(
        s.token_count() > 30_000,
        "anchored: usage plus what follows, no preamble"
    );
    // Later pushes are estimated on top of the anchor.
    let more = round("next", 2_000);
    push(&mut s, &more);
    let mut all = msgs.clone();
    all.extend(more.iter().cloned());
    let given = token_count_given(
        all.as_slice(),
        Some(GivenUsage {
            at: Some(last_assistant),
            usage,
        }),
    )
    .unwrap();
    assert_eq!(s.token_count(), given.total);
}

#[test]
fn usage_needs_a_response_to_belong_to() {
    let mut s = session(Config::default());
    let usage = UsageCounts {
        input_tokens: 10,
        ..Default::default()
    };
    let e = s.set_usage(usage).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
    push(&mut s, &parse(json!([{"role": "user", "content": "hi"}])));
    assert!(s.set_usage(usage).is_err(), "a user message is no response");
    push(
        &mut s,
        &parse(json!([{"role": "assistant", "content": "hello"}])),
    );
    s.set_usage(usage).unwrap();
    assert_eq!(s.token_count(), 10);
}

/// `n` rounds whose responses carry the usage a provider reports when every request also
/// sends `overhead` tokens (system prompt, tools) and the messages weigh `ratio` times their
/// estimate.
fn rounds_with_usage(n: usize, chars: usize, overhead: u64, ratio: f64) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for r in 0..n {
        let mut round = round(&format!("r{r}"), chars);
        out.push(round.remove(0));
        // Before any usage the count is the estimate itself; after, the estimate is rebuilt
        // from the messages (usage removed) so the usage follows the line exactly.
        let plain: Vec<Message> = out
            .iter()
            .map(|m| {
                let mut v = m.to_value();
                if let Some(o) = v.as_object_mut() {
                    o.remove("usage");
                }
                Message::from_value(v, "test").unwrap()
            })
            .collect();
        let estimated = token_count_with_estimation(plain.as_slice())
            .unwrap()
            .estimated;
        let mut reply = round.remove(0).to_value();
        reply["usage"] = json!({
            "input_tokens": overhead + (ratio * estimated as f64).round() as u64,
            "output_tokens": 30
        });
        out.push(Message::from_value(reply, "test").unwrap());
        out.extend(round);
    }
    out
}

/// The count where no usage anchors it (right after a compaction) is the line the usage seen
/// before teaches: the first request after a compaction counts the system prompt and tools.
/// It survives the compaction, a snapshot and its restore over the compacted messages.
#[test]
fn the_count_after_a_compaction_is_learned_from_the_usage_seen() {
    let (overhead, ratio) = (20_000u64, 1.25);
    let mut s = session(Config::default());
    push(&mut s, &rounds_with_usage(12, 2_000, overhead, ratio));
    let fit = s.calibration().fit().unwrap();
    assert_eq!(fit.observations, 12);
    assert!((fit.ratio - ratio).abs() < 0.01, "{fit:?}");
    assert!((fit.overhead - overhead as f64).abs() < 50.0, "{fit:?}");

    let post = compact(&mut s, &summary_of("the work so far", "end_turn"), |_| {}).unwrap();
    let raw = token_count_with_estimation(post.as_slice()).unwrap();
    assert!(
        raw.anchor.is_none() && !raw.calibrated,
        "nothing to learn from in the API messages alone"
    );
    let expected = overhead + (ratio * raw.estimated as f64).round() as u64;
    let counted = s.token_count();
    assert!(
        counted.abs_diff(expected) <= 2,
        "counted {counted}, the line gives {expected} (estimate alone {})",
        raw.estimated
    );
    assert_eq!(
        s.calibration().observations().len(),
        12,
        "the compaction keeps what was learned"
    );

    // A snapshot carries it: restored over the compacted messages, the same count.
    let snap = s.snapshot();
    let mut back = session(Config::default());
    back.restore(&snap, post.as_slice(), |v, i| v[i].clone())
        .unwrap();
    assert_eq!(back.token_count(), counted);
    assert_eq!(back.calibration(), s.calibration());
    let json = snap.to_json();
    assert_eq!(json["calibration"].as_array().unwrap().len(), 12);

    // The next response's usage anchors the count again, and is learned too.
    let mut next = rounds_with_usage(1, 400, overhead, ratio);
    next[1] = {
        let mut v = next[1].to_value();
        v["usage"] = json!({"input_tokens": 31_000, "output_tokens": 30});
        Message::from_value(v, "test").unwrap()
    };
    push(&mut s, &next[..2]);
    assert_eq!(s.token_count(), 31_030);
    assert_eq!(s.calibration().observations().len(), 13);
}

/// Micro-compacted after the usage was reported (SPEC §10): the usage measured the results,
/// the estimate sees the placeholder. The line is the one of the usage made before the first
/// cleared result; every observation is kept, through a recount, the compaction, a snapshot
/// and its restore.
#[test]
fn the_count_after_a_compaction_of_a_micro_compacted_conversation_keeps_the_overhead() {
    use context_compaction::transforms::microcompact::{micro_compact, MicroCompactOptions};
    let (overhead, ratio) = (20_000u64, 1.25);
    let full = rounds_with_usage(12, 8_000, overhead, ratio);
    let plan = micro_compact(full.as_slice(), &MicroCompactOptions::default()).unwrap();
    assert_eq!(plan.cleared_results.len(), 7);
    let msgs = context_compaction::model::view::apply_edits(&full, &plan.edits).unwrap();
    let mut s = session(Config::default());
    push(&mut s, &msgs);
    assert_eq!(s.calibration().observations().len(), 12);
    assert_eq!(
        s.calibration().observations_clean().map(|o| o.len()),
        Some(1)
    );
    let fit = s.calibration().fit().unwrap();
    assert!((fit.overhead - overhead as f64).abs() < 50.0, "{fit:?}");
    // Read again, the same.
    let learned = s.calibration().clone();
    s.recount(msgs.as_slice()).unwrap();
    assert_eq!(s.calibration(), &learned);

    let post = compact(&mut s, &summary_of("the work so far", "end_turn"), |_| {}).unwrap();
    let raw = token_count_with_estimation(post.as_slice()).unwrap();
    let line = overhead + (ratio * raw.estimated as f64).round() as u64;
    let counted = s.token_count();
    // Within 5 % of the line (before: the bare estimate).
    assert!(
        counted.abs_diff(line) * 20 <= line,
        "counted {counted}, the line gives {line} (estimate alone {})",
        raw.estimated
    );
    let snap = s.snapshot();
    let json = snap.to_json();
    assert_eq!(json["calibration"].as_array().unwrap().len(), 12);
    assert_eq!(json["calibrationClean"].as_array().unwrap().len(), 1);
    let mut back = session(Config::default());
    back.restore(&snap, post.as_slice(), |v, i| v[i].clone())
        .unwrap();
    assert_eq!(back.token_count(), counted);
    assert_eq!(back.calibration(), s.calibration());
}

/// Before any usage there is nothing to learn: the estimate, plus the system prompt and tools
/// when given. One usage of a first request gives the overhead alone; a few, as the
/// conversation grows, give the line.
#[test]
fn the_usage_of_a_growing_conversation_teaches_the_overhead() {
    let mut s = session(Config::default());
    let msgs = rounds_with_usage(4, 8_000, 26_000, 1.0);
    push(&mut s, &msgs[..1]);
    assert!(s.calibration().is_empty());
    let alone = s.token_count();
    s.set_preamble(Some(context_compaction::measure::tokens::Preamble {
        system_units: 40_000,
        tools_units: 0,
    }));
    assert_eq!(s.token_count(), alone + 10_000);
    push(&mut s, &msgs[1..3]);
    assert_eq!(s.calibration().observations().len(), 1);
    // One observation cannot tell the overhead from the ratio; but its messages are a small
    // part of it (a first request), so the rest is taken as the overhead, at ratio 1.
    assert_eq!(
        s.calibration().fit(),
        Some(context_compaction::measure::calibration::Fit {
            overhead: 26_000.0,
            ratio: 1.0,
            observations: 1
        }),
    );
    push(&mut s, &msgs[3..]);
    let fit = s.calibration().fit().unwrap();
    assert_eq!(fit.observations, 4);
    assert!(
        (fit.ratio - 1.0).abs() < 0.01 && (fit.overhead - 26_000.0).abs() < 50.0,
        "{fit:?}"
    );
}

/// A short session whose overhead (system prompt and tools, taught by its first request's
/// usage) is itself past a low threshold: the real usage makes it due and it compacts once;
/// right after, the count is that overhead and the summary, still past the threshold, and no
/// second compaction is attempted (it could not get below); the next response's usage makes
/// it due again. Under a threshold above the overhead the count after is below it.
#[test]
fn no_compaction_again_when_the_overhead_alone_is_past_the_threshold() {
    // Threshold 9,000 (low()), overhead 26,000 learned from one first request.
    let msgs = rounds_with_usage(1, 400, 26_000, 1.0);
    let mut s = session(low());
    push(&mut s, &msgs);
    assert!(s.token_count() > 26_000, "{}", s.token_count());
    let env = summary_of("nothing much", "end_turn");
    let out = maybe_auto_compact(&mut s, &env);
    assert!(out.was_compacted, "{out:?}");
    assert_eq!(env.calls(), 1);
    assert!(s.token_count() > 26_000, "{}", s.token_count());
    let again = maybe_auto_compact(&mut s, &env);
    assert_eq!(again.skipped, Some(SkipReason::OverheadAboveThreshold));
    assert!(!again.was_compacted);
    assert_eq!(env.calls(), 1, "the summarizer is not called again");
    // A response reports usage: the count is real again, and due.
    let mut next = rounds_with_usage(1, 400, 26_000, 1.0);
    next[1] = {
        let mut v = next[1].to_value();
        v["usage"] = json!({"input_tokens": 26_500, "output_tokens": 30});
        Message::from_value(v, "test").unwrap()
    };
    push(&mut s, &next[..2]);
    assert!(s.check_auto_compact(&Default::default()).is_none(), "due");

    // Threshold 27,000 (15 % of Opus's 180,000): a bigger conversation with the same overhead
    // is due; after the compaction the count (the overhead and the summary) is below it.
    let config = Config {
        auto_compact_pct_override: Some(15.0),
        ..Default::default()
    };
    let mut s = session(config);
    push(&mut s, &rounds_with_usage(1, 12_000, 26_000, 1.0));
    assert!(s.token_count() >= 27_000, "{}", s.token_count());
    let out = maybe_auto_compact(&mut s, &env);
    assert!(out.was_compacted, "{out:?}");
    let after = s.token_count();
    assert!(
        (26_000..27_000).contains(&after),
        "the overhead and the summary: {after}"
    );
    assert_eq!(
        s.check_auto_compact(&Default::default()).unwrap().skipped,
        Some(SkipReason::BelowThreshold)
    );
}

/// A rewound session file: pushed line by line in file order, the running count is anchored
/// on the usage of the branch left behind; read again (`recount`) as `parse_transcript` marks
/// the lines (the chain from the leaf), it is the batch count of the marked lines, and a later
/// push goes on from there. The given usage is given again where it was.
#[test]
fn recount_reads_a_rewound_file_along_its_chain() {
    let line = |uuid: &str, parent: Option<&str>, v: Value| {
        let mut v = v;
        v["uuid"] = json!(uuid);
        v["parentUuid"] = json!(parent);
        v["isSidechain"] = json!(false);
        v.to_string()
    };
    let user = |text: &str| json!({"type": "user", "message": {"role": "user", "content": text}});
    let answer = |id: &str, text: &str, input: u64| {
        json!({"type": "assistant", "message": {"id": id, "role": "assistant", "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn", "usage": {"input_tokens": input, "output_tokens": 20}}})
    };
    let text = [
        line("q1", None, user("What does the parser do?")),
        line("r1", Some("q1"), answer("m1", "It reads tokens.", 1_200)),
        line("q2", Some("r1"), user("Paste every file here.")),
        line("r2", Some("q2"), answer("m2", "Here they are.", 150_000)),
        line("q3", Some("r1"), user("Just name the main function.")),
    ]
    .join("\n");
    let lines = context_compaction::transforms::transcript::parse_transcript(&text).unwrap();
    let file_order: Vec<Message> = lines
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.conversation = Default::default();
            m
        })
        .collect();
    let mut s = session(Config::default());
    push(&mut s, &file_order);
    assert_eq!(
        s.token_count(),
        token_count_with_estimation(file_order.as_slice())
            .unwrap()
            .total
    );
    assert!(s.token_count() > 150_000);
    s.recount(lines.as_slice()).unwrap();
    let chain = token_count_with_estimation(lines.as_slice()).unwrap().total;
    assert_eq!(s.token_count(), chain);
    assert!(chain < 2_000, "{chain}");
    // A view of other messages changes nothing.
    s.recount(&lines[..2]).unwrap();
    assert_eq!(s.token_count(), chain);
    // Usage given for the latest response stays where it was given.
    let mut g = session(Config::default());
    push(&mut g, &file_order[..4]);
    let given = UsageCounts {
        input_tokens: 7_000,
        ..Default::default()
    };
    g.set_usage(given).unwrap();
    push(&mut g, &file_order[4..]);
    let before = g.token_count();
    g.recount(file_order.as_slice()).unwrap();
    assert_eq!(g.token_count(), before);
}
