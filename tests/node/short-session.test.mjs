// A short session (one request: 256 tokens of messages in 25.6K of real context, the rest its
// system prompt and tools) compacted: the count after it includes what the first request's
// usage taught every request carries, and under a threshold below that overhead no second
// compaction is attempted right after (none could get below it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as cc from '../../pkg/node.js';
import { TRANSCRIPTS, OPUS } from './helpers/support.mjs';

const lines = cc.parseTranscript(readFileSync(`${TRANSCRIPTS}cc_small_short.jsonl`, 'utf8'));
const real = (u) => u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
const firstUsage = lines.find((l) => l.message?.usage).message.usage;
const summarize = async () => '<summary>The user asked about the spotter project; nothing was changed.</summary>';

test('the count after compacting a short session includes the overhead its first request taught', async () => {
  const before = cc.tokenCountWithEstimation(lines);
  const r = await cc.compactConversation(lines, { model: OPUS, summarize });
  assert.ok(r.calibration, 'a calibration is reported');
  const overhead = real(firstUsage) - 100; // the first request's messages are a few dozen tokens
  assert.ok(r.calibration.overhead > overhead && r.calibration.overhead < real(firstUsage), JSON.stringify(r.calibration));
  // The compacted conversation: about that overhead and the summary; before, the bare summary.
  assert.ok(r.truePostCompactTokenCount > overhead && r.truePostCompactTokenCount < before + 500, String(r.truePostCompactTokenCount));
  const post = cc.buildPostCompactMessages(r);
  assert.equal(cc.tokenCountWithEstimation(post, { calibration: r.calibration }), r.truePostCompactTokenCount);
  // The transcript with the compaction appended counts the same (learned from the lines before the boundary).
  assert.equal(cc.tokenCountWithEstimation([...lines, ...post]), r.truePostCompactTokenCount);
});

test('right after a compaction, an overhead past the threshold compacts no more, statelessly and in a Compactor', async () => {
  const config = { autoCompactPctOverride: 1 }; // 1,800 tokens: below the 25K overhead
  let calls = 0;
  const counting = async (...a) => { calls += 1; return summarize(...a); };
  // Due by the real usage: compacted once.
  assert.equal(cc.shouldAutoCompact(lines, OPUS, { config }), true);
  const first = await cc.autoCompactIfNeeded(lines, { model: OPUS, config, summarize: counting });
  assert.equal(first.wasCompacted, true);
  const after = [...lines, ...cc.buildPostCompactMessages(first.compactionResult)];
  assert.ok(cc.tokenCountWithEstimation(after) > cc.getAutoCompactThreshold(OPUS, config));
  assert.equal(cc.shouldAutoCompact(after, OPUS, { config }), false);
  const again = await cc.autoCompactIfNeeded(after, { model: OPUS, config, summarize: counting });
  assert.deepEqual([again.wasCompacted, again.skipped], [false, 'overheadAboveThreshold']);
  assert.equal(calls, 1);

  const chat = new cc.Compactor({ model: OPUS, config, summarize: counting, messages: lines });
  assert.equal((await chat.maybeAutoCompact()).wasCompacted, true);
  const next = await chat.maybeAutoCompact();
  assert.deepEqual([next.wasCompacted, next.skipped], [false, 'overheadAboveThreshold']);
  assert.equal(calls, 2);
  // The overhead stays what it was, through a snapshot too.
  const back = cc.Compactor.restore(chat.snapshot(), chat.messages, { model: OPUS, config, summarize: counting });
  assert.equal(back.tokenCount(), chat.tokenCount());
  assert.equal((await back.maybeAutoCompact()).skipped, 'overheadAboveThreshold');
  // A response reporting usage makes the count real again: due.
  chat.push({ role: 'user', content: 'and now?' });
  chat.push({ role: 'assistant', content: 'working on it', usage: { input_tokens: 26_000, output_tokens: 10 } });
  assert.equal(chat.warningState().isAboveAutoCompactThreshold, true);
  assert.equal((await chat.maybeAutoCompact()).wasCompacted, true);
  assert.equal(calls, 3);
});
