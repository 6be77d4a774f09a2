//! Full compaction (SPEC §7, all twelve steps), driven through the [`Environment`], and the
//! finishing steps it shares with session-memory compaction
//! ([`crate::drive::session_memory`]). Nothing is committed until every step succeeded: the
//! result is a value the caller applies; the caller's messages are never touched.

use serde_json::{json, Map, Value};
use std::borrow::Cow;

use crate::drive::api_compaction::{self, OnDemand};
use crate::drive::env::{Environment, HookKind, ProgressEvent};
pub use crate::drive::failure::CompactError;
use crate::drive::failure::{check_abort, checkpoint};
use crate::drive::pinned::{self, Pinned};
use crate::drive::retry::RetryPolicy;
use crate::drive::summary_call::{
    fit_summary_window, prompt_tokens, request_as_messages, request_summary, Retries,
};
use crate::measure::calibration::{Calibration, Fit};
use crate::measure::thresholds::{
    auto_compact_threshold, context_window, context_window_for_model, ContextWindowSource,
    WARNING_THRESHOLD_BUFFER_TOKENS,
};
use crate::measure::tokens::{
    active_start, estimate_all, estimate_range, learned_and_estimated, text_tokens_counted,
    token_count_counted, token_count_with_estimation, with_calibration, CountedMessages,
    TextCounter,
};
use crate::model::config::Config;
use crate::model::error::{Error, ErrorCode};
use crate::model::messages::{Kind, Message};
use crate::model::shape::Shape;
use crate::model::view::UsageCounts;
use crate::summarize::summary;
use crate::transforms::boundary::{self, BoundaryInput, Trigger};
use crate::transforms::restore::{self, FileSnapshot, SkillInfo};
use crate::transforms::strip;

/// A running background agent, announced again after compaction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AsyncAgent {
    /// Agent id.
    pub id: String,
    /// What it is doing.
    pub description: String,
    /// Its status (`running`, …).
    pub status: String,
}

/// The latest real user request after `start` (a main-chain user message with text and no
/// tool results; not meta, not an earlier summary, not what Claude Code writes for a slash
/// command or an interruption), kept verbatim by a full compaction so the current task
/// reaches the model in the user's own words.
pub fn last_user_request(messages: &[Message], start: usize) -> Option<usize> {
    use crate::model::messages::{Block, Content};
    // Claude Code's lines for a slash command (`/model`, `/exit`: its name, then its local
    // output) and for an interrupted turn: the user's doing, but no request to the model.
    // Nor an earlier summary in an API shape, which has no `isCompactSummary` flag (after a
    // swap, or a compaction that kept no request, it is the latest user text): kept, it
    // would stay beside every later summary and grow the context each time.
    let request = |t: &str| {
        let t = t.trim_start();
        !t.is_empty()
            && !t.starts_with("<command-name>")
            && !t.starts_with("<local-command-")
            && !t.starts_with("[Request interrupted by user")
            && !t.starts_with(summary::SUMMARY_MESSAGE_INTRO)
    };
    (start..messages.len()).rev().find(|&i| {
        let m = &messages[i];
        if m.kind() != Kind::User
            || m.is_sidechain()
            || m.is_compact_summary()
            || matches!(m.is_meta, Some(Some(true)))
        {
            return false;
        }
        match m.content() {
            Some(Content::Text(t)) => request(t),
            Some(Content::Blocks(bs)) => {
                bs.iter().all(|b| !matches!(b, Block::ToolResult(_)))
                    && bs
                        .iter()
                        .any(|b| matches!(b, Block::Text(t) if request(&t.text)))
            }
            None => false,
        }
    })
}

/// The data of a compaction's `context` (the callbacks are the [`Environment`]).
#[derive(Clone, Debug, Default)]
pub struct CompactContext {
    /// The main model.
    pub model: String,
    /// The model that writes the summary (default: the main model).
    pub summary_model: Option<String>,
    /// Configuration (explicit over environment defaults).
    pub config: Config,
    /// The agent's read-file state, snapshotted before anything else happens.
    pub read_file_state: Vec<FileSnapshot>,
    /// The current plan, re-attached after compaction.
    pub plan: Option<String>,
    /// Whether plan mode is on (its instructions are re-attached).
    pub plan_mode: bool,
    /// Skills invoked in the session, re-attached within budget.
    pub invoked_skills: Vec<SkillInfo>,
    /// Tools discovered before compaction (announced again; recorded in the boundary).
    pub discovered_tools: Vec<String>,
    /// Agents available (announced again).
    pub agents: Vec<String>,
    /// MCP server instructions (announced again).
    pub mcp_instructions: Vec<String>,
    /// Background agents still running.
    pub async_agents: Vec<AsyncAgent>,
    /// Content that must survive every compaction verbatim and exactly once.
    pub pinned: Vec<Pinned>,
    /// Keep the latest user request verbatim on every path (see
    /// [`CompactOptions::keep_last_user_message`]).
    pub keep_last_user_message: bool,
    /// Ask the Messages API's on-demand compaction for the summary (the summarizer offers
    /// it and the conversation is Anthropic messages); see [`crate::drive::api_compaction`].
    pub on_demand_compaction: bool,
    /// What the usage seen so far taught (a `Compactor`'s, which also saw the messages of
    /// earlier compactions); `None`: learned from the messages compacted.
    pub calibration: Option<Calibration>,
    /// The line the caller gave back (`context.calibration`: an earlier compaction result's),
    /// for a stateless call whose messages no longer hold the usage it was learned from;
    /// [`Self::calibration`] (a `Compactor`'s own) comes first.
    pub calibration_given: Option<Fit>,
    /// Summarize a conversation too long for the summarizer's window in parts, oldest first,
    /// instead of dropping its oldest rounds (`context.summarizeInParts`; see
    /// [`crate::drive::parts`]). Off by default: SPEC §8 drops rounds.
    pub summarize_in_parts: bool,
    /// The count of the messages to compact that the caller already made, as its decisions
    /// made it (its tokenizer, the usage it holds, what its request sends besides them): a
    /// `Compactor`'s running count, or the count `autoCompactIfNeeded` decided with. The
    /// decision to compact and the pre-compaction count are then that count instead of the
    /// estimate ([`CompactContext::pre_count`]); `None`: estimated from the messages.
    pub counted: Option<u64>,
    /// Tokens every request sends besides the messages, as the caller gave them (`system`,
    /// `toolDefinitions`): part of the new context's estimate when no learned line
    /// ([`Self::calibration`]) accounts for them.
    pub preamble_tokens: u64,
}

impl CompactContext {
    /// The model the summary request names: `summaryModel`, else the main model.
    pub fn request_model(&self) -> String {
        self.summary_model
            .clone()
            .unwrap_or_else(|| self.model.clone())
    }

    /// The window the summary request for `summary_model` is sized to:
    /// `config.summaryContextWindow`, else the summary model's window as a request reserving
    /// its summary output can use it. The window the configuration gives is taken instead
    /// where the model's own is a guess (a model the table does not know: a local 32K model,
    /// as main model or named by a summarizer), or, for the main model, where it is larger
    /// (`enable1mContext`, a 1M `contextWindow`). A smaller `contextWindow` of a known model is
    /// often a way to compact earlier: its summary model keeps its own window. (The summarizer is told it,
    /// `contextWindow`: past 200,000 tokens, `anthropicSummarizer` asks for the 1M context.)
    pub fn summary_window(&self, summary_model: &str) -> u64 {
        if let Some(w) = self.config.summary_context_window {
            return w as u64;
        }
        let own = context_window(summary_model, &Config::default());
        let configured = context_window(summary_model, &self.config);
        let guessed = own.source == ContextWindowSource::Default;
        let w = if guessed || (summary_model == self.model && configured.tokens > own.tokens) {
            configured
        } else {
            own
        };
        w.for_request(summary::summary_max_tokens(summary_model))
    }

    /// The size of `messages` before the compaction, as reported (`preCompactTokenCount`):
    /// [`Self::counted`] when the caller counted them, else [`token_count_with_estimation`]
    /// (at the line given back, [`Self::calibration_given`], where no usage anchors it).
    pub fn pre_count(&self, messages: &[Message]) -> Result<u64, Error> {
        match self.counted {
            Some(n) => Ok(n),
            None => Ok(with_calibration(
                token_count_with_estimation(messages)?,
                self.calibration_given,
            )
            .total),
        }
    }

    /// The size of `messages` before the compaction, both ways: as reported
    /// ([`Self::pre_count`]) and as the "smaller than before" check compares it with the
    /// compacted conversation's estimate: the estimate of the messages the context holds
    /// (after the last boundary), with no usage in it. Usage and the caller's count hold what
    /// no message shows (a system prompt, tools): against them a compaction that grew the
    /// conversation would pass (a tiny conversation under a large system prompt), or one that
    /// shrank it fail. One estimate of the messages, in the tokens of the caller's tokenizer
    /// (`counter`) when it gave one, as the compacted conversation's is.
    pub fn size_before(
        &self,
        messages: &[Message],
        counter: Option<&dyn TextCounter>,
    ) -> Result<SizeBefore, Error> {
        let from = active_start(messages)?;
        let end = messages.len();
        // The learned line is read in the same pass as the estimate when the usage seen is
        // not already given ([`Self::calibration`]).
        // The line given back ([`Self::calibration_given`]) stands in only where the messages'
        // own usage teaches none: it was learned from usage they no longer hold, and what they
        // do hold is newer.
        let given = self.calibration_given;
        let (fit, estimated) = match (&self.calibration, counter) {
            (Some(c), Some(counter)) => (
                c.fit(),
                estimate_range(&CountedMessages::new(messages, counter), from..end)?,
            ),
            (Some(c), None) => (c.fit(), estimate_range(messages, from..end)?),
            (None, Some(counter)) => {
                let counted = CountedMessages::new(messages, counter);
                let (learned, estimated) = learned_and_estimated(&counted, end, from)?;
                (learned.fit().or(given), estimated)
            }
            (None, None) => {
                let (learned, estimated) = learned_and_estimated(messages, end, from)?;
                (learned.fit().or(given), estimated)
            }
        };
        let reported = match self.counted {
            Some(n) => n,
            None => {
                with_calibration(
                    token_count_counted(messages, counter)?,
                    self.calibration_given,
                )
                .total
            }
        };
        Ok(SizeBefore {
            reported,
            estimated,
            fit,
        })
    }

    /// Fits the context to messages of `shape`: the API's compaction block has no place in
    /// another ecosystem's messages, so their compaction uses the summary prompt whatever the
    /// summarizer offers.
    pub fn for_shape(&mut self, shape: Shape) {
        if shape.is_foreign() {
            self.on_demand_compaction = false;
        }
    }
}

/// [`CompactContext::size_before`]: what is reported (`preCompactTokenCount`) and what the
/// compacted conversation must come out below (its estimate), and the line learned from the
/// usage seen, read in the same pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SizeBefore {
    /// [`CompactContext::pre_count`].
    pub reported: u64,
    /// The estimate of the messages the context holds, with no usage in it.
    pub estimated: u64,
    /// The line learned from the usage seen ([`CompactContext::calibration`], else the usage
    /// of the messages against their estimate in the caller's tokens when it gave a
    /// tokenizer), for the size of what the next request sends; `None` when nothing is
    /// learned.
    pub fit: Option<Fit>,
}

/// Options of `compactConversation`.
#[derive(Clone, Debug, Default)]
pub struct CompactOptions {
    /// Tell the model to carry on without asking questions (also implied by auto).
    pub suppress_follow_up_questions: bool,
    /// Extra summary instructions (`/compact <instructions>`); they go into the summary
    /// request only, never into the compacted conversation.
    pub custom_instructions: Option<String>,
    /// Automatic compaction (trigger `auto`) rather than manual.
    pub is_auto_compact: bool,
    /// Information about a repeated compaction, passed through to hooks.
    pub recompaction_info: Option<Value>,
    /// How transient summarizer failures are retried (`retryBaseMs`, default 1,000 ms).
    pub retry: RetryPolicy,
    /// The PreCompact hooks already ran on this path (auto-compaction), with this outcome.
    pub pre_compact: Option<PreCompactOutcome>,
    /// Append to the summary a short list of the files, user messages and errors it does
    /// not mention (see [`crate::summarize::loss`]), so nothing the agent touched is silently dropped.
    pub append_missing: bool,
    /// Keep the latest user request verbatim after the summary (`messagesToKeep`), so the
    /// current task reaches the model in the user's own words.
    pub keep_last_user_message: bool,
    /// The compaction was announced (`start`) on this call's path already (auto-compaction
    /// and reactive compaction before their PreCompact hooks; a swap of a summary written
    /// ahead, refused for its size, or its catch-up): one `start` per compaction the caller
    /// waits for.
    pub announced: bool,
}

/// A file restored after compaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoredItem {
    /// Path (files) or name (skills).
    pub name: String,
    /// Tokens it takes.
    pub tokens: u64,
    /// Whether it was cut to fit.
    pub truncated: bool,
}

/// A hook that threw, or answered with something that could not be used (a field of the
/// wrong type, one it does not read, a misspelt one): reported, and compaction went on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookFailure {
    /// `preCompact`, `sessionStart` or `postCompact`.
    pub hook: &'static str,
    /// What it threw, or what of its answer was not used and why.
    pub message: String,
}

/// `CompactionResult` (SPEC §7).
#[derive(Clone, Debug)]
pub struct CompactionResult {
    /// The `compact_boundary` line.
    pub boundary_marker: Message,
    /// The summary message(s).
    pub summary_messages: Vec<Message>,
    /// Restored files, skills, plan, tool/agent announcements.
    pub attachments: Vec<Message>,
    /// Messages from SessionStart hooks.
    pub hook_results: Vec<Message>,
    /// Indices (into the input) of the messages kept verbatim after the summary.
    pub messages_to_keep: Vec<usize>,
    /// A message for the user from the hooks.
    pub user_display_message: Option<String>,
    /// Context size before compaction.
    pub pre_compact_token_count: u64,
    /// Tokens the summary call consumed (its input + output).
    pub post_compact_token_count: u64,
    /// Estimated size of the compacted context: the next request's, with what the usage seen
    /// teaches ([`calibration`](Self::calibration)) when it teaches anything.
    pub true_post_compact_token_count: u64,
    /// The line learned from the usage seen (system prompt and tools, tokens per estimated
    /// token): where no usage anchors the count of the compacted conversation, the count is
    /// this line at its estimate. `None` when the usage seen teaches nothing yet.
    pub calibration: Option<Fit>,
    /// Usage of the summary call, when reported.
    pub compaction_usage: Option<UsageCounts>,
    /// The summary text.
    pub summary: String,
    /// What triggered the compaction.
    pub trigger: Trigger,
    /// Files restored.
    pub restored_files: Vec<RestoredItem>,
    /// Skills restored.
    pub restored_skills: Vec<RestoredItem>,
    /// The paths of `readFileState` whose content the kept messages hold (a file the kept
    /// latest turn read): still in the context, so a compaction does not clear their reads
    /// from the caller's state (and does not restore them).
    pub kept_reads: Vec<String>,
    /// Hooks that threw.
    pub hook_failures: Vec<HookFailure>,
    /// Prompt-too-long retries used.
    pub ptl_retries: u32,
    /// Transient retries used.
    pub transient_retries: u32,
    /// Summary calls whose answers made the summary: 1, or more when the conversation was
    /// summarized in parts ([`crate::drive::parts`]); 0 with no model call.
    pub summary_parts: u32,
    /// Whether the summary came from session memory (no model call).
    pub from_session_memory: bool,
    /// What the compacted part had that the summary does not mention (before any
    /// `append_missing`).
    pub loss_report: crate::summarize::loss::LossReport,
    /// Indices into `context.pinned` of the items added after the summary (those already
    /// present in kept messages are not added twice).
    pub pinned_added: Vec<usize>,
    /// Those of [`Self::pinned_added`] whose message was rewritten: a tool call or result it
    /// held had no partner beside it and is text now (see [`crate::drive::pinned`]).
    pub pinned_rewritten: Vec<usize>,
    /// The index (into the input) of the provider's opaque compaction the context started
    /// with (an OpenAI Responses `compaction` item, [`Message::holds_opaque_compaction`]):
    /// no summarizer can read it, so it is kept, unchanged, in front of the summary and the
    /// provider still reads what it stands for. `None` when there is none (or it is kept
    /// among [`Self::messages_to_keep`]).
    pub kept_in_front: Option<usize>,
    /// The tool changes of the Messages API `compaction` block the context started with,
    /// when the compaction summarized that block's message: a system message of its
    /// `tool_changes` entries ([`Message::tool_changes_message`]), first among the summary
    /// messages when built (after [`Self::kept_in_front`]'s place). Summarized with the rest,
    /// the tools the block's range added would no longer be offered and those it withdrew
    /// would be offered again. `None` when there are none, for transcripts (a Claude Code
    /// line has no such form) and when the summary is itself the API's compaction block
    /// (whose own `tool_changes` cover them).
    pub tool_changes_in_front: Option<Message>,
}

impl CompactionResult {
    /// The compacted conversation: boundary, summary, kept messages, attachments, hook
    /// results (SPEC §7 `buildPostCompactMessages`).
    pub fn post_compact_messages(&self, input: &[Message]) -> Vec<Message> {
        let keep: Vec<Message> = self
            .messages_to_keep
            .iter()
            .map(|&i| input[i].clone())
            .collect();
        let system = boundary::leading_system(keep.as_slice()).unwrap_or(0);
        let summary: Vec<Message> = self
            .kept_in_front
            .map(|i| input[i].clone())
            .into_iter()
            .chain(self.tool_changes_in_front.iter().cloned())
            .chain(self.summary_messages.iter().cloned())
            .collect();
        boundary::build_post_compact(
            &self.boundary_marker,
            &summary,
            &keep,
            system,
            &self.attachments,
            &self.hook_results,
        )
    }
}

/// Reports `start` (the context's size before the compaction): the first event of every
/// compaction the caller waits for, reported once on its path — before its PreCompact hooks,
/// and not again by the session-memory or full compaction that path then runs.
pub(crate) fn announce<E: Environment + ?Sized>(env: &E, tokens: u64) {
    env.progress(&ProgressEvent {
        tokens: Some(tokens),
        ..ProgressEvent::phase("start")
    });
}

/// Whether compacted messages of at least `lower` estimated tokens fail the checks [`finish`]
/// ends with: not smaller than the messages they replace (`size_before`), or, for an automatic
/// compaction (`threshold` given), not below the auto-compact threshold. Asked before
/// anything is restored (restoration only adds), so that such a compaction reads no file and
/// runs no hook.
pub(crate) fn fails_size_checks(lower: u64, size_before: u64, threshold: Option<u64>) -> bool {
    lower >= size_before || threshold.is_some_and(|t| lower >= t)
}

/// Reports a phase, then stops if the caller aborted meanwhile.
fn step<E: Environment + ?Sized>(env: &E, phase: &'static str) -> Result<(), CompactError> {
    env.progress(&ProgressEvent::phase(phase));
    check_abort(env, phase)
}

/// Whether the conversation is Claude Code transcript lines (output keeps that shape): see
/// [`Message::written_as_lines`].
fn is_transcript(messages: &[Message]) -> bool {
    Message::written_as_lines(messages)
}

fn last_uuid(messages: &[Message]) -> Option<String> {
    messages
        .iter()
        .rev()
        .find_map(|m| m.uuid().map(str::to_string))
}

fn session_fields(messages: &[Message]) -> Map<String, Value> {
    crate::model::messages::session_template(messages)
        .map(|i| boundary::session_fields_of(&messages[i]))
        .unwrap_or_default()
}

/// A context attachment (plan, tools, agents…) in the conversation's shape.
fn context_attachment(kind: &str, text: String, transcript: bool, uuid: String) -> Message {
    if !transcript {
        return Message::api_user_text(text);
    }
    Message::from_value(
        json!({"type": "attachment", "uuid": uuid, "isSidechain": false,
               "attachment": {"type": kind, "content": text}}),
        "attachment",
    )
    .expect("attachment line is well-formed")
}

fn hook_message(text: String, transcript: bool, uuid: String) -> Message {
    if !transcript {
        return Message::api_user_text(text);
    }
    Message::from_value(
        json!({"type": "user", "uuid": uuid, "isSidechain": false, "isMeta": true,
               "message": {"role": "user", "content": text}}),
        "hook result",
    )
    .expect("hook line is well-formed")
}

/// Runs a hook; a throwing hook is recorded in `failures` and treated as returning nothing,
/// and what its answer had that could not be used ([`HookOutput::problems`]) is recorded
/// there too.
///
/// [`HookOutput::problems`]: crate::drive::env::HookOutput::problems
async fn run_hook<E: Environment + ?Sized>(
    env: &E,
    kind: HookKind,
    input: Value,
    failures: &mut Vec<HookFailure>,
) -> Result<crate::drive::env::HookOutput, CompactError> {
    let Some(fut) = env.run_hook(kind, input) else {
        return Ok(Default::default());
    };
    match fut.await {
        Ok(mut out) => {
            failures.extend(out.problems.drain(..).map(|message| HookFailure {
                hook: kind.name(),
                message,
            }));
            Ok(out)
        }
        Err(e) if e.aborted => Err(CompactError::from_call(
            ErrorCode::Aborted,
            &format!("aborted in the {} hook", kind.name()),
            e,
        )),
        Err(e) => {
            failures.push(HookFailure {
                hook: kind.name(),
                message: e.message,
            });
            Ok(Default::default())
        }
    }
}

fn estimate_messages<E: Environment + ?Sized>(
    env: &E,
    messages: &[Message],
) -> Result<u64, CompactError> {
    Ok(estimate_all(messages, env.text_counter())?)
}

/// The estimated tokens restored files and skills may take so that the next request (what
/// the compaction keeps, `before_restoring` estimated tokens, and what every request sends
/// besides the messages) stays below the warning line. A threshold of 20,000 tokens or less
/// (a small window's: 32K with 4K of output) has no such line: there, below half the
/// threshold, which leaves the other half for the work to come.
fn restoration_room(ctx: &CompactContext, fit: Option<&Fit>, before_restoring: u64) -> u64 {
    room_line(ctx, fit).saturating_sub(before_restoring + 1)
}

/// The estimated tokens of messages a compaction may leave so that the next request (those
/// messages and what every request sends besides them) stays below the warning line, or
/// below half the threshold where there is no such line (a threshold of 20,000 tokens or
/// less): the room the compaction makes for the work to come. In estimated tokens of
/// messages: the learned line's overhead and ratio, else the system prompt and tools given.
pub(crate) fn room_line(ctx: &CompactContext, fit: Option<&Fit>) -> u64 {
    let threshold = auto_compact_threshold(&ctx.model, &ctx.config);
    let line = match threshold.checked_sub(WARNING_THRESHOLD_BUFFER_TOKENS) {
        Some(line) if line > 0 => line,
        // Up to the threshold itself, the next turn would compact again at once.
        _ => threshold / 2,
    };
    fit.and_then(|f| f.estimated_within(line))
        .unwrap_or_else(|| line.saturating_sub(ctx.preamble_tokens))
}

/// Below this many tokens of room for a summary ([`summary_length_instruction`]), the summary
/// request says how long the summary may be: a 64K window's room is above it, a 32K one's
/// (about 3,700 tokens) below.
pub const SUMMARY_LENGTH_HINT_BELOW: u64 = 10_000;

/// An instruction for the summary's length, on windows too small for a summary of the usual
/// size (5,000–10,000 tokens): half of [`room_line`] (the other half for the messages kept,
/// restored files and the work to come), in words (about 3 words every 4 tokens). `None` when
/// that room is [`SUMMARY_LENGTH_HINT_BELOW`] tokens or more. A summary the model writes
/// longer than its room would leave the conversation at the threshold after each compaction.
pub(crate) fn summary_length_instruction(
    ctx: &CompactContext,
    fit: Option<&Fit>,
) -> Option<String> {
    let room = room_line(ctx, fit) / 2;
    (room < SUMMARY_LENGTH_HINT_BELOW).then(|| {
        format!(
            "Keep the summary under {} words: the conversation continues in a small context window, and a longer summary would leave no room for the work that follows.",
            (room * 3 / 4).max(100)
        )
    })
}

/// Steps 5–9: restored files and skills, context announcements, SessionStart hooks.
#[allow(clippy::too_many_arguments)]
async fn build_attachments<E: Environment + ?Sized>(
    env: &E,
    ctx: &CompactContext,
    kept: &[Message],
    transcript: bool,
    failures: &mut Vec<HookFailure>,
    result_files: &mut Vec<RestoredItem>,
    (result_skills, kept_reads): (&mut Vec<RestoredItem>, &mut Vec<String>),
    before_hooks: &dyn Fn(&[Message]) -> Result<(), CompactError>,
    room: u64,
) -> Result<(Vec<Message>, Vec<Message>), CompactError> {
    step(env, "restoring")?;
    let snapshot = &ctx.read_file_state;
    // The files whose content the kept messages show are not restored; the reads of those
    // they hold whole stay in the caller's `readFileState` (the agent still sees what it
    // read). A prefix or a short content found in a kept text is no proof of that: a file
    // holding `1` is "shown" by any text with a 1 in it. The kept texts are prepared only
    // when there is a file to look for.
    let mut present = Vec::new();
    kept_reads.clear();
    if snapshot.iter().any(|f| f.content.is_some()) {
        let text_refs = restore::kept_texts(kept);
        let in_kept = restore::KeptContent::new(&text_refs);
        for f in snapshot {
            let Some(c) = f.content.as_deref() else {
                continue;
            };
            if in_kept.contains_file(c) {
                present.push(f.path.as_str());
                if in_kept.holds_whole(c) {
                    kept_reads.push(f.path.clone());
                }
            }
        }
    }
    let present = |path: &str| present.contains(&path);
    let chosen = restore::select_files(snapshot, &present);
    let mut files = Vec::new();
    for k in chosen {
        let f = &snapshot[k];
        if restore::is_binary_path(&f.path) {
            continue;
        }
        let content = if env.has_read_file() {
            check_abort(env, "reading files")?;
            match env.read_file(&f.path).await {
                Ok(c) => c,
                Err(e) if e.aborted => {
                    return Err(CompactError::from_call(
                        ErrorCode::Aborted,
                        "aborted while reading files",
                        e,
                    ))
                }
                Err(_) => None, // unreadable now: skipped
            }
        } else {
            f.content.clone()
        };
        if let Some(c) = content {
            if !restore::is_probably_binary(&c) {
                files.push((f.path.clone(), c));
            }
        }
    }
    let mut attachments = Vec::new();
    // In the caller's tokens when it gave a tokenizer, as every other count here.
    let counted =
        |text: &str| crate::measure::tokens::text_tokens_counted(text, env.text_counter());
    let measure = restore::Measure(
        env.text_counter()
            .map(|_| &counted as &restore::TokensOf<'_>),
    );
    // Restored files and skills together take no more than `room`.
    let mut room = room;
    for f in restore::budget_files_measured(files, &restore::FileBudget::within(room), measure)? {
        room = room.saturating_sub(f.tokens);
        result_files.push(RestoredItem {
            name: f.path.clone(),
            tokens: f.tokens,
            truncated: f.truncated,
        });
        let uuid = env.new_uuid();
        attachments.push(restore::file_attachment_message(
            &f,
            transcript,
            Some(&uuid),
        ));
    }
    for a in &ctx.async_agents {
        attachments.push(context_attachment(
            "async_agent",
            format!(
                "A background agent is still running: {} ({}), status: {}.",
                a.description, a.id, a.status
            ),
            transcript,
            env.new_uuid(),
        ));
    }
    if let Some(plan) = ctx.plan.as_deref().filter(|p| !p.trim().is_empty()) {
        attachments.push(context_attachment(
            "plan",
            format!(
                "The current plan, as it stood before the conversation was compacted:\n\n{plan}"
            ),
            transcript,
            env.new_uuid(),
        ));
    }
    if ctx.plan_mode {
        attachments.push(context_attachment(
            "plan_mode",
            "Plan mode is still on: research and plan only; do not edit files or run commands that change anything until the user approves the plan.".to_string(),
            transcript,
            env.new_uuid(),
        ));
    }
    for s in restore::budget_skills_measured(
        &ctx.invoked_skills,
        &restore::SkillBudget::within(room),
        measure,
    )? {
        result_skills.push(RestoredItem {
            name: s.name.clone(),
            tokens: s.tokens,
            truncated: s.truncated,
        });
        let uuid = env.new_uuid();
        attachments.push(restore::skill_attachment_message(
            &s,
            transcript,
            Some(&uuid),
        ));
    }
    // Announced against an empty history: everything is announced again.
    if !ctx.discovered_tools.is_empty() {
        attachments.push(context_attachment(
            "deferred_tools",
            format!(
                "Tools available on request: {}.",
                ctx.discovered_tools.join(", ")
            ),
            transcript,
            env.new_uuid(),
        ));
    }
    if !ctx.agents.is_empty() {
        attachments.push(context_attachment(
            "agent_listing",
            format!("Agents available:\n{}", ctx.agents.join("\n")),
            transcript,
            env.new_uuid(),
        ));
    }
    for m in &ctx.mcp_instructions {
        attachments.push(context_attachment(
            "mcp_instructions",
            m.clone(),
            transcript,
            env.new_uuid(),
        ));
    }
    // A check that needs the attachments (the swap's bound) runs before any hook does.
    before_hooks(&attachments)?;
    step(env, "sessionStartHook")?;
    let out = run_hook(
        env,
        HookKind::SessionStart,
        json!({"source": "compact", "model": ctx.model}),
        failures,
    )
    .await?;
    let hook_results = out
        .messages
        .into_iter()
        .filter(|t| !t.trim().is_empty())
        .map(|t| hook_message(t, transcript, env.new_uuid()))
        .collect();
    Ok((attachments, hook_results))
}

/// Links the lines the library wrote into one `parentUuid` chain (transcript shape only).
fn chain_new_lines(after: &str, lines: &mut [Message]) {
    let mut parent = after.to_string();
    for l in lines.iter_mut() {
        if !l.is_transcript() {
            continue;
        }
        l.extra
            .insert("parentUuid".into(), Value::String(parent.clone()));
        if let Some(u) = l.uuid() {
            parent = u.to_string();
        }
    }
}

/// Messages stripped of their media between two checkpoints.
const STRIP_SLICE: usize = 256;

/// `compactConversation` (SPEC §7): summarizes the conversation and returns what replaces
/// it. On any failure or abort, returns the error and nothing else changed.
pub async fn compact_conversation<E: Environment + ?Sized>(
    messages: &[Message],
    ctx: &CompactContext,
    options: &CompactOptions,
    env: &E,
) -> Result<CompactionResult, CompactError> {
    if ctx.config.disable_compact == Some(true) {
        return Err(CompactError::new(
            ErrorCode::CompactDisabled,
            "compaction is disabled (disableCompact / DISABLE_COMPACT)",
        ));
    }
    let trigger = if options.is_auto_compact {
        Trigger::Auto
    } else {
        Trigger::Manual
    };
    // Between the long passes over the conversation, checkpoints let the caller's event loop
    // run, so an abort (or Ctrl-C) takes effect during a large compaction's own work.
    checkpoint(env, "counting the tokens").await?;
    let SizeBefore {
        reported: pre_tokens,
        estimated: size_before,
        fit,
    } = ctx.size_before(messages, env.text_counter())?;
    if !options.announced {
        announce(env, pre_tokens);
    }
    checkpoint(env, "starting").await?;
    // 1. PreCompact hooks (unless the caller's path already ran them).
    let pre = match &options.pre_compact {
        Some(p) => p.clone(),
        None => {
            pre_compact_hooks(
                env,
                ctx,
                trigger,
                options.custom_instructions.as_deref(),
                pre_tokens,
                json!({"recompactionInfo": options.recompaction_info}),
            )
            .await?
        }
    };
    let failures = pre.failures.clone();
    let mut instructions: Vec<String> = options.custom_instructions.iter().cloned().collect();
    instructions.extend(pre.instructions.clone());
    instructions.extend(summary_length_instruction(ctx, fit.as_ref()));

    let start = active_start(messages)?;
    let summary_model = ctx.request_model();
    let keep_last = options.keep_last_user_message || ctx.keep_last_user_message;
    let mut retries = Retries::default();
    // The API's on-demand compaction, when the summarizer offers it (api_compaction.rs).
    if ctx.on_demand_compaction && !is_transcript(messages) {
        let last_request = if keep_last {
            last_user_request(messages, start)
        } else {
            None
        };
        let cut = api_compaction::cut_point(messages, start, last_request);
        match api_compaction::on_demand_summary(
            env,
            &summary_model,
            messages,
            start,
            cut,
            &instructions,
            &options.retry,
            &mut retries,
        )
        .await?
        {
            OnDemand::Done {
                block,
                text,
                kept,
                usage,
            } => {
                step(env, "summarized")?;
                let loss_report = crate::summarize::loss::loss_report(&messages[start..cut], &text);
                let post_compact_token_count =
                    match usage.map(|u| u.input_total() + u.output_tokens) {
                        Some(t) if t > 0 => t,
                        // The API reports usage 0 for the compaction: estimated.
                        _ => {
                            estimate_messages(env, &messages[start..cut])?
                                + text_tokens_counted(&text, env.text_counter())?
                        }
                    };
                let block_message = Message::from_value(
                    json!({"role": "assistant", "content": [block]}),
                    "the compaction block",
                )?;
                return finish(
                    env,
                    messages,
                    ctx,
                    Finish {
                        summary_text: text,
                        summary_message: Some(block_message),
                        loss_report,
                        kept,
                        trigger,
                        auto: options.is_auto_compact,
                        suppress_follow_up_questions: options.suppress_follow_up_questions,
                        pre_tokens,
                        pre_display: pre.user_display_message,
                        failures,
                        usage,
                        post_compact_token_count,
                        retries,
                        from_session_memory: false,
                        summary_parts: 1,
                        size_before,
                        fit,
                        preemptive_bound: None,
                        refusal: None,
                    },
                )
                .await;
            }
            OnDemand::Fallback(reason) => env.progress(&ProgressEvent {
                detail: Some(reason),
                ..ProgressEvent::phase("fallbackSummary")
            }),
        }
    }

    // 2–4. What is summarized (the part after the last boundary, without the system
    // messages that open it, which are kept; media and re-announced attachments stripped),
    // and the summary request.
    let lead_end = boundary::leading_system_from(messages, start)?;
    let to_summarize = summary_input(env, &messages[lead_end..]).await?;
    let (summary_text, usage, request, summary_parts) = summarize_messages(
        env,
        ctx,
        &summary_model,
        to_summarize,
        fit,
        &instructions,
        &options.retry,
        &mut retries,
    )
    .await?;
    step(env, "summarized")?;

    let post_compact_token_count = match usage {
        Some(u) => u.input_total() + u.output_tokens,
        None => {
            estimate_messages(env, &request_as_messages(&request))?
                + text_tokens_counted(&summary_text, env.text_counter())?
        }
    };
    checkpoint(env, "checking the summary").await?;
    let loss_report = crate::summarize::loss::loss_report(&messages[start..], &summary_text);
    checkpoint(env, "finishing").await?;
    let summary_text = if options.append_missing {
        crate::summarize::loss::append_missing(&summary_text, &loss_report)
    } else {
        summary_text
    };
    finish(
        env,
        messages,
        ctx,
        Finish {
            summary_text,
            summary_message: None,
            loss_report,
            kept: kept_by_full_compaction(messages, start, keep_last)?,
            trigger,
            auto: options.is_auto_compact,
            suppress_follow_up_questions: options.suppress_follow_up_questions,
            pre_tokens,
            pre_display: pre.user_display_message,
            failures,
            usage,
            post_compact_token_count,
            retries,
            from_session_memory: false,
            summary_parts,
            size_before,
            fit,
            preemptive_bound: None,
            refusal: None,
        },
    )
    .await
}

/// What a full compaction keeps verbatim after its summary (ascending): the latest user
/// request when asked, and a trailing assistant turn whose tool calls still wait for their
/// results ([`boundary::pending_turn`]), so the results the agent appends next follow their
/// calls. (The leading system messages and pinned pairs are added by [`finish`].)
fn kept_by_full_compaction(
    messages: &[Message],
    start: usize,
    keep_last: bool,
) -> Result<Vec<usize>, Error> {
    let mut kept: Vec<usize> = if keep_last {
        last_user_request(messages, start).into_iter().collect()
    } else {
        Vec::new()
    };
    if let Some(first) = boundary::pending_turn(messages, start)? {
        kept.retain(|&i| i < first);
        kept.extend(first..messages.len());
    }
    Ok(kept)
}

/// Whether the kept messages (`kept`, ascending indices into `messages`) end with the whole
/// assistant turn whose tool calls still wait for their results ([`boundary::pending_turn`]).
fn ends_pending(messages: &[Message], kept: &[usize]) -> Result<bool, Error> {
    if kept.last() != Some(&(messages.len().wrapping_sub(1))) {
        return Ok(false);
    }
    let start = active_start(messages)?;
    Ok(boundary::pending_turn(messages, start)?
        .is_some_and(|first| (first..messages.len()).all(|i| kept.binary_search(&i).is_ok())))
}

/// Steps 2–3: what a summary is made of — `active` with media described and re-announced
/// attachments left out. `NOTHING_TO_COMPACT` when no user or assistant message is left.
pub(crate) async fn summary_input<'a, E: Environment + ?Sized>(
    env: &E,
    active: &'a [Message],
) -> Result<Cow<'a, [Message]>, CompactError> {
    // Media is looked for message by message: in slices, with a checkpoint between two.
    let mut has_media = false;
    for slice in active.chunks(STRIP_SLICE) {
        checkpoint(env, "stripping media").await?;
        if slice.iter().any(has_media_to_strip) {
            has_media = true;
            break;
        }
    }
    checkpoint(env, "stripping attachments").await?;
    let to_summarize = if !has_media && strip::reinjected_attachments(active)?.is_empty() {
        // Nothing to strip: the messages themselves, not a copy.
        Cow::Borrowed(active)
    } else {
        let mut stripped = Vec::with_capacity(active.len());
        for slice in active.chunks(STRIP_SLICE) {
            checkpoint(env, "stripping media").await?;
            stripped.extend(strip::strip_media_described(slice)?);
        }
        Cow::Owned(strip::without_reinjected_attachments(stripped)?)
    };
    if !to_summarize.iter().any(was_said) {
        return Err(CompactError::new(
            ErrorCode::NothingToCompact,
            "there is no conversation to summarize",
        ));
    }
    Ok(to_summarize)
}

/// Whether the model saw `m`: a main-chain user or assistant message with content (a
/// sub-agent's lines and empty messages are never sent). A conversation with none has nothing
/// to summarize: no summarizer is asked.
pub fn was_said(m: &Message) -> bool {
    matches!(m.kind(), Kind::User | Kind::Assistant)
        && !m.is_sidechain()
        && m.content().is_some_and(|c| !c.is_empty())
}

/// Whether [`strip::strip_images`] has an edit for `m`: a user message with an image or
/// document block, also inside a tool result's content. Read from the blocks directly (no
/// structure of every message built to find none).
fn has_media_to_strip(m: &Message) -> bool {
    use crate::model::messages::{Block, Content, ToolResultContent};
    let media = |b: &Block| matches!(b, Block::Image(_) | Block::Document(_));
    if m.kind() != Kind::User {
        return false;
    }
    let Some(Content::Blocks(blocks)) = m.content() else {
        return false;
    };
    blocks.iter().any(|b| match b {
        Block::ToolResult(r) => matches!(
            r.content.as_ref().and_then(|c| c.as_ref()),
            Some(ToolResultContent::Blocks(inner)) if inner.iter().any(media)
        ),
        b => media(b),
    })
}

/// Step 4: the summary request for `to_summarize` — in parts when the context asks for it
/// ([`crate::drive::parts`]), else fitted to the window and sent with prompt-too-long
/// truncation. `fit`, the line learned from the usage seen, sizes the request in the model's
/// tokens where the conversation runs above its estimate (dense code and JSON). Returns the
/// text, the usage, the (last) request and the number of parts.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn summarize_messages<E: Environment + ?Sized>(
    env: &E,
    ctx: &CompactContext,
    summary_model: &str,
    to_summarize: Cow<'_, [Message]>,
    fit: Option<Fit>,
    instructions: &[String],
    retry: &RetryPolicy,
    retries: &mut Retries,
) -> Result<(String, Option<UsageCounts>, summary::SummaryRequest, u32), CompactError> {
    ctx.config.check_summary_window()?;
    let max_tokens = summary::summary_max_tokens(summary_model);
    let window = ctx.summary_window(summary_model);
    if ctx.summarize_in_parts {
        // Parts are cut by the estimate: the window in its measure (the ratio learned).
        let p = crate::drive::parts::summarize_in_parts(
            env,
            summary_model,
            &to_summarize,
            crate::drive::summary_call::in_estimate(window, fit),
            instructions,
            retry,
            retries,
        )
        .await?;
        return Ok((p.text, p.usage, p.request, p.parts));
    }
    // In the caller's tokens when it gave a tokenizer, as the request's messages are.
    let instruction_tokens = prompt_tokens(summary_model, instructions, env.text_counter())?;
    let reserve = summary::summary_output_reserve(max_tokens, window);
    let (fitted, rendered, input) =
        fit_summary_window(env, to_summarize, window, reserve, instruction_tokens, fit).await?;
    checkpoint(env, "summarizing").await?;
    let (text, usage, request) = request_summary(
        env,
        summary_model,
        fitted,
        Some(rendered),
        instructions,
        summary::summary_max_tokens_within(max_tokens, window, input),
        reserve,
        retry,
        retries,
    )
    .await?;
    Ok((text, usage, request, 1))
}

/// What the finishing steps need from the summarizing part.
pub(crate) struct Finish {
    pub summary_text: String,
    /// The message that carries the summary when it is not the library's summary message
    /// (the API's compaction block, in an assistant message).
    pub summary_message: Option<Message>,
    pub loss_report: crate::summarize::loss::LossReport,
    /// Indices of the messages kept verbatim after the summary (ascending).
    pub kept: Vec<usize>,
    pub trigger: Trigger,
    pub auto: bool,
    pub suppress_follow_up_questions: bool,
    pub pre_tokens: u64,
    pub pre_display: Option<String>,
    pub failures: Vec<HookFailure>,
    pub usage: Option<UsageCounts>,
    pub post_compact_token_count: u64,
    pub retries: Retries,
    pub from_session_memory: bool,
    /// Summary calls whose answers made the summary (see [`CompactionResult::summary_parts`]).
    pub summary_parts: u32,
    /// The estimate of the messages the compaction replaces ([`SizeBefore::estimated`]):
    /// the compacted messages' estimate must be below it, or nothing is committed (and for an
    /// automatic compaction, [`Self::auto`], below the auto-compaction threshold).
    pub size_before: u64,
    /// The line learned from the usage seen ([`SizeBefore::fit`]).
    pub fit: Option<Fit>,
    /// A summary written ahead: the most its complete compacted context may be, as a multiple
    /// of the synchronous path's (see [`crate::drive::bound::post_compact_fits`]),
    /// checked once the attachments are known and before any hook runs.
    pub preemptive_bound: Option<f64>,
    /// Where a refusal for that bound leaves its sizes (see [`crate::drive::bound::Refusal`]).
    pub refusal: Option<crate::drive::bound::Refusal>,
}

/// How many of `messages` are sent to the model.
pub(crate) fn sent_count(messages: &[Message]) -> Result<usize, Error> {
    let mut n = 0;
    for i in 0..messages.len() {
        n += usize::from(crate::measure::tokens::is_sent(messages, i)?);
    }
    Ok(n)
}

/// Steps 5–12: restoration, SessionStart hooks, boundary, summary message, the size check,
/// PostCompact hooks.
pub(crate) async fn finish<E: Environment + ?Sized>(
    env: &E,
    messages: &[Message],
    ctx: &CompactContext,
    mut f: Finish,
) -> Result<CompactionResult, CompactError> {
    let transcript = is_transcript(messages);
    // Kept besides what the path chose: the system messages that open the conversation (the
    // app's instructions, not history), those that change the tool set, and the pinned halves
    // of tool pairs with their partners.
    let start = active_start(messages)?;
    let mut kept = f.kept.clone();
    let lead_end = boundary::leading_system_from(messages, start)?;
    kept.extend(start..lead_end);
    // And the system messages that change the tool set (tools added or withdrawn midway):
    // summarized, the tool set would fall back to the request's `tools`.
    kept.extend((lead_end..messages.len()).filter(|&i| messages[i].changes_tools()));
    kept.extend(pinned::kept_for_pins(&ctx.pinned, messages, start)?);
    kept.sort_unstable();
    kept.dedup();
    // Not the turns of a branch the chain from the leaf leaves out (a rewind's): kept after
    // the summary, where the chain no longer reaches them, they would be read as the
    // conversation's (their tool calls a second time).
    kept.retain(|&i| !boundary::of_abandoned_branch(&messages[i]));
    f.kept = kept;
    let kept_owned: Vec<Message> = f.kept.iter().map(|&i| messages[i].clone()).collect();
    let kept = kept_owned.as_slice();
    let mut restored_files = Vec::new();
    let mut restored_skills = Vec::new();
    let mut kept_reads = Vec::new();
    let fit = f.fit;
    let summary_tokens = text_tokens_counted(
        &summary::summary_message_text(&f.summary_text, f.auto, f.suppress_follow_up_questions),
        env.text_counter(),
    )?;
    let preemptive_bound = f.preemptive_bound;
    let refusal = f.refusal.clone();
    let bound = |attachments: &[Message]| -> Result<(), CompactError> {
        let Some(ratio) = preemptive_bound else {
            return Ok(());
        };
        let sizes = crate::drive::bound::PostCompactSizes {
            summary: summary_tokens,
            kept: estimate_messages(env, kept)?,
            attachments: estimate_messages(env, attachments)?,
        };
        // Nor one that leaves the next request at or above the auto-compact threshold.
        let below = crate::drive::bound::swap_below_threshold(
            &sizes,
            fit.as_ref(),
            ctx.preamble_tokens,
            auto_compact_threshold(&ctx.model, &ctx.config),
        );
        if below && crate::drive::bound::post_compact_fits(&sizes, fit.as_ref(), ratio) {
            Ok(())
        } else {
            if let Some(r) = &refusal {
                r.set(Some((sizes, fit)));
            }
            Err(crate::drive::bound::not_applicable(
                &sizes,
                fit.as_ref(),
                ratio,
            ))
        }
    };
    // Restoration adds no more than the compaction frees: the compacted messages must stay
    // smaller than those they replace, and a short conversation that read a long file would
    // otherwise fail for the file's sake.
    let before_restoring = summary_tokens + estimate_messages(env, kept)?;
    // A compaction whose summary and kept messages already fail the size checks below (what
    // restoration adds only makes them larger; one token of rounding spared) restores
    // nothing: no file is read and no SessionStart hook runs for a result that is not
    // committed (a session memory's, refused so, is followed by the full compaction, which
    // would run them again). A provider's compaction message is counted as a message, not
    // as its text: checked once built only; a swap's bound, which restoration checks, is
    // refused as such (the caller then runs today's path).
    let threshold = f
        .auto
        .then(|| auto_compact_threshold(&ctx.model, &ctx.config));
    let doomed = f.summary_message.is_none()
        && f.preemptive_bound.is_none()
        && fails_size_checks(before_restoring.saturating_sub(1), f.size_before, threshold);
    let room = f.size_before.saturating_sub(before_restoring + 1);
    // Nor does it take the room the compaction made for the work to come: the next request
    // stays below the warning line (the auto-compact threshold less 20,000 tokens). On a
    // 200K window that line is far above the SPEC budgets; on a small window (a 64K model:
    // threshold 31,000) 25,000 tokens of files would otherwise land the context above the
    // threshold it was compacted for, and it would be compacted again at once.
    let room = room.min(restoration_room(ctx, fit.as_ref(), before_restoring));
    let (mut attachments, mut hook_results) = if doomed {
        Default::default()
    } else {
        build_attachments(
            env,
            ctx,
            kept,
            transcript,
            &mut f.failures,
            &mut restored_files,
            (&mut restored_skills, &mut kept_reads),
            &bound,
            room,
        )
        .await?
    };

    // 10. The boundary and the summary message.
    let fields = session_fields(messages);
    let boundary_uuid = env.new_uuid();
    let timestamp = env.now_iso();
    // The last message the compaction replaced (kept ones are not replaced).
    let last_before = (0..messages.len())
        .rev()
        .filter(|&i| !f.kept.contains(&i) && !boundary::of_abandoned_branch(&messages[i]))
        .find_map(|i| messages[i].uuid().map(str::to_string))
        .or_else(|| last_uuid(messages));
    let text =
        summary::summary_message_text(&f.summary_text, f.auto, f.suppress_follow_up_questions);
    let summary_uuid = env.new_uuid();
    let mut summary_messages = vec![match f.summary_message.take() {
        Some(m) => m,
        None => summary::summary_message(
            &text,
            transcript,
            &summary_uuid,
            &boundary_uuid,
            &timestamp,
            &fields,
        ),
    }];
    // Pinned content: after the summary, exactly once (not when a kept message has it).
    let pinned::AfterSummary {
        messages: pinned_messages,
        added: pinned_added,
        rewritten: pinned_rewritten,
    } = pinned::after_summary(&ctx.pinned, kept, transcript, &summary_uuid, || {
        env.new_uuid()
    });
    summary_messages.extend(pinned_messages);
    let mut boundary_marker = boundary::create_compact_boundary(&BoundaryInput {
        trigger: f.trigger,
        pre_tokens: f.pre_tokens,
        last_uuid: last_before,
        pre_compact_discovered_tools: ctx.discovered_tools.clone(),
        uuid: boundary_uuid.clone(),
        timestamp: timestamp.clone(),
        session_fields: fields.clone(),
        // Everything kept verbatim between the summary and the new lines: pinned messages,
        // then the kept part. The counters read `keptMessages` as sent messages (progress,
        // system and sub-agent lines kept beside them carry no usage and are not counted).
        kept_messages: sent_count(&summary_messages[1..])? + sent_count(kept)?,
    });
    boundary::continue_conversation(
        messages,
        std::iter::once(&mut boundary_marker)
            .chain(&mut summary_messages)
            .chain(&mut attachments)
            .chain(&mut hook_results),
    );
    let n_attach = attachments.len();
    let mut new_lines = std::mem::take(&mut attachments);
    new_lines.append(&mut hook_results);
    let chain_from = kept
        .iter()
        .rev()
        .find_map(|m| m.uuid().map(str::to_string))
        .unwrap_or_else(|| summary_uuid.clone());
    chain_new_lines(&chain_from, &mut new_lines);
    let mut hook_results: Vec<Message> = new_lines.split_off(n_attach);
    let mut attachments = new_lines;
    // A kept turn whose tool calls still wait for their results ends the conversation: the
    // results the agent appends next must follow their calls directly (the Messages API and
    // OpenAI refuse anything between them). In messages, what the compaction adds then goes
    // before the kept part, after the summary (and pinned messages), so that
    // `buildPostCompactMessages` stays in its order. Transcript lines are read along their
    // chain, where the appended results follow their calls whatever comes before them.
    if !transcript && ends_pending(messages, &f.kept)? {
        summary_messages.append(&mut attachments);
        summary_messages.append(&mut hook_results);
    }

    // The provider's opaque compaction the context started with stays in front (unless kept);
    // so does the one closing the `/responses/compact` window the context starts with.
    let start = active_start(messages)?;
    let front = if start < messages.len() && messages[start].holds_opaque_compaction() {
        Some(start)
    } else if start == 0 {
        crate::model::messages::compact_window_end(messages)
    } else {
        None
    };
    let kept_in_front = front.filter(|i| !f.kept.contains(i));

    // The tool changes of the API's compaction block the context started with, when that
    // block's message is summarized (kept, or kept in front, it still carries them).
    let start_at = active_start(messages)?;
    let tool_changes_in_front = if transcript
        || start_at >= messages.len()
        || f.kept.contains(&start_at)
        || kept_in_front == Some(start_at)
        || summary_messages
            .first()
            .is_some_and(Message::begins_with_compaction)
    {
        None
    } else {
        messages[start_at].tool_changes_message()
    };

    // The result must be smaller than what it replaces.
    let mut after: Vec<Message> = kept_in_front
        .map(|i| messages[i].clone())
        .into_iter()
        .chain(tool_changes_in_front.iter().cloned())
        .collect();
    after.extend(summary_messages.iter().cloned());
    after.extend(kept.iter().cloned());
    after.extend(attachments.iter().cloned());
    after.extend(hook_results.iter().cloned());
    // Estimated, not counted from usage: kept messages carry usage of the old context. What
    // the usage seen before taught (the system prompt and tools the next request also sends,
    // the conversation's tokens per estimated token) applies to that estimate.
    let estimated = estimate_messages(env, &after)?;
    // With nothing learned, the system prompt and tools the caller gave (counted before the
    // compaction too) are what the next request also sends.
    let true_post = fit.map_or(estimated + ctx.preamble_tokens, |f| f.predict(estimated));
    // "Smaller than what it replaces" (SPEC §14) compares estimates of messages alone, both
    // without usage: what a request sends besides them does not change with a compaction.
    let not_smaller = |what: String| {
        CompactError::new(
            if f.from_session_memory {
                ErrorCode::SessionMemoryNotApplicable
            } else {
                ErrorCode::CompactionNotSmaller
            },
            format!("{what}; nothing was committed"),
        )
    };
    if estimated >= f.size_before {
        return Err(not_smaller(format!(
            "the compacted messages ({estimated} tokens estimated) would not be smaller than the messages they replace ({} tokens estimated)",
            f.size_before
        )));
    }
    // An automatic compaction must also leave the messages below the threshold, or it would
    // fire again at once (thrashing). The messages alone: when what a request sends besides
    // them is past the threshold by itself, no compaction gets below it, and the decision
    // to compact skips such a context instead (`SkipReason::OverheadAboveThreshold`).
    let threshold = auto_compact_threshold(&ctx.model, &ctx.config);
    if f.auto && estimated >= threshold {
        return Err(not_smaller(format!(
            "the compacted messages ({estimated} tokens estimated) would not be below the auto-compaction threshold ({threshold} tokens)"
        )));
    }

    // 11–12. Notify, PostCompact hooks.
    step(env, "postCompactHook")?;
    let post = run_hook(
        env,
        HookKind::PostCompact,
        json!({
            "trigger": f.trigger.as_str(),
            "compactSummary": f.summary_text,
            "preTokens": f.pre_tokens,
            "postTokens": true_post,
        }),
        &mut f.failures,
    )
    .await?;
    // The commit point: after this nothing can fail or be cancelled.
    check_abort(env, "committing")?;
    env.progress(&ProgressEvent {
        tokens: Some(true_post),
        ..ProgressEvent::phase("done")
    });
    let user_display_message = match (f.pre_display, post.user_display_message) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.or(b),
    };
    Ok(CompactionResult {
        boundary_marker,
        summary_messages,
        attachments,
        hook_results,
        messages_to_keep: f.kept.clone(),
        pinned_added,
        pinned_rewritten,
        kept_in_front,
        tool_changes_in_front,
        user_display_message,
        pre_compact_token_count: f.pre_tokens,
        post_compact_token_count: f.post_compact_token_count,
        true_post_compact_token_count: true_post,
        calibration: fit,
        compaction_usage: f.usage,
        summary: f.summary_text,
        trigger: f.trigger,
        restored_files,
        restored_skills,
        kept_reads,
        hook_failures: f.failures,
        ptl_retries: f.retries.prompt_too_long,
        transient_retries: f.retries.transient,
        from_session_memory: f.from_session_memory,
        summary_parts: f.summary_parts,
        loss_report: f.loss_report,
    })
}

/// Runs the PreCompact hooks once for a compaction path (auto-compaction runs them before
/// trying session memory, so the full compaction after it must not run them again).
pub async fn pre_compact_hooks<E: Environment + ?Sized>(
    env: &E,
    ctx: &CompactContext,
    trigger: Trigger,
    custom_instructions: Option<&str>,
    pre_tokens: u64,
    extra: Value,
) -> Result<PreCompactOutcome, CompactError> {
    let mut failures = Vec::new();
    step(env, "preCompactHook")?;
    let mut input = json!({
        "trigger": trigger.as_str(),
        "customInstructions": custom_instructions,
        "preTokens": pre_tokens,
        "threshold": auto_compact_threshold(&ctx.model, &ctx.config),
        "window": context_window_for_model(&ctx.model, &ctx.config),
    });
    if let (Some(obj), Value::Object(more)) = (input.as_object_mut(), extra) {
        obj.extend(more);
    }
    let out = run_hook(env, HookKind::PreCompact, input, &mut failures).await?;
    Ok(PreCompactOutcome {
        instructions: out.instructions,
        user_display_message: out.user_display_message,
        failures,
    })
}

/// What the PreCompact hooks gave.
#[derive(Clone, Debug, Default)]
pub struct PreCompactOutcome {
    /// Extra summary instructions.
    pub instructions: Option<String>,
    /// A message for the user.
    pub user_display_message: Option<String>,
    /// Hooks that threw.
    pub failures: Vec<HookFailure>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A summary model the table does not know (what `openaiSummarizer({baseURL, model})` names
    /// for a local server) is sized to the configured window, as the main model is; a known
    /// one keeps its own window, whatever the configuration says of the main model's.
    #[test]
    fn an_unknown_summary_model_takes_the_configured_window() {
        let ctx = CompactContext {
            model: "my-local-model".into(),
            config: Config {
                context_window: Some(32_768.0),
                ..Config::default()
            },
            ..CompactContext::default()
        };
        let own_model = ctx.summary_window("my-local-model");
        assert_eq!(ctx.summary_window("qwen2.5-coder:32b"), own_model);
        assert!(own_model <= 32_768, "{own_model}");
        let known = ctx.summary_window("claude-3-5-haiku-20241022");
        assert!(known > 100_000, "{known}");
    }

    /// Claude Code's lines for a slash command and its local output, the caveat before them
    /// and an interruption marker are no request: the request before them is the latest.
    #[test]
    fn the_latest_request_is_not_a_slash_command_or_its_output() {
        let messages = Message::parse_all(json!([
            {"role": "user", "content": "Compare the two approaches."},
            {"role": "assistant", "content": "A is simpler, B is faster."},
            {"role": "user", "content": "Fair enough. Write a balanced opinion."},
            {"role": "assistant", "content": "Here it is."},
            {"role": "user", "isMeta": true, "content": "<local-command-caveat>Caveat: local commands below.</local-command-caveat>"},
            {"role": "user", "content": "<command-name>/model</command-name>\n  <command-message>model</command-message>\n  <command-args></command-args>"},
            {"role": "user", "content": [{"type": "text", "text": "<local-command-stdout>Set model to opus</local-command-stdout>"}]},
            {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]}
        ]))
        .unwrap();
        assert_eq!(last_user_request(&messages, 0), Some(2));
        // A request that only mentions a tag is a request.
        let quoted = Message::parse_all(json!([
            {"role": "user", "content": "What does <command-name> mean in the transcript?"}
        ]))
        .unwrap();
        assert_eq!(last_user_request(&quoted, 0), Some(0));
    }

    /// An earlier summary in an API shape (no `isCompactSummary`) is no request: after a swap
    /// that cut past the user's request it is the latest user text, and keeping it would put
    /// two summaries in the conversation (sessions16 S1).
    #[test]
    fn an_earlier_summary_is_not_the_latest_request() {
        let summary = summary::summary_message_text("earlier work", true, false);
        let messages = Message::parse_all(json!([
            {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
            {"role": "user", "content": summary},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "A"}]}
        ]))
        .unwrap();
        assert_eq!(last_user_request(&messages, 0), None);
        let blocks = Message::parse_all(json!([
            {"role": "user", "content": "Fix the test."},
            {"role": "user", "content": [{"type": "text", "text": summary}]}
        ]))
        .unwrap();
        assert_eq!(last_user_request(&blocks, 0), Some(0));
    }

    #[test]
    fn media_to_strip_is_what_strip_images_edits() {
        let mut messages = Message::parse_all(json!([
            {"role": "user", "content": "text"},
            {"role": "user", "content": [{"type": "text", "text": "t"}]},
            {"role": "user", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]},
            {"role": "user", "content": [{"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "d"}}]},
            {"role": "assistant", "content": [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [
                {"type": "text", "text": "x"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}}]}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "plain"}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "x"}]}]},
            {"role": "user", "content": [{"type": "custom_media", "data": 1}]},
            {"type": "attachment", "attachment": {"type": "image", "content": "x"}}
        ]))
        .unwrap();
        for file in [
            "cc_image_9e953218.jsonl",
            "cc_long_autocompact_4d5611e5.jsonl",
        ] {
            let path = format!(
                "{}/../shared/transcripts/{file}",
                env!("CARGO_MANIFEST_DIR")
            );
            if let Ok(text) = std::fs::read_to_string(&path) {
                messages.extend(crate::transforms::transcript::parse_transcript(&text).unwrap());
            }
        }
        let mut with_media = 0;
        for (i, m) in messages.iter().enumerate() {
            let edits = strip::strip_images(std::slice::from_ref(m)).unwrap();
            assert_eq!(has_media_to_strip(m), !edits.is_empty(), "message {i}");
            with_media += usize::from(!edits.is_empty());
        }
        assert!(with_media >= 3, "{with_media}");
    }
}
