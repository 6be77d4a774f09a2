// Round 15, the lead's fixes. Each test fails on the package before the fix (pkg-snap17).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Compactor } from '../../pkg/node.js';
import { CONFIG, MODEL, THRESHOLD, staleAtThreshold, words } from './helpers/stale-ahead.mjs';

const summarize = async () => ({
  content: [{ type: 'text', text: `<summary>${words(1, 6000)}</summary>` }],
  stop_reason: 'end_turn',
});
/** One turn reading a ~10K-token file. */
const readTurn = (c, id) => {
  c.push({ role: 'user', content: `step ${id}` });
  c.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${id}`, name: 'read_file', input: { path: `m${id}` } }] });
  c.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${id}`, content: words(id, 40_000) }] });
  c.push({ role: 'assistant', content: 'ok' });
};
/** A Compactor on a 64K window that paused for thrashing, stored as JSON. */
async function pausedOn64K() {
  const c = new Compactor({ model: 'claude-sonnet-4-5', config: { contextWindow: 64_000 }, summarize });
  for (let id = 1; id < 40 && !c.tracking.thrashing; id++) {
    await c.maybeAutoCompact();
    readTurn(c, id);
  }
  assert.equal(c.tracking.thrashing, true, 'setup: the 64K session paused');
  return JSON.parse(JSON.stringify({ messages: c.messages, snapshot: c.snapshot() }));
}

test('a thrashing pause measured on a 64K window ends when the Compactor is restored into a 200K model, and holds in the same window', async () => {
  const { messages, snapshot } = await pausedOn64K();
  assert.equal(typeof snapshot.thrash.pausedAtThreshold, 'number');
  const larger = Compactor.restore(snapshot, messages, { model: 'claude-sonnet-4-5', summarize });
  assert.equal(larger.tracking.thrashing, false);
  for (let k = 100; k < 125; k++) readTurn(larger, k);
  assert.ok(larger.tokenCount() > 167_000);
  const o = await larger.maybeAutoCompact();
  assert.equal(o.wasCompacted, true, `skipped: ${o.skipped}`);

  const same = Compactor.restore(snapshot, messages, {
    model: 'claude-sonnet-4-5', config: { contextWindow: 64_000 }, summarize,
  });
  assert.equal(same.tracking.thrashing, true);
  // Past the threshold, below the blocking limit (sessions18: at the blocking limit, where
  // the next request would not fit, the pause no longer holds).
  for (let k = 200; k < 202; k++) readTurn(same, k);
  assert.equal(same.warningState().isAboveAutoCompactThreshold, true);
  assert.equal(same.warningState().isAtBlockingLimit, false);
  const s = await same.maybeAutoCompact();
  assert.equal(s.wasCompacted, false);
  assert.equal(s.skipped, 'thrashing');
  readTurn(same, 202);
  assert.equal(same.warningState().isAtBlockingLimit, true);
  const b = await same.maybeAutoCompact();
  assert.equal(b.wasCompacted, true, `skipped: ${b.skipped}`);
  assert.equal(same.tracking.thrashing, true);
});

test("ChatOpenAI's standard-form MCP items (server_tool_call with no result) are valid for the API, and a compaction keeps them readable", async () => {
  const { AIMessage, HumanMessage } = await import('@langchain/core/messages');
  const { validateForApi, toApiMessages } = await import('../../pkg/node.js');
  const ai = (provider) => new AIMessage({
    content: [
      { id: 'ml_1', type: 'server_tool_call', name: 'mcp_list_tools' },
      { id: 'mc_1', type: 'server_tool_call', name: 'mcp_call', args: { q: 'weather' } },
      { type: 'text', text: 'done' },
    ],
    response_metadata: { output_version: 'v1', model_provider: provider },
  });
  const openai = [new HumanMessage('q'), ai('openai'), new HumanMessage('next')];
  const v = validateForApi(openai);
  assert.equal(v.valid, true, JSON.stringify(v.problems));
  const api = toApiMessages(openai);
  const text = JSON.stringify(api);
  assert.match(text, /mcp_call/);
  assert.match(text, /weather/);
  // Anthropic's own server tool call without its result is still a missing result.
  const anthropic = validateForApi([new HumanMessage('q'), ai('anthropic'), new HumanMessage('next')]);
  assert.equal(anthropic.valid, false);
});

test('a summary written ahead that is stale at the threshold is brought up to date with one small call and swapped in (caughtUp), not written again from the whole conversation', async () => {
  const requests = [];
  const summarize = async (req) => {
    requests.push(JSON.stringify(req));
    return { content: [{ type: 'text', text: `<summary>part ${requests.length}: ${words(requests.length, 12_000)}</summary>` }], stop_reason: 'end_turn' };
  };
  const { c, last } = await staleAtThreshold(summarize);
  assert.equal(requests.length, 1);
  const held = c.messages.slice();
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, true, JSON.stringify(o.error ?? o.skipped));
  assert.equal(o.caughtUp, true);
  assert.equal(o.preemptive, false);
  assert.equal(requests.length, 2, 'one call');
  assert.match(requests[1], /part 1: /, 'the stale summary is read');
  // What today's path sends for the same conversation: the whole of it.
  let full;
  const today = new Compactor({ model: MODEL, config: CONFIG, messages: held, summarize: async (req) => { full = JSON.stringify(req); return summarize(req); } });
  assert.equal((await today.maybeAutoCompact()).wasCompacted, true);
  assert.ok(requests[1].length < 0.8 * full.length, `${requests[1].length} of ${full.length}`);
  // The latest turn is kept after the summary; the conversation is valid and below the threshold.
  assert.equal(c.messages.at(-1).content, last);
  assert.ok(c.tokenCount() < THRESHOLD);
});

test("a message's usage in the AI SDK's or OpenAI Chat's names anchors the count (it counted the conversation before it as 0)", async () => {
  const { tokenCountWithEstimation, previewCompaction } = await import('../../pkg/node.js');
  const base = [];
  for (let i = 0; i < 30; i++) base.push({ role: 'user', content: `question ${i} ${'x'.repeat(200)}` }, { role: 'assistant', content: [{ type: 'text', text: `answer ${i} ${'y'.repeat(200)}` }] });
  const anthropic = [...base, { role: 'assistant', content: 'ok', usage: { input_tokens: 5000, output_tokens: 50 } }, { role: 'user', content: 'next question' }];
  const want = tokenCountWithEstimation(anthropic);
  assert.ok(want > 5000);
  for (const usage of [
    { prompt_tokens: 5000, completion_tokens: 50, total_tokens: 5050 },
    { inputTokens: 5000, outputTokens: 50, totalTokens: 5050 },
  ]) {
    const m = [...base, { role: 'assistant', content: 'ok', usage }, { role: 'user', content: 'next question' }];
    assert.equal(tokenCountWithEstimation(m), want, JSON.stringify(usage));
    assert.equal(new Compactor({ model: 'claude-sonnet-4-5', messages: m }).tokenCount(), want);
    // The compaction's reading (typed messages) agrees with the count.
    const p = await previewCompaction(m, { model: 'claude-sonnet-4-5' });
    assert.equal(p.tokensBefore, want);
  }
});

test('a summarizer that is down during a catch-up is reported once: today\'s path does not run its retries again', async () => {
  let down = false, calls = 0;
  const summarize = async () => {
    calls++;
    if (down) throw Object.assign(new Error('overloaded'), { status: 529 });
    return { content: [{ type: 'text', text: `<summary>${words(calls, 12_000)}</summary>` }], stop_reason: 'end_turn' };
  };
  const { c } = await staleAtThreshold(summarize);
  down = true;
  calls = 0;
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, false);
  assert.ok(o.error, 'the failure is reported');
  assert.equal(c.tracking.consecutiveFailures, 1);
  // Today's path alone, on the same conversation: its attempts are the most a catch-up may make.
  let alone = 0;
  const today = new Compactor({ model: MODEL, config: CONFIG, retryBaseMs: 1, messages: c.messages, summarize: async () => { alone++; throw Object.assign(new Error('overloaded'), { status: 529 }); } });
  await today.maybeAutoCompact();
  assert.ok(calls <= alone, `${calls} attempts, ${alone} on today's path alone`);
});

test('a stale summary whose catch-up could not be swapped in either (the latest turn alone over the bound) costs no call of its own', async () => {
  let calls = 0;
  const summarize = async () => {
    calls++;
    return { content: [{ type: 'text', text: `<summary>${words(calls, 12_000)}</summary>` }], stop_reason: 'end_turn' };
  };
  const { c } = await staleAtThreshold(summarize, {}, {
    lastTokens: 9_000,
    last: (chat) => {
      chat.push({ role: 'user', content: 'read the big file' });
      chat.push({ role: 'assistant', content: [{ type: 'tool_use', id: 'tbig', name: 'read_file', input: { path: 'big' } }] });
      chat.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tbig', content: words(3, 40_000) }] });
    },
  });
  const before = calls;
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, true, JSON.stringify(o.error));
  assert.equal(o.caughtUp, undefined);
  assert.equal(calls - before, 1, "today's path's call only");
});
