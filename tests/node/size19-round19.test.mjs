// Round 19 (size19): the counting module writes the numbers of its messages without the
// standard library's float printing (model::number::Plain and js_text take the JS engine's
// digits there, docs/size.md "The nineteenth round"). Its messages must stay the main entry's,
// letter for letter: both spellings of a number (`{}`'s `1000000000000000000000`, `-0`,
// `0.00000015`, and JavaScript's `1e+21`, `1.5e-7`) on every path that writes one, at the
// boundaries of the exponent form and at both ends of the range.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));
const main = await import(PKG + 'node.js');
const count = await import(PKG + 'count.js');
await count.default({ module_or_path: readFileSync(PKG + 'context_compaction_count_bg.wasm') });

const MODEL = 'claude-sonnet-4-5';
const MESSAGES = [{ role: 'user', content: 'hello there' }];
const NUMBERS = [
  -0, 1e21, 1e20, 2.5e21, 1e-6, 1e-7, 1.5e-7, 0.1 + 0.2, 5e-324, Number.MAX_VALUE, -1.5e300, 123456.789,
  0.25, 4096, 2 ** 53 + 2, 1 - 2 ** -53, 9.999999999999999e20, 1.0000000000000001e-6,
];

/** Every path of the counting module that writes a number given to it. */
const CASES = [];
for (const n of NUMBERS) {
  CASES.push(
    [`autoCompactPctOverride ${n}`, (m) => m.getAutoCompactThreshold(MODEL, { autoCompactPctOverride: n })],
    [`contextWindow ${n}`, (m) => m.getAutoCompactThreshold(MODEL, { contextWindow: n })],
    [`summaryContextWindow ${n}`, (m) => m.getAutoCompactThreshold(MODEL, { summaryContextWindow: n })],
    [`a number for a boolean ${n}`, (m) => m.isAutoCompactEnabled({ disableCompact: n })],
    [`tokenCounter ${n}`, (m) => m.tokenCountWithEstimation(MESSAGES, { tokenCounter: () => n })],
    [`tokenCounter ${-n}`, (m) => m.tokenCountWithEstimation(MESSAGES, { tokenCounter: () => -n })],
    [`calibration ${n}`, (m) => m.tokenCountWithEstimation(MESSAGES, { calibration: { overhead: n, ratio: n } })],
    [`calibration overhead ${n}`, (m) => m.tokenCountWithEstimation(MESSAGES, { calibration: { overhead: 1e9 * n, ratio: 1 } })],
    [`usage ${-n}`, (m) => m.shouldAutoCompact(MESSAGES, MODEL, { usage: { input_tokens: -n, output_tokens: 0 } })],
    [`tokenUsage ${-n}`, (m) => m.calculateTokenWarningState(-n, MODEL)],
  );
}

const answers = (m) => CASES.map(([name, call]) => {
  try {
    return `${name}: ${JSON.stringify(call(m))}`;
  } catch (e) {
    return `${name}: ${e.code} ${e.message}`;
  }
});

test('size19: the count entry writes every number of its messages as the main entry does', () => {
  const want = answers(main);
  const got = answers(count);
  assert.equal(want.filter((a) => / (INVALID_[A-Z_]+) /.test(a)).length > CASES.length / 2, true);
  for (let i = 0; i < CASES.length; i++) assert.equal(got[i], want[i]);
});

test('size19: both spellings of a number, in the count entry', () => {
  const message = (call) => {
    try {
      call();
    } catch (e) {
      return e.message;
    }
    return 'no error';
  };
  // `{}`: spelt out, `-0` kept.
  assert.match(message(() => count.isAutoCompactEnabled({ disableCompact: 1e21 })), /got the number 1000000000000000000000$/);
  assert.match(message(() => count.isAutoCompactEnabled({ disableCompact: -0 })), /got the number -0$/);
  assert.match(message(() => count.calculateTokenWarningState(-1.5e-7, MODEL)), /got -0\.00000015$/);
  assert.match(message(() => count.calculateTokenWarningState(-1.5e300, MODEL)), new RegExp(`got -15${'0'.repeat(299)}$`));
  assert.match(
    message(() => count.getAutoCompactThreshold(MODEL, { autoCompactPctOverride: 5e-324 })),
    new RegExp(`got 0\\.${'0'.repeat(323)}5$`),
  );
  assert.match(
    message(() => count.tokenCountWithEstimation(MESSAGES, { calibration: { overhead: 1, ratio: 0.1 } })),
    /at least 0\.25\)$/,
  );
  // JavaScript's: exponent form.
  assert.match(message(() => count.getAutoCompactThreshold(MODEL, { contextWindow: 1e21 })), /got 1e\+21$/);
  assert.match(message(() => count.getAutoCompactThreshold(MODEL, { contextWindow: 1.5e-7 })), /got 1\.5e-7$/);
  assert.match(message(() => count.calculateTokenWarningState(1.5e300, MODEL)), /\(1\.5e\+300; at most 1e15\)$/);
  assert.match(message(() => count.tokenCountWithEstimation(MESSAGES, { tokenCounter: () => 0.1 + 0.2 + 1e21 })), /returned 1e\+21 tokens/);
});
