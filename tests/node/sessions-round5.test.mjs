// Real Claude Code sessions, round 5: shapes seen in session files that the library has to
// read as Claude Code does. Synthetic lines of the same shape (plus the shared transcript).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as cc from '../../pkg/node.js';
import { SONNET, TRANSCRIPTS, recordingSummarizer, summaryResponse } from './helpers/support.mjs';

let clock = Date.parse('2026-02-01T10:00:00Z');
const at = () => new Date((clock += 1000)).toISOString();
let n = 0;
const line = (type, more) => ({ type, uuid: `u${++n}`, parentUuid: n > 1 ? `u${n - 1}` : null, isSidechain: false, sessionId: 's', timestamp: at(), ...more });
const user = (content) => line('user', { message: { role: 'user', content } });
const part = (id, block, usage) => line('assistant', { message: { id, type: 'message', role: 'assistant', model: SONNET, content: [block], usage } });
const usage = (read) => ({ input_tokens: 3, cache_creation_input_tokens: 200, cache_read_input_tokens: read, output_tokens: 40 });

// Claude Code writes each block of a streamed response as a line of its own; a response with
// thinking often begins with a line whose only text is "\n\n". Claude Code does not send it
// (the Messages API refuses a text block without non-whitespace text).
function splitResponses() {
  n = 0;
  return [
    user('mix phx.server does not start'),
    part('msg_1', { type: 'text', text: '\n\n' }, usage(15000)),
    part('msg_1', { type: 'thinking', thinking: 'Look at the project first.', signature: 'sig1' }, usage(15000)),
    part('msg_1', { type: 'text', text: 'Let me look at the project.' }, usage(15000)),
    part('msg_1', { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'mix phx.server' } }, usage(15000)),
    user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'error: port 4000 in use '.repeat(30) }]),
    part('msg_2', { type: 'text', text: '\n\n' }, usage(16000)),
    part('msg_2', { type: 'text', text: 'Port 4000 is taken; stop the other server.' }, usage(16000)),
    user('thanks, that was it'),
  ];
}

const blankTexts = (messages) =>
  messages.flatMap((m, i) =>
    typeof m.content === 'string'
      ? (m.content.trim() ? [] : [[i, m.content]])
      : m.content.filter((b) => b.type === 'text' && !b.text.trim()).map((b) => [i, b.text]));

test("a split response's whitespace-only text line is not sent: the API view is valid", () => {
  const lines = splitResponses();
  const api = cc.toApiMessages(lines);
  assert.deepEqual(blankTexts(api), []);
  assert.deepEqual(api.map((m) => m.role), ['user', 'assistant', 'user', 'assistant', 'user']);
  assert.deepEqual(api[1].content.map((b) => b.type), ['thinking', 'text', 'tool_use']);
  assert.deepEqual(cc.validateForApi(lines), { valid: true, problems: [] });
  // microCompact keeps every line and the view stays valid.
  const mc = cc.microCompact(lines, { keepRecent: 0, compactableTools: ['Bash'] });
  assert.equal(mc.messages.length, lines.length);
  assert.equal(cc.validateForApi(mc.messages).valid, true);
  // An API message's own blank text is the caller's: still reported.
  const own = cc.validateForApi([{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'text', text: '\n\n' }, { type: 'text', text: 'hello' }] }]);
  assert.equal(own.valid, false);
});

test('the summary request of such a session holds no whitespace-only text block', async () => {
  const lines = splitResponses();
  const summarize = recordingSummarizer(summaryResponse('They freed port 4000.'));
  const r = await cc.compactConversation(lines, { model: SONNET, summarize });
  assert.equal(summarize.calls.length, 1);
  const sent = summarize.calls[0].request.messages;
  assert.deepEqual(blankTexts(sent), []);
  assert.equal(cc.validateForApi(sent).valid, true, JSON.stringify(cc.validateForApi(sent).problems));
  assert.equal(cc.validateForApi(cc.buildPostCompactMessages(r)).valid, true);
});

test('the real small session (one response split over 5 lines, "\\n\\n" first) is valid to send, and so is its summary request', async () => {
  const lines = cc.parseTranscript(readFileSync(`${TRANSCRIPTS}cc_small_short.jsonl`, 'utf8'));
  assert.deepEqual(cc.validateForApi(lines), { valid: true, problems: [] });
  const whole = cc.parseTranscript(readFileSync(`${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`, 'utf8'));
  assert.deepEqual(cc.validateForApi(whole), { valid: true, problems: [] });
  const long = whole.slice(0, 400);
  const summarize = recordingSummarizer(summaryResponse('A Phoenix project.'));
  await cc.compactConversation(long, { model: SONNET, summarize });
  assert.deepEqual(blankTexts(summarize.calls[0].request.messages), []);
});
