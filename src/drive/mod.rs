//! Layer 5, driving: the asynchronous compaction flows, run over an [`env::Environment`] that
//! stands for the outside world (the summarizer, files, hooks, progress, time). Uses every
//! layer below it.

pub mod answers;
pub mod api_compaction;
pub mod autocompact;
pub mod constants;
pub mod env;
pub mod failure;
pub mod options;
pub mod parts;
pub mod pinned;
pub mod pipeline;
pub mod preemptive;
pub mod preview;
pub mod reactive;
pub mod retry;
pub mod session;
pub mod session_memory;
pub mod snapshot;
pub mod summary_call;
