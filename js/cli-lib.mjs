// @ts-check
// The `context-compaction` command line (js/cli.mjs is its entry): argument parsing, the
// `analyze` and `compact` commands, reports, exit codes. Published next to node.js in the
// package (scripts/package.mjs copies it), so it imports the library as './node.js' and has no
// other dependency: run it from pkg/ (`node pkg/cli.mjs`) or as the package's bin
// (`npx context-compaction`), not from js/.
//
// The analysis of `analyze` (readTranscriptFile, analyzeLines, formatAnalysis and their
// helpers) is the only copy: scripts/analyze.mjs (the README's main command) and the Node
// tests import it from the built package, pkg/cli-lib.mjs. Its pure parts (API calls,
// boundaries, estimates, error statistics, thresholds) are ./analysis.mjs, which the web page
// runs too; they are re-exported here under the same names.
import {
  accessSync,
  closeSync,
  constants as fsConstants,
  fchmodSync,
  fchownSync,
  fsync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  write as fsWrite,
} from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { Socket, createConnection } from 'node:net';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import * as cc from './node.js';
import * as shared from './analysis.mjs';
import { apiCalls, asOwnConversation, boundaryFacts, boundaryIndices, errorStats, lineNumberOf, percentile, realContextOf, SIMULATION_COLUMNS, simulationRows } from './analysis.mjs';

export { apiCalls, asOwnConversation, boundaryIndices, errorStats, lineNumberOf, percentile, realContextOf };

// Types come from the package's declarations (`./index.js` is pkg/index.d.ts in the package,
// types/index.d.ts in the type check: types/tsconfig.js.json); JSDoc `@import`s are comments.
/** @import { ApiErrorBody, CompactContext, CompactionPreview, CompactionUsage, Config, LossReport, ModelId, ProgressEvent, SimulateOptions, SimulationPolicy, SimulationPolicyName, SimulationPriceOverrides, SimulationReport, TokenWarningState, TranscriptLine } from './index.js' */
/** @import { ApiCall } from './analysis.mjs' */
/**
 * The streams and environment of a run (process.stdout, process.stderr, process.env).
 * @typedef {{stdout: NodeJS.WriteStream, stderr: NodeJS.WriteStream, env: Record<string, string | undefined>}} CliIo
 */
/**
 * The fields of a thrown value that the error reports read: a library error (`code`), an
 * AnthropicApiError (`status`, `type`, `error`, `requestId`), another error with an HTTP
 * `status` (an SDK's, thrown by a custom summarizer), or anything else thrown (the fields then
 * absent). Its `cause` is read the same way.
 * @typedef {{name?: string, message?: string, code?: string, status?: number, type?: string,
 *   requestId?: string, error?: ApiErrorBody | string, cause?: ErrorLike | null}} ErrorLike
 */

// ---- Exit codes and the error every expected failure is reported with --------------------------

/** Exit codes (also in `--help`). */
export const EXIT = Object.freeze({
  OK: 0,
  /** An unexpected failure (a bug): the stack is printed. */
  INTERNAL: 1,
  /** Bad arguments, a missing/unreadable file, a malformed transcript, an unwritable output. */
  USAGE: 2,
  /** The compaction failed (its error code is printed, e.g. PROMPT_TOO_LONG). */
  COMPACTION: 3,
  /** The Messages API answered with an error (its HTTP status is printed) or was unreachable. */
  API: 4,
  /** Interrupted (Ctrl-C). */
  INTERRUPTED: 130,
});

/** A failure reported as one clear message with an exit code (no stack). */
export class CliError extends Error {
  /**
   * @param {string} message
   * @param {number} exitCode
   * @param {{code?: string, cause?: unknown}} [o]
   */
  constructor(message, exitCode, o = {}) {
    super(message, o.cause === undefined ? undefined : { cause: o.cause });
    this.name = 'CliError';
    this.exitCode = exitCode;
    this.code = o.code ?? 'CLI_ERROR';
  }
}

/**
 * Writes a command's output `text` to `stream` (stdout, or stderr for a report beside a
 * transcript on stdout) and resolves once it is written. A reader that closed the pipe
 * (`… | head`: EPIPE) ends the output quietly; any other failure (a full disk: ENOSPC) is an
 * unwritable output (exit 2), not a success with the output lost.
 * @param {NodeJS.WritableStream} stream
 * @param {string} text
 * @param {string} what named in the error, e.g. "the report to stdout"
 * @returns {Promise<void>}
 */
export function writeOutput(stream, text, what) {
  return new Promise((ok, fail) => {
    stream.write(text, (/** @type {NodeJS.ErrnoException | null | undefined} */ e) => {
      if (!e || e.code === 'EPIPE') return ok(undefined);
      fail(new CliError(`cannot write ${what}: ${e.message}`, EXIT.USAGE, { code: e.code || 'WRITE_FAILED', cause: e }));
    });
  });
}

/**
 * The `error` listener of the run's stdout and stderr: a failed write is answered where it is
 * made (writeOutput, writeStream), and without a listener the stream's `error` event would end
 * the process with Node's "Unhandled 'error' event" and a stack trace.
 */
function writeFailureHandledWhereMade() {}

/** @param {string} message */
const usageError = (message) => new CliError(`${message}\nRun \`context-compaction --help\` for the usage.`, EXIT.USAGE, { code: 'USAGE' });

// ---- Terminal output: control characters from transcripts made visible ---------------------------

/**
 * The characters a report never prints raw: C0 controls except newline and tab (ESC starts the
 * sequences that set the title, write the clipboard through OSC 52, clear the screen, move the
 * cursor; CR and BS overwrite what was printed), DEL, the C1 controls (U+0080–U+009F: CSI and
 * OSC in their 8-bit form) and the bidirectional overrides and isolates, which reorder what
 * follows them on the line.
 */
const TERMINAL_UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** @param {string} c one character @param {boolean} json whether `\x` (not JSON) may be used */
const visibleEscape = (c, json) => {
  const n = /** @type {number} */ (c.codePointAt(0));
  return !json && n < 0x80 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
};

/**
 * Text safe for a terminal: every control character but `\n` and `\t` (and DEL, the C1 controls,
 * the line and paragraph separators and the bidirectional controls) replaced by a visible
 * escape (`\x1b`, `\u009b`), so a transcript's model name, file path or message cannot move the
 * cursor, retitle the window, clear the screen or write the clipboard (OSC 52) when printed.
 * Every text report of the command line goes through it; the transcript it writes never does.
 * @param {string} text
 * @returns {string}
 */
export function escapeTerminal(text) {
  return String(text).replace(TERMINAL_UNSAFE, (c) => visibleEscape(c, false));
}

/**
 * `JSON.stringify(value, null, 2)` safe for a terminal: JSON already escapes the C0 controls;
 * DEL, the C1 controls, the line separators and the bidirectional controls (which it leaves raw)
 * become `\u` escapes, so the printed JSON parses to the same value.
 * @param {unknown} value
 * @returns {string}
 */
export function jsonForTerminal(value) {
  return JSON.stringify(value, null, 2).replace(TERMINAL_UNSAFE, (c) => visibleEscape(c, true));
}

// ---- Help and version ----------------------------------------------------------------------------

export const HELP = `Usage: context-compaction <command> [options]

Commands
  analyze <session.jsonl> [--json]
      For every API call of a Claude Code session file: the real context size (from its usage)
      next to the library's estimate; the warning state at the end; the compaction boundaries;
      what micro-compaction would free. A table, or JSON with --json.

  simulate <session.jsonl> [--policy P]... [--prices JSON] [--json]
      Replays the session request by request under compaction policies, through a model of
      the provider's prompt cache (5-minute or 1-hour time-to-live), and prints them side by
      side: cost, peak and mean context, compactions, clearings of old tool results, time the
      conversation waited for summaries, what the summaries lost, tokens by billing class. The
      recommended policy (the cheapest that loses nothing) is marked *. With the recorded
      usage, also how well the cache model reproduces it.

  compact <session.jsonl> [options]
      Compacts the conversation (what follows its last compact_boundary) and writes a
      transcript Claude Code can resume: the original lines unchanged, then the new
      compact_boundary line, the summary line and the restored-file lines. Only what follows
      the last boundary is sent on resume, so the new context is just the summary and the
      restored files. Prints the tokens before and after, the restored files and the loss
      report (what the summary does not mention).

Options of compact
  -o, --output FILE       Where to write (default: <session>.compacted.jsonl next to the input;
                          "-" or /dev/stdout writes the transcript to stdout and the report to
                          stderr). A regular file is written to a temporary file in the same
                          directory and renamed on success: a failure or Ctrl-C never leaves a
                          partial file. A symlink is written through (its target replaced, the
                          link kept); a replaced file keeps its mode; a new file is 0600 when
                          the input is private (no group/other access), else the umask's. A
                          device, FIFO or socket is written in place as a stream. Claude Code
                          resumes a session by its file name: to continue the compacted session
                          there, write it over the session file (-o SESSION.jsonl appends to it
                          in place, as Claude Code does) after keeping a copy.
      --no-history        Write only the post-compaction lines (boundary, summary, restored
                          files) instead of appending them to the original lines.
      --offline           Summarize with the embedded offline summarizer: deterministic, no
                          network. The default when no API key is given.
      --api-key KEY       Summarize with the Anthropic Messages API (streamed). Default: the
                          ANTHROPIC_API_KEY environment variable (use --offline to ignore it).
      --model M           Model of the conversation and of the summary request. Default: the
                          model of the transcript's last assistant message.
      --base-url URL      API base URL. Default: ANTHROPIC_BASE_URL or https://api.anthropic.com
      --instructions TEXT Custom instructions for the summary (like /compact TEXT).
      --append-missing    Append the files, user messages and errors the summary misses (the
                          loss report) to the summary.
      --max-summary-tokens N  Token budget of the offline summary (default 8000).
      --fresh-files       Restore the recently read files from disk (default: their content as
                          last read or written in the transcript). Regular files only; a
                          path that is now anything else restores the content as last read.
      --preview           Print what a compaction would do now (no model call) and write nothing.
      --json              The report as JSON.
      --progress          Show progress on stderr even when it is not a terminal (plain lines).
      --no-progress       No progress display (default: shown when stderr is a terminal).

Options of simulate
      --policy P          A policy to compare (repeatable; default: all the built-in ones):
                          a built-in name (recorded, claude-code, batched-clearing,
                          pre-emptive, api-clear-tool-uses, api-compaction, recommended), a
                          policy as JSON ('{"name":"early","compact":{"threshold":100000}}'),
                          or a JSON file holding one policy or an array of them.
      --prices JSON       Prices in $ per million tokens overriding the model's list prices,
                          as JSON or a JSON file: {"input":5,"cacheWrite5m":6.25,
                          "cacheWrite1h":10,"cacheRead":0.5,"output":25}.
      --model M           Model for the prices and thresholds (default: the session's).
      --summary-speed N   Summary output speed, tokens per second (default 50).
      --summary-tokens N  Summary size budget, tokens (default 4000).
      --json              The whole report as JSON.

Other options
  -h, --help              This help.
      --version           The package version.

Exit codes
  0 success; 1 unexpected failure; 2 bad arguments, missing or unreadable file, malformed
  transcript (with the line number), unwritable output; 3 the compaction failed (with its
  error code, e.g. PROMPT_TOO_LONG); 4 the API answered with an error (with the HTTP status)
  or could not be reached; 130 interrupted.

Examples
  npx context-compaction analyze ~/.claude/projects/my-project/SESSION.jsonl
  npx context-compaction simulate SESSION.jsonl
  npx context-compaction simulate SESSION.jsonl --policy claude-code --policy '{"name":"early","compact":{"threshold":100000}}'
  npx context-compaction compact SESSION.jsonl --preview
  npx context-compaction compact SESSION.jsonl -o compacted.jsonl --append-missing
  ANTHROPIC_API_KEY=sk-... npx context-compaction compact SESSION.jsonl --instructions "keep the test plan"
`;

/**
 * The package version, from the package.json next to this file.
 * @returns {string}
 */
export function packageVersion() {
  try {
    return JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

// ---- Reading a transcript ------------------------------------------------------------------------

/**
 * A library error that names `messages[i]` rewritten to name the file line instead; exit 2
 * (the transcript is malformed), the library's code kept.
 * @param {unknown} err what the library threw
 * @param {string} file the transcript, named in the message
 */
export function describeLibraryError(err, file) {
  const e = /** @type {ErrorLike | null | undefined} */ (err);
  const msg = String(e && e.message ? e.message : e).replace(
    /messages\[(\d+)\]((?:\.[\w$]+|\[\d+\])*)/g,
    /** @param {string} _ @param {string} i the index @param {string} path what follows it (may be empty) */
    (_, i, path) => `line ${lineNumberOf(Number(i))}` + (path ? ` (${path.replace(/^\./, '')})` : ''),
  );
  return new CliError(`${file}: ${msg}`, EXIT.USAGE, { code: (e && e.code) || 'ANALYSIS_FAILED', cause: e });
}

/**
 * Reads a transcript file's bytes; throws CliError (exit 2) naming the file.
 * @param {string} file
 * @returns {Buffer}
 */
function readInputBytes(file) {
  try {
    return readFileSync(file);
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err);
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'is a directory' : e.message;
    throw new CliError(`cannot read transcript ${file}: ${why}`, EXIT.USAGE, { code: e.code || 'READ_FAILED', cause: e });
  }
}

/**
 * A transcript file's bytes as text; throws CliError (exit 2) when they are more than a
 * JavaScript string holds (about 512 MB: the library reads a transcript as one string).
 * @param {Buffer} bytes
 * @param {string} file
 * @returns {string}
 */
function transcriptText(bytes, file) {
  try {
    return bytes.toString('utf8');
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err);
    throw new CliError(
      `cannot read transcript ${file}: ${bytes.length.toLocaleString('en-US')} bytes is more text than a JavaScript string holds (${e.message})`,
      EXIT.USAGE,
      { code: e.code || 'FILE_TOO_LARGE', cause: e },
    );
  }
}

/**
 * Parses a transcript's text; throws CliError (exit 2) naming the file and the line.
 * @param {string} text
 * @param {string} file
 * @returns {TranscriptLine[]}
 */
function parseTranscriptText(text, file) {
  let lines;
  try {
    lines = cc.parseTranscript(text);
  } catch (err) {
    const e = /** @type {{message?: string, code?: string}} */ (err);
    throw new CliError(`malformed transcript ${file}: ${e.message}`, EXIT.USAGE, { code: e.code || 'MALFORMED_TRANSCRIPT', cause: e });
  }
  lines.forEach((l, i) => {
    if (typeof l.type !== 'string') {
      throw new CliError(
        `malformed transcript ${file}: line ${lineNumberOf(i)}: a Claude Code transcript line needs a string \`type\``,
        EXIT.USAGE,
        { code: 'MALFORMED_TRANSCRIPT' },
      );
    }
  });
  return lines;
}

/**
 * Reads and parses a transcript file; throws CliError (exit 2) naming the file and the line.
 * @param {string} file
 */
export function readTranscriptFile(file) {
  const text = transcriptText(readInputBytes(file), file);
  return { text, lines: parseTranscriptText(text, file) };
}

// ---- analyze: the analysis (also run by scripts/analyze.mjs) -------------------------------------

/**
 * For every API call: the library's count of the lines before it against its real size.
 * @param {readonly TranscriptLine[]} lines
 * @param {readonly ApiCall[]} [calls]
 * @param {string} [file] named in the errors
 */
export function measureEstimates(lines, calls = apiCalls(lines), file = 'transcript') {
  try {
    return shared.measureEstimates(cc, lines, calls);
  } catch (e) {
    throw describeLibraryError(e, file);
  }
}

/**
 * The compaction boundaries with what our count said right before each.
 * @param {readonly TranscriptLine[]} lines
 * @param {readonly ApiCall[]} [calls]
 * @param {string} [file] named in the errors
 */
export function describeBoundaries(lines, calls = apiCalls(lines), file = 'transcript') {
  return boundaryIndices(lines).map((i) => {
    const before = lines.slice(0, i);
    const prev = calls.filter((c) => c.first < i).pop() ?? null;
    const model = (prev && prev.model) || null;
    let ourCount;
    let shouldCompact;
    try {
      ourCount = cc.tokenCountWithEstimation(before);
      shouldCompact = cc.shouldAutoCompact(before, model ?? ''); // null: the defaults, as ''
    } catch (e) {
      throw describeLibraryError(e, file);
    }
    return {
      ...boundaryFacts(lines, i),
      logicalParentUuid: lines[i].logicalParentUuid ?? null,
      model,
      lastRealContextBefore: prev ? prev.realContext : null,
      ourCountBefore: ourCount,
      autoCompactThreshold: cc.getAutoCompactThreshold(model ?? ''),
      shouldAutoCompactBefore: shouldCompact,
    };
  });
}

/**
 * Threshold numbers of a model (SPEC §4), as the library computes them.
 * @param {ModelId | null} [model] the defaults' model when absent
 * @param {Config | null} [config]
 */
export const thresholdsFor = (model, config) => shared.thresholdsFor(cc, model, config);

/**
 * The whole analysis of parsed transcript lines (the object `analyze --json` prints).
 * @param {TranscriptLine[]} rawLines
 * @param {string} [file] named in the report and the errors
 */
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
    warningState = cc.calculateTokenWarningState(endTokens, model ?? ''); // null: the defaults, as ''
    shouldCompactNow = cc.shouldAutoCompact(lines, model ?? '');
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

/** @param {unknown} n */
const int = (n) => (typeof n === 'number' && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
/** @param {number} x @param {number} [digits] */
const pct = (x, digits = 2) => (Number.isFinite(x) ? `${(x * 100).toFixed(digits)}%` : '-');
/** @param {number} x */
const signedPct = (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)}%` : '-');

/**
 * A text table: the columns padded to their widest cell.
 * @param {string[]} headers
 * @param {(string | number)[][]} rows
 * @param {('l' | 'r')[]} align per column: left or right
 */
function table(headers, rows, align) {
  const widths = headers.map((h, k) => Math.max(h.length, ...rows.map((r) => String(r[k]).length)));
  /** @param {readonly (string | number)[]} cells */
  const fmt = (cells) =>
    cells
      .map((c, k) => (align[k] === 'r' ? String(c).padStart(widths[k]) : String(c).padEnd(widths[k])))
      .join('  ')
      .trimEnd();
  return [fmt(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(fmt)].join('\n');
}

/** @typedef {ReturnType<typeof analyzeLines>} Analysis What analyzeLines returns. */

/**
 * The human-readable report of `analyze` (also what scripts/analyze.mjs prints).
 * @param {Analysis} r
 */
export function formatAnalysis(r) {
  const out = [];
  out.push(`Transcript: ${r.file}`);
  out.push(
    `${int(r.lineCount)} lines, ${int(r.callCount)} API calls` +
      (r.subAgent ? ' (a sub-agent session file: analysed as its own conversation)' : ''),
  );
  out.push('');
  out.push('Per API call: real context = input + cache_creation + cache_read tokens of its usage;');
  out.push("estimate = tokenCountWithEstimation(all lines before the call's first line).");
  out.push('* = unanchored: no earlier usage visible (session start, after a compaction), so the');
  out.push('    estimate lacks the system prompt and tool definitions the transcript never contains.');
  out.push('');
  out.push(
    table(
      ['#', 'line', 'model', 'real', 'estimate', 'error', ''],
      r.calls.map((c) => [c.n, c.lineNumber, c.model ?? '-', int(c.realContext), int(c.estimate), signedPct(c.error), c.anchored ? '' : '*']),
      ['r', 'r', 'l', 'r', 'r', 'r', 'l'],
    ),
  );
  out.push('');
  /** @param {string} name @param {Analysis['summary']['all']} st */
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
  const assumed = w.contextWindowSource === 'default' ? ' (the default: model not in the table)' : '';
  out.push(`  context window ${int(t.contextWindow)}${assumed}, max output ${int(t.maxOutputTokens)}, effective ${int(t.effectiveWindow)}`);
  out.push(
    `  auto-compact ${t.autoCompactEnabled ? 'on' : 'off'} at ${int(t.autoCompactThreshold)}, warning/error at ${int(t.warningThreshold)}, blocking at ${int(t.blockingLimit)}`,
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
  return escapeTerminal(out.join('\n'));
}

// ---- compact: what the transcript tells about the session ----------------------------------------

/**
 * One edit of Claude Code's Edit tool (camelCase fields) or of MultiEdit's `edits` (snake_case).
 * @typedef {{oldString?: string, newString?: string, replaceAll?: boolean,
 *   old_string?: string, new_string?: string, replace_all?: boolean}} FileEdit
 */
/**
 * Claude Code's `toolUseResult` of a file tool, the fields read here (all checked at run time):
 * Read (`type: 'text'`, `file`), Write (`type: 'create' | 'update'`, `filePath`, `content`),
 * Edit (`filePath`, `originalFile` and the FileEdit fields) and MultiEdit (`filePath`,
 * `originalFile`, `edits`).
 * @typedef {FileEdit & {type?: string, file?: {filePath?: string, content?: string, startLine?: number,
 *   numLines?: number, totalLines?: number} | null, filePath?: string, content?: string,
 *   originalFile?: string | null, edits?: (FileEdit | null)[]}} ToolUseResult
 */

/**
 * The model of the last main-chain assistant message (Claude Code's `<synthetic>` lines skipped).
 * @param {readonly TranscriptLine[]} lines
 * @returns {string | null}
 */
export function transcriptModel(lines) {
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i];
    if (l.type !== 'assistant' || l.isSidechain === true) continue;
    const m = l.message && typeof l.message === 'object' ? l.message.model : undefined;
    if (typeof m === 'string' && m !== '' && !m.startsWith('<')) return m;
  }
  return null;
}

/**
 * The agent's read-file state rebuilt from the transcript: for every file the agent read in
 * full, wrote or edited after the last compaction boundary, its content as the agent last saw
 * it (Claude Code records it in each tool result line's `toolUseResult`). Ordered by the line
 * of the last touch (`timestamp` = that line's index), as the library expects: the most
 * recent files are restored first.
 * @param {readonly TranscriptLine[]} lines
 * @returns {Map<string, {content: string, timestamp: number}>}
 */
export function readFileStateFromTranscript(lines) {
  const bounds = boundaryIndices(lines);
  const start = bounds.length ? bounds[bounds.length - 1] + 1 : 0;
  /** @type {Map<string, {content: string, timestamp: number}>} */
  const state = new Map();
  /** @param {unknown} path @param {unknown} content @param {number} i the line */
  const put = (path, content, i) => {
    if (typeof path !== 'string' || path === '' || typeof content !== 'string') return;
    state.delete(path);
    state.set(path, { content, timestamp: i });
  };
  for (let i = start; i < lines.length; i++) {
    const l = lines[i];
    if (l.type !== 'user' || l.isSidechain === true) continue;
    // Other tools' results are strings (errors), arrays (MCP content) or other objects.
    const r = /** @type {ToolUseResult | string | unknown[] | null | undefined} */ (l.toolUseResult);
    if (r === null || typeof r !== 'object' || Array.isArray(r)) continue;
    const content = l.message && Array.isArray(l.message.content) ? l.message.content : [];
    if (content.some((b) => b && b.type === 'tool_result' && b.is_error === true)) continue;
    if (r.type === 'text' && r.file && typeof r.file === 'object') {
      // Read: only whole-file reads (a window of a file is not the file).
      const f = r.file;
      const whole =
        (f.startLine === undefined || f.startLine <= 1) &&
        (typeof f.numLines !== 'number' || typeof f.totalLines !== 'number' || f.numLines >= f.totalLines);
      if (whole) put(f.filePath, f.content, i);
    } else if ((r.type === 'create' || r.type === 'update') && typeof r.content === 'string') {
      put(r.filePath, r.content, i); // Write
    } else if (typeof r.filePath === 'string' && (typeof r.oldString === 'string' || Array.isArray(r.edits))) {
      // Edit / MultiEdit: the file before (originalFile, or what we knew) with the edits applied.
      const before = typeof r.originalFile === 'string' ? r.originalFile : state.get(r.filePath)?.content;
      if (typeof before !== 'string') continue;
      const edits = Array.isArray(r.edits) ? r.edits : [r];
      let text = before;
      let ok = true;
      for (const e of edits) {
        if (!e || (typeof e.oldString !== 'string' && typeof e.old_string !== 'string')) {
          ok = false;
          break;
        }
        const from = /** @type {string} */ (e.oldString ?? e.old_string); // one of them is a string: checked above
        const to = e.newString ?? e.new_string ?? '';
        const all = e.replaceAll ?? e.replace_all ?? false;
        if (from === '' || !text.includes(from)) {
          ok = false;
          break;
        }
        text = all ? text.split(from).join(to) : text.replace(from, () => to);
      }
      if (ok) put(r.filePath, text, i);
      else state.delete(r.filePath); // unknown content now: not restored
    }
  }
  return state;
}

// ---- compact: where and how the output is written -------------------------------------------------

/**
 * The default output path: `<dir>/<name>.compacted.jsonl`.
 * @param {string} input
 */
export function defaultOutputPath(input) {
  const base = basename(input).replace(/\.jsonl$/i, '');
  return join(dirname(input), `${base}.compacted.jsonl`);
}

/** Paths that name this process's standard output: written like `-o -`. */
const STDOUT_PATHS = new Set(['/dev/stdout', '/dev/fd/1', '/proc/self/fd/1']);

/**
 * How `compact` writes its output (planOutput decides it before any work):
 * - `stdout`: `-o -` (or /dev/stdout): the transcript to stdout, the report to stderr;
 * - `file`: a regular file, new or existing: written to a temporary file in `target`'s
 *   directory and renamed over `target` once complete (`target` is the file a symlink points
 *   to: the link itself stays); an existing file's mode (and, as root, owner) is kept; a new
 *   file is created 0600 when the input is private (no group or other permission bit), else
 *   with the umask's default;
 * - `stream`: anything else that exists (a device such as /dev/null, a terminal): opened for
 *   writing (nothing created or truncated) and written in place, never renamed over;
 * - `fifo`: a named pipe: written in place once a reader opens it;
 * - `socket`: a Unix socket: connected to and written to as a stream.
 * `sameAsInput` says whether the output is the input file itself (same device and inode,
 * through any symlink or hard link): the in-place append of Claude Code.
 * @typedef {{kind: 'stdout' | 'file' | 'stream' | 'fifo' | 'socket', path: string, target: string,
 *   sameAsInput: boolean, mode: number | null, owner: {uid: number, gid: number} | null,
 *   createMode: number}} OutputPlan
 */

/**
 * Where a symlink chain ends, the last link dangling (its target not created yet): the path
 * to create. A path that is not a link is returned as it is (its directory resolved).
 * @param {string} path
 */
function danglingTarget(path) {
  let p = path;
  for (let hops = 0; hops < 40; hops++) {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      break; // nothing there: create it
    }
    if (!st.isSymbolicLink()) break;
    p = resolve(dirname(p), readlinkSync(p));
  }
  try {
    return join(realpathSync(dirname(p)), basename(p));
  } catch {
    return p; // a missing directory: checkWritable says so
  }
}

/**
 * Decides, before any work, how `output` will be written (see OutputPlan); throws CliError
 * (exit 2) when it cannot be: a missing or unwritable directory, a directory as the output,
 * an unwritable device or FIFO.
 * @param {string} output `-` or an absolute path
 * @param {string} input the transcript (compared by device and inode)
 * @returns {OutputPlan}
 */
export function planOutput(output, input) {
  if (output === '-' || STDOUT_PATHS.has(output)) {
    return { kind: 'stdout', path: '-', target: '-', sameAsInput: false, mode: null, owner: null, createMode: 0o666 };
  }
  /** @type {import('node:fs').Stats | null} */
  let st = null;
  try {
    st = statSync(output); // through symlinks
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err);
    if (e.code === 'ELOOP') throw new CliError(`cannot write ${output}: too many levels of symbolic links`, EXIT.USAGE, { code: 'ELOOP', cause: e });
    if (e.code === 'EACCES') throw new CliError(`cannot write ${output}: permission denied`, EXIT.USAGE, { code: 'EACCES', cause: e });
  }
  /** @type {import('node:fs').Stats | null} */
  let inputSt = null;
  try {
    inputSt = statSync(input);
  } catch {
    /* a missing input is reported when it is read */
  }
  const sameAsInput = st !== null && inputSt !== null && st.dev === inputSt.dev && st.ino === inputSt.ino;
  if (st && st.isDirectory()) throw new CliError(`cannot write ${output}: it is a directory`, EXIT.USAGE, { code: 'EISDIR' });
  if (st && !st.isFile()) {
    if (!st.isSocket()) {
      try {
        accessSync(output, fsConstants.W_OK);
      } catch {
        throw new CliError(`cannot write ${output}: permission denied`, EXIT.USAGE, { code: 'EACCES' });
      }
    }
    return { kind: st.isSocket() ? 'socket' : st.isFIFO() ? 'fifo' : 'stream', path: output, target: output, sameAsInput, mode: null, owner: null, createMode: 0o666 };
  }
  const target = st ? realpathSync(output) : danglingTarget(output);
  checkWritable(target);
  const privateInput = inputSt !== null && (inputSt.mode & 0o077) === 0;
  return {
    kind: 'file',
    path: output,
    target,
    sameAsInput,
    mode: st ? st.mode & 0o7777 : null,
    owner: st ? { uid: st.uid, gid: st.gid } : null,
    // Written private, then given the existing file's mode; a new file: private like its input, else the umask's.
    createMode: st || privateInput ? 0o600 : 0o666,
  };
}

/**
 * Checks, before any work, that a regular file can be created or replaced at `file`: its
 * directory exists and is writable (exit 2 otherwise).
 * @param {string} file
 */
export function checkWritable(file) {
  const dir = dirname(file);
  let st;
  try {
    st = statSync(dir);
  } catch {
    throw new CliError(`cannot write ${file}: no such directory ${dir}`, EXIT.USAGE, { code: 'ENOENT' });
  }
  if (!st.isDirectory()) throw new CliError(`cannot write ${file}: ${dir} is not a directory`, EXIT.USAGE, { code: 'ENOTDIR' });
  try {
    accessSync(dir, fsConstants.W_OK);
  } catch {
    throw new CliError(`cannot write ${file}: the directory ${dir} is not writable`, EXIT.USAGE, { code: 'EACCES' });
  }
  try {
    if (statSync(file).isDirectory()) throw new CliError(`cannot write ${file}: it is a directory`, EXIT.USAGE, { code: 'EISDIR' });
  } catch (e) {
    if (e instanceof CliError) throw e;
  }
}

/** Bytes written per write call: between two, a signal handler can run. */
const WRITE_CHUNK = 1 << 20;
const writeP = promisify(fsWrite);
const fsyncP = promisify(fsync);

/**
 * The pieces of an output as bytes.
 * @param {readonly (string | Uint8Array)[]} pieces
 */
const asBytes = (pieces) => pieces.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)).filter((b) => b.length > 0);

/**
 * What a write in progress leaves to clean up if the process is interrupted: the temporary
 * file (removed), and whether the output is already complete (`committed`: nothing to undo).
 * @typedef {{tmp: string | null, committed: boolean, streaming: boolean}} WriteState
 */

/**
 * Writes `pieces` to a regular file atomically (see OutputPlan): a temporary file created
 * (exclusively, 0600) in the target's directory, written in 1 MiB chunks, given the mode of
 * the file it replaces, flushed to disk, then renamed over the target. Anything failing
 * removes the temporary file; the target is untouched until the rename.
 * @param {OutputPlan} plan a `file` plan
 * @param {readonly (string | Uint8Array)[]} pieces
 * @param {WriteState} state updated as the write goes (read by the interrupt handler)
 */
export async function writeFileAtomic(plan, pieces, state = { tmp: null, committed: false, streaming: false }) {
  const target = plan.target;
  const tmp = join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  /** @type {number | null} */
  let fd = null;
  try {
    // Created synchronously: an interrupt handler (same thread) sees state.tmp whenever the file exists.
    fd = openSync(tmp, 'wx', plan.createMode);
    state.tmp = tmp;
    for (const buf of asBytes(pieces)) {
      for (let at = 0; at < buf.length; ) {
        const { bytesWritten } = await writeP(fd, buf, at, Math.min(WRITE_CHUNK, buf.length - at));
        at += bytesWritten;
      }
    }
    if (plan.mode !== null) fchmodSync(fd, plan.mode);
    if (plan.owner && typeof process.getuid === 'function' && process.getuid() === 0) {
      try {
        fchownSync(fd, plan.owner.uid, plan.owner.gid);
      } catch {
        /* a file system without owners: the mode is kept */
      }
    }
    await fsyncP(fd);
    closeSync(fd);
    fd = null;
    // The target must still be what was planned: a regular file or nothing (never rename over a device).
    let now = null;
    try {
      now = lstatSync(target);
    } catch {
      /* still absent */
    }
    if (now && !now.isFile()) throw Object.assign(new Error(`${target} is no longer a regular file`), { code: 'ECHANGED' });
    renameSync(tmp, target);
    state.committed = true;
    state.tmp = null;
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err);
    if (fd !== null) closeSync(fd);
    if (state.tmp) rmSync(state.tmp, { force: true });
    state.tmp = null;
    throw new CliError(`cannot write ${plan.path}: ${e.message}`, EXIT.USAGE, { code: e.code || 'WRITE_FAILED', cause: e });
  }
}

/**
 * Opens a FIFO for writing without blocking a thread: non-blocking, retried every 50 ms until a
 * reader opens it (a blocking open would hold a libuv thread that process.exit waits for, so
 * Ctrl-C could not end the run).
 * @param {string} path
 * @returns {Promise<number>} the descriptor
 */
async function openFifoForWriting(path) {
  for (;;) {
    try {
      return openSync(path, fsConstants.O_WRONLY | fsConstants.O_NONBLOCK);
    } catch (err) {
      if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'ENXIO') throw err;
      await new Promise((ok) => setTimeout(ok, 50));
    }
  }
}

/**
 * Writes `pieces` in place to what is not a regular file (see OutputPlan): stdout, a device, a
 * FIFO (written through the event loop once a reader opens it), a Unix socket (connected to).
 * @param {OutputPlan} plan a `stdout`, `stream`, `fifo` or `socket` plan
 * @param {readonly (string | Uint8Array)[]} pieces
 * @param {NodeJS.WritableStream} stdout
 * @param {WriteState} state `streaming` is set once bytes may have reached the output
 */
export async function writeStream(plan, pieces, stdout, state = { tmp: null, committed: false, streaming: false }) {
  const bufs = asBytes(pieces);
  try {
    if (plan.kind === 'stdout' || plan.kind === 'socket' || plan.kind === 'fifo') {
      const out =
        plan.kind === 'stdout'
          ? stdout
          : plan.kind === 'fifo'
            ? new Socket({ fd: await openFifoForWriting(plan.target), readable: false, writable: true })
            : await new Promise((ok, fail) => {
                const sock = createConnection(plan.target);
                sock.once('connect', () => ok(sock)).once('error', fail);
              });
      state.streaming = true;
      for (const buf of bufs) {
        await new Promise((ok, fail) => out.write(buf, (/** @type {Error | null | undefined} */ e) => (e ? fail(e) : ok(undefined))));
      }
      if (plan.kind !== 'stdout') await new Promise((ok) => /** @type {Socket} */ (out).end(() => ok(undefined)));
    } else {
      const fh = await openFile(plan.target, fsConstants.O_WRONLY);
      state.streaming = true;
      try {
        for (const buf of bufs) {
          for (let at = 0; at < buf.length; ) {
            const { bytesWritten } = await fh.write(buf, at, Math.min(WRITE_CHUNK, buf.length - at));
            at += bytesWritten;
          }
        }
      } finally {
        await fh.close();
      }
    }
    state.committed = true;
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err);
    throw new CliError(`cannot write ${plan.path}: ${e.message}`, EXIT.USAGE, { code: e.code || 'WRITE_FAILED', cause: e });
  }
}

// ---- compact: progress on stderr ------------------------------------------------------------------

const PHASE_TEXT = {
  start: 'starting',
  preCompactHook: 'PreCompact hooks',
  summarizing: 'summarizing',
  summarizingPart: 'summarizing in parts',
  retryPromptTooLong: 'prompt too long: retrying with the oldest turns dropped',
  retryTransient: 'retrying after a transient error',
  fallbackSummary: 'using the summary prompt instead of the API\'s compaction',
  summarized: 'summary received',
  restoring: 'restoring files',
  sessionStartHook: 'SessionStart hooks',
  postCompactHook: 'PostCompact hooks',
  writing: 'writing the output',
  done: 'done',
};

/**
 * The progress display: `onProgress` (phases) and `onText` (a running count of the streamed
 * characters, per attempt of the summary request). On a terminal, one status line redrawn in
 * place (the elapsed time ticking); otherwise, with --progress, plain lines: one per phase, and
 * the count of characters streamed when the summary phase ends; disabled: no output at all.
 * @param {{write(s: string): unknown, columns?: number}} stream
 * @param {'tty' | 'plain' | 'off'} mode
 */
export function progressDisplay(stream, mode) {
  const started = Date.now();
  let chars = 0;
  let phase = '';
  let summarizing = false;
  let lastDraw = 0;
  let drawn = false;
  /** @type {ReturnType<typeof setInterval> | null} */
  let ticker = null;
  /** @param {number} x */
  const n = (x) => x.toLocaleString('en-US');
  const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const status = () => `compacting: ${phase}${chars ? ` · ${n(chars)} characters streamed` : ''} · ${seconds()}`;
  const draw = () => {
    const cols = stream.columns || 100;
    stream.write(`\r\x1b[K${escapeTerminal(status()).slice(0, cols - 1)}`);
    drawn = true;
    lastDraw = Date.now();
  };
  /** Plain mode: the count of the attempt that just ended. */
  const streamedLine = (suffix = '') => {
    if (mode === 'plain' && summarizing && chars) stream.write(`progress: ${n(chars)} characters streamed${suffix}\n`);
  };
  return {
    /** Characters streamed by the last attempt of the summary request. */
    get chars() {
      return chars;
    },
    /**
     * @param {(ProgressEvent | {phase: 'writing'}) & {detail?: string}} e a phase of the
     *   compaction, or the command's own `writing` (`detail` is shown on any phase that has one)
     */
    onProgress(e) {
      if (!e || typeof e.phase !== 'string') return;
      let text = PHASE_TEXT[e.phase] ?? e.phase;
      if (e.phase === 'summarizing' && e.attempt > 1) text += ` (attempt ${e.attempt})`;
      if (e.detail) text += ` (${e.detail})`;
      if (e.phase === 'start' && typeof e.tokens === 'number') text += ` (${n(e.tokens)} tokens)`;
      streamedLine();
      phase = text;
      summarizing = e.phase === 'summarizing';
      if (summarizing) chars = 0;
      if (mode === 'tty') {
        if (ticker === null) {
          ticker = setInterval(draw, 250);
          ticker.unref();
        }
        draw();
      } else if (mode === 'plain') {
        stream.write(`progress: ${escapeTerminal(text)}\n`);
      }
    },
    /** @param {string} t a chunk of the streamed summary */
    onText(t) {
      if (typeof t === 'string') chars += t.length;
      if (mode === 'tty' && Date.now() - lastDraw >= 50) draw();
    },
    /** Stops the display (clears the status line) before the report or an error message. */
    finish(failed = false) {
      if (ticker !== null) clearInterval(ticker);
      ticker = null;
      if (mode === 'tty' && drawn) stream.write('\r\x1b[K');
      drawn = false;
      if (failed) streamedLine(' before the failure');
      summarizing = false;
    },
  };
}

// ---- compact: reports -----------------------------------------------------------------------------

/** @param {string} s @param {number} [max] */
const q = (s, max = 100) => {
  const one = String(s).replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > max ? one.slice(0, max - 1) + '…' : one);
};

/**
 * @param {LossReport | null} loss
 * @param {boolean} appended whether --append-missing added it to the summary
 * @param {string[]} out the report's lines
 */
function formatLossReport(loss, appended, out) {
  if (!loss) {
    out.push('Loss report: not available in this build');
    return;
  }
  const n = loss.files.length + loss.userMessages.length + loss.errors.length;
  if (n === 0) {
    out.push('Loss report: nothing missing (the summary mentions every file, user message and error of the compacted part)');
    return;
  }
  out.push(
    `Loss report: ${n} item${n === 1 ? '' : 's'} of the compacted part not mentioned by the summary` +
      (appended ? ' (appended to the summary: --append-missing)' : ' (add them to the summary with --append-missing)'),
  );
  if (loss.files.length) {
    out.push(`  files (${loss.files.length}):`);
    for (const f of loss.files) out.push(`    ${f}`);
  }
  if (loss.userMessages.length) {
    out.push(`  user messages (${loss.userMessages.length}):`);
    for (const m of loss.userMessages) out.push(`    ${q(m)}`);
  }
  if (loss.errors.length) {
    out.push(`  errors (${loss.errors.length}):`);
    for (const e of loss.errors) out.push(`    ${q(e, 140)}`);
  }
}

/**
 * @param {string} title
 * @param {readonly {path?: string, name?: string, tokens: number, truncated: boolean, contentKnown?: boolean}[]} items
 * @param {'path' | 'name'} key the field that names an item
 * @param {string[]} out the report's lines
 */
function formatItems(title, items, key, out) {
  if (!items.length) {
    out.push(`${title}: none`);
    return;
  }
  const total = items.reduce((a, f) => a + (f.tokens || 0), 0);
  out.push(`${title} (${items.length}, ${int(total)} tokens):`);
  for (const f of items) {
    const size = f.contentKnown === false ? 'size unknown (read when compacting)' : `${int(f.tokens)} tokens${f.truncated ? ' (truncated)' : ''}`;
    out.push(`  ${f[key] ?? f.name}  ${size}`);
  }
}

/**
 * What `compact` reports (the object `compact --json` prints).
 * @typedef {{input: string, output: string | null, history: boolean, model: string,
 *   modelFrom: 'option' | 'transcript' | 'default',
 *   summarizer: {kind: 'offline'} | {kind: 'anthropic', baseURL: string},
 *   tokensBefore: number, tokensAfter: number, postCompactTokenCount: number, summaryTokens: number,
 *   calibration: {overhead: number, ratio: number, observations: number} | null,
 *   streamedCharacters: number,
 *   restoredFiles: {path: string, tokens: number, truncated: boolean}[], restoredFileTokens: number,
 *   restoredSkills: {name: string, tokens: number, truncated: boolean}[],
 *   lossReport: LossReport | null, appendMissing: boolean, compactionUsage: CompactionUsage | null,
 *   ptlRetries: number, transientRetries: number, warningStateAfter: TokenWarningState,
 *   linesWritten: {history: number, new: number}}} CompactionReport
 */

/**
 * The text report of a compaction.
 * @param {CompactionReport} r
 */
export function formatCompaction(r) {
  const out = [];
  out.push(`Compacted ${r.input}`);
  out.push(`  summarizer     ${r.summarizer.kind === 'offline' ? 'offline (embedded, deterministic, no network)' : `Anthropic Messages API at ${r.summarizer.baseURL}`}`);
  out.push(`  model          ${r.model}${r.modelFrom === 'default' ? ' (no model in the transcript: the default)' : r.modelFrom === 'transcript' ? ' (from the transcript)' : ''}`);
  out.push(`  tokens before  ${int(r.tokensBefore)}`);
  const saved = r.tokensBefore > 0 ? 1 - r.tokensAfter / r.tokensBefore : NaN;
  out.push(`  tokens after   ${int(r.tokensAfter)}  (${pct(saved, 1)} smaller: summary ≈ ${int(r.summaryTokens)} tokens, restored files ${int(r.restoredFileTokens)})`);
  if (r.calibration) {
    out.push(`  learned        ${int(r.calibration.overhead)} tokens sent besides the messages (system prompt, tools), ${r.calibration.ratio.toFixed(2)} tokens per estimated token (${r.calibration.observations} responses)`);
  }
  if (r.compactionUsage && r.summarizer.kind !== 'offline') {
    const u = r.compactionUsage;
    out.push(`  summary call   ${int(realContextOf(u))} input + ${int(u.output_tokens)} output tokens`);
  }
  if (r.ptlRetries || r.transientRetries) out.push(`  retries        ${r.ptlRetries} prompt-too-long, ${r.transientRetries} transient`);
  if (r.output) {
    out.push(
      `  written        ${r.output === '-' ? 'stdout' : r.output}: ` +
        (r.history ? `${int(r.linesWritten.history)} original lines + ` : '') +
        `${int(r.linesWritten.new)} new lines (boundary, summary${r.linesWritten.new > 2 ? ', restored context' : ''})`,
    );
  }
  out.push('');
  formatItems('Restored files', r.restoredFiles, 'path', out);
  if (r.restoredSkills.length) formatItems('Restored skills', r.restoredSkills, 'name', out);
  out.push('');
  formatLossReport(r.lossReport, r.appendMissing, out);
  return escapeTerminal(out.join('\n'));
}

/**
 * The text report of `compact --preview`.
 * @param {CompactionPreview} p
 * @param {{input: string, model: string}} meta
 */
export function formatPreview(p, meta) {
  const out = [];
  out.push(`Preview of compacting ${meta.input} (nothing written, no model call)`);
  out.push(`  model                    ${meta.model}`);
  out.push(`  tokens now               ${int(p.tokensBefore)}`);
  out.push(`  auto-compact threshold   ${int(p.threshold)} (${p.isAboveThreshold ? 'crossed' : 'not crossed'})`);
  out.push(`  estimated summary        ${int(p.estimatedSummaryTokens)} tokens`);
  out.push(`  estimated tokens after   ${int(p.estimatedTokensAfter)}`);
  const m = p.microCompact ?? { tokensFreed: 0, clearedToolUseIds: [] };
  out.push(`  micro-compaction instead would clear ${(m.clearedToolUseIds ?? []).length} tool results, freeing about ${int(m.tokensFreed)} tokens`);
  out.push('');
  formatItems('Files that would be restored', p.restoredFiles ?? [], 'path', out);
  if ((p.restoredSkills ?? []).length) formatItems('Skills that would be restored', p.restoredSkills, 'name', out);
  return escapeTerminal(out.join('\n'));
}

// ---- compact: errors ------------------------------------------------------------------------------

const INPUT_CODES = new Set(['INVALID_MESSAGE', 'INVALID_ARGUMENT', 'MALFORMED_TRANSCRIPT']);

/**
 * The API error behind a failure (its `cause` chain), if any.
 * @param {ErrorLike | null | undefined} e
 * @returns {ErrorLike | null}
 */
function apiErrorOf(e) {
  for (let c = e, depth = 0; c && depth < 5; c = c.cause, depth++) {
    if (c.name === 'AnthropicApiError' || (typeof c.status === 'number' && c !== e)) return c;
  }
  return null;
}

/** @param {ErrorLike} a */
function describeApiError(a) {
  const parts = [];
  if (typeof a.status === 'number') parts.push(`HTTP ${a.status}`);
  else parts.push(`no HTTP status${a.code ? ` (${a.code})` : ''}`);
  const body = typeof a.error === 'string' ? undefined : a.error; // a text body (not the API's) has no fields
  const type = a.type ?? body?.error?.type;
  if (type) parts.push(type);
  const msg = body?.error?.message ?? a.message;
  return parts.join(' ') + (msg ? `: ${msg}` : '') + (a.requestId ? ` [request-id ${a.requestId}]` : '');
}

/**
 * `message; nothing was written` unless the message already says so.
 * @param {string} message
 */
const nothingWritten = (message) => (/nothing was (written|committed|changed)/.test(message) ? message.replace(/nothing was (committed|changed)/, 'nothing was written') : `${message}; nothing was written`);

/**
 * Turns a rejection of the compaction into a CliError with the exit code it deserves.
 * @param {unknown} err what the compaction rejected with
 * @param {string} file the transcript
 * @returns {CliError | null}
 */
export function compactionError(err, file) {
  // Read for its fields; null and undefined have no `code` and end at `return null`.
  const e = /** @type {ErrorLike} */ (err);
  if (e instanceof CliError) return e;
  const code = e && typeof e.code === 'string' ? e.code : null;
  if (code === 'ABORTED') return new CliError('interrupted: nothing was written', EXIT.INTERRUPTED, { code, cause: e });
  if (code && INPUT_CODES.has(code)) {
    const d = describeLibraryError(e, file);
    d.message = `malformed transcript ${d.message}`;
    return d;
  }
  const api = apiErrorOf(e);
  if (code === 'SUMMARIZER_FAILED' && api) {
    return new CliError(nothingWritten(`API error: ${describeApiError(api)}`), EXIT.API, { code: api.code ?? code, cause: e });
  }
  if (code) {
    const detail = api ? ` (last API answer: ${describeApiError(api)})` : e.cause?.message ? ` (${e.cause.message})` : '';
    return new CliError(nothingWritten(`compaction failed (${code}): ${e.message}${detail}`), EXIT.COMPACTION, { code, cause: e });
  }
  return null; // unexpected: the caller prints the stack
}

// ---- Commands ------------------------------------------------------------------------------------

/**
 * @template {NonNullable<import('node:util').ParseArgsConfig['options']>} O
 * @param {string[]} args
 * @param {O} options
 */
function parse(args, options) {
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw usageError(String(/** @type {Error} */ (e).message).replace(/\. To specify a positional argument.*$/s, ''));
  }
}

/**
 * @param {string[]} positionals
 * @param {string} command
 */
function onePath(positionals, command) {
  if (positionals.length === 0) throw usageError(`${command}: which transcript? (${command} <session.jsonl>)`);
  if (positionals.length > 1) throw usageError(`${command}: one transcript at a time (got ${positionals.length})`);
  return resolve(positionals[0]);
}

/**
 * `analyze <session.jsonl> [--json]`.
 * @param {string[]} args the arguments after the command
 * @param {CliIo} io
 */
export async function analyzeCommand(args, io) {
  const { values, positionals } = parse(args, /** @type {const} */ ({ json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }));
  if (values.help) {
    await writeOutput(io.stdout, HELP, 'stdout');
    return EXIT.OK;
  }
  const file = onePath(positionals, 'analyze');
  const { lines } = readTranscriptFile(file);
  const report = analyzeLines(lines, file);
  await writeOutput(io.stdout, (values.json ? jsonForTerminal(report) : formatAnalysis(report)) + '\n', 'the report to stdout');
  return EXIT.OK;
}

// ---- simulate ------------------------------------------------------------------------------------

/**
 * A JSON option given inline (`{…}` / `[…]`) or as a file; throws CliError (exit 2) naming it.
 * @param {string} text
 * @param {string} option e.g. `--policy`
 * @returns {unknown}
 */
function jsonArgument(text, option) {
  const inline = /^\s*[[{]/.test(text);
  let source = text;
  if (!inline) {
    try {
      source = readFileSync(resolve(text), 'utf8');
    } catch (err) {
      const e = /** @type {NodeJS.ErrnoException} */ (err);
      throw usageError(`${option} ${JSON.stringify(text)}: not JSON, and no such file (${e.code ?? e.message})`);
    }
  }
  try {
    return JSON.parse(source);
  } catch (err) {
    throw usageError(`${option} ${inline ? '' : `${text}: `}invalid JSON: ${/** @type {Error} */ (err).message}`);
  }
}

/**
 * The policies of the `--policy` arguments: names, inline JSON, or files (one or an array).
 * @param {string[]} args
 * @returns {Array<SimulationPolicyName | SimulationPolicy>}
 */
function policyArguments(args) {
  /** @type {Array<SimulationPolicyName | SimulationPolicy>} */
  const out = [];
  for (const a of args) {
    if (/^[a-z][a-z0-9-]*$/.test(a)) {
      out.push(/** @type {SimulationPolicyName} */ (a));
      continue;
    }
    const v = jsonArgument(a, '--policy');
    for (const p of Array.isArray(v) ? v : [v]) out.push(/** @type {SimulationPolicy} */ (p));
  }
  return out;
}

/**
 * A whole number option ≥ 1; throws CliError (exit 2).
 * @param {string | undefined} text
 * @param {string} option
 */
function positiveNumber(text, option) {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw usageError(`${option} must be a number > 0 (got ${JSON.stringify(text)})`);
  return n;
}

/**
 * What the simulator's report says of a policy whose automatic compactions failed or stopped
 * (as the library's `Compactor` stops them), or `''`.
 * @param {SimulationReport['policies'][number]} q
 */
function stoppedNote(q) {
  const failed = q.failedCompactions
    ? `${q.failedCompactions} automatic compaction${q.failedCompactions === 1 ? '' : 's'} failed (the summary would not have been below the threshold)`
    : '';
  if (!q.paused) return failed;
  const why =
    q.paused === 'thrashing'
      ? 'thrashing: the context refilled to the threshold within 3 requests after each of 3 compactions in a row'
      : 'circuit breaker open: 3 compactions in a row failed';
  return `${failed ? `${failed}; ` : ''}automatic compaction stopped at request ${(q.pausedAtRequest ?? 0) + 1} (${why}), the context grew past the threshold from there`;
}

/**
 * The text report of `simulate`: the side-by-side table, then the calibration.
 * @param {SimulationReport} r
 * @param {string} file
 */
export function formatSimulation(r, file) {
  const out = [];
  out.push(`${file}: ${r.calls} API calls, model ${r.model}, auto-compact threshold ${r.threshold.toLocaleString('en-US')} tokens`);
  const p = r.prices;
  out.push(
    `Prices ($/MTok): input ${p.input}, cache write ${p.cacheWrite5m} (5 min) / ${p.cacheWrite1h} (1 h), cache read ${p.cacheRead}, output ${p.output}; ` +
      `summaries of at most ${r.summaryTokens} tokens at ${r.summaryTokensPerSecond} tokens/s`,
  );
  out.push('');
  out.push(table([...SIMULATION_COLUMNS], simulationRows(r), SIMULATION_COLUMNS.map((_, i) => (i === 0 ? 'l' : 'r'))));
  if (r.recommended) out.push(`* recommended: ${r.recommended} (the cheapest policy whose summaries lose nothing)`);
  for (const q of r.policies) {
    if (q.lost) out.push(`${q.name} lost: ${[...q.loss.files, ...q.loss.userMessages.map((u) => JSON.stringify(u.slice(0, 80))), ...q.loss.errors].join('; ')}`);
  }
  for (const q of r.policies) {
    const stopped = stoppedNote(q);
    if (stopped) out.push(`${q.name}: ${stopped}`);
  }
  const c = r.calibration;
  if (c) {
    out.push('');
    const pct = (/** @type {number} */ x) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}%`;
    out.push(
      `Calibration (recorded policy vs recorded usage, ${c.calls} calls): cache read ${c.simulated.cacheRead.toLocaleString('en-US')} vs ${c.recorded.cacheRead.toLocaleString('en-US')} (${pct(c.readErrorPercent)}), ` +
        `cache write ${c.simulated.cacheWrite.toLocaleString('en-US')} vs ${c.recorded.cacheWrite.toLocaleString('en-US')} (${pct(c.writeErrorPercent)})`,
    );
    out.push(
      `  from the transcript alone: read ${pct(c.modelOnlyReadErrorPercent)}, write ${pct(c.modelOnlyWriteErrorPercent)}; ` +
        `prompt changes at user prompts seen only in the usage: ${c.clientBreaks.length}`,
    );
  }
  return escapeTerminal(out.join('\n'));
}

const SIMULATE_OPTIONS = /** @type {const} @satisfies {NonNullable<import('node:util').ParseArgsConfig['options']>} */ ({
  policy: { type: 'string', multiple: true },
  prices: { type: 'string' },
  model: { type: 'string' },
  'summary-speed': { type: 'string' },
  'summary-tokens': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
});

/**
 * `simulate <session.jsonl> [--policy P]... [--prices JSON] [--json]`.
 * @param {string[]} args the arguments after the command
 * @param {CliIo} io
 */
export async function simulateCommand(args, io) {
  const { values: v, positionals } = parse(args, SIMULATE_OPTIONS);
  if (v.help) {
    await writeOutput(io.stdout, HELP, 'stdout');
    return EXIT.OK;
  }
  const file = onePath(positionals, 'simulate');
  /** @type {SimulateOptions} */
  const options = {};
  if (v.policy) options.policies = policyArguments(v.policy);
  if (v.prices !== undefined) options.prices = /** @type {SimulationPriceOverrides} */ (jsonArgument(v.prices, '--prices'));
  if (v.model !== undefined) options.model = v.model;
  const speed = positiveNumber(v['summary-speed'], '--summary-speed');
  if (speed !== undefined) options.summaryTokensPerSecond = speed;
  const tokens = positiveNumber(v['summary-tokens'], '--summary-tokens');
  if (tokens !== undefined) options.summaryTokens = Math.round(tokens);
  const { lines } = readTranscriptFile(file);
  let report;
  try {
    report = await cc.simulateSession(lines, options);
  } catch (err) {
    const e = /** @type {ErrorLike} */ (err);
    if (e && e.code === 'INVALID_ARGUMENT') throw usageError(`simulate: ${e.message}`);
    throw describeLibraryError(err, file);
  }
  await writeOutput(io.stdout, (v.json ? jsonForTerminal(report) : formatSimulation(report, file)) + '\n', 'the report to stdout');
  return EXIT.OK;
}

const COMPACT_OPTIONS = /** @type {const} @satisfies {NonNullable<import('node:util').ParseArgsConfig['options']>} */ ({
  output: { type: 'string', short: 'o' },
  'no-history': { type: 'boolean' },
  offline: { type: 'boolean' },
  'api-key': { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  instructions: { type: 'string' },
  'append-missing': { type: 'boolean' },
  'max-summary-tokens': { type: 'string' },
  'fresh-files': { type: 'boolean' },
  preview: { type: 'boolean' },
  json: { type: 'boolean' },
  progress: { type: 'boolean' },
  'no-progress': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
});

/**
 * `compact <session.jsonl> [options]`.
 * @param {string[]} args the arguments after the command
 * @param {CliIo} io
 */
export async function compactCommand(args, io) {
  const { values: v, positionals } = parse(args, COMPACT_OPTIONS);
  if (v.help) {
    await writeOutput(io.stdout, HELP, 'stdout');
    return EXIT.OK;
  }
  const input = onePath(positionals, 'compact');
  const env = io.env;

  // Which summarizer.
  if (v.offline && v['api-key'] !== undefined) throw usageError('compact: --offline and --api-key exclude each other');
  if (v['api-key'] === '') throw usageError('compact: --api-key is empty');
  const apiKey = v.offline ? undefined : v['api-key'] ?? (env.ANTHROPIC_API_KEY || undefined);
  const offline = apiKey === undefined;
  if (offline && v['base-url'] !== undefined) throw usageError('compact: --base-url needs the API (--api-key or ANTHROPIC_API_KEY), not --offline');
  let maxSummaryTokens;
  if (v['max-summary-tokens'] !== undefined) {
    if (!offline) throw usageError('compact: --max-summary-tokens is for the offline summarizer');
    maxSummaryTokens = Number(v['max-summary-tokens']);
    if (!Number.isSafeInteger(maxSummaryTokens) || maxSummaryTokens <= 0) {
      throw usageError(`compact: --max-summary-tokens must be a positive integer (got ${v['max-summary-tokens']})`);
    }
  }
  const baseURL = (v['base-url'] ?? (env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com')).replace(/\/+$/, '');
  if (!offline) {
    try {
      const u = new URL(baseURL);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      throw usageError(`compact: --base-url is not an http(s) URL: ${baseURL}`);
    }
  }
  if (v.model === '') throw usageError('compact: --model is empty');
  if (v.preview && v.output !== undefined) throw usageError('compact: --preview writes nothing; drop -o/--output');
  if (v.progress && v['no-progress']) throw usageError('compact: --progress and --no-progress exclude each other');

  // The output, checked before any work (no summary paid for that cannot be written).
  const output = v.preview ? null : v.output === '-' ? '-' : resolve(v.output ?? defaultOutputPath(input));
  const plan = output === null ? null : planOutput(output, input);
  if (plan && plan.sameAsInput && v['no-history']) {
    throw usageError('compact: refusing to replace the session file with its post-compaction lines only (drop --no-history to append to it)');
  }
  const toStdout = plan !== null && plan.kind === 'stdout';
  const report = toStdout ? io.stderr : io.stdout;

  if (v.preview) {
    if (typeof cc.previewCompaction !== 'function') {
      throw new CliError('compact --preview: this build of the library has no previewCompaction', EXIT.INTERNAL, { code: 'UNSUPPORTED' });
    }
    const { lines, model, readFileState } = prepareCompaction(input, readTranscriptFile(input).lines, v.model, offline);
    let p;
    try {
      p = await cc.previewCompaction(lines, { model, readFileState });
    } catch (e) {
      throw compactionError(e, input) ?? e;
    }
    await writeOutput(report, (v.json ? jsonForTerminal({ input, model, preview: p }) : formatPreview(p, { input, model })) + '\n', toStdout ? 'the report to stderr' : 'the report to stdout');
    return EXIT.OK;
  }
  if (offline && typeof cc.offlineSummarizer !== 'function') {
    throw new CliError('compact: this build of the library has no offlineSummarizer; pass --api-key', EXIT.INTERNAL, { code: 'UNSUPPORTED' });
  }
  const out = /** @type {OutputPlan} */ (plan); // not null: --preview returned above

  /** @type {CompactJob} */
  const job = {
    input,
    model: v.model,
    offline,
    apiKey,
    baseURL,
    maxSummaryTokens,
    instructions: v.instructions,
    appendMissing: Boolean(v['append-missing']),
    freshFiles: Boolean(v['fresh-files']),
    history: !v['no-history'],
  };
  const mode = v['no-progress'] ? 'off' : v.progress ? (io.stderr.isTTY ? 'tty' : 'plain') : io.stderr.isTTY ? 'tty' : 'off';
  const progress = progressDisplay(io.stderr, mode);

  // Ctrl-C (SIGINT) and SIGTERM: the compaction runs in a worker thread, so this thread stays
  // free to handle them whatever the compaction does (the offline summarizer is synchronous).
  // Until the output is complete, a signal stops the worker, removes the temporary file and
  // exits 130: the input and any existing output are untouched (the output file is only ever
  // replaced by the final rename). Once the output is complete, the run finishes normally.
  /** @type {WriteState} */
  const state = { tmp: null, committed: false, streaming: false };
  /** @type {{terminate(): unknown} | null} */
  let worker = null;
  const onSignal = () => {
    if (state.committed) return;
    void worker?.terminate();
    if (state.tmp) rmSync(state.tmp, { force: true });
    progress.finish(true);
    io.stderr.write(
      state.streaming ? `context-compaction: interrupted: the output ${out.path === '-' ? 'on stdout' : out.path} may be incomplete\n` : 'context-compaction: interrupted: nothing was written\n',
    );
    process.exit(EXIT.INTERRUPTED);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    /** @type {ProgressEvent | null} the compaction's `done`, shown once the output is written */
    let doneEvent = null;
    const shown = {
      /** @param {ProgressEvent} e */
      onProgress: (e) => (e.phase === 'done' ? (doneEvent = e) : progress.onProgress(e)),
      /** @param {string} t */
      onText: (t) => progress.onText(t),
    };
    const done = await runCompactJob(job, io.env, shown, (w) => (worker = w));
    worker = null;
    progress.onProgress({ phase: 'writing', detail: out.path === '-' ? 'stdout' : out.path });
    /** @type {(string | Uint8Array)[]} */
    const pieces = [];
    if (job.history) {
      pieces.push(done.inputBytes);
      if (done.inputBytes.length > 0 && done.inputBytes[done.inputBytes.length - 1] !== 0x0a) pieces.push('\n');
    }
    pieces.push(done.newText);
    if (out.kind === 'file') await writeFileAtomic(out, pieces, state);
    else await writeStream(out, pieces, io.stdout, state);
    if (doneEvent) progress.onProgress(doneEvent);
    progress.finish();
    const r = done.report;
    r.output = out.path;
    r.streamedCharacters = progress.chars;
    await writeOutput(report, (v.json ? jsonForTerminal(r) : formatCompaction(r)) + '\n', toStdout ? 'the report to stderr' : 'the report to stdout');
    return EXIT.OK;
  } catch (e) {
    progress.finish(true);
    throw e;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * Reads what a compaction needs from the parsed transcript: the model (--model, else the
 * transcript's, else DEFAULT_MODEL offline), the read-file state; throws CliError when the API
 * needs a model the transcript does not name, or when there is nothing to compact.
 * @param {string} input named in the errors
 * @param {TranscriptLine[]} lines
 * @param {string | undefined} modelOption --model
 * @param {boolean} offline
 */
function prepareCompaction(input, lines, modelOption, offline) {
  // A sub-agent's own file (every line isSidechain) is compacted as its own conversation: its
  // model and read files are its lines', and the library writes the new lines as the agent's
  // (isSidechain, agentId). The lines compacted are the file's own.
  const own = asOwnConversation(lines).lines;
  const fromTranscript = transcriptModel(own);
  const model = modelOption ?? fromTranscript ?? DEFAULT_MODEL;
  /** @type {'option' | 'transcript' | 'default'} */
  const modelFrom = modelOption ? 'option' : fromTranscript ? 'transcript' : 'default';
  if (!offline && !modelOption && !fromTranscript) {
    throw usageError('compact: the transcript names no model; pass --model for the API');
  }
  if (!own.some((l) => (l.type === 'user' || l.type === 'assistant') && l.isSidechain !== true)) {
    throw new CliError(`compaction failed (NOTHING_TO_COMPACT): ${input}: it has no user or assistant line; nothing was written`, EXIT.COMPACTION, { code: 'NOTHING_TO_COMPACT' });
  }
  return { lines, model, modelFrom, readFileState: readFileStateFromTranscript(own) };
}

// ---- compact: the compaction in a worker thread -----------------------------------------------------

/**
 * What the worker thread is asked to do: everything `compact` does between its checks and the
 * write (read and parse the transcript, summarize, build the post-compaction lines, measure).
 * @typedef {{input: string, model: string | undefined, offline: boolean, apiKey: string | undefined,
 *   baseURL: string, maxSummaryTokens: number | undefined, instructions: string | undefined,
 *   appendMissing: boolean, freshFiles: boolean, history: boolean}} CompactJob
 */
/**
 * What the worker answers: the input's bytes as read (written back unchanged ahead of the new
 * lines), the new lines as JSONL, and the report (its `output` and `streamedCharacters` are
 * filled in by the main thread).
 * @typedef {{inputBytes: Uint8Array, newText: string, report: CompactionReport}} CompactDone
 */
/**
 * Messages from the worker thread.
 * @typedef {{type: 'progress', event: ProgressEvent} | {type: 'text', text: string}
 *   | {type: 'done', done: CompactDone}
 *   | {type: 'error', error: {message: string, exitCode: number, code: string} | null, stack?: string}} JobMessage
 */

/** The workerData key that makes this module run a compaction job when loaded as a worker. */
const JOB_KEY = 'contextCompactionCliJob';

/**
 * Runs `job` in a worker thread (this module, loaded again there); resolves with its answer,
 * rejects with the CliError it reported (or an Error carrying its stack).
 * @param {CompactJob} job
 * @param {Record<string, string | undefined>} env the worker's environment (the library reads its settings there)
 * @param {{onProgress(e: ProgressEvent): unknown, onText(t: string): unknown}} progress
 * @param {(worker: Worker) => void} started called with the worker (the interrupt handler terminates it)
 * @returns {Promise<CompactDone>}
 */
function runCompactJob(job, env, progress, started) {
  return new Promise((ok, fail) => {
    /** @type {Record<string, string>} */
    const workerEnv = {};
    for (const [k, val] of Object.entries(env)) if (val !== undefined) workerEnv[k] = val;
    const worker = new Worker(new URL(import.meta.url), { workerData: { [JOB_KEY]: job }, env: workerEnv, stdout: false, stderr: false });
    started(worker);
    let settled = false;
    worker.on('message', (/** @type {JobMessage} */ m) => {
      if (m.type === 'progress') {
        progress.onProgress(m.event);
      } else if (m.type === 'text') {
        progress.onText(m.text);
      } else if (m.type === 'done') {
        settled = true;
        ok(m.done);
        void worker.terminate();
      } else if (m.type === 'error') {
        settled = true;
        fail(m.error ? new CliError(m.error.message, m.error.exitCode, { code: m.error.code }) : Object.assign(new Error('the compaction failed'), { stack: m.stack }));
        void worker.terminate();
      }
    });
    worker.on('error', (e) => {
      if (!settled) fail(e);
      settled = true;
    });
    worker.on('exit', (code) => {
      if (!settled) fail(new Error(`the compaction's worker thread exited with code ${code} before answering`));
      settled = true;
    });
  });
}

/**
 * The worker thread's side: runs the job, posts progress, then the answer or the error.
 * @param {CompactJob} job
 * @param {import('node:worker_threads').MessagePort} port
 */
async function compactJobInWorker(job, port) {
  /** @param {JobMessage} m @param {ArrayBuffer[]} [transfer] */
  const post = (m, transfer) => port.postMessage(m, transfer);
  try {
    const bytes = readInputBytes(job.input);
    const text = transcriptText(bytes, job.input);
    const { lines, model, modelFrom, readFileState } = prepareCompaction(job.input, parseTranscriptText(text, job.input), job.model, job.offline);
    const summarize = job.offline
      ? cc.offlineSummarizer(job.maxSummaryTokens === undefined ? {} : { maxTokens: job.maxSummaryTokens })
      : cc.anthropicSummarizer({ apiKey: /** @type {string} */ (job.apiKey), baseURL: job.baseURL });
    /** @type {CompactContext} */
    const context = {
      model,
      summarize,
      readFileState,
      onProgress: (event) => post({ type: 'progress', event }),
      onText: (t) => post({ type: 'text', text: t }),
    };
    if (job.freshFiles) {
      const snapshot = new Map(readFileState);
      context.readFile = async (path) => (await freshFileText(path)) ?? snapshot.get(path)?.content ?? null;
    }
    /** @type {{customInstructions?: string, appendMissing?: boolean}} */
    const options = {};
    if (job.instructions !== undefined) options.customInstructions = job.instructions;
    if (job.appendMissing) options.appendMissing = true;
    let result;
    try {
      result = await cc.compactConversation(lines, context, options);
    } catch (e) {
      throw compactionError(e, job.input) ?? e;
    }
    const post_ = cc.buildPostCompactMessages(result);
    const newText = cc.serializeTranscript(post_);
    const restoredFiles = result.restoredFiles.map((f) => ({ path: f.path, tokens: f.tokens, truncated: f.truncated }));
    /** @type {CompactionReport} */
    const report = {
      input: job.input,
      output: null,
      history: job.history,
      model,
      modelFrom,
      summarizer: job.offline ? { kind: 'offline' } : { kind: 'anthropic', baseURL: job.baseURL },
      tokensBefore: result.preCompactTokenCount,
      tokensAfter: result.truePostCompactTokenCount,
      calibration: result.calibration,
      postCompactTokenCount: result.postCompactTokenCount,
      summaryTokens: cc.roughTokenCountEstimation(result.summary),
      streamedCharacters: 0,
      restoredFiles,
      restoredFileTokens: restoredFiles.reduce((a, f) => a + f.tokens, 0),
      restoredSkills: result.restoredSkills.map((s) => ({ name: s.name, tokens: s.tokens, truncated: s.truncated })),
      lossReport: result.lossReport ?? null,
      appendMissing: job.appendMissing,
      compactionUsage: result.compactionUsage,
      ptlRetries: result.ptlRetries,
      transientRetries: result.transientRetries,
      warningStateAfter: cc.calculateTokenWarningState(result.truePostCompactTokenCount, model),
      linesWritten: { history: job.history ? lines.length : 0, new: post_.length },
    };
    // The input's bytes go back without a copy (their own ArrayBuffer is transferred).
    const own = bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length ? bytes : Buffer.from(bytes);
    const inputBytes = new Uint8Array(own.buffer, own.byteOffset, own.length);
    post({ type: 'done', done: { inputBytes, newText, report } }, [/** @type {ArrayBuffer} */ (inputBytes.buffer)]);
  } catch (err) {
    if (err instanceof CliError) {
      post({ type: 'error', error: { message: err.message, exitCode: err.exitCode, code: err.code } });
    } else {
      const e = /** @type {{stack?: unknown} | null | undefined} */ (err);
      post({ type: 'error', error: null, stack: String((e && e.stack) ?? err) });
    }
  }
}


/** The most bytes --fresh-files reads of a file: restoration keeps the head of a file, 5,000
 * tokens at most (POST_COMPACT_MAX_TOKENS_PER_FILE, about 20 KB), so more is never used. */
const FRESH_FILE_MAX_BYTES = 1 << 20;

/**
 * A file's text as it is on disk now, for --fresh-files; null when it is not a regular file
 * or cannot be read (the content as last seen is then restored). The path comes from the
 * transcript: a FIFO there would block the open (and the worker's exit, Ctrl-C included) until
 * a writer came, and a device such as /dev/zero never ends; so the file is opened without
 * blocking, checked to be a regular file, and only its head is read.
 * @param {string} path
 * @returns {Promise<string | null>}
 */
export async function freshFileText(path) {
  /** @type {import('node:fs/promises').FileHandle | undefined} */
  let h;
  try {
    h = await openFile(path, fsConstants.O_RDONLY | (fsConstants.O_NONBLOCK ?? 0));
    if (!(await h.stat()).isFile()) return null;
    const buf = Buffer.allocUnsafe(FRESH_FILE_MAX_BYTES);
    let n = 0;
    for (;;) {
      const { bytesRead } = await h.read(buf, n, buf.length - n, null);
      if (bytesRead === 0) break;
      n += bytesRead;
      if (n === buf.length) break;
    }
    // As readFile(path, 'utf8') reads it (a BOM kept); a head cut inside a character leaves
    // that character out (`stream`), not a U+FFFD.
    return new TextDecoder('utf-8', { ignoreBOM: true }).decode(buf.subarray(0, n), { stream: n === buf.length });
  } catch {
    return null;
  } finally {
    await h?.close().catch(() => {});
  }
}

/** The model used when neither --model nor the transcript names one (offline only). */
export const DEFAULT_MODEL = 'claude-sonnet-4-5';

/**
 * Runs the command line; resolves with the exit code. Expected failures are printed as one
 * line on stderr (`context-compaction: …`); unexpected ones with their stack.
 * @param {string[]} argv The arguments after the script name.
 * @param {CliIo} io
 */
export async function run(argv, io) {
  for (const stream of [io.stdout, io.stderr]) {
    if (typeof stream?.on === 'function' && !stream.listeners('error').includes(writeFailureHandledWhereMade)) stream.on('error', writeFailureHandledWhereMade);
  }
  try {
    const [command, ...rest] = argv;
    if (command === undefined) throw usageError('which command? (analyze, simulate or compact)');
    if (command === '-h' || command === '--help' || command === 'help') {
      await writeOutput(io.stdout, HELP, 'stdout');
      return EXIT.OK;
    }
    if (command === '--version' || command === '-v' || command === 'version') {
      await writeOutput(io.stdout, packageVersion() + '\n', 'stdout');
      return EXIT.OK;
    }
    if (command === 'analyze') return await analyzeCommand(rest, io);
    if (command === 'simulate') return await simulateCommand(rest, io);
    if (command === 'compact') return await compactCommand(rest, io);
    throw usageError(
      command.startsWith('-') ? `unknown option ${command} (options come after the command)` : `unknown command ${JSON.stringify(command)} (analyze, simulate or compact)`,
    );
  } catch (e) {
    if (e instanceof CliError) {
      io.stderr.write(`context-compaction: ${escapeTerminal(e.message)}\n`);
      return e.exitCode;
    }
    const stack = e && typeof e === 'object' && 'stack' in e ? e.stack : undefined;
    io.stderr.write(`context-compaction: unexpected failure: ${escapeTerminal(String(stack ? stack : e))}\n`);
    return EXIT.INTERNAL;
  }
}

// Loaded as the worker thread of a `compact` run (runCompactJob): run its job, once every
// declaration of this module is initialised.
if (!isMainThread && parentPort && workerData && typeof workerData === 'object' && JOB_KEY in workerData) {
  const port = parentPort;
  setImmediate(() => void compactJobInWorker(workerData[JOB_KEY], port));
}
