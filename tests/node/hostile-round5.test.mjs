// Round 5 of hostile inputs (probe: /work/probe-hostile/round5): holes in the context's arrays,
// a summarizer answer too large to read, async notification callbacks that reject, sessions
// simulateSession must read as parseTranscript does, and the skills budget counted as sent.
// Cases that could end the process (an uncaught exception, an unhandled rejection) or trap the
// instance run in a child process (runIsolated).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { SONNET, runIsolated } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const conversation = (n = 10, big = 2_000) => {
  const msgs = [];
  for (let i = 0; i < n; i++) {
    msgs.push({ role: 'user', content: `question ${i} ${'x'.repeat(big)}` });
    msgs.push({ role: 'assistant', content: `answer ${i}` });
  }
  return msgs;
};
const summarize = async () => '<summary>short</summary>';

test('a hole in context.readFileState or context.invokedSkills reads as undefined (skipped, as [undefined] is): every entry point settles, nothing escapes', () => {
  const r = runIsolated(`
    const uncaught = [];
    process.on('uncaughtException', (e) => uncaught.push(String(e)));
    process.on('unhandledRejection', (e) => uncaught.push(String(e)));
    const msgs = [];
    for (let i = 0; i < 10; i++) { msgs.push({ role: 'user', content: 'question ' + i + ' ' + 'x'.repeat(2000) }); msgs.push({ role: 'assistant', content: 'answer ' + i }); }
    const summarize = async () => '<summary>short</summary>';
    const holed = () => { const a = [{ path: '/src/a.rs', content: 'fn a() {}', timestamp: 1 }, { path: '/src/b.rs', content: 'fn b() {}', timestamp: 2 }]; delete a[0]; return a; };
    const literal = () => [, { path: '/src/b.rs', content: 'fn b() {}', timestamp: 2 }];
    const skills = () => { const a = [{ name: 'x', content: 'use x' }, { name: 'tabs', content: 'use tabs' }]; delete a[0]; return a; };
    const outcome = (p) => p.then((v) => ({ ok: true, files: (v.restoredFiles ?? []).map((f) => f.path), skills: (v.restoredSkills ?? []).map((s) => s.name) }), (e) => ({ code: e.code ?? 'UNCODED ' + e.name }));
    const out = {};
    out.holed = await outcome(cc.compactConversation(msgs, { model: '${SONNET}', readFileState: holed(), summarize }));
    out.literal = await outcome(cc.compactConversation(msgs, { model: '${SONNET}', readFileState: literal(), summarize }));
    out.undef = await outcome(cc.compactConversation(msgs, { model: '${SONNET}', readFileState: [undefined, { path: '/src/b.rs', content: 'fn b() {}', timestamp: 2 }], summarize }));
    out.skills = await outcome(cc.compactConversation(msgs, { model: '${SONNET}', invokedSkills: skills(), summarize }));
    out.sessionMemory = await outcome(cc.trySessionMemoryCompaction(msgs, { model: '${SONNET}', readFileState: holed(), sessionMemory: () => 'memory' }));
    out.reactive = await outcome(cc.reactiveCompact(msgs, { model: '${SONNET}', readFileState: holed(), summarize }, new Error('prompt is too long: 300000 tokens > 200000 maximum')));
    out.auto = await outcome(cc.autoCompactIfNeeded(msgs, { model: '${SONNET}', readFileState: holed(), invokedSkills: skills(), summarize }));
    out.preview = await outcome(cc.previewCompaction(msgs, { model: '${SONNET}', readFileState: holed(), invokedSkills: skills() }));
    for (const [k, v] of [['ctorFiles', { readFileState: holed() }], ['ctorSkills', { invokedSkills: skills() }]]) {
      try { new cc.Compactor({ model: '${SONNET}', messages: msgs, summarize, ...v }); out[k] = 'constructed'; }
      catch (e) { out[k] = 'threw ' + (e.code ?? 'UNCODED ' + e.name); }
    }
    out.uncaught = uncaught;
    return out;
  `);
  assert.equal(r.status, 0, r.stderr);
  const v = r.value;
  assert.ok(v, `no result: the process ended early\n${r.stderr}`);
  assert.deepEqual(v.uncaught, []);
  assert.deepEqual(v.holed, { ok: true, files: ['/src/b.rs'], skills: [] });
  assert.deepEqual(v.literal, v.undef);
  assert.deepEqual(v.holed, v.undef);
  assert.deepEqual(v.skills, { ok: true, files: [], skills: ['tabs'] });
  for (const k of ['sessionMemory', 'reactive', 'auto', 'preview']) assert.ok(v[k].ok || (v[k].code && !v[k].code.startsWith('UNCODED')), `${k}: ${JSON.stringify(v[k])}`);
  assert.equal(v.ctorFiles, 'constructed');
  assert.equal(v.ctorSkills, 'constructed');
});

test('holes in every array of a context (readFileState, invokedSkills, pinned, asyncAgents, mcpInstructions, agents, discoveredTools, tools) are handled as [undefined] is', async () => {
  const msgs = conversation();
  for (const [key, rest] of [
    ['readFileState', [{ path: '/src/b.rs', content: 'fn b() {}' }]],
    ['invokedSkills', [{ name: 'tabs', content: 'use tabs' }]],
    ['pinned', ['keep this']],
    ['asyncAgents', [{ id: 'a1', description: 'indexer', status: 'running' }]],
    ['mcpInstructions', [{ server: 'db', instructions: 'use the db' }]],
    ['agents', ['reviewer']],
    ['discoveredTools', ['WebSearch']],
    ['tools', ['WebSearch']],
  ]) {
    const holed = [, ...rest]; // eslint-disable-line no-sparse-arrays
    const explicit = [undefined, ...rest];
    const outcome = (p) => p.then(() => 'resolved', (e) => e.code ?? `UNCODED ${e.name}`);
    const a = await outcome(cc.compactConversation(msgs, { model: SONNET, [key]: holed, summarize }));
    const b = await outcome(cc.compactConversation(msgs, { model: SONNET, [key]: explicit, summarize }));
    assert.equal(a, b, key);
    assert.ok(a === 'resolved' || a === 'INVALID_ARGUMENT', `${key}: ${a}`);
    const ctor = (v) => {
      try {
        new cc.Compactor({ model: SONNET, messages: msgs, [key]: v });
        return 'constructed';
      } catch (e) {
        return e.code ?? `UNCODED ${e.name}`;
      }
    };
    assert.equal(ctor(holed), ctor(explicit), key);
  }
  // microCompact's compactableTools, with a hole.
  const mc = (tools) => {
    try {
      return cc.microCompact(msgs, { compactableTools: tools }).tokensFreed;
    } catch (e) {
      return e.code ?? `UNCODED ${e.name}`;
    }
  };
  assert.equal(mc([, 'Read']), mc([undefined, 'Read'])); // eslint-disable-line no-sparse-arrays
});

test('a summarizer answer whose content has 10,000,000 elements is SUMMARIZER_FAILED, read no further: no trap, other Compactors intact (also for a summary written ahead)', () => {
  const r = runIsolated(`
    const msgs = [];
    for (let i = 0; i < 10; i++) { msgs.push({ role: 'user', content: 'question ' + i + ' ' + 'x'.repeat(2000) }); msgs.push({ role: 'assistant', content: 'answer ' + i }); }
    const bystander = new cc.Compactor({ model: '${SONNET}', messages: msgs.slice(0, 4) });
    const huge = () => ({ content: Object.assign([], { length: 10_000_000 }), stop_reason: 'end_turn' });
    const out = {};
    try { await cc.compactConversation(msgs, { model: '${SONNET}', summarize: async () => huge() }); out.sparse = 'resolved'; }
    catch (e) { out.sparse = e.code; out.message = e.message; }
    // A dense one, as a proxy's JSON answer would be.
    const dense = { content: new Array(10_000_000).fill(0) };
    try { await cc.compactConversation(msgs, { model: '${SONNET}', summarize: async () => dense }); out.dense = 'resolved'; }
    catch (e) { out.dense = e.code; }
    // A text too long for any summary (17M code units): refused before it is copied.
    const text = 'x'.repeat(17_000_000);
    try { await cc.compactConversation(msgs, { model: '${SONNET}', summarize: async () => ({ content: [{ type: 'text', text }] }) }); out.longText = 'resolved'; }
    catch (e) { out.longText = e.code; }
    try { await cc.compactConversation(msgs, { model: '${SONNET}', summarize: async () => text }); out.longString = 'resolved'; }
    catch (e) { out.longString = e.code; }
    // A summary written ahead (preemptive) that answers the same.
    let calls = 0;
    const c = new cc.Compactor({ model: 'claude-opus-4-6', config: { autoCompactPctOverride: 5 }, summarize: async () => { calls++; return huge(); }, preemptive: { earlyLine: 8000 } });
    for (let i = 0; c.tokenCount() < 8000; i++) c.pushMany([{ role: 'user', content: 'q ' + i + ' ' + 'y'.repeat(4000) }, { role: 'assistant', content: 'a ' + i }]);
    for (let i = 0; i < 50; i++) await new Promise((r) => setTimeout(r, 0));
    out.background = c.background.state;
    out.calls = calls;
    try { out.bystander = bystander.tokenCount() > 0; } catch (e) { out.bystander = e.code; }
    try { out.compactor = c.tokenCount() > 0; } catch (e) { out.compactor = e.code; }
    return out;
  `);
  assert.equal(r.status, 0, r.stderr);
  const v = r.value;
  assert.ok(v, `no result\n${r.stderr}`);
  assert.equal(v.sparse, 'SUMMARIZER_FAILED');
  assert.match(v.message, /too large/);
  assert.equal(v.dense, 'SUMMARIZER_FAILED');
  assert.equal(v.longText, 'SUMMARIZER_FAILED');
  assert.equal(v.longString, 'SUMMARIZER_FAILED');
  assert.ok(v.calls >= 1, 'the summary written ahead was asked for');
  assert.ok(v.background !== 'running' && v.background !== 'ready', v.background);
  assert.equal(v.bystander, true);
  assert.equal(v.compactor, true);
});

test('an async onProgress (or offlineSummarizer onText) that rejects is ignored like one that throws: no unhandled rejection', () => {
  const r = runIsolated(`
    let unhandled = 0;
    process.on('unhandledRejection', () => { unhandled++; });
    const msgs = [];
    for (let i = 0; i < 10; i++) { msgs.push({ role: 'user', content: 'question ' + i + ' ' + 'x'.repeat(2000) }); msgs.push({ role: 'assistant', content: 'answer ' + i }); }
    const onProgress = async () => { throw new Error('progress UI went away'); };
    const res = await cc.compactConversation(msgs, { model: '${SONNET}', summarize: async () => '<summary>short</summary>', onProgress });
    const c = new cc.Compactor({ model: '${SONNET}', messages: msgs, summarize: async () => '<summary>short</summary>', onProgress });
    await c.compact();
    const offline = cc.offlineSummarizer();
    await offline({ model: '${SONNET}', max_tokens: 1000, messages: [{ role: 'user', content: 'summarize: ' + 'z'.repeat(500) }] }, { onText: async () => { throw new Error('no UI'); } });
    for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 10));
    return { summary: res.summary.length > 0, unhandled };
  `);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.value, { summary: true, unhandled: 0 });
});

test('simulateSession reads every session parseTranscript reads: a lone-surrogate escape, 1e400 in an unrelated field', async () => {
  const text = (extra) =>
    [
      `{"type":"user","uuid":"u1","parentUuid":null,"timestamp":"2025-01-01T00:00:00Z","message":{"role":"user","content":"hi"}${extra}}`,
      '{"type":"assistant","uuid":"a1","parentUuid":"u1","timestamp":"2025-01-01T00:00:05Z","message":{"role":"assistant","id":"m1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"yo"}],"usage":{"input_tokens":5,"output_tokens":1}}}',
    ].join('\n') + '\n';
  const plain = await cc.simulateSession(text(''));
  for (const extra of [',"toolUseResult":{"stdout":"done \\ud83d"}', ',"toolUseResult":{"size":1e400}', ',"x":"\\udc00 \\ud83d\\ude00"']) {
    const t = text(extra);
    assert.equal(cc.parseTranscript(t).length, 2);
    const report = await cc.simulateSession(t);
    assert.equal(report.calls, plain.calls, extra);
    // The same as its parsed lines.
    assert.equal((await cc.simulateSession(cc.parseTranscript(t))).calls, report.calls);
  }
  // What parseTranscript refuses, simulateSession refuses as it does.
  const bad = '{"type":"user","message":{"role":"user","content":"x"}}\n{"type": bad json\n';
  assert.throws(() => cc.parseTranscript(bad), (e) => e.code === 'MALFORMED_TRANSCRIPT');
  await assert.rejects(cc.simulateSession(bad), (e) => e.code === 'MALFORMED_TRANSCRIPT' && /line 2/.test(e.message));
});

test('restored skills stay within the 25,000-token skills budget as sent (name and wrapper counted): 2,000 small skills compact; an absurd name is cut', async () => {
  const msgs = conversation(30, 4_000);
  for (const n of [500, 2_000, 5_000]) {
    const invokedSkills = Object.fromEntries(Array.from({ length: n }, (_, i) => [`skill-${i}`, `use tabs ${i}`]));
    const r = await cc.compactConversation(msgs, { model: SONNET, invokedSkills, summarize });
    const skillAttachments = r.attachments.filter((m) => /^Skill "/.test(typeof m.content === 'string' ? m.content : m.content?.[0]?.text ?? ''));
    assert.equal(skillAttachments.length, r.restoredSkills.length);
    const sent = cc.tokenCountWithEstimation(skillAttachments);
    assert.ok(sent <= 25_000, `${n} skills: ${sent} tokens restored`);
    assert.ok(r.restoredSkills.length > 0);
  }
  const r = await cc.compactConversation(msgs, { model: SONNET, invokedSkills: { ['n'.repeat(60_000)]: 'short skill' }, summarize });
  assert.equal(r.restoredSkills.length, 1);
  assert.ok(r.restoredSkills[0].name.length <= 200 && r.restoredSkills[0].name.endsWith('…'));
  assert.ok(cc.tokenCountWithEstimation(r.attachments) < 200);
});

test('restored files count their path against the 50,000-token files budget', async () => {
  const msgs = conversation(30, 4_000);
  const long = `/${'p'.repeat(250_000)}.rs`;
  const r = await cc.compactConversation(msgs, {
    model: SONNET,
    readFileState: [
      { path: long, content: 'fn main() {}', timestamp: 2 },
      { path: '/src/short.rs', content: 'fn a() {}', timestamp: 1 },
    ],
    summarize,
  });
  assert.deepEqual(r.restoredFiles.map((f) => f.path), ['/src/short.rs']);
});

test('free() called from inside a Compactor callback (its tokenCounter) never throws an uncoded error: the Compactor is freed once the call returns', () => {
  let c;
  let freeError;
  const other = new cc.Compactor({ model: SONNET });
  c = new cc.Compactor({
    model: SONNET,
    tokenCounter: (text) => {
      if (c && freeError === undefined) {
        try {
          c.free();
          other.free();
          freeError = null;
        } catch (e) {
          freeError = e;
        }
      }
      return Math.ceil(text.length / 4);
    },
  });
  c.push({ role: 'user', content: 'hello there' });
  assert.equal(freeError, null, `free() from the callback threw: ${freeError?.code} ${freeError?.message}`);
  // Freed when the call returned: every call says so (coded), free() again is a no-op.
  assert.throws(() => c.tokenCount(), (e) => e.code === 'INVALID_ARGUMENT' && /freed/.test(e.message));
  assert.throws(() => other.tokenCount(), (e) => e.code === 'INVALID_ARGUMENT' && /freed/.test(e.message));
  c.free();
  // The instance is intact.
  const fresh = new cc.Compactor({ model: SONNET, messages: [{ role: 'user', content: 'hi' }] });
  assert.equal(fresh.length, 1);
  fresh.free();
});

test("a hook whose answer holds millions of messages is that hook's failure, not a trap: the compaction goes on, live Compactors survive", async () => {
  const msgs = [];
  for (let i = 0; i < 6; i++) msgs.push({ role: 'user', content: `q${i} ` + 'x'.repeat(4_000) }, { role: 'assistant', content: `a${i}` });
  msgs.push({ role: 'user', content: 'next' });
  const live = new cc.Compactor({ model: SONNET });
  live.push({ role: 'user', content: 'hello' });
  const before = live.tokenCount();
  const sparse = [];
  sparse.length = 10_000_000;
  for (const out of [new Array(2_000_000).fill('m'), sparse, { messages: new Array(2_000_000).fill('z') }]) {
    const r = await cc.compactConversation(msgs, { model: SONNET, summarize: async () => '<summary>Six rounds.</summary>', hooks: { sessionStart: async () => out } });
    const next = cc.buildPostCompactMessages(r);
    assert.ok(next.length >= 1 && next.length < 100, `${next.length} messages after the compaction`);
    assert.equal(live.tokenCount(), before, 'the instance did not trap');
  }
});
