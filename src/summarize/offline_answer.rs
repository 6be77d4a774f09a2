//! The offline summarizer's answer as a Messages API response body, so that it can stand
//! wherever a model's summarizer does (`offlineSummarizer()` in JS).

use serde_json::{json, Value};

use crate::measure::tokens::text_tokens;
use crate::summarize::offline::summarize_request;

/// The model name the offline summarizer's responses carry.
pub const OFFLINE_MODEL: &str = "context-compaction-offline";

/// What the offline summarizer answers to a summary request.
#[derive(Clone, Debug, PartialEq)]
pub struct OfflineAnswer {
    /// The reply text (`<summary>…</summary>`), also what a streaming caller receives.
    pub text: String,
    /// The Messages API response body: one text block, `stop_reason: "end_turn"`, and a
    /// usage estimated from the request and the reply.
    pub body: Value,
}

/// The offline summarizer's answer to `request` (a Messages API request body) within
/// `budget_tokens` (see [`summarize_request`]).
pub fn offline_answer(request: &Value, budget_tokens: u64) -> OfflineAnswer {
    let text = summarize_request(request, budget_tokens);
    let body = json!({
        "id": "offline",
        "type": "message",
        "role": "assistant",
        "model": OFFLINE_MODEL,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {
            "input_tokens": text_tokens(&request.to_string()),
            "output_tokens": text_tokens(&text),
        },
    });
    OfflineAnswer { text, body }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_a_response_body_with_the_summary() {
        let request = json!({
            "model": "m", "max_tokens": 20000, "system": "s",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Please fix the parser in src/parse.rs"}]}]
        });
        let a = offline_answer(&request, 0);
        assert!(a.text.contains("<summary>"), "{}", a.text);
        assert_eq!(a.body["content"][0]["text"], Value::String(a.text.clone()));
        assert_eq!(a.body["stop_reason"], "end_turn");
        assert_eq!(a.body["role"], "assistant");
        assert_eq!(a.body["model"], OFFLINE_MODEL);
        assert_eq!(
            a.body["usage"]["output_tokens"].as_u64(),
            Some(text_tokens(&a.text))
        );
        assert_eq!(
            a.body["usage"]["input_tokens"].as_u64(),
            Some(text_tokens(&request.to_string()))
        );
    }
}
