// The command line's safety (issue 13, items 2, 3, 5, 9, 14): what `compact -o PATH` may
// replace and how (regular files atomically, through symlinks, with the original's mode;
// devices, FIFOs, sockets and stdout written in place as streams), the in-place check by
// device and inode, Ctrl-C at several points of a compaction of a large generated session
// (exit 130, the original intact, nothing left behind), and control characters from a
// transcript never reaching the terminal raw. Every run is a child process of pkg/cli.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as cc from '../../pkg/node.js';
import { escapeTerminal, jsonForTerminal } from '../../pkg/cli-lib.mjs';

const CLI = fileURLToPath(new URL('../../pkg/cli.mjs', import.meta.url));
// A short session whose compaction shrinks it (tests/fixtures/README.md). The shared
// cc_small_short.jsonl is smaller than any summary of it: compacting it is refused
// (COMPACTION_NOT_SMALLER).
const SMALL = fileURLToPath(new URL('../fixtures/short_session.jsonl', import.meta.url));

/** The child's environment: no API key or compaction settings from the outside. */
function childEnv() {
  const env = { ...process.env };
  for (const k of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'DISABLE_COMPACT', 'DISABLE_AUTO_COMPACT', 'CLAUDE_AUTOCOMPACT_PCT_OVERRIDE', 'CLAUDE_CODE_AUTO_COMPACT_WINDOW']) {
    delete env[k];
  }
  return env;
}

/**
 * Runs the CLI (under `sh -c 'umask U; exec node cli.mjs …'` when `umask` is given) without
 * blocking this process; `onStderr(text so far, child)` sees stderr as it comes. Resolves with
 * `{code, signal, out (Buffer), err}`.
 */
function cli(args, { umask, onStderr, onSpawn, cwd = tmpdir() } = {}) {
  return new Promise((resolve, reject) => {
    const [cmd, argv] =
      umask === undefined ? [process.execPath, [CLI, ...args]] : ['/bin/sh', ['-c', `umask ${umask}; exec "$0" "$@"`, process.execPath, CLI, ...args]];
    const child = spawn(cmd, argv, { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    onSpawn?.(child);
    const out = [];
    let err = '';
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.setEncoding('utf8').on('data', (d) => {
      err += d;
      onStderr?.(err, child);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out: Buffer.concat(out), err });
    });
  });
}

/** Resolves once process `pid` catches signal `sig` (Linux: SigCgt of /proc/PID/status). */
async function untilCatches(pid, sig) {
  for (let k = 0; k < 2_000; k++) {
    try {
      const m = /^SigCgt:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m && (BigInt('0x' + m[1]) >> BigInt(sig - 1)) & 1n) return;
    } catch {
      return; // gone already
    }
    await new Promise((ok) => setTimeout(ok, 5));
  }
}

function tempDir(t) {
  const dir = mkdtempSync(join(tmpdir(), 'cc-cli-safety-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const sha = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');
const mode = (file) => statSync(file).mode & 0o777;
const tmpFiles = (dir) => readdirSync(dir).filter((n) => n.endsWith('.tmp'));

/** What compacting SMALL offline writes to a regular file: the reference output. */
async function reference(t) {
  const dir = tempDir(t);
  const r = await cli(['compact', SMALL, '-o', join(dir, 'ref.jsonl')]);
  assert.equal(r.code, 0, r.err);
  return readFileSync(join(dir, 'ref.jsonl'));
}

/**
 * `got` is a whole compaction of SMALL like `ref`: the same size (the new lines differ only in
 * their fresh uuids and timestamps), SMALL's bytes first, then a boundary and a summary.
 */
function assertLikeReference(got, ref, what) {
  const small = readFileSync(SMALL);
  assert.equal(got.length, ref.length, `${what}: the whole output`);
  assert.ok(got.subarray(0, small.length).equals(small), `${what}: the original lines first, byte for byte`);
  const fresh = cc.parseTranscript(got.subarray(small.length).toString('utf8'));
  assert.equal(fresh[0].subtype, 'compact_boundary', what);
  assert.equal(fresh[1].isCompactSummary, true, what);
}

// ---- What -o may replace ----------------------------------------------------------------------------

test('-o /dev/null: written in place as a stream, the device node stays (never renamed over)', async () => {
  const before = lstatSync('/dev/null');
  const r = await cli(['compact', SMALL, '-o', '/dev/null']);
  assert.equal(r.code, 0, r.err);
  const after = lstatSync('/dev/null');
  assert.ok(after.isCharacterDevice(), '/dev/null is still a character device');
  assert.equal(after.ino, before.ino);
  assert.equal(after.rdev, before.rdev);
  assert.deepEqual(tmpFiles('/dev'), [], 'no temporary file in /dev');
  assert.match(r.out.toString(), /written\s+\/dev\/null: /);
});

test('-o - and -o /dev/stdout: the transcript on stdout (a pipe), the report on stderr', async (t) => {
  const ref = await reference(t);
  for (const o of ['-', '/dev/stdout']) {
    const r = await cli(['compact', SMALL, '-o', o]);
    assert.equal(r.code, 0, `${o}: ${r.err}`);
    assertLikeReference(r.out, ref, o);
    assert.match(r.err, /tokens after/);
  }
});

test('-o FIFO: written in place to the reader, the FIFO stays a FIFO', async (t) => {
  const dir = tempDir(t);
  const fifo = join(dir, 'pipe');
  const mk = spawn('mkfifo', [fifo]);
  await new Promise((ok) => mk.on('close', ok));
  assert.ok(lstatSync(fifo).isFIFO());
  const ref = await reference(t);
  const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
  const got = [];
  reader.stdout.on('data', (d) => got.push(d));
  const readerDone = new Promise((ok) => reader.on('close', ok));
  const r = await cli(['compact', SMALL, '-o', fifo]);
  await readerDone;
  assert.equal(r.code, 0, r.err);
  assertLikeReference(Buffer.concat(got), ref, 'FIFO');
  assert.ok(lstatSync(fifo).isFIFO(), 'still a FIFO');
  assert.deepEqual(readdirSync(dir), ['pipe'], 'no temporary file');
});

test('-o SOCKET: a Unix socket is connected to and written to as a stream', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, 'sock');
  const got = [];
  let closed;
  const closedP = new Promise((ok) => (closed = ok));
  const server = createServer((s) => {
    s.on('data', (d) => got.push(d));
    s.on('end', () => closed());
  });
  await new Promise((ok) => server.listen(path, ok));
  t.after(() => server.close());
  const ref = await reference(t);
  const r = await cli(['compact', SMALL, '-o', path]);
  assert.equal(r.code, 0, r.err);
  await closedP;
  assertLikeReference(Buffer.concat(got), ref, 'socket');
  assert.ok(lstatSync(path).isSocket(), 'still a socket');
});

test('-o LINK: the symlink stays, its target is replaced; a dangling link gets its target created', async (t) => {
  const dir = tempDir(t);
  const ref = await reference(t);
  const target = join(dir, 'target.jsonl');
  writeFileSync(target, 'old\n');
  symlinkSync('target.jsonl', join(dir, 'link.jsonl'));
  const r = await cli(['compact', SMALL, '-o', join(dir, 'link.jsonl')]);
  assert.equal(r.code, 0, r.err);
  assert.ok(lstatSync(join(dir, 'link.jsonl')).isSymbolicLink(), 'the link itself is not replaced');
  assert.equal(readlinkSync(join(dir, 'link.jsonl')), 'target.jsonl');
  assertLikeReference(readFileSync(target), ref, 'written through the link');

  symlinkSync('created.jsonl', join(dir, 'dangling.jsonl'));
  const d = await cli(['compact', SMALL, '-o', join(dir, 'dangling.jsonl')]);
  assert.equal(d.code, 0, d.err);
  assert.ok(lstatSync(join(dir, 'dangling.jsonl')).isSymbolicLink());
  assertLikeReference(readFileSync(join(dir, 'created.jsonl')), ref, 'dangling link');
  assert.deepEqual(readdirSync(dir).sort(), ['created.jsonl', 'dangling.jsonl', 'link.jsonl', 'target.jsonl']);
});

test('modes: a private (0600) input gives a 0600 output; otherwise the umask; a replaced file keeps its mode', async (t) => {
  const dir = tempDir(t);
  const priv = join(dir, 'private.jsonl');
  writeFileSync(priv, readFileSync(SMALL));
  chmodSync(priv, 0o600);
  const a = await cli(['compact', priv, '-o', join(dir, 'a.jsonl')], { umask: '000' });
  assert.equal(a.code, 0, a.err);
  assert.equal(mode(join(dir, 'a.jsonl')).toString(8), '600', 'private input → private output, whatever the umask');

  const pub = join(dir, 'public.jsonl');
  writeFileSync(pub, readFileSync(SMALL));
  chmodSync(pub, 0o644);
  const b = await cli(['compact', pub, '-o', join(dir, 'b.jsonl')], { umask: '027' });
  assert.equal(b.code, 0, b.err);
  assert.equal(mode(join(dir, 'b.jsonl')).toString(8), '640', '0666 & ~027');

  const existing = join(dir, 'existing.jsonl');
  writeFileSync(existing, 'old\n');
  chmodSync(existing, 0o604);
  const c = await cli(['compact', pub, '-o', existing], { umask: '077' });
  assert.equal(c.code, 0, c.err);
  assert.equal(mode(existing).toString(8), '604', 'the replaced file keeps its mode');

  // In place: a 0600 session compacted into itself stays 0600.
  const d = await cli(['compact', priv, '-o', priv], { umask: '000' });
  assert.equal(d.code, 0, d.err);
  assert.equal(mode(priv).toString(8), '600');
  assert.ok(readFileSync(priv).subarray(0, statSync(SMALL).size).equals(readFileSync(SMALL)), 'the original lines first');
  assert.deepEqual(tmpFiles(dir), []);
});

test('the in-place check compares the files (device and inode), not the path strings', async (t) => {
  const dir = tempDir(t);
  const session = join(dir, 'session.jsonl');
  writeFileSync(session, readFileSync(SMALL));
  symlinkSync('session.jsonl', join(dir, 'alias.jsonl'));
  linkSync(session, join(dir, 'hard.jsonl'));
  const original = sha(session);
  for (const o of [join(dir, 'sub', '..', 'session.jsonl'), join(dir, 'alias.jsonl'), join(dir, 'hard.jsonl'), 'session.jsonl']) {
    const r = await cli(['compact', session, '-o', o, '--no-history'], { cwd: dir });
    assert.equal(r.code, 2, `${o}: ${r.err}`);
    assert.match(r.err, /refusing to replace the session file/);
    assert.equal(sha(session), original, `${o}: the session is untouched`);
  }
  // Through the symlink, without --no-history: appended in place; the link stays a link.
  const r = await cli(['compact', join(dir, 'alias.jsonl'), '-o', join(dir, 'alias.jsonl')]);
  assert.equal(r.code, 0, r.err);
  assert.ok(lstatSync(join(dir, 'alias.jsonl')).isSymbolicLink());
  const after = readFileSync(session);
  assert.ok(after.subarray(0, statSync(SMALL).size).equals(readFileSync(SMALL)));
  assert.equal(cc.parseTranscript(after.toString('utf8')).at(-2).subtype, 'compact_boundary');
  assert.deepEqual(tmpFiles(dir), []);
});

// ---- Ctrl-C ----------------------------------------------------------------------------------------

/**
 * A large session: `turns` rounds of a user request, a Read call and its result of `size`
 * characters, with usage that grows like a real session's (so the compaction is worth it).
 */
function generateSession(file, turns, size) {
  const sessionId = '0b7e1c2a-1111-4222-8333-944455556666';
  const common = { isSidechain: false, userType: 'external', cwd: '/work/p', sessionId, version: '2.1.38', timestamp: '2026-01-01T00:00:00.000Z' };
  const words = 'the parser reads each line keeps unknown types and groups responses by id ';
  const body = (i) => `file ${i}\n` + words.repeat(Math.ceil(size / words.length)).slice(0, size);
  const out = [];
  let parent = null;
  for (let i = 0; i < turns; i++) {
    const u = `u-${i}`;
    const a = `a-${i}`;
    const r = `r-${i}`;
    out.push({ ...common, parentUuid: parent, uuid: u, type: 'user', message: { role: 'user', content: `Step ${i}: read src/file${i}.txt and tell me what it does.` } });
    out.push({
      ...common,
      parentUuid: u,
      uuid: a,
      type: 'assistant',
      message: {
        id: `msg_${i}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { file_path: `/work/p/src/file${i}.txt` } }],
        stop_reason: 'tool_use',
        usage: { input_tokens: Math.round((i * (size + 400)) / 4), output_tokens: 30, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
      },
    });
    const text = body(i);
    out.push({
      ...common,
      parentUuid: a,
      uuid: r,
      type: 'user',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: text }] },
      toolUseResult: { type: 'text', file: { filePath: `/work/p/src/file${i}.txt`, content: text, numLines: 2, startLine: 1, totalLines: 2 } },
    });
    parent = r;
  }
  writeFileSync(file, out.map((l) => JSON.stringify(l)).join('\n') + '\n');
}

/**
 * Compacts `session` in place (-o the session itself, the worst case: the original must stay
 * intact) and sends SIGINT when stderr's progress shows `when` (a RegExp), after `delayMs`.
 * Returns the run and whether the signal was sent.
 */
async function interruptedRun(session, when, delayMs = 0) {
  let sent = false;
  const r = await cli(['compact', session, '-o', session, '--progress'], {
    onStderr: (err, child) => {
      if (!sent && when.test(err)) {
        sent = true;
        setTimeout(() => child.kill('SIGINT'), delayMs);
      }
    },
  });
  return { ...r, sent };
}

test('Ctrl-C at several points of a compaction of a large generated session: exit 130, the original intact, nothing left behind', async (t) => {
  const dir = tempDir(t);
  const session = join(dir, 'big.jsonl');
  generateSession(session, 1500, 16_000); // ≈ 30 MB, ≈ 6 million tokens
  chmodSync(session, 0o600);
  const original = sha(session);
  const size = statSync(session).size;
  assert.ok(size > 25_000_000, `${size} bytes`);

  // While the library loads, before any progress: right after the child starts.
  {
    let child;
    const run = cli(['compact', session, '-o', session, '--progress'], { onSpawn: (c) => (child = c) });
    // As soon as the CLI's code runs: its SIGINT handler is installed (SigCgt in
    // /proc/PID/status). A fixed delay is not enough: under load Node may not have started,
    // and where the test runs in the background SIGINT is ignored until a handler exists.
    await untilCatches(child.pid, 2);
    child.kill('SIGINT');
    const r = await run;
    // Exit 130 from the CLI's own handler; if Node itself had not started running the CLI yet,
    // the default action ends it by the signal: nothing was read or written either way.
    assert.ok(r.code === 130 || r.signal === 'SIGINT', `at start: code ${r.code} signal ${r.signal}\n${r.err}`);
    assert.equal(sha(session), original, 'at start: the original is intact');
    assert.deepEqual(readdirSync(dir), ['big.jsonl'], 'at start: nothing left behind');
  }

  // At the start of the compaction (transcript read and parsed), and in the middle of its
  // work: as the summary request is sent (a fixed delay after an earlier line would land
  // after the end once the compaction is fast enough; the summary request, its answer, the
  // restoration and the hooks still follow this line).
  for (const [name, when, delay] of [
    ['compaction started', /progress: starting/, 0],
    ['PreCompact hooks', /progress: PreCompact hooks/, 0],
    ['mid-compaction', /progress: summarizing/, 0],
  ]) {
    const r = await interruptedRun(session, when, delay);
    assert.ok(r.sent, `${name}: the progress line was seen\n${r.err}`);
    assert.equal(r.code, 130, `${name}: exit 130\n${r.err}`);
    assert.match(r.err, /interrupted: nothing was written/);
    assert.equal(sha(session), original, `${name}: the original is intact`);
    assert.equal(mode(session).toString(8), '600', `${name}: its mode too`);
    assert.deepEqual(readdirSync(dir), ['big.jsonl'], `${name}: nothing left behind`);
  }

  // While the output is written: interrupted (exit 130, nothing changed) unless the write had
  // already completed (exit 0 with the whole output): never anything in between.
  const w = await interruptedRun(session, /progress: writing the output/, 0);
  assert.ok(w.sent, w.err);
  t.diagnostic(`SIGINT during the write: exit ${w.code}`);
  if (w.code === 130) {
    assert.equal(sha(session), original, 'during the write: the original is intact');
  } else {
    assert.equal(w.code, 0, `during the write: 130 or a complete success\n${w.err}`);
    const text = readFileSync(session, 'utf8');
    assert.equal(cc.parseTranscript(text.slice(size)).at(0).subtype, 'compact_boundary', 'the complete output');
  }
  assert.deepEqual(readdirSync(dir), ['big.jsonl'], 'during the write: nothing left behind');
});

test('Ctrl-C while blocked writing to a FIFO nobody reads: exit 130, nothing left behind', async (t) => {
  const dir = tempDir(t);
  const fifo = join(dir, 'pipe');
  const mk = spawn('mkfifo', [fifo]);
  await new Promise((ok) => mk.on('close', ok));
  let sent = false;
  const r = await cli(['compact', SMALL, '-o', fifo, '--progress'], {
    onStderr: (err, child) => {
      if (!sent && /progress: writing the output/.test(err)) {
        sent = true;
        setTimeout(() => child.kill('SIGINT'), 300);
      }
    },
  });
  assert.ok(sent, r.err);
  assert.equal(r.code, 130, r.err);
  assert.deepEqual(readdirSync(dir), ['pipe']);
  assert.ok(lstatSync(fifo).isFIFO());
});

// ---- Control characters from a transcript ------------------------------------------------------------

const HOSTILE = [
  '\x1b]52;c;ZWNobyBwd25lZA==\x07', // OSC 52: write the clipboard
  '\x1b]0;pwned title\x07', // retitle the window
  '\x1b[2J\x1b[H', // clear the screen, cursor home
  '\x9b2J', // CSI in its 8-bit (C1) form
  '\r\b\x7f', // overwrite what was printed
  '\u202e', // right-to-left override
].join('');
/** Raw control characters a report must never contain (newline and tab allowed). */
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

test('escapeTerminal / jsonForTerminal: every control character made visible; JSON still parses to the same value', () => {
  const s = `model ${HOSTILE} end\n\ttab`;
  const e = escapeTerminal(s);
  assert.doesNotMatch(e, RAW_CONTROL);
  assert.match(e, /\\x1b\]52;c;/);
  assert.match(e, /\\u009b2J/);
  assert.match(e, /\\u202e/);
  assert.ok(e.endsWith(' end\n\ttab'), 'newline and tab kept');
  const j = jsonForTerminal({ model: s, [HOSTILE]: 1 });
  assert.doesNotMatch(j, RAW_CONTROL);
  assert.deepEqual(JSON.parse(j), { model: s, [HOSTILE]: 1 });
});

test('analyze and compact print a hostile transcript (model name, user message, a path) without raw control characters', async (t) => {
  const dir = tempDir(t);
  const lines = cc.parseTranscript(readFileSync(SMALL, 'utf8'));
  // The model name of every assistant line and a user message carry escapes.
  for (const l of lines) {
    if (l.type === 'assistant' && l.message) l.message.model = `claude-${HOSTILE}`;
  }
  const lastUser = lines.findLastIndex((l) => l.type === 'user' && typeof l.message?.content === 'string');
  const extra = {
    ...lines[lastUser],
    uuid: 'f0000000-0000-4000-8000-000000000001',
    // Written after the last line (under the same parent as that user line it would be a
    // rewind: the conversation resumed would be the one it starts).
    parentUuid: lines.findLast((l) => typeof l.uuid === 'string').uuid,
    message: { role: 'user', content: `please keep ${HOSTILE} this` },
  };
  const session = join(dir, 'hostile.jsonl');
  writeFileSync(session, cc.serializeTranscript([...lines, extra]));
  const a = await cli(['analyze', session]);
  assert.equal(a.code, 0, a.err);
  assert.doesNotMatch(a.out.toString(), RAW_CONTROL);
  assert.match(a.out.toString(), /claude-\\x1b\]52;c;/, 'the model name, escaped');
  const aj = await cli(['analyze', session, '--json']);
  assert.equal(aj.code, 0, aj.err);
  assert.doesNotMatch(aj.out.toString(), RAW_CONTROL);
  assert.equal(JSON.parse(aj.out.toString()).end.model, `claude-${HOSTILE}`, 'the JSON keeps the value');

  const c = await cli(['compact', session, '-o', join(dir, 'out.jsonl'), '--model', `m${HOSTILE}`, '--progress']);
  assert.equal(c.code, 0, c.err);
  assert.doesNotMatch(c.out.toString(), RAW_CONTROL);
  assert.doesNotMatch(c.err, RAW_CONTROL);
  assert.match(c.out.toString(), /model\s+m\\x1b\]52/);
  // The transcript written is data: its bytes are the input's, unescaped.
  assert.ok(readFileSync(join(dir, 'out.jsonl')).subarray(0, statSync(session).size).equals(readFileSync(session)));

  // An error message naming a hostile path.
  const missing = join(dir, `missing${HOSTILE}.jsonl`);
  const m = await cli(['analyze', missing]);
  assert.equal(m.code, 2);
  assert.doesNotMatch(m.err, RAW_CONTROL);
  assert.ok(!existsSync(missing));
});
