// A compaction the caller aborts is reported but never counted as a failure towards the
// circuit breaker (three failures in a row switch automatic compaction off): not by
// autoCompactIfNeeded, a Compactor, the OpenAI chat loop or the LangChain middleware.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import OpenAI from 'openai';
import { createAgent } from 'langchain';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { autoCompactIfNeeded, Compactor } from '../../pkg/node.js';
import { runChatToolLoop } from '../../pkg/agents/openai.js';
import { compactionMiddleware } from '../../pkg/agents/langchain.js';

const config = { contextWindow: 35_000, maxOutputTokens: 20_000 };
const big = () => [
  { role: 'user', content: 'x '.repeat(8000) },
  { role: 'assistant', content: 'noted' },
  { role: 'user', content: 'go on' },
];

// A summarizer that never answers on its own: it ends when its signal aborts.
const hanging = (seen) => (_request, { signal }) => new Promise((_, reject) => {
  seen.push(signal);
  signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' })));
});

test('autoCompactIfNeeded: an aborted compaction is reported, the failure count unchanged', async () => {
  const ac = new AbortController();
  const seen = [];
  const p = autoCompactIfNeeded(big(), { model: 'claude-sonnet-4-5', config, summarize: hanging(seen), signal: ac.signal }, { consecutiveFailures: 2 });
  setTimeout(() => ac.abort(), 20);
  const out = await p;
  assert.equal(out.wasCompacted, false);
  assert.equal(out.error?.code, 'ABORTED');
  assert.equal(out.consecutiveFailures, 2, 'an abort is no failure of the compaction');
  // A real failure still counts.
  const failing = await autoCompactIfNeeded(big(), { model: 'claude-sonnet-4-5', config, summarize: async () => { throw new Error('down'); } }, { consecutiveFailures: 2 });
  assert.equal(failing.consecutiveFailures, 3);
});

test('Compactor: three aborted automatic compactions leave automatic compaction on', async () => {
  const seen = [];
  const c = new Compactor({ model: 'claude-sonnet-4-5', config, summarize: hanging(seen), messages: big() });
  // Aborted once the summarizer is waiting (not after a fixed delay: on a loaded machine the
  // compaction's own work before the call may take longer than the delay).
  const reached = async (n) => {
    for (const t0 = Date.now(); seen.length < n; await new Promise((r) => setTimeout(r, 1))) {
      if (Date.now() - t0 > 10_000) assert.fail(`attempt ${n} never reached the summarizer`);
    }
  };
  for (let k = 0; k < 3; k++) {
    const ac = new AbortController();
    const p = c.maybeAutoCompact({ signal: ac.signal });
    await reached(k + 1);
    ac.abort();
    const out = await p;
    assert.equal(out.error?.code, 'ABORTED');
    assert.equal(out.consecutiveFailures, 0);
  }
  assert.equal(seen.length, 3, 'each attempt reached the summarizer');
  // A fourth is still attempted: the breaker stays closed.
  const ac = new AbortController();
  const p = c.maybeAutoCompact({ signal: ac.signal });
  await reached(4);
  ac.abort();
  assert.equal((await p).error?.code, 'ABORTED');
  assert.equal(seen.length, 4);
});

test('OpenAI chat loop: an abort during its automatic compaction ends the loop with ABORTED, nothing sent', async () => {
  let requests = 0;
  const client = new OpenAI({ apiKey: 'k', maxRetries: 0, fetch: async () => { requests++; throw new Error('no request expected'); } });
  const ac = new AbortController();
  const errors = [];
  const p = runChatToolLoop({ client, summarize: hanging([]), messages: big(), request: { model: 'gpt-4.1' }, config, signal: ac.signal, onError: (e) => errors.push(e) });
  setTimeout(() => ac.abort(), 20);
  await assert.rejects(p, (e) => e.code === 'ABORTED');
  assert.equal(requests, 0);
  assert.equal(errors.length, 0, 'an abort is the loop\'s end, not a reported failure');
});

test('LangChain middleware: an aborted compaction is reported and not counted', async () => {
  const ac = new AbortController();
  ac.abort();
  const errors = [];
  const mw = compactionMiddleware({ model: 'gpt-4.1', config, context: { signal: ac.signal }, summarize: hanging([]), onError: (e) => errors.push(e) });
  const model = fakeModel().respond(new AIMessage('ok'));
  const agent = createAgent({ model, tools: [], middleware: [mw] });
  const input = [new HumanMessage({ id: 'h1', content: 'x '.repeat(8000) }), new AIMessage({ id: 'a1', content: 'y' }), new HumanMessage({ id: 'h2', content: 'go on' })];
  await agent.invoke({ messages: input });
  assert.equal(errors.length, 1);
  assert.equal(errors[0].code, 'ABORTED');
  assert.equal(mw.consecutiveFailures, 0);
});

test('AI SDK compactionPrepareStep: an aborted compaction is reported and not counted', async () => {
  const { compactionPrepareStep } = await import('../../pkg/agents/ai-sdk.js');
  const messages = [];
  for (let k = 0; k < 12; k++) messages.push({ role: 'user', content: `question ${k} ${'context '.repeat(1200)}` }, { role: 'assistant', content: `answer ${k}` });
  messages.push({ role: 'user', content: 'last?' });
  const ac = new AbortController();
  const errors = [];
  const summarize = async () => { ac.abort(); throw Object.assign(new Error('aborted'), { name: 'AbortError' }); };
  const step = compactionPrepareStep({ summarize, config: { contextWindow: 40_000 }, context: { signal: ac.signal }, onError: (e) => errors.push(e.code) });
  for (let i = 0; i < 3; i++) await step({ steps: [], stepNumber: 0, model: { modelId: 'claude-sonnet-4-5' }, messages: [...messages] });
  assert.deepEqual(errors, ['ABORTED', 'ABORTED', 'ABORTED']);
  assert.equal(step.consecutiveFailures, 0);
});
