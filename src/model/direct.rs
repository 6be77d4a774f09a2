//! A faster reading of one message from JSON text, for the text `JSON.stringify` writes of a
//! caller's message: straight into the typed [`Message`], without the buffering that
//! `#[serde(flatten)]` and untagged enums do (every field read twice). It accepts less than
//! the derived reading: a repeated key, a typed field of another JSON type, anything
//! unexpected is an error, after which the caller reads the text the established way
//! ([`Message::from_value`]), which decides what such a message is. What it accepts, it reads
//! exactly as the derived reading does (tests in `transforms::transcript`).

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::messages::{ApiMessage, Block, Content, Message, Nullable, Role, Usage};

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
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "type" => typed(&mut m.line_type, &mut map, &key)?,
                        "role" => role_field(&mut m.role, &mut map, &key)?,
                        "content" => {
                            converted(&mut content, &mut map, &key, DirectContent::from_value)?
                        }
                        "message" => typed(&mut message, &mut map, &key)?,
                        "subtype" => typed(&mut m.subtype, &mut map, &key)?,
                        "uuid" => typed(&mut m.uuid, &mut map, &key)?,
                        "isSidechain" => typed(&mut m.is_sidechain, &mut map, &key)?,
                        "isMeta" => typed(&mut m.is_meta, &mut map, &key)?,
                        "isCompactSummary" => typed(&mut m.is_compact_summary, &mut map, &key)?,
                        "timestamp" => typed(&mut m.timestamp, &mut map, &key)?,
                        _ => unknown(&mut m.extra, &mut map, key)?,
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
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "role" => role_field(&mut m.role, &mut map, &key)?,
                        "content" => {
                            converted(&mut content, &mut map, &key, DirectContent::from_value)?
                        }
                        "id" => typed(&mut m.id, &mut map, &key)?,
                        "usage" => converted(&mut m.usage, &mut map, &key, |v| {
                            serde_json::from_value::<Usage>(v).ok()
                        })?,
                        _ => unknown(&mut m.extra, &mut map, key)?,
                    }
                }
                m.content = unwrap_nullable(content, |c| c.0);
                Ok(DirectApi(m))
            }
        }
        d.deserialize_map(V)
    }
}

impl DirectContent {
    /// The content from its JSON value: a string, or an array of blocks (each read as
    /// [`Block::from_value`] reads it, as the derived reading does); `None` for anything else.
    fn from_value(v: Value) -> Option<DirectContent> {
        match v {
            Value::String(t) => Some(DirectContent(Content::Text(t))),
            Value::Array(items) => items
                .into_iter()
                .map(|b| Block::from_value(b).ok())
                .collect::<Option<Vec<Block>>>()
                .map(|b| DirectContent(Content::Blocks(b))),
            _ => None,
        }
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
