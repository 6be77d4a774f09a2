// The package as a user installs it: entry points, every export, the constants object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, symlinkSync, writeFileSync, readFileSync, rmSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as cc from '../../pkg/node.js';

const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));

// Every function exported by src/bindings/api.rs (JS names fixed by SPEC.md).
const API = [
  'setEnvironmentDefaults',
  'getConstants',
  'roughTokenCountEstimation',
  'tokenCountWithEstimation',
  'getContextWindowForModel',
  'getMaxOutputTokensForModel',
  'getModelOutputLimits',
  'getEffectiveContextWindowSize',
  'getAutoCompactThreshold',
  'calculateTokenWarningState',
  'isAutoCompactEnabled',
  'shouldAutoCompact',
  'stripImagesFromMessages',
  'stripReinjectedAttachments',
  'groupMessagesByApiRound',
  'parseContextOverflowError',
  'truncateHeadForPTLRetry',
  'microCompact',
  'createCompactBoundaryMessage',
  'buildPostCompactMessages',
  'parseTranscript',
  'serializeTranscript',
];

const EXPECTED_CONSTANTS = {
  AUTOCOMPACT_BUFFER_TOKENS: 13_000,
  WARNING_THRESHOLD_BUFFER_TOKENS: 20_000,
  ERROR_THRESHOLD_BUFFER_TOKENS: 20_000,
  MANUAL_COMPACT_BUFFER_TOKENS: 3_000,
  MAX_OUTPUT_TOKENS_FOR_SUMMARY: 20_000,
  DEFAULT_CONTEXT_WINDOW: 200_000,
  ONE_MILLION_CONTEXT_WINDOW: 1_000_000,
  DEFAULT_MAX_OUTPUT_TOKENS: 32_000,
  MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES: 3,
  MAX_PTL_RETRIES: 3,
  POST_COMPACT_MAX_FILES_TO_RESTORE: 5,
  POST_COMPACT_MAX_TOKENS_PER_FILE: 5_000,
  POST_COMPACT_TOKEN_BUDGET: 50_000,
  POST_COMPACT_MAX_TOKENS_PER_SKILL: 5_000,
  POST_COMPACT_SKILLS_TOKEN_BUDGET: 25_000,
  IMAGE_TOKENS: 2_000,
  MICROCOMPACT_KEEP_RECENT: 5,
  MICROCOMPACT_IDLE_MINUTES: 60,
  CLEARED_TOOL_RESULT_PLACEHOLDER: '[Old tool result content cleared]',
};

function runNode(args, { cwd, env } = {}) {
  const r = spawnSync(process.execPath, args, {
    cwd,
    env: env ?? process.env,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return r;
}

test('the Node entry exports every API function, constants and a no-op default init', async () => {
  for (const name of API) {
    assert.equal(typeof cc[name], 'function', `${name} is exported as a function`);
  }
  assert.equal(typeof cc.constants, 'object');
  assert.equal(typeof cc.default, 'function');
  assert.equal(await cc.default(), undefined, 'init() is a no-op in Node');
  assert.equal(cc.getAutoCompactThreshold('claude-opus-4-6'), 167_000, 'usable after init()');
});

test('the type declarations name every export', () => {
  const dts = readFileSync(join(PKG, 'context_compaction.d.ts'), 'utf8');
  for (const name of API) assert.match(dts, new RegExp(`export function ${name}\\(`), name);
  const index = readFileSync(join(PKG, 'index.d.ts'), 'utf8');
  assert.match(index, /constants/);
  const cdts = readFileSync(join(PKG, 'constants.d.ts'), 'utf8');
  for (const k of Object.keys(EXPECTED_CONSTANTS)) assert.match(cdts, new RegExp(`\\b${k}\\b`), k);
});

test('constants: frozen, with the values of SPEC §4, §8, §9, §10', () => {
  const c = cc.constants;
  assert.ok(Object.isFrozen(c));
  for (const [k, v] of Object.entries(EXPECTED_CONSTANTS)) assert.equal(c[k], v, k);
  assert.equal(typeof c.PTL_MARKER_TEXT, 'string');
  assert.ok(c.PTL_MARKER_TEXT.length > 0);
  // ESM is strict: writing to a frozen object throws instead of failing silently.
  assert.throws(() => {
    c.AUTOCOMPACT_BUFFER_TOKENS = 1;
  }, TypeError);
  assert.throws(() => {
    c.NEW_KEY = 1;
  }, TypeError);
  assert.throws(() => {
    delete c.IMAGE_TOKENS;
  }, TypeError);
  assert.equal(c.AUTOCOMPACT_BUFFER_TOKENS, 13_000);
});

test('getConstants() returns the same values as a fresh plain object', () => {
  const a = cc.getConstants();
  assert.deepEqual({ ...a }, { ...cc.constants });
  a.AUTOCOMPACT_BUFFER_TOKENS = 1;
  assert.equal(cc.getConstants().AUTOCOMPACT_BUFFER_TOKENS, 13_000);
  assert.equal(cc.constants.AUTOCOMPACT_BUFFER_TOKENS, 13_000);
});

function tempProject() {
  const dir = mkdtempSync(join(tmpdir(), 'cc-pkg-test-'));
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(PKG.replace(/\/$/, ''), join(dir, 'node_modules', 'context-compaction'), 'dir');
  return dir;
}

test("import 'context-compaction' by package name, with no init call", (t) => {
  const dir = tempProject();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'use.mjs'),
    `import { getAutoCompactThreshold, tokenCountWithEstimation, constants } from 'context-compaction';
     console.log(JSON.stringify({
       threshold: getAutoCompactThreshold('claude-opus-4-6'),
       count: tokenCountWithEstimation([{ role: 'user', content: 'abcdefgh' }]),
       frozen: Object.isFrozen(constants),
     }));\n`,
  );
  const r = runNode(['use.mjs'], { cwd: dir });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { threshold: 167_000, count: 2, frozen: true });
});

test("require('context-compaction') from CommonJS (Node with require(esm))", (t) => {
  if (!process.features.require_module) {
    t.skip(`this Node (${process.version}) cannot require() ES modules; use import`);
    return;
  }
  const dir = tempProject();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'use.cjs'),
    `const cc = require('context-compaction');
     console.log(JSON.stringify({ t: cc.getAutoCompactThreshold('claude-opus-4-6'), k: cc.constants.MAX_PTL_RETRIES }));\n`,
  );
  const r = runNode(['use.cjs'], { cwd: dir });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { t: 167_000, k: 3 });
});

test('the browser entry (web.js) needs init, then works, and ignores environment variables', () => {
  const script = `
    import { readFileSync } from 'node:fs';
    import init, * as web from ${JSON.stringify(new URL('../../pkg/web.js', import.meta.url).href)};
    let before;
    try { web.getAutoCompactThreshold('claude-opus-4-6'); before = 'worked'; } catch (e) { before = 'threw'; }
    await init({ module_or_path: readFileSync(${JSON.stringify(join(PKG, 'context_compaction_bg.wasm'))}) });
    console.log(JSON.stringify({
      before,
      threshold: web.getAutoCompactThreshold('claude-opus-4-6'),
      enabled: web.isAutoCompactEnabled(),
      frozen: Object.isFrozen(web.constants),
    }));`;
  const r = runNode(['--input-type=module', '-e', script], {
    env: { ...process.env, DISABLE_AUTO_COMPACT: '1' },
  });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.before, 'threw', 'web.js is not usable before init()');
  assert.equal(out.threshold, 167_000);
  assert.equal(out.enabled, true, 'browsers have only config: DISABLE_AUTO_COMPACT is not read');
  assert.equal(out.frozen, true);
});

test('init() given something that is not WebAssembly (an HTML fallback page) says so, and names where it came from', () => {
  const script = `
    import init from ${JSON.stringify(new URL('../../pkg/web.js', import.meta.url).href)};
    try { await init({ module_or_path: new TextEncoder().encode('<!doctype html><html></html>') }); console.log('no error'); }
    catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })); }`;
  const r = runNode(['--input-type=module', '-e', script]);
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.code, 'NOT_INITIALIZED');
  assert.match(out.message, /is not WebAssembly/);
  assert.match(out.message, /HTML page/);
  assert.match(out.message, /bytes given/);
});

test('the minified JS has source maps: a stack through the package points at the lines of the readable sources', (t) => {
  // Every minified file points at its map, and the map holds the sources.
  const minified = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8')).files.includes('*.js.map');
  assert.ok(minified, "package.json's files ship the maps");
  for (const f of ['web.js', 'context_compaction.js', 'anthropic.js', 'extras.js']) {
    const text = readFileSync(join(PKG, f), 'utf8');
    assert.match(text, new RegExp(`//# sourceMappingURL=${f.replace('.', '\\.')}\\.map\\n$`), f);
    const map = JSON.parse(readFileSync(join(PKG, `${f}.map`), 'utf8'));
    assert.deepEqual(map.sources, [f.replace(/\.js$/, '.src.js')], f);
    assert.ok(map.sourcesContent[0].length > 100, `${f}: the map holds the source`);
  }
  // Names are kept: the classes' and the functions'.
  assert.equal(cc.Compactor.name, 'Compactor');
  assert.equal(new cc.ContextCompactionError('m', 'INVALID_ARGUMENT').constructor.name, 'ContextCompactionError');
  assert.equal(cc.anthropicSummarizer.name, 'anthropicSummarizer');
  // A getter of the caller's message sees the package's readers on its stack.
  const dir = tempProject();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'stack.mjs'),
    `import { tokenCountWithEstimation } from 'context-compaction';
     let stack = '';
     tokenCountWithEstimation([{ role: 'user', get content() { stack = new Error().stack; return 'hi'; } }]);
     console.log(stack);\n`,
  );
  const r = runNode(['--enable-source-maps', 'stack.mjs'], { cwd: dir });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /at (contentOf|describeOne) \(.*js_view\.src\.js:\d{2,}:\d+\)/, r.stdout);
});

test("the shipped build writes the caller's value in the reader's messages (Debug of strings kept: -Z fmt-debug=shallow)", async () => {
  await assert.rejects(
    cc.compactConversation([{ type: 'assistant', uuid: 'a', isSidechain: 'no', message: { role: 'assistant', content: 'x' } }], { model: 'claude-sonnet-4-5', summarize: async () => 'x' }),
    (e) => e.code === 'INVALID_MESSAGE' && e.message === 'messages[0]: invalid type: string "no", expected a boolean',
  );
  assert.throws(
    () => cc.shouldAutoCompact([{ role: 'user', content: 'x' }], 'claude-opus-4-6', { querySource: 'compct' }),
    (e) => e.code === 'INVALID_ARGUMENT' && /querySource "compct" is not a query source with a meaning \(did you mean "compact"\?\)/.test(e.message),
  );
});

test('nothing evaluates code from strings: a Compactor without summarize and session-memory compaction work where that is refused (strict CSP, Workers)', (t) => {
  // No shipped JS builds a function from a string.
  const files = [];
  const walk = (d) => {
    for (const f of readdirSync(d)) {
      const p = join(d, f);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(c|m)?js$/.test(f)) files.push(p);
    }
  };
  walk(PKG);
  for (const f of files) assert.doesNotMatch(readFileSync(f, 'utf8'), /new Function\(|\beval\(/, f);
  // And with Node refusing it, the calls that made one work.
  const dir = tempProject();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, 'use.mjs'),
    `import { Compactor, trySessionMemoryCompaction } from 'context-compaction';
     const c = new Compactor({ model: 'claude-sonnet-4-5' });
     c.push({ role: 'user', content: 'hello' });
     const restored = Compactor.restore(c.snapshot(), c.messages, { model: 'claude-sonnet-4-5' });
     const msgs = [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }];
     // No session memory: a coded rejection (an EvalError escaped before, or it never settled).
     const sm = await trySessionMemoryCompaction(msgs, { model: 'claude-sonnet-4-5' }).then((r) => typeof r, (e) => e.name + ':' + e.code);
     console.log(JSON.stringify({ count: c.tokenCount(), restored: restored.tokenCount(), sm }));\n`,
  );
  const r = runNode(['--disallow-code-generation-from-strings', 'use.mjs'], { cwd: dir });
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.count, out.restored);
  assert.ok(out.count > 0);
  assert.match(out.sm, /^(object|ContextCompactionError:[A-Z_]+)$/, out.sm);
});
