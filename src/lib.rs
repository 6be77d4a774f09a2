//! # context-compaction
//!
//! The conversation-compaction engine of an AI coding agent: token accounting, thresholds,
//! media stripping, micro-compaction, prompt-too-long retry and Claude Code transcripts.
//!
//! The core is plain Rust and carries every decision. It reads conversations through
//! [`model::view::ConversationView`] and answers with [`model::view::Edit`]s, so the same logic
//! runs natively on the typed [`model::messages::Message`] model and, in WebAssembly, directly
//! on the caller's JavaScript objects (see `bindings`, compiled only for `wasm32`).
//!
//! ## Layers
//!
//! Each folder is one layer; a layer uses only the layers above it in this list (checked by
//! `tests/layers.rs`):
//!
//! 1. [`model`]: messages, the conversation view and its edits, configuration, errors, hashing.
//! 2. [`measure`]: token accounting and the thresholds derived from a model's window.
//! 3. [`transforms`]: pure rewrites and readings of a conversation: stripping, micro-compaction,
//!    prompt-too-long truncation, the boundary, restoration, session-memory cuts, API context
//!    management, the Messages API view and Claude Code transcripts.
//! 4. [`summarize`]: the summary request and its answer, the offline summarizer, the facts a
//!    conversation holds and the loss report built from them.
//! 5. [`drive`]: everything that runs over an [`drive::env::Environment`] (the outside world):
//!    the compaction pipeline, automatic and reactive compaction, the stateful session, preview.
//! 6. [`simulate`]: replays a recorded session under compaction policies through a model of
//!    the provider's prompt cache, and reports what each would have cost.
//!
//! `bindings` (wasm32 only) converts JavaScript values and callbacks to and from these types and
//! decides nothing.
//!
//! See `SPEC.md` (shared with the project) for the behaviour each module implements.

#![warn(missing_docs)]
// Hot per-call paths are built for speed inside a crate built for size, where the package's
// toolchain allows it (scripts/toolchain.sh sets `cc_speed`; docs/size.md).
#![cfg_attr(cc_speed, feature(optimize_attribute))]

pub mod drive;
pub mod measure;
pub mod model;
pub mod simulate;
pub mod summarize;
pub mod transforms;

#[cfg(target_arch = "wasm32")]
mod bindings;

pub use model::error::{Error, ErrorCode, Result};
pub use model::messages::{Block, Content, Kind, Message};
