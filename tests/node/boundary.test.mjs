// SPEC §7 step 10 and the result assembly: the boundary line and buildPostCompactMessages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createCompactBoundaryMessage,
  buildPostCompactMessages,
  tokenCountWithEstimation,
  parseTranscript,
  serializeTranscript,
} from '../../pkg/node.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('createCompactBoundaryMessage: a compact_boundary system line like Claude Code writes', () => {
  const b = createCompactBoundaryMessage('auto', 170_251, {
    lastUuid: '459e838f-d7ea-4f7d-94ad-2cb4d227dc77',
    uuid: 'dd3cc2e6-a191-4331-a0f0-2473e6d7692d',
    timestamp: '2026-02-12T20:30:28.504Z',
  });
  assert.equal(b.type, 'system');
  assert.equal(b.subtype, 'compact_boundary');
  assert.equal(b.parentUuid, null, 'a new root');
  assert.equal(b.logicalParentUuid, '459e838f-d7ea-4f7d-94ad-2cb4d227dc77');
  assert.equal(b.uuid, 'dd3cc2e6-a191-4331-a0f0-2473e6d7692d');
  assert.equal(b.timestamp, '2026-02-12T20:30:28.504Z');
  assert.equal(b.isSidechain, false);
  assert.equal(typeof b.content, 'string');
  assert.deepEqual(b.compactMetadata, { trigger: 'auto', preTokens: 170_251 });
});

test('createCompactBoundaryMessage: manual trigger, discovered tools, generated uuid and time, session fields', () => {
  const t0 = Date.now();
  const b = createCompactBoundaryMessage('manual', 1_000, {
    preCompactDiscoveredTools: ['mcp__a__b', 'WebFetch'],
    template: {
      type: 'user',
      sessionId: 'S',
      cwd: '/home/u/p',
      version: '2.1.39',
      gitBranch: 'main',
      userType: 'external',
      slug: 'radiant-floating-music',
      message: { role: 'user', content: 'hi' },
      uuid: 'not-copied',
      toolUseResult: 'not-copied',
    },
  });
  assert.deepEqual(b.compactMetadata, { trigger: 'manual', preTokens: 1_000, preCompactDiscoveredTools: ['mcp__a__b', 'WebFetch'] });
  assert.match(b.uuid, UUID);
  assert.notEqual(b.uuid, 'not-copied');
  assert.equal(b.logicalParentUuid, null);
  const ts = Date.parse(b.timestamp);
  assert.ok(ts >= t0 - 1000 && ts <= Date.now() + 1000, b.timestamp);
  for (const [k, v] of Object.entries({ sessionId: 'S', cwd: '/home/u/p', version: '2.1.39', gitBranch: 'main', userType: 'external', slug: 'radiant-floating-music' })) {
    assert.equal(b[k], v, k);
  }
  assert.equal(b.toolUseResult, undefined);
  assert.equal(b.message, undefined);
  // Two boundaries get different uuids.
  assert.notEqual(createCompactBoundaryMessage('auto', 1).uuid, createCompactBoundaryMessage('auto', 1).uuid);
});

test('a boundary written into a transcript starts a new root for token counting and round-trips', () => {
  const before = [
    { type: 'user', uuid: 'u1', message: { role: 'user', content: 'x'.repeat(40_000) } },
    { type: 'assistant', uuid: 'a1', message: { role: 'assistant', id: 'm', content: [{ type: 'text', text: 'ok' }], usage: { input_tokens: 150_000 } } },
  ];
  const b = createCompactBoundaryMessage('auto', tokenCountWithEstimation(before), { lastUuid: 'a1' });
  const summary = { type: 'user', uuid: 's', parentUuid: b.uuid, isCompactSummary: true, message: { role: 'user', content: 'y'.repeat(400) } };
  const after = [...before, b, summary];
  assert.equal(tokenCountWithEstimation(after), 100);
  const text = serializeTranscript(after);
  assert.deepEqual(parseTranscript(text), after);
  assert.equal(serializeTranscript(parseTranscript(text)), text);
});

test('buildPostCompactMessages: boundary, summary, kept, attachments, hook results — in that order, nothing else', () => {
  const B = { type: 'system', subtype: 'compact_boundary', uuid: 'b' };
  const S1 = { type: 'user', uuid: 's1' };
  const S2 = { type: 'user', uuid: 's2' };
  const K1 = { type: 'assistant', uuid: 'k1' };
  const K2 = { type: 'user', uuid: 'k2' };
  const A = { type: 'attachment', uuid: 'a' };
  const H = { type: 'attachment', uuid: 'h' };
  const result = {
    hookResults: [H],
    attachments: [A],
    messagesToKeep: [K1, K2],
    summaryMessages: [S1, S2],
    boundaryMarker: B,
    userDisplayMessage: 'not a message',
    preCompactTokenCount: 170_000,
    postCompactTokenCount: 9_000,
    truePostCompactTokenCount: 20_000,
    compactionUsage: { input_tokens: 1 },
  };
  const snapshot = structuredClone(result);
  const out = buildPostCompactMessages(result);
  assert.deepEqual(result, snapshot, 'result not mutated');
  assert.equal(out.length, 7);
  [B, S1, S2, K1, K2, A, H].forEach((m, i) => assert.strictEqual(out[i], m, `position ${i}`));
  // Optional parts may be missing.
  const min = buildPostCompactMessages({ boundaryMarker: B, summaryMessages: [S1] });
  assert.equal(min.length, 2);
  assert.strictEqual(min[0], B);
  assert.strictEqual(min[1], S1);
  assert.deepEqual(buildPostCompactMessages({ boundaryMarker: B, summaryMessages: [], messagesToKeep: null, attachments: undefined }), [B]);
});
