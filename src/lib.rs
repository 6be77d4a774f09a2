//! # context-compaction
//!
//! The conversation-compaction engine of an AI coding agent: token accounting, thresholds,
//! media stripping, micro-compaction, prompt-too-long retry and Claude Code transcripts.
//!
//! The modules below are plain Rust and carry every decision. They read conversations
//! through [`view::ConversationView`] and answer with [`view::Edit`]s, so the same logic runs
//! natively on the typed [`messages::Message`] model and, in WebAssembly, directly on the
//! caller's JavaScript objects (see `bindings`, compiled only for `wasm32`).
//!
//! See `SPEC.md` (shared with the project) for the behaviour each module implements.

#![warn(missing_docs)]

pub mod api_view;
pub mod autocompact;
pub mod boundary;
pub mod config;
pub mod context_management;
pub mod env;
pub mod error;
pub mod hash;
pub mod loss;
pub mod messages;
pub mod microcompact;
pub mod offline;
pub mod pipeline;
pub mod preview;
pub mod reactive;
pub mod restore;
pub mod retry;
pub mod session_memory;
pub mod strip;
pub mod summary;
pub mod thresholds;
pub mod tokens;
pub mod transcript;
pub mod view;

#[cfg(target_arch = "wasm32")]
mod bindings;

pub use error::{Error, ErrorCode, Result};
pub use messages::{Block, Content, Kind, Message};
