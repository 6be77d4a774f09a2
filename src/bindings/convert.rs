//! Conversions at the JS boundary: errors, serde values, configuration.

use std::cell::RefCell;

use js_sys::Reflect;
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::drive::options::Source;
use crate::model::config::Config;
use crate::model::error::{Error, ErrorCode};
use crate::model::messages::{payload_is_read, UNREAD_LINE_FIELDS};

#[wasm_bindgen(module = "/src/bindings/js_convert.js")]
extern "C" {
    #[wasm_bindgen(js_name = entriesOf)]
    fn entries_of(v: &JsValue) -> JsValue;
}

/// What the core reads of message `m`: `m` itself, or, for a line whose payload is never read
/// ([`payload_is_read`]), a new object with only its [`UNREAD_LINE_FIELDS`].
pub fn for_rust(m: &JsValue) -> JsValue {
    if !m.is_object() {
        return m.clone();
    }
    let text = |k: &str| prop(m, k).as_string();
    let line_type = text("type");
    if payload_is_read(
        line_type.as_deref(),
        text("role").as_deref(),
        text("subtype").as_deref(),
    ) {
        return m.clone();
    }
    let slim = js_sys::Object::new();
    for k in UNREAD_LINE_FIELDS {
        let v = prop(m, k);
        if !v.is_undefined() {
            // Setting a data property on a new plain object cannot fail.
            let _ = Reflect::set(&slim, &(*k).into(), &v);
        }
    }
    slim.into()
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

/// Serializes a value for JS (plain objects, not Maps).
pub fn to_js<T: Serialize + ?Sized>(v: &T) -> JsResult<JsValue> {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(serialization_failed)
}

/// The error of a failed [`to_js`] (one copy, not one per serialized type).
#[inline(never)]
fn serialization_failed(e: serde_wasm_bindgen::Error) -> JsValue {
    js_error(Error::new(ErrorCode::SerializationFailed, e.to_string()))
}

/// Deserializes an optional argument; `undefined`/`null` give the default.
pub fn from_js<T: DeserializeOwned + Default>(
    v: &JsValue,
    what: &str,
    code: ErrorCode,
) -> crate::Result<T> {
    if v.is_undefined() || v.is_null() {
        return Ok(T::default());
    }
    if !v.is_object() {
        return Err(Error::new(code, format!("{what} must be an object")));
    }
    serde_wasm_bindgen::from_value(v.clone()).map_err(|e| Error::new(code, format!("{what}: {e}")))
}

/// Reads a config argument, validates it, and fills absent fields from the environment
/// defaults (set by the Node entry).
pub fn config_arg(v: &JsValue) -> crate::Result<Config> {
    if v.is_object() {
        let obj: &js_sys::Object = v.unchecked_ref();
        for key in js_sys::Object::keys(obj).iter() {
            Config::check_key(&key.as_string().unwrap_or_default())?;
        }
    }
    let explicit: Config = from_js(v, "config", ErrorCode::InvalidConfig)?;
    explicit.validate()?;
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
/// carry flags such as `onDemandCompaction`).
pub fn prop(obj: &JsValue, key: &str) -> JsValue {
    if obj.is_object() || obj.is_function() {
        Reflect::get(obj, &key.into()).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
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
        js_sys::Array::is_array(self)
    }

    fn get(&self, key: &str) -> JsValue {
        prop(self, key)
    }

    fn number(&self) -> Option<f64> {
        self.as_f64()
    }

    fn boolean(&self) -> Option<bool> {
        self.as_bool()
    }

    fn string(&self) -> Option<String> {
        self.as_string()
    }

    fn items(&self) -> Option<Vec<JsValue>> {
        self.dyn_ref::<js_sys::Array>().map(|a| a.iter().collect())
    }

    fn entries(&self) -> Option<Vec<(String, JsValue)>> {
        let e = entries_of(self);
        let pairs = e.dyn_ref::<js_sys::Array>()?;
        Some(
            pairs
                .iter()
                .filter_map(|pair| {
                    let pair: js_sys::Array = pair.unchecked_into();
                    pair.get(0).as_string().map(|k| (k, pair.get(1)))
                })
                .collect(),
        )
    }

    fn keys(&self) -> Vec<String> {
        if !JsValue::is_object(self) {
            return Vec::new();
        }
        js_sys::Object::keys(self.unchecked_ref::<js_sys::Object>())
            .iter()
            .filter_map(|k| k.as_string())
            .collect()
    }

    fn to_json(&self) -> std::result::Result<serde_json::Value, String> {
        serde_wasm_bindgen::from_value(self.clone()).map_err(|e| e.to_string())
    }

    fn to_config(&self) -> crate::Result<Config> {
        config_arg(self)
    }

    fn json_text(&self) -> Option<String> {
        js_sys::JSON::stringify(self).ok().map(String::from)
    }
}
