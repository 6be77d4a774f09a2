//! What the caller's callbacks answer, read by one set of rules whatever the runtime: the
//! summarizer's response, a hook's output, `readFile`'s and `sessionMemory`'s answers and a
//! thrown error. Read through [`Source`], so the bindings hand over the JS values in place
//! and native code hands over JSON.

use crate::drive::env::{CallError, HookKind, HookOutput};
use crate::drive::options::{error_text, Source};
use crate::model::view::UsageCounts;
use crate::summarize::summary::SummaryResponse;

/// The most content blocks of a summarizer's response that are read: a summary is a few text
/// blocks; a response with more (a buggy or hostile proxy's `{"content": [0, 0, …]}`) is the
/// summarizer's failure, refused before its elements are copied — reading millions of them
/// would exhaust the WebAssembly instance's memory.
pub const MAX_SUMMARY_BLOCKS: usize = 100_000;

/// The most text of a summarizer's answer that is read, in UTF-16 code units (a JS string's
/// `length`): far more than any context window holds (a summary that long could never make
/// the conversation smaller), far less than what would exhaust the instance's memory.
pub const MAX_SUMMARY_TEXT: usize = 16 * 1024 * 1024;

fn too_long(what: &str, n: usize, max: usize) -> CallError {
    CallError::new(format!(
        "the summarizer's answer is too large: {what} ({n}; at most {max} are read)"
    ))
}

/// The length of a string `s` checked against what remains of [`MAX_SUMMARY_TEXT`] after
/// `used` code units.
fn check_text<S: Source>(s: &S, used: usize) -> Result<usize, CallError> {
    let n = s.length().unwrap_or(0);
    if used.saturating_add(n) > MAX_SUMMARY_TEXT {
        return Err(too_long(
            "its text has more code units than a summary can hold",
            used.saturating_add(n),
            MAX_SUMMARY_TEXT,
        ));
    }
    Ok(n)
}

/// What kind of value `v` is, in JavaScript's words (`typeof`, with `array` and `null`
/// told apart), for a message that says what was found where text was expected.
fn type_word<S: Source>(v: &S) -> String {
    if let Some(k) = v.builtin_kind() {
        return k;
    }
    if v.is_absent() {
        "null".into()
    } else if v.string().is_some() {
        "string".into()
    } else if v.number().is_some() {
        "number".into()
    } else if v.boolean().is_some() {
        "boolean".into()
    } else if v.is_array() {
        "array".into()
    } else {
        "object".into()
    }
}

/// The words of a Messages API `content`: a string, or the `text` of its text blocks, and
/// what was found instead of text, when something was (the first such thing: `content of
/// type number`, `content[0].text of type number`, `content[1] of type string`, `content has
/// no text block`). Each length is checked before the text is read ([`MAX_SUMMARY_BLOCKS`],
/// [`MAX_SUMMARY_TEXT`]).
fn text_of_content<S: Source>(content: &S) -> Result<(String, Option<String>), CallError> {
    if !content.is_array() {
        check_text(content, 0)?;
        return Ok(match content.string() {
            Some(s) => (s, None),
            None => (
                String::new(),
                Some(format!("content of type {}", type_word(content))),
            ),
        });
    }
    check_blocks(content)?;
    let mut out = String::new();
    let mut used = 0usize;
    let mut problem = None;
    let mut texts = 0usize;
    let blocks = content.items().unwrap_or_default();
    for (i, block) in blocks.iter().enumerate() {
        if !block.is_object() || block.is_array() {
            problem.get_or_insert_with(|| format!("content[{i}] of type {}", type_word(block)));
            continue;
        }
        if block.get("type").string().as_deref() == Some("text") {
            texts += 1;
            let text = block.get("text");
            used += check_text(&text, used)?;
            match text.string() {
                Some(t) => out.push_str(&t),
                None => {
                    problem.get_or_insert_with(|| {
                        format!("content[{i}].text of type {}", type_word(&text))
                    });
                }
            }
        }
    }
    if problem.is_none() && texts == 0 {
        problem = Some(if blocks.is_empty() {
            "an empty content".into()
        } else {
            "no text block in content".into()
        });
    }
    Ok((out, problem))
}

/// Refuses a `content` array with more than [`MAX_SUMMARY_BLOCKS`] elements.
fn check_blocks<S: Source>(content: &S) -> Result<(), CallError> {
    match content.length() {
        Some(n) if n > MAX_SUMMARY_BLOCKS => Err(too_long(
            "its `content` has more blocks than a summary can hold",
            n,
            MAX_SUMMARY_BLOCKS,
        )),
        _ => Ok(()),
    }
}

/// The `usage` of a response body; counts that are not finite and non-negative are left out
/// (the summary's own usage is informative, never a reason to fail).
fn usage_of<S: Source>(v: &S) -> Option<UsageCounts> {
    let u = v.get("usage");
    if !u.is_object() {
        return None;
    }
    let n = |k: &str| u.get(k).number().filter(|x| x.is_finite() && *x >= 0.0);
    UsageCounts::from_raw(
        [
            n("input_tokens"),
            n("cache_creation_input_tokens"),
            n("cache_read_input_tokens"),
            n("output_tokens"),
        ],
        String::new,
    )
    .ok()
}

/// The first `compaction` block of a response's `content` (the API's on-demand
/// compaction), read whole so it can be sent back byte for byte.
fn compaction_block<S: Source>(content: &S) -> Result<Option<serde_json::Value>, CallError> {
    for block in content.items().unwrap_or_default() {
        if block.get("type").string().as_deref() == Some(crate::model::messages::COMPACTION_BLOCK) {
            return block.to_json().map(Some).map_err(|e| {
                CallError::new(format!("the compaction block could not be read: {e}"))
            });
        }
    }
    Ok(None)
}

/// A summarizer's answer: a string (the summary), or a Messages API response body (`content`,
/// `stop_reason`, `usage`). Anything else is the summarizer's failure.
pub fn summary_response<S: Source>(v: &S) -> Result<SummaryResponse, CallError> {
    if !v.is_array() {
        check_text(v, 0)?;
    }
    if let Some(s) = v.string() {
        return Ok(SummaryResponse {
            text: s,
            ..Default::default()
        });
    }
    if !v.is_object() {
        return Err(CallError::new(
            "summarize must resolve to a string or a Messages API response body",
        ));
    }
    let content = v.get("content");
    // An API error body resolved instead of thrown (`fetch(…).then(r => r.json())` without a
    // status check): the Messages API's `{type: "error", error}`, OpenAI's `{error}`. Read as
    // the error it reports, so that a prompt-too-long or overloaded answer is retried as one.
    if content.is_absent()
        && v.get("text").is_absent()
        && (v.get("type").string().as_deref() == Some("error") || v.get("error").is_object())
    {
        return Err(call_error(v, false));
    }
    if content.is_absent() {
        // An AI SDK `generateText` result given as it is: `{text, finishReason, usage}`.
        let text = v.get("text");
        check_text(&text, 0)?;
        if let Some(text) = text.string() {
            return Ok(SummaryResponse {
                text,
                stop_reason: stop_reason_of(v),
                usage: usage_of(v),
                compaction: None,
                problem: None,
            });
        }
        return Err(CallError::new(if text.is_absent() {
            "the summarizer's response has no `content` (expected a Messages API response body)"
                .to_string()
        } else {
            format!(
                "the summarizer's response has no `content`, and its `text` is of type {} (expected a Messages API response body, or a string `text`)",
                type_word(&text)
            )
        }));
    }
    let (text, problem) = text_of_content(&content)?;
    Ok(SummaryResponse {
        text,
        stop_reason: stop_reason_of(v),
        usage: usage_of(v),
        compaction: compaction_block(&content)?,
        problem,
    })
}

/// Why the answer stopped, in the Messages API's words: its `stop_reason`, or the reason
/// another ecosystem's answer gives (a LangChain message's `response_metadata`, an AI SDK
/// result's `finishReason`, OpenAI's `finish_reason`, Gemini's `finishReason`), a cut for
/// length read as `max_tokens` so that a truncated summary is refused whichever form brought it.
fn stop_reason_of<S: Source>(v: &S) -> Option<String> {
    if let Some(r) = v.get("stop_reason").string() {
        return Some(r);
    }
    let meta = v.get("response_metadata");
    let reason = [&meta, v].into_iter().find_map(|o| {
        ["stop_reason", "finish_reason", "finishReason"]
            .iter()
            .find_map(|k| {
                let r = o.get(k);
                // AI SDK 5+: `{unified, raw}`.
                r.string().or_else(|| r.get("unified").string())
            })
    })?;
    Some(match reason.as_str() {
        "length" | "MAX_TOKENS" | "max_output_tokens" => "max_tokens".to_string(),
        // A content filter stopped it (OpenAI, the AI SDK, Gemini): a partial answer.
        "content_filter" | "content-filter" | "SAFETY" => "refusal".to_string(),
        _ => reason,
    })
}

/// The fields of a hook's answer that give PreCompact's instructions, the first given used.
const INSTRUCTION_KEYS: &[&str] = &[
    "instructions",
    "customInstructions",
    "newCustomInstructions",
];
/// The fields that give a message to show the user (PreCompact, PostCompact), the first given
/// used; `systemMessage` is Claude Code's hook JSON word for it.
const DISPLAY_KEYS: &[&str] = &["userDisplayMessage", "displayMessage", "systemMessage"];
/// The fields that give SessionStart's texts, all of them read.
const CONTEXT_KEYS: &[&str] = &["messages", "additionalContext", "message"];
/// Claude Code's hook JSON: `{hookSpecificOutput: {hookEventName, additionalContext}}`.
const SPECIFIC_KEY: &str = "hookSpecificOutput";
/// Claude Code's hook JSON fields that ask nothing of a compaction (`continue: true`,
/// `suppressOutput`): accepted, not read.
const QUIET_KEYS: &[&str] = &["continue", "suppressOutput"];

/// What a value is, in a few words, for a report.
fn describe<S: Source>(v: &S) -> String {
    if let Some(n) = v.number() {
        return format!("the number {n}");
    }
    if let Some(b) = v.boolean() {
        return format!("{b}");
    }
    if v.string().is_some() {
        return "a string".into();
    }
    if v.is_array() {
        return "an array".into();
    }
    if let Some(kind) = v.builtin_kind() {
        return crate::drive::options::with_article(&kind);
    }
    if v.is_object() {
        return "an object".into();
    }
    "a value of another type".into()
}

/// Reads a hook's answer: each string's and list's length checked before it is copied, and
/// what cannot be used kept in words naming the field.
struct HookReader {
    kind: HookKind,
    /// UTF-16 code units of text read so far.
    text: usize,
    problems: Vec<String>,
}

impl HookReader {
    fn too_large(&self, what: &str, n: usize, max: usize) -> CallError {
        CallError::new(format!(
            "the {} hook's answer is too large: {what} ({n}; at most {max} are read)",
            self.kind.name()
        ))
    }

    fn problem(&mut self, field: &str, what: &str) {
        self.problems.push(format!(
            "the {} hook's answer: `{field}` {what}",
            self.kind.name()
        ));
    }

    /// Counts a string's length against [`MAX_SUMMARY_TEXT`] before it is copied.
    fn count<S: Source>(&mut self, s: &S) -> Result<(), CallError> {
        self.text = self.text.saturating_add(s.length().unwrap_or(0));
        if self.text > MAX_SUMMARY_TEXT {
            return Err(self.too_large(
                "more text than a context holds",
                self.text,
                MAX_SUMMARY_TEXT,
            ));
        }
        Ok(())
    }

    /// The elements of a list, refused when more than a hook may add.
    fn list<S: Source>(&mut self, l: &S, field: &str) -> Result<Vec<S>, CallError> {
        let n = l.length().unwrap_or(0);
        if n > MAX_HOOK_MESSAGES {
            return Err(self.too_large("more messages than a hook may add", n, MAX_HOOK_MESSAGES));
        }
        match l.items() {
            Some(items) => Ok(items),
            None => {
                self.problem(field, "could not be read (an element threw): not used");
                Ok(Vec::new())
            }
        }
    }

    /// The text of `field`: a string, or the Messages API's content blocks (their text
    /// blocks' text, one per line). Absent: `None`; anything else is reported.
    fn text<S: Source>(&mut self, v: &S, field: &str) -> Result<Option<String>, CallError> {
        if v.is_absent() {
            return Ok(None);
        }
        if v.is_array() {
            let mut parts = Vec::new();
            for (i, block) in self.list(v, field)?.iter().enumerate() {
                let at = format!("{field}[{i}]");
                if block.string().is_some() {
                    self.count(block)?;
                    parts.extend(block.string());
                    continue;
                }
                match block.get("type").string().as_deref() {
                    Some("text") => {
                        parts.extend(self.text(&block.get("text"), &format!("{at}.text"))?)
                    }
                    Some(other) => self.problem(
                        &at,
                        &format!("is a `{other}` block: only text blocks are read; not used"),
                    ),
                    None => self.problem(
                        &at,
                        &format!("is {}, not a text block: not used", describe(block)),
                    ),
                }
            }
            return Ok((!parts.is_empty()).then(|| parts.join("\n")));
        }
        self.count(v)?;
        match v.string() {
            Some(s) => Ok(Some(s)),
            None => {
                self.problem(field, &format!("is {}, not text: not used", describe(v)));
                Ok(None)
            }
        }
    }

    /// One message of SessionStart's: a string, content blocks, or `{content}`.
    fn message<S: Source>(&mut self, m: &S, field: &str) -> Result<Option<String>, CallError> {
        if m.is_object() && !m.is_array() {
            let content = m.get("content");
            if content.is_absent() {
                self.problem(field, "has no `content`: not used");
                return Ok(None);
            }
            return self.text(&content, &format!("{field}.content"));
        }
        self.text(m, field)
    }

    /// SessionStart's texts of `messages`: a list of messages, or one.
    fn messages<S: Source>(&mut self, v: &S, field: &str) -> Result<Vec<String>, CallError> {
        if !v.is_array() {
            return Ok(self.message(v, field)?.into_iter().collect());
        }
        let mut out = Vec::new();
        for (i, m) in self.list(v, field)?.iter().enumerate() {
            out.extend(self.message(m, &format!("{field}[{i}]"))?);
        }
        Ok(out)
    }

    /// What this hook reads, for a report of a field it does not.
    fn reads(&self) -> &'static str {
        match self.kind {
            HookKind::PreCompact => "instructions and userDisplayMessage",
            HookKind::SessionStart => "messages and additionalContext",
            HookKind::PostCompact => "userDisplayMessage",
        }
    }

    /// The first of `keys` given that reads as text; the others given are reported (they
    /// mean the same), as are all of them when this hook does not read them (`used`).
    fn first_of<S: Source>(
        &mut self,
        v: &S,
        keys: &[&str],
        used: bool,
    ) -> Result<Option<String>, CallError> {
        let mut found: Option<(&str, String)> = None;
        for k in keys {
            let x = v.get(k);
            if x.is_absent() {
                continue;
            }
            if !used {
                let reads = self.reads();
                self.problem(k, &format!("is not used by this hook (it reads {reads})"));
                continue;
            }
            if let Some((first, _)) = &found {
                let first = *first;
                self.problem(
                    k,
                    &format!("was not used: `{first}`, which means the same, was"),
                );
                continue;
            }
            if let Some(t) = self.text(&x, k)? {
                found = Some((k, t));
            }
        }
        Ok(found.map(|(_, t)| t))
    }
}

/// A hook's output. A string is what that hook adds: PreCompact's instructions,
/// SessionStart's message, PostCompact's message to the user. An array is SessionStart's
/// messages. An object gives `instructions` (or `customInstructions`,
/// `newCustomInstructions`) to PreCompact, `userDisplayMessage` (or `displayMessage`,
/// `systemMessage`) to PreCompact and PostCompact, and `messages` (a list of strings, content
/// blocks or `{content}`, or one), `additionalContext` and `message` to SessionStart, which
/// also reads Claude Code's hook JSON (`hookSpecificOutput.additionalContext`). Text may be
/// given as content blocks (their text blocks are read).
///
/// What cannot be used (a field of the wrong type, one the hook does not read, a misspelt
/// one, a second field meaning the same) is kept in [`HookOutput::problems`], naming the
/// field, to be reported with the hook's errors; the rest is used. An answer larger than a
/// hook can mean (more than [`MAX_HOOK_MESSAGES`] messages, more text than
/// [`MAX_SUMMARY_TEXT`]) is the hook's failure, refused before it is copied.
pub fn hook_output<S: Source>(kind: HookKind, v: &S) -> Result<HookOutput, CallError> {
    let mut r = HookReader {
        kind,
        text: 0,
        problems: Vec::new(),
    };
    let mut out = HookOutput::default();
    let start = kind == HookKind::SessionStart;
    if v.is_absent() {
        return Ok(out);
    }
    // A function, a Symbol, a Date, an ArrayBuffer…: nothing a hook answers with. An Error is
    // the hook's failure, returned instead of thrown (`.catch(e => e)`): reported, its words
    // never used as text.
    if let Some(builtin) = v.builtin_kind() {
        let name = kind.name();
        out.problems.push(if builtin == "Error" {
            let (text, _) = error_text(v);
            format!("the {name} hook returned an Error (instead of throwing it): {text}; not used")
        } else {
            format!(
                "the {name} hook's answer is {}, not text or an object with the answer's fields: not used",
                crate::drive::options::with_article(&builtin)
            )
        });
        return Ok(out);
    }
    if v.is_array() {
        if start {
            out.messages = r.messages(v, "messages")?;
        } else {
            r.problems.push(format!(
                "the {} hook's answer is an array (messages, which only sessionStart adds): not used",
                kind.name()
            ));
        }
        out.problems = r.problems;
        return Ok(out);
    }
    if !v.is_object() {
        r.count(v)?;
        match v.string() {
            Some(s) => match kind {
                HookKind::PreCompact => out.instructions = Some(s),
                HookKind::SessionStart => out.messages.push(s),
                HookKind::PostCompact => out.user_display_message = Some(s),
            },
            None => r.problems.push(format!(
                "the {} hook's answer is {}, not text or an object: not used",
                kind.name(),
                describe(v)
            )),
        }
        out.problems = r.problems;
        return Ok(out);
    }
    out.instructions = r.first_of(v, INSTRUCTION_KEYS, kind == HookKind::PreCompact)?;
    out.user_display_message = r.first_of(v, DISPLAY_KEYS, !start)?;
    for k in CONTEXT_KEYS {
        let x = v.get(k);
        if x.is_absent() {
            continue;
        }
        if start {
            out.messages.extend(r.messages(&x, k)?);
        } else {
            let reads = r.reads();
            r.problem(k, &format!("is not used by this hook (it reads {reads})"));
        }
    }
    let specific = v.get(SPECIFIC_KEY);
    if specific.is_object() && !specific.is_array() {
        let context = specific.get("additionalContext");
        let field = format!("{SPECIFIC_KEY}.additionalContext");
        if !context.is_absent() {
            if start {
                out.messages.extend(r.text(&context, &field)?);
            } else {
                let reads = r.reads();
                r.problem(
                    &field,
                    &format!("is not used by this hook (it reads {reads})"),
                );
            }
        }
        match specific.keys() {
            Ok(keys) => {
                for k in keys {
                    if k != "additionalContext"
                        && k != "hookEventName"
                        && !specific.get(&k).is_absent()
                    {
                        r.problem(
                            &format!("{SPECIFIC_KEY}.{k}"),
                            "is not read by a compaction hook: not used",
                        );
                    }
                }
            }
            Err(e) => r.problem(SPECIFIC_KEY, &format!("could not be read: {}", e.message)),
        }
    } else if !specific.is_absent() {
        r.problem(
            SPECIFIC_KEY,
            &format!("is {}, not an object: not used", describe(&specific)),
        );
    }
    if v.get("continue").boolean() == Some(false) {
        r.problem(
            "continue",
            "is false (stop), which a compaction hook cannot ask: ignored",
        );
    }
    let known: Vec<&str> = [INSTRUCTION_KEYS, DISPLAY_KEYS, CONTEXT_KEYS, QUIET_KEYS]
        .concat()
        .into_iter()
        .chain([SPECIFIC_KEY])
        .collect();
    match v.keys() {
        Ok(keys) => {
            // A key set to `undefined` or `null` says nothing (`{decision: cond ? 'x' :
            // undefined}`): not reported.
            for k in keys
                .iter()
                .filter(|k| !known.contains(&k.as_str()) && !v.get(k).is_absent())
            {
                let hint = crate::model::names::likely_meant(k, &known)
                    .map(|m| format!(" (did you mean `{m}`?)"))
                    .unwrap_or_default();
                r.problem(
                    k,
                    &format!("is not a field of a hook's answer{hint}: not used"),
                );
            }
        }
        Err(e) => r.problems.push(format!(
            "the {} hook's answer: its keys could not be read: {}",
            kind.name(),
            e.message
        )),
    }
    out.problems = r.problems;
    Ok(out)
}

/// The most messages one hook's answer may add (SessionStart's context, PostCompact's
/// messages): a hook adds a few; millions (a bug, or a hostile plugin) would exhaust the
/// WebAssembly instance's memory.
pub const MAX_HOOK_MESSAGES: usize = 1_000;

/// `readFile`'s answer: the file's text, as a string or `{content}`; anything else is "not
/// available".
pub fn file_text<S: Source>(v: &S) -> Option<String> {
    v.string().or_else(|| v.get("content").string())
}

/// `sessionMemory`'s answer: the memory text, when it is a string with more than whitespace.
pub fn session_memory_text<S: Source>(v: &S) -> Option<String> {
    v.string().filter(|s| !s.trim().is_empty())
}

/// A callback's thrown error or rejection as the core sees it (without `cause`, which the
/// caller keeps): its text and HTTP status ([`error_text`]), a `retryAfterMs` the server
/// asked for, and the library's own flags (`retriesExhausted`, `contextCompactionTimeout`).
/// `aborted` says whether the caller's own signal fired: an abort a callback raised by itself
/// is an ordinary failure of that callback.
pub fn call_error<S: Source>(e: &S, aborted: bool) -> CallError {
    let (message, status) = error_text(e);
    let retry_after_ms = e
        .get("retryAfterMs")
        .number()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v as u64);
    CallError {
        status,
        message: if message.is_empty() {
            "unknown error".into()
        } else {
            message
        },
        aborted,
        retries_exhausted: e.get("retriesExhausted").boolean() == Some(true),
        timed_out: e.get("contextCompactionTimeout").boolean() == Some(true),
        retry_after_ms,
        cause: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drive::options::tests::Builtin;
    use serde_json::{json, Value};

    #[test]
    fn an_error_body_resolved_as_the_answer_is_the_error_it_reports() {
        let anthropic = json!({"type": "error", "error": {"type": "invalid_request_error",
            "message": "prompt is too long: 201000 tokens > 200000 maximum"}});
        let e = summary_response(&anthropic).unwrap_err();
        assert!(
            e.message.contains("prompt is too long: 201000 tokens"),
            "{}",
            e.message
        );
        let openai = json!({"error": {"message": "This model's maximum context length is 128000 tokens",
            "type": "invalid_request_error", "code": "context_length_exceeded"}});
        let e = summary_response(&openai).unwrap_err();
        assert!(
            e.message.contains("maximum context length"),
            "{}",
            e.message
        );
        // An answer with text or content is an answer, whatever else it carries.
        assert!(summary_response(&json!({"text": "<summary>s</summary>", "error": {}})).is_ok());
        assert!(summary_response(
            &json!({"type": "error", "content": [{"type": "text", "text": "s"}]})
        )
        .is_ok());
    }

    #[test]
    fn a_cut_for_length_reads_as_max_tokens_in_every_ecosystems_answer() {
        let stop = |v: serde_json::Value| summary_response(&v).unwrap().stop_reason;
        // A LangChain AIMessage (its fields) from Anthropic, OpenAI, Gemini.
        for meta in [
            json!({"stop_reason": "max_tokens"}),
            json!({"finish_reason": "length"}),
            json!({"finishReason": "MAX_TOKENS"}),
        ] {
            assert_eq!(
                stop(json!({"content": "cut mid-", "response_metadata": meta})).as_deref(),
                Some("max_tokens")
            );
        }
        // An AI SDK generateText result, as it is (V2 string, V3 object).
        let r = summary_response(&json!({"text": "cut mid-", "finishReason": "length"})).unwrap();
        assert_eq!(
            (r.text.as_str(), r.stop_reason.as_deref()),
            ("cut mid-", Some("max_tokens"))
        );
        assert_eq!(
            stop(json!({"text": "done", "finishReason": {"unified": "stop", "raw": "end_turn"}}))
                .as_deref(),
            Some("stop")
        );
        // The Messages API's own word wins; nothing said, nothing read.
        assert_eq!(
            stop(json!({"content": "x", "stop_reason": "end_turn", "finishReason": "length"}))
                .as_deref(),
            Some("end_turn")
        );
        assert_eq!(stop(json!({"content": "x"})), None);
        // A content filter's stop reads as a refusal (round 11).
        for meta in [
            json!({"finish_reason": "content_filter"}),
            json!({"finishReason": "SAFETY"}),
        ] {
            assert_eq!(
                stop(json!({"content": "part", "response_metadata": meta})).as_deref(),
                Some("refusal")
            );
        }
        assert_eq!(
            stop(json!({"text": "part", "finishReason": "content-filter"})).as_deref(),
            Some("refusal")
        );
    }

    /// An answer with no text says what it held instead, for the `EMPTY_SUMMARY` message.
    #[test]
    fn an_answer_without_text_says_what_was_there_instead() {
        let problem = |v: Value| summary_response(&v).unwrap().problem;
        for (v, said) in [
            (
                json!({"content": [{"type": "text", "text": 5}]}),
                "content[0].text of type number",
            ),
            (
                json!({"content": [{"type": "thinking", "thinking": "t"}, {"type": "text", "text": null}]}),
                "content[1].text of type null",
            ),
            (
                json!({"content": [{"type": "text", "text": ["a"]}]}),
                "content[0].text of type array",
            ),
            (json!({"content": 7}), "content of type number"),
            (json!({"content": {"a": 1}}), "content of type object"),
            (json!({"content": [5]}), "content[0] of type number"),
            (
                json!({"content": [{"type": "image"}]}),
                "no text block in content",
            ),
            (json!({"content": []}), "an empty content"),
        ] {
            assert_eq!(problem(v.clone()).as_deref(), Some(said), "{v}");
        }
        assert_eq!(
            problem(json!({"content": [{"type": "text", "text": ""}]})),
            None
        );
        let e = summary_response(&json!({"text": 5})).unwrap_err();
        assert!(
            e.message.contains("`text` is of type number"),
            "{}",
            e.message
        );
    }

    #[test]
    fn summaries_are_strings_or_response_bodies() {
        assert_eq!(summary_response(&json!("plain")).unwrap().text, "plain");
        let r = summary_response(&json!({
            "content": [{"type": "thinking", "thinking": "x"}, {"type": "text", "text": "a"},
                        {"type": "text", "text": "b"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 4, "cache_read_input_tokens": -1}
        }))
        .unwrap();
        assert_eq!(r.text, "ab");
        assert_eq!(r.stop_reason.as_deref(), Some("end_turn"));
        let u = r.usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.output_tokens, u.cache_read_input_tokens),
            (10, 4, 0)
        );
        assert_eq!(
            summary_response(&json!({"content": "s"})).unwrap().text,
            "s"
        );
        for bad in [
            json!(5),
            json!(null),
            json!({"body": "no content"}),
            json!({"text": 5}),
        ] {
            assert!(summary_response(&bad).is_err(), "{bad}");
        }
    }

    /// A response too large to be a summary is the summarizer's failure, refused on its
    /// lengths: more content blocks than MAX_SUMMARY_BLOCKS, or more text than
    /// MAX_SUMMARY_TEXT (one string, or text blocks together).
    #[test]
    fn answers_too_large_for_a_summary_are_refused() {
        let blocks = Value::Array(vec![json!(0); MAX_SUMMARY_BLOCKS + 1]);
        let e = summary_response(&json!({ "content": blocks })).unwrap_err();
        assert!(e.message.contains("too large"), "{}", e.message);
        let at_most = Value::Array(vec![json!({"type": "text", "text": "a"}); 3]);
        assert_eq!(
            summary_response(&json!({ "content": at_most }))
                .unwrap()
                .text,
            "aaa"
        );
        let half = "x".repeat(MAX_SUMMARY_TEXT / 2 + 1);
        let two =
            json!({"content": [{"type": "text", "text": half}, {"type": "text", "text": half}]});
        assert!(summary_response(&two).is_err());
        let long = "y".repeat(MAX_SUMMARY_TEXT + 1);
        assert!(summary_response(&json!(long)).is_err());
        assert!(summary_response(&json!({ "content": long })).is_err());
        let fits = "z".repeat(MAX_SUMMARY_TEXT);
        assert_eq!(
            summary_response(&json!(fits)).unwrap().text.len(),
            MAX_SUMMARY_TEXT
        );
    }

    #[test]
    fn hook_answers_too_large_are_refused_before_they_are_read() {
        let many = serde_json::Value::Array(vec![json!("m"); MAX_HOOK_MESSAGES + 1]);
        for v in [many.clone(), json!({ "messages": many })] {
            let e = hook_output(HookKind::SessionStart, &v).unwrap_err();
            assert!(
                e.message
                    .contains("sessionStart hook's answer is too large"),
                "{}",
                e.message
            );
        }
        let long = "y".repeat(MAX_SUMMARY_TEXT + 1);
        assert!(hook_output(HookKind::PostCompact, &json!(long)).is_err());
        assert!(hook_output(
            HookKind::SessionStart,
            &json!({ "messages": [{ "content": long }] })
        )
        .is_err());
        // An array's messages are read as `messages` are.
        assert!(hook_output(HookKind::SessionStart, &json!([{ "content": long }])).is_err());
        // Text of fields no form reads is never copied, so never refused (only reported).
        let o = hook_output(HookKind::SessionStart, &json!({ "notRead": long })).unwrap();
        assert_eq!(o.problems.len(), 1);
        let fine = serde_json::Value::Array(vec![json!("m"); MAX_HOOK_MESSAGES]);
        assert_eq!(
            hook_output(HookKind::SessionStart, &fine)
                .unwrap()
                .messages
                .len(),
            MAX_HOOK_MESSAGES
        );
    }

    /// An answer that is a built-in object (a Date, an ArrayBuffer, a WeakMap: no fields of
    /// an answer) or a value of no JSON type is reported, named once; an Error returned
    /// instead of thrown is the hook's failure, its words not used as text.
    #[test]
    fn built_in_objects_and_returned_errors_are_reported_not_used() {
        for kind in [
            HookKind::SessionStart,
            HookKind::PreCompact,
            HookKind::PostCompact,
        ] {
            for (builtin, props) in [
                ("Date", json!({})),
                ("ArrayBuffer", json!({})),
                ("WeakMap", json!({})),
                ("Symbol", Value::Null),
                ("function", Value::Null),
            ] {
                let o = hook_output(kind, &Builtin(props, Some(builtin), &[])).unwrap();
                assert_eq!(
                    o,
                    HookOutput {
                        problems: o.problems.clone(),
                        ..Default::default()
                    }
                );
                assert_eq!(o.problems.len(), 1, "{builtin}");
                let p = &o.problems[0];
                assert!(p.contains(kind.name()), "{p}");
                let named = crate::drive::options::with_article(builtin);
                assert_eq!(p.matches(&named).count(), 1, "{p}");
                assert!(!p.contains("neither"), "{p}");
            }
            // An Error's `message` is no SessionStart message.
            let error = Builtin(
                json!({"message": "ECONNREFUSED 127.0.0.1:8080"}),
                Some("Error"),
                &[],
            );
            let o = hook_output(kind, &error).unwrap();
            assert!(o.messages.is_empty() && o.instructions.is_none());
            assert_eq!(o.problems.len(), 1);
            assert!(
                o.problems[0].contains("returned an Error")
                    && o.problems[0].contains("ECONNREFUSED 127.0.0.1:8080"),
                "{}",
                o.problems[0]
            );
        }
        assert_eq!(crate::drive::options::with_article("Error"), "an Error");
        assert_eq!(
            crate::drive::options::with_article("Uint8Array"),
            "a Uint8Array"
        );
    }

    #[test]
    fn hook_outputs_in_every_form() {
        let pre = hook_output(HookKind::PreCompact, &json!("keep the schema")).unwrap();
        assert_eq!(pre.instructions.as_deref(), Some("keep the schema"));
        // Keys set to null (JS `undefined` as well) say nothing: not reported.
        let quiet = hook_output(
            HookKind::PreCompact,
            &json!({"instructions": "x", "decision": null, "reason": null,
                "hookSpecificOutput": {"additionalContext": null, "other": null}}),
        )
        .unwrap();
        assert_eq!(quiet.instructions.as_deref(), Some("x"));
        assert!(quiet.problems.is_empty(), "{:?}", quiet.problems);
        let start = hook_output(HookKind::SessionStart, &json!("welcome back")).unwrap();
        assert_eq!(start.messages, vec!["welcome back"]);
        let post = hook_output(HookKind::PostCompact, &json!("compacted")).unwrap();
        assert_eq!(post.user_display_message.as_deref(), Some("compacted"));
        let list = hook_output(HookKind::SessionStart, &json!(["a", 1, "b"])).unwrap();
        assert_eq!(list.messages, vec!["a", "b"]);
        assert_eq!(
            list.problems,
            vec![
                "the sessionStart hook's answer: `messages[1]` is the number 1, not text: not used"
            ]
        );
        let o = hook_output(
            HookKind::PreCompact,
            &json!({"newCustomInstructions": "n", "displayMessage": "d"}),
        )
        .unwrap();
        assert_eq!(o.instructions.as_deref(), Some("n"));
        assert_eq!(o.user_display_message.as_deref(), Some("d"));
        assert!(o.problems.is_empty(), "{:?}", o.problems);
        let o = hook_output(
            HookKind::SessionStart,
            &json!({"messages": ["m", {"content": "c"}, {"other": 1}]}),
        )
        .unwrap();
        assert_eq!(o.messages, vec!["m", "c"]);
        assert_eq!(
            o.problems,
            vec!["the sessionStart hook's answer: `messages[2]` has no `content`: not used"]
        );
        // The first of the words for instructions is used; another given is reported, as is
        // a field this hook does not read.
        let first = hook_output(
            HookKind::PreCompact,
            &json!({"instructions": "i", "customInstructions": "c", "additionalContext": "x"}),
        )
        .unwrap();
        assert_eq!(first.instructions.as_deref(), Some("i"));
        assert!(first.messages.is_empty());
        assert_eq!(first.problems.len(), 2, "{:?}", first.problems);
        assert!(first.problems[0].contains("`customInstructions` was not used: `instructions`"));
        assert!(first.problems[1].contains("`additionalContext` is not used by this hook"));
        assert_eq!(
            hook_output(HookKind::PostCompact, &json!(null)).unwrap(),
            HookOutput::default()
        );
    }

    /// Every answer of the hostile probe: what reads sensibly is read (content blocks of
    /// text, Claude Code's hook JSON, `messages` as one string), the rest is reported naming
    /// the hook and the field (before, each left no trace).
    #[test]
    fn hook_answers_are_read_or_reported_never_dropped() {
        let read = |kind, v: Value| hook_output(kind, &v).unwrap();
        use HookKind::*;
        let o = read(
            SessionStart,
            json!({"messages": [{"role": "user", "content": [{"type": "text", "text": "CTX-1"}, {"type": "image", "source": {}}]}]}),
        );
        assert_eq!(o.messages, vec!["CTX-1"]);
        assert_eq!(
            o.problems,
            vec!["the sessionStart hook's answer: `messages[0].content[1]` is a `image` block: only text blocks are read; not used"]
        );
        let o = read(
            SessionStart,
            json!({"continue": true, "suppressOutput": false,
                   "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "CTX-2"}}),
        );
        assert_eq!(
            (o.messages, o.problems.len()),
            (vec!["CTX-2".to_string()], 0)
        );
        let o = read(SessionStart, json!({"messages": "CTX-3"}));
        assert_eq!(o.messages, vec!["CTX-3"]);
        // All of SessionStart's texts are read.
        let o = read(
            SessionStart,
            json!({"messages": ["a"], "additionalContext": "b"}),
        );
        assert_eq!(o.messages, vec!["a", "b"]);
        let o = read(SessionStart, json!({"messages": [{"content": 12345}]}));
        assert!(o.messages.is_empty());
        assert_eq!(
            o.problems,
            vec!["the sessionStart hook's answer: `messages[0].content` is the number 12345, not text: not used"]
        );
        let o = read(PreCompact, json!({"instructions": 42}));
        assert_eq!(o.instructions, None);
        assert_eq!(
            o.problems,
            vec![
                "the preCompact hook's answer: `instructions` is the number 42, not text: not used"
            ]
        );
        // A wrong type does not hide a good synonym.
        let o = read(
            PreCompact,
            json!({"instructions": 42, "customInstructions": "c"}),
        );
        assert_eq!(o.instructions.as_deref(), Some("c"));
        assert_eq!(o.problems.len(), 1);
        let o = read(PreCompact, json!({"instruction": "CTX-7 keep the schema"}));
        assert_eq!(
            o.problems,
            vec!["the preCompact hook's answer: `instruction` is not a field of a hook's answer (did you mean `instructions`?): not used"]
        );
        let o = read(PostCompact, json!({"userDisplayMesage": "CTX-8"}));
        assert!(
            o.problems[0].contains("did you mean `userDisplayMessage`?"),
            "{:?}",
            o.problems
        );
        // Claude Code's `systemMessage` is a message for the user.
        let o = read(PostCompact, json!({"systemMessage": "shown"}));
        assert_eq!(o.user_display_message.as_deref(), Some("shown"));
        // Text blocks are text everywhere.
        let o = read(
            PreCompact,
            json!({"instructions": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}),
        );
        assert_eq!(o.instructions.as_deref(), Some("a\nb"));
        // What a hook does not read, and answers of no use at all.
        let o = read(
            PreCompact,
            json!({"hookSpecificOutput": {"additionalContext": "x", "other": 1}, "continue": false}),
        );
        assert_eq!(o.problems.len(), 3, "{:?}", o.problems);
        for (kind, v) in [
            (PreCompact, json!(["a"])),
            (PostCompact, json!(7)),
            (SessionStart, json!(true)),
            (SessionStart, json!({"hookSpecificOutput": "x"})),
            (PostCompact, json!({"messages": ["m"]})),
            (SessionStart, json!({"userDisplayMessage": "d"})),
        ] {
            let o = read(kind, v.clone());
            assert_eq!(o.problems.len(), 1, "{v}: {:?}", o.problems);
            assert!(o.problems[0].starts_with(&format!("the {} hook's answer", kind.name())));
            assert!(
                o.instructions.is_none()
                    && o.user_display_message.is_none()
                    && o.messages.is_empty()
            );
        }
    }

    #[test]
    fn file_and_memory_answers() {
        assert_eq!(file_text(&json!("text")).as_deref(), Some("text"));
        assert_eq!(file_text(&json!({"content": "c"})).as_deref(), Some("c"));
        assert_eq!(file_text(&json!(null)), None);
        assert_eq!(session_memory_text(&json!("  \n ")), None);
        assert_eq!(
            session_memory_text(&json!("notes")).as_deref(),
            Some("notes")
        );
    }

    #[test]
    fn errors_keep_their_words_status_and_flags() {
        let e = call_error(
            &json!({"message": "overloaded", "status": 529, "retryAfterMs": 1500,
                    "retriesExhausted": true}),
            false,
        );
        assert_eq!(e.message, "overloaded");
        assert_eq!(e.status, Some(529));
        assert_eq!(e.retry_after_ms, Some(1500));
        assert!(e.retries_exhausted && !e.aborted && !e.timed_out);
        let t = call_error(
            &json!({"contextCompactionTimeout": true, "retryAfterMs": -1}),
            true,
        );
        assert!(t.timed_out && t.aborted);
        assert_eq!(t.retry_after_ms, None);
        assert_eq!(t.message, "unknown error");
        assert_eq!(
            call_error(&json!("plain words"), false).message,
            "plain words"
        );
    }
}
