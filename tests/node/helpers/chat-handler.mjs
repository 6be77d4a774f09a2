// A createChatHandler over a mock AI SDK model that answers "ok" (hostile-round16 and
// review-round16: what the route stores and sends).
export async function mockChatRoute(summarize) {
  const { createChatHandler, memoryChatStore } = await import('../../../pkg/agents/ai-sdk.js');
  const { simulateReadableStream } = await import('ai');
  const { MockLanguageModelV3 } = await import('ai/test');
  const usage = { inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 2, text: 2, reasoning: 0 } };
  /** The prompt of every model call, in order. */
  const prompts = [];
  const model = new MockLanguageModelV3({
    modelId: 'gpt-4.1',
    doStream: async (o) => {
      prompts.push(o.prompt);
      return {
        stream: simulateReadableStream({
          chunks: [
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'ok' },
            { type: 'text-end', id: 't' },
            { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage },
          ],
        }),
      };
    },
  });
  const store = memoryChatStore();
  const handle = createChatHandler({ model, summarize, store, system: 'Be careful.' });
  /** POSTs `body` to the route. */
  const post = (body) => handle(new Request('http://x/api/chat', { method: 'POST', body: JSON.stringify(body) }));
  return { post, prompts, store };
}
