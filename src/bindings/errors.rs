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

/// A core error as a `ContextCompactionError` with its stable `code`.
pub fn to_js_error(e: &Error) -> JsValue {
    coded_error(&e.message, e.code.as_str())
}

/// `errorCodes()`: every `error.code` the library can report, in declaration order.
#[wasm_bindgen(js_name = errorCodes, unchecked_return_type = "ErrorCode[]")]
pub fn error_codes() -> Array {
    ErrorCode::ALL
        .iter()
        .map(|c| JsValue::from_str(c.as_str()))
        .collect()
}
