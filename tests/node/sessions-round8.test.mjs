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
