// simulateSession (the package) and `context-compaction simulate` (the command line) on the
// real transcripts: the report's numbers, the calibration, custom policies and prices, errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as cc from '../../pkg/node.js';
import { formatSimulation } from '../../pkg/cli-lib.mjs';
import { SIMULATION_COLUMNS, simulationRows } from '../../pkg/analysis.mjs';

const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));
const CLI = join(PKG, 'cli.mjs');
const TRANSCRIPTS = fileURLToPath(new URL('../../../shared/transcripts/', import.meta.url));
const LONG = join(TRANSCRIPTS, 'cc_long_autocompact_4d5611e5.jsonl');
const SMALL = join(TRANSCRIPTS, 'cc_small_short.jsonl');
const longText = readFileSync(LONG, 'utf8');
const BUILTIN = ['recorded', 'claude-code', 'batched-clearing', 'pre-emptive', 'api-clear-tool-uses', 'api-compaction', 'recommended'];

function cli(args) {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: tmpdir(), encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

test('simulateSession: every built-in policy on the long session, text or parsed lines alike', async () => {
  const r = await cc.simulateSession(longText);
  assert.deepEqual(r.policies.map((p) => p.name), BUILTIN);
  assert.equal(r.model, 'claude-opus-4-6');
  assert.equal(r.calls, 139);
  assert.equal(r.threshold, cc.getAutoCompactThreshold('claude-opus-4-6'));
  assert.deepEqual(r.prices, { input: 5, cacheWrite5m: 6.25, cacheWrite1h: 10, cacheRead: 0.5, output: 25 });
  for (const p of r.policies) {
    assert.equal(p.requests, 139, p.name);
    assert.ok(p.meanContext <= p.peakContext && p.cost > 0, p.name);
    const t = p.tokens;
    const cost = (t.input * 5 + (t.cacheWrite - t.cacheWrite1h) * 6.25 + t.cacheWrite1h * 10 + t.cacheRead * 0.5 + t.output * 25) / 1e6;
    assert.ok(Math.abs(cost - p.cost) < 1e-9, `${p.name}: cost is the tokens at the prices`);
  }
  const base = r.policies.find((p) => p.name === 'claude-code');
  assert.equal(base.relativeCost, 1);
  assert.ok(base.compactions >= 1 && base.blockedSeconds > 0);
  // The recorded policy reproduces the recorded usage.
  const c = r.calibration;
  assert.equal(c.calls, 139);
  assert.equal(c.recorded.cacheRead, 11_618_567);
  assert.equal(c.recorded.cacheWrite, 479_537);
  assert.ok(Math.abs(c.readErrorPercent) <= 5 && Math.abs(c.writeErrorPercent) <= 5, JSON.stringify(c));
  assert.equal(c.clientBreaks.length, 1);
  // The recommended policy: cheaper, nothing lost, files restored (nothing to read again).
  const rec = r.policies.find((p) => p.name === 'recommended');
  assert.ok(rec.cost < base.cost * 0.85, `${rec.cost} vs ${base.cost}`);
  assert.equal(rec.lost, 0);
  assert.equal(rec.rereads, 0);
  assert.equal(r.recommended, 'recommended');
  // Every compaction waited for or swapped in; the provider's compaction restores no files,
  // and the files it did not restore are read again when the session uses them.
  for (const p of r.policies.filter((q) => q.name !== 'recorded')) {
    assert.equal(p.waits + p.swaps + p.earlySwaps, p.compactions, p.name);
    assert.ok(p.summaryCalls >= p.compactions, p.name);
  }
  const api = r.policies.find((p) => p.name === 'api-compaction');
  assert.ok(api.rereads > 0 && api.rereadTokens > 0 && api.rereadCost > 0, JSON.stringify(api));
  // The same from the parsed lines.
  const again = await cc.simulateSession(cc.parseTranscript(longText), { policies: ['claude-code'] });
  assert.deepEqual(again.policies[0], { ...base, relativeCost: 1 });
});

test('simulateSession: custom policies, prices, model and summary speed', async () => {
  const r = await cc.simulateSession(longText, {
    policies: ['claude-code', { name: 'early', compact: { threshold: 100_000 } }, { name: 'one-hour', ttl: '1h', compact: {} }],
    prices: { input: 1 },
    summaryTokensPerSecond: 100,
  });
  assert.deepEqual(r.policies.map((p) => p.name), ['claude-code', 'early', 'one-hour']);
  assert.deepEqual(r.prices, { input: 1, cacheWrite5m: 1.25, cacheWrite1h: 2, cacheRead: 0.1, output: 25 });
  const [cc0, early, hour] = r.policies;
  assert.ok(early.compactions > cc0.compactions);
  assert.ok(early.peakContext < 101_000);
  assert.ok(hour.tokens.cacheWrite1h === hour.tokens.cacheWrite && hour.tokens.cacheWrite > 0);
  assert.equal(cc0.tokens.cacheWrite1h, 0);
  // Twice the speed, half the wait.
  const slow = await cc.simulateSession(longText, { policies: ['claude-code'], summaryTokensPerSecond: 50 });
  assert.ok(Math.abs(slow.policies[0].blockedSeconds - 2 * cc0.blockedSeconds) < 1e-6);
  // A session without recorded usage: no calibration, no recorded policy.
  const lines = cc.parseTranscript(readFileSync(SMALL, 'utf8')).map((l) => {
    if (l.type !== 'assistant') return l;
    const { usage, ...message } = l.message;
    return { ...l, message };
  });
  const bare = await cc.simulateSession(lines);
  assert.equal(bare.calibration, null);
  assert.ok(!bare.policies.some((p) => p.name === 'recorded'));
});

test('simulateSession: bad input is an INVALID_ARGUMENT error naming what is wrong', async () => {
  const cases = [
    [[longText, { policies: ['nope'] }], /unknown policy "nope".*claude-code/],
    [[longText, { policies: [{ name: 'x', compact: { thresold: 1 } }] }], /policies\[0\].*thresold/],
    [[longText, { policies: [] }], /policies is empty/],
    [[longText, { speed: 3 }], /unknown field `speed`/],
    [[longText, { prices: { output: -1 } }], /prices\.output/],
    [[longText, { summaryTokensPerSecond: 0 }], /summaryTokensPerSecond/],
    [[42], /session must be/],
  ];
  for (const [args, re] of cases) {
    await assert.rejects(cc.simulateSession(...args), (e) => e.code === 'INVALID_ARGUMENT' && re.test(e.message), String(re));
  }
  await assert.rejects(cc.simulateSession('{"type":"user"}\nnot json\n'), (e) => e.code === 'MALFORMED_TRANSCRIPT' && /line 2/.test(e.message));
});

test('the side-by-side rows: one per policy, the columns in order, the recommended one marked', async () => {
  const r = await cc.simulateSession(longText);
  const rows = simulationRows(r);
  assert.equal(rows.length, r.policies.length);
  for (const [i, row] of rows.entries()) {
    const p = r.policies[i];
    assert.equal(row.length, SIMULATION_COLUMNS.length);
    assert.equal(row[0], p.name + (p.name === r.recommended ? ' *' : ''));
    assert.equal(row[1], `$${p.cost.toFixed(2)}`);
    const cell = (/** @type {string} */ name) => row[SIMULATION_COLUMNS.indexOf(name)];
    assert.equal(cell('compactions'), String(p.compactions));
    assert.equal(cell('waits'), String(p.waits));
    assert.equal(cell('refused'), p.caughtUp ? `${p.refusedSwaps} (${p.caughtUp} caught up)` : String(p.refusedSwaps));
    assert.equal(cell('summary calls'), String(p.summaryCalls));
    assert.equal(cell('lost'), String(p.lost));
    assert.match(cell('swaps'), p.earlySwaps ? new RegExp(`^${p.swaps} \\+ ${p.earlySwaps} early$`) : new RegExp(`^${p.swaps}$`));
    assert.match(cell('re-reads'), p.rereads ? new RegExp(`^${p.rereads}: .*, \\$-?\\d+\\.\\d\\d$`) : /^0$/);
  }
});

test('context-compaction simulate: the table, --json, --policy names / JSON / files, --prices', async (t) => {
  const r = cli(['simulate', LONG]);
  assert.equal(r.code, 0, r.err);
  const report = await cc.simulateSession(longText);
  assert.equal(r.out, formatSimulation(report, LONG) + '\n');
  assert.match(r.out, /policy +cost +vs claude-code +peak/);
  for (const name of BUILTIN) assert.match(r.out, new RegExp(`^${name}`, 'm'));
  assert.match(r.out, /Calibration .*139 calls/);

  const json = cli(['simulate', LONG, '--json']);
  assert.equal(json.code, 0, json.err);
  assert.deepEqual(JSON.parse(json.out), report);

  const dir = mkdtempSync(join(tmpdir(), 'cc-simulate-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'policies.json');
  writeFileSync(file, JSON.stringify([{ name: 'from-file', compact: { threshold: 90000 } }]));
  const custom = cli(['simulate', LONG, '--json', '--policy', 'claude-code', '--policy', '{"name":"inline","microCompact":{"whenCacheCold":true}}', '--policy', file, '--prices', '{"input":3}']);
  assert.equal(custom.code, 0, custom.err);
  const got = JSON.parse(custom.out);
  assert.deepEqual(got.policies.map((p) => p.name), ['claude-code', 'inline', 'from-file']);
  assert.equal(got.prices.input, 3);
  assert.equal(got.prices.cacheRead, 0.3);
});

test('context-compaction simulate: bad arguments → exit 2 with a clear message', async () => {
  for (const [args, re] of [
    [['simulate'], /which transcript/],
    [['simulate', LONG, '--policy', 'nope'], /unknown policy "nope"/],
    [['simulate', LONG, '--policy', '{"name":'], /invalid JSON/],
    [['simulate', LONG, '--policy', 'missing-file.json'], /not JSON, and no such file/],
    [['simulate', LONG, '--summary-speed=0'], /--summary-speed must be a number > 0/],
    [['simulate', join(TRANSCRIPTS, 'nope.jsonl')], /no such file/],
  ]) {
    const r = cli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.match(r.err, re);
  }
});
