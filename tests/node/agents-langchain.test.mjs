// The LangChain v1 middleware (pkg/agents/langchain.js) and the side-by-side example with
// LangChain's own summarizationMiddleware (examples/langchain/).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAgent } from 'langchain';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { compactionMiddleware } from '../../pkg/agents/langchain.js';
import { main as sideBySide } from '../../examples/langchain/side-by-side.mjs';
import { offlineSummarizer } from '../../pkg/node.js';

test('side by side with summarizationMiddleware: tokens sent and facts lost, measured', async () => {
  const r = await sideBySide({ log: () => {} });
  // Both compacted: each summary model was called once, and the agent answered.
  for (const x of [r.theirs, r.ours, r.oursAppend]) {
    assert.equal(x.summaryCalls, 1);
    assert.equal(x.final, 'The docs are updated.');
    assert.ok(x.tokensSent < r.tokensBefore);
  }
  // Ours sends fewer tokens (no verbatim tail of big tool outputs) and keeps the latest request.
  assert.ok(r.ours.tokensSent < r.theirs.tokensSent / 4, `${r.ours.tokensSent} vs ${r.theirs.tokensSent}`);
  assert.deepEqual(r.ours.kinds, ['system', 'human', 'human']);
  // The same summary model forgets the same things; the loss report names them, and with
  // appendMissing nothing of the conversation is lost.
  assert.deepEqual(r.lossReport.userMessages, ['Do not touch src/legacy.ts, other teams depend on it.', 'Now update the docs in docs/parser.md.']);
  assert.equal(r.lossReport.errors.length, 1);
  assert.deepEqual(r.theirs.lost.userMessages, ['Do not touch src/legacy.ts, other teams depend on it.']);
  assert.deepEqual(r.oursAppend.lost, { files: [], userMessages: [], errors: [] });
});

test('middleware: below the threshold nothing changes; options validated', async () => {
  const mw = compactionMiddleware({ model: 'openai:gpt-4.1', summarize: offlineSummarizer() });
  const model = fakeModel().respond(new AIMessage('ok'));
  const agent = createAgent({ model, tools: [], middleware: [mw] });
  const input = [new HumanMessage({ id: 'h', content: 'hello' })];
  const state = await agent.invoke({ messages: input });
  assert.equal(mw.compactions, 0);
  assert.deepEqual(state.messages.map((m) => m.getType()), ['human', 'ai']);
  assert.equal(model.calls[0].messages.length, 1);
  assert.throws(() => compactionMiddleware({ model: 'gpt-4.1', summarize: offlineSummarizer(), keepRecnt: 1 }), (e) => e.code === 'INVALID_ARGUMENT' && /unknown option "keepRecnt"/.test(e.message));
  assert.throws(() => compactionMiddleware({ model: {}, summarize: offlineSummarizer() }), (e) => e.code === 'INVALID_ARGUMENT' && /"model" must be/.test(e.message));
  assert.throws(() => compactionMiddleware({ model: 'gpt-4.1' }), (e) => e.code === 'INVALID_ARGUMENT' && /"summarize" is required/.test(e.message));
});

test('middleware: a failing summarizer leaves the messages as they were and is reported', async () => {
  const errors = [];
  const mw = compactionMiddleware({
    model: 'gpt-4.1', config: { contextWindow: 35_000, maxOutputTokens: 20_000 },
    summarize: async () => { throw Object.assign(new Error('overloaded'), { status: 400 }); },
    onError: (e) => errors.push(e),
  });
  const model = fakeModel().respond(new AIMessage('ok'));
  const agent = createAgent({ model, tools: [], middleware: [mw] });
  const input = [new HumanMessage({ id: 'h1', content: 'x '.repeat(6000) }), new AIMessage({ id: 'a1', content: 'y' }), new HumanMessage({ id: 'h2', content: 'go on' })];
  const state = await agent.invoke({ messages: input });
  assert.equal(errors.length, 1);
  assert.ok(errors[0].code, 'a coded error');
  assert.equal(mw.consecutiveFailures, 1);
  assert.equal(model.calls[0].messages.length, 3);
  assert.equal(state.messages.at(-1).content, 'ok');
});
