//! Test support for `context-compaction`, shared by the integration tests (`tests/*.rs`) and
//! the fuzz targets (`fuzz/`):
//!
//! * [`model`]: one conversation model (text, thinking, tool pairs, server tools, media,
//!   split responses, usage variants, noise lines, boundaries, damage) with `arbitrary`
//!   impls for the fuzz targets;
//! * [`render`]: that model rendered as Claude Code transcript lines or Anthropic API
//!   messages, in a minimal or a Claude Code style;
//! * [`strategies`]: proptest strategies over the model;
//! * [`oracle`]: one oracle of the Messages API rules, independent of the library;
//! * [`env`]: one scripted `Environment` and one `block_on`;
//! * [`typed`]: checks over the library's typed messages, and the fuzz targets' JSON
//!   generator.

pub mod env;
pub mod model;
pub mod oracle;
pub mod render;
pub mod strategies;
pub mod typed;

pub use env::{block_on, ptl_error, summary_answer, Scripted};
pub use model::*;
pub use oracle::{check_api, check_thinking, sent_view};
