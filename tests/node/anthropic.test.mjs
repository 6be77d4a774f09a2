// anthropicSummarizer (js/anthropic.js) against the fake Messages API (tests/fake-api/server.mjs):
// headers and body, SSE assembly, JSON mode, errors, retries and their timing, aborts, timeouts,
// broken connections; then the built package (pkg/) re-exporting it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { anthropicSummarizer, AnthropicApiError } from '../../js/anthropic.js';
import {
  startFakeApi,
  reply,
  messageEvents,
  encodeEvents,
  errorEvent,
} from '../fake-api/server.mjs';

const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));
const JS = fileURLToPath(new URL('../../js/', import.meta.url));

const REQUEST = Object.freeze({
  model: 'claude-from-library',
  system: 'You summarize conversations.',
  messages: [{ role: 'user', content: 'Summarize this conversation.' }],
  max_tokens: 20_000,
});

/** Starts the fake API for one test and stops it when the test ends. */
async function fakeApi(t, handler) {
  const api = await startFakeApi(handler);
  t.after(() => api.close());
  return api;
}

/** A summarizer for `api`, with fast backoff unless the test says otherwise. */
function summarizerFor(api, options = {}) {
  return anthropicSummarizer({ apiKey: 'sk-test', baseURL: api.url, retryBaseMs: 1, ...options });
}

/** Runs `fn`, expecting it to reject; returns the error and how long it took. */
async function rejection(fn) {
  const start = performance.now();
  try {
    await fn();
  } catch (err) {
    return { err, ms: performance.now() - start };
  }
  assert.fail('expected a rejection');
}

// ---- Request --------------------------------------------------------------------------------

test('sends POST /v1/messages with the API headers, the browser-access header and user headers', async (t) => {
  const api = await fakeApi(t);
  const summarize = anthropicSummarizer({
    apiKey: 'sk-test-123',
    baseURL: api.url + '/',
    headers: { 'X-Extra': 'yes', 'anthropic-beta': 'some-beta' },
  });
  await summarize(REQUEST);
  assert.equal(api.requests.length, 1);
  const r = api.requests[0];
  assert.equal(r.method, 'POST');
  assert.equal(r.path, '/v1/messages', 'trailing slash of baseURL dropped');
  assert.equal(r.headers['x-api-key'], 'sk-test-123');
  assert.equal(r.headers['anthropic-version'], '2023-06-01');
  assert.equal(r.headers['content-type'], 'application/json');
  assert.equal(r.headers['anthropic-dangerous-direct-browser-access'], 'true');
  assert.equal(r.headers['x-extra'], 'yes');
  assert.equal(r.headers['anthropic-beta'], 'some-beta');
});

test('user headers override defaults, null removes one, and no apiKey sends no x-api-key', async (t) => {
  const api = await fakeApi(t);
  const summarize = anthropicSummarizer({
    baseURL: api.url,
    headers: new Headers({ authorization: 'Bearer proxy-token', 'anthropic-version': '2099-01-01' }),
  });
  await summarize(REQUEST);
  const summarize2 = anthropicSummarizer({
    apiKey: 'k',
    baseURL: api.url,
    headers: { 'anthropic-dangerous-direct-browser-access': null },
  });
  await summarize2(REQUEST);
  const [a, b] = api.requests;
  assert.equal(a.headers['x-api-key'], undefined);
  assert.equal(a.headers.authorization, 'Bearer proxy-token');
  assert.equal(a.headers['anthropic-version'], '2099-01-01');
  assert.equal(b.headers['anthropic-dangerous-direct-browser-access'], undefined);
  assert.equal(b.headers['x-api-key'], 'k');
});

test('request body: the library request plus stream:true; `model` option overrides request.model', async (t) => {
  const api = await fakeApi(t);
  await summarizerFor(api)(REQUEST);
  await summarizerFor(api, { model: 'claude-override' })({ ...REQUEST, stream: false });
  const [plain, overridden] = api.requests.map((r) => r.body);
  assert.deepEqual(plain, { ...REQUEST, stream: true });
  assert.deepEqual(overridden, { ...REQUEST, model: 'claude-override', stream: true });
  assert.deepEqual(REQUEST.messages, [{ role: 'user', content: 'Summarize this conversation.' }], 'input not mutated');
});

// ---- Streaming ------------------------------------------------------------------------------

test('SSE: events split across TCP chunks (and inside UTF-8 characters) assemble the response; onText in order', async (t) => {
  const text = 'Résumé: the user wants 🌍 compaction — done.';
  const pieces = ['Résumé: ', 'the user ', 'wants 🌍', ' compaction', ' — done.'];
  const api = await fakeApi(t, reply.stream(text, { pieces, thinking: 'Let me think…', id: 'msg_abc', delayMs: 3 }));
  const got = [];
  const res = await summarizerFor(api, { model: 'claude-x' })(REQUEST, { onText: (s) => got.push(s) });
  assert.deepEqual(got, pieces, 'onText receives each text delta, in order');
  assert.equal(res.id, 'msg_abc');
  assert.equal(res.type, 'message');
  assert.equal(res.role, 'assistant');
  assert.equal(res.model, 'claude-x');
  assert.equal(res.stop_reason, 'end_turn');
  assert.equal(res.stop_sequence, null);
  assert.deepEqual(res.content, [
    { type: 'thinking', thinking: 'Let me think…', signature: 'sig_fake' },
    { type: 'text', text },
  ]);
  assert.ok(!got.join('').includes('think'), 'thinking never reaches onText');
  assert.equal(res.usage.input_tokens, 100, 'input tokens from message_start');
  assert.equal(res.usage.output_tokens, Math.ceil(text.length / 4), 'output tokens from message_delta');
  assert.match(res._request_id, /^req_fake_/);
  assert.ok(!Object.keys(res).includes('_request_id'), '_request_id is not enumerable');
});

/** A fetch that answers with `text` as an SSE body cut into `chunkSize`-byte chunks (no network). */
function chunkedFetch(text, chunkSize) {
  return async () => {
    const bytes = new TextEncoder().encode(text);
    let i = 0;
    const body = new ReadableStream({
      pull(c) {
        if (i >= bytes.length) return c.close();
        c.enqueue(bytes.slice(i, (i += chunkSize)));
      },
    });
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
  };
}

test('SSE: tiny fixed-size chunks with LF, CRLF or CR line endings, comments and unknown events', async (t) => {
  const events = [
    ': a comment line',
    ...messageEvents('abc déf 🌍', { pieces: ['abc', ' ', 'déf 🌍'] }).flatMap((e, i) =>
      i === 2 ? [{ event: 'some_future_event', data: { type: 'some_future_event', x: 1 } }, e] : [e],
    ),
  ];
  const check = async (summarize, what) => {
    const got = [];
    const res = await summarize(REQUEST, { onText: (s) => got.push(s) });
    assert.deepEqual(got, ['abc', ' ', 'déf 🌍'], what);
    assert.equal(res.content[0].text, 'abc déf 🌍', what);
    assert.equal(res.stop_reason, 'end_turn', what);
  };
  for (const eol of ['\n', '\r\n', '\r']) {
    // Every cut, in process: one byte at a time splits every line ending and UTF-8 sequence.
    for (const chunkSize of [1, 2, 3, 5]) {
      const what = `eol ${JSON.stringify(eol)}, ${chunkSize}-byte chunks`;
      await check(anthropicSummarizer({ fetch: chunkedFetch(encodeEvents(events, eol), chunkSize) }), what);
    }
    // And over a real socket, in 7-byte TCP writes.
    const api = await fakeApi(t, reply.stream('', { events, eol, chunkSize: 7, delayMs: 1 }));
    await check(summarizerFor(api), `eol ${JSON.stringify(eol)} over HTTP`);
  }
});

test('SSE: multi-line data, message_delta usage fields replace earlier ones, tool_use input assembled', async (t) => {
  const start = {
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 5 },
    },
  };
  // The JSON of message_start spread over two data lines (legal SSE: joined with a newline).
  const startJson = JSON.stringify(start, null, 1).split('\n');
  const raw =
    `event: message_start\ndata: ${startJson.slice(0, 3).join('\ndata: ')}\ndata: ${startJson.slice(3).join('\ndata: ')}\n\n` +
    encodeEvents([
      { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
      {
        event: 'content_block_start',
        data: { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 't1', name: 'x', input: {} } },
      },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"a":' } } },
      { event: 'content_block_delta', data: { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '[1,2]}' } } },
      { event: 'content_block_stop', data: { type: 'content_block_stop', index: 1 } },
      {
        event: 'message_delta',
        data: { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 42, input_tokens: 11, cache_read_input_tokens: null } },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]);
  const api = await fakeApi(t, reply.stream('', { events: [raw], chunkSize: 5, delayMs: 0 }));
  const res = await summarizerFor(api)(REQUEST);
  assert.equal(res.id, 'msg_1');
  assert.equal(res.stop_reason, 'max_tokens');
  assert.deepEqual(res.usage, { input_tokens: 11, output_tokens: 42, cache_read_input_tokens: 5 });
  assert.deepEqual(res.content, [
    { type: 'text', text: 'Hi' },
    { type: 'tool_use', id: 't1', name: 'x', input: { a: [1, 2] } },
  ]);
});

test('stream:false (JSON mode): no stream flag, the JSON body returned as is, onText called once with the text', async (t) => {
  const api = await fakeApi(t);
  const got = [];
  const res = await summarizerFor(api, { stream: false })({ ...REQUEST, stream: true }, { onText: (s) => got.push(s) });
  assert.equal('stream' in api.requests[0].body, false);
  assert.equal(res.type, 'message');
  assert.deepEqual(res.content, [{ type: 'text', text: 'Summary.' }]);
  assert.equal(res.model, REQUEST.model);
  assert.equal(res.stop_reason, 'end_turn');
  assert.deepEqual(got, ['Summary.']);
});

test('a server that answers JSON to a stream request is read as JSON', async (t) => {
  const api = await fakeApi(t, reply.message('Plain JSON.'));
  const res = await summarizerFor(api)(REQUEST);
  assert.equal(api.requests[0].body.stream, true);
  assert.equal(res.content[0].text, 'Plain JSON.');
});

test('a custom fetch (no server) is used, called without a `this`', async () => {
  const calls = [];
  const sse = encodeEvents(messageEvents('From a custom fetch.'));
  function fakeFetch(url, init) {
    calls.push({ url, init, self: this });
    const bytes = new TextEncoder().encode(sse);
    const body = new ReadableStream({
      start(c) {
        c.enqueue(bytes.subarray(0, 50));
        c.enqueue(bytes.subarray(50));
        c.close();
      },
    });
    return Promise.resolve(new Response(body, { headers: { 'content-type': 'text/event-stream', 'request-id': 'req_custom' } }));
  }
  const res = await anthropicSummarizer({ apiKey: 'k', fetch: fakeFetch })(REQUEST);
  assert.equal(calls.length, 1);
  assert.equal(calls[0].url, 'https://api.anthropic.com/v1/messages');
  assert.equal(calls[0].self, undefined);
  assert.equal(calls[0].init.method, 'POST');
  assert.ok(calls[0].init.signal instanceof AbortSignal);
  assert.equal(res.content[0].text, 'From a custom fetch.');
  assert.equal(res._request_id, 'req_custom');
});

// ---- Errors ---------------------------------------------------------------------------------

test('400 prompt too long: status, body, type, request id and message surface; never retried', async (t) => {
  const api = await fakeApi(t, reply.promptTooLong(210_000, 200_000));
  const { err } = await rejection(() => summarizerFor(api, { maxRetries: 5 })(REQUEST));
  assert.ok(err instanceof AnthropicApiError);
  assert.ok(err instanceof Error);
  assert.equal(err.name, 'AnthropicApiError');
  assert.equal(err.code, 'ANTHROPIC_API_ERROR');
  assert.equal(err.status, 400);
  assert.equal(err.type, 'invalid_request_error');
  assert.deepEqual(err.error, {
    type: 'error',
    error: { type: 'invalid_request_error', message: 'prompt is too long: 210000 tokens > 200000 maximum' },
  });
  assert.match(err.message, /400/);
  assert.match(err.message, /prompt is too long: 210000 tokens > 200000 maximum/);
  assert.match(err.requestId, /^req_fake_/);
  assert.equal(err.headers['request-id'], err.requestId);
  assert.equal(err.retryable, false);
  assert.equal(err.retriesExhausted, false);
  assert.equal(err.attempts, 1);
  assert.equal(api.requests.length, 1, 'not retried');
});

test('401, 403, 404 and 413 are never retried (even with x-should-retry: true)', async (t) => {
  for (const [status, type] of [
    [401, 'authentication_error'],
    [403, 'permission_error'],
    [404, 'not_found_error'],
    [413, 'request_too_large'],
  ]) {
    const api = await startFakeApi(reply.error(status, type, `${type} message`, { headers: { 'x-should-retry': 'true' } }));
    try {
      const { err } = await rejection(() => summarizerFor(api)(REQUEST));
      assert.equal(err.status, status);
      assert.equal(err.type, type);
      assert.equal(api.requests.length, 1, `${status} not retried`);
    } finally {
      await api.close();
    }
  }
});

test('a non-JSON error page keeps its text in `error`', async (t) => {
  const api = await fakeApi(t, reply.json('<html>Bad gateway</html>', { status: 502 }));
  const { err } = await rejection(() => summarizerFor(api, { maxRetries: 0 })(REQUEST));
  assert.equal(err.status, 502);
  assert.equal(err.error, '<html>Bad gateway</html>');
  assert.match(err.message, /502.*Bad gateway/);
  assert.equal(err.retriesExhausted, true);
});

// ---- Retries --------------------------------------------------------------------------------

test('529 overloaded twice, then success (maxRetries 2)', async (t) => {
  const api = await fakeApi(t, [reply.overloaded(), reply.overloaded(), reply.stream('Third time lucky.')]);
  const res = await summarizerFor(api, { maxRetries: 2 })(REQUEST);
  assert.equal(res.content[0].text, 'Third time lucky.');
  assert.equal(api.requests.length, 3);
  for (const r of api.requests) assert.deepEqual(r.body, api.requests[0].body, 'same body each attempt');
});

test('500, 502, 503, 504 and 429 are retried', async (t) => {
  const api = await fakeApi(t, [
    reply.error(500, 'api_error', 'Internal server error'),
    reply.error(502, 'api_error', 'bad gateway'),
    reply.error(503, 'api_error', 'unavailable'),
    reply.error(504, 'timeout_error', 'timeout'),
    reply.rateLimited(),
    reply.stream('ok'),
  ]);
  const res = await summarizerFor(api, { maxRetries: 5 })(REQUEST);
  assert.equal(res.content[0].text, 'ok');
  assert.equal(api.requests.length, 6);
});

test('x-should-retry: false stops a retry the status would allow', async (t) => {
  const api = await fakeApi(t, reply.error(500, 'api_error', 'no', { headers: { 'x-should-retry': 'false' } }));
  const { err } = await rejection(() => summarizerFor(api)(REQUEST));
  assert.equal(err.status, 500);
  assert.equal(api.requests.length, 1);
});

test('retry-after-ms and retry-after (seconds) are honoured', async (t) => {
  const api = await fakeApi(t, [reply.rateLimited({ retryAfterMs: 80 }), reply.rateLimited({ retryAfter: '0.12' }), reply.stream('ok')]);
  // A huge backoff base proves the server's wait is used instead of the computed one.
  const res = await summarizerFor(api, { retryBaseMs: 60_000 })(REQUEST);
  assert.equal(res.content[0].text, 'ok');
  const [a, b, c] = api.requests.map((r) => r.receivedAt);
  assert.ok(b - a >= 75, `waited ${b - a} ms after retry-after-ms: 80`);
  assert.ok(c - b >= 115, `waited ${c - b} ms after retry-after: 0.12`);
  assert.ok(c - a < 2_000, 'and not much longer');
});

test('retry-after as an HTTP date is honoured', async (t) => {
  const api = await fakeApi(t, (req) =>
    req.index === 0 ? reply.rateLimited({ retryAfter: new Date(Date.now() + 1_500).toUTCString() }) : reply.stream('ok'),
  );
  await summarizerFor(api, { retryBaseMs: 60_000 })(REQUEST);
  const wait = api.requests[1].receivedAt - api.requests[0].receivedAt;
  // HTTP dates have whole seconds: the wait is between 0.5 s and 1.5 s.
  assert.ok(wait >= 400 && wait < 2_000, `waited ${wait} ms`);
});

test('a retry-after longer than maxRetryAfterMs is not waited for', async (t) => {
  const api = await fakeApi(t, reply.rateLimited({ retryAfter: 120 }));
  const { err, ms } = await rejection(() => summarizerFor(api)(REQUEST));
  assert.equal(err.status, 429);
  assert.equal(err.retryAfterMs, 120_000);
  assert.equal(err.retriesExhausted, true);
  assert.equal(api.requests.length, 1);
  assert.ok(ms < 1_000);
});

test('backoff without hints: exponential with jitter, capped by retryMaxMs', async (t) => {
  const api = await fakeApi(t, [reply.overloaded(), reply.overloaded(), reply.overloaded(), reply.stream('ok')]);
  const start = performance.now();
  await summarizerFor(api, { maxRetries: 3, retryBaseMs: 10_000, retryMaxMs: 40 })(REQUEST);
  assert.ok(performance.now() - start < 1_000, 'each wait is at most retryMaxMs');
  assert.equal(api.requests.length, 4);
});

test('retries exhausted: the last error with retriesExhausted = true', async (t) => {
  const api = await fakeApi(t, reply.overloaded());
  const { err } = await rejection(() => summarizerFor(api, { maxRetries: 2 })(REQUEST));
  assert.equal(err.status, 529);
  assert.equal(err.type, 'overloaded_error');
  assert.equal(err.retryable, true);
  assert.equal(err.retriesExhausted, true);
  assert.equal(err.attempts, 3);
  assert.equal(api.requests.length, 3);

  const api0 = await fakeApi(t, reply.overloaded());
  const { err: err0 } = await rejection(() => summarizerFor(api0, { maxRetries: 0 })(REQUEST));
  assert.equal(err0.retriesExhausted, true);
  assert.equal(api0.requests.length, 1);
});

// ---- Abort and timeouts ---------------------------------------------------------------------

test('abort during the request: AbortError at once', async (t) => {
  const api = await fakeApi(t, reply.slow(10_000));
  const ctl = new AbortController();
  const p = summarizerFor(api)(REQUEST, { signal: ctl.signal });
  await api.waitForRequest(1);
  const { err, ms } = await rejection(async () => {
    ctl.abort();
    await p;
  });
  assert.equal(err.name, 'AbortError');
  assert.equal(err.code, 'ABORTED');
  assert.ok(err instanceof AnthropicApiError);
  assert.ok(ms < 200, `rejected after ${ms} ms`);
  assert.equal(api.requests.length, 1);
});

test('an already aborted signal: AbortError, no request', async (t) => {
  const api = await fakeApi(t);
  const reason = new Error('user left');
  const { err } = await rejection(() => summarizerFor(api)(REQUEST, { signal: AbortSignal.abort(reason) }));
  assert.equal(err.name, 'AbortError');
  assert.equal(err.cause, reason);
  assert.equal(api.requests.length, 0);
});

test('abort during the stream: AbortError at once, text so far delivered', async (t) => {
  const api = await fakeApi(t, reply.stall('One two three four', { pieces: ['One ', 'two ', 'three four'], afterEvents: 4 }));
  const ctl = new AbortController();
  const got = [];
  let textAt;
  const p = summarizerFor(api)(REQUEST, {
    signal: ctl.signal,
    onText: (s) => {
      got.push(s);
      textAt ??= performance.now();
      setTimeout(() => ctl.abort(), 20);
    },
  });
  const { err } = await rejection(() => p);
  assert.equal(err.name, 'AbortError');
  assert.equal(err.code, 'ABORTED');
  assert.ok(performance.now() - textAt < 300);
  assert.deepEqual(got, ['One ']);
  assert.equal(api.requests.length, 1);
});

test('abort during a backoff wait: AbortError at once, no further request', async (t) => {
  const api = await fakeApi(t, reply.rateLimited({ retryAfterMs: 10_000 }));
  const ctl = new AbortController();
  const p = summarizerFor(api)(REQUEST, { signal: ctl.signal });
  await api.waitForRequest(1);
  await new Promise((r) => setTimeout(r, 50));
  const { err, ms } = await rejection(async () => {
    ctl.abort();
    await p;
  });
  assert.equal(err.name, 'AbortError');
  assert.ok(ms < 200, `rejected after ${ms} ms`);
  assert.equal(api.requests.length, 1);
});

test('timeoutMs aborts one attempt; the timeout is transient and retried', async (t) => {
  const api = await fakeApi(t, [reply.slow(5_000), reply.stream('after a timeout')]);
  const res = await summarizerFor(api, { timeoutMs: 100 })(REQUEST);
  assert.equal(res.content[0].text, 'after a timeout');
  assert.equal(api.requests.length, 2);
});

test('timeoutMs on every attempt: TIMEOUT with retriesExhausted', async (t) => {
  const api = await fakeApi(t, reply.slow(5_000));
  const { err, ms } = await rejection(() => summarizerFor(api, { timeoutMs: 80, maxRetries: 1 })(REQUEST));
  assert.equal(err.code, 'TIMEOUT');
  assert.notEqual(err.name, 'AbortError', 'a timeout is not a user abort');
  assert.equal(err.retryable, true);
  assert.equal(err.retriesExhausted, true);
  assert.equal(api.requests.length, 2);
  assert.ok(ms < 1_000, `took ${ms} ms`);
});

test('a stalled stream: timeoutMs (whole attempt) and idleTimeoutMs (silence) end it', async (t) => {
  const api = await fakeApi(t, reply.stall('stalled', { afterEvents: 2 }));
  const { err } = await rejection(() => summarizerFor(api, { timeoutMs: 150, maxRetries: 0 })(REQUEST));
  assert.equal(err.code, 'TIMEOUT');
  assert.match(err.message, /150 ms/);

  const api2 = await fakeApi(t, reply.stall('stalled', { afterEvents: 2, delayMs: 30 }));
  const { err: err2 } = await rejection(() => summarizerFor(api2, { idleTimeoutMs: 150, maxRetries: 1 })(REQUEST));
  assert.equal(err2.code, 'TIMEOUT');
  assert.match(err2.message, /no data for 150 ms/);
  assert.equal(api2.requests.length, 2);
});

test('a stalled stream after text was delivered times out without a retry', async (t) => {
  const api = await fakeApi(t, reply.stall('aaaa bbbb cccc dddd', { pieces: ['aaaa ', 'bbbb ', 'cccc ', 'dddd'], afterEvents: 4 }));
  const got = [];
  const { err } = await rejection(() =>
    summarizerFor(api, { idleTimeoutMs: 100 })(REQUEST, { onText: (s) => got.push(s) }),
  );
  assert.equal(err.code, 'TIMEOUT');
  assert.equal(err.retriesExhausted, false);
  assert.equal(api.requests.length, 1);
  assert.deepEqual(got, ['aaaa ']);
});

// ---- Broken connections ---------------------------------------------------------------------

test('connection dropped mid-stream before any text: retried', async (t) => {
  const api = await fakeApi(t, [reply.drop('lost', { afterEvents: 3 }), reply.stream('second try')]);
  const got = [];
  const res = await summarizerFor(api)(REQUEST, { onText: (s) => got.push(s) });
  assert.equal(res.content[0].text, 'second try');
  assert.equal(got.join(''), 'second try');
  assert.equal(api.requests.length, 2);
});

test('connection dropped after text was delivered: NETWORK_ERROR, not retried', async (t) => {
  const api = await fakeApi(t, reply.drop('aaaa bbbb cccc dddd', { pieces: ['aaaa ', 'bbbb ', 'cccc ', 'dddd'], afterEvents: 5 }));
  const got = [];
  const { err } = await rejection(() => summarizerFor(api)(REQUEST, { onText: (s) => got.push(s) }));
  assert.equal(err.code, 'NETWORK_ERROR');
  assert.equal(err.retryable, true);
  assert.equal(err.retriesExhausted, false);
  assert.ok(err.cause, 'the stream error is the cause');
  assert.deepEqual(got, ['aaaa ', 'bbbb ']);
  assert.equal(api.requests.length, 1);
});

test('dropped connections on every attempt: NETWORK_ERROR with retriesExhausted', async (t) => {
  const api = await fakeApi(t, reply.hangUp());
  const { err } = await rejection(() => summarizerFor(api)(REQUEST));
  assert.equal(err.code, 'NETWORK_ERROR');
  assert.ok(err.cause instanceof Error, 'fetch error kept as cause');
  assert.equal(err.status, undefined);
  assert.equal(err.retriesExhausted, true);
  assert.equal(api.requests.length, 3);
});

test('connection refused: NETWORK_ERROR with the cause', async () => {
  const api = await startFakeApi();
  const url = api.url;
  await api.close();
  const { err } = await rejection(() => anthropicSummarizer({ baseURL: url, maxRetries: 1, retryBaseMs: 1 })(REQUEST));
  assert.equal(err.code, 'NETWORK_ERROR');
  assert.match(err.message, /ECONNREFUSED|fetch failed/);
  assert.equal(err.attempts, 2);
});

test('a stream that ends cleanly before message_stop is an incomplete answer, retried', async (t) => {
  const partial = messageEvents('cut').slice(0, 3);
  const api = await fakeApi(t, [reply.stream('', { events: partial }), reply.stream('complete')]);
  const res = await summarizerFor(api)(REQUEST);
  assert.equal(res.content[0].text, 'complete');
  assert.equal(api.requests.length, 2);
});

// ---- Error events in the stream ---------------------------------------------------------------

test('overloaded_error event before any text: retried', async (t) => {
  const api = await fakeApi(t, [reply.streamError('overloaded_error', 'Overloaded', { afterEvents: 2 }), reply.stream('ok now')]);
  const res = await summarizerFor(api)(REQUEST);
  assert.equal(res.content[0].text, 'ok now');
  assert.equal(api.requests.length, 2);
});

test('api_error event after text was delivered: thrown with its type, not retried', async (t) => {
  const api = await fakeApi(
    t,
    reply.streamError('api_error', 'Internal server error', {
      afterEvents: 4,
      text: 'aaaa bbbb',
      pieces: ['aaaa ', 'bbbb'],
    }),
  );
  const got = [];
  const { err } = await rejection(() => summarizerFor(api)(REQUEST, { onText: (s) => got.push(s) }));
  assert.equal(err.code, 'ANTHROPIC_API_ERROR');
  assert.equal(err.type, 'api_error');
  assert.equal(err.status, 500, 'the status api_error is sent with');
  assert.deepEqual(err.error, { type: 'error', error: { type: 'api_error', message: 'Internal server error' } });
  assert.match(err.message, /api_error/);
  assert.match(err.message, /Internal server error/);
  assert.match(err.requestId, /^req_fake_/);
  assert.equal(err.retriesExhausted, false);
  assert.deepEqual(got, ['aaaa ']);
  assert.equal(api.requests.length, 1);
});

test('overloaded_error events on every attempt: retriesExhausted; invalid_request_error events: not retried', async (t) => {
  const api = await fakeApi(t, reply.streamError('overloaded_error', 'Overloaded'));
  const { err } = await rejection(() => summarizerFor(api, { maxRetries: 1 })(REQUEST));
  assert.equal(err.status, 529);
  assert.equal(err.retriesExhausted, true);
  assert.equal(api.requests.length, 2);

  const api2 = await fakeApi(t, reply.stream('', { events: [messageEvents('x')[0], errorEvent('invalid_request_error', 'bad')] }));
  const { err: err2 } = await rejection(() => summarizerFor(api2)(REQUEST));
  assert.equal(err2.status, 400);
  assert.equal(api2.requests.length, 1);
});

test('an exception thrown by onText is passed through untouched and not retried', async (t) => {
  const api = await fakeApi(t, reply.stream('some text here'));
  const boom = new Error('UI went away');
  const { err } = await rejection(() =>
    summarizerFor(api)(REQUEST, {
      onText: () => {
        throw boom;
      },
    }),
  );
  assert.equal(err, boom);
  assert.equal(api.requests.length, 1);
});

// ---- Options --------------------------------------------------------------------------------

test('invalid options and requests are TypeErrors', async () => {
  assert.throws(() => anthropicSummarizer({ maxRetries: -1 }), TypeError);
  assert.throws(() => anthropicSummarizer({ maxRetries: 1.5 }), TypeError);
  assert.throws(() => anthropicSummarizer({ timeoutMs: 'soon' }), TypeError);
  assert.throws(() => anthropicSummarizer({ fetch: 42 }), TypeError);
  assert.throws(() => anthropicSummarizer({ apiKey: 7 }), TypeError);
  assert.throws(() => anthropicSummarizer(null), TypeError);
  assert.throws(() => anthropicSummarizer({ baseURL: 'not a url' }), TypeError);
  const summarize = anthropicSummarizer({ fetch: () => assert.fail('no call') });
  await assert.rejects(() => summarize(null), TypeError);
  await assert.rejects(() => summarize([]), TypeError);
  await assert.rejects(() => summarize(REQUEST, { onText: 'x' }), TypeError);
  assert.equal(anthropicSummarizer.AnthropicApiError, AnthropicApiError);
});

test('bad options are TypeErrors with a code; an unknown key names the accepted ones', () => {
  const code = (options, expected, message) => {
    assert.throws(
      () => anthropicSummarizer(options),
      (e) => e instanceof TypeError && e.code === expected && (!message || message.test(e.message)),
      `${JSON.stringify(options)} → ${expected}`,
    );
  };
  const fetch = () => assert.fail('no call');
  code({ apiKey: 'k', maxRetries: -1 }, 'INVALID_ARGUMENT', /maxRetries/);
  code({ apiKey: 7 }, 'INVALID_ARGUMENT', /apiKey must be a string/);
  code({ authToken: {} }, 'INVALID_ARGUMENT', /authToken must be a string/);
  code({ apiKey: 'k', headers: 'x-api-key: k' }, 'INVALID_ARGUMENT', /headers must be an object/);
  code([], 'INVALID_ARGUMENT', /options must be an object/);
  for (const [key, meant] of [['apiKy', 'apiKey'], ['baseUrl', 'baseURL'], ['timeout', 'timeoutMs'], ['maxRetrys', 'maxRetries'], ['Model', 'model']]) {
    code({ apiKey: 'k', [key]: 1 }, 'INVALID_ARGUMENT', new RegExp(`options\\.${key} is not an option \\(did you mean \`${meant}\`\\?\\); known: apiKey, authToken, model, baseURL, fetch, headers`));
  }
  code({ apiKey: 'k', dangerouslyAllowBrowser: true }, 'INVALID_ARGUMENT', /options\.dangerouslyAllowBrowser is not an option; known: apiKey/);
  // The unknown key is reported even when credentials are missing too.
  code({ fetch, defaultHeaders: {} }, 'INVALID_ARGUMENT', /defaultHeaders/);
});

/** Runs `fn` with `ANTHROPIC_API_KEY` / `ANTHROPIC_AUTH_TOKEN` set to `env` (absent: unset). */
function withEnv(env, fn) {
  const names = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'];
  const saved = names.map((n) => process.env[n]);
  for (const n of names) {
    if (env[n] === undefined) delete process.env[n];
    else process.env[n] = env[n];
  }
  try {
    return fn();
  } finally {
    names.forEach((n, i) => (saved[i] === undefined ? delete process.env[n] : (process.env[n] = saved[i])));
  }
}

test('no credentials: MISSING_API_KEY when the summarizer is created, not at the first request', () => {
  withEnv({}, () => {
    for (const options of [undefined, {}, { apiKey: '' }, { apiKey: null }, { model: 'claude-haiku-4-5' }, { baseURL: 'https://api.anthropic.com/' }, { headers: { 'x-api-key': null } }]) {
      assert.throws(
        () => anthropicSummarizer(options),
        (e) => e instanceof TypeError && e.code === 'MISSING_API_KEY' && /no API key: pass options\.apiKey/.test(e.message) && /ANTHROPIC_API_KEY/.test(e.message),
        JSON.stringify(options),
      );
    }
  });
  // An explicit null does not fall back to the environment.
  withEnv({ ANTHROPIC_API_KEY: 'sk-env' }, () => {
    assert.throws(() => anthropicSummarizer({ apiKey: null }), (e) => e.code === 'MISSING_API_KEY');
  });
});

test('credentials from options, headers, the environment; a custom fetch or a proxy may add their own', async (t) => {
  const api = await fakeApi(t);
  const sent = async (options) => {
    await anthropicSummarizer({ baseURL: api.url, ...options })(REQUEST);
    const h = api.requests.at(-1).headers;
    return { key: h['x-api-key'], auth: h.authorization };
  };
  await withEnv({ ANTHROPIC_API_KEY: 'sk-env', ANTHROPIC_AUTH_TOKEN: 'tok-env' }, async () => {
    // The environment, read when the caller gives no credentials of their own.
    assert.deepEqual(await sent({}), { key: 'sk-env', auth: 'Bearer tok-env' });
    assert.deepEqual(await sent({ apiKey: 'sk-own' }), { key: 'sk-own', auth: undefined });
    assert.deepEqual(await sent({ authToken: 'tok-own' }), { key: undefined, auth: 'Bearer tok-own' });
    assert.deepEqual(await sent({ headers: { authorization: 'Bearer proxy' } }), { key: undefined, auth: 'Bearer proxy' });
    assert.deepEqual(await sent({ apiKey: null, authToken: null }), { key: undefined, auth: undefined });
  });
  await withEnv({ ANTHROPIC_API_KEY: 'sk-env' }, async () => {
    assert.deepEqual(await sent({}), { key: 'sk-env', auth: undefined });
  });
  await withEnv({}, async () => {
    // No credentials, but a proxy at another baseURL may add them: created, sends none.
    assert.deepEqual(await sent({}), { key: undefined, auth: undefined });
    // Default baseURL with credentials in headers or options: created.
    for (const options of [{ headers: { 'X-Api-Key': 'k' } }, { headers: new Headers({ authorization: 'Bearer t' }) }, { authToken: 't' }, { apiKey: 'k' }]) {
      assert.equal(typeof anthropicSummarizer(options), 'function', JSON.stringify(options));
    }
    // A custom fetch may add them itself.
    let seen;
    const fetch = async (_url, init) => {
      seen = init.headers;
      return new Response(JSON.stringify({ id: 'm', type: 'message', role: 'assistant', model: 'x', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } }), { headers: { 'content-type': 'application/json' } });
    };
    await anthropicSummarizer({ fetch })(REQUEST);
    assert.equal(seen['x-api-key'], undefined);
  });
});

// ---- The built package ------------------------------------------------------------------------

test('the built package (pkg/) ships and re-exports anthropicSummarizer', async () => {
  assert.ok(existsSync(PKG + 'node.js'), 'run `bash scripts/build.sh` first');
  const cc = await import('../../pkg/node.js');
  assert.equal(typeof cc.anthropicSummarizer, 'function');
  // The declarations are copies; the JS is js/anthropic.js minified (scripts/package.mjs): the
  // same exports, and the entries re-export that very function.
  assert.equal(readFileSync(PKG + 'anthropic.d.ts', 'utf8'), readFileSync(JS + 'anthropic.d.ts', 'utf8'), 'pkg/anthropic.d.ts is a copy (stale pkg/? run `bash scripts/build.sh`)');
  const shipped = await import(PKG + 'anthropic.js');
  assert.deepEqual(Object.keys(shipped).sort(), Object.keys(await import(JS + 'anthropic.js')).sort());
  for (const f of ['web.js', 'node.js']) {
    assert.equal((await import(PKG + f)).anthropicSummarizer, shipped.anthropicSummarizer, `pkg/${f} re-exports it`);
  }
  assert.ok(readFileSync(PKG + 'index.d.ts', 'utf8').includes("export { anthropicSummarizer } from './anthropic.js';"), 'index.d.ts re-exports it');
  const meta = JSON.parse(readFileSync(PKG + 'package.json', 'utf8'));
  assert.ok(meta.files.includes('anthropic.js') && meta.files.includes('anthropic.d.ts'), 'in package files');
});

test("the library reads the PTL gap from the summarizer's error (parseContextOverflowError)", async (t) => {
  const cc = await import('../../pkg/node.js');
  const api = await fakeApi(t, reply.promptTooLong(210_000, 200_000));
  const { err } = await rejection(() => cc.anthropicSummarizer({ baseURL: api.url })(REQUEST));
  const overflow = cc.parseContextOverflowError(err);
  assert.ok(overflow, 'recognised as a context overflow');
  assert.equal(overflow.gap, 10_000);
});

// The request half of each fetch summarizer (anthropic-send.js, openai-send.js,
// langchain-send.js) is loaded on the summarizer's first call. Its load can fail (a page that
// lost its connection): the call then rejects with the summarizer's own retryable
// NETWORK_ERROR, and the next call loads it again.
test('the request half loads on the first call; a failed load is a retryable NETWORK_ERROR and the next call loads it', async () => {
  const { mkdtempSync, copyFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  const cases = [
    {
      front: 'anthropic.js', back: 'anthropic-send.js', errorName: 'AnthropicApiError',
      make: (m, fetch) => m.anthropicSummarizer({ apiKey: 'k', stream: false, maxRetries: 0, fetch }),
      body: { id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [{ type: 'text', text: 'S' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } },
    },
    {
      front: 'openai.js', back: 'openai-send.js', errorName: 'OpenAiApiError',
      make: (m, fetch) => m.openaiSummarizer({ apiKey: 'k', model: 'gpt-x', stream: false, maxRetries: 0, fetch }),
      body: { id: 'c1', object: 'chat.completion', model: 'gpt-x', choices: [{ index: 0, message: { role: 'assistant', content: 'S' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } },
    },
    {
      front: 'langchain.js', back: 'langchain-send.js', errorName: 'SummarizerError',
      make: (m) => m.langchainSummarizer({ invoke: async () => ({ content: 'S' }) }, { stream: false, maxRetries: 0 }),
    },
  ];
  for (const c of cases) {
    const dir = mkdtempSync(join(tmpdir(), 'cc-send-'));
    try {
      // The factory with only what it imports itself: a page loads these and no more.
      // (defaults.js: importAgain, which a retry of the request half goes through.)
      for (const f of [c.front, 'options.js', 'summarizer-error.js', 'defaults.js']) copyFileSync(join(JS, f), join(dir, f));
      const m = await import(pathToFileURL(join(dir, c.front)).href);
      let fetches = 0;
      const fetch = async () => {
        fetches++;
        return new Response(JSON.stringify(c.body), { status: 200, headers: { 'content-type': 'application/json' } });
      };
      const summarize = c.make(m, fetch);
      // Without its request half: the call rejects, coded, retryable, naming the file.
      const err = await summarize(REQUEST).then(() => assert.fail(`${c.front}: resolved without ${c.back}`), (e) => e);
      assert.equal(err.name, c.errorName, `${c.front}: ${err.stack}`);
      assert.equal(err.code, 'NETWORK_ERROR', c.front);
      assert.equal(err.retryable, true, c.front);
      assert.match(err.message, new RegExp(c.back.replace('.', '\\.')), c.front);
      assert.ok(err.cause, `${c.front}: the load error is the cause`);
      assert.equal(fetches, 0, `${c.front}: nothing was sent`);
      // The files arrive: the next call loads them and answers.
      for (const f of [c.back, 'http.js', 'summary-request.js']) copyFileSync(join(JS, f), join(dir, f));
      const res = await summarize(REQUEST);
      assert.equal(res.content[0].text, 'S', c.front);
      if (c.body) assert.equal(fetches, 1, c.front);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
});

test('an aborted signal is reported before the request is read or the request half loaded', async () => {
  let fetches = 0;
  const summarize = anthropicSummarizer({ apiKey: 'k', fetch: async () => { fetches++; throw new Error('not reached'); } });
  const ctl = new AbortController();
  ctl.abort(new Error('stop'));
  // A request JSON.stringify cannot write: the abort still comes first, as it always did.
  const err = await summarize({ ...REQUEST, metadata: { big: 1n } }, { signal: ctl.signal }).then(
    () => assert.fail('resolved'),
    (e) => e,
  );
  assert.equal(err.name, 'AbortError');
  assert.equal(err.code, 'ABORTED');
  assert.ok(err instanceof AnthropicApiError);
  assert.equal(fetches, 0);
});

test('a fetch whose answer has no streaming body: the stream read whole, a CR at its very end still ends its line', async () => {
  // CR line endings: the text's last character is a CR, which the parser holds back as a
  // possible half of a CRLF until the end of the stream says it is not.
  const text = encodeEvents(messageEvents('Whole-text summary.'), '\r');
  assert.ok(text.endsWith('\r'));
  const fetch = async () => ({
    ok: true,
    status: 200,
    statusText: 'OK',
    headers: new Headers({ 'content-type': 'text/event-stream' }),
    body: null,
    text: async () => text,
  });
  const got = [];
  const res = await anthropicSummarizer({ apiKey: 'k', fetch, maxRetries: 0 })(REQUEST, { onText: (t) => got.push(t) });
  assert.equal(res.content[0].text, 'Whole-text summary.');
  assert.equal(got.join(''), 'Whole-text summary.');
});
