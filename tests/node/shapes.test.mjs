// Every message shape JS users hold (issue 10): AI SDK ModelMessage and UIMessage, OpenAI
// Chat Completions and Responses items, LangChain messages (instances, stored, serialized),
// Anthropic messages with `role: 'system'`. Hand-built conversations here; the real
// transcripts rendered into every shape are in shapes-transcripts.test.mjs.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  AIMessage, HumanMessage, SystemMessage, ToolMessage, mapChatMessagesToStoredMessages,
  mapStoredMessagesToChatMessages,
} from '@langchain/core/messages';
import { convertToModelMessages, modelMessageSchema, validateUIMessages } from 'ai';
import * as cc from '../../pkg/node.js';
import { SONNET, assertValidForApi, base64OfBytes, filler, recordingSummarizer, summaryResponse } from './helpers/support.mjs';

const KB40 = filler(40_000, 3);
const PNG = base64OfBytes(600);

// One conversation, written once per shape: a request, a reply with reasoning and a tool
// call, its result, a second call whose result holds text and an image, a final answer.
const T = {
  ask: filler(1_200, 1), think: filler(900, 2), say: filler(300, 4), out1: filler(8_000, 5),
  out2: filler(3_000, 6), done: filler(700, 7),
};
const IN1 = { file_path: '/src/main.rs' };
const IN2 = { command: 'cargo test', timeout: 60 };

const anthropic = () => [
  { role: 'user', content: T.ask },
  { role: 'assistant', content: [
    { type: 'thinking', thinking: T.think, signature: 'sig' },
    { type: 'text', text: T.say },
    { type: 'tool_use', id: 'c1', name: 'Read', input: IN1 },
  ] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: T.out1 }] },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'c2', name: 'Bash', input: IN2 }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c2', content: [
    { type: 'text', text: T.out2 },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
  ] }] },
  { role: 'assistant', content: [{ type: 'text', text: T.done }] },
];

const aiModel = () => [
  { role: 'user', content: T.ask },
  { role: 'assistant', content: [
    { type: 'reasoning', text: T.think },
    { type: 'text', text: T.say },
    { type: 'tool-call', toolCallId: 'c1', toolName: 'Read', input: IN1 },
  ] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'Read', output: { type: 'text', value: T.out1 } }] },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c2', toolName: 'Bash', input: IN2 }] },
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c2', toolName: 'Bash', output: { type: 'content', value: [
    { type: 'text', text: T.out2 }, { type: 'media', data: PNG, mediaType: 'image/png' },
  ] } }] },
  { role: 'assistant', content: [{ type: 'text', text: T.done }] },
];

const aiUi = () => [
  { id: 'u1', role: 'user', parts: [{ type: 'text', text: T.ask }] },
  { id: 'a1', role: 'assistant', metadata: { model: 'x' }, parts: [
    { type: 'step-start' },
    { type: 'reasoning', text: T.think },
    { type: 'text', text: T.say },
    { type: 'tool-Read', toolCallId: 'c1', state: 'output-available', input: IN1, output: T.out1 },
    { type: 'step-start' },
    { type: 'tool-Bash', toolCallId: 'c2', state: 'output-available', input: IN2, output: T.out2 },
    { type: 'source-url', sourceId: 's', url: 'https://example.com/' + filler(2_000, 8) },
    { type: 'data-progress', data: { note: filler(5_000, 9) } },
    { type: 'step-start' },
    { type: 'text', text: T.done },
  ] },
];

const chat = () => [
  { role: 'user', content: T.ask },
  // `reasoning_content`: the field OpenAI-compatible servers (DeepSeek, vLLM) add.
  { role: 'assistant', reasoning_content: T.think, content: T.say, tool_calls: [
    { id: 'c1', type: 'function', function: { name: 'Read', arguments: JSON.stringify(IN1) } },
  ] },
  { role: 'tool', tool_call_id: 'c1', content: T.out1 },
  { role: 'assistant', content: null, tool_calls: [
    { id: 'c2', type: 'function', function: { name: 'Bash', arguments: JSON.stringify(IN2) } },
  ] },
  { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: T.out2 }] },
  { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] },
  { role: 'assistant', content: T.done },
];

const responses = () => [
  { role: 'user', content: T.ask },
  { type: 'reasoning', id: 'r1', summary: [{ type: 'summary_text', text: T.think }] },
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: T.say }] },
  { type: 'function_call', call_id: 'c1', name: 'Read', arguments: JSON.stringify(IN1) },
  { type: 'function_call_output', call_id: 'c1', output: T.out1 },
  { type: 'function_call', call_id: 'c2', name: 'Bash', arguments: JSON.stringify(IN2) },
  { type: 'function_call_output', call_id: 'c2', output: [
    { type: 'input_text', text: T.out2 }, { type: 'input_image', image_url: `data:image/png;base64,${PNG}` },
  ] },
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: T.done }] },
];

const langchain = () => [
  new HumanMessage(T.ask),
  new AIMessage({ content: [
    { type: 'thinking', thinking: T.think, signature: 'sig' },
    { type: 'text', text: T.say },
    { type: 'tool_use', id: 'c1', name: 'Read', input: IN1 },
  ], tool_calls: [{ id: 'c1', name: 'Read', args: IN1, type: 'tool_call' }] }),
  new ToolMessage({ content: T.out1, tool_call_id: 'c1' }),
  new AIMessage({ content: '', tool_calls: [{ id: 'c2', name: 'Bash', args: IN2, type: 'tool_call' }] }),
  new ToolMessage({ content: [
    { type: 'text', text: T.out2 }, { type: 'image_url', image_url: `data:image/png;base64,${PNG}` },
  ], tool_call_id: 'c2' }),
  new AIMessage(T.done),
];

const SHAPES = {
  'ai-sdk-model': aiModel,
  'ai-sdk-ui': aiUi,
  'openai-chat': chat,
  'openai-responses': responses,
  langchain,
  'langchain-stored': () => mapChatMessagesToStoredMessages(langchain()),
  'langchain-serialized': () => JSON.parse(JSON.stringify(langchain())),
};

const count = (m) => cc.tokenCountWithEstimation(m);

// Four rounds of the conversation (ids renamed per round), after a system message where
// the shape has one: what an app of that ecosystem holds after a while.
const SYSTEM = {
  'ai-sdk-model': { role: 'system', content: 'Answer briefly.' },
  'ai-sdk-ui': { id: 's', role: 'system', parts: [{ type: 'text', text: 'Answer briefly.' }] },
  'openai-chat': { role: 'developer', content: 'Answer briefly.' },
  'openai-responses': { role: 'developer', content: 'Answer briefly.' },
  langchain: new SystemMessage('Answer briefly.'),
};
const rounds = (name, make) => {
  const out = [];
  const sys = SYSTEM[name.startsWith('langchain') ? 'langchain' : name];
  if (name === 'langchain') out.push(sys);
  else if (name === 'langchain-stored') out.push(...mapChatMessagesToStoredMessages([sys]));
  else if (name === 'langchain-serialized') out.push(JSON.parse(JSON.stringify(sys)));
  else out.push(sys);
  for (let k = 0; k < 4; k++) {
    if (name.startsWith('langchain')) {
      const lc = langchain().map((m) => {
        if (m.tool_call_id) return new ToolMessage({ content: m.content, tool_call_id: `r${k}${m.tool_call_id}` });
        if (m.tool_calls?.length) return new AIMessage({ content: m.content.filter?.((b) => b.type !== 'tool_use') ?? m.content, tool_calls: m.tool_calls.map((c) => ({ ...c, id: `r${k}${c.id}` })) });
        return m;
      });
      out.push(...(name === 'langchain' ? lc : name === 'langchain-stored' ? mapChatMessagesToStoredMessages(lc) : JSON.parse(JSON.stringify(lc))));
    } else {
      out.push(...JSON.parse(JSON.stringify(make()).replace(/"(c[12])"/g, `"r${k}$1"`)));
    }
  }
  return out;
};


describe('counting every shape', () => {
  test('the issue\'s cases: no shape reads as (nearly) nothing', () => {
    const million = filler(1_000_000, 11);
    const ui = [{ id: 'u', role: 'user', parts: [{ type: 'text', text: million }] }];
    assert.equal(count(ui), 250_000);
    assert.equal(cc.shouldAutoCompact(ui, SONNET), true, 'the overflow the library exists to prevent');
    const cases = {
      'LangChain ToolMessage': [new HumanMessage('hi'), new AIMessage({ content: '', tool_calls: [{ id: 't', name: 'Read', args: {} }] }), new ToolMessage({ content: KB40, tool_call_id: 't' })],
      'OpenAI tool message': [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'Read', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 't', content: KB40 }],
      'Responses function_call_output': [{ role: 'user', content: 'hi' }, { type: 'function_call', call_id: 't', name: 'Read', arguments: '{}' }, { type: 'function_call_output', call_id: 't', output: KB40 }],
      'AI SDK tool message': [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 't', toolName: 'Read', input: {} }] }, { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't', toolName: 'Read', output: { type: 'text', value: KB40 } }] }],
      'Anthropic role system': [{ role: 'system', content: KB40 }, { role: 'user', content: 'hi' }],
      'OpenAI developer message': [{ role: 'developer', content: KB40 }, { role: 'user', content: 'hi' }],
    };
    for (const [name, msgs] of Object.entries(cases)) {
      const n = count(msgs);
      assert.ok(n >= 10_000 && n < 10_050, `${name}: ${n} tokens for 40,000 characters`);
    }
  });

  test('the same conversation counts within ±5% of its Anthropic count in every shape', () => {
    const base = count(anthropic());
    // Chat Completions has no image in a tool message: the image travels in a user message.
    for (const [name, make] of Object.entries(SHAPES)) {
      const n = count(make());
      const ref = name === 'ai-sdk-ui'
        ? base - 2_000 // a UIMessage tool output is the tool's value: no image part here
        : base;
      assert.ok(Math.abs(n - ref) / ref <= 0.05, `${name}: ${n} vs ${ref}`);
    }
  });

  test('every AI SDK tool output type is read', () => {
    const out = (output) => [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 't', toolName: 'x', output }] }];
    const v = filler(4_000, 12);
    assert.equal(count(out({ type: 'text', value: v })), 1_000);
    assert.equal(count(out({ type: 'error-text', value: v })), 1_000);
    assert.ok(count(out({ type: 'json', value: { v } })) >= 1_000);
    assert.ok(count(out({ type: 'error-json', value: [v] })) >= 1_000);
    assert.equal(count(out({ type: 'content', value: [{ type: 'text', text: v }] })), 1_000);
    assert.ok(count(out({ type: 'content', value: [{ type: 'media', data: PNG, mediaType: 'image/png' }] })) > 1_000);
    assert.equal(count(out({ type: 'execution-denied', reason: v })), 1_000);
  });

  test('UIMessage parts the model never receives count 0; tool parts count in every state', () => {
    const parts = (p) => [{ id: 'a', role: 'assistant', parts: p }];
    assert.equal(count(parts([{ type: 'step-start' }, { type: 'source-url', sourceId: 's', url: 'https://x/' + KB40 }, { type: 'data-x', data: KB40 }])), 0);
    const input = { q: filler(4_000, 13) };
    const called = count(parts([{ type: 'tool-search', toolCallId: 't', state: 'input-available', input }]));
    assert.ok(called > 1_000, `a pending call counts its input (${called})`);
    const errored = count(parts([{ type: 'tool-search', toolCallId: 't', state: 'output-error', input, errorText: filler(4_000, 14) }]));
    assert.equal(errored, called + 1_000);
    const dynamic = count(parts([{ type: 'dynamic-tool', toolName: 'search', toolCallId: 't', state: 'output-available', input, output: { rows: [filler(4_000, 15)] } }]));
    assert.ok(dynamic > called + 1_000);
  });

  test('LangChain messages from before 1.0 (no `type`, `_getType()`) are read too', () => {
    const old = (type, fields) => ({ lc_namespace: ['langchain_core', 'messages'], _getType: () => type, additional_kwargs: {}, ...fields });
    const msgs = [old('human', { content: 'hi' }), old('ai', { content: '', tool_calls: [{ id: 't', name: 'Read', args: {} }] }), old('tool', { content: KB40, tool_call_id: 't' })];
    assert.ok(count(msgs) >= 10_000);
    assert.equal(cc.microCompact(msgs, { keepRecent: 0 }).clearedToolUseIds.length, 1);
  });

  test('usage given in any ecosystem\'s names anchors messages that carry none', () => {
    const msgs = [{ role: 'user', content: KB40 }, { role: 'assistant', content: 'ok' }, { role: 'user', content: filler(400, 23) }];
    for (const usage of [
      { inputTokens: 12_000, outputTokens: 40, totalTokens: 12_040 },          // AI SDK LanguageModelUsage
      { prompt_tokens: 12_000, completion_tokens: 40, total_tokens: 12_040 },  // Chat Completions
      { input_tokens: 12_000, output_tokens: 40 },                             // Responses, LangChain
      { input_tokens: 2_000, cache_read_input_tokens: 10_000, output_tokens: 40 }, // Anthropic
    ]) {
      assert.equal(cc.tokenCountWithEstimation(msgs, { usage }), 12_040 + 100, JSON.stringify(usage));
    }
    assert.equal(cc.tokenCountWithEstimation(msgs, { usage: { inputTokens: 12_000, outputTokens: 40 }, usageAt: 2 }), 12_040);
    const config = { contextWindow: 40_000 }; // threshold 7,000
    assert.equal(cc.shouldAutoCompact([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'ok' }], SONNET, { config, usage: { inputTokens: 9_000, outputTokens: 10 } }), true);
    for (const [options, re] of [
      [{ usageAt: 1 }, /usageAt needs/],
      [{ usage: 5 }, /must be an object/],
      [{ usage: { totalTokens: 5 } }, /no input or output/],
      [{ usage: { inputTokens: 1 }, usageAt: 9 }, /past the last message/],
      [{ usage: { inputTokens: 1 }, usageAt: 1.5 }, /whole number/],
    ]) {
      assert.throws(() => cc.tokenCountWithEstimation(msgs, options), (e) => e.code === 'INVALID_ARGUMENT' && re.test(e.message), JSON.stringify(options));
    }
    assert.throws(() => cc.tokenCountWithEstimation(msgs, { usage: { inputTokens: -3 } }), (e) => e.code === 'INVALID_TOKEN_COUNT');
  });

  test('the system prompt and tools given count where nothing anchors the count', () => {
    const msgs = [{ role: 'user', content: filler(400, 24) }];
    const system = filler(8_000, 25);
    const tools = [{ name: 'read_file', description: filler(1_000, 26), input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];
    const toolsTokens = Math.round(JSON.stringify(tools).length / 2);
    assert.equal(cc.tokenCountWithEstimation(msgs, { system }), 100 + 2_000);
    assert.equal(cc.tokenCountWithEstimation(msgs, { system: [{ type: 'text', text: system }] }), 100 + 2_000);
    assert.equal(cc.tokenCountWithEstimation(msgs, { system, tools }), 100 + 2_000 + toolsTokens);
    // The AI SDK's record of tools, measured as written.
    const aiTools = { read_file: { description: filler(1_000, 26), inputSchema: { jsonSchema: { type: 'object' } } } };
    assert.equal(cc.tokenCountWithEstimation(msgs, { tools: aiTools }), 100 + Math.round(JSON.stringify(aiTools).length / 2));
    const config = { contextWindow: 40_000 }; // threshold 7,000
    assert.equal(cc.shouldAutoCompact(msgs, SONNET, { config }), false);
    assert.equal(cc.shouldAutoCompact(msgs, SONNET, { config, system: filler(30_000, 27) }), true);
    // Usage already includes them.
    const anchored = [...msgs, { role: 'assistant', content: 'ok', usage: { input_tokens: 3_000, output_tokens: 5 } }];
    assert.equal(cc.tokenCountWithEstimation(anchored, { system, tools }), 3_005);
    const cyclic = {}; cyclic.self = cyclic;
    assert.throws(() => cc.tokenCountWithEstimation(msgs, { tools: cyclic }), (e) => e.code === 'INVALID_ARGUMENT' && /options.tools/.test(e.message));
  });

  test('LangChain usage_metadata anchors the count like Anthropic usage', () => {
    const msgs = [new HumanMessage(KB40), new AIMessage({ content: 'ok', usage_metadata: { input_tokens: 12_345, output_tokens: 55, total_tokens: 12_400 } }), new HumanMessage(filler(400, 16))];
    assert.equal(count(msgs), 12_345 + 55 + 100);
    const stored = mapChatMessagesToStoredMessages(msgs);
    assert.equal(count(stored), 12_345 + 55 + 100);
    const bad = [new AIMessage({ content: 'ok', usage_metadata: { input_tokens: -1, output_tokens: 1, total_tokens: 0 } })];
    assert.throws(() => count(bad), (e) => e.code === 'INVALID_TOKEN_COUNT');
  });

  test('warning state and shouldAutoCompact agree across shapes at every prefix', () => {
    const config = { contextWindow: 34_000 }; // threshold 1,000
    const a = anthropic();
    for (const [name, make] of Object.entries(SHAPES)) {
      if (name === 'ai-sdk-ui') continue; // one UIMessage holds the whole turn
      const msgs = make();
      for (let k = 1; k <= msgs.length; k++) {
        const prefix = msgs.slice(0, k);
        const n = count(prefix);
        const w = cc.calculateTokenWarningState(n, SONNET, config);
        assert.equal(typeof w.isAboveAutoCompactThreshold, 'boolean');
        assert.equal(cc.shouldAutoCompact(prefix, SONNET, { config }), n >= cc.getAutoCompactThreshold(SONNET, config), `${name} at ${k}`);
      }
      assert.equal(cc.shouldAutoCompact(msgs, SONNET, { config }), cc.shouldAutoCompact(a, SONNET, { config }), name);
    }
  });
});

describe("the providers' server-side compaction", () => {
  const compacted = (usage) => [
    { role: 'user', content: KB40 },
    { role: 'assistant', content: [{ type: 'compaction', content: filler(400, 20), encrypted_content: 'e'.repeat(90_000) }], ...(usage ? { usage } : {}) },
    { role: 'user', content: filler(800, 21) },
  ];
  test('Anthropic: counting starts at the last compaction block, counted by its content', () => {
    assert.equal(count(compacted()), 100 + 200);
    const iterations = [{ type: 'compaction', input_tokens: 180_000, output_tokens: 3_000 }, { type: 'message', input_tokens: 5_000, output_tokens: 50 }];
    assert.equal(count(compacted({ input_tokens: 5_000, output_tokens: 50, iterations })), 5_050 + 200, 'the message iteration is the context; the compaction iteration is billing');
    assert.equal(count(compacted({ input_tokens: 0, output_tokens: 0 })), 300, "an on-demand compaction's zero usage is no anchor");
    const failed = compacted();
    failed[1] = { role: 'assistant', content: [{ type: 'compaction', content: null }, { type: 'text', text: 'x' }] };
    assert.ok(count(failed) > 10_000, 'a failed compaction (content null) changes nothing');
    // The same in transcript lines, and validation accepts the block first.
    const lines = compacted().map((m, i) => ({ type: m.role, uuid: `u${i}`, message: m }));
    assert.equal(count(lines), 300);
    assert.equal(cc.validateForApi(compacted()).valid, true);
    assert.equal(cc.toApiMessages(compacted())[0].content[0].type, 'compaction');
  });

  test('microCompact and stripImagesFromMessages leave the compaction block byte-exact', () => {
    const msgs = [...compacted(), { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'Read', input: {} }] }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: KB40 }] }];
    const out = cc.microCompact(msgs, { keepRecent: 0 });
    assert.equal(out.messages[1], msgs[1]);
    assert.equal(cc.stripImagesFromMessages(msgs)[1], msgs[1]);
  });

  test('truncateHeadForPTLRetry keeps the compaction message first', () => {
    const msgs = [...compacted()];
    for (let k = 0; k < 6; k++) msgs.push({ role: 'assistant', content: `answer ${k}` }, { role: 'user', content: filler(4_000, 30 + k) });
    const t = cc.truncateHeadForPTLRetry(msgs, null);
    assert.equal(t[0], msgs[1]);
    assert.ok(t.length < msgs.length && !t.includes(msgs[0]) && !t.includes(msgs[2]));
    assert.equal(cc.validateForApi(t).valid, true, JSON.stringify(cc.validateForApi(t).problems));
  });

  // (A server-side compaction's item follows the turns it replaced; one that only user
  // messages precede is the window of `/responses/compact`, whose messages are read:
  // tests/node/shapes-round12.test.mjs N5.)
  const replyItem = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Working on it.', annotations: [] }] };

  test('OpenAI Responses: counting starts at the last compaction item', () => {
    const items = [{ role: 'user', content: KB40 }, replyItem, { type: 'compaction', id: 'cmp_1', encrypted_content: 'e'.repeat(4_000) }, { role: 'user', content: filler(800, 22) }];
    assert.equal(count(items), 1_000 + 200);
  });

  // What the summary request says, as text.
  const sentText = (summarize) => summarize.calls.map(({ request }) => request.messages.map((m) => m.content.map((b) => b.text).join('\n')).join('\n')).join('\n');

  test("OpenAI Responses: a full compaction tells the summarizer of the provider's compaction and keeps the item first", async () => {
    const item = { type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAA' + 'C'.repeat(20_000) };
    const items = [
      { role: 'user', content: 'BEFORE the provider compaction ' + KB40 },
      replyItem,
      item,
      { role: 'user', content: 'Continue with the migration. '.repeat(30) },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Migrating table users. '.repeat(30), annotations: [] }] },
      { role: 'user', content: 'status?' },
    ];
    const summarize = recordingSummarizer();
    const r = await cc.compactConversation(items, { model: 'gpt-5', summarize });
    const sent = sentText(summarize);
    assert.match(sent, /compacted by the provider's server-side compaction/);
    assert.ok(!sent.includes('CCCCCCCC') && !sent.includes('BEFORE the provider'), 'neither the encrypted summary nor what it replaced is sent');
    assert.ok(sent.includes('Migrating table users.'));
    const out = cc.buildPostCompactMessages(r);
    assert.equal(out[0], item, "the caller's item, first");
    assert.equal(r.summaryMessages[0], item);
    assert.equal(out.filter((m) => m.type === 'compaction').length, 1);
    assert.match(JSON.stringify(out[1]), /SUMMARY|summary/i);
    // Counted as it is sent, the item included.
    assert.equal(r.truePostCompactTokenCount, count(out));
    assert.ok(r.truePostCompactTokenCount > 5_000);
    // A Compactor holds it first too, and its count agrees.
    const c = new cc.Compactor({ model: 'gpt-5', summarize: recordingSummarizer(), messages: items });
    const cr = await c.compact();
    assert.equal(c.messages[0], item);
    assert.equal(c.tokenCount(), cr.truePostCompactTokenCount);
    // Compacting again keeps it (still first), never twice.
    c.pushMany([{ role: 'user', content: 'More work. ' + KB40 }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] }]);
    await c.compact();
    assert.equal(c.messages[0], item);
    assert.equal(c.messages.filter((m) => m.type === 'compaction').length, 1);
  });

  test('Anthropic: the compaction block\'s readable summary reaches the summarizer, its encrypted form does not; a failed one says nothing', async () => {
    const msgs = [
      { role: 'user', content: 'BEFORE the provider compaction ' + KB40 },
      { role: 'assistant', content: [{ type: 'compaction', content: 'Earlier: migrated tables a, b, c. ANTHSUM', encrypted_content: 'E'.repeat(30_000) }] },
      { role: 'user', content: 'Continue with the migration. '.repeat(30) },
      { role: 'assistant', content: 'Migrating table users. '.repeat(30) },
      { role: 'user', content: 'status?' },
    ];
    const summarize = recordingSummarizer();
    const r = await cc.compactConversation(msgs, { model: SONNET, summarize });
    const sent = sentText(summarize);
    assert.match(sent, /written by the provider's server-side compaction\]\nEarlier: migrated tables a, b, c\. ANTHSUM/);
    assert.ok(!sent.includes('EEEEEEEE') && !sent.includes('BEFORE the provider'));
    // The new summary carries it: the block is not kept.
    assert.ok(!cc.buildPostCompactMessages(r).some((m) => JSON.stringify(m).includes('ANTHSUM')));
    // The same in Claude Code transcript lines.
    const lines = msgs.map((m, i) => ({ type: m.role, uuid: `u${i}`, parentUuid: i ? `u${i - 1}` : null, message: m }));
    const s1 = recordingSummarizer();
    const rl = await cc.compactConversation(lines, { model: SONNET, summarize: s1 });
    assert.match(sentText(s1), /written by the provider's server-side compaction\]\nEarlier: migrated tables a, b, c\. ANTHSUM/);
    assert.ok(!sentText(s1).includes('EEEEEEEE'));
    assert.equal(rl.boundaryMarker.subtype, 'compact_boundary');
    // A failed compaction (content null) is not shown as anything.
    const failed = structuredClone(msgs);
    failed[1].content = [{ type: 'compaction', content: null }, { type: 'text', text: 'went on' }];
    const s2 = recordingSummarizer();
    await cc.compactConversation(failed, { model: SONNET, summarize: s2 });
    const sent2 = sentText(s2);
    assert.ok(!sent2.includes("provider's server-side compaction") && !sent2.includes('"compaction"'), 'no compaction text');
    assert.ok(sent2.includes('went on') && sent2.includes('BEFORE the provider'), 'a failed compaction starts nothing');
  });
});

describe('one array, one shape', () => {
  test('a mixed array is MIXED_SHAPES naming both messages', () => {
    const mixed = [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 't', content: 'x' }, { id: 'u', role: 'user', parts: [{ type: 'text', text: 'a' }] }];
    for (const f of [() => count(mixed), () => cc.microCompact(mixed), () => cc.shouldAutoCompact(mixed, SONNET)]) {
      assert.throws(f, (e) => e.code === 'MIXED_SHAPES' && /messages\[2\] is a Vercel AI SDK UIMessage/.test(e.message) && /messages\[1\] is an OpenAI Chat Completions message/.test(e.message));
    }
    const three = [new HumanMessage('a'), { type: 'function_call_output', call_id: 'x', output: 'y' }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'y' }] }];
    assert.throws(() => count(three), (e) => e.code === 'MIXED_SHAPES');
  });

  test('plain {role, content} messages fit every shape', () => {
    for (const make of Object.values(SHAPES)) {
      const msgs = [{ role: 'user', content: 'plain' }, ...make()];
      if (msgs[1] instanceof HumanMessage || msgs[1].lc === 1 || msgs[1].data) continue; // LangChain has no plain form
      assert.ok(count(msgs) > 0);
    }
  });

  test('names of Object.prototype are no role, type or block kind', () => {
    // Not a role at all: an error naming it (a message of an unknown role is never left out).
    assert.throws(() => count([{ role: 'user', content: 'a' }, { role: 'constructor', content: KB40 }]),
      (e) => e.code === 'INVALID_MESSAGE' && /^messages\[1\]\.role: unknown role "constructor"/.test(e.message));
    assert.equal(count([{ role: 'user', content: [{ type: 'toString', text: 'x'.repeat(400) }] }]) > 100, true, 'an unknown block counts by its JSON');
    const serialized = JSON.parse(JSON.stringify([new HumanMessage(KB40)]));
    assert.equal(serialized[0].type, 'constructor');
    assert.ok(count(serialized) >= 10_000);
  });

  test('a message of no known shape is INVALID_MESSAGE naming its index and keys', () => {
    assert.throws(() => count([{ role: 'user', content: 'a' }, { text: 'hello', author: 'me' }]),
      (e) => e.code === 'INVALID_MESSAGE' && /messages\[1\]/.test(e.message) && /text, author/.test(e.message));
    assert.throws(() => count([42]), (e) => e.code === 'INVALID_MESSAGE' && /messages\[0\]/.test(e.message));
  });
});

describe('the shape option', () => {
  const plain = () => [
    { role: 'user', content: filler(4_000, 11) },
    { role: 'assistant', content: filler(3_000, 12) },
    { role: 'user', content: filler(4_000, 13) },
    { role: 'assistant', content: filler(3_000, 14) },
  ];
  const context = () => ({ model: SONNET, summarize: async () => summaryResponse('Summary of the plain chat.') });

  test('naming the shape refuses a message of another shape, in every function', async () => {
    const msgs = aiModel();
    const named = { shape: 'openai-chat' };
    const check = (e) => e.code === 'MIXED_SHAPES' && /messages\[1\] is a Vercel AI SDK ModelMessage/.test(e.message) && /'openai-chat'/.test(e.message);
    for (const f of [
      () => cc.tokenCountWithEstimation(msgs, named),
      () => cc.shouldAutoCompact(msgs, SONNET, named),
      () => cc.microCompact(msgs, named),
      () => cc.stripImagesFromMessages(msgs, named),
      () => cc.stripReinjectedAttachments(msgs, named),
      () => cc.groupMessagesByApiRound(msgs, named),
      () => cc.truncateHeadForPTLRetry(msgs, undefined, named),
      () => cc.toApiMessages(msgs, named),
      () => cc.validateForApi(msgs, named),
      () => new cc.Compactor({ ...context(), ...named, messages: msgs }),
    ]) assert.throws(f, check);
    await assert.rejects(cc.previewCompaction(msgs, { model: SONNET, ...named }), check);
    await assert.rejects(cc.compactConversation(msgs, context(), named), check);
    await assert.rejects(cc.compactConversation(msgs, { ...context(), ...named }), check);
    await assert.rejects(cc.autoCompactIfNeeded(msgs, { ...context(), ...named }), check);
    // The shape they are: accepted, and the same count as detection gives.
    assert.equal(cc.tokenCountWithEstimation(msgs, { shape: 'ai-sdk-model' }), count(msgs));
    assert.equal(cc.tokenCountWithEstimation(msgs, { shape: 'auto' }), count(msgs));
    assert.equal(cc.tokenCountWithEstimation(anthropic(), { shape: 'anthropic' }), count(anthropic()));
  });

  test('an unknown shape name is UNSUPPORTED_SHAPE listing the accepted ones, with a hint', () => {
    assert.throws(() => cc.tokenCountWithEstimation(plain(), { shape: 'openai' }),
      (e) => e.code === 'UNSUPPORTED_SHAPE' && /'openai-chat', 'openai-responses'/.test(e.message) && /'auto'/.test(e.message));
    assert.throws(() => cc.validateForApi(plain(), { shape: 'ai-sdk-uii' }),
      (e) => e.code === 'UNSUPPORTED_SHAPE' && /did you mean 'ai-sdk-ui'/.test(e.message));
    assert.throws(() => cc.validateForApi(plain(), { shape: 3 }), (e) => e.code === 'UNSUPPORTED_SHAPE');
    assert.throws(() => cc.validateForApi(plain(), { shap: 'openai-chat' }), (e) => e.code === 'INVALID_ARGUMENT' && /shape/.test(e.message));
    assert.throws(() => cc.tokenCountWithEstimation(plain(), { shape: 'any' }), (e) => e.code === 'UNSUPPORTED_SHAPE');
  });

  test('plain messages named as another shape are answered in that shape', async () => {
    for (const [shape, check] of [
      ['ai-sdk-ui', (m) => typeof m.id === 'string' && m.parts[0].type === 'text' && m.metadata.compactSummary === true],
      ['openai-responses', (m) => m.type === 'message' && m.content[0].type === 'input_text'],
      ['openai-chat', (m) => typeof m.content === 'string' && !m.subtype],
      ['langchain', (m) => typeof m.content === 'string'],
    ]) {
      const r = await cc.compactConversation(plain(), { ...context(), shape });
      assert.equal(r.messageShape, shape);
      const post = cc.buildPostCompactMessages(r);
      assert.ok(!post.some((m) => m.subtype === 'compact_boundary'), `${shape}: no transcript line`);
      assert.ok(check(post[0]), `${shape}: ${JSON.stringify(post[0]).slice(0, 200)}`);
      if (shape === 'ai-sdk-ui') await validateUIMessages({ messages: post });
    }
    // Detected (no option): Anthropic form with its boundary line, as before.
    const r = await cc.compactConversation(plain(), context());
    assert.equal(r.messageShape, undefined);
  });

  test('the Compactor keeps one shape across pushes and names the index in the whole conversation', () => {
    const c = new cc.Compactor({ model: SONNET, summarize: async () => summaryResponse('x') });
    c.pushMany(chat().slice(0, 3));
    c.push({ role: 'user', content: 'plain fits' });
    assert.throws(() => c.push({ id: 'u9', role: 'user', parts: [{ type: 'text', text: 'a UIMessage' }] }),
      (e) => e.code === 'MIXED_SHAPES' && /messages\[4\] is a Vercel AI SDK UIMessage/.test(e.message) && /messages\[1\] is an OpenAI Chat Completions message/.test(e.message));
    assert.equal(c.length, 4, 'nothing added');
    assert.throws(() => c.pushMany([{ role: 'user', content: 'ok' }, { type: 'function_call_output', call_id: 'x', output: 'y' }]),
      (e) => e.code === 'MIXED_SHAPES' && /messages\[5\]/.test(e.message));
    assert.equal(c.length, 4, 'all or none');
    c.push({ role: 'tool', tool_call_id: 'c9', content: 'still chat' });
    assert.equal(c.length, 5);
    c.free();
    const named = new cc.Compactor({ model: SONNET, shape: 'ai-sdk-ui', summarize: async () => summaryResponse('x') });
    named.push({ role: 'user', content: 'plain' });
    assert.throws(() => named.push({ role: 'tool', tool_call_id: 'c9', content: 'chat' }), (e) => e.code === 'MIXED_SHAPES' && /'ai-sdk-ui'/.test(e.message));
    named.free();
  });
});

describe('the tokenCounter option', () => {
  // A stand-in tokenizer: one token per word (whitespace-separated), easy to check by hand.
  const words = (t) => (t.match(/\S+/g) || []).length;

  test('counts come out in the tokenizer\'s tokens, in every shape alike', () => {
    const msgs = [
      { role: 'user', content: 'one two three four' },
      { role: 'assistant', content: [{ type: 'text', text: 'five six' }, { type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a b' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x y z' }] },
    ];
    const seen = [];
    const n = cc.tokenCountWithEstimation(msgs, { tokenCounter: (t) => { seen.push(t); return words(t); } });
    // 4 + 2 + (name + JSON arguments: 'Read{"file_path":"/a b"}' is 2 words) + 3
    assert.equal(n, 4 + 2 + 2 + 3);
    assert.ok(seen.includes('Read{"file_path":"/a b"}'), JSON.stringify(seen));
    // Every shape of the shared conversation: the same count as the Anthropic shape.
    const want = cc.tokenCountWithEstimation(anthropic(), { tokenCounter: words });
    for (const [name, make] of Object.entries(SHAPES)) {
      if (name === 'ai-sdk-ui') continue; // holds extra UI parts of its own
      const got = cc.tokenCountWithEstimation(make(), { tokenCounter: words });
      // Media count their fixed size in every shape; the text is split the same way.
      assert.ok(Math.abs(got - want) <= want * 0.05, `${name}: ${got} vs ${want}`);
    }
    assert.notEqual(want, count(anthropic()), 'not the character estimate');
  });

  test('shouldAutoCompact, autoCompactIfNeeded and the Compactor decide on the tokenizer\'s count', async () => {
    const msgs = [{ role: 'user', content: 'a '.repeat(30_000) }, { role: 'assistant', content: 'ok' }];
    const config = { contextWindow: 40_000 }; // threshold 7,000
    // 15,000 tokens by characters: due; 30,001 words at 1/10 token each: ~3,000, not due.
    const tenth = (t) => words(t) / 10;
    assert.equal(cc.shouldAutoCompact(msgs, SONNET, { config }), true);
    assert.equal(cc.shouldAutoCompact(msgs, SONNET, { config, tokenCounter: tenth }), false);
    const out = await cc.autoCompactIfNeeded(msgs, { model: SONNET, config, tokenCounter: tenth, summarize: async () => { throw new Error('not due'); } });
    assert.equal(out.wasCompacted, false);
    const c = new cc.Compactor({ model: SONNET, config, tokenCounter: tenth, summarize: async () => summaryResponse('x') });
    c.pushMany(msgs);
    assert.equal(c.tokenCount(), cc.tokenCountWithEstimation(msgs, { tokenCounter: tenth }));
    assert.equal(c.tokenCount(), 3_000);
    c.free();
  });

  test('a tokenizer that throws or returns no count is INVALID_ARGUMENT; a Compactor then adds nothing', () => {
    const msgs = [{ role: 'user', content: 'hello there' }];
    assert.throws(() => cc.tokenCountWithEstimation(msgs, { tokenCounter: () => { throw new Error('boom'); } }),
      (e) => e.code === 'INVALID_ARGUMENT' && /options\.tokenCounter threw: boom/.test(e.message));
    for (const bad of [NaN, -1, '3', undefined, Infinity]) {
      assert.throws(() => cc.tokenCountWithEstimation(msgs, { tokenCounter: () => bad }),
        (e) => e.code === 'INVALID_ARGUMENT' && /tokenCounter must return a finite number/.test(e.message), String(bad));
    }
    assert.throws(() => cc.tokenCountWithEstimation(msgs, { tokenCounter: 'cl100k' }),
      (e) => e.code === 'INVALID_ARGUMENT' && /tokenCounter must be a function/.test(e.message));
    assert.throws(() => new cc.Compactor({ model: SONNET, tokenCounter: 42 }), (e) => e.code === 'INVALID_ARGUMENT');
    let fail = false;
    const c = new cc.Compactor({ model: SONNET, tokenCounter: (t) => { if (fail) throw new Error('down'); return words(t); } });
    c.push(msgs[0]);
    fail = true;
    assert.throws(() => c.push({ role: 'assistant', content: 'more words' }), (e) => e.code === 'INVALID_ARGUMENT' && /down/.test(e.message));
    assert.equal(c.length, 1);
    fail = false;
    c.push({ role: 'assistant', content: 'more words' });
    assert.equal(c.tokenCount(), 4);
    c.free();
    // The counter is not left in effect after the call.
    assert.equal(count(msgs), cc.tokenCountWithEstimation(msgs));
    assert.equal(count(msgs), Math.round('hello there'.length / 4));
  });
});

describe('usage, system prompt and tools in a Compactor and a compaction context', () => {
  const system = 'Be careful. '.repeat(2_000); // 24,000 characters: 6,000 tokens
  const tools = [{ type: 'function', function: { name: 'read_file', description: 'Reads a file. '.repeat(500), parameters: { type: 'object' } } }];

  test('the Compactor counts system and toolDefinitions like tokenCountWithEstimation counts {system, tools}', () => {
    const msgs = rounds('openai-chat', chat);
    const c = new cc.Compactor({ model: SONNET, system, toolDefinitions: tools, messages: msgs });
    assert.equal(c.tokenCount(), cc.tokenCountWithEstimation(msgs, { system, tools }));
    assert.ok(c.tokenCount() > count(msgs) + 6_000);
    c.free();
  });

  test('setUsage anchors the running count as {usage} anchors the stateless count', () => {
    const msgs = rounds('ai-sdk-model', aiModel);
    const usage = { inputTokens: 50_000, outputTokens: 300, totalTokens: 50_300 }; // AI SDK names
    const c = new cc.Compactor({ model: SONNET, system, toolDefinitions: tools });
    assert.throws(() => c.setUsage(usage), (e) => e.code === 'INVALID_ARGUMENT' && /no assistant response/.test(e.message));
    c.pushMany(msgs);
    c.setUsage(usage);
    assert.equal(c.tokenCount(), cc.tokenCountWithEstimation(msgs, { usage, system, tools }));
    assert.equal(c.tokenCount(), 50_300, 'the last message is the response: usage alone, no preamble');
    c.push({ role: 'user', content: 'x'.repeat(4_000) });
    assert.equal(c.tokenCount(), 51_300);
    assert.throws(() => c.setUsage({ tokens: 3 }), (e) => e.code === 'INVALID_ARGUMENT' && /usage has no input or output token count/.test(e.message));
    assert.throws(() => c.setUsage({ inputTokens: -1 }), (e) => e.code === 'INVALID_TOKEN_COUNT' || e.code === 'INVALID_ARGUMENT');
    c.free();
  });

  test('autoCompactIfNeeded counts the context\'s system prompt and tool definitions', async () => {
    const msgs = [{ role: 'user', content: 'x'.repeat(8_000) }, { role: 'assistant', content: 'ok' }];
    const config = { contextWindow: 40_000 }; // threshold 7,000: 2,000 from the messages, 6,000+ with the system prompt
    const summarize = async () => summaryResponse('short');
    const plain = await cc.autoCompactIfNeeded(msgs, { model: SONNET, config, summarize });
    assert.equal(plain.wasCompacted, false);
    const withSystem = await cc.autoCompactIfNeeded(msgs, { model: SONNET, config, summarize, system, toolDefinitions: tools });
    assert.equal(withSystem.wasCompacted, true, 'due once the system prompt counts');
    assert.throws(() => new cc.Compactor({ model: SONNET, toolDefinitons: tools }), (e) => e.code === 'INVALID_ARGUMENT' && /toolDefinitions/.test(e.message));
  });
});

describe('microCompact in every shape', () => {
  const long = (make) => {
    // Three rounds of the conversation: the old results are cleared, the latest kept.
    const a = make(), b = make(), c = make();
    if (a[0] instanceof HumanMessage || a[0]?.lc === 1 || a[0]?.data) return [...a, ...b, ...c];
    const rename = (msgs, k) => JSON.parse(JSON.stringify(msgs).replace(/"c([12])"/g, `"r${k}c$1"`));
    return [...a, ...rename(b, 2), ...rename(c, 3)];
  };
  for (const [name, make] of Object.entries(SHAPES)) {
    test(`${name}: frees tokens, input untouched, output in the same shape`, () => {
      const msgs = name.startsWith('langchain') && name !== 'langchain' ? make() : long(make);
      const snapshot = JSON.stringify(msgs);
      const before = count(msgs);
      const r = cc.microCompact(msgs, { keepRecent: 1 });
      assert.equal(JSON.stringify(msgs), snapshot, 'input untouched');
      assert.ok(r.tokensFreed > 0, `${name}: freed ${r.tokensFreed}`);
      assert.ok(r.clearedToolUseIds.length >= 1);
      const after = count(r.messages);
      assert.ok(after < before, `${before} → ${after}`);
      assert.equal(r.messages.length, msgs.length);
      let changed = 0;
      r.messages.forEach((m, i) => {
        if (m === msgs[i]) return;
        changed++;
        assert.equal(Object.getPrototypeOf(m), Object.getPrototypeOf(msgs[i]), 'same class');
        assert.ok(JSON.stringify(m).includes('[Old tool result content cleared]'));
      });
      assert.ok(changed >= 1);
      assert.doesNotThrow(() => count(r.messages), 'the result is still one shape');
      const again = cc.microCompact(r.messages, { keepRecent: 1 });
      assert.equal(again.tokensFreed, 0, 'cleared results stay cleared');
    });
  }

  test('LangChain results are instances of the caller\'s classes with their fields', () => {
    const msgs = [...langchain(), ...langchain()];
    const r = cc.microCompact(msgs, { keepRecent: 1 });
    const cleared = r.messages.filter((m, i) => m !== msgs[i]);
    assert.ok(cleared.length >= 1);
    for (const m of cleared) {
      assert.ok(m instanceof ToolMessage);
      assert.equal(m.content, '[Old tool result content cleared]');
      assert.ok(['c1', 'c2'].includes(m.tool_call_id));
    }
  });

  test("by default another agent's large results of re-obtainable tools are cleared, its own state never", () => {
    const call = (id, name, size) => [
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: { q: id } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName: name, output: { type: 'text', value: filler(size, 3) } }] },
    ];
    const msgs = [{ role: 'user', content: 'go' },
      ...call('a', 'read_file', 8_000), ...call('b', 'todo_write', 8_000), ...call('c', 'searchDocs', 800),
      ...call('d', 'mcp__github__get_issue', 8_000), ...call('e', 'send_email', 8_000),
      ...call('f', 'read_file', 8_000)];
    const snapshot = JSON.stringify(msgs);
    const r = cc.microCompact(msgs, { keepRecent: 1 });
    assert.deepEqual(r.clearedToolUseIds, ['a', 'd'], 'small c, kept b and e, recent f');
    assert.ok(r.tokensFreed > 3_000);
    assert.equal(JSON.stringify(msgs), snapshot);
    for (const m of r.messages) modelMessageSchema.parse(m);
  });

  test("compactableTools ['*'] clears any tool's results", () => {
    const msgs = [];
    for (let k = 0; k < 4; k++) {
      msgs.push({ role: 'assistant', content: null, tool_calls: [{ id: `t${k}`, type: 'function', function: { name: 'send_notification', arguments: '{}' } }] });
      msgs.push({ role: 'tool', tool_call_id: `t${k}`, content: KB40 });
    }
    assert.equal(cc.microCompact(msgs, { keepRecent: 1 }).tokensFreed, 0, 'not re-obtainable by its name');
    assert.deepEqual(cc.microCompact(msgs, { keepRecent: 1, compactableTools: ['*'] }).clearedToolUseIds, ['t0', 't1', 't2']);
  });
});

describe('compaction in every shape', () => {
  const context = () => ({ model: SONNET, summarize: async () => summaryResponse('The user asked for a review; files read, tests run.') });

  for (const [name, make] of Object.entries(SHAPES)) {
    test(`${name}: compactConversation answers in the caller's shape, system message first`, async () => {
      const msgs = rounds(name, make);
      const snapshot = JSON.stringify(msgs);
      const before = count(msgs);
      const r = await cc.compactConversation(msgs, context());
      assert.equal(JSON.stringify(msgs), snapshot, 'input untouched');
      assert.equal(r.messageShape, name.startsWith('langchain') ? 'langchain' : name);
      const post = cc.buildPostCompactMessages(r);
      assert.equal(post[0], msgs[0], 'the system message is kept, first, as the same object');
      assert.ok(!post.some((m) => m.subtype === 'compact_boundary'), 'no transcript line in another shape');
      const after = count(post);
      assert.ok(after < before / 10, `${before} → ${after}`);
      assert.ok(JSON.stringify(post[1]).includes('The user asked for a review'));
      assert.equal(Object.getPrototypeOf(post[1]) === Object.prototype, !(msgs[1] instanceof HumanMessage || msgs[1] instanceof AIMessage));
      if (name === 'langchain') assert.ok(post[1] instanceof HumanMessage);
      if (name === 'ai-sdk-model') for (const m of post) modelMessageSchema.parse(m);
      if (name === 'ai-sdk-ui') {
        await validateUIMessages({ messages: post });
        assert.equal(post[1].metadata.compactSummary, true);
        for (const m of await convertToModelMessages(post)) modelMessageSchema.parse(m);
      }
      if (name === 'langchain-stored') assert.ok(mapStoredMessagesToChatMessages(post)[1] instanceof HumanMessage);
    });
  }

  test('autoCompactIfNeeded and the Compactor compact another shape when due', async () => {
    const config = { contextWindow: 40_000 }; // threshold 7,000 tokens
    const msgs = rounds('openai-chat', chat);
    assert.equal(cc.shouldAutoCompact(msgs, SONNET, { config }), true);
    const out = await cc.autoCompactIfNeeded(msgs, { ...context(), config });
    assert.equal(out.wasCompacted, true);
    assert.equal(out.compactionResult.messageShape, 'openai-chat');
    const c = new cc.Compactor({ ...context(), config });
    c.pushMany(rounds('ai-sdk-model', aiModel));
    const o = await c.maybeAutoCompact();
    assert.equal(o.wasCompacted, true);
    assert.equal(c.messages[0].role, 'system');
    for (const m of c.messages) modelMessageSchema.parse(m);
    assert.ok(c.tokenCount() < 1_000);
    c.push({ role: 'user', content: 'next question' });
    assert.doesNotThrow(() => c.warningState());
    c.free();
  });

  test('previewCompaction and toApiMessages read another shape', async () => {
    const msgs = rounds('ai-sdk-ui', aiUi);
    const p = await cc.previewCompaction(msgs, { model: SONNET });
    assert.ok(p.tokensBefore > 5_000, JSON.stringify(p).slice(0, 200));
    const api = cc.toApiMessages(msgs);
    assert.equal(api[0].role, 'user');
    assert.ok(api.some((m) => m.role === 'assistant' && m.content.some((b) => b.type === 'tool_use')));
  });
});

describe('the other functions in every shape', () => {
  for (const [name, make] of Object.entries(SHAPES)) {
    const msgs = make();
    test(`${name}: stripImagesFromMessages, groupMessagesByApiRound, truncateHeadForPTLRetry, validateForApi`, () => {
      // Strip: the Anthropic form's images become text, the rest is the same objects.
      const snapshot = JSON.stringify(msgs);
      const stripped = cc.stripImagesFromMessages(msgs);
      assert.equal(JSON.stringify(msgs), snapshot, 'input untouched');
      if (name !== 'ai-sdk-ui') {
        assert.ok(count(stripped) <= count(msgs) - 1_900, `${name}: the image is gone (${count(msgs)} → ${count(stripped)})`);
        assert.match(JSON.stringify(stripped), /\[image\]/);
      }
      assert.doesNotThrow(() => count(stripped));
      if (name === 'ai-sdk-model') for (const m of stripped) modelMessageSchema.parse(m);
      // Rounds: every call with its result, in order, covering the array.
      const groups = cc.groupMessagesByApiRound(msgs);
      assert.deepEqual(groups.flat(), msgs);
      // Each round, after a plain user message (which fits every shape), is a valid request.
      for (const g of groups) assertValidForApi(cc.toApiMessages([{ role: 'user', content: 'x' }, ...g]), undefined, `${name} round`);
      assert.deepEqual(cc.validateForApi(msgs).problems, []);
    });
  }

  test('truncateHeadForPTLRetry in every shape: starts on a user message in the shape, every pair intact', () => {
    for (const [name, make] of Object.entries(SHAPES)) {
      const msgs = rounds(name, make);
      const t = cc.truncateHeadForPTLRetry(msgs, 'prompt is too long: 215000 tokens > 200000 maximum');
      assert.ok(t && t.length < msgs.length, name);
      assert.doesNotThrow(() => count(t), `${name}: one shape`);
      assert.ok(count(t) < count(msgs));
      const api = cc.toApiMessages(t);
      assert.equal(api[0].role, 'user', name);
      assertValidForApi(api, undefined, `${name} truncated`);
      assert.equal(cc.validateForApi(t).valid, true, name);
      // The system message that opens the conversation stays first (the app's instructions);
      // the history after it starts on a user message.
      const lead = msgs.findIndex((m) => !isSystemMessage(m));
      for (let k = 0; k < lead; k++) assert.equal(t[k], msgs[k], `${name}: system message ${k} kept first`);
      if (name === 'langchain') assert.ok(t[lead] instanceof HumanMessage);
      if (name === 'ai-sdk-model') for (const m of t) modelMessageSchema.parse(m);
    }
  });

  /** A system message given as a message, in any shape. */
  function isSystemMessage(m) {
    const role = m?.role ?? (typeof m?._getType === 'function' ? m._getType() : undefined);
    return role === 'system' || role === 'developer';
  }

  test('validateForApi finds an orphan tool result in another shape', () => {
    const orphan = [{ role: 'user', content: 'hi' }, { role: 'tool', tool_call_id: 'nope', content: 'x' }];
    const v = cc.validateForApi(orphan);
    assert.equal(v.valid, false);
    assert.match(JSON.stringify(v.problems), /nope/);
  });

  test('autoCompactIfNeeded answers "not due" on every shape without a model call', async () => {
    const context = { model: SONNET, summarize: async () => { throw new Error('not called'); } };
    for (const make of Object.values(SHAPES)) {
      const out = await cc.autoCompactIfNeeded(make(), context);
      assert.equal(out.wasCompacted, false);
      assert.equal(out.skipped, 'belowThreshold');
    }
  });

  test('a LangChain array of instances with no HumanMessage cannot take a summary: UNSUPPORTED_SHAPE', async () => {
    const msgs = [new SystemMessage('s'), new AIMessage(filler(40_000, 18)), new AIMessage('b')];
    await assert.rejects(cc.compactConversation(msgs, { model: SONNET, summarize: async () => summaryResponse('S.') }),
      (e) => e.code === 'UNSUPPORTED_SHAPE' && /HumanMessage/.test(e.message));
  });
});
