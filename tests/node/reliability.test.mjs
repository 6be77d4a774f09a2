// The reliability suite of issue 5 (RELIABILITY.md): every compaction failure that users of
// other agents report, shown not to happen here through the built package's JS API.
// Test names start with "mode NN" — the row of RELIABILITY.md they prove. Random histories come
// from a seeded generator (helpers/support.mjs); every result is checked by an independent
// checker of the Messages API invariants and by the exported validateForApi. Behaviour only:
// no assertion looks at wall-clock time.
//
// Cases per randomized test: RELIABILITY_CASES (default 60).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const { OPUS } = h;
const LOW = { autoCompactPctOverride: 5 }; // auto-compact threshold 9,000 tokens for OPUS
const CASES = Number(process.env.RELIABILITY_CASES ?? 60);
const SUMMARY_INTRO = /^This conversation continues an earlier one/;

/** A fresh read-file state of small text files. */
const fileState = (n = 3) => new Map(Array.from({ length: n }, (_, i) => [`/repo/f${i + 1}.ts`, { content: `export const f${i + 1} = ${i + 1};\n`, timestamp: i + 1 }]));

/** Asserts the caller's objects are unchanged (deep) and returns nothing. */
const untouched = (now, before, label = '') => assert.deepStrictEqual(now, before, `${label}: the caller's messages changed`);

/** The escaped JSON form of a string, to search it inside JSON.stringify output. */
const inJson = (s) => JSON.stringify(s).slice(1, -1);

/** The text of a message (string content or text blocks). */
const textOf = (m) => {
  const c = m?.message?.content ?? m?.content;
  return typeof c === 'string' ? c : (c ?? []).filter((b) => b?.type === 'text').map((b) => b.text).join('');
};

// =============================================================================================
describe('mode 01: the summary request is itself too long', () => {
  /** The latest user message and the history, at about 1.3× the 200K window. */
  const big = (shape) => {
    const msgs = shape === 'api'
      ? h.apiConversationOfTokens(265_000, { resultChars: 6_000 })
      : h.transcriptConversation({ rounds: 170, resultChars: 2_000 });
    const pre = cc.tokenCountWithEstimation(msgs);
    assert.ok(pre >= 260_000, `${shape}: ${pre} tokens is not 1.3× the window`);
    return msgs;
  };

  test('mode 01: history at 1.3× the window, the real 400 body above M → success within 3 retries using the gap; the latest user turn intact', async () => {
    for (const shape of ['api', 'transcript']) {
      const msgs = big(shape);
      const before = structuredClone(msgs);
      const latest = textOf(h.latestUserMessage(msgs).message);
      for (const limit of [200_000, 100_000, 60_000]) {
        const summarize = h.strictSummarizer(limit);
        const res = await cc.compactConversation(msgs, { model: OPUS, summarize }, {});
        const label = `${shape}, M = ${limit}`;
        assert.ok(res.ptlRetries <= 3, `${label}: ${res.ptlRetries} retries`);
        // The blind 20%-of-rounds fallback would need 3 retries for 100,000 and could never
        // reach 60,000: only using the reported gap gets there in at most 2.
        // (Each retry drops by the estimate of the raw messages while the gap is measured on
        // the rendered request, so the last retry may be needed; still within the 3.)
        assert.ok(res.ptlRetries <= 3, `${label}: ${res.ptlRetries} retries (sizes ${summarize.sizes})`);
        assert.equal(summarize.calls.length, res.ptlRetries + 1);
        assert.ok(summarize.sizes.at(-1) <= limit, `${label}: sizes ${summarize.sizes}`);
        const last = summarize.calls.at(-1).request;
        assert.equal(last.messages[0].role, 'user');
        assert.ok(JSON.stringify(last.messages).includes(inJson(latest)), `${label}: the latest user message is not in the request, intact`);
        untouched(msgs, before, label);
        h.assertApiValid(cc, cc.buildPostCompactMessages(res), { label });
      }
    }
  });

  test('mode 01: a summarizer with a smaller window (config.summaryContextWindow 64,000): the first request already fits, no 400 seen', async () => {
    for (const shape of ['api', 'transcript']) {
      const msgs = big(shape);
      const latest = textOf(h.latestUserMessage(msgs).message);
      const errors = [];
      const summarize = h.recordingSummarizer((request) => {
        const n = h.requestTextTokens(request);
        if (n + request.max_tokens > 64_000) {
          const e = Object.assign(new Error(`400 input length and \`max_tokens\` exceed context limit: ${n} + ${request.max_tokens} > 64000, decrease input length or \`max_tokens\` and try again`), { status: 400 });
          errors.push(e);
          throw e;
        }
        return h.summaryBody('fits the small window');
      });
      const res = await cc.compactConversation(msgs, { model: OPUS, summarize, config: { summaryContextWindow: 64_000 } }, {});
      assert.equal(errors.length, 0, `${shape}: a 400 was seen`);
      assert.equal(summarize.calls.length, 1);
      assert.equal(res.ptlRetries, 0);
      assert.ok(JSON.stringify(summarize.calls[0].request.messages).includes(inJson(latest)), `${shape}: the latest user message is sent`);
    }
  });
});

// =============================================================================================
describe('modes 02, 08, 14: every exported transformation on random histories', () => {
  test('mode 02: the generator and the independent checker (sanity)', () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const msgs = h.randomHistory(h.prng(seed));
      assert.deepEqual(h.apiProblems(msgs), [], `seed ${seed}: the generator made an invalid history`);
    }
    const ok = h.apiConversation({ rounds: 2, thinking: true });
    assert.match(h.apiProblems(ok.slice(0, 2)).join(), /not answered/);
    assert.match(h.apiProblems([{ role: 'user', content: 'q' }, ...ok.slice(2)]).join(), /does not follow/);
    assert.match(h.apiProblems(ok.slice(1)).join(), /first message sent is an assistant/);
    assert.match(h.apiProblems([{ role: 'user', content: [] }]).join(), /empty content/);
    const edited = structuredClone(ok);
    edited[1].content[0].thinking += '!';
    assert.match(h.thinkingProblems(ok, edited).join(), /edited/);
  });

  test('mode 14: validateForApi accepts every valid random history (interleaved parallel results included) and catches a removed tool_result', () => {
    const rejected = [];
    for (let seed = 1; seed <= CASES; seed++) {
      const msgs = h.randomHistory(h.prng(seed));
      const v = cc.validateForApi(msgs);
      if (!v.valid) rejected.push(`seed ${seed}: ${JSON.stringify(v.problems[0])}`);
      const broken = structuredClone(msgs);
      const start = broken.findLastIndex((m) => m?.type === 'system' && m.subtype === 'compact_boundary') + 1;
      const at = broken.findLastIndex((m, i) => i >= start && m.isSidechain !== true && Array.isArray(m?.message?.content ?? m?.content) && (m.message?.content ?? m.content).some((b) => b?.type === 'tool_result'));
      if (at >= 0) {
        const c = broken[at].message?.content ?? broken[at].content;
        c.splice(c.findIndex((b) => b?.type === 'tool_result'), 1);
        assert.notDeepEqual(h.apiProblems(broken), [], `seed ${seed}: the checker misses it`);
        assert.equal(cc.validateForApi(broken).valid, false, `seed ${seed}: validateForApi misses a removed tool_result`);
      }
    }
    assert.deepEqual(rejected, [], `validateForApi rejects valid histories:\n${rejected.slice(0, 5).join('\n')}`);
  });

  test('mode 02/08/14/16: microCompact — pairs, thinking, validity; byte-identical across runs; input never mutated', () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const rng = h.prng(seed);
      const msgs = h.randomHistory(rng);
      const before = structuredClone(msgs);
      const opts = { keepRecent: rng.int(0, 8), keepLatestPerPath: rng.bool() };
      const a = cc.microCompact(msgs, opts);
      const b = cc.microCompact(structuredClone(msgs), opts);
      assert.equal(JSON.stringify(a), JSON.stringify(b), `seed ${seed}: not byte-identical across runs`);
      untouched(msgs, before, `seed ${seed}`);
      h.assertApiValid(cc, a.messages, { input: msgs, strict: false, label: `microCompact seed ${seed}` });
      assert.deepEqual(cc.microCompact(a.messages, opts).clearedToolUseIds, [], `seed ${seed}: a second pass clears more`);
    }
  });

  test('mode 02/07/08/14: stripImagesFromMessages and stripReinjectedAttachments — pairs, thinking, validity; no media left in user messages', () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const msgs = h.randomHistory(h.prng(seed));
      const before = structuredClone(msgs);
      const stripped = cc.stripImagesFromMessages(msgs);
      h.assertApiValid(cc, stripped, { input: msgs, strict: false, label: `strip seed ${seed}` });
      for (const m of stripped) {
        const p = m?.isSidechain ? null : m?.type === undefined ? m : m.type === 'user' ? m.message : null;
        if (!p || p.role !== 'user' || !Array.isArray(p.content)) continue;
        for (const blk of p.content) {
          const inner = [blk, ...(Array.isArray(blk?.content) ? blk.content : [])];
          assert.ok(!inner.some((x) => x?.type === 'image' || x?.type === 'document'), `seed ${seed}: media left`);
        }
      }
      const dropped = cc.stripReinjectedAttachments(stripped);
      h.assertApiValid(cc, dropped, { input: msgs, strict: false, label: `attachments seed ${seed}` });
      untouched(msgs, before, `seed ${seed}`);
    }
  });

  test('mode 01/02/08/14: truncateHeadForPTLRetry three times with random gaps — pairs, whole responses, thinking, a user message first', () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const rng = h.prng(seed);
      const msgs = h.randomHistory(rng, { turns: rng.int(2, 10) });
      let cur = msgs;
      for (let k = 0; k < 3; k++) {
        const next = cc.truncateHeadForPTLRetry(cur, h.ptlError(200_000 + rng.int(0, 60_000), 200_000));
        if (next === null) break;
        h.assertApiValid(cc, next, { input: msgs, strict: false, label: `truncation seed ${seed} retry ${k + 1}` });
        cur = next;
      }
    }
  });

  test('mode 01: truncateHeadForPTLRetry with keepLatestRequest (as the pipeline uses it) never drops the latest user prompt (the current task) — whatever the gap', () => {
    const lost = [];
    for (let seed = 1; seed <= CASES; seed++) {
      const rng = h.prng(seed);
      const msgs = h.randomHistory(rng, { turns: rng.int(1, 8) });
      const latest = h.latestUserMessage(msgs)?.message;
      let cur = msgs;
      for (let k = 0; k < 3; k++) {
        const next = cc.truncateHeadForPTLRetry(cur, h.ptlError(200_000 + rng.int(0, 400_000), 200_000), { keepLatestRequest: true });
        if (next === null) break;
        cur = next;
      }
      if (latest && !cur.includes(latest)) lost.push(seed);
    }
    assert.deepEqual(lost, [], `the latest user message was dropped (seeds ${lost.slice(0, 10)})`);
  });

  test('mode 02/08/14/21: compactConversation + buildPostCompactMessages — every result valid, resumable', async () => {
    let compacted = 0;
    for (let seed = 1; seed <= CASES; seed++) {
      const msgs = h.randomHistory(h.prng(seed));
      const before = structuredClone(msgs);
      let res;
      try {
        res = await cc.compactConversation(msgs, { model: OPUS, summarize: async () => h.summaryBody('Short summary.') }, {});
      } catch (e) {
        assert.ok(['COMPACTION_NOT_SMALLER', 'NOTHING_TO_COMPACT'].includes(e.code), `seed ${seed}: ${e.code} ${e.message}`);
        untouched(msgs, before, `seed ${seed}`);
        continue;
      }
      compacted++;
      const post = cc.buildPostCompactMessages(res);
      h.assertApiValid(cc, post, { input: msgs, strict: false, label: `compaction seed ${seed}` });
      assert.equal(cc.tokenCountWithEstimation(post, { calibration: res.calibration }), res.truePostCompactTokenCount);
      untouched(msgs, before, `seed ${seed}`);
    }
    assert.ok(compacted > CASES / 2, `only ${compacted} of ${CASES} compacted`);
  });

  test('mode 02/08/14: trySessionMemoryCompaction — kept suffix keeps pairs and whole responses; valid; resumable', async () => {
    let applied = 0;
    for (let seed = 1; seed <= CASES; seed++) {
      const rng = h.prng(seed);
      const msgs = h.randomHistory(rng, { turns: rng.int(3, 16) });
      const before = structuredClone(msgs);
      let res;
      try {
        res = await cc.trySessionMemoryCompaction(msgs, { model: OPUS, sessionMemory: 'Session memory: parser work, cache bug, failing test.' });
      } catch (e) {
        assert.equal(e.code, 'SESSION_MEMORY_NOT_APPLICABLE', `seed ${seed}: ${e.message}`);
        continue;
      }
      applied++;
      const post = cc.buildPostCompactMessages(res);
      h.assertApiValid(cc, post, { input: msgs, strict: false, label: `session memory seed ${seed}` });
      res.messagesToKeep.forEach((m) => assert.ok(msgs.includes(m), 'kept messages are the caller\'s objects'));
      const back = cc.parseTranscript(cc.serializeTranscript([...msgs, ...post]));
      h.assertApiValid(cc, back, { input: msgs, strict: false, label: `session memory seed ${seed}, resumed` });
      assert.equal(new cc.Compactor({ model: OPUS, messages: back }).tokenCount(), res.truePostCompactTokenCount, `seed ${seed}: resumed count`);
      untouched(msgs, before, `seed ${seed}`);
    }
    assert.ok(applied > 0, 'session memory never applied');
  });
});

// =============================================================================================
describe('mode 03: thrashing', () => {
  test('mode 03: auto-compaction whose result is not below the threshold is a failure (COMPACTION_NOT_SMALLER); the breaker opens after 3', async () => {
    const msgs = h.apiConversationOfTokens(40_000);
    const before = structuredClone(msgs);
    // ~12,000 tokens of summary: smaller than the 40,000 before, above the 9,000 threshold.
    const summarize = h.recordingSummarizer(h.summaryBody(h.filler(48_000)));
    let tracking = { consecutiveFailures: 0 };
    for (let i = 1; i <= 3; i++) {
      const out = await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize, config: LOW }, tracking);
      assert.equal(out.wasCompacted, false, `attempt ${i}: a result above the threshold was committed`);
      assert.equal(out.error?.code, 'COMPACTION_NOT_SMALLER');
      assert.equal(out.consecutiveFailures, i);
      tracking = { consecutiveFailures: out.consecutiveFailures };
    }
    const open = await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize, config: LOW }, tracking);
    assert.equal(open.skipped, 'circuitBreakerOpen');
    assert.equal(summarize.calls.length, 3);
    untouched(msgs, before);
    // The same through the Compactor.
    const c = new cc.Compactor({ model: OPUS, summarize: h.recordingSummarizer(h.summaryBody(h.filler(48_000))), config: LOW, messages: msgs });
    for (let i = 1; i <= 3; i++) assert.equal((await c.maybeAutoCompact()).error?.code, 'COMPACTION_NOT_SMALLER');
    assert.equal((await c.maybeAutoCompact()).skipped, 'circuitBreakerOpen');
    c.messages.forEach((m, i) => assert.strictEqual(m, msgs[i]));
  });

  test('mode 03: Compactor — "refilled within 3 turns, 3 times in a row" is detected and reported (tracking.thrashing, skipped "thrashing", error THRASHING)', async () => {
    const summarize = h.recordingSummarizer(h.summaryBody('short summary'));
    const c = new cc.Compactor({ model: OPUS, summarize, config: LOW });
    const outcomes = [];
    for (let turn = 0; turn < 8; turn++) {
      // One turn adds ~10,500 tokens: above the 9,000 threshold at once after every compaction.
      c.pushMany(h.apiConversation({ rounds: 1, resultChars: 40_000, prefix: `t${turn}_` }));
      outcomes.push(await c.maybeAutoCompact());
    }
    const story = outcomes.map((o) => o.skipped ?? (o.wasCompacted ? 'compacted' : o.error?.code));
    const at = outcomes.findIndex((o) => o.skipped === 'thrashing');
    assert.ok(at >= 0, `thrashing never reported: ${story}`);
    const before = outcomes.slice(0, at).filter((o) => o.wasCompacted).length;
    assert.ok(before >= 3 && before <= 4, `reported after ${before} compactions: ${story}`);
    const o = outcomes[at];
    assert.equal(o.wasCompacted, false);
    assert.ok(o.error instanceof Error, 'the outcome carries an Error');
    assert.equal(o.error.code, 'THRASHING');
    assert.match(o.error.message, /refill|thrash/i, 'the message says what happened');
    assert.match(o.error.message, /3/, 'the message gives the numbers');
    assert.equal(c.tracking.thrashing, true);
    // While thrashing, no more summary requests.
    const calls = summarize.calls.length;
    assert.ok(outcomes.slice(at).every((x) => !x.wasCompacted), story.join());
    c.pushMany(h.apiConversation({ rounds: 1, resultChars: 40_000, prefix: 'late_' }));
    const again = await c.maybeAutoCompact();
    assert.equal(again.skipped, 'thrashing');
    assert.equal(again.error?.code, 'THRASHING');
    assert.equal(summarize.calls.length, calls);
    assert.equal(calls, before, 'one summary request per compaction, none after');
    // A manual compaction resets it: automatic compaction runs again when due.
    await c.compact();
    assert.equal(c.tracking.thrashing, false);
    c.pushMany(h.apiConversation({ rounds: 1, resultChars: 40_000, prefix: 'after_' }));
    assert.equal((await c.maybeAutoCompact()).wasCompacted, true);
  });

  test('mode 03: compactions spaced more than 3 turns apart are not thrashing', async () => {
    const summarize = h.recordingSummarizer(h.summaryBody('short summary'));
    const c = new cc.Compactor({ model: OPUS, summarize, config: LOW });
    let compactions = 0;
    for (let turn = 0; turn < 40; turn++) {
      c.pushMany(h.apiConversation({ rounds: 1, resultChars: 3_000, prefix: `s${turn}_` })); // ~1,100 tokens a turn
      const o = await c.maybeAutoCompact();
      assert.notEqual(o.skipped, 'thrashing', `turn ${turn}`);
      if (o.wasCompacted) compactions++;
    }
    assert.ok(compactions >= 3, `${compactions} compactions`);
    assert.notEqual(c.tracking.thrashing, true);
  });
});

// =============================================================================================
describe('mode 04: token accounting', () => {
  const line = (type, message, extra = {}) => ({ type, uuid: `${type}-${Math.random()}`, message, ...extra });

  test('mode 04: the latest response\'s output counted once, cache tokens counted, a split response counted once', () => {
    const usage = { input_tokens: 7, cache_creation_input_tokens: 1_000, cache_read_input_tokens: 50_000, output_tokens: 300 };
    const a = (block) => line('assistant', { role: 'assistant', id: 'msg_a', content: [block], usage, stop_reason: 'tool_use' });
    const res = (id, n) => line('user', { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'r'.repeat(n) }] });
    const msgs = [
      line('user', { role: 'user', content: 'x'.repeat(40_000) }),
      a({ type: 'thinking', thinking: 't'.repeat(4_000), signature: 's' }),
      a({ type: 'tool_use', id: 'a', name: 'Read', input: {} }),
      res('a', 400),
      a({ type: 'tool_use', id: 'b', name: 'Read', input: {} }),
      res('b', 800),
    ];
    assert.equal(cc.tokenCountWithEstimation(msgs), 7 + 1_000 + 50_000 + 300 + 100 + 200);
    const c = new cc.Compactor({ model: OPUS, messages: msgs });
    assert.equal(c.tokenCount(), 51_607);
    // API shape: the latest usage wins, once.
    assert.equal(cc.tokenCountWithEstimation([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a', usage: { input_tokens: 10, cache_read_input_tokens: 90_000, output_tokens: 50 } },
    ]), 90_060);
  });

  test('mode 04: images and documents count 2,000 each, never by base64 length', () => {
    for (const bytes of [10, 3_000_000]) {
      assert.equal(cc.tokenCountWithEstimation([{ role: 'user', content: [
        h.mediaBlock('image', 'image/png', bytes),
        h.mediaBlock('document', 'application/pdf', bytes),
        { type: 'tool_result', tool_use_id: 't', content: [h.mediaBlock('image', 'image/jpeg', bytes)] },
      ] }]), 6_000);
    }
  });

  test('mode 04: a usage above twice the model\'s window is bogus — tokenCountWithEstimation(messages, {model}) throws INVALID_TOKEN_COUNT naming the message', () => {
    const msgs = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a', usage: { input_tokens: 450_000, output_tokens: 1 } },
      { role: 'user', content: 'zzzz' },
    ];
    assert.equal(cc.tokenCountWithEstimation(msgs), 450_002, 'without a model the count keeps working');
    let err;
    assert.throws(() => cc.tokenCountWithEstimation(msgs, { model: OPUS }), (e) => (err = e, true));
    assert.ok(err instanceof Error);
    assert.equal(err.code, 'INVALID_TOKEN_COUNT');
    assert.match(err.message, /messages\[1\]/, 'names the message');
    // Within twice the window, and on a 1M-window model, the same numbers are fine.
    assert.equal(cc.tokenCountWithEstimation([msgs[0], { ...msgs[1], usage: { input_tokens: 399_000 } }], { model: OPUS }), 399_000);
    assert.equal(cc.tokenCountWithEstimation(msgs, { model: `${OPUS}[1m]` }), 450_002);
  });

  test('mode 04: a bogus usage (more than twice the window) is rejected when the model is known — INVALID_TOKEN_COUNT naming the message', () => {
    const msgs = [
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a', usage: { input_tokens: 5_000_000, output_tokens: 1 } },
    ];
    let err;
    assert.throws(() => cc.tokenCountWithEstimation(msgs, { model: OPUS }), (e) => (err = e, true));
    assert.equal(err.code, 'INVALID_TOKEN_COUNT');
    assert.match(err.message, /messages\[1\]/);
  });
});

// =============================================================================================
describe('mode 05: pinned content', () => {
  const PIN_TEXT = 'PINNED-RULE-7731: never push to main without a review.';
  const PIN_MESSAGE = { role: 'user', content: [{ type: 'text', text: 'PINNED-SPEC-4412: the public API stays backwards compatible.', cache_control: { type: 'ephemeral' } }] };

  /** Checks one compacted conversation: each pinned item once, as its own message after the summary. */
  const checkPinned = (post, label) => {
    const json = JSON.stringify(post);
    assert.equal(json.split('PINNED-RULE-7731').length - 1, 1, `${label}: the pinned string is not there exactly once`);
    assert.equal(json.split('PINNED-SPEC-4412').length - 1, 1, `${label}: the pinned message is not there exactly once`);
    const summaryAt = post.findIndex((m) => /<summary>/.test(textOf(m)));
    const msgAt = post.findIndex((m) => JSON.stringify(m) === JSON.stringify(PIN_MESSAGE));
    assert.ok(msgAt > summaryAt && summaryAt >= 0, `${label}: the pinned message is not kept as given after the summary`);
    const strAt = post.findIndex((m) => (m.role ?? m.message?.role) === 'user' && textOf(m) === PIN_TEXT);
    assert.ok(strAt > summaryAt, `${label}: the pinned string is not its own user text message after the summary`);
  };

  test('mode 05: context.pinned messages and strings survive 5 successive compactions byte-identical and exactly once', async () => {
    let msgs = h.apiConversation({ rounds: 8 });
    const pinned = [PIN_TEXT, PIN_MESSAGE];
    const pinnedBefore = structuredClone(pinned);
    for (let k = 1; k <= 5; k++) {
      const res = await cc.compactConversation(msgs, { model: OPUS, pinned, summarize: async () => h.summaryBody(`summary number ${k}`) }, {});
      const post = cc.buildPostCompactMessages(res);
      checkPinned(post, `compaction ${k}`);
      h.assertApiValid(cc, post, { label: `compaction ${k}` });
      msgs = [...post, ...h.apiConversation({ rounds: 6, prefix: `k${k}_` })];
    }
    assert.deepStrictEqual(pinned, pinnedBefore, 'the pinned items themselves are not changed');
  });

  test('mode 05: a Compactor with pinned content: 5 compactions, each pinned item once, unchanged', async () => {
    const c = new cc.Compactor({ model: OPUS, pinned: [PIN_TEXT, PIN_MESSAGE], summarize: async () => h.summaryBody('compactor summary'), messages: h.apiConversation({ rounds: 8 }) });
    for (let k = 1; k <= 5; k++) {
      await c.compact();
      checkPinned(c.messages, `Compactor compaction ${k}`);
      c.pushMany(h.apiConversation({ rounds: 6, prefix: `c${k}_` }));
    }
  });
});

// =============================================================================================
describe('mode 06: the current task kept, the summary labelled', () => {
  // The protection is the option `keepLastUserMessage` (CompactOptions, Compactor options).
  test('mode 06: compactConversation keeps the latest user message (not a tool result) verbatim after the summary', async () => {
    for (const shape of ['api', 'transcript']) {
      const msgs = shape === 'api' ? h.apiConversation({ rounds: 10 }) : h.transcriptConversation({ rounds: 8 });
      const ask = 'LATEST-TASK: rename parse_line to parse_record everywhere, then run the tests.';
      const pending = shape === 'api' ? { role: 'user', content: ask } : { type: 'user', uuid: 'pending-1', parentUuid: msgs.at(-1).uuid, isSidechain: false, sessionId: 'sess-0001', message: { role: 'user', content: ask } };
      msgs.push(pending);
      const res = await cc.compactConversation(msgs, { model: OPUS, summarize: async () => h.summaryBody('Earlier work on the parser.') }, { keepLastUserMessage: true });
      assert.ok(res.messagesToKeep.includes(pending), `${shape}: the latest user message is not in messagesToKeep`);
      const post = cc.buildPostCompactMessages(res);
      assert.equal(post.filter((m) => m === pending).length, 1);
      const summaryAt = post.indexOf(res.summaryMessages[0]);
      assert.ok(post.indexOf(pending) > summaryAt, 'the task follows the summary');
      h.assertApiValid(cc, post, { label: shape });
    }
  });

  test('mode 06: mid-turn (the history ends with tool results), the user message that started the turn is kept verbatim', async () => {
    const msgs = h.apiConversation({ rounds: 10 });
    msgs.pop(); // the turn's final answer is not written yet: the history ends with a tool_result
    const latest = h.latestUserMessage(msgs).message;
    assert.match(textOf(latest), /^Q9:/);
    const res = await cc.compactConversation(msgs, { model: OPUS, summarize: async () => h.summaryBody('Earlier work.') }, { keepLastUserMessage: true });
    assert.ok(res.messagesToKeep.includes(latest), 'Q9 is not kept');
    h.assertApiValid(cc, cc.buildPostCompactMessages(res));
    // Compactor.compact({keepLastUserMessage}) too.
    const c = new cc.Compactor({ model: OPUS, summarize: async () => h.summaryBody('Earlier work.'), messages: msgs });
    const res2 = await c.compact({ keepLastUserMessage: true });
    assert.ok(res2.messagesToKeep.includes(latest), 'Compactor.compact: Q11 is not kept');
    assert.ok(c.messages.includes(latest));
  });

  // Claude Code's reports are about automatic compaction: the auto paths take the same switch
  // from the context (autoCompactIfNeeded) and the Compactor's options (maybeAutoCompact).
  test('mode 06: auto-compaction keeps the latest user message too (keepLastUserMessage in the context / Compactor options)', async () => {
    const msgs = h.apiConversation({ rounds: 12 });
    msgs.pop();
    const latest = h.latestUserMessage(msgs).message;
    const out = await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize: async () => h.summaryBody('Earlier work.'), keepLastUserMessage: true, config: LOW }, {});
    assert.equal(out.wasCompacted, true, out.error?.message);
    assert.ok(out.compactionResult.messagesToKeep.includes(latest), 'autoCompactIfNeeded: the latest user message is not kept');
    const c = new cc.Compactor({ model: OPUS, summarize: async () => h.summaryBody('Earlier work.'), keepLastUserMessage: true, config: LOW, messages: msgs });
    const o = await c.maybeAutoCompact();
    assert.equal(o.wasCompacted, true, o.error?.message);
    assert.ok(o.compactionResult.messagesToKeep.includes(latest), 'maybeAutoCompact: the latest user message is not kept');
    assert.ok(c.messages.includes(latest));
  });

  test('mode 06: the summary message says it is a summary and not a new request', async () => {
    for (const isAutoCompact of [false, true]) {
      const res = await cc.compactConversation(h.apiConversation({ rounds: 6 }), { model: OPUS, summarize: async () => h.summaryBody('THE-SUMMARY-TEXT') }, { isAutoCompact });
      const text = textOf(res.summaryMessages[0]);
      assert.match(text, SUMMARY_INTRO);
      assert.match(text, /not a new request from the user/);
      assert.match(text, /<summary>\nTHE-SUMMARY-TEXT\n<\/summary>/);
    }
  });
});

// =============================================================================================
describe('mode 07: images never break compaction', () => {
  test('mode 07: 25 images of 1 MB: no base64 reaches the summarizer; each is a placeholder naming its type and size', async () => {
    const img = h.mediaBlock('image', 'image/png', 1_048_576);
    const pdf = h.mediaBlock('document', 'application/pdf', 12_288);
    const msgs = [];
    for (let i = 0; i < 25; i++) {
      const content = [];
      if (i > 0) content.push({ type: 'tool_result', tool_use_id: `shot${i}`, content: i % 2 ? [{ type: 'text', text: 'captured' }, img] : 'ok' });
      if (i % 2 === 0) content.push({ type: 'text', text: `screenshot ${i}` }, img);
      msgs.push({ role: 'user', content });
      msgs.push({ role: 'assistant', content: [{ type: 'text', text: `looked at ${i}` }, { type: 'tool_use', id: `shot${i + 1}`, name: 'Screenshot', input: {} }] });
    }
    msgs.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'shot25', content: 'ok' }, pdf] });
    assert.equal(msgs.flatMap((m) => m.content).flatMap((b) => [b, ...(Array.isArray(b.content) ? b.content : [])]).filter((b) => b.type === 'image').length, 25);
    const summarize = h.recordingSummarizer(h.summaryBody('screens'));
    const res = await cc.compactConversation(msgs, { model: OPUS, summarize }, {});
    const req = JSON.stringify(summarize.calls[0].request);
    assert.ok(!req.includes(img.source.data.slice(5_000, 5_100)), 'base64 reached the summarizer');
    assert.ok(req.length < 100_000, `the request is ${req.length} characters`);
    assert.equal(req.split('[image: image/png, 1.0 MB]').length - 1, 25);
    assert.equal(req.split('[document: application/pdf, 12 KB]').length - 1, 1);
    assert.equal(msgs[0].content[1], img, 'the caller\'s messages keep their images');
    h.assertApiValid(cc, cc.buildPostCompactMessages(res));
  });
});

// =============================================================================================
describe('modes 09, 10: unusable summaries are never committed', () => {
  const cut = () => h.summaryBody('The user asked for', { stopReason: 'max_tokens' });

  test('mode 09: a summary cut at max_tokens is never committed (compactConversation, autoCompactIfNeeded, Compactor, a streamed answer)', async () => {
    const msgs = h.apiConversation({ rounds: 12 });
    const before = structuredClone(msgs);
    const rfs = fileState();
    const post = [];
    await h.rejectsWithCode(cc.compactConversation(msgs, { model: OPUS, summarize: async () => cut(), readFileState: rfs, hooks: { postCompact: (x) => post.push(x) } }, {}), 'SUMMARY_TRUNCATED');
    untouched(msgs, before);
    assert.equal(rfs.size, 3, 'the read-file state is not cleared');
    assert.equal(post.length, 0, 'no PostCompact for a cut summary');
    const out = await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize: async () => cut(), config: LOW }, {});
    assert.deepEqual([out.wasCompacted, out.consecutiveFailures, out.error?.code], [false, 1, 'SUMMARY_TRUNCATED']);
    const c = new cc.Compactor({ model: OPUS, summarize: async () => cut(), messages: msgs });
    const count = c.tokenCount();
    await h.rejectsWithCode(c.compact(), 'SUMMARY_TRUNCATED');
    assert.equal(c.tokenCount(), count);
    c.messages.forEach((m, i) => assert.strictEqual(m, msgs[i]));
    // A streamed answer that stops at max_tokens, through anthropicSummarizer's shape.
    const streamed = { content: [{ type: 'text', text: '<summary>half of it' }], stop_reason: 'max_tokens', usage: { input_tokens: 9, output_tokens: 20_000 } };
    await h.rejectsWithCode(cc.compactConversation(msgs, { model: OPUS, summarize: async (req, { onText }) => (onText?.('<summary>half'), streamed) }, {}), 'SUMMARY_TRUNCATED');
  });

  test('mode 10: a compaction that grows the context is discarded and counted as a failure', async () => {
    const msgs = h.apiConversation({ rounds: 6 });
    const before = structuredClone(msgs);
    const huge = h.summaryBody(h.filler(400_000));
    const err = await h.rejectsWithCode(cc.compactConversation(msgs, { model: OPUS, summarize: async () => huge }, {}), 'COMPACTION_NOT_SMALLER');
    assert.match(err.message, /nothing was committed/);
    untouched(msgs, before);
    const out = await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize: async () => huge, config: { autoCompactPctOverride: 1 } }, { consecutiveFailures: 2 });
    assert.equal(out.wasCompacted, false);
    assert.equal(out.error?.code, 'COMPACTION_NOT_SMALLER');
    assert.equal(out.consecutiveFailures, 3, 'counted as a failure');
    const next = await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize: async () => huge, config: { autoCompactPctOverride: 1 } }, { consecutiveFailures: 3 });
    assert.equal(next.skipped, 'circuitBreakerOpen');
  });
});

// =============================================================================================
describe('modes 11, 12: transient errors, timeouts, aborts, failures at every step', () => {
  const T = { timeout: 20_000 };

  test('mode 11: 529 overloaded twice, then success', async () => {
    const msgs = h.apiConversation({ rounds: 6 });
    const summarize = h.recordingSummarizer((req, opts, n) => {
      if (n <= 2) throw h.overloadedError();
      return h.summaryBody('third time lucky');
    });
    const res = await cc.compactConversation(msgs, { model: OPUS, summarize }, { retryBaseMs: 1 });
    assert.equal(res.transientRetries, 2);
    assert.equal(summarize.calls.length, 3);
    assert.equal(res.summary, 'third time lucky');
  });

  test('mode 11: context.summaryTimeoutMs — a summarizer that never answers fails with TIMEOUT, nothing committed', { timeout: 5_000 }, async () => {
    const msgs = h.apiConversation({ rounds: 6 });
    const before = structuredClone(msgs);
    const rfs = fileState();
    const signals = [];
    const summarize = (req, { signal }) => {
      signals.push(signal);
      return h.never();
    };
    const err = await h.rejectsWithCode(cc.compactConversation(msgs, { model: OPUS, summarize, summaryTimeoutMs: 50, readFileState: rfs }, { retryBaseMs: 1 }), 'TIMEOUT');
    assert.match(err.message, /50 ?ms|time/i);
    untouched(msgs, before);
    assert.equal(rfs.size, 3);
    assert.ok(signals.length >= 1);
    // Through autoCompactIfNeeded: reported, counted.
    // (this history is ~5,000 tokens: a 1 % threshold, 1,800 tokens, makes it due)
    const out = await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize, summaryTimeoutMs: 50, config: { autoCompactPctOverride: 1 }, retryBaseMs: 1 }, {});
    assert.equal(out.error?.code, 'TIMEOUT');
    assert.equal(out.consecutiveFailures, 1);
  });

  /** Scenarios that park on one await of the pipeline until the caller aborts. */
  const awaits = {
    summarize: (entered) => ({ summarize: () => (entered.resolve(), h.never()) }),
    preCompact: (entered) => ({ hooks: { preCompact: () => (entered.resolve(), h.never()) } }),
    sessionStart: (entered) => ({ hooks: { sessionStart: () => (entered.resolve(), h.never()) } }),
    postCompact: (entered) => ({ hooks: { postCompact: () => (entered.resolve(), h.never()) } }),
    readFile: (entered) => ({ readFile: () => (entered.resolve(), h.never()) }),
    backoff: (entered) => ({ summarize: async () => { entered.resolve(); throw h.overloadedError(); } }),
  };

  test('mode 11: the AbortSignal is honoured at every await (summarizer, each hook, readFile, backoff, session memory)', T, async () => {
    for (const [where, make] of Object.entries(awaits)) {
      const msgs = h.apiConversation({ rounds: 6 });
      const before = structuredClone(msgs);
      const rfs = fileState();
      const ac = new AbortController();
      const entered = h.deferred();
      const ctx = { model: OPUS, summarize: h.recordingSummarizer(), readFileState: rfs, signal: ac.signal, ...make(entered) };
      const p = cc.compactConversation(msgs, ctx, { retryBaseMs: 600_000 });
      await entered.promise;
      ac.abort();
      await h.rejectsWithCode(p, 'ABORTED', where);
      untouched(msgs, before, where);
      assert.equal(rfs.size, 3, `${where}: read-file state kept`);
    }
    const msgs = h.apiConversationOfTokens(60_000);
    const ac = new AbortController();
    const entered = h.deferred();
    const p = cc.trySessionMemoryCompaction(msgs, { model: OPUS, signal: ac.signal, sessionMemory: () => (entered.resolve(), h.never()) });
    await entered.promise;
    ac.abort();
    await h.rejectsWithCode(p, 'ABORTED', 'sessionMemory');
  });

  test('mode 11/12: an abort at every phase (onProgress) fails with ABORTED and commits nothing', T, async () => {
    for (const phase of ['start', 'preCompactHook', 'summarizing', 'retryTransient', 'summarized', 'restoring', 'sessionStartHook', 'postCompactHook']) {
      const msgs = h.apiConversation({ rounds: 6 });
      const before = structuredClone(msgs);
      const rfs = fileState();
      const ac = new AbortController();
      const seen = [];
      const summarize = h.recordingSummarizer((req, o, n) => {
        if (n === 1) throw h.overloadedError();
        return h.summaryBody('s');
      });
      const hooks = { preCompact: () => {}, sessionStart: () => {}, postCompact: () => {} };
      const onProgress = (e) => {
        seen.push(e.phase);
        if (e.phase === phase) ac.abort();
      };
      await h.rejectsWithCode(cc.compactConversation(msgs, { model: OPUS, summarize, hooks, readFileState: rfs, signal: ac.signal, onProgress }, { retryBaseMs: 1 }), 'ABORTED', phase);
      assert.ok(seen.includes(phase), `${phase} never reached: ${seen}`);
      assert.ok(!seen.includes('done'), phase);
      untouched(msgs, before, phase);
      assert.equal(rfs.size, 3, `${phase}: read-file state kept`);
    }
  });

  test('mode 12: throw or abort at every step leaves the caller\'s messages deep-equal and the Compactor\'s state unchanged', T, async () => {
    const failures = {
      ...Object.fromEntries(Object.entries(awaits).map(([k, make]) => [`abort in ${k}`, { abort: true, make }])),
      'summarizer throws 401': { make: () => ({ summarize: async () => { throw Object.assign(new Error('invalid x-api-key'), { status: 401 }); } }) },
      'summarizer throws synchronously': { make: () => ({ summarize: () => { throw new TypeError('boom'); } }) },
      'summarizer resolves to garbage': { make: () => ({ summarize: async () => 42 }) },
      'summary cut at max_tokens': { make: () => ({ summarize: async () => h.summaryBody('x', { stopReason: 'max_tokens' }) }) },
      'empty summary': { make: () => ({ summarize: async () => '' }) },
    };
    for (const [label, f] of Object.entries(failures)) {
      const msgs = h.apiConversation({ rounds: 8 });
      const clones = structuredClone(msgs);
      const rfs = fileState();
      const ac = new AbortController();
      const entered = h.deferred();
      const c = new cc.Compactor({ model: OPUS, summarize: h.recordingSummarizer(), readFileState: rfs, signal: ac.signal, messages: msgs, ...f.make(entered) });
      const count = c.tokenCount();
      const tracking = c.tracking;
      const p = c.compact({ retryBaseMs: f.abort ? 600_000 : 1 });
      if (f.abort) {
        await entered.promise;
        c.push({ role: 'user', content: 'typed meanwhile' });
        ac.abort();
      }
      let err;
      await assert.rejects(p, (e) => (err = e, true));
      assert.equal(typeof err.code, 'string', `${label}: a coded Error (${err})`);
      assert.equal(c.compacting, false, label);
      const now = c.messages;
      msgs.forEach((m, i) => assert.strictEqual(now[i], m, `${label}: message ${i} replaced`));
      assert.equal(now.length, msgs.length + (f.abort ? 1 : 0), label);
      assert.equal(c.tokenCount() >= count, true);
      if (!f.abort) assert.equal(c.tokenCount(), count, `${label}: tokenCount`);
      assert.deepEqual(c.tracking, tracking, `${label}: tracking`);
      untouched(msgs, clones, label);
      assert.equal(rfs.size, 3, `${label}: read-file state kept`);
    }
    // The same Compactor works after a failure (nothing poisoned).
    let fail = true;
    const c = new cc.Compactor({ model: OPUS, summarize: async () => { if (fail) throw new Error('down'); return h.summaryBody('ok now'); }, messages: h.apiConversation({ rounds: 8 }) });
    await assert.rejects(c.compact({ retryBaseMs: 1 }));
    fail = false;
    const res = await c.compact();
    assert.equal(res.summary, 'ok now');
    h.assertApiValid(cc, c.messages);
  });

  test('mode 12: throwing hooks and readFile follow their policy: reported or skipped, compaction goes on, nothing corrupted', async () => {
    const msgs = h.apiConversation({ rounds: 8 });
    const clones = structuredClone(msgs);
    const res = await cc.compactConversation(msgs, {
      model: OPUS,
      summarize: h.recordingSummarizer(),
      readFileState: fileState(),
      readFile: async (path) => { if (path.endsWith('f2.ts')) throw new Error('EACCES'); return `fresh ${path}`; },
      hooks: { preCompact: () => { throw new Error('pre'); }, sessionStart: async () => { throw new Error('start'); }, postCompact: () => Promise.reject(new Error('post')) },
    }, {});
    assert.deepEqual(res.hookErrors.map((e) => e.hook), ['preCompact', 'sessionStart', 'postCompact']);
    assert.deepEqual(res.restoredFiles.map((f) => f.path), ['/repo/f3.ts', '/repo/f1.ts']);
    untouched(msgs, clones);
    h.assertApiValid(cc, cc.buildPostCompactMessages(res));
  });
});

// =============================================================================================
describe('mode 13: messages sent during compaction', () => {
  test('mode 13: pushed during compact(), maybeAutoCompact() (full and session memory) or a failing compaction: after the summary, in order', async () => {
    const scenarios = [
      ['compact', (c) => c.compact(), {}],
      ['maybeAutoCompact (full)', (c) => c.maybeAutoCompact(), { config: LOW }],
      ['maybeAutoCompact (session memory)', (c) => c.maybeAutoCompact(), { config: { autoCompactPctOverride: 40 }, sessionMemory: async () => { await gate.promise; return 'memory'; } }],
      ['failing compact', (c) => c.compact({ retryBaseMs: 1 }), { fail: true }],
    ];
    let gate;
    for (const [label, run, o] of scenarios) {
      gate = h.deferred();
      const entered = h.deferred();
      const summarize = async () => {
        entered.resolve();
        await gate.promise;
        if (o.fail) throw Object.assign(new Error('bad request'), { status: 400 });
        return h.summaryBody('gated');
      };
      const msgs = o.sessionMemory ? h.apiConversationOfTokens(90_000) : h.apiConversation({ rounds: 12 });
      const { fail, ...opts } = o;
      const c = new cc.Compactor({ model: OPUS, summarize, messages: msgs, ...opts });
      const p = run(c);
      if (o.sessionMemory) await new Promise((res) => setImmediate(res));
      else await entered.promise;
      assert.equal(c.compacting, true, label);
      const late = [
        { role: 'user', content: `${label}: typed while compacting (1)` },
        { role: 'assistant', content: [{ type: 'text', text: `${label}: (2)` }] },
        { role: 'user', content: `${label}: (3)` },
      ];
      c.push(late[0]);
      c.pushMany(late.slice(1));
      gate.resolve();
      let res;
      try {
        res = await p;
      } catch (e) {
        assert.ok(o.fail, `${label}: ${e.message}`);
      }
      const now = c.messages;
      assert.deepEqual(now.slice(-3), late, label);
      late.forEach((m, i) => assert.strictEqual(now[now.length - 3 + i], m, `${label}: the same objects, in order`));
      if (o.fail) {
        msgs.forEach((m, i) => assert.strictEqual(now[i], m));
      } else {
        const result = res.compactionResult ?? res;
        assert.ok(result?.summaryMessages, `${label}: compacted (${res?.error?.message ?? ''})`);
        const post = cc.buildPostCompactMessages(result);
        assert.equal(now.length, post.length + 3, label);
        assert.ok(now.indexOf(late[0]) > now.indexOf(result.summaryMessages[0]), `${label}: after the summary`);
      }
      assert.equal(c.tokenCount(), cc.tokenCountWithEstimation(now), label);
    }
  });
});

// =============================================================================================
describe('mode 15: restored files', () => {
  test('mode 15: binary skipped, content already present not duplicated, budgets exact', async () => {
    const exact = 'x'.repeat(20_000); // 5,000 tokens: restored whole
    const over = 'y'.repeat(20_004); // 5,001 tokens: cut to at most 5,000
    const rfs = new Map([
      ['/a.ts', { content: 'const a = 1;\n', timestamp: 1 }],
      ['/exact.txt', { content: exact, timestamp: 2 }],
      ['/over.txt', { content: over, timestamp: 3 }],
      ['/bin.dat', { content: 'MZ\u0000\u0000\u0003binary-data', timestamp: 4 }],
      ['/logo.png', { content: 'looks like text', timestamp: 5 }],
      ['/b.ts', { content: 'const b = 2;\n', timestamp: 6 }],
      ['/c.ts', { content: 'const c = 3;\n', timestamp: 7 }],
      ['/d.ts', { content: 'const d = 4;\n', timestamp: 0.5 }],
    ]);
    const res = await cc.compactConversation(h.apiConversation({ rounds: 30 }), { model: OPUS, summarize: h.recordingSummarizer(), readFileState: rfs }, {});
    assert.deepEqual(res.restoredFiles.map((f) => f.path), ['/c.ts', '/b.ts', '/over.txt', '/exact.txt', '/a.ts']);
    const by = Object.fromEntries(res.restoredFiles.map((f) => [f.path, f]));
    assert.deepEqual([by['/exact.txt'].tokens, by['/exact.txt'].truncated], [5_000, false]);
    assert.equal(by['/over.txt'].truncated, true);
    assert.ok(by['/over.txt'].tokens <= 5_000 && by['/over.txt'].tokens >= 4_000, `${by['/over.txt'].tokens}`);
    assert.ok(res.restoredFiles.reduce((n, f) => n + f.tokens, 0) <= 50_000);
    const json = JSON.stringify(res.attachments);
    assert.ok(!json.includes('binary-data') && !json.includes('looks like text'), 'binary content restored');
    assert.equal(json.split(exact).length - 1, 1, 'each file once');
    h.assertApiValid(cc, cc.buildPostCompactMessages(res));

    // Content already in the kept messages is not restored again.
    const msgs = h.apiConversationOfTokens(90_000);
    const lastResult = msgs.at(-2).content[0].content;
    const kept = new Map([['/kept.rs', { content: lastResult, timestamp: 9 }], ['/other.rs', { content: 'fn other() {}\n', timestamp: 1 }]]);
    const sm = await cc.trySessionMemoryCompaction(msgs, { model: OPUS, sessionMemory: 'memory', readFileState: kept });
    assert.ok(sm.messagesToKeep.includes(msgs.at(-2)));
    assert.deepEqual(sm.restoredFiles.map((f) => f.path), ['/other.rs']);
    const post = JSON.stringify(cc.buildPostCompactMessages(sm));
    assert.equal(post.split(inJson(lastResult.slice(0, 300))).length - 1, JSON.stringify(sm.messagesToKeep).split(inJson(lastResult.slice(0, 300))).length - 1, 'not added a second time');
  });

  test('mode 15: five successive compactions never restore a file twice into one context', async () => {
    let msgs = h.apiConversation({ rounds: 10 });
    for (let k = 1; k <= 5; k++) {
      const rfs = new Map([['/src/main.rs', { content: 'fn main() { println!("MAIN-BODY-55"); }\n', timestamp: k }], ['/src/lib.rs', { content: 'pub fn lib() {} // LIB-BODY-66\n', timestamp: k + 0.5 }]]);
      const res = await cc.compactConversation(msgs, { model: OPUS, summarize: async () => h.summaryBody(`summary ${k}`), readFileState: rfs }, {});
      const post = cc.buildPostCompactMessages(res);
      const json = JSON.stringify(post);
      assert.equal(json.split('MAIN-BODY-55').length - 1, 1, `compaction ${k}`);
      assert.equal(json.split('LIB-BODY-66').length - 1, 1, `compaction ${k}`);
      msgs = [...post, ...h.apiConversation({ rounds: 6, prefix: `r${k}_` })];
    }
  });
});

// =============================================================================================
describe('mode 16: micro-compaction without re-read loops or cache misses', () => {
  /** 12 Read calls over 4 paths (3 reads each), then 2 Bash calls. */
  const history = () => {
    const msgs = [];
    const reads = [];
    for (let i = 0; i < 14; i++) {
      const id = `toolu_mc_${i}`;
      const read = i < 12;
      msgs.push({ role: 'user', content: `step ${i}` });
      msgs.push({ role: 'assistant', content: [{ type: 'tool_use', id, name: read ? 'Read' : 'Bash', input: read ? { file_path: `/src/p${i % 4}.rs` } : { command: 'ls' } }] });
      msgs.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: h.filler(4_000, i) }] });
      msgs.push({ role: 'assistant', content: [{ type: 'text', text: `done ${i}` }] });
      if (read) reads.push({ id, path: `/src/p${i % 4}.rs` });
    }
    return { msgs, reads };
  };

  // SPEC §10's defaults stay (keepLatestPerPath is off unless asked, so results of files read
  // once are cleared as Claude Code does); the protection is one option away.
  test('mode 16: with keepLatestPerPath the latest result of each path and the last N are never cleared; byte-identical across runs', () => {
    const { msgs, reads } = history();
    const out = cc.microCompact(msgs, { keepLatestPerPath: true });
    const latest = new Map(reads.map((x) => [x.path, x.id]));
    for (const id of latest.values()) assert.ok(!out.clearedToolUseIds.includes(id), `${id} is the latest read of its path and was cleared`);
    const compactable = [...reads.map((x) => x.id), 'toolu_mc_12', 'toolu_mc_13'];
    for (const id of compactable.slice(-5)) assert.ok(!out.clearedToolUseIds.includes(id), `${id} is among the 5 most recent`);
    assert.deepEqual(out.clearedToolUseIds, ['toolu_mc_0', 'toolu_mc_1', 'toolu_mc_2', 'toolu_mc_3', 'toolu_mc_4', 'toolu_mc_5', 'toolu_mc_6', 'toolu_mc_7']);
    assert.equal(JSON.stringify(cc.microCompact(structuredClone(msgs), { keepLatestPerPath: true })), JSON.stringify(out), 'byte-identical across runs');
    for (const keepRecent of [0, 2, 9]) {
      const o = cc.microCompact(msgs, { keepRecent, keepLatestPerPath: true });
      for (const id of latest.values()) assert.ok(!o.clearedToolUseIds.includes(id), `keepRecent ${keepRecent}: ${id}`);
      for (const id of compactable.slice(compactable.length - keepRecent)) assert.ok(keepRecent === 0 || !o.clearedToolUseIds.includes(id));
    }
    h.assertApiValid(cc, out.messages, { input: msgs });
  });
});

// =============================================================================================
describe('mode 17: one tool result larger than the whole window', () => {
  test('mode 17: a 1,000,000-character result: trimmed in the request to a marker keeping its tool_use_id; the other turns still sent; compaction succeeds', async () => {
    for (const where of ['latest', 'first']) {
      const msgs = h.apiConversation({ rounds: 6 });
      const at = where === 'latest' ? msgs.length - 2 : 2;
      const id = msgs[at].content[0].tool_use_id;
      msgs[at].content[0].content = 'z'.repeat(1_000_000);
      assert.ok(cc.tokenCountWithEstimation(msgs) > 200_000);
      const summarize = h.strictSummarizer(180_000);
      const res = await cc.compactConversation(msgs, { model: OPUS, summarize }, {});
      assert.equal(summarize.calls.length, 1, `${where}: the first request already fits`);
      const req = JSON.stringify(summarize.calls[0].request);
      assert.ok(req.includes(`tool result for ${id}`), `${where}: the marker keeping ${id} is not in the request`);
      assert.ok(!req.includes('z'.repeat(100_000)));
      for (let q = 0; q < 6; q++) assert.ok(req.includes(`Q${q}:`), `${where}: question Q${q} left out of the request`);
      assert.ok(res.truePostCompactTokenCount < 200_000);
      h.assertApiValid(cc, cc.buildPostCompactMessages(res));
    }
  });
});

// =============================================================================================
describe('mode 18: hooks on every path, with counts', () => {
  const spy = () => {
    const calls = { preCompact: [], sessionStart: [], postCompact: [] };
    return { calls, hooks: Object.fromEntries(Object.keys(calls).map((k) => [k, (x) => void calls[k].push(x)])) };
  };
  const KEYS = ['trigger', 'preTokens', 'threshold', 'window', 'customInstructions'];
  const checkPre = (calls, label, trigger, threshold, ci) => {
    assert.equal(calls.preCompact.length, 1, `${label}: PreCompact ${calls.preCompact.length} times`);
    const p = calls.preCompact[0];
    for (const k of KEYS) assert.ok(k in p, `${label}: PreCompact input has no ${k}`);
    assert.equal(p.trigger, trigger, label);
    assert.equal(typeof p.preTokens, 'number', label);
    assert.ok(p.preTokens > 0, label);
    assert.equal(p.threshold, threshold, label);
    assert.equal(p.window, 200_000, label);
    assert.equal(p.customInstructions ?? null, ci, label);
    assert.equal(calls.sessionStart.length, 1, label);
    assert.equal(calls.postCompact.length, 1, label);
  };

  test('mode 18: PreCompact exactly once with {trigger, preTokens, threshold, window, customInstructions} on the manual, auto and reactive paths and the Compactor', async () => {
    const msgs = h.apiConversation({ rounds: 12 });
    let s = spy();
    await cc.compactConversation(msgs, { model: OPUS, summarize: h.recordingSummarizer(), hooks: s.hooks }, { customInstructions: 'keep the API notes' });
    checkPre(s.calls, 'manual', 'manual', 167_000, 'keep the API notes');
    assert.equal(s.calls.preCompact[0].preTokens, cc.tokenCountWithEstimation(msgs));

    s = spy();
    assert.equal((await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize: h.recordingSummarizer(), hooks: s.hooks, config: LOW }, {})).wasCompacted, true);
    checkPre(s.calls, 'auto (full)', 'auto', 9_000, null);

    s = spy();
    const big = h.apiConversationOfTokens(90_000);
    const sm = await cc.autoCompactIfNeeded(big, { model: OPUS, summarize: h.recordingSummarizer(), sessionMemory: 'memory', hooks: s.hooks, config: { autoCompactPctOverride: 40 } }, {});
    assert.equal(sm.compactionResult?.fromSessionMemory, true);
    checkPre(s.calls, 'auto (session memory)', 'auto', 72_000, null);

    s = spy();
    await cc.reactiveCompact(msgs, { model: OPUS, summarize: h.recordingSummarizer(), hooks: s.hooks }, h.ptlError(230_000, 200_000), { turnId: 'turn-1' });
    checkPre(s.calls, 'reactive', 'auto', 167_000, null);

    s = spy();
    const c = new cc.Compactor({ model: OPUS, summarize: h.recordingSummarizer(), hooks: s.hooks, messages: msgs });
    await c.compact({ customInstructions: 'ci' });
    checkPre(s.calls, 'Compactor.compact', 'manual', 167_000, 'ci');

    s = spy();
    const c2 = new cc.Compactor({ model: OPUS, summarize: h.recordingSummarizer(), hooks: s.hooks, config: LOW, messages: msgs });
    assert.equal((await c2.maybeAutoCompact()).wasCompacted, true);
    checkPre(s.calls, 'Compactor.maybeAutoCompact', 'auto', 9_000, null);
  });

  test('mode 18: a throwing hook is reported in hookErrors and the compaction goes on (every path)', async () => {
    const hooks = { preCompact: () => { throw new Error('pre boom'); }, sessionStart: async () => { throw new Error('start boom'); }, postCompact: () => Promise.reject(new Error('post boom')) };
    const msgs = h.apiConversation({ rounds: 12 });
    const results = [
      await cc.compactConversation(msgs, { model: OPUS, summarize: h.recordingSummarizer(), hooks }, {}),
      (await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize: h.recordingSummarizer(), hooks, config: LOW }, {})).compactionResult,
      (await cc.reactiveCompact(msgs, { model: OPUS, summarize: h.recordingSummarizer(), hooks }, h.ptlError(230_000, 200_000), { turnId: 't' })).compactionResult,
    ];
    for (const res of results) {
      assert.ok(res, 'compacted despite the hooks');
      assert.deepEqual(res.hookErrors.map((e) => e.hook), ['preCompact', 'sessionStart', 'postCompact']);
      assert.match(res.hookErrors[0].message, /pre boom/);
      h.assertApiValid(cc, cc.buildPostCompactMessages(res));
    }
  });
});

// =============================================================================================
describe('mode 19: custom instructions', () => {
  test('mode 19: custom instructions (and PreCompact instructions) reach only the summary request', async () => {
    for (const shape of ['api', 'transcript']) {
      const msgs = shape === 'api' ? h.apiConversation({ rounds: 8 }) : h.transcriptConversation({ rounds: 6 });
      const summarize = h.recordingSummarizer();
      const hooks = { preCompact: () => ({ instructions: 'HOOK_CI_Z42' }) };
      const res = await cc.compactConversation(msgs, { model: OPUS, summarize, hooks }, { customInstructions: 'USER_CI_Q17' });
      const req = JSON.stringify(summarize.calls[0].request);
      assert.ok(req.includes('USER_CI_Q17') && req.includes('HOOK_CI_Z42'), shape);
      const post = JSON.stringify(cc.buildPostCompactMessages(res));
      assert.ok(!post.includes('USER_CI_Q17') && !post.includes('HOOK_CI_Z42'), `${shape}: leaked into the conversation`);
      const c = new cc.Compactor({ model: OPUS, summarize: h.recordingSummarizer(), hooks, messages: msgs });
      await c.compact({ customInstructions: 'USER_CI_Q17' });
      assert.ok(!JSON.stringify(c.messages).includes('USER_CI_Q17'));
      assert.ok(!c.toTranscript().includes('USER_CI_Q17') && !c.toTranscript().includes('HOOK_CI_Z42'), `${shape}: leaked into the transcript`);
    }
  });
});

// =============================================================================================
describe('mode 20: auto-compaction never runs while disabled', () => {
  const turn = (i) => [
    { role: 'user', content: `turn ${i}` },
    { role: 'assistant', content: [{ type: 'text', text: 'ok' }], usage: { input_tokens: 150_000 + i * 100, output_tokens: 10 } },
  ];

  test('mode 20: 1,000 turns with disableAutoCompact — zero summarizer calls (Compactor.maybeAutoCompact and autoCompactIfNeeded)', { timeout: 120_000 }, async () => {
    for (const config of [{ disableAutoCompact: true }, { disableCompact: true }, { autoCompactEnabled: false }]) {
      const summarize = h.recordingSummarizer();
      const sessionMemory = () => { throw new Error('must not be read'); };
      const c = new cc.Compactor({ model: OPUS, summarize, config, sessionMemory });
      const msgs = [];
      for (let i = 0; i < 1_000; i++) {
        c.pushMany(turn(i));
        msgs.push(...turn(i));
        const o = await c.maybeAutoCompact();
        assert.equal(o.wasCompacted, false);
        assert.equal(o.skipped, 'disabled', `${JSON.stringify(config)} turn ${i}`);
        // The stateless driver converts the whole history each call: every turn for the first
        // config, every 50th for the others (the decision does not depend on the size).
        if (config.disableAutoCompact || i % 50 === 49) {
          const a = await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize, config, sessionMemory }, {});
          assert.equal(a.skipped, 'disabled');
        }
      }
      assert.ok(c.tokenCount() > cc.getAutoCompactThreshold(OPUS), 'the history is far above the threshold');
      assert.equal(summarize.calls.length, 0, JSON.stringify(config));
    }
  });

  test('mode 20: DISABLE_AUTO_COMPACT from the environment disables it too; manual /compact stays allowed', async () => {
    try {
      cc.setEnvironmentDefaults({ DISABLE_AUTO_COMPACT: '1' });
      const summarize = h.recordingSummarizer();
      const c = new cc.Compactor({ model: OPUS, summarize });
      for (let i = 0; i < 50; i++) {
        c.pushMany(turn(i));
        assert.equal((await c.maybeAutoCompact()).skipped, 'disabled');
      }
      assert.equal(summarize.calls.length, 0);
      await c.compact();
      assert.equal(summarize.calls.length, 1, 'manual compaction is still allowed');
    } finally {
      cc.setEnvironmentDefaults({});
    }
  });
});

// =============================================================================================
describe('mode 21: resuming reloads the post-compaction history', () => {
  test('mode 21: serialize → parse after a compaction resumes after the boundary with the post-compaction token count', async () => {
    for (const how of ['full', 'session memory']) {
      const input = h.transcriptConversation({ rounds: how === 'full' ? 12 : 40 });
      const res = how === 'full'
        ? await cc.compactConversation(input, { model: OPUS, summarize: async () => h.summaryBody('RESUME-HERE-77') }, {})
        : await cc.trySessionMemoryCompaction(input, { model: OPUS, sessionMemory: 'RESUME-HERE-77' });
      const post = cc.buildPostCompactMessages(res);
      // Claude Code appends the new lines to the session file.
      const file = cc.serializeTranscript(input) + cc.serializeTranscript(post);
      const back = cc.parseTranscript(file);
      assert.equal(back.length, input.length + post.length, how);
      // The per-turn count reads the latest usage as is; after a session-memory compaction
      // the kept lines' usage is the old context's until the next response, so the decision
      // functions (shouldAutoCompact, autoCompactIfNeeded) and the Compactor check it.
      if (how.includes('full')) {
        assert.equal(cc.tokenCountWithEstimation(back), res.truePostCompactTokenCount, `${how}: resumed count`);
      }
      assert.equal(cc.shouldAutoCompact(back, OPUS), false, `${how}: not due again after resuming`);
      const sent = JSON.stringify(cc.toApiMessages(back));
      assert.ok(sent.includes('RESUME-HERE-77'), how);
      assert.ok(!sent.includes(inJson(textOf(input[0]).slice(0, 80))), `${how}: the pre-compaction history is sent again`);
      const resumed = new cc.Compactor({ model: OPUS, messages: back });
      assert.equal(resumed.tokenCount(), res.truePostCompactTokenCount, `${how}: a Compactor resumed from the file`);
      h.assertApiValid(cc, back, { label: how });
    }
  });
});

// =============================================================================================
describe('mode 22: bad input anywhere', () => {
  /** What is wrong with a thrown value (null: a coded library Error, as it must be). */
  const badThrow = (e) => {
    if (!(e instanceof Error)) return `not an Error: ${String(e)}`;
    if (typeof e.code !== 'string') return `${e.name} without a code: ${e.message}`;
    if (/unreachable|panicked|RuntimeError|memory access|unwrap/i.test(`${e.name} ${e.message}`)) return `a crash: ${e.message}`;
    return null;
  };

  /** Calls `f`; returns the thrown error (asserting it is a coded Error, not a crash) or null. */
  const coded = (f, label) => {
    try {
      f();
      return null;
    } catch (e) {
      const why = badThrow(e);
      assert.equal(why, null, `${label}: ${why}`);
      return e;
    }
  };

  const show = (v) => (typeof v === 'symbol' ? 'Symbol()' : typeof v === 'bigint' ? `${v}n` : typeof v === 'function' ? 'a function' : v instanceof Map ? 'a Map' : JSON.stringify(v));

  const BAD_VALUES = [undefined, null, 0, -1, NaN, 'x', true, {}, [], [null], [5], [{}], [{ role: 7 }], [{ role: 'user', content: 5 }],
    [{ role: 'user', content: [{ type: 'tool_result' }] }], [{ role: 'assistant', content: [{ type: 'tool_use', id: 3 }] }],
    [{ role: 'assistant', content: 'x', usage: { input_tokens: -5 } }], [{ type: 'assistant', message: { role: 'assistant', content: [{ type: 'text' }] } }],
    Symbol('s'), () => 1, new Map(), 10n];

  test('mode 22: wrong types to every export — a coded Error or a sane answer, inputs unchanged, never a crash', async () => {
    const sync = {
      tokenCountWithEstimation: (x) => cc.tokenCountWithEstimation(x),
      microCompact: (x) => cc.microCompact(x, x),
      stripImagesFromMessages: (x) => cc.stripImagesFromMessages(x),
      stripReinjectedAttachments: (x) => cc.stripReinjectedAttachments(x),
      groupMessagesByApiRound: (x) => cc.groupMessagesByApiRound(x),
      truncateHeadForPTLRetry: (x) => cc.truncateHeadForPTLRetry(x, x),
      shouldAutoCompact: (x) => cc.shouldAutoCompact(x, x, x),
      calculateTokenWarningState: (x) => cc.calculateTokenWarningState(x, x, x),
      getAutoCompactThreshold: (x) => cc.getAutoCompactThreshold(x, x),
      validateForApi: (x) => cc.validateForApi(x),
      toApiMessages: (x) => cc.toApiMessages(x),
      serializeTranscript: (x) => cc.serializeTranscript(x),
      parseTranscript: (x) => cc.parseTranscript(x),
      buildPostCompactMessages: (x) => cc.buildPostCompactMessages(x),
      createCompactBoundaryMessage: (x) => cc.createCompactBoundaryMessage(x, x, x),
      roughTokenCountEstimation: (x) => cc.roughTokenCountEstimation(x, x),
      buildApiContextManagement: (x) => cc.buildApiContextManagement(x),
      newCompactor: (x) => new cc.Compactor(x),
    };
    const problems = [];
    for (const [name, f] of Object.entries(sync)) {
      for (const v of BAD_VALUES) {
        let snapshot;
        try { snapshot = structuredClone(v); } catch { snapshot = undefined; }
        try {
          f(v);
        } catch (e) {
          const why = badThrow(e);
          if (why) problems.push(`${name}(${show(v)}): ${why}`);
        }
        if (snapshot !== undefined) assert.deepStrictEqual(v, snapshot, `${name}: input changed`);
      }
    }
    const asyncs = {
      compactConversation: (x) => cc.compactConversation(x, x, x),
      autoCompactIfNeeded: (x) => cc.autoCompactIfNeeded(x, x, x),
      trySessionMemoryCompaction: (x) => cc.trySessionMemoryCompaction(x, x),
      reactiveCompact: (x) => cc.reactiveCompact(x, x, x, x),
      previewCompaction: (x) => cc.previewCompaction(x, x),
      simulateSession: (x) => cc.simulateSession(x, x),
      contextFields: (x) => cc.compactConversation(h.apiConversation({ rounds: 2 }), { model: OPUS, summarize: async () => 's', readFileState: x, hooks: x, signal: x, pinned: x, config: x, summaryTimeoutMs: x }, x),
    };
    for (const [name, f] of Object.entries(asyncs)) {
      for (const v of BAD_VALUES) {
        try {
          await f(v);
        } catch (e) {
          const why = badThrow(e);
          if (why) problems.push(`${name}(${show(v)}): ${why}`);
        }
      }
    }
    assert.deepEqual(problems, [], `errors without a code or crashes:\n${problems.join('\n')}`);
    // Still working afterwards: no poisoned WebAssembly state.
    assert.equal(cc.tokenCountWithEstimation([{ role: 'user', content: 'abcd' }]), 1);
    assert.equal((await cc.compactConversation(h.apiConversation({ rounds: 4 }), { model: OPUS, summarize: async () => h.summaryBody('fine') })).summary, 'fine');
  });

  test('mode 22: cyclic messages — every entry point answers a coded Error; the WebAssembly instance never crashes', () => {
    const calls = [
      'cc.tokenCountWithEstimation([m])',
      'cc.microCompact([m])',
      'cc.stripImagesFromMessages([m])',
      'cc.validateForApi([m])',
      'cc.toApiMessages([m])',
      'cc.serializeTranscript([m])',
      'await cc.previewCompaction([m], { model: "claude-opus-4-6" })',
      'await cc.compactConversation([m, { role: "assistant", content: "y" }], { model: "claude-opus-4-6", summarize: async () => "<summary>s</summary>" })',
      'await cc.trySessionMemoryCompaction([m], { model: "claude-opus-4-6", sessionMemory: "mem" })',
      'await cc.autoCompactIfNeeded([m], { model: "claude-opus-4-6", summarize: async () => "s", config: { autoCompactPctOverride: 1 } })',
      'await (() => { const c = new cc.Compactor({ model: "claude-opus-4-6", summarize: async () => "<summary>s</summary>" }); c.push(m); c.push({ role: "assistant", content: "y" }); return c.compact(); })()',
    ];
    const failures = [];
    for (const call of calls) {
      const out = h.runIsolated(`
        const m = { role: 'user', content: [{ type: 'text', text: 'x' }] };
        m.self = m; m.content[0].parent = m;
        const results = [];
        try { await ${call}; results.push({ ok: true }); } catch (e) { results.push({ error: e instanceof Error, code: e?.code, message: String(e?.message) }); }
        // The instance still works after it.
        results.push(cc.tokenCountWithEstimation([{ role: 'user', content: 'abcd' }]));
        return results;
      `);
      const v = out.value;
      const ok = out.status === 0 && Array.isArray(v) && v[1] === 1 && (v[0].ok || (v[0].error && typeof v[0].code === 'string' && !/memory access|unreachable|RuntimeError/i.test(v[0].message)));
      if (!ok) failures.push(`${call}: exit ${out.status}, ${JSON.stringify(v) ?? (out.stderr.split('\n').find((l) => /Error/.test(l)) ?? '').slice(0, 120)}`);
    }
    assert.deepEqual(failures, [], `crashes:\n${failures.join('\n')}`);
  });

  test('mode 22: huge strings are counted by length, not copied into trouble', () => {
    const huge = 'h'.repeat(50_000_000);
    const msgs = [{ role: 'user', content: huge }, { role: 'assistant', content: [{ type: 'text', text: 'ok' }] }];
    assert.equal(cc.tokenCountWithEstimation(msgs), 12_500_001);
    assert.equal(cc.roughTokenCountEstimation(huge), 12_500_000);
    const out = cc.microCompact(msgs);
    assert.strictEqual(out.messages[0], msgs[0]);
    assert.equal(cc.validateForApi(msgs).valid, true);
  });

  test('mode 22: unknown block types and line types pass through every transformation untouched', () => {
    const msgs = [
      { role: 'user', content: [{ type: 'hologram', data: { z: [1, null] } }, { type: 'text', text: 'hi' }], x_custom: { keep: true } },
      { role: 'assistant', content: [{ type: 'future_block_v9', payload: 1 }, { type: 'text', text: 'ok' }] },
    ];
    const before = structuredClone(msgs);
    for (const out of [cc.microCompact(msgs, { keepRecent: 0 }).messages, cc.stripImagesFromMessages(msgs), cc.stripReinjectedAttachments(msgs)]) {
      assert.deepStrictEqual(out, before);
    }
    const lines = [{ type: 'future-line-type', payload: { a: [1, { b: null }] } }, { noTypeAtAll: true }, { type: 'user', message: { role: 'user', content: 'q' }, unknownField: 'é😀' }];
    const jsonl = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
    assert.equal(cc.serializeTranscript(cc.parseTranscript(jsonl)), jsonl);
  });

  test('mode 22: malformed JSONL is reported with its line number, never silently dropped', () => {
    for (const [text, line] of [['{"type":"user"}\n{"type":\n{"a":1}\n', 2], ['{"a":1}\n\n{"b":2}\n', 2], ['[1,2]\n', 1], ['{"a":1}\nnull\n', 2], ['{"a":1}\n{"b":2}\n"str"\n', 3]]) {
      const e = coded(() => cc.parseTranscript(text), JSON.stringify(text));
      assert.ok(e, `${JSON.stringify(text)} was accepted`);
      assert.equal(e.code, 'MALFORMED_TRANSCRIPT');
      assert.match(e.message, new RegExp(`line ${line}\\b`));
    }
  });

  test('mode 22: lone UTF-16 surrogates survive parse → serialize and every transformation, never a panic', async () => {
    const lone = 'start \uD800 middle \uDFFF end \uDBFF';
    const lines = [
      { type: 'user', uuid: 'u1', message: { role: 'user', content: lone } },
      { type: 'assistant', uuid: 'a1', message: { role: 'assistant', id: 'm1', content: [{ type: 'text', text: `reply ${lone}` }, { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: `/x${lone}` } }], stop_reason: 'tool_use' } },
      { type: 'user', uuid: 'r1', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: `${lone} `.repeat(500) }] } },
      { type: 'assistant', uuid: 'a2', message: { role: 'assistant', id: 'm2', content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' } },
    ];
    const jsonl = cc.serializeTranscript(lines);
    assert.match(jsonl, /\\ud800/, 'written as a JSON escape (valid UTF-8 on disk)');
    const back = cc.parseTranscript(jsonl);
    assert.deepStrictEqual(back, lines, 'read back exactly');
    assert.equal(cc.serializeTranscript(back), jsonl);
    assert.ok(cc.tokenCountWithEstimation(lines) > 0);
    const mc = cc.microCompact(lines, { keepRecent: 0 });
    assert.strictEqual(mc.messages[0], lines[0], 'unchanged messages are the same objects');
    assert.equal(cc.validateForApi(lines).valid, true);
    cc.stripImagesFromMessages(lines);
    cc.truncateHeadForPTLRetry(lines, h.ptlError(10, 5));
    const res = await cc.compactConversation(lines, { model: OPUS, summarize: async () => h.summaryBody(`summary ${lone}`) }, {});
    const post = cc.buildPostCompactMessages(res);
    assert.equal(cc.parseTranscript(cc.serializeTranscript(post)).length, post.length);
    assert.deepStrictEqual(cc.parseTranscript(cc.serializeTranscript(lines)), lines, 'nothing lost');
  });
});
