//! Full and session-memory compaction over the scripted environment of the test-support
//! crate: the pipeline natively, step by step.

use serde_json::{json, Value};

use context_compaction::drive::autocompact::should_auto_compact;
use context_compaction::drive::env::{CallError, HookKind, HookOutput};
use context_compaction::drive::pinned::Pinned;
use context_compaction::drive::pipeline::{
    compact_conversation, CompactContext, CompactOptions, CompactionResult,
};
use context_compaction::drive::retry::RetryPolicy;
use context_compaction::drive::session_memory::try_session_memory_compaction;
use context_compaction::measure::tokens::{
    message_facts, token_count_checked, token_count_with_estimation, RunningCount,
};
use context_compaction::model::config::Config;
use context_compaction::model::error::ErrorCode;
use context_compaction::model::messages::{Kind, Message};
use context_compaction::summarize::summary::SummaryResponse;
use context_compaction::transforms::boundary::Trigger;
use context_compaction::transforms::restore::FileSnapshot;
use context_compaction_test_support::env::{block_on, transcript, Scripted};

fn ctx() -> CompactContext {
    CompactContext {
        model: "claude-opus-4-6".into(),
        ..Default::default()
    }
}

fn manual(instructions: Option<&str>) -> CompactOptions {
    CompactOptions {
        custom_instructions: instructions.map(str::to_string),
        retry: RetryPolicy::with_base_ms(10),
        ..Default::default()
    }
}

#[test]
fn full_compaction_produces_a_valid_smaller_conversation() {
    let m = transcript(20, 4000);
    let env = Scripted::summary("The user asked for twenty things.");
    let r = block_on(compact_conversation(&m, &ctx(), &manual(None), &env)).unwrap();
    assert_eq!(r.trigger, Trigger::Manual);
    assert!(r.boundary_marker.is_compact_boundary());
    assert_eq!(r.boundary_marker.to_value()["logicalParentUuid"], "r19");
    assert_eq!(r.summary_messages.len(), 1);
    assert!(r.summary_messages[0].is_compact_summary());
    assert!(r.true_post_compact_token_count < r.pre_compact_token_count);
    assert_eq!(r.post_compact_token_count, 1200);
    assert_eq!(r.summary, "The user asked for twenty things.");
    let out = r.post_compact_messages(&m);
    assert_eq!(out[0], r.boundary_marker);
    assert_eq!(out[1], r.summary_messages[0]);
    // Resuming after the boundary counts only the new context (with what the history's usage
    // taught, when the file still holds it).
    let count = token_count_with_estimation(out.as_slice()).unwrap();
    let mut file = m.clone();
    file.extend(out.iter().cloned());
    let resumed = token_count_with_estimation(file.as_slice()).unwrap();
    assert_eq!(resumed.total, r.true_post_compact_token_count);
    assert_eq!(count.total, resumed.estimated);
    let phases = env.phases.borrow().clone();
    assert_eq!(phases.first(), Some(&"start"));
    assert_eq!(phases.last(), Some(&"done"));
}

#[test]
fn prompt_too_long_drops_oldest_rounds_and_succeeds() {
    let m = transcript(30, 4000); // ~30K tokens
    let limit = 20_000u64;
    let env = Scripted::new(Box::new(move |req, _| {
        let size = serde_json::to_string(&req.messages).unwrap().len() as u64 / 4;
        if size > limit {
            Err(CallError {
                status: Some(400),
                message: format!(
                    r#"{{"type":"error","error":{{"type":"invalid_request_error","message":"prompt is too long: {size} tokens > {limit} maximum"}}}}"#
                ),
                ..Default::default()
            })
        } else {
            Ok(SummaryResponse {
                text: "<summary>ok</summary>".into(),
                ..Default::default()
            })
        }
    }));
    let r = block_on(compact_conversation(&m, &ctx(), &manual(None), &env)).unwrap();
    assert!(
        r.ptl_retries >= 1 && r.ptl_retries <= 3,
        "{}",
        r.ptl_retries
    );
    let reqs = env.requests.borrow();
    let first = serde_json::to_string(&reqs[0].messages).unwrap();
    let last = serde_json::to_string(&reqs.last().unwrap().messages).unwrap();
    assert!(first.contains("request number 0"));
    assert!(!last.contains("request number 0\""), "oldest round dropped");
    assert!(last.contains("request number 29"), "latest round kept");
    assert_eq!(reqs.last().unwrap().messages_json()[0]["role"], "user");
}

#[test]
fn prompt_too_long_gives_up_with_a_clear_error() {
    let m = transcript(5, 400);
    let env = Scripted::new(Box::new(|_, _| {
        Err(CallError {
            status: Some(400),
            message: "prompt is too long: 999999 tokens > 10 maximum".into(),
            ..Default::default()
        })
    }));
    let e = block_on(compact_conversation(&m, &ctx(), &manual(None), &env)).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::PromptTooLong);
    assert!(env.requests.borrow().len() <= 4);
}

/// Once a retry has cut the request down to the latest request and the one round always
/// kept, no older turn is left to drop: the next refusal fails at once, and no request is
/// sent twice.
#[test]
fn prompt_too_long_never_resends_the_request_it_was_refused() {
    let m = transcript(40, 400);
    let env = Scripted::new(Box::new(|_, _| {
        Err(CallError {
            status: Some(400),
            message: "prompt is too long: 250000 tokens > 200000 maximum".into(),
            ..Default::default()
        })
    }));
    let e = block_on(compact_conversation(&m, &ctx(), &manual(None), &env)).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::PromptTooLong);
    assert!(
        e.error.message.contains("no older turn is left to drop"),
        "{}",
        e.error.message
    );
    let sent: Vec<String> = env
        .requests
        .borrow()
        .iter()
        .map(|r| serde_json::to_string(&r.messages).unwrap())
        .collect();
    for (i, s) in sent.iter().enumerate() {
        assert!(!sent[..i].contains(s), "request {i} repeats an earlier one");
    }
    assert_eq!(sent.len(), 2, "the full request, then the cut one");
}

#[test]
fn truncated_empty_and_not_smaller_summaries_fail() {
    let m = transcript(10, 4000);
    let cut = Scripted::new(Box::new(|_, _| {
        Ok(SummaryResponse {
            text: "<summary>half".into(),
            stop_reason: Some("max_tokens".into()),
            usage: None,
            compaction: None,
            problem: None,
        })
    }));
    let e = block_on(compact_conversation(&m, &ctx(), &manual(None), &cut)).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::SummaryTruncated);
    let empty = Scripted::summary("   ");
    let e = block_on(compact_conversation(&m, &ctx(), &manual(None), &empty)).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::EmptySummary);
    let small = transcript(1, 10);
    let huge = Scripted::summary(&"long summary ".repeat(500));
    let e = block_on(compact_conversation(&small, &ctx(), &manual(None), &huge)).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::CompactionNotSmaller);
    // No PostCompact hook on failure.
    assert!(!huge
        .hooks
        .borrow()
        .iter()
        .any(|(k, _)| *k == HookKind::PostCompact));
}

/// "Smaller than what it replaces" compares the messages' estimates, neither with usage: a
/// short conversation under a 25,000-token system prompt (its usage says 25,000 and more)
/// whose summary is longer than the conversation is not committed, though the summary alone
/// is far below the usage count. A summary shorter than the conversation is committed, and
/// the learned size after it stays below the size before.
#[test]
fn a_summary_longer_than_a_short_conversation_under_a_large_system_prompt_fails() {
    let mut m = transcript(1, 400);
    let mut v = m[1].to_value();
    v["message"]["usage"] = json!({"input_tokens": 25_000, "output_tokens": 20});
    m[1] = Message::from_value(v, "test").unwrap();
    let before = context_compaction::measure::tokens::estimate_all(&m, None).unwrap();
    let long = Scripted::summary(&"a long summary of almost nothing ".repeat(20));
    let e = block_on(compact_conversation(&m, &ctx(), &manual(None), &long)).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::CompactionNotSmaller, "{e:?}");
    assert!(
        e.error
            .message
            .contains(&format!("({before} tokens estimated)")),
        "{}",
        e.error.message
    );
    let short = Scripted::summary("read f0");
    let r = block_on(compact_conversation(&m, &ctx(), &manual(None), &short)).unwrap();
    assert!(
        r.true_post_compact_token_count < r.pre_compact_token_count,
        "{} vs {}",
        r.true_post_compact_token_count,
        r.pre_compact_token_count
    );
}

#[test]
fn transient_errors_are_retried_with_backoff() {
    let m = transcript(10, 4000);
    let env = Scripted::new(Box::new(|_, n| {
        if n <= 2 {
            Err(CallError {
                status: Some(529),
                message:
                    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
                        .into(),
                ..Default::default()
            })
        } else {
            Ok(SummaryResponse {
                text: "<summary>fine</summary>".into(),
                ..Default::default()
            })
        }
    }));
    let r = block_on(compact_conversation(&m, &ctx(), &manual(None), &env)).unwrap();
    assert_eq!(r.transient_retries, 2);
    assert_eq!(env.sleeps.borrow().len(), 2);
    // A summarizer that already retried is not retried again.
    let done = Scripted::new(Box::new(|_, _| {
        Err(CallError {
            status: Some(529),
            message: "overloaded".into(),
            retries_exhausted: true,
            ..Default::default()
        })
    }));
    let e = block_on(compact_conversation(&m, &ctx(), &manual(None), &done)).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::SummarizerFailed);
    assert_eq!(done.requests.borrow().len(), 1);
}

#[test]
fn abort_at_every_step_fails_with_aborted() {
    let m = transcript(10, 4000);
    for phase in [
        "start",
        "preCompactHook",
        "summarizing",
        "summarized",
        "restoring",
        "sessionStartHook",
        "postCompactHook",
    ] {
        let mut env = Scripted::summary("s");
        env.abort_at = Some(phase);
        let e = block_on(compact_conversation(&m, &ctx(), &manual(None), &env)).unwrap_err();
        assert_eq!(e.error.code, ErrorCode::Aborted, "abort at {phase}");
    }
}

#[test]
fn hooks_fire_once_with_counts_and_a_throwing_hook_is_reported() {
    let m = transcript(10, 4000);
    let mut env = Scripted::summary("sum");
    env.hook = Box::new(|k, _| match k {
        HookKind::PreCompact => Some(Ok(HookOutput {
            instructions: Some("mention the tests".into()),
            user_display_message: Some("pre says hi".into()),
            ..Default::default()
        })),
        HookKind::SessionStart => Some(Ok(HookOutput {
            messages: vec!["session restarted".into()],
            ..Default::default()
        })),
        HookKind::PostCompact => Some(Err(CallError::new("hook crashed"))),
    });
    let r = block_on(compact_conversation(
        &m,
        &ctx(),
        &manual(Some("keep it short")),
        &env,
    ))
    .unwrap();
    let hooks = env.hooks.borrow();
    let pre: Vec<_> = hooks
        .iter()
        .filter(|(k, _)| *k == HookKind::PreCompact)
        .collect();
    assert_eq!(pre.len(), 1);
    assert_eq!(pre[0].1["trigger"], "manual");
    assert_eq!(pre[0].1["customInstructions"], "keep it short");
    assert_eq!(pre[0].1["preTokens"], r.pre_compact_token_count);
    assert_eq!(pre[0].1["threshold"], 167_000);
    let post: Vec<_> = hooks
        .iter()
        .filter(|(k, _)| *k == HookKind::PostCompact)
        .collect();
    assert_eq!(post.len(), 1);
    assert_eq!(post[0].1["compactSummary"], "sum");
    assert_eq!(post[0].1["postTokens"], r.true_post_compact_token_count);
    assert_eq!(r.hook_failures.len(), 1);
    assert_eq!(r.hook_failures[0].hook, "postCompact");
    assert_eq!(r.user_display_message.as_deref(), Some("pre says hi"));
    assert_eq!(r.hook_results.len(), 1);
    let req = serde_json::to_string(&env.requests.borrow()[0]).unwrap();
    assert!(req.contains("keep it short") && req.contains("mention the tests"));
    // Custom instructions never reach the compacted conversation.
    let out = serde_json::to_string(&r.post_compact_messages(&m)).unwrap();
    assert!(!out.contains("keep it short") && !out.contains("mention the tests"));
}

#[test]
fn media_never_reaches_the_summarizer() {
    let big = "A".repeat(200_000);
    let m = Message::parse_all(json!([
        {"role": "user", "content": [{"type": "text", "text": "look"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": big}}]},
        {"role": "assistant", "content": "nice picture ".repeat(2000)}
    ]))
    .unwrap();
    let env = Scripted::summary("a picture");
    block_on(compact_conversation(&m, &ctx(), &manual(None), &env)).unwrap();
    let req = serde_json::to_string(&env.requests.borrow()[0]).unwrap();
    assert!(!req.contains("AAAAAAAA"));
    assert!(req.contains("[image: image/png, 146 KB]"), "{req}");
}

#[test]
fn files_are_restored_most_recent_first_within_budget() {
    let m = transcript(60, 4000);
    let mut c = ctx();
    for k in 0..8 {
        c.read_file_state.push(FileSnapshot {
            path: format!("/src/f{k}.rs"),
            content: Some(format!("// file {k}\n{}", "y".repeat(30_000))),
            timestamp_ms: k as f64,
        });
    }
    let env = Scripted::summary("files");
    let r = block_on(compact_conversation(&m, &c, &manual(None), &env)).unwrap();
    assert_eq!(r.restored_files.len(), 5);
    assert_eq!(r.restored_files[0].name, "/src/f7.rs");
    assert!(r
        .restored_files
        .iter()
        .all(|f| f.tokens <= 5_000 && f.truncated));
    assert!(r.restored_files.iter().map(|f| f.tokens).sum::<u64>() <= 50_000);
    assert_eq!(r.attachments.len(), 5);
}

/// Restoration adds no more than the compaction frees: a short conversation (about 1,100
/// estimated tokens) that read a long file and a short one compacts, the short file restored
/// and the long one (5,000 tokens once cut) left out, instead of failing as not smaller
/// because of it.
#[test]
fn restored_files_stay_within_what_the_compaction_frees() {
    let m = transcript(4, 1_000);
    let before = context_compaction::measure::tokens::estimate_all(&m, None).unwrap();
    let mut c = ctx();
    c.read_file_state.push(FileSnapshot {
        path: "/src/big.rs".into(),
        content: Some("z".repeat(40_000)),
        timestamp_ms: 2.0,
    });
    c.read_file_state.push(FileSnapshot {
        path: "/src/small.rs".into(),
        content: Some("s".repeat(1_200)),
        timestamp_ms: 1.0,
    });
    let env = Scripted::summary("read four files");
    let r = block_on(compact_conversation(&m, &c, &manual(None), &env)).unwrap();
    let names: Vec<&str> = r.restored_files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["/src/small.rs"]);
    let after: Vec<Message> = r
        .summary_messages
        .iter()
        .chain(&r.attachments)
        .cloned()
        .collect();
    assert!(context_compaction::measure::tokens::estimate_all(&after, None).unwrap() < before);
    // With room for it (a longer conversation), the long file is restored too, cut to 5,000.
    let long = transcript(40, 1_000);
    let r = block_on(compact_conversation(&long, &c, &manual(None), &env)).unwrap();
    assert_eq!(r.restored_files.len(), 2);
    assert!(r.restored_files[0].truncated);
}

#[test]
fn api_shape_in_api_shape_out() {
    let m = Message::parse_all(json!([
        {"role": "user", "content": "q ".repeat(3000)},
        {"role": "assistant", "content": "a ".repeat(3000)}
    ]))
    .unwrap();
    let env = Scripted::summary("short");
    let r = block_on(compact_conversation(&m, &ctx(), &manual(None), &env)).unwrap();
    assert!(!r.summary_messages[0].is_transcript());
    assert_eq!(r.summary_messages[0].kind(), Kind::User);
}

#[test]
fn disabled_compaction_is_refused() {
    let m = transcript(3, 100);
    let mut c = ctx();
    c.config.disable_compact = Some(true);
    let env = Scripted::summary("s");
    let e = block_on(compact_conversation(&m, &c, &manual(None), &env)).unwrap_err();
    assert_eq!(e.error.code, ErrorCode::CompactDisabled);
    assert!(env.requests.borrow().is_empty());
}

#[test]
fn session_memory_keeps_recent_messages_and_counts_them_as_new_context() {
    let m = transcript(60, 4000); // ~60K tokens, usage on every assistant line
    let mut env = Scripted::summary("unused");
    env.memory = Some("The session so far: sixty reads.".into());
    let r = block_on(try_session_memory_compaction(&m, &ctx(), None, &env)).unwrap();
    assert!(r.from_session_memory);
    assert!(!r.messages_to_keep.is_empty());
    assert!(env.requests.borrow().is_empty(), "no model call");
    assert_eq!(
        r.boundary_marker.to_value()["compactMetadata"]["keptMessages"],
        r.messages_to_keep.len()
    );
    let out = r.post_compact_messages(&m);
    check_post_compaction_counts(&r, &m, &out);
    let c = CompactContext {
        config: Config {
            auto_compact_window: Some(70_000.0),
            ..Default::default()
        },
        ..ctx()
    };
    let due =
        should_auto_compact(out.as_slice(), &c.model, &Default::default(), &c.config).unwrap();
    assert!(!due.should_compact, "{due:?}");
}

/// The kept assistant lines still carry usage of the old context: the checked count and the
/// running count ignore it, and the first response after the compaction counts by its own
/// usage again. Resumed from the session file (the history, then the compaction's lines),
/// the count is the one reported, learned from the history's usage; from the compaction's
/// lines alone there is nothing to learn from, and it is their estimate.
fn check_post_compaction_counts(r: &CompactionResult, history: &[Message], out: &[Message]) {
    let mut file = history.to_vec();
    file.extend(out.iter().cloned());
    let checked = token_count_checked(file.as_slice()).unwrap();
    assert_eq!(checked.total, r.true_post_compact_token_count);
    let alone = token_count_checked(out).unwrap();
    assert_eq!(alone.total, checked.estimated);
    let checked = checked.total;
    let mut running = RunningCount::default();
    for i in 0..file.len() {
        running.push(&message_facts(file.as_slice(), i).unwrap());
    }
    assert_eq!(running.total(), checked);
    let out = file.as_slice();
    let mut next = out.to_vec();
    next.extend(
        Message::parse_all(json!([
            {"type": "user", "uuid": "n1", "message": {"role": "user", "content": "next request"}},
            {"type": "assistant", "uuid": "n2", "message": {"role": "assistant", "id": "msg_new",
                "stop_reason": "end_turn", "content": [{"type": "text", "text": "done"}],
                "usage": {"input_tokens": 12_345, "output_tokens": 6}}}
        ]))
        .unwrap(),
    );
    let fresh = token_count_checked(next.as_slice()).unwrap();
    assert_eq!(fresh.from_usage, 12_351, "the new response's usage is read");
    assert_eq!(fresh.total, 12_351);
    for i in out.len()..next.len() {
        running.push(&message_facts(next.as_slice(), i).unwrap());
    }
    assert_eq!(running.total(), 12_351);
}

#[test]
fn session_memory_kept_messages_count_only_sent_lines() {
    // Progress and sub-agent lines between the kept messages: `keptMessages` counts what is
    // sent, which is how the counters read it.
    let mut v: Vec<Value> = transcript(60, 4000).iter().map(Message::to_value).collect();
    for k in (0..v.len()).rev().step_by(2) {
        v.insert(
            k,
            json!({"type": "progress", "uuid": format!("p{k}"), "data": {"n": k}}),
        );
        v.insert(
            k,
            json!({"type": "assistant", "isSidechain": true, "uuid": format!("s{k}"),
            "message": {"role": "assistant", "id": format!("side{k}"), "content": "x",
                "usage": {"input_tokens": 99_999, "output_tokens": 1}}}),
        );
    }
    let m = Message::parse_all(Value::Array(v)).unwrap();
    let mut env = Scripted::summary("unused");
    env.memory = Some("The session so far: sixty reads.".into());
    let r = block_on(try_session_memory_compaction(&m, &ctx(), None, &env)).unwrap();
    let sent = r
        .messages_to_keep
        .iter()
        .filter(|&&i| matches!(m[i].kind(), Kind::User | Kind::Assistant) && !m[i].is_sidechain())
        .count();
    assert!(
        sent < r.messages_to_keep.len(),
        "the kept part has other lines"
    );
    assert_eq!(
        r.boundary_marker.to_value()["compactMetadata"]["keptMessages"],
        sent
    );
    let out = r.post_compact_messages(&m);
    check_post_compaction_counts(&r, &m, &out);
}

#[test]
fn session_memory_with_pinned_content_counts_the_pinned_messages_as_kept() {
    // Pinned messages sit between the summary and the kept part: the stale window covers
    // them too, so the kept responses' old usage is never read as fresh.
    let m = transcript(60, 4000);
    let mut env = Scripted::summary("unused");
    env.memory = Some("The session so far: sixty reads.".into());
    let pinned_assistant = Message::parse_all(json!([{"type": "assistant", "uuid": "pa",
        "message": {"role": "assistant", "id": "msg_pinned", "content": [{"type": "text", "text": "Pinned answer."}],
            "usage": {"input_tokens": 150_000, "output_tokens": 9}}}]))
    .unwrap()
    .remove(0);
    let c = CompactContext {
        pinned: vec![
            Pinned::Text("PINNED rule: never push to main.".into()),
            Pinned::Message(Box::new(pinned_assistant)),
        ],
        ..ctx()
    };
    let r = block_on(try_session_memory_compaction(&m, &c, None, &env)).unwrap();
    assert_eq!(r.summary_messages.len(), 3, "summary + 2 pinned");
    assert_eq!(
        r.boundary_marker.to_value()["compactMetadata"]["keptMessages"],
        2 + r.messages_to_keep.len()
    );
    let out = r.post_compact_messages(&m);
    check_post_compaction_counts(&r, &m, &out);
}

#[test]
fn a_pending_call_and_a_pinned_tool_pair_are_kept_valid_and_their_usage_stale() {
    use context_compaction::transforms::messages_api::validate_for_api;
    // The last round's result has not come yet: the call is pending.
    let mut m = transcript(20, 4000);
    m.pop();
    let c = CompactContext {
        // The result of round 3 (its call is round 3's assistant line).
        pinned: vec![Pinned::Message(Box::new(m[11].clone()))],
        ..ctx()
    };
    let env = Scripted::summary("Twenty reads.");
    let r = block_on(compact_conversation(&m, &c, &manual(None), &env)).unwrap();
    assert_eq!(r.messages_to_keep, vec![10, 11, m.len() - 1]);
    assert!(r.pinned_added.is_empty(), "carried by the kept pair");
    let out = r.post_compact_messages(&m);
    let mut next = out.clone();
    next.extend(
        Message::parse_all(json!([{"type": "user", "uuid": "r19", "parentUuid": "a19",
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t19", "content": "late"}]}}]))
        .unwrap(),
    );
    assert!(
        validate_for_api(&next).is_empty(),
        "{:?}",
        validate_for_api(&next)
    );
    // The kept lines carry the old context's usage: the count does not read it.
    check_post_compaction_counts(&r, &m, &out);
}

#[test]
fn the_system_messages_that_open_a_conversation_come_first_and_are_not_summarized() {
    let m = Message::parse_all(json!([
        {"role": "system", "content": "You are ACME's bot. SYSPROMPT"},
        {"role": "user", "content": "order late ".repeat(400)},
        {"role": "assistant", "content": "checking ".repeat(400)},
        {"role": "developer", "content": "Answer in French. MIDSYS"},
        {"role": "user", "content": "news?"}
    ]))
    .unwrap();
    let env = Scripted::summary("An order is late.");
    let r = block_on(compact_conversation(&m, &ctx(), &manual(None), &env)).unwrap();
    assert_eq!(r.messages_to_keep, vec![0]);
    let out = r.post_compact_messages(&m);
    assert!(out[0].is_compact_boundary());
    assert_eq!(out[1], m[0]);
    assert_eq!(out[2], r.summary_messages[0]);
    let sent = serde_json::to_string(&*env.requests.borrow()).unwrap();
    assert!(
        sent.contains("MIDSYS") && !sent.contains("SYSPROMPT"),
        "{sent}"
    );
    // A second compaction keeps it first again.
    let mut more = out.clone();
    more.extend(
        Message::parse_all(json!([
            {"role": "assistant", "content": "Pas encore. ".repeat(400)},
            {"role": "user", "content": "ok"}
        ]))
        .unwrap(),
    );
    let r2 = block_on(compact_conversation(&more, &ctx(), &manual(None), &env)).unwrap();
    let out2 = r2.post_compact_messages(&more);
    assert_eq!(out2[1], m[0]);
    assert_eq!(out2.iter().filter(|x| **x == m[0]).count(), 1);
}

/// The files whose content the kept messages hold (here a pinned tool result) are listed as
/// kept reads (their `readFileState` entries stay) and not restored; the others are not.
#[test]
fn the_reads_the_kept_messages_hold_are_kept_reads_and_not_restored() {
    let m = transcript(20, 4000);
    let mut c = CompactContext {
        // The result of round 3: 4,000 × "x".
        pinned: vec![Pinned::Message(Box::new(m[11].clone()))],
        ..ctx()
    };
    for (path, content) in [
        ("/f3.rs", "x".repeat(4000)),
        ("/f5.rs", "fn five() {}\n".repeat(50)),
        // Shown in part only: its first 1,000 characters, or a few characters anywhere.
        // Not restored (as before), but their reads are not kept (review16).
        (
            "/f3b.rs",
            format!("{}\nfn other() {{}}\n", "x".repeat(1000)),
        ),
        ("/VERSION", "x\n".to_string()),
    ] {
        c.read_file_state.push(FileSnapshot {
            path: path.into(),
            content: Some(content),
            timestamp_ms: 1.0,
        });
    }
    let env = Scripted::summary("Twenty reads.");
    let r = block_on(compact_conversation(&m, &c, &manual(None), &env)).unwrap();
    assert!(r.messages_to_keep.contains(&11));
    assert_eq!(r.kept_reads, ["/f3.rs"]);
    let restored: Vec<&str> = r.restored_files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(restored, ["/f5.rs"]);
}

/// A 70K window: `transcript(60, 4000)` (~60K tokens) is over its threshold.
fn low_window() -> CompactContext {
    CompactContext {
        config: Config {
            auto_compact_window: Some(70_000.0),
            ..Default::default()
        },
        ..ctx()
    }
}

/// `auto_compact_if_needed` of `m` in `ctx` with a fresh tracking (turn `t1`).
fn auto_compact(
    m: &[Message],
    ctx: &CompactContext,
    env: &Scripted,
) -> context_compaction::drive::autocompact::AutoCompactOutcome {
    use context_compaction::drive::autocompact::{auto_compact_if_needed, Tracking};
    let tracking = Tracking {
        turn_id: Some("t1".into()),
        ..Default::default()
    };
    block_on(auto_compact_if_needed(
        m,
        ctx,
        &tracking,
        &Default::default(),
        &RetryPolicy::with_base_ms(1),
        env,
    ))
    .unwrap()
}

/// Every path that compacts reports `start` once, first, and `done` last: auto-compaction
/// (its PreCompact hooks run before it chooses session memory or a full compaction),
/// session memory inside it and called on its own, and reactive compaction. Before, the
/// auto and reactive paths reported `preCompactHook` before `start`, and a compaction from
/// session memory reported `done` with no `start` at all.
#[test]
fn every_compaction_path_reports_one_start_first_and_done_last() {
    use context_compaction::drive::autocompact::Tracking;
    use context_compaction::drive::reactive::reactive_compact;
    let m = transcript(60, 4000); // ~60K tokens
    let check = |path: &str, env: &Scripted| {
        let phases = env.phases.borrow();
        assert_eq!(phases.first(), Some(&"start"), "{path}: {phases:?}");
        assert_eq!(phases.last(), Some(&"done"), "{path}: {phases:?}");
        let starts = phases.iter().filter(|p| **p == "start").count();
        assert_eq!(starts, 1, "{path}: {phases:?}");
    };
    let tracking = Tracking {
        turn_id: Some("t1".into()),
        ..Default::default()
    };
    let retry = RetryPolicy::with_base_ms(1);
    for memory in [None, Some("The session so far: sixty reads.")] {
        let mut env = Scripted::summary("s");
        env.memory = memory.map(str::to_string);
        let r = auto_compact(&m, &low_window(), &env)
            .result
            .expect("compacted");
        assert_eq!(r.from_session_memory, memory.is_some());
        check(&format!("auto, memory {memory:?}"), &env);

        let env = {
            let mut e = Scripted::summary("s");
            e.memory = memory.map(str::to_string);
            e
        };
        let rejection = "prompt is too long: 210000 tokens > 200000 maximum";
        block_on(reactive_compact(
            &m,
            &ctx(),
            rejection,
            Some(400),
            &tracking,
            &retry,
            &env,
        ))
        .unwrap();
        check(&format!("reactive, memory {memory:?}"), &env);
    }
    let mut env = Scripted::summary("unused");
    env.memory = Some("The session so far: sixty reads.".into());
    block_on(try_session_memory_compaction(&m, &ctx(), None, &env)).unwrap();
    check("session memory alone", &env);
}

/// A session memory too large for the compaction to get below the threshold is refused before
/// restoration: auto-compaction then compacts fully, and the SessionStart hooks run once, not
/// once for the refused session-memory attempt and again for the full compaction.
#[test]
fn a_session_memory_refused_for_its_size_runs_no_session_start_hook() {
    let m = transcript(60, 4000);
    let mut env = Scripted::summary("The session read sixty files.");
    env.memory = Some("notes on every file read so far ".repeat(6_000)); // ~48K tokens
    let r = auto_compact(&m, &low_window(), &env)
        .result
        .expect("compacted fully");
    assert!(!r.from_session_memory);
    let hooks = env.hooks.borrow();
    let starts = hooks
        .iter()
        .filter(|(k, _)| *k == HookKind::SessionStart)
        .count();
    assert_eq!(starts, 1, "{:?}", env.phases.borrow());
}

/// A summary written ahead whose swap already fails the checks it ends with, before anything
/// is restored, is not tried early: offered below the threshold, one as large as the messages
/// it replaces reported `start`, restored files, ran the SessionStart hooks and failed as not
/// smaller (`COMPACTION_NOT_SMALLER`, a failure towards the breaker), with nothing due after
/// it.
#[test]
fn a_summary_ahead_whose_swap_cannot_pass_is_not_tried() {
    use context_compaction::drive::autocompact::Tracking;
    use context_compaction::drive::preemptive::{
        auto_compact_with_ahead, Ahead, AheadSwap, AheadUse,
    };
    let c = low_window();
    let threshold =
        context_compaction::measure::thresholds::auto_compact_threshold(&c.model, &c.config);
    let run = |m: &[Message], summary_tokens: u64, early: bool, env: &Scripted| {
        let ahead = Ahead {
            cut: m.len() - 3, // the latest round kept
            summary: "word ".repeat(summary_tokens as usize * 4 / 5),
            usage: None,
            pre: Default::default(),
            calls: 1,
        };
        let tracking = Tracking {
            turn_id: Some("t1".into()),
            ..Default::default()
        };
        block_on(auto_compact_with_ahead(
            m,
            &c,
            &tracking,
            &Default::default(),
            &RetryPolicy::with_base_ms(1),
            env,
            Some(AheadSwap {
                summary: &ahead,
                early,
            }),
        ))
        .unwrap()
    };

    // Early: ~10K tokens of messages, far below the threshold; a summary of as many tokens.
    let m = transcript(10, 4000);
    let estimated = context_compaction::measure::tokens::estimate_all(&m, None).unwrap();
    assert!(estimated < threshold / 2, "{estimated} of {threshold}");
    let env = Scripted::summary("unused");
    let (out, used) = run(&m, estimated, true, &env);
    assert_eq!(used, AheadUse::None);
    assert!(!out.was_compacted);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(out.consecutive_failures, 0);
    assert_eq!(*env.phases.borrow(), Vec::<&str>::new());
    assert!(env.hooks.borrow().is_empty(), "{:?}", env.hooks.borrow());

    // At the threshold it is tried (refused for the bound): today's path compacts, one
    // `start` first and `done` last.
    let m = transcript(60, 4000);
    let env = Scripted::summary("The session read sixty files.");
    let (out, used) = run(&m, threshold, false, &env);
    assert_eq!(used, AheadUse::None);
    assert!(out.was_compacted, "{:?}", out.error);
    let phases = env.phases.borrow();
    assert_eq!(
        phases.iter().filter(|p| **p == "start").count(),
        1,
        "{phases:?}"
    );
    assert_eq!(phases.first(), Some(&"start"));
    assert_eq!(phases.last(), Some(&"done"));
}

/// The same when the swap keeps the latest user request from before its cut
/// (`keepLastUserMessage`): a summary that, with the request, is exactly as large as what it
/// replaces was tried early and failed as not smaller (the request left out of the measure).
#[test]
fn a_summary_ahead_as_large_as_what_it_replaces_with_the_request_kept_is_not_tried() {
    use context_compaction::drive::autocompact::Tracking;
    use context_compaction::drive::preemptive::{
        auto_compact_with_ahead, Ahead, AheadSwap, AheadUse,
    };
    use context_compaction::measure::tokens::estimate_all;
    use context_compaction::summarize::summary::{summary_message, summary_message_text};
    let c = CompactContext {
        keep_last_user_message: true,
        ..low_window()
    };
    let m = transcript(10, 4000);
    let cut = m.len() - 2; // the latest request (`u9`) before the cut, kept by the swap
    let size_before = estimate_all(&m, None).unwrap();
    let kept = estimate_all(&m[cut - 1..], None).unwrap();
    // The summary whose message takes exactly what the swap leaves room for.
    let target = size_before - kept;
    let mut summary = "x".repeat((target as usize).saturating_sub(1_000) * 4);
    while {
        let text = summary_message_text(&summary, true, true);
        let msg = summary_message(&text, true, "s", "b", "", &Default::default());
        estimate_all(&[msg], None).unwrap() < target
    } {
        summary.push('x');
    }
    let ahead = Ahead {
        cut,
        summary,
        usage: None,
        pre: Default::default(),
        calls: 1,
    };
    let env = Scripted::summary("unused");
    let tracking = Tracking {
        turn_id: Some("t1".into()),
        ..Default::default()
    };
    let (out, used) = block_on(auto_compact_with_ahead(
        &m,
        &c,
        &tracking,
        &Default::default(),
        &RetryPolicy::with_base_ms(1),
        &env,
        Some(AheadSwap {
            summary: &ahead,
            early: true,
        }),
    ))
    .unwrap();
    assert_eq!(used, AheadUse::None);
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!(out.consecutive_failures, 0);
    assert_eq!(*env.phases.borrow(), Vec::<&str>::new());
}

/// On a small window the summary request says how long the summary may be (a summary of the
/// usual 5,000–10,000 tokens would leave a 32K window's conversation at its threshold after
/// every compaction); on the default window it says nothing of it.
#[test]
fn a_small_window_asks_for_a_short_summary() {
    let m = transcript(60, 4000);
    let instruction_of = |c: &CompactContext| -> String {
        let env = Scripted::summary("short");
        block_on(compact_conversation(&m, c, &manual(None), &env)).unwrap();
        let req = env.requests.borrow()[0].clone();
        serde_json::to_string(&req.messages.last().unwrap()).unwrap()
    };
    // A local model's: a 32K window, 4K of output (threshold 14,904).
    let small = CompactContext {
        config: Config {
            context_window: Some(32_000.0),
            max_output_tokens: Some(4_096.0),
            ..Default::default()
        },
        ..ctx()
    };
    let text = instruction_of(&small);
    assert!(
        text.contains("Keep the summary under"),
        "{}",
        &text[text.len() - 400..]
    );
    let words = |text: &str| -> u64 {
        text.split("Keep the summary under ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap()
    };
    assert!((1_000..4_000).contains(&words(&text)), "{text}");
    // A 70K window (20K of output): a generous bound, above most summaries.
    assert!(words(&instruction_of(&low_window())) > 5_000);
    assert!(!instruction_of(&ctx()).contains("Keep the summary under"));
}
