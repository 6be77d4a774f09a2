//! The WebAssembly bindings: the only code that knows about JavaScript. It converts
//! arguments, reads the caller's messages through [`js_view::JsConversation`] (the core's
//! view implemented over JS objects), calls the core, and applies the core's edits to copies
//! of the caller's objects.
//!
//! The exports are split over three modules by Cargo features (`base`, `extra`, `count`; see
//! Cargo.toml): a build with one of them leaves out the others' exports, and the helpers only
//! those exports use are then unused. `count` is a subset of `base` (the exports gated
//! `any(feature = "base", feature = "count")`).
#![cfg_attr(
    not(all(feature = "base", feature = "extra")),
    allow(dead_code, unused_imports)
)]

mod async_exports;
#[cfg(feature = "base")]
mod compactor;
mod convert;
mod env;
mod errors;
mod exports;
#[cfg(any(feature = "base", feature = "extra"))]
mod growth;
mod js_view;
#[cfg(feature = "extra")]
mod simulate;
#[cfg(test)]
mod wasm_tests;
