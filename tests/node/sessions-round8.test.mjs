// Eighth round on real sessions: the stateless count right after a compaction that kept the
// turn of a pending tool call (its lines still carry the usage of the old context).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as cc from '../../pkg/node.js';
import { TRANSCRIPTS } from './helpers/support.mjs';

const MODEL = 'claude-opus-4-6';

test('after a compaction that kept a pending call, tokenCountWithEstimation does not report the old context from the kept lines\' usage', async () => {
  const lines = cc.parseTranscript(readFileSync(`${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`, 'utf8'));
  // The prefix ends with the assistant line of a tool call whose result comes next (a Read
  // just before Claude Code's own compaction of this session).
  const boundary = lines.findIndex((l) => l.subtype === 'compact_boundary');
  let p = boundary;
  while (lines[p - 1].type !== 'assistant') p--;
  const pre = lines.slice(0, p);
  const result = lines.slice(p).find((l) => l.type === 'user' && Array.isArray(l.message?.content) && l.message.content.some((b) => b.type === 'tool_result'));
  assert.ok(result, 'the pending call\'s result follows');
  const summarize = async () => ({ content: [{ type: 'text', text: `<summary>${'Summary text. '.repeat(1100)}</summary>` }], stop_reason: 'end_turn' });
  const res = await cc.compactConversation(pre, { model: MODEL, summarize });
  assert.ok(res.messagesToKeep.length > 0, 'the pending turn is kept');
  const after = [...cc.buildPostCompactMessages(res), result];
  const before = cc.tokenCountWithEstimation(pre);
  const count = cc.tokenCountWithEstimation(after);
  // The kept lines' usage measured the whole old context (~169K on the previous package).
  assert.ok(count < res.truePostCompactTokenCount, `${count} vs a new context of ~${res.truePostCompactTokenCount} (before: ${before})`);
  // The general path (options given) and the per-turn path agree.
  assert.equal(cc.tokenCountWithEstimation(after, { model: MODEL }), count);
  // The warning state of that count and shouldAutoCompact agree.
  const warn = cc.calculateTokenWarningState(count, MODEL);
  assert.equal(warn.isAboveAutoCompactThreshold, cc.shouldAutoCompact(after, MODEL));
  // With the calibration the compaction reports, the count is the Compactor's.
  const chat = new cc.Compactor({ model: MODEL, summarize, messages: pre });
  await chat.compact();
  chat.push(result);
  assert.equal(cc.tokenCountWithEstimation(after, { calibration: res.calibration }), chat.tokenCount());
  chat.free();
  // The next response's usage anchors the count again (it is no kept line).
  const fresh = { type: 'assistant', uuid: 'fresh-1', parentUuid: result.uuid, isSidechain: false,
    message: { id: 'msg_fresh', role: 'assistant', stop_reason: 'end_turn', content: [{ type: 'text', text: 'done' }],
      usage: { input_tokens: 40000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 10 } } };
  assert.equal(cc.tokenCountWithEstimation([...after, fresh]), 40010);
});

test('after a session-memory compaction that kept several responses, tokenCountWithEstimation gives the same count with and without options', () => {
  let n = 0;
  let parent = null;
  const lines = [];
  const push = (o) => {
    const uuid = `u${n++}`;
    lines.push({ ...o, uuid, parentUuid: parent, sessionId: 's', timestamp: '2026-01-01T00:00:00Z', isSidechain: false });
    parent = uuid;
  };
  push({ type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', compactMetadata: { trigger: 'auto', preTokens: 170000, keptMessages: 4 } });
  push({ type: 'user', isCompactSummary: true, message: { role: 'user', content: 'summary '.repeat(200) } });
  push({ type: 'user', message: { role: 'user', content: 'do it' } });
  push({ type: 'assistant', message: { id: 'm1', role: 'assistant', stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }], usage: { input_tokens: 150000, output_tokens: 10 } } });
  // The first kept response (right after the summary and a user line): estimated on both paths.
  const first = [...lines, { type: 'user', uuid: 'x1', parentUuid: parent, sessionId: 's', timestamp: '2026-01-01T00:00:00Z', isSidechain: false, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] } }];
  assert.ok(cc.tokenCountWithEstimation(first) < 10_000, `${cc.tokenCountWithEstimation(first)}`);
  assert.equal(cc.tokenCountWithEstimation(first, { model: MODEL }), cc.tokenCountWithEstimation(first));
  push({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] } });
  push({ type: 'assistant', message: { id: 'm2', role: 'assistant', stop_reason: 'end_turn', content: [{ type: 'text', text: 'done' }], usage: { input_tokens: 160000, output_tokens: 10 } } });
  push({ type: 'user', message: { role: 'user', content: 'next' } });
  // A later kept response: the same count on both paths (estimated: its usage is the old context's).
  assert.equal(cc.tokenCountWithEstimation(lines, { model: MODEL }), cc.tokenCountWithEstimation(lines));
});
