// SPEC §8: grouping by API round, recognising overflow errors, truncating the head.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  groupMessagesByApiRound,
  parseContextOverflowError,
  truncateHeadForPTLRetry,
  tokenCountWithEstimation,
  constants,
} from '../../pkg/node.js';

const MARKER = constants.PTL_MARKER_TEXT;
const isMarker = (m) => (m.content ?? m.message?.content) === MARKER;

/** user prompt, then `rounds` × (assistant tool_use, user tool_result), each text `len` chars. */
function convo(rounds, len) {
  const v = [{ role: 'user', content: 'x'.repeat(len) }];
  for (let r = 0; r < rounds; r++) {
    v.push({ role: 'assistant', content: [{ type: 'tool_use', id: `t${r}`, name: 'Read', input: {} }] });
    v.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${r}`, content: 'y'.repeat(len) }] });
  }
  return v;
}

function checkToolPairs(messages) {
  const api = messages.filter((m) => m.role ?? m.message?.role);
  for (let i = 0; i < api.length; i++) {
    const content = api[i].content ?? api[i].message.content;
    if (!Array.isArray(content)) continue;
    for (const b of content) {
      if (b.type === 'tool_result') {
        const prev = api[i - 1];
        const prevContent = prev && (prev.content ?? prev.message.content);
        assert.ok(
          Array.isArray(prevContent) && prevContent.some((p) => p.type === 'tool_use' && p.id === b.tool_use_id),
          `tool_result ${b.tool_use_id} follows its tool_use`,
        );
      }
    }
  }
}

test('groupMessagesByApiRound: one group per assistant response, same objects', () => {
  const c = convo(3, 40);
  const before = structuredClone(c);
  const g = groupMessagesByApiRound(c);
  assert.deepEqual(c, before);
  assert.deepEqual(g.map((x) => x.length), [1, 2, 2, 2]);
  assert.strictEqual(g[0][0], c[0]);
  assert.strictEqual(g[3][1], c[6]);
  assert.deepEqual(g.flat(), c, 'groups cover every message in order');
  assert.deepEqual(groupMessagesByApiRound([]), []);
  assert.deepEqual(groupMessagesByApiRound([{ role: 'user', content: 'only' }]).map((x) => x.length), [1]);
  // API-shaped consecutive assistants (no ids) are separate responses.
  assert.deepEqual(
    groupMessagesByApiRound([
      { role: 'assistant', content: 'a' },
      { role: 'assistant', content: 'b' },
    ]).map((x) => x.length),
    [1, 1],
  );
});

test('groupMessagesByApiRound: split responses (same message.id) and interleaved results stay together', () => {
  const lines = [
    { type: 'user', uuid: 'u0', message: { role: 'user', content: 'go' } },
    { type: 'assistant', uuid: 'a1', message: { role: 'assistant', id: 'm1', content: [{ type: 'tool_use', id: 'a', name: 'Read', input: {} }] } },
    { type: 'user', uuid: 'u1', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a', content: 'r' }] } },
    { type: 'assistant', uuid: 'a2', message: { role: 'assistant', id: 'm1', content: [{ type: 'tool_use', id: 'b', name: 'Read', input: {} }] } },
    { type: 'user', uuid: 'u2', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'b', content: 'r' }] } },
    { type: 'progress', uuid: 'p' },
    { type: 'assistant', uuid: 'a3', message: { role: 'assistant', id: 'm2', content: [{ type: 'text', text: 'done' }] } },
    { type: 'assistant', uuid: 's1', isSidechain: true, message: { role: 'assistant', id: 'side', content: [{ type: 'text', text: 'x' }] } },
    { type: 'user', uuid: 'u3', message: { role: 'user', content: 'thanks' } },
    { type: 'assistant', uuid: 'a4', message: { role: 'assistant', id: 'm3', content: [{ type: 'text', text: 'bye' }] } },
  ];
  assert.deepEqual(
    groupMessagesByApiRound(lines).map((g) => g.map((m) => m.uuid)),
    [['u0'], ['a1', 'u1', 'a2', 'u2', 'p'], ['a3', 's1', 'u3'], ['a4']],
  );
});

test('parseContextOverflowError: Anthropic "prompt is too long: N tokens > M maximum"', () => {
  const o = parseContextOverflowError('prompt is too long: 213462 tokens > 200000 maximum');
  assert.deepEqual(o, { kind: 'prompt_too_long', actual: 213_462, limit: 200_000, gap: 13_462 });
  // Inside an SDK error message / API error body / with thousands separators.
  const sdk = new Error(
    '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 213,462 tokens > 200,000 maximum"}}',
  );
  sdk.status = 400;
  assert.equal(parseContextOverflowError(sdk).gap, 13_462);
  const body = { type: 'error', error: { type: 'invalid_request_error', message: 'prompt is too long: 205000 tokens > 200000 maximum' } };
  assert.equal(parseContextOverflowError(body).gap, 5_000);
  assert.equal(parseContextOverflowError({ status: 400, error: body }).gap, 5_000);
  assert.equal(parseContextOverflowError('Prompt is too long').kind, 'prompt_too_long', 'no numbers: recognised, no gap');
  assert.equal(parseContextOverflowError('Prompt is too long').gap, null);
});

test('parseContextOverflowError: "input length and `max_tokens` exceed context limit: A + B > C"', () => {
  const o = parseContextOverflowError(
    'input length and `max_tokens` exceed context limit: 188059 + 20000 > 200000, decrease input length or `max_tokens` and try again',
  );
  assert.deepEqual(o, { kind: 'input_plus_max_tokens', actual: 208_059, limit: 200_000, gap: 8_059 });
});

test('parseContextOverflowError: HTTP 413 / request_too_large', () => {
  assert.equal(parseContextOverflowError('Request Entity Too Large', 413).kind, 'request_too_large');
  assert.equal(parseContextOverflowError({ status: 413, message: 'whatever' }).kind, 'request_too_large');
  assert.equal(parseContextOverflowError({ statusCode: 413 }).kind, 'request_too_large');
  const body = { type: 'error', error: { type: 'request_too_large', message: 'Request exceeds the maximum size' } };
  const o = parseContextOverflowError(body);
  assert.equal(o.kind, 'request_too_large');
  assert.equal(o.gap, null);
});

test('parseContextOverflowError: OpenAI context_length_exceeded texts', () => {
  const a = parseContextOverflowError(
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 130512 tokens. Please reduce the length of the messages.",
  );
  assert.deepEqual([a.actual, a.limit, a.gap], [130_512, 128_000, 2_512]);
  const b = parseContextOverflowError({
    status: 400,
    error: {
      message:
        "This model's maximum context length is 8192 tokens, however you requested 9000 tokens (8000 in your prompt; 1000 for the completion). Please reduce your prompt; or completion length.",
      type: 'invalid_request_error',
      code: 'context_length_exceeded',
    },
  });
  assert.deepEqual([b.actual, b.limit, b.gap], [9_000, 8_192, 808]);
  const c = parseContextOverflowError({
    error: { code: 'context_length_exceeded', message: 'Your input exceeds the context window of this model.' },
  });
  assert.ok(c, 'code alone is recognised');
  assert.equal(c.gap, null);
  assert.equal(a.kind, b.kind);
  assert.equal(a.kind, c.kind);
});

test('parseContextOverflowError: Gemini "The input token count (N) exceeds the maximum number of tokens allowed (M)"', () => {
  const o = parseContextOverflowError('The input token count (1196265) exceeds the maximum number of tokens allowed (1048575).');
  assert.deepEqual(o, { kind: 'gemini', actual: 1_196_265, limit: 1_048_575, gap: 147_690 });
  const body = { error: { code: 400, message: 'The input token count (1196265) exceeds the maximum number of tokens allowed (1048576).', status: 'INVALID_ARGUMENT' } };
  assert.equal(parseContextOverflowError(body).gap, 147_689);
});

test('parseContextOverflowError: other errors are null', () => {
  assert.equal(parseContextOverflowError('rate limited', 429), null);
  assert.equal(parseContextOverflowError({ status: 529, error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }), null);
  assert.equal(parseContextOverflowError({ status: 500, message: 'Internal server error' }), null);
  assert.equal(parseContextOverflowError(new Error('ECONNRESET')), null);
  assert.equal(parseContextOverflowError(''), null);
  assert.equal(parseContextOverflowError(null), null);
  assert.equal(parseContextOverflowError(undefined), null);
  assert.equal(parseContextOverflowError(42), null);
  const cyclic = { status: 400, body: {} };
  cyclic.body.self = cyclic.body;
  assert.equal(parseContextOverflowError(cyclic), null, 'a cyclic body does not crash');
});

test('truncateHeadForPTLRetry: drops the oldest rounds until the gap is covered, marker at the head', () => {
  const c = convo(5, 400); // 100 tokens per text, tool_use "Read"+{} = 3 tokens
  const before = structuredClone(c);
  const out = truncateHeadForPTLRetry(c, 'prompt is too long: 1250 tokens > 1000 maximum');
  assert.deepEqual(c, before, 'input not mutated');
  // gap 250: round 0 (100) + round 1 (103) + round 2 (103) = 306 ≥ 250.
  assert.equal(out.length, 1 + 6);
  assert.ok(isMarker(out[0]));
  assert.deepEqual(out[0], { role: 'user', content: MARKER });
  for (let k = 1; k < out.length; k++) assert.strictEqual(out[k], c[k + 4], 'kept messages are the same objects');
  checkToolPairs(out);
  const dropped = tokenCountWithEstimation(c) - tokenCountWithEstimation(out.slice(1));
  assert.ok(dropped >= 250, `dropped ${dropped} ≥ gap`);
});

test('truncateHeadForPTLRetry: a previous marker is removed before counting; never two markers', () => {
  const c = convo(5, 400);
  const first = truncateHeadForPTLRetry(c, 'prompt is too long: 1250 tokens > 1000 maximum');
  const second = truncateHeadForPTLRetry(first, 'prompt is too long: 1150 tokens > 1000 maximum');
  // Rounds after the marker: [5,6] [7,8] [9,10]; gap 150 needs two of them.
  assert.equal(second.filter(isMarker).length, 1);
  assert.ok(isMarker(second[0]));
  assert.deepEqual(second.slice(1), c.slice(9));
  // Without a gap: 20% of the groups, never counting the marker as one.
  const withMarker = [{ role: 'user', content: MARKER }, ...convo(9, 40).slice(1)];
  const r = truncateHeadForPTLRetry(withMarker, null);
  assert.equal(r.filter(isMarker).length, 1);
  assert.equal(r.length, withMarker.length - 2, 'marker replaced, floor(20% of 9) = 1 round dropped');
  assert.strictEqual(r[1], withMarker[3]);
});

test('truncateHeadForPTLRetry: without a parsable gap drops 20% of the groups', () => {
  const c = convo(9, 40); // 10 groups
  for (const err of [undefined, null, 'some unknown error', { status: 413 }, 'prompt is too long']) {
    const out = truncateHeadForPTLRetry(c, err);
    assert.equal(out.length, 1 + c.length - 1 - 2, `${JSON.stringify(err)}: 2 of 10 groups dropped`);
    assert.ok(isMarker(out[0]));
    assert.strictEqual(out[1], c[3]);
  }
  // 20% of 3 groups rounds down to 0, but at least one is dropped.
  const small = convo(2, 40);
  assert.equal(truncateHeadForPTLRetry(small, null).length, 1 + small.length - 1);
});

test('truncateHeadForPTLRetry: always keeps at least one round; null when nothing can go', () => {
  const c = convo(9, 40);
  const out = truncateHeadForPTLRetry(c, 'prompt is too long: 999999 tokens > 1 maximum');
  assert.deepEqual(out.map((m) => m.role), ['user', 'assistant', 'user']);
  assert.ok(isMarker(out[0]));
  assert.deepEqual(out.slice(1), c.slice(-2));
  checkToolPairs(out);
  assert.equal(truncateHeadForPTLRetry(convo(0, 40), 'prompt is too long: 999999 tokens > 1 maximum'), null);
  assert.equal(truncateHeadForPTLRetry([], 'prompt is too long'), null);
  // Marker plus one round: nothing left to drop.
  assert.equal(truncateHeadForPTLRetry(out, 'prompt is too long: 999999 tokens > 1 maximum'), null);
});

test('truncateHeadForPTLRetry: the marker has the shape of the conversation', () => {
  // Rounds start at assistant responses, so the kept part starts with an assistant message and
  // needs the user marker in front (the API wants a user message first).
  const msgs = [
    { role: 'user', content: 'a'.repeat(4000) },
    { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
    { role: 'user', content: 'b'.repeat(400) },
    { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
  ];
  const out = truncateHeadForPTLRetry(msgs, 'prompt is too long: 1100 tokens > 1000 maximum');
  assert.deepEqual(out[0], { role: 'user', content: MARKER });
  assert.strictEqual(out[1], msgs[1]);
  const lines = [
    { type: 'user', uuid: 'x', message: { role: 'user', content: 'c'.repeat(4000) } },
    { type: 'system', subtype: 'turn_duration', uuid: 's' },
    { type: 'assistant', uuid: 'a', message: { role: 'assistant', id: 'm1', content: [{ type: 'text', text: 'ok' }] } },
  ];
  const t = truncateHeadForPTLRetry(lines, null);
  assert.equal(t.length, 2);
  assert.ok(isMarker(t[0]));
  assert.equal(t[0].type, 'user', 'transcript-shaped marker for transcript input');
  assert.equal(t[0].message.role, 'user');
  assert.equal(t[0].isMeta, true);
  assert.equal(typeof t[0].uuid, 'string');
  assert.strictEqual(t[1], lines[2]);
  // The transcript marker is recognised (and replaced) on the next retry too.
  const again = truncateHeadForPTLRetry([t[0], ...lines.slice(2), lines[0], { ...lines[2], uuid: 'b', message: { ...lines[2].message, id: 'm2' } }], null);
  assert.equal(again.filter(isMarker).length, 1);
});
