// A `useChat` backend route (Request → Response, as in a Next.js route handler or Hono) that
// keeps UIMessage[] in a file store, compacts when due, streams progress to the page as
// `data-compaction` parts and persists the compacted conversation.
// Run: node examples/ai-sdk/chat-route.mjs   (no API key: fake models from ai/test)
import { mkdtemp, readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// In your app: 'context-compaction' and 'context-compaction/agents/ai-sdk'.
import { tokenCountWithEstimation } from '../../pkg/node.js';
import { createChatHandler } from '../../pkg/agents/ai-sdk.js';
import { aiSdkSummarizer } from './agent-loop.mjs';
import { fakeChatModel, fakeSummaryModel } from './fake-models.mjs';

/** A file store: one JSON file per chat, replaced atomically (write, then rename). */
export function fileChatStore(dir) {
  const file = (chatId) => join(dir, `${encodeURIComponent(chatId)}.json`);
  return {
    async load(chatId) {
      try {
        return JSON.parse(await readFile(file(chatId), 'utf8'));
      } catch (e) {
        if (e.code === 'ENOENT') return null;
        throw e;
      }
    },
    async save(chatId, messages) {
      const tmp = `${file(chatId)}.${process.pid}.tmp`;
      await writeFile(tmp, JSON.stringify(messages));
      await rename(tmp, file(chatId));
    },
  };
}

/** Reads a UI message stream response (server-sent events) into its chunks. */
export async function readChunks(response) {
  const text = await response.text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)));
}

export async function main({ log = console.log, dir } = {}) {
  const storeDir = dir ?? (await mkdtemp(join(tmpdir(), 'chat-store-')));
  const store = fileChatStore(storeDir);
  const model = fakeChatModel();
  const POST = createChatHandler({
    model,
    summarize: aiSdkSummarizer(fakeSummaryModel()),
    store,
    system: 'You are a helpful assistant.',
    config: { contextWindow: 40_000 }, // small, so the example compacts after a few turns
  });

  const turns = [];
  for (let i = 0; i < 6; i++) {
    // The page sends only its new message (useChat's prepareSendMessagesRequest): the
    // server's stored copy is the compacted one.
    const message = { id: `u${i}`, role: 'user', parts: [{ type: 'text', text: `Note ${i} about src/part-${i}.ts: ` + 'details '.repeat(1500) }] };
    const response = await POST(new Request('http://localhost/api/chat', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'chat-1', message }),
    }));
    const chunks = await readChunks(response);
    const progress = chunks.filter((c) => c.type === 'data-compaction').map((c) => c.data);
    const stored = await store.load('chat-1');
    turns.push({ status: response.status, progress, storedMessages: stored.length, storedTokens: tokenCountWithEstimation(stored), chunks });
    const done = progress.find((p) => p.status === 'compacted');
    log(`turn ${i}: ${stored.length} messages stored, ${tokenCountWithEstimation(stored)} tokens` +
      (done ? ` — compacted ${done.tokensBefore} → ${done.tokensAfter} (${progress.length} progress parts)` : ''));
  }
  return { turns, stored: await store.load('chat-1'), prompts: model.prompts, storeDir };
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
