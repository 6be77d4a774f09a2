// The AI SDK agent-loop helpers (pkg/agents/ai-sdk.js) and their examples (examples/ai-sdk/).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateText, stepCountIs } from 'ai';
import { compactionPrepareStep, createChatHandler, memoryChatStore } from '../../pkg/agents/ai-sdk.js';
import { main as agentLoop } from '../../examples/ai-sdk/agent-loop.mjs';
import { main as chatRoute, readChunks } from '../../examples/ai-sdk/chat-route.mjs';
import { fakeChatModel } from '../../examples/ai-sdk/fake-models.mjs';
import { offlineSummarizer } from '../../pkg/node.js';

const quiet = { log: () => {} };

test('agent loop: prepareStep compacts when due and every later prompt is the compacted one', async () => {
  const r = await agentLoop(quiet);
  assert.equal(r.text, 'Reviewed 8 files; all good.');
  assert.ok(r.compactions >= 1, `expected a compaction, got ${r.compactions}`);
  // Without compaction the 9th prompt would hold 8 file reads (~24K tokens); the window is 40K
  // with its threshold at 7,000: no prompt may be far above that.
  assert.ok(r.largestPrompt < 9000, `largest prompt ${r.largestPrompt}`);
  assert.ok(r.tokensAfter < r.tokensWithout / 2, `${r.tokensAfter} vs ${r.tokensWithout}`);
  // The history to keep starts with the summary, then the user's request verbatim, and ends
  // with the final answer; every tool call is answered.
  assert.equal(r.messages[0].role, 'user');
  assert.match(JSON.stringify(r.messages[0]), /continues an earlier/);
  assert.match(JSON.stringify(r.messages[1]), /Review these files/);
  assert.equal(r.messages.at(-1).role, 'assistant');
  const calls = r.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((p) => p.type === 'tool-call').map((p) => p.toolCallId);
  const results = r.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((p) => p.type === 'tool-result').map((p) => p.toolCallId);
  assert.deepEqual(calls, results);
});

test('prepareStep: no compaction below the threshold, the caller\'s prepareStep still runs, options validated', async () => {
  let inner = 0;
  const prepareStep = compactionPrepareStep({ summarize: offlineSummarizer(), prepareStep: () => ((inner += 1), { toolChoice: 'none' }) });
  const model = fakeChatModel();
  model.doGenerate = async () => ({ content: [{ type: 'text', text: 'hi' }], finishReason: { unified: 'stop', raw: undefined }, usage: { inputTokens: { total: 5 }, outputTokens: { total: 1 } }, warnings: [] });
  const messages = [{ role: 'user', content: 'hello' }];
  const result = await generateText({ model, messages, prepareStep, stopWhen: stepCountIs(3) });
  assert.equal(inner, 1);
  assert.equal(prepareStep.compactions, 0);
  const all = [...messages, ...result.response.messages];
  assert.equal(prepareStep.conversation(all), all);
  assert.throws(() => compactionPrepareStep({ summarise: offlineSummarizer() }), (e) => e.code === 'INVALID_ARGUMENT' && /"summarise".*did you mean "summarize"/.test(e.message));
  assert.throws(() => compactionPrepareStep({}), (e) => e.code === 'INVALID_ARGUMENT' && /"summarize" is required/.test(e.message));
  assert.throws(() => compactionPrepareStep({ summarize: 'x' }), (e) => e.code === 'INVALID_ARGUMENT' && /must be a function/.test(e.message));
});

test('chat route: compacts when due, streams progress, persists the compacted conversation to files', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'agents-chat-'));
  const r = await chatRoute({ ...quiet, dir });
  assert.ok(r.turns.every((t) => t.status === 200));
  const compacted = r.turns.filter((t) => t.progress.some((p) => p.status === 'compacted'));
  assert.ok(compacted.length >= 1, 'no turn compacted');
  for (const t of compacted) {
    const phases = t.progress.map((p) => p.status);
    assert.equal(phases[0], 'compacting');
    assert.equal(phases.at(-1), 'compacted');
    const done = t.progress.at(-1);
    assert.ok(done.tokensAfter < done.tokensBefore);
    // One data part, updated in place on the page (same id every time).
    assert.equal(new Set(t.chunks.filter((c) => c.type === 'data-compaction').map((c) => c.id)).size, 1);
  }
  // The file holds the compacted conversation: summary, the latest request verbatim, answer.
  const stored = JSON.parse(await readFile(join(dir, 'chat-1.json'), 'utf8'));
  assert.deepEqual(stored, r.stored);
  assert.ok(stored.length < 12, `stored ${stored.length} messages`);
  assert.ok(stored.some((m) => /continues an earlier/.test(JSON.stringify(m))));
  assert.match(JSON.stringify(stored), /Note 5 about src\/part-5\.ts/);
  // The model answered the latest note, also on the turn that compacted.
  for (const [i, p] of r.prompts.entries()) assert.match(JSON.stringify(p.prompt.at(-1)), new RegExp(`Note ${i} about`));
  assert.ok(Math.max(...r.prompts.map((p) => p.tokens)) < 12_000);
});

test('chat route: bad requests answer coded JSON errors; options validated', async () => {
  const POST = createChatHandler({ model: fakeChatModel(), summarize: offlineSummarizer(), store: memoryChatStore() });
  const send = (body, method = 'POST') => POST(new Request('http://x/api/chat', { method, body: method === 'POST' ? body : undefined }));
  let res = await send('{not json');
  assert.equal(res.status, 400);
  assert.equal((await res.json()).error.code, 'INVALID_REQUEST');
  res = await send(JSON.stringify({ messages: [] }));
  assert.match((await res.json()).error.message, /body\.id/);
  res = await send(JSON.stringify({ id: 'c', messages: [{ role: 'user' }] }));
  assert.match((await res.json()).error.message, /messages\[0\]/);
  res = await send(null, 'GET');
  assert.equal(res.status, 405);
  assert.throws(() => createChatHandler({ model: fakeChatModel(), summarize: offlineSummarizer() }), (e) => e.code === 'INVALID_ARGUMENT' && /"store" is required/.test(e.message));
  assert.throws(() => createChatHandler({ model: fakeChatModel(), summarize: offlineSummarizer(), store: {} }), (e) => e.code === 'INVALID_ARGUMENT' && /load\(chatId\)/.test(e.message));
  assert.throws(() => createChatHandler({ model: fakeChatModel(), summarize: offlineSummarizer(), store: memoryChatStore(), sytem: 'x' }), (e) => /did you mean "system"/.test(e.message));
});

test('chat route: a regenerate (same message id) replaces the stored tail; the store copies', async () => {
  const store = memoryChatStore();
  const POST = createChatHandler({ model: fakeChatModel(), summarize: offlineSummarizer(), store, system: 's' });
  const msg = (id, text) => ({ id, role: 'user', parts: [{ type: 'text', text }] });
  const post = async (message) => readChunks(await POST(new Request('http://x', { method: 'POST', body: JSON.stringify({ id: 'c', message }) })));
  await post(msg('a', 'first'));
  await post(msg('b', 'second'));
  await post(msg('b', 'second, edited'));
  const stored = await store.load('c');
  assert.deepEqual(stored.map((m) => m.role), ['user', 'assistant', 'user', 'assistant']);
  assert.equal(stored[2].parts[0].text, 'second, edited');
  stored.length = 0;
  assert.equal((await store.load('c')).length, 4);
});
