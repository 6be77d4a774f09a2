// SPEC §3: token accounting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { roughTokenCountEstimation, tokenCountWithEstimation, constants } from '../../pkg/node.js';

const count = (messages) => {
  const before = structuredClone(messages);
  const n = tokenCountWithEstimation(messages);
  assert.deepEqual(messages, before, 'input not mutated');
  return n;
};
const user = (content) => ({ role: 'user', content });
const line = (type, message, extra = {}) => ({ type, message, ...extra });

test('roughTokenCountEstimation: UTF-16 length / bytesPerToken, rounded', () => {
  assert.equal(roughTokenCountEstimation(''), 0);
  assert.equal(roughTokenCountEstimation('abcd'), 1);
  assert.equal(roughTokenCountEstimation('a'.repeat(400)), 100);
  assert.equal(roughTokenCountEstimation('0123456789'), 3, '2.5 rounds to 3');
  assert.equal(roughTokenCountEstimation('012345678'), 2, '2.25 rounds to 2');
  assert.equal(roughTokenCountEstimation('a'.repeat(10), 2), 5);
  assert.equal(roughTokenCountEstimation('a'.repeat(10), 3), 3);
  assert.equal(roughTokenCountEstimation('a'.repeat(10), undefined), 3, 'default 4');
  // UTF-16 code units, like string.length: é is 1 unit, 😀 is 2.
  assert.equal(roughTokenCountEstimation('é'.repeat(8)), 2);
  assert.equal(roughTokenCountEstimation('😀'.repeat(4)), 2);
  assert.equal('😀'.repeat(4).length, 8);
  const big = 'x'.repeat(4_000_000);
  assert.equal(roughTokenCountEstimation(big), 1_000_000);
});

test('no usage anywhere: everything is estimated at 4 characters per token', () => {
  assert.equal(count([]), 0);
  assert.equal(count([user('a'.repeat(400)), { role: 'assistant', content: [{ type: 'text', text: 'b'.repeat(40) }] }]), 110);
  assert.equal(count([user([{ type: 'text', text: 'x'.repeat(400) }, { type: 'text', text: 'y'.repeat(40) }])]), 110);
});

test('thinking and redacted thinking are counted by their text', () => {
  const n = count([
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 't'.repeat(400), signature: 's'.repeat(10_000) },
        { type: 'redacted_thinking', data: 'd'.repeat(80) },
      ],
    },
  ]);
  assert.equal(n, 120);
});

test('JSON (tool_use input) counts at 2 characters per token', () => {
  const input = { file_path: '/a/b', limit: 10 };
  const json = JSON.stringify(input);
  const n = count([{ role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input }] }]);
  assert.equal(n, Math.round(('Read'.length + json.length) / 2));
  // The same text as prose would be half as many tokens.
  assert.ok(n > roughTokenCountEstimation('Read' + json));
});

test('images and documents count a fixed 2,000 tokens, never by base64 length', () => {
  const img = (n) => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(n) } });
  assert.equal(constants.IMAGE_TOKENS, 2000);
  assert.equal(count([user([img(10)])]), 2000);
  assert.equal(count([user([img(1_000_000)])]), 2000);
  assert.equal(count([user([{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }])]), 2000);
  assert.equal(
    count([user([{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'A'.repeat(500_000) } }])]),
    2000,
  );
  // A plain-text document is no media: the model reads its text.
  assert.equal(count([user([{ type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'x'.repeat(400) } }])]), 100);
  // Nested inside a tool_result's content array, next to text.
  assert.equal(
    count([user([{ type: 'tool_result', tool_use_id: 't', content: [img(300_000), { type: 'text', text: 'a'.repeat(400) }] }])]),
    2100,
  );
});

test('tool_result string content counts as prose', () => {
  assert.equal(count([user([{ type: 'tool_result', tool_use_id: 't', content: 'r'.repeat(4000) }])]), 1000);
  assert.equal(count([user([{ type: 'tool_result', tool_use_id: 't', content: 'r'.repeat(4000), is_error: true }])]), 1000);
});

test('latest usage = input + cache_creation + cache_read + output, messages after it estimated', () => {
  const msgs = [
    user('x'.repeat(40_000)), // before the usage: not counted again
    {
      role: 'assistant',
      content: [{ type: 'text', text: 'ok' }],
      usage: { input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 3000, output_tokens: 40 },
    },
    user('z'.repeat(400)),
  ];
  assert.equal(count(msgs), 10 + 200 + 3000 + 40 + 100);
  // Missing / null counts are 0.
  assert.equal(count([{ role: 'assistant', content: 'x', usage: { input_tokens: 7, cache_read_input_tokens: null } }]), 7);
  // The LATEST usage wins.
  const two = [
    { role: 'assistant', content: 'a', usage: { input_tokens: 50_000 } },
    user('q'),
    { role: 'assistant', content: 'b', usage: { input_tokens: 60_000, output_tokens: 5 } },
  ];
  assert.equal(count(two), 60_005);
  // An assistant without usage after the latest one with usage is estimated.
  assert.equal(count([...two, { role: 'assistant', content: 'c'.repeat(400) }]), 60_105);
});

test('transcript lines: usage inside message, non-API lines count nothing', () => {
  const msgs = [
    line('user', { role: 'user', content: 'x'.repeat(4000) }),
    line('assistant', {
      role: 'assistant',
      id: 'm1',
      content: [{ type: 'text', text: 'hi' }],
      usage: { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000, output_tokens: 5 },
    }),
    { type: 'progress', data: { output: 'y'.repeat(10_000) } },
    { type: 'file-history-snapshot', snapshot: { files: 'f'.repeat(10_000) } },
    { type: 'system', subtype: 'turn_duration', content: 's'.repeat(10_000) },
    { type: 'queue-operation', operation: 'enqueue', content: 'q'.repeat(10_000) },
    { type: 'some-future-type', payload: 'p'.repeat(10_000) },
    line('user', { role: 'user', content: 'z'.repeat(40) }),
  ];
  assert.equal(count(msgs), 1115 + 10);
});

test('a response split over lines sharing message.id counts once; interleaved tool results are estimated', () => {
  const usage = { input_tokens: 1, cache_read_input_tokens: 999, output_tokens: 20 };
  const msgs = [
    line('user', { role: 'user', content: 'go' }),
    line('assistant', { role: 'assistant', id: 'm1', usage, content: [{ type: 'thinking', thinking: 'x'.repeat(4000), signature: 's' }] }),
    line('assistant', { role: 'assistant', id: 'm1', usage, content: [{ type: 'tool_use', id: 'a', name: 'Read', input: {} }] }),
    line('user', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'r'.repeat(400) }] }),
    line('assistant', { role: 'assistant', id: 'm1', usage, content: [{ type: 'tool_use', id: 'b', name: 'Read', input: {} }] }),
    line('user', { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'b', content: 's'.repeat(800) }] }),
  ];
  assert.equal(count(msgs), 1020 + 100 + 200);
});

test('sidechain (sub-agent) lines are not part of the main conversation', () => {
  const msgs = [
    line('user', { role: 'user', content: 'y'.repeat(400) }),
    line('assistant', { role: 'assistant', id: 's', content: [], usage: { input_tokens: 50_000 } }, { isSidechain: true }),
    line('user', { role: 'user', content: 'w'.repeat(40_000) }, { isSidechain: true }),
  ];
  assert.equal(count(msgs), 100);
});

test('what precedes a compact_boundary is no longer counted', () => {
  const msgs = [
    line('user', { role: 'user', content: 'x'.repeat(4000) }),
    line('assistant', { role: 'assistant', id: 'm0', content: [], usage: { input_tokens: 150_000 } }),
    { type: 'system', subtype: 'compact_boundary', content: 'Conversation compacted', compactMetadata: { trigger: 'auto', preTokens: 150_000 } },
    line('user', { role: 'user', content: 'summary '.repeat(50) }, { isCompactSummary: true }),
  ];
  assert.equal(count(msgs), 100);
  // With a usage after the boundary, that usage anchors the count.
  msgs.push(line('assistant', { role: 'assistant', id: 'm1', content: [], usage: { input_tokens: 30_000, output_tokens: 10 } }));
  assert.equal(count(msgs), 30_010);
});

test('attachment lines are sent to the model and estimated', () => {
  const att = { type: 'attachment', attachment: { type: 'new_file', content: 'c'.repeat(400) } };
  const n = count([att]);
  assert.ok(n >= 100, `attachment counted (${n})`);
  assert.ok(n < 200, `attachment not over-counted (${n})`);
});
