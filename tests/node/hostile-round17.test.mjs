// Seventeenth round of hostile inputs (the probe's findings, /work/probe17-hostile): each test
// fails on the package before the fix (d5c6181) and passes after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Compactor, buildPostCompactMessages, compactConversation, microCompact, shouldAutoCompact, tokenCountWithEstimation } from '../../pkg/node.js';

const conversation = () => {
  const m = [];
  for (let i = 0; i < 6; i++) {
    m.push({ role: 'user', content: `question ${i} ${'q'.repeat(3000)}` });
    m.push({ role: 'assistant', content: `answer ${i} ${'a'.repeat(3000)}` });
  }
  m.push({ role: 'user', content: 'last' });
  return m;
};

// Values whose reading throws: a revoked Proxy (every operation throws, `instanceof` too), a
// Proxy whose getPrototypeOf trap throws, and a Proxy of an Error whose every field read throws.
const hostile = {
  'a revoked Proxy': () => {
    const r = Proxy.revocable({}, {});
    r.revoke();
    return r.proxy;
  },
  'a Proxy whose getPrototypeOf throws': () => new Proxy({}, { getPrototypeOf() { throw new Error('getPrototypeOf trap'); } }),
  'a Proxy of an Error whose reads throw': () => new Proxy(new Error('inner'), { get(_, k) { throw new Error(`get trap ${String(k)}`); } }),
};

// Runs `body` and returns what escaped meanwhile (uncaught exceptions, unhandled rejections),
// with a turn of the event loop after it for the rejections to be reported.
async function escapes(body) {
  const seen = [];
  const onError = (e) => seen.push(e);
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  try {
    const result = await body();
    await new Promise((r) => setTimeout(r, 50));
    return { result, escaped: seen };
  } finally {
    process.off('uncaughtException', onError);
    process.off('unhandledRejection', onError);
  }
}

// A settled promise's outcome, or 'HANG' after `ms`.
const within = (p, ms = 3000) => {
  let timer;
  return Promise.race([
    p.then((v) => ({ ok: v }), (e) => ({ error: e })),
    new Promise((r) => { timer = setTimeout(() => r('HANG'), ms); }),
  ]).finally(() => clearTimeout(timer));
};

// Each case failed before the fix: an abort reason `instanceof` throws on was read inside the
// signal's listener (an uncaught exception, the wait never ended); a summarizer's rejection
// was read for the library's timeout flag in a handler of its own (an unhandled rejection).
const ABORTS = [
  ['a revoked Proxy', ['the summary request', 'a hook', 'the wait before a retry']],
  ['a Proxy whose getPrototypeOf throws', ['the summary request', 'a hook', 'the wait before a retry']],
  ['a Proxy of an Error whose reads throw', ['the summary request']],
];
const REJECTIONS = ['a revoked Proxy', 'a Proxy of an Error whose reads throw'];

for (const [name, whens] of ABORTS) {
  const reason = hostile[name];
  for (const when of whens) {
    test(`an abort with ${name} as its reason during ${when} rejects with ABORTED: no hang, nothing escapes`, async () => {
      const { result, escaped } = await escapes(async () => {
        const ac = new AbortController();
        let calls = 0;
        const context = {
          model: 'claude-sonnet-4-5',
          signal: ac.signal,
          retryBaseMs: 200,
          summarize: async () => {
            calls++;
            if (when === 'the summary request') {
              setTimeout(() => ac.abort(reason()), 10);
              return new Promise(() => {});
            }
            if (when === 'the wait before a retry' && calls === 1) {
              setTimeout(() => ac.abort(reason()), 20);
              throw Object.assign(new Error('overloaded'), { status: 529 });
            }
            return 'SUMMARY';
          },
          hooks: when === 'a hook'
            ? { preCompact: () => { setTimeout(() => ac.abort(reason()), 10); return new Promise(() => {}); } }
            : undefined,
        };
        return within(compactConversation(conversation(), context));
      });
      assert.notEqual(result, 'HANG', 'the compaction never settled');
      assert.ok(result.error instanceof Error, 'rejected with an Error');
      assert.equal(result.error.code, 'ABORTED');
      assert.deepEqual(escaped.map(String), []);
    });
  }

}

for (const name of REJECTIONS) {
  const reason = hostile[name];
  test(`a summarizer rejecting with ${name} is SUMMARIZER_FAILED, and nothing escapes as an unhandled rejection`, async () => {
    const { result, escaped } = await escapes(async () => {
      const out = [];
      out.push(await within(compactConversation(conversation(), { model: 'claude-sonnet-4-5', summarize: async () => { throw reason(); } })));
      // Thrown synchronously, and through a Compactor (whose summaries run under the time limit).
      out.push(await within(compactConversation(conversation(), { model: 'claude-sonnet-4-5', summarize: () => { throw reason(); } })));
      const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: async () => { throw reason(); }, messages: conversation() });
      out.push(await within(c.compact()));
      out.push({ count: c.tokenCount() });
      return out;
    });
    for (const r of result.slice(0, 3)) {
      assert.ok(r.error instanceof Error);
      assert.equal(r.error.code, 'SUMMARIZER_FAILED');
    }
    assert.ok(result[3].count > 9000, 'the Compactor kept its conversation');
    assert.deepEqual(escaped.map(String), []);
  });
}

test('microCompact takes a Date (or an ISO-8601 string) for `now` and `lastAssistantTimestamp`, as readFileState timestamps', () => {
  const t0 = Date.parse('2026-03-01T12:00:00Z');
  const messages = [{ role: 'user', content: 'go' }];
  for (let i = 0; i < 3; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${i}`, name: 'Read', input: { file_path: `/f${i}` } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: 'line\n'.repeat(500) }] });
  }
  const cleared = (options) => microCompact(messages, { keepRecent: 0, idleMinutes: 60, ...options }).clearedToolUseIds;
  const idle = t0 - 61 * 60_000;
  const recent = t0 - 5 * 60_000;
  // As numbers: idle clears, recent does not.
  assert.deepEqual(cleared({ now: t0, lastAssistantTimestamp: idle }), ['t0', 't1', 't2']);
  assert.deepEqual(cleared({ now: t0, lastAssistantTimestamp: recent }), []);
  // The same times as Dates, and `now` as an ISO-8601 string: the same answers (a Date `now` was
  // INVALID_ARGUMENT "must be a finite number, got an object").
  assert.deepEqual(cleared({ now: new Date(t0), lastAssistantTimestamp: new Date(idle) }), ['t0', 't1', 't2']);
  assert.deepEqual(cleared({ now: new Date(t0), lastAssistantTimestamp: new Date(recent) }), []);
  assert.deepEqual(cleared({ now: new Date(t0).toISOString(), lastAssistantTimestamp: idle }), ['t0', 't1', 't2']);
  // An invalid Date is refused as NaN is, naming the option.
  for (const key of ['now', 'lastAssistantTimestamp']) {
    assert.throws(() => cleared({ [key]: new Date('nonsense') }), (e) => e.code === 'INVALID_ARGUMENT' && e.message.includes(`options.${key}`));
    assert.throws(() => cleared({ [key]: 'yesterday' }), (e) => e.code === 'INVALID_ARGUMENT' && e.message.includes(`options.${key}`));
  }
});

test('a usage count in another ecosystem\'s names that is not a number is INVALID_TOKEN_COUNT wherever it is read, as setUsage says', async () => {
  const withUsage = (usage) => [
    { role: 'user', content: 'a'.repeat(4000) },
    { role: 'assistant', content: 'ok', usage },
    { role: 'user', content: 'b'.repeat(400) },
  ];
  // (Before: a message's `{prompt_tokens: 1000, completion_tokens: '50'}` counted 1,100 — the
  // output skipped — and `{inputTokens: '1000'}` or `{outputTokens: '50'}` no usage at all (an
  // estimate of 1,101), where setUsage refused each, as every reader refuses `input_tokens: '1000'`.)
  for (const usage of [
    { prompt_tokens: 1000, completion_tokens: '50' },
    { inputTokens: '1000', outputTokens: 50 },
    { outputTokens: '50' },
    { input_tokens: '1000', output_tokens: 50 },
  ]) {
    const code = (f) => {
      try {
        f();
        return 'no error';
      } catch (e) {
        return e.code;
      }
    };
    const readers = {
      tokenCountWithEstimation: () => tokenCountWithEstimation(withUsage(usage)),
      shouldAutoCompact: () => shouldAutoCompact(withUsage(usage), 'claude-sonnet-4-5'),
      'Compactor.push': () => { const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: async () => 'S' }); for (const m of withUsage(usage)) c.push(m); },
      'Compactor.setUsage': () => { const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: async () => 'S', messages: withUsage(undefined) }); c.setUsage(usage); },
    };
    for (const [name, f] of Object.entries(readers)) assert.equal(code(f), 'INVALID_TOKEN_COUNT', `${name} of ${JSON.stringify(usage)}`);
    await assert.rejects(compactConversation(withUsage(usage), { model: 'claude-sonnet-4-5', summarize: async () => 'S' }), (e) => e.code === 'INVALID_TOKEN_COUNT');
  }
  // Numbers read as before; a null name passes to the next one, as in setUsage.
  assert.equal(tokenCountWithEstimation(withUsage({ prompt_tokens: 1000, completion_tokens: 50 })), 1150);
  assert.equal(tokenCountWithEstimation(withUsage({ inputTokens: null, prompt_tokens: 1000, completion_tokens: 50 })), 1150);
  assert.equal(tokenCountWithEstimation(withUsage({ outputTokens: 50 })), 1101); // the output alone: no usage
});

test('Compactor.restore: a snapshot version or count far out of range is named short (1e+300, a string cut), not repeated whole', () => {
  const messages = [{ role: 'user', content: 'hi' }];
  const snapshot = new Compactor({ model: 'claude-sonnet-4-5', summarize: async () => 'S', messages }).snapshot();
  for (const [key, value, said] of [['v', 1e300, '1e+300'], ['v', 'x'.repeat(1_000_000), 'xxxx'], ['messages', 1e300, '1e+300']]) {
    assert.throws(
      () => Compactor.restore({ ...snapshot, [key]: value }, messages, { model: 'claude-sonnet-4-5', summarize: async () => 'S' }),
      (e) => /SNAPSHOT/.test(e.code) && e.message.includes(said) && e.message.length < 200,
    );
  }
});

test('a tokenCounter throwing a value whose reading throws (a revoked Proxy) is its own INVALID_ARGUMENT, not the messages\' INVALID_MESSAGE, and asked once', async () => {
  const count = await import('../../pkg/count-node.js');
  const messages = [{ role: 'user', content: 'one' }, { role: 'assistant', content: 'two' }, { role: 'user', content: 'three' }];
  for (const [entry, f] of [['main', tokenCountWithEstimation], ['count', count.tokenCountWithEstimation]]) {
    for (const [name, make] of [['a revoked Proxy', hostile['a revoked Proxy']], ['a Proxy whose getPrototypeOf throws', hostile['a Proxy whose getPrototypeOf throws']]]) {
      let calls = 0;
      const tokenCounter = () => {
        calls++;
        throw make();
      };
      assert.throws(
        () => f(messages, { tokenCounter }),
        (e) => e.code === 'INVALID_ARGUMENT' && /tokenCounter threw/.test(e.message),
        `${entry}: ${name}`,
      );
      assert.equal(calls, 1, `${entry}: ${name}: asked once`);
    }
  }
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: async () => 'S', tokenCounter: () => { throw hostile['a revoked Proxy'](); } });
  assert.throws(() => c.push(messages[0]), (e) => e.code === 'INVALID_ARGUMENT' && /tokenCounter threw/.test(e.message));
});

test('an API conversation compacted again (its boundary line in front) still gets API messages: the summary and pinned texts keep `role` and `content`', async () => {
  const turn = (i) => [{ role: 'user', content: `question ${i} ${'q'.repeat(3000)}` }, { role: 'assistant', content: `answer ${i} ${'a'.repeat(3000)}` }];
  const form = (m) => (m.type === 'system' && m.subtype === 'compact_boundary' ? 'boundary' : typeof m.role === 'string' && m.type === undefined ? 'api' : `line:${m.type}`);
  // (Before: from the second compaction on, the summary and the pinned texts were Claude Code
  // lines — `{type: 'user', message, isVisibleInTranscriptOnly: true}` — among the caller's API
  // messages: the library's own boundary line made the conversation read as a transcript.)
  let messages = [];
  for (let k = 0; k < 3; k++) {
    for (let i = 0; i < 4; i++) messages.push(...turn(i));
    messages.push({ role: 'user', content: 'go on' });
    const r = await compactConversation(messages, { model: 'claude-sonnet-4-5', summarize: async () => `SUMMARY ${k}`, pinned: ['rule S'] });
    messages = buildPostCompactMessages(r);
    assert.deepEqual(messages.map(form), ['boundary', 'api', 'api'], `compaction ${k + 1}`);
    assert.match(messages[1].content, new RegExp(`SUMMARY ${k}`));
    assert.equal(messages[2].content, 'rule S');
  }
  const c = new Compactor({ model: 'claude-sonnet-4-5', summarize: async () => 'SUMMARY', pinned: ['rule S'] });
  for (let k = 0; k < 3; k++) {
    for (let i = 0; i < 4; i++) c.pushMany(turn(i));
    c.push({ role: 'user', content: 'go on' });
    await c.compact();
    assert.deepEqual(c.messages.map(form), ['boundary', 'api', 'api'], `Compactor compaction ${k + 1}`);
  }
  // A transcript stays lines.
  const lines = [
    { type: 'user', uuid: 'u1', parentUuid: null, message: { role: 'user', content: `question ${'q'.repeat(30000)}` } },
    { type: 'assistant', uuid: 'a1', parentUuid: 'u1', message: { id: 'm1', role: 'assistant', content: [{ type: 'text', text: 'answer' }] } },
    { type: 'user', uuid: 'u2', parentUuid: 'a1', message: { role: 'user', content: 'go on' } },
  ];
  const r = await compactConversation(lines, { model: 'claude-sonnet-4-5', summarize: async () => 'SUMMARY' });
  assert.deepEqual(buildPostCompactMessages(r).map(form), ['boundary', 'line:user']);
});
