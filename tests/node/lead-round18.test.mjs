// Round 18, the lead's changes. Each test fails on the package before them (pkg-snap20).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  autoCompactIfNeeded, buildPostCompactMessages, compactConversation, Compactor, getAutoCompactThreshold,
  shouldAutoCompact, tokenCountWithEstimation,
} from '../../pkg/node.js';

const MODEL = 'claude-sonnet-4-5';
const summarize = async () => ({ content: [{ type: 'text', text: '<summary>The user read many files of src/ and asked what they do.</summary>' }], stop_reason: 'end_turn' });
// What the fake provider bills: a 24,000-token system prompt and tools, then 1.25 tokens per
// estimated token of the messages (code runs above chars/4).
const OVERHEAD = 24_000;
const RATIO = 1.25;

/**
 * An Anthropic API conversation of `turns` tool reads whose assistant messages carry the usage
 * the fake provider reports for the request before them.
 */
function billedReads(turns) {
  const estimateOf = (m) => tokenCountWithEstimation(m.map(({ usage, ...rest }) => rest));
  const m = [{ role: 'user', content: 'Read every file of src/ one by one.' }];
  for (let i = 0; i < turns; i++) {
    const estimate = estimateOf(m);
    m.push({
      role: 'assistant',
      content: [{ type: 'text', text: `Reading src/f${i}.rs next.` }, { type: 'tool_use', id: `t${i}`, name: 'read_file', input: { path: `src/f${i}.rs` } }],
      usage: { input_tokens: Math.round(OVERHEAD + RATIO * estimate), output_tokens: 20 },
    });
    m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `fn f${i}() { let x = ${i}; }\n`.repeat(300) }] });
  }
  m.push({ role: 'assistant', content: [{ type: 'text', text: 'Done reading.' }], usage: { input_tokens: Math.round(OVERHEAD + RATIO * estimateOf(m)), output_tokens: 3 } });
  m.push({ role: 'user', content: 'Now summarize what they do.' });
  return m;
}

/** The compacted conversation of `billedReads(24)`, its result, and a new request of `chars` characters after it. */
async function compactedThenAsked(chars) {
  const result = await compactConversation(billedReads(24), { model: MODEL, summarize });
  const next = [...buildPostCompactMessages(result), { role: 'user', content: 'Now the tests: '.padEnd(chars, 'x') }];
  return { result, next };
}

test('a compaction result\'s line counts the compacted API conversation in shouldAutoCompact and autoCompactIfNeeded (was: INVALID_ARGUMENT, the bare estimate only)', async () => {
  const config = { autoCompactWindow: 60_000 };
  const threshold = getAutoCompactThreshold(MODEL, config);
  const { result, next } = await compactedThenAsked(80_000);
  const { calibration } = result;
  assert.ok(calibration, 'the result reports what the usage taught');
  assert.ok(Math.abs(calibration.overhead - OVERHEAD) < 600, JSON.stringify(calibration));
  assert.ok(Math.abs(calibration.ratio - RATIO) < 0.02, JSON.stringify(calibration));
  const bare = tokenCountWithEstimation(next);
  const real = Math.round(OVERHEAD + RATIO * bare);
  const counted = tokenCountWithEstimation(next, { calibration });
  assert.ok(Math.abs(counted - real) / real < 0.02, `${counted} vs ${real}`);
  // The bare estimate is below the threshold, the request the provider bills above it.
  assert.ok(bare < threshold && counted >= threshold, `${bare} < ${threshold} <= ${counted}`);
  assert.equal(shouldAutoCompact(next, MODEL, { config }), false);
  assert.equal(shouldAutoCompact(next, MODEL, { config, calibration }), true);

  const skipped = await autoCompactIfNeeded(next, { model: MODEL, summarize, config });
  assert.equal(skipped.wasCompacted, false);
  const o = await autoCompactIfNeeded(next, { model: MODEL, summarize, config, calibration });
  assert.equal(o.wasCompacted, true, JSON.stringify(o.error ?? o.skipped));
  const again = o.compactionResult;
  assert.equal(again.preCompactTokenCount, counted, 'reported at the line given back');
  assert.deepEqual(again.calibration, calibration, 'the line is reported again for the next check');
  const after = tokenCountWithEstimation(buildPostCompactMessages(again), { calibration });
  assert.equal(again.truePostCompactTokenCount, after);
  assert.ok(after < threshold, `${after} < ${threshold}`);
});

test('a line given back whose overhead alone reaches the threshold makes automatic compaction futile, not a summary call', async () => {
  const { next } = await compactedThenAsked(4_000);
  const config = { autoCompactWindow: 40_000 };
  const threshold = getAutoCompactThreshold(MODEL, config);
  const calibration = { overhead: threshold + 1_000, ratio: 1.2, observations: 9 };
  let calls = 0;
  const counting = async (r) => { calls++; return summarize(r); };
  assert.equal(shouldAutoCompact(next, MODEL, { config, calibration }), false);
  const o = await autoCompactIfNeeded(next, { model: MODEL, summarize: counting, config, calibration });
  assert.equal(o.wasCompacted, false);
  assert.equal(o.skipped, 'overheadAboveThreshold');
  assert.equal(calls, 0);
});

test('calibration is checked where it is taken, and a Compactor, which learns its own, refuses it', () => {
  const m = [{ role: 'user', content: 'hi' }];
  for (const [bad, where] of [[{ overhead: 10 }, 'options.calibration'], [{ overhead: -1, ratio: 1 }, 'options.calibration.overhead'], ['1.2', 'options.calibration']]) {
    assert.throws(() => shouldAutoCompact(m, MODEL, { calibration: bad }), (e) => e.code === 'INVALID_ARGUMENT' && e.message.includes(where), JSON.stringify(bad));
  }
  assert.throws(
    () => new Compactor({ model: MODEL, summarize, calibration: { overhead: 10, ratio: 1 } }),
    (e) => e.code === 'INVALID_ARGUMENT' && /calibration/.test(e.message) && /Compactor/.test(e.message),
  );
});

test('aiSdkSummarizer sizes the summary request for its own model: max_tokens within gpt-4o\'s 16,384 (was 20,000, which OpenAI refuses)', async () => {
  const { aiSdkSummarizer } = await import('../../pkg/ai-sdk.js');
  const conversation = [];
  for (let i = 0; i < 6; i++) {
    conversation.push({ role: 'user', content: `question ${i} ${'x'.repeat(3000)}` });
    conversation.push({ role: 'assistant', content: `answer ${'y'.repeat(3000)}` });
  }
  for (const [model, limit] of [[{ provider: 'openai.chat', modelId: 'gpt-4o' }, 16_384], ['anthropic/claude-3-5-haiku-20241022', 8_192], [{ provider: 'local', modelId: 'my-own-model' }, 20_000]]) {
    const asked = [];
    const generateText = async (settings) => {
      asked.push(settings.maxOutputTokens);
      return { text: '<summary>Six questions, six answers.</summary>', finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 10 } };
    };
    const summarize = aiSdkSummarizer(model, { stream: false, generateText });
    await compactConversation(conversation, { model: MODEL, summarize });
    assert.deepEqual(asked, [limit], JSON.stringify(model));
  }
});

test('media data given as a number or a boolean is refused when sent, as an object is (was: an empty base64 image, called valid)', async () => {
  const { toApiMessages, validateForApi } = await import('../../pkg/node.js');
  for (const [data, kind] of [[5, 'a number'], [true, 'a boolean'], [10n, 'a bigint']]) {
    const messages = [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }, { role: 'user', content: [{ type: 'image', image: data, mediaType: 'image/png' }] }];
    for (const f of [toApiMessages, validateForApi]) {
      assert.throws(() => f(messages), (e) => e.code === 'INVALID_MESSAGE' && /messages\[2\]/.test(e.message) && e.message.includes(`media data given as ${kind} cannot be sent`), `${f.name} ${kind}`);
    }
  }
  // No data at all is what it was (the count and a compaction are unchanged too).
  const none = [{ role: 'user', content: [{ type: 'image', image: undefined, mediaType: 'image/png' }] }];
  assert.equal(toApiMessages(none).length, 1);
});
