// The compaction paths read the caller's messages in batches (`headsOf` + `jsonBatch` in
// src/bindings/js_batch.js: two crossings per batch instead of several per message). Each
// case runs twice: with batches, and with them switched off (`setReadBatch(false)`: every
// message read alone, as before batches existed); the summary request, the result and the
// errors must be the same, and the input unchanged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as cc from '../../pkg/node.js';
import * as h from './helpers/support.mjs';
import { LONG_TRANSCRIPT, readJsonl } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});
const { OPUS } = h;

// The package's own js_batch.js (the module instance its glue imported).
const snippets = new URL('../../pkg/snippets/', import.meta.url);
const convert = await import(new URL(`${readdirSync(snippets)[0]}/src/bindings/js_batch.js`, snippets));

/** What one compactConversation gives, without the ids and times made afresh each call. */
async function outcome(messages, context = {}) {
  let request;
  const summarize = async (r) => {
    request = r;
    return h.summaryResponse('BATCH-SUMMARY');
  };
  try {
    const r = await cc.compactConversation(messages, { model: OPUS, summarize, ...context }, {});
    const fresh = /^(uuid|timestamp|parentUuid|logicalParentUuid)$/;
    const plain = (v) => JSON.parse(JSON.stringify(v, (k, x) => (fresh.test(k) ? undefined : x)));
    return {
      request: plain(request),
      kept: r.messagesToKeep.map((m) => messages.indexOf(m)),
      result: plain({ ...r, messagesToKeep: undefined }),
    };
  } catch (e) {
    return { code: e.code, message: e.message };
  }
}

/** Each message's JSON text ('!' when it has none): a snapshot that hostile messages allow. */
function snapshot(messages) {
  const out = [];
  for (let i = 0; i < messages.length; i++) {
    try {
      out.push(JSON.stringify(messages[i], (k, v) => (typeof v === 'bigint' ? String(v) : v)));
    } catch {
      out.push('!');
    }
  }
  return out;
}

async function bothWays(messages, context) {
  const before = snapshot(messages);
  const batched = await outcome(messages, context);
  convert.setReadBatch(false);
  let alone;
  try {
    alone = await outcome(messages, context);
  } finally {
    convert.setReadBatch(true);
  }
  assert.deepStrictEqual(batched, alone);
  assert.deepStrictEqual(snapshot(messages), before, 'input unchanged');
  return batched;
}

const long = readJsonl(LONG_TRANSCRIPT);
const boundaryAt = long.findIndex((l) => l.type === 'system' && l.subtype === 'compact_boundary');
const beforeBoundary = long.slice(0, boundaryAt);

test('the shared long session (several batches): the same request and result either way', async () => {
  assert.ok(beforeBoundary.length > 512, 'more than two batches');
  const r = await bothWays(beforeBoundary);
  assert.equal(r.code, undefined, r.message);
  assert.ok(r.request.messages.length > 10);
});

test('messages larger than a batch, between small ones: the same either way', async () => {
  const t = h.transcriptConversation({ rounds: 30 });
  const big = 'é'.repeat(700_000); // 1.4 MB of UTF-8: over the batch's byte limit alone
  t.splice(40, 0, { type: 'user', uuid: 'big-1', isSidechain: false, message: { role: 'user', content: `BIG ${big}` } });
  t.splice(41, 0, { type: 'progress', uuid: 'p-big', isSidechain: false, data: { blob: big } });
  t.splice(120, 0, { type: 'user', uuid: 'big-2', isSidechain: false, message: { role: 'user', content: [{ type: 'text', text: big }] } });
  const r = await bothWays(t);
  assert.equal(r.code, undefined, r.message);
});

test('a message that cannot be read, at a batch edge or inside one: the same error, naming it', async () => {
  const base = h.transcriptConversation({ rounds: 70 });
  assert.ok(base.length > 600);
  const cycle = () => {
    const m = { type: 'user', message: { role: 'user', content: 'x' } };
    m.self = m;
    return m;
  };
  const bad = {
    'toJSON throws': () => ({ type: 'user', toJSON() { throw new Error('no json'); } }),
    'a cycle': cycle,
    'a BigInt': () => ({ type: 'user', message: { role: 'user', content: 'x' }, n: 10n }),
    'a number': () => 42,
    'null': () => null,
    'a string': () => 'hello',
    'a throwing getter on the line type': () => ({ get type() { throw new Error('type getter'); }, message: { role: 'user', content: 'x' } }),
  };
  for (const at of [0, 1, 255, 256, 257, 511, base.length - 1]) {
    for (const [name, make] of Object.entries(bad)) {
      const msgs = [...base];
      msgs[at] = make();
      const r = await bothWays(msgs);
      if (r.code !== undefined) assert.match(r.message, new RegExp(`messages\\[${at}\\]`), `${name} at ${at}`);
    }
    // An element whose getter throws, and a hole.
    const withGetter = [...base];
    Object.defineProperty(withGetter, at, { get() { throw new Error('element getter'); } });
    const g = await bothWays(withGetter);
    assert.equal(g.code, 'INVALID_MESSAGE');
    assert.match(g.message, new RegExp(`messages\\[${at}\\]: reading the messages threw: element getter`));
    const holed = [...base];
    delete holed[at];
    const hole = await bothWays(holed);
    assert.equal(hole.code, 'INVALID_MESSAGE');
    assert.match(hole.message, new RegExp(`messages\\[${at}\\]`));
  }
});

test('an array behind a Proxy, and messages that are class instances: the same either way', async () => {
  const t = h.transcriptConversation({ rounds: 30 });
  class Line {
    constructor(o) {
      Object.assign(this, o);
    }
  }
  await bothWays(new Proxy(t, {}));
  await bothWays(t.map((m) => new Line(m)));
  const r = await bothWays(t.map((m, i) => (i % 7 === 3 ? { ...m, toJSON() { return { ...this, toJSON: undefined }; } } : m)));
  assert.equal(r.code, undefined, r.message);
});

test('the synchronous readers (previewCompaction, the Compactor, toApiMessages) read in batches too: the same either way', async () => {
  const twice = async (f) => {
    const a = await f();
    convert.setReadBatch(false);
    try {
      assert.deepStrictEqual(await f(), a);
    } finally {
      convert.setReadBatch(true);
    }
    return a;
  };
  const p = await twice(() => cc.previewCompaction(beforeBoundary, { model: OPUS }));
  assert.ok(p.tokensBefore > 0);
  await twice(() => JSON.stringify(cc.toApiMessages(beforeBoundary)));
  await twice(async () => {
    let request;
    const c = new cc.Compactor({ model: OPUS, messages: beforeBoundary, summarize: async (r) => ((request = r), h.summaryResponse('C')) });
    const r = await c.compact();
    return [JSON.stringify(request), r.preCompactTokenCount, r.postCompactTokenCount];
  });
  // An error met by a synchronous reader names the message, either way.
  const bad = [...beforeBoundary];
  // (A field only JSON reads, whose getter throws: the messages' own fields read well.)
  bad[300] = { type: 'user', uuid: 'bad', message: { role: 'user', content: 'x' }, get note() { throw new Error('no json'); } };
  const e = await twice(async () => {
    try {
      await cc.previewCompaction(bad, { model: OPUS });
      return 'no error';
    } catch (x) {
      return [x.code, x.message];
    }
  });
  assert.equal(e[0], 'INVALID_MESSAGE');
  assert.match(e[1], /messages\[300\]/);
});

/**
 * What compactConversation, previewCompaction and a Compactor's compact give for `messages`
 * (or the error each throws), as plain data: ids and times made afresh (not among `known`)
 * replaced by '<fresh>'.
 */
async function everyReader(messages, known = new Set()) {
  const stable = (v) =>
    JSON.parse(
      JSON.stringify(v, (k, x) => {
        if (/^(uuid|parentUuid|logicalParentUuid|timestamp)$/.test(k) && typeof x === 'string' && !known.has(x)) return '<fresh>';
        return typeof x === 'bigint' ? String(x) : x;
      }),
    );
  let request;
  const summarize = async (r) => ((request = r), h.summaryResponse('PICKED'));
  const out = {};
  try {
    const r = await cc.compactConversation(messages, { model: OPUS, summarize }, {});
    out.compact = stable({ request, r: { ...r, messagesToKeep: r.messagesToKeep.map((m) => messages.indexOf(m)) } });
  } catch (e) {
    out.compact = [e.code, e.message];
  }
  try {
    out.preview = stable(await cc.previewCompaction(messages, { model: OPUS }));
  } catch (e) {
    out.preview = [e.code, e.message];
  }
  try {
    const c = new cc.Compactor({ model: OPUS, messages, summarize });
    await c.compact();
    out.compactor = stable({ messages: c.messages, snapshot: c.snapshot() });
  } catch (e) {
    out.compactor = [e.code, e.message];
  }
  return out;
}

// Lines whose payload is never read (progress, snapshots, other system lines) cross with only
// their identity fields, written without JSON when each is absent, a boolean or a string
// (`pickedText` in js_batch.js). Switched off (`setPickedFields(false)`), the same fields
// cross as the JSON of an object: everything must come out the same, and every field be read
// as often.
test('carried lines: their picked fields give what the JSON of the same fields gives, hostile ones included', async () => {
  const reads = { n: 0 };
  const counted = (o, key, value) =>
    Object.defineProperty(o, key, {
      enumerable: true,
      get() {
        reads.n++;
        return typeof value === 'function' ? value() : value;
      },
    });
  let flip = 0;
  const carried = [
    { type: 'progress', uuid: 'p-plain', isSidechain: false, timestamp: '2025-06-01T10:00:00.000Z', data: { big: 'x'.repeat(5000) } },
    { type: 'progress', uuid: 7, timestamp: null, isSidechain: 'no' },
    { type: 'progress', uuid: 'sep\u001fin\u001fit', timestamp: 'lone \ud800 surrogate', isSidechain: true },
    { type: 'progress', uuid: 'p-date', timestamp: new Date(0), fn() {}, isSidechain: false },
    { type: 'progress', uuid: Symbol('s'), subtype: () => 1, isSidechain: false },
    { type: 'file-history-snapshot', uuid: 'é😀中', subtype: '', cwd: '/elsewhere', sessionId: 'other' },
    { type: 'system', subtype: 'informational', uuid: 'sys-1', isSidechain: false, isMeta: true, content: 'not read' },
    counted({ isSidechain: false }, 'uuid', 'p-getter'),
    counted(counted({ uuid: 'p-flip' }, 'type', () => (flip++ % 2 ? 'user' : 'progress')), 'timestamp', '2025-06-01T10:00:01.000Z'),
    Object.defineProperty({ type: 'progress', isSidechain: false }, 'uuid', { enumerable: true, get() { throw new Error('uuid getter'); } }),
  ];
  carried[7].type = 'progress';
  const lastLines = [
    // The line a new boundary copies its session fields from (read whole, with them).
    { type: 'progress', uuid: 'p-last', isSidechain: false, cwd: '/w', sessionId: 's-1', version: '2.0.1', gitBranch: 'main', userType: 'external', data: {} },
    { type: 'progress', uuid: 'p-last', isSidechain: false, cwd: 5, sessionId: null, version: { v: 2 }, userType: 'a\u001fb' },
    { type: 'progress', uuid: 'p-side', isSidechain: true, cwd: '/side' },
  ];
  const base = h.transcriptConversation({ rounds: 12 });
  const inputUuids = new Set();
  const run = (messages) => everyReader(messages, inputUuids);
  for (const last of lastLines) {
    const messages = [...base.slice(0, 6), ...carried, ...base.slice(6), ...carried.slice(0, 3), last];
    for (const m of messages) for (const k of ['uuid', 'timestamp']) {
      const d = Object.getOwnPropertyDescriptor(m, k);
      if (d && 'value' in d && typeof d.value === 'string') inputUuids.add(d.value);
    }
    inputUuids.add('p-getter');
    inputUuids.add('2025-06-01T10:00:01.000Z');
    flip = 0;
    const before = snapshot(messages);
    reads.n = 0;
    flip = 0;
    const picked = await run(messages);
    const pickedReads = reads.n;
    convert.setPickedFields(false);
    let json;
    try {
      reads.n = 0;
      flip = 0;
      json = await run(messages);
    } finally {
      convert.setPickedFields(true);
    }
    assert.deepStrictEqual(picked, json, JSON.stringify(last));
    assert.equal(pickedReads, reads.n, 'each field read as often');
    assert.ok(pickedReads > 0);
    flip = 0;
    assert.deepStrictEqual(snapshot(messages), before, 'input unchanged');
    assert.ok(!Array.isArray(picked.compact), JSON.stringify(picked.compact));
  }
});

// The long strings of a message's content (a string content, text blocks, string tool
// results) cross apart from its JSON text, as UTF-8 as they are (`withApart` in
// js_batch.js, `Message::put_apart_text` in Rust). Switched off (`setApartTexts(false)`),
// every message crosses as JSON whole: every reader must give the same either way.
async function apartBothWays(messages, known) {
  const sent = await everyReader(messages, known);
  convert.setApartTexts(false);
  try {
    assert.deepStrictEqual(sent, await everyReader(messages, known));
  } finally {
    convert.setApartTexts(true);
  }
  return sent;
}

test('long strings sent apart: the shared long session gives the same either way', async () => {
  const known = new Set(beforeBoundary.flatMap((m) => [m.uuid, m.timestamp]));
  const r = await apartBothWays(beforeBoundary, known);
  assert.ok(!Array.isArray(r.compact), JSON.stringify(r.compact));
  assert.ok(r.compact.request.messages.length > 10);
});

test('long strings sent apart: odd and hostile content gives the same either way', async () => {
  const long = (c, n = 200) => c.repeat(n);
  const odd = [
    'lone \ud800 high, lone \udc00 low, pair \ud83d\ude00, ' + long('x'),
    'U+001F \u001f U+001E \u001e NUL \u0000 quote " backslash \\ ' + long('\n'),
    long('é中', 40),
    'x'.repeat(63),
    'x'.repeat(64),
    '',
  ];
  const user = (content, extra = {}) => ({ type: 'user', isSidechain: false, uuid: `u${Math.random()}`, message: { role: 'user', content }, ...extra });
  const proto = { message: { role: 'user', content: long('inherited ') } };
  const withToJSON = { type: 'user', message: { role: 'user', content: long('shown ') }, toJSON() { return { type: 'user', message: { role: 'user', content: 'as toJSON says' } }; } };
  const hidden = { type: 'user', message: { role: 'user', content: 'short' } };
  Object.defineProperty(hidden.message, 'content', { value: long('hidden '), enumerable: false });
  const hiddenText = { type: 'tool_result', tool_use_id: 'h' };
  Object.defineProperty(hiddenText, 'content', { value: long('not enumerable '), enumerable: false });
  const inheritedText = Object.assign(Object.create({ text: long('inherited text ') }), { type: 'text' });
  const holes = [{ type: 'text', text: long('a') }];
  holes[2] = { type: 'text', text: long('b') };
  const cases = [
    ...odd.map((t) => user(t)),
    ...odd.map((t) => ({ role: 'user', content: t })),
    user(odd.map((text) => ({ type: 'text', text, cache_control: { type: 'ephemeral' } }))),
    user(odd.map((t, k) => ({ type: 'tool_result', tool_use_id: `t${k}`, content: t, is_error: k === 1 }))),
    user([{ type: 'tool_result', tool_use_id: 'arr', content: [{ type: 'text', text: long('nested ') }] }]),
    user([{ type: 'tool_result', content: long('no id ') }, { type: 'mystery', text: long('m ') }]),
    user([{ type: 'text', text: long('t '), toJSON() { return { type: 'text', text: 'from toJSON' }; } }]),
    user(Object.assign([{ type: 'text', text: long('arr ') }], { toJSON() { return 'array toJSON'; } })),
    user(new Proxy([{ type: 'text', text: long('proxied array ') }], {})),
    user([new Proxy({ type: 'tool_result', tool_use_id: 'px', content: long('proxied block ') }, {})]),
    user(holes),
    user([hiddenText, { type: 'text', text: 'x' }]),
    user([{ type: 'text', text: 'x' }, inheritedText]),
    user([null, 5, 'str', [1], { type: 'text', text: long('after junk ') }]),
    Object.assign(Object.create(proto), { type: 'user', uuid: 'proto' }),
    withToJSON,
    hidden,
    { type: 'user', uuid: 'null-msg', message: null, content: long('own content ') },
    { type: 'user', uuid: 'arr-msg', message: [long('in an array ')] },
    { type: 'user', uuid: 'sym', [Symbol('s')]: long('symbol '), message: { role: 'user', content: long('with a symbol key ') } },
    { type: 'assistant', uuid: 'a1', message: { id: 'msg_x', role: 'assistant', model: OPUS, content: [{ type: 'text', text: long('answer ') }, { type: 'tool_use', id: 'tu', name: 'Read', input: { file_path: '/a', note: long('input ') } }], usage: { input_tokens: 10, cache_creation_input_tokens: 0, cache_read_input_tokens: 5000, output_tokens: 20 } } },
  ];
  // The string fields of a tool use's input (sent apart when long), with what JSON.stringify
  // leaves out before them (the field's place in the text is counted without those).
  const hiddenInput = { file_path: '/h' };
  Object.defineProperty(hiddenInput, 'content', { value: long('hidden input '), enumerable: false });
  const getterInput = { get content() { return long('got '); }, after: '' };
  const inputs = [
    { a: undefined, b: long('after undefined '), c: '' },
    { f() {}, [Symbol('s')]: 1, g: long('after a function '), h: '', i: long('i ') },
    { d: { toJSON() { return undefined; } }, e: long('after a toJSON ') },
    { d: { toJSON() { return 'kept'; } }, e: long('after a toJSON ') },
    { e: long('before a toJSON '), d: { toJSON() { return undefined; } }, f: long('f ') },
    { b: long('b '), 1: long('one '), 0: 'zero', z: null, n: 1.5, o: { k: long('nested ') } },
    Object.assign({ c: long('input toJSON ') }, { toJSON() { return { c: 'from toJSON' }; } }),
    [long('array input ')],
    long('string input '),
    hiddenInput,
    getterInput,
    new Proxy({ p: long('proxied input ') }, {}),
    Object.assign(Object.create({ inherited: long('inherited input ') }), { own: long('own input ') }),
    { code: long('quote " backslash \\ tab \t\n', 20), u: odd[0], w: odd[2] },
  ];
  const base = h.transcriptConversation({ rounds: 8 });
  const known = new Set(base.flatMap((m) => [m.uuid, m.timestamp]));
  for (const m of cases) {
    const messages = [...base.slice(0, 4), m, ...base.slice(4)];
    const r = await apartBothWays(messages, known);
    assert.ok(r.compact !== undefined);
  }
  for (const [k, input] of inputs.entries()) {
    const call = { type: 'assistant', uuid: `in${k}`, message: { id: `msg_${k}`, role: 'assistant', model: OPUS, content: [{ type: 'tool_use', id: `in${k}`, name: 'Write', input }] } };
    const messages = [...base.slice(0, 4), call, user([{ type: 'tool_result', tool_use_id: `in${k}`, content: 'ok' }]), ...base.slice(4)];
    const r = await apartBothWays(messages, known);
    assert.ok(!Array.isArray(r.compact), `${k}: ${r.compact}`);
  }
  cases.push({
    type: 'assistant', uuid: 'inputs',
    message: { id: 'msg_i', role: 'assistant', model: OPUS, content: inputs.map((input, k) => ({ type: 'tool_use', id: `in${k}`, name: 'Write', input })) },
  });
  cases.push(user(inputs.map((_, k) => ({ type: 'tool_result', tool_use_id: `in${k}`, content: 'ok' }))));
  // All at once, and past a batch's byte limit (1.4 MB strings sent apart).
  const big = 'é'.repeat(700_000);
  await apartBothWays([...base.slice(0, 4), ...cases, user(big), user([{ type: 'tool_result', tool_use_id: 'big', content: big }]), ...base.slice(4)], known);
  // A message that cannot be written after its strings were taken apart: the same error.
  const bad = [...base.slice(0, 4), user([{ type: 'text', text: long('before the BigInt ') }], { n: 10n }), ...base.slice(4)];
  const e = await apartBothWays(bad, known);
  assert.equal(e.compact[0], 'INVALID_MESSAGE');
  assert.match(e.compact[1], /messages\[4\]/);
});

test('long strings sent apart: a getter that changes what it gives between readings is read again whole', async () => {
  let calls = 0;
  const block = {
    get type() {
      calls++;
      return calls === 1 ? 'tool_result' : 'text';
    },
    tool_use_id: 't',
    text: 'T'.repeat(100),
    content: 'C'.repeat(100),
  };
  const base = h.transcriptConversation({ rounds: 8 });
  const messages = [...base.slice(0, 4), { type: 'user', uuid: 'g', message: { role: 'user', content: [block] } }, ...base.slice(4)];
  let request;
  const summarize = async (r) => ((request = r), h.summaryResponse('G'));
  await cc.compactConversation(messages, { model: OPUS, summarize }, {});
  // Read as a tool result first (its content sent apart), then as a text block: the place left
  // for the string was not there, so the message was read again whole, as a text block.
  assert.equal(calls, 3);
  const sent = JSON.stringify(request);
  assert.ok(sent.includes('T'.repeat(100)));
  assert.ok(!sent.includes('C'.repeat(100)));
  // The same as a reading that sees a text block from the start.
  convert.setApartTexts(false);
  let again;
  try {
    await cc.compactConversation(messages, { model: OPUS, summarize: async (r) => ((again = r), h.summaryResponse('G')) }, {});
  } finally {
    convert.setApartTexts(true);
  }
  assert.deepStrictEqual(JSON.parse(JSON.stringify(again)), JSON.parse(sent));
});

test('long strings sent apart: read twice (taken, then copied), never read again whole when nothing changed', async () => {
  const reads = { text: 0, result: 0, content: 0, toJSON: 0 };
  const counted = (o, key, value, name) =>
    Object.defineProperty(o, key, {
      enumerable: true,
      get() {
        reads[name]++;
        return value;
      },
    });
  const base = h.transcriptConversation({ rounds: 8 });
  const blocks = [
    counted({ type: 'text' }, 'text', 'T'.repeat(100), 'text'),
    counted({ type: 'tool_result', tool_use_id: 't' }, 'content', 'R'.repeat(100), 'result'),
    { type: 'text', text: 'J'.repeat(100), toJSON() { reads.toJSON++; return { type: 'text', text: 'from toJSON' }; } },
  ];
  const lines = [
    { type: 'user', uuid: 'b', message: { role: 'user', content: blocks } },
    { type: 'user', uuid: 's', message: counted({ role: 'user' }, 'content', 'S'.repeat(100), 'content') },
  ];
  const messages = [...base.slice(0, 4), ...lines, ...base.slice(4)];
  const once = async () => {
    for (const k of Object.keys(reads)) reads[k] = 0;
    let request;
    await cc.compactConversation(messages, { model: OPUS, summarize: async (r) => ((request = r), h.summaryResponse('C')) }, {});
    return JSON.stringify(request);
  };
  const sent = await once();
  // Each getter is also read by the check that reads the objects as the count does (a text
  // block's `text` twice: its type, then its length); a block's toJSON is not what the count
  // reads, so it is not what is sent either.
  assert.deepStrictEqual(reads, { text: 4, result: 3, content: 3, toJSON: 0 });
  for (const s of ['T'.repeat(100), 'R'.repeat(100), 'S'.repeat(100), 'J'.repeat(100)]) assert.ok(sent.includes(s), s);
  assert.ok(!sent.includes('from toJSON'));
  convert.setApartTexts(false);
  try {
    assert.equal(await once(), sent);
    // (A string `content` is read once more when written whole: looked at for a toJSON.)
    assert.deepStrictEqual(reads, { text: 3, result: 2, content: 3, toJSON: 0 });
  } finally {
    convert.setApartTexts(true);
  }
});

test('a getter or toJSON that calls the package while a batch is written: the same as without the call', async () => {
  const base = h.transcriptConversation({ rounds: 8 });
  const other = h.transcriptConversation({ rounds: 3 });
  const nestedCalls = [
    () => cc.toApiMessages(other),
    () => new cc.Compactor({ model: OPUS, messages: other }).tokenCount(),
    () => cc.tokenCountWithEstimation(other),
  ];
  const long = 'L'.repeat(300);
  const variants = (call) => [
    // A long string content (sent apart), a short one (JSON), a block's text, a toJSON, and a
    // carried line's field (picked without JSON).
    [{ type: 'user', uuid: 'g1', message: { role: 'user', content: long } },
      { type: 'user', uuid: 'g1', message: { role: 'user', get content() { call(); return long; } } }],
    [{ type: 'user', uuid: 'g2', message: { role: 'user', content: 'short' } },
      { type: 'user', uuid: 'g2', message: { role: 'user', get content() { call(); return 'short'; } } }],
    [{ type: 'user', uuid: 'g3', message: { role: 'user', content: [{ type: 'text', text: long }] } },
      { type: 'user', uuid: 'g3', message: { role: 'user', content: [{ type: 'text', get text() { call(); return long; } }] } }],
    [{ type: 'user', toJSON() { return { type: 'user', uuid: 'g4', message: { role: 'user', content: 'from toJSON' } }; } },
      { type: 'user', toJSON() { call(); return { type: 'user', uuid: 'g4', message: { role: 'user', content: 'from toJSON' } }; } }],
    [{ type: 'user', uuid: 'g6', message: { role: 'user', content: long } },
      { type: 'user', get uuid() { call(); return 'g6'; }, message: { role: 'user', content: long } }],
    [{ type: 'progress', uuid: 'g5', isSidechain: false },
      { type: 'progress', get uuid() { call(); return 'g5'; }, isSidechain: false }],
  ];
  const known = new Set([...base.flatMap((m) => [m.uuid, m.timestamp]), 'g1', 'g2', 'g3', 'g4', 'g5', 'g6']);
  for (const call of nestedCalls) {
    for (const [plain, calling] of variants(call)) {
      // Several batches' worth of text before it, so that the shared buffer holds the
      // earlier messages when the nested call runs.
      const at = (m) => [...base.slice(0, 10), m, ...base.slice(10)];
      const want = await everyReader(at(plain), known);
      assert.deepStrictEqual(await everyReader(at(calling), known), want, JSON.stringify(plain));
      assert.ok(!Array.isArray(want.compact), JSON.stringify(want.compact));
    }
  }
});
