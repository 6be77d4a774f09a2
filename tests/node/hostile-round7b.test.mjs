// Seventh round of hostile inputs, second part (the probe's r7_*.mjs): timer options past the
// longest JavaScript timer, tool inputs nested deeper than the core reads, an OpenAI-compatible
// stream without `data: [DONE]`, and a revoked Proxy on the counting paths.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import * as cc from '../../pkg/node.js';
import { anthropicSummarizer } from '../../js/anthropic.js';
import { openaiSummarizer } from '../../js/openai.js';
import { langchainSummarizer } from '../../js/langchain.js';
import { aiSdkSummarizer } from '../../js/ai-sdk.js';
import { sleep } from '../../js/http.js';

const MAX_TIMER_MS = 2147483647;
const REQUEST = Object.freeze({ model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
const enc = new TextEncoder();

// ---- 1. Timer options above 2^31-1 ms -------------------------------------------------------

const FACTORIES = {
  anthropicSummarizer: (o) => anthropicSummarizer({ apiKey: 'k', fetch: async () => new Response('{}'), ...o }),
  openaiSummarizer: (o) => openaiSummarizer({ apiKey: 'k', fetch: async () => new Response('{}'), ...o }),
  langchainSummarizer: (o) => langchainSummarizer(new FakeListChatModel({ responses: ['<summary>s</summary>'] }), o),
  aiSdkSummarizer: (o) => aiSdkSummarizer('openai/gpt-4.1', { generateText: async () => ({}), streamText: () => ({}), ...o }),
};
const TIMER_OPTIONS = {
  anthropicSummarizer: ['timeoutMs', 'idleTimeoutMs', 'retryBaseMs', 'retryMaxMs', 'maxRetryAfterMs'],
  openaiSummarizer: ['timeoutMs', 'idleTimeoutMs', 'retryBaseMs', 'retryMaxMs', 'maxRetryAfterMs'],
  langchainSummarizer: ['timeoutMs', 'idleTimeoutMs', 'retryBaseMs', 'retryMaxMs', 'maxRetryAfterMs'],
  aiSdkSummarizer: ['timeoutMs', 'idleTimeoutMs'],
};

test('summarizers: a timer option above 2147483647 ms is INVALID_ARGUMENT naming the option and the limit; the limit itself is accepted', () => {
  for (const [name, make] of Object.entries(FACTORIES)) {
    for (const opt of TIMER_OPTIONS[name]) {
      for (const bad of [3e9, MAX_TIMER_MS + 1, 1e10]) {
        assert.throws(() => make({ [opt]: bad }), (e) => {
          assert.equal(e.code, 'INVALID_ARGUMENT', `${name} ${opt}`);
          assert.match(e.message, new RegExp(`${opt}\\b.*${MAX_TIMER_MS}`), `${name} ${opt}: ${e.message}`);
          return true;
        }, `${name}({${opt}: ${bad}})`);
      }
      assert.equal(typeof make({ [opt]: MAX_TIMER_MS }), 'function', `${name}({${opt}: MAX_TIMER_MS})`);
    }
  }
});

test('anthropicSummarizer: a 429 asking for 30 days with the largest maxRetryAfterMs is thrown at once, not retried after 1 ms', async () => {
  let calls = 0;
  const fetch = async () => {
    calls += 1;
    return new Response('{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}', {
      status: 429,
      headers: { 'retry-after': '2592000', 'content-type': 'application/json' },
    });
  };
  const summarize = anthropicSummarizer({ apiKey: 'k', fetch, maxRetries: 3, maxRetryAfterMs: MAX_TIMER_MS });
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 2000);
  const e = await summarize(REQUEST, { signal: ac.signal }).then(() => null, (x) => x);
  clearTimeout(timer);
  assert.equal(calls, 1);
  assert.ok(e instanceof Error && e.code !== 'ABORTED', `${e?.code}: ${e?.message}`);
});

test('sleep: a wait longer than the longest timer waits (chained timers) and still ends on abort', async () => {
  const warnings = [];
  const onWarning = (w) => warnings.push(w.name);
  process.on('warning', onWarning);
  try {
    const ac = new AbortController();
    let settled = false;
    const p = sleep(3e9, ac.signal, () => Object.assign(new Error('aborted'), { code: 'ABORTED' })).then(
      () => { settled = 'resolved'; },
      (e) => { settled = e.code; },
    );
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(settled, false, 'a 3e9 ms wait ended within 100 ms');
    ac.abort();
    await p;
    assert.equal(settled, 'ABORTED');
    assert.deepEqual(warnings.filter((n) => n === 'TimeoutOverflowWarning'), []);
  } finally {
    process.off('warning', onWarning);
  }
});

// ---- 2. Tool inputs nested deeper than 100 levels --------------------------------------------

function deepInput(levels) {
  let o = {};
  const root = o;
  for (let i = 0; i < levels; i++) {
    o.a = {};
    o = o.a;
  }
  o.leaf = 'x';
  return root;
}

function conversationWithDeepInput(levels, filler = 20_000) {
  const msgs = [];
  for (let i = 0; i < 40; i++) msgs.push({ role: 'user', content: `q${i} ${'x'.repeat(filler)}` }, { role: 'assistant', content: `a${i} ${'y'.repeat(filler)}` });
  msgs.push(
    { role: 'user', content: 'edit it' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Edit', input: deepInput(levels) }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] },
    { role: 'assistant', content: 'done' },
  );
  return msgs;
}

test('a tool input nested 101..2000 levels deep: what counting accepts, compaction compacts (no INVALID_MESSAGE, no trap)', async () => {
  const model = 'claude-sonnet-4-5';
  for (const levels of [101, 127, 128, 150, 2000]) {
    const msgs = conversationWithDeepInput(levels);
    assert.ok(cc.tokenCountWithEstimation(msgs) > 0);
    assert.equal(cc.shouldAutoCompact(msgs, model), true, `${levels}`);
    let asked = null;
    const summarize = async (request) => {
      asked = request;
      return '<summary>deep summary</summary>';
    };
    const r = await cc.compactConversation(msgs, { model, summarize });
    assert.match(JSON.stringify(r.summaryMessages), /deep summary/, `${levels}`);
    assert.ok(asked, `${levels}: the summarizer was asked`);
    const chat = new cc.Compactor({ model, summarize, messages: msgs });
    const outcome = await chat.maybeAutoCompact();
    assert.equal(outcome.error, undefined, `${levels}: ${outcome.error?.code} ${outcome.error?.message}`);
    assert.equal(outcome.wasCompacted, true, `${levels}`);
    chat.free?.();
  }
});

test('a tool input nested 5000 levels deep: counting and compaction give the same answer, without a trap', async () => {
  const model = 'claude-sonnet-4-5';
  const msgs = conversationWithDeepInput(5000);
  const outcome = async (f) => {
    try {
      await f();
      return 'ok';
    } catch (e) {
      assert.ok(e instanceof Error && typeof e.code === 'string', String(e));
      return e.code;
    }
  };
  const summarize = async () => '<summary>s</summary>';
  const counted = await outcome(() => cc.tokenCountWithEstimation(msgs));
  // Past the engine's own JSON.stringify stack, every reader refuses alike (INVALID_MESSAGE).
  assert.ok(['ok', 'INVALID_MESSAGE'].includes(counted), counted);
  assert.equal(await outcome(() => cc.shouldAutoCompact(msgs, model)), counted);
  assert.equal(await outcome(() => cc.compactConversation(msgs, { model, summarize })), counted);
  assert.equal(await outcome(async () => {
    const chat = new cc.Compactor({ model, summarize, messages: msgs });
    const o = await chat.maybeAutoCompact();
    chat.free?.();
    if (o.error) throw o.error;
  }), counted);
  assert.ok(cc.tokenCountWithEstimation([{ role: 'user', content: 'hello' }]) > 0);
});

test('a tool input nested deeper than 100 levels: validateForApi reads it; toApiMessages, which would write it back changed, refuses it naming the message', () => {
  const msgs = conversationWithDeepInput(150, 10);
  assert.equal(cc.validateForApi(msgs).valid, true);
  assert.throws(() => cc.toApiMessages(msgs), (e) => e.code === 'INVALID_MESSAGE' && /messages\[81\].*nested deeper than 100 levels/.test(e.message));
  // The same call on messages within the limit still works (nothing is left noted).
  assert.equal(cc.toApiMessages(conversationWithDeepInput(90, 10)).length, 84);
});

test('toApiMessages decides from its own messages: a getter that reads another conversation (deep or not) neither makes it refuse nor lets it pass', () => {
  // A message whose content getter calls the library on another conversation while the
  // outer call reads its messages: the fold of one conversation belongs to that one only.
  const reader = (inner) => ({
    role: 'user',
    get content() {
      inner();
      return 'hello';
    },
  });
  const deep = conversationWithDeepInput(150, 10);
  const shallow = conversationWithDeepInput(90, 10);
  // The inner reading folds; the outer conversation is within the limit: written back.
  const outerShallow = [reader(() => cc.validateForApi(deep)), ...shallow.slice(1)];
  assert.equal(cc.toApiMessages(outerShallow).length, 84);
  // The outer conversation folds; the inner call (toApiMessages on shallow messages) passes
  // and the outer still refuses, naming its own message.
  const outerDeep = [reader(() => assert.equal(cc.toApiMessages(shallow).length, 84)), ...deep.slice(1)];
  assert.throws(() => cc.toApiMessages(outerDeep), (e) => e.code === 'INVALID_MESSAGE' && /messages\[81\].*nested deeper than 100 levels/.test(e.message));
  // An inner toApiMessages on deep messages refuses alone.
  const outerInnerDeep = [reader(() => assert.throws(() => cc.toApiMessages(deep), (e) => e.code === 'INVALID_MESSAGE')), ...shallow.slice(1)];
  assert.equal(cc.toApiMessages(outerInnerDeep).length, 84);
});

test('a kept message with a tool input nested deeper than 100 levels comes back as the caller\'s own, identical object', async () => {
  const model = 'claude-sonnet-4-5';
  const msgs = conversationWithDeepInput(150, 4_000);
  const deep = msgs[msgs.length - 3];
  const before = JSON.stringify(deep);
  const r = await cc.trySessionMemoryCompaction(msgs, { model, sessionMemory: '# Notes\nthe user edits files' });
  const kept = r.messagesToKeep;
  assert.ok(kept.includes(deep), 'the deep message is kept');
  assert.equal(JSON.stringify(kept[kept.indexOf(deep)]), before);
  const after = cc.buildPostCompactMessages(r);
  assert.ok(after.includes(deep));
});

// ---- 3. OpenAI Chat Completions stream without `data: [DONE]` --------------------------------

const chunk = (o) => `data: ${JSON.stringify(o)}\n\n`;
const sseFetch = (body, counter) => async () => {
  counter.calls += 1;
  return new Response(enc.encode(body), { headers: { 'content-type': 'text/event-stream' } });
};

test('openaiSummarizer (chat): a stream that closes after finish_reason and usage without [DONE] is a complete answer', async () => {
  const body = chunk({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '<summary>done' }, finish_reason: null }] })
    + chunk({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { content: ' work</summary>' }, finish_reason: 'stop' }] })
    + chunk({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [], usage: { prompt_tokens: 100, completion_tokens: 5 } });
  const counter = { calls: 0 };
  const summarize = openaiSummarizer({ apiKey: 'k', model: 'gpt-4.1', fetch: sseFetch(body, counter), retryBaseMs: 1, retryMaxMs: 1 });
  const r = await summarize(REQUEST, {});
  assert.equal(counter.calls, 1);
  assert.equal(r.content[0].text, '<summary>done work</summary>');
  assert.equal(r.usage.output_tokens, 5);
  // And through a compaction.
  const msgs = [];
  for (let i = 0; i < 6; i++) msgs.push({ role: 'user', content: 'q' + 'x'.repeat(3000) }, { role: 'assistant', content: 'a' + 'y'.repeat(3000) });
  const out = await cc.compactConversation(msgs, { model: 'gpt-4.1', summarize });
  assert.match(JSON.stringify(out.summaryMessages), /done work/);
});

test('openaiSummarizer (chat): a stream cut before any finish_reason is still NETWORK_ERROR and retried', async () => {
  const body = chunk({ id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '<summary>half' }, finish_reason: null }] });
  const counter = { calls: 0 };
  const summarize = openaiSummarizer({ apiKey: 'k', model: 'gpt-4.1', fetch: sseFetch(body, counter), maxRetries: 2, retryBaseMs: 1, retryMaxMs: 1 });
  await assert.rejects(summarize(REQUEST, {}), (e) => e.code === 'NETWORK_ERROR' && /ended before the answer was complete/.test(e.message));
  assert.equal(counter.calls, 3);
});

test('openaiSummarizer (responses): a stream that ends without response.completed is still NETWORK_ERROR', async () => {
  const ev = (o) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`;
  const body = ev({ type: 'response.output_text.delta', delta: '<summary>half</summary>' });
  const counter = { calls: 0 };
  const summarize = openaiSummarizer({ apiKey: 'k', model: 'gpt-4.1', api: 'responses', fetch: sseFetch(body, counter), maxRetries: 0 });
  await assert.rejects(summarize(REQUEST, {}), (e) => e.code === 'NETWORK_ERROR');
  assert.equal(counter.calls, 1);
});

// ---- 4. A revoked Proxy on the counting and transcript paths --------------------------------

test('a revoked Proxy as the messages (or as one of them) is a coded error saying reading the messages threw', async () => {
  const rv = Proxy.revocable([], {});
  rv.revoke();
  const R = rv.proxy;
  const calls = {
    tokenCountWithEstimation: () => cc.tokenCountWithEstimation(R),
    shouldAutoCompact: () => cc.shouldAutoCompact(R, 'claude-sonnet-4-5'),
    simulateSession: () => cc.simulateSession(R, {}),
    'serializeTranscript([R])': () => cc.serializeTranscript([R]),
    'serializeTranscript([{…}, R])': () => cc.serializeTranscript([{ type: 'user', message: { role: 'user', content: 'hi' } }, R]),
    microCompact: () => cc.microCompact(R),
  };
  for (const [name, f] of Object.entries(calls)) {
    await assert.rejects(async () => f(), (e) => {
      assert.ok(e instanceof Error, name);
      assert.ok(['INVALID_MESSAGE', 'INVALID_ARGUMENT'].includes(e.code), `${name}: ${e.code} ${e.message}`);
      assert.match(e.message, /reading the messages threw/, name);
      assert.ok(e.cause instanceof TypeError, `${name}: cause`);
      return true;
    }, name);
  }
  // The instance stays healthy.
  assert.ok(cc.tokenCountWithEstimation([{ role: 'user', content: 'hello' }]) > 0);
});
