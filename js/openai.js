// @ts-check
// openaiSummarizer: the summarizer of the library's contract for the OpenAI Chat Completions and
// Responses APIs (and servers that speak them), in plain JavaScript over WHATWG `fetch` (no
// WebAssembly, no dependencies): browsers and Node.js 20+.
//
// Wire facts it relies on (OpenAI API reference and the official SDK):
// - POST {baseURL}/chat/completions or {baseURL}/responses, baseURL `https://api.openai.com/v1`,
//   `authorization: Bearer <key>`, optional `openai-organization` / `openai-project`.
// - Error bodies `{error: {message, type, param, code}}`; a prompt over the context window is a
//   400 with code `context_length_exceeded`; 429 `insufficient_quota` is not transient; every
//   response carries `x-request-id`; retry hints `retry-after-ms`, `retry-after`, `x-should-retry`,
//   and the rate-limit headers `x-ratelimit-remaining-*` / `x-ratelimit-reset-*` ("1s", "6m0s").
// - Chat streaming: `data: {chunk}` lines, text in `choices[0].delta.content`, `finish_reason`
//   in the last choice chunk, usage in a last chunk with no choices (`stream_options:
//   {include_usage: true}`), then `data: [DONE]`; an error can arrive as `data: {error}`. A
//   stream that closes after a `finish_reason` without `[DONE]` (some compatible servers and
//   proxies) is complete, as the openai SDK takes it; one cut before it is NETWORK_ERROR.
// - Responses streaming: events named by `type`: `response.output_text.delta` (`delta`),
//   `response.completed` / `response.incomplete` (the whole `response`), `response.failed`
//   (`response.error`), and `error` (`code`, `message`).
//
// This file checks the options; the request itself (its body, attempts, retries, the stream
// readers) is openai-send.js, loaded on a summarizer's first call.

import { loadOnce, guardOptions, checkCount, checkTimers, describe, likelyMeant, mergeHeaders, readEnvironment, checkHeaderValues, apiURL } from './options.js';
import { importAgain } from './defaults.js';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** The options {@link openaiSummarizer} reads; any other key is a mistake. */
const OPTION_KEYS = Object.freeze([
  'apiKey',
  'model',
  'api',
  'baseURL',
  'organization',
  'project',
  'fetch',
  'headers',
  'maxRetries',
  'timeoutMs',
  'idleTimeoutMs',
  'stream',
  'retryBaseMs',
  'retryMaxMs',
  'maxRetryAfterMs',
  'maxOutputTokens',
  'extraBody',
]);

/**
 * The error every failure of a summarizer made by {@link openaiSummarizer} is reported with
 * (except an exception thrown by the caller's own `onText`, which is passed through untouched).
 *
 * `code` says what happened:
 * - `OPENAI_API_ERROR`: the API answered with an error status, or sent an error in the stream
 *   (`apiCode` is the API's own code, e.g. `context_length_exceeded`, `rate_limit_exceeded`).
 * - `NETWORK_ERROR`: fetch failed, or the connection broke or ended before the answer was whole.
 * - `TIMEOUT`: `timeoutMs` or `idleTimeoutMs` ran out.
 * - `ABORTED`: the caller's `signal` aborted (`name` is then `'AbortError'`).
 * - `INVALID_RESPONSE`: a 2xx answer whose body could not be read in the API's format.
 */
export class OpenAiApiError extends Error {
  /**
   * @param {string} message Human-readable text; for API errors it names the status and the API's message.
   * @param {object} [details]
   * @param {import('./openai.js').OpenAiApiErrorCode} [details.code] Default `OPENAI_API_ERROR`.
   * @param {number} [details.status]
   * @param {unknown} [details.error] The parsed API error body (or its raw text when not JSON).
   * @param {Record<string, string>} [details.headers]
   * @param {string} [details.requestId] The `x-request-id` response header.
   * @param {string} [details.type] The API error type, e.g. `invalid_request_error`.
   * @param {string} [details.apiCode] The API error code, e.g. `context_length_exceeded`.
   * @param {string} [details.param]
   * @param {boolean} [details.retryable]
   * @param {number} [details.retryAfterMs]
   * @param {unknown} [details.cause]
   */
  constructor(message, details = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    if (details.cause !== undefined && this.cause === undefined) this.cause = details.cause;
    /** @type {string} */
    this.name = 'OpenAiApiError';
    /** @type {import('./openai.js').OpenAiApiErrorCode} */
    this.code = details.code ?? 'OPENAI_API_ERROR';
    /** @type {number | undefined} */
    this.status = details.status;
    /** @type {unknown} */
    this.error = details.error;
    /** @type {Record<string, string>} */
    this.headers = details.headers ?? {};
    /** @type {string | undefined} */
    this.requestId = details.requestId;
    /** @type {string | undefined} */
    this.type = details.type;
    /** @type {string | undefined} */
    this.apiCode = details.apiCode;
    /** @type {string | undefined} */
    this.param = details.param;
    /** @type {boolean} */
    this.retryable = details.retryable ?? false;
    /** @type {number | undefined} */
    this.retryAfterMs = details.retryAfterMs;
    /** True once this summarizer gave up retrying a transient failure (the library then won't retry). */
    this.retriesExhausted = false;
    /** How many HTTP attempts were made before this error was thrown. */
    this.attempts = 1;
  }
}

/**
 * Makes a summarizer (the library's `summarize` contract) that sends the summary request to the
 * OpenAI Chat Completions API (`api: 'chat'`, the default) or the Responses API
 * (`api: 'responses'`) and resolves with a Messages API response body (`content`,
 * `stop_reason` — `max_tokens` when the answer was cut at the output limit — and `usage`).
 *
 * Bad options throw at once, a `TypeError` with a `code`: `INVALID_ARGUMENT` (a wrong type, an
 * unknown key, with a "did you mean" hint) or `MISSING_API_KEY` (no `apiKey`, no authorization
 * header, no `OPENAI_API_KEY` in the environment, and neither a custom `fetch` nor a `baseURL`
 * other than OpenAI's that could do without).
 *
 * @param {import('./openai.js').OpenAiSummarizerOptions} [options]
 * @returns {import('./openai.js').OpenAiSummarizer}
 * @example
 *   const summarize = openaiSummarizer({ model: 'gpt-4.1-mini', api: 'responses' });
 *   const result = await compactConversation(messages, { model: 'gpt-4.1', summarize });
 */
export function openaiSummarizer(options = {}) {
  return guardOptions(() => buildOpenaiSummarizer(options), optionError);
}

/**
 * The body of the function above, unguarded.
 * @param {import('./openai.js').OpenAiSummarizerOptions} options
 */
function buildOpenaiSummarizer(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw optionError('options must be an object');
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) {
      const meant = likelyMeant(key, OPTION_KEYS);
      throw optionError(
        `options.${key} is not an option${meant ? ` (did you mean \`${meant}\`?)` : ''}; known: ${OPTION_KEYS.join(', ')}`,
      );
    }
  }
  const env = readEnvironment(['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID']);
  const {
    apiKey,
    model,
    api = 'chat',
    baseURL = env.OPENAI_BASE_URL ?? DEFAULT_BASE_URL,
    organization = env.OPENAI_ORG_ID,
    project = env.OPENAI_PROJECT_ID,
    fetch: fetchImpl = globalThis.fetch,
    headers: userHeaders = {},
    maxRetries = 2,
    timeoutMs,
    idleTimeoutMs,
    stream = true,
    retryBaseMs = 500,
    retryMaxMs = 8_000,
    maxRetryAfterMs = 60_000,
    maxOutputTokens,
    extraBody,
  } = options;
  if (typeof fetchImpl !== 'function') throw optionError('no fetch function (pass options.fetch)');
  for (const [name, value] of [['apiKey', apiKey], ['model', model], ['organization', organization], ['project', project]]) {
    if (value !== undefined && value !== null && typeof value !== 'string') throw optionError(`${name} must be a string`);
  }
  if (api !== 'chat' && api !== 'responses') {
    throw optionError(`api must be 'chat' (Chat Completions) or 'responses' (Responses API), not ${JSON.stringify(api)}`);
  }
  if (typeof baseURL !== 'string' || baseURL === '') throw optionError('baseURL must be a non-empty string');
  checkCount('maxRetries', maxRetries, false, optionError);
  if (!Number.isInteger(maxRetries)) throw optionError('maxRetries must be an integer');
  checkTimers({ timeoutMs, idleTimeoutMs, retryBaseMs, retryMaxMs, maxRetryAfterMs }, optionError);
  checkCount('maxOutputTokens', maxOutputTokens, true, optionError);
  if (extraBody !== undefined && (extraBody === null || typeof extraBody !== 'object' || Array.isArray(extraBody))) {
    throw optionError('extraBody must be an object (fields added to every request body)');
  }
  // The caller's own fetch may send what the global one cannot (another scheme, header names
  // and values it refuses): what it is given is passed as it is.
  const ownFetch = options.fetch !== undefined;
  const { url, root } = apiURL(baseURL, api === 'chat' ? '/chat/completions' : '/responses', optionError, ownFetch);
  /** @type {Record<string, string>} */
  const headers = { 'content-type': 'application/json' };
  /** @type {Record<string, string>} */
  const given = {};
  mergeHeaders(given, userHeaders, optionError, ownFetch);
  const key = apiKey || (apiKey === undefined && !given.authorization ? env.OPENAI_API_KEY : undefined);
  if (key) headers.authorization = `Bearer ${key}`;
  if (organization) headers['openai-organization'] = organization;
  if (project) headers['openai-project'] = project;
  mergeHeaders(headers, userHeaders, optionError, ownFetch);
  if (!ownFetch) checkHeaderValues(
    headers,
    (name) =>
      Object.hasOwn(given, name)
        ? 'options.headers'
        : name === 'authorization'
          ? apiKey ? 'options.apiKey' : 'OPENAI_API_KEY in the environment'
          : name === 'openai-organization'
            ? options.organization !== undefined ? 'options.organization' : 'OPENAI_ORG_ID in the environment'
            : name === 'openai-project'
              ? options.project !== undefined ? 'options.project' : 'OPENAI_PROJECT_ID in the environment'
              : 'the defaults',
    optionError,
  );
  const mayAuthenticateElsewhere = ownFetch || root !== DEFAULT_BASE_URL;
  if (!headers.authorization && !mayAuthenticateElsewhere) {
    throw optionError(
      'no API key: pass options.apiKey (or an authorization header), or set OPENAI_API_KEY in the environment (Node); ' +
        'a proxy or a local server that needs no key needs its baseURL',
      'MISSING_API_KEY',
    );
  }
  const useStream = Boolean(stream);

  /** What a call needs from these options (read by openai-send.js). */
  const cfg = {
    url, headers, fetchImpl, useStream, api, model, maxOutputTokens, extraBody,
    timeoutMs, idleTimeoutMs, retry: { maxRetries, retryBaseMs, retryMaxMs, maxRetryAfterMs },
  };

  /**
   * @param {import('./openai.js').SummaryRequest} request
   * @param {import('./openai.js').SummarizeCallOptions} [callOptions]
   * @returns {Promise<import('./openai.js').SummaryResponseBody>}
   */
  async function summarize(request, callOptions = {}) {
    const { signal, onText } = callOptions ?? {};
    if (onText !== undefined && onText !== null && typeof onText !== 'function') {
      throw Object.assign(new TypeError('summarize: onText must be a function'), { code: 'INVALID_ARGUMENT' });
    }
    const call = { delivered: false, onText: onText ?? undefined };
    const sender = await loadSender();
    return sender.send(cfg, request, signal, call);
  }

  // `summaryModel` is read by the library (unless `context.summaryModel` is given): the request
  // it writes is sized for this model, its `max_tokens` within the model's output limit.
  return Object.assign(summarize, { api }, typeof model === 'string' && model.trim() !== '' ? { summaryModel: model } : {});
}

/** Lets users reach the error class through the function. */
openaiSummarizer.OpenAiApiError = OpenAiApiError;

/**
 * The module that sends the requests (openai-send.js: the request body, the HTTP attempt,
 * retries, the stream readers), loaded on a summarizer's first call, so that a page that only
 * makes a summarizer does not download it. A failed load is a retryable `NETWORK_ERROR`, and
 * the next call tries again.
 */
const loadSender = /* @__PURE__ */ loadOnce(
  async (n) => {
    const m = await importAgain(n, () => import('./openai-send.js'), import.meta.url, 'openai.js', 'openai-send.js');
    m.bind(OpenAiApiError, rateLimitReset);
    return m;
  },
  (e) =>
    new OpenAiApiError(`could not load the OpenAI summarizer's request code (openai-send.js): ${describe(e)}`, {
      code: 'NETWORK_ERROR',
      retryable: true,
      cause: e,
    }),
);

/**
 * The wait a 429 without `retry-after` implies: the reset time of an exhausted rate limit
 * (`x-ratelimit-remaining-requests` / `-tokens` at 0, its `x-ratelimit-reset-*` like "1s",
 * "6m0s", "250ms"); `undefined` when no limit is reported exhausted.
 * @param {Record<string, string>} h
 * @returns {number | undefined}
 */
export function rateLimitReset(h) {
  let wait;
  for (const kind of ['requests', 'tokens']) {
    const remaining = h[`x-ratelimit-remaining-${kind}`];
    const reset = h[`x-ratelimit-reset-${kind}`];
    if (remaining === undefined || reset === undefined || Number(remaining) > 0) continue;
    const ms = durationMs(reset);
    if (ms !== undefined) wait = Math.max(wait ?? 0, ms);
  }
  return wait;
}

/**
 * A Go-style duration ("1s", "6m0s", "1h2m3.5s", "20ms") in milliseconds.
 * @param {string} text
 */
function durationMs(text) {
  const s = text.trim();
  if (s === '' || !/^(\d+(\.\d+)?(h|ms|m|s))+$/.test(s)) return undefined;
  const unit = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };
  let total = 0;
  for (const [, n, , u] of s.matchAll(/(\d+(\.\d+)?)(h|ms|m|s)/g)) total += Number(n) * unit[/** @type {keyof typeof unit} */ (u)];
  return total;
}
/**
 * The error of a bad {@link openaiSummarizer} call: a `TypeError` with a stable `code`.
 * @param {string} message
 * @param {'INVALID_ARGUMENT' | 'MISSING_API_KEY'} [code]
 */
function optionError(message, code = 'INVALID_ARGUMENT') {
  return Object.assign(new TypeError(`openaiSummarizer: ${message}`), { code });
}
