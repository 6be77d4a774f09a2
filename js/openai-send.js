// @ts-check
// The request half of openaiSummarizer (openai.js): the request body, one HTTP attempt, the
// retries, the JSON and server-sent-events readers of both APIs and their errors. openai.js
// checks the options and loads this module on a summarizer's first call. The wire facts it
// relies on are listed at the top of openai.js.

import { withRetries, createSseParser, describe, fetchAttempt, giveText, readSseBody, retryableStatus, retryAfter, asText, quote, MAX_SUMMARY_TEXT } from './http.js';
import { chatOfRequest, messagesResponse, TRANSIENT_STATUSES } from './summary-request.js';

// The front module's own objects, given once when it loads this one (`bind`): a static import of
// the front would make a bundler load it with every page that imports the package.
/** @type {any} The class itself (its declared type and the JS class differ in detail). */
let OpenAiApiError;
/** @type {typeof import('./openai.js').rateLimitReset} */
let rateLimitReset;

/**
 * Called by openai.js when it loads this module: the error class (and helpers) it owns.
 * @param {any} errorClass
 * @param {typeof import('./openai.js').rateLimitReset} fn0
 */
export function bind(errorClass, fn0) {
  OpenAiApiError = errorClass;
  rateLimitReset = fn0;
}

/**
 * What a summarizer's options gave (openai.js builds it once per summarizer).
 * @typedef {{
 *   url: string,
 *   headers: Record<string, string>,
 *   fetchImpl: typeof fetch | import('./anthropic.js').FetchFunction,
 *   useStream: boolean,
 *   api: 'chat' | 'responses',
 *   model: string | null | undefined,
 *   maxOutputTokens: number | null | undefined,
 *   extraBody: Record<string, unknown> | undefined,
 *   timeoutMs: number | null | undefined,
 *   idleTimeoutMs: number | null | undefined,
 *   retry: {maxRetries: number, retryBaseMs: number, retryMaxMs: number, maxRetryAfterMs: number},
 * }} SendConfig
 */

/** Statuses the library retries by itself unless told the summarizer gave up. */
const TRANSIENT = new Set(TRANSIENT_STATUSES);

/** Statuses never retried, whatever the server hints: the request itself must change. */
const NEVER_RETRY = new Set([400, 401, 403, 404, 413, 422]);

/** Error codes of a 429 (or a streamed error) that waiting does not cure. */
const PERMANENT_CODES = new Set(['insufficient_quota', 'context_length_exceeded', 'invalid_api_key', 'model_not_found']);

/** Error codes and types of a streamed error worth another attempt. */
const TRANSIENT_STREAM_ERRORS = new Set(['server_error', 'rate_limit_exceeded', 'server_is_overloaded', 'slow_down', 'api_error', 'overloaded_error']);

/**
 * @typedef {{requestId: string | undefined, headers: Record<string, string>, status: number}} Meta
 * @typedef {{delivered: boolean, onText: ((text: string) => void) | undefined}} Call
 * @typedef {{event(name: string, data: string): void, readonly done: boolean, readonly complete: boolean, message(): ReturnType<typeof messagesResponse>}} Assembler
 *   `done`: the end of the answer was read (nothing more is read); `complete`: the stream may
 *   end here without losing the answer (Chat Completions: after a `finish_reason`, the end
 *   the openai SDK takes too; several OpenAI-compatible servers and proxies send no `[DONE]`).
 */

/**
 * The request body for one summary request.
 * @param {SendConfig} cfg
 * @param {unknown} request
 */
function bodyOf(cfg, request) {
  const { model, api, useStream, maxOutputTokens, extraBody } = cfg;
  const chat = chatOfRequest(request, 'openaiSummarizer');
  const chosenModel = model || chat.model;
  if (!chosenModel) {
    throw Object.assign(new TypeError('openaiSummarizer: no model (pass options.model)'), { code: 'INVALID_ARGUMENT' });
  }
  const limit =
    chat.maxTokens !== undefined && maxOutputTokens !== undefined && maxOutputTokens !== null
      ? Math.min(chat.maxTokens, maxOutputTokens)
      : (chat.maxTokens ?? maxOutputTokens ?? undefined);
  /** @type {Record<string, unknown>} */
  let body;
  if (api === 'chat') {
    body = {
      model: chosenModel,
      messages: [...(chat.system ? [{ role: 'system', content: chat.system }] : []), ...chat.messages],
    };
    if (limit !== undefined) body.max_completion_tokens = limit;
    if (useStream) {
      body.stream = true;
      body.stream_options = { include_usage: true };
    }
  } else {
    body = { model: chosenModel, input: chat.messages, store: false };
    if (chat.system) body.instructions = chat.system;
    if (limit !== undefined) body.max_output_tokens = limit;
    if (useStream) body.stream = true;
  }
  return JSON.stringify({ ...body, ...(extraBody ?? {}) });
}

/**
 * Sends one summary request, with the retries the options allow.
 * @param {SendConfig} cfg
 * @param {import('./openai.js').SummaryRequest} request
 * @param {AbortSignal | undefined} signal
 * @param {Call} call
 * @returns {Promise<import('./openai.js').SummaryResponseBody>}
 */
export function send(cfg, request, signal, call) {
  const payload = bodyOf(cfg, request);
  if (signal?.aborted) throw abortError(signal);
  return withRetries(() => runAttempt(cfg, payload, signal, call), call, {
    isOwn: (err) => err instanceof OpenAiApiError,
    ...cfg.retry,
    signal,
    abortError,
    transient: TRANSIENT,
  });
}

/**
 * One HTTP attempt: the request, then the SSE stream or the JSON body.
 * @param {SendConfig} cfg
 * @param {string} payload
 * @param {AbortSignal | undefined} signal
 * @param {{delivered: boolean, onText: ((text: string) => void) | undefined}} call
 */
function runAttempt(cfg, payload, signal, call) {
  const { api } = cfg;
  /** @param {import('./http.js').AttemptResponse} r */
  const metaOf = (r) => ({ requestId: r.requestId, headers: r.headers, status: r.response.status });
  return fetchAttempt({
    ...cfg,
    api: 'OpenAI API',
    init: { headers: { ...cfg.headers }, body: payload },
    requestIdHeader: 'x-request-id',
    abortError,
    error: (message, fields) => new OpenAiApiError(message, fields),
    httpError,
    readStream: async (r) => {
      const meta = metaOf(r);
      const assembler = api === 'chat' ? chatAssembler(call, meta) : responsesAssembler(call, meta);
      await readSse(r.response, r.guard, r.bumpIdle, r.ctl, r.stopError, assembler, meta);
      return assembler.message();
    },
    readJson: async (r) => {
      const meta = metaOf(r);
      const parsed = await readJson(r.response, r.guard, r.ctl, r.stopError, meta);
      return api === 'chat' ? chatResponse(parsed, meta) : responsesResponse(parsed, meta);
    },
    textOf: (message) => message.content.map((b) => ('text' in b && typeof b.text === 'string' ? b.text : '')).join(''),
  }, signal, call);
}

/**
 * Reads a whole JSON answer.
 * @param {Response} response
 * @param {<T>(p: Promise<T>) => Promise<T>} guard
 * @param {AbortController} ctl
 * @param {() => Error} stopError
 * @param {Meta} meta
 * @returns {Promise<any>}
 */
async function readJson(response, guard, ctl, stopError, meta) {
  let text;
  try {
    text = await guard(response.text());
  } catch (e) {
    if (ctl.signal.aborted) throw stopError();
    throw new OpenAiApiError(`Network error reading the OpenAI API response: ${describe(e)}`, { code: 'NETWORK_ERROR', retryable: true, cause: e, ...meta });
  }
  try {
    const parsed = JSON.parse(text);
    if (parsed === null || typeof parsed !== 'object') throw new Error('not an object');
    return parsed;
  } catch (e) {
    throw new OpenAiApiError(`The OpenAI API answered ${response.status} with a body that is not a JSON object`, {
      code: 'INVALID_RESPONSE',
      error: text,
      cause: e,
      ...meta,
    });
  }
}

/**
 * Reads a server-sent event stream into `assembler` until it is done.
 * @param {Response} response
 * @param {<T>(p: Promise<T>) => Promise<T>} guard
 * @param {() => void} bumpIdle
 * @param {AbortController} ctl
 * @param {() => Error} stopError
 * @param {Assembler} assembler
 * @param {Meta} meta
 */
async function readSse(response, guard, bumpIdle, ctl, stopError, assembler, meta) {
  const parser = createSseParser(
    (event, data) => assembler.event(event, data),
    (what) => tooLarge(what, meta),
  );
  const broken = (/** @type {unknown} */ e) =>
    new OpenAiApiError(`The OpenAI API stream broke: ${describe(e)}`, { code: 'NETWORK_ERROR', retryable: true, cause: e, ...meta });
  await readSseBody(response, parser, () => assembler.done, guard, bumpIdle, ctl, stopError, broken);
  if (!assembler.done && !assembler.complete) {
    throw new OpenAiApiError('The OpenAI API stream ended before the answer was complete', { code: 'NETWORK_ERROR', retryable: true, ...meta });
  }
}

/**
 * The error of a stream larger than a summary answer can be (`what` says what passed
 * `MAX_SUMMARY_TEXT`): not retried, another attempt would send the same.
 * @param {string} what
 * @param {Meta} meta
 */
function tooLarge(what, meta) {
  return new OpenAiApiError(`The OpenAI API answer is too large: ${what}`, { code: 'INVALID_RESPONSE', ...meta });
}

/**
 * Adds `piece` to `text` assembled from a stream, refusing more than `MAX_SUMMARY_TEXT` code
 * units as soon as it is.
 * @param {string} text
 * @param {string} piece
 * @param {Meta} meta
 */
function grown(text, piece, meta) {
  if (text.length + piece.length > MAX_SUMMARY_TEXT) {
    throw tooLarge(`its text is longer than ${MAX_SUMMARY_TEXT} code units (the most a summary answer holds)`, meta);
  }
  return text + piece;
}

/**
 * Parses one event's JSON data.
 * @param {string} data
 * @param {Meta} meta
 */
function parseEvent(data, meta) {
  try {
    return JSON.parse(data);
  } catch (e) {
    throw new OpenAiApiError(`The OpenAI API sent a stream event that is not JSON: ${quote(data, 200)}`, {
      code: 'INVALID_RESPONSE',
      cause: e,
      ...meta,
    });
  }
}

/**
 * The error of an error object sent inside a 200 stream (`{message, type, code, param}`).
 * @param {any} error
 * @param {unknown} raw The whole event.
 * @param {Meta} meta
 */
function streamedError(error, raw, meta) {
  const e = error && typeof error === 'object' ? error : {};
  const apiCode = typeof e.code === 'string' ? e.code : undefined;
  const type = typeof e.type === 'string' ? e.type : undefined;
  const transient = (apiCode !== undefined && TRANSIENT_STREAM_ERRORS.has(apiCode)) || (type !== undefined && TRANSIENT_STREAM_ERRORS.has(type));
  const status = apiCode === 'context_length_exceeded' ? 400 : apiCode === 'rate_limit_exceeded' ? 429 : undefined;
  // The server's words are quoted cut short; the whole event is `error`, the id `requestId`.
  return new OpenAiApiError(
    `OpenAI API error${status ? ` ${status}` : ''}${type ? ` ${quote(type, 100)}` : ''}${apiCode ? ` (${quote(apiCode, 100)})` : ''} (in the stream): ${quote(asText(e.message ?? 'no message'))}` +
      (meta.requestId ? ` (request-id ${quote(meta.requestId, 200)})` : ''),
    { status, error: raw, type, apiCode, param: typeof e.param === 'string' ? e.param : undefined, retryable: transient, requestId: meta.requestId, headers: meta.headers },
  );
}

/**
 * Usage in the Messages API's names (`input_tokens` without the cached part, as Anthropic counts).
 * @param {any} usage Chat (`prompt_tokens`, `completion_tokens`) or Responses (`input_tokens`, `output_tokens`).
 */
function usageOf(usage) {
  if (!usage || typeof usage !== 'object') return {};
  const input = usage.prompt_tokens ?? usage.input_tokens ?? 0;
  const cached = (usage.prompt_tokens_details ?? usage.input_tokens_details)?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(0, input - cached),
    cache_read_input_tokens: cached,
    output_tokens: usage.completion_tokens ?? usage.output_tokens ?? 0,
  };
}

/** @param {unknown} reason Chat Completions' `finish_reason`. */
function chatStopReason(reason) {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'content_filter':
      return 'refusal';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    default:
      return 'end_turn';
  }
}

/**
 * A non-streamed Chat Completions answer as a Messages API response body.
 * @param {any} parsed
 * @param {Meta} meta
 */
function chatResponse(parsed, meta) {
  const choice = Array.isArray(parsed.choices) ? parsed.choices[0] : undefined;
  if (!choice || typeof choice !== 'object') {
    throw new OpenAiApiError('The OpenAI API answer is not a chat completion (no choices)', { code: 'INVALID_RESPONSE', error: parsed, ...meta });
  }
  const m = choice.message ?? {};
  const text = typeof m.content === 'string' ? m.content : '';
  return messagesResponse({
    text,
    stopReason: m.refusal && !text ? 'refusal' : chatStopReason(choice.finish_reason),
    usage: usageOf(parsed.usage),
    model: parsed.model,
    id: parsed.id,
    raw: parsed,
  });
}

/**
 * The text of a Responses API `output` array (its messages' `output_text` parts).
 * @param {any} output
 */
function outputText(output) {
  if (!Array.isArray(output)) return '';
  return output
    .filter((item) => item && item.type === 'message' && Array.isArray(item.content))
    .flatMap((item) => item.content)
    .filter((part) => part && part.type === 'output_text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('');
}

/**
 * Whether a Responses API `output` array holds a `refusal` part (the model declined to answer).
 * @param {any} output
 */
function refused(output) {
  return Array.isArray(output) && output.some((item) => item && item.type === 'message' && Array.isArray(item.content) && item.content.some((/** @type {any} */ part) => part && part.type === 'refusal'));
}

/** @param {any} response A Responses API response object. */
function responsesStopReason(response) {
  if (response.status === 'incomplete') {
    const why = response.incomplete_details?.reason;
    return why === 'content_filter' ? 'refusal' : 'max_tokens';
  }
  return 'end_turn';
}

/**
 * A Responses API response object as a Messages API response body; a `failed` one is an error.
 * @param {any} parsed
 * @param {Meta} meta
 * @param {string} [streamedText] The text already assembled from deltas.
 */
function responsesResponse(parsed, meta, streamedText) {
  if (!parsed || typeof parsed !== 'object' || (parsed.output === undefined && parsed.status === undefined)) {
    throw new OpenAiApiError('The OpenAI API answer is not a Responses API response (no output)', { code: 'INVALID_RESPONSE', error: parsed, ...meta });
  }
  if (parsed.status === 'failed' || (parsed.error && parsed.status !== 'completed')) {
    throw streamedError(parsed.error, parsed, meta);
  }
  const text = outputText(parsed.output) || streamedText || '';
  return messagesResponse({
    text,
    // A refusal part and no text: the model refused (as a Chat answer's `refusal`).
    stopReason: !text && refused(parsed.output) ? 'refusal' : responsesStopReason(parsed),
    usage: usageOf(parsed.usage),
    model: parsed.model,
    id: parsed.id,
    raw: parsed,
  });
}

/**
 * Assembles a streamed Chat Completions answer.
 * @param {Call} call
 * @param {Meta} meta
 * @returns {Assembler}
 */
function chatAssembler(call, meta) {
  let text = '';
  let done = false;
  /** @type {unknown} */
  let finish;
  /** @type {any} */
  let usage;
  let model = '';
  let id = '';
  let refusal = '';
  return {
    get done() {
      return done;
    },
    // A stream cut before any finish_reason stays NETWORK_ERROR (retried).
    get complete() {
      return done || finish !== undefined;
    },
    event(_name, data) {
      if (done) return;
      if (data.trim() === '[DONE]') {
        done = true;
        return;
      }
      const ev = parseEvent(data, meta);
      if (ev && typeof ev === 'object' && ev.error) throw streamedError(ev.error, ev, meta);
      if (typeof ev?.model === 'string') model = ev.model;
      if (typeof ev?.id === 'string') id = ev.id;
      if (ev?.usage) usage = ev.usage;
      const choice = Array.isArray(ev?.choices) ? ev.choices[0] : undefined;
      if (!choice) return;
      const piece = choice.delta?.content;
      if (typeof piece === 'string' && piece !== '') {
        text = grown(text, piece, meta);
        if (call.onText) {
          call.delivered = true;
          giveText(call.onText, piece);
        }
      }
      if (typeof choice.delta?.refusal === 'string') refusal = grown(refusal, choice.delta.refusal, meta);
      if (choice.finish_reason) finish = choice.finish_reason;
    },
    message() {
      return messagesResponse({
        text,
        stopReason: refusal && !text ? 'refusal' : chatStopReason(finish),
        usage: usageOf(usage),
        model,
        id,
      });
    },
  };
}

/**
 * Assembles a streamed Responses API answer: deltas for progress, the final `response` object
 * of `response.completed` / `response.incomplete` for the result.
 * @param {Call} call
 * @param {Meta} meta
 * @returns {Assembler}
 */
function responsesAssembler(call, meta) {
  let text = '';
  let done = false;
  /** @type {any} */
  let final;
  return {
    get done() {
      return done;
    },
    // `response.completed` / `response.incomplete` is the end: a stream cut before it is not.
    get complete() {
      return done;
    },
    event(name, data) {
      if (done) return;
      const ev = parseEvent(data, meta);
      const type = (ev && typeof ev.type === 'string' && ev.type) || name;
      switch (type) {
        case 'response.output_text.delta':
          if (typeof ev.delta === 'string' && ev.delta !== '') {
            text = grown(text, ev.delta, meta);
            if (call.onText) {
              call.delivered = true;
              giveText(call.onText, ev.delta);
            }
          }
          break;
        case 'response.completed':
        case 'response.incomplete':
          final = ev.response ?? {};
          done = true;
          break;
        case 'response.failed':
          throw streamedError(ev.response?.error, ev, meta);
        case 'error':
          throw streamedError(ev.error ?? ev, ev, meta);
        default:
          break;
      }
    },
    message() {
      return responsesResponse({ output: [], ...final }, meta, text);
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
  const apiError = body && typeof body === 'object' && body.error && typeof body.error === 'object' ? body.error : undefined;
  const type = typeof apiError?.type === 'string' ? apiError.type : undefined;
  const apiCode = typeof apiError?.code === 'string' ? apiError.code : undefined;
  const apiMessage = typeof apiError?.message === 'string' ? apiError.message : text || statusText || 'no message';
  const requestId = responseHeaders['x-request-id'];
  const retryable = retryableStatus(status, responseHeaders, NEVER_RETRY.has(status) || (apiCode !== undefined && PERMANENT_CODES.has(apiCode)));
  // The message quotes the server's words and the request id cut short (a proxy may send
  // anything); the whole body is `error`, the headers `headers`, the id `requestId`.
  return new OpenAiApiError(
    `OpenAI API error ${status}${type ? ` ${quote(type, 100)}` : ''}${apiCode ? ` (${quote(apiCode, 100)})` : ''}: ${quote(apiMessage)}` + (requestId ? ` (request-id ${quote(requestId, 200)})` : ''),
    {
      status,
      error: apiError ? body : text || undefined,
      headers: responseHeaders,
      requestId,
      type,
      apiCode,
      param: typeof apiError?.param === 'string' ? apiError.param : undefined,
      retryable,
      retryAfterMs: retryAfter(responseHeaders) ?? (status === 429 ? rateLimitReset(responseHeaders) : undefined),
    },
  );
}

/**
 * The `AbortError` of a call aborted by the caller's signal.
 * @param {AbortSignal | undefined} signal
 */
function abortError(signal) {
  const err = new OpenAiApiError('The OpenAI API request was aborted', { code: 'ABORTED', cause: signal?.reason });
  err.name = 'AbortError';
  return err;
}
