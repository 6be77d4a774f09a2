// Eleventh round of hostile inputs (the probe's H1–H4): the chat route refuses a new message
// that is not a UIMessage instead of storing it (which broke the chat for good); the SDK tool
// loops answer every tool call, whatever the tool threw or returned, and never run a member
// every object inherits as a tool; the command line answers a failed write to stdout (a closed
// pipe, a full disk) or a transcript too large to read without a crash; a sparse array with a
// huge `length` in a Responses reasoning item is refused before it is walked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { createChatHandler, memoryChatStore } from '../../pkg/agents/ai-sdk.js';
import { runToolLoop } from '../../pkg/agents/anthropic.js';
import { runChatToolLoop } from '../../pkg/agents/openai.js';
import { Compactor, microCompact, offlineSummarizer, stripImagesFromMessages, tokenCountWithEstimation, validateForApi } from '../../pkg/node.js';

const CLI = fileURLToPath(new URL('../../pkg/cli.mjs', import.meta.url));
const summarize = async () => ({ content: [{ type: 'text', text: '<summary>s</summary>' }] });

// ---- the chat route ---------------------------------------------------------------------

const usage = { inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } };
const okModel = () =>
  new MockLanguageModelV3({
    modelId: 'gpt-4.1',
    doStream: async () => ({
      stream: simulateReadableStream({
        chunks: [
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'ok' },
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage },
        ],
      }),
    }),
  });
const post = (handler, body) => handler(new Request('http://x/api/chat', { method: 'POST', body: JSON.stringify(body) }));
const textMessage = (id, text, role = 'user') => ({ id, role, parts: [{ type: 'text', text }] });

test('chat route: a new message that is not a UIMessage answers 400 and is not stored; the chat goes on (H1)', async () => {
  for (const [name, bad, where] of [
    ['a text part whose text is a number', { id: 'b', role: 'user', parts: [{ type: 'text', text: 5 }] }, 'body.message.parts[0]'],
    ['a null part', { id: 'b', role: 'user', parts: [null] }, 'body.message.parts[0]'],
    ['an unknown role', { id: 'b', role: 'bogus', parts: [{ type: 'text', text: 'hi' }] }, 'body.message.role'],
  ]) {
    const store = memoryChatStore();
    await store.save('c', [textMessage('u0', 'hello'), textMessage('a0', 'hi', 'assistant')]);
    const POST = createChatHandler({ model: okModel(), summarize: offlineSummarizer(), store });
    // Before: 200 with an error in the stream, the message stored (3 messages), and every later
    // request of the chat failed on it.
    const res = await post(POST, { id: 'c', message: bad });
    assert.equal(res.status, 400, name);
    const { error } = await res.json();
    assert.equal(error.code, 'INVALID_REQUEST', name);
    assert.ok(error.message.startsWith(`${where}: not a UIMessage`), `${name}: ${error.message}`);
    assert.equal((await store.load('c')).length, 2, name);
    const next = await (await post(POST, { id: 'c', message: textMessage('u1', 'next question') })).text();
    assert.match(next, /"type":"text-delta"/, name);
    assert.deepEqual((await store.load('c')).map((m) => m.id).slice(0, 3), ['u0', 'a0', 'u1'], name);
  }
});

test('chat route: a new chat whose messages hold one that is not a UIMessage is refused, naming it (H1)', async () => {
  const store = memoryChatStore();
  const POST = createChatHandler({ model: okModel(), summarize: offlineSummarizer(), store });
  const res = await post(POST, { id: 'n', messages: [textMessage('u0', 'hello'), { id: 'u1', role: 'user', parts: ['hi'] }] });
  assert.equal(res.status, 400);
  assert.match((await res.json()).error.message, /^body\.messages\[1\]\.parts\[0\]: not a UIMessage/);
  assert.equal(await store.load('n'), null);
  // With a stored chat only the new (last) message is read: the page's older copy is not.
  await store.save('s', [textMessage('u0', 'hello'), textMessage('a0', 'hi', 'assistant')]);
  const ok = await post(POST, { id: 's', messages: [{ id: 'u0', role: 'user', parts: [] }, textMessage('a0', 'hi', 'assistant'), textMessage('u1', 'more')] });
  assert.equal(ok.status, 200);
  assert.match(await ok.text(), /"type":"text-delta"/);
});

// ---- the SDK tool loops -----------------------------------------------------------------

/** An Anthropic client whose first reply calls `name`, the second ends the turn. */
function anthropicClient(name, input = { path: '/etc/hosts' }) {
  const sent = [];
  let n = 0;
  const client = {
    messages: {
      create: async (body) => {
        sent.push(body);
        return ++n === 1
          ? { id: 'm1', role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name, input }], stop_reason: 'tool_use', usage: { input_tokens: 10, output_tokens: 2 } }
          : { id: 'm2', role: 'assistant', content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn', usage: { input_tokens: 12, output_tokens: 2 } };
      },
    },
  };
  return { client, sent };
}

/** An OpenAI client whose first completion calls `name`, the second answers. */
function openaiClient(name) {
  let n = 0;
  return {
    chat: {
      completions: {
        create: async () =>
          ++n === 1
            ? { id: 'c1', choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'call1', type: 'function', function: { name, arguments: '{"path":"/etc/hosts"}' } }] } }] }
            : { id: 'c2', choices: [{ message: { role: 'assistant', content: 'done' } }] },
      },
    },
  };
}

async function anthropicToolResult(name, tools) {
  const { client, sent } = anthropicClient(name);
  const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize });
  compactor.push({ role: 'user', content: 'go' });
  await runToolLoop({ client, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 100 }, tools });
  assert.equal(validateForApi(compactor.messages).valid, true);
  return sent[1].messages.at(-1).content[0];
}

async function openaiToolMessage(name, tools) {
  const r = await runChatToolLoop({ client: openaiClient(name), messages: [{ role: 'user', content: 'go' }], request: { model: 'gpt-4.1' }, tools, summarize });
  return r.messages.find((m) => m.role === 'tool');
}

test('tool loops: a tool that throws a value with no text is answered as an error; the loop goes on (H2)', async () => {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  for (const [name, thrown] of [
    ['a null-prototype object', () => Object.create(null)],
    ['an Error whose message getter throws', () => Object.defineProperty(new Error('x'), 'message', { get() { throw new Error('getter'); } })],
    ['a revoked Proxy', () => revoked.proxy],
  ]) {
    const tool = () => {
      throw thrown();
    };
    // Before: both loops rejected with an uncoded TypeError, and runToolLoop left its
    // Compactor holding the tool_use with no result (a conversation the API refuses).
    const result = await anthropicToolResult('t', { t: tool });
    assert.equal(result.is_error, true, name);
    assert.equal(typeof result.content, 'string', name);
    const message = await openaiToolMessage('t', { t: tool });
    assert.match(message.content, /^Error: the tool threw/, name);
  }
  // An ordinary throw keeps its message.
  const plain = await anthropicToolResult('t', { t: () => Promise.reject(new Error('disk full')) });
  assert.deepEqual([plain.is_error, plain.content], [true, 'disk full']);
});

test('tool loops: a name every object inherits is no tool; a class instance\'s methods are (H3)', async () => {
  for (const name of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__']) {
    // Before: `constructor` answered as a success echoing the input, `toString` "[object Undefined]".
    const result = await anthropicToolResult(name, { read: () => 'r' });
    assert.deepEqual([result.is_error, result.content], [true, `no tool named "${name}"`]);
    const message = await openaiToolMessage(name, { read: () => 'r' });
    assert.equal(message.content, `Error: no tool named "${name}"`);
  }
  class Tools {
    read(input) {
      return `read ${input.path}`;
    }
  }
  assert.equal((await anthropicToolResult('read', new Tools())).content, 'read /etc/hosts');
  assert.equal((await openaiToolMessage('read', new Tools())).content, 'read /etc/hosts');
  // The caller's own tool of that name runs.
  assert.equal((await anthropicToolResult('toString', { toString: () => 'mine' })).content, 'mine');
});

test('tool loops: a tool answer with no JSON form is answered as an error, never a message without content (H3)', async () => {
  for (const [what, value] of [['a function', () => 1], ['a Symbol', Symbol('s')]]) {
    // Before: runChatToolLoop sent a `tool` message without `content` (the API requires it).
    const message = await openaiToolMessage('t', { t: () => value });
    assert.equal(message.content, `Error: the tool returned ${what}, which has no JSON form`);
    const result = await anthropicToolResult('t', { t: () => value });
    assert.deepEqual([result.is_error, result.content], [true, `the tool returned ${what}, which has no JSON form`]);
  }
  assert.equal((await openaiToolMessage('t', { t: () => undefined })).content, 'null');
});

// ---- the command line -------------------------------------------------------------------

/** Runs `bash -c script` (the CLI is `$CLI`, the transcript `$FILE`); resolves with its output. */
function sh(script, env) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', () => resolve(out));
  });
}

test('CLI: a failed write to stdout is an unwritable output (exit 2), a closed pipe after a report ends quietly (H4)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cc-h11-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // A transcript whose output is larger than a pipe's buffer.
  const lines = [];
  let parent = null;
  for (let i = 0; i < 60; i++) {
    for (const [type, message] of [
      ['user', { role: 'user', content: `question ${i} ${'x'.repeat(4000)}` }],
      ['assistant', { model: 'claude-sonnet-4-5', id: `msg_${i}`, type: 'message', role: 'assistant', content: [{ type: 'text', text: `answer ${i}` }], stop_reason: 'end_turn', usage: { input_tokens: 1000 * i + 10, output_tokens: 5 } }],
    ]) {
      const uuid = `00000000-0000-4000-8000-${String(lines.length).padStart(12, '0')}`;
      lines.push(JSON.stringify({ parentUuid: parent, isSidechain: false, type, message, uuid, sessionId: 's', timestamp: '2026-11-20T10:00:00.000Z' }));
      parent = uuid;
    }
  }
  const file = join(dir, 's.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  const env = { CLI, FILE: file };
  const cases = [
    // Before: each crashed with Node's "Unhandled 'error' event" and a stack trace, exit 1.
    ['compact -o - | head -c 100', 'node "$CLI" compact "$FILE" -o - --offline 2>"$FILE.err" | head -c 100 >/dev/null; echo "rc=${PIPESTATUS[0]}"; cat "$FILE.err"', 2, /cannot write -: .*EPIPE/],
    ['analyze --json | head -c 10', 'node "$CLI" analyze "$FILE" --json 2>"$FILE.err" | head -c 10 >/dev/null; echo "rc=${PIPESTATUS[0]}"; cat "$FILE.err"', 0, /^$/],
  ];
  if (process.platform === 'linux') {
    cases.push(
      ['compact -o - > /dev/full', 'node "$CLI" compact "$FILE" -o - --offline >/dev/full 2>"$FILE.err"; echo "rc=$?"; cat "$FILE.err"', 2, /cannot write -: ENOSPC/],
      ['analyze > /dev/full', 'node "$CLI" analyze "$FILE" >/dev/full 2>"$FILE.err"; echo "rc=$?"; cat "$FILE.err"', 2, /^context-compaction: cannot write the report to stdout: ENOSPC/],
    );
  }
  for (const [name, script, code, message] of cases) {
    const out = await sh(script, env);
    const rc = Number(out.match(/^rc=(\d+)\n/)?.[1]);
    const err = out.replace(/^rc=\d+\n/, '').trim();
    assert.equal(rc, code, `${name}: ${out}`);
    assert.match(err, message, name);
    assert.doesNotMatch(err, /Unhandled 'error' event|\n\s+at /, name);
  }
});

test('CLI: a transcript larger than a JavaScript string holds is an unreadable input, exit 2 (H6)', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cc-h11-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // A sparse 600 MB file (no disk space used): more than the 0x1fffffe8 characters of a string.
  const file = join(dir, 'huge.jsonl');
  const fd = openSync(file, 'w');
  ftruncateSync(fd, 600 * 1024 * 1024);
  closeSync(fd);
  // Before: "unexpected failure: Error: Cannot create a string longer than 0x1fffffe8
  // characters" with a stack trace, exit 1.
  const out = await sh('node "$CLI" analyze "$FILE"; echo "rc=$?"', { CLI, FILE: file });
  assert.match(out, /^context-compaction: cannot read transcript .*huge\.jsonl: 629,145,600 bytes is more text than a JavaScript string holds/);
  assert.match(out, /\nrc=2\n$/);
  assert.doesNotMatch(out, /unexpected failure|\n\s+at /);
});

test('a reasoning item\'s summary or content that is a sparse array with a huge length is refused at once (H7)', () => {
  const huge = () => {
    const a = [];
    a.length = 2 ** 32 - 1;
    return a;
  };
  for (const [name, messages] of [
    ['Responses summary', [{ role: 'user', content: 'q' }, { type: 'reasoning', id: 'rs', summary: huge() }]],
    ['Responses content', [{ role: 'user', content: 'q' }, { type: 'reasoning', id: 'rs', summary: [], content: huge() }]],
    ['LangChain response_metadata.output', [{ type: 'human', content: 'q' }, { type: 'ai', content: 'a', response_metadata: { output: huge() } }]],
  ]) {
    // Before: each index walked, 132 s for the count of the Responses summary.
    assert.throws(() => tokenCountWithEstimation(messages), (e) => e.code === 'INVALID_MESSAGE' && /more than 1048576: a sparse array/.test(e.message), name);
    // The others refuse it the same way, or do not read it (microCompact): at once either way.
    for (const [fn, f] of [['validate', validateForApi], ['strip', stripImagesFromMessages], ['micro', (m) => microCompact(m, { keepRecent: 0 })]]) {
      const t0 = performance.now();
      try {
        f(messages);
      } catch (e) {
        assert.equal(e.code, 'INVALID_MESSAGE', `${name} ${fn}`);
      }
      assert.ok(performance.now() - t0 < 2000, `${name} ${fn}: ${performance.now() - t0} ms`);
    }
  }
});
