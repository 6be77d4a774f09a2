// Round 19 (integrations19): langchainSummarizer carries its model's id (summaryModel), and the
// SDK tool loops reject a failed request with a coded error whose cause is the SDK's own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { Compactor, compactConversation, errorCodes, langchainSummarizer, offlineSummarizer } from '../../pkg/node.js';
import { runToolLoop } from '../../pkg/agents/anthropic.js';
import { runChatToolLoop } from '../../pkg/agents/openai.js';

const summaryText = '<summary>The user asked many questions and got as many answers.</summary>';

/** A FakeListChatModel named as ChatOpenAI / ChatAnthropic name theirs, keeping what it is sent. */
class NamedFake extends FakeListChatModel {
  constructor(names, sent) {
    super({ responses: Array(20).fill(summaryText) });
    Object.assign(this, names);
    this.sent = sent;
  }
  async _generate(messages, options, runManager) {
    this.sent.push(messages);
    return super._generate(messages, options, runManager);
  }
}

// About 810,000 tokens of a Claude conversation: the summary request is cut to the window.
const long = [];
for (let i = 0; i < 400; i++) {
  long.push({ role: 'user', content: `q${i} ${'lorem ipsum dolor sit amet '.repeat(300)}` });
  long.push({ role: 'assistant', content: `ok ${i}` });
}
const chars = (sent) => sent.map((m) => m.reduce((n, x) => n + String(x.content).length, 0));

test('langchainSummarizer: the request is sized for the chat model it calls (gpt-4o, 128K), not the conversation\'s model (200K)', async () => {
  const sent = [];
  const summarize = langchainSummarizer(new NamedFake({ model: 'gpt-4o' }, sent), { stream: false });
  assert.equal(summarize.summaryModel, 'gpt-4o');
  await compactConversation(long, { model: 'claude-sonnet-4-5', summarize });
  // As if context.summaryModel named it.
  const named = [];
  await compactConversation(long, { model: 'claude-sonnet-4-5', summaryModel: 'gpt-4o', summarize: langchainSummarizer(new NamedFake({}, named), { stream: false }) });
  // Before: 707,792 characters (about 177,000 tokens) to a 128K model, which refuses them.
  assert.deepEqual(chars(sent), chars(named));
  assert.ok(chars(sent)[0] < 450_000, `${chars(sent)}`);
});

test('langchainSummarizer: summaryModel from modelName, initChatModel\'s default model, a withConfig / withRetry / withFallbacks wrapper; none without a name', () => {
  const sent = [];
  assert.equal(langchainSummarizer(new NamedFake({ modelName: 'claude-3-5-haiku-20241022' }, sent)).summaryModel, 'claude-3-5-haiku-20241022');
  assert.equal(langchainSummarizer(new NamedFake({ _defaultConfig: { model: 'gpt-4.1-mini', modelProvider: 'openai' } }, sent)).summaryModel, 'gpt-4.1-mini');
  const base = new NamedFake({ model: 'gpt-4o-mini' }, sent);
  assert.equal(langchainSummarizer(base.withConfig({ tags: ['compaction'] })).summaryModel, 'gpt-4o-mini');
  assert.equal(langchainSummarizer(base.withRetry({ stopAfterAttempt: 2 })).summaryModel, 'gpt-4o-mini');
  assert.equal(langchainSummarizer(base.withFallbacks([new NamedFake({ model: 'gpt-4.1' }, sent)])).summaryModel, 'gpt-4o-mini');
  const anonymous = langchainSummarizer(new NamedFake({}, sent));
  assert.equal(anonymous.summaryModel, undefined);
  assert.equal('summaryModel' in anonymous, false);
  // A getter that throws is no name (the summarizer is still made).
  const hostile = new NamedFake({}, sent);
  Object.defineProperty(hostile, 'model', { get() { throw new Error('no'); } });
  assert.equal(langchainSummarizer(hostile).summaryModel, undefined);
});

test('langchainSummarizer: context.summaryModel still wins over the chat model\'s', async () => {
  const sent = [];
  const named = [];
  await compactConversation(long, { model: 'claude-sonnet-4-5', summaryModel: 'claude-sonnet-4-5', summarize: langchainSummarizer(new NamedFake({ model: 'gpt-4o' }, sent), { stream: false }) });
  await compactConversation(long, { model: 'claude-sonnet-4-5', summarize: langchainSummarizer(new NamedFake({}, named), { stream: false }) });
  assert.deepEqual(chars(sent), chars(named));
});

/** A fetch answering every request with `status` and `body` (or never, until aborted). */
function answering(status, body, headers = {}) {
  return async (_url, init) => {
    if (status === 0) {
      return new Promise((_, reject) => init.signal.addEventListener('abort', () => reject(Object.assign(new Error('aborted'), { name: 'AbortError' }))));
    }
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
  };
}

function compactor(turns = 1) {
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer() });
  for (let i = 0; i < turns; i++) {
    c.push({ role: 'user', content: `question ${i} ${'x'.repeat(4000)}` });
    if (i + 1 < turns) c.push({ role: 'assistant', content: `answer ${i} ${'y'.repeat(4000)}` });
  }
  return c;
}

const request = { model: 'claude-sonnet-4-5', max_tokens: 100 };

test('runToolLoop: an error status of the SDK is PROVIDER_ERROR with its status, the SDK error as cause', async () => {
  errorCodes().includes('PROVIDER_ERROR') || assert.fail('errorCodes() lacks PROVIDER_ERROR');
  for (const [status, type] of [[529, 'overloaded_error'], [429, 'rate_limit_error'], [401, 'authentication_error']]) {
    const client = new Anthropic({ apiKey: 'k', maxRetries: 0, fetch: answering(status, { type: 'error', error: { type, message: type } }, { 'retry-after': '7' }) });
    // Before: the SDK's error as it was (OverloadedError, RateLimitError…), code undefined.
    await assert.rejects(runToolLoop({ client, compactor: compactor(), request }), (e) => {
      assert.equal(e.code, 'PROVIDER_ERROR', `${status}: ${e.code}`);
      assert.equal(e.name, 'ContextCompactionError');
      assert.equal(e.status, status);
      assert.ok(e.cause instanceof Anthropic.APIError, String(e.cause));
      assert.equal(e.cause.status, status);
      assert.equal(e.cause.headers.get('retry-after'), '7');
      return true;
    });
  }
});

test('runToolLoop: a request its signal aborted is ABORTED (as documented), streamed or not', async () => {
  for (const stream of [false, true]) {
    const client = new Anthropic({ apiKey: 'k', maxRetries: 0, fetch: answering(0) });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    // Before: APIUserAbortError ("Request was aborted."), code undefined.
    await assert.rejects(runToolLoop({ client, compactor: compactor(), request, stream, signal: controller.signal }), (e) => {
      assert.equal(e.code, 'ABORTED', `stream ${stream}: ${e.code} ${e.message}`);
      assert.ok(e.cause instanceof Anthropic.APIUserAbortError);
      return true;
    });
  }
});

test('runToolLoop: still too long after the reactive compaction is PROMPT_TOO_LONG with the SDK error as cause', async () => {
  let calls = 0;
  const tooLong = answering(400, { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' } });
  const client = new Anthropic({ apiKey: 'k', maxRetries: 0, fetch: (u, i) => ((calls += 1), tooLong(u, i)) });
  const c = compactor(12);
  const reasons = [];
  await assert.rejects(runToolLoop({ client, compactor: c, request, onCompaction: (_r, info) => reasons.push(info.reason) }), (e) => {
    assert.equal(e.code, 'PROMPT_TOO_LONG', `${e.code} ${e.message}`);
    assert.equal(e.status, 400);
    assert.ok(e.cause instanceof Anthropic.BadRequestError);
    return true;
  });
  assert.equal(calls, 2);
  assert.deepEqual(reasons, ['reactive']);
});

test('runToolLoop: what onText throws ends the loop as it is, not wrapped by the SDK or the loop', async () => {
  const sse = [
    { type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'x', content: [], stop_reason: null, usage: { input_tokens: 5, output_tokens: 0 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello' } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 1 } },
    { type: 'message_stop' },
  ].map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
  const client = new Anthropic({ apiKey: 'k', maxRetries: 0, fetch: async () => new Response(sse, { headers: { 'content-type': 'text/event-stream' } }) });
  const mine = new Error('mine');
  // Before: an AnthropicError of the SDK with `mine` as its cause.
  await assert.rejects(runToolLoop({ client, compactor: compactor(), request, stream: true, onText: () => { throw mine; } }), (e) => e === mine);
});

test('runChatToolLoop: an error status is PROVIDER_ERROR (the SDK error, with its own code, as cause); an abort is ABORTED', async () => {
  const client = new OpenAI({ apiKey: 'k', maxRetries: 0, fetch: answering(429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, { 'retry-after': '3' }) });
  const options = { client, summarize: offlineSummarizer(), messages: [{ role: 'user', content: 'hi' }], request: { model: 'gpt-4.1' } };
  // Before: RateLimitError whose `code` is the API's 'rate_limit_exceeded', not one of errorCodes().
  await assert.rejects(runChatToolLoop(options), (e) => {
    assert.equal(e.code, 'PROVIDER_ERROR');
    assert.equal(e.status, 429);
    assert.ok(e.cause instanceof OpenAI.RateLimitError);
    assert.equal(e.cause.code, 'rate_limit_exceeded');
    return true;
  });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 20);
  const hanging = new OpenAI({ apiKey: 'k', maxRetries: 0, fetch: answering(0) });
  await assert.rejects(runChatToolLoop({ ...options, client: hanging, signal: controller.signal }), (e) => e.code === 'ABORTED' && e.cause instanceof OpenAI.APIUserAbortError);
});
