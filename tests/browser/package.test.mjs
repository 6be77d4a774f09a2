// The built package in a real browser: headless Chromium (Debian's, driven by playwright-core)
// opens pages from a tiny static server; each page imports /pkg/web.js as a native ES module,
// awaits init(), runs calls and writes the results into the DOM; the tests read them back, check
// them, and save a screenshot to tests/artifacts/.
//   - index.html: the synchronous API (thresholds, counting, microCompact, errors) on a real
//     Claude Code transcript;
//   - pipeline.html: the compaction pipeline with JS callbacks that answer asynchronously
//     (setTimeout): compactConversation, a Compactor with push + maybeAutoCompact, aborts.
//
// Run: `node --test tests/browser/` after `bash scripts/build.sh` (scripts/test.sh does both).
// Nothing is skipped: without Chromium, playwright-core, the built package or the transcripts
// the test fails and says what is missing.
//
// Environment: CHROMIUM (default /usr/bin/chromium) picks the browser binary;
// TRANSCRIPTS_DIR (default ../shared/transcripts beside the repository) the transcripts.

import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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

/**
 * Opens `page` of tests/browser/, waits until it sets `data-status`, saves a screenshot as
 * tests/artifacts/`screenshot`, and returns the JSON it wrote into #output and everything that
 * went wrong on the page (errors, warnings, failed requests).
 */
async function runPage(name, screenshot) {
  const page = await context.newPage();
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
  await page.goto(`http://127.0.0.1:${port}/tests/browser/${name}`);
  try {
    await page.waitForSelector('body[data-status]', { timeout: 30_000 });
  } catch {
    assert.fail(`the page never finished (import or init failed?):\n${problems.join('\n') || '(no error reported)'}`);
  } finally {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, screenshot), fullPage: true });
  }
  const results = JSON.parse(await page.textContent('#output'));
  await page.close();
  return { results, problems };
}

test('the package works in headless Chromium as a native ES module', async () => {
  const { results, problems } = await runPage('index.html', 'browser-package.png');
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
    contextWindow: 200_000,
    contextWindowSource: 'model',
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

test('the compaction pipeline runs in headless Chromium with async JS callbacks', async () => {
  const { results, problems } = await runPage('pipeline.html', 'browser-pipeline.png');
  assert.equal(results.status, 'done', `the page failed: ${results.failure}`);
  assert.deepEqual(problems, [], 'no errors, warnings or failed requests on the page');
  assert.match(results.userAgent, /Chrome\//);

  const MODEL = 'claude-opus-4-6';
  const MARKER = 'BROWSER-SUMMARY-MARKER: the user asked about the spotter project.';
  const HOOK_OUTPUT = 'session-start hook output from the browser';
  const USAGE = { input_tokens: 900, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 40 };

  // The same transcript and count as in Node.
  const raw = readFileSync(join(TRANSCRIPTS, TRANSCRIPT), 'utf8');
  const node = await import(new URL('../../pkg/node.js', import.meta.url));
  const lines = node.parseTranscript(raw);
  const tokens = node.tokenCountWithEstimation(lines);
  assert.equal(results.input.lines, lines.length);
  assert.equal(results.input.tokens, tokens);
  assert.equal(results.input.lastUuid, lines.findLast((l) => typeof l.uuid === 'string').uuid);

  // 1. compactConversation: a Promise at once; Rust awaited the async PreCompact hook, then the
  // summarizer's timer; onText was called from inside the summarizer; then the SessionStart and
  // PostCompact hooks; the Promise resolved last.
  const cp = results.compact;
  assert.equal(cp.isPromise, true);
  assert.deepEqual(cp.log, [
    'call', 'returned', 'preCompact', 'summarize:called', 'summarize:timer', 'onText', 'onText',
    'summarize:resolved', 'sessionStart', 'postCompact', 'resolved',
  ]);
  assert.ok(cp.ms >= 40, `took ${cp.ms} ms, at least the summarizer's 40 ms timer`);
  assert.equal(cp.texts.join(''), `<analysis>\nscratch analysis that must be discarded\n</analysis>\n<summary>\n${MARKER}\n</summary>`);
  assert.deepEqual(cp.phases, [
    'start', 'preCompactHook', 'summarizing', 'summarized', 'restoring', 'sessionStartHook', 'postCompactHook', 'done',
  ]);
  // The summary request: built in Rust, with the hook's instructions, the caller's signal and onText.
  assert.equal(cp.summarizer.length, 1);
  const req = cp.summarizer[0];
  assert.equal(req.model, MODEL);
  assert.equal(req.hasSystem, true);
  assert.ok(req.messages >= 1 && req.lastRole === 'user', JSON.stringify(req));
  assert.ok(req.maxTokens > 0);
  assert.equal(req.instructionsInRequest, true, 'PreCompact instructions are in the summary request');
  assert.equal(req.onTextIsFunction, true);
  assert.equal(req.signalIsAbortSignal, true);
  // Hook inputs.
  assert.equal(cp.hookInputs.preCompact.trigger, 'manual');
  assert.equal(cp.hookInputs.preCompact.preTokens, tokens);
  assert.equal(cp.hookInputs.sessionStart.source, 'compact');
  assert.equal(cp.hookInputs.postCompact.trigger, 'manual');
  assert.equal(cp.hookInputs.postCompact.compactSummary, MARKER);
  // The result.
  const r = cp.result;
  for (const k of ['boundaryMarker', 'summaryMessages', 'attachments', 'hookResults', 'messagesToKeep', 'userDisplayMessage',
    'preCompactTokenCount', 'postCompactTokenCount', 'truePostCompactTokenCount', 'compactionUsage']) {
    assert.ok(r.keys.includes(k), `CompactionResult has ${k}`);
  }
  assert.equal(r.trigger, 'manual');
  assert.equal(r.summary, MARKER, 'the <summary> part, without the <analysis>');
  assert.equal(r.preCompactTokenCount, tokens);
  assert.equal(r.postCompactTokenCount, USAGE.input_tokens + USAGE.output_tokens, 'from the summarizer\'s usage');
  // The count after the compaction includes what the session's first request taught every
  // request carries (its system prompt and tools, about 25.3K of this short session's 25.6K):
  // not the summary alone.
  assert.ok(r.truePostCompactTokenCount > 20_000 && r.truePostCompactTokenCount < tokens + 1_000, String(r.truePostCompactTokenCount));
  assert.deepEqual(r.compactionUsage, USAGE);
  assert.equal(r.messagesToKeep, 0);
  assert.equal(r.attachments, 0);
  assert.deepEqual(r.hookResults, [HOOK_OUTPUT]);
  assert.deepEqual(r.hookErrors, []);
  assert.equal(r.ptlRetries, 0);
  assert.equal(r.transientRetries, 0);
  assert.equal(r.fromSessionMemory, false);
  assert.equal(r.boundary.type, 'system');
  assert.equal(r.boundary.subtype, 'compact_boundary');
  assert.equal(r.boundary.compactMetadata.trigger, 'manual');
  assert.equal(r.boundary.compactMetadata.preTokens, tokens);
  assert.equal(r.boundary.logicalParentUuid, results.input.lastUuid);
  // buildPostCompactMessages: boundary, summary, kept, attachments, hook results — in that order.
  const post = cp.post;
  assert.deepEqual(post.kinds, ['boundary', 'summary', 'user:meta']);
  assert.equal(post.inResultOrder, true);
  assert.ok(post.summaryText.includes(`<summary>\n${MARKER}\n</summary>`), post.summaryText);
  assert.equal(post.summaryParent, true, 'the summary follows the boundary');
  assert.equal(post.scratchAnywhere, false, 'the <analysis> part is discarded');
  assert.equal(post.instructionsAnywhere, false, 'custom instructions only in the summary request');
  assert.equal(post.tokens, r.truePostCompactTokenCount);
  assert.equal(cp.inputUnchanged, true);

  // 2. Compactor. Under autoCompactPctOverride 1 the overhead alone is past the threshold:
  // compacted once (the real usage is past it), then not again, the summarizer called once.
  assert.deepEqual(results.futile, { first: true, again: { wasCompacted: false, skipped: 'overheadAboveThreshold' }, summarizerCalls: 1 });
  // Under 15 %, due once a long message follows; the messages pushed meanwhile are kept, the
  // same objects and in order, after the summary.
  const c = results.compactor;
  const withLong = [...lines, c.longLine];
  const tokensWithLong = node.tokenCountWithEstimation(withLong);
  assert.ok(tokensWithLong > node.getAutoCompactThreshold(MODEL, { autoCompactPctOverride: 15 }), String(tokensWithLong));
  assert.equal(c.before.length, lines.length + 1);
  assert.equal(c.before.tokenCount, tokensWithLong);
  assert.equal(c.before.sameObjects, true);
  assert.equal(c.before.warningState.isAboveAutoCompactThreshold, true);
  assert.equal(c.compactingWhileRunning, true);
  assert.equal(c.compactingAfterPushes, true, 'both pushes happened while the compaction ran');
  assert.equal(c.lengthWhileRunning, lines.length + 3);
  assert.deepEqual(c.log, ['summarize:called', 'summarize:timer', 'summarize:resolved']);
  assert.equal(c.summarizer[0].onTextIsFunction, false, 'no onText in this context');
  assert.deepEqual(c.out, {
    wasCompacted: true,
    consecutiveFailures: 0,
    error: null,
    skipped: null,
    trigger: 'auto',
    summary: MARKER,
    preCompactTokenCount: tokensWithLong,
    boundaryTrigger: 'auto',
  });
  assert.equal(c.after.compacting, false);
  assert.deepEqual(c.after.kinds, ['boundary', 'summary', 'user', 'user']);
  assert.equal(c.after.length, 4);
  assert.equal(c.after.pushedMeanwhileKept, true, 'the messages pushed meanwhile, the same objects, in order');
  assert.equal(c.after.tokenCount, c.after.tokenCountStateless);
  // The overhead and the summary: below the threshold, so the next check does not compact.
  assert.ok(c.after.tokenCount > 20_000 && c.after.tokenCount < node.getAutoCompactThreshold(MODEL, { autoCompactPctOverride: 15 }), String(c.after.tokenCount));
  assert.deepEqual(c.after.tracking, { consecutiveFailures: 0, thrashing: false });
  assert.equal(c.after.transcriptLines, 4);
  assert.equal(c.after.transcriptHasMarker, true);
  assert.deepEqual(c.second, { wasCompacted: false, skipped: 'belowThreshold' });
  assert.equal(c.inputUnchanged, true);

  // 3. Aborts reject at once with code ABORTED even though the summarizer ignores the signal;
  // nothing changes.
  const a = results.abort;
  assert.equal(a.during.thrown, true);
  assert.equal(a.during.isError, true);
  assert.equal(a.during.code, 'ABORTED');
  assert.equal(a.during.name, 'ContextCompactionError');
  assert.ok(a.during.ms >= 40 && a.during.ms < 2000, `aborted after ${a.during.ms} ms (abort at 50 ms, summarizer at 5 s)`);
  assert.equal(a.beforeStart.thrown, true);
  assert.equal(a.beforeStart.code, 'ABORTED');
  assert.equal(a.callsBeforeCompactor, 1, 'a signal aborted before the call never reaches the summarizer');
  assert.equal(a.compactor.thrown, true);
  assert.equal(a.compactor.code, 'ABORTED');
  assert.equal(a.compactor.compacting, false);
  assert.equal(a.compactor.length, lines.length);
  assert.equal(a.compactor.sameObjects, true);
  assert.equal(a.summarizerCalls, 2);
  assert.ok(a.calls.every((x) => x.signalIsAbortSignal));
  assert.equal(a.inputUnchanged, true);
});

test('a WebAssembly trap in Chromium: INSTANCE_RESET for the call and the pending compaction, then a fresh instance', async () => {
  // The built .wasm, rewritten so that getMaxOutputTokensForModel(model, null) traps.
  const { trapWhenNull } = await import('../node/helpers/trap.mjs');
  const dir = join(ARTIFACTS, 'trap');
  mkdirSync(dir, { recursive: true });
  const wasm = readFileSync(join(ROOT, 'pkg', 'context_compaction_bg.wasm'));
  writeFileSync(join(dir, 'context_compaction_bg.wasm'), trapWhenNull(wasm, (exports) => exports.filter((e) => e.name === 'getMaxOutputTokensForModel')));
  const { results, problems } = await runPage('reset.html', 'browser-reset.png');
  assert.equal(results.status, 'done', `the page failed: ${results.failure}`);
  assert.deepEqual(problems, [], 'no errors, warnings or failed requests on the page');
  const reset = (x, what) => {
    assert.equal(x.code, 'INSTANCE_RESET', `${what}: ${JSON.stringify(x)}`);
    assert.equal(x.name, 'ContextCompactionError', what);
  };
  reset(results.trap, 'the trapping call');
  assert.equal(results.trap.cause, 'RuntimeError');
  reset(results.pending, 'the compaction pending at the trap');
  reset(results.stale, 'a Compactor made before the trap');
  assert.equal(results.maxAfter, results.max, 'the fresh instance answers');
  assert.match(results.summaryAfter, /The user asked for a file/);
  assert.equal(results.lengthAfter, 4);
});

/**
 * Checks what a page (or worker) got from the second module's functions against the Node
 * entry's answers: the offline summary of the short fixture session, the preview of `lines`,
 * the simulated policy.
 */
async function assertSecondModuleAnswers(results, node, lines) {
  const short = node.parseTranscript(readFileSync(new URL('../fixtures/short_session.jsonl', import.meta.url), 'utf8'));
  const offline = await node.compactConversation(short, { model: 'claude-opus-4-6', summarize: node.offlineSummarizer() });
  assert.equal(results.offlineSummaryChars, offline.summary.length);
  const p = await node.previewCompaction(lines, { model: 'claude-opus-4-6' });
  assert.deepEqual(results.preview, { tokensBefore: p.tokensBefore, threshold: p.threshold });
  assert.deepEqual(results.simulatedPolicies, ['claude-code']);
}

test('the second module in Chromium: never fetched by a page that counts and compacts with an API summarizer, fetched on first use', async () => {
  const { results, problems } = await runPage('extras.html', 'browser-extras.png');
  assert.equal(results.status, 'done', `the page failed: ${results.failure}`);
  assert.deepEqual(problems, [], 'no errors, warnings or failed requests on the page');
  const node = await import(new URL('../../pkg/node.js', import.meta.url));
  const lines = node.parseTranscript(readFileSync(join(TRANSCRIPTS, TRANSCRIPT), 'utf8'));
  assert.equal(results.tokens, node.tokenCountWithEstimation(lines));
  assert.equal(results.apiSummary, 'API-STYLE SUMMARY');
  assert.equal(results.compactorSummary, 'API-STYLE SUMMARY');

  const extra = (paths) => paths.filter((p) => /context_compaction_extra/.test(p));
  assert.ok(results.fetchedBefore.includes('/pkg/context_compaction_bg.wasm'), results.fetchedBefore.join('\n'));
  assert.deepEqual(extra(results.fetchedBefore), [], 'the second module is not fetched before its first use');
  assert.deepEqual(extra(results.fetchedAfter).sort(), ['/pkg/context_compaction_extra.js', '/pkg/context_compaction_extra_bg.wasm'], 'fetched once, on first use');
  // The fetch summarizers' request halves: none before a summarizer's first call; the
  // Anthropic one (and the HTTP helpers it imports) at its first call, the others never.
  const halves = (paths) => paths.filter((p) => /-send\.js$|\/http\.js$/.test(p)).sort();
  assert.deepEqual(halves(results.fetchedBefore), [], 'no request half before a summarizer is called');
  assert.deepEqual(halves(results.fetchedAfter), ['/pkg/anthropic-send.js', '/pkg/http.js'], 'the called summarizer\'s request half, on its first call');
  assert.equal(results.anthropicSummary, 'VIA ANTHROPIC SUMMARIZER');

  // The same answers as the Node entry.
  await assertSecondModuleAnswers(results, node, lines);
  // A bad option of a summarizer made before the module loaded is reported by its call.
  assert.equal(results.badOption.code, 'INVALID_ARGUMENT', JSON.stringify(results.badOption));
  assert.match(results.badOption.message, /maxTokens/);
  assert.deepEqual(results.badOptionLoaded, { code: 'INVALID_ARGUMENT' });
});

test('a module service worker (a browser extension\'s background): the service-worker entry loads everything without import()', async () => {
  const { results, problems } = await runPage('service-worker.html', 'browser-service-worker.png');
  assert.equal(results.status ?? 'done', 'done');
  assert.equal(results.failure, undefined, `the worker failed: ${results.failure}`);
  assert.deepEqual(problems, [], 'no errors, warnings or failed requests on the page');
  // The premise: the worker refuses a dynamic import (why web.js cannot serve there).
  assert.equal(results.dynamicImport, 'TypeError');
  const node = await import(new URL('../../pkg/node.js', import.meta.url));
  const lines = node.parseTranscript(readFileSync(join(TRANSCRIPTS, TRANSCRIPT), 'utf8'));
  assert.equal(results.tokens, node.tokenCountWithEstimation(lines));
  assert.equal(results.apiSummary, 'API-STYLE SUMMARY');
  assert.equal(results.compactorSummary, 'API-STYLE SUMMARY');
  assert.equal(results.anthropicSummary, 'VIA ANTHROPIC');
  assert.equal(results.openaiSummary, 'VIA OPENAI');
  assert.equal(results.langchainSummary, 'VIA LANGCHAIN');
  await assertSecondModuleAnswers(results, node, lines);
});

test('the count entry in Chromium: a first render fetches the counting module only, loadCompaction() the first module on demand', async () => {
  const { results, problems } = await runPage('count.html', 'browser-count.png');
  assert.equal(results.status, 'done', `the page failed: ${results.failure}`);
  assert.deepEqual(problems, [], 'no errors, warnings or failed requests on the page');
  const node = await import(new URL('../../pkg/node.js', import.meta.url));
  const lines = node.parseTranscript(readFileSync(join(TRANSCRIPTS, TRANSCRIPT), 'utf8'));
  assert.equal(results.tokens, node.tokenCountWithEstimation(lines));
  assert.equal(results.fullTokens, results.tokens);
  assert.equal(results.should, node.shouldAutoCompact(lines, 'claude-opus-4-6'));
  assert.equal(results.threshold, node.getAutoCompactThreshold('claude-opus-4-6'));
  assert.deepEqual(results.warning, node.calculateTokenWarningState(results.tokens, 'claude-opus-4-6'));
  assert.equal(results.apiSummary, 'API-STYLE SUMMARY');
  assert.ok(results.again);
  assert.equal(results.warned, true);
  assert.equal(results.prefetched, true, 'past the warning threshold the first module loads ahead, before loadCompaction()');

  const wasm = (paths) => paths.filter((p) => p.endsWith('.wasm')).sort();
  assert.deepEqual(wasm(results.fetchedBefore), ['/pkg/context_compaction_count_bg.wasm'], 'the first render fetches the counting module only');
  assert.ok(!results.fetchedBefore.includes('/pkg/web.js'), results.fetchedBefore.join('\n'));
  assert.ok(!results.fetchedBefore.includes('/pkg/context_compaction.js'), results.fetchedBefore.join('\n'));
  assert.deepEqual(wasm(results.fetchedAfter), ['/pkg/context_compaction_bg.wasm'], 'the first module, on demand');
  assert.ok(results.fetchedAfter.includes('/pkg/web.js'), results.fetchedAfter.join('\n'));
  assert.ok(!results.fetchedAfter.some((p) => /context_compaction_extra/.test(p)), 'the second module stays unfetched');
});
