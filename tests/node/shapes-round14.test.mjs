// Round 14 shapes probe (/work/probe14-shapes): each test fails on the package of 275b07e
// (/work/pkg-snap16) and passes after its fix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AIMessage, HumanMessage, ToolMessage, mapChatMessagesToStoredMessages } from '@langchain/core/messages';
import * as cc from '../../pkg/node.js';
import * as count from '../../pkg/count-node.js';

const lines = (n, s) => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const near = (got, want, what) => assert.ok(Math.abs(got - want) <= want * 0.05, `${what}: ${got} vs ${want}`);

// An Anthropic reply with a tool search (three tools loaded) and a web fetch of a PDF, as
// @ai-sdk/anthropic returns it (response.messages) and as it sends it back.
const pdf = Buffer.from('%PDF-1.4\n' + lines(400, 'pdf')).toString('base64');
const names = ['get_weather', 'get_forecast', 'get_alerts'];
const anthropicReply = [
  { type: 'server_tool_use', id: 'srvtoolu_t', name: 'tool_search_tool_regex', input: { query: 'weather' } },
  { type: 'tool_search_tool_result', tool_use_id: 'srvtoolu_t', content: { type: 'tool_search_tool_search_result', tool_references: names.map((n) => ({ type: 'tool_reference', tool_name: n })) } },
  { type: 'server_tool_use', id: 'srvtoolu_f', name: 'web_fetch', input: { url: 'https://x/a.pdf' } },
  { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_f', content: { type: 'web_fetch_result', url: 'https://x/a.pdf', retrieved_at: 'now', content: { type: 'document', title: 'a.pdf', source: { type: 'base64', media_type: 'application/pdf', data: pdf } } } },
  { type: 'text', text: 'Loaded the tools and read the PDF.' },
];
const searchOutput = names.map((n) => ({ type: 'tool_reference', toolName: n }));
const fetchOutput = { type: 'web_fetch_result', url: 'https://x/a.pdf', retrievedAt: 'now', content: { type: 'document', title: 'a.pdf', source: { type: 'base64', mediaType: 'application/pdf', data: pdf } } };

test('N1: an AI SDK provider-executed result counts a tool search\'s tool_reference and a fetched PDF as in Anthropic form', () => {
  const anthropic = [{ role: 'user', content: 'go' }, { role: 'assistant', content: anthropicReply }, { role: 'user', content: 'next' }];
  const want = cc.tokenCountWithEstimation(anthropic, { shape: 'anthropic' });
  const model = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: [
      { type: 'tool-call', toolCallId: 'srvtoolu_t', toolName: 'tool_search_tool_regex', input: { query: 'weather' }, providerExecuted: true },
      { type: 'tool-result', toolCallId: 'srvtoolu_t', toolName: 'tool_search_tool_regex', output: { type: 'json', value: searchOutput } },
      { type: 'tool-call', toolCallId: 'srvtoolu_f', toolName: 'web_fetch', input: { url: 'https://x/a.pdf' }, providerExecuted: true },
      { type: 'tool-result', toolCallId: 'srvtoolu_f', toolName: 'web_fetch', output: { type: 'json', value: fetchOutput } },
      { type: 'text', text: 'Loaded the tools and read the PDF.' },
    ] },
    { role: 'user', content: 'next' },
  ];
  const ui = [
    { id: 'u0', role: 'user', parts: [{ type: 'text', text: 'go' }] },
    { id: 'a0', role: 'assistant', parts: [
      { type: 'step-start' },
      { type: 'tool-tool_search_tool_regex', toolCallId: 'srvtoolu_t', state: 'output-available', input: { query: 'weather' }, output: searchOutput, providerExecuted: true },
      { type: 'tool-web_fetch', toolCallId: 'srvtoolu_f', state: 'output-available', input: { url: 'https://x/a.pdf' }, output: fetchOutput, providerExecuted: true },
      { type: 'text', text: 'Loaded the tools and read the PDF.', state: 'done' },
    ] },
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'next' }] },
  ];
  // Before: ModelMessage 7,489 (the PDF's base64 as text, each tool_reference ~10) against 4,222.
  for (const [what, msgs] of [['ModelMessage', model], ['UIMessage', ui]]) {
    near(cc.tokenCountWithEstimation(msgs), want, what);
    assert.equal(count.tokenCountWithEstimation(msgs), cc.tokenCountWithEstimation(msgs));
    // The per-turn record (a Compactor) agrees with the stateless count.
    const c = new cc.Compactor({ model: 'claude-sonnet-4-5', summarize: async () => 'S' });
    for (const m of msgs) c.push(m);
    assert.equal(c.tokenCount(), cc.tokenCountWithEstimation(msgs));
    c.free?.();
  }
  // Each loaded tool alone: a result loading one more tool counts about one definition more.
  const one = (k) => cc.tokenCountWithEstimation([model[0], { role: 'assistant', content: [model[1].content[0],
    { ...model[1].content[1], output: { type: 'json', value: searchOutput.slice(0, k) } }] }, model[2]]);
  assert.ok(one(2) - one(1) >= 500, `${one(2)} - ${one(1)}`);
});

test('N2: a ChatOpenAI custom tool call (isCustomTool, args {input}) counts its free-form input as text', () => {
  const patch = lines(150, '+ patch');
  // As ChatOpenAI (Responses API) returns a custom_tool_call.
  const ai = new AIMessage({ content: [], tool_calls: [{ type: 'tool_call', id: 'call_c', call_id: 'ctc_1', name: 'apply_patch', input: patch, isCustomTool: true, args: { input: patch } }],
    additional_kwargs: { __openai_custom_tool_call_ids__: { call_c: 'ctc_1' } } });
  const held = [new HumanMessage('apply it'), ai, new ToolMessage({ tool_call_id: 'call_c', content: 'applied' })];
  // What ChatOpenAI sends for it.
  const sent = [{ type: 'message', role: 'user', content: 'apply it' }, { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_c', name: 'apply_patch', input: patch },
    { type: 'custom_tool_call_output', call_id: 'call_c', output: 'applied' }];
  const want = cc.tokenCountWithEstimation(sent, { shape: 'openai-responses' });
  // Before: 4,460 against 2,195 (the input as JSON arguments).
  for (const msgs of [held, JSON.parse(JSON.stringify(held)), mapChatMessagesToStoredMessages(held)]) {
    near(cc.tokenCountWithEstimation(msgs), want, 'LangChain');
    assert.equal(count.tokenCountWithEstimation(msgs), cc.tokenCountWithEstimation(msgs));
  }
  // A plain call whose arguments happen to be {input: string} is still JSON.
  const plain = [new HumanMessage('apply it'), new AIMessage({ content: '', tool_calls: [{ id: 'call_c', name: 'apply_patch', args: { input: patch } }] }), held[2]];
  assert.ok(cc.tokenCountWithEstimation(plain) > want * 1.5);
  // The call is still a call its result pairs with.
  assert.equal(cc.validateForApi(held).valid, true);
  const use = cc.toApiMessages(held).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === 'tool_use');
  assert.equal(use?.id, 'call_c');
});

test('N3: an Anthropic document counts its context and the text beside the images of a content source', () => {
  const text = lines(300, 'doc');
  const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
  const user = (content) => [{ role: 'user', content }];
  const alone = cc.tokenCountWithEstimation(user(text));
  const pdf = { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' };
  const cases = [
    // Before: 2,000 (the context not counted).
    [{ type: 'document', source: pdf, title: 'report', context: text }, 2000 + alone],
    // Before: 4,097 (the context not counted).
    [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: text }, context: text }, 2 * alone],
    // Before: a flat 2,000 for 4,097 tokens of text and an image.
    [{ type: 'document', source: { type: 'content', content: [{ type: 'text', text }, image] } }, 2000 + alone],
  ];
  for (const [doc, want] of cases) {
    const msgs = user([doc]);
    near(cc.tokenCountWithEstimation(msgs), want, JSON.stringify(doc).slice(0, 60));
    assert.equal(count.tokenCountWithEstimation(msgs), cc.tokenCountWithEstimation(msgs));
    // As a tool result's content and through a Compactor, the same.
    const inResult = [{ role: 'user', content: 'read it' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/r.pdf' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [doc] }] }];
    const c = new cc.Compactor({ model: 'claude-sonnet-4-5', summarize: async () => 'S' });
    for (const m of inResult) c.push(m);
    assert.equal(c.tokenCount(), cc.tokenCountWithEstimation(inResult));
    assert.ok(cc.tokenCountWithEstimation(inResult) >= want);
    c.free?.();
  }
});
