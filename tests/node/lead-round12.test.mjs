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

// hostile12's H5: the state was cleared whole after a compaction, entries the agent added or
// changed while it ran (read during the summary request) included.
import { compactConversation } from '../../pkg/node.js';

const history = () => {
  const msgs = [];
  for (let i = 0; i < 10; i++) {
    msgs.push({ role: 'user', content: `question ${i} `.repeat(300) });
    msgs.push({ role: 'assistant', content: `answer ${i} `.repeat(300) });
  }
  return msgs;
};

for (const kind of ['Map', 'object', 'array']) {
  test(`readFileState (${kind}): what the agent reads while a compaction runs stays after it; the rest is cleared`, async () => {
    const a = { path: '/a.txt', content: 'A', timestamp: 1 };
    const b = { path: '/b.txt', content: 'B', timestamp: 1 };
    const fresh = { path: '/read-meanwhile.txt', content: 'NEW', timestamp: 2 };
    const b2 = { path: '/b.txt', content: 'B, read again', timestamp: 3 };
    const state = kind === 'Map' ? new Map([['/a.txt', a], ['/b.txt', b]]) : kind === 'object' ? { '/a.txt': a, '/b.txt': b } : [a, b];
    const summarize = async () => {
      if (kind === 'Map') { state.set(fresh.path, fresh); state.set(b2.path, b2); }
      else if (kind === 'object') { state[fresh.path] = fresh; state[b2.path] = b2; }
      else { state.push(fresh); state[1] = b2; }
      return '<summary>s</summary>';
    };
    const r = await compactConversation(history(), { model: 'claude-sonnet-4-5', readFileState: state, summarize });
    assert.ok(r.summary.length > 0);
    const left = kind === 'Map' ? [...state.values()] : kind === 'object' ? Object.values(state) : [...state];
    // Before: empty (both entries the agent read during the summary request were lost).
    assert.deepEqual(left.map((x) => x.path).sort(), ['/b.txt', '/read-meanwhile.txt']);
    assert.equal(left.find((x) => x.path === '/b.txt'), b2);
  });
}

test('readFileState untouched while a compaction runs is cleared whole, as before', async () => {
  const state = new Map([['/a.txt', { content: 'A', timestamp: 1 }]]);
  await compactConversation(history(), { model: 'claude-sonnet-4-5', readFileState: state, summarize: async () => '<summary>s</summary>' });
  assert.equal(state.size, 0);
});

test('readFileState whose entries are getters giving a new object each read is still cleared (review12)', async () => {
  const store = { '/a': 'A', '/b': 'B' };
  const state = {};
  for (const k of Object.keys(store)) Object.defineProperty(state, k, { get: () => ({ content: store[k], timestamp: 1 }), enumerable: true, configurable: true });
  await compactConversation(history(), { model: 'claude-sonnet-4-5', readFileState: state, summarize: async () => '<summary>s</summary>' });
  assert.deepEqual(Object.keys(state), []);
  // An array of file states read again as copies: the same content and time are the entries read.
  const arr = [{ path: '/a', content: 'A', timestamp: 1 }];
  const copies = new Proxy(arr, {});
  await compactConversation(history(), { model: 'claude-sonnet-4-5', readFileState: copies, summarize: async () => { arr.push({ path: '/new', content: 'N', timestamp: 2 }); return '<summary>s</summary>'; } });
  assert.deepEqual(arr.map((x) => x.path), ['/new']);
});

test('runToolLoop: a compaction pause with a Compactor holding transcript lines goes on (review12)', async () => {
  const requests = [];
  const replies = [
    { content: [{ type: 'text', text: 'reading' }, { type: 'tool_use', id: 'tu_1', name: 'read', input: { path: 'a' } }], stop_reason: 'tool_use', usage: { input_tokens: 60000, output_tokens: 20 } },
    { content: [{ type: 'compaction', content: 'SUMMARY: fix test; a read.', encrypted_content: null }], stop_reason: 'compaction', usage: { input_tokens: 0, output_tokens: 0 } },
    { content: [{ type: 'text', text: 'fixed' }], stop_reason: 'end_turn', usage: { input_tokens: 400, output_tokens: 5 } },
  ];
  const client = { messages: { create: async (body) => { requests.push(structuredClone(body.messages)); return { id: `m${requests.length}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', ...replies[requests.length - 1] }; } } };
  const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize: async () => '<summary>S</summary>' });
  compactor.push({ type: 'user', uuid: 'u1', parentUuid: null, sessionId: 's', timestamp: '2026-01-01T00:00:00Z', message: { role: 'user', content: 'Fix the failing test' } });
  // Before: UNSUPPORTED_SHAPE (the API's rule applied to the raw lines).
  const r = await runToolLoop({ client, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 1024 }, tools: { read: () => 'contents of a' } });
  assert.equal(r.message.stop_reason, 'end_turn');
  const third = requests[2];
  assert.equal(third[0].content[0].type, 'compaction');
  assert.match(JSON.stringify(third[1]), /Fix the failing/);
  assert.equal(validateForApi(third).valid, true);
  compactor.free();
});

test('Compactor: OpenAI /responses/compact output pushed message by message counts as in one batch (review12)', async () => {
  const { Compactor: C, tokenCountWithEstimation } = await import('../../pkg/node.js');
  const long = (s) => s + ' ' + 'lorem ipsum '.repeat(2000);
  const item = { type: 'compaction', id: 'cmp_1', encrypted_content: `gAAAAB${'x'.repeat(400)}` };
  const conv = [
    { role: 'user', content: long('first') },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: long('second') }] },
    item,
    { role: 'user', content: 'next' },
  ];
  const mk = () => new C({ model: 'gpt-5', summarize: async () => '<summary>S</summary>' });
  const batch = tokenCountWithEstimation(conv);
  assert.ok(batch > 10_000, `${batch}`);
  const each = mk();
  for (const m of conv) each.push(m);
  const two = mk();
  two.pushMany(conv.slice(0, 2));
  two.pushMany(conv.slice(2));
  // Before: 103 for both (the item read as where the context starts).
  assert.equal(each.tokenCount(), batch);
  assert.equal(two.tokenCount(), batch);
  // After a tool result (no /compact window), the item starts the context pushed either way.
  const other = [{ role: 'user', content: long('first') }, { role: 'assistant', content: 'ok' }, item, { role: 'user', content: 'next' }];
  const alone = mk();
  for (const m of other) alone.push(m);
  assert.equal(alone.tokenCount(), tokenCountWithEstimation(other));
  each.free(); two.free(); alone.free();
});
