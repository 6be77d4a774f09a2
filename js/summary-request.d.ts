// Types of js/summary-request.js: what the summarizers for OpenAI, the AI SDK and LangChain share.

import type { MessagesRequest, MessagesResponse, SummarizeOptions } from './anthropic.js';

/** The library's summary request: a Messages API request body (`model`, `system`, `messages`, `max_tokens`). */
export type SummaryRequest = MessagesRequest;

/** Options of one call of a summarizer: `signal` aborts it, `onText` receives text as it comes. */
export type SummarizeCallOptions = SummarizeOptions;

/**
 * What these summarizers resolve with: a Messages API response body with one text block (none
 * when the model wrote nothing), `stop_reason` (`max_tokens` when the model stopped at its
 * output limit, so the library reports a cut summary) and `usage` in the Messages API's names.
 * The provider's own answer is the non-enumerable `providerResponse`, when there is one.
 */
export interface SummaryResponseBody extends MessagesResponse {
  readonly providerResponse?: unknown;
}

/**
 * The `code` of a {@link SummarizerError}:
 * - `PROMPT_TOO_LONG`: the provider said the request does not fit the model's context (the
 *   message keeps the provider's words, so the library drops the oldest turns and asks again);
 * - `PROVIDER_ERROR`: any other error answer of the provider;
 * - `NETWORK_ERROR`: the provider was not reached, or its answer broke off;
 * - `TIMEOUT`: `timeoutMs` or `idleTimeoutMs` ran out;
 * - `ABORTED`: the caller's signal (the error's `name` is then `'AbortError'`);
 * - `INVALID_RESPONSE`: the model's answer could not be read as text, or its text is longer than
 *   16 Mi UTF-16 code units (`MAX_SUMMARY_TEXT`; not retried);
 * - `MISSING_DEPENDENCY`: the caller's `ai` package could not be imported (AI SDK summarizer).
 */
export type SummarizerErrorCode =
  | 'PROMPT_TOO_LONG'
  | 'PROVIDER_ERROR'
  | 'NETWORK_ERROR'
  | 'TIMEOUT'
  | 'ABORTED'
  | 'INVALID_RESPONSE'
  | 'MISSING_DEPENDENCY';

/** The details a {@link SummarizerError} is made with. */
export interface SummarizerErrorDetails {
  code: SummarizerErrorCode;
  /** `'ai-sdk'` or `'langchain'`. */
  provider: string;
  status?: number;
  error?: unknown;
  retryable?: boolean;
  retryAfterMs?: number;
  retriesExhausted?: boolean;
  attempts?: number;
  cause?: unknown;
}

/**
 * Every failure of a summarizer made by `aiSdkSummarizer` or `langchainSummarizer`, except an
 * exception thrown by the caller's `onText` (passed through untouched). The provider's error is
 * `cause`.
 */
export declare class SummarizerError extends Error {
  constructor(message: string, details: SummarizerErrorDetails);
  /** `'SummarizerError'`, or `'AbortError'` when `code` is `'ABORTED'`. */
  name: string;
  code: SummarizerErrorCode;
  /** `'ai-sdk'` or `'langchain'`. */
  provider: string;
  /** The provider's HTTP status, when it answered with one. */
  status: number | undefined;
  /** The provider's error body (parsed JSON, or text), when there is one. */
  error: unknown;
  /** Whether the failure is transient (it was or could have been retried). */
  retryable: boolean;
  /** The wait the provider asked for (`retry-after-ms` / `retry-after`), in ms. */
  retryAfterMs: number | undefined;
  /** True when the summarizer (or the SDK under it) gave up retrying: the caller should not retry at once. */
  retriesExhausted: boolean;
  /** Attempts made by the call that threw. */
  attempts: number;
  cause?: unknown;
}

/** Reads the library's summary request as plain chat text (system prompt, user/assistant turns). */
export declare function chatOfRequest(
  request: unknown,
  who: string,
): {
  system: string | undefined;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
  maxTokens: number | undefined;
  model: string | undefined;
};

/** The text of a Messages API content (a string or blocks). */
export declare function textOfContent(content: unknown): string;

/** A Messages API response body for a summary text. */
export declare function messagesResponse(answer: {
  text: string;
  stopReason: 'end_turn' | 'max_tokens' | 'model_context_window_exceeded' | 'refusal' | 'tool_use' | 'stop_sequence' | null;
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  model?: string;
  id?: string;
  raw?: unknown;
}): SummaryResponseBody;

/** Whether an error text (and status) says the prompt was too long — the library's own rule. */
export declare function isPromptTooLong(text: string, status?: number): boolean;

/** The statuses treated as transient: 408, 409, 429, 500, 502, 503, 504, 529. */
export declare const TRANSIENT_STATUSES: readonly number[];
