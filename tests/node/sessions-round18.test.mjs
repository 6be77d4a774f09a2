// Round 18 on long agent sessions: a Compactor paused for thrashing stayed paused while the
// context grew past the window, so every later request of an agent that only calls
// maybeAutoCompact was refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Compactor, getAutoCompactThreshold, calculateTokenWarningState, validateForApi, toApiMessages } from '../../pkg/node.js';
import { code, realTokens } from './helpers/code-text.mjs';

test('a thrashing pause does not hold at the blocking limit: the context never grows past the window', async () => {
  // A 32K window with 4K of output (threshold 15,000, blocking limit 25,000) and a system
  // prompt of ~11,000 tokens: every compaction leaves ~12,000, the next turns refill it.
  const model = 'claude-sonnet-4-5';
  const config = { contextWindow: 32_000, maxOutputTokens: 4_000 };
  assert.equal(getAutoCompactThreshold(model, config), 15_000);
  const system = 'You are a coding agent. ' + code(18, 35_000);
  let calls = 0;
  const c = new Compactor({ model, config, system, summarize: async () => `<summary>${code(++calls, 2_000)}</summary>` });
  let id = 0;
  let thrashing = 0;
  let compactedWhilePaused = 0;
  const requests = [];
  for (let r = 0; r < 120; r++) {
    if (r % 8 === 0) c.push({ role: 'user', content: `Task ${r}: fix the failing test in module ${r}.` });
    const paused = c.tracking.thrashing;
    const o = await c.maybeAutoCompact();
    if (o.skipped === 'thrashing') thrashing++;
    if (o.wasCompacted && paused) compactedWhilePaused++;
    const sent = toApiMessages(c.messages);
    assert.deepEqual(validateForApi(sent).problems, []);
    const input = realTokens(system, sent);
    requests.push(input);
    const tid = `toolu_${++id}`;
    c.push({ role: 'assistant', content: [{ type: 'tool_use', id: tid, name: 'read_file', input: { path: `src/m${id}.rs` } }], usage: { input_tokens: input, output_tokens: 50 } });
    c.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: tid, content: code(id * 7, 2_000 + ((id * 7919) % 4_000)) }] });
  }
  assert.ok(thrashing > 0, 'the scenario pauses for thrashing');
  // snap20: paused for good after 4 compactions; the context grew to ~170,000 tokens on the
  // 32K window (every request after the 20th refused). Now the pause holds only up to the
  // blocking limit, where the next request would not fit.
  assert.ok(compactedWhilePaused > 0, 'compacted at the blocking limit while paused');
  const largest = Math.max(...requests);
  assert.ok(largest <= 32_000 - 4_000, `largest request ${largest} tokens on a 32K window`);
  assert.equal(c.tracking.thrashing, true, 'still paused below the blocking limit');
  assert.equal(calculateTokenWarningState(c.tokenCount(), model, config).isAtBlockingLimit, false);
  c.free();
});
