//! Pinned content (`context.pinned`): texts and messages that must survive every compaction
//! verbatim and exactly once. The pipeline adds each after the summary unless a message it
//! keeps already carries it.
//!
//! A pinned message that holds one half of a tool pair (an assistant turn's `tool_use`, or
//! the user turn with its `tool_result`) cannot stand alone: the API refuses a call without
//! its result in the next message, and a result without its call. So:
//!
//! * when the conversation holds the pinned message, it is kept where it is, together with
//!   its partner (the results of its calls, the calls of its results, the other lines of its
//!   response): both halves stay verbatim, in their order ([`kept_for_pins`]);
//! * otherwise (the pinned message is not in the conversation, or its partner is missing),
//!   it is added after the summary, and each call or result it holds that no neighbouring
//!   pinned message pairs is rewritten as text saying what it was — the call's name, id and
//!   input, the result's content — so nothing is lost and the conversation stays valid
//!   ([`after_summary`]).

use std::collections::BTreeSet;

use serde_json::{json, Value};

use crate::model::error::Result;
use crate::model::hash::FastMap;
use crate::model::messages::{Block, Content, Kind, Message, ToolResultContent};
use crate::model::view::{json_text, ConversationView};

/// Content that must survive every compaction verbatim and exactly once (`context.pinned`).
#[derive(Clone, Debug, PartialEq)]
pub enum Pinned {
    /// A text, added as a user message.
    Text(String),
    /// A message, added as given.
    Message(Box<Message>),
}

impl Pinned {
    /// Whether `m` already carries this pinned content.
    pub fn matches(&self, m: &Message) -> bool {
        match self {
            Pinned::Message(p) => p.same_when_compacting(m),
            Pinned::Text(t) => match m.content() {
                Some(Content::Text(s)) => s == t,
                Some(Content::Blocks(bs)) => {
                    matches!(bs.as_slice(), [Block::Text(b)] if &b.text == t)
                }
                None => false,
            },
        }
    }

    /// The message to add, in the conversation's shape.
    pub fn to_message(&self, transcript: bool, uuid: String) -> Message {
        match self {
            Pinned::Message(m) => (**m).clone(),
            Pinned::Text(t) if transcript => Message::from_value(
                json!({"type": "user", "uuid": uuid, "isSidechain": false,
                       "message": {"role": "user", "content": t}}),
                "pinned",
            )
            .expect("pinned line is well-formed"),
            Pinned::Text(t) => Message::api_user_text(t.clone()),
        }
    }
}

/// Checks that every pinned message is in the Anthropic form the core reads (the bindings
/// convert a message of another shape first): a role it does not have is `INVALID_MESSAGE` at
/// `context.pinned[k].role`.
pub fn check_forms(pinned: &[Pinned]) -> Result<()> {
    for (k, item) in pinned.iter().enumerate() {
        if let Pinned::Message(m) = item {
            m.check_role(&|| format!("context.pinned[{k}]"))?;
        }
    }
    Ok(())
}

/// Whether `m` holds a client tool call or tool result (one half of a tool pair).
fn holds_tool_pair_half(m: &Message) -> bool {
    matches!(m.content(), Some(Content::Blocks(bs))
        if bs.iter().any(|b| matches!(b, Block::ToolUse(_) | Block::ToolResult(_))))
}

/// The messages of `messages[start..]` a compaction keeps verbatim for the pinned messages
/// that hold half of a tool pair, ascending: for each such pinned message found there (its
/// latest occurrence), that message with its partners — the messages holding the results of
/// its calls and the calls of its results, and the other lines of the same response,
/// repeated until nothing is added. A pinned message whose pair is incomplete in the
/// conversation (a call never answered, a result whose call is gone) is not kept here: it
/// is added after the summary with those blocks as text ([`after_summary`]).
pub fn kept_for_pins(pinned: &[Pinned], messages: &[Message], start: usize) -> Result<Vec<usize>> {
    let mut out = BTreeSet::new();
    let pins: Vec<&Message> = pinned
        .iter()
        .filter_map(|p| match p {
            Pinned::Message(m) if holds_tool_pair_half(m) => Some(&**m),
            _ => None,
        })
        .collect();
    if pins.is_empty() || start >= messages.len() {
        return Ok(Vec::new());
    }
    let index = messages.tool_index(start, false)?;
    // Per message: the calls it holds, the results it holds (with the call each answers);
    // per call: the messages holding its results; per response id: its lines.
    let mut calls_in: FastMap<usize, Vec<usize>> = FastMap::default();
    for (u, e) in index.uses.iter().enumerate() {
        calls_in.entry(e.message).or_default().push(u);
    }
    let mut results_in: FastMap<usize, Vec<Option<usize>>> = FastMap::default();
    let mut answers: Vec<Vec<usize>> = vec![Vec::new(); index.uses.len()];
    for r in &index.results {
        results_in.entry(r.message).or_default().push(r.call);
        if let Some(c) = r.call {
            answers[c].push(r.message);
        }
    }
    let mut lines: FastMap<&str, Vec<usize>> = FastMap::default();
    for (i, m) in messages.iter().enumerate().skip(start) {
        if m.kind() == Kind::Assistant && !m.is_sidechain() {
            if let Some(id) = m.message_id() {
                lines.entry(id).or_default().push(i);
            }
        }
    }
    for pin in pins {
        let Some(at) = (start..messages.len())
            .rev()
            .find(|&i| !messages[i].is_sidechain() && pin.same_when_compacting(&messages[i]))
        else {
            continue;
        };
        let mut group = BTreeSet::new();
        let mut todo = vec![at];
        let mut complete = true;
        while let Some(g) = todo.pop() {
            if !group.insert(g) {
                continue;
            }
            for &u in calls_in.get(&g).into_iter().flatten() {
                complete &= !answers[u].is_empty();
                todo.extend(&answers[u]);
            }
            for call in results_in.get(&g).into_iter().flatten() {
                match call {
                    Some(c) => todo.push(index.uses[*c].message),
                    None => complete = false,
                }
            }
            if let Some(id) = messages[g]
                .message_id()
                .filter(|_| messages[g].kind() == Kind::Assistant)
            {
                todo.extend(lines.get(id).into_iter().flatten());
            }
        }
        if complete {
            out.extend(group);
        }
    }
    Ok(out.into_iter().collect())
}

/// The pinned items to add after the summary (whose line id is `summary_uuid`), in order,
/// with the indices into `pinned` of those added and of those among them that were
/// rewritten: an item a `kept` message already carries is not added twice, and a call or
/// result of an added message that its neighbours do not pair (the call's results are not in
/// the next added message, the result's call not in the one before) becomes text saying
/// what it was. Pinned texts in a transcript continue the summary's `parentUuid` chain.
pub fn after_summary(
    pinned: &[Pinned],
    kept: &[Message],
    transcript: bool,
    summary_uuid: &str,
    mut new_uuid: impl FnMut() -> String,
) -> AfterSummary {
    let mut messages = Vec::new();
    let mut added = Vec::new();
    let mut parent = summary_uuid.to_string();
    for (k, p) in pinned.iter().enumerate() {
        if kept.iter().any(|m| p.matches(m)) {
            continue;
        }
        let mut m = p.to_message(transcript, new_uuid());
        if m.is_transcript() && matches!(p, Pinned::Text(_)) {
            m.extra
                .insert("parentUuid".into(), Value::String(parent.clone()));
            if let Some(u) = m.uuid() {
                parent = u.to_string();
            }
        }
        messages.push(m);
        added.push(k);
    }
    let rewritten = unpaired_as_text(&mut messages)
        .into_iter()
        .map(|j| added[j])
        .collect();
    AfterSummary {
        messages,
        added,
        rewritten,
    }
}

/// What [`after_summary`] adds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AfterSummary {
    /// The messages, in order.
    pub messages: Vec<Message>,
    /// For each, the index into `pinned` of the item it carries.
    pub added: Vec<usize>,
    /// The indices into `pinned` of the items whose message was rewritten (unpaired calls or
    /// results as text): not the caller's message as given any more.
    pub rewritten: Vec<usize>,
}

/// The ids of the client calls (`tool_use`) of `m`, or of the results (`tool_result`).
fn ids(m: &Message, calls: bool) -> Vec<String> {
    let Some(Content::Blocks(bs)) = m.content() else {
        return Vec::new();
    };
    bs.iter()
        .filter_map(|b| match b {
            Block::ToolUse(u) if calls => Some(u.id.clone()),
            Block::ToolResult(r) if !calls => Some(r.tool_use_id.clone()),
            _ => None,
        })
        .collect()
}

/// Rewrites, in the sequence `messages` (which follows the summary, a user message), each
/// call not answered by a result in the next message and each result not following its call
/// in the message before, as text blocks. Returns the positions of the messages changed.
fn unpaired_as_text(messages: &mut [Message]) -> Vec<usize> {
    let n = messages.len();
    let mut changed = Vec::new();
    for j in 0..n {
        let kind = messages[j].kind();
        let answered: Vec<String> =
            if kind == Kind::Assistant && j + 1 < n && messages[j + 1].kind() == Kind::User {
                ids(&messages[j + 1], false)
            } else {
                Vec::new()
            };
        let called: Vec<String> =
            if kind == Kind::User && j > 0 && messages[j - 1].kind() == Kind::Assistant {
                ids(&messages[j - 1], true)
            } else {
                Vec::new()
            };
        let Some(Content::Blocks(bs)) = messages[j].content() else {
            continue;
        };
        let unpaired = bs.iter().any(|b| match b {
            Block::ToolUse(u) => !answered.contains(&u.id),
            Block::ToolResult(r) => !called.contains(&r.tool_use_id),
            _ => false,
        });
        if !unpaired {
            continue;
        }
        let Some(Content::Blocks(bs)) = messages[j].content_mut() else {
            continue;
        };
        let old = std::mem::take(bs);
        for b in old {
            match b {
                Block::ToolUse(u) if !answered.contains(&u.id) => {
                    let input = match &u.input {
                        Some(Some(v)) => json_text(v),
                        _ => "{}".to_string(),
                    };
                    bs.push(Block::text(format!(
                        "[pinned tool call {} (id {}), its result is not in this conversation] input: {input}",
                        u.name, u.id
                    )));
                }
                Block::ToolResult(r) if !called.contains(&r.tool_use_id) => {
                    let error = matches!(r.extra.get("is_error"), Some(Value::Bool(true)));
                    bs.push(Block::text(format!(
                        "[pinned {} of tool call {}, whose call is not in this conversation]:",
                        if error { "error result" } else { "result" },
                        r.tool_use_id
                    )));
                    match r.content {
                        Some(Some(ToolResultContent::Text(t))) => bs.push(Block::text(t)),
                        Some(Some(ToolResultContent::Blocks(inner))) => bs.extend(inner),
                        _ => bs.push(Block::text("(no content)")),
                    }
                }
                b => bs.push(b),
            }
        }
        changed.push(j);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transforms::messages_api::validate_for_api;

    fn msgs(v: Value) -> Vec<Message> {
        Message::parse_all(v).unwrap()
    }

    /// user, then `n` rounds of assistant(tool_use t_i) / user(tool_result t_i), then a reply.
    fn rounds(n: usize) -> Vec<Message> {
        let mut v = vec![json!({"role": "user", "content": "go"})];
        for i in 0..n {
            v.push(json!({"role": "assistant", "content": [{"type": "text", "text": format!("step {i}")},
                {"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": format!("make {i}")}}]}));
            v.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": format!("out {i}")}]}));
        }
        v.push(json!({"role": "assistant", "content": "done"}));
        msgs(Value::Array(v))
    }

    fn pin(m: &Message) -> Pinned {
        Pinned::Message(Box::new(m.clone()))
    }

    #[test]
    fn a_pinned_half_of_a_tool_pair_keeps_its_partner() {
        let m = rounds(3);
        // The call (1) keeps its result (2); the result (4) keeps its call (3).
        assert_eq!(kept_for_pins(&[pin(&m[1])], &m, 0).unwrap(), vec![1, 2]);
        assert_eq!(kept_for_pins(&[pin(&m[4])], &m, 0).unwrap(), vec![3, 4]);
        assert_eq!(
            kept_for_pins(&[pin(&m[2]), pin(&m[1]), Pinned::Text("x".into())], &m, 0).unwrap(),
            vec![1, 2]
        );
        // Plain messages and texts stay after the summary; a message before `start` is not
        // in the conversation sent.
        assert!(kept_for_pins(&[pin(&m[0]), pin(&m[7])], &m, 0)
            .unwrap()
            .is_empty());
        assert!(kept_for_pins(&[pin(&m[1])], &m, 3).unwrap().is_empty());
    }

    #[test]
    fn a_response_split_over_lines_is_kept_whole_with_its_results() {
        let line = |t: &str, u: &str, role: &str, content: Value, id: Option<&str>| {
            let mut message = json!({"role": role, "content": content});
            if let Some(id) = id {
                message["id"] = json!(id);
            }
            json!({"type": t, "uuid": u, "message": message})
        };
        let m = msgs(json!([
            line("user", "u0", "user", json!("go"), None),
            line(
                "assistant",
                "a1",
                "assistant",
                json!([{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]),
                Some("msg_1")
            ),
            line(
                "user",
                "r1",
                "user",
                json!([{"type": "tool_result", "tool_use_id": "t1", "content": "one"}]),
                None
            ),
            line(
                "assistant",
                "a2",
                "assistant",
                json!([{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]),
                Some("msg_1")
            ),
            line(
                "user",
                "r2",
                "user",
                json!([{"type": "tool_result", "tool_use_id": "t2", "content": "two"}]),
                None
            ),
            line("assistant", "a3", "assistant", json!("ok"), Some("msg_2")),
        ]));
        assert_eq!(
            kept_for_pins(&[pin(&m[4])], &m, 0).unwrap(),
            vec![1, 2, 3, 4]
        );
    }

    #[test]
    fn an_incomplete_pair_is_not_kept() {
        let m = msgs(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]},
            {"role": "user", "content": "never mind"},
            {"role": "assistant", "content": "ok"}
        ]));
        assert!(kept_for_pins(&[pin(&m[1])], &m, 0).unwrap().is_empty());
    }

    #[test]
    fn unpaired_pinned_calls_and_results_become_text_and_the_rest_stays() {
        let m = rounds(2);
        // Not in the conversation kept: each half alone is rewritten; in order they pair.
        for (pins, rewritten) in [
            (vec![pin(&m[1])], vec![0]),
            (vec![pin(&m[2])], vec![0]),
            (vec![pin(&m[1]), pin(&m[2])], vec![]),
            (vec![pin(&m[2]), pin(&m[1])], vec![0, 1]),
        ] {
            let a = after_summary(&pins, &[], false, "s", || "u".into());
            assert_eq!(a.rewritten, rewritten, "{pins:?}");
            let mut conv = vec![Message::api_user_text("summary")];
            conv.extend(a.messages.iter().cloned());
            assert!(validate_for_api(&conv).is_empty(), "{conv:?}");
            let text = serde_json::to_string(&a.messages).unwrap();
            for needed in ["make 0", "out 0"] {
                if pins.iter().any(|p| {
                    serde_json::to_string(&match p {
                        Pinned::Message(m) => m.to_value(),
                        Pinned::Text(t) => json!(t),
                    })
                    .unwrap()
                    .contains(needed)
                }) {
                    assert!(text.contains(needed), "{needed} lost: {text}");
                }
            }
        }
        // A result with blocks keeps them (an image stays an image).
        let r = msgs(
            json!([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9", "is_error": true,
            "content": [{"type": "text", "text": "shot"}, {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]}]}]),
        );
        let a = after_summary(&[pin(&r[0])], &[], false, "s", || "u".into());
        let v = a.messages[0].to_value();
        assert_eq!(
            v["content"][0]["text"],
            "[pinned error result of tool call t9, whose call is not in this conversation]:"
        );
        assert_eq!(v["content"][1]["text"], "shot");
        assert_eq!(v["content"][2]["type"], "image");
    }
}
