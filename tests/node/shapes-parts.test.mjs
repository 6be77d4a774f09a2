// The less common parts of the AI SDK's and LangChain's messages, read for what they mean:
// a provider-executed tool's call and result (a server tool's, never cleared), an error
// output that stays an error when cleared, tool approvals (agent-loop steering, not a user
// request), a denied call's result in a UIMessage, and LangChain tool calls stored only in
// `additional_kwargs` by older versions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modelMessageSchema } from 'ai';
import * as cc from '../../pkg/node.js';
import { SONNET } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const summarize = async () => '<summary>The user asked for work; it was done.</summary>';

test('AI SDK: a provider-executed tool (its result inside the assistant message) is a server tool: never cleared, paired in the API view', () => {
  const results = Array.from({ length: 10 }, (_, i) => ({ type: 'web_search_result', url: `https://example.com/${i}`, title: `page ${i}`, encryptedContent: 'E'.repeat(3_000) }));
  const search = (id) => ({ role: 'assistant', content: [
    { type: 'tool-call', toolCallId: id, toolName: 'web_search', input: { query: 'rust wasm' }, providerExecuted: true },
    { type: 'tool-result', toolCallId: id, toolName: 'web_search', output: { type: 'json', value: results } },
    { type: 'text', text: 'Here is what I found.' },
  ] });
  const msgs = [
    { role: 'user', content: 'search 1' }, search('srv_1'),
    { role: 'user', content: 'search 2' }, search('srv_2'),
    { role: 'user', content: 'search 3' }, search('srv_3'),
    { role: 'user', content: 'thanks' },
  ];
  for (const m of msgs) modelMessageSchema.parse(m);
  const r = cc.microCompact(msgs, { keepRecent: 1, compactableTools: ['*'] });
  assert.deepEqual(r.clearedToolUseIds, []);
  assert.equal(r.messages[1], msgs[1], 'the message is the caller\'s, untouched');
  assert.deepEqual(cc.validateForApi(msgs), { valid: true, problems: [] });
  const api = cc.toApiMessages(msgs);
  // The results count as in Anthropic form: their titles and URLs, not the encrypted pages
  // (`encryptedContent`, as `encrypted_content`, which the API expands itself).
  const count = cc.tokenCountWithEstimation(msgs);
  assert.ok(count > 300 && count < 3_000, `the results count, without their pages: ${count}`);
  assert.ok(Math.abs(count - cc.tokenCountWithEstimation(api)) <= count / 10, `${count} against ${cc.tokenCountWithEstimation(api)}`);
  assert.deepEqual(api[1].content.map((b) => b.type), ['server_tool_use', 'web_search_tool_result', 'text']);
  // A client tool's result (in a role: 'tool' message) is cleared as before.
  const client = [
    { role: 'user', content: 'read' },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'Read', input: { path: '/a' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'Read', output: { type: 'text', value: 'x'.repeat(40_000) } }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c2', toolName: 'Read', input: { path: '/b' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c2', toolName: 'Read', output: { type: 'text', value: 'y' } }] },
  ];
  assert.deepEqual(cc.microCompact(client, { keepRecent: 1 }).clearedToolUseIds, ['c1']);
});

test('AI SDK: a cleared error output stays an error with its provider options; a denied call is left as it is', () => {
  const log = 'error: test failed at line 12\n'.repeat(1_400);
  const cache = { anthropic: { cacheControl: { type: 'ephemeral' } } };
  const outputs = [
    { type: 'error-text', value: log, providerOptions: cache },
    { type: 'error-json', value: { stderr: log, code: 1 } },
    { type: 'text', value: log, providerOptions: cache },
    { type: 'execution-denied', reason: 'The user refused: ' + log },
  ];
  const msgs = [{ role: 'user', content: 'run the tests' }];
  outputs.forEach((output, i) => {
    msgs.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: `call_${i}`, toolName: 'Bash', input: { command: 'cargo test' } }] });
    msgs.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `call_${i}`, toolName: 'Bash', output }] });
  });
  msgs.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'last', toolName: 'Bash', input: { command: 'ls' } }] });
  msgs.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'last', toolName: 'Bash', output: { type: 'text', value: 'a' } }] });
  const r = cc.microCompact(msgs, { keepRecent: 1 });
  const out = (i) => r.messages[2 + 2 * i].content[0].output;
  assert.equal(out(0).type, 'error-text');
  assert.deepEqual(out(0).providerOptions, cache);
  assert.equal(out(1).type, 'error-json');
  assert.equal(typeof out(1).value, 'string');
  assert.equal(out(2).type, 'text');
  assert.deepEqual(out(2).providerOptions, cache);
  assert.ok(out(0).value.length < 200 && out(2).value.length < 200, 'the values are cleared');
  assert.deepEqual(out(3), outputs[3], 'a denied call has no output to clear');
  assert.ok(!r.clearedToolUseIds.includes('call_3'), 'nor is it reported as cleared');
  assert.deepEqual(r.clearedToolUseIds, ['call_0', 'call_1', 'call_2']);
  for (const m of r.messages) modelMessageSchema.parse(m);
});

test('AI SDK: a tool approval is not the latest user request that keepLastUserMessage keeps', async () => {
  const msgs = [];
  for (let i = 0; i < 6; i++) {
    msgs.push({ role: 'user', content: `question ${i}: ` + 'w'.repeat(4_000) });
    msgs.push({ role: 'assistant', content: `answer ${i}: ` + 'v'.repeat(4_000) });
  }
  msgs.push({ role: 'user', content: 'Please delete the build directory.' });
  msgs.push({ role: 'assistant', content: [
    { type: 'tool-call', toolCallId: 'call1', toolName: 'Bash', input: { command: 'rm -rf build' } },
    { type: 'tool-approval-request', approvalId: 'ap1', toolCallId: 'call1' },
  ] });
  msgs.push({ role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'ap1', approved: true }] });
  for (const m of msgs) modelMessageSchema.parse(m);
  const r = await cc.compactConversation(msgs, { model: SONNET, summarize }, { keepLastUserMessage: true });
  assert.ok(r.messagesToKeep.includes(msgs[12]), 'the user\'s request is kept');
  assert.ok(!r.messagesToKeep.includes(msgs[14]) || r.messagesToKeep.includes(msgs[13]), 'an approval answer is never kept without its request');
});

test('UIMessage: a denied tool call (state output-denied) has its error result in the API view', () => {
  const msgs = [
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'clean up' }] },
    { id: 'a1', role: 'assistant', parts: [
      { type: 'tool-Bash', toolCallId: 'call1', state: 'output-denied', input: { command: 'rm -rf /' }, approval: { id: 'ap1', approved: false, reason: 'too dangerous' } },
      { type: 'text', text: 'I will not run that.' },
    ] },
    { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'ok' }] },
  ];
  assert.deepEqual(cc.validateForApi(msgs), { valid: true, problems: [] });
  const result = cc.toApiMessages(msgs).flatMap((m) => (Array.isArray(m.content) ? m.content : [])).find((b) => b.type === 'tool_result');
  assert.equal(result.tool_use_id, 'call1');
  assert.equal(result.is_error, true);
  assert.match(JSON.stringify(result.content), /too dangerous/);
});

test('LangChain: tool calls stored only in additional_kwargs (older versions) are read as LangChain reads them', () => {
  const args = JSON.stringify({ path: '/src/big.txt', content: 'x'.repeat(40_000) });
  const openaiCalls = { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'write_file', arguments: args } }] };
  const serialized = [
    { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'HumanMessage'], kwargs: { content: 'write the file', additional_kwargs: {}, response_metadata: {} } },
    { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'AIMessage'], kwargs: { content: '', additional_kwargs: openaiCalls, response_metadata: {} } },
    { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'ToolMessage'], kwargs: { content: 'written', tool_call_id: 'call_1', additional_kwargs: {}, response_metadata: {} } },
  ];
  const stored = [
    { type: 'human', data: { content: 'write the file', additional_kwargs: {}, response_metadata: {} } },
    { type: 'ai', data: { content: '', additional_kwargs: openaiCalls, response_metadata: {} } },
    { type: 'tool', data: { content: 'written', tool_call_id: 'call_1', additional_kwargs: {}, response_metadata: {} } },
  ];
  for (const [form, msgs] of Object.entries({ serialized, stored })) {
    assert.ok(cc.tokenCountWithEstimation(msgs) > 10_000, `${form}: the arguments count`);
    assert.deepEqual(cc.validateForApi(msgs), { valid: true, problems: [] }, form);
    const use = cc.toApiMessages(msgs)[1].content.find((b) => b.type === 'tool_use');
    assert.equal(use.name, 'write_file', form);
    assert.equal(use.input.path, '/src/big.txt', form);
  }
});

test('UIMessage: a provider-executed tool part is a server tool (never cleared, its result in the assistant turn); a denied part counts its reason', () => {
  const results = Array.from({ length: 10 }, (_, i) => ({ url: `https://example.com/${i}`, title: `page ${i}`, encryptedContent: 'E'.repeat(3_000) }));
  const turn = (k) => [
    { id: `u${k}`, role: 'user', parts: [{ type: 'text', text: `search ${k}` }] },
    { id: `a${k}`, role: 'assistant', parts: [
      { type: 'tool-web_search', toolCallId: `srv_${k}`, state: 'output-available', input: { query: 'q' }, output: results, providerExecuted: true },
      { type: 'text', text: 'found it' },
    ] },
  ];
  const msgs = [...turn(1), ...turn(2), ...turn(3), { id: 'u9', role: 'user', parts: [{ type: 'text', text: 'thanks' }] }];
  const r = cc.microCompact(msgs, { keepRecent: 1, compactableTools: ['*'] });
  assert.deepEqual(r.clearedToolUseIds, []);
  assert.deepEqual(cc.validateForApi(msgs), { valid: true, problems: [] });
  assert.deepEqual(cc.toApiMessages(msgs)[1].content.map((b) => b.type), ['server_tool_use', 'web_search_tool_result', 'text']);

  const reason = 'too dangerous: ' + 'r'.repeat(20_000);
  const denied = (state) => [
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'clean up' }] },
    { id: 'a1', role: 'assistant', parts: [{ type: 'tool-Bash', toolCallId: 'call1', state, input: { command: 'rm -rf /' }, approval: { id: 'ap1', approved: false, reason }, ...(state === 'output-error' ? { errorText: reason } : {}) }] },
  ];
  const d = cc.tokenCountWithEstimation(denied('output-denied'));
  assert.ok(Math.abs(d - cc.tokenCountWithEstimation(denied('output-error'))) < 50, `the denial counts as the text it sends (${d})`);
});
