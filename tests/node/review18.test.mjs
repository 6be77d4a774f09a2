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
