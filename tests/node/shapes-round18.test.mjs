// What the eighteenth probe of other ecosystems' shapes found. Each test fails on the package
// before the fix (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const prose = (n) => Array.from({ length: n }, (_, i) => `paragraph ${i}: the reply explains the plan in some detail here`).join('\n');
const summarize = async () => '<summary>Work so far.</summary>';

// ---- S1: a plain OpenAI conversation with a `developer` message ----------------------------
// `developer` is OpenAI's instructions role (Chat Completions, Responses); the Messages API and
// the AI SDK have none. A conversation of plain messages (string content, text parts) that
// holds one was taken for Anthropic messages: a compaction answered with a `compact_boundary`
// transcript line first (no `role`: OpenAI refuses the request, "messages[0].role" missing).

const chat = [
  { role: 'developer', content: 'You are a terse assistant.' },
  { role: 'user', content: 'explain the plan' },
  { role: 'assistant', content: [{ type: 'text', text: prose(400) }] },
  { role: 'user', content: 'and the next step?' },
  { role: 'assistant', content: prose(300) },
  { role: 'user', content: 'go on' },
];

const withoutIds = (ms) => JSON.stringify(ms, (k, v) => (k === 'uuid' || k === 'timestamp' ? undefined : v));

test('shapes18 S1: a compaction of plain messages with a developer message answers in OpenAI form', async () => {
  const result = await cc.compactConversation(chat, { model: 'gpt-5', summarize });
  const out = cc.buildPostCompactMessages(result);
  for (const [i, m] of out.entries()) {
    assert.equal(typeof m.role, 'string', `messages[${i}] has a role: ${JSON.stringify(m).slice(0, 120)}`);
    assert.notEqual(m.type, 'system', `no transcript line at ${i}`);
  }
  assert.deepEqual(out[0], chat[0], 'the developer message stays first, verbatim');
  const named = await cc.compactConversation(chat, { model: 'gpt-5', summarize, shape: 'openai-chat' });
  assert.equal(withoutIds(out), withoutIds(cc.buildPostCompactMessages(named)), 'as if shape: openai-chat were named');
});

test('shapes18 S1: a Compactor of such messages commits OpenAI messages', async () => {
  const c = new cc.Compactor({ model: 'gpt-5', summarize });
  c.pushMany(chat);
  await c.compact();
  const out = c.messages;
  assert.ok(out.every((m) => typeof m.role === 'string'), JSON.stringify(out).slice(0, 300));
  assert.deepEqual(out[0], chat[0]);
});

test('shapes18 S1: a developer message mixes with any specific shape, which decides', async () => {
  const responses = [
    { role: 'developer', content: 'Be brief.' },
    { role: 'user', content: 'read it' },
    { type: 'function_call', call_id: 'c1', name: 'read', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: prose(400) },
    { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] },
    { role: 'user', content: 'next' },
  ];
  const result = await cc.compactConversation(responses, { model: 'gpt-5', summarize });
  const out = cc.buildPostCompactMessages(result);
  assert.deepEqual(out[0], responses[0]);
  assert.ok(out.every((m) => typeof m.role === 'string' || typeof m.type === 'string'));
  assert.ok(!out.some((m) => m.subtype === 'compact_boundary'));
  // Anthropic tool blocks with a (misplaced) developer message are still read as Anthropic.
  const anthropic = [
    { role: 'developer', content: 'Be brief.' },
    { role: 'user', content: 'read it' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: prose(10) }] },
  ];
  assert.ok(cc.tokenCountWithEstimation(anthropic) > 0);
  // Counting is unchanged by the shape: the same as named Chat messages.
  assert.equal(cc.tokenCountWithEstimation(chat), cc.tokenCountWithEstimation(chat, { shape: 'openai-chat' }));
});

// ---- S2: a tool result of `search_result` blocks, cleared by micro-compaction -------------
// Anthropic's search results (a RAG tool answering with `search_result` blocks, which the
// model reads and cites) counted in full (about 6,000 tokens a result here) but weighed 0 for
// micro-compaction, which never cleared them: `compactableTools: ['*']` freed nothing.

const searchResults = (q) => Array.from({ length: 3 }, (_, k) => ({
  type: 'search_result', source: `https://docs.example/${q}/${k}`, title: `${q} ${k}`,
  content: [{ type: 'text', text: prose(150) }], citations: { enabled: true },
}));
const rag = [
  { role: 'user', content: 'find the docs' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'search', input: { q: 'alpha' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: searchResults('alpha') }] },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'search', input: { q: 'beta' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: searchResults('beta') }] },
  { role: 'assistant', content: 'found them' },
  { role: 'user', content: 'thanks' },
];

test('shapes18 S2: microCompact clears an old tool result of search_result blocks', () => {
  const before = cc.tokenCountWithEstimation(rag);
  const { messages, tokensFreed, clearedToolUseIds } = cc.microCompact(rag, { compactableTools: ['*'], keepRecent: 1 });
  assert.deepEqual(clearedToolUseIds, ['toolu_1']);
  assert.ok(tokensFreed > 5_000, `freed ${tokensFreed}`);
  const after = cc.tokenCountWithEstimation(messages);
  assert.ok(before - after > 5_000, `${before} -> ${after}`);
  assert.deepEqual(messages[4], rag[4], 'the recent result is kept');
  assert.equal(cc.validateForApi(messages).valid, true);
});

test('shapes18 S2: so does a LangChain ToolMessage holding search_result blocks', async () => {
  const { HumanMessage, AIMessage, ToolMessage } = await import('@langchain/core/messages');
  const call = (id, q) => new AIMessage({ content: '', tool_calls: [{ id, name: 'search', args: { q }, type: 'tool_call' }] });
  const lc = [
    new HumanMessage('find the docs'),
    call('toolu_1', 'alpha'), new ToolMessage({ tool_call_id: 'toolu_1', content: searchResults('alpha') }),
    call('toolu_2', 'beta'), new ToolMessage({ tool_call_id: 'toolu_2', content: searchResults('beta') }),
    new AIMessage('found them'), new HumanMessage('thanks'),
  ];
  const { tokensFreed, clearedToolUseIds } = cc.microCompact(lc, { compactableTools: ['*'], keepRecent: 1 });
  assert.deepEqual(clearedToolUseIds, ['toolu_1']);
  assert.ok(tokensFreed > 5_000, `freed ${tokensFreed}`);
});

// ---- S3: files an OpenAI apply_patch call changes ------------------------------------------
// OpenAI's coding models edit files with `apply_patch`: the Responses API's built-in tool
// (`apply_patch_call`, its `operation` naming the file) or a free-form custom tool taking a
// patch (`*** Update File: path`). The facts a compaction keeps named no such file: the loss
// report's `files` was empty (an Anthropic `Edit` of the same file is listed), so a summary
// that forgot an edited file went unnoticed, and offlineSummarizer did not list it.

const ask = { role: 'user', content: 'fix the parser ' + prose(200) };
const done = [{ role: 'assistant', content: 'done' }, { role: 'user', content: 'next' }];
const builtIn = [
  ask,
  { type: 'apply_patch_call', id: 'apc_1', call_id: 'c1', status: 'completed', operation: { type: 'update_file', path: 'src/parser.rs', diff: '@@\n-a\n+b' } },
  { type: 'apply_patch_call_output', call_id: 'c1', status: 'completed', output: 'Done' },
  ...done,
];
const freeForm = [
  ask,
  { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch\n*** Update File: src/parser.rs\n@@\n-a\n+b\n*** Add File: src/lexer.rs\n+pub fn lex() {}\n*** End Patch' },
  { type: 'custom_tool_call_output', call_id: 'c1', output: 'Done' },
  ...done,
];

test('shapes18 S3: the loss report names the files an apply_patch call changed', async () => {
  const a = await cc.compactConversation(builtIn, { model: 'gpt-5', summarize });
  assert.deepEqual(a.lossReport.files, ['src/parser.rs']);
  const b = await cc.compactConversation(freeForm, { model: 'gpt-5', summarize });
  assert.deepEqual([...b.lossReport.files].sort(), ['src/lexer.rs', 'src/parser.rs']);
  const offline = await cc.compactConversation(freeForm, { model: 'gpt-5', summarize: cc.offlineSummarizer() });
  const summary = JSON.stringify(cc.buildPostCompactMessages(offline));
  assert.ok(summary.includes('src/lexer.rs') && summary.includes('src/parser.rs'), summary.slice(0, 400));
});
