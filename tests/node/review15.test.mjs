// Review of round 15 (catch-up of a stale summary written ahead). Each test fails on the
// package before the fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { staleAtThreshold as stale, words } from './helpers/stale-ahead.mjs';

const staleAtThreshold = async (summarize, extra) => (await stale(summarize, extra)).c;

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
