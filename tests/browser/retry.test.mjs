// A lazily imported part of the package whose first download fails (a page offline for a
// moment) is fetched again by the next use, in headless Chromium: a browser keeps a failed
// `import()` of a URL for the page's lifetime, so the package imports it anew with `?retry=N`
// (js/defaults.js `importAgain`). Each file's first request is failed by the test
// (`route.abort`); the second use must reach the network and succeed.
//
// Run: `node --test tests/browser/` after `bash scripts/build.sh`. CHROMIUM picks the binary.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.wasm': 'application/wasm', '.map': 'application/json' };

let server;
let browser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: run scripts/setup.sh or set CHROMIUM`);
  assert.ok(existsSync(join(ROOT, 'pkg', 'web.js')), 'pkg/web.js is missing: bash scripts/build.sh');
  const { chromium } = await import('playwright-core');
  server = createServer((req, res) => {
    const file = resolve(ROOT, '.' + decodeURIComponent(new URL(req.url, 'http://x').pathname));
    try {
      if (!file.startsWith(ROOT.replace(/\/$/, '') + sep) || !statSync(file).isFile()) throw new Error('no');
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(readFileSync(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu'] });
});

after(async () => {
  await browser?.close();
  await new Promise((ok) => (server ? server.close(ok) : ok()));
});

/** Opens tests/browser/`name` with the first request of each of `files` failed; the page's results and the requests per file. */
async function withFirstFailed(name, files) {
  const page = await browser.newPage();
  const hits = Object.fromEntries(files.map((f) => [f, 0]));
  for (const f of files) {
    await page.route((url) => url.pathname === `/pkg/${f}`, (route) => (++hits[f] === 1 ? route.abort('internetdisconnected') : route.continue()));
  }
  await page.goto(`http://127.0.0.1:${server.address().port}/tests/browser/${name}`);
  await page.waitForSelector('body[data-status]', { timeout: 60_000 });
  const results = JSON.parse(await page.textContent('#output'));
  await page.close();
  return { results, hits };
}

test("a summarizer's request half and the second module, failed once, are fetched again at the next use (a page that loaded count.js)", async () => {
  const { results, hits } = await withFirstFailed('retry.html', ['anthropic-send.js', 'openai-send.js', 'langchain-send.js', 'context_compaction_extra.js']);
  assert.equal(results.failure, undefined);
  assert.deepEqual(results, {
    'anthropic 1': 'NETWORK_ERROR',
    'anthropic 2': 'ok',
    'openai 1': 'NETWORK_ERROR',
    'openai 2': 'ok',
    'langchain 1': 'NETWORK_ERROR',
    'langchain 2': 'ok',
    'loadExtras 1': 'NOT_INITIALIZED',
    'loadExtras 2': 'ok',
    preview: true,
  });
  assert.deepEqual(hits, { 'anthropic-send.js': 2, 'openai-send.js': 2, 'langchain-send.js': 2, 'context_compaction_extra.js': 2 });
});

test('count entry: a loadCompaction() whose import of web.js failed imports it again at the next call', async () => {
  const { results, hits } = await withFirstFailed('retry-count.html', ['web.js']);
  assert.deepEqual(results, { 'loadCompaction 1': 'NOT_INITIALIZED', 'loadCompaction 2': 'ok' });
  assert.equal(hits['web.js'], 2);
});
