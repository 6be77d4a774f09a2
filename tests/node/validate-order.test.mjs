// validateForApi reports a tool result that does not come first in the message after its call:
// the Messages API refuses a user message following tool_use blocks that does not begin with
// their tool_result blocks, and OpenAI Chat requires the tool messages right after the
// assistant message with tool_calls. A user message placed between a call and its result is
// merged with the result by the API view (text first), so it is reported too, in every shape.
// Claude Code transcript lines are the exception: Claude Code writes each result as a line of
// its own among other user lines (hook outputs, attachments, interruption texts), and the API
// view sends the results of the user message they form first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';

const orderProblems = (messages) =>
  cc.validateForApi(messages).problems.filter((p) => /comes after a .* block/.test(p.problem));

const anthropicCall = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.ts' } }] };
const anthropicResult = { type: 'tool_result', tool_use_id: 'toolu_1', content: 'A' };

test('Anthropic: text before the tool_result in the message after the call', () => {
  const v = cc.validateForApi([
    { role: 'user', content: 'read a.ts' },
    anthropicCall,
    { role: 'user', content: [{ type: 'text', text: 'also b.ts' }, anthropicResult] },
  ]);
  assert.equal(v.valid, false);
  assert.equal(v.problems.length, 1, JSON.stringify(v.problems));
  assert.equal(v.problems[0].message, 2);
  assert.match(v.problems[0].problem, /toolu_1/);
  assert.match(v.problems[0].problem, /must come first/);
});

test('Anthropic: a user message between the call and its result', () => {
  const v = cc.validateForApi([
    { role: 'user', content: 'read a.ts' },
    anthropicCall,
    { role: 'user', content: 'also b.ts' },
    { role: 'user', content: [anthropicResult] },
  ]);
  assert.equal(v.valid, false);
  assert.deepEqual(orderProblems([
    { role: 'user', content: 'read a.ts' },
    anthropicCall,
    { role: 'user', content: 'also b.ts' },
    { role: 'user', content: [anthropicResult] },
  ]).map((p) => p.message), [2]);
  assert.match(v.problems[0].problem, /toolu_1/);
});

test('Anthropic: the results first, then text, is valid', () => {
  const v = cc.validateForApi([
    { role: 'user', content: 'read a.ts' },
    anthropicCall,
    { role: 'user', content: [anthropicResult, { type: 'text', text: 'also b.ts' }] },
    { role: 'assistant', content: 'done' },
  ]);
  assert.deepEqual(v, { valid: true, problems: [] });
});

test('OpenAI Chat: a user message between tool_calls and the tool message', () => {
  const call = { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"p":"a.ts"}' } }] };
  const bad = [
    { role: 'user', content: 'read a.ts' },
    call,
    { role: 'user', content: 'also b.ts' },
    { role: 'tool', tool_call_id: 'call_1', content: 'A' },
  ];
  const v = cc.validateForApi(bad);
  assert.equal(v.valid, false);
  const p = orderProblems(bad);
  assert.equal(p.length, 1, JSON.stringify(v.problems));
  assert.match(p[0].problem, /call_1/);
  // Between the tool messages of parallel calls too.
  const two = { role: 'assistant', content: null, tool_calls: ['call_1', 'call_2'].map((id) => ({ id, type: 'function', function: { name: 'read', arguments: '{}' } })) };
  const middle = [
    { role: 'user', content: 'read' },
    two,
    { role: 'tool', tool_call_id: 'call_1', content: 'A' },
    { role: 'user', content: 'also b.ts' },
    { role: 'tool', tool_call_id: 'call_2', content: 'B' },
  ];
  assert.deepEqual(orderProblems(middle).map((x) => /call_2/.test(x.problem)), [true]);
  // In order: valid.
  const good = [
    { role: 'user', content: 'read a.ts' },
    call,
    { role: 'tool', tool_call_id: 'call_1', content: 'A' },
    { role: 'user', content: 'also b.ts' },
  ];
  assert.deepEqual(cc.validateForApi(good), { valid: true, problems: [] });
});

test('AI SDK ModelMessage: a user message between the tool-call and the tool message', () => {
  const call = { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { p: 'a.ts' } }] };
  const result = { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'read', output: { type: 'text', value: 'A' } }] };
  const bad = [{ role: 'user', content: 'read a.ts' }, call, { role: 'user', content: 'also b.ts' }, result];
  const v = cc.validateForApi(bad);
  assert.equal(v.valid, false);
  const p = orderProblems(bad);
  assert.equal(p.length, 1, JSON.stringify(v.problems));
  assert.match(p[0].problem, /c1/);
  const good = [{ role: 'user', content: 'read a.ts' }, call, result, { role: 'user', content: 'also b.ts' }];
  assert.deepEqual(cc.validateForApi(good), { valid: true, problems: [] });
});

test('Claude Code lines: hook outputs and an interruption among the results are sent after them', () => {
  const call = (id) => ({ type: 'assistant', uuid: `a-${id}`, message: { id: 'msg_1', role: 'assistant', content: [{ type: 'tool_use', id, name: 'Read', input: {} }] } });
  const result = (id) => ({ type: 'user', uuid: `u-${id}`, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'x' }] } });
  const hook = (t) => ({ type: 'attachment', uuid: `h-${t}`, attachment: { type: 'hook_success', content: t } });
  const lines = [
    { type: 'user', uuid: 'u0', message: { role: 'user', content: 'go' } },
    call('toolu_1'), hook('busy 1'), result('toolu_1'), call('toolu_2'), result('toolu_2'), hook('busy 2'),
    { type: 'user', uuid: 'u9', message: { role: 'user', content: [{ type: 'text', text: '[Request interrupted by user for tool use]' }] } },
  ];
  const view = cc.toApiMessages(lines);
  assert.equal(view.length, 3);
  assert.deepEqual(view[2].content.map((b) => b.type === 'text' ? b.text : b.tool_use_id),
    ['toolu_1', 'toolu_2', 'busy 1', 'busy 2', '[Request interrupted by user for tool use]']);
  assert.deepEqual(cc.validateForApi(lines), { valid: true, problems: [] });
});
