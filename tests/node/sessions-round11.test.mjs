// Round 11 on long agent sessions: the circuit breaker closes again after a summarizer outage
// (Compactor, compactionPrepareStep, the LangChain middleware), and the new context's size a
// compaction reports counts the system prompt and tools the caller gave.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAgent } from 'langchain';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { MemorySaver } from '@langchain/langgraph';
import { APICallError, generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { compactionPrepareStep } from '../../pkg/agents/ai-sdk.js';
import { compactionMiddleware } from '../../pkg/agents/langchain.js';
import { runChatToolLoop } from '../../pkg/agents/openai.js';
import { runToolLoop } from '../../pkg/agents/anthropic.js';
import {
  Compactor,
  buildPostCompactMessages,
  compactConversation,
  getAutoCompactThreshold,
  tokenCountWithEstimation,
} from '../../pkg/node.js';

/** A summarizer that fails (HTTP 503) while `outage.down` is true. */
const flaky = (outage) => async () => {
  if (outage.down) throw Object.assign(new Error('upstream 503'), { status: 503 });
  return { content: [{ type: 'text', text: '<summary>What the user asked and what was done.</summary>' }], stop_reason: 'end_turn', usage: { input_tokens: 900, output_tokens: 12 } };
};

test('Compactor: a successful compact() after three failed automatic compactions closes the circuit breaker', async () => {
  const outage = { down: true };
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: flaky(outage), retryBaseMs: 0, summaryTimeoutMs: 0 });
  const big = 'fn main() { let x = compute(); } '.repeat(2000);
  let turn = 0;
  const addTurn = (input) => {
    c.push({ role: 'user', content: `step ${turn++}: ${big}` });
    c.push({ role: 'assistant', content: 'done', usage: { input_tokens: input, output_tokens: 10 } });
  };
  for (let k = 0; k < 11; k++) addTurn(20_000 + k * 16_000);
  for (let k = 0; k < 3; k++) {
    const o = await c.maybeAutoCompact();
    assert.equal(o.error?.code, 'SUMMARIZER_FAILED');
    addTurn(180_000 + k);
  }
  assert.equal((await c.maybeAutoCompact()).skipped, 'circuitBreakerOpen');
  outage.down = false;
  await c.compact(); // the user's /compact, or runToolLoop's reactive one
  // Before: 3, and automatic compaction stayed off for the rest of the session.
  assert.equal(c.tracking.consecutiveFailures, 0);
  for (let k = 0; k < 12; k++) addTurn(30_000 + k * 14_000);
  assert.ok(c.tokenCount() >= 167_000);
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, true, `skipped: ${o.skipped}`);
  c.free();
});

test('compactionPrepareStep: after three failures each later run still tries once, so an outage that is over does not switch compaction off for good', async () => {
  const outage = { down: true };
  const config = { contextWindow: 60_000 }; // threshold 27,000
  const model = new MockLanguageModelV3({
    modelId: 'claude-sonnet-4-5',
    doGenerate: async ({ prompt }) => {
      const size = tokenCountWithEstimation(prompt, { shape: 'ai-sdk-model' });
      if (size > 58_000) throw new APICallError({ message: `prompt is too long: ${size} tokens > 58000 maximum`, url: 'x', requestBodyValues: {}, statusCode: 400, isRetryable: false });
      return { content: [{ type: 'text', text: 'Done.' }], finishReason: { unified: 'stop', raw: undefined }, usage: { inputTokens: { total: size, noCache: size, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 3, text: 3, reasoning: 0 } }, warnings: [] };
    },
  });
  const errors = [];
  const prepareStep = compactionPrepareStep({ summarize: flaky(outage), config, compactOptions: { retryBaseMs: 0 }, onError: (e) => errors.push(e.code) });
  const chunk = 'the parser reads the config and counts tokens per line; '.repeat(350);
  let a = [];
  for (let k = 0; k < 6; k++) a.push({ role: 'user', content: `A${k} ${chunk}` }, { role: 'assistant', content: 'ok' });
  for (let t = 0; t < 4; t++) {
    a.push({ role: 'user', content: `A turn ${t}` });
    const r = await generateText({ model, messages: a, prepareStep });
    a = prepareStep.conversation([...a, ...r.response.messages], r);
  }
  // Three failures open the breaker; the fourth run tries once more (and fails: still down).
  assert.deepEqual(errors, ['SUMMARIZER_FAILED', 'SUMMARIZER_FAILED', 'SUMMARIZER_FAILED', 'SUMMARIZER_FAILED']);
  assert.equal(prepareStep.compactions, 0);
  outage.down = false;
  let b = [];
  for (let k = 0; k < 9; k++) b.push({ role: 'user', content: `B${k} ${chunk}` }, { role: 'assistant', content: 'ok' });
  b.push({ role: 'user', content: `B turn ${chunk}` });
  const r = await generateText({ model, messages: b, prepareStep, maxRetries: 0 });
  // Before: never compacted again (consecutiveFailures stayed 3), and B's turns were refused.
  assert.equal(prepareStep.compactions, 1);
  assert.equal(prepareStep.consecutiveFailures, 0);
  assert.equal(r.text, 'Done.');
  // A run with the breaker open makes one attempt, not one per step.
  outage.down = true;
  const many = compactionPrepareStep({ summarize: flaky(outage), config, compactOptions: { retryBaseMs: 0 }, onError: (e) => errors.push(e.code) });
  for (let t = 0; t < 3; t++) await generateText({ model, messages: a, prepareStep: many });
  assert.equal(many.consecutiveFailures, 3);
  errors.length = 0;
  let calls = 0;
  const looping = new MockLanguageModelV3({
    modelId: 'claude-sonnet-4-5',
    doGenerate: async () => {
      calls += 1;
      const content = calls < 4 ? [{ type: 'tool-call', toolCallId: `c${calls}`, toolName: 'look', input: '{}' }] : [{ type: 'text', text: 'Done.' }];
      return { content, finishReason: { unified: calls < 4 ? 'tool-calls' : 'stop', raw: undefined }, usage: { inputTokens: { total: 40_000, noCache: 40_000, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 3, text: 3, reasoning: 0 } }, warnings: [] };
    },
  });
  const tools = { look: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => 'nothing' }) };
  await generateText({ model: looping, messages: a, tools, stopWhen: stepCountIs(6), prepareStep: many });
  assert.equal(calls, 4);
  assert.deepEqual(errors, ['SUMMARIZER_FAILED'], 'one attempt in a four-step run with the breaker open');
});

test('compactionMiddleware: a thread whose three compactions failed tries again at its next user turn', async () => {
  const config = { contextWindow: 40_000 };
  const thr = getAutoCompactThreshold('openai:gpt-4.1', config);
  const outage = { down: true };
  const errors = [];
  const mw = compactionMiddleware({ model: 'openai:gpt-4.1', summarize: flaky(outage), config, compactOptions: { retryBaseMs: 0 }, onError: (e) => errors.push(e.code) });
  const model = fakeModel();
  for (let k = 0; k < 40; k++) model.respond(() => new AIMessage({ content: 'ok' }));
  const agent = createAgent({ model, tools: [], middleware: [mw], checkpointer: new MemorySaver() });
  const big = 'lorem ipsum dolor sit amet '.repeat(Math.ceil((thr * 4) / 27 / 2));
  const cfg = { configurable: { thread_id: 'T' } };
  for (let t = 0; t < 4; t++) await agent.invoke({ messages: [new HumanMessage(`turn ${t} ${big}`)] }, cfg);
  // Due from turn 1 on: three failures, then one attempt at the next turn.
  assert.deepEqual(errors, ['SUMMARIZER_FAILED', 'SUMMARIZER_FAILED', 'SUMMARIZER_FAILED']);
  await agent.invoke({ messages: [new HumanMessage(`turn 4 ${big}`)] }, cfg);
  assert.equal(errors.length, 4, 'one attempt at the next user turn while still down');
  outage.down = false;
  const state = await agent.invoke({ messages: [new HumanMessage(`turn 5 ${big}`)] }, cfg);
  // Before: 0 compactions for good once three had failed.
  assert.equal(mw.compactions, 1);
  assert.equal(mw.consecutiveFailures, 0);
  assert.ok(tokenCountWithEstimation(state.messages) < thr);
});

const SYSTEM = 'You are a coding agent. Follow the repository conventions. '.repeat(800);
const TOOLS = [{ name: 'read_file', description: 'Read a file. '.repeat(300), input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];
const conversation = () => {
  const m = [];
  for (let k = 0; k < 20; k++) m.push({ role: 'user', content: `q${k} ${'x'.repeat(4000)}` }, { role: 'assistant', content: `a${k}` });
  m.push({ role: 'user', content: 'last' });
  return m;
};

test('truePostCompactTokenCount counts the system prompt and tools given, as the count before and the Compactor after do', async () => {
  const summarize = async () => '<summary>s</summary>';
  const messages = conversation();
  const preamble = tokenCountWithEstimation([{ role: 'user', content: 'x' }], { system: SYSTEM, tools: TOOLS }) - tokenCountWithEstimation([{ role: 'user', content: 'x' }]);
  assert.ok(preamble > 10_000);
  const r = await compactConversation(messages, { model: 'claude-sonnet-4-5', summarize, system: SYSTEM, toolDefinitions: TOOLS });
  const post = buildPostCompactMessages(r);
  // Before: 48 (the messages alone) against a pre-compaction count of 32,847 with them.
  assert.equal(r.truePostCompactTokenCount, tokenCountWithEstimation(post, { system: SYSTEM, tools: TOOLS }));
  assert.equal(r.preCompactTokenCount, tokenCountWithEstimation(messages, { system: SYSTEM, tools: TOOLS }));
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize, system: SYSTEM, toolDefinitions: TOOLS, messages });
  const cr = await c.compact();
  assert.equal(cr.truePostCompactTokenCount, c.tokenCount());
  c.free();
  // Without them, nothing changes.
  const plain = await compactConversation(messages, { model: 'claude-sonnet-4-5', summarize });
  assert.equal(plain.truePostCompactTokenCount, tokenCountWithEstimation(buildPostCompactMessages(plain)));
});

test('the agent helpers report the compacted size with the system prompt and tools they count by', async () => {
  const summarize = async () => '<summary>s</summary>';
  const config = { contextWindow: 60_000 };
  // compactionPrepareStep
  const results = [];
  const model = new MockLanguageModelV3({ modelId: 'claude-sonnet-4-5', doGenerate: async () => ({ content: [{ type: 'text', text: 'ok' }], finishReason: { unified: 'stop', raw: undefined }, usage: { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }, warnings: [] }) });
  const prepareStep = compactionPrepareStep({ summarize, config, system: SYSTEM, tools: TOOLS, onCompaction: (r) => results.push(r) });
  await generateText({ model, system: SYSTEM, messages: conversation(), prepareStep });
  assert.equal(results.length, 1);
  const withPreamble = (m) => tokenCountWithEstimation(m, { system: SYSTEM, tools: TOOLS, shape: 'ai-sdk-model' });
  assert.equal(results[0].truePostCompactTokenCount, withPreamble(buildPostCompactMessages(results[0])));
  assert.equal(results[0].preCompactTokenCount, withPreamble(conversation()));
  // runChatToolLoop: the request's tools
  const defs = [{ type: 'function', function: { name: 'read_file', description: 'Read a file. '.repeat(300), parameters: { type: 'object', properties: { path: { type: 'string' } } } } }];
  const client = { chat: { completions: { create: async () => ({ id: 'c', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }) } } };
  const chat = [];
  const msgs = [{ role: 'system', content: SYSTEM }, ...conversation()];
  await runChatToolLoop({ client, summarize, messages: msgs, config: { contextWindow: 60_000 }, request: { model: 'gpt-4.1', tools: defs }, onCompaction: (r) => chat.push(r) });
  assert.equal(chat.length, 1);
  assert.equal(chat[0].truePostCompactTokenCount, tokenCountWithEstimation(buildPostCompactMessages(chat[0]), { tools: defs, shape: 'openai-chat' }));
});

test('compactionPrepareStep: a run\'s first step counts from the usage the run before it reported (one-step chat turns, Chinese text)', async () => {
  // About one token per character: the estimate (four characters per token) is 4x low.
  const real = (prompt) => prompt.reduce((n, m) => n + 4 + (typeof m.content === 'string' ? m.content.length : m.content.reduce((k, p) => k + (p.text?.length ?? 20), 0)), 0);
  let refused = 0;
  let largest = 0;
  const model = new MockLanguageModelV3({
    modelId: 'claude-sonnet-4-5',
    doGenerate: async ({ prompt }) => {
      const size = real(prompt);
      largest = Math.max(largest, size);
      if (size > 200_000) {
        refused += 1;
        throw new APICallError({ message: `prompt is too long: ${size} tokens > 200000 maximum`, url: 'x', requestBodyValues: {}, statusCode: 400, isRetryable: false });
      }
      return { content: [{ type: 'text', text: '好的，' + '这是回答。'.repeat(100) }], finishReason: { unified: 'stop', raw: undefined }, usage: { inputTokens: { total: size, noCache: size, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 500, text: 500, reasoning: 0 } }, warnings: [] };
    },
  });
  const prepareStep = compactionPrepareStep({ summarize: async () => '<summary>之前的对话摘要。</summary>' });
  let messages = [];
  for (let turn = 0; turn < 80; turn++) {
    messages.push({ role: 'user', content: `问题 ${turn}：` + '请解释这个函数的行为和边界条件。'.repeat(180) });
    try {
      const r = await generateText({ model, messages, prepareStep, maxRetries: 0 });
      messages = prepareStep.conversation([...messages, ...r.response.messages], r);
    } catch {
      messages.pop();
    }
  }
  // Before: 0 compactions and 21 turns refused (the real size reached 199,906 tokens).
  assert.equal(refused, 0);
  assert.ok(prepareStep.compactions >= 1, `${prepareStep.compactions}`);
  assert.ok(largest < 172_000, `largest request ${largest}`);
});

test('runChatToolLoop: a run\'s first request counts from the usage the run before it reported', async () => {
  const real = (msgs) => msgs.reduce((n, m) => n + 4 + (typeof m.content === 'string' ? m.content.length : 0), 0);
  let refused = 0;
  const client = { chat: { completions: { create: async (body) => {
    const size = real(body.messages);
    if (size > 128_000) {
      refused += 1;
      throw Object.assign(new Error(`This model's maximum context length is 128000 tokens. However, your messages resulted in ${size} tokens.`), { status: 400, code: 'context_length_exceeded' });
    }
    return { id: 'c', choices: [{ index: 0, message: { role: 'assistant', content: '好的，' + '这是回答。'.repeat(100) }, finish_reason: 'stop' }], usage: { prompt_tokens: size, completion_tokens: 500, total_tokens: size + 500 } };
  } } } };
  let messages = [{ role: 'system', content: '你是助手。' }];
  const reasons = [];
  for (let turn = 0; turn < 60; turn++) {
    messages.push({ role: 'user', content: `问题 ${turn}：` + '请解释这个函数的行为和边界条件。'.repeat(180) });
    const r = await runChatToolLoop({ client, messages, summarize: async () => '<summary>之前的对话摘要。</summary>', request: { model: 'gpt-4o' }, onCompaction: (_r, info) => reasons.push(info.reason) });
    messages = r.messages;
  }
  // Before: the one compaction came after a refused request (reactive).
  assert.equal(refused, 0);
  assert.ok(reasons.length >= 1 && reasons.every((x) => x === 'auto'), reasons.join());
});

test('the SDK loops\' reactive compaction asks the model to carry on, as the automatic one and reactiveCompact do', async () => {
  const CARRY = 'without asking the user';
  const summarize = async () => '<summary>Reading the parser files; next: fix the off-by-one in lexer.rs.</summary>';
  const history = () => {
    const m = [];
    for (let k = 0; k < 6; k++) m.push({ role: k % 2 ? 'assistant' : 'user', content: `turn ${k} ` + 'x'.repeat(3000) });
    m.push({ role: 'user', content: 'Fix the lexer.' });
    return m;
  };
  const sent = [];
  const client = { messages: { create: async (body) => {
    sent.push(JSON.stringify(body.messages));
    if (sent.length === 1) throw Object.assign(new Error('prompt is too long: 210000 tokens > 200000 maximum'), { status: 400 });
    return { id: 'm', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 500, output_tokens: 2 } };
  } } };
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize, messages: history() });
  const r = await runToolLoop({ client, compactor: c, request: { model: 'claude-sonnet-4-5', max_tokens: 100 } });
  assert.equal(r.compactions, 1);
  // Before: the summary of a manual compaction, with no such sentence.
  assert.ok(sent[1].includes(CARRY));
  c.free();
  const osent = [];
  const oclient = { chat: { completions: { create: async (body) => {
    osent.push(JSON.stringify(body.messages));
    if (osent.length === 1) throw Object.assign(new Error("This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens."), { status: 400, code: 'context_length_exceeded' });
    return { id: 'c', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 500, completion_tokens: 2, total_tokens: 502 } };
  } } } };
  const o = await runChatToolLoop({ client: oclient, messages: history(), summarize, request: { model: 'gpt-4o' } });
  assert.equal(o.compactions, 1);
  assert.ok(osent[1].includes(CARRY));
  // compactOptions still decide.
  const again = [];
  const client2 = { messages: { create: async (body) => {
    again.push(JSON.stringify(body.messages));
    if (again.length === 1) throw Object.assign(new Error('prompt is too long: 210000 tokens > 200000 maximum'), { status: 400 });
    return { id: 'm', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 500, output_tokens: 2 } };
  } } };
  const c2 = new Compactor({ model: 'claude-sonnet-4-5', summarize, messages: history() });
  await runToolLoop({ client: client2, compactor: c2, request: { model: 'claude-sonnet-4-5', max_tokens: 100 }, compactOptions: { suppressFollowUpQuestions: false } });
  assert.ok(!again[1].includes(CARRY));
  c2.free();
});

test('restored files leave the next request below the warning line: on a 64K window an automatic compaction no longer lands above its threshold', async () => {
  const config = { contextWindow: 64_000 };
  const model = 'gpt-4.1';
  const threshold = getAutoCompactThreshold(model, config); // 31,000
  const SYSTEM6K = 'You are a coding agent. '.repeat(1000);
  const readFileState = new Map();
  const messages = [];
  const code = (k) => Array.from({ length: 600 }, (_, i) => `    let v${k}_${i} = compute(${i}); // step ${i}`).join('\n').slice(0, 24_000);
  for (let k = 0; k < 8; k++) {
    const path = `src/file_${k}.rs`;
    readFileState.set(path, { content: code(k), timestamp: 1000 + k });
    messages.push({ role: 'user', content: `Look at ${path}` }, { role: 'assistant', content: [{ type: 'tool_use', id: `t${k}`, name: 'Read', input: { path } }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${k}`, content: code(k) }] }, { role: 'assistant', content: 'Read it.' });
  }
  messages.push({ role: 'user', content: 'Now fix the bug.' });
  const summarize = async () => '<summary>' + 'Worked through the files and found the bug in the lexer. '.repeat(60) + '</summary>';
  const r = await compactConversation(messages, { model, config, summarize, readFileState: new Map(readFileState), system: SYSTEM6K }, { isAutoCompact: true });
  const after = tokenCountWithEstimation(buildPostCompactMessages(r), { system: SYSTEM6K });
  // Before: 5 files (24,973 tokens) restored, 32,075 tokens after: above the threshold again.
  assert.ok(after <= threshold - 20_000 + 50, `${after} after, threshold ${threshold}`);
  assert.equal(r.truePostCompactTokenCount, after);
  assert.ok(r.restoredFiles.length < 5, JSON.stringify(r.restoredFiles));
  // With a larger window (96K: threshold 63,000, warning line 43,000) some of the most recent
  // files fit, the newest first.
  const mid = await compactConversation(messages, { model, config: { contextWindow: 96_000 }, summarize, readFileState: new Map(readFileState), system: SYSTEM6K }, { isAutoCompact: true });
  const midAfter = tokenCountWithEstimation(buildPostCompactMessages(mid), { system: SYSTEM6K });
  assert.ok(midAfter <= getAutoCompactThreshold(model, { contextWindow: 96_000 }) - 20_000, `${midAfter}`);
  assert.ok(mid.restoredFiles.length >= 1 && mid.restoredFiles[0].name === 'src/file_7.rs', JSON.stringify(mid.restoredFiles));
  // On a 200K window the SPEC budgets are untouched: five files of at most 5,000 tokens.
  const big = await compactConversation(messages, { model: 'claude-sonnet-4-5', summarize, readFileState: new Map(readFileState), system: SYSTEM6K }, { isAutoCompact: false });
  assert.equal(big.restoredFiles.length, 5);
});
