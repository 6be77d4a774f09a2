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

test("parseContextOverflowError takes its status as the JS value it is: a number or nothing; anything else is INVALID_ARGUMENT, never a raw TypeError", () => {
  assert.equal(cc.parseContextOverflowError('request too large', 413)?.kind, 'request_too_large');
  assert.equal(cc.parseContextOverflowError('prompt is too long: 5 tokens > 4 maximum', undefined)?.gap, 1);
  assert.equal(cc.parseContextOverflowError('prompt is too long: 5 tokens > 4 maximum', null)?.gap, 1);
  const throwingValueOf = { valueOf() { throw new Error('valueOf boom'); } };
  for (const status of [Symbol('s'), 413n, throwingValueOf, '413', true, {}]) {
    assert.throws(
      () => cc.parseContextOverflowError('prompt is too long', status),
      (e) => e instanceof ContextCompactionError && e.code === 'INVALID_ARGUMENT' && /status must be a number/.test(e.message),
      String(typeof status),
    );
  }
});

test("every code the agent loops throw is listed by errorCodes(): runToolLoop's MAX_STEPS_EXCEEDED, runChatToolLoop's INVALID_RESPONSE", async () => {
  const { runToolLoop } = await import('../../pkg/agents/anthropic.js');
  const { runChatToolLoop } = await import('../../pkg/agents/openai.js');
  const codes = cc.errorCodes();
  const compactor = new cc.Compactor({ model: 'claude-sonnet-4-5', summarize: async () => '<summary>s</summary>' });
  compactor.push({ role: 'user', content: 'go' });
  let n = 0;
  const client = {
    messages: {
      create: async () => ({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${n++}`, name: 'noop', input: {} }], stop_reason: 'tool_use', usage: { input_tokens: 10, output_tokens: 1 } }),
    },
  };
  await assert.rejects(runToolLoop({ client, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 100 }, tools: { noop: () => 'ok' }, maxSteps: 2 }), (e) => {
    assert.equal(e.code, 'MAX_STEPS_EXCEEDED');
    assert.ok(codes.includes(e.code), `${e.code} is not in errorCodes()`);
    return true;
  });
  const openai = { chat: { completions: { create: async () => ({ id: 'cmpl_1', choices: [] }) } } };
  await assert.rejects(runChatToolLoop({ client: openai, summarize: async () => 's', messages: [{ role: 'user', content: 'hi' }], request: { model: 'gpt-4.1' }, tools: {} }), (e) => {
    assert.equal(e.code, 'INVALID_RESPONSE');
    assert.ok(codes.includes(e.code), `${e.code} is not in errorCodes()`);
    return true;
  });
  compactor.free();
});
