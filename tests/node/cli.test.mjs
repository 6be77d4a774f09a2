// The command line (`npx context-compaction`, js/cli.mjs → pkg/cli.mjs) as a user runs it: a
// child process per run, the real transcripts, temporary output files, the fake Messages API
// (tests/fake-api/server.mjs) for the API paths, and an npm-installed copy of the package.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as cc from '../../pkg/node.js';
import { analyzeLines, formatAnalysis, progressDisplay, readFileStateFromTranscript, readTranscriptFile } from '../../pkg/cli-lib.mjs';
import { startFakeApi, reply } from '../fake-api/server.mjs';

cc.setEnvironmentDefaults({});

const PKG = fileURLToPath(new URL('../../pkg/', import.meta.url));
const CLI = join(PKG, 'cli.mjs');
const TRANSCRIPTS = fileURLToPath(new URL('../../../shared/transcripts/', import.meta.url));
const LONG = join(TRANSCRIPTS, 'cc_long_autocompact_4d5611e5.jsonl');
// A short session whose compaction shrinks it (tests/fixtures/README.md). The shared
// cc_small_short.jsonl is smaller than any summary of it: compacting it is refused
// (COMPACTION_NOT_SMALLER).
const SMALL = fileURLToPath(new URL('../fixtures/short_session.jsonl', import.meta.url));
const MODEL = 'claude-opus-4-6';
const SUMMARY =
  '<analysis>looked at it</analysis>\n<summary>\n1. Primary request: unified transcript visualization (FAKE-API-SUMMARY).\n2. Pending: tests.\n</summary>';

/** The child's environment: no API key, base URL or compaction settings from the outside. */
function childEnv(extra = {}) {
  const env = { ...process.env };
  for (const k of [
    'ANTHROPIC_API_KEY',
    'ANTHROPIC_BASE_URL',
    'DISABLE_COMPACT',
    'DISABLE_AUTO_COMPACT',
    'CLAUDE_AUTOCOMPACT_PCT_OVERRIDE',
    'CLAUDE_CODE_AUTO_COMPACT_WINDOW',
  ]) {
    delete env[k];
  }
  return { ...env, ...extra };
}

/**
 * Runs the CLI in a child process without blocking this process's event loop (the fake API
 * server lives here). Resolves with `{code, out, err}`.
 */
function cli(args, { env = {}, cwd = tmpdir(), command = [process.execPath, CLI], onSpawn } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0], [...command.slice(1), ...args], { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    onSpawn?.(child);
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? signal, out, err });
    });
  });
}

function tempDir(t, prefix = 'cc-cli-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function fakeApi(t, handler) {
  const api = await startFakeApi(handler);
  t.after(() => api.close());
  return api;
}

/** Splits an output transcript into the original part (checked byte for byte) and the new lines. */
function splitOutput(outText, inputText) {
  assert.ok(outText.startsWith(inputText), 'the original lines come first, byte for byte');
  return cc.parseTranscript(outText.slice(inputText.length));
}

/** The new lines are boundary, summary, then restored-context attachments chained after it. */
function assertPostCompactShape(fresh, report) {
  assert.equal(fresh.length, report.linesWritten.new);
  const [boundary, summary, ...rest] = fresh;
  assert.equal(boundary.type, 'system');
  assert.equal(boundary.subtype, 'compact_boundary');
  assert.equal(boundary.parentUuid, null);
  assert.equal(boundary.compactMetadata.trigger, 'manual');
  assert.equal(boundary.compactMetadata.preTokens, report.tokensBefore);
  assert.equal(summary.type, 'user');
  assert.equal(summary.isCompactSummary, true);
  assert.equal(summary.parentUuid, boundary.uuid);
  assert.equal(rest.length, report.restoredFiles.length + report.restoredSkills.length);
  for (const a of rest) assert.equal(a.type, 'attachment');
  assert.deepEqual(
    rest.map((a) => a.attachment.path),
    report.restoredFiles.map((f) => f.path),
  );
  return { boundary, summary, rest };
}

const summaryText = (line) => (typeof line.message.content === 'string' ? line.message.content : line.message.content.map((b) => b.text ?? '').join(''));

// ---- help, version, usage ------------------------------------------------------------------------

test('--help / -h / --version; no command, an unknown command or option → exit 2 with a hint', async () => {
  for (const flag of ['--help', '-h']) {
    const r = await cli([flag]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^Usage: context-compaction <command>/);
    assert.match(r.out, /analyze <session\.jsonl> \[--json\]/);
    assert.match(r.out, /compact <session\.jsonl> \[options\]/);
    assert.match(r.out, /--api-key KEY/);
    assert.match(r.out, /Exit codes/);
  }
  const compactHelp = await cli(['compact', '--help']);
  assert.equal(compactHelp.code, 0);
  assert.match(compactHelp.out, /--append-missing/);
  const v = await cli(['--version']);
  assert.equal(v.code, 0);
  assert.equal(v.out.trim(), JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8')).version);
  for (const args of [[], ['frobnicate'], ['--frob'], ['compact', SMALL, '--frob'], ['analyze'], ['analyze', SMALL, SMALL], ['compact', SMALL, '--offline', '--api-key', 'k'], ['compact', SMALL, '--max-summary-tokens', 'lots']]) {
    const r = await cli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.err}`);
    assert.equal(r.out, '');
    assert.match(r.err, /^context-compaction: .+\nRun `context-compaction --help` for the usage\.\n$/, args.join(' '));
  }
});

test('the package: bin entry, executable cli.mjs with its shebang, its files published', () => {
  const meta = JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8'));
  assert.deepEqual(meta.bin, { 'context-compaction': './cli.mjs' });
  for (const f of ['cli.mjs', 'cli-lib.mjs', 'analysis.mjs']) assert.ok(meta.files.includes(f), f);
  assert.ok(readFileSync(CLI, 'utf8').startsWith('#!/usr/bin/env node\n'));
  assert.ok(statSync(CLI).mode & 0o111, 'executable');
  const importsOf = (f) => [...readFileSync(join(PKG, f), 'utf8').matchAll(/^(?:import|export) .* from '([^']+)';$/gm)].map((m) => m[1]);
  for (const f of ['cli.mjs', 'cli-lib.mjs']) {
    for (const s of importsOf(f)) {
      assert.ok(s.startsWith('node:') || s === './node.js' || s === './cli-lib.mjs' || s === './analysis.mjs', `${f} imports ${s}`);
    }
  }
  // The analysis the web page loads from /pkg/ must stay browser-safe: it imports nothing.
  const analysis = readFileSync(join(PKG, 'analysis.mjs'), 'utf8');
  assert.deepEqual(importsOf('analysis.mjs'), []);
  assert.doesNotMatch(analysis, /\bimport\s*\(|\brequire\s*\(|\bprocess\./, 'no dynamic import, require or process');
});

// ---- analyze -------------------------------------------------------------------------------------

test('analyze: the real transcript, table and --json: what analyzeLines computes, formatAnalysis prints', async () => {
  const expected = analyzeLines(readTranscriptFile(LONG).lines, LONG);
  const table = await cli(['analyze', LONG]);
  assert.equal(table.code, 0, table.err);
  assert.equal(table.err, '');
  assert.equal(table.out, formatAnalysis(expected) + '\n');
  assert.match(table.out, /1,512 lines, 139 API calls/);
  assert.match(table.out, /#\s+line\s+model\s+real\s+estimate\s+error/);
  assert.match(table.out, /Warning state at the end \(model claude-opus-4-6\)/);
  assert.match(table.out, /microCompact on the active part \(from line 755/);
  const json = await cli(['analyze', LONG, '--json']);
  assert.equal(json.code, 0, json.err);
  const j = JSON.parse(json.out);
  assert.deepEqual(j, JSON.parse(JSON.stringify(expected)));
  assert.equal(j.callCount, 139);
  assert.equal(j.boundaries[0].lineNumber, 754);
});

test('analyze: a relative path from another directory', async () => {
  const r = await cli(['analyze', 'short_session.jsonl', '--json'], { cwd: dirname(SMALL) });
  assert.equal(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out).file, SMALL);
});

// ---- compact --offline ---------------------------------------------------------------------------

test('compact --offline: the output parses, keeps the history, ends with boundary + summary (+ restored files); its count is the reported after-count', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'out.jsonl');
  const r = await cli(['compact', LONG, '--offline', '-o', out, '--json']);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.err, '', 'no progress display when stderr is not a terminal');
  const report = JSON.parse(r.out);
  assert.equal(report.input, LONG);
  assert.equal(report.output, out);
  assert.equal(report.model, MODEL);
  assert.equal(report.summarizer.kind, 'offline');
  assert.ok(report.tokensBefore > 100_000, `before ${report.tokensBefore}`);
  // What the next request sends: the system prompt and tools (learned from the usage seen)
  // and the compacted messages.
  assert.ok(report.calibration.overhead > 20_000 && report.calibration.ratio > 1, JSON.stringify(report.calibration));
  assert.ok(report.tokensAfter - report.calibration.overhead < report.tokensBefore / 3, `after ${report.tokensAfter}`);
  assert.ok(report.restoredFiles.length > 0, 'files read in the active part are restored');
  assert.deepEqual(Object.keys(report.lossReport).sort(), ['errors', 'files', 'userMessages']);

  const inputText = readFileSync(LONG, 'utf8');
  const outText = readFileSync(out, 'utf8');
  const all = cc.parseTranscript(outText);
  assert.equal(all.length, report.linesWritten.history + report.linesWritten.new);
  assert.equal(report.linesWritten.history, cc.parseTranscript(inputText).length);
  const fresh = splitOutput(outText, inputText);
  const { summary } = assertPostCompactShape(fresh, report);
  assert.match(summaryText(summary), /<summary>/);
  // What Claude Code resumes from: only what follows the last boundary counts (with what the
  // history's usage teaches; the new lines alone need it given).
  assert.equal(cc.tokenCountWithEstimation(all), report.tokensAfter);
  assert.equal(cc.tokenCountWithEstimation(fresh, { calibration: report.calibration }), report.tokensAfter);
  assert.deepEqual(readdirSync(dir), ['out.jsonl'], 'no temporary file left');
});

test('compact --offline on a session with nothing to restore: the file ends with boundary + summary; text report', async (t) => {
  const dir = tempDir(t);
  const out = join(dir, 'small.jsonl');
  const r = await cli(['compact', SMALL, '-o', out]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^Compacted .*short_session\.jsonl\n/);
  assert.match(r.out, /summarizer\s+offline/);
  assert.match(r.out, /tokens before\s+[\d,]+/);
  assert.match(r.out, /tokens after\s+[\d,]+/);
  assert.match(r.out, /Restored files: none/);
  assert.match(r.out, /Loss report: /);
  const all = cc.parseTranscript(readFileSync(out, 'utf8'));
  const [boundary, summary] = all.slice(-2);
  assert.equal(boundary.subtype, 'compact_boundary');
  assert.equal(summary.isCompactSummary, true);
  const after = Number(/tokens after\s+([\d,]+)/.exec(r.out)[1].replace(/,/g, ''));
  assert.equal(cc.tokenCountWithEstimation(all), after);
});

test('compact --no-history writes only the post-compaction lines; the offline summary is deterministic', async (t) => {
  const dir = tempDir(t);
  const a = join(dir, 'a.jsonl');
  const b = join(dir, 'b.jsonl');
  const ra = await cli(['compact', LONG, '--no-history', '-o', a, '--json']);
  const rb = await cli(['compact', LONG, '--no-history', '-o', b, '--json']);
  assert.equal(ra.code, 0, ra.err);
  assert.equal(rb.code, 0, rb.err);
  const report = JSON.parse(ra.out);
  assert.equal(report.history, false);
  assert.equal(report.linesWritten.history, 0);
  const fa = cc.parseTranscript(readFileSync(a, 'utf8'));
  const fb = cc.parseTranscript(readFileSync(b, 'utf8'));
  assertPostCompactShape(fa, report);
  // Without the history the file no longer shows the usage the count was learned from.
  assert.equal(cc.tokenCountWithEstimation(fa, { calibration: report.calibration }), report.tokensAfter);
  assert.ok(cc.tokenCountWithEstimation(fa) < report.tokensAfter);
  assert.equal(summaryText(fa[1]), summaryText(fb[1]), 'same transcript, same summary');
});

test('compact: default output next to the input; -o - writes the transcript to stdout and the report to stderr', async (t) => {
  const dir = tempDir(t);
  const input = join(dir, 'session.jsonl');
  writeFileSync(input, readFileSync(SMALL));
  const r = await cli(['compact', input]);
  assert.equal(r.code, 0, r.err);
  assert.ok(existsSync(join(dir, 'session.compacted.jsonl')));
  assert.deepEqual(readFileSync(input), readFileSync(SMALL), 'the input is left alone');
  const s = await cli(['compact', input, '-o', '-', '--no-history']);
  assert.equal(s.code, 0, s.err);
  const lines = cc.parseTranscript(s.out);
  assert.equal(lines[0].subtype, 'compact_boundary');
  assert.match(s.err, /tokens after/);
  assert.deepEqual(readdirSync(dir).sort(), ['session.compacted.jsonl', 'session.jsonl']);
});

test('compact --progress (not a terminal): plain progress lines on stderr, with the streamed character count', async (t) => {
  const dir = tempDir(t);
  const r = await cli(['compact', SMALL, '-o', join(dir, 'o.jsonl'), '--progress', '--json']);
  assert.equal(r.code, 0, r.err);
  const report = JSON.parse(r.out);
  assert.ok(!r.err.includes('\x1b'), 'no terminal escapes');
  const lines = r.err.trim().split('\n');
  assert.match(lines[0], /^progress: starting \([\d,]+ tokens\)$/);
  assert.ok(lines.includes('progress: summarizing'));
  assert.ok(lines.includes(`progress: ${report.streamedCharacters.toLocaleString('en-US')} characters streamed`), r.err);
  assert.equal(lines.at(-1), 'progress: done');
});

test('compact --preview prints what would happen and writes nothing', async (t) => {
  const dir = tempDir(t);
  const input = join(dir, 'session.jsonl');
  writeFileSync(input, readFileSync(LONG));
  const r = await cli(['compact', input, '--preview', '--json']);
  assert.equal(r.code, 0, r.err);
  const p = JSON.parse(r.out).preview;
  for (const k of ['tokensBefore', 'estimatedTokensAfter', 'threshold', 'isAboveThreshold', 'microCompact', 'restoredFiles', 'restoredSkills', 'estimatedSummaryTokens']) {
    assert.ok(k in p, k);
  }
  assert.equal(p.tokensBefore, cc.tokenCountWithEstimation(cc.parseTranscript(readFileSync(LONG, 'utf8'))));
  assert.ok(p.estimatedTokensAfter < p.tokensBefore);
  // The preview against what the offline compaction then does.
  const done = await cli(['compact', input, '--offline', '-o', join(dir, 'done.jsonl'), '--json']);
  assert.equal(done.code, 0, done.err);
  const real = JSON.parse(done.out);
  assert.deepEqual(p.restoredFiles.map((f) => [f.path, f.tokens]), real.restoredFiles.map((f) => [f.path, f.tokens]));
  assert.ok(Math.abs(p.estimatedTokensAfter - real.tokensAfter) / real.tokensAfter < 0.05, `${p.estimatedTokensAfter} vs ${real.tokensAfter}`);
  rmSync(join(dir, 'done.jsonl'));
  const text = await cli(['compact', input, '--preview']);
  assert.equal(text.code, 0, text.err);
  assert.match(text.out, /nothing written, no model call/);
  assert.match(text.out, /estimated tokens after/);
  assert.deepEqual(readdirSync(dir), ['session.jsonl'], 'nothing written');
});

// ---- compact: failures ---------------------------------------------------------------------------

test('compact: a missing file → exit 2, nothing written', async (t) => {
  const dir = tempDir(t);
  const r = await cli(['compact', join(dir, 'nope.jsonl'), '-o', join(dir, 'out.jsonl')]);
  assert.equal(r.code, 2);
  assert.match(r.err, /cannot read transcript .*nope\.jsonl: no such file/);
  assert.deepEqual(readdirSync(dir), []);
  const a = await cli(['analyze', join(dir, 'nope.jsonl')]);
  assert.equal(a.code, 2);
  assert.match(a.err, /no such file/);
});

test('compact / analyze: a malformed line 3 → exit 2 naming line 3, nothing written', async (t) => {
  const dir = tempDir(t);
  const input = join(dir, 'bad.jsonl');
  const good = readFileSync(SMALL, 'utf8').split('\n');
  writeFileSync(input, [good[0], good[1], '{"type":"user", "message": {oops', ...good.slice(3)].join('\n'));
  for (const cmd of ['compact', 'analyze']) {
    const r = await cli([cmd, input, ...(cmd === 'compact' ? ['-o', join(dir, 'out.jsonl')] : [])]);
    assert.equal(r.code, 2, `${cmd}: ${r.err}`);
    assert.match(r.err, /malformed transcript .*bad\.jsonl: line 3\b/);
    assert.equal(r.out, '');
  }
  // A line that is JSON but not a valid message: the library's messages[i] becomes the line.
  const input2 = join(dir, 'bad2.jsonl');
  writeFileSync(input2, [good[0], good[1], JSON.stringify({ type: 'assistant', message: { role: 'assistant', content: [{ type: 'tool_result' }] } }), ''].join('\n'));
  const r2 = await cli(['compact', input2, '-o', join(dir, 'out.jsonl')]);
  assert.equal(r2.code, 2, r2.err);
  assert.match(r2.err, /line 3/);
  assert.doesNotMatch(r2.err, /messages\[/);
  assert.deepEqual(readdirSync(dir).sort(), ['bad.jsonl', 'bad2.jsonl']);
});

test("compact: a sub-agent's own session file is compacted as its own conversation; the new lines are the agent's", async (t) => {
  const dir = tempDir(t);
  const input = join(TRANSCRIPTS, 'cc_long_autocompact_4d5611e5.agent-acompact-e1f845.jsonl');
  const out = join(dir, 'out.jsonl');
  const r = await cli(['compact', input, '-o', out, '--json']);
  assert.equal(r.code, 0, r.err);
  const report = JSON.parse(r.out);
  assert.equal(report.model, MODEL, "the model of the agent's own lines");
  const outText = readFileSync(out, 'utf8');
  const fresh = splitOutput(outText, readFileSync(input, 'utf8'));
  assert.equal(fresh.length, report.linesWritten.new);
  for (const l of fresh) {
    assert.equal(l.isSidechain, true, l.type);
    assert.equal(l.agentId, 'acompact-e1f845', l.type);
    assert.equal(l.sessionId, '4d5611e5-241a-462a-8d15-5122611a9569', l.type);
  }
  // Read again, the file is still the sub-agent's conversation: the summary is sent.
  const all = cc.parseTranscript(outText);
  assert.match(JSON.stringify(cc.toApiMessages(all)), /<summary>/);
  assert.equal(cc.tokenCountWithEstimation(all), report.tokensAfter);
});

test('compact: an unwritable output is refused before any work → exit 2', async (t) => {
  const dir = tempDir(t);
  const r = await cli(['compact', SMALL, '-o', join(dir, 'missing-dir', 'out.jsonl')]);
  assert.equal(r.code, 2);
  assert.match(r.err, /cannot write .*no such directory/);
  mkdirSync(join(dir, 'adir'));
  const r2 = await cli(['compact', SMALL, '-o', join(dir, 'adir')]);
  assert.equal(r2.code, 2);
  assert.match(r2.err, /is a directory/);
});

// ---- compact with the API (the fake Messages API) ------------------------------------------------

test('compact --api-key against the fake API (SSE): the request, the streamed summary, the output', async (t) => {
  const api = await fakeApi(t, reply.stream(SUMMARY, { inputTokens: 9_999, outputTokens: 99 }));
  const dir = tempDir(t);
  const out = join(dir, 'out.jsonl');
  const r = await cli(['compact', LONG, '--api-key', 'sk-test-cli', '--base-url', api.url, '-o', out, '--json', '--progress', '--instructions', 'keep the test plan']);
  assert.equal(r.code, 0, r.err);
  assert.equal(api.requests.length, 1);
  const req = api.requests[0];
  assert.equal(req.path, '/v1/messages');
  assert.equal(req.headers['x-api-key'], 'sk-test-cli');
  assert.equal(req.body.stream, true);
  assert.equal(req.body.model, MODEL, 'the model defaults to the transcript’s');
  assert.match(JSON.stringify(req.body), /keep the test plan/);
  const report = JSON.parse(r.out);
  assert.deepEqual(report.summarizer, { kind: 'anthropic', baseURL: api.url });
  assert.equal(report.streamedCharacters, SUMMARY.length);
  assert.equal(report.compactionUsage.input_tokens, 9_999);
  assert.ok(report.lossReport.files.length > 0, 'a summary that names no file: the loss report says so');
  assert.match(r.err, new RegExp(`progress: ${SUMMARY.length} characters streamed`));
  const inputText = readFileSync(LONG, 'utf8');
  const outText = readFileSync(out, 'utf8');
  const fresh = splitOutput(outText, inputText);
  const { summary } = assertPostCompactShape(fresh, report);
  assert.match(summaryText(summary), /FAKE-API-SUMMARY/);
  assert.doesNotMatch(summaryText(summary), /looked at it/, 'the analysis is dropped');
  assert.equal(cc.tokenCountWithEstimation(cc.parseTranscript(outText)), report.tokensAfter);
});

test('compact: the API key from ANTHROPIC_API_KEY, the base URL from ANTHROPIC_BASE_URL; --append-missing fills the summary in', async (t) => {
  const api = await fakeApi(t, reply.stream(SUMMARY));
  const dir = tempDir(t);
  const out = join(dir, 'out.jsonl');
  const r = await cli(['compact', LONG, '-o', out, '--append-missing'], { env: { ANTHROPIC_API_KEY: 'sk-from-env', ANTHROPIC_BASE_URL: api.url } });
  assert.equal(r.code, 0, r.err);
  assert.equal(api.requests[0].headers['x-api-key'], 'sk-from-env');
  assert.match(r.out, /summarizer\s+Anthropic Messages API at http:\/\/127\.0\.0\.1:\d+/);
  assert.match(r.out, /Loss report: \d+ items? .*appended to the summary/);
  const missingFile = /\n  files \(\d+\):\n    (\S+)/.exec(r.out)[1];
  const fresh = cc.parseTranscript(readFileSync(out, 'utf8'));
  const summary = fresh.findLast((l) => l.isCompactSummary === true);
  assert.ok(summaryText(summary).includes(missingFile), `the summary lists ${missingFile}`);
  // --offline ignores the environment's key.
  const off = await cli(['compact', SMALL, '--offline', '-o', join(dir, 'off.jsonl'), '--json'], { env: { ANTHROPIC_API_KEY: 'sk-from-env', ANTHROPIC_BASE_URL: api.url } });
  assert.equal(off.code, 0, off.err);
  assert.equal(JSON.parse(off.out).summarizer.kind, 'offline');
  assert.equal(api.requests.length, 1);
});

test('compact: an API error → exit 4 with the HTTP status; no output file, no temporary file', async (t) => {
  const api = await fakeApi(t, reply.error(401, 'authentication_error', 'invalid x-api-key'));
  const dir = tempDir(t);
  const out = join(dir, 'out.jsonl');
  const r = await cli(['compact', LONG, '--api-key', 'sk-bad', '--base-url', api.url, '-o', out]);
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /API error: HTTP 401 authentication_error: invalid x-api-key/);
  assert.match(r.err, /nothing was written/);
  assert.equal(r.out, '');
  assert.deepEqual(readdirSync(dir), []);
});

test('compact: a stream that fails after text arrived → exit 4, no partial output', async (t) => {
  // A non-transient error type, so that neither the summarizer nor the pipeline retries.
  const api = await fakeApi(t, reply.streamError('invalid_request_error', 'bad stream', { afterEvents: 5, text: SUMMARY }));
  const dir = tempDir(t);
  const r = await cli(['compact', LONG, '--api-key', 'sk-test', '--base-url', api.url, '-o', join(dir, 'out.jsonl'), '--progress']);
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /API error: HTTP 400 invalid_request_error: bad stream/);
  assert.match(r.err, /progress: summarizing\nprogress: \d+ characters streamed before the failure\n/);
  assert.equal(api.requests.length, 1);
  assert.deepEqual(readdirSync(dir), []);
});

test('compact: Ctrl-C while the summary streams → exit 130, nothing written', async (t) => {
  const api = await fakeApi(t, reply.stall(SUMMARY, { afterEvents: 4 }));
  const dir = tempDir(t);
  let child;
  const run = cli(['compact', LONG, '--api-key', 'sk-test', '--base-url', api.url, '-o', join(dir, 'out.jsonl')], { onSpawn: (c) => (child = c) });
  await api.waitForRequest(1);
  await api.wait(100);
  child.kill('SIGINT');
  const r = await run;
  assert.equal(r.code, 130, r.err);
  assert.match(r.err, /interrupted: nothing was written/);
  assert.deepEqual(readdirSync(dir), []);
});

test('compact: prompt too long whatever is dropped → exit 3 with PROMPT_TOO_LONG', async (t) => {
  const api = await fakeApi(t, (rec) => reply.promptTooLong(Math.ceil(rec.rawBody.length / 4), 5));
  const dir = tempDir(t);
  const r = await cli(['compact', LONG, '--api-key', 'sk-test', '--base-url', api.url, '-o', join(dir, 'out.jsonl')]);
  assert.equal(r.code, 3, r.err);
  assert.match(r.err, /compaction failed \(PROMPT_TOO_LONG\)/);
  assert.match(r.err, /HTTP 400/);
  assert.ok(api.requests.length >= 2, 'retried with the oldest turns dropped');
  assert.deepEqual(readdirSync(dir), []);
});

test('compact: an unreachable API → exit 4 (network error)', async (t) => {
  const api = await startFakeApi();
  const url = api.url;
  await api.close();
  const dir = tempDir(t);
  const r = await cli(['compact', SMALL, '--api-key', 'sk-test', '--base-url', url, '-o', join(dir, 'out.jsonl')]);
  assert.equal(r.code, 4, r.err);
  assert.match(r.err, /network error/i);
  assert.deepEqual(readdirSync(dir), []);
});

// ---- pieces of cli-lib.mjs ------------------------------------------------------------------------

test('the progress display on a terminal: one status line redrawn in place, cleared at the end', () => {
  const writes = [];
  const p = progressDisplay({ columns: 200, write: (s) => writes.push(s) }, 'tty');
  p.onProgress({ phase: 'start', tokens: 123_456 });
  p.onProgress({ phase: 'summarizing', attempt: 1 });
  p.onText('x'.repeat(1_000));
  p.onProgress({ phase: 'summarized' });
  p.finish();
  assert.ok(writes.every((w) => w.startsWith('\r\x1b[K')), 'every write redraws the one line');
  assert.match(writes[0], /compacting: starting \(123,456 tokens\)/);
  assert.ok(writes.some((w) => /compacting: summarizing/.test(w)));
  assert.match(writes.at(-2), /compacting: summary received · 1,000 characters streamed · \d+\.\d s$/);
  assert.equal(writes.at(-1), '\r\x1b[K', 'cleared before the report');
  assert.ok(!writes.some((w) => w.includes('\n')));
  assert.equal(p.chars, 1_000);
  const silent = [];
  const off = progressDisplay({ write: (s) => silent.push(s) }, 'off');
  off.onProgress({ phase: 'start' });
  off.onText('abc');
  off.finish(true);
  assert.deepEqual(silent, []);
});

test('the read-file state rebuilt from the transcript: whole reads, writes, edits; after the last boundary only', () => {
  const user = (toolUseResult, extra = {}) => ({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'x', ...extra }] }, toolUseResult });
  const read = (filePath, content, o = {}) => user({ type: 'text', file: { filePath, content, numLines: 1, startLine: 1, totalLines: 1, ...o } });
  const lines = [
    read('/old.txt', 'before the boundary'),
    { type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted' },
    read('/a.txt', 'alpha beta'),
    read('/part.txt', 'a window', { startLine: 10, numLines: 5, totalLines: 100 }),
    user({ type: 'create', filePath: '/w.txt', content: 'written' }),
    user({ filePath: '/a.txt', oldString: 'beta', newString: 'gamma', originalFile: 'alpha beta', replaceAll: false }),
    user({ filePath: '/b.txt', oldString: 'x', newString: 'y', originalFile: null }),
    read('/err.txt', 'nope'),
  ];
  lines[lines.length - 1].message.content[0].is_error = true;
  const state = readFileStateFromTranscript(lines);
  assert.deepEqual([...state.keys()], ['/w.txt', '/a.txt']);
  assert.deepEqual(state.get('/a.txt'), { content: 'alpha gamma', timestamp: 5 });
  assert.deepEqual(state.get('/w.txt'), { content: 'written', timestamp: 4 });
});

// ---- the npm-installed package -------------------------------------------------------------------

test('npm pack + install into a fresh project: `npx context-compaction` works with no network', async (t) => {
  const dir = tempDir(t, 'cc-cli-npm-');
  const npmEnv = { npm_config_cache: join(dir, 'npm-cache'), npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
  const pack = spawnSync('npm', ['pack', PKG, '--pack-destination', dir, '--json'], { encoding: 'utf8', env: childEnv(npmEnv) });
  assert.equal(pack.status, 0, pack.stderr);
  const [{ filename, files }] = JSON.parse(pack.stdout);
  const packed = files.map((f) => f.path);
  for (const f of ['cli.mjs', 'cli-lib.mjs', 'analysis.mjs', 'node.js', 'package.json', 'context_compaction_bg.wasm']) assert.ok(packed.includes(f), f);
  const app = join(dir, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, version: '1.0.0' }));
  const install = spawnSync('npm', ['install', '--offline', '--ignore-scripts', join(dir, filename)], { cwd: app, encoding: 'utf8', env: childEnv(npmEnv) });
  assert.equal(install.status, 0, install.stderr);
  const npx = ['npx', '--offline', 'context-compaction'];
  const help = await cli(['--help'], { cwd: app, command: npx, env: npmEnv });
  assert.equal(help.code, 0, help.err);
  assert.match(help.out, /^Usage: context-compaction <command>/);
  const version = await cli(['--version'], { cwd: app, command: npx, env: npmEnv });
  assert.equal(version.out.trim(), JSON.parse(readFileSync(join(PKG, 'package.json'), 'utf8')).version);
  const r = await cli(['compact', SMALL, '-o', join(app, 'out.jsonl'), '--json'], { cwd: app, command: npx, env: npmEnv });
  assert.equal(r.code, 0, r.err);
  assert.equal(cc.tokenCountWithEstimation(cc.parseTranscript(readFileSync(join(app, 'out.jsonl'), 'utf8'))), JSON.parse(r.out).tokensAfter);
  const missing = await cli(['analyze', join(app, 'nope.jsonl')], { cwd: app, command: npx, env: npmEnv });
  assert.equal(missing.code, 2);
});
