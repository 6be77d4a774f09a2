//! The pipeline's [`Environment`] over the caller's JS `context`: callbacks become awaited
//! Promises (wasm-bindgen-futures), errors become [`CallError`]s that keep the original JS
//! error as `cause`, and the AbortSignal interrupts every wait.

use std::rc::Rc;

use js_sys::{Array, Function, Object, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::convert::{prop, to_js};
use crate::drive::answers;
use crate::drive::env::{CallError, Environment, HookKind, HookOutput, LocalFuture, ProgressEvent};
use crate::drive::options::ContextOptions;
use crate::measure::tokens::TextCounter;
use crate::model::error::{Error, Result};
use crate::summarize::summary::{RequestMessage, SummaryRequest, SummaryResponse};

#[wasm_bindgen(module = "/src/bindings/js_env.js")]
extern "C" {
    #[wasm_bindgen(js_name = callAbortable)]
    fn call_abortable(
        f: &Function,
        this: &JsValue,
        args: &Array,
        signal: &JsValue,
        timeout_ms: f64,
        what: &str,
    ) -> js_sys::Promise;
    /// `callAbortable` for the summarizer: its `opts.signal` is replaced by one aborted with
    /// the caller's and also when the time limit gives up on the call.
    #[wasm_bindgen(js_name = callSummarizer)]
    fn call_summarizer(
        f: &Function,
        request: &JsValue,
        opts: &Object,
        signal: &JsValue,
        timeout_ms: f64,
    ) -> js_sys::Promise;
    #[wasm_bindgen(js_name = sleepAbortable)]
    fn sleep_abortable(ms: f64, signal: &JsValue) -> js_sys::Promise;
    #[wasm_bindgen(js_name = isAborted)]
    fn is_aborted(signal: &JsValue) -> bool;
    #[wasm_bindgen(js_name = nextTurn)]
    fn next_turn() -> js_sys::Promise;
    /// Milliseconds from a monotonic clock.
    #[wasm_bindgen(js_name = nowMs)]
    pub fn now_ms() -> f64;
    /// Calls `f(event)`, ignoring what it throws and what a promise it returns rejects with.
    pub fn notify(f: &Function, event: &JsValue);
    /// A random (v4) UUID: `crypto.randomUUID()`, else one drawn with `Math.random()`.
    #[wasm_bindgen(js_name = newUuid)]
    pub fn new_uuid() -> String;
    #[wasm_bindgen(js_name = nowIso)]
    fn now_iso_js() -> String;
    /// The summarizer of a context that gave none (it throws when called), made without
    /// evaluating a string: `new Function` is refused under a strict CSP and in Workers.
    #[wasm_bindgen(js_name = noSummarizer)]
    fn no_summarizer() -> Function;
    /// Empties `states` of what `seen` ([`seen_states`]) says the compaction read of them,
    /// except the reads of the files `kept` names (the first state's paths, each ended by a
    /// NUL, which no path holds).
    #[wasm_bindgen(js_name = clearStates)]
    fn clear_states(states: &js_sys::Array, seen: &JsValue, kept: &str);
    /// What `entriesOf` read last of each state.
    #[wasm_bindgen(js_name = seenOf)]
    fn seen_of(states: &js_sys::Array) -> JsValue;
    /// `{signal, cancel(), release()}`: a signal aborted with `parent` or by `cancel()`.
    #[wasm_bindgen(js_name = linkedAbort)]
    pub fn linked_abort(parent: &JsValue) -> JsValue;
    /// `{signal, release()}`: a signal aborted with the context's or the call's own.
    #[wasm_bindgen(js_name = eitherAbort)]
    fn either_abort(context: &JsValue, call: &JsValue) -> JsValue;
}

/// What the latest reading of `context` saw of each state a compaction clears
/// ([`crate::drive::options::CLEARED_AFTER_COMPACTION`]): taken right after a compaction reads
/// the context, given to [`commit_context`] when it commits.
pub(crate) fn seen_states(context: &JsValue) -> JsValue {
    seen_of(&states_of(context))
}

/// After a successful compaction, empties the states of `context` it clears, of what `seen`
/// ([`seen_states`], taken right after it read the context) says it read of them: another
/// reading meanwhile, a preview or a compaction of the same state, does not change it. The
/// reads of the files the kept messages still hold (`kept_reads`,
/// [`CompactionResult::kept_reads`](crate::drive::pipeline::CompactionResult::kept_reads))
/// stay.
#[inline(never)]
pub(crate) fn commit_context(context: &JsValue, seen: &JsValue, kept_reads: &[String]) {
    let mut kept = String::new();
    for p in kept_reads {
        kept.push_str(p);
        kept.push('\0');
    }
    clear_states(&states_of(context), seen, &kept);
}

/// The states of `context` a compaction clears, in the order of
/// [`crate::drive::options::CLEARED_AFTER_COMPACTION`].
fn states_of(context: &JsValue) -> Array {
    let states = Array::new();
    for key in crate::drive::options::CLEARED_AFTER_COMPACTION {
        states.push(&prop(context, key));
    }
    states
}

/// Checks `options.signal` of a call (absent, or an AbortSignal).
pub fn check_call_signal(options: &JsValue) -> Result<()> {
    check_signal(&prop(options, "signal"), "options.signal")
}

/// Checks an AbortSignal given as `what` (absent is fine): what the library uses of it is
/// `aborted`, `reason` and the `abort` event.
fn check_signal(signal: &JsValue, what: &str) -> Result<()> {
    let absent = signal.is_undefined() || signal.is_null();
    let usable = || {
        prop(signal, "aborted").as_bool().is_some()
            && prop(signal, "addEventListener").is_function()
            && prop(signal, "removeEventListener").is_function()
    };
    if absent || usable() {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!(
            "{what} must be an AbortSignal (an object with a boolean `aborted` and addEventListener / removeEventListener)"
        )))
    }
}

/// The callbacks of a JS `context`.
#[derive(Clone)]
pub struct JsEnv {
    summarize: Function,
    read_file: Option<Function>,
    hooks: [Option<Function>; 3],
    hooks_this: JsValue,
    session_memory: JsValue,
    signal: JsValue,
    on_progress: Option<Function>,
    on_text: JsValue,
    summary_timeout_ms: f64,
    /// A summary written ahead: the summarizer's options say `background: true`.
    background: bool,
    /// The window the summary request is sized to (the summarizer's options say it,
    /// `contextWindow`: [`crate::drive::pipeline::CompactContext::summary_window`]).
    summary_window: u64,
    /// The caller's tokenizer (`tokenCounter`), called directly (never through the views'
    /// slot in `js_view.js`, which is only in effect during one synchronous call).
    counter: Option<JsTextCounter>,
}

/// The caller's `tokenCounter` as the core's [`TextCounter`].
#[derive(Clone)]
pub struct JsTextCounter(Function);

impl JsTextCounter {
    /// `context.tokenCounter`, when the context gives one (an error names it when it is not a
    /// function).
    pub fn of_context(context: &JsValue) -> Result<Option<JsTextCounter>> {
        Ok(super::js_view::counter_of(context, "context")?.map(JsTextCounter))
    }
}

impl TextCounter for JsTextCounter {
    fn count(&self, text: &str) -> std::result::Result<Option<f64>, String> {
        match self.0.call1(&JsValue::UNDEFINED, &JsValue::from_str(text)) {
            Ok(n) => {
                let number = n.as_f64();
                // An async tokenizer: refused (no number), its rejection not left unhandled.
                if number.is_none() {
                    super::js_view::settled_promise(&n);
                }
                Ok(number)
            }
            Err(e) => Err(e
                .dyn_ref::<js_sys::Error>()
                .and_then(|x| x.message().as_string())
                .or_else(|| e.as_string())
                .unwrap_or_else(|| "a non-Error value".into())),
        }
    }
    fn name(&self) -> &str {
        "context.tokenCounter"
    }
}

fn optional_function(obj: &JsValue, key: &str, what: &str) -> Result<Option<Function>> {
    let v = prop(obj, key);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.dyn_into::<Function>().map(Some).map_err(|v| {
        Error::invalid_argument(format!(
            "{what}.{key} must be a function, got {}",
            crate::drive::options::describe_value(&v)
        ))
    })
}

impl JsEnv {
    /// The callbacks for a summary written ahead: its own `signal` (linked to the context's,
    /// see `linkedAbort`), no `onText` (its text is nobody's progress to show),
    /// `background: true` in the summarizer's options (a caller may route it differently) and
    /// on every progress event.
    pub fn for_background(self, signal: JsValue) -> JsEnv {
        JsEnv {
            signal,
            on_text: JsValue::UNDEFINED,
            background: true,
            ..self
        }
    }

    /// The environment of one call that may give its own AbortSignal (`options.signal` of
    /// `Compactor.compact` / `maybeAutoCompact`, checked first with [`check_call_signal`]):
    /// the call is aborted by it or by the context's. Returns the environment and what to
    /// `release()` once the call has settled (see `eitherAbort`).
    pub fn with_call_signal(self, options: &JsValue) -> (JsEnv, JsValue) {
        let link = either_abort(&self.signal, &prop(options, "signal"));
        let signal = prop(&link, "signal");
        (JsEnv { signal, ..self }, link)
    }

    /// The context's abort signal (`undefined` when none).
    pub fn signal(&self) -> &JsValue {
        &self.signal
    }

    /// Reads the callbacks of `context` (`summarize` is required unless `summarize_optional`);
    /// `data` is the same `context` read by the core's parser (its `summaryTimeoutMs`).
    /// A getter of `context` that throws is an `INVALID_ARGUMENT` naming it
    /// ([`super::convert::reading`]).
    pub fn from_context(
        context: &JsValue,
        data: &ContextOptions,
        summarize_optional: bool,
    ) -> Result<JsEnv> {
        super::convert::reading("context", || {
            Self::read_context(context, data, summarize_optional)
        })
    }

    fn read_context(
        context: &JsValue,
        data: &ContextOptions,
        summarize_optional: bool,
    ) -> Result<JsEnv> {
        let summarize = match optional_function(context, "summarize", "context")? {
            Some(f) => f,
            None if summarize_optional => no_summarizer(),
            None => {
                return Err(Error::invalid_argument(
                    "context.summarize must be a function (request, {signal, onText}) => Promise<response>",
                ))
            }
        };
        let hooks_this = prop(context, "hooks");
        if !(hooks_this.is_undefined() || hooks_this.is_null() || hooks_this.is_object()) {
            return Err(Error::invalid_argument("context.hooks must be an object"));
        }
        let hooks = [
            optional_function(&hooks_this, "preCompact", "context.hooks")?,
            optional_function(&hooks_this, "sessionStart", "context.hooks")?,
            optional_function(&hooks_this, "postCompact", "context.hooks")?,
        ];
        let signal = prop(context, "signal");
        check_signal(&signal, "context.signal")?;
        let on_text = optional_function(context, "onText", "context")?;
        let session_memory = prop(context, "sessionMemory");
        if !(session_memory.is_undefined()
            || session_memory.is_null()
            || session_memory.is_string()
            || session_memory.is_function())
        {
            return Err(Error::invalid_argument(format!(
                "context.sessionMemory must be a string or a function returning one, got {}",
                crate::drive::options::describe_value(&session_memory)
            )));
        }
        Ok(JsEnv {
            summarize,
            read_file: optional_function(context, "readFile", "context")?,
            hooks,
            hooks_this,
            session_memory,
            signal,
            on_progress: optional_function(context, "onProgress", "context")?,
            on_text: on_text.map_or(JsValue::UNDEFINED, JsValue::from),
            summary_timeout_ms: data.summary_timeout_ms,
            background: false,
            summary_window: data.context.summary_window(&data.context.request_model()),
            counter: JsTextCounter::of_context(context)?,
        })
    }

    /// Calls a callback of the compaction (`readFile`, a hook; `what` names it in a timeout's
    /// message) under the same time limit as the summarizer (`summaryTimeoutMs`).
    fn call(&self, f: &Function, this: &JsValue, args: &[JsValue], what: &str) -> JsFuture {
        let arr: Array = args.iter().collect();
        JsFuture::from(call_abortable(
            f,
            this,
            &arr,
            &self.signal,
            self.summary_timeout_ms,
            what,
        ))
    }
}

/// A callback error as the core reads it ([`answers::call_error`]), the JS value kept as
/// `cause`.
pub fn call_error(e: JsValue, signal: &JsValue) -> CallError {
    let aborted = is_aborted(signal);
    CallError {
        cause: Some(Rc::new(e.clone())),
        ..answers::call_error(&e, aborted)
    }
}

/// The summary request as the JS object the summarizer receives, built field by field: the
/// rendered conversation's long texts cross as strings, not inside a JSON text that would be
/// escaped here and parsed again by `JSON.parse`. Same keys, order and values as the request's
/// `Serialize` form.
pub(crate) fn request_js(request: &SummaryRequest) -> super::convert::JsResult<JsValue> {
    let o = Object::new();
    let set = |o: &Object, k: &str, v: &JsValue| Reflect::set(o, &k.into(), v).map(|_| ());
    set(&o, "model", &request.model.as_str().into())?;
    if !request.system.is_empty() {
        set(&o, "system", &request.system.as_str().into())?;
    }
    let messages = Array::new();
    for m in &request.messages {
        messages.push(&match m {
            RequestMessage::Text(t) => {
                let message = Object::new();
                set(&message, "role", &t.role.as_str().into())?;
                let content = Array::new();
                for part in &t.content {
                    let block = Object::new();
                    set(&block, "type", &"text".into())?;
                    set(&block, "text", &part.text.as_str().into())?;
                    content.push(&block);
                }
                set(&message, "content", &content)?;
                message.into()
            }
            RequestMessage::Raw(v) => to_js(v)?,
        });
    }
    set(&o, "messages", &messages)?;
    set(&o, "max_tokens", &(request.max_tokens as f64).into())?;
    if let Some(c) = &request.compaction {
        set(&o, "compaction", &to_js(c)?)?;
    }
    Ok(o.into())
}

impl Environment for JsEnv {
    fn summarize(
        &self,
        request: &SummaryRequest,
    ) -> LocalFuture<'_, std::result::Result<SummaryResponse, CallError>> {
        let req = request_js(request);
        // Its `signal` is set by `callSummarizer` (one of the call's own).
        let opts = Object::new();
        if let Some(f) = self.on_text.dyn_ref::<Function>() {
            let _ = Reflect::set(&opts, &"onText".into(), f);
        }
        if self.background {
            let _ = Reflect::set(&opts, &"background".into(), &JsValue::TRUE);
        }
        let window = JsValue::from(self.summary_window as f64);
        let _ = Reflect::set(&opts, &"contextWindow".into(), &window);
        Box::pin(async move {
            let req = req.map_err(|_| CallError::new("could not build the summary request"))?;
            let v = JsFuture::from(call_summarizer(
                &self.summarize,
                &req,
                &opts,
                &self.signal,
                self.summary_timeout_ms,
            ))
            .await
            .map_err(|e| call_error(e, &self.signal))?;
            answers::summary_response(&v)
        })
    }

    fn has_read_file(&self) -> bool {
        self.read_file.is_some()
    }

    fn read_file(
        &self,
        path: &str,
    ) -> LocalFuture<'_, std::result::Result<Option<String>, CallError>> {
        let path = JsValue::from_str(path);
        Box::pin(async move {
            let Some(f) = &self.read_file else {
                return Ok(None);
            };
            let v = self
                .call(f, &JsValue::UNDEFINED, &[path], "context.readFile")
                .await
                .map_err(|e| call_error(e, &self.signal))?;
            // `fs.promises.readFile(path)` without an encoding answers a Buffer: its text
            // (it was read as no answer, and the file silently not restored).
            if let Some(text) = super::js_view::bytes_text(&v) {
                return Ok(Some(text));
            }
            Ok(answers::file_text(&v))
        })
    }

    fn run_hook(
        &self,
        kind: HookKind,
        input: Value,
    ) -> Option<LocalFuture<'_, std::result::Result<HookOutput, CallError>>> {
        let f = self.hooks[kind as usize].clone()?;
        Some(Box::pin(async move {
            let input =
                to_js(&input).map_err(|_| CallError::new("could not build the hook input"))?;
            let v = self
                .call(
                    &f,
                    &self.hooks_this,
                    &[input],
                    &format!("The {} hook", kind.name()),
                )
                .await
                .map_err(|e| call_error(e, &self.signal))?;
            // A field whose getter throws is reported beside what else the answer gives.
            let (out, threw) = super::convert::reading_on(|| answers::hook_output(kind, &v));
            let mut out = out?;
            if let Some((key, why)) = threw {
                out.problems.push(format!(
                    "the {} hook's answer: reading `{key}` threw: {why}; not used",
                    kind.name()
                ));
            }
            Ok(out)
        }))
    }

    fn has_session_memory(&self) -> bool {
        !(self.session_memory.is_undefined() || self.session_memory.is_null())
    }

    fn session_memory(&self) -> LocalFuture<'_, std::result::Result<Option<String>, CallError>> {
        Box::pin(async move {
            let v = match self.session_memory.dyn_ref::<Function>() {
                Some(f) => self
                    .call(f, &JsValue::UNDEFINED, &[], "context.sessionMemory")
                    .await
                    .map_err(|e| call_error(e, &self.signal))?,
                None => self.session_memory.clone(),
            };
            Ok(answers::session_memory_text(&v))
        })
    }

    fn sleep(&self, ms: u64) -> LocalFuture<'_, std::result::Result<(), CallError>> {
        Box::pin(async move {
            JsFuture::from(sleep_abortable(ms as f64, &self.signal))
                .await
                .map(|_| ())
                .map_err(|e| call_error(e, &self.signal))
        })
    }

    fn text_counter(&self) -> Option<&dyn TextCounter> {
        self.counter.as_ref().map(|c| c as &dyn TextCounter)
    }

    fn wait_limit_ms(&self) -> Option<u64> {
        (self.summary_timeout_ms > 0.0).then_some(self.summary_timeout_ms as u64)
    }

    fn pause(&self) -> LocalFuture<'_, std::result::Result<(), CallError>> {
        Box::pin(async move {
            next_turn_of_event_loop().await;
            self.check_abort()
        })
    }

    fn check_abort(&self) -> std::result::Result<(), CallError> {
        if is_aborted(&self.signal) {
            Err(CallError::aborted())
        } else {
            Ok(())
        }
    }

    fn progress(&self, event: &ProgressEvent) {
        if let Some(f) = &self.on_progress {
            let v = if self.background && !event.background {
                // A summary written ahead: every event of it is marked.
                to_js(&ProgressEvent {
                    background: true,
                    ..event.clone()
                })
            } else {
                to_js(event)
            };
            if let Ok(v) = v {
                notify(f, &v);
            }
        }
    }

    fn new_uuid(&self) -> String {
        new_uuid()
    }

    fn now_iso(&self) -> String {
        now_iso_js()
    }

    fn random(&self) -> f64 {
        js_sys::Math::random()
    }
}

/// Waits for the next turn of the caller's event loop (its timers, its abort events and
/// signal handlers run meanwhile).
pub async fn next_turn_of_event_loop() {
    let _ = JsFuture::from(next_turn()).await;
}

/// Whether the caller's abort signal fired.
pub fn aborted(signal: &JsValue) -> bool {
    is_aborted(signal)
}
