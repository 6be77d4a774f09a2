// Item and part types of each ecosystem that were read as opaque text or misread: OpenAI
// Responses' built-in tools whose call and output are two items (`local_shell_call`,
// `shell_call`, `apply_patch_call`, `computer_call` and their `…_output`), OpenAI Chat's legacy
// function calling (`function_call` and `role: 'function'`, paired by order), Gemini's own
// content parts in LangChain messages (`inlineData`, `fileData`, `functionCall` mirrored in
// tool_calls), and OpenAI Chat `tool` messages (no `tool_call_id`; content parts cleared).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HumanMessage, AIMessage, ToolMessage } from '@langchain/core/messages';
import * as cc from '../../pkg/node.js';
import { packageJsIndex } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const PLACEHOLDER = '[Old tool result content cleared]';
const lines = (n, s) => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const roles = (msgs) => cc.toApiMessages(msgs).map((m) => [m.role, (typeof m.content === 'string' ? [{ type: 'text' }] : m.content).map((b) => b.type)]);

// A summarizer that records the requests it gets; `sent()` is their JSON.
function recorder() {
  const calls = [];
  const f = async (req) => {
    calls.push(req);
    return { content: [{ type: 'text', text: '<summary>SUMMARY: work continues.</summary>' }], stop_reason: 'end_turn', usage: { input_tokens: 100, output_tokens: 20 } };
  };
  f.calls = calls;
  f.sent = () => JSON.stringify(calls.map((r) => r.messages));
  return f;
}

// ---- OpenAI Responses: built-in tools' call and output items ---------------------------------

// A call item and its output item of each built-in tool the openai SDK (7.60) types as two
// items paired by call id.
const PAIRS = {
  local_shell: (i, out) => [
    { type: 'local_shell_call', id: `ls_${i}`, call_id: `call_${i}`, action: { type: 'exec', command: ['cat', `m${i}.ts`], env: {} }, status: 'completed' },
    // The SDK's LocalShellCallOutput names its call by `id`.
    { type: 'local_shell_call_output', id: `call_${i}`, output: out, status: 'completed' },
  ],
  local_shell_call_id: (i, out) => [
    { type: 'local_shell_call', id: `ls_${i}`, call_id: `call_${i}`, action: { type: 'exec', command: ['cat', `m${i}.ts`], env: {} }, status: 'completed' },
    { type: 'local_shell_call_output', call_id: `call_${i}`, output: out },
  ],
  shell: (i, out) => [
    { type: 'shell_call', id: `sh_${i}`, call_id: `call_${i}`, action: { commands: [`cat m${i}.ts`] }, status: 'completed' },
    { type: 'shell_call_output', call_id: `call_${i}`, max_output_length: 10000, output: [{ stdout: out, stderr: 'warning: slow', outcome: { type: 'exit', exit_code: 0 } }] },
  ],
  apply_patch: (i, out) => [
    { type: 'apply_patch_call', id: `ap_${i}`, call_id: `call_${i}`, status: 'completed', operation: { type: 'update_file', path: `m${i}.ts`, diff: '@@ -1 +1 @@\n-a\n+b' } },
    { type: 'apply_patch_call_output', id: `apo_${i}`, call_id: `call_${i}`, status: 'completed', output: out },
  ],
};

function itemsOf(pair, rounds = 3, size = 60) {
  const items = [{ role: 'developer', content: 'agent' }, { role: 'user', content: 'go' }];
  for (let i = 0; i < rounds; i++) {
    items.push(...pair(i, lines(size, 'out' + i)), { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `ok ${i}`, annotations: [] }] });
  }
  items.push({ role: 'user', content: 'next' });
  return items;
}

test('Responses built-in tool calls and their outputs pair as tool calls and results', () => {
  for (const [name, pair] of Object.entries(PAIRS)) {
    const items = itemsOf(pair);
    assert.deepEqual(cc.validateForApi(items), { valid: true, problems: [] }, name);
    const api = cc.toApiMessages(items);
    const use = api.find((m) => m.role === 'assistant' && m.content[0]?.type === 'tool_use').content[0];
    assert.equal(use.id, 'call_0', name);
    assert.equal(use.name, name.startsWith('local_shell') ? 'local_shell' : name, name);
    const result = api.find((m) => m.role === 'user' && Array.isArray(m.content) && m.content[0]?.type === 'tool_result').content[0];
    assert.equal(result.tool_use_id, 'call_0', name);
    // The output read as the text it holds (a shell output's streams, not their JSON).
    assert.equal(typeof result.content, 'string', name);
    assert.ok(result.content.startsWith('out0 0: some content'), name);
    if (name === 'shell') assert.ok(result.content.endsWith('\nwarning: slow') && !result.content.includes('exit_code'), name);
  }
  // A patch that failed is an error result; an output item with no `output` is an empty one.
  const failed = [{ role: 'user', content: 'patch' }, PAIRS.apply_patch(0, '')[0],
    { type: 'apply_patch_call_output', call_id: 'call_0', status: 'failed' }, { role: 'user', content: 'next' }];
  assert.deepEqual(cc.validateForApi(failed), { valid: true, problems: [] });
  assert.deepEqual(cc.toApiMessages(failed)[2].content[0], { type: 'tool_result', tool_use_id: 'call_0', content: '', is_error: true });
});

test('microCompact clears built-in tools\' outputs in their own form, once', () => {
  for (const [name, pair] of Object.entries(PAIRS)) {
    const items = itemsOf(pair);
    const r = cc.microCompact(items, { keepRecent: 0, compactableTools: ['*'] });
    assert.deepEqual(r.clearedToolUseIds, ['call_0', 'call_1', 'call_2'], name);
    assert.ok(r.tokensFreed > 1000, name);
    const out = r.messages[3];
    const orig = items[3];
    if (name === 'shell') {
      // The list keeps each command's outcome; the first stdout holds the placeholder.
      assert.deepEqual(out, { ...orig, output: [{ stdout: PLACEHOLDER, stderr: '', outcome: { type: 'exit', exit_code: 0 } }] });
    } else {
      assert.deepEqual(out, { ...orig, output: PLACEHOLDER }, name);
    }
    assert.equal(r.messages[2], items[2], `${name}: the call is the caller's own object`);
    // Cleared outputs are not cleared again.
    const again = cc.microCompact(r.messages, { keepRecent: 0, compactableTools: ['*'] });
    assert.deepEqual(again.clearedToolUseIds, [], name);
    // The default rule reads the tools' names as re-obtainable (a shell, a patch's output).
    assert.ok(cc.microCompact(items, { keepRecent: 0 }).clearedToolUseIds.length > 0 || name === 'apply_patch', name);
  }
});

test('microCompact\'s fast and general readers agree on built-in tools\' items', async () => {
  const index = await packageJsIndex();
  const items = [{ role: 'user', content: 'go' }];
  for (const pair of Object.values(PAIRS)) items.push(...pair(items.length, lines(40, 'x')));
  items.push({ role: 'user', content: 'next' });
  const fast = cc.microCompact(items, { keepRecent: 1, compactableTools: ['*'] });
  index.setMicroFast(false);
  let full;
  try {
    full = cc.microCompact(items, { keepRecent: 1, compactableTools: ['*'] });
  } finally {
    index.setMicroFast(true);
  }
  assert.deepEqual(fast, full);
  assert.equal(fast.clearedToolUseIds.length, 3);
});

test('a computer screenshot output pairs with its call and is never cleared into text', async () => {
  const index = await packageJsIndex();
  const shot = { type: 'computer_screenshot', image_url: 'data:image/png;base64,' + 'Q'.repeat(100_000) };
  const items = [{ role: 'user', content: 'go' }];
  for (let i = 0; i < 3; i++) {
    items.push({ type: 'computer_call', id: `cu_${i}`, call_id: `c${i}`, action: { type: 'click', button: 'left', x: 1, y: 2 }, pending_safety_checks: [], status: 'completed' },
      { type: 'computer_call_output', call_id: `c${i}`, output: shot });
  }
  items.push({ role: 'user', content: 'next' });
  assert.deepEqual(cc.validateForApi(items), { valid: true, problems: [] });
  // The item's `output` must be a screenshot: no text can stand for it.
  for (const fast of [true, false]) {
    index.setMicroFast(fast);
    try {
      const r = cc.microCompact(items, { keepRecent: 0, compactableTools: ['*'] });
      assert.deepEqual(r.clearedToolUseIds, [], `fast ${fast}`);
    } finally {
      index.setMicroFast(true);
    }
  }
  // Stripping media cannot put a marker there either (it threw reading the output as a list,
  // then wrote `[{type: 'input_text', text: '[image]'}]`, which the API refuses): the
  // screenshot item is kept as it is, and the list stays valid.
  const stripped = cc.stripImagesFromMessages(items);
  assert.equal(stripped[1], items[1]);
  for (let i = 0; i < 3; i++) assert.equal(stripped[2 + 2 * i], items[2 + 2 * i]);
  assert.deepEqual(cc.validateForApi(stripped), { valid: true, problems: [] });
});

test('session-memory compaction never keeps a built-in tool\'s output without its call', async () => {
  const big = (n, s) => lines(n, s);
  for (const pair of [PAIRS.local_shell, PAIRS.shell]) {
    const items = [{ role: 'developer', content: 'agent' }];
    for (let r = 0; r < 60; r++) {
      items.push({ role: 'user', content: `task ${r}` });
      for (let k = 0; k < 3; k++) items.push(...pair(`${r}_${k}`, big(20, 'm' + r)));
      items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `done ${r}`, annotations: [] }] });
    }
    const res = await cc.trySessionMemoryCompaction(items, { model: 'gpt-5', sessionMemory: 'Work so far: modules updated.' });
    assert.ok(res, 'compacted');
    const out = cc.buildPostCompactMessages(res);
    assert.deepEqual(cc.validateForApi(out), { valid: true, problems: [] });
    const calls = new Set(out.filter((m) => m.type?.endsWith('_call')).map((m) => m.call_id));
    for (const m of out.filter((x) => x.type?.endsWith('_call_output'))) assert.ok(calls.has(m.call_id ?? m.id), `output ${m.call_id ?? m.id} has its call`);
  }
});

test('a shell output is counted and summarized as its text', async () => {
  const text = lines(300, 'stdout');
  const shell = [{ role: 'user', content: 'go' }, ...PAIRS.shell(0, text).map((m, k) => (k === 1 ? { ...m, output: [{ stdout: text, stderr: '', outcome: { type: 'exit', exit_code: 0 } }] } : m))];
  const fn = [{ role: 'user', content: 'go' }, { type: 'function_call', call_id: 'call_0', name: 'shell', arguments: '{}' }, { type: 'function_call_output', call_id: 'call_0', output: text }];
  const a = cc.tokenCountWithEstimation(shell), b = cc.tokenCountWithEstimation(fn);
  assert.ok(Math.abs(a - b) < 40, `${a} vs ${b}`);
  const summarize = recorder();
  await cc.compactConversation([...shell, { role: 'user', content: 'next' }], { model: 'gpt-5', summarize });
  const sent = summarize.sent();
  assert.ok(sent.includes('stdout 299: some content'));
  assert.ok(!sent.includes('exit_code'));
});

// ---- OpenAI Chat: legacy function calling -------------------------------------------------------

const LEGACY = [
  { role: 'system', content: 'sys' },
  { role: 'user', content: 'read a.ts' },
  { role: 'assistant', content: null, function_call: { name: 'read_file', arguments: '{"path":"a.ts"}' } },
  { role: 'function', name: 'read_file', content: lines(200, 'fileA') },
  { role: 'assistant', content: 'ok' },
  { role: 'user', content: 'now b.ts' },
  { role: 'assistant', content: null, function_call: { name: 'read_file', arguments: '{"path":"b.ts"}' } },
  { role: 'function', name: 'read_file', content: lines(200, 'fileB') },
  { role: 'assistant', content: 'ok' },
  { role: 'user', content: 'thanks' },
];

test('OpenAI Chat legacy function calls pair with their results by order', () => {
  assert.deepEqual(cc.validateForApi(LEGACY), { valid: true, problems: [] });
  const api = cc.toApiMessages(LEGACY);
  const uses = api.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_use');
  const results = api.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result');
  assert.deepEqual(uses.map((b) => [b.id, b.name, b.input.path]), [['function_call@2', 'read_file', 'a.ts'], ['function_call@6', 'read_file', 'b.ts']]);
  assert.deepEqual(results.map((b) => b.tool_use_id), ['function_call@2', 'function_call@6']);
  // A function result with no call of its name before it answers nothing.
  const orphan = [{ role: 'user', content: 'x' }, { role: 'function', name: 'read_file', content: 'r' }];
  assert.equal(cc.validateForApi(orphan).valid, false);
});

test('microCompact clears legacy function results in their own form', () => {
  const r = cc.microCompact(LEGACY, { keepRecent: 0, compactableTools: ['*'] });
  assert.deepEqual(r.clearedToolUseIds, ['function_call@2', 'function_call@6']);
  assert.deepEqual(r.messages[3], { role: 'function', name: 'read_file', content: PLACEHOLDER });
  assert.equal(r.messages[2], LEGACY[2]);
  // The default rule: read_file is re-obtainable; the latest result is kept.
  assert.deepEqual(cc.microCompact(LEGACY, { keepRecent: 1 }).clearedToolUseIds, ['function_call@2']);
});

// ---- LangChain messages with Gemini's own parts --------------------------------------------------

const B64 = 'iVBORw0KGgo' + 'Q'.repeat(400_000);

test('Gemini inlineData and fileData parts count as media and reach a summarizer as media', async () => {
  const h = new HumanMessage('draw a logo');
  const inline = new AIMessage({ content: [{ type: 'text', text: 'Here is the logo.' }, { type: 'inlineData', inlineData: { mimeType: 'image/png', data: B64 } }] });
  const standard = new AIMessage({ content: [{ type: 'text', text: 'Here is the logo.' }, { type: 'image', mimeType: 'image/png', data: B64 }] });
  const file = new HumanMessage({ content: [{ type: 'text', text: 'Here is the logo.' }, { type: 'fileData', fileData: { mimeType: 'image/png', fileUri: 'gs://bucket/logo.png' } }] });
  const media = new HumanMessage({ content: [{ type: 'text', text: 'Here is the logo.' }, { type: 'media', mimeType: 'image/png', fileUri: 'gs://bucket/logo.png' }] });
  const want = cc.tokenCountWithEstimation([h, standard]);
  assert.ok(want < 2100, `${want}`);
  assert.equal(cc.tokenCountWithEstimation([h, inline]), want);
  assert.equal(cc.tokenCountWithEstimation([h, file]), want);
  assert.equal(cc.tokenCountWithEstimation([h, media]), want);
  assert.deepEqual(roles([h, inline, file]), [['user', ['text']], ['assistant', ['text', 'image']], ['user', ['text', 'image']]]);
  const summarize = recorder();
  await cc.compactConversation([h, inline, file, new HumanMessage('make it blue ' + 'please '.repeat(300))], { model: 'gemini-2.5-flash', summarize });
  assert.equal(summarize.calls.length, 1);
  assert.ok(!summarize.sent().includes('Q'.repeat(1000)), 'no base64 sent as text');
  assert.ok(!summarize.sent().includes('inlineData'));
});

test('a Gemini functionCall part that tool_calls holds is counted and summarized once', () => {
  const h = new HumanMessage('write it');
  const args = { path: 'a.ts', content: lines(100, 'code') };
  const tc = [{ id: 't1', name: 'write', args, type: 'tool_call' }];
  const plain = cc.tokenCountWithEstimation([h, new AIMessage({ content: '', tool_calls: tc })]);
  const gemini = new AIMessage({ content: [{ type: 'functionCall', functionCall: { name: 'write', args } }], tool_calls: tc });
  assert.equal(cc.tokenCountWithEstimation([h, gemini]), plain);
  const tool = new ToolMessage({ tool_call_id: 't1', content: 'written' });
  assert.deepEqual(roles([h, gemini, tool]), [['user', ['text']], ['assistant', ['tool_use']], ['user', ['tool_result']]]);
  // A functionCall part with no call in tool_calls is still counted (as what it holds).
  const alone = new AIMessage({ content: [{ type: 'functionCall', functionCall: { name: 'write', args } }] });
  assert.ok(cc.tokenCountWithEstimation([h, alone]) > 1000);
});

// ---- OpenAI Chat `tool` messages ---------------------------------------------------------------

test('an OpenAI Chat tool message without tool_call_id is INVALID_MESSAGE naming the field', () => {
  const msgs = [{ role: 'user', content: 'x' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', content: lines(100, 'r') }];
  for (const f of [() => cc.tokenCountWithEstimation(msgs), () => cc.microCompact(msgs, { compactableTools: ['*'], keepRecent: 0 }), () => cc.validateForApi(msgs)]) {
    assert.throws(f, (e) => e.code === 'INVALID_MESSAGE' && e.message.includes('messages[2].tool_call_id') && e.message.includes('tool_call_id'));
  }
  // The AI SDK's `tool` message (parts, no tool_call_id) is still one.
  const ai = [{ role: 'user', content: 'x' }, { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'f', input: {} }] }, { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'f', output: { type: 'text', value: 'r' } }] }];
  assert.deepEqual(cc.validateForApi(ai), { valid: true, problems: [] });
});

test('clearing an OpenAI Chat tool message of content parts keeps them parts, with cache_control', () => {
  const msgs = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: lines(200, 'out'), cache_control: { type: 'ephemeral' } }], extra: 1 },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: 'n' },
  ];
  const r = cc.microCompact(msgs, { keepRecent: 0, compactableTools: ['*'] });
  assert.deepEqual(r.clearedToolUseIds, ['c1']);
  assert.deepEqual(r.messages[2], { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: PLACEHOLDER, cache_control: { type: 'ephemeral' } }], extra: 1 });
  assert.deepEqual(cc.microCompact(r.messages, { keepRecent: 0, compactableTools: ['*'] }).clearedToolUseIds, []);
});
