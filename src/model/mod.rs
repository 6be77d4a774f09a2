//! Layer 1, the model: what a conversation is and how the core reads and edits it. Depends on
//! nothing else in the crate.

pub mod config;
pub mod direct;
pub mod error;
pub mod hash;
pub mod messages;
pub mod names;
pub mod number;
pub mod order;
pub mod shape;
pub mod swar;
pub mod view;
