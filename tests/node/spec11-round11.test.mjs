// Eleventh round, conformance to SPEC.md and the documentation (the probe's findings in
// /work/probe11-spec): a summary request the time limit (`summaryTimeoutMs`) gave up on is
// cancelled through the signal the summarizer was given (F1); an answer the API stopped before
// its end is never committed as the summary (F2, SPEC §14).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';

const MODEL = 'claude-sonnet-4-5';

function rounds(n) {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push({ role: 'user', content: `question ${i} ${'w '.repeat(1500)}` });
    out.push({ role: 'assistant', content: `answer ${i} ${'v '.repeat(1500)}` });
  }
  return out;
}

const tick = (ms) => new Promise((r) => setTimeout(r, ms));

// A summarizer that never answers and records what happens to the signal it was given.
function hanging() {
  const seen = { signal: undefined, abortedWith: undefined };
  const summarize = (request, options) => {
    seen.signal = options.signal;
    options.signal?.addEventListener('abort', () => { seen.abortedWith = options.signal.reason; });
    return new Promise(() => {});
  };
  return { seen, summarize };
}

test('the summary request a time limit gave up on is aborted (no caller signal)', async () => {
  const { seen, summarize } = hanging();
  await assert.rejects(cc.compactConversation(rounds(8), { model: MODEL, summarize, summaryTimeoutMs: 30 }), { code: 'TIMEOUT' });
  await tick(0);
  assert.ok(seen.signal instanceof AbortSignal, 'the summarizer is given a signal');
  assert.equal(seen.signal.aborted, true, 'the abandoned request is aborted');
  assert.equal(seen.abortedWith?.code, 'TIMEOUT');
});

test('the same with a caller signal, which the library never aborts itself', async () => {
  const { seen, summarize } = hanging();
  const ac = new AbortController();
  await assert.rejects(cc.compactConversation(rounds(8), { model: MODEL, summarize, summaryTimeoutMs: 30, signal: ac.signal }), { code: 'TIMEOUT' });
  await tick(0);
  assert.equal(seen.signal.aborted, true);
  assert.equal(ac.signal.aborted, false, "the caller's own signal is left alone");
});

test("the summarizer's signal aborts with the caller's, with its reason", async () => {
  const { seen, summarize } = hanging();
  const ac = new AbortController();
  const p = cc.compactConversation(rounds(8), { model: MODEL, summarize, signal: ac.signal });
  while (!seen.signal) await tick(1);
  const reason = new Error('stop');
  ac.abort(reason);
  await assert.rejects(p);
  assert.equal(seen.abortedWith, reason);
});

test('a Compactor and automatic compaction cancel the abandoned request too', async () => {
  const a = hanging();
  const chat = new cc.Compactor({ model: MODEL, summarize: a.summarize, summaryTimeoutMs: 30 });
  chat.pushMany(rounds(8));
  await assert.rejects(chat.compact(), { code: 'TIMEOUT' });
  await tick(0);
  assert.equal(a.seen.signal.aborted, true);

  const b = hanging();
  const msgs = [...rounds(8), { role: 'assistant', content: 'ok', usage: { input_tokens: 170_000, output_tokens: 1 } }];
  const outcome = await cc.autoCompactIfNeeded(msgs, { model: MODEL, summarize: b.summarize, summaryTimeoutMs: 30 }, {});
  assert.equal(outcome.error?.code, 'TIMEOUT');
  await tick(0);
  assert.equal(b.seen.signal.aborted, true);
});

test('a summary that answers in time leaves its signal unaborted and the caller\'s unobserved', async () => {
  let signal;
  const ac = new AbortController();
  const r = await cc.compactConversation(rounds(8), {
    model: MODEL,
    signal: ac.signal,
    summarize: async (request, options) => { signal = options.signal; return '<summary>short</summary>'; },
  });
  assert.ok(r.boundaryMarker);
  await tick(0);
  assert.equal(signal.aborted, false);
  ac.abort();
  assert.equal(signal.aborted, false, 'the link to the caller\'s signal is released once the call settled');
});

test('a summary the API stopped before its end is never committed (SPEC §14)', async () => {
  const msgs = rounds(8);
  const answer = (extra) => async () => ({
    content: [{ type: 'text', text: '<analysis>a</analysis><summary>1. Primary request: the user asked to' }],
    usage: { input_tokens: 5, output_tokens: 5 },
    ...extra,
  });
  for (const stop_reason of ['max_tokens', 'model_context_window_exceeded', 'refusal']) {
    await assert.rejects(cc.compactConversation(msgs, { model: MODEL, summarize: answer({ stop_reason }) }), { code: 'SUMMARY_TRUNCATED' }, stop_reason);
  }
  // Other ecosystems' answers given as they are: a content filter's stop.
  const part = '<summary>1. Primary request: the user asked to';
  for (const raw of [
    { text: part, finishReason: 'content-filter' },
    { content: part, response_metadata: { finish_reason: 'content_filter' } },
    { content: part, response_metadata: { finishReason: 'SAFETY' } },
  ]) {
    await assert.rejects(cc.compactConversation(msgs, { model: MODEL, summarize: async () => raw }), { code: 'SUMMARY_TRUNCATED' }, JSON.stringify(raw));
  }
  // An answer that ended is still a summary.
  for (const stop_reason of ['end_turn', 'stop_sequence']) {
    const r = await cc.compactConversation(msgs, { model: MODEL, summarize: async () => ({ content: [{ type: 'text', text: '<summary>S</summary>' }], stop_reason }) });
    assert.equal(r.summary, 'S');
  }
});

test('an API error body resolved as the answer is read as the error it reports: a prompt-too-long one is retried', async () => {
  const msgs = [];
  for (let i = 0; i < 20; i++) msgs.push({ role: 'user', content: `q${i} ${'w '.repeat(3000)}` }, { role: 'assistant', content: `a${i} ${'v '.repeat(3000)}` });
  let calls = 0;
  const ptl = { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 201000 tokens > 200000 maximum' } };
  const r = await cc.compactConversation(msgs, { model: MODEL, summarize: async () => (++calls === 1 ? ptl : '<summary>s</summary>') });
  assert.equal(calls, 2);
  assert.equal(r.summary, 's');
  assert.ok(r.ptlRetries >= 1, `ptlRetries ${r.ptlRetries}`);
  // Another error body fails with its own words, not "no content".
  await assert.rejects(
    cc.compactConversation(msgs, { model: MODEL, summarize: async () => ({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }) }, {}),
    (e) => e.code === 'SUMMARIZER_FAILED' && /Incorrect API key/.test(e.message),
  );
});
