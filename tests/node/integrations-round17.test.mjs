// Round 17, integrations: what the summarizers make of each provider's answer as the real SDKs
// deliver it. LangChain chat models that report a cut-off answer where langchainSummarizer did
// not look (ChatAnthropic's streamed `stop_reason`, the Responses API's `status: 'incomplete'`,
// Claude's `model_context_window_exceeded`); prompt-too-long wordings of xAI and llama.cpp's
// server; a Responses API refusal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { spawnSync } from 'node:child_process';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, AIMessageChunk } from '@langchain/core/messages';
import { ChatGenerationChunk } from '@langchain/core/outputs';
import { MockLanguageModelV3 } from 'ai/test';
import { streamText, generateText, APICallError } from 'ai';
import * as cc from '../../pkg/node.js';
import { aiSdkSummarizer } from '../../pkg/ai-sdk.js';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const REQUEST = Object.freeze({
  model: 'claude-from-library',
  system: 'You summarize conversations.',
  messages: [{ role: 'user', content: 'Summarize this conversation.' }],
  max_tokens: 20_000,
});

/**
 * A chat model whose chunks and messages are those @langchain/anthropic's ChatAnthropic makes
 * (utils/message_outputs.ts): streamed, the `message_delta` event's `stop_reason` lands in the
 * chunk's `additional_kwargs`; invoked, the whole message but its content is `response_metadata`.
 */
class AnthropicLike extends BaseChatModel {
  constructor(stopReason, text = '<summary>\nThe user fixed the parser and') {
    super({});
    this.stopReason = stopReason;
    this.text = text;
  }
  _llmType() {
    return 'anthropic';
  }
  async _generate() {
    const message = new AIMessage({
      content: this.text,
      response_metadata: { id: 'msg_1', model: 'claude-sonnet-4-5', type: 'message', role: 'assistant', stop_reason: this.stopReason, stop_sequence: null, usage: { input_tokens: 90, output_tokens: 7 }, model_provider: 'anthropic' },
      usage_metadata: { input_tokens: 90, output_tokens: 7, total_tokens: 97 },
    });
    return { generations: [{ text: this.text, message }] };
  }
  async *_streamResponseChunks() {
    yield new ChatGenerationChunk({
      text: '',
      message: new AIMessageChunk({ content: '', id: 'msg_1', additional_kwargs: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5' }, usage_metadata: { input_tokens: 90, output_tokens: 0, total_tokens: 90 }, response_metadata: { model_provider: 'anthropic', usage: {} } }),
    });
    yield new ChatGenerationChunk({ text: this.text, message: new AIMessageChunk({ content: this.text, response_metadata: { model_provider: 'anthropic' } }) });
    yield new ChatGenerationChunk({
      text: '',
      message: new AIMessageChunk({ content: '', additional_kwargs: { stop_reason: this.stopReason, stop_sequence: null }, usage_metadata: { input_tokens: 0, output_tokens: 7, total_tokens: 7 }, response_metadata: {} }),
    });
  }
}

/** ChatOpenAI with `useResponsesApi`, invoked: an incomplete response (@langchain/openai converters/responses.ts). */
class ResponsesLike extends BaseChatModel {
  constructor(reason) {
    super({});
    this.reason = reason;
  }
  _llmType() {
    return 'openai';
  }
  async _generate() {
    const message = new AIMessage({
      content: [{ type: 'text', text: '<summary>\nThe user fixed', annotations: [] }],
      response_metadata: { model_provider: 'openai', model: 'gpt-5', id: 'resp_1', incomplete_details: { reason: this.reason }, status: 'incomplete', object: 'response', model_name: 'gpt-5' },
      usage_metadata: { input_tokens: 90, output_tokens: 7, total_tokens: 97 },
    });
    return { generations: [{ text: '', message }] };
  }
}

async function rejection(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('expected a rejection');
}

test('langchainSummarizer: ChatAnthropic cut at max_tokens, streamed or invoked, is max_tokens; the compaction is refused (SUMMARY_TRUNCATED)', async () => {
  for (const stream of [true, false]) {
    const summarize = cc.langchainSummarizer(new AnthropicLike('max_tokens'), { stream });
    const r = await summarize(REQUEST);
    assert.equal(r.stop_reason, 'max_tokens', `stream: ${stream}`);
    assert.equal(r.usage.input_tokens, 90);
    const msgs = h.apiConversation({ rounds: 6 });
    const before = JSON.stringify(msgs);
    const e = await rejection(cc.compactConversation(msgs, { model: h.SONNET, summarize }));
    assert.equal(e.code, 'SUMMARY_TRUNCATED', `stream: ${stream}: ${e.message}`);
    assert.equal(JSON.stringify(msgs), before);
  }
});

test("langchainSummarizer: Claude's model_context_window_exceeded (streamed or invoked) is a reply stopped before its end", async () => {
  for (const stream of [true, false]) {
    const summarize = cc.langchainSummarizer(new AnthropicLike('model_context_window_exceeded'), { stream });
    const r = await summarize(REQUEST);
    assert.equal(r.stop_reason, 'model_context_window_exceeded', `stream: ${stream}`);
    const e = await rejection(cc.compactConversation(h.apiConversation({ rounds: 6 }), { model: h.SONNET, summarize }));
    assert.match(e.code, /SUMMARY_TRUNCATED|SUMMARIZER_FAILED|EMPTY_SUMMARY/);
    assert.match(e.message, /model_context_window_exceeded/);
  }
});

test('langchainSummarizer: a Responses API answer left incomplete (ChatOpenAI useResponsesApi) is max_tokens, or refusal for a content filter', async () => {
  const cut = await cc.langchainSummarizer(new ResponsesLike('max_output_tokens'), { stream: false })(REQUEST);
  assert.equal(cut.stop_reason, 'max_tokens');
  const filtered = await cc.langchainSummarizer(new ResponsesLike('content_filter'), { stream: false })(REQUEST);
  assert.equal(filtered.stop_reason, 'refusal');
});

test('langchainSummarizer: a complete ChatAnthropic answer stays end_turn', async () => {
  for (const stream of [true, false]) {
    const r = await cc.langchainSummarizer(new AnthropicLike('end_turn', '<summary>\nDone.\n</summary>'), { stream })(REQUEST);
    assert.equal(r.stop_reason, 'end_turn');
    assert.equal(r.content[0].text, '<summary>\nDone.\n</summary>');
  }
});

const XAI = "This model's maximum prompt length is 131072 but the request contains 537812 tokens.";
const LLAMA_CPP = 'request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it';

test('parseContextOverflowError: xAI and llama.cpp server wordings, with their numbers', () => {
  const xai = cc.parseContextOverflowError(XAI, 400);
  assert.ok(xai, 'xAI recognised');
  assert.equal(xai.actual, 537_812);
  assert.equal(xai.limit, 131_072);
  assert.equal(xai.gap, 537_812 - 131_072);
  const llama = cc.parseContextOverflowError(LLAMA_CPP, 400);
  assert.ok(llama, 'llama.cpp recognised');
  assert.equal(llama.gap, 808);
  // Its JSON body, as an SDK error carries it.
  const body = { error: { code: 400, message: 'the request exceeds the available context size, try increasing it', type: 'exceed_context_size_error', n_prompt_tokens: 9000, n_ctx: 8192 } };
  const fromBody = cc.parseContextOverflowError(body);
  assert.ok(fromBody, 'llama.cpp body recognised');
});

test('aiSdkSummarizer: an xAI prompt-too-long is PROMPT_TOO_LONG (not retried by the SDK)', async () => {
  let calls = 0;
  const model = new MockLanguageModelV3({
    doStream: async () => {
      calls++;
      throw new APICallError({ message: XAI, url: 'https://api.x.ai/v1/chat/completions', requestBodyValues: {}, statusCode: 400, responseBody: JSON.stringify({ code: 'Client specified an invalid argument', error: XAI }), isRetryable: false });
    },
  });
  const e = await rejection(aiSdkSummarizer(model, { streamText, generateText })(REQUEST));
  assert.equal(e.code, 'PROMPT_TOO_LONG');
  assert.equal(calls, 1);
});

/** An OpenAI-compatible server: each request gets the next answer. */
async function chatServer(answers) {
  const requests = [];
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const c of req) body += c;
    requests.push(JSON.parse(body));
    const [status, json] = answers[Math.min(requests.length - 1, answers.length - 1)];
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(json));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/v1`, requests, close: () => new Promise((r) => server.close(r)) };
}

const chatAnswer = (text) => ({ id: 'c1', object: 'chat.completion', model: 'grok-4', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 5 } });

for (const [name, words] of [['xAI', XAI], ['llama.cpp', LLAMA_CPP]]) {
  test(`openaiSummarizer + compactConversation: ${name}'s prompt-too-long drops the oldest turns and asks again`, async () => {
    const api = await chatServer([
      [400, { code: 'Client specified an invalid argument', error: { message: words, type: 'invalid_request_error' } }],
      [200, chatAnswer('<summary>\nThe user fixed the parser.\n</summary>')],
    ]);
    try {
      const summarize = cc.openaiSummarizer({ baseURL: api.url, model: 'grok-4', stream: false, maxRetries: 0 });
      const msgs = h.apiConversation({ rounds: 12 });
      const result = await cc.compactConversation(msgs, { model: h.SONNET, summarize });
      assert.equal(api.requests.length, 2);
      assert.ok(api.requests[1].messages.length < api.requests[0].messages.length || JSON.stringify(api.requests[1]).length < JSON.stringify(api.requests[0]).length);
      assert.match(result.summary, /fixed the parser/);
    } finally {
      await api.close();
    }
  });
}

test('openaiSummarizer (Responses API): a refusal is stop_reason refusal, not an empty summary', async () => {
  const api = await chatServer([
    [200, { id: 'resp_1', object: 'response', status: 'completed', model: 'gpt-5', output: [{ type: 'message', id: 'm1', role: 'assistant', status: 'completed', content: [{ type: 'refusal', refusal: "I can't help with that." }] }], usage: { input_tokens: 10, output_tokens: 5 } }],
  ]);
  try {
    const summarize = cc.openaiSummarizer({ baseURL: api.url, model: 'gpt-5', api: 'responses', stream: false, maxRetries: 0 });
    const r = await summarize(REQUEST);
    assert.equal(r.stop_reason, 'refusal');
  } finally {
    await api.close();
  }
});

const PKG_URL = new URL('../../pkg/node.js', import.meta.url).href;

/** Runs an ES module script in a fresh Node process; its last stdout line is JSON. */
function fresh(script) {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

test('node entry: a .wasm the runtime refuses to read (Deno without --allow-read: NotCapable, no code) is NOT_INITIALIZED at import', () => {
  const out = fresh(`
    import fs from 'node:fs';
    import { syncBuiltinESMExports } from 'node:module';
    const read = fs.readFileSync;
    fs.readFileSync = function (p, ...rest) {
      if (String(p).endsWith('context_compaction_bg.wasm')) {
        const e = new Error('Requires read access to "' + p + '", run again with the --allow-read flag');
        e.name = 'NotCapable';
        throw e;
      }
      return read.call(this, p, ...rest);
    };
    syncBuiltinESMExports();
    try {
      await import(${JSON.stringify(PKG_URL)});
      console.log(JSON.stringify({ imported: true }));
    } catch (e) {
      console.log(JSON.stringify({ code: e.code, message: e.message, cause: e.cause?.name, isError: e instanceof Error }));
    }
  `);
  assert.equal(out.code, 'NOT_INITIALIZED', JSON.stringify(out));
  assert.equal(out.isError, true);
  assert.equal(out.cause, 'NotCapable');
  assert.match(out.message, /--allow-read/);
  assert.match(out.message, /context-compaction\/inline/);
});

test('summarizers where reading the environment is refused (Deno without --allow-env): no key is MISSING_API_KEY, a given key works', () => {
  const out = fresh(`
    const refuse = (k) => { const e = new Error('Requires env access to "' + String(k) + '", run again with the --allow-env flag'); e.name = 'NotCapable'; throw e; };
    process.env = new Proxy({}, { get: (t, k) => (typeof k === 'string' && /^(ANTHROPIC|OPENAI)_/.test(k) ? refuse(k) : undefined) });
    const cc = await import(${JSON.stringify(PKG_URL)});
    const code = (f) => { try { f(); return 'made'; } catch (e) { return e.code; } };
    console.log(JSON.stringify({
      anthropic: code(() => cc.anthropicSummarizer()),
      openai: code(() => cc.openaiSummarizer({ model: 'gpt-4.1' })),
      anthropicWithKey: code(() => cc.anthropicSummarizer({ apiKey: 'k' })),
      openaiWithKey: code(() => cc.openaiSummarizer({ model: 'gpt-4.1', apiKey: 'k' })),
    }));
  `);
  assert.deepEqual(out, { anthropic: 'MISSING_API_KEY', openai: 'MISSING_API_KEY', anthropicWithKey: 'made', openaiWithKey: 'made' });
});
