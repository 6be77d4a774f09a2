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
