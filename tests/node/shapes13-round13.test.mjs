// Round 13 shapes probe (/work/probe13-shapes): each test fails on the package of 3cf1931
// (/work/pkg-snap15) and passes after its fix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AIMessage, FunctionMessage, HumanMessage, mapChatMessagesToStoredMessages } from '@langchain/core/messages';
import * as cc from '../../pkg/node.js';
import * as count from '../../pkg/count-node.js';

const lines = (n, s) => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');

test('N1: LangChain legacy function calling (additional_kwargs.function_call + FunctionMessage) reads as OpenAI Chat legacy calls', async () => {
  const args = JSON.stringify({ path: 'src/a.txt', text: lines(200, 'arg') });
  const out = lines(100, 'out');
  const lc = [
    new HumanMessage('write the file'),
    new AIMessage({ content: '', additional_kwargs: { function_call: { name: 'write_file', arguments: args } } }),
    new FunctionMessage({ name: 'write_file', content: out }),
    new AIMessage('done'),
    new HumanMessage('next'),
  ];
  // What ChatOpenAI sends for it (Chat Completions).
  const chat = [
    { role: 'user', content: 'write the file' },
    { role: 'assistant', content: '', function_call: { name: 'write_file', arguments: args } },
    { role: 'function', name: 'write_file', content: out },
    { role: 'assistant', content: 'done' },
    { role: 'user', content: 'next' },
  ];
  const want = cc.tokenCountWithEstimation(chat);
  for (const msgs of [lc, JSON.parse(JSON.stringify(lc)), mapChatMessagesToStoredMessages(lc)]) {
    // Before: 1,378 (the call's arguments not counted) against 7,035.
    assert.ok(Math.abs(cc.tokenCountWithEstimation(msgs) - want) <= want * 0.01);
    assert.equal(count.tokenCountWithEstimation(msgs), cc.tokenCountWithEstimation(msgs));
    // Before: no tool_use (the call gone) and the answer a user text.
    const blocks = cc.toApiMessages(msgs).flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    const use = blocks.find((b) => b.type === 'tool_use');
    const result = blocks.find((b) => b.type === 'tool_result');
    assert.equal(use?.name, 'write_file');
    assert.deepEqual(use.input, JSON.parse(args));
    assert.equal(result?.tool_use_id, use.id);
    assert.deepEqual(cc.validateForApi(msgs), { valid: true, problems: [] });
  }
  // The summarizer sees the call's arguments.
  let request;
  await cc.compactConversation(lc, { model: 'claude-sonnet-4-5', summarize: async (q) => { request = q; return '<summary>S</summary>'; } });
  assert.match(JSON.stringify(request.messages), /arg 199/);
  // A FunctionMessage's output clears as a tool result, still a FunctionMessage of its name.
  const mc = cc.microCompact(lc, { keepRecent: 0, compactableTools: ['*'] });
  assert.equal(mc.clearedToolUseIds.length, 1);
  assert.ok(mc.messages[2] instanceof FunctionMessage);
  assert.equal(mc.messages[2].name, 'write_file');
  assert.equal(mc.messages[2].content, '[Old tool result content cleared]');
  // A pending legacy call is kept with the latest request when compacting.
  const pending = lc.slice(0, 2);
  const kept = cc.buildPostCompactMessages(await cc.compactConversation([new HumanMessage(lines(300, 'old')), new AIMessage('ok'), ...pending],
    { model: 'claude-sonnet-4-5', summarize: async () => '<summary>S</summary>' }, { keepLastUserMessage: true }));
  assert.equal(kept.at(-1), pending[1]);
});
