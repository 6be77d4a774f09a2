// Round 17, the review's findings. Each test fails on main as merged at the start of the
// review (3beccfd).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toApiMessages, tokenCountWithEstimation } from '../../pkg/node.js';

test('a long string that starts like a data URL with a parameter but has no comma is read in linear time (was: the square of its length, 1.5 s at 32K characters)', () => {
  // `data:image/png;x` then 100K `=`: the data URL pattern of round 17 tried every split of
  // the parameter at each `=` (about 6 s here); a hostile message must not hang the caller.
  const bad = 'data:image/png;x' + '='.repeat(64_000);
  let t = performance.now();
  const api = toApiMessages([{ role: 'user', content: [{ type: 'text', text: 'see' }, { type: 'image', image: bad }] }]);
  const viewMs = performance.now() - t;
  assert.ok(viewMs < 1000, `toApiMessages took ${viewMs.toFixed(0)} ms`);
  // Not a data URL: not decoded as one (no media type taken from it).
  assert.equal(JSON.stringify(api).includes('"media_type":"image/png;x'), false);
  t = performance.now();
  const c = tokenCountWithEstimation(
    [{ role: 'user', content: [{ type: 'file', data: 'data:text/plain;x' + '='.repeat(64_000), mediaType: 'text/plain' }] }],
    { tokenCounter: (s) => s.length / 4 },
  );
  const countMs = performance.now() - t;
  assert.ok(countMs < 1000, `the count with a tokenizer took ${countMs.toFixed(0)} ms`);
  assert.equal(typeof c, 'number');
  // Data URLs with parameters are still read as their type and data.
  const ok = toApiMessages([{ role: 'user', content: [{ type: 'file', data: 'data:text/plain;charset=utf-8;base64,aGVsbG8=', mediaType: 'text/plain' }] }]);
  assert.match(JSON.stringify(ok), /"data":"hello"/);
});
