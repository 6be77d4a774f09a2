//! Exported async functions of the pipeline (SPEC §6, §7, §11–§13): converting the JS
//! `context`, awaiting the core, and turning its result into JS objects that reuse the
//! caller's messages.

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use js_sys::{Array, Object, Promise, Reflect};
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::convert::*;
use super::env::{commit_context, new_uuid, JsEnv};
use crate::drive::autocompact;
use crate::drive::options;
use crate::drive::pipeline::{self, CompactError, CompactionResult, HookFailure, RestoredItem};
use crate::drive::session_memory;
use crate::model::error::{Error, ErrorCode};
use crate::model::messages::{session_template, Message};
use crate::model::shape::Shape;
use crate::model::view::UsageCounts;
use crate::transforms::context_management;

/// Runs an export's work as a `Promise`. The future is boxed as one trait-object type, so
/// `future_to_promise`'s machinery is compiled once for every async export and Compactor
/// method instead of once per future type (docs/size.md).
pub(crate) fn promise_of(work: impl Future<Output = JsResult<JsValue>> + 'static) -> Promise {
    let boxed: Pin<Box<dyn Future<Output = JsResult<JsValue>>>> = Box::pin(work);
    wasm_bindgen_futures::future_to_promise(boxed)
}

/// The caller's messages as a compaction reads them.
pub struct Compacted {
    /// Typed messages, in Anthropic form.
    pub typed: Vec<Message>,
    /// For another ecosystem's messages: their shape and where each typed one came from;
    /// `None` for Anthropic messages and lines, read one for one.
    pub foreign: Option<Foreign>,
}

/// Another ecosystem's messages read in Anthropic form.
pub struct Foreign {
    /// The caller's shape (what the messages a compaction adds are written in).
    pub shape: Shape,
    /// The index of the caller's message each typed one came from (`anthropicForm` in
    /// `js_view.js`).
    pub origin: Vec<usize>,
}

/// Reads `messages` for a compaction: Anthropic messages and lines as they are, another
/// ecosystem's messages converted to Anthropic form (all one shape, or `MIXED_SHAPES`).
/// Lines that are never sent (progress, snapshots, …) are read without their payload. Each
/// message crosses as JSON text: a message that contains itself is an error, not a crash.
/// Checks every message against one shape; another ecosystem's messages are read in their
/// Anthropic form (`None`: Anthropic messages or transcript lines, read as they are).
///
/// `compacting`: read for a compaction (an OpenAI Responses approval the API has not acted on
/// yet leaves its request a call still waiting, which the compaction keeps) rather than as
/// the messages sent (the approval reads as its request's result): see `anthropicForm`.
fn foreign_for_compaction(
    messages: &JsValue,
    shape: Option<Shape>,
    reading: Reading,
    compacting: bool,
) -> crate::Result<Option<Compacted>> {
    let view = super::js_view::JsConversation::of_shape(messages, "messages", shape)?;
    view.validate_all()?;
    check_as_counted(&view)?;
    let shape = view.shape();
    if !shape.is_foreign() {
        return Ok(None);
    }
    let (list, origin) = super::js_view::anthropic_form(messages, compacting)?;
    let typed = typed_messages(&list, reading, &|k| {
        format!("messages[{}]", origin.get(k).copied().unwrap_or(0))
    })?;
    Ok(Some(Compacted {
        typed,
        foreign: Some(Foreign { shape, origin }),
    }))
}

/// Reads `view`'s messages as the count reads the caller's objects, the reference every entry
/// point follows: the content of every message (a string or an array of well-formed blocks)
/// and the usage the count anchors on. A compaction, its preview, `toApiMessages` and
/// `validateForApi` read the messages as JSON text next, where a `Date` content would be a
/// string and a `NaN` count `null`: checked here first, they refuse what
/// `tokenCountWithEstimation` and a `Compactor` refuse, with the same error. (The JSON text
/// leaves out the `toJSON` of what is read field by field: `asRead` in `js_batch.js`.)
fn check_as_counted(view: &super::js_view::JsConversation<'_>) -> crate::Result<()> {
    use crate::model::view::ConversationView;
    view.latest_usage(view.len())?;
    view.check_structure()
}

pub fn messages_for_compaction(
    messages: &JsValue,
    shape: Option<Shape>,
    reading: Reading,
) -> crate::Result<Compacted> {
    read_messages(messages, shape, reading, true)
}

/// [`messages_for_compaction`] for the API view (`toApiMessages`, `validateForApi`): the
/// messages as they are sent, every answer read as the result it is.
pub fn messages_as_sent(messages: &JsValue, shape: Option<Shape>) -> crate::Result<Compacted> {
    read_messages(messages, shape, Reading::Whole, false)
}

fn read_messages(
    messages: &JsValue,
    shape: Option<Shape>,
    reading: Reading,
    compacting: bool,
) -> crate::Result<Compacted> {
    if let Some(foreign) = foreign_for_compaction(messages, shape, reading, compacting)? {
        return Ok(foreign);
    }
    let arr: &Array = messages.unchecked_ref();
    let mut typed = typed_messages(arr, reading, &|i| format!("messages[{i}]"))?;
    mark_conversation_js(arr, &mut typed);
    if reading == Reading::Compaction {
        read_template_whole(arr, &mut typed, &|i| format!("messages[{i}]"))?;
    }
    Ok(Compacted {
        typed,
        foreign: None,
    })
}

impl Compacted {
    /// The shape of the messages read (Anthropic when they were not converted).
    pub fn shape(&self) -> Shape {
        self.foreign.as_ref().map_or(Shape::Anthropic, |f| f.shape)
    }

    /// Puts the usage `setUsage` gave after `held` of the caller's messages on the typed
    /// message it belongs to ([`crate::model::view::give_usage`]); nothing when none.
    pub fn give_usage(&mut self, given: Option<(usize, UsageCounts)>) {
        if let Some((held, usage)) = given {
            let origin = self.foreign.as_ref().map(|f| f.origin.as_slice());
            crate::model::view::give_usage(&mut self.typed, origin, held, usage);
        }
    }
}

/// Points the pinned messages of another ecosystem's conversation at the converted message
/// they are: a pinned object that is one of `messages` (the same object) is read as the
/// Anthropic form of that message, so the core finds it in the conversation and keeps the
/// other half of a tool pair it holds with it ([`crate::drive::pinned::kept_for_pins`]); any
/// other pinned object is read in Anthropic form on its own (a copy of a message is then
/// found too, and a call or result with no partner is seen and rewritten as text). The
/// objects added verbatim are still the caller's own ones (`result_js`). Anthropic messages
/// are read as they are. A pinned message left in a role the Anthropic form does not have
/// (one that could not be converted) is an `INVALID_MESSAGE` at `context.pinned[k].role`.
pub(crate) fn pins_in_conversation(
    ctx: &mut pipeline::CompactContext,
    context: &JsValue,
    messages: &JsValue,
    read: &Compacted,
) -> crate::Result<()> {
    let pinned = prop(context, "pinned").dyn_into::<Array>().ok();
    let list = messages.dyn_ref::<Array>();
    for (k, item) in ctx.pinned.iter_mut().enumerate() {
        let at = || format!("context.pinned[{k}]");
        let needs_form = match item {
            crate::drive::pinned::Pinned::Message(m) => m.check_role(&at).is_err(),
            crate::drive::pinned::Pinned::Text(_) => false,
        };
        let (Some(pinned), Some(list)) = (&pinned, list) else {
            continue;
        };
        if read.foreign.is_none() && !needs_form {
            continue;
        }
        let p = pinned.get(k as u32);
        if !p.is_object() {
            continue;
        }
        let found = read.foreign.as_ref().and_then(|foreign| {
            (0..list.length())
                .rev()
                .find(|&i| Object::is(&list.get(i), &p))
                .and_then(|at| foreign.origin.iter().position(|&o| o == at as usize))
                .and_then(|t| read.typed.get(t).cloned())
        });
        // Not one of the messages: read in Anthropic form on its own (when it is one message
        // there), so that a copy is found as well and unpaired tool blocks are seen.
        let converted = || -> Option<Message> {
            let (one, _) = super::js_view::anthropic_form(&Array::of1(&p), true).ok()?;
            let mut typed = typed_messages(&one, Reading::Compaction, &|_| {
                format!("context.pinned[{k}]")
            })
            .ok()?;
            (typed.len() == 1).then(|| typed.remove(0))
        };
        if let Some(m) = found.or_else(converted) {
            *item = crate::drive::pinned::Pinned::Message(Box::new(m));
        }
    }
    crate::drive::pinned::check_forms(&ctx.pinned)
}

/// The messages of a compaction read ([`messages_for_compaction_yielding`], stopping at the
/// context's `signal`), and the context's pinned messages pointed at them
/// ([`pins_in_conversation`]).
async fn read_with_pins(
    ctx: &mut pipeline::CompactContext,
    context: &JsValue,
    messages: &JsValue,
    shape: Option<Shape>,
) -> crate::Result<Compacted> {
    let read = messages_for_compaction_yielding(messages, shape, &prop(context, "signal")).await?;
    pins_in_conversation(ctx, context, messages, &read)?;
    Ok(read)
}

/// How long the async functions read messages before letting the caller's event loop run.
const SLICE_MS: f64 = 20.0;

/// At most this many messages cross in one batch ([`messages_json_batch`]) …
const BATCH_MESSAGES: usize = 256;

/// … and a batch stops once about this many bytes of text are written (so that a slice of a
/// very large session still ends close to [`SLICE_MS`]).
const BATCH_BYTES: u32 = 1 << 20;

/// [`messages_for_compaction`] for the async functions: the messages cross in slices of
/// about [`SLICE_MS`], with a turn of the caller's event loop between two, so that an abort
/// (`signal`) while a large conversation is read takes effect (`ABORTED`) instead of waiting
/// for the whole pass. Read as a compaction reads them ([`Reading::Compaction`]).
pub async fn messages_for_compaction_yielding(
    messages: &JsValue,
    shape: Option<Shape>,
    signal: &JsValue,
) -> crate::Result<Compacted> {
    let reading = Reading::Compaction;
    if let Some(foreign) = foreign_for_compaction(messages, shape, reading, true)? {
        return Ok(foreign);
    }
    let arr: &Array = messages.unchecked_ref();
    let len = arr.length() as usize;
    if len > MAX_TYPED_MESSAGES {
        return Err(Error::invalid_argument(format!(
            "messages has {len} elements; at most {MAX_TYPED_MESSAGES} are read here (the count reads more)"
        )));
    }
    let mut typed = Vec::with_capacity(crate::model::view::reserve_for(len));
    let mut since = super::env::now_ms();
    let at = |i: usize| format!("messages[{i}]");
    let (mut i, mut crossed) = (0, 0);
    while i < len {
        i = read_batch(arr, i, len, reading, (&mut typed, &mut crossed), &at, true)?;
        if super::env::now_ms() - since >= SLICE_MS {
            super::env::next_turn_of_event_loop().await;
            if super::env::aborted(signal) {
                return Err(Error::new(
                    ErrorCode::Aborted,
                    format!(
                        "aborted while reading the messages (at messages[{}])",
                        i - 1
                    ),
                ));
            }
            since = super::env::now_ms();
        }
    }
    mark_conversation_js(arr, &mut typed);
    read_template_whole(arr, &mut typed, &at)?;
    Ok(Compacted {
        typed,
        foreign: None,
    })
}

/// The most messages read into the typed model at once: a quarter of the instance's 4 GiB
/// for the messages themselves (their content takes more), at most 2^21. Past it the reading
/// ran out of address space and trapped (6,000,000 one-word messages).
const MAX_TYPED_MESSAGES: usize = {
    let fit = (1usize << 30) / std::mem::size_of::<Message>();
    if fit < 1 << 21 {
        fit
    } else {
        1 << 21
    }
};

fn typed_messages(
    arr: &Array,
    reading: Reading,
    at: &dyn Fn(usize) -> String,
) -> crate::Result<Vec<Message>> {
    let len = arr.length() as usize;
    if len > MAX_TYPED_MESSAGES {
        return Err(Error::invalid_argument(format!(
            "messages has {len} elements; at most {MAX_TYPED_MESSAGES} are read here (the count reads more)"
        )));
    }
    let mut typed = Vec::with_capacity(crate::model::view::reserve_for(len));
    let (mut i, mut crossed) = (0, 0);
    while i < len {
        i = read_batch(arr, i, len, reading, (&mut typed, &mut crossed), &at, true)?;
    }
    Ok(typed)
}

/// Reads messages `i..` of `arr` (up to `len`, named by `at` in errors) into `typed`: one
/// batch ([`messages_json_batch`]); the message it stopped at, if it could not be written,
/// is an error naming it. Returns the index after the last message read. With `apart`, the
/// long strings of the messages' content cross apart from their JSON texts; a message whose
/// strings do not go back where its JSON text left their places (a getter that changed what
/// it gives between two readings) is read again alone, as JSON whole.
/// `crossed` counts the bytes of text the reading took so far: a batch that would take it past
/// [`MAX_READ_BYTES`] is refused (`INVALID_ARGUMENT`) before it is copied.
fn read_batch(
    arr: &Array,
    i: usize,
    len: usize,
    reading: Reading,
    (typed, crossed): (&mut Vec<Message>, &mut u64),
    at: &dyn Fn(usize) -> String,
    apart: bool,
) -> crate::Result<usize> {
    let end = len.min(i + BATCH_MESSAGES);
    let b = messages_json_batch(
        arr,
        i as u32,
        end as u32,
        reading,
        (BATCH_BYTES, *crossed),
        apart,
    );
    *crossed += b.text.len() as u64;
    let mut next = 0;
    for k in 0..b.count {
        let at = || at(i + k);
        let (text, strings) = b
            .get(k, &mut next)
            .ok_or_else(|| Error::invalid_message("the text is not valid UTF-8").at(at()))?;
        let mut m = match reading.message(text, &at) {
            Ok(m) => m,
            Err(e) => return Err(named_problem(arr, i + k).unwrap_or(e)),
        };
        if !strings
            .into_iter()
            .all(|(slot, s)| m.put_apart_text(slot, s.to_string()))
        {
            m = typed_message(arr, i + k, reading, &at, false)?;
        }
        typed.push(m);
    }
    let next = i + b.count;
    if let Stop::TooLarge { at: k, total } = b.stop {
        return Err(too_large(total, &at(i + k)));
    }
    if let Some(e) = b.stop_error(&|| at(next)) {
        return Err(e);
    }
    if b.count == 0 {
        return Err(Error::invalid_message("the text is not valid UTF-8").at(at(next)));
    }
    Ok(next)
}

/// The problem of message `j` of `arr` as the count names it (the field and block:
/// `messages[3].content[1]: content block must be an object`), for a message the typed
/// reading refused with serde's own words; `None` when the count's reading accepts it.
fn named_problem(arr: &Array, j: usize) -> Option<Error> {
    let view = super::js_view::JsConversation::new(arr, "messages").ok()?;
    crate::measure::tokens::estimate_range(&view, j..j + 1).err()
}

/// After a [`Reading::Compaction`] read and [`mark_conversation_js`]: the line a new boundary
/// copies its session fields from ([`session_template`], the last line of the conversation
/// as marked: a sub-agent's own file's last line) read again whole, so that those fields are
/// there. It keeps its mark.
fn read_template_whole(
    arr: &Array,
    typed: &mut [Message],
    at: &dyn Fn(usize) -> String,
) -> crate::Result<()> {
    if let Some(i) = session_template(typed) {
        let mark = typed[i].conversation;
        typed[i] = typed_message(arr, i, Reading::Whole, &|| at(i), true)?;
        typed[i].conversation = mark;
    }
    Ok(())
}

/// Message `i` of `arr` (named by `at` in errors) as a typed message: a batch of one
/// ([`read_batch`], `apart` as there).
fn typed_message(
    arr: &Array,
    i: usize,
    reading: Reading,
    at: &dyn Fn() -> String,
    apart: bool,
) -> crate::Result<Message> {
    let mut one = Vec::with_capacity(1);
    read_batch(arr, i, i + 1, reading, (&mut one, &mut 0), &|_| at(), apart)?;
    one.pop()
        .ok_or_else(|| Error::invalid_message("expected a message object").at(at()))
}

/// A pipeline error as a JS `Error` with `code`, keeping the callback's error as `cause`.
pub(crate) fn compact_error(e: CompactError) -> JsValue {
    let err = js_error(e.error);
    if let Some(c) = e.cause.and_then(|c| c.cause) {
        if let Ok(v) = Rc::downcast::<JsValue>(c) {
            let _ = Reflect::set(&err, &"cause".into(), &v);
        }
    }
    err
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ItemJs<'a> {
    name: &'a str,
    tokens: u64,
    truncated: bool,
}

fn items(list: &[RestoredItem], key: &str) -> JsResult<Array> {
    list.iter()
        .map(|r| {
            let o = to_js(&ItemJs {
                name: &r.name,
                tokens: r.tokens,
                truncated: r.truncated,
            })?;
            Reflect::set(&o, &key.into(), &r.name.as_str().into())?;
            Ok(o)
        })
        .collect()
}

fn failures(list: &[HookFailure]) -> JsResult<Array> {
    list.iter()
        .map(|f| {
            let o = Object::new();
            Reflect::set(&o, &"hook".into(), &f.hook.into())?;
            Reflect::set(&o, &"message".into(), &f.message.as_str().into())?;
            Ok::<JsValue, JsValue>(o.into())
        })
        .collect()
}

/// The `CompactionResult` as a JS object; `messagesToKeep` are the caller's own objects.
pub fn result_js(
    r: &CompactionResult,
    input: &JsValue,
    context: &JsValue,
    foreign: Option<&Foreign>,
) -> JsResult<JsValue> {
    let o = Object::new();
    let set = |k: &str, v: &JsValue| Reflect::set(&o, &k.into(), v).map(|_| ());
    let marker = to_js(&r.boundary_marker)?;
    set("boundaryMarker", &marker)?;
    // Another ecosystem's messages get the added messages in their own shape.
    let added = |m: &Message, summary: bool| -> JsResult<JsValue> {
        let v = to_js(m)?;
        if foreign.is_none() {
            return Ok(v);
        }
        let meta = if summary {
            prop(&marker, "compactMetadata")
        } else {
            JsValue::UNDEFINED
        };
        let code = foreign.map_or(0, |f| f.shape.code());
        let out = super::js_view::user_message_in(input, code, &v, &new_uuid(), &meta);
        if out.is_undefined() {
            if let Some(e) = super::js_view::read_failure() {
                return Err(js_error(e));
            }
            return Err(js_error(Error::new(
                ErrorCode::UnsupportedShape,
                "the conversation has no LangChain HumanMessage whose class could build the summary message",
            )));
        }
        Ok(out)
    };
    // Pinned messages are the caller's own objects, byte for byte.
    let pinned = prop(context, "pinned");
    let summary: Array = Array::new();
    summary.push(&added(&r.summary_messages[0], true)?);
    for (n, m) in r.summary_messages.iter().enumerate().skip(1) {
        // A pinned message whose unpaired tool blocks were rewritten is the library's now.
        let original = r
            .pinned_added
            .get(n - 1)
            .filter(|k| !r.pinned_rewritten.contains(k))
            .and_then(|&k| pinned.dyn_ref::<Array>().map(|a| a.get(k as u32)))
            .filter(JsValue::is_object);
        match original {
            Some(v) => summary.push(&v),
            None => summary.push(&added(m, false)?),
        };
    }
    // The tool changes of the Messages API compaction block the summary replaced, as a
    // system message in front of it (only Anthropic messages hold such a block).
    if let (Some(m), None) = (&r.tool_changes_in_front, foreign) {
        summary.unshift(&to_js(m)?);
    }
    // The provider's opaque compaction the context started with: the caller's own object,
    // first (the provider reads it; nothing else can).
    if let Some(i) = r.kept_in_front {
        let at = foreign.map_or(Some(i), |f| f.origin.get(i).copied());
        if let Some(at) = at {
            summary.unshift(&input.unchecked_ref::<Array>().get(at as u32));
        }
    }
    set("summaryMessages", &summary.into())?;
    let list = |ms: &[Message]| -> JsResult<Array> { ms.iter().map(|m| added(m, false)).collect() };
    set("attachments", &list(&r.attachments)?.into())?;
    set("hookResults", &list(&r.hook_results)?.into())?;
    let arr: &Array = input.unchecked_ref();
    let keep: Array = match foreign {
        None => r
            .messages_to_keep
            .iter()
            .map(|&i| arr.get(i as u32))
            .collect(),
        Some(f) => {
            let view = js(super::js_view::JsConversation::new(input, "messages"))?;
            let kept = js(crate::transforms::boundary::kept_originals(
                &view,
                &r.messages_to_keep,
                &f.origin,
            ))?;
            set("messageShape", &f.shape.name().into())?;
            // Its usage measured the context the summary replaced (Shape::kept_usage_is_stale).
            let stale = f.shape.kept_usage_is_stale();
            kept.into_iter()
                .map(|i| arr.get(i as u32))
                .map(|m| {
                    if stale {
                        super::js_view::without_usage(&m)
                    } else {
                        m
                    }
                })
                .collect()
        }
    };
    set("messagesToKeep", &keep)?;
    set(
        "userDisplayMessage",
        &r.user_display_message
            .as_deref()
            .map_or(JsValue::UNDEFINED, JsValue::from_str),
    )?;
    set(
        "preCompactTokenCount",
        &(r.pre_compact_token_count as f64).into(),
    )?;
    set(
        "postCompactTokenCount",
        &(r.post_compact_token_count as f64).into(),
    )?;
    set(
        "truePostCompactTokenCount",
        &(r.true_post_compact_token_count as f64).into(),
    )?;
    let usage = match &r.compaction_usage {
        Some(u) => {
            let u_obj = Object::new();
            for (k, v) in [
                ("input_tokens", u.input_tokens),
                ("cache_creation_input_tokens", u.cache_creation_input_tokens),
                ("cache_read_input_tokens", u.cache_read_input_tokens),
                ("output_tokens", u.output_tokens),
            ] {
                Reflect::set(&u_obj, &k.into(), &(v as f64).into())?;
            }
            u_obj.into()
        }
        None => JsValue::NULL,
    };
    set("compactionUsage", &usage)?;
    set("calibration", &calibration_js(r.calibration))?;
    set("summary", &r.summary.as_str().into())?;
    set("trigger", &r.trigger.as_str().into())?;
    set("restoredFiles", &items(&r.restored_files, "path")?.into())?;
    set("restoredSkills", &items(&r.restored_skills, "name")?.into())?;
    set("hookErrors", &failures(&r.hook_failures)?.into())?;
    set("ptlRetries", &r.ptl_retries.into())?;
    set("transientRetries", &r.transient_retries.into())?;
    set("summaryParts", &r.summary_parts.into())?;
    set("fromSessionMemory", &r.from_session_memory.into())?;
    set("lossReport", &to_js(&r.loss_report)?)?;
    Ok(o.into())
}

/// Whether the caller's count of the messages differs from the compaction's own estimate:
/// it has a tokenizer, or counts what its requests send besides the messages.
fn counts_apart(counter: &super::js_view::TokenCounter, c: &options::ContextOptions) -> bool {
    counter.is_active() || c.auto.preamble.is_some()
}

/// The count of `messages` the caller's own count would make, for
/// [`pipeline::CompactContext::counted`] (`preCompactTokenCount`, the decision): as
/// `tokenCountWithEstimation` counts them with the context's tokenizer (`tokenCounter`) and
/// what its requests send besides them (`system`, `toolDefinitions`). `None` when the
/// context has neither (the compaction's own estimate is that count).
pub(crate) fn caller_count(
    messages: &JsValue,
    context: &JsValue,
    c: &options::ContextOptions,
    shape: Option<Shape>,
) -> crate::Result<Option<u64>> {
    let counter = super::js_view::TokenCounter::enter(context, "context")?;
    if !counts_apart(&counter, c) {
        return Ok(None);
    }
    let view = super::js_view::JsConversation::of_shape(messages, "messages", shape)?;
    let count = crate::measure::tokens::token_count_given(&view, None)?;
    let total = crate::measure::tokens::with_preamble(count, c.auto.preamble).total;
    counter.finish()?;
    Ok(Some(total))
}

/// `compactConversation(messages, context, options?)` → `Promise<CompactionResult>`
/// (SPEC §7). Rejects with an `Error` whose `code` says why (`PROMPT_TOO_LONG`,
/// `SUMMARY_TRUNCATED`, `EMPTY_SUMMARY`, `COMPACTION_NOT_SMALLER`, `SUMMARIZER_FAILED`,
/// `ABORTED`, …); the caller's messages are never changed.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = compactConversation, unchecked_return_type = "Promise<CompactionResult<MessageInput>>")]
pub fn compact_conversation(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_param_type = "CompactContext")] context: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "CompactOptions | null")] options: JsValue,
) -> Promise {
    promise_of(async move {
        let messages = held_messages(messages, MAX_TYPED_MESSAGES);
        let mut c = js(reading("context", || options::context(&context)))?;
        let seen = super::env::seen_states(&context);
        let shape = js(reading("options", || {
            options::shape_option(&options, "options")
        }))?
        .or(c.shape);
        c.context.counted = js(caller_count(&messages, &context, &c, shape))?;
        let read = js(read_with_pins(&mut c.context, &context, &messages, shape).await)?;
        c.context.for_shape(read.shape());
        let typed = read.typed;
        let env = js(JsEnv::from_context(&context, &c, false))?;
        let opts = js(reading("options", || options::compact_options(&options)))?;
        let r = pipeline::compact_conversation(&typed, &c.context, &opts, &env)
            .await
            .map_err(compact_error)?;
        commit_context(&context, &seen, &r.kept_reads);
        result_js(&r, &messages, &context, read.foreign.as_ref())
    })
}

/// `trySessionMemoryCompaction(messages, context)` → `Promise<CompactionResult>` (SPEC
/// §12); rejects with `SESSION_MEMORY_NOT_APPLICABLE` when it does not apply.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = trySessionMemoryCompaction, unchecked_return_type = "Promise<CompactionResult<MessageInput>>")]
pub fn try_session_memory_compaction(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(
        unchecked_param_type = "Omit<CompactContext, 'summarize'> & { summarize?: Summarizer }"
    )]
    context: JsValue,
) -> Promise {
    promise_of(async move {
        let messages = held_messages(messages, MAX_TYPED_MESSAGES);
        let mut c = js(reading("context", || options::context(&context)))?;
        let seen = super::env::seen_states(&context);
        c.context.counted = js(caller_count(&messages, &context, &c, c.shape))?;
        let read = js(read_with_pins(&mut c.context, &context, &messages, c.shape).await)?;
        let typed = read.typed;
        let env = js(JsEnv::from_context(&context, &c, true))?;
        let r = session_memory::try_session_memory_compaction(&typed, &c.context, None, &env)
            .await
            .map_err(compact_error)?;
        commit_context(&context, &seen, &r.kept_reads);
        result_js(&r, &messages, &context, read.foreign.as_ref())
    })
}

/// `autoCompactIfNeeded(messages, context, tracking?)` →
/// `Promise<{wasCompacted, compactionResult?, consecutiveFailures, error?, skipped?}>`
/// (SPEC §6). A failed compaction is reported in `error`, never thrown; after 3 failures in a
/// row nothing is attempted (`skipped: "circuitBreakerOpen"`).
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = autoCompactIfNeeded, unchecked_return_type = "Promise<AutoCompactOutcome<MessageInput>>")]
pub fn auto_compact_if_needed(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_param_type = "CompactContext")] context: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Tracking | null")] tracking: JsValue,
) -> Promise {
    promise_of(async move {
        let messages = held_messages(messages, MAX_TYPED_MESSAGES);
        let mut c = js(reading("context", || options::context(&context)))?;
        let seen = super::env::seen_states(&context);
        let t = js(reading("tracking", || options::tracking(&tracking)))?;
        {
            // Every shape is counted; a compaction that is not due is answered for any shape.
            let counter = js(super::js_view::TokenCounter::enter(&context, "context"))?;
            let view = js(super::js_view::JsConversation::of_shape(
                &messages, "messages", c.shape,
            ))?;
            js(view.validate_all())?;
            let due = js(autocompact::outcome_if_not_due(
                &view, &c.context, &t, &c.auto,
            ))?;
            js(counter.finish())?;
            match due {
                Err(not_due) => return auto_outcome_js(not_due, None),
                // Decided with the caller's tokenizer or preamble: the compaction counts as
                // it did.
                Ok(count) if counts_apart(&counter, &c) => c.context.counted = Some(count),
                Ok(_) => {}
            }
        }
        let read =
            match messages_for_compaction_yielding(&messages, c.shape, &prop(&context, "signal"))
                .await
            {
                Ok(read) => read,
                Err(e) => {
                    let failed = js(autocompact::AutoCompactOutcome::unless_unreadable(
                        e,
                        t.consecutive_failures,
                    ))?;
                    return auto_outcome_js(failed, None);
                }
            };
        c.context.for_shape(read.shape());
        js(pins_in_conversation(
            &mut c.context,
            &context,
            &messages,
            &read,
        ))?;
        let typed = read.typed;
        let env = js(JsEnv::from_context(&context, &c, false))?;
        let out = js(autocompact::auto_compact_if_needed(
            &typed, &c.context, &t, &c.auto, &c.retry, &env,
        )
        .await)?;
        let result = match &out.result {
            Some(r) => {
                commit_context(&context, &seen, &r.kept_reads);
                Some(result_js(r, &messages, &context, read.foreign.as_ref())?)
            }
            None => None,
        };
        auto_outcome_js(out, result)
    })
}

/// `{wasCompacted, consecutiveFailures, compactionResult?, error?, skipped?}` of an
/// automatic compaction, with the result already converted (`result`).
pub(crate) fn auto_outcome_js(
    out: autocompact::AutoCompactOutcome,
    result: Option<JsValue>,
) -> JsResult<JsValue> {
    let o = Object::new();
    Reflect::set(&o, &"wasCompacted".into(), &out.was_compacted.into())?;
    Reflect::set(
        &o,
        &"consecutiveFailures".into(),
        &out.consecutive_failures.into(),
    )?;
    if let Some(r) = result {
        Reflect::set(&o, &"compactionResult".into(), &r)?;
    }
    if let Some(s) = out.skipped {
        Reflect::set(&o, &"skipped".into(), &s.as_str().into())?;
    }
    if let Some(e) = out.error {
        Reflect::set(&o, &"error".into(), &compact_error(e))?;
    }
    Ok(o.into())
}

/// `reactiveCompact(messages, context, error, tracking?)` → `Promise<{compactionResult,
/// tracking}>` (SPEC §13): after the API rejected a request for its size, compacts once for
/// the turn `tracking.turnId`; a second call for the same turn rejects with
/// `REACTIVE_ALREADY_TRIED`.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = reactiveCompact, unchecked_return_type = "Promise<ReactiveCompactResult<MessageInput>>")]
pub fn reactive_compact(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_param_type = "CompactContext")] context: JsValue,
    #[wasm_bindgen(unchecked_param_type = "unknown")] error: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Tracking | null")] tracking: JsValue,
) -> Promise {
    promise_of(async move {
        let messages = held_messages(messages, MAX_TYPED_MESSAGES);
        let mut c = js(reading("context", || options::context(&context)))?;
        let seen = super::env::seen_states(&context);
        c.context.counted = js(caller_count(&messages, &context, &c, c.shape))?;
        let read = js(read_with_pins(&mut c.context, &context, &messages, c.shape).await)?;
        c.context.for_shape(read.shape());
        let typed = read.typed;
        let env = js(JsEnv::from_context(&context, &c, false))?;
        let t = js(reading("tracking", || options::tracking(&tracking)))?;
        let (text, status) = options::error_text(&error);
        let (r, next) = crate::drive::reactive::reactive_compact(
            &typed, &c.context, &text, status, &t, &c.retry, &env,
        )
        .await
        .map_err(compact_error)?;
        commit_context(&context, &seen, &r.kept_reads);
        let o = Object::new();
        Reflect::set(
            &o,
            &"compactionResult".into(),
            &result_js(&r, &messages, &context, read.foreign.as_ref())?,
        )?;
        let tr = Object::new();
        Reflect::set(
            &tr,
            &"consecutiveFailures".into(),
            &next.consecutive_failures.into(),
        )?;
        if let Some(id) = &next.turn_id {
            Reflect::set(&tr, &"turnId".into(), &id.as_str().into())?;
        }
        if let Some(id) = &next.reactive_turn_id {
            Reflect::set(&tr, &"reactiveTurnId".into(), &id.as_str().into())?;
        }
        Reflect::set(&o, &"tracking".into(), &tr)?;
        Ok(o.into())
    })
}

/// `buildApiContextManagement(options)` → the `context_management` request parameter for
/// the API's server-side context editing (SPEC §11), or `null` when nothing applies.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = buildApiContextManagement, unchecked_return_type = "ApiContextManagement | null")]
pub fn build_api_context_management(
    #[wasm_bindgen(unchecked_optional_param_type = "ContextManagementOptions | null")]
    options: JsValue,
) -> JsResult<JsValue> {
    let opts = js(reading("options", || {
        options::context_management_options(&options)
    }))?;
    match context_management::build_api_context_management(&opts) {
        Some(v) => to_js(&v),
        None => Ok(JsValue::NULL),
    }
}

/// `applyApiCompaction(messages, response, options?)` → `{messages, compacted, failed,
/// paused, contextWindowExceeded, stopReason, billedUsage, iterations}`: applies what a
/// Messages API response reports about the API's compaction (the `compact_20260112` edit)
/// to the Anthropic messages the request was sent with. The response goes in as an
/// assistant message whose `content` is the response's own array (the block byte for byte);
/// the caller's messages are their own objects.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = applyApiCompaction, unchecked_return_type = "ApiCompactionApplied<MessageInput, ApiCompactionResponse>")]
pub fn apply_api_compaction(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ApiCompactionResponse")] response: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ApplyApiCompactionOptions | null")]
    options: JsValue,
) -> JsResult<JsValue> {
    let read = js(messages_for_compaction(&messages, None, Reading::Whole))?;
    if let Some(f) = &read.foreign {
        return Err(js_error(Error::new(
            ErrorCode::UnsupportedShape,
            format!(
                "applyApiCompaction takes Anthropic messages; these are {} messages",
                f.shape.name()
            ),
        )));
    }
    let opts = js(reading("options", || {
        options::apply_api_compaction_options(&options)
    }))?;
    if !response.is_object() {
        return Err(js_error(Error::invalid_argument(
            "response must be a Messages API response body (an object)",
        )));
    }
    let content = prop(&response, "content");
    // Only what the decision reads crosses: the blocks' types and compaction contents,
    // the stop reason and the usage.
    let mut summary = serde_json::Map::new();
    if let Some(blocks) = options::Source::items(&content) {
        let list: Vec<serde_json::Value> = blocks
            .iter()
            .map(|b| {
                let t = prop(b, "type").as_string();
                let mut o = serde_json::Map::new();
                if let Some(t) = &t {
                    o.insert("type".into(), t.as_str().into());
                }
                if t.as_deref() == Some(crate::model::messages::COMPACTION_BLOCK) {
                    let c = prop(b, "content");
                    o.insert(
                        "content".into(),
                        c.as_string().map_or(serde_json::Value::Null, Into::into),
                    );
                }
                serde_json::Value::Object(o)
            })
            .collect();
        summary.insert("content".into(), list.into());
    }
    if let Some(r) = prop(&response, "stop_reason").as_string() {
        summary.insert("stop_reason".into(), r.into());
    }
    let usage = prop(&response, "usage");
    if usage.is_object() {
        let u = js(json_value(&usage, "response.usage"))?;
        summary.insert("usage".into(), u);
    }
    let report = js(context_management::apply_api_compaction(
        &read.typed,
        &serde_json::Value::Object(summary),
        &opts,
    ))?;
    let arr: &Array = messages.unchecked_ref();
    let out = Array::new();
    for i in report.drop_before..arr.length() as usize {
        out.push(&arr.get(i as u32));
    }
    let appended = Object::new();
    Reflect::set(&appended, &"role".into(), &"assistant".into())?;
    Reflect::set(&appended, &"content".into(), &content)?;
    out.push(&appended);
    for &i in &report.readd {
        let m = arr.get(i as u32);
        if report.readd_without_usage.contains(&i) {
            // The old context's `usage` left out.
            out.push(&super::js_view::without_usage(&m));
        } else {
            out.push(&m);
        }
    }
    let o = Object::new();
    let set = |k: &str, v: &JsValue| Reflect::set(&o, &k.into(), v).map(|_| ());
    set("messages", &out.into())?;
    set("compacted", &report.compacted.into())?;
    set("failed", &report.failed.into())?;
    set("paused", &report.paused.into())?;
    set(
        "contextWindowExceeded",
        &report.context_window_exceeded.into(),
    )?;
    set(
        "stopReason",
        &report
            .stop_reason
            .as_deref()
            .map_or(JsValue::NULL, JsValue::from_str),
    )?;
    let b = &report.billed_usage;
    let billed = Object::new();
    for (k, v) in [
        ("input_tokens", b.input_tokens),
        ("cache_creation_input_tokens", b.cache_creation_input_tokens),
        ("cache_read_input_tokens", b.cache_read_input_tokens),
        ("output_tokens", b.output_tokens),
    ] {
        Reflect::set(&billed, &k.into(), &(v as f64).into())?;
    }
    set("billedUsage", &billed.into())?;
    set("iterations", &to_js(&report.iterations)?)?;
    Ok(o.into())
}

/// `toApiMessages(messages)`: what is sent to the Messages API — `{role, content}` messages
/// after the last compaction boundary, non-API lines and sub-agent lines left out, split
/// responses and consecutive same-role messages merged, attachments as user text.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = toApiMessages, unchecked_return_type = "Array<ApiViewOf<MessageInput>>")]
pub fn to_api_messages(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ShapeOptions | null")] options: JsValue,
) -> JsResult<JsValue> {
    let shape = js(reading("options", || options::shape_options(&options)))?;
    let typed = js(messages_as_sent(&messages, shape))?.typed;
    // The view is written from what was read: a message read with its deepest parts as text
    // would come out changed (MAX_NESTING).
    if let Some(at) = typed.iter().find_map(|m| m.folded.0.as_deref()) {
        return Err(js_error(crate::model::messages::too_deep().at(at)));
    }
    let view = crate::transforms::messages_api::api_view(&typed);
    to_js(&view)
}

/// `validateForApi(messages)` → `{valid, problems: [{message, problem}]}`: the invariants
/// the Messages API enforces (user first, tool pairs, no empty content), checked on the API
/// view of `messages`, and (Anthropic messages only: those of other shapes are not sent as
/// they are) the caller's messages holding a lone UTF-16 surrogate (U+FFFD in the view) and,
/// when `shape: 'anthropic'` is declared, those with empty content that the view leaves out
/// (all but a final assistant message).
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = validateForApi, unchecked_return_type = "ApiValidation")]
pub fn validate_for_api(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ShapeOptions | null")] options: JsValue,
) -> JsResult<JsValue> {
    let shape = js(reading("options", || options::shape_options(&options)))?;
    let read = js(messages_as_sent(&messages, shape))?;
    let converted = read.foreign.is_some();
    let lone = if converted {
        Vec::new()
    } else {
        super::convert::lone_surrogates(&messages)
    };
    let given = crate::transforms::messages_api::AsGiven {
        converted,
        declared: shape == Some(crate::model::shape::Shape::Anthropic),
        lone: &lone,
    };
    let problems = crate::transforms::messages_api::validate_as_given(&read.typed, given);
    let o = Object::new();
    Reflect::set(&o, &"valid".into(), &problems.is_empty().into())?;
    Reflect::set(&o, &"problems".into(), &to_js(&problems)?)?;
    Ok(o.into())
}

/// `offlineSummarizer({maxTokens}?)`: a summarize function with the same contract as any
/// other (`(request, {signal, onText}) => Promise<response>`) that writes the summary from
/// the conversation itself — user messages, files, commands, errors, todos, current work —
/// deterministically and without a network (default budget 8,000 tokens).
#[cfg(feature = "extra")]
#[wasm_bindgen(js_name = offlineSummarizer, unchecked_return_type = "Summarizer")]
pub fn offline_summarizer(
    #[wasm_bindgen(unchecked_optional_param_type = "OfflineSummarizerOptions | null")]
    options: JsValue,
) -> JsResult<js_sys::Function> {
    let budget = js(reading("options", || {
        options::offline_summarizer_budget(
            &options,
            crate::summarize::offline::DEFAULT_BUDGET_TOKENS,
        )
    }))?;
    let f = Closure::<dyn Fn(JsValue, JsValue) -> js_sys::Promise>::new(
        move |request: JsValue, opts: JsValue| {
            let signal = prop(&opts, "signal");
            if prop(&signal, "aborted").as_bool() == Some(true) {
                let e = js_error(Error::new(ErrorCode::Aborted, "the operation was aborted"));
                let _ = Reflect::set(&e, &"name".into(), &"AbortError".into());
                return js_sys::Promise::reject(&e);
            }
            let value = match json_value(&request, "request") {
                Ok(v) if v.get("messages").is_some_and(serde_json::Value::is_array) => v,
                Ok(_) => {
                    // Not a request: a summary of nothing would look like a success.
                    return js_sys::Promise::reject(&js_error(Error::invalid_argument(
                        "request must be a Messages API request body: its `messages` is not an array",
                    )));
                }
                Err(e) => {
                    return js_sys::Promise::reject(&js_error(Error::invalid_argument(format!(
                        "request must be a Messages API request body: {}",
                        e.message
                    ))))
                }
            };
            let answer = crate::summarize::offline_answer::offline_answer(&value, budget);
            if let Ok(f) = prop(&opts, "onText").dyn_into::<js_sys::Function>() {
                // What it throws or its promise rejects with is ignored (not left unhandled).
                super::env::notify(&f, &JsValue::from_str(&answer.text));
            }
            match to_js(&answer.body) {
                Ok(v) => js_sys::Promise::resolve(&v),
                Err(e) => js_sys::Promise::reject(&e),
            }
        },
    );
    Ok(f.into_js_value().unchecked_into())
}

/// `previewCompaction(messages, context)`: what a compaction would do now, without a model
/// call — tokens before and (estimated) after, the threshold, what micro-compaction would
/// clear, which files and skills would be restored and at what size.
#[cfg(feature = "extra")]
#[wasm_bindgen(js_name = previewCompaction, unchecked_return_type = "CompactionPreview")]
pub fn preview_compaction(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(
        unchecked_param_type = "Omit<CompactContext, 'summarize'> & { summarize?: Summarizer }"
    )]
    context: JsValue,
) -> JsResult<JsValue> {
    let mut c = js(reading("context", || options::context(&context)))?;
    c.context.counted = js(caller_count(&messages, &context, &c, c.shape))?;
    let typed = js(messages_for_compaction(
        &messages,
        c.shape,
        Reading::Compaction,
    ))?
    .typed;
    // Every number in the caller's tokens when it gave a tokenizer, as its compaction's.
    let counter = js(super::env::JsTextCounter::of_context(&context))?;
    let counter = counter
        .as_ref()
        .map(|c| c as &dyn crate::measure::tokens::TextCounter);
    to_js(&js(crate::drive::preview::preview(
        &typed, &c.context, counter,
    ))?)
}
