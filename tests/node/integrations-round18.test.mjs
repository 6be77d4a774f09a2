// Round 18 (integrations18): the summary request is sized for the model the summarizer sends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { anthropicSummarizer, compactConversation, openaiSummarizer } from '../../pkg/node.js';

const conversation = [];
for (let i = 0; i < 6; i++) {
  conversation.push({ role: 'user', content: `question ${i} ${'x'.repeat(3000)}` });
  conversation.push({ role: 'assistant', content: `answer ${'y'.repeat(3000)}` });
}
const summaryText = `<summary>${'The user asked six questions and got six answers. '.repeat(4)}</summary>`;

/** A fetch that keeps the request bodies and answers as the API would. */
function fakeAnthropic(bodies) {
  return async (_url, init) => {
    const body = JSON.parse(init.body);
    bodies.push(body);
    return new Response(
      JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text: summaryText }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 10 } }),
      { status: 200, headers: { 'content-type': 'application/json' } },
    );
  };
}

test('anthropicSummarizer({model}) with a model whose output limit is below 20,000: max_tokens within it', async () => {
  // The API refuses "max_tokens: 20000 > 8192, which is the maximum allowed number of output
  // tokens for claude-3-5-haiku-20241022": every compaction failed.
  for (const [model, limit] of [['claude-3-5-haiku-20241022', 8192], ['claude-3-haiku-20240307', 4096], ['claude-haiku-4-5', 20000]]) {
    const bodies = [];
    const summarize = anthropicSummarizer({ apiKey: 'k', model, stream: false, fetch: fakeAnthropic(bodies) });
    await compactConversation(conversation, { model: 'claude-sonnet-4-5', summarize });
    assert.equal(bodies.length, 1);
    assert.equal(bodies[0].model, model);
    assert.equal(bodies[0].max_tokens, limit, model);
    assert.equal(summarize.summaryModel, model);
  }
});

test('context.summaryModel still wins over the summarizer\'s model', async () => {
  const bodies = [];
  const summarize = anthropicSummarizer({ apiKey: 'k', model: 'claude-3-haiku-20240307', stream: false, fetch: fakeAnthropic(bodies) });
  await compactConversation(conversation, { model: 'claude-sonnet-4-5', summarize, summaryModel: 'claude-3-5-haiku-20241022' });
  assert.equal(bodies[0].max_tokens, 8192);
});

test('openaiSummarizer({model: "gpt-4o"}): max_tokens within its 16,384 without maxOutputTokens', async () => {
  // OpenAI answers 400 "max_tokens is too large: 20000. This model supports at most 16384
  // completion tokens" to the 20,000 the request asked for.
  const bodies = [];
  const fetch = async (_url, init) => {
    const body = JSON.parse(init.body);
    bodies.push(body);
    return new Response(
      JSON.stringify({ id: 'c', object: 'chat.completion', model: body.model, choices: [{ index: 0, message: { role: 'assistant', content: summaryText }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 10 } }),
      { status: 200, headers: { 'content-type': 'application/json' } },
    );
  };
  const summarize = openaiSummarizer({ apiKey: 'k', model: 'gpt-4o', stream: false, fetch });
  await compactConversation(conversation, { model: 'claude-sonnet-4-5', summarize });
  const limit = bodies[0].max_completion_tokens ?? bodies[0].max_tokens;
  assert.equal(limit, 16384);
  assert.equal(summarize.summaryModel, 'gpt-4o');
});
