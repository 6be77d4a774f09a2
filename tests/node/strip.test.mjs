// SPEC §7 steps 2–3: stripImagesFromMessages and stripReinjectedAttachments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stripImagesFromMessages, stripReinjectedAttachments, tokenCountWithEstimation } from '../../pkg/node.js';

const img = (data = 'iVBORw0KGgo=') => ({ type: 'image', source: { type: 'base64', media_type: 'image/png', data } });
const urlImg = { type: 'image', source: { type: 'url', url: 'https://example.invalid/a.png' } };
const pdf = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'spec' };
const textDoc = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hello' } };
const IMAGE = { type: 'text', text: '[image]' };
const DOCUMENT = { type: 'text', text: '[document]' };

function strip(messages) {
  const before = structuredClone(messages);
  const out = stripImagesFromMessages(messages);
  assert.deepEqual(messages, before, 'input never mutated');
  assert.ok(Array.isArray(out));
  assert.notEqual(out, messages, 'a new array');
  assert.equal(out.length, messages.length);
  return out;
}

test('user image/document blocks become [image] / [document] text, other blocks kept', () => {
  const msgs = [
    { role: 'user', content: [{ type: 'text', text: 'look' }, img(), urlImg, pdf, textDoc], custom: { keep: true } },
  ];
  const out = strip(msgs);
  assert.deepEqual(out[0], {
    role: 'user',
    content: [{ type: 'text', text: 'look' }, IMAGE, IMAGE, DOCUMENT, DOCUMENT],
    custom: { keep: true },
  });
  assert.equal(out[0].content[0], msgs[0].content[0], 'untouched blocks are the same objects');
  assert.equal(out[0].custom, msgs[0].custom, 'unknown fields are carried over');
});

test('media nested in tool_result content arrays is stripped too; the tool_result keeps its fields', () => {
  const msgs = [
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a.png' } }] },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 't1',
          is_error: false,
          content: [img('A'.repeat(100_000)), { type: 'text', text: 'caption' }, pdf],
          cache_control: { type: 'ephemeral' },
        },
      ],
    },
  ];
  const out = strip(msgs);
  assert.strictEqual(out[0], msgs[0]);
  assert.deepEqual(out[1].content[0], {
    type: 'tool_result',
    tool_use_id: 't1',
    is_error: false,
    content: [IMAGE, { type: 'text', text: 'caption' }, DOCUMENT],
    cache_control: { type: 'ephemeral' },
  });
  assert.equal(out[1].content[0].content[1], msgs[1].content[0].content[1]);
  assert.ok(tokenCountWithEstimation(out) < tokenCountWithEstimation(msgs), 'stripping lowers the count');
});

test('messages without media come back as the same objects; assistant media is left alone', () => {
  const assistantWithImage = { role: 'assistant', content: [img()] };
  const msgs = [
    { role: 'user', content: 'plain string' },
    { role: 'user', content: [{ type: 'text', text: 'no media' }] },
    assistantWithImage,
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'x', content: 'string result' }] },
    { role: 'user', content: [img()] },
    { type: 'progress', data: { anything: [img()] } },
    { type: 'system', subtype: 'local_command', content: 'x' },
  ];
  const out = strip(msgs);
  for (const i of [0, 1, 2, 3, 5, 6]) assert.strictEqual(out[i], msgs[i], `message ${i} is the same object`);
  assert.notStrictEqual(out[4], msgs[4]);
  assert.deepEqual(out[4], { role: 'user', content: [IMAGE] });
});

test('transcript lines keep their shape and every other field', () => {
  const line = {
    parentUuid: 'p',
    isSidechain: false,
    type: 'user',
    uuid: 'u1',
    timestamp: '2026-02-10T21:00:00.000Z',
    message: { role: 'user', content: [{ type: 'text', text: 'see' }, img()] },
    imagePasteIds: [1],
  };
  const out = strip([line]);
  assert.deepEqual(out[0], {
    parentUuid: 'p',
    isSidechain: false,
    type: 'user',
    uuid: 'u1',
    timestamp: '2026-02-10T21:00:00.000Z',
    message: { role: 'user', content: [{ type: 'text', text: 'see' }, IMAGE] },
    imagePasteIds: [1],
  });
  assert.deepEqual(Object.keys(out[0]), Object.keys(line), 'key order kept');
  assert.equal(out[0].imagePasteIds, line.imagePasteIds);
});

test('stripping is idempotent and works on frozen input', () => {
  const msgs = Object.freeze([Object.freeze({ role: 'user', content: Object.freeze([Object.freeze(img())]) })]);
  const once = stripImagesFromMessages(msgs);
  const twice = stripImagesFromMessages(once);
  assert.deepEqual(twice, once);
  assert.strictEqual(twice[0], once[0], 'nothing left to strip: same object');
});

test('stripReinjectedAttachments drops skill_discovery and skill_listing attachments only', () => {
  const msgs = [
    { type: 'user', uuid: 'a', message: { role: 'user', content: 'hi' } },
    { type: 'attachment', uuid: 'b', attachment: { type: 'skill_listing', content: 'skills…' } },
    { type: 'attachment', uuid: 'c', attachment: { type: 'new_file', filename: '/x', content: 'y' } },
    { type: 'attachment', uuid: 'd', attachment: { type: 'skill_discovery', skills: [] } },
    { type: 'attachment', uuid: 'e' },
    { type: 'progress', uuid: 'f' },
    { role: 'user', content: 'api shaped' },
  ];
  const before = structuredClone(msgs);
  const out = stripReinjectedAttachments(msgs);
  assert.deepEqual(msgs, before, 'input never mutated');
  assert.deepEqual(
    out.map((m) => m.uuid ?? m.content),
    ['a', 'c', 'e', 'f', 'api shaped'],
  );
  for (const m of out) assert.ok(msgs.includes(m), 'kept messages are the same objects');
  assert.deepEqual(stripReinjectedAttachments([]), []);
});
