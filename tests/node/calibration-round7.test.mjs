// Round 7 (real-session probe): micro-compaction before a compaction — Claude Code's order —
// must not lose the calibration (the system prompt and tools every request sends besides the
// messages). microCompact replaces old tool results with the placeholder; the usage reported
// before that measured the results themselves, so it cannot be paired with the estimate of the
// edited messages. The calibration learns from the usage whose request held no cleared result.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { loadLongTranscript, summaryResponse, OPUS } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const summarize = async () => summaryResponse('Work so far. ' + 'The assistant edited files and ran tests. '.repeat(50));
const near = (a, b, share) => Math.abs(a - b) <= share * b;

test('the shared long session, micro-compacted before its real compaction, keeps the system prompt and tools in the count', async () => {
  const { before, boundary } = loadLongTranscript();
  assert.equal(boundary, 753);
  const plain = await cc.compactConversation(before, { model: OPUS, summarize });
  // The normal path: the line the whole session teaches (~29K overhead, ratio ~1.19).
  assert.ok(plain.calibration && near(plain.calibration.overhead, 29_173, 0.02), JSON.stringify(plain.calibration));
  assert.ok(plain.truePostCompactTokenCount > 25_000, `${plain.truePostCompactTokenCount}`);

  const mc = cc.microCompact(before, { keepRecent: 5 });
  assert.ok(mc.tokensFreed > 80_000, `${mc.tokensFreed}`);
  const after = await cc.compactConversation(mc.messages, { model: OPUS, summarize });
  assert.notEqual(after.calibration, null, 'the calibration survives the cleared results');
  assert.ok(
    near(after.truePostCompactTokenCount, plain.truePostCompactTokenCount, 0.1),
    `truePost ${after.truePostCompactTokenCount} after microCompact vs ${plain.truePostCompactTokenCount} without`,
  );
  // The count of the new context agrees with it (the caller passes result.calibration back).
  const next = cc.buildPostCompactMessages(after);
  assert.equal(cc.tokenCountWithEstimation(next, { calibration: after.calibration }), after.truePostCompactTokenCount);

  // A Compactor on the micro-compacted messages: calibrated before, and after its compaction
  // the count is the line at the summary, not the summary's bare estimate.
  const c = new cc.Compactor({ model: OPUS, summarize, messages: mc.messages });
  assert.notEqual(c.calibration(), null);
  await c.compact();
  assert.ok(near(c.tokenCount(), plain.truePostCompactTokenCount, 0.1), `Compactor count ${c.tokenCount()}`);
});

test('other keepRecent values keep it too, and the count before compacting still rests on the latest usage', async () => {
  const { before } = loadLongTranscript();
  const plain = await cc.compactConversation(before, { model: OPUS, summarize });
  for (const keepRecent of [20, 50]) {
    const mc = cc.microCompact(before, { keepRecent });
    assert.ok(mc.tokensFreed > 30_000, `${keepRecent}: ${mc.tokensFreed}`);
    const after = await cc.compactConversation(mc.messages, { model: OPUS, summarize });
    assert.ok(
      near(after.truePostCompactTokenCount, plain.truePostCompactTokenCount, 0.1),
      `keepRecent ${keepRecent}: ${after.truePostCompactTokenCount} vs ${plain.truePostCompactTokenCount}`,
    );
  }
  // Clearing results changes neither the anchor nor what follows it: the latest usage and
  // the (unchanged) messages after it.
  const mc = cc.microCompact(before, { keepRecent: 5 });
  assert.equal(cc.tokenCountWithEstimation(mc.messages), cc.tokenCountWithEstimation(before));
});
