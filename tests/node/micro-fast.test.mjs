// microCompact's fast paths (the one-pass reading of Anthropic API messages in `toolIndex_`,
// and `microCompactApply_`, which clears the chosen results from their place in that index
// and builds the result object in one crossing) give the answers of the general readers.
// Each case runs twice: with the fast paths, and with them switched off (`setMicroFast` in
// src/bindings/js_index.js: the general readers and edit applier, as before they existed);
// the results (messages, tokensFreed, ids) or errors must be the same, the input unchanged,
// and every message not edited the caller's own object.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as cc from '../../pkg/node.js';
import { buildApiView, activeStart } from '../../bench/formats.mjs';
import { LONG_TRANSCRIPT, TRANSCRIPTS, readJsonl, randomHistory, prng, packageJsIndex, callOutcome } from './helpers/support.mjs';
import { AIMessage, ToolMessage } from '@langchain/core/messages';
import { SHAPES, toLangChain, toLangChainStored, toLangChainSerialized } from './helpers/shapes.mjs';

cc.setEnvironmentDefaults({});

// The package's own js_index.js (the module instance its glue imported).
const index = await packageJsIndex();

const outcome = callOutcome;

// microCompact of `messages` with the fast paths and without; checks the input is unchanged
// and that the fast result shares every message it did not edit.
function bothWays(messages, options) {
  const before = JSON.stringify(messages);
  const fast = outcome(() => cc.microCompact(messages, options));
  index.setMicroFast(false);
  let full;
  try {
    full = outcome(() => cc.microCompact(messages, options));
  } finally {
    index.setMicroFast(true);
  }
  assert.equal(JSON.stringify(messages), before, 'input never mutated');
  if (fast.value !== undefined) {
    const edited = new Set();
    fast.value.messages.forEach((m, i) => {
      if (m !== messages[i]) edited.add(i);
    });
    full.value?.messages.forEach((m, i) => {
      if (!edited.has(i)) assert.equal(m, messages[i], `messages[${i}] shared by both`);
    });
    for (const i of edited) assert.notDeepEqual(fast.value.messages[i], messages[i], `messages[${i}] copied only when edited`);
  }
  return { fast, full };
}

function same(messages, options, what) {
  const { fast, full } = bothWays(messages, options);
  assert.deepEqual(fast, full, what);
  return fast;
}

// `same` for each history of `cases` under four option sets; returns how many results the
// fast runs cleared in all.
function sameUnderEveryOption(cases) {
  let cleared = 0;
  for (const [what, h] of Object.entries(cases)) {
    for (const options of [{ keepRecent: 0 }, { keepRecent: 1 }, { keepRecent: 0, keepLatestPerPath: true }, { keepRecent: 0, compactableTools: ['*'] }]) {
      const r = same(h, options, `${what} ${JSON.stringify(options)}`);
      cleared += r.value?.clearedToolUseIds.length ?? 0;
    }
  }
  return cleared;
}

const apiView = (() => {
  const lines = cc.parseTranscript(readJsonl(LONG_TRANSCRIPT).map((l) => JSON.stringify(l)).join('\n'));
  return buildApiView(lines, activeStart(lines));
})();

test('every prefix of the real API view: the same result with and without the fast paths', () => {
  let clearedSome = 0;
  for (let n = 0; n <= apiView.length; n++) {
    const r = same(apiView.slice(0, n), undefined, `prefix ${n}`);
    if (r.value.clearedToolUseIds.length > 0) clearedSome++;
  }
  assert.ok(clearedSome > 50, `${clearedSome} prefixes cleared results`);
  for (const keepRecent of [0, 1, 3, 40]) same(apiView, { keepRecent }, `keepRecent ${keepRecent}`);
  same(apiView, { keepRecent: 0, keepLatestPerPath: true }, 'keepLatestPerPath');
  same(apiView, { keepRecent: 0, compactableTools: ['*'] }, 'every tool');
  same(apiView, { keepRecent: 2, compactableTools: ['Bash'] }, 'one tool');
});

test('each foreign shape of the real API view: the same result with and without the fast paths', () => {
  for (const { name, convert } of SHAPES) {
    const messages = convert(apiView);
    const r = same(messages, undefined, name);
    assert.ok(r.value.clearedToolUseIds.length > 0, `${name}: results cleared`);
    for (const n of [1, 7, 40, 101, messages.length - 3]) same(messages.slice(0, n), { keepRecent: 1 }, `${name} prefix ${n}`);
  }
});

test('every real transcript, as lines and as its API view', () => {
  for (const f of readdirSync(TRANSCRIPTS).filter((x) => x.endsWith('.jsonl'))) {
    const lines = cc.parseTranscript(readJsonl(TRANSCRIPTS + f).map((l) => JSON.stringify(l)).join('\n'));
    same(lines, { keepRecent: 1 }, `${f} lines`);
    same(buildApiView(lines, 0), { keepRecent: 1 }, `${f} API view`);
  }
});

test('random and odd histories: the same result or the same error', () => {
  const rng = prng(12);
  for (let k = 0; k < 60; k++) {
    const h = randomHistory(rng, { shape: k % 2 ? 'api' : 'transcript' });
    same(h, { keepRecent: rng.int(0, 3) }, `random ${k}`);
  }
  const big = 'x'.repeat(4000);
  const call = (id, name = 'Read') => ({ role: 'assistant', content: [{ type: 'tool_use', id, name, input: { file_path: `/${id}` } }] });
  const result = (id, content = big) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content }] });
  const cases = {
    'image before the call': [{ role: 'user', content: 'go' }, { role: 'assistant', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA' } }, { type: 'tool_use', id: 'a', name: 'Read', input: {} }] }, result('a'), call('b'), result('b')],
    'usage on a text message': [{ role: 'user', content: 'go' }, { role: 'assistant', content: 'ok', usage: { input_tokens: 3, output_tokens: 1 } }, call('a'), result('a'), call('b'), result('b')],
    'nested result content': [call('a'), result('a', [{ type: 'text', text: big }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA' } }]), call('b'), result('b')],
    'already cleared': [call('a'), result('a', '[Old tool result content cleared]'), call('b'), result('b'), call('c'), result('c')],
    'unknown fields kept': [{ ...call('a'), extra: { keep: 1 } }, { ...result('a'), cache: 7, content: [{ type: 'tool_result', tool_use_id: 'a', content: big, is_error: false, custom: [1] }] }, call('b'), result('b')],
    'a bad block': [call('a'), { role: 'user', content: [null] }],
    'a result without its id': [call('a'), { role: 'user', content: [{ type: 'tool_result', content: big }] }],
    'content an object': [call('a'), { role: 'user', content: { type: 'text' } }],
    'two shapes': [call('a'), result('a'), { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'x', toolName: 'Read', input: {} }] }],
    'not a message': [call('a'), result('a'), 42],
    'a boundary inside': [call('a'), result('a'), { role: 'assistant', content: [{ type: 'compaction', content: 'summary' }] }, call('b'), result('b'), call('c'), result('c')],
    'parallel calls': [{ role: 'assistant', content: [{ type: 'tool_use', id: 'p', name: 'Read', input: {} }, { type: 'tool_use', id: 'q', name: 'Grep', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'q', content: big }, { type: 'text', text: 'and' }, { type: 'tool_result', tool_use_id: 'p', content: big }] }, call('r'), result('r')],
  };
  for (const [what, h] of Object.entries(cases)) {
    for (const keepRecent of [0, 1]) {
      const r = same(h, { keepRecent }, what);
      if (what === 'unknown fields kept' && keepRecent === 0) {
        const b = r.value.messages[1].content[0];
        assert.equal(r.value.messages[1].cache, 7);
        assert.equal(b.custom[0], 1);
        assert.equal(b.is_error, false);
      }
    }
  }
});

test('a second call and a call that is not idle start from nothing kept', () => {
  const first = same(apiView, undefined, 'first');
  same(first.value.messages, undefined, 'on its own output');
  same(apiView, { idleMinutes: 60, now: 0, lastAssistantTimestamp: 0 }, 'not idle');
  same(apiView, { idleMinutes: 60, now: 1e13, lastAssistantTimestamp: 0 }, 'idle');
});

// The one-pass reader of Anthropic API messages (`apiToolIndex_`) interns tool names in a list
// up to 16 and a Map past that, grows its buffers, and hands over to the general reader when a
// result's call is more than 64 calls back: each checked against what the rules give, worked
// out here from the messages alone.
test('many tools, many calls, far calls: the results the rules pick', () => {
  const big = 'y'.repeat(2000);
  const names = Array.from({ length: 24 }, (_, k) => `Tool${k}`);
  // Each call a new name, or runs of the same name (the reader checks the previous call's
  // name first), before and past the 16 names of its list; the names as new strings each time.
  const schemes = { 'a new name each call': (k) => k % names.length, 'runs of one name': (k) => Math.floor(k / 3) % names.length };
  let h, ids;
  for (const [scheme, nameAt] of Object.entries(schemes)) {
    h = [{ role: 'user', content: 'go' }];
    ids = [];
    for (let k = 0; k < 600; k++) {
      const id = `c${k}`;
      const name = `${names[nameAt(k)]}`.split('').join('');
      ids.push({ id, name });
      h.push({ role: 'assistant', content: [{ type: 'text', text: 'on' }, { type: 'tool_use', id, name, input: { file_path: `/f${k % 7}` } }] });
      h.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: big }] });
    }
    const pickedBy = (allowed, keepRecent) => {
      const candidates = ids.filter((c) => allowed.includes(c.name));
      return candidates.slice(0, Math.max(0, candidates.length - keepRecent)).map((c) => c.id);
    };
    for (const allowed of [names, names.slice(15, 20), [names[3], names[23]]]) {
      const r = same(h, { keepRecent: 2, compactableTools: allowed }, `${scheme}: ${allowed.length} tools allowed`);
      assert.deepEqual(r.value.clearedToolUseIds, pickedBy(allowed, 2), scheme);
    }
    same(h, { keepRecent: 0, compactableTools: ['*'], keepLatestPerPath: true }, `${scheme}: latest per path`);
  }
  // 80 parallel calls, answered oldest first: the first results' calls are > 64 back.
  const wide = [{ role: 'assistant', content: ids.slice(0, 80).map(({ id }) => ({ type: 'tool_use', id, name: 'Read', input: {} })) },
    { role: 'user', content: ids.slice(0, 80).map(({ id }) => ({ type: 'tool_result', tool_use_id: id, content: big })) }];
  const r = same(wide, { keepRecent: 3 }, 'far calls');
  assert.deepEqual(r.value.clearedToolUseIds, ids.slice(0, 77).map((c) => c.id));
});

test('API messages the one-pass reader leaves to the general one: the same result or error', () => {
  const big = 'z'.repeat(3000);
  const call = (id) => ({ role: 'assistant', content: [{ type: 'tool_use', id, name: 'Bash', input: { command: 'ls' } }] });
  const result = (id) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: big }] });
  const base = [call('a'), result('a'), call('b'), result('b'), call('c'), result('c')];
  const cases = {
    'a boundary last': [...base, { role: 'assistant', content: [{ type: 'compaction', content: 'sum' }] }],
    'a boundary first': [{ role: 'assistant', content: [{ type: 'compaction', content: 'sum' }] }, ...base],
    'a transcript line among them': [...base, { type: 'user', message: { role: 'user', content: 'hi' }, uuid: 'u' }],
    'a block type not a string after a call': [{ role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'Bash', input: {} }, { type: 7 }] }, result('a')],
    'a result content an object': [call('a'), { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: { text: big } }] }],
    'a call without a name': [{ role: 'assistant', content: [{ type: 'tool_use', id: 'a', input: {} }] }, result('a')],
    'a document first': [{ role: 'user', content: [{ type: 'document', source: { type: 'text', data: 'd' } }] }, ...base],
    'a server tool': [{ role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }] }, ...base],
    // (toJSON: the checks stringify the input)
    'a getter that throws': [...base, { role: 'user', toJSON: () => ({ role: 'user' }), get content() { throw new Error('no'); } }],
    'a sparse array': Object.assign(new Array(3), { 0: call('a'), 2: result('a') }),
  };
  for (const [what, h] of Object.entries(cases)) {
    for (const keepRecent of [0, 1]) same(h, { keepRecent }, what);
  }
});

test('AI SDK ModelMessage parts the direct reader reads, and the ones it describes: the same result or error', () => {
  const big = 'y'.repeat(3000);
  const RS = '\u001e';
  const call = (id, extra = {}) => ({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 'Read', input: { file_path: `/f/${id}` }, ...extra }] });
  const result = (id, output, extra = {}) => ({ role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName: 'Read', output, ...extra }] });
  const text = (value) => ({ type: 'text', value });
  const outputs = {
    text: text(big),
    'error-text': { type: 'error-text', value: big },
    json: { type: 'json', value: { rows: [big, 1, null] } },
    'error-json': { type: 'error-json', value: [big] },
    content: { type: 'content', value: [{ type: 'text', text: big }, { type: 'image-data', data: 'AA', mediaType: 'image/png' }, { type: 'media', data: 'AA', mediaType: 'application/pdf' }] },
    'content not an array': { type: 'content', value: 'no' },
    'execution-denied': { type: 'execution-denied', reason: big },
    'execution-denied, no reason': { type: 'execution-denied' },
    'another type': { type: 'future-kind', value: big },
    'a bare string': big,
    'an array': [{ type: 'text', text: big }, { type: 'image', image: 'AA' }],
    'an object without type': { value: big },
    'already cleared': text('[Old tool result content cleared]'),
    'a bare cleared string': '[Old tool result content cleared]',
    missing: undefined,
    null: null,
  };
  const tail = [call('z1'), result('z1', text(big)), call('z2'), result('z2', text(big))];
  const cases = {};
  for (const [what, output] of Object.entries(outputs)) {
    cases[`output ${what}`] = [{ role: 'user', content: 'go' }, call('a'), result('a', output), ...tail];
  }
  Object.assign(cases, {
    'result (older versions)': [call('a'), { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'a', toolName: 'Read', result: big }] }, ...tail],
    'args, id and name': [{ role: 'assistant', content: [{ type: 'tool_call', id: 'a', name: 'Grep', args: { path: '/p' } }] }, result('a', text(big)), ...tail],
    'a JSON string input': [call('a', { input: '{"file_path":"/s"}' }), result('a', text(big)), ...tail],
    'a name that is not a string': [call('a', { toolName: 7 }), result('a', text(big)), ...tail],
    'a call without its id': [call('a', { toolCallId: undefined }), result('a', text(big)), ...tail],
    'a result without its id': [call('a'), result(undefined, text(big)), ...tail],
    'RS in ids, names and paths': [call(`a${RS}b`, { toolName: `Re${RS}ad`, input: { file_path: `/x${RS}y` } }), result(`a${RS}b`, text(big)), ...tail],
    'an Anthropic tool_result part': [call('a'), { role: 'tool', content: [{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: big }] }] }, ...tail],
    'server_tool_use and tool_use parts': [{ role: 'assistant', content: [{ type: 'server_tool_use', id: 's', name: 'web', input: {} }, { type: 'tool_use', id: 'a', name: 'Read', input: { notebook_path: '/n' } }] }, result('a', text(big)), result('s', text(big)), ...tail],
    'text, reasoning and files around the parts': [{ role: 'assistant', content: [{ type: 'text', text: 'hm' }, { type: 'reasoning', text: 'think' }, { type: 'tool-call', toolCallId: 'a', toolName: 'Read', input: {} }] }, { role: 'tool', content: [null, 'str', { type: 'file', data: 'AA', mediaType: 'image/png' }, { type: 'tool-result', toolCallId: 'a', toolName: 'Read', output: text(big) }] }, ...tail],
    'a tool message with string content': [call('a'), { role: 'tool', content: 'plain' }, ...tail],
    'one file read twice': [call('a'), result('a', text(big)), call('b', { input: { file_path: '/f/a' } }), result('b', text(big)), ...tail],
    'a result far from its call': [call('far'), ...Array.from({ length: 70 }, (_, k) => call(`n${k}`)), result('far', text(big)), ...tail],
    'a malformed part type': [call('a'), { role: 'tool', content: [{ type: 5 }, { type: 'tool-result', toolCallId: 'a', toolName: 'Read', output: text(big) }] }, ...tail],
  });
  const cleared = sameUnderEveryOption(cases);
  assert.ok(cleared > 100, `${cleared} results cleared`);
});

test('OpenAI Chat, Responses and LangChain messages the direct reader reads, and odd ones: the same result or error', () => {
  const big = 'q'.repeat(3000);
  const RS = '\u001e';
  const chatCall = (id, args = `{"file_path":"/f/${id}"}`) => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'Read', arguments: args } }] });
  const chatResult = (id, content = big) => ({ role: 'tool', tool_call_id: id, content });
  const chatTail = [chatCall('z1'), chatResult('z1'), chatCall('z2'), chatResult('z2')];
  const respCall = (id, extra = {}) => ({ type: 'function_call', call_id: id, name: 'Read', arguments: '{}', ...extra });
  const respResult = (id, output = big) => ({ type: 'function_call_output', call_id: id, output });
  const respTail = [respCall('z1'), respResult('z1'), respCall('z2'), respResult('z2')];
  const cases = {
    'chat: a result of parts': [chatCall('a'), chatResult('a', [{ type: 'text', text: big }, { type: 'image_url', image_url: { url: 'data:,' } }]), ...chatTail],
    'chat: a result not a string': [chatCall('a'), chatResult('a', { big }), ...chatTail],
    'chat: a cleared result': [chatCall('a'), chatResult('a', '[Old tool result content cleared]'), ...chatTail],
    'chat: reasoning, text and two calls': [{ role: 'assistant', reasoning_content: 'hmm', content: 'text', tool_calls: [{ id: 'a', type: 'function', function: { name: 'Grep', arguments: '{}' } }, { id: 'b', type: 'custom', custom: { name: 'Edit', input: 'raw' } }] }, chatResult('a'), chatResult('b'), ...chatTail],
    'chat: odd tool_calls': [{ role: 'assistant', content: [{ type: 'text', text: 'x' }], tool_calls: [null, { id: 'n' }, { type: 'tool-call', toolCallId: 'a', toolName: 'Read', input: {} }] }, chatResult('a'), ...chatTail],
    'chat: a legacy function call': [{ role: 'assistant', content: null, function_call: { name: 'Read', arguments: '{}' } }, { role: 'function', name: 'Read', content: big }, ...chatTail],
    'chat: RS in ids and names': [chatCall(`a${RS}`), chatResult(`a${RS}`), { role: 'assistant', content: null, tool_calls: [{ id: 'b', type: 'function', function: { name: `R${RS}`, arguments: '{}' } }] }, chatResult('b'), ...chatTail],
    'chat: a result far from its call': [chatCall('far'), ...Array.from({ length: 70 }, (_, k) => chatCall(`n${k}`)), chatResult('far'), ...chatTail],
    'responses: outputs of every kind': [respCall('a'), respResult('a', [{ type: 'input_text', text: big }, { type: 'input_image', image_url: 'data:,' }]), respCall('b'), respResult('b', { big }), respCall('c'), respResult('c', null), ...respTail],
    'responses: custom tools, reasoning and messages': [{ type: 'reasoning', summary: [{ type: 'summary_text', text: 'why' }] }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }, { type: 'custom_tool_call', call_id: 'a', name: 'Edit', input: 'raw' }, { type: 'custom_tool_call_output', call_id: 'a', output: big }, ...respTail],
    'responses: an item reference and a result without its id': [{ id: 'ref_1' }, respCall('a'), { type: 'function_call_output', output: big }, ...respTail],
  };
  const api = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: [{ type: 'text', text: 'reading' }, { type: 'tool_use', id: 'a', name: 'Read', input: { file_path: '/f/a' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: big }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AA' } }] }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'b', name: 'Read', input: { file_path: '/f/a' } }, { type: 'tool_use', id: 'c', name: 'Bash', input: { command: 'ls' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'b', content: big }, { type: 'tool_result', tool_use_id: 'c', content: '[Old tool result content cleared]' }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'd', name: 'Grep', input: { path: '/p' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'd', content: big }] },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'e', name: 'Read', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'e', content: big }] },
  ];
  for (const [name, convert] of [['langchain', toLangChain], ['langchain stored', toLangChainStored], ['langchain serialized', toLangChainSerialized]]) {
    cases[name] = convert(api);
  }
  const lcCall = (id, extra = {}) => new AIMessage({ content: 'calling', tool_calls: [{ id, name: 'Read', args: { file_path: `/f/${id}` } }], ...extra });
  const lcResult = (id, content = big) => new ToolMessage({ content, tool_call_id: id });
  cases['langchain: calls only in tool_calls'] = [lcCall('a'), lcResult('a'), lcCall('b'), lcResult('b', [{ type: 'text', text: big }]), lcCall('c'), lcResult('c'), lcCall('d'), lcResult('d')];
  cases['langchain: a call in both'] = [new AIMessage({ content: [{ type: 'tool_use', id: 'a', name: 'Read', input: { file_path: '/x' } }], tool_calls: [{ id: 'a', name: 'Read', args: { file_path: '/x' } }, { id: 'b', name: 'Grep', args: {} }] }), lcResult('a'), lcResult('b'), lcCall('c'), lcResult('c'), lcCall('d'), lcResult('d')];
  // ChatOpenAI's Responses items and an OpenAI-compatible server's reasoning in additional_kwargs
  // (described after the content and calls: the blocks before keep their numbers).
  const kept = { reasoning_content: 'hmm', reasoning: { type: 'reasoning', summary: [], encrypted_content: 'e'.repeat(99) },
    tool_outputs: [{ type: 'mcp_call', id: 'm', name: 'get', arguments: '{}', output: big }, { type: 'code_interpreter_call', id: 'ci', code: 'x', outputs: [{ type: 'image', url: 'u' }] }] };
  cases['langchain: items in additional_kwargs'] = [lcCall('a', { additional_kwargs: kept }), lcResult('a'), lcCall('b'), lcResult('b'), lcCall('c', { additional_kwargs: kept }), lcResult('c'), lcCall('d'), lcResult('d')];
  const cleared = sameUnderEveryOption(cases);
  assert.ok(cleared > 80, `${cleared} results cleared`);
});
