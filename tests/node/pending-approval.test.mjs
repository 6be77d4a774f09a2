// Turns that wait for something the conversation already holds, through every compaction path:
// an AI SDK v6 tool approval (`needsApproval`) the user answered (ModelMessage `tool` message of
// `tool-approval-response`, UIMessage tool part in `approval-responded`), run afterwards by
// generateText exactly as on the original (the AI SDK's MockLanguageModelV3); an Anthropic turn
// the API paused (`pause_turn`: a `server_tool_use` whose result has not come), valid when it
// is last and kept; and microCompact's clearing of a tool result after a denied UIMessage tool
// part (`output-denied`) in the same message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateText, tool, jsonSchema, convertToModelMessages } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import * as cc from '../../pkg/node.js';

cc.setEnvironmentDefaults({});

const MODEL = 'claude-sonnet-4-5';
const big = (n, s) => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const summarize = async () => '<summary>The user asked for tasks (done) and to delete build/.</summary>';

// `rounds` earlier tasks, each a readFile call and its large result, then the user's request.
function history(rounds) {
  const msgs = [{ role: 'system', content: 'You are an agent.' }];
  for (let i = 0; i < rounds; i++) {
    msgs.push({ role: 'user', content: `task ${i}` });
    msgs.push({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: `r${i}`, toolName: 'readFile', input: { p: i } }] });
    msgs.push({ role: 'tool', content: [{ type: 'tool-result', toolCallId: `r${i}`, toolName: 'readFile', output: { type: 'text', value: big(100, `f${i}`) } }] });
    msgs.push({ role: 'assistant', content: `done ${i}` });
  }
  msgs.push({ role: 'user', content: 'delete the build dir' });
  return msgs;
}

const pendingTurn = () => ({ role: 'assistant', content: [
  { type: 'tool-call', toolCallId: 'cL', toolName: 'bash', input: { cmd: 'rm -rf build' } },
  { type: 'tool-approval-request', approvalId: 'apL', toolCallId: 'cL' },
] });
const answer = (approved) => ({ role: 'tool', content: [approved
  ? { type: 'tool-approval-response', approvalId: 'apL', approved: true }
  : { type: 'tool-approval-response', approvalId: 'apL', approved: false, reason: 'not now' }] });

// What generateText does with `messages`: whether the approved tool ran, or what it threw.
async function run(messages) {
  let ran = 0;
  const model = new MockLanguageModelV3({ doGenerate: async () => ({
    content: [{ type: 'text', text: 'ok' }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } },
    warnings: [],
  }) });
  const tools = {
    bash: tool({ inputSchema: jsonSchema({ type: 'object' }), needsApproval: true, execute: async () => { ran++; return 'deleted'; } }),
    readFile: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => 'x' }),
  };
  try {
    await generateText({ model, tools, messages, allowSystemInMessages: true });
  } catch (e) {
    return `threw ${e.name}`;
  }
  return ran ? 'ran' : 'not run';
}

// Every compaction path, each answering the post-compaction messages (session memory needs a
// conversation longer than what it keeps).
async function everyPath(msgs) {
  const out = {};
  out.full = cc.buildPostCompactMessages(await cc.compactConversation(msgs, { model: MODEL, summarize }));
  out.keepLastUserMessage = cc.buildPostCompactMessages(
    await cc.compactConversation(msgs, { model: MODEL, summarize }, { keepLastUserMessage: true }));
  const c = new cc.Compactor({ model: MODEL, summarize });
  c.pushMany(msgs);
  await c.compact();
  out.compactor = c.messages;
  const sm = await cc.trySessionMemoryCompaction(msgs, { model: MODEL, sessionMemory: 'The user asked for tasks; all done.' });
  assert.ok(sm, 'session memory applies');
  out.sessionMemory = cc.buildPostCompactMessages(sm);
  return out;
}

test('an approved AI SDK tool call: the approval response stays after its turn, and generateText runs the tool as on the original', async () => {
  const turn = pendingTurn(), approval = answer(true);
  const msgs = [...history(6), turn, approval];
  assert.equal(await run(msgs), 'ran');
  const out = cc.buildPostCompactMessages(await cc.compactConversation(msgs, { model: MODEL, summarize }));
  assert.ok(out.length < msgs.length, 'compacted');
  assert.deepEqual(out.slice(-2), [turn, approval], 'the pending turn, then the approval response, last');
  assert.ok(out.at(-1) === approval, 'the caller\'s own object');
  assert.equal(await run(out), 'ran');
});

test('a denied AI SDK tool call: the denial stays, and generateText skips the tool as on the original', async () => {
  const turn = pendingTurn(), denial = answer(false);
  const msgs = [...history(6), turn, denial];
  assert.equal(await run(msgs), 'not run');
  const out = cc.buildPostCompactMessages(await cc.compactConversation(msgs, { model: MODEL, summarize }));
  assert.deepEqual(out.slice(-2), [turn, denial]);
  assert.equal(await run(out), 'not run');
});

test('every compaction path keeps an approval response after its pending turn (ModelMessage and UIMessage)', async () => {
  const turn = pendingTurn(), approval = answer(true);
  const msgs = [...history(40), turn, approval];
  for (const [path, out] of Object.entries(await everyPath(msgs))) {
    assert.ok(out.length < msgs.length, `${path}: compacted`);
    assert.ok(out.at(-2) === turn && out.at(-1) === approval, `${path}: ${out.slice(-3).map((m) => m.role).join(',')}`);
    assert.equal(await run(out), 'ran', path);
  }
  // The UIMessage form: the answer is the tool part's state in the assistant message.
  const ui = [];
  for (let i = 0; i < 40; i++) {
    ui.push({ id: `u${i}`, role: 'user', parts: [{ type: 'text', text: `task ${i}` }] });
    ui.push({ id: `a${i}`, role: 'assistant', parts: [{ type: 'step-start' },
      { type: 'tool-readFile', toolCallId: `r${i}`, state: 'output-available', input: { p: i }, output: big(100, `f${i}`) },
      { type: 'step-start' }, { type: 'text', text: `done ${i}` }] });
  }
  ui.push({ id: 'uL', role: 'user', parts: [{ type: 'text', text: 'delete the build dir' }] });
  const responded = { id: 'aL', role: 'assistant', parts: [{ type: 'step-start' },
    { type: 'tool-bash', toolCallId: 'cL', state: 'approval-responded', input: { cmd: 'rm -rf build' }, approval: { id: 'apL', approved: true } }] };
  const uiMsgs = [...ui, responded];
  for (const [path, out] of Object.entries(await everyPath(uiMsgs))) {
    assert.ok(out.length < uiMsgs.length, `UIMessage ${path}: compacted`);
    assert.ok(out.at(-1) === responded, `UIMessage ${path}`);
    assert.equal(await run(await convertToModelMessages(out)), 'ran', `UIMessage ${path}`);
  }
});

// ---- Anthropic pause_turn ----------------------------------------------------------------

const longText = big(50, 'line');
function paused() {
  const msgs = [];
  for (let i = 0; i < 40; i++) {
    msgs.push({ role: 'user', content: `q${i} ${longText}` }, { role: 'assistant', content: [{ type: 'text', text: `a${i} ${longText}` }] });
  }
  msgs.push({ role: 'user', content: 'search the web for X' });
  const turn = { role: 'assistant', content: [{ type: 'text', text: 'Searching.' },
    { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'X' } }] };
  return { msgs: [...msgs, turn], turn };
}

test('validateForApi: a server_tool_use without its result is a paused turn when last, a missing result elsewhere', () => {
  const { msgs, turn } = paused();
  assert.deepEqual(cc.validateForApi(msgs), { valid: true, problems: [] });
  const later = [...msgs, { role: 'user', content: 'well?' }, { role: 'assistant', content: 'Nothing found.' }];
  const v = cc.validateForApi(later);
  assert.equal(v.valid, false);
  assert.deepEqual(v.problems, [{ message: later.indexOf(turn), problem: 'server_tool_use srvtoolu_1 has no result in the same message' }]);
});

test('every compaction path keeps a turn the API paused, last, as it was', async () => {
  const { msgs, turn } = paused();
  for (const [path, out] of Object.entries(await everyPath(msgs))) {
    assert.ok(out.length < msgs.length, `${path}: compacted`);
    assert.ok(out.at(-1) === turn, `${path}: the paused turn last`);
    assert.equal(cc.validateForApi(cc.toApiMessages(out)).valid, true, path);
  }
});

// ---- microCompact after a denied UIMessage tool part -------------------------------------

test('microCompact clears a tool result that follows a denied tool part in the same UIMessage', () => {
  const output = 'fileB line: some content of a file or command output here\n'.repeat(200);
  const denied = {
    'tool-bash': { type: 'tool-bash', toolCallId: 'c2', state: 'output-denied', input: { cmd: 'rm -rf build' }, approval: { id: 'ap2', approved: false, reason: 'no' } },
    'dynamic-tool': { type: 'dynamic-tool', toolName: 'bash', toolCallId: 'c2', state: 'output-denied', input: { cmd: 'rm -rf build' }, approval: { id: 'ap2', approved: false } },
  };
  for (const [kind, part] of Object.entries(denied)) {
    const ui = [
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'clean up and read b.ts' }] },
      { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, part, { type: 'step-start' },
        { type: 'tool-readFile', toolCallId: 'c4', state: 'output-available', input: { path: 'b.ts' }, output },
        { type: 'step-start' }, { type: 'text', text: 'ok' }] },
      { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'next' }] },
    ];
    const r = cc.microCompact(ui, { keepRecent: 0, compactableTools: ['*'] });
    assert.deepEqual(r.clearedToolUseIds, ['c4'], kind);
    const parts = r.messages[1].parts;
    assert.ok(parts[1] === part, `${kind}: the denied part is untouched`);
    // Cleared, the part is an error text (any tool's schema takes it).
    assert.equal(parts[3].state, 'output-error', kind);
    assert.equal(parts[3].errorText, '[Old tool result content cleared]', kind);
    // What is reported cleared is gone from the count (the output was ~2,900 tokens).
    const freed = cc.tokenCountWithEstimation(ui) - cc.tokenCountWithEstimation(r.messages);
    assert.ok(r.tokensFreed > 0 && freed > 2800, `${kind}: freed ${freed}, reported ${r.tokensFreed}`);
  }
});
