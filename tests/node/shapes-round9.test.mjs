// What a ninth probe of other ecosystems' messages found: ChatOpenAI (Responses API) keeps the
// reasoning and built-in tool items it sends back in an AIMessage's additional_kwargs (counted
// 0, never summarized); a UIMessage call whose input failed to parse lost the text the model
// wrote (`rawInput`); LangChain's `additional_kwargs.reasoning_content` was not read; an OpenAI
// Chat reply's `reasoning_content` counted only when something else showed the Chat shape; a
// cleared LangChain ToolMessage lost its `metadata`. Each test fails on the package before the
// fix (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage, ToolMessage, mapChatMessagesToStoredMessages } from '@langchain/core/messages';
import { convertToModelMessages } from 'ai';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const big = (n, s = 'line') => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const count = (m, o) => cc.tokenCountWithEstimation(m, o);
// The summary request a compaction of `msgs` sends (as JSON).
const summaryRequest = async (msgs, model = 'gpt-5') => {
  let seen;
  await cc.compactConversation(msgs, { model, summarize: async (req) => { seen = JSON.stringify(req.messages); return '<summary>s</summary>'; } });
  return seen;
};
// Every LangChain form of `msgs`: instances, stored, serialized.
const lcForms = (msgs) => ({ instances: msgs, stored: mapChatMessagesToStoredMessages(msgs), serialized: JSON.parse(JSON.stringify(msgs)) });

// ---- N2: ChatOpenAI on the Responses API ----------------------------------------------------
// @langchain/openai (converters/responses.ts, convertResponsesMessageToAIMessage) keeps the
// response's reasoning item in additional_kwargs.reasoning, every built-in tool item in
// additional_kwargs.tool_outputs, and the whole output in response_metadata.output; its
// convertMessagesToResponsesInput sends them back as those items.

const B = big(100);
const mcp = { type: 'mcp_call', id: 'mcp_1', server_label: 'gh', name: 'get_issue', arguments: '{"n":1}', output: B, status: 'completed' };
const ci = { type: 'code_interpreter_call', id: 'ci_1', code: big(40, 'code'), container_id: 'cntr_1', outputs: [{ type: 'logs', logs: big(40, 'log') }], status: 'completed' };
const answerItem = { type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Here is the issue.', annotations: [] }] };
const near = (a, b, what) => assert.ok(Math.abs(a - b) <= Math.max(3, b * 0.01), `${what}: ${a} vs ${b} as Responses items`);

test('N2: an AIMessage holding encrypted reasoning, an MCP call and a code interpreter call in additional_kwargs counts as the Responses items, in every LangChain form', () => {
  const rs = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: Buffer.from(B).toString('base64') };
  const items = [{ role: 'user', content: 'What does issue 1 say?' }, rs, mcp, ci, answerItem];
  const ai = new AIMessage({ id: 'msg_1', content: [{ type: 'text', text: 'Here is the issue.', annotations: [] }], additional_kwargs: { reasoning: rs, tool_outputs: [mcp, ci] }, response_metadata: { model_provider: 'openai' } });
  const n = count(items);
  assert.ok(n > 4000, `premise: the items count ${n}`);
  for (const [form, msgs] of Object.entries(lcForms([new HumanMessage('What does issue 1 say?'), ai]))) near(count(msgs), n, form);
});

test('N2: a streamed turn whose items are also in the content or tool_calls (reasoning summary, generated image, computer call) counts each once, as the Responses items', () => {
  const rs = { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: big(30, 'thought') }], encrypted_content: 'e'.repeat(6000) };
  const img = { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: 'iVBORw0KGgo'.repeat(2000) };
  const comp = { type: 'computer_call', id: 'cu_1', call_id: 'call_c', action: { type: 'screenshot' }, status: 'completed', pending_safety_checks: [] };
  const items = [{ role: 'user', content: 'go' }, rs, mcp, img, comp, answerItem];
  const ai = new AIMessage({
    content: [{ type: 'reasoning', reasoning: rs.summary[0].text }, { type: 'text', text: 'Here is the issue.' }, { type: 'image', mimeType: 'image/png', data: img.result, id: 'ig_1' }],
    tool_calls: [{ id: 'call_c', name: 'computer_use', args: { action: { type: 'screenshot' } } }],
    additional_kwargs: { reasoning: rs, tool_outputs: [mcp, img, comp] },
  });
  near(count([new HumanMessage('go'), ai]), count(items), 'LangChain');
});

test('N2: the reasoning items of response_metadata.output (several in one response) count as the Responses items', () => {
  const r1 = { type: 'reasoning', id: 'rs_a', summary: [], encrypted_content: 'a'.repeat(8000) };
  const r2 = { type: 'reasoning', id: 'rs_b', summary: [], encrypted_content: 'b'.repeat(8000) };
  const fc = { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'lookup', arguments: '{}' };
  const items = [{ role: 'user', content: 'go' }, r1, fc, r2, answerItem, { type: 'function_call_output', call_id: 'c1', output: 'ok' }];
  const ai = new AIMessage({ content: [{ type: 'text', text: 'Here is the issue.' }], tool_calls: [{ id: 'c1', name: 'lookup', args: {} }],
    additional_kwargs: { reasoning: r2 }, response_metadata: { model_provider: 'openai', output: [r1, fc, r2, answerItem] } });
  near(count([new HumanMessage('go'), ai, new ToolMessage({ tool_call_id: 'c1', content: 'ok' })]), count(items), 'LangChain');
});

test('N2: the summary request and the API view carry the MCP output and the code as the Responses items do; microCompact leaves the AIMessage as it is', async () => {
  const rs = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'enc'.repeat(500) };
  const ai = new AIMessage({ content: [{ type: 'text', text: 'Reading it.' }], tool_calls: [{ id: 'c1', name: 'read_file', args: { path: 'a' } }],
    additional_kwargs: { reasoning: rs, tool_outputs: [mcp, ci] } });
  const msgs = [new HumanMessage('What does issue 1 say?'), ai, new ToolMessage({ tool_call_id: 'c1', content: big(300) }), new AIMessage('done'), new HumanMessage('ok ' + big(5))];
  const seen = await summaryRequest(msgs);
  assert.ok(seen.includes('line 42: some content'), 'the MCP output reaches the summarizer');
  assert.ok(seen.includes('code 7: some content'), 'the code interpreter code reaches the summarizer');
  assert.ok(!seen.includes('encencenc'), 'no encrypted reasoning in the summary request');
  // The same as the Responses items give.
  const items = [{ role: 'user', content: 'What does issue 1 say?' }, rs, mcp, ci, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Reading it.' }] },
    { type: 'function_call', call_id: 'c1', name: 'read_file', arguments: '{"path":"a"}' }, { type: 'function_call_output', call_id: 'c1', output: big(300) },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] }, { role: 'user', content: 'ok ' + big(5) }];
  assert.equal(seen.length, (await summaryRequest(items)).length);
  const api = cc.toApiMessages(msgs)[1].content;
  assert.deepEqual(api.map((b) => b.type), ['redacted_thinking', 'text', 'text', 'text', 'tool_use']);
  assert.ok(api[2].text.includes('"mcp_call"') && api[3].text.includes('"code_interpreter_call"'));
  assert.equal(cc.validateForApi(msgs).valid, true);
  const r = cc.microCompact(msgs, { keepRecent: 0 });
  assert.deepEqual(r.clearedToolUseIds, ['c1']);
  assert.equal(r.messages[1], ai);
});

// ---- N1: a UIMessage call whose input did not parse ------------------------------------------

test('N1: a UIMessage tool part in output-error with rawInput (input undefined) counts and is sent as convertToModelMessages sends it', async () => {
  const raw = '{"path": "notes.md", "content": "' + 'draft text of the note. '.repeat(300); // cut off: not JSON
  const ui = [
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'write the notes' }] },
    { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'tool-write', toolCallId: 'c1', state: 'output-error', input: undefined, rawInput: raw, errorText: 'Invalid input for tool write: JSON parsing failed' }] },
    { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'try again' }] },
  ];
  const model = await convertToModelMessages(ui);
  assert.equal(model[1].content[0].input, raw, 'premise: the AI SDK sends rawInput');
  const nModel = count(model);
  assert.ok(Math.abs(count(ui) - nModel) <= nModel * 0.02, `UIMessage[] ${count(ui)} vs ModelMessage[] ${nModel}`);
  assert.deepEqual(cc.toApiMessages(ui)[1].content[0].input, { arguments: raw });
  const seen = await summaryRequest([...ui, { id: 'u3', role: 'assistant', parts: [{ type: 'text', text: 'ok' }] }, { id: 'u4', role: 'user', parts: [{ type: 'text', text: 'next' }] }], 'claude-sonnet-4-5');
  assert.ok(seen.includes('draft text of the note. draft text'), 'the summarizer sees what the model wrote');
});

// ---- N3: LangChain's additional_kwargs.reasoning_content --------------------------------------

test('N3: an AIMessage whose additional_kwargs.reasoning_content holds the reasoning (ChatOpenAI on an OpenAI-compatible server, ChatDeepSeek) counts as the OpenAI Chat message, in every LangChain form', () => {
  const R = big(150);
  const chat = [
    { role: 'user', content: 'Plan the migration.' },
    { role: 'assistant', content: null, reasoning_content: R, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_schema', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'schema v3' },
  ];
  const lc = [
    new HumanMessage('Plan the migration.'),
    new AIMessage({ content: '', additional_kwargs: { reasoning_content: R }, tool_calls: [{ id: 'call_1', name: 'read_schema', args: {} }], response_metadata: { model_provider: 'openai' } }),
    new ToolMessage({ tool_call_id: 'call_1', content: 'schema v3' }),
  ];
  const n = count(chat);
  for (const [form, msgs] of Object.entries(lcForms(lc))) assert.ok(Math.abs(count(msgs) - n) <= n * 0.02, `${form}: ${count(msgs)} vs ${n}`);
  const api = cc.toApiMessages(lc)[1].content;
  assert.deepEqual(api.map((b) => b.type), ['thinking', 'tool_use']);
  assert.equal(api[0].thinking, R);
});

// ---- N5: a Chat reply's reasoning_content shows the Chat shape --------------------------------

test('N5: an OpenAI Chat reply with reasoning_content counts the same whether the shape is declared or not, and before a tool turn as after', () => {
  const R = big(150);
  const chat = [{ role: 'user', content: 'Plan the migration.' }, { role: 'assistant', content: 'Here is the plan.', reasoning_content: R }, { role: 'user', content: 'next' }];
  const plain = chat.map((m, i) => (i === 1 ? { role: 'assistant', content: 'Here is the plan.' } : m));
  assert.equal(count(chat), count(chat, { shape: 'openai-chat' }));
  assert.ok(count(chat) - count(plain) > 1500, `the reasoning adds ${count(chat) - count(plain)}`);
  const turn = [{ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'call_1', content: 'x' }];
  assert.equal(count([...chat, ...turn]) - count([...plain, ...turn]), count(chat) - count(plain));
  assert.deepEqual(cc.toApiMessages(chat), cc.toApiMessages(chat, { shape: 'openai-chat' }));
});

// ---- N4: a LangChain ToolMessage's metadata -----------------------------------------------------

test('N4: microCompact and stripImagesFromMessages keep a LangChain ToolMessage\'s metadata', () => {
  const meta = { source: 'cache', elapsedMs: 12 };
  const msgs = [
    new HumanMessage('read a'),
    new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'read_file', args: { path: 'a' } }] }),
    new ToolMessage({ tool_call_id: 'c1', content: big(300), name: 'read_file', id: 'tm1', metadata: meta }),
    new AIMessage('done'),
    new HumanMessage('more'),
  ];
  const r = cc.microCompact(msgs, { keepRecent: 0 });
  assert.deepEqual(r.clearedToolUseIds, ['c1']);
  assert.ok(r.messages[2] instanceof ToolMessage);
  assert.deepEqual(r.messages[2].metadata, meta);
  assert.deepEqual(r.messages[2].lc_kwargs.metadata, meta);
  const s = cc.stripImagesFromMessages([new HumanMessage('look'), new AIMessage({ content: '', tool_calls: [{ id: 'c2', name: 'screenshot', args: {} }] }),
    new ToolMessage({ tool_call_id: 'c2', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }], metadata: meta })]);
  assert.deepEqual(s[2].metadata, meta);
  assert.ok(!JSON.stringify(s[2].content).includes('base64'));
});

// ---- Review of the ninth round: LangChain's standard form, reasoning_content beside other shapes ----
// ChatOpenAI with `outputVersion: 'v1'` (and the integrations built on it: ChatDeepSeek, ChatOllama,
// OpenRouter) returns an AIMessage whose content is its standard blocks (`contentBlocks`: the
// reasoning, the built-in tools' calls) with `response_metadata.output_version: 'v1'`, and keeps
// additional_kwargs as they were. @langchain/openai (convertMessagesToResponsesInput,
// convertMessagesToCompletionsMessageParams) sends such a message from its content blocks alone.
const v1 = (m) => new AIMessage({ ...m, content: m.contentBlocks, response_metadata: { ...m.response_metadata, output_version: 'v1' } });
// The same message without what additional_kwargs keeps.
const bare = (m) => new AIMessage({ content: m.content, tool_calls: m.tool_calls, response_metadata: m.response_metadata });
// `a` counts as `b` in every LangChain form.
const sameInEveryForm = (a, b) => {
  const fa = lcForms(a), fb = lcForms(b);
  for (const form of Object.keys(fa)) assert.equal(count(fa[form]), count(fb[form]), form);
};

test('R1: a ChatOpenAI AIMessage in the v1 standard form (Responses API) counts and is sent from its content alone: its reasoning once, the MCP output ChatOpenAI does not send not at all', async () => {
  const think = 'step '.repeat(800);
  const rs = { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: think }] };
  const raw = new AIMessage({ content: [{ type: 'text', text: 'done', annotations: [] }], additional_kwargs: { reasoning: rs, tool_outputs: [mcp] }, response_metadata: { model_provider: 'openai' } });
  const m = v1(raw);
  assert.deepEqual(m.content.map((b) => b.type), ['reasoning', 'text', 'server_tool_call'], 'premise: the content holds the reasoning and the MCP call');
  assert.ok(m.additional_kwargs.reasoning && m.additional_kwargs.tool_outputs, 'premise: additional_kwargs kept');
  const conv = (a) => [new HumanMessage('q'), a];
  const n = count(conv(bare(m)));
  assert.ok(n > 900, `the reasoning counts (${n})`);
  sameInEveryForm(conv(m), conv(bare(m)));
  const api = cc.toApiMessages(conv(m))[1].content;
  assert.equal(api.filter((b) => b.type === 'thinking').length, 1, 'the reasoning is sent once');
  assert.ok(!JSON.stringify(api).includes('line 42: some content'), 'the MCP output ChatOpenAI does not send is not sent');
  // A v0 message (the default) still counts what ChatOpenAI sends back from additional_kwargs.
  assert.ok(count(conv(raw)) - count(conv(bare(raw))) > 1000);
  // Without output_version (lost on the way), the reasoning item of additional_kwargs is the
  // content's reasoning part of the same id: counted once.
  const lost = new AIMessage({ ...m, response_metadata: { model_provider: 'openai' } });
  const noItem = new AIMessage({ ...m, additional_kwargs: { tool_outputs: [mcp] }, response_metadata: { model_provider: 'openai' } });
  assert.equal(count(conv(lost)), count(conv(noItem)));
});

test('R2: an AIMessage in the v1 standard form of an OpenAI-compatible server (reasoning_content in its content too) counts the reasoning once', () => {
  const rc = 'thinking hard. '.repeat(300);
  const raw = new AIMessage({ content: 'The answer is 42', additional_kwargs: { reasoning_content: rc }, response_metadata: { model_provider: 'deepseek' } });
  const m = v1(raw);
  assert.deepEqual(m.content.map((b) => b.type), ['reasoning', 'text'], 'premise: the content holds the reasoning');
  const conv = (a) => [new HumanMessage('q'), a];
  sameInEveryForm(conv(m), conv(bare(m)));
  // As the v0 message with the same reasoning counts (the reasoning once).
  assert.ok(Math.abs(count(conv(m)) - count(conv(raw))) <= 10, `${count(conv(m))} vs ${count(conv(raw))}`);
  const api = cc.toApiMessages(conv(m))[1].content;
  assert.equal(api.filter((b) => b.type === 'thinking').length, 1);
});

test('R3: an assistant message of another shape that carries a reasoning_content field reads as that shape (no MIXED_SHAPES), as without the field', () => {
  const cases = {
    anthropic: [
      { role: 'user', content: 'read it' },
      { role: 'assistant', reasoning_content: 'I should read the file.', content: [{ type: 'text', text: 'reading' }, { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'file text' }] },
    ],
    aiSdkModelMessage: [
      { role: 'user', content: 'read it' },
      { role: 'assistant', reasoning_content: 'hmm', content: [{ type: 'tool-call', toolCallId: 't1', toolName: 'Read', input: { file_path: '/a' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'Read', output: { type: 'text', value: 'file text' } }] },
    ],
    responsesItems: [
      { type: 'message', role: 'user', content: 'hi' },
      { type: 'message', role: 'assistant', reasoning_content: 'hmm', content: [{ type: 'output_text', text: 'hello' }] },
    ],
  };
  for (const [name, msgs] of Object.entries(cases)) {
    const without = msgs.map(({ reasoning_content, ...m }) => m);
    assert.equal(count(msgs), count(without), name);
    assert.deepEqual(cc.toApiMessages(msgs), cc.toApiMessages(without), name);
    assert.equal(cc.validateForApi(msgs).valid, cc.validateForApi(without).valid, name);
  }
});
