// Fifteenth round, runtimes and packaging (the probe's findings).
//
// initSync() of the browser entries (web.js, service-worker.js, count.js) threw the engine's own
// error, uncoded, for bytes it could not use: a CompileError for bytes that are not WebAssembly
// (or in a page whose Content-Security-Policy has no 'wasm-unsafe-eval'), a TypeError for
// another module's bytes (the counting module's given to web.js) or for something that is not
// bytes. init() reported the same inputs as a coded NOT_INITIALIZED with the cause; initSync()
// does now too, and a later initSync() with the right bytes still works.
// (tests/browser/csp.test.mjs checks initSync() under a real policy in Chromium.)
//
// Where a bundle has no import.meta.url (workerd gives none; esbuild's cjs and iife formats
// leave `import.meta` empty), a lazily imported part that failed (the inline entry's second
// module, compiled on first use: in a Worker that is during a request, where workerd refuses
// to compile WebAssembly from bytes) was reported as `Invalid URL`: defaults.js' importAgain
// parsed the importer's URL before deciding whether to retry, and that TypeError replaced the
// import's own error. It reports the import's error now.
//
// In such a bundle the count entry's per-turn checks threw: past the warning line
// calculateTokenWarningState() and shouldAutoCompact() start loading the first module ahead,
// and its default URL (`new URL('./context_compaction_bg.wasm', import.meta.url)`) threw an
// uncoded TypeError `Invalid URL` out of them, every turn from then on. The load ahead fails
// quietly now, and loadCompaction() says why (or loads from what it is given).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

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

test('importAgain: a failed import is reported as itself where the importer has no URL', async () => {
  const { importAgain } = await import(new URL('defaults.js', PKG).href);
  const refused = new WebAssembly.CompileError('WebAssembly.Module(): Wasm code generation disallowed by embedder');
  for (const base of [undefined, '', 'worker.js']) {
    for (const n of [0, 1]) {
      await assert.rejects(importAgain(n, () => Promise.reject(refused), base, 'inline.js', 'inline-extra.js'), (e) => e === refused, `base ${base}, attempt ${n}`);
    }
  }
  assert.equal(await importAgain(0, async () => 'loaded', undefined, 'inline.js', 'inline-extra.js'), 'loaded');
});

test('the inline entry bundled without import.meta.url: a second module refused at first use names the refusal', async () => {
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'cc-round15-'));
  try {
    const app = join(dir, 'app.mjs');
    const out = join(dir, 'app.cjs');
    // As workerd: WebAssembly compiles while the program starts, not later (a Worker's request).
    const { writeFileSync } = await import('node:fs');
    writeFileSync(app, `
      import * as cc from ${JSON.stringify(fileURLToPath(new URL('inline.js', PKG)))};
      const Module = WebAssembly.Module;
      WebAssembly.Module = function () { throw new WebAssembly.CompileError('WebAssembly.Module(): Wasm code generation disallowed by embedder'); };
      const messages = [{ role: 'user', content: 'hello' }];
      const count = cc.tokenCountWithEstimation(messages);
      cc.previewCompaction(messages, { model: 'claude-sonnet-4-5' }).then(
        () => console.log(JSON.stringify({ count, preview: 'resolved' })),
        (e) => console.log(JSON.stringify({ count, code: e.code, message: e.message, cause: e.cause?.constructor?.name })),
      );
    `);
    await build({ entryPoints: [app], bundle: true, format: 'cjs', platform: 'node', outfile: out, logLevel: 'silent' });
    const r = JSON.parse(execFileSync(process.execPath, [out], { encoding: 'utf8' }).trim());
    assert.ok(r.count > 0, JSON.stringify(r));
    assert.equal(r.code, 'NOT_INITIALIZED', JSON.stringify(r));
    assert.match(r.message, /could not be loaded: WebAssembly\.Module\(\): Wasm code generation disallowed by embedder$/, r.message);
    assert.equal(r.cause, 'CompileError');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the count entry bundled without import.meta.url: the per-turn checks past the warning line do not throw', async () => {
  const { build } = await import('esbuild');
  const dir = mkdtempSync(join(tmpdir(), 'cc-round15-'));
  try {
    const { writeFileSync } = await import('node:fs');
    const app = join(dir, 'app.mjs');
    const out = join(dir, 'app.cjs');
    writeFileSync(app, `
      import init, * as cnt from ${JSON.stringify(fileURLToPath(new URL('count.js', PKG)))};
      import { readFileSync } from 'node:fs';
      const wasm = (f) => readFileSync(${JSON.stringify(fileURLToPath(PKG))} + f);
      const tryIt = (f) => { try { return f(); } catch (e) { return e.constructor.name + ' ' + e.code + ' ' + e.message; } };
      (async () => {
        await init({ module_or_path: wasm('context_compaction_count_bg.wasm') });
        const big = [{ role: 'user', content: 'word '.repeat(800000) }];
        const r = {
          below: tryIt(() => cnt.calculateTokenWarningState(1000, 'claude-sonnet-4-5').isAboveWarningThreshold),
          above: tryIt(() => cnt.calculateTokenWarningState(190000, 'claude-sonnet-4-5').isAboveWarningThreshold),
          should: tryIt(() => cnt.shouldAutoCompact(big, 'claude-sonnet-4-5')),
          again: tryIt(() => cnt.shouldAutoCompact(big, 'claude-sonnet-4-5')),
        };
        r.load = await cnt.loadCompaction().then(() => 'loaded', (e) => e.code);
        const main = await cnt.loadCompaction({ module_or_path: wasm('context_compaction_bg.wasm') });
        r.main = main.tokenCountWithEstimation(big) === cnt.tokenCountWithEstimation(big);
        console.log(JSON.stringify(r));
      })();
    `);
    // platform browser: the count entry's browser form (count.js), as a page's bundle holds it.
    await build({ entryPoints: [app], bundle: true, format: 'cjs', platform: 'browser', external: ['node:fs'], outfile: out, logLevel: 'silent' });
    const r = JSON.parse(execFileSync(process.execPath, [out], { encoding: 'utf8' }).trim());
    assert.deepEqual(r, { below: false, above: true, should: true, again: true, load: 'NOT_INITIALIZED', main: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
