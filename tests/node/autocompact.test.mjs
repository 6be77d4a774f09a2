// SPEC §5: enablement, environment defaults, and every guard of shouldAutoCompact.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  isAutoCompactEnabled,
  shouldAutoCompact,
  setEnvironmentDefaults,
  getAutoCompactThreshold,
} from '../../pkg/node.js';

const OPUS = 'claude-opus-4-6';
const ENTRY = new URL('../../pkg/node.js', import.meta.url).href;

before(() => setEnvironmentDefaults({}));
after(() => setEnvironmentDefaults(process.env));

/** A conversation whose count is exactly `tokens` (from usage). */
const at = (tokens) => [
  { role: 'user', content: 'hi' },
  { role: 'assistant', content: [{ type: 'text', text: 'ok' }], usage: { input_tokens: tokens, output_tokens: 0 } },
];

test('isAutoCompactEnabled: disableCompact, disableAutoCompact, autoCompactEnabled (default true)', () => {
  assert.equal(isAutoCompactEnabled(), true);
  assert.equal(isAutoCompactEnabled({}), true);
  assert.equal(isAutoCompactEnabled(null), true);
  assert.equal(isAutoCompactEnabled({ disableCompact: true }), false);
  assert.equal(isAutoCompactEnabled({ disableAutoCompact: true }), false);
  assert.equal(isAutoCompactEnabled({ autoCompactEnabled: false }), false);
  assert.equal(isAutoCompactEnabled({ autoCompactEnabled: true }), true);
  assert.equal(isAutoCompactEnabled({ autoCompactEnabled: true, disableAutoCompact: true }), false, 'disable wins over the setting');
  assert.equal(isAutoCompactEnabled({ autoCompactEnabled: true, disableCompact: true }), false);
  assert.equal(isAutoCompactEnabled({ disableCompact: false, disableAutoCompact: false }), true);
});

test('shouldAutoCompact: at or above the threshold', () => {
  assert.equal(shouldAutoCompact(at(167_000), OPUS), true);
  assert.equal(shouldAutoCompact(at(166_999), OPUS), false);
  assert.equal(shouldAutoCompact(at(0), OPUS), false);
  assert.equal(shouldAutoCompact([], OPUS), false);
  // Estimated messages after the usage count too: 166,900 + 400 chars / 4 = 167,000.
  assert.equal(shouldAutoCompact([...at(166_900), { role: 'user', content: 'x'.repeat(400) }], OPUS), true);
  assert.equal(shouldAutoCompact([...at(166_900), { role: 'user', content: 'x'.repeat(396) }], OPUS), false);
  // The threshold follows the model and config.
  assert.equal(shouldAutoCompact(at(190_000), 'claude-opus-4-6[1m]'), false);
  assert.equal(shouldAutoCompact(at(90_000), OPUS, { config: { autoCompactPctOverride: 50 } }), true);
  assert.equal(shouldAutoCompact(at(89_999), OPUS, { config: { autoCompactPctOverride: 50 } }), false);
});

test('shouldAutoCompact: snipTokensFreed is subtracted', () => {
  assert.equal(shouldAutoCompact(at(170_000), OPUS, { snipTokensFreed: 3_000 }), true);
  assert.equal(shouldAutoCompact(at(170_000), OPUS, { snipTokensFreed: 3_001 }), false);
  assert.equal(shouldAutoCompact(at(170_000), OPUS, { snipTokensFreed: 1e9 }), false, 'no underflow');
  assert.equal(shouldAutoCompact(at(170_000), OPUS, { snipTokensFreed: 0 }), true);
});

test('shouldAutoCompact guards: the compaction\'s own requests never compact', () => {
  for (const querySource of ['session_memory', 'compact']) {
    assert.equal(shouldAutoCompact(at(199_000), OPUS, { querySource }), false, querySource);
  }
  for (const querySource of ['repl_main_thread', 'sdk', 'agent:custom', 'marble_origami', '']) {
    assert.equal(shouldAutoCompact(at(199_000), OPUS, { querySource }), true, querySource || '(empty)');
  }
});

test('shouldAutoCompact guards: context collapse, marble_origami, reactive-only, disabled', () => {
  const big = at(199_000);
  assert.equal(shouldAutoCompact(big, OPUS, { querySource: 'marble_origami', config: { contextCollapse: true } }), false);
  assert.equal(shouldAutoCompact(big, OPUS, { config: { contextCollapse: true } }), false, 'collapse mode manages the context');
  assert.equal(shouldAutoCompact(big, OPUS, { config: { contextCollapse: false } }), true);
  assert.equal(shouldAutoCompact(big, OPUS, { config: { reactiveOnly: true } }), false);
  assert.equal(shouldAutoCompact(big, OPUS, { config: { reactiveOnly: false } }), true);
  assert.equal(shouldAutoCompact(big, OPUS, { config: { disableAutoCompact: true } }), false);
  assert.equal(shouldAutoCompact(big, OPUS, { config: { disableCompact: true } }), false);
  assert.equal(shouldAutoCompact(big, OPUS, { config: { autoCompactEnabled: false } }), false);
});

test('setEnvironmentDefaults: environment-style defaults, explicit config wins', (t) => {
  t.after(() => setEnvironmentDefaults({}));
  setEnvironmentDefaults({ DISABLE_AUTO_COMPACT: '1' });
  assert.equal(isAutoCompactEnabled(), false);
  assert.equal(isAutoCompactEnabled({ disableAutoCompact: false }), true);
  assert.equal(shouldAutoCompact(at(199_000), OPUS), false);
  assert.equal(shouldAutoCompact(at(199_000), OPUS, { config: { disableAutoCompact: false } }), true);
  setEnvironmentDefaults({ CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '50', CLAUDE_CODE_AUTO_COMPACT_WINDOW: '150000' });
  assert.equal(getAutoCompactThreshold(OPUS), Math.min(Math.floor((130_000 * 50) / 100), 117_000));
  setEnvironmentDefaults({});
  assert.equal(isAutoCompactEnabled(), true);
  assert.equal(getAutoCompactThreshold(OPUS), 167_000);
});

/** Runs a snippet in a fresh `node` with the given environment; returns its JSON output. */
function child(env, body) {
  const clean = { ...process.env };
  for (const k of ['DISABLE_COMPACT', 'DISABLE_AUTO_COMPACT', 'CLAUDE_AUTOCOMPACT_PCT_OVERRIDE', 'CLAUDE_CODE_AUTO_COMPACT_WINDOW']) {
    delete clean[k];
  }
  const script = `import * as cc from ${JSON.stringify(ENTRY)};
    const at = (n) => [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'ok', usage: { input_tokens: n } }];
    console.log(JSON.stringify((() => { ${body} })()));`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...clean, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('env: no variables → defaults', () => {
  assert.deepEqual(child({}, `return [cc.isAutoCompactEnabled(), cc.getAutoCompactThreshold('${OPUS}'), cc.getEffectiveContextWindowSize('${OPUS}')]`), [
    true,
    167_000,
    180_000,
  ]);
});

test('env: DISABLE_AUTO_COMPACT=1 disables auto-compaction; explicit config wins', () => {
  const out = child(
    { DISABLE_AUTO_COMPACT: '1' },
    `return {
      enabled: cc.isAutoCompactEnabled(),
      explicit: cc.isAutoCompactEnabled({ disableAutoCompact: false }),
      should: cc.shouldAutoCompact(at(199000), '${OPUS}'),
      shouldExplicit: cc.shouldAutoCompact(at(199000), '${OPUS}', { config: { disableAutoCompact: false } }),
      warning: cc.calculateTokenWarningState(199000, '${OPUS}').isAboveAutoCompactThreshold,
    }`,
  );
  assert.deepEqual(out, { enabled: false, explicit: true, should: false, shouldExplicit: true, warning: false });
});

test('env: DISABLE_COMPACT=true disables all compaction; explicit config wins', () => {
  const out = child(
    { DISABLE_COMPACT: 'true' },
    `return [cc.isAutoCompactEnabled(), cc.isAutoCompactEnabled({ disableCompact: false }), cc.shouldAutoCompact(at(199000), '${OPUS}')]`,
  );
  assert.deepEqual(out, [false, true, false]);
});

test('env: falsy or garbage values are ignored', () => {
  for (const env of [{ DISABLE_AUTO_COMPACT: '0' }, { DISABLE_AUTO_COMPACT: 'false' }, { DISABLE_COMPACT: '' }]) {
    assert.equal(child(env, 'return cc.isAutoCompactEnabled()'), true, JSON.stringify(env));
  }
  for (const v of ['abc', '0', '150', '-5']) {
    assert.equal(child({ CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: v }, `return cc.getAutoCompactThreshold('${OPUS}')`), 167_000, v);
  }
  for (const v of ['abc', '-1', '0']) {
    assert.equal(child({ CLAUDE_CODE_AUTO_COMPACT_WINDOW: v }, `return cc.getEffectiveContextWindowSize('${OPUS}')`), 180_000, v);
  }
});

test('env: CLAUDE_AUTOCOMPACT_PCT_OVERRIDE lowers the threshold; explicit config wins', () => {
  const out = child(
    { CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '50' },
    `return [
      cc.getAutoCompactThreshold('${OPUS}'),
      cc.getAutoCompactThreshold('${OPUS}', { autoCompactPctOverride: 80 }),
      cc.shouldAutoCompact(at(90000), '${OPUS}'),
      cc.shouldAutoCompact(at(90000), '${OPUS}', { config: { autoCompactPctOverride: 100 } }),
    ]`,
  );
  assert.deepEqual(out, [90_000, 144_000, true, false]);
  assert.equal(child({ CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '99' }, `return cc.getAutoCompactThreshold('${OPUS}')`), 167_000, 'only lowers');
});

test('env: CLAUDE_CODE_AUTO_COMPACT_WINDOW caps the window; explicit config wins', () => {
  const out = child(
    { CLAUDE_CODE_AUTO_COMPACT_WINDOW: '100000' },
    `return [
      cc.getEffectiveContextWindowSize('${OPUS}'),
      cc.getAutoCompactThreshold('${OPUS}'),
      cc.getEffectiveContextWindowSize('${OPUS}', { autoCompactWindow: 150000 }),
      cc.shouldAutoCompact(at(67000), '${OPUS}'),
    ]`,
  );
  assert.deepEqual(out, [80_000, 67_000, 130_000, true]);
});
