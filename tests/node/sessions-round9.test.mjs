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
