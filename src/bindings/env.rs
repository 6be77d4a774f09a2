//! The pipeline's [`Environment`] over the caller's JS `context`: callbacks become awaited
//! Promises (wasm-bindgen-futures), errors become [`CallError`]s that keep the original JS
//! error as `cause`, and the AbortSignal interrupts every wait.

use std::rc::Rc;

use js_sys::{Array, Function, Object, Reflect};
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::convert::{prop, to_js};
use crate::drive::env::{CallError, Environment, HookKind, HookOutput, LocalFuture, ProgressEvent};
use crate::drive::options::{error_text, ContextOptions};
use crate::model::error::{Error, Result};
use crate::model::view::UsageCounts;
use crate::summarize::summary::{SummaryRequest, SummaryResponse};

#[wasm_bindgen(module = "/src/bindings/js_env.js")]
extern "C" {
    #[wasm_bindgen(js_name = callAbortable)]
    fn call_abortable(
        f: &Function,
        this: &JsValue,
        args: &Array,
        signal: &JsValue,
        timeout_ms: f64,
    ) -> js_sys::Promise;
    #[wasm_bindgen(js_name = sleepAbortable)]
    fn sleep_abortable(ms: f64, signal: &JsValue) -> js_sys::Promise;
    #[wasm_bindgen(js_name = isAborted)]
    fn is_aborted(signal: &JsValue) -> bool;
    fn notify(f: &Function, event: &JsValue);
    /// A random (v4) UUID: `crypto.randomUUID()`, else one drawn with `Math.random()`.
    #[wasm_bindgen(js_name = newUuid)]
    pub fn new_uuid() -> String;
    #[wasm_bindgen(js_name = nowIso)]
    fn now_iso_js() -> String;
    #[wasm_bindgen(js_name = clearState)]
    pub fn clear_state(v: &JsValue);
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
}

fn optional_function(obj: &JsValue, key: &str, what: &str) -> Result<Option<Function>> {
    let v = prop(obj, key);
    if v.is_undefined() || v.is_null() {
        return Ok(None);
    }
    v.dyn_into::<Function>()
        .map(Some)
        .map_err(|_| Error::invalid_argument(format!("{what}.{key} must be a function")))
}

impl JsEnv {
    /// Reads the callbacks of `context` (`summarize` is required unless `summarize_optional`);
    /// `data` is the same `context` read by the core's parser (its `summaryTimeoutMs`).
    pub fn from_context(
        context: &JsValue,
        data: &ContextOptions,
        summarize_optional: bool,
    ) -> Result<JsEnv> {
        let summarize = match optional_function(context, "summarize", "context")? {
            Some(f) => f,
            None if summarize_optional => Function::new_no_args("throw new Error('no summarize callback')"),
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
        if !(signal.is_undefined() || signal.is_null())
            && prop(&signal, "aborted").as_bool().is_none()
        {
            return Err(Error::invalid_argument(
                "context.signal must be an AbortSignal",
            ));
        }
        Ok(JsEnv {
            summarize,
            read_file: optional_function(context, "readFile", "context")?,
            hooks,
            hooks_this,
            session_memory: prop(context, "sessionMemory"),
            signal,
            on_progress: optional_function(context, "onProgress", "context")?,
            on_text: prop(context, "onText"),
            summary_timeout_ms: data.summary_timeout_ms,
        })
    }

    fn call(&self, f: &Function, this: &JsValue, args: &[JsValue]) -> JsFuture {
        self.call_with_timeout(f, this, args, 0.0)
    }

    fn call_with_timeout(
        &self,
        f: &Function,
        this: &JsValue,
        args: &[JsValue],
        ms: f64,
    ) -> JsFuture {
        let arr: Array = args.iter().collect();
        JsFuture::from(call_abortable(f, this, &arr, &self.signal, ms))
    }
}

/// A callback error as the core sees it; the JS value is kept as `cause`.
pub fn call_error(e: JsValue, signal: &JsValue) -> CallError {
    let (message, status) = error_text(&e);
    let retry_after_ms = prop(&e, "retryAfterMs")
        .as_f64()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| v as u64);
    CallError {
        status,
        message: if message.is_empty() {
            e.as_string().unwrap_or_else(|| "unknown error".into())
        } else {
            message
        },
        // Only the caller's signal cancels: an AbortError a callback raised on its own
        // (its own timeout, its own controller) is an ordinary failure of that callback.
        aborted: is_aborted(signal),
        retries_exhausted: prop(&e, "retriesExhausted").as_bool() == Some(true),
        timed_out: prop(&e, "contextCompactionTimeout").as_bool() == Some(true),
        retry_after_ms,
        cause: Some(Rc::new(e)),
    }
}

fn text_of_content(content: &JsValue) -> String {
    if let Some(s) = content.as_string() {
        return s;
    }
    let Some(arr) = content.dyn_ref::<Array>() else {
        return String::new();
    };
    let mut out = String::new();
    for b in arr.iter() {
        if prop(&b, "type").as_string().as_deref() == Some("text") {
            if let Some(t) = prop(&b, "text").as_string() {
                out.push_str(&t);
            }
        }
    }
    out
}

fn usage_of(v: &JsValue) -> Option<UsageCounts> {
    let u = prop(v, "usage");
    if !u.is_object() {
        return None;
    }
    let n = |k: &str| prop(&u, k).as_f64().filter(|x| x.is_finite() && *x >= 0.0);
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

/// Reads a summarizer's answer: a string, or a Messages API response body.
pub fn summary_response(v: &JsValue) -> std::result::Result<SummaryResponse, CallError> {
    if let Some(s) = v.as_string() {
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
    let content = prop(v, "content");
    if content.is_undefined() {
        return Err(CallError::new(
            "the summarizer's response has no `content` (expected a Messages API response body)",
        ));
    }
    Ok(SummaryResponse {
        text: text_of_content(&content),
        stop_reason: prop(v, "stop_reason").as_string(),
        usage: usage_of(v),
    })
}

fn hook_output(kind: HookKind, v: &JsValue) -> HookOutput {
    let mut out = HookOutput::default();
    if let Some(s) = v.as_string() {
        match kind {
            HookKind::PreCompact => out.instructions = Some(s),
            HookKind::SessionStart => out.messages.push(s),
            HookKind::PostCompact => out.user_display_message = Some(s),
        }
        return out;
    }
    if let Some(arr) = v.dyn_ref::<Array>() {
        out.messages = arr.iter().filter_map(|x| x.as_string()).collect();
        return out;
    }
    let s = |k: &str| prop(v, k).as_string();
    out.instructions = s("instructions")
        .or_else(|| s("customInstructions"))
        .or_else(|| s("newCustomInstructions"));
    out.user_display_message = s("userDisplayMessage").or_else(|| s("displayMessage"));
    let msgs = prop(v, "messages");
    if let Some(arr) = msgs.dyn_ref::<Array>() {
        out.messages = arr
            .iter()
            .filter_map(|x| x.as_string().or_else(|| prop(&x, "content").as_string()))
            .collect();
    } else if let Some(t) = s("additionalContext").or_else(|| s("message")) {
        out.messages.push(t);
    }
    out
}

impl Environment for JsEnv {
    fn summarize(
        &self,
        request: &SummaryRequest,
    ) -> LocalFuture<'_, std::result::Result<SummaryResponse, CallError>> {
        let req = to_js(request);
        let opts = Object::new();
        let _ = Reflect::set(&opts, &"signal".into(), &self.signal);
        if let Some(f) = self.on_text.dyn_ref::<Function>() {
            let _ = Reflect::set(&opts, &"onText".into(), f);
        }
        Box::pin(async move {
            let req = req.map_err(|_| CallError::new("could not build the summary request"))?;
            let v = self
                .call_with_timeout(
                    &self.summarize,
                    &JsValue::UNDEFINED,
                    &[req, opts.into()],
                    self.summary_timeout_ms,
                )
                .await
                .map_err(|e| call_error(e, &self.signal))?;
            summary_response(&v)
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
                .call(f, &JsValue::UNDEFINED, &[path])
                .await
                .map_err(|e| call_error(e, &self.signal))?;
            Ok(v.as_string().or_else(|| prop(&v, "content").as_string()))
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
                .call(&f, &self.hooks_this, &[input])
                .await
                .map_err(|e| call_error(e, &self.signal))?;
            Ok(hook_output(kind, &v))
        }))
    }

    fn session_memory(&self) -> LocalFuture<'_, std::result::Result<Option<String>, CallError>> {
        Box::pin(async move {
            let v = match self.session_memory.dyn_ref::<Function>() {
                Some(f) => self
                    .call(f, &JsValue::UNDEFINED, &[])
                    .await
                    .map_err(|e| call_error(e, &self.signal))?,
                None => self.session_memory.clone(),
            };
            Ok(v.as_string().filter(|s| !s.trim().is_empty()))
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

    fn check_abort(&self) -> std::result::Result<(), CallError> {
        if is_aborted(&self.signal) {
            Err(CallError::aborted())
        } else {
            Ok(())
        }
    }

    fn progress(&self, event: &ProgressEvent) {
        if let Some(f) = &self.on_progress {
            if let Ok(v) = to_js(event) {
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
