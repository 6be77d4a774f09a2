// What an eighth probe of other ecosystems' messages found: the API's server-side compaction
// held in AI SDK and LangChain messages (the count started before it), a UIMessage tool part
// still streaming its input (sent as a call with no result), reasoning kept only in provider
// options (counted 0), and OpenAI Responses outputs answering item references (called
// orphans). Each test fails on the package before the fix (CC_PKG=/path/to/old/pkg/node.js
// runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage } from '@langchain/core/messages';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const big = (n, s = 'line') => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const count = (m, o) => cc.tokenCountWithEstimation(m, o);

// ---- F1, F2: the API's compaction block in AI SDK and LangChain messages -----------------

// A long history, the API's compaction (Anthropic shape: the block), a short tail.
const SUMMARY = 'Summary of the work so far: tasks 0-19 are done, the tests pass.';
const compacted = (compaction) => {
  const msgs = [];
  for (let i = 0; i < 20; i++) msgs.push({ role: 'user', content: `task ${i} ${big(100)}` }, { role: 'assistant', content: [{ type: 'text', text: `done ${i}` }] });
  msgs.push({ role: 'assistant', content: [compaction, { type: 'text', text: 'Continuing.' }] });
  for (let i = 0; i < 6; i++) msgs.push({ role: 'user', content: `next ${i} ${big(30)}` }, { role: 'assistant', content: [{ type: 'text', text: `ok ${i}` }] });
  msgs.push({ role: 'user', content: 'go on' });
  return msgs;
};
const anthropicMsgs = () => compacted({ type: 'compaction', content: SUMMARY });
// @ai-sdk/anthropic's form: a text part marked in providerOptions (providerMetadata in a UIMessage).
const modelMsgs = () => compacted({ type: 'text', text: SUMMARY, providerOptions: { anthropic: { type: 'compaction' } } });
const uiMsgs = () => modelMsgs().map((m, i) => ({
  id: `m${i}`, role: m.role,
  parts: typeof m.content === 'string' ? [{ type: 'text', text: m.content }]
    : [{ type: 'step-start' }, ...m.content.map((p) => ({ type: 'text', text: p.text, ...(p.providerOptions ? { providerMetadata: p.providerOptions } : {}) }))],
}));
const summarize = async (req) => { summarize.requests.push(JSON.stringify(req)); return '<summary>SUMMARY: work continues.</summary>'; };
summarize.requests = [];

test('F1: an AI SDK ModelMessage holding the API compaction (text part marked by @ai-sdk/anthropic) starts the context, as the block does', async () => {
  const anth = anthropicMsgs();
  const a = count(anth);
  assert.ok(a < 3_000, `the Anthropic shape counts from the block: ${a}`);
  for (const opts of [undefined, { shape: 'ai-sdk-model' }]) {
    const msgs = modelMsgs();
    assert.equal(count(msgs, opts), a);
    const api = cc.toApiMessages(msgs, opts);
    assert.deepEqual(api[0].content[0], { type: 'compaction', content: SUMMARY }, 'sent as the block, nothing before it');
    assert.deepEqual(api, cc.toApiMessages(anth));
    assert.deepEqual(cc.validateForApi(msgs, opts), { valid: true, problems: [] });
    const r = await cc.compactConversation(msgs, { model: 'claude-sonnet-4-5', summarize, ...opts });
    const ra = await cc.compactConversation(anth, { model: 'claude-sonnet-4-5', summarize });
    assert.equal(r.preCompactTokenCount, ra.preCompactTokenCount);
    const [req, reqA] = summarize.requests.slice(-2);
    assert.ok(!req.includes('task 0 '), 'the summarizer is not sent what the API already compacted');
    assert.equal(req.length, reqA.length);
  }
  // With a history eight times as long before it, no compaction is asked for.
  const long = modelMsgs();
  const head = long.slice(0, 40);
  assert.equal(cc.shouldAutoCompact([...Array(8)].flatMap(() => head).concat(long.slice(40)), 'claude-sonnet-4-5'), false);
  // An empty one is not sent (the provider drops it): it starts nothing.
  const empty = compacted({ type: 'text', text: '', providerOptions: { anthropic: { type: 'compaction' } } });
  assert.ok(count(empty) > 20_000);
});

test('F1: a UIMessage holding the API compaction (providerMetadata) starts the context, also in a later step', async () => {
  const anth = anthropicMsgs();
  const ui = uiMsgs();
  assert.equal(count(ui), count(anth));
  assert.deepEqual(cc.toApiMessages(ui)[0].content[0], { type: 'compaction', content: SUMMARY });
  assert.deepEqual(cc.validateForApi(ui), { valid: true, problems: [] });
  const r = await cc.compactConversation(ui, { model: 'claude-sonnet-4-5', summarize });
  assert.ok(!summarize.requests.at(-1).includes('task 0 '));
  assert.ok(r.preCompactTokenCount < 3_000);
  // A multi-step message whose second step begins with the compaction (threshold compaction
  // during an agent loop): the count starts at that message, the API view at that step.
  const at = ui.findIndex((m) => m.parts.some((p) => p.providerMetadata));
  const steps = structuredClone(ui);
  steps[at].parts.unshift({ type: 'step-start' }, { type: 'text', text: 'Running the tests.' },
    { type: 'tool-bash', toolCallId: 'b1', state: 'output-available', input: { command: 'npm test' }, output: 'ok' });
  assert.ok(count(steps) < 3_000);
  const api = cc.toApiMessages(steps);
  assert.deepEqual(api[0].content[0], { type: 'compaction', content: SUMMARY });
  assert.deepEqual(cc.validateForApi(steps), { valid: true, problems: [] });
});

test('F2: a LangChain AIMessage holding the compaction block (as ChatAnthropic keeps it) starts the context', async () => {
  const anth = anthropicMsgs();
  const lc = anth.map((m) => (m.role === 'user' ? new HumanMessage(m.content) : new AIMessage({ content: m.content })));
  assert.equal(count(lc), count(anth));
  assert.deepEqual(cc.toApiMessages(lc), cc.toApiMessages(anth));
  assert.deepEqual(cc.validateForApi(lc), { valid: true, problems: [] });
  const r = await cc.compactConversation(lc, { model: 'claude-sonnet-4-5', summarize });
  assert.ok(!summarize.requests.at(-1).includes('task 0 '));
  assert.ok(r.preCompactTokenCount < 3_000);
  // A streamed one (its block keeps its `index`) and the stored form read the same.
  const streamed = lc.map((m) => (m.content?.[0]?.type === 'compaction' ? new AIMessage({ content: [{ index: 0, ...m.content[0] }, m.content[1]] }) : m));
  assert.equal(count(streamed), count(anth));
  assert.deepEqual(cc.toApiMessages(streamed)[0].content[0], { type: 'compaction', content: SUMMARY });
  const stored = lc.map((m) => ({ type: m.getType(), data: { content: m.content, additional_kwargs: {}, response_metadata: {} } }));
  assert.equal(count(stored), count(anth));
});

// ---- F3: a UIMessage tool part still streaming its input ----------------------------------

test('F3: a UIMessage tool part in input-streaming is no call (as convertToModelMessages leaves it out): not sent, not counted', async () => {
  const { convertToModelMessages } = await import('ai');
  const partial = { path: 'a.txt', content: big(40) };
  const streaming = { type: 'tool-write', toolCallId: 'cw', state: 'input-streaming', input: partial };
  const turn = (extra) => [
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: `write a.txt ${big(5)}` }] },
    { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text: 'Let me write' }, ...extra] },
    { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'stop, do something else' }] },
  ];
  const msgs = turn([streaming]);
  assert.ok(!JSON.stringify(await convertToModelMessages(msgs)).includes('"tool-call"'), 'the AI SDK sends no call');
  assert.deepEqual(cc.validateForApi(msgs), { valid: true, problems: [] });
  const api = cc.toApiMessages(msgs);
  assert.ok(!JSON.stringify(api).includes('tool_use'), JSON.stringify(api));
  assert.deepEqual(api, cc.toApiMessages(turn([])));
  assert.equal(count(msgs), count(turn([])), 'the partial input counts nothing');
  // Alone in its message: the message sends nothing.
  const alone = [msgs[0], { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, streaming] }, msgs[2]];
  assert.deepEqual(cc.validateForApi(alone), { valid: true, problems: [] });

  // A compaction does not keep the turn as one whose call waits for its result (there is no
  // call); what it returns is a valid request. A kept message is the caller's own object.
  const long = [];
  for (let i = 0; i < 8; i++) {
    long.push({ id: `q${i}`, role: 'user', parts: [{ type: 'text', text: `task ${i} ${big(60)}` }] },
      { id: `r${i}`, role: 'assistant', parts: [{ type: 'text', text: `done ${i} ${big(60)}` }] });
  }
  const stopped = [...long, ...msgs.slice(0, 2)];
  const out = cc.buildPostCompactMessages(await cc.compactConversation(stopped, { model: 'claude-sonnet-4-5', summarize }));
  assert.ok(!out.includes(stopped.at(-1)), 'not kept as a pending call');
  assert.deepEqual(cc.validateForApi(out), { valid: true, problems: [] });
  const asked = [...long, ...msgs];
  const out2 = cc.buildPostCompactMessages(await cc.compactConversation(asked, { model: 'claude-sonnet-4-5', summarize }, { keepLastUserMessage: true }));
  assert.equal(out2.at(-1), asked.at(-1));
  assert.deepEqual(cc.validateForApi(out2), { valid: true, problems: [] });

  // microCompact numbers the parts after it as the count does: the completed read's output
  // is what is cleared, the streaming part stays as it was.
  const read = (id) => ({ type: 'tool-read', toolCallId: id, state: 'output-available', input: { path: `/f${id}` }, output: big(200) });
  const mc = [
    { id: 'u0', role: 'user', parts: [{ type: 'text', text: 'read' }] },
    { id: 'a0', role: 'assistant', parts: [{ type: 'step-start' }, streaming, { type: 'step-start' }, read('r1'), read('r2')] },
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'next' }] },
    { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, read('r3')] },
    { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'go' }] },
  ];
  const cleared = cc.microCompact(mc, { keepRecent: 1, compactableTools: ['*'] });
  assert.deepEqual(cleared.clearedToolUseIds.sort(), ['r1', 'r2']);
  const parts = cleared.messages[1].parts;
  assert.equal(parts[1], streaming);
  assert.equal(parts[3].state, 'output-error');
  assert.equal(parts[4].state, 'output-error');
});

// ---- F4: reasoning kept only in the provider's options -------------------------------------

test('F4: AI SDK reasoning held only in provider options (redactedData, reasoningEncryptedContent) counts as the same block in Anthropic and Responses shape', async () => {
  const blob = Buffer.from(big(100)).toString('base64');
  const q = { role: 'user', content: 'q' };
  const anth = [q, { role: 'assistant', content: [{ type: 'redacted_thinking', data: blob }, { type: 'text', text: 'a' }] }];
  const resp = [q, { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: blob }, { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a', annotations: [] }] }];
  const model = (opts) => [q, { role: 'assistant', content: [{ type: 'reasoning', text: '', providerOptions: opts }, { type: 'text', text: 'a' }] }];
  const ui = (meta) => [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'q' }] },
    { id: 'a', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'reasoning', text: '', providerMetadata: meta }, { type: 'text', text: 'a' }] }];
  const a = count(anth);
  assert.ok(a > 1_000, `the Anthropic shape counts it: ${a}`);
  assert.equal(count(resp), a);
  const forms = {
    anthropicModel: model({ anthropic: { redactedData: blob } }),
    openaiModel: model({ openai: { itemId: 'rs_1', reasoningEncryptedContent: blob } }),
    azureModel: model({ azure: { itemId: 'rs_1', reasoningEncryptedContent: blob } }),
    anthropicUi: ui({ anthropic: { redactedData: blob } }),
    openaiUi: ui({ openai: { itemId: 'rs_1', reasoningEncryptedContent: blob } }),
  };
  for (const [name, msgs] of Object.entries(forms)) {
    assert.equal(count(msgs), a, name);
    // The compaction reads it as the count does (redacted thinking of the same size).
    assert.deepEqual(cc.toApiMessages(msgs)[1].content[0], { type: 'redacted_thinking', data: blob }, name);
  }
  // Readable reasoning still counts as its text, the opaque part beside it not again (as a
  // Responses reasoning item with a summary counts its summary).
  const readable = model({ openai: { itemId: 'rs_1', reasoningEncryptedContent: blob } });
  readable[1].content[0].text = 'I should answer a.';
  const summarized = structuredClone(resp);
  summarized[1].summary = [{ type: 'summary_text', text: 'I should answer a.' }];
  assert.equal(count(readable), count(summarized));
  assert.ok(count(readable) < 100);
});

// ---- F5: OpenAI Responses outputs answering item references ------------------------------

test('F5: a Responses output whose call is an item reference is no orphan: not reported, sent after a call standing for the reference, kept with it', async () => {
  const ask = { role: 'user', content: 'read a' };
  const refs = [{ type: 'item_reference', id: 'rs_1' }, { type: 'item_reference', id: 'fc_1' }];
  const output = { type: 'function_call_output', call_id: 'call_1', output: `file a ${big(30)}` };
  const msgs = [ask, ...refs, output];
  assert.deepEqual(cc.validateForApi(msgs), { valid: true, problems: [] });
  const api = cc.toApiMessages(msgs);
  assert.deepEqual(api.map((m) => m.role), ['user', 'assistant', 'user']);
  assert.deepEqual(api[1].content, [{ type: 'tool_use', id: 'call_1', name: 'item_reference', input: {} }]);
  assert.equal(api[2].content[0].tool_use_id, 'call_1');
  // The same with a reference given as `{id}` alone, and with parallel outputs.
  assert.deepEqual(cc.validateForApi([ask, { id: 'fc_1' }, output]), { valid: true, problems: [] });
  const second = { type: 'function_call_output', call_id: 'call_2', output: 'file b' };
  assert.deepEqual(cc.validateForApi([ask, ...refs, { type: 'item_reference', id: 'fc_2' }, output, second]), { valid: true, problems: [] });
  // Without any reference an output whose call is missing is still reported, and an output
  // answering a call of the request pairs with that call as before.
  assert.equal(cc.validateForApi([ask, output]).valid, false);
  const call = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'read', arguments: '{"path":"a"}' };
  assert.deepEqual(cc.toApiMessages([ask, refs[0], call, output])[1].content, [{ type: 'tool_use', id: 'call_1', name: 'read', input: { path: 'a' } }]);

  // A compaction keeps the references with the output they answer for (a kept output comes
  // right after them), and what it returns is a valid request.
  const long = [{ role: 'developer', content: 'You are an agent.' }];
  for (let i = 0; i < 30; i++) {
    long.push({ role: 'user', content: `task ${i} ${big(100)}` },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `done ${i} ${big(60)}`, annotations: [] }] });
  }
  const read = { ...output, output: `file a ${big(200)}` };
  let keptOutput = 0;
  for (let n = 0; n < 6; n++) {
    const after = [];
    for (let i = 0; i < n; i++) {
      after.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `reply ${i} ${big(120)}`, annotations: [] }] },
        { role: 'user', content: `more ${i} ${big(120)}` });
    }
    const conversation = [...long, ask, ...refs, read, ...after];
    const r = await cc.trySessionMemoryCompaction(conversation, { model: 'gpt-5', sessionMemory: '# Notes\nthe user reads files' });
    const out = cc.buildPostCompactMessages(r);
    assert.deepEqual(cc.validateForApi(out), { valid: true, problems: [] }, `${n} turns after`);
    const at = out.indexOf(read);
    if (at >= 0) {
      keptOutput++;
      assert.deepEqual(out.slice(at - 2, at), refs);
    }
  }
  assert.ok(keptOutput >= 2, 'some cuts keep the output');
  // A pinned output comes back with its references, the caller's own items.
  const reply = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'a says hi', annotations: [] }] };
  const pinnedOut = cc.buildPostCompactMessages(await cc.compactConversation([...long, ask, ...refs, read, reply, { role: 'user', content: 'thanks' }],
    { model: 'gpt-5', summarize, pinned: [read] }));
  const p = pinnedOut.indexOf(read);
  assert.ok(p > 0, 'the pinned output is the caller\'s own item');
  assert.deepEqual(pinnedOut.slice(p - 2, p), refs);
  assert.deepEqual(cc.validateForApi(pinnedOut), { valid: true, problems: [] });
  // The user's request stays the last one a compaction keeps (the output is none).
  const r = await cc.compactConversation([...long, ask, ...refs, read], { model: 'gpt-5', summarize }, { keepLastUserMessage: true });
  assert.equal(cc.buildPostCompactMessages(r).at(-1), ask);
});
