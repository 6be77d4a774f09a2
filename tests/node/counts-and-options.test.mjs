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
  const r = await cc.compactConversation(msgs, { model: SONNET, summarize: recordingSummarizer(summaryResponse('short')) });
  assert.equal(r.preCompactTokenCount, count, "the compaction's count before is the count");
  // The Messages API form still takes an object input.
  const api = cc.toApiMessages(msgs);
  const use = api.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === 'tool_use');
  assert.deepEqual(use.input, { input: patch });
});
