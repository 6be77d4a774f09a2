// Round fourteen, the lead's own fixes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as cc from '../../pkg/node.js';

cc.setEnvironmentDefaults({});

const history = [
  { role: 'user', content: 'Read the files.' },
  { role: 'assistant', content: `Reading them. ${'x'.repeat(4_000)}` },
  { role: 'user', content: 'Go on.' },
];

/** Compacts `history` with `state` as readFileState; the summarizer runs `meanwhile` first. */
async function compactWith(state, meanwhile) {
  const r = await cc.compactConversation(history, {
    model: 'claude-sonnet-4-5',
    readFileState: state,
    summarize: async () => {
      meanwhile(state);
      return '<summary>The user asked for files to be read.</summary>';
    },
  });
  assert.ok(r.summaryMessages.length > 0);
}

test('array readFileState: a record read meanwhile under another path, with the content and time of one read before, stays', async () => {
  // `cp -p a b` then reading b: same content, same mtime, another file.
  const state = [{ path: '/a', content: 'same', timestamp: 5 }];
  await compactWith(state, (s) => s.push({ path: '/b', content: 'same', timestamp: 5 }));
  assert.deepEqual(state.map((x) => x.path), ['/b']);
});

test('array readFileState: records without content are told apart by path', async () => {
  const state = [{ path: '/a' }, { name: 'skill-x' }];
  await compactWith(state, (s) => s.push({ path: '/new' }, { name: 'skill-y' }));
  assert.deepEqual(state.map((x) => x.path ?? x.name), ['/new', 'skill-y']);
});

test('array readFileState: what was read is still cleared, including the same path read again unchanged in a new record', async () => {
  const state = [{ path: '/a', content: 'one', timestamp: 1 }, { path: '/b', content: 'two', timestamp: 2 }];
  await compactWith(state, (s) => {
    s[0] = { path: '/a', content: 'one', timestamp: 1 }; // the same read, a new object
    s.push({ path: '/c', content: 'one', timestamp: 1 });
  });
  assert.deepEqual(state.map((x) => x.path), ['/c']);
});

test('array readFileState: a record whose path getter throws is kept, and the compaction still succeeds', async () => {
  const state = [{ path: '/a', content: 'one', timestamp: 1 }];
  const odd = { content: 'one', timestamp: 1, get path() { throw new Error('no path'); } };
  await compactWith(state, (s) => s.push(odd));
  assert.equal(state.length, 1);
  assert.equal(state[0], odd);
});
