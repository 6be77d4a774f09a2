// The per-turn route (scripts/package.mjs, `perTurnRecord` in src/bindings/js_view.js, the
// `__ccPerTurn…` exports in src/bindings/exports.rs): `tokenCountWithEstimation(messages)` and
// `shouldAutoCompact(messages, model)` without options are first tried from one record of the
// end of the array written straight into WebAssembly memory, and one call with numbers. It
// must answer exactly what the exports answer on their own (an options object, even empty,
// always takes the export), fall back whenever it does not settle, and never use the rule
// of another model or of environment defaults that changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as cc from '../../pkg/node.js';
import { OPUS, SONNET, TRANSCRIPTS, readJsonl, packageJsView, callOutcome } from './helpers/support.mjs';
import binaryen from 'binaryen';
import { trapWhenNull } from './helpers/trap.mjs';

cc.setEnvironmentDefaults({});
const view = await packageJsView();
const stats = view.setCountFast(true);

// Thresholds on both sides of the real sessions' counts (~100K): 'gpt-4o' 98,616,
// OPUS 167,000, 'claude-3-5-haiku' 178,808.
const MODELS = [OPUS, 'gpt-4o', 'claude-3-5-haiku'];
const general = {
  count: (m) => callOutcome(() => cc.tokenCountWithEstimation(m, {})),
  should: (m, model) => callOutcome(() => cc.shouldAutoCompact(m, model, {})),
};

const sessions = readdirSync(TRANSCRIPTS).filter((f) => f.endsWith('.jsonl'));

for (const file of sessions) {
  test(`${file}: every prefix, each model asked twice in a row, answers what the exports answer`, () => {
    const lines = readJsonl(TRANSCRIPTS + file);
    const routedBefore = stats.routed;
    let trueAnswers = 0;
    for (let k = 0; k <= lines.length; k++) {
      const m = lines.slice(0, k);
      assert.deepEqual(callOutcome(() => cc.tokenCountWithEstimation(m)), general.count(m), `count, first ${k}`);
      for (const model of MODELS) {
        const want = general.should(m, model);
        // The first call keeps the model's rule; the second may be settled by the route.
        assert.deepEqual(callOutcome(() => cc.shouldAutoCompact(m, model)), want, `${model}, first ${k}`);
        assert.deepEqual(callOutcome(() => cc.shouldAutoCompact(m, model)), want, `${model} again, first ${k}`);
        if (want.value === true) trueAnswers++;
      }
    }
    // A subagent's transcript is all sidechain lines: no usage anchors its main chain.
    if (lines.some((l) => l.type === 'assistant' && l.isSidechain !== true)) {
      assert.ok(stats.routed - routedBefore > lines.length, `the route settled calls (${stats.routed - routedBefore})`);
    }
    if (file === 'cc_long_autocompact_4d5611e5.jsonl') assert.ok(trueAnswers > 0, 'some prefixes are due for some model');
  });
}

const lines = readJsonl(`${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`);
const due = (model) => cc.shouldAutoCompact(lines, model, {});

test('a model whose rule was kept by a call that then threw is not used for another model', () => {
  assert.equal(due('gpt-4o'), true);
  assert.equal(due(OPUS), false);
  assert.equal(cc.shouldAutoCompact(lines, 'gpt-4o'), true);
  assert.equal(cc.shouldAutoCompact(lines, 'gpt-4o'), true);
  // OPUS is read and kept, then the messages are rejected.
  assert.throws(() => cc.shouldAutoCompact([null], OPUS), (e) => typeof e.code === 'string');
  assert.equal(cc.shouldAutoCompact(lines, 'gpt-4o'), true, 'not OPUS\'s threshold');
  assert.equal(cc.shouldAutoCompact(lines, OPUS), false);
  assert.equal(cc.shouldAutoCompact(lines, OPUS), false);
  assert.equal(cc.shouldAutoCompact(lines, 'gpt-4o'), true);
});

test('an invalid or absent model after a valid one answers as the export answers; the valid one still works', () => {
  assert.equal(cc.shouldAutoCompact(lines, OPUS), false);
  // 42 and {} are rejected; null, undefined and '' mean the default model.
  for (const bad of [42, null, undefined, {}, '']) {
    const want = callOutcome(() => cc.shouldAutoCompact(lines, bad, {}));
    assert.equal(typeof want.code === 'string', typeof bad === 'number' || typeof bad === 'object' && bad !== null, String(bad));
    assert.deepEqual(callOutcome(() => cc.shouldAutoCompact(lines, bad)), want);
    assert.deepEqual(callOutcome(() => cc.shouldAutoCompact(lines, bad)), want);
    assert.equal(cc.shouldAutoCompact(lines, OPUS), false);
  }
});

test('changed environment defaults change the routed answer at once', () => {
  try {
    assert.equal(cc.shouldAutoCompact(lines, 'gpt-4o'), true);
    assert.equal(cc.shouldAutoCompact(lines, 'gpt-4o'), true);
    cc.setEnvironmentDefaults({ DISABLE_AUTO_COMPACT: '1' });
    assert.equal(cc.shouldAutoCompact(lines, 'gpt-4o'), false);
    assert.equal(cc.shouldAutoCompact(lines, 'gpt-4o'), false);
    cc.setEnvironmentDefaults({});
    assert.equal(cc.shouldAutoCompact(lines, OPUS), false);
    assert.equal(cc.shouldAutoCompact(lines, OPUS), false);
    // A lower percentage brings OPUS's threshold under the count.
    cc.setEnvironmentDefaults({ CLAUDE_AUTOCOMPACT_PCT_OVERRIDE: '50' });
    assert.equal(cc.shouldAutoCompact(lines, OPUS), due(OPUS));
    assert.equal(cc.shouldAutoCompact(lines, OPUS), due(OPUS));
    assert.equal(due(OPUS), true);
  } finally {
    cc.setEnvironmentDefaults({});
  }
  assert.equal(cc.shouldAutoCompact(lines, OPUS), false);
});

test('a string model equal to the kept one but another value (a fresh string) answers the same', () => {
  const a = ['claude-', 'opus-4-6'].join('');
  assert.equal(cc.shouldAutoCompact(lines, OPUS), false);
  assert.equal(cc.shouldAutoCompact(lines, a), false);
  assert.equal(cc.shouldAutoCompact(lines, a), false);
});

/** A copy of the package whose getMaxOutputTokensForModel traps on a null config. */
async function trappingCopy(t) {
  const dir = mkdtempSync(join(tmpdir(), 'cc-route-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(new URL('../../pkg/', import.meta.url), dir, { recursive: true });
  const file = join(dir, 'context_compaction_bg.wasm');
  writeFileSync(file, trapWhenNull(readFileSync(file), (exports) => exports.filter((e) => e.name === 'getMaxOutputTokensForModel')));
  const p = await import(pathToFileURL(join(dir, 'node.js')).href);
  p.setEnvironmentDefaults({});
  return p;
}

test('after a trap, the route works on the fresh instance (its record is asked for again)', async (t) => {
  const p = await trappingCopy(t);
  const count = cc.tokenCountWithEstimation(lines, {});
  for (let round = 0; round < 3; round++) {
    assert.equal(p.tokenCountWithEstimation(lines), count);
    assert.equal(p.shouldAutoCompact(lines, 'gpt-4o'), true);
    assert.equal(p.shouldAutoCompact(lines, 'gpt-4o'), true);
    assert.equal(p.shouldAutoCompact(lines, OPUS), false);
    assert.equal(p.shouldAutoCompact(lines, OPUS), false);
    assert.throws(() => p.getMaxOutputTokensForModel(SONNET, null), (e) => e.code === 'INSTANCE_RESET');
  }
  assert.equal(p.tokenCountWithEstimation(lines), count);
  assert.equal(p.shouldAutoCompact(lines, OPUS), false);
});

test('the route never mutates its input and leaves other shapes to the exports', () => {
  const copy = JSON.stringify(lines);
  for (let i = 0; i < 3; i++) {
    cc.tokenCountWithEstimation(lines);
    cc.shouldAutoCompact(lines, OPUS);
  }
  assert.equal(JSON.stringify(lines), copy);
  const api = [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi', usage: { input_tokens: 10, output_tokens: 2 } }];
  const before = stats.routed;
  assert.deepEqual(callOutcome(() => cc.tokenCountWithEstimation(api)), general.count(api));
  assert.deepEqual(callOutcome(() => cc.shouldAutoCompact(api, OPUS)), general.should(api, OPUS));
  assert.equal(stats.routed, before, 'API messages are not transcript lines: no record');
});

test('a getter that calls the package while the record is written: both answers are the exports\' answers', () => {
  const want = { count: cc.tokenCountWithEstimation(lines, {}), should: cc.shouldAutoCompact(lines, 'gpt-4o', {}) };
  const other = readJsonl(`${TRANSCRIPTS}cc_small_short.jsonl`);
  const otherCount = cc.tokenCountWithEstimation(other, {});
  let inner = [];
  // The anchor line's `message` is read more than once, after the record's first words are
  // written: each read counts another array.
  const hostile = lines.slice();
  const at = hostile.findLastIndex((l) => l.type === 'assistant' && l.isSidechain !== true && l.message?.usage);
  const anchor = { ...hostile[at] };
  const message = anchor.message;
  Object.defineProperty(anchor, 'message', {
    enumerable: true,
    get() {
      inner.push(cc.tokenCountWithEstimation(other));
      return message;
    },
  });
  hostile[at] = anchor;
  for (let i = 0; i < 3; i++) {
    inner = [];
    assert.equal(cc.tokenCountWithEstimation(hostile), want.count);
    assert.equal(cc.shouldAutoCompact(hostile, 'gpt-4o'), want.should);
    assert.ok(inner.length > 0);
    for (const n of inner) assert.equal(n, otherCount);
  }
});

test('a trap inside the core\'s per-turn answer: INSTANCE_RESET, and the next call counts on a fresh instance', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cc-route-trap-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(new URL('../../pkg/', import.meta.url), dir, { recursive: true });
  const file = join(dir, 'context_compaction_bg.wasm');
  // `__ccPerTurnCount` replaced by a function that executes `unreachable`.
  const mod = binaryen.readBinary(readFileSync(file));
  const F = binaryen.Features;
  mod.setFeatures(F.MVP | F.MutableGlobals | F.NontrappingFPToInt | F.BulkMemory | F.BulkMemoryOpt | F.SignExt | F.ReferenceTypes | F.CallIndirectOverlong | F.Multivalue);
  const target = binaryen.getExportInfo(mod.getExport('__ccPerTurnCount')).value;
  const info = binaryen.getFunctionInfo(mod.getFunction(target));
  mod.addFunction('always_trap', info.params, info.results, [], mod.unreachable());
  mod.removeExport('__ccPerTurnCount');
  mod.addFunctionExport('always_trap', '__ccPerTurnCount');
  assert.ok(mod.validate());
  writeFileSync(file, mod.emitBinary());
  mod.dispose();
  const p = await import(pathToFileURL(join(dir, 'node.js')).href);
  p.setEnvironmentDefaults({});
  const count = cc.tokenCountWithEstimation(lines, {});
  for (let round = 0; round < 3; round++) {
    assert.throws(() => p.tokenCountWithEstimation(lines), (e) => e.code === 'INSTANCE_RESET' && e.cause instanceof WebAssembly.RuntimeError);
    // The instance is dead: this call takes the export, which starts a fresh one.
    assert.equal(p.tokenCountWithEstimation(lines), count);
    assert.equal(p.shouldAutoCompact(lines, OPUS), false);
    assert.equal(p.tokenCountWithEstimation(lines, {}), count);
  }
});

test('a record larger than the route\'s buffer falls back to the export, which makes it larger: the same answers', () => {
  const progress = lines.findLast((l) => l.type === 'progress');
  assert.ok(progress, 'the session has progress lines');
  // Lines after the last response: each is one word of the record (2,048 words fit at first).
  const long = lines.concat(Array.from({ length: 5_000 }, (_, k) => ({ ...progress, uuid: `p-${k}` })));
  const before = stats.routed;
  assert.deepEqual(callOutcome(() => cc.tokenCountWithEstimation(long)), general.count(long));
  // (An earlier test may have made the record large enough already.)
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(callOutcome(() => cc.tokenCountWithEstimation(long)), general.count(long));
    assert.deepEqual(callOutcome(() => cc.shouldAutoCompact(long, 'gpt-4o')), general.should(long, 'gpt-4o'));
  }
  assert.ok(stats.routed >= before + 2, 'the export made the record larger: the later counts are routed');
  assert.equal(cc.tokenCountWithEstimation(lines), general.count(lines).value);
  // Past the most the record grows to (2^18 words): the export counts every time.
  const huge = lines.concat(Array.from({ length: 270_000 }, (_, k) => ({ ...progress, uuid: `h-${k}` })));
  const at = stats.routed;
  for (let i = 0; i < 2; i++) assert.deepEqual(callOutcome(() => cc.tokenCountWithEstimation(huge)), general.count(huge));
  assert.equal(stats.routed, at, 'never routed');
  assert.equal(cc.tokenCountWithEstimation(lines), general.count(lines).value);
  assert.equal(stats.routed, at + 1);
});

test('the same conversation asked again is answered as before; a change in place (usage, a line\'s text, a line added) is seen at once', () => {
  const m = structuredClone(lines);
  const anchor = m.findLast((l) => l.type === 'assistant' && l.isSidechain !== true && l.message?.usage);
  const base = general.count(m).value;
  // The route settles these calls, and the core keeps the last record it read.
  const before = stats.routed;
  for (let i = 0; i < 3; i++) assert.equal(cc.tokenCountWithEstimation(m), base);
  assert.ok(stats.routed >= before + 3, 'routed');
  // The anchor's usage changed in place: the count moves by as much.
  anchor.message.usage.input_tokens += 1_234;
  assert.equal(cc.tokenCountWithEstimation(m), base + 1_234);
  assert.equal(cc.tokenCountWithEstimation(m), general.count(m).value);
  anchor.message.usage.input_tokens -= 1_234;
  assert.equal(cc.tokenCountWithEstimation(m), base);
  // A user line after it, then its text made longer in place.
  const line = { type: 'user', uuid: 'edit-1', parentUuid: m.at(-1).uuid, isSidechain: false, message: { role: 'user', content: [{ type: 'text', text: 'x'.repeat(400) }] } };
  m.push(line);
  const short = cc.tokenCountWithEstimation(m);
  assert.equal(short, general.count(m).value);
  assert.equal(cc.tokenCountWithEstimation(m), short);
  line.message.content[0].text = 'x'.repeat(4_000);
  const long = cc.tokenCountWithEstimation(m);
  assert.equal(long, general.count(m).value);
  assert.equal(long - short, 900);
  // Two conversations asked in turn: each its own answer.
  for (let i = 0; i < 3; i++) {
    assert.equal(cc.tokenCountWithEstimation(m), long);
    assert.equal(cc.tokenCountWithEstimation(lines), base);
  }
  // shouldAutoCompact the same, under two models whose thresholds are on either side.
  for (const model of MODELS) {
    const want = general.should(m, model).value;
    for (let i = 0; i < 3; i++) assert.equal(cc.shouldAutoCompact(m, model), want, model);
  }
});

test('a getter read while the record is written traps the instance and starts a fresh one: the count is the general path\'s', async (t) => {
  const p = await trappingCopy(t);
  const want = cc.tokenCountWithEstimation(lines, {});
  // The last line's `type` getter, once armed: a call that traps, then one that revives.
  let armed = false;
  const m = lines.slice();
  const last = { ...m.at(-1) };
  const type = last.type;
  Object.defineProperty(last, 'type', {
    enumerable: true,
    get() {
      if (armed) {
        armed = false;
        assert.throws(() => p.getMaxOutputTokensForModel(SONNET, null), (e) => e.code === 'INSTANCE_RESET');
        p.getContextWindowForModel(SONNET);
      }
      return type;
    },
  });
  m[m.length - 1] = last;
  assert.equal(p.tokenCountWithEstimation(m), want);
  armed = true;
  assert.equal(p.tokenCountWithEstimation(m), want);
  assert.equal(armed, false, 'the getter ran');
  assert.equal(p.tokenCountWithEstimation(m), want);
});
