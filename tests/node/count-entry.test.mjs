// The `context-compaction/count` entry (count.js, Cargo feature `count`, scripts/build.sh): a
// page's first render loads only the counting module; its answers are the main entry's; the
// first module is compiled only when loadCompaction() is called, once, with the environment
// defaults set before; a failed load is a coded error and the next call tries again.
// Each case runs in a fresh Node process that records every WebAssembly module compiled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SAMPLE, runFresh } from './helpers/fresh-process.mjs';
import { readFileSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));
const COUNT = readFileSync(PKG + 'context_compaction_count_bg.wasm').length;
const FIRST = readFileSync(PKG + 'context_compaction_bg.wasm').length;
const SESSIONS = fileURLToPath(new URL('../../../shared/transcripts/', import.meta.url));

/**
 * Runs `body` (an async function body with `count`, the count entry's exports, `PKG`,
 * `readFileSync` and `compiled()`, the byte lengths of the package's modules compiled so far)
 * in a fresh process; returns what it returns.
 */
function run(body) {
  const prelude = `
    import { readFileSync } from 'node:fs';
    const PKG = ${JSON.stringify(PKG)};
    const count = await import(PKG + 'count.js');
  `;
  return runFresh(prelude, body, { ours: [COUNT, FIRST] });
}

const INIT = "await count.default({ module_or_path: readFileSync(PKG + 'context_compaction_count_bg.wasm') });";
const FIRST_BYTES = "{ module_or_path: readFileSync(PKG + 'context_compaction_bg.wasm') }";

test('count entry: before init every function is a coded NOT_INITIALIZED error', () => {
  const out = run(`
    const codes = [];
    for (const call of [() => count.tokenCountWithEstimation([]), () => count.shouldAutoCompact([], 'claude-opus-4-6'), () => count.getConstants()]) {
      try { call(); codes.push('none'); } catch (e) { codes.push(e.code + ' ' + (e instanceof count.ContextCompactionError)); }
    }
    return { codes, compiled: compiled() };
  `);
  assert.deepEqual(out.codes, ['NOT_INITIALIZED true', 'NOT_INITIALIZED true', 'NOT_INITIALIZED true']);
  assert.deepEqual(out.compiled, []);
});

test('count entry: counting compiles the counting module only, and answers as the main entry does on every shape and session', () => {
  const files = readdirSync(SESSIONS).filter((f) => f.endsWith('.jsonl'));
  assert.ok(files.length > 0, 'the shared transcripts are there');
  const out = run(`
    ${INIT}
    const node = await import(PKG + 'node.js'); // the main entry, for comparison (its own instance)
    const sessions = ${JSON.stringify(files.map((f) => SESSIONS + f))};
    const same = [];
    const shapeNames = [];
    const view = await import(PKG + ${JSON.stringify('snippets/')} + (await import('node:fs')).readdirSync(PKG + 'snippets')[0] + '/src/bindings/js_view.js');
    const stats = view.setCountFast(true);
    const routedBefore = stats.routed;
    const models = ['claude-opus-4-6', 'claude-sonnet-4-5[1m]', 'gpt-5', 'unknown-model'];
    for (const f of sessions) {
      const lines = readFileSync(f, 'utf8').split('\\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
      for (const end of [1, Math.floor(lines.length / 2), lines.length]) {
        const part = lines.slice(0, end);
        for (const model of models) {
          same.push([count.tokenCountWithEstimation(part), node.tokenCountWithEstimation(part)]);
          same.push([count.shouldAutoCompact(part, model), node.shouldAutoCompact(part, model)]);
          const opts = { config: { autoCompactWindow: 120000 }, querySource: 'repl_main_thread' };
          same.push([count.shouldAutoCompact(part, model, opts), node.shouldAutoCompact(part, model, opts)]);
          const n = node.tokenCountWithEstimation(part);
          same.push([count.calculateTokenWarningState(n, model), node.calculateTokenWarningState(n, model)]);
        }
      }
    }
    // Every other shape (tests/node/helpers/shapes.mjs) of the shared long session's API view,
    // and the API view itself (Anthropic shape).
    const { SHAPES } = await import(${JSON.stringify(new URL('./helpers/shapes.mjs', import.meta.url).href)});
    const longLines = readFileSync(sessions.find((f) => f.endsWith('cc_long_autocompact_4d5611e5.jsonl')), 'utf8').split('\\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
    const api = node.toApiMessages(longLines);
    const shapes = [['anthropic', api], ...SHAPES.map((x) => [x.name, x.convert(api)])];
    for (const [name, s] of shapes) {
      for (const model of ['gpt-5', 'claude-opus-4-6']) {
        same.push([name, count.tokenCountWithEstimation(s), node.tokenCountWithEstimation(s)]);
        // Without options twice in a row on each module: the per-turn route of both.
        same.push([name, count.shouldAutoCompact(s, model), node.shouldAutoCompact(s, model)]);
        same.push([name, count.shouldAutoCompact(s, model), node.shouldAutoCompact(s, model)]);
      }
    }
    shapeNames.push(...shapes.map(([name]) => name));
    // Bad input: the same coded errors from both.
    const failures = (cc) => [
      () => cc.tokenCountWithEstimation('no'),
      () => cc.shouldAutoCompact([], 7),
      () => cc.getContextWindowForModel('m', { config: { autoCompactWindow: 'x' } }),
      () => cc.tokenCountWithEstimation([{ role: 'user', content: [{ type: 'text', text: 7 }] }]),
    ].map((bad) => {
      try { bad(); return undefined; } catch (e) { return [e.code, e.message]; }
    });
    const errors = failures(count);
    const nodeErrors = failures(node);
    return { same, shapeNames, routed: stats.routed - routedBefore, errors, nodeErrors, constants: [count.getConstants(), node.getConstants()], codes: [count.errorCodes(), node.errorCodes()], compiled: compiled() };
  `);
  for (const pair of out.same) {
    const [a, b] = pair.slice(-2);
    assert.deepEqual(a, b, JSON.stringify(pair.slice(0, -2)));
  }
  assert.ok(out.same.length > 50);
  assert.deepEqual(out.shapeNames, ['anthropic', 'ai-sdk-model', 'ai-sdk-ui', 'openai-chat', 'openai-responses', 'langchain', 'langchain-stored', 'langchain-serialized']);
  assert.ok(out.routed > 20, `the per-turn route settled calls of both modules in turn (${out.routed})`);
  assert.deepEqual(out.errors, out.nodeErrors, 'the same coded errors');
  assert.ok(out.errors.every((e) => e !== undefined && typeof e[0] === 'string'), JSON.stringify(out.errors));
  assert.deepEqual(out.constants[0], out.constants[1]);
  assert.deepEqual(out.codes[0], out.codes[1]);
  // The counting module, then the main entry's first module (node.js compiles it at import).
  assert.deepEqual(out.compiled, [COUNT, FIRST]);
});

test('count entry: loadCompaction() compiles the first module once, on demand, with the environment defaults set before', () => {
  const out = run(`
    ${INIT}
    count.setEnvironmentDefaults({ DISABLE_AUTO_COMPACT: '1' });
    const before = compiled();
    const enabledBefore = count.isAutoCompactEnabled();
    const [full, again] = await Promise.all([count.loadCompaction(${FIRST_BYTES}), count.loadCompaction()]);
    const third = await count.loadCompaction();
    ${SAMPLE}
    const r = await full.compactConversation(messages, { model: 'claude-opus-4-6', summarize: api });
    const chat = new full.Compactor({ model: 'claude-opus-4-6', summarize: api, messages });
    const enabledFull = full.isAutoCompactEnabled();
    count.setEnvironmentDefaults({});
    const afterReset = [count.isAutoCompactEnabled(), full.isAutoCompactEnabled()];
    return {
      before, after: compiled(), enabledBefore, enabledFull, afterReset,
      same: full === again && again === third,
      summary: r.summary.includes('from the API'),
      tokens: chat.tokenCount() > 0,
      names: ['compactConversation', 'Compactor', 'microCompact', 'anthropicSummarizer', 'loadExtras'].every((n) => n in full),
    };
  `);
  assert.deepEqual(out.before, [COUNT], 'only the counting module before loadCompaction()');
  assert.deepEqual(out.after, [COUNT, FIRST], 'the first module once, on demand');
  assert.equal(out.enabledBefore, false);
  assert.equal(out.enabledFull, false, 'defaults set before the load reach the first module');
  assert.deepEqual(out.afterReset, [true, true], 'and defaults set after it reach both');
  assert.ok(out.same && out.summary && out.tokens && out.names, JSON.stringify(out));
});

test('count entry: a failed loadCompaction() is a coded NOT_INITIALIZED error with the cause, and the next call tries again', () => {
  const out = run(`
    ${INIT}
    let first;
    try { await count.loadCompaction({ module_or_path: new Uint8Array([0, 1, 2, 3]) }); } catch (e) {
      first = { code: e.code, coded: e instanceof count.ContextCompactionError, message: e.message, cause: e.cause !== undefined };
    }
    const full = await count.loadCompaction(${FIRST_BYTES});
    return { first, loaded: typeof full.microCompact === 'function', counted: count.tokenCountWithEstimation([{ role: 'user', content: 'hi' }]) };
  `);
  assert.equal(out.first.code, 'NOT_INITIALIZED');
  assert.ok(out.first.coded && out.first.cause, JSON.stringify(out.first));
  assert.match(out.first.message, /^loadCompaction\(\) could not load the first module/);
  assert.ok(out.loaded);
  assert.ok(out.counted > 0, 'the counting module still works');
});

test('count entry: count.d.ts declares what count.js exports, and package.json maps the subpath', async () => {
  const entry = await import(PKG + 'count.js');
  const dts = readFileSync(PKG + 'count.d.ts', 'utf8');
  const declared = new Set([
    ...[...dts.matchAll(/^export \{([^}]*)\} from/gm)].flatMap((m) => m[1].split(',').map((n) => n.trim()).filter(Boolean)),
    ...[...dts.matchAll(/^export (?:declare )?function (\w+)/gm)].map((m) => m[1]),
    ...(/^export default function/m.test(dts) ? ['default'] : []),
  ]);
  // Every form exports what the declarations say: the browser's, Node's (ES and CommonJS) and
  // Workers' (read: it imports workerd.js, which only workerd runs).
  assert.deepEqual([...declared].sort(), Object.keys(entry).sort());
  assert.deepEqual(Object.keys(await import(PKG + 'count-node.js')).sort(), [...declared].sort());
  assert.deepEqual(Object.keys(createRequire(import.meta.url)(PKG + 'count-node.cjs')).sort(), [...declared].sort());
  const workerd = readFileSync(PKG + 'count-workerd.js', 'utf8');
  const workerdNames = [
    ...[...workerd.matchAll(/^export \{([^}]*)\} from/gm)].flatMap((m) => m[1].split(',').map((n) => n.trim()).filter(Boolean)),
    ...[...workerd.matchAll(/^export (?:async )?function (\w+)/gm)].map((m) => m[1]),
    ...(/^export default/m.test(workerd) ? ['default'] : []),
  ];
  assert.deepEqual(workerdNames.sort(), [...declared].sort());
  // The CommonJS declarations are the ES ones over index.d.cts.
  assert.equal(readFileSync(PKG + 'count.d.cts', 'utf8'), dts.replaceAll("'./index.js'", "'./index.cjs'"));
  const meta = JSON.parse(readFileSync(PKG + 'package.json', 'utf8'));
  assert.deepEqual(meta.exports['./count'], {
    bun: { types: './count.d.ts', default: './count-node.js' },
    workerd: { types: './count.d.ts', default: './count-workerd.js' },
    node: {
      'module-sync': { types: './count.d.ts', default: './count-node.js' },
      require: { types: './count.d.cts', default: './count-node.cjs' },
      types: './count.d.ts',
      default: './count-node.js',
    },
    types: './count.d.ts',
    default: './count.js',
  });
  for (const f of ['count.js', 'count-node.js', 'count-node.cjs', 'count-workerd.js', 'count.d.ts', 'count.d.cts', 'defaults.js', 'context_compaction_count.js', 'context_compaction_count_bg.wasm']) {
    assert.ok(meta.files.includes(f), `${f} is in package.json "files"`);
  }
});

test('count entry in Node and Workers: the main entry\'s counting exports, ready at import, and loadCompaction() resolves to the main entry', async () => {
  const nodeCount = await import(PKG + 'count-node.js');
  const node = await import(PKG + 'node.js');
  const web = await import(PKG + 'count.js');
  // The same names as the browser form (initSync and init: no-ops here).
  assert.deepEqual(Object.keys(nodeCount).sort(), Object.keys(web).sort());
  await nodeCount.default();
  nodeCount.initSync();
  const messages = [{ role: 'user', content: 'Read the file. '.repeat(100) }];
  assert.equal(nodeCount.tokenCountWithEstimation(messages), node.tokenCountWithEstimation(messages));
  assert.equal(nodeCount.tokenCountWithEstimation, node.tokenCountWithEstimation, 'the main entry\'s own functions');
  assert.equal(await nodeCount.loadCompaction(), node);
  assert.equal(nodeCount.ContextCompactionError, node.ContextCompactionError);
  // Workers: the same file over workerd.js (run in workerd by tests/runtimes/ for the main entry).
  const workerd = readFileSync(PKG + 'count-workerd.js', 'utf8');
  assert.match(workerd, /from"\.\/workerd\.js"|from '\.\/workerd\.js'/);
  assert.doesNotMatch(workerd, /node\.js|count_bg|context_compaction_count/);
});

test('count entry: environment defaults agree in both directions, whichever entry is told and whenever', () => {
  const out = run(`
    const model = 'claude-opus-4-6';
    const web = await import(PKG + 'web.js');
    ${INIT}
    const both = (full) => [count.getAutoCompactThreshold(model), full === undefined ? null : full.getAutoCompactThreshold(model), full === undefined ? null : full.isAutoCompactEnabled()];
    const seen = {};
    // Told through the count entry before the first module loads: it gets them at its init.
    count.setEnvironmentDefaults({ CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '50' });
    seen.beforeLoad = both(undefined);
    const full = await count.loadCompaction(${FIRST_BYTES});
    seen.sameModule = full === web;
    seen.atLoad = both(full);
    // Told through the main entry (what loadCompaction() resolves to): the count entry too.
    full.setEnvironmentDefaults({ CLAUDE_CODE_AUTO_COMPACT_WINDOW: '50000' });
    seen.viaMain = both(full);
    // And through the count entry again.
    count.setEnvironmentDefaults({ DISABLE_AUTO_COMPACT: '1' });
    seen.viaCount = [...both(full), count.isAutoCompactEnabled()];
    // A bad value is refused by the entry told, and shared with none.
    try { full.setEnvironmentDefaults(7); } catch (e) { seen.bad = e.code; }
    seen.afterBad = [...both(full), count.isAutoCompactEnabled()];
    return seen;
  `);
  assert.deepEqual(out.beforeLoad, [90_000, null, null]);
  assert.equal(out.sameModule, true);
  assert.deepEqual(out.atLoad, [90_000, 90_000, true]);
  assert.deepEqual(out.viaMain, [17_000, 17_000, true]);
  assert.deepEqual(out.viaCount, [167_000, 167_000, false, false]);
  assert.equal(out.bad, 'INVALID_ARGUMENT');
  assert.deepEqual(out.afterBad, [167_000, 167_000, false, false]);
});

test('count entry: the main entry initialised first, with its own defaults: the count entry joins with them', () => {
  const out = run(`
    const web = await import(PKG + 'web.js');
    await web.default(${FIRST_BYTES});
    web.setEnvironmentDefaults({ CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '50' });
    ${INIT}
    const full = await count.loadCompaction();
    return { count: count.getAutoCompactThreshold('claude-opus-4-6'), main: full.getAutoCompactThreshold('claude-opus-4-6'), same: full === web, compiled: compiled() };
  `);
  assert.deepEqual(out, { count: 90_000, main: 90_000, same: true, compiled: [FIRST, COUNT] });
});

test('a tokenizer that calls the package again: the nested call counts with its own tokenizer or none, in one module and across two', () => {
  const out = run(`
    ${INIT}
    const full = await count.loadCompaction(${FIRST_BYTES});
    const outer = [{ role: 'user', content: 'hello world '.repeat(50) }, { role: 'assistant', content: 'sure '.repeat(30) }];
    const inner = [{ role: 'user', content: 'abc '.repeat(100) }];
    const results = {};
    for (const [name, nested] of [['same module', full], ['other module', count]]) {
      const plain = nested.tokenCountWithEstimation(inner, {});
      const byOne = nested.tokenCountWithEstimation(inner, { tokenCounter: () => 1 });
      const expected = full.tokenCountWithEstimation(outer, { tokenCounter: (s) => s.length });
      const seen = [];
      const a = full.tokenCountWithEstimation(outer, { tokenCounter: (s) => { seen.push(nested.tokenCountWithEstimation(inner, {})); return s.length; } });
      const b = full.tokenCountWithEstimation(outer, { tokenCounter: (s) => { seen.push(nested.tokenCountWithEstimation(inner, { tokenCounter: () => 1 }) - byOne + plain); return s.length; } });
      results[name] = { a, b, expected, nested: [...new Set(seen)], plain };
    }
    return results;
  `);
  for (const [name, r] of Object.entries(out)) {
    assert.equal(r.a, r.expected, `${name}: the outer count keeps its tokenizer`);
    assert.equal(r.b, r.expected, `${name}: a nested call with its own tokenizer leaves the outer one in place`);
    assert.deepEqual(r.nested, [r.plain], `${name}: the nested calls count with their own tokenizer or none`);
  }
});

test('count entry: a trap in the counting module is INSTANCE_RESET, the next call runs on a fresh instance, and both modules stay right', async () => {
  const { trapWhenNull } = await import('./helpers/trap.mjs');
  const { cpSync, mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dir = mkdtempSync(join(tmpdir(), 'cc-count-trap-'));
  try {
    cpSync(PKG, dir, { recursive: true });
    const wasm = join(dir, 'context_compaction_count_bg.wasm');
    writeFileSync(wasm, trapWhenNull(readFileSync(wasm), (ex) => ex.filter((e) => e.name === 'getMaxOutputTokensForModel')));
    const out = runFresh(
      `import { readFileSync } from 'node:fs';
       const count = await import(${JSON.stringify(join(dir, 'count.js'))});
       await count.default({ module_or_path: readFileSync(${JSON.stringify(wasm)}) });`,
      `
      const full = await count.loadCompaction({ module_or_path: readFileSync(${JSON.stringify(join(dir, 'context_compaction_bg.wasm'))}) });
      const lines = readFileSync(${JSON.stringify(SESSIONS + 'cc_small_short.jsonl')}, 'utf8').split('\\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l));
      count.setEnvironmentDefaults({ CLAUDE_CODE_AUTO_COMPACT_WINDOW: '50000' });
      const model = 'claude-opus-4-6';
      const answers = () => [count.tokenCountWithEstimation(lines), full.tokenCountWithEstimation(lines), count.shouldAutoCompact(lines, model), full.shouldAutoCompact(lines, model), count.getAutoCompactThreshold(model), full.getAutoCompactThreshold(model)];
      const before = answers();
      let trap;
      try { count.getMaxOutputTokensForModel('claude-sonnet-4-5', null); } catch (e) { trap = e.code; }
      const after = answers();
      return { before, after, trap };
    `,
    );
    assert.equal(out.trap, 'INSTANCE_RESET');
    assert.deepEqual(out.after, out.before, 'the fresh instance answers the same, with the defaults given before the trap');
    assert.equal(out.before[0], out.before[1]);
    assert.equal(out.before[4], 17_000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('count entry: past the warning threshold (or with a compaction due) the first module is compiled ahead, once; prefetchCompaction: false leaves it to loadCompaction()', () => {
  const out = run(`
    const model = 'claude-opus-4-6';
    await count.default({ module_or_path: readFileSync(PKG + 'context_compaction_count_bg.wasm'), prefetchCompaction: { module_or_path: readFileSync(PKG + 'context_compaction_bg.wasm') } });
    const seen = {};
    const settle = () => new Promise((ok) => setTimeout(ok, 50));
    count.calculateTokenWarningState(10_000, model);
    count.shouldAutoCompact([{ role: 'user', content: 'hi' }], model);
    await settle();
    seen.below = compiled();
    seen.warned = count.calculateTokenWarningState(190_000, model).isAboveWarningThreshold;
    count.calculateTokenWarningState(190_000, model); // again while it compiles: one compilation
    await settle();
    seen.ahead = compiled();
    const full = await count.loadCompaction();
    seen.after = compiled();
    seen.works = typeof full.compactConversation === 'function' && full.getAutoCompactThreshold(model) === count.getAutoCompactThreshold(model);
    return seen;
  `);
  assert.deepEqual(out.below, [COUNT], 'nothing ahead below the warning threshold');
  assert.equal(out.warned, true);
  assert.deepEqual(out.ahead, [COUNT, FIRST], 'compiled ahead, from the place given');
  assert.deepEqual(out.after, [COUNT, FIRST], 'loadCompaction() instantiates what was compiled ahead');
  assert.ok(out.works);

  const due = run(`
    await count.default({ module_or_path: readFileSync(PKG + 'context_compaction_count_bg.wasm'), prefetchCompaction: { module_or_path: readFileSync(PKG + 'context_compaction_bg.wasm') } });
    const answer = count.shouldAutoCompact([{ role: 'user', content: 'x'.repeat(800_000) }], 'claude-opus-4-6');
    await new Promise((ok) => setTimeout(ok, 50));
    return { answer, compiled: compiled() };
  `);
  assert.deepEqual(due, { answer: true, compiled: [COUNT, FIRST] }, 'a compaction due compiles it ahead too');

  const off = run(`
    await count.default({ module_or_path: readFileSync(PKG + 'context_compaction_count_bg.wasm'), prefetchCompaction: false });
    count.calculateTokenWarningState(190_000, 'claude-opus-4-6');
    await new Promise((ok) => setTimeout(ok, 50));
    const before = compiled();
    await count.loadCompaction(${FIRST_BYTES});
    return { before, after: compiled() };
  `);
  assert.deepEqual(off, { before: [COUNT], after: [COUNT, FIRST] });

  // Off, then on again by a later init() (the module is initialised already), with \`true\`:
  // the default place, next to count.js (which Node's fetch cannot read: it fails quietly).
  const again = run(`
    const urls = [];
    globalThis.fetch = async (url) => { urls.push(String(url)); throw new TypeError('no network'); };
    await count.default({ module_or_path: readFileSync(PKG + 'context_compaction_count_bg.wasm'), prefetchCompaction: false });
    await count.default({ prefetchCompaction: true });
    count.calculateTokenWarningState(190_000, 'claude-opus-4-6');
    await new Promise((ok) => setTimeout(ok, 50));
    return urls.map((u) => u.slice(u.lastIndexOf('/') + 1));
  `);
  assert.deepEqual(again, ['context_compaction_bg.wasm']);
});

test('count entry: a load ahead that fails stays quiet and is not tried ahead again at once; the page\'s own loadCompaction(input) is never held by it', () => {
  const out = run(`
    const urls = [];
    globalThis.fetch = async (url) => { urls.push(String(url)); throw new TypeError('offline'); };
    await count.default({ module_or_path: readFileSync(PKG + 'context_compaction_count_bg.wasm'), prefetchCompaction: { module_or_path: 'https://cdn.invalid/first.wasm' } });
    const settle = () => new Promise((ok) => setTimeout(ok, 50));
    const states = [];
    for (let i = 0; i < 5; i++) {
      states.push(count.calculateTokenWarningState(190_000, 'claude-opus-4-6').isAboveWarningThreshold);
      await settle();
    }
    const attempts = urls.length;
    // A load ahead in flight (a fetch that never answers) while the page loads with its own bytes.
    globalThis.fetch = () => new Promise(() => {});
    await count.default({ prefetchCompaction: { module_or_path: 'https://cdn.invalid/slow.wasm' } });
    count.calculateTokenWarningState(190_000, 'claude-opus-4-6');
    const full = await count.loadCompaction(${FIRST_BYTES});
    return { attempts, states, loaded: typeof full.microCompact === 'function', compiled: compiled() };
  `);
  assert.equal(out.attempts, 1, 'one attempt ahead, not one per call');
  assert.deepEqual(out.states, [true, true, true, true, true], 'the answers are unchanged by the failed load');
  assert.ok(out.loaded, 'loadCompaction(bytes) loads while a load ahead is pending');
  assert.deepEqual(out.compiled, [COUNT, FIRST]);
});

test('environment defaults are shared as they were given: a later change to the page\'s object reaches no entry', () => {
  const out = run(`
    ${INIT}
    const env = { DISABLE_AUTO_COMPACT: '1' };
    count.setEnvironmentDefaults(env);
    delete env.DISABLE_AUTO_COMPACT;
    const full = await count.loadCompaction(${FIRST_BYTES});
    return [count.isAutoCompactEnabled(), full.isAutoCompactEnabled()];
  `);
  assert.deepEqual(out, [false, false]);
});

test('initSync joins the shared defaults as init does, in both entries', () => {
  const out = run(`
    const web = await import(PKG + 'web.js');
    web.initSync({ module: readFileSync(PKG + 'context_compaction_bg.wasm') });
    count.initSync({ module: readFileSync(PKG + 'context_compaction_count_bg.wasm') });
    web.setEnvironmentDefaults({ DISABLE_AUTO_COMPACT: '1' });
    const a = [count.isAutoCompactEnabled(), web.isAutoCompactEnabled()];
    count.setEnvironmentDefaults({});
    const b = [count.isAutoCompactEnabled(), web.isAutoCompactEnabled()];
    return { a, b };
  `);
  assert.deepEqual(out, { a: [false, false], b: [true, true] });
});
