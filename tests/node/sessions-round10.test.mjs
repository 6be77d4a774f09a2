// Tenth round on real sessions: the stateless count after a session-memory compaction that kept
// several responses (each still carrying the usage of the old context).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as cc from '../../pkg/node.js';
import { TRANSCRIPTS } from './helpers/support.mjs';

const MODEL = 'claude-opus-4-6';
const MEMORY = `# Session memory\n${'Work on the spotter pane list. '.repeat(200)}`;

const shared = () => cc.parseTranscript(readFileSync(`${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`, 'utf8'));

test('after a session-memory compaction that kept several responses, tokenCountWithEstimation is the Compactor\'s count, not a later kept response\'s old usage', async () => {
  const lines = shared();
  const pre = lines.slice(0, lines.findIndex((l) => l.subtype === 'compact_boundary'));
  const res = await cc.trySessionMemoryCompaction(pre, { model: MODEL, sessionMemory: MEMORY });
  const kept = res.messagesToKeep.filter((l) => l.type === 'assistant' && l.message?.usage);
  assert.ok(new Set(kept.map((l) => l.message.id)).size > 1, 'several kept responses carry usage');
  const all = [...pre, ...cc.buildPostCompactMessages(res)];
  const chat = new cc.Compactor({ model: MODEL, messages: all });
  // Before: 171,047 (the last kept response's usage) against 47,219.
  assert.equal(cc.tokenCountWithEstimation(all), chat.tokenCount());
  assert.ok(chat.tokenCount() < 60_000, `${chat.tokenCount()}`);
  // The general path (options given) agrees, and shouldAutoCompact's number is the same.
  assert.equal(cc.tokenCountWithEstimation(all, { model: MODEL }), chat.tokenCount());
  // Per turn on the same array (the count remembers where it found the boundary): new lines
  // are estimated until a response that is no kept line anchors the count again.
  let parent = all.at(-1).uuid;
  const push = (o) => { const uuid = `r10-${all.length}`; all.push({ ...o, uuid, parentUuid: parent, isSidechain: false, sessionId: 's', timestamp: '2026-01-01T00:00:00Z' }); chat.push(all.at(-1)); parent = uuid; };
  push({ type: 'user', message: { role: 'user', content: 'Go on with the pane list.' } });
  assert.equal(cc.tokenCountWithEstimation(all), chat.tokenCount());
  push({ type: 'assistant', message: { id: 'msg_r10', role: 'assistant', stop_reason: 'end_turn', content: [{ type: 'text', text: 'On it.' }], usage: { input_tokens: 44000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 5 } } });
  assert.equal(cc.tokenCountWithEstimation(all), 44005);
  assert.equal(chat.tokenCount(), 44005);
  chat.free();
});

test('the per-turn count reads an array changed in place again (a compaction spliced into the same array)', async () => {
  const lines = shared();
  const pre = lines.slice(0, lines.findIndex((l) => l.subtype === 'compact_boundary'));
  const res = await cc.trySessionMemoryCompaction(pre, { model: MODEL, sessionMemory: MEMORY });
  const post = cc.buildPostCompactMessages(res);
  const arr = pre.slice();
  const before = cc.tokenCountWithEstimation(arr);
  assert.equal(before, cc.tokenCountWithEstimation(pre));
  // The same array now holds only the compacted conversation, then the history and it.
  arr.splice(0, arr.length, ...post);
  assert.equal(cc.tokenCountWithEstimation(arr), cc.tokenCountWithEstimation(arr, { model: MODEL }));
  assert.ok(cc.tokenCountWithEstimation(arr) < 30_000, `${cc.tokenCountWithEstimation(arr)}`);
  arr.splice(0, arr.length, ...pre, ...post);
  assert.equal(cc.tokenCountWithEstimation(arr), cc.tokenCountWithEstimation([...pre, ...post], { model: MODEL }));
  // Back to the history alone: anchored on its own usage again.
  arr.splice(pre.length);
  assert.equal(cc.tokenCountWithEstimation(arr), before);
  // The boundary's keptMessages edited in place: read again (0 kept: the usage counts).
  const all = [...pre, ...post];
  const b = all.findIndex((l, i) => i >= pre.length && l.subtype === 'compact_boundary');
  const stale = cc.tokenCountWithEstimation(all);
  all[b] = { ...all[b], compactMetadata: { ...all[b].compactMetadata, keptMessages: 0 } };
  assert.ok(cc.tokenCountWithEstimation(all) > 100_000, `${cc.tokenCountWithEstimation(all)} (was ${stale})`);
  assert.equal(cc.tokenCountWithEstimation(all), cc.tokenCountWithEstimation(all, { model: MODEL }));
});
