// Type-level tests under `exactOptionalPropertyTypes` (types/tsconfig.exact.json, round 18,
// integrations18): the AI SDK's `LanguageModelUsage` (counts `number | undefined`) is a usage
// the counts take, as it is at run time. Nothing here runs; checked by `bash types/check.sh`.

import type { LanguageModelUsage, ModelMessage } from 'ai';
import { shouldAutoCompact, tokenCountWithEstimation } from 'context-compaction';

declare const messages: ModelMessage[];
declare const usage: LanguageModelUsage;
shouldAutoCompact(messages, 'gpt-5', { usage });
tokenCountWithEstimation(messages, { usage, usageAt: 1 });
tokenCountWithEstimation(messages, { usage: { inputTokens: undefined, outputTokens: 12 } });
