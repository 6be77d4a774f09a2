// SPEC §4: context windows, output limits, thresholds, warning state.
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import {
  getContextWindowForModel,
  getMaxOutputTokensForModel,
  getModelOutputLimits,
  getEffectiveContextWindowSize,
  getAutoCompactThreshold,
  calculateTokenWarningState,
  setEnvironmentDefaults,
  Compactor,
  previewCompaction,
} from '../../pkg/node.js';

// These tests state the defaults; the environment variables are tested in child processes
// (autocompact.test.mjs), so the runner's own environment must not leak in.
before(() => setEnvironmentDefaults({}));

const OPUS = 'claude-opus-4-6';

test('SPEC §4 worked example: opus-4-6 → effective 180,000, auto 167,000, warning/error 147,000, blocking 177,000', () => {
  assert.equal(getContextWindowForModel(OPUS), 200_000);
  assert.equal(getMaxOutputTokensForModel(OPUS), 64_000);
  assert.equal(getEffectiveContextWindowSize(OPUS), 180_000);
  assert.equal(getAutoCompactThreshold(OPUS), 167_000);
  const at = (n) => calculateTokenWarningState(n, OPUS);
  assert.deepEqual(Object.keys(at(0)).sort(), [
    'contextWindow',
    'contextWindowSource',
    'isAboveAutoCompactThreshold',
    'isAboveErrorThreshold',
    'isAboveWarningThreshold',
    'isAtBlockingLimit',
    'percentLeft',
  ]);
  assert.equal(at(146_999).isAboveWarningThreshold, false);
  assert.equal(at(146_999).isAboveErrorThreshold, false);
  assert.equal(at(147_000).isAboveWarningThreshold, true);
  assert.equal(at(147_000).isAboveErrorThreshold, true, 'error line = warning line (same value)');
  assert.equal(at(166_999).isAboveAutoCompactThreshold, false);
  assert.equal(at(167_000).isAboveAutoCompactThreshold, true);
  assert.equal(at(176_999).isAtBlockingLimit, false);
  assert.equal(at(177_000).isAtBlockingLimit, true);
  assert.deepEqual(at(0), {
    percentLeft: 100,
    isAboveWarningThreshold: false,
    isAboveErrorThreshold: false,
    isAboveAutoCompactThreshold: false,
    isAtBlockingLimit: false,
    contextWindow: 200_000,
    contextWindowSource: 'model',
  });
});

test('percentLeft = max(0, round((threshold − usage) / threshold × 100))', () => {
  const p = (n) => calculateTokenWarningState(n, OPUS).percentLeft;
  assert.equal(p(0), 100);
  assert.equal(p(83_500), 50);
  assert.equal(p(147_000), Math.round((20_000 / 167_000) * 100));
  assert.equal(p(167_000), 0);
  assert.equal(p(500_000), 0, 'never negative');
  for (const n of [1, 835, 10_000, 99_999, 150_000, 166_999]) {
    assert.equal(p(n), Math.max(0, Math.round(((167_000 - n) / 167_000) * 100)), `at ${n}`);
  }
});

test('model table: default / upper max output tokens', () => {
  const table = [
    ['claude-opus-4-6', 64_000, 128_000],
    ['claude-sonnet-4-6', 32_000, 128_000],
    ['claude-opus-4-5-20251101', 32_000, 64_000],
    ['claude-sonnet-4-5-20250929', 32_000, 64_000],
    ['claude-sonnet-4-20250514', 32_000, 64_000],
    ['claude-haiku-4-5-20251001', 32_000, 64_000],
    ['claude-opus-4-20250514', 32_000, 32_000],
    ['claude-opus-4-1-20250805', 32_000, 32_000],
    ['claude-3-7-sonnet-20250219', 32_000, 64_000],
    ['claude-3-5-sonnet-20241022', 8_192, 8_192],
    ['claude-3-5-haiku-20241022', 8_192, 8_192],
    ['claude-3-opus-20240229', 4_096, 4_096],
    ['claude-3-haiku-20240307', 4_096, 4_096],
    ['my-local-model', 32_000, 32_000],
    ['', 32_000, 32_000],
    // Provider spellings of the same models.
    ['us.anthropic.claude-opus-4-6-v1:0', 64_000, 128_000],
    ['claude-sonnet-4-5@20250929', 32_000, 64_000],
    ['CLAUDE-OPUS-4-6', 64_000, 128_000],
    ['claude-opus-4-6[1m]', 64_000, 128_000],
  ];
  for (const [model, def, upper] of table) {
    assert.deepEqual(getModelOutputLimits(model), { default: def, upperLimit: upper }, model);
    assert.equal(getMaxOutputTokensForModel(model), def, model);
  }
  assert.equal(getMaxOutputTokensForModel(undefined), 32_000, 'no model: unknown defaults');
});

test('effective window reserves min(max output, 20,000)', () => {
  assert.equal(getEffectiveContextWindowSize('claude-sonnet-4-5-20250929'), 180_000);
  assert.equal(getEffectiveContextWindowSize('claude-3-5-sonnet-20241022'), 200_000 - 8_192);
  assert.equal(getEffectiveContextWindowSize('claude-3-haiku-20240307'), 200_000 - 4_096);
  assert.equal(getAutoCompactThreshold('claude-3-haiku-20240307'), 200_000 - 4_096 - 13_000);
  assert.equal(getEffectiveContextWindowSize('unknown-model'), 180_000);
});

test('[1m] suffix and config.enable1mContext give a 1,000,000 window', () => {
  assert.equal(getContextWindowForModel('claude-opus-4-6[1m]'), 1_000_000);
  assert.equal(getContextWindowForModel('claude-sonnet-4-5-20250929[1m]'), 1_000_000);
  assert.equal(getContextWindowForModel('claude-sonnet-4-5-20250929[1M]'), 1_000_000);
  assert.equal(getEffectiveContextWindowSize('claude-opus-4-6[1m]'), 980_000);
  assert.equal(getAutoCompactThreshold('claude-opus-4-6[1m]'), 967_000);
  const s = calculateTokenWarningState(500_000, 'claude-opus-4-6[1m]');
  assert.equal(s.isAboveWarningThreshold, false);
  assert.equal(s.isAboveAutoCompactThreshold, false);
  assert.equal(calculateTokenWarningState(967_000, 'claude-opus-4-6[1m]').isAboveAutoCompactThreshold, true);
  // Config enables 1M only for a model that supports it.
  const on = { enable1mContext: true };
  assert.equal(getContextWindowForModel('claude-sonnet-4-5-20250929', on), 1_000_000);
  assert.equal(getContextWindowForModel('claude-sonnet-4-20250514', on), 1_000_000);
  assert.equal(getContextWindowForModel('claude-opus-4-6', on), 1_000_000);
  assert.equal(getContextWindowForModel('claude-3-5-haiku-20241022', on), 200_000);
  assert.equal(getContextWindowForModel('claude-sonnet-4-5-20250929', { enable1mContext: false }), 200_000);
});

test('config overrides always win', () => {
  // contextWindow beats the model and the [1m] suffix.
  assert.equal(getContextWindowForModel('claude-opus-4-6[1m]', { contextWindow: 64_000 }), 64_000);
  assert.equal(getEffectiveContextWindowSize(OPUS, { contextWindow: 100_000 }), 80_000);
  // maxOutputTokens: lower reserve, capped at the model's upper limit.
  assert.equal(getMaxOutputTokensForModel(OPUS, { maxOutputTokens: 8_000 }), 8_000);
  assert.equal(getEffectiveContextWindowSize(OPUS, { maxOutputTokens: 8_000 }), 192_000);
  assert.equal(getMaxOutputTokensForModel(OPUS, { maxOutputTokens: 1e9 }), 128_000);
  assert.equal(getMaxOutputTokensForModel('claude-opus-4-1-20250805', { maxOutputTokens: 50_000 }), 32_000);
  // autoCompactWindow caps the window used: min(window, autoCompactWindow).
  assert.equal(getEffectiveContextWindowSize(OPUS, { autoCompactWindow: 100_000 }), 80_000);
  assert.equal(getAutoCompactThreshold(OPUS, { autoCompactWindow: 100_000 }), 67_000);
  assert.equal(getEffectiveContextWindowSize(OPUS, { autoCompactWindow: 500_000 }), 180_000, 'a cap above the window changes nothing');
  assert.equal(getEffectiveContextWindowSize('claude-opus-4-6[1m]', { autoCompactWindow: 300_000 }), 280_000);
  // blockingLimitOverride.
  assert.equal(calculateTokenWarningState(149_999, OPUS, { blockingLimitOverride: 150_000 }).isAtBlockingLimit, false);
  assert.equal(calculateTokenWarningState(150_000, OPUS, { blockingLimitOverride: 150_000 }).isAtBlockingLimit, true);
});

test('autoCompactPctOverride can only lower the threshold', () => {
  assert.equal(getAutoCompactThreshold(OPUS, { autoCompactPctOverride: 50 }), 90_000);
  assert.equal(getAutoCompactThreshold(OPUS, { autoCompactPctOverride: 33.3 }), Math.floor((180_000 * 33.3) / 100));
  assert.equal(getAutoCompactThreshold(OPUS, { autoCompactPctOverride: 92 }), Math.floor((180_000 * 92) / 100));
  assert.equal(getAutoCompactThreshold(OPUS, { autoCompactPctOverride: 93 }), 167_000, 'floor(167,400) > 167,000: not raised');
  assert.equal(getAutoCompactThreshold(OPUS, { autoCompactPctOverride: 99 }), 167_000);
  assert.equal(getAutoCompactThreshold(OPUS, { autoCompactPctOverride: 100 }), 167_000);
  assert.equal(getAutoCompactThreshold(OPUS, { autoCompactPctOverride: 1 }), 1_800);
  // The warning state follows the lowered threshold.
  const s = calculateTokenWarningState(90_000, OPUS, { autoCompactPctOverride: 50 });
  assert.equal(s.isAboveAutoCompactThreshold, true);
  assert.equal(s.percentLeft, 0);
  assert.equal(calculateTokenWarningState(69_999, OPUS, { autoCompactPctOverride: 50 }).isAboveWarningThreshold, false);
  assert.equal(calculateTokenWarningState(70_000, OPUS, { autoCompactPctOverride: 50 }).isAboveWarningThreshold, true);
});

test('with auto-compact off the threshold is the effective window', () => {
  for (const cfg of [{ disableAutoCompact: true }, { disableCompact: true }, { autoCompactEnabled: false }]) {
    const s = calculateTokenWarningState(160_000, OPUS, cfg);
    assert.equal(s.isAboveWarningThreshold, true, '160,000 = 180,000 − 20,000');
    assert.equal(s.isAboveAutoCompactThreshold, false, 'never above the auto-compact line when it is off');
    assert.equal(s.percentLeft, Math.round((20_000 / 180_000) * 100));
    assert.equal(calculateTokenWarningState(159_999, OPUS, cfg).isAboveWarningThreshold, false);
    assert.equal(calculateTokenWarningState(179_000, OPUS, cfg).isAboveAutoCompactThreshold, false);
    assert.equal(calculateTokenWarningState(177_000, OPUS, cfg).isAtBlockingLimit, true, 'blocking stays effective − 3,000');
  }
});

test('arguments are not mutated and results are plain objects', () => {
  const cfg = Object.freeze({ autoCompactPctOverride: 50, contextWindow: 150_000 });
  const s = calculateTokenWarningState(10, OPUS, cfg);
  assert.equal(Object.getPrototypeOf(s), Object.prototype);
  assert.equal(Object.getPrototypeOf(getModelOutputLimits(OPUS)), Object.prototype);
  assert.deepEqual(cfg, { autoCompactPctOverride: 50, contextWindow: 150_000 });
});

// Models beyond Claude: the windows and output limits OpenAI and Google document, whatever
// prefix or suffix the id carries; unknown models get the default and the result says so.
test('OpenAI and Gemini models: window, output limits, thresholds', () => {
  const table = [
    // [model, window, max output, effective window]
    ['gpt-5', 400_000, 128_000, 272_000],
    ['gpt-5-mini', 400_000, 128_000, 272_000],
    ['gpt-5-nano', 400_000, 128_000, 272_000],
    ['gpt-5.1', 400_000, 128_000, 272_000],
    ['gpt-5.2', 400_000, 128_000, 272_000],
    ['gpt-5-chat-latest', 128_000, 16_384, 111_616],
    ['gpt-4.1', 1_047_576, 32_768, 1_027_576],
    ['gpt-4.1-mini', 1_047_576, 32_768, 1_027_576],
    ['gpt-4.1-nano', 1_047_576, 32_768, 1_027_576],
    ['gpt-4o', 128_000, 16_384, 111_616],
    ['gpt-4o-mini', 128_000, 16_384, 111_616],
    ['o3', 200_000, 100_000, 180_000],
    ['o4-mini', 200_000, 100_000, 180_000],
    ['gemini-2.5-pro', 1_048_576, 65_536, 1_028_576],
    ['gemini-2.5-flash', 1_048_576, 65_536, 1_028_576],
    ['gemini-2.5-flash-lite', 1_048_576, 65_536, 1_028_576],
    ['gemini-3-pro-preview', 1_048_576, 65_536, 1_028_576],
  ];
  for (const [model, window, out, effective] of table) {
    assert.equal(getContextWindowForModel(model), window, model);
    assert.deepEqual(getModelOutputLimits(model), { default: out, upperLimit: out }, model);
    assert.equal(getMaxOutputTokensForModel(model), out, model);
    assert.equal(getEffectiveContextWindowSize(model), effective, model);
    assert.equal(getAutoCompactThreshold(model), effective - 13_000, model);
    const s = calculateTokenWarningState(0, model);
    assert.equal(s.contextWindow, window, model);
    assert.equal(s.contextWindowSource, 'model', model);
  }
  // GPT-5 refuses more than 272,000 input tokens of its 400,000: the blocking limit is below it.
  assert.equal(calculateTokenWarningState(268_999, 'gpt-5').isAtBlockingLimit, false);
  assert.equal(calculateTokenWarningState(269_000, 'gpt-5').isAtBlockingLimit, true);
});

test('provider prefixes, LangChain `provider:model` ids and date suffixes name the same model', () => {
  const same = [
    ['gpt-4o', ['openai/gpt-4o', 'openai:gpt-4o', 'gpt-4o-2024-08-06', 'GPT-4o', 'azure_openai:gpt-4o']],
    ['gpt-4.1', ['openai:gpt-4.1', 'gpt-4.1-2025-04-14', 'openai/gpt-4.1']],
    ['gpt-5-mini', ['openai/gpt-5-mini-2025-08-07']],
    ['o3-mini', ['openai/o3-mini:nitro', 'o3-mini-2025-01-31']],
    ['gemini-2.5-pro', ['google/gemini-2.5-pro', 'google-genai:gemini-2.5-pro', 'gemini-2.5-pro-preview-06-05', 'projects/p/locations/global/publishers/google/models/gemini-2.5-pro']],
    ['gemini-2.5-flash', ['models/gemini-2.5-flash', 'google_genai:gemini-2.5-flash', 'gemini-2.5-flash-preview-09-2025']],
  ];
  for (const [model, variants] of same) {
    for (const v of variants) {
      assert.equal(getContextWindowForModel(v), getContextWindowForModel(model), v);
      assert.deepEqual(getModelOutputLimits(v), getModelOutputLimits(model), v);
      assert.deepEqual(calculateTokenWarningState(1_000, v), calculateTokenWarningState(1_000, model), v);
    }
  }
});

test('an unknown model gets the 200,000 default, and the result says the default was used', () => {
  for (const model of ['my-local-model', 'gpt-4o-audio-preview', 'gemini-2.5-flash-image', 'llama-3.1-70b', 'gpt-5-pro']) {
    assert.equal(getContextWindowForModel(model), 200_000, model);
    assert.deepEqual(getModelOutputLimits(model), { default: 32_000, upperLimit: 32_000 }, model);
    const s = calculateTokenWarningState(0, model);
    assert.equal(s.contextWindow, 200_000, model);
    assert.equal(s.contextWindowSource, 'default', model);
  }
  // A configured window is the configuration's, known or not.
  const c = calculateTokenWarningState(0, 'my-local-model', { contextWindow: 32_768, maxOutputTokens: 4_096 });
  assert.deepEqual([c.contextWindow, c.contextWindowSource], [32_768, 'config']);
  const on = calculateTokenWarningState(0, 'claude-sonnet-4-5', { enable1mContext: true });
  assert.deepEqual([on.contextWindow, on.contextWindowSource], [1_000_000, 'config']);
  const suffix = calculateTokenWarningState(0, 'claude-opus-4-6[1m]');
  assert.deepEqual([suffix.contextWindow, suffix.contextWindowSource], [1_000_000, 'model']);
});

test('the Compactor and previewCompaction say where the window comes from too', async () => {
  const messages = [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }];
  for (const [model, window, source] of [['openai/gpt-4.1', 1_047_576, 'model'], ['gemini-2.5-pro', 1_048_576, 'model'], ['my-local-model', 200_000, 'default']]) {
    const chat = new Compactor({ model, messages });
    const s = chat.warningState();
    assert.deepEqual([s.contextWindow, s.contextWindowSource], [window, source], model);
    assert.deepEqual(s, calculateTokenWarningState(chat.tokenCount(), model), model);
    chat.free();
    const p = await previewCompaction(messages, { model });
    assert.deepEqual([p.contextWindow, p.contextWindowSource], [window, source], model);
    assert.equal(p.threshold, getAutoCompactThreshold(model), model);
  }
  const p = await previewCompaction(messages, { model: 'my-local-model', config: { contextWindow: 32_768, maxOutputTokens: 4_096 } });
  assert.deepEqual([p.contextWindow, p.contextWindowSource], [32_768, 'config']);
});
