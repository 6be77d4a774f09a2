// Round 17, the lead's fixes. Each test fails on the package before the fix (pkg-snap19).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { autoCompactIfNeeded, Compactor, reactiveCompact, trySessionMemoryCompaction } from '../../pkg/node.js';

const MODEL = 'claude-sonnet-4-5';
const summarize = async () => ({ content: [{ type: 'text', text: '<summary>The user read many files.</summary>' }], stop_reason: 'end_turn' });
const MEMORY = '# Session notes\nThe user asked to read every file of src/ and is reviewing them one by one.';

/** An Anthropic API conversation of `turns` tool reads, about 1.3K tokens each. */
function reads(turns) {
  const m = [{ role: 'user', content: 'Read every file of src/ one by one.' }];
  for (let i = 0; i < turns; i++) {
    m.push({ role: 'assistant', content: [{ type: 'text', text: `Reading src/f${i}.rs next.` }, { type: 'tool_use', id: `t${i}`, name: 'read_file', input: { path: `src/f${i}.rs` } }] });
    m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `fn f${i}() {}\n`.repeat(400) }] });
  }
  m.push({ role: 'assistant', content: [{ type: 'text', text: 'Done reading.' }] });
  m.push({ role: 'user', content: 'Now summarize what they do.' });
  return m;
}

const foreground = (events) => events.filter((e) => !e.background).map((e) => e.phase);

function assertOneStartFirstDoneLast(path, events) {
  const phases = foreground(events);
  assert.equal(phases[0], 'start', `${path}: ${phases.join(' ')}`);
  assert.equal(phases.filter((p) => p === 'start').length, 1, `${path}: ${phases.join(' ')}`);
  assert.equal(phases.at(-1), 'done', `${path}: ${phases.join(' ')}`);
  const start = events.find((e) => e.phase === 'start');
  assert.ok(start.tokens > 0, `${path}: start carries the size before`);
}

test('auto-compaction reports `start` before its PreCompact hooks, with or without a session memory (was: preCompactHook first; no start at all from session memory)', async () => {
  for (const memory of [undefined, MEMORY]) {
    const events = [];
    const context = {
      model: MODEL, summarize, config: { autoCompactWindow: 60_000 },
      sessionMemory: memory && (() => memory),
      onProgress: (e) => events.push(e),
    };
    const o = await autoCompactIfNeeded(reads(30), context);
    assert.equal(o.wasCompacted, true, JSON.stringify(o.error ?? o.skipped));
    assert.equal(o.compactionResult.fromSessionMemory, memory !== undefined);
    assertOneStartFirstDoneLast(`autoCompactIfNeeded, memory ${memory !== undefined}`, events);
  }
});

test('the Compactor\'s automatic compaction from a session memory reports one `start` first and `done` last', async () => {
  const events = [];
  const c = new Compactor({
    model: MODEL, summarize, config: { autoCompactWindow: 60_000 }, messages: reads(30),
    sessionMemory: () => MEMORY, onProgress: (e) => events.push(e),
  });
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, true, JSON.stringify(o.error ?? o.skipped));
  assertOneStartFirstDoneLast('Compactor, session memory', events);
});

test('reactive compaction and a session-memory compaction called alone report one `start` first and `done` last', async () => {
  for (const memory of [undefined, MEMORY]) {
    const events = [];
    const context = { model: MODEL, summarize, sessionMemory: memory && (() => memory), onProgress: (e) => events.push(e) };
    await reactiveCompact(reads(30), context, 'prompt is too long: 210000 tokens > 200000 maximum', { turnId: 't1' });
    assertOneStartFirstDoneLast(`reactiveCompact, memory ${memory !== undefined}`, events);
  }
  const events = [];
  await trySessionMemoryCompaction(reads(30), { model: MODEL, sessionMemory: () => MEMORY, onProgress: (e) => events.push(e) });
  assertOneStartFirstDoneLast('trySessionMemoryCompaction', events);
});
