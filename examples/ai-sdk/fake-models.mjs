// Fake AI SDK language models for the examples (no API key, no network): `ai/test`'s
// MockLanguageModelV3 with scripted answers and usage computed from the prompt it is sent.
import { MockLanguageModelV3 } from 'ai/test';
import { simulateReadableStream } from 'ai';

/** Rough prompt size in tokens (4 characters a token), as a provider would report it. */
export function promptTokens(prompt) {
  return Math.ceil(JSON.stringify(prompt).length / 4);
}

const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output, text: output, reasoning: 0 },
});

/**
 * An agent model that reads `files` one by one with the `readFile` tool, then answers. Every
 * prompt it receives is recorded in `model.prompts` (its size in tokens, its message count).
 */
export function fakeAgentModel({ files, modelId = 'gpt-4.1' }) {
  const prompts = [];
  const next = (prompt) => {
    prompts.push({ tokens: promptTokens(prompt), messages: prompt.length, prompt });
    const reads = prompt.flatMap((m) => (m.role === 'tool' ? m.content : [])).length;
    const done = prompts.length > files.length;
    return { done, reads, input: promptTokens(prompt) };
  };
  const model = new MockLanguageModelV3({
    modelId,
    doGenerate: async ({ prompt }) => {
      const { done, input } = next(prompt);
      const i = prompts.length - 1;
      const content = done
        ? [{ type: 'text', text: `Reviewed ${files.length} files; all good.` }]
        : [{ type: 'tool-call', toolCallId: `call-${i}`, toolName: 'readFile', input: JSON.stringify({ path: files[i] }) }];
      return { content, finishReason: { unified: done ? 'stop' : 'tool-calls', raw: undefined }, usage: usage(input, 20), warnings: [] };
    },
    doStream: async ({ prompt }) => {
      const { done, input } = next(prompt);
      const i = prompts.length - 1;
      const parts = done
        ? [
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: `Reviewed ${files.length} files; ` },
            { type: 'text-delta', id: 't', delta: 'all good.' },
            { type: 'text-end', id: 't' },
          ]
        : [{ type: 'tool-call', toolCallId: `call-${i}`, toolName: 'readFile', input: JSON.stringify({ path: files[i] }) }];
      return {
        stream: simulateReadableStream({
          chunks: [
            { type: 'stream-start', warnings: [] },
            ...parts,
            { type: 'finish', finishReason: { unified: done ? 'stop' : 'tool-calls', raw: undefined }, usage: usage(input, 20) },
          ],
        }),
      };
    },
  });
  model.prompts = prompts;
  return model;
}

/**
 * A fake summary model: its answer names every path it sees in the request (as a model's
 * summary would), inside `<summary>` tags.
 */
export function fakeSummaryModel() {
  return new MockLanguageModelV3({
    modelId: 'summary-model',
    doGenerate: async ({ prompt }) => {
      const text = JSON.stringify(prompt);
      const paths = [...new Set(text.match(/src\/[\w.-]+/g) ?? [])];
      const summary = `<summary>The user asked for a review of the project files. Files read: ${paths.join(', ')}. No errors so far; the review goes on.</summary>`;
      return {
        content: [{ type: 'text', text: summary }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: usage(promptTokens(prompt), Math.ceil(summary.length / 4)),
        warnings: [],
      };
    },
  });
}

/** A fake chat model that streams a short answer to the last user message. */
export function fakeChatModel({ modelId = 'gpt-4.1' } = {}) {
  const prompts = [];
  const model = new MockLanguageModelV3({
    modelId,
    doStream: async ({ prompt }) => {
      prompts.push({ tokens: promptTokens(prompt), messages: prompt.length, prompt });
      const lastUser = [...prompt].reverse().find((m) => m.role === 'user');
      const asked = lastUser?.content?.find?.((p) => p.type === 'text')?.text ?? '';
      return {
        stream: simulateReadableStream({
          chunks: [
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'Noted: ' },
            { type: 'text-delta', id: 't', delta: asked.slice(0, 40) },
            { type: 'text-end', id: 't' },
            { type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage: usage(promptTokens(prompt), 15) },
          ],
        }),
      };
    },
  });
  model.prompts = prompts;
  return model;
}
