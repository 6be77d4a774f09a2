// What a tenth probe of message shapes found: a mid-conversation change of the tool set (the
// Messages API's `tool_addition` / `tool_removal` blocks in a system message, an OpenAI
// Responses `additional_tools` item) was summarized away by a compaction, so the tools it
// added were no longer offered and those it withdrew came back. Each test fails on the package
// before the fix (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const big = (n, s = 'line') => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const summarize = async () => '<summary>s</summary>';
const compacted = async (msgs, model, extra = {}) => {
  const r = await cc.compactConversation(msgs, { model, summarize, ...extra });
  return cc.buildPostCompactMessages(r);
};
const B = big(300);

// ---- T1: Anthropic system messages holding tool changes (@anthropic-ai/sdk beta
// BetaSystemMessageParam content: BetaRequestToolAdditionBlock | BetaRequestToolRemovalBlock).
const deploy = { name: 'deploy', description: 'Deploy the app', input_schema: { type: 'object', properties: { env: { type: 'string' } } } };
const add = { type: 'tool_addition', tool: { type: 'tool_definition', definition: deploy } };
const remove = { type: 'tool_removal', tool: { type: 'tool_reference', name: 'read' } };
const anthropicConversation = () => {
  const m = [{ role: 'system', content: 'You are an agent.' }, { role: 'user', content: 'start' },
    { role: 'system', content: [{ type: 'text', text: 'You may deploy now.' }, add] }];
  for (let i = 0; i < 8; i++) {
    m.push({ role: 'assistant', content: [{ type: 'tool_use', id: 't' + i, name: 'read', input: { path: 'f' + i } }] });
    m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' + i, content: B }] });
  }
  m.push({ role: 'system', content: [remove] }, { role: 'assistant', content: 'Done reading.' }, { role: 'user', content: 'Now deploy.' });
  return m;
};

test('T1: a compaction keeps the Anthropic system messages that add or withdraw tools, verbatim and in order, before the summary', async () => {
  const m = anthropicConversation();
  for (const keepLastUserMessage of [false, true]) {
    const out = await compacted(m, 'claude-sonnet-4-5', { keepLastUserMessage });
    const a = out.indexOf(m[2]), r = out.indexOf(m[19]);
    assert.ok(a > 0 && r > a, `keepLastUserMessage ${keepLastUserMessage}: tool changes at ${a}, ${r}`);
    const summary = out.findIndex((x) => x.role === 'user');
    assert.ok(summary > r, 'the tool changes stand before the summary');
    assert.equal(out[1], m[0], 'the leading system message stays first');
    assert.deepEqual(cc.validateForApi(out.slice(1)).problems, []);
  }
  // A second compaction keeps them too.
  const once = await compacted(m, 'claude-sonnet-4-5');
  const twice = await compacted([...once, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'again' }], 'claude-sonnet-4-5');
  assert.ok(twice.includes(m[2]) && twice.includes(m[19]));
});

test('T1: a Compactor keeps them as compactConversation does', async () => {
  const m = anthropicConversation();
  const c = new cc.Compactor({ model: 'claude-sonnet-4-5', summarize });
  c.pushMany(m);
  await c.compact();
  const out = c.messages;
  assert.ok(out.includes(m[2]) && out.includes(m[19]), JSON.stringify(out.map((x) => x.role ?? x.type)));
  c.free();
});

// ---- T2: OpenAI Responses `additional_tools` (openai resources/responses/responses.d.ts,
// ResponseInputItem.AdditionalTools: tools available from that item on).
test('T2: a compaction keeps an OpenAI Responses additional_tools item', async () => {
  const extra = { type: 'additional_tools', role: 'developer', tools: [{ type: 'function', name: 'deploy', description: 'Deploy', parameters: { type: 'object', properties: {} } }] };
  const m = [{ role: 'developer', content: 'You are an agent.' }, { role: 'user', content: 'start' }, extra];
  for (let i = 0; i < 8; i++) {
    m.push({ type: 'function_call', call_id: 'c' + i, name: 'read', arguments: '{}' });
    m.push({ type: 'function_call_output', call_id: 'c' + i, output: B });
  }
  m.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] }, { role: 'user', content: 'now deploy' });
  const before = cc.tokenCountWithEstimation(m);
  for (const keepLastUserMessage of [false, true]) {
    const out = await compacted(m, 'gpt-5', { keepLastUserMessage });
    const k = out.indexOf(extra);
    assert.ok(k > 0, `keepLastUserMessage ${keepLastUserMessage}: ${JSON.stringify(out.map((x) => x.type ?? x.role))}`);
    assert.ok(out.findIndex((x) => x.type === 'message' && x.role === 'user') > k, 'before the summary');
  }
  // Reading it as tool additions changes nothing in the count.
  assert.equal(cc.tokenCountWithEstimation(m), before);
});
