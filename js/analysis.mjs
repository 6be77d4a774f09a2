// @ts-check
// The transcript analysis both the command line and the web page run: the pure functions
// behind `context-compaction analyze` (js/cli-lib.mjs) and the page's analysis of an opened
// session file (www/analysis.js). Published in the package next to cli-lib.mjs
// (scripts/package.mjs copies it), and loaded by the page from /pkg/analysis.mjs.
//
// Browser-safe: it imports nothing (no node:*, not the package's entries). A function that
// needs the library takes it as its first argument `cc` (the Node entry or the initialised
// browser entry); the callers add what only they report and the errors they throw.
//
// Types come from the package's declarations (`./index.js` is pkg/index.d.ts in the package,
// types/index.d.ts in the type check: types/tsconfig.js.json); JSDoc `@import`s are comments.

/** @import * as Library from './index.js' (the package: its Node entry or initialised browser entry) */
/** @import { CompactMetadata, Config, ModelId, SimulationReport, TranscriptLine, Usage } from './index.js' */
/**
 * One API call of a transcript (see apiCalls).
 * @typedef {{n: number, id: string | null, first: number, last: number, lineNumber: number,
 *   model: string | null, usage: Usage, realContext: number, lineCount: number}} ApiCall
 */

/** Line number (1-based) of `lines[index]`: parseTranscript rejects blank lines, so it is index + 1. */
export const lineNumberOf = (/** @type {number} */ index) => index + 1;

/** Usage's input side: what the request sent (input + cache creation + cache read). */
/** @param {Partial<Usage>} usage */
export function realContextOf(usage) {
  const n = (/** @type {unknown} */ v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return n(usage.input_tokens) + n(usage.cache_creation_input_tokens) + n(usage.cache_read_input_tokens);
}

/**
 * A sub-agent's own session file has every line marked `isSidechain: true`; such a file is
 * analysed as its own conversation: copies of its lines without the flag.
 * @template {TranscriptLine} L
 * @param {L[]} lines
 * @returns {{lines: L[], subAgent: boolean}}
 */
export function asOwnConversation(lines) {
  const convo = lines.filter((l) => l.type === 'user' || l.type === 'assistant');
  if (convo.length === 0 || !convo.every((l) => l.isSidechain === true)) {
    return { lines, subAgent: false };
  }
  return {
    lines: lines.map((l) => (l.isSidechain === true ? { ...l, isSidechain: false } : l)),
    subAgent: true,
  };
}

/**
 * Indices of the main-chain `compact_boundary` lines.
 * @param {readonly TranscriptLine[]} lines
 */
export function boundaryIndices(lines) {
  /** @type {number[]} */
  const out = [];
  lines.forEach((l, i) => {
    if (l.type === 'system' && l.subtype === 'compact_boundary' && l.isSidechain !== true) out.push(i);
  });
  return out;
}

/**
 * What the `compact_boundary` line `lines[i]` says of itself: `{index, lineNumber, trigger, preTokens}`.
 * @param {readonly TranscriptLine[]} lines
 * @param {number} i
 */
export function boundaryFacts(lines, i) {
  const l = lines[i];
  /** @type {Partial<CompactMetadata>} */
  const meta = l.compactMetadata && typeof l.compactMetadata === 'object' ? l.compactMetadata : {};
  return {
    index: i,
    lineNumber: lineNumberOf(i),
    trigger: meta.trigger ?? null,
    preTokens: typeof meta.preTokens === 'number' ? meta.preTokens : null,
  };
}

/**
 * The API calls of a transcript: main-chain assistant lines grouped by `message.id` (one
 * response is written as several lines repeating the same usage), in order of their first line;
 * lines whose usage has no input (an API error Claude Code wrote itself) are none.
 * @param {readonly TranscriptLine[]} lines
 */
export function apiCalls(lines) {
  /** @type {Map<string, ApiCall>} */
  const byId = new Map();
  /** @type {ApiCall[]} */
  const calls = [];
  lines.forEach((l, i) => {
    if (l.type !== 'assistant' || l.isSidechain === true) return;
    const m = l.message;
    if (m === null || typeof m !== 'object' || m.usage === null || typeof m.usage !== 'object') return;
    // A usage with no input is no call's (Claude Code's own `<synthetic>` error lines carry
    // zeros): the count does not anchor there either.
    if (realContextOf(m.usage) === 0) return;
    const id = typeof m.id === 'string' ? m.id : null;
    const known = id !== null ? byId.get(id) : undefined;
    if (known) {
      known.last = i;
      known.lineCount += 1;
      return;
    }
    const call = {
      n: calls.length + 1,
      id,
      first: i,
      last: i,
      lineNumber: lineNumberOf(i),
      model: typeof m.model === 'string' ? m.model : null,
      usage: m.usage,
      realContext: realContextOf(m.usage),
      lineCount: 1,
    };
    calls.push(call);
    if (id !== null) byId.set(id, call);
  });
  return calls;
}

/**
 * For every call with a real size: the library's count of everything before the call's first
 * line (`estimate`) against what was sent, its relative `error`, and whether it is `anchored`
 * (an earlier call's usage is visible to the count: the same side of the last boundary).
 * Library errors are thrown as they are (the CLI names the file line).
 * @template {{first: number, realContext: number}} [C=ApiCall] the calls (the page's keep fewer fields)
 * @param {Pick<typeof Library, 'tokenCountWithEstimation'>} cc the package
 * @param {readonly TranscriptLine[]} lines
 * @param {readonly C[]} [calls]
 */
export function measureEstimates(cc, lines, calls = /** @type {C[]} */ (/** @type {unknown} */ (apiCalls(lines)))) {
  const boundaries = boundaryIndices(lines);
  /** @type {(C & {estimate: number, error: number, anchored: boolean})[]} */
  const rows = [];
  for (const call of calls) {
    if (!(call.realContext > 0)) continue;
    const estimate = cc.tokenCountWithEstimation(lines.slice(0, call.first));
    const lastBoundary = boundaries.filter((b) => b < call.first).pop() ?? -1;
    const anchored = calls.some((c) => c.first < call.first && c.first > lastBoundary);
    const error = (estimate - call.realContext) / call.realContext;
    rows.push({ ...call, estimate, error, anchored });
  }
  return rows;
}

/**
 * Nearest-rank percentile of an ascending array (`p` in 0..1); NaN when empty.
 * @param {readonly number[]} sorted
 * @param {number} p
 * @returns {number}
 */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/**
 * `{count, median, p90, max, meanSigned}` of relative errors (absolute values ranked).
 * @param {readonly number[]} errors
 */
export function errorStats(errors) {
  const abs = errors.map(Math.abs).sort((a, b) => a - b);
  return {
    count: errors.length,
    median: percentile(abs, 0.5),
    p90: percentile(abs, 0.9),
    max: abs.length ? abs[abs.length - 1] : NaN,
    meanSigned: errors.length ? errors.reduce((a, b) => a + b, 0) / errors.length : NaN,
  };
}

/**
 * Threshold numbers of a model (SPEC §4), as the library `cc` computes them.
 * @param {typeof Library} cc the package (Node entry or initialised browser entry)
 * @param {ModelId | null} [model] the defaults' model when absent
 * @param {Config | null} [config]
 */
export function thresholdsFor(cc, model, config) {
  // The library reads a null/undefined model as '' (the defaults); the declarations take a string.
  const m = model ?? '';
  const c = cc.constants;
  const autoEnabled = cc.isAutoCompactEnabled(config);
  const effective = cc.getEffectiveContextWindowSize(m, config);
  const autoCompact = cc.getAutoCompactThreshold(m, config);
  const threshold = autoEnabled ? autoCompact : effective;
  return {
    contextWindow: cc.getContextWindowForModel(m, config),
    maxOutputTokens: cc.getMaxOutputTokensForModel(m, config),
    effectiveWindow: effective,
    autoCompactEnabled: autoEnabled,
    autoCompactThreshold: autoCompact,
    warningThreshold: Math.max(0, threshold - c.WARNING_THRESHOLD_BUFFER_TOKENS),
    errorThreshold: Math.max(0, threshold - c.ERROR_THRESHOLD_BUFFER_TOKENS),
    blockingLimit: Math.max(0, effective - c.MANUAL_COMPACT_BUFFER_TOKENS),
  };
}

// ---- The simulator's side-by-side table (`context-compaction simulate`, the page) -----------------

/** Thousands as `12.3K` / millions as `1.23M`, for the simulator's table. @param {number} n */
export function shortTokens(n) {
  if (!Number.isFinite(n)) return '-';
  if (Math.abs(n) >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (Math.abs(n) >= 1e3) return `${(n / 1e3).toFixed(1)}K`;
  return String(Math.round(n));
}

/** The columns of the side-by-side table, in order. */
export const SIMULATION_COLUMNS = Object.freeze([
  'policy', 'cost', 'vs claude-code', 'peak', 'mean', 'compactions', 'clearings', 'wait', 'waits',
  'swaps', 'refused', 'summary calls', 're-reads', 'lost', 'cache read', 'cache write', 'output',
]);

/**
 * The rows of the side-by-side table of a simulation report (what `simulateSession` returns):
 * one per policy, the cells as text, in the order of {@link SIMULATION_COLUMNS}. `waits`: the
 * compactions the conversation waited for; `swaps`: pre-emptive summaries swapped in at the
 * threshold (`+ N early`: a check before it); `refused`: swap attempts over the 1.3× bound;
 * `re-reads`: files read again because the policy did not restore them (count: their tokens,
 * what they add to the cost).
 * @param {SimulationReport} report
 * @returns {string[][]}
 */
export function simulationRows(report) {
  return report.policies.map((p) => [
    p.name + (p.name === report.recommended ? ' *' : ''),
    `$${p.cost.toFixed(2)}`,
    p.relativeCost === null ? '-' : `${(p.relativeCost * 100).toFixed(1)}%`,
    shortTokens(p.peakContext),
    shortTokens(p.meanContext),
    String(p.compactions),
    String(p.microCompactions),
    `${p.blockedSeconds.toFixed(0)}s`,
    String(p.waits),
    p.earlySwaps ? `${p.swaps} + ${p.earlySwaps} early` : String(p.swaps),
    p.caughtUp ? `${p.refusedSwaps} (${p.caughtUp} caught up)` : String(p.refusedSwaps),
    String(p.summaryCalls),
    p.rereads ? `${p.rereads}: ${shortTokens(p.rereadTokens)}, $${p.rereadCost.toFixed(2)}` : '0',
    String(p.lost),
    shortTokens(p.tokens.cacheRead),
    shortTokens(p.tokens.cacheWrite),
    shortTokens(p.tokens.output),
  ]);
}
