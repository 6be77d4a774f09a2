// What the eleventh-round probe of message shapes found in LangChain messages: ChatAnthropic's
// server-tool blocks (web search, web fetch, code execution, MCP results) were read as JSON text
// (counted with the encrypted pages, their server_tool_use reported unanswered, the pages sent to
// the summarizer); a ChatOpenAI call whose arguments did not parse, which ChatOpenAI still sends
// from `additional_kwargs.tool_calls`, was not seen (its ToolMessage an orphan); a `text-plain`
// block holding its text in `data` was counted as JSON and left out of the API view. Each test
// fails on the package before the fix (CC_PKG=/path/to/old/pkg/node.js runs it against another
// build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');
const count = (m) => cc.tokenCountWithEstimation(m);
const lines = (n, w = 'line') => Array.from({ length: n }, (_, i) => `${w} ${i}: some content of a file or command output here`).join('\n');
const near = (a, b, what) => assert.ok(Math.abs(a - b) <= b * 0.05, `${what}: ${a} vs ${b}`);
const summarizeInto = (box) => async (req) => { box.req = JSON.stringify(req); return '<summary>S</summary>'; };

// One ChatAnthropic turn that used web search, web fetch, code execution and an MCP server.
const serverBlocks = (i) => [
  { type: 'server_tool_use', id: `srv_${i}`, name: 'web_search', input: { query: `q${i}` } },
  { type: 'web_search_tool_result', tool_use_id: `srv_${i}`, index: 1, content: Array.from({ length: 4 }, (_, k) => ({
    type: 'web_search_result', url: `https://a/${k}`, title: `A${k}`, encrypted_content: 'E'.repeat(6000), page_age: null })) },
  { type: 'server_tool_use', id: `wf_${i}`, name: 'web_fetch', input: { url: 'https://a/0' } },
  { type: 'web_fetch_tool_result', tool_use_id: `wf_${i}`, content: { type: 'web_fetch_result', url: 'https://a/0',
    content: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: lines(40, 'page') } } } },
  { type: 'server_tool_use', id: `ce_${i}`, name: 'bash_code_execution', input: { command: 'ls' } },
  { type: 'bash_code_execution_tool_result', tool_use_id: `ce_${i}`, content: { type: 'bash_code_execution_result', stdout: lines(30, 'out'), stderr: '', return_code: 0, content: [] } },
  { type: 'mcp_tool_use', id: `mcp_${i}`, name: 'get_issue', server_name: 'gh', input: { n: i } },
  { type: 'mcp_tool_result', tool_use_id: `mcp_${i}`, is_error: false, content: [{ type: 'text', text: lines(20, 'issue') }] },
  { type: 'text', text: `Found ${i}.`, citations: [{ type: 'web_search_result_location', url: 'https://a/0', title: 'A0', encrypted_index: 'x', cited_text: 'c' }] },
];

function serverConversations() {
  const lc = [], an = [];
  for (let i = 0; i < 4; i++) {
    const q = `search ${i} ${lines(30)}`;
    lc.push(new HumanMessage(q), new AIMessage({ content: serverBlocks(i), response_metadata: { model_provider: 'anthropic' } }));
    an.push({ role: 'user', content: q }, { role: 'assistant', content: serverBlocks(i).map(({ index: _, ...b }) => b) });
  }
  lc.push(new HumanMessage('and now?'));
  an.push({ role: 'user', content: 'and now?' });
  return { lc, an };
}

test('ChatAnthropic server-tool blocks in an AIMessage count as the Anthropic blocks do', () => {
  const { lc, an } = serverConversations();
  near(count(lc), count(an), 'LangChain vs Anthropic');
  near(count(lc.map((m) => m.toDict())), count(an), 'stored LangChain vs Anthropic');
});

test('ChatAnthropic server-tool blocks: the API view keeps them, validateForApi finds them paired', () => {
  const { lc, an } = serverConversations();
  const v = cc.validateForApi(lc);
  assert.deepEqual(v.problems, []);
  const api = cc.toApiMessages(lc);
  assert.deepEqual(api[1].content.map((b) => b.type), an[1].content.map((b) => b.type));
  assert.equal('index' in api[1].content[1], false);
  assert.equal(count(api), count(an));
});

test('ChatAnthropic web search: the summary request leaves the encrypted pages out, as in Anthropic shape', async () => {
  const { lc } = serverConversations();
  const box = {};
  const r = await cc.compactConversation(lc, { model: 'claude-sonnet-4-5', summarize: summarizeInto(box) }, { keepLastUserMessage: true });
  assert.ok(!box.req.includes('EEEEEEEEEEEE'), 'encrypted page content sent to the summarizer');
  assert.ok(box.req.includes('out 29:') && box.req.includes('issue 19:'), 'code output and MCP result reach the summarizer');
  const out = cc.buildPostCompactMessages(r);
  assert.equal(out.at(-1).content, 'and now?');
});

// ChatOpenAI (Chat Completions) when a call's arguments do not parse (cut off at max_tokens):
// tool_calls [], the call in invalid_tool_calls, the raw call in additional_kwargs.tool_calls.
const raw = `{"path": "notes.md", "text": "${lines(60).replace(/\n/g, '\\n')}`;
const invalidTurn = () => new AIMessage({
  content: '', tool_calls: [],
  invalid_tool_calls: [{ type: 'invalid_tool_call', id: 'call_1', name: 'write', args: raw, error: 'Unterminated string' }],
  additional_kwargs: { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'write', arguments: raw } }] },
});

test('ChatOpenAI invalid tool call answered by a ToolMessage: counted and paired as ChatOpenAI sends it', () => {
  const lc = [new HumanMessage('write'), invalidTurn(), new ToolMessage({ tool_call_id: 'call_1', content: 'Error: arguments cut off', status: 'error' }),
    new AIMessage('sorry'), new HumanMessage('next')];
  const chat = [{ role: 'user', content: 'write' }, { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'write', arguments: raw } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'Error: arguments cut off' }, { role: 'assistant', content: 'sorry' }, { role: 'user', content: 'next' }];
  near(count(lc), count(chat), 'LangChain vs OpenAI Chat');
  assert.deepEqual(cc.validateForApi(lc).problems, []);
  const api = cc.toApiMessages(lc);
  assert.ok(api[1].content.some((b) => b.type === 'tool_use' && b.id === 'call_1'));
  assert.equal(api[2].content[0].tool_use_id, 'call_1');
});

test('LangChain tool_calls [] with no invalid call still means no call (additional_kwargs not read)', () => {
  const m = new AIMessage({ content: 'plain', tool_calls: [],
    additional_kwargs: { tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'x', arguments: '{}' } }] } });
  const v = cc.validateForApi([new HumanMessage('q'), m, new HumanMessage('next')]);
  assert.deepEqual(v.problems, []);
  const anth = new AIMessage({ content: '', tool_calls: [], invalid_tool_calls: [{ type: 'invalid_tool_call', id: 'toolu_1', name: 'w', args: '{"a', error: 'bad' }] });
  assert.deepEqual(cc.validateForApi([new HumanMessage('q'), anth, new HumanMessage('next')]).problems, []);
});

test('LangChain text-plain with its text in data (base64 or bytes): counted, sent and summarized as that text', async () => {
  const T = lines(300, 'NOTE');
  const ref = count([new HumanMessage({ content: [{ type: 'text', text: 'read' }, { type: 'text-plain', text: T, mimeType: 'text/plain' }] }), new AIMessage('ok')]);
  for (const data of [Buffer.from(T).toString('base64'), new Uint8Array(Buffer.from(T))]) {
    const first = [new HumanMessage({ content: [{ type: 'text', text: 'read' }, { type: 'text-plain', data, mimeType: 'text/plain', title: 'notes.txt' }] }), new AIMessage('ok')];
    near(count(first), ref, 'text-plain data vs text');
    const api = cc.toApiMessages(first);
    assert.deepEqual(api[0].content[1], { type: 'document', source: { type: 'text', media_type: 'text/plain', data: T }, title: 'notes.txt' });
    const box = {};
    await cc.compactConversation([...first, new HumanMessage(lines(1500)), new AIMessage('fine'), new HumanMessage('go on')],
      { model: 'claude-sonnet-4-5', summarize: summarizeInto(box) });
    assert.ok(box.req.includes('NOTE 7:'), "the file's text reaches the summarizer");
  }
});

// ChatOpenAI on the Responses API, invoked (not streamed: no response_metadata.output): of the
// built-in tools' items it keeps in additional_kwargs.tool_outputs it sends back only computer,
// MCP, code interpreter and image generation calls (convertMessagesToResponsesInput).
test('ChatOpenAI Responses tool_outputs: only the items ChatOpenAI sends back count when the response was not streamed', () => {
  const tools = Array.from({ length: 20 }, (_, i) => ({ name: `tool${i}`, description: `does thing ${i} ${'x'.repeat(300)}`, input_schema: { type: 'object', properties: { a: { type: 'string' } } } }));
  const mcpCall = (i) => ({ type: 'mcp_call', id: `mcp_${i}`, server_label: 'gh', name: 'tool1', arguments: '{}', output: lines(20) });
  const notSent = (i) => [{ type: 'mcp_list_tools', id: `mcpl_${i}`, server_label: 'gh', tools },
    { type: 'file_search_call', id: `fs_${i}`, status: 'completed', queries: ['q'], results: Array.from({ length: 10 }, (_, k) => ({ file_id: `f${k}`, filename: 'a.txt', score: 0.5, text: lines(10), attributes: {} })) }];
  const lc = [], resp = [], streamed = [], streamedResp = [];
  for (let i = 0; i < 5; i++) {
    const text = [{ type: 'text', text: `answer ${i}`, annotations: [] }];
    const msg = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `answer ${i}`, annotations: [] }] };
    lc.push(new HumanMessage(`q${i}`), new AIMessage({ content: text, additional_kwargs: { tool_outputs: [...notSent(i), mcpCall(i)] }, response_metadata: { model_provider: 'openai' } }));
    resp.push({ role: 'user', content: `q${i}` }, msg, mcpCall(i));
    // Streamed: response_metadata.output holds the whole output, which ChatOpenAI sends as it is.
    const output = [...notSent(i), mcpCall(i), msg];
    streamed.push(new HumanMessage(`q${i}`), new AIMessage({ content: text, additional_kwargs: { tool_outputs: [...notSent(i), mcpCall(i)] }, response_metadata: { model_provider: 'openai', output } }));
    streamedResp.push({ role: 'user', content: `q${i}` }, ...output);
  }
  near(count(lc), count(resp), 'invoked: LangChain vs what ChatOpenAI sends');
  near(count(streamed), count(streamedResp), 'streamed: LangChain vs what ChatOpenAI sends');
});
