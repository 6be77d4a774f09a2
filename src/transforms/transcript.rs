//! Claude Code session files (SPEC §17): JSONL in, JSONL out, nothing lost.
//!
//! Splitting and validation live here; the JSON of each line is parsed by the caller's side
//! (`serde_json` natively, the engine's `JSON.parse` in JavaScript) so key order and number
//! formatting survive a round trip.

use serde_json::Value;

use crate::model::error::{Error, ErrorCode, Result};
use crate::model::messages::{
    json_type_name, nested_deeper_than, text_nested_deeper_than, Message, MAX_NESTING, TYPED_FIELDS,
};

/// One non-empty line of a JSONL text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based line number in the file.
    pub number: usize,
    /// The line's text, without its line ending.
    pub text: &'a str,
}

/// The byte-order mark some editors put at the start of a file (ignored).
pub const BOM: u16 = 0xfeff;

/// What to do with one line of a JSONL text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineAction {
    /// Parse it as JSON.
    Parse,
    /// Skip it (the empty text after the final line ending).
    Skip,
}

/// Decides about line `number` (1-based): blank lines are an error, except the empty text
/// after the final line ending.
pub fn classify_line(number: usize, is_last: bool, is_blank: bool) -> Result<LineAction> {
    match (is_blank, is_last) {
        (false, _) => Ok(LineAction::Parse),
        (true, true) => Ok(LineAction::Skip),
        (true, false) => Err(blank_line(number)),
    }
}

/// The error for a blank line.
pub fn blank_line(number: usize) -> Error {
    Error::new(
        ErrorCode::MalformedTranscript,
        format!("line {number}: blank line in a JSONL transcript"),
    )
}

/// Splits JSONL text into lines. A final line ending is allowed; a blank line elsewhere is
/// an error naming its number (it is never silently dropped).
pub fn split_lines(text: &str) -> Result<Vec<Line<'_>>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    let mut parts = text.split('\n').peekable();
    let mut number = 0;
    while let Some(raw) = parts.next() {
        number += 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let is_last = parts.peek().is_none();
        if classify_line(number, is_last, line.trim().is_empty())? == LineAction::Parse {
            out.push(Line { number, text: line });
        }
    }
    Ok(out)
}

/// The error for a line whose JSON did not parse.
pub fn malformed_line(number: usize, detail: impl std::fmt::Display) -> Error {
    Error::new(
        ErrorCode::MalformedTranscript,
        format!("line {number}: invalid JSON: {detail}"),
    )
}

/// The error for a line nested deeper than [`MAX_NESTING`] levels.
pub fn too_deep_line(number: usize) -> Error {
    Error::new(
        ErrorCode::MalformedTranscript,
        format!(
            "line {number}: nested deeper than {MAX_NESTING} levels of objects and arrays (the limit of every function that reads messages)"
        ),
    )
}

/// The error for a line that parsed to something other than an object.
pub fn non_object_line(number: usize, what: &str) -> Error {
    Error::new(
        ErrorCode::MalformedTranscript,
        format!("line {number}: expected a JSON object, got {what}"),
    )
}

/// JSON text with every `\uXXXX` escape of a lone UTF-16 surrogate (which JavaScript strings
/// may hold and `JSON.stringify` writes, but Rust strings cannot) replaced by `\ufffd`.
pub fn replace_lone_surrogates(json: &str) -> String {
    let b = json.as_bytes();
    let hex_at = |i: usize| -> Option<u32> {
        let h = json.get(i..i + 4)?;
        u32::from_str_radix(h, 16).ok()
    };
    let mut out = String::with_capacity(json.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        if b.get(i + 1) != Some(&b'u') {
            i += 2; // another escape, e.g. \\ or \"
            continue;
        }
        let Some(cp) = hex_at(i + 2) else {
            i += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&cp);
        let is_low = (0xDC00..0xE000).contains(&cp);
        let paired = is_high
            && b.get(i + 6) == Some(&b'\\')
            && b.get(i + 7) == Some(&b'u')
            && hex_at(i + 8).is_some_and(|c| (0xDC00..0xE000).contains(&c));
        if paired {
            i += 12;
        } else if is_high || is_low {
            out.push_str(&json[last..i]);
            out.push_str("\\ufffd");
            i += 6;
            last = i;
        } else {
            i += 6;
        }
    }
    out.push_str(&json[last..]);
    out
}

/// A message from its JSON text (as `JSON.stringify` writes a caller's message), naming
/// `location()` in errors (made only for an error or the value path). The same message, and the same errors, as parsing the text into a
/// JSON value and reading that with [`Message::from_value`], which is what happens when the
/// direct reading cannot be used: an object within the nesting limit is read straight into
/// the typed message (no intermediate value); anything else (not an object, too deep, a lone
/// UTF-16 surrogate that JavaScript strings may hold, a carried-through line with a field of
/// another type, any error) takes the value path, whose errors name what is wrong.
pub fn message_from_json_text(text: &str, location: &dyn Fn() -> String) -> Result<Message> {
    if text.starts_with('{') && !text_nested_deeper_than(text, MAX_NESTING) {
        if let Some(m) = crate::model::direct::message_from_text(text) {
            if m.line_type().is_some() || m.role().is_some() {
                m.check_role(location)?;
                return Ok(m);
            }
        }
    }
    let location = &location();
    let v: Value = serde_json::from_str(text)
        .or_else(|_| serde_json::from_str(&replace_lone_surrogates(text)))
        .map_err(|e| Error::invalid_message(e.to_string()).at(location))?;
    Message::from_value(v, location)
}

/// One field of a carried line as the JS side can hand it over without JSON: absent (or its
/// getter threw), a boolean or a string. Other values cross as JSON text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field<'a> {
    /// Not there (`undefined`).
    Absent,
    /// `true` or `false`.
    Bool(bool),
    /// A string.
    Str(&'a str),
}

/// A line whose payload is never read ([`crate::model::messages::payload_is_read`]) from
/// the fields picked of it, in their order: the same message, and the same errors, as
/// [`message_from_json_text`] gives for the JSON object of those that are not absent. The
/// identity fields (`type`, `subtype`, `uuid`, `timestamp` as strings, `isSidechain` as a
/// boolean) go straight into the typed message and any other field into its unknown fields;
/// anything else (no `type`, a typed field of another type) is read as that object would be.
pub fn message_from_fields(
    fields: &[(&str, Field<'_>)],
    location: &dyn Fn() -> String,
) -> Result<Message> {
    let mut m = Message::default();
    let text = |s: &str| Some(Some(s.to_string()));
    let mut direct = true;
    for &(key, value) in fields {
        match (key, value) {
            (_, Field::Absent) => {}
            ("type", Field::Str(s)) => m.line_type = text(s),
            ("subtype", Field::Str(s)) => m.subtype = text(s),
            ("uuid", Field::Str(s)) => m.uuid = text(s),
            ("timestamp", Field::Str(s)) => m.timestamp = text(s),
            ("isSidechain", Field::Bool(b)) => m.is_sidechain = Some(Some(b)),
            (k, _) if TYPED_FIELDS.contains(&k) => direct = false,
            (k, Field::Str(s)) => {
                m.extra.insert(k.to_string(), Value::String(s.to_string()));
            }
            (k, Field::Bool(b)) => {
                m.extra.insert(k.to_string(), Value::Bool(b));
            }
        }
    }
    if direct && m.line_type.is_some() {
        return Ok(m);
    }
    let mut object = serde_json::Map::new();
    for &(k, v) in fields {
        let v = match v {
            Field::Absent => continue,
            Field::Bool(b) => Value::Bool(b),
            Field::Str(s) => Value::String(s.to_string()),
        };
        object.insert(k.to_string(), v);
    }
    Message::from_value(Value::Object(object), &location())
}

/// `parseTranscript` natively: every line as a [`Message`] (unknown line types included).
pub fn parse_transcript(text: &str) -> Result<Vec<Message>> {
    split_lines(text)?
        .into_iter()
        .map(|line| {
            let v: Value =
                serde_json::from_str(line.text).map_err(|e| malformed_line(line.number, e))?;
            if !v.is_object() {
                return Err(non_object_line(line.number, json_type_name(&v)));
            }
            if nested_deeper_than(&v, MAX_NESTING) {
                return Err(too_deep_line(line.number));
            }
            Message::from_object(v).map_err(|e| {
                Error::new(
                    ErrorCode::MalformedTranscript,
                    format!("line {}: {e}", line.number),
                )
            })
        })
        .collect()
}

/// `serializeTranscript` natively: one JSON object per line, each line ending in `\n`.
pub fn serialize_transcript(messages: &[Message]) -> Result<String> {
    let mut out = String::new();
    for (i, m) in messages.iter().enumerate() {
        let line = serde_json::to_string(m).map_err(|e| {
            Error::new(
                ErrorCode::SerializationFailed,
                format!("messages[{i}]: {e}"),
            )
        })?;
        out.push_str(&line);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {

    #[test]
    fn picked_fields_give_what_their_json_object_gives() {
        use super::{message_from_fields, Field, Field::*};
        let s = Field::Str;
        let cases: Vec<Vec<(&str, Field)>> = vec![
            vec![
                ("type", s("progress")),
                ("subtype", Absent),
                ("uuid", s("u-1")),
                ("isSidechain", Bool(false)),
                ("timestamp", s("2025-01-01T00:00:00.000Z")),
            ],
            // Session fields go to the unknown fields, in their order.
            vec![
                ("type", s("file-history-snapshot")),
                ("uuid", Absent),
                ("cwd", s("/w")),
                ("isSidechain", Bool(true)),
                ("userType", s("external")),
                ("isTeammate", Bool(false)),
                ("version", s("2.0")),
            ],
            // A typed field of another type, no type, nothing at all.
            vec![("type", s("progress")), ("isSidechain", s("no"))],
            vec![("type", s("progress")), ("uuid", Bool(true))],
            vec![("type", Bool(true)), ("uuid", s("u"))],
            vec![
                ("type", s("x")),
                ("isMeta", Bool(true)),
                ("role", s("user")),
            ],
            vec![
                ("type", s("x")),
                ("content", s("c")),
                ("message", Bool(false)),
            ],
            vec![("uuid", s("u"))],
            vec![],
            // Strings JSON escapes; an empty one.
            vec![
                ("type", s("x\"\\\n\u{0}\u{e9}\u{1f600}")),
                ("timestamp", s("")),
            ],
            vec![("type", s("system")), ("subtype", s("informational"))],
        ];
        for f in cases {
            let object: serde_json::Map<String, Value> = f
                .iter()
                .filter_map(|&(k, v)| match v {
                    Absent => None,
                    Bool(b) => Some((k.to_string(), Value::Bool(b))),
                    Str(t) => Some((k.to_string(), Value::String(t.to_string()))),
                })
                .collect();
            let json = serde_json::to_string(&object).unwrap();
            let at = || "messages[3]".to_string();
            match (
                message_from_json_text(&json, &at),
                message_from_fields(&f, &at),
            ) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{json}");
                    assert_eq!(
                        serde_json::to_string(&a).unwrap(),
                        serde_json::to_string(&b).unwrap()
                    );
                }
                (Err(a), Err(b)) => assert_eq!((a.code, a.message), (b.code, b.message)),
                (a, b) => panic!("{json}: {a:?} / {b:?}"),
            }
        }
    }

    #[test]
    fn typed_fields_are_the_names_a_message_writes() {
        let m = Message {
            line_type: Some(None),
            role: Some(None),
            content: Some(None),
            message: Some(None),
            subtype: Some(None),
            uuid: Some(None),
            is_sidechain: Some(None),
            is_meta: Some(None),
            is_compact_summary: Some(None),
            timestamp: Some(None),
            extra: Default::default(),
        };
        let v = serde_json::to_value(&m).unwrap();
        let mut written: Vec<&str> = v.as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let mut typed = TYPED_FIELDS.to_vec();
        written.sort_unstable();
        typed.sort_unstable();
        assert_eq!(written, typed);
    }

    /// A line `extra` levels deeper than the line object itself: `{"type":"user",…,"x":[[…]]}`.
    fn line_nested(extra: usize) -> String {
        format!(
            r#"{{"type":"user","message":{{"role":"user","content":"hi"}},"x":{}0{}}}"#,
            "[".repeat(extra),
            "]".repeat(extra)
        )
    }

    #[test]
    fn one_nesting_rule_for_lines() {
        // The line is level 1; `x` holds `extra` arrays: depth 1 + extra.
        let ok = line_nested(MAX_NESTING - 1);
        let parsed = parse_transcript(&ok).unwrap();
        assert_eq!(serialize_transcript(&parsed).unwrap().trim_end(), ok);
        let e = parse_transcript(&line_nested(MAX_NESTING)).unwrap_err();
        assert_eq!(e.code, ErrorCode::MalformedTranscript);
        assert!(
            e.message
                .starts_with("line 1: nested deeper than 100 levels"),
            "{}",
            e.message
        );
        let v: Value = serde_json::from_str(&ok).unwrap();
        assert!(!nested_deeper_than(&v, MAX_NESTING));
        assert!(nested_deeper_than(&v, MAX_NESTING - 1));
        assert!(
            !nested_deeper_than(&Value::from(3), 0),
            "a scalar has no levels"
        );
    }

    use super::*;

    #[test]
    fn splits_and_numbers_lines() {
        let l = split_lines("{\"a\":1}\r\n{\"b\":2}\n").unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[1].number, 2);
        assert_eq!(l[0].text, "{\"a\":1}");
        assert!(split_lines("").unwrap().is_empty());
    }

    #[test]
    fn blank_and_malformed_lines_are_reported() {
        let e = split_lines("{}\n\n{}\n").unwrap_err();
        assert_eq!(e.code, ErrorCode::MalformedTranscript);
        assert!(e.message.starts_with("line 2"), "{}", e.message);
        let e = parse_transcript("{\"type\":\"user\"}\n{oops\n").unwrap_err();
        assert!(
            e.message.starts_with("line 2: invalid JSON"),
            "{}",
            e.message
        );
        let e = parse_transcript("[1,2]\n").unwrap_err();
        assert!(e.message.contains("expected a JSON object"));
    }

    #[test]
    fn lone_surrogate_escapes_are_replaced() {
        let text = r#"{"a":"x\ud800y","b":"\ud83d\ude00","c":"\\ud800","d":"\udc00"}"#;
        let fixed = replace_lone_surrogates(text);
        let v: Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["a"], "x\u{fffd}y");
        assert_eq!(v["b"], "😀");
        assert_eq!(v["c"], "\\ud800");
        assert_eq!(v["d"], "\u{fffd}");
    }

    #[test]
    fn unknown_lines_round_trip() {
        let text = "{\"type\":\"queue-operation\",\"operation\":\"enqueue\",\"x\":[1,{\"y\":null}]}\n{\"no_type\":true}\n\
                    {\"type\":\"queue-operation\",\"content\":[1,{\"y\":null}]}\n\
                    {\"type\":\"progress\",\"uuid\":5}\n{\"type\":\"summary\",\"timestamp\":1770000000}\n";
        let m = parse_transcript(text).unwrap();
        let back = serialize_transcript(&m).unwrap();
        assert_eq!(back, text);
    }
}

#[cfg(test)]
mod json_text_tests {
    use super::*;
    use crate::model::error::ErrorCode;

    /// What the value path alone gives: parse into a value (lone surrogates replaced), read it.
    fn by_value(text: &str) -> Result<Message> {
        let v: Value = serde_json::from_str(text)
            .or_else(|_| serde_json::from_str(&replace_lone_surrogates(text)))
            .map_err(|e| Error::invalid_message(e.to_string()).at("messages[3]"))?;
        Message::from_value(v, "messages[3]")
    }

    #[test]
    fn direct_reading_gives_what_the_value_path_gives() {
        let texts = [
            r#"{"type":"user","uuid":"u1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"ok"}],"is_error":false}]},"zz":{"b":1,"a":[1.5,-0,12345678901234567890]}}"#,
            r#"{"type":"assistant","message":{"id":"m","role":"assistant","model":"x","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"tool_use","id":"t","name":"Read","input":{"file_path":"/a"}},{"type":"mystery","n":null}],"usage":{"input_tokens":3,"output_tokens":null,"service_tier":"standard"}},"timestamp":"2025-01-01T00:00:00Z"}"#,
            r#"{"role":"user","content":"hi \ud83d\ude00 \u00e9","extra":[{}]}"#,
            r#"{"type":"progress","uuid":5,"data":{"type":"x"},"content":{"nested":true},"timestamp":7}"#,
            r#"{"type":"progress","uuid":"p","isSidechain":"no"}"#,
            r#"{"role":"user","content":"lone \ud800 surrogate"}"#,
            r#"{"type":"message","role":"assistant","content":[{"type":"compaction","content":"s"}]}"#,
            r#"{"type":"system","subtype":"compact_boundary","compactMetadata":{"preTokens":1}}"#,
            r#"{"type":"user","message":null,"isMeta":null}"#,
        ];
        for t in texts {
            let direct = message_from_json_text(t, &|| "messages[3]".into()).unwrap();
            assert_eq!(direct, by_value(t).unwrap(), "{t}");
            assert_eq!(
                serde_json::to_string(&direct).unwrap(),
                serde_json::to_string(&by_value(t).unwrap()).unwrap()
            );
        }
    }

    #[test]
    fn direct_reading_keeps_the_value_paths_errors() {
        let deep = format!(
            r#"{{"role":"user","content":"x","d":{}0{}}}"#,
            "[".repeat(100),
            "]".repeat(100)
        );
        for t in [
            "[1,2]",
            "null",
            "5",
            r#"{"content":"no type or role"}"#,
            r#"{"type":"user","message":{"role":"user","content":5}}"#,
            r#"{"role":"user","content":[{"text":"no type"}]}"#,
            deep.as_str(),
        ] {
            let e = message_from_json_text(t, &|| "messages[3]".into()).unwrap_err();
            let v = by_value(t).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidMessage, "{t}");
            assert_eq!((e.code, &e.message), (v.code, &v.message), "{t}");
            assert!(e.message.contains("messages[3]"), "{}", e.message);
        }
    }

    #[test]
    fn nesting_on_text_agrees_with_nesting_on_values() {
        let cases = [
            r#"{}"#.to_string(),
            r#"{"a":"[[[[{{{{","b":"\\\"[[[["}"#.to_string(),
            r#"[[],[[]],{"a":[{"b":{}}]}]"#.to_string(),
            format!("{}{}", "[".repeat(100), "]".repeat(100)),
            format!("{}{}", "[".repeat(101), "]".repeat(101)),
            format!(
                r#"{{"s":"]]]]","x":{}1{}}}"#,
                "[".repeat(99),
                "]".repeat(99)
            ),
            // Long strings (skipped eight bytes at a time) with quotes, escapes and brackets
            // at every offset of a word, around nesting just at and past the limit.
            format!(
                r#"{{"s":"abcdefgh\"[[[[ijklmnop\\","t":"{}\\\"{{{{{{","x":{}"{}"{}}}"#,
                "é".repeat(13),
                "[".repeat(100),
                r#"x\\y\"z["#.repeat(9),
                "]".repeat(100)
            ),
            format!(
                r#"{{"s":"{}","x":{}"a\"{}\\"{}}}"#,
                r#"0123456\\"#.repeat(5),
                "[".repeat(99),
                "]".repeat(17),
                "]".repeat(99)
            ),
        ];
        for t in &cases {
            let v: Value = serde_json::from_str(t).expect(t);
            for limit in [1, 2, 3, 99, 100, 101] {
                assert_eq!(
                    text_nested_deeper_than(t, limit),
                    nested_deeper_than(&v, limit),
                    "{t} at {limit}"
                );
            }
        }
    }
}
