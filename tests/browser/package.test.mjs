// The built package in a real browser: headless Chromium (Debian's, driven by playwright-core)
// opens tests/browser/index.html from a tiny static server, the page imports /pkg/web.js as a
// native ES module, awaits init(), runs a few calls (one on a real Claude Code transcript) and
// writes the results into the DOM; this test reads them back and checks them, and saves a
// screenshot to tests/artifacts/.
//
// Run: `node --test tests/browser/` after `bash scripts/build.sh` (scripts/test.sh does both).
// Nothing is skipped: without Chromium, playwright-core, the built package or the transcripts
// the test fails and says what is missing.
//
// Environment: CHROMIUM (default /usr/bin/chromium) picks the browser binary;
// TRANSCRIPTS_DIR (default ../shared/transcripts beside the repository) the transcripts.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, resolve, sep } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TRANSCRIPTS = resolve(process.env.TRANSCRIPTS_DIR ?? join(ROOT, '..', 'shared', 'transcripts'));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'tests', 'artifacts');
const TRANSCRIPT = 'cc_small_short.jsonl';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
  '.jsonl': 'application/x-ndjson; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.png': 'image/png',
};

/** Maps a URL path to a file: /transcripts/… to TRANSCRIPTS, the rest to the repository. */
function fileFor(urlPath) {
  const path = decodeURIComponent(urlPath);
  const [base, rest] = path.startsWith('/transcripts/')
    ? [TRANSCRIPTS, path.slice('/transcripts/'.length)]
    : [ROOT, path.slice(1)];
  const file = resolve(base, rest);
  // Never serve anything outside the two roots (`..` in the path).
  if (file !== resolve(base) && !file.startsWith(resolve(base) + sep)) return null;
  return file;
}

/** A static file server on 127.0.0.1 and a random port. */
function startServer() {
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    let file = fileFor(url.pathname);
    try {
      if (file && statSync(file).isDirectory()) file = join(file, 'index.html');
      if (!file || !statSync(file).isFile()) throw new Error('not a file');
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${url.pathname}`);
      return;
    }
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'cache-control': 'no-store',
    });
    res.end(readFileSync(file));
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => ok(server));
  });
}

let server;
let context;
let profile;

before(async () => {
  // Preconditions, each failing with what to do about it.
  assert.ok(
    existsSync(CHROMIUM),
    `Chromium not found at ${CHROMIUM}: run scripts/setup.sh (apt-get install chromium chromium-driver) ` +
      'or set CHROMIUM to a Chromium binary. This test is never skipped.',
  );
  assert.ok(
    existsSync(join(ROOT, 'pkg', 'web.js')),
    'pkg/web.js is missing: build the package first (bash scripts/build.sh)',
  );
  assert.ok(
    existsSync(join(TRANSCRIPTS, TRANSCRIPT)),
    `${join(TRANSCRIPTS, TRANSCRIPT)} is missing: the shared transcripts are expected beside the ` +
      'repository (../shared/transcripts), or set TRANSCRIPTS_DIR',
  );
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (e) {
    assert.fail(`playwright-core is not installed (${e.message}): run scripts/setup.sh (npm ci)`);
  }

  server = await startServer();
  // A fresh profile every run; the flags keep Chromium off the (closed) network.
  profile = mkdtempSync(join(tmpdir(), 'context-compaction-chromium-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1000, height: 1400 },
  });
});

after(async () => {
  await context?.close();
  await new Promise((ok) => (server ? server.close(ok) : ok()));
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('the package works in headless Chromium as a native ES module', async () => {
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });

  const { port } = server.address();
  await page.goto(`http://127.0.0.1:${port}/tests/browser/index.html`);
  try {
    await page.waitForSelector('body[data-status]', { timeout: 30_000 });
  } catch {
    assert.fail(`the page never finished (import or init failed?):\n${problems.join('\n') || '(no error reported)'}`);
  } finally {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'browser-package.png'), fullPage: true });
  }

  const results = JSON.parse(await page.textContent('#output'));
  assert.equal(results.status, 'done', `the page failed: ${results.failure}`);
  assert.deepEqual(problems, [], 'no errors, warnings or failed requests on the page');
  assert.match(results.userAgent, /Chrome\//);

  // The constants come from Rust (SPEC §4, §10).
  assert.deepEqual(results.constants, {
    AUTOCOMPACT_BUFFER_TOKENS: 13_000,
    WARNING_THRESHOLD_BUFFER_TOKENS: 20_000,
    MANUAL_COMPACT_BUFFER_TOKENS: 3_000,
    CLEARED_TOOL_RESULT_PLACEHOLDER: '[Old tool result content cleared]',
  });

  // SPEC §4 worked example for claude-opus-4-6: effective 180,000, auto-compact 167,000,
  // warning/error 147,000, blocking 177,000.
  const w = results.warning;
  const state = (percentLeft, warning, autoCompact, blocking) => ({
    percentLeft,
    isAboveWarningThreshold: warning,
    isAboveErrorThreshold: warning,
    isAboveAutoCompactThreshold: autoCompact,
    isAtBlockingLimit: blocking,
  });
  assert.deepEqual(w[0], state(100, false, false, false));
  assert.deepEqual(w[146999], state(12, false, false, false));
  assert.deepEqual(w[147000], state(12, true, false, false));
  assert.deepEqual(w[167000], state(0, true, true, false));
  assert.deepEqual(w[177000], state(0, true, true, true));

  // Usage 100 + 20 + 30 + 50, then 400 characters at 4 per token.
  assert.equal(results.apiTokens, 300);

  // The real transcript: every line parsed, unknown types kept.
  const raw = readFileSync(join(TRANSCRIPTS, TRANSCRIPT), 'utf8');
  const t = results.transcript;
  assert.equal(t.chars, raw.length);
  assert.equal(t.lines, raw.split('\n').filter((l) => l.trim() !== '').length);
  assert.ok(t.types.progress > 0 && t.types['file-history-snapshot'] > 0, 'non-message lines are kept');
  // The count starts from the last reported usage (input + cache creation + cache read +
  // output of the latest assistant line that has one), so it is at least that.
  const lastUsage = raw
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((l) => l.type === 'assistant' && l.message?.usage && !l.isSidechain)
    .at(-1).message.usage;
  const usageTotal =
    lastUsage.input_tokens +
    (lastUsage.cache_creation_input_tokens ?? 0) +
    (lastUsage.cache_read_input_tokens ?? 0) +
    lastUsage.output_tokens;
  assert.ok(t.tokens >= usageTotal, `tokens ${t.tokens} ≥ last usage ${usageTotal}`);
  assert.ok(t.tokens < usageTotal + 5_000, `tokens ${t.tokens} close to last usage ${usageTotal}`);
  // Its two tool results are small errors: nothing to clear, every line the same object.
  assert.deepEqual(t.microCompact, { tokensFreed: 0, clearedToolUseIds: [], allSameObjects: true });

  // The same wasm gives the same answers in Node (pkg/node.js).
  const node = await import(new URL('../../pkg/node.js', import.meta.url));
  const lines = node.parseTranscript(raw);
  assert.equal(t.tokens, node.tokenCountWithEstimation(lines));
  assert.deepEqual(w[147000], node.calculateTokenWarningState(147000, 'claude-opus-4-6'));

  // microCompact: 7 results, 5 kept, the user messages answering the 2 oldest are new objects.
  const mc = results.microCompact;
  assert.deepEqual(mc.clearedToolUseIds, ['toolu_0', 'toolu_1']);
  assert.deepEqual(mc.changedIndices, [2, 4]);
  assert.equal(mc.length, 16);
  assert.equal(mc.clearedContent, '[Old tool result content cleared]');
  assert.ok(mc.tokensFreed > 0);
  assert.equal(mc.inputUnchanged, true);

  // Errors are Error objects with a stable code.
  assert.equal(results.error.thrown, true);
  assert.equal(results.error.isError, true);
  assert.equal(results.error.code, 'INVALID_ARGUMENT');
  assert.equal(results.error.name, 'ContextCompactionError');
});
