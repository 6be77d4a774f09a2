// Media and built-in tool items of every ecosystem, read as what they are: an image, a file or
// an audio clip counts as one (about 2,000 tokens, SPEC §3) and reaches a summarizer as a
// marker, never as its base64 text; OpenAI's built-in tool calls pair with their outputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import * as cc from '../../pkg/node.js';
import { SONNET } from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const b64 = Buffer.alloc(150_000, 7).toString('base64'); // 200,000 characters ("BwcH…")
const leaked = (text) => (text.match(/(?:BwcH){16,}/g) ?? []).reduce((n, s) => n + s.length, 0);

const aiCall = [
  { role: 'user', content: 'look' },
  { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 't', toolName: 'screenshot', input: {} }] },
];
const aiTool = (value) => [...aiCall,
  { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't', toolName: 'screenshot', output: { type: 'content', value } }] },
  { role: 'assistant', content: 'ok' }];
const doneR = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] };

const MEDIA = {
  'AI SDK tool output image-data': () => aiTool([{ type: 'image-data', data: b64, mediaType: 'image/png' }]),
  'AI SDK tool output file-data': () => aiTool([{ type: 'file-data', data: b64, mediaType: 'application/pdf' }]),
  'AI SDK tool output media': () => aiTool([{ type: 'media', data: b64, mediaType: 'image/png' }]),
  'OpenAI Chat input_audio': () => [{ role: 'user', content: [{ type: 'text', text: 'listen' }, { type: 'input_audio', input_audio: { data: b64, format: 'wav' } }] }, { role: 'assistant', content: 'ok' }],
  'OpenAI Chat image_url': () => [{ role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${b64}` } }] }, { role: 'assistant', content: 'ok' }],
  'LangChain audio block': () => [new HumanMessage({ content: [{ type: 'text', text: 'listen' }, { type: 'audio', data: b64, mimeType: 'audio/wav' }] }), new AIMessage('ok')],
  'LangChain image block': () => [new HumanMessage({ content: [{ type: 'text', text: 'look' }, { type: 'image', data: b64, mimeType: 'image/png' }] }), new AIMessage('ok')],
  'Responses computer_call_output': () => [{ role: 'user', content: 'look' },
    { type: 'computer_call', id: 'cu_1', call_id: 'c', status: 'completed', action: { type: 'screenshot' }, pending_safety_checks: [] },
    { type: 'computer_call_output', call_id: 'c', output: { type: 'computer_screenshot', image_url: `data:image/png;base64,${b64}` } }, doneR],
  'Responses image_generation_call': () => [{ role: 'user', content: 'draw' }, { type: 'image_generation_call', id: 'ig_1', status: 'completed', result: b64 }, doneR],
};

for (const [name, conversation] of Object.entries(MEDIA)) {
  test(`${name}: counted as one medium and sent to the summarizer as a marker`, async () => {
    const msgs = conversation();
    const count = cc.tokenCountWithEstimation(msgs);
    assert.ok(count >= 2_000 && count < 2_100, `count ${count}`);
    assert.equal(cc.shouldAutoCompact(msgs, SONNET), false);
    let request;
    const summarize = async (req) => { request = JSON.stringify(req); return '<summary>The user shared media.</summary>'; };
    const r = await cc.compactConversation(msgs, { model: SONNET, summarize });
    assert.equal(leaked(request), 0, 'no base64 in the summary request');
    assert.match(request, /\[(image|document)[:\]]/, 'a marker stands for the medium');
    assert.equal(r.preCompactTokenCount, count);
  });
}

test('OpenAI Responses built-in tool calls pair with their outputs: computer, shell, apply_patch; an mcp_call holds its own output', () => {
  const user = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] };
  const cases = {
    computer: [{ type: 'computer_call', id: 'cu', call_id: 'c1', status: 'completed', action: { type: 'click', x: 1, y: 2, button: 'left' }, pending_safety_checks: [] },
      { type: 'computer_call_output', call_id: 'c1', output: { type: 'computer_screenshot', image_url: 'https://example.com/s.png' } }],
    shell: [{ type: 'shell_call', id: 'sh', call_id: 'c2', status: 'completed', action: { commands: ['ls'], timeout_ms: 1000, max_output_length: 100 } },
      { type: 'shell_call_output', call_id: 'c2', output: [{ stdout: 'a\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] }],
    apply_patch: [{ type: 'apply_patch_call', id: 'ap', call_id: 'c3', status: 'completed', operation: { type: 'update_file', path: 'a.txt', diff: '@@\n-a\n+b' } },
      { type: 'apply_patch_call_output', call_id: 'c3', status: 'completed', output: 'done' }],
    mcp: [{ type: 'mcp_call', id: 'mc', server_label: 'db', name: 'query', arguments: '{}', output: 'rows' }],
  };
  for (const [name, items] of Object.entries(cases)) {
    const msgs = [user, ...items, doneR];
    assert.deepEqual(cc.validateForApi(msgs), { valid: true, problems: [] }, name);
    const api = cc.toApiMessages(msgs);
    const uses = api.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_use');
    if (name === 'mcp') assert.equal(uses.length, 0);
    else assert.deepEqual(uses.map((b) => b.name), [name], `${name}: one tool_use named for the tool`);
  }
  // Their outputs have shapes of their own (a screenshot object, an array of shell results):
  // micro-compaction never rewrites them into text the API would refuse. A screenshot is kept;
  // a shell output is cleared in its own form (its list, each command's outcome kept).
  const long = [user];
  for (let i = 0; i < 6; i++) long.push(...cases.computer.map((m) => ({ ...m, call_id: `c${i}`, ...(m.output ? { output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,' + 'A'.repeat(40_000) } } : {}) })), ...cases.shell.map((m) => ({ ...m, call_id: `s${i}`, ...(m.output ? { output: [{ stdout: 'x'.repeat(40_000), stderr: '', outcome: { type: 'exit', exit_code: 0 } }] } : {}) })));
  long.push(doneR);
  const r = cc.microCompact(long, { keepRecent: 1, compactableTools: ['*'] });
  assert.deepEqual(r.clearedToolUseIds, ['s0', 's1', 's2', 's3', 's4']);
  r.messages.forEach((m, i) => {
    if (m === long[i]) return;
    assert.equal(m.type, 'shell_call_output');
    assert.deepEqual(m, { ...long[i], output: [{ stdout: '[Old tool result content cleared]', stderr: '', outcome: { type: 'exit', exit_code: 0 } }] });
  });
  assert.ok(r.messages.filter((m) => m.type === 'computer_call_output').every((m) => long.includes(m)));
});
