// What the caller's count sees, the compaction sees: usage that does not ride on Anthropic
// messages (the usage a Compactor is given by setUsage, the only route for AI SDK and OpenAI
// messages, which carry none; LangChain's usage_metadata) and the caller's own tokenizer
// (`tokenCounter`). The decision to compact, preCompactTokenCount and previewCompaction see
// what tokenCount() / tokenCountWithEstimation / shouldAutoCompact see; the summary request
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

test('a tokenCounter decides the automatic compaction and is the pre-count, as shouldAutoCompact and warningState count with it', async () => {
  // 100 messages of 4,000 characters: about 100,000 tokens estimated, 200,000 by a tokenizer
  // that counts a token per two characters (the threshold is 167,000).
  const conv = [];
  for (let i = 0; i < 50; i++) {
    conv.push({ role: 'user', content: `q${i} ` + 'w'.repeat(3_990) });
    conv.push({ role: 'assistant', content: `a${i} ` + 'v'.repeat(3_990) });
  }
  const tokenCounter = (text) => Math.ceil(text.length / 2);
  const counted = cc.tokenCountWithEstimation(conv, { tokenCounter });
  assert.ok(cc.tokenCountWithEstimation(conv) < 167_000 && counted > 167_000, `${cc.tokenCountWithEstimation(conv)} / ${counted}`);
  assert.equal(cc.shouldAutoCompact(conv, SONNET, { tokenCounter }), true);
  const summarize = recordingSummarizer();

  const auto = await cc.autoCompactIfNeeded(conv, { model: SONNET, summarize, tokenCounter });
  assert.equal(auto.wasCompacted, true, auto.skipped ?? auto.error?.message);
  assert.equal(auto.compactionResult.preCompactTokenCount, counted);
  // Without the tokenizer, not due.
  assert.equal((await cc.autoCompactIfNeeded(conv, { model: SONNET, summarize })).skipped, 'belowThreshold');

  assert.equal((await cc.compactConversation(conv, { model: SONNET, summarize, tokenCounter })).preCompactTokenCount, counted);
  const p = await cc.previewCompaction(conv, { model: SONNET, tokenCounter });
  assert.equal(p.tokensBefore, counted);
  assert.equal(p.isAboveThreshold, true);

  const c = new cc.Compactor({ model: SONNET, summarize, tokenCounter, messages: conv });
  assert.equal(c.tokenCount(), counted);
  assert.equal(c.warningState().isAboveAutoCompactThreshold, true);
  const o = await c.maybeAutoCompact();
  assert.equal(o.wasCompacted, true, o.skipped);
  assert.equal(o.compactionResult.preCompactTokenCount, counted);
});

test('the caller\'s count is reported, but "smaller than before" compares the messages\' own estimates: a Compactor with a system prompt does not compact again into the same size, a tokenizer counting fewer tokens than the estimate still compacts', async () => {
  const conv = [];
  for (let i = 0; i < 10; i++) {
    conv.push({ role: 'user', content: `q${i} ` + 'w'.repeat(4_000) });
    conv.push({ role: 'assistant', content: `a${i} ` + 'v'.repeat(4_000) });
  }
  const system = 'You are a careful coding agent. '.repeat(2_500); // about 20,000 tokens
  const summarize = recordingSummarizer();
  const c = new cc.Compactor({ model: SONNET, summarize, system, messages: conv });
  const first = await c.compact();
  assert.equal(first.preCompactTokenCount > 20_000 + 19_000, true, `the pre-count holds the system prompt (${first.preCompactTokenCount})`);
  // The compacted conversation compacts into a summary of the same size: not smaller.
  await assert.rejects(c.compact(), (e) => e.code === 'COMPACTION_NOT_SMALLER');
  await assert.rejects(c.compact(), (e) => e.code === 'COMPACTION_NOT_SMALLER');

  // A tokenizer that counts fewer tokens than the character estimate.
  const r = await cc.compactConversation(conv, { model: SONNET, summarize, tokenCounter: (t) => Math.ceil(t.length / 6) });
  assert.equal(r.preCompactTokenCount, cc.tokenCountWithEstimation(conv, { tokenCounter: (t) => Math.ceil(t.length / 6) }));
  // The same meaning with or without a tokenizer: system and tools count in the pre-count.
  const sys = await cc.compactConversation(conv, { model: SONNET, summarize, system });
  assert.equal(sys.preCompactTokenCount, cc.tokenCountWithEstimation(conv, { system }));
  const p = await cc.previewCompaction(conv, { model: SONNET, system });
  assert.equal(p.tokensBefore, sys.preCompactTokenCount);
});
