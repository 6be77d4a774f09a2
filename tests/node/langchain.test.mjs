// langchainSummarizer (js/langchain.js) with LangChain's own fake chat models
// (@langchain/core/utils/testing: FakeListChatModel, FakeStreamingChatModel): invoke and stream,
// prompt-too-long errors as the OpenAI and Anthropic SDKs raise them (their real classes) and as
// Google's SDK words them, driving the library's retry through compactConversation; retries of
// 529/429/503, abort, timeouts, and option checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeListChatModel, FakeStreamingChatModel } from '@langchain/core/utils/testing';
import { AIMessageChunk } from '@langchain/core/messages';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { langchainSummarizer } from '../../js/langchain.js';
import { SummarizerError } from '../../js/summary-request.js';
import * as cc from '../../pkg/node.js';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const REQUEST = Object.freeze({
  model: 'claude-from-library',
  system: 'You summarize conversations.',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'First question.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'An answer.' }] },
    { role: 'user', content: 'Summarize this conversation.' },
  ],
  max_tokens: 20_000,
});

/**
 * A FakeListChatModel whose calls are recorded and may fail: `script(messages, n)` returns an
 * error to throw, or nothing to answer from the list.
 */
class ScriptedChatModel extends FakeListChatModel {
  constructor(fields, script = () => undefined) {
    super(fields);
    this.script = script;
    this.calls = [];
  }
  check(messages) {
    this.calls.push(messages);
    const e = this.script(messages, this.calls.length);
    if (e) throw e;
  }
  async _generate(messages, options, runManager) {
    this.check(messages);
    return super._generate(messages, options, runManager);
  }
  async *_streamResponseChunks(messages, options, runManager) {
    this.check(messages);
    yield* super._streamResponseChunks(messages, options, runManager);
  }
}

/** The prompt-too-long errors of three providers, as their SDKs raise them. */
const TOO_LONG = {
  openai: (actual, limit) =>
    OpenAI.APIError.generate(
      400,
      { error: { message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${actual} tokens. Please reduce the length of the messages.`, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } },
      undefined,
      new Headers({ 'x-request-id': 'req_1' }),
    ),
  anthropic: (actual, limit) =>
    Anthropic.APIError.generate(400, { type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${actual} tokens > ${limit} maximum` } }, undefined, new Headers({ 'request-id': 'req_2' })),
  google: (actual, limit) =>
    Object.assign(
      new Error(
        `[GoogleGenerativeAI Error]: Error fetching from https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse: [400 Bad Request] The input token count (${actual}) exceeds the maximum number of tokens allowed (${limit}).`,
      ),
      { name: 'GoogleGenerativeAIFetchError', status: 400, statusText: 'Bad Request' },
    ),
};

const overloaded = () => Anthropic.APIError.generate(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, undefined, new Headers({ 'retry-after-ms': '1' }));

async function rejection(fn) {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

const fast = { retryBaseMs: 1 };

test('invoke: plain {role, content} messages become LangChain messages; the answer is a Messages API body', async () => {
  const model = new ScriptedChatModel({ responses: ['<summary>S</summary>'] });
  const texts = [];
  const res = await langchainSummarizer(model, { stream: false })(REQUEST, { onText: (t) => texts.push(t) });
  assert.deepEqual(
    model.calls[0].map((m) => [m._getType(), m.content]),
    [
      ['system', 'You summarize conversations.'],
      ['human', 'First question.'],
      ['ai', 'An answer.'],
      ['human', 'Summarize this conversation.'],
    ],
  );
  assert.deepEqual(res.content, [{ type: 'text', text: '<summary>S</summary>' }]);
  assert.equal(res.stop_reason, 'end_turn');
  assert.deepEqual(texts, ['<summary>S</summary>']);
});

test('stream: every chunk reaches onText; the finish reason of the last chunk (length) is max_tokens', async () => {
  const model = new FakeListChatModel({ responses: ['Hello'], generationInfo: { finish_reason: 'length' } });
  const texts = [];
  const res = await langchainSummarizer(model)(REQUEST, { onText: (t) => texts.push(t) });
  assert.deepEqual(texts, ['H', 'e', 'l', 'l', 'o']);
  assert.equal(res.content[0].text, 'Hello');
  assert.equal(res.stop_reason, 'max_tokens');

  const chunks = new FakeStreamingChatModel({ chunks: [new AIMessageChunk({ content: 'Two ' }), new AIMessageChunk({ content: [{ type: 'text', text: 'blocks' }] })] });
  const seen = [];
  const r2 = await langchainSummarizer(chunks)(REQUEST, { onText: (t) => seen.push(t) });
  assert.deepEqual(seen, ['Two ', 'blocks']);
  assert.equal(r2.content[0].text, 'Two blocks');
});

for (const [provider, make] of Object.entries(TOO_LONG)) {
  for (const stream of [false, true]) {
    test(`${provider} prompt-too-long (${stream ? 'stream' : 'invoke'}): PROMPT_TOO_LONG, not retried, read by the library; compactConversation drops turns and succeeds`, async () => {
      const failing = new ScriptedChatModel({ responses: ['never'] }, () => make(210_000, 200_000));
      const err = await rejection(() => langchainSummarizer(failing, { stream, ...fast })(REQUEST));
      assert.ok(err instanceof SummarizerError);
      assert.equal(err.code, 'PROMPT_TOO_LONG');
      assert.equal(err.status, 400);
      assert.equal(err.retryable, false);
      assert.equal(failing.calls.length, 1);
      assert.ok(err.cause instanceof Error);
      const overflow = cc.parseContextOverflowError(err);
      assert.ok(overflow, 'the library reads it as a context overflow');
      assert.equal(overflow.gap, 10_000);

      const msgs = h.apiConversation({ rounds: 12 });
      const limit = Math.floor(h.requestTokens({ messages: msgs }) * 0.5);
      const sizes = [];
      const model = new ScriptedChatModel({ responses: ['<summary>\nThe user fixed the parser.\n</summary>'] }, (messages) => {
        const n = Math.ceil(JSON.stringify(messages.map((m) => m.content)).length / 4);
        sizes.push(n);
        return n > limit ? make(n, limit) : undefined;
      });
      const r = await cc.compactConversation(msgs, { model: h.SONNET, summarize: langchainSummarizer(model, { stream, ...fast }) }, {});
      assert.ok(r.ptlRetries >= 1 && r.ptlRetries <= 3, `ptlRetries ${r.ptlRetries}`);
      assert.equal(sizes.length, r.ptlRetries + 1);
      for (let i = 1; i < sizes.length; i++) assert.ok(sizes[i] < sizes[i - 1], `smaller each time: ${sizes}`);
      assert.match(JSON.stringify(r), /The user fixed the parser/);
    });
  }
}

test('retries: an overloaded 529 then an answer; always failing gives retriesExhausted; insufficient_quota is not retried', async () => {
  const flaky = new ScriptedChatModel({ responses: ['after a retry'] }, (_m, n) => (n === 1 ? overloaded() : undefined));
  const res = await langchainSummarizer(flaky, fast)(REQUEST);
  assert.equal(res.content[0].text, 'after a retry');
  assert.equal(flaky.calls.length, 2);

  const down = new ScriptedChatModel({ responses: ['never'] }, () =>
    OpenAI.APIError.generate(503, { error: { message: 'The server is overloaded or not ready yet.', type: 'server_error' } }, undefined, new Headers()),
  );
  const err = await rejection(() => langchainSummarizer(down, { ...fast, maxRetries: 2 })(REQUEST));
  assert.equal(err.code, 'PROVIDER_ERROR');
  assert.equal(err.status, 503);
  assert.equal(err.retriesExhausted, true);
  assert.equal(err.attempts, 3);
  assert.equal(down.calls.length, 3);

  const quota = new ScriptedChatModel({ responses: ['never'] }, () =>
    OpenAI.APIError.generate(429, { error: { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', code: 'insufficient_quota' } }, undefined, new Headers()),
  );
  const q = await rejection(() => langchainSummarizer(quota, fast)(REQUEST));
  assert.equal(q.retryable, false);
  assert.equal(q.retriesExhausted, true, 'the library is told not to retry a 429 of an exhausted quota');
  assert.equal(quota.calls.length, 1);

  const rate = new ScriptedChatModel({ responses: ['ok'] }, (_m, n) =>
    n === 1 ? OpenAI.APIError.generate(429, { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } }, undefined, new Headers({ 'retry-after-ms': '25' })) : undefined,
  );
  const start = performance.now();
  await langchainSummarizer(rate, { retryBaseMs: 10_000 })(REQUEST);
  assert.equal(rate.calls.length, 2);
  assert.ok(performance.now() - start < 5_000, 'retry-after-ms used instead of the backoff');
});

test('abort: before the call, and in the middle of a stream — AbortError coded ABORTED, no retry', async () => {
  const model = new ScriptedChatModel({ responses: ['abcdefghij'], sleep: 15 });
  const before = new AbortController();
  before.abort();
  const e0 = await rejection(() => langchainSummarizer(model)(REQUEST, { signal: before.signal }));
  assert.equal(e0.code, 'ABORTED');
  assert.equal(model.calls.length, 0);

  const ctl = new AbortController();
  const texts = [];
  const err = await rejection(() =>
    langchainSummarizer(model)(REQUEST, {
      signal: ctl.signal,
      onText: (t) => {
        texts.push(t);
        if (texts.length === 2) ctl.abort(new Error('user left'));
      },
    }),
  );
  assert.equal(err.name, 'AbortError');
  assert.equal(err.code, 'ABORTED');
  assert.equal(err.cause.message, 'user left');
  assert.ok(texts.length < 10, `stopped early: ${texts}`);
  assert.equal(model.calls.length, 1);
});

test('timeoutMs and idleTimeoutMs: TIMEOUT, transient, retried when nothing was delivered', async () => {
  const slow = new ScriptedChatModel({ responses: ['slow answer'], sleep: 500 });
  const err = await rejection(() => langchainSummarizer(slow, { stream: false, timeoutMs: 30, maxRetries: 1, ...fast })(REQUEST));
  assert.equal(err.code, 'TIMEOUT');
  assert.equal(err.retriesExhausted, true);
  assert.equal(slow.calls.length, 2);

  const stalling = new ScriptedChatModel({ responses: ['ab'] });
  stalling._streamResponseChunks = async function* (messages, options, runManager) {
    this.calls.push(messages);
    yield* FakeListChatModel.prototype._streamResponseChunks.call(this, messages, options, runManager);
    await new Promise(() => {});
  };
  const texts = [];
  const e2 = await rejection(() => langchainSummarizer(stalling, { idleTimeoutMs: 40 })(REQUEST, { onText: (t) => texts.push(t) }));
  assert.equal(e2.code, 'TIMEOUT');
  assert.match(e2.message, /no data for 40 ms/);
  assert.deepEqual(texts, ['a', 'b']);
  assert.equal(stalling.calls.length, 1, 'text already reached onText: not retried');
});

test("an exception of the caller's onText passes through untouched", async () => {
  const model = new FakeListChatModel({ responses: ['text'] });
  const mine = new Error('my progress bar broke');
  const err = await rejection(() =>
    langchainSummarizer(model)(REQUEST, {
      onText: () => {
        throw mine;
      },
    }),
  );
  assert.equal(err, mine);
});

test('bad arguments throw INVALID_ARGUMENT when the summarizer is made', () => {
  const model = new FakeListChatModel({ responses: ['x'] });
  const bad = (fn, re) => assert.throws(fn, (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT' && re.test(e.message));
  bad(() => langchainSummarizer({}), /chatModel must be a LangChain chat model/);
  bad(() => langchainSummarizer(model, { maxRetry: 2 }), /options\.maxRetry is not an option/);
  bad(() => langchainSummarizer(model, { timeoutMS: 2 }), /did you mean `timeoutMs`/);
  bad(() => langchainSummarizer(model, { callOptions: 'x' }), /callOptions must be an object/);
  bad(() => langchainSummarizer(model, { idleTimeoutMs: -1 }), /idleTimeoutMs must be a non-negative number/);
});
