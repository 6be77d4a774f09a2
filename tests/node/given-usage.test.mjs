// Usage that does not ride on Anthropic messages reaches every count of a compaction: the usage
// a Compactor is given by setUsage (the only route for AI SDK and OpenAI messages, which carry
// none) and LangChain's usage_metadata. The decision to compact, preCompactTokenCount and
// previewCompaction see what tokenCount() / tokenCountWithEstimation see; the summary request
// never carries the usage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import * as cc from '../../pkg/node.js';
import { SONNET, recordingSummarizer } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

// Sonnet's automatic threshold is 167,000 tokens; the messages alone are about 2,000.
const REQUEST = 'Review the whole repository please. '.repeat(220);
const USAGE = { inputTokens: 170_000, outputTokens: 10 };

/** A short conversation in one ecosystem's shape, whose last response is at index `at`. */
const SHAPES = {
  'AI SDK ModelMessage': () => [
    { role: 'user', content: REQUEST },
    { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
  ],
  'AI SDK UIMessage': () => [
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: REQUEST }] },
    { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'Done.' }] },
  ],
  'OpenAI Chat': () => [
    { role: 'user', content: REQUEST },
    { role: 'assistant', content: 'Done.' },
  ],
  'OpenAI Responses': () => [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: REQUEST }] },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] },
  ],
};

const noUsageInRequest = (summarize) => {
  for (const { request } of summarize.calls) {
    assert.ok(!JSON.stringify(request.messages).includes('170000'), 'the given usage stays out of the summary request');
  }
};

for (const [name, conversation] of Object.entries(SHAPES)) {
  test(`${name}: a Compactor's setUsage decides maybeAutoCompact and is the compaction's pre-count`, async () => {
    const summarize = recordingSummarizer();
    const c = new cc.Compactor({ model: SONNET, summarize, messages: conversation() });
    const estimate = c.tokenCount();
    assert.ok(estimate < 5_000, `the messages alone count ${estimate}`);
    assert.equal((await c.maybeAutoCompact()).skipped, 'belowThreshold', 'without usage: below the threshold');
    c.setUsage(USAGE);
    const count = c.tokenCount();
    assert.equal(count, 170_010);
    assert.equal(c.warningState().isAboveAutoCompactThreshold, true);
    const o = await c.maybeAutoCompact();
    assert.equal(o.wasCompacted, true, JSON.stringify({ skipped: o.skipped, error: o.error?.message }));
    assert.equal(o.compactionResult.preCompactTokenCount, count, 'the compaction counts what tokenCount() counted');
    noUsageInRequest(summarize);

    // compact() (manual) reports the same pre-count.
    const m = new cc.Compactor({ model: SONNET, summarize, messages: conversation() });
    m.setUsage(USAGE);
    const before = m.tokenCount();
    assert.equal((await m.compact()).preCompactTokenCount, before);
  });
}

test('setUsage for an earlier response: messages pushed after it are estimated on top, in the compaction as in tokenCount()', async () => {
  const summarize = recordingSummarizer();
  const c = new cc.Compactor({ model: SONNET, summarize, messages: SHAPES['AI SDK ModelMessage']() });
  c.setUsage(USAGE);
  c.push({ role: 'user', content: 'x'.repeat(4_000) });
  const count = c.tokenCount();
  assert.ok(count > 170_010 + 900, `the pushed message adds its estimate (${count})`);
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, true);
  assert.equal(o.compactionResult.preCompactTokenCount, count);
});

test('after a compaction the usage given before no longer counts', async () => {
  const c = new cc.Compactor({ model: SONNET, summarize: recordingSummarizer(), messages: SHAPES['OpenAI Chat']() });
  c.setUsage(USAGE);
  await c.compact();
  assert.ok(c.tokenCount() < 10_000, `after compaction: ${c.tokenCount()}`);
  c.push({ role: 'user', content: 'next' });
  assert.equal((await c.maybeAutoCompact()).skipped, 'belowThreshold');
});

test('LangChain usage_metadata counts in autoCompactIfNeeded, compactConversation, previewCompaction and the Compactor, in every LangChain form', async () => {
  const instances = [
    new SystemMessage('You are a coding agent.'),
    new HumanMessage(REQUEST),
    new AIMessage({ content: 'Done.', usage_metadata: { input_tokens: 170_000, output_tokens: 10, total_tokens: 170_010 } }),
    new HumanMessage('now fix it'),
  ];
  const forms = {
    instances,
    stored: instances.map((m) => m.toDict()),
    serialized: JSON.parse(JSON.stringify(instances)),
  };
  for (const [form, msgs] of Object.entries(forms)) {
    const count = cc.tokenCountWithEstimation(msgs);
    assert.ok(count > 170_010, `${form}: the count anchors on usage_metadata (${count})`);
    const summarize = recordingSummarizer();
    const auto = await cc.autoCompactIfNeeded(msgs, { model: SONNET, summarize });
    assert.equal(auto.wasCompacted, true, `${form}: ${auto.skipped ?? auto.error?.message}`);
    assert.equal(auto.compactionResult.preCompactTokenCount, count, `${form}: autoCompactIfNeeded's pre-count`);
    const r = await cc.compactConversation(msgs, { model: SONNET, summarize });
    assert.equal(r.preCompactTokenCount, count, `${form}: compactConversation's pre-count`);
    noUsageInRequest(summarize);
    const p = await cc.previewCompaction(msgs, { model: SONNET });
    assert.equal(p.tokensBefore, count, `${form}: preview`);
    assert.equal(p.isAboveThreshold, true, `${form}: preview`);
    const c = new cc.Compactor({ model: SONNET, summarize, messages: msgs });
    assert.equal(c.tokenCount(), count);
    assert.equal((await c.maybeAutoCompact()).wasCompacted, true, `${form}: Compactor`);
  }
});
