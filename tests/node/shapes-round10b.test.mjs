// What a second tenth-round probe of message shapes found across whole agent runs: OpenAI
// parts that name an uploaded file by `file_id` became empty base64 blocks in the API view
// (the reference and the file name gone), and the AI SDK's tool approval parts were counted
// although the SDK never sends them. Each test fails on the package before the fix
// (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

// The image and document blocks of Anthropic messages, tool results' included.
const media = (api) => api.flatMap((m) => (Array.isArray(m.content) ? m.content : []))
  .flatMap((b) => (b.type === 'tool_result' && Array.isArray(b.content) ? b.content : [b]))
  .filter((b) => b.type === 'image' || b.type === 'document');

test('OpenAI Chat file part by file_id: a file source with its name in the API view', () => {
  const msgs = [
    { role: 'user', content: [{ type: 'text', text: 'read this' }, { type: 'file', file: { file_id: 'file-abc123', filename: 'contract.pdf' } },
      { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0x', filename: 'terms.pdf' } }] },
    { role: 'assistant', content: 'ok' },
  ];
  const got = media(cc.toApiMessages(msgs));
  assert.deepEqual(got, [
    { type: 'document', source: { type: 'file', file_id: 'file-abc123' }, title: 'contract.pdf' },
    { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0x' }, title: 'terms.pdf' },
  ]);
  assert.equal(cc.tokenCountWithEstimation(cc.toApiMessages(msgs)), cc.tokenCountWithEstimation(msgs));
});

test('OpenAI Responses input_image / input_file / computer screenshot by file_id: file sources, never empty base64', () => {
  const items = [
    { role: 'user', content: [{ type: 'input_text', text: 'and these' }, { type: 'input_image', file_id: 'file-img1', detail: 'auto' }] },
    { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'fetch_report', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'attached' },
      { type: 'input_file', file_id: 'file-rep9', filename: 'q3-report.pdf' }, { type: 'input_file', file_url: 'https://example.com/y.pdf', filename: 'y.pdf' }] },
    { type: 'computer_call', id: 'cu_1', call_id: 'cc1', status: 'completed', action: { type: 'screenshot' }, pending_safety_checks: [] },
    { type: 'computer_call_output', call_id: 'cc1', output: { type: 'computer_screenshot', file_id: 'file-shot7' } },
    { type: 'message', role: 'assistant', id: 'm1', status: 'completed', content: [{ type: 'output_text', text: 'done', annotations: [] }] },
  ];
  const api = cc.toApiMessages(items);
  assert.deepEqual(media(api), [
    { type: 'image', source: { type: 'file', file_id: 'file-img1' } },
    { type: 'document', source: { type: 'file', file_id: 'file-rep9' }, title: 'q3-report.pdf' },
    { type: 'document', source: { type: 'url', url: 'https://example.com/y.pdf' }, title: 'y.pdf' },
    { type: 'image', source: { type: 'file', file_id: 'file-shot7' } },
  ]);
  assert.equal(cc.tokenCountWithEstimation(api), cc.tokenCountWithEstimation(items));
});

// ai 6: convertToModelMessages writes a denied or approved call as tool-call +
// tool-approval-request (assistant) and tool-approval-response + tool-result (tool);
// generateText leaves both approval parts out of the prompt the model receives.
test('AI SDK tool approval parts count nothing: a ModelMessage run counts as its UIMessage and its API view', () => {
  const reason = 'The user declined: ' + 'this would delete the production database backups. '.repeat(40);
  const ui = [
    { id: '1', role: 'user', parts: [{ type: 'text', text: 'clean up' }] },
    { id: '2', role: 'assistant', parts: [{ type: 'step-start' },
      { type: 'tool-bash', toolCallId: 'c1', state: 'output-denied', input: { cmd: 'rm -rf /backups' }, approval: { id: 'a1', approved: false, reason } },
      { type: 'step-start' }, { type: 'text', text: 'understood' }] },
  ];
  // What convertToModelMessages (ai 6.0) makes of it.
  const mm = [
    { role: 'user', content: [{ type: 'text', text: 'clean up' }] },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'bash', input: { cmd: 'rm -rf /backups' } },
      { type: 'tool-approval-request', approvalId: 'a1', toolCallId: 'c1' }] },
    { role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a1', approved: false, reason },
      { type: 'tool-result', toolCallId: 'c1', toolName: 'bash', output: { type: 'execution-denied', reason } }] },
    { role: 'assistant', content: [{ type: 'text', text: 'understood' }] },
  ];
  const n = cc.tokenCountWithEstimation(mm);
  assert.equal(n, cc.tokenCountWithEstimation(cc.toApiMessages(mm)));
  assert.equal(n, cc.tokenCountWithEstimation(ui));
  // A response about a provider-executed tool is sent (ai 6 convertToLanguageModelPrompt keeps
  // it; @ai-sdk/openai sends it as an mcp_approval_response): it still counts, reason included.
  const sent = { type: 'tool-approval-response', approvalId: 'a9', approved: false, reason, providerExecuted: true };
  const withSent = [...mm.slice(0, 3), { role: 'tool', content: [sent] }, mm[3]];
  assert.ok(cc.tokenCountWithEstimation(withSent) > n + 300, 'a provider-executed approval response counts');
  // A pending approval (no response yet) adds nothing to the call it asks about.
  const pending = [mm[0], mm[1]];
  assert.equal(cc.tokenCountWithEstimation(pending), cc.tokenCountWithEstimation([mm[0], { role: 'assistant', content: [mm[1].content[0]] }]));
});

// openai 7: ResponseInputItem.ComputerCallOutput.output is a ResponseComputerToolCallOutputScreenshot.
test('stripImagesFromMessages keeps a Responses computer screenshot a screenshot (other media still stripped)', () => {
  const png = 'iVBORw0KGgo' + 'A'.repeat(8000);
  const items = [{ role: 'user', content: 'open the settings page' },
    { type: 'computer_call', id: 'cu_1', call_id: 'cc1', status: 'completed', action: { type: 'screenshot' }, pending_safety_checks: [] },
    { type: 'computer_call_output', call_id: 'cc1', output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,' + png } },
    { type: 'function_call', id: 'fc_1', call_id: 'c1', name: 'read', arguments: '{}' },
    { type: 'function_call_output', call_id: 'c1', output: [{ type: 'input_text', text: 'log' }, { type: 'input_image', image_url: 'data:image/png;base64,' + png }] },
    { role: 'user', content: 'next' }];
  const out = cc.stripImagesFromMessages(items);
  assert.equal(out[2].output.type, 'computer_screenshot');
  assert.equal(out[2], items[2]);
  assert.deepEqual(out[4].output, [{ type: 'input_text', text: 'log' }, { type: 'input_text', text: '[image]' }]);
});

// @langchain/core 1.x: v1 standard blocks name an uploaded file by `fileId`, the older data
// content blocks by `source_type: 'id'` with `id`.
test('LangChain media blocks by file id: file sources in the API view, never empty base64', async () => {
  const { HumanMessage, AIMessage, ToolMessage } = await import('@langchain/core/messages');
  const msgs = [
    new HumanMessage({ content: [{ type: 'text', text: 'see' }, { type: 'image', fileId: 'file-img1' },
      { type: 'file', fileId: 'file-doc2', mimeType: 'application/pdf' }, { type: 'image', source_type: 'id', id: 'file-old3' }] }),
    new AIMessage({ content: '', tool_calls: [{ id: 't1', name: 'get', args: {} }] }),
    new ToolMessage({ tool_call_id: 't1', content: [{ type: 'text', text: 'here' }, { type: 'file', fileId: 'file-tool5', mimeType: 'application/pdf' }] }),
    new AIMessage('ok'),
  ];
  const api = cc.toApiMessages(msgs);
  assert.deepEqual(media(api), [
    { type: 'image', source: { type: 'file', file_id: 'file-img1' } },
    { type: 'document', source: { type: 'file', file_id: 'file-doc2' } },
    { type: 'image', source: { type: 'file', file_id: 'file-old3' } },
    { type: 'document', source: { type: 'file', file_id: 'file-tool5' } },
  ]);
  assert.equal(cc.tokenCountWithEstimation(api), cc.tokenCountWithEstimation(msgs));
});
