//! `simulateSession`: the simulator (crate::simulate) for JavaScript. Converts the session
//! and the options, calls the core, converts the report back.

use wasm_bindgen::prelude::*;

use super::async_exports::messages_for_compaction;
use super::convert::*;
use crate::model::error::Error;
use crate::simulate::{simulate, SimulateOptions};

/// `simulateSession(linesOrText, options?)`: replays a recorded session (the JSONL text of
/// a Claude Code session file, or its parsed lines) request by request under compaction
/// policies, through a model of the provider's prompt cache, and reports per policy the
/// requests, peak and mean context, compactions, tokens by billing class, cost, time
/// blocked on summaries and what the summaries lose; with the recorded usage, also how
/// well the model reproduces it (`calibration`).
#[wasm_bindgen(js_name = simulateSession, unchecked_return_type = "SimulationReport")]
pub fn simulate_session(
    #[wasm_bindgen(unchecked_param_type = "string | readonly TranscriptLine[]")] session: JsValue,
    #[wasm_bindgen(unchecked_optional_param_type = "SimulateOptions | null")] options: JsValue,
) -> JsResult<JsValue> {
    let messages = if session.is_string() {
        // Split and parsed by the JS engine, as `parseTranscript` does (a lone-surrogate
        // escape, a number beyond f64 such as 1e400: valid JSON, read as the engine reads it),
        // then read as the lines `parseTranscript` returns would be.
        let lines = super::exports::transcript_lines(&session)?;
        js(messages_for_compaction(
            &lines,
            None,
            super::convert::Reading::Whole,
        ))?
        .typed
    } else if js(is_array_or_read_error(&session))? {
        js(messages_for_compaction(
            &session,
            None,
            super::convert::Reading::Whole,
        ))?
        .typed
    } else {
        return Err(js_error(Error::invalid_argument(
            "session must be the JSONL text of a session file or an array of its lines",
        )));
    };
    let opts = if options.is_undefined() || options.is_null() {
        SimulateOptions::default()
    } else {
        js(options_json(&options, "options").and_then(|v| SimulateOptions::from_json(&v)))?
    };
    let report = js(simulate(&messages, &opts))?;
    to_js(&report)
}
