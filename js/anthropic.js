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

import {
  withRetries,
  attemptControls,
  guardOptions,
  checkCount as checkCountWith,
  createSseParser,
  describe,
  headersToObject,
  likelyMeant,
  mergeHeaders as mergeHeadersWith,
  retryAfter,
} from './http.js';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
const API_VERSION = '2023-06-01';
/** The `anthropic-beta` value a request that asks for on-demand compaction is sent with. */
const ON_DEMAND_COMPACTION_BETA = 'compact-2026-09-04';

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

/** The HTTP status each API error type is sent with (used for errors that arrive in a stream). */
const STATUS_OF_TYPE = Object.freeze({
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
});

/** Statuses never retried, whatever the server hints: the request itself must change. */
const NEVER_RETRY = new Set([400, 401, 402, 403, 404, 413, 422]);

/** Error types of an `error` stream event worth another attempt. */
const TRANSIENT_TYPES = new Set(['overloaded_error', 'api_error', 'rate_limit_error', 'timeout_error']);

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
  checkCount('timeoutMs', timeoutMs, true);
  checkCount('idleTimeoutMs', idleTimeoutMs, true);
  checkCount('retryBaseMs', retryBaseMs, false);
  checkCount('retryMaxMs', retryMaxMs, false);
  checkCount('maxRetryAfterMs', maxRetryAfterMs, false);

  const url = baseURL.replace(/\/+$/, '') + '/v1/messages';
  try {
    new URL(url);
  } catch {
    throw optionError(`baseURL is not a URL: ${baseURL}`);
  }
  /** @type {Record<string, string>} */
  const headers = {
    'content-type': 'application/json',
    'anthropic-version': API_VERSION,
    'anthropic-dangerous-direct-browser-access': 'true',
  };
  /** @type {Record<string, string>} */
  const given = {};
  mergeHeaders(given, userHeaders);
  // The caller's own credentials, else (in Node and other runtimes with `process.env`) the
  // environment's, as the official SDK reads them.
  const ownCredentials = Boolean(apiKey || authToken || given['x-api-key'] || given.authorization);
  const env = apiKey === undefined && authToken === undefined && !ownCredentials ? environmentCredentials() : {};
  const key = apiKey || env.apiKey;
  const token = authToken || env.authToken;
  if (key) headers['x-api-key'] = key;
  if (token) headers.authorization = `Bearer ${token}`;
  mergeHeaders(headers, userHeaders);
  // No credentials at all would fail at the first request, minutes into a session: fail now,
  // unless something else may add them (the caller's fetch, or a proxy at another baseURL).
  const mayAuthenticateElsewhere = options.fetch !== undefined || baseURL.replace(/\/+$/, '') !== DEFAULT_BASE_URL;
  if (!headers['x-api-key'] && !headers.authorization && !mayAuthenticateElsewhere) {
    throw optionError(
      'no API key: pass options.apiKey (or options.authToken, or an x-api-key / authorization header), ' +
        'or set ANTHROPIC_API_KEY in the environment (Node); a proxy that adds the key needs its baseURL',
      'MISSING_API_KEY',
    );
  }
  const useStream = Boolean(stream);

  /**
   * @param {import('./anthropic.js').MessagesRequest} request
   * @param {import('./anthropic.js').SummarizeOptions} [callOptions]
   * @returns {Promise<import('./anthropic.js').MessagesResponse>}
   */
  async function summarize(request, callOptions = {}) {
    if (request === null || typeof request !== 'object' || Array.isArray(request)) {
      throw Object.assign(new TypeError('summarize: request must be a Messages API request body (an object)'), { code: 'INVALID_ARGUMENT' });
    }
    const { signal, onText } = callOptions ?? {};
    if (onText !== undefined && onText !== null && typeof onText !== 'function') {
      throw Object.assign(new TypeError('summarize: onText must be a function'), { code: 'INVALID_ARGUMENT' });
    }
    if (signal?.aborted) throw abortError(signal);

    const body = { ...request };
    if (model) body.model = model;
    if (useStream) body.stream = true;
    else delete body.stream;
    const payload = JSON.stringify(body);
    // The library asks for the API's on-demand compaction with a top-level `compaction`.
    /** @type {string | undefined} */
    let beta;
    if (body.compaction !== undefined && body.compaction !== null) {
      const given = headers['anthropic-beta'];
      beta = given && given.split(',').map((b) => b.trim()).includes(ON_DEMAND_COMPACTION_BETA)
        ? given
        : given
          ? `${given},${ON_DEMAND_COMPACTION_BETA}`
          : ON_DEMAND_COMPACTION_BETA;
    }
    /** Shared by the attempts: once text reached `onText`, a failure is no longer retried. */
    const call = { delivered: false, onText: onText ?? undefined, beta };

    return withRetries(() => runAttempt(payload, signal, call), call, {
      isOwn: (err) => err instanceof AnthropicApiError,
      maxRetries,
      retryBaseMs,
      retryMaxMs,
      maxRetryAfterMs,
      signal,
      abortError,
    });
  }

  /**
   * One HTTP attempt: the request, then the SSE stream or the JSON body.
   * @param {string} payload
   * @param {AbortSignal | undefined} signal
   * @param {{delivered: boolean, onText: ((text: string) => void) | undefined, beta?: string}} call
   * @returns {Promise<import('./anthropic.js').MessagesResponse>}
   */
  async function runAttempt(payload, signal, call) {
    const { ctl, guard, bumpIdle, stopError, end } = attemptControls(signal, timeoutMs, idleTimeoutMs, abortError, (why) =>
      new AnthropicApiError(
        why === 'idle'
          ? `Anthropic API request timed out: no data for ${idleTimeoutMs} ms`
          : `Anthropic API request timed out after ${timeoutMs} ms`,
        { code: 'TIMEOUT', retryable: true },
      ),
    );

    let finished = false;
    try {
      bumpIdle();
      /** @type {Response} */
      let response;
      try {
        response = await guard(
          Promise.resolve().then(() =>
            fetchImpl(url, {
              method: 'POST',
              headers: call.beta ? { ...headers, 'anthropic-beta': call.beta } : { ...headers },
              body: payload,
              signal: ctl.signal,
            }),
          ),
        );
      } catch (e) {
        if (ctl.signal.aborted) throw stopError();
        throw new AnthropicApiError(`Network error calling the Anthropic API: ${describe(e)}`, {
          code: 'NETWORK_ERROR',
          retryable: true,
          cause: e,
        });
      }
      bumpIdle();
      const responseHeaders = headersToObject(response.headers);
      const requestId = responseHeaders['request-id'];

      if (!response.ok) {
        let text = '';
        try {
          text = await guard(response.text());
        } catch (e) {
          if (ctl.signal.aborted) throw stopError();
        }
        throw httpError(response.status, response.statusText, text, responseHeaders);
      }

      const contentType = responseHeaders['content-type'] ?? '';
      let message;
      if (useStream && !/\bjson\b/i.test(contentType)) {
        message = await readStream(response, guard, bumpIdle, ctl, stopError, call, requestId, responseHeaders);
      } else {
        message = await readJson(response, guard, ctl, stopError, requestId, responseHeaders);
        const text = textOf(message) + compactionTextOf(message);
        if (text && call.onText) {
          call.delivered = true;
          call.onText(text);
        }
      }
      if (requestId !== undefined) {
        Object.defineProperty(message, '_request_id', { value: requestId, enumerable: false, configurable: true });
      }
      finished = true;
      return message;
    } finally {
      // Frees the connection of an attempt that did not finish (an error, a thrown onText).
      end(finished);
    }
  }

  if (onDemandCompaction) {
    // Read by the library: it then sends the on-demand compaction request where it applies.
    Object.defineProperty(summarize, 'onDemandCompaction', { value: true, enumerable: true });
  }
  return summarize;
}

/** Lets users reach the error class through the package's one export. */
anthropicSummarizer.AnthropicApiError = AnthropicApiError;

/**
 * Reads a non-streamed (JSON) answer.
 * @param {Response} response
 * @param {<T>(p: Promise<T>) => Promise<T>} guard
 * @param {AbortController} ctl
 * @param {() => AnthropicApiError} stopError
 * @param {string | undefined} requestId
 * @param {Record<string, string>} responseHeaders
 * @returns {Promise<import('./anthropic.js').MessagesResponse>}
 */
async function readJson(response, guard, ctl, stopError, requestId, responseHeaders) {
  let text;
  try {
    text = await guard(response.text());
  } catch (e) {
    if (ctl.signal.aborted) throw stopError();
    throw new AnthropicApiError(`Network error reading the Anthropic API response: ${describe(e)}`, {
      code: 'NETWORK_ERROR',
      retryable: true,
      cause: e,
      requestId,
      headers: responseHeaders,
      status: response.status,
    });
  }
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new AnthropicApiError(`The Anthropic API answered ${response.status} with a body that is not JSON`, {
      code: 'INVALID_RESPONSE',
      status: response.status,
      error: text,
      cause: e,
      requestId,
      headers: responseHeaders,
    });
  }
  if (parsed === null || typeof parsed !== 'object' || !Array.isArray(parsed.content)) {
    throw new AnthropicApiError('The Anthropic API answer is not a Messages API response (no content array)', {
      code: 'INVALID_RESPONSE',
      status: response.status,
      error: text,
      requestId,
      headers: responseHeaders,
    });
  }
  return parsed;
}

/**
 * Reads the SSE stream of a streamed answer and assembles the response body.
 * @param {Response} response
 * @param {<T>(p: Promise<T>) => Promise<T>} guard
 * @param {() => void} bumpIdle
 * @param {AbortController} ctl
 * @param {() => AnthropicApiError} stopError
 * @param {{delivered: boolean, onText: ((text: string) => void) | undefined}} call
 * @param {string | undefined} requestId
 * @param {Record<string, string>} responseHeaders
 * @returns {Promise<import('./anthropic.js').MessagesResponse>}
 */
async function readStream(response, guard, bumpIdle, ctl, stopError, call, requestId, responseHeaders) {
  const assembler = createAssembler(call, requestId, responseHeaders);
  const parser = createSseParser((event, data) => assembler.event(event, data));
  const broken = (/** @type {unknown} */ e) =>
    new AnthropicApiError(`The Anthropic API stream broke: ${describe(e)}`, {
      code: 'NETWORK_ERROR',
      retryable: true,
      cause: e,
      requestId,
      headers: responseHeaders,
    });

  const body = response.body;
  if (!body || typeof body.getReader !== 'function') {
    // A fetch without streaming bodies: read it whole, then parse.
    let text;
    try {
      text = await guard(response.text());
    } catch (e) {
      if (ctl.signal.aborted) throw stopError();
      throw broken(e);
    }
    parser.push(text);
    parser.end();
  } else {
    const reader = body.getReader();
    const decoder = new TextDecoder('utf-8');
    let done = false;
    try {
      while (!assembler.stopped) {
        let chunk;
        try {
          chunk = await guard(reader.read());
        } catch (e) {
          if (ctl.signal.aborted) throw stopError();
          throw broken(e);
        }
        bumpIdle();
        if (chunk.done) {
          done = true;
          parser.push(decoder.decode());
          parser.end();
          break;
        }
        parser.push(decoder.decode(chunk.value, { stream: true }));
      }
    } finally {
      if (!done) reader.cancel().catch(() => {});
    }
  }
  if (!assembler.stopped) {
    throw new AnthropicApiError('The Anthropic API stream ended before message_stop', {
      code: 'NETWORK_ERROR',
      retryable: true,
      requestId,
      headers: responseHeaders,
    });
  }
  return assembler.message();
}

/**
 * Assembles the Messages API response body from stream events, as the non-streamed answer
 * would have had it. Text deltas go to `onText`; thinking and signatures stay in their own blocks.
 * @param {{delivered: boolean, onText: ((text: string) => void) | undefined}} call
 * @param {string | undefined} requestId
 * @param {Record<string, string>} responseHeaders
 */
function createAssembler(call, requestId, responseHeaders) {
  /** @type {Record<string, any> | null} */
  let message = null;
  /** @type {Array<Record<string, any>>} */
  const blocks = [];
  /** Raw `input_json_delta` text of tool_use blocks, by index. */
  const json = new Map();
  const state = { stopped: false };

  const ensure = () => {
    if (message === null) {
      message = {
        id: '',
        type: 'message',
        role: 'assistant',
        model: '',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 0, output_tokens: 0 },
      };
    }
    return message;
  };
  const deliver = (/** @type {string} */ text) => {
    if (!text || !call.onText) return;
    call.delivered = true;
    call.onText(text);
  };

  return {
    get stopped() {
      return state.stopped;
    },
    /**
     * @param {string} eventName
     * @param {string} data
     */
    event(eventName, data) {
      if (state.stopped) return;
      let ev;
      try {
        ev = JSON.parse(data);
      } catch (e) {
        throw new AnthropicApiError(`The Anthropic API sent a stream event that is not JSON: ${data.slice(0, 200)}`, {
          code: 'INVALID_RESPONSE',
          cause: e,
          requestId,
          headers: responseHeaders,
        });
      }
      const type = (ev && typeof ev === 'object' && typeof ev.type === 'string' && ev.type) || eventName;
      switch (type) {
        case 'message_start': {
          const m = ev.message ?? {};
          message = {
            ...m,
            type: m.type ?? 'message',
            role: m.role ?? 'assistant',
            content: [],
            stop_reason: m.stop_reason ?? null,
            stop_sequence: m.stop_sequence ?? null,
            usage: { ...(m.usage ?? {}) },
          };
          break;
        }
        case 'content_block_start': {
          ensure();
          const block = { ...(ev.content_block ?? { type: 'text', text: '' }) };
          blocks[ev.index ?? blocks.length] = block;
          if (block.type === 'text' && typeof block.text === 'string') deliver(block.text);
          break;
        }
        case 'content_block_delta': {
          ensure();
          const d = ev.delta ?? {};
          const index = ev.index ?? blocks.length - 1;
          let block = blocks[index];
          if (!block) {
            block =
              d.type === 'thinking_delta' || d.type === 'signature_delta'
                ? { type: 'thinking', thinking: '', signature: '' }
                : d.type === 'input_json_delta'
                  ? { type: 'tool_use', input: {} }
                  : d.type === 'compaction_delta'
                    ? { type: 'compaction', content: null }
                    : { type: 'text', text: '' };
            blocks[index] = block;
          }
          if (d.type === 'text_delta') {
            if (typeof d.text === 'string') {
              block.text = (block.text ?? '') + d.text;
              deliver(d.text);
            }
          } else if (d.type === 'thinking_delta') {
            block.thinking = (block.thinking ?? '') + (d.thinking ?? '');
          } else if (d.type === 'signature_delta') {
            block.signature = d.signature;
          } else if (d.type === 'input_json_delta') {
            json.set(index, (json.get(index) ?? '') + (d.partial_json ?? ''));
          } else if (d.type === 'citations_delta') {
            (block.citations ??= []).push(d.citation);
          } else if (d.type === 'compaction_delta') {
            // The summary text in pieces; the opaque fields arrive whole (the last one wins).
            if (typeof d.content === 'string') {
              block.content = (block.content ?? '') + d.content;
              deliver(d.content);
            }
            if (d.encrypted_content !== undefined) block.encrypted_content = d.encrypted_content;
            if (d.signature !== undefined) block.signature = d.signature;
          }
          break;
        }
        case 'content_block_stop': {
          const index = ev.index;
          if (json.has(index) && blocks[index]) {
            const raw = json.get(index);
            json.delete(index);
            try {
              blocks[index].input = raw ? JSON.parse(raw) : {};
            } catch {
              blocks[index].input = raw;
            }
          }
          break;
        }
        case 'message_delta': {
          const m = ensure();
          const { stop_reason, stop_sequence, ...rest } = ev.delta ?? {};
          if (stop_reason !== undefined) m.stop_reason = stop_reason;
          if (stop_sequence !== undefined) m.stop_sequence = stop_sequence;
          Object.assign(m, rest);
          // Usage in message_delta is cumulative: each field present replaces the earlier value.
          for (const [k, v] of Object.entries(ev.usage ?? {})) {
            if (v !== null && v !== undefined) m.usage[k] = v;
          }
          break;
        }
        case 'message_stop':
          ensure();
          state.stopped = true;
          break;
        case 'error': {
          const error = ev.error ?? {};
          const errType = typeof error.type === 'string' ? error.type : 'api_error';
          const status = STATUS_OF_TYPE[/** @type {keyof typeof STATUS_OF_TYPE} */ (errType)];
          throw new AnthropicApiError(
            `Anthropic API error${status ? ` ${status}` : ''} ${errType} (in the stream): ${error.message ?? 'no message'}` +
              (requestId ? ` (request-id ${requestId})` : ''),
            {
              status,
              error: ev,
              type: errType,
              retryable: TRANSIENT_TYPES.has(errType),
              requestId: requestId ?? ev.request_id,
              headers: responseHeaders,
            },
          );
        }
        default:
          // ping, and event types added to the API later.
          break;
      }
    },
    /** @returns {import('./anthropic.js').MessagesResponse} */
    message() {
      const m = ensure();
      m.content = blocks.filter(Boolean);
      return /** @type {import('./anthropic.js').MessagesResponse} */ (m);
    },
  };
}

/**
 * The error of a non-2xx answer.
 * @param {number} status
 * @param {string} statusText
 * @param {string} text
 * @param {Record<string, string>} responseHeaders
 */
function httpError(status, statusText, text, responseHeaders) {
  let body;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const apiError = body && typeof body === 'object' ? body.error : undefined;
  const type = apiError && typeof apiError.type === 'string' ? apiError.type : undefined;
  const apiMessage =
    apiError && typeof apiError.message === 'string'
      ? apiError.message
      : text
        ? text.slice(0, 500)
        : statusText || 'no message';
  const requestId = responseHeaders['request-id'] ?? (body && typeof body.request_id === 'string' ? body.request_id : undefined);
  const hint = responseHeaders['x-should-retry'];
  const retryable = NEVER_RETRY.has(status)
    ? false
    : hint === 'true'
      ? true
      : hint === 'false'
        ? false
        : status === 408 || status === 409 || status === 429 || status >= 500;
  return new AnthropicApiError(
    `Anthropic API error ${status}${type ? ` ${type}` : ''}: ${apiMessage}` + (requestId ? ` (request-id ${requestId})` : ''),
    {
      status,
      // The API's error body when the answer is one; otherwise (a proxy's page) its raw text.
      error: isApiErrorBody(body) ? body : text || undefined,
      headers: responseHeaders,
      requestId,
      type,
      retryable,
      retryAfterMs: retryAfter(responseHeaders),
    },
  );
}

/**
 * Whether a parsed body has the API's error shape `{type: 'error', error: {type, message}}`.
 * @param {unknown} body
 */
function isApiErrorBody(body) {
  const b = /** @type {{type?: unknown, error?: unknown} | null | undefined} */ (body);
  return Boolean(b && typeof b === 'object' && b.type === 'error' && b.error && typeof b.error === 'object');
}

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
 * The text of a response's text blocks, joined.
 * @param {{content?: Array<{type?: string, text?: string}>}} message
 */
function textOf(message) {
  return (message.content ?? [])
    .filter((b) => b && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text)
    .join('');
}

/**
 * The summary text of a response's `compaction` blocks (on-demand compaction).
 * @param {{content?: Array<{type?: string, content?: unknown}>}} message
 */
function compactionTextOf(message) {
  return (message.content ?? [])
    .filter((b) => b && b.type === 'compaction' && typeof b.content === 'string')
    .map((b) => /** @type {string} */ (b.content))
    .join('');
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
 * `ANTHROPIC_API_KEY` and `ANTHROPIC_AUTH_TOKEN` of `process.env` where there is one (Node,
 * Bun, Deno's Node compatibility); nothing in browsers.
 * @returns {{apiKey?: string, authToken?: string}}
 */
function environmentCredentials() {
  const env = /** @type {{process?: {env?: Record<string, string | undefined>}}} */ (globalThis).process?.env;
  if (!env || typeof env !== 'object') return {};
  const read = (/** @type {string} */ name) => {
    const v = env[name];
    return typeof v === 'string' && v !== '' ? v : undefined;
  };
  return { apiKey: read('ANTHROPIC_API_KEY'), authToken: read('ANTHROPIC_AUTH_TOKEN') };
}

/**
 * Adds the caller's headers (see http.js); a bad value is this summarizer's option error.
 * @param {Record<string, string>} into
 * @param {Record<string, string | null | undefined> | Headers | undefined} extra
 */
function mergeHeaders(into, extra) {
  mergeHeadersWith(into, extra, optionError);
}

/**
 * @param {string} name
 * @param {unknown} value
 * @param {boolean} optional
 */
function checkCount(name, value, optional) {
  checkCountWith(name, value, optional, optionError);
}
