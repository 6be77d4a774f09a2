// The analysis of a Claude Code session file, in the browser: the small part of
// scripts/analysis-lib.mjs the page needs (per-call real context against the library's
// estimate, the warning state at the end, the compaction boundaries, what micro-compaction
// would free), over the same library calls.

/** Usage's input side: what the request sent (input + cache creation + cache read). */
export function realContextOf(usage) {
  const n = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return n(usage.input_tokens) + n(usage.cache_creation_input_tokens) + n(usage.cache_read_input_tokens);
}

/**
 * A sub-agent's own session file has every line marked `isSidechain: true`; it is analysed as
 * its own conversation (copies of its lines without the flag).
 */
export function asOwnConversation(lines) {
  const convo = lines.filter((l) => l.type === 'user' || l.type === 'assistant');
  if (convo.length === 0 || !convo.every((l) => l.isSidechain === true)) return { lines, subAgent: false };
  return { lines: lines.map((l) => (l.isSidechain === true ? { ...l, isSidechain: false } : l)), subAgent: true };
}

/** Indices of the main-chain `compact_boundary` lines. */
export function boundaryIndices(lines) {
  const out = [];
  lines.forEach((l, i) => {
    if (l.type === 'system' && l.subtype === 'compact_boundary' && l.isSidechain !== true) out.push(i);
  });
  return out;
}

/**
 * The API calls: main-chain assistant lines grouped by `message.id` (one response is written
 * as several lines repeating the same usage), in order of their first line.
 */
export function apiCalls(lines) {
  const byId = new Map();
  const calls = [];
  lines.forEach((l, i) => {
    if (l.type !== 'assistant' || l.isSidechain === true) return;
    const m = l.message;
    if (m === null || typeof m !== 'object' || m.usage === null || typeof m.usage !== 'object') return;
    const id = typeof m.id === 'string' ? m.id : null;
    const known = id !== null ? byId.get(id) : undefined;
    if (known) {
      known.last = i;
      return;
    }
    const call = {
      n: calls.length + 1,
      id,
      first: i,
      last: i,
      lineNumber: i + 1,
      model: typeof m.model === 'string' ? m.model : null,
      realContext: realContextOf(m.usage),
    };
    calls.push(call);
    if (id !== null) byId.set(id, call);
  });
  return calls;
}

/** Nearest-rank percentile of an ascending array (`p` in 0..1); NaN when empty. */
function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** `{count, median, p90, max}` of relative errors (absolute values ranked). */
export function errorStats(errors) {
  const abs = errors.map(Math.abs).sort((a, b) => a - b);
  return { count: errors.length, median: percentile(abs, 0.5), p90: percentile(abs, 0.9), max: abs.length ? abs[abs.length - 1] : NaN };
}

/** The thresholds of a model (SPEC §4), as the library computes them. */
export function thresholdsFor(cc, model, config) {
  const c = cc.constants;
  const autoEnabled = cc.isAutoCompactEnabled(config);
  const effective = cc.getEffectiveContextWindowSize(model, config);
  const autoCompact = cc.getAutoCompactThreshold(model, config);
  const base = autoEnabled ? autoCompact : effective;
  return {
    contextWindow: cc.getContextWindowForModel(model, config),
    effectiveWindow: effective,
    autoCompactEnabled: autoEnabled,
    autoCompactThreshold: autoCompact,
    warningThreshold: Math.max(0, base - c.WARNING_THRESHOLD_BUFFER_TOKENS),
    errorThreshold: Math.max(0, base - c.ERROR_THRESHOLD_BUFFER_TOKENS),
    blockingLimit: Math.max(0, effective - c.MANUAL_COMPACT_BUFFER_TOKENS),
  };
}

/**
 * The whole analysis of parsed transcript lines.
 * @param {typeof import('../pkg/web.js')} cc the initialised package
 * @param {any[]} rawLines
 */
export function analyzeLines(cc, rawLines) {
  const { lines, subAgent } = asOwnConversation(rawLines);
  const calls = apiCalls(lines);
  const boundaries = boundaryIndices(lines);
  const rows = [];
  for (const call of calls) {
    if (!(call.realContext > 0)) continue;
    // The library's count of everything before the call's first line, against what was sent.
    const estimate = cc.tokenCountWithEstimation(lines.slice(0, call.first));
    const lastBoundary = boundaries.filter((b) => b < call.first).pop() ?? -1;
    // Anchored: an earlier call's usage is visible to the count (same side of the boundary).
    const anchored = calls.some((c) => c.first < call.first && c.first > lastBoundary);
    rows.push({ ...call, estimate, error: (estimate - call.realContext) / call.realContext, anchored });
  }
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
    boundaries: boundaries.map((i) => {
      const l = lines[i];
      const meta = l.compactMetadata && typeof l.compactMetadata === 'object' ? l.compactMetadata : {};
      return { index: i, lineNumber: i + 1, trigger: meta.trigger ?? null, preTokens: typeof meta.preTokens === 'number' ? meta.preTokens : null };
    }),
    end: {
      tokens,
      thresholds: thresholdsFor(cc, model),
      warningState: cc.calculateTokenWarningState(tokens, model),
      shouldAutoCompact: cc.shouldAutoCompact(lines, model),
    },
    microCompact: { activeFromLine: activeStart + 1, tokensFreed: micro.tokensFreed, resultsCleared: micro.clearedToolUseIds.length },
  };
}
