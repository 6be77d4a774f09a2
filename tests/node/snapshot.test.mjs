// A Compactor that outlives its process (issue 11): compactor.snapshot() is plain JSON data
// stored beside the messages; Compactor.restore(snapshot, messages, options) rebuilds it
// elsewhere with the same count and the same decisions; a damaged, foreign or mismatched
// snapshot is a coded error, never a silently wrong state.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const { OPUS } = h;
const LOW = { autoCompactPctOverride: 5 }; // 9,000 tokens for OPUS

/** The messages as another machine reads them back from storage. */
const stored = (messages) => JSON.parse(JSON.stringify(messages));
/** The snapshot as storage keeps it. */
const saved = (c) => JSON.parse(JSON.stringify(c.snapshot()));

/** One round of about `chars / 4` tokens; the reply carries usage when given. */
function round(p, chars, usage) {
  const reply = { role: 'assistant', content: [{ type: 'tool_use', id: `${p}_t`, name: 'Read', input: { file_path: `/${p}.rs` } }] };
  if (usage) reply.usage = { input_tokens: usage, output_tokens: 10 };
  return [
    { role: 'user', content: `${p} please read the file` },
    reply,
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: `${p}_t`, content: 'x '.repeat(chars / 2) }] },
  ];
}

/** Asserts that `fn` throws a ContextCompactionError of `code` whose message matches `re`. */
function throwsCode(fn, code, re) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof cc.ContextCompactionError, String(e));
    assert.equal(e.code, code, e.message);
    if (re) assert.match(e.message, re);
    return true;
  });
}

describe('snapshot()', () => {
  test('is plain, versioned JSON data that survives JSON text and structuredClone', () => {
    const c = new cc.Compactor({ model: OPUS, messages: round('a', 4_000, 7_000) });
    const s = c.snapshot();
    assert.equal(s.format, 'context-compaction/compactor');
    assert.equal(s.v, 1);
    assert.equal(s.messages, 3);
    assert.equal(s.tokenCount, c.tokenCount());
    assert.match(s.fingerprint, /^[0-9a-f]{16}$/);
    assert.match(s.check, /^[0-9a-f]{16}$/);
    assert.deepEqual(s.thrash, { turnsSinceCompaction: null, rapidRefills: 0, thrashing: false });
    assert.equal(Object.getPrototypeOf(s), Object.prototype);
    assert.deepEqual(JSON.parse(JSON.stringify(s)), s);
    assert.deepEqual(structuredClone(s), s);
    assert.deepEqual(c.snapshot(), s, 'the same state, the same snapshot');
  });

  test('the same conversation gives the same snapshot in any process and however it was pushed', () => {
    const lines = cc.parseTranscript(h.loadLongTranscript().text).slice(0, 400);
    const one = new cc.Compactor({ model: OPUS });
    for (const l of lines) one.push(l);
    const batch = new cc.Compactor({ model: OPUS, messages: stored(lines) });
    assert.deepEqual(batch.snapshot(), one.snapshot());
  });
});

describe('Compactor.restore', () => {
  test('on the real transcript, restored at many points: the same count, warning state and snapshot', () => {
    const lines = cc.parseTranscript(h.loadLongTranscript().text);
    const c = new cc.Compactor({ model: OPUS });
    let restored = 0;
    for (let i = 0; i < lines.length; i++) {
      c.push(lines[i]);
      if (i % 97 !== 0 && i !== lines.length - 1) continue;
      const r = cc.Compactor.restore(JSON.stringify(c.snapshot()), stored(c.messages), { model: OPUS });
      assert.equal(r.tokenCount(), c.tokenCount(), `after line ${i}`);
      assert.equal(r.tokenCount(), cc.tokenCountWithEstimation(lines.slice(0, i + 1)));
      assert.deepEqual(r.warningState(), c.warningState());
      assert.deepEqual(r.snapshot(), c.snapshot());
      assert.equal(r.length, i + 1);
      restored++;
      r.free();
    }
    assert.ok(restored > 5);
  });

  test('a restored Compactor takes the same decisions as the one that never stopped', async () => {
    // Turns of growing size with compactions; failures from turn 6 to 9 open the breaker.
    const plan = Array.from({ length: 16 }, (_, t) => ({ chars: 8_000 + (t % 4) * 6_000, fail: t >= 6 && t < 10 }));
    const summarizer = () => {
      const state = { fail: false };
      const summarize = async () => {
        if (state.fail) return h.summaryResponse('', { raw: '' });
        return h.summaryResponse('short summary of the work');
      };
      return { state, summarize };
    };
    const run = async (c, s, from, to, log) => {
      for (let t = from; t < to; t++) {
        c.pushMany(round(`t${t}`, plan[t].chars));
        s.state.fail = plan[t].fail;
        const o = await c.maybeAutoCompact();
        log.push({ t, wasCompacted: o.wasCompacted, skipped: o.skipped ?? null, failures: o.consecutiveFailures, code: o.error?.code ?? null, tokens: c.tokenCount(), length: c.length });
      }
    };
    const sa = summarizer();
    const a = new cc.Compactor({ model: OPUS, config: LOW, summarize: sa.summarize });
    const straight = [];
    await run(a, sa, 0, plan.length, straight);
    assert.ok(straight.some((d) => d.wasCompacted), 'some compaction happened');
    assert.ok(straight.some((d) => d.skipped === 'circuitBreakerOpen'), 'the breaker opened');
    for (const at of [1, 5, 8, 11]) {
      const sb = summarizer();
      const b = new cc.Compactor({ model: OPUS, config: LOW, summarize: sb.summarize });
      const log = [];
      await run(b, sb, 0, at, log);
      // The process ends here; another one restores and goes on.
      const sc = summarizer();
      const c = cc.Compactor.restore(saved(b), stored(b.messages), { model: OPUS, config: LOW, summarize: sc.summarize });
      assert.deepEqual(c.tracking, b.tracking);
      b.free();
      await run(c, sc, at, plan.length, log);
      assert.deepEqual(log, straight, `restored after turn ${at}`);
    }
  });

  test('a snapshot taken while a compaction runs restores the conversation held then', async () => {
    const gate = h.deferred();
    const entered = h.deferred();
    const summarize = async () => {
      entered.resolve();
      await gate.promise;
      return h.summaryResponse('short summary');
    };
    const a = new cc.Compactor({ model: OPUS, config: LOW, summarize, messages: round('big', 48_000) });
    const running = a.maybeAutoCompact();
    await entered.promise;
    assert.equal(a.compacting, true);
    a.pushMany(round('during', 400));
    // The process dies here: what was stored is the conversation with the push.
    const s = saved(a);
    const messages = stored(a.messages);
    const restarted = h.recordingSummarizer(h.summaryResponse('short summary'));
    const b = cc.Compactor.restore(s, messages, { model: OPUS, config: LOW, summarize: restarted });
    assert.equal(b.compacting, false);
    assert.equal(b.length, 6);
    assert.equal(b.tokenCount(), cc.tokenCountWithEstimation(messages));
    const o = await b.maybeAutoCompact();
    assert.equal(o.wasCompacted, true);
    // The restarted compaction summarizes every message once: nothing lost, nothing twice.
    const sent = JSON.stringify(restarted.calls[0].request);
    for (const p of ['big please', 'during please']) assert.equal(sent.split(p).length - 1, 1, p);
    // The original process, had it lived: the push follows its summary, once.
    gate.resolve();
    assert.equal((await running).wasCompacted, true);
    const after = a.messages.map((m) => JSON.stringify(m));
    assert.equal(after.filter((t) => t.includes('during please')).length, 1);
  });

  test('thrashing and the circuit breaker survive a restore', async () => {
    const failing = async () => h.summaryResponse('', { raw: '' });
    const a = new cc.Compactor({ model: OPUS, config: LOW, summarize: failing, messages: round('big', 48_000) });
    for (let i = 0; i < 3; i++) assert.equal((await a.maybeAutoCompact()).wasCompacted, false);
    assert.equal(a.tracking.consecutiveFailures, 3);
    const b = cc.Compactor.restore(saved(a), stored(a.messages), { model: OPUS, config: LOW, summarize: async () => h.summaryResponse('s') });
    assert.deepEqual(b.tracking, { consecutiveFailures: 3, thrashing: false });
    assert.equal((await b.maybeAutoCompact()).skipped, 'circuitBreakerOpen');

    const good = async () => h.summaryResponse('short summary');
    const t = new cc.Compactor({ model: OPUS, config: LOW, summarize: good });
    for (let turn = 0; turn < 8 && !t.tracking.thrashing; turn++) {
      t.pushMany(round(`t${turn}`, 40_000));
      await t.maybeAutoCompact();
    }
    assert.equal(t.tracking.thrashing, true);
    const r = cc.Compactor.restore(saved(t), stored(t.messages), { model: OPUS, config: LOW, summarize: good });
    assert.equal(r.tracking.thrashing, true);
    r.pushMany(round('again', 40_000));
    const o = await r.maybeAutoCompact();
    assert.equal(o.skipped, 'thrashing');
    assert.equal(o.error.code, 'THRASHING');
  });

  test('messages of every shape: restored over what storage gives back', () => {
    const ui = [
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hello '.repeat(200) }] },
      { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'hi '.repeat(50) }] },
    ];
    const chat = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello '.repeat(200) },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"p":"/a"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'x'.repeat(3_000) },
    ];
    for (const messages of [ui, chat]) {
      const c = new cc.Compactor({ model: OPUS, messages });
      const r = cc.Compactor.restore(saved(c), stored(messages), { model: OPUS });
      assert.equal(r.tokenCount(), c.tokenCount());
      assert.deepEqual(r.snapshot(), c.snapshot());
    }
  });
});

describe('errors: never a silently wrong state', () => {
  const c = new cc.Compactor({ model: OPUS, messages: round('a', 4_000, 7_000) });
  const s = c.snapshot();
  const messages = stored(c.messages);

  test('another version: UNSUPPORTED_SNAPSHOT_VERSION, read before any other field', () => {
    throwsCode(() => cc.Compactor.restore({ ...s, v: 2 }, messages, { model: OPUS }), 'UNSUPPORTED_SNAPSHOT_VERSION', /newer version.*reads version 1/);
    throwsCode(() => cc.Compactor.restore({ format: s.format, v: 9, state: {} }, messages, { model: OPUS }), 'UNSUPPORTED_SNAPSHOT_VERSION');
    throwsCode(() => cc.Compactor.restore({ ...s, v: '1' }, messages, { model: OPUS }), 'UNSUPPORTED_SNAPSHOT_VERSION', /"1"/);
    throwsCode(() => cc.Compactor.restore({ ...s, v: undefined }, messages, { model: OPUS }), 'UNSUPPORTED_SNAPSHOT_VERSION');
  });

  test('not a snapshot, damaged or edited: INVALID_SNAPSHOT naming the field', () => {
    const cases = [
      [null, /must be the object/],
      [[s], /must be the object/],
      [42, /must be the object/],
      ['{"format"', /not JSON text/],
      [{ ...s, format: 'other' }, /snapshot\.format/],
      [{ ...s, extra: 1 }, /snapshot\.extra is not a field/],
      [{ ...s, messages: -1 }, /snapshot\.messages/],
      [{ ...s, tokenCount: '12' }, /snapshot\.tokenCount/],
      [{ ...s, fingerprint: 'zz' }, /snapshot\.fingerprint/],
      [{ ...s, thrash: null }, /snapshot\.thrash/],
      [{ ...s, thrash: { ...s.thrash, thrashing: 'no' } }, /snapshot\.thrash\.thrashing/],
      // Well-formed but not what was written: the check fails.
      [{ ...s, consecutiveFailures: 0 === s.consecutiveFailures ? 2 : 0 }, /snapshot\.check does not match/],
      [{ ...s, tokenCount: s.tokenCount + 1 }, /snapshot\.check does not match/],
      [{ ...s, thrash: { ...s.thrash, thrashing: true } }, /snapshot\.check does not match/],
      [JSON.stringify(s).replace(/"messages":3/, '"messages":4'), /snapshot\.check does not match/],
    ];
    for (const [bad, re] of cases) throwsCode(() => cc.Compactor.restore(bad, messages, { model: OPUS }), 'INVALID_SNAPSHOT', re);
  });

  test('other messages: SNAPSHOT_MISMATCH saying what differs', () => {
    throwsCode(() => cc.Compactor.restore(s, messages.slice(1), { model: OPUS }), 'SNAPSHOT_MISMATCH', /3 messages, 2 given/);
    throwsCode(() => cc.Compactor.restore(s, [...messages, { role: 'user', content: 'more' }], { model: OPUS }), 'SNAPSHOT_MISMATCH', /3 messages, 4 given/);
    throwsCode(() => cc.Compactor.restore(s, round('a', 8_000, 7_000), { model: OPUS }), 'SNAPSHOT_MISMATCH', /fingerprint/);
    throwsCode(() => cc.Compactor.restore(s, round('a', 4_000, 7_001), { model: OPUS }), 'SNAPSHOT_MISMATCH', /fingerprint/);
    throwsCode(() => cc.Compactor.restore(s, [messages[1], messages[0], messages[2]], { model: OPUS }), 'SNAPSHOT_MISMATCH', /fingerprint/);
  });

  test('bad arguments: the constructor\'s errors, and messages only as the second argument', () => {
    throwsCode(() => cc.Compactor.restore(s, messages, { model: OPUS, messages }), 'INVALID_ARGUMENT', /second argument/);
    throwsCode(() => cc.Compactor.restore(s, messages, {}), 'INVALID_ARGUMENT', /model/);
    throwsCode(() => cc.Compactor.restore(s, 'messages', { model: OPUS }), 'INVALID_ARGUMENT');
    throwsCode(() => cc.Compactor.restore(s, [...messages.slice(0, 2), { role: 'user', content: 42 }], { model: OPUS }), 'INVALID_MESSAGE');
  });

  test('every new code is listed by errorCodes()', () => {
    for (const code of ['INVALID_SNAPSHOT', 'UNSUPPORTED_SNAPSHOT_VERSION', 'SNAPSHOT_MISMATCH']) assert.ok(cc.errorCodes().includes(code), code);
  });
});

test('usage given with setUsage travels in the snapshot: the same count after a restore', () => {
  const msgs = [
    { role: 'user', content: 'x'.repeat(4_000) },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'read_file', input: { path: '/a' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'read_file', output: { type: 'text', value: 'y'.repeat(4_000) } }] },
  ];
  const c = new cc.Compactor({ model: OPUS });
  c.pushMany(msgs.slice(0, 2));
  c.setUsage({ inputTokens: 20_000, outputTokens: 100 });
  c.push(msgs[2]);
  const count = c.tokenCount();
  assert.equal(count, 20_100 + 1_000);
  const snap = saved(c);
  assert.equal(snap.usage.at, 2);
  const r = cc.Compactor.restore(JSON.stringify(snap), stored(c.messages), { model: OPUS });
  assert.equal(r.tokenCount(), count);
  // Edited usage fails the check; messages too short for it are a mismatch.
  assert.throws(() => cc.Compactor.restore({ ...snap, usage: { ...snap.usage, input_tokens: 1 } }, stored(c.messages), { model: OPUS }),
    (e) => e.code === 'INVALID_SNAPSHOT');
  c.free();
  r.free();
});

test('what the usage taught survives a compaction and a snapshot: the restored Compactor counts the first request after it the same', async () => {
  const L = h.loadLongTranscript();
  const lines = cc.parseTranscript(L.text).slice(0, L.boundary);
  const c = new cc.Compactor({ model: OPUS, summarize: cc.offlineSummarizer(), messages: lines });
  const learned = c.calibration();
  assert.ok(learned.observations > 30 && learned.overhead > 20_000 && learned.ratio > 1, JSON.stringify(learned));
  const r = await c.compact();
  assert.deepEqual(r.calibration, learned);
  assert.equal(c.tokenCount(), r.truePostCompactTokenCount);
  // The compacted messages alone no longer show the usage: the count is kept by the snapshot.
  assert.ok(cc.tokenCountWithEstimation(c.messages) < c.tokenCount());
  const snap = saved(c);
  assert.equal(snap.calibration.length, Math.min(64, learned.observations));
  const back = cc.Compactor.restore(snap, stored(c.messages), { model: OPUS });
  assert.equal(back.tokenCount(), c.tokenCount());
  assert.deepEqual(back.calibration(), learned);
  // An edited calibration is refused as any edited snapshot.
  const edited = { ...snap, calibration: snap.calibration.map(([e, r]) => [e, r + 1]) };
  throwsCode(() => cc.Compactor.restore(edited, stored(c.messages), { model: OPUS }), 'INVALID_SNAPSHOT', /check/);
});
