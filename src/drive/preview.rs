//! `previewCompaction`: what a full compaction would do now, without calling any model.
//!
//! [`preview`] runs the decisions of a compaction (SPEC §7, §9, §10) on the conversation as
//! it is and reports them: the context size now and the threshold (with the window it derives
//! from and where that window comes from), what micro-compaction would clear, which files and
//! skills would be restored and at what size, and estimates of the summary and of the context
//! after compaction. The summary size is the size of the
//! embedded offline summary ([`crate::summarize::offline`]) of the part that would be summarized, capped
//! at the summary request's `max_tokens`: a model's summary is usually of the same order,
//! and never larger than that cap.

use std::borrow::Cow;

use serde::Serialize;

use crate::drive::pipeline::CompactContext;
use crate::measure::thresholds::{auto_compact_threshold, context_window, ContextWindowSource};
use crate::measure::tokens::{
    active_start, text_tokens_counted, token_count_counted, CountedMessages, TextCounter,
};
use crate::model::error::Result;
use crate::model::messages::Message;
use crate::model::view::apply_edits;
use crate::summarize::facts::extract_facts;
use crate::summarize::offline::{summarize_facts, DEFAULT_BUDGET_TOKENS};
use crate::summarize::summary;
use crate::transforms::microcompact::{micro_compact, MicroCompactOptions};
use crate::transforms::restore;
use crate::transforms::strip;

/// Estimated tokens of the wrapping of one context attachment (plan, plan mode, tool and
/// agent announcements, MCP instructions, background agents) around its variable text.
pub const CONTEXT_ATTACHMENT_OVERHEAD_TOKENS: u64 = 30;

/// What micro-compaction would clear (SPEC §10, default options).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MicroCompactPreview {
    /// Estimated tokens freed (padded by 4/3, as micro-compaction reports them).
    pub tokens_freed: u64,
    /// `tool_use_id`s of the results that would be cleared, in conversation order.
    pub cleared_tool_use_ids: Vec<String>,
}

/// A file that would be restored after compaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoredFilePreview {
    /// The file's path.
    pub path: String,
    /// Estimated tokens it would take (0 when its content is unknown).
    pub tokens: u64,
    /// Whether it would be cut to fit.
    pub truncated: bool,
    /// Whether the read-file state holds its content. When it does not, the compaction reads
    /// it with the `readFile` callback and its size is not known in advance.
    pub content_known: bool,
}

/// A skill that would be restored after compaction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RestoredSkillPreview {
    /// The skill's name.
    pub name: String,
    /// Estimated tokens it would take.
    pub tokens: u64,
    /// Whether it would be cut to fit.
    pub truncated: bool,
}

/// `previewCompaction`'s answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    /// Context size now (`tokenCountWithEstimation`).
    pub tokens_before: u64,
    /// Estimated context size after a full compaction: the summary message, the restored
    /// files and skills, and the re-announced context (plan, tools, agents, MCP
    /// instructions, background agents), with what the usage seen teaches (the system prompt
    /// and tools the next request also sends; see [`crate::measure::calibration`]).
    /// SessionStart hook output is not known in advance.
    pub estimated_tokens_after: u64,
    /// The auto-compact threshold of the model and config.
    pub threshold: u64,
    /// Whether `tokens_before` is at or above `threshold`.
    pub is_above_threshold: bool,
    /// The context window the threshold derives from.
    pub context_window: u64,
    /// Where that window comes from (`default`: the model is not in the table).
    pub context_window_source: ContextWindowSource,
    /// What micro-compaction would clear.
    pub micro_compact: MicroCompactPreview,
    /// Files that would be restored, most recently read first.
    pub restored_files: Vec<RestoredFilePreview>,
    /// Skills that would be restored.
    pub restored_skills: Vec<RestoredSkillPreview>,
    /// Estimated size of the summary (the offline summary's size, capped at the summary
    /// request's `max_tokens`).
    pub estimated_summary_tokens: u64,
}

/// Tokens of the context announcements a compaction re-attaches (their text plus
/// [`CONTEXT_ATTACHMENT_OVERHEAD_TOKENS`] each), in the tokens of `counter` when given.
fn context_parts_tokens(ctx: &CompactContext, counter: Option<&dyn TextCounter>) -> Result<u64> {
    let part = |text: &str| -> Result<u64> {
        Ok(text_tokens_counted(text, counter)? + CONTEXT_ATTACHMENT_OVERHEAD_TOKENS)
    };
    let mut total = 0;
    for a in &ctx.async_agents {
        total += part(&format!("{} {} {}", a.description, a.id, a.status))?;
    }
    if let Some(plan) = ctx.plan.as_deref().filter(|p| !p.trim().is_empty()) {
        total += part(plan)?;
    }
    if ctx.plan_mode {
        total += part("")?;
    }
    if !ctx.discovered_tools.is_empty() {
        total += part(&ctx.discovered_tools.join(", "))?;
    }
    if !ctx.agents.is_empty() {
        total += part(&ctx.agents.join("\n"))?;
    }
    for m in &ctx.mcp_instructions {
        total += part(m)?;
    }
    Ok(total)
}

/// `previewCompaction(messages, context)`: what a full compaction would do now, with no
/// model call and no callback. Files are measured with the contents of
/// `ctx.read_file_state` (files without content are listed with 0 tokens and
/// `content_known: false`).
///
/// With the caller's tokenizer (`counter`, its `tokenCounter`) every number is in its tokens,
/// as a compaction with the same context reports them; without one, in the estimate's.
pub fn preview(
    messages: &[Message],
    ctx: &CompactContext,
    counter: Option<&dyn TextCounter>,
) -> Result<Preview> {
    let tokens_before = ctx.pre_count(messages)?;
    let threshold = auto_compact_threshold(&ctx.model, &ctx.config);
    let window = context_window(&ctx.model, &ctx.config);
    let mc = match counter {
        Some(c) => micro_compact(
            &CountedMessages::new(messages, c),
            &MicroCompactOptions::default(),
        )?,
        None => micro_compact(messages, &MicroCompactOptions::default())?,
    };

    // The part a compaction would summarize (SPEC §7 steps 2–3).
    let start = active_start(messages)?;
    let active = &messages[start..];
    let edits = strip::strip_images(active)?;
    // Nothing to strip (the common case): the messages themselves, not a copy.
    let to_summarize: Cow<'_, [Message]> =
        if edits.is_empty() && strip::reinjected_attachments(active)?.is_empty() {
            Cow::Borrowed(active)
        } else {
            Cow::Owned(strip::without_reinjected_attachments(apply_edits(
                active, &edits,
            )?)?)
        };
    let has_conversation = to_summarize.iter().any(crate::drive::pipeline::was_said);
    let summary_model = ctx.summary_model.as_deref().unwrap_or(&ctx.model);
    let max_tokens = summary::summary_max_tokens(summary_model);
    let summary_text = if has_conversation {
        let reply = summarize_facts(
            &extract_facts(&to_summarize),
            &[],
            DEFAULT_BUDGET_TOKENS.min(max_tokens),
        );
        summary::extract_summary(&reply)
    } else {
        String::new()
    };
    let estimated_summary_tokens = text_tokens_counted(&summary_text, counter)?.min(max_tokens);

    // Files (SPEC §9): a full compaction keeps no message, so none is skipped as present.
    let snapshot = &ctx.read_file_state;
    let chosen = restore::select_files(snapshot, &|_| false);
    let known: Vec<(String, String)> = chosen
        .iter()
        .filter_map(|&k| {
            let f = &snapshot[k];
            f.content.clone().map(|c| (f.path.clone(), c))
        })
        .collect();
    // Measured as the compaction measures them: in the caller's tokens when it gave a
    // tokenizer.
    let counted = |text: &str| text_tokens_counted(text, counter);
    let measure = || restore::Measure(counter.map(|_| &counted as &restore::TokensOf<'_>));
    // Within what the compaction would free, as the compaction restores them.
    let size_before = ctx.size_before(messages, counter)?;
    let mut room = size_before
        .estimated
        .saturating_sub(estimated_summary_tokens + 1);
    let budgeted =
        restore::budget_files_measured(known, &restore::FileBudget::within(room), measure())?;
    room = room.saturating_sub(budgeted.iter().map(|f| f.tokens).sum::<u64>());
    let mut restored_files = Vec::new();
    for &k in &chosen {
        let f = &snapshot[k];
        if f.content.is_none() {
            restored_files.push(RestoredFilePreview {
                path: f.path.clone(),
                tokens: 0,
                truncated: false,
                content_known: false,
            });
        } else if let Some(r) = budgeted.iter().find(|r| r.path == f.path) {
            restored_files.push(RestoredFilePreview {
                path: r.path.clone(),
                tokens: r.tokens,
                truncated: r.truncated,
                content_known: true,
            });
        }
    }
    let skills = restore::budget_skills_measured(
        &ctx.invoked_skills,
        &restore::SkillBudget::within(room),
        measure(),
    )?;

    // The compacted context, in the conversation's shape, as the pipeline measures it.
    let transcript = Message::written_as_lines(messages);
    let mut after = Vec::with_capacity(1 + budgeted.len() + skills.len());
    if has_conversation {
        let text = summary::summary_message_text(&summary_text, false, false);
        after.push(summary::summary_message(
            &text,
            transcript,
            "preview-summary",
            "preview-boundary",
            "",
            &Default::default(),
        ));
    }
    for f in &budgeted {
        after.push(restore::file_attachment_message(f, transcript, None));
    }
    for s in &skills {
        after.push(restore::skill_attachment_message(s, transcript, None));
    }
    let estimated =
        token_count_counted(after.as_slice(), counter)?.total + context_parts_tokens(ctx, counter)?;
    // As the compaction reports it: with what the usage seen teaches (system prompt, tools).
    let estimated_tokens_after = size_before.fit.map_or(estimated, |f| f.predict(estimated));

    Ok(Preview {
        tokens_before,
        estimated_tokens_after,
        threshold,
        is_above_threshold: tokens_before >= threshold,
        context_window: window.tokens,
        context_window_source: window.source,
        micro_compact: MicroCompactPreview {
            tokens_freed: mc.tokens_freed,
            cleared_tool_use_ids: mc.cleared_tool_use_ids,
        },
        restored_files,
        restored_skills: skills
            .into_iter()
            .map(|s| RestoredSkillPreview {
                name: s.name,
                tokens: s.tokens,
                truncated: s.truncated,
            })
            .collect(),
        estimated_summary_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::tokens::token_count_with_estimation;
    use crate::model::config::Config;
    use crate::transforms::restore::{FileSnapshot, SkillInfo, POST_COMPACT_MAX_TOKENS_PER_FILE};
    use serde_json::{json, Value};

    fn conversation(n: usize, result_chars: usize) -> Vec<Message> {
        let mut v = vec![
            json!({"role": "user", "content": "Refactor the parser and keep the tests green."}),
        ];
        for i in 0..n {
            v.push(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": format!("t{i}"), "name": "Read", "input": {"file_path": format!("/p/src/f{i}.rs")}}]}));
            v.push(json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{i}"), "content": "x".repeat(result_chars)}]}));
        }
        Message::parse_all(Value::Array(v)).unwrap()
    }

    fn snap(path: &str, content: Option<String>, t: f64) -> FileSnapshot {
        FileSnapshot {
            path: path.into(),
            content,
            timestamp_ms: t,
        }
    }

    fn context() -> CompactContext {
        CompactContext {
            model: "claude-sonnet-4-5".into(),
            read_file_state: vec![
                snap("/p/src/small.rs", Some("fn a() {}\n".repeat(10)), 1.0),
                snap("/p/src/huge.rs", Some("let x = 1;\n".repeat(5_000)), 2.0),
                snap("/p/src/unknown.rs", None, 3.0),
                snap("/p/logo.png", Some("binary".into()), 4.0),
            ],
            invoked_skills: vec![SkillInfo {
                name: "review".into(),
                content: "Check everything.\n".repeat(2_000),
            }],
            plan: Some("1. parse 2. test".into()),
            ..Default::default()
        }
    }

    #[test]
    fn preview_reports_every_decision() {
        let m = conversation(8, 8_000);
        let ctx = context();
        let p = preview(&m, &ctx, None).unwrap();
        assert_eq!(
            p.tokens_before,
            token_count_with_estimation(m.as_slice()).unwrap().total
        );
        assert_eq!(p.threshold, auto_compact_threshold(&ctx.model, &ctx.config));
        assert!(!p.is_above_threshold);
        assert_eq!(
            (p.context_window, p.context_window_source),
            (200_000, ContextWindowSource::Model)
        );
        // Eight compactable results, the five most recent kept.
        assert_eq!(p.micro_compact.cleared_tool_use_ids, vec!["t0", "t1", "t2"]);
        assert!(p.micro_compact.tokens_freed > 3 * 2_000);
        // Most recently read first; the binary file is skipped; unknown content flagged.
        let paths: Vec<&str> = p.restored_files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            vec!["/p/src/unknown.rs", "/p/src/huge.rs", "/p/src/small.rs"]
        );
        assert!(!p.restored_files[0].content_known && p.restored_files[0].tokens == 0);
        assert!(p.restored_files[1].truncated);
        assert!(p.restored_files[1].tokens <= POST_COMPACT_MAX_TOKENS_PER_FILE);
        assert!(!p.restored_files[2].truncated);
        assert_eq!(p.restored_skills.len(), 1);
        assert!(p.restored_skills[0].truncated);
        assert!(p.estimated_summary_tokens > 0);
        let restored: u64 = p.restored_files.iter().map(|f| f.tokens).sum::<u64>()
            + p.restored_skills.iter().map(|s| s.tokens).sum::<u64>();
        assert!(p.estimated_tokens_after > p.estimated_summary_tokens + restored);
        assert!(p.estimated_tokens_after < p.estimated_summary_tokens + restored + 300);
        // Same input, same preview.
        assert_eq!(p, preview(&m, &ctx, None).unwrap());
    }

    #[test]
    fn threshold_crossing_and_summary_cap() {
        let m = conversation(30, 8_000);
        let ctx = CompactContext {
            model: "claude-3-5-haiku".into(),
            config: Config {
                auto_compact_window: Some(60_000.0),
                ..Default::default()
            },
            ..Default::default()
        };
        let p = preview(&m, &ctx, None).unwrap();
        assert!(p.tokens_before > 60_000);
        assert!(p.is_above_threshold);
        assert!(p.estimated_summary_tokens <= summary::summary_max_tokens("claude-3-5-haiku"));
        assert!(p.restored_files.is_empty() && p.restored_skills.is_empty());
        assert!(p.estimated_tokens_after < p.tokens_before);
    }

    #[test]
    fn nothing_to_summarize() {
        let p = preview(&[], &CompactContext::default(), None).unwrap();
        assert_eq!(p.tokens_before, 0);
        assert_eq!(p.estimated_summary_tokens, 0);
        assert_eq!(p.estimated_tokens_after, 0);
    }

    #[test]
    fn serializes_camel_case() {
        let p = preview(&conversation(1, 10), &context(), None).unwrap();
        let v = serde_json::to_value(&p).unwrap();
        for k in [
            "tokensBefore",
            "estimatedTokensAfter",
            "threshold",
            "isAboveThreshold",
            "microCompact",
            "restoredFiles",
            "restoredSkills",
            "estimatedSummaryTokens",
        ] {
            assert!(v.get(k).is_some(), "{k}");
        }
        assert!(v["microCompact"].get("clearedToolUseIds").is_some());
        assert_eq!(v["restoredFiles"][0]["contentKnown"], json!(false));
    }

    #[test]
    fn real_transcript_before_its_compaction() {
        let path = format!(
            "{}/../shared/transcripts/cc_long_autocompact_4d5611e5.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let all = crate::transforms::transcript::parse_transcript(&text).unwrap();
        let before = &all[..753];
        let ctx = CompactContext {
            model: "claude-opus-4-6".into(),
            ..Default::default()
        };
        let p = preview(before, &ctx, None).unwrap();
        println!(
            "tokens before {}, threshold {}, above {}, micro-compaction frees {} ({} results), summary ~{}, after ~{}",
            p.tokens_before,
            p.threshold,
            p.is_above_threshold,
            p.micro_compact.tokens_freed,
            p.micro_compact.cleared_tool_use_ids.len(),
            p.estimated_summary_tokens,
            p.estimated_tokens_after
        );
        assert_eq!(p.threshold, 167_000);
        assert!(p.tokens_before > 160_000);
        assert!(p.is_above_threshold, "Claude Code compacted here too");
        // The summary and no restored file (no read-file state given), plus the system prompt
        // and tools the usage before teaches: Claude Code's next request was 36,081 tokens
        // with its files restored.
        assert!(p.estimated_tokens_after > 29_000 && p.estimated_tokens_after < 40_000);
        assert!(!p.micro_compact.cleared_tool_use_ids.is_empty());
    }

    use crate::measure::tokens::TwoCharsAToken as Dense;

    #[test]
    fn every_number_is_in_the_callers_tokens_when_it_gives_a_tokenizer() {
        let m = conversation(8, 8_000);
        let ctx = context();
        let plain = preview(&m, &ctx, None).unwrap();
        let counted = preview(&m, &ctx, Some(&Dense)).unwrap();
        // The same decisions…
        assert_eq!(
            counted.micro_compact.cleared_tool_use_ids,
            plain.micro_compact.cleared_tool_use_ids
        );
        assert_eq!(counted.restored_files.len(), plain.restored_files.len());
        // …each size in the tokenizer's tokens: about twice the estimate's.
        let about_twice = |a: u64, b: u64| a * 10 >= b * 17 && a * 10 <= b * 23;
        assert!(
            about_twice(
                counted.micro_compact.tokens_freed,
                plain.micro_compact.tokens_freed
            ),
            "{} vs {}",
            counted.micro_compact.tokens_freed,
            plain.micro_compact.tokens_freed
        );
        assert!(about_twice(
            counted.estimated_summary_tokens,
            plain.estimated_summary_tokens
        ));
        let small = |p: &Preview| {
            p.restored_files
                .iter()
                .find(|f| f.path == "/p/src/small.rs")
                .unwrap()
                .tokens
        };
        assert!(about_twice(small(&counted), small(&plain)));
        assert!(counted.estimated_tokens_after > plain.estimated_tokens_after);
    }
}
