// Tenth round of hostile inputs (the probe's H1–H4): a getter or Proxy trap that throws while
// an options or error object is read must not leak WebAssembly memory; a config whose getter
// throws is refused by the config functions as by the others; an Array subclass given as the
// messages gives plain arrays back; a Compactor method called unbound or on another object
// throws a coded error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { initSync } from '../../pkg/context_compaction.js';
import { growth as growthOf } from './helpers/growth.mjs';

const MODEL = 'claude-sonnet-4-5';
const wasm = initSync();

function rounds(n, C = Array) {
  const out = new C();
  for (let i = 0; i < n; i++) {
    out.push({ role: 'user', content: `question ${i} ${'x'.repeat(300)}` });
    out.push({ role: 'assistant', content: [{ type: 'text', text: 'calling' }, { type: 'tool_use', id: `t${i}`, name: 'Read', input: { file_path: `/f${i}` } }] });
    out.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: 'r'.repeat(300) }] });
    out.push({ role: 'assistant', content: `answer ${i}` });
  }
  return out;
}

// Each call a coded refusal or an answer, after a warm-up of 1,000.
const growth = (f, n) => growthOf(wasm, f, n);

test('a throwing getter or Proxy trap read from an options or error object leaks nothing', () => {
  const trap = new Proxy({}, { get() { throw new Error('trap'); } });
  const getter = { get keepRecent() { throw new Error('getter'); } };
  const msgs = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }];
  // Before: +917,504 bytes, +1,114,112 bytes and +2,162,688 bytes of WASM memory over 10,000 calls.
  for (const [name, f] of [
    ['parseContextOverflowError', () => cc.parseContextOverflowError(trap)],
    ['truncateHeadForPTLRetry', () => cc.truncateHeadForPTLRetry(msgs, trap)],
    ['microCompact', () => cc.microCompact(msgs, getter)],
  ]) {
    const g = growth(f, 10_000);
    assert.ok(g.slots <= 64 && g.bytes <= 128 * 1024, `${name}: ${JSON.stringify(g)}`);
  }
  // The refusal itself is unchanged: the key and what it threw.
  assert.throws(() => cc.microCompact(msgs, getter), (e) => e.code === 'INVALID_ARGUMENT' && /reading `keepRecent` threw: getter/.test(e.message) && e.cause?.message === 'getter');
  assert.equal(cc.parseContextOverflowError(trap), null);
});

test('the config functions refuse a config whose getter throws, as shouldAutoCompact does', () => {
  const cfg = (k) => Object.defineProperty({}, k, { get() { throw new Error('store not ready'); }, enumerable: true });
  // Before: 167000, 200000, 32000, 180000, a warning state and `true`: the defaults, silently.
  for (const [name, f] of [
    ['getAutoCompactThreshold', () => cc.getAutoCompactThreshold(MODEL, cfg('contextWindow'))],
    ['getContextWindowForModel', () => cc.getContextWindowForModel(MODEL, cfg('enable1mContext'))],
    ['getMaxOutputTokensForModel', () => cc.getMaxOutputTokensForModel(MODEL, cfg('maxOutputTokens'))],
    ['getEffectiveContextWindowSize', () => cc.getEffectiveContextWindowSize(MODEL, cfg('contextWindow'))],
    ['calculateTokenWarningState', () => cc.calculateTokenWarningState(1000, MODEL, cfg('contextWindow'))],
    ['isAutoCompactEnabled', () => cc.isAutoCompactEnabled(cfg('disableAutoCompact'))],
  ]) {
    assert.throws(f, (e) => e.code === 'INVALID_ARGUMENT' && /^config: reading `\w+` threw: store not ready/.test(e.message) && e.cause?.message === 'store not ready', name);
  }
  assert.equal(cc.getAutoCompactThreshold(MODEL, { contextWindow: 100_000 }), 67_000);
});

test('an Array subclass as the messages gives plain arrays of the messages back', async () => {
  // Array.prototype.slice builds its result with the array's Symbol.species: a subclass whose
  // constructor wants other arguments threw through the .wasm (uncoded), one whose species is
  // not an array came back as the result.
  class History extends Array {
    constructor(owner) {
      super();
      if (typeof owner !== 'object') throw new TypeError('History needs an owner');
    }
  }
  class Odd extends Array {
    static get [Symbol.species]() {
      return function () { return { notAnArray: true }; };
    }
  }
  const make = (C) => (C === History ? rounds(12, function () { return new History({}); }) : rounds(12, C));
  const plain = (x, n) => Array.isArray(x) && Object.getPrototypeOf(x) === Array.prototype && (n === undefined || x.length === n) && x.every((m) => m && typeof m === 'object');
  for (const C of [History, Odd]) {
    const msgs = make(C);
    const groups = cc.groupMessagesByApiRound(msgs);
    assert.ok(groups.length > 1 && groups.every((g) => plain(g)), `${C.name} groups`);
    assert.deepEqual(groups.flat(), [...msgs]);
    assert.ok(plain(cc.stripImagesFromMessages(msgs), 48), `${C.name} strip`);
    const micro = cc.microCompact(msgs, { keepRecent: 1 });
    assert.ok(plain(micro.messages, 48) && micro.clearedToolUseIds.length === 11, `${C.name} microCompact`);
    assert.ok(plain(cc.microCompact(msgs, { keepRecent: 100 }).messages, 48), `${C.name} microCompact, nothing cleared`);
    const r = await cc.compactConversation(msgs, { model: MODEL, summarize: async () => '<summary>s</summary>' });
    assert.ok(plain(cc.buildPostCompactMessages(r)), `${C.name} compactConversation`);
  }
});

test('a Compactor method called unbound or on another object throws INVALID_ARGUMENT', async () => {
  const chat = new cc.Compactor({ model: MODEL });
  const { push, tokenCount } = chat;
  const refused = (f, what) =>
    assert.throws(f, (e) => e instanceof cc.ContextCompactionError && e.code === 'INVALID_ARGUMENT' && e.message.includes(what));
  // Before: TypeErrors ("Cannot read properties of undefined (reading '__wbg_ptr')", "Invalid
  // value used as weak map key"), "null pointer passed to rust", and INSTANCE_RESET for an
  // object that was never a Compactor.
  refused(() => push({ role: 'user', content: 'x' }), 'Compactor.prototype.push was called on undefined');
  refused(() => tokenCount(), 'Compactor.prototype.tokenCount was called on undefined');
  refused(() => cc.Compactor.prototype.push.call({}, { role: 'user', content: 'x' }), 'not a Compactor');
  refused(() => Object.getOwnPropertyDescriptor(cc.Compactor.prototype, 'messages').get.call({}), 'Compactor.prototype.messages was called on');
  refused(() => Object.create(cc.Compactor.prototype).tokenCount(), 'not a Compactor');
  refused(() => cc.Compactor.prototype.free.call(null), 'Compactor.prototype.free was called on');
  // compact() rejects (it threw synchronously before).
  const p = cc.Compactor.prototype.compact.call({});
  assert.ok(p instanceof Promise);
  await assert.rejects(p, (e) => e.code === 'INVALID_ARGUMENT');
  chat.push({ role: 'user', content: 'still works' });
  assert.equal(chat.length, 1);
  chat.free();
  assert.throws(() => chat.tokenCount(), (e) => e.code === 'INVALID_ARGUMENT' && /was freed/.test(e.message));
});

test('the CLI refuses a --max-summary-tokens beyond safe integers as a usage error', async () => {
  const { spawnSync } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const cli = fileURLToPath(new URL('../../pkg/cli.mjs', import.meta.url));
  const session = fileURLToPath(new URL('../fixtures/short_session.jsonl', import.meta.url));
  for (const v of ['1e308', '99999999999999999999', '9007199254740993']) {
    // Before: exit 1, "unexpected failure: ContextCompactionError: options.maxTokens must be a
    // whole number of at least 1, got 1e+308" and a stack trace.
    const r = spawnSync(process.execPath, [cli, 'compact', session, '--offline', '--max-summary-tokens', v, '-o', '-'], { encoding: 'utf8' });
    assert.equal(r.status, 2, `${v}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`--max-summary-tokens must be a positive integer \\(got ${v}\\)`));
    assert.doesNotMatch(r.stderr, /unexpected failure|at codedError/);
  }
});
