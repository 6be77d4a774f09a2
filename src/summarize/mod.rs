//! Layer 4, summarizing: the summary request sent to a model and its answer, the facts a
//! conversation holds, the embedded offline summarizer, and the loss report. Uses the layers
//! below it.

pub mod facts;
pub mod loss;
pub mod offline;
pub mod offline_answer;
pub mod summary;
