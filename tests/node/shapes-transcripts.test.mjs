// The real Claude Code sessions of ../shared/transcripts rendered into every shape the package
// reads (helpers/shapes.mjs), and random conversations rendered the same way: the same counts
// and decisions in every shape, and edits, truncation and compaction that give back valid
// conversations of the same shape, accepted by that ecosystem's own code.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { convertToModelMessages, modelMessageSchema, validateUIMessages } from 'ai';
import { BaseMessage, HumanMessage, mapStoredMessagesToChatMessages } from '@langchain/core/messages';
import { load } from '@langchain/core/load';
import * as cc from '../../pkg/node.js';
import { SHAPES } from './helpers/shapes.mjs';
import { SONNET, TRANSCRIPTS, assertValidForApi, prng, randomHistory, readJsonl, summaryResponse } from './helpers/support.mjs';

const SESSIONS = readdirSync(TRANSCRIPTS).filter((f) => f.endsWith('.jsonl')).sort();
const count = (m) => cc.tokenCountWithEstimation(m);
// A UIMessage tool part's output is the tool's value, with no place for media: the UI form
// is compared with the Anthropic messages without the media inside tool results.
const withoutResultMedia = (api) => api.map((m) => (!Array.isArray(m.content) ? m : {
  ...m,
  content: m.content.map((b) => (b.type === 'tool_result' && Array.isArray(b.content)
    ? { ...b, content: b.content.filter((n) => n.type !== 'image' && n.type !== 'document') } : b)),
}));
const reference = (name, api) => (name === 'ai-sdk-ui' ? withoutResultMedia(api) : api);
// A Chat Completions `tool` message holds text only: the media a tool returned travels in a
// user message after it, so the result itself is smaller than in the Anthropic form (what
// microCompact weighs).
const resultsReference = (name, api) => (name === 'ai-sdk-ui' || name === 'openai-chat' ? withoutResultMedia(api) : api);

/** Checks that `out` is a valid conversation of the shape `name`, by that ecosystem's code. */
async function acceptedByItsEcosystem(name, out) {
  if (name === 'ai-sdk-model') for (const m of out) modelMessageSchema.parse(m);
  if (name === 'ai-sdk-ui') {
    await validateUIMessages({ messages: out });
    for (const m of await convertToModelMessages(out)) modelMessageSchema.parse(m);
  }
  if (name === 'langchain') for (const m of out) assert.ok(m instanceof BaseMessage);
  if (name === 'langchain-stored') for (const m of mapStoredMessagesToChatMessages(out)) assert.ok(m instanceof BaseMessage);
  if (name === 'langchain-serialized') for (const m of out) assert.ok((await load(JSON.stringify(m))) instanceof BaseMessage);
  if (name === 'openai-chat') {
    const calls = new Set();
    for (const m of out) {
      for (const c of m.tool_calls ?? []) { calls.add(c.id); JSON.parse(c.function.arguments); }
      if (m.role === 'tool') assert.ok(calls.has(m.tool_call_id), `tool message ${m.tool_call_id} answers an earlier call`);
    }
  }
  if (name === 'openai-responses') {
    const calls = new Set();
    for (const m of out) {
      if (m.type === 'function_call') calls.add(m.call_id);
      if (m.type === 'function_call_output') assert.ok(calls.has(m.call_id), `output ${m.call_id} follows its call`);
    }
  }
}

// Each session's API view (what follows its last compaction), and for a session that was
// compacted, also what preceded the compaction (the larger conversation Claude Code compacted).
const CONVERSATIONS = SESSIONS.flatMap((file) => {
  const lines = readJsonl(`${TRANSCRIPTS}${file}`);
  // A sub-agent's own file is its own conversation; the compaction agent's (one prompt, one
  // text answer) is text only, which no shape but its own can be told from: left out here.
  if (lines.every((l) => l.isSidechain === true || (l.type !== 'user' && l.type !== 'assistant'))) return [];
  const boundary = lines.findIndex((l) => l.type === 'system' && l.subtype === 'compact_boundary');
  const out = [{ label: file, api: cc.toApiMessages(lines) }];
  if (boundary > 0) out.push({ label: `${file} before its compaction`, api: cc.toApiMessages(lines.slice(0, boundary)) });
  return out.filter((c) => c.api.length > 0);
});

test('the shared sessions give conversations to render', () => {
  assert.ok(CONVERSATIONS.length >= 3, CONVERSATIONS.map((c) => c.label).join(', '));
});

for (const { label, api } of CONVERSATIONS) {
  describe(`${label} in every shape`, () => {
    const base = count(api);
    // A window whose threshold falls in the middle of the session: the decision flips once.
    const config = { contextWindow: Math.max(40_000, Math.round(base / 2) + 33_000) };

    for (const { name, shape, convert } of SHAPES) {
      test(`${name}: the same count, decisions, microCompact, truncation and compaction`, async () => {
        const msgs = convert(api);
        const snapshot = JSON.stringify(msgs);
        // The count: within 5 % (a UI tool output holds no media: compared without it).
        const ref = count(reference(name, api));
        const n = count(msgs);
        assert.ok(Math.abs(n - ref) <= 0.05 * ref, `${name}: ${n} tokens vs ${ref} in the Anthropic shape`);

        // The same shouldAutoCompact at every prefix (of the Anthropic messages, rendered).
        const step = Math.max(1, Math.floor(api.length / 60));
        for (let k = 1; k <= api.length; k += step) {
          const prefix = api.slice(0, k);
          const rendered = convert(prefix);
          if (rendered.length === 0) continue;
          assert.equal(cc.shouldAutoCompact(rendered, SONNET, { config }), cc.shouldAutoCompact(reference(name, prefix), SONNET, { config }), `${name}: prefix of ${k} messages`);
        }

        // microCompact: tokens freed, input untouched, the same shape back.
        const mc = cc.microCompact(msgs, { keepRecent: 3 });
        const mcApi = cc.microCompact(resultsReference(name, api), { keepRecent: 3 });
        assert.deepEqual(mc.clearedToolUseIds, mcApi.clearedToolUseIds, `${name}: the same results cleared as in the Anthropic shape`);
        if (mcApi.tokensFreed > 0) assert.ok(mc.tokensFreed > 0 && count(mc.messages) < n);
        await acceptedByItsEcosystem(name, mc.messages);

        // Truncation: starts on a user message, every call with its result.
        const t = cc.truncateHeadForPTLRetry(msgs, `prompt is too long: ${Math.round(n * 1.3)} tokens > ${n} maximum`);
        if (t !== null) {
          const view = cc.toApiMessages(t);
          assert.equal(view[0]?.role, 'user', `${name}: truncation starts on a user message`);
          assertValidForApi(view, undefined, `${name} truncated`);
          await acceptedByItsEcosystem(name, t);
        }

        // Compaction: valid, far smaller, in the same shape, accepted by its ecosystem.
        const r = await cc.compactConversation(msgs, { model: SONNET, summarize: async () => summaryResponse('The user and the agent worked through the session.') });
        assert.equal(r.messageShape, shape);
        const post = cc.buildPostCompactMessages(r);
        assert.equal(cc.validateForApi(post).valid, true, `${name}: the compacted conversation is valid`);
        assert.ok(count(post) < Math.max(n / 5, 500), `${name}: ${n} → ${count(post)}`);
        await acceptedByItsEcosystem(name, post);
        if (name === 'langchain') assert.ok(post.some((m) => m instanceof HumanMessage));
        assert.equal(JSON.stringify(msgs), snapshot, `${name}: input untouched`);
      });
    }
  });
}

describe('random conversations in every shape', () => {
  test('the same count, decision and cleared results in every shape (40 seeds)', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rng = prng(seed * 7919);
      const api = cc.toApiMessages(randomHistory(rng, { shape: 'api', turns: rng.int(2, 10) }));
      if (api.length === 0) continue;
      const config = { contextWindow: 40_000 + rng.int(0, 2 * count(api) + 1) };
      for (const { name, convert } of SHAPES) {
        const ref = reference(name, api);
        const base = count(ref);
        const msgs = convert(api);
        const n = count(msgs);
        assert.ok(Math.abs(n - base) <= 0.05 * base + 2, `seed ${seed}, ${name}: ${n} vs ${base}`);
        assert.equal(cc.shouldAutoCompact(msgs, SONNET, { config }), cc.shouldAutoCompact(ref, SONNET, { config }), `seed ${seed}, ${name}`);
        // (keepRecent counts in that order too: 0 for the UI form, whose parallel results may
        // come in another order.)
        const opts = { keepRecent: name === 'ai-sdk-ui' ? 0 : 1, compactableTools: ['*'] };
        // A UIMessage keeps results in the order of their calls (the Anthropic form in the
        // order they came back): the same set is cleared.
        const sorted = (r) => [...r.clearedToolUseIds].sort();
        assert.deepEqual(sorted(cc.microCompact(msgs, opts)), sorted(cc.microCompact(resultsReference(name, api), opts)), `seed ${seed}, ${name}`);
      }
    }
  });
});
