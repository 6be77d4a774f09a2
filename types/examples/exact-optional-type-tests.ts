// Type-level tests under `exactOptionalPropertyTypes` (types/tsconfig.exact.json, round 18,
// integrations18): the AI SDK's `LanguageModelUsage` (counts `number | undefined`) is a usage
// the counts take, and an option given as `undefined` is absent, as at run time; what the
// library returns still goes to the SDKs (anthropic-send-type-tests.ts is checked here too).
// Nothing here runs; checked by `bash types/check.sh`.

import type Anthropic from '@anthropic-ai/sdk';
import type { LanguageModelUsage, ModelMessage } from 'ai';
import { Compactor, anthropicSummarizer, openaiSummarizer, shouldAutoCompact, tokenCountWithEstimation, type CompactHooks } from 'context-compaction';
import { runToolLoop } from '../../js/agents/anthropic.js';

declare const messages: ModelMessage[];
declare const usage: LanguageModelUsage;
shouldAutoCompact(messages, 'gpt-5', { usage });
tokenCountWithEstimation(messages, { usage, usageAt: 1 });
tokenCountWithEstimation(messages, { usage: { inputTokens: undefined, outputTokens: 12 } });

// An option given as a value that may be `undefined` is taken as absent, as at run time: the
// README's and the examples' own calls (`process.env.…`, `text || undefined`).

const summarize = anthropicSummarizer({ apiKey: process.env['ANTHROPIC_API_KEY'], maxRetries: 2 });
openaiSummarizer({ apiKey: process.env['OPENAI_API_KEY'], model: 'gpt-4.1-mini', baseURL: process.env['OPENAI_BASE_URL'] });
declare const typed: string;
const hooks: CompactHooks = {
  preCompact: ({ customInstructions }) => ({ instructions: customInstructions ?? undefined, userDisplayMessage: 'compacting' }),
};
const chat = new Compactor({ model: 'claude-sonnet-4-5', summarize, hooks });
export async function exactCalls(client: Anthropic, signal?: AbortSignal): Promise<void> {
  await chat.compact({ customInstructions: typed.trim() || undefined, signal });
  await runToolLoop({ client, compactor: chat, request: { model: 'claude-sonnet-4-5', max_tokens: 1024 }, signal, maxSteps: undefined });
}
