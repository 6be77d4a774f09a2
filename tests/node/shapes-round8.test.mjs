// What an eighth probe of message shapes found: an OpenAI Responses MCP approval the user
// answered but the API has not acted on yet, summarized away by compaction; a LangChain
// audio reply (`additional_kwargs.audio`) left out of the view; empty API messages between
// turns that validateForApi passed; lone UTF-16 surrogates in message text. Each test fails
// on the package before its fix (CC_PKG=/path/to/old/pkg/node.js runs this file against
// another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const big = (n, s = 'line') => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const summarize = async () => '<summary>SUMMARY: work continues.</summary>';
const compact = async (msgs, model, extra = {}) =>
  cc.buildPostCompactMessages(await cc.compactConversation(msgs, { model, summarize, ...extra }));
const assertValid = (msgs) => assert.deepEqual(cc.validateForApi(msgs).problems, []);

// ---- 1: an answered MCP approval the API has not acted on is pending ---------------------

const say = (t) => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: t, annotations: [] }] });
const responsesBase = (ask, rounds = 6) => {
  const base = [{ role: 'developer', content: 'You are an agent.' }];
  for (let i = 0; i < rounds; i++) base.push({ role: 'user', content: `task ${i} ${big(60)}` }, say(`done ${i} ${big(60)}`));
  base.push({ role: 'user', content: ask });
  return base;
};
const approvalRequest = () => ({ type: 'mcp_approval_request', id: 'mcpr_1', server_label: 'deployer', name: 'deploy', arguments: '{"env":"prod"}' });
const approvalResponse = (approve = true) => ({ type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve, ...(approve ? {} : { reason: 'not today' }) });

test('1: an approval request answered by an unsent mcp_approval_response keeps both (approve and deny)', async () => {
  for (const approve of [true, false]) {
    const request = approvalRequest(), response = approvalResponse(approve);
    const out = await compact([...responsesBase('deploy to prod'), request, response], 'gpt-4.1');
    assert.equal(out.length, 4, JSON.stringify(out.map((m) => m.type ?? m.role)));
    assert.equal(out.at(-2), request);
    assert.equal(out.at(-1), response);
    assertValid(out);
  }
});

test('1: the unsent answer is kept with the other outputs of its turn (a parallel function call)', async () => {
  const call = { type: 'function_call', call_id: 'call_ls', name: 'ls', arguments: '{}' };
  const output = { type: 'function_call_output', call_id: 'call_ls', output: 'a.txt b.txt' };
  const request = approvalRequest(), response = approvalResponse();
  for (const tail of [[call, request, output, response], [call, request, response, output]]) {
    const out = await compact([...responsesBase('deploy to prod'), ...tail], 'gpt-4.1');
    assert.deepEqual(out.slice(-4), tail);
    assertValid(out);
  }
});

// Guards of the rule's reach (they pass before the fix too): what the API acted on, an answer
// the user's words follow, the API view and session-memory compaction are read as before.
test('1: an approval the API acted on (its mcp_call, a reply) is summarized like any finished round', async () => {
  const ran = { type: 'mcp_call', id: 'mcp_1', approval_request_id: 'mcpr_1', server_label: 'deployer', name: 'deploy', arguments: '{"env":"prod"}', output: 'deployed', status: 'completed' };
  for (const after of [[ran, say('Deployed.')], [say('I will not deploy then.')]]) {
    const msgs = [...responsesBase('deploy to prod'), approvalRequest(), approvalResponse(after.length === 2), ...after];
    const out = await compact(msgs, 'gpt-4.1');
    assert.ok(!out.some((m) => m.type === 'mcp_approval_request' || m.type === 'mcp_approval_response'), JSON.stringify(out));
    assertValid(out);
  }
});

test('1: an unsent answer followed by the user\'s words is summarized with its request, never kept alone', async () => {
  const msgs = [...responsesBase('deploy to prod'), approvalRequest(), approvalResponse(), { role: 'user', content: 'and check the logs' }];
  for (const keepLastUserMessage of [false, true]) {
    const out = await compact(msgs, 'gpt-4.1', { keepLastUserMessage });
    assert.ok(!out.some((m) => m.type === 'mcp_approval_response'), JSON.stringify(out));
    assertValid(out);
  }
});

test('1: toApiMessages and validateForApi read an unsent answer as its request\'s result', () => {
  const msgs = [{ role: 'user', content: 'deploy' }, approvalRequest(), approvalResponse(false)];
  assertValid(msgs);
  const api = cc.toApiMessages(msgs);
  assert.equal(api.length, 3);
  assert.equal(api[2].content[0].type, 'tool_result');
  assert.equal(api[2].content[0].tool_use_id, 'mcpr_1');
});

test('1: session-memory compaction keeps an answered, unsent approval too', async () => {
  const request = approvalRequest(), response = approvalResponse();
  const r = await cc.trySessionMemoryCompaction([...responsesBase('deploy to prod', 40), request, response], { model: 'gpt-4.1', sessionMemory: '# Notes\nthe user deploys the service' });
  assert.ok(r, 'compacted');
  const out = cc.buildPostCompactMessages(r);
  assert.ok(out.length < 40, `${out.length} messages`);
  assert.equal(out.at(-2), request);
  assert.equal(out.at(-1), response);
  assertValid(out);
});
