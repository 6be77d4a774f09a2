//! Stripping before the summary request (SPEC §7 steps 2–3): media out of user messages, and
//! attachments that are re-announced after compaction anyway.

use crate::model::error::Result;
use crate::model::messages::{Kind, Message};
use crate::model::view::{BlockKind, ContentInfo, ConversationView, Detail, Edit};

/// Text that replaces an image block.
pub const IMAGE_PLACEHOLDER: &str = "[image]";
/// Text that replaces a document block.
pub const DOCUMENT_PLACEHOLDER: &str = "[document]";
/// Attachment kinds dropped before summarizing (they are announced again afterwards).
pub const REINJECTED_ATTACHMENT_TYPES: &[&str] = &["skill_discovery", "skill_listing"];

fn placeholder(kind: BlockKind) -> Option<&'static str> {
    match kind {
        BlockKind::Image => Some(IMAGE_PLACEHOLDER),
        BlockKind::Document => Some(DOCUMENT_PLACEHOLDER),
        _ => None,
    }
}

/// `stripImagesFromMessages`: in user messages, every `image` block becomes the text
/// `[image]` and every `document` block `[document]`, also inside `tool_result` content.
/// Returns the edits; messages without media get none (and stay the same objects).
pub fn strip_images<V: ConversationView + ?Sized>(view: &V) -> Result<Vec<Edit>> {
    let mut edits = Vec::new();
    let contents = view.contents(0..view.len(), Detail::Structure)?;
    for (i, content) in contents.into_iter().enumerate() {
        if view.kind(i)? != Kind::User {
            continue;
        }
        let ContentInfo::Blocks(blocks) = content else {
            continue;
        };
        for (b, info) in blocks.iter().enumerate() {
            let Some(kind) = info.kind else { continue };
            if let Some(text) = placeholder(kind) {
                edits.push(Edit::ReplaceWithText {
                    message: i,
                    block: b,
                    nested: None,
                    text: text.to_string(),
                });
            } else if kind == BlockKind::ToolResult {
                for (n, inner) in info.nested.iter().enumerate() {
                    if let Some(text) = inner.kind.and_then(placeholder) {
                        edits.push(Edit::ReplaceWithText {
                            message: i,
                            block: b,
                            nested: Some(n),
                            text: text.to_string(),
                        });
                    }
                }
            }
        }
    }
    Ok(edits)
}

/// A placeholder that names the media's type and size, e.g. `[image: image/png, 1.0 MB]`.
pub fn media_placeholder(kind: BlockKind, block: &crate::model::messages::MediaBlock) -> String {
    let word = if kind == BlockKind::Document {
        "document"
    } else {
        "image"
    };
    let mut parts = Vec::new();
    if let Some(t) = block.media_type() {
        parts.push(t.to_string());
    }
    if let Some(bytes) = block.base64_bytes() {
        parts.push(human_size(bytes));
    }
    if parts.is_empty() {
        format!("[{word}]")
    } else {
        format!("[{word}: {}]", parts.join(", "))
    }
}

/// `1.0 MB`, `12 KB`, `300 B`.
pub fn human_size(bytes: usize) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KB * KB {
        format!("{:.1} MB", b / (KB * KB))
    } else if b >= KB {
        format!("{:.0} KB", b / KB)
    } else {
        format!("{bytes} B")
    }
}

/// Like [`strip_images`] applied, but each placeholder names the media's type and size (for
/// the summary request: the summarizer learns what was there without receiving it), and
/// plain-text documents stay (the summary request reads their text, bounded).
pub fn strip_media_described(messages: &[Message]) -> Result<Vec<Message>> {
    use crate::model::messages::{Block, Content, ToolResultContent};
    let mut edits = strip_images(messages)?;
    for e in &mut edits {
        let Edit::ReplaceWithText {
            message,
            block,
            nested,
            text,
        } = e
        else {
            continue;
        };
        let Some(Content::Blocks(bs)) = messages[*message].content() else {
            continue;
        };
        let target = match (bs.get(*block), nested) {
            (Some(b), None) => Some(b),
            (Some(Block::ToolResult(r)), Some(n)) => {
                match r.content.as_ref().and_then(|c| c.as_ref()) {
                    Some(ToolResultContent::Blocks(inner)) => inner.get(*n),
                    _ => None,
                }
            }
            _ => None,
        };
        match target {
            Some(Block::Image(m)) => *text = media_placeholder(BlockKind::Image, m),
            // A plain-text document stays: the summary request shows its text.
            Some(Block::Document(m)) if m.plain_texts().is_some() => text.clear(),
            Some(Block::Document(m)) => *text = media_placeholder(BlockKind::Document, m),
            _ => {}
        }
    }
    edits.retain(|e| !matches!(e, Edit::ReplaceWithText { text, .. } if text.is_empty()));
    crate::model::view::apply_edits(messages, &edits)
}

/// `messages` without the attachments [`reinjected_attachments`] names (SPEC §7 step 3: what
/// a compaction summarizes).
pub fn without_reinjected_attachments(messages: Vec<Message>) -> Result<Vec<Message>> {
    let drop = reinjected_attachments(messages.as_slice())?;
    Ok(messages
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !drop.contains(i))
        .map(|(_, m)| m)
        .collect())
}

/// `stripReinjectedAttachments`: indices of the attachment messages of kind
/// `skill_discovery` or `skill_listing`, which are dropped.
pub fn reinjected_attachments<V: ConversationView + ?Sized>(view: &V) -> Result<Vec<usize>> {
    let mut drop = Vec::new();
    for i in 0..view.len() {
        if view.kind(i)? == Kind::Attachment {
            if let Some(t) = view.attachment_type(i) {
                if REINJECTED_ATTACHMENT_TYPES.contains(&t.as_str()) {
                    drop.push(i);
                }
            }
        }
    }
    Ok(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::view::apply_edits;
    use serde_json::json;

    #[test]
    fn media_in_user_messages_and_tool_results_become_text() {
        let img = json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}});
        let doc = json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "AAAA"}});
        let m = Message::parse_all(json!([
            {"role": "user", "content": [{"type": "text", "text": "look"}, img, doc]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [img, {"type": "text", "text": "x"}]}]},
            {"role": "user", "content": "plain"}
        ]))
        .unwrap();
        let edits = strip_images(m.as_slice()).unwrap();
        assert_eq!(edits.len(), 3);
        let out = apply_edits(&m, &edits).unwrap();
        assert_eq!(
            out[0].to_value()["content"],
            json!([{"type": "text", "text": "look"}, {"type": "text", "text": "[image]"}, {"type": "text", "text": "[document]"}])
        );
        assert_eq!(
            out[2].to_value()["content"][0]["content"][0],
            json!({"type": "text", "text": "[image]"})
        );
        assert_eq!(out[1], m[1]);
        assert_eq!(out[3], m[3]);
    }

    #[test]
    fn described_placeholders_name_type_and_size() {
        let mb = "A".repeat(1_398_104); // 1,048,578 bytes of base64 payload
        let m = Message::parse_all(json!([
            {"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": mb}},
                {"type": "document", "source": {"type": "url", "url": "https://x/y.pdf"}}]}
        ]))
        .unwrap();
        let out = strip_media_described(&m).unwrap();
        let v = out[0].to_value();
        assert_eq!(v["content"][0]["text"], "[image: image/png, 1.0 MB]");
        assert_eq!(v["content"][1]["text"], "[document]");
        assert_eq!(human_size(12 * 1024), "12 KB");
    }

    #[test]
    fn assistant_media_is_left_alone() {
        let m = Message::parse_all(json!([
            {"role": "assistant", "content": [{"type": "image", "source": {}}]}
        ]))
        .unwrap();
        assert!(strip_images(m.as_slice()).unwrap().is_empty());
    }

    #[test]
    fn skill_listings_are_dropped() {
        let m = Message::parse_all(json!([
            {"type": "attachment", "attachment": {"type": "skill_listing", "content": "x"}},
            {"type": "attachment", "attachment": {"type": "new_file", "content": "y"}},
            {"type": "attachment", "attachment": {"type": "skill_discovery"}},
            {"type": "user", "message": {"role": "user", "content": "hi"}}
        ]))
        .unwrap();
        assert_eq!(reinjected_attachments(m.as_slice()).unwrap(), vec![0, 2]);
        let kept = without_reinjected_attachments(m.clone()).unwrap();
        assert_eq!(kept, vec![m[1].clone(), m[3].clone()]);
    }
}
