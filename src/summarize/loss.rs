//! The loss report: what a summary leaves out of the conversation it replaces.
//!
//! [`loss_report`] reads the files touched, the user messages and the errors of the
//! compacted part (with [`crate::summarize::facts::extract_loss_facts`], the same reading the offline
//! summarizer uses) and keeps those the summary does not mention. [`append_missing`] adds
//! them to the summary as a short list, so that a summary from any model can never silently
//! drop a file the agent edited or a request the user made.
//!
//! "Mentions" is defined so that a faithful summary passes even when it paraphrases, and a
//! summary that leaves an item out is caught (see [`file_mentioned`], [`text_mentioned`],
//! [`error_mentioned`]). Texts are compared [`normalize`]d: lower case, whitespace runs as
//! one space, typographic quotes as plain ones, Markdown emphasis and code marks removed.

use serde::Serialize;

use crate::model::hash::FastSet;
use crate::model::messages::Message;
use crate::summarize::facts::{contains_name, extract_loss_facts, file_name};
use crate::summarize::summary::cut_middle;

/// Characters of a normalized text whose presence counts as a mention of it.
pub const MENTION_PREFIX_CHARS: usize = 60;
/// A user message shorter than this (normalized) is mentioned only when quoted or on a line
/// of its own: short words like "continue" or "yes" appear in any summary.
pub const SHORT_MESSAGE_CHARS: usize = 20;
/// Shortest word counted by the word test.
pub const MIN_WORD_CHARS: usize = 5;

/// What a summary does not mention of the conversation it replaces.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LossReport {
    /// Paths of files read, written or edited that the summary does not name.
    pub files: Vec<String>,
    /// Messages the user wrote that the summary does not mention (full text).
    pub user_messages: Vec<String>,
    /// Errors the summary does not mention, as `source: first telling line`.
    pub errors: Vec<String>,
}

impl LossReport {
    /// Whether nothing is missing.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty() && self.user_messages.is_empty() && self.errors.is_empty()
    }
}

/// Lower case, whitespace runs as one space (trimmed), `“”„` as `"`, `‘’` as `'`, and
/// `` ` `` / `*` removed.
pub fn normalize(text: &str) -> String {
    // Byte by byte where the text is ASCII (most of it); a non-ASCII character is decoded.
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(text.len());
    let mut space = false;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let c = if b.is_ascii() {
            i += 1;
            match b {
                b'`' | b'*' => continue,
                // `char::is_whitespace` of an ASCII character.
                0x09..=0x0D | b' ' => {
                    space = !out.is_empty();
                    continue;
                }
                _ => {}
            }
            if space {
                out.push(b' ');
                space = false;
            }
            out.push(b.to_ascii_lowercase());
            continue;
        } else {
            let c = text[i..].chars().next().unwrap_or_default();
            i += c.len_utf8();
            match c {
                '“' | '”' | '„' => '"',
                '‘' | '’' => '\'',
                c => c,
            }
        };
        if c.is_whitespace() {
            space = !out.is_empty();
            continue;
        }
        if space {
            out.push(b' ');
            space = false;
        }
        let mut buf = [0; 4];
        for l in c.to_lowercase() {
            out.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
        }
    }
    // Whole characters were written: always UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

fn words(norm: &str) -> impl Iterator<Item = &str> {
    norm.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// A summary prepared for many mention tests.
pub struct SummaryIndex<'a> {
    raw: &'a str,
    norm: String,
    words: FastSet<String>,
    lines: FastSet<String>,
}

impl<'a> SummaryIndex<'a> {
    /// Prepares `summary`.
    pub fn new(summary: &'a str) -> SummaryIndex<'a> {
        // The whole text normalized is its lines normalized, the non-empty ones joined by a
        // space (line breaks are whitespace): each line is normalized once, for both.
        let mut norm = String::with_capacity(summary.len());
        let mut lines = FastSet::default();
        for l in summary.lines() {
            let n = normalize(l);
            if n.is_empty() {
                continue;
            }
            let line = strip_list_marker(&n).trim_end_matches(['.', '!', '?', ',', ';', ':']);
            if !line.is_empty() && !lines.contains(line) {
                lines.insert(line.to_string());
            }
            if !norm.is_empty() {
                norm.push(' ');
            }
            norm.push_str(&n);
        }
        // Sized once for the words a text of this length holds (about one per 8 bytes of
        // prose), rather than grown by rehashing as they come.
        let mut words: FastSet<String> =
            FastSet::with_capacity_and_hasher(norm.len() / 8, Default::default());
        for w in self::words(&norm) {
            if !words.contains(w) {
                words.insert(w.to_string());
            }
        }
        SummaryIndex {
            raw: summary,
            norm,
            words,
            lines,
        }
    }
}

/// A normalized line without a leading `- `, `* `, `1. `, `1) ` or `[1] `, and without
/// surrounding quotes.
fn strip_list_marker(line: &str) -> &str {
    let mut l = line.trim_start_matches(['-', '•', ' ']);
    let digits = l.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 && matches!(l.as_bytes().get(digits), Some(b'.') | Some(b')')) {
        l = l[digits + 1..].trim_start();
    } else if l.starts_with('[') {
        if let Some(end) = l.find("] ") {
            if l[1..end].bytes().all(|b| b.is_ascii_digit()) {
                l = &l[end + 2..];
            }
        }
    }
    l.trim_matches(['"', '\''])
}

fn head_chars(s: &str, n: usize) -> &str {
    match s.char_indices().nth(n) {
        Some((i, _)) => &s[..i],
        None => s,
    }
}

/// The word test: at least `min_words` distinct words of [`MIN_WORD_CHARS`] or more letters
/// (the first 30), of which at least two thirds appear in the summary.
fn most_words_present(idx: &SummaryIndex<'_>, norm: &str, min_words: usize) -> bool {
    let mut seen: Vec<&str> = Vec::new();
    for w in words(norm) {
        if w.chars().count() >= MIN_WORD_CHARS && !seen.contains(&w) {
            seen.push(w);
            if seen.len() == 30 {
                break;
            }
        }
    }
    if seen.len() < min_words {
        return false;
    }
    let present = seen.iter().filter(|w| idx.words.contains(**w)).count();
    present * 3 >= seen.len() * 2
}

/// A file is mentioned when its full path appears, or its file name appears with no other
/// file-name character right before it and no letter, digit or `_` right after it
/// ([`contains_name`]: `a.rs` is not found in `data.rs`). File names are compared as
/// written (paths are case-sensitive on most systems).
pub fn file_mentioned(idx: &SummaryIndex<'_>, path: &str) -> bool {
    idx.raw.contains(path) || contains_name(idx.raw, file_name(path))
}

/// A user message is mentioned when, normalized:
/// * it is shorter than [`SHORT_MESSAGE_CHARS`]: it appears in quotes (`"yes"`, `'yes'`),
///   or as a line of its own (list markers, quotes and final punctuation aside);
/// * otherwise: its first [`MENTION_PREFIX_CHARS`] characters appear, or most of its longer
///   words do (at least 4 distinct words of 5+ letters, two thirds of them present — a close
///   paraphrase).
pub fn text_mentioned(idx: &SummaryIndex<'_>, text: &str) -> bool {
    let norm = normalize(text);
    if norm.is_empty() {
        return true;
    }
    if norm.chars().count() < SHORT_MESSAGE_CHARS {
        let bare = norm.trim_end_matches(['.', '!', '?', ',', ';', ':']);
        return ['"', '\'']
            .iter()
            .any(|q| idx.norm.contains(&format!("{q}{norm}{q}")))
            || idx.lines.contains(bare)
            || idx.lines.contains(&norm);
    }
    idx.norm.contains(head_chars(&norm, MENTION_PREFIX_CHARS)) || most_words_present(idx, &norm, 4)
}

/// An error is mentioned when, normalized, the first [`MENTION_PREFIX_CHARS`] characters of
/// its telling line appear, or most of its longer words do (at least 3 distinct words of 5+
/// letters, two thirds of them present). An excerpt without a letter or digit (`*`, `---`)
/// is never mentioned on its own: [`error_entry_mentioned`] then judges it by its source.
pub fn error_mentioned(idx: &SummaryIndex<'_>, excerpt: &str) -> bool {
    normalized_error_mentioned(idx, &normalize(excerpt))
}

/// [`error_mentioned`] of an excerpt already normalized.
fn normalized_error_mentioned(idx: &SummaryIndex<'_>, norm: &str) -> bool {
    has_word(norm)
        && (idx.norm.contains(head_chars(norm, MENTION_PREFIX_CHARS))
            || most_words_present(idx, norm, 3))
}

/// Whether a normalized text holds a letter or a digit.
fn has_word(norm: &str) -> bool {
    norm.chars().any(char::is_alphanumeric)
}

/// An error from `source` (a command, a tool on a file) with the telling line `excerpt` is
/// mentioned when [`error_mentioned`] says so, or — for an excerpt that holds no letter or
/// digit, which says nothing a summary could paraphrase — when the summary has the entry
/// `source: excerpt` exactly as [`append_missing`] writes it (so "`cargo test`: all pass"
/// does not mention "`cargo test`: *").
pub fn error_entry_mentioned(idx: &SummaryIndex<'_>, source: &str, excerpt: &str) -> bool {
    normalized_entry_mentioned(idx, source, excerpt, &normalize(excerpt))
}

/// [`error_entry_mentioned`] with the excerpt's normalized form `norm` already made (the
/// loss report normalizes each excerpt once).
fn normalized_entry_mentioned(
    idx: &SummaryIndex<'_>,
    source: &str,
    excerpt: &str,
    norm: &str,
) -> bool {
    if normalized_error_mentioned(idx, norm) {
        return true;
    }
    !has_word(norm) && idx.raw.contains(&error_entry(source, excerpt))
}

/// How [`loss_report`] lists an error: `source: excerpt`.
fn error_entry(source: &str, excerpt: &str) -> String {
    format!("{source}: {excerpt}")
}

/// The files touched, user messages and errors of `compacted` that `summary` does not
/// mention, each in conversation order, without repeats. Calls the user rejected are not
/// errors here (nothing to fix); sidechain and system lines are not read.
pub fn loss_report(compacted: &[Message], summary: &str) -> LossReport {
    let facts = extract_loss_facts(compacted);
    let idx = SummaryIndex::new(summary);
    let mut report = LossReport::default();
    for f in &facts.files {
        if !file_mentioned(&idx, &f.path) {
            report.files.push(f.path.clone());
        }
    }
    // Repeats are found by hash (a session may hold tens of thousands of user messages).
    let mut listed: FastSet<&str> = FastSet::default();
    for u in &facts.user_messages {
        if !listed.contains(u.text.as_str()) && !text_mentioned(&idx, &u.text) {
            listed.insert(u.text.as_str());
            report.user_messages.push(u.text.clone());
        }
    }
    // Errors are told apart by their excerpt; wordless excerpts (`*`) by their source too.
    let mut seen: FastSet<(&str, &str)> = FastSet::default();
    for e in &facts.errors {
        if e.rejected {
            continue;
        }
        // Each excerpt is normalized once, for both the key and the mention.
        let norm = normalize(&e.excerpt);
        let source = if has_word(&norm) {
            ""
        } else {
            e.source.as_str()
        };
        let key = (source, e.excerpt.as_str());
        if !seen.insert(key) {
            continue;
        }
        if !normalized_entry_mentioned(&idx, &e.source, &e.excerpt, &norm) {
            report.errors.push(error_entry(&e.source, &e.excerpt));
        }
    }
    report
}

/// Heading of the list [`append_missing`] adds.
pub const MISSING_HEADING: &str =
    "Not covered above, listed automatically from the compacted conversation:";

/// Longest user message quoted whole by [`append_missing`] (longer ones are cut in the
/// middle).
pub const MISSING_MESSAGE_CHARS: usize = 600;

/// `summary` followed by the items of `report`, as a short deterministic list: files
/// (paths, comma-separated), user messages (quoted, long ones cut in the middle), errors.
/// Returns `summary` unchanged when nothing is missing.
pub fn append_missing(summary: &str, report: &LossReport) -> String {
    if report.is_empty() {
        return summary.to_string();
    }
    let mut out = summary.trim_end().to_string();
    out.push_str("\n\n");
    out.push_str(MISSING_HEADING);
    if !report.files.is_empty() {
        out.push_str("\n- Files touched: ");
        out.push_str(&report.files.join(", "));
    }
    if !report.user_messages.is_empty() {
        out.push_str("\n- User messages:");
        for m in &report.user_messages {
            let text = cut_middle(m.trim(), MISSING_MESSAGE_CHARS).replace('\n', "\n    ");
            out.push_str(&format!("\n  - \"{text}\""));
        }
    }
    if !report.errors.is_empty() {
        out.push_str("\n- Errors:");
        for e in &report.errors {
            out.push_str(&format!("\n  - {e}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msgs(v: serde_json::Value) -> Vec<Message> {
        Message::parse_all(v).unwrap()
    }

    fn conversation() -> Vec<Message> {
        msgs(json!([
            {"role": "user", "content": "Please add a retry with exponential backoff to the HTTP client in src/net.rs"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "r", "name": "Read", "input": {"file_path": "/repo/src/net.rs"}},
                {"type": "tool_use", "id": "d", "name": "Read", "input": {"file_path": "/repo/src/data.rs"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "r", "content": "fn get() {}"},
                {"type": "tool_result", "tool_use_id": "d", "content": "struct D;"}]},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "b", "name": "Bash", "input": {"command": "cargo build"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "b", "is_error": true,
                 "content": "Exit code 101\nerror[E0425]: cannot find value `delay_ms` in this scope"}]},
            {"role": "user", "content": "yes"}
        ]))
    }

    #[test]
    fn normalization() {
        assert_eq!(
            normalize("  A “quoted”\n\n  `code` **bold** "),
            "a \"quoted\" code bold"
        );
    }

    /// [`normalize`] character by character, as it was first written.
    fn normalize_by_chars(text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut space = false;
        for c in text.chars() {
            let c = match c {
                '“' | '”' | '„' => '"',
                '‘' | '’' => '\'',
                '`' | '*' => continue,
                c => c,
            };
            if c.is_whitespace() {
                space = !out.is_empty();
                continue;
            }
            if space {
                out.push(' ');
                space = false;
            }
            out.extend(c.to_lowercase());
        }
        out
    }

    #[test]
    fn normalization_byte_by_byte_is_normalization_by_characters() {
        let mut pieces: Vec<String> = (0u8..128).map(|b| char::from(b).to_string()).collect();
        for p in [
            "“", "”", "„", "‘", "’", "É", "ß", "İ", "\u{212A}", "\u{85}", "\u{a0}", "\u{2028}",
            "\u{3000}", "Σ", "😀", "中", "\r\n", "  ", "**", "Word", "- item",
        ] {
            pieces.push(p.to_string());
        }
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        for _ in 0..20_000 {
            let mut s = String::new();
            for _ in 0..8 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                s.push_str(&pieces[(seed % pieces.len() as u64) as usize]);
            }
            assert_eq!(normalize(&s), normalize_by_chars(&s), "{s:?}");
            // The index's text, made from its normalized lines, is the text normalized.
            assert_eq!(SummaryIndex::new(&s).norm, normalize_by_chars(&s), "{s:?}");
        }
    }

    #[test]
    fn repeats_are_listed_once_in_first_order_and_mentioned_ones_never() {
        let mut v = Vec::new();
        for i in 0..3_000 {
            // Three distinct requests repeated, one of them in the summary.
            let text = [
                "please run the linter",
                "ship the release notes",
                "mentioned request",
            ][i % 3];
            v.push(json!({"role": "user", "content": text}));
            v.push(json!({"role": "assistant", "content": [
                {"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": "make"}}]}));
            v.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"),
                "is_error": true, "content": format!("error: failure number {}", i % 4)}]}));
        }
        let r = loss_report(&msgs(json!(v)), "Done:\n- mentioned request\n");
        assert_eq!(
            r.user_messages,
            vec!["please run the linter", "ship the release notes"]
        );
        assert_eq!(r.errors.len(), 4, "{:?}", r.errors);
        for (k, e) in r.errors.iter().enumerate() {
            assert!(e.contains(&format!("failure number {k}")), "{e}");
        }
    }

    #[test]
    fn everything_missing_from_an_unrelated_summary() {
        let r = loss_report(&conversation(), "The user and the assistant talked.");
        assert_eq!(r.files, vec!["/repo/src/net.rs", "/repo/src/data.rs"]);
        assert_eq!(r.user_messages.len(), 2);
        assert_eq!(
            r.errors,
            vec!["`cargo build`: error[E0425]: cannot find value `delay_ms` in this scope"]
        );
    }

    #[test]
    fn mentions_by_name_prefix_words_and_quotes() {
        let summary = "Files: net.rs (read) and /repo/src/data.rs.\n\
            The user asked: please add a retry with exponential backoff to the HTTP client...\n\
            Error: cannot find value delay_ms in this scope (fixed later).\n\
            User said \"yes\".";
        let r = loss_report(&conversation(), summary);
        assert!(r.is_empty(), "{r:?}");
    }

    #[test]
    fn file_names_must_stand_alone() {
        let idx = SummaryIndex::new("We changed metadata.rs and bignet.rs_old");
        assert!(!file_mentioned(&idx, "/repo/src/data.rs"));
        assert!(!file_mentioned(&idx, "/repo/src/net.rs"));
        let idx = SummaryIndex::new("See `src/net.rs`: done.");
        assert!(file_mentioned(&idx, "/repo/src/net.rs"));
    }

    #[test]
    fn short_messages_need_quotes_or_their_own_line() {
        let idx = SummaryIndex::new("Continue with the task, yes it works.");
        assert!(!text_mentioned(&idx, "continue"));
        assert!(!text_mentioned(&idx, "yes"));
        let idx = SummaryIndex::new("Messages:\n- \"continue\"\n2. Yes.\n");
        assert!(text_mentioned(&idx, "continue"));
        assert!(text_mentioned(&idx, "yes"));
        let idx = SummaryIndex::new("Messages:\n   [3] continue\n");
        assert!(text_mentioned(&idx, "Continue"));
    }

    #[test]
    fn paraphrase_passes_the_word_test_but_a_different_request_does_not() {
        let msg = "Rename the configuration loader and update every caller in the frontend";
        let idx = SummaryIndex::new(
            "User wanted the configuration loader renamed and every caller updated (frontend).",
        );
        assert!(text_mentioned(&idx, msg));
        let idx = SummaryIndex::new("User wanted the configuration documented.");
        assert!(!text_mentioned(&idx, msg));
    }

    #[test]
    fn rejected_calls_are_not_errors() {
        let m = msgs(json!([
            {"role": "user", "content": "start the server please now"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "mix phx.server"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": true,
                "content": "The user doesn't want to proceed with this tool use. The tool use was rejected."}]}
        ]));
        let r = loss_report(&m, "\"start the server please now\"");
        assert!(r.is_empty(), "{r:?}");
    }

    #[test]
    fn append_missing_lists_items_deterministically() {
        let summary = "The user and the assistant talked.";
        let r = loss_report(&conversation(), summary);
        let a = append_missing(summary, &r);
        assert_eq!(a, append_missing(summary, &r));
        assert!(a.starts_with(summary));
        assert!(a.contains(MISSING_HEADING));
        assert!(a.contains("- Files touched: /repo/src/net.rs, /repo/src/data.rs"));
        assert!(a.contains("  - \"yes\""));
        assert!(a.contains("cannot find value"));
        // After appending, nothing is missing any more.
        assert!(loss_report(&conversation(), &a).is_empty());
        assert_eq!(append_missing(summary, &LossReport::default()), summary);
    }

    #[test]
    fn a_wordless_error_excerpt_is_judged_by_its_source() {
        // A failed `cargo test` whose whole output is `*` (fuzzing finding F5).
        let m = msgs(json!([
            {"role": "user", "content": "run the tests"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Bash",
                "input": {"command": "cargo test"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t",
                "content": "*", "is_error": true}]}
        ]));
        let summary = "The user asked to run the tests.";
        let r = loss_report(&m, summary);
        assert_eq!(r.errors, vec!["`cargo test`: *"]);
        let completed = append_missing(summary, &r);
        assert!(loss_report(&m, &completed).is_empty(), "{completed}");
        // A summary that has the entry mentions it; one that only names the command, or
        // names it with another outcome, does not.
        let idx = SummaryIndex::new("Errors: `cargo test`: * (no output)");
        assert!(error_entry_mentioned(&idx, "`cargo test`", "*"));
        for other in ["We ran cargo test later.", "Ran `cargo test`: all pass."] {
            let idx = SummaryIndex::new(other);
            assert!(!error_entry_mentioned(&idx, "`cargo test`", "*"), "{other}");
        }
        // A wordless excerpt is never mentioned on its own, even where it appears.
        let idx = SummaryIndex::new("--- a/x\n+++ b/x");
        assert!(!error_mentioned(&idx, "---"));
        // Two commands failing with the same wordless output are two errors.
        let two = msgs(json!([
            {"role": "user", "content": "run both"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "Bash", "input": {"command": "cargo test"}},
                {"type": "tool_use", "id": "b", "name": "Bash", "input": {"command": "npm test"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "*", "is_error": true},
                {"type": "tool_result", "tool_use_id": "b", "content": "*", "is_error": true}]}
        ]));
        let r = loss_report(&two, "nothing");
        assert_eq!(r.errors, vec!["`cargo test`: *", "`npm test`: *"]);
        assert!(loss_report(&two, &append_missing("nothing", &r)).is_empty());
    }

    #[test]
    fn serializes_camel_case() {
        let r = LossReport {
            files: vec!["a".into()],
            user_messages: vec!["b".into()],
            errors: vec![],
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"files": ["a"], "userMessages": ["b"], "errors": []})
        );
    }
}
