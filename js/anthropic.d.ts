// Types of js/anthropic.js: the Anthropic Messages API summarizer (SPEC §16).

/**
 * How each attempt of a summarizer's request is timed and retried, the same for
 * {@link anthropicSummarizer} and `openaiSummarizer`.
 */
export interface SummarizerAttemptOptions {
  /** Time limit of one attempt, from the request to the last byte, in ms. At most 2147483647 (about 24.8 days, the longest JavaScript timer; every timing option in ms has this limit). Default none; 0 is no limit too. */
  timeoutMs?: number | undefined;
  /** Longest silence tolerated while waiting for the answer or its next chunk, in ms. At most 2147483647 (about 24.8 days, the longest JavaScript timer; every timing option in ms has this limit). Default none; 0 is no limit too. */
  idleTimeoutMs?: number | undefined;
  /** Stream the answer (server-sent events) and report text to `onText` as it comes. Default true. */
  stream?: boolean | undefined;
  /** First backoff step in ms; retry n waits a random time in [0, min(retryMaxMs, retryBaseMs × 2^n)]. Default 500. */
  retryBaseMs?: number | undefined;
  /** Cap of one backoff wait in ms. Default 8000. */
  retryMaxMs?: number | undefined;
}

/**
 * Options of {@link anthropicSummarizer}. Any other key throws (`INVALID_ARGUMENT`, naming the
 * accepted ones).
 *
 * Credentials: `apiKey`, `authToken` or an `x-api-key` / `authorization` header. When none is
 * given (and `apiKey` / `authToken` are not set to `null`), `ANTHROPIC_API_KEY` and
 * `ANTHROPIC_AUTH_TOKEN` are read from `process.env` where it exists (Node), as the official
 * SDK does. With no credentials at all, creating the summarizer throws `MISSING_API_KEY` —
 * unless a custom `fetch` or a `baseURL` other than the API's is given (they may add them).
 */
export interface AnthropicSummarizerOptions extends SummarizerAttemptOptions {
  /**
   * Sent as `x-api-key`. Default: `ANTHROPIC_API_KEY` of the environment (Node), when no other
   * credentials are given. Omit it when a proxy at `baseURL` adds the credentials.
   */
  apiKey?: string | null | undefined;
  /**
   * Sent as `authorization: Bearer …` (an OAuth or gateway token) instead of, or besides, the
   * API key. Default: `ANTHROPIC_AUTH_TOKEN` of the environment (Node), when no other
   * credentials are given.
   */
  authToken?: string | null | undefined;
  /**
   * Overrides the `model` of every request the library builds. A model id ending with `[1m]`
   * (here or in the request) is sent without the suffix, with the `context-1m-2025-08-07`
   * beta: the 1M-token context it names.
   */
  model?: string | undefined;
  /**
   * API origin, an http(s) URL; `/v1/messages` is appended to its path (a query is kept after
   * it; a `#fragment` is refused). Default `https://api.anthropic.com`.
   */
  baseURL?: string | undefined;
  /** The fetch to use. Default `globalThis.fetch`. */
  fetch?: FetchFunction | undefined;
  /**
   * Extra request headers, added after (and so overriding) the defaults; a `null` or
   * `undefined` value removes a default header. A record, an array (or another iterable) of
   * `[name, value]` pairs, a `Map` or a `Headers`. With the default fetch, a name or value it
   * could not send (a line break in a value, say) is refused here (`INVALID_ARGUMENT`), not at
   * each request; the caller's own `fetch` is given every header as it is.
   */
  headers?: Record<string, string | null | undefined> | Iterable<readonly [string, string | null | undefined]> | ReadonlyMap<string, string | null | undefined> | Headers | undefined;
  /** Retries of a transient failure (429, 5xx, 529, network errors, timeouts). Default 2. */
  maxRetries?: number | undefined;
  /**
   * Longest `retry-after` / `retry-after-ms` wait honoured, in ms. A longer one is not waited
   * for: the error is thrown with `retriesExhausted` and `retryAfterMs` set. Default 60000.
   */
  maxRetryAfterMs?: number | undefined;
  /**
   * Let the library ask the Messages API's on-demand compaction (beta `compact-2026-09-04`)
   * for the summary of Anthropic messages: the returned `compaction` block then goes first in
   * the compacted conversation, byte for byte. The summarizer sends a request carrying
   * `compaction` with the beta header; `compaction_unavailable` and failed summaries fall
   * back to the summary prompt. Default false.
   */
  onDemandCompaction?: boolean | undefined;
}

/** The subset of WHATWG `fetch` the summarizer calls. */
export type FetchFunction = (
  url: string,
  init: {
    method: 'POST';
    headers: Record<string, string>;
    body: string;
    signal: AbortSignal;
  },
) => Promise<Response>;

/**
 * The `code` of the `TypeError` {@link anthropicSummarizer} throws for bad options:
 * `INVALID_ARGUMENT` (a wrong type, an unknown key) or `MISSING_API_KEY` (no credentials).
 */
export type AnthropicSummarizerOptionsErrorCode = 'INVALID_ARGUMENT' | 'MISSING_API_KEY';

/** Options of one call of the summarizer (SPEC §16). */
export interface SummarizeOptions {
  /** Aborts the call at once (request, stream or backoff wait) with an `AbortError`. */
  signal?: AbortSignal;
  /** Receives the response text as it streams, in order (once, whole, in JSON mode). */
  onText?: (text: string) => void;
  /** The window the request was sized to: past 200,000 it is sent with the 1M-context beta. */
  contextWindow?: number;
}

/** The summarizer contract of SPEC §16. */
export type Summarizer = ((request: MessagesRequest, options?: SummarizeOptions) => Promise<MessagesResponse>) & {
  /** `true` when made with `onDemandCompaction: true` (read by the library). */
  readonly onDemandCompaction?: boolean;
  /**
   * The `model` it was made with (read by the library when `context.summaryModel` is absent:
   * the request is sized for that model, `max_tokens` within its output limit).
   */
  readonly summaryModel?: string;
};

// ---- Request body -----------------------------------------------------------------------------

export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export interface TextBlockParam {
  type: 'text';
  text: string;
  cache_control?: CacheControl | null;
  citations?: unknown[] | null;
}

export interface ImageBlockParam {
  type: 'image';
  source:
    | { type: 'base64'; media_type: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'; data: string }
    | { type: 'url'; url: string }
    | { type: 'file'; file_id: string };
  cache_control?: CacheControl | null;
}

export interface DocumentBlockParam {
  type: 'document';
  source:
    | { type: 'base64'; media_type: 'application/pdf'; data: string }
    | { type: 'text'; media_type: 'text/plain'; data: string }
    | { type: 'url'; url: string }
    | { type: 'content'; content: string | TextBlockParam[] }
    | { type: 'file'; file_id: string };
  title?: string | null;
  context?: string | null;
  citations?: { enabled?: boolean } | null;
  cache_control?: CacheControl | null;
}

export interface ToolUseBlockParam {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  cache_control?: CacheControl | null;
}

export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlockParam | ImageBlockParam | DocumentBlockParam>;
  is_error?: boolean;
  cache_control?: CacheControl | null;
}

export interface ThinkingBlockParam {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlockParam {
  type: 'redacted_thinking';
  data: string;
}

/** A block type this file does not describe (server tools, search results, later additions). */
export interface OtherBlockParam {
  type: string;
  [field: string]: unknown;
}

export type ContentBlockParam =
  | TextBlockParam
  | ImageBlockParam
  | DocumentBlockParam
  | ToolUseBlockParam
  | ToolResultBlockParam
  | ThinkingBlockParam
  | RedactedThinkingBlockParam
  | OtherBlockParam;

export interface MessageParam {
  role: 'user' | 'assistant';
  content: string | ContentBlockParam[];
}

/** A Messages API request body, as the library builds it (SPEC §14). */
export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: string | TextBlockParam[];
  /** Set by the summarizer from its `stream` option; any value given here is replaced. */
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  metadata?: { user_id?: string | null };
  thinking?: { type: 'enabled'; budget_tokens: number } | { type: 'disabled' } | { type: 'adaptive' };
  tools?: unknown[];
  tool_choice?: { type: 'auto' | 'any' | 'none' | 'tool'; name?: string; disable_parallel_tool_use?: boolean };
  /** On-demand compaction: sent with the `anthropic-beta: compact-2026-09-04` header. */
  compaction?: { type: 'summarize'; instructions?: string };
  /** Further Messages API fields are sent as given. */
  [field: string]: unknown;
}

// ---- Response body ----------------------------------------------------------------------------

export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded'
  | 'compaction';

export interface TextBlock {
  type: 'text';
  text: string;
  citations?: unknown[] | null;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  /** The tool input; the raw JSON text when a streamed input could not be parsed. */
  input: unknown;
}

/** A block type this file does not describe (server tool results, later additions). */
export interface OtherBlock {
  type: string;
  [field: string]: unknown;
}

/**
 * The API's compaction block: `signature` from on-demand compaction, `encrypted_content`
 * from the `compact_20260112` edit; `content: null` is a failed compaction. Send it back as it is.
 */
export interface CompactionBlock {
  type: 'compaction';
  content: string | null;
  signature?: string;
  encrypted_content?: string | null;
  /** Fields the API may add (`cache_control`, …): keep them. */
  [field: string]: unknown;
}

export type ContentBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | CompactionBlock | OtherBlock;

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } | null;
  server_tool_use?: { web_search_requests?: number; web_fetch_requests?: number } | null;
  service_tier?: 'standard' | 'priority' | 'batch' | null;
  [field: string]: unknown;
}

/**
 * A Messages API response body. Streamed answers are assembled into the same shape: text in
 * `text` blocks, thinking in `thinking` blocks (never mixed into the text).
 */
export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: Usage;
  /** The `request-id` response header (not enumerable). */
  readonly _request_id?: string;
}

// ---- Errors -----------------------------------------------------------------------------------

export type ApiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

/** An API error body, e.g. `{type: 'error', error: {type: 'invalid_request_error', message: 'prompt is too long: …'}}`. */
export interface ApiErrorBody {
  type: 'error';
  error: { type: ApiErrorType | (string & {}); message: string };
  request_id?: string;
}

export type AnthropicApiErrorCode = 'ANTHROPIC_API_ERROR' | 'NETWORK_ERROR' | 'TIMEOUT' | 'ABORTED' | 'INVALID_RESPONSE';

export interface AnthropicApiErrorDetails {
  code?: AnthropicApiErrorCode;
  status?: number;
  error?: ApiErrorBody | string;
  headers?: Record<string, string>;
  requestId?: string;
  type?: string;
  retryable?: boolean;
  retryAfterMs?: number;
  cause?: unknown;
}

/**
 * Every failure of the summarizer, except an exception thrown by the caller's `onText`
 * (passed through untouched).
 */
export declare class AnthropicApiError extends Error {
  constructor(message: string, details?: AnthropicApiErrorDetails);
  /** `'AnthropicApiError'`, or `'AbortError'` when `code` is `'ABORTED'`. */
  name: string;
  /**
   * `ANTHROPIC_API_ERROR`: an error status or an `error` stream event; `NETWORK_ERROR`: fetch
   * failed or the connection broke or ended early; `TIMEOUT`: `timeoutMs`/`idleTimeoutMs`;
   * `ABORTED`: the caller's signal; `INVALID_RESPONSE`: a 2xx body not in the API's format.
   */
  code: AnthropicApiErrorCode;
  /** HTTP status; for an `error` stream event, the status its type is sent with (529 for overloaded_error). */
  status: number | undefined;
  /**
   * The API's error body (for an `error` stream event, the event, which has the same shape);
   * the raw response text when the body is not an API error body (e.g. a proxy's page);
   * `undefined` when there was no answer.
   */
  error: ApiErrorBody | string | undefined;
  /** Response headers, names in lower case (empty when there was no response). */
  headers: Record<string, string>;
  /** The `request-id` response header. */
  requestId: string | undefined;
  /** The API error type, e.g. `'invalid_request_error'`. */
  type: ApiErrorType | (string & {}) | undefined;
  /** Whether the failure is transient (it was or could have been retried). */
  retryable: boolean;
  /** The wait the server asked for (`retry-after-ms` / `retry-after`), in ms. */
  retryAfterMs: number | undefined;
  /** True when the summarizer gave up retrying a transient failure: the caller should not retry at once. */
  retriesExhausted: boolean;
  /** HTTP attempts made by the call that threw. */
  attempts: number;
  cause?: unknown;
}

type AnthropicApiErrorClass = typeof AnthropicApiError;

/**
 * Makes a summarizer (SPEC §16) that sends the library's summary request to the Anthropic
 * Messages API (`POST {baseURL}/v1/messages`), streaming by default, with retries of transient
 * failures, and resolves with the Messages API response body.
 *
 * @throws {TypeError} at once, with `code` ({@link AnthropicSummarizerOptionsErrorCode}):
 * `INVALID_ARGUMENT` for an option of the wrong type or an unknown key, `MISSING_API_KEY` when
 * there are no credentials (see {@link AnthropicSummarizerOptions}).
 * @example
 * const summarize = anthropicSummarizer({ apiKey: process.env.ANTHROPIC_API_KEY });
 */
export declare function anthropicSummarizer(options?: AnthropicSummarizerOptions): Summarizer;

export declare namespace anthropicSummarizer {
  /** The error class, reachable from the package's single export. */
  const AnthropicApiError: AnthropicApiErrorClass;
}
