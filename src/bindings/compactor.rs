//! `Compactor`: a stateful conversation for chat UIs and agents. It holds the caller's
//! message objects and a running token count inside WASM, so a turn costs the work of its new
//! messages, not of the whole history; compactions replace the history and keep, in order,
//! the messages pushed while they ran.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Array, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use super::async_exports::{
    auto_outcome_js, commit_context, compact_error, compactor_compact_options, context_arg,
    context_options, messages_arg, result_js,
};
use super::convert::*;
use super::env::JsEnv;
use super::js_view::JsConversation;
use crate::drive::autocompact::{self, ShouldAutoCompactOptions, Tracking};
use crate::drive::pipeline::{self, CompactionResult};
use crate::measure::thresholds;
use crate::measure::tokens::{message_facts, RunningCount};
use crate::model::error::{Error, ErrorCode};

struct State {
    messages: Vec<JsValue>,
    count: RunningCount,
    tracking: Tracking,
    thrash: autocompact::ThrashDetector,
    compacting: bool,
}

impl State {
    fn push_all(&mut self, array: &JsValue) -> crate::Result<()> {
        let conv = JsConversation::new(array, "messages")?;
        let mut facts = Vec::with_capacity(crate::model::view::ConversationView::len(&conv));
        for i in 0..facts.capacity() {
            facts.push(message_facts(&conv, i)?);
        }
        // All read and valid: only now is anything added.
        for (i, f) in facts.iter().enumerate() {
            self.count.push(f);
            self.messages.push(conv.item(i));
        }
        Ok(())
    }

    fn array(&self) -> Array {
        self.messages.iter().collect()
    }
}

/// A conversation that keeps its own token count and compacts itself.
///
/// ```js
/// const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: anthropicSummarizer({ apiKey }) });
/// c.push({ role: 'user', content: 'hello' });
/// c.warningState();            // O(1)
/// await c.maybeAutoCompact();  // compacts when the threshold is crossed
/// ```
#[wasm_bindgen]
pub struct Compactor {
    state: Rc<RefCell<State>>,
    context: JsValue,
    model: String,
    config: crate::model::config::Config,
}

#[wasm_bindgen]
impl Compactor {
    /// `new Compactor({model, summarize, hooks, config, readFile, readFileState, …,
    /// messages?})`: the options are the `context` of `compactConversation`; `messages`
    /// seeds the history.
    #[wasm_bindgen(constructor)]
    pub fn new(options: JsValue) -> JsResult<Compactor> {
        let ctx = js(context_arg(&options))?;
        js(JsEnv::from_context(&options, true))?;
        let mut state = State {
            messages: Vec::new(),
            count: RunningCount::default(),
            tracking: Tracking::default(),
            thrash: Default::default(),
            compacting: false,
        };
        let initial = prop(&options, "messages");
        if !(initial.is_undefined() || initial.is_null()) {
            js(state.push_all(&initial))?;
        }
        Ok(Compactor {
            state: Rc::new(RefCell::new(state)),
            context: options,
            model: ctx.model,
            config: ctx.config,
        })
    }

    /// Appends one message (API shape or transcript line). Throws on a malformed message
    /// and then adds nothing.
    pub fn push(&self, message: JsValue) -> JsResult<()> {
        let arr = Array::of1(&message);
        js(self.state.borrow_mut().push_all(&arr))
    }

    /// Appends several messages, all or none.
    #[wasm_bindgen(js_name = pushMany)]
    pub fn push_many(&self, messages: JsValue) -> JsResult<()> {
        js(self.state.borrow_mut().push_all(&messages))
    }

    /// The conversation (a new array of the caller's message objects).
    #[wasm_bindgen(getter)]
    pub fn messages(&self) -> Array {
        self.state.borrow().array()
    }

    /// Number of messages.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> u32 {
        self.state.borrow().messages.len() as u32
    }

    /// The context size in tokens (same as `tokenCountWithEstimation(messages)`).
    #[wasm_bindgen(js_name = tokenCount)]
    pub fn token_count(&self) -> f64 {
        self.state.borrow().count.total() as f64
    }

    /// `calculateTokenWarningState` for the current size and the model.
    #[wasm_bindgen(js_name = warningState)]
    pub fn warning_state(&self) -> JsResult<JsValue> {
        let total = self.state.borrow().count.total();
        to_js(&thresholds::token_warning_state(
            total,
            &self.model,
            &self.config,
        ))
    }

    /// `{consecutiveFailures}` of automatic compaction.
    #[wasm_bindgen(getter)]
    pub fn tracking(&self) -> JsResult<JsValue> {
        let o = Object::new();
        let s = self.state.borrow();
        Reflect::set(
            &o,
            &"consecutiveFailures".into(),
            &s.tracking.consecutive_failures.into(),
        )?;
        Reflect::set(&o, &"thrashing".into(), &s.thrash.thrashing.into())?;
        Ok(o.into())
    }

    /// Whether a compaction is running.
    #[wasm_bindgen(getter)]
    pub fn compacting(&self) -> bool {
        self.state.borrow().compacting
    }

    /// The conversation as Claude Code JSONL.
    #[wasm_bindgen(js_name = toTranscript)]
    pub fn to_transcript(&self) -> JsResult<String> {
        super::exports::serialize_transcript(self.state.borrow().array().into())
    }

    /// Compacts when auto-compaction is due (SPEC §6): `{wasCompacted, compactionResult?,
    /// consecutiveFailures, error?, skipped?}`. Failures are reported, not thrown.
    #[wasm_bindgen(js_name = maybeAutoCompact)]
    pub fn maybe_auto_compact(&self) -> Promise {
        // Decided and snapshotted now, synchronously: messages pushed after this call are
        // kept after the summary.
        self.state.borrow_mut().thrash.turn();
        let skipped = {
            let s = self.state.borrow();
            let threshold = thresholds::auto_compact_threshold(&self.model, &self.config);
            if s.compacting {
                Some("compacting")
            } else if s.thrash.thrashing && s.count.total() >= threshold {
                Some("thrashing")
            } else if s.tracking.consecutive_failures
                >= autocompact::MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES
            {
                Some("circuitBreakerOpen")
            } else if !self.config.is_auto_compact_enabled()
                || self.config.reactive_only == Some(true)
                || self.config.context_collapse == Some(true)
            {
                Some("disabled")
            } else if s.count.total() < threshold {
                Some("belowThreshold")
            } else {
                None
            }
        };
        let failures = self.state.borrow().tracking.consecutive_failures;
        if let Some(why) = skipped {
            let out = Object::new();
            let _ = Reflect::set(&out, &"wasCompacted".into(), &false.into());
            let _ = Reflect::set(&out, &"consecutiveFailures".into(), &failures.into());
            let _ = Reflect::set(&out, &"skipped".into(), &why.into());
            if why == "thrashing" {
                let e = js_error(Error::new(
                    ErrorCode::Thrashing,
                    autocompact::ThrashDetector::message(),
                ));
                let _ = Reflect::set(&out, &"error".into(), &e);
            }
            return Promise::resolve(&JsValue::from(out));
        }
        let prepared = context_options(&self.context)
            .and_then(|c| JsEnv::from_context(&self.context, false).map(|env| (c, env)));
        let (c, env) = match prepared {
            Ok(p) => p,
            Err(e) => return Promise::reject(&js_error(e)),
        };
        let (snapshot, typed) = match begin(&self.state) {
            Ok(b) => b,
            Err(e) => return Promise::reject(&e),
        };
        let state = self.state.clone();
        let context = self.context.clone();
        let tracking = state.borrow().tracking.clone();
        future_to_promise(async move {
            let query = ShouldAutoCompactOptions::default();
            let res = autocompact::auto_compact_if_needed(
                &typed, &c.context, &tracking, &query, &c.retry, &env,
            )
            .await;
            let outcome = match res {
                Ok(o) => o,
                Err(e) => {
                    end(&state);
                    return Err(js_error(e));
                }
            };
            state.borrow_mut().tracking.consecutive_failures = outcome.consecutive_failures;
            let result = match &outcome.result {
                Some(r) => {
                    let js_result = result_js(r, &snapshot, &context)?;
                    commit(&state, &snapshot, r, &js_result)?;
                    commit_context(&context);
                    state.borrow_mut().thrash.compacted();
                    Some(js_result)
                }
                None => {
                    end(&state);
                    None
                }
            };
            auto_outcome_js(outcome, result)
        })
    }

    /// Compacts now (manual, `/compact [instructions]`): resolves to the `CompactionResult`,
    /// rejects with a coded `Error`; on failure the conversation is unchanged.
    pub fn compact(&self, options: JsValue) -> Promise {
        let prepared = (|| -> crate::Result<_> {
            // A manual compaction: the automatic-only options are not options here.
            let opts = compactor_compact_options(&options)?;
            let ctx = context_arg(&self.context)?;
            let env = JsEnv::from_context(&self.context, false)?;
            Ok((ctx, env, opts))
        })();
        let (ctx, env, opts) = match prepared {
            Ok(p) => p,
            Err(e) => return Promise::reject(&js_error(e)),
        };
        let (snapshot, typed) = match begin(&self.state) {
            Ok(b) => b,
            Err(e) => return Promise::reject(&e),
        };
        let state = self.state.clone();
        let context = self.context.clone();
        future_to_promise(async move {
            let r = match pipeline::compact_conversation(&typed, &ctx, &opts, &env).await {
                Ok(r) => r,
                Err(e) => {
                    end(&state);
                    return Err(compact_error(e));
                }
            };
            let js_result = result_js(&r, &snapshot, &context)?;
            commit(&state, &snapshot, &r, &js_result)?;
            commit_context(&context);
            state.borrow_mut().thrash.reset();
            Ok(js_result)
        })
    }
}

/// Marks the start of a compaction and takes the messages it works on.
fn begin(state: &Rc<RefCell<State>>) -> JsResult<(JsValue, Vec<crate::model::messages::Message>)> {
    let mut s = state.borrow_mut();
    if s.compacting {
        return Err(js_error(Error::invalid_argument(
            "a compaction is already running on this Compactor",
        )));
    }
    let snapshot: JsValue = s.array().into();
    let typed = js(messages_arg(&snapshot))?;
    s.compacting = true;
    Ok((snapshot, typed))
}

fn end(state: &Rc<RefCell<State>>) {
    state.borrow_mut().compacting = false;
}

/// Replaces the history with the compacted one, followed by what was pushed meanwhile.
fn commit(
    state: &Rc<RefCell<State>>,
    snapshot: &JsValue,
    _r: &CompactionResult,
    js_result: &JsValue,
) -> JsResult<()> {
    let compacted = super::exports::build_post_compact_messages(js_result.clone())
        .inspect_err(|_| end(state))?;
    let mut s = state.borrow_mut();
    s.compacting = false;
    let before = snapshot.unchecked_ref::<Array>().length() as usize;
    let pending: Vec<JsValue> = s.messages[before..].to_vec();
    let mut fresh = State {
        messages: Vec::new(),
        count: RunningCount::default(),
        tracking: s.tracking.clone(),
        thrash: s.thrash.clone(),
        compacting: false,
    };
    let all: Array = compacted.iter().chain(pending).collect();
    fresh.push_all(&all).map_err(|e| {
        js_error(Error::new(
            ErrorCode::InvalidMessage,
            format!(
                "the compacted conversation could not be read back: {}",
                e.message
            ),
        ))
    })?;
    *s = fresh;
    Ok(())
}
