//! The JS side of [`crate::model::error::Error`]: the `ContextCompactionError` class every
//! coded error is an instance of (src/bindings/js_error.js, exported by the package), and the
//! list of codes at run time.

use js_sys::Array;
use wasm_bindgen::prelude::*;

use crate::model::error::{Error, ErrorCode};

#[wasm_bindgen(module = "/src/bindings/js_error.js")]
extern "C" {
    #[wasm_bindgen(js_name = codedError)]
    fn coded_error(message: &str, code: &str) -> JsValue;
}

thread_local! {
    /// The caller's own error behind the next error converted (see [`set_cause`]).
    static CAUSE: std::cell::RefCell<Option<JsValue>> = const { std::cell::RefCell::new(None) };
}

/// Keeps `cause` (what the caller's object or callback threw) for the next error converted
/// by [`to_js_error`], which carries it as its `cause`.
pub fn set_cause(cause: JsValue) {
    CAUSE.with(|c| *c.borrow_mut() = Some(cause));
}

/// What a thrown value says: an `Error`'s message, a thrown string, else that it was
/// something else.
pub fn thrown_words(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .and_then(|x| x.message().as_string())
        .or_else(|| e.as_string())
        .unwrap_or_else(|| "a non-Error value".into())
}

/// The `INVALID_ARGUMENT` error of reading `key` of the caller's options object `what` when
/// that read threw `e` (a getter, a `Proxy`): `e` becomes the JS error's `cause`.
#[cfg(any(feature = "base", feature = "extra"))]
#[cold]
#[inline(never)]
pub fn read_threw(what: &str, key: &str, e: JsValue) -> Error {
    let why = thrown_words(&e);
    set_cause(e);
    Error::invalid_argument(format!("{what}: reading `{key}` threw: {why}"))
}

/// A core error as a `ContextCompactionError` with its stable `code` (and the `cause` kept
/// by [`set_cause`], if any).
pub fn to_js_error(e: &Error) -> JsValue {
    let out = coded_error(&e.message, e.code.as_str());
    if let Some(cause) = CAUSE.with(|c| c.borrow_mut().take()) {
        let _ = js_sys::Reflect::set(&out, &"cause".into(), &cause);
    }
    out
}

/// `errorCodes()`: every `error.code` the library can report, in declaration order.
#[cfg(any(feature = "base", feature = "count"))]
#[wasm_bindgen(js_name = errorCodes, unchecked_return_type = "ErrorCode[]")]
pub fn error_codes() -> Array {
    ErrorCode::ALL
        .iter()
        .map(|c| JsValue::from_str(c.as_str()))
        .collect()
}
