// What the eighteenth probe of other ecosystems' shapes found. Each test fails on the package
// before the fix (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const prose = (n) => Array.from({ length: n }, (_, i) => `paragraph ${i}: the reply explains the plan in some detail here`).join('\n');
const summarize = async () => '<summary>Work so far.</summary>';

// ---- S1: a plain OpenAI conversation with a `developer` message ----------------------------
// `developer` is OpenAI's instructions role (Chat Completions, Responses); the Messages API and
// the AI SDK have none. A conversation of plain messages (string content, text parts) that
// holds one was taken for Anthropic messages: a compaction answered with a `compact_boundary`
// transcript line first (no `role`: OpenAI refuses the request, "messages[0].role" missing).

const chat = [
  { role: 'developer', content: 'You are a terse assistant.' },
  { role: 'user', content: 'explain the plan' },
  { role: 'assistant', content: [{ type: 'text', text: prose(400) }] },
  { role: 'user', content: 'and the next step?' },
  { role: 'assistant', content: prose(300) },
  { role: 'user', content: 'go on' },
];

const withoutIds = (ms) => JSON.stringify(ms, (k, v) => (k === 'uuid' || k === 'timestamp' ? undefined : v));

test('shapes18 S1: a compaction of plain messages with a developer message answers in OpenAI form', async () => {
  const result = await cc.compactConversation(chat, { model: 'gpt-5', summarize });
  const out = cc.buildPostCompactMessages(result);
  for (const [i, m] of out.entries()) {
    assert.equal(typeof m.role, 'string', `messages[${i}] has a role: ${JSON.stringify(m).slice(0, 120)}`);
    assert.notEqual(m.type, 'system', `no transcript line at ${i}`);
  }
  assert.deepEqual(out[0], chat[0], 'the developer message stays first, verbatim');
  const named = await cc.compactConversation(chat, { model: 'gpt-5', summarize, shape: 'openai-chat' });
  assert.equal(withoutIds(out), withoutIds(cc.buildPostCompactMessages(named)), 'as if shape: openai-chat were named');
});

test('shapes18 S1: a Compactor of such messages commits OpenAI messages', async () => {
  const c = new cc.Compactor({ model: 'gpt-5', summarize });
  c.pushMany(chat);
  await c.compact();
  const out = c.messages;
  assert.ok(out.every((m) => typeof m.role === 'string'), JSON.stringify(out).slice(0, 300));
  assert.deepEqual(out[0], chat[0]);
});

test('shapes18 S1: a developer message mixes with any specific shape, which decides', async () => {
  const responses = [
    { role: 'developer', content: 'Be brief.' },
    { role: 'user', content: 'read it' },
    { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: prose(400) },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] },
    { role: 'user', content: 'next' },
  ];
  const result = await cc.compactConversation(responses, { model: 'gpt-5', summarize });
  const out = cc.buildPostCompactMessages(result);
  assert.deepEqual(out[0], responses[0]);
  assert.ok(out.every((m) => typeof m.role === 'string' || typeof m.type === 'string'));
  assert.ok(!out.some((m) => m.subtype === 'compact_boundary'));
  // Anthropic tool blocks with a (misplaced) developer message are still read as Anthropic.
  const anthropic = [
    { role: 'developer', content: 'Be brief.' },
    { role: 'user', content: 'read it' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: prose(10) }] },
  ];
  assert.ok(cc.tokenCountWithEstimation(anthropic) > 0);
  // Counting is unchanged by the shape: the same as named Chat messages.
  assert.equal(cc.tokenCountWithEstimation(chat), cc.tokenCountWithEstimation(chat, { shape: 'openai-chat' }));
});
