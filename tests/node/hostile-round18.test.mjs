// Eighteenth round of hostile inputs (hostile18): each test fails on the package before the
// fix (86026b2) and passes after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runInNewContext } from 'node:vm';
import { compactConversation, toApiMessages, validateForApi } from '../../pkg/node.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d494844520000001000000010080200000090916836', 'hex');
const aiImage = (image) => [{ role: 'user', content: [{ type: 'image', image, mediaType: 'image/png' }, { type: 'text', text: 'what is this?' }] }];
const sourceOf = (messages) => toApiMessages(messages)[0].content[0].source;

test('media bytes made in another realm (vm, an iframe) or a SharedArrayBuffer are sent as their bytes, not as empty data', () => {
  const otherRealm = runInNewContext('({ ab: new ArrayBuffer(4) })');
  new Uint8Array(otherRealm.ab).set([1, 2, 3, 4]);
  assert.deepEqual(sourceOf(aiImage(otherRealm.ab)), { type: 'base64', media_type: 'image/png', data: 'AQIDBA==' });
  const shared = new SharedArrayBuffer(PNG.length);
  new Uint8Array(shared).set(PNG);
  assert.deepEqual(sourceOf(aiImage(shared)), { type: 'base64', media_type: 'image/png', data: PNG.toString('base64') });
  // What worked before still works: a view at an offset, a Buffer, an ArrayBuffer.
  const ab = new ArrayBuffer(8);
  new Uint8Array(ab).set([9, 9, 1, 2, 3, 9, 9, 9]);
  assert.equal(sourceOf(aiImage(new Uint8Array(ab, 2, 3))).data, 'AQID');
  assert.equal(sourceOf(aiImage(new DataView(ab, 2, 3))).data, 'AQID');
  assert.equal(sourceOf(aiImage(PNG)).data, PNG.toString('base64'));
});

test('media data that is no bytes, text or URL (a Blob, a File) is refused naming the message when sent, not sent as an empty image; a compaction still reads it', async () => {
  for (const data of [new Blob([PNG], { type: 'image/png' }), new File([PNG], 'cat.png'), { bytes: [1, 2] }, new Map()]) {
    const tag = Object.prototype.toString.call(data).slice(8, -1);
    const kind = tag === 'Object' ? 'an object' : `a ${tag}`;
    const messages = [{ role: 'user', content: 'hello' }, { role: 'assistant', content: 'hi' }, ...aiImage(data)];
    for (const f of [toApiMessages, validateForApi]) {
      assert.throws(() => f(messages), (e) => e.code === 'INVALID_MESSAGE' && /messages\[2\]/.test(e.message)
        && e.message.includes(`media data given as ${kind} cannot be sent`), `${f.name} ${kind}`);
    }
    // The file part of the AI SDK too.
    assert.throws(() => toApiMessages([{ role: 'user', content: [{ type: 'file', data, mediaType: 'application/pdf' }] }]),
      (e) => e.code === 'INVALID_MESSAGE' && e.message.includes(`${kind} cannot be sent`));
  }
  assert.throws(() => toApiMessages(aiImage(new Blob([PNG]))), (e) => /new Uint8Array\(await blob\.arrayBuffer\(\)\)/.test(e.message));
  // A compaction sends no media: the Blob reads as the image it stands for there.
  const long = [];
  for (let i = 0; i < 4; i++) long.push({ role: 'user', content: `q${i} ${'q'.repeat(4000)}` }, { role: 'assistant', content: `a${i} ${'a'.repeat(4000)}` });
  long.push(...aiImage(new Blob([PNG])), { role: 'assistant', content: 'a cat' }, { role: 'user', content: 'thanks' });
  let request;
  const r = await compactConversation(long, { model: 'claude-sonnet-4-5', summarize: async (req) => { request = req; return 'The user showed an image of a cat.'; } });
  assert.ok(r.summaryMessages.length >= 1);
  assert.ok(!JSON.stringify(request).includes('"data":""'), 'no empty media in the summary request');
});

test('a readFile answering bytes (fs.promises.readFile(path) without an encoding) restores the file\'s text, not nothing', async () => {
  const messages = [
    { role: 'user', content: `Read /src/a.js please. ${'q'.repeat(8000)}` },
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/src/a.js' } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'y'.repeat(8000) }] },
    { role: 'assistant', content: 'Read it.' },
  ];
  const fresh = 'export const answer = 42; // fresh from disk, é';
  for (const answer of [Buffer.from(fresh), new Uint8Array(Buffer.from(fresh)), new Uint8Array(Buffer.from(fresh)).buffer]) {
    const r = await compactConversation(messages, {
      model: 'claude-sonnet-4-5', summarize: async () => 'The user asked to read /src/a.js.',
      readFileState: { '/src/a.js': { content: 'stale', timestamp: 1 } }, readFile: async () => answer,
    });
    assert.deepEqual(r.restoredFiles.map((f) => f.name), ['/src/a.js'], Object.prototype.toString.call(answer));
    assert.ok(JSON.stringify(r.attachments).includes(fresh.replace('é', '')), 'the fresh text is restored');
  }
});
