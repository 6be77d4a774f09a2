#!/usr/bin/env node
// Runs the compaction pipeline on the real Claude Code session
// ../shared/transcripts/cc_long_autocompact_4d5611e5.jsonl, cut just before its real
// compact_boundary line, and compares the outcome with what really happened in that session.
//
// The summarizer returns a fixed summary: the real summary text of the session (the
// isCompactSummary line right after the boundary, ~15.7K characters, ~4K tokens), so the
// summarizer takes no time and the measured time is the pipeline's own. readFileState is
// rebuilt from the Read tool calls of those lines (path → the matching tool_result's text,
// timestamp = line index).
//
//   node scripts/pipeline-report.mjs [--json] [--runs N]
//
// Needs the built package (bash scripts/build.sh).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as cc from '../pkg/node.js';

const TRANSCRIPTS = fileURLToPath(new URL('../../shared/transcripts/', import.meta.url));
const FILE = `${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`;
const AGENT_FILE = `${TRANSCRIPTS}cc_long_autocompact_4d5611e5.agent-acompact-e1f845.jsonl`;
const MODEL = 'claude-opus-4-6';

const args = process.argv.slice(2);
const asJson = args.includes('--json');
const runsArg = args.indexOf('--runs');
const RUNS = runsArg >= 0 ? Math.max(1, Number(args[runsArg + 1]) || 1) : 5;

cc.setEnvironmentDefaults({});

// ---- The session -----------------------------------------------------------------------------

const lines = cc.parseTranscript(readFileSync(FILE, 'utf8'));
const boundaryIndex = lines.findIndex((l) => l.type === 'system' && l.subtype === 'compact_boundary');
if (boundaryIndex < 0) throw new Error(`${FILE}: no compact_boundary line`);
const before = lines.slice(0, boundaryIndex);
const boundary = lines[boundaryIndex];
const summaryLine = lines[boundaryIndex + 1];
const summaryText = typeof summaryLine.message.content === 'string'
  ? summaryLine.message.content
  : summaryLine.message.content.map((b) => b.text ?? '').join('');

const contextOf = (u) => (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
const firstAssistantAfter = (from) => lines.slice(from).find((l) => l.type === 'assistant' && !l.isSidechain && l.message?.usage);
const firstAfter = firstAssistantAfter(boundaryIndex);
const realFirstRequestAfter = contextOf(firstAfter.message.usage);
// What every request carries besides the messages (system prompt, tools): the session's first
// request minus the library's estimate of the lines before it.
const firstIndex = lines.findIndex((l) => l.type === 'assistant' && !l.isSidechain && l.message?.usage);
const fixedOverhead = contextOf(lines[firstIndex].message.usage) - cc.tokenCountWithEstimation(lines.slice(0, firstIndex));
let realSummaryCallInput = null;
try {
  for (const l of readFileSync(AGENT_FILE, 'utf8').split('\n')) {
    if (!l.trim()) continue;
    const d = JSON.parse(l);
    if (d.type === 'assistant' && d.message?.usage) realSummaryCallInput = contextOf(d.message.usage);
  }
} catch {
  // The companion file is optional for this report.
}

function readFileState() {
  const calls = new Map();
  const state = new Map();
  before.forEach((l, idx) => {
    const content = l?.message?.content;
    if (!Array.isArray(content)) return;
    for (const b of content) {
      if (b?.type === 'tool_use' && b.name === 'Read' && b.input?.file_path) calls.set(b.id, b.input.file_path);
      if (b?.type === 'tool_result' && calls.has(b.tool_use_id) && b.is_error !== true) {
        const text = typeof b.content === 'string' ? b.content : (b.content ?? []).map((x) => x.text ?? '').join('');
        const path = calls.get(b.tool_use_id);
        state.delete(path);
        state.set(path, { content: text, timestamp: idx });
      }
    }
  });
  return state;
}

// ---- Runs ------------------------------------------------------------------------------------

/** A context whose summarizer returns the fixed summary and measures its own time. */
function makeContext(extra = {}) {
  const timing = { summarizerMs: 0, calls: 0 };
  const context = {
    model: MODEL,
    readFileState: readFileState(),
    summarize: async () => {
      const t0 = performance.now();
      timing.calls++;
      const answer = { content: [{ type: 'text', text: `<summary>\n${summaryText}\n</summary>` }], stop_reason: 'end_turn' };
      timing.summarizerMs += performance.now() - t0;
      return answer;
    },
    ...extra,
  };
  return { context, timing };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
};

async function measure(label, run, extra) {
  const times = [];
  let last;
  let timingLast;
  for (let i = 0; i < RUNS; i++) {
    const { context, timing } = makeContext(extra);
    const rfsSize = context.readFileState.size;
    const t0 = performance.now();
    const out = await run(context);
    const total = performance.now() - t0;
    times.push(total - timing.summarizerMs);
    last = { out, rfsSize, rfsAfter: context.readFileState.size };
    timingLast = timing;
  }
  const r = last.out.compactionResult ?? last.out;
  const post = cc.buildPostCompactMessages(r);
  return {
    label,
    summarizerCalls: timingLast.calls,
    wasCompacted: last.out.wasCompacted ?? true,
    error: last.out.error ? `${last.out.error.code}: ${last.out.error.message}` : undefined,
    fromSessionMemory: r.fromSessionMemory,
    trigger: r.trigger,
    preCompactTokenCount: r.preCompactTokenCount,
    truePostCompactTokenCount: r.truePostCompactTokenCount,
    postCompactTokenCount: r.postCompactTokenCount,
    summaryTokens: cc.roughTokenCountEstimation(r.summaryMessages.map((m) => (typeof m.message?.content === 'string' ? m.message.content : JSON.stringify(m.message?.content ?? m.content))).join('')),
    keptMessages: r.messagesToKeep.length,
    postCompactMessages: post.length,
    readFileStateEntries: last.rfsSize,
    readFileStateAfter: last.rfsAfter,
    restoredFiles: r.restoredFiles.map((f) => ({ path: f.path, tokens: f.tokens, truncated: f.truncated })),
    restoredFileTokens: r.restoredFiles.reduce((n, f) => n + f.tokens, 0),
    predictedFirstRequestAfter: fixedOverhead + r.truePostCompactTokenCount,
    pipelineMs: { first: round(times[0]), median: round(median(times)), runs: RUNS },
  };
}

const round = (x) => Math.round(x * 100) / 100;

const results = [];
results.push(await measure('compactConversation (auto trigger)', (ctx) => cc.compactConversation(before, ctx, { isAutoCompact: true })));
results.push(await measure('autoCompactIfNeeded', (ctx) => cc.autoCompactIfNeeded(before, ctx, { consecutiveFailures: 0 })));
results.push(await measure('autoCompactIfNeeded + sessionMemory (the real summary as memory)', (ctx) => cc.autoCompactIfNeeded(before, ctx, { consecutiveFailures: 0 }), { sessionMemory: summaryText }));

// Why session memory did (not) apply, straight from trySessionMemoryCompaction.
let sessionMemoryOutcome;
try {
  const r = await cc.trySessionMemoryCompaction(before, { model: MODEL, sessionMemory: summaryText });
  sessionMemoryOutcome = { applied: true, keptMessages: r.messagesToKeep.length, truePostCompactTokenCount: r.truePostCompactTokenCount };
} catch (e) {
  sessionMemoryOutcome = { applied: false, code: e.code, message: e.message };
}
results[2].sessionMemoryOutcome = sessionMemoryOutcome;

const real = {
  boundaryLine: boundaryIndex,
  linesBefore: before.length,
  boundaryPreTokens: boundary.compactMetadata?.preTokens,
  libraryCountBefore: cc.tokenCountWithEstimation(before),
  autoCompactThreshold: cc.getAutoCompactThreshold(MODEL),
  realSummaryChars: summaryText.length,
  realSummaryTokens: cc.roughTokenCountEstimation(summaryText),
  realSummaryCallInputTokens: realSummaryCallInput,
  realFirstRequestAfter,
  fixedOverheadEstimate: fixedOverhead,
};

if (asJson) {
  console.log(JSON.stringify({ transcript: FILE, model: MODEL, real, results }, null, 2));
} else {
  const n = (x) => (typeof x === 'number' ? x.toLocaleString('en-US') : String(x));
  console.log(`Pipeline report — ${FILE.split('/').pop()} cut before line ${boundaryIndex} (compact_boundary), model ${MODEL}`);
  console.log('');
  console.log('The real session');
  console.log(`  boundary compactMetadata.preTokens      ${n(real.boundaryPreTokens)}`);
  console.log(`  library count of the lines before it    ${n(real.libraryCountBefore)} (auto-compact threshold ${n(real.autoCompactThreshold)})`);
  console.log(`  real summary                            ${n(real.realSummaryChars)} chars ≈ ${n(real.realSummaryTokens)} tokens`);
  if (realSummaryCallInput !== null) console.log(`  real summary call input                 ${n(realSummaryCallInput)} tokens`);
  console.log(`  first request after the real compaction ${n(realFirstRequestAfter)} tokens`);
  console.log(`  system prompt + tools (estimated)       ${n(fixedOverhead)} tokens (first request of the session − its messages)`);
  for (const r of results) {
    console.log('');
    console.log(r.label);
    if (r.error) console.log(`  error                                   ${r.error}`);
    if (r.sessionMemoryOutcome) {
      const o = r.sessionMemoryOutcome;
      console.log(`  trySessionMemoryCompaction alone        ${o.applied ? `applied: ${o.keptMessages} kept, ${n(o.truePostCompactTokenCount)} tokens` : `${o.code}: ${o.message}`}`);
    }
    console.log(`  wasCompacted / fromSessionMemory        ${r.wasCompacted} / ${r.fromSessionMemory}   (summarizer calls: ${r.summarizerCalls}, trigger ${r.trigger})`);
    console.log(`  preCompactTokenCount                    ${n(r.preCompactTokenCount)}`);
    console.log(`  truePostCompactTokenCount               ${n(r.truePostCompactTokenCount)}   (summary message ≈ ${n(r.summaryTokens)}, restored files ${n(r.restoredFileTokens)}, kept messages ${r.keptMessages})`);
    console.log(`  postCompactTokenCount                   ${n(r.postCompactTokenCount)}   (the summary call: estimated, the summarizer gave no usage)`);
    console.log(`  predicted first request after           ${n(r.predictedFirstRequestAfter)}   vs real ${n(realFirstRequestAfter)} (${pct(r.predictedFirstRequestAfter, realFirstRequestAfter)})`);
    console.log(`  read-file state                         ${r.readFileStateEntries} entries → ${r.readFileStateAfter} after`);
    console.log(`  restored files (${r.restoredFiles.length}):`);
    for (const f of r.restoredFiles) console.log(`    ${String(f.tokens).padStart(5)} tokens${f.truncated ? ' (truncated)' : '            '}  ${f.path}`);
    console.log(`  pipeline wall time without summarizer   first ${r.pipelineMs.first} ms, median ${r.pipelineMs.median} ms over ${r.pipelineMs.runs} runs`);
  }
}

function pct(a, b) {
  const d = ((a - b) / b) * 100;
  return `${d >= 0 ? '+' : ''}${d.toFixed(1)}%`;
}
