// scripts/analyze.mjs as a user runs it: from any directory, table or JSON, clear errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyzeLines, formatAnalysis, readTranscriptFile } from '../../pkg/cli-lib.mjs';
import { LONG_TRANSCRIPT, TRANSCRIPTS as TRANSCRIPTS_DIR } from './helpers/support.mjs';

const SCRIPT = fileURLToPath(new URL('../../scripts/analyze.mjs', import.meta.url));

/** What scripts/analyze.mjs computes for `file`, in process (the package's own analysis). */
const analyzeFile = (file = LONG_TRANSCRIPT) => analyzeLines(readTranscriptFile(file).lines, file);

function analyze(args, cwd = tmpdir()) {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function withTempFile(t, name, text) {
  const dir = mkdtempSync(join(tmpdir(), 'cc-analyze-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

test('default run (from another cwd): per-call table, summary, warning state, boundary, microCompact', () => {
  const r = analyze([]);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.err, '');
  const out = r.out;
  assert.match(out, /cc_long_autocompact_4d5611e5\.jsonl/);
  assert.match(out, /1,512 lines, 139 API calls/);
  assert.match(out, /#\s+line\s+model\s+real\s+estimate\s+error/);
  const rows = out.split('\n').filter((l) => /^\s*\d+\s+\d+\s+claude-/.test(l));
  assert.equal(rows.length, 139, 'one row per API call');
  assert.match(rows[0], /^\s*1\s+8\s+claude-opus-4-6\s+26,450\s+37\s+-99\.86%\s+\*$/);
  assert.match(out, /median \|error\| [\d.]+%, p90 [\d.]+%/);
  assert.match(out, /auto-compact on at 167,000, warning\/error at 147,000, blocking at 177,000/);
  assert.match(out, /Compaction boundaries: 1/);
  assert.match(out, /line 754: trigger auto, preTokens 170,251;.*shouldAutoCompact true/);
  assert.match(out, /microCompact on the active part \(from line 755.*would clear \d+ tool results, freeing about [\d,]+ tokens/);
});

test('--json gives the same analysis as data', () => {
  const r = analyze(['--json']);
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.callCount, 139);
  assert.equal(j.calls.length, 139);
  assert.deepEqual(Object.keys(j.calls[1]).sort(), ['anchored', 'error', 'estimate', 'id', 'lineNumber', 'model', 'n', 'realContext']);
  assert.equal(j.boundaries.length, 1);
  assert.equal(j.boundaries[0].preTokens, 170_251);
  assert.equal(j.boundaries[0].lineNumber, 754);
  assert.equal(j.boundaries[0].shouldAutoCompactBefore, true);
  assert.ok(j.boundaries[0].ourCountBefore >= 167_000);
  assert.equal(j.end.model, 'claude-opus-4-6');
  assert.equal(j.end.thresholds.autoCompactThreshold, 167_000);
  assert.equal(j.end.thresholds.blockingLimit, 177_000);
  assert.equal(j.end.warningState.isAboveAutoCompactThreshold, false);
  assert.ok(j.summary.anchored.p90 < 0.04);
  assert.ok(j.microCompact.tokensFreed > 0);
  assert.deepEqual(j, JSON.parse(JSON.stringify(analyzeFile())), 'the CLI prints what the library computes');
});

test('a relative path is resolved against the cwd; every shared transcript analyses cleanly', () => {
  for (const f of ['cc_small_short.jsonl', 'cc_image_9e953218.jsonl', 'cc_long_autocompact_4d5611e5.agent-acompact-e1f845.jsonl']) {
    const r = analyze([f, '--json'], TRANSCRIPTS_DIR);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    assert.equal(j.file, TRANSCRIPTS_DIR + f);
    assert.ok(j.calls.length >= 1);
  }
  const sub = analyzeFile(TRANSCRIPTS_DIR + 'cc_long_autocompact_4d5611e5.agent-acompact-e1f845.jsonl');
  assert.equal(sub.subAgent, true);
  assert.match(formatAnalysis(sub), /sub-agent session file/);
  const image = analyzeFile(TRANSCRIPTS_DIR + 'cc_image_9e953218.jsonl');
  assert.equal(image.boundaries.length, 0);
  assert.match(formatAnalysis(image), /Compaction boundaries: none/);
  assert.equal(image.end.model, 'claude-sonnet-4-5-20250929');
});

test('missing file: exit code 2 and a clear message', () => {
  const r = analyze(['/nonexistent/dir/session.jsonl']);
  assert.equal(r.code, 2);
  assert.equal(r.out, '');
  assert.match(r.err, /cannot read transcript \/nonexistent\/dir\/session\.jsonl: no such file/);
  const d = analyze([tmpdir()]);
  assert.equal(d.code, 2);
  assert.match(d.err, /is a directory/);
});

test('malformed transcripts: exit code 2 naming the line', (t) => {
  const good = '{"type":"user","message":{"role":"user","content":"hi"}}';
  const cases = [
    [`${good}\n${good}\n{oops\n`, /line 3: invalid JSON/],
    [`${good}\n\n${good}\n`, /line 2: blank line/],
    [`${good}\n[1,2]\n`, /line 2: expected a JSON object/],
    [`${good}\n{"no":"type"}\n`, /line 2: .*needs a string `type`/],
    [`${good}\n{"type":"assistant","message":{"role":"assistant","id":"m","content":[],"usage":{"input_tokens":-3}}}\n${good}\n`, /line 2\b.*input_tokens must not be negative/],
    [`${good}\n{"type":"user","message":{"role":"user","content":[{"type":"text"}]}}\n`, /line 2\b.*`text` block/],
  ];
  for (const [text, expected] of cases) {
    const file = withTempFile(t, 'bad.jsonl', text);
    const r = analyze([file]);
    assert.equal(r.code, 2, `${expected}: ${r.err}`);
    assert.match(r.err, expected);
    assert.match(r.err, /bad\.jsonl/, 'names the file');
    assert.doesNotMatch(r.err, /at .*\.mjs:\d+/, 'a message, not a stack trace');
  }
});

test('usage errors: unknown option, two paths → exit code 2; --help → 0', () => {
  assert.equal(analyze(['--bogus']).code, 2);
  assert.match(analyze(['--bogus']).err, /unknown option --bogus/);
  assert.equal(analyze(['a.jsonl', 'b.jsonl']).code, 2);
  const h = analyze(['--help']);
  assert.equal(h.code, 0);
  assert.match(h.out, /usage: node scripts\/analyze\.mjs/);
});

test('a small synthetic session: numbers computed by hand', (t) => {
  const lines = [
    { type: 'user', uuid: 'u1', message: { role: 'user', content: 'x'.repeat(400) } },
    { type: 'assistant', uuid: 'a1', message: { role: 'assistant', id: 'm1', model: 'claude-opus-4-6', content: [{ type: 'text', text: 'ok' }], usage: { input_tokens: 10, cache_read_input_tokens: 20_000, output_tokens: 5 } } },
    { type: 'user', uuid: 'u2', message: { role: 'user', content: 'y'.repeat(4_000) } },
    { type: 'assistant', uuid: 'a2', message: { role: 'assistant', id: 'm2', model: 'claude-opus-4-6', content: [{ type: 'text', text: 'done' }], usage: { input_tokens: 5, cache_read_input_tokens: 21_000, output_tokens: 7 } } },
  ];
  const file = withTempFile(t, 's.jsonl', lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  const j = analyzeFile(file);
  assert.deepEqual(
    j.calls.map((c) => [c.lineNumber, c.realContext, c.estimate, c.anchored]),
    [
      [2, 20_010, 100, false],
      [4, 21_005, 20_015 + 1_000, true],
    ],
  );
  assert.equal(j.calls[1].error, (21_015 - 21_005) / 21_005);
  assert.equal(j.summary.anchored.count, 1);
  assert.equal(j.end.tokens, 21_012);
  assert.equal(j.end.warningState.percentLeft, Math.round(((167_000 - 21_012) / 167_000) * 100));
  assert.equal(readFileSync(file, 'utf8').split('\n').length, 5);
});
