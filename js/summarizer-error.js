// @ts-check
// The error class of the AI SDK and LangChain summarizers (re-exported by summary-request.js):
// apart, so that langchain.js, which a page loads with the package, does not bring the request
// helpers of summary-request.js with it.

/**
 * The error every failure of a summarizer made by `aiSdkSummarizer` or `langchainSummarizer`
 * is reported with (except an exception thrown by the caller's own `onText`, passed through).
 *
 * `code` says what happened:
 * - `PROMPT_TOO_LONG`: the provider said the request does not fit the model's context; the
 *   message keeps the provider's words, so the library drops the oldest turns and asks again.
 * - `PROVIDER_ERROR`: the provider answered with another error (`status` when it had one).
 * - `NETWORK_ERROR`: the request did not reach the provider, or its answer broke off.
 * - `TIMEOUT`: `timeoutMs` or `idleTimeoutMs` ran out.
 * - `ABORTED`: the caller's `signal` aborted (`name` is then `'AbortError'`).
 * - `INVALID_RESPONSE`: the model answered with something that is not text.
 *
 * The original error is `cause`; `status`, `error` (the provider's error body, when there is
 * one), `retryable`, `retryAfterMs`, `retriesExhausted` and `attempts` are what the library reads.
 */
export class SummarizerError extends Error {
  /**
   * @param {string} message
   * @param {object} details
   * @param {import('./summary-request.js').SummarizerErrorCode} details.code
   * @param {string} details.provider `'ai-sdk'` or `'langchain'`.
   * @param {number} [details.status]
   * @param {unknown} [details.error]
   * @param {boolean} [details.retryable]
   * @param {number} [details.retryAfterMs]
   * @param {boolean} [details.retriesExhausted]
   * @param {number} [details.attempts]
   * @param {unknown} [details.cause]
   */
  constructor(message, details) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    if (details.cause !== undefined && this.cause === undefined) this.cause = details.cause;
    /** @type {string} */
    this.name = 'SummarizerError';
    /** @type {import('./summary-request.js').SummarizerErrorCode} */
    this.code = details.code;
    /** @type {string} */
    this.provider = details.provider;
    /** @type {number | undefined} */
    this.status = details.status;
    /** @type {unknown} */
    this.error = details.error;
    /** @type {boolean} */
    this.retryable = details.retryable ?? false;
    /** @type {number | undefined} */
    this.retryAfterMs = details.retryAfterMs;
    /** True once the summarizer (or the SDK under it) gave up retrying a transient failure. */
    this.retriesExhausted = details.retriesExhausted ?? false;
    /** How many attempts were made before this error was thrown. */
    this.attempts = details.attempts ?? 1;
  }
}
