// Review of round 11 (review11): a getter read while a count's record is written calls the
// package, and that call moves the record (a first long count grows the per-turn record) or
// grows the WebAssembly memory (its views then detached): the count must still be the
// general path's, never a stale or empty record's. And the summarizer's own signal carries the
// caller's abort reason as it is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { packageJsView, OPUS } from './helpers/support.mjs';

// The package's WebAssembly instances, to see its memory (it never shrinks).
const instances = [];
const Instance = WebAssembly.Instance;
WebAssembly.Instance = class extends Instance {
  constructor(...args) {
    super(...args);
    instances.push(this);
  }
};
const cc = await import('../../pkg/node.js');
WebAssembly.Instance = Instance;
const memoryOf = () => instances.find((i) => typeof i.exports.compactor_new === 'function').exports.memory.buffer.byteLength;

cc.setEnvironmentDefaults({});
const view = await packageJsView();
view.setCountFast(true);

const conversation = (n, text) => {
  const a = [];
  for (let k = 0; k < n; k++) a.push({ role: k % 2 ? 'assistant' : 'user', content: text.repeat((k % 100) + 1) });
  return a;
};
const general = (messages) => {
  view.setCountFast(false);
  try {
    return cc.tokenCountWithEstimation(messages);
  } finally {
    view.setCountFast(true);
  }
};
// Calls `f` the first time the content of messages[i] is read.
const onFirstRead = (messages, i, f) => {
  const content = messages[i].content;
  let done = false;
  Object.defineProperty(messages[i], 'content', { get() { if (!done) { done = true; f(); } return content; } });
};
// A count that makes the WebAssembly memory grow (larger each time: past what the memory
// already holds).
let growBy = 300000;
const growMemory = () => {
  growBy *= 2;
  cc.tokenCountWithEstimation(conversation(growBy, 'm'), { model: OPUS });
};

// First in this file: the memory has its first size here.
test('the per-turn count of a long conversation whose last reply carries usage takes no room for a record', () => {
  const n = 100000;
  const messages = conversation(n, 'w');
  messages[n - 1].usage = { input_tokens: 1000, cache_read_input_tokens: 50000, output_tokens: 30 };
  const before = memoryOf();
  const got = cc.tokenCountWithEstimation(messages);
  assert.equal(got, 51030);
  // Round 11 asked for 24 words a message (9.6 MB here) before it saw the usage.
  assert.ok(memoryOf() - before < 2 << 20, `the memory grew by ${memoryOf() - before} bytes`);
  assert.equal(got, general(messages));
});

// The per-turn record has its first size here.
test('a getter whose count grows the per-turn record while it is written: the same count', () => {
  const outer = conversation(300, 'b');
  onFirstRead(outer, 299, () => cc.tokenCountWithEstimation(conversation(4000, 'a')));
  const got = cc.tokenCountWithEstimation(outer);
  assert.equal(got, general(outer));
  assert.ok(got > 0);
  // The record grows at the next count of a long conversation.
  const long = conversation(4000, 'a');
  assert.equal(cc.tokenCountWithEstimation(long), general(long));
});

test('a getter that grows the memory while the per-turn record is written: the same count', () => {
  cc.tokenCountWithEstimation(conversation(300, 'zzzz')); // an earlier record in the words
  const outer = conversation(300, 'b');
  onFirstRead(outer, 299, growMemory);
  assert.equal(cc.tokenCountWithEstimation(outer), general(outer));
});

test('a getter that grows the memory while the export writes its record: the same count', () => {
  const outer = conversation(1500, 'b');
  onFirstRead(outer, 1499, growMemory);
  // Counted from inside another count's record (the route busy): the export's record.
  const host = [{ role: 'user', content: 'q' }];
  let got;
  onFirstRead(host, 0, () => { got = cc.tokenCountWithEstimation(outer); });
  cc.tokenCountWithEstimation(host);
  assert.equal(got, general(outer));
});

test('two instances sharing the readers: a getter counting through the other one, then this one, does not move the record being written', async () => {
  const { readFileSync } = await import('node:fs');
  const dir = new URL('../../pkg/', import.meta.url);
  const counting = await import(new URL('context_compaction_count.js', dir));
  counting.initSync({ module: readFileSync(new URL('context_compaction_count_bg.wasm', dir)) });
  const main = instances.find((i) => typeof i.exports.compactor_new === 'function').exports;
  const record = main.__ccPerTurnRecord() >>> 3;
  const wordsAt = () => new Float64Array(main.memory.buffer)[record + 11];
  const outer = conversation(300, 'b');
  let start, during;
  onFirstRead(outer, 299, () => {
    counting.tokenCountWithEstimation(conversation(3, 'c'));
    // A first count of a conversation longer than the record holds yet: it would grow it.
    cc.tokenCountWithEstimation(conversation(20000, 'a'));
    during = wordsAt();
  });
  start = wordsAt();
  const got = cc.tokenCountWithEstimation(outer);
  assert.equal(during, start, 'the words being written stayed where they were');
  assert.equal(got, general(outer));
});

test("the summarizer's signal aborts with the caller's reason as it is", async () => {
  const messages = conversation(12, 'message ');
  for (const reason of ['user left', 42, { why: 'navigated' }]) {
    const ac = new AbortController();
    let seen;
    const summarize = (_, opts) => new Promise((_r, reject) => {
      opts.signal.addEventListener('abort', () => { seen = opts.signal.reason; reject(opts.signal.reason); });
      setTimeout(() => ac.abort(reason), 1);
    });
    await assert.rejects(cc.compactConversation(messages, { model: OPUS, summarize, signal: ac.signal }), { code: 'ABORTED' });
    assert.equal(seen, reason);
  }
  // Aborted before the call: the summarizer is not called (as before).
  const ac = new AbortController();
  ac.abort('gone');
  let called = false;
  await assert.rejects(cc.compactConversation(messages, { model: OPUS, summarize: () => { called = true; }, signal: ac.signal }), { code: 'ABORTED' });
  assert.equal(called, false);
});
