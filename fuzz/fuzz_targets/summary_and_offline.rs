//! The summary side: `summary::build_summary_request`, `summary::extract_summary`,
//! `offline::summarize_messages` / `summarize_request` with small budgets, and
//! `loss::loss_report` / `append_missing`, on structured random conversations and on
//! arbitrary text / JSON.
//!
//! * never panics; every function is deterministic;
//! * the summary request is a valid Messages API request: a user message first and last
//!   (the instruction), roles alternating, no empty content, no thinking, no base64 media;
//! * `extract_summary` gives the trimmed `<summary>` part (a substring of the reply), and
//!   exactly `s.trim()` for `<analysis>a</analysis><summary>s</summary>`;
//! * the offline summaries are `<summary>…</summary>` replies that `summary_from_response`
//!   accepts, whatever the budget;
//! * after `append_missing`, `loss_report` finds no missing file and no missing error.

#![no_main]

use arbitrary::Arbitrary;
use context_compaction::model::messages::{Block, Content, Message};
use context_compaction::summarize::loss::{append_missing, loss_report};
use context_compaction::summarize::offline::{summarize_messages, summarize_request};
use context_compaction::summarize::summary::{
    build_summary_request, extract_summary, summary_from_response, SummaryResponse,
};
use context_compaction_test_support::Convo;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

#[derive(Debug, Arbitrary)]
struct Input {
    convo: Convo,
    reply: String,
    analysis: String,
    summary: String,
    budget: u16,
    instructions: Vec<String>,
    raw_request: Option<String>,
}

fn base64_data(msgs: &[Message]) -> Vec<String> {
    fn of(b: &Block, out: &mut Vec<String>) {
        match b {
            Block::Image(m) | Block::Document(m) => {
                if let Some(Some(s)) = &m.source {
                    if let Some(d) = s.get("data").and_then(Value::as_str) {
                        if d.len() >= 8 {
                            out.push(d.to_string());
                        }
                    }
                }
            }
            Block::ToolResult(r) => {
                if let Some(Some(context_compaction::model::messages::ToolResultContent::Blocks(
                    bs,
                ))) = &r.content
                {
                    for b in bs {
                        of(b, out);
                    }
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for m in msgs {
        if let Some(Content::Blocks(bs)) = m.content() {
            for b in bs {
                of(b, &mut out);
            }
        }
    }
    out
}

fn check_offline_reply(s: &str, what: &str) {
    assert!(
        s.starts_with("<summary>") && s.ends_with("</summary>"),
        "{what}: {s}"
    );
    let r = SummaryResponse {
        text: s.to_string(),
        stop_reason: Some("end_turn".into()),
        usage: None,
        compaction: None,
        problem: None,
    };
    assert!(
        summary_from_response(&r).is_ok(),
        "{what}: reply not accepted: {s}"
    );
}

fuzz_target!(|input: Input| {
    // extract_summary on arbitrary replies.
    let e = extract_summary(&input.reply);
    assert_eq!(e, extract_summary(&input.reply));
    assert_eq!(e, e.trim());
    if input.reply.contains("<summary>") {
        assert!(input.reply.contains(&e), "not a part of the reply: {e:?}");
    }
    if !input.analysis.contains("<summary>")
        && !input.summary.contains("<summary>")
        && !input.summary.contains("</summary>")
    {
        let reply = format!(
            "<analysis>{}</analysis>\n<summary>{}</summary>",
            input.analysis, input.summary
        );
        assert_eq!(extract_summary(&reply), input.summary.trim());
    }

    // The summary request.
    let msgs = input.convo.messages();
    context_compaction_test_support::typed::dump(&msgs);
    let instructions: Vec<String> = input.instructions.iter().take(3).cloned().collect();
    let request = build_summary_request("claude-sonnet-4-5", &msgs, &instructions);
    assert_eq!(
        request,
        build_summary_request("claude-sonnet-4-5", &msgs, &instructions)
    );
    let messages = request.messages_json();
    assert!(!messages.is_empty());
    assert_eq!(
        messages[0]["role"], "user",
        "request starts with {}",
        messages[0]
    );
    assert_eq!(messages.last().unwrap()["role"], "user");
    for (k, m) in messages.iter().enumerate() {
        let content = m["content"].as_array().expect("content array");
        assert!(!content.is_empty(), "request.messages[{k}] is empty");
        if k > 0 {
            assert_ne!(
                m["role"],
                messages[k - 1]["role"],
                "roles do not alternate at {k}"
            );
        }
        for b in content {
            assert_eq!(b["type"], "text", "request block not text: {b}");
        }
    }
    let request_json = serde_json::to_value(&request).unwrap();
    let request_text = request_json.to_string();
    for d in base64_data(&msgs) {
        assert!(
            !request_text.contains(&d),
            "base64 media reached the summary request"
        );
    }

    // Offline summaries with small budgets.
    let budget = u64::from(input.budget % 600);
    let s = summarize_messages(&msgs, budget);
    assert_eq!(
        s,
        summarize_messages(&msgs, budget),
        "summarize_messages not deterministic"
    );
    check_offline_reply(&s, "summarize_messages");
    let s2 = summarize_request(&request_json, budget);
    assert_eq!(
        s2,
        summarize_request(&request_json, budget),
        "summarize_request not deterministic"
    );
    check_offline_reply(&s2, "summarize_request");
    if let Some(raw) = &input.raw_request {
        let v = serde_json::from_str::<Value>(raw).unwrap_or_else(
            |_| serde_json::json!({"messages": [{"role": "user", "content": raw}]}),
        );
        let s3 = summarize_request(&v, budget);
        assert_eq!(s3, summarize_request(&v, budget));
        check_offline_reply(&s3, "summarize_request(raw)");
    }

    // Loss report and the list it makes.
    for summary in [extract_summary(&s), e.clone()] {
        let report = loss_report(&msgs, &summary);
        assert_eq!(
            report,
            loss_report(&msgs, &summary),
            "loss_report not deterministic"
        );
        let completed = append_missing(&summary, &report);
        if report.is_empty() {
            assert_eq!(completed, summary);
        }
        let after = loss_report(&msgs, &completed);
        assert!(
            after.files.is_empty(),
            "files still missing after append_missing: {:?}",
            after.files
        );
        assert!(
            after.errors.is_empty(),
            "errors still missing after append_missing: {:?}",
            after.errors
        );
    }
});
