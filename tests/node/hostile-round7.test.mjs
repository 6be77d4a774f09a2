// Seventh round of hostile inputs: answers that never stop growing. The Anthropic and OpenAI
// summarizers already refuse a streamed answer past MAX_SUMMARY_TEXT; the LangChain and AI SDK
// summarizers added up their SDKs' streams without a cap, and LangChain kept every chunk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeStreamingChatModel, FakeListChatModel } from '@langchain/core/utils/testing';
import { AIMessageChunk, AIMessage } from '@langchain/core/messages';
import { langchainSummarizer } from '../../js/langchain.js';
import { aiSdkSummarizer } from '../../js/ai-sdk.js';
import { MAX_SUMMARY_TEXT } from '../../js/http.js';

const REQUEST = Object.freeze({
  model: 'claude-from-library',
  system: 'You summarize conversations.',
  messages: [{ role: 'user', content: 'Summarize this conversation.' }],
  max_tokens: 20_000,
});

const MIB = 'x'.repeat(1 << 20);
// 20 MiB in all: past the cap, yet finite, so a summarizer without the cap answers (and fails the test).
const PIECES = 20;

test('langchainSummarizer: a stream longer than MAX_SUMMARY_TEXT is INVALID_RESPONSE, stopped at the cap, not retried', async () => {
  let pulled = 0;
  const model = new FakeStreamingChatModel({ chunks: [] });
  let calls = 0;
  model.stream = async () => {
    calls += 1;
    return (async function* () {
      for (let i = 0; i < PIECES; i += 1) {
        pulled += 1;
        yield new AIMessageChunk({ content: MIB });
      }
    })();
  };
  const err = await langchainSummarizer(model, { maxRetries: 3 })(REQUEST).then(
    () => assert.fail('the oversized answer was accepted'),
    (e) => e,
  );
  assert.equal(err.code, 'INVALID_RESPONSE', err.message);
  assert.match(err.message, /longer than 16777216 code units/);
  assert.equal(calls, 1, 'not retried');
  assert.equal(pulled, MAX_SUMMARY_TEXT / MIB.length + 1, 'stopped at the first chunk past the cap');
});

test('langchainSummarizer: invoke answering more than MAX_SUMMARY_TEXT is INVALID_RESPONSE', async () => {
  const model = new FakeListChatModel({ responses: ['unused'] });
  model.invoke = async () => new AIMessage({ content: MIB.repeat(17) });
  const err = await langchainSummarizer(model, { stream: false })(REQUEST).then(
    () => assert.fail('accepted'),
    (e) => e,
  );
  assert.equal(err.code, 'INVALID_RESPONSE');
});

test('langchainSummarizer: usage and the finish reason are still read from a long stream of chunks', async () => {
  const chunks = [];
  for (let i = 0; i < 5000; i += 1) chunks.push(new AIMessageChunk({ content: 'a' }));
  chunks.push(
    new AIMessageChunk({
      content: '',
      response_metadata: { finish_reason: 'length', model_name: 'm-1' },
      usage_metadata: { input_tokens: 120, output_tokens: 5000, total_tokens: 5120, input_token_details: { cache_read: 20 } },
    }),
  );
  const model = new FakeStreamingChatModel({ chunks: [] });
  model.stream = async () => (async function* () {
    yield* chunks;
  })();
  const res = await langchainSummarizer(model)(REQUEST);
  assert.equal(res.content[0].text.length, 5000);
  assert.equal(res.stop_reason, 'max_tokens');
  assert.equal(res.model, 'm-1');
  assert.deepEqual(
    { i: res.usage.input_tokens, o: res.usage.output_tokens, r: res.usage.cache_read_input_tokens },
    { i: 100, o: 5000, r: 20 },
  );
});

test('aiSdkSummarizer: a streamText answer longer than MAX_SUMMARY_TEXT is INVALID_RESPONSE, stopped at the cap, not retried', async () => {
  let pulled = 0;
  let calls = 0;
  const streamText = () => {
    calls += 1;
    return {
      fullStream: (async function* () {
        for (let i = 0; i < PIECES; i += 1) {
          pulled += 1;
          yield { type: 'text-delta', id: '0', text: MIB };
        }
        yield { type: 'finish', finishReason: 'stop', totalUsage: { inputTokens: 1, outputTokens: 1 } };
      })(),
      response: Promise.resolve({ id: 'r', modelId: 'm' }),
    };
  };
  const model = { specificationVersion: 'v2', provider: 'fake', modelId: 'fake-model', doGenerate() {}, doStream() {} };
  const err = await aiSdkSummarizer(model, { streamText, maxRetries: 3 })(REQUEST).then(
    () => assert.fail('the oversized answer was accepted'),
    (e) => e,
  );
  assert.equal(err.code, 'INVALID_RESPONSE', err.message);
  assert.equal(calls, 1, 'not retried');
  assert.equal(pulled, MAX_SUMMARY_TEXT / MIB.length + 1);
});

test('aiSdkSummarizer: generateText answering more than MAX_SUMMARY_TEXT is INVALID_RESPONSE', async () => {
  const generateText = async () => ({ text: MIB.repeat(17), finishReason: 'stop', usage: {} });
  const model = { specificationVersion: 'v2', provider: 'fake', modelId: 'fake-model', doGenerate() {}, doStream() {} };
  const err = await aiSdkSummarizer(model, { stream: false, generateText })(REQUEST).then(
    () => assert.fail('accepted'),
    (e) => e,
  );
  assert.equal(err.code, 'INVALID_RESPONSE');
});
