//! Saving and restoring the Compactor's session (`Compactor.snapshot()` /
//! `Compactor.restore()`), natively: a session restored from its snapshot (written as JSON
//! text, as storage would) over its messages (written as JSON and read back, as another
//! machine would) has the same count and takes the same decisions as the one that never
//! stopped; snapshots of other messages, and damaged ones, are coded errors.

use proptest::prelude::*;
use serde_json::{json, Value};

use context_compaction::drive::autocompact::{
    auto_compact_if_needed, AutoCompactOutcome, ShouldAutoCompactOptions, SkipReason,
};
use context_compaction::drive::pipeline::{compact_conversation, CompactContext, CompactOptions};
use context_compaction::drive::retry::RetryPolicy;
use context_compaction::drive::session::Session;
use context_compaction::drive::snapshot::SessionSnapshot;
use context_compaction::model::config::Config;
use context_compaction::model::error::ErrorCode;
use context_compaction::model::messages::Message;
use context_compaction::summarize::summary::SummaryResponse;
use context_compaction::transforms::boundary::Trigger;
use context_compaction_test_support::env::{block_on, Scripted};
use context_compaction_test_support::strategies::convo;

const OPUS: &str = "claude-opus-4-6";

/// Auto-compact threshold 9,000 tokens for Opus.
fn low() -> Config {
    Config {
        auto_compact_pct_override: Some(5.0),
        ..Default::default()
    }
}

fn parse(v: Value) -> Vec<Message> {
    Message::parse_all(v).unwrap()
}

/// One API round of about `chars / 4` tokens, ids prefixed with `p`; the assistant reply
/// carries usage when `usage` is given (an anchored count).
fn round(p: &str, chars: usize, usage: Option<u64>) -> Vec<Message> {
    let mut reply = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": format!("{p}_t"), "name": "Read", "input": {"file_path": format!("/{p}.rs")}}]});
    if let Some(u) = usage {
        reply["usage"] = json!({"input_tokens": u, "output_tokens": 10});
        reply["id"] = json!(format!("msg_{p}"));
    }
    parse(json!([
        {"role": "user", "content": format!("{p} please read the file")},
        reply,
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": format!("{p}_t"), "content": "x ".repeat(chars / 2)}]}
    ]))
}

fn push(s: &mut Session<Message>, msgs: &[Message]) {
    s.push_all(msgs, |v, i| v[i].clone()).unwrap();
}

/// The messages as another machine gets them: written as JSON, read back.
fn stored(msgs: &[Message]) -> Vec<Message> {
    let text =
        serde_json::to_string(&msgs.iter().map(Message::to_value).collect::<Vec<_>>()).unwrap();
    parse(serde_json::from_str(&text).unwrap())
}

/// The snapshot as storage keeps it: JSON text, read back and checked.
fn saved(s: &Session<Message>) -> SessionSnapshot {
    let text = s.snapshot().to_json().to_string();
    SessionSnapshot::parse(&serde_json::from_str::<Value>(&text).unwrap()).unwrap()
}

fn restore(snapshot: &SessionSnapshot, msgs: &[Message], config: Config) -> Session<Message> {
    let mut s = Session::new(OPUS.into(), config);
    s.restore(snapshot, msgs, |v, i| v[i].clone()).unwrap();
    s
}

/// `Session::restore` into a new session: the error.
fn restore_err(snapshot: &SessionSnapshot, msgs: &[Message], config: Config) -> ErrorCode {
    let mut s = Session::new(OPUS.into(), config);
    let e = s.restore(snapshot, msgs, |v, i| v[i].clone()).unwrap_err();
    assert!(
        s.is_empty() && s.token_count() == 0,
        "nothing is restored partly"
    );
    e.code
}

fn summarizer(ok: bool) -> Scripted {
    if ok {
        return Scripted::summary("short summary");
    }
    // An empty summary: a failure that counts towards the circuit breaker.
    Scripted::new(Box::new(|_, _| {
        Ok(SummaryResponse {
            text: String::new(),
            stop_reason: Some("end_turn".into()),
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

/// `maybeAutoCompact` as the bindings run it.
fn maybe_auto_compact(s: &mut Session<Message>, env: &Scripted) -> AutoCompactOutcome {
    let query = ShouldAutoCompactOptions::default();
    if let Some(skipped) = s.check_auto_compact(&query) {
        return skipped;
    }
    let (c, input) = s.begin(Trigger::Auto, |m| Ok(m.to_vec())).unwrap();
    let tracking = s.tracking().clone();
    let outcome = block_on(auto_compact_if_needed(
        &input,
        &context(s),
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
    outcome
}

/// `compact()` as the bindings run it: whether it succeeded.
fn compact(s: &mut Session<Message>, env: &Scripted) -> bool {
    let (c, input) = s.begin(Trigger::Manual, |m| Ok(m.to_vec())).unwrap();
    let opts = CompactOptions {
        retry: RetryPolicy::with_base_ms(0),
        ..Default::default()
    };
    match block_on(compact_conversation(&input, &context(s), &opts, env)) {
        Ok(r) => {
            let post = r.post_compact_messages(&input);
            s.commit(c, Ok(post.as_slice()), |v, i| v[i].clone())
                .unwrap();
            true
        }
        Err(_) => {
            s.abandon(c);
            false
        }
    }
}

/// One step of a conversation's life.
#[derive(Clone, Debug)]
enum Op {
    /// A round of about `chars / 4` tokens, anchored by usage or estimated.
    Push { chars: usize, usage: Option<u64> },
    /// `maybeAutoCompact` with a summarizer that works (`true`) or fails.
    Auto(bool),
    /// `compact()` with a summarizer that works or fails.
    Manual(bool),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (200usize..48_000, prop::option::of(1_000u64..14_000))
            .prop_map(|(chars, usage)| Op::Push { chars, usage }),
        4 => prop::bool::weighted(0.7).prop_map(Op::Auto),
        1 => prop::bool::weighted(0.7).prop_map(Op::Manual),
    ]
}

/// What a step decided, to compare two sessions by.
#[derive(Debug, PartialEq)]
enum Decision {
    Pushed,
    Auto {
        compacted: bool,
        skipped: Option<SkipReason>,
        failures: u32,
        error: Option<ErrorCode>,
    },
    Manual(bool),
}

fn apply(s: &mut Session<Message>, step: usize, op: &Op, env: &[Scripted; 2]) -> Decision {
    match op {
        Op::Push { chars, usage } => {
            push(s, &round(&format!("p{step}"), *chars, *usage));
            Decision::Pushed
        }
        Op::Auto(ok) => {
            let o = maybe_auto_compact(s, &env[usize::from(*ok)]);
            Decision::Auto {
                compacted: o.was_compacted,
                skipped: o.skipped,
                failures: o.consecutive_failures,
                error: o.error.map(|e| e.error.code),
            }
        }
        Op::Manual(ok) => Decision::Manual(compact(s, &env[usize::from(*ok)])),
    }
}

fn envs() -> [Scripted; 2] {
    [summarizer(false), summarizer(true)]
}

/// The uuids the environments handed out, copied to the other machine's (so the messages
/// they write are the same).
fn same_uuids(from: &[Scripted; 2], to: &[Scripted; 2]) {
    for (a, b) in from.iter().zip(to) {
        b.uuids.set(a.uuids.get());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    /// Restored at any point of a life of pushes, automatic and manual compactions (some
    /// failing), a session has the same count, the same snapshot, and takes the same
    /// decisions on every later step as the session that never stopped.
    #[test]
    fn a_restored_session_decides_as_the_original(
        ops in prop::collection::vec(op(), 1..28),
        at in 0usize..28,
    ) {
        let at = at.min(ops.len());
        let env_a = envs();
        let mut a = Session::new(OPUS.into(), low());
        for (i, o) in ops[..at].iter().enumerate() {
            apply(&mut a, i, o, &env_a);
        }
        let snapshot = saved(&a);
        let mut b = restore(&snapshot, &stored(a.messages()), low());
        prop_assert_eq!(b.token_count(), a.token_count());
        prop_assert_eq!(b.snapshot(), a.snapshot());
        prop_assert_eq!(b.messages(), a.messages());
        let env_b = envs();
        same_uuids(&env_a, &env_b);
        for (i, o) in ops.iter().enumerate().skip(at) {
            let da = apply(&mut a, i, o, &env_a);
            let db = apply(&mut b, i, o, &env_b);
            prop_assert_eq!(&da, &db, "step {} ({:?})", i, o);
            prop_assert_eq!(b.token_count(), a.token_count(), "step {}", i);
            prop_assert_eq!(b.tracking(), a.tracking());
            prop_assert_eq!(b.thrashing(), a.thrashing());
        }
        prop_assert_eq!(b.messages(), a.messages());
        prop_assert_eq!(b.snapshot(), a.snapshot());
    }

    /// Any generated conversation (both shapes, every block, usage, boundaries, sub-agent
    /// lines), pushed in batches: restored over its messages it counts the same, and the
    /// snapshot does not match the conversation with a message left out.
    #[test]
    fn any_conversation_round_trips(c in convo(), split in 0usize..64) {
        let msgs = c.messages();
        let mut a = Session::new(OPUS.into(), Config::default());
        let split = split.min(msgs.len());
        push(&mut a, &msgs[..split]);
        push(&mut a, &msgs[split..]);
        let snapshot = saved(&a);
        let b = restore(&snapshot, &stored(&msgs), Config::default());
        prop_assert_eq!(b.token_count(), a.token_count());
        // (Not compared with token_count_with_estimation: after a boundary that records
        // messages kept verbatim, the session ignores the stale usage they carry, as
        // shouldAutoCompact does, and the plain count does not.)
        prop_assert_eq!(&b.snapshot(), &snapshot);
        if !msgs.is_empty() {
            for gone in [0, msgs.len() - 1] {
                let mut fewer = msgs.clone();
                fewer.remove(gone);
                prop_assert_eq!(restore_err(&snapshot, &fewer, Config::default()), ErrorCode::SnapshotMismatch);
            }
        }
    }
}

#[test]
fn other_messages_of_the_same_number_are_a_mismatch() {
    let mut a = Session::new(OPUS.into(), low());
    push(&mut a, &round("a", 4_000, Some(5_000)));
    let snapshot = saved(&a);
    let restore_with = |msgs: Vec<Message>| {
        let mut s = Session::new(OPUS.into(), low());
        let e = s
            .restore(&snapshot, msgs.as_slice(), |v, i| v[i].clone())
            .unwrap_err();
        assert!(
            s.is_empty() && s.token_count() == 0,
            "nothing is restored partly"
        );
        e
    };
    // A tool result of another size.
    let e = restore_with(round("a", 8_000, Some(5_000)));
    assert_eq!(e.code, ErrorCode::SnapshotMismatch);
    assert!(e.message.contains("fingerprint"), "{}", e.message);
    // Another usage on the reply.
    assert_eq!(
        restore_with(round("a", 4_000, Some(5_001))).code,
        ErrorCode::SnapshotMismatch
    );
    // Messages that differ only in what the count does not read (other words of the same
    // sizes, other tool ids) are not told apart: they count the same, so every decision is
    // the same.
    let b = restore(&snapshot, &round("b", 4_000, Some(5_000)), low());
    assert_eq!(b.token_count(), a.token_count());
    // Another conversation altogether.
    let e = restore_with(round("c", 4_000, None)[..2].to_vec());
    assert!(e.message.contains("3 messages, 2 given"), "{}", e.message);
    // The same messages are fine.
    let mut b = restore(&snapshot, &round("a", 4_000, Some(5_000)), low());
    assert_eq!(b.token_count(), a.token_count());
    // Only into a new session.
    let e = b
        .restore(
            &snapshot,
            round("a", 4_000, Some(5_000)).as_slice(),
            |v, i| v[i].clone(),
        )
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArgument);
}

#[test]
fn a_snapshot_taken_during_a_compaction_restores_the_conversation_held_then() {
    let env = summarizer(true);
    let mut a = Session::new(OPUS.into(), low());
    push(&mut a, &round("r1", 40_000, None));
    assert!(a
        .check_auto_compact(&ShouldAutoCompactOptions::default())
        .is_none());
    let (c, _input) = a.begin(Trigger::Auto, |m| Ok(m.to_vec())).unwrap();
    // A message pushed while the summary is written, then the process dies.
    push(&mut a, &round("during", 400, None));
    let snapshot = saved(&a);
    assert_eq!(snapshot.messages, 6);
    let mut b = restore(&snapshot, &stored(a.messages()), low());
    assert!(!b.compacting());
    assert_eq!(b.token_count(), a.token_count());
    a.abandon(c);
    assert_eq!(b.snapshot(), a.snapshot());
    // The restored session compacts on its next turn; what follows the summary comes once.
    let o = maybe_auto_compact(&mut b, &env);
    assert!(o.was_compacted, "{o:?}");
    let texts: Vec<String> = b
        .messages()
        .iter()
        .map(|m| m.to_value().to_string())
        .collect();
    assert!(texts
        .iter()
        .all(|t| t.matches("during please").count() <= 1));
}

#[test]
fn tracking_and_thrashing_survive_a_restore() {
    let bad = summarizer(false);
    let mut a = Session::new(OPUS.into(), low());
    push(&mut a, &round("big", 40_000, None));
    for _ in 0..3 {
        assert!(!maybe_auto_compact(&mut a, &bad).was_compacted);
    }
    assert_eq!(a.tracking().consecutive_failures, 3);
    let mut b = restore(&saved(&a), &stored(a.messages()), low());
    assert_eq!(b.tracking().consecutive_failures, 3);
    let o = maybe_auto_compact(&mut b, &summarizer(true));
    assert_eq!(o.skipped, Some(SkipReason::CircuitBreakerOpen));

    // Thrashing: every turn refills the context after a compaction.
    let good = summarizer(true);
    let mut t = Session::new(OPUS.into(), low());
    for turn in 0..8 {
        push(&mut t, &round(&format!("t{turn}"), 40_000, None));
        maybe_auto_compact(&mut t, &good);
        if t.thrashing() {
            break;
        }
    }
    assert!(t.thrashing());
    let mut r = restore(&saved(&t), &stored(t.messages()), low());
    assert!(r.thrashing());
    push(&mut r, &round("again", 40_000, None));
    assert_eq!(
        maybe_auto_compact(&mut r, &good).skipped,
        Some(SkipReason::Thrashing)
    );
}
