// @ts-check
// aiSdkSummarizer: the summarizer of the library's contract over any Vercel AI SDK language
// model (every AI SDK provider: OpenAI, Anthropic, Google, Mistral, a gateway, a local server).
// It uses the caller's own `ai` package (a peer dependency, never bundled here): `generateText`
// and `streamText` are passed in as options, or imported from 'ai' at the first call.
//
// What it relies on (the `ai` package, versions 5 and 6): `streamText({model, system, messages,
// maxOutputTokens, maxRetries, abortSignal, headers, providerOptions, onError})` and its
// `fullStream` parts (`text-delta` with `text`, `finish` with `finishReason` and `totalUsage`,
// `error`, `abort`); `generateText` with the same options resolving `{text, finishReason, usage,
// response}`; errors `APICallError` (`statusCode`, `responseBody`, `responseHeaders`,
// `isRetryable`) and `RetryError` (`reason`, `lastError`, `errors`) after its own retries.

import { attemptControls, describe, field, giveText, guardOptions, isInstance, likelyMeant, quoteKeeping, retryAfter, headersToObject, wordsOf, MAX_SUMMARY_TEXT } from './http.js';
import { chatOfRequest, isPromptTooLong, messagesResponse, SummarizerError } from './summary-request.js';
import { checkCount, checkTimers } from './options.js';

/** The options {@link aiSdkSummarizer} reads; any other key is a mistake. */
const OPTION_KEYS = Object.freeze([
  'generateText',
  'streamText',
  'stream',
  'maxRetries',
  'timeoutMs',
  'idleTimeoutMs',
  'maxOutputTokens',
  'providerOptions',
  'headers',
  'callSettings',
]);

/**
 * Makes a summarizer (the library's `summarize` contract) that asks an AI SDK language model for
 * the summary and resolves with a Messages API response body (`content`, `stop_reason` —
 * `max_tokens` when the model stopped at the output limit — and `usage`).
 *
 * The AI SDK's own retries apply (`maxRetries`, default 2; it honours `retry-after`). Errors are
 * {@link SummarizerError}s with a `code`; a provider's prompt-too-long answer (Anthropic's
 * "prompt is too long", OpenAI's `context_length_exceeded`, Gemini's "input token count …
 * exceeds the maximum number of tokens allowed") keeps the provider's words, so the library
 * drops the oldest turns and asks again.
 *
 * Bad arguments throw at once, a `TypeError` with `code: 'INVALID_ARGUMENT'` (an unknown key
 * with a "did you mean" hint).
 *
 * @param {import('./ai-sdk.js').AiSdkLanguageModel} model A model of any AI SDK provider
 *   (`openai('gpt-4.1-mini')`, `anthropic('claude-haiku-4-5')`, `google('gemini-2.5-flash')`), or
 *   a model id string for the AI SDK's global provider (the AI Gateway by default).
 * @param {import('./ai-sdk.js').AiSdkSummarizerOptions} [options]
 * @returns {import('./ai-sdk.js').AiSdkSummarizer}
 * @example
 *   import { generateText, streamText } from 'ai';
 *   import { openai } from '@ai-sdk/openai';
 *   const summarize = aiSdkSummarizer(openai('gpt-4.1-mini'), { generateText, streamText });
 */
export function aiSdkSummarizer(model, options = {}) {
  return guardOptions(() => buildAiSdkSummarizer(model, options), optionError);
}

/**
 * The body of the function above, unguarded.
 * @param {import('./ai-sdk.js').AiSdkLanguageModel} model
 * @param {import('./ai-sdk.js').AiSdkSummarizerOptions} options
 */
function buildAiSdkSummarizer(model, options) {
  const isModel = typeof model === 'string' ? model !== '' : model !== null && typeof model === 'object';
  if (!isModel) {
    throw optionError('model must be an AI SDK language model (e.g. openai("gpt-4.1-mini")) or a model id string');
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw optionError('options must be an object');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) {
      const meant = likelyMeant(key, OPTION_KEYS);
      throw optionError(`options.${key} is not an option${meant ? ` (did you mean \`${meant}\`?)` : ''}; known: ${OPTION_KEYS.join(', ')}`);
    }
  }
  const { stream = true, maxRetries = 2, timeoutMs, idleTimeoutMs, maxOutputTokens, providerOptions, headers, callSettings } = options;
  for (const name of /** @type {const} */ (['generateText', 'streamText'])) {
    if (options[name] !== undefined && typeof options[name] !== 'function') throw optionError(`${name} must be the function of that name from 'ai'`);
  }
  checkCount('maxRetries', maxRetries, false, optionError);
  checkTimers({ timeoutMs, idleTimeoutMs }, optionError);
  checkCount('maxOutputTokens', maxOutputTokens, true, optionError);
  if (!Number.isInteger(maxRetries)) throw optionError('maxRetries must be an integer');
  for (const [name, value] of [['providerOptions', providerOptions], ['headers', headers], ['callSettings', callSettings]]) {
    if (value !== undefined && (value === null || typeof value !== 'object' || Array.isArray(value))) throw optionError(`${name} must be an object`);
  }
  const useStream = Boolean(stream);
  const label = typeof model === 'string' ? model : `${model.provider ?? 'AI SDK'} ${model.modelId ?? 'model'}`;

  /** @type {Promise<{generateText?: Function, streamText?: Function}> | undefined} */
  let loaded;
  /** The caller's functions, else the caller's installed 'ai' (loaded once). */
  const sdk = () => {
    const fn = useStream ? options.streamText : options.generateText;
    if (fn) return Promise.resolve({ generateText: options.generateText, streamText: options.streamText });
    loaded ??= import('ai').then(
      (m) => /** @type {{generateText?: Function, streamText?: Function}} */ (m),
      (e) => {
        loaded = undefined;
        throw new SummarizerError(
          `aiSdkSummarizer: the 'ai' package could not be imported (${describe(e)}); install it, or pass { generateText, streamText } from your own import of 'ai'`,
          { code: 'MISSING_DEPENDENCY', provider: 'ai-sdk', cause: e },
        );
      },
    );
    return loaded;
  };

  /**
   * @param {import('./ai-sdk.js').SummaryRequest} request
   * @param {import('./ai-sdk.js').SummarizeCallOptions} [callOptions]
   * @returns {Promise<import('./ai-sdk.js').SummaryResponseBody>}
   */
  async function summarize(request, callOptions = {}) {
    const { signal, onText } = callOptions ?? {};
    if (onText !== undefined && onText !== null && typeof onText !== 'function') {
      throw Object.assign(new TypeError('summarize: onText must be a function'), { code: 'INVALID_ARGUMENT' });
    }
    const chat = chatOfRequest(request, 'aiSdkSummarizer');
    if (signal?.aborted) throw abortError(signal);
    const ai = await sdk();
    const fn = useStream ? ai.streamText : ai.generateText;
    if (typeof fn !== 'function') {
      throw new SummarizerError(`aiSdkSummarizer: the 'ai' package has no ${useStream ? 'streamText' : 'generateText'}`, { code: 'MISSING_DEPENDENCY', provider: 'ai-sdk' });
    }
    const limit = chat.maxTokens !== undefined && maxOutputTokens !== undefined && maxOutputTokens !== null ? Math.min(chat.maxTokens, maxOutputTokens) : (chat.maxTokens ?? maxOutputTokens ?? undefined);

    const { ctl, guard, bumpIdle, stopError, stopped, end } = attemptControls(signal, timeoutMs, idleTimeoutMs, abortError, (why) =>
      new SummarizerError(
        why === 'idle' ? `aiSdkSummarizer: ${label} timed out: no data for ${idleTimeoutMs} ms` : `aiSdkSummarizer: ${label} timed out after ${timeoutMs} ms`,
        { code: 'TIMEOUT', provider: 'ai-sdk', retryable: true },
      ),
    );
    const settings = {
      ...(callSettings ?? {}),
      model,
      ...(chat.system ? { system: chat.system } : {}),
      messages: chat.messages,
      ...(limit !== undefined ? { maxOutputTokens: limit } : {}),
      maxRetries,
      abortSignal: ctl.signal,
      ...(headers ? { headers } : {}),
      ...(providerOptions ? { providerOptions } : {}),
    };
    let finished = false;
    /** What the caller's `onText` threw, passed through untouched (`fromOnText`). */
    let fromOnText = false;
    /** @type {unknown} */
    let onTextError;
    const deliver = (/** @type {string} */ piece) => {
      try {
        giveText(/** @type {(text: string) => unknown} */ (onText), piece);
      } catch (e) {
        fromOnText = true;
        onTextError = e;
        throw e;
      }
    };
    try {
      bumpIdle();
      if (!useStream) {
        const r = await guard(Promise.resolve().then(() => fn(settings)));
        const text = typeof r?.text === 'string' ? r.text : '';
        if (text.length > MAX_SUMMARY_TEXT) throw tooLarge(label);
        if (text && onText) deliver(text);
        finished = true;
        return answer(text, r?.finishReason, r?.usage ?? r?.totalUsage, r?.response, r);
      }
      let delivered = false;
      let text = '';
      /** @type {unknown} */
      let finishReason;
      /** @type {any} */
      let usage;
      /** @type {unknown} */
      let failure;
      const result = fn({ ...settings, onError: () => {} });
      const iterator = result.fullStream[Symbol.asyncIterator]();
      try {
        for (;;) {
          const step = await guard(iterator.next());
          bumpIdle();
          if (step.done) break;
          const part = step.value;
          if (part.type === 'text-delta') {
            const piece = part.text ?? part.textDelta ?? part.delta;
            if (typeof piece === 'string' && piece !== '') {
              if (text.length + piece.length > MAX_SUMMARY_TEXT) throw tooLarge(label);
              text += piece;
              if (onText) {
                delivered = true;
                deliver(piece);
              }
            }
          } else if (part.type === 'finish') {
            finishReason = part.finishReason;
            usage = part.totalUsage ?? part.usage;
          } else if (part.type === 'error') {
            failure = part.error;
            break;
          } else if (part.type === 'abort') {
            break;
          }
        }
      } finally {
        iterator.return?.().catch?.(() => {});
      }
      if (stopped()) throw stopError();
      if (failure !== undefined) throw toSummarizerError(failure, label, { delivered });
      if (ctl.signal.aborted || signal?.aborted) throw abortError(signal);
      let response;
      try {
        response = await guard(Promise.resolve(result.response));
      } catch {
        response = undefined;
      }
      finished = true;
      return answer(text, finishReason, usage, response);
    } catch (e) {
      // Whatever was thrown (a revoked Proxy, a null-prototype object) is read without throwing.
      if (isInstance(e, SummarizerError)) throw e;
      if (fromOnText && e === onTextError) throw e;
      if (stopped()) throw stopError();
      if (field(e, 'name') === 'AbortError' && signal?.aborted) throw abortError(signal);
      // Anything else, an error of the SDK or not (a string, a plain Error, what a custom
      // model or fetch threw), is a SummarizerError with the original as `cause`.
      throw toSummarizerError(e, label, {});
    } finally {
      end(finished);
    }
  }

  // Read by the library (unless `context.summaryModel` is given): the request it writes is
  // sized for the model this summarizer calls, its `max_tokens` within that model's limit.
  const id = typeof model === 'string' ? model : model.modelId;
  if (typeof id === 'string' && id.trim() !== '') Object.defineProperty(summarize, 'summaryModel', { value: id, enumerable: true });
  return summarize;
}

/** Lets users reach the error class through the function. */
aiSdkSummarizer.SummarizerError = SummarizerError;

/**
 * The answer as a Messages API response body.
 * @param {string} text
 * @param {unknown} finishReason `stop`, `length`, `content-filter`, `tool-calls`, `error`, `other` (or V3's `{unified}`).
 * @param {any} usage The AI SDK's `LanguageModelUsage` (v5 or v6 names).
 * @param {any} response `{id, modelId}`.
 * @param {unknown} [raw]
 */
function answer(text, finishReason, usage, response, raw) {
  const reason = typeof finishReason === 'object' && finishReason !== null ? /** @type {{unified?: unknown}} */ (finishReason).unified : finishReason;
  const stopReason = reason === 'length' ? 'max_tokens' : reason === 'content-filter' ? 'refusal' : reason === 'tool-calls' ? 'tool_use' : 'end_turn';
  const u = usage && typeof usage === 'object' ? usage : {};
  const cacheRead = u.inputTokenDetails?.cacheReadTokens ?? u.cachedInputTokens ?? 0;
  const input = u.inputTokenDetails?.noCacheTokens ?? Math.max(0, (u.inputTokens ?? 0) - cacheRead);
  return messagesResponse({
    text,
    stopReason,
    usage: { input_tokens: input, output_tokens: u.outputTokens ?? 0, cache_read_input_tokens: cacheRead, cache_creation_input_tokens: u.inputTokenDetails?.cacheWriteTokens ?? 0 },
    model: typeof response?.modelId === 'string' ? response.modelId : '',
    id: typeof response?.id === 'string' ? response.id : '',
    raw,
  });
}

/**
 * Whether `e` is an error of the AI SDK (its errors carry an `AI_` name and a marker symbol).
 * Never throws, whatever `e` is.
 * @param {unknown} e
 */
function isSdkError(e) {
  if (!isInstance(e, Error)) return false;
  const name = field(e, 'name');
  try {
    return (typeof name === 'string' && name.startsWith('AI_')) || 'statusCode' in /** @type {object} */ (e) || 'lastError' in /** @type {object} */ (e);
  } catch {
    return false;
  }
}

/** Words of a network failure, in an error that is not the SDK's (it names its own). */
const NETWORK_WORDS = ['econnreset', 'econnrefused', 'etimedout', 'enotfound', 'socket hang up', 'fetch failed', 'network error', 'failed to fetch'];

/**
 * An error as a {@link SummarizerError}: the last error of a `RetryError`, the status, body
 * and retry hint of an `APICallError`, the prompt-too-long rule on the provider's words. A
 * value that is not the SDK's (a string, a plain `Error`, what a custom model threw) is
 * wrapped the same way: `PROMPT_TOO_LONG` by its words, `ABORTED` for an `AbortError`,
 * `NETWORK_ERROR` (retryable) when its words name a network failure, else `PROVIDER_ERROR`.
 * Any value is read without throwing (a null-prototype object, a revoked Proxy).
 * @param {unknown} e
 * @param {string} label
 * @param {{delivered?: boolean}} info
 */
export function toSummarizerError(e, label, info) {
  /** @type {unknown} */
  let inner = e;
  let retriesExhausted = false;
  let attempts = 1;
  const errors = field(inner, 'errors');
  let retried = false;
  try {
    retried = inner !== null && typeof inner === 'object' && 'lastError' in inner && Array.isArray(errors);
  } catch {
    // a value `in` cannot read (a revoked Proxy)
  }
  if (retried) {
    retriesExhausted = field(inner, 'reason') === 'maxRetriesExceeded';
    attempts = /** @type {unknown[]} */ (errors).length || 1;
    inner = field(inner, 'lastError') ?? inner;
  }
  const statusCode = field(inner, 'statusCode');
  const plainStatus = field(inner, 'status');
  const status = typeof statusCode === 'number' ? statusCode : typeof plainStatus === 'number' ? plainStatus : undefined;
  const responseBody = field(inner, 'responseBody');
  const bodyText = typeof responseBody === 'string' ? responseBody : undefined;
  let body;
  if (bodyText) {
    try {
      body = JSON.parse(bodyText);
    } catch {
      body = bodyText;
    }
  }
  const words = wordsOf(inner);
  const name = field(inner, 'name');
  let isCall = false;
  try {
    isCall = inner !== null && typeof inner === 'object' && (name === 'AI_APICallError' || 'isRetryable' in inner);
  } catch {
    // a value `in` cannot read (a revoked Proxy)
  }
  const tooLong = isPromptTooLong(`${words}\n${bodyText ?? ''}`, status);
  // An exhausted quota answers 429 but waiting does not cure it: the library must not retry.
  const quota = /insufficient_quota/i.test(`${words}\n${bodyText ?? ''}`);
  const lower = words.toLowerCase();
  const code = tooLong
    ? 'PROMPT_TOO_LONG'
    : isCall && status === undefined
      ? 'NETWORK_ERROR'
      : isCall || status !== undefined
        ? 'PROVIDER_ERROR'
        : name === 'AbortError'
          ? 'ABORTED'
          : isSdkError(inner) || isSdkError(e)
            ? 'INVALID_RESPONSE'
            : NETWORK_WORDS.some((w) => lower.includes(w))
              ? 'NETWORK_ERROR'
              : 'PROVIDER_ERROR';
  const responseHeaders = field(inner, 'responseHeaders');
  /** @type {Record<string, string>} */
  let headers = {};
  try {
    headers = responseHeaders ? headersToObject(/** @type {Record<string, string>} */ (responseHeaders)) : {};
  } catch {
    // headers that cannot be read give no retry hint
  }
  const isRetryable = field(inner, 'isRetryable');
  // Words of the provider the library reads (its message, and the body's when the message
  // lacks them), cut short keeping those words; the whole body is `error`, the original `cause`.
  const keep = (/** @type {string} */ t) => isPromptTooLong(t, status);
  const extra = tooLong && bodyText && !isPromptTooLong(words, status) ? ` (${quoteKeeping(bodyText, keep)})` : '';
  const err = new SummarizerError(`aiSdkSummarizer: ${label} failed${status !== undefined ? ` with status ${status}` : ''}: ${quoteKeeping(words, keep)}${extra}`, {
    code,
    provider: 'ai-sdk',
    status,
    error: body,
    retryable: !tooLong && !quota && !info.delivered && (typeof isRetryable === 'boolean' ? isRetryable : code === 'NETWORK_ERROR'),
    retryAfterMs: retryAfter(headers),
    retriesExhausted: retriesExhausted || quota,
    attempts,
    cause: e,
  });
  return err;
}

/**
 * The error of an answer longer than a summary answer can be (`MAX_SUMMARY_TEXT` code units):
 * not retried, another attempt would bring the same.
 * @param {string} label
 */
function tooLarge(label) {
  return new SummarizerError(`aiSdkSummarizer: ${label} failed: the answer's text is longer than ${MAX_SUMMARY_TEXT} code units (the most a summary answer holds)`, {
    code: 'INVALID_RESPONSE',
    provider: 'ai-sdk',
  });
}

/**
 * The `AbortError` of a call aborted by the caller's signal.
 * @param {AbortSignal | undefined} signal
 */
function abortError(signal) {
  const err = new SummarizerError('aiSdkSummarizer: the summary request was aborted', { code: 'ABORTED', provider: 'ai-sdk', cause: signal?.reason });
  err.name = 'AbortError';
  return err;
}

/**
 * @param {string} message
 */
function optionError(message) {
  return Object.assign(new TypeError(`aiSdkSummarizer: ${message}`), { code: 'INVALID_ARGUMENT' });
}
