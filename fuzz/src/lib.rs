//! Shared parts of the fuzz targets: a structured conversation generator (driven by
//! `arbitrary`, so libFuzzer's mutations become structural changes) and the checks the
//! targets share.
//!
//! The generator builds conversations in both input shapes:
//! * API shape: `{role, content}` messages, alternating user / assistant;
//! * Claude Code transcript lines: one response split over several assistant lines sharing
//!   `message.id` (one block each), the tool_result lines of parallel calls interleaved with
//!   them, lines the API never sees (progress, system, file-history-snapshot, unknown types,
//!   sub-agent sidechain lines), attachment lines, and `compact_boundary` lines followed by
//!   their `isCompactSummary` line.
//!
//! Content covers text, thinking / redacted_thinking with signatures, parallel tool_use /
//! tool_result pairs, server_tool_use + web_search_tool_result, images and documents (top
//! level and inside tool_result content) and block types the library does not know.
//!
//! Built this way the conversation is valid for the Messages API
//! (`messages_api::validate_for_api` finds nothing) unless a [`Damage`] was applied; the targets
//! check the "stays valid" invariants only where the input was valid.

use arbitrary::{Arbitrary, Result as ArbResult, Unstructured};
use context_compaction::model::messages::{Block, Content, Message, ToolResultContent};
use serde_json::{json, Map, Value};

/// Text of `len` characters from one of a few alphabets, or raw fuzzer text.
#[derive(Clone, Debug)]
pub enum Txt {
    /// `len` characters cycling through alphabet `alpha`.
    Cycle { len: u16, alpha: u8 },
    /// Text straight from the fuzzer (at most 200 characters).
    Raw(String),
}

impl<'a> Arbitrary<'a> for Txt {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        Ok(if u.ratio(1, 5)? {
            let s: String = u.arbitrary()?;
            Txt::Raw(s.chars().take(200).collect())
        } else {
            Txt::Cycle {
                len: u.int_in_range(0..=3000)?,
                alpha: u.arbitrary()?,
            }
        })
    }
}

const ALPHABETS: &[&str] = &[
    "lorem ipsum dolor sit amet, consectetur ",
    "é😀ß中文 ab ",
    "{\"k\": [1, 2.5, null], \"s\": \"v\"}\n",
    "\"quoted\" \\back\\slash\ttab\r\n",
    "<system-reminder>remember</system-reminder> fix the bug in src/main.rs ",
    "<command-name>/compact</command-name><command-args>keep it</command-args>",
    "Error: ENOENT: no such file or directory, open '/tmp/x' ",
    "<summary>s</summary><analysis>a</analysis>",
    "[Request interrupted by user] ",
    "<bash-input>ls</bash-input><bash-stdout>a b</bash-stdout>",
];

impl Txt {
    /// The text.
    pub fn make(&self) -> String {
        match self {
            Txt::Raw(s) => s.clone(),
            Txt::Cycle { len, alpha } => {
                let a = ALPHABETS[usize::from(*alpha) % ALPHABETS.len()];
                a.chars().cycle().take(usize::from(*len)).collect()
            }
        }
    }
}

/// A block of a user prompt.
#[derive(Clone, Debug, Arbitrary)]
pub enum UserBlock {
    Text(Txt),
    Image(u8),
    Document(u8),
    Unknown(u8),
}

/// A block inside a tool result's content array.
#[derive(Clone, Debug, Arbitrary)]
pub enum Nested {
    Text(Txt),
    Image(u8),
    Document(u8),
}

/// A tool result's content.
#[derive(Clone, Debug, Arbitrary)]
pub enum ResultBody {
    Str(Txt),
    Cleared,
    Blocks(Vec<Nested>),
    Absent,
}

/// A client tool call and its result.
#[derive(Clone, Debug, Arbitrary)]
pub struct Tool {
    pub name: u8,
    pub path: Option<u8>,
    pub result: ResultBody,
    pub is_error: bool,
    /// Bit 0: the results of the calls so far are written before the next call (transcript
    /// interleaving); bits 1..: order of the results within a batch.
    pub finish: u8,
}

/// A thinking block.
#[derive(Clone, Debug, Arbitrary)]
pub enum Thought {
    Thinking(Txt),
    Redacted(u16),
}

/// A token count as it may appear in `usage`.
#[derive(Clone, Debug, Arbitrary)]
pub enum Count {
    Int(u32),
    Null,
    Absent,
    Float(u16, u8),
    Big(u64),
    Negative(i32),
    Huge,
    Tiny,
}

impl Count {
    fn value(&self) -> Option<Value> {
        match self {
            Count::Int(n) => Some(json!(n)),
            Count::Null => Some(Value::Null),
            Count::Absent => None,
            Count::Float(a, b) => Some(json!(f64::from(*a) + f64::from(*b) / 256.0)),
            Count::Big(n) => Some(json!(n)),
            Count::Negative(n) => Some(json!(-(i64::from(*n).abs()) - 1)),
            Count::Huge => Some(json!(1e300)),
            Count::Tiny => Some(json!(1e-300)),
        }
    }

    /// A plausible count (what the API sends).
    fn plausible(&self) -> bool {
        matches!(self, Count::Int(_) | Count::Null | Count::Absent)
    }
}

/// One API response of the assistant.
#[derive(Clone, Debug, Arbitrary)]
pub struct Response {
    pub thoughts: Vec<Thought>,
    pub text: Option<Txt>,
    pub search: bool,
    pub unknown: bool,
    pub tools: Vec<Tool>,
    pub usage: Option<[Count; 4]>,
    /// Transcript: one line per block (split response).
    pub split: bool,
    /// Transcript: the usage was logged mid-stream (`stop_reason: null` on every line).
    pub partial: bool,
    /// API shape: usage also beside the content (SDK style). Transcript split response: usage
    /// on its first line only (its later lines carry none).
    pub api_usage: bool,
}

/// A user turn and the responses it caused.
#[derive(Clone, Debug, Arbitrary)]
pub struct Turn {
    pub prompt: Vec<UserBlock>,
    pub prompt_as_string: bool,
    pub meta: bool,
    pub attachments: Vec<u8>,
    pub responses: Vec<Response>,
}

/// A line the API never sees, or a sub-agent line.
#[derive(Clone, Debug, Arbitrary)]
pub enum Noise {
    Progress,
    System,
    Snapshot,
    Unknown,
    SidechainUser(Txt),
    SidechainAssistant(u32),
    SidechainBoundary,
}

/// Something that breaks the conversation (the "stays valid" checks are then skipped, the
/// "never panics, deterministic" ones are not).
#[derive(Clone, Debug, Arbitrary)]
pub enum Damage {
    Remove(u16),
    Duplicate(u16),
    Swap(u16, u16),
    RenameResult(u16),
}

/// A whole generated conversation.
#[derive(Clone, Debug, Arbitrary)]
pub struct Convo {
    pub transcript: bool,
    pub turns: Vec<Turn>,
    pub noise: Vec<(u16, Noise)>,
    pub boundary_after: Option<u16>,
    /// `compactMetadata.keptMessages` of the boundary.
    pub boundary_kept: Option<u8>,
    pub damage: Option<Damage>,
}

pub const TOOL_NAMES: &[&str] = &[
    "Read",
    "Bash",
    "Grep",
    "Glob",
    "WebSearch",
    "WebFetch",
    "Edit",
    "Write",
    "Task",
    "TodoWrite",
    "NotebookEdit",
    "mcp__github__get_issue",
];

const ATTACHMENT_TYPES: &[&str] = &[
    "skill_listing",
    "skill_discovery",
    "new_file",
    "todo_reminder",
    "plan_mode",
];

fn media(kind: &str, n: u8) -> Value {
    let data = "QUJD".repeat(usize::from(n) + 1);
    let media_type = if kind == "image" {
        ["image/png", "image/jpeg", "image/gif"][usize::from(n) % 3]
    } else {
        "application/pdf"
    };
    if n % 7 == 6 {
        json!({"type": kind, "source": {"type": "url", "url": format!("https://e.invalid/{n}")}})
    } else {
        json!({"type": kind, "source": {"type": "base64", "media_type": media_type, "data": data}})
    }
}

fn non_empty(s: String) -> String {
    if s.trim().is_empty() {
        format!("{s}?")
    } else {
        s
    }
}

fn user_block(b: &UserBlock) -> Value {
    match b {
        UserBlock::Text(t) => json!({"type": "text", "text": non_empty(t.make())}),
        UserBlock::Image(n) => media("image", *n),
        UserBlock::Document(n) => media("document", *n),
        UserBlock::Unknown(n) => {
            json!({"type": format!("future_block_{}", n % 3), "payload": [n, {"deep": true}]})
        }
    }
}

fn result_content(b: &ResultBody) -> Option<Value> {
    match b {
        ResultBody::Str(t) => Some(json!(t.make())),
        ResultBody::Cleared => Some(json!("[Old tool result content cleared]")),
        ResultBody::Blocks(bs) => Some(Value::Array(
            bs.iter()
                .take(6)
                .map(|n| match n {
                    Nested::Text(t) => json!({"type": "text", "text": t.make()}),
                    Nested::Image(k) => media("image", *k),
                    Nested::Document(k) => media("document", *k),
                })
                .collect(),
        )),
        ResultBody::Absent => None,
    }
}

/// Builds the JSON messages of a conversation (before any damage).
pub struct Builder {
    transcript: bool,
    out: Vec<Value>,
    ids: usize,
    clock: u64,
    last_uuid: Option<String>,
}

impl Builder {
    fn new(transcript: bool) -> Self {
        Builder {
            transcript,
            out: Vec::new(),
            ids: 0,
            clock: 1_770_000_000_000,
            last_uuid: None,
        }
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.ids += 1;
        format!("{prefix}_{:04}", self.ids)
    }

    fn timestamp(&mut self) -> String {
        self.clock += 61_000;
        let secs = self.clock / 1000;
        let (days, rem) = (secs / 86_400, secs % 86_400);
        // Only the time of day moves in a way that matters; the date is fixed per day count.
        format!(
            "2026-02-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            1 + days % 28,
            rem / 3600,
            rem / 60 % 60,
            rem % 60,
            self.clock % 1000
        )
    }

    /// A transcript line around `message` (or an API message).
    fn line(&mut self, ty: &str, message: Value, extra: Map<String, Value>) {
        if !self.transcript {
            let mut m = message;
            if let Value::Object(o) = &mut m {
                for (k, v) in extra {
                    if k == "usage" {
                        o.insert(k, v);
                    }
                }
            }
            self.out.push(m);
            return;
        }
        let uuid = self.fresh("uuid");
        let mut o = Map::new();
        o.insert("parentUuid".into(), json!(self.last_uuid));
        o.insert("isSidechain".into(), json!(false));
        o.insert("type".into(), json!(ty));
        o.insert("message".into(), message);
        o.insert("uuid".into(), json!(uuid));
        o.insert("timestamp".into(), json!(self.timestamp()));
        for (k, v) in extra {
            if k != "usage" {
                o.insert(k, v);
            }
        }
        self.last_uuid = Some(uuid);
        self.out.push(Value::Object(o));
    }

    fn user(&mut self, content: Value, meta: bool) {
        let mut extra = Map::new();
        if meta {
            extra.insert("isMeta".into(), json!(true));
        }
        self.line("user", json!({"role": "user", "content": content}), extra);
    }

    fn turn(&mut self, t: &Turn) {
        let prompt: Vec<Value> = t.prompt.iter().take(6).map(user_block).collect();
        let text_only = t
            .prompt
            .iter()
            .take(6)
            .all(|b| matches!(b, UserBlock::Text(_)));
        let content = if prompt.is_empty() {
            json!("go on")
        } else if t.prompt_as_string && text_only && prompt.len() == 1 {
            prompt[0]["text"].clone()
        } else {
            Value::Array(prompt)
        };
        self.user(content, t.meta && self.transcript);
        if self.transcript {
            for a in t.attachments.iter().take(3) {
                let ty = ATTACHMENT_TYPES[usize::from(*a) % ATTACHMENT_TYPES.len()];
                let uuid = self.fresh("uuid");
                let ts = self.timestamp();
                self.out
                    .push(json!({"parentUuid": self.last_uuid, "isSidechain": false,
                    "type": "attachment", "uuid": uuid, "timestamp": ts,
                    "attachment": {"type": ty, "content": format!("attached {a}")}}));
                self.last_uuid = Some(uuid);
            }
        }
        let responses: Vec<&Response> = t.responses.iter().take(4).collect();
        if responses.is_empty() {
            self.response(&Response {
                thoughts: vec![],
                text: Some(Txt::Cycle { len: 12, alpha: 0 }),
                search: false,
                unknown: false,
                tools: vec![],
                usage: None,
                split: false,
                partial: false,
                api_usage: false,
            });
        }
        for r in responses {
            self.response(r);
        }
    }

    fn response(&mut self, r: &Response) {
        let msg_id = self.fresh("msg");
        let mut head: Vec<Value> = Vec::new();
        for th in r.thoughts.iter().take(2) {
            head.push(match th {
                Thought::Thinking(t) => {
                    json!({"type": "thinking", "thinking": t.make(), "signature": format!("sig{}", self.ids)})
                }
                Thought::Redacted(n) => {
                    json!({"type": "redacted_thinking", "data": format!("enc{n}")})
                }
            });
        }
        if let Some(t) = &r.text {
            head.push(json!({"type": "text", "text": t.make()}));
        }
        if r.search {
            let sid = self.fresh("srvtoolu");
            head.push(json!({"type": "server_tool_use", "id": sid, "name": "web_search", "input": {"query": "q"}}));
            head.push(json!({"type": "web_search_tool_result", "tool_use_id": sid, "content": []}));
        }
        if r.unknown {
            head.push(json!({"type": "mystery_block", "x": 1}));
        }
        let tools: Vec<&Tool> = r.tools.iter().take(5).collect();
        if head.is_empty() && tools.is_empty() {
            head.push(json!({"type": "text", "text": "ok"}));
        }
        let calls: Vec<(String, Value, Value)> = tools
            .iter()
            .map(|t| {
                let id = self.fresh("toolu");
                let name = TOOL_NAMES[usize::from(t.name) % TOOL_NAMES.len()];
                let mut input = Map::new();
                if let Some(p) = t.path {
                    input.insert("file_path".into(), json!(format!("/src/f{}.rs", p % 8)));
                }
                if name == "Bash" {
                    input.insert("command".into(), json!(format!("cargo test {}", t.name)));
                }
                let call = json!({"type": "tool_use", "id": id, "name": name, "input": input});
                let mut res = Map::new();
                res.insert("type".into(), json!("tool_result"));
                res.insert("tool_use_id".into(), json!(id));
                if let Some(c) = result_content(&t.result) {
                    res.insert("content".into(), c);
                }
                if t.is_error {
                    res.insert("is_error".into(), json!(true));
                }
                (id, call, Value::Object(res))
            })
            .collect();
        let usage = r.usage.as_ref().map(|u| {
            let mut o = Map::new();
            for (k, c) in [
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
                "output_tokens",
            ]
            .iter()
            .zip(u.iter())
            {
                if let Some(v) = c.value() {
                    o.insert((*k).into(), v);
                }
            }
            Value::Object(o)
        });
        let stop = if r.partial {
            Value::Null
        } else if calls.is_empty() {
            json!("end_turn")
        } else {
            json!("tool_use")
        };
        if !self.transcript || !r.split {
            let mut content = head;
            content.extend(calls.iter().map(|c| c.1.clone()));
            let mut message = json!({"role": "assistant", "content": content});
            let mut extra = Map::new();
            if self.transcript {
                message["id"] = json!(msg_id);
                message["stop_reason"] = stop;
                if let Some(u) = &usage {
                    message["usage"] = u.clone();
                }
            } else if let (Some(u), true) = (&usage, r.api_usage) {
                extra.insert("usage".into(), u.clone());
            }
            self.line("assistant", message, extra);
            if !calls.is_empty() {
                self.user(
                    Value::Array(calls.iter().map(|c| c.2.clone()).collect()),
                    false,
                );
            }
            return;
        }
        // Split response: one block per line, all lines sharing `message.id` and usage (or,
        // with `api_usage`, usage on the first line only).
        let first_only = r.api_usage;
        let line = |b: &mut Builder, block: Value, first: bool, last: bool| {
            let mut message = json!({"role": "assistant", "id": msg_id, "content": [block]});
            message["stop_reason"] = if last { stop.clone() } else { Value::Null };
            if let Some(u) = &usage {
                if first || !first_only {
                    message["usage"] = u.clone();
                }
            }
            b.line("assistant", message, Map::new());
        };
        let n_head = head.len();
        for (k, block) in head.into_iter().enumerate() {
            line(self, block, k == 0, calls.is_empty() && k + 1 == n_head);
        }
        // Calls in batches; each batch's results follow it (in some order) before the next
        // batch's calls, as parallel tools finish.
        let mut batch: Vec<usize> = Vec::new();
        for (k, t) in tools.iter().enumerate() {
            line(
                self,
                calls[k].1.clone(),
                n_head == 0 && k == 0,
                k + 1 == calls.len(),
            );
            batch.push(k);
            if t.finish & 1 == 1 || k + 1 == calls.len() {
                let mut order = batch.clone();
                let rot = usize::from(t.finish >> 1) % order.len();
                order.rotate_left(rot);
                for j in order {
                    self.user(json!([calls[j].2.clone()]), false);
                }
                batch.clear();
            }
        }
    }

    fn noise(&mut self, n: &Noise) -> Value {
        let uuid = self.fresh("uuid");
        match n {
            Noise::Progress => {
                json!({"type": "progress", "uuid": uuid, "data": {"type": "hook_progress", "n": self.ids}})
            }
            Noise::System => {
                json!({"type": "system", "subtype": "informational", "uuid": uuid, "content": "note", "isMeta": false})
            }
            Noise::Snapshot => {
                json!({"type": "file-history-snapshot", "messageId": uuid, "snapshot": {"trackedFileBackups": {}}})
            }
            Noise::Unknown => {
                json!({"type": "queue-operation", "operation": "enqueue", "payload": [1, {"y": null}]})
            }
            Noise::SidechainUser(t) => json!({"type": "user", "isSidechain": true, "uuid": uuid,
                "message": {"role": "user", "content": t.make()}}),
            Noise::SidechainAssistant(k) => {
                json!({"type": "assistant", "isSidechain": true, "uuid": uuid,
                "message": {"role": "assistant", "id": format!("side_{k}"), "content": [
                    {"type": "tool_use", "id": format!("side_tool_{k}"), "name": "Read", "input": {"file_path": "/side"}}],
                    "usage": {"input_tokens": k, "output_tokens": 3}}})
            }
            Noise::SidechainBoundary => {
                json!({"type": "system", "subtype": "compact_boundary", "isSidechain": true,
                "uuid": uuid, "content": "Conversation compacted"})
            }
        }
    }
}

/// Whether every usage count in the conversation is a plausible API value (so that the token
/// count must succeed).
pub fn plausible_usage(c: &Convo) -> bool {
    c.turns.iter().take(10).all(|t| {
        t.responses.iter().take(4).all(|r| {
            r.usage
                .as_ref()
                .is_none_or(|u| u.iter().all(Count::plausible))
        })
    })
}

impl Convo {
    /// The conversation as JSON messages (damage applied).
    pub fn to_json(&self) -> Vec<Value> {
        let mut b = Builder::new(self.transcript);
        if self.turns.is_empty() {
            b.user(json!("hello"), false);
        }
        for (k, t) in self.turns.iter().take(10).enumerate() {
            b.turn(t);
            if self.transcript && self.boundary_after == Some(k as u16) {
                let uuid = b.fresh("uuid");
                let mut boundary = json!({"type": "system", "subtype": "compact_boundary", "uuid": uuid,
                    "parentUuid": null, "isSidechain": false, "content": "Conversation compacted",
                    "compactMetadata": {"trigger": "auto", "preTokens": 123_456}});
                if let Some(kept) = self.boundary_kept {
                    boundary["compactMetadata"]["keptMessages"] = json!(kept % 6);
                }
                b.out.push(boundary);
                b.last_uuid = Some(uuid);
                b.line(
                    "user",
                    json!({"role": "user", "content": "This session is being continued. <summary>earlier work</summary>"}),
                    {
                        let mut m = Map::new();
                        m.insert("isCompactSummary".into(), json!(true));
                        m
                    },
                );
            }
        }
        let mut out = b.out;
        if self.transcript {
            let mut b2 = Builder::new(true);
            for (pos, n) in self.noise.iter().take(6) {
                let v = b2.noise(n);
                let at = usize::from(*pos) % (out.len() + 1);
                out.insert(at, v);
            }
        }
        if let Some(d) = &self.damage {
            let len = out.len();
            if len > 0 {
                match d {
                    Damage::Remove(i) => {
                        out.remove(usize::from(*i) % len);
                    }
                    Damage::Duplicate(i) => {
                        let v = out[usize::from(*i) % len].clone();
                        out.insert(usize::from(*i) % len, v);
                    }
                    Damage::Swap(i, j) => out.swap(usize::from(*i) % len, usize::from(*j) % len),
                    Damage::RenameResult(i) => {
                        for k in 0..len {
                            let m = &mut out[(usize::from(*i) + k) % len];
                            let content = if m.get("message").is_some() {
                                &mut m["message"]["content"]
                            } else {
                                &mut m["content"]
                            };
                            if let Some(arr) = content.as_array_mut() {
                                if let Some(r) = arr.iter_mut().find(|b| b["type"] == "tool_result")
                                {
                                    r["tool_use_id"] = json!("toolu_renamed");
                                    break;
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// The conversation as typed messages. Generated conversations always parse.
    pub fn messages(&self) -> Vec<Message> {
        let v = Value::Array(self.to_json());
        match Message::parse_all(v.clone()) {
            Ok(m) => m,
            Err(e) => panic!("generated conversation does not parse: {e}\n{v:#}"),
        }
    }
}

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
pub struct Json(pub Value);

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

fn arbitrary_json(u: &mut Unstructured<'_>, depth: u32) -> ArbResult<Value> {
    let pick = if depth >= 5 {
        u.int_in_range(0..=4)?
    } else {
        u.int_in_range(0..=7)?
    };
    Ok(match pick {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => match u.int_in_range(0..=5)? {
            0 => json!(u.arbitrary::<u16>()?),
            1 => json!(-i64::from(u.arbitrary::<u32>()?)),
            2 => json!(u.arbitrary::<u64>()?),
            3 => serde_json::Number::from_f64(u.arbitrary::<f64>()?)
                .map_or(Value::Null, Value::Number),
            4 => json!(1e15 + f64::from(u.arbitrary::<u8>()?)),
            _ => json!(f64::from(u.arbitrary::<u16>()?) / 8.0),
        },
        3 => Value::String(STRINGS[usize::from(u.arbitrary::<u8>()?) % STRINGS.len()].to_string()),
        4 => Value::String(u.arbitrary::<String>()?.chars().take(64).collect()),
        5 | 6 => {
            let n = u.int_in_range(0..=6)?;
            let mut o = Map::new();
            for _ in 0..n {
                let key = if u.ratio(1, 8)? {
                    u.arbitrary::<String>()?.chars().take(16).collect()
                } else {
                    KEYS[usize::from(u.arbitrary::<u8>()?) % KEYS.len()].to_string()
                };
                o.insert(key, arbitrary_json(u, depth + 1)?);
            }
            Value::Object(o)
        }
        _ => {
            let n = u.int_in_range(0..=4)?;
            let mut a = Vec::new();
            for _ in 0..n {
                a.push(arbitrary_json(u, depth + 1)?);
            }
            Value::Array(a)
        }
    })
}

impl<'a> Arbitrary<'a> for Json {
    fn arbitrary(u: &mut Unstructured<'a>) -> ArbResult<Self> {
        arbitrary_json(u, 0).map(Json)
    }
}
