// Round 12 on long agent sessions: small and 1M windows (restoration room, the summary
// request's window, `[1m]` ids), and the API's own compaction paused mid-task (the count after
// the paused reply, runToolLoop going on).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runToolLoop } from '../../pkg/agents/anthropic.js';
import {
  Compactor,
  anthropicSummarizer,
  applyApiCompaction,
  buildApiContextManagement,
  buildPostCompactMessages,
  compactConversation,
  getAutoCompactThreshold,
  tokenCountWithEstimation,
} from '../../pkg/node.js';

const code = (k, chars) => Array.from({ length: Math.ceil(chars / 40) }, (_, i) => `    let v${k}_${i} = compute(${i}); // step ${i}`).join('\n').slice(0, chars);

test('a small window (32K, 4K of output: no warning line) keeps half its threshold free after restoring files', async () => {
  const model = 'my-local-32k';
  const config = { contextWindow: 32_768, maxOutputTokens: 4_096 };
  const threshold = getAutoCompactThreshold(model, config); // 15,672
  const readFileState = new Map();
  const messages = [];
  for (let k = 0; k < 6; k++) {
    const path = `src/file_${k}.rs`;
    readFileState.set(path, { content: code(k, 9_000), timestamp: 1000 + k });
    messages.push({ role: 'user', content: `Look at ${path}` }, { role: 'assistant', content: [{ type: 'tool_use', id: `t${k}`, name: 'Read', input: { path } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${k}`, content: code(k, 9_000) }] }, { role: 'assistant', content: 'Read it.' });
  }
  messages.push({ role: 'user', content: 'Now fix the bug.' });
  const summarize = async () => '<summary>' + 'Worked through the files and found the bug in the lexer. '.repeat(20) + '</summary>';
  const r = await compactConversation(messages, { model, config, summarize, readFileState }, { isAutoCompact: true });
  const after = tokenCountWithEstimation(buildPostCompactMessages(r));
  // Before: 5 files restored, 10,788 tokens after (69 % of the threshold).
  assert.ok(after <= threshold / 2 + 50, `${after} after, threshold ${threshold}`);
  assert.ok(r.restoredFiles.length >= 1 && r.restoredFiles[0].name === 'src/file_5.rs', JSON.stringify(r.restoredFiles));
});

test('the summary request of the main model fits the window the config gives it (contextWindow, enable1mContext)', async () => {
  // 32K: the request asked max_tokens 20,000 beside ~13,400 tokens of input (refused by the API).
  const msgs = [];
  for (let i = 0; i < 12; i++) msgs.push({ role: 'user', content: `Step ${i}: ` + code(i, 4_000) }, { role: 'assistant', content: 'done ' + i });
  msgs.push({ role: 'user', content: 'go on' });
  let req;
  const summarize = async (r) => { req = r; return '<summary>ok</summary>'; };
  await compactConversation(msgs, { model: 'my-local-32k', config: { contextWindow: 32_768, maxOutputTokens: 4_096 }, summarize });
  const input = Math.ceil((JSON.stringify(req.messages).length + JSON.stringify(req.system ?? '').length) / 4);
  assert.ok(input + req.max_tokens <= 32_768, `input ~${input} + max_tokens ${req.max_tokens}`);
  // A summary model of its own keeps its own window.
  await compactConversation(msgs, { model: 'my-local-32k', summaryModel: 'claude-sonnet-4-5', config: { contextWindow: 32_768, maxOutputTokens: 4_096 }, summarize });
  assert.equal(req.max_tokens, 20_000);

  // 1M by config: 48 of the 240 user instructions reached the summarizer (a 200K window).
  const long = [];
  for (let i = 0; i < 240; i++) {
    long.push({ role: 'user', content: [{ type: 'text', text: `Instruction ${i}: remember the codeword CW${i}.` }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't' + i, name: 'read_file', input: { path: `f${i}.rs` } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' + i, content: code(i, 14_000) }] },
      { role: 'assistant', content: [{ type: 'text', text: 'ok ' + i }], ...(i === 239 ? { usage: { input_tokens: 975_000, output_tokens: 10 } } : {}) });
  }
  await compactConversation(long, { model: 'claude-sonnet-4-5', config: { enable1mContext: true }, summarize });
  assert.equal(new Set(JSON.stringify(req.messages).match(/codeword CW\d+/g)).size, 240);
});

test('anthropicSummarizer sends a [1m] model id as the model with the 1M-context beta', async () => {
  const seen = [];
  const fetch = async (url, init) => {
    const b = JSON.parse(init.body);
    seen.push({ model: b.model, beta: new Headers(init.headers).get('anthropic-beta') });
    // Before: {model: 'claude-sonnet-4-5[1m]', beta: null}, which the API answers 404.
    if (b.model.includes('[')) return new Response(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'model: ' + b.model } }), { status: 404, headers: { 'content-type': 'application/json' } });
    return new Response(JSON.stringify({ id: 'm', type: 'message', role: 'assistant', model: b.model, content: [{ type: 'text', text: '<summary>fine</summary>' }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 5 } }), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const msgs = [{ role: 'user', content: 'hi '.repeat(3000) }, { role: 'assistant', content: 'hello '.repeat(3000) }, { role: 'user', content: 'more' }];
  const summarize = anthropicSummarizer({ apiKey: 'k', fetch, maxRetries: 0, stream: false, headers: { 'anthropic-beta': 'other-beta' } });
  await compactConversation(msgs, { model: 'claude-sonnet-4-5[1m]', summarize, retryBaseMs: 1 });
  assert.deepEqual(seen, [{ model: 'claude-sonnet-4-5', beta: 'other-beta,context-1m-2025-08-07' }]);
  const plain = anthropicSummarizer({ apiKey: 'k', fetch, maxRetries: 0, stream: false });
  await compactConversation(msgs, { model: 'claude-sonnet-4-5', summarize: plain, retryBaseMs: 1 });
  assert.deepEqual(seen[1], { model: 'claude-sonnet-4-5', beta: null });
});

const pausedReply = (summary) => ({
  id: 'mc', type: 'message', role: 'assistant', content: [{ type: 'compaction', content: summary, encrypted_content: 'e' }], stop_reason: 'compaction',
  usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, iterations: [{ type: 'compaction', input_tokens: 130_020, output_tokens: 3_500 }] },
});

test('Compactor: the all-zero usage of a paused API compaction does not anchor the count (as the stateless count)', () => {
  const msgs = [{ role: 'user', content: 'x '.repeat(50_000) }, { role: 'assistant', content: 'ok', usage: { input_tokens: 130_000, output_tokens: 5 } }, { role: 'user', content: 'Task: do it' }];
  const reply = pausedReply('API SUMMARY ' + 'the parser work so far. '.repeat(500));
  const c = new Compactor({ model: 'claude-sonnet-4-5', messages: msgs });
  c.push({ role: 'assistant', content: reply.content, usage: reply.usage });
  // Before: 0 (and 3 after the next user message), the stateless count 3,003.
  assert.equal(c.tokenCount(), tokenCountWithEstimation(c.messages));
  assert.ok(c.tokenCount() > 2_500, String(c.tokenCount()));
  c.push({ role: 'user', content: 'go on' });
  assert.equal(c.tokenCount(), tokenCountWithEstimation(c.messages));
  const r = Compactor.restore(JSON.parse(JSON.stringify(c.snapshot())), c.messages, { model: 'claude-sonnet-4-5' });
  assert.equal(r.tokenCount(), c.tokenCount());
});

test('runToolLoop goes on after the API compaction paused (stop_reason compaction), the user request after the block', async () => {
  const requests = [];
  const client = { messages: { create: async (body) => {
    requests.push(structuredClone(body));
    const n = requests.length;
    if (n === 1) return { id: 'm1', type: 'message', role: 'assistant', content: [{ type: 'tool_use', id: 'tu1', name: 'read_file', input: { path: 'a.rs' } }], stop_reason: 'tool_use', usage: { input_tokens: 80_000, output_tokens: 20 } };
    if (n === 2) return pausedReply('Summary: the user asked to fix the parser; a.rs was read.');
    return { id: 'm' + n, type: 'message', role: 'assistant', content: [{ type: 'text', text: 'Fixed the parser.' }], stop_reason: 'end_turn', usage: { input_tokens: 3_000, output_tokens: 10 } };
  } } };
  const compactor = new Compactor({ model: 'claude-sonnet-4-5' });
  compactor.push({ role: 'user', content: 'Fix the parser' });
  const res = await runToolLoop({ client, compactor, tools: { read_file: () => 'fn main() {}\n'.repeat(100) },
    request: { model: 'claude-sonnet-4-5', max_tokens: 4096, context_management: buildApiContextManagement({ compact: true, pauseAfterCompaction: true, compactTriggerInputTokens: 50_000 }) } });
  // Before: the loop returned the paused reply after 2 requests.
  assert.equal(res.message.stop_reason, 'end_turn');
  assert.equal(requests.length, 3);
  const last = requests[2].messages;
  const at = last.findIndex((m) => Array.isArray(m.content) && m.content.some((b) => b.type === 'compaction'));
  assert.ok(at >= 0);
  const after = last.slice(at + 1);
  assert.equal(after[0].role, 'user');
  assert.ok(JSON.stringify(after).includes('Fix the parser'), JSON.stringify(after));
  assert.equal(after.at(-1).role, 'user');
  assert.equal(compactor.tokenCount(), tokenCountWithEstimation(compactor.messages));
});

test('applyApiCompaction after a pause puts a response back without the old context\'s usage', () => {
  const msgs = [
    { role: 'user', content: 'old task ' + 'x '.repeat(30_000) },
    { role: 'assistant', content: [{ type: 'text', text: 'done' }], usage: { input_tokens: 40_000, output_tokens: 5 } },
    { role: 'user', content: 'Task 2: fix it' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'a', name: 'read_file', input: { path: 'x' } }], usage: { input_tokens: 40_100, output_tokens: 5 } },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'y '.repeat(20_000) }] },
  ];
  const applied = applyApiCompaction(msgs, pausedReply('SUMMARY of the old task'));
  const at = applied.messages.findIndex((m) => m.content?.[0]?.type === 'compaction');
  const back = applied.messages.slice(at + 1);
  assert.deepEqual(back.map((m) => m.role), ['user', 'assistant', 'user']);
  assert.equal(back[0], msgs[2]); // the caller's own objects where nothing changes
  assert.equal(back[2], msgs[4]);
  assert.deepEqual(back[1], { role: 'assistant', content: msgs[3].content });
  assert.equal(back[1].content, msgs[3].content);
  assert.ok(msgs[3].usage, 'the caller\'s message is not changed');
  // Before: 50,105 (the old context's 40,100 plus the result) where the new context is ~10,000.
  const fresh = tokenCountWithEstimation(applied.messages.slice(at));
  assert.equal(tokenCountWithEstimation(applied.messages), fresh);
  assert.ok(fresh < 11_000, String(fresh));
  assert.equal(new Compactor({ model: 'claude-sonnet-4-5', messages: applied.messages }).tokenCount(), fresh);
});

test('a summary request refused as "input length and max_tokens exceed context limit" is sent again with less output, not without its oldest rounds', async () => {
  let phase = 1;
  let calls = [];
  const summarize = async (r) => {
    calls.push({ text: JSON.stringify(r.messages), max: r.max_tokens });
    if (phase === 1) return '<summary>FIRST SUMMARY: the user wants the lexer fixed; codeword ZEBRA.</summary>';
    // The API counts more input than the estimate (code): 13,987 tokens.
    if (calls.length === 1) throw Object.assign(new Error(`input length and \`max_tokens\` exceed context limit: 13987 + ${r.max_tokens} > 32768, decrease input length or \`max_tokens\` and try again`), { status: 400 });
    return '<summary>second</summary>';
  };
  const c = new Compactor({ model: 'my-local-32k', config: { contextWindow: 32_768, maxOutputTokens: 4_096 }, summarize, retryBaseMs: 1 });
  for (let i = 0; i < 6; i++) c.pushMany([{ role: 'user', content: `Step ${i}: ` + code(i, 9_000) }, { role: 'assistant', content: 'done ' + i }]);
  await c.compact();
  phase = 2;
  calls = [];
  for (let i = 0; i < 6; i++) c.pushMany([{ role: 'user', content: `Later ${i}: ` + code(i + 9, 7_000) }, { role: 'assistant', content: 'done ' + i }]);
  await c.compact();
  assert.equal(calls.length, 2);
  // Before: the retry dropped the oldest round, the earlier summary with it (ZEBRA lost).
  assert.ok(calls[1].text.includes('ZEBRA') && calls[1].text.includes('Later 0'));
  assert.equal(calls[1].text, calls[0].text);
  assert.equal(calls[1].max, 32_768 - 13_987);
});
