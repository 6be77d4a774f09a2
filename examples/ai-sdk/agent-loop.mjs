// An AI SDK agent loop (generateText + stopWhen) that compacts in prepareStep when due.
// Run: node examples/ai-sdk/agent-loop.mjs   (no API key: fake models from ai/test)
import { generateText, stepCountIs, tool, jsonSchema } from 'ai';
// In your app: 'context-compaction' and 'context-compaction/agents/ai-sdk'.
import { tokenCountWithEstimation } from '../../pkg/node.js';
import { compactionPrepareStep } from '../../pkg/agents/ai-sdk.js';
import { fakeAgentModel, fakeSummaryModel } from './fake-models.mjs';

/** A summarizer over any AI SDK model: the library's request in, the model's text out. */
export function aiSdkSummarizer(model) {
  return async (request, { signal }) => {
    const { text } = await generateText({ model, system: request.system, messages: request.messages, maxOutputTokens: request.max_tokens, abortSignal: signal });
    return text;
  };
}

export async function main({ log = console.log } = {}) {
  const files = Array.from({ length: 8 }, (_, i) => `src/module-${i}.js`);
  const model = fakeAgentModel({ files });
  const readFile = tool({
    description: 'Read a file of the project',
    inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
    execute: async ({ path }) => `// ${path}\n` + `export const value = "${path}";\n`.repeat(300), // ~3,000 tokens
  });
  const system = 'You review code. Read every file before answering.';
  const prepareStep = compactionPrepareStep({
    system, // counted before the first usage is known
    summarize: aiSdkSummarizer(fakeSummaryModel()),
    config: { contextWindow: 40_000 }, // a small window, so the example compacts after a few files
    onCompaction: (r, { stepNumber }) => log(`step ${stepNumber}: compacted ${r.preCompactTokenCount} → ${r.truePostCompactTokenCount} tokens`),
  });
  let messages = [{ role: 'user', content: `Review these files: ${files.join(', ')}` }];
  const result = await generateText({ model, system, tools: { readFile }, messages, stopWhen: stepCountIs(20), prepareStep });
  const uncompacted = [...messages, ...result.response.messages];
  messages = prepareStep.conversation(uncompacted);
  const report = {
    steps: result.steps.length,
    compactions: prepareStep.compactions,
    largestPrompt: Math.max(...model.prompts.map((p) => p.tokens)),
    promptTokens: model.prompts.map((p) => p.tokens),
    tokensWithout: tokenCountWithEstimation(uncompacted),
    tokensAfter: tokenCountWithEstimation(messages),
    text: result.text,
    messages,
    lastResult: prepareStep.lastResult,
  };
  log(`${report.steps} steps, ${report.compactions} compactions; prompts (tokens): ${report.promptTokens.join(', ')}`);
  log(`history to keep: ${report.tokensAfter} tokens (${report.tokensWithout} without compaction); answer: ${report.text}`);
  return report;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
