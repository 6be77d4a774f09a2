// A seeded fuzzer of every export's arguments and options (issue 13): the hostile values that
// cannot exist in Rust — cycles, 100,000-deep nesting, throwing getters, Proxies that throw on
// ownKeys / get / has / getOwnPropertyDescriptor, revoked Proxies, toJSON that throws or
// returns a cycle, getters that answer differently on each read, BigInt, Symbol, a 100 MB
// string (sparingly) — placed at random among valid values under the keys the option parsers
// read (`pinned`, `config`, `hooks`, `readFileState`, `signal`, `summarize`, …), at random
// depths. The native targets of fuzz/ cover arbitrary JSON; this covers what only JavaScript
// can hand over.
//
// Each case must answer with a value or an `Error` with a string `code` (never a
// WebAssembly `RuntimeError`, never `INSTANCE_RESET`, which would mean a trap happened); a
// promise must settle; nothing may escape as an uncaught exception. After every case cheap
// sample calls, and every 20 cases a whole compaction, answer exactly as before any of it.
//
// FUZZ_OPTIONS_SEED (default 13) and FUZZ_OPTIONS_CASES (default 400) change the run; a
// failure names its seed and case number, and rerunning with the same seed repeats it.
// FUZZ_PKG names another build's node.js (e.g. a copy of pkg/ whose .wasm keeps its name
// section, so that a stack through WebAssembly names the Rust functions).
import { test } from 'node:test';
import assert from 'node:assert/strict';
const cc = await import(process.env.FUZZ_PKG ?? '../../pkg/node.js');
import { SONNET, prng, summaryResponse } from './helpers/support.mjs';

const SEED = Number(process.env.FUZZ_OPTIONS_SEED ?? 13);
const CASES = Number(process.env.FUZZ_OPTIONS_CASES ?? 400);

// ---- Values ------------------------------------------------------------------------------------

/** Every key some option parser reads (and a few near misses). */
const KEYS = [
  // context
  'model', 'summaryModel', 'config', 'readFileState', 'loadedNestedMemoryPaths', 'plan', 'planMode',
  'invokedSkills', 'sentSkillNames', 'discoveredTools', 'tools', 'agents', 'mcpInstructions',
  'asyncAgents', 'querySource', 'snipTokensFreed', 'retryBaseMs', 'summaryTimeoutMs', 'pinned',
  'keepLastUserMessage', 'shape', 'system', 'toolDefinitions', 'summarize', 'readFile',
  'sessionMemory', 'hooks', 'signal', 'onProgress', 'onText', 'tokenCounter', 'messages',
  'preCompact', 'sessionStart', 'postCompact',
  // call options
  'suppressFollowUpQuestions', 'customInstructions', 'isAutoCompact', 'recompactionInfo',
  'appendMissing', 'usage', 'usageAt', 'keepRecent', 'idleMinutes', 'now', 'lastAssistantTimestamp',
  'keepLatestPerPath', 'compactableTools', 'lastUuid', 'preCompactDiscoveredTools', 'uuid', 'timestamp',
  'template', 'keepLatestRequest', 'maxTokens', 'dropIgnored', 'keepLastRequest',
  // config
  'contextWindow', 'maxOutputTokens', 'autoCompactPctOverride', 'blockingLimitOverride', 'disableCompact',
  'disableAutoCompact', 'autoCompactEnabled', 'reactiveOnly', 'contextCollapse', 'summaryContextWindow',
  // tracking, usage, snapshots
  'consecutiveFailures', 'turnId', 'turnCounter', 'reactiveTurnId', 'input_tokens', 'output_tokens',
  'cache_read_input_tokens', 'cache_creation_input_tokens', 'format', 'version', 'check',
  // buildApiContextManagement
  'clearThinking', 'thinkingKeep', 'isIdle', 'lastAssistantMs', 'nowMs', 'idleThresholdMinutes',
  'clearToolUses', 'triggerInputTokens', 'clearAtLeast', 'targetInputTokens', 'keepToolUses',
  'clearToolInputs', 'excludeTools', 'compact', 'compactTriggerInputTokens', 'pauseAfterCompaction',
  'compactInstructions',
  // simulateSession
  'policies', 'prices', 'summaryTokensPerSecond', 'summaryTokens', 'ttl', 'microCompact', 'server', 'recorded',
  // messages and records
  'role', 'content', 'type', 'text', 'path', 'name', 'description', 'message', 'status', 'error',
  // near misses, prototype keys
  'modle', 'confg', 'querySorce', 'PreCompact', '__proto__', 'constructor', 'toJSON',
];

const STRINGS = [SONNET, 'claude-opus-4-6', 'gpt-5', '', 'auto', 'anthropic', 'openai-chat', 'ai-sdk-ui',
  'langchain', 'compact', 'session_memory', 'repl_main_thread', 'manual', 'user', 'assistant', 'all',
  'prompt is too long: 300000 tokens > 200000 maximum', 'context-compaction/compactor', '/w/a.rs', 'Read',
  '\ud800', '\u0000', 'x'.repeat(100_000)];

const NUMBERS = [0, -0, 1, -1, 0.5, 4, 100, 1000, 50_000, 200_000, 2 ** 31 - 1, 2 ** 31, 2 ** 53, 2 ** 53 + 2,
  1e15, 1e300, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity];

const BIG = 'x'.repeat(100 * 1024 * 1024);

const msgs = () => [
  { role: 'user', content: 'Please read the file.' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'y'.repeat(4_000) }] },
  { role: 'assistant', content: 'Done.' },
];
const summarize = async () => summaryResponse('The user asked for a file; it was read.');

function deep(n, array) {
  let v = array ? [] : { end: true };
  for (let i = 0; i < n; i++) v = array ? [v] : { v };
  return v;
}

const TRAPS = ['get', 'has', 'ownKeys', 'getOwnPropertyDescriptor', 'getPrototypeOf', 'apply', 'construct'];

/** A Proxy over `target` whose chosen traps throw. */
function throwingProxy(rng, target) {
  const handler = {};
  for (const t of TRAPS) {
    if (rng.bool(0.5)) handler[t] = () => { throw new Error(`trap ${t}`); };
  }
  if (Object.keys(handler).length === 0) handler.get = () => { throw new Error('trap get'); };
  return new Proxy(target, handler);
}

/** A value that only JavaScript can hand over. */
function hostile(rng, depth) {
  switch (rng.int(0, 17)) {
    case 0: { const o = { role: 'user', content: 'x' }; o.self = o; return o; }
    case 1: { const a = [{ role: 'user', content: 'x' }]; a.push(a); return a; }
    case 2: return deep(rng.bool(0.2) ? 100_000 : rng.int(90, 3_000), rng.bool());
    case 3: return throwingProxy(rng, rng.bool() ? {} : []);
    case 4: return throwingProxy(rng, () => summaryResponse());
    case 5: { const { proxy, revoke } = Proxy.revocable(rng.bool() ? {} : [], {}); revoke(); return proxy; }
    case 6: {
      const o = {};
      Object.defineProperty(o, rng.pick(KEYS), { enumerable: true, get() { throw new Error('getter'); } });
      return o;
    }
    case 7: {
      // A getter that answers differently on each read (valid, then hostile).
      let n = 0;
      const o = {};
      Object.defineProperty(o, rng.pick(KEYS), { enumerable: true, get: () => (n++ === 0 ? 1 : { self: o }) });
      return o;
    }
    case 8: return { toJSON() { throw new Error('toJSON'); } };
    case 9: { const c = {}; c.c = c; return { toJSON: () => c }; }
    case 10: return 10n;
    case 11: return Symbol('s');
    case 12: return new Map([[rng.pick(KEYS), value(rng, depth + 1)], [{}, 1]]);
    case 13: return Object.freeze([value(rng, depth + 1)]);
    case 14: { const a = [1, 2, 3]; Object.defineProperty(a, 1, { get() { throw new Error('element'); } }); return a; }
    case 15: return Object.create(null);
    default: return rng.bool(0.5) ? new Date(NaN) : new Uint8Array(4);
  }
}

/** A function a caller might pass: answers, throws, rejects or returns junk. */
function callback(rng) {
  switch (rng.int(0, 6)) {
    case 0: return summarize;
    case 1: return () => { throw new Error('callback threw'); };
    case 2: return async () => { throw new Error('callback rejected'); };
    case 3: return () => 42;
    case 4: return async () => hostile(rng, 3);
    default: return () => undefined;
  }
}

/** A random value: mostly valid pieces, sometimes hostile ones. */
function value(rng, depth = 0) {
  const r = rng();
  if (r < 0.12) return hostile(rng, depth);
  if (r < 0.2) return callback(rng);
  if (r < 0.35) return rng.pick(NUMBERS);
  if (r < 0.5) return rng.pick(STRINGS);
  if (r < 0.56) return rng.pick([true, false, null, undefined]);
  if (depth >= 4 || r < 0.66) return rng.bool() ? msgs()[rng.int(0, 4)] : [];
  if (r < 0.78) return Array.from({ length: rng.int(0, 4) }, () => value(rng, depth + 1));
  return object(rng, depth + 1);
}

/** An object with option keys (some of them valid for the call, `base`). */
function object(rng, depth = 0, base = {}) {
  const o = { ...base };
  // Own data properties (a `__proto__` key is a key, not the prototype).
  for (let i = rng.int(0, 5); i > 0; i--) {
    Object.defineProperty(o, rng.pick(KEYS), { value: value(rng, depth), enumerable: true, writable: true, configurable: true });
  }
  if (rng.bool(0.1)) return throwingProxy(rng, o);
  return o;
}

// ---- Calls -------------------------------------------------------------------------------------

const ctx = () => ({ model: SONNET, summarize, summaryTimeoutMs: 5_000 });

/**
 * Every export with its arguments: each argument valid, or replaced by a random value, and
 * every options object given random keys on top of its valid ones. A callback that never
 * answers is bounded by the context's `summaryTimeoutMs` (kept unless the case replaces it).
 */
function calls(rng) {
  const opt = (base = {}) => (rng.bool(0.8) ? object(rng, 0, base) : value(rng));
  const arg = (valid) => (rng.bool(0.75) ? valid : value(rng));
  const ctxArg = (extra = {}) => (rng.bool(0.85) ? object(rng, 0, { ...ctx(), ...extra }) : value(rng));
  return {
    roughTokenCountEstimation: () => [arg('abcd'), arg(4)],
    tokenCountWithEstimation: () => [arg(msgs()), opt()],
    getContextWindowForModel: () => [arg(SONNET), opt()],
    getMaxOutputTokensForModel: () => [arg(SONNET), opt()],
    getModelOutputLimits: () => [arg(SONNET), opt()],
    getEffectiveContextWindowSize: () => [arg(SONNET), opt()],
    getAutoCompactThreshold: () => [arg(SONNET), opt()],
    calculateTokenWarningState: () => [arg(1000), arg(SONNET), opt()],
    isAutoCompactEnabled: () => [opt()],
    shouldAutoCompact: () => [arg(msgs()), arg(SONNET), opt()],
    stripImagesFromMessages: () => [arg(msgs()), opt()],
    stripReinjectedAttachments: () => [arg(msgs()), opt()],
    groupMessagesByApiRound: () => [arg(msgs()), opt()],
    parseContextOverflowError: () => [arg('prompt is too long: 200001 tokens > 200000 maximum')],
    truncateHeadForPTLRetry: () => [arg(msgs()), arg('prompt is too long'), opt()],
    microCompact: () => [arg(msgs()), opt({ keepRecent: 0 })],
    createCompactBoundaryMessage: () => [arg('manual'), arg(100), opt()],
    parseTranscript: () => [arg('{"type":"user","message":{"role":"user","content":"hi"}}')],
    serializeTranscript: () => [arg([{ type: 'user', message: { role: 'user', content: 'hi' } }])],
    toApiMessages: () => [arg(msgs()), opt()],
    validateForApi: () => [arg(msgs()), opt()],
    buildApiContextManagement: () => [opt()],
    applyApiCompaction: () => [arg(msgs()), arg({ content: [{ type: 'compaction', content: 'summary' }], stop_reason: rng.pick(['end_turn', 'compaction']) }), opt()],
    previewCompaction: () => [arg(msgs()), ctxArg()],
    compactConversation: () => [arg(msgs()), ctxArg(), opt()],
    trySessionMemoryCompaction: () => [arg(msgs()), ctxArg({ sessionMemory: 'notes' }), opt()],
    autoCompactIfNeeded: () => [arg(msgs()), ctxArg(), opt()],
    reactiveCompact: () => [arg(msgs()), ctxArg(), arg('prompt is too long'), opt()],
    buildPostCompactMessages: () => [arg({ boundaryMarker: { type: 'system' }, summaryMessages: [] })],
    offlineSummarizer: () => [opt()],
    loadExtras: () => [opt()],
    // A no-op in Node (the module is ready at import), exported so that every entry links the same names.
    initSync: () => [opt()],
    setEnvironmentDefaults: () => [opt()],
    simulateSession: () => [arg('{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1"}\n'), opt({ policies: [rng.pick(['claude-code', 'none'])] })],
    getConstants: () => [],
    errorCodes: () => [],
    // The plain-JS summarizers are only built (never called: they would reach a network).
    anthropicSummarizer: () => [opt({ apiKey: 'k' })],
    openaiSummarizer: () => [opt({ apiKey: 'k' })],
    langchainSummarizer: () => [opt({ model: { invoke: summarize } })],
  };
}

/** What every case may call besides the functions above. */
const NOT_CALLED = new Set(['default', 'constants', 'Compactor', 'ContextCompactionError']);

/** Calls `f`; a promise must settle within 20 s. Returns ['ok', value] or ['error', e]. */
async function outcome(f) {
  let r;
  try {
    r = f();
  } catch (e) {
    return ['error', e];
  }
  if (!(r instanceof Promise)) return ['ok', r];
  let timer;
  const pending = new Promise((resolve) => { timer = setTimeout(() => resolve(['pending']), 20_000); });
  try {
    return await Promise.race([r.then((v) => ['ok', v], (e) => ['error', e]), pending]);
  } finally {
    clearTimeout(timer);
  }
}

function checkOutcome([state, e], where) {
  assert.notEqual(state, 'pending', `${where}: the promise never settled`);
  if (state !== 'error') return;
  assert.ok(e instanceof Error, `${where}: threw a non-Error ${typeof e === 'symbol' ? 'symbol' : String(e)}`);
  assert.ok(!(e instanceof WebAssembly.RuntimeError), `${where}: a WebAssembly trap: ${e.message}`);
  assert.equal(typeof e.code, "string", `${where}: an error without a code: ${e.message}\n${e.stack}`);
  assert.notEqual(e.code, 'INSTANCE_RESET', `${where}: the instance trapped: ${e.message}`);
}

// ---- Samples -----------------------------------------------------------------------------------

/** Cheap calls whose answers must never change. */
function cheapSamples() {
  return JSON.stringify({
    count: cc.tokenCountWithEstimation(msgs()),
    should: cc.shouldAutoCompact(msgs(), SONNET),
    micro: cc.microCompact(msgs(), { keepRecent: 0 }).tokensFreed,
    valid: cc.validateForApi(msgs()).valid,
    api: cc.toApiMessages(msgs()).length,
    cm: cc.buildApiContextManagement({ clearThinking: true }),
    window: cc.getContextWindowForModel(SONNET),
    transcript: cc.serializeTranscript(cc.parseTranscript('{"type":"user","message":{"role":"user","content":"hi"}}')),
  });
}

/** A whole compaction and a Compactor round trip. */
async function fullSamples() {
  const r = await cc.compactConversation(msgs(), { model: SONNET, summarize });
  const c = new cc.Compactor({ model: SONNET, summarize, messages: msgs() });
  const restored = cc.Compactor.restore(c.snapshot(), c.messages, { model: SONNET, summarize });
  const out = JSON.stringify({ summary: r.summary, kept: r.messagesToKeep.length, n: restored.length, t: restored.tokenCount });
  c.free();
  restored.free();
  return out;
}

// ---- The run -----------------------------------------------------------------------------------

test(`every export's arguments and options, ${CASES} seeded hostile cases (seed ${SEED}): a value or a coded error, and the instance answers as before`, { timeout: 900_000 }, async (t) => {
  const cheap = cheapSamples();
  const full = await fullSamples();
  const uncaught = [];
  const onUncaught = (e) => uncaught.push(e);
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  const rng = prng(SEED);
  const table = calls(rng);
  // Every exported function is fuzzed: a new export fails here until it is added above.
  const exported = Object.keys(cc).filter((k) => typeof cc[k] === 'function' && !NOT_CALLED.has(k));
  assert.deepEqual(exported.filter((k) => !(k in table)), [], 'exports the fuzzer does not call');
  const names = Object.keys(table);
  const counts = { ok: 0, error: 0 };
  const codes = {};
  try {
    for (let i = 0; i < CASES; i++) {
      const where = `seed ${SEED} case ${i}`;
      if (i % 7 === 6) {
        // The Compactor: constructor, push, setUsage, compact, restore with random values.
        const c = new cc.Compactor({ model: SONNET, summarize, messages: msgs() });
        const calls = [
          ['new Compactor', () => new cc.Compactor(object(rng, 0, rng.bool(0.7) ? { model: SONNET, summarize } : {}))],
          ['push', () => c.push(value(rng))],
          ['pushMany', () => c.pushMany(value(rng))],
          ['setUsage', () => c.setUsage(rng.bool() ? object(rng) : value(rng))],
          ['compact', () => c.compact(rng.bool() ? object(rng) : value(rng))],
          ['restore', () => cc.Compactor.restore(rng.bool() ? object(rng, 0, c.snapshot()) : value(rng), rng.bool() ? c.messages : value(rng), object(rng, 0, { model: SONNET, summarize }))],
        ];
        for (const [name, f] of calls) {
          const o = await outcome(f);
          checkOutcome(o, `${where} Compactor ${name}`);
          if (o[0] === 'ok' && o[1] instanceof cc.Compactor && o[1] !== c) o[1].free();
        }
        c.free();
      } else {
        const name = rng.pick(names);
        const args = table[name]();
        const o = await outcome(() => cc[name](...args));
        checkOutcome(o, `${where} ${name}`);
        counts[o[0]]++;
        if (o[0] === 'error') codes[o[1].code] = (codes[o[1].code] ?? 0) + 1;
        if (name === 'setEnvironmentDefaults') cc.setEnvironmentDefaults(process.env);
      }
      assert.equal(cheapSamples(), cheap, `${where}: the sample calls answer differently`);
      if (i % 20 === 19) assert.equal(await fullSamples(), full, `${where}: a compaction answers differently`);
    }
    // A 100 MB string where a string option is read, once per kind of reader.
    for (const f of [
      () => cc.getContextWindowForModel(BIG),
      () => cc.compactConversation(msgs(), { model: SONNET, summarize, customInstructions: BIG }, {}),
      () => cc.compactConversation(msgs(), { model: SONNET, summarize }, { customInstructions: BIG }),
      () => cc.buildApiContextManagement({ compactInstructions: BIG }),
      () => cc.microCompact(msgs(), { compactableTools: [BIG] }),
      () => cc.tokenCountWithEstimation(msgs(), { system: BIG }),
    ]) {
      checkOutcome(await outcome(f), 'a 100 MB string option');
    }
  } finally {
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
  }
  assert.deepEqual(uncaught.map((e) => (e && e.message) || String(e)), [], 'nothing escaped as an uncaught exception');
  assert.equal(cheapSamples(), cheap);
  assert.equal(await fullSamples(), full);
  // The run must reach both answers (a fuzzer that only ever errs tests nothing).
  assert.ok(counts.ok > CASES / 20 && counts.error > CASES / 20, JSON.stringify(counts));
  t.diagnostic(`answers: ${JSON.stringify(counts)}; error codes: ${JSON.stringify(codes)}`);
});

// What this fuzzer found (each failed before its fix).
test('options fuzzer findings stay fixed: a function where JSON is read, Proxies given to the summarizer factories', async () => {
  // `system` / `tools` that JSON.stringify writes as undefined (a function) threw a bare
  // `Option::unwrap_throw()` Error from inside WebAssembly (and left an async call pending).
  const m = [{ role: 'user', content: 'x' }];
  assert.throws(() => cc.shouldAutoCompact(m, SONNET, { system: () => 1 }), (e) => e.code === 'INVALID_ARGUMENT' && /options\.system/.test(e.message));
  await assert.rejects(cc.previewCompaction(m, { model: SONNET, system: () => 1 }), (e) => e.code === 'INVALID_ARGUMENT' && /context\.system/.test(e.message));
  // The plain-JS summarizer factories let a Proxy's trap error escape without a code.
  const keys = new Proxy({}, { ownKeys() { throw new Error('no keys'); } });
  const descriptor = new Proxy({}, { ownKeys: () => ['apiKey'], getOwnPropertyDescriptor() { throw new Error('no descriptor'); } });
  for (const [name, f] of [
    ['anthropicSummarizer', () => cc.anthropicSummarizer(keys)],
    ['anthropicSummarizer', () => cc.anthropicSummarizer(descriptor)],
    ['openaiSummarizer', () => cc.openaiSummarizer(keys)],
    ['openaiSummarizer', () => cc.openaiSummarizer(descriptor)],
    ['langchainSummarizer', () => cc.langchainSummarizer({ invoke: summarize }, keys)],
  ]) {
    assert.throws(f, (e) => e.code === 'INVALID_ARGUMENT' && e.message.startsWith(`${name}: reading the arguments threw`) && e.cause instanceof Error, name);
  }
});
