// What a sixth probe of other ecosystems' messages found: reasoning that the count read and the
// compaction did not, and what a compaction adds placed between a kept pending tool call and
// the result the agent appends next. Each test fails on the package before the fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import * as cc from '../../pkg/node.js';

const lines = (n, label) =>
  Array.from({ length: n }, (_, i) => `${label} ${i}: the model works through the task step by step here`).join('\n');

// ---- reasoning: one count on every path ---------------------------------------------------

const THOUGHT = lines(700, 'thought'); // about 11K tokens a turn
const reasoningSets = () => {
  const sets = { anthropic: [], aiModel: [], aiUi: [], responses: [], langchain: [] };
  for (let i = 0; i < 10; i++) {
    sets.anthropic.push({ role: 'user', content: `task ${i}` },
      { role: 'assistant', content: [{ type: 'thinking', thinking: THOUGHT, signature: 'sig' }, { type: 'text', text: `done ${i}` }] });
    sets.aiModel.push({ role: 'user', content: `task ${i}` },
      { role: 'assistant', content: [{ type: 'reasoning', text: THOUGHT }, { type: 'text', text: `done ${i}` }] });
    sets.aiUi.push({ id: `u${i}`, role: 'user', parts: [{ type: 'text', text: `task ${i}` }] },
      { id: `a${i}`, role: 'assistant', parts: [{ type: 'step-start' }, { type: 'reasoning', text: THOUGHT, state: 'done' }, { type: 'text', text: `done ${i}` }] });
    sets.responses.push({ role: 'user', content: `task ${i}` },
      { type: 'reasoning', id: `rs_${i}`, summary: [{ type: 'summary_text', text: THOUGHT }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `done ${i}`, annotations: [] }] });
    sets.langchain.push(new HumanMessage(`task ${i}`),
      new AIMessage({ content: [{ type: 'reasoning', reasoning: THOUGHT }, { type: 'text', text: `done ${i}` }] }));
  }
  return sets;
};

test('reasoning of every shape is counted alike by the count, the automatic decision, the preview and the size check', async () => {
  const model = 'gpt-4o'; // threshold 98,616
  const summarize = async () => '<summary>Ten tasks were done, one after the other.</summary>';
  const reference = cc.tokenCountWithEstimation(reasoningSets().anthropic);
  for (const [name, msgs] of Object.entries(reasoningSets())) {
    const count = cc.tokenCountWithEstimation(msgs);
    assert.ok(count > 100_000 && Math.abs(count - reference) < 200, `${name}: ${count} vs ${reference}`);
    assert.equal(cc.shouldAutoCompact(msgs, model), true, name);
    const preview = await cc.previewCompaction(msgs, { model });
    assert.equal(preview.tokensBefore, count, `${name}: the preview counts the reasoning`);
    const auto = await cc.autoCompactIfNeeded(msgs, { model, summarize });
    assert.equal(auto.wasCompacted, true, `${name}: ${JSON.stringify(auto.skipped ?? auto.error)}`);
    const r = await cc.compactConversation(msgs, { model, summarize });
    assert.equal(r.preCompactTokenCount, count, name);
    // The summary request leaves the reasoning out, as it does Anthropic thinking.
    let sent = '';
    await cc.compactConversation(msgs, { model, summarize: async (req) => { sent = JSON.stringify(req.messages); return summarize(); } });
    assert.ok(!sent.includes('thought 5:'), `${name}: reasoning reached the summary request`);
  }
});

test('a Compactor of AI SDK messages with reasoning compacts automatically instead of failing', async () => {
  const c = new cc.Compactor({ model: 'gpt-4o', summarize: async () => '<summary>done</summary>', messages: reasoningSets().aiModel });
  const out = await c.maybeAutoCompact();
  assert.equal(out.wasCompacted, true, JSON.stringify(out));
  assert.ok(c.tokenCount() < 10_000, `${c.tokenCount()}`);
  c.free();
});

// ---- a kept pending tool call stays last --------------------------------------------------

const history = (system) => {
  const m = system ? [{ role: 'system', content: 'You are an agent.' }] : [];
  for (let i = 0; i < 6; i++) m.push({ role: 'user', content: `q${i} ` + lines(40, 'line') }, { role: 'assistant', content: `a${i} ` + lines(40, 'line') });
  m.push({ role: 'user', content: 'read x' });
  return m;
};
const pendingCases = [
  ['Anthropic', 'claude-sonnet-4-5',
    [...history(false), { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_P', name: 'Read', input: { file_path: 'x' } }] }],
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_P', content: 'X' }] }],
  ['OpenAI Chat', 'gpt-4o',
    [...history(true), { role: 'assistant', content: null, tool_calls: [{ id: 'call_P', type: 'function', function: { name: 'Read', arguments: '{"p":"x"}' } }] }],
    { role: 'tool', tool_call_id: 'call_P', content: 'X' }],
  ['AI SDK', 'claude-sonnet-4-5',
    [...history(true), { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c_P', toolName: 'Read', input: { p: 'x' } }] }],
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c_P', toolName: 'Read', output: { type: 'text', value: 'X' } }] }],
];
const mockModel = () => new MockLanguageModelV3({
  doGenerate: async () => ({
    content: [{ type: 'text', text: 'ok' }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
    warnings: [],
  }),
});

test('restored files and hook messages go before a kept pending tool call, which stays last', async () => {
  for (const [name, model, msgs, result] of pendingCases) {
    const context = {
      model,
      summarize: async () => '<summary>The user asked six questions and then to read x.</summary>',
      readFileState: new Map([['src/a.ts', { content: 'export const a = 1;\n', timestamp: Date.now() }]]),
      hooks: { sessionStart: () => ({ messages: ['the session-start hook says hello'] }) },
    };
    const r = await cc.compactConversation(msgs, context);
    const out = cc.buildPostCompactMessages(r);
    assert.equal(out.at(-1), msgs.at(-1), `${name}: the pending call is the last message, the caller's own object`);
    const text = JSON.stringify(out);
    assert.match(text, /export const a = 1;/, `${name}: the file is restored`);
    assert.match(text, /the session-start hook says hello/, `${name}: the hook's message is there`);
    assert.deepEqual(r.attachments, [], `${name}: in summaryMessages instead`);
    assert.deepEqual(r.hookResults, [], name);
    const completed = [...out, result];
    assert.equal(cc.validateForApi(completed).valid, true, `${name}: ${JSON.stringify(cc.validateForApi(completed).problems)}`);
    if (name === 'AI SDK') {
      await generateText({ model: mockModel(), messages: completed, allowSystemInMessages: true });
    }
  }
});

test('without a pending call, attachments and hook messages keep their own places', async () => {
  const msgs = history(false);
  const r = await cc.compactConversation(msgs, {
    model: 'claude-sonnet-4-5',
    summarize: async () => '<summary>six questions</summary>',
    readFileState: new Map([['src/a.ts', { content: 'export const a = 1;\n', timestamp: Date.now() }]]),
  });
  assert.equal(r.summaryMessages.length, 1);
  assert.ok(r.attachments.length >= 1);
});

// ---- participant names reach the summarizer -----------------------------------------------

test('OpenAI Chat and LangChain participant names reach the summary request', async () => {
  const pad = lines(20, 'detail');
  const chat = [{ role: 'system', content: 'You moderate a group vote.' }];
  for (let i = 0; i < 8; i++) {
    chat.push({ role: 'user', name: i % 2 ? 'bob' : 'alice', content: `I vote ${i % 2 ? 'NO' : 'YES'} on item ${i}.\n${pad}` },
      { role: 'assistant', content: `Vote on item ${i} recorded.` });
  }
  chat.push({ role: 'user', name: 'carol', content: 'Who voted no, on which items?' });
  const lc = chat.map((m) => (m.role === 'system' ? new HumanMessage(m.content)
    : m.role === 'user' ? new HumanMessage({ content: m.content, name: m.name }) : new AIMessage(m.content)));
  for (const [name, msgs] of [['OpenAI Chat', chat], ['LangChain', lc]]) {
    let sent = '';
    const r = await cc.compactConversation(msgs, { model: 'gpt-4o', summarize: async (req) => { sent = JSON.stringify(req.messages); return '<summary>S</summary>'; } });
    assert.match(sent, /alice: I vote YES on item 0/, name);
    assert.match(sent, /bob: I vote NO on item 1/, name);
    // The caller's messages are not changed.
    assert.equal(chat[1].content.startsWith('I vote YES'), true);
    assert.ok(r.summaryMessages.length >= 1);
  }
});

// ---- media and free-form input counted as what they are -----------------------------------

test('a Code Interpreter image, a LangChain video block and a Chat custom tool input count as what they are', async () => {
  const png = 'data:image/png;base64,iVBORw0KGgo' + 'A'.repeat(400_000);
  const resp = [
    { role: 'user', content: 'plot it' },
    { type: 'code_interpreter_call', id: 'ci_1', container_id: 'c', code: 'plt.plot(x)', status: 'completed',
      outputs: [{ type: 'logs', logs: 'done' }, { type: 'image', url: png }] },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Here is the chart.', annotations: [] }] },
  ];
  const n = cc.tokenCountWithEstimation(resp);
  assert.ok(n > 2_000 && n < 2_200, `code interpreter image: ${n}`);
  let sent = '';
  const r = await cc.compactConversation([...resp, { role: 'user', content: 'thanks ' + 'x '.repeat(4000) }], {
    model: 'gpt-4o', summarize: async (req) => { sent = JSON.stringify(req.messages); return '<summary>S</summary>'; },
  });
  assert.ok(r.preCompactTokenCount < 10_000, `${r.preCompactTokenCount}`);
  assert.ok(!sent.includes('A'.repeat(1000)) && sent.includes('plt.plot(x)'), 'no base64 in the summary request, the code is');

  const b64 = 'AAAAIGZ0eXBpc29t' + 'Q'.repeat(400_000);
  const conv = (type, mimeType) => [new HumanMessage({ content: [{ type: 'text', text: 'what happens in this clip?' }, { type, data: b64, mimeType }] }),
    new AIMessage('A cat jumps.'), new HumanMessage('and then? ' + 'please '.repeat(400))];
  const video = cc.tokenCountWithEstimation(conv('video', 'video/mp4'));
  assert.equal(video, cc.tokenCountWithEstimation(conv('audio', 'audio/wav')), 'a video counts as any media');
  sent = '';
  await cc.compactConversation(conv('video', 'video/mp4'), { model: 'gpt-4o', summarize: async (req) => { sent = JSON.stringify(req.messages); return '<summary>S</summary>'; } });
  assert.ok(!sent.includes('Q'.repeat(1000)), 'no video base64 in the summary request');

  const patch = '*** Begin Patch\n*** Update File: src/a.ts\n' + Array.from({ length: 200 }, (_, i) => `+  const line${i} = compute(${i});`).join('\n') + '\n*** End Patch';
  const chat = [{ role: 'user', content: 'patch a.ts' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'custom', custom: { name: 'apply_patch', input: patch } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'ok' }];
  const responses = [{ role: 'user', content: 'patch a.ts' }, { type: 'custom_tool_call', call_id: 'call_1', name: 'apply_patch', input: patch },
    { type: 'custom_tool_call_output', call_id: 'call_1', output: 'ok' }];
  const a = cc.tokenCountWithEstimation(chat), b = cc.tokenCountWithEstimation(responses);
  assert.ok(Math.abs(a - b) < 20, `chat ${a} vs responses ${b}`);
  sent = '';
  await cc.compactConversation(chat, { model: 'gpt-4o', summarize: async (req) => { sent = JSON.stringify(req.messages); return '<summary>S</summary>'; } });
  assert.ok(sent.includes('*** Begin Patch\\n*** Update File'), 'the patch as written in the summary request');
});
