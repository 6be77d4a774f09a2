//! Layer 2, measuring: how many tokens a conversation holds and where a model's lines are.
//! Uses only [`crate::model`].

pub mod calibration;
pub mod thresholds;
pub mod tokens;
