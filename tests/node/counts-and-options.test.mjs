// Counts and options that were wrong, each fixed with its test: an OpenAI custom tool's
// free-form input counted at the JSON rate; restoration and the prompt-too-long retry measured
// without the caller's `tokenCounter`; a fractional `keepToolUses`; `Date` read times; and an
// environment window too small for the model failing every call over a config field the
// caller never set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { SONNET, recordingSummarizer, summaryResponse, ptlError } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

test('keepToolUses must be a whole number of tool uses: a fraction is INVALID_CONFIG naming it', () => {
  for (const bad of [2.5, -1, 0.1]) {
    assert.throws(() => cc.buildApiContextManagement({ keepToolUses: bad }), (e) => {
      assert.equal(e.code, 'INVALID_CONFIG');
      assert.match(e.message, /keepToolUses/);
      assert.ok(e.message.includes(String(bad)), e.message);
      return true;
    });
  }
  const edit = cc.buildApiContextManagement({ keepToolUses: 4 }).edits[0];
  assert.deepEqual(edit.keep, { type: 'tool_uses', value: 4 });
  assert.deepEqual(cc.buildApiContextManagement({ keepToolUses: 0 }).edits[0].keep, { type: 'tool_uses', value: 0 });
});

/** A conversation large enough that a compaction with restored files is smaller. */
function longer() {
  const msgs = [];
  for (let i = 0; i < 10; i++) msgs.push({ role: 'user', content: `q${i}: ` + 'x'.repeat(8_000) }, { role: 'assistant', content: `a${i}` });
  msgs.push({ role: 'user', content: 'next' });
  return msgs;
}

test('readFileState times given as Dates order the restored files by recency', async () => {
  const readFileState = new Map();
  for (let k = 0; k < 5; k++) readFileState.set(`/src/f${k}.rs`, { content: `fn f${k}() {}\n`, timestamp: 1_000 + k });
  readFileState.set('/src/newest.rs', { content: 'fn newest() {}\n', timestamp: new Date(1_000_000) });
  readFileState.set('/src/oldest.rs', { content: 'fn oldest() {}\n', timestamp: new Date(1) });
  const r = await cc.compactConversation(
    longer(),
    { model: SONNET, summarize: recordingSummarizer(summaryResponse('short')), readFileState },
  );
  const paths = r.restoredFiles.map((f) => f.path);
  assert.deepEqual(paths, ['/src/newest.rs', '/src/f4.rs', '/src/f3.rs', '/src/f2.rs', '/src/f1.rs']);
});

test('a CLAUDE_CODE_AUTO_COMPACT_WINDOW too small for the model is ignored, never an error about config', () => {
  try {
    cc.setEnvironmentDefaults({ CLAUDE_CODE_AUTO_COMPACT_WINDOW: '15000' });
    assert.equal(cc.getEffectiveContextWindowSize(SONNET), 180_000);
    assert.equal(cc.getAutoCompactThreshold(SONNET), 167_000);
    assert.equal(cc.shouldAutoCompact([{ role: 'user', content: 'hi' }], SONNET), false);
    assert.equal(cc.tokenCountWithEstimation([{ role: 'user', content: 'hi' }], { model: SONNET }), 1);
    // One that leaves room caps the window; an explicit config still wins.
    cc.setEnvironmentDefaults({ CLAUDE_CODE_AUTO_COMPACT_WINDOW: '100000' });
    assert.equal(cc.getEffectiveContextWindowSize(SONNET), 80_000);
    assert.equal(cc.getEffectiveContextWindowSize(SONNET, { autoCompactWindow: 120_000 }), 100_000);
    // A config that is too small is still the caller's error, named.
    assert.throws(() => cc.getEffectiveContextWindowSize(SONNET, { autoCompactWindow: 15_000 }), /config\.autoCompactWindow/);
  } finally {
    cc.setEnvironmentDefaults({});
  }
});

// A tokenizer twice as dense as the estimate (2 characters a token) and one at a token a character.
const HALF = (t) => Math.ceil(t.length / 2);
const PER_CHAR = (t) => t.length;

test('restored files and skills are cut and budgeted in the tokenCounter\'s tokens', async () => {
  const file = 'let value = compute(input);\n'.repeat(1_100); // 30,800 characters
  const r = await cc.compactConversation(
    longer(),
    {
      model: SONNET,
      summarize: recordingSummarizer(summaryResponse('short')),
      tokenCounter: PER_CHAR,
      readFileState: { '/src/main.rs': { content: file, timestamp: 1 } },
      invokedSkills: { pdf: { content: file } },
    },
  );
  const [f] = r.restoredFiles;
  const [s] = r.restoredSkills;
  assert.ok(f.truncated && f.tokens <= 5_000 && f.tokens > 4_000, `file: ${f.tokens} tokens`);
  assert.ok(s.truncated && s.tokens <= 5_000 && s.tokens > 4_000, `skill: ${s.tokens} tokens`);
  // What is restored is that many of the tokenizer's tokens (a token a character).
  const texts = r.attachments.map((m) => JSON.stringify(m.content ?? m.attachment));
  const fileText = texts.find((t) => t.includes('/src/main.rs'));
  assert.ok(fileText.length < 5_600, `the restored file holds ${fileText.length} characters`);
});

test("the prompt-too-long retry drops what covers the gap in the tokenCounter's tokens", async () => {
  const msgs = [];
  for (let i = 0; i < 30; i++) {
    msgs.push({ role: 'user', content: `q${i}: ` + 'x'.repeat(4_000) });
    msgs.push({ role: 'assistant', content: `a${i}` });
  }
  const summarize = recordingSummarizer((request, options, n) => {
    if (n === 1) throw ptlError(70_000, 60_000); // 10,000 tokens too many
    return summaryResponse('short');
  });
  await cc.compactConversation(msgs, { model: SONNET, summarize, tokenCounter: HALF });
  const asked = (k) => new Set(JSON.stringify(summarize.calls[k].request).match(/q\d+:/g)).size;
  const dropped = asked(0) - asked(1);
  // Each round is 2,000 of the tokenizer's tokens (1,000 estimated): 5 rounds cover the gap.
  assert.ok(dropped >= 5 && dropped <= 6, `dropped ${dropped} rounds`);
});

/** A Responses conversation whose custom tool call has `input` as its free-form input. */
function customCall(input) {
  return [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'patch the parser ' + 'y'.repeat(4_000) }] },
    { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input },
    { type: 'custom_tool_call_output', call_id: 'c1', output: 'Done.' },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Patched.' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'thanks, next' }] },
  ];
}

test("a custom tool call's free-form input counts as text (4 characters a token) on every path", async () => {
  const patch = '*** Begin Patch\n' + 'context line\n'.repeat(3_000);
  const msgs = customCall(patch);
  const count = cc.tokenCountWithEstimation(msgs);
  const without = cc.tokenCountWithEstimation(customCall(''));
  assert.ok(Math.abs(count - without - patch.length / 4) <= 1, `the input adds ${count - without} tokens for ${patch.length} characters`);
  const c = new cc.Compactor({ model: SONNET, summarize: recordingSummarizer(summaryResponse('short')) });
  c.pushMany(msgs);
  assert.equal(c.tokenCount(), count, 'a Compactor counts as the stateless count');
  const summarize = recordingSummarizer(summaryResponse('short'));
  const r = await cc.compactConversation(msgs, { model: SONNET, summarize });
  assert.equal(r.preCompactTokenCount, count, "the compaction's count before is the count");
  // The summarizer reads the patch as it was written, not as an escaped JSON string.
  const shown = summarize.calls[0].request.messages.flatMap((m) => m.content.map((b) => b.text)).find((t) => t.startsWith('[tool call apply_patch'));
  assert.ok(shown.startsWith('[tool call apply_patch (c1): *** Begin Patch\ncontext line\n'), shown.slice(0, 80));
  // The Messages API form still takes an object input.
  const api = cc.toApiMessages(msgs);
  const use = api.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === 'tool_use');
  assert.deepEqual(use.input, { input: patch });
});

/** A conversation of `n` rounds of 4,000 characters (1,000 estimated tokens, 2,000 of `HALF`'s). */
function rounds(n) {
  const msgs = [];
  for (let i = 0; i < n; i++) msgs.push({ role: 'user', content: `q${i}: ` + 'x'.repeat(4_000) }, { role: 'assistant', content: `a${i}` });
  return msgs;
}

test("previewCompaction gives every size in the tokenCounter's tokens, as the compaction does", async () => {
  const msgs = [];
  for (let i = 0; i < 8; i++) {
    msgs.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'Read', input: { file_path: `/src/f${i}.rs` } }] });
    msgs.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: 'y'.repeat(8_000) }] });
  }
  msgs.push({ role: 'user', content: 'go on' });
  const readFileState = { '/src/a.rs': { content: 'fn a() {}\n'.repeat(300), timestamp: 1 } };
  const plain = await cc.previewCompaction(msgs, { model: SONNET, readFileState });
  const counted = await cc.previewCompaction(msgs, { model: SONNET, readFileState, tokenCounter: HALF });
  const twice = (a, b) => a >= 1.7 * b && a <= 2.3 * b;
  assert.deepEqual(counted.microCompact.clearedToolUseIds, plain.microCompact.clearedToolUseIds);
  assert.ok(plain.microCompact.tokensFreed > 0);
  assert.ok(twice(counted.tokensBefore, plain.tokensBefore), `${counted.tokensBefore} vs ${plain.tokensBefore}`);
  assert.ok(twice(counted.microCompact.tokensFreed, plain.microCompact.tokensFreed), `${counted.microCompact.tokensFreed} vs ${plain.microCompact.tokensFreed}`);
  assert.ok(twice(counted.restoredFiles[0].tokens, plain.restoredFiles[0].tokens), `${counted.restoredFiles[0].tokens} vs ${plain.restoredFiles[0].tokens}`);
  assert.ok(twice(counted.estimatedSummaryTokens, plain.estimatedSummaryTokens));
  assert.ok(counted.estimatedTokensAfter > plain.estimatedTokensAfter);
});

test("truncateHeadForPTLRetry measures the rounds with options.tokenCounter", () => {
  const msgs = rounds(30);
  const err = ptlError(70_000, 60_000); // 10,000 tokens too many
  const kept = (r) => r.filter((m) => /^q\d+:/.test(typeof m.content === 'string' ? m.content : '')).length;
  const plain = cc.truncateHeadForPTLRetry(msgs, err);
  const counted = cc.truncateHeadForPTLRetry(msgs, err, { tokenCounter: HALF });
  // 1,000 estimated tokens a round: 10 rounds cover the gap; 2,000 of the tokenizer's: 5.
  assert.ok(30 - kept(plain) >= 10 && 30 - kept(plain) <= 11, `plain dropped ${30 - kept(plain)}`);
  assert.ok(30 - kept(counted) >= 5 && 30 - kept(counted) <= 6, `counted dropped ${30 - kept(counted)}`);
  assert.throws(() => cc.truncateHeadForPTLRetry(msgs, err, { tokenCounter: 'yes' }), (e) => e.code === 'INVALID_ARGUMENT' && /options\.tokenCounter/.test(e.message));
  assert.throws(() => cc.truncateHeadForPTLRetry(msgs, err, { tokenCounter: () => { throw new Error('tokenizer down'); } }), (e) => e.code === 'INVALID_ARGUMENT' && /tokenizer down/.test(e.message));
});

test("the summary request is fitted to the summary model's window in the tokenCounter's tokens", async () => {
  const msgs = rounds(40);
  msgs.push({ role: 'user', content: 'next' });
  const asked = (s) => new Set(JSON.stringify(s.calls[0].request).match(/q\d+:/g)).size;
  const config = { summaryContextWindow: 80_000 };
  const plain = recordingSummarizer(summaryResponse('short'));
  await cc.compactConversation(msgs, { model: SONNET, summarize: plain, config });
  const counted = recordingSummarizer(summaryResponse('short'));
  await cc.compactConversation(msgs, { model: SONNET, summarize: counted, config, tokenCounter: HALF });
  // Estimated, 40,000 tokens of rounds fit in 80,000 with the instructions and the reply's
  // room; in the tokenizer's tokens they are 80,000 and the oldest rounds are cut first.
  assert.equal(asked(plain), 40);
  assert.ok(asked(counted) < 30 && asked(counted) > 10, `asked ${asked(counted)} rounds`);
});

test("a summarizer's answer in another ecosystem's form: a cut for length is SUMMARY_TRUNCATED, a whole one is the summary", async () => {
  const { AIMessage } = await import('@langchain/core/messages');
  const msgs = rounds(6);
  msgs.push({ role: 'user', content: 'next' });
  const compact = (answer) => cc.compactConversation(msgs, { model: SONNET, summarize: async () => answer });
  for (const cut of [
    new AIMessage({ content: '<summary>The user asked for', response_metadata: { stop_reason: 'max_tokens' } }),
    new AIMessage({ content: '<summary>The user asked for', response_metadata: { finish_reason: 'length' } }),
    { text: '<summary>The user asked for', finishReason: 'length' },
    { text: '<summary>The user asked for', finishReason: { unified: 'length', raw: 'max_tokens' } },
  ]) {
    await assert.rejects(compact(cut), (e) => e.code === 'SUMMARY_TRUNCATED' || assert.fail(`${e.code}: ${e.message}`));
  }
  for (const whole of [
    new AIMessage({ content: '<summary>Rounds q0–q5 were answered.</summary>', response_metadata: { finish_reason: 'stop' } }),
    { text: '<summary>Rounds q0–q5 were answered.</summary>', finishReason: 'stop' },
  ]) {
    const r = await compact(whole);
    assert.match(JSON.stringify(cc.buildPostCompactMessages(r)), /Rounds q0–q5 were answered/);
  }
});
