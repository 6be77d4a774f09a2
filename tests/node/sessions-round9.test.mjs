// Ninth round: what a session's first request sends besides its messages, when some tools
// are deferred to a tool search (Anthropic `defer_loading`, OpenAI Responses `tool_search`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';

const MODEL = 'claude-opus-4-6';
const tool = (name, chars) => ({
  name,
  description: `${name}: ${'does a thing with the workspace. '.repeat(Math.ceil(chars / 33))}`,
  input_schema: { type: 'object', properties: { path: { type: 'string' } } },
});
const messages = [{ role: 'user', content: 'Find the failing test and fix it.' }];

test('tools marked defer_loading are not counted until a search loads them', () => {
  const eager = [tool('Read', 800), tool('Edit', 800)];
  // A catalog of 60 MCP tools, deferred: the model sees none of them in the first request.
  const catalog = Array.from({ length: 60 }, (_, i) => ({ ...tool(`mcp__db__query_${i}`, 2000), defer_loading: true }));
  const system = 'You are a coding agent.';
  const withEager = cc.tokenCountWithEstimation(messages, { system, tools: eager });
  const withCatalog = cc.tokenCountWithEstimation(messages, { system, tools: [...eager, ...catalog] });
  assert.equal(withCatalog, withEager, 'the deferred catalog adds nothing');
  // Not deferred, the same catalog is counted (its JSON, about 60 × 550 tokens).
  const loaded = catalog.map(({ defer_loading: _, ...t }) => t);
  const withLoaded = cc.tokenCountWithEstimation(messages, { system, tools: [...eager, ...loaded] });
  assert.ok(withLoaded - withEager > 25_000, `${withLoaded} vs ${withEager}`);
  // `defer_loading: false` loads the tool as if the key were absent.
  const notDeferred = loaded.map((t) => ({ ...t, defer_loading: false }));
  assert.ok(cc.tokenCountWithEstimation(messages, { system, tools: [...eager, ...notDeferred] }) > withLoaded);
  // OpenAI Responses function tools carry the same key.
  const responsesTools = [{ type: 'function', name: 'search', parameters: {}, defer_loading: true }, { type: 'tool_search' }];
  assert.equal(
    cc.tokenCountWithEstimation(messages, { tools: responsesTools }),
    cc.tokenCountWithEstimation(messages, { tools: [{ type: 'tool_search' }] }),
  );
  // The Compactor reads its context's toolDefinitions the same way.
  const c = new cc.Compactor({ model: MODEL, system, toolDefinitions: [...eager, ...catalog], messages });
  assert.equal(c.tokenCount(), withEager);
});

// A tool search's result (`tool_reference` blocks) loads each tool's definition into the
// context; the block itself is a dozen tokens of JSON.
test('a tool_reference counts the tool definition it loads, on the API view and on transcript lines', () => {
  const ALLOWANCE = 700;
  const api = (names) => [
    { role: 'user', content: 'find the database tools' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'ToolSearch', input: { query: 'db' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: names.map((n) => ({ type: 'tool_reference', tool_name: n })) }] },
  ];
  const none = cc.tokenCountWithEstimation(api([]));
  assert.equal(cc.tokenCountWithEstimation(api(['mcp__db__query'])), none + ALLOWANCE);
  assert.equal(cc.tokenCountWithEstimation(api(['mcp__db__query', 'mcp__db__schema'])), none + 2 * ALLOWANCE);
  // Claude Code lines after a usage: the per-turn path estimates the result after the anchor.
  const line = (type, message, extra = {}) => ({ type, uuid: `u${Math.random()}`, parentUuid: null, isSidechain: false, message, ...extra });
  const lines = (names) => {
    const out = [
      line('user', { role: 'user', content: 'find the database tools' }),
      line('assistant', { id: 'r1', role: 'assistant', stop_reason: 'tool_use', content: api([])[1].content, usage: { input_tokens: 20_000, output_tokens: 30 } }),
      line('user', api(names)[2]),
    ];
    for (let i = 1; i < out.length; i++) out[i].parentUuid = out[i - 1].uuid;
    return out;
  };
  const base = cc.tokenCountWithEstimation(lines([]));
  assert.equal(cc.tokenCountWithEstimation(lines(['a', 'b', 'c'])), base + 3 * ALLOWANCE);
  assert.equal(cc.tokenCountWithEstimation(lines(['a', 'b', 'c']), { model: MODEL }), base + 3 * ALLOWANCE);
});

// A compaction of transcript lines restores files as attachment lines; what is sent for them
// names the file, as the API-shape restoration does.
test('restored files in transcript lines are sent with their path (toApiMessages, validateForApi)', async () => {
  const line = (type, message, extra = {}) => ({ type, uuid: `u${Math.random()}`, parentUuid: null, isSidechain: false, sessionId: 's', timestamp: new Date().toISOString(), message, ...extra });
  const lines = [];
  for (let i = 0; i < 12; i++) {
    lines.push(line('user', { role: 'user', content: `question ${i} ${'about the parser '.repeat(40)}` }));
    lines.push(line('assistant', { id: `r${i}`, role: 'assistant', stop_reason: 'end_turn', content: [{ type: 'text', text: `answer ${i} ${'the parser works so '.repeat(40)}` }] }));
  }
  for (let i = 1; i < lines.length; i++) lines[i].parentUuid = lines[i - 1].uuid;
  const readFileState = new Map([['/repo/src/parser.rs', { content: 'fn parse() {}\n'.repeat(50), timestamp: Date.now() }]]);
  const summarize = async () => ({ content: [{ type: 'text', text: '<summary>We worked on the parser.</summary>' }], stop_reason: 'end_turn' });
  const res = await cc.compactConversation(lines, { model: MODEL, summarize, readFileState });
  const post = cc.buildPostCompactMessages(res);
  const restored = post.filter((l) => l.type === 'attachment' && l.attachment?.type === 'restored_file');
  assert.equal(restored.length, 1, 'the file is restored as an attachment line');
  const sent = JSON.stringify(cc.toApiMessages(post));
  assert.ok(sent.includes('File /repo/src/parser.rs as it was read before this conversation was compacted'), 'the path is sent');
  assert.equal(cc.validateForApi(post).valid, true);
});

test('deferred tools: a tool JSON cannot write is still refused beside a deferred one', () => {
  const bad = { name: 'Big', input_schema: { type: 'object' }, limit: 10n };
  for (const tools of [[bad], [bad, { name: 'Later', input_schema: {}, defer_loading: true }]]) {
    assert.throws(() => cc.tokenCountWithEstimation(messages, { tools }), (e) => e.code === 'INVALID_ARGUMENT' && /options\.tools/.test(e.message));
  }
});

test('a server-side tool search counts the tools its result loads', () => {
  const conv = (names) => [
    { role: 'user', content: 'find the database tools' },
    { role: 'assistant', content: [
      { type: 'server_tool_use', id: 'srvtoolu_1', name: 'tool_search_tool_regex', input: { pattern: 'db' } },
      { type: 'tool_search_tool_result', tool_use_id: 'srvtoolu_1', content: { type: 'tool_search_tool_search_result', tool_references: names.map((n) => ({ type: 'tool_reference', tool_name: n })) } },
      { type: 'text', text: 'Found them.' },
    ] },
  ];
  const none = cc.tokenCountWithEstimation(conv([]));
  const two = cc.tokenCountWithEstimation(conv(['mcp__db__query', 'mcp__db__schema']));
  assert.ok(two - none >= 1400 && two - none <= 1403, `${two} vs ${none}`);
  // The same through the general path (options) and a Compactor.
  assert.equal(cc.tokenCountWithEstimation(conv(['mcp__db__query', 'mcp__db__schema']), { model: MODEL }), two);
  assert.equal(new cc.Compactor({ model: MODEL, messages: conv(['mcp__db__query', 'mcp__db__schema']) }).tokenCount(), two);
});
