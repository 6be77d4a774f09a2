// The caller's tokenizer (`tokenCounter`) across a whole compaction, and calls that nest: every
// count of one compaction result is in the tokenizer's units (before, after, the checks
// between), and a call made from inside a tokenizer (or its snapshot/restore) counts with its
// own options only, the outer call's tokenizer untouched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { SONNET, recordingSummarizer, summaryResponse } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

/** 30 rounds: a 4,000-character question and a short answer. */
function conversation(rounds = 30) {
  const msgs = [];
  for (let i = 0; i < rounds; i++) {
    msgs.push({ role: 'user', content: `q${i} ` + 'x'.repeat(4_000) });
    msgs.push({ role: 'assistant', content: `a${i}` });
  }
  return msgs;
}

// A tokenizer far denser than the built-in estimate (12 times it) and one sparser (half).
const DENSE = (t) => t.length * 3;
const SPARSE = (t) => t.length / 8;
const summarize = recordingSummarizer(summaryResponse('summary words '.repeat(50)));

test('a compaction with a tokenCounter reports every count in its tokens: truePostCompactTokenCount is what tokenCount() counts after', async () => {
  for (const tokenCounter of [DENSE, SPARSE]) {
    const msgs = conversation();
    const c = new cc.Compactor({ model: SONNET, summarize, tokenCounter, messages: msgs });
    const before = c.tokenCount();
    const r = await c.compact();
    assert.equal(r.preCompactTokenCount, before);
    assert.equal(r.truePostCompactTokenCount, c.tokenCount(), `${tokenCounter}: after`);
    // compactConversation: the same counts as tokenCountWithEstimation of its own result.
    const d = await cc.compactConversation(msgs, { model: SONNET, summarize, tokenCounter });
    assert.equal(d.preCompactTokenCount, cc.tokenCountWithEstimation(msgs, { tokenCounter }));
    const after = cc.buildPostCompactMessages(d);
    assert.equal(d.truePostCompactTokenCount, cc.tokenCountWithEstimation(after, { tokenCounter }), `${tokenCounter}: compactConversation`);
  }
});

test('the "smaller than before" checks compare counts of one tokenizer: a dense tokenizer makes the threshold check its own', async () => {
  // About 19,000 estimated tokens; the dense tokenizer counts 12 times as many, past the
  // automatic threshold (167,000): the compaction is due, and what it leaves (about 3,000 of
  // its tokens for the summary message) is checked against that threshold in its tokens.
  const msgs = conversation(18);
  const tokenCounter = DENSE;
  assert.ok(cc.tokenCountWithEstimation(msgs) < 167_000 && cc.tokenCountWithEstimation(msgs, { tokenCounter }) > 167_000);
  // A summary of about 40,000 characters: 10,000 estimated tokens (would pass the check
  // before), 120,000 of the tokenizer's: still below its pre-count, so a manual compaction
  // goes through; not below a threshold of 10,000, so an automatic one does not.
  const long = recordingSummarizer(summaryResponse('w'.repeat(40_000)));
  const config = { autoCompactWindow: 43_000 }; // effective 23,000 → threshold 10,000
  const auto = await cc.autoCompactIfNeeded(msgs, { model: SONNET, summarize: long, tokenCounter, config });
  assert.equal(auto.wasCompacted, false);
  assert.equal(auto.error?.code, 'COMPACTION_NOT_SMALLER', JSON.stringify(auto));
  assert.match(auto.error.message, /would not be below the auto-compaction threshold \(10000 tokens\)/);
  const manual = await cc.compactConversation(msgs, { model: SONNET, summarize: long, tokenCounter, config });
  assert.ok(manual.truePostCompactTokenCount > 100_000 && manual.truePostCompactTokenCount < manual.preCompactTokenCount, `${manual.truePostCompactTokenCount}`);
});

test('session-memory compaction keeps and checks in the tokenizer\'s tokens', async () => {
  const msgs = conversation(40);
  const tokenCounter = DENSE;
  const r = await cc.trySessionMemoryCompaction(msgs, { model: SONNET, tokenCounter, sessionMemory: () => 'memory', config: { contextWindow: 1_000_000 } });
  const after = cc.buildPostCompactMessages(r);
  assert.equal(r.truePostCompactTokenCount, cc.tokenCountWithEstimation(after, { tokenCounter }));
  // At least 10,000 of its tokens kept, at most 40,000: a few rounds of 12,000 each, not
  // the many rounds 10,000 estimated tokens would keep.
  assert.ok(r.messagesToKeep.length <= 8, `${r.messagesToKeep.length} kept`);
});

test('a tokenizer that throws during the compaction fails it with INVALID_ARGUMENT, nothing committed', async () => {
  const msgs = conversation(5);
  let armed = false;
  const tokenCounter = (t) => {
    if (armed && t.includes('summary words')) throw new Error('tokenizer down');
    return t.length / 4;
  };
  const c = new cc.Compactor({ model: SONNET, summarize: recordingSummarizer(async () => { armed = true; return summaryResponse('summary words '.repeat(50)); }), tokenCounter, messages: msgs });
  await assert.rejects(c.compact(), (e) => e.code === 'INVALID_ARGUMENT' && /tokenCounter threw: tokenizer down/.test(e.message));
  assert.equal(c.messages.length, msgs.length);
});

// ---- calls that nest -------------------------------------------------------------------

const nested = () => {
  const msgs = [];
  for (let i = 0; i < 10; i++) {
    msgs.push({ role: 'user', content: `question ${i} ` + 'x'.repeat(500) });
    msgs.push({ role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }, { type: 'tool_use', id: `t${i}`, name: 'Read', input: { file_path: `/a/b${i}` } }] });
    msgs.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: 'r'.repeat(300) }] });
    msgs.push({ role: 'assistant', content: 'ok' });
  }
  return msgs;
};
const quarter = (t) => t.length / 4;
const third = (t) => t.length / 3;

test('a call made inside a tokenCounter counts with its own options; the outer tokenizer stays', () => {
  const msgs = nested();
  const D = cc.tokenCountWithEstimation(msgs);
  const Q = cc.tokenCountWithEstimation(msgs, { tokenCounter: quarter });
  const T = cc.tokenCountWithEstimation(msgs, { tokenCounter: third });
  assert.ok(D !== Q && Q !== T && D !== T, `${D} ${Q} ${T}`);
  for (const [inner, expected] of [[() => cc.tokenCountWithEstimation(msgs), D], [() => cc.tokenCountWithEstimation(msgs, { tokenCounter: third }), T]]) {
    let seen;
    let n = 0;
    const outer = new cc.Compactor({ model: SONNET, messages: msgs, tokenCounter: (t) => { if (n++ === 0) seen = inner(); return quarter(t); } });
    assert.equal(seen, expected, 'the inner call');
    assert.equal(outer.tokenCount(), Q, 'the outer call');
    // And in a plain count.
    n = 0;
    assert.equal(cc.tokenCountWithEstimation(msgs, { tokenCounter: (t) => { if (n++ === 3) seen = inner(); return quarter(t); } }), Q);
    assert.equal(seen, expected);
  }
  // Deeper: a tokenizer whose inner call has a tokenizer that calls again.
  let deepest;
  let n = 0;
  const total = cc.tokenCountWithEstimation(msgs, {
    tokenCounter: (t) => {
      if (n++ === 0) {
        let m = 0;
        cc.tokenCountWithEstimation(msgs, { tokenCounter: (u) => { if (m++ === 0) deepest = cc.tokenCountWithEstimation(msgs); return third(u); } });
      }
      return quarter(t);
    },
  });
  assert.equal(total, Q);
  assert.equal(deepest, D);
});

test('snapshot and restore inside a tokenCounter work', () => {
  const msgs = nested();
  let restored;
  let n = 0;
  cc.tokenCountWithEstimation(msgs, {
    tokenCounter: (t) => {
      if (n++ === 0) {
        const c = new cc.Compactor({ model: SONNET, messages: msgs });
        restored = cc.Compactor.restore(c.snapshot(), c.messages, { model: SONNET }).tokenCount();
      }
      return quarter(t);
    },
  });
  assert.equal(restored, cc.tokenCountWithEstimation(msgs));
});
