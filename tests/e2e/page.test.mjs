// The web page (www/) end to end in headless Chromium (Debian's, driven by playwright-core):
// www/serve.mjs is started on a free port and the fake Messages API (tests/fake-api/server.mjs)
// beside it; the page opens the real Claude Code transcript cc_long_autocompact_4d5611e5.jsonl
// through its file input, analyses it, previews and compacts it offline, downloads the
// compacted .jsonl (checked here with the Node entry: it parses and resumes after the new
// boundary), then chats with the fake API (streamed answer, meter moving), compacts with
// `/compact instructions` through the API, compacts automatically past a lowered threshold,
// and forgets the key. Screenshots go to tests/artifacts/page-*.png. No console error, page
// error, failed request or HTTP error is tolerated.
//
// Run: `node --test tests/e2e/` after `bash scripts/build.sh`. Nothing is skipped: without
// Chromium, playwright-core, the built package or the transcripts the test fails and says why.
// Environment: CHROMIUM (default /usr/bin/chromium); TRANSCRIPTS_DIR (default
// ../shared/transcripts beside the repository).

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { pieces, reply, startFakeApi } from '../fake-api/server.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TRANSCRIPTS = resolve(process.env.TRANSCRIPTS_DIR ?? join(ROOT, '..', 'shared', 'transcripts'));
const TRANSCRIPT = join(TRANSCRIPTS, 'cc_long_autocompact_4d5611e5.jsonl');
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'tests', 'artifacts');
const MODEL = 'claude-opus-4-6';

const CHAT_ANSWER =
  'FAKE-CHAT-ANSWER: the transcript parser is in lib/spotter/transcripts/parser.ex.\n\n' +
  'It reads the session file line by line, keeps unknown line types as they are, and groups the ' +
  'assistant lines of one response by message.id. The tests are green:\n\n' +
  '```sh\nmix test test/spotter/transcripts\n```\n\nAnything else?';
const SUMMARY_MARKER = 'FAKE-API-SUMMARY: the user builds a transcript viewer; keep the parser notes.';
const INSTRUCTIONS = 'keep the parser notes';
const SLOW_PROMPT = 'Explain it slowly, please.';
/** The fake API's summaries are about 1,300 tokens long while set (the pre-emptive test). */
let longSummaries = false;

/** A number as the page prints it (en-US grouping). */
const fmt = (n) => Math.round(n).toLocaleString('en-US');

let cc; // the Node entry of the package
let serverProcess;
let pageUrl;
let api;
let context;
let profile;
let page;
const problems = [];
/** Streams the client cancelled after their 200 answer began (see the requestfailed handler). */
const cancelledStreams = [];
let raw;
let lines;

/** Starts `node www/serve.mjs 0` and resolves with the URL it prints. */
function startPageServer() {
  const child = spawn(process.execPath, [join(ROOT, 'www', 'serve.mjs'), '0'], {
    cwd: ROOT,
    env: { ...process.env, TRANSCRIPTS_DIR: TRANSCRIPTS },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((ok, fail) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`www/serve.mjs printed no URL in 10 s:\n${out}${err}`)), 10_000);
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok({ child, url: m[1] });
      }
    });
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`www/serve.mjs exited with ${code}:\n${out}${err}`));
    });
  });
}

/** The fake API: summary requests (they carry a `system` prompt) and chat turns, streamed. */
function fakeHandler(request) {
  const body = request.body ?? {};
  // A context size in the spirit of the real API: the request's characters / 4.
  const inputTokens = Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
  if (body.system) {
    const more = longSummaries ? `\n${'The parser keeps unknown line types and groups assistant lines by message id. '.repeat(64)}` : '';
    const text = `<analysis>\nscratch notes that must not survive\n</analysis>\n<summary>\n${SUMMARY_MARKER}${more}\n</summary>`;
    return reply.stream(text, { inputTokens, pieces: pieces(text, 12), delayMs: 10 });
  }
  if (JSON.stringify(body.messages?.at(-1) ?? '').includes(SLOW_PROMPT)) {
    // An answer that takes about 20 s: the page must stop it.
    return reply.stream(CHAT_ANSWER, { inputTokens, pieces: pieces(CHAT_ANSWER, 50), delayMs: 200 });
  }
  return reply.stream(CHAT_ANSWER, { inputTokens, pieces: pieces(CHAT_ANSWER, 10), delayMs: 15 });
}

const meterTokens = async () => Number(await page.getAttribute('#meter', 'data-tokens'));

async function screenshot(name) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, name) });
}

before(async () => {
  assert.ok(
    existsSync(CHROMIUM),
    `Chromium not found at ${CHROMIUM}: run scripts/setup.sh (apt-get install chromium) or set CHROMIUM. This test is never skipped.`,
  );
  assert.ok(existsSync(join(ROOT, 'pkg', 'web.js')), 'pkg/web.js is missing: build the package first (bash scripts/build.sh)');
  assert.ok(existsSync(TRANSCRIPT), `${TRANSCRIPT} is missing: the shared transcripts are expected in ../shared/transcripts, or set TRANSCRIPTS_DIR`);
  let chromium;
  try {
    ({ chromium } = await import('playwright-core'));
  } catch (e) {
    assert.fail(`playwright-core is not installed (${e.message}): run scripts/setup.sh (npm ci)`);
  }
  cc = await import(new URL('../../pkg/node.js', import.meta.url));
  raw = readFileSync(TRANSCRIPT, 'utf8');
  lines = cc.parseTranscript(raw);

  const started = await startPageServer();
  serverProcess = started.child;
  pageUrl = started.url;
  api = await startFakeApi(fakeHandler);

  profile = mkdtempSync(join(tmpdir(), 'context-compaction-e2e-'));
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
    viewport: { width: 1440, height: 1000 },
    acceptDownloads: true,
  });
  page = await context.newPage();
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console.${m.type()}: ${m.text()}`);
  });
  page.on('requestfailed', async (r) => {
    const failure = r.failure()?.errorText;
    // anthropicSummarizer stops reading a stream at message_stop and cancels the rest of the
    // body, and Stop cancels a stream on purpose: Chromium reports those requests as aborted
    // although their 200 answer arrived. Counted apart, checked at the end.
    if (api && r.url() === `${api.url}/v1/messages` && failure === 'net::ERR_ABORTED') {
      const response = await r.response().catch(() => null);
      if (response?.status() === 200) {
        cancelledStreams.push(r.url());
        return;
      }
    }
    problems.push(`request failed: ${r.url()} ${failure}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`);
  });
});

after(async () => {
  await context?.close();
  await api?.close();
  if (serverProcess && serverProcess.exitCode === null) {
    const exited = new Promise((ok) => serverProcess.once('exit', ok));
    serverProcess.kill('SIGTERM');
    await exited;
  }
  if (profile) rmSync(profile, { recursive: true, force: true });
});

test('the page loads in offline mode with an empty conversation', async () => {
  const response = await page.goto(pageUrl);
  // The strict CSP, as a header and as the page's meta tag (the header adds what a meta tag cannot say).
  const meta = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  assert.match(meta, /script-src 'self' 'wasm-unsafe-eval' 'sha256-[^']+'; /);
  assert.doesNotMatch(meta, /unsafe-inline/);
  assert.equal(response.headers()['content-security-policy'], `${meta}; frame-ancestors 'none'`);
  await page.waitForSelector('body[data-state="ready"]', { timeout: 30_000 }).catch(() => {
    assert.fail(`the page never became ready:\n${problems.join('\n') || '(no error reported)'}`);
  });
  assert.equal(await page.getAttribute('body', 'data-mode'), 'offline');
  assert.match(await page.textContent('#mode'), /Offline/);
  assert.equal(await meterTokens(), 0);
  assert.equal(await page.getAttribute('#meter', 'role'), 'meter');
  // Labels for every form control.
  for (const id of ['composer-input', 'model', 'api-key', 'remember-key', 'base-url', 'allow-local-http', 'auto-pct']) {
    assert.equal(await page.locator(`label[for="${id}"]`).count(), 1, `#${id} has a label`);
  }
  // The demo list comes from the server.
  assert.equal(await page.isVisible('#demo-row'), true);
  // Where the key is kept by default is stated on the page; both switches start off.
  assert.match(await page.textContent('#api-key-note'), /By default the key is kept for this tab only \(sessionStorage\)/);
  assert.equal(await page.isChecked('#remember-key'), false);
  assert.equal(await page.isChecked('#allow-local-http'), false);
});

test('opening the real transcript through the file input shows its analysis', async () => {
  await page.setInputFiles('#file-input', TRANSCRIPT);
  await page.waitForSelector('#analysis:not([hidden]) [data-fact="lines"]', { timeout: 30_000 });
  const factText = (key) => page.textContent(`#analysis [data-fact="${key}"]`);
  assert.equal(await factText('lines'), fmt(lines.length));
  assert.equal(await factText('calls'), '139');
  assert.equal(await factText('model'), MODEL);
  const tokens = cc.tokenCountWithEstimation(lines);
  const ws = cc.calculateTokenWarningState(tokens, MODEL);
  assert.match(await factText('tokens'), new RegExp(`^${fmt(tokens)} tokens`));
  assert.match(await factText('warning-state'), new RegExp(`^${ws.percentLeft}% left`));
  assert.match(await factText('boundaries'), /line 754 \(auto, 170,251 tokens before\)/);
  assert.match(await factText('accuracy'), /median \|error\| \d+\.\d\d%/);
  assert.match(await factText('micro'), /would clear \d+ tool results/);
  assert.equal(await page.locator('#analysis svg.chart').count(), 1);
  assert.equal(await page.locator('#analysis table.calls tbody tr').count(), 139);
  // The simulated cost of the session under each policy, as simulateSession computes it.
  const sim = await cc.simulateSession(lines);
  await page.waitForSelector('#analysis [data-simulation="ok"] table.simulation-table');
  assert.equal(await page.locator('#analysis table.simulation-table tbody tr').count(), sim.policies.length);
  assert.ok(sim.policies.length >= 6);
  for (const p of sim.policies) {
    const cells = page.locator(`#analysis table.simulation-table tr[data-policy="${p.name}"] td`);
    assert.match(await cells.nth(0).textContent(), new RegExp(`^${p.name}`));
    assert.equal(await cells.nth(1).textContent(), `$${p.cost.toFixed(2)}`);
  }
  assert.equal(await page.locator('#analysis table.simulation-table tr.recommended').count(), 1);
  // The meter follows the conversation: the same count, the model's window, the marker.
  assert.equal(await meterTokens(), tokens);
  assert.equal(await page.getAttribute('#meter', 'aria-valuemax'), String(cc.getEffectiveContextWindowSize(MODEL)));
  const markerLeft = await page.$eval('#meter-mark-auto', (el) => el.style.left);
  const expected = (cc.getAutoCompactThreshold(MODEL) / cc.getEffectiveContextWindowSize(MODEL)) * 100;
  assert.equal(markerLeft, `${expected.toFixed(2)}%`);
  assert.match(await page.textContent('#meter-text'), new RegExp(`${fmt(tokens)} tokens.*${ws.percentLeft}% left`));
  // The conversation shows the session, with its earlier compaction boundary and summary.
  assert.equal(await page.locator('#conversation .boundary').count(), 1);
  assert.equal(await page.locator('#conversation .summary-card').count(), 1);
  assert.ok((await page.locator('#conversation .msg-user').count()) >= 2);
  assert.ok((await page.locator('#conversation .tool-call').count()) > 100);
  await page.locator('#analysis').scrollIntoViewIfNeeded();
  await screenshot('page-analysis.png');
});

test('the preview tells what compacting would do, without a model call', async () => {
  const requestsBefore = api.requests.length;
  await page.click('#preview-button');
  await page.waitForSelector('#preview:not([hidden])', { timeout: 30_000 });
  const text = await page.textContent('#preview');
  assert.match(text, /Preview/);
  assert.ok(text.includes(fmt(cc.tokenCountWithEstimation(lines))), `the preview names the tokens before: ${text.slice(0, 400)}`);
  assert.equal(api.requests.length, requestsBefore, 'no request left the page');
});

let afterCompaction;

test('compacting offline shows the boundary, the summary and the loss report; the meter drops', async () => {
  const before = await meterTokens();
  await page.click('#compact-offline');
  await page.waitForSelector('#compaction-panel:not([hidden]) #loss-report h3', { timeout: 60_000 });
  // The new boundary and summary at the end of the conversation, styled apart.
  assert.equal(await page.locator('#conversation .boundary').count(), 2);
  assert.equal(await page.locator('#conversation .summary-card').count(), 2);
  const lastBoundary = page.locator('#conversation .boundary').last();
  assert.equal(await lastBoundary.getAttribute('data-trigger'), 'manual');
  assert.match(await lastBoundary.textContent(), new RegExp(`${fmt(before)} tokens before`));
  const summary = page.locator('#conversation .summary-card').last();
  assert.match(await summary.textContent(), /offline summarizer/);
  assert.match(await summary.textContent(), /Primary request and intent/);
  assert.match(await summary.locator('.loss-note').textContent(), /Nothing lost|does not mention/);
  // The loss report beside it: the three groups with their counts.
  for (const group of ['files', 'userMessages', 'errors']) {
    assert.equal(await page.locator(`#loss-report [data-group="${group}"]`).count(), 1, `loss group ${group}`);
  }
  assert.match(await page.getAttribute('#loss-report', 'data-count'), /^\d+$/);
  assert.match(await page.textContent('[data-fact="compaction-tokens"]'), new RegExp(`^${fmt(before)} → `));
  assert.match(await page.textContent('[data-fact="steps"]'), /Starting → .*Writing the summary → .*Done/);
  // The meter dropped to the compacted context.
  afterCompaction = await meterTokens();
  // The compacted context as the next request will send it: the summary and restored files,
  // plus the system prompt and tools the session's usage taught (Claude Code's own next request
  // after its compaction of this session was 36,081 tokens).
  assert.ok(afterCompaction > 0 && afterCompaction < before / 2, `meter ${before} → ${afterCompaction}`);
  assert.equal(String(afterCompaction), await page.getAttribute('#compaction-panel', 'data-after'));
  assert.equal(await page.getAttribute('#meter', 'data-level'), 'ok');
  await page.locator('#conversation .summary-card').last().scrollIntoViewIfNeeded();
  await page.locator('#compaction-panel').scrollIntoViewIfNeeded();
  await screenshot('page-compacted.png');
});

test('the downloaded .jsonl parses and resumes after the new boundary', async () => {
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#download-button')]);
  assert.equal(download.suggestedFilename(), 'cc_long_autocompact_4d5611e5.compacted.jsonl');
  const dir = mkdtempSync(join(tmpdir(), 'context-compaction-download-'));
  try {
    const file = join(dir, download.suggestedFilename());
    await download.saveAs(file);
    const text = readFileSync(file, 'utf8');
    // The original lines byte for byte, then what the compaction wrote.
    assert.ok(text.startsWith(raw), 'the original transcript is kept byte for byte');
    const out = cc.parseTranscript(text);
    assert.equal(out.length, lines.length + 2, 'boundary + summary appended');
    const boundary = out[lines.length];
    const summary = out[lines.length + 1];
    assert.equal(boundary.type, 'system');
    assert.equal(boundary.subtype, 'compact_boundary');
    assert.equal(boundary.compactMetadata.trigger, 'manual');
    assert.equal(boundary.compactMetadata.preTokens, cc.tokenCountWithEstimation(lines));
    assert.equal(boundary.parentUuid, null);
    assert.equal(boundary.logicalParentUuid, lines.findLast((l) => typeof l.uuid === 'string').uuid);
    assert.equal(boundary.sessionId, lines.at(-1).sessionId);
    assert.equal(summary.isCompactSummary, true);
    assert.equal(summary.parentUuid, boundary.uuid);
    // Resuming reads from the last boundary: the summary is what the model sees first.
    const view = cc.toApiMessages(out);
    assert.equal(view[0].role, 'user');
    assert.match(JSON.stringify(view[0].content), /Primary request and intent/);
    assert.equal(cc.validateForApi(out).valid, true);
    assert.equal(cc.tokenCountWithEstimation(out), afterCompaction, 'the same count as the page');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the API key goes only to https:// origins: an http:// base URL is refused unless it is a local test server and the switch allows it', async () => {
  const requestsBefore = api.requests.length;
  await page.fill('#api-key', 'sk-ant-test-dummy-key');
  for (const [base, allow] of [
    [api.url, false], // the local fake API, switch off
    ['http://api.example.com', true], // not loopback, even with the switch
    ['http://127.0.0.1.example.com:8080', true],
  ]) {
    await page.fill('#base-url', base);
    await page.setChecked('#allow-local-http', allow);
    await page.click('#save-connection');
    const error = page.locator('#errors .error-item[data-code="INSECURE_BASE_URL"]');
    await error.waitFor();
    assert.match(await error.textContent(), /sent only to https:\/\/ origins/, base);
    await error.getByRole('button', { name: 'Dismiss this error' }).click();
    assert.equal(await page.getAttribute('body', 'data-mode'), 'offline', `${base}: nothing saved, still offline`);
  }
  assert.equal(await page.evaluate(() => sessionStorage.getItem('context-compaction.apiKey')), null, 'nothing saved');
  assert.equal(api.requests.length, requestsBefore, 'nothing sent');
  await page.fill('#api-key', '');
  await page.fill('#base-url', '');
  await page.setChecked('#allow-local-http', false);
});

test('a chat turn against the fake Messages API streams the answer and moves the meter', async () => {
  await page.fill('#base-url', api.url);
  await page.setChecked('#allow-local-http', true); // the fake API is a local http:// server
  await page.fill('#api-key', 'sk-ant-test-dummy-key');
  await page.click('#save-connection');
  assert.equal(await page.getAttribute('body', 'data-mode'), 'online');
  assert.match(await page.textContent('#mode'), new RegExp(`Online · ${MODEL} via 127\\.0\\.0\\.1:`));
  // The default: for this tab only.
  assert.equal(await page.evaluate(() => sessionStorage.getItem('context-compaction.apiKey')), 'sk-ant-test-dummy-key');
  assert.equal(await page.evaluate(() => localStorage.getItem('context-compaction.apiKey')), null);

  const before = await meterTokens();
  const requestsBefore = api.requests.length;
  await page.fill('#composer-input', 'Where is the transcript parser?');
  await page.press('#composer-input', 'Enter');
  const answer = page.locator('#conversation .msg-assistant[data-state="done"]').last();
  await answer.waitFor({ timeout: 30_000 });
  const shown = await answer.locator('.msg-body').textContent();
  assert.ok(shown.startsWith(CHAT_ANSWER.split('\n')[0]), shown);
  assert.ok(shown.includes('groups the assistant lines of one response by message.id'), shown);
  assert.equal((await answer.locator('pre.code').textContent()).trim(), 'mix test test/spotter/transcripts');
  await page.waitForSelector('body[data-busy=""]');

  // One request, streamed, with the browser headers, the compacted context and the question.
  assert.equal(api.requests.length, requestsBefore + 1);
  const req = api.requests.at(-1);
  assert.equal(req.method, 'POST');
  assert.equal(req.path, '/v1/messages');
  assert.equal(req.headers['x-api-key'], 'sk-ant-test-dummy-key');
  assert.equal(req.headers['anthropic-version'], '2023-06-01');
  assert.equal(req.headers['anthropic-dangerous-direct-browser-access'], 'true');
  assert.ok(api.preflights.length >= 1, 'the browser sent a CORS preflight');
  assert.equal(req.body.stream, true);
  assert.equal(req.body.model, MODEL);
  assert.equal(req.body.messages[0].role, 'user');
  assert.match(JSON.stringify(req.body.messages[0].content), /Primary request and intent/);
  // The summary and the question are one user turn (the API view merges consecutive users).
  assert.equal(req.body.messages.length, 1);
  assert.equal(req.body.messages[0].role, 'user');
  assert.deepEqual(req.body.messages[0].content.at(-1), { type: 'text', text: 'Where is the transcript parser?' });

  // The meter moved: the answer's usage (input + output) is the new count. (This fake API
  // counts the messages' characters / 4 and nothing else, so it reports less than the count
  // learned from the real session's usage, which includes its system prompt and tools.)
  const now = await meterTokens();
  assert.notEqual(now, before);
  const input = Math.ceil(JSON.stringify(req.body.messages).length / 4);
  const output = Math.max(1, Math.ceil(CHAT_ANSWER.length / 4));
  assert.equal(now, input + output, `meter ${before} → ${now}`);
  await screenshot('page-chat.png');
});

test('automatic compaction past a lowered threshold, before the next turn', async () => {
  await page.fill('#auto-pct', '1');
  await page.click('#save-connection');
  // Above 1% of the window already: the turn compacts first, then asks.
  assert.match(await page.textContent('#meter-text'), /auto-compact due/);
  await page.fill('#composer-input', 'Continue with the tests.');
  await page.press('#composer-input', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('#conversation .boundary').length === 3, null, { timeout: 30_000 });
  await page.locator('#conversation .msg-assistant[data-state="done"]').nth(1).waitFor({ timeout: 30_000 });
  await page.waitForSelector('body[data-busy=""]');
  assert.equal(await page.locator('#conversation .boundary').last().getAttribute('data-trigger'), 'auto');
  assert.equal(await page.textContent('[data-fact="trigger"]'), 'auto');
  // The chat request after the compaction starts from the new summary.
  const last = api.requests.at(-1);
  assert.ok(!last.body.system, 'the last request is the chat turn');
  assert.match(JSON.stringify(last.body.messages[0].content), new RegExp(SUMMARY_MARKER));
  await page.fill('#auto-pct', '');
  await page.click('#save-connection');
});

test('/compact with instructions streams a summary from the API, with progress', async () => {
  const requestsBefore = api.requests.length;
  await page.fill('#composer-input', `/compact ${INSTRUCTIONS}`);
  await page.press('#composer-input', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('#conversation .boundary').length === 4, null, { timeout: 30_000 });
  await page.waitForSelector('body[data-busy=""]');
  const summary = page.locator('#conversation .summary-card').last();
  assert.match(await summary.textContent(), new RegExp(SUMMARY_MARKER));
  assert.doesNotMatch(await summary.textContent(), /scratch notes/);
  assert.equal(api.requests.length, requestsBefore + 1);
  const req = api.requests.at(-1);
  assert.ok(req.body.system, 'a summary request');
  assert.ok(JSON.stringify(req.body).includes(INSTRUCTIONS), 'the instructions are in the summary request');
  assert.match(await page.textContent('[data-fact="summarizer"]'), new RegExp(MODEL));
  const steps = await page.textContent('[data-fact="steps"]');
  assert.match(steps, /Writing the summary/);
  const streamed = Number(/([\d,]+) characters streamed/.exec(steps)[1].replace(/,/g, ''));
  assert.ok(streamed > SUMMARY_MARKER.length, `streamed ${streamed} characters`);
});

test('Esc stops a streaming answer; nothing is committed', async () => {
  const committed = await meterTokens();
  await page.fill('#composer-input', SLOW_PROMPT);
  await page.press('#composer-input', 'Enter');
  const streaming = page.locator('#conversation .msg-assistant[data-state="streaming"]');
  await streaming.waitFor({ timeout: 30_000 });
  await page.waitForFunction(() => document.querySelector('#conversation .msg-assistant[data-state="streaming"] .text')?.textContent.length > 0);
  assert.equal(await page.isVisible('#stop-button'), true);
  await page.keyboard.press('Escape');
  const stopped = page.locator('#conversation .msg-assistant[data-state="stopped"]');
  await stopped.waitFor({ timeout: 10_000 });
  await page.waitForSelector('body[data-busy=""]');
  assert.equal(await stopped.locator('.msg-error').getAttribute('data-code'), 'ABORTED');
  const toast = page.locator('#errors .error-item[data-code="ABORTED"]');
  assert.equal(await toast.count(), 1);
  await toast.getByRole('button', { name: 'Dismiss this error' }).click();
  assert.equal(await page.isVisible('#stop-button'), false);
  // The question stays (it was asked); no partial answer enters the conversation.
  const now = await meterTokens();
  assert.ok(now >= committed && now < committed + 50, `meter ${committed} → ${now}`);
});

test('summaries written ahead: the setting writes one in the background; at the threshold it is swapped in with no summary request', async () => {
  longSummaries = true;
  // The threshold will be lowered to 1 % of the window (1,800 tokens; early line 900), and a
  // summary is about 1,300 tokens. Turns bring the conversation to about 1,680 tokens: past the
  // early line, below the threshold, the latest turn small (a swap keeps it, and the bound
  // leaves room for 30 % of the summary).
  const ask = async (q) => {
    const done = await page.locator('#conversation .msg-assistant[data-state="done"]').count();
    await page.fill('#composer-input', q);
    await page.press('#composer-input', 'Enter');
    await page.waitForFunction((n) => document.querySelectorAll('#conversation .msg-assistant[data-state="done"]').length > n, done, { timeout: 30_000 });
    await page.waitForSelector('body[data-busy=""]');
    return meterTokens();
  };
  const words = (tokens) => 'parser '.repeat(Math.max(1, Math.round((tokens * 4) / 7)));
  const c0 = await meterTokens();
  const c1 = await ask('What does the parser keep?');
  const turn = c1 - c0; // a small turn: question and answer
  await ask(`Which line types does it know? ${words(1_680 - 2 * turn - c1)}`);
  const count = await ask('And how are the lines grouped?');
  assert.ok(count > 1_550 && count < 1_760, `${count} tokens (a small turn is ${turn})`);
  const boundaries = await page.locator('#conversation .boundary').count();
  assert.equal(await page.isVisible('#background-state'), false, 'off by default');
  const before = api.requests.length;
  await page.check('#preemptive');
  await page.fill('#auto-pct', '1');
  await page.click('#save-connection');
  // Past the early line at once: the summary is written in the background (a summary
  // request), with no progress panel, and becomes ready.
  await page.waitForSelector('#background-state[data-state="ready"]', { timeout: 30_000 });
  assert.match(await page.textContent('#background-state'), /ready/);
  assert.equal(await page.isVisible('#progress'), false, 'nobody waits for it');
  assert.equal(api.requests.length, before + 1);
  assert.ok(api.requests.at(-1).body.system, 'a summary request');
  // The next turn crosses the threshold: the summary written ahead is swapped in, and the
  // only request is the chat turn.
  // Just over the threshold; the messages since the summary's cut stay within the bound.
  await page.fill('#composer-input', `Go on with the parser tests. ${words(1_820 - count)}`);
  await page.press('#composer-input', 'Enter');
  await page.waitForFunction((n) => document.querySelectorAll('#conversation .boundary').length === n + 1, boundaries, { timeout: 30_000 });
  await page.waitForSelector('body[data-busy=""]');
  await page.locator('#conversation .msg-assistant[data-state="done"]').last().waitFor({ timeout: 30_000 });
  assert.equal(api.requests.length, before + 2);
  assert.ok(!api.requests.at(-1).body.system, 'the chat turn, no summary request at the threshold');
  assert.match(await page.textContent('[data-fact="summarizer"]'), /written ahead/);
  assert.equal(await page.locator('#conversation .boundary').last().getAttribute('data-trigger'), 'auto');
  // The setting is kept; turning it off hides the status line.
  await page.uncheck('#preemptive');
  await page.fill('#auto-pct', '');
  await page.click('#save-connection');
  assert.equal(await page.isVisible('#background-state'), false);
  longSummaries = false;
});

test('errors are shown with their code; forgetting the key returns to offline mode', async () => {
  // Remembered in this browser when asked, and then no longer in the tab's storage.
  await page.setChecked('#remember-key', true);
  await page.click('#save-connection');
  assert.equal(await page.evaluate(() => localStorage.getItem('context-compaction.apiKey')), 'sk-ant-test-dummy-key');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('context-compaction.apiKey')), null);
  await page.click('#forget-key');
  assert.equal(await page.getAttribute('body', 'data-mode'), 'offline');
  assert.equal(await page.evaluate(() => localStorage.getItem('context-compaction.apiKey')), null);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('context-compaction.apiKey')), null);
  assert.equal(await page.inputValue('#api-key'), '');
  const requestsBefore = api.requests.length;
  await page.fill('#composer-input', 'hello?');
  await page.press('#composer-input', 'Enter');
  const error = page.locator('#errors .error-item[data-code="OFFLINE"]');
  await error.waitFor();
  assert.match(await error.textContent(), /^OFFLINE/);
  await error.getByRole('button', { name: 'Dismiss this error' }).click();
  assert.equal(await page.locator('#errors .error-item').count(), 0);
  assert.equal(api.requests.length, requestsBefore, 'offline: nothing is sent');

  // A malformed file: the library's code and the line number.
  await page.setInputFiles('#file-input', { name: 'broken.jsonl', mimeType: 'application/x-ndjson', buffer: Buffer.from('{"type":"user"}\nnot json\n') });
  const malformed = page.locator('#errors .error-item[data-code="MALFORMED_TRANSCRIPT"]');
  await malformed.waitFor();
  assert.match(await malformed.textContent(), /line 2/);
});

test('drag and drop opens a session file; the page fits a narrow screen', async () => {
  const small = join(TRANSCRIPTS, 'cc_small_short.jsonl');
  const text = readFileSync(small, 'utf8');
  const dataTransfer = await page.evaluateHandle(({ name, text }) => {
    const dt = new DataTransfer();
    dt.items.add(new File([text], name, { type: 'application/x-ndjson' }));
    return dt;
  }, { name: 'cc_small_short.jsonl', text });
  await page.dispatchEvent('#conversation-scroll', 'dragenter', { dataTransfer });
  assert.equal(await page.isVisible('#drop-overlay'), true, 'the drop overlay shows while dragging');
  await page.dispatchEvent('#conversation-scroll', 'dragover', { dataTransfer });
  await page.dispatchEvent('#conversation-scroll', 'drop', { dataTransfer });
  await page.waitForSelector('body[data-file="cc_small_short.jsonl"]');
  assert.equal(await page.isVisible('#drop-overlay'), false);
  const smallLines = cc.parseTranscript(text);
  assert.equal(await page.textContent('#analysis [data-fact="lines"]'), fmt(smallLines.length));
  assert.equal(await meterTokens(), cc.tokenCountWithEstimation(smallLines));
  assert.equal(await page.locator('#conversation .boundary').count(), 0, 'a new file replaces the conversation');
  assert.equal(await page.getAttribute('#download-button', 'disabled'), null);

  await page.setViewportSize({ width: 400, height: 900 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `no horizontal scrolling at 400 px (overflow ${overflow} px)`);
  await page.setViewportSize({ width: 1440, height: 1000 });
});

test('right after a compaction the meter is within 10 % of the next request\'s real size', async () => {
  // The long session up to its first request after the compaction boundary: no usage anchors
  // the count there, the line learned from the usage before the boundary does.
  const all = cc.parseTranscript(readFileSync(TRANSCRIPT, 'utf8'));
  const boundary = all.findIndex((l) => l.type === 'system' && l.subtype === 'compact_boundary');
  const first = all.findIndex((l, i) => i > boundary && l.type === 'assistant' && !l.isSidechain && l.message?.usage);
  const u = all[first].message.usage;
  const real = u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens;
  const name = 'resumed-after-boundary.jsonl';
  await page.setInputFiles('#file-input', { name, mimeType: 'application/x-ndjson', buffer: Buffer.from(cc.serializeTranscript(all.slice(0, first))) });
  await page.waitForSelector(`body[data-file="${name}"]`, { timeout: 30_000 });
  const shown = await meterTokens();
  assert.ok(Math.abs(shown - real) <= 0.1 * real, `meter ${shown}, next request ${real}`);
  assert.equal(shown, cc.tokenCountWithEstimation(all.slice(0, first)));
});

test('no console errors, page errors or failed requests', () => {
  assert.deepEqual(problems, []);
  // The only tolerated cancellations: streams of the fake API closed by the page.
  assert.ok(cancelledStreams.length <= api.requests.length);
});
