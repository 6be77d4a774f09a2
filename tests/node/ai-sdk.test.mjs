// aiSdkSummarizer (js/ai-sdk.js) with the AI SDK's own mock language model (`ai/test`
// MockLanguageModelV3, simulateReadableStream): generateText and streamText, the functions passed
// in or imported from 'ai', prompt-too-long errors in the Anthropic, OpenAI and Google providers'
// words driving the library's retry through compactConversation, the SDK's retries, abort and
// timeouts, and option checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, streamText, APICallError } from 'ai';
import { MockLanguageModelV3, simulateReadableStream } from 'ai/test';
import { aiSdkSummarizer } from '../../js/ai-sdk.js';
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

const USAGE = { inputTokens: { total: 1000, noCache: 900, cacheRead: 100, cacheWrite: 0 }, outputTokens: { total: 50, text: 50, reasoning: 0 } };
const finish = (unified = 'stop') => ({ unified, raw: unified });

/** A V3 generate result with `text`. */
const generated = (text, reason = 'stop') => ({ content: [{ type: 'text', text }], finishReason: finish(reason), usage: USAGE, warnings: [] });

/** A V3 stream of `pieces`, then finish. */
function streamed(pieces, o = {}) {
  return {
    stream: simulateReadableStream({
      chunkDelayInMs: o.delayMs ?? null,
      chunks: [
        { type: 'stream-start', warnings: [] },
        { type: 'text-start', id: 't' },
        ...pieces.map((delta) => ({ type: 'text-delta', id: 't', delta })),
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: finish(o.reason ?? 'stop'), usage: USAGE },
      ],
    }),
  };
}

/** An APICallError as the providers raise it for an HTTP error answer. */
function apiCallError(status, message, body, o = {}) {
  return new APICallError({
    message,
    url: 'https://api.example.test/v1/x',
    requestBodyValues: {},
    statusCode: status,
    responseHeaders: o.headers ?? {},
    responseBody: JSON.stringify(body),
    isRetryable: o.retryable ?? (status === 429 || status >= 500),
  });
}

/** The prompt-too-long errors of three providers, in their real words and bodies. */
const TOO_LONG = {
  anthropic: (actual, limit) =>
    apiCallError(400, `prompt is too long: ${actual} tokens > ${limit} maximum`, { type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${actual} tokens > ${limit} maximum` } }),
  openai: (actual, limit) => {
    const message = `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${actual} tokens. Please reduce the length of the messages.`;
    return apiCallError(400, message, { error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } });
  },
  google: (actual, limit) => {
    const message = `The input token count (${actual}) exceeds the maximum number of tokens allowed (${limit}).`;
    return apiCallError(400, message, { error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
  },
};

async function rejection(fn) {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

test('generateText: system and messages reach the model; the answer is a Messages API body', async () => {
  const model = new MockLanguageModelV3({ doGenerate: async () => generated('<summary>S</summary>') });
  const texts = [];
  const res = await aiSdkSummarizer(model, { generateText, stream: false, maxOutputTokens: 8_000 })(REQUEST, { onText: (t) => texts.push(t) });
  const [call] = model.doGenerateCalls;
  assert.deepEqual(call.prompt.map((m) => [m.role, typeof m.content === 'string' ? m.content : m.content.map((p) => p.text).join('')]), [
    ['system', 'You summarize conversations.'],
    ['user', 'First question.'],
    ['assistant', 'An answer.'],
    ['user', 'Summarize this conversation.'],
  ]);
  assert.equal(call.maxOutputTokens, 8_000, 'the smaller of the request and the option');
  assert.deepEqual(res.content, [{ type: 'text', text: '<summary>S</summary>' }]);
  assert.equal(res.stop_reason, 'end_turn');
  assert.deepEqual(res.usage, { input_tokens: 900, output_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 100 });
  assert.equal(res.model, 'mock-model-id');
  assert.deepEqual(texts, ['<summary>S</summary>']);
});

test("streamText: deltas reach onText; 'length' is max_tokens; 'ai' imported when no function is passed", async () => {
  const model = new MockLanguageModelV3({ doStream: async () => streamed(['Hel', 'lo ', 'world'], { reason: 'length' }) });
  const texts = [];
  const res = await aiSdkSummarizer(model, { streamText })(REQUEST, { onText: (t) => texts.push(t) });
  assert.deepEqual(texts, ['Hel', 'lo ', 'world']);
  assert.equal(res.content[0].text, 'Hello world');
  assert.equal(res.stop_reason, 'max_tokens');
  assert.equal(model.doStreamCalls[0].maxOutputTokens, 20_000);
  const imported = await aiSdkSummarizer(new MockLanguageModelV3({ doStream: async () => streamed(['from ', 'import']) }))(REQUEST);
  assert.equal(imported.content[0].text, 'from import');
});

for (const [provider, make] of Object.entries(TOO_LONG)) {
  for (const stream of [false, true]) {
    test(`${provider} prompt-too-long (${stream ? 'streamText' : 'generateText'}): PROMPT_TOO_LONG, read by the library; compactConversation drops turns and succeeds`, async () => {
      const failing = new MockLanguageModelV3({
        doGenerate: async () => {
          throw make(210_000, 200_000);
        },
        doStream: async () => {
          throw make(210_000, 200_000);
        },
      });
      const err = await rejection(() => aiSdkSummarizer(failing, { generateText, streamText, stream })(REQUEST));
      assert.ok(err instanceof SummarizerError);
      assert.equal(err.code, 'PROMPT_TOO_LONG');
      assert.equal(err.status, 400);
      assert.equal(err.retryable, false);
      assert.equal(failing[stream ? 'doStreamCalls' : 'doGenerateCalls'].length, 1, 'not retried by the SDK');
      const overflow = cc.parseContextOverflowError(err);
      assert.ok(overflow, 'the library reads it as a context overflow');
      assert.equal(overflow.gap, 10_000);

      // Through the library: a model that refuses prompts over half the conversation.
      const msgs = h.apiConversation({ rounds: 12 });
      const limit = Math.floor(h.requestTokens({ messages: msgs }) * 0.5);
      const sizes = [];
      const answer = (options) => {
        const n = Math.ceil(JSON.stringify(options.prompt).length / 4);
        sizes.push(n);
        if (n > limit) throw make(n, limit);
      };
      const model = new MockLanguageModelV3({
        doGenerate: async (options) => (answer(options), generated('<summary>\nThe user fixed the parser.\n</summary>')),
        doStream: async (options) => (answer(options), streamed(['<summary>\nThe user ', 'fixed the parser.\n</summary>'])),
      });
      const r = await cc.compactConversation(msgs, { model: h.SONNET, summarize: aiSdkSummarizer(model, { generateText, streamText, stream }) }, {});
      assert.ok(r.ptlRetries >= 1 && r.ptlRetries <= 3, `ptlRetries ${r.ptlRetries}`);
      assert.equal(sizes.length, r.ptlRetries + 1);
      for (let i = 1; i < sizes.length; i++) assert.ok(sizes[i] < sizes[i - 1], `smaller each time: ${sizes}`);
      assert.match(JSON.stringify(r), /The user fixed the parser/);
    });
  }
}

test("the SDK's retries: a 529 then an answer; retries used up give retriesExhausted with the last status", async () => {
  let n = 0;
  const flaky = new MockLanguageModelV3({
    doGenerate: async () => {
      n++;
      if (n === 1) throw apiCallError(529, 'Overloaded', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, { headers: { 'retry-after-ms': '1' } });
      return generated('after a retry');
    },
  });
  const res = await aiSdkSummarizer(flaky, { generateText, stream: false })(REQUEST);
  assert.equal(res.content[0].text, 'after a retry');
  assert.equal(flaky.doGenerateCalls.length, 2);

  const down = new MockLanguageModelV3({
    doStream: async () => {
      throw apiCallError(503, 'Service Unavailable', { error: { message: 'Service Unavailable', type: 'server_error' } }, { headers: { 'retry-after-ms': '1' } });
    },
  });
  const err = await rejection(() => aiSdkSummarizer(down, { streamText, maxRetries: 2 })(REQUEST));
  assert.equal(err.code, 'PROVIDER_ERROR');
  assert.equal(err.status, 503);
  assert.equal(err.retriesExhausted, true, 'the library will not retry again');
  assert.equal(err.attempts, 3);
  assert.equal(down.doStreamCalls.length, 3);
  assert.deepEqual(err.error, { error: { message: 'Service Unavailable', type: 'server_error' } });

  const once = new MockLanguageModelV3({
    doGenerate: async () => {
      throw apiCallError(429, 'Rate limit reached', { error: { message: 'Rate limit reached', code: 'rate_limit_exceeded' } }, { headers: { 'retry-after': '2' } });
    },
  });
  const e2 = await rejection(() => aiSdkSummarizer(once, { generateText, stream: false, maxRetries: 0 })(REQUEST));
  assert.equal(e2.retryable, true, 'left to the library to retry');
  assert.equal(e2.retriesExhausted, false);
  assert.equal(e2.retryAfterMs, 2_000);
});

test('a 429 of an exhausted quota: not retryable, and the library is told not to retry', async () => {
  const broke = new MockLanguageModelV3({
    doGenerate: async () => {
      throw apiCallError(429, 'You exceeded your current quota, please check your plan and billing details.', { error: { message: 'You exceeded your current quota', type: 'insufficient_quota', code: 'insufficient_quota' } });
    },
  });
  const err = await rejection(() => aiSdkSummarizer(broke, { generateText, stream: false, maxRetries: 0 })(REQUEST));
  assert.equal(err.code, 'PROVIDER_ERROR');
  assert.equal(err.status, 429);
  assert.equal(err.retryable, false);
  assert.equal(err.retriesExhausted, true);
});

test('a failure without a status (fetch failed) is a NETWORK_ERROR', async () => {
  const offline = new MockLanguageModelV3({
    doGenerate: async () => {
      throw new APICallError({ message: 'Cannot connect to API: fetch failed', url: 'https://x.test', requestBodyValues: {}, isRetryable: true, cause: new TypeError('fetch failed') });
    },
  });
  const err = await rejection(() => aiSdkSummarizer(offline, { generateText, stream: false, maxRetries: 0 })(REQUEST));
  assert.equal(err.code, 'NETWORK_ERROR');
  assert.equal(err.retryable, true);
});

test('abort: before the call, and in the middle of a stream — AbortError coded ABORTED', async () => {
  const model = new MockLanguageModelV3({ doStream: async () => streamed(['a', 'b', 'c', 'd', 'e', 'f'], { delayMs: 30 }) });
  const before = new AbortController();
  before.abort();
  const e0 = await rejection(() => aiSdkSummarizer(model, { streamText })(REQUEST, { signal: before.signal }));
  assert.equal(e0.code, 'ABORTED');
  assert.equal(model.doStreamCalls.length, 0);

  const ctl = new AbortController();
  const texts = [];
  const p = aiSdkSummarizer(model, { streamText })(REQUEST, {
    signal: ctl.signal,
    onText: (t) => {
      texts.push(t);
      if (texts.length === 2) ctl.abort(new Error('user left'));
    },
  });
  const err = await rejection(() => p);
  assert.equal(err.name, 'AbortError');
  assert.equal(err.code, 'ABORTED');
  assert.ok(texts.length < 6, `stopped early: ${texts}`);

  const hanging = new MockLanguageModelV3({ doGenerate: () => new Promise(() => {}) });
  const ctl2 = new AbortController();
  setTimeout(() => ctl2.abort(), 20);
  const e2 = await rejection(() => aiSdkSummarizer(hanging, { generateText, stream: false })(REQUEST, { signal: ctl2.signal }));
  assert.equal(e2.code, 'ABORTED', 'even when the model ignores the signal');
});

test('timeoutMs and idleTimeoutMs: TIMEOUT, transient', async () => {
  const hanging = new MockLanguageModelV3({ doGenerate: () => new Promise(() => {}) });
  const err = await rejection(() => aiSdkSummarizer(hanging, { generateText, stream: false, timeoutMs: 30 })(REQUEST));
  assert.equal(err.code, 'TIMEOUT');
  assert.equal(err.retryable, true);
  assert.notEqual(err.name, 'AbortError');

  const stalled = new MockLanguageModelV3({
    doStream: async () => ({
      stream: new ReadableStream({
        start(c) {
          c.enqueue({ type: 'stream-start', warnings: [] });
          c.enqueue({ type: 'text-start', id: 't' });
          c.enqueue({ type: 'text-delta', id: 't', delta: 'first' });
        },
      }),
    }),
  });
  const texts = [];
  const e2 = await rejection(() => aiSdkSummarizer(stalled, { streamText, idleTimeoutMs: 40 })(REQUEST, { onText: (t) => texts.push(t) }));
  assert.equal(e2.code, 'TIMEOUT');
  assert.match(e2.message, /no data for 40 ms/);
  assert.deepEqual(texts, ['first']);
});

test('bad arguments throw INVALID_ARGUMENT when the summarizer is made', () => {
  const model = new MockLanguageModelV3({});
  const bad = (fn, re) => assert.throws(fn, (e) => e instanceof TypeError && e.code === 'INVALID_ARGUMENT' && re.test(e.message));
  bad(() => aiSdkSummarizer(undefined), /model must be an AI SDK language model/);
  bad(() => aiSdkSummarizer(model, { generateTxt: generateText }), /options\.generateTxt is not an option \(did you mean `generateText`\?\)/);
  bad(() => aiSdkSummarizer(model, { streamText: 'streamText' }), /streamText must be the function/);
  bad(() => aiSdkSummarizer(model, { maxRetries: 1.5 }), /maxRetries must be an integer/);
  bad(() => aiSdkSummarizer(model, { providerOptions: 3 }), /providerOptions must be an object/);
  assert.equal(typeof aiSdkSummarizer('openai/gpt-4.1-mini'), 'function', 'a gateway model id');
});

test('callSettings and providerOptions reach the model', async () => {
  const model = new MockLanguageModelV3({ doGenerate: async () => generated('ok') });
  await aiSdkSummarizer(model, { generateText, stream: false, callSettings: { temperature: 0 }, providerOptions: { openai: { reasoningEffort: 'low' } }, headers: { 'x-team': 'a' } })(REQUEST);
  const [call] = model.doGenerateCalls;
  assert.equal(call.temperature, 0);
  assert.deepEqual(call.providerOptions, { openai: { reasoningEffort: 'low' } });
  assert.equal(call.headers['x-team'], 'a');
});
