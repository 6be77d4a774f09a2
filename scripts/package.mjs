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
//   to resolve for users without it); options.js, http.js and summary-request.js are what they
//   share. Each fetch summarizer's request half (anthropic-send.js, openai-send.js,
//   langchain-send.js, with http.js) is imported dynamically on its first call.
// - cli.mjs / cli-lib.mjs: the command line (`bin`: `npx context-compaction`), copied from js/.
// - analysis.mjs: the browser-safe transcript analysis cli-lib.mjs imports and the web page
//   loads from /pkg/ (no imports; the library is passed in), copied from js/.
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

// esbuild writes node.cjs and minifies the JS a page loads (the end of this script); found
// first, so that a missing one changes nothing.
let esbuild;
let transformSync;
try {
  ({ build: esbuild, transformSync } = createRequire(import.meta.url)('esbuild'));
} catch (e) {
  throw new Error(`scripts/package.mjs needs esbuild (a dev dependency) to write node.cjs: run scripts/setup.sh (${e.message})`);
}
const pkg = fileURLToPath(new URL('../pkg/', import.meta.url));
const glue = await import(new URL('../pkg/context_compaction.js', import.meta.url));
glue.initSync({ module: readFileSync(pkg + 'context_compaction_bg.wasm') });
const constants = glue.getConstants();

// The Anthropic summarizer is plain JavaScript (no WASM): copied as it is.
for (const f of ['anthropic.js', 'anthropic-send.js', 'anthropic.d.ts']) {
  copyFileSync(fileURLToPath(new URL(`../js/${f}`, import.meta.url)), pkg + f);
}
// The summarizers for OpenAI, the AI SDK and LangChain, and what they share: plain JavaScript.
const SUMMARIZER_FILES = ['options.js', 'summarizer-error.js', 'http.js', 'http.d.ts', 'summary-request.js', 'summary-request.d.ts', 'openai.js', 'openai-send.js', 'openai.d.ts', 'langchain.js', 'langchain-send.js', 'langchain.d.ts', 'ai-sdk.js', 'ai-sdk.d.ts'];
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
function patchNotReady(gluePath) {
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
        '// (scripts/package.mjs) Until init() resolves, every call is a coded NOT_INITIALIZED error;\n' +
        '// where an entry knows the module cannot be set up here (the inline entry under a CSP\n' +
        '// that refuses WebAssembly), the error it gives (__ccSetWhyNot).\n' +
        'let __ccWhyNot;\n' +
        'export const __ccSetWhyNot = (f) => { __ccWhyNot = f; };\n' +
        'const __ccNotReady = new Proxy({}, { get() { throw (__ccWhyNot === undefined ? undefined : __ccWhyNot()) ?? __ccCodedError(' +
        "'the library is not initialised: await init() (the default export) before calling it " +
        "(in Node, the package\\'s Node entry needs no init)', 'NOT_INITIALIZED'); } });\n" +
        'let wasm = __ccNotReady;',
      1,
    );
    swap('if (wasm !== undefined) return wasm;', 'if (wasm !== __ccNotReady) return wasm;', 2);
    // An init() whose download was still running when the module was set up another way
    // (initSync(), or the `inline` entry, which shares this glue) keeps the instance that
    // exists: replacing it would orphan every object made since (a Compactor's pointer into
    // the old memory) and the environment defaults set on it.
    swap(
      '    const { instance, module } = await __wbg_load(await module_or_path, imports);\n',
      '    const { instance, module } = await __wbg_load(await module_or_path, imports);\n' +
        '    if (wasm !== __ccNotReady) return wasm; // (scripts/package.mjs) set up meanwhile\n',
      1,
    );
    text = `import { codedError as __ccCodedError } from '${errorSnippets[0]}';\n` + text;
    writeFileSync(gluePath, text);
  }
}

// A WebAssembly trap (`unreachable`, memory access out of bounds, a stack overflow inside the
// .wasm) leaves the instance unusable. The glue recovers instead of failing every later call
// (issue 13): every export, method and callback that enters the .wasm is guarded; a trap marks
// the instance dead and is reported as a coded INSTANCE_RESET error (the RuntimeError as its
// `cause`), the promises still pending in the dead instance are rejected the same way, and the
// next call instantiates a fresh instance, synchronously, from the WebAssembly.Module kept at
// init (every entry keeps it: Node, web, inline, workerd). Objects of the dead instance (a
// Compactor, an offlineSummarizer function) throw INSTANCE_RESET; their finalizers never
// touch the fresh instance. Exact text replacements with counts: a wasm-bindgen whose glue
// differs fails the build here, not at run time.
// The per-turn calls without options (a chat UI's every render, an agent's every request):
// the record of the end of the array is read in JS straight into the .wasm's memory
// (js_view.js `perTurnRecord`), then one call with numbers lets the core decide
// (`__ccPerTurnCount` / `__ccPerTurnShould` in bindings/exports.rs); no JS value crosses,
// and no result array is made. Whatever that does not settle (no record, a record the core
// does not settle, a model other than the last call's, a compaction that may be due) runs the
// export itself, unchanged. `lastModel` is the model of the last shouldAutoCompact without
// options that returned: the one the core keeps the threshold of.
const PER_TURN_ROUTE = `{
    const general = { count: tokenCountWithEstimation, should: shouldAutoCompact };
    const none = {};
    let lastModel = none;
    // The core's answer from the record of \`used\` words; a trap is reported as the guard does.
    const settle = (f, used) => {
        try {
            return f(used);
        } catch (e) {
            if (!__ccIsTrap(e)) throw e;
            throw __ccTrapped(e);
        }
    };
    tokenCountWithEstimation = function (messages, options) {
        if (options == null && !__ccDead) {
            const g = __ccGeneration;
            const used = __ccView.perTurnRecord(messages, wasm);
            // (A getter read meanwhile may have made a call that trapped, and another that
            // started a fresh instance: the record was written into the old one.)
            if (used > 0 && g === __ccGeneration && !__ccDead) {
                const n = settle(wasm.__ccPerTurnCount, used);
                if (n >= 0) return n;
            }
        }
        return general.count(messages, options);
    };
    shouldAutoCompact = function (messages, model, options) {
        if (options == null && model === lastModel && !__ccDead) {
            const g = __ccGeneration;
            const used = __ccView.perTurnRecord(messages, wasm);
            if (used > 0 && g === __ccGeneration && !__ccDead) {
                const r = settle(wasm.__ccPerTurnShould, used);
                if (r === 0 || r === 1) return r === 1;
            }
        }
        lastModel = none;
        const r = general.should(messages, model, options);
        if (options == null) lastModel = model;
        return r;
    };
}`;

function patchTrapRecovery(gluePath) {
  let text = readFileSync(gluePath, 'utf8');
  if (!text.includes('__ccGeneration')) {
    const swap = (from, to, count) => {
      const n = typeof from === 'string' ? text.split(from).length - 1 : (text.match(from) || []).length;
      if (n !== count) throw new Error(`package.mjs: expected ${count} × ${String(from)} in the glue, found ${n}`);
      text = typeof from === 'string' ? text.replaceAll(from, to) : text.replace(from, to);
    };
    const classes = [...text.matchAll(/^export class (\w+) \{$/gm)].map((m) => m[1]);
    // The classes' methods that return a promise (their JSDoc says so).
    const asyncMethods = [...text.matchAll(/@returns \{Promise<[^\n]*\n\s*\*\/\n {4}(\w+)\(/g)].map((m) => m[1]);
    const functions = [...text.matchAll(/^export function (\w+)\(/gm)].map((m) => m[1]).filter((n) => n !== 'initSync');
    const snippetDir = errorSnippets[0].replace(/js_error\.js$/, '');
    // Closures carry the instance they belong to; a stale one never reaches the fresh instance.
    // The glue has one closure maker per kind its exports use (`Fn`: an offlineSummarizer
    // function; `FnMut`: a future's callbacks): each found is patched, and nothing else.
    const fnClosures = text.split('        state.cnt++;\n        try {\n            return f(state.a, state.b, ...args);').length - 1;
    const mutClosures = text.split('        state.cnt++;\n        const a = state.a;\n        state.a = 0;').length - 1;
    const closures = fnClosures + mutClosures;
    swap('const state = { a: arg0, b: arg1, cnt: 1 };', 'const state = { a: arg0, b: arg1, cnt: 1, g: __ccGeneration };', closures);
    swap(
      '        state.cnt++;\n        try {\n            return f(state.a, state.b, ...args);\n        } finally {',
      '        if (state.g !== __ccGeneration || __ccDead) throw __ccStale(\'this function\');\n' +
        '        state.cnt++;\n        try {\n            return __ccEnter(() => f(state.a, state.b, ...args), false);\n        } finally {',
      fnClosures,
    );
    swap(
      '        state.cnt++;\n        const a = state.a;\n        state.a = 0;\n        try {\n            return f(a, state.b, ...args);\n        } finally {',
      // Promise callbacks of the dead instance (its pending work) end quietly: their promises
      // were rejected when it trapped.
      '        if (state.g !== __ccGeneration || __ccDead) return undefined;\n' +
        '        state.cnt++;\n        const a = state.a;\n        state.a = 0;\n        try {\n            return __ccEnter(() => f(a, state.b, ...args), true);\n        } finally {',
      mutClosures,
    );
    swap(
      '        if (--state.cnt === 0) {\n            wasm.__wbindgen_destroy_closure(state.a, state.b);',
      '        if (--state.cnt === 0) {\n            if (state.g === __ccGeneration && !__ccDead) wasm.__wbindgen_destroy_closure(state.a, state.b);',
      closures,
    );
    swap(
      'new FinalizationRegistry(state => wasm.__wbindgen_destroy_closure(state.a, state.b));',
      'new FinalizationRegistry(state => { if (state.g === __ccGeneration && !__ccDead) wasm.__wbindgen_destroy_closure(state.a, state.b); });',
      closures > 0 ? 1 : 0,
    );
    // Constructors (`new Compactor()`) revive a dead instance and report a trap as the guard
    // of every other function does: they cannot be wrapped from outside (the class is what
    // `new` and `instanceof` use), so their call into the .wasm goes through `__ccConstruct`.
    // The JS object keeps its constructor's arguments (`__ccKept`): WASM holds a Compactor's
    // options only weakly (its callbacks may refer back to it; see `weakly` in js_env.js).
    const ctorPattern = /(\n {4}constructor\([^)]*\) \{\n {8})const ret = (wasm\.\w+\([^)]*\));/g;
    swap(ctorPattern, '$1__ccKept.set(this, arguments);\n        const ret = __ccConstruct(() => $2);', (text.match(ctorPattern) || []).length);
    // An object a function or static method makes (`Compactor.restore`) keeps its arguments too.
    const wrapPattern = /return (\w+)\.__wrap\(([^)]*)\);/g;
    const wraps = (text.match(wrapPattern) || []).length;
    if (classes.includes('Compactor') && wraps === 0) throw new Error('package.mjs: Compactor.restore of the glue was not found');
    swap(wrapPattern, '{ const made = $1.__wrap($2); __ccKept.set(made, arguments); return made; }', wraps);
    if (classes.includes('Compactor') && !text.includes('const ret = __ccConstruct(() => wasm.compactor_new(')) {
      throw new Error('package.mjs: the Compactor constructor of the glue was not found');
    }
    // Objects: their finalizer frees only in the instance they were made in.
    swap(/new FinalizationRegistry\(ptr => wasm\.(\w+)\(ptr(?: >>> 0)?, 1\)\)/g, 'new FinalizationRegistry(h => { if (h.g === __ccGeneration && !__ccDead) wasm.$1(h.ptr, 1); })', classes.length);
    swap(/(\w+Finalization)\.register\((\w+), \2\.__wbg_ptr, \2\)/g, '$1.register($2, { ptr: $2.__wbg_ptr, g: __ccGeneration }, $2)', 2 * classes.length);
    text =
      `import * as __ccConvert from '${snippetDir}js_convert.js';\n` +
      `import * as __ccView from '${snippetDir}js_view.js';\n` +
      text +
      `
// ---- (scripts/package.mjs) Recovery from a trap: a fresh instance at the next call. ----
let __ccGeneration = 0;
let __ccDead = false;
let __ccDepth = 0;
let __ccEnv;
const __ccPending = new Set();
const __ccBorn = new WeakMap();
${classes.length > 0 ? 'const __ccKept = new WeakMap();\n' : ''}const __ccAfterCalls = [];
function __ccIsTrap(e) {
    return e instanceof WebAssembly.RuntimeError || (e instanceof RangeError && /call stack/i.test(e.message));
}
function __ccStale(what) {
    return __ccCodedError(\`\${what} belongs to a WebAssembly instance that trapped and was replaced by a fresh one: create it again\`, 'INSTANCE_RESET');
}
// A trap: the instance is dead from now on; what was pending in it is rejected.
function __ccTrapped(e) {
    const err = __ccCodedError(\`the WebAssembly instance trapped (\${e.message}); the next call runs on a fresh instance, and objects created before (a Compactor, an offlineSummarizer function) must be created again\`, 'INSTANCE_RESET');
    err.cause = e;
    if (!__ccDead) {
        __ccDead = true;
        const pending = [...__ccPending];
        __ccPending.clear();
        for (const reject of pending) reject(err);
    }
    return err;
}
// Runs \`run\`, which enters the .wasm; a trap is reported (thrown, or for a callback of the
// event loop, ended quietly once its promise is rejected).
// A call made while another is in either .wasm (from a getter, a toJSON or a callback of the
// caller) reads with fresh state of its own; the outer call's is put back when it returns
// (js_view.js enterPackage / leavePackage keep the depth, shared by both modules, and set
// aside what the other snippets registered, js_batch.js's batch buffer among them; js_convert.js
// setAside / putBack its kept error).
function __ccEnter(run, quiet) {
    const saved = __ccView.enterPackage();
    const savedConvert = saved === undefined ? undefined : __ccConvert.setAside();
    __ccDepth++;
    try {
        return run();
    } catch (e) {
        if (!__ccIsTrap(e)) throw e;
        const err = __ccTrapped(e);
        if (quiet && __ccDepth === 1) return undefined;
        throw err;
    } finally {
        __ccDepth--;
        if (savedConvert !== undefined) __ccConvert.putBack(savedConvert);
        __ccView.leavePackage(saved);
        if (__ccDepth === 0 && __ccAfterCalls.length > 0) __ccRunAfterCalls();
    }
}
// What had to wait for the calls into the package to return (a free() from a callback).
function __ccRunAfterCalls() {
    const pending = __ccAfterCalls.splice(0);
    for (const f of pending) {
        try {
            f();
        } catch (e) {
            if (__ccIsTrap(e)) __ccTrapped(e);
        }
    }
}
// A fresh instance from the module kept at init, with the environment defaults given before.
function __ccRevive() {
    const instance = new WebAssembly.Instance(wasmModule, __wbg_get_imports());
    __ccGeneration++;
    __ccDead = false;
    WASM_VECTOR_LEN = 0;
    for (const take of [__ccConvert.takeConvertError, __ccView.takeStrings, __ccView.takeReadError, __ccView.takeCounterError]) {
        if (typeof take === 'function') take();
    }
    __wbg_finalize_init(instance, wasmModule);
    if (__ccEnv !== undefined) __ccRaw_setEnvironmentDefaults(__ccEnv);
}
// A constructor's call into the .wasm (\`run\`): on a fresh instance when the last one trapped,
// and a trap reported as INSTANCE_RESET.
function __ccConstruct(run) {
    if (__ccDead) {
        if (__ccDepth > 0) throw __ccStale('this call');
        __ccRevive();
    }
    return __ccEnter(run, false);
}
function __ccTrack(p) {
    return new Promise((resolve, reject) => {
        __ccPending.add(reject);
        p.then((v) => { __ccPending.delete(reject); resolve(v); }, (e) => { __ccPending.delete(reject); reject(e); });
    });
}
// \`returnsPromise\`: the method returns a promise, so what it cannot do is a rejection, never a throw.
function __ccGuard(f, owner, returnsPromise) {
    return function (...args) {
        let refused;
        if (__ccDead) {
            if (__ccDepth > 0) refused = __ccStale('this call');
            else __ccRevive();
        }
        if (refused === undefined && owner !== undefined && !(this instanceof owner && __ccBorn.has(this))) {
            // A method called unbound (\`const { push } = chat\`, \`list.forEach(chat.push)\`) or
            // on an object not made by the constructor: the glue would throw an uncoded error.
            refused = __ccCodedError(\`\${owner.name}.prototype.\${f.name.replace(/^get /, '')} was called on \${this === undefined ? 'undefined (a method called unbound? call it as obj.method(...) or bind it)' : 'something that is not a ' + owner.name + ' made by new ' + owner.name + '() or ' + owner.name + '.restore()'}\`, 'INVALID_ARGUMENT');
        } else if (refused === undefined && owner !== undefined) {
            // After a revival: an object of the dead instance must not reach the fresh one.
            if (__ccBorn.get(this) !== __ccGeneration) refused = __ccStale(\`this \${owner.name}\`);
            else if (!this.__wbg_ptr) refused = __ccCodedError(\`this \${owner.name} was freed (free(), or the end of its \\\`using\\\` block): create a new one\`, 'INVALID_ARGUMENT');
        }
        if (refused !== undefined) {
            if (returnsPromise) return Promise.reject(refused);
            throw refused;
        }
        const r = __ccEnter(() => f.apply(this, args), false);
        return r instanceof Promise ? __ccTrack(r) : r;
    };
}
const __ccRaw_setEnvironmentDefaults = setEnvironmentDefaults;
${functions.map((n) => `${n} = __ccGuard(${n});`).join('\n')}
${functions.includes('__ccPerTurnRecord') ? PER_TURN_ROUTE : ''}
{
    const guarded = setEnvironmentDefaults;
    setEnvironmentDefaults = function (env) {
        const r = guarded(env);
        __ccEnv = env;
        return r;
    };
}
${classes
  .map(
    (c) => `for (const [target, owner] of [[${c}.prototype, ${c}], [${c}, undefined]]) {
    for (const name of Object.getOwnPropertyNames(target)) {
        if (['constructor', '__wrap', '__destroy_into_raw', 'free'].includes(name)) continue;
        if (owner === undefined && ['prototype', 'length', 'name'].includes(name)) continue;
        const d = Object.getOwnPropertyDescriptor(target, name);
        if (typeof d.value === 'function') Object.defineProperty(target, name, { ...d, value: __ccGuard(d.value, owner, ${JSON.stringify(asyncMethods)}.includes(name)) });
        else if (typeof d.get === 'function') Object.defineProperty(target, name, { ...d, get: __ccGuard(d.get, owner, false) });
    }
}
// The pointer remembers the instance it was made in.
{
    const ptrs = new WeakMap();
    Object.defineProperty(${c}.prototype, '__wbg_ptr', {
        get() { return ptrs.get(this) ?? 0; },
        set(ptr) { ptrs.set(this, ptr); __ccBorn.set(this, __ccGeneration); },
        configurable: true,
    });
    const free = ${c}.prototype.free;
    ${c}.prototype.free = function () {
        if (!(this instanceof ${c})) throw __ccCodedError(\`${c}.prototype.free was called on \${this === undefined ? 'undefined (a method called unbound?)' : 'something that is not a ${c}'}\`, 'INVALID_ARGUMENT');
        // Freed already, or made in a dead instance: nothing to free (never a throw).
        if (!ptrs.get(this) || __ccBorn.get(this) !== __ccGeneration || __ccDead) { ptrs.set(this, 0); return; }
        if (__ccDepth > 0) {
            // free() from a callback while a call into the package runs (its tokenCounter, a
            // getter): the object may be the one in use, which Rust refuses to free (and a
            // refusal thrown through the .wasm would leave it borrowed for good). It is freed
            // as soon as the outermost call returns; from now on it reads as freed.
            const ptr = ptrs.get(this);
            const g = __ccGeneration;
            ptrs.set(this, 0);
            ${c}Finalization.unregister(this);
            __ccAfterCalls.push(() => { if (g === __ccGeneration && !__ccDead) wasm.__wbg_${c.toLowerCase()}_free(ptr, 0); });
            return;
        }
        return free.call(this);
    };
    if (Symbol.dispose) ${c}.prototype[Symbol.dispose] = ${c}.prototype.free;
}`,
  )
  .join('\n')}
`;
    writeFileSync(gluePath, text);
  }
}

// Every module's glue (the first, the one loaded on first use, the count entry's) gets both
// patches.
for (const glueFile of ['context_compaction.js', 'context_compaction_extra.js', 'context_compaction_count.js']) {
  patchNotReady(pkg + glueFile);
  patchTrapRecovery(pkg + glueFile);
}

const header = '// Generated by scripts/package.mjs — do not edit.\n';
// The public names: everything the glue exports but its start function (an internal hook
// wasm-bindgen exports as `start`), its default (the entries choose their own default) and
// the glue's own routes (`__cc…`, e.g. the per-turn record).
const INTERNAL = { has: (n) => n === 'start' || n === 'default' || n.startsWith('__cc') };
// The first module's exports but setEnvironmentDefaults, which every entry wraps (below) so
// that the second module gets the same defaults.
const names = Object.keys(glue).filter((n) => !INTERNAL.has(n) && n !== 'setEnvironmentDefaults').sort();
const nodeNames = names.filter((n) => n !== 'initSync');
// The second module (feature `extra`), loaded on first use: its exports, through extras.js.
const extraGlue = await import(new URL('../pkg/context_compaction_extra.js', import.meta.url));
const EXTRA_NAMES = ['offlineSummarizer', 'previewCompaction', 'simulateSession'];
{
  const found = Object.keys(extraGlue).filter((n) => !INTERNAL.has(n) && n !== 'initSync' && n !== 'setEnvironmentDefaults').sort();
  if (JSON.stringify(found) !== JSON.stringify(EXTRA_NAMES)) {
    throw new Error(`package.mjs: the second module exports ${found.join(', ')}; extras.js wraps ${EXTRA_NAMES.join(', ')}`);
  }
}
// extras.js (copied from js/): the lazy second module for every entry. Each entry passes its
// own `load` (synchronous where it has the bytes at hand: Node, workerd; a promise: web, inline).
copyFileSync(fileURLToPath(new URL('../js/extras.js', import.meta.url)), pkg + 'extras.js');
// defaults.js (copied from js/): the environment defaults web.js and count.js share in a page.
copyFileSync(fileURLToPath(new URL('../js/defaults.js', import.meta.url)), pkg + 'defaults.js');
const EXTRA_EXPORTS = ['loadExtras', ...EXTRA_NAMES, 'setEnvironmentDefaults'];
// `shared`: the entry shares its environment defaults with the page's other browser entry
// (web.js with count.js, through defaults.js); it joins at init and initSync.
const extraExports = (load, sync, shared = false) =>
  "import { extras as __ccExtras } from './extras.js';\n" +
  `import { codedError as __ccCodedError } from '${errorSnippets[0]}';\n` +
  "import { setEnvironmentDefaults as __ccSetBaseDefaults } from './context_compaction.js';\n" +
  `const __ccX = __ccExtras({\n  load: ${load},\n  sync: ${sync},\n  codedError: __ccCodedError,\n  setBaseDefaults: __ccSetBaseDefaults,\n});\n` +
  (shared
    ? `export const { ${EXTRA_EXPORTS.filter((n) => n !== 'setEnvironmentDefaults').join(', ')} } = __ccX;\n` +
      "import { joinDefaults as __ccJoinDefaults, shareDefaults as __ccShareDefaults } from './defaults.js';\n" +
      '/** The environment defaults of both modules, and of the count entry if the page loaded it. */\n' +
      'export function setEnvironmentDefaults(env) {\n' +
      '  __ccX.setEnvironmentDefaults(env);\n' +
      '  __ccShareDefaults(__ccX.setEnvironmentDefaults, env);\n' +
      '}\n'
    : `export const { ${EXTRA_EXPORTS.join(', ')} } = __ccX;\n`);
const list = (ns) => `{\n  ${ns.join(',\n  ')},\n}`;
// Every entry exports the same names (docs/package-README.md): where the module is instantiated at
// import (node.js, node.cjs, inline.js, workerd.js), initSync is a no-op, as init is.
const INIT_SYNC_NOOP =
  '/** Already initialised at import: nothing to do (the browser entry initialises from bytes). */\n' +
  'export function initSync() {}\n';
// An engine that runs no WebAssembly (Safari's Lockdown Mode, `node --jitless`, a policy
// that turns it off): the entries that instantiate at import say so with a coded error, not
// the glue's `ReferenceError: WebAssembly is not defined` (which Node prints with the whole
// minified glue as its source line). `__ccCodedError` is imported by every such entry.
const NO_WASM_TEST = "typeof WebAssembly !== 'object' || WebAssembly === null";
const NO_WASM_ERROR =
  "__ccCodedError('this JavaScript engine runs no WebAssembly (Safari\\'s Lockdown Mode, node --jitless, or a policy that turns it off): context-compaction cannot run here', 'NOT_INITIALIZED')";
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
// The body of web.js's init(): the glue's init, then the entry joins the page's shared
// environment defaults (defaults.js); a failure is js_error.js's coded NOT_INITIALIZED.
const initBody =
  '  try {\n' +
  '    const r = await glueInit(input);\n' +
  '    __ccJoinDefaults(__ccX.setEnvironmentDefaults);\n' +
  '    return r;\n' +
  '  } catch (e) {\n' +
  "    throw initFailure(e, input, 'context-compaction');\n" +
  '  }\n';
// The exports both browser entries (web.js, service-worker.js) begin with: the first module's,
// the constants, the summarizers, the error class.
const browserExports =
  `export ${list(names.filter((n) => n !== 'initSync'))} from './context_compaction.js';\n` +
  "export { constants } from './constants.js';\n" +
  "export { anthropicSummarizer } from './anthropic.js';\n" +
  summarizerExports +
  errorClass;
// The end of both browser entries (web.js, service-worker.js): init() and initSync(), which
// initialise the first module and join the page's shared environment defaults.
const browserInit =
  "import glueInit from './context_compaction.js';\n" +
  `import { initFailure } from '${errorSnippets[0]}';\n` +
  '/**\n' +
  ' * Loads and instantiates the .wasm (by default the file next to this module; or pass\n' +
  ' * `{ module_or_path }`). A failure is a coded NOT_INITIALIZED error with the cause.\n' +
  ' */\n' +
  'export default async function init(input) {\n' +
  initBody +
  '}\n' +
  "import { initSync as __ccGlueInitSync } from './context_compaction.js';\n" +
  '/**\n' +
  ' * Initialises the first module synchronously from its bytes or a compiled module. A failure\n' +
  " * (other bytes, or an engine that compiles none) is init()'s coded NOT_INITIALIZED error.\n" +
  ' */\n' +
  'export function initSync(module) {\n' +
  '  try {\n' +
  '    __ccGlueInitSync(module);\n' +
  '  } catch (e) {\n' +
  "    throw initFailure(e, module, 'context-compaction', 'initSync()');\n" +
  '  }\n' +
  '  __ccJoinDefaults(__ccX.setEnvironmentDefaults);\n' +
  '}\n';
writeFileSync(
  pkg + 'web.js',
  header +
    browserExports +
    '// The second module: its glue and .wasm are fetched on first use (or by loadExtras(input)).\n' +
    extraExports(
      "async (input, n) => {\n    const m = await __ccImportAgain(n, () => import('./context_compaction_extra.js'), import.meta.url, 'web.js', 'context_compaction_extra.js');\n    await m.default(input);\n    return m;\n  }",
      false,
      true,
    ) +
    "import { importAgain as __ccImportAgain } from './defaults.js';\n" +
    // No import() of a computed URL here: miniflare's module locator refuses one in any module
    // it reaches, and a Worker may import web.js (tests/durable does). count.js registers it.
    browserInit,
);
// service-worker.js (`context-compaction/service-worker`): web.js for a module service worker
// (a browser extension's background, a page's offline worker). A service worker refuses
// `import()`, which web.js uses for what it loads on first use (the second module's glue, the
// summarizers' request code): this entry imports them statically and provides them to
// defaults.js' importAgain, so nothing is imported dynamically. The .wasm files are still
// fetched (init(), and the second module's on first use). No top-level await either: the
// worker calls `await init()` in its own handlers.
writeFileSync(
  pkg + 'service-worker.js',
  header +
    browserExports +
    "import { provideModule as __ccProvide } from './defaults.js';\n" +
    "import * as __ccAnthropicSend from './anthropic-send.js';\n" +
    "import * as __ccOpenaiSend from './openai-send.js';\n" +
    "import * as __ccLangchainSend from './langchain-send.js';\n" +
    "import * as __ccExtraGlue from './context_compaction_extra.js';\n" +
    "__ccProvide('anthropic-send.js', __ccAnthropicSend);\n" +
    "__ccProvide('openai-send.js', __ccOpenaiSend);\n" +
    "__ccProvide('langchain-send.js', __ccLangchainSend);\n" +
    '// The second module: its glue is here already, its .wasm fetched on first use (or by\n' +
    '// loadExtras(input)).\n' +
    extraExports('async (input) => {\n    await __ccExtraGlue.default(input);\n    return __ccExtraGlue;\n  }', false, true) +
    browserInit,
);
// count.js (`context-compaction/count`): the entry for a page's first render. Its init()
// loads only the counting module (feature `count`: the stateless count, thresholds and
// warning state); loadCompaction() imports web.js and initialises the first module on demand,
// and returns its exports (everything the package has). Environment defaults set here reach
// the first module too when it loads.
const countGlue = await import(new URL('../pkg/context_compaction_count.js', import.meta.url));
const COUNT_NAMES = [
  'calculateTokenWarningState', 'errorCodes', 'getAutoCompactThreshold', 'getConstants', 'getContextWindowForModel',
  'getEffectiveContextWindowSize', 'getMaxOutputTokensForModel', 'getModelOutputLimits', 'initSync',
  'isAutoCompactEnabled', 'roughTokenCountEstimation', 'shouldAutoCompact', 'tokenCountWithEstimation',
];
{
  const found = Object.keys(countGlue).filter((n) => !INTERNAL.has(n) && n !== 'setEnvironmentDefaults').sort();
  if (JSON.stringify(found) !== JSON.stringify(COUNT_NAMES)) {
    throw new Error(`package.mjs: the counting module exports ${found.join(', ')}; count.js expects ${COUNT_NAMES.join(', ')}`);
  }
}
// Its behaviour is js/count-loader.js (copied): init, loadCompaction, the first module loaded
// ahead once the warning threshold is passed or a compaction is due, the shared defaults.
const COUNT_WRAPPED = ['calculateTokenWarningState', 'shouldAutoCompact', 'initSync'];
copyFileSync(fileURLToPath(new URL('../js/count-loader.js', import.meta.url)), pkg + 'count-loader.js');
writeFileSync(
  pkg + 'count.js',
  header +
    `export ${list(COUNT_NAMES.filter((n) => !COUNT_WRAPPED.includes(n)))} from './context_compaction_count.js';\n` +
    "export { constants } from './constants.js';\n" +
    errorClass +
    "import glueInit, * as __ccGlue from './context_compaction_count.js';\n" +
    "import { countLoader } from './count-loader.js';\n" +
    "import { importAgain as __ccImportAgain, setImportUrl as __ccSetImportUrl } from './defaults.js';\n" +
    "// A retry of a failed lazy import fetches anew with ?retry=N (defaults.js importAgain), only\n" +
    "// where the package is served unbundled: bundlers are told to leave this import alone.\n" +
    "__ccSetImportUrl((url) => import(url));\n" +
    `import { codedError, initFailure } from '${errorSnippets[0]}';\n` +
    'const __ccCount = countLoader({\n' +
    '  glueInit,\n' +
    '  glueInitSync: __ccGlue.initSync,\n' +
    '  warningState: __ccGlue.calculateTokenWarningState,\n' +
    '  should: __ccGlue.shouldAutoCompact,\n' +
    '  setDefaults: __ccGlue.setEnvironmentDefaults,\n' +
    '  codedError,\n' +
    '  initFailure,\n' +
    "  loadMain: (n) => __ccImportAgain(n, () => import('./web.js'), import.meta.url, 'count.js', 'web.js'),\n" +
    '  // Named here, next to the entry, so that bundlers emit the file (fetched only ahead).\n' +
    "  firstWasm: () => new URL('./context_compaction_bg.wasm', import.meta.url),\n" +
    '});\n' +
    '// calculateTokenWarningState and shouldAutoCompact start loading the first module ahead once\n' +
    '// a compaction is near; setEnvironmentDefaults reaches web.js\'s modules too.\n' +
    'export const { calculateTokenWarningState, shouldAutoCompact, setEnvironmentDefaults, loadCompaction, initSync } = __ccCount;\n' +
    '/**\n' +
    ' * Loads and instantiates the counting module (by default the file next to this module; or\n' +
    ' * pass `{ module_or_path }`); `prefetchCompaction`: false | true | { module_or_path }.\n' +
    ' */\n' +
    'export default __ccCount.init;\n',
);
// In Node and Workers the main entry instantiates its module at import from the bytes at
// hand (no download to save): `context-compaction/count` resolves there to the main entry's
// counting exports, and loadCompaction() to the main entry itself.
// The main entry's names the count entry's Node and Workers forms re-export (initSync: a
// no-op there, as init is).
const COUNT_MAIN_NAMES = [...COUNT_NAMES.filter((n) => n !== 'initSync'), 'setEnvironmentDefaults', 'constants', 'ContextCompactionError'].sort();
for (const [file, main] of [['count-node.js', 'node.js'], ['count-workerd.js', 'workerd.js']]) {
  writeFileSync(
    pkg + file,
    header +
      `// \`context-compaction/count\` where the main entry (${main}) is ready at import.\n` +
      `export ${list(COUNT_MAIN_NAMES)} from './${main}';\n` +
      `import * as __ccMain from './${main}';\n` +
      '/** The main entry, loaded already here. */\n' +
      'export async function loadCompaction() {\n' +
      '  return __ccMain;\n' +
      '}\n' +
      '/** Already initialised at import; kept so isomorphic code can `await init()` everywhere. */\n' +
      'export default async function init() {}\n' +
      '/** Already initialised at import: nothing to do (the browser form initialises from bytes). */\n' +
      'export function initSync() {}\n',
  );
}
writeFileSync(
  pkg + 'node.js',
  header +
    "import { readFileSync } from 'node:fs';\n" +
    "import { initSync as __ccInitSync } from './context_compaction.js';\n" +
    "import * as extraGlue from './context_compaction_extra.js';\n\n" +
    `if (${NO_WASM_TEST}) throw ${NO_WASM_ERROR};\n` +
    // A module the runtime refuses to read (Deno without --allow-read: `NotCapable`, which has
    // no `code`; Node's permission model) is a coded NOT_INITIALIZED saying what to do.
    'let __ccBytes;\n' +
    'try {\n' +
    "  __ccBytes = readFileSync(new URL('./context_compaction_bg.wasm', import.meta.url));\n" +
    '} catch (e) {\n' +
    "  const err = __ccCodedError(`the WebAssembly module context_compaction_bg.wasm could not be read: ${e instanceof Error ? e.message : String(e)} (Deno needs --allow-read; 'context-compaction/inline' reads no file)`, 'NOT_INITIALIZED');\n" +
    '  err.cause = e;\n' +
    '  throw err;\n' +
    '}\n' +
    '__ccInitSync({ module: __ccBytes });\n' +
    '// The second module is read and instantiated on first use.\n' +
    extraExports(
      "() => {\n    extraGlue.initSync({ module: readFileSync(new URL('./context_compaction_extra_bg.wasm', import.meta.url)) });\n    return extraGlue;\n  }",
      true,
    ) +
    'setEnvironmentDefaults(process.env);\n\n' +
    `export ${list(nodeNames)} from './context_compaction.js';\n` +
    "export { constants } from './constants.js';\n" +
    "export { anthropicSummarizer } from './anthropic.js';\n" +
    summarizerExports +
    errorClass +
    '/** Already initialised in Node; kept so isomorphic code can `await init()` everywhere. */\n' +
    'export default async function init() {}\n' +
    INIT_SYNC_NOOP,
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

// count.js's declarations: hand-written too (types/count.d.ts, importing index.d.ts); the
// CommonJS twin imports index.d.cts.
copyFileSync(fileURLToPath(new URL('../types/count.d.ts', import.meta.url)), pkg + 'count.d.ts');
writeFileSync(pkg + 'count.d.cts', readFileSync(pkg + 'count.d.ts', 'utf8').replaceAll("'./index.js'", "'./index.cjs'"));

// An entry's conditions, tried in order: Workers, then Node (`module-sync`, Node >= 20.19 /
// 22.12, which can require an ES module, gives import and require the same ES file; older
// Nodes' require gets the CommonJS form), then browsers and bundlers. TypeScript knows no
// `module-sync`: its require reaches the CommonJS declarations.
// Bun comes first: it can require an ES module, but it does not match `module-sync`, so
// without its own condition its require got the CommonJS form and its import the ES one —
// two instances in one process (two error classes, two sets of environment defaults).
const runtimeConditions = ({ types, cjsTypes, workerd, node, cjs, browser }) => ({
  bun: { types, default: node },
  workerd: { types, default: workerd },
  node: {
    'module-sync': { types, default: node },
    require: { types: cjsTypes, default: cjs },
    types,
    default: node,
  },
  types,
  default: browser,
});

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
  // A bundler that emits an imported .wasm as a file gives its URL (esbuild's file loader):
  // wasm-url.d.ts types that import for TypeScript.
  './context_compaction_bg.wasm': { types: './wasm-url.d.ts', default: './context_compaction_bg.wasm' },
  './context_compaction_extra_bg.wasm': { types: './wasm-url.d.ts', default: './context_compaction_extra_bg.wasm' },
  './count': runtimeConditions({ types: './count.d.ts', cjsTypes: './count.d.cts', workerd: './count-workerd.js', node: './count-node.js', cjs: './count-node.cjs', browser: './count.js' }),
  './context_compaction_count_bg.wasm': { types: './wasm-url.d.ts', default: './context_compaction_count_bg.wasm' },
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
    'context_compaction_extra.js',
    'context_compaction_extra.d.ts',
    'context_compaction_extra_bg.wasm',
    'context_compaction_extra_bg.wasm.d.ts',
    'extras.js',
    'context_compaction_count.js',
    'context_compaction_count.d.ts',
    'context_compaction_count_bg.wasm',
    'context_compaction_count_bg.wasm.d.ts',
    'count.js',
    'count-loader.js',
    'defaults.js',
    'count-node.js',
    'count-node.cjs',
    'count-workerd.js',
    'count.d.cts',
    'count.d.ts',
    'web.js',
    'node.js',
    'constants.js',
    'constants.d.ts',
    'index.d.ts',
    'anthropic.js',
    'anthropic-send.js',
    'anthropic.d.ts',
    ...SUMMARIZER_FILES,
    'cli.mjs',
    'cli-lib.mjs',
    'analysis.mjs',
    'snippets',
    'agents',
    '*.js.map',
  ]),
);
meta.bin = { 'context-compaction': './cli.mjs' };
meta.engines = { node: '>=20' };
meta.sideEffects = ['./node.js', './context_compaction.js', './context_compaction_extra.js', './context_compaction_count.js'];
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
  pkg + 'inline-extra.js',
  header +
    "// The second module's .wasm, base64, for inline.js: imported on first use of its functions.\n" +
    "import * as glue from './context_compaction_extra.js';\n\n" +
    `const wasmBase64 = '${readFileSync(pkg + 'context_compaction_extra_bg.wasm').toString('base64')}';\n` +
    'glue.initSync({\n' +
    '  module:\n' +
    "    typeof Uint8Array.fromBase64 === 'function'\n" +
    '      ? Uint8Array.fromBase64(wasmBase64)\n' +
    '      : Uint8Array.from(atob(wasmBase64), (c) => c.charCodeAt(0)),\n' +
    '});\n' +
    '/** The initialised glue of the second module. */\n' +
    'export { glue };\n',
);
writeFileSync(
  pkg + 'inline.js',
  header +
    '// The .wasm, base64: decoded and compiled synchronously at import (no fetch, no file).\n' +
    "import { initSync as __ccInitSync, __ccSetWhyNot } from './context_compaction.js';\n\n" +
    `const wasmBase64 = '${inlineBase64}';\n` +
    '// Without WebAssembly (Safari\'s Lockdown Mode), or where compiling it is refused (a page\n' +
    '// whose Content-Security-Policy has no \'wasm-unsafe-eval\'), the import still succeeds, so\n' +
    '// that a page that bundles this entry keeps working: init() and initSync() then say why,\n' +
    '// and every call is NOT_INITIALIZED.\n' +
    `const __ccNoWasm = ${NO_WASM_TEST};\n` +
    'let __ccCompileError;\n' +
    'if (!__ccNoWasm) {\n' +
    '  try {\n' +
    '    const wasmBytes =\n' +
    "      typeof Uint8Array.fromBase64 === 'function'\n" +
    '        ? Uint8Array.fromBase64(wasmBase64)\n' +
    '        : Uint8Array.from(atob(wasmBase64), (c) => c.charCodeAt(0));\n' +
    '    __ccInitSync({ module: wasmBytes });\n' +
    '  } catch (e) {\n' +
    '    __ccCompileError = e;\n' +
    '  }\n' +
    '}\n' +
    '// Every call then says why too (the glue asks __ccNotLoaded, below).\n' +
    'if (__ccNoWasm || __ccCompileError !== undefined) __ccSetWhyNot(() => __ccNotLoaded());\n' +
    '/** Why the module is not there (no WebAssembly, or its compilation refused), or undefined. */\n' +
    'function __ccNotLoaded() {\n' +
    `  if (__ccNoWasm) return ${NO_WASM_ERROR};\n` +
    '  if (__ccCompileError === undefined) return undefined;\n' +
    '  const why = __ccCompileError instanceof Error ? __ccCompileError.message : String(__ccCompileError);\n' +
    "  const err = __ccCodedError(`the inlined .wasm could not be compiled here: ${why}`, 'NOT_INITIALIZED');\n" +
    '  err.cause = __ccCompileError;\n' +
    '  return err;\n' +
    '}\n\n' +
    '// The second module (inline-extra.js, its .wasm inlined too) is imported on first use.\n' +
    "import { importAgain as __ccImportAgain } from './defaults.js';\n" +
    extraExports(
      "async (input, n) =>\n    (await __ccImportAgain(n, () => import('./inline-extra.js'), import.meta.url, 'inline.js', 'inline-extra.js')).glue",
      false,
    ) +
    "// In Node (and Deno, Bun) the environment variables are defaults, read at import as node.js does.\n" +
    "if (!__ccNoWasm && __ccCompileError === undefined && typeof process !== 'undefined' && process !== null && process.env != null && typeof process.env === 'object') setEnvironmentDefaults(process.env);\n\n" +
    `export ${list(nodeNames)} from './context_compaction.js';\n` +
    "export { constants } from './constants.js';\n" +
    "export { anthropicSummarizer } from './anthropic.js';\n" +
    summarizerExports +
    errorClass +
    '/** Already initialised at import; kept so isomorphic code can `await init()` everywhere. */\n' +
    'export default async function init() {\n' +
    '  const err = __ccNotLoaded();\n' +
    '  if (err !== undefined) throw err;\n' +
    '}\n' +
    '/** Already initialised at import: nothing to do (the browser entry initialises from bytes). */\n' +
    'export function initSync() {\n' +
    '  const err = __ccNotLoaded();\n' +
    '  if (err !== undefined) throw err;\n' +
    '}\n',
);
writeFileSync(
  pkg + 'workerd.js',
  header +
    '// Cloudflare Workers (workerd): the .wasm is imported as a compiled module (the runtime\n' +
    '// compiles no WebAssembly from bytes), then instantiated synchronously.\n' +
    "import wasmModule from './context_compaction_bg.wasm';\n" +
    "import { initSync as __ccInitSync } from './context_compaction.js';\n\n" +
    '__ccInitSync({ module: wasmModule });\n\n' +
    "import extraModule from './context_compaction_extra_bg.wasm';\n" +
    "import * as extraGlue from './context_compaction_extra.js';\n" +
    '// The second module is compiled with the Worker; instantiated on first use.\n' +
    extraExports('() => {\n    extraGlue.initSync({ module: extraModule });\n    return extraGlue;\n  }', true) +
    `export ${list(nodeNames)} from './context_compaction.js';\n` +
    "export { constants } from './constants.js';\n" +
    "export { anthropicSummarizer } from './anthropic.js';\n" +
    summarizerExports +
    errorClass +
    '/** Already initialised at import; kept so isomorphic code can `await init()` everywhere. */\n' +
    'export default async function init() {}\n' +
    INIT_SYNC_NOOP,
);
// The JavaScript a page loads (the entries' glue, the snippets, the summarizers, the loader of
// the second module) is shipped without whitespace and comments: issue 12 counts what a page
// downloads, and this halves the JS (71 → 36 KB gzip). Names are kept (a console prints a
// `Compactor` as one, a function by its name), but in the snippets (below); each file has a source map beside it
// (`web.js.map`, with the source inside) that browsers' devtools and
// `node --enable-source-maps` read, so a stack trace points at the readable source's lines.
{
  const files = [
    'web.js', 'service-worker.js', 'extras.js', 'constants.js', 'context_compaction.js', 'context_compaction_extra.js', 'count.js', 'count-loader.js', 'context_compaction_count.js', 'defaults.js',
    'anthropic.js', 'anthropic-send.js', 'openai.js', 'openai-send.js', 'langchain.js', 'langchain-send.js', 'options.js', 'summarizer-error.js', 'http.js', 'summary-request.js', 'ai-sdk.js',
    ...readdirSync(pkg + 'snippets', { recursive: true })
      .filter((p) => p.endsWith('.js'))
      .map((p) => `snippets/${p}`),
  ];
  for (const f of files) {
    const text = readFileSync(pkg + f, 'utf8');
    const name = path.basename(f);
    const { code, map } = transformSync(text, {
      format: 'esm',
      minifyWhitespace: true,
      minifySyntax: true,
      // The snippets (the readers and helpers the .wasm imports: internal code, whose
      // exports keep their names) are shipped with short local names as well: 1.7 KB gzip off
      // the count entry's first render, about 3 KB off the page. Their source maps carry the
      // original names and lines: a stack trace read through one (devtools, `node
      // --enable-source-maps`) points at the source's file and line, and names an internal
      // function as the source does (an exported one by its short local name). Not
      // js_error.js: its exported class is public, and a class is named (`.name`, a console)
      // by its binding.
      minifyIdentifiers: f.startsWith('snippets/') && !f.endsWith('/js_error.js'),
      legalComments: 'none',
      target: 'es2022',
      // No banner: each line of one costs a page about 90 bytes gzip per file (the
      // sourceMappingURL comment at the end says where the readable source is).
      sourcemap: 'external',
      // Named apart from the minified file (which has the map's own URL, `web.js`): a trace
      // then points at `web.src.js`, whose text the map holds.
      sourcefile: name.replace(/\.js$/, '.src.js'),
    });
    // esbuild drops comments, among them the ones that tell bundlers to leave count.js's
    // import of a computed URL alone (without them webpack warns "Critical dependency" on
    // every build): put back in the minified text.
    let out = code;
    if (f === 'count.js') {
      out = code.replace('=>import(url)', '=>import(/* webpackIgnore: true */ /* @vite-ignore */ url)');
      if (out === code) throw new Error('package.mjs: count.js has no import(url) to mark for bundlers');
    }
    writeFileSync(pkg + f + '.map', map);
    writeFileSync(pkg + f, `${out}//# sourceMappingURL=${name}.map\n`);
  }
}
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
// `require('context-compaction/count')` where Node cannot require an ES module: the counting
// exports of node.cjs, and loadCompaction() resolving to node.cjs.
{
  writeFileSync(
    pkg + 'count-node.cjs',
    header +
      "// `context-compaction/count` for require() where Node cannot require an ES module.\n" +
      "'use strict';\n" +
      "const main = require('./node.cjs');\n" +
      'module.exports = {\n' +
      COUNT_MAIN_NAMES.map((n) => `  ${n}: main.${n},\n`).join('') +
      '  /** The main entry, loaded already here. */\n' +
      '  loadCompaction: async () => main,\n' +
      '  /** Already initialised at import. */\n' +
      '  default: async function init() {},\n' +
      '  /** Already initialised at import: nothing to do. */\n' +
      '  initSync() {},\n' +
      '};\n' +
      "// Marked as an ES module's CommonJS form (as node.cjs is), so that TypeScript's and Babel's\n" +
      "// `import init from 'context-compaction/count'` take `default` rather than the whole object.\n" +
      "Object.defineProperty(module.exports, '__esModule', { value: true });\n",
  );
}
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
// Now that node.cjs exists, '.' gets every runtime's condition (runtimeConditions, above).
runtimeMeta.exports['.'] = runtimeConditions({ types: './index.d.ts', cjsTypes: './index.d.cts', workerd: './workerd.js', node: './node.js', cjs: './node.cjs', browser: './web.js' });
runtimeMeta.exports['./inline'] = { types: './index.d.ts', default: './inline.js' };
runtimeMeta.exports['./service-worker'] = { types: './index.d.ts', default: './service-worker.js' };
// TypeScript without `exports` (moduleResolution node10, `module: commonjs`) looks for the
// declarations beside the file: inline.d.ts, the main entry's (the same names).
writeFileSync(
  pkg + 'inline.d.ts',
  header + "// The declarations of `context-compaction/inline`: the main entry's.\nexport * from './index.js';\nexport { default } from './index.js';\n",
);
writeFileSync(
  pkg + 'service-worker.d.ts',
  header + "// The declarations of `context-compaction/service-worker`: the main entry's.\nexport * from './index.js';\nexport { default } from './index.js';\n",
);
writeFileSync(
  pkg + 'wasm-url.d.ts',
  header +
    '/**\n' +
    " * The URL of one of the package's .wasm files, as a bundler that emits an imported .wasm as a\n" +
    " * file gives it (esbuild's `--loader:.wasm=file`): pass it to `init({ module_or_path })` or\n" +
    ' * `loadExtras({ module_or_path })`.\n' +
    ' */\n' +
    'declare const url: string;\n' +
    'export default url;\n',
);
runtimeMeta.files = Array.from(
  new Set([...runtimeMeta.files, 'wasm-url.d.ts', 'service-worker.js', 'service-worker.d.ts', 'inline.js', 'inline.d.ts', 'inline-extra.js', 'workerd.js', 'node.cjs', 'index.d.cts', ...CJS_TWINS.map((m) => `${m}.d.cts`)]),
);
runtimeMeta.sideEffects = Array.from(
  new Set([...runtimeMeta.sideEffects, './service-worker.js', './inline.js', './inline-extra.js', './workerd.js', './node.cjs']),
);
writeFileSync(pkg + 'package.json', JSON.stringify(runtimeMeta, null, 2) + '\n');

// The package's own README (for users: install, imports, summarizers, helpers, errors), not the
// repository's development README that wasm-pack copied.
copyFileSync(fileURLToPath(new URL('../docs/package-README.md', import.meta.url)), pkg + 'README.md');
