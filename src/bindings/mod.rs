//! The WebAssembly bindings: the only code that knows about JavaScript. It converts
//! arguments, reads the caller's messages through [`js_view::JsConversation`] (the core's
//! view implemented over JS objects), calls the core, and applies the core's edits to copies
//! of the caller's objects.

mod async_exports;
mod compactor;
mod convert;
mod env;
mod errors;
mod exports;
mod js_view;
mod simulate;
#[cfg(test)]
mod wasm_tests;
