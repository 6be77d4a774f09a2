// Round 18's adversarial review. Each test fails on main before its fix (CC_PKG=/path/to/old/pkg/node.js
// runs this file against another build).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import vm from 'node:vm';

const cc = await import(process.env.CC_PKG ?? '../../pkg/node.js');

// hostile18 sends media bytes of another realm (or a SharedArrayBuffer) by their tag, but a
// text file given so was still told by `instanceof`: counted as media and sent as a base64
// document of media type text/plain (the Messages API takes base64 documents of PDF only),
// where the same bytes of this realm are a text document.
test('review18: a text file given as bytes of another realm or shared memory is a text document, as this realm\'s', () => {
  const text = 'hello world '.repeat(1000);
  const bytes = new TextEncoder().encode(text);
  const other = vm.runInNewContext('(n) => new ArrayBuffer(n)')(bytes.length);
  new Uint8Array(other).set(bytes);
  const shared = new SharedArrayBuffer(bytes.length);
  new Uint8Array(shared).set(bytes);
  const ask = (data) => [
    { role: 'user', content: [{ type: 'file', data, mediaType: 'text/plain' }, { type: 'text', text: 'read it' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
  ];
  const same = ask(bytes.buffer);
  const want = cc.toApiMessages(same)[0].content[0];
  assert.deepEqual(want.source, { type: 'text', media_type: 'text/plain', data: text });
  for (const [name, data] of [['another realm', other], ['shared memory', shared]]) {
    assert.deepEqual(cc.toApiMessages(ask(data))[0].content[0], want, name);
    assert.equal(cc.tokenCountWithEstimation(ask(data)), cc.tokenCountWithEstimation(same), `${name}: counted as its text`);
  }
});

// The lead's context.calibration is "the line ... given back to a stateless call whose messages no
// longer hold the usage it was learned from": where usage anchors the count, it is not the count.
// But the compaction's size checks took it over the line the messages' own usage teaches:
// messages billed at 24,000 + 1.25 per estimated token, given a stale line of 0 + 0.75, reported
// truePostCompactTokenCount (and checked "below the threshold") at the stale line.
test('review18: a compaction of messages that carry usage takes their own line, not a calibration given back', async () => {
  const estimateOf = (m) => cc.tokenCountWithEstimation(m.map(({ usage, ...rest }) => rest));
  const m = [{ role: 'user', content: 'Read every file of src/ one by one.' }];
  for (let i = 0; i < 24; i++) {
    const estimate = estimateOf(m);
    m.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: `t${i}`, name: 'read_file', input: { path: `src/f${i}.rs` } }],
      usage: { input_tokens: Math.round(24_000 + 1.25 * estimate), output_tokens: 20 },
    });
    m.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `fn f${i}() { let x = ${i}; }\n`.repeat(300) }] });
  }
  m.push({ role: 'assistant', content: [{ type: 'text', text: 'Done.' }], usage: { input_tokens: Math.round(24_000 + 1.25 * estimateOf(m)), output_tokens: 3 } });
  m.push({ role: 'user', content: 'Now summarize what they do.' });
  const summarize = async () => '<summary>The user read the files of src/.</summary>';
  const own = await cc.compactConversation(m, { model: 'claude-sonnet-4-5', summarize });
  const stale = await cc.compactConversation(m, { model: 'claude-sonnet-4-5', summarize, calibration: { overhead: 0, ratio: 0.75 } });
  assert.equal(stale.preCompactTokenCount, own.preCompactTokenCount, 'usage anchors the count before');
  assert.equal(stale.truePostCompactTokenCount, own.truePostCompactTokenCount, 'the line the usage teaches counts the result');
  assert.deepEqual(stale.calibration, own.calibration);
});

// The lead gave context.calibration / shouldAutoCompact's calibration to the decision; the option
// took any ratio from 0: `{overhead: 1000, ratio: 0}` counted a conversation of a million
// tokens as 1,000, and shouldAutoCompact / autoCompactIfNeeded never compacted it.
test('review18: a calibration whose ratio is implausibly small is refused, not a count that never grows', async () => {
  const m = [{ role: 'user', content: 'x'.repeat(4_000_000) }, { role: 'assistant', content: 'ok' }, { role: 'user', content: 'go' }];
  for (const ratio of [0, 1e-9, 0.2]) {
    const calibration = { overhead: 1000, ratio };
    const refused = (e) => e.code === 'INVALID_ARGUMENT' && e.message.includes('options.calibration.ratio');
    assert.throws(() => cc.shouldAutoCompact(m, 'claude-sonnet-4-5', { calibration }), refused, `ratio ${ratio}`);
    assert.throws(() => cc.tokenCountWithEstimation(m, { calibration }), refused, `ratio ${ratio}`);
  }
  // What a Compactor learns (0.75 to 3) is taken.
  assert.equal(cc.shouldAutoCompact(m, 'claude-sonnet-4-5', { calibration: { overhead: 1000, ratio: 0.75 } }), true);
});
