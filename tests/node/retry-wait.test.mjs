// Waits before retrying a transient summarizer failure are bounded: a server asking for more
// than the longest wait, or a wait past the caller's time limit (summaryTimeoutMs), fails the
// compaction at once (saying why, the summarizer's error as the cause) instead of holding it
// (and a Compactor, `compacting`) for that long; an abort still ends a wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { SONNET, recordingSummarizer, summaryResponse } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const msgs = [];
for (let i = 0; i < 20; i++) msgs.push({ role: 'user', content: `q${i} ` + 'x'.repeat(4_000) }, { role: 'assistant', content: `a${i}` });

/** A summarizer failing `times` times with `error()`, then answering. */
function failing(error, times = Infinity) {
  return recordingSummarizer((request, options, n) => {
    if (n <= times) throw error();
    return summaryResponse();
  });
}
const rateLimited = (retryAfterMs) => () => Object.assign(new Error('rate_limit_error: slow down'), { status: 429, retryAfterMs });
const overloaded = () => Object.assign(new Error('overloaded_error'), { status: 529 });

/** Settles `p` or says it is still pending after `ms`. */
async function within(p, ms) {
  const started = Date.now();
  const outcome = await Promise.race([
    p.then((v) => ({ value: v }), (e) => ({ error: e })),
    new Promise((r) => setTimeout(() => r({ pending: true }), ms)),
  ]);
  return { ...outcome, ms: Date.now() - started };
}

test('a server asking to wait longer than the longest wait fails at once with SUMMARIZER_FAILED', async () => {
  for (const retryAfterMs of [1e12, 64_001]) {
    const summarize = failing(rateLimited(retryAfterMs));
    const r = await within(cc.compactConversation(msgs, { model: SONNET, summarize }), 2_000);
    assert.ok(r.error, `retryAfterMs ${retryAfterMs}: ${r.pending ? 'still pending' : 'settled'}`);
    assert.equal(r.error.code, 'SUMMARIZER_FAILED');
    assert.match(r.error.message, new RegExp(`asked to retry after ${retryAfterMs} ms, longer than the longest wait \\(64000 ms\\)`));
    assert.equal(r.error.cause?.status, 429);
    assert.equal(summarize.calls.length, 1, 'not retried');
  }
});

test('a wait past summaryTimeoutMs fails at once with TIMEOUT: the server\'s wait and the backoff (retryBaseMs)', async () => {
  const cases = [
    [failing(rateLimited(5_000)), undefined],
    [failing(overloaded), { retryBaseMs: 1e12 }],
    [failing(overloaded), { retryBaseMs: 4_000 }],
  ];
  for (const [summarize, options] of cases) {
    const r = await within(cc.compactConversation(msgs, { model: SONNET, summarize, summaryTimeoutMs: 1_000 }, options), 2_000);
    assert.ok(r.error, r.pending ? 'still pending' : 'settled');
    assert.equal(r.error.code, 'TIMEOUT', r.error.message);
    assert.match(r.error.message, /a retry would wait \d+ ms, past the time limit \(summaryTimeoutMs: 1000 ms left of 1000 ms\)/);
    assert.equal(summarize.calls.length, 1);
  }
});

test('the waits of one compaction together stay within summaryTimeoutMs; within it, retries go on', async () => {
  // 300 ms asked each time, 700 ms allowed: two retries wait, the third would pass the limit.
  const summarize = failing(rateLimited(300));
  const r = await within(cc.compactConversation(msgs, { model: SONNET, summarize, summaryTimeoutMs: 700 }), 3_000);
  assert.equal(r.error?.code, 'TIMEOUT', r.pending ? 'still pending' : r.error?.message);
  assert.match(r.error.message, /a retry would wait 300 ms, past the time limit \(summaryTimeoutMs: 100 ms left of 700 ms\)/);
  assert.equal(summarize.calls.length, 3);
  // A wait within the limit is waited, and the retry succeeds.
  const once = failing(rateLimited(50), 1);
  const ok = await cc.compactConversation(msgs, { model: SONNET, summarize: once, summaryTimeoutMs: 700 });
  assert.equal(ok.transientRetries, 1);
});

test('a Compactor is not left compacting for the server\'s wait', async () => {
  const c = new cc.Compactor({ model: SONNET, summarize: failing(rateLimited(1e12)), summaryTimeoutMs: 1_000, config: { contextWindow: 50_000 }, messages: msgs });
  const first = await within(c.maybeAutoCompact(), 2_000);
  assert.equal(first.value?.wasCompacted, false, first.pending ? 'still pending' : JSON.stringify(first));
  assert.equal(first.value.error.code, 'SUMMARIZER_FAILED');
  assert.equal(c.compacting, false);
  assert.notEqual((await c.maybeAutoCompact()).skipped, 'compacting');
});

test('an abort ends a wait at once with ABORTED', async () => {
  const controller = new AbortController();
  const summarize = failing(rateLimited(30_000));
  const p = cc.compactConversation(msgs, { model: SONNET, summarize, signal: controller.signal });
  setTimeout(() => controller.abort(), 100);
  const r = await within(p, 2_000);
  assert.equal(r.error?.code, 'ABORTED', r.pending ? 'still pending' : r.error?.message);
  assert.ok(r.ms < 1_500, `${r.ms} ms`);
});
