// The package's second WebAssembly module (offlineSummarizer, previewCompaction, simulateSession;
// Cargo feature `extra`, scripts/build.sh): never compiled by a program that only counts and
// compacts with an API summarizer, compiled once on first use, in every entry Node can load
// (node.js, node.cjs, inline.js, web.js), and given the same environment defaults as the first.
// Each case runs in a fresh Node process that records every WebAssembly module compiled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SAMPLE, runFresh } from './helpers/fresh-process.mjs';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));
const FIRST = readFileSync(PKG + 'context_compaction_bg.wasm').length;
const SECOND = readFileSync(PKG + 'context_compaction_extra_bg.wasm').length;

/**
 * Runs `body` (an async function body with `cc`, the entry's exports, and `compiled()`, the
 * byte lengths of the modules compiled so far) in a fresh process; returns what it returns.
 */
function run(entry, body, env = {}) {
  const load = entry.endsWith('.cjs')
    ? `import { createRequire } from 'node:module'; const require = createRequire(${JSON.stringify(PKG)}); const cc = require(${JSON.stringify(PKG + entry)});`
    : `const cc = await import(${JSON.stringify(PKG + entry)});`;
  return runFresh(load, body, { env });
}

const COMMON = `${SAMPLE}
  const firstUse = async () => {
    const count = cc.tokenCountWithEstimation(messages);
    const r = await cc.compactConversation(messages, { model, summarize: api });
    const chat = new cc.Compactor({ model, summarize: api, messages });
    await chat.compact();
    return { count, summary: r.summary };
  };
`;

for (const entry of ['node.js', 'node.cjs', 'inline.js']) {
  test(`${entry}: the second module is compiled on first use, once, and answers as the first expects`, () => {
    const out = run(entry, `${COMMON}
      const base = await firstUse();
      const before = compiled();
      const p = await cc.previewCompaction(messages, { model });
      const afterPreview = compiled();
      const s = await cc.simulateSession('{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1"}\\n', { policies: ['claude-code'] });
      const offline = await cc.compactConversation(messages, { model, summarize: cc.offlineSummarizer() });
      await cc.loadExtras();
      return { base, before, afterPreview, after: compiled(), threshold: p.threshold, expected: cc.getAutoCompactThreshold(model),
        tokensBefore: p.tokensBefore, policies: s.policies.map((x) => x.name), offline: offline.summary.length };
    `);
    assert.equal(out.base.summary, 'from the API');
    assert.ok(out.base.count > 100);
    assert.deepEqual(out.before.filter((n) => n === SECOND), [], 'not compiled before its first use');
    assert.ok(out.before.includes(FIRST), `the first module is compiled at import: ${out.before}`);
    assert.deepEqual(out.afterPreview.filter((n) => n === SECOND), [SECOND], 'compiled at the first previewCompaction');
    assert.deepEqual(out.after.filter((n) => n === SECOND), [SECOND], 'and never again');
    assert.equal(out.threshold, out.expected);
    assert.equal(out.tokensBefore, out.base.count);
    assert.deepEqual(out.policies, ['claude-code']);
    assert.ok(out.offline > 50);
  });
}

test('node.js: a bad offlineSummarizer option throws at once (the module loads synchronously in Node)', () => {
  const out = run('node.js', `
    try { cc.offlineSummarizer({ maxTokens: 'many' }); return 'no error'; } catch (e) { return { code: e.code, message: e.message, loaded: compiled().length }; }
  `);
  assert.equal(out.code, 'INVALID_ARGUMENT');
  assert.match(out.message, /maxTokens/);
  assert.equal(out.loaded, 2);
});

test('the environment defaults reach the second module, given before or after it loads', () => {
  const out = run(
    'node.js',
    `
    const model = 'claude-opus-4-6';
    const m = [{ role: 'user', content: 'hello' }];
    const fromEnv = [(await cc.previewCompaction(m, { model })).threshold, cc.getAutoCompactThreshold(model)];
    cc.setEnvironmentDefaults({ CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '60' });
    const after = [(await cc.previewCompaction(m, { model })).threshold, cc.getAutoCompactThreshold(model)];
    cc.setEnvironmentDefaults({});
    const cleared = [(await cc.previewCompaction(m, { model })).threshold, cc.getAutoCompactThreshold(model)];
    return { fromEnv, after, cleared };
  `,
    { CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '50' },
  );
  assert.equal(out.fromEnv[0], out.fromEnv[1]);
  assert.equal(out.fromEnv[0], 90_000, '50 % of the 180K effective window, read from process.env at import');
  assert.deepEqual(out.after, [108_000, 108_000]);
  assert.deepEqual(out.cleared, [167_000, 167_000]);
});

test('web.js in Node: no file fetch, so the first use fails with a coded NOT_INITIALIZED, and loadExtras({ module_or_path }) recovers', () => {
  const out = run('web.js', `
    await cc.default({ module_or_path: (await import('node:fs')).readFileSync(${JSON.stringify(PKG + 'context_compaction_bg.wasm')}) });
    const m = [{ role: 'user', content: 'hello' }];
    const lazy = cc.offlineSummarizer({ maxTokens: 500 });
    let first;
    try { await cc.previewCompaction(m, { model: 'claude-opus-4-6' }); first = 'no error'; } catch (e) { first = { code: e.code, message: e.message, cause: e.cause !== undefined }; }
    await cc.loadExtras({ module_or_path: (await import('node:fs')).readFileSync(${JSON.stringify(PKG + 'context_compaction_extra_bg.wasm')}) });
    const p = await cc.previewCompaction(m, { model: 'claude-opus-4-6' });
    const answer = await lazy({ model: 'x', max_tokens: 100, messages: [{ role: 'user', content: 'please fix /src/a.rs' }] }, {});
    return { first, threshold: p.threshold, lazy: typeof answer === 'object', compiled: compiled().filter((n) => n === ${SECOND}).length };
  `);
  assert.equal(out.first.code, 'NOT_INITIALIZED');
  assert.match(out.first.message, /second module/);
  assert.equal(out.first.cause, true);
  assert.equal(out.threshold, 167_000);
  assert.equal(out.lazy, true, 'a summarizer made before the module loaded works once it has');
  assert.equal(out.compiled, 1);
});

test('offlineSummarizer refuses what is not a request (no summary of nothing)', async () => {
  const cc = await import('../../pkg/node.js');
  const summarize = cc.offlineSummarizer();
  for (const bad of [null, undefined, {}, { messages: 5 }, 'hello']) {
    await assert.rejects(summarize(bad, {}), (e) => e.code === 'INVALID_ARGUMENT' && /request must be a Messages API request body/.test(e.message), JSON.stringify(bad));
  }
  const ok = await summarize({ model: 'm', max_tokens: 1000, messages: [{ role: 'user', content: 'Fix the parser in src/parse.rs.' }] }, {});
  assert.match(JSON.stringify(ok.content), /summary/);
});
