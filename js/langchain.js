// @ts-check
// langchainSummarizer: the summarizer of the library's contract over any LangChain chat model
// (`ChatOpenAI`, `ChatAnthropic`, `ChatGoogleGenerativeAI`, `ChatOllama`, …). Nothing of
// LangChain is imported here: the messages are plain `{role, content}` objects, which every
// chat model of @langchain/core accepts (it turns them into its own message classes), so the
// caller's own @langchain/core (a peer dependency) is the only one in play.
//
// What it relies on (@langchain/core 0.3 and 1.x): `model.stream(messages, {signal})` yielding
// `AIMessageChunk`s (`content` a string or content blocks, `text`, `response_metadata` with
// `finish_reason` / `stop_reason`, `usage_metadata` with `input_tokens` / `output_tokens`), and
// `model.invoke(messages, {signal})` resolving one `AIMessage`. Provider errors keep the
// provider SDK's shape: `status`, `error` (the body), `headers`, and its message.

import { attemptControls, describe, guardOptions, headersToObject, likelyMeant, retryAfter, withRetries } from './http.js';
import { chatOfRequest, isPromptTooLong, messagesResponse, SummarizerError, TRANSIENT_STATUSES } from './summary-request.js';

/** The options {@link langchainSummarizer} reads; any other key is a mistake. */
const OPTION_KEYS = Object.freeze(['stream', 'maxRetries', 'timeoutMs', 'idleTimeoutMs', 'retryBaseMs', 'retryMaxMs', 'maxRetryAfterMs', 'callOptions']);

/** Statuses the library retries by itself unless told the summarizer gave up. */
const TRANSIENT = new Set(TRANSIENT_STATUSES);

/** Words of a transient failure when an error has no status. */
const TRANSIENT_WORDS = ['overloaded', 'rate limit', 'rate_limit', 'too many requests', 'econnreset', 'econnrefused', 'etimedout', 'socket hang up', 'fetch failed', 'network error', 'service unavailable'];

/**
 * Makes a summarizer (the library's `summarize` contract) that asks a LangChain chat model for
 * the summary and resolves with a Messages API response body (`content`, `stop_reason` —
 * `max_tokens` when the provider reports the output limit — and `usage`).
 *
 * Transient failures (status 408/409/429/5xx/529, "overloaded", "rate limit", network errors)
 * are retried here, `maxRetries` times (default 2) with backoff or the server's `retry-after`;
 * LangChain models also retry by themselves (their `maxRetries`, default 6) — set one of the two
 * to 0 to keep the total in hand. A provider's prompt-too-long answer is a {@link SummarizerError}
 * coded `PROMPT_TOO_LONG` that keeps the provider's words, so the library drops the oldest turns
 * and asks again. The output limit is the model's own setting (`maxTokens`).
 *
 * Bad arguments throw at once, a `TypeError` with `code: 'INVALID_ARGUMENT'`.
 *
 * @param {import('./langchain.js').LangChainChatModel} chatModel Any LangChain chat model.
 * @param {import('./langchain.js').LangChainSummarizerOptions} [options]
 * @returns {import('./langchain.js').LangChainSummarizer}
 * @example
 *   import { ChatOpenAI } from '@langchain/openai';
 *   const summarize = langchainSummarizer(new ChatOpenAI({ model: 'gpt-4.1-mini', maxTokens: 16_000 }));
 */
export function langchainSummarizer(chatModel, options = {}) {
  return guardOptions(() => buildLangchainSummarizer(chatModel, options), optionError);
}

/**
 * The body of the function above, unguarded.
 * @param {import('./langchain.js').LangChainChatModel} chatModel
 * @param {import('./langchain.js').LangChainSummarizerOptions} options
 */
function buildLangchainSummarizer(chatModel, options) {
  if (chatModel === null || typeof chatModel !== 'object' || (typeof chatModel.invoke !== 'function' && typeof chatModel.stream !== 'function')) {
    throw optionError('chatModel must be a LangChain chat model (an object with invoke / stream)');
  }
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw optionError('options must be an object');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) {
      const meant = likelyMeant(key, OPTION_KEYS);
      throw optionError(`options.${key} is not an option${meant ? ` (did you mean \`${meant}\`?)` : ''}; known: ${OPTION_KEYS.join(', ')}`);
    }
  }
  const { stream = true, maxRetries = 2, timeoutMs, idleTimeoutMs, retryBaseMs = 500, retryMaxMs = 8_000, maxRetryAfterMs = 60_000, callOptions } = options;
  for (const [name, value, optional] of /** @type {Array<[string, unknown, boolean]>} */ ([
    ['maxRetries', maxRetries, false],
    ['timeoutMs', timeoutMs, true],
    ['idleTimeoutMs', idleTimeoutMs, true],
    ['retryBaseMs', retryBaseMs, false],
    ['retryMaxMs', retryMaxMs, false],
    ['maxRetryAfterMs', maxRetryAfterMs, false],
  ])) {
    if (optional && (value === undefined || value === null)) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw optionError(`${name} must be a non-negative number`);
  }
  if (!Number.isInteger(maxRetries)) throw optionError('maxRetries must be an integer');
  if (callOptions !== undefined && (callOptions === null || typeof callOptions !== 'object' || Array.isArray(callOptions))) {
    throw optionError('callOptions must be an object (passed to invoke / stream)');
  }
  const useStream = Boolean(stream) && typeof chatModel.stream === 'function';
  if (!useStream && typeof chatModel.invoke !== 'function') throw optionError('chatModel has no invoke (pass stream: true)');
  const label = modelLabel(chatModel);
  /** The model as it is called (its own types are the caller's LangChain's). */
  const lc = /** @type {{invoke: (input: unknown, options: unknown) => Promise<unknown>, stream: (input: unknown, options: unknown) => Promise<AsyncIterable<unknown>>}} */ (
    /** @type {unknown} */ (chatModel)
  );

  /**
   * @param {import('./langchain.js').SummaryRequest} request
   * @param {import('./langchain.js').SummarizeCallOptions} [call]
   * @returns {Promise<import('./langchain.js').SummaryResponseBody>}
   */
  async function summarize(request, call = {}) {
    const { signal, onText } = call ?? {};
    if (onText !== undefined && onText !== null && typeof onText !== 'function') {
      throw Object.assign(new TypeError('summarize: onText must be a function'), { code: 'INVALID_ARGUMENT' });
    }
    const chat = chatOfRequest(request, 'langchainSummarizer');
    /** Plain message objects: LangChain turns `{role, content}` into its own message classes. */
    const messages = [...(chat.system ? [{ role: 'system', content: chat.system }] : []), ...chat.messages];
    if (signal?.aborted) throw abortError(signal);
    const state = { delivered: false, onText: onText ?? undefined };
    return withRetries(() => runAttempt(messages, signal, state), state, {
      isOwn: (err) => err instanceof SummarizerError,
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
   * One call of the model.
   * @param {Array<{role: string, content: string}>} messages
   * @param {AbortSignal | undefined} signal
   * @param {{delivered: boolean, onText: ((text: string) => void) | undefined}} state
   */
  async function runAttempt(messages, signal, state) {
    const { ctl, guard, bumpIdle, stopError, stopped, end } = attemptControls(signal, timeoutMs, idleTimeoutMs, abortError, (why) =>
      new SummarizerError(
        why === 'idle' ? `langchainSummarizer: ${label} timed out: no data for ${idleTimeoutMs} ms` : `langchainSummarizer: ${label} timed out after ${timeoutMs} ms`,
        { code: 'TIMEOUT', provider: 'langchain', retryable: true },
      ),
    );
    /** Hands text to `onText`; what it throws is marked to pass through. */
    const deliver = (/** @type {string} */ piece) => {
      if (!state.onText) return;
      state.delivered = true;
      try {
        state.onText(piece);
      } catch (e) {
        if (e !== null && typeof e === 'object') thrownByOnText.add(/** @type {object} */ (e));
        throw e;
      }
    };
    const options = { ...(callOptions ?? {}), signal: ctl.signal };
    let finished = false;
    try {
      bumpIdle();
      if (!useStream) {
        const message = await guard(Promise.resolve().then(() => lc.invoke(messages, options)));
        const text = textOfMessage(message);
        if (text) deliver(text);
        finished = true;
        return answer(text, [message]);
      }
      const iterable = await guard(Promise.resolve().then(() => lc.stream(messages, options)));
      const iterator = iterable[Symbol.asyncIterator]();
      let text = '';
      /** @type {any[]} */
      const chunks = [];
      try {
        for (;;) {
          const step = await guard(iterator.next());
          bumpIdle();
          if (step.done) break;
          const chunk = step.value;
          chunks.push(chunk);
          const piece = textOfMessage(chunk);
          if (piece) {
            text += piece;
            deliver(piece);
          }
        }
      } finally {
        if (!finished) iterator.return?.()?.catch?.(() => {});
      }
      finished = true;
      return answer(text, chunks);
    } catch (e) {
      if (e instanceof SummarizerError) throw e;
      if (stopped()) throw stopError();
      if (signal?.aborted) throw abortError(signal);
      if (e !== null && typeof e === 'object' && thrownByOnText.has(/** @type {object} */ (e))) throw e;
      throw toSummarizerError(e, label, state.delivered);
    } finally {
      end(finished);
    }
  }

  return summarize;
}

/** Lets users reach the error class through the function. */
langchainSummarizer.SummarizerError = SummarizerError;

/** What the caller's `onText` threw: passed through untouched, never wrapped or retried. */
const thrownByOnText = new WeakSet();

/**
 * The text of a LangChain message or chunk: `content` as a string, or its text blocks.
 * @param {any} m
 * @returns {string}
 */
function textOfMessage(m) {
  if (!m || typeof m !== 'object') return typeof m === 'string' ? m : '';
  const c = m.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    return c
      .map((b) => (typeof b === 'string' ? b : b && (b.type === 'text' || b.type === 'text_delta') && typeof b.text === 'string' ? b.text : ''))
      .join('');
  }
  return '';
}

/**
 * The answer as a Messages API response body, from the message (or the chunks) the model sent:
 * the stop reason from `response_metadata` (`finish_reason`, `stop_reason`, `finishReason`),
 * usage from `usage_metadata` (summed over chunks, as LangChain merges them).
 * @param {string} text
 * @param {any[]} parts
 */
function answer(text, parts) {
  /** @type {unknown} */
  let reason;
  let input = 0;
  let output = 0;
  let cacheRead = 0;
  let cacheWrite = 0;
  let id = '';
  let model = '';
  for (const p of parts) {
    if (!p || typeof p !== 'object') continue;
    const meta = p.response_metadata ?? {};
    reason = meta.finish_reason ?? meta.stop_reason ?? meta.finishReason ?? meta.done_reason ?? reason;
    if (typeof meta.model_name === 'string') model = meta.model_name;
    else if (typeof meta.model === 'string') model = meta.model;
    if (typeof p.id === 'string' && p.id) id = p.id;
    const u = p.usage_metadata;
    if (u && typeof u === 'object') {
      input += u.input_tokens ?? 0;
      output += u.output_tokens ?? 0;
      cacheRead += u.input_token_details?.cache_read ?? 0;
      cacheWrite += u.input_token_details?.cache_creation ?? 0;
    }
  }
  const r = typeof reason === 'string' ? reason.toLowerCase() : '';
  const stopReason =
    r === 'length' || r === 'max_tokens' || r === 'max_output_tokens'
      ? 'max_tokens'
      : r === 'content_filter' || r === 'safety' || r === 'refusal'
        ? 'refusal'
        : r === 'tool_calls' || r === 'tool_use'
          ? 'tool_use'
          : 'end_turn';
  return messagesResponse({
    text,
    stopReason,
    usage: { input_tokens: Math.max(0, input - cacheRead - cacheWrite), output_tokens: output, cache_read_input_tokens: cacheRead, cache_creation_input_tokens: cacheWrite },
    model,
    id,
    raw: parts.length === 1 ? parts[0] : undefined,
  });
}

/**
 * A provider error raised through LangChain as a {@link SummarizerError}.
 * @param {unknown} e
 * @param {string} label
 * @param {boolean} delivered
 */
function toSummarizerError(e, label, delivered) {
  const x = /** @type {any} */ (e ?? {});
  const status = [x.status, x.statusCode, x.response?.status].find((s) => typeof s === 'number' && s >= 100 && s < 600);
  const words = e instanceof Error ? e.message : typeof e === 'string' ? e : describe(e);
  let bodyText = '';
  if (x.error !== undefined) {
    try {
      bodyText = typeof x.error === 'string' ? x.error : JSON.stringify(x.error);
    } catch {
      bodyText = '';
    }
  }
  const all = `${words}\n${bodyText}\n${typeof x.code === 'string' ? x.code : ''}`;
  const tooLong = isPromptTooLong(all, status) || x.lc_error_code === 'CONTEXT_LENGTH_EXCEEDED';
  const lower = all.toLowerCase();
  const transient = status !== undefined ? TRANSIENT_STATUSES.includes(status) && !lower.includes('insufficient_quota') : TRANSIENT_WORDS.some((w) => lower.includes(w));
  const network = status === undefined && TRANSIENT_WORDS.slice(4).some((w) => lower.includes(w));
  const headers = x.headers && typeof x.headers === 'object' ? headersToObject(x.headers) : {};
  const extra = tooLong && bodyText && !isPromptTooLong(words, status) ? ` (${bodyText.slice(0, 500)})` : '';
  return new SummarizerError(`langchainSummarizer: ${label} failed${status !== undefined ? ` with status ${status}` : ''}: ${words}${extra}`, {
    code: tooLong ? 'PROMPT_TOO_LONG' : network ? 'NETWORK_ERROR' : 'PROVIDER_ERROR',
    provider: 'langchain',
    status,
    error: x.error,
    retryable: !tooLong && !delivered && transient,
    retryAfterMs: retryAfter(headers),
    cause: e,
  });
}

/**
 * A name for messages: the model's class and model name.
 * @param {any} m
 */
function modelLabel(m) {
  const cls = typeof m._llmType === 'function' ? safe(() => m._llmType()) : m.constructor?.name;
  const name = m.model ?? m.modelName ?? m.model_name;
  return [cls, typeof name === 'string' ? name : undefined].filter(Boolean).join(' ') || 'chat model';
}

/**
 * @template T
 * @param {() => T} fn
 */
function safe(fn) {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/**
 * The `AbortError` of a call aborted by the caller's signal.
 * @param {AbortSignal | undefined} signal
 */
function abortError(signal) {
  const err = new SummarizerError('langchainSummarizer: the summary request was aborted', { code: 'ABORTED', provider: 'langchain', cause: signal?.reason });
  err.name = 'AbortError';
  return err;
}

/**
 * @param {string} message
 */
function optionError(message) {
  return Object.assign(new TypeError(`langchainSummarizer: ${message}`), { code: 'INVALID_ARGUMENT' });
}
