#!/usr/bin/env node
// @ts-check
// The web page's static server: no dependencies, 127.0.0.1 only.
//
//   node www/serve.mjs [port]          # or PORT=8080 node www/serve.mjs; port 0 picks a free one
//   → context-compaction page: http://127.0.0.1:8080/
//
// Serves
//   /               www/ (index.html, app.js, style.css)
//   /pkg/           the built package (bash scripts/build.sh writes it)
//   /transcripts/   the shared Claude Code transcripts (../shared/transcripts beside the
//                   repository, or TRANSCRIPTS_DIR), for the page's demo list;
//                   /transcripts/index.json lists them (empty when the directory is missing).
// Only GET and HEAD; never a file outside those three roots.
//
// Locked down (issue 13):
// - the Host header must name the loopback address the server listens on (127.0.0.1, localhost
//   or [::1], with its port): any other name is answered 421, so a DNS-rebinding page (a
//   hostile name resolved to 127.0.0.1) cannot read what is served, sessions included;
// - a file is served only when its real path (every symlink resolved) lies inside the real path
//   of its root: a symlink out of a root is answered 404 like a missing file;
// - every answer carries a strict Content-Security-Policy (CSP below; www/index.html repeats it
//   in a meta tag): scripts only from this origin (the page's one inline script, its import
//   map, allowed by its hash), no inline script or style, no plugins, no framing; the page may
//   connect to this origin, to https:// origins (the Messages API) and to http:// loopback
//   test servers only.

import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const WWW = fileURLToPath(new URL('./', import.meta.url));
const ROOT = resolve(WWW, '..');
const PKG = join(ROOT, 'pkg');
const TRANSCRIPTS = resolve(process.env.TRANSCRIPTS_DIR ?? join(ROOT, '..', 'shared', 'transcripts'));

/**
 * The hashes (`'sha256-…'`) of the inline scripts of an HTML text: what a CSP must list for
 * them to run (here: the page's import map).
 * @param {string} html
 * @returns {string[]}
 */
export function inlineScriptHashes(html) {
  /** @type {string[]} */
  const out = [];
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    if (/\bsrc\s*=/i.test(m[1])) continue;
    out.push(`'sha256-${createHash('sha256').update(m[2], 'utf8').digest('base64')}'`);
  }
  return out;
}

/**
 * The page's Content-Security-Policy as www/index.html's meta tag states it (the directives a
 * meta tag can carry), the hashes of its inline scripts computed from the file.
 * @param {string[]} hashes
 */
export function pagePolicy(hashes) {
  return [
    "default-src 'none'",
    `script-src 'self' 'wasm-unsafe-eval'${hashes.map((h) => ` ${h}`).join('')}`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self' https: http://127.0.0.1:* http://localhost:*",
    "base-uri 'none'",
    "form-action 'none'",
    "object-src 'none'",
  ].join('; ');
}

/**
 * The CSP header of every answer: the page's policy plus what only a header can say (no framing).
 * @returns {string}
 */
function policyHeader() {
  /** @type {string[]} */
  let hashes = [];
  try {
    hashes = inlineScriptHashes(readFileSync(join(WWW, 'index.html'), 'utf8'));
  } catch {
    /* no page: no inline script to allow */
  }
  return `${pagePolicy(hashes)}; frame-ancestors 'none'`;
}
const CSP = policyHeader();

/** The addresses the server may listen on. */
const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** Headers of every answer. */
const SECURITY_HEADERS = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/**
 * The real path of each root (symlinks resolved once; a missing root serves nothing).
 * @param {string} root
 */
const realRoot = (root) => {
  try {
    return realpathSync(root);
  } catch {
    return null;
  }
};

/** @type {Record<string, string>} */
const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
  '.jsonl': 'application/x-ndjson; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

/**
 * The file a URL path names, or null (outside the roots, or a malformed path).
 * @param {string} pathname
 * @returns {string | null}
 */
function fileFor(pathname) {
  let path;
  try {
    path = decodeURIComponent(pathname);
  } catch {
    return null;
  }
  if (path.includes('\0')) return null;
  /** @type {[string, string][]} */
  const mounts = [
    ['/pkg/', PKG],
    ['/transcripts/', TRANSCRIPTS],
    ['/', WWW],
  ];
  for (const [prefix, base] of mounts) {
    if (path === prefix.slice(0, -1) && prefix !== '/') path = prefix;
    if (!path.startsWith(prefix)) continue;
    const file = resolve(base, path.slice(prefix.length));
    if (!within(file, resolve(base))) return null;
    return realInside(file, base);
  }
  return null;
}

/**
 * Whether `file` is `root` or lies below it.
 * @param {string} file
 * @param {string} root
 */
const within = (file, root) => file === root || file.startsWith(root.endsWith(sep) ? root : root + sep);

/**
 * `file`'s real path when it lies inside the real path of `root`; null otherwise (a symlink
 * out of the root, or nothing there).
 * @param {string} file
 * @param {string} root
 * @returns {string | null}
 */
function realInside(file, root) {
  const realBase = realRoot(root);
  if (realBase === null) return null;
  let real;
  try {
    real = realpathSync(file);
  } catch {
    return null;
  }
  return within(real, realBase) ? real : null;
}

/** The demo list: the `.jsonl` files of the transcripts directory with their sizes. */
function transcriptIndex() {
  if (!existsSync(TRANSCRIPTS)) return [];
  try {
    return readdirSync(TRANSCRIPTS)
      .filter((name) => name.endsWith('.jsonl') && realInside(join(TRANSCRIPTS, name), TRANSCRIPTS) !== null)
      .sort()
      .map((name) => ({ name, size: statSync(join(TRANSCRIPTS, name)).size, url: `/transcripts/${encodeURIComponent(name)}` }));
  } catch {
    return [];
  }
}

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {string} type
 * @param {string} body
 * @param {boolean} head
 */
function send(res, status, type, body, head) {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-cache' });
  res.end(head ? undefined : body);
}

/**
 * The Host header values a server listening on `host`:`port` answers: the address itself and,
 * for 127.0.0.1 and ::1, the name localhost (IPv6 addresses in brackets). Lowercase.
 * @param {string} host the listening address
 * @param {number} port
 * @returns {Set<string>}
 */
export function allowedHosts(host, port) {
  const names = new Set();
  const bracket = (/** @type {string} */ h) => (h.includes(':') ? `[${h}]` : h);
  names.add(`${bracket(host.toLowerCase())}:${port}`);
  if (host === '127.0.0.1' || host === '::1' || host === 'localhost') names.add(`localhost:${port}`);
  if (host === 'localhost') {
    names.add(`127.0.0.1:${port}`);
    names.add(`[::1]:${port}`);
  }
  return names;
}

/**
 * Handles one request.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 * @param {Set<string>} hosts the Host header values answered (allowedHosts)
 */
function handle(req, res, hosts) {
  const head = req.method === 'HEAD';
  const host = (req.headers.host ?? '').toLowerCase();
  if (!hosts.has(host)) {
    // Another name for this address (DNS rebinding) or no Host at all.
    const status = req.headers.host === undefined ? 400 : 421;
    send(res, status, 'text/plain; charset=utf-8', `${status === 400 ? 'a Host header is required:' : 'misdirected request: this server answers only'} ${[...hosts].join(', ')}\n`, head);
    return;
  }
  if (req.method !== 'GET' && !head) {
    res.writeHead(405, { ...SECURITY_HEADERS, allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
    return;
  }
  let url;
  try {
    url = new URL(req.url ?? '/', 'http://127.0.0.1');
  } catch {
    send(res, 400, 'text/plain', 'bad request\n', head);
    return;
  }
  if (url.pathname === '/transcripts/index.json') {
    send(res, 200, TYPES['.json'], JSON.stringify(transcriptIndex()), head);
    return;
  }
  if (url.pathname === '/favicon.ico') {
    res.writeHead(204).end();
    return;
  }
  let file = fileFor(url.pathname);
  let stat;
  try {
    if (!file) throw new Error('outside');
    stat = statSync(file);
    if (stat.isDirectory()) {
      // Inside the root already; its index.html must be too (it may be a symlink).
      file = realInside(join(file, 'index.html'), file);
      if (!file) throw new Error('outside');
      stat = statSync(file);
    }
    if (!stat.isFile()) throw new Error('not a file');
  } catch {
    const hint = url.pathname.startsWith('/pkg/') ? ' (build the package first: bash scripts/build.sh)' : '';
    send(res, 404, 'text/plain; charset=utf-8', `not found: ${url.pathname}${hint}\n`, head);
    return;
  }
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': stat.size,
    'cache-control': 'no-cache',
  });
  if (head) {
    res.end();
    return;
  }
  createReadStream(file)
    .on('error', () => res.destroy())
    .pipe(res);
}

/**
 * Starts the server on a loopback address; resolves with `{server, url}` (rejects with an
 * INVALID_ARGUMENT error for any other address).
 * @param {{port?: number, host?: string}} [options] `host`: 127.0.0.1 (default), ::1 or localhost
 * @returns {Promise<{server: import('node:http').Server, url: string}>}
 */
export function startServer({ port = 8080, host = '127.0.0.1' } = {}) {
  if (!LOOPBACK.has(host)) {
    return Promise.reject(Object.assign(new Error(`serve.mjs listens on loopback only (127.0.0.1, ::1, localhost), not ${host}`), { code: 'INVALID_ARGUMENT' }));
  }
  /** @type {Set<string>} nothing is answered until the port is known */
  let hosts = new Set();
  const server = createServer((req, res) => handle(req, res, hosts));
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      const { port: actual } = /** @type {import('node:net').AddressInfo} */ (server.address());
      hosts = allowedHosts(host, actual);
      ok({ server, url: `http://${host.includes(':') ? `[${host}]` : host}:${actual}/` });
    });
  });
}

/**
 * The port from argv (`8080` or `--port 8080` / `--port=8080`), else PORT, else 8080.
 * @param {string[]} argv
 * @param {NodeJS.ProcessEnv} env
 */
function portFromArgs(argv, env) {
  let value;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--port' || a === '-p') value = argv[++i];
    else if (a.startsWith('--port=')) value = a.slice('--port='.length);
    else if (/^\d+$/.test(a)) value = a;
    else if (a === '--help' || a === '-h') {
      console.log('usage: node www/serve.mjs [port | --port N]   (PORT also works; 0 picks a free port)');
      process.exit(0);
    } else {
      console.error(`serve.mjs: unknown argument ${a}`);
      process.exit(2);
    }
  }
  value ??= env.PORT ?? '8080';
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`serve.mjs: not a port: ${value}`);
    process.exit(2);
  }
  return port;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const port = portFromArgs(process.argv.slice(2), process.env);
  startServer({ port }).then(
    ({ server, url }) => {
      if (!existsSync(join(PKG, 'web.js'))) {
        console.error('warning: pkg/web.js is missing: build the package first (bash scripts/build.sh)');
      }
      console.log(`context-compaction page: ${url}`);
      const stop = () => {
        server.close(() => process.exit(0));
        server.closeAllConnections();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    },
    /** @param {NodeJS.ErrnoException} e the server's `error` event */
    (e) => {
      console.error(`serve.mjs: cannot listen on 127.0.0.1:${port}: ${e.message}`);
      process.exit(1);
    },
  );
}
