// The Anthropic API's own compaction, against the fake Messages API speaking its documented
// shapes (tests/fake-api/compaction.mjs):
// - anthropicSummarizer({onDemandCompaction: true}) and compactConversation through it: the
//   request (`compaction: {type: 'summarize'}`, the beta header, the conversation itself), the
//   `compaction_delta` stream, the block first and byte for byte in the result, each named
//   error and failed-summary stop reason with its rule (coded error, retry, fallback);
// - buildApiContextManagement's compact_20260112 edit and applyApiCompaction on threshold
//   answers (streamed blocks, pause, failure, usage.iterations).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { anthropicSummarizer } from '../../js/anthropic.js';
import { startFakeApi, reply } from '../fake-api/server.mjs';
import { compactionReply, compactionError, bodyReply, thresholdBody } from '../fake-api/compaction.mjs';
import { PKG, apiConversation, transcriptConversation } from './helpers/support.mjs';

const require = createRequire(import.meta.url);
const lib = require(PKG);
const {
  compactConversation,
  buildPostCompactMessages,
  validateForApi,
  tokenCountWithEstimation,
  buildApiContextManagement,
  applyApiCompaction,
  roughTokenCountEstimation,
} = lib;

const MODEL = 'claude-sonnet-4-5';
const SUMMARY = 'The user is fixing the parser in src/parse.rs; the tests for Q11 still fail.';

async function fakeApi(t, handler) {
  const api = await startFakeApi(handler);
  t.after(() => api.close());
  return api;
}

function onDemand(api, o = {}) {
  return anthropicSummarizer({ apiKey: 'sk-test', baseURL: api.url, retryBaseMs: 1, maxRetries: 1, onDemandCompaction: true, ...o });
}

function context(summarize, o = {}) {
  return { model: MODEL, summarize, retryBaseMs: 1, ...o };
}

async function rejected(promise) {
  try {
    await promise;
  } catch (e) {
    return e;
  }
  assert.fail('expected a rejection');
}

// ---- anthropicSummarizer: transport -------------------------------------------------------------

test('onDemandCompaction is a boolean option the summarizer advertises to the library', () => {
  assert.equal(anthropicSummarizer({ apiKey: 'k', onDemandCompaction: true }).onDemandCompaction, true);
  assert.equal(anthropicSummarizer({ apiKey: 'k' }).onDemandCompaction, undefined);
  for (const bad of ['yes', 1, null]) {
    assert.throws(() => anthropicSummarizer({ apiKey: 'k', onDemandCompaction: bad }), { code: 'INVALID_ARGUMENT' });
  }
  assert.throws(() => anthropicSummarizer({ apiKey: 'k', onDemandCompation: true }), /did you mean `onDemandCompaction`/);
});

for (const stream of [true, false]) {
  test(`a compaction request carries the beta header and its block is assembled (${stream ? 'compaction_delta stream' : 'JSON'})`, async (t) => {
    const api = await fakeApi(t, [compactionReply(SUMMARY, { signature: 'sig_abc' }), reply.auto('<summary>x</summary>')]);
    const summarize = onDemand(api, { stream, headers: { 'anthropic-beta': 'files-api-2025-04-14' } });
    const texts = [];
    const request = { model: MODEL, max_tokens: 20_000, messages: [{ role: 'user', content: 'hi' }], compaction: { type: 'summarize' } };
    const r = await summarize(request, { onText: (s) => texts.push(s) });
    assert.deepEqual(r.content, [{ type: 'compaction', content: SUMMARY, signature: 'sig_abc' }]);
    assert.equal(r.stop_reason, 'compaction');
    assert.equal(texts.join(''), SUMMARY);
    if (stream) assert.ok(texts.length > 1, 'the summary streamed in pieces');
    assert.equal(api.requests[0].headers['anthropic-beta'], 'files-api-2025-04-14,compact-2026-09-04');
    assert.deepEqual(api.requests[0].body.compaction, { type: 'summarize' });
    // An ordinary request keeps the caller's beta header only.
    await summarize({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(api.requests[1].headers['anthropic-beta'], 'files-api-2025-04-14');
  });
}

// ---- compactConversation through on-demand compaction -----------------------------------------------

test('compactConversation puts the API block first, byte for byte, and counts from it', async (t) => {
  const api = await fakeApi(t, [compactionReply(SUMMARY, { signature: 'sig_' + 'z'.repeat(300) })]);
  const messages = apiConversation({ rounds: 12 });
  const progress = [];
  const result = await compactConversation(messages, context(onDemand(api), { onProgress: (e) => progress.push(e.phase) }), {
    customInstructions: 'Keep the test plan.',
  });
  assert.equal(api.requests.length, 1);
  const sent = api.requests[0].body;
  assert.deepEqual(sent.compaction, { type: 'summarize', instructions: 'Keep the test plan.' });
  assert.equal(sent.system, undefined, 'the API writes the summary with its own prompt');
  assert.equal(sent.messages.length, messages.length, 'the conversation itself, not a rendering');
  assert.deepEqual(sent.messages[1], messages[1]);
  assert.equal(api.requests[0].headers['anthropic-beta'], 'compact-2026-09-04');

  const next = buildPostCompactMessages(result);
  const block = { type: 'compaction', content: SUMMARY, signature: 'sig_' + 'z'.repeat(300) };
  assert.deepEqual(next[0], { role: 'assistant', content: [block] });
  assert.equal(JSON.stringify(next[0].content[0]), JSON.stringify(block), 'byte for byte, keys in order');
  assert.equal(next.filter((m) => JSON.stringify(m).includes('"compaction"')).length, 1, 'exactly one block');
  assert.ok(!next.some((m) => m.type === 'system'), 'no boundary line in the messages sent');
  assert.equal(result.summary, SUMMARY);
  assert.equal(result.boundaryMarker.subtype, 'compact_boundary');
  assert.ok(progress.includes('summarized') && !progress.includes('fallbackSummary'));

  const v = validateForApi(next);
  assert.ok(v.valid, JSON.stringify(v.problems));
  // The next turn: a user message after the block; the count starts at the block.
  const after = [...next, { role: 'user', content: 'Go on.' }];
  assert.ok(validateForApi(after).valid);
  const count = tokenCountWithEstimation(after);
  assert.ok(count < tokenCountWithEstimation(messages) / 5, `${count}`);
  assert.ok(count >= roughTokenCountEstimation(SUMMARY), `${count} counts the block's summary`);
  // Compacting again sends the block first and exactly once.
  const api2 = await fakeApi(t, [compactionReply('Second summary.')]);
  const more = [...after, { role: 'assistant', content: 'Done: ' + 'x'.repeat(4000) }, { role: 'user', content: 'And now?' }];
  const again = buildPostCompactMessages(await compactConversation(more, context(onDemand(api2))));
  assert.deepEqual(api2.requests[0].body.messages[0], { role: 'assistant', content: [block] });
  assert.equal(again[0].content[0].content, 'Second summary.');
  assert.ok(validateForApi(again).valid);
});

test('a trailing tool call without its result stays after the block, out of the summarized range', async (t) => {
  const api = await fakeApi(t, [compactionReply(SUMMARY)]);
  const messages = apiConversation({ rounds: 8 });
  const open = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_open', name: 'Bash', input: { command: 'ls' } }] };
  messages.push({ role: 'user', content: 'Run ls.' }, open);
  const result = await compactConversation(messages, context(onDemand(api)));
  const sent = api.requests[0].body.messages;
  assert.ok(!JSON.stringify(sent).includes('toolu_open'), 'the open call is not summarized');
  const next = buildPostCompactMessages(result);
  assert.equal(next[0].content[0].type, 'compaction');
  assert.equal(next.at(-1), open, 'kept as the caller\'s own object');
});

test('keepLastUserMessage cuts before the latest request, which stays verbatim after the block', async (t) => {
  const api = await fakeApi(t, [compactionReply(SUMMARY)]);
  const messages = apiConversation({ rounds: 8 });
  const ask = { role: 'user', content: 'Please finish the parser and run the tests.' };
  messages.push(ask, { role: 'assistant', content: 'On it.' });
  const next = buildPostCompactMessages(await compactConversation(messages, context(onDemand(api)), { keepLastUserMessage: true }));
  assert.ok(!JSON.stringify(api.requests[0].body.messages).includes('finish the parser'));
  assert.equal(next[1], ask);
  assert.ok(validateForApi(next).valid);
});

test('compaction_unavailable is retried, then the summary prompt is used instead', async (t) => {
  const normal = `<analysis>a</analysis><summary>${SUMMARY}</summary>`;
  const api = await fakeApi(t, [compactionError.unavailable(), compactionError.unavailable(), reply.auto(normal)]);
  const progress = [];
  const result = await compactConversation(
    apiConversation({ rounds: 12 }),
    context(onDemand(api), { onProgress: (e) => progress.push(e) }),
  );
  assert.equal(api.requests.length, 3, 'two compaction attempts (the summarizer retried once), then the prompt');
  assert.ok(api.requests[0].body.compaction && api.requests[1].body.compaction);
  assert.equal(api.requests[2].body.compaction, undefined);
  assert.equal(typeof api.requests[2].body.system, 'string');
  assert.equal(api.requests[2].headers['anthropic-beta'], undefined);
  const fb = progress.find((e) => e.phase === 'fallbackSummary');
  assert.match(fb.detail, /compaction_unavailable/);
  const next = buildPostCompactMessages(result);
  assert.equal(next[1].role, 'user');
  assert.match(next[1].content, /Q11|parser/);
});

for (const [stopReason, content] of [
  ['max_tokens', null],
  ['model_context_window_exceeded', null],
  ['refusal', null],
  ['end_turn', null],
  ['tool_use', null],
]) {
  test(`a failed summary (stop_reason ${stopReason}) falls back to the summary prompt`, async (t) => {
    const api = await fakeApi(t, [compactionReply(content, { stopReason }), reply.auto(`<summary>${SUMMARY}</summary>`)]);
    const progress = [];
    const result = await compactConversation(apiConversation(), context(onDemand(api), { onProgress: (e) => progress.push(e) }));
    assert.equal(api.requests.length, 2);
    assert.match(progress.find((e) => e.phase === 'fallbackSummary').detail, new RegExp(stopReason));
    assert.equal(result.summary, SUMMARY);
  });
}

test('compaction_nothing_to_summarize is NOTHING_TO_COMPACT, with nothing changed', async (t) => {
  const api = await fakeApi(t, [compactionError.nothingToSummarize()]);
  const messages = apiConversation({ rounds: 4 });
  const before = JSON.stringify(messages);
  const e = await rejected(compactConversation(messages, context(onDemand(api))));
  assert.equal(e.code, 'NOTHING_TO_COMPACT');
  assert.match(e.message, /compaction_nothing_to_summarize/);
  assert.equal(api.requests.length, 1);
  assert.equal(JSON.stringify(messages), before);
});

for (const [name, make] of [
  ['compaction_block_misplaced', compactionError.misplaced],
  ['compaction_signature_invalid', compactionError.signatureInvalid],
  ['compaction_content_mismatch', compactionError.contentMismatch],
]) {
  test(`${name} is API_COMPACTION_REJECTED (no silent fallback)`, async (t) => {
    const api = await fakeApi(t, [make()]);
    const e = await rejected(compactConversation(apiConversation(), context(onDemand(api))));
    assert.equal(e.code, 'API_COMPACTION_REJECTED');
    assert.ok(e.message.includes(name), e.message);
    assert.equal(e.cause?.status, 400);
    assert.equal(api.requests.length, 1);
  });
}

test('another request refusal (400) falls back; an authentication error fails as before', async (t) => {
  const api = await fakeApi(t, [
    reply.error(400, 'invalid_request_error', 'compaction: Extra inputs are not permitted'),
    reply.auto(`<summary>${SUMMARY}</summary>`),
  ]);
  const r = await compactConversation(apiConversation(), context(onDemand(api)));
  assert.equal(r.summary, SUMMARY);
  const api2 = await fakeApi(t, [reply.error(401, 'authentication_error', 'invalid x-api-key')]);
  const e = await rejected(compactConversation(apiConversation(), context(onDemand(api2))));
  assert.equal(e.code, 'SUMMARIZER_FAILED');
});

test('transcripts and other ecosystems use the summary prompt even with an on-demand summarizer', async (t) => {
  const api = await fakeApi(t, () => reply.auto(`<summary>${SUMMARY}</summary>`));
  await compactConversation(transcriptConversation(), context(onDemand(api)));
  assert.equal(api.requests[0].body.compaction, undefined);
  const chat = [
    { role: 'system', content: 'Be brief.' },
    ...Array.from({ length: 10 }, (_, i) => [
      { role: 'user', content: `Question ${i} ${'q'.repeat(800)}` },
      { role: 'assistant', content: null, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'read', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: `c${i}`, content: 'r'.repeat(800) },
    ]).flat(),
  ];
  await compactConversation(chat, context(onDemand(api)));
  assert.equal(api.requests[1].body.compaction, undefined);
});

// ---- buildApiContextManagement: the compact_20260112 edit ------------------------------------

test('buildApiContextManagement emits the compact_20260112 edit beside the others', () => {
  assert.deepEqual(buildApiContextManagement({ compact: true }), {
    edits: [{ type: 'compact_20260112', trigger: { type: 'input_tokens', value: 150_000 } }],
  });
  const cm = buildApiContextManagement({
    clearThinking: true,
    clearToolUses: true,
    compactTriggerInputTokens: 120_000,
    pauseAfterCompaction: true,
    compactInstructions: 'Keep the file list.',
  });
  assert.deepEqual(cm.edits.map((e) => e.type), ['clear_thinking_20251015', 'clear_tool_uses_20250919', 'compact_20260112']);
  assert.deepEqual(cm.edits[2], {
    type: 'compact_20260112',
    trigger: { type: 'input_tokens', value: 120_000 },
    pause_after_compaction: true,
    instructions: 'Keep the file list.',
  });
  for (const bad of [{ compactTriggerInputTokens: 40_000 }, { compactInstructions: '' }, { pauseAfterCompaction: 1 }, { compactTriger: 60_000 }]) {
    assert.throws(() => buildApiContextManagement(bad), { code: 'INVALID_CONFIG' }, JSON.stringify(bad));
  }
  assert.throws(() => buildApiContextManagement({ compactTriggerInputTokens: 49_999 }), /at least 50000/);
});

// ---- applyApiCompaction on threshold answers ----------------------------------------------------

/** Sends `messages` through the fake API as an ordinary request and returns the response. */
async function threshold(t, body, stream = true) {
  const api = await fakeApi(t, [bodyReply(body)]);
  const client = anthropicSummarizer({ apiKey: 'sk-test', baseURL: api.url, stream });
  return client({
    model: MODEL,
    max_tokens: 1000,
    messages: [{ role: 'user', content: 'hi' }],
    context_management: buildApiContextManagement({ compact: true }),
  });
}

for (const stream of [true, false]) {
  test(`applyApiCompaction appends a threshold answer and sums usage.iterations (${stream ? 'stream' : 'JSON'})`, async (t) => {
    const response = await threshold(t, thresholdBody(SUMMARY), stream);
    assert.deepEqual(response.content[0], { type: 'compaction', content: SUMMARY, encrypted_content: 'RW5jcnlwdGVk' });
    const messages = apiConversation({ rounds: 6 });
    const applied = applyApiCompaction(messages, response);
    assert.equal(applied.compacted, true);
    assert.equal(applied.paused || applied.failed, false);
    assert.equal(applied.stopReason, 'end_turn');
    assert.deepEqual(applied.billedUsage, {
      input_tokens: 163_000,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 500,
      output_tokens: 2_840,
    });
    assert.equal(applied.iterations.length, 2);
    assert.equal(applied.messages.length, messages.length + 1);
    assert.equal(applied.messages[0], messages[0], 'the caller\'s own objects');
    const last = applied.messages.at(-1);
    assert.equal(last.role, 'assistant');
    assert.equal(last.content, response.content, 'the response\'s own content array');
    assert.ok(validateForApi(applied.messages).valid);
    // What is sent starts at the block; the count starts there too (the block's text, the answer).
    const next = [...applied.messages, { role: 'user', content: 'thanks' }];
    assert.ok(tokenCountWithEstimation(next) < 200, String(tokenCountWithEstimation(next)));
    // With the top-level usage of the message step, the count is anchored exactly.
    const anchored = applyApiCompaction(messages, { ...response, usage: { ...response.usage } });
    anchored.messages.at(-1).usage = response.usage;
    assert.equal(tokenCountWithEstimation(anchored.messages), 3_000 + 40);
    const dropped = applyApiCompaction(messages, response, { dropIgnored: true });
    assert.equal(dropped.messages.length, 1);
    assert.ok(validateForApi(dropped.messages).valid);
  });
}

test('applyApiCompaction after a pause puts the latest request back after the block', async (t) => {
  const response = await threshold(t, thresholdBody(SUMMARY, { paused: true }));
  assert.equal(response.stop_reason, 'compaction');
  const messages = apiConversation({ rounds: 4 });
  const ask = { role: 'user', content: 'Now write the docs.' };
  messages.push(ask);
  const applied = applyApiCompaction(messages, response);
  assert.equal(applied.paused, true);
  assert.equal(applied.messages.at(-2).content, response.content);
  assert.equal(applied.messages.at(-1), ask);
  assert.ok(validateForApi(applied.messages).valid);
  assert.deepEqual(applied.billedUsage.input_tokens, 160_000);
  const off = applyApiCompaction(messages, response, { keepLastRequest: false });
  assert.equal(off.messages.at(-1).content, response.content);
});

test('applyApiCompaction: a failed compaction changes nothing; bad input is coded', async (t) => {
  const response = await threshold(t, thresholdBody(null), false);
  const messages = apiConversation({ rounds: 3 });
  const applied = applyApiCompaction(messages, response, { dropIgnored: true });
  assert.equal(applied.failed, true);
  assert.equal(applied.compacted, false);
  assert.equal(applied.messages.length, messages.length + 1, 'nothing dropped');
  assert.throws(() => applyApiCompaction(messages, { role: 'assistant' }), { code: 'INVALID_ARGUMENT' });
  assert.throws(
    () => applyApiCompaction(messages, { content: [{ type: 'text', text: 'a' }, { type: 'compaction', content: 's' }] }),
    { code: 'INVALID_ARGUMENT', message: /content\[1\]/ },
  );
  assert.throws(() => applyApiCompaction(messages, response, { dropIgnore: true }), { code: 'INVALID_ARGUMENT' });
  assert.throws(() => applyApiCompaction(transcriptConversation(), response), { code: 'UNSUPPORTED_SHAPE' });
  assert.throws(
    () => applyApiCompaction([{ role: 'user', content: 'a' }, { role: 'assistant', content: null, tool_calls: [] }], response),
    { code: 'UNSUPPORTED_SHAPE' },
  );
});
