// The browser entry (pkg/web.js) before and after init() (issue 13, item 11): a call before
// init() is a coded NOT_INITIALIZED error, not a bare TypeError; init() that cannot load the
// .wasm (in Node with no argument: fetch has no file: URLs) is NOT_INITIALIZED with a hint and
// the cause; with the bytes it works, and every later call answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const PKG = new URL('../../pkg/', import.meta.url);

test('web.js: coded errors before init(), a hint when init() cannot load the .wasm, then it works', async () => {
  const web = await import(new URL('web.js', PKG));
  const messages = [{ role: 'user', content: 'hello there' }];
  for (const f of [
    () => web.tokenCountWithEstimation(messages),
    () => web.getContextWindowForModel('claude-sonnet-4-5'),
    () => new web.Compactor({ model: 'claude-sonnet-4-5' }),
  ]) {
    assert.throws(f, (e) => e instanceof web.ContextCompactionError && e.code === 'NOT_INITIALIZED' && /await init\(\)/.test(e.message));
  }
  // An async function: thrown at once or rejected, a coded error either way.
  await assert.rejects(async () => web.compactConversation(messages, { model: 'claude-sonnet-4-5' }), (e) => e.code === 'NOT_INITIALIZED');
  await assert.rejects(web.default(), (e) => e.code === 'NOT_INITIALIZED' && /in Node, import 'context-compaction'/.test(e.message) && e.cause !== undefined);
  await web.default({ module_or_path: readFileSync(new URL('context_compaction_bg.wasm', PKG)) });
  assert.equal(web.tokenCountWithEstimation(messages), 3);
  await web.default(); // already initialised: a no-op
});
