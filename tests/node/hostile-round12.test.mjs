// Twelfth round of hostile inputs (the probe's findings): `compact --fresh-files` on a
// transcript whose agent read a path that is now a FIFO or a device no longer hangs (a FIFO
// blocked the open, and with it the worker's exit: Ctrl-C and SIGTERM could not stop the CLI)
// nor reads /dev/zero until 2 GB; only a regular file's head is read, anything else restores
// the content as last seen. The summarizers' `timeoutMs` / `idleTimeoutMs` of 0 are no limit
// (as the core's `summaryTimeoutMs: 0`), where every attempt timed out "after 0 ms". An engine
// without WebAssembly (Safari's Lockdown Mode, `node --jitless`) gets a coded NOT_INITIALIZED
// from the Node entry's import, and the inline entry's import no longer throws (its `init()`
// says why), instead of an uncoded `ReferenceError` at import. The agent helpers refuse an
// options object whose reading throws (a getter, a Proxy trap, a revoked Proxy) with
// INVALID_ARGUMENT, where what it threw came through uncoded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anthropicSummarizer } from '../../pkg/anthropic.js';
import { openaiSummarizer } from '../../pkg/openai.js';
import { langchainSummarizer } from '../../pkg/langchain.js';
import { compactionPrepareStep, createChatHandler } from '../../pkg/agents/ai-sdk.js';
import { runToolLoop } from '../../pkg/agents/anthropic.js';
import { runChatToolLoop } from '../../pkg/agents/openai.js';
import { compactionMiddleware } from '../../pkg/agents/langchain.js';

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

test('summarizers: timeoutMs and idleTimeoutMs of 0 are no limit (every attempt timed out after 0 ms)', async () => {
  const request = { model: 'claude-sonnet-4-5', system: 's', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100 };
  const later = (v) => new Promise((r) => setTimeout(() => r(v), 30));
  const json = (body) => async () => later(new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } }));
  const anthropicBody = { id: 'm', type: 'message', role: 'assistant', content: [{ type: 'text', text: '<summary>a</summary>' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } };
  const openaiBody = { id: 'c', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: '<summary>o</summary>' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1 } };
  const chat = { invoke: async () => later({ content: '<summary>l</summary>', response_metadata: {} }) };
  for (const key of ['timeoutMs', 'idleTimeoutMs']) {
    const a = await anthropicSummarizer({ apiKey: 'k', fetch: json(anthropicBody), stream: false, maxRetries: 0, [key]: 0 })(request, {});
    assert.match(JSON.stringify(a), /<summary>a</, key);
    const o = await openaiSummarizer({ apiKey: 'k', fetch: json(openaiBody), stream: false, maxRetries: 0, [key]: 0 })(request, {});
    assert.match(JSON.stringify(o), /<summary>o</, key);
    const l = await langchainSummarizer(chat, { stream: false, maxRetries: 0, [key]: 0 })(request, {});
    assert.match(JSON.stringify(l), /<summary>l</, key);
  }
});

// A child Node: `args` its flags, `code` an ES module; its stdout.
function child(args, code) {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [...args, '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('exit', () => resolve(out.trim()));
  });
}

test('an engine without WebAssembly: the Node entry refuses at import with NOT_INITIALIZED; the inline entry imports, and init() says why', async () => {
  const node = fileURLToPath(new URL('../../pkg/node.js', import.meta.url));
  const count = fileURLToPath(new URL('../../pkg/count-node.js', import.meta.url));
  const inline = fileURLToPath(new URL('../../pkg/inline.js', import.meta.url));
  for (const entry of [node, count]) {
    const out = await child(['--jitless'], `try { await import(${JSON.stringify(entry)}); console.log('imported'); } catch (e) { console.log(e.code + ' ' + /WebAssembly/.test(e.message)); }`);
    assert.equal(out, 'NOT_INITIALIZED true', entry);
  }
  const out = await child(
    [],
    `delete globalThis.WebAssembly;
     const m = await import(${JSON.stringify(inline)});
     const codes = [];
     try { await m.default(); codes.push('init ok'); } catch (e) { codes.push(e.code); }
     try { m.initSync(); codes.push('initSync ok'); } catch (e) { codes.push(e.code); }
     try { m.tokenCountWithEstimation([]); codes.push('count ok'); } catch (e) { codes.push(e.code); }
     console.log(codes.join(' '));`,
  );
  assert.equal(out, 'NOT_INITIALIZED NOT_INITIALIZED NOT_INITIALIZED');
});

test('agent helpers: options whose reading throws are INVALID_ARGUMENT (the thrown value was passed on uncoded)', async () => {
  const trap = () => {
    throw new Error('trap');
  };
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const hostile = [new Proxy({}, { get: trap, ownKeys: trap, has: trap, getOwnPropertyDescriptor: trap }), revoked.proxy, { get summarize() { throw 5; } }, { get model() { throw 5; } }];
  const helpers = { compactionPrepareStep, createChatHandler, runToolLoop, runChatToolLoop, compactionMiddleware };
  for (const [name, f] of Object.entries(helpers)) {
    for (const [i, options] of hostile.entries()) {
      let error;
      try {
        await f(options);
      } catch (e) {
        error = e;
      }
      assert.equal(error?.code, 'INVALID_ARGUMENT', `${name} #${i}: ${error}`);
    }
  }
});
