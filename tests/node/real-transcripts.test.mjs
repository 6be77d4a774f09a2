// The library on real Claude Code sessions (/work/shared/transcripts, see SOURCES.md):
// how close tokenCountWithEstimation comes to the context size the API reported, the real
// auto-compaction, and the conversation operations on real data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as cc from '../../pkg/node.js';
import { apiCalls, measureEstimates, errorStats, percentile, asOwnConversation, readTranscriptFile } from '../../pkg/cli-lib.mjs';
import { TRANSCRIPTS as TRANSCRIPTS_DIR } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const LONG = 'cc_long_autocompact_4d5611e5.jsonl';
const IMAGE = 'cc_image_9e953218.jsonl';
const SMALL = 'cc_small_short.jsonl';
const AGENT = 'cc_long_autocompact_4d5611e5.agent-acompact-e1f845.jsonl';
const load = (f) => readTranscriptFile(TRANSCRIPTS_DIR + f).lines;
const fmt = (x) => (Number.isFinite(x) ? `${(x * 100).toFixed(2)}%` : '-');

test('analysis helpers (cli-lib.mjs): percentile and error stats', () => {
  assert.equal(percentile([1, 2, 3, 4], 0.5), 2);
  assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9), 9);
  assert.ok(Number.isNaN(percentile([], 0.5)));
  assert.deepEqual(errorStats([-0.1, 0.02, 0.03]), { count: 3, median: 0.03, p90: 0.1, max: 0.1, meanSigned: -0.05 / 3 });
});

test('API calls are grouped by message.id: the counts SOURCES.md gives', () => {
  const long = apiCalls(load(LONG));
  assert.equal(long.length, 139);
  assert.equal(long.reduce((n, c) => n + c.lineCount, 0), 254, 'all 254 assistant lines belong to a call');
  assert.equal(Math.max(...long.filter((c) => c.first < 753).map((c) => c.realContext)), 164_831);
  assert.equal(long.find((c) => c.first > 753).realContext, 36_081);
  assert.equal(apiCalls(load(IMAGE)).length, 101);
  const small = apiCalls(load(SMALL));
  assert.equal(small.length, 1);
  assert.equal(small[0].lineCount, 5, 'one response split over 5 lines');
  assert.equal(small[0].realContext, 25_353);
});

// Per call: tokenCountWithEstimation(all lines before the call's first line) against
// input + cache_creation + cache_read of the call's usage.
//
// "Anchored" calls have an earlier usage in view: the count is that usage plus a 4-chars-per-
// token estimate of the lines since, so the error is only the estimate of one turn's new
// lines (plus the previous response's output, logged mid-stream as ~1 token). Measured at the
// time of writing: long transcript median 0.21% / p90 1.63% / max 9.75%; image transcript
// median 0.48% / p90 1.38% / max 16.1%. The bounds below (median < 1%, p90 < 4%, max < 25%)
// leave room for estimator tweaks but fail on any structural mistake: counting a split
// response's usage once per line doubles the count (+100%), ignoring usage loses the system
// prompt and tools (−10% … −99%), and estimating lines before the anchor again adds ~+100%.
//
// "Unanchored" calls (session start, first after a compaction, a sub-agent's only call) are a
// pure text estimate of a transcript that never contains the system prompt or the tool
// definitions (~20–30K tokens), so they can only be low; they are reported, not bounded.
for (const [file, expectAnchored] of [
  [LONG, true],
  [IMAGE, true],
  [SMALL, false],
  [AGENT, false],
]) {
  test(`estimation error per API call: ${file}`, () => {
    const { lines, subAgent } = asOwnConversation(load(file));
    assert.equal(subAgent, file === AGENT);
    const rows = measureEstimates(lines);
    const all = errorStats(rows.map((r) => r.error));
    const anchoredRows = rows.filter((r) => r.anchored);
    const anchored = errorStats(anchoredRows.map((r) => r.error));
    console.log(
      `${file}: ${rows.length} calls — all: median ${fmt(all.median)}, p90 ${fmt(all.p90)}, max ${fmt(all.max)}; ` +
        `anchored (${anchored.count}): median ${fmt(anchored.median)}, p90 ${fmt(anchored.p90)}, max ${fmt(anchored.max)}`,
    );
    for (const r of rows.filter((r) => !r.anchored)) {
      console.log(`  unanchored call at line ${r.lineNumber}: real ${r.realContext}, estimate ${r.estimate} (${fmt(r.error)})`);
      assert.ok(r.estimate < r.realContext, 'a pure estimate lacks the system prompt: it can only be low');
    }
    if (expectAnchored) {
      assert.ok(anchored.count >= rows.length - 2, 'all but the session start / post-compaction calls are anchored');
      assert.ok(anchored.median < 0.01, `median ${fmt(anchored.median)} < 1%`);
      assert.ok(anchored.p90 < 0.04, `p90 ${fmt(anchored.p90)} < 4%`);
      assert.ok(anchored.max < 0.25, `max ${fmt(anchored.max)} < 25%`);
    } else {
      assert.equal(anchored.count, 0);
    }
  });
}

test('the real auto-compaction: 170,251 tokens on claude-opus-4-6 is above the threshold, and so is our count', () => {
  const lines = load(LONG);
  const b = lines.findIndex((l) => l.type === 'system' && l.subtype === 'compact_boundary');
  assert.equal(b, 753);
  assert.deepEqual(lines[b].compactMetadata, { trigger: 'auto', preTokens: 170_251 });
  const model = 'claude-opus-4-6';
  const s = cc.calculateTokenWarningState(170_251, model);
  assert.equal(s.isAboveAutoCompactThreshold, true);
  assert.equal(s.isAboveWarningThreshold, true);
  assert.equal(s.isAtBlockingLimit, false);
  assert.equal(s.percentLeft, 0);

  const before = lines.slice(0, b);
  const ours = cc.tokenCountWithEstimation(before);
  const lastCall = apiCalls(before).pop();
  console.log(
    `right before the compaction: our count ${ours}, Claude Code's preTokens 170251 ` +
      `(${fmt((ours - 170_251) / 170_251)}), last real request ${lastCall.realContext}, threshold ${cc.getAutoCompactThreshold(model)}`,
  );
  assert.equal(cc.shouldAutoCompact(before, model), true, 'we would have compacted here too');
  assert.ok(ours >= cc.getAutoCompactThreshold(model));
  assert.ok(ours > lastCall.realContext, 'the count includes the turn after the last request');
  assert.ok(Math.abs(ours - 170_251) / 170_251 < 0.03, 'within 3% of Claude Code\'s own count');
  // …and not one call earlier: before the last request the count was below the threshold.
  const earlier = lines.slice(0, lastCall.first);
  assert.equal(cc.shouldAutoCompact(earlier, model), false, `count ${cc.tokenCountWithEstimation(earlier)} < 167,000`);
  // With auto-compaction disabled, or inside the compaction's own request, never.
  assert.equal(cc.shouldAutoCompact(before, model, { config: { disableAutoCompact: true } }), false);
  assert.equal(cc.shouldAutoCompact(before, model, { querySource: 'compact' }), false);
  // After the boundary only the summary counts: its estimate on the line the usage before the
  // boundary teaches (the system prompt and tools come with every request).
  const after = lines.slice(0, b + 2);
  const summaryTokens = cc.roughTokenCountEstimation(lines[b + 1].message.content);
  const learned = new cc.Compactor({ model, messages: before }).calibration();
  assert.ok(learned.overhead > 20_000 && learned.ratio > 1, JSON.stringify(learned));
  assert.equal(cc.tokenCountWithEstimation(after), Math.round(learned.overhead + learned.ratio * summaryTokens));
  assert.equal(cc.tokenCountWithEstimation(lines.slice(b, b + 2)), summaryTokens, 'without the history, the estimate alone');
  assert.equal(cc.shouldAutoCompact(lines, model), false, 'at the end of the session: ~106K, no compaction due');
});

test('the compaction request (sub-agent file) carries the whole conversation: above the threshold', () => {
  const { lines } = asOwnConversation(load(AGENT));
  const [call] = apiCalls(lines);
  assert.equal(call.realContext, 3 + 8_681 + 164_830);
  assert.equal(cc.calculateTokenWarningState(call.realContext, call.model).isAboveAutoCompactThreshold, true);
  // Read as it is (every line isSidechain), the file is the sub-agent's own conversation
  // (SPEC §2), counted as the compaction reads it: the same count, past the threshold.
  const own = load(AGENT);
  assert.equal(cc.tokenCountWithEstimation(own), cc.tokenCountWithEstimation(lines));
  assert.equal(cc.shouldAutoCompact(own, call.model), true);
  assert.equal(new cc.Compactor({ model: call.model, messages: own }).warningState().isAboveAutoCompactThreshold, true);
});

test('groupMessagesByApiRound on a real transcript: one round per API call, same objects', () => {
  const lines = load(LONG);
  const groups = cc.groupMessagesByApiRound(lines);
  assert.equal(groups.length, 139 + 1, 'the lines before the first response form the first round');
  assert.equal(groups.flat().length, lines.length);
  groups.flat().forEach((m, i) => assert.strictEqual(m, lines[i]));
});

test('truncateHeadForPTLRetry on the real pre-compaction conversation keeps tool pairs intact', () => {
  const lines = load(LONG).slice(0, 753);
  const out = cc.truncateHeadForPTLRetry(lines, { status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 215000 tokens > 200000 maximum' } } });
  assert.equal(out[0].message.content, cc.constants.PTL_MARKER_TEXT);
  const kept = out.slice(1);
  assert.ok(kept.length < lines.length);
  kept.forEach((m, i) => assert.strictEqual(m, lines[lines.length - kept.length + i]));
  const dropped = lines.slice(0, lines.length - kept.length);
  const droppedTokens = dropped.reduce((n, l) => n + cc.tokenCountWithEstimation([{ ...l, message: l.message && { ...l.message, usage: undefined } }]), 0);
  assert.ok(droppedTokens >= 15_000, `dropped ~${droppedTokens} estimated tokens ≥ the 15,000 gap`);
  const uses = new Set();
  for (const l of kept) {
    const content = l.message && Array.isArray(l.message.content) ? l.message.content : [];
    for (const blk of content) {
      if (blk.type === 'tool_use') uses.add(blk.id);
      if (blk.type === 'tool_result') assert.ok(uses.has(blk.tool_use_id), `tool_result ${blk.tool_use_id} has its tool_use`);
    }
  }
});

test('microCompact on real transcripts: deterministic, input untouched, only compactable tools', () => {
  for (const file of [LONG, IMAGE]) {
    const text = readFileSync(TRANSCRIPTS_DIR + file, 'utf8');
    const lines = cc.parseTranscript(text);
    const start = lines.findLastIndex((l) => l.subtype === 'compact_boundary') + 1;
    const active = lines.slice(start);
    const a = cc.microCompact(active);
    const b = cc.microCompact(cc.parseTranscript(text).slice(start));
    assert.equal(JSON.stringify(a), JSON.stringify(b), 'byte-identical for identical input');
    assert.equal(cc.serializeTranscript(lines), text, 'input untouched');
    const names = new Map();
    for (const l of active) for (const blk of Array.isArray(l.message?.content) ? l.message.content : []) if (blk.type === 'tool_use') names.set(blk.id, blk.name);
    for (const id of a.clearedToolUseIds) assert.ok(['Read', 'Bash', 'Grep', 'Glob', 'WebSearch', 'WebFetch', 'Edit', 'Write'].includes(names.get(id)), `${id}: ${names.get(id)}`);
    assert.ok(a.tokensFreed > 0 && a.clearedToolUseIds.length > 0);
    let changed = 0;
    a.messages.forEach((m, i) => {
      if (m !== active[i]) changed++;
    });
    assert.ok(changed <= a.clearedToolUseIds.length, 'only the lines holding cleared results are new objects');
    console.log(`${file}: microCompact on the active part clears ${a.clearedToolUseIds.length} results, ~${a.tokensFreed} tokens`);
  }
});

test('stripImagesFromMessages on the real image transcript: one line changes, the rest are the same objects', () => {
  const lines = load(IMAGE);
  const out = cc.stripImagesFromMessages(lines);
  const changed = out.map((m, i) => (m === lines[i] ? -1 : i)).filter((i) => i >= 0);
  assert.deepEqual(changed, [224]);
  assert.ok(JSON.stringify(lines[224]).length > 190_000);
  assert.ok(JSON.stringify(out[224]).length < 2_000);
  assert.ok(out[224].message.content.some((blk) => blk.type === 'text' && blk.text === '[image]'));
  assert.ok(!out[224].message.content.some((blk) => blk.type === 'image'));
});
