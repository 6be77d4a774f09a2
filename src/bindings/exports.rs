//! The exported JS functions (names fixed by SPEC.md). Each converts its arguments, calls
//! the core, and converts the answer back; no decision is made here.

use js_sys::{Array, JsString, Reflect};
use wasm_bindgen::prelude::*;

use super::convert::*;
use super::env::new_uuid;
use super::js_view::{
    apply_edits, count_at_end, edited_tool_use_ids, fast_record_at, fast_record_total,
    micro_compact_apply, micro_compact_result, user_message_in, JsConversation, TokenCounter,
};
use crate::drive::autocompact;
use crate::drive::options;
use crate::measure::thresholds;
use crate::measure::tokens;
use crate::model::config::Config;
use crate::model::error::{Error, ErrorCode};
use crate::model::messages::MAX_NESTING;
use crate::model::shape::Shape;
use crate::model::view::{ConversationView, CLEARED_PLACEHOLDER};
use crate::transforms::boundary::{self, BoundaryInput, Trigger};
use crate::transforms::microcompact;
use crate::transforms::ptl;
use crate::transforms::strip;
use crate::transforms::transcript;

#[wasm_bindgen(start, private)]
fn start() {
    console_error_panic_hook::set_once();
    // The counting module writes numbers with the engine's digits (model::number).
    #[cfg(all(feature = "count", not(feature = "base"), not(feature = "extra")))]
    crate::model::number::use_engine_text(number_text);
}

/// `String(n)` of a number, as the JS engine writes it.
#[cfg(all(feature = "count", not(feature = "base"), not(feature = "extra")))]
fn number_text(n: f64) -> String {
    js_sys::Number::from(n)
        .to_string_with_radix(10)
        .map(String::from)
        .unwrap_or_default()
}

/// Sets the defaults that explicit `config` objects override, from environment variables
/// (`DISABLE_COMPACT`, `DISABLE_AUTO_COMPACT`, `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`,
/// `CLAUDE_CODE_AUTO_COMPACT_WINDOW`). The Node entry calls it with `process.env` at import.
#[wasm_bindgen(js_name = setEnvironmentDefaults)]
pub fn set_environment_defaults(
    #[wasm_bindgen(unchecked_optional_param_type = "EnvironmentDefaults | null")] env: JsValue,
) -> JsResult<()> {
    if !(env.is_object() || env.is_undefined() || env.is_null()) {
        return Err(js_error(Error::invalid_argument(
            "env must be an object of environment variables",
        )));
    }
    let get = |k: &str| prop(&env, k).as_string();
    let names = [
        "DISABLE_COMPACT",
        "DISABLE_AUTO_COMPACT",
        "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE",
        "CLAUDE_CODE_AUTO_COMPACT_WINDOW",
    ];
    let values: Vec<(&str, String)> = names
        .iter()
        .filter_map(|n| get(n).map(|v| (*n, v)))
        .collect();
    let cfg = Config::from_env(|k| {
        values
            .iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.as_str())
    });
    set_env_defaults(cfg);
    PER_TURN.with(|p| *p.borrow_mut() = None); // the defaults a per-turn call uses changed
    Ok(())
}

/// The library's constants (SPEC §4, §8, §9, §10), as a plain object.
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = getConstants, unchecked_return_type = "Constants")]
pub fn get_constants() -> JsResult<JsValue> {
    let o = js_sys::Object::new();
    for (k, v) in crate::drive::constants::NUMBERS {
        Reflect::set(&o, &(*k).into(), &(*v).into())?;
    }
    for (k, v) in crate::drive::constants::TEXTS {
        Reflect::set(&o, &(*k).into(), &(*v).into())?;
    }
    Ok(o.into())
}

/// `roughTokenCountEstimation(text, bytesPerToken = 4)`: `text.length / bytesPerToken`,
/// rounded. Reads the string's length without copying it.
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = roughTokenCountEstimation)]
pub fn rough_token_count_estimation(
    #[wasm_bindgen(unchecked_param_type = "string")] text: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "number | null", js_name = bytesPerToken)]
    bytes_per_token: JsValue,
) -> JsResult<f64> {
    let s = text
        .dyn_ref::<JsString>()
        .ok_or_else(|| js_error(Error::invalid_argument("text must be a string")))?;
    let bpt = if bytes_per_token.is_undefined() || bytes_per_token.is_null() {
        tokens::BYTES_PER_TOKEN
    } else {
        bytes_per_token
            .as_f64()
            .ok_or_else(|| js_error(Error::invalid_argument("bytesPerToken must be a number")))?
    };
    Ok(js(tokens::rough_token_count_checked(s.length() as usize, bpt))? as f64)
}

/// Whether `options` is `undefined` or `null`: a per-turn call usually passes none, and then
/// nothing is read from it (each read is a crossing into JS).
fn no_options(options: &JsValue) -> bool {
    options.is_undefined() || options.is_null()
}

#[cfg(any(feature = "base", feature = "count"))]
/// The view a count at the end of `messages` reads: its end read in one crossing (with the
/// array's length), after every message was checked against a named `shape`.
fn count_view(messages: &JsValue, shape: Option<Shape>) -> crate::Result<JsConversation<'_>> {
    match shape {
        None => JsConversation::at_end(messages, "messages"),
        Some(_) => {
            let mut conv = JsConversation::of_shape(messages, "messages", shape)?;
            conv.read_tail();
            Ok(conv)
        }
    }
}

/// The model argument of a `shouldAutoCompact` call without options, its id, the
/// configuration such a call uses and the rule the count is compared with under it.
type PerTurn = (
    JsValue,
    std::rc::Rc<str>,
    std::rc::Rc<Config>,
    autocompact::PerTurnRule,
);

thread_local! {
    /// The model argument of the last `shouldAutoCompact` without options, its id, the
    /// configuration such a call uses (the environment defaults) and its rule, kept
    /// until `setEnvironmentDefaults` changes them.
    static PER_TURN: std::cell::RefCell<Option<PerTurn>> =
        const { std::cell::RefCell::new(None) };
}

/// The model id, configuration and [`autocompact::PerTurnRule`] of a `shouldAutoCompact`
/// call without options: the same as `model_arg` and an absent `config` give, kept from the
/// last such call while the model argument is the same value (`===`) and the environment
/// defaults have not changed.
#[cfg(any(feature = "base", feature = "count"))]
fn per_turn_model_and_config(
    model: &JsValue,
) -> crate::Result<(
    std::rc::Rc<str>,
    std::rc::Rc<Config>,
    autocompact::PerTurnRule,
)> {
    let hit = PER_TURN.with(|p| {
        p.borrow()
            .as_ref()
            .filter(|(v, ..)| v == model)
            .map(|(_, m, c, r)| (m.clone(), c.clone(), *r))
    });
    if let Some(found) = hit {
        return Ok(found);
    }
    let m: std::rc::Rc<str> = model_arg(model)?.into();
    let cfg = std::rc::Rc::new(config_arg(&JsValue::UNDEFINED)?);
    thresholds::check_room(&m, &cfg)?;
    let rule = autocompact::PerTurnRule::new(&m, &cfg);
    PER_TURN.with(|p| *p.borrow_mut() = Some((model.clone(), m.clone(), cfg.clone(), rule)));
    Ok((m, cfg, rule))
}

/// (internal) The byte address of the per-turn record `tokenCountWithEstimation` and
/// `shouldAutoCompact` write without options (the package's glue routes such calls through
/// it: one record read in JS, one call here with numbers, no JS values handed over).
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = __ccPerTurnRecord, skip_typescript)]
pub fn per_turn_record() -> u32 {
    fast_record_at()
}

/// (internal) `tokenCountWithEstimation(messages)` from the per-turn record of `used` words
/// the package's JS wrote; -1 when the record does not settle it (the glue then calls the
/// export itself).
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = __ccPerTurnCount, skip_typescript)]
#[cfg_attr(cc_speed, optimize(speed))]
pub fn per_turn_count(used: u32) -> f64 {
    fast_record_total(used as usize).map_or(-1.0, |t| t as f64)
}

/// (internal) `shouldAutoCompact(messages, model)` from the per-turn record of `used` words
/// the package's JS wrote, for the model of the last such call without options (the glue
/// checks that it is the same value): 0 false, 1 true, 2 not settled here (no model kept, or
/// the record does not settle the count, or a compaction may be due: the glue then calls
/// the export itself).
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = __ccPerTurnShould, skip_typescript)]
#[cfg_attr(cc_speed, optimize(speed))]
pub fn per_turn_should(used: u32) -> u32 {
    let Some(rule) = PER_TURN.with(|p| p.borrow().as_ref().map(|(.., r)| *r)) else {
        return 2;
    };
    fast_record_total(used as usize)
        .and_then(|tokens| rule.decide(tokens))
        .map_or(2, u32::from)
}

/// `tokenCountWithEstimation(messages, {model, config, usage, usageAt, system, tools}?)`:
/// context size in tokens (SPEC §3); `system` and `tools` count where nothing anchors. With `model`, a usage more than twice the model's window is rejected as
/// bogus (`INVALID_TOKEN_COUNT`); `usage` (any ecosystem's names) anchors the count for
/// messages that carry none, at `usageAt` (default: the last assistant message).
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = tokenCountWithEstimation)]
pub fn token_count_with_estimation(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "TokenCountOptions | null")] options: JsValue,
) -> JsResult<f64> {
    if no_options(&options) {
        // The per-turn call: settled from one record of the end of the array when it can
        // be, else no option structs built or moved.
        if let Some(count) = count_at_end(&messages) {
            return Ok(count.total as f64);
        }
        let conv = js(count_view(&messages, None))?;
        return Ok(js(tokens::stateless_count(&conv, None))?.total as f64);
    }
    let (opts, shape, counter) = (
        js(reading("options", || {
            options::token_count_options(&options)
        }))?,
        js(reading("options", || {
            options::shape_option(&options, "options")
        }))?,
        js(TokenCounter::enter(&options, "options"))?,
    );
    let conv = js(count_view(&messages, shape))?;
    let count = js(tokens::stateless_count(&conv, opts.given_usage))?;
    js(counter.finish())?;
    if let Some((model, cfg)) = &opts.plausible_for {
        js(tokens::check_plausible(&conv, &count, model, cfg))?;
    }
    let count = tokens::with_calibration(count, opts.calibration);
    Ok(tokens::with_preamble(count, opts.preamble).total as f64)
}

/// `getContextWindowForModel(model, config?)`.
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = getContextWindowForModel)]
pub fn get_context_window_for_model(
    #[wasm_bindgen(unchecked_param_type = "ModelId")] model: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Config | null")] config: JsValue,
) -> JsResult<f64> {
    let (m, c) = (
        js(model_arg(&model))?,
        js(reading("config", || config_arg(&config)))?,
    );
    Ok(thresholds::context_window_for_model(&m, &c) as f64)
}

/// `getMaxOutputTokensForModel(model, config?)`: the model's default max output tokens.
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = getMaxOutputTokensForModel)]
pub fn get_max_output_tokens_for_model(
    #[wasm_bindgen(unchecked_param_type = "ModelId")] model: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Config | null")] config: JsValue,
) -> JsResult<f64> {
    let (m, c) = (
        js(model_arg(&model))?,
        js(reading("config", || config_arg(&config)))?,
    );
    Ok(thresholds::max_output_tokens_for_model(&m, &c) as f64)
}

/// `getModelOutputLimits(model)`: `{default, upperLimit}` from the model table.
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = getModelOutputLimits, unchecked_return_type = "ModelOutputLimits")]
pub fn get_model_output_limits(
    #[wasm_bindgen(unchecked_param_type = "ModelId")] model: JsValue,
) -> JsResult<JsValue> {
    let m = js(model_arg(&model))?;
    to_js(&thresholds::output_limits(&m))
}

/// `getEffectiveContextWindowSize(model, config?)`.
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = getEffectiveContextWindowSize)]
pub fn get_effective_context_window_size(
    #[wasm_bindgen(unchecked_param_type = "ModelId")] model: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Config | null")] config: JsValue,
) -> JsResult<f64> {
    let (m, c) = (
        js(model_arg(&model))?,
        js(reading("config", || config_arg(&config)))?,
    );
    js(thresholds::check_room(&m, &c))?;
    Ok(thresholds::effective_context_window(&m, &c) as f64)
}

/// `getAutoCompactThreshold(model, config?)`.
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = getAutoCompactThreshold)]
pub fn get_auto_compact_threshold(
    #[wasm_bindgen(unchecked_param_type = "ModelId")] model: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Config | null")] config: JsValue,
) -> JsResult<f64> {
    let (m, c) = (
        js(model_arg(&model))?,
        js(reading("config", || config_arg(&config)))?,
    );
    js(thresholds::check_room(&m, &c))?;
    Ok(thresholds::auto_compact_threshold(&m, &c) as f64)
}

/// `calculateTokenWarningState(tokenUsage, model, config?)` →
/// `{percentLeft, isAboveWarningThreshold, isAboveErrorThreshold,
/// isAboveAutoCompactThreshold, isAtBlockingLimit}`.
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = calculateTokenWarningState, unchecked_return_type = "TokenWarningState")]
pub fn calculate_token_warning_state(
    #[wasm_bindgen(unchecked_param_type = "number", js_name = tokenUsage)] token_usage: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ModelId")] model: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "Config | null")] config: JsValue,
) -> JsResult<JsValue> {
    let t = js(tokens_arg(&token_usage, "tokenUsage"))?;
    let (m, c) = (
        js(model_arg(&model))?,
        js(reading("config", || config_arg(&config)))?,
    );
    js(thresholds::check_room(&m, &c))?;
    to_js(&thresholds::token_warning_state(t, &m, &c))
}

/// `isAutoCompactEnabled(config?)`.
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = isAutoCompactEnabled)]
pub fn is_auto_compact_enabled(
    #[wasm_bindgen(unchecked_optional_param_type = "Config | null")] config: JsValue,
) -> JsResult<bool> {
    Ok(js::<Config>(reading("config", || config_arg(&config)))?.is_auto_compact_enabled())
}

/// `shouldAutoCompact(messages, model, {querySource, snipTokensFreed, config}?)`.
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = shouldAutoCompact)]
pub fn should_auto_compact(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ModelId")] model: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ShouldAutoCompactOptions | null")]
    options: JsValue,
) -> JsResult<bool> {
    if no_options(&options) {
        // The per-turn call: the model id and the configuration are the last call's unless
        // the model or the environment defaults changed (no string or config read), and no
        // option structs are built or moved.
        let (m, cfg, rule) = js(per_turn_model_and_config(&model))?;
        if let Some(answer) = count_at_end(&messages).and_then(|count| rule.decide(count.total)) {
            return Ok(answer);
        }
        let conv = js(count_view(&messages, None))?;
        let none = autocompact::ShouldAutoCompactOptions::default();
        return Ok(js(autocompact::should_auto_compact(&conv, &m, &none, &cfg))?.should_compact);
    }
    let m: std::rc::Rc<str> = js(model_arg(&model))?.into();
    let (opts, cfg) = js(reading("options", || {
        options::should_auto_compact_options(&options)
    }))?;
    js(thresholds::check_room(&m, &cfg))?;
    let shape = js(reading("options", || {
        options::shape_option(&options, "options")
    }))?;
    let counter = js(TokenCounter::enter(&options, "options"))?;
    let conv = js(count_view(&messages, shape))?;
    let decision = js(autocompact::should_auto_compact(&conv, &m, &opts, &cfg))?;
    js(counter.finish())?;
    Ok(decision.should_compact)
}

/// `stripImagesFromMessages(messages)`: a new array where user messages' image and document
/// blocks (also inside tool results) are `[image]` / `[document]` text; messages without
/// media are the same objects.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = stripImagesFromMessages, unchecked_return_type = "MessageInput[]")]
pub fn strip_images_from_messages(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ShapeOptions | null")] options: JsValue,
) -> JsResult<Array> {
    let shape = js(reading("options", || options::shape_options(&options)))?;
    let conv = js(JsConversation::of_shape(&messages, "messages", shape))?;
    js(conv.validate_all())?; // every shape
    let edits = js(strip::strip_images(&conv))?;
    js(apply_edits(&conv, &edits))
}

/// `stripReinjectedAttachments(messages)`: a new array without `skill_discovery` /
/// `skill_listing` attachment lines.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = stripReinjectedAttachments, unchecked_return_type = "MessageInput[]")]
pub fn strip_reinjected_attachments(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ShapeOptions | null")] options: JsValue,
) -> JsResult<Array> {
    let shape = js(reading("options", || options::shape_options(&options)))?;
    let conv = js(JsConversation::of_shape(&messages, "messages", shape))?;
    js(conv.validate_all())?; // every shape
    let drop = js(strip::reinjected_attachments(&conv))?;
    let out = Array::new();
    let mut d = drop.iter().peekable();
    for i in 0..conv.len() {
        if d.peek() == Some(&&i) {
            d.next();
            continue;
        }
        out.push(&conv.item(i));
    }
    Ok(out)
}

/// `groupMessagesByApiRound(messages)`: arrays of the same message objects, one per API round.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = groupMessagesByApiRound, unchecked_return_type = "MessageInput[][]")]
pub fn group_messages_by_api_round(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "ShapeOptions | null")] options: JsValue,
) -> JsResult<Array> {
    let shape = js(reading("options", || options::shape_options(&options)))?;
    let conv = js(JsConversation::of_shape(&messages, "messages", shape))?;
    js(conv.validate_all())?; // every shape
    let groups = js(ptl::group_by_api_round(&conv, 0))?;
    let out = Array::new();
    for g in groups {
        out.push(&super::js_view::plain_slice(
            conv.array(),
            g.start as u32,
            g.end as u32,
        ));
    }
    Ok(out)
}

/// `parseContextOverflowError(errorOrText, status?)` → `{kind, actual, limit, gap}` or `null`.
/// Accepts a string, an `Error`, an API error body or an SDK error (`status`, `error`), also
/// wrapped in another error (`cause`, an `AggregateError`'s `errors`).
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = parseContextOverflowError, unchecked_return_type = "ContextOverflow | null")]
pub fn parse_context_overflow_error(
    #[wasm_bindgen(unchecked_param_type = "unknown")] error: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "number | null")] status: JsValue,
) -> JsResult<JsValue> {
    // Read as the JS value it is: a number, or nothing; anything else (a string, a BigInt, a
    // Symbol, an object whose valueOf throws) is refused here, never converted.
    let status = if status.is_undefined() || status.is_null() {
        None
    } else {
        match status.as_f64() {
            Some(s) => Some(s),
            None => {
                return Err(js_error(Error::invalid_argument(format!(
                    "parseContextOverflowError: status must be a number (an HTTP status such as 413), got a {}",
                    status.js_typeof().as_string().unwrap_or_default()
                ))))
            }
        }
    };
    let (text, found) = options::error_text(&error);
    let status = status.map(|s| s as u16).or(found);
    match ptl::parse_context_overflow_error(&text, status) {
        Some(o) => to_js(&o),
        None => Ok(JsValue::NULL),
    }
}

/// `truncateHeadForPTLRetry(messages, error, {keepLatestRequest, tokenCounter}?)`: drops the
/// oldest API rounds to cover the gap the error names (20% of rounds when it names none;
/// measured with `tokenCounter` when given); `null` when nothing can be dropped. With
/// `keepLatestRequest` the latest user request stays at the head when its round goes.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = truncateHeadForPTLRetry, unchecked_return_type = "Array<MessageInput | ApiUserTextMessage | TranscriptUserLine> | null")]
pub fn truncate_head_for_ptl_retry(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "unknown")] error: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "TruncateHeadOptions | null")] options: JsValue,
) -> JsResult<JsValue> {
    let shape = js(reading("options", || {
        options::shape_option(&options, "options")
    }))?;
    let keep = js(reading("options", || {
        options::truncate_head_options(&options)
    }))?;
    // The rounds measured in the caller's tokens when it gave a tokenizer: the gap the API
    // names is in real tokens.
    let counter = js(super::js_view::TokenCounter::enter(&options, "options"))?;
    let conv = js(JsConversation::of_shape(&messages, "messages", shape))?;
    js(conv.validate_all())?; // every shape
    let overflow = if error.is_undefined() || error.is_null() {
        None
    } else {
        let (text, status) = options::error_text(&error);
        ptl::parse_context_overflow_error(&text, status)
    };
    let truncation = js(ptl::truncate_head(&conv, overflow.as_ref(), keep))?;
    js(counter.finish())?;
    drop(counter);
    let Some(t) = truncation else {
        return Ok(JsValue::NULL);
    };
    let out = Array::new();
    for kept in t.layout(&conv) {
        out.push(&match kept {
            ptl::Kept::Message(i) => conv.item(i),
            ptl::Kept::Marker { transcript } => {
                let uuid = transcript.then(new_uuid);
                let marker = to_js(&ptl::ptl_marker_message(transcript, uuid.as_deref()))?;
                if conv.shape().is_foreign() {
                    // The marker in the caller's shape.
                    let own =
                        user_message_in(
                        &messages,
                        conv.shape().code(),
                        &marker,
                        &new_uuid(),
                        &JsValue::UNDEFINED,
                    );
                    if own.is_undefined() {
                        return Err(js_error(Error::new(
                            ErrorCode::UnsupportedShape,
                            "truncateHeadForPTLRetry: the conversation has no LangChain HumanMessage whose class could build the marker message",
                        )));
                    }
                    own
                } else {
                    marker
                }
            }
        });
    }
    Ok(out.into())
}

/// `microCompact(messages, {keepRecent, idleMinutes, now, lastAssistantTimestamp,
/// keepLatestPerPath, compactableTools}?)` → `{messages, tokensFreed, clearedToolUseIds}`.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = microCompact, unchecked_return_type = "MicroCompactResult<MessageInput>")]
pub fn micro_compact(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "MicroCompactOptions | null")] options: JsValue,
) -> JsResult<JsValue> {
    let mut opts = js(reading("options", || {
        options::micro_compact_options(&options, js_sys::Date::now)
    }))?;
    let shape = js(reading("options", || {
        options::shape_option(&options, "options")
    }))?;
    let mut conv = js(JsConversation::of_shape(&messages, "messages", shape))?;
    // Every shape: each one's results are cleared in its own form (the tool index reports
    // an unknown message or a second shape, so the messages are not read twice).
    // The ids are read below, in place; the index keeps each result's id and shape in JS, so
    // the chosen results are cleared from their positions in it, in one crossing that also
    // builds the result object (the plan's edits are then not needed).
    opts.resolve_ids = false;
    conv.keep_tool_index();
    // Anthropic API messages are read in one pass straight into WASM memory (and no context
    // start is searched for: none of them starts one).
    let plan = js(microcompact::micro_compact_positions_with(
        &conv,
        &opts,
        |with_paths| conv.api_tool_index(with_paths),
    ))?;
    let freed = plan.tokens_freed as f64;
    if let Some(out) = js(micro_compact_apply(
        &conv,
        &plan.cleared_results,
        CLEARED_PLACEHOLDER,
        freed,
    ))? {
        return Ok(out);
    }
    // The index JS kept is not of this array as it is now: the edits, applied the general way.
    let plan = js(microcompact::micro_compact(&conv, &opts))?;
    let out_messages = js(apply_edits(&conv, &plan.edits))?;
    let ids = edited_tool_use_ids(&conv, &plan.edits);
    Ok(micro_compact_result(
        &out_messages,
        plan.tokens_freed as f64,
        &ids,
    ))
}

/// `createCompactBoundaryMessage(trigger, preTokens, {lastUuid, preCompactDiscoveredTools,
/// uuid, timestamp, template}?)`: the `compact_boundary` system line.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = createCompactBoundaryMessage, unchecked_return_type = "CompactBoundaryLine")]
pub fn create_compact_boundary_message(
    #[wasm_bindgen(unchecked_param_type = "CompactTrigger")] trigger: JsValue,
    #[wasm_bindgen(unchecked_param_type = "number", js_name = preTokens)] pre_tokens: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "CompactBoundaryOptions | null")]
    options: JsValue,
) -> JsResult<JsValue> {
    let trigger = trigger
        .as_string()
        .and_then(|s| Trigger::parse(&s))
        .ok_or_else(|| {
            js_error(Error::invalid_argument(
                "trigger must be \"auto\" or \"manual\"",
            ))
        })?;
    let pre_tokens = js(tokens_arg(&pre_tokens, "preTokens"))?;
    let o = js(reading("options", || options::boundary_options(&options)))?;
    let input = BoundaryInput {
        trigger,
        pre_tokens,
        last_uuid: o.last_uuid,
        pre_compact_discovered_tools: o.pre_compact_discovered_tools,
        uuid: o.uuid.unwrap_or_else(new_uuid),
        timestamp: o
            .timestamp
            .unwrap_or_else(|| String::from(js_sys::Date::new_0().to_iso_string())),
        session_fields: o
            .template
            .as_ref()
            .map(boundary::session_fields_of)
            .unwrap_or_default(),
        kept_messages: 0,
    };
    // Serialized from the JSON value so the keys keep Claude Code's order.
    to_js(&boundary::compact_boundary_value(&input))
}

/// The messages of one of a result's arrays, `v` (read from `result.{key}`). Its `length`
/// and elements are read in JS (no js-sys `catch` import: a throw through one leaks a slot of
/// the externref table); a read that throws is an `INVALID_ARGUMENT` saying so.
fn array_field(v: &JsValue, key: &str, required: bool) -> JsResult<Vec<JsValue>> {
    if v.is_undefined() || v.is_null() {
        if required {
            return Err(js_error(Error::invalid_argument(format!(
                "result.{key} is required"
            ))));
        }
        return Ok(Vec::new());
    }
    let what = format!("result.{key}");
    // Each element becomes a handle in the instance's table, which cannot grow without
    // bound: a longer array (a sparse one with a huge `length`) is refused before reading.
    let len = js(reading(&what, || Ok(prop(v, "length"))))?
        .as_f64()
        .unwrap_or(0.0);
    if len > MAX_RESULT_ITEMS as f64 {
        return Err(js_error(Error::invalid_argument(format!(
            "{what} has {len} elements; at most {MAX_RESULT_ITEMS} are read"
        ))));
    }
    let items = js(items_or_read_error(v)
        .map_err(|e| Error::invalid_argument(format!("{what}: {}", e.message))))?
    .ok_or_else(|| js_error(Error::invalid_argument(format!("{what} must be an array"))))?;
    match items.iter().position(|m| !m.is_object()) {
        Some(i) => Err(js_error(Error::invalid_argument(format!(
            "{what}[{i}] must be a message object"
        )))),
        None => Ok(items),
    }
}

/// The most elements [`array_field`] reads from one of a result's arrays.
const MAX_RESULT_ITEMS: u32 = 1 << 22;

/// `buildPostCompactMessages(result)`: boundary marker, summary messages, kept messages,
/// attachments, hook results — in that order, the kept system messages that open the
/// conversation (the app's instructions) right before the summary. For another ecosystem's
/// messages (`result.messageShape`), no boundary line.
/// When the summary is the Messages API's compaction block (on-demand compaction), no
/// boundary line either: the block comes first, as the API wants it.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = buildPostCompactMessages, unchecked_return_type = "Array<PostCompactMessage<unknown>>")]
pub fn build_post_compact_messages(
    #[wasm_bindgen(
        unchecked_param_type = "Pick<CompactionResult<unknown>, 'boundaryMarker' | 'summaryMessages'> & Partial<Pick<CompactionResult<unknown>, 'messagesToKeep' | 'attachments' | 'hookResults' | 'messageShape'>>"
    )]
    result: JsValue,
) -> JsResult<Array> {
    if !result.is_object() {
        return Err(js_error(Error::invalid_argument(
            "result must be a CompactionResult object",
        )));
    }
    // Each field read once, in JS: a getter or a Proxy trap that throws is reported as such
    // (naming the field, what it threw as the `cause`), not as a missing or ill-typed field.
    let [marker, summary, keep, attachments, hooks, shape] = js(reading("result", || {
        Ok([
            "boundaryMarker",
            "summaryMessages",
            "messagesToKeep",
            "attachments",
            "hookResults",
            "messageShape",
        ]
        .map(|k| prop(&result, k)))
    }))?;
    if !marker.is_object() {
        return Err(js_error(Error::invalid_argument(
            "result.boundaryMarker must be a message object",
        )));
    }
    let summary = array_field(&summary, "summaryMessages", true)?;
    let keep = array_field(&keep, "messagesToKeep", false)?;
    let attachments = array_field(&attachments, "attachments", false)?;
    let hooks = array_field(&hooks, "hookResults", false)?;
    let shape = shape.as_string().and_then(|s| Shape::from_name(&s));
    if shape.is_some_and(Shape::is_foreign) {
        // No boundary line in another ecosystem's messages: the result object carries it.
        let keep_array: JsValue = keep.iter().collect::<Array>().into();
        let system = js(boundary::leading_system(&js(JsConversation::new(
            &keep_array,
            "result.messagesToKeep",
        ))?))?;
        return Ok(boundary::build_post_compact_without_line(
            &summary,
            &keep,
            system,
            &attachments,
            &hooks,
        )
        .into_iter()
        .collect());
    }
    // A summary that is the API's compaction block starts the context by itself, first in
    // the messages sent (the boundary line stays on `result.boundaryMarker`).
    let api_block = match summary.first() {
        Some(m) => js(reading("result.summaryMessages[0]", || {
            let first = prop(&prop(m, "content"), "0");
            Ok(prop(&first, "type").as_string().as_deref()
                == Some(crate::model::messages::COMPACTION_BLOCK))
        }))?,
        None => false,
    };
    // The kept system messages that open the conversation (the app's instructions) come
    // before the summary.
    let keep_array: JsValue = keep.iter().collect::<Array>().into();
    let system = js(boundary::leading_system(&js(JsConversation::new(
        &keep_array,
        "result.messagesToKeep",
    ))?))?;
    if api_block {
        return Ok(boundary::build_post_compact_without_line(
            &summary,
            &keep,
            system,
            &attachments,
            &hooks,
        )
        .into_iter()
        .collect());
    }
    Ok(
        boundary::build_post_compact(&marker, &summary, &keep, system, &attachments, &hooks)
            .into_iter()
            .collect(),
    )
}

// No `catch` import here: with wasm-bindgen 0.2.130's externref glue, a `catch` import that
// returns a value leaks one slot of the externref table (and its entry in the slab that
// tracks free slots, in WASM memory) each time it throws: the placeholder result of the
// throwing call is never released. parseTranscript on invalid JSON grew ~20 bytes per call
// for good. These helpers of js_transcript.js catch in JavaScript and report a failure
// by a value the call cannot otherwise return (then `takeFailure` gives its message).
#[wasm_bindgen(module = "/src/bindings/js_transcript.js")]
extern "C" {
    /// `JSON.parse(text)`, or `undefined` when it throws.
    #[wasm_bindgen(js_name = parseLine)]
    fn parse_line(text: &JsString) -> JsValue;
    /// `JSON.stringify(value)`, or `null` when it throws.
    #[wasm_bindgen(js_name = stringifyMessage)]
    fn stringify_message(value: &JsValue) -> JsValue;
    /// The message of what the last failed helper threw (`unparseable` when not an `Error`
    /// with a string message).
    #[wasm_bindgen(js_name = takeFailure)]
    fn take_failure() -> String;
    /// `jsonLines(list, count)`, or `undefined` when it throws (`null` when joining the
    /// lines does: too long for one string).
    #[wasm_bindgen(js_name = jsonLines)]
    fn json_lines(list: &JsValue, count: u32) -> JsValue;
    #[wasm_bindgen(js_name = rememberLines)]
    fn remember_lines(values: &Array, lines: &Array, bom: bool);
}

/// `parseTranscript(jsonl)`: the lines of a Claude Code session file as objects, in order,
/// unknown line types included. Blank or malformed lines throw `MALFORMED_TRANSCRIPT` with
/// their line number. The text is split and parsed by the JS engine in place, never copied
/// into WASM memory. Each line object keeps (hidden, see `rememberLines` in `js_transcript.js`)
/// the text it was read from, so that [`serialize_transcript`] writes an unchanged line
/// back byte for byte.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = parseTranscript, unchecked_return_type = "TranscriptLine[]")]
pub fn parse_transcript(
    #[wasm_bindgen(unchecked_param_type = "string")] jsonl: JsValue,
) -> JsResult<Array> {
    transcript_lines(&jsonl)
}

/// The lines of a session file's text as [`parse_transcript`] reads them (`simulateSession`
/// reads its text the same way: what one accepts, the other does).
#[cfg(any(feature = "base", feature = "extra"))]
pub(crate) fn transcript_lines(jsonl: &JsValue) -> JsResult<Array> {
    let text = jsonl
        .dyn_ref::<JsString>()
        .ok_or_else(|| js_error(Error::invalid_argument("jsonl must be a string")))?;
    let lines = text.split("\n");
    let count = lines.length() as usize;
    let out = Array::new();
    let mut bom = false;
    for k in 0..count {
        let mut line: JsString = lines.get(k as u32).unchecked_into();
        if k == 0 && line.char_code_at(0) == f64::from(transcript::BOM) {
            line = line.slice(1, line.length());
            bom = true;
        }
        let blank = line.trim().length() == 0;
        match js(transcript::classify_line(k + 1, k + 1 == count, blank))? {
            transcript::LineAction::Skip => continue,
            transcript::LineAction::Parse => {}
        }
        let v = parse_line(&line);
        if v.is_undefined() {
            return Err(js_error(transcript::malformed_line(k + 1, take_failure())));
        }
        if !v.is_object() || Array::is_array(&v) {
            let what = if Array::is_array(&v) {
                "an array"
            } else if v.is_null() {
                "null"
            } else {
                "a primitive value"
            };
            return Err(js_error(transcript::non_object_line(k + 1, what)));
        }
        if super::convert::deeper_than(&v, MAX_NESTING as u32) {
            return Err(js_error(transcript::too_deep_line(k + 1)));
        }
        out.push(&v);
    }
    remember_lines(&out, &lines, bom);
    Ok(out)
}

/// `serializeTranscript(messages)`: JSONL text, one line per message, ending in a newline.
/// A parsed transcript serializes back byte for byte: a line whose value did not change is
/// written as it was read (spacing, number spellings, escapes, its `\r\n` ending, a leading
/// byte-order mark, no ending on a last line that had none); a changed line is written by
/// `JSON.stringify` with the numbers it still holds spelled as they were read. Each line is the engine's own
/// `JSON.stringify` of the message, written and concatenated by the engine in one call: the
/// text never crosses into WebAssembly memory; only one code per line does, to check that
/// every message is an object written as one (`{` for a plain object without `toJSON`, known
/// without reading its text; else the text's first character). When one is not (or writing
/// throws), the messages are taken one by one to name the first bad one.
#[cfg(feature = "base")]
#[wasm_bindgen(js_name = serializeTranscript)]
pub fn serialize_transcript(
    #[wasm_bindgen(unchecked_param_type = "readonly MessageInput[]")] messages: JsValue,
) -> JsResult<JsString> {
    // Every line is written, in file order: no chain to follow.
    let conv = js(JsConversation::unchained(&messages, "messages"))?;
    let pair = json_lines(&messages, conv.len() as u32);
    if pair.is_null() {
        return Err(js_error(Error::new(
            ErrorCode::SerializationFailed,
            format!(
                "messages: the transcript is longer than the longest string this engine can hold ({})",
                take_failure()
            ),
        )));
    }
    if !pair.is_undefined() {
        let pair: &Array = pair.unchecked_ref();
        let heads = pair.get(1).unchecked_into::<js_sys::Uint8Array>().to_vec();
        if heads.len() == conv.len() && heads.iter().all(|&b| b == b'{') {
            return Ok(pair.get(0).unchecked_into());
        }
    }
    serialize_one_by_one(&conv)
}

/// [`serialize_transcript`] message by message: the same text, or the error naming the
/// first message that is not an object written as one.
fn serialize_one_by_one(conv: &JsConversation) -> JsResult<JsString> {
    let newline = JsValue::from_str("\n");
    let mut out = JsString::from("");
    for i in 0..conv.len() {
        let m = conv.item(i);
        let is_array = super::convert::is_array_or_read_error(&m)
            .map_err(|e| js_error(e.at(format!("messages[{i}]"))))?;
        if !m.is_object() || is_array {
            return Err(js_error(
                Error::invalid_message("expected an object").at(format!("messages[{i}]")),
            ));
        }
        let fail = |detail: String| {
            js_error(Error::new(
                ErrorCode::SerializationFailed,
                format!("messages[{i}]: {detail}"),
            ))
        };
        let s = stringify_message(&m);
        if s.is_null() {
            return Err(fail(take_failure()));
        }
        let s: JsString = s.dyn_into().map_err(|_| {
            fail("JSON.stringify gave no text (a toJSON returning undefined?)".into())
        })?;
        if s.char_code_at(0) != f64::from(b'{') {
            return Err(fail(
                "does not serialize to a JSON object (a toJSON or Date?)".into(),
            ));
        }
        out = out.concat(&s).concat(&newline);
    }
    Ok(out)
}
