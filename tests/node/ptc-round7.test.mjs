// Anthropic programmatic tool calling (the `code_execution` server tool calling client tools;
// @anthropic-ai/sdk: `caller` on a `tool_use`, `allowed_callers` on a tool). The server tool
// waits for the client tools its code calls: response 1 holds the `server_tool_use` and a
// `tool_use` whose `caller.tool_id` names it, the client sends the `tool_result`, and response 2
// begins with the `code_execution_tool_result`. So the server tool's result legitimately comes
// in a later assistant message. validateForApi takes that as valid, and no truncation or
// compaction separates the call from its result (round 7, R6).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';

cc.setEnvironmentDefaults({});

const MODEL = 'claude-sonnet-4-5';
const CALLER = 'code_execution_20250825';
const big = (n) => Array.from({ length: n }, (_, i) => `row ${i}: some expense line item with amount and category`).join('\n');
const summarize = async () => '<summary>The user asked which members exceeded their budgets.</summary>';

const serverCall = (i) => ({ type: 'server_tool_use', id: `srvtoolu_${i}`, name: 'code_execution', input: { code: 'for m in members: r = await get_expenses(m)' } });
const clientCall = (i, id = `toolu_${i}`) => ({ type: 'tool_use', id, name: 'get_expenses', input: { member: 'alice' }, caller: { type: CALLER, tool_id: `srvtoolu_${i}` } });
const clientResult = (id, rows) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: big(rows) }] });
const serverResult = (i) => ({ type: 'code_execution_tool_result', tool_use_id: `srvtoolu_${i}`, content: { type: 'code_execution_result', stdout: 'alice: over by $120', stderr: '', return_code: 0, content: [] } });

// One exchange: question, [text, server call, client call], client result, [server result, answer].
function ptc(i, rows = 200) {
  return [
    { role: 'user', content: `Which members of team ${i} exceeded their budget?` },
    { role: 'assistant', content: [{ type: 'text', text: 'I will query all members in code.' }, serverCall(i), clientCall(i)] },
    clientResult(`toolu_${i}`, rows),
    { role: 'assistant', content: [serverResult(i), { type: 'text', text: `Team ${i}: Alice exceeded her budget.` }] },
  ];
}

// The server results and the client calls made by a server tool's code whose server_tool_use
// is not before them, and the server calls with neither a result nor a client call kept.
function broken(out) {
  const calls = new Set(), results = new Set(), callers = new Set(), bad = [];
  for (const m of out) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b.type === 'server_tool_use') calls.add(b.id);
      if (b.type === 'tool_use' && b.caller && b.caller.tool_id) {
        callers.add(b.caller.tool_id);
        if (!calls.has(b.caller.tool_id)) bad.push(`client call ${b.id} of a lost ${b.caller.tool_id}`);
      }
      if (b.type === 'code_execution_tool_result') {
        results.add(b.tool_use_id);
        if (!calls.has(b.tool_use_id)) bad.push(`orphan result ${b.tool_use_id}`);
      }
    }
  }
  for (const c of calls) if (!results.has(c) && !callers.has(c)) bad.push(`call ${c} lost its client calls and result`);
  return bad;
}

test('validateForApi: a programmatic tool calling exchange is valid, waiting or answered', () => {
  const one = ptc(0);
  assert.deepEqual(cc.validateForApi(one), { valid: true, problems: [] });
  assert.equal(cc.validateForApi(one.slice(0, 3)).valid, true, 'waiting for the server result');
  // The code calls a second client tool before it finishes.
  const chain = [...one.slice(0, 3), { role: 'assistant', content: [clientCall(0, 'toolu_0b')] }, clientResult('toolu_0b', 3), one[3]];
  assert.equal(cc.validateForApi(chain).valid, true, JSON.stringify(cc.validateForApi(chain)));
  // Still problems: no result after the client results, a server call with no caller and no
  // result, an orphan server result.
  const lost = [...one.slice(0, 3), { role: 'assistant', content: 'done' }, { role: 'user', content: 'ok' }];
  assert.match(JSON.stringify(cc.validateForApi(lost)), /server_tool_use srvtoolu_0 has no result/);
  const direct = structuredClone(one);
  delete direct[1].content[2].caller;
  assert.match(JSON.stringify(cc.validateForApi(direct)), /server_tool_use srvtoolu_0 has no result in the same message/);
  const orphan = [{ role: 'user', content: 'q' }, one[3], { role: 'user', content: 'thanks' }];
  assert.match(JSON.stringify(cc.validateForApi(orphan)), /code_execution_tool_result srvtoolu_0 answers no server_tool_use/);
});

test('the API view and the readers keep `caller` as it is', () => {
  const one = ptc(0);
  const sent = cc.toApiMessages(one);
  assert.deepEqual(sent[1].content[2].caller, { type: CALLER, tool_id: 'srvtoolu_0' });
});

test('groupMessagesByApiRound keeps a server call with its later result; truncateHeadForPTLRetry never orphans it', () => {
  const conv = [...ptc(0), ...ptc(1), ...ptc(2), { role: 'user', content: 'thanks' }];
  assert.deepEqual(cc.groupMessagesByApiRound(conv).map((g) => g.length), [1, 4, 4, 4]);
  for (const err of ['prompt is too long: 202000 tokens > 200000 maximum', 'prompt is too long: 204000 tokens > 200000 maximum', 'prompt is too long: 300000 tokens > 200000 maximum']) {
    const out = cc.truncateHeadForPTLRetry(conv, err);
    assert.deepEqual(broken(out), [], err);
    assert.equal(cc.validateForApi(out).valid, true, `${err}: ${JSON.stringify(cc.validateForApi(out))}`);
  }
});

test('compactConversation keeps a programmatic server call waiting for its client calls', async () => {
  const history = [...ptc(0, 300), ...ptc(1, 300)];
  const waiting = [...history, ...ptc(2).slice(0, 3), { role: 'assistant', content: [clientCall(2, 'toolu_2b')] }];
  const out = cc.buildPostCompactMessages(await cc.compactConversation(waiting, { model: MODEL, summarize }));
  assert.deepEqual(broken(out), []);
  const ids = out.flatMap((m) => (Array.isArray(m.content) ? m.content.map((b) => b.id) : []));
  for (const id of ['srvtoolu_2', 'toolu_2', 'toolu_2b']) assert.ok(ids.includes(id), `${id} kept`);
  // The client's result and then the server result appended: a valid request.
  const next = [...out, clientResult('toolu_2b', 2), ptc(2)[3]];
  assert.equal(cc.validateForApi(next).valid, true, JSON.stringify(cc.validateForApi(next)));
});

test('session-memory compaction never keeps a server result without its call', async () => {
  for (const rows of [150, 230, 310, 390, 470]) {
    const conv = [];
    for (let i = 0; i < 12; i++) conv.push(...ptc(i, rows + 37 * i));
    conv.push({ role: 'user', content: 'thanks' });
    const sm = await cc.trySessionMemoryCompaction(conv, { model: MODEL, sessionMemory: 'Budgets checked for every team.' });
    const out = cc.buildPostCompactMessages(sm);
    assert.deepEqual(broken(out), [], `rows ${rows}`);
    assert.equal(cc.validateForApi(out).valid, true, `rows ${rows}: ${JSON.stringify(cc.validateForApi(out))}`);
  }
});
