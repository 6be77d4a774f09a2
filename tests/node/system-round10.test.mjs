// Anthropic's beta system messages inside `messages` (@anthropic-ai/sdk
// BetaSystemMessageParam): a per-turn reminder (`clear_at: 'next_user_message'`) that the model
// no longer reads once a later user message exists (probe10 N1), and the API view that left
// every such message out, silently (probe10 N4). Each test fails on the package before the
// fix (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PKG = process.env.CC_PKG ?? '../../pkg/node.js';
const cc = await import(PKG);

const big = (n, s = 'line') => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const MODEL = 'claude-sonnet-4-5';
const reminder = (i, lines = 100) => ({ role: 'system', clear_at: 'next_user_message', content: `REMINDER ${i}\n${big(lines)}` });
// A user turn, a reminder for it, a reply; `usage` on the replies when asked.
const turns = (n, { lines = 100, usage = false } = {}) => {
  const m = [];
  for (let i = 0; i < n; i++) {
    m.push({ role: 'user', content: `question ${i}` }, reminder(i, lines));
    const a = { role: 'assistant', content: `answer ${i}` };
    if (usage && i % 3 === 2) a.usage = { input_tokens: 2000 + i, output_tokens: 7 };
    m.push(a);
  }
  return m;
};
const withoutCleared = (m) => {
  const lastUser = m.findLastIndex((x) => x.role === 'user');
  return m.filter((x, i) => !(x.clear_at === 'next_user_message' && i < lastUser));
};

// ---- N1: a cleared reminder counts 0.

test('N1: reminders a later user message cleared count 0; before one, a reminder counts in full', () => {
  const m = [{ role: 'user', content: 'start' }];
  for (let i = 0; i < 10; i++) m.push(reminder(i), { role: 'assistant', content: `ok ${i}` }, { role: 'user', content: `next ${i}` });
  const shown = cc.tokenCountWithEstimation(m.filter((x) => x.role !== 'system'));
  // Before: 13,781 against 31.
  assert.equal(cc.tokenCountWithEstimation(m), shown);
  // The latest reminder, no user message after it yet: counted.
  const open = [...m, reminder(10)];
  const full = cc.tokenCountWithEstimation(open);
  assert.ok(full > shown + 1000, `${full} vs ${shown}`);
  // Its reply does not clear it; the next user message does.
  assert.ok(cc.tokenCountWithEstimation([...open, { role: 'assistant', content: 'ok' }]) > full);
  assert.equal(cc.tokenCountWithEstimation([...open, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'u' }]),
    cc.tokenCountWithEstimation([...m, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'u' }]));
  // `clear_at: 'never'` (or none) is read on every request.
  const never = m.map((x) => (x.role === 'system' ? { ...x, clear_at: 'never' } : x));
  assert.ok(cc.tokenCountWithEstimation(never) > shown + 10_000);
});

test('N1: shouldAutoCompact is not set off by reminders the model no longer reads', () => {
  // 14 reminders of ~17K tokens each: 240K as counted before, ~200 tokens read.
  const m = turns(14, { lines: 1100 });
  assert.ok(!cc.shouldAutoCompact(m, MODEL));
  assert.ok(cc.shouldAutoCompact(m.map((x) => (x.role === 'system' ? { ...x, clear_at: 'never' } : x)), MODEL));
});

test('N1: a Compactor pushed one by one counts as one built whole and as tokenCountWithEstimation, at every step; a snapshot restores it', () => {
  for (const usage of [false, true]) {
    const m = turns(9, { usage });
    const one = new cc.Compactor({ model: MODEL });
    for (let k = 0; k < m.length; k++) {
      one.push(m[k]);
      const prefix = m.slice(0, k + 1);
      const whole = new cc.Compactor({ model: MODEL, messages: prefix });
      assert.equal(one.tokenCount(), whole.tokenCount(), `usage ${usage}, after push ${k}`);
      assert.equal(one.tokenCount(), cc.tokenCountWithEstimation(prefix, { calibration: one.calibration() }), `usage ${usage}, after push ${k}`);
    }
    if (!usage) assert.equal(one.tokenCount(), cc.tokenCountWithEstimation(withoutCleared(m)));
    const back = cc.Compactor.restore(one.snapshot(), m, { model: MODEL });
    assert.equal(back.tokenCount(), one.tokenCount());
  }
});

test('N1: the count entry counts as the main entry', async () => {
  const count = await import(new URL('count.js', new URL(PKG, import.meta.url)).href);
  const wasm = fileURLToPath(new URL('context_compaction_count_bg.wasm', new URL(PKG, import.meta.url)));
  await count.default({ module_or_path: readFileSync(wasm) });
  for (const usage of [false, true]) {
    const m = turns(14, { lines: 1100, usage });
    assert.equal(count.tokenCountWithEstimation(m), cc.tokenCountWithEstimation(m));
    assert.equal(count.shouldAutoCompact(m, MODEL), cc.shouldAutoCompact(m, MODEL));
  }
  const m = turns(14, { lines: 1100 });
  assert.equal(count.tokenCountWithEstimation(m), cc.tokenCountWithEstimation(withoutCleared(m)));
});

test('N1: a compaction measures without the cleared reminders and does not show them to the summarizer', async () => {
  const m = [];
  for (let i = 0; i < 12; i++) {
    m.push({ role: 'user', content: `question ${i}` }, reminder(i, 300), { role: 'assistant', content: big(60, 'reply ' + i) });
  }
  let sent = '';
  const summarize = async (req) => { sent = JSON.stringify(req); return '<summary>Work goes on.</summary>'; };
  const r = await cc.compactConversation(m, { model: MODEL, summarize });
  assert.equal(r.preCompactTokenCount, cc.tokenCountWithEstimation(withoutCleared(m)));
  assert.ok(sent.includes('reply 0'), 'the conversation reached the summarizer');
  // Cleared reminders are not read by the summarizer as instructions that still apply.
  for (let i = 0; i < 11; i++) assert.ok(!sent.includes(`REMINDER ${i}\\n`), `cleared reminder ${i} reached the summarizer`);
  const out = cc.buildPostCompactMessages(r);
  assert.deepEqual(cc.validateForApi(out).problems, []);
});

// ---- N4: the API view sends a system message inside `messages` in place.

test('N4: toApiMessages sends a system message after the first message in place, with its fields; validateForApi reports nothing', () => {
  const m = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'start' },
    { role: 'system', clear_at: 'next_user_message', content: [{ type: 'text', text: 'From now on answer in French.' }, { type: 'tool_addition', tool: { type: 'tool_reference', name: 'deploy' } }] },
    { role: 'assistant', content: 'ok' }, { role: 'user', content: 'go' }];
  const view = cc.toApiMessages(m, { shape: 'anthropic' });
  assert.deepEqual(view.map((x) => x.role), ['user', 'system', 'assistant', 'user']);
  assert.deepEqual(view[1], { role: 'system', content: m[2].content, clear_at: 'next_user_message' });
  // The leading one is the request's `system` parameter, as before.
  assert.ok(!JSON.stringify(view).includes('terse'));
  assert.deepEqual(cc.validateForApi(m, { shape: 'anthropic' }).problems, []);
  // Between a call and its result it is reported (the result must come next).
  const between = [{ role: 'user', content: 'start' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: {} }] },
    { role: 'system', content: 'note' },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x' }] }];
  assert.ok(cc.validateForApi(between).problems.length > 0);
});
