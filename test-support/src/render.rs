//! Renders a [`Convo`] into JSON messages: Claude Code transcript lines or Anthropic API
//! messages ([`Convo::to_json`]), and typed library messages ([`Convo::messages`]).
//!
//! Built this way a conversation is valid for the Messages API (the oracle of
//! [`crate::oracle`] finds nothing) unless a [`Damage`] was applied.

use context_compaction::model::messages::Message;
use serde_json::{json, Map, Value};

use crate::model::*;

/// Size caps applied while rendering (the minimal style keeps the fuzz targets' caps, so
/// that long fuzzer-made vectors stay cheap).
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    /// Turns rendered.
    pub turns: usize,
    /// Prompt blocks per turn.
    pub prompt: usize,
    /// Attachment lines per turn.
    pub attachments: usize,
    /// Responses per turn.
    pub responses: usize,
    /// Thinking blocks per response.
    pub thoughts: usize,
    /// Tool calls per response.
    pub tools: usize,
    /// Blocks per tool result.
    pub nested: usize,
    /// Noise lines.
    pub noise: usize,
}

impl Caps {
    /// The caps of a style.
    pub fn of(style: Style) -> Caps {
        match style {
            Style::Minimal => Caps {
                turns: 10,
                prompt: 6,
                attachments: 3,
                responses: 4,
                thoughts: 2,
                tools: 5,
                nested: 6,
                noise: 6,
            },
            Style::ClaudeCode => Caps {
                turns: usize::MAX,
                prompt: usize::MAX,
                attachments: usize::MAX,
                responses: usize::MAX,
                thoughts: usize::MAX,
                tools: usize::MAX,
                nested: usize::MAX,
                noise: usize::MAX,
            },
        }
    }
}

fn non_empty(s: String) -> String {
    if s.trim().is_empty() {
        format!("{s}?")
    } else {
        s
    }
}

const USAGE_KEYS: [&str; 4] = [
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
];

impl Count {
    /// The JSON value of the count (`None`: the field is left out).
    pub fn value(&self) -> Option<Value> {
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
}

/// Renders one conversation.
struct Builder {
    transcript: bool,
    cc: bool,
    caps: Caps,
    step_ms: u64,
    out: Vec<Value>,
    ids: usize,
    clock: u64,
    last_uuid: Option<String>,
}

impl Builder {
    fn new(transcript: bool, style: Style, step_seconds: u32) -> Self {
        let step = if step_seconds == 0 { 61 } else { step_seconds };
        Builder {
            transcript,
            cc: style == Style::ClaudeCode,
            caps: Caps::of(style),
            step_ms: u64::from(step) * 1000,
            out: Vec::new(),
            ids: 0,
            clock: 1_770_000_000_000,
            last_uuid: None,
        }
    }

    fn next(&mut self) -> usize {
        self.ids += 1;
        self.ids
    }

    /// A fresh id: `prefix_0001` (minimal) or `prefix_000001` (Claude Code).
    fn fresh(&mut self, prefix: &str) -> String {
        let n = self.next();
        if self.cc {
            format!("{prefix}_{n:06}")
        } else {
            format!("{prefix}_{n:04}")
        }
    }

    fn uuid(&mut self) -> String {
        if self.cc {
            let n = self.next();
            format!("{n:08x}-0000-4000-8000-{n:012x}")
        } else {
            self.fresh("uuid")
        }
    }

    fn timestamp(&mut self) -> String {
        self.clock += self.step_ms;
        let secs = self.clock / 1000;
        let (days, rem) = (secs / 86_400, secs % 86_400);
        format!(
            "2026-02-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            1 + days % 28,
            rem / 3600,
            rem / 60 % 60,
            rem % 60,
            self.clock % 1000
        )
    }

    /// A transcript line's envelope (the main chain moves on unless `sidechain`).
    fn envelope(&mut self, ty: &str, sidechain: bool) -> Map<String, Value> {
        self.envelope_with(ty, sidechain, None)
    }

    /// [`Self::envelope`] with the `message` right after `type`.
    fn envelope_with(
        &mut self,
        ty: &str,
        sidechain: bool,
        message: Option<Value>,
    ) -> Map<String, Value> {
        let uuid = self.uuid();
        let mut o = Map::new();
        o.insert("parentUuid".into(), json!(self.last_uuid));
        o.insert("isSidechain".into(), json!(sidechain));
        if self.cc {
            o.insert("userType".into(), json!("external"));
            o.insert("cwd".into(), json!("/work/project"));
            o.insert(
                "sessionId".into(),
                json!("4d5611e5-0000-4000-8000-000000000000"),
            );
            o.insert("version".into(), json!("2.1.39"));
            o.insert("gitBranch".into(), json!("main"));
        }
        o.insert("type".into(), json!(ty));
        if let Some(m) = message {
            o.insert("message".into(), m);
        }
        o.insert("uuid".into(), json!(uuid));
        o.insert("timestamp".into(), json!(self.timestamp()));
        if !sidechain {
            self.last_uuid = Some(uuid);
        }
        o
    }

    /// A transcript line around `message`, or an API message (`usage` in `extra` goes beside
    /// the content there; the other `extra` fields go on the transcript line).
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
        let mut o = self.envelope_with(ty, false, Some(message));
        for (k, v) in extra {
            if k != "usage" {
                o.insert(k, v);
            }
        }
        self.out.push(Value::Object(o));
    }

    fn user(&mut self, content: Value, extra: Map<String, Value>) {
        self.line("user", json!({"role": "user", "content": content}), extra);
    }

    fn media(&mut self, image: bool, n: u8) -> Value {
        if !self.cc {
            let kind = if image { "image" } else { "document" };
            let data = "QUJD".repeat(usize::from(n) + 1);
            let media_type = if image {
                ["image/png", "image/jpeg", "image/gif"][usize::from(n) % 3]
            } else {
                "application/pdf"
            };
            return if n % 7 == 6 {
                json!({"type": kind, "source": {"type": "url", "url": format!("https://e.invalid/{n}")}})
            } else {
                json!({"type": kind, "source": {"type": "base64", "media_type": media_type, "data": data}})
            };
        }
        let k = self.next();
        if image {
            let source = match n % 3 {
                0 => {
                    let data: String = "iVBORw0KGgoAAAANSUhEUgAA"
                        .chars()
                        .cycle()
                        .take(64 + k % 512)
                        .collect();
                    json!({"type": "base64", "media_type": "image/png", "data": data})
                }
                1 => json!({"type": "url", "url": format!("https://example.invalid/{k}.png")}),
                _ => json!({"type": "file", "file_id": format!("file_{k:06}")}),
            };
            json!({"type": "image", "source": source})
        } else {
            let source = match n % 3 {
                0 => {
                    json!({"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQKJcfsj6IK".repeat(2 + k % 30)})
                }
                1 => {
                    json!({"type": "text", "media_type": "text/plain", "data": "plain text document"})
                }
                _ => json!({"type": "url", "url": format!("https://example.invalid/{k}.pdf")}),
            };
            json!({"type": "document", "source": source, "title": format!("doc {k}")})
        }
    }

    fn user_block(&mut self, b: &UserBlock) -> Value {
        match b {
            UserBlock::Text(t) => json!({"type": "text", "text": non_empty(t.make())}),
            UserBlock::Image(n) => self.media(true, *n),
            UserBlock::Document(n) => self.media(false, *n),
            UserBlock::Unknown(n) => {
                json!({"type": format!("future_block_{}", n % 3), "payload": [n, {"deep": true}]})
            }
            UserBlock::Upload => {
                json!({"type": "container_upload", "file_id": "file_x", "extra": null})
            }
        }
    }

    fn result_content(&mut self, b: &ResultBody) -> Option<Value> {
        match b {
            ResultBody::Str(t) => Some(json!(t.make())),
            ResultBody::Cleared => Some(json!("[Old tool result content cleared]")),
            ResultBody::Blocks(bs) => Some(Value::Array(
                bs.iter()
                    .take(self.caps.nested)
                    .map(|n| match n {
                        Nested::Text(t) => json!({"type": "text", "text": t.make()}),
                        Nested::Image(k) => self.media(true, *k),
                        Nested::Document(k) => self.media(false, *k),
                    })
                    .collect(),
            )),
            ResultBody::Absent => None,
        }
    }

    fn tool_input(&self, name: &str, t: &Tool, n: usize) -> Value {
        let mut input = Map::new();
        if !self.cc {
            if let Some(p) = t.path {
                input.insert("file_path".into(), json!(format!("/src/f{}.rs", p % 8)));
            }
            if name == "Bash" {
                input.insert("command".into(), json!(format!("cargo test {}", t.name)));
            }
            return Value::Object(input);
        }
        match name {
            "Bash" => {
                input.insert(
                    "command".into(),
                    json!(format!("cargo test --quiet -- case{n}")),
                );
            }
            "Grep" | "Glob" => {
                input.insert("pattern".into(), json!("fn main"));
            }
            "WebSearch" => {
                input.insert("query".into(), json!("rust wasm"));
            }
            "WebFetch" => {
                input.insert("url".into(), json!(format!("https://example.invalid/{n}")));
            }
            "Task" | "TodoWrite" | "mcp__db__query" => {
                input.insert("n".into(), json!(n));
                input.insert("list".into(), json!([1, 2, null]));
            }
            _ => {}
        }
        if let Some(p) = t.path {
            let key = if name == "Grep" || name == "Glob" {
                "path"
            } else {
                "file_path"
            };
            input.insert(key.into(), json!(format!("/work/project/src/f{p}.rs")));
        }
        Value::Object(input)
    }

    fn turn(&mut self, t: &Turn) {
        if self.cc {
            self.attachments(t);
        }
        let prompt: Vec<&UserBlock> = t.prompt.iter().take(self.caps.prompt).collect();
        let text_only = prompt.iter().all(|b| matches!(b, UserBlock::Text(_)));
        let content = if prompt.is_empty() {
            json!("go on")
        } else if t.prompt_as_string && text_only && (prompt.len() == 1 || self.cc) {
            let s: String = prompt
                .iter()
                .map(|b| match b {
                    UserBlock::Text(x) => non_empty(x.make()),
                    _ => String::new(),
                })
                .collect();
            json!(s)
        } else {
            Value::Array(prompt.into_iter().map(|b| self.user_block(b)).collect())
        };
        let mut extra = Map::new();
        if t.meta && self.transcript {
            extra.insert("isMeta".into(), json!(true));
        }
        self.user(content, extra);
        if !self.cc {
            self.attachments(t);
        }
        let mut responses: Vec<&Response> = t.responses.iter().take(self.caps.responses).collect();
        if self.cc {
            // The agent loop: a response without tool calls ends the turn.
            if let Some(p) = responses.iter().position(|r| r.tools.is_empty()) {
                responses.truncate(p + 1);
            }
        }
        if responses.is_empty() {
            self.response(&Response::text(Txt::Cycle { len: 12, alpha: 0 }));
        }
        for r in responses {
            self.response(r);
        }
    }

    fn attachments(&mut self, t: &Turn) {
        if !self.transcript {
            return;
        }
        for a in t.attachments.iter().take(self.caps.attachments) {
            let ty = ATTACHMENT_TYPES[usize::from(*a) % ATTACHMENT_TYPES.len()];
            let mut o = self.envelope("attachment", false);
            o.insert(
                "attachment".into(),
                json!({"type": ty, "content": format!("attached {a}: {ty} body")}),
            );
            if !self.cc {
                o["attachment"]["content"] = json!(format!("attached {a}"));
            }
            self.out.push(Value::Object(o));
        }
    }

    fn response(&mut self, r: &Response) {
        let msg_id = self.fresh("msg");
        let mut head: Vec<Value> = Vec::new();
        for th in r.thoughts.iter().take(self.caps.thoughts) {
            let block = match th {
                Thought::Thinking(t) if self.cc => {
                    let k = self.next();
                    json!({"type": "thinking", "thinking": t.make(),
                        "signature": format!("EsMCCkYICxgCKkD{k:08}sig+/=")})
                }
                Thought::Thinking(t) => {
                    json!({"type": "thinking", "thinking": t.make(), "signature": format!("sig{}", self.ids)})
                }
                Thought::Redacted(n) if self.cc => {
                    let data: String = "EmwKAhgBEgy3va3pzix/LafPsn4a"
                        .chars()
                        .cycle()
                        .take(usize::from(*n).max(1))
                        .collect();
                    json!({"type": "redacted_thinking", "data": data})
                }
                Thought::Redacted(n) => {
                    json!({"type": "redacted_thinking", "data": format!("enc{n}")})
                }
            };
            head.push(block);
        }
        let mut search = Vec::new();
        if r.search {
            let sid = self.fresh("srvtoolu");
            search.push(json!({"type": "server_tool_use", "id": sid, "name": "web_search", "input": {"query": "q"}}));
            search.push(if self.cc {
                json!({"type": "web_search_tool_result", "tool_use_id": sid, "content": [
                    {"type": "web_search_result", "url": format!("https://example.invalid/{sid}"),
                     "title": "A result", "encrypted_content": "EqgfCioIARgBIiQ", "page_age": null}]})
            } else {
                json!({"type": "web_search_tool_result", "tool_use_id": sid, "content": []})
            });
        }
        if r.search_first {
            head.append(&mut search);
        }
        if let Some(t) = &r.text {
            // Not blank: the API refuses a blank text block in any message.
            head.push(json!({"type": "text", "text": non_empty(t.make())}));
        }
        head.append(&mut search);
        if r.unknown {
            head.push(if self.cc {
                json!({"type": "future_block_v9", "payload": {"a": [1, null, true]}, "note": null})
            } else {
                json!({"type": "mystery_block", "x": 1})
            });
        }
        let tools: Vec<&Tool> = r.tools.iter().take(self.caps.tools).collect();
        if head.is_empty() && tools.is_empty() {
            head.push(json!({"type": "text", "text": "ok"}));
        }
        let names = if self.cc { ALL_TOOL_NAMES } else { TOOL_NAMES };
        let calls: Vec<(Value, Value)> = tools
            .iter()
            .map(|t| {
                let id = self.fresh("toolu");
                let name = names[usize::from(t.name) % names.len()];
                let input = self.tool_input(name, t, self.ids);
                let call = json!({"type": "tool_use", "id": id, "name": name, "input": input});
                let mut res = Map::new();
                res.insert("type".into(), json!("tool_result"));
                res.insert("tool_use_id".into(), json!(id));
                if let Some(c) = self.result_content(&t.result) {
                    res.insert("content".into(), c);
                }
                if t.is_error {
                    res.insert("is_error".into(), json!(true));
                }
                (call, Value::Object(res))
            })
            .collect();
        let usage = r.usage.as_ref().map(|u| {
            let mut o = Map::new();
            for (k, c) in USAGE_KEYS.iter().zip(u.iter()) {
                if let Some(v) = c.value() {
                    o.insert((*k).into(), v);
                }
            }
            if self.cc && self.transcript {
                let creation = o
                    .get("cache_creation_input_tokens")
                    .cloned()
                    .unwrap_or(json!(0));
                o.insert(
                    "cache_creation".into(),
                    json!({"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": creation}),
                );
                o.insert("service_tier".into(), json!("standard"));
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
        // Results in `finish` order (Claude Code style) or call order (minimal).
        let mut order: Vec<usize> = (0..calls.len()).collect();
        if self.cc {
            order.sort_by_key(|&k| (tools[k].finish, k));
        }
        if !self.transcript || (!r.split && !self.cc) {
            let mut content = head;
            content.extend(calls.iter().map(|c| c.0.clone()));
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
                let results = order.iter().map(|&k| calls[k].1.clone()).collect();
                self.user(Value::Array(results), Map::new());
            }
            return;
        }
        let first_only = r.api_usage;
        let line = |b: &mut Builder, content: Vec<Value>, first: bool, last: bool| {
            let mut message = if b.cc {
                json!({"model": "claude-opus-4-6", "id": msg_id, "type": "message",
                    "role": "assistant", "content": content})
            } else {
                json!({"role": "assistant", "id": msg_id, "content": content})
            };
            message["stop_reason"] = if last || r.stop_every_line {
                stop.clone()
            } else {
                Value::Null
            };
            if b.cc {
                message["stop_sequence"] = Value::Null;
            }
            if let Some(u) = &usage {
                if first || !first_only {
                    message["usage"] = u.clone();
                }
            }
            let mut extra = Map::new();
            if b.cc {
                extra.insert("requestId".into(), json!(msg_id.replace("msg", "req")));
            }
            b.line("assistant", message, extra);
        };
        let n_head = head.len();
        if self.cc {
            // One line per block (or one line), each result after the line `finish` lines
            // (modulo) after its own call's line, in finish order.
            let blocks: Vec<Value> = head
                .into_iter()
                .chain(calls.iter().map(|c| c.0.clone()))
                .collect();
            let lines: Vec<Vec<Value>> = if r.split {
                blocks.iter().map(|b| vec![b.clone()]).collect()
            } else {
                vec![blocks]
            };
            let line_of_block = |b: usize| if r.split { b } else { 0 };
            let mut after: Vec<Vec<usize>> = vec![Vec::new(); lines.len()];
            for &k in &order {
                let own = line_of_block(n_head + k);
                let span = lines.len() - own;
                after[own + usize::from(tools[k].finish) % span].push(k);
            }
            let n_lines = lines.len();
            for (j, content) in lines.into_iter().enumerate() {
                line(self, content, j == 0, j + 1 == n_lines);
                for &k in &after[j] {
                    let res = calls[k].1.clone();
                    let stdout = res.get("content").cloned().unwrap_or(Value::Null);
                    let mut extra = Map::new();
                    extra.insert(
                        "toolUseResult".into(),
                        json!({"stdout": stdout, "stderr": ""}),
                    );
                    extra.insert("sourceToolAssistantUUID".into(), json!(self.last_uuid));
                    self.user(json!([res]), extra);
                }
            }
            return;
        }
        // Minimal split response: one block per line; calls in batches, each batch's results
        // following it (in some order) before the next batch's calls, as parallel tools finish.
        for (k, block) in head.into_iter().enumerate() {
            line(
                self,
                vec![block],
                k == 0,
                calls.is_empty() && k + 1 == n_head,
            );
        }
        let mut batch: Vec<usize> = Vec::new();
        for (k, t) in tools.iter().enumerate() {
            line(
                self,
                vec![calls[k].0.clone()],
                n_head == 0 && k == 0,
                k + 1 == calls.len(),
            );
            batch.push(k);
            if t.finish & 1 == 1 || k + 1 == calls.len() {
                let mut order = batch.clone();
                let rot = usize::from(t.finish >> 1) % order.len();
                order.rotate_left(rot);
                for j in order {
                    self.user(json!([calls[j].1.clone()]), Map::new());
                }
                batch.clear();
            }
        }
    }

    fn noise(&mut self, n: &Noise) -> Value {
        if self.cc {
            return self.noise_cc(n);
        }
        let uuid = self.fresh("uuid");
        match n {
            Noise::Progress => {
                json!({"type": "progress", "uuid": uuid, "data": {"type": "hook_progress", "n": self.ids}})
            }
            Noise::System | Noise::SystemSubtype(_) => {
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
            Noise::SidechainResult => {
                json!({"type": "user", "isSidechain": true, "uuid": uuid, "message": {"role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "side_tool_0", "content": "y"}]}})
            }
            Noise::Summary => {
                json!({"type": "summary", "summary": "Fix the build", "leafUuid": uuid})
            }
        }
    }

    fn noise_cc(&mut self, n: &Noise) -> Value {
        let k = self.next();
        let m = match n {
            Noise::Progress => {
                let mut m = self.envelope("progress", false);
                m.insert("data".into(), json!({"type": "bash_progress", "output": "x".repeat(k % 300)}));
                m.insert("toolUseID".into(), json!(format!("bash-progress-{k}")));
                m
            }
            Noise::System | Noise::SystemSubtype(_) => {
                let sub = match n {
                    Noise::SystemSubtype(s) => {
                        ["turn_duration", "stop_hook_summary", "local_command"][usize::from(*s) % 3]
                    }
                    _ => "informational",
                };
                let mut m = self.envelope("system", false);
                m.insert("subtype".into(), json!(sub));
                m.insert("content".into(), json!("<local-command-stdout>ok</local-command-stdout>"));
                m.insert("level".into(), json!("info"));
                m.insert("isMeta".into(), json!(false));
                m.insert("durationMs".into(), json!(k * 10));
                m
            }
            Noise::Snapshot => {
                let ts = self.timestamp();
                json!({"type": "file-history-snapshot", "messageId": format!("m{k}"),
                    "snapshot": {"messageId": format!("m{k}"), "trackedFileBackups": {}, "timestamp": ts},
                    "isSnapshotUpdate": false})
                .as_object()
                .cloned()
                .unwrap_or_default()
            }
            Noise::Unknown => json!({"type": "queue-operation", "operation": "enqueue", "content": "later", "sessionId": "s"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            Noise::SidechainUser(t) => {
                let mut m = self.envelope("user", true);
                m.insert("agentId".into(), json!("a1b2c3"));
                m.insert("message".into(), json!({"role": "user", "content": non_empty(t.make())}));
                m
            }
            Noise::SidechainAssistant(_) => {
                let mut m = self.envelope("assistant", true);
                m.insert("agentId".into(), json!("a1b2c3"));
                m.insert("message".into(), json!({"role": "assistant", "id": format!("msg_side_{k}"),
                    "content": [{"type": "tool_use", "id": format!("toolu_side_{k}"), "name": "Read",
                                 "input": {"file_path": "/side"}}],
                    "usage": {"input_tokens": 900_000, "output_tokens": 5}}));
                m
            }
            Noise::SidechainResult => {
                let mut m = self.envelope("user", true);
                m.insert("agentId".into(), json!("a1b2c3"));
                let img = self.media(true, 0);
                m.insert("message".into(), json!({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": format!("toolu_side_{k}"), "content": "y".repeat(3000)},
                    img]}));
                m
            }
            Noise::SidechainBoundary => {
                let mut m = self.envelope("system", true);
                m.insert("subtype".into(), json!("compact_boundary"));
                m.insert("content".into(), json!("Conversation compacted"));
                m
            }
            Noise::Summary => json!({"type": "summary", "summary": "Fix the build", "leafUuid": self.last_uuid})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        };
        Value::Object(m)
    }

    fn boundary(&mut self, kept: Option<u8>) {
        let mut extra = Map::new();
        extra.insert("isCompactSummary".into(), json!(true));
        if self.cc {
            let logical_parent = self.last_uuid.clone();
            let mut m = self.envelope("system", false);
            m.insert("parentUuid".into(), Value::Null);
            m.insert("logicalParentUuid".into(), json!(logical_parent));
            m.insert("subtype".into(), json!("compact_boundary"));
            m.insert("content".into(), json!("Conversation compacted"));
            m.insert("isMeta".into(), json!(false));
            m.insert("level".into(), json!("info"));
            m.insert(
                "compactMetadata".into(),
                json!({"trigger": "auto", "preTokens": 170_251}),
            );
            if let Some(kept) = kept {
                m["compactMetadata"]["keptMessages"] = json!(kept % 6);
            }
            self.out.push(Value::Object(m));
            extra.insert("isVisibleInTranscriptOnly".into(), json!(true));
            self.user(
                json!("This session continues an earlier conversation. Summary: the user wants the build fixed."),
                extra,
            );
            return;
        }
        let uuid = self.fresh("uuid");
        let mut boundary = json!({"type": "system", "subtype": "compact_boundary", "uuid": uuid,
            "parentUuid": null, "isSidechain": false, "content": "Conversation compacted",
            "compactMetadata": {"trigger": "auto", "preTokens": 123_456}});
        if let Some(kept) = kept {
            boundary["compactMetadata"]["keptMessages"] = json!(kept % 6);
        }
        self.out.push(boundary);
        self.last_uuid = Some(uuid);
        self.line(
            "user",
            json!({"role": "user", "content": "This session is being continued. <summary>earlier work</summary>"}),
            extra,
        );
    }
}

fn apply_damage(out: &mut Vec<Value>, d: &Damage) {
    let len = out.len();
    if len == 0 {
        return;
    }
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
                    if let Some(r) = arr.iter_mut().find(|b| b["type"] == "tool_result") {
                        r["tool_use_id"] = json!("toolu_renamed");
                        break;
                    }
                }
            }
        }
    }
}

impl Convo {
    /// The conversation as JSON messages: transcript lines or API messages (damage
    /// applied).
    pub fn to_json(&self) -> Vec<Value> {
        let mut b = Builder::new(self.transcript, self.style, self.step_seconds);
        let caps = b.caps;
        if self.turns.is_empty() {
            b.user(json!("hello"), Map::new());
        }
        let turns = self.turns.len().min(caps.turns);
        // Minimal: after turn `boundary_after` if it exists; Claude Code: after the turn it
        // names modulo the number of turns.
        let boundary_at = match (self.transcript, self.boundary_after, self.style) {
            (true, Some(k), Style::ClaudeCode) if turns > 0 => Some(usize::from(k) % turns),
            (true, Some(k), Style::Minimal) => Some(usize::from(k)),
            _ => None,
        };
        for (k, t) in self.turns.iter().take(caps.turns).enumerate() {
            b.turn(t);
            if boundary_at == Some(k) {
                b.boundary(self.boundary_kept);
            }
        }
        if self.transcript {
            // Minimal: noise ids from a builder of their own (as the fuzz inputs were
            // recorded); Claude Code: from the conversation's.
            let mut own = Builder::new(true, self.style, self.step_seconds);
            for (pos, n) in self.noise.iter().take(caps.noise) {
                let v = if b.cc { b.noise(n) } else { own.noise(n) };
                let at = usize::from(*pos) % (b.out.len() + 1);
                b.out.insert(at, v);
            }
        }
        let mut out = b.out;
        if let Some(d) = &self.damage {
            apply_damage(&mut out, d);
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
