// Types of js/langchain.js: the summarizer over any LangChain chat model.

import type { SummarizeCallOptions, SummaryRequest, SummaryResponseBody } from './summary-request.js';

export type { SummarizeCallOptions, SummarizerError, SummarizerErrorCode, SummaryRequest, SummaryResponseBody } from './summary-request.js';

/**
 * Any LangChain chat model (`ChatOpenAI`, `ChatAnthropic`, `ChatGoogleGenerativeAI`,
 * `FakeListChatModel`, …): what is called is `stream` (or `invoke`) with plain `{role, content}`
 * messages and `{signal, ...callOptions}`.
 */
export interface LangChainChatModel {
  invoke?(input: never, options?: never): unknown;
  stream?(input: never, options?: never): unknown;
}

/**
 * Options of {@link langchainSummarizer}. Any other key throws (`INVALID_ARGUMENT`, with a "did
 * you mean" hint).
 */
export interface LangChainSummarizerOptions {
  /** Stream the answer (`model.stream`) and report text to `onText` as it comes; else `model.invoke`. Default true. */
  stream?: boolean | undefined;
  /**
   * Retries here of a transient failure (408/409/429 but `insufficient_quota`/5xx/529,
   * "overloaded", "rate limit", network errors, timeouts). Default 2. LangChain models retry by
   * themselves too (their `maxRetries`, default 6): set one of the two to 0.
   */
  maxRetries?: number | undefined;
  /** Time limit of one attempt, in ms. At most 2147483647 (about 24.8 days, the longest JavaScript timer; every timing option in ms has this limit). Default none; 0 is no limit too. */
  timeoutMs?: number | undefined;
  /** Longest silence tolerated between chunks (or before the answer), in ms. At most 2147483647 (about 24.8 days, the longest JavaScript timer; every timing option in ms has this limit). Default none; 0 is no limit too. */
  idleTimeoutMs?: number | undefined;
  /** First backoff step in ms. Default 500. */
  retryBaseMs?: number | undefined;
  /** Cap of one backoff wait in ms. Default 8000. */
  retryMaxMs?: number | undefined;
  /** Longest `retry-after` honoured, in ms; a longer one is thrown with `retriesExhausted`. Default 60000. */
  maxRetryAfterMs?: number | undefined;
  /** Call options passed to `invoke` / `stream` (e.g. `{ tags: ['compaction'] }`); `signal` is the summarizer's. */
  callOptions?: Record<string, unknown> | undefined;
}

/** A summarizer made by {@link langchainSummarizer}. */
export interface LangChainSummarizer {
  (request: SummaryRequest, options?: SummarizeCallOptions): Promise<SummaryResponseBody>;
  /**
   * The id of the model the chat model calls (its `model` / `modelName`, the default model of
   * `initChatModel`, the model a `withConfig` / `withRetry` / `withFallbacks` wraps), when it
   * has one: read by the library when `context.summaryModel` is absent, so the request is sized
   * for that model's window and output limit.
   */
  readonly summaryModel?: string;
}

/**
 * Makes a summarizer that asks a LangChain chat model for the summary and resolves with a
 * Messages API response body. Nothing of LangChain is imported: the caller's model turns the
 * plain messages into its own classes. Failures are `SummarizerError`s; a provider's
 * prompt-too-long answer is `PROMPT_TOO_LONG` and keeps the provider's words, so the library
 * drops the oldest turns and asks again. The output limit is the model's own `maxTokens`.
 *
 * @throws {TypeError} at once, with `code: 'INVALID_ARGUMENT'`, for a bad model or option.
 * @example
 * import { ChatAnthropic } from '@langchain/anthropic';
 * import { langchainSummarizer } from 'context-compaction';
 * const summarize = langchainSummarizer(new ChatAnthropic({ model: 'claude-haiku-4-5', maxTokens: 16_000 }));
 */
export declare function langchainSummarizer(chatModel: LangChainChatModel, options?: LangChainSummarizerOptions): LangChainSummarizer;

export declare namespace langchainSummarizer {
  /** The error class, reachable from the function. */
  const SummarizerError: typeof import('./summary-request.js').SummarizerError;
}
