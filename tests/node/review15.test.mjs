// Review of round 15 (catch-up of a stale summary written ahead). Each test fails on the
// package before the fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Compactor, getAutoCompactThreshold } from '../../pkg/node.js';

const words = (seed, n) => {
  let s = '';
  let k = seed;
  while (s.length < n) {
    k = (k * 1103515245 + 12345) >>> 0;
    s += ['alpha', 'beta', 'gamma', 'delta'][k % 4] + ' ';
  }
  return s.slice(0, n);
};

/** A 64K Compactor with a summary written ahead, ready, then small turns up to the threshold
 * (the summary is stale there). `summarize` answers every call. */
async function staleAtThreshold(summarize, extra = {}) {
  const config = { contextWindow: 64_000 };
  const threshold = getAutoCompactThreshold('claude-sonnet-4-5', config);
  const c = new Compactor({ model: 'claude-sonnet-4-5', config, summarize, preemptive: { earlyLine: 15_000 }, retryBaseMs: 1, ...extra });
  let k = 0;
  const pair = (chars) => {
    k++;
    c.push({ role: 'user', content: `question ${k}: ${words(k, chars)}` });
    c.push({ role: 'assistant', content: `answer ${k}: ${words(k + 500, chars)}` });
  };
  while (c.tokenCount() < 16_000) pair(4_000);
  assert.equal((await c.maybeAutoCompact()).wasCompacted, false);
  for (let w = 0; w < 400 && c.background.state !== 'ready'; w++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(c.background.state, 'ready', 'setup');
  while (c.tokenCount() < threshold) pair(600);
  return c;
}

const answer = async () => ({ content: [{ type: 'text', text: `<summary>${words(3, 12_000)}</summary>` }], stop_reason: 'end_turn' });

test('with a session memory, a stale summary written ahead is not brought up to date with a model call: the memory compacts, as before', async () => {
  let calls = 0;
  const c = await staleAtThreshold(async (req) => { calls++; return answer(req); }, { sessionMemory: () => `Session notes: ${words(7, 3_000)}` });
  const before = calls;
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, true, JSON.stringify(o.error));
  assert.equal(o.caughtUp, undefined);
  assert.equal(calls - before, 0, 'no summary call');
});

test('an abort while a stale summary is brought up to date is not counted towards the circuit breaker', async () => {
  const ac = new AbortController();
  let armed = false;
  const c = await staleAtThreshold(async (req, o) => {
    if (armed) {
      ac.abort(new Error('Ctrl-C'));
      throw o?.signal?.reason ?? new Error('aborted');
    }
    return answer(req);
  });
  armed = true;
  const o = await c.maybeAutoCompact({ signal: ac.signal });
  assert.equal(o.wasCompacted, false);
  assert.equal(o.error?.code, 'ABORTED');
  assert.equal(o.consecutiveFailures, 0);
  assert.equal(c.tracking.consecutiveFailures, 0);
});
