// Round thirteen, the lead's own fixes: a summary written ahead (the Compactor's `preemptive`
// option) clears only the readFileState entries it saw when it started, not those the agent
// read while it was being written (their reads are in the messages the swap keeps).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as cc from '../../pkg/node.js';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const LOW = { autoCompactPctOverride: 5 }; // threshold 9,000 tokens for OPUS
const EARLY = 8_000;
const flush = async () => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
};
const round = (i) => [
  { role: 'user', content: `question ${i}: ${h.filler(1_000, i)}` },
  { role: 'assistant', content: `answer ${i}: ${h.filler(1_000, i + 1_000)}` },
];
const SUMMARY = h.summaryResponse(`The user asked questions; each was answered. ${h.filler(22_000, 7)}`);

/** A Compactor past its early line whose summary written ahead waits for `first`. */
function startedAhead(readFileState) {
  const first = h.deferred();
  const summarize = h.recordingSummarizer((_req, _o, n) => (n === 1 ? first.promise : SUMMARY));
  const c = new cc.Compactor({ model: h.OPUS, config: LOW, summarize, preemptive: { earlyLine: EARLY }, readFileState });
  let i = 0;
  while (c.tokenCount() < EARLY) c.pushMany(round(i++));
  return { c, first, summarize, next: i };
}

async function swapIn({ c, first, summarize, next }) {
  await flush();
  assert.equal(summarize.calls.length, 1, 'a summary was started ahead');
  return async () => {
    first.resolve(SUMMARY);
    await flush();
    assert.equal(c.background.state, 'ready');
    for (let i = next; c.tokenCount() < 9_000; i++) c.pushMany(round(i));
    const o = await c.maybeAutoCompact();
    assert.equal(o.wasCompacted, true);
    assert.equal(o.preemptive, true, 'the summary written ahead was swapped in');
    assert.equal(summarize.calls.length, 1, 'no second summary call');
  };
}

const file = (content, timestamp) => ({ content, timestamp });

test('Map readFileState: entries read while the summary was written ahead stay after the swap; those it saw go', async () => {
  const state = new Map([['/seen', file('S', 1)], ['/reread', file('R1', 1)]]);
  const s = startedAhead(state);
  const finish = await swapIn(s);
  // The agent reads files while the summary is being written: their reads are in the
  // messages after the summary's cut, which the swap keeps verbatim.
  state.set('/later', file('L', 2));
  state.set('/reread', file('R2', 2));
  await finish();
  // Before: every entry was cleared (the swap read the state again and cleared what it saw).
  assert.deepEqual([...state.keys()].sort(), ['/later', '/reread']);
});

test('plain-object and array readFileState: the same', async () => {
  const obj = { '/seen': file('S', 1) };
  const s = startedAhead(obj);
  const finish = await swapIn(s);
  obj['/later'] = file('L', 2);
  await finish();
  assert.deepEqual(Object.keys(obj), ['/later']);

  const arr = [{ path: '/seen', ...file('S', 1) }];
  const t = startedAhead(arr);
  const finish2 = await swapIn(t);
  arr.push({ path: '/later', ...file('L', 2) });
  await finish2();
  assert.deepEqual(arr.map((x) => x.path), ['/later']);
});

test('a compaction that does not swap the summary written ahead clears what it read itself', async () => {
  const state = new Map([['/seen', file('S', 1)]]);
  const s = startedAhead(state);
  await flush();
  state.set('/later', file('L', 2));
  // A manual compaction replaces the conversation the summary ahead is for: it reads the
  // state when it starts and clears what it read then.
  const r = await s.c.compact();
  assert.ok(r.summary.length > 0);
  assert.equal(state.size, 0);
});
