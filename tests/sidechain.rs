//! Compacting a sub-agent's own transcript, and a session file holding two branches: the
//! compacted conversation, written after the history and read again as a file, is the
//! conversation the compaction meant (its kept messages sent, each tool call once).

use std::path::PathBuf;

use serde_json::{json, Value};

use context_compaction::drive::pipeline::{
    compact_conversation, CompactContext, CompactOptions, CompactionResult,
};
use context_compaction::drive::retry::RetryPolicy;
use context_compaction::drive::session_memory::try_session_memory_compaction;
use context_compaction::model::messages::Message;
use context_compaction::transforms::messages_api::{to_api_messages, validate_for_api};
use context_compaction::transforms::transcript::{parse_transcript, serialize_transcript};
use context_compaction_test_support::env::{block_on, transcript, Scripted};

const AGENT: &str = "cc_long_autocompact_4d5611e5.agent-acompact-e1f845.jsonl";

fn ctx() -> CompactContext {
    CompactContext {
        model: "claude-sonnet-4-5".into(),
        ..Default::default()
    }
}

fn keep_last() -> CompactOptions {
    CompactOptions {
        keep_last_user_message: true,
        retry: RetryPolicy::with_base_ms(10),
        ..Default::default()
    }
}

/// Lines as a file holds them: JSON text, one object a line, read back as a file is.
fn file_of(lines: &[Value]) -> Vec<Message> {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    parse_transcript(&text).unwrap()
}

/// The compacted conversation as the session file holds it once the compaction's lines are
/// written: read again from its text (the marks of the lines read before are gone).
fn resumed(r: &CompactionResult, input: &[Message]) -> Vec<Message> {
    let out = r.post_compact_messages(input);
    parse_transcript(&serialize_transcript(&out).unwrap()).unwrap()
}

/// A sub-agent's own file as Claude Code writes it: every line `isSidechain: true` with the
/// agent's id; a request, 60 Read calls with their results, a last request.
fn sub_agent_file() -> Vec<Message> {
    let base = json!({"isSidechain": true, "agentId": "a1b2c3", "sessionId": "s", "cwd": "/w",
        "version": "2.1.38", "userType": "external"});
    let mut lines = Vec::new();
    let mut parent = Value::Null;
    let mut push = |mut l: Value| {
        let uuid = format!("x{}", lines.len() + 1);
        for (k, v) in base.as_object().unwrap() {
            l[k] = v.clone();
        }
        l["uuid"] = json!(uuid);
        l["parentUuid"] = parent.clone();
        parent = json!(uuid);
        lines.push(l);
    };
    push(json!({"type": "user", "message": {"role": "user",
        "content": "Review every file in src/ and report problems."}}));
    for i in 0..60 {
        push(
            json!({"type": "assistant", "message": {"id": format!("msg_{i}"), "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "tool_use", "id": format!("toolu_{i}"),
            "name": "Read", "input": {"file_path": format!("/w/src/f{i}.rs")}}],
            "usage": {"input_tokens": 5, "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 15_000 + i * 2_500, "output_tokens": 20}}}),
        );
        push(
            json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": format!("toolu_{i}"), "content": format!("fn f{i}() {{}}\n").repeat(800)}]}}),
        );
    }
    push(json!({"type": "user", "message": {"role": "user",
        "content": "Also check the tests directory please."}}));
    file_of(&lines)
}

/// Every line of `out` is a line of agent `agent`'s own file.
fn all_of_the_agent(out: &[Message], agent: &str) {
    for (i, m) in out.iter().enumerate() {
        let v = m.to_value();
        assert_eq!(v["isSidechain"], true, "line {i}: {v}");
        assert_eq!(v["agentId"], agent, "line {i}: {v}");
    }
}

#[test]
fn a_sub_agent_file_compacted_by_session_memory_keeps_sending_its_kept_messages() {
    let m = sub_agent_file();
    assert_eq!(to_api_messages(&m).len(), 121);
    let mut env = Scripted::summary("unused");
    env.memory = Some(format!("Sub-agent reviewing src/. {}", "memo ".repeat(100)));
    let r = block_on(try_session_memory_compaction(&m, &ctx(), None, &env)).unwrap();
    assert!(
        r.messages_to_keep.len() > 10,
        "{}",
        r.messages_to_keep.len()
    );
    let out = resumed(&r, &m);
    all_of_the_agent(&out, "a1b2c3");
    let boundary = r.boundary_marker.to_value();
    assert_eq!(boundary["sessionId"], "s", "{boundary}");
    assert_eq!(r.summary_messages[0].to_value()["cwd"], "/w");
    // The summary, then the kept messages: the last request among them.
    let api = to_api_messages(&out);
    assert!(api.len() > 10, "{} API messages", api.len());
    assert!(json!(api)
        .to_string()
        .contains("Also check the tests directory"));
    assert!(
        validate_for_api(&out).is_empty(),
        "{:?}",
        validate_for_api(&out)
    );
}

#[test]
fn a_sub_agent_file_compacted_in_full_keeps_its_last_request() {
    let m = sub_agent_file();
    let env = Scripted::summary("Reviewed src/f0..f59.");
    let r = block_on(compact_conversation(&m, &ctx(), &keep_last(), &env)).unwrap();
    assert_eq!(r.messages_to_keep.len(), 1);
    let out = resumed(&r, &m);
    all_of_the_agent(&out, "a1b2c3");
    let api = to_api_messages(&out);
    assert_eq!(
        api.len(),
        1,
        "the summary and the request form one user message"
    );
    assert!(json!(api)
        .to_string()
        .contains("Also check the tests directory"));
    assert!(json!(api).to_string().contains("Reviewed src/f0..f59."));
}

#[test]
fn the_real_sub_agent_file_compacted_keeps_its_last_request_and_its_session_fields() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/transcripts")
        .join(AGENT);
    let m = parse_transcript(&std::fs::read_to_string(path).unwrap()).unwrap();
    let before = to_api_messages(&m);
    assert_eq!(before.len(), 2);
    let env = Scripted::summary("The session fixed compile errors in the renderer.");
    let r = block_on(compact_conversation(&m, &ctx(), &keep_last(), &env)).unwrap();
    let out = resumed(&r, &m);
    all_of_the_agent(&out, "acompact-e1f845");
    let b = r.boundary_marker.to_value();
    assert_eq!(b["sessionId"], "4d5611e5-241a-462a-8d15-5122611a9569");
    assert_eq!(b["gitBranch"], "spotter-dov");
    let api = json!(to_api_messages(&out)).to_string();
    assert!(api.contains("The session fixed compile errors"));
    assert!(
        api.contains("Your task is to create a detailed summary"),
        "the kept request is sent"
    );
}

#[test]
fn main_chain_compactions_write_main_chain_lines_without_an_agent_id() {
    let m = transcript(30, 4_000);
    let env = Scripted::summary("Thirty reads.");
    let r = block_on(compact_conversation(&m, &ctx(), &keep_last(), &env)).unwrap();
    let b = r.boundary_marker.to_value();
    assert_eq!(b["isSidechain"], false);
    assert!(b.get("agentId").is_none());
    assert_eq!(b["sessionId"], "s1");
    for s in &r.summary_messages {
        assert_eq!(s.to_value()["isSidechain"], false);
    }
}

/// A file holding two branches: 30 rounds, then a rewind to round 19 whose response (the
/// same `message.id` and tool call `t20` as the abandoned round 20) is written again under
/// round 19's result, followed by a new request. The chain from the leaf is rounds 0–19 and
/// the new branch; rounds 20–29 are abandoned.
fn branched_file() -> Vec<Message> {
    let mut lines: Vec<Value> = transcript(30, 4_000)
        .iter()
        .map(Message::to_value)
        .collect();
    let round20 = lines.iter().find(|l| l["uuid"] == "a20").unwrap().clone();
    let mut again = round20.clone();
    again["uuid"] = json!("b_a20");
    again["parentUuid"] = json!("r19");
    lines.push(again);
    lines.push(
        json!({"type": "user", "uuid": "b_r20", "parentUuid": "b_a20", "sessionId": "s1",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t20",
        "content": "short this time"}]}}),
    );
    lines.push(
        json!({"type": "user", "uuid": "b_u", "parentUuid": "b_r20", "sessionId": "s1",
        "message": {"role": "user", "content": "Now summarize what you found."}}),
    );
    file_of(&lines)
}

#[test]
fn session_memory_on_a_branched_file_keeps_only_the_chain_from_the_leaf() {
    let m = branched_file();
    assert!(validate_for_api(&m).is_empty());
    let mut env = Scripted::summary("unused");
    env.memory = Some("Rounds 0 to 19 read files. ".repeat(20));
    let r = block_on(try_session_memory_compaction(&m, &ctx(), None, &env)).unwrap();
    let uuid = |i: usize| m[i].uuid().unwrap_or("").to_string();
    let kept: Vec<String> = r.messages_to_keep.iter().map(|&i| uuid(i)).collect();
    assert!(kept.iter().any(|u| u == "r19"), "{kept:?}");
    for abandoned in ["a20", "r20", "u25", "r29"] {
        assert!(
            !kept.iter().any(|u| u == abandoned),
            "{abandoned} kept: {kept:?}"
        );
    }
    assert!(kept.ends_with(&["b_a20".into(), "b_r20".into(), "b_u".into()]));
    // Its boundary links to the last line of the chain it replaced, not the dead branch.
    let last = r.boundary_marker.to_value()["logicalParentUuid"].clone();
    assert!(
        !["r29", "a29", "u29"].contains(&last.as_str().unwrap()),
        "{last}"
    );
    let out = resumed(&r, &m);
    assert!(
        validate_for_api(&out).is_empty(),
        "{:?}",
        validate_for_api(&out)
    );
    let api = json!(to_api_messages(&out)).to_string();
    assert_eq!(api.matches("\"id\":\"t20\"").count(), 1, "t20 sent once");
    assert!(!api.contains("\"id\":\"t25\""));
}

#[test]
fn a_full_compaction_of_a_branched_file_keeps_only_the_chain_from_the_leaf() {
    let m = branched_file();
    let env = Scripted::summary("Rounds 0 to 19 read files.");
    let r = block_on(compact_conversation(&m, &ctx(), &keep_last(), &env)).unwrap();
    let out = resumed(&r, &m);
    assert!(validate_for_api(&out).is_empty());
    assert!(json!(to_api_messages(&out))
        .to_string()
        .contains("Now summarize what you found."));
}
