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
//   {include_usage: true}`), then `data: [DONE]`; an error can arrive as `data: {error}`.
// - Responses streaming: events named by `type`: `response.output_text.delta` (`delta`),
//   `response.completed` / `response.incomplete` (the whole `response`), `response.failed`
//   (`response.error`), and `error` (`code`, `message`).

import {
  withRetries,
  attemptControls,
  guardOptions,
  checkCount,
  createSseParser,
  describe,
  headersToObject,
  likelyMeant,
  mergeHeaders,
  readEnvironment,
  retryAfter,
} from './http.js';
import { chatOfRequest, messagesResponse, TRANSIENT_STATUSES } from './summary-request.js';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';

/** Statuses the library retries by itself unless told the summarizer gave up. */
const TRANSIENT = new Set(TRANSIENT_STATUSES);

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

/** Statuses never retried, whatever the server hints: the request itself must change. */
const NEVER_RETRY = new Set([400, 401, 403, 404, 413, 422]);

/** Error codes of a 429 (or a streamed error) that waiting does not cure. */
const PERMANENT_CODES = new Set(['insufficient_quota', 'context_length_exceeded', 'invalid_api_key', 'model_not_found']);

/** Error codes and types of a streamed error worth another attempt. */
const TRANSIENT_STREAM_ERRORS = new Set(['server_error', 'rate_limit_exceeded', 'server_is_overloaded', 'slow_down', 'api_error', 'overloaded_error']);

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
  checkCount('timeoutMs', timeoutMs, true, optionError);
  checkCount('idleTimeoutMs', idleTimeoutMs, true, optionError);
  checkCount('retryBaseMs', retryBaseMs, false, optionError);
  checkCount('retryMaxMs', retryMaxMs, false, optionError);
  checkCount('maxRetryAfterMs', maxRetryAfterMs, false, optionError);
  checkCount('maxOutputTokens', maxOutputTokens, true, optionError);
  if (extraBody !== undefined && (extraBody === null || typeof extraBody !== 'object' || Array.isArray(extraBody))) {
    throw optionError('extraBody must be an object (fields added to every request body)');
  }
  const root = baseURL.replace(/\/+$/, '');
  const url = root + (api === 'chat' ? '/chat/completions' : '/responses');
  try {
    new URL(url);
  } catch {
    throw optionError(`baseURL is not a URL: ${baseURL}`);
  }
  /** @type {Record<string, string>} */
  const headers = { 'content-type': 'application/json' };
  /** @type {Record<string, string>} */
  const given = {};
  mergeHeaders(given, userHeaders, optionError);
  const key = apiKey || (apiKey === undefined && !given.authorization ? env.OPENAI_API_KEY : undefined);
  if (key) headers.authorization = `Bearer ${key}`;
  if (organization) headers['openai-organization'] = organization;
  if (project) headers['openai-project'] = project;
  mergeHeaders(headers, userHeaders, optionError);
  const mayAuthenticateElsewhere = options.fetch !== undefined || root !== DEFAULT_BASE_URL;
  if (!headers.authorization && !mayAuthenticateElsewhere) {
    throw optionError(
      'no API key: pass options.apiKey (or an authorization header), or set OPENAI_API_KEY in the environment (Node); ' +
        'a proxy or a local server that needs no key needs its baseURL',
      'MISSING_API_KEY',
    );
  }
  const useStream = Boolean(stream);

  /**
   * The request body for one summary request.
   * @param {unknown} request
   */
  function bodyOf(request) {
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
   * @param {import('./openai.js').SummaryRequest} request
   * @param {import('./openai.js').SummarizeCallOptions} [callOptions]
   * @returns {Promise<import('./openai.js').SummaryResponseBody>}
   */
  async function summarize(request, callOptions = {}) {
    const { signal, onText } = callOptions ?? {};
    if (onText !== undefined && onText !== null && typeof onText !== 'function') {
      throw Object.assign(new TypeError('summarize: onText must be a function'), { code: 'INVALID_ARGUMENT' });
    }
    const payload = bodyOf(request);
    if (signal?.aborted) throw abortError(signal);
    const call = { delivered: false, onText: onText ?? undefined };
    return withRetries(() => runAttempt(payload, signal, call), call, {
      isOwn: (err) => err instanceof OpenAiApiError,
      maxRetries,
      retryBaseMs,
      retryMaxMs,
      maxRetryAfterMs,
      signal,
      abortError,
      transient: TRANSIENT,
    });
  }

  /**
   * One HTTP attempt: the request, then the SSE stream or the JSON body.
   * @param {string} payload
   * @param {AbortSignal | undefined} signal
   * @param {{delivered: boolean, onText: ((text: string) => void) | undefined}} call
   */
  async function runAttempt(payload, signal, call) {
    const { ctl, guard, bumpIdle, stopError, end } = attemptControls(signal, timeoutMs, idleTimeoutMs, abortError, (why) =>
      new OpenAiApiError(
        why === 'idle'
          ? `OpenAI API request timed out: no data for ${idleTimeoutMs} ms`
          : `OpenAI API request timed out after ${timeoutMs} ms`,
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
          Promise.resolve().then(() => fetchImpl(url, { method: 'POST', headers: { ...headers }, body: payload, signal: ctl.signal })),
        );
      } catch (e) {
        if (ctl.signal.aborted) throw stopError();
        throw new OpenAiApiError(`Network error calling the OpenAI API: ${describe(e)}`, { code: 'NETWORK_ERROR', retryable: true, cause: e });
      }
      bumpIdle();
      const responseHeaders = headersToObject(response.headers);
      const requestId = responseHeaders['x-request-id'];
      const meta = { requestId, headers: responseHeaders, status: response.status };

      if (!response.ok) {
        let text = '';
        try {
          text = await guard(response.text());
        } catch {
          if (ctl.signal.aborted) throw stopError();
        }
        throw httpError(response.status, response.statusText, text, responseHeaders);
      }
      const contentType = responseHeaders['content-type'] ?? '';
      /** @type {ReturnType<typeof messagesResponse>} */
      let message;
      if (useStream && !/\bjson\b/i.test(contentType)) {
        const assembler = api === 'chat' ? chatAssembler(call, meta) : responsesAssembler(call, meta);
        await readSse(response, guard, bumpIdle, ctl, stopError, assembler, meta);
        message = assembler.message();
      } else {
        const parsed = await readJson(response, guard, ctl, stopError, meta);
        message = api === 'chat' ? chatResponse(parsed, meta) : responsesResponse(parsed, meta);
        const text = message.content.map((b) => ('text' in b && typeof b.text === 'string' ? b.text : '')).join('');
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
      end(finished);
    }
  }

  return Object.assign(summarize, { api });
}

/** Lets users reach the error class through the function. */
openaiSummarizer.OpenAiApiError = OpenAiApiError;

/**
 * @typedef {{requestId: string | undefined, headers: Record<string, string>, status: number}} Meta
 * @typedef {{delivered: boolean, onText: ((text: string) => void) | undefined}} Call
 * @typedef {{event(name: string, data: string): void, readonly done: boolean, message(): ReturnType<typeof messagesResponse>}} Assembler
 */

/**
 * Reads a whole JSON answer.
 * @param {Response} response
 * @param {<T>(p: Promise<T>) => Promise<T>} guard
 * @param {AbortController} ctl
 * @param {() => OpenAiApiError} stopError
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
 * @param {() => OpenAiApiError} stopError
 * @param {Assembler} assembler
 * @param {Meta} meta
 */
async function readSse(response, guard, bumpIdle, ctl, stopError, assembler, meta) {
  const parser = createSseParser((event, data) => assembler.event(event, data));
  const broken = (/** @type {unknown} */ e) =>
    new OpenAiApiError(`The OpenAI API stream broke: ${describe(e)}`, { code: 'NETWORK_ERROR', retryable: true, cause: e, ...meta });
  const body = response.body;
  if (!body || typeof body.getReader !== 'function') {
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
      while (!assembler.done) {
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
  if (!assembler.done) {
    throw new OpenAiApiError('The OpenAI API stream ended before the answer was complete', { code: 'NETWORK_ERROR', retryable: true, ...meta });
  }
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
    throw new OpenAiApiError(`The OpenAI API sent a stream event that is not JSON: ${data.slice(0, 200)}`, {
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
  return new OpenAiApiError(
    `OpenAI API error${status ? ` ${status}` : ''}${type ? ` ${type}` : ''}${apiCode ? ` (${apiCode})` : ''} (in the stream): ${e.message ?? 'no message'}` +
      (meta.requestId ? ` (request-id ${meta.requestId})` : ''),
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
    stopReason: responsesStopReason(parsed),
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
        text += piece;
        if (call.onText) {
          call.delivered = true;
          call.onText(piece);
        }
      }
      if (typeof choice.delta?.refusal === 'string') refusal += choice.delta.refusal;
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
    event(name, data) {
      if (done) return;
      const ev = parseEvent(data, meta);
      const type = (ev && typeof ev.type === 'string' && ev.type) || name;
      switch (type) {
        case 'response.output_text.delta':
          if (typeof ev.delta === 'string' && ev.delta !== '') {
            text += ev.delta;
            if (call.onText) {
              call.delivered = true;
              call.onText(ev.delta);
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
  const apiMessage = typeof apiError?.message === 'string' ? apiError.message : text ? text.slice(0, 500) : statusText || 'no message';
  const requestId = responseHeaders['x-request-id'];
  const hint = responseHeaders['x-should-retry'];
  const retryable =
    NEVER_RETRY.has(status) || (apiCode !== undefined && PERMANENT_CODES.has(apiCode))
      ? false
      : hint === 'true'
        ? true
        : hint === 'false'
          ? false
          : status === 408 || status === 409 || status === 429 || status >= 500;
  return new OpenAiApiError(
    `OpenAI API error ${status}${type ? ` ${type}` : ''}${apiCode ? ` (${apiCode})` : ''}: ${apiMessage}` + (requestId ? ` (request-id ${requestId})` : ''),
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
 * The `AbortError` of a call aborted by the caller's signal.
 * @param {AbortSignal | undefined} signal
 */
function abortError(signal) {
  const err = new OpenAiApiError('The OpenAI API request was aborted', { code: 'ABORTED', cause: signal?.reason });
  err.name = 'AbortError';
  return err;
}

/**
 * The error of a bad {@link openaiSummarizer} call: a `TypeError` with a stable `code`.
 * @param {string} message
 * @param {'INVALID_ARGUMENT' | 'MISSING_API_KEY'} [code]
 */
function optionError(message, code = 'INVALID_ARGUMENT') {
  return Object.assign(new TypeError(`openaiSummarizer: ${message}`), { code });
}
