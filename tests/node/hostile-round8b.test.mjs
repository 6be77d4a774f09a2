// Eighth round of hostile inputs, second part (the probe's H10, H11 and H19): a small summary
// window with summarizeInParts, a summary window too small to use, and hook answers the
// library could not read, which vanished without a trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';

const MODEL = 'claude-sonnet-4-5';

function rounds(n, size = 500) {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push({ role: 'user', content: `question ${i} ${'x'.repeat(size)}` });
    out.push({ role: 'assistant', content: [{ type: 'text', text: `answer ${i} ${'y'.repeat(size)}` }] });
  }
  return out;
}

// The request's own size as the probe measured it: its messages' JSON, estimated.
const requestTokens = (req) => Math.ceil(JSON.stringify({ system: req.system, messages: req.messages }).length / 4);

function recording() {
  const calls = [];
  const summarize = async (req) => {
    calls.push({ maxTokens: req.max_tokens, input: requestTokens(req) });
    return `<summary>${'sum '.repeat(50)}</summary>`;
  };
  return { calls, summarize };
}

// ---- 1. A small summary window ----------------------------------------------------------------

test('summarizeInParts with an 8K or 16K summary window: the parts fill the window (53 / 25 calls for 1,000 rounds, not 1,001) and no request asks more output than its window leaves', async () => {
  const msgs = rounds(1_000);
  for (const [window, most] of [[16_384, 30], [8_192, 60]]) {
    const { calls, summarize } = recording();
    const r = await cc.compactConversation(msgs, { model: MODEL, summarize, summarizeInParts: true, config: { summaryContextWindow: window } });
    assert.equal(r.summaryParts, calls.length);
    assert.ok(calls.length <= most, `window ${window}: ${calls.length} summarizer calls for 1,000 rounds`);
    for (const c of calls) {
      assert.ok(c.maxTokens < window, `window ${window}: max_tokens ${c.maxTokens}`);
      assert.ok(c.input + c.maxTokens <= window, `window ${window}: ${c.input} + ${c.maxTokens} tokens asked`);
    }
    // The parts are full: all but the last hold at least half the window's input.
    for (const c of calls.slice(0, -1)) assert.ok(c.input > window / 2, `window ${window}: a part of ${c.input} tokens`);
  }
});

test('a small summary window without parts sends as many of the latest rounds as it holds (not only the last), with max_tokens within the window', async () => {
  const msgs = rounds(200);
  for (const window of [8_192, 16_384]) {
    let req;
    await cc.compactConversation(msgs, { model: MODEL, summarize: async (q) => { req = q; return '<summary>s</summary>'; }, config: { summaryContextWindow: window } });
    const sent = (JSON.stringify(req.messages).match(/question \d+/g) ?? []).length;
    assert.ok(sent >= window / 512, `window ${window}: ${sent} rounds sent`);
    assert.ok(requestTokens(req) + req.max_tokens <= window, `window ${window}: ${requestTokens(req)} + ${req.max_tokens}`);
  }
});

test('a large summary window keeps the SPEC reserve: max_tokens 20,000', async () => {
  for (const config of [{}, { summaryContextWindow: 64_000 }]) {
    const { calls, summarize } = recording();
    await cc.compactConversation(rounds(30), { model: MODEL, summarize, summarizeInParts: true, config });
    assert.deepEqual(calls.map((c) => c.maxTokens), [20_000]);
  }
});

test('a summaryContextWindow too small to hold the prompt and a summary is INVALID_CONFIG naming it, as contextWindow is; 4,096 is accepted', async () => {
  for (const w of [1, 100, 2_000, 4_095]) {
    let called = false;
    await assert.rejects(
      cc.compactConversation(rounds(5), { model: MODEL, summarize: async () => { called = true; return '<summary>s</summary>'; }, summarizeInParts: true, config: { summaryContextWindow: w } }),
      (e) => e.code === 'INVALID_CONFIG' && /config\.summaryContextWindow/.test(e.message) && /4096/.test(e.message) || assert.fail(`${w}: ${e.code} ${e.message}`),
    );
    assert.equal(called, false);
  }
  const { calls, summarize } = recording();
  await cc.compactConversation(rounds(20, 200), { model: MODEL, summarize, summarizeInParts: true, config: { summaryContextWindow: 4_096 } });
  assert.ok(calls.length >= 1 && calls.every((c) => c.input + c.maxTokens <= 4_096), JSON.stringify(calls));
  // Counting, thresholds and a Compactor never use the summary window: one config passed
  // everywhere works there whatever its summary window is.
  const config = { summaryContextWindow: 2_048 };
  const msgs = rounds(5);
  assert.equal(cc.tokenCountWithEstimation(msgs, { config }), cc.tokenCountWithEstimation(msgs));
  assert.equal(cc.shouldAutoCompact(msgs, MODEL, { config }), cc.shouldAutoCompact(msgs, MODEL));
  const chat = new cc.Compactor({ model: MODEL, summarize, config, messages: msgs });
  assert.equal(chat.tokenCount(), cc.tokenCountWithEstimation(msgs));
  await assert.rejects(chat.compact(), (e) => e.code === 'INVALID_CONFIG' || assert.fail(`${e.code} ${e.message}`));
  chat.free();
});

// ---- 2. Hook answers the library could not read -----------------------------------------------

async function withHook(hook, answer) {
  let request = '';
  const r = await cc.compactConversation(rounds(30, 200), {
    model: MODEL,
    summarize: async (req) => { request = JSON.stringify(req); return '<summary>s</summary>'; },
    hooks: { [hook]: () => answer },
  });
  return { r, request, results: JSON.stringify(r.hookResults) };
}

test('sessionStart: content blocks of text, Claude Code\'s hook JSON and messages as one string are read as context', async () => {
  const blocks = await withHook('sessionStart', { messages: [{ role: 'user', content: [{ type: 'text', text: 'CTX-1' }] }] });
  assert.match(blocks.results, /CTX-1/);
  assert.deepEqual(blocks.r.hookErrors, []);
  const cc_ = await withHook('sessionStart', { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'CTX-2' } });
  assert.match(cc_.results, /CTX-2/);
  assert.deepEqual(cc_.r.hookErrors, []);
  const str = await withHook('sessionStart', { messages: 'CTX-3' });
  assert.match(str.results, /CTX-3/);
});

test('a hook answer that cannot be used is reported in hookErrors naming the hook and the field, the rest used', async () => {
  const cases = [
    ['sessionStart', { get additionalContext() { throw new Error('CTX-4 getter'); } }, /reading `additionalContext` threw: CTX-4 getter/],
    ['sessionStart', { messages: [{ content: 12345 }] }, /`messages\[0\]\.content` is the number 12345/],
    ['preCompact', { instructions: 42 }, /`instructions` is the number 42, not text/],
    ['preCompact', { get instructions() { throw new Error('CTX-6 getter'); } }, /reading `instructions` threw: CTX-6 getter/],
    ['preCompact', { instruction: 'CTX-7 keep the schema' }, /`instruction` is not a field.*did you mean `instructions`/],
    ['postCompact', { userDisplayMesage: 'CTX-8' }, /`userDisplayMesage` is not a field.*did you mean `userDisplayMessage`/],
    ['postCompact', { messages: ['m'] }, /`messages` is not used by this hook/],
    ['preCompact', ['a'], /is an array/],
  ];
  for (const [hook, answer, words] of cases) {
    const { r } = await withHook(hook, answer);
    assert.equal(r.hookErrors.length, 1, `${hook} ${words}: ${JSON.stringify(r.hookErrors)}`);
    assert.equal(r.hookErrors[0].hook, hook);
    assert.match(r.hookErrors[0].message, words);
  }
  // What else the answer gives is still used.
  const { r, request } = await withHook('preCompact', { instructions: 'KEEP-THE-SCHEMA', get userDisplayMessage() { throw new Error('boom'); } });
  assert.match(request, /KEEP-THE-SCHEMA/);
  assert.equal(r.hookErrors.length, 1);
  assert.match(r.hookErrors[0].message, /reading `userDisplayMessage` threw: boom/);
  // An answer that is all fine reports nothing.
  const fine = await withHook('postCompact', { userDisplayMessage: 'done', continue: true, suppressOutput: true });
  assert.deepEqual(fine.r.hookErrors, []);
  assert.equal(fine.r.userDisplayMessage, 'done');
  // A later call's errors are not given the hook's thrown value as their cause.
  const e = await cc.compactConversation('not messages', { model: MODEL, summarize: async () => 's' }).catch((x) => x);
  assert.equal(e.cause, undefined);
});
