//! Token accounting (SPEC §3).
//!
//! The exact size of the context is known only where the API reported it: the `usage` of the
//! latest response. Everything after that response is estimated from text length.

use crate::measure::calibration::{Calibration, Observed};
use crate::model::error::{Error, Result};
use crate::model::messages::{Kind, Message};
use crate::model::number::Plain;
use crate::model::view::{
    utf16_len, BlockInfo, BlockKind, ContentInfo, ConversationView, Detail, Find, Latest,
    UsageCounts,
};

/// Characters (UTF-16 code units) per token for prose.
pub const BYTES_PER_TOKEN: f64 = 4.0;
/// Characters per token for JSON (tool inputs, structured payloads).
pub const JSON_BYTES_PER_TOKEN: f64 = 2.0;
/// Fixed token cost of an image or a document block.
pub const MEDIA_TOKENS: u64 = 2_000;
/// Token cost of a `tool_reference` block: the definition of the tool a tool search loaded,
/// which the API adds to the context and the block itself does not hold. Measured on real
/// Claude Code sessions: two references to MCP tools added 1,482 tokens of input (about 740
/// each); the block's own JSON is a dozen tokens.
pub const TOOL_REFERENCE_TOKENS: u64 = 700;

/// `roughTokenCountEstimation`: `units / bytes_per_token`, rounded.
///
/// `units` is the text length in UTF-16 code units (JavaScript's `string.length`).
/// A non-positive or non-finite `bytes_per_token` falls back to 4.
pub fn rough_token_count(units: usize, bytes_per_token: f64) -> u64 {
    let bpt = if bytes_per_token.is_finite() && bytes_per_token > 0.0 {
        bytes_per_token
    } else {
        BYTES_PER_TOKEN
    };
    // The estimate's own divisors in whole numbers (what the float division rounds half up
    // to, exactly, for any length a string can have): no float rounding call per block.
    let u = units as u64;
    if u < 1 << 52 {
        if bpt == BYTES_PER_TOKEN {
            return (u + 2) / 4;
        }
        if bpt == JSON_BYTES_PER_TOKEN {
            return u.div_ceil(2);
        }
    }
    (units as f64 / bpt).round() as u64
}

/// `roughTokenCountEstimation` as the API takes it: a `bytes_per_token` that is not a positive
/// finite number is an `INVALID_ARGUMENT` (not silently replaced by 4).
pub fn rough_token_count_checked(units: usize, bytes_per_token: f64) -> Result<u64> {
    if !bytes_per_token.is_finite() || bytes_per_token <= 0.0 {
        return Err(Error::invalid_argument(
            "bytesPerToken must be a positive number",
        ));
    }
    let n = units as f64 / bytes_per_token;
    if n.round() > MAX_SAFE_COUNT as f64 {
        return Err(Error::invalid_argument(format!(
            "bytesPerToken {} is too small: the count would exceed 2^53 - 1, the largest exact JavaScript integer",
            crate::model::number::js_text(bytes_per_token)
        )));
    }
    Ok(rough_token_count(units, bytes_per_token))
}

/// The largest count a JS number holds exactly (`Number.MAX_SAFE_INTEGER`).
pub const MAX_SAFE_COUNT: u64 = (1 << 53) - 1;

/// Estimated tokens of a text (SPEC §3): its UTF-16 length / [`BYTES_PER_TOKEN`], rounded.
pub fn text_tokens(text: &str) -> u64 {
    rough_token_count(utf16_len(text), BYTES_PER_TOKEN)
}

/// Estimated tokens of one block.
pub fn estimate_block(b: &BlockInfo) -> u64 {
    let nested = if matches!(
        b.kind,
        Some(BlockKind::ToolResult) | Some(BlockKind::ServerToolResult)
    ) {
        b.nested.iter().map(estimate_block).sum()
    } else {
        0
    };
    if b.is_plain_text {
        return rough_token_count(b.text_units, BYTES_PER_TOKEN);
    }
    block_tokens(b.kind, b.text_units, b.json_units, nested)
}

/// Estimated tokens of a block of `kind` with `text_units` of text and `json_units` of JSON;
/// `nested` is the estimate of its nested blocks, which only a tool result (client or
/// server) counts. The rule
/// [`estimate_block`] applies, for readers that have the lengths without a [`BlockInfo`].
pub fn block_tokens(
    kind: Option<BlockKind>,
    text_units: usize,
    json_units: usize,
    nested: u64,
) -> u64 {
    match kind {
        Some(BlockKind::Image) => MEDIA_TOKENS,
        // A document of media, and the text it holds besides (its `context`, the text blocks
        // of a `content` source with images).
        Some(BlockKind::Document) => MEDIA_TOKENS + rough_token_count(text_units, BYTES_PER_TOKEN),
        Some(BlockKind::ToolResult) => rough_token_count(text_units, BYTES_PER_TOKEN) + nested,
        // The name and JSON input at the JSON rate; a free-form (string) input is text.
        Some(BlockKind::ToolUse) | Some(BlockKind::ServerToolUse) => {
            rough_token_count(json_units, JSON_BYTES_PER_TOKEN)
                + rough_token_count(text_units, BYTES_PER_TOKEN)
        }
        // A server tool's result: its JSON, and the media inside it (`nested`).
        Some(BlockKind::ServerToolResult) => {
            rough_token_count(json_units, BYTES_PER_TOKEN) + nested
        }
        // The definition of the tool it loads, which the block does not hold.
        Some(BlockKind::ToolReference) => TOOL_REFERENCE_TOKENS,
        Some(BlockKind::Other) | None => rough_token_count(json_units, BYTES_PER_TOKEN),
        Some(BlockKind::Text) | Some(BlockKind::Thinking) | Some(BlockKind::RedactedThinking) => {
            rough_token_count(text_units, BYTES_PER_TOKEN)
        }
    }
}

/// Estimated tokens of a tool result with `text_units` of text and `media` images/documents.
pub fn estimate_tool_result(text_units: usize, media: usize) -> u64 {
    rough_token_count(text_units, BYTES_PER_TOKEN) + media as u64 * MEDIA_TOKENS
}

/// Estimated tokens of a message's content.
pub fn estimate_content(c: &ContentInfo) -> u64 {
    match c {
        ContentInfo::None => 0,
        ContentInfo::Text(units) => rough_token_count(*units, BYTES_PER_TOKEN),
        ContentInfo::Blocks(bs) => bs.iter().map(estimate_block).sum(),
        ContentInfo::Json(units) => rough_token_count(*units, BYTES_PER_TOKEN),
    }
}

/// Whether message `i` is part of what is sent to the model: user, assistant and attachment
/// messages of the main chain, and system messages given as messages (`role: 'system'` or
/// `'developer'`, which the model reads as instructions; Claude Code's system lines are
/// local notes and are not sent).
pub fn is_sent<V: ConversationView + ?Sized>(view: &V, i: usize) -> Result<bool> {
    Ok(match view.kind(i)? {
        Kind::User | Kind::Assistant | Kind::Attachment => !view.is_sidechain(i),
        Kind::System => !view.is_transcript(i),
        Kind::Other => false,
    })
}

/// Whether message `i` is sent and the model reads it: [`is_sent`], except a system message
/// with `clear_at: "next_user_message"` once a later user message exists (the Messages API
/// keeps it in the request, unchanged, but no longer shows it to the model). Counts read this;
/// what is kept or dropped reads [`is_sent`].
pub fn is_read<V: ConversationView + ?Sized>(view: &V, i: usize) -> Result<bool> {
    Ok(is_sent(view, i)? && !is_cleared(view, i)?)
}

/// Whether message `i` is a sent reminder the model no longer reads (see [`is_read`]).
pub fn is_cleared<V: ConversationView + ?Sized>(view: &V, i: usize) -> Result<bool> {
    Ok(view.clears_at_next_user(i) && !view.is_transcript(i) && view.user_after(i)?)
}

/// Estimated tokens of message `i` (0 for lines that are not sent to the model, and for
/// reminders it no longer reads: [`is_read`]).
pub fn estimate_message<V: ConversationView + ?Sized>(view: &V, i: usize) -> Result<u64> {
    if !is_read(view, i)? {
        return Ok(0);
    }
    Ok(estimate_content(&view.content(i, Detail::Estimate)?))
}

/// Estimated tokens of messages `range`.
pub fn estimate_range<V: ConversationView + ?Sized>(
    view: &V,
    range: std::ops::Range<usize>,
) -> Result<u64> {
    estimate_selected(view, range, |_| true)
}

/// Estimated tokens of the messages at `indices` (ascending), read in one pass.
pub fn estimate_indices<V: ConversationView + ?Sized>(
    view: &V,
    indices: Vec<usize>,
) -> Result<u64> {
    let (Some(&lo), Some(&hi)) = (indices.first(), indices.last()) else {
        return Ok(0);
    };
    estimate_selected(view, lo..hi + 1, |i| indices.binary_search(&i).is_ok())
}

/// Estimated tokens of the messages of `range` that `keep` selects and that the model reads
/// ([`is_read`]), read
/// in one pass: the contents from the first to the last of them in one read. Allocates
/// nothing but the read contents. `keep` is asked in ascending order, up to twice per
/// message.
fn estimate_selected<V, F>(view: &V, range: std::ops::Range<usize>, mut keep: F) -> Result<u64>
where
    V: ConversationView + ?Sized,
    F: FnMut(usize) -> bool,
{
    estimate_where(view, range, |i| Ok(keep(i) && is_read(view, i)?))
}

/// Estimated tokens of the messages of `range` that `pick` selects (the caller knows they
/// are sent), their contents read from the first to the last of them in one pass and
/// estimated as they are decoded. `pick` is asked in ascending order, twice per message.
fn estimate_where<V, F>(view: &V, range: std::ops::Range<usize>, mut pick: F) -> Result<u64>
where
    V: ConversationView + ?Sized,
    F: FnMut(usize) -> Result<bool>,
{
    let mut bounds: Option<(usize, usize)> = None;
    for i in range {
        if pick(i)? {
            bounds = Some((bounds.map_or(i, |b| b.0), i));
        }
    }
    let Some((lo, hi)) = bounds else {
        return Ok(0);
    };
    let mut total = 0;
    view.each_content(lo..hi + 1, Detail::Estimate, &mut |i, c| {
        if pick(i)? {
            total += estimate_content(c);
        }
        Ok(())
    })?;
    Ok(total)
}

/// The caller's tokenizer (`tokenCounter`), as the core calls it: a count of `text` in the
/// caller's tokens. The bindings implement it with the JS function.
pub trait TextCounter {
    /// The tokenizer's count of `text`: `Ok(None)` when it answered with no number,
    /// `Err(why)` when it threw.
    fn count(&self, text: &str) -> std::result::Result<Option<f64>, String>;
    /// How errors name it (`context.tokenCounter`).
    fn name(&self) -> &str;
}

/// A tokenizer with twice the estimate's tokens (2 characters a token), for the tests of the
/// counts made in a caller's tokens.
#[cfg(test)]
pub(crate) struct TwoCharsAToken;

#[cfg(test)]
impl TextCounter for TwoCharsAToken {
    fn count(&self, text: &str) -> std::result::Result<Option<f64>, String> {
        Ok(Some(crate::model::view::utf16_len(text) as f64 / 2.0))
    }
    fn name(&self) -> &str {
        "tokenCounter"
    }
}

/// [`Lengths`](crate::model::view::Lengths) by a caller's tokenizer: each text's count times
/// the units per token the estimate divides by, so that every estimate of a view measured so
/// comes out in the caller's tokens (what `js_view.js` does for the caller's own objects, by
/// the same rules). The tokenizer's first problem is kept ([`Counted::check`]); the text's
/// UTF-16 length stands in for its count meanwhile.
pub struct Counted<'a> {
    counter: &'a dyn TextCounter,
    problem: std::cell::RefCell<Option<String>>,
}

impl<'a> Counted<'a> {
    /// Lengths measured by `counter`.
    pub fn new(counter: &'a dyn TextCounter) -> Self {
        Counted {
            counter,
            problem: std::cell::RefCell::new(None),
        }
    }

    /// The tokenizer's first problem so far as an `INVALID_ARGUMENT` error (it threw,
    /// answered no finite count ≥ 0, or more tokens than the text has bytes).
    pub fn check(&self) -> Result<()> {
        match self.problem.borrow_mut().take() {
            Some(why) => Err(Error::invalid_argument(why)),
            None => Ok(()),
        }
    }

    fn problem(&self, why: impl FnOnce() -> String) {
        let mut p = self.problem.borrow_mut();
        if p.is_none() {
            *p = Some(why());
        }
    }

    /// `text` in units: its count × `per_token`; a non-empty text is never 0.
    fn units(&self, text: &str, per_token: f64) -> usize {
        let len = utf16_len(text);
        // Its first problem is the answer ([`Counted::check`]): the tokenizer is not asked
        // again (a failing one was called for every text of a compaction).
        if self.problem.borrow().is_some() {
            return len;
        }
        let n = match self.counter.count(text) {
            Err(why) => {
                self.problem(|| format!("{} threw: {why}", self.counter.name()));
                return len;
            }
            Ok(Some(n)) if n.is_finite() && n >= 0.0 => n,
            Ok(n) => {
                self.problem(|| {
                    format!(
                        "{} must return a finite number ≥ 0; it returned {}",
                        self.counter.name(),
                        n.map_or("no number".to_string(), |n| Plain(n).to_string())
                    )
                });
                return len;
            }
        };
        // No tokenizer gives more tokens than the text has UTF-8 bytes (at most 3 per UTF-16
        // unit).
        if n > 4.0 * len as f64 + 16.0 {
            self.problem(|| {
                format!(
                    "{} returned {} tokens for a text of {len} characters: more than any tokenizer gives",
                    self.counter.name(),
                    Plain(n)
                )
            });
            return len;
        }
        let units = (n.round() * per_token).min(u32::MAX as f64 - 1.0) as usize;
        if units == 0 && len > 0 {
            1
        } else {
            units
        }
    }
}

impl crate::model::view::Lengths for Counted<'_> {
    fn text(&self, s: &str) -> usize {
        self.units(s, BYTES_PER_TOKEN)
    }
    fn call(&self, name: &str, input: Option<&serde_json::Value>) -> usize {
        // The name and the arguments' JSON (a string input is JSON already), as one text.
        let args = match input {
            None => "{}".to_string(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v) => crate::model::view::json_text(v),
        };
        self.units(&format!("{name}{args}"), JSON_BYTES_PER_TOKEN)
    }
    fn json(&self, v: &serde_json::Value) -> usize {
        self.units(&crate::model::view::json_text(v), BYTES_PER_TOKEN)
    }
    fn readable(
        &self,
        o: &serde_json::Map<String, serde_json::Value>,
        media: &mut Vec<BlockKind>,
    ) -> usize {
        let text = crate::model::view::readable_object_text(o, media);
        self.units(&text, BYTES_PER_TOKEN)
    }
}

/// Typed messages whose estimates are in a caller's tokens: the view of `[Message]` with the
/// texts measured by [`Counted`]. A problem of the tokenizer fails the read that met it.
pub struct CountedMessages<'a> {
    messages: &'a [Message],
    lengths: Counted<'a>,
}

impl<'a> CountedMessages<'a> {
    /// `messages` counted by `counter`.
    pub fn new(messages: &'a [Message], counter: &'a dyn TextCounter) -> Self {
        CountedMessages {
            messages,
            lengths: Counted::new(counter),
        }
    }
}

impl ConversationView for CountedMessages<'_> {
    fn len(&self) -> usize {
        self.messages.len()
    }
    fn kind(&self, i: usize) -> Result<Kind> {
        self.messages.kind(i)
    }
    fn is_transcript(&self, i: usize) -> bool {
        self.messages.is_transcript(i)
    }
    fn usage(&self, i: usize) -> Result<Option<UsageCounts>> {
        self.messages.usage(i)
    }
    fn message_id(&self, i: usize) -> Option<String> {
        self.messages.message_id(i)
    }
    fn same_response(&self, i: usize, j: usize) -> bool {
        self.messages.same_response(i, j)
    }
    fn usage_is_partial(&self, i: usize) -> bool {
        self.messages.usage_is_partial(i)
    }
    fn is_sidechain(&self, i: usize) -> bool {
        self.messages.is_sidechain(i)
    }
    fn on_other_branch(&self, i: usize) -> bool {
        self.messages.on_other_branch(i)
    }
    fn has_other_branches(&self) -> bool {
        self.messages.has_other_branches()
    }
    fn is_compact_boundary(&self, i: usize) -> bool {
        self.messages.is_compact_boundary(i)
    }
    fn starts_context(&self, i: usize) -> bool {
        self.messages.starts_context(i)
    }

    fn is_window_input(&self, i: usize) -> bool {
        self.messages.is_window_input(i)
    }

    fn is_opaque_item(&self, i: usize) -> bool {
        self.messages.is_opaque_item(i)
    }
    fn clears_at_next_user(&self, i: usize) -> bool {
        self.messages.clears_at_next_user(i)
    }
    fn boundary_kept(&self, i: usize) -> usize {
        self.messages.boundary_kept(i)
    }
    fn attachment_type(&self, i: usize) -> Option<String> {
        self.messages.attachment_type(i)
    }
    fn timestamp(&self, i: usize) -> Option<String> {
        self.messages.timestamp(i)
    }
    fn uuid(&self, i: usize) -> Option<String> {
        self.messages.uuid(i)
    }
    fn content_equals(&self, i: usize, text: &str) -> bool {
        self.messages.content_equals(i, text)
    }
    fn content(&self, i: usize, detail: Detail) -> Result<ContentInfo> {
        let c = crate::model::view::message_content(&self.messages[i], detail, &self.lengths);
        self.lengths.check()?;
        Ok(c)
    }
}

/// [`estimate_range`] of all `messages`, in the tokens of `counter` when given.
pub fn estimate_all(messages: &[Message], counter: Option<&dyn TextCounter>) -> Result<u64> {
    match counter {
        Some(c) => estimate_range(&CountedMessages::new(messages, c), 0..messages.len()),
        None => estimate_range(messages, 0..messages.len()),
    }
}

/// [`token_count_with_estimation`] of `messages`, in the tokens of `counter` when given.
pub fn token_count_counted(
    messages: &[Message],
    counter: Option<&dyn TextCounter>,
) -> Result<TokenCount> {
    match counter {
        Some(c) => token_count_with_estimation(&CountedMessages::new(messages, c)),
        None => token_count_with_estimation(messages),
    }
}

/// [`text_tokens`] of `text`, in the tokens of `counter` when given.
pub fn text_tokens_counted(text: &str, counter: Option<&dyn TextCounter>) -> Result<u64> {
    match counter {
        Some(c) => {
            let lengths = Counted::new(c);
            let units = crate::model::view::Lengths::text(&lengths, text);
            lengths.check()?;
            Ok(rough_token_count(units, BYTES_PER_TOKEN))
        }
        None => Ok(text_tokens(text)),
    }
}

/// Index of the first message after the last main-chain `compact_boundary` line, or of the
/// last message that begins with the API's `compaction` block when that comes later (0 if
/// neither): what precedes them is no longer sent (or read by the API).
pub fn active_start<V: ConversationView + ?Sized>(view: &V) -> Result<usize> {
    let boundary = Find {
        boundary: true,
        ..Find::default()
    };
    Ok(match view.rfind(view.len(), boundary)? {
        None => 0,
        Some(s) if view.starts_context(s) && !view.is_compact_boundary(s) => s,
        Some(b) => b + 1,
    })
}

/// Where the exact part of a token count comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenCount {
    /// The total: usage of the anchor response plus the estimate of what follows.
    pub total: u64,
    /// Tokens taken from API usage (0 when no response carries usage).
    pub from_usage: u64,
    /// Tokens estimated from text.
    pub estimated: u64,
    /// Index of the last line of the response whose usage anchors the count.
    pub anchor: Option<usize>,
    /// Index of the first line of that response (with split responses, lines sharing
    /// `message.id` run from `anchor_first` to `anchor`).
    pub anchor_first: Option<usize>,
    /// Nothing anchors the count, and the total is the line learned from the usage seen
    /// before the context began (see [`Calibration`]): the system prompt and tools are in it.
    pub calibrated: bool,
}

/// `tokenCountWithEstimation`: context size of `messages` in tokens.
///
/// The latest main-chain assistant message carrying `usage` gives the exact size of its
/// request (`input + cache_creation + cache_read`) plus its response (`output`). A response
/// split over several lines sharing `message.id` counts once. Claude Code logs usage while
/// the response streams (`stop_reason: null`), so `output` may be a token or two: such a
/// response counts as the estimate of its lines' content when that is larger. Everything after the response's first
/// line that is not one of its own lines (e.g. tool results interleaved with parallel calls)
/// is estimated. With no usage anywhere, every message is estimated. Messages before the
/// last `compact_boundary` are not counted.
///
/// Reads only the messages after the anchor response (plus a backward scan to find it).
pub fn token_count_with_estimation<V: ConversationView + ?Sized>(view: &V) -> Result<TokenCount> {
    token_count_given(view, None)
}

/// What a request sends besides the messages, when the caller gives it: the system prompt
/// (its text length) and the tool definitions (their JSON length). The messages alone never
/// show them, and in an agent they are often the largest part of the first request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Preamble {
    /// UTF-16 length of the system prompt's text.
    pub system_units: usize,
    /// Length of the tool definitions as JSON.
    pub tools_units: usize,
}

impl Preamble {
    /// Its estimated tokens: the system prompt as prose, the tools as JSON.
    pub fn tokens(&self) -> u64 {
        rough_token_count(self.system_units, BYTES_PER_TOKEN)
            + rough_token_count(self.tools_units, JSON_BYTES_PER_TOKEN)
    }
}

/// `count` where no usage anchors it as the learned line `fit` gives it (a `Compactor`'s,
/// passed back by the caller), instead of what the messages alone give.
pub fn with_calibration(
    count: TokenCount,
    fit: Option<crate::measure::calibration::Fit>,
) -> TokenCount {
    match fit {
        Some(f) if count.anchor.is_none() => TokenCount {
            total: f.predict(count.estimated),
            calibrated: true,
            ..count
        },
        _ => count,
    }
}

/// `count` with the preamble added where the count is an estimate: usage (an anchor) already
/// includes what the request sent besides the messages.
pub fn with_preamble(count: TokenCount, preamble: Option<Preamble>) -> TokenCount {
    match preamble {
        Some(p) if count.anchor.is_none() && !count.calibrated => {
            let t = p.tokens();
            TokenCount {
                total: count.total + t,
                estimated: count.estimated + t,
                ..count
            }
        }
        _ => count,
    }
}

/// Usage the caller gives for messages that carry none (the AI SDK's, OpenAI's): what the
/// provider reported for the response at message `at` (`None`: the last assistant message).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GivenUsage {
    /// The response the usage belongs to; `None` for the last assistant message.
    pub at: Option<usize>,
    /// The usage, in the Messages API's terms.
    pub usage: UsageCounts,
}

/// [`token_count_with_estimation`] with usage given by the caller: it anchors the count like
/// usage carried by message `given.at`, unless a later message carries its own (or a
/// boundary or compaction block comes after it). An `at` past the end is an error.
pub fn token_count_given<V: ConversationView + ?Sized>(
    view: &V,
    given: Option<GivenUsage>,
) -> Result<TokenCount> {
    let len = view.len();
    // The latest main-chain response with usage, unless a boundary comes first.
    let latest = view.latest_usage(len)?;
    let latest = match given {
        None => latest,
        Some(g) => {
            let at = match g.at {
                Some(at) if at < len => Some(at),
                Some(at) => {
                    return Err(Error::invalid_argument(format!(
                        "options.usageAt is {at}, past the last message (messages[{}])",
                        len.saturating_sub(1)
                    )))
                }
                None => view.rfind(
                    len,
                    Find {
                        assistant: true,
                        ..Find::default()
                    },
                )?,
            };
            match (at, latest) {
                (None, l) => l,
                (Some(at), l @ (Latest::Usage(i, _) | Latest::Boundary(i) | Latest::Start(i)))
                    if i >= at =>
                {
                    l
                }
                (Some(at), _) => Latest::Usage(at, g.usage),
            }
        }
    };
    let (last, usage) = match latest {
        Latest::Usage(i, u) => (i, u),
        other => {
            let start = match other {
                Latest::Boundary(b) => b + 1,
                Latest::Start(s) => s,
                _ => 0,
            };
            return unanchored(view, start);
        }
    };
    // Walk back over earlier lines of the same response (split responses; tool results of
    // parallel calls may sit between them). A boundary has no `message.id`, so the walk
    // stops there too.
    let mut first = last;
    while let Some(j) = view.previous_sibling(first, last)? {
        first = j;
    }
    // The response's own lines, and everything else after its first line. Lines of the
    // response after `last` (without usage of their own) are its lines too, until another
    // response starts. Marked in a scratch list kept between calls (a per-turn count
    // allocates nothing for it; a nested call finds it taken and makes its own).
    let mut marks = MARKS.with(|m| std::mem::take(&mut *m.borrow_mut()));
    let counted = classify_and_estimate(view, first, last, usage, &mut marks);
    if marks.capacity() <= 1 << 16 {
        MARKS.with(|m| *m.borrow_mut() = marks);
    }
    let (response, estimated) = counted?;
    let from_usage = usage.input_total() + usage.output_tokens;
    Ok(TokenCount {
        total: usage.input_total() + response + estimated,
        from_usage,
        estimated: estimated + (response - usage.output_tokens),
        anchor: Some(last),
        anchor_first: Some(first),
        calibrated: false,
    })
}

/// Whether a message after the anchor response's first line is one of its lines.
const OWN: u8 = 1;
/// Whether a message after the anchor response's first line is estimated besides it.
const REST: u8 = 2;

thread_local! {
    /// The marks of [`classify_and_estimate`], kept for the next count.
    static MARKS: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The anchor response's size (its output, or the estimate of its lines when its usage was
/// logged mid-stream) and the estimate of the other messages after its first line; `marks`
/// is scratch space.
fn classify_and_estimate<V: ConversationView + ?Sized>(
    view: &V,
    first: usize,
    last: usize,
    usage: UsageCounts,
    marks: &mut Vec<u8>,
) -> Result<(u64, u64)> {
    let len = view.len();
    marks.clear();
    marks.resize(len - first, 0);
    marks[0] = OWN;
    let mut closed = false;
    for k in first + 1..len {
        if !is_read(view, k)? {
            continue;
        }
        let assistant = k != last && view.kind(k)? == Kind::Assistant;
        if k == last || (assistant && !closed && view.same_response(k, last)) {
            marks[k - first] = OWN;
        } else {
            closed |= assistant && k > last;
            marks[k - first] = REST;
        }
    }
    // Usage logged while the response streamed (`stop_reason: null`, `output_tokens` of 1 or
    // 2) does not cover the response: it then counts as the larger of its reported output and
    // the estimate of its content. A finished response's usage is taken as it is.
    let response = if view.usage_is_partial(last) {
        // Marks after `first` are set on sent messages only; `first` itself may be any
        // message when the caller placed the usage (`usageAt`).
        let own = estimate_where(view, first..len, |k| {
            Ok(marks[k - first] == OWN && (k != first || is_read(view, k)?))
        })?;
        usage.output_tokens.max(own)
    } else {
        usage.output_tokens
    };
    let rest = estimate_where(view, first + 1..len, |k| Ok(marks[k - first] == REST))?;
    Ok((response, rest))
}

/// What a count at the end of a conversation reads of one message (its header), as bits: its
/// kind in bits 0–2 ([`TailMessage::kind`]) and the flags below. See [`TailRecord`]. One
/// word, so a reader hands it over in a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TailMessage(pub u32);

impl TailMessage {
    /// A transcript line.
    pub const TRANSCRIPT: u32 = 8;
    /// A sub-agent line.
    pub const SIDECHAIN: u32 = 16;
    /// A `compact_boundary` line.
    pub const BOUNDARY: u32 = 32;
    /// It carries `usage`.
    pub const HAS_USAGE: u32 = 64;
    /// Its usage was logged mid-stream (`stop_reason: null`).
    pub const PARTIAL: u32 = 256;
    /// It begins with a server-side `compaction` block.
    pub const STARTS_CONTEXT: u32 = 4096;
    /// A system message with `clear_at: "next_user_message"` ([`ConversationView::clears_at_next_user`]).
    pub const CLEARS_AT_USER: u32 = 8192;
    /// It carries the `message.id` of the response whose usage the record holds (a line of
    /// the same response; [`ConversationView::same_response`]).
    pub const SAME_RESPONSE: u32 = 1 << 16;

    /// A message of `kind` (`None`: not a message) with `flags`.
    pub fn new(kind: Option<Kind>, flags: u32) -> TailMessage {
        let code = match kind {
            Some(Kind::User) => 0,
            Some(Kind::Assistant) => 1,
            Some(Kind::System) => 2,
            Some(Kind::Attachment) => 3,
            Some(Kind::Other) => 4,
            None => 7,
        };
        TailMessage(code | (flags & !7))
    }

    /// Its kind (`None`: not a message).
    #[inline(always)]
    pub fn kind(self) -> Option<Kind> {
        match self.0 & 7 {
            0 => Some(Kind::User),
            1 => Some(Kind::Assistant),
            2 => Some(Kind::System),
            3 => Some(Kind::Attachment),
            4 => Some(Kind::Other),
            _ => None,
        }
    }

    /// Whether it has `flag`.
    #[inline(always)]
    pub fn has(self, flag: u32) -> bool {
        self.0 & flag != 0
    }

    #[inline(always)]
    fn is_assistant(self) -> bool {
        self.0 & 7 == 1
    }

    /// Whether it is read by the model ([`is_read`]), `user_after`: whether a main-chain user
    /// message comes after it.
    #[inline(always)]
    fn is_read(self, user_after: bool) -> bool {
        self.is_sent()
            && !(user_after && self.has(Self::CLEARS_AT_USER) && !self.has(Self::TRANSCRIPT))
    }

    /// Whether it is sent to the model (the rule of [`is_sent`]).
    #[inline(always)]
    fn is_sent(self) -> bool {
        match self.kind() {
            Some(Kind::User | Kind::Assistant | Kind::Attachment) => !self.has(Self::SIDECHAIN),
            Some(Kind::System) => !self.has(Self::TRANSCRIPT),
            Some(Kind::Other) | None => false,
        }
    }
}

/// The end of a conversation as one pass of the caller's side read it for a count: the
/// headers of the messages from the end back to where the count stops looking, the usage of
/// the latest response it found, and the estimate inputs of the messages after that
/// response's first line. [`count_tail`] decides the count from it, or says it cannot.
pub trait TailRecord {
    /// Number of messages in the conversation.
    fn message_count(&self) -> usize;
    /// What was read of message `i` (`None`: not read).
    fn message(&self, i: usize) -> Option<TailMessage>;
    /// The message whose usage was read, and that usage (`None`: none read, or it is not
    /// valid: the general count reports it).
    fn usage(&self) -> Option<(usize, UsageCounts)>;
    /// The estimated tokens of message `i`'s content ([`estimate_content`] of what was
    /// read); `None` when it was not read or is malformed (the general count reports it).
    fn estimate(&self, i: usize) -> Option<u64>;
}

/// One estimate pass of [`count_tail`]: the total of the picked messages, and whether every
/// message from the first picked one to the last was read well (as the general count reads
/// all of them, and reports a malformed one).
#[derive(Default)]
struct TailPass {
    total: u64,
    started: bool,
    gap: bool,
}

impl TailPass {
    /// Whether [`TailPass::see`] of the next message reads its estimate.
    #[inline(always)]
    fn reads(&self, picked: bool) -> bool {
        picked || (self.started && !self.gap)
    }

    /// Sees the next message: picked or not, its estimate (`None`: unread or malformed; only
    /// looked at when [`TailPass::reads`] says so). `None` when the pass cannot be made from
    /// the record.
    #[inline(always)]
    fn see(&mut self, picked: bool, estimate: Option<u64>) -> Option<()> {
        if picked {
            let t = estimate?;
            if self.gap {
                return None;
            }
            self.total += t;
            self.started = true;
        } else if self.started && !self.gap && estimate.is_none() {
            self.gap = true;
        }
        Some(())
    }
}

/// [`token_count_with_estimation`] from a [`TailRecord`], with no view call: the same
/// answer, decided by the same rules (the latest main-chain usage unless a boundary or a
/// context start comes first, the response's earlier lines, its own lines and the rest after
/// its first line, the mid-stream rule; with no usage in a record of every message, the
/// estimate of them all). `None` when the record does not settle it: no usage in a record
/// of only the end, a boundary or context start first, something not read or malformed in a range the
/// count reads, usage that is not valid. The caller then counts on the general path (which
/// reports what is wrong). The record holds nothing before the anchor response, so it cannot
/// show a compaction that kept that response ([`stateless_count`]'s rule): its writer makes
/// no record when a boundary that kept messages may have kept it.
#[cfg_attr(cc_speed, optimize(speed))]
pub fn count_tail<R: TailRecord + ?Sized>(r: &R) -> Option<TokenCount> {
    type M = TailMessage;
    let len = r.message_count();
    // The latest main-chain response with usage ([`ConversationView::latest_usage`]).
    let mut last = None;
    for i in (0..len).rev() {
        let m = r.message(i)?;
        m.kind()?;
        if m.has(M::SIDECHAIN) {
            continue;
        }
        if m.has(M::BOUNDARY | M::STARTS_CONTEXT) {
            return None;
        }
        if m.is_assistant() && m.has(M::HAS_USAGE) {
            last = Some(i);
            break;
        }
    }
    let Some(last) = last else {
        // Every message was read and none carries usage: the estimate of them all.
        return unanchored_tail(r);
    };
    let (at, usage) = r.usage()?;
    if at != last {
        return None;
    }
    // Its earlier lines ([`ConversationView::previous_sibling`], one after another).
    let mut first = last;
    for i in (0..last).rev() {
        let m = r.message(i)?;
        if m.has(M::BOUNDARY) {
            // The response begins right after a boundary: it may be one the compaction kept,
            // whose usage measured the old context ([`token_count_checked_from`] decides).
            return None;
        }
        if m.kind().is_none() {
            break;
        }
        if m.has(M::SIDECHAIN) {
            continue;
        }
        if m.is_assistant() {
            if !m.has(M::SAME_RESPONSE) {
                break;
            }
            first = i;
        }
    }
    // Its own lines and the rest ([`classify_and_estimate`]), both estimated in one pass.
    let partial = r.message(last)?.has(M::PARTIAL);
    // The latest main-chain user message: reminders before it are no longer read.
    let last_user = latest_user(r, first)?;
    let (mut own, mut rest) = (TailPass::default(), TailPass::default());
    let mut closed = false;
    for k in first..len {
        let m = r.message(k)?;
        let sent = m.is_read(last_user.is_some_and(|u| u > k));
        let (is_own, is_rest) = if k == first {
            (sent, false)
        } else if !sent {
            (false, false)
        } else {
            let assistant = k != last && m.is_assistant();
            if k == last || (assistant && !closed && m.has(M::SAME_RESPONSE)) {
                (true, false)
            } else {
                closed |= assistant && k > last;
                (false, true)
            }
        };
        // The estimate is read once, and only when a pass looks at it.
        let own_reads = partial && own.reads(is_own);
        let rest_reads = k > first && rest.reads(is_rest);
        let estimate = if own_reads || rest_reads {
            r.estimate(k)
        } else {
            None
        };
        if partial {
            own.see(is_own, estimate)?;
        }
        if k > first {
            rest.see(is_rest, estimate)?;
        }
    }
    let response = if partial {
        usage.output_tokens.max(own.total)
    } else {
        usage.output_tokens
    };
    Some(TokenCount {
        total: usage.input_total() + response + rest.total,
        from_usage: usage.input_total() + usage.output_tokens,
        estimated: rest.total + (response - usage.output_tokens),
        anchor: Some(last),
        anchor_first: Some(first),
        calibrated: false,
    })
}

/// The latest main-chain user message of the record from message `from` on (`Some(None)`:
/// none; `None`: a message there was not read).
#[cfg_attr(cc_speed, optimize(speed))]
fn latest_user<R: TailRecord + ?Sized>(r: &R, from: usize) -> Option<Option<usize>> {
    for k in (from..r.message_count()).rev() {
        let m = r.message(k)?;
        if m.kind() == Some(Kind::User) && !m.has(TailMessage::SIDECHAIN) {
            return Some(Some(k));
        }
    }
    Some(None)
}

/// [`count_tail`] of a record that holds every message and no usage, boundary or context
/// start: [`unanchored`] from the first message, the estimate of every message the model
/// reads.
#[cfg_attr(cc_speed, optimize(speed))]
fn unanchored_tail<R: TailRecord + ?Sized>(r: &R) -> Option<TokenCount> {
    let len = r.message_count();
    let last_user = latest_user(r, 0)?;
    let mut pass = TailPass::default();
    for k in 0..len {
        let picked = r.message(k)?.is_read(last_user.is_some_and(|u| u > k));
        let estimate = if pass.reads(picked) {
            r.estimate(k)
        } else {
            None
        };
        pass.see(picked, estimate)?;
    }
    Some(TokenCount {
        total: pass.total,
        from_usage: 0,
        estimated: pass.total,
        anchor: None,
        anchor_first: None,
        calibrated: false,
    })
}

/// [`token_count_with_estimation`], made exact after a session-memory compaction: the
/// messages it kept after the summary still carry the usage of the old context, so when the
/// anchor response began among them, everything after the boundary is estimated instead. Costs
/// a backward search for the boundary: `shouldAutoCompact` makes it where the plain count says
/// a compaction is due; `tokenCountWithEstimation` always applies it ([`stateless_count`]).
pub fn token_count_checked<V: ConversationView + ?Sized>(view: &V) -> Result<TokenCount> {
    token_count_checked_given(view, None)
}

/// [`token_count_checked`] with usage given by the caller (see [`token_count_given`]).
pub fn token_count_checked_given<V: ConversationView + ?Sized>(
    view: &V,
    given: Option<GivenUsage>,
) -> Result<TokenCount> {
    token_count_checked_from(view, token_count_given(view, given)?)
}

/// [`token_count_checked_given`] from the count [`token_count_given`] already gave (a caller
/// that has it does not count twice).
pub fn token_count_checked_from<V: ConversationView + ?Sized>(
    view: &V,
    count: TokenCount,
) -> Result<TokenCount> {
    checked_from(view, count)
}

/// `tokenCountWithEstimation`'s count: [`token_count_given`], and, where the caller gives no
/// usage (usage it gives is its latest), [`token_count_checked_from`]'s rule: a response that
/// began among the messages a compaction kept (any of them, not only the first after the
/// boundary) measured the old context, and everything after the boundary is estimated instead,
/// as `shouldAutoCompact` and the `Compactor` count it. The search for the boundary reads back
/// to the last one only. The per-turn record ([`count_tail`]) leaves such a conversation to
/// this count: its writer sends a conversation whose latest usage may sit in a kept window to
/// the general path.
pub fn stateless_count<V: ConversationView + ?Sized>(
    view: &V,
    given: Option<GivenUsage>,
) -> Result<TokenCount> {
    let count = token_count_given(view, given)?;
    if given.is_some() {
        return Ok(count);
    }
    token_count_checked_from(view, count)
}

fn checked_from<V: ConversationView + ?Sized>(view: &V, count: TokenCount) -> Result<TokenCount> {
    let Some(anchor) = count.anchor else {
        return Ok(count);
    };
    let find = Find {
        boundary: true,
        ..Find::default()
    };
    let Some(b) = view.rfind(anchor, find)? else {
        return Ok(count);
    };
    let kept = view.boundary_kept(b);
    if kept == 0 {
        return Ok(count);
    }
    // The summary and the kept messages follow the boundary (sent lines only). The anchor
    // response is stale when it began among them: a response is one measurement, so lines
    // of it written after the window carry the same old usage.
    let first = count.anchor_first.unwrap_or(anchor);
    let mut seen = 0;
    let mut stale = false;
    for k in b + 1..view.len() {
        if !is_sent(view, k)? {
            continue;
        }
        seen += 1;
        if k == first {
            stale = seen <= kept.saturating_add(1);
            break;
        }
        if seen > kept.saturating_add(1) {
            break;
        }
    }
    if !stale {
        return Ok(count);
    }
    unanchored(view, b + 1)
}

/// The count of messages `start..` when no usage among them anchors it: their estimate, or
/// the line learned from the usage of the messages before `start` (a compacted conversation
/// whose history is still there, as in a transcript) at that estimate.
fn unanchored<V: ConversationView + ?Sized>(view: &V, start: usize) -> Result<TokenCount> {
    let estimated = estimate_range(view, start..view.len())?;
    let fit = learned_before(view, start)?.fit();
    Ok(TokenCount {
        total: fit.map_or(estimated, |f| f.predict(estimated)),
        from_usage: 0,
        estimated,
        anchor: None,
        anchor_first: None,
        calibrated: fit.is_some(),
    })
}

/// What the usage of messages `..end` teaches (see [`Calibration`]); it costs a pass over
/// them only when one of them carries usage.
///
/// In a session file holding several branches, the usage of every line of the branches its
/// chain leaves out ([`ConversationView::on_other_branch`], wherever they sit in the file) is
/// learned from too: a rewind changes which messages are sent, not the system prompt and tools
/// every request sends besides them, which that usage measured as well. The count stays
/// anchored on the chain's own usage only. Each response's usage is observed against the
/// estimate of what its request sent: the chain before it for a response on the chain, the
/// file's conversation lines before it in file order for one of a branch left out (a branch
/// written before the rewind that left it: its own chain). Observations are taken in file
/// order, as a `Compactor` given the lines one by one takes them.
pub fn learned_before<V: ConversationView + ?Sized>(view: &V, end: usize) -> Result<Calibration> {
    Ok(learned_and_estimated(view, end, end)?.0)
}

/// [`learned_before`] of messages `..end` and, from the same reading of each message,
/// [`estimate_range`] of messages `from..end` (`from ≤ end`): a compaction needs both, and
/// reading the messages once for the two saves a pass over them.
pub fn learned_and_estimated<V: ConversationView + ?Sized>(
    view: &V,
    end: usize,
    from: usize,
) -> Result<(Calibration, u64)> {
    if view.has_other_branches() {
        return learned_with_branches(view, end, from);
    }
    let with_usage = Find {
        assistant_with_usage: true,
        ..Find::default()
    };
    if end == 0 || view.rfind(end, with_usage)?.is_none() {
        return Ok((Calibration::default(), estimate_range(view, from..end)?));
    }
    let mut count = RunningCount::default();
    let mut estimated = 0;
    for i in 0..end {
        let f = message_facts(view, i)?;
        if i >= from && !(f.clears_at_user && is_cleared(view, i)?) {
            estimated += f.tokens;
        }
        count.push(&f);
    }
    Ok((count.calibration, estimated))
}

/// [`learned_before`] of a view with lines on other branches: the chain's messages `..end`
/// counted as the count reads them, and every line of the file's conversation (the chain and
/// the other branches) in file order, in one pass; each usage observed from the one its
/// line belongs to. With the estimate of messages `from..end`, as [`learned_and_estimated`].
fn learned_with_branches<V: ConversationView + ?Sized>(
    view: &V,
    end: usize,
    from: usize,
) -> Result<(Calibration, u64)> {
    let (mut chain, mut file) = (RunningCount::default(), RunningCount::default());
    let mut learned = Calibration::default();
    let mut estimated = 0;
    for i in 0..view.len() {
        let f = message_facts(view, i)?;
        if (from..end).contains(&i) && !(f.clears_at_user && is_cleared(view, i)?) {
            estimated += f.tokens;
        }
        if i < end {
            if let Some(o) = chain.push_observed(&f) {
                learned.observe_as(o);
            }
        }
        if let Some(o) = file.push_as_written(view, i, f)? {
            learned.observe_as(o);
        }
    }
    Ok((learned, estimated))
}

/// Rejects a count whose API-reported part is more than twice the model's context window: no
/// real request can be that large, so the usage is cumulative or corrupted (a common bug of
/// agents that add usage up across turns) and must not drive compaction decisions.
pub fn check_plausible<V: ConversationView + ?Sized>(
    view: &V,
    count: &TokenCount,
    model: &str,
    config: &crate::model::config::Config,
) -> Result<()> {
    let window = crate::measure::thresholds::context_window_for_model(model, config);
    let Some(anchor) = count.anchor else {
        return Ok(());
    };
    if count.from_usage <= window.saturating_mul(2) {
        return Ok(());
    }
    let loc = if view.is_transcript(anchor) {
        format!("messages[{anchor}].message.usage")
    } else {
        format!("messages[{anchor}].usage")
    };
    Err(crate::model::error::Error::invalid_token_count(format!(
        "reports {} tokens, more than twice the {window}-token context window of `{model}`: \
         not the size of one request (usage added up across turns, or corrupted?)",
        count.from_usage
    ))
    .at(loc))
}

/// What the running count needs to know about one message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessageFacts {
    /// The message's kind.
    pub kind: Option<Kind>,
    /// A sub-agent line.
    pub sidechain: bool,
    /// A `compact_boundary` line.
    pub boundary: bool,
    /// Its usage, when it carries one.
    pub usage: Option<crate::model::view::UsageCounts>,
    /// Its usage was logged mid-stream (`stop_reason: null`).
    pub partial: bool,
    /// `message.id`.
    pub id: Option<String>,
    /// Estimated tokens (0 when not sent to the model). A reminder that a later user message
    /// clears ([`Self::clears_at_user`]) has its full estimate here: the facts of a message do
    /// not depend on what follows it; [`RunningCount`] drops it when a user message comes.
    pub tokens: u64,
    /// A system message with `clear_at: "next_user_message"`: the model stops reading it
    /// once a later user message exists ([`is_read`]).
    pub clears_at_user: bool,
    /// For a boundary: how many sent messages after its summary were kept verbatim.
    pub boundary_kept: usize,
    /// It begins with a provider's compaction (the Messages API's `compaction` block, an
    /// OpenAI Responses `compaction` item): the context starts at it, as
    /// [`active_start`] reads it.
    pub starts_context: bool,
    /// A user or system message holding no tool result (see
    /// [`ConversationView::is_window_input`]).
    pub window_input: bool,
    /// It starts the context as a provider's opaque compaction alone: one that closes an
    /// OpenAI `/responses/compact` window when only window inputs came before it in the
    /// whole conversation, which a push of it alone cannot see ([`RunningCount`] can).
    pub opaque_item: bool,
    /// It holds a tool result cleared to the placeholder (micro-compaction, SPEC §10): a
    /// request that sent it before the clearing sent the result, which its estimate no longer
    /// sees (see [`RunningCount::observe`]).
    pub cleared: bool,
}

/// Whether `c` holds a tool result whose content is the cleared placeholder (not one that
/// also holds media with no other form: those are still sent).
pub fn holds_cleared_result(c: &ContentInfo) -> bool {
    let ContentInfo::Blocks(bs) = c else {
        return false;
    };
    bs.iter().any(|b| {
        b.kind == Some(BlockKind::ToolResult)
            && b.is_cleared
            && !b.nested.iter().any(|n| {
                matches!(n.kind, Some(BlockKind::Image) | Some(BlockKind::Document))
                    && !n.is_plain_text
            })
    })
}

/// Reads the facts of message `i`.
pub fn message_facts<V: ConversationView + ?Sized>(view: &V, i: usize) -> Result<MessageFacts> {
    let kind = view.kind(i)?;
    let assistant = kind == Kind::Assistant;
    let (tokens, cleared) = if is_sent(view, i)? {
        let c = view.content(i, Detail::Estimate)?;
        (estimate_content(&c), holds_cleared_result(&c))
    } else {
        (0, false)
    };
    let starts_context = view.starts_context(i);
    Ok(MessageFacts {
        kind: Some(kind),
        sidechain: view.is_sidechain(i),
        boundary: view.is_compact_boundary(i),
        usage: if assistant { view.usage(i)? } else { None },
        partial: assistant && view.usage_is_partial(i),
        id: if assistant { view.message_id(i) } else { None },
        tokens,
        boundary_kept: view.boundary_kept(i),
        starts_context,
        window_input: view.is_window_input(i),
        opaque_item: starts_context && view.is_opaque_item(i),
        cleared,
        clears_at_user: kind == Kind::System && view.clears_at_next_user(i) && tokens > 0,
    })
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Anchor {
    usage: crate::model::view::UsageCounts,
    partial: bool,
    id: Option<String>,
    own: u64,
    /// Another response came after it: lines with its id that follow start a new anchor.
    closed: bool,
}

/// [`token_count_with_estimation`] kept up to date message by message: each push costs the
/// work of that message only, and the total is the same as counting the whole list again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RunningCount {
    anchor: Option<Anchor>,
    /// Estimates after the anchor response's first line (not its own lines).
    rest: u64,
    /// Estimates since the last boundary, for when no response carries usage.
    all: u64,
    /// Sent messages after the last boundary whose usage is stale (its summary and the
    /// messages a session-memory compaction kept).
    stale: usize,
    /// The latest response's lines so far (consecutive among the assistant lines), with or
    /// without usage: a line with usage that continues it anchors the whole response; a
    /// response that began among the stale messages stays stale.
    run: Option<Run>,
    /// What the usage seen so far teaches about the messages' real size (kept across
    /// boundaries): counts where nothing anchors.
    calibration: Calibration,
    /// A sent message since the last boundary holds a cleared tool result: the request of a
    /// response after it may have sent the result before it was cleared (see
    /// [`observe`](Self::observe)).
    cleared: bool,
    /// The reminders since the latest user message ([`MessageFacts::clears_at_user`]): what
    /// of `all`, `rest` and the run's `since` they make up, taken out when a user message
    /// comes (the model no longer reads them then; [`is_read`]).
    reminders: Reminders,
    /// What the messages pushed so far were, for the `/responses/compact` window rule
    /// ([`crate::model::messages::closes_compact_window`]): none yet, only window inputs, or
    /// something else. Kept across boundaries and context starts (the rule reads the whole
    /// conversation).
    opening: Opening,
}

/// See [`RunningCount::opening`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Opening {
    #[default]
    Empty,
    WindowInputs,
    Other,
}

/// See [`RunningCount::reminders`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Reminders {
    all: u64,
    rest: u64,
    since: u64,
}

/// The lines of the latest response seen, as the batch count walks back over them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Run {
    id: Option<String>,
    /// Estimates of its own lines.
    own: u64,
    /// Estimates of the other sent messages since its first line (interleaved tool results).
    since: u64,
    /// It began among the stale messages after a boundary.
    stale: bool,
    /// Its usage was observed for the [`Calibration`] (once per response).
    observed: bool,
    /// What its request sent (the messages before its first line) held a cleared tool
    /// result (see [`RunningCount::observe`]).
    spans_clearing: bool,
}

impl RunningCount {
    /// Adds the next message.
    pub fn push(&mut self, f: &MessageFacts) {
        self.push_observed(f);
    }

    /// [`push`](Self::push), saying what the message's usage was observed as for the
    /// [`Calibration`] (`None`: nothing observed; a response's usage is observed once).
    pub fn push_observed(&mut self, f: &MessageFacts) -> Option<Observed> {
        let opening = self.opening;
        // An opaque compaction after only window inputs closes the `/responses/compact`
        // window: the messages before it are still read, so the context does not start there
        // (a batch's own view already says so; a push of the item alone cannot see them).
        let out = self.push_facts(
            f,
            f.starts_context && !(f.opaque_item && opening == Opening::WindowInputs),
        );
        self.opening = if opening != Opening::Other && f.window_input && !f.sidechain {
            Opening::WindowInputs
        } else {
            Opening::Other
        };
        out
    }

    /// [`Self::push_observed`], with whether the message starts the context settled.
    fn push_facts(&mut self, f: &MessageFacts, starts_context: bool) -> Option<Observed> {
        if f.sidechain {
            return None;
        }
        if f.boundary {
            *self = RunningCount {
                stale: if f.boundary_kept > 0 {
                    f.boundary_kept.saturating_add(1)
                } else {
                    0
                },
                calibration: std::mem::take(&mut self.calibration),
                ..RunningCount::default()
            };
            return None;
        }
        if starts_context {
            // A provider's compaction: what was before it is no longer sent. It is itself the
            // first message of the context (a boundary line's context starts after it).
            *self = RunningCount {
                calibration: std::mem::take(&mut self.calibration),
                ..RunningCount::default()
            };
        }
        if f.kind == Some(Kind::User) {
            // A user message clears the reminders before it: they count no more.
            let r = std::mem::take(&mut self.reminders);
            self.all = self.all.saturating_sub(r.all);
            self.rest = self.rest.saturating_sub(r.rest);
            if let Some(run) = &mut self.run {
                run.since = run.since.saturating_sub(r.since);
            }
        }
        let sent = matches!(
            f.kind,
            Some(Kind::User | Kind::Assistant | Kind::Attachment)
        );
        // Read before this message joins what was sent: a response's request did not send it.
        let spans_clearing = self.cleared;
        self.cleared |= sent && f.cleared;
        let assistant = f.kind == Some(Kind::Assistant);
        let continues = |r: &Run| r.id.is_some() && r.id == f.id;
        let in_window = self.stale > 0 && sent;
        let continues_stale =
            assistant && self.run.as_ref().is_some_and(|r| r.stale && continues(r));
        if in_window || continues_stale {
            // Kept across a compaction (or a later line of a response that was): its usage
            // measured the old context.
            if in_window {
                self.stale -= 1;
            }
            if assistant {
                self.run = Some(Run {
                    id: f.id.clone(),
                    stale: true,
                    ..Run::default()
                });
                self.reminders.since = 0;
            }
            self.all += f.tokens;
            self.rest += f.tokens;
            return None;
        }
        self.all += f.tokens;
        if f.kind != Some(Kind::Assistant) {
            if let Some(r) = &mut self.run {
                r.since += f.tokens;
            }
            self.rest += f.tokens;
            if f.clears_at_user {
                self.reminders.all += f.tokens;
                self.reminders.rest += f.tokens;
                if self.run.is_some() {
                    self.reminders.since += f.tokens;
                }
            }
            return None;
        }
        // An assistant line: it continues the latest response or starts another.
        let mut run = match self.run.take() {
            Some(mut r) if !r.stale && continues(&r) => {
                r.own += f.tokens;
                r
            }
            _ => {
                self.reminders.since = 0;
                Run {
                    id: f.id.clone(),
                    own: f.tokens,
                    spans_clearing,
                    ..Run::default()
                }
            }
        };
        let mut observed = None;
        // The all-zero usage of a compaction's answer (an on-demand one, or a threshold
        // compaction that paused) measures nothing: the block counts by its content, as in
        // the batch count ([`crate::model::view::usage_or_start`]).
        let usage = f.usage.filter(|u| !starts_context || u.context_total() > 0);
        if let Some(usage) = usage {
            observed = self.observe(&mut run, usage);
            // The newest usage measures the whole response: its earlier lines are its own,
            // what came between them is estimated.
            self.anchor = Some(Anchor {
                usage,
                partial: f.partial,
                id: f.id.clone(),
                own: run.own,
                closed: false,
            });
            self.rest = run.since;
            self.reminders.rest = self.reminders.since;
        } else {
            match &mut self.anchor {
                Some(a) if !a.closed && a.id.is_some() && a.id == f.id => a.own += f.tokens,
                Some(a) => {
                    a.closed = true;
                    self.rest += f.tokens;
                }
                None => self.rest += f.tokens,
            }
        }
        self.run = Some(run);
        observed
    }

    /// Adds message `i` of `view` (`f`, its [`message_facts`]) to a count of the file's
    /// conversation in file order — the chain and the branches it leaves out
    /// ([`ConversationView::on_other_branch`]), each line of those read as its branch sent it
    /// — and gives the observation of its usage when it is of another branch: what
    /// [`learned_before`] learns from such a line.
    pub fn push_as_written<V: ConversationView + ?Sized>(
        &mut self,
        view: &V,
        i: usize,
        f: MessageFacts,
    ) -> Result<Option<Observed>> {
        self.push_as_written_with(view.on_other_branch(i), f, || {
            Ok(estimate_content(&view.content(i, Detail::Estimate)?))
        })
    }

    /// [`push_as_written`](Self::push_as_written) of a message that is `other` (on another
    /// branch) or not, `content` giving the estimate of its content when it is (a caller that
    /// keeps it does not read it again).
    pub fn push_as_written_with(
        &mut self,
        other: bool,
        mut f: MessageFacts,
        content: impl FnOnce() -> Result<u64>,
    ) -> Result<Option<Observed>> {
        if other {
            f.sidechain = false;
            if matches!(
                f.kind,
                Some(Kind::User | Kind::Assistant | Kind::Attachment)
            ) {
                f.tokens = content()?;
            }
        }
        let o = self.push_observed(&f);
        Ok(o.filter(|_| other))
    }

    /// Whether a response's usage anchors the count (else it is all estimated).
    pub fn is_anchored(&self) -> bool {
        self.anchor.is_some()
    }

    /// Anchors the count at the latest response with `usage` the caller was given for it
    /// (the provider reported it outside the messages, as the AI SDK and OpenAI do): from now
    /// on the count is that usage plus the estimate of what follows the response, as if the
    /// response had carried it. `false` (nothing changed) when no response was pushed since
    /// the last boundary, or the latest one was kept across a compaction (its usage would
    /// measure the old context).
    pub fn anchor_latest(&mut self, usage: crate::model::view::UsageCounts) -> bool {
        self.anchor_latest_observed(usage).is_some()
    }

    /// [`anchor_latest`](Self::anchor_latest), saying what the usage was observed as for the
    /// [`Calibration`]: `None` when nothing changed, `Some(None)` when the response's usage
    /// was observed already.
    pub fn anchor_latest_observed(
        &mut self,
        usage: crate::model::view::UsageCounts,
    ) -> Option<Option<Observed>> {
        let run = self.run.as_ref()?;
        if run.stale {
            return None;
        }
        let mut run = self.run.take().unwrap_or_default();
        let observed = self.observe(&mut run, usage);
        let run = self.run.insert(run);
        self.anchor = Some(Anchor {
            usage,
            partial: false,
            id: run.id.clone(),
            own: run.own,
            closed: false,
        });
        self.rest = run.since;
        self.reminders.rest = self.reminders.since;
        Some(observed)
    }

    /// Records the usage of the response `run` (its first report only: every line of a
    /// response reports the same request) against the estimate of what its request sent.
    ///
    /// When that request held a tool result cleared to the placeholder (`run.spans_clearing`),
    /// the usage measured the result if the clearing came after the request (micro-compacting
    /// a conversation already sent), the placeholder if it came before (a conversation that
    /// went on after it, or a tool whose output merely is the placeholder's text); the
    /// messages do not tell which. Such an observation is kept as spanning a clearing: the
    /// [`Calibration`] learns from it, and falls back on the others only when it spoils the
    /// line (see [`Calibration::fit`]).
    fn observe(
        &mut self,
        run: &mut Run,
        usage: crate::model::view::UsageCounts,
    ) -> Option<Observed> {
        if run.observed {
            return None;
        }
        run.observed = true;
        let o = Observed {
            observation: crate::measure::calibration::Observation {
                estimated: self.all.saturating_sub(run.own + run.since),
                real: usage.input_total(),
            },
            spans_clearing: run.spans_clearing,
        };
        self.calibration.observe_as(o);
        Some(o)
    }

    /// What the usage seen so far teaches (see [`Calibration`]).
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    /// Replaces the calibration (a restored session: the one saved, which also learned from
    /// messages compacted away since).
    pub fn set_calibration(&mut self, calibration: Calibration) {
        self.calibration = calibration;
    }

    /// Whether the count is the learned line at the messages' estimate: nothing anchors it
    /// and the usage seen gives a line ([`Calibration::fit`]). The system prompt and tools
    /// are then in the count already; usage that gives no line leaves them out of it.
    pub fn is_calibrated(&self) -> bool {
        self.anchor.is_none() && self.calibration.fit().is_some()
    }

    /// The context size in tokens.
    pub fn total(&self) -> u64 {
        match &self.anchor {
            None => match self.calibration.fit() {
                Some(fit) => fit.predict(self.all),
                None => self.all,
            },
            Some(a) => {
                let response = if a.partial {
                    a.usage.output_tokens.max(a.own)
                } else {
                    a.usage.output_tokens
                };
                a.usage.input_total() + response + self.rest
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::calibration::Observation;
    use crate::model::messages::Message;
    use serde_json::{json, Value};

    /// A tokenizer of `chars / per` tokens; `fail` (a text it contains) makes it throw.
    struct Per {
        per: f64,
        fail: Option<&'static str>,
    }
    impl TextCounter for Per {
        fn count(&self, text: &str) -> std::result::Result<Option<f64>, String> {
            match self.fail {
                Some(f) if text.contains(f) => Err("tokenizer down".into()),
                _ => Ok(Some(utf16_len(text) as f64 / self.per)),
            }
        }
        fn name(&self) -> &str {
            "context.tokenCounter"
        }
    }

    fn every_kind() -> Vec<Message> {
        [
            json!({"role": "user", "content": "a plain question of some length"}),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "scratch work here", "signature": "s"},
                {"type": "text", "text": "I will read it"},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/a/b.rs"}}]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "fn main() {}"}]}]}),
            json!({"role": "assistant", "content": [
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "rust"}},
                {"type": "web_search_tool_result", "tool_use_id": "s1",
                 "content": [{"type": "web_search_result", "url": "https://x", "title": "X", "encrypted_content": "Zm9v"}]},
                {"type": "mystery", "payload": {"k": [1, 2, 3]}}]}),
            json!({"type": "attachment", "uuid": "a1", "attachment": {"type": "todo", "items": ["x"]}}),
            json!({"role": "assistant", "content": [{"type": "compaction", "encrypted_content": "E".repeat(400)}]}),
        ]
        .into_iter()
        .map(|v| Message::from_value(v, "m").unwrap())
        .collect()
    }

    #[test]
    fn counted_messages_are_estimated_in_the_tokenizers_tokens() {
        let m = every_kind();
        // A tokenizer of a token per 4 characters measures every prose text as its length
        // (up to rounding) and tool calls at half (they are estimated at 2 characters per
        // token), so the counted estimate is a little below the plain one; one of a token per
        // character is about 4 times it.
        let plain = estimate_range(m.as_slice(), 0..m.len()).unwrap();
        let quarter = Per {
            per: 4.0,
            fail: None,
        };
        let q = estimate_all(&m, Some(&quarter)).unwrap();
        assert!(q <= plain && q * 10 >= plain * 8, "{q} vs {plain}");
        let one = Per {
            per: 1.0,
            fail: None,
        };
        let dense = estimate_all(&m, Some(&one)).unwrap();
        assert!(dense > 3 * plain && dense < 5 * plain, "{dense} vs {plain}");
        assert_eq!(estimate_all(&m, None).unwrap(), plain);
        assert_eq!(
            token_count_counted(&m[..5], Some(&one)).unwrap().total,
            estimate_all(&m[..5], Some(&one)).unwrap(),
            "no usage: the count is the estimate"
        );
        // The opaque compaction last starts the context: only it counts, as its encrypted
        // text.
        assert_eq!(token_count_counted(&m, Some(&one)).unwrap().total, 400);
        assert_eq!(text_tokens_counted("abcdefgh", Some(&one)).unwrap(), 8);
        assert_eq!(text_tokens_counted("abcdefgh", None).unwrap(), 2);
    }

    #[test]
    fn a_tokenizer_problem_fails_the_count_and_names_it() {
        let m = every_kind();
        let broken = Per {
            per: 4.0,
            fail: Some("fn main"),
        };
        let e = estimate_all(&m, Some(&broken)).unwrap_err();
        assert_eq!(e.code, crate::model::error::ErrorCode::InvalidArgument);
        assert_eq!(e.message, "context.tokenCounter threw: tokenizer down");
        struct Bad(Option<f64>);
        impl TextCounter for Bad {
            fn count(&self, _: &str) -> std::result::Result<Option<f64>, String> {
                Ok(self.0)
            }
            fn name(&self) -> &str {
                "options.tokenCounter"
            }
        }
        for (bad, why) in [
            (
                Bad(None),
                "must return a finite number ≥ 0; it returned no number",
            ),
            (
                Bad(Some(-1.0)),
                "must return a finite number ≥ 0; it returned -1",
            ),
            (Bad(Some(1e9)), "tokens for a text of"),
        ] {
            let e = estimate_all(&m, Some(&bad)).unwrap_err();
            assert!(
                e.message.starts_with("options.tokenCounter") && e.message.contains(why),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn a_tokenizer_is_not_asked_again_after_its_first_problem() {
        struct Failing(std::cell::Cell<usize>);
        impl TextCounter for Failing {
            fn count(&self, _: &str) -> std::result::Result<Option<f64>, String> {
                self.0.set(self.0.get() + 1);
                Err("down".into())
            }
            fn name(&self) -> &str {
                "context.tokenCounter"
            }
        }
        let failing = Failing(std::cell::Cell::new(0));
        // One message of 50 texts (a tool result's parts): asked once, not 50 times.
        let parts: Vec<_> = (0..50)
            .map(|k| json!({"type": "text", "text": format!("part {k}")}))
            .collect();
        let m = Message::from_value(
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": parts}]}),
            "m",
        )
        .unwrap();
        let e = estimate_all(&[m], Some(&failing)).unwrap_err();
        assert_eq!(e.message, "context.tokenCounter threw: down");
        assert_eq!(failing.0.get(), 1);
    }

    #[test]
    fn whole_number_rounding_is_the_float_rounding() {
        let float = |u: usize, bpt: f64| (u as f64 / bpt).round() as u64;
        // Lengths past 2^32 exist only where `usize` has 64 bits (not in WebAssembly).
        let big: Vec<usize> = [
            1u64 << 31,
            (1 << 32) - 1,
            (1 << 52) - 3,
            (1 << 52) - 1,
            1 << 52,
            1 << 53,
        ]
        .into_iter()
        .filter_map(|u| usize::try_from(u).ok())
        .collect();
        for u in (0..10_000).chain(big) {
            for bpt in [BYTES_PER_TOKEN, JSON_BYTES_PER_TOKEN, 3.0, 0.5] {
                assert_eq!(rough_token_count(u, bpt), float(u, bpt), "{u} / {bpt}");
            }
        }
    }

    #[test]
    fn a_document_counts_its_context_and_the_text_beside_its_images() {
        let text = "word ".repeat(4_000); // 20,000 units: 5,000 tokens
        let doc = |d: serde_json::Value| {
            let m =
                Message::parse_all(serde_json::json!([{"role": "user", "content": [d]}])).unwrap();
            token_count_with_estimation(m.as_slice()).unwrap().total
        };
        let image = serde_json::json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}});
        let pdf =
            serde_json::json!({"type": "base64", "media_type": "application/pdf", "data": "AAAA"});
        // A PDF alone, then with a context the model reads.
        let bare = doc(serde_json::json!({"type": "document", "source": pdf}));
        assert_eq!(bare, MEDIA_TOKENS);
        assert_eq!(
            doc(serde_json::json!({"type": "document", "source": pdf, "context": text})),
            bare + 5_000
        );
        // A plain-text document: its text and its context.
        assert_eq!(
            doc(
                serde_json::json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}, "context": text})
            ),
            10_000
        );
        // A content source of text and an image: its text besides the media (a flat 2,000 before).
        assert_eq!(
            doc(
                serde_json::json!({"type": "document", "source": {"type": "content", "content": [{"type": "text", "text": text}, image]}})
            ),
            MEDIA_TOKENS + 5_000
        );
    }

    #[test]
    fn a_tool_reference_counts_the_definition_it_loads() {
        let refs = |names: &[&str]| {
            let blocks: Vec<_> = names
                .iter()
                .map(|n| serde_json::json!({"type": "tool_reference", "tool_name": n}))
                .collect();
            Message::parse_all(serde_json::json!([
                {"role": "user", "content": "find the database tools"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {"query": "db"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": blocks}]}
            ]))
            .unwrap()
        };
        let count = |m: Vec<Message>| token_count_with_estimation(m.as_slice()).unwrap().total;
        let none = count(refs(&[]));
        assert_eq!(
            count(refs(&["mcp__db__query"])),
            none + TOOL_REFERENCE_TOKENS
        );
        assert_eq!(
            count(refs(&["mcp__db__query", "mcp__db__schema"])),
            none + 2 * TOOL_REFERENCE_TOKENS
        );
        // A server-side tool search answers in its result block: the same per reference.
        let server = |names: &[&str]| {
            let refs: Vec<_> = names
                .iter()
                .map(|n| serde_json::json!({"type": "tool_reference", "tool_name": n}))
                .collect();
            Message::parse_all(serde_json::json!([
                {"role": "user", "content": "find the database tools"},
                {"role": "assistant", "content": [
                    {"type": "server_tool_use", "id": "s1", "name": "tool_search_tool_regex", "input": {"pattern": "db"}},
                    {"type": "tool_search_tool_result", "tool_use_id": "s1", "content": {
                        "type": "tool_search_tool_search_result", "tool_references": refs}}
                ]}
            ]))
            .unwrap()
        };
        let none = count(server(&[]));
        // (Each reference stands as `null` in the result's JSON, as a medium does.)
        let two = count(server(&["mcp__db__query", "mcp__db__schema"]));
        assert!(
            (2 * TOOL_REFERENCE_TOKENS..=2 * TOOL_REFERENCE_TOKENS + 3).contains(&(two - none)),
            "{two} vs {none}"
        );
        // Any other block of an unknown type still counts as its JSON.
        let other = Message::parse_all(serde_json::json!([
            {"role": "user", "content": [{"type": "tool_referenced", "tool_name": "x"}]}
        ]))
        .unwrap();
        assert!(count(other) < 20);
    }

    #[test]
    fn the_preamble_counts_where_nothing_anchors() {
        let p = Some(Preamble {
            system_units: 4_000,
            tools_units: 2_000,
        });
        let m =
            Message::parse_all(serde_json::json!([{"role": "user", "content": "x".repeat(400)}]))
                .unwrap();
        let c = with_preamble(token_count_with_estimation(m.as_slice()).unwrap(), p);
        assert_eq!(c.total, 100 + 1_000 + 1_000);
        let anchored = Message::parse_all(serde_json::json!([
            {"role": "user", "content": "x"},
            {"role": "assistant", "content": "ok", "usage": {"input_tokens": 9_000, "output_tokens": 5}}
        ]))
        .unwrap();
        let c = with_preamble(token_count_with_estimation(anchored.as_slice()).unwrap(), p);
        assert_eq!(
            c.total, 9_005,
            "usage already includes the system prompt and tools"
        );
    }

    #[test]
    fn given_usage_anchors_messages_that_carry_none() {
        let m = Message::parse_all(serde_json::json!([
            {"role": "user", "content": "x".repeat(4_000)},
            {"role": "assistant", "content": "y".repeat(400)},
            {"role": "user", "content": "z".repeat(800)}
        ]))
        .unwrap();
        let usage = UsageCounts {
            input_tokens: 30_000,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 120,
        };
        let given = |at| Some(GivenUsage { at, usage });
        // Default: the last assistant message; what follows it is estimated.
        assert_eq!(
            token_count_given(m.as_slice(), given(None)).unwrap().total,
            30_120 + 200
        );
        assert_eq!(
            token_count_given(m.as_slice(), given(Some(2)))
                .unwrap()
                .total,
            30_120
        );
        assert!(token_count_given(m.as_slice(), given(Some(3))).is_err());
        // Usage a later message carries wins.
        let mut v: Vec<serde_json::Value> = m.iter().map(Message::to_value).collect();
        v.push(serde_json::json!({"role": "assistant", "content": "ok",
            "usage": {"input_tokens": 40_000, "output_tokens": 5}}));
        let m = Message::parse_all(serde_json::Value::Array(v)).unwrap();
        assert_eq!(
            token_count_given(m.as_slice(), given(None)).unwrap().total,
            40_005
        );
        assert_eq!(
            token_count_given(m.as_slice(), given(Some(1)))
                .unwrap()
                .total,
            40_005
        );
    }

    #[test]
    fn counting_starts_at_the_last_compaction_block() {
        let m = Message::parse_all(serde_json::json!([
            {"role": "user", "content": "x".repeat(40_000)},
            {"role": "assistant", "content": [
                {"type": "compaction", "content": "s".repeat(400), "encrypted_content": "e".repeat(90_000)}]},
            {"role": "user", "content": "y".repeat(800)}
        ]))
        .unwrap();
        assert_eq!(active_start(m.as_slice()).unwrap(), 1);
        let c = token_count_with_estimation(m.as_slice()).unwrap();
        assert_eq!(
            c.total,
            100 + 200,
            "the block by its content, then what follows"
        );
        // With the usage of the response that compacted (its message iteration), that anchors.
        let mut v: Vec<serde_json::Value> = m.iter().map(Message::to_value).collect();
        v[1]["usage"] = serde_json::json!({"input_tokens": 5_000, "output_tokens": 50,
            "iterations": [{"type": "compaction", "input_tokens": 180_000, "output_tokens": 3_000},
                           {"type": "message", "input_tokens": 5_000, "output_tokens": 50}]});
        let m = Message::parse_all(serde_json::Value::Array(v.clone())).unwrap();
        assert_eq!(
            token_count_with_estimation(m.as_slice()).unwrap().total,
            5_050 + 200
        );
        // An on-demand compaction's answer reports usage 0: the block counts by its content.
        v[1]["usage"] = serde_json::json!({"input_tokens": 0, "output_tokens": 0});
        let m = Message::parse_all(serde_json::Value::Array(v)).unwrap();
        assert_eq!(
            token_count_with_estimation(m.as_slice()).unwrap().total,
            100 + 200
        );
    }

    fn count(v: Value) -> TokenCount {
        let m = Message::parse_all(v).unwrap();
        token_count_with_estimation(m.as_slice()).unwrap()
    }

    /// A call's free-form input (a string: an OpenAI custom tool's, in its Anthropic form)
    /// is text, 4 characters a token; a JSON input is at 2, its name too; and a tokenizer
    /// counts the text as text.
    #[test]
    fn a_free_form_call_input_counts_as_text() {
        let call = |input: Value| {
            count(json!([{"role": "assistant", "content": [
                {"type": "tool_use", "id": "c", "name": "apply_patch", "input": input}]}]))
            .total
        };
        let patch = "x".repeat(4_000);
        // 11 characters of name at 2 a token (6) and 4,000 of text at 4 (1,000).
        assert_eq!(call(json!(patch)), 1_006);
        // The same text as JSON: the name and `{"input":"…"}` at 2 a token.
        assert_eq!(call(json!({ "input": patch })), 2_012); // 4,023 / 2, rounded
        let m = Message::parse_all(json!([{"role": "assistant", "content": [
            {"type": "tool_use", "id": "c", "name": "apply_patch", "input": patch}]}]))
        .unwrap();
        let one = Per {
            per: 1.0,
            fail: None,
        };
        assert_eq!(estimate_all(&m, Some(&one)).unwrap(), 4_000 + 11);
    }

    #[test]
    fn rough_count_rejects_a_count_beyond_safe_integers() {
        let e = rough_token_count_checked(4, 1e-300).unwrap_err();
        assert_eq!(e.code, crate::model::error::ErrorCode::InvalidArgument);
        // The value as JavaScript writes it, not spelt out in 300 digits (a 400-character
        // message before).
        assert!(
            e.message.starts_with("bytesPerToken 1e-300 is too small"),
            "{}",
            e.message
        );
        assert_eq!(
            rough_token_count_checked(4, 1e-15).unwrap(),
            4_000_000_000_000_000
        );
    }

    #[test]
    fn rough_count_rejects_a_bytes_per_token_that_is_not_positive() {
        assert_eq!(rough_token_count_checked(10, 2.0).unwrap(), 5);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = rough_token_count_checked(10, bad).unwrap_err();
            assert_eq!(e.code, crate::ErrorCode::InvalidArgument, "{bad}");
        }
    }

    #[test]
    fn rough_estimation_divides_and_rounds() {
        assert_eq!(rough_token_count(0, 4.0), 0);
        assert_eq!(rough_token_count(10, 4.0), 3); // 2.5 rounds away from zero
        assert_eq!(rough_token_count(9, 4.0), 2);
        assert_eq!(rough_token_count(10, 2.0), 5);
        assert_eq!(rough_token_count(10, 0.0), 3);
    }

    #[test]
    fn everything_estimated_without_usage() {
        let c = count(json!([
            {"role": "user", "content": "a".repeat(400)},
            {"role": "assistant", "content": [{"type": "text", "text": "b".repeat(40)}]}
        ]));
        assert_eq!(c.total, 110);
        assert_eq!(c.from_usage, 0);
    }

    #[test]
    fn media_counts_fixed_2000() {
        let big = "A".repeat(1_000_000);
        let c = count(json!([
            {"role": "user", "content": [
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": big}},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "AAAA"}},
                {"type": "tool_result", "tool_use_id": "t", "content": [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA"}}]}
            ]}
        ]));
        assert_eq!(c.total, 6_000);
    }

    #[test]
    fn usage_of_latest_response_plus_estimate_after() {
        let c = count(json!([
            {"type": "user", "message": {"role": "user", "content": "x".repeat(4000)}},
            {"type": "assistant", "message": {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": "hi"}],
                "usage": {"input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000, "output_tokens": 5}}},
            {"type": "progress", "data": {"x": "y".repeat(1000)}},
            {"type": "user", "message": {"role": "user", "content": "z".repeat(40)}}
        ]));
        assert_eq!(c.from_usage, 1115);
        assert_eq!(c.estimated, 10);
        assert_eq!(c.total, 1125);
    }

    #[test]
    fn split_response_counts_once_and_interleaved_results_are_estimated() {
        let usage = json!({"input_tokens": 1, "cache_read_input_tokens": 999, "output_tokens": 20});
        let c = count(json!([
            {"type": "user", "message": {"role": "user", "content": "go"}},
            {"type": "assistant", "message": {"role": "assistant", "id": "m1", "usage": usage,
                "content": [{"type": "tool_use", "id": "a", "name": "Read", "input": {}}]}},
            {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": "r".repeat(400)}]}},
            {"type": "assistant", "message": {"role": "assistant", "id": "m1", "usage": usage,
                "content": [{"type": "tool_use", "id": "b", "name": "Read", "input": {}}]}},
            {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "b", "content": "s".repeat(800)}]}}
        ]));
        assert_eq!(c.from_usage, 1020);
        assert_eq!(c.estimated, 300);
        assert_eq!(c.anchor, Some(3));
        assert_eq!(c.anchor_first, Some(1));
    }

    #[test]
    fn streamed_usage_counts_the_response_content() {
        // Logged mid-stream: output_tokens 1, but the response wrote 4,000 characters.
        let line = |text: String, stop: serde_json::Value| {
            json!({"type": "assistant", "message": {"role": "assistant", "id": "m1",
                "usage": {"input_tokens": 100, "output_tokens": 1}, "stop_reason": stop,
                "content": [{"type": "text", "text": text}]}})
        };
        let user = json!({"type": "user", "message": {"role": "user", "content": "go"}});
        let streamed = Value::Array(vec![
            user.clone(),
            line("t".repeat(2000), Value::Null),
            line("u".repeat(2000), Value::Null),
        ]);
        assert_eq!(count(streamed).total, 100 + 1000);
        // A finished response's usage is taken as it is.
        let done = Value::Array(vec![user, line("t".repeat(2000), json!("end_turn"))]);
        assert_eq!(count(done).total, 101);
        let c = count(json!([
            {"role": "assistant", "content": "x".repeat(400), "usage": {"input_tokens": 10, "output_tokens": 40}}
        ]));
        assert_eq!(c.total, 50);
    }

    /// The three shared transcripts, parsed, with their file names.
    fn shared_transcripts() -> Vec<(&'static str, Vec<Message>)> {
        [
            "cc_small_short.jsonl",
            "cc_image_9e953218.jsonl",
            "cc_long_autocompact_4d5611e5.jsonl",
        ]
        .iter()
        .map(|file| {
            let path = format!(
                "{}/../shared/transcripts/{file}",
                env!("CARGO_MANIFEST_DIR")
            );
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("test transcript {path} is missing: {e}"));
            (
                *file,
                crate::transforms::transcript::parse_transcript(&text).unwrap(),
            )
        })
        .collect()
    }

    /// `prefix`, then an agent's `n` rounds: a Read call after 2,000 characters of text, its
    /// response carrying the usage of its request, then its result, `result(k)` (an 8,000-character text: 2,000 tokens). The
    /// real size of each request is 25,000 tokens of system prompt and tools plus 5/4 of the
    /// estimate of the messages it sent (since the last boundary).
    fn agent_rounds(prefix: Vec<Value>, n: usize, result: impl Fn(usize) -> String) -> Vec<Value> {
        let mut v = prefix;
        for k in 0..n {
            let start = v
                .iter()
                .rposition(|m| m["subtype"] == "compact_boundary")
                .map_or(0, |b| b + 1);
            let sent = Message::parse_all(Value::Array(v[start..].to_vec())).unwrap();
            let estimate = estimate_range(sent.as_slice(), 0..sent.len()).unwrap();
            let call = json!({"type": "tool_use", "id": format!("t{k}"), "name": "Read",
                "input": {"file_path": format!("/src/f{k}.rs")}});
            let text = json!({"type": "text", "text": "a".repeat(2_000)});
            v.push(json!({"role": "assistant", "content": [text, call],
                "usage": {"input_tokens": 25_000 + estimate * 5 / 4, "output_tokens": 20}}));
            v.push(json!({"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": format!("t{k}"), "content": result(k)}]}));
        }
        v
    }

    /// [`agent_rounds`] from a prompt, its results 8,000 characters each.
    fn agent_session(n: usize) -> Vec<Value> {
        let prompt = json!({"role": "user", "content": "fix the tests ".repeat(10)});
        agent_rounds(vec![prompt], n, |_| "x".repeat(8_000))
    }

    /// `v` micro-compacted after the fact: every result but the latest `keep` is the
    /// placeholder, the usage stays as it was reported.
    fn cleared_but(mut v: Vec<Value>, keep: usize) -> Vec<Value> {
        use crate::model::view::CLEARED_PLACEHOLDER;
        let results: Vec<usize> = (0..v.len())
            .filter(|&i| v[i]["content"][0]["type"] == "tool_result")
            .collect();
        for &i in &results[..results.len().saturating_sub(keep)] {
            v[i]["content"][0]["content"] = json!(CLEARED_PLACEHOLDER);
        }
        v
    }

    /// What the running count learns from `m`, checked against the batch count.
    fn learned_running(m: &[Message]) -> Calibration {
        let mut running = RunningCount::default();
        for i in 0..m.len() {
            running.push(&message_facts(m, i).unwrap());
        }
        assert_eq!(
            running.total(),
            token_count_with_estimation(m).unwrap().total
        );
        let learned = learned_before(m, m.len()).unwrap();
        assert_eq!(running.calibration(), &learned);
        learned
    }

    #[test]
    fn usage_reported_before_a_clearing_does_not_spoil_the_line() {
        let plain = Message::parse_all(Value::Array(agent_session(30))).unwrap();
        let f = learned_running(&plain).fit().unwrap();
        crate::measure::calibration::assert_line(&f, 25_000.0, 1.25, 50.0);
        // Micro-compacted after the session: 28 results are the placeholder. The usage of
        // every request after the first of them measured the result, the estimate sees the
        // placeholder: together the 30 observations fit no line (before: nothing was learned,
        // the count after a compaction was the bare estimate).
        let m = Message::parse_all(Value::Array(cleared_but(agent_session(30), 2))).unwrap();
        assert!(message_facts(m.as_slice(), 2).unwrap().cleared);
        assert!(!message_facts(m.as_slice(), 1).unwrap().cleared);
        let learned = learned_running(&m);
        assert_eq!(crate::measure::calibration::line_of_every(&learned), None);
        // Every observation is kept; the line is the one of the request before the first
        // cleared result: the system prompt and tools.
        assert_eq!(learned.observations().len(), 30);
        assert_eq!(learned.observations_clean().map(|o| o.len()), Some(1));
        let f = learned.fit().unwrap();
        assert!((f.overhead - 25_000.0).abs() < 50.0, "{f:?}");
        assert_eq!(f.observations, 1);
    }

    #[test]
    fn usage_that_teaches_no_line_leaves_the_count_uncalibrated() {
        // One response, for a large first message: the system prompt and tools, a ratio or
        // content the estimate missed? No line is learned.
        let m = Message::parse_all(json!([
            {"role": "user", "content": "x".repeat(60_000)},
            {"role": "assistant", "content": "ok",
                "usage": {"input_tokens": 31_000, "output_tokens": 100}},
        ]))
        .unwrap();
        let seen = learned_running(&m);
        assert_eq!(seen.observations().len(), 1);
        assert_eq!(seen.fit(), None);
        // After a compaction (no usage since): the count is the messages' estimate, not a
        // line, so the caller's system prompt and tools are still to be added to it
        // (sessions19: they were left out once any usage had been seen).
        let summary =
            Message::parse_all(json!([{"role": "user", "content": "y".repeat(2_000)}])).unwrap();
        let mut after = RunningCount::default();
        after.set_calibration(seen);
        after.push(&message_facts(summary.as_slice(), 0).unwrap());
        assert!(!after.is_anchored());
        assert!(!after.is_calibrated());
        assert_eq!(after.total(), 500);
        // With a line learned, it is the line's (the overhead in it).
        let mut learned = RunningCount::default();
        learned.set_calibration(Calibration::from_observations([Observation {
            estimated: 40,
            real: 20_040,
        }]));
        learned.push(&message_facts(summary.as_slice(), 0).unwrap());
        assert!(learned.is_calibrated());
        assert_eq!(learned.total(), 20_500);
    }

    #[test]
    fn a_tool_output_that_is_the_placeholder_text_does_not_stop_the_learning() {
        use crate::model::view::CLEARED_PLACEHOLDER;
        // The second tool's output merely is the placeholder's text, sent as it is: every
        // request after it is learned from, as before.
        let v = agent_rounds(
            vec![json!({"role": "user", "content": "fix the tests ".repeat(10)})],
            30,
            |k| {
                if k == 1 {
                    CLEARED_PLACEHOLDER.into()
                } else {
                    "x".repeat(8_000)
                }
            },
        );
        let m = Message::parse_all(Value::Array(v)).unwrap();
        assert!(message_facts(m.as_slice(), 4).unwrap().cleared);
        let learned = learned_running(&m);
        assert_eq!(learned.observations_clean().map(|o| o.len()), Some(2));
        let f = learned.fit().unwrap();
        assert_eq!(f.observations, 30);
        crate::measure::calibration::assert_line(&f, 25_000.0, 1.25, 50.0);
    }

    #[test]
    fn requests_after_a_session_memory_compaction_that_kept_cleared_results_teach_the_line() {
        // Micro-compacted, then compacted with session memory: the summary and the last 4
        // messages kept (the results among them cleared), then 20 more rounds, each request
        // sending the kept placeholders. Its usage measured what the estimate sees.
        let old = cleared_but(agent_session(10), 0);
        let mut prefix = vec![
            json!({"type": "system", "subtype": "compact_boundary",
                   "compactMetadata": {"trigger": "auto", "keptMessages": 4}}),
            json!({"role": "user", "content": "Summary: the tests were fixed. ".repeat(20)}),
        ];
        prefix.extend_from_slice(&old[old.len() - 4..]);
        let m = Message::parse_all(Value::Array(agent_rounds(prefix, 20, |_| {
            "x".repeat(8_000)
        })))
        .unwrap();
        assert!(message_facts(m.as_slice(), 3).unwrap().cleared);
        let learned = learned_running(&m);
        // All 20 span the cleared results; they fit the line and all of them teach it.
        assert_eq!(learned.observations_clean().map(|o| o.len()), Some(0));
        let f = learned.fit().unwrap();
        assert_eq!(f.observations, 20);
        crate::measure::calibration::assert_line(&f, 25_000.0, 1.25, 50.0);
    }

    #[test]
    fn the_shared_long_session_micro_compacted_keeps_its_calibration() {
        use crate::transforms::microcompact::{micro_compact, MicroCompactOptions};
        let (_, m) = shared_transcripts().pop().unwrap();
        // The lines before its real compaction (line 753).
        let before = &m[..753];
        let plain = learned_before(before, before.len()).unwrap();
        let plan = micro_compact(before, &MicroCompactOptions::default()).unwrap();
        assert!(plan.tokens_freed > 80_000, "{}", plan.tokens_freed);
        let mc = crate::model::view::apply_edits(before, &plan.edits).unwrap();
        let learned = learned_before(mc.as_slice(), mc.len()).unwrap();
        // Nothing thrown away: as many observations as without the clearing.
        assert_eq!(learned.observations().len(), plain.observations().len());
        // The count of a 600-token summary: within 10 % of the one without the clearing
        // (before: no line, the bare 600).
        let (a, b) = (
            learned.fit().unwrap().predict(600) as f64,
            plain.fit().unwrap().predict(600) as f64,
        );
        assert!((a - b).abs() < 0.1 * b, "{a} vs {b}");
    }

    #[test]
    fn running_count_matches_the_batch_count_at_every_prefix() {
        for (file, m) in shared_transcripts() {
            let mut running = RunningCount::default();
            for i in 0..m.len() {
                running.push(&message_facts(m.as_slice(), i).unwrap());
                let batch = token_count_with_estimation(&m[..=i]).unwrap().total;
                assert_eq!(running.total(), batch, "{file} after line {i}");
            }
        }
    }

    #[test]
    fn pushed_one_by_one_the_compact_endpoints_window_counts_as_in_one_batch() {
        // `/responses/compact`'s output (the user messages it kept, then its opaque item),
        // each message's facts read from a view of that message alone (a Compactor's push):
        // the kept messages are still read, as the batch count reads them.
        let opaque = serde_json::json!({"role": "assistant", "content": [{"type": "compaction", "encrypted_content": "E".repeat(400)}]});
        for before in [
            vec![
                serde_json::json!({"role": "system", "content": "s".repeat(2_000)}),
                serde_json::json!({"role": "user", "content": "x".repeat(20_000)}),
            ],
            // Anything else before it: the item starts the context, pushed alone or not.
            vec![
                serde_json::json!({"role": "user", "content": "x".repeat(20_000)}),
                serde_json::json!({"role": "assistant", "content": "a".repeat(8_000)}),
            ],
        ] {
            let mut all = before.clone();
            all.push(opaque.clone());
            all.push(serde_json::json!({"role": "user", "content": "next"}));
            let m = Message::parse_all(serde_json::Value::Array(all)).unwrap();
            let mut running = RunningCount::default();
            for i in 0..m.len() {
                running.push(&message_facts(&m[i..=i], 0).unwrap());
                let batch = token_count_with_estimation(&m[..=i]).unwrap().total;
                assert_eq!(running.total(), batch, "after message {i}");
            }
        }
    }

    #[test]
    fn the_running_count_starts_at_a_providers_compaction_as_the_batch_count_does() {
        let m = Message::parse_all(serde_json::json!([
            {"role": "user", "content": "x".repeat(8_000)},
            {"role": "assistant", "content": "y".repeat(8_000),
             "usage": {"input_tokens": 2_000, "output_tokens": 2_000}},
            {"role": "user", "content": "continue"},
            {"role": "assistant", "content": [
                {"type": "compaction", "content": "We migrated the users table."},
                {"type": "text", "text": "Continuing."}]},
            {"role": "user", "content": "status?"},
            {"role": "assistant", "content": [
                {"type": "compaction", "content": "Later: the orders table too."}]},
            {"role": "user", "content": "and now?"},
            // A paused (or on-demand) compaction's answer reports usage 0: the block counts
            // by its content, not as a context of 0 tokens.
            {"role": "assistant", "content": [
                {"type": "compaction", "content": "z".repeat(4_000)}],
             "usage": {"input_tokens": 0, "output_tokens": 0}},
            {"role": "user", "content": "go on"},
        ]))
        .unwrap();
        let mut running = RunningCount::default();
        for i in 0..m.len() {
            running.push(&message_facts(m.as_slice(), i).unwrap());
            let batch = token_count_with_estimation(&m[..=i]).unwrap().total;
            assert_eq!(running.total(), batch, "after message {i}");
        }
        assert!(
            (1_000..1_100).contains(&running.total()),
            "only the last compaction on: {}",
            running.total()
        );
    }

    #[test]
    fn estimates_of_selected_messages_add_up_per_message() {
        let path = format!(
            "{}/../shared/transcripts/cc_small_short.jsonl",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("test transcript {path} is missing: {e}"));
        let m = crate::transforms::transcript::parse_transcript(&text).unwrap();
        let v = m.as_slice();
        let each: Vec<u64> = (0..v.len())
            .map(|i| estimate_message(v, i).unwrap())
            .collect();
        for (lo, hi) in [
            (0, v.len()),
            (1, v.len() / 2),
            (v.len() / 3, v.len()),
            (2, 2),
        ] {
            let want: u64 = each[lo..hi].iter().sum();
            assert_eq!(estimate_range(v, lo..hi).unwrap(), want, "{lo}..{hi}");
            let odd: Vec<usize> = (lo..hi).filter(|i| i % 2 == 1).collect();
            let want: u64 = odd.iter().map(|&i| each[i]).sum();
            assert_eq!(estimate_indices(v, odd).unwrap(), want, "odd of {lo}..{hi}");
        }
    }

    #[test]
    fn counts_in_a_row_reuse_nothing_stale() {
        // The scratch marks kept between counts: a long count, a short one, then the long
        // one again give what each gives alone.
        let long = json!([
            {"type": "user", "message": {"role": "user", "content": "q"}},
            {"type": "assistant", "message": {"id": "m1", "role": "assistant", "stop_reason": null,
                "content": [{"type": "text", "text": "x".repeat(400)}],
                "usage": {"input_tokens": 100, "output_tokens": 1}}},
            {"type": "user", "message": {"role": "user", "content": "r".repeat(80)}},
            {"type": "assistant", "message": {"id": "m1", "role": "assistant", "stop_reason": null,
                "content": [{"type": "text", "text": "y".repeat(40)}]}},
            {"type": "user", "message": {"role": "user", "content": "z".repeat(800)}}
        ]);
        let short = json!([{"role": "user", "content": "s".repeat(40)}]);
        let a = count(long.clone());
        let b = count(short.clone());
        assert_eq!(count(long), a);
        assert_eq!(count(short), b);
        assert_eq!(a.total, 100 + 110 + 20 + 200);
    }

    #[test]
    fn a_response_that_began_among_kept_messages_stays_stale() {
        // Fuzzing finding F4: one kept message, then two lines of one streamed response; the
        // first line is in the stale window, the second just after it. Both carry the old
        // context's usage, so both counters estimate everything after the boundary.
        let line = |text: &str| {
            json!({"type": "assistant", "message": {"role": "assistant", "id": "msg_X",
                "content": [{"type": "text", "text": text.repeat(40)}],
                "usage": {"input_tokens": 1000, "output_tokens": 1}, "stop_reason": null}})
        };
        let m = Message::parse_all(json!([
            {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                "compactMetadata": {"trigger": "auto", "keptMessages": 1}},
            {"type": "user", "isCompactSummary": true, "message": {"role": "user", "content": "summary"}},
            line("a"),
            {"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t", "content": "r".repeat(40)}]}},
            line("b"),
            // Another response starts: its usage is fresh again.
            {"type": "assistant", "message": {"role": "assistant", "id": "msg_Y",
                "content": [{"type": "text", "text": "y"}],
                "usage": {"input_tokens": 2000, "output_tokens": 3}, "stop_reason": "end_turn"}}
        ]))
        .unwrap();
        let expected = [0, 2, 12, 22, 32, 2003];
        let mut running = RunningCount::default();
        for (i, want) in expected.iter().enumerate() {
            running.push(&message_facts(m.as_slice(), i).unwrap());
            let checked = token_count_checked(&m[..=i]).unwrap().total;
            assert_eq!((running.total(), checked), (*want, *want), "after line {i}");
        }
    }

    #[test]
    fn the_stateless_count_reads_a_later_kept_response_as_stale_too() {
        // A session-memory compaction kept two responses (each with the old context's usage)
        // and their results; the latest usage is the second kept response, not the first
        // after the boundary. The stateless count estimates from the boundary on, as the
        // running and checked counts do; a fresh response after the window anchors again.
        let a = |id: &str, input: u64| {
            json!({"type": "assistant", "message": {"role": "assistant", "id": id,
                "content": [{"type": "tool_use", "id": format!("t{id}"), "name": "Read", "input": {"p": "x".repeat(40)}}],
                "usage": {"input_tokens": input, "output_tokens": 7}, "stop_reason": "tool_use"}})
        };
        let r = |id: &str| {
            json!({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("t{id}"), "content": "r".repeat(80)}]}})
        };
        let m = Message::parse_all(json!([
            {"type": "user", "message": {"role": "user", "content": "old ".repeat(400)}},
            {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted",
                "compactMetadata": {"trigger": "auto", "keptMessages": 4}},
            {"type": "user", "isCompactSummary": true, "message": {"role": "user", "content": "summary"}},
            a("k1", 90_000), r("k1"), a("k2", 100_000), r("k2"),
            {"type": "user", "message": {"role": "user", "content": "next"}},
            a("f1", 3_000), r("f1")
        ]))
        .unwrap();
        let mut running = RunningCount::default();
        for i in 0..m.len() {
            running.push(&message_facts(m.as_slice(), i).unwrap());
            let stateless = stateless_count(&m[..=i], None).unwrap();
            let checked = token_count_checked(&m[..=i]).unwrap();
            assert_eq!(stateless, checked, "after line {i}");
            assert_eq!(stateless.total, running.total(), "after line {i}");
        }
        // Before the fix: anchored on k2's 100,000 after line 6.
        let c = stateless_count(&m[..7], None).unwrap();
        assert_eq!((c.anchor, c.total < 1_000), (None, true), "{c:?}");
        let fresh = stateless_count(m.as_slice(), None).unwrap();
        assert_eq!(fresh.anchor, Some(8));
    }

    #[test]
    fn later_lines_of_the_anchor_response_without_usage_count_once() {
        // A response whose usage is on its first line only: its later lines are part of it
        // (SPEC §3: the estimate starts after the last of them), until another response
        // starts. Batch and running counts agree at every prefix.
        for (stop, expected) in [
            (json!("end_turn"), [1, 105, 105, 115, 125, 135]),
            (Value::Null, [1, 101, 201, 211, 221, 231]),
        ] {
            let m = Message::parse_all(json!([
                {"type": "user", "message": {"role": "user", "content": "go"}},
                {"type": "assistant", "message": {"role": "assistant", "id": "m1", "stop_reason": stop,
                    "content": [{"type": "text", "text": "hi"}],
                    "usage": {"input_tokens": 100, "output_tokens": if stop.is_null() { 1 } else { 5 }}}},
                {"type": "assistant", "message": {"role": "assistant", "id": "m1",
                    "content": [{"type": "text", "text": "x".repeat(400)}]}},
                {"type": "user", "message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t", "content": "r".repeat(40)}]}},
                // Another response without usage closes m1 ...
                {"type": "assistant", "message": {"role": "assistant", "id": "m2",
                    "content": [{"type": "text", "text": "y".repeat(40)}]}},
                // ... so a later m1 line is estimated.
                {"type": "assistant", "message": {"role": "assistant", "id": "m1",
                    "content": [{"type": "text", "text": "z".repeat(40)}]}}
            ]))
            .unwrap();
            let mut running = RunningCount::default();
            for (i, want) in expected.iter().enumerate() {
                running.push(&message_facts(m.as_slice(), i).unwrap());
                let batch = token_count_with_estimation(&m[..=i]).unwrap().total;
                assert_eq!(
                    (running.total(), batch),
                    (*want, *want),
                    "{stop} after line {i}"
                );
            }
        }
    }

    #[test]
    fn bogus_usage_is_rejected_when_the_model_is_known() {
        let m = Message::parse_all(json!([
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "x", "usage": {"input_tokens": 5_000_000, "output_tokens": 1}}
        ]))
        .unwrap();
        let c = token_count_with_estimation(m.as_slice()).unwrap();
        let cfg = crate::model::config::Config::default();
        let e = check_plausible(m.as_slice(), &c, "claude-opus-4-6", &cfg).unwrap_err();
        assert_eq!(e.code, crate::model::error::ErrorCode::InvalidTokenCount);
        assert!(e.message.starts_with("messages[1].usage"), "{}", e.message);
        assert!(check_plausible(m.as_slice(), &c, "claude-opus-4-6[1m]", &cfg).is_err());
        let fine = token_count_with_estimation(&m[..1]).unwrap();
        assert!(check_plausible(&m[..1], &fine, "claude-opus-4-6", &cfg).is_ok());
    }

    #[test]
    fn sidechain_and_pre_boundary_lines_are_ignored() {
        let c = count(json!([
            {"type": "user", "message": {"role": "user", "content": "x".repeat(4000)}},
            {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted"},
            {"type": "user", "message": {"role": "user", "content": "y".repeat(400)}},
            {"type": "assistant", "isSidechain": true, "message": {"role": "assistant", "id": "s",
                "content": [], "usage": {"input_tokens": 50000}}}
        ]));
        assert_eq!(c.total, 100);
    }

    /// A Claude Code line of `kind` with `uuid` under `parent` (`None`: a root): `text` as its
    /// content, `input` as its usage's input tokens when given (an assistant line).
    fn cc_line(
        kind: &str,
        uuid: &str,
        parent: Option<&str>,
        text: &str,
        input: Option<u64>,
        more: Value,
    ) -> Value {
        let mut message = json!({"role": kind, "content": text});
        if kind == "assistant" {
            message["id"] = json!(format!("msg_{uuid}"));
            message["stop_reason"] = json!("end_turn");
            if let Some(input) = input {
                message["usage"] = json!({"input_tokens": input, "output_tokens": 10});
            }
        }
        let mut v = json!({"type": kind, "uuid": uuid, "parentUuid": parent, "message": message});
        if let (Value::Object(o), Value::Object(m)) = (&mut v, more) {
            o.extend(m);
        }
        v
    }

    /// The lines, read as a session file is (its chain marked).
    fn session_file(lines: &[Value]) -> Vec<Message> {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        crate::transforms::transcript::parse_transcript(&text).unwrap()
    }

    #[test]
    fn a_rewind_keeps_the_calibration_of_the_branch_it_leaves_and_anchors_on_the_chain() {
        // A branch of three responses whose usage shows 20,000 tokens of system prompt and
        // tools besides the messages, then a rewind to the first question.
        let side = json!({});
        let mut lines = vec![
            cc_line("user", "q1", None, &"q".repeat(400), None, side.clone()),
            cc_line(
                "assistant",
                "r1",
                Some("q1"),
                &"a".repeat(4_000),
                Some(20_100),
                side.clone(),
            ),
            cc_line(
                "user",
                "q2",
                Some("r1"),
                &"b".repeat(8_000),
                None,
                side.clone(),
            ),
            cc_line(
                "assistant",
                "r2",
                Some("q2"),
                &"c".repeat(4_000),
                Some(23_100),
                side.clone(),
            ),
            cc_line(
                "user",
                "q3",
                Some("r2"),
                &"d".repeat(8_000),
                None,
                side.clone(),
            ),
            cc_line(
                "assistant",
                "r3",
                Some("q3"),
                &"e".repeat(4_000),
                Some(26_100),
                side.clone(),
            ),
            // The rewind: asked again under the first question.
            cc_line(
                "user",
                "q4",
                Some("q1"),
                &"f".repeat(2_000),
                None,
                side.clone(),
            ),
        ];
        let file = session_file(&lines);
        assert!(file.has_other_branches());
        assert_eq!(
            (1..6).map(|i| file.on_other_branch(i)).collect::<Vec<_>>(),
            [true; 5]
        );
        // What the branch taught, as it was read before the rewind (in file order).
        let before = session_file(&lines[..6]);
        let learned = learned_before(&before[..], before.len()).unwrap();
        assert_eq!(learned.observations().len(), 3);
        let fit = learned.fit().unwrap();
        assert!((fit.overhead - 20_000.0).abs() < 200.0, "{fit:?}");
        // Learned from the branch left behind, wherever it sits; counted along the chain.
        assert_eq!(learned_before(&file[..], 0).unwrap(), learned);
        let c = token_count_with_estimation(&file[..]).unwrap();
        let chain_estimate = 100 + 500;
        assert_eq!((c.anchor, c.estimated), (None, chain_estimate));
        assert!(c.calibrated);
        assert_eq!(c.total, fit.predict(chain_estimate));
        assert!(c.total > 20_000, "{c:?}");
        // The same as a running count given the lines one by one, the branch first.
        let mut running = RunningCount::default();
        for i in 0..before.len() {
            running.push(&message_facts(&before[..], i).unwrap());
        }
        assert_eq!(running.calibration(), &learned);
        // Usage on the chain anchors the count: the usage of the branch left behind never does.
        lines.push(cc_line(
            "assistant",
            "r4",
            Some("q4"),
            "ok",
            Some(20_700),
            side.clone(),
        ));
        let file = session_file(&lines);
        let c = token_count_with_estimation(&file[..]).unwrap();
        assert_eq!((c.anchor, c.total), (Some(7), 20_710));
        // A usage line of the chain is observed against the chain's estimate, after the
        // branch's observations.
        let all = learned_before(&file[..], file.len()).unwrap();
        let obs: Vec<Observation> = all.observations().copied().collect();
        assert_eq!(obs.len(), 4);
        assert_eq!(
            obs[3],
            Observation {
                estimated: chain_estimate,
                real: 20_700
            }
        );
        // Without the rewind's branch, nothing is learned before the chain's usage.
        let resumed: Vec<Value> = [0, 6].iter().map(|&i| lines[i].clone()).collect();
        let c = token_count_with_estimation(&session_file(&resumed)[..]).unwrap();
        assert_eq!((c.total, c.calibrated), (chain_estimate, false));
    }

    /// `learned_and_estimated` reads once what `learned_before` and `estimate_range` read
    /// apart: the same answers for every `from ≤ end`, with and without usage, across a
    /// boundary and in a file with a branch left behind.
    #[test]
    fn learned_and_estimated_is_learned_before_and_estimate_range() {
        let none = json!({});
        let linear = vec![
            cc_line("user", "q1", None, &"q".repeat(400), None, none.clone()),
            cc_line(
                "assistant",
                "r1",
                Some("q1"),
                &"a".repeat(800),
                Some(20_200),
                none.clone(),
            ),
            cc_line(
                "user",
                "q2",
                Some("r1"),
                &"f".repeat(1200),
                None,
                none.clone(),
            ),
            cc_line(
                "assistant",
                "r2",
                Some("q2"),
                &"b".repeat(400),
                Some(20_600),
                none.clone(),
            ),
            cc_line(
                "user",
                "q3",
                Some("r2"),
                &"g".repeat(4000),
                None,
                none.clone(),
            ),
        ];
        let mut bounded = linear.clone();
        bounded.insert(
            3,
            json!({"type": "system", "subtype": "compact_boundary", "uuid": "b", "parentUuid": "q2",
                "content": "Conversation compacted"}),
        );
        let mut rewound = linear.clone();
        rewound.push(cc_line(
            "user",
            "q9",
            Some("r1"),
            &"z".repeat(300),
            None,
            none.clone(),
        ));
        let unused: Vec<Value> = linear
            .iter()
            .filter(|l| l["type"] == "user")
            .cloned()
            .collect();
        let api: Vec<Message> = [
            json!({"role": "user", "content": "x".repeat(900)}),
            json!({"role": "assistant", "content": "y".repeat(300)}),
        ]
        .into_iter()
        .map(|v| Message::from_value(v, "m").unwrap())
        .collect();
        let sets = [
            session_file(&linear),
            session_file(&bounded),
            session_file(&rewound),
            session_file(&unused),
            api,
        ];
        assert!(sets[2].has_other_branches());
        for m in &sets {
            for end in 0..=m.len() {
                for from in 0..=end {
                    let (learned, estimated) = learned_and_estimated(&m[..], end, from).unwrap();
                    assert_eq!(
                        learned,
                        learned_before(&m[..], end).unwrap(),
                        "{end} {from}"
                    );
                    assert_eq!(
                        estimated,
                        estimate_range(&m[..], from..end).unwrap(),
                        "{end} {from}"
                    );
                }
            }
        }
        // Something was learned and estimated, so the comparison above can fail.
        let (learned, estimated) = learned_and_estimated(&sets[0][..], 5, 2).unwrap();
        assert!(learned.fit().is_some() && estimated > 1000, "{estimated}");
    }

    #[test]
    fn a_rewound_sub_agent_file_learns_from_its_branch_left_behind() {
        let side = json!({"isSidechain": true, "agentId": "a1"});
        let lines = vec![
            cc_line("user", "q1", None, &"q".repeat(400), None, side.clone()),
            cc_line(
                "assistant",
                "r1",
                Some("q1"),
                &"a".repeat(400),
                Some(12_200),
                side.clone(),
            ),
            cc_line(
                "user",
                "q2",
                Some("q1"),
                &"f".repeat(400),
                None,
                side.clone(),
            ),
        ];
        let file = session_file(&lines);
        assert!(file.on_other_branch(1) && !file.on_other_branch(2));
        let c = token_count_with_estimation(&file[..]).unwrap();
        // 12,200 real for 100 estimated: 12,100 of overhead, at ratio 1.
        assert_eq!((c.anchor, c.estimated, c.total), (None, 200, 12_300));
        // In a main session file, sub-agent lines are no branch of its conversation.
        let mut main = vec![cc_line("user", "m1", None, "go", None, json!({}))];
        main.extend(lines.clone());
        main.push(cc_line(
            "assistant",
            "m2",
            Some("m1"),
            "done",
            None,
            json!({}),
        ));
        let main = session_file(&main);
        assert!(!main.has_other_branches());
    }

    /// A [`TailRecord`] read from a native view the way the JS reader reads one: every
    /// header, the usage of the latest main-chain response it finds, every estimate; or,
    /// with `holes`, leaving out the estimates of the messages it names.
    struct NativeRecord<'a> {
        view: &'a [Message],
        anchor: Option<usize>,
        holes: Vec<usize>,
    }

    impl<'a> NativeRecord<'a> {
        fn new(view: &'a [Message], holes: Vec<usize>) -> Self {
            let anchor = match view.latest_usage(view.len()) {
                Ok(Latest::Usage(i, _)) => Some(i),
                _ => None,
            };
            NativeRecord {
                view,
                anchor,
                holes,
            }
        }
    }

    impl TailRecord for NativeRecord<'_> {
        fn message_count(&self) -> usize {
            self.view.len()
        }
        fn message(&self, i: usize) -> Option<TailMessage> {
            type M = TailMessage;
            let v = self.view;
            let flags = [
                (v.is_transcript(i), M::TRANSCRIPT),
                (v.is_sidechain(i), M::SIDECHAIN),
                (v.is_compact_boundary(i), M::BOUNDARY),
                (v.starts_context(i), M::STARTS_CONTEXT),
                (!matches!(v.usage(i), Ok(None)), M::HAS_USAGE),
                (v.usage_is_partial(i), M::PARTIAL),
                (v.clears_at_next_user(i), M::CLEARS_AT_USER),
                (
                    self.anchor.is_some_and(|a| v.same_response(i, a)),
                    M::SAME_RESPONSE,
                ),
            ];
            let bits = flags.iter().filter(|(on, _)| *on).map(|(_, f)| f).sum();
            Some(TailMessage::new(v.kind(i).ok(), bits))
        }
        fn usage(&self) -> Option<(usize, UsageCounts)> {
            let a = self.anchor?;
            Some((a, self.view.usage(a).ok()??))
        }
        fn estimate(&self, i: usize) -> Option<u64> {
            if self.holes.contains(&i) {
                return None;
            }
            let c = self.view.content(i, Detail::Estimate).ok()?;
            Some(estimate_content(&c))
        }
    }

    #[test]
    fn the_tail_record_count_is_the_count_at_every_prefix() {
        let mut settled = 0;
        for (file, m) in shared_transcripts() {
            for k in 0..=m.len() {
                let v = &m[..k];
                let want = token_count_with_estimation(v).unwrap();
                // The record settles what `tokenCountWithEstimation` gives.
                let checked = stateless_count(v, None).unwrap();
                match count_tail(&NativeRecord::new(v, Vec::new())) {
                    Some(got) => {
                        assert_eq!(got, want, "{file}: first {k}");
                        assert_eq!(got, checked, "{file}: first {k}");
                        settled += 1;
                    }
                    // Only where a boundary comes before any usage, or where the anchor
                    // response begins right after a boundary (the checked count decides).
                    None => {
                        let after_boundary = want.anchor_first.is_some_and(|f| {
                            (0..f)
                                .rev()
                                .map(|i| &v[i])
                                .find(|x| x.kind() == Kind::Assistant || x.is_compact_boundary())
                                .is_some_and(Message::is_compact_boundary)
                        });
                        assert!(want.anchor.is_none() || after_boundary, "{file}: first {k}");
                    }
                }
                // A message left unread: the same count, or none (never another).
                if let Some(a) = want.anchor {
                    for hole in [a, a.saturating_sub(1), k.saturating_sub(1)] {
                        if let Some(got) = count_tail(&NativeRecord::new(v, vec![hole])) {
                            assert_eq!(got, want, "{file}: first {k}, message {hole} unread");
                        }
                    }
                }
            }
        }
        assert!(settled > 1000, "{settled}");
    }

    #[test]
    fn the_tail_record_count_leaves_unusual_tails_to_the_general_count() {
        let line = |id: &str, usage: Value, stop: Value, side: bool| {
            json!({"type": "assistant", "isSidechain": side, "message": {"id": id, "role": "assistant",
                "stop_reason": stop, "content": [{"type": "text", "text": "z".repeat(40)}], "usage": usage}})
        };
        let user = |c: Value| json!({"type": "user", "message": {"role": "user", "content": c}});
        let u = json!({"input_tokens": 100, "output_tokens": 1});
        let cases = [
            // A boundary after the usage: estimated from the boundary on.
            json!([user(json!("q")), line("m", u.clone(), Value::Null, false),
                {"type": "system", "subtype": "compact_boundary"}, user(json!("summary"))]),
            // A response right after a boundary that kept it: its usage measured the old
            // context (the checked count estimates instead).
            json!([{"type": "system", "subtype": "compact_boundary", "compactMetadata": {"keptMessages": 1}},
                user(json!("summary")), line("m", u.clone(), json!("tool_use"), false),
                user(json!("result"))]),
        ];
        for (n, case) in cases.into_iter().enumerate() {
            let m = Message::parse_all(case).unwrap();
            assert_eq!(
                count_tail(&NativeRecord::new(&m, Vec::new())),
                None,
                "case {n}"
            );
        }
        // A sidechain response after the main one, and a split streamed response with a
        // result between its lines: settled, and the same as the general count.
        let m = Message::parse_all(json!([
            user(json!("q")),
            line("m", u.clone(), Value::Null, false),
            user(json!([{"type": "tool_result", "tool_use_id": "t", "content": "r".repeat(90)}])),
            line("m", u.clone(), Value::Null, false),
            line("s", json!({"input_tokens": 9}), Value::Null, true),
            user(json!("next")),
        ]))
        .unwrap();
        let want = token_count_with_estimation(m.as_slice()).unwrap();
        assert_eq!(
            count_tail(&NativeRecord::new(&m, Vec::new())),
            Some(want.clone())
        );
        // A message the count estimates, or one between two of them (the sidechain line),
        // unread (or malformed, which the general count reports): not settled. Before the
        // response: settled.
        for hole in 1..=5 {
            let r = NativeRecord::new(&m, vec![hole]);
            assert_eq!(count_tail(&r), None, "message {hole} unread");
        }
        let r = NativeRecord::new(&m, vec![0]);
        assert_eq!(count_tail(&r).map(|c| c.total), Some(want.total));
    }

    #[test]
    fn a_record_of_every_message_without_usage_is_their_estimate() {
        let m = Message::parse_all(json!([
            {"role": "user", "content": "q".repeat(41)},
            {"role": "system", "clear_at": "next_user_message", "content": "r".repeat(300)},
            {"role": "assistant", "content": [{"type": "text", "text": "a".repeat(18)},
                {"type": "tool_use", "id": "t", "name": "Read", "input": {"path": "/a/b.rs"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x".repeat(99)}]},
            {"role": "system", "clear_at": "next_user_message", "content": "s".repeat(200)},
            {"role": "assistant", "content": "done"},
        ]))
        .unwrap();
        for k in 0..=m.len() {
            let v = &m[..k];
            let want = token_count_with_estimation(v).unwrap();
            assert_eq!(want.anchor, None);
            let got = count_tail(&NativeRecord::new(v, Vec::new()));
            assert_eq!(got, Some(want.clone()), "first {k}");
            // A message the count reads, or one between two of them, unread: not settled;
            // after the last one read: settled.
            for hole in 0..k {
                let r = NativeRecord::new(v, vec![hole]);
                let read_after = (hole + 1..k).any(|j| is_read(v, j).unwrap());
                let read_before = (0..hole).any(|j| is_read(v, j).unwrap());
                if is_read(v, hole).unwrap() || (read_before && read_after) {
                    assert_eq!(count_tail(&r), None, "first {k}, message {hole} unread");
                } else {
                    assert_eq!(count_tail(&r), Some(want.clone()), "first {k}, {hole}");
                }
            }
        }
        // The cleared reminder counts nothing once a later user message exists.
        let no_reminder: Vec<Message> = m
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != 1)
            .map(|(_, x)| x.clone())
            .collect();
        assert_eq!(
            count_tail(&NativeRecord::new(&m, Vec::new())).map(|c| c.total),
            Some(
                token_count_with_estimation(no_reminder.as_slice())
                    .unwrap()
                    .total
            )
        );
    }

    #[test]
    fn the_tail_record_agrees_on_reminders() {
        let mut v = Vec::new();
        for i in 0..6 {
            v.push(json!({"role": "user", "content": format!("question {i}")}));
            v.push(json!({"role": "system", "clear_at": "next_user_message", "content": "r".repeat(300)}));
            v.push(json!({"role": "assistant", "content": "a", "usage": {"input_tokens": 900 + i, "output_tokens": 3}}));
            v.push(json!({"role": "system", "clear_at": "next_user_message", "content": "s".repeat(200)}));
        }
        let m = Message::parse_all(Value::Array(v)).unwrap();
        let mut settled = 0;
        for k in 1..=m.len() {
            let v = &m[..k];
            let want = token_count_with_estimation(v).unwrap();
            if let Some(got) = count_tail(&NativeRecord::new(v, Vec::new())) {
                assert_eq!(got, want, "first {k}");
                settled += 1;
            }
        }
        assert!(settled > 10, "{settled}");
    }
}

#[cfg(test)]
mod reminder_tests {
    use super::*;
    use crate::model::messages::Message;
    use serde_json::{json, Value};

    fn reminder(i: usize) -> Value {
        json!({"role": "system", "clear_at": "next_user_message",
            "content": format!("REMINDER {i} {}", "r".repeat(400))})
    }

    /// A user turn, a reminder, and a reply (with usage every other turn).
    fn session(turns: usize) -> Vec<Message> {
        let mut v = Vec::new();
        for i in 0..turns {
            v.push(json!({"role": "user", "content": format!("question {i}")}));
            v.push(reminder(i));
            let mut a = json!({"role": "assistant", "content": format!("answer {i}")});
            if i % 2 == 1 {
                a["usage"] = json!({"input_tokens": 1000 + 10 * i, "output_tokens": 5});
            }
            v.push(a);
        }
        Message::parse_all(Value::Array(v)).unwrap()
    }

    #[test]
    fn a_reminder_counts_until_a_later_user_message_clears_it() {
        let m = Message::parse_all(json!([
            {"role": "user", "content": "start"},
            reminder(0),
        ]))
        .unwrap();
        let full = estimate_range(m.as_slice(), 0..2).unwrap();
        assert!(full > 100, "{full}");
        let mut later = m.clone();
        later.extend(Message::parse_all(json!([{"role": "user", "content": "next"}])).unwrap());
        // Still sent (kept, unchanged), no longer read.
        assert!(is_sent(later.as_slice(), 1).unwrap());
        assert!(!is_read(later.as_slice(), 1).unwrap());
        assert_eq!(estimate_message(later.as_slice(), 1).unwrap(), 0);
        assert_eq!(
            estimate_range(later.as_slice(), 0..3).unwrap(),
            estimate_range(m.as_slice(), 0..1).unwrap() + 1
        );
        // An assistant reply alone does not clear it; `clear_at: "never"` never clears.
        let mut reply = m.clone();
        reply.extend(Message::parse_all(json!([{"role": "assistant", "content": "ok"}])).unwrap());
        assert!(is_read(reply.as_slice(), 1).unwrap());
        let mut never = later.clone();
        never[1].extra.insert("clear_at".into(), json!("never"));
        assert!(is_read(never.as_slice(), 1).unwrap());
    }

    #[test]
    fn the_running_count_drops_reminders_a_user_message_clears_at_every_prefix() {
        let m = session(12);
        let mut running = RunningCount::default();
        for k in 0..m.len() {
            running.push(&message_facts(m.as_slice(), k).unwrap());
            let v = &m[..=k];
            let batch = token_count_with_estimation(v).unwrap();
            assert_eq!(running.total(), batch.total, "first {}", k + 1);
            assert_eq!(
                learned_before(v, v.len()).unwrap(),
                running.calibration().clone(),
                "first {}",
                k + 1
            );
        }
        // Without usage, every reminder but the last is cleared: the count is that of the
        // other messages and the last reminder, pushed one by one or counted whole.
        let mut m = m;
        for x in &mut m {
            x.extra.remove("usage");
        }
        let others: Vec<Message> = m
            .iter()
            .enumerate()
            .filter(|(i, x)| !x.clears_at_next_user() || *i == m.len() - 2)
            .map(|(_, x)| x.clone())
            .collect();
        let want = estimate_range(others.as_slice(), 0..others.len()).unwrap();
        assert_eq!(
            token_count_with_estimation(m.as_slice()).unwrap().total,
            want
        );
        let mut running = RunningCount::default();
        for k in 0..m.len() {
            running.push(&message_facts(m.as_slice(), k).unwrap());
        }
        assert_eq!(running.total(), want);
    }
}
