// The Anthropic SDK and OpenAI SDK tool loops (pkg/agents/anthropic.js, pkg/agents/openai.js)
// and their examples, against fake servers given to the SDK clients as `fetch`.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { runToolLoop } from '../../pkg/agents/anthropic.js';
import { runChatToolLoop } from '../../pkg/agents/openai.js';
import { main as anthropicLoop, fakeMessagesApi } from '../../examples/anthropic/tool-loop.mjs';
import { main as openaiLoop, fakeChatCompletions } from '../../examples/openai/tool-loop.mjs';
import { Compactor, offlineSummarizer } from '../../pkg/node.js';

const quiet = { log: () => {} };

for (const stream of [false, true]) {
  test(`anthropic: tool loop over messages.${stream ? 'stream' : 'create'} compacts when due and after a prompt-too-long`, async () => {
    const r = await anthropicLoop({ ...quiet, stream });
    assert.equal(r.result.message.content[0].text.startsWith('All 6 files reviewed'), true);
    assert.deepEqual(r.events.map((e) => e.reason).sort(), ['auto', 'reactive']);
    assert.ok(r.events.every((e) => e.after < e.before));
    assert.equal(r.result.compactions, 2);
    assert.ok(Math.max(...r.requests.map((q) => q.tokens)) < 9000);
    assert.deepEqual(r.valid.problems, []);
    assert.equal(r.valid.valid, true);
    if (stream) assert.match(r.streamed, /All 6 files reviewed/);
    // Every request the API received had each tool_use answered in the next message.
    for (const q of r.requests) {
      q.body.messages.forEach((m, i) => {
        const uses = (Array.isArray(m.content) ? m.content : []).filter((b) => b.type === 'tool_use').map((b) => b.id);
        const next = q.body.messages[i + 1];
        for (const id of uses) if (next) assert.ok(next.content.some((b) => b.tool_use_id === id), `tool_use ${id} unanswered`);
      });
      assert.equal(q.body.messages[0].role, 'user');
    }
  });
}

test('anthropic: a missing tool answers is_error; options validated; maxSteps enforced', async () => {
  const api = fakeMessagesApi({ files: ['src/a.rs', 'src/b.rs'] });
  const client = new Anthropic({ apiKey: 'k', fetch: api.fetch, maxRetries: 0 });
  const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer() });
  compactor.push({ role: 'user', content: 'go' });
  const r = await runToolLoop({ client, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 100 } });
  const errs = api.requests.at(-1).body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.is_error);
  assert.equal(errs.length, 2);
  assert.match(errs[0].content, /no tool named "read_file"/);
  assert.equal(r.steps, 3);
  await assert.rejects(runToolLoop({ client, compactor, request: {}, tool: {} }), (e) => e.code === 'INVALID_ARGUMENT' && /did you mean "tools"/.test(e.message));
  await assert.rejects(runToolLoop({ client, compactor, request: { messages: [] } }), (e) => e.code === 'INVALID_ARGUMENT' && /request\.messages/.test(e.message));
  const api2 = fakeMessagesApi({ files: ['src/a.rs', 'src/b.rs', 'src/c.rs'] });
  const c2 = new Compactor({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer(), messages: [{ role: 'user', content: 'go' }] });
  await assert.rejects(
    runToolLoop({ client: new Anthropic({ apiKey: 'k', fetch: api2.fetch, maxRetries: 0 }), compactor: c2, request: { model: 'm', max_tokens: 10 }, tools: { read_file: () => 'x' }, maxSteps: 2 }),
    (e) => e.code === 'MAX_STEPS_EXCEEDED',
  );
});

test('openai: chat tool loop compacts when due and after a context-length rejection', async () => {
  const r = await openaiLoop(quiet);
  assert.equal(r.result.completion.choices[0].message.content, 'Reviewed 6 files.');
  assert.deepEqual([...new Set(r.events.map((e) => e.reason))].sort(), ['auto', 'reactive']);
  assert.ok(r.events.every((e) => e.after < e.before));
  const m = r.result.messages;
  assert.equal(m[0].role, 'system');
  assert.match(JSON.stringify(m[1]), /continues an earlier/);
  assert.ok(Math.max(...r.requests.map((q) => q.tokens)) < 9000);
  // Every tool call in every request is answered by a tool message.
  for (const q of r.requests) {
    const calls = q.body.messages.flatMap((x) => x.tool_calls ?? []).map((c) => c.id);
    const answered = q.body.messages.filter((x) => x.role === 'tool').map((x) => x.tool_call_id);
    assert.deepEqual(calls, answered);
  }
});

test('openai: a tool that throws answers an error message; options validated', async () => {
  const server = fakeChatCompletions({ files: ['src/x.py'] });
  const client = new OpenAI({ apiKey: 'k', fetch: server.fetch, maxRetries: 0 });
  const r = await runChatToolLoop({
    client, summarize: offlineSummarizer(), messages: [{ role: 'user', content: 'go' }], request: { model: 'gpt-4.1' },
    tools: { read_file: () => { throw new Error('disk on fire'); } },
  });
  assert.equal(r.messages[2].content, 'Error: disk on fire');
  assert.equal(r.compactions, 0);
  await assert.rejects(runChatToolLoop({ client, summarize: offlineSummarizer(), messages: [], request: {} }), (e) => e.code === 'INVALID_ARGUMENT' && /request\.model/.test(e.message));
  await assert.rejects(runChatToolLoop({ client, summarize: offlineSummarizer(), messages: [], request: { model: 'm' }, maxStep: 3 }), (e) => /did you mean "maxSteps"/.test(e.message));
});
