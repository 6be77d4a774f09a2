// @ts-check
// anthropicSummarizer: the summarizer of SPEC §16 for the Anthropic Messages API, in plain
// JavaScript (no WebAssembly, no dependencies). It runs wherever WHATWG `fetch`, `ReadableStream`,
// `TextDecoder` and `AbortController` exist: browsers and Node.js 20+.
//
// Wire facts it relies on (Anthropic API docs and the official TypeScript SDK):
// - POST {baseURL}/v1/messages with `x-api-key`, `anthropic-version: 2023-06-01` and
//   `content-type: application/json`; browsers also need
//   `anthropic-dangerous-direct-browser-access: true` or the API refuses the CORS request.
// - With `stream: true` the answer is server-sent events, each named after its JSON `type`:
//   message_start, content_block_start, content_block_delta (text_delta, thinking_delta,
//   signature_delta, input_json_delta, citations_delta), content_block_stop, message_delta
//   (stop_reason, cumulative usage), message_stop, plus ping and error at any time. An error
//   can arrive after the 200 status line, as an `error` event.
// - Error bodies: `{type: "error", error: {type, message}, request_id?}`; every response carries
//   a `request-id` header. Statuses: 400 invalid_request_error, 401 authentication_error,
//   402 billing_error, 403 permission_error, 404 not_found_error, 413 request_too_large,
//   429 rate_limit_error, 500 api_error, 504 timeout_error, 529 overloaded_error.
// - Retry hints: `retry-after` (seconds or an HTTP date), `retry-after-ms`, `x-should-retry`.
// - On-demand compaction (beta `compact-2026-09-04`, header `anthropic-beta`): a request with
//   top-level `compaction: {type: 'summarize', instructions?}` answers with one
//   `{type: 'compaction', content, signature}` block and `stop_reason: 'compaction'`; streamed,
//   the block's text arrives as `compaction_delta` deltas (`content`, and the opaque
//   `signature` / `encrypted_content`). Its refusals are named errors
//   (`compaction_nothing_to_summarize`, `compaction_block_misplaced`,
//   `compaction_signature_invalid`, `compaction_content_mismatch`, 529
//   `compaction_unavailable`): the library reads them from the thrown error's text.
//
// This file checks the options and builds each request body; the request itself (attempts,
// retries, the stream reader) is anthropic-send.js, loaded on a summarizer's first call.

import { loadOnce, guardOptions, checkCount as checkCountWith, checkTimers, describe, likelyMeant, mergeHeaders as mergeHeadersWith, checkHeaderValues, apiURL, readEnvironment } from './options.js';
import { importAgain } from './defaults.js';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
const API_VERSION = '2023-06-01';
/** The `anthropic-beta` value a request that asks for on-demand compaction is sent with. */
const ON_DEMAND_COMPACTION_BETA = 'compact-2026-09-04';
/** The `anthropic-beta` value of the 1M-token context, which a `[1m]` model id asks for, and a
 * request sized to a window past the API's standard 200,000 tokens (`contextWindow`). */
const LONG_CONTEXT_BETA = 'context-1m-2025-08-07';
const STANDARD_WINDOW = 200_000;
/** A model id ending with `[1m]`: Claude Code's (and this library's) name of the 1M context. */
const ONE_M_SUFFIX = /\[1m\]\s*$/i;

/**
 * `given` (an `anthropic-beta` value, or none) with `name` added when it lacks it.
 *
 * @param {string | undefined} given
 * @param {string} name
 */
const addBeta = (given, name) =>
  !given ? name : given.split(',').some((b) => b.trim() === name) ? given : `${given},${name}`;

/** The options {@link anthropicSummarizer} reads; any other key is a mistake. */
const OPTION_KEYS = Object.freeze([
  'apiKey',
  'authToken',
  'model',
  'baseURL',
  'fetch',
  'headers',
  'maxRetries',
  'timeoutMs',
  'idleTimeoutMs',
  'stream',
  'retryBaseMs',
  'retryMaxMs',
  'maxRetryAfterMs',
  'onDemandCompaction',
]);

/**
 * The error every failure of a summarizer made by {@link anthropicSummarizer} is reported with
 * (except an exception thrown by the caller's own `onText`, which is passed through untouched).
 *
 * `code` says what happened:
 * - `ANTHROPIC_API_ERROR`: the API answered with an error status, or sent an `error` event
 *   in the stream (`status` is then the status that error type is sent with, e.g. 529).
 * - `NETWORK_ERROR`: fetch failed, or the connection broke or ended before `message_stop`.
 * - `TIMEOUT`: `timeoutMs` or `idleTimeoutMs` ran out.
 * - `ABORTED`: the caller's `signal` aborted (`name` is then `'AbortError'`).
 * - `INVALID_RESPONSE`: a 2xx answer whose body could not be read as the Messages API format.
 */
export class AnthropicApiError extends Error {
  /**
   * @param {string} message Human-readable text; for API errors it names the status and the API's message.
   * @param {object} [details]
   * @param {string} [details.code] One of the codes above; default `ANTHROPIC_API_ERROR`.
   * @param {number} [details.status] HTTP status (or the status of a streamed error's type).
   * @param {unknown} [details.error] The parsed API error body (or its raw text when not JSON).
   * @param {Record<string, string>} [details.headers] Response headers, names in lower case.
   * @param {string} [details.requestId] The `request-id` response header.
   * @param {string} [details.type] The API error type, e.g. `invalid_request_error`.
   * @param {boolean} [details.retryable] Whether the failure is transient.
   * @param {number} [details.retryAfterMs] The wait the server asked for, if it did.
   * @param {unknown} [details.cause] The underlying error.
   */
  constructor(message, details = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    if (details.cause !== undefined && this.cause === undefined) this.cause = details.cause;
    /** @type {string} */
    this.name = 'AnthropicApiError';
    /** @type {'ANTHROPIC_API_ERROR' | 'NETWORK_ERROR' | 'TIMEOUT' | 'ABORTED' | 'INVALID_RESPONSE'} */
    this.code = /** @type {import('./anthropic.js').AnthropicApiErrorCode} */ (details.code ?? 'ANTHROPIC_API_ERROR');
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
 * Makes a summarizer (SPEC §16) that sends the library's summary request to the Anthropic
 * Messages API and resolves with the Messages API response body.
 *
 * Bad options throw at once, a `TypeError` with a `code`: `INVALID_ARGUMENT` (a wrong type, an
 * unknown key) or `MISSING_API_KEY` (no credentials: no `apiKey`, `authToken` or auth header,
 * none in the environment, and neither a custom `fetch` nor a `baseURL` other than the API's
 * that could add them).
 *
 * @param {import('./anthropic.js').AnthropicSummarizerOptions} [options]
 * @returns {import('./anthropic.js').Summarizer}
 * @example
 *   const summarize = anthropicSummarizer({ apiKey, model: 'claude-sonnet-4-5' });
 *   const response = await summarize(request, { signal, onText: (t) => progress(t) });
 */
export function anthropicSummarizer(options = {}) {
  return guardOptions(() => buildAnthropicSummarizer(options), optionError);
}

/**
 * The body of the function above, unguarded.
 * @param {import('./anthropic.js').AnthropicSummarizerOptions} options
 */
function buildAnthropicSummarizer(options) {
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
  const {
    apiKey,
    authToken,
    model,
    baseURL = DEFAULT_BASE_URL,
    fetch: fetchImpl = globalThis.fetch,
    headers: userHeaders = {},
    maxRetries = 2,
    timeoutMs,
    idleTimeoutMs,
    stream = true,
    retryBaseMs = 500,
    retryMaxMs = 8_000,
    maxRetryAfterMs = 60_000,
    onDemandCompaction = false,
  } = options;
  if (typeof onDemandCompaction !== 'boolean') {
    throw optionError('onDemandCompaction must be a boolean');
  }
  if (typeof fetchImpl !== 'function') {
    throw optionError('no fetch function (pass options.fetch)');
  }
  for (const [name, value] of [['apiKey', apiKey], ['authToken', authToken], ['model', model]]) {
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw optionError(`${name} must be a string`);
    }
  }
  if (typeof baseURL !== 'string' || baseURL === '') {
    throw optionError('baseURL must be a non-empty string');
  }
  checkCount('maxRetries', maxRetries, false);
  if (!Number.isInteger(maxRetries)) throw optionError('maxRetries must be an integer');
  checkTimers({ timeoutMs, idleTimeoutMs, retryBaseMs, retryMaxMs, maxRetryAfterMs }, optionError);

  // The caller's own fetch may send what the global one cannot (another scheme, header names
  // and values it refuses): what it is given is passed as it is.
  const ownFetch = options.fetch !== undefined;
  const { url, root } = apiURL(baseURL, '/v1/messages', optionError, ownFetch);
  /** @type {Record<string, string>} */
  const headers = {
    'content-type': 'application/json',
    'anthropic-version': API_VERSION,
    'anthropic-dangerous-direct-browser-access': 'true',
  };
  /** @type {Record<string, string>} */
  const given = {};
  mergeHeaders(given, userHeaders, ownFetch);
  // The caller's own credentials, else (in Node and other runtimes with `process.env`) the
  // environment's, as the official SDK reads them.
  const ownCredentials = Boolean(apiKey || authToken || given['x-api-key'] || given.authorization);
  const env = apiKey === undefined && authToken === undefined && !ownCredentials ? readEnvironment(['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN']) : {};
  const key = apiKey || env.ANTHROPIC_API_KEY;
  const token = authToken || env.ANTHROPIC_AUTH_TOKEN;
  if (key) headers['x-api-key'] = key;
  if (token) headers.authorization = `Bearer ${token}`;
  mergeHeaders(headers, userHeaders, ownFetch);
  if (!ownFetch) checkHeaderValues(
    headers,
    (name) =>
      Object.hasOwn(given, name)
        ? 'options.headers'
        : name === 'x-api-key'
          ? apiKey ? 'options.apiKey' : 'ANTHROPIC_API_KEY in the environment'
          : name === 'authorization'
            ? authToken ? 'options.authToken' : 'ANTHROPIC_AUTH_TOKEN in the environment'
            : 'the defaults',
    optionError,
  );
  // No credentials at all would fail at the first request, minutes into a session: fail now,
  // unless something else may add them (the caller's fetch, or a proxy at another baseURL).
  const mayAuthenticateElsewhere = ownFetch || root !== DEFAULT_BASE_URL;
  if (!headers['x-api-key'] && !headers.authorization && !mayAuthenticateElsewhere) {
    throw optionError(
      'no API key: pass options.apiKey (or options.authToken, or an x-api-key / authorization header), ' +
        'or set ANTHROPIC_API_KEY in the environment (Node); a proxy that adds the key needs its baseURL',
      'MISSING_API_KEY',
    );
  }
  const useStream = Boolean(stream);

  /** What a call needs from these options (read by anthropic-send.js). */
  const cfg = {
    url, headers, fetchImpl, useStream, timeoutMs, idleTimeoutMs,
    retry: { maxRetries, retryBaseMs, retryMaxMs, maxRetryAfterMs },
  };

  /**
   * @param {import('./anthropic.js').MessagesRequest} request
   * @param {import('./anthropic.js').SummarizeOptions} [callOptions]
   * @returns {Promise<import('./anthropic.js').MessagesResponse>}
   */
  async function summarize(request, callOptions = {}) {
    if (request === null || typeof request !== 'object' || Array.isArray(request)) {
      throw Object.assign(new TypeError('summarize: request must be a Messages API request body (an object)'), { code: 'INVALID_ARGUMENT' });
    }
    const { signal, onText, contextWindow } = callOptions ?? {};
    if (onText !== undefined && onText !== null && typeof onText !== 'function') {
      throw Object.assign(new TypeError('summarize: onText must be a function'), { code: 'INVALID_ARGUMENT' });
    }
    if (signal?.aborted) throw abortError(signal);

    const body = { ...request };
    if (model) body.model = model;
    if (useStream) body.stream = true;
    else delete body.stream;
    /** @type {string | undefined} */
    let beta;
    // The API knows no `[1m]` id: it is the model with the 1M-context beta. A request the
    // library sized to a window past 200,000 tokens (`enable1mContext`, a 1M `contextWindow`)
    // asks for that context too.
    const oneM = typeof body.model === 'string' && ONE_M_SUFFIX.test(body.model);
    if (oneM) body.model = body.model.replace(ONE_M_SUFFIX, '');
    if (oneM || (typeof contextWindow === 'number' && contextWindow > STANDARD_WINDOW)) {
      beta = addBeta(headers['anthropic-beta'], LONG_CONTEXT_BETA);
    }
    // The library asks for the API's on-demand compaction with a top-level `compaction`.
    if (body.compaction !== undefined && body.compaction !== null) {
      beta = addBeta(beta ?? headers['anthropic-beta'], ON_DEMAND_COMPACTION_BETA);
    }
    const payload = JSON.stringify(body);
    /** Shared by the attempts: once text reached `onText`, a failure is no longer retried. */
    const call = { delivered: false, onText: onText ?? undefined, beta };

    const sender = await loadSender();
    return sender.send(cfg, payload, signal, call);
  }

  if (onDemandCompaction) {
    // Read by the library: it then sends the on-demand compaction request where it applies.
    Object.defineProperty(summarize, 'onDemandCompaction', { value: true, enumerable: true });
  }
  if (typeof model === 'string' && model.trim() !== '') {
    // Read by the library (unless `context.summaryModel` is given): the request it writes is
    // sized for the model this summarizer sends, its `max_tokens` within that model's limit.
    Object.defineProperty(summarize, 'summaryModel', { value: model, enumerable: true });
  }
  return summarize;
}

/** Lets users reach the error class through the package's one export. */
anthropicSummarizer.AnthropicApiError = AnthropicApiError;

/**
 * The module that sends the requests (anthropic-send.js: the HTTP attempt, retries, the stream
 * reader), loaded on a summarizer's first call, so that a page that only makes a summarizer
 * does not download it. A failed load is a retryable `NETWORK_ERROR`, and the next call tries
 * again.
 */
const loadSender = /* @__PURE__ */ loadOnce(
  async (n) => {
    const m = await importAgain(n, () => import('./anthropic-send.js'), import.meta.url, 'anthropic.js', 'anthropic-send.js');
    m.bind(AnthropicApiError, abortError);
    return m;
  },
  (e) =>
    new AnthropicApiError(`could not load the Anthropic summarizer's request code (anthropic-send.js): ${describe(e)}`, {
      code: 'NETWORK_ERROR',
      retryable: true,
      cause: e,
    }),
);

/**
 * The `AbortError` of a call aborted by the caller's signal.
 * @param {AbortSignal | undefined} signal
 */
function abortError(signal) {
  const err = new AnthropicApiError('The Anthropic API request was aborted', {
    code: 'ABORTED',
    cause: signal?.reason,
  });
  err.name = 'AbortError';
  return err;
}

/**
 * The error of a bad {@link anthropicSummarizer} call: a `TypeError` with a stable `code`.
 * @param {string} message
 * @param {import('./anthropic.js').AnthropicSummarizerOptionsErrorCode} [code]
 * @returns {TypeError & {code: import('./anthropic.js').AnthropicSummarizerOptionsErrorCode}}
 */
function optionError(message, code = 'INVALID_ARGUMENT') {
  return Object.assign(new TypeError(`anthropicSummarizer: ${message}`), { code });
}

/**
 * Adds the caller's headers (see options.js); a bad value is this summarizer's option error.
 * @param {Record<string, string>} into
 * @param {Record<string, string | null | undefined> | Iterable<readonly [string, string | null | undefined]> | ReadonlyMap<string, string | null | undefined> | Headers | undefined} extra
 * @param {boolean} anyName Whether any string is a name (the caller's own fetch).
 */
function mergeHeaders(into, extra, anyName) {
  mergeHeadersWith(into, extra, optionError, anyName);
}

/**
 * @param {string} name
 * @param {unknown} value
 * @param {boolean} optional
 */
function checkCount(name, value, optional) {
  checkCountWith(name, value, optional, optionError);
}
