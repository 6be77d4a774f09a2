// No input may poison the WebAssembly instance or hang a promise (issue 13): every exported
// function, at every argument position, is called with hostile values — cyclic objects and
// arrays, 100,000-deep nesting, Proxies whose every trap throws, arrays whose element getter
// throws, objects with throwing getters and toJSON, a BigInt, a 100 MB string — and must
// answer (a value, or a coded error; a promise that settles within seconds). Afterwards, in
// the same process, sample calls give the same answers as before any of it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { SONNET, runIsolated, summaryResponse } from './helpers/support.mjs';

const deep = (n) => {
  let v = { end: true };
  for (let i = 0; i < n; i++) v = { v };
  return v;
};
const deepArray = (n) => {
  let v = [];
  for (let i = 0; i < n; i++) v = [v];
  return v;
};
const cyclic = () => {
  const o = { role: 'user', content: 'x' };
  o.self = o;
  return o;
};
const cyclicArray = () => {
  const a = [{ role: 'user', content: 'x' }];
  a.push(a);
  return a;
};
const thrower = () => new Proxy({}, {
  get() { throw new Error('trap get'); },
  has() { throw new Error('trap has'); },
  ownKeys() { throw new Error('trap ownKeys'); },
  getOwnPropertyDescriptor() { throw new Error('trap gOPD'); },
  getPrototypeOf() { throw new Error('trap getPrototypeOf'); },
});
const throwingArray = () => new Proxy([{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }], {
  get(t, k) {
    if (k === '1') throw new Error('element getter');
    return Reflect.get(t, k);
  },
});
const throwingGetter = () => ({ role: 'user', get content() { throw new Error('content getter'); } });
const throwingToJson = () => ({ role: 'user', content: 'a', toJSON() { throw new Error('toJSON'); } });
const BIG = 'x'.repeat(100 * 1024 * 1024);

const HOSTILE = {
  cyclic,
  cyclicArray,
  deep100k: () => deep(100_000),
  deepArray100k: () => deepArray(100_000),
  throwingProxy: thrower,
  throwingArray,
  throwingGetter,
  throwingToJson,
  bigint: () => 10n,
  symbol: () => Symbol('s'),
  hostileInArray: () => [{ role: 'user', content: 'a' }, cyclic(), thrower(), deep(100_000)],
};

const msgs = () => [
  { role: 'user', content: 'Please read the file.' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'y'.repeat(4_000) }] },
  { role: 'assistant', content: 'Done.' },
];
const summarize = async () => summaryResponse('The user asked for a file; it was read.');
const context = () => ({ model: SONNET, summarize });

// Each export with valid arguments; every position is replaced in turn by each hostile value.
const CALLS = {
  roughTokenCountEstimation: () => ['abcd', 4],
  tokenCountWithEstimation: () => [msgs(), {}],
  getContextWindowForModel: () => [SONNET, {}],
  getMaxOutputTokensForModel: () => [SONNET, {}],
  getModelOutputLimits: () => [SONNET, {}],
  getEffectiveContextWindowSize: () => [SONNET, {}],
  getAutoCompactThreshold: () => [SONNET, {}],
  calculateTokenWarningState: () => [1000, SONNET, {}],
  isAutoCompactEnabled: () => [{}],
  shouldAutoCompact: () => [msgs(), SONNET, {}],
  stripImagesFromMessages: () => [msgs(), {}],
  stripReinjectedAttachments: () => [msgs(), {}],
  groupMessagesByApiRound: () => [msgs(), {}],
  parseContextOverflowError: () => ['prompt is too long: 200001 tokens > 200000 maximum'],
  truncateHeadForPTLRetry: () => [msgs(), 'prompt is too long', {}],
  microCompact: () => [msgs(), { keepRecent: 0 }],
  createCompactBoundaryMessage: () => ['manual', 100, {}],
  parseTranscript: () => ['{"type":"user","message":{"role":"user","content":"hi"}}'],
  serializeTranscript: () => [[{ type: 'user', message: { role: 'user', content: 'hi' } }]],
  toApiMessages: () => [msgs(), {}],
  validateForApi: () => [msgs(), {}],
  buildApiContextManagement: () => [{}],
  previewCompaction: () => [msgs(), { model: SONNET }],
  compactConversation: () => [msgs(), context(), {}],
  trySessionMemoryCompaction: () => [msgs(), { model: SONNET, sessionMemory: 'notes' }],
  autoCompactIfNeeded: () => [msgs(), context(), {}],
  reactiveCompact: () => [msgs(), context(), 'prompt is too long', {}],
  buildPostCompactMessages: () => [{ boundaryMarker: { type: 'system' }, summaryMessages: [] }],
  offlineSummarizer: () => [{}],
};

/** Calls `f`; a promise must settle within 10 s. Returns ['ok', value] or ['error', e]. */
async function outcome(f) {
  let r;
  try {
    r = f();
  } catch (e) {
    return ['error', e];
  }
  if (!(r instanceof Promise)) return ['ok', r];
  let timer;
  const pending = new Promise((resolve) => { timer = setTimeout(() => resolve(['pending']), 10_000); });
  try {
    return await Promise.race([r.then((v) => ['ok', v], (e) => ['error', e]), pending]);
  } finally {
    clearTimeout(timer);
  }
}

function checkError(e, where) {
  assert.ok(e instanceof Error, `${where}: threw a non-Error ${String(e)}`);
  assert.ok(!(e instanceof WebAssembly.RuntimeError), `${where}: ${e.message}`);
  assert.equal(typeof e.code, 'string', `${where}: an error without a code: ${e.message}`);
}

// Sample calls whose answers must not change after the hostile ones.
async function samples() {
  const r = await cc.compactConversation(msgs(), context());
  return JSON.stringify({
    count: cc.tokenCountWithEstimation(msgs()),
    should: cc.shouldAutoCompact(msgs(), SONNET),
    micro: cc.microCompact(msgs(), { keepRecent: 0 }).tokensFreed,
    valid: cc.validateForApi(msgs()).valid,
    rounds: cc.groupMessagesByApiRound(msgs()).length,
    transcript: cc.serializeTranscript(cc.parseTranscript('{"type":"user","message":{"role":"user","content":"hi"}}')),
    summary: r.summaryMessages.length,
    kept: r.messagesToKeep.length,
  });
}

test('every export at every argument position answers hostile values with a value or a coded error', { timeout: 600_000 }, async () => {
  const before = await samples();
  const uncaught = [];
  const onUncaught = (e) => uncaught.push(e);
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  try {
    for (const [name, args] of Object.entries(CALLS)) {
      const n = args().length;
      for (let pos = 0; pos < n; pos++) {
        for (const [kind, make] of Object.entries(HOSTILE)) {
          const a = args();
          a[pos] = make();
          const where = `${name} argument ${pos} = ${kind}`;
          const [state, e] = await outcome(() => cc[name](...a));
          assert.notEqual(state, 'pending', `${where}: the promise never settled`);
          if (state === 'error') checkError(e, where);
        }
        // Hostile values inside an options object.
        const a = args();
        if (a[pos] !== null && typeof a[pos] === 'object' && !Array.isArray(a[pos])) {
          for (const [kind, make] of Object.entries(HOSTILE)) {
            const [state, e] = await outcome(() => cc[name](...a.map((x, k) => (k === pos ? { ...x, pinned: [make()], config: make() } : x))));
            assert.notEqual(state, 'pending', `${name} options ${kind}: never settled`);
            if (state === 'error') checkError(e, `${name} options ${kind}`);
          }
        }
      }
      // The instance still answers after each function's hostile calls.
      assert.equal(await samples(), before, `after ${name}`);
    }
    // A 100 MB string as message content and as a model name.
    for (const f of [
      () => cc.tokenCountWithEstimation([{ role: 'user', content: BIG }]),
      () => cc.getContextWindowForModel(BIG),
      () => cc.parseTranscript(BIG),
    ]) {
      const [state, e] = await outcome(f);
      if (state === 'error') checkError(e, 'a 100 MB string');
    }
    assert.equal(cc.tokenCountWithEstimation([{ role: 'user', content: BIG }]), BIG.length / 4);
    // The Compactor's methods.
    for (const [kind, make] of Object.entries(HOSTILE)) {
      const [s1, e1] = await outcome(() => new cc.Compactor(make()));
      if (s1 === 'error') checkError(e1, `new Compactor(${kind})`);
      const c = new cc.Compactor({ model: SONNET, summarize, messages: msgs() });
      let added = 0;
      for (const [method, call] of [
        ['push', () => c.push(make())],
        ['pushMany', () => c.pushMany(make())],
        ['setUsage', () => c.setUsage(make())],
        ['compact', () => c.compact(make())],
      ]) {
        const length = c.length;
        const [state, e] = await outcome(call);
        assert.notEqual(state, 'pending', `Compactor.${method}(${kind}): never settled`);
        if (state === 'error') {
          checkError(e, `Compactor.${method}(${kind})`);
          assert.equal(c.length, length, `Compactor.${method}(${kind}) failed and added nothing`);
        } else if (method.startsWith('push')) {
          added += c.length - length;
        }
      }
      // A message with an extra cyclic field, or a toJSON that throws, is still a message
      // (pushed; a compaction reports it when it must write it as JSON); nothing else is.
      assert.equal(added, kind === 'cyclic' || kind === 'throwingToJson' ? 1 : 0, `Compactor after ${kind}`);
      c.free();
    }
  } finally {
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
  }
  assert.deepEqual(uncaught.map((e) => e && e.message), [], 'nothing escaped as an uncaught exception');
  assert.equal(await samples(), before, 'the same answers after every hostile call');
});

test("a reading error carries the caller's own error as its cause", () => {
  assert.throws(() => cc.tokenCountWithEstimation(throwingArray()), (e) => e.code === 'INVALID_MESSAGE' && e.cause instanceof Error && e.cause.message === 'element getter');
  assert.throws(() => cc.roughTokenCountEstimation('abcd', 1e-300), (e) => e.code === 'INVALID_ARGUMENT' && /2\^53/.test(e.message));
});

test('one time limit covers every callback of a compaction, and it is validated', async () => {
  const never = () => new Promise(() => {});
  const big = [
    { role: 'user', content: 'Read /a please.' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'y'.repeat(8_000) }] },
    { role: 'assistant', content: 'Read it.' },
  ];
  const readFileState = { '/a': { content: 'y'.repeat(100), timestamp: 1 } };
  for (const ms of [2 ** 31, 1e20]) {
    await assert.rejects(cc.compactConversation(big, { model: SONNET, summarize, summaryTimeoutMs: ms }),
      (e) => e.code === 'INVALID_ARGUMENT' && /summaryTimeoutMs/.test(e.message) && /2147483647/.test(e.message));
  }
  // A readFile and a hook that never answer: the compaction still completes.
  const r = await cc.compactConversation(big, {
    model: SONNET, summarize, summaryTimeoutMs: 200, readFileState, readFile: never,
    hooks: { preCompact: never },
  });
  assert.ok(r.summaryMessages.length >= 1);
  assert.ok(r.hookErrors?.some((h) => /time/i.test(h.message)), JSON.stringify(r.hookErrors));
  // A summarizer that never answers: TIMEOUT, not a promise pending forever.
  await assert.rejects(cc.compactConversation(big, { model: SONNET, summarize: never, summaryTimeoutMs: 100 }),
    (e) => e.code === 'TIMEOUT');
});

test('one nesting rule: 100 levels read whole, deeper parts as text; parseTranscript and the functions that write messages back refuse deeper', async () => {
  // A line `extra` levels deeper than the line object itself.
  const nested = (extra) => {
    let v = 0;
    for (let i = 0; i < extra; i++) v = [v];
    return v;
  };
  // Written as text: JSON.stringify itself cannot write 8,000 levels.
  const line = (extra) => `{"type":"user","message":{"role":"user","content":"hi"},"x":${'['.repeat(extra)}0${']'.repeat(extra)}}`;
  const ok = line(99); // depth 100
  const parsed = cc.parseTranscript(ok);
  assert.equal(cc.serializeTranscript(parsed), ok + '\n', 'what parses writes back byte for byte');
  for (const extra of [100, 200, 8_000]) {
    assert.throws(() => cc.parseTranscript(line(extra)),
      (e) => e.code === 'MALFORMED_TRANSCRIPT' && /line 1: nested deeper than 100 levels/.test(e.message), String(extra));
  }
  // Messages: depth 100 is read whole; deeper parts are read as text by every function that
  // counts, validates or compacts (the caller cannot change a model's tool input), while
  // toApiMessages, which writes what it read, and a pinned message (written back) refuse them
  // with INVALID_MESSAGE naming the message.
  const msg = (extra) => ({ role: 'user', content: [{ type: 'text', text: 'hi', x: nested(extra) }] });
  const fine = [msg(97), { role: 'assistant', content: 'ok' }]; // message 1, content 2, block 3, x's arrays 4..100
  assert.equal(cc.validateForApi(fine).valid, true);
  assert.equal(cc.toApiMessages(fine).length, 2);
  const deep = [msg(98), { role: 'assistant', content: 'ok' }];
  const tooDeep = (e) => e.code === 'INVALID_MESSAGE' && /messages\[0\]/.test(e.message) && /nested deeper than 100 levels/.test(e.message);
  assert.equal(cc.validateForApi(deep).valid, true);
  assert.throws(() => cc.toApiMessages(deep), tooDeep);
  await cc.previewCompaction(deep, { model: SONNET });
  const compacted = await cc.compactConversation(deep, { model: SONNET, summarize }).then(() => null, (e) => e);
  assert.notEqual(compacted?.code, 'INVALID_MESSAGE', compacted?.message);
  await assert.rejects(cc.compactConversation(fine, { model: SONNET, summarize, pinned: [msg(98)] }), (e) => e.code === 'INVALID_MESSAGE' && /context\.pinned\[0\]/.test(e.message));
});

test('unknown option keys are coded errors everywhere, also in Compactor.compact and maybeAutoCompact', async () => {
  const c = new cc.Compactor({ model: SONNET, summarize, messages: msgs() });
  // `signal` is an option of both calls (this call's own AbortSignal); a misspelt one is not.
  await assert.rejects(c.compact({ signl: new AbortController().signal }),
    (e) => e.code === 'INVALID_ARGUMENT' && /options\.signl is not an option here; known: .*\bsignal\b/.test(e.message));
  await assert.rejects(c.maybeAutoCompact({ keepLastUserMesage: true }),
    (e) => e.code === 'INVALID_ARGUMENT' && /did you mean `keepLastUserMessage`/.test(e.message));
  await assert.rejects(c.compact({ customInstruction: 'x' }),
    (e) => e.code === 'INVALID_ARGUMENT' && /did you mean `customInstructions`/.test(e.message));
  assert.throws(() => cc.microCompact(msgs(), { keepRecnt: 2 }), (e) => e.code === 'INVALID_ARGUMENT' && /keepRecent/.test(e.message));
  assert.throws(() => cc.tokenCountWithEstimation(msgs(), { usageAtt: 1 }), (e) => e.code === 'INVALID_ARGUMENT');
  assert.equal(c.length, msgs().length);
  c.free();
});

// A getter of the caller's message that calls the package while the package is reading that
// message: the outer call must give what it gives without the inner call (the reading state
// of the JS side is set aside for the inner call: js_view.js enterPackage / leavePackage), and
// nothing traps. microCompact inside microCompact trapped (INSTANCE_RESET) before.
test('a getter that calls the package while the package reads: every call gives what it gives without it', async () => {
  const { readFileSync } = await import('node:fs');
  const { activeStart, buildApiView } = await import('../../bench/formats.mjs');
  const { LONG_TRANSCRIPT, OPUS } = await import('./helpers/support.mjs');
  const lines = cc.parseTranscript(readFileSync(LONG_TRANSCRIPT, 'utf8'));
  const api = buildApiView(lines, activeStart(lines));
  const otherApi = buildApiView(lines.slice(0, 700), 0);
  const otherLines = lines.slice(0, 400);
  const inner = {
    microCompact: () => cc.microCompact(otherApi),
    microCompactLines: () => cc.microCompact(otherLines),
    count: () => cc.tokenCountWithEstimation(otherApi, {}),
    toApiMessages: () => cc.toApiMessages(otherLines),
    strip: () => cc.stripImagesFromMessages(otherApi),
    compactor: () => new cc.Compactor({ model: OPUS, messages: otherApi }).warningState(),
    serialize: () => cc.serializeTranscript(otherLines),
  };
  const outer = {
    microCompact: (m) => cc.microCompact(m),
    count: (m) => cc.tokenCountWithEstimation(m, {}),
    validate: (m) => cc.validateForApi(m),
    groups: (m) => cc.groupMessagesByApiRound(m),
    strip: (m) => cc.stripImagesFromMessages(m),
    compactor: (m) => new cc.Compactor({ model: OPUS, messages: m }).tokenCount(),
    preview: async (m) => (await cc.previewCompaction(m, { model: OPUS })).tokensBefore,
  };
  const text = async (f) => {
    try {
      return JSON.stringify(await f());
    } catch (e) {
      return `${e.code}: ${e.message}`;
    }
  };
  for (const [o, run] of Object.entries(outer)) {
    const want = await text(() => run(api));
    assert.ok(!/^[A-Z_]+: /.test(want), want);
    for (const [i, call] of Object.entries(inner)) {
      for (const at of [40, 150]) {
        const messages = api.slice();
        const m = messages[at];
        const content = m.content;
        let calls = 0;
        messages[at] = { ...m, get content() { calls++; call(); return content; } };
        assert.equal(await text(() => run(messages)), want, `${i} inside ${o}, at ${at}`);
        assert.ok(calls > 0);
      }
    }
  }
  assert.equal(await text(() => cc.microCompact(api)), await text(() => cc.microCompact(api.slice())), 'the instance is still the same');
});

test('a getter that throws inside a message of any shape: the error names that message', async () => {
  const throwing = (o, key) => Object.defineProperty(o, key, { get() { throw new Error(`getter ${key}`); }, enumerable: true });
  const filler = { role: 'user', content: 'first' };
  const big = 'x'.repeat(50_000);
  // Each conversation: its message 2 (counting from 0) throws when a part of it is read.
  const cases = {
    'AI SDK call input': [filler, { role: 'user', content: 'go' },
      { role: 'assistant', content: [throwing({ type: 'tool-call', toolCallId: 'a', toolName: 'Read' }, 'input')] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'Read', output: { type: 'text', value: big } }] }],
    'AI SDK result output': [filler,
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'a', toolName: 'Read', input: {} }] },
      { role: 'tool', content: [throwing({ type: 'tool-result', toolCallId: 'a', toolName: 'Read' }, 'output')] }],
    'Chat result content': [filler,
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'Read', arguments: '{}' } }] },
      throwing({ role: 'tool', tool_call_id: 'c' }, 'content')],
    'Responses call arguments': [filler, { role: 'user', content: 'go' },
      throwing({ type: 'function_call', call_id: 'r', name: 'Read' }, 'arguments'),
      { type: 'function_call_output', call_id: 'r', output: big }],
    'Anthropic block': [filler, { role: 'assistant', content: 'ok' },
      { role: 'user', content: [throwing({ type: 'tool_result', tool_use_id: 't' }, 'content')] }],
  };
  // Read by the package's readers (the caller's error as the cause) or written as JSON.
  const named = (e) => e.code === 'INVALID_MESSAGE' && (
    (/^messages\[2\]: reading the messages threw: getter /.test(e.message) && e.cause instanceof Error && /^getter /.test(e.cause.message))
    || /^messages\[2\]: cannot be read as JSON \(getter /.test(e.message));
  for (const [what, m] of Object.entries(cases)) {
    for (const [fn, call] of Object.entries({
      tokenCountWithEstimation: () => cc.tokenCountWithEstimation(m),
      microCompact: () => cc.microCompact(m, { keepRecent: 0 }),
      validateForApi: () => cc.validateForApi(m),
      toApiMessages: () => cc.toApiMessages(m),
    })) {
      assert.throws(call, (e) => named(e) || assert.fail(`${what}, ${fn}: ${e.code} ${e.message}`));
    }
    await assert.rejects(cc.compactConversation(m, { model: SONNET, summarize: async () => summaryResponse }),
      (e) => named(e) || assert.fail(`${what}, compactConversation: ${e.code} ${e.message}`));
  }
  // The package still answers.
  assert.equal(typeof cc.tokenCountWithEstimation([filler]), 'number');
});

test('a message named after a reading error keeps the first error as the cause, even when a getter read again calls the package and fails', () => {
  const m0 = { role: 'user', get content() { try { cc.tokenCountWithEstimation(5); } catch { /* the inner call's own error */ } return 'hi'; } };
  const call = Object.defineProperty({ type: 'function_call', call_id: 'r', name: 'Read' }, 'arguments', { get() { throw new Error('getter arguments'); }, enumerable: true });
  const m = [m0, { role: 'user', content: 'go' }, call, { type: 'function_call_output', call_id: 'r', output: 'x'.repeat(50_000) }];
  for (const f of [() => cc.tokenCountWithEstimation(m), () => cc.microCompact(m, { keepRecent: 0 }), () => cc.validateForApi(m), () => cc.toApiMessages(m)]) {
    assert.throws(f, (e) => e.code === 'INVALID_MESSAGE' && e.message === 'messages[2]: reading the messages threw: getter arguments'
      && e.cause instanceof Error && e.cause.message === 'getter arguments');
  }
});

// A conversation of 40 turns of 4,000 characters (about 40,000 tokens).
const talk = () => {
  const conv = [];
  for (let i = 0; i < 20; i++) {
    conv.push({ role: 'user', content: `q${i} ` + 'w'.repeat(2_000) });
    conv.push({ role: 'assistant', content: `a${i} ` + 'v'.repeat(2_000) });
  }
  return conv;
};

test('a read-file state the caller froze or sealed is left as it is: every compaction path resolves (the state cannot be cleared), the process lives on', async () => {
  const states = {
    frozen: () => Object.freeze({ '/a': 'A' }),
    sealed: () => Object.seal({ '/a': 'A' }),
    nonConfigurable: () => Object.defineProperty({}, '/a', { value: 'A', enumerable: true, configurable: false }),
    mapClearThrows: () => Object.assign(new Map([['/a', 'A']]), { clear() { throw new Error('read-only map'); } }),
    frozenArray: () => Object.freeze(['/a']),
  };
  const summarize = async () => summaryResponse('The user asked twenty questions; each was answered.');
  for (const [what, state] of Object.entries(states)) {
    const key = what === 'frozenArray' ? 'loadedNestedMemoryPaths' : 'readFileState';
    const r = await cc.compactConversation(talk(), { model: SONNET, summarize, [key]: state() });
    assert.match(r.summary, /twenty questions/, what);
    const auto = await cc.autoCompactIfNeeded(talk(), { model: SONNET, summarize, config: { contextWindow: 40_000 }, [key]: state() });
    assert.equal(auto.wasCompacted, true, `${what}: ${auto.skipped ?? auto.error?.message}`);
    const c = new cc.Compactor({ model: SONNET, summarize, messages: talk(), [key]: state() });
    assert.match((await c.compact()).summary, /twenty questions/, what);
  }
  // A state that can be cleared still is.
  const readFileState = { '/a': 'A' };
  await cc.compactConversation(talk(), { model: SONNET, summarize, readFileState });
  assert.deepEqual(readFileState, {});
});

test('a sparse array whose length is far past its messages is a coded error, never a trap or a crash of the process', () => {
  const sparse = (len) => Object.assign([{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }], { length: len });
  const sparseContent = (len) => [{ role: 'user', content: Object.assign([{ type: 'text', text: 'x' }], { length: len }) }, { role: 'assistant', content: 'hi' }];
  const coded = (what, expected) => (e) => (e.name === 'ContextCompactionError' && expected.test(`${e.code} ${e.message}`)) || assert.fail(`${what}: ${e.name} ${e.code} ${e.message}`);
  for (const len of [2 ** 26, 2 ** 32 - 1]) {
    const tooLong = /^INVALID_ARGUMENT messages is an array longer than 16,777,216 elements/;
    for (const [fn, call] of Object.entries({
      tokenCountWithEstimation: () => cc.tokenCountWithEstimation(sparse(len)),
      shouldAutoCompact: () => cc.shouldAutoCompact(sparse(len), SONNET),
      microCompact: () => cc.microCompact(sparse(len)),
      Compactor: () => new cc.Compactor({ model: SONNET, messages: sparse(len) }),
      pushMany: () => new cc.Compactor({ model: SONNET }).pushMany(sparse(len)),
    })) {
      assert.throws(call, coded(`${fn}, length ${len}`, tooLong));
    }
    const blocks = /^INVALID_MESSAGE messages\[0\]: reading the messages threw: an array of \d+ elements in a message/;
    for (const [fn, call] of Object.entries({
      tokenCountWithEstimation: () => cc.tokenCountWithEstimation(sparseContent(len)),
      microCompact: () => cc.microCompact(sparseContent(len)),
      validateForApi: () => cc.validateForApi(sparseContent(len)),
      Compactor: () => new cc.Compactor({ model: SONNET, messages: sparseContent(len) }),
    })) {
      assert.throws(call, coded(`${fn}, content of length ${len}`, blocks));
    }
  }
  // Within the bound, the first hole is named.
  assert.throws(() => new cc.Compactor({ model: SONNET, messages: sparse(1_000) }), coded('length 1000', /^INVALID_MESSAGE messages\[2\]: not a message/));
  assert.equal(cc.tokenCountWithEstimation([{ role: 'user', content: 'hello' }]), 1);
});

test('a signal that is not an AbortSignal is INVALID_ARGUMENT before the summarizer is called, not a summarizer failure', async () => {
  let calls = 0;
  const summarize = async () => { calls++; return summaryResponse(); };
  for (const signal of [{}, { aborted: false }, { aborted: false, addEventListener() {} }, 5]) {
    await assert.rejects(cc.compactConversation(talk(), { model: SONNET, summarize, signal }),
      (e) => e.code === 'INVALID_ARGUMENT' && /^context\.signal must be an AbortSignal/.test(e.message));
    await assert.rejects(cc.autoCompactIfNeeded(talk(), { model: SONNET, summarize, signal, config: { contextWindow: 40_000 } }),
      (e) => e.code === 'INVALID_ARGUMENT');
  }
  assert.equal(calls, 0);
  // An EventTarget with `aborted` (what an AbortSignal is to the library) works.
  const target = Object.assign(new EventTarget(), { aborted: false });
  assert.match((await cc.compactConversation(talk(), { model: SONNET, summarize, signal: target })).summary, /they were done/);
});

test('a freed Compactor says so with a coded error: thrown by its synchronous methods, a rejection from the ones that return a promise', async () => {
  const c = new cc.Compactor({ model: SONNET, summarize: async () => summaryResponse(), messages: [{ role: 'user', content: 'hi' }] });
  c.free();
  c.free(); // freeing twice is harmless
  const freed = (e) => e.name === 'ContextCompactionError' && e.code === 'INVALID_ARGUMENT' && /^this Compactor was freed/.test(e.message);
  assert.throws(() => c.length, freed);
  assert.throws(() => c.push({ role: 'user', content: 'x' }), freed);
  assert.throws(() => c.tokenCount(), freed);
  assert.throws(() => c.warningState(), freed);
  assert.throws(() => c.snapshot(), freed);
  for (const call of [() => c.compact(), () => c.maybeAutoCompact()]) {
    let p;
    assert.doesNotThrow(() => { p = call(); });
    await assert.rejects(p, freed);
  }
  // The end of a `using` block (Symbol.dispose) frees it the same way.
  if (typeof Symbol.dispose === 'symbol') {
    const d = new cc.Compactor({ model: SONNET });
    d[Symbol.dispose]();
    assert.throws(() => d.tokenCount(), freed);
  }
});

test('a conversation with nothing the model saw (no turn, only empty messages) is NOTHING_TO_COMPACT before any summarizer call', async () => {
  let calls = 0;
  const summarize = async () => { calls++; return summaryResponse(); };
  const line = (type, uuid, more) => ({ type, uuid, isSidechain: false, sessionId: 's', ...more });
  // (Sub-agent lines alone are a sub-agent's own file: its conversation, tests/node/transcript-chain.test.mjs.)
  const cases = {
    'no turn at all': [line('system', 'a', { subtype: 'informational', content: 'hi' }), line('progress', 'b', { data: {} })],
    'empty messages': [{ role: 'user', content: '' }, { role: 'assistant', content: [] }],
  };
  for (const [what, msgs] of Object.entries(cases)) {
    await assert.rejects(cc.compactConversation(msgs, { model: SONNET, summarize }), (e) => e.code === 'NOTHING_TO_COMPACT' || assert.fail(`${what}: ${e.code} ${e.message}`));
  }
  assert.equal(calls, 0);
});

test('a callback that never answers is named in the timeout: the hook, not the summarizer', async () => {
  const r = await cc.compactConversation(talk(), {
    model: SONNET,
    summarize: async () => summaryResponse(),
    summaryTimeoutMs: 300,
    hooks: { sessionStart: () => new Promise(() => {}) },
  });
  assert.equal(r.hookErrors.length, 1);
  assert.match(r.hookErrors[0].message, /^The sessionStart hook did not answer within 300 ms/);
  await assert.rejects(cc.compactConversation(talk(), { model: SONNET, summarize: () => new Promise(() => {}), summaryTimeoutMs: 300 }),
    (e) => /The summarizer did not answer within 300 ms/.test(e.message) || assert.fail(`${e.code} ${e.message}`));
});

test('a thrown number or boolean is named in the error; a thrown HTTP status is retried as that status', async () => {
  for (const [thrown, text] of [[529, '529'], [false, 'false']]) {
    let calls = 0;
    const summarize = async () => { calls++; throw thrown; };
    await assert.rejects(cc.compactConversation(talk(), { model: SONNET, summarize, retryBaseMs: 1 }),
      (e) => (e.code === 'SUMMARIZER_FAILED' && e.message.endsWith(`: ${text}`) && e.cause === thrown) || assert.fail(`${e.code} ${e.message}`));
    if (thrown === 529) assert.ok(calls > 1, `529 is retried (${calls} calls)`);
    else assert.equal(calls, 1);
  }
});

test('a calibration past what usage can teach is INVALID_ARGUMENT, never a count past a safe integer', () => {
  const msgs = [{ role: 'user', content: 'hello there' }];
  for (const calibration of [{ overhead: 1e300, ratio: 1 }, { overhead: 0, ratio: 1e300 }, { overhead: 2e7, ratio: 1 }]) {
    assert.throws(() => cc.tokenCountWithEstimation(msgs, { calibration }),
      (e) => e.code === 'INVALID_ARGUMENT' && /^options\.calibration\.(overhead|ratio) is implausibly large/.test(e.message));
  }
  assert.equal(cc.tokenCountWithEstimation(msgs, { calibration: { overhead: 26_000, ratio: 1.3 } }) > 26_000, true);
});

test('a tokenCounter answer past any tokenizer is INVALID_ARGUMENT naming it, not a message error or a clamped count', () => {
  const msgs = [
    { role: 'user', content: 'read it' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Read', input: { path: '/a' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'contents of a' }] },
  ];
  for (const n of [2 ** 31 - 1, 1e12, 2 ** 53]) {
    assert.throws(() => cc.tokenCountWithEstimation(msgs, { tokenCounter: () => n }),
      (e) => e.code === 'INVALID_ARGUMENT' && /^options\.tokenCounter returned \d+ tokens for a text of \d+ characters/.test(e.message) || assert.fail(`${n}: ${e.code} ${e.message}`));
  }
  // A tokenizer's real answers (never more tokens than bytes) count.
  assert.equal(typeof cc.tokenCountWithEstimation(msgs, { tokenCounter: (t) => t.length }), 'number');
});

test('a tool input nested past what JSON can write is a coded error, never dropped from the count', () => {
  const nest = (n) => { let v = { end: true }; for (let i = 0; i < n; i++) v = { v }; return v; };
  const msgs = (depth) => [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Write', input: nest(depth) }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] },
  ];
  assert.ok(cc.tokenCountWithEstimation(msgs(3_000)) > 8_000);
  assert.throws(() => cc.tokenCountWithEstimation(msgs(20_000)),
    (e) => e.code === 'INVALID_MESSAGE' && /^messages\[1\]: reading the messages threw: a value that cannot be written as JSON/.test(e.message) || assert.fail(`${e.code} ${e.message}`));
});

test('validateForApi reports an empty or blank text block and a tool call id used twice, as the Messages API does', () => {
  for (const text of ['', '  \n\t'])
    assert.deepEqual(cc.validateForApi([{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'text', text }] }]),
      { valid: false, problems: [{ message: 1, problem: 'an empty or blank text block (text blocks must contain non-whitespace text)' }] });
  const call = { role: 'assistant', content: [{ type: 'tool_use', id: 'dup', name: 'Read', input: {} }] };
  const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'dup', content: 'r' }] };
  assert.deepEqual(cc.validateForApi([{ role: 'user', content: 'go' }, call, result, call, result]),
    { valid: false, problems: [{ message: 3, problem: 'tool_use id dup is used more than once' }] });
});

test('a Map where an options or config object goes is a coded error (its entries would be silently ignored); a Map read-file state still reads', async () => {
  const msgs = [{ role: 'user', content: 'hello' }];
  assert.throws(() => cc.isAutoCompactEnabled(new Map([['disableCompact', true]])), (e) => e.code === 'INVALID_CONFIG' && /a Map or Set is not an options object/.test(e.message));
  assert.throws(() => cc.getAutoCompactThreshold(SONNET, new Map([['contextWindow', 50_000]])), (e) => e.code === 'INVALID_CONFIG');
  assert.throws(() => cc.microCompact(msgs, new Map([['keepRecent', 0]])), (e) => e.code === 'INVALID_ARGUMENT' && /^options: a Map or Set/.test(e.message));
  assert.throws(() => cc.tokenCountWithEstimation(msgs, new Set()), (e) => e.code === 'INVALID_ARGUMENT');
  const readFileState = new Map([['/src/a.rs', { content: 'fn a() {}', timestamp: 1 }]]);
  const r = await cc.compactConversation(talk(), { model: SONNET, summarize: async () => summaryResponse(), readFileState });
  assert.equal(typeof r.summary, 'string');
  assert.equal(readFileState.size, 0, 'the Map is cleared after the compaction, as an object is');
});

test('a malformed block is named with its field in every function, as the count names it (not in the typed reader\'s own words)', async () => {
  const cases = [
    [[{ role: 'user', content: [null] }], /^messages\[0\]\.content\[0\]: content block must be an object$/],
    [[{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'text', text: 5 }] }], /^messages\[1\]\.content\[1\]: a `text` block needs a string `text`$/],
  ];
  for (const [msgs, named] of cases) {
    for (const call of [() => cc.tokenCountWithEstimation(msgs), () => cc.validateForApi(msgs), () => cc.toApiMessages(msgs)]) {
      assert.throws(call, (e) => (e.code === 'INVALID_MESSAGE' && named.test(e.message)) || assert.fail(`${e.code} ${e.message}`));
    }
    await assert.rejects(cc.compactConversation(msgs, { model: SONNET, summarize: async () => summaryResponse() }),
      (e) => (e.code === 'INVALID_MESSAGE' && named.test(e.message)) || assert.fail(`${e.code} ${e.message}`));
  }
});

test('a thrown error\'s other words (code, API body) follow its message on one line, in parentheses, without repeats', async () => {
  const msgs = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'yo' }, { role: 'user', content: 'more' }];
  const failWith = async (thrown) => {
    const e = await cc.compactConversation(msgs, { model: SONNET, summarize: async () => { throw thrown; } }).then(() => null, (x) => x);
    assert.equal(e.code, 'SUMMARIZER_FAILED');
    return e.message;
  };
  assert.equal(await failWith(Object.assign(new Error('bad request'), { code: 'E_CUSTOM' })), 'the summarizer failed: bad request (E_CUSTOM)');
  const sdk = Object.assign(new Error('400 invalid_request_error'), { status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: 'messages: text content blocks must be non-empty' } } });
  const m = await failWith(sdk);
  assert.ok(!m.includes('\n'), m);
  assert.equal(m, 'the summarizer failed: 400 invalid_request_error (messages: text content blocks must be non-empty)');
});

test('a transcript line whose `message` is not an object is named the same way by the count, validation and compaction', async () => {
  for (const message of ['hello', [1], 5]) {
    const lines = [{ type: 'user', message }, { type: 'user', message: { role: 'user', content: 'x' } }];
    for (const f of [() => cc.tokenCountWithEstimation(lines), () => cc.validateForApi(lines)]) {
      assert.throws(f, (e) => e.code === 'INVALID_MESSAGE' && e.message === "messages[0].message: a transcript line's `message` must be an object");
    }
    await assert.rejects(cc.compactConversation(lines, { model: SONNET, summarize: async () => '<summary>s</summary>' }),
      (e) => e.code === 'INVALID_MESSAGE' && e.message.startsWith('messages[0].message:'));
  }
});

test('arrays past what the instance can hold are refused with a coded error before reading, and nothing else is lost', async () => {
  const a = { role: 'user', content: 'x' };
  const b = { role: 'assistant', content: 'y' };
  const bystander = new cc.Compactor({ model: SONNET, messages: [a, b] });
  const long = { role: 'user', content: 'x'.repeat(4000) };
  const result = await cc.compactConversation([long, b, long], { model: SONNET, summarize: async () => '<summary>s</summary>' });
  // A result array with a huge length (it trapped the instance), and one with holes.
  const holes = [];
  holes.length = 10_000_000;
  assert.throws(() => cc.buildPostCompactMessages({ ...result, hookResults: holes }),
    (e) => e.code === 'INVALID_ARGUMENT' && /result\.hookResults has 10000000 elements/.test(e.message));
  const small = [];
  small.length = 3;
  assert.throws(() => cc.buildPostCompactMessages({ ...result, attachments: small }),
    (e) => e.code === 'INVALID_ARGUMENT' && e.message === 'result.attachments[0] must be a message object');
  // A Compactor given more messages than its table holds (10,000,000 trapped it, uncoded).
  const many = [a];
  many.length = 5_000_000;
  assert.throws(() => new cc.Compactor({ model: SONNET, messages: many }),
    (e) => e.code === 'INVALID_ARGUMENT' && /holds at most 4194304 messages/.test(e.message));
  // The typed reading of validateForApi (6,000,000 messages ran out of address space).
  const dense = Array.from({ length: 2_200_000 }, (_, i) => (i % 2 ? b : a));
  assert.throws(() => cc.validateForApi(dense),
    (e) => e.code === 'INVALID_ARGUMENT' && /messages has 2200000 elements; at most \d+ are read here/.test(e.message));
  assert.equal(bystander.length, 2);
  assert.equal(cc.validateForApi([a, b]).valid, true);
});

test('validateForApi with 40,000 parallel calls in one turn names exactly the one left unanswered (looked up in a set, no longer a list)', () => {
  // 40,000 parallel calls took 7.3 s (each result looked up in a list); a set makes it linear.
  const n = 40_000;
  const uses = Array.from({ length: n }, (_, i) => ({ type: 'tool_use', id: 'toolu_' + i, name: 'Read', input: {} }));
  const results = Array.from({ length: n }, (_, i) => ({ type: 'tool_result', tool_use_id: 'toolu_' + (n - 1 - i), content: 'r' }));
  const m = [{ role: 'user', content: 'go' }, { role: 'assistant', content: uses }, { role: 'user', content: results }, { role: 'assistant', content: 'done' }];
  // No clock: the answer, with one call unanswered, must name exactly it.
  results.pop();
  const v = cc.validateForApi(m);
  assert.equal(v.valid, false);
  assert.deepEqual(v.problems.map((p) => p.problem), ['tool_use toolu_0 has no tool_result in the next message']);
});

test('an attachment with nothing to say sends no empty text block; ToolSearch results are never cleared nor take a keepRecent place', () => {
  const lines = [
    { type: 'attachment', uuid: 'a1', parentUuid: null, attachment: { type: 'hook_success', hookName: 'SessionStart:startup', content: '', stdout: '', exitCode: 0 } },
    { type: 'user', uuid: 'u1', parentUuid: 'a1', message: { role: 'user', content: 'hello' } },
    { type: 'assistant', uuid: 'b1', parentUuid: 'u1', message: { id: 'msg_1', role: 'assistant', content: [{ type: 'text', text: 'hi' }] } },
  ];
  assert.deepEqual(cc.validateForApi(lines), { valid: true, problems: [] });
  assert.deepEqual(cc.toApiMessages(lines)[0].content, [{ type: 'text', text: 'hello' }]);
  const big = 'x'.repeat(4000);
  const pair = (name, i) => [{ role: 'assistant', content: [{ type: 'tool_use', id: 't' + i, name, input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' + i, content: name === 'ToolSearch' ? [{ type: 'tool_reference', tool_name: 'x' }] : big }] }];
  const msgs = [{ role: 'user', content: 'go' }, ...pair('Bash', 0), ...pair('Bash', 1), ...pair('ToolSearch', 2), { role: 'assistant', content: 'done' }];
  const r = cc.microCompact(msgs, { keepRecent: 1 });
  assert.deepEqual(r.clearedToolUseIds, ['t0'], 'the latest Bash result is the one kept');
});

test('a tool input nested past 100 levels does not block compaction: maybeAutoCompact and autoCompactIfNeeded compact it (the deeper parts read as text)', async () => {
  let input = 'leaf';
  for (let i = 0; i < 120; i++) input = { child: input };
  let asked = 0;
  const summarize = async () => {
    asked += 1;
    return '<summary>short</summary>';
  };
  const msgs = [
    { role: 'user', content: 'parse this AST ' + 'x'.repeat(200_000) },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Write', input }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
    { role: 'assistant', content: 'done' },
  ];
  const config = { contextWindow: 60_000 };
  const c = new cc.Compactor({ model: SONNET, summarize, config, messages: msgs });
  const o1 = await c.maybeAutoCompact();
  assert.equal(o1.error, undefined, o1.error?.message);
  assert.equal(o1.wasCompacted, true);
  assert.equal(c.tracking.consecutiveFailures, 0);
  c.free();
  const o = await cc.autoCompactIfNeeded(msgs, { model: SONNET, summarize, config }, { consecutiveFailures: 1 });
  assert.equal(o.error, undefined, o.error?.message);
  assert.equal(o.wasCompacted, true);
  assert.equal(asked, 2);
});

test('the kept messages are those the array held when the compaction was called, whatever a callback does to the array meanwhile', async () => {
  const make = () => {
    const msgs = [];
    for (let i = 0; i < 20; i++) { msgs.push({ role: 'user', content: `request ${i} ` + 'x'.repeat(2000) }); msgs.push({ role: 'assistant', content: `answer ${i}` }); }
    return msgs;
  };
  const cleared = make();
  const lastUser = cleared[38];
  const r = await cc.compactConversation(cleared, { model: SONNET, summarize: async () => { cleared.length = 0; return '<summary>s</summary>'; } }, { keepLastUserMessage: true });
  assert.deepEqual(r.messagesToKeep, [lastUser]);
  const reversed = make();
  const last = reversed[38];
  const r2 = await cc.compactConversation(reversed, { model: SONNET, summarize: async () => { reversed.reverse(); return '<summary>s</summary>'; } }, { keepLastUserMessage: true });
  assert.deepEqual(r2.messagesToKeep, [last]);
});

test("a signal whose methods throw never leaves a compaction unsettled nor escapes as an unhandled rejection (bindings and the summarizers' waits)", () => {
  const r = runIsolated(`
    const out = {};
    process.on('unhandledRejection', (e) => { out.unhandled = String(e?.message ?? e); });
    process.on('uncaughtException', (e) => { out.uncaught = String(e?.message ?? e); });
    const msgs = [];
    for (let i = 0; i < 10; i++) msgs.push({ role: 'user', content: 'q' + i + ' ' + 'x'.repeat(2000) }, { role: 'assistant', content: 'a' + i });
    const hostile = (which) => {
      const s = { aborted: false, addEventListener() {}, removeEventListener() {} };
      s[which] = () => { throw new Error(which + ' failed'); };
      return s;
    };
    const settle = (p) => Promise.race([p.then(() => 'resolved', (e) => 'rejected ' + e.code), new Promise((ok) => setTimeout(() => ok('unsettled'), 5000).unref())]);
    for (const which of ['removeEventListener', 'addEventListener']) {
      out[which] = await settle(cc.compactConversation(msgs, { model: '${SONNET}', signal: hostile(which), summarize: async () => '<summary>s</summary>' }));
      // The Anthropic summarizer receives the same signal: a 529 then an answer, with a wait between.
      let calls = 0;
      const fetch = async () => (++calls === 1
        ? new Response(JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }), { status: 529, headers: { 'retry-after-ms': '5' } })
        : new Response(JSON.stringify({ id: 'm', type: 'message', role: 'assistant', model: 'x', stop_reason: 'end_turn', content: [{ type: 'text', text: '<summary>via fetch</summary>' }], usage: { input_tokens: 1, output_tokens: 1 } }), { headers: { 'content-type': 'application/json' } }));
      const summarize = cc.anthropicSummarizer({ apiKey: 'k', stream: false, fetch, maxRetries: 1 });
      out[which + ' anthropic'] = await settle(cc.compactConversation(msgs, { model: '${SONNET}', signal: hostile(which), summarize }));
    }
    await new Promise((ok) => setTimeout(ok, 50));
    return out;
  `);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.value, {
    removeEventListener: 'resolved',
    'removeEventListener anthropic': 'resolved',
    addEventListener: 'resolved',
    'addEventListener anthropic': 'resolved',
  });
});

test("a custom fetch resolving to what is not a Response is the summarizer's own INVALID_RESPONSE error (Anthropic, OpenAI), never a raw TypeError", async () => {
  const request = { model: SONNET, system: 's', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] };
  for (const bad of [null, undefined, {}, 'text', 42]) {
    for (const [make, cls] of [
      [cc.anthropicSummarizer, cc.anthropicSummarizer.AnthropicApiError],
      [(o) => cc.openaiSummarizer({ ...o, model: 'gpt-4.1-mini' }), cc.openaiSummarizer.OpenAiApiError],
    ]) {
      const summarize = make({ apiKey: 'sk-test', fetch: async () => bad, maxRetries: 0 });
      await assert.rejects(summarize(request, {}), (e) => {
        assert.ok(e instanceof cls, `${cls.name} for ${String(bad)}: got ${e?.constructor?.name}: ${e?.message}`);
        assert.equal(e.code, 'INVALID_RESPONSE');
        assert.match(e.message, /not a Response/);
        return true;
      });
    }
  }
});
