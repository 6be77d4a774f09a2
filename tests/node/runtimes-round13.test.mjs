// Thirteenth round, runtimes and packaging (the probe's findings). Where compiling WebAssembly
// is refused (a page whose Content-Security-Policy has no 'wasm-unsafe-eval'; here simulated by
// a WebAssembly.Module that throws the CompileError a browser throws then), the inline entry's
// import threw that uncoded CompileError at module evaluation, which breaks every module of a
// bundle that holds it. Now the import succeeds; init(), initSync() and every call report a
// coded NOT_INITIALIZED naming the cause (tests/browser/csp.test.mjs checks the same under a
// real policy in Chromium).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const INLINE = fileURLToPath(new URL('../../pkg/inline.js', import.meta.url));

/** A child Node running the ES module `code`; its stdout, trimmed. */
function child(code) {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', () => resolve(out.trim()));
  });
}

/** Makes every compilation of WebAssembly fail as a browser's CSP makes it fail. */
const REFUSE_WASM = `
  const refuse = () => { throw new WebAssembly.CompileError("WebAssembly.Module(): Compiling or instantiating WebAssembly module violates the following Content Security policy directive because 'unsafe-eval' is not an allowed source of script"); };
  WebAssembly.Module = function Module() { refuse(); };
  WebAssembly.compile = async () => refuse();
  WebAssembly.instantiate = async () => refuse();
`;

test('inline entry where WebAssembly compilation is refused (CSP): the import succeeds, init() / initSync() / calls are NOT_INITIALIZED with the cause', async () => {
  const out = await child(
    `${REFUSE_WASM}
     let m;
     try { m = await import(${JSON.stringify(INLINE)}); } catch (e) { console.log(JSON.stringify({ import: e.code ?? e.name })); process.exit(0); }
     const r = { import: 'ok' };
     try { await m.default(); r.init = 'ok'; } catch (e) { r.init = e.code; r.says = /Content Security/.test(e.message) && e.cause instanceof WebAssembly.CompileError && e instanceof m.ContextCompactionError; }
     try { m.initSync(); r.initSync = 'ok'; } catch (e) { r.initSync = e.code; }
     try { m.tokenCountWithEstimation([{ role: 'user', content: 'hi' }]); r.count = 'ok'; } catch (e) { r.count = e.code; }
     r.preview = await m.previewCompaction([{ role: 'user', content: 'hi' }], { model: 'claude-sonnet-4-5' }).then(() => 'ok', (e) => e.code);
     console.log(JSON.stringify(r));`,
  );
  assert.deepEqual(JSON.parse(out), {
    import: 'ok',
    init: 'NOT_INITIALIZED',
    says: true,
    initSync: 'NOT_INITIALIZED',
    count: 'NOT_INITIALIZED',
    preview: 'NOT_INITIALIZED',
  });
});

test('inline entry where WebAssembly compiles: init() and initSync() stay no-ops', async () => {
  const out = await child(
    `const m = await import(${JSON.stringify(INLINE)});
     await m.default(); m.initSync();
     console.log(m.tokenCountWithEstimation([{ role: 'user', content: 'hello there' }]) > 0);`,
  );
  assert.equal(out, 'true');
});
