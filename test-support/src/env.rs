//! One scripted [`Environment`] for native pipeline tests, and one [`block_on`].
//!
//! [`Scripted`] never waits: every future it returns is ready at once, so [`block_on`] drives
//! the whole async pipeline deterministically without an executor. It records every request,
//! hook, read, progress phase and sleep, and can abort at a chosen progress phase or file read.
//! [`transcript`] is a conversation of Read rounds for it to compact.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::task::{Context, Poll, Waker};

use context_compaction::drive::env::{
    CallError, Environment, HookKind, HookOutput, LocalFuture, ProgressEvent,
};
use context_compaction::model::messages::Message;
use context_compaction::model::view::UsageCounts;
use context_compaction::summarize::summary::{SummaryRequest, SummaryResponse};
use serde_json::{json, Value};

/// Runs a future to completion by polling it in a loop. Meant for futures whose awaits all
/// complete at once (those of [`Scripted`]); a future that really waits would spin.
pub fn block_on<F: Future>(f: F) -> F::Output {
    let mut cx = Context::from_waker(Waker::noop());
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// The summarizer of a [`Scripted`] environment: the request and its 1-based call number.
pub type Summarizer = Box<dyn Fn(&SummaryRequest, usize) -> Result<SummaryResponse, CallError>>;

/// The hooks of a [`Scripted`] environment: `None` means "no hook registered for this kind".
pub type HookReply = Box<dyn Fn(HookKind, &Value) -> Option<Result<HookOutput, CallError>>>;

/// `readFile` answers: path → content (`Ok(None)`: unreadable / binary), or an error message
/// (the message `"abort"` aborts the run instead).
pub type Files = Vec<(String, Result<Option<String>, String>)>;

/// A summary reply `<analysis>…</analysis><summary>{summary}</summary>` ending normally, with
/// the given usage.
pub fn summary_answer(summary: &str, input_tokens: u64, output_tokens: u64) -> SummaryResponse {
    SummaryResponse {
        text: format!("<analysis>working it out</analysis>\n<summary>{summary}</summary>"),
        stop_reason: Some("end_turn".into()),
        usage: Some(UsageCounts {
            input_tokens,
            output_tokens,
            ..Default::default()
        }),
        compaction: None,
        problem: None,
    }
}

/// The API's 400 answer to a prompt that is too long, as the SDK surfaces it.
pub fn ptl_error(actual: u64, limit: u64) -> CallError {
    CallError {
        status: Some(400),
        message: format!(
            r#"400 {{"type":"error","error":{{"type":"invalid_request_error","message":"prompt is too long: {actual} tokens > {limit} maximum"}}}}"#
        ),
        ..Default::default()
    }
}

/// A transcript of `rounds` API rounds for the scripted runs, each a user prompt (`u{r}`), an
/// assistant Read call (`a{r}`, with the usage of the context so far) and its result of
/// `result_chars` characters (`r{r}`), on one parent chain.
pub fn transcript(rounds: usize, result_chars: usize) -> Vec<Message> {
    let mut v = Vec::new();
    let mut parent = Value::Null;
    for r in 0..rounds {
        let u = format!("u{r}");
        v.push(
            json!({"type": "user", "uuid": u, "parentUuid": parent, "sessionId": "s1", "cwd": "/w",
            "message": {"role": "user", "content": format!("request number {r}")}}),
        );
        let a = format!("a{r}");
        v.push(json!({"type": "assistant", "uuid": a, "parentUuid": u, "sessionId": "s1",
            "message": {"role": "assistant", "id": format!("msg_{r}"), "content": [
                {"type": "tool_use", "id": format!("t{r}"), "name": "Read", "input": {"file_path": format!("/f{r}.rs")}}],
                "usage": {"input_tokens": (r * (result_chars / 4 + 30) + 10) as u64, "output_tokens": 20}}}));
        let t = format!("r{r}");
        v.push(json!({"type": "user", "uuid": t, "parentUuid": a, "sessionId": "s1",
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{r}"), "content": "x".repeat(result_chars)}]}}));
        parent = Value::String(t);
    }
    Message::parse_all(Value::Array(v)).unwrap()
}

/// A scripted environment: the pipeline's callbacks answered by closures and fixed data,
/// every call recorded. Set the public fields after [`Scripted::new`] to script more.
pub struct Scripted {
    /// Answers `summarize` (not called once the run is aborted).
    pub summarizer: Summarizer,
    /// Every summary request, in order.
    pub requests: RefCell<Vec<SummaryRequest>>,
    /// Answers `runHook`; by default no hook is registered.
    pub hook: HookReply,
    /// Every hook call (kind and input), in order, registered or not.
    pub hooks: RefCell<Vec<(HookKind, Value)>>,
    /// `readFile` answers; `None`: the environment has no `readFile`.
    pub files: Option<Files>,
    /// Every path read, in order.
    pub reads: RefCell<Vec<String>>,
    /// What `sessionMemory` answers.
    pub memory: Option<String>,
    /// Abort when this progress phase is reported (`None`: never).
    pub abort_at: Option<&'static str>,
    /// Whether the run has been aborted (`check_abort` then fails).
    pub aborted: Cell<bool>,
    /// Every progress phase reported, in order.
    pub phases: RefCell<Vec<&'static str>>,
    /// Every sleep requested (ms), in order; none of them waits.
    pub sleeps: RefCell<Vec<u64>>,
    /// UUIDs handed out so far.
    pub uuids: Cell<u32>,
}

impl Scripted {
    /// An environment whose summarizer is `summarizer`, with no hooks, files or memory.
    pub fn new(summarizer: Summarizer) -> Self {
        Scripted {
            summarizer,
            requests: RefCell::new(Vec::new()),
            hook: Box::new(|_, _| None),
            hooks: RefCell::new(Vec::new()),
            files: None,
            reads: RefCell::new(Vec::new()),
            memory: None,
            abort_at: None,
            aborted: Cell::new(false),
            phases: RefCell::new(Vec::new()),
            sleeps: RefCell::new(Vec::new()),
            uuids: Cell::new(0),
        }
    }

    /// An environment whose summarizer always answers `summary` (usage: 1,000 in, 200 out).
    pub fn summary(text: &str) -> Self {
        Self::answering(text, 1_000, 200)
    }

    /// An environment whose summarizer always answers `summary` with the given usage.
    pub fn answering(text: &str, input_tokens: u64, output_tokens: u64) -> Self {
        let text = text.to_string();
        Self::new(Box::new(move |_, _| {
            Ok(summary_answer(&text, input_tokens, output_tokens))
        }))
    }

    /// Sets readable files (`path`, content): every other path is unreadable.
    pub fn with_files<P: Into<String>, C: Into<String>>(
        mut self,
        files: impl IntoIterator<Item = (P, C)>,
    ) -> Self {
        self.files = Some(
            files
                .into_iter()
                .map(|(p, c)| (p.into(), Ok(Some(c.into()))))
                .collect(),
        );
        self
    }

    /// How many summary requests were made.
    pub fn calls(&self) -> usize {
        self.requests.borrow().len()
    }

    /// The inputs of every call of hook `kind`, in order.
    pub fn hook_calls(&self, kind: HookKind) -> Vec<Value> {
        self.hooks
            .borrow()
            .iter()
            .filter(|(k, _)| *k == kind)
            .map(|(_, v)| v.clone())
            .collect()
    }
}

impl Environment for Scripted {
    fn summarize(
        &self,
        request: &SummaryRequest,
    ) -> LocalFuture<'_, Result<SummaryResponse, CallError>> {
        self.requests.borrow_mut().push(request.clone());
        let n = self.requests.borrow().len();
        let r = if self.aborted.get() {
            Err(CallError::aborted())
        } else {
            (self.summarizer)(request, n)
        };
        Box::pin(async move { r })
    }
    fn has_read_file(&self) -> bool {
        self.files.is_some()
    }
    fn read_file(&self, path: &str) -> LocalFuture<'_, Result<Option<String>, CallError>> {
        self.reads.borrow_mut().push(path.to_string());
        let r = match self
            .files
            .as_ref()
            .and_then(|f| f.iter().find(|(p, _)| p == path))
        {
            None => Ok(None),
            Some((_, Ok(c))) => Ok(c.clone()),
            Some((_, Err(e))) if e == "abort" => {
                self.aborted.set(true);
                Err(CallError::aborted())
            }
            Some((_, Err(e))) => Err(CallError::new(e.clone())),
        };
        Box::pin(async move { r })
    }
    fn run_hook(
        &self,
        kind: HookKind,
        input: Value,
    ) -> Option<LocalFuture<'_, Result<HookOutput, CallError>>> {
        let r = (self.hook)(kind, &input);
        self.hooks.borrow_mut().push((kind, input));
        let r = r?;
        Some(Box::pin(async move { r }))
    }
    fn has_session_memory(&self) -> bool {
        self.memory.is_some()
    }
    fn session_memory(&self) -> LocalFuture<'_, Result<Option<String>, CallError>> {
        let m = self.memory.clone();
        Box::pin(async move { Ok(m) })
    }
    fn sleep(&self, ms: u64) -> LocalFuture<'_, Result<(), CallError>> {
        self.sleeps.borrow_mut().push(ms);
        Box::pin(async { Ok(()) })
    }
    fn check_abort(&self) -> Result<(), CallError> {
        if self.aborted.get() {
            Err(CallError::aborted())
        } else {
            Ok(())
        }
    }
    fn progress(&self, event: &ProgressEvent) {
        self.phases.borrow_mut().push(event.phase);
        if self.abort_at == Some(event.phase) {
            self.aborted.set(true);
        }
    }
    fn new_uuid(&self) -> String {
        self.uuids.set(self.uuids.get() + 1);
        format!("00000000-2222-4000-8000-{:012}", self.uuids.get())
    }
    fn now_iso(&self) -> String {
        "2026-03-02T00:00:00.000Z".into()
    }
    fn random(&self) -> f64 {
        0.5
    }
}
