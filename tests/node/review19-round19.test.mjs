// Round 19 review (review19). Each test fails on main before its fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Compactor, offlineSummarizer } from '../../pkg/node.js';
import { runToolLoop } from '../../pkg/agents/anthropic.js';

const reply = { role: 'assistant', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 1 } };

test('runToolLoop: the library\'s own coded error while writing the request keeps its code (not PROVIDER_ERROR)', async () => {
  // A message whose content getter throws once the Compactor holds it: toApiMessages refuses
  // it (INVALID_MESSAGE) before any request is sent, so the provider never saw it.
  let armed = false;
  const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer() });
  compactor.push({ role: 'user', get content() { if (armed) throw new Error('boom'); return 'hi'; } });
  armed = true;
  let sent = 0;
  const client = { messages: { create: async () => { sent++; return reply; } } };
  await assert.rejects(
    runToolLoop({ client, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 100 }, tools: {} }),
    (e) => {
      assert.equal(e.code, 'INVALID_MESSAGE', e.message);
      assert.doesNotMatch(e.message, /request failed/);
      return true;
    },
  );
  assert.equal(sent, 0);
});

test('runToolLoop: a coded error the client throws is passed on with its code', async () => {
  const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize: offlineSummarizer() });
  compactor.push({ role: 'user', content: 'hi' });
  const { ContextCompactionError } = await import('../../pkg/node.js');
  const own = new ContextCompactionError('the wrapped client refused it', 'INVALID_ARGUMENT');
  const client = { messages: { create: async () => { throw own; } } };
  await assert.rejects(runToolLoop({ client, compactor, request: { model: 'claude-sonnet-4-5', max_tokens: 100 }, tools: {} }), (e) => e === own);
});

test('runChatToolLoop: a coded error the client throws is passed on with its code', async () => {
  const { runChatToolLoop } = await import('../../pkg/agents/openai.js');
  const { ContextCompactionError } = await import('../../pkg/node.js');
  const own = new ContextCompactionError('the wrapped client refused it', 'INVALID_ARGUMENT');
  const client = { chat: { completions: { create: async () => { throw own; } } } };
  await assert.rejects(
    runChatToolLoop({ client, summarize: offlineSummarizer(), messages: [{ role: 'user', content: 'hi' }], request: { model: 'gpt-4.1' }, tools: {} }),
    (e) => e === own,
  );
});

test('an OpenAI image part is read as an image also when its data URL names no image type', async () => {
  const { toApiMessages, validateForApi } = await import('../../pkg/node.js');
  const chat = (url) => [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url } }] }];
  const responses = (url) => [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', image_url: url, detail: 'auto' }] }];
  for (const shape of [chat, responses]) {
    // An image URL left empty: the problem names the image the caller gave (it named a document).
    const v = validateForApi(shape(''));
    assert.equal(v.valid, false);
    assert.match(v.problems[0].problem, /^an image block with a base64 source without data/, JSON.stringify(v.problems));
    // Bytes sent under a generic type: an image block, as the count reads it (a document before).
    const b = toApiMessages(shape('data:application/octet-stream;base64,iVBORw0KGgoAAAANSUhEUg=='))[0].content[1];
    assert.equal(b.type, 'image', JSON.stringify(b));
  }
});
