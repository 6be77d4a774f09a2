// Types of js/ai-sdk.js: the summarizer over any Vercel AI SDK language model.

import type { SummarizeCallOptions, SummarizerError, SummaryRequest, SummaryResponseBody } from './summary-request.js';

export type { SummarizeCallOptions, SummarizerError, SummarizerErrorCode, SummaryRequest, SummaryResponseBody } from './summary-request.js';

/**
 * An AI SDK language model (`openai('gpt-4.1-mini')`, `anthropic('claude-haiku-4-5')`,
 * `google('gemini-2.5-flash')`, a `MockLanguageModelV3`), or a model id string for the AI SDK's
 * global provider. Only its identity is read here; the caller's `ai` package calls it.
 */
export type AiSdkLanguageModel = string | { readonly provider: string; readonly modelId: string };

/**
 * Options of {@link aiSdkSummarizer}. Any other key throws (`INVALID_ARGUMENT`, with a "did you
 * mean" hint).
 */
export interface AiSdkSummarizerOptions {
  /**
   * `generateText` of the caller's `ai` package (used with `stream: false`). When the function
   * needed is not given, `ai` is imported at the first call — which needs `ai` resolvable from
   * this package (Node; bundlers resolve it from the app). Passing both is the bundler-proof way.
   */
  generateText?: ((...args: never[]) => unknown) | undefined;
  /** `streamText` of the caller's `ai` package (used with `stream: true`, the default). */
  streamText?: ((...args: never[]) => unknown) | undefined;
  /** Stream the answer and report text to `onText` as it comes. Default true. */
  stream?: boolean | undefined;
  /** The AI SDK's own retries of a retryable API error (it honours `retry-after`). Default 2. */
  maxRetries?: number | undefined;
  /** Time limit of the call, in ms. At most 2147483647 (about 24.8 days, the longest JavaScript timer; every timing option in ms has this limit). Default none; 0 is no limit too. */
  timeoutMs?: number | undefined;
  /** Longest silence tolerated between stream parts (or before the answer), in ms. At most 2147483647 (about 24.8 days, the longest JavaScript timer; every timing option in ms has this limit). Default none; 0 is no limit too. */
  idleTimeoutMs?: number | undefined;
  /** Cap of the output tokens: the smaller of this and the request's `max_tokens` is sent. */
  maxOutputTokens?: number | undefined;
  /** The AI SDK's `providerOptions` (e.g. `{ openai: { reasoningEffort: 'low' } }`). */
  providerOptions?: Record<string, Record<string, unknown>> | undefined;
  /** Extra HTTP headers for the provider. */
  headers?: Record<string, string | undefined> | undefined;
  /** Other call settings of `generateText`/`streamText` (e.g. `{ temperature: 0 }`); the summarizer's own settings win. */
  callSettings?: Record<string, unknown> | undefined;
}

/** A summarizer made by {@link aiSdkSummarizer}. */
export type AiSdkSummarizer = ((request: SummaryRequest, options?: SummarizeCallOptions) => Promise<SummaryResponseBody>) & {
  /**
   * The model's id (`modelId`, or the id string it was made with), read by the library when
   * `context.summaryModel` is absent: the request is sized for that model, `max_tokens`
   * within its output limit (a model the library does not know keeps the defaults).
   */
  readonly summaryModel?: string;
};

/**
 * Makes a summarizer that asks an AI SDK language model for the summary through the caller's
 * `generateText` / `streamText`, and resolves with a Messages API response body. Failures are
 * {@link SummarizerError}s, whatever the SDK or a custom model threw (the original is `cause`;
 * an exception thrown by the caller's own `onText` is passed through); a provider's prompt-too-long answer is `PROMPT_TOO_LONG` and keeps
 * the provider's words, so the library drops the oldest turns and asks again.
 *
 * @throws {TypeError} at once, with `code: 'INVALID_ARGUMENT'`, for a bad model or option.
 * @example
 * import { generateText, streamText } from 'ai';
 * import { openai } from '@ai-sdk/openai';
 * import { aiSdkSummarizer } from 'context-compaction/ai-sdk';
 * const summarize = aiSdkSummarizer(openai('gpt-4.1-mini'), { generateText, streamText });
 */
export declare function aiSdkSummarizer(model: AiSdkLanguageModel, options?: AiSdkSummarizerOptions): AiSdkSummarizer;

export declare namespace aiSdkSummarizer {
  /** The error class, reachable from the function. */
  const SummarizerError: typeof import('./summary-request.js').SummarizerError;
}

/** An error (the AI SDK's `APICallError`, `RetryError`, …, or any other thrown value) as a {@link SummarizerError}. */
export declare function toSummarizerError(e: unknown, label: string, info: { delivered?: boolean }): SummarizerError;
