// Round 16 on long agent sessions: an earlier summary kept as "the latest user request" (two
// summaries after the next compaction; on small windows, after a catch-up, compaction thrashed
// and a request went over the window), summaries written ahead that land past the threshold
// (paid for, never used), and summaries written ahead beside a session memory (never used).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Compactor, buildPostCompactMessages, compactConversation } from '../../pkg/node.js';

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
const INTRO = 'This conversation continues an earlier one';
const answer = (k, n = 6000) => ({ content: [{ type: 'text', text: `<summary>summary ${k}: ${text(k, n)}</summary>` }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 1500 } });

test('an earlier summary is not kept as the latest user request (Compactor and compactConversation)', async () => {
  let k = 0;
  const summarize = async () => answer(++k);
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize });
  c.push({ role: 'user', content: 'Fix the failing count test in src/count.rs' });
  let id = 0;
  const turn = (into) => {
    const tid = `t${++id}`;
    into.push({ role: 'assistant', content: [{ type: 'tool_use', id: tid, name: 'read_file', input: { path: `src/a${id}` } }] });
    into.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: tid, content: text(id, 6000) }] });
  };
  turn(c);
  turn(c);
  // As after a swap that cut past the request: the summary is the latest user text.
  await c.compact({ keepLastUserMessage: false });
  turn(c);
  turn(c);
  const held = c.messages;
  await c.compact({ keepLastUserMessage: true });
  // snap18: 2 summaries, the earlier one kept verbatim as "the latest request".
  assert.equal(c.messages.filter((m) => JSON.stringify(m).includes(INTRO)).length, 1);
  c.free();
  const r = await compactConversation(held, { model: 'claude-sonnet-4-5', summarize }, { keepLastUserMessage: true });
  assert.equal(buildPostCompactMessages(r).filter((m) => JSON.stringify(m).includes(INTRO)).length, 1);
});

/**
 * A tool loop on a 200K model: `cycles` compactions, each step a call and a ~2,300-token
 * result. Background summaries answer through `background(k, signal)`.
 */
async function loop({ cycles, background, sessionMemory, onCompacted, size }) {
  const calls = { bg: 0, fg: 0 };
  const summarize = async (_req, o = {}) => {
    if (o.background) {
      calls.bg++;
      return background(calls.bg, o.signal);
    }
    calls.fg++;
    return answer(100 + calls.fg, size);
  };
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize, preemptive: true, keepLastUserMessage: true, ...(sessionMemory ? { sessionMemory } : {}) });
  let id = 0;
  let compactions = 0;
  const kinds = [];
  for (let task = 0; compactions < cycles && task < 400; task++) {
    c.push({ role: 'user', content: `Task ${task}: fix module ${task}.` });
    for (let step = 0; step < 6; step++) {
      await flush();
      const o = await c.maybeAutoCompact();
      if (o.wasCompacted) {
        compactions++;
        kinds.push(o.caughtUp ? 'catchup' : o.preemptive ? 'swap' : o.compactionResult.fromSessionMemory ? 'memory' : 'full');
        onCompacted?.(c, task, kinds.at(-1));
      }
      const tid = `t${++id}`;
      c.push({ role: 'assistant', content: [{ type: 'text', text: text(id, 300) }, { type: 'tool_use', id: tid, name: 'read_file', input: { path: `src/m${id}.rs` } }] });
      c.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: tid, content: text(id + 7, 9000) }] });
    }
    c.push({ role: 'assistant', content: [{ type: 'text', text: `Done: ${text(task, 400)}` }] });
  }
  await flush();
  c.free();
  return { calls, kinds };
}

test('preemptive: summaries that land past the threshold stop being started', async () => {
  // The summarizer is slower than the stretch from the early line to the threshold: each
  // summary ahead is still running when the compaction comes (which aborts it).
  const never = (_k, signal) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  const { calls, kinds } = await loop({ cycles: 10, background: never });
  assert.deepEqual(kinds, Array(10).fill('full'));
  // snap18: one started (and paid for) per compaction, 10, none used. Now every other one
  // (the estimate halves after a compaction with none started).
  assert.ok(calls.bg <= 7, `${calls.bg} summaries ahead for 10 compactions, none landed`);
  assert.ok(calls.bg >= 2, `${calls.bg}: not switched off for good`);
});

test('preemptive with a session memory: no summaries ahead while the memory compacts', async () => {
  const sessionMemory = () => 'Session notes: the user fixes modules one by one. '.repeat(40);
  const { calls, kinds } = await loop({ cycles: 12, background: async (k) => answer(k), sessionMemory });
  assert.ok(kinds.slice(1).every((k) => k === 'memory'), kinds.join());
  assert.equal(calls.fg, 0);
  // snap18: 6-8 summaries ahead for 12 compactions from the memory, none used. Now only
  // before the first (nothing tells yet that the memory will compact).
  assert.ok(calls.bg <= 2, `${calls.bg} summaries ahead`);
});

test('preemptive with keepLastUserMessage: a swap or catch-up keeps the latest user request verbatim', async () => {
  const lost = [];
  let used = 0;
  const { kinds } = await loop({
    cycles: 6,
    // Summaries of ~10,000 tokens: the latest turn fits beside one.
    size: 40_000,
    background: async (k) => answer(k, 40_000),
    onCompacted: (c, task, kind) => {
      if (kind !== 'swap' && kind !== 'catchup') return;
      used++;
      const request = `Task ${task}: fix module ${task}.`;
      if (!c.messages.some((m) => m.content === request)) lost.push(`${kind} in task ${task}`);
    },
  });
  assert.ok(used > 0, `no swap or catch-up: ${kinds.join()}`);
  // snap18: every one of them summarized the request away (today's path keeps it).
  assert.deepEqual(lost, []);
});
