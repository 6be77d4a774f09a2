//! [`ConversationView`] over a JavaScript array of messages, read in place.
//!
//! Properties are read by the small readers in `js_view.js`, each returning primitives, and
//! cached per message so a decision never reads the same property twice. Nothing is copied
//! into Rust but lengths, ids and names.

use std::cell::RefCell;
use std::collections::BTreeMap;

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use crate::error::{Error, Result};
use crate::messages::Kind;
use crate::view::{BlockInfo, BlockKind, ContentInfo, ConversationView, Detail, Edit, UsageCounts};

#[wasm_bindgen(module = "/src/bindings/js_view.js")]
extern "C" {
    fn header(m: &JsValue) -> u32;
    #[wasm_bindgen(js_name = usageField)]
    fn usage_field(m: &JsValue, k: u32) -> Option<f64>;
    #[wasm_bindgen(js_name = usageIsObject)]
    fn usage_is_object(m: &JsValue) -> bool;
    #[wasm_bindgen(js_name = messageId)]
    fn message_id(m: &JsValue) -> Option<String>;
    #[wasm_bindgen(js_name = stringField)]
    fn string_field(m: &JsValue, k: &str) -> Option<String>;
    #[wasm_bindgen(js_name = attachmentType)]
    fn attachment_type(m: &JsValue) -> Option<String>;
    #[wasm_bindgen(js_name = contentEquals)]
    fn content_equals(m: &JsValue, text: &str) -> bool;
    #[wasm_bindgen(js_name = describeContent)]
    fn describe_content(m: &JsValue, estimate: bool) -> JsValue;
    #[wasm_bindgen(js_name = withContent)]
    fn with_content(m: &JsValue, content: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = contentArray)]
    fn content_array(m: &JsValue) -> JsValue;
}

const NOT_AN_OBJECT: u32 = 7;
const TRANSCRIPT: u32 = 8;
const SIDECHAIN: u32 = 16;
const BOUNDARY: u32 = 32;
const HAS_USAGE: u32 = 64;
const UNREAD: u32 = u32::MAX;

/// A JS array of messages (API shape or transcript lines) seen through the core's view.
pub struct JsConversation {
    array: Array,
    len: usize,
    items: RefCell<Vec<Option<JsValue>>>,
    headers: RefCell<Vec<u32>>,
}

impl JsConversation {
    /// Wraps `value`, which must be an array.
    pub fn new(value: &JsValue, what: &str) -> Result<JsConversation> {
        let array = value.dyn_ref::<Array>().cloned().ok_or_else(|| {
            Error::invalid_argument(format!("{what} must be an array of messages"))
        })?;
        let len = array.length() as usize;
        Ok(JsConversation {
            array,
            len,
            items: RefCell::new(vec![None; len]),
            headers: RefCell::new(vec![UNREAD; len]),
        })
    }

    /// The underlying array.
    pub fn array(&self) -> &Array {
        &self.array
    }

    /// Message `i` (read once, then cached).
    pub fn item(&self, i: usize) -> JsValue {
        let mut items = self.items.borrow_mut();
        items[i]
            .get_or_insert_with(|| self.array.get(i as u32))
            .clone()
    }

    fn header(&self, i: usize) -> u32 {
        let cached = self.headers.borrow()[i];
        if cached != UNREAD {
            return cached;
        }
        let h = header(&self.item(i));
        self.headers.borrow_mut()[i] = h;
        h
    }

    /// Checks that every message is an object with `type` or `role`.
    pub fn validate_all(&self) -> Result<()> {
        for i in 0..self.len {
            self.kind(i)?;
        }
        Ok(())
    }
}

fn block_kind(code: u32) -> Option<BlockKind> {
    Some(match code {
        0 => BlockKind::Text,
        1 => BlockKind::Image,
        2 => BlockKind::Document,
        3 => BlockKind::ToolUse,
        4 => BlockKind::ServerToolUse,
        5 => BlockKind::ToolResult,
        6 => BlockKind::ServerToolResult,
        7 => BlockKind::Thinking,
        8 => BlockKind::RedactedThinking,
        9 => BlockKind::Other,
        _ => return None,
    })
}

fn required_field(kind: BlockKind) -> &'static str {
    match kind {
        BlockKind::Text => "a `text` block needs a string `text`",
        BlockKind::Thinking => "a `thinking` block needs a string `thinking`",
        BlockKind::RedactedThinking => "a `redacted_thinking` block needs a string `data`",
        BlockKind::ToolUse | BlockKind::ServerToolUse => {
            "a tool call block needs a string `id` and `name`"
        }
        BlockKind::ToolResult => {
            "a `tool_result` needs a string `tool_use_id` and string or array `content`"
        }
        _ => "malformed block",
    }
}

/// Decodes the records written by `describeContent` (see `js_view.js`).
fn parse_records<'a>(
    records: &mut impl Iterator<Item = &'a str>,
    count: Option<usize>,
    location: &str,
) -> Result<Vec<BlockInfo>> {
    let mut out = Vec::new();
    let mut j = 0;
    while count.is_none_or(|c| j < c) {
        let Some(rec) = records.next() else { break };
        let loc = format!("{location}[{j}]");
        let mut fields = rec.split('\u{1f}');
        let head = fields.next().unwrap_or("");
        let mut nums = head.split(':').map(|n| n.parse::<i64>().unwrap_or(0));
        let code = nums.next().unwrap_or(9) as u32;
        let text = nums.next().unwrap_or(0);
        let json = nums.next().unwrap_or(0);
        let cleared = nums.next().unwrap_or(0) == 1;
        let nested_count = nums.next().unwrap_or(0).max(0) as usize;
        let opt = |s: Option<&str>| s.filter(|s| !s.is_empty()).map(str::to_string);
        let (id, name, path, tid) = (
            opt(fields.next()),
            opt(fields.next()),
            opt(fields.next()),
            opt(fields.next()),
        );
        let kind = match code {
            10 => return Err(Error::invalid_message("content block must be an object").at(loc)),
            11 => {
                return Err(Error::invalid_message("content block needs a string `type`").at(loc))
            }
            c => block_kind(c).unwrap_or(BlockKind::Other),
        };
        if text < 0 {
            return Err(Error::invalid_message(required_field(kind)).at(loc));
        }
        let nested = if nested_count > 0 {
            parse_records(records, Some(nested_count), &format!("{loc}.content"))?
        } else {
            Vec::new()
        };
        out.push(BlockInfo {
            kind: Some(kind),
            text_units: text as usize,
            json_units: json.max(0) as usize,
            id,
            name,
            path,
            tool_use_id: tid,
            is_cleared: cleared,
            nested,
        });
        j += 1;
    }
    Ok(out)
}

impl ConversationView for JsConversation {
    fn len(&self) -> usize {
        self.len
    }

    fn kind(&self, i: usize) -> Result<Kind> {
        let h = self.header(i);
        Ok(match h & 7 {
            0 => Kind::User,
            1 => Kind::Assistant,
            2 => Kind::System,
            3 => Kind::Attachment,
            4 => Kind::Other,
            _ => {
                debug_assert_eq!(h, NOT_AN_OBJECT);
                return Err(Error::invalid_message(
                    "expected a message object with a string `type` (transcript line) or `role` (API message)",
                )
                .at(format!("messages[{i}]")));
            }
        })
    }

    fn is_transcript(&self, i: usize) -> bool {
        self.header(i) & TRANSCRIPT != 0
    }

    fn usage(&self, i: usize) -> Result<Option<UsageCounts>> {
        let h = self.header(i);
        if h == NOT_AN_OBJECT || h & HAS_USAGE == 0 {
            return Ok(None);
        }
        let m = self.item(i);
        let loc = if h & TRANSCRIPT != 0 {
            format!("messages[{i}].message.usage")
        } else {
            format!("messages[{i}].usage")
        };
        if !usage_is_object(&m) {
            return Err(Error::invalid_token_count("usage must be an object").at(loc));
        }
        let raw = [0, 1, 2, 3].map(|k| usage_field(&m, k));
        UsageCounts::from_raw(raw, &loc).map(Some)
    }

    fn message_id(&self, i: usize) -> Option<String> {
        if self.header(i) & TRANSCRIPT == 0 {
            return None;
        }
        message_id(&self.item(i))
    }

    fn is_sidechain(&self, i: usize) -> bool {
        self.header(i) & SIDECHAIN != 0
    }

    fn is_compact_boundary(&self, i: usize) -> bool {
        self.header(i) & BOUNDARY != 0
    }

    fn attachment_type(&self, i: usize) -> Option<String> {
        attachment_type(&self.item(i))
    }

    fn timestamp(&self, i: usize) -> Option<String> {
        string_field(&self.item(i), "timestamp")
    }

    fn uuid(&self, i: usize) -> Option<String> {
        string_field(&self.item(i), "uuid")
    }

    fn content_equals(&self, i: usize, text: &str) -> bool {
        self.header(i) & 7 == 0 && content_equals(&self.item(i), text)
    }

    fn content(&self, i: usize, detail: Detail) -> Result<ContentInfo> {
        self.kind(i)?;
        let d = describe_content(&self.item(i), detail == Detail::Estimate);
        if d.is_undefined() {
            return Ok(ContentInfo::None);
        }
        if let Some(n) = d.as_f64() {
            return Ok(if n < 0.0 {
                ContentInfo::Json((-n - 1.0) as usize)
            } else {
                ContentInfo::Text(n as usize)
            });
        }
        let Some(s) = d.as_string() else {
            return Err(
                Error::invalid_message("content must be a string or an array of blocks")
                    .at(format!("messages[{i}]")),
            );
        };
        if s.is_empty() {
            return Ok(ContentInfo::Blocks(Vec::new()));
        }
        let mut records = s.split('\u{1e}');
        parse_records(&mut records, None, &format!("messages[{i}].content"))
            .map(ContentInfo::Blocks)
    }
}

fn text_block(text: &str) -> JsValue {
    let o = Object::new();
    let _ = Reflect::set(&o, &"type".into(), &"text".into());
    let _ = Reflect::set(&o, &"text".into(), &text.into());
    o.into()
}

fn copy_object(v: &JsValue) -> Object {
    Object::assign(&Object::new(), &Object::from(v.clone()))
}

/// Applies the core's edits to copies of the edited messages; returns a new array that shares
/// every other message object with the input.
pub fn apply_edits(conv: &JsConversation, edits: &[Edit]) -> Result<Array> {
    let out = conv.array().slice(0, conv.len() as u32);
    let mut by_message: BTreeMap<usize, Vec<&Edit>> = BTreeMap::new();
    for e in edits {
        by_message.entry(e.message()).or_default().push(e);
    }
    for (i, es) in by_message {
        let m = conv.item(i);
        let content = content_array(&m);
        let content: Array = content
            .dyn_into()
            .map_err(|_| Error::invalid_message("no content array").at(format!("messages[{i}]")))?;
        for e in es {
            match e {
                Edit::ReplaceWithText {
                    block,
                    nested: None,
                    text,
                    ..
                } => content.set(*block as u32, text_block(text)),
                Edit::ReplaceWithText {
                    block,
                    nested: Some(n),
                    text,
                    ..
                } => {
                    let tr = copy_object(&content.get(*block as u32));
                    let inner: Array = Reflect::get(&tr, &"content".into())
                        .ok()
                        .and_then(|c| c.dyn_into::<Array>().ok())
                        .ok_or_else(|| {
                            Error::invalid_message("tool_result without content array")
                                .at(format!("messages[{i}].content[{block}]"))
                        })?
                        .slice(0, u32::MAX);
                    inner.set(*n as u32, text_block(text));
                    let _ = Reflect::set(&tr, &"content".into(), &inner);
                    content.set(*block as u32, tr.into());
                }
                Edit::SetToolResultContent { block, text, .. } => {
                    let tr = copy_object(&content.get(*block as u32));
                    let _ = Reflect::set(&tr, &"content".into(), &JsValue::from_str(text));
                    content.set(*block as u32, tr.into());
                }
            }
        }
        out.set(i as u32, with_content(&m, &content));
    }
    Ok(out)
}
