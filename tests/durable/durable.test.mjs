// A conversation that outlives its process, on an existing engine for per-conversation state:
// a Cloudflare Durable Object (tests/durable/worker.mjs) run in workerd by miniflare, with
// its storage on disk. Between steps the runtime is shut down (miniflare.dispose(): the
// workerd process ends, every object is evicted, requests in flight are cut) and started
// again over the same storage: mid-conversation, while the summary is being written, and
// between the writes of a compaction. Each time: nothing acknowledged is lost, nothing is
// duplicated, and the restored Compactor counts what tokenCountWithEstimation counts.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as cc from '../../pkg/node.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/** The newest date workerd accepts here is its build's; 2026-05-03 is before it. */
const COMPATIBILITY_DATE = '2026-05-03';
const { Miniflare } = await import(process.env.MINIFLARE_MODULE ? pathToFileURL(process.env.MINIFLARE_MODULE).href : 'miniflare');

cc.setEnvironmentDefaults({});
const offline = cc.offlineSummarizer();

// ---- the fake server: the summarizer (the offline one, over HTTP) and the pause points ------

/** Behaviour of the fake server, set by each test. */
const fake = {
  holdSummaries: false,
  holdAt: null,
  summaries: [],
  pauses: [],
  waiters: [],
  held: [],
};

/** Resolves when `pred()` holds (checked whenever the fake server sees a request). */
function until(pred) {
  if (pred()) return Promise.resolve();
  return new Promise((resolve) => fake.waiters.push({ pred, resolve }));
}
function poke() {
  fake.waiters = fake.waiters.filter((w) => (w.pred() ? (w.resolve(), false) : true));
}

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/summarize') {
    const request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    fake.summaries.push(request);
    poke();
    if (fake.holdSummaries) {
      fake.held.push(res); // answered never: the runtime is shut down first
      return;
    }
    const answer = await offline(request, {});
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    return;
  }
  if (url.pathname === '/pause') {
    const at = url.searchParams.get('at');
    fake.pauses.push(at);
    poke();
    if (fake.holdAt === at) {
      fake.held.push(res);
      return;
    }
    res.writeHead(200).end('go');
    return;
  }
  res.writeHead(404).end();
});

let base;
let persist;
before(async () => {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
  persist = mkdtempSync(join(tmpdir(), 'cc-durable-'));
});
after(async () => {
  for (const r of fake.held) r.destroy();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(persist, { recursive: true, force: true });
});

// ---- the runtime ------------------------------------------------------------------------------

/** Starts workerd over the shared storage directory. */
function start() {
  return new Miniflare({
    modules: true,
    scriptPath: join(REPO, 'tests/durable/worker.mjs'),
    modulesRoot: REPO,
    modulesRules: [
      { type: 'ESModule', include: ['**/*.js', '**/*.mjs'] },
      { type: 'CompiledWasm', include: ['**/*.wasm'] },
    ],
    compatibilityDate: COMPATIBILITY_DATE,
    durableObjects: { CONVERSATION: 'Conversation' },
    durableObjectsPersist: persist,
    bindings: { FAKE_URL: base, PAUSE_URL: base },
  });
}

/** Shuts the runtime down (every object evicted, requests in flight cut) and starts it again. */
async function restart(mf) {
  for (const r of fake.held.splice(0)) r.destroy();
  await mf.dispose();
  fake.holdSummaries = false;
  fake.holdAt = null;
  return start();
}

const TOOL_OUTPUT = 'x '.repeat(6_000); // about 3,000 tokens a turn

const pad3 = (n) => String(n).padStart(3, '0');

/** Turn `n` of conversation `name`: a user message and an assistant reply, both marked. */
function turn(name, n) {
  const tag = `${name}/turn-${pad3(n)}`;
  return {
    tag,
    body: {
      user: { role: 'user', content: `${tag}: please look at the logs again\n${TOOL_OUTPUT}` },
      assistant: { role: 'assistant', content: `${tag} reply: the logs show the same warning.` },
    },
  };
}

async function send(mf, name, n) {
  const r = await mf.dispatchFetch(`http://do/conv/${name}/turn`, { method: 'POST', body: JSON.stringify(turn(name, n).body) });
  const body = await r.json();
  assert.equal(r.status, 200, JSON.stringify(body));
  return body;
}

async function state(mf, name) {
  const r = await mf.dispatchFetch(`http://do/conv/${name}/state`);
  const body = await r.json();
  assert.equal(r.status, 200, JSON.stringify(body));
  return body;
}

/** The turns whose messages are in the conversation (not in the summary), in order. */
const liveTags = (messages) =>
  messages.flatMap((m) => {
    const text = typeof m.content === 'string' ? m.content : '';
    const tag = /^[\w-]+\/turn-(\d{3})(:| reply:)/.exec(text);
    return tag ? [`${tag[1]}${tag[2] === ':' ? 'u' : 'a'}`] : [];
  });

/**
 * Checks a conversation after turns `0..acked-1` were acknowledged: the count is the stateless
 * one, every turn's two messages are present once and in order, or were summarized by the
 * compaction that the conversation starts with; the storage holds only the current generation.
 */
function checkConversation(name, s, acked, label) {
  assert.equal(s.tokenCount, cc.tokenCountWithEstimation(s.messages), `${label}: count`);
  assert.equal(s.snapshot.messages, s.messages.length, `${label}: snapshot`);
  const tags = liveTags(s.messages);
  assert.equal(new Set(tags).size, tags.length, `${label}: a message twice: ${tags}`);
  const first = tags.length ? Number(tags[0].slice(0, 3)) : acked;
  const expected = [];
  for (let n = first; n < acked; n++) expected.push(`${pad3(n)}u`, `${pad3(n)}a`);
  assert.deepEqual(tags, expected, `${label}: the turns after the summary, in order`);
  if (first > 0) {
    // The older turns were sent to a summary request of this conversation.
    const sent = fake.summaries.map((r) => JSON.stringify(r)).filter((r) => r.includes(`${name}/turn-`));
    for (let n = 0; n < first; n++) assert.ok(sent.some((r) => r.includes(`${name}/turn-${pad3(n)}:`)), `${label}: turn ${n} lost`);
  }
  const keys = s.keys.filter((k) => k.startsWith('m:'));
  assert.deepEqual(keys, s.messages.map((_, i) => `m:${s.gen}:${String(i).padStart(8, '0')}`), `${label}: storage holds exactly the conversation`);
}

describe('a Compactor in a Durable Object survives restarts', { timeout: 180_000 }, () => {
  test('mid-conversation: restarted after every few turns, it counts and compacts as if it never stopped', async () => {
    const name = 'steady';
    let mf = start();
    let acked = 0;
    let compactions = 0;
    let boots = 0;
    try {
      for (let n = 0; n < 14; n++) {
        const r = await send(mf, name, n);
        acked = n + 1;
        compactions += r.wasCompacted ? 1 : 0;
        if (n % 3 === 2) {
          const before = await state(mf, name);
          mf = await restart(mf);
          const s = await state(mf, name);
          assert.equal(s.boots, before.boots + 1, 'the object was evicted and loaded again');
          boots = s.boots;
          assert.equal(s.tokenCount, before.tokenCount, 'the same count after the restart');
          assert.deepEqual(s.snapshot, before.snapshot, 'the same state after the restart');
          assert.deepEqual(s.messages, before.messages);
          checkConversation(name, s, acked, `after turn ${n}`);
        }
      }
      assert.ok(compactions >= 2, `${compactions} compactions`);
      assert.ok(boots >= 4);
      checkConversation(name, await state(mf, name), acked, 'at the end');
    } finally {
      await mf.dispose();
    }
  });

  test('mid-compaction: shut down while the summary is written, nothing lost or duplicated', async () => {
    const name = 'mid';
    let mf = start();
    try {
      let n = 0;
      // Below the threshold: no compaction yet.
      for (; n < 2; n++) assert.equal((await send(mf, name, n)).wasCompacted, false);
      // The turn that makes it due: its compaction waits for a summary that never comes.
      fake.holdSummaries = true;
      const seen = fake.summaries.length;
      const due = mf.dispatchFetch(`http://do/conv/${name}/turn`, { method: 'POST', body: JSON.stringify(turn(name, n).body) }).catch((e) => e);
      await until(() => fake.summaries.length > seen);
      n++;
      // Its messages were stored before the summary was asked for.
      const pending = await state(mf, name);
      assert.equal(pending.compacting, true);
      assert.equal(pending.keys.filter((k) => k.startsWith('m:')).length, 2 * n, 'the due turn is in storage');
      // A turn during the compaction is stored and acknowledged.
      const during = await send(mf, name, n++);
      assert.equal(during.skipped, 'compacting');
      const before = await state(mf, name);
      assert.equal(before.compacting, true);
      mf = await restart(mf);
      await due; // cut by the shutdown, never acknowledged: its messages were stored before the compaction began
      const s = await state(mf, name);
      assert.equal(s.compacting, false);
      assert.equal(s.messages.length, 2 * n, 'every turn is there, no summary');
      checkConversation(name, s, n, 'after the shutdown mid-compaction');
      // The next turn compacts (the summarizer answers now), once.
      const next = await send(mf, name, n++);
      assert.equal(next.wasCompacted, true, JSON.stringify(next));
      const after = await state(mf, name);
      checkConversation(name, after, n, 'after the compaction that followed');
      mf = await restart(mf);
      checkConversation(name, await state(mf, name), n, 'after one more restart');
    } finally {
      await mf.dispose();
    }
  });

  for (const at of ['before-switch', 'before-delete']) {
    test(`between the writes of a compaction (${at}): the old or the new conversation, whole`, async () => {
      const name = `writes-${at}`;
      let mf = start();
      try {
        let n = 0;
        for (; n < 2; n++) await send(mf, name, n);
        const old = await state(mf, name);
        fake.holdAt = at;
        const paused = fake.pauses.length;
        const due = mf.dispatchFetch(`http://do/conv/${name}/turn`, { method: 'POST', body: JSON.stringify(turn(name, n).body) }).catch((e) => e);
        await until(() => fake.pauses.slice(paused).includes(at));
        n++;
        mf = await restart(mf);
        await due;
        const s = await state(mf, name);
        if (at === 'before-switch') {
          // The switch never happened: the conversation before the compaction, with the turn.
          assert.equal(s.gen, old.gen);
          assert.equal(s.messages.length, 2 * n, JSON.stringify({ keys: s.keys, gen: s.gen, boots: s.boots, collected: s.collected, pauses: fake.pauses }));
        } else {
          // The switch happened: the compacted conversation; the old generation is collected.
          assert.equal(s.gen, old.gen + 1);
          assert.ok(s.messages.length < 2 * n);
        }
        assert.ok(s.collected > 0, 'the keys the crash left behind were collected');
        checkConversation(name, s, n, `after a shutdown ${at}`);
        // And it goes on.
        await send(mf, name, n++);
        checkConversation(name, await state(mf, name), n, `the turn after (${at})`);
      } finally {
        await mf.dispose();
      }
    });
  }
});
