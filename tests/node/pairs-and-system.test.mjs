// A compaction's result is always a valid conversation, and the app's system messages are not
// lost: pinned halves of tool pairs keep their partner (or become text), a trailing tool call
// still waiting for its result stays with the summary (so the result the agent appends or
// pushes meanwhile follows its call), the system messages that open a conversation are kept
// first, and system messages in its middle are shown to the summarizer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { HumanMessage, AIMessage, SystemMessage } from '@langchain/core/messages';

const MODEL = 'claude-sonnet-4-5';
const summarize = async () => '<summary>Project set up with make.</summary>';

// A recording summarizer: `sent()` is the text of every request's messages.
function recorder() {
  const calls = [];
  const f = async (req) => {
    calls.push(req);
    return { content: [{ type: 'text', text: '<summary>Work goes on.</summary>' }], stop_reason: 'end_turn', usage: { input_tokens: 100, output_tokens: 20 } };
  };
  f.sent = () => calls.map((r) => JSON.stringify(r.messages)).join('\n');
  return f;
}

const valid = (out, opts) => assert.deepEqual(cc.validateForApi(out, opts), { valid: true, problems: [] }, JSON.stringify(out.map((m) => m.role ?? m.type)));

// user, then 10 rounds of assistant(tool_use) / user(tool_result), then a reply (Anthropic).
function anthropicRounds() {
  const m = [];
  for (let i = 0; i < 10; i++) {
    m.push({ role: 'user', content: i === 0 ? 'Set up the project ' + 'x'.repeat(3000) : [{ type: 'tool_result', tool_use_id: 'toolu_' + (i - 1), content: 'output ' + i + ' ' + 'y'.repeat(3000) }] });
    m.push({ role: 'assistant', content: [{ type: 'text', text: 'step ' + i }, { type: 'tool_use', id: 'toolu_' + i, name: 'Bash', input: { command: 'make ' + i } }] });
  }
  m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_9', content: 'done' }] });
  m.push({ role: 'assistant', content: 'All set.' });
  return m;
}

// The same in OpenAI Chat Completions messages, opened by a system message.
function openaiRounds() {
  const m = [{ role: 'system', content: 'You are a build bot.' }];
  for (let i = 0; i < 10; i++) {
    m.push(i === 0 ? { role: 'user', content: 'Set up the project ' + 'x'.repeat(3000) } : { role: 'tool', tool_call_id: 'call_' + (i - 1), content: 'output ' + i + ' ' + 'y'.repeat(3000) });
    m.push({ role: 'assistant', content: 'step ' + i, tool_calls: [{ id: 'call_' + i, type: 'function', function: { name: 'Bash', arguments: JSON.stringify({ command: 'make ' + i }) } }] });
  }
  m.push({ role: 'tool', tool_call_id: 'call_9', content: 'done' });
  m.push({ role: 'assistant', content: 'All set.' });
  return m;
}

test('a pinned half of a tool pair keeps its partner, in every order, as the caller\'s own objects', async () => {
  for (const [messages, call, result] of [[anthropicRounds(), 1, 2], [openaiRounds(), 2, 3]]) {
    for (const pinned of [[messages[call]], [messages[result]], [messages[call], messages[result]], [messages[result], messages[call]], ['a note', messages[call], 'another']]) {
      const r = await cc.compactConversation(messages, { model: MODEL, pinned, summarize });
      const out = cc.buildPostCompactMessages(r);
      valid(out);
      // Both halves are there once, verbatim (the same objects), call before result.
      const at = (m) => out.filter((x) => x === m).length;
      assert.equal(at(messages[call]), 1);
      assert.equal(at(messages[result]), 1);
      assert.ok(out.indexOf(messages[call]) + 1 === out.indexOf(messages[result]));
      for (const p of pinned.filter((p) => typeof p === 'string')) assert.ok(JSON.stringify(out).includes(p));
    }
  }
});

test('a pinned deep copy is found too, and a transcript response split over lines is kept whole', async () => {
  const messages = anthropicRounds();
  const r = await cc.compactConversation(messages, { model: MODEL, pinned: [structuredClone(messages[2])], summarize });
  const out = cc.buildPostCompactMessages(r);
  valid(out);
  assert.ok(out.includes(messages[1]) && out.includes(messages[2]));

  const line = (uuid, parentUuid, message) => ({ type: message.role, uuid, parentUuid, isSidechain: false, sessionId: 's', timestamp: '2026-01-01T00:00:00.000Z', message });
  const t = [line('u0', null, { role: 'user', content: 'Read both files ' + 'x'.repeat(4000) })];
  t.push(line('a1', 'u0', { role: 'assistant', id: 'msg_1', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a' } }] }));
  t.push(line('r1', 'a1', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'A '.repeat(2000) }] }));
  t.push(line('a2', 'r1', { role: 'assistant', id: 'msg_1', content: [{ type: 'tool_use', id: 't2', name: 'Read', input: { file_path: '/b' } }] }));
  t.push(line('r2', 'a2', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: 'B '.repeat(2000) }] }));
  t.push(line('a3', 'r2', { role: 'assistant', id: 'msg_2', content: [{ type: 'text', text: 'Both read. ' + 'z'.repeat(4000) }] }));
  t.push(line('u4', 'a3', { role: 'user', content: 'thanks' }));
  const rt = await cc.compactConversation(t, { model: MODEL, pinned: [t[4]], summarize });
  const ot = cc.buildPostCompactMessages(rt);
  valid(ot);
  for (const k of [1, 2, 3, 4]) assert.ok(ot.includes(t[k]), `line ${k} kept`);
});

test('a pinned half whose partner is nowhere becomes text, its content kept', async () => {
  const lone = { role: 'assistant', content: [{ type: 'text', text: 'Deploying.' }, { type: 'tool_use', id: 'toolu_old', name: 'Deploy', input: { target: 'prod-eu-7' } }] };
  const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_gone', content: 'DEPLOY-ID-4242' }] };
  for (const pinned of [[lone], [result], [result, lone]]) {
    const r = await cc.compactConversation(anthropicRounds(), { model: MODEL, pinned, summarize });
    const out = cc.buildPostCompactMessages(r);
    valid(out);
    const text = JSON.stringify(r.summaryMessages.slice(1));
    for (const p of pinned) for (const needle of ['prod-eu-7', 'toolu_old', 'Deploy', 'DEPLOY-ID-4242', 'toolu_gone']) {
      if (JSON.stringify(p).includes(needle)) assert.ok(text.includes(needle), `${needle} kept`);
    }
  }
  // Both halves given in order still pair: kept verbatim.
  const pair = [lone, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_old', content: 'ok' }] }];
  const r = await cc.compactConversation(anthropicRounds(), { model: MODEL, pinned: pair, summarize });
  assert.equal(r.summaryMessages[1], pair[0]);
  assert.equal(r.summaryMessages[2], pair[1]);
});

test('in another ecosystem\'s messages too: a pinned copy is found, a lone half becomes text', async () => {
  const messages = openaiRounds();
  const r = await cc.compactConversation(messages, { model: MODEL, pinned: [structuredClone(messages[3])], summarize });
  const out = cc.buildPostCompactMessages(r);
  valid(out);
  assert.ok(out.includes(messages[2]) && out.includes(messages[3]));
  for (const lone of [
    { role: 'tool', tool_call_id: 'call_gone', content: 'DEPLOY-ID-4242' },
    { role: 'assistant', content: 'Deploying.', tool_calls: [{ id: 'call_old', type: 'function', function: { name: 'Deploy', arguments: '{"target":"prod-eu-7"}' } }] },
  ]) {
    const rl = await cc.compactConversation(messages, { model: MODEL, pinned: [lone, 'a note'], summarize });
    const ol = cc.buildPostCompactMessages(rl);
    valid(ol);
    const text = JSON.stringify(ol);
    for (const needle of ['DEPLOY-ID-4242', 'call_gone', 'prod-eu-7', 'Deploy', 'a note']) {
      if (JSON.stringify(lone).includes(needle) || needle === 'a note') assert.ok(text.includes(needle), `${needle} kept`);
    }
    assert.ok(!ol.includes(lone), 'rewritten, not the caller\'s object');
  }
});

test('a tool result pushed into a Compactor while it compacts follows its call', async () => {
  const m = [];
  for (let i = 0; i < 20; i++) {
    m.push({ role: 'user', content: i === 0 ? 'Fix the bug ' + 'x'.repeat(1000) : [{ type: 'tool_result', tool_use_id: 'toolu_' + (i - 1), content: 'file ' + 'y'.repeat(1000) }] });
    m.push({ role: 'assistant', content: [{ type: 'text', text: 'Reading ' + i }, { type: 'tool_use', id: 'toolu_' + i, name: 'Read', input: { file_path: '/src/f' + i } }] });
  }
  let release;
  const gate = new Promise((r) => (release = r));
  const chat = new cc.Compactor({ model: MODEL, messages: m, summarize: async () => { await gate; return '<summary>Reading the files one by one.</summary>'; } });
  const pending = chat.compact();
  const answer = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_19', content: 'contents of /src/f19' }] };
  chat.push(answer);
  release();
  const r = await pending;
  valid(chat.messages);
  const out = chat.messages;
  assert.equal(out.at(-1), answer);
  assert.equal(out.at(-2), m.at(-1), 'the call is kept, the same object');
  assert.deepEqual(r.messagesToKeep, [m.at(-1)]);
  // compactConversation alike: the caller appends the result after the compacted messages.
  const r2 = await cc.compactConversation(m, { model: MODEL, summarize });
  valid([...cc.buildPostCompactMessages(r2), answer]);
  // Nothing pending (the call answered, or the user spoke since): nothing extra kept.
  const r3 = await cc.compactConversation([...m, answer, { role: 'assistant', content: 'Found it.' }], { model: MODEL, summarize });
  assert.deepEqual(r3.messagesToKeep, []);
});

const conversation = [
  { role: 'system', content: 'You are a support bot for ACME. SYSPROMPT' },
  { role: 'user', content: 'My order 1234 is late. '.repeat(60) },
  { role: 'assistant', content: 'Let me check order 1234. '.repeat(60) },
  { role: 'system', content: 'From now on answer only in French. MIDSYS' },
  { role: 'user', content: 'Any news?' },
  { role: 'assistant', content: 'Pas encore.' },
  { role: 'user', content: 'ok' },
];

test('a leading system message is kept first and a mid-conversation one is shown to the summarizer, in every shape', async () => {
  for (const shape of [undefined, 'anthropic', 'openai-chat', 'ai-sdk-model']) {
    const s = recorder();
    const r = await cc.compactConversation(conversation, { model: MODEL, summarize: s, ...(shape ? { shape } : {}) });
    const out = cc.buildPostCompactMessages(r);
    const foreign = shape === 'openai-chat' || shape === 'ai-sdk-model';
    // After the boundary line (none in another ecosystem's messages): the system message, the same object, then the summary.
    assert.equal(out[foreign ? 0 : 1], conversation[0], `shape ${shape}`);
    assert.equal(out.filter((m) => m === conversation[0]).length, 1);
    assert.ok(s.sent().includes('MIDSYS'), `shape ${shape}: the mid-conversation system message reaches the summarizer`);
    assert.ok(!s.sent().includes('SYSPROMPT'), 'the kept one is not summarized');
    valid(out);
  }
  const lc = conversation.map((m) => (m.role === 'system' ? new SystemMessage(m.content) : m.role === 'user' ? new HumanMessage(m.content) : new AIMessage(m.content)));
  const s = recorder();
  const out = cc.buildPostCompactMessages(await cc.compactConversation(lc, { model: MODEL, summarize: s }));
  assert.equal(out[0], lc[0]);
  assert.ok(s.sent().includes('MIDSYS'));
});

test('the leading system message survives a Compactor, a second compaction and session-memory compaction', async () => {
  const chat = new cc.Compactor({ model: MODEL, summarize: recorder(), messages: conversation });
  await chat.compact();
  assert.equal(chat.messages[1], conversation[0]);
  chat.pushMany([{ role: 'user', content: 'again '.repeat(400) }, { role: 'assistant', content: 'sure '.repeat(400) }]);
  await chat.compact();
  assert.equal(chat.messages[1], conversation[0]);
  assert.equal(chat.messages.filter((m) => m === conversation[0]).length, 1);

  const long = [conversation[0]];
  for (let i = 0; i < 60; i++) long.push({ role: i % 2 ? 'assistant' : 'user', content: ('turn ' + i + ' ').repeat(400) });
  const r = await cc.trySessionMemoryCompaction(long, { model: MODEL, sessionMemory: async () => 'The memory.' });
  const out = cc.buildPostCompactMessages(r);
  assert.equal(out[1], long[0]);
  assert.ok(out.length < long.length);
  valid(out);
});

test('a pinned message of another shape than the conversation is read in Anthropic form; a misspelt role is INVALID_MESSAGE at context.pinned[k].role', async () => {
  const m = [{ role: 'user', content: 'a '.repeat(3000) }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }];
  const pinned = [{ role: 'tool', tool_call_id: 'c1', content: 'the pinned output' }];
  const summarize = async () => '<summary>s</summary>';
  const r = await cc.compactConversation(m, { model: 'claude-sonnet-4-5', pinned, summarize });
  const out = cc.buildPostCompactMessages(r);
  assert.deepEqual(cc.validateForApi(out), { valid: true, problems: [] });
  assert.match(JSON.stringify(out.at(-1)), /the pinned output/);
  const chat = new cc.Compactor({ model: 'claude-sonnet-4-5', pinned, summarize, messages: m });
  await chat.compact();
  assert.equal(cc.validateForApi(chat.messages).valid, true);
  assert.match(JSON.stringify(chat.messages), /the pinned output/);
  const bad = [{ role: 'asistant', content: 'x' }];
  await assert.rejects(cc.compactConversation(m, { model: 'claude-sonnet-4-5', pinned: bad, summarize }), (e) => e.code === 'INVALID_MESSAGE' && /context\.pinned\[0\]\.role/.test(e.message));
  assert.throws(() => new cc.Compactor({ model: 'claude-sonnet-4-5', pinned: bad, summarize }), (e) => e.code === 'INVALID_MESSAGE' && /context\.pinned\[0\]\.role/.test(e.message));
});

test('truncateHeadForPTLRetry keeps the system messages that open the conversation, in every shape', () => {
  const big = 'some content of a file or command output here\n'.repeat(60);
  const rounds = (user, assistant) => Array.from({ length: 6 }, (_, i) => [user(`q${i} ${big}`), assistant(`a${i} ${big}`)]).flat();
  const cases = {
    'openai-chat': [{ role: 'system', content: 'You are ACME support.' }, ...rounds((t) => ({ role: 'user', content: t }), (t) => ({ role: 'assistant', content: t }))],
    'openai-responses': [
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are ACME support.' }] },
      ...rounds((t) => ({ type: 'message', role: 'user', content: [{ type: 'input_text', text: t }] }), (t) => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: t, annotations: [] }] })),
    ],
    'ai-sdk': [{ role: 'system', content: 'You are ACME support.' }, ...rounds((t) => ({ role: 'user', content: [{ type: 'text', text: t }] }), (t) => ({ role: 'assistant', content: [{ type: 'text', text: t }] }))],
    langchain: [new SystemMessage('You are ACME support.'), ...rounds((t) => new HumanMessage(t), (t) => new AIMessage(t))],
  };
  for (const [name, msgs] of Object.entries(cases)) {
    const out = cc.truncateHeadForPTLRetry(msgs, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.");
    assert.ok(out && out.length < msgs.length, `${name}: something is dropped`);
    assert.equal(out[0], msgs[0], `${name}: the system message stays first, the caller's own object`);
    assert.ok(!out.slice(1).includes(msgs[0]), name);
    // A second retry keeps it too.
    const again = cc.truncateHeadForPTLRetry(out, "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.");
    assert.equal(again[0], msgs[0], `${name}: second retry`);
    assert.equal(cc.validateForApi(again).valid, true, `${name}: ${JSON.stringify(cc.validateForApi(again))}`);
  }
});
