// Stand-in for the AI SDK provider packages the README samples import (`@ai-sdk/openai`,
// `@ai-sdk/anthropic`): `openai(id)` / `anthropic(id)` give an `ai/test` mock language model
// that answers summary requests with the fake summary and anything else with a short text.
import { MockLanguageModelV3 } from 'ai/test';
import { simulateReadableStream } from 'ai';

export function fakeAiSdkModel(modelId) {
  const answer = (prompt) => {
    const text = JSON.stringify(prompt);
    if (!text.includes('<summary>')) return 'Done: the tests pass.';
    return `<summary>\n${'The user is building a parser in src/parser.ts; the tests pass. '.repeat(20)}\n</summary>`;
  };
  const usage = (prompt) => ({
    inputTokens: { total: Math.ceil(JSON.stringify(prompt).length / 4), noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 50, text: 50, reasoning: undefined },
  });
  return new MockLanguageModelV3({
    provider: 'fake',
    modelId,
    doGenerate: async ({ prompt }) => ({
      content: [{ type: 'text', text: answer(prompt) }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage: usage(prompt),
      warnings: [],
    }),
    doStream: async ({ prompt }) => ({
      stream: simulateReadableStream({
        chunks: [
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: answer(prompt) },
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(prompt) },
        ],
      }),
    }),
  });
}

export const openai = (id) => fakeAiSdkModel(id);
export const anthropic = (id) => fakeAiSdkModel(id);
