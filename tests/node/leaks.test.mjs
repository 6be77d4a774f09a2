// A call that is refused must leave nothing behind. With wasm-bindgen's externref glue, an
// import declared `catch` that returns a value leaks one slot of the externref table (and its
// entry in the free-slot list in WebAssembly memory) each time it throws: parseTranscript on a
// line of invalid JSON (JSON.parse threw) grew the WASM memory and the JS heap by ~30 bytes
// per rejected call, for good. Measured here by what grows: the instance's externref table and
// its memory (the package's glue gives its instance's exports from initSync once initialised).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { initSync } from '../../pkg/context_compaction.js';
import { growth as growthOf } from './helpers/growth.mjs';

const wasm = initSync();
// Each call must throw a coded error; after a warm-up of 2,000.
const growth = (f, n) => growthOf(wasm, f, n, { warm: 2000, mustThrow: true });

const N = 200_000;
const line = '{"type":"user","message":{"role":"user","content":"x"}}';

test('parseTranscript refusing invalid JSON leaks no externref slot and no memory', () => {
  const g = growth(() => cc.parseTranscript(`${line}\n{"type": bad json\n`), N);
  // Before the fix: one slot per call (+200,000 slots, +2 MB of memory).
  assert.ok(g.slots <= 64, `externref table grew by ${g.slots} slots over ${N} calls`);
  assert.ok(g.bytes <= 128 * 1024, `WASM memory grew by ${g.bytes} bytes over ${N} calls`);
});

test('parseTranscript refusing a non-object or blank line leaks nothing either', () => {
  for (const text of [`${line}\n[1]\n`, `${line}\n\n${line}\n`]) {
    const g = growth(() => cc.parseTranscript(text), N / 4);
    assert.ok(g.slots <= 64 && g.bytes <= 128 * 1024, `${JSON.stringify(text)}: ${JSON.stringify(g)}`);
  }
});

test('serializeTranscript refusing a message JSON.stringify throws on leaks nothing', () => {
  const msgs = [{ role: 'user', content: 'x' }, { role: 'user', content: 'y', n: 1n }];
  const g = growth(() => cc.serializeTranscript(msgs), N / 4);
  assert.ok(g.slots <= 64, `externref table grew by ${g.slots} slots`);
  assert.ok(g.bytes <= 128 * 1024, `WASM memory grew by ${g.bytes} bytes`);
});

test('the refusals keep their messages', () => {
  assert.throws(() => cc.parseTranscript(`${line}\n{"type": bad json\n`), (e) => e.code === 'MALFORMED_TRANSCRIPT' && /^line 2: invalid JSON: \S/.test(e.message));
  assert.throws(() => cc.serializeTranscript([{ role: 'user', content: 'y', n: 1n }]), (e) => e.code === 'SERIALIZATION_FAILED' && /^messages\[0\]: .*BigInt/.test(e.message));
});
