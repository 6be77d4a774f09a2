//! Layer 3, transforms: synchronous readings and rewrites of a conversation, each deciding
//! [`crate::model::view::Edit`]s or building new messages. Uses [`crate::model`] and
//! [`crate::measure`].

pub mod boundary;
pub mod context_management;
pub mod messages_api;
pub mod microcompact;
pub mod ptl;
pub mod restore;
pub mod session_memory;
pub mod strip;
#[cfg(test)]
mod test_fixtures;
pub mod transcript;
