// Every entry point reads the caller's input the same way, and bad input is a coded error,
// never silently accepted or lost: a misspelt role, a conversation the JSON reading would see
// differently from the objects, options of the wrong type or out of range, a config that leaves
// no usable window.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';

before(() => cc.setEnvironmentDefaults({}));

const SONNET = 'claude-sonnet-4-5';
const summarize = async () => '<summary>short</summary>';

/** The coded error `f` throws or rejects with (fails when it returns). */
async function errorOf(f) {
  try {
    await f();
  } catch (e) {
    assert.equal(typeof e.code, 'string', `a coded error: ${e}`);
    return e;
  }
  assert.fail('expected an error');
}

/** A conversation of `turns` question/answer pairs, the answers carrying usage when asked. */
function talk(turns = 10, usage = true) {
  const m = [];
  for (let i = 0; i < turns; i++) {
    m.push({ role: 'user', content: `question ${i} ` + 'x'.repeat(4000) });
    m.push({ role: 'assistant', content: `answer ${i}`, ...(usage ? { usage: { input_tokens: 1000 * (i + 1), output_tokens: 10 } } : {}) });
  }
  return m;
}

// Every function that reads a conversation, each a thunk of the messages.
const READERS = {
  tokenCountWithEstimation: (m) => cc.tokenCountWithEstimation(m),
  shouldAutoCompact: (m) => cc.shouldAutoCompact(m, SONNET),
  validateForApi: (m) => cc.validateForApi(m),
  toApiMessages: (m) => cc.toApiMessages(m),
  microCompact: (m) => cc.microCompact(m),
  stripImagesFromMessages: (m) => cc.stripImagesFromMessages(m),
  Compactor: (m) => new cc.Compactor({ model: SONNET, messages: m }).tokenCount(),
  'Compactor.push': (m) => {
    const c = new cc.Compactor({ model: SONNET });
    for (const x of m) c.push(x);
    return c.tokenCount();
  },
  previewCompaction: (m) => cc.previewCompaction(m, { model: SONNET }),
  compactConversation: (m) => cc.compactConversation(m, { model: SONNET, summarize }),
};

test('a message of a misspelt role is INVALID_MESSAGE at its role, naming the role and the accepted ones, everywhere', async () => {
  const m = [
    { role: 'user', content: 'Please remember: the deploy key is in vault path secret/deploy.' },
    { role: 'asistant', content: 'Noted. ' + 'details '.repeat(500) },
    { role: 'user', content: 'Now deploy.' },
  ];
  for (const [name, read] of Object.entries(READERS)) {
    const e = await errorOf(() => read(m));
    assert.equal(e.code, 'INVALID_MESSAGE', `${name}: ${e.message}`);
    if (name !== 'Compactor.push') assert.match(e.message, /^messages\[1\]\.role: /, name);
    assert.match(e.message, /unknown role "asistant" \(did you mean "assistant"\?\)/, `${name}: ${e.message}`);
    assert.match(e.message, /user, assistant, system, developer, tool, function, human, ai/, `${name}: ${e.message}`);
  }
  // The same in an OpenAI Responses message and in any other position.
  const responses = [{ type: 'message', role: 'user', content: 'hi' }, { type: 'message', role: 'model', content: 'hello' }];
  const e = await errorOf(() => cc.tokenCountWithEstimation(responses));
  assert.match(e.message, /^messages\[1\]\.role: unknown role "model"/);
});

test('every role a supported shape uses is still read, and lines of other types are carried', async () => {
  const ok = {
    'OpenAI Chat': [
      { role: 'developer', content: 'Be terse.' },
      { role: 'system', content: 'You help.' },
      { role: 'user', content: 'read a.txt' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a.txt"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'contents' },
      { role: 'function', name: 'read', content: 'old style' },
      { role: 'assistant', content: 'done' },
    ],
    'AI SDK': [
      { role: 'user', content: 'read a.txt' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'a.txt' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'read', output: { type: 'text', value: 'contents' } }] },
    ],
    'LangChain dicts': [
      { role: 'human', content: 'hello there ' + 'x'.repeat(400) },
      { role: 'ai', content: 'hi' },
      { type: 'human', content: 'typed dict' },
    ],
    'Claude Code lines': [
      { type: 'summary', summary: 's', leafUuid: 'u0' },
      { type: 'file-history-snapshot', messageId: 'm', snapshot: {} },
      { type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: 'hi' } },
      { type: 'progress', uuid: 'p1', data: {} },
      { type: 'attachment', uuid: 'a1', attachment: { type: 'todo', content: [] } },
      { type: 'assistant', uuid: 'u2', parentUuid: 'u1', message: { role: 'assistant', id: 'r1', content: [{ type: 'text', text: 'ok' }] } },
      { type: 'system', uuid: 's1', subtype: 'informational', content: 'note' },
      { type: 'some-future-type', uuid: 'f1', anything: [1, 2] },
    ],
  };
  for (const [shape, m] of Object.entries(ok)) {
    assert.ok(cc.tokenCountWithEstimation(m) > 0, shape);
    assert.equal(typeof cc.validateForApi(m).valid, 'boolean', shape);
    cc.toApiMessages(m);
    new cc.Compactor({ model: SONNET, messages: m }).free();
  }
  // LangChain's `{role: 'human'}` dicts count like `{role: 'user'}` messages (they were left out).
  const human = cc.tokenCountWithEstimation([{ role: 'human', content: 'y'.repeat(4000) }]);
  assert.equal(human, cc.tokenCountWithEstimation([{ role: 'user', content: 'y'.repeat(4000) }]));
  assert.ok(human >= 1000, `${human}`);
});

test('the compaction reading agrees with the count: NaN or Infinity usage, a Date content, a toJSON', async () => {
  const cases = [
    ['NaN usage', (m) => { m[m.length - 1].usage = { input_tokens: NaN, output_tokens: 10 }; }, 'INVALID_TOKEN_COUNT'],
    ['Infinity usage', (m) => { m[m.length - 1].usage = { input_tokens: Infinity, output_tokens: 10 }; }, 'INVALID_TOKEN_COUNT'],
    ['a Date content', (m) => { m.forEach((x) => delete x.usage); m[0] = { role: 'user', content: new Date(0) }; }, 'INVALID_MESSAGE'],
    ['a Date block', (m) => { m.forEach((x) => delete x.usage); m[2] = { role: 'user', content: [new Date(0)] }; }, 'INVALID_MESSAGE'],
    // Structure the JSON reading keeps as it is: the compaction names it as the count does.
    ['a text block without its text', (m) => { m.forEach((x) => delete x.usage); m[4] = { role: 'user', content: [{ type: 'text', text: 'ok' }, { type: 'text' }] }; }, 'INVALID_MESSAGE'],
    ['a nested block without a type', (m) => {
      m.forEach((x) => delete x.usage);
      m[5] = { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] };
      m[6] = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a' }, { text: 'b' }] }] };
    }, 'INVALID_MESSAGE'],
    ['a number content late in the conversation', (m) => { m.forEach((x) => delete x.usage); m[18] = { role: 'user', content: 42 }; }, 'INVALID_MESSAGE'],
  ];
  for (const [label, spoil, code] of cases) {
    const m = talk();
    spoil(m);
    const counted = await errorOf(() => cc.tokenCountWithEstimation(m));
    assert.equal(counted.code, code, `${label}: ${counted.message}`);
    for (const [name, read] of Object.entries({
      previewCompaction: () => cc.previewCompaction(m, { model: SONNET }),
      compactConversation: () => cc.compactConversation(m, { model: SONNET, summarize }),
      validateForApi: () => cc.validateForApi(m),
      toApiMessages: () => cc.toApiMessages(m),
      'Compactor.compact': () => new cc.Compactor({ model: SONNET, summarize, messages: m }).compact(),
    })) {
      const e = await errorOf(read);
      assert.deepEqual([e.code, e.message], [counted.code, counted.message], `${label}: ${name}`);
    }
  }
  // A toJSON is not what the count reads: the compaction reads the same message the count does.
  const m = talk(20, false);
  const plain = talk(20, false);
  m[0] = { role: 'user', content: 'hi', toJSON() { return { role: 'user', content: 'y'.repeat(400_000) }; } };
  plain[0] = { role: 'user', content: 'hi' };
  const count = cc.tokenCountWithEstimation(m);
  assert.equal(count, cc.tokenCountWithEstimation(plain));
  assert.equal((await cc.previewCompaction(m, { model: SONNET })).tokensBefore, count);
  const r = await cc.compactConversation(m, { model: SONNET, summarize });
  assert.equal(r.preCompactTokenCount, count);
  assert.deepEqual(cc.toApiMessages(m), cc.toApiMessages(plain));
  // Also on a block, a transcript line's message and a usage object.
  const block = { type: 'text', text: 'short', toJSON() { return { type: 'text', text: 'z'.repeat(100_000) }; } };
  const lines = [
    { type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: [block] } },
    { type: 'assistant', uuid: 'u2', parentUuid: 'u1', message: { role: 'assistant', id: 'r1', content: [{ type: 'text', text: 'ok' }], toJSON() { return { role: 'assistant', content: [] }; } } },
  ];
  const api = cc.toApiMessages(lines);
  assert.deepEqual(api.map((x) => x.content.map((b) => b.text)), [['short'], ['ok']]);
});

test('options of the wrong type or out of range are INVALID_ARGUMENT naming the option and the value', async () => {
  const m = talk(3, false);
  const cases = [
    ['offlineSummarizer({maxTokens: -5})', () => cc.offlineSummarizer({ maxTokens: -5 }), /options\.maxTokens must be a whole number of at least 1, got -5/],
    ['offlineSummarizer({maxTokens: 0.5})', () => cc.offlineSummarizer({ maxTokens: 0.5 }), /options\.maxTokens .* got 0\.5/],
    ['offlineSummarizer({maxTokens: NaN})', () => cc.offlineSummarizer({ maxTokens: NaN }), /options\.maxTokens must be a finite number, got NaN/],
    ['retryBaseMs: -1000', () => cc.compactConversation(m, { model: SONNET, summarize }, { retryBaseMs: -1000 }), /options\.retryBaseMs must not be negative, got -1000/],
    ['context.retryBaseMs: -1', () => cc.autoCompactIfNeeded(m, { model: SONNET, summarize, retryBaseMs: -1 }), /context\.retryBaseMs must not be negative/],
    ['onText: "not a function"', () => cc.compactConversation(m, { model: SONNET, summarize, onText: 'not a function' }), /context\.onText must be a function, got "not a function"/],
    ['sessionMemory: 5', () => cc.trySessionMemoryCompaction(m, { model: SONNET, sessionMemory: 5 }), /context\.sessionMemory must be a string or a function/],
    ['tokenCountWithEstimation system: 12345', () => cc.tokenCountWithEstimation(m, { system: 12345 }), /options\.system must be .*got 12345/],
    ['tokenCountWithEstimation tools: "Read"', () => cc.tokenCountWithEstimation(m, { tools: 'Read' }), /options\.tools must be .*got "Read"/],
    ['shouldAutoCompact system: true', () => cc.shouldAutoCompact(m, SONNET, { system: true }), /options\.system must be .*got true/],
    ['microCompact keepRecent: 0.5', () => cc.microCompact(m, { keepRecent: 0.5 }), /options\.keepRecent must be a whole number of at least 0, got 0\.5/],
    ['microCompact keepRecent: Infinity', () => cc.microCompact(m, { keepRecent: Infinity }), /options\.keepRecent must be a finite number, got Infinity/],
    ['microCompact lastAssistantTimestamp: NaN', () => cc.microCompact(m, { lastAssistantTimestamp: NaN }), /options\.lastAssistantTimestamp must be a finite number/],
    ['template: "str"', () => cc.createCompactBoundaryMessage('auto', 5, { template: 'str' }), /options\.template must be a message object.*got "str"/],
    ['template: 7', () => cc.createCompactBoundaryMessage('auto', 5, { template: 7 }), /options\.template must be a message object.*got 7/],
    ['tracking consecutiveFailures: 1.5', () => cc.autoCompactIfNeeded(m, { model: SONNET, summarize }, { consecutiveFailures: 1.5 }), /tracking\.consecutiveFailures .* got 1\.5/],
  ];
  for (const [label, f, words] of cases) {
    const e = await errorOf(f);
    assert.equal(e.code, 'INVALID_ARGUMENT', `${label}: ${e.message}`);
    assert.match(e.message, words, label);
  }
  // The values in range still work.
  assert.equal(typeof cc.offlineSummarizer({ maxTokens: 2000 }), 'function');
  assert.equal(cc.microCompact(m, { keepRecent: 0 }).messages.length, m.length);
  assert.ok(cc.tokenCountWithEstimation(m, { system: 'You are terse.', tools: [{ name: 'Read' }] }) > cc.tokenCountWithEstimation(m));
  const texts = [];
  await cc.compactConversation(m, { model: SONNET, onText: (t) => texts.push(t), summarize: async (req, o) => { o.onText?.('partial'); return '<summary>s</summary>'; } });
  assert.deepEqual(texts, ['partial']);
});

test('a config that leaves no usable window is INVALID_CONFIG; a fraction below 1 is rejected like 0', async () => {
  for (const config of [{ contextWindow: 0.5 }, { autoCompactWindow: 0.5 }, { blockingLimitOverride: 0.5 }, { maxOutputTokens: 0.25 }]) {
    const [key] = Object.keys(config);
    for (const f of [() => cc.getContextWindowForModel(SONNET, config), () => cc.calculateTokenWarningState(0, SONNET, config)]) {
      const e = await errorOf(f);
      assert.equal(e.code, 'INVALID_CONFIG', JSON.stringify(config));
      assert.match(e.message, new RegExp(`config\\.${key} must be a positive number of tokens \\(at least 1\\), got ${config[key]}`));
    }
  }
  const tooSmall = [
    [{ contextWindow: 20_000 }, /the window of 20000 tokens \(config\.contextWindow\) must be larger than the output reserve of 20000/],
    [{ autoCompactWindow: 15_000 }, /the window of 15000 tokens \(config\.autoCompactWindow\)/],
    [{ contextWindow: 30_000 }, /the effective window of 10000 tokens .* auto-compact buffer of 13000 tokens/],
  ];
  for (const [config, words] of tooSmall) {
    for (const [name, f] of Object.entries({
      getEffectiveContextWindowSize: () => cc.getEffectiveContextWindowSize(SONNET, config),
      getAutoCompactThreshold: () => cc.getAutoCompactThreshold(SONNET, config),
      calculateTokenWarningState: () => cc.calculateTokenWarningState(0, SONNET, config),
      shouldAutoCompact: () => cc.shouldAutoCompact([{ role: 'user', content: 'hi' }], SONNET, { config }),
      tokenCountWithEstimation: () => cc.tokenCountWithEstimation([{ role: 'user', content: 'hi' }], { model: SONNET, config }),
      Compactor: () => new cc.Compactor({ model: SONNET, config, summarize }),
      autoCompactIfNeeded: () => cc.autoCompactIfNeeded([{ role: 'user', content: 'hi' }], { model: SONNET, config, summarize }),
    })) {
      const e = await errorOf(f);
      assert.equal(e.code, 'INVALID_CONFIG', `${name} ${JSON.stringify(config)}: ${e.message}`);
      assert.match(e.message, words, name);
    }
  }
  // A small window works with a smaller reserve, or with automatic compaction off; the windows of
  // the SPEC's example keep their numbers.
  assert.equal(cc.getAutoCompactThreshold(SONNET, { contextWindow: 20_000, maxOutputTokens: 1_000 }), 6_000);
  assert.equal(cc.getEffectiveContextWindowSize(SONNET, { contextWindow: 30_000, autoCompactEnabled: false }), 10_000);
  assert.equal(cc.getAutoCompactThreshold(SONNET, { contextWindow: 40_000 }), 7_000);
  assert.equal(cc.getAutoCompactThreshold(SONNET), 167_000);
  // The Compactor of the reproduction no longer calls the summarizer on every turn of a short chat.
  let calls = 0;
  const chat = new cc.Compactor({ model: SONNET, config: { contextWindow: 20_000, maxOutputTokens: 2_000 }, summarize: async () => { calls++; return '<summary>s</summary>'; } });
  for (let i = 0; i < 5; i++) {
    chat.push({ role: 'user', content: 'hi ' + i });
    const o = await chat.maybeAutoCompact();
    assert.equal(o.wasCompacted, false);
    chat.push({ role: 'assistant', content: 'hello ' + i });
  }
  assert.equal(calls, 0);
});
