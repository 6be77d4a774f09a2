//! `Compactor`: a stateful conversation for chat UIs and agents. It holds the caller's
//! message objects and a running token count inside WASM, so a turn costs the work of its new
//! messages, not of the whole history; compactions replace the history and keep, in order,
//! the messages pushed while they ran.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Array, Object, Promise, Reflect};
use wasm_bindgen::prelude::*;

use super::async_exports::{
    auto_outcome_js, compact_error, messages_for_compaction, promise_of, result_js, Compacted,
};
use super::convert::*;
use super::env::{commit_context, JsEnv};
use super::js_view::{JsConversation, TokenCounter};
use crate::drive::ahead::{AheadState, Ticket};
use crate::drive::options;
use crate::drive::pipeline::{self, CompactionResult};
use crate::drive::preemptive::{self, AheadUse};
use crate::drive::session::{Compaction, Session};
use crate::drive::snapshot::SessionSnapshot;
use crate::model::shape::{Shape, ShapeOf};
use crate::model::view::ConversationView;
use crate::transforms::boundary::Trigger;

/// The session's state, shared with the promises of running compactions.
type Shared = Rc<RefCell<Session<JsValue>>>;

/// The session, borrowed to read: an `INVALID_ARGUMENT` error instead of a trap when the
/// `Compactor` is called while one of its own calls holds the session to read the caller's
/// messages (from a message getter, a `toJSON` or a callback).
fn read(session: &Shared) -> crate::Result<std::cell::Ref<'_, Session<JsValue>>> {
    session.try_borrow().map_err(|_| busy())
}

#[wasm_bindgen(module = "/src/bindings/js_env.js")]
extern "C" {
    /// Holds `v` weakly: the options' callbacks may refer back to the `Compactor`, and a JS
    /// value WASM holds is a GC root, so held strongly they would keep it alive for good (its
    /// finalizer never run). The glue's `__ccKept` holds them as long as the JS object lives.
    fn weakly(v: &JsValue) -> JsValue;
    /// What [`weakly`] holds.
    fn strongly(h: &JsValue) -> JsValue;
}

#[wasm_bindgen(module = "/src/bindings/js_transcript.js")]
extern "C" {
    /// What a `Compactor` carries from one push to the next to follow the `parentUuid`
    /// chain of its lines (`chainState`).
    #[wasm_bindgen(js_name = chainState)]
    fn chain_state() -> JsValue;
    /// Reads the lines of `arr` pushed after those `state` has read (with `restart`, `state`
    /// starts afresh: `arr` is the whole conversation): true once a pushed line does not hang
    /// as written (a rewind, a resume under another parent) or the lines are a sub-agent's
    /// own; the held messages are then read along their chain ([`JsConversation::new`]) after
    /// every push.
    #[wasm_bindgen(js_name = chainStep)]
    fn chain_step(state: &JsValue, arr: &JsValue, restart: bool) -> bool;
}

/// The session, borrowed to change ([`read`]).
fn write(session: &Shared) -> crate::Result<std::cell::RefMut<'_, Session<JsValue>>> {
    session.try_borrow_mut().map_err(|_| busy())
}

fn busy() -> crate::Error {
    crate::Error::invalid_argument(
        "this Compactor was called while one of its own calls was running the caller's code \
         (a getter or toJSON of a message or option, the tokenCounter): call it after that call \
         returns",
    )
}

/// A call of a `Compactor` in progress: while it lasts, every other call of the same
/// `Compactor` is refused with the [`busy`] error. Its synchronous calls (and the moment a
/// compaction's result is put in place) read the caller's values, whose getters, `toJSON`s
/// and callbacks may call the `Compactor` again; such a call would find the session half
/// read or half changed (a count taken before it, a compaction begun), or borrowed.
struct InCall<'a>(&'a Cell<bool>);

impl<'a> InCall<'a> {
    fn enter(flag: &'a Cell<bool>) -> crate::Result<InCall<'a>> {
        if flag.replace(true) {
            return Err(busy());
        }
        Ok(InCall(flag))
    }
}

impl Drop for InCall<'_> {
    fn drop(&mut self) {
        self.0.set(false);
    }
}

/// Ends a compaction that failed (the session is never borrowed here: this runs outside the
/// caller's code, or after the call that borrowed it returned).
fn abandon(session: &Shared, compaction: Compaction) {
    if let Ok(mut s) = write(session) {
        s.abandon(compaction);
    }
}

/// Appends the messages of the JS array `array` (all or none). `shape` is what the messages
/// before them showed (or the `shape` option named): a message of another shape is a
/// `MIXED_SHAPES` error naming its index in the whole conversation, and nothing is added.
/// The most messages a `Compactor` holds: each is a handle in the instance's table, which
/// cannot grow without bound (10,000,000 messages trapped it).
const MAX_HELD: usize = 1 << 22;

fn push_array(
    session: &Shared,
    shape: &Cell<ShapeOf>,
    links: &JsValue,
    array: &JsValue,
    context: &JsValue,
) -> crate::Result<()> {
    let base = read(session)?.len();
    let counter = TokenCounter::enter(context, "options")?;
    let conv = JsConversation::continuing(array, "messages", shape.get(), base)?;
    if base + conv.len() > MAX_HELD {
        return Err(crate::Error::invalid_argument(format!(
            "a Compactor holds at most {MAX_HELD} messages; it holds {base} and was given {} more",
            conv.len()
        )));
    }
    if counter.is_active() {
        // The tokenizer's problems are found before anything is added (all or none).
        crate::measure::tokens::estimate_range(&conv, 0..conv.len())?;
        counter.finish()?;
    }
    write(session)?.push_all(&conv, JsConversation::item)?;
    shape.set(conv.shape_of());
    if chain_step(links, array, false) {
        recount(session)?;
    }
    Ok(())
}

/// Reads the running count of the messages held again, along the `parentUuid` chain of a
/// Claude Code session file (SPEC §2: what `tokenCountWithEstimation` of them counts).
fn recount(session: &Shared) -> crate::Result<()> {
    let all = held(session)?;
    let conv = JsConversation::new(&all, "messages")?;
    write(session)?.recount(&conv)
}

/// The messages the session holds, as a JS array.
fn held(session: &Shared) -> crate::Result<Array> {
    Ok(read(session)?.messages().iter().collect())
}

/// Starts `links` afresh on the messages held (a compaction replaced them, a snapshot
/// restored them), reading the count again along their chain when it is not file order.
fn relink(session: &Shared, links: &JsValue) -> crate::Result<()> {
    let all = held(session)?;
    if chain_step(links, &all, true) {
        recount(session)?;
    }
    Ok(())
}

/// Starts a summary written ahead when the session wants one (`preemptive` on, the count past
/// the early line, none running or fresh): the JS summarizer is called and not awaited; its
/// result lands in the session (or is dropped there when the conversation was replaced
/// meanwhile). Never throws: a summary that cannot start is recorded as the background's error.
fn start_ahead(session: &Shared, shape: Shape, context: &JsValue, seen: &AheadSeen) {
    // (`snipTokensFreed` as the check for an automatic compaction reads it; unreadable: 0.)
    let snip = || options::auto_options(context).map_or(0, |o| o.snip_tokens_freed);
    if !read(session).is_ok_and(|s| s.wants_ahead(snip)) {
        return;
    }
    let prepared = (|| -> crate::Result<_> {
        let c = reading("options", || options::compactor_context(context))?;
        let env = JsEnv::from_context(context, &c, false)?;
        let array: JsValue = held(session)?.into();
        let mut taken = messages_for_compaction(
            &array,
            (shape != Shape::Any).then_some(shape),
            super::convert::Reading::Whole,
        )?;
        taken.give_usage(read(session)?.given_usage());
        // (None: no earlier turn to summarize yet, or one would be stale before a swap.)
        let plan = read(session)?.ahead_plan(taken.typed.as_slice())?;
        Ok(plan.map(|plan| (c, env, taken, plan.cut, plan.tail)))
    })();
    let (c, env, taken, cut, tail) = match prepared {
        Ok(Some(p)) => p,
        Ok(None) => return,
        Err(e) => {
            if let Ok(mut s) = write(session) {
                let (ticket, _) = s.start_ahead(0, 0);
                s.ahead_landed(ticket, Err(e));
            }
            return;
        }
    };
    let Ok((ticket, earlier)) = write(session).map(|mut s| s.start_ahead(cut, tail)) else {
        return;
    };
    hold_seen(seen, session, ticket, context);
    // Its own signal, aborted with the Compactor's or when the conversation it is for is
    // replaced (the session cancels it then: a summary nobody will use stops costing tokens).
    let link = super::env::linked_abort(env.signal());
    let env = env.for_background(prop(&link, "signal"));
    let cancel_link = link.clone();
    let mut ctx = c.context;
    ctx.for_shape(taken.shape());
    if let Ok(mut s) = write(session) {
        s.set_ahead_cancel(
            ticket,
            crate::drive::ahead::Cancel::new(move || call_method(&cancel_link, "cancel")),
        );
        ctx.calibration = Some(s.calibration().clone());
    }
    let session = session.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let r = preemptive::summarize_ahead(
            &env,
            &taken.typed,
            (cut, true, true),
            earlier.as_ref(),
            &ctx,
            &c.retry,
        )
        .await;
        call_method(&link, "release");
        // Lands after the call that started it returned: nothing holds the session then.
        if let Ok(mut s) = write(&session) {
            s.ahead_landed(ticket, r.map_err(|e| e.error));
        }
    });
}

/// What each summary written ahead read of the caller's states that a compaction clears
/// (`readFileState`, …) when it started, by its ticket: a swap clears what its summary saw,
/// not what the agent read while it was written (those reads are in the messages it keeps).
type AheadSeen = Rc<RefCell<Vec<(Ticket, JsValue)>>>;

/// Keeps what the summary started with `ticket` read of the states (see [`AheadSeen`]), and
/// of the others only the ready one's (a swap may take it while this one runs).
#[inline(never)]
fn hold_seen(seen: &AheadSeen, session: &Shared, ticket: Ticket, context: &JsValue) {
    let Ok(s) = read(session) else { return };
    let ready = s.background().ready_ticket();
    let mut held = seen.borrow_mut();
    held.retain(|(t, _)| Some(*t) == ready);
    held.push((ticket, super::env::seen_states(context)));
}

/// What the summary started with `ticket` read of the states when it started: a swap of it
/// clears only those entries.
#[inline(never)]
fn held_seen(seen: &AheadSeen, ticket: Option<Ticket>) -> Option<JsValue> {
    let held = seen.borrow();
    held.iter()
        .find(|(t, _)| Some(*t) == ticket)
        .map(|(_, s)| s.clone())
}

/// `work`, then `link.release()` however it settled (`eitherAbort`'s link to a call's own
/// signal: a long-lived signal keeps no listener per call).
async fn released<T>(link: JsValue, work: impl std::future::Future<Output = T>) -> T {
    let r = work.await;
    call_method(&link, "release");
    r
}

/// Calls `obj[name]()` of an object the glue made (`linkedAbort`'s, `eitherAbort`'s); never throws.
fn call_method(obj: &JsValue, name: &str) {
    if let Ok(f) = prop(obj, name).dyn_into::<js_sys::Function>() {
        let _ = f.call0(obj);
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
    session: Shared,
    /// The options given (`context` of every compaction), held weakly ([`Compactor::context`]).
    options: JsValue,
    /// The shape of the conversation's messages, as far as they showed it.
    shape: Cell<ShapeOf>,
    /// The last `warningState()` answer and the count it was made for: a chat UI asks on every
    /// render, and while the count is the same the answer is the same object.
    warning: RefCell<Option<(u64, JsValue)>>,
    /// What the pushes told of the `parentUuid` chain of Claude Code lines (`chain_step`).
    links: JsValue,
    /// Set while one of its calls is in progress ([`InCall`]); shared with the promises of
    /// its compactions, which put their result in place under it.
    busy: Rc<Cell<bool>>,
    /// What the summaries written ahead read when they started ([`AheadSeen`]).
    ahead_seen: AheadSeen,
}

/// A `Compactor` freed (`free()`, the end of a `using` block) or reclaimed by its finalizer:
/// the summary written ahead, if one is running, is cancelled (its request aborted, or never
/// sent when it has not started yet): nobody can swap it in any longer, and it went on costing
/// tokens (and, with the default `summaryTimeoutMs`, kept a Node process alive up to 10
/// minutes). A compaction in flight keeps the session and ends as it would have.
impl Drop for Compactor {
    fn drop(&mut self) {
        if let Ok(mut s) = write(&self.session) {
            s.drop_ahead();
        }
    }
}

#[wasm_bindgen]
impl Compactor {
    /// `new Compactor({model, summarize, hooks, config, readFile, readFileState, …,
    /// messages?})`: the options are the `context` of `compactConversation`; `messages`
    /// seeds the history.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_param_type = "CompactorOptions<MessageInput>")] options: JsValue,
    ) -> JsResult<Compactor> {
        let c = js(reading("options", || options::compactor_context(&options)))?;
        js(JsEnv::from_context(&options, &c, true))?;
        js(TokenCounter::enter(&options, "options"))?; // a function, or absent
        let ctx = c.context;
        let early_line = js(reading("options", || {
            options::preemptive(&options, &ctx.model, &ctx.config)
        }))?;
        let mut fresh = Session::new(ctx.model, ctx.config);
        fresh.set_preamble(c.auto.preamble);
        fresh.set_early_line(early_line);
        let session = Rc::new(RefCell::new(fresh));
        let shape = Cell::new(c.shape.map(ShapeOf::named).unwrap_or_default());
        let initial = prop(&options, "messages");
        let links = chain_state();
        let ahead_seen = AheadSeen::default();
        if !(initial.is_undefined() || initial.is_null()) {
            js(push_array(&session, &shape, &links, &initial, &options))?;
            start_ahead(&session, shape.get().shape(), &options, &ahead_seen);
        }
        Ok(Compactor {
            session,
            options: weakly(&options),
            shape,
            warning: RefCell::new(None),
            links,
            busy: Rc::default(),
            ahead_seen,
        })
    }

    /// Appends one message (API shape or transcript line). Throws on a malformed message
    /// and then adds nothing. The message is measured now: push a streamed reply once it
    /// is complete (a change made to it in place later is not counted).
    pub fn push(
        &self,
        #[wasm_bindgen(unchecked_param_type = "MessageInput")] message: JsValue,
    ) -> JsResult<()> {
        self.append(&Array::of1(&message))
    }

    /// Gives the count the usage the provider reported for the latest response, when its
    /// message does not carry it (AI SDK `result.usage`, OpenAI `completion.usage`, in any
    /// ecosystem's names): the running count is then anchored there, exactly as if the message
    /// carried it. A usage whose counts are all 0 or left undefined (a provider that reports
    /// none) changes nothing. Throws `INVALID_ARGUMENT` when no response was pushed since the
    /// conversation began or was compacted, or the usage is not a usage object.
    #[wasm_bindgen(js_name = setUsage)]
    pub fn set_usage(
        &self,
        #[wasm_bindgen(unchecked_param_type = "GivenUsage['usage']")] usage: JsValue,
    ) -> JsResult<()> {
        let _call = js(self.call())?;
        let counts = js(reading("usage", || options::usage_counts(&usage, "usage")))?;
        js(js(write(&self.session))?.set_usage(counts))
    }

    /// Appends several messages, all or none.
    #[wasm_bindgen(js_name = pushMany)]
    pub fn push_many(
        &self,
        #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    ) -> JsResult<()> {
        self.append(&messages)
    }

    /// The conversation (a new array of the caller's message objects).
    #[wasm_bindgen(
        getter,
        unchecked_return_type = "Array<PostCompactMessage<MessageInput>>"
    )]
    pub fn messages(&self) -> JsResult<Array> {
        let _call = js(self.call())?;
        js(held(&self.session))
    }

    /// Number of messages.
    #[wasm_bindgen(getter)]
    pub fn length(&self) -> JsResult<u32> {
        let _call = js(self.call())?;
        Ok(js(read(&self.session))?.len() as u32)
    }

    /// The context size in tokens (same as `tokenCountWithEstimation(messages)`).
    #[wasm_bindgen(js_name = tokenCount)]
    pub fn token_count(&self) -> JsResult<f64> {
        let _call = js(self.call())?;
        Ok(js(read(&self.session))?.token_count() as f64)
    }

    /// What the usage seen so far teaches about the requests' real size: `{overhead, ratio,
    /// observations}` (`overhead`: tokens each request sends besides the messages, such as
    /// the system prompt and tools; `ratio`: real tokens per estimated token of the
    /// messages), or `null` until the usage seen separates the two. Where no usage anchors
    /// the count (right after a compaction) the count is `overhead + ratio × estimate`, as
    /// `tokenCountWithEstimation(messages, {calibration})` gives it.
    #[wasm_bindgen(unchecked_return_type = "CountCalibration | null")]
    pub fn calibration(&self) -> JsResult<JsValue> {
        let _call = js(self.call())?;
        Ok(crate::bindings::convert::calibration_js(
            js(read(&self.session))?.calibration().fit(),
        ))
    }

    /// `calculateTokenWarningState` for the current size and the model: a frozen object, the
    /// same one while the count has not changed (a per-render check costs a lookup).
    #[wasm_bindgen(js_name = warningState, unchecked_return_type = "TokenWarningState")]
    pub fn warning_state(&self) -> JsResult<JsValue> {
        let _call = js(self.call())?;
        let session = js(read(&self.session))?;
        let count = session.token_count();
        if let Some((at, v)) = &*self.warning.borrow() {
            if *at == count {
                return Ok(v.clone());
            }
        }
        // Frozen: the same object is handed out until the count changes.
        let v: JsValue = js_sys::Object::freeze(&to_js(&session.warning_state())?.into()).into();
        *self.warning.borrow_mut() = Some((count, v.clone()));
        Ok(v)
    }

    /// `{consecutiveFailures, thrashing}` of automatic compaction.
    #[wasm_bindgen(
        getter,
        unchecked_return_type = "{ consecutiveFailures: number; thrashing: boolean }"
    )]
    pub fn tracking(&self) -> JsResult<JsValue> {
        let _call = js(self.call())?;
        let o = Object::new();
        let s = js(read(&self.session))?;
        Reflect::set(
            &o,
            &"consecutiveFailures".into(),
            &s.tracking().consecutive_failures.into(),
        )?;
        Reflect::set(&o, &"thrashing".into(), &s.thrashing().into())?;
        Ok(o.into())
    }

    /// Whether a compaction is running.
    #[wasm_bindgen(getter)]
    pub fn compacting(&self) -> JsResult<bool> {
        let _call = js(self.call())?;
        Ok(js(read(&self.session))?.compacting())
    }

    /// The summary written ahead of the threshold (`preemptive` option): `{state: 'off' |
    /// 'idle' | 'running' | 'ready', cut?, earlyLine?, headroom?, error?}` — `cut`: the
    /// summary stands for the messages before this index (running or ready); `headroom`: the
    /// largest growth between two checks, the turn a ready summary keeps room for; `error`:
    /// the last background summary that failed (reported here, never thrown from `push`).
    #[wasm_bindgen(getter, unchecked_return_type = "BackgroundSummaryState")]
    pub fn background(&self) -> JsResult<JsValue> {
        let _call = js(self.call())?;
        let s = js(read(&self.session))?;
        let b = s.background();
        let o = Object::new();
        let (state, cut) = match (b.early_line(), b.state()) {
            (None, _) => ("off", None),
            (Some(_), AheadState::Idle) => ("idle", None),
            (Some(_), AheadState::Running { cut }) => ("running", Some(*cut)),
            (Some(_), AheadState::Ready(a)) => ("ready", Some(a.cut)),
        };
        Reflect::set(&o, &"state".into(), &state.into())?;
        if let Some(cut) = cut {
            Reflect::set(&o, &"cut".into(), &(cut as f64).into())?;
        }
        if let Some(line) = b.early_line() {
            Reflect::set(&o, &"earlyLine".into(), &(line as f64).into())?;
            Reflect::set(&o, &"headroom".into(), &(b.headroom() as f64).into())?;
        }
        if let Some(e) = b.error() {
            Reflect::set(&o, &"error".into(), &js_error(e.clone()))?;
        }
        Ok(o.into())
    }

    /// The conversation as Claude Code JSONL.
    #[wasm_bindgen(js_name = toTranscript)]
    pub fn to_transcript(&self) -> JsResult<js_sys::JsString> {
        // Held through the serialization: it runs the messages' `toJSON`s.
        let _call = js(self.call())?;
        super::exports::serialize_transcript(js(held(&self.session))?.into())
    }

    /// Compacts when auto-compaction is due (SPEC §6): `{wasCompacted, compactionResult?,
    /// consecutiveFailures, error?, skipped?}`. Failures are reported, not thrown. `options`
    /// (optional): `keepLastUserMessage` for this call, and `signal`, this call's own
    /// AbortSignal (besides the `Compactor`'s).
    #[wasm_bindgen(
        js_name = maybeAutoCompact,
        unchecked_return_type = "Promise<CompactorAutoCompactOutcome<MessageInput>>"
    )]
    pub fn maybe_auto_compact(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "CompactorAutoCompactOptions | null")]
        options: JsValue,
    ) -> Promise {
        // Decided and snapshotted now, synchronously: messages pushed after this call are
        // kept after the summary.
        let _call = match self.call() {
            Ok(c) => c,
            Err(e) => return Promise::reject(&js_error(e)),
        };
        let keep_last = match reading("options", || options::compactor_auto_call_options(&options))
        {
            Ok(k) => k,
            Err(e) => return Promise::reject(&js_error(e)),
        };
        // A bad signal is the caller's argument: refused before anything is decided.
        if let Err(e) = super::env::check_call_signal(&options) {
            return Promise::reject(&js_error(e));
        }
        let context = self.context();
        let query = match reading("options", || options::auto_options(&context)) {
            Ok(q) => q,
            Err(e) => return Promise::reject(&js_error(e)),
        };
        let skipped = match write(&self.session) {
            Ok(mut s) => s.check_auto_compact(&query),
            Err(e) => return Promise::reject(&js_error(e)),
        };
        if let Some(outcome) = skipped {
            return match auto_outcome_js(outcome, None) {
                Ok(o) => Promise::resolve(&o),
                Err(e) => Promise::reject(&e),
            };
        }
        let prepared = reading("options", || options::compactor_context(&context))
            .and_then(|c| JsEnv::from_context(&context, &c, false).map(|env| (c, env)));
        let (mut c, env) = match prepared {
            Ok(p) => p,
            Err(e) => return Promise::reject(&js_error(e)),
        };
        let seen = super::env::seen_states(&context);
        c.context.keep_last_user_message |= keep_last;
        let (compaction, snapshot) =
            match begin(&self.session, Trigger::Auto, self.shape.get().shape()) {
                Ok(b) => b,
                Err(e) => {
                    // A message the compaction cannot read: a failed compaction, reported.
                    let failures = read(&self.session).map(|s| s.tracking().consecutive_failures);
                    let outcome = failures.and_then(|n| {
                        crate::drive::autocompact::AutoCompactOutcome::unless_unreadable(e, n)
                    });
                    return match outcome {
                        Ok(o) => {
                            if let Ok(mut s) = write(&self.session) {
                                s.set_consecutive_failures(o.consecutive_failures);
                            }
                            match auto_outcome_js(o, None) {
                                Ok(v) => Promise::resolve(&v),
                                Err(e) => Promise::reject(&e),
                            }
                        }
                        Err(e) => Promise::reject(&js_error(e)),
                    };
                }
            };
        let state = of_session(&mut c.context, &self.session, &snapshot, &context).and_then(|()| {
            let s = read(&self.session)?;
            // The summary written ahead, if one is ready: it cuts inside the messages
            // taken now.
            Ok((
                s.tracking().clone(),
                s.background().ready().cloned(),
                s.background().ready_ticket(),
                s.background().error().cloned(),
            ))
        });
        let (tracking, ahead, ahead_ticket, background_error) = match state {
            Ok(s) => s,
            Err(e) => {
                abandon(&self.session, compaction);
                return Promise::reject(&js_error(e));
            }
        };
        let (env, link) = env.with_call_signal(&options);
        let session = self.session.clone();
        let links = self.links.clone();
        let busy = self.busy.clone();
        let ahead_seen = self.ahead_seen.clone();
        let early = compaction.swap_early();
        promise_of(released(link, async move {
            let res = preemptive::auto_compact_with_ahead(
                &snapshot.read.typed,
                &c.context,
                &tracking,
                &c.auto,
                &c.retry,
                &env,
                ahead
                    .as_ref()
                    .map(|summary| preemptive::AheadSwap { summary, early }),
            )
            .await;
            let (outcome, used) = match res {
                Ok(o) => o,
                Err(e) => {
                    abandon(&session, compaction);
                    return Err(js_error(e));
                }
            };
            // Settled after the call that began it returned: nothing holds the session then.
            let to_commit = match write(&session) {
                Ok(mut s) => {
                    s.ahead_tried(&compaction, used == AheadUse::Swapped);
                    s.auto_finished(compaction, &outcome)
                }
                Err(e) => {
                    abandon(&session, compaction);
                    return Err(js_error(e));
                }
            };
            let result = match (to_commit, &outcome.result) {
                (Some(c), Some(r)) => {
                    // What the summary swapped in read when it started, else what this call read.
                    // (A summary brought up to date read up to the latest turn: what this
                    // call read, as today's path.)
                    let seen = if used == AheadUse::Swapped {
                        held_seen(&ahead_seen, ahead_ticket).unwrap_or(seen)
                    } else {
                        seen
                    };
                    let result =
                        commit(&session, &busy, &links, c, r, &snapshot, (&context, &seen))?;
                    // The conversation the summaries ahead were for is replaced: what they
                    // read (file contents) is not held any longer.
                    ahead_seen.borrow_mut().clear();
                    Some(result)
                }
                _ => None,
            };
            let o = auto_outcome_js(outcome, result)?;
            let swapped = used == AheadUse::Swapped;
            Reflect::set(&o, &"preemptive".into(), &swapped.into())?;
            if used == AheadUse::CaughtUp {
                Reflect::set(&o, &"caughtUp".into(), &true.into())?;
            }
            if swapped && early {
                Reflect::set(&o, &"swappedEarly".into(), &true.into())?;
            }
            if let Some(e) = background_error {
                Reflect::set(&o, &"backgroundError".into(), &js_error(e))?;
            }
            Ok(o)
        }))
    }

    /// Compacts now (manual, `/compact [instructions]`): resolves to the `CompactionResult`,
    /// rejects with a coded `Error`; on failure the conversation is unchanged.
    #[wasm_bindgen(unchecked_return_type = "Promise<CompactionResult<MessageInput>>")]
    pub fn compact(
        &self,
        #[wasm_bindgen(unchecked_optional_param_type = "CompactorCompactOptions | null")]
        options: JsValue,
    ) -> Promise {
        let _call = match self.call() {
            Ok(c) => c,
            Err(e) => return Promise::reject(&js_error(e)),
        };
        let context = self.context();
        let prepared = (|| -> crate::Result<_> {
            // A manual compaction: the automatic-only options are not options here.
            let c = reading("options", || options::compactor_context(&context))?;
            let opts = reading("options", || {
                options::compactor_compact_options(&options, c.retry)
            })?;
            super::env::check_call_signal(&options)?;
            let env = JsEnv::from_context(&context, &c, false)?;
            Ok((c.context, env, opts))
        })();
        let (ctx, env, opts) = match prepared {
            Ok(p) => p,
            Err(e) => return Promise::reject(&js_error(e)),
        };
        let seen = super::env::seen_states(&context);
        let (compaction, snapshot) =
            match begin(&self.session, Trigger::Manual, self.shape.get().shape()) {
                Ok(b) => b,
                Err(e) => return Promise::reject(&js_error(e)),
            };

        let mut ctx = ctx;
        // A manual compaction replaces the conversation a summary written ahead is for.
        self.ahead_seen.borrow_mut().clear();
        let fitted = write(&self.session)
            .map(|mut s| s.drop_ahead())
            .and_then(|()| of_session(&mut ctx, &self.session, &snapshot, &context));
        if let Err(e) = fitted {
            abandon(&self.session, compaction);
            return Promise::reject(&js_error(e));
        }
        // The call's own signal (checked above), linked once nothing can fail before the
        // promise that releases the link.
        let (env, link) = env.with_call_signal(&options);
        let session = self.session.clone();
        let links = self.links.clone();
        let busy = self.busy.clone();
        promise_of(released(link, async move {
            match pipeline::compact_conversation(&snapshot.read.typed, &ctx, &opts, &env).await {
                Ok(r) => commit(
                    &session,
                    &busy,
                    &links,
                    compaction,
                    &r,
                    &snapshot,
                    (&context, &seen),
                ),
                Err(e) => {
                    abandon(&session, compaction);
                    Err(compact_error(e))
                }
            }
        }))
    }
}

impl Compactor {
    /// Marks a call of this `Compactor` in progress ([`InCall`]); the [`busy`] error when
    /// one already is (this call comes from the caller's code that one runs).
    fn call(&self) -> crate::Result<InCall<'_>> {
        InCall::enter(&self.busy)
    }

    /// `push` and `pushMany`: appends the array `messages` (all or none), then starts a
    /// summary written ahead when one is wanted.
    fn append(&self, messages: &JsValue) -> JsResult<()> {
        let _call = js(self.call())?;
        let context = self.context();
        js(push_array(
            &self.session,
            &self.shape,
            &self.links,
            messages,
            &context,
        ))?;
        start_ahead(
            &self.session,
            self.shape.get().shape(),
            &context,
            &self.ahead_seen,
        );
        Ok(())
    }

    /// The options given: alive while the JS object is (its calls come through it), which
    /// holds them.
    #[inline(never)]
    fn context(&self) -> JsValue {
        strongly(&self.options)
    }
}

/// Saving and restoring: a conversation that outlives one process.
#[wasm_bindgen]
impl Compactor {
    /// The state to store beside the messages, as plain JSON data (versioned; see
    /// `CompactorSnapshot`): failures in a row, thrashing detection, and the number,
    /// fingerprint and token count of the messages held now. O(1). A compaction running now
    /// is not in it: restored, the conversation is the one held now (store `messages` with
    /// it, read at the same moment).
    ///
    /// ```js
    /// await storage.put({ messages: chat.messages, snapshot: chat.snapshot() });
    /// ```
    #[wasm_bindgen(unchecked_return_type = "CompactorSnapshot")]
    pub fn snapshot(&self) -> JsResult<JsValue> {
        let _call = js(self.call())?;
        let snapshot = js(read(&self.session))?.snapshot();
        to_js(&snapshot.to_json())
    }

    /// `Compactor.restore(snapshot, messages, options)`: the `Compactor` that `snapshot()`
    /// saved, rebuilt over the messages stored with it (on any machine, by any process) with
    /// the options of `new Compactor` (without `messages`). It has the same token count and
    /// takes the same decisions as the one that was saved. `snapshot` may also be its JSON
    /// text. Throws `INVALID_SNAPSHOT` (not a snapshot, a damaged or edited one),
    /// `UNSUPPORTED_SNAPSHOT_VERSION`, `SNAPSHOT_MISMATCH` (not the messages of the
    /// snapshot), or the errors of the constructor; never restores partly.
    ///
    /// ```js
    /// const { messages, snapshot } = await storage.get(['messages', 'snapshot']);
    /// const chat = Compactor.restore(snapshot, messages, { model, summarize });
    /// ```
    #[wasm_bindgen(unchecked_return_type = "Compactor<MessageInput>")]
    pub fn restore(
        #[wasm_bindgen(unchecked_param_type = "CompactorSnapshot | string")] snapshot: JsValue,
        #[wasm_bindgen(
            unchecked_param_type = "readonly (MessageInput | PostCompactMessage<MessageInput>)[]"
        )]
        messages: JsValue,
        #[wasm_bindgen(unchecked_param_type = "Omit<CompactorOptions<MessageInput>, 'messages'>")]
        options: JsValue,
    ) -> JsResult<Compactor> {
        let given = prop(&options, "messages");
        if !(given.is_undefined() || given.is_null()) {
            return Err(js_error(crate::Error::invalid_argument(
                "options.messages: Compactor.restore takes the messages as its second argument, not in its options",
            )));
        }
        let compactor = Compactor::new(options)?;
        let snapshot = js(read_snapshot(&snapshot))?;
        let conv = js(JsConversation::new(&messages, "messages"))?;
        js(js(write(&compactor.session))?.restore(&snapshot, &conv, JsConversation::item))?;
        drop(conv);
        chain_step(&compactor.links, &messages, true);
        Ok(compactor)
    }
}

/// Reads a snapshot given as the object `snapshot()` returned or as its JSON text.
fn read_snapshot(v: &JsValue) -> crate::Result<SessionSnapshot> {
    let parsed;
    let v = if v.is_string() {
        parsed = super::convert::parse_json(v).map_err(|why| {
            crate::Error::new(
                crate::ErrorCode::InvalidSnapshot,
                format!("snapshot is a string but not JSON text ({why})"),
            )
        })?;
        &parsed
    } else {
        v
    };
    SessionSnapshot::parse(v)
}

#[inline(never)] // shared by maybeAutoCompact and compact (wasm size)
/// Starts a compaction: the messages it works on as a JS array (the snapshot the result's
/// kept messages refer to) and as typed messages.
fn begin(
    session: &Shared,
    trigger: Trigger,
    shape: Shape,
) -> crate::Result<(Compaction, Snapshot)> {
    let given = read(session)?.given_usage();
    write(session)?.begin(trigger, |messages| {
        let array: JsValue = messages.iter().collect::<Array>().into();
        let mut read = messages_for_compaction(
            &array,
            (shape != Shape::Any).then_some(shape),
            super::convert::Reading::Whole,
        )?;
        read.give_usage(given);
        Ok(Snapshot { array, read })
    })
}

/// Fits a compaction's context to the session it compacts: the messages' shape, what the
/// session learned from the usage seen, and its running count (`warningState`'s, which the
/// decision was made on: the compaction counts as it did). Fails on a pinned message that
/// cannot be read in the Anthropic form.
fn of_session(
    ctx: &mut pipeline::CompactContext,
    session: &Shared,
    snapshot: &Snapshot,
    context: &JsValue,
) -> crate::Result<()> {
    let s = read(session)?;
    ctx.for_shape(snapshot.read.shape());
    ctx.calibration = Some(s.calibration().clone());
    ctx.counted = Some(s.token_count());
    super::async_exports::pins_in_conversation(ctx, context, &snapshot.array, &snapshot.read)
}

/// The messages a compaction works on: the JS array (what the result's kept messages refer
/// to) and how they were read.
struct Snapshot {
    array: JsValue,
    read: Compacted,
}

/// Converts the result and the compacted conversation and hands them to the session; a
/// conversion that fails abandons the compaction. Resolves to the JS `CompactionResult`.
/// `(context, seen)`: the options and what the compaction read of the states it clears
/// ([`commit_context`]).
#[allow(clippy::too_many_arguments)]
fn commit(
    session: &Shared,
    busy: &Cell<bool>,
    links: &JsValue,
    compaction: Compaction,
    r: &CompactionResult,
    snapshot: &Snapshot,
    (context, seen): (&JsValue, &JsValue),
) -> JsResult<JsValue> {
    // The caller's code it runs (the messages' getters, the tokenizer) cannot call the
    // Compactor meanwhile.
    let _call = match InCall::enter(busy) {
        Ok(c) => c,
        Err(e) => {
            abandon(session, compaction);
            return Err(js_error(e));
        }
    };
    let converted = result_js(r, &snapshot.array, context, snapshot.read.foreign.as_ref())
        .and_then(|js_result| {
            let compacted = super::exports::build_post_compact_messages(js_result.clone())?;
            Ok((js_result, JsValue::from(compacted)))
        });
    let (js_result, compacted) = match converted {
        Ok(c) => c,
        Err(e) => {
            abandon(session, compaction);
            return Err(e);
        }
    };
    // A reply pushed while the compaction ran carries the usage of a request sent with the
    // old conversation: the boundary counts it, and what follows the kept messages up to it,
    // among the messages kept from the old context, so that neither the count after the
    // commit nor a recount of the stored messages (restore) starts from that usage.
    let extra = match read(session).and_then(|s| s.kept_with_pushed(r)) {
        Ok(n) => n,
        Err(e) => {
            abandon(session, compaction);
            return Err(js_error(e));
        }
    };
    if extra > 0 {
        let meta = Reflect::get(&js_result, &"boundaryMarker".into())
            .and_then(|b| Reflect::get(&b, &"compactMetadata".into()));
        if let Some(meta) = meta.ok().filter(|m| m.is_object()) {
            let kept = Reflect::get(&meta, &"keptMessages".into())
                .ok()
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0);
            let _ = Reflect::set(
                &meta,
                &"keptMessages".into(),
                &JsValue::from(kept + extra as f64),
            );
        }
    }
    // The compacted conversation is counted with the caller's tokenizer too (its problems
    // were reported by the pushes that brought the messages in).
    let _counter = TokenCounter::enter(context, "options").ok();
    let conv = JsConversation::new(&compacted, "messages");
    let read = conv.as_ref().map_err(Clone::clone);
    let mut s = match write(session) {
        Ok(s) => s,
        Err(e) => {
            abandon(session, compaction);
            return Err(js_error(e));
        }
    };
    js(s.commit(compaction, read, JsConversation::item))?;
    drop(s);
    js(relink(session, links))?;
    commit_context(context, seen, &r.kept_reads);
    Ok(js_result)
}
