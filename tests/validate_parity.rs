//! `validate_for_api` checks the API view's blocks as borrowed from the typed messages; it
//! used to check the JSON of the whole view (`to_api_messages`). The checks on the JSON are
//! kept here, as they were, as the reference: both must give the same problems, in the same
//! order, with the same words, on the shared transcripts (and each with one line left out),
//! on generated valid conversations broken in small ways, and on generated messages of every
//! block type with clashing ids, blank texts, split responses, boundaries, attachments and
//! sub-agent lines (and, checked on the messages, the caller's API messages with empty
//! content, which the view leaves out). `api_view`, which `toApiMessages` writes without building the values of
//! `to_api_messages`, must write the same text on all of them.

use std::collections::HashSet;
use std::path::PathBuf;

use context_compaction::model::messages::{Content, Kind, Message};
use context_compaction::transforms::messages_api::{
    api_view, media_source_problem, to_api_messages, validate_for_api, Problem,
};
use context_compaction::transforms::transcript::parse_transcript;
use context_compaction_test_support::strategies::{convo, convo_with_boundary};
use proptest::prelude::*;
use serde_json::{json, Value};

/// The validator as it was: its checks on the JSON of [`to_api_messages`].
fn reference(messages: &[Message]) -> Vec<Problem> {
    fn ids(content: &[Value], ty: &str, key: &str) -> Vec<String> {
        content
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some(ty))
            .filter_map(|b| b.get(key).and_then(Value::as_str).map(str::to_string))
            .collect()
    }
    let result_ids = |content: &[Value]| ids(content, "tool_result", "tool_use_id");
    let view = to_api_messages(messages);
    let mut problems = Vec::new();
    let mut say = |message: usize, problem: String| problems.push(Problem { message, problem });
    if view.is_empty() {
        say(0, "there is no message to send".into());
        return problems;
    }
    let compaction_first = view[0]["content"]
        .get(0)
        .and_then(|b| b.get("type"))
        .and_then(Value::as_str)
        == Some("compaction");
    if view[0]["role"] != "user" && !compaction_first {
        say(
            0,
            "the first message must be a user message (or begin with a compaction block)".into(),
        );
    }
    let empty = Vec::new();
    let caller = |b: &Value| -> Option<String> {
        (b["type"] == "tool_use")
            .then(|| b["caller"]["tool_id"].as_str().map(str::to_string))
            .flatten()
    };
    let server_results = |content: &[Value]| -> Vec<(String, String)> {
        content
            .iter()
            .filter_map(|b| {
                let ty = b["type"].as_str()?;
                let id = b["tool_use_id"].as_str()?;
                ty.ends_with("_tool_result")
                    .then(|| (ty.to_string(), id.to_string()))
            })
            .collect()
    };
    let mut seen_calls = HashSet::new();
    let mut seen_ids: HashSet<String> = HashSet::new();
    for (i, m) in view.iter().enumerate() {
        let content = m["content"].as_array().unwrap_or(&empty);
        if content.is_empty() {
            say(i, "empty content".into());
        }
        if content
            .iter()
            .any(|b| b["type"] == "text" && b["text"].as_str().is_some_and(|t| t.trim().is_empty()))
        {
            say(
                i,
                "an empty or blank text block (text blocks must contain non-whitespace text)"
                    .into(),
            );
        }
        let media = |b: &Value| match b["type"].as_str() {
            Some(kind @ ("image" | "document")) => media_source_problem(kind, b.get("source")),
            _ => None,
        };
        for b in content {
            let problem = if b["type"] == "tool_result" {
                b["content"]
                    .as_array()
                    .and_then(|inner| inner.iter().find_map(media))
            } else {
                media(b)
            };
            if let Some(problem) = problem {
                say(i, problem);
            }
        }
        for id in
            ids(content, "tool_use", "id")
                .into_iter()
                .chain(ids(content, "server_tool_use", "id"))
        {
            if !seen_calls.insert(id.clone()) {
                say(i, format!("tool_use id {id} is used more than once"));
            }
        }
        seen_ids.extend(
            content
                .iter()
                .filter_map(|b| b["id"].as_str().map(str::to_string)),
        );
        for (ty, id) in server_results(content) {
            if !seen_ids.contains(&id) {
                say(i, format!("{ty} {id} answers no server_tool_use before it"));
            }
        }
        if m["role"] == "assistant" {
            let calls = ids(content, "tool_use", "id");
            let answered: HashSet<String> = match view.get(i + 1) {
                Some(n) if n["role"] == "user" => {
                    result_ids(n["content"].as_array().unwrap_or(&empty))
                        .into_iter()
                        .collect()
                }
                _ => Default::default(),
            };
            for c in &calls {
                if !answered.contains(c) {
                    say(
                        i,
                        format!("tool_use {c} has no tool_result in the next message"),
                    );
                }
            }
            let server_calls = ids(content, "server_tool_use", "id");
            let server_results: HashSet<&str> = content
                .iter()
                .filter(|b| {
                    b.get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t.ends_with("_tool_result"))
                })
                .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
                .collect();
            let paused = i + 1 == view.len();
            for c in &server_calls {
                if paused || server_results.contains(c.as_str()) {
                    continue;
                }
                if content.iter().any(|b| caller(b).as_deref() == Some(c)) {
                    // Programmatic: the next assistant message holds its result, or calls
                    // from its code again (then the one after), or is the last; or none
                    // comes.
                    let mut follows = true;
                    for k in i + 1..view.len() {
                        if view[k]["role"] != "assistant" {
                            continue;
                        }
                        let later = view[k]["content"].as_array().unwrap_or(&empty);
                        if later.iter().any(|b| {
                            b["type"]
                                .as_str()
                                .is_some_and(|t| t.ends_with("_tool_result"))
                                && b["tool_use_id"] == c.as_str()
                        }) {
                            break;
                        }
                        if !later.iter().any(|b| caller(b).as_deref() == Some(c))
                            && k + 1 < view.len()
                        {
                            follows = false;
                            break;
                        }
                    }
                    if !follows {
                        say(
                            i,
                            format!(
                                "server_tool_use {c} has no result in the response after the \
                                 results of the client tools its code called"
                            ),
                        );
                    }
                    continue;
                }
                say(
                    i,
                    format!("server_tool_use {c} has no result in the same message"),
                );
            }
        } else {
            let previous_calls: HashSet<String> = match i.checked_sub(1).map(|p| &view[p]) {
                Some(p) if p["role"] == "assistant" => {
                    ids(p["content"].as_array().unwrap_or(&empty), "tool_use", "id")
                        .into_iter()
                        .collect()
                }
                _ => Default::default(),
            };
            for r in &result_ids(content) {
                if !previous_calls.contains(r) {
                    say(i, format!("tool_result {r} does not follow its tool_use"));
                }
            }
            // The results answering the calls before come first in the message.
            if let Some(k) = content.iter().position(|b| b["type"] != "tool_result") {
                let before = content[k]["type"].as_str().unwrap_or("untyped");
                for r in &result_ids(&content[k..]) {
                    if previous_calls.contains(r) {
                        say(
                            i,
                            format!(
                                "tool_result of tool_use {r} comes after a {before} block (the \
                                 tool_result blocks answering tool_use must come first in the \
                                 next message)"
                            ),
                        );
                    }
                }
            }
        }
    }
    // Added after the rest: the caller's API messages with empty content, which the view
    // leaves out, wherever the API refuses them (all but a final assistant message), each
    // placed at the last view message of the messages before it.
    let start = messages
        .iter()
        .rposition(|m| (m.is_compact_boundary() || m.holds_compaction()) && !m.is_sidechain())
        .map_or(0, |b| b + usize::from(messages[b].is_compact_boundary()));
    let sent = |m: &Message| {
        !m.is_sidechain() && matches!(m.kind(), Kind::User | Kind::Assistant | Kind::Attachment)
    };
    let last_sent = messages.iter().rposition(sent);
    for (k, m) in messages.iter().enumerate().skip(start) {
        let role = match m.kind() {
            Kind::User => "user",
            Kind::Assistant => "assistant",
            _ => continue,
        };
        let empty = match m.content() {
            Some(Content::Text(t)) => t.is_empty(),
            Some(Content::Blocks(bs)) => bs.is_empty(),
            None => false,
        };
        if !empty || m.is_transcript() || !sent(m) || (role == "assistant" && Some(k) == last_sent)
        {
            continue;
        }
        say(
            to_api_messages(&messages[..k]).len().saturating_sub(1),
            format!(
                "messages[{k}] ({role}) has empty content: the API refuses it anywhere but as \
                 the final assistant message (toApiMessages leaves it out)"
            ),
        );
    }
    problems
}

/// The validator agrees with the reference, and `api_view` (what `toApiMessages` writes)
/// writes the same text as the values of `to_api_messages`.
fn agree(messages: &[Message]) -> Result<(), String> {
    let (new, old) = (validate_for_api(messages), reference(messages));
    if new != old {
        return Err(format!("validate_for_api {new:?}\nreference {old:?}"));
    }
    let written = serde_json::to_string(&api_view(messages)).unwrap();
    let values = serde_json::to_string(&to_api_messages(messages)).unwrap();
    if written != values {
        return Err(format!("api_view {written}\nto_api_messages {values}"));
    }
    Ok(())
}

/// `messages` and, for every position, the same with that message left out, and with it and
/// the next swapped.
fn with_small_breaks(messages: &[Message], mut check: impl FnMut(&[Message])) {
    check(messages);
    for k in 0..messages.len() {
        let mut fewer = messages.to_vec();
        fewer.remove(k);
        check(&fewer);
        if k + 1 < messages.len() {
            let mut swapped = messages.to_vec();
            swapped.swap(k, k + 1);
            check(&swapped);
        }
    }
}

#[test]
fn agrees_on_the_shared_transcripts() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/transcripts");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
            continue;
        }
        let Ok(messages) = parse_transcript(&std::fs::read_to_string(&path).unwrap()) else {
            continue;
        };
        files += 1;
        let name = path.display().to_string();
        agree(&messages).unwrap_or_else(|e| panic!("{name}: {e}"));
        // Each line left out (or swapped with the next) in the last 60 lines: broken pairs,
        // merged responses split, a boundary lost.
        let from = messages.len().saturating_sub(60);
        let tail = &messages[from..];
        with_small_breaks(tail, |m| {
            let mut all = messages[..from].to_vec();
            all.extend_from_slice(m);
            agree(&all).unwrap_or_else(|e| panic!("{name}: {e}"));
        });
    }
    assert!(files > 0, "no transcript in {}", dir.display());
}

fn id() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["a", "b", "c"])
}

fn text() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", " \n", "hi"])
}

fn block() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(|t| json!({"type": "text", "text": t})),
        id().prop_map(|i| json!({"type": "tool_use", "id": i, "name": "Read", "input": {}})),
        id().prop_map(
            |i| json!({"type": "tool_use", "id": i, "name": "apply_patch", "input": "x"})
        ),
        id().prop_map(
            |i| json!({"type": "server_tool_use", "id": i, "name": "web_search", "input": {}})
        ),
        (id(), id()).prop_map(
            |(i, s)| json!({"type": "tool_use", "id": i, "name": "Read", "input": {},
            "caller": {"type": "code_execution_20250825", "tool_id": s}})
        ),
        id().prop_map(|i| json!({"type": "tool_result", "tool_use_id": i, "content": "r"})),
        id().prop_map(
            |i| json!({"type": "web_search_tool_result", "tool_use_id": i, "content": []})
        ),
        id().prop_map(|i| json!({"type": "mystery_tool_result", "tool_use_id": i})),
        id().prop_map(|i| json!({"type": "mystery", "id": i, "tool_use_id": i, "text": ""})),
        Just(json!({"type": "compaction", "content": "summary"})),
        Just(json!({"type": "compaction", "content": null})),
        Just(json!({"type": "thinking", "thinking": "t", "signature": "s"})),
        Just(json!({"type": "redacted_thinking", "data": "d"})),
        Just(
            json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}})
        ),
    ]
}

fn content() -> impl Strategy<Value = Value> {
    prop_oneof![
        text().prop_map(Value::from),
        prop::collection::vec(block(), 0..4).prop_map(Value::Array),
    ]
}

/// An API-shape message or a Claude Code line.
fn message() -> impl Strategy<Value = Value> {
    let role = prop::sample::select(vec!["user", "assistant"]);
    let response = prop::option::of(prop::sample::select(vec!["r1", "r2"]));
    prop_oneof![
        3 => (role.clone(), content()).prop_map(|(r, c)| json!({"role": r, "content": c})),
        6 => (role, content(), response, any::<bool>()).prop_map(|(r, c, id, side)| {
            let mut message = json!({"role": r, "content": c});
            if let Some(id) = id {
                message["id"] = json!(id);
            }
            json!({"type": r, "isSidechain": side, "message": message})
        }),
        1 => text().prop_map(|t| json!({"type": "attachment", "attachment": {"type": "hook_success", "content": t}})),
        1 => Just(json!({"type": "attachment", "attachment": {"type": "todo", "items": []}})),
        1 => Just(json!({"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"})),
        1 => Just(json!({"type": "progress", "data": {}})),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn agrees_on_generated_messages(values in prop::collection::vec(message(), 0..12)) {
        // API-shape messages and lines are not mixed in one conversation: each list is read
        // once as it is and once with only its lines, or only its API-shape messages.
        let lines: Vec<Value> = values.iter().filter(|v| v.get("type").is_some()).cloned().collect();
        let api: Vec<Value> = values.iter().filter(|v| v.get("type").is_none()).cloned().collect();
        for list in [values, lines, api] {
            if let Ok(messages) = Message::parse_all(Value::Array(list)) {
                agree(&messages).map_err(TestCaseError::fail)?;
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn agrees_on_generated_conversations_broken_in_small_ways(c in convo(), d in convo_with_boundary()) {
        for messages in [c.messages(), d.messages()] {
            let mut failure = None;
            with_small_breaks(&messages, |m| {
                if failure.is_none() {
                    failure = agree(m).err();
                }
            });
            if let Some(e) = failure {
                return Err(TestCaseError::fail(e));
            }
        }
    }
}

/// A user message between a call and its result, and a message whose text comes before its
/// results, as API messages (reported) and as transcript lines (whose merged message sends
/// its results first): both validators give the same problems.
#[test]
fn agrees_on_results_after_other_blocks() {
    let call = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Read", "input": {}},
        {"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]});
    let result = |id: &str| json!({"type": "tool_result", "tool_use_id": id, "content": "r"});
    let text = json!({"type": "text", "text": "also b"});
    let line = |v: &Value| json!({"type": v["role"], "message": v});
    let user = |c: Value| json!({"role": "user", "content": c});
    let go = user(json!("go"));
    let conversations = [
        vec![
            go.clone(),
            call.clone(),
            user(json!([text, result("t1"), result("t2")])),
        ],
        vec![
            go.clone(),
            call.clone(),
            user(json!([result("t1"), text, result("t2")])),
        ],
        vec![
            go.clone(),
            call.clone(),
            user(json!("also b")),
            user(json!([result("t1"), result("t2")])),
        ],
        vec![
            go.clone(),
            call.clone(),
            user(json!([result("t1")])),
            user(json!("also b")),
            user(json!([result("t2")])),
        ],
    ];
    for c in conversations {
        let api = Message::parse_all(Value::Array(c.clone())).unwrap();
        agree(&api).unwrap();
        assert!(!validate_for_api(&api).is_empty(), "{c:?}");
        let lines = Message::parse_all(Value::Array(c.iter().map(line).collect())).unwrap();
        agree(&lines).unwrap();
        assert!(validate_for_api(&lines).is_empty(), "{c:?}");
    }
}
