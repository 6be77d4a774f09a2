// The stateful Compactor (issue 3): a conversation that keeps the caller's message objects
// and a running token count inside WASM, compacts itself, keeps what is pushed while a
// compaction runs, and writes itself back as a Claude Code transcript.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const { OPUS } = h;
const LOW_THRESHOLD = { autoCompactPctOverride: 5 }; // 9,000 tokens for OPUS

const realLines = () => cc.parseTranscript(h.loadLongTranscript().text);

/** A summarizer that waits for `gate` before answering. */
function gatedSummarizer(answer = h.summaryResponse('GATED SUMMARY')) {
  const gate = h.deferred();
  const entered = h.deferred();
  const summarize = h.recordingSummarizer(async () => {
    entered.resolve();
    await gate.promise;
    return typeof answer === 'function' ? answer() : answer;
  });
  return { summarize, gate, entered };
}

/** Asserts the Compactor's own count agrees with the stateless one over its messages. */
// The Compactor's count is the stateless count of its messages, with what it learned from the
// usage it saw (also before a compaction: the messages no longer show it).
function assertCountConsistent(c, label = '') {
  assert.equal(c.tokenCount(), cc.tokenCountWithEstimation(c.messages, { calibration: c.calibration() }), `${label} tokenCount`);
}

describe('push / pushMany / messages / length / tokenCount', () => {
  test('on the real transcript, tokenCount equals tokenCountWithEstimation(messages) after every push', () => {
    const lines = realLines();
    const c = new cc.Compactor({ model: OPUS });
    assert.equal(c.length, 0);
    assert.equal(c.tokenCount(), 0);
    for (let i = 0; i < lines.length; i++) {
      c.push(lines[i]);
      assert.equal(c.length, i + 1);
      assert.equal(c.tokenCount(), cc.tokenCountWithEstimation(c.messages), `after push ${i} (${lines[i].type})`);
    }
    const msgs = c.messages;
    assert.equal(msgs.length, lines.length);
    msgs.forEach((m, i) => assert.strictEqual(m, lines[i], 'the caller\'s own objects'));
    assert.notStrictEqual(c.messages, msgs, 'messages is a new array each time');
    assertCountConsistent(c);
  });

  test('pushMany gives the same state as pushing one by one; the constructor can seed messages', () => {
    const lines = realLines().slice(0, 600);
    const a = new cc.Compactor({ model: OPUS });
    a.pushMany(lines.slice(0, 250));
    a.pushMany(lines.slice(250));
    const b = new cc.Compactor({ model: OPUS, messages: lines });
    const one = new cc.Compactor({ model: OPUS });
    for (const l of lines) one.push(l);
    assert.equal(a.tokenCount(), one.tokenCount());
    assert.equal(b.tokenCount(), one.tokenCount());
    assert.equal(a.length, 600);
    assert.equal(b.length, 600);
    b.messages.forEach((m, i) => assert.strictEqual(m, lines[i]));
  });

  test('API-shaped messages: the count follows usage and estimates', () => {
    const msgs = h.apiConversation({ rounds: 5 });
    const c = new cc.Compactor({ model: OPUS });
    for (const m of msgs) {
      c.push(m);
      assertCountConsistent(c);
    }
    c.push({ role: 'assistant', content: 'with usage', usage: { input_tokens: 50_000, output_tokens: 10 } });
    assert.equal(c.tokenCount(), 50_010);
    c.push({ role: 'user', content: 'x'.repeat(400) });
    assert.equal(c.tokenCount(), 50_110);
    assertCountConsistent(c);
  });

  test('a malformed message throws and adds nothing; pushMany is all or none', () => {
    const c = new cc.Compactor({ model: OPUS, messages: h.apiConversation({ rounds: 2 }) });
    const len = c.length;
    const count = c.tokenCount();
    assert.throws(() => c.push({ role: 'user', content: 42 }), (e) => e.code === 'INVALID_MESSAGE' || e.code === 'INVALID_ARGUMENT');
    assert.throws(() => c.push('not a message'));
    assert.throws(() => c.pushMany([{ role: 'user', content: 'fine' }, { role: 'assistant', content: 7 }]));
    assert.throws(() => c.pushMany('nope'));
    assert.equal(c.length, len);
    assert.equal(c.tokenCount(), count);
  });

  test('the constructor validates its options', () => {
    assert.throws(() => new cc.Compactor({}), (e) => e.code === 'INVALID_ARGUMENT');
    assert.throws(() => new cc.Compactor({ model: OPUS, summarize: 'no' }), (e) => e.code === 'INVALID_ARGUMENT');
    assert.throws(() => new cc.Compactor({ model: OPUS, messages: [{ role: 'user', content: 1 }] }));
  });
});

describe('warningState', () => {
  test('equals calculateTokenWarningState(tokenCount, model, config) as the conversation grows', () => {
    const lines = realLines();
    for (const config of [undefined, { autoCompactPctOverride: 50 }]) {
      const c = new cc.Compactor({ model: OPUS, config });
      for (let i = 0; i < lines.length; i += 50) {
        c.pushMany(lines.slice(i, i + 50));
        assert.deepEqual(c.warningState(), cc.calculateTokenWarningState(c.tokenCount(), OPUS, config ?? {}), `at ${i}`);
      }
    }
    const c = new cc.Compactor({ model: OPUS, messages: h.apiConversation({ rounds: 2, usage: 170_000 }) });
    assert.equal(c.warningState().isAboveAutoCompactThreshold, true);
    assert.equal(new cc.Compactor({ model: OPUS }).warningState().percentLeft, 100);
  });
});

describe('maybeAutoCompact', () => {
  test('below the threshold: skipped, the summarizer is not called', async () => {
    const summarize = h.recordingSummarizer();
    const c = new cc.Compactor({ model: OPUS, summarize, messages: h.apiConversation({ rounds: 4 }) });
    const before = c.messages;
    const out = await c.maybeAutoCompact();
    assert.deepEqual(out, { wasCompacted: false, consecutiveFailures: 0, skipped: 'belowThreshold' });
    assert.equal(summarize.calls.length, 0);
    c.messages.forEach((m, i) => assert.strictEqual(m, before[i]));
  });

  test('above the threshold (the real transcript before its boundary): compacts and the count drops', async () => {
    const L = h.loadLongTranscript();
    const lines = cc.parseTranscript(L.text).slice(0, L.boundary);
    const rfs = h.readFileStateFromLines(lines);
    const summarize = h.recordingSummarizer({ content: [{ type: 'text', text: `<summary>${L.summaryText}</summary>` }], stop_reason: 'end_turn' });
    const c = new cc.Compactor({ model: OPUS, summarize, readFileState: rfs });
    c.pushMany(lines);
    const pre = c.tokenCount();
    assert.ok(c.warningState().isAboveAutoCompactThreshold, `pre ${pre}`);
    const out = await c.maybeAutoCompact();
    assert.equal(out.wasCompacted, true, out.error?.message);
    assert.equal(out.consecutiveFailures, 0);
    assert.equal(summarize.calls.length, 1);
    const r = out.compactionResult;
    assert.equal(r.trigger, 'auto');
    assert.equal(r.preCompactTokenCount, pre);
    assert.ok(c.tokenCount() < pre / 3, `after ${c.tokenCount()} vs ${pre}`);
    assert.equal(c.tokenCount(), r.truePostCompactTokenCount);
    assertCountConsistent(c);
    assert.deepEqual(c.messages, cc.buildPostCompactMessages(r));
    assert.equal(rfs.size, 0, 'the read-file state is cleared');
    assert.equal(c.warningState().isAboveAutoCompactThreshold, false);
    assert.equal(c.compacting, false);
    h.assertValidForApi(c.messages, lines);
    assert.deepEqual(c.tracking, { consecutiveFailures: 0, thrashing: false });
  });

  test('messages pushed while it runs appear after the summary, in order', async () => {
    const { summarize, gate, entered } = gatedSummarizer();
    const c = new cc.Compactor({ model: OPUS, summarize, config: LOW_THRESHOLD, messages: h.apiConversation({ rounds: 12 }) });
    const p = c.maybeAutoCompact();
    await entered.promise;
    assert.equal(c.compacting, true);
    const m1 = { role: 'user', content: 'pushed while compacting (1)' };
    const m2 = { role: 'assistant', content: [{ type: 'text', text: 'pushed while compacting (2)' }] };
    const m3 = { role: 'user', content: 'pushed while compacting (3)' };
    c.push(m1);
    c.pushMany([m2, m3]);
    assert.equal((await c.maybeAutoCompact()).skipped, 'compacting', 'one compaction at a time');
    gate.resolve();
    const out = await p;
    assert.equal(out.wasCompacted, true, out.error?.message);
    const post = cc.buildPostCompactMessages(out.compactionResult);
    const msgs = c.messages;
    assert.equal(msgs.length, post.length + 3);
    assert.deepEqual(msgs.slice(0, post.length), post);
    assert.strictEqual(msgs[post.length], m1);
    assert.strictEqual(msgs[post.length + 1], m2);
    assert.strictEqual(msgs[post.length + 2], m3);
    assertCountConsistent(c);
    assert.equal(summarize.calls.length, 1);
  });

  test('failures are reported, counted, and open the breaker after 3', async () => {
    const summarize = h.recordingSummarizer(h.summaryResponse('cut', { stopReason: 'max_tokens' }));
    const msgs = h.apiConversation({ rounds: 12 });
    const c = new cc.Compactor({ model: OPUS, summarize, config: LOW_THRESHOLD, messages: msgs });
    const count = c.tokenCount();
    for (let i = 1; i <= 3; i++) {
      const out = await c.maybeAutoCompact();
      assert.equal(out.wasCompacted, false);
      assert.equal(out.error.code, 'SUMMARY_TRUNCATED');
      assert.equal(out.consecutiveFailures, i);
      assert.deepEqual(c.tracking, { consecutiveFailures: i, thrashing: false });
    }
    const fourth = await c.maybeAutoCompact();
    assert.equal(fourth.skipped, 'circuitBreakerOpen');
    assert.equal(summarize.calls.length, 3);
    assert.equal(c.tokenCount(), count);
    c.messages.forEach((m, i) => assert.strictEqual(m, msgs[i]));
  });

  // The Compactor's options are the `context` of the pipeline; autoCompactIfNeeded reads
  // context.retryBaseMs, so maybeAutoCompact must too.
  test('retryBaseMs in the options sets the backoff of maybeAutoCompact (as for autoCompactIfNeeded)', async () => {
    const events = [];
    const summarize = h.recordingSummarizer((req, opts, n) => {
      if (n === 1) throw h.overloadedError();
      return h.summaryResponse();
    });
    const c = new cc.Compactor({
      model: OPUS, summarize, retryBaseMs: 1, config: LOW_THRESHOLD, onProgress: (e) => events.push(e), messages: h.apiConversation({ rounds: 12 }),
    });
    const out = await c.maybeAutoCompact();
    assert.equal(out.wasCompacted, true, out.error?.message);
    assert.equal(out.compactionResult.transientRetries, 1);
    const waits = events.filter((e) => e.phase === 'retryTransient').map((e) => Number(/waiting (\d+) ms/.exec(e.detail)?.[1]));
    assert.ok(waits[0] <= 1, `maybeAutoCompact waited ${waits[0]} ms despite retryBaseMs: 1`);
    // The stateless driver with the same context does honour it.
    const events2 = [];
    const summarize2 = h.recordingSummarizer((req, opts, n) => {
      if (n === 1) throw h.overloadedError();
      return h.summaryResponse();
    });
    await cc.autoCompactIfNeeded(h.apiConversation({ rounds: 12 }), { model: OPUS, summarize: summarize2, retryBaseMs: 1, config: LOW_THRESHOLD, onProgress: (e) => events2.push(e) }, {});
    assert.match(events2.find((e) => e.phase === 'retryTransient').detail, /waiting [01] ms/);
  });

  test('compact() uses the options\' retryBaseMs unless the call gives its own', async () => {
    const run = async (callOptions) => {
      const events = [];
      const summarize = h.recordingSummarizer((req, opts, n) => {
        if (n === 1) throw h.overloadedError();
        return h.summaryResponse();
      });
      const c = new cc.Compactor({
        model: OPUS, summarize, retryBaseMs: 1, onProgress: (e) => events.push(e), messages: h.apiConversation({ rounds: 12 }),
      });
      const r = await c.compact(callOptions);
      assert.equal(r.transientRetries, 1);
      return Number(/waiting (\d+) ms/.exec(events.find((e) => e.phase === 'retryTransient').detail)[1]);
    };
    assert.ok((await run()) <= 1, 'the Compactor\'s retryBaseMs: 1');
    assert.ok((await run({ retryBaseMs: 0 })) === 0, 'the call\'s own retryBaseMs: 0');
  });

  test('querySource and snipTokensFreed in the options are read by maybeAutoCompact (as by autoCompactIfNeeded)', async () => {
    const summarize = h.recordingSummarizer();
    const msgs = h.apiConversation({ rounds: 12 });
    for (const querySource of ['compact', 'session_memory']) {
      const c = new cc.Compactor({ model: OPUS, summarize, config: LOW_THRESHOLD, querySource, messages: msgs });
      assert.equal(c.warningState().isAboveAutoCompactThreshold, true);
      const out = await c.maybeAutoCompact();
      assert.equal(out.skipped, 'querySource', querySource);
      const theirs = await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize, config: LOW_THRESHOLD, querySource }, {});
      assert.equal(theirs.skipped, 'querySource');
    }
    const c = new cc.Compactor({ model: OPUS, summarize, config: LOW_THRESHOLD, snipTokensFreed: 1_000_000, messages: msgs });
    assert.equal((await c.maybeAutoCompact()).skipped, 'belowThreshold', 'the snipped tokens are taken off the count');
    assert.equal(summarize.calls.length, 0);
    // The options object stays the caller's (read at each call): a bad value put there later
    // is a coded rejection, as from autoCompactIfNeeded.
    const options = { model: OPUS, summarize, config: LOW_THRESHOLD, messages: msgs, snipTokensFreed: 0 };
    const later = new cc.Compactor(options);
    options.snipTokensFreed = -1;
    await assert.rejects(() => later.maybeAutoCompact(), { code: 'INVALID_TOKEN_COUNT' });
    await assert.rejects(() => cc.autoCompactIfNeeded(msgs, options, {}), { code: 'INVALID_TOKEN_COUNT' });
  });

  test('session memory is tried first: kept messages are the caller\'s objects', async () => {
    const msgs = h.apiConversationOfTokens(90_000);
    const summarize = h.recordingSummarizer();
    const c = new cc.Compactor({ model: OPUS, summarize, sessionMemory: 'the running memory', config: { autoCompactPctOverride: 40 }, messages: msgs });
    const out = await c.maybeAutoCompact();
    assert.equal(out.wasCompacted, true, out.error?.message);
    assert.equal(out.compactionResult.fromSessionMemory, true);
    assert.equal(summarize.calls.length, 0);
    const kept = out.compactionResult.messagesToKeep;
    const after = c.messages;
    const at = after.indexOf(kept[0]);
    assert.ok(at > 0);
    kept.forEach((m, i) => {
      assert.strictEqual(after[at + i], m);
      assert.ok(msgs.includes(m));
    });
    assertCountConsistent(c);
  });
});

describe('compact()', () => {
  test('custom instructions go to the summary request only', async () => {
    const summarize = h.recordingSummarizer();
    const c = new cc.Compactor({ model: OPUS, summarize, messages: h.apiConversation({ rounds: 6 }) });
    const r = await c.compact({ customInstructions: 'KEEP_THE_ZEBRA_DETAILS' });
    assert.equal(r.trigger, 'manual');
    assert.match(JSON.stringify(summarize.calls[0].request), /KEEP_THE_ZEBRA_DETAILS/);
    assert.ok(!JSON.stringify(c.messages).includes('KEEP_THE_ZEBRA_DETAILS'));
    assertCountConsistent(c);
    h.assertValidForApi(c.messages);
  });

  test('messages pushed while compact() runs are kept after the summary, in order', async () => {
    const { summarize, gate, entered } = gatedSummarizer();
    const lines = h.transcriptConversation({ rounds: 8 });
    const c = new cc.Compactor({ model: OPUS, summarize, messages: lines });
    const p = c.compact();
    await entered.promise;
    const late = h.transcriptConversation({ rounds: 1, session: 'sess-0001' }).map((l) => ({ ...l, uuid: `late-${l.uuid}` }));
    for (const l of late) c.push(l);
    gate.resolve();
    const r = await p;
    const post = cc.buildPostCompactMessages(r);
    const msgs = c.messages;
    assert.deepEqual(msgs.slice(0, post.length), post);
    assert.deepEqual(msgs.slice(post.length), late);
    late.forEach((l, i) => assert.strictEqual(msgs[post.length + i], l));
    assertCountConsistent(c);
  });

  test('a failure rejects with the code and leaves messages and tokenCount unchanged (pushes kept)', async () => {
    const gate = h.deferred();
    const entered = h.deferred();
    const summarize = async () => {
      entered.resolve();
      await gate.promise;
      throw Object.assign(new Error('invalid x-api-key'), { status: 401 });
    };
    const msgs = h.apiConversation({ rounds: 6 });
    const clone = structuredClone(msgs);
    const c = new cc.Compactor({ model: OPUS, summarize, messages: msgs });
    const count = c.tokenCount();
    const p = c.compact({ retryBaseMs: 1 });
    await entered.promise;
    const extra = { role: 'user', content: 'typed during the failing compaction' };
    c.push(extra);
    gate.resolve();
    await h.rejectsWithCode(p, 'SUMMARIZER_FAILED');
    assert.equal(c.compacting, false);
    const after = c.messages;
    assert.equal(after.length, msgs.length + 1);
    msgs.forEach((m, i) => assert.strictEqual(after[i], m));
    assert.strictEqual(after.at(-1), extra);
    assert.deepStrictEqual(msgs, clone, 'the objects themselves are untouched');
    c.messages.pop();
    assert.equal(c.length, msgs.length + 1, 'messages is a copy');
    const c2 = new cc.Compactor({ model: OPUS, messages: msgs });
    assert.equal(c2.tokenCount(), count);
    assertCountConsistent(c);
  });

  test('every failure code leaves the Compactor unchanged', async () => {
    for (const [code, answer] of [
      ['SUMMARY_TRUNCATED', h.summaryResponse('x', { stopReason: 'max_tokens' })],
      ['EMPTY_SUMMARY', ''],
      ['COMPACTION_NOT_SMALLER', h.summaryResponse(h.filler(200_000))],
    ]) {
      const msgs = h.apiConversation({ rounds: 6 });
      const rfs = new Map([['/a', { content: 'a', timestamp: 1 }]]);
      const c = new cc.Compactor({ model: OPUS, summarize: async () => answer, messages: msgs, readFileState: rfs });
      const count = c.tokenCount();
      await h.rejectsWithCode(c.compact(), code);
      assert.equal(c.tokenCount(), count);
      c.messages.forEach((m, i) => assert.strictEqual(m, msgs[i]));
      assert.equal(rfs.size, 1, `${code}: read-file state kept`);
    }
  });

  test('a second compact while one runs rejects; the first still succeeds', async () => {
    const { summarize, gate, entered } = gatedSummarizer();
    const c = new cc.Compactor({ model: OPUS, summarize, messages: h.apiConversation({ rounds: 6 }) });
    const first = c.compact();
    await entered.promise;
    await h.rejectsWithCode(c.compact(), 'INVALID_ARGUMENT');
    assert.equal(c.compacting, true);
    gate.resolve();
    const r = await first;
    assert.ok(r.summary);
    assert.equal(summarize.calls.length, 1);
    assertCountConsistent(c);
    // Once done, compacting again is allowed.
    c.pushMany(h.apiConversation({ rounds: 6, prefix: 'b' }));
    await c.compact();
    assert.equal(summarize.calls.length, 2);
  });

  test('abort through the signal option: ABORTED, nothing changed', async () => {
    const ac = new AbortController();
    const entered = h.deferred();
    const msgs = h.apiConversation({ rounds: 6 });
    const c = new cc.Compactor({ model: OPUS, signal: ac.signal, summarize: () => (entered.resolve(), h.never()), messages: msgs });
    const count = c.tokenCount();
    const p = c.compact();
    await entered.promise;
    ac.abort();
    await h.rejectsWithCode(p, 'ABORTED');
    assert.equal(c.tokenCount(), count);
    assert.equal(c.compacting, false);
    c.messages.forEach((m, i) => assert.strictEqual(m, msgs[i]));
  });

  test('compact without a summarize callback rejects with INVALID_ARGUMENT', async () => {
    const c = new cc.Compactor({ model: OPUS, messages: h.apiConversation({ rounds: 3 }) });
    await h.rejectsWithCode(c.compact(), 'INVALID_ARGUMENT');
    assert.equal(c.compacting, false);
  });
});

describe('toTranscript()', () => {
  test('parses back with parseTranscript, same count; appended to the old file it resumes after the boundary', async () => {
    const L = h.loadLongTranscript();
    const lines = cc.parseTranscript(L.text).slice(0, L.boundary);
    const c = new cc.Compactor({
      model: OPUS,
      summarize: async () => `<summary>${L.summaryText}</summary>`,
      readFileState: h.readFileStateFromLines(lines),
      messages: lines,
    });
    // Before compaction: the transcript round-trips.
    const parsedBefore = cc.parseTranscript(c.toTranscript());
    assert.deepEqual(parsedBefore, lines);
    assert.equal(cc.tokenCountWithEstimation(parsedBefore), c.tokenCount());
    await c.compact();
    c.push({ type: 'user', uuid: 'after-1', parentUuid: null, isSidechain: false, sessionId: L.lines[0].sessionId, message: { role: 'user', content: 'next question after compaction' } });
    const jsonl = c.toTranscript();
    const parsed = cc.parseTranscript(jsonl);
    assert.equal(parsed.length, c.length);
    assert.deepEqual(parsed, JSON.parse(JSON.stringify(c.messages)));
    assert.equal(parsed[0].subtype, 'compact_boundary');
    assert.equal(parsed[1].isCompactSummary, true);
    // Without the history, the count needs what the Compactor learned from it.
    assert.equal(cc.tokenCountWithEstimation(parsed, { calibration: c.calibration() }), c.tokenCount());
    assert.ok(cc.tokenCountWithEstimation(parsed) < c.tokenCount());
    // Claude Code appends to the session file: the old lines stay, the new root wins.
    const whole = cc.parseTranscript(cc.serializeTranscript(lines).replace(/\n?$/, '\n') + jsonl);
    assert.equal(whole.length, lines.length + c.length);
    assert.equal(cc.tokenCountWithEstimation(whole), c.tokenCount());
    const resumed = new cc.Compactor({ model: OPUS, messages: whole });
    assert.equal(resumed.tokenCount(), c.tokenCount());
    h.assertValidForApi(whole, lines);
  });
});

// A message getter (or toJSON, or callback) that calls the same Compactor while one of its
// calls reads that message: a coded error from the inner call, never a trap, and the
// Compactor keeps working (the push adds nothing; a compaction leaves the conversation as it
// was). Before, the inner call found the session borrowed and the instance trapped.
test('a Compactor called from a getter of a message it is reading: a coded error, then it keeps working', async () => {
  const base = h.transcriptConversation({ rounds: 6 });
  const c = new cc.Compactor({ model: h.OPUS, messages: base, summarize: async () => h.summaryResponse('S') });
  const count = c.tokenCount();
  const inner = {
    tokenCount: () => c.tokenCount(),
    warningState: () => c.warningState(),
    snapshot: () => c.snapshot(),
    messages: () => c.messages,
    length: () => c.length,
    calibration: () => c.calibration(),
    compacting: () => c.compacting,
    tracking: () => c.tracking,
    background: () => c.background,
    toTranscript: () => c.toTranscript(),
    push: () => c.push({ role: 'user', content: 'inner' }),
    setUsage: () => c.setUsage({ input_tokens: 1, output_tokens: 1 }),
  };
  for (const [name, call] of Object.entries(inner)) {
    let thrown;
    const m = { type: 'user', uuid: `g-${name}`, message: { role: 'user', get content() {
      try {
        call();
      } catch (e) {
        thrown = e;
        throw e;
      }
      return 'outer';
    } } };
    assert.throws(() => c.push(m), (e) => e.code === 'INVALID_MESSAGE' && /called while one of its own calls/.test(e.message), name);
    assert.equal(thrown?.code, 'INVALID_ARGUMENT', name);
    assert.equal(c.tokenCount(), count, `${name}: nothing added`);
    assert.equal(c.length, base.length);
  }
  // During a compaction's reading: the compaction rejects, the conversation stays.
  let armed = false;
  const d = new cc.Compactor({ model: h.OPUS, messages: base, summarize: async () => h.summaryResponse('S') });
  d.push({ type: 'user', uuid: 'late', message: { role: 'user', get content() {
    if (armed) {
      armed = false;
      d.tokenCount();
    }
    return 'a later question';
  } } });
  const before = d.length;
  armed = true;
  await assert.rejects(d.compact(), (e) => e.code === 'INVALID_MESSAGE' && /called while one of its own calls/.test(e.message));
  assert.equal(armed, false, 'the getter ran during the compaction');
  assert.equal(d.length, before);
  const r = await d.compact();
  assert.ok(r.summaryMessages.length > 0);
  assert.ok(d.length < before);
});

test("a Compactor's running count starts at a provider's compaction, as the stateless count does", () => {
  const big = (s) => `${s}: some content of a file or command output here\n`.repeat(500);
  const shapes = {
    anthropic: [
      { role: 'user', content: 'old task ' + big('old') },
      { role: 'assistant', content: 'old answer ' + big('ans') },
      { role: 'user', content: 'continue please' },
      { role: 'assistant', content: [{ type: 'compaction', content: 'We migrated the users table; next: orders.' }, { type: 'text', text: 'Continuing.' }] },
      { role: 'user', content: 'status?' },
    ],
    'openai-responses': [
      { role: 'user', content: 'old task ' + big('old') },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: big('ans'), annotations: [] }] },
      { type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAA' + 'C'.repeat(2000) },
      { role: 'user', content: 'status?' },
    ],
  };
  for (const [name, msgs] of Object.entries(shapes)) {
    const pushed = new cc.Compactor({ model: 'claude-sonnet-4-5' });
    for (let k = 0; k < msgs.length; k++) {
      pushed.push(msgs[k]);
      const stateless = cc.tokenCountWithEstimation(msgs.slice(0, k + 1));
      assert.equal(pushed.tokenCount(), stateless, `${name}: pushed, after message ${k}`);
      assert.equal(new cc.Compactor({ model: 'claude-sonnet-4-5', messages: msgs.slice(0, k + 1) }).tokenCount(), stateless, `${name}: built, after message ${k}`);
    }
    assert.ok(pushed.tokenCount() < 1_000, `${name}: the history before the compaction is not counted (${pushed.tokenCount()})`);
    assert.equal(pushed.warningState().percentLeft, cc.calculateTokenWarningState(cc.tokenCountWithEstimation(msgs), 'claude-sonnet-4-5').percentLeft);
  }
});
