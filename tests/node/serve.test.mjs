// The page server (www/serve.mjs) locked down (issue 13, items 6, 7, 8): it answers only the
// loopback Host it listens on (DNS rebinding gets 421), serves a file only when its real path
// lies inside its root (symlinks out refused, and left out of the demo list), and sends a strict
// Content-Security-Policy that the page's meta tag repeats. The server runs as a child process
// (`node www/serve.mjs 0`), as a user starts it, with TRANSCRIPTS_DIR pointing at a temporary
// directory holding the symlinks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { allowedHosts, inlineScriptHashes, pagePolicy, startServer } from '../../www/serve.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let dir;
let outside;
let child;
let port;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cc-serve-'));
  outside = mkdtempSync(join(tmpdir(), 'cc-serve-outside-'));
  writeFileSync(join(outside, 'secret.jsonl'), '{"type":"user","secret":true}\n');
  const transcripts = join(dir, 'transcripts');
  mkdirSync(transcripts);
  writeFileSync(join(transcripts, 'ok.jsonl'), '{"type":"user"}\n');
  symlinkSync(join(outside, 'secret.jsonl'), join(transcripts, 'escape.jsonl')); // a file link out of the root
  symlinkSync(outside, join(transcripts, 'outdir')); // a directory link out of the root
  symlinkSync('ok.jsonl', join(transcripts, 'alias.jsonl')); // a link that stays inside
  symlinkSync(transcripts, join(dir, 'linked-root')); // the root itself reached through a link
  child = spawn(process.execPath, [join(ROOT, 'www', 'serve.mjs'), '0'], {
    env: { ...process.env, TRANSCRIPTS_DIR: join(dir, 'linked-root') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  port = await new Promise((ok, fail) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (m) ok(Number(m[1]));
    });
    child.once('exit', (code) => fail(new Error(`serve.mjs exited with ${code}: ${out}`)));
  });
});

after(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((ok) => child.once('exit', ok));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

/** A GET with the given Host header (null: none); resolves with `{status, headers, body}`. */
function get(path, host = `127.0.0.1:${port}`) {
  return new Promise((ok, fail) => {
    const headers = host === null ? {} : { host };
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', headers, setHost: host !== null }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => (body += d));
      res.on('end', () => ok({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('error', fail);
    req.end();
  });
}

test('Host: the loopback name or address it listens on, with its port; any other name is 421 (DNS rebinding), none is 400', async () => {
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`]) {
    const r = await get('/', host);
    assert.equal(r.status, 200, host);
    assert.match(r.body, /<title>context-compaction/);
  }
  for (const host of [`evil.example:${port}`, `127.0.0.1.evil.example:${port}`, `127.0.0.1:${port + 1}`, '127.0.0.1', `[::1]:${port}`, `localhost.:${port}`]) {
    const r = await get('/transcripts/ok.jsonl', host);
    assert.equal(r.status, 421, host);
    assert.doesNotMatch(r.body, /"type"/, `${host}: nothing served`);
  }
  const none = await get('/', null);
  assert.equal(none.status, 400);
  assert.deepEqual([...allowedHosts('127.0.0.1', 8080)], ['127.0.0.1:8080', 'localhost:8080']);
  assert.deepEqual([...allowedHosts('::1', 8080)], ['[::1]:8080', 'localhost:8080']);
  await assert.rejects(startServer({ port: 0, host: '0.0.0.0' }), { code: 'INVALID_ARGUMENT' });
});

test('files only when their real path lies inside the root: symlinks out are 404 and not listed; links inside and a linked root work', async () => {
  const ok = await get('/transcripts/ok.jsonl');
  assert.equal(ok.status, 200);
  assert.equal(ok.body, '{"type":"user"}\n');
  assert.equal((await get('/transcripts/alias.jsonl')).status, 200, 'a link inside the root');
  for (const path of ['/transcripts/escape.jsonl', '/transcripts/outdir/secret.jsonl', '/transcripts/outdir/', '/transcripts/%2e%2e/%2e%2e/etc/passwd', '/..%2f..%2fetc/passwd']) {
    const r = await get(path);
    assert.equal(r.status, 404, path);
    assert.doesNotMatch(r.body, /"secret":true|root:x:/, path);
  }
  const index = JSON.parse((await get('/transcripts/index.json')).body);
  assert.deepEqual(index.map((f) => f.name), ['alias.jsonl', 'ok.jsonl'], 'links out of the root are not listed');
});

test('a strict CSP on every answer, the same as the page meta tag (plus frame-ancestors); no inline script but the hashed import map', async () => {
  const page = await get('/');
  const csp = page.headers['content-security-policy'];
  const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(page.body)?.[1];
  assert.ok(meta, 'the page has the meta tag');
  assert.equal(csp, `${meta}; frame-ancestors 'none'`);
  const html = readFileSync(join(ROOT, 'www', 'index.html'), 'utf8');
  assert.equal(meta, pagePolicy(inlineScriptHashes(html)), "the meta tag lists the import map's current hash");
  assert.match(csp, /default-src 'none'/);
  assert.doesNotMatch(csp, /'unsafe-inline'|'unsafe-eval'|(^|\s)\*(;|\s|$)/);
  assert.match(csp, /connect-src 'self' https: http:\/\/127\.0\.0\.1:\* http:\/\/localhost:\*; base-uri/);
  // The only inline script is the import map (no event-handler attributes, no inline code).
  const inline = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)].filter((m) => !/\bsrc\s*=/.test(m[1]));
  assert.deepEqual(inline.map((m) => /type="([^"]+)"/.exec(m[1])?.[1]), ['importmap']);
  assert.doesNotMatch(html, /\son[a-z]+\s*=/i, 'no inline event handlers');
  assert.doesNotMatch(html, /\sstyle\s*=/i, 'no inline styles');
  for (const path of ['/app.js', '/transcripts/ok.jsonl', '/nope', '/transcripts/index.json']) {
    const r = await get(path);
    assert.equal(r.headers['content-security-policy'], csp, path);
    assert.equal(r.headers['x-content-type-options'], 'nosniff', path);
  }
  assert.equal((await get('/', `evil.example:${port}`)).headers['content-security-policy'], csp, 'the refusals too');
});
