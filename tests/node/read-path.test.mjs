// The read path of the async pipeline functions (issue 12): each message crosses as the
// UTF-8 bytes of its JSON text and is read straight into the typed message; whatever the
// direct reading does not take (a carried-through line with a field of another type, a lone
// surrogate, a repeated key) is read the established way. Nothing is lost, errors name the
// message, and serializeTranscript writes what JSON.stringify writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import { OPUS, recordingSummarizer, summaryResponse, transcriptConversation } from './helpers/support.mjs';

const textOf = (request) => JSON.stringify(request.messages);

test('non-ASCII, emoji, big numbers and unknown fields reach the summary request intact; kept messages are the caller\'s', async () => {
  const lines = transcriptConversation({ rounds: 6 });
  const odd = 'héllo wörld — 日本語 😀 \u{10ffff} "quoted" \\ back\nslash';
  lines[0].message.content = `${odd} ${lines[0].message.content}`;
  lines[0].someFutureField = { big: 12345678901234567890, neg: -1.5e-7, order: { z: 1, a: 2 } };
  // A carried-through line whose typed fields hold other JSON types, and one whose payload
  // getter throws: the payload of such lines is never read.
  lines.splice(1, 0, { type: 'progress', uuid: 42, timestamp: { at: 1 }, data: { x: 1 } });
  lines.splice(2, 0, { type: 'progress', uuid: 'p-throws', get data() { throw new Error('never read'); } });
  const before = JSON.stringify(lines.filter((l) => l.uuid !== 'p-throws'));
  const summarize = recordingSummarizer(summaryResponse('done'));
  const r = await cc.compactConversation(lines, { model: OPUS, summarize }, {});
  assert.equal(summarize.calls.length, 1);
  assert.ok(textOf(summarize.calls[0].request).includes(JSON.stringify(odd).slice(1, -1)), 'the text crossed byte for byte');
  for (const m of r.messagesToKeep) assert.ok(lines.includes(m), 'kept messages are the caller\'s objects');
  assert.equal(JSON.stringify(lines.filter((l) => l.uuid !== 'p-throws')), before, 'the caller\'s messages are unchanged');
  assert.equal(typeof (await cc.previewCompaction(lines, { model: OPUS })), 'object');
});

test('a lone surrogate is read as before (the established path): U+FFFD in the request', async () => {
  const lines = transcriptConversation({ rounds: 4 });
  lines[0].message.content = `lone \ud800 surrogate ${lines[0].message.content}`;
  const summarize = recordingSummarizer(summaryResponse('done'));
  await cc.compactConversation(lines, { model: OPUS, summarize }, {});
  assert.ok(textOf(summarize.calls[0].request).includes('lone \ufffd surrogate'));
});

test('a bad message is a coded error naming its index, in every reading function', async () => {
  for (const [bad, why] of [
    [{ type: 'user', message: { role: 'user', content: 5 } }, /messages\[3\]/],
    [{ content: 'neither type nor role' }, /messages\[3\]/],
    [{ role: 'user', content: [{ text: 'block without type' }] }, /messages\[3\]/],
    [(() => { const o = { role: 'user', content: 'x' }; o.self = o; return o; })(), /messages\[3\].*JSON/],
  ]) {
    const lines = transcriptConversation({ rounds: 3 });
    lines.splice(3, 0, bad);
    const summarize = recordingSummarizer(summaryResponse('done'));
    await assert.rejects(cc.compactConversation(lines, { model: OPUS, summarize }, {}), (e) => {
      assert.equal(e.code, 'INVALID_MESSAGE');
      assert.match(e.message, why);
      return true;
    });
    await assert.rejects(cc.previewCompaction(lines, { model: OPUS }), (e) => e.code === 'INVALID_MESSAGE' && why.test(e.message));
    assert.equal(summarize.calls.length, 0);
  }
});

test('a message nested 100 levels is read whole, 101 with its deepest part as text; toApiMessages refuses it, by the text reading too', async () => {
  const nest = (n) => {
    let v = 0;
    for (let i = 0; i < n; i++) v = [v];
    return v;
  };
  const lines = transcriptConversation({ rounds: 3 });
  lines[0].deep = nest(99); // the line is level 1
  await cc.previewCompaction(lines, { model: OPUS });
  cc.toApiMessages(lines);
  lines[0].deep = nest(100);
  await cc.previewCompaction(lines, { model: OPUS });
  assert.throws(() => cc.toApiMessages(lines), (e) => e.code === 'INVALID_MESSAGE' && /messages\[0\].*nested deeper than 100/.test(e.message));
});

test('serializeTranscript writes what JSON.stringify writes, one line each, and names a bad message', () => {
  const lines = transcriptConversation({ rounds: 3 });
  lines[1].note = 'é 😀 \ud800 \u2028';
  const jsonl = cc.serializeTranscript(lines);
  assert.equal(jsonl, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  assert.deepEqual(cc.serializeTranscript([]), '');
  assert.equal(cc.serializeTranscript(cc.parseTranscript(jsonl)), jsonl);
  assert.throws(() => cc.serializeTranscript([lines[0], { toJSON: () => 'text' }]), (e) => e.code === 'SERIALIZATION_FAILED' && /messages\[1\]/.test(e.message));
  assert.throws(() => cc.serializeTranscript([lines[0], { toJSON: () => undefined }]), (e) => e.code === 'SERIALIZATION_FAILED' && /messages\[1\]/.test(e.message));
  assert.throws(() => cc.serializeTranscript([lines[0], lines[1], new Date(0)]), (e) => e.code === 'SERIALIZATION_FAILED' && /messages\[2\]/.test(e.message));
  const cyclic = { type: 'user' };
  cyclic.self = cyclic;
  assert.throws(() => cc.serializeTranscript([lines[0], cyclic]), (e) => e.code === 'SERIALIZATION_FAILED' && /messages\[1\].*circular/i.test(e.message));
  const getterThrows = [lines[0]];
  Object.defineProperty(getterThrows, 1, { get() { throw new Error('no'); }, enumerable: true });
  assert.throws(() => cc.serializeTranscript(getterThrows), (e) => e.code === 'INVALID_MESSAGE' && /messages\[1\]/.test(e.message));
  assert.throws(() => cc.serializeTranscript([lines[0], 'text']), (e) => e.code === 'INVALID_MESSAGE' && /messages\[1\]/.test(e.message));
});

test('toolUseResult (read by nothing) does not cross: the same request and result without it; a toJSON is not what is read', async () => {
  const lines = transcriptConversation({ rounds: 4 });
  const withResults = lines.map((l) =>
    l.type === 'user' ? { ...l, toolUseResult: { stdout: 'x'.repeat(5_000), big: 10n, deep: JSON.parse('['.repeat(150) + ']'.repeat(150)) } } : l,
  );
  assert.ok(withResults.some((l) => l.toolUseResult), 'the fixture has tool results');
  const run = async (ls) => {
    const summarize = recordingSummarizer(summaryResponse('done'));
    const r = await cc.compactConversation(ls, { model: OPUS, summarize }, {});
    return { request: JSON.stringify(summarize.calls[0].request), pre: r.preCompactTokenCount, kept: r.messagesToKeep.length, loss: r.lossReport };
  };
  // A BigInt and 150 levels inside toolUseResult would be refused if it were read.
  assert.deepEqual(await run(withResults), await run(lines));
  assert.equal(typeof (await cc.previewCompaction(withResults, { model: OPUS })).tokensBefore, 'number');
  // The kept messages are still the caller's objects, toolUseResult and all.
  const summarize = recordingSummarizer(summaryResponse('done'));
  const r = await cc.compactConversation(withResults, { model: OPUS, summarize }, {});
  for (const m of r.messagesToKeep) assert.ok(withResults.includes(m));
  // A line with its own toJSON is read by its fields, as the count reads it: what toJSON gives
  // (here a BigInt, which JSON cannot write) is not what is read, and toolUseResult is still
  // left out.
  const odd = withResults.map((l) => (l.type === 'user' && l.toolUseResult ? { ...l, toJSON() { return { ...this, toolUseResult: 1n }; } } : l));
  assert.deepEqual(await run(odd), await run(lines));
});
