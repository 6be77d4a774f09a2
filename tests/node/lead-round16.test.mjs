// Round 16, the lead's fixes. Each test fails on the package before the fix (pkg-snap18).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { Compactor, previewCompaction, shouldAutoCompact, tokenCountWithEstimation } from '../../pkg/node.js';
import { staleAtThreshold, words } from './helpers/stale-ahead.mjs';

const MODEL = 'claude-sonnet-4-5';
const BIG = 'lorem ipsum '.repeat(2_000); // about 6K estimated tokens
const REAL = 170_000; // over the 167K threshold of a 200K window

/** Claude Code lines: a real response, then the assistant line Claude Code writes for an API
 * error (model `<synthetic>`, every count 0). */
function claudeCodeLines() {
  let n = 0, prev = null;
  const line = (type, message, extra = {}) => {
    const uuid = `u${++n}`;
    const l = { type, uuid, parentUuid: prev, sessionId: 's', timestamp: new Date(1.7e12 + n * 1000).toISOString(), message, ...extra };
    prev = uuid;
    return l;
  };
  return [
    line('user', { role: 'user', content: BIG }),
    line('assistant', {
      id: 'msg_1', role: 'assistant', model: MODEL, content: [{ type: 'text', text: 'Read it.' }], stop_reason: 'end_turn',
      usage: { input_tokens: 10, cache_creation_input_tokens: 2_000, cache_read_input_tokens: REAL - 2_010, output_tokens: 40 },
    }),
    line('user', { role: 'user', content: 'Go on.' }),
    line('assistant', {
      id: 'synthetic-1', role: 'assistant', model: '<synthetic>', stop_reason: 'stop_sequence',
      content: [{ type: 'text', text: 'API Error: Request rejected (429) · rate limited' }],
      usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, server_tool_use: { web_search_requests: 0 }, service_tier: null },
    }, { isApiErrorMessage: true }),
  ];
}

/** The same conversation with the error turn's usage in each ecosystem's empty forms. */
const emptyUsages = () => [
  ['Messages API `usage: {}`', [
    { role: 'user', content: BIG },
    { role: 'assistant', content: 'Read it.', usage: { input_tokens: REAL - 40, output_tokens: 40 } },
    { role: 'user', content: 'Go on.' },
    { role: 'assistant', content: [{ type: 'text', text: 'partial' }], usage: {} },
  ]],
  ['AI SDK usage with every count undefined', [
    { role: 'user', content: BIG },
    { role: 'assistant', content: [{ type: 'text', text: 'Read it.' }], usage: { inputTokens: REAL - 40, outputTokens: 40, totalTokens: REAL } },
    { role: 'user', content: [{ type: 'text', text: 'Go on.' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'partial' }], usage: { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined } },
  ]],
  ['OpenAI Chat usage of zeros', [
    { role: 'user', content: BIG },
    { role: 'assistant', content: 'Read it.', usage: { prompt_tokens: REAL - 40, completion_tokens: 40 } },
    { role: 'user', content: 'Go on.' },
    { role: 'assistant', content: 'partial', usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } },
  ]],
  ['LangChain usage_metadata of zeros', [
    new HumanMessage(BIG),
    new AIMessage({ content: 'Read it.', usage_metadata: { input_tokens: REAL - 40, output_tokens: 40, total_tokens: REAL } }),
    new HumanMessage('Go on.'),
    new AIMessage({ content: 'partial', usage_metadata: { input_tokens: 0, output_tokens: 0, total_tokens: 0 } }),
  ]],
];

test('a Claude Code API-error line (model <synthetic>, every count 0) does not reset the count: it comes from the response before it', async () => {
  const lines = claudeCodeLines();
  const n = tokenCountWithEstimation(lines);
  assert.ok(n >= REAL && n < REAL + 100, `count ${n}`);
  assert.equal(shouldAutoCompact(lines, MODEL), true);
  const c = new Compactor({ model: MODEL, summarize: async () => { throw new Error('not called'); } });
  for (const l of lines) c.push(l);
  assert.equal(c.tokenCount(), n);
  assert.equal(c.warningState().isAboveAutoCompactThreshold, true);
  // The compaction's own reading (typed messages in Rust) agrees with the JS count.
  assert.equal((await previewCompaction(lines, { model: MODEL })).tokensBefore, n);
});

for (const [name, messages] of emptyUsages()) {
  test(`${name} is no usage: the count comes from the response before`, async () => {
    const n = tokenCountWithEstimation(messages);
    assert.ok(n >= REAL && n < REAL + 100, `count ${n}`);
    assert.equal(shouldAutoCompact(messages, MODEL), true);
    const c = new Compactor({ model: MODEL, summarize: async () => { throw new Error('not called'); } });
    c.pushMany(messages);
    assert.equal(c.tokenCount(), n);
    assert.equal((await previewCompaction(messages, { model: MODEL })).tokensBefore, n);
  });
}

test('with no usage before it, an empty usage leaves the conversation estimated (not counted as 0)', () => {
  const messages = [
    { role: 'user', content: BIG },
    { role: 'assistant', content: 'ok', usage: { input_tokens: 0, output_tokens: 0 } },
  ];
  const estimated = tokenCountWithEstimation([{ role: 'user', content: BIG }, { role: 'assistant', content: 'ok' }]);
  assert.ok(estimated > 1_000);
  assert.equal(tokenCountWithEstimation(messages), estimated);
});

test('setUsage of a provider that reported no counts changes nothing and does not throw; misnamed counts still throw', () => {
  const c = new Compactor({ model: MODEL, summarize: async () => { throw new Error('not called'); } });
  c.push({ role: 'user', content: [{ type: 'text', text: BIG }] });
  c.push({ role: 'assistant', content: [{ type: 'text', text: 'Read it.' }] });
  c.setUsage({ inputTokens: REAL - 40, outputTokens: 40, totalTokens: REAL });
  c.push({ role: 'user', content: [{ type: 'text', text: 'Go on.' }] });
  c.push({ role: 'assistant', content: [{ type: 'text', text: 'partial' }] });
  const before = c.tokenCount();
  assert.ok(before >= REAL, `count ${before}`);
  c.setUsage({ inputTokens: undefined, outputTokens: undefined, totalTokens: undefined });
  c.setUsage({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  assert.equal(c.tokenCount(), before);
  assert.throws(() => c.setUsage({ tokens: 3 }), (e) => e.code === 'INVALID_ARGUMENT');
  // A count option given empty is no usage either.
  const messages = [{ role: 'user', content: BIG }, { role: 'assistant', content: 'ok' }];
  const plain = tokenCountWithEstimation(messages);
  for (const usage of [{ inputTokens: undefined, outputTokens: undefined }, { prompt_tokens: 0, completion_tokens: 0 }]) {
    assert.equal(tokenCountWithEstimation(messages, { usage }), plain);
    assert.equal(shouldAutoCompact(messages, MODEL, { usage }), false);
  }
});

test('a stale summary caught up at the threshold announces one compaction: one foreground `start` (review15 R3: three)', async () => {
  const events = [];
  const summarize = async () => ({ content: [{ type: 'text', text: `<summary>${words(7, 6000)}</summary>` }], stop_reason: 'end_turn' });
  const { c } = await staleAtThreshold(summarize, { onProgress: (e) => events.push(e) });
  events.length = 0;
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, true);
  assert.equal(o.caughtUp, true, 'setup: the summary was caught up');
  const fore = events.filter((e) => !e.background).map((e) => e.phase);
  assert.equal(fore.filter((p) => p === 'start').length, 1, fore.join(' '));
  assert.equal(fore[0], 'start', fore.join(' '));
  assert.equal(fore.at(-1), 'done', fore.join(' '));
});

test("a compaction that keeps the latest turn keeps that turn's file reads in readFileState (a catch-up cleared them); reads it summarized are cleared", async () => {
  const summarize = async () => ({ content: [{ type: 'text', text: `<summary>${words(9, 6000)}</summary>` }], stop_reason: 'end_turn' });
  const OLD = `export const old = 1;\n${words(21, 1_500)}`;
  const NEW = `export function fresh() {}\n${words(22, 1_500)}`;
  const readFileState = new Map([['/src/old.ts', { content: OLD, timestamp: 1 }]]);
  const { c } = await staleAtThreshold(summarize, { readFileState }, {
    last: (chat) => {
      chat.push({ role: 'user', content: 'open fresh.ts' });
      chat.push({ role: 'assistant', content: [{ type: 'tool_use', id: 'tnew', name: 'read_file', input: { path: '/src/new.ts' } }] });
      chat.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tnew', content: NEW }] });
      readFileState.set('/src/new.ts', { content: NEW, timestamp: 2 });
    },
  });
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, true, JSON.stringify(o.error ?? o.skipped));
  assert.equal(o.caughtUp, true, 'setup: the summary was caught up');
  assert.ok(JSON.stringify(c.messages).includes('export function fresh()'), 'setup: the latest turn is kept');
  assert.deepEqual([...readFileState.keys()], ['/src/new.ts']);
  assert.equal(readFileState.get('/src/new.ts').content, NEW);
});

test('one foreground `start` per compaction on every path a stale summary takes (caught up, or today\'s path after the refusal; review16 R3)', async () => {
  const summarize = async () => ({ content: [{ type: 'text', text: `<summary>${words(7, 6000)}</summary>` }], stop_reason: 'end_turn' });
  const paths = new Set();
  for (const lastTokens of [0, 12_000, 20_000]) {
    const events = [];
    const { c } = await staleAtThreshold(summarize, { onProgress: (e) => events.push(e) }, {
      lastTokens, last: lastTokens ? (chat) => { chat.push({ role: 'user', content: 'big paste: ' + words(3, lastTokens * 4) }); } : undefined,
    });
    events.length = 0;
    const o = await c.maybeAutoCompact();
    assert.equal(o.wasCompacted, true, `${lastTokens}: ${JSON.stringify(o.error ?? o.skipped)}`);
    paths.add(o.caughtUp ? 'caughtUp' : o.preemptive ? 'swap' : 'today');
    const fore = events.filter((e) => !e.background).map((e) => e.phase);
    assert.equal(fore.filter((p) => p === 'start').length, 1, `${lastTokens}: ${fore.join(' ')}`);
    assert.equal(fore[0], 'start', `${lastTokens}: ${fore.join(' ')}`);
    assert.equal(fore.at(-1), 'done', `${lastTokens}: ${fore.join(' ')}`);
  }
  assert.ok(paths.has('caughtUp') && paths.has('today'), [...paths].join(' '));
});

test("the CLI's analysis does not count Claude Code's API-error lines (usage of zeros) as API calls", async () => {
  const { apiCalls, measureEstimates } = await import('../../pkg/cli-lib.mjs');
  const lines = claudeCodeLines();
  const calls = apiCalls(lines);
  assert.deepEqual(calls.map((c) => c.id), ['msg_1']);
  assert.equal(measureEstimates(lines, calls).length, 1);
});
