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

import { createReadStream, existsSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const WWW = fileURLToPath(new URL('./', import.meta.url));
const ROOT = resolve(WWW, '..');
const PKG = join(ROOT, 'pkg');
const TRANSCRIPTS = resolve(process.env.TRANSCRIPTS_DIR ?? join(ROOT, '..', 'shared', 'transcripts'));

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
    if (file !== resolve(base) && !file.startsWith(resolve(base) + sep)) return null;
    return file;
  }
  return null;
}

/** The demo list: the `.jsonl` files of the transcripts directory with their sizes. */
function transcriptIndex() {
  if (!existsSync(TRANSCRIPTS)) return [];
  try {
    return readdirSync(TRANSCRIPTS)
      .filter((name) => name.endsWith('.jsonl'))
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
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
  res.end(head ? undefined : body);
}

/**
 * Handles one request.
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 */
function handle(req, res) {
  const head = req.method === 'HEAD';
  if (req.method !== 'GET' && !head) {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
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
      file = join(file, 'index.html');
      stat = statSync(file);
    }
    if (!stat.isFile()) throw new Error('not a file');
  } catch {
    const hint = url.pathname.startsWith('/pkg/') ? ' (build the package first: bash scripts/build.sh)' : '';
    send(res, 404, 'text/plain; charset=utf-8', `not found: ${url.pathname}${hint}\n`, head);
    return;
  }
  res.writeHead(200, {
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': stat.size,
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
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
 * Starts the server; resolves with `{server, url}`.
 * @param {{port?: number, host?: string}} [options]
 * @returns {Promise<{server: import('node:http').Server, url: string}>}
 */
export function startServer({ port = 8080, host = '127.0.0.1' } = {}) {
  const server = createServer(handle);
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      const { port: actual } = /** @type {import('node:net').AddressInfo} */ (server.address());
      ok({ server, url: `http://${host}:${actual}/` });
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
