//! Summarizing in parts (`context.summarizeInParts`) on the shared Claude Code sessions, with
//! a summarizer whose window is a quarter of the conversation: it refuses a longer request
//! with the API's prompt-too-long answer and otherwise answers with the offline summarizer, so
//! its summary names what it was shown. In parts, every file and user message of the session
//! is named and the loss report is empty; today's path (dropping the oldest rounds) names
//! only what survived the drop.

use std::path::PathBuf;

use context_compaction::drive::env::CallError;
use context_compaction::drive::parts::PART_INSTRUCTION;
use context_compaction::drive::pipeline::{compact_conversation, CompactContext, CompactOptions};
use context_compaction::drive::retry::RetryPolicy;
use context_compaction::measure::tokens::token_count_with_estimation;
use context_compaction::model::config::Config;
use context_compaction::model::error::ErrorCode;
use context_compaction::model::messages::Message;
use context_compaction::summarize::facts::extract_facts;
use context_compaction::summarize::loss::loss_report;
use context_compaction::summarize::offline::summarize_request;
use context_compaction::summarize::summary::{summary_max_tokens, SummaryResponse};
use context_compaction::transforms::transcript::parse_transcript;
use context_compaction_test_support::env::{block_on, Scripted};
use context_compaction_test_support::oracle::check_api;

const MODEL: &str = "claude-opus-4-6";

fn load(name: &str) -> Vec<Message> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/transcripts")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
    parse_transcript(&text).unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

/// The sessions as conversations to compact: the long one up to its recorded compaction
/// (what Claude Code summarized), the others whole.
fn sessions() -> Vec<(&'static str, Vec<Message>)> {
    let long = load("cc_long_autocompact_4d5611e5.jsonl");
    let b = long.iter().position(Message::is_compact_boundary).unwrap();
    vec![
        ("long, before its compaction", long[..b].to_vec()),
        ("image", load("cc_image_9e953218.jsonl")),
    ]
}

/// Tokens of a request body as the test summarizer counts them (its own rough count).
fn input_tokens(request: &serde_json::Value) -> u64 {
    (request.to_string().encode_utf16().count() as u64).div_ceil(4)
}

/// A summarizer with an input window of `window` tokens: longer requests get the API's
/// prompt-too-long answer; others the offline summary of what they hold.
fn quarter_summarizer(window: u64) -> Scripted {
    Scripted::new(Box::new(move |req, _| {
        let body = serde_json::to_value(req).unwrap();
        let input = input_tokens(&body);
        if input > window {
            return Err(CallError {
                status: Some(400),
                message: format!(
                    r#"400 {{"type":"error","error":{{"type":"invalid_request_error","message":"prompt is too long: {input} tokens > {window} maximum"}}}}"#
                ),
                ..Default::default()
            });
        }
        Ok(SummaryResponse {
            // As much as the request allows a model to write (its `max_tokens`).
            text: summarize_request(&body, u64::MAX),
            stop_reason: Some("end_turn".into()),
            ..Default::default()
        })
    }))
}

fn context(in_parts: bool, config: Config) -> CompactContext {
    CompactContext {
        model: MODEL.into(),
        config,
        summarize_in_parts: in_parts,
        ..Default::default()
    }
}

fn options() -> CompactOptions {
    CompactOptions {
        retry: RetryPolicy::with_base_ms(1),
        ..Default::default()
    }
}

/// The window of the summarizer: a quarter of the conversation's tokens.
fn quarter(conv: &[Message]) -> u64 {
    token_count_with_estimation(conv).unwrap().total / 4
}

#[test]
fn in_parts_every_file_and_user_message_is_named() {
    for (name, conv) in sessions() {
        let facts = extract_facts(&conv);
        assert!(
            facts.files.len() > 5 && facts.user_messages.len() > 1,
            "{name}"
        );
        let window = quarter(&conv);
        // Learnt from the prompt-too-long answers, and known up front from the config.
        let up_front = Config {
            summary_context_window: Some((window + summary_max_tokens(MODEL)) as f64),
            ..Default::default()
        };
        for (how, config) in [("learnt", Config::default()), ("up front", up_front)] {
            let env = quarter_summarizer(window);
            let r = block_on(compact_conversation(
                &conv,
                &context(true, config),
                &options(),
                &env,
            ))
            .unwrap_or_else(|e| panic!("{name}, {how}: {e:?}"));
            let requests = env.requests.borrow();
            let answered: Vec<_> = requests
                .iter()
                .filter(|q| input_tokens(&serde_json::to_value(q).unwrap()) <= window)
                .collect();
            println!(
                "{name} ({how}): window {window}, {} requests, {} parts, {} refused; summary {} chars; {} files, {} user messages",
                requests.len(),
                r.summary_parts,
                requests.len() - answered.len(),
                r.summary.len(),
                facts.files.len(),
                facts.user_messages.len()
            );
            // The conversation in one request would not fit: at least two parts.
            let whole =
                context_compaction::summarize::summary::build_summary_request(MODEL, &conv, &[]);
            assert!(input_tokens(&serde_json::to_value(&whole).unwrap()) > window);
            assert!(
                r.summary_parts >= 2,
                "{name}, {how}: {} parts",
                r.summary_parts
            );
            assert_eq!(answered.len() as u32, r.summary_parts, "{name}, {how}");
            if how == "up front" {
                assert_eq!(
                    requests.len(),
                    answered.len(),
                    "{name}: no refusal when known"
                );
            }
            // Every part after the first starts with the summary so far.
            for q in &answered[1..] {
                let messages = q.messages_json();
                let first = messages[0]["content"][0]["text"].as_str().unwrap();
                assert!(
                    first.contains("<summary>") || first.contains("1. Primary"),
                    "{first:.200}"
                );
                assert!(messages.to_string_lossy_contains(PART_INSTRUCTION));
            }
            assert!(
                r.loss_report.is_empty(),
                "{name}, {how}: {:?}",
                r.loss_report
            );
            // The report of the pipeline is the report over the whole conversation.
            assert_eq!(loss_report(&conv, &r.summary), r.loss_report);
            for f in &facts.files {
                let base = f.path.rsplit('/').next().unwrap();
                assert!(r.summary.contains(base), "{name}: {}", f.path);
            }
            let out = r.post_compact_messages(&conv);
            let values: Vec<_> = out.iter().map(Message::to_value).collect();
            check_api(&values).unwrap();
        }
    }
}

#[test]
fn todays_path_names_only_what_survived_the_truncation() {
    for (name, conv) in sessions() {
        let window = quarter(&conv);
        let env = quarter_summarizer(window);
        let r = block_on(compact_conversation(
            &conv,
            &context(false, Config::default()),
            &options(),
            &env,
        ));
        match r {
            Ok(r) => {
                let facts = extract_facts(&conv);
                println!(
                    "{name} (truncation): {} prompt-too-long retries; loss: {} of {} files, {} of {} user messages, {} errors",
                    r.ptl_retries,
                    r.loss_report.files.len(),
                    facts.files.len(),
                    r.loss_report.user_messages.len(),
                    facts.user_messages.len(),
                    r.loss_report.errors.len()
                );
                assert!(r.ptl_retries >= 1);
                assert!(
                    !r.loss_report.is_empty(),
                    "{name}: dropping rounds loses them"
                );
                assert_eq!(r.summary_parts, 1);
            }
            Err(e) => {
                println!("{name} (truncation): failed: {}", e.error.message);
                assert_eq!(e.error.code, ErrorCode::PromptTooLong, "{name}");
            }
        }
    }
}

/// A conversation of `rounds` plain rounds, each about 270 estimated tokens.
fn plain_rounds(rounds: usize) -> Vec<Message> {
    let values: Vec<serde_json::Value> = (0..rounds)
        .flat_map(|i| {
            [
                serde_json::json!({"role": "user", "content": format!("question {i} {}", "x".repeat(500))}),
                serde_json::json!({"role": "assistant", "content": format!("answer {i} {}", "y".repeat(500))}),
            ]
        })
        .collect();
    Message::parse_all(serde_json::Value::Array(values)).unwrap()
}

/// A small summary window (an 8K or 16K summary model, `config.summaryContextWindow`): every
/// part asks for no more output than its window leaves, and the parts fill the window's room
/// for the request, so the number of calls follows the conversation's size over the window
/// (before: 1,001 calls of ~900 tokens for 1,000 rounds, each asking `max_tokens` 20,000).
#[test]
fn a_small_summary_window_is_filled_and_never_asked_beyond() {
    let conv = plain_rounds(1_000);
    let total = token_count_with_estimation(conv.as_slice()).unwrap().total;
    for window in [8_192u64, 16_384, 32_768] {
        let env = Scripted::new(Box::new(move |req, _| {
            let input = input_tokens(&serde_json::to_value(req).unwrap());
            assert!(
                input + req.max_tokens <= window,
                "window {window}: {input} + {} tokens asked",
                req.max_tokens
            );
            Ok(SummaryResponse {
                text: format!("<summary>{}</summary>", "sum ".repeat(50)),
                stop_reason: Some("end_turn".into()),
                ..Default::default()
            })
        }));
        let config = Config {
            summary_context_window: Some(window as f64),
            ..Default::default()
        };
        let r = block_on(compact_conversation(
            &conv,
            &context(true, config),
            &options(),
            &env,
        ))
        .unwrap_or_else(|e| panic!("window {window}: {e:?}"));
        let requests = env.requests.borrow();
        let reserve = context_compaction::summarize::summary::summary_output_reserve(
            summary_max_tokens(MODEL),
            window,
        );
        // The conversation's request over the room each part has for it: the window less
        // the summary's reserve, the prompt and the summary so far; one part to spare.
        let body = |m: &[Message]| {
            let q = context_compaction::summarize::summary::build_summary_request(MODEL, m, &[]);
            input_tokens(&serde_json::to_value(&q).unwrap())
        };
        let prompt = body(&conv[..1]) + 100;
        let room = window - reserve - prompt;
        let most = (body(&conv) - prompt).div_ceil(room) + 1;
        println!(
            "window {window}: {total} tokens in {} calls (at most {most}), max_tokens {:?}",
            requests.len(),
            requests.iter().map(|q| q.max_tokens).min()
        );
        assert_eq!(requests.len() as u32, r.summary_parts);
        assert!(
            (requests.len() as u64) <= most,
            "window {window}: {} calls",
            requests.len()
        );
        assert!(requests.iter().all(|q| q.max_tokens >= reserve));
        assert_eq!(r.ptl_retries, 0, "window {window}");
    }
}

/// A conversation whose usage runs 1.5 times its estimate (dense code): the parts are cut to
/// the window in the estimate's measure, so none is refused by the model's count (before:
/// parts cut by the estimate alone, each refused as too long first).
#[test]
fn parts_are_cut_by_the_ratio_learned() {
    use context_compaction::measure::calibration::{Calibration, Observation};
    let conv = plain_rounds(400);
    let window = 32_768u64;
    let seen = [(10_000, 20_000), (30_000, 50_000), (60_000, 95_000)]
        .map(|(estimated, real)| Observation { estimated, real });
    let env = Scripted::new(Box::new(move |req, _| {
        let real = input_tokens(&serde_json::to_value(req).unwrap()) * 3 / 2;
        if real + req.max_tokens > window {
            return Err(CallError {
                status: Some(400),
                message: format!(
                    "prompt is too long: {} tokens > {window} maximum",
                    real + req.max_tokens
                ),
                ..Default::default()
            });
        }
        Ok(SummaryResponse {
            text: format!("<summary>{}</summary>", "sum ".repeat(50)),
            stop_reason: Some("end_turn".into()),
            ..Default::default()
        })
    }));
    let config = Config {
        summary_context_window: Some(window as f64),
        ..Default::default()
    };
    let ctx = CompactContext {
        calibration: Some(Calibration::from_observations(seen)),
        ..context(true, config)
    };
    let r = block_on(compact_conversation(&conv, &ctx, &options(), &env)).unwrap();
    assert!(r.summary_parts > 1, "{} parts", r.summary_parts);
    assert_eq!(r.ptl_retries, 0, "a part was refused as too long");
    assert_eq!(env.requests.borrow().len() as u32, r.summary_parts);
}

/// Without parts, a small summary window keeps as many of the latest rounds as it holds
/// besides the summary's reserve, and asks for what it leaves as `max_tokens` (before: a
/// reserve of 20,000 larger than the window itself left room for the last round only).
#[test]
fn without_parts_a_small_summary_window_keeps_what_it_holds() {
    let conv = plain_rounds(200);
    for window in [8_192u64, 16_384] {
        let env = Scripted::new(Box::new(move |req, _| {
            let input = input_tokens(&serde_json::to_value(req).unwrap());
            assert!(
                input + req.max_tokens <= window,
                "{input} + {}",
                req.max_tokens
            );
            Ok(SummaryResponse {
                text: "<summary>short</summary>".into(),
                stop_reason: Some("end_turn".into()),
                ..Default::default()
            })
        }));
        let config = Config {
            summary_context_window: Some(window as f64),
            ..Default::default()
        };
        block_on(compact_conversation(
            &conv,
            &context(false, config),
            &options(),
            &env,
        ))
        .unwrap_or_else(|e| panic!("window {window}: {e:?}"));
        let requests = env.requests.borrow();
        assert_eq!(requests.len(), 1);
        let sent = serde_json::to_string(&requests[0]).unwrap();
        let rounds = sent.matches("question ").count() as u64;
        // Each round renders to about 287 tokens: the window less the reserve (a quarter)
        // and the prompt (about 650) holds all but one of as many as fit.
        println!(
            "window {window}: {rounds} rounds sent, max_tokens {}",
            requests[0].max_tokens
        );
        let fit = (window * 3 / 4 - 700) / 290;
        assert!(
            rounds >= fit - 1,
            "window {window}: {rounds} rounds, {fit} fit"
        );
    }
}

/// `Vec<Value>` search helper.
trait ContainsText {
    fn to_string_lossy_contains(&self, needle: &str) -> bool;
}

impl ContainsText for Vec<serde_json::Value> {
    fn to_string_lossy_contains(&self, needle: &str) -> bool {
        self.iter()
            .any(|v| v.to_string().contains(&needle.replace('"', "\\\"")))
    }
}
