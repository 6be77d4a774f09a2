// Round 19 on long agent sessions (sessions19): the count where usage was seen but teaches no
// line, and a system prompt that grows half-way through a session.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Compactor, toApiMessages, getAutoCompactThreshold } from '../../pkg/node.js';
import { code } from './helpers/code-text.mjs';

/** What a fake provider bills: chars / 3.2 over the system prompt and the messages sent. */
const billed = (system, messages) => {
  let chars = system.length;
  for (const m of toApiMessages(messages)) {
    chars += 16;
    if (typeof m.content === 'string') chars += m.content.length;
    else for (const b of m.content) chars += b.type === 'text' ? b.text.length : b.type === 'tool_result' ? String(b.content).length : JSON.stringify(b.input ?? b).length;
  }
  return Math.ceil(chars / 3.2);
};

test('usage that teaches no line yet does not drop the system prompt from the count after a compaction', async () => {
  // One response seen, for a large first message: its usage cannot tell the system prompt
  // from the ratio of the messages, so nothing is learned (calibration() is null).
  const system = 'You are a coding agent. ' + code(5, 40_000);
  const c = new Compactor({ model: 'acme-64k', config: { contextWindow: 64_000, maxOutputTokens: 4_096 }, system, summarize: async () => `<summary>${code(3, 2_000)}</summary>` });
  const empty = c.tokenCount();
  assert.ok(empty > 10_000, String(empty)); // the system prompt, before any usage
  c.push({ role: 'user', content: 'Please review this file:\n' + code(7, 60_000) });
  c.push({ role: 'assistant', content: 'Looks fine. ' + code(8, 4_000), usage: { input_tokens: 31_000, output_tokens: 1_200 } });
  assert.equal(c.calibration(), null);
  await c.compact();
  const real = billed(system, c.messages);
  // snap21: 548 tokens after the compaction (the summary alone), 13,198 billed.
  assert.ok(c.tokenCount() >= empty, `count ${c.tokenCount()}, the system prompt alone ${empty}, billed ${real}`);
  assert.ok(Math.abs(c.tokenCount() - real) / real < 0.25, `count ${c.tokenCount()}, billed ${real}`);
  c.free();
});

test('a system prompt that grows half-way is learned again: the count after each later compaction includes it', async () => {
  // A 64K window; the agent adds 40,000 characters (~12,500 tokens) of tool documentation to
  // its system prompt at turn 20. The Compactor was given the first prompt only: what the
  // requests send now is learned from their usage.
  const W = 64_000;
  const config = { contextWindow: W, maxOutputTokens: 4_096 };
  const model = 'acme-64k';
  const first = 'You are a coding agent. ' + code(5, 12_000);
  const grown = first + '\n# Tools of the connected server\n' + code(99, 40_000);
  let summaries = 0;
  const c = new Compactor({ model, config, system: first, summarize: async () => `<summary>${code(++summaries, 3_000)}</summary>` });
  c.push({ role: 'user', content: 'Fix everything.' });
  let system = first;
  const after = [];
  let largest = 0;
  for (let i = 0; i < 150; i++) {
    if (i === 20) system = grown;
    const o = await c.maybeAutoCompact();
    const real = billed(system, c.messages);
    if (o.wasCompacted && i > 20) after.push({ count: c.tokenCount(), real });
    largest = Math.max(largest, real);
    const id = `toolu_${i}`;
    c.push({ role: 'assistant', content: [{ type: 'text', text: 'Reading.' }, { type: 'tool_use', id, name: 'read_file', input: { path: `src/m${i}.rs` } }], usage: { input_tokens: real, output_tokens: 40 } });
    c.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: code(i * 13, 2_000 + ((i * 7919) % 6_000)) }] });
  }
  assert.ok(after.length >= 5, `${after.length} compactions after the change`);
  assert.ok(largest <= W - 4_096, `largest request ${largest}`);
  // snap21: after the first compaction since the change the calibration was null for the
  // rest of the session; the count after every later compaction was 823 tokens (the summary
  // alone, not even the first system prompt), 17,580 billed.
  for (const { count, real } of after.slice(1)) {
    assert.ok(Math.abs(count - real) / real < 0.1, `count after a compaction ${count}, billed ${real}`);
  }
  const cal = c.calibration();
  assert.ok(cal && Math.abs(cal.overhead - billed(grown, [])) < 1_000, JSON.stringify(cal));
  assert.ok(getAutoCompactThreshold(model, config) > cal.overhead);
  c.free();
});
