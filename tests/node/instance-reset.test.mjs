// A WebAssembly trap must not kill the package for the rest of the process (issue 13): the
// glue (scripts/package.mjs) catches it at the boundary, answers INSTANCE_RESET, rejects what
// was pending in the dead instance, and runs the next call on a fresh instance.
//
// No input is known to trap any more (the fuzzers look for one), so the test makes traps: a
// copy of the built package whose .wasm is rewritten with binaryen so that
// - `getMaxOutputTokensForModel(SONNET, null)` executes `unreachable` (any other argument runs the real
//   function): a trap in a synchronous export, reachable at will;
// - the callback that resumes a compaction after a promise it awaits executes `unreachable`
//   when that promise resolved to `null`: a trap inside the async work, between two turns of
//   the event loop, where no export call is on the stack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { trapWhenNull } from './helpers/trap.mjs';
import * as original from '../../pkg/node.js';
import { SONNET, summaryResponse } from './helpers/support.mjs';

const PKG = new URL('../../pkg/', import.meta.url);

/** A copy of the built package with a rewritten .wasm, imported as a fresh module graph. */
async function trappingPackage(t, pick) {
  const dir = mkdtempSync(join(tmpdir(), 'cc-trap-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(PKG, dir, { recursive: true });
  const file = join(dir, 'context_compaction_bg.wasm');
  writeFileSync(file, trapWhenNull(readFileSync(file), pick));
  return import(pathToFileURL(join(dir, 'node.js')).href);
}

const msgs = () => [
  { role: 'user', content: 'Please read the file.' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'y'.repeat(4_000) }] },
  { role: 'assistant', content: 'Done.' },
];
const summarize = async () => summaryResponse('The user asked for a file; it was read.');
const isReset = (e) => e && e.code === 'INSTANCE_RESET' && e.name === 'ContextCompactionError';

/** Collects what escapes as an uncaught exception or rejection while `t` runs. */
function watchUncaught(t) {
  const seen = [];
  const on = (e) => seen.push(e);
  process.on('uncaughtException', on);
  process.on('unhandledRejection', on);
  t.after(() => {
    process.off('uncaughtException', on);
    process.off('unhandledRejection', on);
  });
  return seen;
}

test('a trap in a synchronous export: INSTANCE_RESET with the RuntimeError as cause, then every call works on a fresh instance; objects of the dead instance say so', async (t) => {
  const uncaught = watchUncaught(t);
  const cc = await trappingPackage(t, (exports) => exports.filter((e) => e.name === 'getMaxOutputTokensForModel'));
  const max = cc.getMaxOutputTokensForModel(SONNET);
  assert.equal(max, original.getMaxOutputTokensForModel(SONNET), 'the rewritten export runs the real function');
  cc.setEnvironmentDefaults({ DISABLE_AUTO_COMPACT: '1' });
  assert.equal(cc.isAutoCompactEnabled(), false);
  const before = new cc.Compactor({ model: SONNET, summarize, messages: msgs() });
  const offline = cc.offlineSummarizer();
  const count = cc.tokenCountWithEstimation(msgs());

  assert.throws(() => cc.getMaxOutputTokensForModel(SONNET, null), (e) => isReset(e) && e.cause instanceof WebAssembly.RuntimeError && /trapped \(unreachable/.test(e.message));
  // The first call after the trap is on an object of the dead instance (it revives the
  // instance, and must still refuse the object).
  assert.throws(() => before.push({ role: 'user', content: 'first' }), isReset);

  // The next calls run on a fresh instance, with the environment defaults given before.
  assert.equal(cc.tokenCountWithEstimation(msgs()), count);
  assert.equal(cc.isAutoCompactEnabled(), false, 'setEnvironmentDefaults is applied to the fresh instance');
  const r = await cc.compactConversation(msgs(), { model: SONNET, summarize });
  assert.equal(r.summaryMessages.length, 1);
  // Objects of the dead instance fail with a coded error, never a RuntimeError; free() is a no-op.
  assert.throws(() => before.push({ role: 'user', content: 'more' }), (e) => isReset(e) && /this Compactor belongs to a WebAssembly instance that trapped/.test(e.message));
  assert.throws(() => before.tokenCount(), isReset);
  assert.throws(() => before.length, isReset);
  // offlineSummarizer lives in the second module, which did not trap: its function still works.
  assert.equal(typeof (await offline({ model: SONNET, max_tokens: 1000, messages: [{ role: 'user', content: 'Summarize: the user read /a.' }] }, {})), 'object');
  before.free();
  before.free();
  // New objects work.
  const after = new cc.Compactor({ model: SONNET, summarize, messages: msgs() });
  assert.equal(after.length, 4);
  await after.compact();
  assert.equal(after.messages.at(-1).role, 'user', JSON.stringify(after.messages.at(-1)));
  after.free();
  const summary = await cc.offlineSummarizer()({ model: SONNET, max_tokens: 1000, messages: [{ role: 'user', content: 'Summarize: the user read /a.' }] }, {});
  assert.equal(summary.type, 'message');
  // Trapping again and again: each trap is reported, each next call recovers.
  for (let i = 0; i < 5; i++) {
    assert.throws(() => cc.getMaxOutputTokensForModel(SONNET, null), isReset);
    assert.equal(cc.getMaxOutputTokensForModel(SONNET), max);
  }
  assert.deepEqual(uncaught, []);
});

test('the Compactor constructor and its statics revive the instance after a trap, and a trap in the constructor is INSTANCE_RESET', async (t) => {
  const uncaught = watchUncaught(t);
  const cc = await trappingPackage(t, (exports) => exports.filter((e) => e.name === 'getMaxOutputTokensForModel' || e.name === 'compactor_new'));
  const kept = new cc.Compactor({ model: SONNET, summarize, messages: msgs() });
  const snapshot = kept.snapshot();
  // `new Compactor()` right after a trap: on a fresh instance, again and again.
  assert.throws(() => cc.getMaxOutputTokensForModel(SONNET, null), isReset);
  for (let i = 0; i < 3; i++) {
    const c = new cc.Compactor({ model: SONNET, summarize, messages: msgs() });
    assert.equal(c.length, 4);
    assert.ok(c.tokenCount() > 0);
  }
  assert.throws(() => kept.tokenCount(), isReset);
  // A static right after a trap.
  assert.throws(() => cc.getMaxOutputTokensForModel(SONNET, null), isReset);
  const restored = cc.Compactor.restore(snapshot, msgs(), { model: SONNET, summarize });
  assert.equal(restored.length, 4);
  // A trap inside the constructor: coded, with the RuntimeError as cause; the next one works.
  assert.throws(() => new cc.Compactor(null), (e) => isReset(e) && e.cause instanceof WebAssembly.RuntimeError);
  assert.throws(() => restored.tokenCount(), isReset);
  const after = new cc.Compactor({ model: SONNET, summarize, messages: msgs() });
  assert.equal(after.length, 4);
  await after.compact();
  assert.equal(after.messages.at(-1).role, 'user');
  assert.deepEqual(uncaught, []);
});

test('a trap while compactions are pending rejects them with INSTANCE_RESET; their late callbacks end quietly', async (t) => {
  const uncaught = watchUncaught(t);
  const cc = await trappingPackage(t, (exports) => exports.filter((e) => e.name === 'getMaxOutputTokensForModel'));
  let answer;
  const waiting = new Promise((resolve) => { answer = resolve; });
  const slow = () => waiting;
  const c = new cc.Compactor({ model: SONNET, summarize: slow, summaryTimeoutMs: 30_000, messages: msgs() });
  const pending = [
    cc.compactConversation(msgs(), { model: SONNET, summarize: slow, summaryTimeoutMs: 30_000 }),
    cc.autoCompactIfNeeded(msgs(), { model: SONNET, summarize: slow, summaryTimeoutMs: 30_000, config: { contextWindow: 33_500 } }), // threshold 500
    c.compact(),
  ];
  await new Promise((r) => setTimeout(r, 20)); // every one is waiting for its summary
  assert.throws(() => cc.getMaxOutputTokensForModel(SONNET, null), isReset);
  const settled = await Promise.allSettled(pending);
  for (const [i, s] of settled.entries()) {
    assert.equal(s.status, 'rejected', `pending[${i}] settled`);
    assert.ok(isReset(s.reason) && s.reason.cause instanceof WebAssembly.RuntimeError, `pending[${i}]: ${s.reason?.code} ${s.reason?.message}`);
  }
  // The summaries arrive after the reset: the dead instance's callbacks do nothing.
  answer(summaryResponse('late'));
  await new Promise((r) => setTimeout(r, 20));
  const r = await cc.compactConversation(msgs(), { model: SONNET, summarize });
  assert.match(r.summary, /The user asked for a file/);
  assert.deepEqual(uncaught, []);
});

test('a trap inside the async work (no export on the stack) rejects the compaction with INSTANCE_RESET instead of leaving it pending', async (t) => {
  const uncaught = watchUncaught(t);
  // The callbacks that resume the Rust futures take the settled value as their last argument.
  const cc = await trappingPackage(t, (exports) => exports.filter((e) => /closures.*invoke/.test(e.name) && e.params.length === 3));
  // A summarizer resolving to null resumes the compaction with null: the trap.
  const nullAnswer = async () => null;
  await assert.rejects(cc.compactConversation(msgs(), { model: SONNET, summarize: nullAnswer }), (e) => isReset(e) && e.cause instanceof WebAssembly.RuntimeError);
  // Every export works afterwards.
  assert.equal(cc.validateForApi(msgs()).valid, true);
  const r = await cc.compactConversation(msgs(), { model: SONNET, summarize });
  assert.equal(r.summaryMessages.length, 1);
  assert.deepEqual(uncaught, []);
});
