// Round 9 of the agent-loop helpers (pkg/agents/*.js): the chat route on a continuation that
// compacts, its failure count, the usage it anchors on, its prompt-too-long retry and its
// requests on one chat id; one prepareStep shared by runs in flight; runToolLoop's kept user
// request, abort and failure reports (and the Compactor call options they use).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { APICallError, generateText, jsonSchema, simulateReadableStream, stepCountIs, tool, validateUIMessages } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { compactionPrepareStep, createChatHandler, memoryChatStore } from '../../pkg/agents/ai-sdk.js';
import { runToolLoop } from '../../pkg/agents/anthropic.js';
import { Compactor, getAutoCompactThreshold, getContextWindowForModel, offlineSummarizer } from '../../pkg/node.js';

const usage = (i, o) => ({ inputTokens: { total: i, noCache: i, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: o, text: o, reasoning: 0 } });
/** A streamed text answer reporting `input` tokens. */
const textStream = (text, input) =>
  simulateReadableStream({
    chunks: [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: text },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: usage(input, 2) },
    ],
  });
/** About what a real tokenizer gives for the prompt: a quarter token per character. */
const promptTokens = (prompt) => Math.ceil(JSON.stringify(prompt).length / 4);
const post = (handler, body) => handler(new Request('http://x/api/chat', { method: 'POST', body: JSON.stringify(body) }));
const userMessage = (id, text) => ({ id, role: 'user', parts: [{ type: 'text', text }] });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

test('chat route: a continuation that compacts keeps the latest request and the continued tool call (A1)', async () => {
  const prompts = [];
  const model = new MockLanguageModelV3({
    modelId: 'gpt-4.1',
    doStream: async ({ prompt }) => {
      prompts.push(prompt);
      return { stream: textStream('Deploying to staging.', 100) };
    },
  });
  const LATEST = 'LATEST REQUEST: deploy the app, ask me which environment first';
  const stored = [];
  for (let i = 0; i < 8; i++) {
    stored.push(userMessage(`u${i}`, `Note ${i}: ` + 'lorem ipsum dolor sit amet '.repeat(400)));
    stored.push({ id: `a${i}`, role: 'assistant', parts: [{ type: 'text', text: `ok ${i}` }] });
  }
  stored.push(userMessage('u-last', LATEST));
  const ask = { type: 'tool-askEnv', toolCallId: 'call-1', state: 'input-available', input: { question: 'which env?' } };
  stored.push({ id: 'a-last', role: 'assistant', parts: [{ type: 'step-start' }, ask] });
  const store = memoryChatStore();
  await store.save('c', stored);
  const tools = { askEnv: { description: 'ask the user', inputSchema: jsonSchema({ type: 'object', properties: { question: { type: 'string' } } }) } };
  const POST = createChatHandler({ model, summarize: offlineSummarizer(), store, tools, config: { contextWindow: 40_000 } });
  // useChat after addToolResult: every message again, the last one the assistant's.
  const page = structuredClone(stored);
  page.at(-1).parts[1] = { ...ask, state: 'output-available', output: 'staging' };
  const body = await (await post(POST, { id: 'c', messages: page })).text();
  assert.match(body, /"status":"compacted"/);

  const after = await store.load('c');
  // Before: [summary, a-last] (the request was cut off with the compacted list's last message).
  assert.deepEqual(after.slice(1).map((m) => m.id), ['u-last', 'a-last']);
  assert.ok(after[1].parts.some((p) => p.text === LATEST));
  // The continued message is kept (with the client's result) and extended by the answer.
  const last = after.at(-1);
  assert.equal(last.parts[1].output, 'staging');
  assert.equal(last.parts.at(-1).text, 'Deploying to staging.');
  await validateUIMessages({ messages: after, tools });
  // The model was sent the tool call and the client's result it continues.
  const sent = JSON.stringify(prompts.at(-1));
  assert.match(sent, /call-1/);
  assert.match(sent, /staging/);
  assert.ok(sent.includes(LATEST));
});

test('chat route: three failed compactions in a row stop further attempts for that chat (A2)', async () => {
  const model = new MockLanguageModelV3({ modelId: 'gpt-4.1', doStream: async ({ prompt }) => ({ stream: textStream('ok', promptTokens(prompt)) }) });
  let summaryCalls = 0;
  const errors = [];
  const summarize = async () => {
    summaryCalls += 1;
    throw new Error('summary service down');
  };
  const POST = createChatHandler({ model, summarize, store: memoryChatStore(), config: { contextWindow: 40_000 }, onError: (e) => errors.push(e) });
  const failed = [];
  for (let turn = 0; turn < 8; turn++) {
    const body = await (await post(POST, { id: 'c', message: userMessage(`u${turn}`, `Note ${turn}: ` + 'lorem ipsum dolor sit amet '.repeat(400)) })).text();
    if (body.includes('"status":"failed"')) failed.push(turn);
  }
  // Before: turns 2–7 (6 attempts, 6 summaries paid for).
  assert.deepEqual(failed, [2, 3, 4]);
  assert.equal(summaryCalls, 3);
  assert.equal(errors.length, 3);
  // Another chat of the same handler has its own count.
  const other = await (await post(POST, { id: 'd', message: userMessage('x', 'lorem ipsum dolor sit amet '.repeat(4000)) })).text();
  assert.match(other, /"status":"failed"/);
});

test('chat route: the count is anchored on the reported usage; a prompt-too-long rejection compacts and retries once (A4)', async () => {
  const MODEL = 'claude-sonnet-4-5';
  const windowSize = getContextWindowForModel(MODEL);
  const threshold = getAutoCompactThreshold(MODEL);
  // One token per CJK character (the estimate reads about four characters a token).
  const realTokens = (prompt) => {
    const s = JSON.stringify(prompt);
    const cjk = (s.match(/[\u4e00-\u9fff]/g) ?? []).length;
    return cjk + Math.ceil((s.length - cjk) / 4);
  };
  const fakeModel = (log) =>
    new MockLanguageModelV3({
      modelId: MODEL,
      doStream: async ({ prompt }) => {
        const input = realTokens(prompt);
        log.push(input);
        if (input > windowSize) {
          const message = `prompt is too long: ${input} tokens > ${windowSize} maximum`;
          throw new APICallError({
            message,
            url: 'https://api.anthropic.com/v1/messages',
            requestBodyValues: {},
            statusCode: 400,
            responseBody: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } }),
            isRetryable: false,
          });
        }
        return { stream: textStream('好的', input) };
      },
    });
  const zh = '这是一个关于数据库迁移的问题我们需要检查所有的表结构'.repeat(700);
  const turnMessage = (turn) => userMessage(`u${turn}`, `第${turn}条: ${zh}`);

  // One handler: from its first answer on it knows the reported usage.
  const sent = [];
  const streamErrors = [];
  const store = memoryChatStore();
  const reasons = [];
  const POST = createChatHandler({ model: fakeModel(sent), summarize: offlineSummarizer(), store, streamTextOptions: { onError: (e) => streamErrors.push(e) }, onCompaction: (r, info) => reasons.push(info.reason) });
  let rejected = 0;
  for (let turn = 0; turn < 14; turn++) {
    const body = await (await post(POST, { id: 'c', message: turnMessage(turn) })).text();
    if (body.includes('"type":"error"')) rejected += 1;
  }
  // Before: no compaction, 182,314 tokens sent at turn 9 and every turn from 10 on rejected.
  assert.deepEqual(reasons, ['auto']);
  assert.equal(rejected, 0);
  assert.ok(Math.max(...sent) <= threshold + 2000, `largest request ${Math.max(...sent)}`);
  assert.equal(streamErrors.length, 0);

  // A new handler (a new process) per request: no usage known, so the request is rejected
  // once; the route compacts and sends it again.
  const sent2 = [];
  const store2 = memoryChatStore();
  const reasons2 = [];
  const errors2 = [];
  let rejected2 = 0;
  for (let turn = 0; turn < 14; turn++) {
    const handler = createChatHandler({ model: fakeModel(sent2), summarize: offlineSummarizer(), store: store2, streamTextOptions: { onError: (e) => errors2.push(e) }, onCompaction: (r, info) => reasons2.push(info.reason) });
    const body = await (await post(handler, { id: 'c', message: turnMessage(turn) })).text();
    if (body.includes('"type":"error"')) rejected2 += 1;
    if (turn === 10) assert.match(body, /"status":"compacted"/);
  }
  assert.equal(rejected2, 0);
  assert.deepEqual(reasons2, ['reactive']);
  assert.equal(sent2.filter((n) => n > windowSize).length, 1);
  assert.equal(errors2.length, 0, 'a rejection the route recovered from is not reported');
  const kept = await store2.load('c');
  assert.ok(kept.some((m) => m.id === 'u10'));
  assert.equal(kept.at(-1).role, 'assistant');
});

test('chat route: concurrent requests on one chat id keep both turns; an unread answer is still saved (A8)', async () => {
  let answers = 0;
  const model = new MockLanguageModelV3({
    modelId: 'gpt-4.1',
    doStream: async ({ prompt }) => {
      await sleep(30);
      answers += 1;
      return { stream: textStream(`answer ${answers}`, promptTokens(prompt)) };
    },
  });
  const store = memoryChatStore();
  const POST = createChatHandler({ model, summarize: offlineSummarizer(), store, config: { contextWindow: 40_000 } });
  const ask = async (id, text) => (await post(POST, { id: 'c', message: userMessage(id, text) })).text();
  await ask('u0', 'hello');
  await Promise.all([ask('p1', 'first question'), ask('p2', 'second question')]);
  const ids = (await store.load('c')).map((m) => m.id);
  // Before: p1 and its answer were lost (the last save won).
  assert.ok(ids.includes('p1') && ids.includes('p2'), ids.join(' '));
  assert.equal(ids.length, 6);
  // Served one at a time: the second request saw the first turn.
  const roles = (await store.load('c')).map((m) => m.role);
  assert.deepEqual(roles, ['user', 'assistant', 'user', 'assistant', 'user', 'assistant']);

  // A response whose body nobody reads: the answer is saved and the chat is not blocked.
  await post(POST, { id: 'c', message: userMessage('p3', 'third') });
  const next = await Promise.race([ask('p4', 'fourth').then(() => 'answered'), sleep(3000).then(() => 'blocked')]);
  assert.equal(next, 'answered');
  const after = await store.load('c');
  assert.deepEqual(after.filter((m) => m.role === 'user').map((m) => m.id).slice(-2), ['p3', 'p4']);
  assert.equal(after.length, 10);
  assert.equal(after[7].parts.at(-1).text, 'answer 4');
});

test('prepareStep: one prepareStep shared by runs in flight keeps each run to its own conversation (A3)', async () => {
  const agent = (name, nFiles, delay) => {
    const prompts = [];
    let n = 0;
    const model = new MockLanguageModelV3({
      modelId: 'gpt-4.1',
      doGenerate: async ({ prompt }) => {
        prompts.push(prompt);
        await sleep(delay);
        const done = n >= nFiles;
        const i = n++;
        return {
          content: done
            ? [{ type: 'text', text: `${name} done` }]
            : [{ type: 'tool-call', toolCallId: `${name}-call-${i}`, toolName: 'readFile', input: JSON.stringify({ path: `${name}/file-${i}.js` }) }],
          finishReason: { unified: done ? 'stop' : 'tool-calls', raw: undefined },
          usage: usage(promptTokens(prompt), 20),
          warnings: [],
        };
      },
    });
    return { prompts, model };
  };
  const readFile = tool({
    inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } } }),
    execute: async ({ path }) => `// ${path}\n` + `export const v = "${path}";\n`.repeat(300),
  });
  const prepareStep = compactionPrepareStep({ summarize: offlineSummarizer(), config: { contextWindow: 40_000 } });
  const A = agent('alice', 6, 5);
  const B = agent('bob', 6, 13);
  const aliceIn = [{ role: 'user', content: 'ALICE: review my files' }];
  const bobIn = [{ role: 'user', content: 'BOB: review my files' }];
  const [ra, rb] = await Promise.all([
    generateText({ model: A.model, tools: { readFile }, messages: aliceIn, stopWhen: stepCountIs(20), prepareStep }),
    generateText({ model: B.model, tools: { readFile }, messages: bobIn, stopWhen: stepCountIs(20), prepareStep }),
  ]);
  assert.ok(prepareStep.compactions >= 2);
  // Before: 2–3 of each run's prompts held the other run's files.
  assert.equal(A.prompts.filter((p) => JSON.stringify(p).includes('bob')).length, 0);
  assert.equal(B.prompts.filter((p) => JSON.stringify(p).includes('alice')).length, 0);
  // The history to keep, for each run: by its result, or found by its messages.
  for (const [input, r, me, other] of [[aliceIn, ra, 'alice', 'bob'], [bobIn, rb, 'bob', 'alice']]) {
    const full = [...input, ...r.response.messages];
    for (const kept of [prepareStep.conversation(full, r), prepareStep.conversation(full)]) {
      assert.ok(kept.length < full.length, 'compacted');
      const text = JSON.stringify(kept);
      assert.ok(text.includes(me) && !text.includes(other));
      assert.match(JSON.stringify(kept[0]), /continues an earlier/);
      assert.equal(kept.at(-1).content[0].text, `${me} done`);
    }
  }
  // A conversation no run compacted is returned as it is.
  const unrelated = [{ role: 'user', content: 'something else' }];
  assert.equal(prepareStep.conversation(unrelated), unrelated);
  assert.throws(() => prepareStep.conversation(unrelated, {}), (e) => e.code === 'INVALID_ARGUMENT');
});

// --- runToolLoop (Anthropic SDK) -------------------------------------------------------------

const json = (status, body) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
/** A Messages API that asks for `calls` file reads, then answers; usage from the request size. */
function messagesApi(calls) {
  const requests = [];
  let n = 0;
  const fetch = async (url, init) => {
    const body = JSON.parse(init.body);
    requests.push(body);
    const i = n++;
    const done = i >= calls;
    return json(200, {
      id: `msg_${i}`,
      type: 'message',
      role: 'assistant',
      model: body.model,
      stop_sequence: null,
      content: done ? [{ type: 'text', text: 'finished' }] : [{ type: 'tool_use', id: `toolu_${i}`, name: 'read_file', input: { path: `src/f${i}.rs` } }],
      stop_reason: done ? 'end_turn' : 'tool_use',
      usage: { input_tokens: Math.ceil(JSON.stringify(body.messages).length / 4), output_tokens: 20 },
    });
  };
  return { requests, client: new Anthropic({ apiKey: 'k', fetch, maxRetries: 0 }) };
}
const readFileTool = { read_file: ({ path }) => `// ${path}\n` + 'fn x() {}\n'.repeat(1500) };

test('runToolLoop: the automatic compaction keeps the user request verbatim with a plain Compactor (A5)', async () => {
  const REQUEST = 'Review every file under src/ and list the bugs';
  const verbatim = (body) => body.messages.some((m) => m.role === 'user' && (m.content === REQUEST || (Array.isArray(m.content) && m.content.some((b) => b.type === 'text' && b.text === REQUEST))));
  const run = async (extra) => {
    const api = messagesApi(6);
    const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer(), config: { contextWindow: 40_000 } });
    compactor.push({ role: 'user', content: REQUEST });
    const r = await runToolLoop({ client: api.client, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 1000 }, tools: readFileTool, ...extra });
    return { r, without: api.requests.filter((b) => !verbatim(b)).length };
  };
  const kept = await run({});
  assert.ok(kept.r.compactions >= 1);
  // Before: requests 2–6 lacked it.
  assert.equal(kept.without, 0);
  // The opt-out, as for the other helpers.
  const optedOut = await run({ compactOptions: { keepLastUserMessage: false } });
  assert.ok(optedOut.r.compactions >= 1 && optedOut.without > 0);
  await assert.rejects(run({ compactOptions: { signal: new AbortController().signal } }), (e) => e.code === 'INVALID_ARGUMENT' && /compactOptions/.test(e.message));
  await assert.rejects(run({ compactOptions: { keepLastUserMesage: false } }), (e) => e.code === 'INVALID_ARGUMENT' && /did you mean "keepLastUserMessage"/.test(e.message));
});

test('runToolLoop: its signal aborts a compaction in progress, which commits nothing (A6)', async () => {
  let requests = 0;
  const fetch = async () => {
    requests += 1;
    return new Response('{}', { status: 500 });
  };
  let summaryAborted = false;
  const summarize = async (request, { signal } = {}) => {
    await new Promise((resolve, reject) => {
      const t = setTimeout(resolve, 3000);
      signal?.addEventListener('abort', () => {
        clearTimeout(t);
        summaryAborted = true;
        reject(signal.reason);
      });
    });
    return '<summary>The user asked for a review.</summary>';
  };
  const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize, config: { contextWindow: 40_000 }, keepLastUserMessage: true });
  compactor.push({ role: 'user', content: 'earlier work ' + 'word '.repeat(40_000) });
  compactor.push({ role: 'assistant', content: 'done' });
  compactor.push({ role: 'user', content: 'now fix the bug' });
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const t0 = Date.now();
  await assert.rejects(
    runToolLoop({ client: new Anthropic({ apiKey: 'k', fetch, maxRetries: 0 }), compactor, signal: controller.signal, request: { model: 'claude-sonnet-4-5', max_tokens: 100 } }),
    (e) => e.code === 'ABORTED',
  );
  // Before: it settled after the whole 3 s summary, with the compaction committed.
  assert.ok(Date.now() - t0 < 1500, `${Date.now() - t0} ms`);
  assert.equal(summaryAborted, true);
  assert.equal(compactor.length, 3);
  assert.equal(requests, 0);
});

test('Compactor: maybeAutoCompact and compact take a signal of the call; options checked', async () => {
  const slow = async (request, { signal } = {}) => {
    await new Promise((resolve, reject) => {
      const t = setTimeout(resolve, 2000);
      signal?.addEventListener('abort', () => {
        clearTimeout(t);
        reject(signal.reason);
      });
    });
    return '<summary>s</summary>';
  };
  const make = () => {
    const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: slow, config: { contextWindow: 40_000 } });
    c.push({ role: 'user', content: 'earlier ' + 'word '.repeat(40_000) });
    c.push({ role: 'assistant', content: 'done' });
    c.push({ role: 'user', content: 'next' });
    return c;
  };
  const c1 = make();
  const outcome = await c1.maybeAutoCompact({ signal: AbortSignal.timeout(50) });
  assert.equal(outcome.wasCompacted, false);
  assert.equal(outcome.error.code, 'ABORTED');
  assert.equal(c1.length, 3);
  const c2 = make();
  await assert.rejects(c2.compact({ signal: AbortSignal.timeout(50) }), (e) => e.code === 'ABORTED');
  assert.equal(c2.length, 3);
  // The Compactor's own signal still aborts a call that gives its own.
  const own = new AbortController();
  const c3 = new Compactor({ model: 'claude-sonnet-4-5', summarize: slow, signal: own.signal, messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] });
  setTimeout(() => own.abort(), 50);
  await assert.rejects(c3.compact({ signal: new AbortController().signal }), (e) => e.code === 'ABORTED');
  await assert.rejects(make().maybeAutoCompact({ signal: {} }), (e) => e.code === 'INVALID_ARGUMENT' && /options\.signal/.test(e.message));
  await assert.rejects(make().maybeAutoCompact({ keepLastUserMesage: true }), (e) => e.code === 'INVALID_ARGUMENT' && /keepLastUserMessage/.test(e.message));
  await assert.rejects(make().compact({ signal: 'x' }), (e) => e.code === 'INVALID_ARGUMENT');
  // keepLastUserMessage for one call.
  const c4 = new Compactor({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer(), config: { contextWindow: 40_000 } });
  c4.push({ role: 'user', content: 'earlier ' + 'word '.repeat(40_000) });
  c4.push({ role: 'assistant', content: 'done' });
  c4.push({ role: 'user', content: 'THE LATEST REQUEST' });
  const done = await c4.maybeAutoCompact({ keepLastUserMessage: true });
  assert.equal(done.wasCompacted, true);
  assert.ok(c4.messages.some((m) => m.message?.content === 'THE LATEST REQUEST' || m.content === 'THE LATEST REQUEST'));
});

test('runToolLoop: failed automatic compactions are reported through onError; three in a row stop them (A7)', async () => {
  let summaryCalls = 0;
  const summarize = async () => {
    summaryCalls += 1;
    throw new Error('summary service down');
  };
  const api = messagesApi(6);
  const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize, config: { contextWindow: 40_000 }, retryBaseMs: 1 });
  compactor.push({ role: 'user', content: 'Review src/' });
  const errors = [];
  // Before: `onError` was refused as an unknown option and the failures went unseen.
  const r = await runToolLoop({ client: api.client, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 100 }, tools: readFileTool, onError: (e) => errors.push(e) });
  assert.equal(r.message.content[0].text, 'finished');
  assert.equal(summaryCalls, 3);
  assert.equal(errors.length, 3);
  assert.ok(errors.every((e) => typeof e.code === 'string'));
  assert.equal(compactor.tracking.consecutiveFailures, 3);
  await assert.rejects(runToolLoop({ client: api.client, compactor, request: {}, onErorr: () => {} }), (e) => e.code === 'INVALID_ARGUMENT' && /did you mean "onError"/.test(e.message));
});
