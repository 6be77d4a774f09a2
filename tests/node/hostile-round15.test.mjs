// Fifteenth round of hostile inputs (the probe's findings): refusing a value whose JSON cannot
// be written or read no longer leaks a slot of the externref table on every call (the glue of
// js-sys's `catch` imports leaks one per throw: JSON.parse/JSON.stringify now run in JS, caught
// there); an async `tokenCounter` is refused naming the Promise, which is settled so that its
// rejection does not end the Node process, and a tokenizer is not asked again after its first
// problem; messages about huge numbers or long strings name the bound and stay short; a sparse
// list with a huge length in the context (tools, pinned, an array readFileState) is refused at
// once, where it was copied element by element (a trap at 5e7, Node out of memory at 2^32 − 1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));

// Runs `code` (an ES module) in a fresh Node; its stdout.
function run(code) {
  return execFileSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 240_000 }).trim();
}

const model = 'claude-sonnet-4-5';

test('refusing a value whose JSON cannot be read or written leaves the externref tables flat', () => {
  const out = run(`
    const L = await import(${JSON.stringify(PKG + 'node.js')});
    const first = (await import(${JSON.stringify(PKG + 'context_compaction.js')})).initSync();
    const off = await L.offlineSummarizer();
    const second = (await import(${JSON.stringify(PKG + 'context_compaction_extra.js')})).initSync();
    const cyc = {}; cyc.self = cyc;
    const msgs = [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }];
    const cases = {
      restore: [first, () => L.Compactor.restore('{"format":', msgs, { model: '${model}' })],
      overflow: [first, () => L.parseContextOverflowError({ status: 400, body: cyc })],
      apply: [first, () => L.applyApiCompaction(msgs, { content: [{ type: 'compaction', content: 's' }], usage: cyc })],
      offline: [second, () => off({ messages: [], x: 5n }, {})],
    };
    const out = {};
    for (const [k, [w, f]] of Object.entries(cases)) {
      const go = async (n) => { let e; for (let i = 0; i < n; i++) { try { await f(); } catch (x) { e = x; } } return e; };
      await go(100);
      const a = w.__wbindgen_externrefs.length;
      const e = await go(3000);
      out[k] = { slots: w.__wbindgen_externrefs.length - a, code: e?.code ?? null, message: e?.message ?? null };
    }
    console.log(JSON.stringify(out));`);
  const r = JSON.parse(out);
  // Before: about one slot per call (restore, overflow, apply, offline: thousands each).
  for (const [k, v] of Object.entries(r)) assert.ok(v.slots < 100, `${k}: +${v.slots} slots`);
  assert.equal(r.restore.code, 'INVALID_SNAPSHOT');
  assert.match(r.restore.message, /not JSON text \(.+\)/);
  assert.equal(r.overflow.code, null); // answered null: not an overflow
  assert.equal(r.apply.code, 'INVALID_ARGUMENT');
  assert.match(r.apply.message, /response\.usage cannot be read as JSON \(.*circular/);
  assert.equal(r.offline.code, 'INVALID_ARGUMENT');
  assert.match(r.offline.message, /cannot be read as JSON \(.*BigInt/);
});

test('an async tokenCounter is refused naming the Promise, whose rejection is not left unhandled', () => {
  const out = run(`
    const L = await import(${JSON.stringify(PKG + 'node.js')});
    let unhandled = 0;
    process.on('unhandledRejection', () => { unhandled++; });
    const msgs = [];
    for (let i = 0; i < 20; i++) msgs.push({ role: 'user', content: 'question ' + i }, { role: 'assistant', content: [{ type: 'text', text: 'answer ' + i }] });
    const failing = async () => { throw new Error('count_tokens unreachable'); };
    const errs = [];
    try { L.tokenCountWithEstimation(msgs, { tokenCounter: failing }); } catch (e) { errs.push(e); }
    try { new L.Compactor({ model: '${model}', messages: msgs, tokenCounter: failing }); } catch (e) { errs.push(e); }
    try { await L.compactConversation(msgs, { model: '${model}', summarize: async () => 'summary', tokenCounter: failing }); } catch (e) { errs.push(e); }
    await new Promise((r) => setTimeout(r, 50));
    console.log(JSON.stringify({ unhandled, errs: errs.map((e) => [e.code, e.message]) }));`);
  const r = JSON.parse(out);
  // Before: 80 unhandled rejections (each one ends a Node process by default), "it returned object".
  assert.equal(r.unhandled, 0);
  assert.equal(r.errs.length, 3);
  for (const [code, message] of r.errs) {
    assert.equal(code, 'INVALID_ARGUMENT');
    assert.match(message, /tokenCounter must return a finite number ≥ 0; it returned a Promise \(it must count synchronously\)/);
  }
});

test('a tokenizer is not asked again after its first problem, and a thrown value without text is its error', () => {
  const out = run(`
    const L = await import(${JSON.stringify(PKG + 'node.js')});
    const msgs = [];
    for (let i = 0; i < 60; i++) msgs.push({ role: 'user', content: 'question ' + i + ' ' + 'x'.repeat(3000) }, { role: 'assistant', content: [{ type: 'text', text: 'answer ' + i }] });
    let calls = 0;
    const down = () => { calls++; throw new Error('down'); };
    const out = {};
    try { L.tokenCountWithEstimation(msgs, { tokenCounter: down }); } catch (e) { out.count = [e.code, e.message, calls]; }
    calls = 0;
    try { await L.compactConversation(msgs, { model: '${model}', summarize: async () => 'summary', tokenCounter: down }); } catch (e) { out.compact = [e.code, e.message, calls]; }
    try { L.tokenCountWithEstimation(msgs, { tokenCounter: () => { throw Object.create(null); } }); } catch (e) { out.noText = [e.code, e.message]; }
    console.log(JSON.stringify(out));`);
  const r = JSON.parse(out);
  // Before: called for every text (120 times in one count, 120 per compaction).
  assert.deepEqual(r.count, ['INVALID_ARGUMENT', 'options.tokenCounter threw: down', 1]);
  assert.deepEqual(r.compact, ['INVALID_ARGUMENT', 'context.tokenCounter threw: down', 1]);
  // Before: INVALID_MESSAGE "messages[0]: reading the messages threw: Cannot convert object to primitive value".
  assert.deepEqual(r.noText, ['INVALID_ARGUMENT', 'options.tokenCounter threw: a non-Error object']);
});

test('messages about a huge number or a long string name the bound and stay short', async () => {
  const L = await import(PKG + 'node.js');
  const cases = [
    [() => L.buildApiContextManagement({ clearToolUses: true, triggerInputTokens: 1e300 }), /triggerInputTokens must be a finite number from 0 to 1e15, got 1e\+300$/],
    [() => L.buildApiContextManagement({ clearToolUses: true, keepToolUses: 1e300 }), /got 1e\+300$/],
    [() => L.buildApiContextManagement({ compact: true, compactTriggerInputTokens: 1e300 }), /at least 50000 \(the API's minimum\) and at most 1e15, got 1e\+300$/],
    [() => L.buildApiContextManagement({ clearThinking: true, thinkingKeep: 'x'.repeat(1e6) }), /got "x+…$/],
    [() => new L.Compactor({ model, preemptive: { earlyLine: 1e300 } }), /earlyLine is implausibly large \(1e\+300; at most 1e15\)$/],
  ];
  for (const [f, re] of cases) {
    // Before: 301 digits ("must be a finite, non-negative number"), or the 1 MB string whole.
    assert.throws(f, (e) => typeof e.code === 'string' && e.message.length < 200 && re.test(e.message), String(re));
  }
});

test('a sparse list with a huge length in the context is refused at once, without a trap or running out of memory', () => {
  const code = (extra) => `
    const L = await import(${JSON.stringify(PKG + 'node.js')});
    const bystander = new L.Compactor({ model: '${model}', messages: [{ role: 'user', content: 'hello' }] });
    const msgs = [{ role: 'user', content: 'question' }, { role: 'assistant', content: 'answer' }, { role: 'user', content: 'more' }];
    const sparse = (first, n) => { const a = first === undefined ? [] : [first]; a.length = n; return a; };
    const t0 = Date.now();
    let e;
    try { await L.compactConversation(msgs, { model: '${model}', summarize: async () => 'summary', ${extra} }); } catch (x) { e = x; }
    console.log(JSON.stringify({ ms: Date.now() - t0, code: e?.code, message: e?.message, bystander: bystander.tokenCount() }));`;
  const cases = [
    // Before: INSTANCE_RESET after ~5 s (the copy passed the externref table's limit).
    ['tools: sparse({ name: "x" }, 5e7)', 'context.tools must be an array'],
    ['pinned: sparse("x", 5e7)', 'context.pinned must be an array'],
    // Before: refused after ~9 s.
    ['agents: sparse(undefined, 2 ** 32 - 1)', 'context.agents must be an array'],
    // Before: Node ran out of memory (a fatal crash).
    ['readFileState: sparse(undefined, 2 ** 32 - 1)', 'context.readFileState must be a Map, an object or an array'],
  ];
  for (const [extra, words] of cases) {
    const out = execFileSync(process.execPath, ['--max-old-space-size=3000', '--input-type=module', '-e', code(extra)], { encoding: 'utf8', timeout: 120_000 });
    const r = JSON.parse(out.trim());
    assert.equal(r.code, 'INVALID_ARGUMENT', `${extra}: ${r.message}`);
    assert.ok(r.message.startsWith(words), `${extra}: ${r.message}`);
    assert.ok(r.ms < 3000, `${extra}: ${r.ms} ms`);
    assert.equal(r.bystander, 1);
  }
});
