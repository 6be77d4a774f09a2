// Thirteenth round of hostile inputs (the probe's findings): a `Compactor` dropped without
// `free()` whose callbacks refer back to it (a class holding both, `summarize: (r) =>
// this.summarize(r)`) is reclaimed by its finalizer, where WASM held its options strongly (a GC
// root) and so kept it, its messages and its table slots alive for good. `serializeTranscript`
// and `Compactor.toTranscript` of messages whose JSONL is longer than the engine's longest
// string refuse with SERIALIZATION_FAILED, where an uncoded RangeError came through.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));

// Runs `code` (an ES module) in a fresh Node with `flags`; its stdout.
function run(code, flags = []) {
  return execFileSync(process.execPath, [...flags, '--input-type=module', '-e', code], { encoding: 'utf8', timeout: 240_000 }).trim();
}

test('a dropped Compactor whose summarizer refers back to it is reclaimed', () => {
  const out = run(
    `
    const L = await import(${JSON.stringify(PKG + 'node.js')});
    const w = (await import(${JSON.stringify(PKG + 'context_compaction.js')})).initSync();
    const summ = async () => ({ content: [{ type: 'text', text: '<summary>s</summary>' }] });
    const msgs = [];
    for (let i = 0; i < 20; i++) msgs.push({ role: 'user', content: 'q' + i + ' ' + 'x'.repeat(3000) }, { role: 'assistant', content: 'a' + i });
    class Session {
      constructor() { this.compactor = new L.Compactor({ model: 'claude-sonnet-4-5', messages: msgs, summarize: (r, o) => this.summarize(r, o), hooks: { postCompact: () => this.compactor.length } }); }
      summarize(r, o) { return summ(r, o); }
    }
    const settle = async () => { for (let k = 0; k < 6; k++) { gc(); await new Promise((r) => setTimeout(r, 30)); } };
    const round = () => { for (let i = 0; i < 1000; i++) new Session().compactor.push({ role: 'user', content: 'hi' }); };
    round(); await settle(); round(); await settle();
    const before = w.memory.buffer.byteLength;
    for (let r = 0; r < 6; r++) { round(); await settle(); }
    console.log(w.memory.buffer.byteLength - before);`,
    ['--expose-gc'],
  );
  // Before: +9.6 MB (each of the 6,000 kept its ~1.6 KB of messages and its table slots). Two
  // rounds warm the allocator up; after them at most one page of its slack (a layout change
  // can move where the free lists settle), never a page per round.
  assert.ok(Number(out) <= 65_536, `wasm memory grew by ${out} bytes`);
});

test('a Compactor keeps its options while alive, also one restored, and a compaction in flight ends when it is dropped', () => {
  // The options objects are referenced by nothing but the Compactors: each call after a full
  // collection (in a later turn, so that no WeakRef is kept for the current job) still has them.
  const out = run(
    `
    const L = await import(${JSON.stringify(PKG + 'node.js')});
    const collect = async () => { for (let k = 0; k < 3; k++) { await new Promise((r) => setTimeout(r, 10)); gc(); } };
    const summarize = async () => { await new Promise((r) => setTimeout(r, 20)); return { content: [{ type: 'text', text: '<summary>short</summary>' }] }; };
    const msgs = [];
    for (let i = 0; i < 10; i++) msgs.push({ role: 'user', content: 'q' + i + ' ' + 'x'.repeat(2000) }, { role: 'assistant', content: 'a' + i });
    const c = new L.Compactor({ model: 'claude-sonnet-4-5', summarize, messages: msgs, hooks: { postCompact: () => ({ userDisplayMessage: 'hook ran' }) } });
    await collect();
    const r = await c.compact();
    const back = L.Compactor.restore(c.snapshot(), c.messages, { model: 'claude-sonnet-4-5', summarize });
    c.free();
    await collect();
    back.push({ role: 'user', content: 'more ' + 'y'.repeat(3000) });
    back.push({ role: 'assistant', content: 'ok' });
    back.push({ role: 'user', content: 'more ' + 'z'.repeat(3000) });
    const again = await back.compact();
    back.free();
    const p = new L.Compactor({ model: 'claude-sonnet-4-5', summarize, messages: msgs }).compact();
    await collect();
    const dropped = await p;
    console.log(JSON.stringify([r.summaryMessages.length, r.userDisplayMessage, again.summaryMessages.length, dropped.summaryMessages.length]));`,
    ['--expose-gc'],
  );
  assert.deepEqual(JSON.parse(out), [1, 'hook ran', 1, 1]);
});

test('serializeTranscript and toTranscript longer than the longest string: SERIALIZATION_FAILED', () => {
  const out = run(
    `
    const L = await import(${JSON.stringify(PKG + 'node.js')});
    const big = 'a'.repeat(200 * 2 ** 20);
    const msgs = [];
    for (let i = 0; i < 3; i++) msgs.push({ role: 'user', content: big }, { role: 'assistant', content: 'ok' });
    const c = new L.Compactor({ model: 'claude-sonnet-4-5', messages: msgs });
    const what = (f) => { try { f(); return 'no error'; } catch (e) { return (e.code ?? 'uncoded ' + e.constructor.name) + ': ' + e.message.slice(0, 160); } };
    console.log(JSON.stringify([what(() => L.serializeTranscript(msgs)), what(() => c.toTranscript()), L.serializeTranscript(msgs.slice(0, 2)).length]));`,
    ['--max-old-space-size=4096'],
  );
  const [plain, compactor, after] = JSON.parse(out);
  // Before: "uncoded RangeError: Invalid string length" for both.
  assert.match(plain, /^SERIALIZATION_FAILED: messages: the transcript is longer than the longest string this engine can hold/);
  assert.match(compactor, /^SERIALIZATION_FAILED: /);
  assert.ok(after > 200 * 2 ** 20);
});
