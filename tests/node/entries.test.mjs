// The package's entries for each runtime and bundler (scripts/package.mjs, docs/runtimes.md),
// checked fast in Node: the exports map chooses them as documented, each file it names is
// published, and the entries Node can load (node.js, node.cjs, inline.js) export the same names
// and give the same answers. The full matrix (every runtime, bundler and browser) is
// tests/runtimes/run.mjs, stage `runtimes`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));
const meta = JSON.parse(readFileSync(PKG + 'package.json', 'utf8'));
const require = createRequire(import.meta.url);

/** Every file path an exports value names, through nested conditions. */
function targets(value) {
  if (typeof value === 'string') return [value];
  return Object.values(value).flatMap(targets);
}

/** A small conversation with a tool call and its result, in the Anthropic shape. */
const messages = [
  { role: 'user', content: 'Read the file.' },
  {
    role: 'assistant',
    content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: '/a.rs' } }],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'fn a() {}\n'.repeat(300) }] },
  { role: 'assistant', content: 'Done.' },
];

test('the exports map: Bun, workerd, then Node (module-sync, require, default), then the browser entry; ./inline', () => {
  const root = meta.exports['.'];
  assert.deepEqual(Object.keys(root), ['bun', 'workerd', 'node', 'types', 'default']);
  // Bun's import and require both get the ES entry: one instance.
  assert.deepEqual(root.bun, { types: './index.d.ts', default: './node.js' });
  assert.deepEqual(root.workerd, { types: './index.d.ts', default: './workerd.js' });
  assert.deepEqual(Object.keys(root.node), ['module-sync', 'require', 'types', 'default']);
  assert.equal(root.node['module-sync'].default, './node.js');
  assert.deepEqual(root.node.require, { types: './index.d.cts', default: './node.cjs' });
  assert.equal(root.node.default, './node.js');
  assert.equal(root.default, './web.js');
  assert.deepEqual(meta.exports['./inline'], { types: './index.d.ts', default: './inline.js' });
});

test('every file the exports map names exists and is published (files)', () => {
  const published = new Set(meta.files);
  for (const [subpath, value] of Object.entries(meta.exports)) {
    for (const target of targets(value)) {
      const file = target.replace(/^\.\//, '');
      assert.ok(existsSync(PKG + file), `${subpath} → ${target} is missing from pkg/`);
      // A file is published when it, or a directory holding it, is in "files".
      const listed = file.split('/').some((_, k, parts) => published.has(parts.slice(0, k + 1).join('/')));
      assert.ok(listed || file === 'package.json', `${subpath} → ${target} is not in "files"`);
    }
  }
  for (const file of ['inline.js', 'workerd.js', 'node.cjs', 'index.d.cts', 'anthropic.d.cts']) {
    assert.ok(published.has(file), `${file} is not in "files"`);
    assert.ok(meta.sideEffects.includes(`./${file}`) || file.endsWith('.d.cts'), `${file} is not in "sideEffects"`);
  }
});

test('node.js, node.cjs and inline.js export the same names and count the same', async () => {
  const esm = await import(PKG + 'node.js');
  const cjs = require(PKG + 'node.cjs');
  const inline = await import(PKG + 'inline.js');
  const names = (m) => Object.keys(m).filter((n) => n !== '__esModule' && n !== 'module.exports').sort();
  assert.deepEqual(names(cjs), names(esm));
  assert.deepEqual(names(inline), names(esm));
  const count = esm.tokenCountWithEstimation(messages);
  assert.ok(count > 500, `count ${count}`);
  assert.equal(cjs.tokenCountWithEstimation(messages), count);
  assert.equal(inline.tokenCountWithEstimation(messages), count);
  for (const lib of [esm, cjs, inline]) {
    const { tokensFreed, clearedToolUseIds } = lib.microCompact(messages, { keepRecent: 0 });
    assert.deepEqual(clearedToolUseIds, ['toolu_1']);
    assert.ok(tokensFreed > 500);
    await lib.default(); // init() is a no-op everywhere it already ran
  }
});

test('errors from each entry are coded Errors of that entry\'s ContextCompactionError class', async () => {
  const esm = await import(PKG + 'node.js');
  const cjs = require(PKG + 'node.cjs');
  const inline = await import(PKG + 'inline.js');
  for (const lib of [esm, cjs, inline]) {
    assert.throws(
      () => lib.tokenCountWithEstimation('not an array'),
      (e) => e instanceof lib.ContextCompactionError && e instanceof Error && typeof e.code === 'string',
    );
  }
});

test('workerd.js imports the .wasm as a module and instantiates it synchronously', () => {
  const source = readFileSync(PKG + 'workerd.js', 'utf8');
  assert.match(source, /^import wasmModule from '\.\/context_compaction_bg\.wasm';$/m);
  assert.match(source, /^__ccInitSync\(\{ module: wasmModule \}\);$/m);
  assert.doesNotMatch(source, /fetch|readFileSync|atob/);
});

test('the CommonJS declarations are the ES ones with imports of the plain-JS modules pointing at their .d.cts', () => {
  const twins = ['anthropic', 'openai', 'langchain', 'summary-request', 'http'];
  const toCjs = (text) => twins.reduce(
    (t, m) => t.replaceAll(`from './${m}.js'`, `from './${m}.cjs'`).replaceAll(`import('./${m}.js')`, `import('./${m}.cjs')`), text);
  for (const name of ['index', ...twins]) {
    const esm = readFileSync(PKG + `${name}.d.ts`, 'utf8');
    const cjs = readFileSync(PKG + `${name}.d.cts`, 'utf8');
    assert.equal(cjs, toCjs(esm), name);
    for (const m of twins) assert.ok(!cjs.includes(`from './${m}.js'`), `${name}.d.cts imports ./${m}.js`);
  }
});

test('every entry exports the same names as the browser entry, initSync included (a no-op where the module is ready at import)', async () => {
  const web = await import(PKG + 'web.js');
  const names = (m) => Object.keys(m).filter((n) => n !== '__esModule' && n !== 'module.exports').sort();
  const entries = { 'node.js': await import(PKG + 'node.js'), 'node.cjs': require(PKG + 'node.cjs'), 'inline.js': await import(PKG + 'inline.js') };
  for (const [file, lib] of Object.entries(entries)) {
    assert.deepEqual(names(lib), names(web), file);
    assert.equal(typeof lib.initSync, 'function', file);
    assert.equal(lib.initSync(), undefined, file);
    assert.ok(lib.tokenCountWithEstimation(messages) > 500, `${file} still works after initSync()`);
  }
  // workerd.js imports the .wasm as a module (Node cannot): its source declares initSync.
  assert.match(readFileSync(PKG + 'workerd.js', 'utf8'), /^export function initSync\(\) \{\}$/m);
});

test("count-node.cjs is marked __esModule, as node.cjs is: TypeScript's and Babel's default import of it is init", () => {
  for (const file of ['count-node.cjs', 'node.cjs']) {
    const mod = require(PKG + file);
    assert.equal(mod.__esModule, true, file);
    // What tsc's `__importDefault` (esModuleInterop) and Babel's interop do with it.
    const interop = mod && mod.__esModule ? mod : { default: mod };
    assert.equal(typeof interop.default, 'function', file);
    assert.equal(interop.default.name, 'init', file);
  }
});

test("/inline in Node reads the environment variables at import, as the main Node entry does", async () => {
  const { spawnSync } = await import('node:child_process');
  const code = (entry) =>
    `const m = await import(${JSON.stringify(PKG + entry)}); console.log(JSON.stringify([m.isAutoCompactEnabled(), m.getAutoCompactThreshold('claude-sonnet-4-5')]));`;
  const run = (entry, env) => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code(entry)], { encoding: 'utf8', env: { ...process.env, ...env } });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  const clean = { DISABLE_COMPACT: '', DISABLE_AUTO_COMPACT: '', CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '', CLAUDE_CODE_AUTO_COMPACT_WINDOW: '' };
  const base = run('inline.js', clean);
  assert.equal(base[0], true);
  for (const env of [{ DISABLE_AUTO_COMPACT: '1' }, { CLAUDE_CODE_AUTO_COMPACT_WINDOW: '100000' }, { CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '50' }]) {
    const inline = run('inline.js', { ...clean, ...env });
    assert.deepEqual(inline, run('node.js', { ...clean, ...env }), JSON.stringify(env));
    assert.notDeepEqual(inline, base, `${JSON.stringify(env)} changes nothing in /inline`);
  }
});

test('TypeScript with `module: commonjs` (node10 resolution, no exports map) finds the declarations of every subpath, /inline included', async () => {
  const ts = (await import('typescript')).default;
  const { mkdtempSync, mkdirSync, symlinkSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'cc-node10-'));
  try {
    mkdirSync(join(dir, 'node_modules'));
    symlinkSync(PKG, join(dir, 'node_modules', 'context-compaction'), 'dir');
    const file = join(dir, 'index.ts');
    writeFileSync(
      file,
      "import init, { tokenCountWithEstimation } from 'context-compaction/inline';\n" +
        "import { Compactor } from 'context-compaction';\n" +
        "const n: number = tokenCountWithEstimation([{ role: 'user', content: 'hi' }]);\n" +
        'const p: Promise<void> = init();\n' +
        "export { n, p, Compactor };\n",
    );
    const program = ts.createProgram([file], {
      module: ts.ModuleKind.CommonJS,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      target: ts.ScriptTarget.ES2022,
      strict: true,
      noEmit: true,
      esModuleInterop: true,
      skipLibCheck: true,
      types: [],
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    assert.deepEqual(problems, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// An init() whose download is still running when the same glue is set up another way (the
// `inline` entry, which shares it, or initSync()) keeps the instance that exists.
test('a late init() keeps the instance set up while it downloaded (inline entry, initSync, the count entry)', async () => {
  const { runFresh } = await import('./helpers/fresh-process.mjs');
  for (const [entry, wasmFile, meanwhile] of [
    ['web.js', 'context_compaction_bg.wasm', "await import(PKG + 'inline.js');"],
    ['web.js', 'context_compaction_bg.wasm', 'lib.initSync({ module: bytes });'],
    ['count.js', 'context_compaction_count_bg.wasm', 'lib.initSync({ module: bytes });'],
  ]) {
    const out = runFresh(
      `import { readFileSync } from 'node:fs';
       const PKG = ${JSON.stringify(PKG)};
       const lib = await import(PKG + ${JSON.stringify(entry)});
       const bytes = readFileSync(PKG + ${JSON.stringify(wasmFile)});`,
      `
      let release;
      const download = new Promise((ok) => { release = ok; });
      const late = lib.default({ module_or_path: download });
      ${meanwhile}
      lib.setEnvironmentDefaults({ DISABLE_AUTO_COMPACT: '1' });
      const msgs = Array.from({ length: 6 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: 'turn ' + i + ' ' + 'x '.repeat(50) }));
      const c = lib.Compactor ? new lib.Compactor({ model: 'claude-sonnet-4-5', messages: msgs }) : null;
      const before = c ? c.tokenCount() : lib.tokenCountWithEstimation(msgs);
      release(bytes);
      await late;
      let after, error;
      try {
        if (c) c.push({ role: 'user', content: 'one more '.repeat(40) });
        after = c ? c.tokenCount() : lib.tokenCountWithEstimation(msgs);
      } catch (e) { error = e.code + ' ' + e.message; }
      return { before, after, error, enabled: lib.isAutoCompactEnabled() };
    `,
    );
    const what = `${entry}, meanwhile ${meanwhile}`;
    assert.equal(out.error, undefined, what);
    assert.ok(out.after >= out.before && out.after > 0, `${what}: ${JSON.stringify(out)}`);
    assert.equal(out.enabled, false, `${what}: the defaults set before the late init() resolved are kept`);
  }
});
