// Round 19, the lead's changes. Each test fails on the package before them (pkg-snap21).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compactConversation, parseContextOverflowError, toApiMessages, validateForApi } from '../../pkg/node.js';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const withBlock = (block) => [{ role: 'user', content: [{ type: 'text', text: 'What is in this?' }, block] }];

test('validateForApi names a media source the Messages API refuses', () => {
  const cases = [
    [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 5 } }, /image block with a base64 source without data/],
    [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } }, /image block with a base64 source without data/],
    // The classic slip: the data URL pasted whole where the API takes its base64 text.
    [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: `data:image/png;base64,${PNG}` } }, /data URL/],
    [{ type: 'document', source: { type: 'base64', data: 'JVBERi0xLjQK' } }, /document block with a base64 source without a media_type/],
    [{ type: 'image', source: { type: 'url', url: 5 } }, /url source without a URL/],
    [{ type: 'document', source: { type: 'file' } }, /file source without a file_id/],
    [{ type: 'image', source: PNG }, /image block without a source object/],
  ];
  for (const [block, problem] of cases) {
    const v = validateForApi(withBlock(block));
    assert.equal(v.valid, false, JSON.stringify(block));
    assert.equal(v.problems.length, 1, JSON.stringify(v.problems));
    assert.equal(v.problems[0].message, 0);
    assert.match(v.problems[0].problem, problem);
  }
});

test('validateForApi still takes every media source the API takes, and other shapes\' media', () => {
  for (const block of [
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
    { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
    { type: 'document', source: { type: 'file', file_id: 'file_011' } },
    { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } },
    { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'notes' }] } },
  ]) {
    assert.deepEqual(validateForApi(withBlock(block)), { valid: true, problems: [] }, JSON.stringify(block));
  }
  // An AI SDK image given as a data URL is sent as its base64 text: valid.
  const ai = withBlock({ type: 'image', image: `data:image/png;base64,${PNG}` });
  assert.equal(toApiMessages(ai)[0].content[1].source.data, PNG);
  assert.deepEqual(validateForApi(ai), { valid: true, problems: [] });
});

test('a media problem inside a tool result is placed at its message', () => {
  const msgs = [
    { role: 'user', content: 'Take a screenshot.' },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: '' } }] }] },
  ];
  const v = validateForApi(msgs);
  assert.deepEqual(v.problems.map((p) => p.message), [2]);
  assert.match(v.problems[0].problem, /image block with a base64 source without data/);
});

// A conversation of 80 messages of ~1,000 tokens each.
const long = [];
for (let i = 0; i < 40; i++) long.push({ role: 'user', content: `question ${i} `.repeat(300) }, { role: 'assistant', content: `answer ${i} `.repeat(300) });
const tooLong = () => Object.assign(new Error('400 prompt is too long: 210000 tokens > 200000 maximum'), { status: 400 });
const overloaded = () => Object.assign(new Error('529 overloaded_error: Overloaded'), { status: 529 });

test('a provider error wrapped by the summarizer (cause, AggregateError) is still recognised', async () => {
  const wrappers = {
    cause: (e) => new Error('summary call failed', { cause: e }),
    twice: (e) => new Error('agent step failed', { cause: new Error('summary call failed', { cause: e }) }),
    aggregate: (e) => new AggregateError([e], 'every provider failed'),
  };
  for (const [name, wrap] of Object.entries(wrappers)) {
    assert.deepEqual(parseContextOverflowError(wrap(tooLong())), { kind: 'prompt_too_long', actual: 210000, limit: 200000, gap: 10000 }, name);
    for (const [error, retry] of [[tooLong, 'retryPromptTooLong'], [overloaded, 'retryTransient']]) {
      let calls = 0;
      const phases = [];
      const r = await compactConversation(long, {
        model: 'claude-sonnet-4-5',
        retryBaseMs: 1,
        onProgress: (e) => phases.push(e.phase),
        summarize: async () => {
          calls += 1;
          if (calls === 1) throw wrap(error());
          return '<summary>The user asked 40 questions and got answers.</summary>';
        },
      });
      assert.equal(calls, 2, `${name}: ${retry}`);
      assert.ok(phases.includes(retry), `${name}: ${phases.join(' ')}`);
      assert.ok(r.summaryMessages.length > 0);
    }
  }
});

test('an error wrapping a non-provider failure still fails, its cause\'s words in the message', async () => {
  await assert.rejects(
    compactConversation(long, {
      model: 'claude-sonnet-4-5',
      summarize: async () => { throw new Error('summary call failed', { cause: new Error('ECONNRESET: socket hang up') }); },
    }),
    (e) => e.code === 'SUMMARIZER_FAILED' && /summary call failed \(ECONNRESET: socket hang up\)/.test(e.message),
  );
});
