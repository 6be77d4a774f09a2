// Fifteenth round, runtimes and packaging (the probe's findings).
//
// initSync() of the browser entries (web.js, service-worker.js, count.js) threw the engine's own
// error, uncoded, for bytes it could not use: a CompileError for bytes that are not WebAssembly
// (or in a page whose Content-Security-Policy has no 'wasm-unsafe-eval'), a TypeError for
// another module's bytes (the counting module's given to web.js) or for something that is not
// bytes. init() reported the same inputs as a coded NOT_INITIALIZED with the cause; initSync()
// does now too, and a later initSync() with the right bytes still works.
// (tests/browser/csp.test.mjs checks initSync() under a real policy in Chromium.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const PKG = new URL('../../pkg/', import.meta.url);
const bytes = (file) => readFileSync(new URL(file, PKG));

/** Asserts that `f` throws the entry's coded NOT_INITIALIZED, naming initSync(), with the engine's error as cause. */
function refusedCoded(m, f, cause, what) {
  assert.throws(f, (e) => {
    assert.ok(e instanceof m.ContextCompactionError, `${what}: ${e?.constructor?.name} ${e?.message}`);
    assert.equal(e.code, 'NOT_INITIALIZED', what);
    assert.match(e.message, /^initSync\(\) could not load the \.wasm: /, what);
    assert.ok(e.cause instanceof cause, `${what}: cause ${e.cause?.constructor?.name}`);
    return true;
  });
}

test('initSync() with bytes it cannot use is a coded NOT_INITIALIZED (web.js, service-worker.js, count.js); the right bytes then work', async () => {
  const web = await import(new URL('web.js', PKG).href);
  const sw = await import(new URL('service-worker.js', PKG).href);
  const count = await import(new URL('count.js', PKG).href);
  for (const [what, m, other] of [['web.js', web, 'context_compaction_count_bg.wasm'], ['service-worker.js', sw, 'context_compaction_count_bg.wasm'], ['count.js', count, 'context_compaction_bg.wasm']]) {
    refusedCoded(m, () => m.initSync({ module: new Uint8Array([0, 97, 115, 109, 9, 9]) }), WebAssembly.CompileError, `${what}, not WebAssembly`);
    refusedCoded(m, () => m.initSync({ module: bytes(other) }), Error, `${what}, another module's bytes`);
    refusedCoded(m, () => m.initSync({ module: 'context_compaction_bg.wasm' }), TypeError, `${what}, not bytes`);
    assert.throws(() => m.tokenCountWithEstimation([{ role: 'user', content: 'hello' }]), (e) => e.code === 'NOT_INITIALIZED', what);
  }
  // web.js and service-worker.js share the first module's glue: one initSync serves both.
  web.initSync({ module: bytes('context_compaction_bg.wasm') });
  count.initSync({ module: bytes('context_compaction_count_bg.wasm') });
  const messages = [{ role: 'user', content: 'hello there' }];
  assert.ok(web.tokenCountWithEstimation(messages) > 0);
  assert.equal(sw.tokenCountWithEstimation(messages), web.tokenCountWithEstimation(messages));
  assert.equal(count.tokenCountWithEstimation(messages), web.tokenCountWithEstimation(messages));
});
