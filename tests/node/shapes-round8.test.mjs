// What an eighth probe of message shapes found: an OpenAI Responses MCP approval the user
// answered but the API has not acted on yet, summarized away by compaction; a LangChain
// audio reply (`additional_kwargs.audio`) left out of the view; empty API messages between
// turns that validateForApi passed; lone UTF-16 surrogates in message text. Each test fails
// on the package before its fix (CC_PKG=/path/to/old/pkg/node.js runs this file against
// another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AIMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

const big = (n, s = 'line') => Array.from({ length: n }, (_, i) => `${s} ${i}: some content of a file or command output here`).join('\n');
const summarize = async () => '<summary>SUMMARY: work continues.</summary>';
const compact = async (msgs, model, extra = {}) =>
  cc.buildPostCompactMessages(await cc.compactConversation(msgs, { model, summarize, ...extra }));
const assertValid = (msgs) => assert.deepEqual(cc.validateForApi(msgs).problems, []);

// ---- 1: an answered MCP approval the API has not acted on is pending ---------------------

const say = (t) => ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: t, annotations: [] }] });
const responsesBase = (ask, rounds = 6) => {
  const base = [{ role: 'developer', content: 'You are an agent.' }];
  for (let i = 0; i < rounds; i++) base.push({ role: 'user', content: `task ${i} ${big(60)}` }, say(`done ${i} ${big(60)}`));
  base.push({ role: 'user', content: ask });
  return base;
};
const approvalRequest = () => ({ type: 'mcp_approval_request', id: 'mcpr_1', server_label: 'deployer', name: 'deploy', arguments: '{"env":"prod"}' });
const approvalResponse = (approve = true) => ({ type: 'mcp_approval_response', approval_request_id: 'mcpr_1', approve, ...(approve ? {} : { reason: 'not today' }) });

test('1: an approval request answered by an unsent mcp_approval_response keeps both (approve and deny)', async () => {
  for (const approve of [true, false]) {
    const request = approvalRequest(), response = approvalResponse(approve);
    const out = await compact([...responsesBase('deploy to prod'), request, response], 'gpt-4.1');
    assert.equal(out.length, 4, JSON.stringify(out.map((m) => m.type ?? m.role)));
    assert.equal(out.at(-2), request);
    assert.equal(out.at(-1), response);
    assertValid(out);
  }
});

test('1: the unsent answer is kept with the other outputs of its turn (a parallel function call)', async () => {
  const call = { type: 'function_call', call_id: 'call_ls', name: 'ls', arguments: '{}' };
  const output = { type: 'function_call_output', call_id: 'call_ls', output: 'a.txt b.txt' };
  const request = approvalRequest(), response = approvalResponse();
  for (const tail of [[call, request, output, response], [call, request, response, output]]) {
    const out = await compact([...responsesBase('deploy to prod'), ...tail], 'gpt-4.1');
    assert.deepEqual(out.slice(-4), tail);
    assertValid(out);
  }
});

// Guards of the rule's reach (they pass before the fix too): what the API acted on, an answer
// the user's words follow, the API view and session-memory compaction are read as before.
test('1: an approval the API acted on (its mcp_call, a reply) is summarized like any finished round', async () => {
  const ran = { type: 'mcp_call', id: 'mcp_1', approval_request_id: 'mcpr_1', server_label: 'deployer', name: 'deploy', arguments: '{"env":"prod"}', output: 'deployed', status: 'completed' };
  for (const after of [[ran, say('Deployed.')], [say('I will not deploy then.')]]) {
    const msgs = [...responsesBase('deploy to prod'), approvalRequest(), approvalResponse(after.length === 2), ...after];
    const out = await compact(msgs, 'gpt-4.1');
    assert.ok(!out.some((m) => m.type === 'mcp_approval_request' || m.type === 'mcp_approval_response'), JSON.stringify(out));
    assertValid(out);
  }
});

test('1: an unsent answer followed by the user\'s words is summarized with its request, never kept alone', async () => {
  const msgs = [...responsesBase('deploy to prod'), approvalRequest(), approvalResponse(), { role: 'user', content: 'and check the logs' }];
  for (const keepLastUserMessage of [false, true]) {
    const out = await compact(msgs, 'gpt-4.1', { keepLastUserMessage });
    assert.ok(!out.some((m) => m.type === 'mcp_approval_response'), JSON.stringify(out));
    assertValid(out);
  }
});

test('1: toApiMessages and validateForApi read an unsent answer as its request\'s result', () => {
  const msgs = [{ role: 'user', content: 'deploy' }, approvalRequest(), approvalResponse(false)];
  assertValid(msgs);
  const api = cc.toApiMessages(msgs);
  assert.equal(api.length, 3);
  assert.equal(api[2].content[0].type, 'tool_result');
  assert.equal(api[2].content[0].tool_use_id, 'mcpr_1');
});

test('1: session-memory compaction keeps an answered, unsent approval too', async () => {
  const request = approvalRequest(), response = approvalResponse();
  const r = await cc.trySessionMemoryCompaction([...responsesBase('deploy to prod', 40), request, response], { model: 'gpt-4.1', sessionMemory: '# Notes\nthe user deploys the service' });
  assert.ok(r, 'compacted');
  const out = cc.buildPostCompactMessages(r);
  assert.ok(out.length < 40, `${out.length} messages`);
  assert.equal(out.at(-2), request);
  assert.equal(out.at(-1), response);
  assertValid(out);
});

// ---- 2: a LangChain audio reply (additional_kwargs.audio) is the assistant's turn --------

const transcript = `The capital is PARIS-MARKER. ${big(100, 'sentence')}`;
const audio = () => ({ id: 'audio_abc123', data: `UklGR${'A'.repeat(200000)}`, expires_at: 1790000000, transcript });
// As ChatOpenAI returns it: empty content, OpenAI Chat's `audio` in additional_kwargs.
const lcAudioReply = () => new AIMessage({ content: '', additional_kwargs: { audio: audio() } });
// The forms LangChain writes it in: the instance, its serialized `{lc: 1, kwargs}` and its
// stored `{type: 'ai', data}`.
const forms = (m) => [m, JSON.parse(JSON.stringify(m)), { type: 'ai', data: { content: m.content, additional_kwargs: m.additional_kwargs } }];

test('2: a LangChain audio reply is in the API view, counted as its transcript and its audio', () => {
  const one = (reply) => [new HumanMessage('What is the capital of France?'), reply, new HumanMessage('thanks')];
  const asText = cc.tokenCountWithEstimation(one(new AIMessage(transcript)));
  for (const reply of forms(lcAudioReply())) {
    const asAudio = cc.tokenCountWithEstimation(one(reply));
    assert.ok(asAudio > asText, `${asAudio} vs ${asText}`);
    assert.ok(asAudio < asText + 5000, `${asAudio}: the base64 is media, not text`);
    const api = cc.toApiMessages(one(reply));
    assert.equal(api.length, 3);
    assert.equal(api[1].role, 'assistant');
    assert.match(api[1].content[0].text, /PARIS-MARKER/);
    assertValid(one(reply));
  }
});

test('2: the transcript of a LangChain audio reply reaches the summary request', async () => {
  for (const reply of forms(lcAudioReply())) {
    const msgs = [new SystemMessage('You are a voice assistant.'), new HumanMessage('What is the capital?'), reply];
    for (let i = 0; i < 6; i++) msgs.push(new HumanMessage(`question ${i} ${big(40, 'q')}`), new AIMessage(`answer ${i} ${big(40, 'a')}`));
    msgs.push(new HumanMessage('And what did you say?'));
    let sent = '';
    await cc.compactConversation(msgs, { model: 'gpt-4o-audio-preview', summarize: async (r) => { sent = JSON.stringify(r); return '<summary>S</summary>'; } });
    assert.match(sent, /PARIS-MARKER/);
    assert.ok(!sent.includes('UklGRAAAA'), 'the audio is no text of the summary request');
  }
});

// An audio reply sent back by its id only (OpenAI Chat's `audio: {id}`, which the provider
// keeps until `expires_at`) holds nothing the library can read: it counts nothing and has no
// message in the API view (the user turns around it are merged there, as the API merges
// them); validation and compaction stay valid. Guards (they pass before the fix too).
test('2: an audio reply with only its id counts nothing and leaves no empty message anywhere', async () => {
  const shapes = [
    { reply: { role: 'assistant', content: null, audio: { id: 'audio_abc123' } }, user: (t) => ({ role: 'user', content: t }),
      ai: (t) => ({ role: 'assistant', content: t }), system: { role: 'system', content: 's' } },
    { reply: new AIMessage({ content: '', additional_kwargs: { audio: { id: 'audio_abc123' } } }), user: (t) => new HumanMessage(t),
      ai: (t) => new AIMessage(t), system: new SystemMessage('s') },
  ];
  for (const { reply, user, ai, system } of shapes) {
    assert.equal(cc.tokenCountWithEstimation([reply]), 0);
    for (const msgs of [[user('hi'), reply, user('again')], [user('hi'), reply]]) {
      const api = cc.toApiMessages(msgs);
      assert.equal(api.length, 1, JSON.stringify(api));
      assert.ok(api[0].content.length > 0);
      assertValid(msgs);
    }
    const long = [system];
    for (let i = 0; i < 6; i++) long.push(user(`q${i} ${big(60)}`), reply, user(`more ${i}`), ai(`a${i} ${big(20)}`));
    long.push(user('last'), reply);
    for (const keepLastUserMessage of [false, true]) assertValid(await compact(long, 'gpt-4o-audio-preview', { keepLastUserMessage }));
  }
});

// ---- 3: an empty API message between turns is reported, never created ---------------------

const u = (t) => ({ role: 'user', content: t }), a = (t) => ({ role: 'assistant', content: t });

test('3: validateForApi reports an empty message of declared Anthropic messages, which the API refuses, not a final empty assistant one', () => {
  const anthropic = { shape: 'anthropic' };
  for (const empty of ['', []]) {
    const mid = cc.validateForApi([u('hi'), a(empty), u('again')], anthropic);
    assert.equal(mid.valid, false);
    assert.equal(mid.problems.length, 1);
    assert.match(mid.problems[0].problem, /^messages\[1\] \(assistant\) has empty content/);
    assert.equal(cc.validateForApi([u('hi'), a('ok'), u(empty), a('x'), u('y')], anthropic).valid, false);
    assert.equal(cc.validateForApi([u(empty), u('hi')], anthropic).valid, false);
    // Detected, not declared: the same messages fit OpenAI Chat and the AI SDK, where an empty
    // message is valid; only their view (which leaves it out) is checked.
    assertValid([u('hi'), a(empty), u('again')]);
    assertValid([{ role: 'system', content: 's' }, u('hi'), a(empty), u('again')]);
    // An empty prefill (the final assistant message) is what the API accepts.
    assertValid([u('hi'), a(empty)]);
    assert.equal(cc.validateForApi([u('hi'), a(empty)], anthropic).valid, true);
    // toApiMessages leaves it out: what it gives is valid.
    const api = cc.toApiMessages([u('hi'), a(empty), u('again')]);
    assert.deepEqual(api, [{ role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'text', text: 'again' }] }]);
    assertValid(api);
  }
});

// Guards (they pass before the change too): other shapes drop an empty message when they
// read it, transcript lines with nothing to send are not sent, and a compaction summarizing an
// empty message writes none.
test('3: other shapes and transcript lines are not reported; a compaction creates no empty message', async () => {
  const responses = [u('hi'), { type: 'message', role: 'assistant', content: [] }, { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'again' }] }];
  assert.deepEqual(cc.validateForApi(responses, { shape: 'openai-responses' }).problems, []);
  assertValid(responses);
  assertValid([{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, refusal: null }, { role: 'user', content: 'again' }]);
  const line = (type, uuid, parentUuid, content) => ({ type, uuid, parentUuid, sessionId: 's', timestamp: '2026-01-01T00:00:00Z', message: { role: type, content } });
  assertValid([line('user', 'u1', null, 'hi'), line('assistant', 'a1', 'u1', []), line('user', 'u2', 'a1', 'again')]);
  const msgs = [];
  for (let i = 0; i < 6; i++) msgs.push(u(`q${i} ${big(60)}`), a(i % 2 ? [] : ''), u(`more ${i}`), a(`a${i} ${big(20)}`));
  msgs.push(u('last'));
  for (const keepLastUserMessage of [false, true]) {
    const out = await compact(msgs, 'claude-sonnet-4-5', { keepLastUserMessage });
    assertValid(out);
    for (const m of cc.toApiMessages(out)) assert.ok(m.content.length > 0);
  }
});

// ---- 4: lone UTF-16 surrogates --------------------------------------------------------------

// Text cut inside a surrogate pair (a `slice` through an emoji) leaves a lone surrogate, which
// JSON.stringify writes as an unpaired `\ud83d` escape: a request body the API refuses. The
// API view writes U+FFFD in its place (as String.prototype.toWellFormed does), and nothing
// else changes; validateForApi names the caller's message that holds one.
const cut = 'smile 😀'.slice(0, -1); // 'smile \ud83d'
const tricky = ['a\ud800b', 'x\udc00y', cut, '\udc00\ud800', '\ud800\ud83d\ude00', 'a\ud800\\udc00b', 'literal \\ud800', 'ok 😀'];
const withText = (t) => [
  { role: 'user', content: t },
  { role: 'assistant', content: [{ type: 'text', text: t }, { type: 'tool_use', id: 't1', name: 'Read', input: { path: t, [t]: [t, { deep: t }] } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: t }, { type: 'text', text: t }] },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't2', name: 'Read', input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't2', content: [{ type: 'text', text: t }] }] },
];

// Guard (it passes before the change too): what toApiMessages writes.
test('4: toApiMessages writes U+FFFD for each lone surrogate (text, tool inputs and keys, tool results) and changes nothing else', () => {
  for (const base of tricky) {
    // Short strings cross in the messages' JSON text, long ones apart: both the same.
    for (const t of [base, base + 'L'.repeat(5000)]) {
      const api = cc.toApiMessages(withText(t));
      const w = t.toWellFormed();
      const input = api[1].content[1].input;
      assert.deepEqual(
        [api[0].content[0].text, api[1].content[0].text, input.path, Object.keys(input)[1], input[w]?.[0], input[w]?.[1]?.deep,
          api[2].content[0].content, api[2].content[1].text, api[4].content[0].content[0].text],
        Array(9).fill(w), JSON.stringify(base));
      assert.ok(JSON.stringify(api).isWellFormed());
      // Text is counted by its length, in which U+FFFD is the one unit the surrogate was.
      assert.equal(cc.tokenCountWithEstimation([u(t)]), cc.tokenCountWithEstimation([u(w)]));
    }
  }
});

test('4: validateForApi names each Anthropic message holding a lone surrogate', () => {
  for (const t of ['a\ud800b', cut, '\udc00\ud800', 'a\ud800\\udc00b']) {
    for (const long of [false, true]) {
      const msgs = withText(long ? t + 'L'.repeat(5000) : t);
      const r = cc.validateForApi(msgs);
      assert.equal(r.valid, false, JSON.stringify(t));
      assert.deepEqual(r.problems.map((p) => p.problem.match(/^messages\[(\d)\] holds a lone UTF-16 surrogate/)?.[1]), ['0', '1', '2', '4']);
      assert.deepEqual(r.problems.map((p) => p.message), [0, 1, 2, 4]);
      // What toApiMessages gives is what the API takes.
      assertValid(cc.toApiMessages(msgs));
    }
  }
  // A key alone, deep in a tool input.
  const key = [{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Write', input: { a: [{ ['k\udfff']: 1 }] } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'ok' }] }];
  assert.deepEqual(cc.validateForApi(key).problems.map((p) => p.message), [1]);
  // Well-formed text (pairs, a literal backslash-u, U+FFFD itself) is no problem.
  for (const t of ['ok 😀', 'literal \\ud800', 'replacement \ufffd']) assertValid(withText(t));
});

// Guards (they pass before the change too): transcript lines are sent through their view and
// other shapes are not sent as they are; a compaction's own request is well-formed, and the
// caller's kept messages come back as they were.
test('4: transcript lines and other shapes are not reported; a compaction writes well-formed text', async () => {
  const line = { type: 'user', uuid: 'u1', parentUuid: null, sessionId: 's', timestamp: '2026-01-01T00:00:00Z', message: { role: 'user', content: `hi ${cut}` } };
  assertValid([line]);
  const chat = [{ role: 'user', content: cut }, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'Read', arguments: JSON.stringify({ path: cut }) } }] },
    { role: 'tool', tool_call_id: 'c1', content: cut }];
  assertValid(chat);
  const msgs = [];
  for (let i = 0; i < 6; i++) msgs.push(u(`q${i} ${cut} ${big(60)}`), a(`a${i} ${big(20)}`));
  msgs.push(u(`last ${cut}`));
  let sent = '';
  const r = await cc.compactConversation(msgs, { model: 'claude-sonnet-4-5', keepLastUserMessage: true,
    summarize: async (req) => { sent = JSON.stringify(req); return '<summary>S</summary>'; } });
  assert.ok(sent.isWellFormed() && !/\\ud[89a-f]/.test(sent), 'the summary request is well-formed');
  assert.ok(sent.includes('q0 smile \ufffd'));
  assert.equal(cc.buildPostCompactMessages(r).at(-1), msgs.at(-1));
});
