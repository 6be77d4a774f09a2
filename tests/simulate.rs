//! The simulator on the real Claude Code sessions (`../shared/transcripts/`): the cache
//! model reproduces the recorded usage, and the policies compare on the same sessions.

use std::path::PathBuf;

use context_compaction::model::messages::Message;
use context_compaction::simulate::report::SimulationReport;
use context_compaction::simulate::{simulate, SimulateOptions};
use context_compaction::transforms::transcript::parse_transcript;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/transcripts")
}

fn files() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    names.sort();
    assert!(names.len() >= 4, "transcripts missing: {names:?}");
    names
}

fn load(name: &str) -> Vec<Message> {
    let text = std::fs::read_to_string(dir().join(name)).unwrap();
    parse_transcript(&text).unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

fn run(name: &str, options: &SimulateOptions) -> SimulationReport {
    simulate(&load(name), options).unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

fn print(name: &str, r: &SimulationReport) {
    println!(
        "{name}: model {}, hidden {} tokens",
        r.model, r.hidden_tokens
    );
    for p in &r.policies {
        println!(
            "  {:<22} cost ${:>7.3} ({:>6}) peak {:>7} mean {:>7} compactions {:>2} micro {:>3} wait {:>6.1}s ({} waits, swaps {}+{} early, {} refused, {} summary calls) re-reads {} ({} tokens, ${:.3}) lost {:>2}  in {} w {} r {} out {}",
            p.name,
            p.cost,
            p.relative_cost.map_or("-".to_string(), |x| format!("{:.1}%", x * 100.0)),
            p.peak_context,
            p.mean_context,
            p.compactions,
            p.micro_compactions,
            p.blocked_seconds,
            p.waits,
            p.swaps,
            p.early_swaps,
            p.refused_swaps,
            p.summary_calls,
            p.rereads,
            p.reread_tokens,
            p.reread_cost,
            p.lost,
            p.tokens.input,
            p.tokens.cache_write,
            p.tokens.cache_read,
            p.tokens.output,
        );
    }
}

#[test]
fn the_recorded_policy_reproduces_the_recorded_cache_reads_and_writes_within_5_percent() {
    for name in files() {
        let r = run(&name, &SimulateOptions::default());
        let c = r
            .calibration
            .as_ref()
            .expect("every shared transcript has usage");
        println!(
            "{name}: {} calls; cache read recorded {} simulated {} ({:+.2} %), write recorded {} simulated {} ({:+.2} %); \
             transcript alone: read {:+.2} %, write {:+.2} %; prompt changes taken from the usage: {}",
            c.calls,
            c.recorded.cache_read,
            c.simulated.cache_read,
            c.read_error_percent,
            c.recorded.cache_write,
            c.simulated.cache_write,
            c.write_error_percent,
            c.model_only_read_error_percent,
            c.model_only_write_error_percent,
            c.client_breaks.len()
        );
        for b in &c.client_breaks {
            println!(
                "    call {} (line {}): read {} where the model read {}",
                b.call, b.line, b.at_tokens, b.model_read
            );
        }
        assert!(
            c.read_error_percent.abs() <= 5.0,
            "{name}: read {:+.2} %",
            c.read_error_percent
        );
        assert!(
            c.write_error_percent.abs() <= 5.0,
            "{name}: write {:+.2} %",
            c.write_error_percent
        );
        print(&name, &r);
    }
}

/// Costs of each policy summed over the shared sessions, with what the summaries lost.
fn totals(options: &SimulateOptions) -> Vec<(String, f64, usize, f64)> {
    let mut totals: Vec<(String, f64, usize, f64)> = Vec::new();
    for name in files() {
        let r = run(&name, options);
        print(&name, &r);
        for p in &r.policies {
            match totals.iter_mut().find(|t| t.0 == p.name) {
                Some(t) => {
                    t.1 += p.cost;
                    t.2 += p.lost;
                    t.3 += p.blocked_seconds;
                }
                None => totals.push((p.name.clone(), p.cost, p.lost, p.blocked_seconds)),
            }
        }
    }
    totals
}

/// Issue 14's third goal, measured with re-reads priced and pre-emptive swaps under the
/// library's bound: the recommended policy (pre-emptive 50K/55K, files restored) is the
/// cheapest of the built-in ones and loses nothing, at 80.5 % of Claude Code's cost — just
/// short of 20 % cheaper. Synchronous summaries at 55K are 22 % cheaper, but the
/// conversation waits six times as long (docs/simulate.md).
#[test]
fn the_recommended_policy_is_the_cheapest_that_loses_nothing_with_re_reads_priced() {
    let mut options = SimulateOptions {
        policies: Some(
            context_compaction::simulate::policy::BUILTIN_NAMES
                .iter()
                .map(|n| serde_json::json!(n))
                .chain([serde_json::json!({"name": "sync-55k",
                    "compact": {"threshold": 55000}, "microCompact": {"whenCacheCold": true}})])
                .collect(),
        ),
        ..Default::default()
    };
    let t = totals(&options);
    let cost = |n: &str| {
        t.iter()
            .find(|x| x.0 == n)
            .unwrap_or_else(|| panic!("{n} missing"))
    };
    let (base, rec, sync) = (cost("claude-code"), cost("recommended"), cost("sync-55k"));
    for x in &t {
        println!(
            "all sessions: {:<20} ${:>7.3} {:>6.1} % of claude-code, lost {}, waited {:.0} s",
            x.0,
            x.1,
            x.1 / base.1 * 100.0,
            x.2,
            x.3
        );
    }
    assert!(
        rec.1 <= base.1 * 0.85,
        "recommended ${:.3} vs claude-code ${:.3}",
        rec.1,
        base.1
    );
    assert_eq!(rec.2, 0, "the recommended policy's summaries lose nothing");
    for x in t.iter().filter(|x| x.0 != "recorded" && x.0 != "sync-55k") {
        assert!(rec.1 <= x.1, "{} is cheaper than recommended", x.0);
    }
    // Cheaper by 20 %, but the conversation waits for every summary.
    assert!(sync.1 <= base.1 * 0.8 && sync.2 == 0, "{sync:?}");
    assert!(sync.3 > base.3 * 4.0, "{sync:?} {base:?}");
    // The multi-request sessions, one by one.
    options.policies = None;
    for name in files() {
        let r = run(&name, &options);
        let rec = r.policies.iter().find(|p| p.name == "recommended").unwrap();
        let base = r.policies.iter().find(|p| p.name == "claude-code").unwrap();
        assert!(
            rec.cost <= base.cost * 1.0001,
            "{name}: recommended costs more"
        );
        assert_eq!(rec.requests, base.requests);
        // It restores files as Claude Code does: nothing to read again.
        assert_eq!(rec.rereads, 0);
    }
}

/// The provider's compaction restores no files: on the long session the agent reads again,
/// after it, the files Claude Code would have restored and then works on.
#[test]
fn a_policy_that_restores_no_files_pays_for_reading_them_again() {
    let r = run(
        "cc_long_autocompact_4d5611e5.jsonl",
        &SimulateOptions {
            policies: Some(vec![
                "api-compaction".into(),
                serde_json::json!({"name": "no-files", "compact": {"restoreBudget": 0}}),
            ]),
            ..Default::default()
        },
    );
    for p in &r.policies {
        println!(
            "{}: {} re-reads, {} tokens, ${:.3} of ${:.3}",
            p.name, p.rereads, p.reread_tokens, p.reread_cost, p.cost
        );
        assert!(p.rereads >= 1 && p.reread_tokens > 1_000, "{p:?}");
        assert!(p.reread_cost > 0.0 && p.reread_cost < p.cost, "{p:?}");
    }
}

#[test]
fn every_policy_replays_every_call_and_reports_sane_numbers() {
    for name in files() {
        let r = run(&name, &SimulateOptions::default());
        assert_eq!(r.policies.len(), 7, "{name}");
        for p in &r.policies {
            assert_eq!(p.requests, r.calls, "{name} {}", p.name);
            assert!(p.mean_context <= p.peak_context);
            assert!(p.peak_context > 0 && p.cost > 0.0);
            let t = p.tokens;
            assert!(t.cache_write_1h <= t.cache_write);
            assert!(p.summary_calls >= p.compactions || p.name == "recorded");
            // Every client compaction was waited for or swapped in (no policy here compacts
            // on a cold cache).
            if p.name != "api-compaction" {
                assert_eq!(
                    p.waits + p.swaps + p.early_swaps,
                    p.compactions,
                    "{name} {}",
                    p.name
                );
            }
            if !p.name.contains("pre-emptive") && p.name != "recommended" {
                assert_eq!(p.swaps + p.early_swaps + p.refused_swaps, 0);
            }
        }
    }
}

#[test]
fn with_a_30_second_summarizer_pre_emptive_summaries_take_the_wait_away() {
    // 4,000-token summaries at 4,000 / 30 tokens per second: each takes 30 s.
    let options = SimulateOptions {
        policies: Some(vec!["claude-code".into(), "pre-emptive".into()]),
        summary_tokens_per_second: Some(4_000.0 / 30.0),
        ..Default::default()
    };
    let r = run("cc_long_autocompact_4d5611e5.jsonl", &options);
    let (cc, pre) = (&r.policies[0], &r.policies[1]);
    println!(
        "claude-code: {} compaction(s), waited {:.1} s; pre-emptive: {} compaction(s), waited {:.1} s",
        cc.compactions, cc.blocked_seconds, pre.compactions, pre.blocked_seconds
    );
    assert!(cc.compactions >= 1 && pre.compactions >= 1);
    assert!(cc.blocked_seconds > 0.0);
    assert_eq!(pre.blocked_seconds, 0.0);
    assert_eq!(pre.waits, 0);
    assert_eq!(pre.swaps + pre.early_swaps, pre.compactions);
    assert_eq!(pre.lost, 0);
}

mod random_sessions {
    use context_compaction::model::messages::Message;
    use context_compaction::simulate::{simulate, SimulateOptions};
    use context_compaction_test_support::strategies::{convo_with, Boundary};
    use proptest::prelude::*;
    use serde_json::json;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Any conversation (either shape, boundaries, noise, sub-agent lines) replays under
        /// every policy, small thresholds included, without an error, and the numbers hold
        /// together.
        #[test]
        fn every_policy_replays_any_conversation(c in convo_with(6, Boundary::Sometimes(0.3))) {
            let msgs: Vec<Message> = c
                .to_json()
                .into_iter()
                .map(|v| Message::from_value(v, "generated").unwrap())
                .collect();
            let mut policies: Vec<serde_json::Value> = context_compaction::simulate::policy::BUILTIN_NAMES
                .iter()
                .map(|n| json!(n))
                .collect();
            policies.push(json!({"name": "tiny", "compact": {"threshold": 2000, "preEmptive": true, "earlyAt": 1000, "restoreBudget": 500},
                "microCompact": {"trigger": 500, "keepRecent": 1, "whenCacheCold": true}}));
            policies.push(json!({"name": "api-tiny", "server": {"clearToolUses": {"trigger": 1000, "keep": 1}, "compact": {"trigger": 50000}},
                "compact": {"threshold": 3000, "whenCacheColdAbove": 100}}));
            let options = SimulateOptions { policies: Some(policies), summary_tokens: Some(200), ..Default::default() };
            let r = simulate(&msgs, &options).map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
            for p in &r.policies {
                prop_assert_eq!(p.requests, r.calls);
                prop_assert!(p.mean_context <= p.peak_context);
                prop_assert!(p.cost.is_finite() && p.cost >= 0.0);
                prop_assert!(p.blocked_seconds.is_finite() && p.blocked_seconds >= 0.0);
                prop_assert!(p.tokens.cache_write_1h <= p.tokens.cache_write);
            }
        }
    }
}
