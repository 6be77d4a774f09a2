// Nineteenth round of hostile inputs (hostile19): each test fails on the package before the
// fix (pkg-snap21, bcbb317) and passes after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Compactor, compactConversation, parseTranscript, serializeTranscript, tokenCountWithEstimation, toApiMessages, validateForApi } from '../../pkg/node.js';

const MODEL = 'claude-sonnet-4-5';
const summarize = async () => '<summary>what happened so far</summary>';

// A message class whose fields are read through getters on its prototype (private state).
class Msg {
  #role;
  #content;
  constructor(role, content) {
    this.#role = role;
    this.#content = content;
  }
  get role() { return this.#role; }
  get content() { return this.#content; }
}

// A Mongoose-like document: the data in `_doc`, enumerable getters on the prototype, a toJSON.
class Doc {
  constructor(d) {
    this.$__ = {};
    this.$isNew = false;
    this._doc = d;
  }
  toJSON() { return { ...this._doc }; }
}
for (const k of ['role', 'content', '_id']) {
  Object.defineProperty(Doc.prototype, k, { get() { return this._doc[k]; }, enumerable: true, configurable: true });
}

// A transcript line whose `message` is such an object.
class Inner {
  #m;
  constructor(m) { this.#m = m; }
  get role() { return this.#m.role; }
  get content() { return this.#m.content; }
}

const plain = (n = 6) => {
  const m = [];
  for (let i = 0; i < n; i++) {
    m.push({ role: 'user', content: `question ${i} ${'x'.repeat(2000)}` });
    m.push({ role: 'assistant', content: `answer ${i} ${'y'.repeat(2000)}` });
  }
  m.push({ role: 'user', content: 'last' });
  return m;
};
const kinds = {
  'prototype getters': () => plain().map((m) => new Msg(m.role, m.content)),
  'a Mongoose-like document': () => plain().map((m, i) => new Doc({ _id: `m${i}`, ...m })),
  'a transcript line whose message has prototype getters': () => plain().map((m, i) => ({
    type: m.role, uuid: `u${i}`, parentUuid: i === 0 ? null : `u${i - 1}`, message: new Inner(m),
  })),
};

test('messages read through getters on their prototype are compacted as they are counted (were refused after the count and a Compactor took them)', async () => {
  const expected = tokenCountWithEstimation(plain(), { model: MODEL });
  for (const [kind, make] of Object.entries(kinds)) {
    const counted = tokenCountWithEstimation(make(), { model: MODEL });
    assert.ok(Math.abs(counted - expected) < 50, `${kind}: counted ${counted}`);
    assert.deepEqual(
      toApiMessages(make()).map((m) => [m.role, JSON.stringify(m.content).length]),
      toApiMessages(plain()).map((m) => [m.role, JSON.stringify(m.content).length]),
      kind,
    );
    assert.equal(validateForApi(make()).valid, true, kind);
    const r = await compactConversation(make(), { model: MODEL, summarize });
    assert.equal(r.preCompactTokenCount, counted, kind);
    // A Compactor that took them (its push reads them as the count does) can compact them.
    const chat = new Compactor({ model: MODEL, summarize });
    for (const m of make()) chat.push(m);
    assert.equal(chat.tokenCount(), counted, kind);
    await chat.compact();
    assert.equal(chat.length, 2, kind);
    chat.free();
  }
});

// Content blocks of classes whose getters read their data.
class TextBlock {
  #text;
  constructor(text) { this.#text = text; }
  get type() { return 'text'; }
  get text() { return this.#text; }
}
class ToolUse {
  #id;
  constructor(id) { this.#id = id; }
  get type() { return 'tool_use'; }
  get id() { return this.#id; }
  get name() { return 'Read'; }
  get input() { return { file_path: '/a.txt' }; }
}
class ToolResult {
  #id;
  #content;
  constructor(id, content) { this.#id = id; this.#content = content; }
  get type() { return 'tool_result'; }
  get tool_use_id() { return this.#id; }
  get content() { return this.#content; }
}

test('content blocks read through getters on their prototype are sent and compacted as counted (were "data did not match any variant of untagged enum Content")', async () => {
  const make = () => {
    const m = [];
    for (let i = 0; i < 4; i++) {
      m.push({ role: 'user', content: [new TextBlock(`question ${i} ${'x'.repeat(2000)}`)] });
      m.push({ role: 'assistant', content: [new TextBlock(`reading ${i}`), new ToolUse(`t${i}`)] });
      m.push({ role: 'user', content: [new ToolResult(`t${i}`, `result ${'r'.repeat(3000)}`)] });
      m.push({ role: 'assistant', content: 'ok' });
    }
    m.push({ role: 'user', content: 'last' });
    return m;
  };
  assert.deepEqual(validateForApi(make()), { valid: true, problems: [] });
  const api = toApiMessages(make());
  assert.deepEqual(api[1].content[1], { type: 'tool_use', id: 't0', name: 'Read', input: { file_path: '/a.txt' } });
  assert.equal(api[2].content[0].tool_use_id, 't0');
  let request;
  const r = await compactConversation(make(), { model: MODEL, summarize: async (req) => { request = req; return summarize(); } });
  assert.equal(r.preCompactTokenCount, tokenCountWithEstimation(make(), { model: MODEL }));
  assert.match(JSON.stringify(request.messages), /question 3 x/);
});

test('a usage read through getters on its prototype anchors the compaction\'s count as it does the count (was estimated: 10,031 counted, 5,529 compacted)', async () => {
  class Usage {
    get input_tokens() { return 5000; }
    get output_tokens() { return 5; }
  }
  const make = () => {
    const m = plain();
    m[1] = { role: 'assistant', content: 'x', usage: new Usage() };
    return m;
  };
  const counted = tokenCountWithEstimation(make(), { model: MODEL });
  assert.equal(counted, 10031);
  const r = await compactConversation(make(), { model: MODEL, summarize });
  assert.equal(r.preCompactTokenCount, counted);
});

test('runToolLoop / runChatToolLoop: a tool that returns an Error (of any realm) is answered as its error, not as `{}`', async () => {
  const { runToolLoop } = await import('../../pkg/agents/anthropic.js');
  const { runChatToolLoop } = await import('../../pkg/agents/openai.js');
  const { runInNewContext } = await import('node:vm');
  for (const returned of [new Error('disk full'), new TypeError('disk full'), runInNewContext('new Error("disk full")')]) {
    const compactor = new Compactor({ model: MODEL, summarize });
    compactor.push({ role: 'user', content: 'go' });
    let sent;
    const client = { messages: { create: async (req) => {
      if (req.messages.length === 1) {
        return { id: 'm1', type: 'message', role: 'assistant', model: MODEL, content: [{ type: 'tool_use', id: 'tu1', name: 'save', input: {} }], stop_reason: 'tool_use', usage: { input_tokens: 10, output_tokens: 5 } };
      }
      sent = req.messages.at(-1).content[0];
      return { id: 'm2', type: 'message', role: 'assistant', model: MODEL, content: [{ type: 'text', text: 'sorry' }], stop_reason: 'end_turn', usage: { input_tokens: 20, output_tokens: 5 } };
    } } };
    await runToolLoop({ client, compactor, request: { model: MODEL, max_tokens: 100 }, tools: { save: async () => returned } });
    assert.deepEqual(sent, { type: 'tool_result', tool_use_id: 'tu1', is_error: true, content: 'disk full' });
    compactor.free();

    let toolMessage;
    const chatClient = { chat: { completions: { create: async (req) => {
      if (req.messages.length === 1) {
        return { id: 'c1', object: 'chat.completion', model: 'gpt-4o', choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call1', type: 'function', function: { name: 'save', arguments: '{}' } }] } }], usage: { prompt_tokens: 10, completion_tokens: 5 } };
      }
      toolMessage = req.messages.at(-1);
      return { id: 'c2', object: 'chat.completion', model: 'gpt-4o', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'sorry' } }], usage: { prompt_tokens: 20, completion_tokens: 5 } };
    } } } };
    await runChatToolLoop({ client: chatClient, request: { model: 'gpt-4o' }, summarize, messages: [{ role: 'user', content: 'go' }], tools: { save: () => returned } });
    assert.deepEqual(toolMessage, { role: 'tool', tool_call_id: 'call1', content: 'Error: disk full' });
  }
});

test('serializeTranscript and Compactor.toTranscript write the fields such messages are read by (were written `{}`)', () => {
  const lines = kinds['a transcript line whose message has prototype getters']().slice(0, 3);
  const apiMessages = kinds['prototype getters']().slice(0, 2);
  const blocks = [{ role: 'user', content: [new TextBlock('hello')] }];
  assert.deepEqual(
    parseTranscript(serializeTranscript(lines)).map((l) => [l.type, l.message.role, l.message.content.slice(0, 10)]),
    [['user', 'user', 'question 0'], ['assistant', 'assistant', 'answer 0 y'], ['user', 'user', 'question 1']],
  );
  assert.equal(serializeTranscript(apiMessages), `${JSON.stringify({ role: 'user', content: apiMessages[0].content })}\n${JSON.stringify({ role: 'assistant', content: apiMessages[1].content })}\n`);
  assert.equal(serializeTranscript(blocks), '{"role":"user","content":[{"type":"text","text":"hello"}]}\n');
  const chat = new Compactor({ model: MODEL, messages: apiMessages });
  assert.equal(chat.toTranscript(), serializeTranscript(apiMessages));
  chat.free();
  // A toJSON is still what is written (a Mongoose document writes its data).
  const doc = kinds['a Mongoose-like document']()[0];
  assert.equal(serializeTranscript([doc]), `${JSON.stringify(doc.toJSON())}\n`);
});

test('messages, blocks and usages behind a Proxy whose getPrototypeOf trap throws are read as before (their own fields)', async () => {
  const trap = (o) => new Proxy(o, { getPrototypeOf() { throw new Error('trap'); } });
  const make = () => [
    trap({ role: 'user', content: [trap({ type: 'text', text: 'hello '.repeat(500) })] }),
    { role: 'assistant', content: 'ok', usage: trap({ input_tokens: 3000, output_tokens: 5 }) },
    { role: 'user', content: 'x'.repeat(4000) },
  ];
  assert.equal(toApiMessages(make()).length, 3);
  const r = await compactConversation(make(), { model: MODEL, summarize });
  assert.equal(r.preCompactTokenCount, tokenCountWithEstimation(make(), { model: MODEL }));
  assert.equal(serializeTranscript(make()), make().map((m) => JSON.stringify(m)).join('\n') + '\n');
});
