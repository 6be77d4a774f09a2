// Round twelve, the lead's own fixes: runToolLoop's onStep that throws no longer leaves a tool
// call unanswered in the caller's Compactor.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runToolLoop } from '../../pkg/agents/anthropic.js';
import { Compactor, offlineSummarizer, toApiMessages, validateForApi } from '../../pkg/node.js';

const reply = (id, stop, content) => ({ id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', stop_reason: stop, content, usage: { input_tokens: 500, output_tokens: 20 } });

test('runToolLoop: onStep that throws leaves every tool call of the reply answered (not run)', async () => {
  const calls = [
    { type: 'text', text: 'Reading both.' },
    { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.rs' } },
    { type: 'tool_use', id: 'toolu_b', name: 'read_file', input: { path: 'b.rs' } },
  ];
  const client = { messages: { create: async () => reply('msg_1', 'tool_use', calls) } };
  const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer() });
  compactor.push({ role: 'user', content: 'Read a.rs and b.rs.' });
  let ran = 0;
  const boom = new Error('the UI went away');
  await assert.rejects(
    runToolLoop({ client, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 1024 }, tools: { read_file: () => { ran++; return 'x'; } }, onStep: () => { throw boom; } }),
    (e) => e === boom,
  );
  assert.equal(ran, 0, 'the tools did not run');
  const last = compactor.messages.at(-1);
  // Before: the last message was the reply itself, its two calls unanswered (the API answers 400).
  assert.equal(last.role, 'user');
  assert.deepEqual(last.content.map((b) => [b.tool_use_id, b.is_error]), [['toolu_a', true], ['toolu_b', true]]);
  compactor.push({ role: 'user', content: 'Try again.' });
  assert.equal(validateForApi(toApiMessages(compactor.messages)).valid, true);
  compactor.free();
});

test('runToolLoop: onStep that throws on a reply without tool calls adds nothing', async () => {
  const client = { messages: { create: async () => reply('msg_1', 'end_turn', [{ type: 'text', text: 'Done.' }]) } };
  const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer() });
  compactor.push({ role: 'user', content: 'Say done.' });
  await assert.rejects(runToolLoop({ client, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 1024 }, onStep: () => { throw new Error('x'); } }), /x/);
  assert.equal(compactor.messages.length, 2);
  assert.equal(compactor.messages.at(-1).role, 'assistant');
  compactor.free();
});
