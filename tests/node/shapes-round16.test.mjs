// What the sixteenth probe of other ecosystems' shapes found. Each test fails on the package
// before the fix (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const big = (n, s = 'line') => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const summarize = async () => '<summary>Work so far.</summary>';

// ---- N1: an AI SDK tool reference (client-side tool search) -------------------------------
// @ai-sdk/anthropic sends a tool output's `{type: 'custom', providerOptions: {anthropic:
// {type: 'tool-reference', toolName}}}` part as a `tool_reference` block, which loads the tool's
// definition; it counted as its JSON (~10 tokens) and the API view made it JSON text.

const NAMES = ['deploy', 'rollback', 'status'];
const R = big(60);
const anthropicForm = [
  { role: 'user', content: 'find deploy tools' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'ts', name: 'search_tools', input: { query: 'deploy' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'ts', content: NAMES.map((n) => ({ type: 'tool_reference', tool_name: n })) }] },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'r1', name: 'read_file', input: { p: 'a' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'r1', content: R }] },
  { role: 'assistant', content: 'found' },
  { role: 'user', content: 'now deploy' },
];
const refPart = (n) => ({ type: 'custom', providerOptions: { anthropic: { type: 'tool-reference', toolName: n } } });
const modelForm = [
  { role: 'user', content: 'find deploy tools' },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'ts', toolName: 'search_tools', input: { query: 'deploy' } }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'ts', toolName: 'search_tools', output: { type: 'content', value: NAMES.map(refPart) } }] },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'r1', toolName: 'read_file', input: { p: 'a' } }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'r1', toolName: 'read_file', output: { type: 'text', value: R } }] },
  { role: 'assistant', content: 'found' },
  { role: 'user', content: 'now deploy' },
];

test('N1: an AI SDK tool-reference part counts as the tool_reference @ai-sdk/anthropic sends', () => {
  const want = cc.tokenCountWithEstimation(anthropicForm);
  assert.ok(want > 2000, `three references load three tools (${want})`);
  assert.equal(cc.tokenCountWithEstimation(modelForm), want);
  const c = new cc.Compactor({ model: 'claude-sonnet-4-5', summarize });
  for (const m of modelForm) c.push(m);
  assert.equal(c.tokenCount(), want, 'Compactor');
});

test('N1: toApiMessages sends the tool-reference part as a tool_reference block', () => {
  const view = cc.toApiMessages(modelForm);
  assert.deepEqual(view[2].content[0].content, NAMES.map((n) => ({ type: 'tool_reference', tool_name: n })));
  assert.deepEqual(cc.validateForApi(modelForm), { valid: true, problems: [] });
  // Any other custom part is still read as its JSON (not dropped).
  const other = structuredClone(modelForm);
  other[2].content[0].output.value = [{ type: 'custom', providerOptions: { acme: { kind: 'x' } } }];
  assert.equal(cc.toApiMessages(other)[2].content[0].content[0].type, 'text');
});

test('N1: the compaction of such a conversation measures the references as the count does', async () => {
  const r = await cc.compactConversation(modelForm, { model: 'claude-sonnet-4-5', summarize }, { keepLastUserMessage: true });
  assert.equal(r.preCompactTokenCount ?? cc.tokenCountWithEstimation(modelForm), cc.tokenCountWithEstimation(anthropicForm));
  const out = cc.buildPostCompactMessages(r);
  assert.deepEqual(out.at(-1), modelForm.at(-1));
});

// ---- N2: a Chat reply's `reasoning` (vLLM, OpenRouter) ------------------------------------
// vLLM renamed `reasoning_content` to `reasoning` (and then removed the old name); OpenRouter
// returns `reasoning`. Sent back within a tool loop, the model reads it; it counted 0.

const T = big(100, 'thinking about the next step');
const chat = (field) => {
  const m = [{ role: 'system', content: 'You are an agent.' }, { role: 'user', content: 'fix the build' }];
  for (let i = 0; i < 4; i++) {
    m.push({ role: 'assistant', content: null, [field]: T + i, tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'run', arguments: JSON.stringify({ cmd: `make ${i}` }) } }] });
    m.push({ role: 'tool', tool_call_id: `c${i}`, content: `${R}\nok ${i}` });
  }
  m.push({ role: 'assistant', content: 'done', [field]: T });
  return m;
};

test('N2: a Chat reply\'s `reasoning` counts as `reasoning_content` does', () => {
  const want = cc.tokenCountWithEstimation(chat('reasoning_content'));
  assert.ok(want > 9000);
  assert.equal(cc.tokenCountWithEstimation(chat('reasoning')), want);
  // Without tool calls the field is the only sign of the Chat shape, as reasoning_content is.
  const plain = (field) => [{ role: 'user', content: 'q' }, { role: 'assistant', content: 'a', [field]: T }];
  assert.ok(cc.tokenCountWithEstimation(plain('reasoning')) > 1000);
  assert.equal(cc.tokenCountWithEstimation(plain('reasoning')), cc.tokenCountWithEstimation(plain('reasoning_content')));
  const c = new cc.Compactor({ model: 'claude-sonnet-4-5', summarize });
  for (const m of chat('reasoning')) c.push(m);
  assert.equal(c.tokenCount(), want, 'Compactor');
});

test('N2: toApiMessages and microCompact read `reasoning` as the reply\'s reasoning', () => {
  const msgs = chat('reasoning');
  const view = cc.toApiMessages(msgs);
  assert.deepEqual(view[1].content.map((b) => b.type), ['thinking', 'tool_use']);
  assert.equal(view[1].content[0].thinking, T + 0);
  // Both fields (vLLM during its transition sent both): read once.
  const both = msgs.map((m) => (m.reasoning ? { ...m, reasoning_content: m.reasoning } : m));
  assert.equal(cc.tokenCountWithEstimation(both), cc.tokenCountWithEstimation(msgs));
  const { messages, clearedToolUseIds } = cc.microCompact(msgs, { keepRecent: 1, compactableTools: ['*'] });
  assert.deepEqual(clearedToolUseIds, ['c0', 'c1', 'c2']);
  assert.equal(messages[3].content, '[Old tool result content cleared]');
  assert.equal(messages[2], msgs[2], 'the reply with its reasoning is kept as it is');
  assert.equal(messages[9], msgs[9]);
});

// ---- N3: an AI SDK document's title and context ---------------------------------------------
// @ai-sdk/anthropic sends a PDF or text file part's providerOptions.anthropic `title` and
// `context` (a UIMessage's providerMetadata, which convertToModelMessages passes on) as the
// document's `title` / `context`; the model reads the context. Counted 0, and the API view had
// neither (nor the file name as the title of a PDF).

const ctx = big(200, 'ctx');
const pdf = 'JVBER' + 'A'.repeat(3000);
const anthropicDoc = [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf }, title: 'Report', context: ctx }, { type: 'text', text: 'summarize' }] }];

test('N3: an AI SDK file part\'s document context counts as an Anthropic document\'s', () => {
  const want = cc.tokenCountWithEstimation(anthropicDoc);
  assert.ok(want > 4000);
  const model = [{ role: 'user', content: [{ type: 'file', data: pdf, mediaType: 'application/pdf', filename: 'a.pdf', providerOptions: { anthropic: { context: ctx, title: 'Report' } } }, { type: 'text', text: 'summarize' }] }];
  const ui = [{ id: 'u', role: 'user', parts: [{ type: 'file', url: `data:application/pdf;base64,${pdf}`, mediaType: 'application/pdf', filename: 'a.pdf', providerMetadata: { anthropic: { context: ctx, title: 'Report' } } }, { type: 'text', text: 'summarize' }] }];
  assert.equal(cc.tokenCountWithEstimation(model), want);
  assert.equal(cc.tokenCountWithEstimation(ui), want);
  assert.deepEqual(cc.toApiMessages(model), anthropicDoc);
  // A text file: its text plus the context; an image takes no context.
  const text = [{ role: 'user', content: [{ type: 'file', data: Buffer.from(R).toString('base64'), mediaType: 'text/plain', providerOptions: { anthropic: { context: ctx } } }] }];
  const textDoc = [{ role: 'user', content: [{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: R }, context: ctx }] }];
  assert.equal(cc.tokenCountWithEstimation(text), cc.tokenCountWithEstimation(textDoc));
  assert.deepEqual(cc.toApiMessages(text), textDoc);
  const image = [{ role: 'user', content: [{ type: 'file', data: pdf, mediaType: 'image/png', providerOptions: { anthropic: { context: ctx } } }] }];
  assert.ok(cc.tokenCountWithEstimation(image) < 2100);
  // Without provider options a PDF is titled by its file name, as @ai-sdk/anthropic sends it.
  const named = [{ role: 'user', content: [{ type: 'file', data: pdf, mediaType: 'application/pdf', filename: 'a.pdf' }] }];
  assert.equal(cc.toApiMessages(named)[0].content[0].title, 'a.pdf');
});
