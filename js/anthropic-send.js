// @ts-check
// The request half of anthropicSummarizer (anthropic.js): one HTTP attempt, the retries, the
// JSON and server-sent-events readers and the API's errors. anthropic.js checks the options
// and builds the request body at once, and loads this module on a summarizer's first call.
// The wire facts it relies on are listed at the top of anthropic.js.

import { withRetries, createSseParser, describe, fetchAttempt, giveText, readSseBody, retryableStatus, retryAfter, asText, quote, MAX_SUMMARY_BLOCKS, MAX_SUMMARY_TEXT } from './http.js';

// The front module's own objects, given once when it loads this one (`bind`): a static import of
// the front would make a bundler load it with every page that imports the package.
/** @type {any} The class itself (its declared type and the JS class differ in detail). */
let AnthropicApiError;
/** @type {(signal: AbortSignal | undefined) => Error} */
let abortError;

/**
 * Called by anthropic.js when it loads this module: the error class (and helpers) it owns.
 * @param {any} errorClass
 * @param {(signal: AbortSignal | undefined) => Error} abortErrorOf
 */
export function bind(errorClass, abortErrorOf) {
  AnthropicApiError = errorClass;
  abortError = abortErrorOf;
}

/**
 * What a summarizer's options gave (anthropic.js builds it once per summarizer).
 * @typedef {{
 *   url: string,
 *   headers: Record<string, string>,
 *   fetchImpl: typeof fetch | import('./anthropic.js').FetchFunction,
 *   useStream: boolean,
 *   timeoutMs: number | null | undefined,
 *   idleTimeoutMs: number | null | undefined,
 *   retry: {maxRetries: number, retryBaseMs: number, retryMaxMs: number, maxRetryAfterMs: number},
 * }} SendConfig
 */

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
 * Sends one summary request, with the retries the options allow.
 * @param {SendConfig} cfg
 * @param {string} payload The request body, as JSON text.
 * @param {AbortSignal | undefined} signal
 * @param {{delivered: boolean, onText: ((text: string) => void) | undefined, beta?: string}} call
 * @returns {Promise<import('./anthropic.js').MessagesResponse>}
 */
export function send(cfg, payload, signal, call) {
  if (signal?.aborted) return Promise.reject(abortError(signal));
  return withRetries(() => runAttempt(cfg, payload, signal, call), call, {
    isOwn: (err) => err instanceof AnthropicApiError,
    ...cfg.retry,
    signal,
    abortError,
  });
}

/**
 * One HTTP attempt: the request, then the SSE stream or the JSON body.
 * @param {SendConfig} cfg
 * @param {string} payload
 * @param {AbortSignal | undefined} signal
 * @param {{delivered: boolean, onText: ((text: string) => void) | undefined, beta?: string}} call
 * @returns {Promise<import('./anthropic.js').MessagesResponse>}
 */
function runAttempt(cfg, payload, signal, call) {
  const { headers } = cfg;
  return fetchAttempt({
    ...cfg,
    api: 'Anthropic API',
    init: { headers: call.beta ? { ...headers, 'anthropic-beta': call.beta } : { ...headers }, body: payload },
    requestIdHeader: 'request-id',
    abortError,
    error: (message, fields) => new AnthropicApiError(message, fields),
    httpError,
    readStream: (r) => readStream(r.response, r.guard, r.bumpIdle, r.ctl, r.stopError, call, r.requestId, r.headers),
    readJson: (r) => readJson(r.response, r.guard, r.ctl, r.stopError, r.requestId, r.headers),
    textOf: (message) => textOf(message) + compactionTextOf(message),
  }, signal, call);
}

/**
 * Reads a non-streamed (JSON) answer.
 * @param {Response} response
 * @param {<T>(p: Promise<T>) => Promise<T>} guard
 * @param {AbortController} ctl
 * @param {() => Error} stopError
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
 * @param {() => Error} stopError
 * @param {{delivered: boolean, onText: ((text: string) => void) | undefined}} call
 * @param {string | undefined} requestId
 * @param {Record<string, string>} responseHeaders
 * @returns {Promise<import('./anthropic.js').MessagesResponse>}
 */
async function readStream(response, guard, bumpIdle, ctl, stopError, call, requestId, responseHeaders) {
  const assembler = createAssembler(call, requestId, responseHeaders);
  const parser = createSseParser(
    (event, data) => assembler.event(event, data),
    (what) => tooLarge(what, requestId, responseHeaders),
  );
  const broken = (/** @type {unknown} */ e) =>
    new AnthropicApiError(`The Anthropic API stream broke: ${describe(e)}`, {
      code: 'NETWORK_ERROR',
      retryable: true,
      cause: e,
      requestId,
      headers: responseHeaders,
    });

  await readSseBody(response, parser, () => assembler.stopped, guard, bumpIdle, ctl, stopError, broken);
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
 * The error of a stream larger than a summary answer can be (`what` says what passed
 * `MAX_SUMMARY_TEXT`): not retried, another attempt would send the same.
 * @param {string} what
 * @param {string | undefined} requestId
 * @param {Record<string, string>} responseHeaders
 */
function tooLarge(what, requestId, responseHeaders) {
  return new AnthropicApiError(`The Anthropic API answer is too large: ${what}`, {
    code: 'INVALID_RESPONSE',
    requestId,
    headers: responseHeaders,
  });
}

/**
 * Assembles the Messages API response body from stream events, as the non-streamed answer
 * would have had it. Text deltas go to `onText`; thinking and signatures stay in their own blocks.
 * A block index that is not a whole number below `MAX_SUMMARY_BLOCKS` is the server's error
 * (`INVALID_RESPONSE`): blocks are kept in an array, which such an index would make sparse for
 * ever longer or write past (`"__proto__"`); so is more than `MAX_SUMMARY_TEXT` code units of
 * text in the blocks together.
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
  /** Code units of the text kept in the blocks so far. */
  let kept = 0;
  const keep = (/** @type {unknown} */ text) => {
    if (typeof text !== 'string') return;
    kept += text.length;
    if (kept > MAX_SUMMARY_TEXT) {
      throw tooLarge(`its content blocks hold more than ${MAX_SUMMARY_TEXT} code units of text (the most a summary answer holds)`, requestId, responseHeaders);
    }
  };
  /**
   * The block index of a `content_block_*` event (`fallback` when it has none).
   * @param {unknown} index
   * @param {number} fallback
   * @returns {number}
   */
  const blockIndex = (index, fallback) => {
    const i = index ?? fallback;
    if (typeof i === 'number' && Number.isInteger(i) && i >= 0 && i < MAX_SUMMARY_BLOCKS) return i;
    throw new AnthropicApiError(
      `The Anthropic API sent a stream event whose block index is not a whole number below ${MAX_SUMMARY_BLOCKS}: ${String(JSON.stringify(i)).slice(0, 100)}`,
      { code: 'INVALID_RESPONSE', requestId, headers: responseHeaders },
    );
  };

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
    giveText(call.onText, text);
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
        throw new AnthropicApiError(`The Anthropic API sent a stream event that is not JSON: ${quote(data, 200)}`, {
          code: 'INVALID_RESPONSE',
          cause: e,
          requestId,
          headers: responseHeaders,
        });
      }
      const type = (ev && typeof ev === 'object' && typeof ev.type === 'string' && ev.type) || eventName;
      // An event whose data is not an object (`null`, a number) has no fields.
      if (ev === null || typeof ev !== 'object') ev = {};
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
          const index = blockIndex(ev.index, blocks.length);
          const block = { ...(ev.content_block ?? { type: 'text', text: '' }) };
          keep(data);
          blocks[index] = block;
          if (block.type === 'text' && typeof block.text === 'string') deliver(block.text);
          break;
        }
        case 'content_block_delta': {
          ensure();
          const d = ev.delta ?? {};
          const index = blockIndex(ev.index, Math.max(0, blocks.length - 1));
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
              keep(d.text);
              block.text = (block.text ?? '') + d.text;
              deliver(d.text);
            }
          } else if (d.type === 'thinking_delta') {
            keep(d.thinking);
            block.thinking = (block.thinking ?? '') + (d.thinking ?? '');
          } else if (d.type === 'signature_delta') {
            keep(d.signature);
            block.signature = d.signature;
          } else if (d.type === 'input_json_delta') {
            keep(d.partial_json);
            json.set(index, (json.get(index) ?? '') + (d.partial_json ?? ''));
          } else if (d.type === 'citations_delta') {
            keep(data);
            (block.citations ??= []).push(d.citation);
          } else if (d.type === 'compaction_delta') {
            // The summary text in pieces; the opaque fields arrive whole (the last one wins).
            if (typeof d.content === 'string') {
              keep(d.content);
              block.content = (block.content ?? '') + d.content;
              deliver(d.content);
            }
            keep(d.encrypted_content);
            if (d.encrypted_content !== undefined) block.encrypted_content = d.encrypted_content;
            if (d.signature !== undefined) block.signature = d.signature;
          }
          break;
        }
        case 'content_block_stop': {
          if (ev.index === undefined) break;
          const index = blockIndex(ev.index, 0);
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
          // Own keys only: a `__proto__` key of the event's JSON would set the message's prototype.
          for (const [k, v] of Object.entries(rest)) if (k !== '__proto__') m[k] = v;
          // Usage in message_delta is cumulative: each field present replaces the earlier value.
          for (const [k, v] of Object.entries(ev.usage ?? {})) {
            if (v !== null && v !== undefined && k !== '__proto__') m.usage[k] = v;
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
          const status = Object.hasOwn(STATUS_OF_TYPE, errType) ? STATUS_OF_TYPE[/** @type {keyof typeof STATUS_OF_TYPE} */ (errType)] : undefined;
          // The server's words are quoted cut short; the whole event is `error`, the id `requestId`.
          throw new AnthropicApiError(
            `Anthropic API error${status ? ` ${status}` : ''} ${quote(errType, 100)} (in the stream): ${quote(asText(error.message ?? 'no message'))}` +
              (requestId ? ` (request-id ${quote(requestId, 200)})` : ''),
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
  const apiMessage = apiError && typeof apiError.message === 'string' ? apiError.message : text || statusText || 'no message';
  const requestId = responseHeaders['request-id'] ?? (body && typeof body.request_id === 'string' ? body.request_id : undefined);
  const retryable = retryableStatus(status, responseHeaders, NEVER_RETRY.has(status));
  // The message quotes the server's words and the request id cut short (a proxy may send
  // anything); the whole body is `error`, the headers `headers`, the id `requestId`.
  return new AnthropicApiError(
    `Anthropic API error ${status}${type ? ` ${quote(type, 100)}` : ''}: ${quote(apiMessage)}` + (requestId ? ` (request-id ${quote(requestId, 200)})` : ''),
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
