// Round 14 on long agent sessions: summaries written ahead (`preemptive`) that cost a summary
// call per turn and are never swapped in (small windows, turns large against the bound), and
// ones started at the threshold, where the next check compacts anyway.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Compactor } from '../../pkg/node.js';

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'count', 'token', 'module', 'state'];
const text = (seed, n) => {
  let s = '';
  let k = seed;
  while (s.length < n) {
    k = (k * 1103515245 + 12345) >>> 0;
    s += WORDS[k % 8] + ' ';
  }
  return s.slice(0, n);
};
const flush = () => new Promise((r) => setTimeout(r, 0));
const summarizer = (calls) => async () => {
  calls.n++;
  return { content: [{ type: 'text', text: `<summary>${text(calls.n, 6000)}</summary>` }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 1500 } };
};

/** A tool loop of 20 tasks × 6 steps, each step a call and a ~2,300-token result. */
async function toolLoop(options) {
  const calls = { n: 0 };
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: summarizer(calls), ...options });
  let compactions = 0;
  let id = 0;
  for (let task = 0; task < 20; task++) {
    c.push({ role: 'user', content: `Task ${task}: fix module ${task}.` });
    for (let step = 0; step < 6; step++) {
      await flush();
      const o = await c.maybeAutoCompact();
      if (o.wasCompacted) compactions++;
      const tid = `t${++id}`;
      c.push({ role: 'assistant', content: [{ type: 'text', text: text(id, 300) }, { type: 'tool_use', id: tid, name: 'read_file', input: { path: `src/m${id}.rs` } }] });
      c.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: tid, content: text(id + 7, 9000) }] });
    }
    c.push({ role: 'assistant', content: [{ type: 'text', text: `Done: ${text(task, 400)}` }] });
  }
  await flush();
  c.free();
  return { compactions, calls: calls.n };
}

test('preemptive on a 32K window: no summary call per turn that is never swapped in', async () => {
  const config = { contextWindow: 32_768, maxOutputTokens: 4_096 };
  const ahead = await toolLoop({ config, preemptive: true });
  const today = await toolLoop({ config });
  assert.equal(ahead.compactions, today.compactions);
  // snap16: 89 summary calls for 19 compactions (19 without preemptive): the early line sat
  // where a compaction leaves the context and each turn made the summary stale.
  // (When a summary lands varies a little with the machine: 19–24 calls here.)
  assert.ok(ahead.calls <= today.calls * 1.5, `${ahead.calls} summary calls, ${today.calls} without preemptive`);
});

test('preemptive: no summary is started at the threshold, where the next check compacts anyway', async () => {
  const calls = { n: 0 };
  const starts = [];
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: summarizer(calls), preemptive: true,
    onProgress: (e) => { if (e.background && e.phase === 'start') starts.push(c.tokenCount()); } });
  c.push({ role: 'user', content: 'Read the files.' });
  for (let k = 0; k < 2; k++) {
    c.push({ role: 'assistant', content: [{ type: 'tool_use', id: `r${k}`, name: 'read_file', input: { path: `f${k}` } }] });
    c.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `r${k}`, content: text(k, 300_000) }] });
    await flush();
  }
  assert.ok(c.tokenCount() < 157_000, String(c.tokenCount()));
  c.push({ role: 'assistant', content: [{ type: 'tool_use', id: 'r9', name: 'read_file', input: { path: 'big' } }] });
  c.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'r9', content: text(9, 100_000) }] });
  assert.ok(c.tokenCount() >= 167_000, String(c.tokenCount()));
  assert.deepEqual(starts, [], 'snap16 started one at the push that crossed the threshold');
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, true);
  await flush();
  assert.equal(calls.n, 1, 'only the compaction\'s own summary');
  c.free();
});

test('preemptive while automatic compaction is paused (thrashing): no summary written ahead on every turn', async () => {
  // 64K window, each result ~10,000 tokens: the context refills to the threshold right after
  // each compaction, automatic compaction pauses, and the count stays above the threshold.
  const run = async (preemptive) => {
    const calls = { n: 0 };
    const c = new Compactor({ model: 'claude-sonnet-4-5', config: { contextWindow: 64_000 }, summarize: summarizer(calls), preemptive });
    let id = 0;
    for (let task = 0; task < 12; task++) {
      c.push({ role: 'user', content: `Task ${task}` });
      for (let step = 0; step < 5; step++) {
        await flush();
        await c.maybeAutoCompact();
        const tid = `t${++id}`;
        c.push({ role: 'assistant', content: [{ type: 'tool_use', id: tid, name: 'read_file', input: { path: `m${id}` } }] });
        c.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: tid, content: text(id, 40_000) }] });
      }
      c.push({ role: 'assistant', content: 'Done.' });
    }
    await flush();
    c.free();
    return calls.n;
  };
  const ahead = await run(true);
  const today = await run(false);
  // snap16: 77 summary calls (5 without preemptive).
  assert.ok(ahead <= today + 4, `${ahead} summary calls, ${today} without preemptive`);
});

/**
 * A session of `tasks` tasks × 8 steps, each step reading a file of `fileChars` characters
 * into `readFileState` (restored by each compaction), with summaries of `summaryChars`
 * characters; preemptive unless `options` says otherwise (200K window by default).
 */
async function filesLoop({ fileChars, summaryChars = 40_000, tasks = 20 }, options = {}) {
  const calls = { n: 0 };
  const summarize = async () => {
    calls.n++;
    return { content: [{ type: 'text', text: `<summary>${text(calls.n, summaryChars)}</summary>` }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 1500 } };
  };
  const readFileState = new Map();
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize, readFileState, preemptive: true, ...options });
  let id = 0, swaps = 0, blocking = 0;
  for (let task = 0; task < tasks; task++) {
    c.push({ role: 'user', content: `Task ${task}: fix module ${task}.` });
    for (let step = 0; step < 8; step++) {
      const o = await c.maybeAutoCompact();
      if (o.wasCompacted) o.preemptive ? swaps++ : blocking++;
      await flush();
      await flush();
      const tid = `t${++id}`, path = `src/m${id % 40}.rs`, content = text(id + 7, fileChars);
      c.push({ role: 'assistant', content: [{ type: 'text', text: text(id, 200) }, { type: 'tool_use', id: tid, name: 'read_file', input: { path } }] });
      readFileState.set(path, { content, timestamp: id });
      c.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: tid, content }] });
    }
    c.push({ role: 'assistant', content: [{ type: 'text', text: `Done: ${text(task, 400)}` }] });
  }
  await flush();
  c.free();
  return { swaps, blocking, compactions: swaps + blocking, calls: calls.n };
}

test('preemptive with restored files: summaries written ahead are still swapped in (the files a swap restores widen its bound)', async () => {
  const r = await filesLoop({ fileChars: 12_000 });
  assert.ok(r.swaps >= 1, JSON.stringify(r)); // (0 before the fix: every compaction blocking)
});

test('preemptive with snipTokensFreed: summaries ahead still start between the threshold and the point where compaction is due', async () => {
  const r = await filesLoop({ fileChars: 11_000 }, { snipTokensFreed: 30_000 });
  assert.ok(r.swaps >= 1, JSON.stringify(r)); // (0 before the fix)
});

test('preemptive with small turns on a 64K window: a summary ahead is not refreshed on every turn far below the threshold', async () => {
  // ~550-token turns, ~3K-token summaries: a summary goes stale within a turn or two.
  const run = (preemptive) =>
    filesLoop({ fileChars: 2_000, summaryChars: 12_000, tasks: 12 }, { config: { contextWindow: 64_000 }, preemptive });
  const ahead = await run(true);
  const today = await run(false);
  // A swap keeps the latest turn, so it leaves a little more than today's path: a session that
  // ends near the threshold may compact once more.
  assert.ok(ahead.compactions <= today.compactions + 1, `${JSON.stringify(ahead)} vs ${JSON.stringify(today)}`);
  assert.ok(ahead.swaps >= 1, JSON.stringify(ahead));
  // Before: 33 summary calls for one compaction (a refresh on about every turn).
  assert.ok(ahead.calls <= today.calls + 10, `${ahead.calls} summary calls, ${today.calls} without preemptive`);
});
