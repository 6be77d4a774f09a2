//! [`ConversationView`] over a JavaScript array of messages, read in place.
//!
//! The readers in `js_view.js` read properties and measure string lengths for a range of
//! messages per call, writing numbers straight into WASM memory or returning one compact
//! description string. Headers are cached, filled in chunks in the direction a scan goes, so
//! a check that looks only at the end of a long conversation reads only the end. Nothing is
//! copied into Rust but lengths, ids, names and paths.

use std::cell::RefCell;

use js_sys::Array;
use wasm_bindgen::prelude::*;

use crate::measure::tokens::{self, TailMessage, TailRecord};
use crate::model::error::{Error, Result};
use crate::model::messages::Kind;
use crate::model::shape::{Shape, ShapeOf};
use crate::model::view::{
    BlockInfo, BlockKind, ContentInfo, ConversationView, Detail, Edit, Find, Latest, Str,
    ToolIndex, ToolResultEntry, ToolUseEntry, UsageCounts,
};

#[wasm_bindgen(module = "/src/bindings/js_batch.js")]
extern "C" {
    /// `arr[start..end)` as a new plain `Array`, never built by the array's
    /// `Symbol.species` (an Array subclass's constructor may throw or make no array).
    #[wasm_bindgen(js_name = plainSlice)]
    pub fn plain_slice(arr: &JsValue, start: u32, end: u32) -> Array;
}

// What only the compaction paths use (js_edit.js: the counting module does not load it).
#[wasm_bindgen(module = "/src/bindings/js_edit.js")]
extern "C" {
    #[wasm_bindgen(js_name = applyEdits)]
    fn apply_edits_js(arr: &JsValue, ops: &[u32], texts: &str) -> Option<Array>;
    #[wasm_bindgen(js_name = anthropicForm)]
    fn anthropic_form_js(arr: &JsValue, compacting: bool) -> Array;
    /// Bytes (a `Buffer`, a typed array, an `ArrayBuffer`) decoded as UTF-8; `None` for any
    /// other value (see `bytesText`).
    #[wasm_bindgen(js_name = bytesText)]
    pub fn bytes_text(v: &JsValue) -> Option<String>;
    /// A copy of a message without its `usage` (see `withoutUsage`).
    #[wasm_bindgen(js_name = withoutUsage)]
    pub fn without_usage(m: &JsValue) -> JsValue;
    /// The caller's shape of a user message a compaction adds (see `userMessageIn`).
    #[wasm_bindgen(js_name = userMessageIn)]
    pub fn user_message_in(
        arr: &JsValue,
        shape: u32,
        msg: &JsValue,
        id: &str,
        summary_of: &JsValue,
    ) -> JsValue;
}

// What only microCompact and the compaction read (js_index.js: the counting module does not
// load it).
#[wasm_bindgen(module = "/src/bindings/js_index.js")]
extern "C" {
    #[wasm_bindgen(js_name = toolIndex)]
    fn tool_index_js(arr: &JsValue, from: u32, with_paths: bool, keep: bool) -> Option<Vec<u32>>;
    #[wasm_bindgen(js_name = apiToolIndex)]
    fn api_tool_index_js(
        arr: &JsValue,
        with_paths: bool,
        memory: &JsValue,
        at: u32,
        cap: u32,
    ) -> i32;
    /// `{messages, tokensFreed, clearedToolUseIds}`, built in JS in one call.
    #[wasm_bindgen(js_name = microCompactResult)]
    pub fn micro_compact_result(messages: &JsValue, tokens_freed: f64, ids: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = microCompactApply)]
    fn micro_compact_apply_js(
        arr: &JsValue,
        picked: &[u32],
        text: &str,
        tokens_freed: f64,
    ) -> JsValue;
    #[wasm_bindgen(js_name = toolUseIdsAt)]
    fn tool_use_ids_at(arr: &JsValue, at: &[u32]) -> Array;
    #[wasm_bindgen(js_name = attachmentType)]
    fn attachment_type(arr: &JsValue, i: u32) -> Option<String>;
    #[wasm_bindgen(js_name = contentEquals)]
    fn content_equals(arr: &JsValue, i: u32, text: &str) -> bool;
    #[wasm_bindgen(js_name = firstRefused)]
    fn first_refused(arr: &JsValue, from: u32, to: u32, shape: u32) -> i32;
}

#[wasm_bindgen(module = "/src/bindings/js_view.js")]
extern "C" {
    /// Whether `v` is a promise (an async tokenizer's answer), then settled so that its
    /// rejection is not left unhandled.
    #[wasm_bindgen(js_name = settledPromise)]
    pub(super) fn settled_promise(v: &JsValue) -> bool;
    #[wasm_bindgen(js_name = arrayLength)]
    fn array_length(arr: &JsValue) -> i32;
    #[wasm_bindgen(js_name = readHeaders)]
    fn read_headers(arr: &JsValue, start: u32, out: &mut [u32]);
    #[wasm_bindgen(js_name = rfind)]
    fn rfind_js(arr: &JsValue, end: u32, mask: u32) -> i32;
    #[wasm_bindgen(js_name = latestUsage)]
    fn latest_usage_js(arr: &JsValue, end: u32, out: &mut [f64]) -> i32;
    #[wasm_bindgen(js_name = previousSibling)]
    fn previous_sibling_js(arr: &JsValue, before: u32, last: u32) -> i32;
    #[wasm_bindgen(js_name = readUsage)]
    fn read_usage(arr: &JsValue, i: u32, out: &mut [f64]) -> i32;
    #[wasm_bindgen(js_name = messageId)]
    fn message_id(arr: &JsValue, i: u32) -> Option<String>;
    #[wasm_bindgen(js_name = sameResponse)]
    fn same_response(arr: &JsValue, i: u32, j: u32) -> bool;
    #[wasm_bindgen(js_name = stringField)]
    fn string_field(arr: &JsValue, i: u32, k: &str) -> Option<String>;
    #[wasm_bindgen(js_name = boundaryKept)]
    fn boundary_kept_js(arr: &JsValue, i: u32) -> Option<f64>;
    #[wasm_bindgen(js_name = windowFacts)]
    fn window_facts_js(arr: &JsValue, i: u32) -> u32;
    #[wasm_bindgen(js_name = describeContents)]
    fn describe_contents(
        arr: &JsValue,
        start: u32,
        end: u32,
        estimate: bool,
        shape: u32,
    ) -> Vec<u32>;
    #[wasm_bindgen(js_name = tail)]
    fn tail_js(
        arr: &JsValue,
        shape: u32,
        memory: &JsValue,
        f_at: u32,
        f_cap: u32,
        w_at: u32,
        w_cap: u32,
    ) -> i32;
    #[wasm_bindgen(js_name = countTail)]
    fn count_tail_js(arr: &JsValue, memory: &JsValue, fb: u32, wb: u32, wcap: u32) -> i32;
    #[wasm_bindgen(js_name = takeStrings)]
    fn take_strings() -> String;
    #[wasm_bindgen(js_name = enterTokenCounter)]
    fn enter_token_counter(f: &JsValue);
    #[wasm_bindgen(js_name = leaveTokenCounter)]
    fn leave_token_counter();
    #[wasm_bindgen(js_name = takeCounterError)]
    fn take_counter_error() -> Option<String>;
    #[wasm_bindgen(js_name = keysOf)]
    fn keys_of(arr: &JsValue, i: u32) -> Vec<String>;
    #[wasm_bindgen(js_name = takeReadError)]
    fn take_read_error() -> JsValue;
    #[wasm_bindgen(js_name = chainLinks)]
    fn chain_links(arr: &JsValue, out: &mut [i32]) -> bool;
    #[wasm_bindgen(js_name = chainMayDiffer)]
    fn chain_may_differ(arr: &JsValue) -> u32;
    #[wasm_bindgen(js_name = enterChain)]
    fn enter_chain(arr: &JsValue, on: &[u8]);
    #[wasm_bindgen(js_name = leaveChain)]
    fn leave_chain();
}

/// The error the caller's objects threw while `js_view.js` read them (a `Proxy`, a getter,
/// a reactive store), if any: an `INVALID_MESSAGE` error saying so, with the original kept as
/// the JS error's `cause`. Reading again clears it.
pub fn read_failure() -> Option<Error> {
    let e = take_read_error();
    (!e.is_undefined()).then(|| failure_of(e, None))
}

/// The `INVALID_MESSAGE` error for `thrown` (what the caller's objects threw), naming
/// message `at` when known; `thrown` becomes the JS error's `cause`.
pub(super) fn failure_of(thrown: JsValue, at: Option<usize>) -> Error {
    let why = thrown
        .dyn_ref::<js_sys::Error>()
        .and_then(|x| x.message().as_string())
        .or_else(|| thrown.as_string())
        .unwrap_or_else(|| "a non-Error value".into());
    super::errors::set_cause(thrown);
    let e = Error::invalid_message(format!("reading the messages threw: {why}"));
    match at {
        Some(i) => e.at(format!("messages[{i}]")),
        None => e,
    }
}

/// [`read_failure`] after reading the messages of `range` together, with the message whose
/// reading threw named (`messages[i]: …`): each is read again alone by `probe` until one
/// throws (`probe` answers `true` when reading the message itself threw). Only on this error
/// path; a message that throws only once is not found again and goes unnamed. The first
/// error stays the cause: it is set after the probes, whose getters may call the package.
fn located_failure(
    range: impl FnOnce() -> std::ops::Range<usize>,
    probe: &dyn Fn(usize) -> bool,
) -> Option<Error> {
    let thrown = take_read_error();
    if thrown.is_undefined() {
        return None;
    }
    let at = range()
        .into_iter()
        .find(|&i| probe(i) | !take_read_error().is_undefined());
    Some(failure_of(thrown, at))
}

// The guarded reads of js_convert.js (`propOf` and its kin), for [`try_prop`] / [`try_elem`].
#[wasm_bindgen(module = "/src/bindings/js_convert.js")]
extern "C" {
    #[wasm_bindgen(js_name = propOf)]
    fn prop_of_js(obj: &JsValue, key: &str) -> JsValue;
    #[wasm_bindgen(js_name = elemOf)]
    fn elem_of_js(arr: &JsValue, i: u32) -> JsValue;
    #[wasm_bindgen(js_name = propThrew)]
    fn prop_threw_js() -> JsValue;
}

/// `obj[key]`, read in JS: `Err` with what was thrown when the read threw (a getter, a
/// `Proxy` trap). Unlike js-sys's `Reflect::get` (a `catch` import, whose glue leaks a slot of
/// the externref table, and its entry in WASM memory, on every throw), nothing is left behind.
/// Nothing is recorded for `convert::reading`: the caller handles the throw.
pub fn try_prop(obj: &JsValue, key: &str) -> std::result::Result<JsValue, JsValue> {
    if !(obj.is_object() || obj.is_function()) {
        return Ok(JsValue::UNDEFINED);
    }
    thrown_or(prop_of_js(obj, key))
}

/// `arr[i]` as [`try_prop`] reads a property (an array, an array-like, a `Proxy`).
pub fn try_elem(arr: &JsValue, i: u32) -> std::result::Result<JsValue, JsValue> {
    if !arr.is_object() {
        return Ok(JsValue::UNDEFINED);
    }
    thrown_or(elem_of_js(arr, i))
}

fn thrown_or(v: JsValue) -> std::result::Result<JsValue, JsValue> {
    if v.is_undefined() {
        if let Some(pair) = prop_threw_js().dyn_ref::<js_sys::Array>() {
            return Err(pair.get(0));
        }
    }
    Ok(v)
}

/// Element `i` of `list`; `None` when reading it threw (a `Proxy`, a getter), nothing of it
/// escaping.
fn element(list: &Array, i: usize) -> Option<JsValue> {
    // Read in JS: a js-sys `Reflect` read that throws leaks a slot of the externref table.
    try_elem(list, i as u32).ok()
}

/// [`read_failure`], or `otherwise` when nothing threw.
fn read_failure_or(otherwise: Error) -> Error {
    read_failure().unwrap_or(otherwise)
}

/// The caller's tokenizer (`tokenCounter`), in effect while this value lives: the views'
/// lengths are then in its tokens (see `enterTokenCounter` in `js_view.js`), so estimates come
/// out in the caller's tokens. Without one, none is in effect either: a call made from inside
/// another call's tokenizer (or getter, or callback) counts with its own options only, and
/// the outer call's tokenizer is back when this value is dropped.
pub struct TokenCounter {
    active: bool,
    what: &'static str,
}

impl TokenCounter {
    /// Puts `options.tokenCounter` in effect (`what` names `options` in errors), or no
    /// tokenizer when absent. Not a function: `INVALID_ARGUMENT`, and nothing changes.
    pub fn enter(options: &JsValue, what: &'static str) -> Result<TokenCounter> {
        let f = counter_of(options, what)?;
        enter_token_counter(f.as_ref().map_or(&JsValue::NULL, |f| f.as_ref()));
        Ok(TokenCounter {
            active: f.is_some(),
            what,
        })
    }

    /// Whether the caller gave a tokenizer.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// The first problem the tokenizer had so far (it threw, or returned no count) as an
    /// `INVALID_ARGUMENT` error. The tokenizer stays in effect until this value is dropped.
    pub fn finish(&self) -> Result<()> {
        if !self.active {
            return Ok(());
        }
        match take_counter_error() {
            Some(e) => Err(Error::invalid_argument(format!("{}.{e}", self.what))),
            None => Ok(()),
        }
    }
}

impl Drop for TokenCounter {
    fn drop(&mut self) {
        leave_token_counter();
    }
}

/// `options.tokenCounter` (`what` names `options` in errors): `None` when absent; not a
/// function: `INVALID_ARGUMENT`.
pub fn counter_of(options: &JsValue, what: &str) -> Result<Option<js_sys::Function>> {
    let f = if options.is_object() {
        // A getter that throws is the caller's error, not an absent tokenizer.
        match try_prop(options, "tokenCounter") {
            Ok(f) => f,
            #[cfg(any(feature = "base", feature = "extra"))]
            Err(e) => return Err(super::errors::read_threw(what, "tokenCounter", e)),
            // The counting module alone leaves the report out (its size budget).
            #[cfg(not(any(feature = "base", feature = "extra")))]
            Err(_) => JsValue::UNDEFINED,
        }
    } else {
        JsValue::UNDEFINED
    };
    if f.is_undefined() || f.is_null() {
        return Ok(None);
    }
    f.dyn_into::<js_sys::Function>().map(Some).map_err(|_| {
        Error::invalid_argument(format!(
            "{what}.tokenCounter must be a function (text: string) => number"
        ))
    })
}

/// Another ecosystem's messages in Anthropic form, and the caller's index each one came
/// from; `compacting`: as a compaction reads them (see `anthropicForm` in `js_edit.js`).
pub fn anthropic_form(arr: &JsValue, compacting: bool) -> Result<(Array, Vec<usize>)> {
    let pair = anthropic_form_js(arr, compacting);
    // The length read again (guarded: a `Proxy` may throw) only when reading failed.
    let len = || {
        let n = try_prop(arr, "length").ok();
        0..n.and_then(|n| n.as_f64()).unwrap_or(0.0) as usize
    };
    let list: &Array = arr.unchecked_ref(); // read only through `element`, which is guarded
    if let Some(e) = located_failure(len, &|i| {
        element(list, i)
            .map(|m| anthropic_form_js(&Array::of1(&m), compacting))
            .is_none()
    }) {
        return Err(e);
    }
    let origin = js_sys::Uint32Array::from(pair.get(1))
        .to_vec()
        .into_iter()
        .map(|i| i as usize)
        .collect();
    Ok((pair.get(0).unchecked_into(), origin))
}

const KIND_MASK: u32 = 7;
/// The kind of a `{role, …}` message whose role no shape uses (`UNKNOWN_ROLE` in
/// `js_view.js`): an error naming the role, never a message left out.
const UNKNOWN_ROLE: u32 = 5;
const NOT_A_MESSAGE: u32 = 7;
const TRANSCRIPT: u32 = 8;
const SIDECHAIN: u32 = 16;
const BOUNDARY: u32 = 32;
const HAS_USAGE: u32 = 64;
const PARTIAL_USAGE: u32 = 256;
const SHAPE_SHIFT: u32 = 9;
const STARTS_CONTEXT: u32 = 4096;
/// A system message with `clear_at: "next_user_message"` (`CLEARS_AT_USER` in `js_view.js`).
const CLEARS_AT_USER: u32 = 8192;
/// Reading the message threw (with the "not a message" kind; see `guard` in `js_view.js`).
const READ_FAILED: u32 = 1 << 20;
const FIRST_CHUNK: usize = 8;
const MAX_CHUNK: usize = 4096;

/// A JS array of messages seen through the core's view: Anthropic API messages or Claude
/// Code transcript lines, or the messages of another ecosystem (see [`Shape`]), each read by
/// its own shape's rules in `js_view.js`.
pub struct JsConversation<'a> {
    array: &'a JsValue,
    len: usize,
    headers: RefCell<HeaderCache>,
    shape: RefCell<ShapeOf>,
    /// Added to an index when the shape check names a message (a `Compactor` push: the
    /// index in the whole conversation).
    base: usize,
    /// What [`JsConversation::read_tail`] read, when it was asked to.
    tail: Option<Tail>,
    /// Whether the tool index keeps, on the JS side, what [`micro_compact_apply`] needs.
    keep_tool_index: bool,
    /// Whether the array is read along its `parentUuid` chain ([`follow_chain`]): the mask
    /// set on the JS side then, left when the view is dropped.
    chained: bool,
    /// The lines of branches the chain leaves out
    /// ([`crate::transforms::transcript::other_branches`]); empty when there are none.
    other_branches: Vec<bool>,
}

/// The [`crate::transforms::transcript::Link`]s of the caller's array `arr` (`chainLinks` in
/// `js_view.js`), or `None` when reading them threw or gave another count than `len`.
pub fn links_of_js(arr: &JsValue, len: usize) -> Option<Vec<crate::transforms::transcript::Link>> {
    use crate::transforms::transcript::{Link, Parent};
    let mut raw = vec![0; 4 * len];
    if !chain_links(arr, &mut raw) {
        return None;
    }
    let parent = |v: i32| match v {
        -2 => Parent::Missing,
        -3 => Parent::Absent,
        v if v >= 0 && (v as usize) < len => Parent::At(v as usize),
        _ => Parent::None,
    };
    Some(
        raw.chunks_exact(4)
            .map(|c| Link {
                anchor: usize::try_from(c[3]).ok().filter(|&a| a < len),
                has_uuid: c[0] & 1 != 0,
                sidechain: c[0] & 2 != 0,
                turn: c[0] & 4 != 0,
                answers_parent: c[0] & 8 != 0,
                continues_parent: c[0] & 16 != 0,
                attachment: c[0] & 32 != 0,
                boundary: c[0] & 64 != 0,
                parent: parent(c[1]),
                logical_parent: parent(c[2]),
            })
            .collect(),
    )
}

/// Makes the readers read the Claude Code session file `arr` along its `parentUuid` chain
/// when its conversation is not what `isSidechain` says
/// ([`crate::transforms::transcript::conversation_mask`]: a file holding several branches, a
/// sub-agent's own file), as a compaction reads it: every header then has the sidechain bit
/// where the line is not part of the conversation. Whether it did (then [`leave_chain`] ends
/// it), with the lines of the branches it leaves out (empty when none). A file whose lines
/// hang as they were written (`chainMayDiffer`, one pass reading four fields a line; messages
/// that are not Claude Code lines: none) is not read further.
fn follow_chain(arr: &JsValue) -> Option<Vec<bool>> {
    if chain_may_differ(arr) == 0 {
        return None;
    }
    let len = usize::try_from(array_length(arr)).ok()?;
    let links = links_of_js(arr, len)?;
    let mask = crate::transforms::transcript::counted_mask(&links)?;
    let mut other = crate::transforms::transcript::other_branches(&links, &mask);
    if !other.contains(&true) {
        other = Vec::new();
    }
    let on: Vec<u8> = mask.into_iter().map(u8::from).collect();
    enter_chain(arr, &on);
    Some(other)
}

/// What a count at the end of the array reads, read in one crossing (`tail` in
/// `js_view.js`, which documents the layout of `f` and `w`): the answers the view's readers
/// would give to the questions a count asks there. The view answers from it where it covers
/// the question, and asks JS otherwise.
struct Tail {
    /// Numbers: the latest usage, headers, the anchor response's lines, same-response flags
    /// and content offsets.
    f: Vec<f64>,
    /// Estimate descriptions (`describeContents` words) of the described messages, in order.
    w: Vec<u32>,
    /// The array's length.
    len: usize,
    /// Headers read: of messages `len - n..len`.
    n: usize,
    /// How many earlier lines of the anchor response follow the headers.
    c: usize,
    /// First message of the same-response flags.
    same_from: usize,
    /// First message of the content offsets.
    content_from: usize,
}

/// Where `f`'s sections begin (see `tail` in `js_view.js`).
const TAIL_HEAD: usize = 14;
/// Where `f` holds the array's length.
const TAIL_LEN: usize = 13;

thread_local! {
    /// This instance's memory, as JS sees it (asked once).
    static MEMORY: JsValue = wasm_bindgen::memory();
    /// The buffers of the last tail read, kept for the next (a per-turn count allocates
    /// nothing for them).
    static TAIL_BUFFERS: RefCell<(Vec<f64>, Vec<u32>)> = const { RefCell::new((Vec::new(), Vec::new())) };
    /// The block list estimates from the tail read decode into, kept for the next count.
    static BLOCK_LIST: RefCell<Vec<BlockInfo>> = const { RefCell::new(Vec::new()) };
    /// The words the per-turn count's record is written into, kept for the next count.
    static COUNT_WORDS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    /// The words microCompact's one-pass tool index is written into, kept for the next call.
    static API_INDEX_WORDS: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// Keeps the buffers of a tail read for the next one, unless a very long conversation made
/// them large (that memory is given back).
fn keep_tail_buffers(f: Vec<f64>, w: Vec<u32>) {
    const LARGE: usize = 1 << 16;
    if f.capacity() <= LARGE && w.capacity() <= 2 * LARGE {
        TAIL_BUFFERS.with(|b| *b.borrow_mut() = (f, w));
    }
}

impl Tail {
    /// The tail read from the numbers `tail` wrote (`None`, the buffers put back, when they
    /// do not fit an array of `len` messages: it changed while read).
    fn parse(f: Vec<f64>, w: Vec<u32>, len: usize) -> Option<Tail> {
        let (n, c) = (f[7] as usize, f[8] as usize);
        let (same_from, content_from) = (f[9] as usize, f[10] as usize);
        let words = f[12] as usize;
        let needed =
            TAIL_HEAD + n + c + len.saturating_sub(same_from) + len.saturating_sub(content_from);
        if n > len || same_from > len || content_from > len || needed > f.len() || words > w.len() {
            keep_tail_buffers(f, w);
            return None;
        }
        Some(Tail {
            f,
            w,
            len,
            n,
            c,
            same_from,
            content_from,
        })
    }

    /// Index of the message `latestUsage` found (-1: none).
    fn at(&self) -> i32 {
        self.f[1] as i32
    }

    /// The anchor response's index, when usage was found.
    fn anchor(&self) -> Option<usize> {
        (self.f[0] == 1.0).then_some(self.f[1] as usize)
    }

    /// The header of message `i`, when it was read.
    fn header(&self, i: usize) -> Option<u32> {
        (i < self.len && i >= self.len - self.n)
            .then(|| self.f[TAIL_HEAD + self.len - 1 - i] as u32)
    }

    /// The anchor response's earlier lines, latest first.
    fn chain(&self) -> &[f64] {
        &self.f[TAIL_HEAD + self.n..TAIL_HEAD + self.n + self.c]
    }

    /// Whether message `i` is a line of the anchor response, when that was read.
    fn same(&self, i: usize) -> Option<bool> {
        if i < self.same_from || i >= self.len {
            return None;
        }
        Some(self.f[TAIL_HEAD + self.n + self.c + i - self.same_from] != 0.0)
    }

    /// Where the description of message `i` starts in the words, when it was described.
    fn offset(&self, i: usize) -> Option<usize> {
        if i < self.content_from || i >= self.len {
            return None;
        }
        let at = TAIL_HEAD + self.n + self.c + (self.len - self.same_from) + i - self.content_from;
        let o = self.f[at];
        (o >= 0.0).then_some(o as usize)
    }

    /// The shape code the contents were described by (`None`: none were).
    fn content_shape(&self) -> Option<u32> {
        (self.f[11] >= 0.0).then_some(self.f[11] as u32)
    }

    /// The descriptions' words.
    fn words(&self) -> &[u32] {
        &self.w[..self.f[12] as usize]
    }
}

/// Whether contents described by shape code `a` read the same as by `b`: messages of
/// another ecosystem are described by its own rules, every other shape alike.
fn same_description(a: u32, b: u32) -> bool {
    a == b || (a < Shape::AiSdkModel.code() && b < Shape::AiSdkModel.code())
}

// The count's record tags are header bits, which are TailMessage's (and its SAME_RESPONSE
// is `countTail`'s).
const _: () = assert!(
    TailMessage::TRANSCRIPT == TRANSCRIPT
        && TailMessage::SIDECHAIN == SIDECHAIN
        && TailMessage::BOUNDARY == BOUNDARY
        && TailMessage::HAS_USAGE == HAS_USAGE
        && TailMessage::PARTIAL == PARTIAL_USAGE
        && TailMessage::STARTS_CONTEXT == STARTS_CONTEXT
        && TailMessage::CLEARS_AT_USER == CLEARS_AT_USER
        && NOT_A_MESSAGE == 7
        && KIND_MASK == 7
);

/// The most messages a conversation is read with (`MAX_MESSAGES` in `js_view.js`, which
/// reports a longer array to [`JsConversation::new`]): only a sparse array is longer.
const MAX_MESSAGES: usize = 1 << 24;

/// The longest array the per-turn record is written for (16 M numbers, 128 MB); a longer
/// `length` (only a sparse array has one) is read message by message.
const MAX_RECORD_MESSAGES: usize = 1 << 22;

/// The per-turn count's record of a JS array of transcript lines (`countTail` in
/// `js_view.js` documents the layout), read by [`tokens::count_tail`].
struct JsTailRecord<'a> {
    /// `countTail`'s numbers: `[_, len, n, first, at, present, usage × 4]`.
    f: &'a [f64],
    /// Its words: `n` tags (the last message's first), offsets from `first`, descriptions.
    w: &'a [u32],
    len: usize,
    n: usize,
    first: usize,
}

impl<'a> JsTailRecord<'a> {
    /// The record `countTail` wrote: its numbers `f` and the `w.len()` words it used.
    fn new(f: &'a [f64], w: &'a [u32]) -> JsTailRecord<'a> {
        JsTailRecord {
            f,
            w,
            len: f[1] as usize,
            n: (f[2] as usize).min(w.len()),
            first: f[3] as usize,
        }
    }
}

impl TailRecord for JsTailRecord<'_> {
    #[inline(always)]
    fn message_count(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn message(&self, i: usize) -> Option<TailMessage> {
        let j = self.len.checked_sub(i + 1)?;
        // The tags are `header` bits (| SAME_RESPONSE), which TailMessage's bits are.
        Some(TailMessage(*self.w[..self.n].get(j)?))
    }

    #[cfg_attr(cc_speed, optimize(speed))]
    fn usage(&self) -> Option<(usize, UsageCounts)> {
        let present = self.f[5];
        if present < 0.0 {
            return None;
        }
        let mask = present as u32;
        let raw: [Option<f64>; 4] =
            std::array::from_fn(|k| (mask & (1 << k) != 0).then_some(self.f[6 + k]));
        Some((self.f[4] as usize, UsageCounts::from_valid_raw(&raw)?))
    }

    #[cfg_attr(cc_speed, optimize(speed))]
    fn estimate(&self, i: usize) -> Option<u64> {
        let offsets = &self.w[self.n..];
        let at = *offsets.get(i.checked_sub(self.first)?)?;
        if at == MISSING {
            return None;
        }
        let words = offsets.get(self.len.checked_sub(self.first)?..)?;
        let mut pos = at as usize;
        let (tag, n) = (*words.get(pos)?, *words.get(pos + 1)?);
        pos += 2;
        match tag {
            0 => Some(0),
            1 => Some(tokens::estimate_content(&ContentInfo::Text(n as usize))),
            2 => Some(tokens::estimate_content(&ContentInfo::Json(n as usize))),
            4 => blocks_estimate(words, &mut pos, n),
            _ => None,
        }
    }
}

/// A described block's flag (its fourth word): a plain-text document, counted as its text.
const PLAIN_TEXT: u32 = 2;

/// The estimate of `count` described blocks (with their nested blocks) from `words[*pos]`
/// on, as [`tokens::estimate_block`] gives it; `None` when one is malformed.
#[cfg_attr(cc_speed, optimize(speed))]
fn blocks_estimate(words: &[u32], pos: &mut usize, count: u32) -> Option<u64> {
    let mut total = 0;
    for _ in 0..count {
        let b = words.get(*pos..*pos + BLOCK_WORDS)?;
        *pos += BLOCK_WORDS;
        if b[0] == 10 || b[0] == 11 || b[1] == MISSING {
            return None;
        }
        let (kind, text, json, nested) = (block_kind(b[0]), b[1], b[2], b[4]);
        let nested = if nested > 0 {
            blocks_estimate(words, pos, nested)?
        } else {
            0
        };
        total += if b[3] & PLAIN_TEXT != 0 {
            tokens::rough_token_count(text as usize, tokens::BYTES_PER_TOKEN)
        } else {
            tokens::block_tokens(Some(kind), text as usize, json as usize, nested)
        };
    }
    Some(total)
}

/// The most words [`count_at_end`] makes room for (64 MB); a record that asks for more is
/// left to the general path.
const MAX_COUNT_WORDS: f64 = (1u32 << 24) as f64;

/// The count at the end of `messages` from one record read in one crossing, when the record
/// settles it ([`tokens::count_tail`]): an array of Claude Code transcript lines whose latest
/// response carries usage, read without surprises. `None`: count on the general path.
pub fn count_at_end(messages: &JsValue) -> Option<tokens::TokenCount> {
    let mut w = COUNT_WORDS.with(|b| std::mem::take(&mut *b.borrow_mut()));
    if w.len() < 256 {
        w.resize(256, 0);
    }
    let mut f = [0f64; 10];
    let mut count = None;
    for _ in 0..3 {
        let used = MEMORY.with(|memory| {
            count_tail_js(
                messages,
                memory,
                f.as_mut_ptr() as u32 / 8,
                w.as_mut_ptr() as u32 / 4,
                w.len() as u32,
            )
        });
        match used {
            // More room than a record of any real conversation needs: the general path.
            -1 if f[0] > MAX_COUNT_WORDS => break,
            -1 => w.resize(f[0] as usize + 64, 0),
            n if n > 0 => {
                count = tokens::count_tail(&JsTailRecord::new(&f, &w[..used as usize]));
                fast_record_fit(used as usize);
                break;
            }
            _ => break,
        }
    }
    if w.len() <= 1 << 16 {
        COUNT_WORDS.with(|b| *b.borrow_mut() = w);
    }
    count
}

/// Words of the per-turn record the package's JS writes without asking Rust first
/// ([`fast_record_at`]) at first; a record that needs more goes through [`count_at_end`],
/// which makes this one larger for the next time ([`fast_record_fit`]), up to
/// [`FAST_RECORD_MAX_WORDS`].
pub const FAST_RECORD_WORDS: usize = 2048;

/// The most words the per-turn record grows to (1 MB): a count that needs more is made
/// through [`count_at_end`] every time.
pub const FAST_RECORD_MAX_WORDS: usize = 1 << 18;

/// The per-turn record: `countTail`'s ten numbers, then two the JS reads before it writes
/// (the words' capacity and byte address), and the words. The numbers stay at one address;
/// the words move when they grow.
struct FastRecord {
    f: Box<[f64; 12]>,
    w: Vec<u32>,
    /// The last record read and its count ([`fast_record_total`]).
    last: LastRecord,
}

impl FastRecord {
    /// Writes the words' capacity and address where the JS reads them.
    fn publish(&mut self) {
        self.f[10] = self.w.len() as f64;
        self.f[11] = self.w.as_ptr() as usize as f64;
    }
}

thread_local! {
    /// The per-turn record the package's JS writes before `__ccPerTurnCount` or
    /// `__ccPerTurnShould` (allocated on first use).
    static FAST_RECORD: RefCell<FastRecord> = RefCell::new(FastRecord {
        f: Box::new(std::array::from_fn(|k| if k == 10 { FAST_RECORD_WORDS as f64 } else { 0.0 })),
        w: vec![0; FAST_RECORD_WORDS],
        last: LastRecord::NONE,
    });
}

/// The byte address of the per-turn record's numbers (its numbers 10 and 11 say where its
/// words are and how many fit).
pub fn fast_record_at() -> u32 {
    FAST_RECORD.with(|r| {
        let mut r = r.borrow_mut();
        r.publish();
        r.f.as_ptr() as usize as u32
    })
}

/// Makes the per-turn record hold at least `words` words (up to [`FAST_RECORD_MAX_WORDS`]),
/// so the next count of a conversation this long is written there in one pass.
fn fast_record_fit(words: usize) {
    if words > FAST_RECORD_MAX_WORDS {
        return;
    }
    FAST_RECORD.with(|r| {
        if let Ok(mut r) = r.try_borrow_mut() {
            // No capacity: the JS is writing the record (a getter it read called the package),
            // into the words where they are; they move another time.
            if r.f[10] == 0.0 {
                return;
            }
            if r.w.len() < words {
                r.w = vec![0; words.next_power_of_two().min(FAST_RECORD_MAX_WORDS)];
                r.publish();
            }
        }
    });
}

/// The count at the end of a JS array of transcript lines (its total) from the record the
/// package's JS wrote into [`fast_record_at`] (`used` words), when the record settles it
/// ([`tokens::count_tail`]); `None`: count on the general path.
///
/// The count is a function of the record alone, so the last short record read and its count
/// are kept ([`LastRecord`]): a record equal to it, word for word and number for number (a
/// chat UI asking again on every render of an unchanged conversation), is answered without
/// reading it again. The JS still reads the messages and writes the record on every call, so
/// a message changed in place makes another record.
#[cfg_attr(cc_speed, optimize(speed))]
pub fn fast_record_total(used: usize) -> Option<u64> {
    FAST_RECORD.with(|r| {
        let r = &mut *r.borrow_mut();
        let words = r.w.get(..used)?;
        let numbers: &[f64; RECORD_NUMBERS] = r.f[1..].first_chunk()?;
        if let Some(total) = r.last.answer(numbers, words) {
            return total;
        }
        let total = tokens::count_tail(&JsTailRecord::new(&r.f[..], words)).map(|c| c.total);
        r.last.keep(numbers, words, total);
        total
    })
}

/// How many of the per-turn record's numbers the count reads (`f[1..=9]`: the conversation's
/// length, the tags read, the response's first line, the anchor, the usage present and its
/// four counts).
const RECORD_NUMBERS: usize = 9;

/// The most words of a record [`LastRecord`] keeps (a real session's per-turn record is a
/// few dozen).
const LAST_RECORD_WORDS: usize = 96;

/// The last per-turn record [`fast_record_total`] read, when it was short, and the count it
/// gave.
struct LastRecord {
    numbers: [u64; RECORD_NUMBERS],
    words: [u32; LAST_RECORD_WORDS],
    /// How many of `words` hold the record; more than [`LAST_RECORD_WORDS`]: none kept.
    len: usize,
    total: Option<u64>,
}

impl LastRecord {
    /// No record kept.
    const NONE: LastRecord = LastRecord {
        numbers: [0; RECORD_NUMBERS],
        words: [0; LAST_RECORD_WORDS],
        len: usize::MAX,
        total: None,
    };

    /// The count of a record equal to the last one (numbers compared bit for bit).
    fn answer(&self, numbers: &[f64; RECORD_NUMBERS], words: &[u32]) -> Option<Option<u64>> {
        // Word by word (a slice `==` is a `memcmp`, byte by byte in this build).
        let same = self.len == words.len()
            && self.words.iter().zip(words).all(|(a, b)| a == b)
            && numbers
                .iter()
                .zip(&self.numbers)
                .all(|(a, b)| a.to_bits() == *b);
        same.then_some(self.total)
    }

    /// Keeps `numbers` and `words` and the count they gave (a longer record than
    /// [`LAST_RECORD_WORDS`] is not kept).
    fn keep(&mut self, numbers: &[f64; RECORD_NUMBERS], words: &[u32], total: Option<u64>) {
        let Some(to) = self.words.get_mut(..words.len()) else {
            self.len = usize::MAX;
            return;
        };
        to.copy_from_slice(words);
        self.len = words.len();
        self.numbers = numbers.map(f64::to_bits);
        self.total = total;
    }
}

impl Drop for JsConversation<'_> {
    fn drop(&mut self) {
        if let Some(t) = self.tail.take() {
            keep_tail_buffers(t.f, t.w);
        }
        if self.chained {
            leave_chain();
        }
    }
}

/// Header bits of messages `lo..len` (always a suffix: scans start at the end, and a read
/// at `i` fills everything from `i` up to what is already known, in one call).
struct HeaderCache {
    lo: usize,
    bits: Vec<u32>,
    chunk: usize,
}

impl<'a> JsConversation<'a> {
    /// Wraps `value`, which must be an array, of the shape `shape` names (`None`: detected).
    pub fn of_shape(
        value: &'a JsValue,
        what: &str,
        shape: Option<Shape>,
    ) -> Result<JsConversation<'a>> {
        let conv = JsConversation::new(value, what)?;
        if let Some(s) = shape {
            *conv.shape.borrow_mut() = ShapeOf::named(s);
            // Every message is checked against the named shape up front (the readers of
            // tool pairs only tell two detected shapes apart).
            conv.validate_all()?;
        }
        Ok(conv)
    }

    /// Wraps `value`, the messages `base..` of a longer conversation whose shape so far is
    /// `shape` (a `Compactor`'s push: a message of another shape than those before it is a
    /// `MIXED_SHAPES` error naming its index in the whole conversation).
    pub fn continuing(
        value: &'a JsValue,
        what: &str,
        shape: ShapeOf,
        base: usize,
    ) -> Result<JsConversation<'a>> {
        let mut conv = JsConversation::unchained(value, what)?;
        *conv.shape.borrow_mut() = shape;
        conv.base = base;
        Ok(conv)
    }

    /// What the shape check knows after the messages read so far.
    pub fn shape_of(&self) -> ShapeOf {
        *self.shape.borrow()
    }

    /// Wraps `value`, which must be an array; a Claude Code session file is read along its
    /// `parentUuid` chain ([`follow_chain`]).
    pub fn new(value: &'a JsValue, what: &str) -> Result<JsConversation<'a>> {
        let mut conv = JsConversation::unchained(value, what)?;
        conv.set_chain(follow_chain(value));
        Ok(conv)
    }

    /// What [`follow_chain`] gave: whether the chain is followed, and its other branches.
    fn set_chain(&mut self, chain: Option<Vec<bool>>) {
        self.chained = chain.is_some();
        self.other_branches = chain.unwrap_or_default();
    }

    /// [`JsConversation::new`] in file order (a `Compactor`'s pushes, whose chain it follows
    /// itself; `serializeTranscript`, which writes every line whatever its branch).
    pub fn unchained(value: &'a JsValue, what: &str) -> Result<JsConversation<'a>> {
        let len = array_length(value);
        if len == -3 {
            return Err(read_failure_or(Error::invalid_argument(format!(
                "{what} could not be read"
            ))));
        }
        if len == -4 {
            return Err(Error::invalid_argument(format!(
                "{what} is an array longer than 16,777,216 elements (a sparse array?): a conversation is read up to that many messages"
            )));
        }
        if len < 0 {
            return Err(Error::invalid_argument(format!(
                "{what} must be an array of messages"
            )));
        }
        Ok(JsConversation::with_len(value, len as usize))
    }

    /// Wraps `value`, an array of `len` messages.
    fn with_len(value: &'a JsValue, len: usize) -> JsConversation<'a> {
        JsConversation {
            array: value,
            len,
            headers: RefCell::new(HeaderCache {
                lo: len,
                bits: Vec::new(),
                chunk: FIRST_CHUNK,
            }),
            shape: RefCell::new(ShapeOf::default()),
            base: 0,
            tail: None,
            keep_tool_index: false,
            chained: false,
            other_branches: Vec::new(),
        }
    }

    /// Wraps `value` for a count at its end: [`JsConversation::new`] and
    /// [`JsConversation::read_tail`] in one crossing (the array's length comes with the tail
    /// read). When the tail cannot be read (not an array, reading threw, tail reads off), it
    /// is [`JsConversation::new`] alone, with its errors.
    pub fn at_end(value: &'a JsValue, what: &str) -> Result<JsConversation<'a>> {
        let mut conv = JsConversation::with_len(value, 0);
        conv.set_chain(follow_chain(value));
        if conv.tail_read(true) {
            Ok(conv)
        } else {
            let mut read = JsConversation::unchained(value, what)?;
            read.chained = std::mem::take(&mut conv.chained);
            read.other_branches = std::mem::take(&mut conv.other_branches);
            Ok(read)
        }
    }

    /// Makes every later [`ConversationView::tool_index`] keep, on the JS side, each result's
    /// `tool_use_id` and shape, for [`micro_compact_apply`] to clear results by their
    /// position in that index without reading the messages again.
    pub fn keep_tool_index(&mut self) {
        self.keep_tool_index = true;
    }

    /// The tool index of the whole array when every message is an Anthropic API message
    /// (`{role, content}`) whose blocks one pass reads: such messages never start a context,
    /// so this is what [`ConversationView::tool_index`] gives from the active start, which is
    /// then not searched for. JS writes it straight into WASM memory, and keeps what
    /// [`micro_compact_apply`] needs. `None` when another kind of message, or anything
    /// malformed, is met: read with [`ConversationView::tool_index`] (which reports it).
    pub fn api_tool_index(&self, with_paths: bool) -> Option<ToolIndex> {
        let mut words = API_INDEX_WORDS.with(|b| std::mem::take(&mut *b.borrow_mut()));
        if words.len() < 1024 {
            words.resize(1024, 0);
        }
        let mut index = None;
        for _ in 0..2 {
            let used = MEMORY.with(|memory| {
                api_tool_index_js(
                    self.array,
                    with_paths,
                    memory,
                    words.as_mut_ptr() as u32 / 4,
                    words.len() as u32,
                )
            });
            match used {
                -1 => break,
                n if n < 0 => words.resize(n.unsigned_abs() as usize, 0),
                n => {
                    index = decode_tool_index(&words[..n as usize], take_names()).ok();
                    break;
                }
            }
        }
        if words.len() <= 1 << 16 {
            API_INDEX_WORDS.with(|b| *b.borrow_mut() = words);
        }
        index
    }

    /// Reads, in one crossing, what a count at the end of the array asks (the latest usage,
    /// the anchor response's lines, the headers and estimate descriptions after it); the
    /// view then answers those questions without crossing again. Changes no answer: what it
    /// did not read (or could not read) is read as before.
    pub fn read_tail(&mut self) {
        self.tail_read(false);
    }

    /// [`JsConversation::read_tail`]; with `learn_len`, the view's length is the one the
    /// tail read saw. Whether the tail was read (a tail inconsistent with that length is
    /// dropped, and the view reads as before).
    fn tail_read(&mut self, learn_len: bool) -> bool {
        let (mut f, mut w) = TAIL_BUFFERS.with(|b| std::mem::take(&mut *b.borrow_mut()));
        let shape = self.shape.borrow().shape().code();
        if f.len() < 64 {
            f.resize(64, 0.0);
            w.resize(256, 0);
        }
        for _ in 0..3 {
            // JS writes the buffers in place, through views it keeps on this memory (the
            // indices are in elements of each buffer's type).
            let used = MEMORY.with(|memory| {
                tail_js(
                    self.array,
                    shape,
                    memory,
                    f.as_mut_ptr() as u32 / 8,
                    f.len() as u32,
                    w.as_mut_ptr() as u32 / 4,
                    w.len() as u32,
                )
            });
            // The array's length as the read saw it (written first, whatever it returns
            // but "not an array" or "threw").
            let len = if learn_len {
                f[TAIL_LEN] as usize
            } else {
                self.len
            };
            if len > MAX_MESSAGES {
                break; // only a sparse array is this long: `new` reports it
            }
            match used {
                0.. => {
                    if learn_len {
                        self.len = len;
                        self.headers.get_mut().lo = len;
                    }
                    self.tail = Tail::parse(f, w, self.len);
                    return true;
                }
                // Too small: the numbers never need more than four per message; the words
                // needed were reported.
                // A `length` past any real conversation (a sparse array) is read as before,
                // which reports its first hole, instead of reserving room for it.
                -1 if len > MAX_RECORD_MESSAGES => break,
                -1 => f.resize(TAIL_HEAD + 4 * len + 16, 0.0),
                -3 => w.resize(f[12] as usize + 64, 0),
                _ => break, // not an array, or reading threw: read as before
            }
        }
        keep_tail_buffers(f, w);
        false
    }

    /// The answer of [`ConversationView::latest_usage`] from `latestUsage`'s numbers
    /// (`out[0]` the status, `i` the index).
    fn latest_from(&self, i: i32, out: &[f64]) -> Result<Latest> {
        Ok(match out[0] as u32 {
            1 => {
                let i = i as usize;
                let present = out[1];
                let loc = || {
                    if self.is_transcript(i) {
                        format!("messages[{i}].message.usage")
                    } else {
                        format!("messages[{i}].usage")
                    }
                };
                if present < 0.0 {
                    return Err(Error::invalid_token_count("usage must be an object").at(loc()));
                }
                let mask = present as u32;
                let mut k = 0;
                let raw = [out[2], out[3], out[4], out[5]].map(|v| {
                    let p = mask & (1 << k) != 0;
                    k += 1;
                    p.then_some(v)
                });
                crate::model::view::usage_or_start(
                    i,
                    Some(UsageCounts::from_raw(raw, loc)?),
                    self.starts_context(i),
                )
            }
            2 => Latest::Boundary(i as usize),
            4 => Latest::Start(i as usize),
            3 => {
                self.kind(i as usize)?;
                return Err(Error::invalid_message("not a message").at(format!("messages[{i}]")));
            }
            _ => Latest::None,
        })
    }

    /// The estimate descriptions of `range` from the tail read, when it holds every one of
    /// them, described as the array's shape now asks.
    fn tail_contents(&self, range: &std::ops::Range<usize>) -> Option<&[u32]> {
        let t = self.tail.as_ref()?;
        if !same_description(t.content_shape()?, self.shape.borrow().shape().code()) {
            return None;
        }
        // Described messages follow one another in the words.
        let start = t.offset(range.start)?;
        if range.clone().any(|i| t.offset(i).is_none()) {
            return None;
        }
        t.words().get(start..)
    }

    /// The underlying array.
    pub fn array(&self) -> &Array {
        self.array.unchecked_ref()
    }

    /// Message `i` (`undefined` when reading it throws: the view has read every message by
    /// then and reported such an error).
    pub fn item(&self, i: usize) -> JsValue {
        try_elem(self.array, i as u32).unwrap_or(JsValue::UNDEFINED)
    }

    fn header(&self, i: usize) -> u32 {
        if let Some(h) = self.tail.as_ref().and_then(|t| t.header(i)) {
            return h;
        }
        let mut c = self.headers.borrow_mut();
        if i < c.lo {
            // Extend the known suffix down to `i`, or further by a growing chunk, so a
            // backward scan costs a few calls rather than one per message.
            let new_lo = i.min(c.lo.saturating_sub(c.chunk));
            let mut fresh = vec![0u32; c.lo - new_lo];
            read_headers(self.array, new_lo as u32, &mut fresh);
            fresh.extend_from_slice(&c.bits);
            c.bits = fresh;
            c.lo = new_lo;
            c.chunk = (c.chunk * 2).min(MAX_CHUNK);
        }
        c.bits[i - c.lo]
    }

    /// Checks that every message is a message of a known shape, and that they all share
    /// one shape.
    pub fn validate_all(&self) -> Result<()> {
        for i in 0..self.len {
            self.kind(i)?;
        }
        Ok(())
    }

    /// Reads the content of every message as the count reads it (its structure), for the
    /// errors the count gives: a content of the wrong type, a block that is not one, a
    /// required field missing, a reading that throws. Only the messages `firstRefused`
    /// (`js_index.js`) finds such a problem in are read here, one at a time; the others cost a
    /// pass in JS and no crossing.
    pub fn check_structure(&self) -> Result<()> {
        let code = self.shape().code();
        let mut from = 0;
        while from < self.len {
            let found = first_refused(self.array, from as u32, self.len as u32, code);
            let Ok(i) = usize::try_from(found) else {
                return Ok(());
            };
            let i = i.clamp(from, self.len - 1);
            // Reading message `i` threw (a getter): that is the error, as the count's reading
            // reports it (a getter that throws only once is not asked again).
            let thrown = take_read_error();
            if !thrown.is_undefined() {
                return Err(failure_of(thrown, Some(i)));
            }
            self.contents(i..i + 1, Detail::Structure)?;
            from = i + 1;
        }
        Ok(())
    }

    /// The array's shape, as far as it has been read ([`Shape::Any`] before any message of a
    /// specific shape).
    pub fn shape(&self) -> Shape {
        self.shape.borrow().shape()
    }
}

/// The error for a value that is no message of any known shape, naming the keys it has.
fn unknown_message(array: &JsValue, i: usize) -> Error {
    let keys = keys_of(array, i as u32);
    let has = if keys.is_empty() {
        "it is not an object".to_string()
    } else {
        format!("its keys are {}", keys.join(", "))
    };
    Error::invalid_message(format!(
        "not a message of any known shape ({has}); expected a Claude Code line (`type`), an Anthropic, OpenAI or AI SDK message (`role`), an AI SDK UIMessage (`role`, `parts`), an OpenAI Responses item (`type`) or a LangChain message"
    ))
    .at(format!("messages[{i}]"))
}

fn block_kind(code: u32) -> BlockKind {
    match code {
        0 => BlockKind::Text,
        1 => BlockKind::Image,
        2 => BlockKind::Document,
        3 => BlockKind::ToolUse,
        4 => BlockKind::ServerToolUse,
        5 => BlockKind::ToolResult,
        6 => BlockKind::ServerToolResult,
        7 => BlockKind::Thinking,
        8 => BlockKind::RedactedThinking,
        12 => BlockKind::ToolReference,
        _ => BlockKind::Other,
    }
}

fn required_field(kind: BlockKind) -> &'static str {
    match kind {
        BlockKind::Text => "a `text` block needs a string `text`",
        BlockKind::Thinking => "a `thinking` block needs a string `thinking`",
        BlockKind::RedactedThinking => "a `redacted_thinking` block needs a string `data`",
        BlockKind::ToolUse | BlockKind::ServerToolUse => {
            "a tool call block needs a string `id` and `name`"
        }
        BlockKind::ToolResult => {
            "a `tool_result` needs a string `tool_use_id` and string or array `content`"
        }
        _ => "malformed block",
    }
}

const MISSING: u32 = u32::MAX;
const BLOCK_WORDS: usize = 9;

/// Decodes the numbers written by `describeContents` (see `js_view.js`).
struct Decoder<'a> {
    words: &'a [u32],
    pos: usize,
    strings: Vec<Str>,
}

impl Decoder<'_> {
    fn take(&mut self, n: usize) -> Option<&[u32]> {
        let s = self.words.get(self.pos..self.pos + n)?;
        self.pos += n;
        Some(s)
    }

    fn sym(&self, k: u32) -> Option<Str> {
        if k == 0 {
            None
        } else {
            self.strings.get(k as usize - 1).cloned()
        }
    }

    fn blocks(&mut self, count: usize, location: &dyn Fn() -> String) -> Result<Vec<BlockInfo>> {
        let mut out = Vec::with_capacity(crate::model::view::reserve_for(count));
        self.blocks_into(count, location, &mut out)?;
        Ok(out)
    }

    /// [`Decoder::blocks`] into `out` (emptied first: a caller decoding many messages reuses
    /// one list).
    fn blocks_into(
        &mut self,
        count: usize,
        location: &dyn Fn() -> String,
        out: &mut Vec<BlockInfo>,
    ) -> Result<()> {
        out.clear();
        out.reserve(crate::model::view::reserve_for(count));
        for j in 0..count {
            let mut w = [0u32; BLOCK_WORDS];
            match self.take(BLOCK_WORDS) {
                Some(words) => w.copy_from_slice(words),
                None => {
                    return Err(
                        Error::invalid_message("content changed while reading").at(location())
                    )
                }
            }
            let at = || format!("{}[{j}]", location());
            let kind = match w[0] {
                10 => {
                    return Err(Error::invalid_message("content block must be an object").at(at()))
                }
                11 => {
                    return Err(
                        Error::invalid_message("content block needs a string `type`").at(at()),
                    )
                }
                c => block_kind(c),
            };
            if w[1] == MISSING {
                return Err(Error::invalid_message(required_field(kind)).at(at()));
            }
            let nested = if w[4] > 0 {
                let loc = || format!("{}.content", at());
                self.blocks(w[4] as usize, &loc)?
            } else {
                Vec::new()
            };
            out.push(BlockInfo {
                kind: Some(kind),
                text_units: w[1] as usize,
                json_units: w[2] as usize,
                is_cleared: w[3] & 1 != 0,
                is_plain_text: w[3] & PLAIN_TEXT != 0,
                nested,
                id: self.sym(w[5]),
                name: self.sym(w[6]),
                path: self.sym(w[7]),
                // A tool_use's last word is its `caller.tool_id` (programmatic tool calling).
                tool_use_id: if kind == BlockKind::ToolUse {
                    None
                } else {
                    self.sym(w[8])
                },
                caller: if kind == BlockKind::ToolUse {
                    self.sym(w[8])
                } else {
                    None
                },
            });
        }
        Ok(())
    }

    fn content(&mut self, i: usize, transcript: bool) -> Result<ContentInfo> {
        self.content_in(i, transcript, Vec::new())
    }

    /// [`Decoder::content`], with block content decoded into `list` (given back inside
    /// [`ContentInfo::Blocks`], dropped otherwise).
    fn content_in(
        &mut self,
        i: usize,
        transcript: bool,
        mut list: Vec<BlockInfo>,
    ) -> Result<ContentInfo> {
        let Some(&[tag, n]) = self.take(2) else {
            return Err(Error::invalid_message("content changed while reading")
                .at(format!("messages[{i}]")));
        };
        Ok(match tag {
            0 => ContentInfo::None,
            1 => ContentInfo::Text(n as usize),
            2 => ContentInfo::Json(n as usize),
            4 => {
                let loc = || {
                    if transcript {
                        format!("messages[{i}].message.content")
                    } else {
                        format!("messages[{i}].content")
                    }
                };
                self.blocks_into(n as usize, &loc, &mut list)?;
                ContentInfo::Blocks(list)
            }
            5 => {
                return Err(Error::invalid_message(
                    "a transcript line's `message` must be an object",
                )
                .at(format!("messages[{i}].message")))
            }
            6 => {
                return Err(Error::invalid_message(
                    "an OpenAI Chat `tool` message needs a string `tool_call_id` (the id of the call it answers)",
                )
                .at(format!("messages[{i}].tool_call_id")))
            }
            _ => {
                return Err(Error::invalid_message(
                    "content must be a string or an array of blocks",
                )
                .at(format!("messages[{i}]")))
            }
        })
    }
}

impl ConversationView for JsConversation<'_> {
    fn len(&self) -> usize {
        self.len
    }

    fn kind(&self, i: usize) -> Result<Kind> {
        let h = self.header(i);
        let kind = match h & KIND_MASK {
            0 => Kind::User,
            1 => Kind::Assistant,
            2 => Kind::System,
            3 => Kind::Attachment,
            4 => Kind::Other,
            UNKNOWN_ROLE => {
                let role = string_field(self.array, i as u32, "role").unwrap_or_default();
                return Err(crate::model::messages::unknown_role(
                    &role,
                    crate::model::messages::MESSAGE_ROLES,
                )
                .at(format!("messages[{i}].role")));
            }
            _ if h & READ_FAILED != 0 => {
                return Err(read_failure_or(Error::invalid_message("could not be read"))
                    .at(format!("messages[{i}]")))
            }
            _ => return Err(unknown_message(self.array, i)),
        };
        self.shape
            .borrow_mut()
            .see_code(self.base + i, (h >> SHAPE_SHIFT) & 7)?;
        Ok(kind)
    }

    fn is_transcript(&self, i: usize) -> bool {
        self.header(i) & TRANSCRIPT != 0
    }

    fn usage(&self, i: usize) -> Result<Option<UsageCounts>> {
        let h = self.header(i);
        if h & KIND_MASK == NOT_A_MESSAGE || h & HAS_USAGE == 0 {
            return Ok(None);
        }
        let loc = || {
            if h & TRANSCRIPT != 0 {
                format!("messages[{i}].message.usage")
            } else {
                format!("messages[{i}].usage")
            }
        };
        let mut raw = [0f64; 4];
        let present = read_usage(self.array, i as u32, &mut raw);
        if present < 0 {
            return Err(
                read_failure_or(Error::invalid_token_count("usage must be an object")).at(loc()),
            );
        }
        let mut k = 0;
        let raw = raw.map(|v| {
            let p = present & (1 << k) != 0;
            k += 1;
            p.then_some(v)
        });
        UsageCounts::from_raw(raw, loc).map(Some)
    }

    fn message_id(&self, i: usize) -> Option<String> {
        if self.header(i) & TRANSCRIPT == 0 {
            return None;
        }
        message_id(self.array, i as u32)
    }

    fn same_response(&self, i: usize, j: usize) -> bool {
        // Callers pass indices of messages already read (never non-objects); lines without
        // `message.id` (API shape, boundaries) are never the same response.
        if let Some(t) = self.tail.as_ref().filter(|t| t.anchor() == Some(j)) {
            if let Some(same) = t.same(i) {
                return same;
            }
        }
        same_response(self.array, i as u32, j as u32)
    }

    fn usage_is_partial(&self, i: usize) -> bool {
        self.header(i) & PARTIAL_USAGE != 0
    }

    fn is_sidechain(&self, i: usize) -> bool {
        self.header(i) & SIDECHAIN != 0
    }

    fn on_other_branch(&self, i: usize) -> bool {
        self.other_branches.get(i).copied().unwrap_or(false)
    }

    fn has_other_branches(&self) -> bool {
        !self.other_branches.is_empty()
    }

    fn is_compact_boundary(&self, i: usize) -> bool {
        self.header(i) & BOUNDARY != 0
    }

    fn starts_context(&self, i: usize) -> bool {
        self.header(i) & STARTS_CONTEXT != 0
    }

    fn is_window_input(&self, i: usize) -> bool {
        let h = self.header(i);
        // Only a user or system message that is no transcript line is asked about.
        matches!(h & KIND_MASK, 0 | 2)
            && h & TRANSCRIPT == 0
            && window_facts_js(self.array, i as u32) & 1 != 0
    }

    fn is_opaque_item(&self, i: usize) -> bool {
        self.header(i) & TRANSCRIPT == 0 && window_facts_js(self.array, i as u32) & 2 != 0
    }

    fn clears_at_next_user(&self, i: usize) -> bool {
        self.header(i) & CLEARS_AT_USER != 0
    }

    fn boundary_kept(&self, i: usize) -> usize {
        if self.header(i) & BOUNDARY == 0 {
            return 0;
        }
        crate::model::view::kept_messages_from(boundary_kept_js(self.array, i as u32))
    }

    fn attachment_type(&self, i: usize) -> Option<String> {
        if self.header(i) & KIND_MASK != 3 {
            return None;
        }
        attachment_type(self.array, i as u32)
    }

    fn timestamp(&self, i: usize) -> Option<String> {
        if self.header(i) & KIND_MASK == NOT_A_MESSAGE {
            return None;
        }
        string_field(self.array, i as u32, "timestamp")
    }

    fn uuid(&self, i: usize) -> Option<String> {
        if self.header(i) & KIND_MASK == NOT_A_MESSAGE {
            return None;
        }
        string_field(self.array, i as u32, "uuid")
    }

    fn content_equals(&self, i: usize, text: &str) -> bool {
        self.header(i) & KIND_MASK == 0 && content_equals(self.array, i as u32, text)
    }

    fn content(&self, i: usize, detail: Detail) -> Result<ContentInfo> {
        Ok(self.contents(i..i + 1, detail)?.remove(0))
    }

    fn each_content(
        &self,
        range: std::ops::Range<usize>,
        detail: Detail,
        each: &mut dyn FnMut(usize, &ContentInfo) -> Result<()>,
    ) -> Result<()> {
        if detail == Detail::Estimate && !range.is_empty() {
            for i in range.clone() {
                self.kind(i)?;
            }
            if let Some(mut d) = self.tail_decoder(&range) {
                // Decoded one message at a time into one block list, kept for the next count.
                let mut list = BLOCK_LIST.with(|l| std::mem::take(&mut *l.borrow_mut()));
                for i in range {
                    let content = d.content_in(i, self.is_transcript(i), list)?;
                    each(i, &content)?;
                    list = match content {
                        ContentInfo::Blocks(l) => l,
                        _ => Vec::new(),
                    };
                }
                list.clear();
                if list.capacity() <= 1 << 10 {
                    BLOCK_LIST.with(|l| *l.borrow_mut() = list);
                }
                return Ok(());
            }
            // Kinds checked above: described without checking them again.
            for (i, c) in range.clone().zip(self.described(range, detail)?) {
                each(i, &c)?;
            }
            return Ok(());
        }
        for (i, c) in range.clone().zip(self.contents(range, detail)?) {
            each(i, &c)?;
        }
        Ok(())
    }

    fn tool_index(&self, from: usize, with_paths: bool) -> Result<ToolIndex> {
        let Some(words) = tool_index_js(self.array, from as u32, with_paths, self.keep_tool_index)
        else {
            // Each message indexed alone, as a list of one (not kept for the next call).
            let list: &Array = self.array.unchecked_ref();
            if let Some(e) = located_failure(|| from..self.len, &|i| {
                let Some(m) = element(list, i) else {
                    return true;
                };
                tool_index_js(&Array::of1(&m), 0, with_paths, false);
                take_names();
                false
            }) {
                return Err(e);
            }
            // Something is malformed: the detailed reader finds and names it.
            self.contents(from..self.len, Detail::Structure)?;
            return Err(Error::invalid_message("malformed tool block"));
        };
        decode_tool_index(&words, take_names())
    }

    fn latest_usage(&self, end: usize) -> Result<Latest> {
        if let Some(t) = self.tail.as_ref().filter(|_| end == self.len) {
            let f = &t.f;
            return self.latest_from(t.at(), &[f[0], f[2], f[3], f[4], f[5], f[6]]);
        }
        let mut out = [0f64; 6];
        let i = latest_usage_js(self.array, end as u32, &mut out);
        self.latest_from(i, &out)
    }

    fn previous_sibling(&self, before: usize, last: usize) -> Result<Option<usize>> {
        if let Some(t) = self.tail.as_ref().filter(|t| t.anchor() == Some(last)) {
            let chain = t.chain();
            if before == last {
                return Ok(chain.first().map(|&j| j as usize));
            }
            if let Some(k) = chain.iter().position(|&j| j as usize == before) {
                return Ok(chain.get(k + 1).map(|&j| j as usize));
            }
        }
        let j = previous_sibling_js(self.array, before as u32, last as u32);
        Ok((j >= 0).then_some(j as usize))
    }

    fn rfind(&self, end: usize, find: Find) -> Result<Option<usize>> {
        let mask = u32::from(find.assistant_with_usage)
            | u32::from(find.assistant) << 1
            | u32::from(find.boundary) << 2;
        match rfind_js(self.array, end as u32, mask) {
            -1 => Ok(None),
            i if i >= 0 => Ok(Some(i as usize)),
            bad => {
                let i = (-2 - bad) as usize;
                self.kind(i)?;
                Err(Error::invalid_message("not a message").at(format!("messages[{i}]")))
            }
        }
    }

    fn contents(&self, range: std::ops::Range<usize>, detail: Detail) -> Result<Vec<ContentInfo>> {
        if range.is_empty() {
            return Ok(Vec::new());
        }
        for i in range.clone() {
            self.kind(i)?;
        }
        if detail == Detail::Estimate {
            if let Some(mut d) = self.tail_decoder(&range) {
                return range.map(|i| d.content(i, self.is_transcript(i))).collect();
            }
        }
        self.described(range, detail)
    }
}

impl JsConversation<'_> {
    /// A decoder of the tail read's descriptions of `range`, when it described them all.
    fn tail_decoder(&self, range: &std::ops::Range<usize>) -> Option<Decoder<'_>> {
        Some(Decoder {
            words: self.tail_contents(range)?,
            pos: 0,
            strings: Vec::new(),
        })
    }

    /// The contents of `range` as `describeContents` reads them (their kinds already checked).
    fn described(&self, range: std::ops::Range<usize>, detail: Detail) -> Result<Vec<ContentInfo>> {
        let words = describe_contents(
            self.array,
            range.start as u32,
            range.end as u32,
            detail == Detail::Estimate,
            self.shape.borrow().shape().code(),
        );
        if words.is_empty() {
            // Each message read alone the way they were read together.
            let code = self.shape.borrow().shape().code();
            let estimate = detail == Detail::Estimate;
            if let Some(e) = located_failure(|| range.clone(), &|i| {
                describe_contents(self.array, i as u32, i as u32 + 1, estimate, code);
                take_strings(); // nothing interned is left for the next reading
                false
            }) {
                return Err(e);
            }
        }
        let strings = if detail == Detail::Estimate {
            Vec::new() // estimates need no ids or names: nothing was interned
        } else {
            take_strings()
                .split('\u{1e}')
                .skip(1)
                .map(Str::from)
                .collect()
        };
        let mut d = Decoder {
            words: &words,
            pos: 0,
            strings,
        };
        range.map(|i| d.content(i, self.is_transcript(i))).collect()
    }
}

/// Applies the core's edits to copies of the edited messages; returns a new array that shares
/// every other message object with the input.
pub fn apply_edits(conv: &JsConversation<'_>, edits: &[Edit]) -> Result<Array> {
    if edits.is_empty() {
        return Ok(plain_slice(conv.array(), 0, conv.len() as u32));
    }
    let mut texts: Vec<&str> = Vec::new();
    let mut ops: Vec<[u32; 5]> = Vec::with_capacity(edits.len());
    for e in edits {
        let (op, message, block, nested, text) = match e {
            Edit::ReplaceWithText {
                message,
                block,
                nested,
                text,
            } => (
                0,
                *message,
                *block,
                nested.map_or(u32::MAX, |n| n as u32),
                text,
            ),
            Edit::SetToolResultContent {
                message,
                block,
                text,
            } => (1, *message, *block, u32::MAX, text),
        };
        if message >= conv.len() {
            return Err(Error::invalid_argument(format!(
                "edit targets messages[{message}]"
            )));
        }
        let t = match texts.iter().position(|t| *t == text.as_str()) {
            Some(k) => k,
            None => {
                texts.push(text);
                texts.len() - 1
            }
        };
        ops.push([op, message as u32, block as u32, nested, t as u32]);
    }
    crate::model::order::sort_by(&mut ops, &|a, b| a[1].cmp(&b[1]));
    let flat: Vec<u32> = ops.concat();
    apply_edits_js(conv.array, &flat, &texts.join("\u{1e}")).ok_or_else(|| {
        read_failure_or(Error::invalid_message(
            "the messages changed while the edits were applied",
        ))
    })
}

thread_local! {
    /// The last tool names `take_names` decoded, with the text they came from: a conversation
    /// read again (microCompact on every turn) names the same tools in the same order.
    static LAST_NAMES: RefCell<(String, Vec<Str>)> = const { RefCell::new((String::new(), Vec::new())) };
}

/// The tool names the last tool index read interned, in order.
fn take_names() -> Vec<Str> {
    let text = take_strings();
    LAST_NAMES.with(|last| {
        let mut last = last.borrow_mut();
        if last.0 != text {
            let names = text.split('\u{1e}').skip(1).map(Str::from).collect();
            *last = (text, names);
        }
        last.1.clone()
    })
}

/// A tool index from the words `toolIndex` / `apiToolIndex` give: 3 per call, 6 per result,
/// then the numbers of calls, of results and of paths.
#[cfg_attr(cc_speed, optimize(speed))]
fn decode_tool_index(words: &[u32], names: Vec<Str>) -> Result<ToolIndex> {
    // The counts come last.
    let Some((words, &[n_uses, n_results, path_count])) = words.split_last_chunk::<3>() else {
        return Err(Error::invalid_message("malformed tool block"));
    };
    let (n_uses, n_results) = (n_uses as usize, n_results as usize);
    let uses_end = n_uses * 3;
    if words.len() != uses_end + n_results * 6 {
        return Err(Error::invalid_message("the messages changed while read"));
    }
    let uses = words[..uses_end]
        .chunks_exact(3)
        .map(|w| ToolUseEntry {
            message: w[0] as usize,
            name: w[1],
            path: w[2].checked_sub(1),
        })
        .collect();
    let results = words[uses_end..]
        .chunks_exact(6)
        .map(|w| ToolResultEntry {
            message: w[0] as usize,
            block: w[1] as usize,
            call: (w[2] as usize).checked_sub(1),
            text_units: w[3] as usize,
            media: w[4] as usize,
            is_cleared: w[5] != 0,
        })
        .collect();
    Ok(ToolIndex {
        uses,
        results,
        names,
        path_count: path_count as usize,
    })
}

/// microCompact's result object (`{messages, tokensFreed, clearedToolUseIds}`) in one
/// crossing: the results at positions `picked` (ascending) of the tool index the view last
/// read with [`JsConversation::keep_tool_index`] get the content `text`, in each message's own
/// shape. `None` when that index is not of this array as it is now: apply the plan's edits
/// with [`apply_edits`] instead.
pub fn micro_compact_apply(
    conv: &JsConversation<'_>,
    picked: &[u32],
    text: &str,
    tokens_freed: f64,
) -> Result<Option<JsValue>> {
    let out = micro_compact_apply_js(conv.array, picked, text, tokens_freed);
    if out.is_undefined() {
        return Err(read_failure_or(Error::invalid_message(
            "the messages changed while the edits were applied",
        )));
    }
    Ok((!out.is_null()).then_some(out))
}

/// The `tool_use_id`s of the tool results the edits change, read in place (one crossing).
pub fn edited_tool_use_ids(conv: &JsConversation<'_>, edits: &[Edit]) -> Array {
    let at: Vec<u32> = edits
        .iter()
        .flat_map(|e| match e {
            Edit::SetToolResultContent { message, block, .. } => [*message as u32, *block as u32],
            Edit::ReplaceWithText { message, block, .. } => [*message as u32, *block as u32],
        })
        .collect();
    tool_use_ids_at(conv.array, &at)
}
