// Leftovers of the tenth probes (probe10-shapes notes, probe10-hostile "Left"). Each test
// fails on the package before its fix (CC_PKG=/path/to/old/pkg/node.js runs this file against
// another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { growth as growthOf } from './helpers/growth.mjs';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const big = (n, s = 'line') => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const B = big(300);

// ---- 1: a Messages API `compaction` block's `tool_changes` (@anthropic-ai/sdk beta
// BetaCompactionBlock / BetaCompactionBlockParam: tool_addition / tool_removal entries).
const deploy = { name: 'deploy', description: 'Deploy the app. '.repeat(40), input_schema: { type: 'object', properties: { env: { type: 'string' } } } };
const toolChanges = [
  { type: 'tool_addition', tool: { type: 'tool_definition', definition: deploy } },
  { type: 'tool_removal', tool: { type: 'tool_reference', name: 'read' } },
];
const compactionBlock = (tc) => ({ type: 'compaction', content: 'Earlier work, summarized.', ...(tc === undefined ? {} : { tool_changes: tc }) });

test('1: a compaction block counts the tool changes it carries (what the model reads of the tools they add)', () => {
  const at = (tc) => cc.tokenCountWithEstimation([{ role: 'user', content: [compactionBlock(tc), { type: 'text', text: 'go on' }] }]);
  const none = at(undefined);
  assert.equal(at(null), none);
  assert.equal(at([]), none);
  const jsonTokens = Math.round(JSON.stringify(toolChanges).length / 4);
  const withChanges = at(toolChanges);
  assert.ok(withChanges - none >= jsonTokens - 2, `with tool changes ${withChanges}, without ${none}, their JSON ~${jsonTokens}`);
  // Counted as a system message holding the same blocks counts them (about).
  const asSystem = cc.tokenCountWithEstimation([{ role: 'system', content: toolChanges }]);
  assert.ok(Math.abs(withChanges - none - asSystem) <= 8, `${withChanges - none} vs ${asSystem}`);
});

const conversation = (tc) => {
  const m = [{ role: 'user', content: [compactionBlock(tc), { type: 'text', text: 'start' }] }];
  for (let i = 0; i < 8; i++) {
    m.push({ role: 'assistant', content: [{ type: 'tool_use', id: 't' + i, name: 'read', input: { path: 'f' + i } }] });
    m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' + i, content: B }] });
  }
  m.push({ role: 'assistant', content: 'Done reading.' }, { role: 'user', content: 'Now deploy.' });
  return m;
};
const summarize = async () => '<summary>s</summary>';

test('1: a compaction that summarizes a compaction block keeps its tool changes, as a system message before the summary', async () => {
  const m = conversation(toolChanges);
  for (const keepLastUserMessage of [false, true]) {
    const r = await cc.compactConversation(m, { model: 'claude-sonnet-4-5', summarize, keepLastUserMessage });
    const out = cc.buildPostCompactMessages(r);
    const at = out.findIndex((x) => x.role === 'system');
    assert.ok(at > 0, `keepLastUserMessage ${keepLastUserMessage}: no system message in ${JSON.stringify(out).slice(0, 300)}`);
    assert.deepEqual(out[at], { role: 'system', content: toolChanges });
    const summary = out.findIndex((x) => x.role === 'user');
    assert.ok(summary > at, 'the tool changes stand before the summary');
    assert.deepEqual(cc.validateForApi(out.slice(1)).problems, []);
    // Counted in the compacted size.
    assert.ok(r.truePostCompactTokenCount >= Math.round(JSON.stringify(toolChanges).length / 4));
  }
  // None added when the block carries none.
  for (const tc of [undefined, []]) {
    const out = cc.buildPostCompactMessages(await cc.compactConversation(conversation(tc), { model: 'claude-sonnet-4-5', summarize }));
    assert.equal(out.filter((x) => x.role === 'system').length, 0);
  }
  // A second compaction keeps them again (now as the system message).
  const once = cc.buildPostCompactMessages(await cc.compactConversation(m, { model: 'claude-sonnet-4-5', summarize }));
  const again = [...once.slice(1)];
  for (let i = 0; i < 8; i++) {
    again.push({ role: 'assistant', content: [{ type: 'tool_use', id: 'u' + i, name: 'deploy', input: { env: 'e' + i } }] });
    again.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'u' + i, content: B }] });
  }
  again.push({ role: 'assistant', content: 'ok' }, { role: 'user', content: 'again' });
  const twice = cc.buildPostCompactMessages(await cc.compactConversation(again, { model: 'claude-sonnet-4-5', summarize }));
  assert.equal(twice.filter((x) => x.role === 'system' && JSON.stringify(x.content) === JSON.stringify(toolChanges)).length, 1);
});

// ---- 2: microCompact with results that share a tool_use_id lists the id once.
test('2: clearedToolUseIds lists each id once, oldest first, however many results share it', () => {
  const X = 'x'.repeat(4000);
  const anthropic = [];
  for (const [k, id] of ['dup', 'dup', 'b', 'dup', 'last'].entries()) {
    anthropic.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'Read', input: { file_path: '/f' + k } }] });
    anthropic.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: X }] });
  }
  const transcript = anthropic.map((m) => ({ type: m.role, uuid: crypto.randomUUID(), message: m }));
  const openai = [];
  for (const [k, id] of ['dup', 'dup', 'b', 'dup', 'last'].entries()) {
    openai.push({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'Read', arguments: JSON.stringify({ file_path: '/f' + k }) } }] });
    openai.push({ role: 'tool', tool_call_id: id, content: X });
  }
  for (const [name, m] of [['anthropic', anthropic], ['transcript', transcript], ['openai', openai]]) {
    for (const o of [{ keepRecent: 1 }, { keepRecent: 1, compactableTools: ['Read'] }]) {
      const r = cc.microCompact(m, o);
      assert.deepEqual(r.clearedToolUseIds, ['dup', 'b'], `${name} ${JSON.stringify(o)}`);
      // A copy of the array (the general path) says the same.
      assert.deepEqual(cc.microCompact([...m], o).clearedToolUseIds, ['dup', 'b'], `${name} copy`);
    }
  }
});

// ---- 3: a summarizer answer without string text says what it held (EMPTY_SUMMARY).
test('3: EMPTY_SUMMARY says what the answer held where text was looked for', async () => {
  const m = [{ role: 'user', content: 'a ' + 'x'.repeat(40000) }, { role: 'assistant', content: 'b' }, { role: 'user', content: 'c' }];
  for (const [answer, said] of [
    [{ content: [{ type: 'text', text: 5 }] }, 'content[0].text of type number'],
    [{ content: 7 }, 'content of type number'],
    [{ content: [5] }, 'content[0] of type number'],
    [{ content: [{ type: 'image', source: {} }] }, 'no text block in content'],
  ]) {
    await assert.rejects(cc.compactConversation(m, { model: 'claude-sonnet-4-5', summarize: async () => answer }), (e) => {
      assert.equal(e.code, 'EMPTY_SUMMARY');
      assert.ok(e.message.includes(`the summarizer's answer has ${said}`), e.message);
      return true;
    });
  }
  // An AI SDK-like answer whose `text` is no string says so (SUMMARIZER_FAILED, as before).
  await assert.rejects(cc.compactConversation(m, { model: 'claude-sonnet-4-5', summarize: async () => ({ text: 5 }) }), (e) => {
    assert.equal(e.code, 'SUMMARIZER_FAILED');
    assert.ok(e.message.includes('`text` is of type number'), e.message);
    return true;
  });
});

// ---- 4: buildPostCompactMessages given an object whose reads throw.
test('4: buildPostCompactMessages says which read of the result threw (INVALID_ARGUMENT, the throw as cause)', () => {
  const base = { boundaryMarker: { type: 'system', subtype: 'compact_boundary', content: 'x' }, summaryMessages: [{ role: 'user', content: 's' }] };
  const getterThrows = (k) => Object.defineProperty({ ...base }, k, { get() { throw new Error('nope ' + k); }, enumerable: true });
  const cases = [];
  for (const k of ['boundaryMarker', 'summaryMessages', 'messagesToKeep', 'attachments', 'hookResults', 'messageShape']) {
    cases.push([getterThrows(k), `result: reading \`${k}\` threw`, 'nope ' + k]);
  }
  cases.push([new Proxy(base, { get(t, k) { if (k === 'attachments') throw new Error('trap'); return t[k]; } }), 'result: reading `attachments` threw', 'trap']);
  cases.push([{ ...base, messagesToKeep: new Proxy([], { get(t, k) { if (k === 'length') throw new Error('len'); return t[k]; } }) }, 'result.messagesToKeep: reading `length` threw', 'len']);
  cases.push([{ ...base, messagesToKeep: new Proxy([{ role: 'user', content: 'k' }], { get(t, k) { if (k === '0') throw new Error('elem'); return t[k]; } }) }, 'result.messagesToKeep: reading it threw', 'elem']);
  cases.push([{ ...base, summaryMessages: [{ role: 'user', get content() { throw new Error('content'); } }] }, 'result.summaryMessages[0]: reading `content` threw', 'content']);
  for (const [r, said, cause] of cases) {
    assert.throws(() => cc.buildPostCompactMessages(r), (e) => {
      assert.equal(e.code, 'INVALID_ARGUMENT');
      assert.ok(e.message.includes(said), `${e.message} (expected "${said}")`);
      assert.equal(e.cause?.message, cause);
      return true;
    });
  }
  // What reads fine still builds.
  assert.equal(cc.buildPostCompactMessages(base).length, 2);
});

// ---- 5: reads that throw leave nothing behind (js-sys `Reflect` reads leaked a slot of the
// externref table, and its entry in WASM memory, on every throw).
test('5: 10,000 calls whose reads throw leave the WASM memory and the externref table as they were', async () => {
  const dir = process.env.CC_PKG ? process.env.CC_PKG.replace(/node\.js$/, '') : new URL('../../pkg/', import.meta.url).href;
  const { initSync } = await import(dir + 'context_compaction.js');
  const wasm = initSync();
  const growth = (f, n) => growthOf(wasm, f, n);
  const msgs = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }];
  const lengthThrows = new Proxy([{ role: 'user', content: 'k' }], { get(t, k) { if (k === 'length') throw new Error('len'); return t[k]; } });
  const base = { boundaryMarker: { type: 'system', content: 'x' }, summaryMessages: [{ role: 'user', content: 's' }] };
  for (const [name, f] of [
    ['a tokenCounter getter that throws', () => cc.tokenCountWithEstimation(msgs, { get tokenCounter() { throw new Error('g'); } })],
    ['a result array whose length throws', () => cc.buildPostCompactMessages({ ...base, messagesToKeep: lengthThrows })],
    ['a summary message whose content throws', () => cc.buildPostCompactMessages({ ...base, summaryMessages: [{ role: 'user', get content() { throw new Error('c'); } }] })],
  ]) {
    const g = growth(f, 10_000);
    assert.ok(g.slots <= 64 && g.bytes <= 128 * 1024, `${name}: ${JSON.stringify(g)}`);
  }
});
