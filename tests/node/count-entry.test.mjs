// The `context-compaction/count` entry (count.js, Cargo feature `count`, scripts/build.sh): a
// page's first render loads only the counting module; its answers are the main entry's; the
// first module is compiled only when loadCompaction() is called, once, with the environment
// defaults set before; a failed load is a coded error and the next call tries again.
// Each case runs in a fresh Node process that records every WebAssembly module compiled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SAMPLE, runFresh } from './helpers/fresh-process.mjs';
import { readFileSync, readdirSync } from 'node:fs';
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
    // Other shapes: AI SDK, OpenAI Chat and Responses, LangChain's serialized form.
    const shapes = [
      [{ role: 'user', content: [{ type: 'text', text: 'hi '.repeat(400) }] }, { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'read', input: { path: 'a' } }] }, { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'read', output: { type: 'text', value: 'x'.repeat(3000) } }] }],
      [{ role: 'user', content: 'hi '.repeat(400) }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }] }, { role: 'tool', tool_call_id: 'c1', content: 'x'.repeat(3000) }],
      [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi '.repeat(400) }] }, { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{}' }, { type: 'function_call_output', call_id: 'c1', output: 'x'.repeat(3000) }],
    ];
    for (const s of shapes) {
      same.push([count.tokenCountWithEstimation(s), node.tokenCountWithEstimation(s)]);
      same.push([count.shouldAutoCompact(s, 'gpt-5'), node.shouldAutoCompact(s, 'gpt-5')]);
    }
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
    return { same, errors, nodeErrors, constants: [count.getConstants(), node.getConstants()], codes: [count.errorCodes(), node.errorCodes()], compiled: compiled() };
  `);
  for (const [a, b] of out.same) assert.deepEqual(a, b);
  assert.ok(out.same.length > 50);
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
  assert.deepEqual([...declared].sort(), Object.keys(entry).sort());
  const meta = JSON.parse(readFileSync(PKG + 'package.json', 'utf8'));
  assert.deepEqual(meta.exports['./count'], { types: './count.d.ts', workerd: './count-workerd.js', node: './count-node.js', default: './count.js' });
  for (const f of ['count.js', 'count-node.js', 'count-workerd.js', 'count.d.ts', 'context_compaction_count.js', 'context_compaction_count_bg.wasm']) {
    assert.ok(meta.files.includes(f), `${f} is in package.json "files"`);
  }
});

test('count entry in Node and Workers: the main entry\'s counting exports, ready at import, and loadCompaction() resolves to the main entry', async () => {
  const nodeCount = await import(PKG + 'count-node.js');
  const node = await import(PKG + 'node.js');
  const web = await import(PKG + 'count.js');
  // The same names as the browser variant, but initSync (the main Node entry has none either).
  assert.deepEqual(Object.keys(nodeCount).sort(), Object.keys(web).filter((n) => n !== 'initSync').sort());
  await nodeCount.default(); // a no-op
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
