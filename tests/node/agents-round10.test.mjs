// Round 10 of the agent-loop helpers (pkg/agents/*.js): plain text conversations compacted by
// compactionPrepareStep and runChatToolLoop (named shapes), the LangChain middleware's failure
// count per thread and the run's abort signal, runToolLoop's paused turns and tool calls cut
// off by max_tokens.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAgent } from 'langchain';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { MemorySaver } from '@langchain/langgraph';
import { generateText, stepCountIs } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { compactionPrepareStep } from '../../pkg/agents/ai-sdk.js';
import { runToolLoop } from '../../pkg/agents/anthropic.js';
import { compactionMiddleware } from '../../pkg/agents/langchain.js';
import { runChatToolLoop } from '../../pkg/agents/openai.js';
import { Compactor, getAutoCompactThreshold, offlineSummarizer, toApiMessages, validateForApi } from '../../pkg/node.js';

const config = { contextWindow: 40_000 };
/** Twelve long questions with short answers, then a short one: text only, no tool yet. */
const textConversation = () => {
  const messages = [];
  for (let k = 0; k < 12; k++) messages.push({ role: 'user', content: `question ${k} ${'context '.repeat(1200)}` }, { role: 'assistant', content: `answer ${k}` });
  messages.push({ role: 'user', content: 'And the last question?' });
  return messages;
};

test('compactionPrepareStep: a text-only conversation compacts into messages the AI SDK sends (A5)', async () => {
  const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 3, text: 3, reasoning: 0 } };
  const prompts = [];
  const model = new MockLanguageModelV3({
    modelId: 'claude-sonnet-4-5',
    doGenerate: async ({ prompt }) => {
      prompts.push(prompt);
      return { content: [{ type: 'text', text: 'Sure.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] };
    },
  });
  const prepareStep = compactionPrepareStep({ summarize: offlineSummarizer(), config });
  const messages = textConversation();
  // Before: AI_InvalidMessageRoleError (a compact_boundary line first).
  const result = await generateText({ model, messages, stopWhen: stepCountIs(3), prepareStep });
  assert.equal(prepareStep.compactions, 1);
  assert.deepEqual([...new Set(prompts[0].map((m) => m.role))].sort(), ['user']);
  const kept = prepareStep.conversation([...messages, ...result.response.messages], result);
  assert.ok(kept.every((m) => ['user', 'assistant'].includes(m.role)), JSON.stringify(kept.map((m) => m.role ?? m.type)));
  assert.equal(kept.at(-2).content, 'And the last question?');
});

test('runChatToolLoop: a text-only conversation compacts into messages OpenAI takes (A6)', async () => {
  const sent = [];
  const client = { chat: { completions: { create: async (body) => {
    sent.push(body.messages);
    return { id: 'c1', choices: [{ index: 0, message: { role: 'assistant', content: 'Sure.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } };
  } } } };
  const r = await runChatToolLoop({ client, messages: textConversation(), request: { model: 'gpt-4.1' }, summarize: offlineSummarizer(), config });
  assert.equal(r.compactions, 1);
  // Before: a compact_boundary line (no role) first, which OpenAI answers with a 400.
  assert.ok(sent[0].every((m) => ['user', 'assistant'].includes(m.role)), JSON.stringify(sent[0].map((m) => m.role ?? m.type)));
  assert.ok(r.messages.every((m) => typeof m.role === 'string'));
});

test('compactionMiddleware: three failures in one thread do not stop compaction in the agent\'s other threads (A1)', async () => {
  const thr = getAutoCompactThreshold('openai:gpt-4.1', config);
  let failing = true;
  const summarize = async () => {
    if (failing) throw Object.assign(new Error('upstream 503'), { status: 503 });
    return { content: [{ type: 'text', text: '<summary>Short summary of the work.</summary>' }], stop_reason: 'end_turn' };
  };
  const errors = [];
  const mw = compactionMiddleware({ model: 'openai:gpt-4.1', summarize, config, compactOptions: { retryBaseMs: 0 }, onError: (e) => errors.push(e.code) });
  const model = fakeModel();
  for (let k = 0; k < 40; k++) model.respond(new AIMessage({ content: 'ok' }));
  const agent = createAgent({ model, tools: [], middleware: [mw], checkpointer: new MemorySaver() });
  const big = 'lorem ipsum dolor sit amet '.repeat(Math.ceil((thr * 4) / 27));
  const turn = (thread, t) => agent.invoke({ messages: [new HumanMessage(`${thread}${t} ${big}`), new AIMessage('noted'), new HumanMessage('go on')] }, { configurable: { thread_id: thread } });
  for (let t = 0; t < 4; t++) await turn('A', t);
  // Three in a row, then one attempt per later user turn of the thread (round 11).
  assert.deepEqual(errors, ['SUMMARIZER_FAILED', 'SUMMARIZER_FAILED', 'SUMMARIZER_FAILED', 'SUMMARIZER_FAILED'], 'thread A: three, then one at its next turn');
  assert.equal(mw.consecutiveFailures, 4);
  failing = false;
  // Before: 0 compactions in thread B (the middleware had stopped for good).
  await turn('B', 0);
  assert.equal(mw.compactions, 1);
  assert.equal(mw.consecutiveFailures, 0);
  // Thread A's next user turn tries once more, and compacts now that the summarizer works.
  await turn('A', 4);
  assert.equal(mw.compactions, 2);
  assert.equal(errors.length, 4);
});

test('compactionMiddleware: the run\'s abort signal reaches the summarizer; nothing is counted as compacted (A2)', async () => {
  const thr = getAutoCompactThreshold('openai:gpt-4.1', config);
  let sawAbort = false;
  let finished = false;
  const summarize = (_req, { signal } = {}) => new Promise((resolve, reject) => {
    const t = setTimeout(() => { finished = true; resolve({ content: [{ type: 'text', text: '<summary>S</summary>' }], stop_reason: 'end_turn' }); }, 1500);
    signal?.addEventListener('abort', () => { sawAbort = true; clearTimeout(t); reject(signal.reason); }, { once: true });
  });
  const compacted = [];
  const errors = [];
  const mw = compactionMiddleware({ model: 'openai:gpt-4.1', summarize, config, onCompaction: (r) => compacted.push(r), onError: (e) => errors.push(e) });
  const model = fakeModel();
  model.respond(new AIMessage({ content: 'ok' }));
  const agent = createAgent({ model, tools: [], middleware: [mw] });
  const big = 'lorem ipsum dolor sit amet '.repeat(Math.ceil((thr * 4 * 1.2) / 27));
  const ac = new AbortController();
  setTimeout(() => ac.abort(new Error('user pressed stop')), 100);
  await assert.rejects(agent.invoke({ messages: [new HumanMessage(big), new AIMessage('noted'), new HumanMessage('go on')] }, { signal: ac.signal }));
  await new Promise((r) => setTimeout(r, 1700));
  // Before: the summary ran to its end and a compaction nobody kept was counted and reported.
  assert.equal(sawAbort, true);
  assert.equal(finished, false);
  assert.equal(mw.compactions, 0);
  assert.equal(compacted.length, 0);
  assert.equal(mw.consecutiveFailures, 0, 'an abort is no failure');
});

const reply = (id, stop, content, input = 500) => ({ id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: stop, content, usage: { input_tokens: input, output_tokens: 20 } });

test('runToolLoop: a paused turn (pause_turn) is sent back to go on (A3)', async () => {
  const requests = [];
  const replies = [
    reply('msg_1', 'pause_turn', [{ type: 'text', text: 'Searching.' }, { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'rust wasm' } }]),
    reply('msg_2', 'end_turn', [{ type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] }, { type: 'text', text: 'Nothing found.' }], 700),
  ];
  const client = { messages: { create: async (body) => { requests.push(structuredClone(body)); return replies[requests.length - 1]; } } };
  const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer() });
  compactor.push({ role: 'user', content: 'Search the web for rust wasm.' });
  const r = await runToolLoop({ client, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 1024, tools: [{ type: 'web_search_20250305', name: 'web_search' }] } });
  // Before: it returned after the first request, with the turn paused.
  assert.equal(requests.length, 2);
  assert.equal(r.message.stop_reason, 'end_turn');
  assert.equal(requests[1].messages.at(-1).role, 'assistant', 'the paused reply, sent back as it is');
  compactor.push({ role: 'user', content: 'Thanks.' });
  assert.equal(validateForApi(toApiMessages(compactor.messages)).valid, true);
  compactor.free();
});

test('runToolLoop: a tool call cut off by max_tokens is answered as not run, and the conversation stays valid (A4)', async () => {
  const requests = [];
  const replies = [
    reply('msg_1', 'max_tokens', [{ type: 'text', text: 'Let me write the file.' }, { type: 'tool_use', id: 'toolu_1', name: 'write_file', input: {} }]),
    reply('msg_2', 'end_turn', [{ type: 'text', text: 'Done.' }], 700),
  ];
  const client = { messages: { create: async (body) => { requests.push(structuredClone(body)); return replies[Math.min(requests.length, 2) - 1]; } } };
  const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer() });
  compactor.push({ role: 'user', content: 'Write a long file.' });
  let ran = 0;
  const request = { model: 'claude-sonnet-4-5', max_tokens: 1024, tools: [{ name: 'write_file', input_schema: { type: 'object' } }] };
  const r = await runToolLoop({ client, compactor, request, tools: { write_file: () => { ran++; return 'written'; } } });
  assert.equal(ran, 0, 'an incomplete call is not run');
  assert.equal(r.steps, 2);
  const answer = requests[1].messages.at(-1).content[0];
  assert.equal(answer.tool_use_id, 'toolu_1');
  assert.equal(answer.is_error, true);
  // Before: the next turn sent the call with no result (the API answers 400).
  compactor.push({ role: 'user', content: 'Go on.' });
  await runToolLoop({ client, compactor, request, tools: {} });
  for (const body of requests) assert.equal(validateForApi(body.messages).valid, true);
  compactor.free();
});
