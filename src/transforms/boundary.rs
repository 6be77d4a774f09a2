//! The compaction boundary and the order of the post-compaction conversation (SPEC §7 steps
//! 10 and the result assembly).

use serde_json::{json, Map, Value};

use crate::model::error::Result;
use crate::model::messages::{Kind, Message};
use crate::model::order;
use crate::model::view::{
    same_turn, server_call_links, BlockInfo, BlockKind, ContentInfo, ConversationView, Detail,
    Find, Str,
};

/// `content` of a boundary line.
pub const BOUNDARY_CONTENT: &str = "Conversation compacted";

/// What triggered a compaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// The auto-compact threshold was crossed (or the API rejected a request).
    Auto,
    /// The user asked (`/compact`).
    Manual,
}

impl Trigger {
    /// `"auto"` or `"manual"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Auto => "auto",
            Trigger::Manual => "manual",
        }
    }

    /// Parses `"auto"` / `"manual"`.
    pub fn parse(s: &str) -> Option<Trigger> {
        match s {
            "auto" => Some(Trigger::Auto),
            "manual" => Some(Trigger::Manual),
            _ => None,
        }
    }
}

/// Inputs of `createCompactBoundaryMessage`.
#[derive(Clone, Debug, PartialEq)]
pub struct BoundaryInput {
    /// What triggered the compaction.
    pub trigger: Trigger,
    /// Context size before compaction.
    pub pre_tokens: u64,
    /// `uuid` of the last message before compaction (`logicalParentUuid`).
    pub last_uuid: Option<String>,
    /// Names of tools discovered before compaction.
    pub pre_compact_discovered_tools: Vec<String>,
    /// The new line's `uuid`.
    pub uuid: String,
    /// The new line's ISO-8601 `timestamp`.
    pub timestamp: String,
    /// Fields copied from the last transcript line (`sessionId`, `cwd`, `version`, `gitBranch`,
    /// …) so the line reads like the ones around it.
    pub session_fields: Map<String, Value>,
    /// How many sent messages (user, assistant and attachment lines of the main chain) were
    /// kept verbatim after the summary — pinned messages and the part a session-memory
    /// compaction keeps; their recorded usage measures the old context, so token counts
    /// ignore it.
    pub kept_messages: usize,
}

pub use crate::model::messages::SESSION_FIELDS;

/// Picks [`SESSION_FIELDS`] from a template line, and its `isSidechain: true` when it is a
/// sub-agent's line: a line written with them continues the template's conversation (in a
/// sub-agent's own file, a line with `isSidechain: false` would be a main-chain turn, and
/// the file would no longer be read as that sub-agent's conversation).
pub fn session_fields_of(template: &Message) -> Map<String, Value> {
    let mut out = Map::new();
    if matches!(template.is_sidechain, Some(Some(true))) {
        out.insert("isSidechain".into(), Value::Bool(true));
    }
    for k in SESSION_FIELDS {
        if let Some(v) = template.extra.get(*k) {
            out.insert((*k).to_string(), v.clone());
        }
    }
    out
}

/// Whether `m` is a line of a branch the `parentUuid` chain from the leaf leaves out
/// ([`Message::on_other_branch`]) that would be read as the conversation's if it followed a
/// summary (a turn, an attachment, a boundary): a compaction keeps none, since the chain no
/// longer leads past them after it. (A progress line the chain passes by is left as it is:
/// it is never sent.)
pub fn of_abandoned_branch(m: &Message) -> bool {
    m.on_other_branch()
        && (matches!(m.kind(), Kind::User | Kind::Assistant | Kind::Attachment)
            || m.is_compact_boundary())
}

/// Makes the transcript `lines` a compaction writes (boundary, summary, pinned messages,
/// attachments, hook results) lines of the conversation they continue, that of the
/// [`session_template`](crate::model::messages::session_template) line of `messages`: its
/// `isSidechain` and `agentId` (a sub-agent's own file stays one, every line `isSidechain:
/// true` with the agent's id) and its place in the conversation ([`Message::conversation`]),
/// so that the compacted messages read as one conversation before they are read again. A
/// message not in transcript shape, or a conversation with no transcript line, is left as
/// it is.
pub fn continue_conversation<'a>(
    messages: &[Message],
    lines: impl IntoIterator<Item = &'a mut Message>,
) {
    let Some(t) = crate::model::messages::session_template(messages) else {
        return;
    };
    let template = &messages[t];
    let sidechain = matches!(template.is_sidechain, Some(Some(true)));
    let agent = template.extra.get("agentId");
    for line in lines {
        if !line.is_transcript() {
            continue;
        }
        if sidechain || line.is_sidechain.is_some() {
            line.is_sidechain = Some(Some(sidechain));
        }
        if let Some(a) = agent {
            line.extra.insert("agentId".into(), a.clone());
        }
        line.conversation = template.conversation;
    }
}

/// `createCompactBoundaryMessage`: the `compact_boundary` system line (transcript shape, as
/// Claude Code writes it: `parentUuid: null`, `logicalParentUuid` = the last message before).
pub fn create_compact_boundary(input: &BoundaryInput) -> Message {
    Message::from_value(compact_boundary_value(input), "boundary")
        .expect("boundary line is well-formed")
}

/// The boundary line as JSON, keys in the order Claude Code writes them.
pub fn compact_boundary_value(input: &BoundaryInput) -> Value {
    let mut v = Map::new();
    v.insert("parentUuid".into(), Value::Null);
    v.insert(
        "logicalParentUuid".into(),
        input.last_uuid.clone().map_or(Value::Null, Value::String),
    );
    v.insert("isSidechain".into(), Value::Bool(false));
    for (k, val) in &input.session_fields {
        v.insert(k.clone(), val.clone());
    }
    v.insert("type".into(), json!("system"));
    v.insert("subtype".into(), json!("compact_boundary"));
    v.insert("content".into(), json!(BOUNDARY_CONTENT));
    v.insert("isMeta".into(), Value::Bool(false));
    v.insert("timestamp".into(), json!(input.timestamp));
    v.insert("uuid".into(), json!(input.uuid));
    v.insert("level".into(), json!("info"));
    let mut meta = Map::new();
    meta.insert("trigger".into(), json!(input.trigger.as_str()));
    meta.insert("preTokens".into(), json!(input.pre_tokens));
    if !input.pre_compact_discovered_tools.is_empty() {
        meta.insert(
            "preCompactDiscoveredTools".into(),
            json!(input.pre_compact_discovered_tools),
        );
    }
    if input.kept_messages > 0 {
        meta.insert("keptMessages".into(), json!(input.kept_messages));
    }
    v.insert("compactMetadata".into(), Value::Object(meta));
    Value::Object(v)
}

/// `buildPostCompactMessages`: boundary, summary messages, kept messages, attachments, hook
/// results — in that order, nothing else — except that the first `system` kept messages
/// (the app's instructions given as messages, [`leading_system`]) come right after the
/// boundary, before the summary: they are instructions, not history. Generic so the
/// bindings can reuse the caller's own objects.
pub fn build_post_compact<T: Clone>(
    boundary: &T,
    summary: &[T],
    keep: &[T],
    system: usize,
    attachments: &[T],
    hook_results: &[T],
) -> Vec<T> {
    let system = system.min(keep.len());
    let mut out =
        Vec::with_capacity(1 + summary.len() + keep.len() + attachments.len() + hook_results.len());
    out.push(boundary.clone());
    out.extend_from_slice(&keep[..system]);
    out.extend_from_slice(summary);
    out.extend_from_slice(&keep[system..]);
    out.extend_from_slice(attachments);
    out.extend_from_slice(hook_results);
    out
}

/// How many messages at the head of `view` are system messages given as messages (an
/// OpenAI or AI SDK `system`/`developer` message, a LangChain `SystemMessage`, an Anthropic
/// SDK `SystemMessageParam`): a compaction keeps them first, since they are the app's
/// instructions rather than history.
pub fn leading_system<V: ConversationView + ?Sized>(view: &V) -> Result<usize> {
    leading_system_from(view, 0)
}

/// The end of the system messages given as messages that open the conversation at `start`
/// (the first message after the last boundary): `start..end` are kept verbatim in front of
/// every compaction's summary and are not summarized. Lines that are never sent (progress,
/// Claude Code's own system lines) do not end the run.
pub fn leading_system_from<V: ConversationView + ?Sized>(view: &V, start: usize) -> Result<usize> {
    let mut n = start;
    while n < view.len() && view.kind(n)? == Kind::System && !view.is_transcript(n) {
        n += 1;
    }
    Ok(n)
}

/// The first message of a trailing assistant turn that called tools whose results have not
/// come yet (the agent is running them), when the messages after `start` end with one:
/// `first..` are then kept verbatim after a summary. A compaction that summarized that turn
/// away would leave the results the agent appends next (or pushes into a `Compactor` while
/// the compaction runs) answering a call the conversation no longer holds — a request the
/// API refuses — and the model would not see the call it is given the answer to. The turn
/// is pending only when nothing but the results of its own calls (and lines that are not
/// sent) follows it; `None` otherwise.
///
/// A turn the API paused (`stop_reason: "pause_turn"`) is pending too: it ends with a
/// `server_tool_use` whose result is not in the turn yet, and the conversation continues by
/// sending the turn back as it is. So is a `server_tool_use` waiting for the client tools
/// its code called (programmatic tool calling): the pending part then begins at the turn
/// holding it, however many client calls and results came after it.
pub fn pending_turn<V: ConversationView + ?Sized>(view: &V, start: usize) -> Result<Option<usize>> {
    let assistant = Find {
        assistant: true,
        ..Find::default()
    };
    let Some(last) = view.rfind(view.len(), assistant)? else {
        return Ok(None);
    };
    if last < start {
        return Ok(None);
    }
    // The turn: every assistant line of the same response or run before `last`.
    let mut first = last;
    while let Some(p) = view.rfind(first, assistant)? {
        if p < start || !same_turn(view, p, last)? {
            break;
        }
        first = p;
    }
    // A server tool call of an earlier turn whose code called the client tools of this one
    // (programmatic tool calling), or whose result this turn holds, waits with it: the
    // turn begins at that call's turn ([`server_call_links`]). The links are read only when
    // the turn holds the end of one (a server tool's result, a call a server tool's code
    // made): most conversations hold none, and reading them costs a pass over the context.
    let mut contents = view.contents(first..view.len(), Detail::Structure)?;
    if ends_a_link(view, first, &contents)? {
        let links = server_call_links(view, start)?;
        let before = first;
        while let Some(call) = links
            .iter()
            .filter(|&&(call, other)| call < first && other >= first)
            .map(|&(call, _)| call)
            .min()
        {
            first = call;
            while let Some(p) = view.rfind(first, assistant)? {
                if p < start || !same_turn(view, p, first)? {
                    break;
                }
                first = p;
            }
        }
        if first != before {
            contents = view.contents(first..view.len(), Detail::Structure)?;
        }
    }
    // Only results of its calls may follow it: a user message with words ends the turn.
    let mut server = ServerCalls::default();
    for (i, content) in (first..).zip(&contents) {
        if view.is_sidechain(i) {
            continue;
        }
        let kind = view.kind(i)?;
        if kind == Kind::Assistant {
            if let ContentInfo::Blocks(blocks) = content {
                server.read(blocks);
            }
        }
        if kind != Kind::User {
            continue;
        }
        let only_results = match content {
            ContentInfo::Blocks(blocks) => {
                blocks.iter().all(|b| b.kind == Some(BlockKind::ToolResult))
            }
            ContentInfo::None => true,
            ContentInfo::Text(_) | ContentInfo::Json(_) => false,
        };
        if !only_results {
            return Ok(None);
        }
    }
    if server.paused() {
        return Ok(Some(first));
    }
    let index = view.tool_index(first, false)?;
    let mut answered = vec![false; index.uses.len()];
    for r in &index.results {
        if let Some(c) = r.call {
            answered[c] = true;
        }
    }
    Ok(answered.contains(&false).then_some(first))
}

/// Whether an assistant message of `contents` (messages `from..` of `view`) holds what a
/// [`server_call_links`] link ends at: a server tool's result or a client call made by a
/// server tool's code.
fn ends_a_link<V: ConversationView + ?Sized>(
    view: &V,
    from: usize,
    contents: &[ContentInfo],
) -> Result<bool> {
    for (i, content) in (from..).zip(contents) {
        if view.is_sidechain(i) || view.kind(i)? != Kind::Assistant {
            continue;
        }
        if let ContentInfo::Blocks(blocks) = content {
            let ends = |b: &BlockInfo| match b.kind {
                Some(BlockKind::ServerToolResult) => b.tool_use_id.is_some(),
                Some(BlockKind::ToolUse) => b.caller.is_some(),
                _ => false,
            };
            if blocks.iter().any(ends) {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

/// The server tool calls (`server_tool_use`) of an assistant turn and the results the turn
/// holds for them (a server tool's result comes in the same response as its call).
#[derive(Default)]
struct ServerCalls {
    calls: Vec<Str>,
    results: Vec<Str>,
}

impl ServerCalls {
    fn read(&mut self, blocks: &[BlockInfo]) {
        for b in blocks {
            match (b.kind, &b.id, &b.tool_use_id) {
                (Some(BlockKind::ServerToolUse), Some(id), _) => self.calls.push(id.clone()),
                (Some(BlockKind::ServerToolResult), _, Some(id)) => self.results.push(id.clone()),
                _ => {}
            }
        }
    }

    /// Whether a call waits for its result: the turn was paused mid-way.
    fn paused(&self) -> bool {
        self.calls.iter().any(|c| !self.results.contains(c))
    }
}

/// The caller's messages a compaction of another ecosystem's messages keeps, ascending:
/// the leading system messages, then each one any kept converted message came from
/// (`origin[k]` is the caller's index of converted message `k`).
pub fn kept_originals<V: ConversationView + ?Sized>(
    view: &V,
    kept: &[usize],
    origin: &[usize],
) -> Result<Vec<usize>> {
    let mut out: Vec<usize> = (0..leading_system(view)?).collect();
    out.extend(kept.iter().filter_map(|&k| origin.get(k).copied()));
    order::sort_by(&mut out, &|a, b| a.cmp(b));
    out.dedup();
    // A caller's message with no converted counterpart (an OpenAI Responses `reasoning` item or
    // item reference: the Anthropic form has no place for it) goes with the message after it
    // (the call or answer it reasoned toward, which the API refuses without it).
    let mut mapped = vec![false; view.len()];
    for &o in origin {
        if let Some(slot) = mapped.get_mut(o) {
            *slot = true;
        }
    }
    let mut with_unmapped = Vec::with_capacity(out.len());
    let mut next_free = 0;
    for &o in &out {
        let mut j = o;
        while j > next_free && !mapped[j - 1] {
            j -= 1;
        }
        with_unmapped.extend(j..o);
        with_unmapped.push(o);
        next_free = o + 1;
    }
    // Those after the last one that has a counterpart have no message after them: they go
    // with the one before them. An AI SDK `tool` message holding only the user's
    // `tool-approval-response` (no content of its own in the Anthropic form) ends the
    // conversation after the pending turn whose call it approves or denies: kept with that
    // turn, the agent runs (or skips) the call as it would have, instead of finding a call
    // with neither a result nor an answer. So does an OpenAI Responses
    // `mcp_approval_response` the API has not acted on yet (read by a compaction with no
    // counterpart: `anthropicForm` in js_edit.js), which the API needs to run the tool.
    if let Some(last) = mapped.iter().rposition(|&m| m) {
        if with_unmapped.last() == Some(&last) {
            with_unmapped.extend(last + 1..view.len());
        }
    }
    Ok(with_unmapped)
}

/// The post-compaction conversation in another ecosystem's shape, which has no place for a
/// boundary line: `keep`'s leading `system` messages, the summary messages, the rest of
/// `keep`, attachments, hook results.
pub fn build_post_compact_without_line<T: Clone>(
    summary: &[T],
    keep: &[T],
    system: usize,
    attachments: &[T],
    hook_results: &[T],
) -> Vec<T> {
    let system = system.min(keep.len());
    let mut out =
        Vec::with_capacity(summary.len() + keep.len() + attachments.len() + hook_results.len());
    out.extend_from_slice(&keep[..system]);
    out.extend_from_slice(summary);
    out.extend_from_slice(&keep[system..]);
    out.extend_from_slice(attachments);
    out.extend_from_slice(hook_results);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::transforms::test_fixtures::ptc;

    /// A server tool call waiting for the client tools its code called (programmatic tool
    /// calling) is pending with them: the pending part begins at its turn, however many
    /// client calls and results follow, and also when its result came but a later direct
    /// call waits in that response.
    #[test]
    fn a_programmatic_server_call_is_pending_with_its_client_calls() {
        let pending = |v: Vec<Value>| {
            pending_turn(Message::parse_all(Value::Array(v)).unwrap().as_slice(), 0).unwrap()
        };
        let mut v = ptc(0, 1);
        v.extend(ptc(1, 1));
        // Waiting for the client tool's result, then for the server result.
        assert_eq!(pending(v[..6].to_vec()), Some(5));
        assert_eq!(pending(v[..7].to_vec()), Some(5));
        // The code calls a second client tool: still tied to the call in message 5.
        let mut chain = v[..7].to_vec();
        chain.push(json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_b", "name": "get", "input": {},
             "caller": {"type": "code_execution_20250825", "tool_id": "srvtoolu_1"}}]}));
        assert_eq!(pending(chain.clone()), Some(5));
        // The server result came with a direct call that waits.
        let mut direct = v[..7].to_vec();
        direct.push(
            json!({"role": "assistant", "content": [v[7]["content"][0].clone(),
            {"type": "tool_use", "id": "toolu_c", "name": "Read", "input": {}}]}),
        );
        assert_eq!(pending(direct), Some(5));
        // Answered: nothing waits.
        assert_eq!(pending(v.clone()), None);
        v.push(json!({"role": "user", "content": "thanks"}));
        assert_eq!(pending(v), None);
    }

    #[test]
    fn kept_originals_put_system_messages_first_once() {
        let m = Message::parse_all(json!([
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"}
        ]))
        .unwrap();
        assert_eq!(leading_system(m.as_slice()).unwrap(), 1);
        // Converted messages 0..5 came from the caller's 0, 1, 2, 2, 3.
        let origin = [0, 1, 2, 2, 3];
        assert_eq!(
            kept_originals(m.as_slice(), &[3, 4], &origin).unwrap(),
            vec![0, 2, 3]
        );
        assert_eq!(kept_originals(m.as_slice(), &[], &origin).unwrap(), vec![0]);
        // Caller's message 2 has no converted counterpart (a reasoning item): it goes with 3.
        let m5 = Message::parse_all(json!([
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "assistant", "content": "reasoning"},
            {"role": "assistant", "content": "call"},
            {"role": "user", "content": "c"}
        ]))
        .unwrap();
        let origin = [0, 1, 3, 4];
        assert_eq!(
            kept_originals(m5.as_slice(), &[2, 3], &origin).unwrap(),
            vec![2, 3, 4]
        );
        assert_eq!(
            kept_originals(m5.as_slice(), &[3], &origin).unwrap(),
            vec![4]
        );
        // Messages after the last one with a counterpart go with it when it is kept (an AI
        // SDK approval response after its pending turn), and not otherwise.
        let approved = Message::parse_all(json!([
            {"role": "user", "content": "a"},
            {"role": "assistant", "content": "b"},
            {"role": "user", "content": "c"},
            {"role": "assistant", "content": "call"},
            {"role": "user", "content": "approval"}
        ]))
        .unwrap();
        let origin = [0, 1, 2, 3];
        assert_eq!(
            kept_originals(approved.as_slice(), &[3], &origin).unwrap(),
            vec![3, 4]
        );
        assert_eq!(
            kept_originals(approved.as_slice(), &[2], &origin).unwrap(),
            vec![2]
        );
        let out = build_post_compact_without_line(&["S"], &["sys", "k"], 1, &["A"], &["H"]);
        assert_eq!(out, vec!["sys", "S", "k", "A", "H"]);
    }

    #[test]
    fn leading_system_messages_are_counted_from_the_start_of_the_context() {
        let m = Message::parse_all(json!([
            {"type": "system", "subtype": "compact_boundary", "uuid": "b"},
            {"role": "system", "content": "be brief"},
            {"role": "developer", "content": "use French"},
            {"role": "user", "content": "a"},
            {"role": "system", "content": "later"}
        ]))
        .unwrap();
        assert_eq!(leading_system_from(m.as_slice(), 1).unwrap(), 3);
        assert_eq!(leading_system_from(m.as_slice(), 3).unwrap(), 3);
        assert_eq!(
            leading_system(m.as_slice()).unwrap(),
            0,
            "a transcript line is no system message"
        );
    }

    fn call(id: &str) -> Value {
        json!({"role": "assistant", "content": [{"type": "text", "text": "running"},
            {"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": "/f"}}]})
    }

    fn result(id: &str) -> Value {
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "x"}]})
    }

    #[test]
    fn a_trailing_turn_whose_calls_wait_for_results_is_pending() {
        let pending = |v: Value, start: usize| {
            pending_turn(Message::parse_all(v).unwrap().as_slice(), start).unwrap()
        };
        let user = json!({"role": "user", "content": "go"});
        assert_eq!(pending(json!([user, call("t1")]), 0), Some(1));
        // Answered, or followed by the user's words: nothing is pending.
        assert_eq!(pending(json!([user, call("t1"), result("t1")]), 0), None);
        assert_eq!(pending(json!([user, call("t1"), user]), 0), None);
        assert_eq!(
            pending(json!([user, {"role": "assistant", "content": "done"}]), 0),
            None
        );
        // Parallel calls, one answered so far: still pending, from the call.
        let both = json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "Read", "input": {}},
            {"type": "tool_use", "id": "b", "name": "Read", "input": {}}]});
        assert_eq!(pending(json!([user, both, result("a")]), 0), Some(1));
        // Consecutive assistant messages are one turn; a turn before `start` is not looked at.
        assert_eq!(
            pending(
                json!([user, {"role": "assistant", "content": "thinking"}, call("t1")]),
                0
            ),
            Some(1)
        );
        assert_eq!(pending(json!([user, call("t1")]), 2), None);
        // Transcript lines of one response around the result of its first call.
        let line = |u: &str, v: Value| {
            let role = v["role"].clone();
            let mut l = json!({"type": role, "uuid": u, "message": v});
            if role == "assistant" {
                l["message"]["id"] = json!("msg_1");
            }
            l
        };
        assert_eq!(
            pending(
                json!([
                    line("u", user.clone()),
                    line("a1", call("t1")),
                    line("r1", result("t1")),
                    line("a2", call("t2"))
                ]),
                0
            ),
            Some(1)
        );
    }

    /// A turn the API paused (`pause_turn`) ends with a server tool call whose result has
    /// not come: it is continued by sending it back, so a compaction keeps it.
    #[test]
    fn a_trailing_turn_the_api_paused_is_pending() {
        let pending =
            |v: Value| pending_turn(Message::parse_all(v).unwrap().as_slice(), 0).unwrap();
        let user = json!({"role": "user", "content": "search X"});
        let search = json!({"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "X"}});
        let found = json!({"type": "web_search_tool_result", "tool_use_id": "s1", "content": []});
        let paused = json!({"role": "assistant", "content": [{"type": "text", "text": "Searching."}, search]});
        assert_eq!(pending(json!([user, paused])), Some(1));
        // Its result in the turn: nothing waits.
        let done = json!({"role": "assistant", "content": [search, found, {"type": "text", "text": "X is…"}]});
        assert_eq!(pending(json!([user, done])), None);
        // The result in a later message of the same turn (transcript lines of one response).
        assert_eq!(
            pending(json!([user, paused, {"role": "assistant", "content": [found]}])),
            None
        );
        // The user spoke after it: the turn is over.
        assert_eq!(pending(json!([user, paused, user])), None);
    }

    #[test]
    fn boundary_line_shape() {
        let b = create_compact_boundary(&BoundaryInput {
            trigger: Trigger::Auto,
            pre_tokens: 170_251,
            last_uuid: Some("u-last".into()),
            pre_compact_discovered_tools: vec![],
            uuid: "u-new".into(),
            timestamp: "2026-02-10T21:11:56.906Z".into(),
            session_fields: Map::new(),
            kept_messages: 0,
        });
        assert!(b.is_compact_boundary());
        let v = b.to_value();
        assert_eq!(v["parentUuid"], Value::Null);
        assert_eq!(v["logicalParentUuid"], "u-last");
        assert_eq!(
            v["compactMetadata"],
            json!({"trigger": "auto", "preTokens": 170251})
        );
        assert_eq!(v["uuid"], "u-new");
    }

    #[test]
    fn post_compact_order() {
        let out = build_post_compact(&"B", &["S"], &["K1", "K2"], 0, &["A"], &["H"]);
        assert_eq!(out, vec!["B", "S", "K1", "K2", "A", "H"]);
        let out = build_post_compact(&"B", &["S"], &["sys", "K"], 1, &["A"], &["H"]);
        assert_eq!(out, vec!["B", "sys", "S", "K", "A", "H"]);
    }
}
