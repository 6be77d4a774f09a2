// The per-turn count's record (`countTail` in src/bindings/js_view.js, read by
// JsTailRecord in js_view.rs and decided by measure::tokens::count_tail): a
// tokenCountWithEstimation or shouldAutoCompact call without options on transcript lines is
// settled from one pass over the end of the array, written into WebAssembly memory. Each case
// runs twice: with the record, and with it switched off (`setCountFast(false)`: the general
// path, with its own one-crossing tail read); the totals, the decisions and any error must be
// the same. Cases the record does not settle must fall back, never answer differently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as cc from '../../pkg/node.js';
import { buildApiView, activeStart, toAiSdk, toLangChain } from '../../bench/formats.mjs';
import { OPUS, TRANSCRIPTS, readJsonl, randomHistory, prng, packageJsView, callOutcome } from './helpers/support.mjs';
import { toAiSdkUi, toOpenAiChat, toOpenAiResponses } from './helpers/shapes.mjs';

cc.setEnvironmentDefaults({});

// The package's own js_view.js (the module instance its glue imported).
const view = await packageJsView();
const stats = view.setCountFast(true);

// tokenCountWithEstimation and shouldAutoCompact of `messages`, with the record and without.
function bothWays(messages, options, model = OPUS) {
  const run = () => ({
    count: callOutcome(() => cc.tokenCountWithEstimation(messages, options)),
    should: callOutcome(() => cc.shouldAutoCompact(messages, model, options)),
    // A model whose threshold the count may pass (the decision's other branch).
    small: callOutcome(() => cc.shouldAutoCompact(messages, 'claude-3-5-haiku', options)),
  });
  const before = stats.records;
  const fast = run();
  const settled = stats.records - before;
  view.setCountFast(false);
  try {
    const after = stats.records;
    const full = run();
    assert.equal(stats.records, after, 'switched off: no record made');
    return { fast, full, settled };
  } finally {
    view.setCountFast(true);
  }
}

function assertSame(messages, label, options) {
  const r = bothWays(messages, options);
  assert.deepEqual(r.fast, r.full, label);
  return r;
}

// Every prefix of `messages`; returns how many prefixes the record settled.
function everyPrefix(messages, label, options) {
  let settled = 0;
  for (let k = 0; k <= messages.length; k++) {
    if (assertSame(messages.slice(0, k), `${label}: first ${k} messages`, options).settled > 0) settled++;
  }
  return settled;
}

for (const file of readdirSync(TRANSCRIPTS).filter((f) => f.endsWith('.jsonl'))) {
  test(`every prefix of the real transcript ${file}: the same count and decisions with and without the record`, () => {
    const lines = readJsonl(TRANSCRIPTS + file);
    const settled = everyPrefix(lines, file);
    // Prefixes whose latest main-chain response carries usage are settled by the record (a
    // sub-agent's transcript has none: all its lines are sidechain lines).
    const main = lines.filter((l) => l.isSidechain !== true).length;
    assert.ok(settled >= main / 3, `${file}: ${settled} of ${lines.length + 1} prefixes settled`);
  });
}

test('the long session as parsed by parseTranscript: settled, the same count as a Compactor', () => {
  const lines = cc.parseTranscript(readJsonl(`${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`).map((l) => JSON.stringify(l)).join('\n'));
  const r = assertSame(lines, 'whole');
  assert.equal(r.settled, 3, 'one record per call');
  const c = new cc.Compactor({ model: OPUS, messages: lines });
  assert.equal(r.fast.count.value, c.tokenCount());
});

test('other shapes: settled while no usage anchors the count (every message estimated), the same answers', () => {
  const lines = readJsonl(`${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`);
  const api = buildApiView(lines, activeStart(lines));
  let n = 0;
  const withUsage = api.map((m) => (m.role === 'assistant' && ++n % 3 === 0
    ? { ...m, usage: { input_tokens: 10 * n, cache_read_input_tokens: 1000 * n, output_tokens: 7 } } : m));
  const firstUsage = withUsage.findIndex((m) => m.usage !== undefined);
  for (const [label, msgs] of [['API view', api], ['API view with usage', withUsage], ['AI SDK', toAiSdk(api)],
    ['AI SDK UI', toAiSdkUi(api)], ['OpenAI Chat', toOpenAiChat(api)], ['OpenAI Responses', toOpenAiResponses(api)],
    ['LangChain', toLangChain(api)]]) {
    let settled = 0, asked = 0;
    for (let k = 0; k <= msgs.length; k++) {
      if (k % 9 !== 0 && k < msgs.length - 12) continue;
      const r = assertSame(msgs.slice(0, k), `${label}: first ${k}`);
      if (k === 0 || (label === 'API view with usage' && k > firstUsage)) {
        assert.equal(r.settled, 0, `${label}: first ${k}: empty, or anchored by usage: no record`);
      } else {
        asked++;
        if (r.settled > 0) settled++;
      }
    }
    assert.equal(settled, asked, `${label}: every prefix without usage settled by the record`);
  }
});

test('options (a tokenizer, given usage, a shape) take the general path: the same answers', () => {
  const lines = readJsonl(`${TRANSCRIPTS}cc_small_short.jsonl`);
  for (const options of [
    { tokenCounter: (s) => Math.ceil(s.length / 3) },
    { tokenCounter: () => { throw new Error('no counting'); } },
    { usage: { input_tokens: 5000, output_tokens: 20 } },
    { shape: 'anthropic' },
  ]) {
    for (let k = 0; k <= lines.length; k++) {
      const r = assertSame(lines.slice(0, k), `${Object.keys(options)}: first ${k}`, options);
      assert.equal(r.settled, 0);
    }
  }
  // A tokenizer of an earlier call is not in effect for a later call without options.
  const r = assertSame(lines, 'after a tokenizer call');
  assert.ok(r.settled > 0);
});

// Transcript lines built one by one for the edge cases.
function line(type, fields = {}) {
  return { type, uuid: `u${Math.random()}`, isSidechain: false, ...fields };
}
const usage = (input, output) => ({ input_tokens: input, cache_read_input_tokens: 1000, output_tokens: output });
const asst = (id, content, o = {}) =>
  line('assistant', { ...o.line, message: { id, role: 'assistant', content, stop_reason: o.stop ?? null, ...(o.usage ? { usage: o.usage } : {}) } });
const user = (content, o = {}) => line('user', { ...o, message: { role: 'user', content } });
const text = (t) => [{ type: 'text', text: t }];
const call = (id, name = 'Read') => ({ type: 'tool_use', id, name, input: { file_path: `/src/${id}.rs` } });
const result = (id, chars = 400) => ({ type: 'tool_result', tool_use_id: id, content: 'x'.repeat(chars) });
const progress = () => line('progress', { data: { type: 'hook_progress' } });

const CASES = {
  'a finished response, results and progress after it': [
    user('q'), asst('m1', [call('t1')], { usage: usage(900, 30), stop: 'tool_use' }), progress(),
    user([result('t1', 1200)]), progress(), line('system', { subtype: 'stop_hook_summary' }),
  ],
  'a streamed response split over several lines, results in between': [
    user('read two files'),
    asst('m1', [{ type: 'thinking', thinking: 'let me think '.repeat(30), signature: 's' }], { usage: usage(100, 1) }),
    asst('m1', [call('t1')], { usage: usage(100, 1) }), progress(),
    user([result('t1', 900)]),
    asst('m1', [call('t2', 'Grep')], { usage: usage(100, 2) }),
    user([result('t2', 300)]), progress(),
  ],
  'a finished split response with a result between its lines': [
    user('q'), asst('m1', text('part one '.repeat(40)), { usage: usage(500, 80) }), user([result('t0', 50)]),
    asst('m1', [call('t9')], { usage: usage(500, 80), stop: 'tool_use' }),
    user([result('t9', 2000)]), user('thanks, next'),
  ],
  'a later line of the anchor response without usage, then another response': [
    user('q'), asst('m1', text('a '.repeat(100)), { usage: usage(500, 1) }), asst('m1', [call('t1')]),
    user([result('t1')]), asst('m2', text('b')), asst('m1', text('late line of m1')),
  ],
  'sidechain lines everywhere': [
    user('q'), asst('m1', text('main'), { usage: usage(700, 1) }),
    asst('s1', text('side answer '.repeat(50)), { usage: usage(99999, 5), line: { isSidechain: true } }),
    user('side question', { isSidechain: true }), asst('m1', [call('t1')], { usage: usage(700, 3) }),
    user([result('t1')]), asst('s2', text('more side'), { line: { isSidechain: true } }),
  ],
  'a boundary after the usage': [
    user('q'), asst('m1', text('a'), { usage: usage(10, 1) }), line('system', { subtype: 'compact_boundary' }),
    user('summary', { isCompactSummary: true }),
  ],
  'a session-memory boundary keeping messages, the count above a small model\'s threshold': [
    user('q'), asst('m1', text('a'), { usage: usage(150000, 9000), stop: 'end_turn' }),
    line('system', { subtype: 'compact_boundary', compactMetadata: { keptMessages: 2 } }),
    user('summary', { isCompactSummary: true }), user('kept q'), asst('m1', text('a'), { usage: usage(150000, 9000), stop: 'end_turn' }),
  ],
  'a compaction block with usage, and one without': [
    user('q'), asst('m2', [{ type: 'compaction', content: 'summary' }], { usage: usage(300, 10), stop: 'end_turn' }), user('next'),
    asst('m3', [{ type: 'compaction', content: 'summary two' }]), user('again'),
  ],
  'attachments, images, documents, nested results, server tools and other blocks after the anchor': [
    user('q'), asst('m1', text('a'), { usage: usage(2000, 20), stop: 'end_turn' }),
    line('attachment', { attachment: { type: 'todo', content: [{ content: 'x'.repeat(300) }] } }),
    line('system', { subtype: 'local_command', content: 'ran /help' }),
    user([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
      { type: 'document', source: { type: 'text', data: 'doc' } },
      { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'n'.repeat(77) },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'B' } }] },
      { type: 'web_search_tool_result', tool_use_id: 'w', content: [{ title: 'x' }] },
      { type: 'server_tool_use', id: 's', name: 'web_search', input: { q: 'x' } },
      { type: 'custom_block', data: 'x'.repeat(55) }, { type: 'redacted_thinking', data: 'r'.repeat(33) }]),
    user('go on'),
  ],
  'usage with nulls, strings and missing counts': [
    user('q'), asst('m1', text('a'), { usage: { input_tokens: 4000, cache_read_input_tokens: null, output_tokens: 3 }, stop: 'end_turn' }),
    user('r'),
  ],
  'malformed usage': [user('q'), asst('m1', text('a'), { usage: { input_tokens: -5, output_tokens: 1 } }), user('r')],
  'fractional usage': [user('q'), asst('m1', text('a'), { usage: { input_tokens: 5.5, output_tokens: 1 } })],
  'usage as a string': [user('q'), asst('m1', text('a'), { usage: { input_tokens: '5', output_tokens: 1 } })],
  'usage not an object': [user('q'), asst('m1', text('a'), { usage: 'lots' }), user('r')],
  'usage an array': [user('q'), asst('m1', text('a'), { usage: [1, 2] }), user('r')],
  'a malformed block after the anchor': [user('q'), asst('m1', text('a'), { usage: usage(10, 1), stop: 'end_turn' }), user([{ type: 'text' }])],
  'a malformed own line of a streamed anchor': [user('q'), asst('m1', [{ type: 'text' }], { usage: usage(10, 1) }), user('r')],
  'a malformed own line of a finished anchor': [user('q'), asst('m1', [{ type: 'tool_use' }], { usage: usage(10, 1), stop: 'tool_use' }), user('r')],
  'a block that is no object, a block without type, content of a wrong type': [
    user('q'), asst('m1', text('a'), { usage: usage(10, 1), stop: 'end_turn' }), user(['just a string']), user([{ text: 'x' }]), user(42),
  ],
  'a malformed block in an unsent line between sent ones': [
    user('q'), asst('m1', text('a'), { usage: usage(10, 1), stop: 'end_turn' }), user('r1'),
    user([{ type: 'text' }], { isSidechain: true }), user('r2'),
  ],
  'a malformed block in an unsent line at the end': [
    user('q'), asst('m1', text('a'), { usage: usage(10, 1), stop: 'end_turn' }), user('r1'), user([{ type: 'text' }], { isSidechain: true }),
  ],
  'a malformed own line between results': [
    user('q'), asst('m1', [call('t1')], { usage: usage(10, 1), stop: 'tool_use' }), user([result('t1')]),
    asst('m1', [{ type: 'tool_use', id: 'x' }], { usage: usage(10, 2), stop: 'tool_use' }), user([result('t2')]),
  ],
  'values that are no message': [user('q'), asst('m1', text('a'), { usage: usage(10, 1) }), 42, null, 'x', [1], undefined],
  'a value that is no message before the anchor': [user('q'), null, asst('m1', text('a'), { usage: usage(10, 1) }), user('r')],
  'a line without message, and a line of an unknown type': [
    user('q'), asst('m1', text('a'), { usage: usage(10, 1), stop: 'end_turn' }), line('user'), line('assistant'),
    line('queue-operation', { operation: 'enqueue' }), line('brand-new-type', { message: { content: 'x'.repeat(90) } }), user('r'),
  ],
  'an anchor without message.id, split lines with other ids': [
    user('q'), line('assistant', { message: { role: 'assistant', content: text('x'.repeat(80)), stop_reason: null, usage: usage(50, 1) } }),
    asst(undefined, text('y'), { usage: usage(60, 1) }), user('r'),
  ],
  'a LangChain stored system message among lines': [
    user('q'), asst('m1', text('a'), { usage: usage(10, 1), stop: 'end_turn' }), { type: 'system', data: { content: 'be brief' } }, user('r'),
  ],
  'API messages with usage after transcript lines': [
    user('q'), asst('m1', text('a'), { usage: usage(10, 1), stop: 'end_turn' }),
    { role: 'assistant', content: text('b'), usage: usage(800, 9) }, { role: 'user', content: 'q' },
  ],
};

test('edge cases: shapes of responses, boundaries, malformed lines and usage, values that are no message', () => {
  let settled = 0;
  for (const [label, msgs] of Object.entries(CASES)) settled += everyPrefix(msgs, label);
  assert.ok(settled > 50, `${settled} prefixes settled by the record`);
});

test('throwing getters at every position of the tail: the same errors either way', () => {
  const base = CASES['a streamed response split over several lines, results in between'];
  for (let at = 0; at < base.length; at++) {
    for (const key of ['type', 'message', 'isSidechain']) {
      const msgs = base.map((m) => structuredClone(m));
      Object.defineProperty(msgs[at], key, { get() { throw new Error(`no reading ${key}`); } });
      for (let k = at + 1; k <= msgs.length; k++) assertSame(msgs.slice(0, k), `${key} throws at ${at}: first ${k}`);
    }
    // Inside the message: the usage, the content, a block.
    for (const [where, target] of [['usage', (m) => m.message], ['content', (m) => m.message],
      ['text', (m) => Array.isArray(m.message.content) ? m.message.content[0] : m.message]]) {
      const msgs = base.map((m) => structuredClone(m));
      if (msgs[at].message === undefined) continue;
      Object.defineProperty(target(msgs[at]), where, { get() { throw new Error(`no reading ${where}`); } });
      for (let k = at + 1; k <= msgs.length; k++) assertSame(msgs.slice(0, k), `${where} throws at ${at}: first ${k}`);
    }
  }
  // A Proxy array whose element reads throw.
  const lines = CASES['a finished response, results and progress after it'];
  const proxy = new Proxy(lines, { get(t, k) { if (k === '3') throw new Error('no element 3'); return t[k]; } });
  const { fast, full } = bothWays(proxy);
  assert.deepEqual(fast, full);
  assert.equal(fast.count.code, 'INVALID_MESSAGE');
});

test('sparse arrays and holes', () => {
  const lines = CASES['a finished response, results and progress after it'];
  for (let hole = 0; hole < lines.length; hole++) {
    const sparse = [...lines];
    delete sparse[hole];
    assertSame(sparse, `hole at ${hole}`);
  }
  const grown = [...lines];
  grown.length = lines.length + 3; // holes at the end
  assertSame(grown, 'three holes at the end');
  const sparseStart = [];
  sparseStart[5] = lines[0];
  sparseStart[6] = lines[1];
  sparseStart[7] = lines[3];
  assertSame(sparseStart, 'holes before the conversation');
});

test('random histories (both shapes, split responses, sidechains, boundaries): every prefix', () => {
  let settled = 0;
  for (let seed = 1; seed <= 30; seed++) settled += everyPrefix(randomHistory(prng(seed)), `seed ${seed}`);
  assert.ok(settled > 0);
});

test('a long tail after the anchor, then a short one: the record\'s buffer grows and is reused', () => {
  const head = [user('q'), asst('m1', [call('t1')], { usage: usage(100000, 40), stop: 'tool_use' })];
  const long = [...head];
  for (let k = 0; k < 3000; k++) long.push(k % 2 ? user([result(`t${k}`, 50 + k)]) : progress());
  for (const msgs of [head, long, head, long.slice(0, 1500), long]) {
    const r = assertSame(msgs, `${msgs.length} messages`);
    assert.equal(r.settled, 3);
  }
  // A response split over many lines before a long tail.
  const split = [user('q')];
  for (let k = 0; k < 400; k++) split.push(asst('m9', [call(`c${k}`)], { usage: usage(5000, 1) }), user([result(`c${k}`, 10)]));
  assertSame(split, 'a response of 400 lines with results between them');
});

test('one array mutated in place between calls: each call reads it as it is now', () => {
  const arr = [user('q'), asst('m1', text('a '.repeat(200)), { usage: usage(4000, 1) })];
  const check = (label) => assertSame(arr, label);
  check('start');
  arr.push(user([result('t1', 800)]));
  check('a result pushed');
  arr.push(asst('m1', [call('t2')], { usage: usage(4000, 2) }));
  check('a later line of the streamed response');
  arr[arr.length - 1].message.usage = usage(6000, 40);
  arr[arr.length - 1].message.stop_reason = 'tool_use';
  check('its usage replaced in place, the response finished');
  arr[1].isSidechain = true;
  check('an earlier line made a sidechain line');
  arr.push(line('system', { subtype: 'compact_boundary' }), user('summary', { isCompactSummary: true }));
  check('a boundary in the tail');
  arr.length = 0;
  check('emptied');
});

test('shouldAutoCompact without options: models, environment defaults and their thresholds', () => {
  const near = (input) => [user('q'), asst('m1', text('a'), { usage: usage(input, 10), stop: 'end_turn' }), user('r'.repeat(40))];
  try {
    for (const model of [OPUS, `${OPUS}[1m]`, 'claude-3-5-haiku', 'claude-sonnet-4-5', 'gpt-4o', undefined]) {
      for (const input of [0, 100000, 150000, 154990, 155000, 166990, 167000, 180000, 990000]) {
        const { fast, full } = bothWays(near(input), undefined, model);
        assert.deepEqual(fast, full, `${model} at ${input}`);
      }
    }
    cc.setEnvironmentDefaults({ DISABLE_AUTO_COMPACT: '1' });
    assert.equal(cc.shouldAutoCompact(near(180000), OPUS), false, 'disabled by the environment');
    cc.setEnvironmentDefaults({ CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '50' });
    assert.equal(cc.shouldAutoCompact(near(100000), OPUS), true, 'a lower threshold from the environment');
    cc.setEnvironmentDefaults({});
    assert.equal(cc.shouldAutoCompact(near(100000), OPUS), false, 'the defaults again');
  } finally {
    cc.setEnvironmentDefaults({});
  }
});

// ---- Arrays of {role, content} messages (and the other ecosystems' messages) without usage:
// the record holds every message (roleTail_ in js_view.js; count_tail's unanchored case).

const strip = (msgs) => msgs.map((m) => {
  if (m === null || typeof m !== 'object' || !('usage' in m)) return m;
  const { usage: _, ...rest } = m;
  return rest;
});

test('random API histories without usage, in every shape: every prefix, the same answers', () => {
  let settled = 0;
  for (let seed = 1; seed <= 24; seed++) {
    const api = strip(randomHistory(prng(seed), { shape: 'api' }));
    for (const [label, msgs] of [['api', api], ['ai sdk', toAiSdk(api)], ['ui', toAiSdkUi(api)], ['chat', toOpenAiChat(api)],
      ['responses', toOpenAiResponses(api)], ['langchain', toLangChain(api)]]) {
      settled += everyPrefix(msgs, `seed ${seed} ${label}`);
    }
  }
  assert.ok(settled > 500, `${settled} prefixes settled`);
});

const R = {
  user: (content, extra = {}) => ({ role: 'user', content, ...extra }),
  asst: (content, extra = {}) => ({ role: 'assistant', content, ...extra }),
  reminder: (text) => ({ role: 'system', clear_at: 'next_user_message', content: text }),
};
const ROLE_CASES = {
  'reminders cleared by a later user message, and one not yet': [
    R.user('q'), R.reminder('r'.repeat(400)), R.asst('a'), R.user('again'), R.reminder('s'.repeat(300)), R.asst([{ type: 'text', text: 'b' }]),
  ],
  'a system prompt and a developer message in the array': [
    { role: 'system', content: 'be brief '.repeat(30) }, { role: 'developer', content: 'rules '.repeat(20) }, R.user('q'), R.asst('a'),
  ],
  'tool calls and results, cache_control, images and documents': [
    R.user([{ type: 'text', text: 'look', cache_control: { type: 'ephemeral' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }]),
    R.asst([{ type: 'thinking', thinking: 't'.repeat(90), signature: 's' }, call('t1'), call('t2', 'Grep')]),
    R.user([result('t1', 700), { type: 'tool_result', tool_use_id: 't2', content: [{ type: 'text', text: 'x'.repeat(60) },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'd'.repeat(80) } }] }]),
    R.asst([{ type: 'server_tool_use', id: 's1', name: 'web_search', input: { query: 'q' } },
      { type: 'web_search_tool_result', tool_use_id: 's1', content: [{ type: 'web_search_result', url: 'u', title: 't' }] },
      { type: 'future_block', payload: [1, 2, 3] }]),
  ],
  'a compaction block starts the context': [
    R.user('q'.repeat(300)), R.asst([{ type: 'compaction', content: 'summary of it all' }, { type: 'text', text: 'ok' }]), R.user('next'),
  ],
  'usage on a message of another shape': [
    R.user('q'), { role: 'assistant', content: 'a', tool_calls: [], usage: { prompt_tokens: 900, completion_tokens: 3 } }, R.user('next'),
  ],
  'an unknown role': [R.user('q'), { role: 'robot', content: 'beep' }, R.asst('a')],
  'a message of no known shape': [R.user('q'), { content: 'no role' }, R.asst('a')],
  'two shapes': [R.user('q'), R.asst([call('t1')]), { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'Read', output: { type: 'text', value: 'x' } }] }],
  'values that are no message': [R.user('q'), null, R.asst('a'), 42],
  'malformed blocks and contents': [R.user('q'), R.asst([{ type: 'text' }]), R.user([{ type: 'tool_use', id: 'x' }]), R.user(['s']), R.user(42), R.user([{ text: 'no type' }])],
  'a malformed block before any sent message is read, and after the last': [
    { role: 'system', clear_at: 'next_user_message', content: [{ type: 'text' }] }, R.user('q'), R.asst('a'),
    { role: 'system', clear_at: 'next_user_message', content: [{ type: 'text', text: 7 }] },
  ],
  'a Responses item reference and an OpenAI Chat conversation': [
    { role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: 'r'.repeat(50) }, { id: 'rs_1' },
  ],
};

test('{role, content} edge cases: reminders, starts, unknown roles, two shapes, malformed parts', () => {
  let settled = 0;
  for (const [label, msgs] of Object.entries(ROLE_CASES)) settled += everyPrefix(msgs, label);
  assert.ok(settled > 15, `${settled} prefixes settled by the record`);
});

test('{role, content} messages whose reads throw, at every position: the same errors either way', () => {
  const base = ROLE_CASES['tool calls and results, cache_control, images and documents'];
  for (let at = 0; at < base.length; at++) {
    for (const key of ['role', 'content', 'usage', 'type', 'parts']) {
      const msgs = base.map((m) => structuredClone(m));
      Object.defineProperty(msgs[at], key, { get() { throw new Error(`no reading ${key}`); } });
      for (let k = at + 1; k <= msgs.length; k++) assertSame(msgs.slice(0, k), `${key} throws at ${at}: first ${k}`);
    }
    const msgs = base.map((m) => structuredClone(m));
    Object.defineProperty(msgs[at].content[0], 'type', { get() { throw new Error('no reading the block type'); } });
    for (let k = at + 1; k <= msgs.length; k++) assertSame(msgs.slice(0, k), `a block's type throws at ${at}: first ${k}`);
  }
  const proxy = new Proxy(base, { get(t, k) { if (k === '2') throw new Error('no element 2'); return t[k]; } });
  const { fast, full } = bothWays(proxy);
  assert.deepEqual(fast, full);
  assert.equal(fast.count.code, 'INVALID_MESSAGE');
  const sparse = [...base];
  delete sparse[1];
  assertSame(sparse, 'a hole');
});

test('a long {role, content} conversation: the per-turn record grows once, then settles each call in one pass', () => {
  const long = [];
  for (let k = 0; k < 3000; k++) long.push(k % 2 ? R.asst([call(`t${k}`), { type: 'text', text: 'w'.repeat(k % 97) }]) : R.user([result(`t${k - 1}`, 30 + k)]));
  const first = assertSame(long, 'first call');
  assert.ok(first.settled > 0);
  const before = { ...stats };
  const n = cc.tokenCountWithEstimation(long);
  assert.equal(n, first.fast.count.value);
  assert.equal(stats.routed - before.routed, 1, 'the glue\'s record settled it');
  assert.equal(stats.records - before.records, 1, 'one record, one pass');
  // Shorter again, then mutated in place: read as it is now.
  assertSame(long.slice(0, 10), 'ten messages');
  long[5].content[1].text = 'changed '.repeat(100);
  assertSame(long, 'a text changed in place');
});
