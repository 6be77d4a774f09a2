//! Micro-compaction (SPEC §10): clearing old, large tool results in place, without rewriting
//! anything else, so the conversation keeps its structure and its cached prefix.

use crate::measure::tokens::{
    active_start, estimate_tool_result, rough_token_count, BYTES_PER_TOKEN,
};
use crate::model::error::Result;
use crate::model::hash::FastSet;
use crate::model::messages::Kind;
use crate::model::number;
use crate::model::view::{ConversationView, Edit, ToolIndex, ToolResultEntry, CLEARED_PLACEHOLDER};

/// Tools whose results may be cleared.
pub const COMPACTABLE_TOOLS: &[&str] = &[
    "Read",
    "Bash",
    "Shell",
    "shell",
    "PowerShell",
    "Grep",
    "Glob",
    "WebSearch",
    "WebFetch",
    "Edit",
    "Write",
];

/// Claude Code tools whose results are never cleared by default although their names read as
/// re-obtainable: `ToolSearch` answers with `tool_reference` blocks that load the tools found
/// (clearing one unloads them; counting one among the `keepRecent` latest kept a Bash result
/// fewer).
pub const NEVER_CLEARED_TOOLS: &[&str] = &["ToolSearch"];

/// In `compactable_tools`, stands for every tool (agents whose tools are not Claude Code's).
pub const EVERY_TOOL: &str = "*";

/// Words of a tool name that say its result can be obtained again by calling it again
/// (reading, fetching, searching, listing, running a command): with no `compactable_tools`
/// given, a large old result of such a tool may be cleared whatever the agent calls it.
pub const REOBTAINABLE_WORDS: &[&str] = &[
    "read",
    "get",
    "fetch",
    "search",
    "grep",
    "glob",
    "find",
    "list",
    "ls",
    "cat",
    "view",
    "open",
    "browse",
    "query",
    "lookup",
    "retrieve",
    "load",
    "scan",
    "inspect",
    "show",
    "download",
    "curl",
    "http",
    "web",
    "url",
    "page",
    "shell",
    "bash",
    "sh",
    "exec",
    "execute",
    "run",
    "command",
    "cmd",
    "terminal",
    "console",
    "powershell",
    "tree",
    "dir",
    "diff",
    "log",
];

/// Words of a tool name that say its result is the agent's own state or a person's answer,
/// which no second call gives back: such a tool's results are never cleared by default.
pub const KEPT_WORDS: &[&str] = &[
    "todo", "task", "tasks", "agent", "subagent", "memory", "plan", "ask", "question", "user",
    "think", "note", "notes", "skill", "handoff", "approval", "confirm",
];

/// With no `compactable_tools` given, another agent's tool result is cleared only from this
/// many estimated tokens on (Claude Code's own tools: from the placeholder's size, as in
/// Claude Code).
pub const LARGE_RESULT_TOKENS: u64 = 500;

/// How the default rule treats a tool's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compactable {
    /// One of Claude Code's compactable tools: cleared when old and larger than the
    /// placeholder.
    Always,
    /// Another agent's tool whose name reads as re-obtainable: cleared when old and at least
    /// [`LARGE_RESULT_TOKENS`].
    IfLarge,
    /// Kept.
    Never,
}

/// The default rule for a tool named `name` (no `compactable_tools` given): Claude Code's
/// compactable tools by name; any other tool by the words of its name (split at `_`, `-`,
/// `.`, `/`, spaces and lower-to-upper case changes, so `read_file`, `mcp__github__get_issue`
/// and `runShellCommand` all read as re-obtainable, `todo_write` and `askUser` as kept).
pub fn default_compactable(name: &str) -> Compactable {
    if NEVER_CLEARED_TOOLS.contains(&name) {
        return Compactable::Never;
    }
    if COMPACTABLE_TOOLS.contains(&name) {
        return Compactable::Always;
    }
    let words = name_words(name);
    if words.iter().any(|w| KEPT_WORDS.contains(&w.as_str())) {
        return Compactable::Never;
    }
    if words
        .iter()
        .any(|w| REOBTAINABLE_WORDS.contains(&w.as_str()))
    {
        Compactable::IfLarge
    } else {
        Compactable::Never
    }
}

/// The lower-case words of a tool name.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// Default number of most recent compactable results that are never cleared.
pub const DEFAULT_KEEP_RECENT: usize = 5;

/// Claude Code's idle time for the time-based variant, in minutes.
pub const DEFAULT_IDLE_MINUTES: f64 = 60.0;

/// Options of `microCompact`.
#[derive(Clone, Debug, PartialEq)]
pub struct MicroCompactOptions {
    /// The most recent compactable results that are never cleared (default 5).
    pub keep_recent: usize,
    /// Time-based variant: clear only when the last assistant message is older than this.
    pub idle_minutes: Option<f64>,
    /// Current time in milliseconds since the epoch (needed by the time-based variant).
    pub now_ms: Option<f64>,
    /// Time of the last assistant response in ms, when the messages carry no timestamps.
    pub last_assistant_ms: Option<f64>,
    /// Never clear the most recent result for a given file path (avoids re-read loops).
    pub keep_latest_per_path: bool,
    /// Tool names whose results may be cleared (default [`COMPACTABLE_TOOLS`]; [`EVERY_TOOL`]
    /// allows every tool).
    pub compactable_tools: Option<Vec<String>>,
    /// Fill [`MicroCompactPlan::cleared_tool_use_ids`] (default true; a caller that reads the
    /// ids itself at the edits' positions may skip it).
    pub resolve_ids: bool,
}

impl Default for MicroCompactOptions {
    fn default() -> Self {
        MicroCompactOptions {
            keep_recent: DEFAULT_KEEP_RECENT,
            idle_minutes: None,
            now_ms: None,
            last_assistant_ms: None,
            keep_latest_per_path: false,
            compactable_tools: None,
            resolve_ids: true,
        }
    }
}

/// What micro-compaction decided.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MicroCompactPlan {
    /// The results to clear.
    pub edits: Vec<Edit>,
    /// Estimated tokens freed (padded by 4/3, SPEC §3).
    pub tokens_freed: u64,
    /// `tool_use_id`s of the cleared results, in conversation order, each once (results that
    /// share an id are listed by it once; when [`MicroCompactOptions::resolve_ids`]; otherwise
    /// read them at the edits' positions).
    pub cleared_tool_use_ids: Vec<String>,
    /// Why nothing was considered, when a precondition was not met.
    pub skipped: Option<MicroCompactSkip>,
    /// Where each cleared result is in the view's [`ConversationView::tool_index`] results
    /// (one per edit, in the same order; [`micro_compact_positions`] gives only these):
    /// a view that kept that index can apply the plan from these positions.
    pub cleared_results: Vec<u32>,
}

/// Why a micro-compaction considered nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MicroCompactSkip {
    /// The time-based variant: the conversation has not been idle for `idle_minutes`.
    NotIdle,
}

/// Parses an ISO-8601 UTC/offset timestamp (`2026-02-10T21:11:56.906Z`) into milliseconds
/// since the Unix epoch.
pub fn parse_timestamp_ms(s: &str) -> Option<f64> {
    let b = s.trim().as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = b.get(r)?;
        if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b' ') {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut i = 19;
    let mut frac_ms = 0.0;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        i = start;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_ms = number::fraction(&b[start..i]) * 1000.0;
    }
    let offset_min = match b.get(i) {
        None | Some(b'Z') | Some(b'z') => 0,
        Some(b'+') | Some(b'-') => {
            let sign = if b[i] == b'-' { -1 } else { 1 };
            let oh = num(i + 1..i + 3)?;
            let om = if b.get(i + 3) == Some(&b':') {
                num(i + 4..i + 6)?
            } else {
                num(i + 3..i + 5).unwrap_or(0)
            };
            sign * (oh * 60 + om)
        }
        _ => return None,
    };
    // Days from civil (proleptic Gregorian).
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset_min * 60;
    Some(secs as f64 * 1000.0 + frac_ms)
}

/// `microCompact`: decides which tool results to clear.
pub fn micro_compact<V: ConversationView + ?Sized>(
    view: &V,
    options: &MicroCompactOptions,
) -> Result<MicroCompactPlan> {
    plan(view, options, true, &|_| None)
}

/// [`micro_compact`]'s decision without its edits: the same plan, with
/// [`MicroCompactPlan::edits`] left empty, for a caller that applies it from
/// [`MicroCompactPlan::cleared_results`] (no placeholder text is allocated per result).
pub fn micro_compact_positions<V: ConversationView + ?Sized>(
    view: &V,
    options: &MicroCompactOptions,
) -> Result<MicroCompactPlan> {
    plan(view, options, false, &|_| None)
}

/// [`micro_compact_positions`] with the tool index read by `read` when it can:
/// `read(with_paths)` gives the index of the whole view when no message of it starts a
/// context (the active part is then all of it, and is not searched for), or `None` to read
/// it the usual way. It is called only when the time trigger lets the plan go on.
pub fn micro_compact_positions_with<V, R>(
    view: &V,
    options: &MicroCompactOptions,
    read: R,
) -> Result<MicroCompactPlan>
where
    V: ConversationView + ?Sized,
    R: Fn(bool) -> Option<ToolIndex>,
{
    plan(view, options, false, &read)
}

/// The plan; `read` as in [`micro_compact_positions_with`] (one copy of this per view type,
/// whatever reads).
#[cfg_attr(cc_speed, optimize(speed))]
fn plan<V: ConversationView + ?Sized>(
    view: &V,
    options: &MicroCompactOptions,
    with_edits: bool,
    read: &dyn Fn(bool) -> Option<ToolIndex>,
) -> Result<MicroCompactPlan> {
    if let Some(idle) = options.idle_minutes {
        let last = match options.last_assistant_ms {
            Some(t) => Some(t),
            None => last_assistant_time(view)?,
        };
        let idle_enough = match (last, options.now_ms) {
            (Some(last), Some(now)) => now - last >= idle * 60_000.0,
            _ => false,
        };
        if !idle_enough {
            return Ok(MicroCompactPlan {
                skipped: Some(MicroCompactSkip::NotIdle),
                ..Default::default()
            });
        }
    }
    // Only what is still sent: results before the last compaction boundary are gone already.
    let index = match read(options.keep_latest_per_path) {
        Some(index) => index,
        None => view.tool_index(active_start(view)?, options.keep_latest_per_path)?,
    };
    // What each tool name allows: the caller's list, or the default rule.
    let rule: Vec<Compactable> = match &options.compactable_tools {
        Some(list) => {
            let allowed: FastSet<&str> = list.iter().map(String::as_str).collect();
            let every_tool = allowed.contains(EVERY_TOOL);
            index
                .names
                .iter()
                .map(|n| {
                    if every_tool || allowed.contains(&**n) {
                        Compactable::Always
                    } else {
                        Compactable::Never
                    }
                })
                .collect()
        }
        None => index.names.iter().map(|n| default_compactable(n)).collect(),
    };
    // Compactable results: those whose call is of a compactable tool, numbered in order
    // (`k`). Two passes over the results, no list of them: the first counts them and finds
    // the latest for each path, the second decides.
    let compactable = |r: &ToolResultEntry| {
        let call = &index.uses[r.call?];
        let c = rule[call.name as usize];
        (c != Compactable::Never).then_some((call.path, c))
    };
    let mut count = 0;
    let mut latest_for_path = vec![usize::MAX; index.path_count];
    for r in &index.results {
        if let Some((path, _)) = compactable(r) {
            if let Some(p) = path {
                latest_for_path[p as usize] = count;
            }
            count += 1;
        }
    }
    let protected_from = count.saturating_sub(options.keep_recent);
    let placeholder_tokens = rough_token_count(CLEARED_PLACEHOLDER.len(), BYTES_PER_TOKEN);
    let mut plan = MicroCompactPlan::default();
    let mut freed = 0u64;
    let mut next = 0;
    for (at, r) in index.results.iter().enumerate() {
        let Some((path, rule)) = compactable(r) else {
            continue;
        };
        let k = next;
        next += 1;
        if k >= protected_from {
            break; // the most recent ones are kept
        }
        if r.is_cleared {
            continue;
        }
        let tokens = estimate_tool_result(r.text_units, r.media);
        if tokens <= placeholder_tokens
            || (rule == Compactable::IfLarge && tokens < LARGE_RESULT_TOKENS)
        {
            continue;
        }
        if path.is_some_and(|p| latest_for_path[p as usize] == k) {
            continue;
        }
        freed += tokens - placeholder_tokens;
        plan.cleared_results.push(at as u32);
        if !with_edits {
            continue;
        }
        plan.edits.push(Edit::SetToolResultContent {
            message: r.message,
            block: r.block,
            text: CLEARED_PLACEHOLDER.to_string(),
        });
    }
    plan.tokens_freed = (freed * 4).div_ceil(3);
    if options.resolve_ids {
        // Each id once, oldest first: results that share a `tool_use_id` are listed by it once.
        let mut seen = std::collections::HashSet::new();
        for e in &plan.edits {
            if let Edit::SetToolResultContent { message, block, .. } = e {
                if let Some(id) = view.tool_use_id_at(*message, *block)? {
                    if seen.insert(id.clone()) {
                        plan.cleared_tool_use_ids.push(id);
                    }
                }
            }
        }
    }
    Ok(plan)
}

/// Time of the last main-chain assistant message that has a parseable timestamp.
pub fn last_assistant_time<V: ConversationView + ?Sized>(view: &V) -> Result<Option<f64>> {
    for i in (0..view.len()).rev() {
        if view.is_sidechain(i) || view.kind(i)? != Kind::Assistant {
            continue;
        }
        if let Some(t) = view.timestamp(i).as_deref().and_then(parse_timestamp_ms) {
            return Ok(Some(t));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::messages::Message;
    use crate::model::view::apply_edits;
    use serde_json::{json, Value};

    fn history(tools: &[(&str, usize)]) -> Vec<Message> {
        let mut v = vec![json!({"role": "user", "content": "start"})];
        for (k, (name, size)) in tools.iter().enumerate() {
            v.push(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": format!("t{k}"), "name": name, "input": {"file_path": format!("/f{k}")}}]}));
            v.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{k}"), "content": "x".repeat(*size)}]}));
        }
        Message::parse_all(Value::Array(v)).unwrap()
    }

    /// The default options with no recent result protected.
    fn keep_none() -> MicroCompactOptions {
        MicroCompactOptions {
            keep_recent: 0,
            ..Default::default()
        }
    }

    /// A result of `search_result` blocks (a RAG tool's) weighs its blocks' JSON, as the count
    /// does: an old one is cleared (it weighed 0 and was never cleared).
    #[test]
    fn shapes18_a_result_of_search_results_is_cleared() {
        let found = |k: usize| {
            json!({"type": "search_result", "source": format!("https://d/{k}"), "title": "T",
                   "content": [{"type": "text", "text": "words ".repeat(2000)}]})
        };
        let mut v = vec![json!({"role": "user", "content": "start"})];
        for k in 0..2 {
            v.push(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": format!("t{k}"), "name": "search", "input": {}}]}));
            v.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{k}"), "content": [found(k), found(k + 10)]}]}));
        }
        let m = Message::parse_all(Value::Array(v)).unwrap();
        let plan = micro_compact(
            m.as_slice(),
            &MicroCompactOptions {
                keep_recent: 1,
                compactable_tools: Some(vec!["*".into()]),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(plan.cleared_tool_use_ids, vec!["t0"]);
        assert!(plan.tokens_freed > 6_000, "{}", plan.tokens_freed);
    }

    /// Results that share a `tool_use_id` (a conversation that reused one) are each cleared,
    /// and the id is listed once, where it first comes.
    #[test]
    fn a_shared_tool_use_id_is_listed_once() {
        let mut v = vec![json!({"role": "user", "content": "start"})];
        for (k, id) in ["dup", "dup", "b", "dup"].iter().enumerate() {
            v.push(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": format!("/f{k}")}}]}));
            v.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "content": "x".repeat(4000)}]}));
        }
        let m = Message::parse_all(Value::Array(v)).unwrap();
        let plan = micro_compact(m.as_slice(), &keep_none()).unwrap();
        assert_eq!(plan.edits.len(), 4, "every result is cleared");
        assert_eq!(plan.cleared_tool_use_ids, vec!["dup", "b"]);
    }

    #[test]
    fn clears_old_compactable_results_keeping_recent() {
        let m = history(&[("Read", 4000); 8]);
        let plan = micro_compact(m.as_slice(), &MicroCompactOptions::default()).unwrap();
        assert_eq!(plan.cleared_tool_use_ids, vec!["t0", "t1", "t2"]);
        let per = 1000 - 8; // 1000 tokens each minus the placeholder's 8
        assert_eq!(plan.tokens_freed, (3 * per * 4u64).div_ceil(3));
        let out = apply_edits(&m, &plan.edits).unwrap();
        assert_eq!(
            out[2].to_value()["content"][0],
            json!({"type": "tool_result", "tool_use_id": "t0", "content": CLEARED_PLACEHOLDER})
        );
        assert_eq!(out[0], m[0]);
        assert_eq!(out[1], m[1], "tool_use stays");
        assert_eq!(out[16], m[16]);
    }

    #[test]
    fn only_compactable_tools_and_only_large_results() {
        let m = history(&[
            ("Task", 4000),
            ("Read", 10),
            ("Read", 4000),
            ("TodoWrite", 4000),
        ]);
        let plan = micro_compact(m.as_slice(), &keep_none()).unwrap();
        assert_eq!(plan.cleared_tool_use_ids, vec!["t2"]);
    }

    #[test]
    fn the_default_rule_reads_other_agents_tool_names() {
        use Compactable::*;
        for (name, want) in [
            ("Read", Always),
            ("WebFetch", Always),
            ("read_file", IfLarge),
            ("mcp__github__get_file_contents", IfLarge),
            ("runShellCommand", IfLarge),
            ("web_search", IfLarge),
            ("listDirectory", IfLarge),
            ("execute-sql-query", IfLarge),
            ("todo_write", Never),
            ("TodoWrite", Never),
            ("Task", Never),
            ("askUser", Never),
            ("get_user_approval", Never),
            ("think", Never),
            ("send_email", Never),
            ("write_file", Never),
            ("ToolSearch", Never),
            ("", Never),
        ] {
            assert_eq!(default_compactable(name), want, "{name}");
        }
        assert_eq!(
            name_words("mcp__gh__getHTTPPage2"),
            ["mcp", "gh", "get", "httppage2"]
        );
    }

    #[test]
    fn other_agents_tools_are_cleared_by_default_only_when_large() {
        // 1,600 characters = 400 tokens: below the line for another agent's tool, above the
        // placeholder for Claude Code's.
        let m = history(&[
            ("read_file", 1_600),
            ("read_file", 8_000),
            ("Read", 1_600),
            ("todo_write", 8_000),
            ("send_email", 8_000),
        ]);
        let plan = micro_compact(m.as_slice(), &keep_none()).unwrap();
        assert_eq!(plan.cleared_tool_use_ids, vec!["t1", "t2"]);
        // keepRecent counts the results the rule allows, of any size: t2 is kept, t0 small.
        let recent = micro_compact(
            m.as_slice(),
            &MicroCompactOptions {
                keep_recent: 1,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(recent.cleared_tool_use_ids, vec!["t1"]);
    }

    #[test]
    fn a_star_allows_every_tool() {
        let m = history(&[("read_file", 4000), ("run_shell", 4000), ("Task", 4000)]);
        let opts = |tools: Vec<&str>| MicroCompactOptions {
            keep_recent: 0,
            compactable_tools: Some(tools.into_iter().map(String::from).collect()),
            ..Default::default()
        };
        let every = micro_compact(m.as_slice(), &opts(vec!["*"])).unwrap();
        assert_eq!(every.cleared_tool_use_ids, vec!["t0", "t1", "t2"]);
        let some = micro_compact(m.as_slice(), &opts(vec!["run_shell"])).unwrap();
        assert_eq!(some.cleared_tool_use_ids, vec!["t1"]);
    }

    #[test]
    fn cleared_results_name_the_edits_places_in_the_tool_index() {
        let m = history(&[("Task", 4000), ("Read", 4000), ("Read", 10), ("Bash", 4000)]);
        let plan = micro_compact(m.as_slice(), &keep_none()).unwrap();
        assert_eq!(plan.cleared_results, vec![1, 3]);
        let positions_only = micro_compact_positions(m.as_slice(), &keep_none()).unwrap();
        assert!(positions_only.edits.is_empty());
        assert_eq!(positions_only.cleared_results, plan.cleared_results);
        assert_eq!(positions_only.tokens_freed, plan.tokens_freed);
        let index = m.as_slice().tool_index(0, false).unwrap();
        for (e, &at) in plan.edits.iter().zip(&plan.cleared_results) {
            let r = &index.results[at as usize];
            assert!(
                matches!(e, Edit::SetToolResultContent { message, block, .. }
                if *message == r.message && *block == r.block)
            );
        }
    }

    /// A reader that gives the whole view's index makes the same plan as the search for the
    /// active start; it is not asked when the time trigger stops the plan first.
    #[test]
    fn a_given_tool_index_makes_the_same_plan() {
        let m = history(&[("Read", 4000), ("Bash", 4000), ("Read", 10), ("Grep", 4000)]);
        let asked = std::cell::Cell::new(0);
        let read = |with_paths: bool| {
            asked.set(asked.get() + 1);
            m.as_slice().tool_index(0, with_paths).ok()
        };
        let usual = micro_compact_positions(m.as_slice(), &keep_none()).unwrap();
        let given = micro_compact_positions_with(m.as_slice(), &keep_none(), read).unwrap();
        assert_eq!(given, usual);
        assert_eq!(asked.get(), 1);
        let none = micro_compact_positions_with(m.as_slice(), &keep_none(), |_| None).unwrap();
        assert_eq!(none, usual);
        let not_idle = MicroCompactOptions {
            idle_minutes: Some(60.0),
            now_ms: Some(0.0),
            last_assistant_ms: Some(0.0),
            ..keep_none()
        };
        let skipped = micro_compact_positions_with(m.as_slice(), &not_idle, read).unwrap();
        assert_eq!(skipped.skipped, Some(MicroCompactSkip::NotIdle));
        assert_eq!(asked.get(), 1);
    }

    #[test]
    fn already_cleared_results_are_left_alone() {
        let m = history(&[("Read", 4000); 3]);
        let opts = MicroCompactOptions {
            keep_recent: 1,
            ..Default::default()
        };
        let first = micro_compact(m.as_slice(), &opts).unwrap();
        let once = apply_edits(&m, &first.edits).unwrap();
        let second = micro_compact(once.as_slice(), &opts).unwrap();
        assert!(second.edits.is_empty());
        assert_eq!(second.tokens_freed, 0);
    }

    #[test]
    fn keep_latest_per_path() {
        let mut m = history(&[("Read", 4000), ("Read", 4000), ("Bash", 4000)]);
        // make call 1 read the same path as call 0
        let fixed = Message::parse_all(json!([{"role": "assistant", "content": [
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/f0"}}]}]))
        .unwrap();
        m[3] = fixed[0].clone();
        let opts = MicroCompactOptions {
            keep_recent: 0,
            keep_latest_per_path: true,
            ..Default::default()
        };
        let plan = micro_compact(m.as_slice(), &opts).unwrap();
        assert_eq!(plan.cleared_tool_use_ids, vec!["t0"]);
    }

    #[test]
    fn time_based_variant() {
        let m = Message::parse_all(json!([
            {"type": "user", "message": {"role": "user", "content": "go"}},
            {"type": "assistant", "timestamp": "2026-02-10T21:00:00.000Z", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "Bash", "input": {}}]}},
            {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "z".repeat(4000)}]}}
        ]))
        .unwrap();
        let t0 = parse_timestamp_ms("2026-02-10T21:00:00.000Z").unwrap();
        let opts = |now: f64| MicroCompactOptions {
            keep_recent: 0,
            idle_minutes: Some(60.0),
            now_ms: Some(now),
            ..Default::default()
        };
        let early = micro_compact(m.as_slice(), &opts(t0 + 59.0 * 60_000.0)).unwrap();
        assert_eq!(early.skipped, Some(MicroCompactSkip::NotIdle));
        assert!(early.edits.is_empty());
        let late = micro_compact(m.as_slice(), &opts(t0 + 61.0 * 60_000.0)).unwrap();
        assert_eq!(late.cleared_tool_use_ids, vec!["a"]);
    }

    #[test]
    fn timestamps() {
        assert_eq!(parse_timestamp_ms("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(
            parse_timestamp_ms("1970-01-02T00:00:00.5Z"),
            Some(86_400_500.0)
        );
        assert_eq!(
            parse_timestamp_ms("2026-02-10T21:11:56.906Z"),
            Some(1_770_757_916_906.0)
        );
        assert_eq!(
            parse_timestamp_ms("2026-02-10T22:11:56.906+01:00"),
            Some(1_770_757_916_906.0)
        );
        assert_eq!(parse_timestamp_ms("yesterday"), None);
    }

    #[test]
    fn deterministic() {
        let m = history(&[
            ("Read", 4000),
            ("Grep", 3000),
            ("Bash", 5000),
            ("Read", 100),
        ]);
        let o = MicroCompactOptions {
            keep_recent: 1,
            ..Default::default()
        };
        assert_eq!(
            micro_compact(m.as_slice(), &o).unwrap(),
            micro_compact(m.as_slice(), &o).unwrap()
        );
    }
}
