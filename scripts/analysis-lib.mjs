// Reusable computations behind scripts/analyze.mjs (and the Node tests): how well the
// library's token count predicts the real context size of each API call in a Claude Code
// session file, what the thresholds say at the end, where compactions happened, and what
// micro-compaction would free. Everything goes through the built package, as a user would.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as cc from '../pkg/node.js';

/** The shared test transcripts, resolved from this file (works from any cwd). */
export const TRANSCRIPTS_DIR = fileURLToPath(new URL('../../shared/transcripts/', import.meta.url));

/** The transcript analysed when no path is given: a session with a real auto-compaction. */
export const DEFAULT_TRANSCRIPT = TRANSCRIPTS_DIR + 'cc_long_autocompact_4d5611e5.jsonl';

/** A failure the CLI reports with exit code 2 (unreadable file, malformed transcript). */
export class AnalysisError extends Error {
  constructor(message, code, options) {
    super(message, options);
    this.name = 'AnalysisError';
    this.code = code;
  }
}

/** Line number (1-based) of `lines[index]`: parseTranscript rejects blank lines, so it is index + 1. */
export const lineNumberOf = (index) => index + 1;

/**
 * Rewrites a library error that names `messages[i]` so that it names the file line instead,
 * keeping the library's code.
 */
export function describeLibraryError(e, file) {
  const msg = String(e && e.message ? e.message : e).replace(
    /messages\[(\d+)\]((?:\.[\w$]+|\[\d+\])*)/g,
    (_, i, path) => `line ${lineNumberOf(Number(i))}` + (path ? ` (${path.replace(/^\./, '')})` : ''),
  );
  return new AnalysisError(`${file}: ${msg}`, (e && e.code) || 'ANALYSIS_FAILED', { cause: e });
}

/** Reads and parses a transcript file; throws AnalysisError (code ENOENT, MALFORMED_TRANSCRIPT, …). */
export function readTranscriptFile(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a directory' : e.message;
    throw new AnalysisError(`cannot read transcript ${file}: ${why}`, e.code || 'READ_FAILED', { cause: e });
  }
  let lines;
  try {
    lines = cc.parseTranscript(text);
  } catch (e) {
    throw new AnalysisError(`malformed transcript ${file}: ${e.message}`, e.code || 'MALFORMED_TRANSCRIPT', {
      cause: e,
    });
  }
  lines.forEach((l, i) => {
    if (typeof l.type !== 'string') {
      throw new AnalysisError(
        `malformed transcript ${file}: line ${lineNumberOf(i)}: a Claude Code transcript line needs a string \`type\``,
        'MALFORMED_TRANSCRIPT',
      );
    }
  });
  return { text, lines };
}

/**
 * A sub-agent's own session file has every line marked `isSidechain: true`; the library (rightly)
 * leaves sidechain lines out of the main conversation. Such a file is analysed as its own
 * conversation: copies of its lines without the flag. Returns the lines unchanged otherwise.
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

/** Indices of the main-chain `compact_boundary` lines. */
export function boundaryIndices(lines) {
  const out = [];
  lines.forEach((l, i) => {
    if (l.type === 'system' && l.subtype === 'compact_boundary' && l.isSidechain !== true) out.push(i);
  });
  return out;
}

/** Usage's input side: what the request sent (input + cache creation + cache read). */
export function realContextOf(usage) {
  const n = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return n(usage.input_tokens) + n(usage.cache_creation_input_tokens) + n(usage.cache_read_input_tokens);
}

/**
 * The API calls of a transcript: main-chain assistant lines grouped by `message.id` (one
 * response is written as several lines repeating the same usage), in order of first line.
 * Each: `{n, id, first, last, lineNumber, model, usage, realContext, lineCount}`.
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

/** Nearest-rank percentile of an ascending array (`p` in 0..1); NaN when empty. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil(p * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** `{count, median, p90, max, meanSigned}` of relative errors (absolute values ranked). */
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
 * For every API call: the library's count of all lines BEFORE the call's first line
 * (`tokenCountWithEstimation`) against the real size of the request.
 *
 * `anchored` says whether an earlier call's usage is visible to the count (same side of the
 * last compaction boundary). Unanchored calls — the first of a session, the first after a
 * compaction, a sub-agent's first — are pure text estimates of a transcript that never
 * contains the system prompt or the tool definitions, so they are reported separately.
 */
export function measureEstimates(lines, calls = apiCalls(lines), file = 'transcript') {
  const boundaries = boundaryIndices(lines);
  const rows = [];
  for (const call of calls) {
    if (!(call.realContext > 0)) continue;
    let estimate;
    try {
      estimate = cc.tokenCountWithEstimation(lines.slice(0, call.first));
    } catch (e) {
      throw describeLibraryError(e, file);
    }
    const lastBoundary = boundaries.filter((b) => b < call.first).pop() ?? -1;
    const anchored = calls.some((c) => c.first < call.first && c.first > lastBoundary);
    const error = (estimate - call.realContext) / call.realContext;
    rows.push({ ...call, estimate, error, anchored });
  }
  return rows;
}

/** The compaction boundaries with what our count said right before each. */
export function describeBoundaries(lines, calls = apiCalls(lines), file = 'transcript') {
  return boundaryIndices(lines).map((i) => {
    const l = lines[i];
    const meta = l.compactMetadata && typeof l.compactMetadata === 'object' ? l.compactMetadata : {};
    const before = lines.slice(0, i);
    const prev = calls.filter((c) => c.first < i).pop() ?? null;
    const model = (prev && prev.model) || null;
    let ourCount;
    let shouldCompact;
    try {
      ourCount = cc.tokenCountWithEstimation(before);
      shouldCompact = cc.shouldAutoCompact(before, model);
    } catch (e) {
      throw describeLibraryError(e, file);
    }
    return {
      index: i,
      lineNumber: lineNumberOf(i),
      trigger: meta.trigger ?? null,
      preTokens: typeof meta.preTokens === 'number' ? meta.preTokens : null,
      logicalParentUuid: l.logicalParentUuid ?? null,
      model,
      lastRealContextBefore: prev ? prev.realContext : null,
      ourCountBefore: ourCount,
      autoCompactThreshold: cc.getAutoCompactThreshold(model),
      shouldAutoCompactBefore: shouldCompact,
    };
  });
}

/** Threshold numbers of a model (SPEC §4), as the library computes them. */
export function thresholdsFor(model, config) {
  const c = cc.constants;
  const autoEnabled = cc.isAutoCompactEnabled(config);
  const effective = cc.getEffectiveContextWindowSize(model, config);
  const autoCompact = cc.getAutoCompactThreshold(model, config);
  const threshold = autoEnabled ? autoCompact : effective;
  return {
    contextWindow: cc.getContextWindowForModel(model, config),
    maxOutputTokens: cc.getMaxOutputTokensForModel(model, config),
    effectiveWindow: effective,
    autoCompactEnabled: autoEnabled,
    autoCompactThreshold: autoCompact,
    warningThreshold: Math.max(0, threshold - c.WARNING_THRESHOLD_BUFFER_TOKENS),
    errorThreshold: Math.max(0, threshold - c.ERROR_THRESHOLD_BUFFER_TOKENS),
    blockingLimit: Math.max(0, effective - c.MANUAL_COMPACT_BUFFER_TOKENS),
  };
}

/** The whole analysis of parsed transcript lines. */
export function analyzeLines(rawLines, file = 'transcript') {
  const { lines, subAgent } = asOwnConversation(rawLines);
  const calls = apiCalls(lines);
  const rows = measureEstimates(lines, calls, file);
  const anchoredRows = rows.filter((r) => r.anchored);
  const boundaries = describeBoundaries(lines, calls, file);
  const lastCall = calls.length ? calls[calls.length - 1] : null;
  const model = (lastCall && lastCall.model) || null;
  let endTokens, warningState, shouldCompactNow, micro;
  const activeStart = boundaries.length ? boundaries[boundaries.length - 1].index + 1 : 0;
  try {
    endTokens = cc.tokenCountWithEstimation(lines);
    warningState = cc.calculateTokenWarningState(endTokens, model);
    shouldCompactNow = cc.shouldAutoCompact(lines, model);
    micro = cc.microCompact(lines.slice(activeStart));
  } catch (e) {
    throw describeLibraryError(e, file);
  }
  return {
    file,
    subAgent,
    lineCount: lines.length,
    callCount: calls.length,
    calls: rows.map((r) => ({
      n: r.n,
      lineNumber: r.lineNumber,
      id: r.id,
      model: r.model,
      realContext: r.realContext,
      estimate: r.estimate,
      error: r.error,
      anchored: r.anchored,
    })),
    summary: {
      all: errorStats(rows.map((r) => r.error)),
      anchored: errorStats(anchoredRows.map((r) => r.error)),
    },
    end: {
      model,
      tokens: endTokens,
      thresholds: thresholdsFor(model),
      warningState,
      shouldAutoCompact: shouldCompactNow,
    },
    boundaries,
    microCompact: {
      activeFromLine: lineNumberOf(activeStart),
      tokensFreed: micro.tokensFreed,
      resultsCleared: micro.clearedToolUseIds.length,
      clearedToolUseIds: micro.clearedToolUseIds,
    },
  };
}

/** Reads, parses and analyses a transcript file. */
export function analyzeFile(file = DEFAULT_TRANSCRIPT) {
  const { lines } = readTranscriptFile(file);
  return analyzeLines(lines, file);
}

const int = (n) => (typeof n === 'number' && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
const pct = (x, digits = 2) => (Number.isFinite(x) ? `${(x * 100).toFixed(digits)}%` : '-');
const signedPct = (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)}%` : '-');

function table(headers, rows, align) {
  const widths = headers.map((h, k) => Math.max(h.length, ...rows.map((r) => String(r[k]).length)));
  const fmt = (cells) =>
    cells
      .map((c, k) => (align[k] === 'r' ? String(c).padStart(widths[k]) : String(c).padEnd(widths[k])))
      .join('  ')
      .trimEnd();
  return [fmt(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(fmt)].join('\n');
}

/** The human-readable report printed by analyze.mjs. */
export function formatReport(r) {
  const out = [];
  out.push(`Transcript: ${r.file}`);
  out.push(
    `${int(r.lineCount)} lines, ${int(r.callCount)} API calls` +
      (r.subAgent ? ' (a sub-agent session file: analysed as its own conversation)' : ''),
  );
  out.push('');
  out.push('Per API call: real context = input + cache_creation + cache_read tokens of its usage;');
  out.push('estimate = tokenCountWithEstimation(all lines before the call\'s first line).');
  out.push('* = unanchored: no earlier usage visible (session start, after a compaction), so the');
  out.push('    estimate lacks the system prompt and tool definitions the transcript never contains.');
  out.push('');
  out.push(
    table(
      ['#', 'line', 'model', 'real', 'estimate', 'error', ''],
      r.calls.map((c) => [
        c.n,
        c.lineNumber,
        c.model ?? '-',
        int(c.realContext),
        int(c.estimate),
        signedPct(c.error),
        c.anchored ? '' : '*',
      ]),
      ['r', 'r', 'l', 'r', 'r', 'r', 'l'],
    ),
  );
  out.push('');
  const s = (name, st) =>
    `${name}: ${st.count} calls, median |error| ${pct(st.median)}, p90 ${pct(st.p90)}, max ${pct(st.max)}, mean signed ${signedPct(st.meanSigned)}`;
  out.push('Summary');
  out.push('  ' + s('all calls     ', r.summary.all));
  out.push('  ' + s('anchored calls', r.summary.anchored));
  out.push('');
  const t = r.end.thresholds;
  const w = r.end.warningState;
  out.push(`Warning state at the end (model ${r.end.model ?? 'unknown: defaults'})`);
  out.push(`  tokenCountWithEstimation(all lines) = ${int(r.end.tokens)}`);
  out.push(
    `  context window ${int(t.contextWindow)}, max output ${int(t.maxOutputTokens)}, effective ${int(t.effectiveWindow)}`,
  );
  out.push(
    `  auto-compact ${t.autoCompactEnabled ? 'on' : 'off'} at ${int(t.autoCompactThreshold)}, warning/error at ${int(
      t.warningThreshold,
    )}, blocking at ${int(t.blockingLimit)}`,
  );
  out.push(
    `  percentLeft ${w.percentLeft}%, warning ${w.isAboveWarningThreshold}, error ${w.isAboveErrorThreshold}, ` +
      `auto-compact ${w.isAboveAutoCompactThreshold}, blocking ${w.isAtBlockingLimit}; shouldAutoCompact ${r.end.shouldAutoCompact}`,
  );
  out.push('');
  if (r.boundaries.length === 0) {
    out.push('Compaction boundaries: none');
  } else {
    out.push(`Compaction boundaries: ${r.boundaries.length}`);
    for (const b of r.boundaries) {
      out.push(
        `  line ${b.lineNumber}: trigger ${b.trigger ?? '?'}, preTokens ${int(b.preTokens)}; ` +
          `last real context before ${int(b.lastRealContextBefore)}; our count before ${int(b.ourCountBefore)} ` +
          `(threshold ${int(b.autoCompactThreshold)}, shouldAutoCompact ${b.shouldAutoCompactBefore})`,
      );
    }
  }
  out.push('');
  const m = r.microCompact;
  out.push(
    `microCompact on the active part (from line ${m.activeFromLine}, keepRecent ${cc.constants.MICROCOMPACT_KEEP_RECENT}): ` +
      `would clear ${m.resultsCleared} tool results, freeing about ${int(m.tokensFreed)} tokens`,
  );
  return out.join('\n');
}
