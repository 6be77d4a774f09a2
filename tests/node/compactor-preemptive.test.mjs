// Pre-emptive summaries in the Compactor (issue 14): a summary written in the background from
// the early line on, swapped in at the threshold with no model call when it fits; today's path
// otherwise. The summarizer is a promise the test resolves: no real timers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const { PREEMPT_LOW: LOW, PREEMPT_EARLY: EARLY, flushTurns: flush, qaRound: round } = h; // threshold 9,000 tokens for OPUS

/** A summarizer whose first call waits for `first` (resolve it with a body or reject it);
 *  later calls answer `later` at once. */
function controlled(later = h.summaryResponse('LATER SUMMARY')) {
  const first = h.deferred();
  // The library may ask for the summary a few event-loop turns after the push (it reads the
  // messages in slices): a rejection settled before then is not an unhandled one.
  first.promise.catch(() => {});
  const summarize = h.recordingSummarizer((_req, _o, n) => (n === 1 ? first.promise : later));
  return { summarize, first };
}

/** A Compactor pushed round by round until it crosses the early line (below the threshold). */
function pastEarlyLine(summarize, o = {}) {
  const c = new cc.Compactor({ model: h.OPUS, config: LOW, summarize, preemptive: { earlyLine: EARLY }, ...o });
  let i = 0;
  while (c.tokenCount() < EARLY) c.pushMany(round(i++));
  assert.ok(c.tokenCount() < 9_000, `${c.tokenCount()} below the threshold`);
  return { c, next: i };
}

/** Pushes rounds until the threshold; returns the messages pushed. */
function toThreshold(c, from) {
  const pushed = [];
  for (let i = from; c.tokenCount() < 9_000; i++) {
    const r = round(i);
    c.pushMany(r);
    pushed.push(...r);
  }
  return pushed;
}

const BIG_SUMMARY = h.summaryResponse(`The user asked questions; each was answered. ${h.filler(22_000, 7)}`);

test('off by default: no summary is written ahead', async () => {
  const s = h.recordingSummarizer();
  const c = new cc.Compactor({ model: h.OPUS, config: LOW, summarize: s });
  for (let i = 0; c.tokenCount() < EARLY; i++) c.pushMany(round(i));
  await flush();
  assert.equal(s.calls.length, 0);
  assert.equal(c.background.state, 'off');
});

test('a ready summary that fits is swapped in at the threshold with no model call; pushes after its cut kept once', async () => {
  const { summarize, first } = controlled();
  const { c, next } = pastEarlyLine(summarize);
  const bg = c.background;
  await flush();
  assert.equal(summarize.calls.length, 1, 'started on the push that crossed the early line');
  assert.equal(bg.state, 'running');
  assert.equal(bg.earlyLine, EARLY);
  const cut = bg.cut;
  assert.ok(cut > 0 && cut < c.length);
  first.resolve(BIG_SUMMARY);
  await flush();
  assert.equal(c.background.state, 'ready');
  assert.equal(c.background.cut, cut);
  const before = c.messages;
  const pushed = toThreshold(c, next);
  const kept = [...before.slice(cut), ...pushed];
  const outcome = await c.maybeAutoCompact();
  assert.equal(outcome.wasCompacted, true, JSON.stringify(outcome.error));
  assert.equal(outcome.preemptive, true);
  assert.equal(summarize.calls.length, 1, 'no model call at the threshold');
  // Every message since the cut, the same objects, once and in order, after the summary.
  const after = c.messages;
  for (const m of kept) assert.equal(after.filter((x) => x === m).length, 1);
  assert.deepEqual(after.slice(after.length - kept.length), kept);
  assert.ok(c.tokenCount() < 9_000);
  assert.equal(c.background.state, 'idle', 'the conversation was replaced');
});

test('a summary still running at the threshold: today\'s path runs, and the late one is dropped', async () => {
  const { summarize, first } = controlled();
  const { c, next } = pastEarlyLine(summarize);
  toThreshold(c, next);
  const outcome = await c.maybeAutoCompact();
  assert.equal(outcome.wasCompacted, true);
  assert.equal(outcome.preemptive, false);
  assert.equal(summarize.calls.length, 2);
  first.resolve(BIG_SUMMARY);
  await flush();
  assert.equal(c.background.state, 'idle', 'landed after the compaction: dropped');
});

test('a background summary that fails is reported, never thrown from push; today\'s path runs', async () => {
  const { summarize, first } = controlled();
  const { c, next } = pastEarlyLine(summarize);
  toThreshold(c, next); // pushes while it runs: none throws, no second one starts
  first.reject(new Error('summarizer down'));
  await flush();
  assert.equal(c.background.state, 'idle');
  assert.equal(c.background.error?.code, 'SUMMARIZER_FAILED');
  const outcome = await c.maybeAutoCompact();
  assert.equal(outcome.wasCompacted, true);
  assert.equal(outcome.preemptive, false);
  assert.equal(outcome.backgroundError?.code, 'SUMMARIZER_FAILED');
  assert.equal(outcome.consecutiveFailures, 0, 'a background failure is not a compaction failure');
});

test('a ready summary that does not fit (too much since its cut) falls back to today\'s path', async () => {
  const { summarize, first } = controlled();
  const { c, next } = pastEarlyLine(summarize);
  first.resolve(h.summaryResponse('short'));
  await flush();
  // Over the bound: the refresh this starts is answered at once; make the threshold come first.
  const s2 = summarize.calls.length;
  toThreshold(c, next);
  const outcome = await c.maybeAutoCompact();
  assert.equal(outcome.wasCompacted, true);
  assert.equal(outcome.preemptive, false);
  assert.ok(summarize.calls.length > s2, 'a model call was made');
});

test('snapshot during a pending summary leaves it out; restore starts without one', async () => {
  const { summarize, first } = controlled();
  const { c } = pastEarlyLine(summarize);
  assert.equal(c.background.state, 'running');
  const snap = c.snapshot();
  const plain = new cc.Compactor({ model: h.OPUS, config: LOW, messages: c.messages }).snapshot();
  assert.deepEqual(Object.keys(snap).sort(), Object.keys(plain).sort());
  const r = cc.Compactor.restore(snap, c.messages, { model: h.OPUS, config: LOW, summarize, preemptive: { earlyLine: 1e9 } });
  assert.equal(r.background.state, 'idle');
  first.resolve(BIG_SUMMARY);
  await flush();
  assert.equal(r.background.state, 'idle');
  assert.equal(c.background.state, 'ready');
});

test('a manual compact() drops the summary written ahead', async () => {
  const { summarize, first } = controlled();
  const { c } = pastEarlyLine(summarize);
  const done = c.compact();
  first.resolve(BIG_SUMMARY);
  await done;
  await flush();
  assert.equal(c.background.state, 'idle');
});

test('abort: the swap at the threshold honours the Compactor\'s signal; nothing committed', async () => {
  const ac = new AbortController();
  const { summarize, first } = controlled();
  const { c, next } = pastEarlyLine(summarize, { signal: ac.signal });
  first.resolve(BIG_SUMMARY);
  await flush();
  toThreshold(c, next);
  const before = c.messages;
  ac.abort();
  const outcome = await c.maybeAutoCompact();
  assert.equal(outcome.wasCompacted, false);
  assert.equal(outcome.error?.code, 'ABORTED');
  assert.equal(outcome.consecutiveFailures, 1);
  assert.deepEqual(c.messages, before);
});

test('options.preemptive: a misspelt key is INVALID_ARGUMENT with a hint', () => {
  assert.throws(() => new cc.Compactor({ model: h.OPUS, preemptive: { earlyLien: 5 } }), (e) => e.code === 'INVALID_ARGUMENT' && /earlyLine/.test(e.message));
  assert.throws(() => new cc.Compactor({ model: h.OPUS, preemptve: true }), (e) => e.code === 'INVALID_ARGUMENT' && /preemptive/.test(e.message));
  assert.equal(new cc.Compactor({ model: h.OPUS, preemptive: true }).background.earlyLine, 157_000);
});

test('a ready summary is swapped in a check early when one more turn like the largest could lose it', async () => {
  const { summarize, first } = controlled();
  const c = new cc.Compactor({ model: h.OPUS, config: LOW, summarize, preemptive: { earlyLine: EARLY } });
  // Checks before every request; one turn of about 2,000 tokens sets the headroom.
  let i = 0;
  c.pushMany(round(i++));
  assert.equal((await c.maybeAutoCompact()).skipped, 'belowThreshold');
  c.pushMany([...round(i++), ...round(i++), ...round(i++), ...round(i++)]);
  await c.maybeAutoCompact();
  const headroom = c.background.headroom;
  assert.ok(headroom > 1_500 && headroom < 2_500, `headroom ${headroom}`);
  while (c.tokenCount() < EARLY) {
    c.pushMany(round(i++));
    await c.maybeAutoCompact();
  }
  assert.equal(c.background.state, 'running');
  first.resolve(BIG_SUMMARY);
  await flush();
  assert.equal(c.background.state, 'ready');
  const calls = summarize.calls.length;
  // Below the threshold; the next turn could cross it and put the swap over the bound.
  assert.ok(c.tokenCount() < 9_000 && c.tokenCount() + headroom >= 9_000, `${c.tokenCount()}`);
  const outcome = await c.maybeAutoCompact();
  assert.equal(outcome.wasCompacted, true, JSON.stringify(outcome));
  assert.equal(outcome.preemptive, true);
  assert.equal(outcome.swappedEarly, true);
  assert.equal(summarize.calls.length, calls, 'no model call');
  assert.ok(c.tokenCount() < EARLY);
});

test('without a turn larger than the bound leaves room for, the swap waits for the threshold', async () => {
  const { summarize, first } = controlled();
  const { c, next } = pastEarlyLine(summarize);
  first.resolve(BIG_SUMMARY);
  await flush();
  // Round-sized checks (about 500 tokens, within the bound's room) until the threshold.
  let i = next;
  let outcome;
  for (;;) {
    outcome = await c.maybeAutoCompact();
    if (outcome.wasCompacted || c.tokenCount() >= 9_000) break;
    c.pushMany(round(i++));
  }
  if (!outcome.wasCompacted) outcome = await c.maybeAutoCompact();
  assert.equal(outcome.wasCompacted, true);
  assert.equal(outcome.preemptive, true);
  assert.equal(outcome.swappedEarly, undefined);
});

test('the automatic early line moves down for large turns, never below the warning line', async () => {
  const c = new cc.Compactor({ model: h.OPUS, preemptive: true, summarize: h.recordingSummarizer() });
  assert.equal(c.background.earlyLine, 157_000);
  assert.equal(c.background.headroom, 0);
  c.push({ role: 'user', content: 'hello' });
  await c.maybeAutoCompact();
  c.push({ role: 'assistant', content: h.filler(56_000, 3) });
  await c.maybeAutoCompact();
  const headroom = c.background.headroom;
  assert.ok(headroom > 13_000 && headroom < 15_000, `${headroom}`);
  assert.equal(c.background.earlyLine, 167_000 - headroom);
  c.push({ role: 'user', content: h.filler(200_000, 4) });
  await c.maybeAutoCompact();
  assert.equal(c.background.earlyLine, 147_000, 'the warning line');
  const fixed = new cc.Compactor({ model: h.OPUS, preemptive: { earlyLine: 150_000 } });
  assert.equal(fixed.background.earlyLine, 150_000);
});

test('progress: the background summary\'s events are marked background; the swap\'s are not', async () => {
  const events = [];
  const { summarize, first } = controlled();
  const { c, next } = pastEarlyLine(summarize, { onProgress: (e) => events.push(e) });
  await flush();
  first.resolve(BIG_SUMMARY);
  await flush();
  const bg = events.filter((e) => e.background === true).map((e) => e.phase);
  assert.deepEqual(bg.filter((p) => p === 'start' || p === 'summarized'), ['start', 'summarized'], JSON.stringify(events));
  assert.ok(bg.includes('summarizing'), JSON.stringify(events));
  assert.ok(events.filter((e) => e.background).every((e) => e.background === true));
  const startEvent = events.find((e) => e.background && e.phase === 'start');
  assert.ok(startEvent.tokens > 0 && startEvent.tokens < c.tokenCount());
  events.length = 0;
  toThreshold(c, next);
  const outcome = await c.maybeAutoCompact();
  assert.equal(outcome.preemptive, true);
  const phases = events.map((e) => e.phase);
  assert.equal(phases[0], 'start');
  assert.equal(phases.at(-1), 'done');
  assert.ok(events.every((e) => e.background === undefined), JSON.stringify(events));
});

test('a manual compact() aborts the request of the summary being written ahead', async () => {
  const { summarize, first } = controlled();
  const { c } = pastEarlyLine(summarize);
  await flush();
  const signal = summarize.calls[0].options.signal;
  assert.ok(signal, 'the summarizer is given a signal');
  assert.equal(signal.aborted, false);
  const done = c.compact();
  await flush();
  assert.equal(signal.aborted, true, 'cancelled: its conversation is being replaced');
  assert.equal(signal.reason?.code, 'ABORTED');
  await done;
  first.resolve(BIG_SUMMARY);
  await flush();
  assert.equal(c.background.state, 'idle');
  assert.equal(c.background.error, undefined, 'a cancelled summary is not a failure');
});

test('a compaction committed while a summary is written ahead aborts it; the Compactor\'s signal aborts it too', async () => {
  {
    const { summarize } = controlled();
    const { c, next } = pastEarlyLine(summarize);
    await flush();
    const signal = summarize.calls[0].options.signal;
    toThreshold(c, next);
    const outcome = await c.maybeAutoCompact(); // today's path: the one written ahead is still running
    assert.equal(outcome.wasCompacted, true);
    assert.equal(outcome.preemptive, false);
    await flush();
    assert.equal(signal.aborted, true);
  }
  {
    const ac = new AbortController();
    const { summarize } = controlled();
    // (Held to the end: a Compactor collected meanwhile cancels its summary ahead itself.)
    const { c } = pastEarlyLine(summarize, { signal: ac.signal });
    await flush();
    const signal = summarize.calls[0].options.signal;
    assert.notEqual(signal, ac.signal, 'its own signal');
    ac.abort();
    assert.equal(signal.aborted, true, 'linked to the Compactor\'s');
    assert.ok(c.length > 0);
  }
});

test('the summarizer is told a summary is written ahead: background: true, no onText', async () => {
  const texts = [];
  const { summarize, first } = controlled();
  const { c, next } = pastEarlyLine(summarize, { onText: (t) => texts.push(t) });
  await flush();
  const opts = summarize.calls[0].options;
  assert.equal(opts.background, true);
  assert.equal(opts.onText, undefined, 'its text is nobody\'s progress');
  first.resolve(BIG_SUMMARY);
  await flush();
  // Today's path, later, is a normal call: onText given, no background flag.
  const fresh = new cc.Compactor({ model: h.OPUS, config: LOW, summarize, onText: (t) => texts.push(t), messages: c.messages });
  toThreshold(fresh, next);
  await fresh.compact();
  const last = summarize.calls.at(-1).options;
  assert.equal(last.background, undefined);
  assert.equal(typeof last.onText, 'function');
});

test('a summarizer that is down is not called on every push: the next try waits for the count to grow', async () => {
  let calls = 0;
  const summarize = async () => {
    calls++;
    throw Object.assign(new Error('overloaded'), { status: 400 });
  };
  const c = new cc.Compactor({ model: h.OPUS, config: { autoCompactPctOverride: 50 }, summarize, preemptive: { earlyLine: 8_000 } });
  let i = 0;
  while (c.tokenCount() < 8_000) c.pushMany(round(i++));
  await flush();
  assert.equal(calls, 1);
  assert.equal(c.background.error?.code, 'SUMMARIZER_FAILED');
  // About 500 tokens a round: 2,000 tokens later (4 rounds) one more try, then 4,000 later.
  const start = c.tokenCount();
  for (let k = 0; k < 3; k++) {
    c.pushMany(round(i++));
    await flush();
  }
  assert.equal(calls, 1, `no retry within 2,000 tokens (${c.tokenCount() - start} grown)`);
  while (c.tokenCount() < start + 2_100) c.pushMany(round(i++));
  await flush();
  assert.equal(calls, 2, 'retried once the count grew');
  for (let k = 0; k < 6; k++) {
    c.pushMany(round(i++));
    await flush();
  }
  assert.equal(calls, 2, 'the next wait is twice as long');
});
