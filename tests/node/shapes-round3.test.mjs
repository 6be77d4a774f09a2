// Messages of each ecosystem in forms their SDKs accept and that were misread: LangChain's
// dicts (tool calls as `{id, name, args}`, messages keyed by `type`), OpenAI refusals, media
// inside Anthropic server and MCP tool results, plain-text documents, LangChain messages
// built from Anthropic stream chunks, and the labels media get in a summary request.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessageChunk, HumanMessage, ToolMessage, AIMessage } from '@langchain/core/messages';
import * as cc from '../../pkg/node.js';

cc.setEnvironmentDefaults({});

const lines = (n, s) => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file`).join('\n');

// A summarizer that records the requests it gets; `sent()` is their text.
function recorder() {
  const calls = [];
  const f = async (req) => {
    calls.push(req);
    return { content: [{ type: 'text', text: '<summary>SUMMARY: work continues.</summary>' }], stop_reason: 'end_turn', usage: { input_tokens: 100, output_tokens: 20 } };
  };
  f.calls = calls;
  f.sent = () => calls.map((r) => r.messages.map((m) => `[${m.role}] ` + m.content.map((b) => b.text).join('\n')).join('\n---\n')).join('\n=====\n');
  return f;
}

const shapeOf = (msgs) => cc.toApiMessages(msgs).map((m) => [m.role, (typeof m.content === 'string' ? [{ type: 'text' }] : m.content).map((b) => b.type)]);

test('LangChain dicts with tool calls as {id, name, args} keep their calls in every reader', async () => {
  const dicts = [
    { role: 'user', content: 'read a.ts' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'read_file', args: { path: 'a.ts' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: lines(200, 'fileA') },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'next' },
  ];
  assert.deepEqual(shapeOf(dicts), [['user', ['text']], ['assistant', ['tool_use']], ['user', ['tool_result']], ['assistant', ['text']], ['user', ['text']]]);
  assert.deepEqual(cc.toApiMessages(dicts)[1].content[0], { type: 'tool_use', id: 'call_1', name: 'read_file', input: { path: 'a.ts' } });
  assert.deepEqual(cc.validateForApi(dicts), { valid: true, problems: [] });
  const micro = cc.microCompact(dicts, { keepRecent: 0, compactableTools: ['*'] });
  assert.deepEqual(micro.clearedToolUseIds, ['call_1']);
  assert.deepEqual(micro.messages[2], { role: 'tool', tool_call_id: 'call_1', content: '[Old tool result content cleared]' });
  // The call counts (its name and arguments), as OpenAI's form of the same call does.
  const openai = dicts.map((m, i) => (i === 1 ? { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } }] } : m));
  assert.equal(cc.tokenCountWithEstimation(dicts), cc.tokenCountWithEstimation(openai));
  // LangChain reads such dicts (and OpenAI's) as its messages: the shape option says so.
  assert.equal(cc.tokenCountWithEstimation(dicts, { shape: 'langchain' }), cc.tokenCountWithEstimation(dicts));
  assert.deepEqual(cc.validateForApi(dicts, { shape: 'langchain' }), { valid: true, problems: [] });
  const s = recorder();
  const r = await cc.compactConversation(dicts, { model: 'gpt-4.1', summarize: s, shape: 'langchain' });
  assert.match(s.sent(), /\[tool call read_file \(call_1\): \{"path":"a\.ts"\}\]/);
  assert.equal(typeof cc.buildPostCompactMessages(r)[0].content, 'string');
});

test('LangChain dicts keyed by type ({type: human | ai | tool | system}) are LangChain messages', async () => {
  const typed = [
    { type: 'system', content: 'Be brief.' },
    { type: 'human', content: 'read a.ts' },
    { type: 'ai', content: '', tool_calls: [{ id: 'c1', name: 'read_file', args: { path: 'a.ts' } }] },
    { type: 'tool', tool_call_id: 'c1', content: lines(300, 'fileA') },
    { type: 'ai', content: 'done' },
    { type: 'human', content: 'thanks' },
  ];
  // The same messages as {role} dicts (human → user, ai → assistant, the other types as roles).
  const plain = typed.map(({ type, ...rest }) => ({ role: { human: 'user', ai: 'assistant' }[type] ?? type, ...rest }));
  const n = cc.tokenCountWithEstimation(typed);
  assert.ok(n > 2000, `counted ${n}`);
  assert.equal(n, cc.tokenCountWithEstimation(plain));
  assert.equal(cc.tokenCountWithEstimation(typed, { shape: 'langchain' }), n);
  assert.deepEqual(cc.validateForApi(typed), { valid: true, problems: [] });
  const micro = cc.microCompact(typed, { keepRecent: 0, compactableTools: ['*'] });
  assert.deepEqual(micro.clearedToolUseIds, ['c1']);
  assert.deepEqual(micro.messages[3], { type: 'tool', tool_call_id: 'c1', content: '[Old tool result content cleared]' });
  assert.equal(micro.messages[2], typed[2]);
  const s = recorder();
  const r = await cc.compactConversation(typed, { model: 'gpt-4.1', summarize: s });
  assert.match(s.sent(), /\[tool call read_file \(c1\)/);
  const after = cc.buildPostCompactMessages(r);
  assert.deepEqual(after[0], typed[0], 'the system message stays first');
  assert.equal(after[1].type, 'human');
  assert.equal(typeof after[1].content, 'string');
  // A Claude Code system line (uuid, subtype) is still a transcript line.
  const line = { type: 'system', subtype: 'informational', content: 'note', uuid: 'u1', parentUuid: null, level: 'info' };
  assert.equal(cc.tokenCountWithEstimation([{ type: 'user', uuid: 'u0', message: { role: 'user', content: 'hi' } }, line]), 1);
});

test('an OpenAI Chat refusal counts and is the assistant turn it is', async () => {
  const m = [
    { role: 'user', content: 'Write a phishing email to my bank customers. '.repeat(20) },
    { role: 'assistant', content: null, refusal: "I'm sorry, I can't help with creating phishing emails. REFUSALTXT" },
    { role: 'user', content: 'Fine. Write a legit security notice instead. '.repeat(20) },
    { role: 'assistant', content: 'Dear customer, ... '.repeat(20) },
    { role: 'user', content: 'thanks' },
  ];
  const view = cc.toApiMessages(m);
  assert.deepEqual(view.map((x) => x.role), ['user', 'assistant', 'user', 'assistant', 'user']);
  assert.deepEqual(view[1].content, [{ type: 'text', text: m[1].refusal }]);
  assert.equal(cc.tokenCountWithEstimation([m[1]]), Math.round(m[1].refusal.length / 4));
  assert.equal(cc.tokenCountWithEstimation([m[1]], { shape: 'openai-chat' }), Math.round(m[1].refusal.length / 4));
  const s = recorder();
  await cc.compactConversation(m, { model: 'gpt-4.1', summarize: s });
  assert.ok(s.sent().includes('REFUSALTXT'));
});

test('media inside server and MCP tool results count as media and reach a summarizer as markers', async () => {
  const png = 'iVBORw0KGgo' + 'Q'.repeat(400_000);
  const pdf = 'JVBERi0xLjQK' + 'A'.repeat(400_000);
  const tail = [{ role: 'user', content: 'thanks, next step' }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'go' }];
  const cases = {
    web_fetch: [{ role: 'user', content: 'Summarize https://example.com/report.pdf' }, { role: 'assistant', content: [
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_fetch', input: { url: 'https://example.com/report.pdf' } },
      { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'web_fetch_result', url: 'https://example.com/report.pdf', retrieved_at: '2025-10-01T00:00:00Z', content: { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf }, title: 'report.pdf' } } },
      { type: 'text', text: 'Revenue grew 12%.' }] }, ...tail],
    mcp: [{ role: 'user', content: 'Screenshot the page' }, { role: 'assistant', content: [
      { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'browser_screenshot', server_name: 'playwright', input: {} },
      { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: false, content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] },
      { type: 'text', text: 'The page shows a login form.' }] }, ...tail],
    web_search: [{ role: 'user', content: 'search X' }, { role: 'assistant', content: [
      { type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_search', input: { query: 'X' } },
      { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_2', content: [{ type: 'web_search_result', url: 'https://a', title: 'A', encrypted_content: 'EqQB' + 'Q'.repeat(20_000), page_age: null }] },
      { type: 'text', text: 'X is true.' }] }, ...tail],
  };
  for (const [name, msgs] of Object.entries(cases)) {
    const n = cc.tokenCountWithEstimation(msgs);
    const media = name === 'web_search' ? 0 : 2000;
    assert.ok(n >= media && n < media + 200, `${name}: counted ${n}`);
    // The same from the typed reading a compaction makes (its count before).
    const s = recorder();
    const r = await cc.compactConversation(msgs, { model: 'claude-sonnet-4-5', summarize: s });
    assert.equal(r.preCompactTokenCount, n, name);
    const sent = s.sent();
    assert.ok(!sent.includes('Q'.repeat(200)) && !sent.includes('A'.repeat(200)), `${name}: base64 sent`);
    assert.ok(sent.length < 5000, `${name}: ${sent.length} characters sent`);
  }
  assert.match(await recorderText(cases.web_fetch), /\[document: application\/pdf, 293 KB\]/);
  assert.match(await recorderText(cases.web_search), /"url":"https:\/\/a"/);
});

// The summary request's text for `msgs` (compacted with a recorder).
function recorderText(msgs) {
  const s = recorder();
  return cc.compactConversation(msgs, { model: 'claude-sonnet-4-5', summarize: s }).then(() => s.sent());
}

test('plain-text documents count as their text and reach a summarizer as text', async () => {
  const text = Array.from({ length: 2000 }, (_, i) => `${i}: The quarterly report states revenue line ${i} grew by ${i % 17}%.`).join('\n');
  const b64 = Buffer.from(text).toString('base64');
  const tail = [{ role: 'assistant', content: 'Read it.' }, { role: 'user', content: 'What did line 3 do?' }];
  const reference = cc.tokenCountWithEstimation([{ role: 'user', content: [{ type: 'text', text }, { type: 'text', text: 'Read this' }] }, ...tail]);
  const cases = {
    'document source text': [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: text }, title: 'report.txt' }, { type: 'text', text: 'Read this' }] }, ...tail],
    'document source content': [{ role: 'user', content: [{ type: 'document', source: { type: 'content', content: [{ type: 'text', text }] } }, { type: 'text', text: 'Read this' }] }, ...tail],
    'tool_result holding a text document': [{ role: 'user', content: 'Read this' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: text } }] }] }, ...tail],
    'AI SDK file part text/plain': [{ role: 'user', content: [{ type: 'file', data: b64, mediaType: 'text/plain', filename: 'report.txt' }, { type: 'text', text: 'Read this' }] }, ...tail],
    'UIMessage file part data:text/plain': [{ id: '1', role: 'user', parts: [{ type: 'file', mediaType: 'text/plain', url: 'data:text/plain;base64,' + b64 }, { type: 'text', text: 'Read this' }] },
      { id: '2', role: 'assistant', parts: [{ type: 'text', text: 'Read it.' }] }, { id: '3', role: 'user', parts: [{ type: 'text', text: 'What did line 3 do?' }] }],
  };
  for (const [name, msgs] of Object.entries(cases)) {
    const n = cc.tokenCountWithEstimation(msgs);
    assert.ok(Math.abs(n - reference) < 60, `${name}: counted ${n}, the text as text ${reference}`);
    const sent = await recorderText(msgs);
    assert.ok(sent.includes('line 3 grew by 3%'), `${name}: the summarizer did not see the text`);
    // Bounded as a long tool result is (40,000 characters, cut in the middle).
    assert.ok(!sent.includes('line 1000 grew') && sent.includes('characters left out'), name);
  }
  // The AI SDK's text file reaches the Anthropic form as the plain-text document it is.
  const doc = cc.toApiMessages(cases['AI SDK file part text/plain'])[0].content[0];
  assert.deepEqual(doc, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: text }, title: 'report.txt' });
});

test('a LangChain message built from Anthropic stream chunks reads its call from tool_calls', async () => {
  const rm = { model_provider: 'anthropic' };
  const chunks = [
    new AIMessageChunk({ content: [], id: 'msg_01', response_metadata: { ...rm, usage: {} } }),
    new AIMessageChunk({ content: [{ index: 0, type: 'text', text: '' }], response_metadata: rm }),
    new AIMessageChunk({ content: [{ index: 0, type: 'text', text: 'Reading it now.' }], response_metadata: rm }),
    new AIMessageChunk({ content: [{ index: 1, type: 'tool_use', id: 'toolu_1', name: 'read_file', input: '' }], tool_call_chunks: [{ id: 'toolu_1', index: 1, name: 'read_file', args: '' }], response_metadata: rm }),
    new AIMessageChunk({ content: [{ index: 1, input: '{"path":', type: 'input_json_delta' }], tool_call_chunks: [{ index: 1, args: '{"path":' }], response_metadata: rm }),
    new AIMessageChunk({ content: [{ index: 1, input: '"src/a.ts"}', type: 'input_json_delta' }], tool_call_chunks: [{ index: 1, args: '"src/a.ts"}' }], response_metadata: rm }),
  ];
  const msg = chunks.reduce((a, b) => a.concat(b));
  assert.deepEqual(msg.tool_calls.map((c) => c.args), [{ path: 'src/a.ts' }]);
  const conv = [new HumanMessage('read a.ts'), msg, new ToolMessage({ tool_call_id: 'toolu_1', content: 'export const a = 1;' }), new AIMessage('a = 1 '.repeat(200)), new HumanMessage('ok')];
  const view = cc.toApiMessages(conv)[1].content;
  assert.deepEqual(view.map((b) => b.type), ['text', 'tool_use']);
  assert.deepEqual(view[1].input, { path: 'src/a.ts' });
  // Counted as the same call sent whole (the deltas count nothing).
  const whole = new AIMessage({ content: [{ type: 'text', text: 'Reading it now.' }, { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'src/a.ts' } }], tool_calls: msg.tool_calls });
  assert.equal(cc.tokenCountWithEstimation([conv[0], msg]), cc.tokenCountWithEstimation([conv[0], whole]));
  // The call's path is known to microCompact's reading of the conversation (its input).
  const micro = cc.microCompact(conv, { keepRecent: 0, compactableTools: ['*'] });
  assert.ok(micro.messages.length === conv.length);
  const s = recorder();
  await cc.compactConversation(conv, { model: 'claude-sonnet-4-5', summarize: s });
  const sent = s.sent();
  assert.match(sent, /\[tool call read_file \(toolu_1\): \{"path":"src\/a\.ts"\}\]/);
  assert.ok(!sent.includes('input_json_delta'));
});

test('media labels in a summary request: binary data by its size, file ids and images without a type as they are', async () => {
  const png = new Uint8Array(300_000).fill(7);
  const msgs = [
    { role: 'user', content: [{ type: 'text', text: 'Look' }, { type: 'image', image: png, mediaType: 'image/png' }, { type: 'file', data: Buffer.from(png), mediaType: 'application/pdf', filename: 'spec.pdf' }, { type: 'image', image: png.buffer }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'fetch', input: {} }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'fetch', output: { type: 'content', value: [{ type: 'file-id', fileId: 'file_123' }, { type: 'image-file-id', fileId: 'file_456' }] } }] },
    { role: 'assistant', content: 'ok '.repeat(300) }, { role: 'user', content: 'next' },
  ];
  const sent = await recorderText(msgs);
  assert.ok(sent.includes('[image: image/png, 293 KB]\n[document: application/pdf, 293 KB]\n[image: 293 KB]'), sent.slice(0, 300));
  assert.ok(sent.includes('[tool result for c1]\n[document]\n[image]'), sent);
  // The Anthropic form holds the bytes (as base64) and the file ids.
  const view = cc.toApiMessages(msgs);
  assert.equal(view[0].content[1].source.data, Buffer.from(png).toString('base64'));
  assert.deepEqual(view[2].content[0].content, [{ type: 'document', source: { type: 'file', file_id: 'file_123' } }, { type: 'image', source: { type: 'file', file_id: 'file_456' } }]);
  // A PNG without a media type is told by its first bytes.
  const sniffed = cc.toApiMessages([{ role: 'user', content: [{ type: 'image', image: 'iVBORw0KGgoAAAA' }] }]);
  assert.equal(sniffed[0].content[0].source.media_type, 'image/png');
});

test('OpenAI Responses reasoning items stay with the call or answer after them in the kept messages (the API refuses a call without its reasoning)', async () => {
  const items = [{ role: 'developer', content: 'agent' }];
  const big = (n, s) => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file`).join('\n');
  for (let r = 0; r < 60; r++) {
    items.push({ role: 'user', content: `task ${r}: update module ${r}` });
    items.push({ type: 'reasoning', id: `rs_${r}a`, summary: [{ type: 'summary_text', text: `thinking about ${r}` }], encrypted_content: 'gAAA' + 'x'.repeat(2000) });
    items.push({ type: 'function_call', id: `fc_${r}`, call_id: `call_${r}`, name: 'read_file', arguments: JSON.stringify({ path: `src/m${r}.ts` }), status: 'completed' });
    items.push({ type: 'function_call_output', call_id: `call_${r}`, output: big(60, `m${r}`) });
    items.push({ type: 'reasoning', id: `rs_${r}b`, summary: [], encrypted_content: 'gAAA' + 'y'.repeat(500) });
    items.push({ type: 'message', id: `msg_${r}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `Module ${r} updated.`, annotations: [] }] });
  }
  const r = await cc.trySessionMemoryCompaction(items, { model: 'gpt-5', sessionMemory: 'Modules 0..47 updated.' });
  const kept = r.messagesToKeep.filter((m) => m.role !== 'developer');
  const first = items.indexOf(kept[0]);
  assert.ok(first > 0);
  // Exactly the caller's items from the first kept one on, in order, the same objects.
  assert.deepEqual(kept, items.slice(first));
  assert.ok(kept.filter((m) => m.type === 'reasoning').length > 10);
  assert.deepEqual(cc.validateForApi(cc.buildPostCompactMessages(r)), { valid: true, problems: [] });
});
