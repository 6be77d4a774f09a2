// Round fourteen, the lead's own fixes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as cc from '../../pkg/node.js';

cc.setEnvironmentDefaults({});

const history = [
  { role: 'user', content: 'Read the files.' },
  { role: 'assistant', content: `Reading them. ${'x'.repeat(4_000)}` },
  { role: 'user', content: 'Go on.' },
];

/** Compacts `history` with `state` as readFileState; the summarizer runs `meanwhile` first. */
async function compactWith(state, meanwhile) {
  const r = await cc.compactConversation(history, {
    model: 'claude-sonnet-4-5',
    readFileState: state,
    summarize: async () => {
      meanwhile(state);
      return '<summary>The user asked for files to be read.</summary>';
    },
  });
  assert.ok(r.summaryMessages.length > 0);
}

test('array readFileState: a record read meanwhile under another path, with the content and time of one read before, stays', async () => {
  // `cp -p a b` then reading b: same content, same mtime, another file.
  const state = [{ path: '/a', content: 'same', timestamp: 5 }];
  await compactWith(state, (s) => s.push({ path: '/b', content: 'same', timestamp: 5 }));
  assert.deepEqual(state.map((x) => x.path), ['/b']);
});

test('array readFileState: records without content are told apart by path', async () => {
  const state = [{ path: '/a' }, { name: 'skill-x' }];
  await compactWith(state, (s) => s.push({ path: '/new' }, { name: 'skill-y' }));
  assert.deepEqual(state.map((x) => x.path ?? x.name), ['/new', 'skill-y']);
});

test('array readFileState: what was read is still cleared, including the same path read again unchanged in a new record', async () => {
  const state = [{ path: '/a', content: 'one', timestamp: 1 }, { path: '/b', content: 'two', timestamp: 2 }];
  await compactWith(state, (s) => {
    s[0] = { path: '/a', content: 'one', timestamp: 1 }; // the same read, a new object
    s.push({ path: '/c', content: 'one', timestamp: 1 });
  });
  assert.deepEqual(state.map((x) => x.path), ['/c']);
});

test('array readFileState: a record whose path getter throws is kept, and the compaction still succeeds', async () => {
  const state = [{ path: '/a', content: 'one', timestamp: 1 }];
  const odd = { content: 'one', timestamp: 1, get path() { throw new Error('no path'); } };
  await compactWith(state, (s) => s.push(odd));
  assert.equal(state.length, 1);
  assert.equal(state[0], odd);
});

test('array readFileState: many records with no content, read before, are all cleared; those added meanwhile stay', async () => {
  // (All share one content and time: the clear looks each one up by path, not through a list.)
  const state = Array.from({ length: 5_000 }, (_, k) => ({ path: `/f${k}` }));
  await compactWith(state, (s) => s.push({ path: '/late-1' }, { path: '/late-2' }));
  assert.deepEqual(state.map((x) => x.path), ['/late-1', '/late-2']);
});

test('a ChatOpenAI custom tool call (isCustomTool) counts the same in the per-turn check and in the compaction', async () => {
  const { AIMessage, HumanMessage, ToolMessage } = await import('@langchain/core/messages');
  const patch = Array.from({ length: 150 }, (_, i) => `+ line ${i}: a line of the patch with some words in it`).join('\n');
  const msgs = [];
  for (let i = 0; i < 20; i++) {
    msgs.push(new HumanMessage(`apply patch ${i}`));
    msgs.push(new AIMessage({ content: [], tool_calls: [{ type: 'tool_call', id: `call_${i}`, name: 'apply_patch', args: { input: patch }, isCustomTool: true }] }));
    msgs.push(new ToolMessage({ tool_call_id: `call_${i}`, content: 'applied' }));
  }
  msgs.push(new HumanMessage('next'));
  const model = 'claude-sonnet-4-5';
  const count = cc.tokenCountWithEstimation(msgs);
  const preview = await cc.previewCompaction(msgs, { model });
  assert.equal(preview.tokensBefore, count);
  const c = new cc.Compactor({ model, messages: msgs, summarize: async () => '<summary>s</summary>' });
  assert.equal(c.tokenCount(), count);
  const r = await cc.compactConversation(msgs, { model, summarize: async () => '<summary>Patches applied.</summary>' });
  assert.equal(r.preCompactTokenCount, count);
  // The free-form input counted as text: about a quarter of its characters per call.
  assert.ok(count < 20 * patch.length / 3, `${count}`);
  // In the Messages API's form the input stays an object.
  const api = cc.toApiMessages(msgs.slice(0, 3));
  assert.deepEqual(api[1].content.at(-1).input, { input: patch });
});

test('an AI SDK web search result (encryptedContent) is counted without its encrypted pages, as the Anthropic form is', async () => {
  const page = (i) => Buffer.from(`page ${i} `.repeat(600)).toString('base64');
  const results = Array.from({ length: 5 }, (_, i) => ({ type: 'web_search_result', url: `https://e.x/${i}`, title: `Result ${i}`, page_age: null, encrypted_content: page(i) }));
  const anthropic = [
    { role: 'user', content: 'search' },
    { role: 'assistant', content: [
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q' } },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: results },
      { type: 'text', text: 'Found it.' },
    ] },
    { role: 'user', content: 'thanks' },
  ];
  const sdk = results.map((r) => ({ type: r.type, url: r.url, title: r.title, pageAge: null, encryptedContent: r.encrypted_content }));
  const model = [
    { role: 'user', content: 'search' },
    { role: 'assistant', content: [
      { type: 'tool-call', toolCallId: 'srvtoolu_1', toolName: 'web_search', input: { query: 'q' }, providerExecuted: true },
      { type: 'tool-result', toolCallId: 'srvtoolu_1', toolName: 'web_search', output: { type: 'json', value: sdk } },
      { type: 'text', text: 'Found it.' },
    ] },
    { role: 'user', content: 'thanks' },
  ];
  const ui = [
    { id: 'u0', role: 'user', parts: [{ type: 'text', text: 'search' }] },
    { id: 'a0', role: 'assistant', parts: [
      { type: 'tool-web_search', toolCallId: 'srvtoolu_1', state: 'output-available', input: { query: 'q' }, output: sdk, providerExecuted: true },
      { type: 'text', text: 'Found it.', state: 'done' },
    ] },
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'thanks' }] },
  ];
  const want = cc.tokenCountWithEstimation(anthropic);
  assert.ok(want < 300, `${want}`);
  for (const [name, msgs] of [['ModelMessage', model], ['UIMessage', ui]]) {
    const got = cc.tokenCountWithEstimation(msgs);
    // (The field names differ a little: within a quarter, where the pages counted 50 times as much.)
    assert.ok(Math.abs(got - want) <= want / 4, `${name}: ${got} against ${want}`);
    assert.equal((await cc.previewCompaction(msgs, { model: 'claude-sonnet-4-5' })).tokensBefore, got, name);
  }
});
