// A Cloudflare Worker with one Durable Object per conversation, keeping a Compactor across
// evictions and restarts (issue 11, "Conversations that outlive one process"). Run by
// tests/durable/durable.test.mjs in workerd through miniflare; the summarizer is a local
// fake server (env.FAKE_URL).
//
// Storage layout (the Durable Object's own key-value storage):
//   m:<gen>:<index>  one message per key (index zero-padded, so keys list in order)
//   meta             { gen, length, snapshot }: which generation is the conversation, how many
//                    of its messages, and the Compactor's snapshot read with them
// Write order, safe at any crash point:
//   * a turn: its new messages and the new `meta` in one put (atomic); when more than one
//     put is needed, the messages first: `meta` is written last and says what counts.
//   * a compaction: the compacted conversation is written as a NEW generation (nothing points
//     to it yet), then `meta` switches to it in one put of one key, then the old generation is
//     deleted. A crash before the switch leaves the old conversation (the compaction runs
//     again when due); after it, the compacted one. Keys of other generations, or past
//     `length`, are garbage and are deleted when the object loads.
// A compaction still waiting for its summary is not in storage at all: after a crash the
// restored Compactor holds every message and compacts again when due. Nothing is lost and
// nothing is written twice.
import { initSync, Compactor } from '../../pkg/web.js';
import wasm from '../../pkg/context_compaction_bg.wasm';

initSync({ module: wasm });

const MODEL = 'claude-opus-4-6';
/** Auto-compaction at 9,000 tokens, so a test conversation reaches it in a few turns. */
const CONFIG = { autoCompactPctOverride: 5 };
/** Keys per storage call (the Durable Object limit is 128). */
const BATCH = 100;
const key = (gen, i) => `m:${gen}:${String(i).padStart(8, '0')}`;

export class Conversation {
  constructor(ctx, env) {
    this.ctx = ctx;
    this.env = env;
    this.storage = ctx.storage;
    /** Persists run one after the other, each writing the state of its moment. */
    this.queue = Promise.resolve();
    ctx.blockConcurrencyWhile(() => this.load());
  }

  /** The Compactor's options: the same at creation and at every restore. */
  options() {
    return {
      model: MODEL,
      config: CONFIG,
      summarize: async (request, { signal }) => {
        const r = await fetch(`${this.env.FAKE_URL}/summarize`, { method: 'POST', body: JSON.stringify(request), signal });
        if (!r.ok) {
          const e = new Error(`summarizer answered ${r.status}`);
          e.status = r.status;
          throw e;
        }
        return r.json();
      },
    };
  }

  /** Loads the conversation and its snapshot, restores the Compactor, drops garbage keys. */
  async load() {
    const boots = ((await this.storage.get('boots')) ?? 0) + 1;
    await this.storage.put('boots', boots);
    this.boots = boots;
    const meta = await this.storage.get('meta');
    this.gen = meta?.gen ?? 0;
    const all = await this.storage.list({ prefix: 'm:' });
    const messages = [];
    const garbage = [];
    for (const [k, v] of all) {
      const [, gen, index] = k.split(':');
      if (meta && Number(gen) === meta.gen && Number(index) < meta.length) messages.push(v);
      else garbage.push(k);
    }
    this.chat = meta ? Compactor.restore(meta.snapshot, messages, this.options()) : new Compactor(this.options());
    this.stored = this.chat.messages;
    for (let i = 0; i < garbage.length; i += BATCH) await this.storage.delete(garbage.slice(i, i + BATCH));
    this.collected = garbage.length;
  }

  /** Writes the Compactor's current state (queued behind any write in progress). */
  persist() {
    const p = this.queue.then(() => this.persistNow());
    this.queue = p.catch(() => {});
    return p;
  }

  async persistNow() {
    // Read together, at one moment: the snapshot describes exactly these messages.
    const messages = this.chat.messages;
    const snapshot = this.chat.snapshot();
    const appended = this.stored.length <= messages.length && this.stored.every((m, i) => messages[i] === m);
    if (appended) {
      const entries = Object.entries(Object.fromEntries(messages.slice(this.stored.length).map((m, j) => [key(this.gen, this.stored.length + j), m])));
      const meta = { gen: this.gen, length: messages.length, snapshot };
      if (entries.length < BATCH) {
        await this.storage.put({ ...Object.fromEntries(entries), meta });
      } else {
        for (let i = 0; i < entries.length; i += BATCH) await this.storage.put(Object.fromEntries(entries.slice(i, i + BATCH)));
        await this.storage.put('meta', meta);
      }
    } else {
      // Compacted: a new generation, then the switch, then the old one goes.
      const old = this.gen;
      const gen = old + 1;
      for (let i = 0; i < messages.length; i += BATCH) {
        await this.storage.put(Object.fromEntries(messages.slice(i, i + BATCH).map((m, j) => [key(gen, i + j), m])));
      }
      await this.pause('before-switch');
      await this.storage.put('meta', { gen, length: messages.length, snapshot });
      this.gen = gen;
      await this.pause('before-delete');
      const stale = [...(await this.storage.list({ prefix: `m:${old}:` })).keys()];
      for (let i = 0; i < stale.length; i += BATCH) await this.storage.delete(stale.slice(i, i + BATCH));
    }
    this.stored = messages;
  }

  /** Test hook: asks the fake server whether to stop here (it may never answer). */
  async pause(at) {
    if (this.env.PAUSE_URL) await (await fetch(`${this.env.PAUSE_URL}/pause?at=${at}`)).text();
  }

  async fetch(request) {
    const url = new URL(request.url);
    try {
      if (request.method === 'POST' && url.pathname.endsWith('/turn')) {
        const { user, assistant } = await request.json();
        this.chat.pushMany([user, assistant]);
        // Decided now (the turn is counted); the summary, when one is due, is awaited below.
        const compaction = this.chat.maybeAutoCompact();
        // Stored before the summary is asked for: a crash while it is written loses nothing.
        await this.persist();
        const o = await compaction;
        // The compacted conversation, or the failure count (nothing new when it was skipped).
        await this.persist();
        return Response.json({
          length: this.chat.length,
          tokenCount: this.chat.tokenCount(),
          wasCompacted: o.wasCompacted,
          skipped: o.skipped ?? null,
          error: o.error ? { code: o.error.code, message: o.error.message } : null,
        });
      }
      if (url.pathname.endsWith('/state')) {
        const keys = [...(await this.storage.list()).keys()];
        return Response.json({
          messages: this.chat.messages,
          tokenCount: this.chat.tokenCount(),
          snapshot: this.chat.snapshot(),
          tracking: this.chat.tracking,
          compacting: this.chat.compacting,
          gen: this.gen,
          boots: this.boots,
          collected: this.collected,
          keys,
        });
      }
      return new Response('not found', { status: 404 });
    } catch (e) {
      return Response.json({ error: { code: e.code ?? null, message: String(e.message ?? e) } }, { status: 500 });
    }
  }
}

export default {
  /** /conv/<name>/<action>: the Durable Object of conversation <name>. */
  async fetch(request, env) {
    const [, conv, name] = new URL(request.url).pathname.split('/');
    if (conv !== 'conv' || !name) return new Response('not found', { status: 404 });
    return env.CONVERSATION.get(env.CONVERSATION.idFromName(name)).fetch(request);
  },
};
