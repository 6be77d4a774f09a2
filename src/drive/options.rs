//! The option objects of the entry points, each read by exactly one parser here, whatever
//! entry point receives it: the `context` of a compaction, the options of
//! `compactConversation` and of `Compactor.compact`, the `tracking` of automatic and reactive
//! compaction, and the options of `shouldAutoCompact`, `microCompact`, `offlineSummarizer`,
//! `truncateHeadForPTLRetry` and `tokenCountWithEstimation`.
//!
//! The parsers read through [`Source`], a JS-like value: the WebAssembly bindings implement
//! it over the caller's JS objects (read in place, nothing converted first), and it is
//! implemented here over [`serde_json::Value`] for native callers and tests. The rules are
//! therefore the same everywhere:
//!
//! - an options argument is an object, `undefined` or `null` (`INVALID_ARGUMENT` otherwise);
//! - every field has one type; a field of another type is an `INVALID_ARGUMENT` error naming
//!   it (`options.retryBaseMs must be a finite number`), never ignored; `null` is absent;
//! - token counts (`snipTokensFreed`) follow [`check_token_count`]: negative, NaN or infinite
//!   counts are rejected, never clamped;
//! - option objects whose keys the TypeScript types close (everything but `context` and
//!   `tracking`, which callers build from larger objects and which carry callbacks) reject an
//!   unknown key, naming it and the accepted ones (with the one it probably meant): a
//!   misspelt option is an error, not silently ignored;
//! - the open objects (`context`, its `hooks`, `tracking`) accept the caller's own keys, but
//!   reject a key that misspells one of theirs (`querySorce`, `PreCompact`: see
//!   [`likely_meant`]) and, in a `context`, a key that belongs elsewhere (`customInstructions`
//!   is an option of the call, `contextWindow` a key of `config`): either would be silently
//!   ignored otherwise;
//! - a `querySource` that misspells one of the sources with a meaning (`compact`,
//!   `session_memory`, `marble_origami`) is an error; any other string is a normal request.
//!
//! The callbacks of a `context` (`summarize`, `readFile`, `hooks`, `signal`, `onProgress`,
//! `onText`, `sessionMemory`) are not data and are read by the bindings.

use serde_json::Value;

use crate::drive::autocompact::{
    ShouldAutoCompactOptions, Tracking, CONTEXT_COLLAPSE_QUERY_SOURCE, NON_COMPACTING_QUERY_SOURCES,
};
use crate::drive::pinned::Pinned;
use crate::drive::pipeline::{AsyncAgent, CompactContext, CompactOptions};
use crate::drive::retry::RetryPolicy;
use crate::measure::calibration::Fit;
use crate::measure::tokens::{GivenUsage, Preamble};
use crate::model::config::{Config, Given};
use crate::model::error::{check_token_count, Error, ErrorCode, Result};
use crate::model::messages::Message;
use crate::model::names::likely_meant;
use crate::model::number::Plain;
use crate::model::shape::Shape;
use crate::model::view::quoted;
use crate::model::view::UsageCounts;
use crate::transforms::context_management::{
    ApplyApiCompactionOptions, ClearToolInputs, ContextManagementOptions, ThinkingKeep,
};
use crate::transforms::microcompact::{self, MicroCompactOptions};
use crate::transforms::restore::{FileSnapshot, SkillInfo};

/// A JS-like value as the option parsers read it.
pub trait Source: Sized {
    /// `undefined` or `null`.
    fn is_absent(&self) -> bool;
    /// An object (arrays and Maps included; not `null`, not a function).
    fn is_object(&self) -> bool;
    /// An array.
    fn is_array(&self) -> bool;
    /// The value of a property (absent when there is none or `self` is not an object).
    fn get(&self, key: &str) -> Self;
    /// The value as a number, if it is one.
    fn number(&self) -> Option<f64>;
    /// The value as a time in ms since the epoch: a finite number, or what a caller holds a
    /// time in besides (a JS `Date`; in JSON data its ISO-8601 text, as `JSON.stringify`
    /// writes a `Date`). `None` otherwise (an invalid `Date` included).
    fn time_ms(&self) -> Option<f64> {
        self.number().filter(|t| t.is_finite())
    }
    /// The value as a boolean, if it is one.
    fn boolean(&self) -> Option<bool>;
    /// The value as a string, if it is one.
    fn string(&self) -> Option<String>;
    /// The elements of an array (`None` when not an array).
    fn items(&self) -> Option<Vec<Self>>;
    /// The `length` of an array (its elements) or a string (its UTF-16 code units), read
    /// without copying them, so that a reader can refuse one too long to read; `None` for
    /// anything else (or when reading it throws).
    fn length(&self) -> Option<usize>;
    /// The `[key, value]` entries of a Map or an object, or of an array of records keyed by
    /// their `path` (else `name`; a string element is its own key); entries whose key is not
    /// a string are skipped. Absent: no entries. `None` for anything else.
    fn entries(&self) -> Option<Vec<(String, Self)>>;
    /// The own enumerable keys of an object (empty for anything else); an error when reading
    /// them throws (a Proxy).
    fn keys(&self) -> Result<Vec<String>>;
    /// The value as JSON data (`Err` with the reason when it cannot be read as JSON).
    fn to_json(&self) -> std::result::Result<Value, String>;
    /// The value read as a `config` (absent: the defaults), validated (`INVALID_CONFIG`).
    fn to_config(&self) -> Result<Config>;
    /// The value as JSON text, the way the caller's runtime writes it (`None` when it cannot
    /// be written).
    fn json_text(&self) -> Option<String>;
    /// What the value is when it is not data read through its properties, in the runtime's
    /// word: `function`, `Symbol`, `BigInt`, or a built-in object whose data its properties do
    /// not hold (`Date`, `RegExp`, `Error`, `ArrayBuffer`, `Map`, `WeakMap`, …). `None` for
    /// data: strings, numbers, booleans, arrays and other objects (JSON holds nothing else).
    fn builtin_kind(&self) -> Option<String> {
        None
    }
}

/// `name` with its article, for a message: `an Error`, `a Date`, `a Uint8Array`.
pub fn with_article(name: &str) -> String {
    let an = matches!(
        name.chars().next(),
        Some('A' | 'E' | 'I' | 'O' | 'a' | 'e' | 'i' | 'o')
    );
    format!("{} {name}", if an { "an" } else { "a" })
}

/// Where an error's words can be: an `Error`'s message, an API error body (`error.message`,
/// `error.error.message`, its type and code), an SDK error's fields.
const ERROR_TEXT_PATHS: &[&[&str]] = &[
    &["message"],
    &["error", "message"],
    &["error", "error", "message"],
    &["error", "type"],
    &["error", "code"],
    &["code"],
    &["type"],
];

/// The text and HTTP status of an error the caller hands in: a string, an `Error`, an API
/// error body or an SDK error. The text joins every place an error keeps words
/// ([`ERROR_TEXT_PATHS`], then `body` as text or JSON), one per line; the status is the first
/// of `status` / `statusCode` that is an HTTP status (100–599). An error that wraps another
/// (`new Error('summary failed', {cause})`, an `AggregateError`'s `errors`) is read through
/// to what it wraps, [`MAX_CAUSE_DEPTH`] levels deep: the provider's words (a prompt too long,
/// an overload) and status are often only there. The outer error's status comes first.
pub fn error_text<S: Source>(v: &S) -> (String, Option<u16>) {
    if let Some(s) = v.string() {
        return (s, None);
    }
    // A bare number thrown is most often an HTTP status (`throw res.status`).
    if let Some(n) = v.number() {
        let status = (100.0..600.0).contains(&n).then_some(n as u16);
        return (Plain(n).to_string(), status);
    }
    if let Some(b) = v.boolean() {
        return (b.to_string(), None);
    }
    let mut parts = Vec::new();
    let mut status = None;
    error_words(v, &mut parts, &mut status, 0);
    (joined_words(parts), status)
}

/// How many wrapping errors [`error_text`] reads through (a cycle of causes ends there too).
pub const MAX_CAUSE_DEPTH: usize = 4;

/// The words and status of error object `v` ([`error_text`]), then of what it wraps.
fn error_words<S: Source>(v: &S, parts: &mut Vec<String>, status: &mut Option<u16>, depth: usize) {
    if status.is_none() {
        *status = ["status", "statusCode"].iter().find_map(|key| {
            v.get(key)
                .number()
                .filter(|n| (100.0..600.0).contains(n))
                .map(|n| n as u16)
        });
    }
    parts.extend(
        ERROR_TEXT_PATHS
            .iter()
            .filter_map(|path| {
                path.iter().fold(None::<S>, |cur, k| {
                    Some(match cur {
                        None => v.get(k),
                        Some(c) => c.get(k),
                    })
                })
            })
            .filter_map(|found| found.string()),
    );
    let body = v.get("body");
    if let Some(s) = body.string() {
        parts.push(s);
    } else if body.is_object() {
        parts.extend(body.json_text());
    }
    if depth + 1 >= MAX_CAUSE_DEPTH {
        return;
    }
    let cause = v.get("cause");
    if let Some(s) = cause.string() {
        parts.push(s);
    } else if cause.is_object() {
        error_words(&cause, parts, status, depth + 1);
    }
    // An AggregateError (`Promise.any` over providers, a retry library's): its first errors.
    let errors = v.get("errors");
    if errors.is_array() && errors.length().is_some_and(|n| n <= 64) {
        for e in errors
            .items()
            .unwrap_or_default()
            .iter()
            .take(MAX_CAUSE_DEPTH)
        {
            if e.is_object() {
                error_words(e, parts, status, depth + 1);
            }
        }
    }
}

/// An error's words as one line: the first, then in parentheses the others that say
/// something the text before them does not (`bad request (E_CUSTOM)`).
fn joined_words(parts: Vec<String>) -> String {
    let mut parts = parts
        .into_iter()
        .map(|p| p.trim().to_string())
        .filter(|p| !p.is_empty());
    let Some(mut text) = parts.next() else {
        return String::new();
    };
    let mut more = String::new();
    for p in parts {
        if text.contains(&p) || more.contains(&p) {
            continue;
        }
        more.push_str(if more.is_empty() { "" } else { "; " });
        more.push_str(&p);
    }
    if !more.is_empty() {
        text.push_str(" (");
        text.push_str(&more);
        text.push(')');
    }
    text
}

/// Checks that an options argument is an object, `undefined` or `null`.
pub fn check_object<S: Source>(v: &S, what: &str) -> Result<()> {
    if v.is_absent() || (v.is_object() && !v.is_array()) {
        Ok(())
    } else {
        Err(Error::invalid_argument(format!("{what} must be an object")))
    }
}

/// ` (did you mean `x`?)` when `key` misspells `x` of `known`, else nothing.
fn hint(key: &str, known: &[&str]) -> String {
    likely_meant(key, known)
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

/// Rejects a key of `v` not in `known`, naming it, the key it probably meant and the known
/// ones.
fn check_keys<S: Source>(v: &S, what: &str, known: &[&str]) -> Result<()> {
    let keys = v
        .keys()
        .map_err(|e| Error::new(e.code, format!("{what}: {}", e.message)))?;
    match keys.into_iter().find(|k| !known.contains(&k.as_str())) {
        Some(k) => Err(Error::invalid_argument(format!(
            "{what}.{k} is not an option here{}; known: {}",
            hint(&k, known),
            known.join(", ")
        ))),
        None => Ok(()),
    }
}

/// Rejects a key of an open object `v` (one that may carry the caller's own keys) that
/// misspells one of `known`, naming the known ones.
fn check_near_misses<S: Source>(v: &S, what: &str, known: &[&str]) -> Result<()> {
    let keys = v
        .keys()
        .map_err(|e| Error::new(e.code, format!("{what}: {}", e.message)))?;
    for k in keys {
        if let Some(meant) = likely_meant(&k, known) {
            return Err(Error::invalid_argument(format!(
                "{what}.{k} is not read (did you mean `{meant}`?); the keys read here: {}",
                known.join(", ")
            )));
        }
    }
    Ok(())
}

/// An object argument with a closed set of keys.
fn closed_object<S: Source>(v: &S, what: &str, known: &[&str]) -> Result<()> {
    check_object(v, what)?;
    check_keys(v, what, known)
}

/// A number as JavaScript writes it in an error message (`NaN`, `-Infinity`, `0.5`, `-5`,
/// `1e+300`): [`crate::model::number::js_text`].
pub fn js_number_text(n: f64) -> String {
    crate::model::number::js_text(n)
}

/// What a value given for an option is, for error messages: a number as JS writes it
/// (`NaN`, `-Infinity`, `0.5`), a string quoted (cut after 40 characters), a boolean, or its
/// type (`an array`, `an object`, `a function or another non-data value`).
pub fn describe_value<S: Source>(v: &S) -> String {
    if let Some(n) = v.number() {
        return js_number_text(n);
    }
    if let Some(s) = v.string() {
        let cut: String = s.chars().take(40).collect();
        return if cut.len() < s.len() {
            format!("{}…", quoted(&cut))
        } else {
            quoted(&s)
        };
    }
    if let Some(b) = v.boolean() {
        return b.to_string();
    }
    // Not `builtin_kind` (a BigInt, a Date): the counting module's options use this too, and
    // asking would make the count entry download js_env.js (+5 KB gzip).
    if v.is_array() {
        "an array".into()
    } else if v.is_object() {
        "an object".into()
    } else {
        "a function or another non-data value".into()
    }
}

/// An optional finite number field.
pub fn number<S: Source>(obj: &S, key: &str, what: &str) -> Result<Option<f64>> {
    let v = obj.get(key);
    if v.is_absent() {
        return Ok(None);
    }
    match v.number() {
        Some(n) if n.is_finite() => Ok(Some(n)),
        _ => Err(Error::invalid_argument(format!(
            "{what}.{key} must be a finite number, got {}",
            describe_value(&v)
        ))),
    }
}

/// The largest whole number a count option takes (2^53 − 1, JavaScript's largest safe
/// integer).
const MAX_WHOLE: f64 = 9_007_199_254_740_991.0;

/// An optional whole-number field of at least `min` (a count of messages, failures or
/// tokens): a fraction, a number below `min`, NaN or an infinity is an error naming the field
/// and the value, never rounded or clamped into range.
fn whole_number<S: Source>(obj: &S, key: &str, what: &str, min: u64) -> Result<Option<u64>> {
    let n = match number(obj, key, what)? {
        None => return Ok(None),
        Some(n) => n,
    };
    if n.fract() == 0.0 && n >= min as f64 && n <= MAX_WHOLE {
        Ok(Some(n as u64))
    } else if n.fract() == 0.0 && n > MAX_WHOLE {
        // Whole and above `min`: say which bound it broke, not "at least {min}".
        Err(Error::invalid_argument(format!(
            "{what}.{key} must be a whole number of at most 9007199254740991 (2^53 - 1), got {}",
            js_number_text(n)
        )))
    } else {
        Err(Error::invalid_argument(format!(
            "{what}.{key} must be a whole number of at least {min}, got {}",
            js_number_text(n)
        )))
    }
}

/// An optional boolean field.
pub fn boolean<S: Source>(obj: &S, key: &str, what: &str) -> Result<Option<bool>> {
    let v = obj.get(key);
    if v.is_absent() {
        return Ok(None);
    }
    v.boolean()
        .map(Some)
        .ok_or_else(|| Error::invalid_argument(format!("{what}.{key} must be a boolean")))
}

/// An optional string field.
pub fn string<S: Source>(obj: &S, key: &str, what: &str) -> Result<Option<String>> {
    let v = obj.get(key);
    if v.is_absent() {
        return Ok(None);
    }
    v.string()
        .map(Some)
        .ok_or_else(|| Error::invalid_argument(format!("{what}.{key} must be a string")))
}

/// An optional non-negative number field (`must not be negative` otherwise).
fn non_negative<S: Source>(obj: &S, key: &str, what: &str) -> Result<Option<f64>> {
    match number(obj, key, what)? {
        Some(n) if n < 0.0 => Err(Error::invalid_argument(format!(
            "{what}.{key} must not be negative, got {}",
            js_number_text(n)
        ))),
        n => Ok(n),
    }
}

/// An optional token-count field ([`check_token_count`]: never negative).
fn token_count<S: Source>(obj: &S, key: &str, what: &str) -> Result<Option<u64>> {
    number(obj, key, what)?
        .map(|n| check_token_count(n, &format!("{what}.{key}")))
        .transpose()
}

/// An optional array of strings.
fn strings<S: Source>(obj: &S, key: &str, what: &str) -> Result<Option<Vec<String>>> {
    let v = obj.get(key);
    if v.is_absent() {
        return Ok(None);
    }
    let wrong = || Error::invalid_argument(format!("{what}.{key} must be an array of strings"));
    v.items()
        .ok_or_else(wrong)?
        .iter()
        .map(|x| x.string().ok_or_else(wrong))
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

/// `retryBaseMs` of `obj` (a finite number of ms, not negative): the transient-retry policy.
pub fn retry_policy<S: Source>(obj: &S, what: &str) -> Result<RetryPolicy> {
    retry_policy_or(obj, what, RetryPolicy::default())
}

/// `retryBaseMs` of `obj`, or `absent` when `obj` does not give one.
fn retry_policy_or<S: Source>(obj: &S, what: &str, absent: RetryPolicy) -> Result<RetryPolicy> {
    Ok(non_negative(obj, "retryBaseMs", what)?
        .map_or(absent, |n| RetryPolicy::with_base_ms(n as u64)))
}

/// `summaryTimeoutMs` of a `context`: the time limit of one summary request in ms (0: none).
fn summary_timeout_ms<S: Source>(context: &S) -> Result<f64> {
    match non_negative(context, "summaryTimeoutMs", "context")? {
        None => Ok(DEFAULT_CALLBACK_TIMEOUT_MS),
        Some(ms) if ms > MAX_TIMER_MS => Err(Error::invalid_argument(format!(
            "context.summaryTimeoutMs is {ms}; at most {MAX_TIMER_MS} (about 24.8 days, the longest timer JavaScript runs), or 0 for no limit"
        ))),
        Some(ms) => Ok(ms),
    }
}

/// The time limit of each callback of a compaction (the summarizer, `readFile`, hooks) when
/// `summaryTimeoutMs` is not given: 10 minutes, far beyond a real summary request, so that a
/// callback that never answers cannot leave a compaction pending forever.
pub const DEFAULT_CALLBACK_TIMEOUT_MS: f64 = 600_000.0;

/// The longest delay a JavaScript timer takes (2^31 − 1 ms); a longer one fires at once.
pub const MAX_TIMER_MS: f64 = 2_147_483_647.0;

/// `querySource` and `snipTokensFreed` of a `context` (or of a `Compactor`'s options): what
/// automatic compaction reads besides the conversation.
pub fn auto_options<S: Source>(context: &S) -> Result<ShouldAutoCompactOptions> {
    const WHAT: &str = "context";
    Ok(ShouldAutoCompactOptions {
        query_source: query_source(context, WHAT)?,
        snip_tokens_freed: token_count(context, "snipTokensFreed", WHAT)?.unwrap_or(0),
        given_usage: None,
        preamble: preamble_at(context, WHAT, "system", "toolDefinitions")?,
        calibration: calibration(context, WHAT)?,
    })
}

/// The query sources with a meaning: the compaction's own requests, and context collapse's.
/// Any other source is a normal request.
fn meaningful_query_sources() -> Vec<&'static str> {
    let mut v = NON_COMPACTING_QUERY_SOURCES.to_vec();
    v.push(CONTEXT_COLLAPSE_QUERY_SOURCE);
    v
}

/// `querySource` of `obj`: a string; one that misspells a source with a meaning
/// (`sessionMemory`, `compct`) is rejected, listing those sources — taken for a normal
/// request, it would let the compaction's own request compact again.
fn query_source<S: Source>(obj: &S, what: &str) -> Result<Option<String>> {
    let source = string(obj, "querySource", what)?;
    if let Some(s) = &source {
        let meaningful = meaningful_query_sources();
        if let Some(meant) = likely_meant(s, &meaningful) {
            return Err(Error::invalid_argument(format!(
                "{what}.querySource {} is not a query source with a meaning (did you mean \
                 {}?): {} change what compaction does, any other value is a normal request",
                quoted(s),
                quoted(meant),
                meaningful
                    .iter()
                    .map(|m| quoted(m))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(source)
}

/// The parts of a `context` emptied after a successful compaction (SPEC §7): the read-file
/// state and the loaded memory paths describe the conversation before it (its snapshot was
/// taken when the call began). The sent skill names (`invokedSkills`) are deliberately kept.
pub const CLEARED_AFTER_COMPACTION: &[&str] = &["readFileState", "loadedNestedMemoryPaths"];

/// The data of a `context` (SPEC §7), as every entry point that takes one reads it.
#[derive(Clone, Debug, Default)]
pub struct ContextOptions {
    /// What the compaction needs.
    pub context: CompactContext,
    /// `querySource` and `snipTokensFreed` (read by automatic compaction).
    pub auto: ShouldAutoCompactOptions,
    /// `retryBaseMs` (automatic and reactive compaction, `Compactor.maybeAutoCompact`).
    pub retry: RetryPolicy,
    /// `summaryTimeoutMs`: the time limit of each callback (0: no limit; default
    /// [`DEFAULT_CALLBACK_TIMEOUT_MS`]).
    pub summary_timeout_ms: f64,
    /// `shape`: the shape the caller says the messages are of (`None`: detected).
    pub shape: Option<Shape>,
}

/// A list of strings, or of records whose `keys` are joined (`name: description`).
fn string_list<S: Source>(v: &S, what: &str, keys: &[&str]) -> Result<Vec<String>> {
    if v.is_absent() {
        return Ok(Vec::new());
    }
    let items = v
        .items()
        .ok_or_else(|| Error::invalid_argument(format!("{what} must be an array")))?;
    items
        .iter()
        .enumerate()
        .map(|(i, x)| {
            if let Some(s) = x.string() {
                return Ok(s);
            }
            let parts: Vec<String> = keys.iter().filter_map(|k| x.get(k).string()).collect();
            if parts.is_empty() {
                Err(Error::invalid_argument(format!(
                    "{what}[{i}] must be a string or an object with {}",
                    keys.join("/")
                )))
            } else {
                Ok(parts.join(": "))
            }
        })
        .collect()
}

fn entries<S: Source>(v: &S, what: &str) -> Result<Vec<(String, S)>> {
    // A Set's values, a WeakMap's or a Date's data are no entries: read as an object they
    // would be silently empty (and the state then cleared).
    if let Some(kind) = v.builtin_kind().filter(|k| k != "Map") {
        return Err(Error::invalid_argument(format!(
            "{what} must be a Map, an object or an array, not {}",
            with_article(&kind)
        )));
    }
    v.entries().ok_or_else(|| {
        Error::invalid_argument(format!("{what} must be a Map, an object or an array"))
    })
}

fn async_agents<S: Source>(v: &S) -> Result<Vec<AsyncAgent>> {
    if v.is_absent() {
        return Ok(Vec::new());
    }
    let items = v
        .items()
        .ok_or_else(|| Error::invalid_argument("context.asyncAgents must be an array"))?;
    Ok(items
        .iter()
        .map(|a| {
            let s = |k: &str| a.get(k).string().unwrap_or_default();
            let id = s("id");
            let status = s("status");
            AsyncAgent {
                id: if id.is_empty() { s("agentId") } else { id },
                description: s("description"),
                status: if status.is_empty() {
                    "running".into()
                } else {
                    status
                },
            }
        })
        .collect())
}

fn mcp_instructions<S: Source>(mcp: &S) -> Result<Vec<String>> {
    const WHAT: &str = "context.mcpInstructions";
    if let Some(s) = mcp.string() {
        return Ok(vec![s]);
    }
    if mcp.is_object() && !mcp.is_array() {
        return Ok(entries(mcp, WHAT)?
            .into_iter()
            .filter_map(|(k, v)| v.string().map(|t| format!("{k}: {t}")))
            .collect());
    }
    string_list(mcp, WHAT, &["server", "instructions"])
}

fn pinned<S: Source>(v: &S) -> Result<Vec<Pinned>> {
    if v.is_absent() {
        return Ok(Vec::new());
    }
    let items = v.items().ok_or_else(|| {
        Error::invalid_argument("context.pinned must be an array of strings or messages")
    })?;
    let mut out = Vec::with_capacity(items.len());
    for (k, p) in items.iter().enumerate() {
        let at = || format!("context.pinned[{k}]");
        if let Some(t) = p.string() {
            // Blank text pins nothing (kept, it would be a message the API refuses).
            if !t.trim().is_empty() {
                out.push(Pinned::Text(t));
            }
        } else if p.is_object() {
            let v = p
                .to_json()
                .map_err(|e| Error::invalid_message(e).at(at()))?;
            // A message of the conversation's own shape: the bindings convert it to the
            // Anthropic form, and reject it if they cannot.
            out.push(Pinned::Message(Box::new(Message::from_value_of_any_shape(
                v,
                &at(),
            )?)));
        } else {
            return Err(Error::invalid_argument(format!(
                "{} must be a string or a message",
                at()
            )));
        }
    }
    Ok(out)
}

/// Every key of a `context` the library reads (`CompactContext`): its data, then its
/// callbacks (read by the bindings).
pub const CONTEXT_KEYS: &[&str] = &[
    "model",
    "summaryModel",
    "config",
    "readFileState",
    "loadedNestedMemoryPaths",
    "plan",
    "planMode",
    "invokedSkills",
    "sentSkillNames",
    "discoveredTools",
    "tools",
    "agents",
    "mcpInstructions",
    "asyncAgents",
    "querySource",
    "snipTokensFreed",
    "retryBaseMs",
    "summaryTimeoutMs",
    "pinned",
    "keepLastUserMessage",
    "summarizeInParts",
    "shape",
    "system",
    "toolDefinitions",
    "summarize",
    "readFile",
    "sessionMemory",
    "hooks",
    "signal",
    "onProgress",
    "onText",
    "tokenCounter",
    "calibration",
];

/// The keys of the options of a `Compactor` (`CompactorOptions`): a `context` and the
/// initial `messages`.
pub const COMPACTOR_EXTRA_KEYS: &[&str] = &["messages", "preemptive"];

/// The keys of a `Compactor`'s `preemptive` object (`PreemptiveOptions`).
pub const PREEMPTIVE_KEYS: &[&str] = &["earlyLine"];

/// The hooks of `context.hooks` (`CompactHooks`).
pub const HOOK_KEYS: &[&str] = &["preCompact", "sessionStart", "postCompact"];

/// The keys of a `tracking` the library reads (`Tracking`).
pub const TRACKING_KEYS: &[&str] = &[
    "consecutiveFailures",
    "turnId",
    "turnCounter",
    "reactiveTurnId",
];

/// Checks the keys of a `context` (with `extra` keys of its own, e.g. a `Compactor`'s
/// `messages`): the caller's own keys pass; a misspelt context key, a key of the call's
/// options or of `config` given in the `context` itself, and a misspelt hook are errors.
fn check_context_keys<S: Source>(context: &S, extra: &[&str]) -> Result<()> {
    let known: Vec<&str> = CONTEXT_KEYS.iter().chain(extra).copied().collect();
    let keys = context
        .keys()
        .map_err(|e| Error::new(e.code, format!("context: {}", e.message)))?;
    for k in keys {
        if known.contains(&k.as_str()) {
            continue;
        }
        if COMPACT_KEYS.contains(&k.as_str()) {
            return Err(Error::invalid_argument(format!(
                "context.{k} is not read: it is an option of the call, not of its context \
                 (compactConversation(messages, context, {{ {k} }}), Compactor.compact({{ {k} }}))"
            )));
        }
        if Config::FIELDS.contains(&k.as_str()) {
            return Err(Error::invalid_argument(format!(
                "context.{k} is not read: it is a key of `config` (context.config.{k})"
            )));
        }
    }
    check_near_misses(context, "context", &known)?;
    check_near_misses(&context.get("hooks"), "context.hooks", HOOK_KEYS)
}

/// Reads the options of a `Compactor`: a `context` ([`context`]) that may also hold the
/// initial `messages` (read by the bindings).
pub fn compactor_context<S: Source>(options: &S) -> Result<ContextOptions> {
    if STATELESS_CONTEXT_KEYS
        .iter()
        .any(|k| !options.get(k).is_absent())
    {
        return Err(Error::invalid_argument(
            "options.calibration is for the stateless functions' context: a Compactor learns \
             its own line from the usage it sees (snapshot() and Compactor.restore() carry it \
             over)",
        ));
    }
    context_with(options, COMPACTOR_EXTRA_KEYS)
}

/// The keys of a `context` that only the stateless functions read (`CompactorOptions` omits
/// them): `calibration`, the line a compaction result gives back, which a `Compactor` learns
/// and keeps itself.
pub const STATELESS_CONTEXT_KEYS: &[&str] = &["calibration"];

/// `preemptive` of a `Compactor`'s options: the early line from which summaries are written
/// ahead of the threshold, or `None` (absent, `false`: off, the default). `true` or
/// `{earlyLine: 'auto'}` is [`crate::drive::preemptive::EarlyLine::auto`] for the model (it
/// moves down, to the warning line at most, as larger turns are seen); a number is a fixed
/// line taken as given (it must be below the threshold to be of use, and not negative).
pub fn preemptive<S: Source>(
    options: &S,
    model: &str,
    config: &Config,
) -> Result<Option<crate::drive::preemptive::EarlyLine>> {
    use crate::drive::preemptive::EarlyLine;
    let v = options.get("preemptive");
    if v.is_absent() {
        return Ok(None);
    }
    let auto = || Some(EarlyLine::auto(model, config));
    if let Some(on) = v.boolean() {
        return Ok(if on { auto() } else { None });
    }
    const WHAT: &str = "options.preemptive";
    if !v.is_object() || v.is_array() {
        return Err(Error::invalid_argument(format!(
            "{WHAT} must be true, false or {{ earlyLine?: number | 'auto' }}"
        )));
    }
    check_keys(&v, WHAT, PREEMPTIVE_KEYS)?;
    let line = v.get("earlyLine");
    if line.is_absent() || line.string().as_deref() == Some("auto") {
        return Ok(auto());
    }
    match token_count(&v, "earlyLine", WHAT)? {
        Some(n) => Ok(Some(EarlyLine::Fixed(n))),
        None => Err(Error::invalid_argument(format!(
            "{WHAT}.earlyLine must be a token count or 'auto'"
        ))),
    }
}

/// Reads the data of a `context`: `model` (required), `summaryModel`, `config`,
/// `readFileState`, `plan`, `planMode`, `invokedSkills`, `discoveredTools` (or `tools`),
/// `agents`, `mcpInstructions`, `asyncAgents`, `pinned`, `keepLastUserMessage`, `summarizeInParts`,
/// `querySource`, `snipTokensFreed`, `retryBaseMs` and `summaryTimeoutMs`. Other keys
/// (the callbacks, the caller's own) are not read; keys that look like a mistake are
/// rejected (see [`check_context_keys`]).
pub fn context<S: Source>(context: &S) -> Result<ContextOptions> {
    context_with(context, &[])
}

fn context_with<S: Source>(context: &S, extra: &[&str]) -> Result<ContextOptions> {
    const WHAT: &str = "context";
    if !context.is_object() {
        return Err(Error::invalid_argument(
            "context must be an object with at least `model`",
        ));
    }
    check_context_keys(context, extra)?;
    let model = string(context, "model", WHAT)?
        .ok_or_else(|| Error::invalid_argument("context.model must be a model id string"))?;
    let mut read_file_state = Vec::new();
    for (path, v) in entries(&context.get("readFileState"), "context.readFileState")? {
        read_file_state.push(FileSnapshot {
            path,
            content: v.string().or_else(|| v.get("content").string()),
            timestamp_ms: v
                .get("timestamp")
                .time_ms()
                .or_else(|| v.get("mtime").time_ms())
                .unwrap_or(0.0),
        });
    }
    let mut invoked_skills = Vec::new();
    for (name, v) in entries(&context.get("invokedSkills"), "context.invokedSkills")? {
        invoked_skills.push(SkillInfo {
            name: v.get("name").string().unwrap_or(name),
            content: v
                .string()
                .or_else(|| v.get("content").string())
                .unwrap_or_default(),
        });
    }
    // `tools` stands in for an absent `discoveredTools`.
    let (tools, tools_name) = match context.get("discoveredTools") {
        d if d.is_absent() => (context.get("tools"), "context.tools"),
        d => (d, "context.discoveredTools"),
    };
    let async_agents = async_agents(&context.get("asyncAgents"))?;
    let mcp_instructions = mcp_instructions(&context.get("mcpInstructions"))?;
    let pinned = pinned(&context.get("pinned"))?;
    let keep_last_user_message = boolean(context, "keepLastUserMessage", WHAT)?.unwrap_or(false);
    let summarize_in_parts = boolean(context, "summarizeInParts", WHAT)?.unwrap_or(false);
    // A summarizer that can ask the Messages API's on-demand compaction says so.
    let on_demand_compaction =
        context.get("summarize").get("onDemandCompaction").boolean() == Some(true);
    let config = context.get("config").to_config()?;
    crate::measure::thresholds::check_room(&model, &config)?;
    let ctx = CompactContext {
        pinned,
        keep_last_user_message,
        on_demand_compaction,
        summarize_in_parts,
        model,
        // Else the model the summarizer itself sends (`anthropicSummarizer({model})` and
        // `openaiSummarizer` say so): the request is sized for it, its `max_tokens` within
        // that model's output limit (a 4,096-token model refuses 20,000).
        summary_model: match string(context, "summaryModel", WHAT)? {
            Some(m) => Some(m),
            None => context
                .get("summarize")
                .get("summaryModel")
                .string()
                .filter(|m| !m.trim().is_empty()),
        },
        config,
        read_file_state,
        plan: string(context, "plan", WHAT)?,
        plan_mode: boolean(context, "planMode", WHAT)?.unwrap_or(false),
        invoked_skills,
        discovered_tools: string_list(&tools, tools_name, &["name"])?,
        agents: string_list(
            &context.get("agents"),
            "context.agents",
            &["name", "description"],
        )?,
        mcp_instructions,
        async_agents,
        calibration: None,
        calibration_given: None,
        counted: None,
        preamble_tokens: 0,
    };
    let auto = auto_options(context)?;
    let ctx = CompactContext {
        preamble_tokens: auto.preamble.map_or(0, |p| p.tokens()),
        calibration_given: auto.calibration,
        ..ctx
    };
    Ok(ContextOptions {
        context: ctx,
        auto,
        retry: retry_policy(context, WHAT)?,
        summary_timeout_ms: summary_timeout_ms(context)?,
        shape: shape_option(context, WHAT)?,
    })
}

/// Keys of the options of `shouldAutoCompact` (`ShouldAutoCompactOptions`).
pub const SHOULD_AUTO_COMPACT_KEYS: &[&str] = &[
    "querySource",
    "snipTokensFreed",
    "config",
    "usage",
    "usageAt",
    "system",
    "tools",
    "shape",
    "tokenCounter",
    "calibration",
];

/// Keys of the options of `offlineSummarizer` (`OfflineSummarizerOptions`).
pub const OFFLINE_SUMMARIZER_KEYS: &[&str] = &["maxTokens"];

/// Keys of the options of `microCompact` (`MicroCompactOptions`).
pub const MICRO_COMPACT_KEYS: &[&str] = &[
    "keepRecent",
    "idleMinutes",
    "now",
    "lastAssistantTimestamp",
    "keepLatestPerPath",
    "compactableTools",
    "shape",
];

/// Keys of the options of `createCompactBoundaryMessage` (`CompactBoundaryOptions`).
pub const BOUNDARY_KEYS: &[&str] = &[
    "lastUuid",
    "preCompactDiscoveredTools",
    "uuid",
    "timestamp",
    "template",
];

/// Every closed options object by the name of its TypeScript interface, with the keys the
/// parser accepts: `tests/ts_shapes.rs` hands them to the type check, which compares them with
/// `types/index.d.ts`.
pub const OPTION_OBJECTS: &[(&str, &[&str])] = &[
    ("ShapeOptions", SHAPE_KEYS),
    ("ShouldAutoCompactOptions", SHOULD_AUTO_COMPACT_KEYS),
    ("OfflineSummarizerOptions", OFFLINE_SUMMARIZER_KEYS),
    ("MicroCompactOptions", MICRO_COMPACT_KEYS),
    ("CompactBoundaryOptions", BOUNDARY_KEYS),
    ("CompactOptions", COMPACT_KEYS),
    ("CompactorCompactOptions", COMPACTOR_COMPACT_KEYS),
    ("CompactorAutoCompactOptions", COMPACTOR_AUTO_KEYS),
    ("TokenCountOptions", TOKEN_COUNT_KEYS),
    ("TruncateHeadOptions", TRUNCATE_HEAD_KEYS),
    ("PreemptiveOptions", PREEMPTIVE_KEYS),
];

/// Keys of the options of the functions that take nothing but the messages' shape
/// (`stripImagesFromMessages`, `groupMessagesByApiRound`, `validateForApi`, …: `ShapeOptions`).
pub const SHAPE_KEYS: &[&str] = &["shape"];

/// The names the `shape` option accepts: every [`Shape::name`] but plain's, and `'auto'`
/// (detect from the messages, the default).
pub fn shape_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = Shape::ALL
        .iter()
        .filter(|s| **s != Shape::Any)
        .map(|s| s.name())
        .collect();
    names.push("auto");
    names
}

/// The `shape` option of an options object (`what` names it in errors): the shape the
/// caller says the messages are of; `None` when absent or `'auto'`. Any other value is an
/// `UNSUPPORTED_SHAPE` error listing the accepted names.
pub fn shape_option<S: Source>(options: &S, what: &str) -> Result<Option<Shape>> {
    if options.is_absent() {
        return Ok(None);
    }
    let v = options.get("shape");
    if v.is_absent() {
        return Ok(None);
    }
    let names = shape_names();
    let name = v.string();
    match name.as_deref() {
        Some("auto") => Ok(None),
        Some(n) => match Shape::from_name(n) {
            Some(shape) if shape != Shape::Any => Ok(Some(shape)),
            _ => {
                let hint = likely_meant(n, &names)
                    .map(|m| format!(" (did you mean '{m}'?)"))
                    .unwrap_or_default();
                Err(Error::new(
                    ErrorCode::UnsupportedShape,
                    format!(
                        "{what}.shape '{n}' is not a message shape{hint}; expected one of '{}'",
                        names.join("', '")
                    ),
                ))
            }
        },
        None => Err(Error::new(
            ErrorCode::UnsupportedShape,
            format!(
                "{what}.shape must be a string, one of '{}'",
                names.join("', '")
            ),
        )),
    }
}

/// Reads the options of the functions that take only `{shape}` (`ShapeOptions`).
pub fn shape_options<S: Source>(options: &S) -> Result<Option<Shape>> {
    if options.is_absent() {
        return Ok(None);
    }
    closed_object(options, "options", SHAPE_KEYS)?;
    shape_option(options, "options")
}

/// Keys of the options of `tokenCountWithEstimation` (`TokenCountOptions`).
pub const TOKEN_COUNT_KEYS: &[&str] = &[
    "model",
    "config",
    "usage",
    "usageAt",
    "system",
    "tools",
    "shape",
    "tokenCounter",
    "calibration",
];

/// Keys of the options of `truncateHeadForPTLRetry` (`TruncateHeadOptions`).
pub const TRUNCATE_HEAD_KEYS: &[&str] = &["keepLatestRequest", "shape", "tokenCounter"];

/// Keys of the options of `compactConversation` (`CompactOptions`).
pub const COMPACT_KEYS: &[&str] = &[
    "suppressFollowUpQuestions",
    "customInstructions",
    "isAutoCompact",
    "recompactionInfo",
    "retryBaseMs",
    "appendMissing",
    "keepLastUserMessage",
    "shape",
];

/// Keys of the options of `Compactor.compact` (a manual compaction: no `isAutoCompact`, no
/// `recompactionInfo`; `CompactorCompactOptions`). `signal` (the call's own AbortSignal) is
/// read by the bindings.
pub const COMPACTOR_COMPACT_KEYS: &[&str] = &[
    "customInstructions",
    "suppressFollowUpQuestions",
    "retryBaseMs",
    "appendMissing",
    "keepLastUserMessage",
    "signal",
];

/// Keys of the options of `Compactor.maybeAutoCompact` (`CompactorAutoCompactOptions`):
/// `keepLastUserMessage` for this call, and `signal` (the call's own AbortSignal, read by the
/// bindings).
pub const COMPACTOR_AUTO_KEYS: &[&str] = &["keepLastUserMessage", "signal"];

/// Reads the options of `Compactor.maybeAutoCompact` (`undefined` or `null`: none): whether
/// this call keeps the latest user request verbatim (`keepLastUserMessage`; the `Compactor`'s
/// own option keeps it on every call).
pub fn compactor_auto_call_options<S: Source>(options: &S) -> Result<bool> {
    const WHAT: &str = "options";
    closed_object(options, WHAT, COMPACTOR_AUTO_KEYS)?;
    if options.is_absent() {
        return Ok(false);
    }
    Ok(boolean(options, "keepLastUserMessage", WHAT)?.unwrap_or(false))
}

fn compact_options_with<S: Source>(
    options: &S,
    known: &[&str],
    absent_retry: RetryPolicy,
) -> Result<CompactOptions> {
    const WHAT: &str = "options";
    closed_object(options, WHAT, known)?;
    let info = options.get("recompactionInfo");
    let recompaction_info = if info.is_absent() {
        None
    } else if info.is_object() && !info.is_array() {
        Some(
            info.to_json()
                .map_err(|e| Error::invalid_argument(format!("options.recompactionInfo: {e}")))?,
        )
    } else {
        return Err(Error::invalid_argument(
            "options.recompactionInfo must be an object",
        ));
    };
    Ok(CompactOptions {
        suppress_follow_up_questions: boolean(options, "suppressFollowUpQuestions", WHAT)?
            .unwrap_or(false),
        custom_instructions: string(options, "customInstructions", WHAT)?,
        is_auto_compact: boolean(options, "isAutoCompact", WHAT)?.unwrap_or(false),
        recompaction_info,
        retry: retry_policy_or(options, WHAT, absent_retry)?,
        pre_compact: None,
        append_missing: boolean(options, "appendMissing", WHAT)?.unwrap_or(false),
        keep_last_user_message: boolean(options, "keepLastUserMessage", WHAT)?.unwrap_or(false),
        announced: false,
    })
}

/// Reads the options of `compactConversation`.
pub fn compact_options<S: Source>(options: &S) -> Result<CompactOptions> {
    compact_options_with(options, COMPACT_KEYS, RetryPolicy::default())
}

/// Reads the options of `Compactor.compact`: those of `compactConversation` for a manual
/// compaction (`isAutoCompact` and `recompactionInfo` are not options there). Without a
/// `retryBaseMs` of its own the call uses the `Compactor`'s (`context_retry`), as
/// `maybeAutoCompact` does.
pub fn compactor_compact_options<S: Source>(
    options: &S,
    context_retry: RetryPolicy,
) -> Result<CompactOptions> {
    compact_options_with(options, COMPACTOR_COMPACT_KEYS, context_retry)
}

/// Reads the `tracking` of `autoCompactIfNeeded` and `reactiveCompact`:
/// `consecutiveFailures` (not negative), `turnId` (or `turnCounter`) and `reactiveTurnId`
/// (strings or numbers). Other keys are ignored: callers pass back the outcome they got; a
/// key that misspells one of these is an error.
pub fn tracking<S: Source>(tracking: &S) -> Result<Tracking> {
    const WHAT: &str = "tracking";
    check_object(tracking, WHAT)?;
    check_near_misses(tracking, WHAT, TRACKING_KEYS)?;
    let failures = whole_number(tracking, "consecutiveFailures", WHAT, 0)?.unwrap_or(0);
    let id = |k: &str| {
        let v = tracking.get(k);
        v.string()
            .or_else(|| v.number().map(|n| Plain(n).to_string()))
    };
    Ok(Tracking {
        consecutive_failures: failures.min(u32::MAX as u64) as u32,
        turn_id: id("turnId").or_else(|| id("turnCounter")),
        reactive_turn_id: id("reactiveTurnId"),
    })
}

/// Reads the options of `shouldAutoCompact`: `querySource`, `snipTokensFreed` (a token
/// count) and `config`.
pub fn should_auto_compact_options<S: Source>(
    options: &S,
) -> Result<(ShouldAutoCompactOptions, Config)> {
    const WHAT: &str = "options";
    if options.is_absent() {
        // No options (the per-turn call): every field's default, the config's defaults.
        let config = options.get("config").to_config()?;
        return Ok((ShouldAutoCompactOptions::default(), config));
    }
    closed_object(options, WHAT, SHOULD_AUTO_COMPACT_KEYS)?;
    let opts = ShouldAutoCompactOptions {
        query_source: query_source(options, WHAT)?,
        snip_tokens_freed: token_count(options, "snipTokensFreed", WHAT)?.unwrap_or(0),
        given_usage: given_usage(options, WHAT)?,
        preamble: preamble(options, WHAT)?,
        calibration: calibration(options, WHAT)?,
    };
    Ok((opts, options.get("config").to_config()?))
}

/// What the options of `tokenCountWithEstimation` ask for.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TokenCountOptions {
    /// The `model` whose window bounds a plausible usage (none: no check), and its `config`.
    pub plausible_for: Option<(String, Config)>,
    /// `usage` / `usageAt`: usage the caller gives for messages that carry none.
    pub given_usage: Option<GivenUsage>,
    /// `system` / `tools`: what the request sends besides the messages.
    pub preamble: Option<Preamble>,
    /// `calibration`: the line a `Compactor` (or a compaction result) learned, for where no
    /// usage anchors the count.
    pub calibration: Option<Fit>,
}

/// The largest `calibration.overhead` taken (tokens the messages do not show: a system
/// prompt and tools are tens of thousands).
const MAX_CALIBRATION_OVERHEAD: f64 = 10_000_000.0;
/// The largest `calibration.ratio` taken (real tokens per estimated one: about 1 to 2).
const MAX_CALIBRATION_RATIO: f64 = 100.0;
/// The smallest `calibration.ratio` taken: below it the line counts any conversation as about
/// its overhead (a ratio of 0 counted a million-token conversation as 1,000 tokens, and
/// `shouldAutoCompact` never compacted it); no tokenizer takes 16 characters a token.
const MIN_CALIBRATION_RATIO: f64 = 0.25;

/// `calibration` (`{overhead, ratio}` as `Compactor.calibration()` gives it): `None` when
/// absent or `null`.
fn calibration<S: Source>(options: &S, what: &str) -> Result<Option<Fit>> {
    let v = options.get("calibration");
    if v.is_absent() {
        return Ok(None);
    }
    let what = format!("{what}.calibration");
    check_object(&v, &what)?;
    check_keys(&v, &what, &["overhead", "ratio", "observations"])?;
    let overhead = non_negative(&v, "overhead", &what)?;
    let ratio = non_negative(&v, "ratio", &what)?;
    // What a Compactor learns stays far inside these: past them the value is not a line
    // learned from usage (and the count it gives would not be a safe integer).
    for (key, value, most) in [
        ("overhead", overhead, MAX_CALIBRATION_OVERHEAD),
        ("ratio", ratio, MAX_CALIBRATION_RATIO),
    ] {
        if value.is_some_and(|v| v > most) {
            return Err(Error::invalid_argument(format!(
                "{what}.{key} is implausibly large (at most {}; use what Compactor.calibration() returns)",
                Plain(most)
            )));
        }
    }
    if ratio.is_some_and(|r| r < MIN_CALIBRATION_RATIO) {
        return Err(Error::invalid_argument(format!(
            "{what}.ratio is implausibly small (at least {})",
            Plain(MIN_CALIBRATION_RATIO)
        )));
    }
    match (overhead, ratio) {
        (Some(overhead), Some(ratio)) => Ok(Some(Fit {
            overhead,
            ratio,
            observations: whole_number(&v, "observations", &what, 0)?.unwrap_or(0) as usize,
        })),
        _ => Err(Error::invalid_argument(format!(
            "{what} must have `overhead` and `ratio` (what Compactor.calibration() returns)"
        ))),
    }
}

/// Reads the options of `tokenCountWithEstimation`.
pub fn token_count_options<S: Source>(options: &S) -> Result<TokenCountOptions> {
    const WHAT: &str = "options";
    if options.is_absent() {
        return Ok(TokenCountOptions::default());
    }
    closed_object(options, WHAT, TOKEN_COUNT_KEYS)?;
    let plausible_for = match string(options, "model", WHAT)? {
        Some(model) => {
            let config = options.get("config").to_config()?;
            crate::measure::thresholds::check_room(&model, &config)?;
            Some((model, config))
        }
        None => None,
    };
    Ok(TokenCountOptions {
        plausible_for,
        given_usage: given_usage(options, WHAT)?,
        preamble: preamble(options, WHAT)?,
        calibration: calibration(options, WHAT)?,
    })
}

/// `system` and `tools` of an options object, in any ecosystem's form: the system prompt as a
/// string, or text blocks/parts (`{text}`; anything else by its JSON), the tool definitions as
/// whatever the caller sends (Anthropic's and OpenAI's arrays, the AI SDK's record), measured
/// as JSON. `None` when neither is given.
fn preamble<S: Source>(options: &S, what: &str) -> Result<Option<Preamble>> {
    preamble_at(options, what, "system", "tools")
}

/// [`preamble`] read from the keys `system_key` and `tools_key` (a compaction context calls
/// the tool definitions `toolDefinitions`: its `tools` are the discovered tools' names).
fn preamble_at<S: Source>(
    options: &S,
    what: &str,
    system_key: &str,
    tools_key: &str,
) -> Result<Option<Preamble>> {
    let system = options.get(system_key);
    let tools = options.get(tools_key);
    if system.is_absent() && tools.is_absent() {
        return Ok(None);
    }
    let json_len = |v: &S, key: &str| -> Result<usize> {
        v.json_text()
            .map(|t| crate::model::view::utf16_len(&t))
            .ok_or_else(|| {
                Error::invalid_argument(format!("{what}.{key} cannot be written as JSON"))
            })
    };
    // A number or a boolean is no system prompt nor tool list: a mistake, not something sent.
    let not_data = |v: &S, key: &str, expected: &str| {
        Error::invalid_argument(format!(
            "{what}.{key} must be {expected}, got {}",
            describe_value(v)
        ))
    };
    const SYSTEM: &str = "a string, an array of text blocks or parts, or a system message object";
    let system_units = if system.is_absent() {
        0
    } else if let Some(text) = system.string() {
        crate::model::view::utf16_len(&text)
    } else if let Some(parts) = system.items() {
        let mut n = 0;
        for (k, p) in parts.iter().enumerate() {
            n += match p.string().or_else(|| p.get("text").string()) {
                Some(t) => crate::model::view::utf16_len(&t),
                None if p.is_object() => json_len(p, system_key)?,
                None => {
                    return Err(not_data(
                        p,
                        &format!("{system_key}[{k}]"),
                        "a string or a block",
                    ))
                }
            };
        }
        n
    } else if system.is_object() {
        json_len(&system, system_key)?
    } else {
        return Err(not_data(&system, system_key, SYSTEM));
    };
    let tools_units = if tools.is_absent() {
        0
    } else if let Some(units) = match tools.items() {
        Some(list) => loaded_tools_len(&list, |t| json_len(t, tools_key))?,
        None => None,
    } {
        units
    } else if tools.is_object() {
        json_len(&tools, tools_key)?
    } else {
        return Err(not_data(
            &tools,
            tools_key,
            "the tool definitions the request sends (an array, or a record of tools)",
        ));
    };
    Ok(Some(Preamble {
        system_units,
        tools_units,
    }))
}

/// The JSON length of the array of tool definitions `list` as the model first sees it: a tool
/// marked `defer_loading: true` (Anthropic's tool search, OpenAI Responses' `tool_search`) is
/// not in the context until a search loads it, so it is left out; the others keep the length
/// they have in the array's JSON (brackets and commas included), each measured by `json_len`
/// (which refuses what JSON cannot write, as for the whole array). `None` when no tool is
/// deferred: the array is then measured whole.
fn loaded_tools_len<S: Source>(
    list: &[S],
    json_len: impl Fn(&S) -> Result<usize>,
) -> Result<Option<usize>> {
    let deferred = |t: &S| t.get("defer_loading").boolean() == Some(true);
    if !list.iter().any(deferred) {
        return Ok(None);
    }
    let (mut units, mut loaded) = (0, 0);
    for t in list.iter().filter(|t| !deferred(t)) {
        units += json_len(t)?;
        loaded += 1;
    }
    // `[a,b]`: two brackets and a comma between neighbours; no loaded tool sends nothing.
    Ok(Some(if loaded == 0 { 0 } else { units + loaded + 1 }))
}

/// The names each ecosystem gives the usage counts, in the Messages API's order (input, cache
/// writes, cache reads, output): Anthropic's and OpenAI Responses' / LangChain's `snake_case`,
/// the AI SDK's `LanguageModelUsage`, OpenAI Chat Completions' `prompt_tokens`. Where a
/// provider's input already includes cached tokens, no cache field is read.
const USAGE_NAMES: [&[&str]; 4] = [
    &["input_tokens", "inputTokens", "prompt_tokens"],
    &["cache_creation_input_tokens"],
    &["cache_read_input_tokens"],
    &["output_tokens", "outputTokens", "completion_tokens"],
];

/// `usage` and `usageAt` of an options object: the usage a provider reported for the last
/// response (any ecosystem's names), and the index of the message it belongs to (default: the
/// last assistant message).
fn given_usage<S: Source>(options: &S, what: &str) -> Result<Option<GivenUsage>> {
    let u = options.get("usage");
    let at = whole_index(options, "usageAt", what)?;
    if u.is_absent() {
        if at.is_some() {
            return Err(Error::invalid_argument(format!(
                "{what}.usageAt needs {what}.usage"
            )));
        }
        return Ok(None);
    }
    let usage = usage_counts(&u, &format!("{what}.usage"))?;
    // A usage with every input count 0 says nothing of the context (UsageCounts::is_zero).
    Ok((!usage.is_zero()).then_some(GivenUsage { at, usage }))
}

/// A usage object in any ecosystem's names (see [`USAGE_NAMES`]); `what` names it in errors.
pub fn usage_counts<S: Source>(u: &S, what: &str) -> Result<UsageCounts> {
    if !u.is_object() || u.is_array() {
        return Err(Error::invalid_argument(format!(
            "{what} must be an object of token counts (input_tokens / inputTokens / prompt_tokens, output_tokens / outputTokens / completion_tokens, …)"
        )));
    }
    let mut raw = [None; 4];
    for (slot, names) in raw.iter_mut().zip(USAGE_NAMES) {
        for name in names {
            let mut v = u.get(name);
            // An AI SDK provider's count: `{total, …}` (LanguageModelV3Usage).
            if v.is_object() && !v.is_array() {
                v = v.get("total");
            }
            if !v.is_absent() {
                *slot = Some(v.number().unwrap_or(f64::NAN));
                break;
            }
        }
    }
    if raw[0].is_none() && raw[3].is_none() {
        // An SDK's usage of a response its provider reported no counts for (the AI SDK's
        // `{inputTokens: undefined, outputTokens: undefined, …}`): nothing to anchor the
        // count at, not a mistake (see [`UsageCounts::is_zero`]).
        let names = u.keys()?;
        if USAGE_NAMES
            .iter()
            .any(|n| n.iter().any(|k| names.iter().any(|x| x == k)))
        {
            return Ok(UsageCounts::default());
        }
        return Err(Error::invalid_argument(format!(
            "{what} has no input or output token count (input_tokens / inputTokens / prompt_tokens, output_tokens / outputTokens / completion_tokens)"
        )));
    }
    UsageCounts::from_raw(raw, || what.to_string())
}

/// An optional index (a whole, non-negative number).
fn whole_index<S: Source>(obj: &S, key: &str, what: &str) -> Result<Option<usize>> {
    match number(obj, key, what)? {
        None => Ok(None),
        Some(n) if n >= 0.0 && n.fract() == 0.0 && n < 1e15 => Ok(Some(n as usize)),
        Some(_) => Err(Error::invalid_argument(format!(
            "{what}.{key} must be a message index (a whole number ≥ 0)"
        ))),
    }
}

/// The options of `buildApiContextManagement` (absent: the defaults), validated. Not an
/// object: `INVALID_ARGUMENT`; anything wrong inside: `INVALID_CONFIG`.
pub fn context_management_options<S: Source>(options: &S) -> Result<ContextManagementOptions> {
    const WHAT: &str = "options";
    check_object(options, WHAT)?;
    let read = || -> Result<ContextManagementOptions> {
        check_keys(options, WHAT, ContextManagementOptions::FIELDS)?;
        let keep = options.get("thinkingKeep");
        let thinking_keep = if keep.is_absent() {
            None
        } else {
            let v = keep
                .to_json()
                .map_err(|e| Error::invalid_argument(format!("{WHAT}.thinkingKeep: {e}")))?;
            Some(ThinkingKeep::from_value(&v).map_err(Error::invalid_argument)?)
        };
        let clear_tool_inputs = match options.get("clearToolInputs").boolean() {
            Some(all) => Some(ClearToolInputs::All(all)),
            None => strings(options, "clearToolInputs", WHAT)?.map(ClearToolInputs::Tools),
        };
        let opts = ContextManagementOptions {
            clear_thinking: boolean(options, "clearThinking", WHAT)?,
            thinking_keep,
            is_idle: boolean(options, "isIdle", WHAT)?,
            idle_minutes: number(options, "idleMinutes", WHAT)?,
            last_assistant_ms: number(options, "lastAssistantMs", WHAT)?,
            now_ms: number(options, "nowMs", WHAT)?,
            idle_threshold_minutes: number(options, "idleThresholdMinutes", WHAT)?,
            clear_tool_uses: boolean(options, "clearToolUses", WHAT)?,
            trigger_input_tokens: number(options, "triggerInputTokens", WHAT)?,
            clear_at_least: number(options, "clearAtLeast", WHAT)?,
            target_input_tokens: number(options, "targetInputTokens", WHAT)?,
            keep_tool_uses: number(options, "keepToolUses", WHAT)?,
            clear_tool_inputs,
            exclude_tools: strings(options, "excludeTools", WHAT)?,
            compact: boolean(options, "compact", WHAT)?,
            compact_trigger_input_tokens: number(options, "compactTriggerInputTokens", WHAT)?,
            pause_after_compaction: boolean(options, "pauseAfterCompaction", WHAT)?,
            compact_instructions: string(options, "compactInstructions", WHAT)?,
        };
        opts.validate()?;
        Ok(opts)
    };
    read().map_err(|e| Error::new(ErrorCode::InvalidConfig, e.message))
}

/// The options of `applyApiCompaction` (absent: the defaults).
pub fn apply_api_compaction_options<S: Source>(options: &S) -> Result<ApplyApiCompactionOptions> {
    const WHAT: &str = "options";
    closed_object(options, WHAT, ApplyApiCompactionOptions::FIELDS)?;
    Ok(ApplyApiCompactionOptions {
        drop_ignored: boolean(options, "dropIgnored", WHAT)?,
        keep_last_request: boolean(options, "keepLastRequest", WHAT)?,
    })
}

/// Reads `keepLatestRequest` of the options of `truncateHeadForPTLRetry`.
pub fn truncate_head_options<S: Source>(options: &S) -> Result<bool> {
    const WHAT: &str = "options";
    closed_object(options, WHAT, TRUNCATE_HEAD_KEYS)?;
    Ok(boolean(options, "keepLatestRequest", WHAT)?.unwrap_or(false))
}

/// Reads the options of `offlineSummarizer`: the budget of the summary in tokens
/// (`maxTokens`, a whole number of at least 1; default `default_budget`).
pub fn offline_summarizer_budget<S: Source>(options: &S, default_budget: u64) -> Result<u64> {
    const WHAT: &str = "options";
    closed_object(options, WHAT, OFFLINE_SUMMARIZER_KEYS)?;
    Ok(whole_number(options, "maxTokens", WHAT, 1)?.unwrap_or(default_budget))
}

/// A time option of `microCompact` (`now`, `lastAssistantTimestamp`): ms since the epoch (a
/// finite number), a JS `Date`, or an ISO-8601 string (as a transcript line's `timestamp`,
/// or `JSON.stringify` writes a `Date`); `None` when absent. An invalid `Date` is refused as
/// NaN is.
fn time_option<S: Source>(options: &S, key: &str) -> Result<Option<f64>> {
    let v = options.get(key);
    if v.is_absent() {
        return Ok(None);
    }
    if let Some(s) = v.string() {
        return microcompact::parse_timestamp_ms(&s)
            .map(Some)
            .ok_or_else(|| {
                Error::invalid_argument(format!("options.{key} is not an ISO-8601 time"))
            });
    }
    if let Some(t) = v.time_ms() {
        return Ok(Some(t));
    }
    Err(Error::invalid_argument(format!(
        "options.{key} must be a finite number (ms since the epoch), a Date or an ISO-8601 string, got {}",
        describe_value(&v)
    )))
}

/// Reads the options of `microCompact`; `now` gives the current time (ms since the epoch)
/// when `options.now` is absent.
pub fn micro_compact_options<S: Source>(
    options: &S,
    now: impl FnOnce() -> f64,
) -> Result<MicroCompactOptions> {
    const WHAT: &str = "options";
    if options.is_absent() {
        // No options: the defaults, with the time of the call.
        return Ok(MicroCompactOptions {
            now_ms: Some(now()),
            ..MicroCompactOptions::default()
        });
    }
    closed_object(options, WHAT, MICRO_COMPACT_KEYS)?;
    let mut opts = MicroCompactOptions::default();
    if let Some(k) = whole_number(options, "keepRecent", WHAT, 0)? {
        opts.keep_recent = usize::try_from(k).unwrap_or(usize::MAX);
    }
    opts.idle_minutes = non_negative(options, "idleMinutes", WHAT)?;
    opts.now_ms = Some(time_option(options, "now")?.unwrap_or_else(now));
    opts.last_assistant_ms = time_option(options, "lastAssistantTimestamp")?;
    if let Some(b) = boolean(options, "keepLatestPerPath", WHAT)? {
        opts.keep_latest_per_path = b;
    }
    let tools = options.get("compactableTools");
    if !tools.is_absent() {
        let items = tools.items().ok_or_else(|| {
            Error::invalid_argument("options.compactableTools must be an array of tool names")
        })?;
        opts.compactable_tools = Some(
            items
                .iter()
                .map(|v| {
                    v.string().ok_or_else(|| {
                        Error::invalid_argument("options.compactableTools must contain strings")
                    })
                })
                .collect::<Result<Vec<_>>>()?,
        );
    }
    Ok(opts)
}

/// The options of `createCompactBoundaryMessage`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoundaryOptions {
    /// `lastUuid`: the last message the compaction replaced.
    pub last_uuid: Option<String>,
    /// `preCompactDiscoveredTools`.
    pub pre_compact_discovered_tools: Vec<String>,
    /// `uuid` of the line (default: a new one).
    pub uuid: Option<String>,
    /// `timestamp` of the line (default: now).
    pub timestamp: Option<String>,
    /// `template`: a line whose session fields the boundary copies.
    pub template: Option<Message>,
}

/// Reads the options of `createCompactBoundaryMessage`.
pub fn boundary_options<S: Source>(options: &S) -> Result<BoundaryOptions> {
    const WHAT: &str = "options";
    closed_object(options, WHAT, BOUNDARY_KEYS)?;
    let template = options.get("template");
    let template = if template.is_absent() {
        None
    } else if template.is_object() && !template.is_array() {
        let v = template
            .to_json()
            .map_err(|e| Error::new(ErrorCode::InvalidMessage, format!("options.template: {e}")))?;
        Some(Message::from_value(v, "options.template")?)
    } else {
        return Err(Error::invalid_argument(format!(
            "options.template must be a message object (a transcript line whose session fields the boundary copies), got {}",
            describe_value(&template)
        )));
    };
    Ok(BoundaryOptions {
        last_uuid: string(options, "lastUuid", WHAT)?,
        pre_compact_discovered_tools: strings(options, "preCompactDiscoveredTools", WHAT)?
            .unwrap_or_default(),
        uuid: string(options, "uuid", WHAT)?,
        timestamp: string(options, "timestamp", WHAT)?,
        template,
    })
}

impl Source for Value {
    fn json_text(&self) -> Option<String> {
        Some(self.to_string())
    }

    fn is_absent(&self) -> bool {
        self.is_null()
    }

    fn is_object(&self) -> bool {
        matches!(self, Value::Object(_) | Value::Array(_))
    }

    fn is_array(&self) -> bool {
        Value::is_array(self)
    }

    fn get(&self, key: &str) -> Value {
        match self {
            Value::Object(m) => m.get(key).cloned().unwrap_or(Value::Null),
            _ => Value::Null,
        }
    }

    fn number(&self) -> Option<f64> {
        self.as_f64()
    }

    fn time_ms(&self) -> Option<f64> {
        match self {
            Value::String(s) => microcompact::parse_timestamp_ms(s),
            _ => self.as_f64(),
        }
    }

    fn boolean(&self) -> Option<bool> {
        self.as_bool()
    }

    fn string(&self) -> Option<String> {
        self.as_str().map(str::to_string)
    }

    fn items(&self) -> Option<Vec<Value>> {
        self.as_array().cloned()
    }

    fn length(&self) -> Option<usize> {
        match self {
            Value::Array(a) => Some(a.len()),
            Value::String(s) => Some(s.encode_utf16().count()),
            _ => None,
        }
    }

    fn entries(&self) -> Option<Vec<(String, Value)>> {
        match self {
            Value::Null => Some(Vec::new()),
            Value::Object(m) => Some(m.iter().map(|(k, v)| (k.clone(), v.clone())).collect()),
            Value::Array(a) => Some(
                a.iter()
                    .filter_map(|x| {
                        let key = match x {
                            Value::Object(_) => match Source::get(x, "path") {
                                Value::Null => Source::get(x, "name"),
                                p => p,
                            },
                            other => other.clone(),
                        };
                        key.as_str().map(|k| (k.to_string(), x.clone()))
                    })
                    .collect(),
            ),
            _ => None,
        }
    }

    fn keys(&self) -> Result<Vec<String>> {
        Ok(match self {
            Value::Object(m) => m.keys().cloned().collect(),
            _ => Vec::new(),
        })
    }

    fn to_json(&self) -> std::result::Result<Value, String> {
        Ok(self.clone())
    }

    fn to_config(&self) -> Result<Config> {
        if self.is_null() {
            return Ok(Config::default());
        }
        let Value::Object(m) = self else {
            return Err(Error::new(
                ErrorCode::InvalidConfig,
                "config must be an object",
            ));
        };
        for k in m.keys() {
            Config::check_key(k)?;
        }
        Config::read(|k| match m.get(k) {
            None | Some(Value::Null) => Given::Absent,
            Some(Value::Number(n)) => n.as_f64().map_or(Given::Other("a number"), Given::Number),
            Some(Value::Bool(b)) => Given::Bool(*b),
            Some(other) => Given::Other(crate::model::messages::json_type_name(other)),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests;
