// The error class and the error codes at run time: every coded error the library throws or
// rejects with is a ContextCompactionError (one class for both entries), with `name`, `code`
// and, for a callback's failure, `cause`; errorCodes() lists the codes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import * as web from '../../pkg/web.js';

const { ContextCompactionError } = cc;

test('the browser and Node entries export the same class', () => {
  assert.equal(typeof ContextCompactionError, 'function');
  assert.equal(web.ContextCompactionError, ContextCompactionError);
  assert.ok(ContextCompactionError.prototype instanceof Error);
});

test('a synchronous coded error is a ContextCompactionError', () => {
  let caught;
  try {
    cc.parseTranscript('{"type":"user"}\nnot json\n');
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof ContextCompactionError);
  assert.ok(caught instanceof Error);
  assert.equal(caught.name, 'ContextCompactionError');
  assert.equal(caught.code, 'MALFORMED_TRANSCRIPT');
  assert.match(caught.message, /line 2/);
  assert.match(String(caught.stack), /ContextCompactionError/);
  assert.throws(() => cc.getContextWindowForModel('claude-sonnet-4-5', { contextWindw: 1 }), (e) => {
    assert.ok(e instanceof ContextCompactionError);
    assert.equal(e.code, 'INVALID_CONFIG');
    return true;
  });
});

test('a rejected pipeline keeps the callback error as cause', async () => {
  const boom = new Error('the summarizer broke');
  const messages = [
    { role: 'user', content: 'hello there, please summarise this conversation' },
    { role: 'assistant', content: 'sure' },
    { role: 'user', content: 'thanks' },
  ];
  await assert.rejects(
    cc.compactConversation(messages, {
      model: 'claude-sonnet-4-5',
      summarize: () => {
        throw boom;
      },
      retryBaseMs: 0,
    }),
    (e) => {
      assert.ok(e instanceof ContextCompactionError);
      assert.equal(e.name, 'ContextCompactionError');
      assert.equal(e.code, 'SUMMARIZER_FAILED');
      assert.equal(e.cause, boom);
      return true;
    },
  );
});

test('Compactor.compact() rejects with a ContextCompactionError', async () => {
  const chat = new cc.Compactor({ model: 'claude-sonnet-4-5' });
  await assert.rejects(chat.compact(), (e) => e instanceof ContextCompactionError && typeof e.code === 'string');
  chat.free();
});

test('errorCodes() lists every code once, as a new array each call', () => {
  const codes = cc.errorCodes();
  assert.ok(Array.isArray(codes));
  assert.equal(new Set(codes).size, codes.length);
  for (const c of ['INVALID_ARGUMENT', 'MALFORMED_TRANSCRIPT', 'SUMMARIZER_FAILED', 'THRASHING']) {
    assert.ok(codes.includes(c), c);
  }
  codes.length = 0;
  assert.notEqual(cc.errorCodes().length, 0);
});
