// Turns wasm-pack's web output in pkg/ into one package for browsers and Node:
// - web.js: the browser/bundler entry (default export `init`, named exports, `constants`);
// - node.js: the Node entry, which instantiates the .wasm synchronously from disk and applies
//   the environment-variable defaults, so `import` works with no init call;
// - constants.js: the library's constants, read from the built module (Rust is the source);
// - ContextCompactionError: the error class, re-exported by both entries from the snippet
//   src/bindings/js_error.js that wasm-bindgen copied into snippets/.
// - package.json: an `exports` map choosing the entry by condition.
// - anthropic.js / anthropic.d.ts: the plain-JS Anthropic summarizer, copied from js/ and
//   re-exported by both entries.
// - openai.js, langchain.js (+ .d.ts): the OpenAI and LangChain summarizers, re-exported by both
//   entries; ai-sdk.js (+ .d.ts): the AI SDK summarizer, only at the subpath
//   `context-compaction/ai-sdk` (it may import the caller's `ai`, which a bundler must not be asked
//   to resolve for users without it); http.js and summary-request.js are what they share.
// - cli.mjs / cli-lib.mjs: the command line (`bin`: `npx context-compaction`), copied from js/.
// - analysis.mjs: the browser-safe transcript analysis cli-lib.mjs imports and the web page
//   loads from /pkg/ (no imports; the library is passed in), copied from js/.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// esbuild writes node.cjs (the end of this script); found first, so that a missing one changes nothing.
let esbuild;
try {
  ({ build: esbuild } = createRequire(import.meta.url)('esbuild'));
} catch (e) {
  throw new Error(`scripts/package.mjs needs esbuild (a dev dependency) to write node.cjs: run scripts/setup.sh (${e.message})`);
}
const pkg = fileURLToPath(new URL('../pkg/', import.meta.url));
const glue = await import(new URL('../pkg/context_compaction.js', import.meta.url));
glue.initSync({ module: readFileSync(pkg + 'context_compaction_bg.wasm') });
const constants = glue.getConstants();

// The Anthropic summarizer is plain JavaScript (no WASM): copied as it is.
for (const f of ['anthropic.js', 'anthropic.d.ts']) {
  copyFileSync(fileURLToPath(new URL(`../js/${f}`, import.meta.url)), pkg + f);
}
// The summarizers for OpenAI, the AI SDK and LangChain, and what they share: plain JavaScript.
const SUMMARIZER_FILES = ['http.js', 'http.d.ts', 'summary-request.js', 'summary-request.d.ts', 'openai.js', 'openai.d.ts', 'langchain.js', 'langchain.d.ts', 'ai-sdk.js', 'ai-sdk.d.ts'];
for (const f of SUMMARIZER_FILES) {
  copyFileSync(fileURLToPath(new URL(`../js/${f}`, import.meta.url)), pkg + f);
}
const summarizerExports =
  "export { openaiSummarizer } from './openai.js';\n" + "export { langchainSummarizer } from './langchain.js';\n";
// The command line (`npx context-compaction`, the package's `bin`): plain JavaScript that
// imports './node.js' and './analysis.mjs' (the analysis the web page shares, importing
// nothing); the entry keeps its shebang and is made executable.
for (const f of ['cli.mjs', 'cli-lib.mjs', 'analysis.mjs']) {
  copyFileSync(fileURLToPath(new URL(`../js/${f}`, import.meta.url)), pkg + f);
}
chmodSync(pkg + 'cli.mjs', 0o755);
// The agent-loop helpers (js/agents/: AI SDK, LangChain, Anthropic SDK, OpenAI SDK): plain
// JavaScript that imports the package by its own name, copied with their declarations into
// agents/ and exported as `context-compaction/agents/<ecosystem>`.
const AGENTS = ['ai-sdk', 'langchain', 'anthropic', 'openai'];
mkdirSync(pkg + 'agents', { recursive: true });
for (const f of readdirSync(fileURLToPath(new URL('../js/agents/', import.meta.url)))) {
  if (f.endsWith('.js') || f.endsWith('.d.ts')) {
    copyFileSync(fileURLToPath(new URL(`../js/agents/${f}`, import.meta.url)), pkg + 'agents/' + f);
  }
}

// The error class (src/bindings/js_error.js) lives in the snippet wasm-bindgen copied under
// snippets/<crate-hash>/; both entries re-export it so that `instanceof` works.
const errorSnippets = readdirSync(pkg + 'snippets')
  .map((d) => `./snippets/${d}/src/bindings/js_error.js`)
  .filter((p) => existsSync(pkg + p.slice(2)));
if (errorSnippets.length !== 1) {
  throw new Error(`expected one js_error.js snippet in pkg/snippets, found ${errorSnippets.length}`);
}
const errorClass = `export { ContextCompactionError } from '${errorSnippets[0]}';\n`;

// Before init(), the glue's `wasm` is undefined and every call fails with a bare TypeError.
// It starts as a stand-in whose every property read throws a coded NOT_INITIALIZED error
// instead (the real exports replace it at init, so nothing costs more afterwards). Exact text
// replacements: a wasm-bindgen whose glue differs fails the build here, not at run time.
{
  const gluePath = pkg + 'context_compaction.js';
  let text = readFileSync(gluePath, 'utf8');
  if (!text.includes('__ccNotReady')) {
    const swap = (from, to, count) => {
      const n = text.split(from).length - 1;
      if (n !== count) throw new Error(`package.mjs: expected ${count} × ${JSON.stringify(from)} in the glue, found ${n}`);
      text = text.replaceAll(from, to);
    };
    swap(
      'let wasmModule, wasmInstance, wasm;',
      'let wasmModule, wasmInstance;\n' +
        '// (scripts/package.mjs) Until init() resolves, every call is a coded NOT_INITIALIZED error.\n' +
        'const __ccNotReady = new Proxy({}, { get() { throw __ccCodedError(' +
        "'the library is not initialised: await init() (the default export) before calling it " +
        "(in Node, the package\\'s Node entry needs no init)', 'NOT_INITIALIZED'); } });\n" +
        'let wasm = __ccNotReady;',
      1,
    );
    swap('if (wasm !== undefined) return wasm;', 'if (wasm !== __ccNotReady) return wasm;', 2);
    text = `import { codedError as __ccCodedError } from '${errorSnippets[0]}';\n` + text;
    writeFileSync(gluePath, text);
  }
}

const header = '// Generated by scripts/package.mjs — do not edit.\n';
// The public names: everything the glue exports but its start function (an internal hook
// wasm-bindgen exports as `start`) and its default (the entries choose their own default).
const INTERNAL = new Set(['start', 'default']);
const names = Object.keys(glue).filter((n) => !INTERNAL.has(n)).sort();
const nodeNames = names.filter((n) => n !== 'initSync');
const list = (ns) => `{\n  ${ns.join(',\n  ')},\n}`;
writeFileSync(
  pkg + 'constants.js',
  header +
    '/** The library\'s constants (SPEC §4, §8, §9, §10). */\n' +
    `export const constants = Object.freeze(${JSON.stringify(constants, null, 2)});\n`,
);
writeFileSync(
  pkg + 'constants.d.ts',
  header +
    '/** The library\'s constants (SPEC §4, §8, §9, §10). */\n' +
    'export declare const constants: Readonly<{\n' +
    Object.entries(constants)
      .map(([k, v]) => `  ${k}: ${typeof v === 'string' ? JSON.stringify(v) : v};`)
      .join('\n') +
    '\n}>;\n',
);
writeFileSync(
  pkg + 'web.js',
  header +
    `export ${list(names)} from './context_compaction.js';\n` +
    "export { constants } from './constants.js';\n" +
    "export { anthropicSummarizer } from './anthropic.js';\n" +
    summarizerExports +
    errorClass +
    "import glueInit from './context_compaction.js';\n" +
    `import { codedError } from '${errorSnippets[0]}';\n` +
    '/**\n' +
    ' * Loads and instantiates the .wasm (by default the file next to this module; or pass\n' +
    ' * `{ module_or_path }`). A failure is a coded NOT_INITIALIZED error with the cause.\n' +
    ' */\n' +
    'export default async function init(input) {\n' +
    '  try {\n' +
    '    return await glueInit(input);\n' +
    '  } catch (e) {\n' +
    "    const node = typeof process !== 'undefined' && process.versions != null && process.versions.node != null;\n" +
    '    const hint = node && input === undefined\n' +
    "      ? \" (in Node, import 'context-compaction' as usual: its Node entry loads the .wasm itself; or pass the bytes: init({ module_or_path: readFileSync(...) }))\"\n" +
    "      : '';\n" +
    "    const err = codedError(`init() could not load the .wasm: ${e instanceof Error ? e.message : String(e)}${hint}`, 'NOT_INITIALIZED');\n" +
    '    err.cause = e;\n' +
    '    throw err;\n' +
    '  }\n' +
    '}\n',
);
writeFileSync(
  pkg + 'node.js',
  header +
    "import { readFileSync } from 'node:fs';\n" +
    "import { initSync, setEnvironmentDefaults } from './context_compaction.js';\n\n" +
    "initSync({ module: readFileSync(new URL('./context_compaction_bg.wasm', import.meta.url)) });\n" +
    'setEnvironmentDefaults(process.env);\n\n' +
    `export ${list(nodeNames)} from './context_compaction.js';\n` +
    "export { constants } from './constants.js';\n" +
    "export { anthropicSummarizer } from './anthropic.js';\n" +
    summarizerExports +
    errorClass +
    '/** Already initialised in Node; kept so isomorphic code can `await init()` everywhere. */\n' +
    'export default async function init() {}\n',
);
const types =
  header +
  `export ${list(names)} from './context_compaction.js';\n` +
  "export { default } from './context_compaction.js';\n" +
  "export { constants } from './constants.js';\n" +
  "export { anthropicSummarizer } from './anthropic.js';\n" +
  summarizerExports +
  errorClass;
// The hand-written declarations (types/index.d.ts, checked by types/check.sh) describe every
// export precisely; the generated list above is the fallback when they are absent.
const handWritten = new URL('../types/index.d.ts', import.meta.url);
writeFileSync(
  pkg + 'index.d.ts',
  existsSync(handWritten) ? readFileSync(handWritten, 'utf8') : types,
);

const meta = JSON.parse(readFileSync(pkg + 'package.json', 'utf8'));
meta.name = 'context-compaction';
meta.type = 'module';
meta.main = './node.js';
meta.module = './web.js';
meta.browser = './web.js';
meta.types = './index.d.ts';
meta.exports = {
  '.': {
    types: './index.d.ts',
    node: './node.js',
    default: './web.js',
  },
  './ai-sdk': { types: './ai-sdk.d.ts', default: './ai-sdk.js' },
  './context_compaction_bg.wasm': './context_compaction_bg.wasm',
  './package.json': './package.json',
};
for (const a of AGENTS) {
  meta.exports[`./agents/${a}`] = { types: `./agents/${a}.d.ts`, default: `./agents/${a}.js` };
}
// The agent-loop helpers use the caller's own SDK: optional peers, never bundled.
meta.peerDependencies = { ...meta.peerDependencies, ai: '>=6', langchain: '>=1', '@langchain/core': '>=1', '@anthropic-ai/sdk': '*', openai: '*' };
meta.peerDependenciesMeta = {
  ...meta.peerDependenciesMeta,
  ...Object.fromEntries(Object.keys(meta.peerDependencies).map((p) => [p, { optional: true }])),
};
meta.files = Array.from(
  new Set([
    ...(meta.files || []),
    'web.js',
    'node.js',
    'constants.js',
    'constants.d.ts',
    'index.d.ts',
    'anthropic.js',
    'anthropic.d.ts',
    ...SUMMARIZER_FILES,
    'cli.mjs',
    'cli-lib.mjs',
    'analysis.mjs',
    'snippets',
    'agents',
  ]),
);
meta.bin = { 'context-compaction': './cli.mjs' };
meta.engines = { node: '>=20' };
meta.sideEffects = ['./node.js', './context_compaction.js'];
writeFileSync(pkg + 'package.json', JSON.stringify(meta, null, 2) + '\n');

// --- Runtimes and bundlers (docs/runtimes.md; checked by tests/runtimes/run.mjs) ---------------
// Three more entries, so that every runtime and bundler loads the package with no file handling
// of its own:
// - inline.js (`context-compaction/inline`): the .wasm inlined as base64 and instantiated
//   synchronously at import, for bundlers that do not emit the .wasm (esbuild, Rollup without a
//   plugin) and for single-file builds; no `init()` needed (a no-op is exported);
// - workerd.js (the `workerd` condition, chosen by wrangler and by any bundler told so): imports
//   the .wasm as a module, as Cloudflare Workers require (they refuse to compile WebAssembly
//   from bytes at run time);
// - node.cjs (`require` on Node versions without require(esm): before 20.19 and 22.12): the
//   Node entry bundled into one CommonJS file by esbuild. Where Node can require an ES module
//   (the `module-sync` condition), `require` and `import` share node.js, so one instance.
const inlineBase64 = readFileSync(pkg + 'context_compaction_bg.wasm').toString('base64');
writeFileSync(
  pkg + 'inline.js',
  header +
    '// The .wasm, base64: decoded and compiled synchronously at import (no fetch, no file).\n' +
    "import { initSync } from './context_compaction.js';\n\n" +
    `const wasmBase64 = '${inlineBase64}';\n` +
    'const wasmBytes =\n' +
    "  typeof Uint8Array.fromBase64 === 'function'\n" +
    '    ? Uint8Array.fromBase64(wasmBase64)\n' +
    '    : Uint8Array.from(atob(wasmBase64), (c) => c.charCodeAt(0));\n' +
    'initSync({ module: wasmBytes });\n\n' +
    `export ${list(nodeNames)} from './context_compaction.js';\n` +
    "export { constants } from './constants.js';\n" +
    "export { anthropicSummarizer } from './anthropic.js';\n" +
    summarizerExports +
    errorClass +
    '/** Already initialised at import; kept so isomorphic code can `await init()` everywhere. */\n' +
    'export default async function init() {}\n',
);
writeFileSync(
  pkg + 'workerd.js',
  header +
    '// Cloudflare Workers (workerd): the .wasm is imported as a compiled module (the runtime\n' +
    '// compiles no WebAssembly from bytes), then instantiated synchronously.\n' +
    "import wasmModule from './context_compaction_bg.wasm';\n" +
    "import { initSync } from './context_compaction.js';\n\n" +
    'initSync({ module: wasmModule });\n\n' +
    `export ${list(nodeNames)} from './context_compaction.js';\n` +
    "export { constants } from './constants.js';\n" +
    "export { anthropicSummarizer } from './anthropic.js';\n" +
    summarizerExports +
    errorClass +
    '/** Already initialised at import; kept so isomorphic code can `await init()` everywhere. */\n' +
    'export default async function init() {}\n',
);
await esbuild({
  entryPoints: [pkg + 'node.js'],
  outfile: pkg + 'node.cjs',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'error',
  // node.js finds the .wasm next to itself by import.meta.url; in CommonJS that is __filename.
  define: { 'import.meta.url': '__context_compaction_url' },
  banner: {
    js:
      '// Generated by scripts/package.mjs from node.js (bundled by esbuild) — do not edit.\n' +
      "var __context_compaction_url = require('node:url').pathToFileURL(__filename).href;",
  },
});
// TypeScript reads a `require` of the package as CommonJS: it needs CommonJS declarations
// (.d.cts), the same text, whose Anthropic re-export points at a .d.cts too.
// The plain-JS modules' declarations get .d.cts twins the same way, their imports of each
// other rewritten to the twins.
const CJS_TWINS = ['anthropic', 'openai', 'langchain', 'summary-request', 'http'];
const toCjs = (text) =>
  text
    .replace(/from '\.\/(anthropic|openai|langchain|summary-request|http)\.js'/g, "from './$1.cjs'")
    .replace(/import\('\.\/(anthropic|openai|langchain|summary-request|http)\.js'\)/g, "import('./$1.cjs')");
writeFileSync(pkg + 'index.d.cts', toCjs(readFileSync(pkg + 'index.d.ts', 'utf8')));
for (const m of CJS_TWINS) {
  writeFileSync(pkg + `${m}.d.cts`, toCjs(readFileSync(pkg + `${m}.d.ts`, 'utf8')));
}
const runtimeMeta = JSON.parse(readFileSync(pkg + 'package.json', 'utf8'));
// Conditions are tried in order. Node: `module-sync` (Node >= 20.19 / 22.12, which can require an
// ES module) gives import and require the same node.js; older Nodes' require gets node.cjs.
// TypeScript knows no `module-sync`: its require reaches the CommonJS declarations.
runtimeMeta.exports['.'] = {
  workerd: { types: './index.d.ts', default: './workerd.js' },
  node: {
    'module-sync': { types: './index.d.ts', default: './node.js' },
    require: { types: './index.d.cts', default: './node.cjs' },
    types: './index.d.ts',
    default: './node.js',
  },
  types: './index.d.ts',
  default: './web.js',
};
runtimeMeta.exports['./inline'] = { types: './index.d.ts', default: './inline.js' };
runtimeMeta.files = Array.from(
  new Set([...runtimeMeta.files, 'inline.js', 'workerd.js', 'node.cjs', 'index.d.cts', ...CJS_TWINS.map((m) => `${m}.d.cts`)]),
);
runtimeMeta.sideEffects = Array.from(
  new Set([...runtimeMeta.sideEffects, './inline.js', './workerd.js', './node.cjs']),
);
writeFileSync(pkg + 'package.json', JSON.stringify(runtimeMeta, null, 2) + '\n');

// The package's own README (for users: install, imports, summarizers, helpers, errors), not the
// repository's development README that wasm-pack copied.
copyFileSync(fileURLToPath(new URL('../docs/package-README.md', import.meta.url)), pkg + 'README.md');
