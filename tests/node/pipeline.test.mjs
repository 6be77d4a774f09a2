// The compaction pipeline driven by JS callbacks (SPEC §6, §7, §9, §12–§16; issue 3):
// compactConversation, autoCompactIfNeeded, trySessionMemoryCompaction, reactiveCompact and
// buildApiContextManagement, with scripted summarizers, hooks, file readers and abort signals.
// Every rule of the issue is asserted on behaviour (never on timing).
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

const { OPUS, SONNET } = h;
/** A threshold of 9,000 tokens for OPUS (5% of the 180,000 effective window). */
const LOW_THRESHOLD = { autoCompactPctOverride: 5 };

/** A fresh read-file state of `n` small text files (timestamps 1..n) and its copy. */
function fileState(n = 3) {
  const m = new Map();
  for (let i = 1; i <= n; i++) m.set(`/repo/src/f${i}.ts`, { content: `export const f${i} = ${i};\n`, timestamp: i });
  return m;
}

/** Conversation, its clone, a read-file state and its clone. */
function setup(o = {}) {
  const msgs = o.messages ?? h.apiConversation(o);
  const rfs = fileState();
  return { msgs, before: structuredClone(msgs), rfs, rfsBefore: structuredClone(rfs) };
}

/** Asserts nothing was committed: messages and read-file state as they were. */
function assertUntouched(s, label = '') {
  assert.deepStrictEqual(s.msgs, s.before, `${label}: the caller's messages changed`);
  assert.deepStrictEqual(s.rfs, s.rfsBefore, `${label}: the read-file state changed`);
}

const CI_MARKER = 'CUSTOM_INSTRUCTION_ZEBRA_7731';

// ---------------------------------------------------------------------------------------------
describe('the validator of the helpers', () => {
  test('catches every kind of invalid conversation', () => {
    const ok = h.apiConversation({ rounds: 2, thinking: true });
    assert.deepEqual(h.apiProblems(ok, ok), []);
    const unanswered = ok.slice(0, 2);
    assert.match(h.apiProblems(unanswered).join(), /not answered/);
    const orphan = [{ role: 'user', content: 'hi' }, ...ok.slice(2)];
    assert.match(h.apiProblems(orphan).join(), /does not follow/);
    assert.match(h.apiProblems(ok.slice(1)).join(), /first message sent is an assistant/);
    assert.match(h.apiProblems([{ role: 'user', content: '' }]).join(), /empty content/);
    assert.match(h.apiProblems([{ role: 'user', content: [] }]).join(), /empty content/);
    assert.match(h.apiProblems([{ role: 'user', content: [{ type: 'text', text: '' }] }]).join(), /empty text/);
    const edited = structuredClone(ok);
    edited[1].content[0].thinking += ' (edited)';
    assert.match(h.apiProblems(edited, ok).join(), /thinking block was edited/);
    // Transcript lines: split responses with interleaved results are one assistant message.
    const t = h.transcriptConversation({ rounds: 3 });
    assert.deepEqual(h.apiProblems(t, t), []);
    const { view } = h.sentView(t);
    assert.equal(view[0].role, 'user');
    assert.ok(view.every((m, i) => i === 0 || m.role !== view[i - 1].role), 'roles alternate');
    // Dropping one tool_result line breaks it.
    const broken = t.filter((l) => !(l.type === 'user' && Array.isArray(l.message.content) && l.message.content[0]?.tool_use_id === 'toolu_1_b'));
    assert.match(h.apiProblems(broken).join(), /toolu_1_b is not answered/);
  });
});

// ---------------------------------------------------------------------------------------------
describe('compactConversation: the result and the compacted conversation', () => {
  test('API-shaped history: every CompactionResult field present and sane', async () => {
    const s = setup({ rounds: 12 });
    const summarize = h.recordingSummarizer(h.summaryResponse('SUMMARY-BODY-1'));
    const ctx = { model: SONNET, summarize, readFileState: s.rfs };
    const pre = cc.tokenCountWithEstimation(s.msgs);
    const r = await cc.compactConversation(s.msgs, ctx, {});
    assert.deepStrictEqual(s.msgs, s.before, 'input unchanged on success');
    for (const k of [
      'boundaryMarker', 'summaryMessages', 'attachments', 'hookResults', 'messagesToKeep', 'preCompactTokenCount',
      'postCompactTokenCount', 'truePostCompactTokenCount', 'compactionUsage', 'summary', 'trigger', 'restoredFiles',
      'restoredSkills', 'hookErrors', 'ptlRetries', 'transientRetries', 'fromSessionMemory', 'summaryParts',
    ]) assert.ok(k in r, `result.${k} is missing`);
    assert.ok('userDisplayMessage' in r);
    assert.equal(r.userDisplayMessage, undefined, 'no hook gave a display message');
    const b = r.boundaryMarker;
    assert.equal(b.type, 'system');
    assert.equal(b.subtype, 'compact_boundary');
    assert.equal(b.compactMetadata.trigger, 'manual');
    assert.equal(b.compactMetadata.preTokens, pre);
    assert.equal(typeof b.uuid, 'string');
    assert.equal(r.preCompactTokenCount, pre);
    assert.equal(r.summaryMessages.length, 1);
    assert.equal(r.summaryMessages[0].role, 'user');
    assert.match(r.summaryMessages[0].content, /SUMMARY-BODY-1/);
    assert.doesNotMatch(JSON.stringify(r.summaryMessages), /scratch work|<analysis>/, 'the analysis is discarded');
    assert.equal(r.summary, 'SUMMARY-BODY-1');
    assert.deepEqual(r.messagesToKeep, [], 'full compaction keeps no message verbatim');
    assert.equal(r.trigger, 'manual');
    assert.equal(r.ptlRetries, 0);
    assert.equal(r.transientRetries, 0);
    assert.equal(r.fromSessionMemory, false);
    assert.equal(r.summaryParts, 1);
    assert.deepEqual(r.hookErrors, []);
    assert.deepEqual(r.restoredSkills, []);
    assert.deepEqual(r.compactionUsage, { input_tokens: 5_000, output_tokens: 400, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    assert.equal(r.postCompactTokenCount, 5_400, 'what the summary call consumed (input + output)');
    const post = cc.buildPostCompactMessages(r);
    assert.equal(r.truePostCompactTokenCount, cc.tokenCountWithEstimation(post));
    assert.ok(r.truePostCompactTokenCount > 0 && r.truePostCompactTokenCount < pre, 'smaller than before');
    assert.equal(r.restoredFiles.length, 3);
    assert.equal(r.attachments.length, 3);
    assert.equal(s.rfs.size, 0, 'the read-file state is cleared after success');
    h.assertValidForApi(post, s.before, 'post-compact conversation');
  });

  test('buildPostCompactMessages: boundary, summary, kept, attachments, hook results — nothing else', async () => {
    const s = setup({ rounds: 30 });
    const ctx = {
      model: OPUS,
      summarize: h.recordingSummarizer(),
      sessionMemory: 'Session memory: the user is refactoring the parser.',
      readFileState: new Map([['/notes.md', { content: 'notes', timestamp: 1 }]]),
      plan: 'Step 1: do it.',
      hooks: { sessionStart: () => ({ messages: ['hook result one', 'hook result two'] }) },
    };
    const r = await cc.trySessionMemoryCompaction(s.msgs, ctx);
    assert.ok(r.messagesToKeep.length > 0, 'session memory keeps messages');
    assert.ok(r.attachments.length >= 2 && r.hookResults.length === 2);
    const post = cc.buildPostCompactMessages(r);
    const expected = [r.boundaryMarker, ...r.summaryMessages, ...r.messagesToKeep, ...r.attachments, ...r.hookResults];
    assert.equal(post.length, expected.length);
    post.forEach((m, i) => assert.strictEqual(m, expected[i], `position ${i}`));
    assert.deepEqual(r.hookResults.map((m) => m.content), ['hook result one', 'hook result two']);
    h.assertValidForApi(post, s.before);
    assert.deepStrictEqual(s.msgs, s.before);
  });

  test('the summary request: a Messages API body with the project prompt, no tools, thinking left out', async () => {
    const s = setup({ rounds: 6, thinking: true });
    s.msgs[0].content = [{ type: 'text', text: 'look' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo'.repeat(50) } }];
    s.before = structuredClone(s.msgs);
    const summarize = h.recordingSummarizer();
    await cc.compactConversation(s.msgs, { model: SONNET, summarize }, {});
    assert.equal(summarize.calls.length, 1);
    const { request, options } = summarize.calls[0];
    assert.equal(request.model, SONNET);
    assert.equal(typeof request.system, 'string');
    assert.ok(request.max_tokens > 0 && request.max_tokens <= 20_000);
    assert.ok(!('tools' in request), 'no tool definitions');
    assert.deepEqual(h.apiProblems(request.messages), [], 'the request itself is valid');
    const json = JSON.stringify(request.messages);
    assert.doesNotMatch(json, /"type":"(tool_use|tool_result|thinking|image)"/);
    assert.doesNotMatch(json, /iVBORw0KGgo/, 'media stripped');
    assert.match(json, /\[image: image\/png, \d+ B\]/);
    const last = request.messages[request.messages.length - 1];
    assert.equal(last.role, 'user');
    assert.match(JSON.stringify(last), /<summary>/);
    assert.match(JSON.stringify(last), /[Dd]o not (call|use) any tools/);
    assert.ok(options && 'signal' in options, 'summarize(request, {signal, onText})');
    assert.deepStrictEqual(s.msgs, s.before);
  });

  test('max_tokens follows the model: claude-3-haiku gets at most 4,096', async () => {
    const summarize = h.recordingSummarizer();
    await cc.compactConversation(h.apiConversation({ rounds: 4 }), { model: 'claude-3-haiku-20240307', summarize }, {});
    assert.equal(summarize.calls[0].request.max_tokens, 4_096);
  });

  test('a plain string answer is accepted; without usage postCompactTokenCount is estimated', async () => {
    const s = setup({ rounds: 6 });
    const r = await cc.compactConversation(s.msgs, { model: SONNET, summarize: async () => '<analysis>a</analysis><summary>Plain string summary.</summary>' }, {});
    assert.equal(r.summary, 'Plain string summary.');
    assert.equal(r.compactionUsage, null);
    assert.ok(r.postCompactTokenCount > 0);
    assert.deepStrictEqual(s.msgs, s.before);
  });

  // The compaction paths read lines without the fields a compaction never reads (session
  // fields, chain links, toolUseResult, …) and read the last main-chain line again whole: the
  // boundary's session fields come from that line, whatever its type.
  test('transcript: the boundary copies every session field of the last main-chain line (read or carried)', async () => {
    for (const lastType of ['user', 'progress']) {
      const t = h.transcriptConversation({ rounds: 6 });
      const last = lastType === 'user'
        ? { type: 'user', message: { role: 'user', content: 'last words' } }
        : { type: 'progress', data: { type: 'hook_progress' }, toolUseID: 'x-last' };
      t.push({
        parentUuid: t.at(-1).uuid, isSidechain: false, userType: 'external-last', cwd: '/last/cwd',
        sessionId: 'sess-last', version: '9.9.9', gitBranch: 'last-branch', slug: 'last-slug',
        ...last, uuid: `u-last-${lastType}`, timestamp: '2026-01-02T00:00:00.000Z',
      });
      // A sub-agent line after it is not the template.
      t.push({ ...t.at(-1), uuid: 'u-side', isSidechain: true, cwd: '/side', sessionId: 'sess-side' });
      const before = structuredClone(t);
      for (const run of [
        () => cc.compactConversation(t, { model: OPUS, summarize: h.recordingSummarizer(h.summaryResponse('S')) }, {}),
        () => cc.autoCompactIfNeeded(t, { model: OPUS, config: LOW_THRESHOLD, summarize: h.recordingSummarizer(h.summaryResponse('S')) }, { consecutiveFailures: 0 }),
      ]) {
        const r = await run();
        const b = r.boundaryMarker ?? r.compactionResult?.boundaryMarker;
        assert.ok(b, `${lastType}: a boundary`);
        assert.deepStrictEqual(
          [b.userType, b.cwd, b.sessionId, b.version, b.gitBranch, b.slug],
          ['external-last', '/last/cwd', 'sess-last', '9.9.9', 'last-branch', 'last-slug'],
          `${lastType}: session fields from the last main-chain line`,
        );
      }
      assert.deepStrictEqual(t, before);
    }
  });

  test('transcript: a pinned line that is kept (keepLastUserMessage) is not added again, whatever fields a compaction does not read', async () => {
    const t = h.transcriptConversation({ rounds: 6 });
    const pending = {
      parentUuid: t.at(-1).uuid, isSidechain: false, userType: 'external', cwd: '/home/user/project', sessionId: 'sess-0001',
      version: '2.0.0', gitBranch: 'main', slug: 's', type: 'user', uuid: 'pending-pinned', timestamp: '2026-01-02T00:00:00.000Z',
      message: { role: 'user', content: 'PINNED-AND-KEPT: finish the migration.' },
      toolUseResult: { stdout: 'ui-only data' }, thinkingMetadata: { level: 'high' }, permissionMode: 'default',
    };
    t.push(pending);
    const r = await cc.compactConversation(t, { model: OPUS, pinned: [pending], summarize: h.recordingSummarizer(h.summaryResponse('S')) }, { keepLastUserMessage: true });
    assert.ok(r.messagesToKeep.includes(pending), 'kept');
    const post = cc.buildPostCompactMessages(r);
    assert.equal(JSON.stringify(post).split('PINNED-AND-KEPT').length - 1, 1, 'the pinned line is there exactly once');
    // Not kept: then it is added once, as the caller's own object.
    const r2 = await cc.compactConversation(t.slice(0, -1), { model: OPUS, pinned: [pending], summarize: h.recordingSummarizer(h.summaryResponse('S')) }, {});
    assert.ok(r2.summaryMessages.includes(pending), 'added as the caller\'s object');
  });

  test('transcript-shaped history: transcript output, chained lines, valid, resumable', async () => {
    const t = h.transcriptConversation({ rounds: 10 });
    const before = structuredClone(t);
    const summarize = h.recordingSummarizer(h.summaryResponse('TRANSCRIPT-SUMMARY'));
    const r = await cc.compactConversation(t, { model: OPUS, summarize, readFileState: new Map([['/src/x.rs', { content: 'fn x() {}', timestamp: 1 }]]) }, {});
    assert.deepStrictEqual(t, before);
    const pre = cc.tokenCountWithEstimation(t);
    assert.equal(r.preCompactTokenCount, pre);
    const lastMain = [...t].reverse().find((l) => !l.isSidechain && l.type !== 'progress');
    assert.equal(r.boundaryMarker.logicalParentUuid, lastMain.uuid, 'logicalParentUuid = last pre-compaction message');
    assert.equal(r.boundaryMarker.parentUuid, null);
    assert.equal(r.boundaryMarker.sessionId, 'sess-0001', 'session fields carried over');
    const sm = r.summaryMessages[0];
    assert.equal(sm.type, 'user');
    assert.equal(sm.isCompactSummary, true);
    assert.equal(sm.parentUuid, r.boundaryMarker.uuid);
    assert.match(sm.message.content, /TRANSCRIPT-SUMMARY/);
    assert.equal(r.attachments[0].type, 'attachment');
    assert.equal(r.attachments[0].attachment.path, '/src/x.rs');
    const post = cc.buildPostCompactMessages(r);
    h.assertValidForApi(post, before);
    // The whole file (old lines, then the new ones) resumes after the boundary.
    const jsonl = cc.serializeTranscript([...t, ...post]);
    const parsed = cc.parseTranscript(jsonl);
    assert.equal(cc.tokenCountWithEstimation(parsed), r.truePostCompactTokenCount);
    assert.equal(cc.tokenCountWithEstimation(post, { calibration: r.calibration }), r.truePostCompactTokenCount);
    assert.ok(r.truePostCompactTokenCount < pre);
    // The request: sidechain and progress lines are not sent; split responses merged.
    const req = summarize.calls[0].request;
    assert.doesNotMatch(JSON.stringify(req.messages), /side work/);
    assert.deepEqual(h.apiProblems(req.messages), []);
  });

  test('the real transcript cut before its compact_boundary compacts into a valid conversation', async () => {
    const L = h.loadLongTranscript();
    const before = structuredClone(L.before);
    const summary = L.summaryText;
    const r = await cc.compactConversation(L.before, {
      model: OPUS,
      summarize: async () => ({ content: [{ type: 'text', text: `<summary>${summary}</summary>` }], stop_reason: 'end_turn' }),
      readFileState: h.readFileStateFromLines(L.before),
    }, { isAutoCompact: true });
    assert.deepStrictEqual(L.before, before);
    assert.equal(r.trigger, 'auto');
    assert.equal(r.boundaryMarker.compactMetadata.trigger, 'auto');
    assert.ok(r.preCompactTokenCount > 150_000, `pre ${r.preCompactTokenCount}`);
    // The next request's size: Claude Code's own next request after this compaction was 36,081
    // tokens (system prompt and tools included, which the usage before taught).
    assert.ok(r.truePostCompactTokenCount < 60_000, `post ${r.truePostCompactTokenCount}`);
    assert.ok(r.calibration.overhead > 20_000, JSON.stringify(r.calibration));
    assert.ok(r.restoredFiles.length > 0 && r.restoredFiles.length <= 5);
    h.assertValidForApi(cc.buildPostCompactMessages(r), before);
    // Auto-compaction asks the model to carry on.
    assert.match(r.summaryMessages[0].message.content, /[Cc]arry on|[Cc]ontinue/);
  });

  test('skill_discovery / skill_listing attachments are not summarized', async () => {
    const t = h.transcriptConversation({ rounds: 3 });
    t.splice(1, 0, { type: 'attachment', uuid: 'att-1', parentUuid: t[0].uuid, isSidechain: false, attachment: { type: 'skill_listing', content: 'SKILL_LISTING_MARKER' } });
    t.splice(2, 0, { type: 'attachment', uuid: 'att-2', parentUuid: 'att-1', isSidechain: false, attachment: { type: 'skill_discovery', content: 'SKILL_DISCOVERY_MARKER' } });
    t.splice(3, 0, { type: 'attachment', uuid: 'att-3', parentUuid: 'att-2', isSidechain: false, attachment: { type: 'todo', content: 'TODO_MARKER' } });
    // The conversation goes on from the last attachment, as Claude Code chains them (a line
    // under the first prompt instead would make the attachments a branch left behind).
    for (let i = 4; i < t.length; i++) if (t[i].parentUuid === t[0].uuid) t[i] = { ...t[i], parentUuid: 'att-3' };
    const before = structuredClone(t);
    const summarize = h.recordingSummarizer();
    await cc.compactConversation(t, { model: OPUS, summarize }, {});
    const json = JSON.stringify(summarize.calls[0].request);
    assert.doesNotMatch(json, /SKILL_LISTING_MARKER|SKILL_DISCOVERY_MARKER/);
    assert.match(json, /TODO_MARKER/);
    assert.deepStrictEqual(t, before);
  });

  test('context announcements: plan, plan mode, async agents, tools, agents, MCP instructions', async () => {
    const r = await cc.compactConversation(h.apiConversation({ rounds: 6 }), {
      model: OPUS,
      summarize: h.recordingSummarizer(),
      plan: 'PLAN_MARKER step one',
      planMode: true,
      asyncAgents: [{ id: 'agent-9', description: 'ASYNC_AGENT_MARKER', status: 'running' }],
      discoveredTools: ['TOOL_MARKER_A', { name: 'TOOL_MARKER_B' }],
      agents: [{ name: 'AGENT_MARKER', description: 'reviews code' }],
      mcpInstructions: { server1: 'MCP_MARKER use carefully' },
    }, {});
    const json = JSON.stringify(r.attachments);
    for (const m of ['PLAN_MARKER', 'ASYNC_AGENT_MARKER', 'TOOL_MARKER_A', 'TOOL_MARKER_B', 'AGENT_MARKER', 'MCP_MARKER']) assert.match(json, new RegExp(m));
    assert.match(json, /[Pp]lan mode/);
    assert.deepEqual(r.boundaryMarker.compactMetadata.preCompactDiscoveredTools, ['TOOL_MARKER_A', 'TOOL_MARKER_B']);
    h.assertValidForApi(cc.buildPostCompactMessages(r));
  });

  test('recompaction: only what follows the last boundary is summarized; the old summary is part of it', async () => {
    const first = await cc.compactConversation(h.apiConversation({ rounds: 6 }), { model: OPUS, summarize: h.recordingSummarizer(h.summaryResponse('FIRST SUMMARY')) }, {});
    const later = h.apiConversation({ rounds: 6, prefix: 'b' }).map((m) => JSON.parse(JSON.stringify(m).replaceAll('Q', 'R')));
    const next = [...cc.buildPostCompactMessages(first), ...later];
    const before = structuredClone(next);
    const summarize = h.recordingSummarizer(h.summaryResponse('SECOND SUMMARY'));
    const r = await cc.compactConversation(next, { model: OPUS, summarize }, {});
    const json = JSON.stringify(summarize.calls[0].request.messages);
    assert.match(json, /FIRST SUMMARY/);
    assert.match(json, /R0:/);
    assert.doesNotMatch(json, /Q0:/);
    assert.equal(r.preCompactTokenCount, cc.tokenCountWithEstimation(next));
    h.assertValidForApi(cc.buildPostCompactMessages(r), before);
    assert.deepStrictEqual(next, before);
  });

  test('a history that starts with an assistant message gets a user message first in the request', async () => {
    const msgs = h.apiConversation({ rounds: 4 }).slice(1);
    const summarize = h.recordingSummarizer();
    const r = await cc.compactConversation(msgs, { model: OPUS, summarize }, {});
    assert.equal(summarize.calls[0].request.messages[0].role, 'user');
    assert.deepEqual(h.apiProblems(summarize.calls[0].request.messages), []);
    h.assertValidForApi(cc.buildPostCompactMessages(r));
  });

  test('options and tracking are optional', async () => {
    const r = await cc.compactConversation(h.apiConversation({ rounds: 4 }), { model: OPUS, summarize: h.recordingSummarizer() });
    assert.equal(r.trigger, 'manual');
    const out = await cc.autoCompactIfNeeded(h.apiConversation({ rounds: 4 }), { model: OPUS, summarize: h.recordingSummarizer() });
    assert.deepEqual(out, { wasCompacted: false, consecutiveFailures: 0, skipped: 'belowThreshold' });
  });

  test('bad arguments reject with INVALID_ARGUMENT and touch nothing', async () => {
    const s = setup({ rounds: 3 });
    await h.rejectsWithCode(cc.compactConversation(s.msgs, { model: OPUS }, {}), 'INVALID_ARGUMENT');
    await h.rejectsWithCode(cc.compactConversation(s.msgs, { summarize: async () => 'x' }, {}), 'INVALID_ARGUMENT');
    await h.rejectsWithCode(cc.compactConversation('nope', { model: OPUS, summarize: async () => 'x' }, {}), 'INVALID_ARGUMENT');
    await h.rejectsWithCode(cc.compactConversation(s.msgs, { model: OPUS, summarize: async () => 'x', signal: {} }, {}), 'INVALID_ARGUMENT');
    assertUntouched(s);
  });

  test('disableCompact → COMPACT_DISABLED; nothing to summarize → NOTHING_TO_COMPACT', async () => {
    const s = setup({ rounds: 3 });
    const summarize = h.recordingSummarizer();
    await h.rejectsWithCode(cc.compactConversation(s.msgs, { model: OPUS, summarize, config: { disableCompact: true }, readFileState: s.rfs }, {}), 'COMPACT_DISABLED');
    await h.rejectsWithCode(cc.compactConversation([{ type: 'progress', uuid: 'p', data: {} }], { model: OPUS, summarize }, {}), 'NOTHING_TO_COMPACT');
    assert.equal(summarize.calls.length, 0);
    assertUntouched(s);
  });
});

// ---------------------------------------------------------------------------------------------
describe('prompt too long (SPEC §8)', () => {
  /** A summarizer that rejects requests above `limit` tokens (JSON chars / 4) like the API. */
  const strict = (limit, o = {}) => {
    const sizes = [];
    const errors = [];
    const summarize = h.recordingSummarizer((request) => {
      const n = h.requestTokens(request);
      sizes.push(n);
      if (n > limit) {
        const e = h.ptlError(o.reportedActual?.(n) ?? n, limit);
        errors.push(e);
        throw e;
      }
      return h.summaryResponse('fits now');
    });
    return { summarize, sizes, errors };
  };

  test('succeeds within 3 retries, dropping the oldest rounds and keeping the latest', async () => {
    const s = setup({ rounds: 12 });
    const full = h.requestTokens({ messages: s.msgs });
    const { summarize, sizes } = strict(Math.floor(full * 0.5));
    const r = await cc.compactConversation(s.msgs, { model: SONNET, summarize, readFileState: s.rfs }, {});
    assert.ok(r.ptlRetries >= 1 && r.ptlRetries <= 3, `ptlRetries ${r.ptlRetries}`);
    assert.equal(summarize.calls.length, r.ptlRetries + 1);
    assert.ok(summarize.calls.length <= 4);
    for (let i = 1; i < sizes.length; i++) assert.ok(sizes[i] < sizes[i - 1], `request ${i} smaller: ${sizes}`);
    const last = JSON.stringify(summarize.calls.at(-1).request.messages);
    assert.match(last, /Q11:/, 'the latest round is kept');
    assert.match(last, /A11:/);
    assert.doesNotMatch(last, /Q0:/, 'the oldest round is dropped');
    assert.equal(summarize.calls.at(-1).request.messages[0].role, 'user', 'a user message first after truncation');
    assert.deepEqual(h.apiProblems(summarize.calls.at(-1).request.messages), []);
    assert.deepStrictEqual(s.msgs, s.before);
    h.assertValidForApi(cc.buildPostCompactMessages(r), s.before);
  });

  test('exactly 3 retries when the error understates the gap (one round dropped per retry)', async () => {
    const s = setup({ rounds: 12 });
    let calls = 0;
    const sizes = [];
    const summarize = async (request) => {
      calls++;
      sizes.push(h.requestTokens(request));
      if (calls <= 3) throw h.ptlError(100_001, 100_000); // gap 1: the least is dropped
      return h.summaryResponse();
    };
    const r = await cc.compactConversation(s.msgs, { model: SONNET, summarize }, {});
    assert.equal(r.ptlRetries, 3);
    assert.equal(calls, 4);
    for (let i = 1; i < sizes.length; i++) assert.ok(sizes[i] < sizes[i - 1], `sizes ${sizes}`);
    assert.deepStrictEqual(s.msgs, s.before);
  });

  test('gives up with PROMPT_TOO_LONG after MAX_PTL_RETRIES = 3 (4 requests), the API error as cause', async () => {
    const s = setup({ rounds: 12 });
    const thrown = [];
    const summarize = async () => {
      const e = h.ptlError(100_001, 100_000);
      thrown.push(e);
      throw e;
    };
    const err = await h.rejectsWithCode(cc.compactConversation(s.msgs, { model: SONNET, summarize, readFileState: s.rfs }, {}), 'PROMPT_TOO_LONG');
    assert.equal(thrown.length, 4);
    assert.strictEqual(err.cause, thrown.at(-1));
    assertUntouched(s, 'PTL exhausted');
  });

  test('an impossibly small limit fails with PROMPT_TOO_LONG; the original error is the cause', async () => {
    const s = setup({ rounds: 12 });
    const { summarize, errors } = strict(10);
    const err = await h.rejectsWithCode(cc.compactConversation(s.msgs, { model: SONNET, summarize, readFileState: s.rfs }, {}), 'PROMPT_TOO_LONG');
    assert.ok(summarize.calls.length >= 2 && summarize.calls.length <= 4, `${summarize.calls.length} requests`);
    assert.strictEqual(err.cause, errors.at(-1));
    assert.equal(err.cause.status, 400);
    assert.deepEqual(err.cause.error, h.ptlBody(h.requestTokens(summarize.calls.at(-1).request), 10));
    assert.match(err.message, /too long/);
    assertUntouched(s, 'PTL impossible');
  });

  test('the real transcript against a 40K-token limit: fits within 3 retries, the latest turns kept', async () => {
    const L = h.loadLongTranscript();
    const before = structuredClone(L.before);
    const { summarize, sizes } = strict(40_000);
    const r = await cc.compactConversation(L.before, { model: OPUS, summarize }, {});
    assert.ok(r.ptlRetries >= 1 && r.ptlRetries <= 3, `ptlRetries ${r.ptlRetries}`);
    assert.ok(sizes.at(-1) <= 40_000);
    for (let i = 1; i < sizes.length; i++) assert.ok(sizes[i] < sizes[i - 1], `sizes ${sizes}`);
    const first = summarize.calls[0].request.messages;
    const last = summarize.calls.at(-1).request.messages;
    assert.deepEqual(last.at(-2), first.at(-2), 'the latest turn is sent unchanged');
    assert.deepEqual(last.at(-1), first.at(-1), 'the instruction stays last');
    assert.equal(last[0].role, 'user');
    assert.deepStrictEqual(L.before, before);
  });

  test('a PTL answer given as a plain API error body (no Error object) is understood too', async () => {
    const s = setup({ rounds: 12 });
    let n = 0;
    const summarize = async () => {
      n++;
      if (n === 1) throw { status: 400, error: h.ptlBody(30_000, 5_000) };
      return h.summaryResponse();
    };
    const r = await cc.compactConversation(s.msgs, { model: SONNET, summarize }, {});
    assert.equal(r.ptlRetries, 1);
  });
});

// ---------------------------------------------------------------------------------------------
describe('unusable summaries are failures: nothing committed, counted by the circuit breaker', () => {
  const bad = {
    SUMMARY_TRUNCATED: () => h.summaryResponse('cut off in the mid', { stopReason: 'max_tokens' }),
    EMPTY_SUMMARY: () => ({ content: [], stop_reason: 'end_turn' }),
    COMPACTION_NOT_SMALLER: () => h.summaryResponse(h.filler(400_000)),
  };

  for (const [code, answer] of Object.entries(bad)) {
    test(`compactConversation → ${code}`, async () => {
      const s = setup({ rounds: 12 });
      const events = [];
      const post = [];
      const ctx = {
        model: SONNET, summarize: async () => answer(), readFileState: s.rfs,
        loadedNestedMemoryPaths: new Set(['/CLAUDE.md']), onProgress: (e) => events.push(e),
        hooks: { postCompact: (x) => post.push(x) },
      };
      await h.rejectsWithCode(cc.compactConversation(s.msgs, ctx, {}), code);
      assertUntouched(s, code);
      assert.equal(ctx.loadedNestedMemoryPaths.size, 1, 'loaded memory paths not cleared');
      assert.equal(post.length, 0, 'PostCompact does not run for a failed compaction');
      assert.ok(!events.some((e) => e.phase === 'done'));
    });
  }

  test('EMPTY_SUMMARY also for an empty string and for whitespace', async () => {
    for (const answer of ['', '   \n ', { content: [{ type: 'text', text: '' }], stop_reason: 'end_turn' }]) {
      const s = setup({ rounds: 4 });
      await h.rejectsWithCode(cc.compactConversation(s.msgs, { model: SONNET, summarize: async () => answer, readFileState: s.rfs }, {}), 'EMPTY_SUMMARY', JSON.stringify(answer));
      assertUntouched(s);
    }
  });

  for (const [code, answer] of Object.entries(bad)) {
    test(`autoCompactIfNeeded with ${code}: reported, not thrown; failures +1; nothing committed`, async () => {
      const s = setup({ rounds: 12 });
      const summarize = h.recordingSummarizer(answer);
      const ctx = { model: OPUS, summarize, readFileState: s.rfs, config: LOW_THRESHOLD };
      const out = await cc.autoCompactIfNeeded(s.msgs, ctx, { consecutiveFailures: 1 });
      assert.equal(out.wasCompacted, false);
      assert.equal(out.consecutiveFailures, 2);
      assert.equal(out.compactionResult, undefined);
      assert.ok(out.error instanceof Error);
      assert.equal(out.error.code, code);
      assert.equal(summarize.calls.length, 1);
      assertUntouched(s, code);
    });
  }

  test('3 consecutive failures open the breaker; the 4th call does not summarize; a success resets to 0', async () => {
    const s = setup({ rounds: 12 });
    const summarize = h.recordingSummarizer(bad.SUMMARY_TRUNCATED);
    const ctx = { model: OPUS, summarize, readFileState: s.rfs, config: LOW_THRESHOLD };
    let tracking = { consecutiveFailures: 0 };
    for (let i = 1; i <= 3; i++) {
      const out = await cc.autoCompactIfNeeded(s.msgs, ctx, tracking);
      assert.equal(out.consecutiveFailures, i);
      assert.equal(out.wasCompacted, false);
      tracking = { consecutiveFailures: out.consecutiveFailures };
    }
    assert.equal(summarize.calls.length, 3);
    const fourth = await cc.autoCompactIfNeeded(s.msgs, ctx, tracking);
    assert.equal(summarize.calls.length, 3, 'the summarizer is not called with the breaker open');
    assert.deepEqual(fourth, { wasCompacted: false, consecutiveFailures: 3, skipped: 'circuitBreakerOpen' });
    assertUntouched(s);
    // Even a working summarizer is not tried while the breaker is open.
    const good = h.recordingSummarizer();
    const open = await cc.autoCompactIfNeeded(s.msgs, { ...ctx, summarize: good }, { consecutiveFailures: 7 });
    assert.equal(open.skipped, 'circuitBreakerOpen');
    assert.equal(good.calls.length, 0);
    // A success resets the count.
    const ok = await cc.autoCompactIfNeeded(s.msgs, { ...ctx, summarize: good }, { consecutiveFailures: 2 });
    assert.equal(ok.wasCompacted, true);
    assert.equal(ok.consecutiveFailures, 0);
    assert.equal(ok.compactionResult.trigger, 'auto');
    assert.equal(s.rfs.size, 0, 'committed: the read-file state is cleared');
    h.assertValidForApi(cc.buildPostCompactMessages(ok.compactionResult), s.before);
  });

  test('below the threshold: skipped, nothing called, failures kept', async () => {
    const s = setup({ rounds: 2 });
    const summarize = h.recordingSummarizer();
    const out = await cc.autoCompactIfNeeded(s.msgs, { model: OPUS, summarize }, { consecutiveFailures: 1 });
    assert.deepEqual(out, { wasCompacted: false, consecutiveFailures: 1, skipped: 'belowThreshold' });
    assert.equal(summarize.calls.length, 0);
  });
});

// ---------------------------------------------------------------------------------------------
describe('abort: ABORTED at every step, input unchanged', () => {
  const T = { timeout: 20_000 };

  test('aborted before the call: the summarizer is never called', T, async () => {
    const s = setup({ rounds: 6 });
    const ac = new AbortController();
    ac.abort();
    const summarize = h.recordingSummarizer();
    const pre = [];
    await h.rejectsWithCode(cc.compactConversation(s.msgs, { model: OPUS, summarize, signal: ac.signal, readFileState: s.rfs, hooks: { preCompact: (x) => pre.push(x) } }, {}), 'ABORTED');
    assert.equal(summarize.calls.length, 0);
    assert.equal(pre.length, 0);
    assertUntouched(s);
  });

  test('during the summarizer, even one that ignores the signal and never resolves', T, async () => {
    const s = setup({ rounds: 6 });
    const ac = new AbortController();
    const entered = h.deferred();
    let seen;
    const summarize = (request, options) => {
      seen = options;
      entered.resolve();
      return h.never();
    };
    const p = cc.compactConversation(s.msgs, { model: OPUS, summarize, signal: ac.signal, readFileState: s.rfs }, {});
    await entered.promise;
    assert.ok(seen.signal instanceof AbortSignal && !seen.signal.aborted, 'the summarizer is given a signal');
    ac.abort();
    assert.ok(seen.signal.aborted, 'it aborts with the caller\'s signal');
    await h.rejectsWithCode(p, 'ABORTED');
    assertUntouched(s);
  });

  // Where there is no setImmediate (browsers, Deno, workers), the pauses between a
  // compaction's steps are MessageChannel messages, not setTimeout 0 (which browsers clamp to
  // 4 ms after five nested levels): a compaction completes, and an abort from a timer lands.
  test('without setImmediate: pauses are MessageChannel messages; a timer\'s abort still lands', T, async () => {
    const saved = globalThis.setImmediate;
    const RealChannel = globalThis.MessageChannel;
    let channels = 0;
    globalThis.MessageChannel = class extends RealChannel {
      constructor() {
        super();
        channels++;
      }
    };
    delete globalThis.setImmediate;
    try {
      const s = setup({ rounds: 6 });
      const r = await cc.compactConversation(s.msgs, { model: OPUS, summarize: h.recordingSummarizer(h.summaryResponse('S')), readFileState: s.rfs }, {});
      assert.match(JSON.stringify(r.summaryMessages[0]), /S/);
      assert.ok(channels >= 5, `the pauses used MessageChannel (${channels})`);
      const s2 = setup({ rounds: 6 });
      const ac = new AbortController();
      const summarize = () => new Promise((res) => setTimeout(() => res(h.summaryResponse('late')), 50));
      setTimeout(() => ac.abort(), 10);
      await h.rejectsWithCode(cc.compactConversation(s2.msgs, { model: OPUS, summarize, signal: ac.signal, readFileState: s2.rfs }, {}), 'ABORTED');
      assertUntouched(s2);
    } finally {
      globalThis.setImmediate = saved;
      globalThis.MessageChannel = RealChannel;
    }
  });

  test('abort with a custom reason still reports ABORTED', T, async () => {
    const s = setup({ rounds: 6 });
    const ac = new AbortController();
    const entered = h.deferred();
    const p = cc.compactConversation(s.msgs, { model: OPUS, summarize: () => (entered.resolve(), h.never()), signal: ac.signal, readFileState: s.rfs }, {});
    await entered.promise;
    ac.abort(new Error('user pressed Esc'));
    await h.rejectsWithCode(p, 'ABORTED');
    assertUntouched(s);
  });

  for (const hook of ['preCompact', 'sessionStart', 'postCompact']) {
    test(`during the ${hook} hook`, T, async () => {
      const s = setup({ rounds: 6 });
      const ac = new AbortController();
      const entered = h.deferred();
      const summarize = h.recordingSummarizer();
      const hooks = { [hook]: () => (entered.resolve(), h.never()) };
      const p = cc.compactConversation(s.msgs, { model: OPUS, summarize, signal: ac.signal, readFileState: s.rfs, hooks }, {});
      await entered.promise;
      ac.abort();
      await h.rejectsWithCode(p, 'ABORTED');
      if (hook === 'preCompact') assert.equal(summarize.calls.length, 0);
      assertUntouched(s, hook);
    });
  }

  test('during readFile', T, async () => {
    const s = setup({ rounds: 6 });
    const ac = new AbortController();
    const entered = h.deferred();
    const readFile = () => (entered.resolve(), h.never());
    const p = cc.compactConversation(s.msgs, { model: OPUS, summarize: h.recordingSummarizer(), signal: ac.signal, readFileState: s.rfs, readFile }, {});
    await entered.promise;
    ac.abort();
    await h.rejectsWithCode(p, 'ABORTED');
    assertUntouched(s);
  });

  test('during the backoff wait after a transient error', T, async () => {
    const s = setup({ rounds: 6 });
    const ac = new AbortController();
    const retrying = h.deferred();
    const onProgress = (e) => {
      if (e.phase === 'retryTransient') retrying.resolve();
    };
    const p = cc.compactConversation(s.msgs, { model: OPUS, summarize: async () => { throw h.overloadedError(); }, signal: ac.signal, readFileState: s.rfs, onProgress }, { retryBaseMs: 600_000 });
    await retrying.promise;
    ac.abort();
    await h.rejectsWithCode(p, 'ABORTED');
    assertUntouched(s);
  });

  test('autoCompactIfNeeded reports an abort as error ABORTED, and sessionMemory read can be aborted', T, async () => {
    const s = setup({ rounds: 12 });
    const ac = new AbortController();
    const entered = h.deferred();
    const summarize = h.recordingSummarizer();
    const p = cc.autoCompactIfNeeded(s.msgs, {
      model: OPUS, summarize, signal: ac.signal, readFileState: s.rfs, config: LOW_THRESHOLD,
      sessionMemory: () => (entered.resolve(), h.never()),
    }, {});
    await entered.promise;
    ac.abort();
    const out = await p;
    assert.equal(out.wasCompacted, false);
    assert.equal(out.error.code, 'ABORTED');
    assert.equal(summarize.calls.length, 0, 'no full compaction after an abort');
    assertUntouched(s);
  });
});

// ---------------------------------------------------------------------------------------------
describe('transient summarizer failures', () => {
  test('529 twice then success → transientRetries 2', async () => {
    const s = setup({ rounds: 6 });
    const events = [];
    const summarize = h.recordingSummarizer((req, opts, n) => {
      if (n <= 2) throw h.overloadedError();
      return h.summaryResponse();
    });
    const r = await cc.compactConversation(s.msgs, { model: OPUS, summarize, onProgress: (e) => events.push(e) }, { retryBaseMs: 1 });
    assert.equal(r.transientRetries, 2);
    assert.equal(r.ptlRetries, 0);
    assert.equal(summarize.calls.length, 3);
    assert.deepEqual(summarize.calls[2].request, summarize.calls[0].request, 'the same request is retried');
    assert.equal(events.filter((e) => e.phase === 'retryTransient').length, 2);
    assert.deepStrictEqual(s.msgs, s.before);
  });

  test('the backoff follows options.retryBaseMs (the delay the pipeline reports)', async () => {
    const events = [];
    await cc.compactConversation(h.apiConversation({ rounds: 4 }), {
      model: OPUS,
      onProgress: (e) => events.push(e),
      summarize: h.recordingSummarizer((req, opts, n) => {
        if (n === 1) throw h.overloadedError();
        return h.summaryResponse();
      }),
    }, { retryBaseMs: 1 });
    const waits = events.filter((e) => e.phase === 'retryTransient').map((e) => Number(/waiting (\d+) ms/.exec(e.detail)?.[1]));
    assert.equal(waits.length, 1);
    assert.ok(waits[0] <= 1, `waited ${waits[0]} ms`);
  });

  test('a retryAfterMs on the error is honoured instead of the backoff', async () => {
    const events = [];
    const r = await cc.compactConversation(h.apiConversation({ rounds: 4 }), {
      model: OPUS,
      onProgress: (e) => events.push(e),
      summarize: h.recordingSummarizer((req, opts, n) => {
        if (n === 1) throw Object.assign(h.overloadedError(), { retryAfterMs: 3 });
        return h.summaryResponse();
      }),
    }, { retryBaseMs: 100_000 });
    assert.equal(r.transientRetries, 1);
    assert.match(events.find((e) => e.phase === 'retryTransient').detail, /waiting 3 ms/);
  });

  test('autoCompactIfNeeded takes retryBaseMs from the context', async () => {
    const s = setup({ rounds: 12 });
    const summarize = h.recordingSummarizer((req, opts, n) => {
      if (n === 1) throw Object.assign(new Error('fetch failed'), { name: 'TypeError' });
      if (n === 2) throw Object.assign(new Error('rate limited'), { status: 429 });
      return h.summaryResponse();
    });
    const out = await cc.autoCompactIfNeeded(s.msgs, { model: OPUS, summarize, config: LOW_THRESHOLD, retryBaseMs: 1 }, {});
    assert.equal(out.wasCompacted, true, out.error?.message);
    assert.equal(out.compactionResult.transientRetries, 2);
  });

  test('retriesExhausted errors are not retried again', async () => {
    const s = setup({ rounds: 6 });
    const e = h.overloadedError({ retriesExhausted: true });
    const summarize = h.recordingSummarizer(() => {
      throw e;
    });
    const err = await h.rejectsWithCode(cc.compactConversation(s.msgs, { model: OPUS, summarize, readFileState: s.rfs }, { retryBaseMs: 1 }), 'SUMMARIZER_FAILED');
    assert.equal(summarize.calls.length, 1);
    assert.strictEqual(err.cause, e);
    assertUntouched(s);
  });

  test('at most 3 transient retries, then SUMMARIZER_FAILED', async () => {
    const s = setup({ rounds: 6 });
    const summarize = h.recordingSummarizer(() => {
      throw h.overloadedError();
    });
    const err = await h.rejectsWithCode(cc.compactConversation(s.msgs, { model: OPUS, summarize, readFileState: s.rfs }, { retryBaseMs: 1 }), 'SUMMARIZER_FAILED');
    assert.equal(summarize.calls.length, 4);
    assert.equal(err.cause.status, 529);
    assertUntouched(s);
  });

  test('a non-transient error (401) is not retried', async () => {
    const s = setup({ rounds: 6 });
    const summarize = h.recordingSummarizer(() => {
      throw Object.assign(new Error('invalid x-api-key'), { status: 401 });
    });
    await h.rejectsWithCode(cc.compactConversation(s.msgs, { model: OPUS, summarize, readFileState: s.rfs }, { retryBaseMs: 1 }), 'SUMMARIZER_FAILED');
    assert.equal(summarize.calls.length, 1);
    assertUntouched(s);
  });

  test('a summarizer that throws synchronously or resolves to garbage fails cleanly', async () => {
    for (const summarize of [
      () => {
        throw new TypeError('boom');
      },
      async () => 42,
      async () => ({ no: 'content' }),
    ]) {
      const s = setup({ rounds: 4 });
      await h.rejectsWithCode(cc.compactConversation(s.msgs, { model: OPUS, summarize, readFileState: s.rfs }, { retryBaseMs: 1 }), 'SUMMARIZER_FAILED');
      assertUntouched(s);
    }
  });
});

// ---------------------------------------------------------------------------------------------
describe('restoration (SPEC §9)', () => {
  test('at most 5 files, ≤ 5,000 tokens each, most recent first, binary skipped, state cleared', async () => {
    const s = setup({ rounds: 30 });
    const rfs = new Map([
      ['/old1.ts', { content: 'const old1 = 1;\n', timestamp: 1 }],
      ['/old2.ts', { content: 'const old2 = 2;\n', timestamp: 2 }],
      ['/big.ts', { content: h.filler(120_000), timestamp: 9 }],
      ['/bin.dat', { content: 'ELF\u0000\u0001\u0002\u0000\u0000binary\u0000\u0000\u0000', timestamp: 10 }],
      ['/image.png', { content: 'PNG looks like text', timestamp: 11 }],
      ['/mid1.ts', { content: 'const mid1 = 1;\n', timestamp: 5 }],
      ['/mid2.ts', { content: 'const mid2 = 2;\n', timestamp: 6 }],
      ['/mid3.ts', { content: 'const mid3 = 3;\n', timestamp: 7 }],
      ['/new.ts', { content: 'const newest = 1;\n', timestamp: 12 }],
    ]);
    const r = await cc.compactConversation(s.msgs, { model: OPUS, summarize: h.recordingSummarizer(), readFileState: rfs }, {});
    assert.deepEqual(r.restoredFiles.map((f) => f.path), ['/new.ts', '/big.ts', '/mid3.ts', '/mid2.ts', '/mid1.ts']);
    for (const f of r.restoredFiles) {
      assert.ok(f.tokens <= 5_000, `${f.path}: ${f.tokens}`);
      assert.equal(f.truncated, f.path === '/big.ts');
    }
    assert.ok(r.restoredFiles.reduce((n, f) => n + f.tokens, 0) <= 50_000);
    const big = r.attachments.find((a) => a.content.includes('/big.ts'));
    assert.ok(cc.roughTokenCountEstimation(big.content) <= 5_100, 'the attachment is about the file\'s budget');
    assert.doesNotMatch(JSON.stringify(r.attachments), /binary|PNG looks/);
    assert.equal(rfs.size, 0, 'cleared after success');
    h.assertValidForApi(cc.buildPostCompactMessages(r));
  });

  test('readFile is used for fresh content when given; unreadable files are skipped', async () => {
    const rfs = fileState(4);
    const asked = [];
    const readFile = async (path) => {
      asked.push(path);
      if (path.endsWith('f2.ts')) throw new Error('ENOENT');
      if (path.endsWith('f1.ts')) return undefined;
      return `FRESH ${path}`;
    };
    const r = await cc.compactConversation(h.apiConversation({ rounds: 4 }), { model: OPUS, summarize: h.recordingSummarizer(), readFileState: rfs, readFile }, {});
    assert.deepEqual(asked.sort(), ['/repo/src/f1.ts', '/repo/src/f2.ts', '/repo/src/f3.ts', '/repo/src/f4.ts']);
    assert.deepEqual(r.restoredFiles.map((f) => f.path), ['/repo/src/f4.ts', '/repo/src/f3.ts']);
    const json = JSON.stringify(r.attachments);
    assert.match(json, /FRESH \/repo\/src\/f4.ts/);
    assert.doesNotMatch(json, /export const f4/, 'not the snapshot content');
  });

  test('the state snapshot is taken at the start: entries added meanwhile are not restored and stay (only what was read is cleared); plain objects work', async () => {
    const state = { '/a.ts': { content: 'const a = 1;\n', timestamp: 1 } };
    const r = await cc.compactConversation(h.apiConversation({ rounds: 4 }), {
      model: OPUS,
      readFileState: state,
      summarize: async () => {
        state['/late.ts'] = { content: 'late', timestamp: 99 };
        return h.summaryResponse();
      },
    }, {});
    assert.deepEqual(r.restoredFiles.map((f) => f.path), ['/a.ts']);
    // The file read during the summary request stays (hostile12 H5); what the compaction read goes.
    assert.deepEqual(Object.keys(state), ['/late.ts']);
  });

  test('loaded nested memory paths are cleared, sent skill names are not', async () => {
    const loaded = new Set(['/CLAUDE.md', '/src/CLAUDE.md']);
    const sent = new Set(['skill-a']);
    await cc.compactConversation(h.apiConversation({ rounds: 4 }), {
      model: OPUS, summarize: h.recordingSummarizer(), loadedNestedMemoryPaths: loaded, sentSkillNames: sent,
    }, {});
    assert.equal(loaded.size, 0);
    assert.deepEqual([...sent], ['skill-a']);
  });

  test('invoked skills: ≤ 5,000 tokens each, ≤ 25,000 in total, head kept', async () => {
    const skills = new Map();
    for (let i = 0; i < 7; i++) skills.set(`skill-${i}`, `SKILL-${i}-HEAD ` + h.filler(32_000, i));
    const r = await cc.compactConversation(h.apiConversation({ rounds: 60 }), { model: OPUS, summarize: h.recordingSummarizer(), invokedSkills: skills }, {});
    assert.ok(r.restoredSkills.length >= 5);
    let total = 0;
    for (const sk of r.restoredSkills) {
      assert.ok(sk.tokens <= 5_000, `${sk.name}: ${sk.tokens}`);
      assert.equal(sk.truncated, true);
      total += sk.tokens;
    }
    assert.ok(total <= 25_000, `total ${total}`);
    const json = JSON.stringify(r.attachments);
    for (const sk of r.restoredSkills) assert.match(json, new RegExp(`SKILL-${sk.name.slice(6)}-HEAD`));
    // Small skills come back whole.
    const small = await cc.compactConversation(h.apiConversation({ rounds: 4 }), {
      model: OPUS, summarize: h.recordingSummarizer(), invokedSkills: [{ name: 'tiny', content: 'Do the tiny thing.' }],
    }, {});
    assert.deepEqual(small.restoredSkills.map((x) => [x.name, x.truncated]), [['tiny', false]]);
  });

  test('files whose content is already in the kept messages are not restored again', async () => {
    const msgs = h.apiConversationOfTokens(90_000);
    const lastResult = msgs[msgs.length - 2].content[0];
    const kept = lastResult.content.replace(/^ +1→[^\n]*\n/, '');
    const rfs = new Map([
      ['/kept.rs', { content: kept, timestamp: 5 }],
      ['/other.rs', { content: 'fn other() {}\n', timestamp: 1 }],
    ]);
    const r = await cc.trySessionMemoryCompaction(msgs, { model: OPUS, sessionMemory: 'memory', readFileState: rfs });
    assert.ok(r.messagesToKeep.includes(msgs[msgs.length - 2]));
    assert.deepEqual(r.restoredFiles.map((f) => f.path), ['/other.rs']);
  });
});

// ---------------------------------------------------------------------------------------------
describe('hooks (SPEC §15)', () => {
  const spyHooks = () => {
    const calls = { preCompact: [], sessionStart: [], postCompact: [] };
    return {
      calls,
      hooks: {
        preCompact: (x) => void calls.preCompact.push(x),
        sessionStart: (x) => void calls.sessionStart.push(x),
        postCompact: (x) => void calls.postCompact.push(x),
      },
    };
  };

  test('manual: PreCompact once with {trigger, customInstructions, preTokens, threshold, window}; PostCompact with the summary and counts', async () => {
    const s = setup({ rounds: 8 });
    const { calls, hooks } = spyHooks();
    const r = await cc.compactConversation(s.msgs, { model: OPUS, summarize: h.recordingSummarizer(h.summaryResponse('HOOKED')), hooks }, { customInstructions: 'focus on tests' });
    assert.equal(calls.preCompact.length, 1);
    const p = calls.preCompact[0];
    assert.equal(p.trigger, 'manual');
    assert.equal(p.customInstructions, 'focus on tests');
    assert.equal(p.preTokens, cc.tokenCountWithEstimation(s.msgs));
    assert.equal(p.threshold, cc.getAutoCompactThreshold(OPUS));
    assert.equal(p.window, cc.getContextWindowForModel(OPUS));
    assert.deepEqual(calls.sessionStart, [{ source: 'compact', model: OPUS }]);
    assert.equal(calls.postCompact.length, 1);
    const q = calls.postCompact[0];
    assert.equal(q.trigger, 'manual');
    assert.equal(q.compactSummary, 'HOOKED');
    assert.equal(q.preTokens, r.preCompactTokenCount);
    assert.equal(q.postTokens, r.truePostCompactTokenCount);
  });

  test('auto: PreCompact exactly once when session memory fails and full compaction runs', async () => {
    for (const sessionMemory of [undefined, async () => { throw new Error('memory store down'); }, '   ']) {
      const s = setup({ rounds: 12 });
      const { calls, hooks } = spyHooks();
      const summarize = h.recordingSummarizer();
      const out = await cc.autoCompactIfNeeded(s.msgs, { model: OPUS, summarize, hooks, sessionMemory, config: LOW_THRESHOLD }, {});
      assert.equal(out.wasCompacted, true, out.error?.message);
      assert.equal(out.compactionResult.fromSessionMemory, false);
      assert.equal(summarize.calls.length, 1);
      assert.equal(calls.preCompact.length, 1, 'PreCompact once');
      const p = calls.preCompact[0];
      assert.equal(p.trigger, 'auto');
      assert.ok(p.customInstructions == null);
      assert.equal(p.preTokens, cc.tokenCountWithEstimation(s.msgs));
      assert.equal(p.threshold, 9_000);
      assert.equal(p.window, 200_000);
      assert.equal(calls.sessionStart.length, 1);
      assert.equal(calls.postCompact.length, 1);
      assert.equal(calls.postCompact[0].trigger, 'auto');
    }
  });

  test('auto: PreCompact exactly once when session memory succeeds (no summarizer call)', async () => {
    const msgs = h.apiConversationOfTokens(90_000);
    const { calls, hooks } = spyHooks();
    const summarize = h.recordingSummarizer();
    const out = await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize, hooks, sessionMemory: 'the memory', config: { autoCompactPctOverride: 40 } }, {});
    assert.equal(out.wasCompacted, true, out.error?.message);
    assert.equal(out.compactionResult.fromSessionMemory, true);
    assert.equal(summarize.calls.length, 0);
    assert.equal(calls.preCompact.length, 1);
    assert.equal(calls.preCompact[0].trigger, 'auto');
    assert.equal(calls.postCompact.length, 1);
    assert.equal(calls.postCompact[0].compactSummary, 'the memory');
  });

  test('reactive: PreCompact exactly once', async () => {
    const s = setup({ rounds: 12 });
    const { calls, hooks } = spyHooks();
    const out = await cc.reactiveCompact(s.msgs, { model: OPUS, summarize: h.recordingSummarizer(), hooks }, h.ptlError(210_000, 200_000), { turnId: 'turn-1' });
    assert.ok(out.compactionResult);
    assert.equal(calls.preCompact.length, 1);
    assert.equal(calls.preCompact[0].trigger, 'auto');
    assert.ok('customInstructions' in calls.preCompact[0]);
    assert.equal(calls.preCompact[0].preTokens, cc.tokenCountWithEstimation(s.msgs));
    assert.equal(calls.postCompact.length, 1);
  });

  test('throwing hooks are reported in hookErrors and compaction succeeds', async () => {
    const s = setup({ rounds: 8 });
    const hooks = {
      preCompact: () => {
        throw new Error('pre boom');
      },
      sessionStart: async () => {
        throw new Error('start boom');
      },
      postCompact: () => Promise.reject(new Error('post boom')),
    };
    const r = await cc.compactConversation(s.msgs, { model: OPUS, summarize: h.recordingSummarizer(), hooks, readFileState: s.rfs }, {});
    assert.deepEqual(r.hookErrors.map((e) => e.hook), ['preCompact', 'sessionStart', 'postCompact']);
    assert.match(r.hookErrors[0].message, /pre boom/);
    assert.match(r.hookErrors[1].message, /start boom/);
    assert.match(r.hookErrors[2].message, /post boom/);
    assert.deepEqual(r.hookResults, []);
    assert.deepStrictEqual(s.msgs, s.before);
    h.assertValidForApi(cc.buildPostCompactMessages(r), s.before);
  });

  // A hook's own cancelled work (its fetch aborted by its own controller) is a throwing hook,
  // not the caller's abort: the caller's signal was never aborted.
  test('a hook that throws an AbortError of its own (caller not aborted) is reported, compaction succeeds', async () => {
    const s = setup({ rounds: 8 });
    const ac = new AbortController();
    const hooks = {
      sessionStart: async () => {
        const own = new AbortController();
        own.abort();
        throw own.signal.reason; // a DOMException named AbortError, as fetch rejects
      },
    };
    const r = await cc.compactConversation(s.msgs, { model: OPUS, summarize: h.recordingSummarizer(), hooks, signal: ac.signal, readFileState: s.rfs }, {});
    assert.equal(ac.signal.aborted, false);
    assert.deepEqual(r.hookErrors.map((e) => e.hook), ['sessionStart']);
  });

  test('SessionStart output becomes hook-result messages (API and transcript shape)', async () => {
    const api = await cc.compactConversation(h.apiConversation({ rounds: 4 }), {
      model: OPUS, summarize: h.recordingSummarizer(), hooks: { sessionStart: async () => 'SESSION_START_OUTPUT' },
    }, {});
    assert.deepEqual(api.hookResults, [{ role: 'user', content: 'SESSION_START_OUTPUT' }]);
    assert.strictEqual(cc.buildPostCompactMessages(api).at(-1), api.hookResults[0]);
    const t = h.transcriptConversation({ rounds: 3 });
    const tr = await cc.compactConversation(t, {
      model: OPUS, summarize: h.recordingSummarizer(), hooks: { sessionStart: () => ({ messages: ['ONE', { content: 'TWO' }] }) },
    }, {});
    assert.deepEqual(tr.hookResults.map((m) => [m.type, m.message.content]), [['user', 'ONE'], ['user', 'TWO']]);
    assert.equal(tr.hookResults[0].parentUuid, tr.summaryMessages[0].uuid, 'chained after the summary');
    assert.equal(tr.hookResults[1].parentUuid, tr.hookResults[0].uuid);
    h.assertValidForApi(cc.buildPostCompactMessages(tr), t);
  });

  test('PreCompact instructions go to the request; display messages are joined', async () => {
    const summarize = h.recordingSummarizer();
    const r = await cc.compactConversation(h.apiConversation({ rounds: 4 }), {
      model: OPUS, summarize,
      hooks: { preCompact: () => ({ instructions: 'HOOK_INSTRUCTION_42', userDisplayMessage: 'pre says hi' }), postCompact: () => 'post says bye' },
    }, {});
    assert.match(JSON.stringify(summarize.calls[0].request), /HOOK_INSTRUCTION_42/);
    assert.doesNotMatch(JSON.stringify(cc.buildPostCompactMessages(r)), /HOOK_INSTRUCTION_42/);
    assert.equal(r.userDisplayMessage, 'pre says hi\npost says bye');
  });
});

// ---------------------------------------------------------------------------------------------
describe('custom instructions', () => {
  test('appear in the summary request and nowhere in the compacted conversation', async () => {
    for (const shape of ['api', 'transcript']) {
      const msgs = shape === 'api' ? h.apiConversation({ rounds: 6 }) : h.transcriptConversation({ rounds: 4 });
      const summarize = h.recordingSummarizer();
      const r = await cc.compactConversation(msgs, { model: OPUS, summarize, plan: 'a plan', readFileState: fileState() }, { customInstructions: CI_MARKER });
      assert.match(JSON.stringify(summarize.calls[0].request), new RegExp(CI_MARKER), shape);
      assert.ok(!JSON.stringify(cc.buildPostCompactMessages(r)).includes(CI_MARKER), `${shape}: not in the compacted conversation`);
      assert.ok(!JSON.stringify(r.boundaryMarker).includes(CI_MARKER));
    }
  });
});

// ---------------------------------------------------------------------------------------------
describe('querySource guards (no recursion)', () => {
  for (const querySource of ['compact', 'session_memory']) {
    test(`querySource '${querySource}' never compacts`, async () => {
      const s = setup({ rounds: 12 });
      const summarize = h.recordingSummarizer();
      assert.equal(cc.shouldAutoCompact(s.msgs, OPUS, { querySource, config: LOW_THRESHOLD }), false);
      const out = await cc.autoCompactIfNeeded(s.msgs, { model: OPUS, summarize, querySource, config: LOW_THRESHOLD, sessionMemory: 'm', readFileState: s.rfs }, {});
      assert.equal(out.wasCompacted, false);
      assert.equal(out.skipped, 'querySource');
      assert.equal(summarize.calls.length, 0);
      assertUntouched(s);
      // The same conversation compacts from the main thread.
      assert.equal(cc.shouldAutoCompact(s.msgs, OPUS, { querySource: 'repl_main_thread', config: LOW_THRESHOLD }), true);
    });
  }

  test('reactive-only mode: no proactive compaction, reactive compaction still works', async () => {
    const s = setup({ rounds: 12 });
    const summarize = h.recordingSummarizer();
    const config = { ...LOW_THRESHOLD, reactiveOnly: true };
    const out = await cc.autoCompactIfNeeded(s.msgs, { model: OPUS, summarize, config }, {});
    assert.deepEqual(out, { wasCompacted: false, consecutiveFailures: 0, skipped: 'reactiveOnly' });
    assert.equal(summarize.calls.length, 0);
    const re = await cc.reactiveCompact(s.msgs, { model: OPUS, summarize, config }, h.ptlError(300_000, 200_000), { turnId: 'a' });
    assert.ok(re.compactionResult);
  });

  test('the guards hold on a real-size history above the default threshold', async () => {
    const msgs = h.apiConversation({ rounds: 2, usage: 180_000 });
    const summarize = h.recordingSummarizer();
    for (const querySource of ['compact', 'session_memory']) {
      const out = await cc.autoCompactIfNeeded(msgs, { model: OPUS, summarize, querySource }, {});
      assert.equal(out.wasCompacted, false);
    }
    assert.equal(summarize.calls.length, 0);
    assert.equal(cc.shouldAutoCompact(msgs, OPUS), true);
  });
});

// ---------------------------------------------------------------------------------------------
describe('trySessionMemoryCompaction (SPEC §12)', () => {
  test('keeps the caller\'s own recent messages: 10K–40K tokens, ≥ 5 with text, no pair split', async () => {
    const msgs = h.apiConversationOfTokens(90_000);
    const before = structuredClone(msgs);
    const summarize = h.recordingSummarizer();
    const r = await cc.trySessionMemoryCompaction(msgs, { model: OPUS, summarize, sessionMemory: 'SESSION MEMORY TEXT' });
    assert.equal(summarize.calls.length, 0, 'no model call');
    assert.equal(r.fromSessionMemory, true);
    assert.equal(r.summary, 'SESSION MEMORY TEXT');
    const k = r.messagesToKeep;
    const start = msgs.length - k.length;
    k.forEach((m, i) => assert.strictEqual(m, msgs[start + i], 'the caller\'s objects, a suffix in order'));
    const kept = cc.tokenCountWithEstimation(k);
    assert.ok(kept >= 10_000 && kept <= 40_000, `kept ${kept} tokens`);
    assert.ok(k.filter(h.hasText).length >= 5);
    const post = cc.buildPostCompactMessages(r);
    h.assertValidForApi(post, before);
    assert.ok(r.truePostCompactTokenCount < r.preCompactTokenCount);
    assert.equal(r.truePostCompactTokenCount, cc.tokenCountWithEstimation(post));
    assert.deepStrictEqual(msgs, before);
  });

  test('transcript lines: a response with thinking is never split; sessionMemory as async function', async () => {
    // Usage removed: see the next test for lines that carry it.
    const t = h.transcriptConversation({ rounds: 40, resultChars: 3_000 });
    for (const l of t) if (l.message?.usage) delete l.message.usage;
    const before = structuredClone(t);
    const r = await cc.trySessionMemoryCompaction(t, { model: OPUS, sessionMemory: async () => 'memory from a function' });
    assert.equal(r.summary, 'memory from a function');
    const keptSet = new Set(r.messagesToKeep);
    const dropped = t.filter((l) => !keptSet.has(l));
    const droppedIds = new Set(dropped.filter((l) => l.type === 'assistant').map((l) => l.message.id));
    for (const l of r.messagesToKeep) if (l.type === 'assistant' && !l.isSidechain) assert.ok(!droppedIds.has(l.message.id), `response ${l.message.id} split`);
    h.assertValidForApi(cc.buildPostCompactMessages(r), before);
    assert.deepStrictEqual(t, before);
  });

  // Claude Code writes API usage on every assistant line. The kept lines' usage describes the
  // context BEFORE compaction; the compacted context must not be judged by it.
  test('real Claude Code lines (usage on every assistant line): session memory applies', async () => {
    const L = h.loadLongTranscript();
    const r = await cc.trySessionMemoryCompaction(L.before, { model: OPUS, sessionMemory: L.summaryText });
    const kept = r.messagesToKeep;
    assert.ok(kept.length > 0);
    assert.ok(r.truePostCompactTokenCount < 60_000, `true post ${r.truePostCompactTokenCount}`);
    h.assertValidForApi(cc.buildPostCompactMessages(r), L.before);
  });

  test('without session memory → SESSION_MEMORY_NOT_APPLICABLE; nothing touched', async () => {
    for (const sessionMemory of [undefined, '', async () => null]) {
      const s = setup({ messages: h.apiConversationOfTokens(60_000) });
      const ctx = { model: OPUS, readFileState: s.rfs };
      if (sessionMemory !== undefined) ctx.sessionMemory = sessionMemory;
      await h.rejectsWithCode(cc.trySessionMemoryCompaction(s.msgs, ctx), 'SESSION_MEMORY_NOT_APPLICABLE');
      assertUntouched(s);
    }
  });

  test('a short conversation (nothing to drop) → SESSION_MEMORY_NOT_APPLICABLE', async () => {
    const s = setup({ rounds: 2 });
    await h.rejectsWithCode(cc.trySessionMemoryCompaction(s.msgs, { model: OPUS, sessionMemory: 'mem', readFileState: s.rfs }), 'SESSION_MEMORY_NOT_APPLICABLE');
    assertUntouched(s);
  });
});

// ---------------------------------------------------------------------------------------------
describe('reactiveCompact (SPEC §13)', () => {
  test('compacts after a prompt-too-long error, once per turn', async () => {
    const s = setup({ rounds: 12 });
    const summarize = h.recordingSummarizer();
    const ctx = { model: OPUS, summarize, readFileState: s.rfs };
    const first = await cc.reactiveCompact(s.msgs, ctx, h.ptlError(210_000, 200_000), { turnId: 'turn-7' });
    assert.equal(first.compactionResult.trigger, 'auto');
    assert.equal(first.tracking.turnId, 'turn-7');
    assert.equal(first.tracking.reactiveTurnId, 'turn-7');
    assert.equal(summarize.calls.length, 1);
    assert.deepStrictEqual(s.msgs, s.before);
    h.assertValidForApi(cc.buildPostCompactMessages(first.compactionResult), s.before);
    // The same turn again: refused without any call.
    const s2 = setup({ rounds: 12 });
    await h.rejectsWithCode(cc.reactiveCompact(s2.msgs, { model: OPUS, summarize, readFileState: s2.rfs }, h.ptlError(210_000, 200_000), first.tracking), 'REACTIVE_ALREADY_TRIED');
    assert.equal(summarize.calls.length, 1);
    assertUntouched(s2);
    // A new turn may compact again.
    const next = await cc.reactiveCompact(s2.msgs, { model: OPUS, summarize }, h.ptlError(210_000, 200_000), { ...first.tracking, turnId: 'turn-8' });
    assert.equal(next.tracking.reactiveTurnId, 'turn-8');
  });

  test('413, media too large and the SDK error body shapes are context-size rejections', async () => {
    for (const error of [
      Object.assign(new Error('Request Entity Too Large'), { status: 413 }),
      { status: 400, error: { type: 'error', error: { type: 'invalid_request_error', message: 'image exceeds 5 MB maximum: 7340032 bytes > 5242880 bytes' } } },
      'prompt is too long: 201234 tokens > 200000 maximum',
    ]) {
      const out = await cc.reactiveCompact(h.apiConversation({ rounds: 6 }), { model: OPUS, summarize: h.recordingSummarizer() }, error, { turnId: 'x' });
      assert.ok(out.compactionResult, JSON.stringify(error));
    }
  });

  test('a 529 overloaded error → REACTIVE_NOT_APPLICABLE, nothing called', async () => {
    const s = setup({ rounds: 6 });
    const summarize = h.recordingSummarizer();
    await h.rejectsWithCode(cc.reactiveCompact(s.msgs, { model: OPUS, summarize, readFileState: s.rfs }, h.overloadedError(), { turnId: 't' }), 'REACTIVE_NOT_APPLICABLE');
    assert.equal(summarize.calls.length, 0);
    assertUntouched(s);
  });

  test('uses session memory first when it applies', async () => {
    const msgs = h.apiConversationOfTokens(90_000);
    const summarize = h.recordingSummarizer();
    const out = await cc.reactiveCompact(msgs, { model: OPUS, summarize, sessionMemory: 'mem' }, h.ptlError(210_000, 200_000), { turnId: 1 });
    assert.equal(out.compactionResult.fromSessionMemory, true);
    assert.equal(summarize.calls.length, 0);
  });
});

// ---------------------------------------------------------------------------------------------
describe('buildApiContextManagement (SPEC §11)', () => {
  const TOOL_EDIT = {
    type: 'clear_tool_uses_20250919',
    trigger: { type: 'input_tokens', value: 180_000 },
    clear_at_least: { type: 'input_tokens', value: 140_000 },
    clear_tool_inputs: ['Bash', 'Glob', 'Grep', 'Read', 'WebFetch', 'WebSearch'],
    exclude_tools: ['Edit', 'Write', 'NotebookEdit'],
  };

  test('null when nothing applies', () => {
    assert.equal(cc.buildApiContextManagement({}), null);
    assert.equal(cc.buildApiContextManagement(undefined), null);
    assert.equal(cc.buildApiContextManagement(null), null);
    assert.equal(cc.buildApiContextManagement({ clearThinking: false, clearToolUses: false }), null);
    assert.equal(cc.buildApiContextManagement({ isIdle: true, idleMinutes: 500 }), null);
  });

  test('both edits: thinking first (keep all), then tool uses with the SPEC defaults', () => {
    assert.deepEqual(cc.buildApiContextManagement({ clearThinking: true, clearToolUses: true }), {
      edits: [{ type: 'clear_thinking_20251015', keep: 'all' }, TOOL_EDIT],
    });
    assert.deepEqual(cc.buildApiContextManagement({ clearToolUses: true }), { edits: [TOOL_EDIT] });
  });

  test('after more than an hour idle only 1 thinking turn is kept', () => {
    assert.deepEqual(cc.buildApiContextManagement({ clearThinking: true, idleMinutes: 61 }), {
      edits: [{ type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 1 } }],
    });
    assert.deepEqual(cc.buildApiContextManagement({ clearThinking: true, idleMinutes: 60 }).edits[0].keep, 'all');
  });

  test('bad options are rejected', () => {
    assert.throws(() => cc.buildApiContextManagement({ clearToolUses: true, triggerInputTokens: -5 }), (e) => e.code === 'INVALID_CONFIG');
    assert.throws(() => cc.buildApiContextManagement({ unknownOption: 1 }), (e) => e.code === 'INVALID_CONFIG');
  });
});

// ---------------------------------------------------------------------------------------------
describe('progress and streamed text', () => {
  test('onProgress sees the phases in order; onText is handed to the summarizer', async () => {
    const events = [];
    const onText = () => {};
    let got;
    await cc.compactConversation(h.apiConversation({ rounds: 4 }), {
      model: OPUS,
      onText,
      onProgress: (e) => events.push(e),
      summarize: async (req, opts) => {
        got = opts;
        return h.summaryResponse();
      },
    }, {});
    assert.strictEqual(got.onText, onText);
    const phases = events.map((e) => e.phase);
    assert.equal(phases[0], 'start');
    assert.equal(phases.at(-1), 'done');
    for (const p of ['preCompactHook', 'summarizing', 'summarized', 'restoring', 'sessionStartHook', 'postCompactHook']) assert.ok(phases.includes(p), p);
    assert.ok(phases.indexOf('summarizing') < phases.indexOf('restoring'));
  });

  test('a throwing onProgress does not break compaction', async () => {
    const r = await cc.compactConversation(h.apiConversation({ rounds: 4 }), {
      model: OPUS, summarize: h.recordingSummarizer(), onProgress: () => {
        throw new Error('ui crashed');
      },
    }, {});
    assert.ok(r.summary);
  });
});
