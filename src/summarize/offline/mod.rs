//! The embedded offline summarizer: a deterministic summary built from the conversation
//! itself, with no model call (the default when no API key is given).
//!
//! It has the contract of any summarizer: [`summarize_request`] takes the Messages API
//! request body the library builds ([`crate::summarize::summary::build_summary_request`]) and
//! returns a reply text `<summary>…</summary>`, which the pipeline reads like a model's answer.
//! [`summarize_messages`] does the same from the typed messages.
//!
//! The summary has the sections of SPEC §14, filled with facts read from the conversation
//! ([`extract_facts`]):
//!
//! * every message the user wrote, verbatim (long ones cut in the middle with a marker);
//!   tool results, reminders and other text the agent added are not user messages
//!   ([`crate::summarize::facts::clean_user_text`]);
//! * every file read, created or edited (path, what was done, the new text of the last
//!   change);
//! * the commands run and how they ended; the errors met, and whether a later step fixed
//!   them (a later successful run of the same command, a later successful change of the same
//!   file);
//! * the latest todo / task list, the open items as pending tasks;
//! * the current work: the assistant's last text, its last actions and any tool call still
//!   waiting for a result.
//!
//! The reply stays within a token budget (default [`DEFAULT_BUDGET_TOKENS`], counted as the
//! rough estimate of SPEC §3: UTF-16 length / 4). When the full rendering is larger, detail
//! is given up in a fixed order: the assistant's notes and other tool calls first, then the
//! code of the last changes, the list of successful commands, the earlier summary, and only
//! then long user messages are cut shorter in the middle. Every user message (at least its
//! head) and every file path are always kept; a conversation whose user messages and paths
//! alone exceed the budget gets a summary over it.
//!
//! Same input, same output, byte for byte: nothing depends on time, randomness or hash
//! order.
//!
//! The work is in three parts: [`crate::summarize::facts`] reads the facts, [`request`] reads
//! a summary request back into messages, and `render` writes the sections.

use serde_json::Value;

use crate::measure::tokens::text_tokens;
use crate::model::messages::Message;
use crate::summarize::facts::{extract_facts, ConversationFacts};
use render::{render, LEVELS};
use request::conversation_from_request;

mod render;
pub mod request;

/// Token budget of an offline summary when the caller gives none (or 0).
pub const DEFAULT_BUDGET_TOKENS: u64 = 8_000;

/// The offline summary of `facts` within `budget_tokens` (0: [`DEFAULT_BUDGET_TOKENS`]):
/// the most detailed rendering that fits, or the least detailed one.
pub fn summarize_facts(
    facts: &ConversationFacts,
    instructions: &[String],
    budget_tokens: u64,
) -> String {
    let budget = if budget_tokens == 0 {
        DEFAULT_BUDGET_TOKENS
    } else {
        budget_tokens
    };
    let mut last = String::new();
    for limits in LEVELS {
        last = render(facts, instructions, limits);
        if text_tokens(&last) <= budget {
            return last;
        }
    }
    last
}

/// The offline summary of typed messages (either shape): the reply text
/// `<summary>…</summary>`, within `budget_tokens` (0: [`DEFAULT_BUDGET_TOKENS`]).
pub fn summarize_messages(messages: &[Message], budget_tokens: u64) -> String {
    summarize_facts(&extract_facts(messages), &[], budget_tokens)
}

/// The offline summarizer with the contract of any summarizer: takes the Messages API
/// request body the library builds and returns the reply text `<summary>…</summary>`.
///
/// The conversation is rebuilt from the request ([`conversation_from_request`]); custom
/// instructions are named in section 1 (they cannot steer a fixed summarizer). The budget
/// is `budget_tokens` (0: [`DEFAULT_BUDGET_TOKENS`]), and never more than the request's
/// `max_tokens`, as for a model.
pub fn summarize_request(request: &Value, budget_tokens: u64) -> String {
    let conv = conversation_from_request(request);
    let mut budget = if budget_tokens == 0 {
        DEFAULT_BUDGET_TOKENS
    } else {
        budget_tokens
    };
    if let Some(max) = request.get("max_tokens").and_then(Value::as_u64) {
        if max > 0 {
            budget = budget.min(max);
        }
    }
    summarize_facts(&extract_facts(&conv.messages), &conv.instructions, budget)
}

#[cfg(test)]
mod tests;
