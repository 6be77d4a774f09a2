// What the seventeenth probe of other ecosystems' shapes found. Each test fails on the package
// before the fix (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const big = (n, s = 'line') => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const summarize = async () => '<summary>Work so far.</summary>';

// ---- N1: a text file the OpenAI Responses API reads as text -------------------------------
// The Responses API takes non-PDF files as `input_file` (text, code, markdown, CSV) and gives
// the model their text. Such a file counted as one medium (2,000 tokens) whatever its size,
// and the summarizer was sent `[document: text/plain, 178 KB]` instead of the text.

const CODE = Array.from({ length: 3000 }, (_, i) => `line ${i}: const value${i} = compute(${i}); // some code here`).join('\n');
const B64 = Buffer.from(CODE).toString('base64');
const fileItem = (type = 'text/plain') => ({ type: 'input_file', filename: 'main.js', file_data: `data:${type};base64,${B64}` });

const responsesForm = [
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'review this file' }, fileItem()] },
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'looks fine' }] },
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'now the tests' }] },
];
const anthropicForm = [
  { role: 'user', content: [{ type: 'text', text: 'review this file' }, { type: 'document', source: { type: 'text', media_type: 'text/plain', data: CODE } }] },
  { role: 'assistant', content: 'looks fine' },
  { role: 'user', content: 'now the tests' },
];

test('N1: a Responses input_file of a text type counts as its text, as the same file in Anthropic form', () => {
  const want = cc.tokenCountWithEstimation(anthropicForm);
  assert.ok(want > 40_000, `the file is ~45K tokens (${want})`);
  assert.equal(cc.tokenCountWithEstimation(responsesForm), want);
  const c = new cc.Compactor({ model: 'gpt-5', summarize });
  c.pushMany(responsesForm);
  assert.equal(c.tokenCount(), want, 'Compactor');
  // The same in a function_call_output list.
  const out = [
    { type: 'message', role: 'user', content: 'read it' },
    { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: [fileItem('text/markdown')] },
  ];
  assert.ok(cc.tokenCountWithEstimation(out) > 40_000, 'in a tool output');
  // A PDF, and a file named by id or URL, stay media.
  const pdf = structuredClone(responsesForm);
  pdf[0].content[1] = fileItem('application/pdf');
  assert.ok(cc.tokenCountWithEstimation(pdf) < 2_100, 'a PDF is one medium');
  pdf[0].content[1] = { type: 'input_file', file_id: 'file-1' };
  assert.ok(cc.tokenCountWithEstimation(pdf) < 2_100, 'a file id is one medium');
});

test('N1: the API view and the summary request carry the text file as its text', async () => {
  const view = cc.toApiMessages(responsesForm);
  assert.deepEqual(view[0].content[1], { type: 'document', source: { type: 'text', media_type: 'text/plain', data: CODE }, title: 'main.js' });
  const reqs = [];
  const r = await cc.compactConversation(responsesForm, { model: 'gpt-5', summarize: async (q) => { reqs.push(q); return '<summary>s</summary>'; } }, { keepLastUserMessage: true });
  assert.equal(r.preCompactTokenCount, cc.tokenCountWithEstimation(anthropicForm));
  const sent = JSON.stringify(reqs[0].messages);
  assert.ok(sent.includes('line 2999: const value2999'), 'the summarizer reads the file');
  assert.deepEqual(cc.buildPostCompactMessages(r).at(-1), responsesForm.at(-1));
});

// ---- N2: an AI SDK tool output's text file (file-data) ------------------------------------
// The count read a `content` output's `{type: 'file-data', mediaType: 'text/plain'}` as its
// text (45,680), but a compaction measured it as one medium (preCompactTokenCount 2,013, and
// previewCompaction's tokensBefore), and the summarizer got a marker instead of the text.

const modelForm = [
  { role: 'user', content: 'read it' },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'fetchFile', input: { p: 'a' } }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'fetchFile', output: { type: 'content', value: [{ type: 'file-data', data: B64, mediaType: 'text/plain', filename: 'a.txt' }] } }] },
  { role: 'assistant', content: 'ok' },
  { role: 'user', content: 'next' },
];

test('N2: a compaction and the preview measure an AI SDK text file-data output as the count does', async () => {
  const want = cc.tokenCountWithEstimation(modelForm);
  assert.ok(want > 40_000, `counted as text (${want})`);
  const reqs = [];
  const r = await cc.compactConversation(modelForm, { model: 'claude-sonnet-4-5', summarize: async (q) => { reqs.push(q); return '<summary>s</summary>'; } }, {});
  assert.equal(r.preCompactTokenCount, want);
  assert.ok(JSON.stringify(reqs[0].messages).includes('line 2999: const value2999'), 'the summarizer reads the file');
  const p = await cc.previewCompaction(modelForm, { model: 'claude-sonnet-4-5' });
  assert.equal(p.tokensBefore, want);
  const view = cc.toApiMessages(modelForm);
  assert.deepEqual(view[2].content[0].content[0], { type: 'document', source: { type: 'text', media_type: 'text/plain', data: CODE } });
});

// ---- N3: OpenAI's prompt_cache_breakpoint -------------------------------------------------
// Chat and Responses content parts mark the end of a cached prefix with
// `prompt_cache_breakpoint` (openai 7.x). microCompact turned a Responses output list into a
// string and stripImagesFromMessages replaced an image by a text part without the mark: the
// caller's cached prefix lost its breakpoint (as round 15 fixed for cache_control).

const BP = { mode: 'explicit', ttl: '12h' };
const R = big(200);
const items = () => {
  const m = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] }];
  for (let i = 0; i < 4; i++) {
    m.push({ type: 'function_call', call_id: `c${i}`, name: 'Read', arguments: JSON.stringify({ file_path: `/a${i}` }) });
    m.push({ type: 'function_call_output', call_id: `c${i}`, output: [{ type: 'input_text', text: R + i, prompt_cache_breakpoint: BP }] });
  }
  m.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'next' }, { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo', detail: 'auto', prompt_cache_breakpoint: BP }] });
  return m;
};

test('N3: microCompact keeps the prompt_cache_breakpoint of a cleared Responses output list', () => {
  const input = items();
  const r = cc.microCompact(input, { keepRecent: 1 });
  assert.deepEqual(r.clearedToolUseIds, ['c0', 'c1', 'c2']);
  assert.deepEqual(r.messages[2].output, [{ type: 'input_text', text: '[Old tool result content cleared]', prompt_cache_breakpoint: BP }]);
  assert.equal(r.messages[8], input[8], 'the kept result is untouched');
  // Cleared once: a second pass clears nothing more and changes nothing.
  const again = cc.microCompact(r.messages, { keepRecent: 1 });
  assert.equal(again.tokensFreed, 0);
  assert.deepEqual(again.clearedToolUseIds, []);
  assert.equal(again.messages[2], r.messages[2]);
  // An output without a breakpoint is still cleared to the plain text.
  const plain = items().map((m) => (m.type === 'function_call_output' ? { ...m, output: [{ type: 'input_text', text: m.output[0].text }] } : m));
  assert.equal(cc.microCompact(plain, { keepRecent: 1 }).messages[2].output, '[Old tool result content cleared]');
});

test('N3: stripImagesFromMessages keeps the prompt_cache_breakpoint of a Responses and a Chat image', () => {
  const out = cc.stripImagesFromMessages(items());
  assert.deepEqual(out.at(-1).content[1], { type: 'input_text', text: '[image]', prompt_cache_breakpoint: BP });
  const chat = [
    { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo' }, prompt_cache_breakpoint: BP }] },
    { role: 'assistant', content: 'a cat' },
  ];
  assert.deepEqual(cc.stripImagesFromMessages(chat)[0].content[1], { type: 'text', text: '[image]', prompt_cache_breakpoint: BP });
});

// ---- N4: a data URL with parameters -------------------------------------------------------
// A Blob made with `type: 'text/plain;charset=utf-8'` reads as `data:text/plain;charset=utf-8;
// base64,…`. The count read such a text file as its text (45,671), but a count with a tokenizer
// and a compaction as one medium (2,004), the summarizer got no text, and toApiMessages sent the
// whole data URL as the base64 data of the document (which the API refuses).

test('N4: a text file in a data URL with a charset counts, converts and is summarized as its text', async () => {
  const url = `data:text/plain;charset=utf-8;base64,${B64}`;
  const ui = [
    { id: '1', role: 'user', parts: [{ type: 'text', text: 'review' }, { type: 'file', mediaType: 'text/plain', url, filename: 'a.js' }] },
    { id: '2', role: 'assistant', parts: [{ type: 'text', text: 'ok' }] },
    { id: '3', role: 'user', parts: [{ type: 'text', text: 'next' }] },
  ];
  const want = cc.tokenCountWithEstimation(ui);
  assert.ok(want > 40_000, `counted as text (${want})`);
  assert.ok(cc.tokenCountWithEstimation(ui, { tokenCounter: (s) => Math.ceil(s.length / 4) }) > 40_000, 'with a tokenizer');
  const reqs = [];
  const r = await cc.compactConversation(ui, { model: 'claude-sonnet-4-5', summarize: async (q) => { reqs.push(q); return '<summary>s</summary>'; } }, {});
  assert.equal(r.preCompactTokenCount, want);
  assert.ok(JSON.stringify(reqs[0].messages).includes('line 2999: const value2999'), 'the summarizer reads the file');
  assert.deepEqual(cc.toApiMessages(ui)[0].content[1].source, { type: 'text', media_type: 'text/plain', data: CODE });
  // An image's data URL with a parameter: its type and data, not the whole URL.
  const img = [{ role: 'user', content: [{ type: 'image', image: 'data:image/png;name=a.png;base64,iVBORw0KGgo' }] }, { role: 'assistant', content: 'a cat' }];
  assert.deepEqual(cc.toApiMessages(img)[0].content[0].source, { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo' });
  // Responses: the same file as an input_file.
  const items = [{ type: 'message', role: 'user', content: [{ type: 'input_file', filename: 'a.js', file_data: url }] }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }];
  assert.equal(cc.toApiMessages(items)[0].content[0].source.data, CODE);
});
