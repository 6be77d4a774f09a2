// Twelfth round of hostile inputs (the probe's findings): `compact --fresh-files` on a
// transcript whose agent read a path that is now a FIFO or a device no longer hangs (a FIFO
// blocked the open, and with it the worker's exit: Ctrl-C and SIGTERM could not stop the CLI)
// nor reads /dev/zero until 2 GB; only a regular file's head is read, anything else restores
// the content as last seen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../pkg/cli.mjs', import.meta.url));

// A session whose agent read each of `paths` in full (Claude Code's Read result lines).
function transcript(paths) {
  const lines = [];
  let parent = null;
  const add = (o) => {
    const uuid = `00000000-0000-4000-8000-${String(lines.length + 1).padStart(12, '0')}`;
    lines.push({ parentUuid: parent, isSidechain: false, sessionId: 's1', cwd: '/tmp', timestamp: new Date(1e12 + lines.length * 1000).toISOString(), uuid, ...o });
    parent = uuid;
  };
  add({ type: 'user', message: { role: 'user', content: 'look at the files and fix the failing tests' } });
  paths.forEach((path, t) => {
    const usage = { input_tokens: 10, cache_read_input_tokens: 1000 + t * 600, output_tokens: 100 };
    add({ type: 'assistant', message: { model: 'claude-sonnet-4-5-20250929', id: `msg_${t}`, type: 'message', role: 'assistant', content: [{ type: 'text', text: `Reading ${path}. ${'analysis '.repeat(200)}` }, { type: 'tool_use', id: `toolu_${t}`, name: 'Read', input: { file_path: path } }], stop_reason: 'tool_use', usage } });
    const body = `as read ${t} `.repeat(50);
    add({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${t}`, content: body }] }, toolUseResult: { type: 'text', file: { filePath: path, content: body, numLines: 1, startLine: 1, totalLines: 1 } } });
  });
  add({ type: 'assistant', message: { model: 'claude-sonnet-4-5-20250929', id: 'msg_end', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn', usage: { input_tokens: 10, cache_read_input_tokens: 9000, output_tokens: 10 } } });
  return lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
}

// Runs the CLI; SIGKILL after `ms` (the frozen package hung here for good).
function run(args, ms) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}

test('compact --fresh-files: a FIFO or a device named by the transcript restores the content as last read (no hang), a regular file its content now', { skip: process.platform === 'win32' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cc-fresh-'));
  try {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const plain = join(dir, 'plain.txt');
    writeFileSync(plain, '\ufeffnow on disk\n');
    const input = join(dir, 's.jsonl');
    writeFileSync(input, transcript([fifo, '/dev/zero', plain]));
    const out = join(dir, 'o.jsonl');
    const r = await run(['compact', input, '--offline', '--fresh-files', '-o', out], 20000);
    assert.equal(r.signal, null, `killed after 20 s: ${r.stderr}`);
    assert.equal(r.code, 0, r.stderr);
    const restored = new Map(
      readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.attachment?.type === 'restored_file').map((l) => [l.attachment.path, l.attachment.content]),
    );
    assert.match(restored.get(fifo), /^as read 0 /);
    assert.match(restored.get('/dev/zero'), /^as read 1 /);
    assert.equal(restored.get(plain), '\ufeffnow on disk\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
