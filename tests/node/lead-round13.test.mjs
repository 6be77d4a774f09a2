// Round thirteen, the lead's own fixes: a summary written ahead (the Compactor's `preemptive`
// option) clears only the readFileState entries it saw when it started, not those the agent
// read while it was being written (their reads are in the messages the swap keeps).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as cc from '../../pkg/node.js';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const { PREEMPT_LOW: LOW, PREEMPT_EARLY: EARLY, flushTurns: flush, qaRound: round } = h; // threshold 9,000 tokens for OPUS
const SUMMARY = h.summaryResponse(`The user asked questions; each was answered. ${h.filler(22_000, 7)}`);

/** A Compactor past its early line whose summary written ahead waits for `first`. */
function startedAhead(readFileState) {
  const first = h.deferred();
  const summarize = h.recordingSummarizer((_req, _o, n) => (n === 1 ? first.promise : SUMMARY));
  const options = { model: h.OPUS, config: LOW, summarize, preemptive: { earlyLine: EARLY }, readFileState };
  const c = new cc.Compactor(options);
  let i = 0;
  while (c.tokenCount() < EARLY) c.pushMany(round(i++));
  return { c, first, summarize, next: i, options };
}

async function swapIn({ c, first, summarize, next }) {
  await flush();
  assert.equal(summarize.calls.length, 1, 'a summary was started ahead');
  return async () => {
    first.resolve(SUMMARY);
    await flush();
    assert.equal(c.background.state, 'ready');
    for (let i = next; c.tokenCount() < 9_000; i++) c.pushMany(round(i));
    const o = await c.maybeAutoCompact();
    assert.equal(o.wasCompacted, true);
    assert.equal(o.preemptive, true, 'the summary written ahead was swapped in');
    assert.equal(summarize.calls.length, 1, 'no second summary call');
  };
}

const file = (content, timestamp) => ({ content, timestamp });

test('Map readFileState: entries read while the summary was written ahead stay after the swap; those it saw go', async () => {
  const state = new Map([['/seen', file('S', 1)], ['/reread', file('R1', 1)]]);
  const s = startedAhead(state);
  const finish = await swapIn(s);
  // The agent reads files while the summary is being written: their reads are in the
  // messages after the summary's cut, which the swap keeps verbatim.
  state.set('/later', file('L', 2));
  state.set('/reread', file('R2', 2));
  await finish();
  // Before: every entry was cleared (the swap read the state again and cleared what it saw).
  assert.deepEqual([...state.keys()].sort(), ['/later', '/reread']);
});

test('plain-object and array readFileState: the same', async () => {
  const obj = { '/seen': file('S', 1) };
  const s = startedAhead(obj);
  const finish = await swapIn(s);
  obj['/later'] = file('L', 2);
  await finish();
  assert.deepEqual(Object.keys(obj), ['/later']);

  const arr = [{ path: '/seen', ...file('S', 1) }];
  const t = startedAhead(arr);
  const finish2 = await swapIn(t);
  arr.push({ path: '/later', ...file('L', 2) });
  await finish2();
  assert.deepEqual(arr.map((x) => x.path), ['/later']);
});

test('readFileState replaced (an immutable update) while the summary was written ahead: what it saw goes, what was read since stays', async () => {
  const s = startedAhead(new Map([['/seen', file('S', 1)]]));
  // The Compactor's options object is its context: the state is replaced there.
  const finish = await swapIn(s);
  const options = s.options;
  const next = new Map(options.readFileState);
  next.set('/later', file('L', 2));
  options.readFileState = next;
  await finish();
  // Before: the new Map was cleared whole (what the start saw belonged to the old one).
  assert.deepEqual([...next.keys()], ['/later']);
});

test('a compaction that does not swap the summary written ahead clears what it read itself', async () => {
  const state = new Map([['/seen', file('S', 1)]]);
  const s = startedAhead(state);
  await flush();
  state.set('/later', file('L', 2));
  // A manual compaction replaces the conversation the summary ahead is for: it reads the
  // state when it starts and clears what it read then.
  const r = await s.c.compact();
  assert.ok(r.summary.length > 0);
  assert.equal(state.size, 0);
});

// ---- The 1M context given by `enable1mContext` reaches the summary request ----

test('enable1mContext: the summarizer is told the 1M window, and anthropicSummarizer sends the request with the 1M beta', async () => {
  const code = (k, chars) => Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `    let v${k}_${i} = compute(${i}); // step ${i}`).join('\n').slice(0, chars);
  const long = [];
  for (let i = 0; i < 200; i++) {
    long.push({ role: 'user', content: `Instruction ${i}: remember the codeword CW${i}.` },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't' + i, name: 'read_file', input: { path: `f${i}.rs` } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' + i, content: code(i, 16_000) }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok ' + i }], ...(i === 199 ? { usage: { input_tokens: 900_000, output_tokens: 10 } } : {}) });
  }
  // The API as it is: past 200,000 tokens only with the 1M-context beta.
  const seen = [];
  const fetch = async (url, init) => {
    const b = JSON.parse(init.body);
    const beta = new Headers(init.headers).get('anthropic-beta');
    const tokens = Math.round(init.body.length / 4);
    seen.push({ model: b.model, beta, tokens });
    if (b.model.includes('[')) return new Response(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'model: ' + b.model } }), { status: 404, headers: { 'content-type': 'application/json' } });
    if (tokens > 200_000 && !(beta ?? '').includes('context-1m-2025-08-07')) {
      return new Response(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > 200000 maximum` } }), { status: 400, headers: { 'content-type': 'application/json' } });
    }
    const said = new Set(init.body.match(/codeword CW\d+/g)).size;
    return new Response(JSON.stringify({ id: 'm', type: 'message', role: 'assistant', model: b.model, content: [{ type: 'text', text: `<summary>${said} codewords</summary>` }], stop_reason: 'end_turn', usage: { input_tokens: tokens, output_tokens: 5 } }), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const summarize = cc.anthropicSummarizer({ apiKey: 'k', fetch, maxRetries: 0, stream: false });
  const r = await cc.compactConversation(long, { model: 'claude-sonnet-4-5', config: { enable1mContext: true }, summarize, retryBaseMs: 1 });
  // Before: the request went without the beta, was refused as too long, and the retries kept
  // only what fits in 200,000 tokens (a summary of the last 50 of 200 instructions).
  assert.equal(r.summary.trim(), '200 codewords');
  assert.equal(r.ptlRetries, 0);
  assert.deepEqual(seen.map((s) => [s.model, s.beta]), [['claude-sonnet-4-5', 'context-1m-2025-08-07']]);

  // What a summarizer of its own is given: the model as it is (a body it may send as it is),
  // and the window the request was sized to.
  let req, opts;
  const own = async (q, o) => { req = q; opts = o; return '<summary>s</summary>'; };
  await cc.compactConversation(long, { model: 'claude-sonnet-4-5', config: { enable1mContext: true }, summarize: own });
  assert.equal(req.model, 'claude-sonnet-4-5');
  assert.equal(opts.contextWindow, 1_000_000);
  await cc.compactConversation(long.slice(0, 40), { model: 'claude-sonnet-4-5', summarize: own });
  assert.equal(opts.contextWindow, 200_000);
  await cc.compactConversation(long, { model: 'claude-sonnet-4-5', summaryModel: 'claude-haiku-4-5', config: { enable1mContext: true }, summarize: own });
  assert.equal(req.model, 'claude-haiku-4-5');
  assert.equal(opts.contextWindow, 200_000, 'a summary model of its own keeps its own window');

  // The other ways to a 1M window: the main model named as the summary model, a 1M
  // `contextWindow`, and anthropicSummarizer with a model of its own.
  for (const [context, fixed] of [
    [{ summaryModel: 'claude-sonnet-4-5', config: { enable1mContext: true } }, undefined],
    [{ config: { contextWindow: 1_000_000 } }, undefined],
    [{ config: { enable1mContext: true } }, 'claude-sonnet-4-5'],
  ]) {
    seen.length = 0;
    const s = cc.anthropicSummarizer({ apiKey: 'k', fetch, maxRetries: 0, stream: false, model: fixed });
    const r2 = await cc.compactConversation(long, { model: 'claude-sonnet-4-5', ...context, summarize: s, retryBaseMs: 1 });
    assert.equal(r2.summary.trim(), '200 codewords', JSON.stringify(context));
    assert.deepEqual(seen.map((x) => x.beta), ['context-1m-2025-08-07'], JSON.stringify(context));
  }
});

test('readFileState entries changed in place while a compaction runs stay (Object.assign of a new read)', async () => {
  const history = [
    { role: 'user', content: 'Read a.rs and b.rs, then fix the bug.' },
    { role: 'assistant', content: 'Reading them. ' + 'x'.repeat(4000) },
    { role: 'user', content: 'Go on.' },
  ];
  const state = new Map([['/a', file('A1', 1)], ['/b', file('B1', 1)]]);
  const arr = [{ path: '/a', ...file('A1', 1) }, { path: '/b', ...file('B1', 1) }];
  const obj = { '/a': file('A1', 1), '/b': file('B1', 1) };
  for (const readFileState of [state, arr, obj]) {
    const entryB = readFileState instanceof Map ? readFileState.get('/b') : Array.isArray(readFileState) ? readFileState[1] : readFileState['/b'];
    const summarize = async () => {
      // The agent reads b.rs again while the summary is written, into the entry it had.
      Object.assign(entryB, { content: 'B2', timestamp: 2 });
      return '<summary>s</summary>';
    };
    await cc.compactConversation(history, { model: 'claude-sonnet-4-5', readFileState, summarize });
    // Before: both were deleted (the entry was the object read, though it holds a new read).
    const left = readFileState instanceof Map ? [...readFileState.keys()] : Array.isArray(readFileState) ? readFileState.map((x) => x.path) : Object.keys(readFileState);
    assert.deepEqual(left, ['/b'], readFileState.constructor.name);
  }
});

test('a summary written ahead: an entry re-read in place while it was written stays', async () => {
  const state = new Map([['/seen', file('S', 1)], ['/reread', file('R1', 1)]]);
  const s = startedAhead(state);
  const finish = await swapIn(s);
  Object.assign(state.get('/reread'), file('R2', 2));
  await finish();
  assert.deepEqual([...state.keys()], ['/reread']);
});

test('after a swap, what the summary ahead saw of readFileState is not held (review13b: 2× the files kept)', async () => {
  const { execFileSync } = await import('node:child_process');
  const here = (p) => JSON.stringify(new URL(p, import.meta.url).pathname);
  const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', `
    const cc = await import(${here('../../pkg/node.js')});
    const h = await import(${here('./helpers/support.mjs')});
    cc.setEnvironmentDefaults({});
    const { flushTurns: flush, qaRound: round } = h;
    const SUMMARY = h.summaryResponse('The user asked questions. ' + h.filler(22000, 7));
    let entry = { content: 'S', timestamp: 1 };
    const ref = new WeakRef(entry);
    const state = new Map([['/seen', entry]]);
    entry = undefined;
    const c = new cc.Compactor({ model: h.OPUS, config: { autoCompactPctOverride: 5 }, summarize: async () => SUMMARY, preemptive: { earlyLine: 8000 }, readFileState: state });
    let i = 0;
    while (c.tokenCount() < 8000) c.pushMany(round(i++));
    await flush();
    while (c.tokenCount() < 9000) c.pushMany(round(i++));
    const o = await c.maybeAutoCompact();
    await flush();
    for (let k = 0; k < 4; k++) { gc(); await new Promise((r) => setTimeout(r, 20)); }
    console.log(JSON.stringify({ preemptive: o.preemptive, left: state.size, held: ref.deref() !== undefined }));
  `], { encoding: 'utf8', timeout: 120_000 });
  // Before: held true (the Compactor kept the summary's snapshot of the state until the next
  // summary ahead started: with 2,000 files of 100 KB, 401 MB).
  assert.deepEqual(JSON.parse(out.trim()), { preemptive: true, left: 0, held: false });
});

test('each compaction clears what it read itself, whatever another call read of the same state meanwhile (review13b)', async () => {
  const history = [
    { role: 'user', content: 'Read a.rs, then fix the bug.' },
    { role: 'assistant', content: 'Reading it. ' + 'x'.repeat(4000) },
    { role: 'user', content: 'Go on.' },
  ];
  for (const other of ['previewCompaction', 'a second compactConversation that fails']) {
    const state = new Map([['/a', file('A1', 1)], ['/gone', file('G', 1)]]);
    const gate = h.deferred();
    const p = cc.compactConversation(history, { model: 'claude-sonnet-4-5', readFileState: state, summarize: async () => { await gate.promise; return '<summary>s</summary>'; } });
    await new Promise((r) => setTimeout(r, 20));
    // The agent reads b.rs while the summary is written and re-reads a.rs in place; another
    // call reads the state meanwhile.
    state.set('/b', file('B1', 2));
    Object.assign(state.get('/a'), file('A2', 2));
    if (other === 'previewCompaction') await cc.previewCompaction(history, { model: 'claude-sonnet-4-5', readFileState: state });
    else await cc.compactConversation(history, { model: 'claude-sonnet-4-5', readFileState: state, summarize: async () => { throw new Error('offline'); } }).catch(() => {});
    gate.resolve();
    await p;
    // Before: the other call's reading replaced what the compaction had read, and it deleted
    // /a and /b (read or re-read meanwhile) instead of /gone.
    assert.deepEqual([...state.keys()].sort(), ['/a', '/b'], other);
  }
});
