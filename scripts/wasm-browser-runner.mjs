#!/usr/bin/env node
// Cargo's test runner for wasm32 in headless Chromium (scripts/test.sh, stage wasm-chrome):
//
//   CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER="node scripts/wasm-browser-runner.mjs" \
//     cargo test --target wasm32-unknown-unknown
//
// Cargo calls it once per test binary with the `.wasm` path and the harness arguments. It starts
// wasm-bindgen-test-runner in its interactive mode (NO_HEADLESS=1: it generates the bindings and
// serves the suite's page, nothing more), opens that page in Debian's Chromium through
// playwright-core, waits for the harness's "test result:" line in the page's #output, prints the
// page's output and exits 0 only when the harness reported `ok` with no test failed.
//
// Why not `wasm-pack test --headless --chrome`: its page stayed at "Loading scripts..." until
// chromedriver's 300 s timeout in about 1 run of 5 on these machines, with or without Chrome's
// sandbox, GPU, /dev/shm, cross-origin isolation or debug info (2 of 10, 1 of 10, 1 of 4 and 1
// of 3 runs). Opened by playwright-core the page also stalled, less often: some of the
// browser's parallel requests for the suite's JS modules were never answered by the runner's
// server (rouille). So the page is served by a small server here, in front of the runner's:
// it fetches each file once, one request at a time on a connection of its own, and keeps it.
// A page that still shows no result after PAGE_TIMEOUT_MS is opened again in a new browser,
// up to ATTEMPTS times; the failure says so.
//
// Environment: CHROMIUM (default /usr/bin/chromium) picks the browser binary;
// WASM_BINDGEN_TEST_RUNNER (default: wasm-bindgen-test-runner on PATH) the runner.
import { spawn } from 'node:child_process';
import { request as httpRequest, createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';

const PAGE_TIMEOUT_MS = 120_000;
const SERVER_TIMEOUT_MS = 120_000;
const ATTEMPTS = 3;
const FETCH_TIMEOUT_MS = 30_000;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const RUNNER = process.env.WASM_BINDGEN_TEST_RUNNER ?? 'wasm-bindgen-test-runner';

const [wasm, ...harnessArgs] = process.argv.slice(2);
if (!wasm) {
  console.error('usage: wasm-browser-runner.mjs TEST.wasm [harness arguments]');
  process.exit(2);
}

/** A free loopback port (the runner serves on the address it is given). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (srv.address());
      srv.close(() => resolve(port));
    });
  });
}

/**
 * Starts the runner's server. Resolves `{url}` once it serves, or `{exit, output}` when the
 * runner ended first (a binary without tests: "no tests to run!").
 */
async function startServer(port) {
  const child = spawn(RUNNER, [wasm, ...harnessArgs], {
    env: { ...process.env, NO_HEADLESS: '1', WASM_BINDGEN_USE_BROWSER: '1', WASM_BINDGEN_TEST_ADDRESS: `127.0.0.1:${port}` },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const started = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wasm-bindgen-test-runner did not serve the suite within ${SERVER_TIMEOUT_MS} ms:\n${output}`)), SERVER_TIMEOUT_MS);
    const onData = (d) => {
      output += d;
      const m = /available at (http:\/\/\S+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1] });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`could not start ${RUNNER}: ${e.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ exit: code ?? (signal ? 1 : 0), output });
    });
  });
  return { child, started };
}

/** GETs `path` from the runner's server on a connection of its own: `{status, headers, body}`. */
function fetchOnce(origin, path) {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, origin), { agent: false, headers: { connection: 'close' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(FETCH_TIMEOUT_MS, () => req.destroy(new Error(`no answer for ${path} in ${FETCH_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end();
  });
}

/**
 * A server in front of the runner's: each file is fetched from it once, one at a time on a
 * connection of its own (retried once), and kept. The runner's server left some of the
 * browser's parallel requests for the suite's modules unanswered (the page then stayed at
 * "Loading scripts..."); one request at a time it answered every one.
 */
async function startProxy(origin) {
  const cache = new Map();
  let queue = Promise.resolve();
  const get = (path) => {
    if (!cache.has(path)) {
      const p = queue.then(() => fetchOnce(origin, path).catch(() => fetchOnce(origin, path)));
      queue = p.catch(() => {});
      cache.set(path, p);
      p.catch(() => cache.delete(path));
    }
    return cache.get(path);
  };
  const server = createHttpServer((req, res) => {
    get(req.url ?? '/').then(
      (r) => {
        const headers = { ...r.headers };
        delete headers['content-length'];
        delete headers['transfer-encoding'];
        delete headers.connection;
        res.writeHead(r.status, headers);
        res.end(r.body);
      },
      (e) => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(String(e));
      },
    );
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return { server, url: `http://127.0.0.1:${port}/` };
}

/** Opens the suite's page once; resolves the page's #output, or null when no result came in time. */
async function runPage(chromium, url) {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  const console_ = [];
  try {
    const page = await browser.newPage();
    page.on('console', (m) => console_.push(`${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => console_.push(`pageerror: ${e}`));
    await page.goto(url, { waitUntil: 'commit', timeout: PAGE_TIMEOUT_MS });
    const deadline = Date.now() + PAGE_TIMEOUT_MS;
    while (Date.now() < deadline) {
      const out = await page.textContent('#output', { timeout: 5_000 }).catch(() => '');
      if (out && /test result: /.test(out)) return { out, console_ };
      await new Promise((r) => setTimeout(r, 100));
    }
    return { out: null, console_, last: await page.textContent('#output', { timeout: 5_000 }).catch(() => '') };
  } finally {
    await browser.close().catch(() => {});
  }
}

async function main() {
  const { chromium } = await import('playwright-core');
  const port = await freePort();
  const { child, started } = await startServer(port);
  if ('exit' in started) {
    process.stdout.write(started.output);
    return started.exit;
  }
  const proxy = await startProxy(started.url);
  try {
    console.log(`Running headless tests in Chromium (${CHROMIUM}, playwright-core) on ${proxy.url} (served from ${started.url})`);
    for (let attempt = 1; attempt <= ATTEMPTS; attempt += 1) {
      const r = await runPage(chromium, proxy.url);
      if (r.out !== null) {
        process.stdout.write(r.out.replace(/^Loading Wasm module\.\.\.\s*/, '') + '\n');
        const ok = /test result: ok\. \d+ passed; 0 failed/.test(r.out);
        if (!ok) console.log(`console of the page:\n${r.console_.join('\n')}`);
        return ok ? 0 : 1;
      }
      console.log(
        `attempt ${attempt} of ${ATTEMPTS}: no "test result:" in the page after ${PAGE_TIMEOUT_MS} ms; its output:\n${r.last}\nits console:\n${r.console_.slice(-20).join('\n')}`,
      );
    }
    console.log(`the suite's page gave no result in ${ATTEMPTS} attempts`);
    return 1;
  } finally {
    proxy.server.close();
    child.kill('SIGKILL');
  }
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e instanceof Error ? e.stack : e);
    process.exit(1);
  },
);
