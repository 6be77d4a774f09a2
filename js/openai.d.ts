// Types of js/openai.js: the summarizer for the OpenAI Chat Completions and Responses APIs.

import type { FetchFunction, SummarizerAttemptOptions } from './anthropic.js';
import type { SummarizeCallOptions, SummaryRequest, SummaryResponseBody } from './summary-request.js';

export type { SummarizeCallOptions, SummaryRequest, SummaryResponseBody } from './summary-request.js';

/**
 * Options of {@link openaiSummarizer}. Any other key throws (`INVALID_ARGUMENT`, with a "did you
 * mean" hint and the accepted keys).
 *
 * Credentials: `apiKey` or an `authorization` header; when neither is given (and `apiKey` is not
 * `null`), `OPENAI_API_KEY` is read from `process.env` where it exists (Node), as the official
 * SDK does. With no credentials, creating the summarizer throws `MISSING_API_KEY` — unless a
 * custom `fetch` or a `baseURL` other than OpenAI's is given (a proxy, or a local server such as
 * Ollama or vLLM that needs no key).
 */
export interface OpenAiSummarizerOptions extends SummarizerAttemptOptions {
  /** Sent as `authorization: Bearer …`. Default: `OPENAI_API_KEY` of the environment (Node). */
  apiKey?: string | null | undefined;
  /** The model of every summary request (e.g. `'gpt-4.1-mini'`). Default: the request's `model`. */
  model?: string | undefined;
  /** `'chat'` (Chat Completions, `POST /chat/completions`, the default) or `'responses'` (`POST /responses`). */
  api?: 'chat' | 'responses' | undefined;
  /**
   * API root, an http(s) URL; `/chat/completions` or `/responses` is appended to its path (a
   * query such as `?api-version=…` is kept after it; a `#fragment` is refused). Default
   * `OPENAI_BASE_URL` of the environment, else `https://api.openai.com/v1`.
   */
  baseURL?: string | undefined;
  /** Sent as `openai-organization`. Default `OPENAI_ORG_ID` of the environment. */
  organization?: string | null | undefined;
  /** Sent as `openai-project`. Default `OPENAI_PROJECT_ID` of the environment. */
  project?: string | null | undefined;
  /** The fetch to use. Default `globalThis.fetch`. */
  fetch?: FetchFunction | undefined;
  /**
   * Extra request headers, added after the defaults; a `null` or `undefined` value removes one.
   * A record, an array (or another iterable) of `[name, value]` pairs, a `Map` or a `Headers`.
   * With the default fetch, a name or value it could not send is refused here
   * (`INVALID_ARGUMENT`); the caller's own `fetch` is given every header as it is.
   */
  headers?: Record<string, string | null | undefined> | Iterable<readonly [string, string | null | undefined]> | ReadonlyMap<string, string | null | undefined> | Headers | undefined;
  /** Retries of a transient failure (408, 409, 429 but `insufficient_quota`, 5xx, network errors, timeouts). Default 2. */
  maxRetries?: number | undefined;
  /**
   * Longest wait honoured from `retry-after-ms` / `retry-after` (or, on a 429 without them, the
   * reset time of the exhausted `x-ratelimit-*` limit), in ms. A longer one is not waited for:
   * the error is thrown with `retriesExhausted` and `retryAfterMs` set. Default 60000.
   */
  maxRetryAfterMs?: number | undefined;
  /**
   * Cap of the output tokens (`max_completion_tokens` / `max_output_tokens`): the smaller of
   * this and the request's `max_tokens` (at most 20,000) is sent. Set it for models with a
   * smaller output limit (gpt-4o: 16,384).
   */
  maxOutputTokens?: number | undefined;
  /** Fields added to every request body (e.g. `{ reasoning: { effort: 'low' } }`, `{ service_tier: 'flex' }`). */
  extraBody?: Record<string, unknown> | undefined;
}

/** The `code` of the `TypeError` {@link openaiSummarizer} throws for bad options. */
export type OpenAiSummarizerOptionsErrorCode = 'INVALID_ARGUMENT' | 'MISSING_API_KEY';

/** The `code` of an {@link OpenAiApiError}. */
export type OpenAiApiErrorCode = 'OPENAI_API_ERROR' | 'NETWORK_ERROR' | 'TIMEOUT' | 'ABORTED' | 'INVALID_RESPONSE';

/** OpenAI's error body. */
export interface OpenAiErrorBody {
  error: { message: string; type?: string | null; param?: string | null; code?: string | null };
}

/** The details an {@link OpenAiApiError} is made with. */
export interface OpenAiApiErrorDetails {
  code?: OpenAiApiErrorCode;
  status?: number;
  error?: unknown;
  headers?: Record<string, string>;
  requestId?: string;
  type?: string;
  apiCode?: string;
  param?: string;
  retryable?: boolean;
  retryAfterMs?: number;
  cause?: unknown;
}

/**
 * Every failure of the summarizer, except an exception thrown by the caller's `onText`
 * (passed through untouched). A prompt over the model's context window is an
 * `OPENAI_API_ERROR` with status 400 and `apiCode` `'context_length_exceeded'`, whose message
 * keeps OpenAI's words: the library recognises it and drops the oldest turns.
 */
export declare class OpenAiApiError extends Error {
  constructor(message: string, details?: OpenAiApiErrorDetails);
  /** `'OpenAiApiError'`, or `'AbortError'` when `code` is `'ABORTED'`. */
  name: string;
  /**
   * `OPENAI_API_ERROR`: an error status or an error in the stream; `NETWORK_ERROR`: fetch
   * failed or the connection broke or ended early; `TIMEOUT`: `timeoutMs`/`idleTimeoutMs`;
   * `ABORTED`: the caller's signal; `INVALID_RESPONSE`: a 2xx body not in the API's format.
   */
  code: OpenAiApiErrorCode;
  /** HTTP status (400 for a streamed `context_length_exceeded`, 429 for a streamed rate limit). */
  status: number | undefined;
  /** The error body ({@link OpenAiErrorBody}), the stream event, or the raw response text. */
  error: OpenAiErrorBody | unknown;
  /** Response headers, names in lower case. */
  headers: Record<string, string>;
  /** The `x-request-id` response header. */
  requestId: string | undefined;
  /** The API error type, e.g. `'invalid_request_error'`. */
  type: string | undefined;
  /** The API error code, e.g. `'context_length_exceeded'`, `'rate_limit_exceeded'`, `'insufficient_quota'`. */
  apiCode: string | undefined;
  /** The parameter the API names, e.g. `'messages'`. */
  param: string | undefined;
  /** Whether the failure is transient (it was or could have been retried). */
  retryable: boolean;
  /** The wait the server asked for, in ms. */
  retryAfterMs: number | undefined;
  /** True when the summarizer gave up retrying a transient failure. */
  retriesExhausted: boolean;
  /** HTTP attempts made by the call that threw. */
  attempts: number;
  cause?: unknown;
}

/** A summarizer made by {@link openaiSummarizer}; `api` says which API it calls. */
export interface OpenAiSummarizer {
  (request: SummaryRequest, options?: SummarizeCallOptions): Promise<SummaryResponseBody>;
  readonly api: 'chat' | 'responses';
  /**
   * The `model` it was made with (read by the library when `context.summaryModel` is absent:
   * the request is sized for that model, `max_tokens` within its output limit).
   */
  readonly summaryModel?: string;
}

type OpenAiApiErrorClass = typeof OpenAiApiError;

/**
 * Makes a summarizer that sends the library's summary request to the OpenAI Chat Completions API
 * (default) or the Responses API, streaming by default, with retries of transient failures, and
 * resolves with a Messages API response body (`stop_reason` `max_tokens` when the answer was cut
 * at the output limit).
 *
 * @throws {TypeError} at once, with `code` `INVALID_ARGUMENT` (a wrong type, an unknown key) or
 * `MISSING_API_KEY` (see {@link OpenAiSummarizerOptions}).
 * @example
 * import { compactConversation, openaiSummarizer } from 'context-compaction';
 * const summarize = openaiSummarizer({ model: 'gpt-4.1-mini', api: 'responses' });
 * const result = await compactConversation(messages, { model: 'gpt-4.1', summarize });
 */
export declare function openaiSummarizer(options?: OpenAiSummarizerOptions): OpenAiSummarizer;

export declare namespace openaiSummarizer {
  /** The error class, reachable from the function. */
  const OpenAiApiError: OpenAiApiErrorClass;
}

/**
 * The wait a 429 without `retry-after` implies: the reset time (`x-ratelimit-reset-requests` /
 * `-tokens`, like `"6m0s"`) of a limit whose `x-ratelimit-remaining-*` is 0, in ms.
 */
export declare function rateLimitReset(headers: Record<string, string>): number | undefined;
