//! The facts a conversation holds, read from its messages: what the user asked, the files
//! read, created or edited, the commands run and how they ended, the errors met and whether a
//! later step fixed them, the latest task list, and what was under way at the end.
//!
//! [`extract_facts`] is the one reading of a conversation shared by the offline summarizer
//! ([`crate::summarize::offline`], which renders the facts as a summary) and the loss report
//! ([`crate::summarize::loss`], which checks that a summary mentions them). Tool results,
//! reminders and other text the agent's harness added are not user messages
//! ([`clean_user_text`]). Same input, same facts: nothing depends on time, randomness or hash
//! order.

use std::borrow::Cow;

use serde_json::Value;

use crate::model::hash::FastMap;
use crate::model::messages::{Block, Content, Kind, Message, ToolResultContent};
use crate::model::order;
use crate::model::view::json_text;
/// A message the user wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserMessage {
    /// The text, cleaned of reminders and other added context ([`clean_user_text`]).
    pub text: String,
    /// Images and documents that came with it.
    pub media: usize,
}

/// What happened to one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileFacts {
    /// The path, as the tools named it.
    pub path: String,
    /// Successful reads.
    pub reads: usize,
    /// Successful whole-file writes (creations or overwrites).
    pub writes: usize,
    /// Successful edits.
    pub edits: usize,
    /// Calls on the file that failed.
    pub failures: usize,
    /// Calls on the file that got no result.
    pub unanswered: usize,
    /// Whether the first successful write happened before any read of the file (a new file).
    pub created: bool,
    /// The new text of the last successful write or edit (`new_string`, the written
    /// content, …), when the call carried it.
    pub last_change: Option<String>,
    /// Tool call order of the last touch (for "most recent first").
    pub last_touch: usize,
    /// Tool call order of the last write or edit.
    pub last_change_at: Option<usize>,
}

impl FileFacts {
    /// Whether the file was written or edited.
    pub fn changed(&self) -> bool {
        self.writes + self.edits > 0
    }
}

/// How a shell command ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// It succeeded (no error flag, exit code 0, no error line in its output).
    Ok,
    /// It failed: an error result or a non-zero exit code; the excerpt is its first telling
    /// line.
    Failed(String),
    /// It exited normally but its output reports an error (compiler, test runner…).
    ErrorOutput(String),
    /// The user rejected the call or interrupted it.
    Rejected,
    /// No result was seen (still running, or the conversation ended first).
    NoResult,
}

/// A shell command run by the agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandFacts {
    /// The command line.
    pub command: String,
    /// The description given with it, if any.
    pub description: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// Tool call order.
    pub order: usize,
}

/// Whether a later step fixed an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolution {
    /// A later step shows it fixed (the reason says which).
    Fixed(String),
    /// A later step probably addressed it (the reason says which).
    Likely(String),
    /// Nothing later shows it fixed.
    Open,
}

/// An error met in the conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorFacts {
    /// Where it came from: a command, a tool on a file, or feedback the agent received.
    pub source: String,
    /// Its first telling line (the part that identifies it).
    pub excerpt: String,
    /// Whether it is a call the user rejected or interrupted (not an error to fix).
    pub rejected: bool,
    /// Whether a later step fixed it.
    pub resolution: Resolution,
    /// How many tool calls had been made when it was seen, the failing call included: calls
    /// numbered from this on came later.
    pub order: usize,
}

/// One item of the agent's todo / task list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TodoItem {
    /// What is to be done.
    pub content: String,
    /// `pending`, `in_progress`, `completed` (as the tool wrote it).
    pub status: String,
}

impl TodoItem {
    /// Whether it is still to be done.
    pub fn is_open(&self) -> bool {
        !matches!(
            self.status.as_str(),
            "completed" | "done" | "deleted" | "cancelled"
        )
    }
}

/// Everything the offline summarizer (and the loss report) reads from a conversation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConversationFacts {
    /// The user's messages, in order.
    pub user_messages: Vec<UserMessage>,
    /// Files read, written or edited, in order of first touch.
    pub files: Vec<FileFacts>,
    /// Shell commands, in order.
    pub commands: Vec<CommandFacts>,
    /// Errors, in order.
    pub errors: Vec<ErrorFacts>,
    /// The latest todo / task list.
    pub todos: Vec<TodoItem>,
    /// Other tool calls, as short descriptions (`Grep "pattern"`), in order.
    pub other_calls: Vec<String>,
    /// Tool names with their number of calls, most used first (ties by name).
    pub tool_counts: Vec<(String, usize)>,
    /// The assistant's texts, in order (whitespace collapsed).
    pub notes: Vec<String>,
    /// The assistant's last text, as written.
    pub last_assistant_text: Option<String>,
    /// Short descriptions of the last tool calls (at most 3, oldest first).
    pub last_actions: Vec<String>,
    /// Tool calls that got no result.
    pub open_calls: Vec<String>,
    /// Summaries of earlier compactions found in the conversation.
    pub earlier_summaries: Vec<String>,
    /// Whether the user interrupted the assistant after its last step.
    pub interrupted: bool,
}

/// A tool call and its result, borrowed from the messages.
struct Call<'a> {
    name: &'a str,
    input: &'a Value,
    result: Option<CallResult<'a>>,
}

/// The result a tool call got.
pub(crate) struct CallResult<'a> {
    /// Its text (blocks joined, media as `[image]` / `[document]`; borrowed when it is one
    /// text).
    pub(crate) text: Cow<'a, str>,
    /// Whether it was flagged as an error (`is_error`).
    pub(crate) is_error: bool,
}

/// A text the agent received besides tool results (hook output, reminders, diagnostics),
/// which may report an error.
struct Feedback<'a> {
    text: Cow<'a, str>,
    /// How many tool calls had been made when it came.
    order: usize,
}

/// Text tags whose whole element is context added by the agent's harness, never typed by
/// the user.
pub const NOISE_TAGS: &[&str] = &[
    "system-reminder",
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "task-notification",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-stdout",
    "bash-stderr",
    "user-prompt-submit-hook",
    "command-message",
];

/// Starts of user texts that the harness writes (interruptions, caveats, the line that
/// follows a background task's notification).
pub const NOISE_PREFIXES: &[&str] = &[
    "[Request interrupted by user",
    "Caveat: The messages below were generated by the user while running local commands",
    "Read the output file to retrieve the result:",
];

/// Removes every `<tag>…</tag>` element (an unterminated one to the end), returning the
/// rest and the removed elements' inner texts.
fn remove_elements(text: &str, tag: &str, removed: &mut Vec<String>) -> String {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(&open) {
        out.push_str(&rest[..start]);
        let inner_start = start + open.len();
        match rest[inner_start..].find(&close) {
            Some(end) => {
                removed.push(rest[inner_start..inner_start + end].to_string());
                rest = &rest[inner_start + end + close.len()..];
            }
            None => {
                removed.push(rest[inner_start..].to_string());
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

fn element<'a>(text: &'a str, tag: &str) -> Option<&'a str> {
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&close)? + start;
    Some(text[start..end].trim())
}

/// What the user wrote in a user text, or `None` when it is context the agent's harness
/// added: reminders, IDE notices, command output and other known tagged elements
/// ([`NOISE_TAGS`]) are removed; a slash command (`<command-name>/x</command-name>` with
/// `<command-args>`) becomes `/x args`; a shell escape (`<bash-input>`) becomes `! command`;
/// interruption notices and caveats ([`NOISE_PREFIXES`]) and what is empty after all that are
/// not user messages. The removed elements' texts are pushed to `removed` (they may carry
/// error feedback).
pub fn clean_user_text(text: &str, removed: &mut Vec<String>) -> Option<String> {
    let mut t = text.to_string();
    for tag in NOISE_TAGS {
        if t.contains('<') {
            t = remove_elements(&t, tag, removed);
        }
    }
    if let Some(name) = element(&t, "command-name") {
        let args = element(&t, "command-args").unwrap_or("");
        let cmd = if args.is_empty() {
            name.to_string()
        } else {
            format!("{name} {args}")
        };
        return Some(cmd);
    }
    if let Some(cmd) = element(&t, "bash-input") {
        return Some(format!("! {cmd}"));
    }
    let t = t.trim();
    if t.is_empty() || NOISE_PREFIXES.iter().any(|p| t.starts_with(p)) {
        return None;
    }
    Some(t.to_string())
}

fn str_field<'a>(input: &'a Value, keys: &[&str]) -> Option<&'a str> {
    keys.iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .filter(|s| !s.is_empty())
}

/// What a tool call does to a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FileOp {
    Read,
    Write,
    Edit,
}

const PATH_KEYS: &[&str] = &[
    "file_path",
    "notebook_path",
    "path",
    "filePath",
    "absolute_path",
];

/// What a tool call does to a file (borrowed from the call's input).
struct FileTouch<'a> {
    op: FileOp,
    /// The path, as the call named it.
    path: &'a str,
    /// The new text of a write or edit, when the call carried it.
    new_text: Option<&'a str>,
}

impl<'a> FileTouch<'a> {
    fn new(op: FileOp, path: &'a str, new_text: Option<&'a str>) -> FileTouch<'a> {
        FileTouch { op, path, new_text }
    }
}

/// The file operations of a tool call: one for most tools, one per file for a patch (an
/// OpenAI `apply_patch` call: the Responses API's `apply_patch_call`, whose `operation` names
/// one file, or a free-form patch naming several).
fn file_ops<'a>(name: &str, input: &'a Value) -> Vec<FileTouch<'a>> {
    if name == "apply_patch" {
        if let Some(touches) = patch_ops(input) {
            return touches;
        }
    }
    file_op(name, input).into_iter().collect()
}

/// The files an `apply_patch` call's input changes: an `operation` of the Responses API's
/// built-in tool (`{type: 'create_file' | 'update_file' | 'delete_file', path, diff}`), or
/// a patch in the envelope OpenAI's models write (`*** Add File: path`, `*** Update File:
/// path`, `*** Delete File: path`, `*** Move to: path`) given as the call's text (a custom
/// tool) or its `input` / `patch` argument. `None` for another input.
fn patch_ops(input: &Value) -> Option<Vec<FileTouch<'_>>> {
    let op = match input.get("type").and_then(Value::as_str) {
        Some("create_file") => Some(FileOp::Write),
        Some("update_file") | Some("delete_file") => Some(FileOp::Edit),
        _ => None,
    };
    if let (Some(op), Some(path)) = (op, str_field(input, &["path"])) {
        return Some(vec![FileTouch::new(op, path, None)]);
    }
    let text = match input {
        Value::String(s) => s.as_str(),
        _ => str_field(input, &["input", "patch"])?,
    };
    let mut touches: Vec<FileTouch<'_>> = Vec::new();
    // The paths named so far: a patch may name thousands of files (a scan of `touches` for
    // each was quadratic).
    let mut named: crate::model::hash::FastSet<&str> = Default::default();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        let (op, rest) = if let Some(p) = line.strip_prefix("*** Add File: ") {
            (FileOp::Write, p)
        } else if let Some(p) = line
            .strip_prefix("*** Update File: ")
            .or_else(|| line.strip_prefix("*** Delete File: "))
            .or_else(|| line.strip_prefix("*** Move to: "))
        {
            (FileOp::Edit, p)
        } else {
            continue;
        };
        let path = rest.trim();
        if !path.is_empty() && named.insert(path) {
            touches.push(FileTouch::new(op, path, None));
        }
    }
    (!touches.is_empty()).then_some(touches)
}

/// The file operation of a tool call.
fn file_op<'a>(name: &str, input: &'a Value) -> Option<FileTouch<'a>> {
    let path = |keys: &[&str]| str_field(input, keys);
    let text = |keys: &[&str]| str_field(input, keys);
    match name {
        "Read" | "NotebookRead" => Some(FileTouch::new(FileOp::Read, path(PATH_KEYS)?, None)),
        "Write" => Some(FileTouch::new(
            FileOp::Write,
            path(PATH_KEYS)?,
            text(&["content"]),
        )),
        "Edit" => Some(FileTouch::new(
            FileOp::Edit,
            path(PATH_KEYS)?,
            text(&["new_string"]),
        )),
        "MultiEdit" => {
            let last = input
                .get("edits")
                .and_then(Value::as_array)
                .and_then(|e| e.last())
                .and_then(|e| e.get("new_string"))
                .and_then(Value::as_str);
            Some(FileTouch::new(FileOp::Edit, path(PATH_KEYS)?, last))
        }
        "NotebookEdit" => Some(FileTouch::new(
            FileOp::Edit,
            path(PATH_KEYS)?,
            text(&["new_source"]),
        )),
        n if n.starts_with("str_replace") => {
            let p = path(PATH_KEYS)?;
            match input.get("command").and_then(Value::as_str) {
                Some("view") => Some(FileTouch::new(FileOp::Read, p, None)),
                Some("create") => Some(FileTouch::new(FileOp::Write, p, text(&["file_text"]))),
                Some("str_replace") => Some(FileTouch::new(FileOp::Edit, p, text(&["new_str"]))),
                Some("insert") => Some(FileTouch::new(
                    FileOp::Edit,
                    p,
                    text(&["insert_text", "new_str"]),
                )),
                _ => Some(FileTouch::new(FileOp::Edit, p, None)),
            }
        }
        _ => {
            let lower = name.to_ascii_lowercase();
            let p = path(&["file_path", "notebook_path", "filePath", "absolute_path"])?;
            if lower.contains("read") || lower.contains("view") {
                Some(FileTouch::new(FileOp::Read, p, None))
            } else if lower.contains("write") || lower.contains("create") {
                Some(FileTouch::new(
                    FileOp::Write,
                    p,
                    text(&["content", "file_text", "contents"]),
                ))
            } else if lower.contains("edit") || lower.contains("replace") {
                Some(FileTouch::new(
                    FileOp::Edit,
                    p,
                    text(&["new_string", "new_str", "replacement", "content"]),
                ))
            } else {
                None
            }
        }
    }
}

/// The command line of a shell tool call.
fn shell_command(name: &str, input: &Value) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    let shell = matches!(
        name,
        "Bash" | "Shell" | "PowerShell" | "run_shell_command" | "exec_command" | "local_shell"
    ) || lower.contains("bash")
        || lower.contains("shell");
    if !shell {
        return None;
    }
    match input.get("command").or_else(|| input.get("cmd")) {
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.clone()),
        Some(Value::Array(parts)) => {
            let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            (!words.is_empty()).then(|| words.join(" "))
        }
        _ => None,
    }
}

/// The most paths [`describe_call`] lists of a call that changes several files.
const DESCRIBED_PATHS: usize = 5;

/// A one-line description of a tool call for lists.
fn describe_call(name: &str, input: &Value) -> String {
    let touches = file_ops(name, input);
    if !touches.is_empty() {
        // A patch may name thousands of files: the first few, and how many more.
        let paths: Vec<&str> = touches
            .iter()
            .take(DESCRIBED_PATHS)
            .map(|t| t.path)
            .collect();
        let more = touches.len() - paths.len();
        return match more {
            0 => format!("{name} {}", paths.join(", ")),
            _ => format!("{name} {} and {more} more files", paths.join(", ")),
        };
    }
    if let Some(cmd) = shell_command(name, input) {
        return format!("{name} `{}`", one_line(&cmd, 160));
    }
    let arg = [
        "pattern",
        "query",
        "url",
        "description",
        "subject",
        "skill",
        "prompt",
        "path",
        "command",
        "task_id",
    ]
    .iter()
    .find_map(|k| {
        input
            .get(*k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    });
    let target = ["pattern", "query"]
        .iter()
        .any(|k| input.get(*k).is_some())
        .then(|| str_field(input, &["path", "glob"]))
        .flatten()
        .map(|p| format!(" in {p}"))
        .unwrap_or_default();
    match arg {
        Some(a) => format!("{name} \"{}\"{target}", one_line(a, 100)),
        None => name.to_string(),
    }
}

/// The text on one line (line breaks shown as ` ↵ `), cut in the middle to about `max`
/// chars with an inline marker.
pub(crate) fn one_line(s: &str, max: usize) -> String {
    let joined: String = s.trim().lines().collect::<Vec<_>>().join(" ↵ ");
    cut_inline(&joined, max)
}

/// Keeps the head and the tail of a one-line text (`max` characters in all) around an
/// inline marker.
pub(crate) fn cut_inline(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max / 2).collect();
    let tail: String = s.chars().skip(count - max / 2).collect();
    format!("{head} […{} chars left out…] {tail}", count - max)
}

fn collapse_ws(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for w in s.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(w);
    }
    out
}

fn result_text(content: Option<&ToolResultContent>) -> Cow<'_, str> {
    fn part(b: &Block) -> Option<&str> {
        match b {
            Block::Text(t) => Some(&t.text),
            Block::Image(_) => Some("[image]"),
            Block::Document(_) => Some("[document]"),
            _ => None,
        }
    }
    match content {
        None => Cow::Borrowed(""),
        Some(ToolResultContent::Text(t)) => Cow::Borrowed(t),
        Some(ToolResultContent::Blocks(bs)) => {
            let mut parts = bs.iter().filter_map(part);
            let Some(first) = parts.next() else {
                return Cow::Borrowed("");
            };
            let Some(second) = parts.next() else {
                return Cow::Borrowed(first);
            };
            let mut out = format!("{first}\n{second}");
            for p in parts {
                out.push('\n');
                out.push_str(p);
            }
            Cow::Owned(out)
        }
    }
}

/// Whether a tool result says the user rejected or interrupted the call.
fn is_rejection(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with("The user doesn't want to proceed with this tool use")
        || t.starts_with("[Request interrupted by user")
        || t.starts_with("The user doesn't want to take this action")
}

/// What the user said when rejecting a call, in the form Claude Code writes it (`… the
/// user said:` followed by the user's words).
fn rejection_feedback(text: &str) -> Option<String> {
    if !is_rejection(text) {
        return None;
    }
    let (_, said) = text.split_once("the user said:")?;
    let said = said.trim();
    (!said.is_empty()).then(|| said.to_string())
}

/// Whether ASCII text holds, in any case, one of the words every pattern of
/// [`is_error_line`] contains (`err`, `fail`, `fatal`, `panic`, …): a line without any of them
/// is not an error line, found without lowercasing it.
fn has_error_word(text: &[u8]) -> bool {
    find_error_word(text).is_some()
}

/// Where the first of the words of [`has_error_word`] starts in `text` (any case).
fn find_error_word(text: &[u8]) -> Option<usize> {
    // The words by their first byte (lowercase): each position is compared with the one or
    // two words that can start there, not with all of them.
    fn words(first: u8) -> &'static [&'static [u8]] {
        match first {
            b'e' => &[b"err", b"exception"],
            b'f' => &[b"fail", b"fatal"],
            b'p' => &[b"panic"],
            b't' => &[b"traceback"],
            b'*' => &[b"** ("],
            b'u' => &[b"uncaught", b"unhandled"],
            b'n' => &[b"not found", b"no such"],
            b'd' => &[b"denied"],
            b'c' => &[b"cannot find"],
            b's' => &[b"segmentation"],
            _ => &[],
        }
    }
    // First the words' first two bytes, in any case (`| 0x20` lowercases a letter and keeps
    // `*`; the other bytes it maps onto these pairs are turned down by the full comparison).
    const fn pair(p: &[u8; 2]) -> u16 {
        u16::from_le_bytes(*p)
    }
    const ER: u16 = pair(b"er");
    const EX: u16 = pair(b"ex");
    const FA: u16 = pair(b"fa");
    const PA: u16 = pair(b"pa");
    const TR: u16 = pair(b"tr");
    const STARS: u16 = pair(b"**");
    const UN: u16 = pair(b"un");
    const NO: u16 = pair(b"no");
    const DE: u16 = pair(b"de");
    const CA: u16 = pair(b"ca");
    const SE: u16 = pair(b"se");
    // Every word has three bytes or more.
    (0..text.len().saturating_sub(2)).find(|&i| {
        let two = u16::from_le_bytes([text[i] | 0x20, text[i + 1] | 0x20]);
        if !matches!(two, ER | EX | FA | PA | TR | STARS | UN | NO | DE | CA | SE) {
            return false;
        }
        let rest = &text[i..];
        words(rest[0].to_ascii_lowercase())
            .iter()
            .any(|w| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w))
    })
}

/// Whether a line of command output reports an error.
pub(crate) fn is_error_line(line: &str) -> bool {
    let t = line.trim();
    if t.is_empty() {
        return false;
    }
    // The first 160 characters, lowercased (an ASCII prefix without decoding or a second copy).
    let head = if t.len() <= 160 {
        t
    } else if t.as_bytes()[..160].is_ascii() {
        // 160 ASCII bytes are the first 160 characters, found without walking them.
        &t[..160]
    } else {
        t.char_indices().nth(160).map_or(t, |(end, _)| &t[..end])
    };
    let l: String = if head.is_ascii() {
        if !has_error_word(head.as_bytes()) {
            return false;
        }
        head.to_ascii_lowercase()
    } else {
        head.to_lowercase()
    };
    const STARTS: &[&str] = &[
        "error:",
        "error[",
        "error ",
        "errors:",
        "fatal:",
        "fatal error",
        "panic:",
        "traceback (most recent call last)",
        "** (",
        "npm err!",
        "failed:",
        "failure:",
        "exception:",
        "uncaught ",
        "unhandled ",
        "test result: failed",
    ];
    const CONTAINS: &[&str] = &[
        ": error:",
        ": error ts",
        "error[e0",
        "panicked at",
        "command not found",
        "no such file or directory",
        "permission denied",
        "cannot find module",
        "modulenotfounderror",
        "syntaxerror:",
        "typeerror:",
        "referenceerror:",
        "nameerror:",
        "importerror:",
        "assertionerror",
        "compilation failed",
        "build failed",
        "(compileerror)",
        "segmentation fault",
    ];
    if STARTS.iter().any(|p| l.starts_with(p)) || CONTAINS.iter().any(|p| l.contains(p)) {
        return true;
    }
    // "3 failed", "1 failure", "2 failures" with a non-zero count.
    let words: Vec<&str> = l.split(|c: char| !c.is_alphanumeric()).collect();
    words.windows(2).any(|w| {
        matches!(w[1], "failed" | "failure" | "failures" | "errors" | "error")
            && !w[0].is_empty()
            && w[0].bytes().all(|b| b.is_ascii_digit())
            && w[0].bytes().any(|b| b != b'0')
    })
}

/// `Exit code N` on the first line (how Claude Code reports a failed command).
fn exit_code(text: &str) -> Option<i64> {
    let first = text.trim_start().lines().next()?.trim();
    first.strip_prefix("Exit code ")?.trim().parse().ok()
}

/// The first line of `text` that reports an error, cut to 200 chars.
fn error_line(text: &str) -> Option<String> {
    first_error_line(text).map(|l| cut_inline(l.trim(), 200))
}

/// The first line of `text` that [`is_error_line`], found by looking only at the lines that
/// hold one of the words every error pattern contains ([`find_error_word`]): a line without
/// one is no error line, so the scan goes from one such word to the next instead of
/// through every line. The lowercase of a text holds an ASCII letter only where the text
/// does, but for the Kelvin sign (`K`, lowercased to `k`: a text with one is read line by
/// line) and `İ` (lowercased to `i` and a combining dot, which no pattern can continue).
fn first_error_line(text: &str) -> Option<&str> {
    if text.contains('\u{212A}') {
        return text.lines().find(|l| is_error_line(l));
    }
    let bytes = text.as_bytes();
    let mut from = 0;
    while from < bytes.len() {
        let at = from + find_error_word(&bytes[from..])?;
        let start = bytes[..at]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let end = bytes[at..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| at + i);
        // `\n` is ASCII: `start..end` are character boundaries.
        let line = &text[start..end];
        if is_error_line(line) {
            return Some(line.strip_suffix('\r').unwrap_or(line));
        }
        from = end + 1;
    }
    None
}

/// The telling line of a failure: its first error line, else its first line that is not
/// just the exit code, else the exit code.
fn failure_excerpt(text: &str) -> String {
    let text = text
        .replace("<tool_use_error>", "")
        .replace("</tool_use_error>", "");
    let text = text.as_str();
    if let Some(l) = error_line(text) {
        return l;
    }
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let pick = lines
        .iter()
        .find(|l| !l.starts_with("Exit code "))
        .or(lines.first())
        .copied()
        .unwrap_or("(no output)");
    cut_inline(pick, 200)
}

/// Programs whose output is a file's or a search's content: their lines are not scanned
/// for error words (a source file may well contain `error:`).
const VIEWER_PROGRAMS: &[&str] = &[
    "cat", "head", "tail", "sed", "grep", "rg", "ag", "find", "ls", "less", "more", "bat", "awk",
    "jq", "echo", "printf", "tree", "wc", "diff", "nl", "od", "xxd", "stat", "file",
];

/// The words of a command's first program, after `cd … &&` and `VAR=value` prefixes.
fn program_words(command: &str) -> Vec<&str> {
    let mut segment = command.trim();
    // Skip leading `cd dir &&` / `cd dir;` segments.
    loop {
        let t = segment.trim_start();
        if let Some(rest) = t.strip_prefix("cd ") {
            match rest.find("&&").or_else(|| rest.find(';')) {
                Some(p) => {
                    let skip = if rest[p..].starts_with("&&") { 2 } else { 1 };
                    segment = &rest[p + skip..];
                    continue;
                }
                None => break,
            }
        }
        break;
    }
    let head = segment
        .split(['|', ';', '\n'])
        .next()
        .unwrap_or("")
        .split("&&")
        .next()
        .unwrap_or("");
    head.split_whitespace()
        .skip_while(|w| w.contains('=') && !w.starts_with('-'))
        .collect()
}

/// A command normalized for "the same command again": the first pipeline element, without
/// `2>&1`, whitespace collapsed.
pub(crate) fn command_key(command: &str) -> String {
    let words = program_words(command);
    words
        .iter()
        .filter(|w| **w != "2>&1")
        .copied()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The program and its subcommand (`cargo test`, `mix compile`), for "a later run of the
/// same kind".
pub(crate) fn command_family(command: &str) -> String {
    let words = program_words(command);
    let mut out: Vec<&str> = words.iter().take(1).copied().collect();
    if let Some(second) = words.get(1) {
        if !second.starts_with('-') && !second.contains('/') && !second.contains('.') {
            out.push(second);
        }
    }
    out.join(" ")
}

fn is_viewer(command: &str) -> bool {
    program_words(command)
        .first()
        .map(|p| p.rsplit('/').next().unwrap_or(p))
        .is_some_and(|p| VIEWER_PROGRAMS.contains(&p))
}

pub(crate) fn command_outcome(command: &str, result: Option<&CallResult>) -> Outcome {
    let Some(CallResult { text, is_error }) = result else {
        return Outcome::NoResult;
    };
    if is_rejection(text) {
        return Outcome::Rejected;
    }
    let code = exit_code(text);
    if *is_error || code.is_some_and(|c| c != 0) {
        return Outcome::Failed(failure_excerpt(text));
    }
    if !is_viewer(command) {
        if let Some(l) = error_line(text) {
            return Outcome::ErrorOutput(l);
        }
    }
    Outcome::Ok
}

/// The file name (last path component).
pub fn file_name(path: &str) -> &str {
    path.trim_end_matches(['/', '\\'])
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(path)
}

/// Whether `needle` occurs in `hay` with no file-name character right before it and no
/// letter, digit or `_` right after it (so `a.rs` is not found in `data.rs`).
pub fn contains_name(hay: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let name_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.');
    let mut from = 0;
    while let Some(p) = hay[from..].find(needle) {
        let start = from + p;
        let end = start + needle.len();
        let before_ok = hay[..start]
            .chars()
            .next_back()
            .is_none_or(|c| !name_char(c));
        let after_ok = hay[end..]
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        if before_ok && after_ok {
            return true;
        }
        from = start + needle.chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Reads the facts of a conversation (typed messages, either shape). Sidechain lines,
/// system lines and other carried-through lines are ignored.
pub fn extract_facts(messages: &[Message]) -> ConversationFacts {
    extract(messages, true)
}

/// What the loss report reads of [`extract_facts`]: the same `files` (paths in order of
/// first touch), `user_messages` and `errors` (sources, excerpts, whether rejected, order),
/// without the rest (notes, commands, todos, tool counts, descriptions of calls, and the
/// errors' resolutions), which the loss report does not use.
pub fn extract_loss_facts(messages: &[Message]) -> ConversationFacts {
    extract(messages, false)
}

/// A block of a message's content, borrowed (a string content is one text block).
enum Part<'a> {
    Text(&'a str),
    Block(&'a Block),
}

/// The blocks of `content`, borrowed.
fn parts(content: &Content) -> impl Iterator<Item = Part<'_>> {
    let (text, blocks) = match content {
        Content::Text(t) => (Some(Part::Text(t.as_str())), &[][..]),
        Content::Blocks(bs) => (None, bs.as_slice()),
    };
    text.into_iter().chain(blocks.iter().map(|b| match b {
        Block::Text(t) => Part::Text(&t.text),
        b => Part::Block(b),
    }))
}

/// [`extract_facts`]; `full: false` reads only what [`extract_loss_facts`] gives.
fn extract(messages: &[Message], full: bool) -> ConversationFacts {
    static NULL: Value = Value::Null;
    let mut facts = ConversationFacts::default();
    let mut calls: Vec<Call<'_>> = Vec::new();
    let mut by_id: FastMap<&str, usize> = FastMap::default();
    // Feedback texts (hook output, reminders) with the call count when they came.
    let mut feedback: Vec<Feedback<'_>> = Vec::new();

    for m in messages {
        if m.is_sidechain() {
            continue;
        }
        match m.kind() {
            Kind::Assistant => {
                let Some(content) = m.content() else { continue };
                facts.interrupted = false;
                for b in parts(content) {
                    match b {
                        Part::Text(t) => {
                            if !full {
                                continue;
                            }
                            let text = t.trim();
                            if text.is_empty() || is_rendered_server_result(text) {
                                continue;
                            }
                            facts.notes.push(collapse_ws(text));
                            facts.last_assistant_text = Some(text.to_string());
                        }
                        Part::Block(Block::ToolUse(t) | Block::ServerToolUse(t)) => {
                            let input = t.input.as_ref().and_then(|i| i.as_ref()).unwrap_or(&NULL);
                            by_id.insert(&t.id, calls.len());
                            calls.push(Call {
                                name: &t.name,
                                input,
                                result: None,
                            });
                        }
                        _ => {}
                    }
                }
            }
            Kind::User => {
                if m.is_compact_summary() {
                    if let Some(t) = message_text(m) {
                        facts.earlier_summaries.push(t);
                    }
                    continue;
                }
                let meta = matches!(m.is_meta, Some(Some(true)));
                let Some(content) = m.content() else { continue };
                let mut texts: Vec<String> = Vec::new();
                let mut media = 0usize;
                let flush = |texts: &mut Vec<String>, media: &mut usize, out: &mut Vec<_>| {
                    if !texts.is_empty() || *media > 0 {
                        let text = if texts.is_empty() {
                            "[image]".to_string()
                        } else {
                            texts.join("\n\n")
                        };
                        out.push(UserMessage {
                            text,
                            media: *media,
                        });
                    }
                    texts.clear();
                    *media = 0;
                };
                for b in parts(content) {
                    match b {
                        Part::Block(Block::ToolResult(r)) => {
                            flush(&mut texts, &mut media, &mut facts.user_messages);
                            let text = result_text(r.content.as_ref().and_then(|c| c.as_ref()));
                            let is_error = r.extra.get("is_error") == Some(&Value::Bool(true));
                            if let Some(said) = rejection_feedback(&text) {
                                facts.user_messages.push(UserMessage {
                                    text: said,
                                    media: 0,
                                });
                            }
                            if let Some(&k) = by_id.get(r.tool_use_id.as_str()) {
                                calls[k].result = Some(CallResult { text, is_error });
                            }
                        }
                        Part::Text(t) if meta => feedback.push(Feedback {
                            text: Cow::Borrowed(t),
                            order: calls.len(),
                        }),
                        Part::Text(t) => {
                            let trimmed = t.trim();
                            if trimmed.starts_with("[Request interrupted by user") {
                                facts.interrupted = true;
                            }
                            if trimmed == "[image]" || trimmed == "[document]" {
                                media += 1;
                                continue;
                            }
                            let mut removed = Vec::new();
                            if let Some(clean) = clean_user_text(t, &mut removed) {
                                texts.push(clean);
                            }
                            for r in removed {
                                feedback.push(Feedback {
                                    text: Cow::Owned(r),
                                    order: calls.len(),
                                });
                            }
                        }
                        Part::Block(Block::Image(_) | Block::Document(_)) if !meta => media += 1,
                        _ => {}
                    }
                }
                flush(&mut texts, &mut media, &mut facts.user_messages);
            }
            Kind::Attachment => {
                let Some(a) = m.extra.get("attachment") else {
                    continue;
                };
                let ty = a.get("type").and_then(Value::as_str).unwrap_or("");
                if ty == "queued_command" {
                    if let Some(p) = str_field(a, &["prompt", "content"]) {
                        let mut removed = Vec::new();
                        if let Some(clean) = clean_user_text(p, &mut removed) {
                            facts.user_messages.push(UserMessage {
                                text: clean,
                                media: 0,
                            });
                        }
                    }
                } else if ty.contains("hook") || ty.contains("diagnostic") {
                    let text = match a.get("content") {
                        Some(Value::String(s)) => Cow::Borrowed(s.as_str()),
                        _ => Cow::Owned(json_text(a)),
                    };
                    feedback.push(Feedback {
                        text,
                        order: calls.len(),
                    });
                }
            }
            _ => {}
        }
    }

    derive_from_calls(&mut facts, &calls, full);
    derive_feedback_errors(&mut facts, &feedback, full);
    facts
}

/// A server tool result rendered as text in a summary request (`[web_search_tool_result
/// for …]`).
fn is_rendered_server_result(text: &str) -> bool {
    text.starts_with('[')
        && text
            .split_once(']')
            .is_some_and(|(head, _)| head.contains("_tool_result for "))
}

fn message_text(m: &Message) -> Option<String> {
    match m.content()? {
        Content::Text(t) => Some(t.clone()),
        Content::Blocks(bs) => {
            let parts: Vec<&str> = bs
                .iter()
                .filter_map(|b| match b {
                    Block::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect();
            (!parts.is_empty()).then(|| parts.join("\n"))
        }
    }
}

/// A failed call on a file, to be resolved by a later successful call on it.
struct FileError {
    /// Index of the file in [`ConversationFacts::files`].
    file: usize,
    /// What the failed call tried.
    op: FileOp,
    /// Index of the error in [`ConversationFacts::errors`].
    error: usize,
}

fn derive_from_calls(facts: &mut ConversationFacts, calls: &[Call<'_>], full: bool) {
    let mut file_index: FastMap<&str, usize> = FastMap::default();
    let mut counts: Vec<(&str, usize)> = Vec::new();
    let mut task_ids: Vec<String> = Vec::new();
    // Failed file calls, to resolve afterwards.
    let mut file_errors: Vec<FileError> = Vec::new();

    for (order, call) in calls.iter().enumerate() {
        if full {
            match counts.iter_mut().find(|(n, _)| *n == call.name) {
                Some((_, c)) => *c += 1,
                None => counts.push((call.name, 1)),
            }
        }
        let rejected = call.result.as_ref().is_some_and(|r| is_rejection(&r.text));
        let failed = call.result.as_ref().is_some_and(|r| r.is_error);
        let result_text = call.result.as_ref().map_or("", |r| r.text.as_ref());
        let touches = file_ops(call.name, call.input);
        if !touches.is_empty() {
            for FileTouch { op, path, new_text } in touches {
                let k = *file_index.entry(path).or_insert_with(|| {
                    facts.files.push(FileFacts {
                        path: path.to_string(),
                        ..Default::default()
                    });
                    facts.files.len() - 1
                });
                let f = &mut facts.files[k];
                f.last_touch = order;
                if rejected {
                    f.failures += 1;
                    facts.errors.push(ErrorFacts {
                        source: format!("{} {}", call.name, path),
                        excerpt: "rejected by the user".into(),
                        rejected: true,
                        resolution: Resolution::Open,
                        order: order + 1,
                    });
                } else if failed {
                    f.failures += 1;
                    facts.errors.push(ErrorFacts {
                        source: format!("{} {}", call.name, path),
                        excerpt: failure_excerpt(result_text),
                        rejected: false,
                        resolution: Resolution::Open,
                        order: order + 1,
                    });
                    file_errors.push(FileError {
                        file: k,
                        op,
                        error: facts.errors.len() - 1,
                    });
                } else if call.result.is_none() {
                    f.unanswered += 1;
                } else {
                    match op {
                        FileOp::Read => f.reads += 1,
                        FileOp::Write => {
                            let said = result_text;
                            if said.starts_with("File created")
                                || (f.writes + f.edits + f.reads == 0 && !said.contains("updated"))
                            {
                                f.created = true;
                            }
                            f.writes += 1;
                        }
                        FileOp::Edit => f.edits += 1,
                    }
                    if op != FileOp::Read {
                        f.last_change_at = Some(order);
                        if let Some(t) = new_text.filter(|_| full) {
                            f.last_change = Some(t.to_string());
                        }
                    }
                }
            }
        } else if let Some(command) = shell_command(call.name, call.input) {
            let outcome = command_outcome(&command, call.result.as_ref());
            match &outcome {
                Outcome::Failed(e) | Outcome::ErrorOutput(e) => facts.errors.push(ErrorFacts {
                    source: format!("`{}`", one_line(&command, 120)),
                    excerpt: e.clone(),
                    rejected: false,
                    resolution: Resolution::Open,
                    order: order + 1,
                }),
                Outcome::Rejected => facts.errors.push(ErrorFacts {
                    source: format!("`{}`", one_line(&command, 120)),
                    excerpt: "rejected by the user".into(),
                    rejected: true,
                    resolution: Resolution::Open,
                    order: order + 1,
                }),
                _ => {}
            }
            if full {
                facts.commands.push(CommandFacts {
                    description: str_field(call.input, &["description"]).map(str::to_string),
                    command,
                    outcome,
                    order,
                });
            }
        } else {
            if full {
                todo_update(facts, &mut task_ids, call);
            }
            if rejected || failed {
                facts.errors.push(ErrorFacts {
                    source: describe_call(call.name, call.input),
                    excerpt: if rejected {
                        "rejected by the user".into()
                    } else {
                        failure_excerpt(result_text)
                    },
                    rejected,
                    resolution: Resolution::Open,
                    order: order + 1,
                });
            }
            if full && !is_todo_tool(call.name) {
                facts.other_calls.push(describe_call(call.name, call.input));
            }
        }
    }
    if !full {
        return;
    }

    // Resolutions. The successful file calls by path, in order, read once: a failed patch
    // names many files, and each was resolved by reading every later call (and patch) again.
    let mut succeeded: FastMap<&str, Vec<(usize, FileOp)>> = FastMap::default();
    if !file_errors.is_empty() {
        for (k, c) in calls.iter().enumerate() {
            if c.result
                .as_ref()
                .is_some_and(|r| !r.is_error && !is_rejection(&r.text))
            {
                for t in file_ops(c.name, c.input) {
                    succeeded.entry(t.path).or_default().push((k, t.op));
                }
            }
        }
    }
    for FileError { file, op, error } in file_errors {
        let f = &facts.files[file];
        let order = facts.errors[error].order;
        let later_ok = succeeded.get(f.path.as_str()).and_then(|seen| {
            let from = seen.partition_point(|&(k, _)| k < order);
            seen[from..]
                .iter()
                .find(|&&(_, t)| t == op || (op == FileOp::Edit && t == FileOp::Write))
        });
        if let Some(&(k, _)) = later_ok {
            facts.errors[error].resolution = Resolution::Fixed(format!(
                "a later {} of the same file succeeded",
                calls[k].name
            ));
        }
    }
    // Each command's key and family, made once (for every open error they are compared
    // with every later command's).
    let commands = &facts.commands;
    let mut keys: Vec<(String, String)> = Vec::new();
    for e in facts.errors.iter_mut() {
        if e.rejected || e.resolution != Resolution::Open {
            continue;
        }
        let Some(at) = commands.iter().position(|c| c.order + 1 == e.order) else {
            continue;
        };
        if keys.is_empty() {
            keys = commands
                .iter()
                .map(|c| (command_key(&c.command), command_family(&c.command)))
                .collect();
        }
        let (key, family) = &keys[at];
        let later = commands
            .iter()
            .zip(&keys)
            .filter(|(c, _)| c.order >= e.order && c.outcome == Outcome::Ok);
        if later.clone().any(|(_, (k, _))| k == key) {
            e.resolution = Resolution::Fixed("a later run of the same command succeeded".into());
        } else if let Some((c, _)) = later
            .clone()
            .find(|(_, (_, f))| !family.is_empty() && f == family)
        {
            e.resolution =
                Resolution::Likely(format!("a later `{}` succeeded", one_line(&c.command, 80)));
        }
    }
    resolve_by_later_edits(facts);

    order::sort_by(&mut counts, &|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    facts.tool_counts = counts
        .into_iter()
        .map(|(n, c)| (n.to_string(), c))
        .collect();
    let n = calls.len();
    facts.last_actions = calls[n.saturating_sub(3)..]
        .iter()
        .map(|c| describe_call(c.name, c.input))
        .collect();
    facts.open_calls = calls
        .iter()
        .filter(|c| c.result.is_none())
        .map(|c| describe_call(c.name, c.input))
        .collect();
}

/// Still-open errors whose text names a file that was changed successfully afterwards are
/// probably fixed by that change.
fn resolve_by_later_edits(facts: &mut ConversationFacts) {
    for e in facts.errors.iter_mut() {
        if e.rejected || e.resolution != Resolution::Open {
            continue;
        }
        let text = format!("{} {}", e.source, e.excerpt);
        if let Some(f) = facts.files.iter().find(|f| {
            f.last_change_at.is_some_and(|at| at >= e.order)
                && contains_name(&text, file_name(&f.path))
        }) {
            e.resolution =
                Resolution::Likely(format!("{} was changed afterwards", file_name(&f.path)));
        }
    }
}

fn is_todo_tool(name: &str) -> bool {
    matches!(
        name,
        "TodoWrite" | "TodoRead" | "TaskCreate" | "TaskUpdate" | "TaskList" | "TaskGet"
    )
}

fn todo_update(facts: &mut ConversationFacts, task_ids: &mut Vec<String>, call: &Call<'_>) {
    match call.name {
        "TodoWrite" => {
            if let Some(items) = call.input.get("todos").and_then(Value::as_array) {
                facts.todos = items
                    .iter()
                    .filter_map(|t| {
                        let content = str_field(t, &["content", "subject", "activeForm"])?;
                        Some(TodoItem {
                            content: content.to_string(),
                            status: str_field(t, &["status"]).unwrap_or("pending").to_string(),
                        })
                    })
                    .collect();
                task_ids.clear();
            }
        }
        "TaskCreate" => {
            let Some(subject) = str_field(call.input, &["subject", "description", "content"])
            else {
                return;
            };
            let id = call
                .result
                .as_ref()
                .and_then(|r| {
                    let t = &r.text;
                    let p = t.find('#')?;
                    let digits: String = t[p + 1..]
                        .chars()
                        .take_while(char::is_ascii_digit)
                        .collect();
                    (!digits.is_empty()).then_some(digits)
                })
                .unwrap_or_else(|| (task_ids.len() + 1).to_string());
            task_ids.push(id);
            facts.todos.push(TodoItem {
                content: subject.to_string(),
                status: "pending".into(),
            });
        }
        "TaskUpdate" => {
            let id = match call.input.get("taskId").or_else(|| call.input.get("id")) {
                Some(Value::String(s)) => s.trim_start_matches('#').to_string(),
                Some(Value::Number(n)) => n.to_string(),
                _ => return,
            };
            if let Some(k) = task_ids.iter().position(|t| *t == id) {
                if let Some(s) = str_field(call.input, &["status"]) {
                    facts.todos[k].status = s.to_string();
                }
                if let Some(s) = str_field(call.input, &["subject"]) {
                    facts.todos[k].content = s.to_string();
                }
            }
        }
        _ => {}
    }
}

fn derive_feedback_errors(facts: &mut ConversationFacts, feedback: &[Feedback<'_>], full: bool) {
    // The excerpts listed so far, found by hash (many errors and much feedback: no pass over
    // every error per line).
    let mut listed: crate::model::hash::FastSet<String> = if feedback.is_empty() {
        Default::default()
    } else {
        facts.errors.iter().map(|e| e.excerpt.clone()).collect()
    };
    for Feedback { text, order } in feedback {
        let Some(line) = error_line(text) else {
            continue;
        };
        if !listed.insert(line.clone()) {
            continue;
        }
        facts.errors.push(ErrorFacts {
            source: "feedback from the agent's hooks or tools".into(),
            excerpt: line,
            rejected: false,
            resolution: Resolution::Open,
            order: *order,
        });
    }
    order::sort_by(&mut facts.errors, &|a, b| a.order.cmp(&b.order));
    if full {
        resolve_by_later_edits(facts);
    }
}

#[cfg(test)]
mod error_word_tests {
    /// The words of [`super::has_error_word`], compared with every position.
    fn naive(text: &[u8]) -> bool {
        const WORDS: [&[u8]; 14] = [
            b"err",
            b"fail",
            b"fatal",
            b"panic",
            b"traceback",
            b"** (",
            b"exception",
            b"uncaught",
            b"unhandled",
            b"not found",
            b"no such",
            b"denied",
            b"cannot find",
            b"segmentation",
        ];
        (0..text.len()).any(|i| {
            WORDS
                .iter()
                .any(|w| text[i..].len() >= w.len() && text[i..][..w.len()].eq_ignore_ascii_case(w))
        })
    }

    #[test]
    fn only_the_first_160_characters_of_a_line_are_read() {
        // `x: command not found` (22 characters) after `n` copies of `prefix`.
        let at = |prefix: &str, n: usize| format!("{}x: command not found", prefix.repeat(n));
        // ASCII: ending at character 122 it is read, at character 182 it is not.
        assert!(super::is_error_line(&format!("{} tail", at("a", 100))));
        assert!(!super::is_error_line(&at("a", 160)));
        // Two-byte characters: 130 of them (260 bytes) still put it inside the head.
        assert!(super::is_error_line(&at("é", 130)));
        assert!(!super::is_error_line(&at("é", 150)));
        // An ASCII start followed by non-ASCII characters before character 160.
        assert!(super::is_error_line(&format!(
            "{}{}",
            "a".repeat(100),
            at("é", 30)
        )));
        assert!(!super::is_error_line(&format!(
            "{}{}",
            "a".repeat(100),
            at("é", 50)
        )));
    }

    #[test]
    fn shapes18_an_apply_patch_call_names_the_files_it_changes() {
        use serde_json::json;
        let paths = |input: serde_json::Value| {
            super::file_ops("apply_patch", &input)
                .iter()
                .map(|t| (t.path.to_string(), t.op))
                .collect::<Vec<_>>()
        };
        // The Responses API's built-in tool: its `operation`.
        assert_eq!(
            paths(json!({"type": "update_file", "path": "src/a.rs", "diff": "@@\n-a\n+b"})),
            vec![("src/a.rs".to_string(), super::FileOp::Edit)]
        );
        assert_eq!(
            paths(json!({"type": "create_file", "path": "b.md", "diff": "+hi"})),
            vec![("b.md".to_string(), super::FileOp::Write)]
        );
        // A free-form patch (a custom tool's text, or a function's `input` argument).
        let patch = "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Update File: src/a.rs\n\
                     *** Move to: src/b.rs\n@@\n-a\n+b\n*** Delete File: old.txt\n*** End Patch";
        let want = vec![
            ("new.txt".to_string(), super::FileOp::Write),
            ("src/a.rs".to_string(), super::FileOp::Edit),
            ("src/b.rs".to_string(), super::FileOp::Edit),
            ("old.txt".to_string(), super::FileOp::Edit),
        ];
        assert_eq!(paths(json!(patch)), want);
        assert_eq!(paths(json!({ "input": patch })), want);
        // Another tool's input is read as before; a patch naming no file is no file call.
        assert!(paths(json!("no patch here")).is_empty());
        assert_eq!(super::file_ops("Edit", &json!({"file_path": "x"})).len(), 1);
    }

    #[test]
    fn only_two_characters_lowercase_to_ascii() {
        for c in (0x80..=0x10FFFF).filter_map(char::from_u32) {
            let lower: String = c.to_lowercase().collect();
            if lower.chars().any(|l| l.is_ascii()) {
                assert!(
                    c == '\u{212A}' || (c == '\u{130}' && lower == "i\u{307}"),
                    "{c:?} -> {lower:?}"
                );
            }
        }
    }

    #[test]
    fn the_word_scan_finds_the_first_error_line_of_a_line_by_line_scan() {
        let pieces = [
            "error: x",
            "Error[E0308]",
            "2 failed",
            "0 failed",
            "FAILED:",
            "ok",
            "\n",
            "\r\n",
            "\n\n",
            "  ",
            "é",
            "İ",
            "\u{212A}",
            "TRACE\u{212A}BACK",
            "traceback (most recent call last)",
            "TRACEBAC\u{212A} (MOST RECENT CALL LAST)",
            "a: command not found",
            "panicked at",
            "warning: unused",
            "err",
            "fail",
            "x",
            &"y".repeat(170),
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..20_000 {
            let mut s = String::new();
            for _ in 0..6 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            let naive = s.lines().find(|l| super::is_error_line(l));
            assert_eq!(
                super::first_error_line(&s).map(str::trim),
                naive.map(str::trim),
                "{s:?}"
            );
        }
    }

    #[test]
    fn the_first_letter_dispatch_finds_what_every_word_finds() {
        let pieces = [
            "ERR",
            "Fail",
            "fatAL",
            "panic",
            "TraceBack",
            "** (",
            "exception",
            "uncaught",
            "unHandled",
            "not found",
            "no such",
            "Denied",
            "cannot find",
            "segmentation",
            "er",
            "fai",
            "no",
            "not",
            "** ",
            "x",
            " ",
            "*",
            "can",
            "seg",
            "trace",
            "de",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..5_000 {
            let mut s = String::new();
            for _ in 0..4 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            assert_eq!(
                super::has_error_word(s.as_bytes()),
                naive(s.as_bytes()),
                "{s:?}"
            );
        }
    }
}

#[cfg(test)]
mod review18_tests {
    use crate::model::messages::Message;
    use serde_json::json;

    /// An `apply_patch` conversation: a failed patch naming `n` files, then one that succeeds
    /// naming `n` others.
    fn patches(n: usize) -> Vec<Message> {
        let patch = |prefix: &str| {
            let mut p = String::from("*** Begin Patch\n");
            for k in 0..n {
                p.push_str(&format!("*** Add File: {prefix}/f{k}.txt\n+x\n"));
            }
            p.push_str("*** End Patch");
            p
        };
        Message::parse_all(json!([
            {"role": "user", "content": "apply it"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "p1", "name": "apply_patch", "input": {"input": patch("a")}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "p1", "is_error": true, "content": "error: failed"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "p2", "name": "apply_patch", "input": {"input": patch("b")}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "p2", "content": "Done!"}]},
        ]))
        .unwrap()
    }

    /// A patch naming many files is read in time linear in its length (the file list was
    /// deduplicated by a scan of the list, and each failed file re-read every later patch),
    /// and a call's description names the first few files only.
    #[test]
    fn review18_a_huge_patch_is_read_in_linear_time() {
        // (No wall-clock assertion: 1,500 files took 16.4 s before, in a debug build.)
        let m = patches(1_500);
        let facts = super::extract_facts(&m);
        assert_eq!(facts.files.len(), 3_000);
        // The last actions name the first files of a patch, and how many more.
        let last = facts.last_actions.last().unwrap();
        assert!(last.len() < 200, "{} chars", last.len());
        assert!(last.ends_with("and 1495 more files"), "{last}");
    }

    /// A failed patch is resolved by a later patch that changes the same file, and only by
    /// one after it (the resolution read per path keeps the order of the calls).
    #[test]
    fn review18_a_failed_patch_is_resolved_by_a_later_change_of_the_file() {
        let call = |id: &str, patch: &str| {
            json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": id, "name": "apply_patch", "input": {"input": patch}}]})
        };
        let result = |id: &str, error: bool| {
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": id, "is_error": error, "content": if error { "error: hunk failed" } else { "Done!" }}]})
        };
        let m = Message::parse_all(json!([
            {"role": "user", "content": "fix it"},
            call("p0", "*** Begin Patch\n*** Update File: b.rs\n@@\n-x\n+y\n*** End Patch"),
            result("p0", false),
            call("p1", "*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** Update File: b.rs\n@@\n-y\n+z\n*** End Patch"),
            result("p1", true),
            call("p2", "*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** End Patch"),
            result("p2", false),
        ]))
        .unwrap();
        let facts = super::extract_facts(&m);
        let of = |source: &str| {
            facts
                .errors
                .iter()
                .find(|e| e.source == source)
                .map(|e| e.resolution.clone())
                .unwrap()
        };
        assert_eq!(
            of("apply_patch a.rs"),
            super::Resolution::Fixed("a later apply_patch of the same file succeeded".into())
        );
        // b.rs was changed before the failure only.
        assert_eq!(of("apply_patch b.rs"), super::Resolution::Open);
    }
}
