// Real Claude Code sessions, round 6: a sub-agent's own transcript compacted stays that
// sub-agent's transcript (its kept messages still sent), and a session file holding two
// branches compacted by session memory keeps only the chain from the leaf. Synthetic files of
// the shapes seen (plus the shared sub-agent transcript).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as cc from '../../pkg/node.js';
import { SONNET, TRANSCRIPTS } from './helpers/support.mjs';

const AGENT_FILE = `${TRANSCRIPTS}cc_long_autocompact_4d5611e5.agent-acompact-e1f845.jsonl`;

// A sub-agent's own file as Claude Code writes it: every line isSidechain with the agent's id.
function subAgentFile() {
  const base = { isSidechain: true, agentId: 'a1b2c3', sessionId: 's', cwd: '/w', version: '2.1.38', userType: 'external' };
  const lines = [];
  let parent = null;
  const push = (l) => {
    const uuid = `x${lines.length + 1}`;
    lines.push({ ...base, ...l, uuid, parentUuid: parent });
    parent = uuid;
  };
  push({ type: 'user', message: { role: 'user', content: 'Review every file in src/ and report problems.' } });
  for (let i = 0; i < 60; i++) {
    push({ type: 'assistant', message: { id: `msg_${i}`, role: 'assistant', model: SONNET, content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { file_path: `/w/src/f${i}.rs` } }], usage: { input_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 15000 + i * 2500, output_tokens: 20 } } });
    push({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `fn f${i}() {}\n`.repeat(800) }] } });
  }
  push({ type: 'user', message: { role: 'user', content: 'Also check the tests directory please.' } });
  return lines;
}

const summarize = async () => ({ content: [{ type: 'text', text: `<summary>Reviewed src/f0..f59. ${'Notes. '.repeat(200)}</summary>` }], stop_reason: 'end_turn', usage: { input_tokens: 100, output_tokens: 500 } });

/** The compacted lines as the file holds them once written, read again. */
const asWritten = (post) => cc.parseTranscript(cc.serializeTranscript(post));

function allOfTheAgent(lines, agentId) {
  for (const [i, l] of lines.entries()) {
    assert.equal(l.isSidechain, true, `line ${i} (${l.type}) isSidechain`);
    assert.equal(l.agentId, agentId, `line ${i} (${l.type}) agentId`);
  }
}

test("session memory on a sub-agent's own file: the kept messages are still sent", async () => {
  const lines = subAgentFile();
  assert.equal(cc.toApiMessages(lines).length, 121);
  const r = await cc.trySessionMemoryCompaction(lines, { model: SONNET, sessionMemory: `Sub-agent reviewing src/. ${'memo '.repeat(100)}` });
  const post = cc.buildPostCompactMessages(r);
  allOfTheAgent(post, 'a1b2c3');
  assert.equal(r.boundaryMarker.sessionId, 's');
  for (const view of [post, asWritten(post)]) {
    const api = cc.toApiMessages(view);
    assert.ok(api.length > 10, `${api.length} API messages for ${r.messagesToKeep.length} kept`);
    assert.match(JSON.stringify(api), /Also check the tests directory/);
    assert.equal(cc.validateForApi(view).valid, true);
    // What is counted is what is sent: the kept messages, not the summary alone.
    assert.ok(cc.tokenCountWithEstimation(view) > 10000, String(cc.tokenCountWithEstimation(view)));
  }
});

test("a full compaction of a sub-agent's own file keeps its last request in the agent's conversation", async () => {
  const lines = subAgentFile();
  const r = await cc.compactConversation(lines, { model: SONNET, summarize }, { keepLastUserMessage: true });
  assert.equal(r.summaryMessages[0].isSidechain, true);
  assert.equal(r.summaryMessages[0].agentId, 'a1b2c3');
  const post = cc.buildPostCompactMessages(r);
  allOfTheAgent(post, 'a1b2c3');
  const api = JSON.stringify(cc.toApiMessages(asWritten(post)));
  assert.match(api, /Also check the tests directory/);
  assert.match(api, /Reviewed src\/f0\.\.f59/);
});

test('the real sub-agent file compacted: new lines carry its agentId and session fields', async () => {
  const lines = cc.parseTranscript(readFileSync(AGENT_FILE, 'utf8'));
  const r = await cc.compactConversation(lines, { model: SONNET, summarize: async () => ({ content: [{ type: 'text', text: '<summary>Fixed compile errors in the renderer.</summary>' }], stop_reason: 'end_turn', usage: { input_tokens: 100, output_tokens: 50 } }) }, { keepLastUserMessage: true });
  const post = cc.buildPostCompactMessages(r);
  allOfTheAgent(post, 'acompact-e1f845');
  assert.equal(r.boundaryMarker.sessionId, '4d5611e5-241a-462a-8d15-5122611a9569');
  assert.equal(r.boundaryMarker.gitBranch, 'spotter-dov');
  // The history and the new lines, as the file holds them after the compaction.
  const file = asWritten([...lines, ...post]);
  const api = JSON.stringify(cc.toApiMessages(file));
  assert.match(api, /Fixed compile errors in the renderer/);
  assert.match(api, /Your task is to create a detailed summary/, 'the kept request is sent');
});

// A file holding two branches: 30 rounds, then a rewind to round 19 whose response (the same
// message id and tool call as the abandoned round 20) is written again under round 19's
// result, and a new request after it.
function branchedFile() {
  const lines = [];
  let parent = null;
  const add = (l) => {
    lines.push({ sessionId: 's1', isSidechain: false, parentUuid: parent, ...l });
    parent = l.uuid;
  };
  const round = (r, uuidPrefix = '') => {
    if (!uuidPrefix) add({ type: 'user', uuid: `u${r}`, message: { role: 'user', content: `request number ${r}` } });
    add({ type: 'assistant', uuid: `${uuidPrefix}a${r}`, message: { role: 'assistant', id: `msg_${r}`, model: SONNET, content: [{ type: 'tool_use', id: `t${r}`, name: 'Read', input: { file_path: `/f${r}.rs` } }], usage: { input_tokens: r * 1030 + 10, output_tokens: 20 } } });
    add({ type: 'user', uuid: `${uuidPrefix}r${r}`, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${r}`, content: uuidPrefix ? 'short this time' : 'x'.repeat(4000) }] } });
  };
  for (let r = 0; r < 30; r++) round(r);
  parent = 'r19';
  round(20, 'b_');
  add({ type: 'user', uuid: 'b_u', message: { role: 'user', content: 'Now summarize what you found.' } });
  return lines;
}

test('session memory on a branched file keeps only the chain from the leaf (each tool call once)', async () => {
  const lines = branchedFile();
  assert.equal(cc.validateForApi(lines).valid, true);
  const r = await cc.trySessionMemoryCompaction(lines, { model: SONNET, sessionMemory: 'Rounds 0 to 19 read files. '.repeat(20) });
  const kept = r.messagesToKeep.map((m) => m.uuid);
  assert.ok(kept.includes('r19'), JSON.stringify(kept));
  for (const abandoned of ['a20', 'r20', 'u25', 'r29']) assert.ok(!kept.includes(abandoned), `${abandoned} kept`);
  assert.deepEqual(kept.slice(-3), ['b_a20', 'b_r20', 'b_u']);
  const post = cc.buildPostCompactMessages(r);
  for (const view of [post, asWritten(post), asWritten([...lines, ...post])]) {
    const v = cc.validateForApi(view);
    assert.equal(v.valid, true, JSON.stringify(v.problems.slice(0, 2)));
    assert.equal(JSON.stringify(cc.toApiMessages(view)).split('"id":"t20"').length - 1, 1, 't20 sent once');
  }
});
