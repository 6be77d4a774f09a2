// Ninth round of hostile inputs (the probe's H1–H5 and what it saw besides): prompt-too-long
// retries that resent the request just refused, summarizer headers given as pairs, hook
// answers that are built-in objects or a returned Error, simulation options whose report had
// no finite numbers, the message of a config window above its limit, header values and base
// URLs fetch refuses, and a Set given as readFileState.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as cc from '../../pkg/node.js';
import { anthropicSummarizer } from '../../pkg/anthropic.js';
import { openaiSummarizer } from '../../pkg/openai.js';

const MODEL = 'claude-sonnet-4-5';
const SMALL = fileURLToPath(new URL('../../../shared/transcripts/cc_small_short.jsonl', import.meta.url));

function rounds(n, size = 200) {
  const out = [];
  for (let i = 0; i < n; i++) {
    out.push({ role: 'user', content: `question ${i} ${'x'.repeat(size)}` });
    out.push({ role: 'assistant', content: `answer ${i} ${'y'.repeat(size)}` });
  }
  return out;
}

const summarize = async () => ({ content: [{ type: 'text', text: '<summary>short summary</summary>' }] });

test('H5: once a retry has cut the request to the latest request and the last round, the next refusal fails at once (no identical resend)', async () => {
  const sent = [];
  const tooLong = async (req) => {
    sent.push(JSON.stringify(req));
    throw Object.assign(new Error('prompt is too long: 250000 tokens > 200000 maximum'), { status: 400 });
  };
  await assert.rejects(cc.compactConversation(rounds(40), { model: MODEL, summarize: tooLong }), (e) => {
    assert.equal(e.code, 'PROMPT_TOO_LONG');
    assert.match(e.message, /no older turn is left to drop/);
    return true;
  });
  // Before: 4 calls, the last two byte-identical to the second.
  assert.equal(new Set(sent).size, sent.length, 'no request is sent twice');
  assert.equal(sent.length, 2);
  // The public truncation agrees when it keeps the latest request.
  const last = [{ role: 'user', content: 'question 39' }, { role: 'assistant', content: 'answer 39' }];
  const err = new Error('prompt is too long: 250000 tokens > 200000 maximum');
  assert.equal(cc.truncateHeadForPTLRetry(last, err, { keepLatestRequest: true }), null);
  // Without keeping it, the request goes for a marker; a second pass has nothing left.
  const marked = cc.truncateHeadForPTLRetry(last, err);
  assert.equal(cc.truncateHeadForPTLRetry(marked, err), null);
});

const okAnthropic = () =>
  new Response(
    JSON.stringify({ id: 'm', type: 'message', role: 'assistant', model: 'x', content: [{ type: 'text', text: '<summary>s</summary>' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } }),
    { status: 200, headers: { 'content-type': 'application/json' } },
  );
const okOpenai = () =>
  new Response(
    JSON.stringify({ id: 'c', object: 'chat.completion', model: 'g', choices: [{ index: 0, message: { role: 'assistant', content: '<summary>s</summary>' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } }),
    { status: 200, headers: { 'content-type': 'application/json' } },
  );
const REQUEST = { model: MODEL, max_tokens: 1000, system: 's', messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }] };

function makers(record) {
  return [
    ['anthropicSummarizer', (o) => anthropicSummarizer({ apiKey: 'k', stream: false, fetch: async (url, init) => (record(url, init), okAnthropic()), ...o })],
    ['openaiSummarizer', (o) => openaiSummarizer({ apiKey: 'k', stream: false, model: 'gpt-4o', fetch: async (url, init) => (record(url, init), okOpenai()), ...o })],
  ];
}

// The same summarizers on the default fetch: none given, so globalThis.fetch as it is when one is
// made (a stub recording the request here, put back once made).
function defaultMakers(record) {
  const onGlobal = (ok, make) => (o) => {
    const saved = globalThis.fetch;
    globalThis.fetch = async (url, init) => (record(url, init), ok());
    try {
      return make(o);
    } finally {
      globalThis.fetch = saved;
    }
  };
  return [
    ['anthropicSummarizer', onGlobal(okAnthropic, (o) => anthropicSummarizer({ apiKey: 'k', stream: false, ...o }))],
    ['openaiSummarizer', onGlobal(okOpenai, (o) => openaiSummarizer({ apiKey: 'k', stream: false, model: 'gpt-4o', ...o }))],
  ];
}

test('H3: summarizer headers in every form fetch takes (pairs, Headers, Map, record) reach the request; other forms are refused', async () => {
  let sent;
  let url;
  for (const [name, make] of makers((u, init) => ((url = u), (sent = new Headers(init.headers))))) {
    for (const headers of [
      [['anthropic-beta', 'context-management-2025-06-27'], ['X-Trace', 't1']],
      new Headers([['anthropic-beta', 'context-management-2025-06-27'], ['x-trace', 't1']]),
      new Map([['anthropic-beta', 'context-management-2025-06-27'], ['x-trace', 't1']]),
      { 'anthropic-beta': 'context-management-2025-06-27', 'x-trace': 't1' },
    ]) {
      sent = undefined;
      await make({ headers })(REQUEST, {});
      assert.equal(sent.get('anthropic-beta'), 'context-management-2025-06-27', name);
      assert.equal(sent.get('x-trace'), 't1', name);
      // Before: headers "0" and "1".
      assert.equal(sent.get('0'), null, name);
    }
    // A pair whose value is null removes the default, as in the record form.
    await make({ headers: [['content-type', null], ['content-type', 'application/json']] })(REQUEST, {});
    assert.equal(sent.get('content-type'), 'application/json');
    for (const [headers, words] of [
      [[['x-a']], /headers\[0\] must be a \[name, value\] pair, not an array of 1/],
      [['x-a: 1'], /headers\[0\] must be a \[name, value\] pair, not a string/],
      ['x-a: 1', /headers must be an object, an array of \[name, value\] pairs or a Headers, not a string/],
    ]) {
      assert.throws(() => make({ headers }), (e) => e.code === 'INVALID_ARGUMENT' && words.test(e.message), `${name} ${JSON.stringify(headers)}`);
    }
    // A query in baseURL stays after the path (an Azure `api-version`, say).
    await make({ baseURL: 'https://proxy.example/base/?api-version=1' })(REQUEST, {});
    assert.match(url, /^https:\/\/proxy\.example\/base\/(v1\/messages|chat\/completions)\?api-version=1$/, url);
  }
});

test('with the default fetch, a header name, a header value or a baseURL fetch refuses is a coded configuration error at once, not a retried NETWORK_ERROR', async () => {
  for (const [name, make] of defaultMakers(() => {})) {
    for (const [options, words] of [
      [{ headers: { 'x a': '1' } }, /"x a" is not a header name fetch can send/],
      [{ apiKey: 'sk-ant\r\nx' }, /header \(from options\.apiKey\) holds a line break/],
      [{ apiKey: 'sk-‘quoted’' }, /holds the character U\+2018, which is not Latin-1/],
      [{ headers: { 'x-trace': 'a\nb' } }, /the x-trace header \(from options\.headers\) holds a line break/],
      [{ headers: { 'x-trace': 'a\0b' } }, /holds a NUL character/],
      [{ baseURL: 'javascript:alert(1)' }, /baseURL must be an http\(s\) URL, not javascript:/],
      [{ baseURL: 'file:///etc/passwd' }, /baseURL must be an http\(s\) URL, not file:/],
      [{ baseURL: 'https://h/p?x=1#frag' }, /baseURL has a fragment/],
    ]) {
      assert.throws(() => make(options), (e) => e.code === 'INVALID_ARGUMENT' && words.test(e.message), `${name} ${JSON.stringify(options)}`);
    }
    // The key itself is never quoted in the message.
    assert.throws(() => make({ apiKey: 'sk-secret-\n-value' }), (e) => !e.message.includes('secret'));
    // Spaces and line breaks at either end are trimmed by fetch: accepted.
    await make({ apiKey: 'sk-x\r\n' })(REQUEST, {});
  }
});

test('the caller\'s own fetch is given the header names and values and the baseURL scheme the default fetch refuses, as they were given', async () => {
  let sent;
  let url;
  for (const [name, make] of makers((u, init) => ((url = u), (sent = init.headers)))) {
    const headers = { 'x-user-name': 'Zoë ✓', 'x-title': '東京 agent', 'x route': 'a', 'x-line': 'a\nb' };
    sent = undefined;
    await make({ headers, baseURL: 'ipc://local-gateway/v1' })(REQUEST, {});
    for (const [k, v] of Object.entries(headers)) assert.equal(sent[k], v, `${name} ${k}`);
    assert.match(url, /^ipc:\/\/local-gateway\/v1\/(v1\/messages|chat\/completions)$/, `${name} ${url}`);
    // What fetch never takes with any fetch: a name that is not a string, a baseURL that is not a URL or has a fragment.
    for (const [options, words] of [
      [{ headers: new Map([[1, 'a']]) }, /headers: a number is not a header name/],
      [{ baseURL: 'not a url' }, /baseURL is not a URL/],
      [{ baseURL: 'ipc://h/p#frag' }, /baseURL has a fragment/],
    ]) {
      assert.throws(() => make(options), (e) => e.code === 'INVALID_ARGUMENT' && words.test(e.message), `${name} ${JSON.stringify(options)}`);
    }
  }
  // The default fetch still refuses them.
  for (const [name, make] of defaultMakers(() => {})) {
    for (const options of [{ headers: { 'x-title': '東京 agent' } }, { headers: { 'x route': 'a' } }, { baseURL: 'ipc://local-gateway/v1' }]) {
      assert.throws(() => make(options), (e) => e.code === 'INVALID_ARGUMENT', `${name} ${JSON.stringify(options)}`);
    }
  }
});

test('H2: a hook answering a Date, RegExp, ArrayBuffer, WeakMap, Symbol or function is reported once in hookErrors; a returned Error is reported, never used as context', async () => {
  const conv = rounds(30);
  for (const [answer, named] of [
    [new Date(0), 'a Date'],
    [/x/, 'a RegExp'],
    [new ArrayBuffer(8), 'an ArrayBuffer'],
    [new WeakMap(), 'a WeakMap'],
    [new Uint8Array(2), 'a Uint8Array'],
    [Symbol('s'), 'a Symbol'],
    [10n, 'a BigInt'],
    [() => 'text', 'a function'],
  ]) {
    for (const hook of ['sessionStart', 'preCompact', 'postCompact']) {
      const r = await cc.compactConversation(conv, { model: MODEL, summarize, hooks: { [hook]: () => answer } });
      assert.equal(r.hookErrors.length, 1, `${hook} ${named}: ${JSON.stringify(r.hookErrors)}`);
      const m = r.hookErrors[0].message;
      assert.equal(r.hookErrors[0].hook, hook);
      assert.equal(m.split(named).length - 1, 1, m);
      assert.doesNotMatch(m, /neither text nor an object/, m);
    }
  }
  for (const hook of ['sessionStart', 'preCompact', 'postCompact']) {
    const r = await cc.compactConversation(conv, {
      model: MODEL,
      summarize,
      hooks: { [hook]: async () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:8080')).catch((e) => e) },
    });
    assert.equal(r.hookErrors.length, 1, hook);
    assert.match(r.hookErrors[0].message, /returned an Error \(instead of throwing it\): ECONNREFUSED 127\.0\.0\.1:8080/);
    assert.doesNotMatch(JSON.stringify(cc.buildPostCompactMessages(r)), /ECONNREFUSED/, hook);
    assert.equal(r.userDisplayMessage, undefined);
  }
  // A plain object and a class instance with the answer's fields are still read.
  class Answer {
    constructor() {
      this.additionalContext = 'from a class';
    }
  }
  const r = await cc.compactConversation(conv, { model: MODEL, summarize, hooks: { sessionStart: () => new Answer() } });
  assert.deepEqual(r.hookErrors, []);
  assert.match(JSON.stringify(cc.buildPostCompactMessages(r)), /from a class/);
});

test('H1: simulateSession refuses prices, speeds and token counts whose report would hold no finite number, naming the field and the limit', async () => {
  const session = readFileSync(SMALL, 'utf8');
  const early = { name: 'early', compact: { threshold: 1 } };
  for (const [options, words] of [
    [{ prices: { output: 1e308 } }, /^prices\.output must be at most 1,000,000 dollars per million tokens \(a dollar a token\), got 1e\+308$/],
    // Named as given, not as the cache price derived from it.
    [{ prices: { input: 1e308 } }, /^prices\.input must be at most 1,000,000/],
    [{ summaryTokensPerSecond: 5e-324 }, /^summaryTokensPerSecond must be a finite number of at least 0\.001 \(tokens per second\), got 5e-324$/],
    [{ hiddenTokens: 1e13 }, /^hiddenTokens must be at most 1,000,000,000,000 tokens/],
  ]) {
    await assert.rejects(cc.simulateSession(session, { policies: [early, 'claude-code'], ...options }), (e) => {
      assert.equal(e.code, 'INVALID_ARGUMENT');
      assert.match(e.message, words);
      return true;
    });
  }
  // At the limits every number of the report is finite, and a policy is recommended.
  const r = await cc.simulateSession(session, {
    policies: [early, 'claude-code'],
    prices: { input: 1e6, output: 1e6 },
    summaryTokensPerSecond: 0.001,
  });
  for (const p of r.policies) {
    assert.ok(Number.isFinite(p.cost), `${p.name} cost ${p.cost}`);
    assert.ok(Number.isFinite(p.blockedSeconds), `${p.name} blockedSeconds ${p.blockedSeconds}`);
    assert.ok(p.relativeCost === undefined || p.relativeCost === null || Number.isFinite(p.relativeCost));
  }
  assert.equal(typeof r.recommended, 'string');
});

test('H4: a config window above 10^12 tokens is refused naming that limit, a huge value written as JavaScript writes it', () => {
  for (const key of ['contextWindow', 'summaryContextWindow', 'autoCompactWindow', 'maxOutputTokens', 'blockingLimitOverride']) {
    for (const [v, got] of [[1e13, '10000000000000'], [1e300, '1e+300']]) {
      assert.throws(
        () => cc.getAutoCompactThreshold(MODEL, { [key]: v }),
        (e) => e.code === 'INVALID_CONFIG' && e.message === `config.${key} must be at most 1,000,000,000,000 tokens, got ${got}`,
        `${key}=${v}`,
      );
    }
    assert.throws(() => cc.getAutoCompactThreshold(MODEL, { [key]: 0.5 }), (e) => /at least 1\), got 0\.5$/.test(e.message));
  }
});

test('a Set (or another built-in that is not a Map) given as readFileState is refused, not read as empty and then cleared', async () => {
  const held = new Set(['src/a.rs']);
  await assert.rejects(cc.compactConversation(rounds(10), { model: MODEL, summarize, readFileState: held }), (e) => {
    assert.equal(e.code, 'INVALID_ARGUMENT');
    assert.match(e.message, /context\.readFileState must be a Map, an object or an array, not a Set/);
    return true;
  });
  assert.equal(held.size, 1, 'not cleared');
  await assert.rejects(cc.compactConversation(rounds(10), { model: MODEL, summarize, invokedSkills: new WeakMap() }), /invokedSkills must be a Map, an object or an array, not a WeakMap/);
  // A Map is read and cleared on success, as before.
  const files = new Map([['src/a.rs', { content: 'fn a() {}', timestamp: Date.now() }]]);
  await cc.compactConversation(rounds(10), { model: MODEL, summarize, readFileState: files });
  assert.equal(files.size, 0);
});
