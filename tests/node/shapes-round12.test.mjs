// Round 12 shapes probe (/work/probe12-shapes, N1-N4): each test fails on the package of
// ff62f81 and passes after its fix.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as cc from '../../pkg/node.js';
import { runToolLoop } from '../../pkg/agents/anthropic.js';
import { runChatToolLoop } from '../../pkg/agents/openai.js';

const lines = (n, s) => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const summarize = async () => '<summary>S</summary>';

test('N1: an AI SDK file part whose data is a URL object of a data: URL reads as the data it holds', async () => {
  const text = lines(400, 'file');
  const b64 = Buffer.from(text).toString('base64');
  const conv = (data) => [
    { role: 'user', content: [{ type: 'text', text: 'read' }, { type: 'file', data, mediaType: 'text/plain', filename: 'f.txt' }] },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'next' },
  ];
  const asString = conv(`data:text/plain;base64,${b64}`);
  const asUrl = conv(new URL(`data:text/plain;base64,${b64}`));
  // Counted as its text (before: a flat 2,003 against 5,575).
  assert.equal(cc.tokenCountWithEstimation(asUrl), cc.tokenCountWithEstimation(asString));
  assert.deepEqual(cc.toApiMessages(asUrl), cc.toApiMessages(asString));
  // The summarizer reads its text.
  let request;
  await cc.compactConversation(asUrl, { model: 'claude-sonnet-4-5', summarize: async (q) => { request = q; return '<summary>S</summary>'; } });
  assert.match(JSON.stringify(request.messages), /file 399/);
  // An image so given is base64, never a url source holding a data: URL.
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
  const image = cc.toApiMessages([{ role: 'user', content: [{ type: 'image', image: new URL(`data:image/png;base64,${png}`) }] }])[0].content[0];
  assert.deepEqual(image, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } });
  // An http(s) URL stays a url source.
  const web = cc.toApiMessages([{ role: 'user', content: [{ type: 'image', image: new URL('https://example.com/a.png') }] }])[0].content[0];
  assert.deepEqual(web.source, { type: 'url', url: 'https://example.com/a.png' });
});

test('N2: an AI SDK tool output file-url without a media type is a document', () => {
  const msgs = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 't', input: {} }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 't', output: { type: 'content', value: [
      { type: 'file-url', url: 'https://example.com/report.pdf' },
      { type: 'file-url', url: 'https://example.com/chart.png', mediaType: 'image/png' },
    ] } }] },
  ];
  const [doc, img] = cc.toApiMessages(msgs)[2].content[0].content;
  assert.deepEqual(doc, { type: 'document', source: { type: 'url', url: 'https://example.com/report.pdf' } });
  assert.equal(img.type, 'image');
  assert.equal(cc.validateForApi(msgs).valid, true);
});

test('N3: runChatToolLoop runs an OpenAI custom (free-form) tool with its input text', async () => {
  const input = '*** Begin Patch\n+hello\n*** End Patch';
  let n = 0;
  const client = { chat: { completions: { create: async () => {
    n += 1;
    if (n === 1) {
      return { id: 'c1', choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'custom', custom: { name: 'apply_patch', input } }] }, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 50, completion_tokens: 10, total_tokens: 60 } };
    }
    return { id: 'c2', choices: [{ message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }], usage: { prompt_tokens: 80, completion_tokens: 2, total_tokens: 82 } };
  } } } };
  let got;
  const r = await runChatToolLoop({
    client, summarize,
    messages: [{ role: 'user', content: 'patch it' }],
    request: { model: 'gpt-5', tools: [{ type: 'custom', custom: { name: 'apply_patch' } }] },
    tools: { apply_patch: (text, info) => { got = [text, info.id]; return 'applied'; } },
  });
  assert.deepEqual(got, [input, 'call_1']);
  assert.deepEqual(r.messages.find((m) => m.role === 'tool'), { role: 'tool', tool_call_id: 'call_1', content: 'applied' });
  assert.equal(cc.validateForApi(r.messages).valid, true);
});

test('N4: runToolLoop goes on after a pause at the API\'s own compaction, the latest request put back after the block', async () => {
  const requests = [];
  const replies = [
    { content: [{ type: 'text', text: 'reading' }, { type: 'tool_use', id: 'tu_1', name: 'read', input: { path: 'a' } }], stop_reason: 'tool_use', usage: { input_tokens: 60000, output_tokens: 20 } },
    { content: [{ type: 'compaction', content: 'SUMMARY: the user asked to fix the test; file a was read.', encrypted_content: null }], stop_reason: 'compaction', usage: { input_tokens: 0, output_tokens: 0, iterations: [{ type: 'compaction', input_tokens: 60100, output_tokens: 300 }] } },
    { content: [{ type: 'text', text: 'fixed' }], stop_reason: 'end_turn', usage: { input_tokens: 400, output_tokens: 5 } },
  ];
  const client = { messages: { create: async (body) => {
    requests.push(structuredClone(body.messages));
    return { id: `m${requests.length}`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', ...replies[requests.length - 1] };
  } } };
  const compactor = new cc.Compactor({ model: 'claude-sonnet-4-5', summarize });
  compactor.push({ role: 'user', content: 'Fix the failing test' });
  const r = await runToolLoop({
    client, compactor,
    request: { model: 'claude-sonnet-4-5', max_tokens: 1024, context_management: cc.buildApiContextManagement({ compact: true, pauseAfterCompaction: true, compactTriggerInputTokens: 60000 }) },
    tools: { read: () => 'contents of a' },
  });
  assert.equal(requests.length, 3);
  assert.equal(r.message.content[0].text, 'fixed');
  // The request after the pause: the block first (what came before it the API ignores, and
  // toApiMessages leaves out), then the latest request and the turn's calls and results.
  const third = requests[2];
  assert.equal(third[0].content[0].type, 'compaction');
  assert.deepEqual(third.slice(1).map((m) => m.role), ['user', 'assistant', 'user']);
  assert.match(JSON.stringify(third[1]), /Fix the failing test/);
  assert.equal(cc.validateForApi(third).valid, true);
  // The count starts at the block (estimated: the paused reply's usage leaves the compaction out).
  assert.ok(compactor.tokenCount() < 1000);
});

test('N5: the user messages OpenAI\'s /responses/compact keeps before its compaction item are counted and never dropped', async () => {
  const spec = `FIRST-REQUEST build the importer. ${lines(300, 'requirement')}`;
  const item = { type: 'compaction', id: 'cmp_1', encrypted_content: `gAAAAB${'x'.repeat(400)}` };
  // What `POST /v1/responses/compact` returns (user messages kept, then one compaction item),
  // and the turn after it.
  const window = [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: spec }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'SECOND-REQUEST also add tests' }] },
    item,
  ];
  const conv = [...window,
    { type: 'function_call', call_id: 'c9', name: 'shell', arguments: '{"cmd":"ls"}' },
    { type: 'function_call_output', call_id: 'c9', output: lines(200, 'listing') },
    { role: 'user', content: 'LATEST go on' },
  ];
  const first = cc.tokenCountWithEstimation([window[0]]);
  const all = cc.tokenCountWithEstimation(conv);
  // Before: 1,936 (from the item on), less than the first message alone (5,353).
  assert.ok(all > first, `${all} > ${first}`);
  assert.equal(cc.shouldAutoCompact(conv, 'gpt-5'), false);
  const c = new cc.Compactor({ model: 'gpt-5', summarize });
  c.pushMany(conv);
  assert.equal(c.tokenCount(), all);
  assert.match(JSON.stringify(cc.toApiMessages(conv)), /FIRST-REQUEST/);
  // A compaction of the library summarizes them (before: neither in the output nor in the
  // summary request) and keeps the provider's item, unchanged, in front.
  let request;
  const result = await cc.compactConversation(conv, { model: 'gpt-5', summarize: async (q) => { request = q; return '<summary>S</summary>'; } }, { keepLastUserMessage: true });
  assert.match(JSON.stringify(request.messages), /FIRST-REQUEST/);
  assert.match(JSON.stringify(request.messages), /SECOND-REQUEST/);
  const out = cc.buildPostCompactMessages(result);
  assert.equal(out[0], item);
  assert.equal(out.at(-1).content, 'LATEST go on');
  assert.equal(cc.validateForApi(out).valid, true);
  // The server-side compaction (`context_management`), whose item follows the turns it
  // replaced: the context still starts at the item.
  const served = [
    { role: 'user', content: spec },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'working' }] },
    { role: 'user', content: 'go on' },
    item,
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] },
  ];
  assert.ok(cc.tokenCountWithEstimation(served) < first);
});
