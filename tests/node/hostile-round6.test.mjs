// Round 6 of hostile inputs (probe: /work/probe-hostile/round6): stream events of the
// Anthropic API whose block index is not a block number (`"__proto__"`, 1e9), a stream line
// longer than a summary answer, a simulated policy whose summary alone fills the threshold,
// and option getters that throw. No assertion here is on time: the quadratic cases are
// checked by counts (characters scanned, compactions made, chunks read).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { createSseParser, MAX_SUMMARY_TEXT, MAX_SUMMARY_BLOCKS } from '../../pkg/http.js';
import { formatSimulation } from '../../pkg/cli-lib.mjs';
import { SONNET } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const conversation = () => {
  const msgs = [];
  for (let i = 0; i < 6; i++) {
    msgs.push({ role: 'user', content: `q${i} ${'x'.repeat(3000)}` });
    msgs.push({ role: 'assistant', content: `a${i} ${'y'.repeat(3000)}` });
  }
  return msgs;
};
const ev = (event, data) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const START = ev('message_start', {
  type: 'message_start',
  message: { id: 'm', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 5, output_tokens: 0 } },
});
const STOP =
  ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } }) +
  ev('message_stop', { type: 'message_stop' });
const streamed = (body) => async () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });

/** The summarizer's error behind a compaction's rejection (its `cause`, else the error). */
async function summarizerError(body) {
  const summarize = cc.anthropicSummarizer({ apiKey: 'sk-test', fetch: streamed(body), maxRetries: 0 });
  try {
    const r = await cc.compactConversation(conversation(), { model: SONNET, summarize });
    return { resolved: r.summary };
  } catch (e) {
    let inner = e;
    while (inner && inner.code !== 'INVALID_RESPONSE' && inner.cause) inner = inner.cause;
    return { outer: e.code, code: inner?.code, message: String(inner?.message) };
  }
}

test('anthropicSummarizer: a block index "__proto__" is INVALID_RESPONSE and writes nothing onto Array.prototype', async () => {
  try {
    for (const type of ['content_block_delta', 'content_block_start']) {
      const event =
        type === 'content_block_delta'
          ? ev(type, { type, index: '__proto__', delta: { type: 'text_delta', text: 'POLLUTED' } }) +
            ev(type, { type, index: '__proto__', delta: { type: 'citations_delta', citation: 'c' } })
          : ev(type, { type, index: '__proto__', content_block: { type: 'text', text: 'POLLUTED' } });
      const body =
        START +
        ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
        ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '<summary>fine</summary>' } }) +
        event +
        STOP;
      const r = await summarizerError(body);
      assert.equal(r.code, 'INVALID_RESPONSE', `${type}: ${JSON.stringify(r)}`);
      assert.match(r.message, /block index/);
      assert.equal([].text, undefined, type);
      assert.equal([].citations, undefined, type);
    }
  } finally {
    delete Array.prototype.text;
    delete Array.prototype.citations;
  }
});

test('anthropicSummarizer: a block index that is not a whole number below the block bound is refused at once', async () => {
  const start = (index) =>
    START + ev('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '<summary>x</summary>' } }) + STOP;
  // 1e9 made a sparse array whose `filter` blocked the event loop for ~25 s (no timeout fires).
  for (const index of [1e9, 4294967294, MAX_SUMMARY_BLOCKS, -1, 1.5, '0', 'length', true]) {
    const r = await summarizerError(start(index));
    assert.equal(r.code, 'INVALID_RESPONSE', `${JSON.stringify(index)}: ${JSON.stringify(r)}`);
  }
  const stop = START + ev('content_block_stop', { type: 'content_block_stop', index: 1e9 }) + STOP;
  assert.equal((await summarizerError(stop)).code, 'INVALID_RESPONSE');
  // Block numbers below the bound, and deltas without an index, are read as before.
  const fine =
    START +
    ev('content_block_start', { type: 'content_block_start', index: MAX_SUMMARY_BLOCKS - 1, content_block: { type: 'text', text: '<summary>far' } }) +
    ev('content_block_delta', { type: 'content_block_delta', delta: { type: 'text_delta', text: ' block</summary>' } }) +
    ev('content_block_stop', { type: 'content_block_stop', index: MAX_SUMMARY_BLOCKS - 1 }) +
    STOP;
  const ok = await summarizerError(fine);
  assert.match(String(ok.resolved), /far block/, JSON.stringify(ok));
  const noIndex = START + ev('content_block_delta', { type: 'content_block_delta', delta: { type: 'text_delta', text: '<summary>no index</summary>' } }) + STOP;
  assert.match(String((await summarizerError(noIndex)).resolved), /no index/);
});

test('anthropicSummarizer: a message_delta with a __proto__ key sets no prototype', async () => {
  const body =
    START +
    ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '<summary>s</summary>' } }) +
    'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","__proto__":{"polluted":1}},"usage":{"__proto__":{"polluted":1},"output_tokens":5}}\n\n' +
    ev('message_stop', { type: 'message_stop' });
  const summarize = cc.anthropicSummarizer({ apiKey: 'sk-test', fetch: streamed(body), maxRetries: 0 });
  const request = { model: SONNET, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };
  const m = await summarize(request, {});
  assert.equal(Object.getPrototypeOf(m), Object.prototype);
  assert.equal(Object.getPrototypeOf(m.usage), Object.prototype);
  assert.equal(m.polluted, undefined);
  assert.equal(m.usage.output_tokens, 5);
});

/**
 * Code units `String.prototype.indexOf` scans while `f` runs (each call: from its start to
 * the end of the string searched, the most it may scan).
 */
function scanned(f) {
  const indexOf = String.prototype.indexOf;
  let n = 0;
  String.prototype.indexOf = function (search, from = 0) {
    n += Math.max(0, this.length - from);
    return indexOf.call(this, search, from);
  };
  try {
    f();
  } finally {
    String.prototype.indexOf = indexOf;
  }
  return n;
}

test('the SSE parser scans each piece once: a long line in many pieces costs its length, not its square', () => {
  const run = (pieces, size) => {
    const got = [];
    const parser = createSseParser((name, data) => got.push([name, data.length]));
    const piece = 'x'.repeat(size);
    const n = scanned(() => {
      parser.push('event: e\ndata: ');
      for (let i = 0; i < pieces; i++) parser.push(piece);
      parser.push('\n\n');
    });
    assert.deepEqual(got, [['e', pieces * size]]);
    return n;
  };
  const small = run(64, 1024);
  const large = run(512, 1024);
  // 8 times the line: about 8 times the scanning (the old parser scanned the whole pending
  // line again at every piece: 8^2 = 64 times as much).
  assert.ok(large < 10 * small, `${small} -> ${large}`);
  assert.ok(large < 4 * 512 * 1024, `${large}`);
});

test('the SSE parser gives the same events whatever the cuts (CRLF, CR, LF split anywhere)', () => {
  const text =
    'event: a\r\ndata: 1\r\ndata: 2\r\n\r\n: comment\rdata:3\r\rdata: x\n\nevent: b\r\ndata: {"k":"v"}\r\n\r\n' +
    'data: tail-without-end';
  const whole = [];
  const p = createSseParser((n, d) => whole.push([n, d]));
  p.push(text);
  p.end();
  assert.deepEqual(whole, [['a', '1\n2'], ['message', '3'], ['message', 'x'], ['b', '{"k":"v"}']]);
  for (let seed = 1; seed < 200; seed++) {
    const got = [];
    const q = createSseParser((n, d) => got.push([n, d]));
    let at = 0;
    let r = seed;
    while (at < text.length) {
      r = (r * 1103515245 + 12345) % 2147483648;
      const len = r % 7;
      q.push(text.slice(at, at + len));
      at += len;
    }
    q.end();
    assert.deepEqual(got, whole, `seed ${seed}`);
  }
});

test('the SSE parser refuses a line or an event\'s data longer than a summary answer as soon as it passes it', () => {
  const errors = [];
  const parser = createSseParser(
    () => assert.fail('nothing dispatched'),
    (what) => {
      errors.push(what);
      return new Error(what);
    },
  );
  const mib = 'x'.repeat(1024 * 1024);
  parser.push('data: ');
  let pushed = 0;
  assert.throws(() => {
    for (let i = 0; i < 64; i++) {
      parser.push(mib);
      pushed++;
    }
  }, /stream line is longer than 16777216/);
  assert.equal(pushed, MAX_SUMMARY_TEXT / mib.length - 1);
  // Many data lines of one event count together.
  const many = createSseParser(() => assert.fail('nothing dispatched'), (what) => new Error(what));
  assert.throws(() => {
    for (let i = 0; i < 64; i++) many.push(`data: ${mib}\n`);
  }, /event's data is longer/);
});

test('anthropicSummarizer: a stream line longer than a summary answer stops the stream at the bound (INVALID_RESPONSE, not retried)', async () => {
  const enc = new TextEncoder();
  const piece = enc.encode('x'.repeat(1024 * 1024));
  let pulls = 0;
  let calls = 0;
  const fetch = async () => {
    calls++;
    pulls = 0;
    return new Response(
      new ReadableStream({
        pull(c) {
          pulls++;
          if (pulls === 1) c.enqueue(enc.encode('event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"<summary>'));
          else if (pulls > 64) c.close();
          else c.enqueue(piece);
        },
      }),
      { status: 200, headers: { 'content-type': 'text/event-stream' } },
    );
  };
  const summarize = cc.anthropicSummarizer({ apiKey: 'sk-test', fetch, maxRetries: 2 });
  const request = { model: SONNET, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };
  await assert.rejects(summarize(request, {}), (e) => e.code === 'INVALID_RESPONSE' && /too large/.test(e.message) && !e.retryable);
  assert.equal(calls, 1);
  assert.ok(pulls <= 18, `read ${pulls} pieces of 1 MiB`);
});

test('openaiSummarizer: streamed text longer than a summary answer is refused as soon as it passes the bound', async () => {
  const mib = 'x'.repeat(1024 * 1024);
  let events = 0;
  const enc = new TextEncoder();
  const chunk = enc.encode(`data: ${JSON.stringify({ choices: [{ delta: { content: mib } }] })}\n\n`);
  const fetch = async () =>
    new Response(
      new ReadableStream({
        pull(c) {
          events++;
          if (events > 64) c.close();
          else c.enqueue(chunk);
        },
      }),
      { status: 200, headers: { 'content-type': 'text/event-stream' } },
    );
  const summarize = cc.openaiSummarizer({ apiKey: 'sk-test', fetch, maxRetries: 0, model: 'gpt-4.1' });
  const request = { model: SONNET, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };
  await assert.rejects(summarize(request, {}), (e) => e.code === 'INVALID_RESPONSE' && /too large/.test(e.message));
  assert.ok(events <= 18, `read ${events} events of 1 MiB`);
});

/** A chat of `n` lines: prompts of 400 characters and answers of 200, each answer a call. */
const chat = (n) => {
  const lines = [];
  for (let i = 0; i < n; i++) {
    lines.push(
      JSON.stringify({
        type: i % 2 ? 'assistant' : 'user',
        uuid: `u${i}`,
        parentUuid: i ? `u${i - 1}` : null,
        timestamp: new Date(1e12 + i * 1000).toISOString(),
        message:
          i % 2
            ? { role: 'assistant', id: `m${i}`, content: [{ type: 'text', text: 'x'.repeat(200) }], usage: { input_tokens: 100, output_tokens: 10 } }
            : { role: 'user', content: 'q'.repeat(400) },
      }),
    );
  }
  return lines.join('\n') + '\n';
};

test('simulateSession: a policy whose summary alone fills the threshold stops compacting as the Compactor does (thrashing / circuit breaker), and says so', async () => {
  // The offline summary keeps every user prompt: under a 30,000-token threshold it fills the
  // threshold after about 1,000 lines. The replay then compacted at nearly every request,
  // summarizing the whole session each time (the claude-code policy at its real threshold:
  // 1,074 compactions over 10,000 lines, ~290 s).
  const policy = { name: 'low', compact: { threshold: 30_000 } };
  const run = async (n) => (await cc.simulateSession(chat(n), { policies: [policy, 'claude-code'] })).policies[0];
  const a = await run(1_500);
  const b = await run(3_000);
  for (const p of [a, b]) {
    assert.ok(p.paused === 'thrashing' || p.paused === 'circuitBreakerOpen', JSON.stringify(p.paused));
    assert.equal(typeof p.pausedAtRequest, 'number');
    assert.ok(p.compactions + p.failedCompactions <= 30, `${p.compactions} + ${p.failedCompactions} failed`);
  }
  // Twice the session: no more compactions (they stopped), no more summaries.
  assert.equal(b.compactions, a.compactions);
  assert.equal(b.failedCompactions, a.failedCompactions);
  assert.equal(b.summaryCalls, a.summaryCalls);
  assert.equal(b.requests, 1_500);
  // The report: never the recommended policy; the text report says why it stopped.
  const r = await cc.simulateSession(chat(1_500), { policies: [policy, 'claude-code'] });
  assert.notEqual(r.recommended, 'low');
  const text = formatSimulation(r, 'chat.jsonl');
  assert.match(text, /^low: .*automatic compaction stopped at request \d+ \((thrashing|circuit breaker open)/m);
  // A session that never gets there: no pause, no failure.
  const short = (await cc.simulateSession(chat(200), { policies: ['claude-code'] })).policies[0];
  assert.equal(short.paused, null);
  assert.equal(short.pausedAtRequest, null);
  assert.equal(short.failedCompactions, 0);
});

test('a throwing getter of an option is INVALID_ARGUMENT naming it, with what it threw as the cause (not an absent option)', async () => {
  const msgs = conversation();
  const summarize = async () => '<summary>s</summary>';
  const thrown = new Error('store unavailable');
  const throwing = (key, base) =>
    Object.defineProperty(base, key, {
      enumerable: true,
      get() {
        throw thrown;
      },
    });
  const check = (key) => (e) => {
    assert.equal(e.code, 'INVALID_ARGUMENT', `${key}: ${e.code} ${e.message}`);
    assert.match(e.message, new RegExp(`reading \`${key}\` threw: store unavailable`));
    assert.equal(e.cause, thrown);
    return true;
  };
  for (const key of ['config', 'signal', 'hooks', 'tokenCounter', 'sessionMemory', 'onProgress', 'readFile', 'pinned']) {
    await assert.rejects(cc.compactConversation(msgs, throwing(key, { model: SONNET, summarize })), check(key), key);
  }
  await assert.rejects(cc.autoCompactIfNeeded(msgs, throwing('config', { model: SONNET, summarize })), check('config'));
  await assert.rejects(cc.compactConversation(msgs, { model: SONNET, summarize }, throwing('shape', {})), check('shape'));
  assert.throws(() => cc.shouldAutoCompact(msgs, SONNET, throwing('config', {})), check('config'));
  assert.throws(() => new cc.Compactor(throwing('tokenCounter', { model: SONNET, summarize })), check('tokenCounter'));
  assert.throws(() => new cc.Compactor(throwing('config', { model: SONNET, summarize })), check('config'));
  // A getter that starts throwing later: the Compactor's next check says so.
  let broken = false;
  const options = Object.defineProperty({ model: SONNET, summarize }, 'signal', {
    enumerable: true,
    get() {
      if (broken) throw thrown;
      return undefined;
    },
  });
  const session = new cc.Compactor(options);
  session.pushMany(msgs);
  broken = true;
  await assert.rejects(session.compact(), check('signal'));
  // Getters that answer are read as before.
  const fine = Object.defineProperty({ model: SONNET, summarize }, 'config', { enumerable: true, get: () => ({ disableCompact: false }) });
  assert.equal(typeof (await cc.compactConversation(msgs, fine)).summary, 'string');
});
