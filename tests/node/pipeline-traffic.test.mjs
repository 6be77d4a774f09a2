// The pipeline with real traffic: anthropicSummarizer (from the built package) talking over
// real fetch to a local fake Messages API on 127.0.0.1 (tests/fake-api/server.mjs), used as
// the `summarize` callback of compactConversation. One server per test, closed after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { startFakeApi, reply } from '../fake-api/server.mjs';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const { OPUS } = h;
const SUMMARY = '<analysis>went through it</analysis>\n<summary>\n1. Primary request: refactor the parser.\n2. Pending: tests.\n</summary>';

/** Every fake API started by this file (checked by the last test). */
const started = [];

/** Starts the fake API for one test and closes it when the test ends. */
async function fakeApi(t, handler) {
  const api = await startFakeApi(handler);
  started.push(api);
  t.after(() => api.close());
  return api;
}

const summarizerFor = (api, o = {}) => cc.anthropicSummarizer({ apiKey: 'sk-test-pipeline', baseURL: api.url, retryBaseMs: 1, ...o });

test('a normal JSON answer: the request on the wire, the result from the body', async (t) => {
  const api = await fakeApi(t, reply.message(SUMMARY, { inputTokens: 7_777, outputTokens: 333 }));
  const msgs = h.apiConversation({ rounds: 8 });
  const before = structuredClone(msgs);
  const r = await cc.compactConversation(msgs, { model: OPUS, summarize: summarizerFor(api, { stream: false }) }, {});
  assert.equal(api.requests.length, 1);
  const req = api.requests[0];
  assert.equal(req.method, 'POST');
  assert.equal(req.path, '/v1/messages');
  assert.equal(req.headers['x-api-key'], 'sk-test-pipeline');
  assert.ok(req.headers['anthropic-version']);
  assert.equal(req.headers['anthropic-dangerous-direct-browser-access'], 'true');
  assert.equal(req.body.model, OPUS);
  assert.ok(req.body.max_tokens <= 20_000);
  assert.equal(typeof req.body.system, 'string');
  assert.deepEqual(h.apiProblems(req.body.messages), [], 'the summary request is a valid conversation');
  assert.match(r.summary, /refactor the parser/);
  assert.doesNotMatch(r.summary, /went through it/);
  assert.deepEqual(r.compactionUsage, { input_tokens: 7_777, output_tokens: 333, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  assert.equal(r.postCompactTokenCount, 8_110);
  assert.deepStrictEqual(msgs, before);
  h.assertValidForApi(cc.buildPostCompactMessages(r), before);
});

test('an SSE stream: onText gets the chunks, onProgress the phases', async (t) => {
  const api = await fakeApi(t, reply.stream(SUMMARY, { pieces: ['<analysis>went ', 'through it</analysis>\n<summary>\n1. Primary ', 'request: refactor the parser.\n', '2. Pending: tests.\n</summary>'] }));
  const chunks = [];
  const events = [];
  const r = await cc.compactConversation(h.apiConversation({ rounds: 8 }), {
    model: OPUS,
    summarize: summarizerFor(api),
    onText: (text) => chunks.push(text),
    onProgress: (e) => events.push(e),
  }, {});
  assert.equal(api.requests[0].body.stream, true);
  assert.ok(chunks.length >= 2, `chunks: ${chunks.length}`);
  assert.equal(chunks.join(''), SUMMARY);
  assert.match(r.summary, /Pending: tests/);
  const phases = events.map((e) => e.phase);
  assert.equal(phases[0], 'start');
  assert.ok(phases.includes('summarizing'));
  assert.equal(phases.at(-1), 'done');
  assert.ok(r.compactionUsage && r.compactionUsage.output_tokens > 0, 'usage assembled from the stream');
});

test('a streamed answer with a thinking block: only the text becomes the summary', async (t) => {
  const api = await fakeApi(t, reply.stream(SUMMARY, { thinking: 'THINKING_NOT_IN_SUMMARY' }));
  const r = await cc.compactConversation(h.apiConversation({ rounds: 6 }), { model: OPUS, summarize: summarizerFor(api) }, {});
  assert.match(r.summary, /refactor the parser/);
  assert.ok(!JSON.stringify(cc.buildPostCompactMessages(r)).includes('THINKING_NOT_IN_SUMMARY'));
});

test('a stream that ends with stop_reason max_tokens → SUMMARY_TRUNCATED, nothing committed', async (t) => {
  const api = await fakeApi(t, reply.stream(SUMMARY, { stopReason: 'max_tokens' }));
  const msgs = h.apiConversation({ rounds: 6 });
  const before = structuredClone(msgs);
  const rfs = new Map([['/a.ts', { content: 'const a = 1;', timestamp: 1 }]]);
  await h.rejectsWithCode(cc.compactConversation(msgs, { model: OPUS, summarize: summarizerFor(api), readFileState: rfs }, {}), 'SUMMARY_TRUNCATED');
  assert.equal(api.requests.length, 1);
  assert.deepStrictEqual(msgs, before);
  assert.equal(rfs.size, 1);
});

test('the 400 prompt-too-long body: the pipeline truncates and retries with a smaller request', async (t) => {
  let limit;
  const api = await fakeApi(t, (rec) => {
    const n = Math.ceil(rec.rawBody.length / 4);
    if (limit === undefined) limit = Math.floor(n * 0.6);
    if (n > limit) return reply.promptTooLong(n, limit);
    return reply.auto(SUMMARY);
  });
  const msgs = h.apiConversation({ rounds: 12 });
  const before = structuredClone(msgs);
  const r = await cc.compactConversation(msgs, { model: OPUS, summarize: summarizerFor(api) }, {});
  assert.ok(api.requests.length >= 2 && api.requests.length <= 4, `${api.requests.length} requests`);
  const sizes = api.requests.map((q) => q.rawBody.length);
  for (let i = 1; i < sizes.length; i++) assert.ok(sizes[i] < sizes[i - 1], `sizes ${sizes}`);
  assert.equal(r.ptlRetries, api.requests.length - 1);
  const last = JSON.stringify(api.requests.at(-1).body.messages);
  assert.match(last, /Q11:/, 'the latest round is kept');
  assert.doesNotMatch(last, /Q0:/, 'the oldest round is dropped');
  assert.deepStrictEqual(msgs, before);
});

test('prompt too long with an impossible limit: PROMPT_TOO_LONG with the API error as cause', async (t) => {
  const api = await fakeApi(t, (rec) => reply.promptTooLong(Math.ceil(rec.rawBody.length / 4), 5));
  const msgs = h.apiConversation({ rounds: 6 });
  const before = structuredClone(msgs);
  const err = await h.rejectsWithCode(cc.compactConversation(msgs, { model: OPUS, summarize: summarizerFor(api) }, {}), 'PROMPT_TOO_LONG');
  assert.equal(err.cause.status, 400);
  assert.equal(err.cause.error.error.type, 'invalid_request_error');
  assert.match(err.cause.error.error.message, /prompt is too long: \d+ tokens > 5 maximum/);
  assert.ok(api.requests.length >= 2 && api.requests.length <= 4);
  assert.deepStrictEqual(msgs, before);
});

test('a 529 overloaded body, then success', async (t) => {
  const api = await fakeApi(t, [reply.overloaded(), reply.auto(SUMMARY)]);
  const r = await cc.compactConversation(h.apiConversation({ rounds: 6 }), { model: OPUS, summarize: summarizerFor(api) }, { retryBaseMs: 1 });
  assert.equal(api.requests.length, 2);
  assert.deepEqual(api.requests[1].body, api.requests[0].body, 'the same request again');
  assert.match(r.summary, /refactor the parser/);
  assert.ok(r.transientRetries <= 1, 'retried once, by the summarizer or by the pipeline');
});

test('529 with the summarizer\'s retries disabled: the pipeline does not retry what the summarizer gave up on', async (t) => {
  const api = await fakeApi(t, [reply.overloaded(), reply.auto(SUMMARY)]);
  const msgs = h.apiConversation({ rounds: 6 });
  const before = structuredClone(msgs);
  const err = await h.rejectsWithCode(cc.compactConversation(msgs, { model: OPUS, summarize: summarizerFor(api, { maxRetries: 0 }) }, { retryBaseMs: 1 }), 'SUMMARIZER_FAILED');
  assert.equal(api.requests.length, 1);
  assert.equal(err.cause.status, 529);
  assert.equal(err.cause.retriesExhausted, true);
  assert.deepStrictEqual(msgs, before);
});

test('a slow answer aborted through context.signal → ABORTED', { timeout: 20_000 }, async (t) => {
  const api = await fakeApi(t, reply.slow(60_000, reply.auto(SUMMARY)));
  const ac = new AbortController();
  const msgs = h.apiConversation({ rounds: 6 });
  const before = structuredClone(msgs);
  const rfs = new Map([['/a.ts', { content: 'const a = 1;', timestamp: 1 }]]);
  const p = cc.compactConversation(msgs, { model: OPUS, summarize: summarizerFor(api), signal: ac.signal, readFileState: rfs }, {});
  await api.waitForRequest(1);
  ac.abort();
  await h.rejectsWithCode(p, 'ABORTED');
  assert.equal(api.requests.length, 1);
  assert.deepStrictEqual(msgs, before);
  assert.equal(rfs.size, 1, 'nothing committed');
});

test('a stream that stalls mid-answer, aborted → ABORTED', { timeout: 20_000 }, async (t) => {
  const api = await fakeApi(t, reply.stall(SUMMARY, { afterEvents: 5 }));
  const ac = new AbortController();
  const got = h.deferred();
  const p = cc.compactConversation(h.apiConversation({ rounds: 6 }), {
    model: OPUS, summarize: summarizerFor(api), signal: ac.signal, onText: () => got.resolve(),
  }, {});
  await got.promise;
  ac.abort();
  await h.rejectsWithCode(p, 'ABORTED');
});

test('a Compactor with the real summarizer, auto-compacting a transcript', async (t) => {
  const api = await fakeApi(t, reply.auto(SUMMARY));
  const c = new cc.Compactor({ model: OPUS, summarize: summarizerFor(api), config: { autoCompactPctOverride: 5 } });
  c.pushMany(h.transcriptConversation({ rounds: 12 }));
  const pre = c.tokenCount();
  const out = await c.maybeAutoCompact();
  assert.equal(out.wasCompacted, true, out.error?.message);
  assert.equal(api.requests.length, 1);
  assert.ok(c.tokenCount() < pre);
  assert.equal(c.messages[1].isCompactSummary, true);
});

// The process exiting at the end of this file (node --test waits for it) is the real check that
// no socket or timer leaked; this one checks each server of the tests above was closed.
test('every fake server of the tests above is closed', () => {
  assert.ok(started.length >= 10);
  for (const api of started) assert.equal(api.server.listening, false, api.url);
});
