//! Restoration after compaction (SPEC §9): which recently read files and which invoked skills
//! come back after the summary, how much of each, and the messages that carry them.
//!
//! Everything here is a pure decision: reading files is the caller's business (a JS
//! callback), and so is knowing which skills were invoked. The pipeline is:
//!
//! 1. [`select_files`] picks, from the snapshot of the read-file state taken before it was
//!    cleared, the most recently read files that are not already visible in the kept
//!    messages ([`content_present_in`], [`kept_texts`]) and are not binary.
//! 2. The caller fills in unknown contents (the `readFile` callback).
//! 3. [`budget_files`] truncates each file to [`POST_COMPACT_MAX_TOKENS_PER_FILE`] and keeps
//!    the total within [`POST_COMPACT_TOKEN_BUDGET`]; [`budget_skills`] does the same for
//!    skills within [`POST_COMPACT_SKILLS_TOKEN_BUDGET`].
//! 4. [`file_attachment_message`] / [`skill_attachment_message`] build the messages appended
//!    after the kept messages.
//!
//! Token sizes are the rough estimate of SPEC §3: UTF-16 code units / [`BYTES_PER_TOKEN`],
//! rounded; or, given one ([`Measure`]), the caller's tokenizer (`tokenCounter`), as every
//! other count of the compaction.

use serde_json::{json, Map, Value};

use crate::measure::tokens::{rough_token_count, text_tokens, BYTES_PER_TOKEN};
use crate::model::error::Result;
use crate::model::hash::FastSet;
use crate::model::messages::{Block, Content, Message, ToolResultContent};
use crate::model::order;
use crate::model::view::utf16_len;

/// At most this many files are restored after a compaction.
pub const POST_COMPACT_MAX_FILES_TO_RESTORE: usize = 5;
/// Each restored file is cut to this many tokens (head kept).
pub const POST_COMPACT_MAX_TOKENS_PER_FILE: u64 = 5_000;
/// All restored files together stay within this many tokens.
pub const POST_COMPACT_TOKEN_BUDGET: u64 = 50_000;
/// Each restored skill is cut to this many tokens (head kept: it holds the instructions).
pub const POST_COMPACT_MAX_TOKENS_PER_SKILL: u64 = 5_000;
/// All restored skills together stay within this many tokens.
pub const POST_COMPACT_SKILLS_TOKEN_BUDGET: u64 = 25_000;
/// A skill that does not fit whole in what remains of the skills budget is still restored,
/// cut to the remainder, when at least this many tokens remain; below that it is skipped.
pub const MIN_USEFUL_SKILL_TOKENS: u64 = 500;
/// A file longer than this many characters counts as present in the kept messages when its
/// first this-many characters are (see [`content_present_in`]).
pub const PRESENCE_PREFIX_CHARS: usize = 1_000;
/// How many leading characters [`is_probably_binary`] inspects.
pub const BINARY_SNIFF_CHARS: usize = 8_192;
/// The line appended to truncated content. It counts within the token limit.
pub const TRUNCATION_MARKER: &str =
    "\n[truncated here: the rest was left out to keep the context small]";

// ---------------------------------------------------------------------------------------
// Files: selection
// ---------------------------------------------------------------------------------------

/// One entry of the agent's read-file state, taken BEFORE the state is cleared (SPEC §7
/// step 5).
#[derive(Clone, Debug, PartialEq)]
pub struct FileSnapshot {
    /// The file's path, as the agent's tools named it.
    pub path: String,
    /// The content as it was read; `None` when unknown (the caller reads it through its
    /// `readFile` callback).
    pub content: Option<String>,
    /// When the file was read, in milliseconds since the epoch.
    pub timestamp_ms: f64,
}

/// Indices into `snapshot` of the files to restore, most recently read first, at most
/// [`POST_COMPACT_MAX_FILES_TO_RESTORE`].
///
/// Order: `timestamp_ms` descending; on equal timestamps the later entry comes first (it was
/// recorded last). A `NaN` timestamp sorts as the oldest. Skipped, without using up one of the
/// five places:
/// * paths for which `excluded` answers true (the caller passes files whose content is already
///   in the kept messages, see [`content_present_in`]);
/// * empty paths, and repeated paths (only the most recent entry of a path is considered; if
///   that one is excluded, the path is);
/// * binary files: by extension ([`is_binary_path`]) or, when the content is known, by content
///   ([`is_probably_binary`]);
/// * known-empty contents (nothing to restore).
pub fn select_files(snapshot: &[FileSnapshot], excluded: &dyn Fn(&str) -> bool) -> Vec<usize> {
    let key = |i: usize| {
        let t = snapshot[i].timestamp_ms;
        if t.is_nan() {
            f64::NEG_INFINITY
        } else {
            t
        }
    };
    let order = order::stable_order(snapshot.len(), &|a, b| {
        key(b)
            .partial_cmp(&key(a))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.cmp(&a))
    });
    let mut seen: FastSet<&str> = FastSet::default();
    let mut out = Vec::with_capacity(POST_COMPACT_MAX_FILES_TO_RESTORE);
    for i in order {
        if out.len() == POST_COMPACT_MAX_FILES_TO_RESTORE {
            break;
        }
        let f = &snapshot[i];
        if f.path.is_empty() || !seen.insert(f.path.as_str()) {
            continue;
        }
        if is_binary_path(&f.path) || excluded(&f.path) {
            continue;
        }
        if let Some(c) = &f.content {
            if c.is_empty() || is_probably_binary(c) {
                continue;
            }
        }
        out.push(i);
    }
    out
}

// ---------------------------------------------------------------------------------------
// Binary detection
// ---------------------------------------------------------------------------------------

/// Whether text looks like binary data decoded as text: a NUL character among the first
/// [`BINARY_SNIFF_CHARS`] characters, or more than 10% of them being U+FFFD (the replacement
/// character lossy decoding leaves for invalid bytes) or control characters other than tab,
/// line feed, carriage return, form feed, backspace and escape (terminal logs use the last
/// two).
pub fn is_probably_binary(content: &str) -> bool {
    let mut total = 0usize;
    let mut odd = 0usize;
    for c in content.chars().take(BINARY_SNIFF_CHARS) {
        total += 1;
        match c {
            '\0' => return true,
            '\u{FFFD}' => odd += 1,
            '\t' | '\n' | '\r' | '\u{0C}' | '\u{08}' | '\u{1B}' => {}
            c if c.is_control() => odd += 1,
            _ => {}
        }
    }
    total > 0 && odd * 10 > total
}

/// Extensions (lower case) of files that are not text: images, PDF and office documents,
/// archives and packages, executables and libraries, compiled code, fonts, audio and video,
/// databases.
#[rustfmt::skip]
pub const BINARY_EXTENSIONS: &[&str] = &[
    // images
    "png", "jpg", "jpeg", "gif", "bmp", "ico", "icns", "webp", "tif", "tiff", "psd", "heic",
    "heif", "avif", "raw", "cr2", "nef",
    // documents
    "pdf", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt", "ods", "odp", "epub",
    // archives and packages
    "zip", "tar", "gz", "tgz", "bz2", "tbz2", "xz", "txz", "7z", "rar", "zst", "lz4", "lzma",
    "z", "jar", "war", "ear", "apk", "aab", "ipa", "dmg", "iso", "img", "deb", "rpm", "msi",
    "cab", "whl", "egg", "nupkg", "crate",
    // executables, libraries, compiled code
    "exe", "dll", "so", "dylib", "a", "lib", "o", "obj", "ko", "bin", "elf", "class", "pyc",
    "pyo", "pyd", "wasm", "node", "beam", "dex", "rlib", "pdb",
    // fonts
    "ttf", "otf", "woff", "woff2", "eot",
    // audio and video
    "mp3", "wav", "flac", "ogg", "oga", "opus", "m4a", "aac", "wma", "aiff", "mid", "midi",
    "mp4", "m4v", "mov", "avi", "mkv", "webm", "wmv", "flv", "mpg", "mpeg", "3gp",
    // databases and serialized data
    "sqlite", "sqlite3", "db", "mdb", "parquet", "arrow", "feather", "npy", "npz", "pkl",
    "pickle", "pt", "pth", "onnx", "safetensors", "h5", "hdf5", "tfrecord",
];

/// Whether the path names a file that is binary by its extension ([`BINARY_EXTENSIONS`],
/// compared case-insensitively), including versioned shared libraries such as
/// `libfoo.so.1.2`.
pub fn is_binary_path(path: &str) -> bool {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let lower = name.to_ascii_lowercase();
    let mut parts = lower.split('.');
    parts.next(); // the stem (or empty for dot-files)
    let exts: Vec<&str> = parts.collect();
    let Some(last) = exts.last() else {
        return false;
    };
    if BINARY_EXTENSIONS.contains(last) {
        return true;
    }
    // libfoo.so.1.2.3: `so` followed only by version numbers.
    exts.iter().position(|e| *e == "so").is_some_and(|p| {
        exts[p + 1..]
            .iter()
            .all(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
    })
}

// ---------------------------------------------------------------------------------------
// Truncation
// ---------------------------------------------------------------------------------------

/// The largest UTF-16 length whose rough token count stays within `max_tokens`.
fn max_units_for(max_tokens: u64) -> usize {
    let guess = ((max_tokens as f64 + 0.5) * BYTES_PER_TOKEN).floor();
    let mut u = if guess >= usize::MAX as f64 {
        usize::MAX - 1
    } else {
        guess as usize
    };
    while u > 0 && rough_token_count(u, BYTES_PER_TOKEN) > max_tokens {
        u -= 1;
    }
    while u < usize::MAX - 1 && rough_token_count(u + 1, BYTES_PER_TOKEN) <= max_tokens {
        u += 1;
    }
    u
}

/// The longest prefix of `text` of at most `units` UTF-16 code units, never splitting a
/// character (so never a surrogate pair).
fn head_units(text: &str, units: usize) -> &str {
    if text.is_ascii() {
        return &text[..units.min(text.len())];
    }
    let mut acc = 0usize;
    for (i, c) in text.char_indices() {
        acc += c.len_utf16();
        if acc > units {
            return &text[..i];
        }
    }
    text
}

/// Cuts `text` so that its rough token count is at most `max_tokens`, keeping the head.
///
/// Returns the text and whether it was cut. Text already within the limit comes back
/// unchanged. Otherwise the head is kept and [`TRUNCATION_MARKER`] appended, the marker
/// counting within the limit. The cut falls on a character boundary (never inside a
/// surrogate pair); when a line break lies in the last fifth of the kept head, the cut moves
/// back to just after it, so the head ends with a whole line. When the limit is too small to
/// hold the marker at all, the bare head is returned.
pub fn truncate_to_tokens(text: &str, max_tokens: u64) -> (String, bool) {
    if text_tokens(text) <= max_tokens {
        return (text.to_string(), false);
    }
    (cut(text, max_tokens), true)
}

fn cut(text: &str, max_tokens: u64) -> String {
    cut_units(text, max_units_for(max_tokens))
}

/// The head of `text` and [`TRUNCATION_MARKER`] within `max_units` UTF-16 units ([`cut`]).
fn cut_units(text: &str, max_units: usize) -> String {
    let marker_units = utf16_len(TRUNCATION_MARKER);
    if marker_units > max_units {
        return head_units(text, max_units).to_string();
    }
    let budget = max_units - marker_units;
    let mut head = head_units(text, budget);
    if let Some(nl) = head.rfind('\n') {
        let line_end = &head[..=nl];
        if utf16_len(line_end) * 5 >= utf16_len(head) * 4 {
            head = line_end;
        }
    }
    let mut out = String::with_capacity(head.len() + TRUNCATION_MARKER.len());
    out.push_str(head);
    out.push_str(TRUNCATION_MARKER);
    out
}

/// How restoration measures texts in tokens: the rough estimate (`Measure(None)`, the
/// default), or the tokens of the caller's tokenizer (a text's count), so that the budgets
/// hold in its tokens.
#[derive(Clone, Copy, Default)]
pub struct Measure<'a>(pub Option<&'a TokensOf<'a>>);

/// A count of a text's tokens (an error when the caller's tokenizer fails).
pub type TokensOf<'a> = dyn Fn(&str) -> Result<u64> + 'a;

/// Cuts a tokenizer may ask for before a text fits (each one counts the cut text).
const MAX_COUNTED_CUTS: usize = 8;

impl Measure<'_> {
    /// Tokens of `text`.
    pub fn tokens(&self, text: &str) -> Result<u64> {
        match self.0 {
            Some(count) => count(text),
            None => Ok(text_tokens(text)),
        }
    }

    /// [`truncate_to_tokens`] in these tokens, with the tokens of the text returned. With a
    /// tokenizer the cut starts where its density puts `max_tokens` and moves back until
    /// the text fits (at worst, nothing is left).
    pub fn truncate(&self, text: String, max_tokens: u64) -> Result<(String, bool, u64)> {
        let n = self.tokens(&text)?;
        if n <= max_tokens {
            return Ok((text, false, n));
        }
        // The estimate's cut fits at once; a tokenizer's may take a few.
        let mut units = match self.0 {
            None => max_units_for(max_tokens),
            Some(_) => (utf16_len(&text) as u64 * max_tokens / n) as usize,
        };
        for _ in 0..MAX_COUNTED_CUTS {
            let out = cut_units(&text, units);
            let t = self.tokens(&out)?;
            if t <= max_tokens {
                return Ok((out, true, t));
            }
            units = (units as u64 * max_tokens / t * 9 / 10) as usize;
        }
        Ok((String::new(), true, 0))
    }
}

// ---------------------------------------------------------------------------------------
// Files: budget
// ---------------------------------------------------------------------------------------

/// A file to put back into the context after compaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoredFile {
    /// The file's path.
    pub path: String,
    /// The content, truncated if needed (then ending with [`TRUNCATION_MARKER`]).
    pub content: String,
    /// Estimated tokens of `content`.
    pub tokens: u64,
    /// Whether `content` was cut.
    pub truncated: bool,
}

/// Limits for restoring files; [`Default`] gives the SPEC values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileBudget {
    /// At most this many files ([`POST_COMPACT_MAX_FILES_TO_RESTORE`]).
    pub max_files: usize,
    /// Each file cut to this many tokens ([`POST_COMPACT_MAX_TOKENS_PER_FILE`]).
    pub max_tokens_per_file: u64,
    /// All files together within this many tokens ([`POST_COMPACT_TOKEN_BUDGET`]).
    pub total_tokens: u64,
}

impl Default for FileBudget {
    fn default() -> Self {
        FileBudget {
            max_files: POST_COMPACT_MAX_FILES_TO_RESTORE,
            max_tokens_per_file: POST_COMPACT_MAX_TOKENS_PER_FILE,
            total_tokens: POST_COMPACT_TOKEN_BUDGET,
        }
    }
}

impl FileBudget {
    /// The default budget with its total at most `room` tokens: what a compaction may restore
    /// when it must stay smaller than what it replaces.
    pub fn within(room: u64) -> FileBudget {
        FileBudget {
            total_tokens: POST_COMPACT_TOKEN_BUDGET.min(room),
            ..Default::default()
        }
    }
}

/// Truncates and budgets files given as `(path, content)` in priority order (most recently
/// read first), with the SPEC limits ([`FileBudget::default`]). See [`budget_files_with`].
pub fn budget_files(files: Vec<(String, String)>) -> Vec<RestoredFile> {
    budget_files_with(files, &FileBudget::default())
}

/// Truncates and budgets files given as `(path, content)` in priority order.
///
/// * Binary files ([`is_binary_path`], [`is_probably_binary`]), empty contents and repeated
///   paths (after the first) are skipped.
/// * Each file is cut to `max_tokens_per_file` ([`truncate_to_tokens`]).
/// * A file that would take the total over `total_tokens` is skipped and the next one tried
///   (a later, smaller file may still fit): files are context the model can re-read, so a
///   whole smaller file is worth more than a second cut. The total counts each file as it
///   is sent ([`file_attachment_text`]: its path and the sentence around its content too)
///   and never exceeds `total_tokens`.
/// * At most `max_files` files are returned, in the input order.
///
/// With the SPEC values (5 files × 5,000 tokens) the 50,000-token total binds only when
/// paths are very long; it is enforced anyway, for callers that change the limits.
pub fn budget_files_with(files: Vec<(String, String)>, budget: &FileBudget) -> Vec<RestoredFile> {
    budget_files_measured(files, budget, Measure(None)).unwrap_or_default()
}

/// [`budget_files_with`], every size in the tokens of `measure` (an error when the caller's
/// tokenizer fails).
pub fn budget_files_measured(
    files: Vec<(String, String)>,
    budget: &FileBudget,
    measure: Measure<'_>,
) -> Result<Vec<RestoredFile>> {
    let mut out: Vec<RestoredFile> = Vec::new();
    let mut total = 0u64;
    for (path, content) in files {
        if out.len() >= budget.max_files {
            break;
        }
        if content.is_empty()
            || is_binary_path(&path)
            || out.iter().any(|f| f.path == path)
            || is_probably_binary(&content)
        {
            continue;
        }
        let (content, truncated, tokens) = measure.truncate(content, budget.max_tokens_per_file)?;
        if content.is_empty() {
            continue;
        }
        let file = RestoredFile {
            path,
            content,
            tokens,
            truncated,
        };
        // Counted as sent: the path and the sentence around the content too.
        let sent = measure.tokens(&file_attachment_text(&file))?;
        if total.saturating_add(sent) > budget.total_tokens {
            continue;
        }
        total += sent;
        out.push(file);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------
// Skills
// ---------------------------------------------------------------------------------------

/// A skill invoked before compaction, as the caller knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillInfo {
    /// The skill's name.
    pub name: String,
    /// Its full content (instructions first).
    pub content: String,
}

/// A skill to put back into the context after compaction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoredSkill {
    /// The skill's name.
    pub name: String,
    /// The content, truncated if needed (then ending with [`TRUNCATION_MARKER`]).
    pub content: String,
    /// Estimated tokens of `content`.
    pub tokens: u64,
    /// Whether `content` was cut.
    pub truncated: bool,
}

/// Limits for restoring skills; [`Default`] gives the SPEC values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SkillBudget {
    /// Each skill cut to this many tokens ([`POST_COMPACT_MAX_TOKENS_PER_SKILL`]).
    pub max_tokens_per_skill: u64,
    /// All skills together within this many tokens ([`POST_COMPACT_SKILLS_TOKEN_BUDGET`]).
    pub total_tokens: u64,
    /// The smallest remainder worth cutting a skill to ([`MIN_USEFUL_SKILL_TOKENS`]).
    pub min_useful_tokens: u64,
}

impl Default for SkillBudget {
    fn default() -> Self {
        SkillBudget {
            max_tokens_per_skill: POST_COMPACT_MAX_TOKENS_PER_SKILL,
            total_tokens: POST_COMPACT_SKILLS_TOKEN_BUDGET,
            min_useful_tokens: MIN_USEFUL_SKILL_TOKENS,
        }
    }
}

impl SkillBudget {
    /// The default budget with its total at most `room` tokens (see [`FileBudget::within`]).
    pub fn within(room: u64) -> SkillBudget {
        SkillBudget {
            total_tokens: POST_COMPACT_SKILLS_TOKEN_BUDGET.min(room),
            ..Default::default()
        }
    }
}

/// Truncates and budgets skills in the given order (the caller's priority, e.g. most
/// recently invoked first) with the SPEC limits ([`SkillBudget::default`]). See
/// [`budget_skills_with`].
pub fn budget_skills(skills: &[SkillInfo]) -> Vec<RestoredSkill> {
    budget_skills_with(skills, &SkillBudget::default())
}

/// Truncates and budgets skills in the given order. Truncating beats dropping:
///
/// * each skill is cut to `max_tokens_per_skill`, head kept (the instructions come first);
/// * a skill that does not fit whole in what remains of `total_tokens` is cut to the
///   remainder when that is at least `min_useful_tokens`; otherwise it is skipped and the
///   next one tried (a smaller one may still fit whole);
/// * skills with empty content are skipped.
///
/// The total counts each skill's attachment as sent (its name and the sentence around its
/// content too) and never exceeds `total_tokens`; the output keeps the input order.
pub fn budget_skills_with(skills: &[SkillInfo], budget: &SkillBudget) -> Vec<RestoredSkill> {
    budget_skills_measured(skills, budget, Measure(None)).unwrap_or_default()
}

/// [`budget_skills_with`], every size in the tokens of `measure` (an error when the
/// caller's tokenizer fails).
///
/// The total counts each skill as it is sent: its attachment's text
/// ([`skill_attachment_text`]: the name and the sentence around the content, not only the
/// content), so that many small skills, or one with a long name, cannot take the restored
/// context past `total_tokens`. A name longer than [`MAX_SKILL_NAME_UNITS`] is cut
/// ([`skill_name`]). `tokens` of each skill is still its content's.
pub fn budget_skills_measured(
    skills: &[SkillInfo],
    budget: &SkillBudget,
    measure: Measure<'_>,
) -> Result<Vec<RestoredSkill>> {
    let mut out = Vec::new();
    let mut total = 0u64;
    for s in skills {
        if s.content.is_empty() {
            continue;
        }
        let remaining = budget.total_tokens.saturating_sub(total);
        let name = skill_name(&s.name);
        // The attachment without its content, with the note of a cut skill (the longer).
        let wrapper = measure.tokens(&skill_attachment_text(&RestoredSkill {
            name: name.clone(),
            content: String::new(),
            tokens: 0,
            truncated: true,
        }))?;
        let whole = measure.tokens(&s.content)?.min(budget.max_tokens_per_skill);
        // What the content may take when the skill is cut to what remains: one token left
        // for the rounding of the whole text's count.
        let room = remaining.saturating_sub(wrapper.saturating_add(1));
        let fits_room = room >= budget.min_useful_tokens && room > 0;
        let mut caps = Vec::with_capacity(2);
        if whole.saturating_add(wrapper) <= remaining {
            caps.push(budget.max_tokens_per_skill);
        }
        if fits_room && room < budget.max_tokens_per_skill {
            caps.push(room);
        }
        for cap in caps {
            let (content, truncated, tokens) = measure.truncate(s.content.clone(), cap)?;
            if content.is_empty() {
                break;
            }
            let skill = RestoredSkill {
                name: name.clone(),
                content,
                tokens,
                truncated,
            };
            let sent = measure.tokens(&skill_attachment_text(&skill))?;
            if total.saturating_add(sent) <= budget.total_tokens {
                total += sent;
                out.push(skill);
                break;
            }
        }
    }
    Ok(out)
}

/// A restored skill's name is cut to this many UTF-16 code units (a name is a few words; a
/// longer one is the caller's mistake, and it is sent in the skill's attachment).
pub const MAX_SKILL_NAME_UNITS: usize = 200;

/// The name a restored skill carries: `name`, or its head and `…` when it is longer than
/// [`MAX_SKILL_NAME_UNITS`].
pub fn skill_name(name: &str) -> String {
    if utf16_len(name) <= MAX_SKILL_NAME_UNITS {
        return name.to_string();
    }
    let mut out = head_units(name, MAX_SKILL_NAME_UNITS - 1).to_string();
    out.push('\u{2026}');
    out
}

// ---------------------------------------------------------------------------------------
// Presence in kept messages
// ---------------------------------------------------------------------------------------

/// Whether a file's `content` is already visible in the kept messages, given their texts
/// (see [`kept_texts`]).
///
/// The needle is the content itself, or its first [`PRESENCE_PREFIX_CHARS`] characters when
/// longer (a kept result that shows the start of the file shows the part that matters most,
/// and partial reads are common), with trailing whitespace ignored. A text contains it
/// either verbatim or once line-number prefixes are removed: file-reading tools often show
/// lines as `   12→code` or `12\tcode`, and such a result holds the file all the same.
/// Empty or whitespace-only content is never "present".
///
/// To test many files against the same messages, build a [`KeptContent`] once.
pub fn content_present_in(haystack_texts: &[&str], content: &str) -> bool {
    KeptContent::new(haystack_texts).contains_file(content)
}

/// The texts of the kept messages, prepared for [`KeptContent::contains_file`]: texts that
/// carry line-number prefixes are also kept with the prefixes removed (done once, not once
/// per file).
#[derive(Clone, Debug)]
pub struct KeptContent<'a> {
    texts: Vec<&'a str>,
    stripped: Vec<String>,
}

impl<'a> KeptContent<'a> {
    /// Prepares the texts (see [`kept_texts`]).
    pub fn new(texts: &[&'a str]) -> KeptContent<'a> {
        KeptContent {
            texts: texts.to_vec(),
            stripped: texts
                .iter()
                .filter(|t| looks_line_numbered(t))
                .map(|t| strip_line_numbers(t))
                .collect(),
        }
    }

    /// Whether `content` is present; see [`content_present_in`].
    pub fn contains_file(&self, content: &str) -> bool {
        let needle = match content.char_indices().nth(PRESENCE_PREFIX_CHARS) {
            Some((i, _)) => &content[..i],
            None => content,
        }
        .trim_end();
        if needle.trim().is_empty() {
            return false;
        }
        self.texts.iter().any(|h| h.contains(needle))
            || self.stripped.iter().any(|h| h.contains(needle))
    }
}

/// A file shorter than this (trailing whitespace aside) is never held whole by the kept
/// messages ([`KeptContent::holds_whole`]): so short a text is found in unrelated ones.
pub const MIN_HELD_CHARS: usize = 64;

impl KeptContent<'_> {
    /// Whether a kept text holds `content` whole (verbatim or once line-number prefixes are
    /// removed; trailing whitespace ignored), and it is at least [`MIN_HELD_CHARS`] long:
    /// the kept messages then show the file as it was read, so its read may stay in the
    /// caller's `readFileState`. Stricter than [`KeptContent::contains_file`], which a file
    /// sharing its first [`PRESENCE_PREFIX_CHARS`] characters with a kept one, or a file of
    /// a few characters, satisfies.
    pub fn holds_whole(&self, content: &str) -> bool {
        let needle = content.trim_end();
        if needle
            .trim_start()
            .chars()
            .nth(MIN_HELD_CHARS - 1)
            .is_none()
        {
            return false;
        }
        self.texts.iter().any(|h| h.contains(needle))
            || self.stripped.iter().any(|h| h.contains(needle))
    }
}

/// The part of a line after a `   12→` or `12\t` prefix, if it has one.
fn after_line_number(line: &str) -> Option<&str> {
    let t = line.trim_start_matches(' ');
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let rest = &t[digits..];
    rest.strip_prefix('→').or_else(|| rest.strip_prefix('\t'))
}

fn looks_line_numbered(text: &str) -> bool {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .is_some_and(|l| after_line_number(l).is_some())
}

fn strip_line_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(after_line_number(line).unwrap_or(line));
    }
    out
}

/// The texts of messages in which a file's content may appear: string contents, text
/// blocks, tool-result texts (string or text blocks), and the `content` string of attachment
/// lines (e.g. a file restored by an earlier compaction).
pub fn kept_texts(messages: &[Message]) -> Vec<&str> {
    let mut out = Vec::new();
    fn blocks<'a>(bs: &'a [Block], out: &mut Vec<&'a str>) {
        for b in bs {
            match b {
                Block::Text(t) => out.push(&t.text),
                Block::ToolResult(r) => match r.content.as_ref().and_then(|c| c.as_ref()) {
                    Some(ToolResultContent::Text(t)) => out.push(t),
                    Some(ToolResultContent::Blocks(inner)) => blocks(inner, out),
                    None => {}
                },
                _ => {}
            }
        }
    }
    for m in messages {
        if let Some(s) = m
            .extra
            .get("attachment")
            .and_then(|a| a.get("content"))
            .and_then(Value::as_str)
        {
            out.push(s);
        }
        match m.content() {
            Some(Content::Text(t)) => out.push(t),
            Some(Content::Blocks(bs)) => blocks(bs, &mut out),
            None => {}
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------

/// `attachment.type` of a restored-file transcript line.
pub const RESTORED_FILE_ATTACHMENT: &str = "restored_file";
/// `attachment.type` of a restored-skill transcript line.
pub const RESTORED_SKILL_ATTACHMENT: &str = "restored_skill";

fn attachment_line(uuid: Option<&str>, attachment: Value) -> Message {
    let mut extra = Map::new();
    extra.insert("attachment".into(), attachment);
    Message {
        line_type: Some(Some("attachment".into())),
        uuid: uuid.map(|u| Some(u.to_string())),
        extra,
        ..Default::default()
    }
}

/// The text of a restored file in API shape.
pub fn file_attachment_text(file: &RestoredFile) -> String {
    file_text(&file.path, &file.content, file.truncated)
}

fn file_text(path: &str, content: &str, truncated: bool) -> String {
    let note = if truncated {
        " (only the beginning is shown; read the file again for the rest)"
    } else {
        ""
    };
    format!("File {path} as it was read before this conversation was compacted{note}:\n\n{content}")
}

/// The text of a restored skill in API shape.
pub fn skill_attachment_text(skill: &RestoredSkill) -> String {
    skill_text(&skill.name, &skill.content, skill.truncated)
}

fn skill_text(name: &str, content: &str, truncated: bool) -> String {
    let note = if truncated {
        " (only the beginning is shown)"
    } else {
        ""
    };
    format!(
        "Skill \"{name}\", invoked before this conversation was compacted; its instructions still \
         apply{note}:\n\n{content}"
    )
}

/// The text the model is sent for the `attachment` of a transcript line this crate wrote to
/// restore a file or a skill (`restored_file` with `path`, `restored_skill` with `name`, both
/// with a string `content`): the same text the API-shape message holds, so the model learns
/// which file or skill it is in either shape. `None` for any other attachment.
pub fn restored_attachment_text(attachment: &serde_json::Value) -> Option<String> {
    let field = |k: &str| attachment.get(k).and_then(serde_json::Value::as_str);
    let truncated = attachment
        .get("truncated")
        .and_then(serde_json::Value::as_bool)
        == Some(true);
    let content = field("content")?;
    match field("type")? {
        RESTORED_FILE_ATTACHMENT => Some(file_text(field("path")?, content, truncated)),
        RESTORED_SKILL_ATTACHMENT => Some(skill_text(field("name")?, content, truncated)),
        _ => None,
    }
}

/// The message that restores a file.
///
/// * API shape (`transcript == false`): a user message whose text names the file, says it
///   is the content as read before compaction (and that it was cut, if so), then the
///   content. `uuid` is not used (API messages have none).
/// * Transcript shape: an attachment line
///   `{type: "attachment", uuid, attachment: {type: "restored_file", path, content,
///   truncated}}` (`uuid` omitted when `None`). The caller links it into the chain
///   (`parentUuid`, `timestamp`, session fields).
pub fn file_attachment_message(
    file: &RestoredFile,
    transcript: bool,
    uuid: Option<&str>,
) -> Message {
    if transcript {
        attachment_line(
            uuid,
            json!({
                "type": RESTORED_FILE_ATTACHMENT,
                "path": file.path,
                "content": file.content,
                "truncated": file.truncated,
            }),
        )
    } else {
        Message::api_user_text(file_attachment_text(file))
    }
}

/// The message that restores a skill; shapes as in [`file_attachment_message`], with
/// `attachment: {type: "restored_skill", name, content, truncated}` in transcript shape.
pub fn skill_attachment_message(
    skill: &RestoredSkill,
    transcript: bool,
    uuid: Option<&str>,
) -> Message {
    if transcript {
        attachment_line(
            uuid,
            json!({
                "type": RESTORED_SKILL_ATTACHMENT,
                "name": skill.name,
                "content": skill.content,
                "truncated": skill.truncated,
            }),
        )
    } else {
        Message::api_user_text(skill_attachment_text(skill))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::messages::Kind;

    fn snap(path: &str, content: Option<&str>, t: f64) -> FileSnapshot {
        FileSnapshot {
            path: path.into(),
            content: content.map(str::to_string),
            timestamp_ms: t,
        }
    }

    /// A dense tokenizer: one token per character.
    struct PerChar;
    impl crate::measure::tokens::TextCounter for PerChar {
        fn count(&self, text: &str) -> std::result::Result<Option<f64>, String> {
            Ok(Some(utf16_len(text) as f64))
        }
        fn name(&self) -> &str {
            "tokenCounter"
        }
    }

    /// With the caller's tokenizer, files and skills are cut and budgeted in its tokens: a
    /// file of 30,000 characters is 30,000 of its tokens, cut to at most 5,000 of them (the
    /// estimate would keep 20,000 characters, 20,000 of its tokens).
    #[test]
    fn budgets_hold_in_the_callers_tokens() {
        let text = "line of code\n".repeat(2_500);
        let count = |t: &str| crate::measure::tokens::text_tokens_counted(t, Some(&PerChar));
        let measure = Measure(Some(&count));
        let files = budget_files_measured(
            vec![("/a.rs".into(), text.clone())],
            &FileBudget::default(),
            measure,
        )
        .unwrap();
        assert_eq!(files.len(), 1);
        let f = &files[0];
        assert!(f.truncated);
        assert_eq!(f.tokens, utf16_len(&f.content) as u64);
        assert!((4_000..=5_000).contains(&f.tokens), "{} tokens", f.tokens);
        assert!(f.content.ends_with(TRUNCATION_MARKER));
        let skills: Vec<SkillInfo> = (0..6)
            .map(|i| SkillInfo {
                name: format!("s{i}"),
                content: text.clone(),
            })
            .collect();
        let restored = budget_skills_measured(&skills, &SkillBudget::default(), measure).unwrap();
        let total: u64 = restored.iter().map(|s| s.tokens).sum();
        assert!(total <= POST_COMPACT_SKILLS_TOKEN_BUDGET, "{total}");
        for s in &restored {
            assert!(
                s.tokens <= POST_COMPACT_MAX_TOKENS_PER_SKILL,
                "{}",
                s.tokens
            );
            assert_eq!(s.tokens, utf16_len(&s.content) as u64);
        }
        // Without one, the estimate (4 characters a token).
        let plain = budget_files(vec![("/a.rs".into(), text)]);
        assert_eq!(plain[0].tokens, text_tokens(&plain[0].content));
        assert!(utf16_len(&plain[0].content) > 19_000);
    }

    fn none(_: &str) -> bool {
        false
    }

    // --- selection ---

    #[test]
    fn selection_is_most_recent_first_and_capped_at_five() {
        let s: Vec<FileSnapshot> = (0..8)
            .map(|i| {
                snap(
                    &format!("/f{i}.rs"),
                    Some("x"),
                    [5., 1., 7., 3., 8., 2., 6., 4.][i],
                )
            })
            .collect();
        let picked = select_files(&s, &none);
        // timestamps 8 (4), 7 (2), 6 (6), 5 (0), 4 (7)
        assert_eq!(picked, vec![4, 2, 6, 0, 7]);
    }

    #[test]
    fn selection_ties_prefer_the_later_entry_and_nan_is_oldest() {
        let s = vec![
            snap("/a", None, 10.),
            snap("/b", None, f64::NAN),
            snap("/c", None, 10.),
            snap("/d", None, 9.),
        ];
        assert_eq!(select_files(&s, &none), vec![2, 0, 3, 1]);
    }

    #[test]
    fn selection_skips_excluded_binary_empty_and_repeated_without_using_places() {
        let s = vec![
            snap("/img.PNG", Some("x"), 100.),
            snap("/kept.rs", Some("fn a() {}"), 99.),
            snap("/blob.txt", Some("\0\0\0"), 98.),
            snap("/empty.txt", Some(""), 97.),
            snap("/a.rs", None, 96.),
            snap("/a.rs", None, 50.), // older entry of the same path
            snap("/b.rs", None, 95.),
            snap("/c.rs", None, 94.),
            snap("/d.rs", None, 93.),
            snap("/e.rs", None, 92.),
            snap("/f.rs", None, 91.),
            snap("", None, 200.),
        ];
        let excluded = |p: &str| p == "/kept.rs";
        let picked = select_files(&s, &excluded);
        let paths: Vec<&str> = picked.iter().map(|&i| s[i].path.as_str()).collect();
        assert_eq!(paths, vec!["/a.rs", "/b.rs", "/c.rs", "/d.rs", "/e.rs"]);
        assert_eq!(picked[0], 4);
    }

    #[test]
    fn excluding_the_newest_entry_of_a_path_excludes_the_path() {
        let s = vec![snap("/a", None, 1.), snap("/a", None, 2.)];
        assert!(select_files(&s, &|p| p == "/a").is_empty());
        assert_eq!(select_files(&s, &none), vec![1]);
    }

    #[test]
    fn selection_is_deterministic() {
        let s: Vec<FileSnapshot> = (0..20)
            .map(|i| snap(&format!("/f{}", i % 7), None, (i % 3) as f64))
            .collect();
        let a = select_files(&s, &none);
        for _ in 0..5 {
            assert_eq!(select_files(&s, &none), a);
        }
    }

    // --- binary ---

    #[test]
    fn binary_content() {
        assert!(!is_probably_binary(""));
        assert!(!is_probably_binary(
            "fn main() {\n\tprintln!(\"hi\");\r\n}\n"
        ));
        assert!(!is_probably_binary("\u{1b}[31mred\u{1b}[0m log line\n"));
        assert!(!is_probably_binary("日本語のテキスト 😀 é"));
        assert!(is_probably_binary("abc\0def"));
        assert!(is_probably_binary(&"\u{FFFD}\u{FFFD}abc".repeat(100)));
        assert!(is_probably_binary(&"\u{1}\u{2}\u{3}abcdefg".repeat(100)));
        // A stray replacement character in a long text is fine.
        let mut t = "ordinary text ".repeat(100);
        t.push('\u{FFFD}');
        assert!(!is_probably_binary(&t));
        // Only the first BINARY_SNIFF_CHARS characters are inspected.
        let late = format!("{}\0", "a".repeat(BINARY_SNIFF_CHARS));
        assert!(!is_probably_binary(&late));
    }

    #[test]
    fn binary_paths() {
        for p in [
            "a.png",
            "/x/y/Photo.JPEG",
            "doc.pdf",
            "C:\\build\\app.exe",
            "lib/libz.so",
            "lib/libz.so.1.2.13",
            "pkg.tar.gz",
            "font.woff2",
            "clip.mp4",
            "mod.wasm",
            "data.sqlite",
            "Main.class",
        ] {
            assert!(is_binary_path(p), "{p}");
        }
        for p in [
            "main.rs",
            "README",
            ".gitignore",
            "icon.svg",
            "notes.txt",
            "dir.png/file.rs",
            "x.so.txt",
            "libz.so.1.x",
            "",
        ] {
            assert!(!is_binary_path(p), "{p}");
        }
    }

    // --- truncation ---

    #[test]
    fn within_the_limit_is_unchanged() {
        let t = "a".repeat(20_001); // 5000.25 → 5000 tokens
        assert_eq!(text_tokens(&t), 5_000);
        let (out, cut) = truncate_to_tokens(&t, 5_000);
        assert!(!cut);
        assert_eq!(out, t);
    }

    #[test]
    fn ascii_truncation_lands_exactly_on_the_limit() {
        let t = "a".repeat(20_002); // 5000.5 → 5001 tokens
        assert_eq!(text_tokens(&t), 5_001);
        let (out, cut) = truncate_to_tokens(&t, 5_000);
        assert!(cut);
        assert!(out.ends_with(TRUNCATION_MARKER));
        assert_eq!(utf16_len(&out), 20_001);
        assert_eq!(text_tokens(&out), 5_000);
    }

    #[test]
    fn multibyte_truncation_never_splits_and_holds_the_limit() {
        // é: 2 bytes, 1 unit; 😀: 4 bytes, 2 units (a surrogate pair); 語: 3 bytes, 1 unit.
        for unit in ["é", "😀", "語", "a😀", "😀é語"] {
            for max in [0u64, 1, 5, 17, 18, 19, 100, 5_000] {
                let t = unit.repeat(30_000);
                let (out, cut) = truncate_to_tokens(&t, max);
                assert!(cut);
                assert!(
                    text_tokens(&out) <= max,
                    "{unit} {max}: {}",
                    text_tokens(&out)
                );
                // The head is a prefix of the input, cut on a char boundary.
                let head = out.strip_suffix(TRUNCATION_MARKER).unwrap_or(&out);
                assert!(t.starts_with(head));
                // As tight as possible: at most one unit short (a pair that cannot be split).
                let max_units = max_units_for(max);
                assert!(utf16_len(&out) + 1 >= max_units, "{unit} {max}");
            }
        }
    }

    #[test]
    fn emoji_at_the_boundary_is_dropped_whole() {
        let marker = utf16_len(TRUNCATION_MARKER);
        let max_units = max_units_for(100); // 401
        let budget = max_units - marker;
        // Fill so that a surrogate pair would straddle the budget.
        let t = format!("{}😀{}", "a".repeat(budget - 1), "b".repeat(1_000));
        let (out, cut) = truncate_to_tokens(&t, 100);
        assert!(cut);
        assert_eq!(
            out,
            format!("{}{}", "a".repeat(budget - 1), TRUNCATION_MARKER)
        );
    }

    #[test]
    fn truncation_prefers_a_line_end_near_the_cut() {
        let line = format!("{}\n", "x".repeat(79)); // 80 units per line
        let t = line.repeat(1_000);
        let (out, cut) = truncate_to_tokens(&t, 1_000);
        assert!(cut);
        let head = out.strip_suffix(TRUNCATION_MARKER).unwrap();
        assert!(head.ends_with('\n'));
        assert!(text_tokens(&out) <= 1_000);
        assert!(text_tokens(&out) >= 980);
        // A single giant line is cut mid-line instead.
        let t = format!("short\n{}", "y".repeat(50_000));
        let (out, _) = truncate_to_tokens(&t, 1_000);
        assert_eq!(text_tokens(&out), 1_000);
    }

    #[test]
    fn max_units_matches_rounding() {
        assert_eq!(max_units_for(0), 1);
        assert_eq!(max_units_for(1), 5);
        assert_eq!(max_units_for(5_000), 20_001);
        for m in 0..200u64 {
            let u = max_units_for(m);
            assert!(rough_token_count(u, BYTES_PER_TOKEN) <= m);
            assert!(rough_token_count(u + 1, BYTES_PER_TOKEN) > m);
        }
    }

    // --- file budget ---

    fn file(path: &str, units: usize) -> (String, String) {
        (path.to_string(), "z".repeat(units))
    }

    #[test]
    fn files_are_capped_per_file_at_five_and_in_total() {
        let files: Vec<_> = (0..9)
            .map(|i| file(&format!("/f{i}.rs"), 100_000))
            .collect();
        let out = budget_files(files);
        assert_eq!(out.len(), POST_COMPACT_MAX_FILES_TO_RESTORE);
        for (i, f) in out.iter().enumerate() {
            assert_eq!(f.path, format!("/f{i}.rs"));
            assert!(f.truncated);
            assert_eq!(f.tokens, text_tokens(&f.content));
            assert!(f.tokens <= POST_COMPACT_MAX_TOKENS_PER_FILE);
            assert_eq!(f.tokens, POST_COMPACT_MAX_TOKENS_PER_FILE);
        }
        let total: u64 = out.iter().map(|f| f.tokens).sum();
        assert!(total <= POST_COMPACT_TOKEN_BUDGET);
    }

    #[test]
    fn files_skip_binaries_empties_and_repeats() {
        let files = vec![
            file("/a.png", 10),
            ("/b.txt".into(), "\0binary".into()),
            ("/c.txt".into(), String::new()),
            file("/d.rs", 10),
            file("/d.rs", 20),
            file("/e.rs", 10),
        ];
        let out = budget_files(files);
        let paths: Vec<&str> = out.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["/d.rs", "/e.rs"]);
        assert!(!out[0].truncated);
        assert_eq!(out[0].content, "z".repeat(10));
        assert_eq!(out[0].tokens, 3);
    }

    /// Tokens of a restored file's attachment as sent (path and wrapper included).
    fn sent_file(f: &RestoredFile) -> u64 {
        text_tokens(&file_attachment_text(f))
    }

    /// Tokens of a restored skill's attachment as sent (name and wrapper included).
    fn sent_skill(s: &RestoredSkill) -> u64 {
        text_tokens(&skill_attachment_text(s))
    }

    #[test]
    fn a_file_over_the_total_is_skipped_and_a_smaller_one_tried() {
        let budget = FileBudget {
            max_files: 5,
            max_tokens_per_file: 1_000,
            total_tokens: 1_600,
        };
        // Sizes as sent: the content, the path and the sentence around it.
        let files = vec![
            file("/big1", 10_000), // cut to 1000: 1033 sent
            file("/big2", 10_000), // 1033 more would exceed 1600: skipped
            file("/small", 1_600), // 400: 417 sent, fits (1450)
            file("/tiny", 400),    // 100: 117 sent, fits (1567)
            file("/last", 200),    // 50: 67 sent, would exceed
        ];
        let out = budget_files_with(files, &budget);
        let paths: Vec<&str> = out.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["/big1", "/small", "/tiny"]);
        assert_eq!(out[0].tokens, 1_000);
        let total: u64 = out.iter().map(sent_file).sum();
        assert_eq!(total, 1_567);
    }

    /// A file's path is sent in its attachment: one whose path alone exceeds the total is
    /// not restored (before, only its content counted and the path came on top).
    #[test]
    fn a_file_path_counts_against_the_total() {
        let long = format!("/{}", "p".repeat(250_000)); // 62,500 tokens of path
        let out = budget_files(vec![
            (long, "fn main() {}".into()),
            ("/short.rs".into(), "fn a() {}".into()),
        ]);
        let paths: Vec<&str> = out.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, vec!["/short.rs"]);
        assert!(out.iter().map(sent_file).sum::<u64>() <= POST_COMPACT_TOKEN_BUDGET);
    }

    #[test]
    fn file_budget_is_deterministic() {
        let files: Vec<_> = (0..7)
            .map(|i| file(&format!("/f{i}"), 3_000 * (i + 1)))
            .collect();
        assert_eq!(budget_files(files.clone()), budget_files(files));
    }

    // --- skills ---

    fn skill(name: &str, units: usize) -> SkillInfo {
        SkillInfo {
            name: name.into(),
            content: "s".repeat(units),
        }
    }

    #[test]
    fn skills_are_cut_per_skill_and_within_the_total() {
        let skills: Vec<_> = (0..8).map(|i| skill(&format!("k{i}"), 40_000)).collect();
        let out = budget_skills(&skills);
        // 4 × (5000 + their names and wrappers), then the 5th cut to what remains.
        assert_eq!(out.len(), 5);
        for s in &out[..4] {
            assert!(s.truncated);
            assert_eq!(s.tokens, POST_COMPACT_MAX_TOKENS_PER_SKILL);
            assert_eq!(s.tokens, text_tokens(&s.content));
        }
        assert!(out[4].truncated);
        assert!(out[4].tokens < POST_COMPACT_MAX_TOKENS_PER_SKILL && out[4].tokens > 4_800);
        let total: u64 = out.iter().map(sent_skill).sum();
        assert!(total <= POST_COMPACT_SKILLS_TOKEN_BUDGET);
        assert!(total >= POST_COMPACT_SKILLS_TOKEN_BUDGET - 2);
    }

    #[test]
    fn truncating_beats_dropping_down_to_the_useful_minimum() {
        // 4 × 5031 (5000 of content, 31 of name and wrapper) + 4023 = 24,147 → 853 left:
        // the next big skill is cut to 822 (853 less its 30-token wrapper, less 1 for the
        // rounding of the whole text).
        let mut skills: Vec<_> = (0..4).map(|i| skill(&format!("k{i}"), 40_000)).collect();
        skills.push(skill("k4", 16_000)); // 4,000 tokens, whole
        skills.push(skill("k5", 40_000)); // cut to what remains
        skills.push(skill("k6", 8)); // 2 tokens (+23 of wrapper): nothing left
        let out = budget_skills(&skills);
        let names: Vec<&str> = out.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["k0", "k1", "k2", "k3", "k4", "k5"]);
        assert!(!out[4].truncated);
        assert_eq!(out[4].tokens, 4_000);
        assert!(out[5].truncated);
        assert_eq!(out[5].tokens, 822);
        let total: u64 = out.iter().map(sent_skill).sum();
        assert!(total <= POST_COMPACT_SKILLS_TOKEN_BUDGET);
    }

    #[test]
    fn below_the_useful_minimum_a_skill_is_skipped_but_a_small_one_still_fits() {
        // 4 × 5031 + 4,723 (4,700 and its wrapper) → 153 left.
        let mut skills: Vec<_> = (0..4).map(|i| skill(&format!("k{i}"), 40_000)).collect();
        skills.push(skill("k4", 18_800)); // 4,700 tokens
        skills.push(skill("big", 40_000)); // would need cutting to 122 < 500: skipped
        skills.push(skill("medium", 800)); // 200 tokens + 24 of wrapper: does not fit
        skills.push(skill("small", 200)); // 74 tokens with its wrapper: fits whole
        skills.push(skill("", 0)); // empty: skipped
        let out = budget_skills(&skills);
        let names: Vec<&str> = out.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, vec!["k0", "k1", "k2", "k3", "k4", "small"]);
        assert!(!out[5].truncated);
        let total: u64 = out.iter().map(sent_skill).sum();
        assert!(total <= POST_COMPACT_SKILLS_TOKEN_BUDGET);
        assert_eq!(total, 24_921);
    }

    /// Many small skills: each attachment's name and wrapper count, so the restored
    /// attachments stay within the 25,000-token budget (before, 2,000 skills of a few words
    /// restored some 56,000 tokens: only their contents were counted).
    #[test]
    fn many_small_skills_stay_within_the_budget_as_sent() {
        let skills: Vec<_> = (0..2_000)
            .map(|i| SkillInfo {
                name: format!("skill-{i}"),
                content: format!("use tabs {i}"),
            })
            .collect();
        let out = budget_skills(&skills);
        let total: u64 = out.iter().map(sent_skill).sum();
        assert!(total <= POST_COMPACT_SKILLS_TOKEN_BUDGET, "{total}");
        assert!(total > POST_COMPACT_SKILLS_TOKEN_BUDGET - 30, "{total}");
        assert!(out.len() > 500 && out.len() < 2_000, "{}", out.len());
        // In the caller's order: the first ones are restored.
        assert_eq!(out[0].name, "skill-0");
    }

    /// A name longer than MAX_SKILL_NAME_UNITS is cut (head and an ellipsis); the restored
    /// skill and its attachment carry the cut name.
    #[test]
    fn an_absurdly_long_skill_name_is_cut() {
        let out = budget_skills(&[SkillInfo {
            name: "n".repeat(60_000),
            content: "short skill".into(),
        }]);
        assert_eq!(out.len(), 1);
        assert_eq!(utf16_len(&out[0].name), MAX_SKILL_NAME_UNITS);
        assert!(out[0].name.ends_with('\u{2026}'));
        assert!(sent_skill(&out[0]) < 100);
        assert_eq!(skill_name("tabs"), "tabs");
        // Never inside a surrogate pair.
        let emoji = "\u{1F600}".repeat(150);
        assert!(utf16_len(&skill_name(&emoji)) <= MAX_SKILL_NAME_UNITS);
    }

    #[test]
    fn skill_head_is_kept() {
        let content = format!("INSTRUCTIONS FIRST\n{}", "detail ".repeat(10_000));
        let out = budget_skills(&[SkillInfo {
            name: "s".into(),
            content,
        }]);
        assert!(out[0].content.starts_with("INSTRUCTIONS FIRST\n"));
        assert!(out[0].content.ends_with(TRUNCATION_MARKER));
        assert!(out[0].tokens <= POST_COMPACT_MAX_TOKENS_PER_SKILL);
    }

    // --- presence ---

    #[test]
    fn presence_verbatim_prefix_and_numbered() {
        let short = "fn main() {}\n";
        assert!(content_present_in(&["before fn main() {} after"], short));
        assert!(!content_present_in(&["fn main() { }"], short));
        assert!(!content_present_in(&[], short));
        assert!(!content_present_in(&["anything"], "   \n"));

        // A long file counts as present when its first 1,000 characters are.
        let long: String = (0..200).map(|i| format!("line {i}\n")).collect();
        let first_k: String = long.chars().take(PRESENCE_PREFIX_CHARS).collect();
        assert!(content_present_in(&[first_k.as_str()], &long));
        let first_500: String = long.chars().take(500).collect();
        assert!(!content_present_in(&[first_500.as_str()], &long));

        // Line-numbered tool output holds the file too.
        let numbered: String = short
            .lines()
            .enumerate()
            .map(|(i, l)| format!("{:>6}→{l}\n", i + 1))
            .collect();
        assert!(content_present_in(&[numbered.as_str()], short));
        let tabbed: String = long
            .lines()
            .enumerate()
            .map(|(i, l)| format!("{}\t{l}\n", i + 1))
            .collect();
        assert!(content_present_in(&[tabbed.as_str()], &long));
    }

    #[test]
    fn kept_texts_reads_every_place_content_can_be() {
        let msgs = Message::parse_all(json!([
            {"role": "user", "content": "plain"},
            {"role": "assistant", "content": [{"type": "text", "text": "said"},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a"}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "result string"},
                {"type": "tool_result", "tool_use_id": "t2", "content": [{"type": "text", "text": "nested"}]}]},
            {"type": "attachment", "uuid": "u", "attachment": {"type": "restored_file", "path": "/a", "content": "restored"}},
            {"type": "user", "uuid": "v", "message": {"role": "user", "content": "line text"}}
        ]))
        .unwrap();
        assert_eq!(
            kept_texts(&msgs),
            vec![
                "plain",
                "said",
                "result string",
                "nested",
                "restored",
                "line text"
            ]
        );
    }

    // --- messages ---

    #[test]
    fn file_messages_in_both_shapes() {
        let f = RestoredFile {
            path: "/src/a.rs".into(),
            content: "fn a() {}".into(),
            tokens: 2,
            truncated: false,
        };
        let api = file_attachment_message(&f, false, Some("ignored"));
        assert_eq!(api.kind(), Kind::User);
        assert!(!api.is_transcript());
        let Some(Content::Text(t)) = api.content() else {
            panic!("text content")
        };
        assert!(t.contains("/src/a.rs"));
        assert!(t.ends_with("fn a() {}"));
        assert!(!t.contains("beginning"));
        assert_eq!(api.to_value()["uuid"], Value::Null);

        let cut = RestoredFile {
            truncated: true,
            ..f.clone()
        };
        let Some(Content::Text(t)) = file_attachment_message(&cut, false, None)
            .content()
            .cloned()
        else {
            panic!("text content")
        };
        assert!(t.contains("only the beginning"));

        let line = file_attachment_message(&f, true, Some("u-1"));
        assert_eq!(line.kind(), Kind::Attachment);
        assert_eq!(line.attachment_type(), Some(RESTORED_FILE_ATTACHMENT));
        assert_eq!(
            line.to_value(),
            json!({"type": "attachment", "uuid": "u-1", "attachment": {
                "type": "restored_file", "path": "/src/a.rs", "content": "fn a() {}", "truncated": false}})
        );
        let no_uuid = file_attachment_message(&f, true, None).to_value();
        assert!(no_uuid.get("uuid").is_none());
        // It parses back as a message and the token estimate sees it.
        let back = Message::from_value(line.to_value(), "m").unwrap();
        assert_eq!(back, line);
        assert!(crate::measure::tokens::estimate_message([line].as_slice(), 0).unwrap() > 0);
    }

    #[test]
    fn skill_messages_in_both_shapes() {
        let s = RestoredSkill {
            name: "pdf".into(),
            content: "Use the tool.".into(),
            tokens: 3,
            truncated: true,
        };
        let api = skill_attachment_message(&s, false, None);
        let Some(Content::Text(t)) = api.content() else {
            panic!("text content")
        };
        assert!(t.contains("\"pdf\""));
        assert!(t.contains("only the beginning"));
        assert!(t.ends_with("Use the tool."));
        let line = skill_attachment_message(&s, true, Some("u-2"));
        assert_eq!(
            line.to_value(),
            json!({"type": "attachment", "uuid": "u-2", "attachment": {
                "type": "restored_skill", "name": "pdf", "content": "Use the tool.", "truncated": true}})
        );
    }

    #[test]
    fn end_to_end_pipeline() {
        let kept = Message::parse_all(json!([
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "     1→pub fn kept() {}\n"}]}
        ]))
        .unwrap();
        let snapshot = vec![
            snap("/kept.rs", Some("pub fn kept() {}\n"), 30.),
            snap("/new.rs", Some("pub fn new() {}\n"), 20.),
            snap("/logo.png", None, 40.),
            snap("/unknown.rs", None, 10.),
        ];
        let texts = kept_texts(&kept);
        let prepared = KeptContent::new(&texts);
        let excluded = |p: &str| {
            snapshot
                .iter()
                .find(|f| f.path == p)
                .and_then(|f| f.content.as_deref())
                .is_some_and(|c| prepared.contains_file(c))
        };
        assert!(content_present_in(&texts, "pub fn kept() {}\n"));
        let picked = select_files(&snapshot, &excluded);
        assert_eq!(picked, vec![1, 3]);
        let files: Vec<(String, String)> = picked
            .iter()
            .map(|&i| {
                let f = &snapshot[i];
                let content = f
                    .content
                    .clone()
                    .unwrap_or_else(|| "// read fresh\n".into());
                (f.path.clone(), content)
            })
            .collect();
        let restored = budget_files(files);
        assert_eq!(restored.len(), 2);
        let msgs: Vec<Message> = restored
            .iter()
            .map(|f| file_attachment_message(f, false, None))
            .collect();
        assert!(msgs.iter().all(|m| m.kind() == Kind::User));
    }
}
