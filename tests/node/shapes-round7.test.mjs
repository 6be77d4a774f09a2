// What a seventh probe of other ecosystems' messages found: pending turns the compaction
// dropped (an OpenAI Responses MCP approval, a client-run tool search, a paused LangChain v1
// server tool call), microCompact'd UIMessages that typed AI SDK tools refused, and an OpenAI
// Chat audio reply left out of the view. Each test fails on the package before the fix
// (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { convertToModelMessages, tool, validateUIMessages } from 'ai';
import { z } from 'zod';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const big = (n, s = 'line') => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const summarize = async () => '<summary>SUMMARY: work continues.</summary>';
const compact = async (msgs, model) => cc.buildPostCompactMessages(await cc.compactConversation(msgs, { model, summarize }));

// A Responses conversation long enough to compact, ending with a user request.
const responsesBase = (ask) => {
  const base = [{ role: 'developer', content: 'You are an agent.' }];
  for (let i = 0; i < 6; i++) {
    base.push({ role: 'user', content: `task ${i} ${big(60)}` },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `done ${i} ${big(60)}`, annotations: [] }] });
  }
  base.push({ role: 'user', content: ask });
  return base;
};

// ---- R1: an MCP approval request is a pending turn ---------------------------------------

const approvalRequest = () => ({ type: 'mcp_approval_request', id: 'mcpr_1', server_label: 'deployer', name: 'deploy', arguments: '{"env":"prod"}' });
const approvalResponse = () => ({ type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve: true });

test('R1: a pending mcp_approval_request is kept at the end by compaction', async () => {
  const request = approvalRequest();
  const out = await compact([...responsesBase('deploy to prod'), request], 'gpt-4.1');
  assert.equal(out.at(-1), request);
});

// The answer the API has not acted on yet is read for a compaction as no result (anthropicForm
// in js_edit.js): the request stays a pending call, kept with the answer after it.
test('R1: an approval request answered by an unsent mcp_approval_response keeps both', async () => {
  const request = approvalRequest(), response = approvalResponse();
  const out = await compact([...responsesBase('deploy to prod'), request, response], 'gpt-4.1');
  assert.deepEqual(out.slice(-2), [request, response]);
});

test('R1: validateForApi reports an mcp_approval_response whose request is missing', () => {
  const ok = cc.validateForApi([{ role: 'user', content: 'deploy' }, approvalRequest(), approvalResponse()]);
  assert.equal(ok.valid, true, JSON.stringify(ok));
  const orphan = cc.validateForApi([{ role: 'user', content: 'deploy' }, approvalResponse()]);
  assert.equal(orphan.valid, false);
  assert.match(JSON.stringify(orphan), /mcpr_1/);
});

test('R1: an approval answer is never cleared by microCompact', () => {
  const msgs = [{ role: 'user', content: 'deploy' }, approvalRequest(), approvalResponse(),
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'deployed', annotations: [] }] },
    { role: 'user', content: 'again' }];
  const r = cc.microCompact(msgs, { keepRecent: 0, compactableTools: ['*'] });
  assert.deepEqual(r.clearedToolUseIds, []);
  assert.equal(r.messages[2], msgs[2]);
});

// ---- R2: a client-run tool search is a pending call, its output its result -----------------

const toolSearch = () => ({ type: 'tool_search_call', id: 'tsc_1', call_id: 'call_ts_1', arguments: { query: 'deploy' }, execution: 'client', status: 'completed' });
const toolSearchOutput = () => ({ type: 'tool_search_output', call_id: 'call_ts_1', execution: 'client',
  tools: [{ type: 'function', name: 'deploy', parameters: { type: 'object', properties: {} }, strict: false }] });

test('R2: a pending client tool_search_call is kept at the end by compaction', async () => {
  const search = toolSearch();
  const out = await compact([...responsesBase('deploy the service'), search], 'gpt-5');
  assert.equal(out.at(-1), search);
});

test('R2: a tool_search_output answers its call (validateForApi), and is never cleared', () => {
  const msgs = [{ role: 'user', content: 'deploy' }, toolSearch(), toolSearchOutput()];
  assert.equal(cc.validateForApi(msgs).valid, true);
  assert.equal(cc.validateForApi([msgs[0], msgs[2]]).valid, false);
  const r = cc.microCompact([...msgs, { role: 'user', content: 'go' }], { keepRecent: 0, compactableTools: ['*'] });
  assert.equal(r.messages[2], msgs[2]);
});

test('R2: a tool search the server ran is no pending call', async () => {
  const search = { ...toolSearch(), call_id: null, execution: 'server' };
  const done = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'found it', annotations: [] }] };
  assert.equal(cc.validateForApi([{ role: 'user', content: 'deploy' }, search, done]).valid, true);
});

// ---- R3: a paused LangChain v1 turn (server_tool_call without its result) -----------------

test('R3: a paused LangChain v1 turn (server_tool_call, no result) is kept by compaction', async () => {
  const base = [new SystemMessage('You are a research agent.')];
  for (let i = 0; i < 6; i++) base.push(new HumanMessage(`q${i} ${big(60)}`), new AIMessage(`a${i} ${big(60)}`));
  base.push(new HumanMessage('search the web for X'));
  const raw = new AIMessage({ content: [{ type: 'text', text: 'Searching.' }, { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'X' } }],
    response_metadata: { model_provider: 'anthropic', stop_reason: 'pause_turn' } });
  const v1 = new AIMessage({ content: raw.contentBlocks, response_metadata: { model_provider: 'anthropic', stop_reason: 'pause_turn', output_version: 'v1' } });
  assert.ok(v1.content.some((b) => b.type === 'server_tool_call'), JSON.stringify(v1.content));
  const out = await compact([...base, v1], 'claude-sonnet-4-5');
  assert.equal(out.at(-1), v1);
});

test('R3: a finished LangChain v1 server tool turn is valid and its result reaches the summary', async () => {
  const v1 = new AIMessage({ content: [
    { type: 'server_tool_call', id: 'srvtoolu_1', name: 'web_search', args: { query: 'X' } },
    { type: 'server_tool_call_result', toolCallId: 'srvtoolu_1', status: 'success', output: { hits: 'RESULT-MARKER' } },
    { type: 'text', text: 'Found it.' }] });
  const msgs = [new HumanMessage('search X'), v1, new HumanMessage('thanks')];
  assert.equal(cc.validateForApi(msgs).valid, true, JSON.stringify(cc.validateForApi(msgs)));
  let sent = '';
  await cc.compactConversation([new SystemMessage('s'), ...msgs], { model: 'claude-sonnet-4-5', summarize: async (r) => { sent = JSON.stringify(r); return '<summary>S</summary>'; } });
  assert.match(sent, /RESULT-MARKER/);
});

// ---- R4: microCompact'd UIMessages stay valid for typed tools -----------------------------

test('R4: cleared UI tool parts are accepted by the AI SDK for a typed tool', async () => {
  const readFile = tool({
    description: 'Read a file',
    inputSchema: z.object({ path: z.string() }),
    outputSchema: z.object({ path: z.string(), content: z.string(), lines: z.number() }),
    execute: async ({ path }) => ({ path, content: '', lines: 0 }),
    toModelOutput: ({ output }) => ({ type: 'text', value: `${output.path} (${output.lines} lines)\n${output.content}` }),
  });
  const tools = { readFile };
  const ui = [{ id: 'u0', role: 'user', parts: [{ type: 'text', text: 'read the files' }] }];
  for (let i = 0; i < 4; i++) {
    ui.push({ id: `a${i}`, role: 'assistant', parts: [{ type: 'step-start' },
      { type: 'tool-readFile', toolCallId: `c${i}`, state: 'output-available', input: { path: `f${i}.ts` }, output: { path: `f${i}.ts`, content: big(100), lines: 100 } },
      { type: 'text', text: `read ${i}` }] });
    ui.push({ id: `u${i + 1}`, role: 'user', parts: [{ type: 'text', text: 'next' }] });
  }
  const before = cc.tokenCountWithEstimation(ui);
  const first = cc.microCompact(ui, { keepRecent: 1, compactableTools: ['*'] });
  assert.deepEqual(first.clearedToolUseIds, ['c0', 'c1', 'c2']);
  const messages = first.messages;
  await validateUIMessages({ messages, tools });
  const model = await convertToModelMessages(messages, { tools });
  const results = model.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((p) => p.type === 'tool-result');
  assert.equal(results.length, 4);
  // The placeholder reaches the model as the text it is; the kept result goes through toModelOutput.
  for (const r of results.slice(0, 3)) assert.deepEqual(r.output, { type: 'error-text', value: '[Old tool result content cleared]' });
  assert.equal(results[3].output.type, 'text');
  // The cleared parts count as their placeholder; a second pass clears nothing more.
  assert.ok(cc.tokenCountWithEstimation(messages) < before / 2);
  const second = cc.microCompact(messages, { keepRecent: 1, compactableTools: ['*'] });
  assert.deepEqual(second.clearedToolUseIds, []);
  assert.deepEqual(second.messages, messages);
});

// ---- R5: an OpenAI Chat audio reply is the assistant's turn ------------------------------

const transcript = `The capital is PARIS-MARKER. ${big(100, 'sentence')}`;
const audioReply = () => ({ role: 'assistant', content: null, refusal: null, annotations: [],
  audio: { id: 'audio_abc123', data: `UklGR${'A'.repeat(200000)}`, expires_at: 1790000000, transcript } });

test('R5: a Chat audio reply is in the API view, counted as its transcript and its audio', async () => {
  const one = (reply) => [{ role: 'user', content: 'What is the capital of France?' }, reply, { role: 'user', content: 'thanks' }];
  const asText = cc.tokenCountWithEstimation(one({ role: 'assistant', content: transcript }));
  const asAudio = cc.tokenCountWithEstimation(one(audioReply()));
  assert.ok(asAudio > asText, `${asAudio} vs ${asText}`);
  assert.ok(asAudio < asText + 5000, `${asAudio}: the base64 is media, not text`);
  assert.equal(cc.toApiMessages(one(audioReply())).length, 3);
});

test('R5: the transcript of a Chat audio reply reaches the summary request', async () => {
  const msgs = [{ role: 'system', content: 'You are a voice assistant.' }, { role: 'user', content: 'What is the capital?' }, audioReply()];
  for (let i = 0; i < 6; i++) msgs.push({ role: 'user', content: `question ${i} ${big(40, 'q')}` }, { role: 'assistant', content: `answer ${i} ${big(40, 'a')}` });
  msgs.push({ role: 'user', content: 'And what did you say?' });
  let sent = '';
  await cc.compactConversation(msgs, { model: 'gpt-4o-audio-preview', summarize: async (r) => { sent = JSON.stringify(r); return '<summary>S</summary>'; } });
  assert.match(sent, /PARIS-MARKER/);
});

test('R5: stripImagesFromMessages writes a Chat input_audio part as a document, not an image', () => {
  const msgs = [{ role: 'user', content: [{ type: 'text', text: 'listen' }, { type: 'input_audio', input_audio: { data: 'UklGR', format: 'wav' } }] }];
  const out = cc.stripImagesFromMessages(msgs);
  assert.deepEqual(out[0].content[1], { type: 'text', text: '[document]' });
});

test('Responses: a tool search the server ran, stored with call_id null and no execution, is not a client call', () => {
  const u = (t) => ({ type: 'message', role: 'user', content: t });
  const a = (t) => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: t, annotations: [] }] });
  const search = (i) => [
    { type: 'tool_search_call', id: `ts${i}`, call_id: null, arguments: { q: 'x' }, status: 'completed' },
    { type: 'tool_search_output', id: `tso${i}`, call_id: null, tools: [], status: 'completed' },
  ];
  const two = [u('find'), ...search(1), a('ok'), u('again'), ...search(2), a('ok2'), u('next')];
  assert.deepEqual(cc.validateForApi(two).problems, []);
  const alone = [u('find'), search(1)[0], a('found nothing'), u('next')];
  assert.deepEqual(cc.validateForApi(alone).problems, []);
  const api = cc.toApiMessages(two);
  assert.ok(!JSON.stringify(api).includes('"id":"null"'), 'no call named "null"');
  // A client-run search still pairs with its output.
  const client = [u('find'), { type: 'tool_search_call', call_id: 'c1', execution: 'client', arguments: { q: 'x' } }, { type: 'tool_search_output', call_id: 'c1', execution: 'client', tools: [] }, a('ok'), u('next')];
  assert.deepEqual(cc.validateForApi(client).problems, []);
});
