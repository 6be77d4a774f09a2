//! Pinned content (`context.pinned`): texts and messages that must survive every compaction
//! verbatim and exactly once. The pipeline adds each after the summary unless a message it
//! keeps already carries it.

use serde_json::{json, Value};

use crate::model::messages::{Block, Content, Message};

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

/// The pinned items to add after the summary (whose line id is `summary_uuid`), in order,
/// with the indices into `pinned` of those added: an item a `kept` message already carries is
/// not added twice. Pinned texts in a transcript continue the summary's `parentUuid` chain.
pub fn after_summary(
    pinned: &[Pinned],
    kept: &[Message],
    transcript: bool,
    summary_uuid: &str,
    mut new_uuid: impl FnMut() -> String,
) -> (Vec<Message>, Vec<usize>) {
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
    (messages, added)
}
