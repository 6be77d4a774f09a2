// @ts-check
// The analysis of a Claude Code session file, in the browser: the small part of the
// package's `analyze` (js/cli-lib.mjs) the page needs (per-call real context against the
// library's estimate, the warning state at the end, the compaction boundaries, what
// micro-compaction would free), over the same library calls. The shared part is the
// package's browser-safe analysis.mjs (js/analysis.mjs, which cli-lib.mjs imports too),
// loaded from /pkg/ like app.js loads /pkg/web.js (index.html's import map names them
// `context-compaction/analysis.mjs` and `context-compaction`); cli-lib.mjs itself is Node-only. What
// stays here is the page's narrower shapes (no usage, line counts, mean signed error or max
// output tokens) and its analyzeLines.

import * as shared from 'context-compaction/analysis.mjs';
import { asOwnConversation, boundaryFacts, boundaryIndices, measureEstimates } from 'context-compaction/analysis.mjs';

export { asOwnConversation, boundaryIndices, realContextOf } from 'context-compaction/analysis.mjs';

/** @import { Config, ModelId, TranscriptLine } from 'context-compaction' */

/**
 * The API calls: main-chain assistant lines grouped by `message.id` (one response is written
 * as several lines repeating the same usage), in order of their first line.
 * @param {readonly TranscriptLine[]} lines
 */
export function apiCalls(lines) {
  return shared.apiCalls(lines).map(({ usage, lineCount, ...call }) => call);
}

/**
 * `{count, median, p90, max}` of relative errors (absolute values ranked).
 * @param {readonly number[]} errors
 */
export function errorStats(errors) {
  const { meanSigned, ...stats } = shared.errorStats(errors);
  return stats;
}

/**
 * The thresholds of a model (SPEC §4), as the library computes them.
 * @param {typeof import('context-compaction')} cc the initialised package
 * @param {ModelId | null} [model] the defaults' model when absent
 * @param {Config | null} [config]
 */
export function thresholdsFor(cc, model, config) {
  const { maxOutputTokens, ...thresholds } = shared.thresholdsFor(cc, model, config);
  return thresholds;
}

/**
 * The whole analysis of parsed transcript lines.
 * @param {typeof import('context-compaction')} cc the initialised package
 * @param {TranscriptLine[]} rawLines
 */
export function analyzeLines(cc, rawLines) {
  const { lines, subAgent } = asOwnConversation(rawLines);
  const calls = apiCalls(lines);
  const boundaries = boundaryIndices(lines);
  const rows = measureEstimates(cc, lines, calls);
  const model = calls.length ? calls[calls.length - 1].model : null;
  const activeStart = boundaries.length ? boundaries[boundaries.length - 1] + 1 : 0;
  const tokens = cc.tokenCountWithEstimation(lines);
  const micro = cc.microCompact(lines.slice(activeStart));
  return {
    subAgent,
    lines,
    lineCount: lines.length,
    callCount: calls.length,
    model,
    rows,
    stats: { all: errorStats(rows.map((r) => r.error)), anchored: errorStats(rows.filter((r) => r.anchored).map((r) => r.error)) },
    boundaries: boundaries.map((i) => boundaryFacts(lines, i)),
    end: {
      tokens,
      thresholds: thresholdsFor(cc, model),
      warningState: cc.calculateTokenWarningState(tokens, model ?? ''), // null: the defaults, as ''
      shouldAutoCompact: cc.shouldAutoCompact(lines, model ?? ''),
    },
    microCompact: { activeFromLine: activeStart + 1, tokensFreed: micro.tokensFreed, resultsCleared: micro.clearedToolUseIds.length },
  };
}
