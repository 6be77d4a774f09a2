// Round 17, the lead's fixes. Each test fails on the package before the fix (pkg-snap19).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { autoCompactIfNeeded, buildPostCompactMessages, compactConversation, Compactor, reactiveCompact, shouldAutoCompact, tokenCountWithEstimation, trySessionMemoryCompaction } from '../../pkg/node.js';

const MODEL = 'claude-sonnet-4-5';
const summarize = async () => ({ content: [{ type: 'text', text: '<summary>The user read many files.</summary>' }], stop_reason: 'end_turn' });
const MEMORY = '# Session notes\nThe user asked to read every file of src/ and is reviewing them one by one.';

/** An Anthropic API conversation of `turns` tool reads, about 1.3K tokens each. */
function reads(turns) {
  const m = [{ role: 'user', content: 'Read every file of src/ one by one.' }];
  for (let i = 0; i < turns; i++) {
    m.push({ role: 'assistant', content: [{ type: 'text', text: `Reading src/f${i}.rs next.` }, { type: 'tool_use', id: `t${i}`, name: 'read_file', input: { path: `src/f${i}.rs` } }] });
    m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `fn f${i}() {}\n`.repeat(400) }] });
  }
  m.push({ role: 'assistant', content: [{ type: 'text', text: 'Done reading.' }] });
  m.push({ role: 'user', content: 'Now summarize what they do.' });
  return m;
}

const foreground = (events) => events.filter((e) => !e.background).map((e) => e.phase);

function assertOneStartFirstDoneLast(path, events) {
  const phases = foreground(events);
  assert.equal(phases[0], 'start', `${path}: ${phases.join(' ')}`);
  assert.equal(phases.filter((p) => p === 'start').length, 1, `${path}: ${phases.join(' ')}`);
  assert.equal(phases.at(-1), 'done', `${path}: ${phases.join(' ')}`);
  const start = events.find((e) => e.phase === 'start');
  assert.ok(start.tokens > 0, `${path}: start carries the size before`);
}

test('auto-compaction reports `start` before its PreCompact hooks, with or without a session memory (was: preCompactHook first; no start at all from session memory)', async () => {
  for (const memory of [undefined, MEMORY]) {
    const events = [];
    const context = {
      model: MODEL, summarize, config: { autoCompactWindow: 60_000 },
      sessionMemory: memory && (() => memory),
      onProgress: (e) => events.push(e),
    };
    const o = await autoCompactIfNeeded(reads(30), context);
    assert.equal(o.wasCompacted, true, JSON.stringify(o.error ?? o.skipped));
    assert.equal(o.compactionResult.fromSessionMemory, memory !== undefined);
    assertOneStartFirstDoneLast(`autoCompactIfNeeded, memory ${memory !== undefined}`, events);
  }
});

test('the Compactor\'s automatic compaction from a session memory reports one `start` first and `done` last', async () => {
  const events = [];
  const c = new Compactor({
    model: MODEL, summarize, config: { autoCompactWindow: 60_000 }, messages: reads(30),
    sessionMemory: () => MEMORY, onProgress: (e) => events.push(e),
  });
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, true, JSON.stringify(o.error ?? o.skipped));
  assertOneStartFirstDoneLast('Compactor, session memory', events);
});

test('reactive compaction and a session-memory compaction called alone report one `start` first and `done` last', async () => {
  for (const memory of [undefined, MEMORY]) {
    const events = [];
    const context = { model: MODEL, summarize, sessionMemory: memory && (() => memory), onProgress: (e) => events.push(e) };
    await reactiveCompact(reads(30), context, 'prompt is too long: 210000 tokens > 200000 maximum', { turnId: 't1' });
    assertOneStartFirstDoneLast(`reactiveCompact, memory ${memory !== undefined}`, events);
  }
  const events = [];
  await trySessionMemoryCompaction(reads(30), { model: MODEL, sessionMemory: () => MEMORY, onProgress: (e) => events.push(e) });
  assertOneStartFirstDoneLast('trySessionMemoryCompaction', events);
});

// A LangChain conversation whose last AIMessage (usage of a 150K-token request) waits for its
// tool's result: a compaction keeps that turn.
function lcPendingTurn() {
  const m = [];
  for (let i = 0; i < 10; i++) {
    m.push(new HumanMessage(`question ${i}: ${'lorem ipsum dolor '.repeat(3000)}`));
    m.push(new AIMessage({ content: `answer ${i}`, usage_metadata: { input_tokens: 14_000 * (i + 1), output_tokens: 10, total_tokens: 14_000 * (i + 1) + 10 } }));
  }
  m.push(new HumanMessage('run ls'));
  m.push(new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'bash', args: { cmd: 'ls' } }], usage_metadata: { input_tokens: 150_000, output_tokens: 10, total_tokens: 150_010 } }));
  return m;
}

test('a LangChain AIMessage a compaction keeps no longer carries the old context\'s usage into the count (was: 150,010 for a context of ~60 tokens)', async () => {
  const m = lcPendingTurn();
  const r = await compactConversation(m, { model: MODEL, summarize });
  const out = buildPostCompactMessages(r);
  const count = tokenCountWithEstimation(out);
  assert.ok(count < 1_000, `count after the compaction: ${count}`);
  const kept = out.at(-1);
  assert.ok(kept instanceof AIMessage, 'the kept turn is an AIMessage still');
  assert.deepEqual(kept.tool_calls.map((c) => c.id), ['c1']);
  assert.equal(kept.usage_metadata, undefined);
  assert.equal(m.at(-1).usage_metadata.input_tokens, 150_000, "the caller's message is not changed");
  // Serialized (`toJSON`) and stored (`{type, data}`) forms too.
  for (const form of [(x) => JSON.parse(JSON.stringify(x)), (x) => ({ type: x._getType(), data: { content: x.content, tool_calls: x.tool_calls, usage_metadata: x.usage_metadata, additional_kwargs: {}, response_metadata: {} } })]) {
    const r2 = await compactConversation(m.map(form), { model: MODEL, summarize });
    const c2 = tokenCountWithEstimation(buildPostCompactMessages(r2));
    assert.ok(c2 < 1_000, `count after the compaction (another form): ${c2}`);
  }
});

test('a Compactor over LangChain messages counts the compacted context, not the kept turn\'s old usage', async () => {
  const c = new Compactor({ model: MODEL, summarize, messages: lcPendingTurn() });
  await c.compact();
  assert.ok(c.tokenCount() < 1_000, `count after the compaction: ${c.tokenCount()}`);
  assert.equal(shouldAutoCompact(c.messages, MODEL), false);
});

test('on a 32K window the summary request asks for a summary that fits the room a compaction leaves; on the default window it does not', async () => {
  const requestText = async (config) => {
    let text;
    const capture = async (request) => {
      text = JSON.stringify(request.messages.at(-1));
      return { content: [{ type: 'text', text: '<summary>Short.</summary>' }], stop_reason: 'end_turn' };
    };
    await compactConversation(reads(30), { model: MODEL, summarize: capture, config });
    return text;
  };
  const small = await requestText({ contextWindow: 32_000, maxOutputTokens: 4_096 });
  const words = Number(/Keep the summary under (\d+) words/.exec(small)?.[1]);
  assert.ok(words > 1_000 && words < 4_000, `${words}: ${small.slice(-300)}`);
  assert.doesNotMatch(await requestText(undefined), /Keep the summary under/);
});

test("an AI SDK provider's usage (`inputTokens: {total, …}`, LanguageModelV3Usage) is read by its totals, not refused (review17: INVALID_TOKEN_COUNT after hostile17; before it, no usage)", async () => {
  const usage = { inputTokens: { total: 41_200, noCache: 200, cacheRead: 41_000, cacheWrite: 0 }, outputTokens: { total: 30, text: 30, reasoning: 0 } };
  const m = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'text', text: 'yo' }], usage }];
  assert.equal(tokenCountWithEstimation(m), 41_230);
  const c = new Compactor({ model: MODEL, messages: m });
  assert.equal(c.tokenCount(), 41_230);
  c.setUsage(usage);
  assert.equal(c.tokenCount(), 41_230);
  // A provider that reported no counts: no usage, as before.
  const none = { inputTokens: { total: undefined, noCache: undefined }, outputTokens: { total: undefined } };
  assert.ok(tokenCountWithEstimation([m[0], { ...m[1], usage: none }]) < 100);
  // A count that is not a number is still refused, naming it.
  assert.throws(() => tokenCountWithEstimation([m[0], { ...m[1], usage: { inputTokens: { total: '41200' } } }]), { code: 'INVALID_TOKEN_COUNT' });
});
