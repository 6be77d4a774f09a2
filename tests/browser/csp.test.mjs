// The entries under a strict Content-Security-Policy, in headless Chromium: no 'unsafe-eval'
// anywhere (the package needs none), with and without 'wasm-unsafe-eval'. Without it the browser
// refuses to compile WebAssembly: every entry must still import (a bundle that holds the package
// keeps the rest of the page working), and its init(), initSync() and calls report a coded
// NOT_INITIALIZED.
// The inline entry compiled at import and threw the browser's CompileError there, which broke the
// whole module graph of a page that bundled it.
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
/** The policy the server sends with the page. */
let policy = '';

before(async () => {
  assert.ok(existsSync(CHROMIUM), `Chromium not found at ${CHROMIUM}: run scripts/setup.sh or set CHROMIUM`);
  assert.ok(existsSync(join(ROOT, 'pkg', 'inline.js')), 'pkg/inline.js is missing: bash scripts/build.sh');
  const { chromium } = await import('playwright-core');
  server = createServer((req, res) => {
    const file = resolve(ROOT, '.' + decodeURIComponent(new URL(req.url, 'http://x').pathname));
    try {
      if (!file.startsWith(ROOT.replace(/\/$/, '') + sep) || !statSync(file).isFile()) throw new Error('no');
      const headers = { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' };
      if (file.endsWith('.html')) headers['content-security-policy'] = policy;
      res.writeHead(200, headers);
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

/** Opens csp.html under `csp`; the page's results. */
async function underPolicy(csp) {
  policy = csp;
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${server.address().port}/tests/browser/csp.html`);
  await page.waitForSelector('body[data-status]', { timeout: 60_000 });
  const results = JSON.parse(await page.textContent('#output'));
  await page.close();
  return results;
}

test("script-src 'self' 'wasm-unsafe-eval' (no 'unsafe-eval'): every entry loads and counts", async () => {
  const results = await underPolicy("default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; object-src 'none'; base-uri 'none'");
  assert.deepEqual(results, {
    'inline.js import': 'ok', 'inline.js init': 'ok', 'inline.js count': 'ok', 'inline.js initSync': 'ok',
    'web.js import': 'ok', 'web.js init': 'ok', 'web.js count': 'ok', 'web.js initSync': 'ok',
    'count.js import': 'ok', 'count.js init': 'ok', 'count.js count': 'ok', 'count.js initSync': 'ok',
  });
});

test("script-src 'self' (WebAssembly refused): every entry imports; init() and calls are NOT_INITIALIZED", async () => {
  const results = await underPolicy("default-src 'self'; script-src 'self'; object-src 'none'; base-uri 'none'");
  assert.deepEqual(results, {
    'inline.js import': 'ok', 'inline.js init': 'NOT_INITIALIZED', 'inline.js count': 'NOT_INITIALIZED', 'inline.js initSync': 'NOT_INITIALIZED',
    'web.js import': 'ok', 'web.js init': 'NOT_INITIALIZED', 'web.js count': 'NOT_INITIALIZED', 'web.js initSync': 'NOT_INITIALIZED',
    'count.js import': 'ok', 'count.js init': 'NOT_INITIALIZED', 'count.js count': 'NOT_INITIALIZED', 'count.js initSync': 'NOT_INITIALIZED',
  });
});
