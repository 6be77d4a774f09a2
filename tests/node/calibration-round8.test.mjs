// Round 8: the calibration (the line `real ≈ overhead + ratio · estimate` learned from the usage
// seen) after microCompact. Usage reported before a clearing measured the tool results; the
// estimate of the edited messages sees the placeholder: paired, those observations spoil the
// line. Usage reported after it (or for a tool whose output merely is the placeholder's text)
// measured what the estimate sees and must still be learned from. The calibration keeps every
// observation and those whose request held no cleared result, and falls back on the second set
// only when the line through all of them fits none or misses that set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { loadLongTranscript, summaryResponse, OPUS, filler } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const summarize = async () => summaryResponse('Work so far. ' + 'The assistant edited files and ran tests. '.repeat(50));
const near = (a, b, share) => Math.abs(a - b) <= share * b;
const PLACEHOLDER = cc.constants.CLEARED_TOOL_RESULT_PLACEHOLDER;
/** The messages with every usage removed: their count is their bare estimate. */
const withoutUsage = (msgs) => msgs.map((m) => {
  if (m.type === 'assistant' && m.message?.usage) {
    const { usage, ...message } = m.message;
    return { ...m, message };
  }
  if (m.role === 'assistant' && m.usage) {
    const { usage, ...rest } = m;
    return rest;
  }
  return m;
});

test('(a) the shared long session, micro-compacted then compacted, keeps the system prompt and tools in the count', async () => {
  const { before } = loadLongTranscript();
  const plain = await cc.compactConversation(before, { model: OPUS, summarize });
  assert.ok(plain.truePostCompactTokenCount > 25_000, `${plain.truePostCompactTokenCount}`);
  const mc = cc.microCompact(before, { keepRecent: 5 });
  assert.ok(mc.tokensFreed > 80_000, `${mc.tokensFreed}`);
  const after = await cc.compactConversation(mc.messages, { model: OPUS, summarize });
  // Before: 576, the summary's bare estimate (the observations fit no line).
  assert.ok(
    near(after.truePostCompactTokenCount, plain.truePostCompactTokenCount, 0.15),
    `truePost ${after.truePostCompactTokenCount} after microCompact vs ${plain.truePostCompactTokenCount} without`,
  );
  // The compacted conversation counted on its own with the calibration returned agrees.
  const next = cc.buildPostCompactMessages(after);
  assert.equal(cc.tokenCountWithEstimation(next, { calibration: after.calibration }), after.truePostCompactTokenCount);
  // A Compactor over the micro-compacted lines: the same after its compaction.
  const c = new cc.Compactor({ model: OPUS, summarize, messages: mc.messages });
  await c.compact();
  assert.equal(c.tokenCount(), after.truePostCompactTokenCount);
  c.free();
});

/** `n` turns of transcript lines after `last`: a question, then an answer whose usage is what a
 *  request sending `overhead` besides the messages, at `ratio` real tokens per estimated one,
 *  measures (the estimate of everything since the latest boundary). */
function continueWithUsage(msgs, n, overhead, ratio) {
  const out = [...msgs];
  const last = msgs[msgs.length - 1];
  const base = { isSidechain: false, userType: 'external', cwd: last.cwd, sessionId: last.sessionId, version: last.version };
  const at = (k) => new Date(Date.parse(last.timestamp) + 1000 * k).toISOString();
  let parent = last.uuid;
  for (let k = 0; k < n; k++) {
    const q = { ...base, parentUuid: parent, type: 'user', message: { role: 'user', content: `Next step ${k}: ${filler(1_200, k)}` }, uuid: `r8-q${k}`, timestamp: at(2 * k + 1) };
    out.push(q);
    const sent = cc.tokenCountWithEstimation(withoutUsage(out));
    out.push({
      ...base, parentUuid: q.uuid, type: 'assistant', uuid: `r8-a${k}`, timestamp: at(2 * k + 2),
      message: {
        id: `msg_r8_${k}`, type: 'message', role: 'assistant', model: OPUS, content: [{ type: 'text', text: `Done: ${filler(400, k + 7)}` }],
        stop_reason: 'end_turn', stop_sequence: null,
        usage: { input_tokens: Math.round(overhead + ratio * sent), output_tokens: 100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    });
    parent = `r8-a${k}`;
  }
  return out;
}

test('(b) micro-compacted, session-memory compacted, then 20 turns with usage: the next compaction counts by those turns', async () => {
  const { before } = loadLongTranscript();
  const mc = cc.microCompact(before, { keepRecent: 5 });
  const sm = await cc.trySessionMemoryCompaction(mc.messages, {
    model: OPUS, sessionMemory: 'Session notes. ' + 'The user and the assistant fixed the parser and its tests. '.repeat(20),
  });
  const post = cc.buildPostCompactMessages(sm);
  // The messages kept still hold cleared results: every request after the boundary sent them.
  assert.ok(post.some((m) => m.type === 'user' && JSON.stringify(m.message?.content).includes(PLACEHOLDER)));
  const [overhead, ratio] = [15_000, 1.1];
  const msgs = continueWithUsage(post, 20, overhead, ratio);
  const result = await cc.compactConversation(msgs, { model: OPUS, summarize });
  assert.equal(result.calibration.observations, 20, JSON.stringify(result.calibration));
  const truth = Math.round(overhead + ratio * cc.tokenCountWithEstimation(withoutUsage(cc.buildPostCompactMessages(result))));
  assert.ok(near(result.truePostCompactTokenCount, truth, 0.1), `truePost ${result.truePostCompactTokenCount}, true ${truth}`);
  // A Compactor given the turns one by one learns the same.
  const c = new cc.Compactor({ model: OPUS, summarize, messages: post });
  for (const m of msgs.slice(post.length)) c.push(m);
  assert.equal(c.calibration().observations, 20);
  await c.compact();
  assert.ok(near(c.tokenCount(), truth, 0.1), `Compactor ${c.tokenCount()}, true ${truth}`);
  c.free();
});

test('(c) a tool output that merely is the placeholder text does not stop the learning', async () => {
  // An agent's session in API shape: 24 Read calls; the second tool's output is the
  // placeholder's text, sent as it is. Each request measures 20,000 + 1.25 × its estimate.
  const msgs = [{ role: 'user', content: 'fix the tests '.repeat(10) }];
  for (let k = 0; k < 24; k++) {
    const sent = cc.tokenCountWithEstimation(withoutUsage(msgs));
    msgs.push({
      role: 'assistant',
      content: [{ type: 'text', text: filler(2_000, k) }, { type: 'tool_use', id: `t${k}`, name: 'Read', input: { file_path: `/src/f${k}.rs` } }],
      usage: { input_tokens: 20_000 + Math.round(1.25 * sent), output_tokens: 20 },
    });
    msgs.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${k}`, content: k === 1 ? PLACEHOLDER : filler(8_000, k + 1) }] });
  }
  const result = await cc.compactConversation(msgs, { model: OPUS, summarize });
  assert.equal(result.calibration.observations, 24, JSON.stringify(result.calibration));
  assert.ok(Math.abs(result.calibration.ratio - 1.25) < 0.01 && Math.abs(result.calibration.overhead - 20_000) < 50, JSON.stringify(result.calibration));
  const c = new cc.Compactor({ model: OPUS, summarize, messages: msgs });
  assert.deepEqual(c.calibration(), result.calibration);
  c.free();
});

// What Compactor.snapshot() of the micro-compacted long session wrote before the two sets were
// kept (only `calibration`, the observations of every request): still read, to the same count.
const OLD_SNAPSHOT = {
  format: 'context-compaction/compactor', v: 1, messages: 753, fingerprint: 'ed5880f2034feba3', tokenCount: 171047,
  consecutiveFailures: 0, thrash: { turnsSinceCompaction: null, rapidRefills: 0, thrashing: false },
  check: '0f575a36cc0b2472',
  calibration: [
    [37, 26450], [146, 28046], [195, 29361], [277, 29510], [4841, 35111], [5083, 59409],
    [5290, 64160], [5357, 70766], [5683, 72904], [6340, 73498], [6618, 73797], [8930, 76248],
    [9527, 77338], [9830, 77812], [11373, 79605], [11890, 80280], [12165, 80836], [13378, 81960],
    [14079, 82723], [14156, 82884], [14279, 83907], [14584, 84769], [14886, 85126], [15135, 85427],
    [15249, 85654], [15355, 85882], [15395, 85988], [15474, 89828], [20201, 96325], [20241, 96431],
    [20460, 96817], [20543, 97075], [24899, 102916], [28408, 105209], [28488, 105415],
    [28649, 105792], [28788, 106654], [29017, 106950], [29068, 107228], [29136, 108525],
    [29193, 108751], [29280, 115025], [29369, 124851], [30312, 126552], [30414, 133202],
    [39965, 149162], [40562, 149717], [40602, 149823], [40696, 150050], [40802, 150343],
    [46569, 153713], [46657, 153914], [46731, 154250], [46797, 154576], [47029, 154873],
    [47069, 155133], [47112, 156483], [47169, 156599], [47774, 160591], [49585, 163347],
    [51206, 164831],
  ],
};

test('(d) a Compactor snapshot taken after micro-compaction restores to the same counts', async () => {
  const { before } = loadLongTranscript();
  const mc = cc.microCompact(before, { keepRecent: 5 });
  const c = new cc.Compactor({ model: OPUS, summarize, messages: mc.messages });
  const snap = JSON.parse(JSON.stringify(c.snapshot()));
  assert.equal(snap.calibration.length, 61);
  assert.deepEqual(snap.calibrationClean, [[37, 26_450]]);
  const back = cc.Compactor.restore(snap, mc.messages, { model: OPUS, summarize });
  assert.equal(back.tokenCount(), c.tokenCount());
  assert.deepEqual(back.calibration(), c.calibration());
  // Both compact to the same count: the line of the request before the first clearing.
  await c.compact();
  await back.compact();
  assert.equal(back.tokenCount(), c.tokenCount());
  const plain = await cc.compactConversation(before, { model: OPUS, summarize });
  assert.ok(near(c.tokenCount(), plain.truePostCompactTokenCount, 0.15), `${c.tokenCount()} vs ${plain.truePostCompactTokenCount}`);
  // The snapshot after the compaction carries both sets on.
  const later = cc.Compactor.restore(c.snapshot(), c.messages, { model: OPUS, summarize });
  assert.equal(later.tokenCount(), c.tokenCount());
  for (const x of [c, back, later]) x.free();

  // A snapshot written before this change (no calibrationClean) is read as before.
  const old = cc.Compactor.restore(OLD_SNAPSHOT, mc.messages, { model: OPUS, summarize });
  assert.equal(old.tokenCount(), OLD_SNAPSHOT.tokenCount);
  assert.equal(old.calibration(), null);
  old.free();
});
