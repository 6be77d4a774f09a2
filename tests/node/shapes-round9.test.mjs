// What a ninth probe of other ecosystems' messages found: a UIMessage call whose input failed to
// parse lost the text the model wrote (`rawInput`); an OpenAI Chat reply's `reasoning_content`
// counted only when something else showed the Chat shape; a cleared LangChain ToolMessage lost
// its `metadata`. Each test fails on the package before the
// fix (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { convertToModelMessages } from 'ai';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const big = (n, s = 'line') => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const count = (m, o) => cc.tokenCountWithEstimation(m, o);
// The summary request a compaction of `msgs` sends (as JSON).
const summaryRequest = async (msgs, model = 'gpt-5') => {
  let seen;
  await cc.compactConversation(msgs, { model, summarize: async (req) => { seen = JSON.stringify(req.messages); return '<summary>s</summary>'; } });
  return seen;
};
// ---- N1: a UIMessage call whose input did not parse ------------------------------------------

test('N1: a UIMessage tool part in output-error with rawInput (input undefined) counts and is sent as convertToModelMessages sends it', async () => {
  const raw = '{"path": "notes.md", "content": "' + 'draft text of the note. '.repeat(300); // cut off: not JSON
  const ui = [
    { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'write the notes' }] },
    { id: 'a1', role: 'assistant', parts: [{ type: 'step-start' }, { type: 'tool-write', toolCallId: 'c1', state: 'output-error', input: undefined, rawInput: raw, errorText: 'Invalid input for tool write: JSON parsing failed' }] },
    { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'try again' }] },
  ];
  const model = await convertToModelMessages(ui);
  assert.equal(model[1].content[0].input, raw, 'premise: the AI SDK sends rawInput');
  const nModel = count(model);
  assert.ok(Math.abs(count(ui) - nModel) <= nModel * 0.02, `UIMessage[] ${count(ui)} vs ModelMessage[] ${nModel}`);
  assert.deepEqual(cc.toApiMessages(ui)[1].content[0].input, { arguments: raw });
  const seen = await summaryRequest([...ui, { id: 'u3', role: 'assistant', parts: [{ type: 'text', text: 'ok' }] }, { id: 'u4', role: 'user', parts: [{ type: 'text', text: 'next' }] }], 'claude-sonnet-4-5');
  assert.ok(seen.includes('draft text of the note. draft text'), 'the summarizer sees what the model wrote');
});

// ---- N5: a Chat reply's reasoning_content shows the Chat shape --------------------------------

test('N5: an OpenAI Chat reply with reasoning_content counts the same whether the shape is declared or not, and before a tool turn as after', () => {
  const R = big(150);
  const chat = [{ role: 'user', content: 'Plan the migration.' }, { role: 'assistant', content: 'Here is the plan.', reasoning_content: R }, { role: 'user', content: 'next' }];
  const plain = chat.map((m, i) => (i === 1 ? { role: 'assistant', content: 'Here is the plan.' } : m));
  assert.equal(count(chat), count(chat, { shape: 'openai-chat' }));
  assert.ok(count(chat) - count(plain) > 1500, `the reasoning adds ${count(chat) - count(plain)}`);
  const turn = [{ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'call_1', content: 'x' }];
  assert.equal(count([...chat, ...turn]) - count([...plain, ...turn]), count(chat) - count(plain));
  assert.deepEqual(cc.toApiMessages(chat), cc.toApiMessages(chat, { shape: 'openai-chat' }));
});

// ---- N4: a LangChain ToolMessage's metadata -----------------------------------------------------

test('N4: microCompact and stripImagesFromMessages keep a LangChain ToolMessage\'s metadata', () => {
  const meta = { source: 'cache', elapsedMs: 12 };
  const msgs = [
    new HumanMessage('read a'),
    new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'read_file', args: { path: 'a' } }] }),
    new ToolMessage({ tool_call_id: 'c1', content: big(300), name: 'read_file', id: 'tm1', metadata: meta }),
    new AIMessage('done'),
    new HumanMessage('more'),
  ];
  const r = cc.microCompact(msgs, { keepRecent: 0 });
  assert.deepEqual(r.clearedToolUseIds, ['c1']);
  assert.ok(r.messages[2] instanceof ToolMessage);
  assert.deepEqual(r.messages[2].metadata, meta);
  assert.deepEqual(r.messages[2].lc_kwargs.metadata, meta);
  const s = cc.stripImagesFromMessages([new HumanMessage('look'), new AIMessage({ content: '', tool_calls: [{ id: 'c2', name: 'screenshot', args: {} }] }),
    new ToolMessage({ tool_call_id: 'c2', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }], metadata: meta })]);
  assert.deepEqual(s[2].metadata, meta);
  assert.ok(!JSON.stringify(s[2].content).includes('base64'));
});
