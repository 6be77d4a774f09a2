// Thirteenth round, runtimes and packaging (the probe's findings). Where compiling WebAssembly
// is refused (a page whose Content-Security-Policy has no 'wasm-unsafe-eval'; here simulated by
// a WebAssembly.Module that throws the CompileError a browser throws then), the inline entry's
// import threw that uncoded CompileError at module evaluation, which breaks every module of a
// bundle that holds it. Now the import succeeds; init(), initSync() and every call report a
// coded NOT_INITIALIZED naming the cause (tests/browser/csp.test.mjs checks the same under a
// real policy in Chromium).
//
// `context-compaction/agents/langchain` imported `@langchain/langgraph`, which the package does
// not declare (neither a dependency nor a peer: it comes as `langchain`'s own dependency). A
// strict layout (pnpm, Yarn PnP) lets a package import only what it declares, so in a project
// that installed `langchain` and `@langchain/core` the middleware failed to load
// (ERR_MODULE_NOT_FOUND). It imports only its declared peers now.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
     try { m.tokenCountWithEstimation([{ role: 'user', content: 'hi' }]); r.count = 'ok'; } catch (e) { r.count = e.code; r.countSays = /Content Security/.test(e.message) && e.cause instanceof WebAssembly.CompileError; }
     r.preview = await m.previewCompaction([{ role: 'user', content: 'hi' }], { model: 'claude-sonnet-4-5' }).then(() => 'ok', (e) => e.code);
     console.log(JSON.stringify(r));`,
  );
  assert.deepEqual(JSON.parse(out), {
    import: 'ok',
    init: 'NOT_INITIALIZED',
    says: true,
    initSync: 'NOT_INITIALIZED',
    count: 'NOT_INITIALIZED',
    // Before (review13): "await init() before calling it", no cause, though init() ran.
    countSays: true,
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

test('agents/langchain loads in a strict (pnpm-style) layout: it imports only what the package declares', (t) => {
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const meta = JSON.parse(readFileSync(join(root, 'pkg', 'package.json'), 'utf8'));
  const declared = new Set([...Object.keys(meta.dependencies ?? {}), ...Object.keys(meta.peerDependencies ?? {})]);
  const work = mkdtempSync(join(tmpdir(), 'cc-strict-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  // pnpm's layout: the package's real directory holds, beside it, only its declared peers; the
  // project's node_modules only its direct dependencies. (A symlink to pkg/ would resolve
  // through the repository's own node_modules, which hold everything.)
  const store = join(work, '.pnpm', 'node_modules');
  mkdirSync(join(store, '@langchain'), { recursive: true });
  cpSync(join(root, 'pkg'), join(store, 'context-compaction'), { recursive: true });
  const real = (name) => realpathSync(join(root, 'node_modules', name));
  for (const name of ['langchain', '@langchain/core']) {
    assert.ok(declared.has(name), name);
    symlinkSync(real(name), join(store, name));
  }
  mkdirSync(join(work, 'node_modules', '@langchain'), { recursive: true });
  symlinkSync(join(store, 'context-compaction'), join(work, 'node_modules', 'context-compaction'));
  for (const name of ['langchain', '@langchain/core']) symlinkSync(real(name), join(work, 'node_modules', name));
  writeFileSync(join(work, 'package.json'), '{ "type": "module" }');
  const out = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `try {
         const { compactionMiddleware } = await import('context-compaction/agents/langchain');
         console.log(typeof compactionMiddleware({ model: 'openai:gpt-4.1', summarize: async () => 'S' }));
       } catch (e) { console.log(e.code + ' ' + e.message.split('\\n')[0]); }`,
    ],
    { cwd: work, encoding: 'utf8' },
  ).trim();
  assert.equal(out, 'object');
});
