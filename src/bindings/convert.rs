//! Conversions at the JS boundary: errors, serde values, configuration.

use std::cell::RefCell;

use js_sys::Reflect;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::drive::options::Source;
use crate::model::config::{Config, Given};
use crate::model::error::{Error, ErrorCode};
use crate::model::messages::{
    payload_is_read, Message, COMPACTION_LINE_FIELDS, COMPACTION_UNREAD_FIELDS, UNREAD_FIELDS,
    UNREAD_LINE_FIELDS,
};
use crate::transforms::transcript::{message_from_fields, message_from_json_text, Field};

#[wasm_bindgen(module = "/src/bindings/js_convert.js")]
extern "C" {
    #[wasm_bindgen(js_name = keysOf)]
    fn keys_of(v: &JsValue) -> Option<Vec<String>>;
    #[wasm_bindgen(js_name = propOf)]
    fn prop_of(obj: &JsValue, key: &str) -> JsValue;
    #[wasm_bindgen(js_name = propThrew)]
    fn prop_threw() -> JsValue;
    #[wasm_bindgen(js_name = takeConvertError)]
    fn take_convert_error() -> JsValue;
    #[wasm_bindgen(js_name = itemsOf)]
    fn items_of(v: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = isArray)]
    fn is_array_js(v: &JsValue) -> bool;
    #[wasm_bindgen(js_name = jsonOf)]
    fn json_of(v: &JsValue) -> Option<String>;
}

// The readings of whole messages and arguments (js_batch.js: the counting module's page does
// not load it).
#[wasm_bindgen(module = "/src/bindings/js_batch.js")]
extern "C" {
    #[wasm_bindgen(js_name = entriesOf)]
    fn entries_of(v: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = heldCopy)]
    fn held_copy(v: &JsValue, max: u32) -> JsValue;
    #[wasm_bindgen(js_name = strictJson)]
    fn strict_json(v: &JsValue) -> Option<String>;
    #[wasm_bindgen(js_name = jsonCaught)]
    fn json_caught(v: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = parseCaught)]
    fn parsed_of(text: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = deeperThan)]
    fn deeper_than_js(v: &JsValue, limit: u32) -> bool;
    #[wasm_bindgen(js_name = loneSurrogates)]
    fn lone_surrogates_js(arr: &JsValue) -> js_sys::Uint32Array;
    #[wasm_bindgen(js_name = headsOf)]
    fn heads_of(arr: &JsValue, start: u32, end: u32) -> String;
    #[wasm_bindgen(js_name = jsonBatch)]
    fn json_batch(
        arr: &JsValue,
        start: u32,
        classes: Vec<u8>,
        keys: &JsValue,
        omit: &JsValue,
        max_bytes: u32,
        apart: bool,
    ) -> js_sys::Array;
}

// In js_env.js, not js_convert.js: the counting module's JS, which never reads a hook's answer
// or a `readFileState`, then does not carry it.
#[wasm_bindgen(module = "/src/bindings/js_env.js")]
extern "C" {
    /// What `v` is when it is not data ([`crate::drive::options::Source::builtin_kind`]).
    #[wasm_bindgen(js_name = builtinKind)]
    fn builtin_kind_js(v: &JsValue) -> Option<String>;
}

/// A compaction's own copy of the caller's messages array, taken when it is called (the same
/// message objects): the result keeps what the array held then, whatever the callbacks do to
/// it meanwhile (a summarizer that cleared it left `undefined` among the kept messages).
/// Arrays longer than `max`, and values that are not arrays, are given back as they are.
pub fn held_messages(messages: JsValue, max: usize) -> JsValue {
    held_copy(&messages, max.min(u32::MAX as usize) as u32)
}

/// The indices (ascending) of the messages of the caller's array `arr` that hold a string
/// with a lone UTF-16 surrogate (see `loneSurrogates` in `js_batch.js`).
pub fn lone_surrogates(arr: &JsValue) -> Vec<usize> {
    lone_surrogates_js(arr)
        .to_vec()
        .into_iter()
        .map(|i| i as usize)
        .collect()
}

/// What a guarded read of the caller's value threw, as an `INVALID_ARGUMENT` error (the
/// original kept as the JS error's `cause`); `None` when nothing threw.
fn convert_failure() -> Option<Error> {
    let e = take_convert_error();
    if e.is_undefined() {
        return None;
    }
    let why = e
        .dyn_ref::<js_sys::Error>()
        .and_then(|x| x.message().as_string())
        .unwrap_or_else(|| "a non-Error value".into());
    super::errors::set_cause(e);
    Some(Error::invalid_argument(format!("reading it threw: {why}")))
}

/// The elements of `v` when it is an array (`None` when it is not), copied in JS; `Err`
/// ("reading it threw: …", the thrown value kept as the cause) when reading them threw (a
/// Proxy's trap, an element getter).
pub fn items_or_read_error(v: &JsValue) -> crate::Result<Option<Vec<JsValue>>> {
    let copy = items_of(v);
    if copy.is_null() {
        return Err(
            convert_failure().unwrap_or_else(|| Error::invalid_argument("reading it threw"))
        );
    }
    Ok(copy.dyn_ref::<js_sys::Array>().map(|a| a.to_vec()))
}

/// `Array.isArray(v)`, or, when that threw (a revoked `Proxy`), the `INVALID_MESSAGE` error
/// "reading the messages threw" with the original kept as the JS error's `cause`.
pub fn is_array_or_read_error(v: &JsValue) -> crate::Result<bool> {
    if is_array_js(v) {
        return Ok(true);
    }
    let e = take_convert_error();
    if e.is_undefined() {
        return Ok(false);
    }
    Err(super::js_view::failure_of(e, None))
}

/// Which fields of a message cross into the core (see [`messages_json_batch`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// Everything the library reads anywhere: the message without [`UNREAD_FIELDS`], or a
    /// carried line's [`UNREAD_LINE_FIELDS`].
    Whole,
    /// What a compaction reads: the message without [`COMPACTION_UNREAD_FIELDS`], or a
    /// carried line's [`COMPACTION_LINE_FIELDS`] (the compaction paths read the line its
    /// session fields come from again, [`Reading::Whole`]).
    Compaction,
}

/// The keys of a carried line that [`Reading::Compaction`] reads.
const COMPACTION_LINE_LISTS: [&[&str]; 1] = [COMPACTION_LINE_FIELDS];

impl Reading {
    /// The keys read of a line whose payload is never read ([`payload_is_read`]), in order,
    /// as lists one after another.
    fn line_keys(self) -> &'static [&'static [&'static str]] {
        match self {
            Reading::Whole => &UNREAD_LINE_FIELDS,
            Reading::Compaction => &COMPACTION_LINE_LISTS,
        }
    }

    /// The message of a batch's text ([`JsonBatch::get`]) read this way, named `at` in
    /// errors: the picked fields of a carried line ([`message_from_fields`]) when `jsonBatch`
    /// wrote them without JSON (the text starts with U+001F, which no JSON text does), else
    /// the message of its JSON text ([`message_from_json_text`]).
    pub fn message(self, text: &str, at: &dyn Fn() -> String) -> crate::Result<Message> {
        let Some(rest) = text.strip_prefix('\u{1f}') else {
            return message_from_json_text(text, at);
        };
        // Per key, its tag and value followed by U+001F: `-` absent, `t` true, `f` false,
        // `s` and a string (one without U+001F).
        let mut values = rest.split_terminator('\u{1f}');
        let mut fields = Vec::with_capacity(8);
        for &key in self.line_keys().iter().flat_map(|l| l.iter()) {
            let field = match values.next() {
                Some("-") => Field::Absent,
                Some("t") => Field::Bool(true),
                Some("f") => Field::Bool(false),
                Some(v) if v.starts_with('s') => Field::Str(&v[1..]),
                _ => break,
            };
            fields.push((key, field));
        }
        let keys: usize = self.line_keys().iter().map(|l| l.len()).sum();
        if fields.len() != keys || values.next().is_some() {
            return Err(Error::invalid_message("its picked fields are not readable").at(at()));
        }
        message_from_fields(&fields, at)
    }
}

/// Why a batch ([`messages_json_batch`]) stopped before the message after its last one.
pub enum Stop {
    /// That message was not asked for (the run's end, or the batch was full).
    NotAsked,
    /// Reading it from the array threw (what was thrown is kept as the error's cause).
    ReadThrew,
    /// `JSON.stringify` of it threw (a cycle, a `BigInt`, a getter or `toJSON` that throws).
    JsonThrew,
    /// It has no JSON text (`undefined`, a function, a hole).
    NoText,
    /// The batch's text would take the conversation's text past [`MAX_READ_BYTES`]: nothing
    /// of it was copied. `at` is the message (of the batch) whose text passes it, `total` the
    /// bytes the reading would then hold.
    TooLarge { at: usize, total: u64 },
}

/// The most bytes of text (UTF-8) the messages of one reading take into the WebAssembly
/// memory, 512 MiB. The reading and what is made of it take several times that (a compaction
/// or `toApiMessages` five to six times), and the instance's memory is 4 GiB: past about
/// 700 MB the instance trapped (`INSTANCE_RESET`, every live `Compactor` lost), and its
/// memory, which never shrinks, stayed that large. A result that long could not come back as
/// a JS string anyway (at most 2^29 − 24 characters).
pub const MAX_READ_BYTES: u64 = 512 << 20;

/// The JSON texts of a run of messages read in one crossing (see [`messages_json_batch`]).
pub struct JsonBatch {
    /// How many messages were written.
    pub count: usize,
    /// The texts, one after another, each followed by the strings sent apart from it.
    pub text: String,
    /// Where each message's text and the strings sent apart from it end in `text`.
    pub ends: Vec<u32>,
    /// Per string sent apart, in order (of their messages too): its message, its place
    /// ([`Message::put_apart_text`]'s slot) and its length in bytes.
    pub apart: Vec<u32>,
    /// Why the message after them was not written.
    pub stop: Stop,
}

impl JsonBatch {
    /// The JSON text of message `k` of the batch and the strings sent apart from it, with
    /// their places; `None` if the bounds are not character boundaries (never, for what
    /// `TextEncoder` writes) or do not add up. The messages are taken in order, `0, 1, …`:
    /// `next` (0 for the first) is where the strings of message `k` start in
    /// [`Self::apart`], moved past them.
    pub fn get(&self, k: usize, next: &mut usize) -> Option<(&str, Vec<(usize, &str)>)> {
        let start = match k {
            0 => 0,
            _ => *self.ends.get(k - 1)? as usize,
        };
        // The strings sent apart come last, in order: walked back from the end.
        let mut at = *self.ends.get(k)? as usize;
        let mut apart = Vec::new();
        let mine = self.apart.get(*next..)?;
        let n = mine
            .chunks_exact(3)
            .take_while(|t| t[0] as usize == k)
            .count();
        *next += 3 * n;
        for t in mine[..3 * n].chunks_exact(3).rev() {
            let from = at.checked_sub(t[2] as usize)?;
            apart.push((t[1] as usize, self.text.get(from..at)?));
            at = from;
        }
        Some((self.text.get(start..at)?, apart))
    }

    /// The error for the message the batch stopped at (named `at`), when it stopped at one.
    pub fn stop_error(&self, at: &dyn Fn() -> String) -> Option<Error> {
        let why = || {
            let e = take_convert_error();
            let why = e
                .dyn_ref::<js_sys::Error>()
                .and_then(|x| x.message().as_string())
                .unwrap_or_else(|| "not serializable".into());
            super::errors::set_cause(e);
            why
        };
        let e = match self.stop {
            Stop::NotAsked => return None,
            Stop::ReadThrew => {
                why();
                Error::invalid_message("reading the message threw")
            }
            Stop::JsonThrew => {
                Error::invalid_message(format!("cannot be read as JSON ({})", why()))
            }
            Stop::NoText => Error::invalid_message("expected a message object"),
            Stop::TooLarge { total, .. } => {
                return Some(too_large(total, &at()));
            }
        };
        Some(e.at(at()))
    }
}

/// What is read of each message whose `type`, `role` and `subtype` `headsOf` wrote: 0 the
/// message without the fields nothing reads, 1 only a carried line's fields, 2 the value as
/// it is (not an object). `None` for a text `headsOf` does not write.
fn read_classes(heads: &str) -> Option<Vec<u8>> {
    heads
        .split('\u{1e}')
        .map(|entry| {
            if entry == "\u{2}" {
                return Some(2);
            }
            let mut fields = entry.split('\u{1f}');
            let mut next = || {
                let f = fields.next()?;
                Some((f != "\u{0}").then_some(f))
            };
            let (t, r, s) = (next()?, next()?, next()?);
            if fields.next().is_some() {
                return None;
            }
            Some(if payload_is_read(t, r, s) { 0 } else { 1 })
        })
        .collect()
}

/// The JSON texts of what the core reads of messages `start..end` of the array `arr`
/// (`reading` says which fields), in two crossings instead of several per message: their
/// `type`, `role` and `subtype`, from which Rust decides what is read of each (the message
/// without the fields nothing reads or, for a line whose payload is never read
/// ([`payload_is_read`]), only its identity fields, picked in JS so that a large payload is
/// neither copied nor written); then their texts, as UTF-8 written by the engine's
/// `TextEncoder` into one buffer copied once. At least one message is asked for, and no more
/// once about `max_bytes` are written; a message whose head could not be read is read alone,
/// without the fields nothing reads. With `apart`, the long strings of a message's content
/// cross apart from its JSON text, as UTF-8 as they are ([`JsonBatch::get`],
/// [`Message::put_apart_text`]): `JSON.stringify`'s escaping of them and the reading of the
/// escapes are most of the cost of a long conversation's crossing. A batch whose text would
/// take the reading past [`MAX_READ_BYTES`] (`crossed`: the bytes its earlier batches took)
/// is not copied ([`Stop::TooLarge`]).
pub fn messages_json_batch(
    arr: &JsValue,
    start: u32,
    end: u32,
    reading: Reading,
    (max_bytes, crossed): (u32, u64),
    apart: bool,
) -> JsonBatch {
    let heads = heads_of(arr, start, end);
    let mut classes = if heads.is_empty() {
        Vec::new()
    } else {
        read_classes(&heads).unwrap_or_default()
    };
    if classes.is_empty() {
        classes.push(0);
    }
    let out = MESSAGE_KEYS.with(|k| {
        let (keep, omit) = match reading {
            Reading::Whole => &k.whole,
            Reading::Compaction => &k.compaction,
        };
        json_batch(arr, start, classes, keep, omit, max_bytes, apart)
    });
    let count = out.get(0).as_f64().unwrap_or(0.0) as usize;
    let bytes: js_sys::Uint8Array = out.get(1).unchecked_into();
    let ends: js_sys::Uint32Array = out.get(2).unchecked_into();
    let room = MAX_READ_BYTES.saturating_sub(crossed);
    if u64::from(bytes.length()) > room {
        // The first message whose text's end passes `room` (the batch's texts end at `ends`).
        let ends = ends.to_vec();
        let at = ends.iter().position(|&e| u64::from(e) > room).unwrap_or(0);
        let total = crossed + u64::from(ends.get(at).copied().unwrap_or(0));
        return JsonBatch {
            count: 0,
            text: String::new(),
            ends: Vec::new(),
            apart: Vec::new(),
            stop: Stop::TooLarge { at, total },
        };
    }
    let mut buf = vec![0u8; bytes.length() as usize];
    bytes.copy_to(&mut buf);
    let stop = match out.get(3).as_f64() {
        Some(1.0) => Stop::ReadThrew,
        Some(2.0) => Stop::JsonThrew,
        Some(3.0) => Stop::NoText,
        _ => Stop::NotAsked,
    };
    let apart = match out.get(4).dyn_into::<js_sys::Uint32Array>() {
        Ok(a) => a.to_vec(),
        Err(_) => Vec::new(),
    };
    // TextEncoder writes valid UTF-8; anything else is no text at all.
    let (text, ends) = match String::from_utf8(buf) {
        Ok(t) => (t, ends.to_vec()),
        Err(_) => (String::new(), Vec::new()),
    };
    JsonBatch {
        count: count.min(ends.len()),
        text,
        ends,
        apart,
        stop,
    }
}

/// The refusal of a reading whose text would reach `total` bytes at message `at`.
pub fn too_large(total: u64, at: &str) -> Error {
    Error::invalid_argument(format!(
        "messages: the conversation's text reaches {total} bytes at {at}; at most \
         {MAX_READ_BYTES} bytes (512 MiB) are read into the WebAssembly memory"
    ))
}

/// The key lists [`messages_json_batch`] passes, made once.
struct MessageKeys {
    /// [`Reading::Whole`]: (the keys kept of a carried line, as a list; the keys left out of
    /// others, as a set: `jsonOf` asks it once per key of every message).
    whole: (JsValue, JsValue),
    /// [`Reading::Compaction`]: the same.
    compaction: (JsValue, JsValue),
}

/// The keys of `lists`, one after another, as a JS array.
fn js_list(lists: &[&[&str]]) -> JsValue {
    let out = js_sys::Array::new();
    for k in lists.iter().flat_map(|l| l.iter()) {
        out.push(&JsValue::from_str(k));
    }
    out.into()
}

/// The keys of `lists` as a JS `Set`.
fn js_set(lists: &[&[&str]]) -> JsValue {
    js_sys::Set::new(&js_list(lists)).into()
}

thread_local! {
    static MESSAGE_KEYS: MessageKeys = MessageKeys {
        whole: (js_list(Reading::Whole.line_keys()), js_set(&[UNREAD_FIELDS])),
        compaction: (
            js_list(Reading::Compaction.line_keys()),
            js_set(&COMPACTION_UNREAD_FIELDS),
        ),
    };
}

thread_local! {
    static ENV_DEFAULTS: RefCell<Config> = RefCell::new(Config::default());
}

/// Turns a core error into a `ContextCompactionError` (a JS `Error`) with a stable `code`.
pub fn js_error(e: Error) -> JsValue {
    super::errors::to_js_error(&e)
}

/// Result type of exported functions.
pub type JsResult<T> = std::result::Result<T, JsValue>;

/// Maps a core result to a JS result.
pub fn js<T>(r: crate::Result<T>) -> JsResult<T> {
    r.map_err(js_error)
}

/// Serializes a value for JS (plain objects, not Maps): written as JSON text by serde_json
/// (whose writers the core already has) and read by the engine's own `JSON.parse`.
pub fn to_js<T: Serialize + ?Sized>(v: &T) -> JsResult<JsValue> {
    let text = serde_json::to_string(v).map_err(serialization_failed)?;
    js_sys::JSON::parse(&text)
}

/// The error of a failed [`to_js`] (one copy, not one per serialized type).
#[inline(never)]
fn serialization_failed(e: serde_json::Error) -> JsValue {
    js_error(Error::new(ErrorCode::SerializationFailed, e.to_string()))
}

/// The value `v` (the caller's data, named `what` in errors) as JSON data, through the one
/// guarded path every structured value takes into the core: written by the caller's own
/// `JSON.stringify` (a cycle, a `BigInt`, a getter or `toJSON` that throws, or nesting too
/// deep for the JS stack is an error there, caught), then parsed with serde_json's nesting
/// limit (128 levels) — so no value can exhaust the WebAssembly stack.
pub fn json_value(v: &JsValue, what: &str) -> crate::Result<serde_json::Value> {
    let text = stringify(v)
        .map_err(|why| Error::invalid_argument(format!("{what} cannot be read as JSON ({why})")))?;
    let Some(text) = text else {
        return Ok(serde_json::Value::Null);
    };
    serde_json::from_str(&text)
        .or_else(|_| {
            serde_json::from_str(&crate::transforms::transcript::replace_lone_surrogates(
                &text,
            ))
        })
        .map_err(|e| Error::invalid_argument(format!("{what} cannot be read as JSON ({e})")))
}

/// The message of what the caller's value threw (an `Error`'s message, else "it threw").
fn thrown_message(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .and_then(|e| e.message().as_string())
        .unwrap_or_else(|| "it threw".into())
}

/// `JSON.stringify(v)`: `Ok(None)` when `v` has no JSON form, `Err` with what it threw (a
/// cycle, a `BigInt`, a throwing getter or `toJSON`). Caught in JS (js_batch.js `jsonCaught`): a
/// throw of js-sys's `catch` import leaks a slot of the externref table each time.
#[cfg(any(feature = "base", feature = "extra"))]
fn stringify(v: &JsValue) -> std::result::Result<Option<String>, String> {
    let text = json_caught(v);
    if text.is_null() {
        return Err(thrown_message(&take_convert_error()));
    }
    Ok(text.as_string())
}

/// The counting module keeps js-sys's `JSON.stringify` (its page does not load js_batch.js).
#[cfg(not(any(feature = "base", feature = "extra")))]
fn stringify(v: &JsValue) -> std::result::Result<Option<String>, String> {
    js_sys::JSON::stringify(v)
        .map(|t| t.as_string())
        .map_err(|e| thrown_message(&e))
}

/// `JSON.parse(text)` of a JS string, caught in JS (js_batch.js `parseCaught`, for the reason
/// [`stringify`] gives): `Err` with the parser's message when it is not JSON text.
pub fn parse_json(text: &JsValue) -> std::result::Result<JsValue, String> {
    let v = parsed_of(text);
    if v.is_undefined() {
        return Err(thrown_message(&take_convert_error()));
    }
    Ok(v)
}

/// [`json_value`] for an options object: a number JSON cannot hold (`NaN`, `Infinity`)
/// becomes a string, so that reading it as a number is an error naming it rather than a
/// silent `null`.
pub fn options_json(v: &JsValue, what: &str) -> crate::Result<serde_json::Value> {
    let Some(text) = strict_json(v) else {
        return Err(match convert_failure() {
            Some(e) => {
                Error::invalid_argument(format!("{what} cannot be read as JSON ({})", e.message))
            }
            None => Error::invalid_argument(format!("{what} cannot be read as JSON")),
        });
    };
    serde_json::from_str(&text)
        .map_err(|e| Error::invalid_argument(format!("{what} cannot be read as JSON ({e})")))
}

/// Whether the caller's value `v` nests objects and arrays more than `limit` levels deep.
pub fn deeper_than(v: &JsValue, limit: u32) -> bool {
    deeper_than_js(v, limit)
}

/// Reads a config argument, validates it, and fills absent fields from the environment
/// defaults (set by the Node entry).
pub fn config_arg(v: &JsValue) -> crate::Result<Config> {
    if v.is_object() {
        let keys = Source::keys(v)
            .map_err(|e| Error::new(ErrorCode::InvalidConfig, format!("config: {}", e.message)))?;
        for key in keys {
            Config::check_key(&key)?;
            if prop(v, &key).as_f64().is_some_and(|n| !n.is_finite()) {
                return Err(Error::new(
                    ErrorCode::InvalidConfig,
                    format!("config.{key} must be a finite number"),
                ));
            }
        }
    }
    let explicit = if v.is_undefined() || v.is_null() {
        Config::default()
    } else if !v.is_object() {
        return Err(Error::new(
            ErrorCode::InvalidConfig,
            "config must be an object",
        ));
    } else {
        Config::read(|k| {
            let f = prop(v, k);
            if f.is_undefined() || f.is_null() {
                Given::Absent
            } else if let Some(n) = f.as_f64() {
                Given::Number(n)
            } else if let Some(b) = f.as_bool() {
                Given::Bool(b)
            } else if f.is_string() {
                Given::Other("a string")
            } else if f.is_function() {
                Given::Other("a function")
            } else if js_sys::Array::is_array(&f) {
                Given::Other("an array")
            } else if f.is_object() {
                Given::Other("an object")
            } else {
                Given::Other("neither a number nor a boolean")
            }
        })?
    };
    Ok(ENV_DEFAULTS.with(|d| explicit.over(&d.borrow())))
}

/// Replaces the environment defaults.
pub fn set_env_defaults(c: Config) {
    ENV_DEFAULTS.with(|d| *d.borrow_mut() = c);
}

/// Reads a model id argument.
pub fn model_arg(v: &JsValue) -> crate::Result<String> {
    if v.is_undefined() || v.is_null() {
        return Ok(String::new());
    }
    v.as_string()
        .ok_or_else(|| Error::invalid_argument("model must be a string (a model id)"))
}

/// Reads a non-negative finite token count argument.
pub fn tokens_arg(v: &JsValue, what: &str) -> crate::Result<u64> {
    match v.as_f64() {
        Some(n) => crate::model::error::check_token_count(n, what),
        None => Err(Error::invalid_token_count(format!(
            "{what} must be a number"
        ))),
    }
}

/// Reads an optional property of an options object (or of a function: a summarizer may
/// carry flags such as `onDemandCompaction`). A read that throws (a getter, a `Proxy`) gives
/// `undefined` here and is kept (the first one since [`reading`] began) for [`reading`] to
/// report.
pub fn prop(obj: &JsValue, key: &str) -> JsValue {
    if obj.is_object() || obj.is_function() {
        // Read in JS (`propOf`): a throw through js-sys's `Reflect.get` would leak a slot of
        // the externref table each time.
        let v = prop_of(obj, key);
        if v.is_undefined() {
            let threw = prop_threw();
            if let Some(pair) = threw.dyn_ref::<js_sys::Array>() {
                return unreadable(key, pair.get(0));
            }
        }
        v
    } else {
        JsValue::UNDEFINED
    }
}

#[cfg(any(feature = "base", feature = "extra"))]
thread_local! {
    /// The first property read of [`prop`] that threw since [`reading`] began: its key and
    /// what it threw.
    static UNREADABLE: RefCell<Option<(String, JsValue)>> = const { RefCell::new(None) };
}

#[cfg(any(feature = "base", feature = "extra"))]
#[cold]
#[inline(never)]
fn unreadable(key: &str, e: JsValue) -> JsValue {
    UNREADABLE.with(|u| {
        let mut u = u.borrow_mut();
        if u.is_none() {
            *u = Some((key.to_string(), e));
        }
    });
    JsValue::UNDEFINED
}

/// Runs `read`, which reads the caller's options object `what` (`"context"`, `"options"`)
/// through [`prop`]: when one of its reads threw (a getter of `config`, `signal`, `hooks`,
/// …), that is the answer, an `INVALID_ARGUMENT` naming the key with what it threw as the
/// `cause` — not whatever `read` made of an absent option.
#[cfg(any(feature = "base", feature = "extra"))]
pub fn reading<T>(what: &str, read: impl FnOnce() -> crate::Result<T>) -> crate::Result<T> {
    let outer = UNREADABLE.with(|u| u.borrow_mut().take());
    let out = read();
    let failed = UNREADABLE.with(|u| std::mem::replace(&mut *u.borrow_mut(), outer));
    match failed {
        None => out,
        Some((key, e)) => Err(super::errors::read_threw(what, &key, e)),
    }
}

/// Runs `read` as [`reading`] does, but gives back what it made, with the key of the first
/// read that threw and what it threw in words (a hook's answer: what else it has is still
/// used, and the throw is reported beside it). The thrown value is not kept as a cause.
#[cfg(any(feature = "base", feature = "extra"))]
pub fn reading_on<T>(read: impl FnOnce() -> T) -> (T, Option<(String, String)>) {
    let outer = UNREADABLE.with(|u| u.borrow_mut().take());
    let out = read();
    let failed = UNREADABLE.with(|u| std::mem::replace(&mut *u.borrow_mut(), outer));
    (
        out,
        failed.map(|(key, e)| (key, super::errors::thrown_words(&e))),
    )
}

#[cfg(not(any(feature = "base", feature = "extra")))]
pub fn reading_on<T>(read: impl FnOnce() -> T) -> (T, Option<(String, String)>) {
    (read(), None)
}

/// The counting module (`count` alone) leaves the report out (its size budget): a read that
/// throws is an absent option there.
#[cfg(not(any(feature = "base", feature = "extra")))]
fn unreadable(_key: &str, _e: JsValue) -> JsValue {
    JsValue::UNDEFINED
}

#[cfg(not(any(feature = "base", feature = "extra")))]
pub fn reading<T>(_what: &str, read: impl FnOnce() -> crate::Result<T>) -> crate::Result<T> {
    read()
}

/// The caller's JS values as the core's option parsers read them, in place.
impl Source for JsValue {
    fn is_absent(&self) -> bool {
        self.is_undefined() || self.is_null()
    }

    fn is_object(&self) -> bool {
        JsValue::is_object(self)
    }

    fn is_array(&self) -> bool {
        is_array_js(self)
    }

    fn get(&self, key: &str) -> JsValue {
        prop(self, key)
    }

    fn number(&self) -> Option<f64> {
        self.as_f64()
    }

    fn time_ms(&self) -> Option<f64> {
        match self.dyn_ref::<js_sys::Date>() {
            Some(d) => Some(d.get_time()),
            None => self.as_f64(),
        }
        .filter(|t| t.is_finite())
    }

    fn boolean(&self) -> Option<bool> {
        self.as_bool()
    }

    fn string(&self) -> Option<String> {
        self.as_string()
    }

    fn items(&self) -> Option<Vec<JsValue>> {
        // A copy made in JS: a throwing element getter is caught there (then `None`, the
        // original kept as the cause of the error the caller reports).
        let copy = items_of(self);
        if copy.is_null() {
            let _ = convert_failure().map(|_| ());
            return None;
        }
        copy.dyn_ref::<js_sys::Array>().map(|a| a.to_vec())
    }

    fn length(&self) -> Option<usize> {
        if let Some(s) = self.dyn_ref::<js_sys::JsString>() {
            return Some(s.length() as usize);
        }
        if !is_array_js(self) {
            let _ = take_convert_error();
            return None;
        }
        // Guarded: a Proxy's `get` trap may throw (read in JS: no externref slot leaks).
        super::js_view::try_prop(self, "length")
            .ok()?
            .as_f64()
            .filter(|n| n.is_finite() && *n >= 0.0)
            .map(|n| n as usize)
    }

    fn entries(&self) -> Option<Vec<(String, JsValue)>> {
        let e = entries_of(self);
        if e.is_null() {
            let _ = convert_failure();
        }
        let pairs = e.dyn_ref::<js_sys::Array>()?;
        Some(
            pairs
                .iter()
                .filter_map(|pair| {
                    // Always a pair (`entriesOf`); checked all the same: reading an element
                    // of anything else would throw in the glue, outside every guard.
                    let pair: js_sys::Array = pair.dyn_into().ok()?;
                    pair.get(0).as_string().map(|k| (k, pair.get(1)))
                })
                .collect(),
        )
    }

    fn keys(&self) -> crate::Result<Vec<String>> {
        if !JsValue::is_object(self) {
            return Ok(Vec::new());
        }
        // Its entries are no properties: read as an object it would be silently empty.
        if self.is_instance_of::<js_sys::Map>() || self.is_instance_of::<js_sys::Set>() {
            return Err(Error::invalid_argument(
                "a Map or Set is not an options object (its entries are not properties): pass a plain object, e.g. Object.fromEntries(map)",
            ));
        }
        keys_of(self).ok_or_else(|| {
            convert_failure().unwrap_or_else(|| Error::invalid_argument("reading its keys threw"))
        })
    }

    fn to_json(&self) -> std::result::Result<serde_json::Value, String> {
        json_value(self, "the value").map_err(|e| e.message)
    }

    fn to_config(&self) -> crate::Result<Config> {
        config_arg(self)
    }

    // (js_convert.js `jsonOf`: schemas as the JSON Schema sent for them; what it throws is
    // caught there, so no externref slot leaks.)
    fn json_text(&self) -> Option<String> {
        json_of(self)
    }

    fn builtin_kind(&self) -> Option<String> {
        builtin_kind_js(self)
    }
}

/// A learned line as JS `{overhead, ratio, observations}` (`CountCalibration`), or `null`.
pub fn calibration_js(fit: Option<crate::measure::calibration::Fit>) -> JsValue {
    match fit {
        None => JsValue::NULL,
        Some(f) => {
            let o = js_sys::Object::new();
            for (k, v) in [
                ("overhead", f.overhead),
                ("ratio", f.ratio),
                ("observations", f.observations as f64),
            ] {
                let _ = Reflect::set(&o, &k.into(), &v.into());
            }
            o.into()
        }
    }
}

/// Marks which of `typed` (read one for one from the caller's array `arr`) form the
/// conversation ([`crate::transforms::transcript::mark_conversation`]): the chain from the
/// leaf of a file holding several branches, the lines of a sub-agent's own file.
pub fn mark_conversation_js(arr: &JsValue, typed: &mut [Message]) {
    if let Some(links) = super::js_view::links_of_js(arr, typed.len()) {
        crate::transforms::transcript::mark_conversation(typed, &links);
    }
}
