//! Checks over the library's typed messages (what the fuzz targets compare), and [`Json`]:
//! JSON values built by `arbitrary` from the library's vocabulary.

use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use context_compaction::model::messages::{Block, Content, Message, ToolResultContent};
use serde_json::{json, Map, Value};

/// Every thinking and redacted_thinking block of the conversation, serialized, with its
/// message index (what must stay byte-identical).
pub fn thinking_blocks(messages: &[Message]) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        if let Some(Content::Blocks(bs)) = m.content() {
            for b in bs {
                if matches!(b, Block::Thinking(_) | Block::RedactedThinking(_)) {
                    out.push((i, serde_json::to_string(b).unwrap()));
                }
            }
        }
    }
    out
}

/// The ids of every tool call and tool result, per message (what no edit may change).
pub fn tool_ids(messages: &[Message]) -> Vec<Vec<String>> {
    messages
        .iter()
        .map(|m| match m.content() {
            Some(Content::Blocks(bs)) => bs
                .iter()
                .filter_map(|b| match b {
                    Block::ToolUse(t) | Block::ServerToolUse(t) => Some(format!("use:{}", t.id)),
                    Block::ToolResult(r) => Some(format!("result:{}", r.tool_use_id)),
                    Block::ServerToolResult(r) => Some(format!("server_result:{}", r.tool_use_id)),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        })
        .collect()
}

/// Whether a tool result's content is exactly the text `s`.
pub fn result_is(b: &Block, s: &str) -> bool {
    matches!(b, Block::ToolResult(r) if matches!(&r.content, Some(Some(ToolResultContent::Text(t))) if t == s))
}

/// With `FUZZ_DUMP=1` in the environment (when reproducing an artifact), prints the
/// generated conversation as JSONL to stderr.
pub fn dump(messages: &[Message]) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if *ON.get_or_init(|| std::env::var_os("FUZZ_DUMP").is_some()) {
        for (i, m) in messages.iter().enumerate() {
            eprintln!("[{i}] {}", serde_json::to_string(m).unwrap());
        }
    }
}

/// A JSON value built by `arbitrary` from the library's own vocabulary (field names, type
/// strings, numbers at the edges), so that structural cases (`"type": null`, a number where
/// a string is expected, nested blocks) are reached without guessing bytes.
#[derive(Clone, Debug)]
pub struct Json(
    /// The value.
    pub Value,
);

const KEYS: &[&str] = &[
    "type",
    "role",
    "content",
    "message",
    "subtype",
    "uuid",
    "parentUuid",
    "isSidechain",
    "isMeta",
    "isCompactSummary",
    "timestamp",
    "id",
    "usage",
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "text",
    "tool_use_id",
    "name",
    "input",
    "source",
    "data",
    "media_type",
    "signature",
    "thinking",
    "attachment",
    "compactMetadata",
    "keptMessages",
    "stop_reason",
    "is_error",
    "file_path",
    "citations",
];

const STRINGS: &[&str] = &[
    "user",
    "assistant",
    "system",
    "attachment",
    "progress",
    "message",
    "text",
    "image",
    "document",
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "server_tool_use",
    "web_search_tool_result",
    "_tool_result",
    "compact_boundary",
    "base64",
    "image/png",
    "",
    "[Old tool result content cleared]",
    "skill_listing",
    "2026-02-10T21:11:56.906Z",
    "Read",
    "Bash",
    "toolu_1",
    "msg_1",
];

/// The words an arbitrary JSON value is made of ([`arbitrary_json_with`]): the keys its
/// objects mostly use, the strings it mostly holds, how its numbers are drawn, and how deep it
/// nests. The fuzz targets give their own (every key an option parser reads, the edge numbers
/// of their parser); [`Json`] uses the message vocabulary.
pub struct Vocabulary<'v> {
    /// Keys (1 in 8 keys is arbitrary text instead).
    pub keys: &'v [&'v str],
    /// Strings (as often as arbitrary text).
    pub strings: &'v [&'v str],
    /// Draws a number.
    pub number: fn(&mut Unstructured<'_>) -> ArbResult<Value>,
    /// Past this depth only scalars are drawn.
    pub max_depth: u32,
}

/// The numbers of [`Json`]: small, negative, large, any `f64`, beyond 2^53, fractions.
pub fn message_number(u: &mut Unstructured<'_>) -> ArbResult<Value> {
    Ok(match u.int_in_range(0..=5)? {
        0 => json!(u.arbitrary::<u16>()?),
        1 => json!(-i64::from(u.arbitrary::<u32>()?)),
        2 => json!(u.arbitrary::<u64>()?),
        3 => serde_json::Number::from_f64(u.arbitrary::<f64>()?).map_or(Value::Null, Value::Number),
        4 => json!(1e15 + f64::from(u.arbitrary::<u8>()?)),
        _ => json!(f64::from(u.arbitrary::<u16>()?) / 8.0),
    })
}

/// Picks one of `words` (indexed by one byte, or two when there are more than 256).
fn pick<'v>(u: &mut Unstructured<'_>, words: &[&'v str]) -> ArbResult<&'v str> {
    let i = if words.len() > 256 {
        usize::from(u.arbitrary::<u16>()?)
    } else {
        usize::from(u.arbitrary::<u8>()?)
    };
    Ok(words[i % words.len()])
}

/// An arbitrary JSON value at `depth` drawn from `vocabulary`.
pub fn arbitrary_json_with(
    u: &mut Unstructured<'_>,
    vocabulary: &Vocabulary<'_>,
    depth: u32,
) -> ArbResult<Value> {
    let choice = if depth >= vocabulary.max_depth {
        u.int_in_range(0..=4)?
    } else {
        u.int_in_range(0..=7)?
    };
    Ok(match choice {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => (vocabulary.number)(u)?,
        3 => Value::String(pick(u, vocabulary.strings)?.to_string()),
        4 => Value::String(u.arbitrary::<String>()?.chars().take(64).collect()),
        5 | 6 => {
            let n = u.int_in_range(0..=6)?;
            let mut o = Map::new();
            for _ in 0..n {
                let key = if u.ratio(1, 8)? {
                    u.arbitrary::<String>()?.chars().take(16).collect()
                } else {
                    pick(u, vocabulary.keys)?.to_string()
                };
                o.insert(key, arbitrary_json_with(u, vocabulary, depth + 1)?);
            }
            Value::Object(o)
        }
        _ => {
            let n = u.int_in_range(0..=4)?;
            let mut a = Vec::new();
            for _ in 0..n {
                a.push(arbitrary_json_with(u, vocabulary, depth + 1)?);
            }
            Value::Array(a)
        }
    })
}

/// The vocabulary of [`Json`]: message keys and strings.
const MESSAGES: Vocabulary<'static> = Vocabulary {
    keys: KEYS,
    strings: STRINGS,
    number: message_number,
    max_depth: 5,
};

impl<'a> Arbitrary<'a> for Json {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        arbitrary_json_with(u, &MESSAGES, 0).map(Json)
    }
}
