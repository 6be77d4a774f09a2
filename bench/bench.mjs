#!/usr/bin/env node
// Benchmark of the context-compaction package against plain JS and other libraries, measured
// side by side in one process on the real transcripts in ../shared/transcripts.
// Usage: node bench/bench.mjs [--json] [--view=active|whole] [--batches=N] [--batch-ms=N]
// See bench/README.md for what each row means.

import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

import * as cc from '../pkg/node.js';
import { largeSession, measureAbortDelays } from './abort-latency.mjs';
// The same module instance node.js initialised: initSync() returns the existing exports.
import { initSync } from '../pkg/context_compaction.js';
import { pruneMessages } from 'ai';
import { trimMessages } from '@langchain/core/messages';

import * as ref from './reference.mjs';
import { measureDurable } from './durable.mjs';
import { measureSize } from './size.mjs';
import { measureAccuracy } from './accuracy.mjs';
import { activeStart, buildApiView, toAiSdk, toLangChain } from './formats.mjs';
import { toAiSdkUi, toOpenAiChat, toOpenAiResponses } from '../tests/node/helpers/shapes.mjs';

// ---------------------------------------------------------------------------------------------
// Options and inputs

const args = process.argv.slice(2);
const flag = (name, dflt) => {
  const a = args.find((x) => x === `--${name}` || x.startsWith(`--${name}=`));
  if (a === undefined) return dflt;
  return a.includes('=') ? a.slice(a.indexOf('=') + 1) : true;
};
const JSON_OUT = flag('json', false) === true;
const VIEW = flag('view', 'active');
const BATCHES = Number(flag('batches', 21));
const BATCH_MS = Number(flag('batch-ms', 25));
const WARMUP_MS = Number(flag('warmup-ms', 300));
if (VIEW !== 'active' && VIEW !== 'whole') throw new Error('--view must be active or whole');

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const pkgDir = path.join(root, 'pkg');
const transcriptsDir = path.resolve(root, '../shared/transcripts');
const TRANSCRIPT = 'cc_long_autocompact_4d5611e5.jsonl';
const MODEL = 'claude-opus-4-6';
const KEEP_RECENT = cc.constants.MICROCOMPACT_KEEP_RECENT;
const PLACEHOLDER = cc.constants.CLEARED_TOOL_RESULT_PLACEHOLDER;
// SPEC §10's compactable tools, as microCompact uses them by default.
const COMPACTABLE = ['Read', 'Bash', 'Shell', 'shell', 'PowerShell', 'Grep', 'Glob', 'WebSearch',
  'WebFetch', 'Edit', 'Write'];

const log = JSON_OUT ? () => {} : (...a) => console.log(...a);
const problems = []; // outcome checks that failed: the comparison is not like for like

const ENV_OVERRIDES = ['DISABLE_COMPACT', 'DISABLE_AUTO_COMPACT', 'CLAUDE_AUTOCOMPACT_PCT_OVERRIDE',
  'CLAUDE_CODE_AUTO_COMPACT_WINDOW'].filter((k) => process.env[k] !== undefined);

const versionOf = (name) =>
  JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')).version;

// WASM memory. node.js called initSync({module}) at import; calling initSync() again on the
// same module returns that instance's exports, whose `memory` is its linear memory.
const memoryOf = (exports) => {
  if (!(exports?.memory instanceof WebAssembly.Memory)) {
    throw new Error('cannot reach the wasm memory through initSync() of pkg/context_compaction.js');
  }
  return () => exports.memory.buffer.byteLength;
};
const memBytes = memoryOf(initSync());
// The growth targets are measured on a second, fresh instance: the glue imported again under
// another URL is a separate module with its own instance, which never ran parseTranscript (whose
// freed heap would otherwise absorb any later growth and hide it).
const fresh = await import('../pkg/context_compaction.js?fresh-instance');
const wasmBytes = readFileSync(path.join(pkgDir, 'context_compaction_bg.wasm'));
const freshMemBytes = memoryOf(fresh.initSync({ module: wasmBytes }));
fresh.setEnvironmentDefaults(process.env);

const jsonl = readFileSync(path.join(transcriptsDir, TRANSCRIPT), 'utf8');
const memBeforeParse = memBytes();
const lines = cc.parseTranscript(jsonl);
const memAfterParse = memBytes();
const linesJsonBytes = Buffer.byteLength(JSON.stringify(lines));

const viewFrom = VIEW === 'active' ? activeStart(lines) : 0;
const apiView = buildApiView(lines, viewFrom);
const apiJsonBytes = Buffer.byteLength(JSON.stringify(apiView));
const aiMessages = toAiSdk(apiView);
const lcMessages = toLangChain(apiView);

// ---------------------------------------------------------------------------------------------
// Timing: every case of a group is warmed up, then the cases run one batch each in turn,
// BATCHES times (interleaved, so drift and GC pressure hit all of them alike). A batch runs a
// calibrated number of calls taking about BATCH_MS; the result is the median per-call time.

let sink; // keeps results alive so no call can be optimised away

function calibrate(c) {
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (n < 5 || t - t0 < WARMUP_MS) {
    sink = c.fn();
    n++;
    t = performance.now();
  }
  return Math.max(1, Math.round(BATCH_MS / ((t - t0) / n)));
}

async function calibrateAsync(c) {
  let n = 0;
  const t0 = performance.now();
  let t = t0;
  while (n < 5 || t - t0 < WARMUP_MS) {
    sink = await c.fn();
    n++;
    t = performance.now();
  }
  return Math.max(1, Math.round(BATCH_MS / ((t - t0) / n)));
}

function batch(fn, n) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) sink = fn();
  return (performance.now() - t0) / n;
}

async function batchAsync(fn, n) {
  const t0 = performance.now();
  for (let i = 0; i < n; i++) sink = await fn();
  return (performance.now() - t0) / n;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.round(q * (s.length - 1))))];
};

/**
 * Times a group of cases `{key, fn, async?}`; returns {key: {ms, p25, p75, calls}}. A case may
 * instead bring its own `calibrate()` (returns the calls per batch) and `batch(n)` (runs n
 * calls, returns the mean ms per call): the per-turn cases below, which rebuild their state
 * untimed between short timed runs.
 */
async function timeGroup(cases) {
  for (const c of cases) c.n = c.calibrate ? c.calibrate() : c.async ? await calibrateAsync(c) : calibrate(c);
  for (const c of cases) c.samples = [];
  for (let b = 0; b < BATCHES; b++) {
    for (const c of cases) {
      c.samples.push(c.batch ? c.batch(c.n) : c.async ? await batchAsync(c.fn, c.n) : batch(c.fn, c.n));
    }
  }
  const out = {};
  for (const c of cases) {
    out[c.key] = {
      ms: median(c.samples),
      p25: quantile(c.samples, 0.25),
      p75: quantile(c.samples, 0.75),
      calls: c.n * BATCHES,
      samples: c.samples,
    };
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// 1. Per-turn check: package vs the plain-JS reference, on the transcript lines and the API view

const perTurnInputs = { lines, apiView };
const agreement = {};
for (const [name, msgs] of Object.entries(perTurnInputs)) {
  const pkgCount = cc.tokenCountWithEstimation(msgs);
  const refCount = ref.tokenCountWithEstimation(msgs);
  const pkgShould = cc.shouldAutoCompact(msgs, MODEL);
  const refShould = ref.shouldAutoCompact(msgs, MODEL);
  agreement[name] = { pkgCount, refCount, pkgShould, refShould };
  if (pkgCount !== refCount) problems.push(`${name}: tokenCountWithEstimation package ${pkgCount} ≠ reference ${refCount}`);
  if (pkgShould !== refShould) problems.push(`${name}: shouldAutoCompact package ${pkgShould} ≠ reference ${refShould}`);
}
// The same conversation in the other shapes the package reads (issue 10; formats.mjs and the
// tests' converters): the count within 5 % of the API view's, and the same decision.
const uiMessages = toAiSdkUi(apiView);
const chatMessages = toOpenAiChat(apiView);
const responsesItems = toOpenAiResponses(apiView);
const shapeInputs = { ai: aiMessages, ui: uiMessages, chat: chatMessages, responses: responsesItems, lc: lcMessages };
for (const [name, msgs] of Object.entries(shapeInputs)) {
  const count = cc.tokenCountWithEstimation(msgs);
  const base = agreement.apiView.pkgCount;
  agreement[name] = { pkgCount: count, refCount: base, pkgShould: cc.shouldAutoCompact(msgs, MODEL), refShould: agreement.apiView.pkgShould };
  if (Math.abs(count - base) > 0.05 * base) problems.push(`${name}: tokenCountWithEstimation ${count} is more than 5 % from the API view's ${base}`);
  if (agreement[name].pkgShould !== agreement[name].refShould) problems.push(`${name}: shouldAutoCompact differs from the API view's`);
}
if (ENV_OVERRIDES.length) {
  problems.push(`environment overrides set (${ENV_OVERRIDES.join(', ')}): the reference ignores them`);
}

// A Compactor holding the same lines: its per-render check (warningState with no new message).
// The same lines and the same plus one user line after them, asked in turn: a conversation
// that changes on every call (the core's memo of the last record never answers).
const linesPlus = lines.concat([{
  type: 'user', uuid: 'bench-next', parentUuid: lines.at(-1).uuid, isSidechain: false,
  message: { role: 'user', content: [{ type: 'text', text: 'And the tests?' }] },
}]);
if (cc.tokenCountWithEstimation(linesPlus) !== ref.tokenCountWithEstimation(linesPlus)) problems.push('linesPlus: package and reference counts differ');
let turnFlip = false;
const alternate = (f) => () => f((turnFlip = !turnFlip) ? linesPlus : lines);
const readCompactor = new cc.Compactor({ model: MODEL, messages: lines });
if (readCompactor.tokenCount() !== cc.tokenCountWithEstimation(lines)) problems.push('Compactor count differs from the stateless count on the lines');
const memBeforePerTurn = memBytes();
const perTurn = await timeGroup([
  { key: 'pkg.compactor.warningState', fn: () => readCompactor.warningState() },
  { key: 'pkg.tokenCount.lines', fn: () => cc.tokenCountWithEstimation(lines) },
  { key: 'ref.tokenCount.lines', fn: () => ref.tokenCountWithEstimation(lines) },
  { key: 'pkg.should.lines', fn: () => cc.shouldAutoCompact(lines, MODEL) },
  { key: 'ref.should.lines', fn: () => ref.shouldAutoCompact(lines, MODEL) },
  { key: 'pkg.tokenCount.api', fn: () => cc.tokenCountWithEstimation(apiView) },
  { key: 'ref.tokenCount.api', fn: () => ref.tokenCountWithEstimation(apiView) },
  { key: 'pkg.should.api', fn: () => cc.shouldAutoCompact(apiView, MODEL) },
  { key: 'ref.should.api', fn: () => ref.shouldAutoCompact(apiView, MODEL) },
  { key: 'pkg.should.ai', fn: () => cc.shouldAutoCompact(aiMessages, MODEL) },
  { key: 'pkg.should.ui', fn: () => cc.shouldAutoCompact(uiMessages, MODEL) },
  { key: 'pkg.should.chat', fn: () => cc.shouldAutoCompact(chatMessages, MODEL) },
  { key: 'pkg.should.responses', fn: () => cc.shouldAutoCompact(responsesItems, MODEL) },
  { key: 'pkg.should.lc', fn: () => cc.shouldAutoCompact(lcMessages, MODEL) },
  { key: 'pkg.should.changing', fn: alternate((m) => cc.shouldAutoCompact(m, MODEL)) },
  { key: 'ref.should.changing', fn: alternate((m) => ref.shouldAutoCompact(m, MODEL)) },
]);
const memAfterPerTurn = memBytes();

// ---------------------------------------------------------------------------------------------
// 2. microCompact vs pruneMessages / trimMessages / JSON.stringify, same conversation

// microCompact's outcome, and checks that it is what SPEC §10 asks for.
const apiViewJsonBefore = JSON.stringify(apiView);
const mc = cc.microCompact(apiView);
if (JSON.stringify(apiView) !== apiViewJsonBefore) problems.push('microCompact mutated its input');
if (mc.messages.length !== apiView.length) problems.push('microCompact changed the message count');
const resultBlocks = new Map(); // tool_use_id → tool_result block (input)
for (const m of apiView) {
  if (m.role === 'user' && Array.isArray(m.content)) {
    for (const b of m.content) if (b.type === 'tool_result') resultBlocks.set(b.tool_use_id, b);
  }
}
{
  const cleared = new Set(mc.clearedToolUseIds);
  let reused = 0;
  let placeholders = 0;
  mc.messages.forEach((m, i) => {
    if (m === apiView[i]) reused++;
    if (m.role === 'user' && Array.isArray(m.content)) {
      for (const b of m.content) {
        if (b.type === 'tool_result' && cleared.has(b.tool_use_id) && b.content === PLACEHOLDER) placeholders++;
      }
    }
  });
  if (placeholders !== cleared.size) problems.push(`microCompact: ${cleared.size} ids cleared but ${placeholders} placeholders`);
  mc.reusedMessages = reused;
}

// pruneMessages configured to match: prune the compactable tools' calls and results outside
// the last K messages, with K the smallest that keeps the KEEP_RECENT most recent compactable
// results (what microCompact's keepRecent keeps).
function matchedKeepCount(msgs) {
  let seen = 0;
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m.role !== 'tool') continue;
    for (let p = m.content.length - 1; p >= 0; p--) {
      if (COMPACTABLE.includes(m.content[p].toolName) && ++seen === KEEP_RECENT) return msgs.length - i;
    }
  }
  return msgs.length;
}
const K = matchedKeepCount(aiMessages);
const pruneMatched = { messages: aiMessages, toolCalls: [{ type: `before-last-${K}-messages`, tools: COMPACTABLE }] };
const prunePlain = { messages: aiMessages, toolCalls: 'before-last-5-messages' };

const resultIds = (msgs) => {
  const s = new Set();
  for (const m of msgs) {
    if (m.role === 'tool') for (const p of m.content) if (p.type === 'tool-result') s.add(p.toolCallId);
  }
  return s;
};
const aiResultIds = resultIds(aiMessages);
const prunedIds = (out) => {
  const kept = resultIds(out);
  return [...aiResultIds].filter((id) => !kept.has(id));
};
const pruned = prunedIds(pruneMessages(pruneMatched));
const prunedPlain = prunedIds(pruneMessages(prunePlain));

// Outcome comparison: the same results should go, except those microCompact leaves because
// they are no bigger than the placeholder, and parallel results that share the message where
// pruneMessages' window starts.
const placeholderTokens = Math.round(PLACEHOLDER.length / 4);
const cutMessage = aiMessages[aiMessages.length - K];
const cutIds = new Set(cutMessage?.role === 'tool' ? cutMessage.content.map((p) => p.toolCallId) : []);
const clearedSet = new Set(mc.clearedToolUseIds);
const prunedSet = new Set(pruned);
const onlyPruned = pruned.filter((id) => !clearedSet.has(id));
const onlyCleared = mc.clearedToolUseIds.filter((id) => !prunedSet.has(id));
const tooSmall = onlyPruned.filter((id) => ref.estimateBlock(resultBlocks.get(id)) <= placeholderTokens);
const sharedCut = onlyCleared.filter((id) => cutIds.has(id));
const unexplained = onlyPruned.length - tooSmall.length + onlyCleared.length - sharedCut.length;
if (unexplained) problems.push(`microCompact vs pruneMessages: ${unexplained} cleared/pruned results differ unexplained`);

// trimMessages: a token budget with a simple length-based counter (characters / 4 of text,
// thinking and tool-call arguments), strategy 'last'. Budget "same freed": the conversation's
// count minus what microCompact freed (its tokensFreed is padded by 4/3, so unpadded here);
// "light": one token under the total, so about one message goes. No `startOn: 'human'`: in an
// agent conversation the human turns are few, and with it both budgets keep only the last
// few messages (the result may therefore start with a ToolMessage).
function lcLength(m) {
  const c = m.content;
  let n = 0;
  if (typeof c === 'string') n = c.length;
  else for (const b of c) n += b.type === 'text' ? b.text.length : b.type === 'thinking' ? b.thinking.length : 0;
  if (m.tool_calls) for (const t of m.tool_calls) n += t.name.length + JSON.stringify(t.args).length;
  return n;
}
const tokenCounter = (msgs) => {
  let n = 0;
  for (const m of msgs) n += Math.round(lcLength(m) / 4);
  return n;
};
const lcTotal = tokenCounter(lcMessages);
const budgetSame = lcTotal - Math.round((mc.tokensFreed * 3) / 4);
const budgetLight = lcTotal - 1;
const trimOpts = (maxTokens) => ({ maxTokens, tokenCounter, strategy: 'last' });
const trimSame = await trimMessages(lcMessages, trimOpts(budgetSame));
const trimLight = await trimMessages(lcMessages, trimOpts(budgetLight));

const memBeforeMicro = memBytes();
const micro = await timeGroup([
  { key: 'microCompact', fn: () => cc.microCompact(apiView) },
  { key: 'microCompact.ai', fn: () => cc.microCompact(aiMessages) },
  { key: 'microCompact.chat', fn: () => cc.microCompact(chatMessages) },
  { key: 'microCompact.responses', fn: () => cc.microCompact(responsesItems) },
  { key: 'microCompact.lc', fn: () => cc.microCompact(lcMessages) },
  { key: 'pruneMessages.matched', fn: () => pruneMessages(pruneMatched) },
  { key: 'pruneMessages.plain', fn: () => pruneMessages(prunePlain) },
  { key: 'trimMessages.same', fn: () => trimMessages(lcMessages, trimOpts(budgetSame)), async: true },
  { key: 'trimMessages.light', fn: () => trimMessages(lcMessages, trimOpts(budgetLight)), async: true },
  { key: 'JSON.stringify', fn: () => JSON.stringify(apiView) },
  { key: 'validateForApi', fn: () => cc.validateForApi(apiView) },
  { key: 'validateForApi.lines', fn: () => cc.validateForApi(lines) },
  { key: 'JSON.stringify.lines', fn: () => JSON.stringify(lines) },
]);
const memAfterMicro = memBytes();

// ---------------------------------------------------------------------------------------------
// 3. WASM memory growth on the fresh instance: the same inputs (lines parsed with JSON.parse,
// deep-equal to parseTranscript's), MEMORY_CALLS calls of each function, first call included.

const MEMORY_CALLS = Number(flag('memory-calls', 1000));
const freshLines = jsonl.split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l));
const freshView = buildApiView(freshLines, viewFrom);
const freshGrowth = { initial: freshMemBytes() };
{
  // Growth in the first half of the calls vs the second tells a one-off from a leak.
  const half = MEMORY_CALLS >> 1;
  const m0 = freshMemBytes();
  let mHalf = m0;
  for (let i = 0; i < MEMORY_CALLS; i++) {
    if (i === half) mHalf = freshMemBytes();
    sink = fresh.tokenCountWithEstimation(freshLines);
    sink = fresh.shouldAutoCompact(freshLines, MODEL);
    sink = fresh.tokenCountWithEstimation(freshView);
    sink = fresh.shouldAutoCompact(freshView, MODEL);
  }
  const m1 = freshMemBytes();
  let m1Half = m1;
  for (let i = 0; i < MEMORY_CALLS; i++) {
    if (i === half) m1Half = freshMemBytes();
    sink = fresh.microCompact(freshView);
  }
  const m2 = freshMemBytes();
  freshGrowth.perTurn = m1 - m0;
  freshGrowth.perTurnSecondHalf = m1 - mHalf;
  freshGrowth.micro = m2 - m1;
  freshGrowth.microSecondHalf = m2 - m1Half;
  if (fresh.tokenCountWithEstimation(freshLines) !== agreement.lines.pkgCount) {
    problems.push('the fresh instance counts differently from the main one');
  }
}

// ---------------------------------------------------------------------------------------------
// 4. Size: gzip -9 of the .wasm and of the JS a page loads (bench/size.mjs: goals and ceilings)

const { size, rows: sizeRows } = measureSize(pkgDir);

// ---------------------------------------------------------------------------------------------
// 5. Per-turn cost of the stateful Compactor vs the stateless path of a chat UI
//
// Histories of 2,000 and 200 messages, built by cycling the active part of the transcript
// (its main-chain user/assistant lines after the compact_boundary, without the compact summary
// line itself): every cycle is a deep copy with fresh uuids (parentUuid and
// sourceToolAssistantUUID re-pointed), message ids and tool_use ids, so no two messages share
// an id. A history of N is the last N messages of ceil(N / unit) cycles, so all of them end on
// the session's real last line (an assistant line with usage). The same is done with the API
// view of the active part (`{role, content}` messages, no usage anywhere): counting it must
// estimate every message.
//
// One turn = push one new message + ask for the warning state:
//   Compactor:  c.push(m); c.warningState()
//   stateless:  arr.push(m); calculateTokenWarningState(tokenCountWithEstimation(arr), model)
// The new messages come from a pool of fresh copies (the next cycles), pushed in order; both
// paths push the same ones. To keep the history length (nearly) fixed, the timed turns run in
// segments of at most 10 % of the history (20 turns at 200, 200 at 2,000); before each segment,
// untimed, a fresh Compactor is built from the history (`new Compactor({model, messages})`) or
// the array is copied again. So the history grows by at most 10 % while timed. The Compactor
// cases run --turns turns per batch (rebuilding a Compactor of 2,000 takes milliseconds, which
// rules out ~25 ms batches of µs turns); the stateless cases are calibrated as usual.

const TURNS = Number(flag('turns', 1000));
const GROWTH = 0.1;
const isMain = (l) => l.isSidechain !== true && (l.type === 'user' || l.type === 'assistant');
const unitLines = lines.slice(activeStart(lines)).filter((l) => isMain(l) && l.isCompactSummary !== true);
const unitApi = VIEW === 'active' ? apiView : buildApiView(lines, activeStart(lines));

/** Rewrites the tool ids of content blocks in place (on a deep copy). */
function freshToolIds(content, sfx) {
  if (!Array.isArray(content)) return;
  for (const b of content) {
    if (b.type === 'tool_use' || b.type === 'server_tool_use') b.id = `${b.id}${sfx}`;
    if (b.type === 'tool_result' && typeof b.tool_use_id === 'string') b.tool_use_id = `${b.tool_use_id}${sfx}`;
  }
}

/**
 * A deep copy of the transcript-line unit with fresh ids; `prev` is the uuid it follows. A
 * parent outside the unit (a progress line, the boundary) becomes the line before in the copy.
 */
function copyLines(unit, cycle, prev) {
  const sfx = `_c${cycle}`;
  const uuids = new Map();
  const out = structuredClone(unit);
  for (const l of out) {
    if (typeof l.uuid === 'string') {
      const u = randomUUID();
      uuids.set(l.uuid, u);
      l.uuid = u;
    }
  }
  let before = prev; // the line before in the copy: the parent when the original one is not in it
  for (const l of out) {
    if ('parentUuid' in l) l.parentUuid = uuids.get(l.parentUuid) ?? before;
    before = l.uuid ?? before;
    if (typeof l.sourceToolAssistantUUID === 'string') l.sourceToolAssistantUUID = uuids.get(l.sourceToolAssistantUUID) ?? l.sourceToolAssistantUUID;
    if (typeof l.message?.id === 'string') l.message.id = `${l.message.id}${sfx}`;
    freshToolIds(l.message?.content, sfx);
  }
  return out;
}

/** A deep copy of the API-view unit with fresh tool ids. */
function copyApi(unit, cycle) {
  const out = structuredClone(unit);
  for (const m of out) freshToolIds(m.content, `_c${cycle}`);
  return out;
}

function cycled(unit, n, copy, firstCycle = 0) {
  const out = [];
  for (let k = firstCycle; out.length < n; k++) {
    out.push(...copy(unit, k, out.length ? out[out.length - 1].uuid ?? null : null));
  }
  return out;
}
const lastN = (arr, n) => arr.slice(arr.length - n);

const SIZES = [2000, 200];
const segmentOf = (size) => Math.max(1, Math.round(GROWTH * size));
// The pool: enough for a batch, a multiple of every segment so that no segment wraps.
const poolSize = Math.ceil(Math.max(TURNS, 2 * segmentOf(SIZES[0])) / segmentOf(SIZES[0])) * segmentOf(SIZES[0]);
const histories = {};
for (const size of SIZES) {
  histories[`lines${size}`] = lastN(cycled(unitLines, size, copyLines), size);
  histories[`api${size}`] = lastN(cycled(unitApi, size, copyApi), size);
}
// Pool cycles are numbered from 10,000: their ids differ from every history's.
const pools = {
  lines: cycled(unitLines, poolSize, copyLines, 10_000).slice(0, poolSize),
  api: cycled(unitApi, poolSize, copyApi, 10_000).slice(0, poolSize),
};
// The API view alternates user/assistant; its histories end on an assistant message and the
// pool starts with a user message (the unit's first), so the alternation is kept.

/**
 * Makes the transcript lines pool[from..] continue the history, as a session's next lines do:
 * the first that names a parent names the history's last line (the pool's lines name one
 * another; its first names none). A count follows the parentUuid chain (SPEC §2): a segment
 * hung from nothing would be a new conversation. Nothing for API messages.
 */
function linkSegment(hist, pool, from) {
  const last = hist.findLast((l) => typeof l.uuid === 'string');
  const first = pool.slice(from, from + 8).find((l) => 'parentUuid' in l);
  if (last === undefined || first === undefined) return () => {};
  const own = first.parentUuid;
  first.parentUuid = last.uuid;
  // The pool's lines are used again at other offsets: this one names its own parent again
  // after the segment (left pointing at a history's last line it would be a fork in the
  // middle of a later segment, which sends every count of that segment to the general path).
  return () => {
    first.parentUuid = own;
  };
}

/** Runs n turns in segments of `seg`, each on fresh state (built untimed); ms per turn. */
function turnBatch(c, n) {
  let timed = 0;
  let done = 0;
  while (done < n) {
    const s0 = performance.now();
    const st = c.fresh();
    c.setupMs.push(performance.now() - s0);
    const m = Math.min(c.seg, n - done);
    const pool = c.pool;
    const from = done % pool.length;
    const unlink = linkSegment(c.hist, pool, from);
    const t0 = performance.now();
    for (let i = 0; i < m; i++) sink = c.turn(st, pool[from + i]);
    timed += performance.now() - t0;
    unlink();
    c.dispose?.(st);
    done += m;
  }
  return timed / n;
}

function turnCase(key, hist, pool, kind) {
  const seg = segmentOf(hist.length);
  const c = { key, seg, pool, setupMs: [], hist };
  if (kind === 'compactor') {
    c.fresh = () => new cc.Compactor({ model: MODEL, messages: hist });
    c.turn = (st, m) => {
      st.push(m);
      return st.warningState();
    };
    c.dispose = (st) => st.free();
    c.calibrate = () => {
      const t0 = performance.now();
      while (performance.now() - t0 < WARMUP_MS) turnBatch(c, seg);
      c.setupMs.length = 0;
      return TURNS;
    };
  } else {
    c.fresh = () => hist.slice();
    c.turn = (arr, m) => {
      arr.push(m);
      return cc.calculateTokenWarningState(cc.tokenCountWithEstimation(arr), MODEL);
    };
    c.calibrate = () => {
      let n = 0;
      const t0 = performance.now();
      let timed = 0;
      // Steps of at most 10 turns: a full-scan turn on 2,000 messages takes milliseconds.
      const step = Math.min(seg, 10);
      while (n < 5 || performance.now() - t0 < WARMUP_MS) {
        timed += turnBatch(c, step) * step;
        n += step;
      }
      c.setupMs.length = 0;
      return Math.max(1, Math.round(BATCH_MS / (timed / n)));
    };
  }
  c.batch = (n) => turnBatch(c, n);
  return c;
}

// Outcome: the Compactor's count and warning state equal the stateless ones, before and after
// a segment of turns.
const turnOutcome = {};
for (const [name, hist] of Object.entries(histories)) {
  const pool = pools[name.startsWith('lines') ? 'lines' : 'api'];
  const seg = segmentOf(hist.length);
  const c = new cc.Compactor({ model: MODEL, messages: hist });
  const before = { compactor: c.tokenCount(), stateless: cc.tokenCountWithEstimation(hist) };
  for (let i = 0; i < seg; i++) c.push(pool[i]);
  const grown = [...hist, ...pool.slice(0, seg)];
  const after = { compactor: c.tokenCount(), stateless: cc.tokenCountWithEstimation(grown) };
  const ws = JSON.stringify(c.warningState()) === JSON.stringify(cc.calculateTokenWarningState(after.stateless, MODEL));
  const lastUsage = hist.findLastIndex((m) => (m.message ?? m).usage !== undefined);
  turnOutcome[name] = {
    messages: hist.length, segment: seg, tokensBefore: before, tokensAfter: after, warningStateEqual: ws,
    lengthAfter: c.length, lastMessageWithUsage: lastUsage === -1 ? null : hist.length - 1 - lastUsage,
  };
  c.free();
  if (before.compactor !== before.stateless || after.compactor !== after.stateless || !ws) {
    problems.push(`Compactor on ${name}: count ${before.compactor}/${after.compactor} ≠ tokenCountWithEstimation ${before.stateless}/${after.stateless}${ws ? '' : ', warning state differs'}`);
  }
  if (turnOutcome[name].lengthAfter !== hist.length + seg) problems.push(`Compactor on ${name}: length ${turnOutcome[name].lengthAfter} ≠ ${hist.length + seg}`);
}

const turnCases = [];
for (const shape of ['lines', 'api']) {
  for (const size of SIZES) {
    const hist = histories[`${shape}${size}`];
    turnCases.push(turnCase(`compactor.${shape}${size}`, hist, pools[shape], 'compactor'));
    turnCases.push(turnCase(`stateless.${shape}${size}`, hist, pools[shape], 'stateless'));
  }
}
const turns = await timeGroup(turnCases);
for (const c of turnCases) {
  turns[c.key].setupMs = median(c.setupMs);
  turns[c.key].segment = c.seg;
  turns[c.key].turnsPerBatch = c.n;
}

// ---------------------------------------------------------------------------------------------
// 6. Pipeline overhead: compactConversation and autoCompactIfNeeded on the long transcript cut
// just before its real compaction boundary, with a summarizer that does no work: it returns at
// once (a resolved Promise) the real session's own summary (the compact-summary line after the
// boundary, ~15.7K characters ≈ 3.9K tokens) as a Messages API response with usage. All the
// time is the pipeline's own: reading the messages into Rust, counting, building the summary
// request and handing it to JS, parsing the answer, building the boundary and summary
// messages, the size check, and the result objects.

const boundaryAt = activeStart(lines) - 1;
const linesBefore = lines.slice(0, Math.max(0, boundaryAt));
const realSummaryLine = lines.slice(boundaryAt + 1).find((l) => l.isCompactSummary === true);
const realSummary = typeof realSummaryLine?.message?.content === 'string'
  ? realSummaryLine.message.content
  : (realSummaryLine?.message?.content ?? []).map((b) => b.text ?? '').join('');
if (boundaryAt < 1 || !realSummary) problems.push('pipeline rows: the transcript has no compact_boundary followed by a compact summary');
const SUMMARY_TOKENS = Math.round(realSummary.length / 4);
const summaryResponse = {
  id: 'msg_bench', type: 'message', role: 'assistant', model: MODEL, stop_reason: 'end_turn',
  content: [{ type: 'text', text: `<analysis>\nbench\n</analysis>\n<summary>\n${realSummary}\n</summary>` }],
  usage: { input_tokens: 100_000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: SUMMARY_TOKENS },
};
let lastRequest;
const fixedSummarizer = (request) => {
  lastRequest = request;
  return Promise.resolve(summaryResponse);
};
const pipelineContext = { model: MODEL, summarize: fixedSummarizer };
const linesBeforeJson = JSON.stringify(linesBefore);

// Outcome (untimed): one compaction of each kind, and the caller's lines unchanged.
const compacted = await cc.compactConversation(linesBefore, pipelineContext, {});
const autoOut = await cc.autoCompactIfNeeded(linesBefore, pipelineContext, { consecutiveFailures: 0 });
if (JSON.stringify(linesBefore) !== linesBeforeJson) problems.push('compactConversation changed the caller\'s messages');
if (!autoOut.wasCompacted) problems.push(`autoCompactIfNeeded did not compact (${autoOut.skipped ?? autoOut.error?.message})`);
const requestJson = JSON.stringify(lastRequest);
const pipelineOutcome = {
  linesBefore: linesBefore.length,
  linesBeforeJsonBytes: Buffer.byteLength(linesBeforeJson),
  summaryChars: realSummary.length,
  summaryRequest: { messages: lastRequest.messages.length, jsonBytes: Buffer.byteLength(requestJson) },
  preCompactTokenCount: compacted.preCompactTokenCount,
  realPreTokens: lines[boundaryAt]?.compactMetadata?.preTokens,
  postCompactTokenCount: compacted.postCompactTokenCount,
  truePostCompactTokenCount: compacted.truePostCompactTokenCount,
  postCompactMessages: cc.buildPostCompactMessages(compacted).length,
  restoredFiles: compacted.restoredFiles.length,
  auto: { wasCompacted: autoOut.wasCompacted, trigger: autoOut.compactionResult?.trigger, fromSessionMemory: autoOut.compactionResult?.fromSessionMemory },
};

const pipeline = await timeGroup([
  { key: 'pipeline.compactConversation', fn: () => cc.compactConversation(linesBefore, pipelineContext, {}), async: true },
  { key: 'pipeline.autoCompactIfNeeded', fn: () => cc.autoCompactIfNeeded(linesBefore, pipelineContext, { consecutiveFailures: 0 }), async: true },
  { key: 'pipeline.previewCompaction', fn: () => cc.previewCompaction(linesBefore, { model: MODEL }), async: true },
  { key: 'pipeline.serializeTranscript', fn: () => cc.serializeTranscript(linesBefore) },
  { key: 'pipeline.stringify', fn: () => JSON.stringify(linesBefore) },
]);

// The split of one compactConversation, from the times its progress events and the summarizer
// call arrive (each event's own cost included): median over SPLIT_RUNS runs.
const SPLIT_RUNS = 15;
const split = { read: [], request: [], answer: [], finish: [], result: [], total: [], stringifyRequest: [] };
for (let r = 0; r < SPLIT_RUNS; r++) {
  const at = {};
  const ctx = {
    model: MODEL,
    summarize: (req) => {
      at.summarize = performance.now();
      lastRequest = req;
      return Promise.resolve(summaryResponse);
    },
    onProgress: (e) => {
      at[e.phase] ??= performance.now();
    },
  };
  const t0 = performance.now();
  sink = await cc.compactConversation(linesBefore, ctx, {});
  const t1 = performance.now();
  split.read.push(at.start - t0);
  split.request.push(at.summarize - at.start);
  split.answer.push(at.summarized - at.summarize);
  split.finish.push(at.done - at.summarized);
  split.result.push(t1 - at.done);
  split.total.push(t1 - t0);
  const s0 = performance.now();
  sink = JSON.stringify(lastRequest);
  split.stringifyRequest.push(performance.now() - s0);
}
const splitMs = Object.fromEntries(Object.entries(split).map(([k, v]) => [k, median(v)]));

// ---------------------------------------------------------------------------------------------
// Report

// Each row compares the package (left) with another implementation (right); `ratio` is always
// package time ÷ other time. Memory and size rows have only the package's value.
const rows = [];
const timings = { ...perTurn, ...micro, ...turns, ...pipeline };
const t = (k) => timings[k].ms;
const samplesOf = (k) => timings[k].samples;
// The ratio is the median of per-batch ratios: batch b of both cases ran back to back, so
// pairing them cancels drift in the machine's load.
const compare = (group, name, pkgKey, other, otherKey, target, note) => {
  const a = samplesOf(pkgKey);
  const b = samplesOf(otherKey);
  const ratio = median(a.map((x, i) => x / b[i]));
  rows.push({
    id: `${pkgKey}/${otherKey}`, group, name, unit: 'ms', value: t(pkgKey), other, otherValue: t(otherKey), ratio, target, note,
    result: target === undefined ? 'info' : ratio <= target ? 'PASS' : 'MISS',
  });
};
const measure = (id, group, name, value, unit, target, note) => {
  rows.push({
    id, group, name, unit, value, target, note,
    result: target === undefined ? 'info' : value <= target ? 'PASS' : 'MISS',
  });
};

// Goals: issue 12's table (stateless tokenCountWithEstimation on transcript lines ≤ 3× plain
// JS); the others ≤ 2×.
for (const [input, label, countGoal] of [['lines', `transcript lines (${lines.length})`, 3], ['api', `API view (${apiView.length} msgs)`, 2]]) {
  compare('per-turn', `tokenCountWithEstimation, ${label}`, `pkg.tokenCount.${input}`, 'plain JS (reference.mjs)', `ref.tokenCount.${input}`, countGoal);
  compare('per-turn', `shouldAutoCompact, ${label}`, `pkg.should.${input}`, 'plain JS (reference.mjs)', `ref.should.${input}`, 2);
}
compare('per-turn', `shouldAutoCompact, transcript lines changing on every call (${lines.length} and ${linesPlus.length}, in turn)`, 'pkg.should.changing', 'plain JS (reference.mjs)', 'ref.should.changing', undefined,
  'the row above asks about the same lines again (a chat UI re-rendering), which the core answers from its last record; here every call is a new record');
compare('per-turn', `Compactor.warningState() re-read (no new message), ${lines.length} lines`, 'pkg.compactor.warningState', 'plain JS per-turn estimate (reference.mjs)', 'ref.tokenCount.lines', 1,
  'issue 12: the answer is kept while the count is unchanged (a frozen object), so a chat UI asking on every render pays a lookup');
compare('per-turn', `shouldAutoCompact, AI SDK ModelMessage[] (${aiMessages.length})`, 'pkg.should.ai', 'the same on the API view (Anthropic shape)', 'pkg.should.api');
compare('per-turn', `shouldAutoCompact, AI SDK UIMessage[] (${uiMessages.length})`, 'pkg.should.ui', 'the same on the API view (Anthropic shape)', 'pkg.should.api');
compare('per-turn', `shouldAutoCompact, OpenAI Chat Completions (${chatMessages.length})`, 'pkg.should.chat', 'the same on the API view (Anthropic shape)', 'pkg.should.api');
compare('per-turn', `shouldAutoCompact, OpenAI Responses items (${responsesItems.length})`, 'pkg.should.responses', 'the same on the API view (Anthropic shape)', 'pkg.should.api');
compare('per-turn', `shouldAutoCompact, LangChain BaseMessage[] (${lcMessages.length})`, 'pkg.should.lc', 'the same on the API view (Anthropic shape)', 'pkg.should.api');
// Goal: issue 12's table, ahead of the peer (≤ 1×).
compare('microCompact', 'microCompact(apiView)', 'microCompact', `pruneMessages, matched (before-last-${K}-messages, compactable tools)`, 'pruneMessages.matched', 1);
compare('microCompact', 'microCompact(apiView)', 'microCompact', 'pruneMessages, before-last-5-messages', 'pruneMessages.plain');
compare('microCompact', 'microCompact(apiView)', 'microCompact', `trimMessages, same tokens freed (maxTokens ${budgetSame})`, 'trimMessages.same');
compare('microCompact', 'microCompact(apiView)', 'microCompact', `trimMessages, light (maxTokens ${budgetLight})`, 'trimMessages.light');
compare('microCompact', 'microCompact(apiView)', 'microCompact', 'JSON.stringify(apiView)', 'JSON.stringify');
// What an agent pays to check a request before sending it: info (the goal, ≤ 2× a
// JSON.stringify, needs a validator on the caller's objects; it reads typed messages).
compare('microCompact', 'validateForApi(apiView)', 'validateForApi', 'JSON.stringify(apiView)', 'JSON.stringify');
compare('microCompact', `validateForApi, transcript lines (${lines.length})`, 'validateForApi.lines', 'JSON.stringify of the lines', 'JSON.stringify.lines');
compare('microCompact', 'microCompact, AI SDK ModelMessage[]', 'microCompact.ai', 'microCompact(apiView) (Anthropic shape)', 'microCompact');
compare('microCompact', 'microCompact, OpenAI Chat Completions', 'microCompact.chat', 'microCompact(apiView) (Anthropic shape)', 'microCompact');
compare('microCompact', 'microCompact, OpenAI Responses items', 'microCompact.responses', 'microCompact(apiView) (Anthropic shape)', 'microCompact');
compare('microCompact', 'microCompact, LangChain BaseMessage[]', 'microCompact.lc', 'microCompact(apiView) (Anthropic shape)', 'microCompact');

const TURN = 'push + warningState';
const STATELESS = 'tokenCountWithEstimation + calculateTokenWarningState';
const shapeLabel = { lines: 'transcript lines (usage at the tail)', api: 'API messages (no usage)' };
const turnNote = (shape, size) => {
  const c = turns[`compactor.${shape}${size}`];
  const s = turns[`stateless.${shape}${size}`];
  return `history of ${size.toLocaleString('en')}: timed in segments of ${c.segment} turns, each on a fresh copy of the history ` +
    `(so it grows ≤ ${Math.round(GROWTH * 100)} % while timed); Compactor ${c.turnsPerBatch} turns per batch, stateless ${s.turnsPerBatch}; ` +
    `building the Compactor from the history (untimed, before each segment) took ${c.setupMs.toFixed(2)} ms`;
};
for (const shape of ['lines', 'api']) {
  compare('compactor', `Compactor turn (${TURN}), 2,000 ${shapeLabel[shape]}`, `compactor.${shape}2000`,
    `stateless turn (${STATELESS}), same 2,000`, `stateless.${shape}2000`, undefined, turnNote(shape, 2000));
}
for (const shape of ['lines', 'api']) {
  compare('compactor', `Compactor turn, 2,000 ${shapeLabel[shape]}`, `compactor.${shape}2000`,
    `Compactor turn, 200 ${shapeLabel[shape]}`, `compactor.${shape}200`, 2, turnNote(shape, 200));
}
for (const shape of ['lines', 'api']) {
  compare('compactor', `stateless turn, 2,000 ${shapeLabel[shape]}`, `stateless.${shape}2000`,
    `stateless turn, 200 ${shapeLabel[shape]}`, `stateless.${shape}200`);
}

const po = pipelineOutcome;
const sm = splitMs;
compare('pipeline', `compactConversation(${po.linesBefore} lines before the boundary), instant summarizer`, 'pipeline.compactConversation',
  `JSON.stringify of the same lines (${(po.linesBeforeJsonBytes / 1e6).toFixed(2)} MB)`, 'pipeline.stringify', 2,
  `issue 12: the library's own work ≤ 2× JSON.stringify of the same conversation; all pipeline overhead (the summarizer returns a fixed ${po.summaryChars}-character summary at once). Split, median of ${SPLIT_RUNS} runs: ` +
  `reading the messages into Rust and counting ${sm.read.toFixed(2)} ms, building the summary request and handing it to JS ${sm.request.toFixed(2)} ms, ` +
  `Promise bridge and parsing the answer ${sm.answer.toFixed(2)} ms, restoration/boundary/summary/size check/hooks ${sm.finish.toFixed(2)} ms, ` +
  `result objects ${sm.result.toFixed(2)} ms (total ${sm.total.toFixed(2)} ms); for scale, JSON.stringify of the summary request ` +
  `(${po.summaryRequest.messages} messages, ${(po.summaryRequest.jsonBytes / 1e3).toFixed(0)} KB), which a real summarizer sends, takes ${sm.stringifyRequest.toFixed(2)} ms`);
compare('pipeline', 'previewCompaction(same lines)', 'pipeline.previewCompaction',
  'JSON.stringify of the same lines', 'pipeline.stringify', 2,
  'issue 12: ≤ 2× JSON.stringify; reads the messages as compactConversation does, then estimates without a model call');
compare('pipeline', 'serializeTranscript(same lines)', 'pipeline.serializeTranscript',
  'JSON.stringify of the same lines', 'pipeline.stringify', 1.2,
  'issue 12: ≤ 1.2× JSON.stringify; each line is the engine\'s JSON.stringify of the message, checked in Rust and joined by the engine');
compare('pipeline', 'autoCompactIfNeeded(same lines), instant summarizer', 'pipeline.autoCompactIfNeeded',
  'JSON.stringify of the same lines', 'pipeline.stringify', undefined,
  'no session memory in the context, so it runs the threshold check and then the full compaction');

const callsOf = (group, prefix) =>
  Object.entries(group).filter(([k]) => k.startsWith(prefix)).reduce((s, [, r]) => s + r.calls, 0);
const parseGrowth = memAfterParse - memBeforeParse;
const g = freshGrowth;
measure('memory.perTurn', 'memory', 'wasm memory growth, per-turn calls, % of transcript JSON', (100 * g.perTurn) / linesJsonBytes, '%', 10,
  `${g.perTurn} B over ${4 * MEMORY_CALLS} calls on lines and API view, ${g.perTurnSecondHalf} B of it in the second half (fresh instance, initial memory ${g.initial} B)`);
measure('memory.microCompact', 'memory', 'wasm memory growth, microCompact calls, % of API view JSON', (100 * g.micro) / apiJsonBytes, '%', 10,
  `${g.micro} B over ${MEMORY_CALLS} calls, ${g.microSecondHalf} B of it in the second half (fresh instance)`);
measure('memory.parseTranscript', 'memory', 'wasm memory growth, one parseTranscript, % of its JSONL', (100 * parseGrowth) / Buffer.byteLength(jsonl), '%', undefined,
  `${parseGrowth} B (main instance, setup, not a target); the main instance then grew ` +
  `${memAfterPerTurn - memBeforePerTurn} B over ${callsOf(perTurn, 'pkg.')} timed per-turn calls and ` +
  `${memAfterMicro - memBeforeMicro} B over ${micro.microCompact.calls} timed microCompact calls`);
// Size: a row per goal (PASS/MISS); a module past its ceiling fails the run (below).
rows.push(...sizeRows);

// Conversations that outlive one process (bench/durable.mjs), on the fresh instance.
// The fresh instance is the first module's glue: the offline summarizer comes from the package.
const durable = await measureDurable({ cc: fresh, memBytes: freshMemBytes, history: apiView, model: MODEL, summarize: cc.offlineSummarizer(), batchMs: BATCH_MS });
if (!durable.agrees) problems.push('durable: a restored Compactor does not count what tokenCountWithEstimation counts');
measure('durable.memory', 'durable', `memory per live conversation (${durable.size} API messages), the library's part`, durable.perConversationBytes / 1024, 'KB', 16,
  `${durable.live} Compactors restored and held at once: WASM ${(durable.wasmBytes / 1024).toFixed(2)} KB + JS heap ${(durable.heapBytes / 1024).toFixed(2)} KB each; ` +
  `their messages (${(durable.jsonBytes / 1e3).toFixed(0)} KB JSON) are the application's and add ${(durable.messagesBytes / 1024).toFixed(0)} KB when each has its own copy. ` +
  'Goal: 1,000 live conversations within 16 MB, an eighth of the 128 MB a Cloudflare Workers isolate (Durable Objects included) may use');
rows.push({
  id: 'durable.cold', group: 'durable', name: `conversations served per second, one core, restored each time (${durable.size} msgs)`, unit: 'conv/s',
  value: durable.coldPerSecond, target: 1000, targetText: '≥ 1000 conv/s', result: durable.coldPerSecond >= 1000 ? 'PASS' : 'MISS',
  note: 'per request as in tests/durable/worker.mjs without storage and network: Compactor.restore(snapshot, messages) + pushMany(turn) + maybeAutoCompact() ' +
    '(below the threshold) + snapshot(); median of batches. Goal: ≤ 1 ms each, a tenth of the 10 ms CPU a Workers free-plan request may use',
});
rows.push({
  id: 'durable.warm', group: 'durable', name: `conversations served per second, one core, object in memory (${durable.size}+ msgs)`, unit: 'conv/s',
  value: durable.warmPerSecond, result: 'info',
  note: 'the same request on a live Compactor (no restore): pushMany + maybeAutoCompact + snapshot',
});

// An abort during a large compaction's own synchronous work (issue 13; bench/abort-latency.mjs).
const aborts = await measureAbortDelays(cc, largeSession(200), MODEL);
const abortDelays = aborts.filter((a) => a.outcome === 'aborted').map((a) => a.delayMs);
if (aborts.some((a) => a.outcome === 'failed')) problems.push(`abort: ${JSON.stringify(aborts.filter((a) => a.outcome === 'failed'))}`);
measure('abort.delay', 'abort', `delay from abort() to the ABORTED rejection, compactConversation of a ~200 MB session (worst of ${abortDelays.length} points)`,
  Math.max(...abortDelays), 'ms', 100,
  `abort points: ${aborts.map((a) => `${a.name}: ${a.delayMs === undefined ? a.outcome : `${a.delayMs.toFixed(1)} ms`}`).join('; ')}. ` +
    'The async functions read messages in ~20 ms slices and pass a checkpoint (a turn of the event loop) between their long passes. Goal: ≤ 100 ms');
rows.at(-1).targetText = '≤ 100 ms';

// The count where no usage anchors it, against the real sessions' own usage (bench/accuracy.mjs).
const accuracy = await measureAccuracy({ cc, dir: transcriptsDir, model: MODEL });
rows.push(...accuracy.rows);

const outcome = {
  tokenCount: agreement,
  microCompact: {
    cleared: mc.clearedToolUseIds.length,
    tokensFreed: mc.tokensFreed,
    reusedMessages: mc.reusedMessages,
    messages: mc.messages.length,
  },
  pruneMessagesMatched: { keepLastMessages: K, pruned: pruned.length, onlyPruned: onlyPruned.length, tooSmallToClear: tooSmall.length, onlyCleared: onlyCleared.length, sharingCutMessage: sharedCut.length },
  pruneMessagesPlain: { pruned: prunedPlain.length },
  compactor: turnOutcome,
  pipeline: { ...pipelineOutcome, splitMs },
  accuracy: accuracy.detail,
  trimMessages: {
    totalTokens: lcTotal,
    same: { maxTokens: budgetSame, kept: trimSame.length, of: lcMessages.length, freed: lcTotal - tokenCounter(trimSame) },
    light: { maxTokens: budgetLight, kept: trimLight.length, of: lcMessages.length, freed: lcTotal - tokenCounter(trimLight) },
  },
};

const meta = {
  node: process.version,
  ai: versionOf('ai'),
  langchainCore: versionOf('@langchain/core'),
  transcript: TRANSCRIPT,
  lines: lines.length,
  linesJsonBytes,
  view: VIEW === 'active' ? `after the last compact_boundary (lines ${viewFrom}..${lines.length - 1})` : 'whole file',
  apiViewMessages: apiView.length,
  aiSdkMessages: aiMessages.length,
  langchainMessages: lcMessages.length,
  apiViewJsonBytes: apiJsonBytes,
  batches: BATCHES,
  batchMs: BATCH_MS,
  compactorTurnsPerBatch: TURNS,
  historyUnit: { transcriptLines: unitLines.length, apiMessages: unitApi.length },
  freshInstanceMemory: freshGrowth,
  wasmMemory: { beforeParse: memBeforeParse, afterParse: memAfterParse, beforePerTurn: memBeforePerTurn, afterPerTurn: memAfterPerTurn, beforeMicro: memBeforeMicro, afterMicro: memAfterMicro },
};

if (JSON_OUT) {
  console.log(JSON.stringify({ meta, rows, timings, outcome, size, problems }, null, 2));
} else {
  log(`context-compaction bench — node ${meta.node}, ai ${meta.ai}, @langchain/core ${meta.langchainCore}`);
  log(`input: ${TRANSCRIPT}, ${lines.length} lines, ${(linesJsonBytes / 1e6).toFixed(2)} MB JSON`);
  log(`API view: ${meta.view}: ${apiView.length} messages (${(apiJsonBytes / 1e3).toFixed(0)} KB JSON); AI SDK ${aiMessages.length}, LangChain ${lcMessages.length} messages`);
  log(`timing: median per call of ${BATCHES} interleaved batches of ~${BATCH_MS} ms each, after ${WARMUP_MS} ms warm-up\n`);
  const ms = (v) => (v < 0.001 ? `${(v * 1000).toFixed(2)} µs` : v < 0.1 ? `${(v * 1000).toFixed(1)} µs` : `${v.toFixed(3)} ms`);
  const fmt = (r) => (r.unit === 'ms' ? ms(r.value) : r.unit === '%' ? `${r.value.toFixed(2)} %` : `${r.value.toFixed(1)} ${r.unit}`);
  const header = ['package', 'value', 'compared with', 'its value', 'pkg ÷ it', 'target', 'result'];
  const body = rows.map((r) => [
    r.name,
    fmt(r),
    r.other ?? '',
    r.otherValue === undefined ? '' : ms(r.otherValue),
    r.ratio === undefined ? '' : `${r.ratio.toFixed(2)}×`,
    r.targetText ?? (r.target === undefined ? '' : r.unit === 'ms' ? `≤ ${r.target}×` : `≤ ${r.target} ${r.unit}`),
    r.result,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const right = new Set([1, 3, 4]);
  const line = (cells) => cells.map((c, i) => (right.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ').trimEnd();
  log(line(header));
  log(widths.map((w) => '-'.repeat(w)).join('  '));
  let group = rows[0].group;
  for (let i = 0; i < rows.length; i++) {
    if (rows[i].group !== group) {
      group = rows[i].group;
      log('');
    }
    log(line(body[i]));
  }
  log('\nnotes:');
  for (const r of rows) if (r.note) log(`  ${r.name}: ${r.note}`);
  log('\noutcomes (checked for equal results where comparable):');
  for (const [k, a] of Object.entries(agreement)) {
    log(`  ${k}: tokenCountWithEstimation package ${a.pkgCount} / reference ${a.refCount}; shouldAutoCompact ${a.pkgShould} / ${a.refShould}`);
  }
  const o = outcome;
  log(`  microCompact: cleared ${o.microCompact.cleared} results, tokensFreed ${o.microCompact.tokensFreed}, ${o.microCompact.reusedMessages}/${o.microCompact.messages} messages reused as-is`);
  log(`  pruneMessages matched: removed ${o.pruneMessagesMatched.pruned} results (and their calls); ` +
    `${o.pruneMessagesMatched.onlyPruned} not cleared by microCompact (${o.pruneMessagesMatched.tooSmallToClear} no bigger than the placeholder), ` +
    `${o.pruneMessagesMatched.onlyCleared} cleared but kept by pruneMessages (${o.pruneMessagesMatched.sharingCutMessage} in its window's first message)`);
  log(`  pruneMessages before-last-5-messages: removed ${o.pruneMessagesPlain.pruned} results (all tools)`);
  for (const [k, a] of Object.entries(o.compactor)) {
    log(`  Compactor ${k}: count ${a.tokensBefore.compactor} = tokenCountWithEstimation ${a.tokensBefore.stateless}; after ${a.segment} pushes ` +
      `${a.tokensAfter.compactor} = ${a.tokensAfter.stateless}; warning state equal: ${a.warningStateEqual}; last message with usage ` +
      `${a.lastMessageWithUsage === null ? 'none' : `${a.lastMessageWithUsage} from the end`}`);
  }
  {
    const p = o.pipeline;
    log(`  compactConversation on ${p.linesBefore} lines before the boundary: preCompactTokenCount ${p.preCompactTokenCount} (the real session: ${p.realPreTokens}), ` +
      `postCompactTokenCount ${p.postCompactTokenCount} (from the fake usage), truePostCompactTokenCount ${p.truePostCompactTokenCount}, ` +
      `${p.postCompactMessages} post-compact messages, ${p.restoredFiles} files restored (no readFileState given); ` +
      `autoCompactIfNeeded: wasCompacted ${p.auto.wasCompacted}, trigger ${p.auto.trigger}, fromSessionMemory ${p.auto.fromSessionMemory}`);
  }
  log(`  trimMessages: counter total ${o.trimMessages.totalTokens}; same-freed kept ${o.trimMessages.same.kept}/${o.trimMessages.same.of} messages, freed ${o.trimMessages.same.freed}; light kept ${o.trimMessages.light.kept}/${o.trimMessages.light.of}, freed ${o.trimMessages.light.freed}`);
  if (problems.length) {
    log('\nPROBLEMS (comparison not like for like):');
    for (const p of problems) log(`  - ${p}`);
  }
}
if (problems.length) process.exitCode = 1;
// A module that grew past its ceiling fails the run (not the tests): bench/size.mjs.
for (const r of sizeRows.filter((x) => x.overCeiling)) {
  console.error(`size: ${r.name} is ${r.value.toFixed(1)} KB, past its ceiling of ${r.ceiling} KB (bench/size.mjs)`);
  process.exitCode = 1;
}
