//! A faster reading of one message from JSON text, for the text `JSON.stringify` writes of a
//! caller's message: straight into the typed [`Message`], without the buffering that
//! `#[serde(flatten)]` and untagged enums do (every field read twice). It accepts less than
//! the derived reading: a repeated key, a typed field of another JSON type, anything
//! unexpected is an error, after which the caller reads the text the established way
//! ([`Message::from_value`]), which decides what such a message is. What it accepts, it reads
//! exactly as the derived reading does (tests in `transforms::transcript`).

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::messages::{
    ApiMessage, Block, Content, MediaBlock, Message, Nullable, RedactedThinkingBlock, Role,
    TextBlock, ThinkingBlock, ToolResultBlock, ToolResultContent, ToolUseBlock, Usage,
};

/// A field name: borrowed from the text when it holds no escape, so the names matched and
/// dropped (most of them) cost no allocation.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// A [`Message`] read by the direct reading (see the module documentation).
pub struct DirectMessage(pub Message);

/// An [`ApiMessage`] read by the direct reading.
struct DirectApi(ApiMessage);

/// A [`Content`] read by the direct reading: a string, or an array of blocks.
struct DirectContent(Content);

/// Reads the value of a typed field that may be `null`, failing on a repeated key.
fn typed<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    slot: &mut Nullable<T>,
    map: &mut A,
    key: &str,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
    }
    *slot = Some(map.next_value::<Option<T>>()?);
    Ok(())
}

/// Puts an unknown field among the `extra` ones, failing on a repeated key.
fn unknown<'de, A: MapAccess<'de>>(
    extra: &mut Map<String, Value>,
    map: &mut A,
    key: String,
) -> Result<(), A::Error> {
    let v: Value = map.next_value()?;
    if extra.insert(key, v).is_some() {
        return Err(de::Error::custom("duplicate field"));
    }
    Ok(())
}

/// Unwraps a `Nullable` of a direct wrapper into the typed field.
fn unwrap_nullable<W, T>(v: Nullable<W>, f: impl Fn(W) -> T) -> Nullable<T> {
    v.map(|o| o.map(f))
}

impl<'de> Deserialize<'de> for DirectMessage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DirectMessage;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DirectMessage, A::Error> {
                let mut m = Message::default();
                let mut content: Nullable<DirectContent> = None;
                let mut message: Nullable<DirectApi> = None;
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    match &*key {
                        "type" => typed(&mut m.line_type, &mut map, &key)?,
                        "role" => role_field(&mut m.role, &mut map, &key)?,
                        "content" => typed(&mut content, &mut map, &key)?,
                        "message" => typed(&mut message, &mut map, &key)?,
                        "subtype" => typed(&mut m.subtype, &mut map, &key)?,
                        "uuid" => typed(&mut m.uuid, &mut map, &key)?,
                        "isSidechain" => typed(&mut m.is_sidechain, &mut map, &key)?,
                        "isMeta" => typed(&mut m.is_meta, &mut map, &key)?,
                        "isCompactSummary" => typed(&mut m.is_compact_summary, &mut map, &key)?,
                        "timestamp" => typed(&mut m.timestamp, &mut map, &key)?,
                        _ => unknown(&mut m.extra, &mut map, key.into_owned())?,
                    }
                }
                m.content = unwrap_nullable(content, |c| c.0);
                m.message = unwrap_nullable(message, |a| a.0);
                Ok(DirectMessage(m))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for DirectApi {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DirectApi;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an API message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DirectApi, A::Error> {
                let mut m = ApiMessage::default();
                let mut content: Nullable<DirectContent> = None;
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    match &*key {
                        "role" => role_field(&mut m.role, &mut map, &key)?,
                        "content" => typed(&mut content, &mut map, &key)?,
                        "id" => typed(&mut m.id, &mut map, &key)?,
                        "usage" => converted(&mut m.usage, &mut map, &key, usage_from)?,
                        _ => unknown(&mut m.extra, &mut map, key.into_owned())?,
                    }
                }
                m.content = unwrap_nullable(content, |c| c.0);
                Ok(DirectApi(m))
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for DirectContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DirectContent;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an array of content blocks")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<DirectContent, E> {
                Ok(DirectContent(Content::Text(v.to_string())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<DirectContent, E> {
                Ok(DirectContent(Content::Text(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<DirectContent, A::Error> {
                Ok(DirectContent(Content::Blocks(blocks(seq)?)))
            }
        }
        d.deserialize_any(V)
    }
}

/// The blocks of a content array, each read by the direct reading of a block.
fn blocks<'de, A: SeqAccess<'de>>(mut seq: A) -> Result<Vec<Block>, A::Error> {
    let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
    while let Some(b) = seq.next_element::<DirectBlock>()? {
        out.push(b.0);
    }
    Ok(out)
}

/// A [`Block`] read by the direct reading: when `type` is its first field and one of the
/// typed block types, the other fields go straight into the typed block (no intermediate
/// JSON value); otherwise the block is read as a JSON object and given to
/// [`Block::from_value`], as the derived reading does. A repeated field is an error (the
/// caller then reads the message the established way, where the last one wins).
struct DirectBlock(Block);

/// A tool result's `content` read by the direct reading: a string, or an array of blocks.
struct DirectToolResultContent(ToolResultContent);

impl<'de> Deserialize<'de> for DirectToolResultContent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        DirectContent::deserialize(d).map(|c| {
            DirectToolResultContent(match c.0 {
                Content::Text(t) => ToolResultContent::Text(t),
                Content::Blocks(b) => ToolResultContent::Blocks(b),
            })
        })
    }
}

/// A required field that was absent: an error (the caller then takes the established way,
/// which names it).
fn present<E: de::Error>(v: Option<String>) -> Result<String, E> {
    v.ok_or_else(|| E::custom("missing field"))
}

/// The typed fields of a block being read, by block type: (first string, second string,
/// nullable value), the thinking signature, a tool result's content, and the unknown fields
/// in input order.
#[derive(Default)]
struct BlockFields {
    s1: Option<String>,
    s2: Option<String>,
    value: Nullable<Value>,
    signature: Nullable<String>,
    content: Nullable<DirectToolResultContent>,
    extra: Map<String, Value>,
}

/// Where field `key` of a block of type `ty` goes.
#[derive(Clone, Copy, PartialEq)]
enum Slot {
    /// The first required string (`text`, `id`, `tool_use_id`, `thinking`, `data`).
    S1,
    /// The second required string (a tool use's `name`).
    S2,
    /// The nullable JSON value (`input`, `source`).
    Value,
    /// A thinking block's `signature`.
    Signature,
    /// A tool result's `content`.
    Content,
    /// A second `type`.
    Type,
    /// An unknown field.
    Extra,
}

fn slot(ty: &str, key: &str) -> Slot {
    match (ty, key) {
        ("text", "text")
        | ("tool_use" | "server_tool_use", "id")
        | ("tool_result", "tool_use_id")
        | ("thinking", "thinking")
        | ("redacted_thinking", "data") => Slot::S1,
        ("tool_use" | "server_tool_use", "name") => Slot::S2,
        ("tool_use" | "server_tool_use", "input") | ("image" | "document", "source") => Slot::Value,
        ("thinking", "signature") => Slot::Signature,
        ("tool_result", "content") => Slot::Content,
        (_, "type") => Slot::Type,
        _ => Slot::Extra,
    }
}

impl BlockFields {
    /// A field written before `type`, already read as a JSON value: a required string or an
    /// unknown field is taken; anything else (another typed field, a repeat) is an error,
    /// after which the message is read the established way.
    fn put_before(&mut self, ty: &str, key: String, v: Value) -> Result<(), &'static str> {
        match (slot(ty, &key), v) {
            (Slot::S1, Value::String(t)) if self.s1.is_none() => self.s1 = Some(t),
            (Slot::S2, Value::String(t)) if self.s2.is_none() => self.s2 = Some(t),
            (Slot::Extra, v) => {
                if self.extra.insert(key, v).is_some() {
                    return Err("duplicate field");
                }
            }
            _ => return Err("a typed field before `type`"),
        }
        Ok(())
    }
}

/// A required string field of a block, failing on a repeated key.
fn required<'de, A: MapAccess<'de>>(
    slot: &mut Option<String>,
    map: &mut A,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::custom("duplicate field"));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// A typed block of type `ty`: the fields written before `type` (`before`, already read as
/// JSON values), then the fields after it, read straight from the text.
fn typed_block<'de, A: MapAccess<'de>>(
    ty: &str,
    before: Vec<(String, Value)>,
    mut map: A,
) -> Result<Block, A::Error> {
    let mut f = BlockFields::default();
    for (key, v) in before {
        f.put_before(ty, key, v).map_err(de::Error::custom)?;
    }
    while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
        match slot(ty, &key) {
            Slot::S1 => required(&mut f.s1, &mut map)?,
            Slot::S2 => required(&mut f.s2, &mut map)?,
            Slot::Value => typed(&mut f.value, &mut map, &key)?,
            Slot::Signature => typed(&mut f.signature, &mut map, &key)?,
            Slot::Content => typed(&mut f.content, &mut map, &key)?,
            Slot::Type => return Err(de::Error::custom("duplicate field `type`")),
            Slot::Extra => unknown(&mut f.extra, &mut map, key.into_owned())?,
        }
    }
    let BlockFields {
        s1,
        s2,
        value,
        signature,
        content,
        extra,
    } = f;
    Ok(match ty {
        "text" => Block::Text(TextBlock {
            text: present(s1)?,
            extra,
        }),
        "image" | "document" => {
            let b = MediaBlock {
                source: value,
                extra,
            };
            if ty == "image" {
                Block::Image(b)
            } else {
                Block::Document(b)
            }
        }
        "tool_use" | "server_tool_use" => {
            let b = ToolUseBlock {
                id: present(s1)?,
                name: present(s2)?,
                input: value,
                extra,
            };
            if ty == "tool_use" {
                Block::ToolUse(b)
            } else {
                Block::ServerToolUse(b)
            }
        }
        "tool_result" => Block::ToolResult(ToolResultBlock {
            tool_use_id: present(s1)?,
            content: unwrap_nullable(content, |c| c.0),
            extra,
        }),
        "thinking" => Block::Thinking(ThinkingBlock {
            thinking: present(s1)?,
            signature,
            extra,
        }),
        _ => Block::RedactedThinking(RedactedThinkingBlock {
            data: present(s1)?,
            extra,
        }),
    })
}

/// Whether blocks of type `ty` are read field by field by [`typed_block`].
fn is_typed_block(ty: &str) -> bool {
    matches!(
        ty,
        "text"
            | "image"
            | "document"
            | "tool_use"
            | "server_tool_use"
            | "tool_result"
            | "thinking"
            | "redacted_thinking"
    )
}

impl<'de> Deserialize<'de> for DirectBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DirectBlock;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a content block object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DirectBlock, A::Error> {
                // The fields before `type` (Claude Code writes a tool result's `tool_use_id`
                // first), read as JSON values until the type is known.
                let mut before: Vec<(String, Value)> = Vec::new();
                let mut all = Map::new();
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    if before.iter().any(|(k, _)| *k == key) {
                        return Err(de::Error::custom("duplicate field"));
                    }
                    let v: Value = map.next_value()?;
                    if key != "type" {
                        before.push((key.into_owned(), v));
                        continue;
                    }
                    if let Value::String(ty) = &v {
                        if is_typed_block(ty) {
                            return typed_block(ty, before, map).map(DirectBlock);
                        }
                    }
                    all.extend(before.drain(..));
                    all.insert(key.into_owned(), v);
                    break;
                }
                all.extend(before);
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    unknown(&mut all, &mut map, key.into_owned())?;
                }
                Block::from_value(Value::Object(all))
                    .map(DirectBlock)
                    .map_err(de::Error::custom)
            }
        }
        d.deserialize_map(V)
    }
}

/// A typed field read as a JSON value, then converted by `f`; a value `f` does not take is an
/// error (the caller then reads the message the established way).
fn converted<'de, A: MapAccess<'de>, T>(
    slot: &mut Nullable<T>,
    map: &mut A,
    key: &str,
    f: impl Fn(Value) -> Option<T>,
) -> Result<(), A::Error> {
    let mut raw: Nullable<Value> = None;
    typed(&mut raw, map, key)?;
    if slot.is_some() {
        return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
    }
    *slot = match raw {
        Some(Some(v)) => {
            Some(Some(f(v).ok_or_else(|| {
                de::Error::custom(format_args!("field `{key}`"))
            })?))
        }
        other => other.map(|_| None),
    };
    Ok(())
}

/// A usage object read from its JSON value as the derived reading does (each count a number
/// or `null`, the other fields kept in order), without its buffering; `None` for anything
/// else (a count of another JSON type, not an object).
fn usage_from(v: Value) -> Option<Usage> {
    let Value::Object(map) = v else {
        return None;
    };
    let mut u = Usage::default();
    for (k, v) in map {
        let slot = match k.as_str() {
            "input_tokens" => &mut u.input_tokens,
            "cache_creation_input_tokens" => &mut u.cache_creation_input_tokens,
            "cache_read_input_tokens" => &mut u.cache_read_input_tokens,
            "output_tokens" => &mut u.output_tokens,
            _ => {
                u.extra.insert(k, v);
                continue;
            }
        };
        *slot = Some(match v {
            Value::Number(n) => Some(n),
            Value::Null => None,
            _ => return None,
        });
    }
    Some(u)
}

/// A role read as a string.
fn role_field<'de, A: MapAccess<'de>>(
    slot: &mut Nullable<Role>,
    map: &mut A,
    key: &str,
) -> Result<(), A::Error> {
    let mut raw: Nullable<String> = None;
    typed(&mut raw, map, key)?;
    if slot.is_some() {
        return Err(de::Error::custom(format_args!("duplicate field `{key}`")));
    }
    *slot = raw.map(|r| r.map(|t| Role::parse(&t)));
    Ok(())
}

/// Reads one message from JSON text by the direct reading; `None` when it does not accept
/// the text (the caller then reads it the established way).
pub fn message_from_text(text: &str) -> Option<Message> {
    let mut de = serde_json::Deserializer::from_str(text);
    let m = DirectMessage::deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(m.0)
}

#[cfg(test)]
mod tests {
    use super::message_from_text;
    use crate::model::messages::{Block, Content, Message, Usage};

    /// The message the established reading (a JSON value, then [`Message::from_value`])
    /// makes of `text`.
    fn by_value(text: &str) -> Message {
        Message::from_value(serde_json::from_str(text).unwrap(), "m").unwrap()
    }

    #[test]
    fn blocks_read_directly_equal_the_value_reading_and_write_back_the_same_text() {
        for t in [
            // Every typed block type, `type` first, with unknown fields in odd places.
            r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"a\u0000\ud83d\ude00 \"q\"","citations":null,"z":{"b":1,"a":[1.5,-0.0,1e300,18446744073709551615,-9223372036854775808]}},{"type":"thinking","thinking":"t","signature":null},{"type":"redacted_thinking","data":"x","k":"\/"},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls","n":12345678901234567890},"caller":{"type":"direct"}},{"type":"server_tool_use","id":"s1","name":"web_search","input":null},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}},{"type":"document","extra":true}],"model":"m"},"uuid":"u"}"#,
            // Tool results: string, blocks (nested typed and unknown), null, absent.
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"text","text":"out"},{"type":"image","source":null},{"type":"mystery","v":[]}],"is_error":true},{"type":"tool_result","tool_use_id":"t2","content":"plain"},{"type":"tool_result","tool_use_id":"t3","content":null},{"type":"tool_result","tool_use_id":"t4"}]}}"#,
            // `type` not first, unknown and server result types: the value reading.
            r#"{"role":"user","content":[{"text":"late type","type":"text"},{"type":"web_search_tool_result","tool_use_id":"s1","content":[]},{"type":"x_tool_result","content":1},{"type":"compaction","content":"c"}]}"#,
            // `type` after other fields (Claude Code's tool results), for every typed block
            // type, with unknown fields before and after it.
            r#"{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":[{"text":"x","type":"text","cache_control":{"type":"ephemeral"}}],"is_error":false},{"id":"a","z":1,"type":"tool_use","name":"Bash","input":{"c":1},"y":2},{"thinking":"t","type":"thinking","signature":"s"},{"k":[1],"type":"image","source":null},{"data":"d","type":"redacted_thinking"},{"name":"n","id":"i","type":"server_tool_use","input":null},{"k":1,"type":"mystery","v":2}]}"#,
            // Empty content and an API message.
            r#"{"role":"assistant","content":[]}"#,
        ] {
            let direct = message_from_text(t).expect(t);
            let value = by_value(t);
            assert_eq!(direct, value, "{t}");
            assert_eq!(
                serde_json::to_string(&direct).unwrap(),
                serde_json::to_string(&value).unwrap()
            );
        }
    }

    #[test]
    fn usage_is_read_as_the_derived_reading_reads_it() {
        for t in [
            r#"{"input_tokens":1,"x":{"a":[1]},"output_tokens":null,"cache_read_input_tokens":1.5e3,"cache_creation_input_tokens":18446744073709551615,"service_tier":"standard"}"#,
            r#"{"z":1,"input_tokens":-0}"#,
            r#"{}"#,
            r#"{"input_tokens":"1"}"#,
            r#"{"output_tokens":true}"#,
            r#"[]"#,
            r#"5"#,
        ] {
            let v: serde_json::Value = serde_json::from_str(t).unwrap();
            let derived = serde_json::from_value::<Usage>(v.clone()).ok();
            assert_eq!(super::usage_from(v), derived, "{t}");
        }
    }

    #[test]
    fn odd_blocks_are_left_to_the_value_reading() {
        // A repeated field, a missing or mistyped required field: the direct reading declines
        // (the established reading then decides: the last repeat wins, or an error).
        for t in [
            r#"{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}"#,
            r#"{"role":"user","content":[{"type":"text","text":"a","type":"text"}]}"#,
            r#"{"role":"user","content":[{"type":"tool_use","id":"t","input":{}}]}"#,
            r#"{"role":"user","content":[{"type":"text","text":null}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":5}]}"#,
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text"}]}]}"#,
            r#"{"role":"user","content":["text"]}"#,
            r#"{"role":"user","content":[{"tool_use_id":"a","tool_use_id":"b","type":"tool_result"}]}"#,
            r#"{"role":"user","content":[{"text":5,"type":"text"}]}"#,
            r#"{"role":"user","content":[{"k":1,"k":2,"type":"mystery"}]}"#,
            // A typed field other than a required string before `type`.
            r#"{"role":"user","content":[{"signature":"s","type":"thinking","thinking":"t"}]}"#,
            r#"{"role":"user","content":[{"source":null,"type":"image"}]}"#,
            r#"{"role":"user","content":[{"input":{},"type":"tool_use","id":"i","name":"n"}]}"#,
            r#"{"role":"user","content":[{"content":"c","type":"tool_result","tool_use_id":"t"}]}"#,
        ] {
            assert!(message_from_text(t).is_none(), "{t}");
        }
        // The last repeat wins on the value reading, as before.
        let m = by_value(r#"{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}"#);
        assert!(
            matches!(m.content(), Some(Content::Blocks(b)) if matches!(&b[0], Block::Text(t) if t.text == "b"))
        );
    }

    #[test]
    fn reads_ordinary_messages_and_leaves_the_rest_to_the_value_path() {
        for t in [
            r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"}]},"x":1}"#,
            r#"{"role":"assistant","content":"hi","usage":{"input_tokens":1}}"#,
            r#"{"type":"progress","uuid":"p","data":{"k":[1,2]}}"#,
        ] {
            assert!(message_from_text(t).is_some(), "{t}");
        }
        for t in [
            r#"{"role":"user","role":"user","content":"a"}"#,
            r#"{"role":"user","content":"a","x":1,"x":2}"#,
            r#"{"type":"progress","uuid":5}"#,
            r#"{"role":"user","content":5}"#,
            r#"{"role":"user"} trailing"#,
            r#"["role","user"]"#,
        ] {
            assert!(message_from_text(t).is_none(), "{t}");
        }
    }
}
