// An AbortSignal interrupts a compaction of a ~200 MB session during the library's own
// synchronous work (issue 13): the async functions read the messages in slices and pass
// checkpoints between their long passes, where the event loop runs and the signal is
// checked. The session is generated here (not committed). The delays from abort() to the
// rejection are logged, never asserted (tests assert no times): bench/bench.mjs reports the
// worst one against its goal of 100 ms.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { SONNET } from './helpers/support.mjs';
import { largeSession, measureAbortDelays } from '../../bench/abort-latency.mjs';

test('an abort during the synchronous passes over a ~200 MB session rejects with ABORTED (delays logged)', { timeout: 600_000 }, async (t) => {
  const messages = largeSession(200);
  const chars = messages.reduce((n, m) => n + (typeof m.content === 'string' ? m.content.length : JSON.stringify(m.content).length), 0);
  assert.ok(chars > 200e6, `${chars} characters`);
  const results = await measureAbortDelays(cc, messages, SONNET);
  for (const r of results) {
    t.diagnostic(`${r.name}: ${r.outcome}${r.delayMs === undefined ? '' : `, ${r.delayMs.toFixed(1)} ms after abort()`}${r.outcome === 'aborted' ? '' : ` ${r.code ?? ''} ${r.message ?? ''}`}`);
  }
  // The first three points lie well inside the work (each compaction runs for seconds): each
  // must end in ABORTED. The later ones may find the work done on a fast machine; they must
  // never fail otherwise.
  for (const r of results.slice(0, 3)) assert.equal(r.outcome, 'aborted', `${r.name}: ${r.code} ${r.message}`);
  for (const r of results.slice(3)) assert.notEqual(r.outcome, 'failed', `${r.name}: ${r.code} ${r.message}`);
  // Afterwards the same instance compacts normally.
  const small = messages.slice(0, 30);
  const done = await cc.compactConversation(small, { model: SONNET, summarize: cc.offlineSummarizer() });
  assert.equal(done.summaryMessages.length, 1);
});
