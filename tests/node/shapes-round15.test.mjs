// What the fifteenth probe of other ecosystems' shapes found. Each test fails on the package
// before the fix (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { asSchema, tool } from 'ai';
import { tool as lcTool } from '@langchain/core/tools';
import { HumanMessage } from '@langchain/core/messages';
import { z } from 'zod';
import * as z3 from 'zod/v3';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

// ---- N1: tool definitions held with their schema objects ---------------------------------
// An AI SDK tool record (`tool({inputSchema: z.object(…)})`) and LangChain tools hold schema
// objects whose JSON is not the JSON Schema the SDKs send (zod 4 keeps `.describe()` texts
// elsewhere, a zod 3 object's fields are behind a function, a LangChain tool's `toJSON` names
// only its class): they counted 4,132 / 2,542 / 852 for what is sent as 16,852 / 16,852 / 11,802.

const long = (s) => `${s}: ` + 'A detailed explanation of this parameter and how it is used by the tool. '.repeat(6);
const schemaOf = (Z) => Z.object({
  path: Z.string().describe(long('path')),
  offset: Z.number().optional().describe(long('offset')),
  mode: Z.enum(['a', 'b']).describe(long('mode')),
});
const messages = [{ role: 'user', content: 'hi' }];
// What @ai-sdk/anthropic sends for a tool record: name, description, the schema as JSON Schema.
const sentFor = async (record) => Promise.all(Object.entries(record).map(async ([name, t]) =>
  ({ name, description: t.description, input_schema: await asSchema(t.inputSchema).jsonSchema })));
const near = (got, want, what) => assert.ok(Math.abs(got - want) <= 0.15 * want, `${what}: counted ${got}, sent ${want}`);

for (const [name, Z] of [['zod 4', z], ['zod 3', z3]]) {
  test(`N1: an AI SDK tool record with ${name} schemas counts as the JSON Schema sent for it`, async () => {
    const tools = Object.fromEntries(Array.from({ length: 20 }, (_, i) =>
      [`tool_${i}`, tool({ description: `Reads a file ${i}`, inputSchema: schemaOf(Z) })]));
    const sent = cc.tokenCountWithEstimation(messages, { tools: await sentFor(tools) });
    assert.ok(sent > 10_000);
    near(cc.tokenCountWithEstimation(messages, { tools }), sent, 'tokenCountWithEstimation');
    const c = new cc.Compactor({ model: 'claude-sonnet-4-5', summarize: async () => 'S', toolDefinitions: tools });
    c.push(messages[0]);
    near(c.tokenCount(), sent, 'Compactor');
    try {
      assert.equal(cc.shouldAutoCompact(messages, 'claude-sonnet-4-5', { tools }), false);
    } finally {
      c.free();
    }
  });
}

test('N1: LangChain tools count as the definitions ChatAnthropic sends for them', () => {
  const tools = Array.from({ length: 20 }, (_, i) => lcTool(async () => 'x', {
    name: `tool_${i}`, description: `Reads a file ${i}`, schema: schemaOf(z),
  }));
  const sent = tools.map((t) => ({ name: t.name, description: t.description, input_schema: z.toJSONSchema(t.schema) }));
  const lc = [new HumanMessage('hi')];
  near(cc.tokenCountWithEstimation(lc, { tools }), cc.tokenCountWithEstimation(lc, { tools: sent }), 'LangChain tools');
});

test('N1: a schema whose conversion throws is measured by its own JSON; plain definitions unchanged', () => {
  const bad = { '~standard': { version: 1, vendor: 'x', jsonSchema: { input() { throw new Error('no'); } } }, type: 'object' };
  const plain = [{ name: 'read', description: 'Reads', input_schema: { type: 'object', properties: { p: { type: 'string' } } } }];
  const n = cc.tokenCountWithEstimation(messages, { tools: plain });
  assert.equal(n, cc.tokenCountWithEstimation(messages) + Math.ceil(JSON.stringify(plain).length / 2));
  assert.ok(cc.tokenCountWithEstimation(messages, { tools: [{ name: 'x', input_schema: bad }] }) > 1);
});

test("N1: an AI SDK tool's outputSchema (never sent to the model) is not counted", async () => {
  const withOut = { read: tool({ description: 'Reads', inputSchema: schemaOf(z), outputSchema: z.object({ text: z.string().describe(long('text')) }) }) };
  const without = { read: tool({ description: 'Reads', inputSchema: schemaOf(z) }) };
  assert.equal(cc.tokenCountWithEstimation(messages, { tools: withOut }), cc.tokenCountWithEstimation(messages, { tools: without }));
});

// ---- N2: a cache breakpoint inside what microCompact or strip replaces ---------------------
// A `cache_control` on a block of a tool_result's content (Anthropic) or on a part of an AI SDK
// `content` output (where @ai-sdk/anthropic reads the result's breakpoint) was dropped with the
// content; an image's was dropped with the image. OpenAI Chat tool messages already kept theirs.

const big = (n) => Array.from({ length: n }, (_, i) => `line ${i}: some content of a file or command output here`).join('\n');
const eph = { type: 'ephemeral' };
const anthropicConv = (result) => [
  { role: 'user', content: 'go' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read_file', input: { p: 'a' } }] },
  { role: 'user', content: [result] },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't2', name: 'read_file', input: { p: 'b' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: 'small' }] },
];

test('N2: microCompact keeps the cache breakpoint of a cleared Anthropic tool result content block', () => {
  const conv = anthropicConv({ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: big(200) }, { type: 'text', text: big(100), cache_control: eph }] });
  const { messages, clearedToolUseIds } = cc.microCompact(conv, { compactableTools: ['*'], keepRecent: 1 });
  assert.deepEqual(clearedToolUseIds, ['t1']);
  assert.deepEqual(messages[2].content[0], { type: 'tool_result', tool_use_id: 't1', content: cc.getConstants().CLEARED_TOOL_RESULT_PLACEHOLDER, cache_control: eph });
  // one on the block itself stays as it was
  const own = anthropicConv({ type: 'tool_result', tool_use_id: 't1', content: big(200), cache_control: { type: 'ephemeral', ttl: '1h' } });
  assert.deepEqual(cc.microCompact(own, { compactableTools: ['*'], keepRecent: 1 }).messages[2].content[0].cache_control, { type: 'ephemeral', ttl: '1h' });
  assert.ok(cc.validateForApi(messages).valid);
});

test("N2: microCompact keeps the providerOptions of an AI SDK content output's part", () => {
  const opts = { anthropic: { cacheControl: eph } };
  const conv = [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 't1', toolName: 'read_file', input: { p: 'a' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'read_file', output: { type: 'content', value: [{ type: 'text', text: big(200), providerOptions: opts }] } }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 't2', toolName: 'read_file', input: { p: 'b' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't2', toolName: 'read_file', output: { type: 'text', value: 'x' } }] },
  ];
  const { messages } = cc.microCompact(conv, { compactableTools: ['*'], keepRecent: 1 });
  assert.deepEqual(messages[2].content[0].output, { type: 'text', value: cc.getConstants().CLEARED_TOOL_RESULT_PLACEHOLDER, providerOptions: opts });
});

test('N2: stripImagesFromMessages keeps the cache breakpoint of an Anthropic image', () => {
  const img = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' }, cache_control: eph };
  const conv = [{ role: 'user', content: [{ type: 'text', text: 'look' }, img] }, { role: 'assistant', content: 'ok' }];
  const out = cc.stripImagesFromMessages(conv);
  assert.equal(out[0].content[1].type, 'text');
  assert.deepEqual(out[0].content[1].cache_control, eph);
});

test('N2: stripImagesFromMessages keeps the provider options of an AI SDK image part', () => {
  const opts = { anthropic: { cacheControl: eph } };
  const conv = [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', image: 'iVBORw0KGgo=', mediaType: 'image/png', providerOptions: opts }] }, { role: 'assistant', content: 'ok' }];
  const out = cc.stripImagesFromMessages(conv);
  assert.equal(out[0].content[1].type, 'text');
  assert.deepEqual(out[0].content[1].providerOptions, opts);
});
