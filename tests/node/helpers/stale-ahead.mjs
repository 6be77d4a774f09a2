// A Compactor whose summary written ahead is stale at the threshold (tests/node/lead-round15 and
// review15: the catch-up of such a summary).
import assert from 'node:assert/strict';
import { Compactor, getAutoCompactThreshold } from '../../../pkg/node.js';

/** Deterministic text of `n` characters (`seed` picks it). */
export const words = (seed, n) => {
  let s = '';
  let k = seed;
  while (s.length < n) {
    k = (k * 1103515245 + 12345) >>> 0;
    s += ['alpha', 'beta', 'gamma', 'delta'][k % 4] + ' ';
  }
  return s.slice(0, n);
};

/** The model and window the Compactor uses, and its threshold. */
export const MODEL = 'claude-sonnet-4-5';
export const CONFIG = { contextWindow: 64_000 };
export const THRESHOLD = getAutoCompactThreshold(MODEL, CONFIG);

/**
 * A 64K Compactor (`summarize`, plus `extra` options) whose summary written ahead (started at
 * 16,000 tokens) is ready, followed by small turns up to the threshold with no check between
 * them: at the threshold the summary is stale. Returns it and the text of its last message.
 * With `last`, the small turns stop `lastTokens` below the threshold and `last(c)` pushes the
 * latest turn.
 */
export async function staleAtThreshold(summarize, extra = {}, { last, lastTokens = 0 } = {}) {
  const c = new Compactor({ model: MODEL, config: CONFIG, summarize, preemptive: { earlyLine: 15_000 }, retryBaseMs: 1, ...extra });
  let k = 0;
  const pair = (chars) => {
    k++;
    c.push({ role: 'user', content: `question ${k}: ${words(k, chars)}` });
    c.push({ role: 'assistant', content: `answer ${k}: ${words(k + 500, chars)}` });
  };
  while (c.tokenCount() < 16_000) pair(4_000);
  assert.equal((await c.maybeAutoCompact()).wasCompacted, false);
  for (let w = 0; w < 400 && c.background.state !== 'ready'; w++) await new Promise((r) => setTimeout(r, 5));
  assert.equal(c.background.state, 'ready', 'setup: the summary written ahead landed');
  while (c.tokenCount() < THRESHOLD - lastTokens) pair(600);
  if (last) last(c);
  return { c, last: `answer ${k}: ${words(k + 500, 600)}` };
}
