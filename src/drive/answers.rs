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

/// The words of a Messages API `content`: a string, or the `text` of its text blocks. Each
/// length is checked before the text is read ([`MAX_SUMMARY_BLOCKS`], [`MAX_SUMMARY_TEXT`]).
fn text_of_content<S: Source>(content: &S) -> Result<String, CallError> {
    if !content.is_array() {
        check_text(content, 0)?;
        return Ok(content.string().unwrap_or_default());
    }
    check_blocks(content)?;
    let mut out = String::new();
    let mut used = 0usize;
    for block in content.items().unwrap_or_default() {
        if block.get("type").string().as_deref() == Some("text") {
            let text = block.get("text");
            used += check_text(&text, used)?;
            if let Some(t) = text.string() {
                out.push_str(&t);
            }
        }
    }
    Ok(out)
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
            });
        }
        return Err(CallError::new(
            "the summarizer's response has no `content` (expected a Messages API response body)",
        ));
    }
    Ok(SummaryResponse {
        text: text_of_content(&content)?,
        stop_reason: stop_reason_of(v),
        usage: usage_of(v),
        compaction: compaction_block(&content)?,
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
        _ => reason,
    })
}

/// A hook's output. A string is what that hook adds: PreCompact's instructions,
/// SessionStart's message, PostCompact's message to the user. An array is messages. An object
/// gives `instructions` (or `customInstructions`, `newCustomInstructions`),
/// `userDisplayMessage` (or `displayMessage`) and `messages` (strings or `{content}`), else
/// one `additionalContext` (or `message`).
///
/// An answer larger than a hook can mean (more than [`MAX_HOOK_MESSAGES`] messages, more text
/// than [`MAX_SUMMARY_TEXT`]) is the hook's failure, refused before it is copied.
pub fn hook_output<S: Source>(kind: HookKind, v: &S) -> Result<HookOutput, CallError> {
    let too_large = |what: &str, n: usize, max: usize| {
        CallError::new(format!(
            "the {} hook's answer is too large: {what} ({n}; at most {max} are read)",
            kind.name()
        ))
    };
    // One pass: each list's length and each string's length are checked before it is copied.
    let mut text = 0usize;
    let mut read = |s: &S| -> Result<Option<String>, CallError> {
        if !s.is_array() {
            text = text.saturating_add(s.length().unwrap_or(0));
        }
        if text > MAX_SUMMARY_TEXT {
            return Err(too_large(
                "more text than a context holds",
                text,
                MAX_SUMMARY_TEXT,
            ));
        }
        Ok(s.string())
    };
    let list = |l: &S| -> Result<Vec<S>, CallError> {
        let n = l.length().unwrap_or(0);
        if n > MAX_HOOK_MESSAGES {
            return Err(too_large(
                "more messages than a hook may add",
                n,
                MAX_HOOK_MESSAGES,
            ));
        }
        Ok(l.items().unwrap_or_default())
    };
    let mut out = HookOutput::default();
    if !v.is_array() {
        if let Some(s) = read(v)? {
            match kind {
                HookKind::PreCompact => out.instructions = Some(s),
                HookKind::SessionStart => out.messages.push(s),
                HookKind::PostCompact => out.user_display_message = Some(s),
            }
            return Ok(out);
        }
    } else {
        for x in list(v)? {
            out.messages.extend(read(&x)?);
        }
        return Ok(out);
    }
    let mut first = |keys: &[&str]| -> Result<Option<String>, CallError> {
        for k in keys {
            if let Some(t) = read(&v.get(k))? {
                return Ok(Some(t));
            }
        }
        Ok(None)
    };
    out.instructions = first(&[
        "instructions",
        "customInstructions",
        "newCustomInstructions",
    ])?;
    out.user_display_message = first(&["userDisplayMessage", "displayMessage"])?;
    let messages = v.get("messages");
    if messages.is_array() {
        for x in list(&messages)? {
            let t = match read(&x)? {
                Some(t) => Some(t),
                None => read(&x.get("content"))?,
            };
            out.messages.extend(t);
        }
    } else if let Some(t) = first(&["additionalContext", "message"])? {
        out.messages.push(t);
    }
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
    use serde_json::{json, Value};

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
        // Text of fields no form reads is never copied, so never refused.
        assert!(hook_output(HookKind::SessionStart, &json!([{ "content": long }])).is_ok());
        let fine = serde_json::Value::Array(vec![json!("m"); MAX_HOOK_MESSAGES]);
        assert_eq!(
            hook_output(HookKind::SessionStart, &fine)
                .unwrap()
                .messages
                .len(),
            MAX_HOOK_MESSAGES
        );
    }

    #[test]
    fn hook_outputs_in_every_form() {
        let pre = hook_output(HookKind::PreCompact, &json!("keep the schema")).unwrap();
        assert_eq!(pre.instructions.as_deref(), Some("keep the schema"));
        let start = hook_output(HookKind::SessionStart, &json!("welcome back")).unwrap();
        assert_eq!(start.messages, vec!["welcome back"]);
        let post = hook_output(HookKind::PostCompact, &json!("compacted")).unwrap();
        assert_eq!(post.user_display_message.as_deref(), Some("compacted"));
        let list = hook_output(HookKind::SessionStart, &json!(["a", 1, "b"])).unwrap();
        assert_eq!(list.messages, vec!["a", "b"]);
        let o = hook_output(
            HookKind::PreCompact,
            &json!({"newCustomInstructions": "n", "displayMessage": "d",
                    "messages": ["m", {"content": "c"}, {"other": 1}]}),
        )
        .unwrap();
        assert_eq!(o.instructions.as_deref(), Some("n"));
        assert_eq!(o.user_display_message.as_deref(), Some("d"));
        assert_eq!(o.messages, vec!["m", "c"]);
        let first = hook_output(
            HookKind::PreCompact,
            &json!({"instructions": "i", "customInstructions": "c", "additionalContext": "x"}),
        )
        .unwrap();
        assert_eq!(first.instructions.as_deref(), Some("i"));
        assert_eq!(first.messages, vec!["x"]);
        assert_eq!(
            hook_output(HookKind::PostCompact, &json!(null)).unwrap(),
            HookOutput::default()
        );
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
