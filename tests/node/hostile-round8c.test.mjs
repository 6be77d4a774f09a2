// Eighth round of hostile inputs, part c (the probe's H6/H7): the summarizers when what they
// call rejects with a value that cannot be turned into text (a null-prototype object, an
// object whose toString or Symbol.toPrimitive throws, a revoked Proxy, an Error whose message
// getter throws or whose cause is such a value); aiSdkSummarizer wrapping errors that are not
// the AI SDK's; and error messages that quote server text (headers, bodies) cut short.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { anthropicSummarizer, AnthropicApiError } from '../../js/anthropic.js';
import { openaiSummarizer, OpenAiApiError } from '../../js/openai.js';
import { langchainSummarizer } from '../../js/langchain.js';
import { aiSdkSummarizer } from '../../js/ai-sdk.js';
import { SummarizerError } from '../../js/summary-request.js';
import { describe as describeError } from '../../js/http.js';

const REQUEST = Object.freeze({ model: 'claude-sonnet-4-5', system: 'sys', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
const enc = new TextEncoder();

/** Values a callee may reject with that `String(v)` (or reading them) throws on. */
const HOSTILE = {
  'Object.create(null)': () => Object.create(null),
  'an object whose toString throws': () => ({
    toString() {
      throw new Error('toString threw');
    },
  }),
  'an object whose Symbol.toPrimitive throws': () => ({
    [Symbol.toPrimitive]() {
      throw new Error('toPrimitive threw');
    },
  }),
  'a revoked Proxy': () => {
    const r = Proxy.revocable({}, {});
    r.revoke();
    return r.proxy;
  },
  'an Error whose message getter throws': () => {
    const e = new Error('x');
    Object.defineProperty(e, 'message', {
      get() {
        throw new Error('message getter threw');
      },
    });
    return e;
  },
  'an Error whose cause is Object.create(null)': () => new Error('fetch failed', { cause: Object.create(null) }),
};

// ---- The fetch-based summarizers: anthropic, openai chat, openai responses ----------------------

const ANSWERS = {
  anthropic: { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } },
  'openai chat': { id: 'c1', model: 'gpt-4o', choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } },
  'openai responses': { id: 'r1', status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text', text: 'ok' }] }], usage: { input_tokens: 1, output_tokens: 1 } },
};
const FETCH_SUMMARIZERS = {
  anthropic: { make: (o) => anthropicSummarizer({ apiKey: 'k', retryBaseMs: 1, retryMaxMs: 2, ...o }), ErrorClass: AnthropicApiError },
  'openai chat': { make: (o) => openaiSummarizer({ apiKey: 'k', model: 'gpt-4o', retryBaseMs: 1, retryMaxMs: 2, ...o }), ErrorClass: OpenAiApiError },
  'openai responses': { make: (o) => openaiSummarizer({ apiKey: 'k', model: 'gpt-4o', api: 'responses', retryBaseMs: 1, retryMaxMs: 2, ...o }), ErrorClass: OpenAiApiError },
};

const json = (body, init = {}) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' }, ...init });

/** A response whose body gives `first` then errors with `error`. */
function failingBody(contentType, first, error) {
  let sent = false;
  const body = new ReadableStream({
    pull(c) {
      if (!sent) {
        sent = true;
        c.enqueue(enc.encode(first));
      } else c.error(error);
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': contentType } });
}

/** Where the failure happens: the fetch call, the event stream's body, the JSON body. */
const FAILURE_POINTS = {
  'fetch rejects': (v) => Promise.reject(v),
  'the event stream errors': (v) => failingBody('text/event-stream', ': ping\n\n', v),
  'the JSON body errors': (v) => failingBody('application/json', '{"id"', v),
};

for (const [name, { make, ErrorClass }] of Object.entries(FETCH_SUMMARIZERS)) {
  test(`${name}: fetch or the body failing with a value that cannot be turned into text is a retried NETWORK_ERROR, never a raw TypeError`, async () => {
    for (const [hostile, value] of Object.entries(HOSTILE)) {
      for (const [where, fail] of Object.entries(FAILURE_POINTS)) {
        const what = `${hostile}, ${where}`;
        // Once: the next attempt answers.
        let calls = 0;
        const flaky = make({ maxRetries: 2, fetch: async () => (++calls === 1 ? fail(value()) : json(ANSWERS[name])) });
        const ok = await flaky(REQUEST).catch((e) => e);
        assert.ok(!(ok instanceof Error), `${what}: ${ok?.constructor?.name} ${ok?.code} ${ok?.message}`);
        assert.equal(ok.content[0].text, 'ok', what);
        assert.equal(calls, 2, `${what}: retried once`);
        // Always, no retries: the summarizer's own coded error with the value as its cause.
        const thrown = value();
        const e = await make({ maxRetries: 0, fetch: async () => fail(thrown) })(REQUEST).then(() => null, (x) => x);
        assert.ok(e instanceof ErrorClass, `${what}: ${e?.constructor?.name}: ${e?.message}`);
        assert.equal(e.code, 'NETWORK_ERROR', what);
        assert.equal(e.retryable, true, what);
        assert.equal(e.cause, thrown, `${what}: the value is the cause`);
        assert.equal(typeof e.message, 'string', what);
      }
    }
  });
}

test('anthropic: a hostile fetch rejection inside compactConversation is the summarizer failure with the NETWORK_ERROR cause', async () => {
  const msgs = [];
  for (let i = 0; i < 20; i++) msgs.push({ role: 'user', content: `q${i} ${'x'.repeat(200)}` }, { role: 'assistant', content: `a${i} ${'y'.repeat(200)}` });
  const summarize = anthropicSummarizer({ apiKey: 'k', maxRetries: 0, fetch: () => Promise.reject(Object.create(null)) });
  const e = await cc.compactConversation(msgs, { model: 'claude-sonnet-4-5', summarize, retryBaseMs: 1 }).then(() => null, (x) => x);
  assert.ok(e instanceof Error, String(e));
  assert.equal(e.cause?.code, 'NETWORK_ERROR', `${e.code}: ${e.message}`);
  assert.match(e.message, /null prototype/);
});

// ---- describe(): any thrown value ---------------------------------------------------------------

test('describe: never throws, for any thrown value; says what kind of value it could not read', () => {
  for (const [hostile, value] of Object.entries(HOSTILE)) {
    const d = describeError(value());
    assert.equal(typeof d, 'string', hostile);
    assert.ok(d.length > 0, hostile);
  }
  assert.match(describeError(Object.create(null)), /null prototype/);
  assert.match(describeError(HOSTILE['a revoked Proxy']()), /revoked Proxy/);
  assert.match(describeError(HOSTILE['an object whose toString throws']()), /conversion to text throws/);
  assert.equal(describeError(new Error('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) })), 'fetch failed (connect ECONNREFUSED)');
  assert.equal(describeError(new Error('fetch failed', { cause: { code: 'ECONNRESET' } })), 'fetch failed (ECONNRESET)');
  assert.equal(describeError({ message: 'a plain object with a message' }), 'a plain object with a message');
  assert.equal(describeError(Symbol('s')), 'Symbol(s)');
  assert.equal(describeError(undefined), 'undefined');
});

// ---- LangChain --------------------------------------------------------------------------------------

/** A chat model whose invoke / stream fail with `value` on the first `failures` calls. */
function flakyChatModel(value, failures, where) {
  const model = {
    calls: 0,
    async invoke() {
      if (++model.calls <= failures) throw value;
      return { content: 'ok', response_metadata: { finish_reason: 'stop' } };
    },
    async stream() {
      const n = ++model.calls;
      return (async function* () {
        yield { content: 'o' };
        if (n <= failures) throw value;
        yield { content: 'k' };
      })();
    },
  };
  return where === 'invoke' ? { invoke: model.invoke, get calls() { return model.calls; } } : { stream: model.stream, get calls() { return model.calls; } };
}

test('langchain: invoke, or the stream, failing with a value that cannot be turned into text is a coded SummarizerError, never a raw TypeError', async () => {
  for (const [hostile, value] of Object.entries(HOSTILE)) {
    for (const where of ['invoke', 'stream']) {
      const thrown = value();
      const model = flakyChatModel(thrown, Infinity, where);
      const e = await langchainSummarizer(model, { stream: where === 'stream', maxRetries: 0 })(REQUEST).then(() => null, (x) => x);
      assert.ok(e instanceof SummarizerError, `${hostile}, ${where}: ${e?.constructor?.name}: ${e?.message}`);
      assert.ok(['PROVIDER_ERROR', 'NETWORK_ERROR'].includes(e.code), `${hostile}, ${where}: ${e.code}`);
      assert.equal(e.cause, thrown, `${hostile}, ${where}`);
    }
  }
  // A null-prototype error object naming a network failure is one, and is retried.
  for (const where of ['invoke', 'stream']) {
    const model = flakyChatModel(Object.assign(Object.create(null), { message: 'socket hang up' }), 1, where);
    const r = await langchainSummarizer(model, { stream: where === 'stream', maxRetries: 2, retryBaseMs: 1, retryMaxMs: 2 })(REQUEST).catch((x) => x);
    assert.ok(!(r instanceof Error), `${where}: ${r?.code} ${r?.message}`);
    assert.equal(model.calls, 2, `${where}: retried`);
    const e = await langchainSummarizer(flakyChatModel(Object.assign(Object.create(null), { message: 'socket hang up' }), Infinity, where), { stream: where === 'stream', maxRetries: 0 })(REQUEST).then(() => null, (x) => x);
    assert.equal(e?.code, 'NETWORK_ERROR', `${where}: ${e?.message}`);
    assert.equal(e.retryable, true);
    assert.match(e.message, /socket hang up/);
  }
});

// ---- AI SDK -------------------------------------------------------------------------------------------

/** generateText / streamText stand-ins failing with `value` (the stream: its iterator, or an `error` part). */
const AI_FAILURES = {
  'generateText rejects': (value) => ({ generateText: async () => { throw value; }, stream: false }),
  'the fullStream iterator rejects': (value) => ({
    streamText: () => ({
      fullStream: (async function* () {
        yield { type: 'text-delta', text: 'o' };
        throw value;
      })(),
      response: Promise.resolve({}),
    }),
  }),
  'the stream sends an error part': (value) => ({
    streamText: () => ({
      fullStream: (async function* () {
        yield { type: 'error', error: value };
      })(),
      response: Promise.resolve({}),
    }),
  }),
};

test('aiSdkSummarizer: a failure with a value that cannot be turned into text is a coded SummarizerError, never a raw TypeError', async () => {
  for (const [hostile, value] of Object.entries(HOSTILE)) {
    for (const [where, options] of Object.entries(AI_FAILURES)) {
      const thrown = value();
      const e = await aiSdkSummarizer('m', { maxRetries: 0, ...options(thrown) })(REQUEST).then(() => null, (x) => x);
      assert.ok(e instanceof SummarizerError, `${hostile}, ${where}: ${e?.constructor?.name}: ${e?.message}`);
      assert.equal(typeof e.code, 'string', `${hostile}, ${where}`);
      assert.equal(e.cause, thrown, `${hostile}, ${where}`);
    }
  }
});

test('aiSdkSummarizer: what is not an AI SDK error (a string, a plain Error) is wrapped in a SummarizerError with it as cause', async () => {
  const wrapped = async (thrown, where = 'generateText rejects') => {
    const e = await aiSdkSummarizer('m', { maxRetries: 0, ...AI_FAILURES[where](thrown) })(REQUEST).then(() => null, (x) => x);
    assert.ok(e instanceof SummarizerError, `${where}: ${e?.constructor?.name}: ${String(e?.message ?? e)}`);
    assert.equal(e.cause, thrown);
    assert.equal(e.provider, 'ai-sdk');
    return e;
  };
  for (const where of ['generateText rejects', 'the fullStream iterator rejects']) {
    const s = await wrapped('a bare string', where);
    assert.equal(s.code, 'PROVIDER_ERROR');
    assert.match(s.message, /a bare string/);
    const p = await wrapped(new Error('model exploded'), where);
    assert.equal(p.code, 'PROVIDER_ERROR');
    assert.equal(p.retryable, false);
    assert.match(p.message, /^aiSdkSummarizer: m failed: model exploded/);
    const t = await wrapped(new TypeError('x is not a function'), where);
    assert.equal(t.code, 'PROVIDER_ERROR');
    // A network failure's words: NETWORK_ERROR, retryable.
    const n = await wrapped(new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } }), where);
    assert.equal(n.code, 'NETWORK_ERROR');
    assert.equal(n.retryable, true);
    // A provider's prompt-too-long words, as any other error: PROMPT_TOO_LONG, the words kept.
    const ptl = await wrapped(new Error('prompt is too long: 213462 tokens > 200000 maximum'), where);
    assert.equal(ptl.code, 'PROMPT_TOO_LONG');
    assert.deepEqual([cc.parseContextOverflowError(ptl.message)?.actual, cc.parseContextOverflowError(ptl.message)?.limit], [213462, 200000]);
  }
  // A stream error part of a plain object (a provider's error JSON) says its message.
  const part = await wrapped({ type: 'overloaded_error', message: 'Overloaded' }, 'the stream sends an error part');
  assert.match(part.message, /Overloaded/);
});

test("aiSdkSummarizer: ABORTED and TIMEOUT are as they were; an exception of the caller's onText passes through untouched", async () => {
  const ac = new AbortController();
  const hanging = aiSdkSummarizer('m', { stream: false, generateText: () => new Promise(() => {}), timeoutMs: 20 });
  const t = await hanging(REQUEST).then(() => null, (x) => x);
  assert.equal(t?.code, 'TIMEOUT');
  setTimeout(() => ac.abort(), 10);
  const a = await aiSdkSummarizer('m', { stream: false, generateText: () => new Promise(() => {}) })(REQUEST, { signal: ac.signal }).then(() => null, (x) => x);
  assert.equal(a?.code, 'ABORTED');
  assert.equal(a.name, 'AbortError');
  // A model that rejects with an AbortError of its own after the caller aborted: ABORTED.
  const ac2 = new AbortController();
  const own = aiSdkSummarizer('m', {
    stream: false,
    generateText: () => {
      ac2.abort();
      return Promise.reject(Object.assign(new Error('This operation was aborted'), { name: 'AbortError' }));
    },
  });
  const a2 = await own(REQUEST, { signal: ac2.signal }).then(() => null, (x) => x);
  assert.equal(a2?.code, 'ABORTED');

  for (const mine of [new Error('my UI broke'), 'a string from onText']) {
    const onText = () => {
      throw mine;
    };
    const gen = await aiSdkSummarizer('m', { stream: false, generateText: async () => ({ text: 'ok' }) })(REQUEST, { onText }).then(() => null, (x) => x);
    assert.equal(gen, mine, 'generateText: passed through');
    const str = await aiSdkSummarizer('m', {
      streamText: () => ({ fullStream: (async function* () { yield { type: 'text-delta', text: 'ok' }; })(), response: Promise.resolve({}) }),
    })(REQUEST, { onText }).then(() => null, (x) => x);
    assert.equal(str, mine, 'streamText: passed through');
  }
});

// ---- Messages quote server text cut short ---------------------------------------------------------

const MB = 1_000_000;
/** The longest message any of these errors may have. */
const BOUND = 2_000;

test('anthropic: error messages quote headers and bodies cut short; the whole values stay on the error', async () => {
  const bigId = 'r'.repeat(MB);
  const call = (fetch) => anthropicSummarizer({ apiKey: 'k', maxRetries: 0, fetch })(REQUEST).then(() => null, (x) => x);
  // A 1 MB request-id (and a 5 MB other header) on a 500.
  const e1 = await call(async () => new Response('{}', { status: 500, headers: { 'x-big': 'a'.repeat(5 * MB), 'request-id': bigId } }));
  assert.equal(e1.code, 'ANTHROPIC_API_ERROR');
  assert.ok(e1.message.length < BOUND, `message of ${e1.message.length} characters`);
  assert.match(e1.message, /\(request-id r+… \(\d+ more characters\)\)$/);
  assert.equal(e1.requestId, bigId);
  assert.equal(e1.headers['request-id'], bigId);
  // A 1 MB API message and type.
  const body = { type: 'error', error: { type: 't'.repeat(MB), message: 'm'.repeat(MB) } };
  const e2 = await call(async () => new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json' } }));
  assert.ok(e2.message.length < BOUND, `message of ${e2.message.length} characters`);
  assert.deepEqual(e2.error, body);
  // A 1 MB page that is not JSON.
  const e3 = await call(async () => new Response('<html>' + 'p'.repeat(MB), { status: 502 }));
  assert.ok(e3.message.length < BOUND, `message of ${e3.message.length} characters`);
  assert.match(e3.message, /more characters\)/);
  assert.equal(e3.error.length, MB + 6);
  // A 1 MB error event in the stream, with a 1 MB request-id.
  const sse = `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'o'.repeat(MB) } })}\n\n`;
  const e4 = await call(async () => new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream', 'request-id': bigId } }));
  assert.equal(e4.status, 529);
  assert.ok(e4.message.length < BOUND, `message of ${e4.message.length} characters`);
  assert.equal(e4.error.error.message.length, MB);
  assert.equal(e4.requestId, bigId);
  // A fetch rejecting with a 1 MB message (and cause).
  const e5 = await call(async () => {
    throw new Error('f'.repeat(MB), { cause: new Error('c'.repeat(MB)) });
  });
  assert.equal(e5.code, 'NETWORK_ERROR');
  assert.ok(e5.message.length < BOUND, `message of ${e5.message.length} characters`);
  assert.equal(e5.cause.message.length, MB);
});

test("anthropic: a stream error event's type that names an Object.prototype member has no status", async () => {
  for (const type of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const sse = `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type, message: 'odd' } })}\n\n`;
    const e = await anthropicSummarizer({ apiKey: 'k', maxRetries: 0, fetch: async () => new Response(sse, { headers: { 'content-type': 'text/event-stream' } }) })(REQUEST).then(() => null, (x) => x);
    assert.equal(e?.code, 'ANTHROPIC_API_ERROR', type);
    assert.equal(e.status, undefined, type);
    assert.doesNotMatch(e.message, /function|native code/, type);
  }
});

test('openai: error messages quote headers and bodies cut short; the whole values stay on the error', async () => {
  const bigId = 'r'.repeat(MB);
  for (const api of ['chat', 'responses']) {
    const call = (fetch) => openaiSummarizer({ apiKey: 'k', model: 'gpt-4o', api, maxRetries: 0, fetch })(REQUEST).then(() => null, (x) => x);
    const e1 = await call(async () => new Response('{}', { status: 500, headers: { 'x-request-id': bigId } }));
    assert.ok(e1.message.length < BOUND, `${api}: message of ${e1.message.length} characters`);
    assert.equal(e1.requestId, bigId);
    const body = { error: { type: 't'.repeat(MB), code: 'c'.repeat(MB), message: 'm'.repeat(MB) } };
    const e2 = await call(async () => new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json' } }));
    assert.ok(e2.message.length < BOUND, `${api}: message of ${e2.message.length} characters`);
    assert.deepEqual(e2.error, body);
    const sse = `data: ${JSON.stringify({ type: 'error', error: { type: 't'.repeat(MB), code: 'c'.repeat(MB), message: 'm'.repeat(MB) } })}\n\n`;
    const e3 = await call(async () => new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream', 'x-request-id': bigId } }));
    assert.ok(e3 instanceof OpenAiApiError, `${api}: ${e3?.message?.slice(0, 200)}`);
    assert.ok(e3.message.length < BOUND, `${api}: message of ${e3.message.length} characters`);
  }
});

test('langchain and ai-sdk: a provider error of 1 MB is quoted cut short; prompt-too-long words past the cut are still in the message', async () => {
  const huge = new Error('w'.repeat(MB));
  const lc = await langchainSummarizer({ invoke: async () => { throw huge; } }, { stream: false, maxRetries: 0 })(REQUEST).then(() => null, (x) => x);
  assert.ok(lc.message.length < BOUND, `langchain: message of ${lc.message.length} characters`);
  assert.equal(lc.cause, huge);
  const ai = await aiSdkSummarizer('m', { stream: false, maxRetries: 0, generateText: async () => { throw huge; } })(REQUEST).then(() => null, (x) => x);
  assert.ok(ai instanceof SummarizerError && ai.message.length < BOUND, `ai-sdk: message of ${ai?.message?.length} characters`);
  assert.equal(ai.cause, huge);

  // The provider's words after 5,000 characters of something else: still PROMPT_TOO_LONG, and
  // the message still has what the library parses.
  const late = new Error(`${'z'.repeat(5_000)} prompt is too long: 213462 tokens > 200000 maximum ${'z'.repeat(MB)}`);
  for (const [who, e] of [
    ['langchain', await langchainSummarizer({ invoke: async () => { throw late; } }, { stream: false, maxRetries: 0 })(REQUEST).then(() => null, (x) => x)],
    ['ai-sdk', await aiSdkSummarizer('m', { stream: false, maxRetries: 0, generateText: async () => { throw late; } })(REQUEST).then(() => null, (x) => x)],
  ]) {
    assert.equal(e?.code, 'PROMPT_TOO_LONG', who);
    assert.ok(e.message.length < BOUND, `${who}: message of ${e.message.length} characters`);
    const parsed = cc.parseContextOverflowError(e.message);
    assert.deepEqual([parsed?.actual, parsed?.limit], [213462, 200000], who);
  }
});
