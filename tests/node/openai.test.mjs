// openaiSummarizer (js/openai.js) against a local fake OpenAI API (tests/fake-api/server.mjs
// answering in OpenAI's wire format): Chat Completions and Responses, streamed and not, the
// real-shaped context_length_exceeded error driving the library's prompt-too-long retry through
// compactConversation, 429/500/503 retries, abort, timeouts and option checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openaiSummarizer, OpenAiApiError, rateLimitReset } from '../../js/openai.js';
import { startFakeApi, reply } from '../fake-api/server.mjs';
import * as cc from '../../pkg/node.js';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const REQUEST = Object.freeze({
  model: 'claude-from-library',
  system: 'You summarize conversations.',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'First question.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'An answer.' }, { type: 'text', text: 'More.' }] },
    { role: 'user', content: 'Summarize this conversation.' },
  ],
  max_tokens: 20_000,
});

// ---- The fake OpenAI API ----------------------------------------------------------------------

/** A Chat Completions body. */
function chatBody(text, o = {}) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1,
    model: o.model ?? 'gpt-fake',
    choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: o.finish ?? 'stop' }],
    usage: { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280, prompt_tokens_details: { cached_tokens: 200 } },
  };
}

/** The SSE events of a streamed chat completion (`data:` only, then `[DONE]`). */
function chatEvents(text, o = {}) {
  const pieces = o.pieces ?? [text.slice(0, 3), text.slice(3, 9), text.slice(9)].filter(Boolean);
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1, model: 'gpt-fake' };
  return [
    { data: { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] } },
    ...pieces.map((p) => ({ data: { ...base, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] } })),
    { data: { ...base, choices: [{ index: 0, delta: {}, finish_reason: o.finish ?? 'stop' }] } },
    { data: { ...base, choices: [], usage: { prompt_tokens: 1200, completion_tokens: 80, total_tokens: 1280 } } },
    ...(o.noDone ? [] : [{ data: '[DONE]' }]),
  ];
}

/** A Responses API response object. */
function responsesBody(text, o = {}) {
  return {
    id: 'resp_fake',
    object: 'response',
    status: o.status ?? 'completed',
    model: 'gpt-fake',
    incomplete_details: o.status === 'incomplete' ? { reason: o.reason ?? 'max_output_tokens' } : null,
    error: null,
    output: [
      { type: 'reasoning', id: 'rs_1', summary: [] },
      { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] },
    ],
    usage: { input_tokens: 900, input_tokens_details: { cached_tokens: 100 }, output_tokens: 60, total_tokens: 960 },
  };
}

/** The named SSE events of a streamed Responses API answer. */
function responsesEvents(text, o = {}) {
  const pieces = [text.slice(0, 4), text.slice(4)].filter(Boolean);
  const final = responsesBody(text, o);
  const ev = (type, data) => ({ event: type, data: { type, ...data } });
  return [
    ev('response.created', { response: { ...final, status: 'in_progress', output: [] } }),
    ev('response.output_item.added', { output_index: 1, item: { type: 'message', content: [] } }),
    ...pieces.map((delta) => ev('response.output_text.delta', { output_index: 1, content_index: 0, delta })),
    ev('response.output_text.done', { output_index: 1, content_index: 0, text }),
    ev(o.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final }),
  ];
}

const openai = {
  /** The answer the request asks for (`stream: true` or not), for the API its path names. */
  auto(text = 'Summary text.', o = {}) {
    return plan((req) => {
      const chat = req.path.endsWith('/chat/completions');
      if (req.body.stream === true) {
        const events = chat ? chatEvents(text, o) : responsesEvents(text, o);
        return reply.stream('', { events, headers: { 'x-request-id': 'req_oai' } });
      }
      return reply.json(chat ? chatBody(text, o) : responsesBody(text, o), { headers: { 'x-request-id': 'req_oai' } });
    });
  },
  /** An error answer in OpenAI's body shape. */
  error(status, error, headers = {}) {
    return reply.json({ error: { param: null, code: null, ...error } }, { status, headers: { 'x-request-id': 'req_err', ...headers } });
  },
  /** The real shape of a context-window rejection (Chat Completions). */
  contextLengthExceeded(actual = 140_000, limit = 128_000) {
    return openai.error(400, {
      message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${actual} tokens. Please reduce the length of the messages.`,
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    });
  },
};

/** Marks a function of the request that chooses the reply. */
function plan(fn) {
  return Object.assign(fn, { plan: true });
}

/** A handler that plays `replies` in order (plans of `openai.*` or replies), the last repeating. */
function script(...replies) {
  return (req) => {
    const r = replies[Math.min(req.index, replies.length - 1)];
    return r.plan ? r(req) : r;
  };
}

async function fakeApi(t, handler) {
  const api = await startFakeApi(handler);
  t.after(() => api.close());
  return api;
}

function summarizerFor(api, options = {}) {
  return openaiSummarizer({ apiKey: 'sk-test', baseURL: api.url + '/v1', model: 'gpt-fake', retryBaseMs: 1, ...options });
}

async function rejection(fn) {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  assert.fail('expected a rejection');
}

// ---- Chat Completions ----------------------------------------------------------------------

test('chat, not streamed: the request body and headers, the answer as a Messages API response', async (t) => {
  const api = await fakeApi(t, script(openai.auto('<summary>S</summary>')));
  const summarize = summarizerFor(api, { stream: false, organization: 'org-1', project: 'proj-1', headers: { 'X-Extra': 'yes' } });
  const texts = [];
  const res = await summarize(REQUEST, { onText: (x) => texts.push(x) });
  const [req] = api.requests;
  assert.equal(req.path, '/v1/chat/completions');
  assert.equal(req.headers.authorization, 'Bearer sk-test');
  assert.equal(req.headers['openai-organization'], 'org-1');
  assert.equal(req.headers['openai-project'], 'proj-1');
  assert.equal(req.headers['x-extra'], 'yes');
  assert.deepEqual(req.body, {
    model: 'gpt-fake',
    messages: [
      { role: 'system', content: 'You summarize conversations.' },
      { role: 'user', content: 'First question.' },
      { role: 'assistant', content: 'An answer.\nMore.' },
      { role: 'user', content: 'Summarize this conversation.' },
    ],
    max_completion_tokens: 20_000,
  });
  assert.deepEqual(res.content, [{ type: 'text', text: '<summary>S</summary>' }]);
  assert.equal(res.stop_reason, 'end_turn');
  assert.deepEqual(res.usage, { input_tokens: 1000, output_tokens: 80, cache_creation_input_tokens: 0, cache_read_input_tokens: 200 });
  assert.equal(res._request_id, 'req_oai');
  assert.equal(res.providerResponse.id, 'chatcmpl-fake');
  assert.deepEqual(texts, ['<summary>S</summary>']);
});

test('chat, streamed: deltas reach onText, usage from the last chunk, [DONE] ends it; length → max_tokens', async (t) => {
  const api = await fakeApi(t, script(openai.auto('Hello streamed world'), openai.auto('cut', { finish: 'length' })));
  const summarize = summarizerFor(api, { maxOutputTokens: 16_384 });
  const texts = [];
  const res = await summarize(REQUEST, { onText: (x) => texts.push(x) });
  assert.equal(api.requests[0].body.stream, true);
  assert.deepEqual(api.requests[0].body.stream_options, { include_usage: true });
  assert.equal(api.requests[0].body.max_completion_tokens, 16_384, 'capped by maxOutputTokens');
  assert.deepEqual(texts, ['Hel', 'lo str', 'eamed world']);
  assert.equal(res.content[0].text, 'Hello streamed world');
  assert.equal(res.stop_reason, 'end_turn');
  assert.equal(res.usage.input_tokens, 1200);
  assert.equal(res.usage.output_tokens, 80);
  const cut = await summarize(REQUEST);
  assert.equal(cut.stop_reason, 'max_tokens', 'the library then reports the summary as truncated');
});

test('chat, streamed: an error object inside the stream is an OPENAI_API_ERROR; a stream cut before its finish_reason is retried', async (t) => {
  const errEvents = [...chatEvents('Partial').slice(0, 1), { data: { error: { message: 'The server had an error while processing your request.', type: 'server_error', code: 'server_error', param: null } } }];
  const cut = chatEvents('again', { noDone: true }).slice(0, 3); // text, no finish_reason, no [DONE]
  const api = await fakeApi(t, script(reply.stream('', { events: errEvents }), reply.stream('', { events: cut }), openai.auto('fine')));
  const res = await summarizerFor(api)(REQUEST);
  assert.equal(res.content[0].text, 'fine');
  assert.equal(api.requests.length, 3, 'the server_error event and the cut stream were both retried');
  // A stream that ended after its finish_reason (and usage) without [DONE] is complete (as the
  // openai SDK takes it; some compatible servers and proxies send no [DONE]).
  const api3 = await fakeApi(t, reply.stream('', { events: chatEvents('no done', { noDone: true }) }));
  const whole = await summarizerFor(api3, { maxRetries: 0 })(REQUEST);
  assert.equal(whole.content[0].text, 'no done');
  assert.equal(whole.usage.output_tokens, 80);
  assert.equal(api3.requests.length, 1);
  const api2 = await fakeApi(t, reply.stream('', { events: errEvents }));
  const err = await rejection(() => summarizerFor(api2, { maxRetries: 0 })(REQUEST));
  assert.ok(err instanceof OpenAiApiError);
  assert.equal(err.code, 'OPENAI_API_ERROR');
  assert.equal(err.apiCode, 'server_error');
  assert.equal(err.retryable, true);
  assert.equal(err.retriesExhausted, true);
});

// ---- Responses API ---------------------------------------------------------------------------

test('responses, not streamed: instructions, input, max_output_tokens, store false; output_text read', async (t) => {
  const api = await fakeApi(t, script(openai.auto('<summary>R</summary>'), openai.auto('part', { status: 'incomplete' })));
  const summarize = summarizerFor(api, { api: 'responses', stream: false, extraBody: { reasoning: { effort: 'low' } } });
  assert.equal(summarize.api, 'responses');
  const res = await summarize(REQUEST);
  const [req] = api.requests;
  assert.equal(req.path, '/v1/responses');
  assert.deepEqual(req.body, {
    model: 'gpt-fake',
    input: [
      { role: 'user', content: 'First question.' },
      { role: 'assistant', content: 'An answer.\nMore.' },
      { role: 'user', content: 'Summarize this conversation.' },
    ],
    store: false,
    instructions: 'You summarize conversations.',
    max_output_tokens: 20_000,
    reasoning: { effort: 'low' },
  });
  assert.equal(res.content[0].text, '<summary>R</summary>');
  assert.equal(res.stop_reason, 'end_turn');
  assert.deepEqual(res.usage, { input_tokens: 800, output_tokens: 60, cache_creation_input_tokens: 0, cache_read_input_tokens: 100 });
  const part = await summarize(REQUEST);
  assert.equal(part.stop_reason, 'max_tokens', 'incomplete at max_output_tokens');
});

test('responses, streamed: output_text deltas to onText, the completed response is the answer', async (t) => {
  const api = await fakeApi(t, script(openai.auto('Streamed summary')));
  const texts = [];
  const res = await summarizerFor(api, { api: 'responses' })(REQUEST, { onText: (x) => texts.push(x) });
  assert.equal(api.requests[0].body.stream, true);
  assert.deepEqual(texts, ['Stre', 'amed summary']);
  assert.equal(res.content[0].text, 'Streamed summary');
  assert.equal(res.usage.output_tokens, 60);
});

test('responses, streamed: response.failed and error events are coded errors; a server_error one is retried', async (t) => {
  const failed = [
    { event: 'response.created', data: { type: 'response.created', response: { status: 'in_progress' } } },
    { event: 'response.failed', data: { type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: 'The model failed to generate a response.' } } } },
  ];
  const tooLong = [{ event: 'error', data: { type: 'error', code: 'context_length_exceeded', message: 'Your input exceeds the context window of this model. Please adjust your input and try again.', param: 'input' } }];
  const api = await fakeApi(t, script(reply.stream('', { events: failed }), openai.auto('after failure')));
  const res = await summarizerFor(api, { api: 'responses' })(REQUEST);
  assert.equal(res.content[0].text, 'after failure');
  assert.equal(api.requests.length, 2);
  const api2 = await fakeApi(t, reply.stream('', { events: tooLong }));
  const err = await rejection(() => summarizerFor(api2, { api: 'responses' })(REQUEST));
  assert.equal(err.code, 'OPENAI_API_ERROR');
  assert.equal(err.apiCode, 'context_length_exceeded');
  assert.equal(err.status, 400);
  assert.equal(err.retryable, false);
  assert.equal(api2.requests.length, 1);
  assert.ok(cc.parseContextOverflowError(err), 'the library reads it as a context overflow');
});

// ---- Prompt too long through the library ---------------------------------------------------

test('context_length_exceeded (real body): not retried here, recognised by the library with its numbers', async (t) => {
  const api = await fakeApi(t, script(openai.contextLengthExceeded(140_000, 128_000)));
  const err = await rejection(() => summarizerFor(api)(REQUEST));
  assert.equal(api.requests.length, 1);
  assert.equal(err.status, 400);
  assert.equal(err.type, 'invalid_request_error');
  assert.equal(err.apiCode, 'context_length_exceeded');
  assert.equal(err.requestId, 'req_err');
  assert.match(err.message, /maximum context length is 128000 tokens/);
  const overflow = cc.parseContextOverflowError(err);
  assert.ok(overflow);
  assert.equal(overflow.gap, 12_000);
});

test('compactConversation drops the oldest turns after context_length_exceeded and succeeds', async (t) => {
  const msgs = h.apiConversation({ rounds: 12 });
  const full = h.requestTokens({ messages: msgs });
  const limit = Math.floor(full * 0.5);
  const sizes = [];
  const api = await fakeApi(t, async (req) => {
    const n = Math.ceil(JSON.stringify(req.body.messages).length / 4);
    sizes.push(n);
    if (n > limit) return openai.contextLengthExceeded(n, limit);
    return openai.auto('<analysis>a</analysis>\n<summary>\nThe user fixed the parser.\n</summary>')(req);
  });
  const r = await cc.compactConversation(msgs, { model: h.SONNET, summarize: summarizerFor(api, { stream: true }) }, {});
  assert.ok(r.ptlRetries >= 1 && r.ptlRetries <= 3, `ptlRetries ${r.ptlRetries}`);
  assert.equal(api.requests.length, r.ptlRetries + 1);
  for (let i = 1; i < sizes.length; i++) assert.ok(sizes[i] < sizes[i - 1], `request ${i} smaller: ${sizes}`);
  assert.match(JSON.stringify(r.summaryMessages ?? r), /The user fixed the parser/);
  assert.equal(api.requests.at(-1).body.model, 'gpt-fake');
});

// ---- Retries -------------------------------------------------------------------------------

test('429 with retry-after-ms, 500 and 503 are retried; the answer then arrives', async (t) => {
  const rate = openai.error(429, { message: 'Rate limit reached for gpt-fake on tokens per min (TPM): Limit 30000, Used 30000, Requested 1200.', type: 'tokens', code: 'rate_limit_exceeded' }, { 'retry-after-ms': '20' });
  const s500 = openai.error(500, { message: 'The server had an error while processing your request.', type: 'server_error' });
  const s503 = openai.error(503, { message: 'The engine is currently overloaded, please try again later.', type: 'server_error' });
  const api = await fakeApi(t, script(rate, s500, s503, openai.auto('ok after three')));
  const res = await summarizerFor(api, { maxRetries: 3 })(REQUEST);
  assert.equal(res.content[0].text, 'ok after three');
  assert.equal(api.requests.length, 4);
  assert.ok(api.requests[1].receivedAt - api.requests[0].receivedAt >= 15, 'waited for retry-after-ms');
});

test('retries exhausted: the last error says so; insufficient_quota and a too-long retry-after are not waited for', async (t) => {
  const s503 = openai.error(503, { message: 'Service Unavailable', type: 'server_error' });
  const api = await fakeApi(t, script(s503));
  const err = await rejection(() => summarizerFor(api, { maxRetries: 2 })(REQUEST));
  assert.equal(err.status, 503);
  assert.equal(err.retriesExhausted, true);
  assert.equal(err.attempts, 3);
  assert.equal(api.requests.length, 3);

  const quota = openai.error(429, { message: 'You exceeded your current quota, please check your plan and billing details.', type: 'insufficient_quota', code: 'insufficient_quota' });
  const api2 = await fakeApi(t, script(quota));
  const q = await rejection(() => summarizerFor(api2)(REQUEST));
  assert.equal(q.retryable, false);
  assert.equal(q.retriesExhausted, true, 'the library is told not to retry a 429 of an exhausted quota');
  assert.equal(api2.requests.length, 1);

  const long = openai.error(429, { message: 'Rate limit', type: 'requests', code: 'rate_limit_exceeded' }, { 'retry-after': '120' });
  const api3 = await fakeApi(t, script(long));
  const l = await rejection(() => summarizerFor(api3)(REQUEST));
  assert.equal(l.retryAfterMs, 120_000);
  assert.equal(l.retriesExhausted, true, 'the library is told not to wait either');
  assert.equal(api3.requests.length, 1);
});

test('a 429 without retry-after waits for the exhausted rate limit to reset (x-ratelimit-* headers)', async (t) => {
  assert.equal(rateLimitReset({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1m0.5s' }), 60_500);
  assert.equal(rateLimitReset({ 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '30ms', 'x-ratelimit-remaining-requests': '10', 'x-ratelimit-reset-requests': '9s' }), 30);
  assert.equal(rateLimitReset({ 'x-ratelimit-remaining-tokens': '5', 'x-ratelimit-reset-tokens': '1s' }), undefined);
  const rate = openai.error(429, { message: 'Rate limit reached', type: 'tokens', code: 'rate_limit_exceeded' }, { 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '25ms' });
  const api = await fakeApi(t, script(rate, openai.auto('after reset')));
  const res = await summarizerFor(api)(REQUEST);
  assert.equal(res.content[0].text, 'after reset');
  assert.ok(api.requests[1].receivedAt - api.requests[0].receivedAt >= 20, 'waited for the reset');
});

test('a network failure is retried; a NETWORK_ERROR after the retries', async (t) => {
  const api = await fakeApi(t, script(reply.hangUp(), openai.auto('reconnected')));
  assert.equal((await summarizerFor(api)(REQUEST)).content[0].text, 'reconnected');
  const err = await rejection(() => openaiSummarizer({ apiKey: 'k', baseURL: 'http://127.0.0.1:1/v1', model: 'm', retryBaseMs: 1, maxRetries: 1 })(REQUEST));
  assert.equal(err.code, 'NETWORK_ERROR');
  assert.equal(err.retriesExhausted, true);
});

// ---- Abort and timeouts --------------------------------------------------------------------

test('abort: before the call, during the request, and during a backoff wait — AbortError, no further request', async (t) => {
  const before = new AbortController();
  before.abort();
  const api0 = await fakeApi(t, script(openai.auto()));
  const e0 = await rejection(() => summarizerFor(api0)(REQUEST, { signal: before.signal }));
  assert.equal(e0.code, 'ABORTED');
  assert.equal(api0.requests.length, 0);

  const api = await fakeApi(t, reply.slow(5_000, reply.json(chatBody('late'))));
  const ctl = new AbortController();
  const p = summarizerFor(api)(REQUEST, { signal: ctl.signal });
  await api.waitForRequest(1);
  ctl.abort(new Error('user left'));
  const e1 = await rejection(() => p);
  assert.equal(e1.name, 'AbortError');
  assert.equal(e1.code, 'ABORTED');
  assert.equal(e1.cause.message, 'user left');

  const api2 = await fakeApi(t, script(openai.error(429, { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' }, { 'retry-after': '30' })));
  const ctl2 = new AbortController();
  const p2 = summarizerFor(api2)(REQUEST, { signal: ctl2.signal });
  await api2.waitForRequest(1);
  setTimeout(() => ctl2.abort(), 20);
  const e2 = await rejection(() => p2);
  assert.equal(e2.code, 'ABORTED');
  assert.equal(api2.requests.length, 1);
});

test('timeoutMs ends a slow attempt (TIMEOUT, retried); idleTimeoutMs ends a stalled stream', async (t) => {
  const api = await fakeApi(t, reply.slow(5_000, reply.json(chatBody('late'))));
  const err = await rejection(() => summarizerFor(api, { timeoutMs: 50, maxRetries: 1 })(REQUEST));
  assert.equal(err.code, 'TIMEOUT');
  assert.notEqual(err.name, 'AbortError');
  assert.equal(err.retriesExhausted, true);
  assert.equal(api.requests.length, 2);

  const stalled = reply.stream('', { events: chatEvents('never ends'), afterEvents: 2, finish: 'stall' });
  const api2 = await fakeApi(t, stalled);
  const texts = [];
  const e2 = await rejection(() => summarizerFor(api2, { idleTimeoutMs: 60 })(REQUEST, { onText: (x) => texts.push(x) }));
  assert.equal(e2.code, 'TIMEOUT');
  assert.match(e2.message, /no data for 60 ms/);
  assert.deepEqual(texts, ['nev']);
  assert.equal(api2.requests.length, 1, 'text already reached onText: not retried');
});

// ---- Options -------------------------------------------------------------------------------

test('options are checked when the summarizer is made: unknown keys with a hint, types, the API key', () => {
  const bad = (o, re, code = 'INVALID_ARGUMENT') =>
    assert.throws(() => openaiSummarizer(o), (e) => e instanceof TypeError && e.code === code && re.test(e.message));
  bad({ apiKey: 'k', mdel: 'gpt' }, /options\.mdel is not an option \(did you mean `model`\?\)/);
  bad({ apiKey: 'k', maxRetrie: 2 }, /did you mean `maxRetries`/);
  bad({ apiKey: 'k', api: 'completions' }, /api must be 'chat'.*'responses'/);
  bad({ apiKey: 'k', timeoutMs: -1 }, /timeoutMs must be a non-negative number/);
  bad({ apiKey: 'k', extraBody: [] }, /extraBody must be an object/);
  bad({ apiKey: 'k', baseURL: 'not a url' }, /baseURL is not a URL/);
  bad('x', /options must be an object/);
  const saved = process.env.OPENAI_API_KEY;
  delete process.env.OPENAI_API_KEY;
  try {
    bad({}, /no API key.*OPENAI_API_KEY/, 'MISSING_API_KEY');
    assert.equal(typeof openaiSummarizer({ baseURL: 'http://localhost:11434/v1' }), 'function', 'a local server needs no key');
    assert.equal(typeof openaiSummarizer({ fetch: async () => new Response('{}') }), 'function');
    process.env.OPENAI_API_KEY = 'sk-env';
    assert.equal(typeof openaiSummarizer(), 'function');
  } finally {
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
  }
});

test('the key from the environment is sent; the request is checked; no model at all is an error', async (t) => {
  const api = await fakeApi(t, script(openai.auto('ok')));
  const saved = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = 'sk-from-env';
  let summarize;
  try {
    summarize = openaiSummarizer({ baseURL: api.url + '/v1', stream: false });
  } finally {
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
  }
  await summarize(REQUEST);
  assert.equal(api.requests[0].headers.authorization, 'Bearer sk-from-env');
  assert.equal(api.requests[0].body.model, 'claude-from-library', 'the request model when no model option');
  const e = await rejection(() => summarize({ messages: 'x' }));
  assert.equal(e.code, 'INVALID_ARGUMENT');
  const e2 = await rejection(() => summarize({ messages: [] }));
  assert.equal(e2.code, 'INVALID_ARGUMENT');
  assert.match(e2.message, /no model/);
});

// ---- The built package ---------------------------------------------------------------------

test('the built package (pkg/) ships the summarizers: both entries export openai/langchain, ai-sdk is a subpath', async () => {
  const { readFileSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));
  const JS = fileURLToPath(new URL('../../js/', import.meta.url));
  const meta = JSON.parse(readFileSync(PKG + 'package.json', 'utf8'));
  for (const f of ['http.js', 'summary-request.js', 'openai.js', 'openai.d.ts', 'langchain.js', 'langchain.d.ts', 'ai-sdk.js', 'ai-sdk.d.ts', 'summary-request.d.ts']) {
    assert.ok(meta.files.includes(f), `files lists ${f}`);
    if (f.endsWith('.d.ts')) {
      assert.equal(readFileSync(PKG + f, 'utf8'), readFileSync(JS + f, 'utf8'), `pkg/${f} is a copy of js/${f} (stale pkg/? run \`bash scripts/build.sh\`)`);
    } else {
      // The JS is js/<f> minified (scripts/package.mjs): the same exports.
      assert.deepEqual(Object.keys(await import(PKG + f)).sort(), Object.keys(await import(JS + f)).sort(), f);
    }
  }
  assert.deepEqual(meta.exports['./ai-sdk'], { types: './ai-sdk.d.ts', default: './ai-sdk.js' });
  const openai = await import(PKG + 'openai.js');
  const langchain = await import(PKG + 'langchain.js');
  for (const entry of ['node.js', 'web.js']) {
    const text = readFileSync(PKG + entry, 'utf8');
    const m = await import(PKG + entry);
    assert.equal(m.openaiSummarizer, openai.openaiSummarizer, entry);
    assert.equal(m.langchainSummarizer, langchain.langchainSummarizer, entry);
    assert.doesNotMatch(text, /ai-sdk/, `${entry} does not pull in the AI SDK summarizer (nor 'ai')`);
  }
  assert.equal(typeof cc.openaiSummarizer, 'function');
  assert.equal(typeof cc.langchainSummarizer, 'function');
  const sub = await import(PKG + 'ai-sdk.js');
  assert.equal(typeof sub.aiSdkSummarizer, 'function');
});
