// Round 17, the review's findings. Each test fails on main as merged at the start of the
// review (3beccfd).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyApiCompaction, buildPostCompactMessages, compactConversation, Compactor, getAutoCompactThreshold, toApiMessages, tokenCountWithEstimation } from '../../pkg/node.js';
import { code, realTokens } from './helpers/code-text.mjs';

test('a long string that starts like a data URL with a parameter but has no comma is read in linear time (was: the square of its length, 1.5 s at 32K characters)', () => {
  // `data:image/png;x` then 100K `=`: the data URL pattern of round 17 tried every split of
  // the parameter at each `=` (about 6 s here); a hostile message must not hang the caller.
  const bad = 'data:image/png;x' + '='.repeat(64_000);
  let t = performance.now();
  const api = toApiMessages([{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', image: bad }] }]);
  const viewMs = performance.now() - t;
  assert.ok(viewMs < 1000, `toApiMessages took ${viewMs.toFixed(0)} ms`);
  // Not a data URL: not decoded as one (no media type taken from it).
  assert.equal(JSON.stringify(api).includes('"media_type":"image/png;x'), false);
  t = performance.now();
  const c = tokenCountWithEstimation(
    [{ role: 'user', content: [{ type: 'file', data: 'data:text/plain;x' + '='.repeat(64_000), mediaType: 'text/plain' }] }],
    { tokenCounter: (s) => s.length / 4 },
  );
  const countMs = performance.now() - t;
  assert.ok(countMs < 1000, `the count with a tokenizer took ${countMs.toFixed(0)} ms`);
  assert.equal(typeof c, 'number');
  // Data URLs with parameters are still read as their type and data.
  const ok = toApiMessages([{ role: 'user', content: [{ type: 'file', data: 'data:text/plain;charset=utf-8;base64,aGVsbG8=', mediaType: 'text/plain' }] }]);
  assert.match(JSON.stringify(ok), /"data":"hello"/);
});

const real = realTokens;

test('a summary written ahead whose early swap would leave the context over the threshold reports no `start` (was: `start` and no compaction after it)', async () => {
  // A 32K window (threshold 15,000) and ~8,500-token summaries written ahead: offered early
  // (below the threshold), a swap as large as what it replaced reported `start`, restored
  // files and ran the SessionStart hooks, then failed as COMPACTION_NOT_SMALLER (a failure
  // towards the breaker) with no compaction. When a check meets that swap depends on when the
  // summaries written ahead land: before the fix this fails in about half the runs;
  // tests/pipeline.rs checks the same deterministically.
  const config = { contextWindow: 32_000, maxOutputTokens: 4_000 };
  const threshold = getAutoCompactThreshold('claude-sonnet-4-5', config);
  const system = 'You are a coding agent. ' + code(3, 6_000);
  let n = 0;
  const events = [];
  const c = new Compactor({
    model: 'claude-sonnet-4-5', config, system, preemptive: true, keepLastUserMessage: true,
    summarize: async () => `<summary>${code(++n, 34_000)}</summary>`,
    onProgress: (e) => events.push(e),
  });
  const checks = [];
  let id = 0;
  for (let t = 0; t < 4; t++) {
    c.push({ role: 'user', content: `Task ${t}: fix the failing test in module ${t}.` });
    for (let s = 0; s <= 6; s++) {
      await new Promise((r) => setTimeout(r, 1));
      events.length = 0;
      const before = c.tokenCount();
      const o = await c.maybeAutoCompact();
      const phases = events.filter((e) => !e.background).map((e) => e.phase);
      checks.push({ before, compacted: o.wasCompacted, phases });
      // A check reports `start` only for a compaction, and then `done` last.
      assert.equal(phases.includes('start'), o.wasCompacted, `check at ${before} tokens (threshold ${threshold}): ${phases.join(' ')}, compacted ${o.wasCompacted}`);
      if (o.wasCompacted) assert.equal(phases.at(-1), 'done');
      const input = real(system, toApiMessages(c.messages));
      if (s === 6) {
        c.push({ role: 'assistant', content: [{ type: 'text', text: `Done with task ${t}.` }], usage: { input_tokens: input, output_tokens: 10 } });
        break;
      }
      const tid = `toolu_${++id}`;
      c.push({ role: 'assistant', content: [{ type: 'text', text: code(id, 200) }, { type: 'tool_use', id: tid, name: 'read_file', input: { path: `src/m${id}.rs` } }], usage: { input_tokens: input, output_tokens: 80 } });
      c.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: tid, content: code(id * 7, 300 + ((id * 7919) % 6_000)) }] });
    }
  }
  assert.ok(checks.filter((k) => k.compacted).length >= 3, JSON.stringify(checks.filter((k) => k.compacted)));
  c.free();
});

test('applyApiCompaction takes Anthropic messages the library compacted (was: UNSUPPORTED_SHAPE, "messages[0] is a Claude Code transcript line")', async () => {
  const m = [];
  for (let i = 0; i < 10; i++) m.push({ role: 'user', content: `question ${i} ` + 'x'.repeat(2000) }, { role: 'assistant', content: `answer ${i}` });
  const r = await compactConversation(m, { model: 'claude-sonnet-4-5', summarize: async () => '<summary>Ten questions answered.</summary>' }, {});
  const messages = [...buildPostCompactMessages(r), { role: 'user', content: 'Next task: the parser.' }];
  assert.equal(messages[0].subtype, 'compact_boundary');
  const response = {
    id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
    content: [{ type: 'compaction', content: "The API's summary." }],
    stop_reason: 'compaction', usage: { input_tokens: 100, output_tokens: 10 },
  };
  const applied = applyApiCompaction(messages, response);
  assert.equal(applied.compacted, true);
  assert.equal(applied.paused, true);
  // The response after the messages, then the latest request put back after its block.
  assert.equal(applied.messages[messages.length].content, response.content);
  assert.deepEqual(applied.messages.at(-1), messages.at(-1));
  // Dropping what the API ignores leaves the block and the request.
  const dropped = applyApiCompaction(messages, response, { dropIgnored: true });
  assert.deepEqual(dropped.messages.map((x) => x.role), ['assistant', 'user']);
  // A Compactor's messages too.
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: async () => '<summary>s</summary>', messages: m });
  await c.compact();
  c.push({ role: 'user', content: 'next' });
  assert.equal(applyApiCompaction(c.messages, response).compacted, true);
  c.free();
  // A transcript line besides the boundary is still refused.
  assert.throws(() => applyApiCompaction([...messages, { type: 'user', uuid: 'u', message: { role: 'user', content: 'a' } }], response), { code: 'UNSUPPORTED_SHAPE' });
});
