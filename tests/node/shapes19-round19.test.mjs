// What the nineteenth probe of other ecosystems' shapes found. Each test fails on the package
// before the fix (CC_PKG=/path/to/old/pkg/node.js runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');
const require = createRequire(import.meta.url);
const { AIMessage, HumanMessage } = require('@langchain/core/messages');

const summarize = async () => '<summary>Work so far.</summary>';

// ---- S1: LangChain's older plain-text file block ------------------------------------------
// `{type: 'file', source_type: 'text', text, mime_type?}` (@langchain/core's PlainTextContentBlock,
// deprecated but still read by 1.x; ChatAnthropic sends it as a text document) holds its text in
// `text`, not `data`: it counted as a 2,000-token file whatever its length, its API view was
// an empty base64 document, and the summarizer never saw the text.

const fileText = 'The secret word is PAPAYA. ' + 'The report goes on about the budget. '.repeat(2000);
const lcFile = () => [
  new HumanMessage({ content: [{ type: 'text', text: 'Read this report.' }, { type: 'file', source_type: 'text', mime_type: 'text/plain', text: fileText }] }),
  new AIMessage('I read it: ' + 'the budget is tight. '.repeat(200)),
  new HumanMessage('What was the secret word?'),
];

test('shapes19 S1: a LangChain plain-text file block (source_type text) counts as its text', () => {
  const count = cc.tokenCountWithEstimation(lcFile());
  const same = cc.tokenCountWithEstimation([
    new HumanMessage({ content: [{ type: 'text', text: 'Read this report.' }, { type: 'text-plain', mimeType: 'text/plain', text: fileText }] }),
    ...lcFile().slice(1),
  ]);
  assert.ok(count > fileText.length / 4, `${count} counts the file's ${fileText.length} characters`);
  assert.equal(count, same, 'as the same text in a v1 text-plain block');
});

test('shapes19 S1: the API view and the summary request carry that text', async () => {
  const view = cc.toApiMessages(lcFile());
  assert.deepEqual(view[0].content[1], { type: 'document', source: { type: 'text', media_type: 'text/plain', data: fileText } });
  let request;
  await cc.compactConversation(lcFile(), { model: 'claude-sonnet-4-5', summarize: async (r) => { request = r; return summarize(); } });
  assert.match(JSON.stringify(request.messages), /PAPAYA/);
});

// ---- S2: OpenAI programmatic tool calling ----------------------------------------------------
// A Responses `program` item runs code on the server; the client calls it makes name it
// (`caller: {type: 'program', caller_id}`), and its `program_output` follows their results.
// Nothing tied them: a compaction while a call of the program waited for its result kept that
// call alone (the program gone), and session memory could start the kept part at a call or at
// the output, leaving them without their program.

const program = (outChars, resultChars) => [
  { role: 'user', content: 'Sum the sizes of the two files.' },
  { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAAA' + 'E'.repeat(200) },
  { type: 'program', id: 'pg_1', call_id: 'pgc_1', code: 'const a = await tools.Read({file_path: "/a"});\nconst b = await tools.Read({file_path: "/b"});\nreturn a.length + b.length;', fingerprint: 'fp_' + 'F'.repeat(60) },
  { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'Read', arguments: '{"file_path":"/a"}', caller: { type: 'program', caller_id: 'pgc_1' } },
  { type: 'function_call_output', call_id: 'call_1', output: 'A'.repeat(outChars) },
  { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'Read', arguments: '{"file_path":"/b"}', caller: { type: 'program', caller_id: 'pgc_1' } },
  { type: 'function_call_output', call_id: 'call_2', output: 'B'.repeat(outChars) },
  { type: 'program_output', id: 'pgo_1', call_id: 'pgc_1', result: `${2 * outChars} ` + 'r'.repeat(resultChars), status: 'completed' },
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `The files hold ${2 * outChars} bytes.` }] },
];
const history = () => Array.from({ length: 12 }, (_, i) => [
  { role: 'user', content: `question ${i} ` + 'q'.repeat(2000) },
  { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `answer ${i} ` + 'a'.repeat(6000) }] },
]).flat();

// Every item tied to a program has its program before it.
function orphans(items) {
  const seen = new Set();
  const out = [];
  for (const m of items) {
    if (m.type === 'program') seen.add(m.call_id);
    const owner = m.type === 'program_output' ? m.call_id : m.caller?.caller_id;
    if (owner !== undefined && !seen.has(owner)) out.push(`${m.type} ${m.call_id}`);
  }
  return out;
}

test('shapes19 S2: a compaction while a program waits for a client call keeps the program with it', async () => {
  // The program has made its second call; the agent runs it after the compaction.
  const messages = [...history(), ...program(1000, 10).slice(0, 6)];
  const next = cc.buildPostCompactMessages(await cc.compactConversation(messages, { model: 'gpt-5', summarize }));
  const kept = next.slice(1);
  assert.deepEqual(kept, messages.slice(-5), 'the reasoning, the program, its calls and the result so far');
  assert.ok(kept.every((m, k) => m === messages[messages.length - 5 + k]), 'as the caller\'s own objects');
  assert.deepEqual(orphans(next), []);
});

test('shapes19 S2: session memory never starts the kept part inside a program', async () => {
  const messages = [...history(), ...program(60000, 40000), { role: 'user', content: 'Thanks. Now list them.' }];
  const next = cc.buildPostCompactMessages(await cc.trySessionMemoryCompaction(messages, { model: 'gpt-5', sessionMemory: 'Notes.' }));
  assert.deepEqual(orphans(next), [], JSON.stringify(next.map((m) => m.type ?? m.role)));
});

test('shapes19 S2: validateForApi names a program output whose program is gone', () => {
  const items = program(100, 10);
  assert.equal(cc.validateForApi(items).valid, true);
  const without = items.filter((m) => m.type !== 'program' && !m.caller);
  const v = cc.validateForApi(without.filter((m) => m.type !== 'function_call_output'));
  assert.equal(v.valid, false);
  assert.match(v.problems[0].problem, /pgc_1/);
});

// ---- S3: a UIMessage step that begins with the provider's compaction -------------------------
// An agent run is one UIMessage of several steps; when the API compacts during the run, the
// step it answers begins with the compaction (@ai-sdk/anthropic's text part marked
// `{anthropic: {type: 'compaction'}}`), and the API reads from there on. The count started at
// that message but read all of it: the steps before the compaction (a 120,000-character file
// read) counted, 30,070 tokens where the API view and the same run as ModelMessages count 53.

const run = () => [
  { id: 'u0', role: 'user', parts: [{ type: 'text', text: 'Earlier question. ' + 'q'.repeat(20000) }] },
  { id: 'a0', role: 'assistant', parts: [{ type: 'text', text: 'Earlier answer. ' + 'a'.repeat(20000) }] },
  { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Refactor the parser.' }] },
  { id: 'a1', role: 'assistant', parts: [
    { type: 'step-start' },
    { type: 'tool-Read', toolCallId: 'c1', state: 'output-available', input: { file_path: '/src/parse.rs' }, output: 'x'.repeat(120000) },
    { type: 'step-start' },
    { type: 'text', text: 'The user asked to refactor the parser; src/parse.rs was read.', providerMetadata: { anthropic: { type: 'compaction' } } },
    { type: 'tool-Edit', toolCallId: 'c2', state: 'output-available', input: { file_path: '/src/parse.rs', old_string: 'a', new_string: 'b' }, output: 'ok' },
    { type: 'step-start' },
    { type: 'text', text: 'Done.' },
  ] },
  { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'Thanks.' }] },
];

test('shapes19 S3: a UIMessage counts from the step that begins with the compaction', async () => {
  const ui = run();
  const view = cc.tokenCountWithEstimation(cc.toApiMessages(ui));
  const { convertToModelMessages } = require('ai');
  const model = cc.tokenCountWithEstimation(await convertToModelMessages(ui));
  const count = cc.tokenCountWithEstimation(ui);
  assert.ok(view < 200, `${view}`);
  assert.equal(count, view, 'as its API view');
  assert.equal(count, model, 'as the same run in ModelMessages');
  const compactor = new cc.Compactor({ model: 'claude-sonnet-4-5', messages: ui });
  assert.equal(compactor.tokenCount(), count);
  // Its structure is read whole: a tool result before the compaction is still one to clear.
  const micro = cc.microCompact(ui, { keepRecent: 0 });
  assert.deepEqual(micro.clearedToolUseIds, ['c1']);
  assert.equal(micro.messages[3].parts[1].errorText, '[Old tool result content cleared]');
});
