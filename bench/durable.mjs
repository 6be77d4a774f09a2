// Conversations that outlive one process (issue 11): what a live conversation costs in memory,
// and how many conversations one core serves when every request may land on a process that has
// to restore the conversation first (a serverless function, a Durable Object woken up).
// Used by bench/bench.mjs; `node bench/durable.mjs` prints the numbers alone.
//
// A "served" conversation is what the Durable Object of tests/durable/worker.mjs does per
// request, minus the storage and the network: Compactor.restore(snapshot, messages, options)
// over the messages as storage hands them back, pushMany of the new turn, maybeAutoCompact
// (below the threshold: nothing to summarize), and snapshot() to store again. The warm case is
// the same request on an object still in memory (no restore).

import v8 from 'node:v8';
import vm from 'node:vm';
import { performance } from 'node:perf_hooks';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

/** Bytes of JS heap in use after a full collection. */
function heapUsed() {
  gc();
  gc();
  return v8.getHeapStatistics().used_heap_size;
}

/** Median of numbers. */
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * Measures with the package `cc` (`memBytes()`: its WASM linear memory in bytes) on the
 * conversation `history` (messages of one shape; the first `size` are used); `summarize`
 * defaults to `cc.offlineSummarizer()` (pass one when `cc` is the first module's glue alone).
 */
export async function measureDurable({ cc, memBytes, history, model, summarize, size = 100, live = 1_000, batches = 15, batchMs = 40 }) {
  const messages = history.slice(0, size);
  const turn = [
    { role: 'user', content: 'And now the tests for the parser, please.' },
    { role: 'assistant', content: 'Running them now; two fail on the empty-input case.' },
  ];
  const options = { model, summarize: summarize ?? cc.offlineSummarizer() };
  const base = new cc.Compactor({ ...options, messages });
  const stored = { messages: structuredClone(messages), snapshot: structuredClone(base.snapshot()) };
  const jsonBytes = Buffer.byteLength(JSON.stringify(messages));

  // Memory: `live` conversations held at once, each restored from the stored snapshot. Their
  // messages are shared (the application holds them anyway): what is measured is what the
  // library adds per conversation, in WASM memory and in the JS heap.
  const keep = [];
  const wasm0 = memBytes();
  const heap0 = heapUsed();
  for (let i = 0; i < live; i++) keep.push(cc.Compactor.restore(stored.snapshot, stored.messages, options));
  const wasm1 = memBytes();
  const heap1 = heapUsed();
  const perConversation = (wasm1 - wasm0 + Math.max(0, heap1 - heap0)) / live;
  // The same with each conversation's own copy of its messages (what a process holding only
  // its live conversations pays in all).
  const copies = [];
  const heap2 = heapUsed();
  for (let i = 0; i < live / 10; i++) copies.push(structuredClone(stored.messages));
  const messagesBytes = (heapUsed() - heap2) / (live / 10);
  for (const c of keep) c.free();
  keep.length = 0;
  copies.length = 0;

  // Throughput on this one thread: batches of serves, the median rate.
  const serveCold = async () => {
    const c = cc.Compactor.restore(stored.snapshot, stored.messages, options);
    c.pushMany(turn);
    await c.maybeAutoCompact();
    const s = c.snapshot();
    c.free();
    return s;
  };
  let warm = cc.Compactor.restore(stored.snapshot, stored.messages, options);
  const serveWarm = async () => {
    if (warm.length >= size + 200) {
      // Kept near the same size (restored again every 100 serves).
      warm.free();
      warm = cc.Compactor.restore(stored.snapshot, stored.messages, options);
    }
    warm.pushMany(turn);
    await warm.maybeAutoCompact();
    return warm.snapshot();
  };
  const rate = async (fn) => {
    const end = performance.now() + 200;
    while (performance.now() < end) await fn();
    const rates = [];
    for (let b = 0; b < batches; b++) {
      let n = 0;
      const t0 = performance.now();
      while (performance.now() - t0 < batchMs) {
        await fn();
        n++;
      }
      rates.push((n * 1000) / (performance.now() - t0));
    }
    return median(rates);
  };
  const coldRate = await rate(serveCold);
  const warmRate = await rate(serveWarm);
  // Outcome check: a served conversation counts what the stateless function counts.
  const check = cc.Compactor.restore(stored.snapshot, stored.messages, options);
  check.pushMany(turn);
  const agrees = check.tokenCount() === cc.tokenCountWithEstimation([...messages, ...turn]);
  check.free();
  warm.free();
  base.free();
  return {
    size,
    live,
    jsonBytes,
    perConversationBytes: perConversation,
    wasmBytes: (wasm1 - wasm0) / live,
    heapBytes: Math.max(0, heap1 - heap0) / live,
    messagesBytes,
    coldPerSecond: coldRate,
    warmPerSecond: warmRate,
    agrees,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cc = await import('../pkg/node.js');
  const { initSync } = await import('../pkg/context_compaction.js');
  const exports = initSync();
  const lines = cc.parseTranscript((await import('node:fs')).readFileSync(new URL('../../shared/transcripts/cc_long_autocompact_4d5611e5.jsonl', import.meta.url), 'utf8'));
  const history = lines.filter((l) => (l.type === 'user' || l.type === 'assistant') && !l.isSidechain);
  console.log(await measureDurable({ cc, memBytes: () => exports.memory.buffer.byteLength, history, model: 'claude-opus-4-6' }));
}
