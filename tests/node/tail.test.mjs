// The per-turn count's one-crossing tail read (`tail` in src/bindings/js_view.js, read by
// JsConversation::read_tail) gives the answers the view's readers give one call at a time.
// Each case is counted twice: with the tail read, and with it switched off (the readers
// alone, as before it existed); the totals, the decisions and any error must be the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as cc from '../../pkg/node.js';
import { buildApiView, activeStart, toAiSdk } from '../../bench/formats.mjs';
import { OPUS, TRANSCRIPTS, readJsonl, transcriptConversation, randomHistory, prng, packageJsView, callOutcome } from './helpers/support.mjs';
import { toOpenAiChat, toOpenAiResponses } from './helpers/shapes.mjs';

cc.setEnvironmentDefaults({});

// The package's own js_view.js (the module instance its glue imported).
const view = await packageJsView();

const outcome = callOutcome;

// tokenCountWithEstimation and shouldAutoCompact of `messages` (with `options`), with the
// tail read and without.
function bothWays(messages, options, model = OPUS) {
  const run = () => ({
    count: outcome(() => cc.tokenCountWithEstimation(messages, options)),
    should: outcome(() => cc.shouldAutoCompact(messages, model, options)),
  });
  const fast = run();
  view.setTailReads(false);
  try {
    return { fast, full: run() };
  } finally {
    view.setTailReads(true);
  }
}

function assertSame(messages, label, options) {
  const { fast, full } = bothWays(messages, options);
  assert.deepEqual(fast, full, label);
  return fast;
}

// Every prefix of a conversation (every state a chat UI or an agent counts); none fails.
function everyPrefix(messages, label, options) {
  for (let k = 0; k <= messages.length; k++) {
    const r = assertSame(messages.slice(0, k), `${label}: first ${k} messages`, options);
    if (r.count.value === undefined) assert.fail(`${label}: first ${k}: ${r.count.message}`);
  }
}

test('the switch really switches, and the count reads the tail once (describing what it counts)', () => {
  const lines = transcriptConversation({ rounds: 3 });
  const stats = view.setTailReads(false);
  const records = view.setCountFast(true);
  const before = { ...stats };
  const recordsBefore = records.records;
  const off = cc.tokenCountWithEstimation(lines);
  assert.deepEqual(stats, before, 'switched off: no tail read');
  assert.equal(records.records, recordsBefore, 'switched off: no count record either');
  view.setTailReads(true);
  // The per-turn count's own record (count-record.test.mjs) settles it: no general tail read.
  assert.equal(cc.tokenCountWithEstimation(lines), off);
  assert.equal(records.records, recordsBefore + 1, 'one record per count');
  assert.deepEqual(stats, before, 'no general tail read');
  view.setCountFast(false);
  try {
    assert.equal(cc.tokenCountWithEstimation(lines), off);
    assert.equal(stats.reads, before.reads + 1, 'one tail read per count');
    assert.ok(stats.described > before.described, 'the messages after the anchor were described');
    cc.shouldAutoCompact(lines, OPUS);
    assert.equal(stats.reads, before.reads + 2);
  } finally {
    view.setCountFast(true);
  }
  assert.ok(off > 0);
});

for (const file of readdirSync(TRANSCRIPTS).filter((f) => f.endsWith('.jsonl'))) {
  test(`every prefix of the real transcript ${file}: the same count and decision with and without the tail read`, () => {
    everyPrefix(readJsonl(TRANSCRIPTS + file), file);
  });
}

test('every prefix of the API view and of its AI SDK, OpenAI Chat and Responses forms', () => {
  const lines = readJsonl(`${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`);
  const api = buildApiView(lines, activeStart(lines));
  // Usage on the API view's assistant messages too (as the Messages API returns it).
  let n = 0;
  const withUsage = api.map((m) => (m.role === 'assistant' && ++n % 3 === 0
    ? { ...m, usage: { input_tokens: 10 * n, cache_read_input_tokens: 1000 * n, output_tokens: 7 } } : m));
  for (const [label, msgs] of [['API view', api], ['API view with usage', withUsage], ['AI SDK', toAiSdk(api)],
    ['OpenAI Chat', toOpenAiChat(api)], ['OpenAI Responses', toOpenAiResponses(api)]]) {
    // Every 7th prefix and the last 30 (the whole API view is estimated at each one).
    for (let k = 0; k <= msgs.length; k++) {
      if (k % 7 !== 0 && k < msgs.length - 30) continue;
      assertSame(msgs.slice(0, k), `${label}: first ${k}`);
    }
  }
});

test('options: given usage, system and tools, a tokenizer, a named shape', () => {
  const lines = readJsonl(`${TRANSCRIPTS}cc_small_short.jsonl`);
  const api = buildApiView(lines, 0);
  for (const options of [
    { usage: { input_tokens: 5000, output_tokens: 20 } },
    { usage: { input_tokens: 5000, output_tokens: 20 }, usageAt: 1 },
    { system: 'You are a coding agent.', tools: [{ name: 'Read', input_schema: { type: 'object' } }] },
    { tokenCounter: (s) => Math.ceil(s.length / 3) },
    { shape: 'anthropic' },
    { calibration: { overhead: 1000, ratio: 1.2 } },
  ]) {
    for (const [label, msgs] of [['lines', lines], ['API view', api]]) {
      for (let k = 0; k <= msgs.length; k++) assertSame(msgs.slice(0, k), `${label} ${JSON.stringify(Object.keys(options))}: first ${k}`, options);
    }
  }
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

test('edge cases: no usage, split streamed responses, sidechain lines, boundaries, context starts', () => {
  const cases = {
    'no usage at all': [user('hello'), asst('m1', text('hi there')), user('more please')],
    'a tail with no usage after a boundary': [
      user('old'), asst('m0', text('old answer'), { usage: usage(9000, 40), stop: 'end_turn' }),
      line('system', { subtype: 'compact_boundary', compactMetadata: { trigger: 'auto', preTokens: 9000 } }),
      user('summary of the old part', { isCompactSummary: true }), user('and now?'),
    ],
    'a streamed response split over several lines, results in between': [
      user('read two files'),
      asst('m1', [{ type: 'thinking', thinking: 'let me think '.repeat(30), signature: 's' }], { usage: usage(100, 1) }),
      asst('m1', [call('t1')], { usage: usage(100, 1) }),
      user([result('t1', 900)]),
      asst('m1', [call('t2', 'Grep')], { usage: usage(100, 2) }),
      user([result('t2', 300)]),
      line('progress', { data: { type: 'hook_progress' } }),
    ],
    'a finished split response, then a new user message': [
      user('q'), asst('m1', text('part one '.repeat(40)), { usage: usage(500, 80) }),
      asst('m1', [call('t9')], { usage: usage(500, 80), stop: 'tool_use' }),
      user([result('t9', 2000)]), user('thanks, next'),
    ],
    'a later line of the anchor response without usage': [
      user('q'), asst('m1', text('a '.repeat(100)), { usage: usage(500, 1) }), asst('m1', [call('t1')]),
      user([result('t1')]),
    ],
    'sidechain lines everywhere': [
      user('q'), asst('m1', text('main'), { usage: usage(700, 1) }),
      asst('s1', text('side answer '.repeat(50)), { usage: usage(99999, 5), line: { isSidechain: true } }),
      user('side question', { isSidechain: true }), asst('m1', [call('t1')], { usage: usage(700, 3) }),
      user([result('t1')]), asst('s2', text('more side'), { line: { isSidechain: true } }),
    ],
    'the anchor is a sidechain-only tail': [user('q'), asst('s', text('x'), { usage: usage(1, 1), line: { isSidechain: true } })],
    'a boundary right at the end': [user('q'), asst('m1', text('a'), { usage: usage(10, 1) }), line('system', { subtype: 'compact_boundary' })],
    'a session-memory boundary keeping messages': [
      user('q'), asst('m1', text('a'), { usage: usage(150000, 9000), stop: 'end_turn' }),
      line('system', { subtype: 'compact_boundary', compactMetadata: { keptMessages: 2 } }),
      user('summary', { isCompactSummary: true }), user('kept q'), asst('m1', text('a'), { usage: usage(150000, 9000), stop: 'end_turn' }),
    ],
    'a server-side compaction block': [
      user('q'), asst('m1', text('a'), { usage: usage(5000, 10), stop: 'end_turn' }),
      asst('m2', [{ type: 'compaction', content: 'summary of everything so far' }, { type: 'text', text: 'ok' }]),
      user('next'),
    ],
    'a compaction block with usage': [
      user('q'), asst('m2', [{ type: 'compaction', content: 'summary' }], { usage: usage(300, 10), stop: 'end_turn' }), user('next'),
    ],
    'an attachment and a local system note after the anchor': [
      user('q'), asst('m1', text('a'), { usage: usage(2000, 20), stop: 'end_turn' }),
      line('attachment', { attachment: { type: 'todo', content: [{ content: 'x'.repeat(300) }] } }),
      line('system', { subtype: 'local_command', content: 'ran /help' }), user('go on'),
    ],
    'malformed usage': [user('q'), asst('m1', text('a'), { usage: { input_tokens: -5, output_tokens: 1 } })],
    'usage not an object': [user('q'), asst('m1', text('a'), { usage: 'lots' })],
    'a malformed block after the anchor': [user('q'), asst('m1', text('a'), { usage: usage(10, 1), stop: 'end_turn' }), user([{ type: 'text' }])],
    'a malformed block in an unsent line between sent ones': [
      user('q'), asst('m1', text('a'), { usage: usage(10, 1), stop: 'end_turn' }), user('r1'),
      user([{ type: 'text' }], { isSidechain: true }), user('r2'),
    ],
    'a malformed block in an unsent line at the end': [
      user('q'), asst('m1', text('a'), { usage: usage(10, 1), stop: 'end_turn' }), user('r1'), user([{ type: 'text' }], { isSidechain: true }),
    ],
    'a value that is no message': [user('q'), asst('m1', text('a'), { usage: usage(10, 1) }), 42],
    'a value that is no message before the anchor': [user('q'), null, asst('m1', text('a'), { usage: usage(10, 1) })],
    'API messages with usage': [
      { role: 'user', content: 'q' }, { role: 'assistant', content: text('a'), usage: usage(800, 9) },
      { role: 'user', content: [result('t', 100)] },
    ],
    'mixed shapes': [{ role: 'user', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'x', output: { type: 'text', value: 'v' } }] },
      { role: 'assistant', content: text('a'), usage: usage(1, 1) }],
    'AI SDK messages ending with plain text': [
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'Read', input: { file_path: '/a' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'Read', output: { type: 'text', value: 'y'.repeat(500) } }] },
      { role: 'user', content: 'plain text' }, { role: 'assistant', content: 'plain answer' },
    ],
  };
  for (const [label, msgs] of Object.entries(cases)) {
    for (let k = 0; k <= msgs.length; k++) assertSame(msgs.slice(0, k), `${label}: first ${k}`);
  }
  // A getter that throws while the tail is read: the same error either way.
  const hostile = [user('q'), asst('m1', text('a'), { usage: usage(10, 1) })];
  Object.defineProperty(hostile[1], 'isSidechain', { get() { throw new Error('no reading me'); } });
  const { fast, full } = bothWays(hostile);
  assert.deepEqual(fast, full);
  assert.equal(fast.count.code, 'INVALID_MESSAGE');
});

test('random histories (both shapes, split responses, sidechains, boundaries): every prefix', () => {
  for (let seed = 1; seed <= 40; seed++) {
    const msgs = randomHistory(prng(seed));
    for (let k = 0; k <= msgs.length; k++) assertSame(msgs.slice(0, k), `seed ${seed}: first ${k}`);
  }
});

test('a large array after a small one: the reused buffers grow', () => {
  const small = readJsonl(`${TRANSCRIPTS}cc_small_short.jsonl`);
  assertSame(small, 'small');
  const api = buildApiView(readJsonl(`${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`), 0);
  assertSame(api, 'the whole API view, no usage: every message described');
  assertSame(small, 'small again');
});

test('two instances of the module (sharing js_view.js) each read the tail into their own memory', async () => {
  const { readFileSync } = await import('node:fs');
  const second = await import('../../pkg/context_compaction.js?tail-second-instance');
  second.initSync({ module: readFileSync(new URL('../../pkg/context_compaction_bg.wasm', import.meta.url)) });
  second.setEnvironmentDefaults({});
  const lines = readJsonl(`${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`);
  const api = buildApiView(lines, 0);
  for (let k = lines.length - 40; k <= lines.length; k += 3) {
    const prefix = lines.slice(0, k);
    const a = cc.tokenCountWithEstimation(prefix);
    assert.equal(second.tokenCountWithEstimation(prefix), a, `first ${k}`);
    assert.equal(cc.tokenCountWithEstimation(api), second.tokenCountWithEstimation(api));
    assert.equal(cc.tokenCountWithEstimation(prefix), a);
  }
});

// The stateless per-turn calls against a Compactor holding the same messages, pushed one by
// one: the same count at every prefix of a real transcript, and the same decision as the
// readers alone give.
test('every prefix of a real transcript: the stateless count equals a Compactor\'s running count', () => {
  const lines = readJsonl(`${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`);
  const c = new cc.Compactor({ model: OPUS, messages: [] });
  for (let k = 0; k <= lines.length; k++) {
    if (k > 0) c.push(lines[k - 1]);
    const prefix = lines.slice(0, k);
    if (k % 5 === 0 || k > lines.length - 40) assertSame(prefix, `first ${k}`);
    assert.equal(cc.tokenCountWithEstimation(prefix), c.tokenCount(), `first ${k}: count`);
  }
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
  arr[1] = asst('m1', text('short'), { usage: usage(4000, 1), line: { isSidechain: true } });
  check('an earlier line replaced by a sidechain line');
  arr.push(line('system', { subtype: 'compact_boundary' }), user('summary', { isCompactSummary: true }));
  check('a boundary in the tail');
  arr.splice(arr.length - 2, 2);
  check('the boundary removed again');
  arr.length = 1;
  check('cut to one message');
  arr.length = 0;
  check('emptied');
  const big = lines200();
  arr.push(...big);
  check('refilled with a long conversation');
});

// 200 lines of a generated conversation (more than the tail buffers hold at first).
function lines200() {
  const out = [user('start')];
  for (let k = 0; out.length < 200; k++) {
    out.push(asst(`m${k}`, [call(`t${k}`)], { usage: usage(1000 + k, 1) }), user([result(`t${k}`, 300)]));
  }
  return out;
}

test('shouldAutoCompact without options follows model and environment changes between calls', () => {
  // About 170K tokens: above the 200K models' threshold, below the 1M ones'.
  const msgs = [user('q'), asst('m1', text('a'), { usage: usage(170000, 10), stop: 'end_turn' })];
  const mid = [user('q'), asst('m1', text('a'), { usage: usage(100000, 10), stop: 'end_turn' })];
  try {
    assert.equal(cc.shouldAutoCompact(msgs, OPUS), true);
    assert.equal(cc.shouldAutoCompact(msgs, `${OPUS}[1m]`), false, 'another model: its own threshold');
    assert.equal(cc.shouldAutoCompact(msgs, OPUS), true, 'back to the first');
    cc.setEnvironmentDefaults({ DISABLE_AUTO_COMPACT: '1' });
    assert.equal(cc.shouldAutoCompact(msgs, OPUS), false, 'disabled by the environment');
    cc.setEnvironmentDefaults({});
    assert.equal(cc.shouldAutoCompact(mid, OPUS), false, '100K: below the default threshold');
    cc.setEnvironmentDefaults({ CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '50' });
    assert.equal(cc.shouldAutoCompact(mid, OPUS), true, 'a lower threshold from the environment');
    cc.setEnvironmentDefaults({});
    assert.equal(cc.shouldAutoCompact(mid, OPUS), false, 'the defaults again');
    assert.equal(cc.shouldAutoCompact(msgs, OPUS), true);
    assert.equal(cc.shouldAutoCompact(msgs, OPUS, { config: { autoCompactEnabled: false } }), false);
    assert.equal(cc.shouldAutoCompact(msgs, OPUS), true, 'options of one call are not kept');
    for (const bad of [42, {}, ['x']]) {
      assert.throws(() => cc.shouldAutoCompact(msgs, bad), { code: 'INVALID_ARGUMENT' });
    }
    assert.equal(cc.shouldAutoCompact(msgs, undefined), true, 'no model: the default window');
  } finally {
    cc.setEnvironmentDefaults({});
  }
});

test('not an array, or an array that throws when read: the same errors with the tail read', () => {
  const throwing = new Proxy([], { get(t, k) { if (k === 'length') throw new Error('no length'); return t[k]; } });
  for (const [k, bad] of ['lines', 42, null, undefined, { length: 2 }, throwing].entries()) {
    const { fast, full } = bothWays(bad);
    assert.deepEqual(fast, full, `case ${k}`);
    assert.ok(fast.count.code, `case ${k}: an error`);
  }
});
