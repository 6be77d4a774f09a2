// Counts and options that were wrong, each fixed with its test: an OpenAI custom tool's
// free-form input counted at the JSON rate; restoration and the prompt-too-long retry measured
// without the caller's `tokenCounter`; a fractional `keepToolUses`; `Date` read times; and an
// environment window too small for the model failing every call over a config field the
// caller never set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';

cc.setEnvironmentDefaults({});

test('keepToolUses must be a whole number of tool uses: a fraction is INVALID_CONFIG naming it', () => {
  for (const bad of [2.5, -1, 0.1]) {
    assert.throws(() => cc.buildApiContextManagement({ keepToolUses: bad }), (e) => {
      assert.equal(e.code, 'INVALID_CONFIG');
      assert.match(e.message, /keepToolUses/);
      assert.ok(e.message.includes(String(bad)), e.message);
      return true;
    });
  }
  const edit = cc.buildApiContextManagement({ keepToolUses: 4 }).edits[0];
  assert.deepEqual(edit.keep, { type: 'tool_uses', value: 4 });
  assert.deepEqual(cc.buildApiContextManagement({ keepToolUses: 0 }).edits[0].keep, { type: 'tool_uses', value: 0 });
});
