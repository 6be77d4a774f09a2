// @ts-check
// The model-calling half of langchainSummarizer (langchain.js): one call of the chat model
// (streamed or not), the retries, reading the answer and the provider's errors. langchain.js
// checks the arguments and loads this module on a summarizer's first call. What it relies on
// of LangChain is listed at the top of langchain.js.

import { attemptControls, field, giveText, headersToObject, isInstance, quoteKeeping, retryAfter, withRetries, wordsOf, MAX_SUMMARY_TEXT } from './http.js';
import { chatOfRequest, isPromptTooLong, messagesResponse, SummarizerError, TRANSIENT_STATUSES } from './summary-request.js';

/**
 * What a summarizer's arguments gave (langchain.js builds it once per summarizer).
 * @typedef {{
 *   lc: {invoke: (input: unknown, options: unknown) => Promise<unknown>, stream: (input: unknown, options: unknown) => Promise<AsyncIterable<unknown>>},
 *   label: string,
 *   useStream: boolean,
 *   callOptions: Record<string, unknown> | undefined,
 *   timeoutMs: number | null | undefined,
 *   idleTimeoutMs: number | null | undefined,
 *   retry: {maxRetries: number, retryBaseMs: number, retryMaxMs: number, maxRetryAfterMs: number},
 * }} SendConfig
 */

/** Statuses the library retries by itself unless told the summarizer gave up. */
const TRANSIENT = new Set(TRANSIENT_STATUSES);

/** Words of a transient failure when an error has no status. */
const TRANSIENT_WORDS = ['overloaded', 'rate limit', 'rate_limit', 'too many requests', 'econnreset', 'econnrefused', 'etimedout', 'socket hang up', 'fetch failed', 'network error', 'service unavailable'];

/**
 * Sends one summary request to the model, with the retries the options allow.
 * @param {SendConfig} cfg
 * @param {import('./langchain.js').SummaryRequest} request
 * @param {AbortSignal | undefined} signal
 * @param {{delivered: boolean, onText: ((text: string) => void) | undefined}} state
 * @returns {Promise<import('./langchain.js').SummaryResponseBody>}
 */
export function send(cfg, request, signal, state) {
  const chat = chatOfRequest(request, 'langchainSummarizer');
  /** Plain message objects: LangChain turns `{role, content}` into its own message classes. */
  const messages = [...(chat.system ? [{ role: 'system', content: chat.system }] : []), ...chat.messages];
  if (signal?.aborted) throw abortError(signal);
  return withRetries(() => runAttempt(cfg, messages, signal, state), state, {
    isOwn: (err) => err instanceof SummarizerError,
    ...cfg.retry,
    signal,
    abortError,
    transient: TRANSIENT,
  });
}

/**
 * One call of the model.
 * @param {SendConfig} cfg
 * @param {Array<{role: string, content: string}>} messages
 * @param {AbortSignal | undefined} signal
 * @param {{delivered: boolean, onText: ((text: string) => void) | undefined}} state
 */
async function runAttempt(cfg, messages, signal, state) {
  const { lc, label, useStream, callOptions, timeoutMs, idleTimeoutMs } = cfg;
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
      giveText(state.onText, piece);
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
      if (text.length > MAX_SUMMARY_TEXT) throw tooLarge(label);
      if (text) deliver(text);
      finished = true;
      const tally = new Tally();
      tally.add(message);
      return answer(text, tally);
    }
    const iterable = await guard(Promise.resolve().then(() => lc.stream(messages, options)));
    const iterator = iterable[Symbol.asyncIterator]();
    let text = '';
    // What the chunks say about the answer is folded in as they come: a stream is not kept.
    const tally = new Tally();
    try {
      for (;;) {
        const step = await guard(iterator.next());
        bumpIdle();
        if (step.done) break;
        const chunk = step.value;
        tally.add(chunk);
        const piece = textOfMessage(chunk);
        if (piece) {
          if (text.length + piece.length > MAX_SUMMARY_TEXT) throw tooLarge(label);
          text += piece;
          deliver(piece);
        }
      }
    } finally {
      if (!finished) iterator.return?.()?.catch?.(() => {});
    }
    finished = true;
    return answer(text, tally);
  } catch (e) {
    // Whatever was thrown (a revoked Proxy, a null-prototype object) is read without throwing.
    if (isInstance(e, SummarizerError)) throw e;
    if (stopped()) throw stopError();
    if (signal?.aborted) throw abortError(signal);
    if (e !== null && typeof e === 'object' && thrownByOnText.has(/** @type {object} */ (e))) throw e;
    throw toSummarizerError(e, label, state.delivered);
  } finally {
    end(finished);
  }
}

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
 * The error of an answer longer than a summary answer can be (`MAX_SUMMARY_TEXT` code units):
 * not retried, another attempt would bring the same.
 * @param {string} label
 */
function tooLarge(label) {
  return new SummarizerError(`langchainSummarizer: ${label} failed: the answer's text is longer than ${MAX_SUMMARY_TEXT} code units (the most a summary answer holds)`, {
    code: 'INVALID_RESPONSE',
    provider: 'langchain',
  });
}

/**
 * What the message (or the chunks) the model sent say about the answer, folded one part at a
 * time: the stop reason from `response_metadata` (`finish_reason`, `stop_reason`,
 * `finishReason`, `done_reason`, `stopReason`), else `additional_kwargs` (`stop_reason`, where
 * ChatAnthropic's stream puts it), else a Responses API answer's `status: 'incomplete'` and
 * `incomplete_details.reason`, the model and id, usage from `usage_metadata` (summed over
 * chunks, as LangChain merges them), and the one part itself when there is only one.
 */
class Tally {
  constructor() {
    /** @type {unknown} */
    this.reason = undefined;
    this.input = 0;
    this.output = 0;
    this.cacheRead = 0;
    this.cacheWrite = 0;
    this.id = '';
    this.model = '';
    this.parts = 0;
    /** @type {unknown} */
    this.first = undefined;
  }

  /** @param {any} p */
  add(p) {
    this.parts += 1;
    if (this.parts === 1) this.first = p;
    if (!p || typeof p !== 'object') return;
    const meta = p.response_metadata ?? {};
    // ChatAnthropic's streamed chunks put the `message_delta` event's `stop_reason` in
    // `additional_kwargs`, not `response_metadata`; a Responses API answer (ChatOpenAI with
    // `useResponsesApi`) has no finish reason but its `status` and `incomplete_details`.
    const kwargs = p.additional_kwargs ?? {};
    const incomplete = meta.status === 'incomplete' ? (meta.incomplete_details?.reason ?? 'max_output_tokens') : undefined;
    this.reason =
      meta.finish_reason ?? meta.stop_reason ?? meta.finishReason ?? meta.done_reason ?? meta.stopReason ?? kwargs.stop_reason ?? kwargs.finish_reason ?? incomplete ?? this.reason;
    if (typeof meta.model_name === 'string') this.model = meta.model_name;
    else if (typeof meta.model === 'string') this.model = meta.model;
    if (typeof p.id === 'string' && p.id) this.id = p.id;
    const u = p.usage_metadata;
    if (u && typeof u === 'object') {
      this.input += u.input_tokens ?? 0;
      this.output += u.output_tokens ?? 0;
      this.cacheRead += u.input_token_details?.cache_read ?? 0;
      this.cacheWrite += u.input_token_details?.cache_creation ?? 0;
    }
  }
}

/**
 * The answer as a Messages API response body, from its text and what {@link Tally} gathered.
 * @param {string} text
 * @param {Tally} t
 */
function answer(text, t) {
  const r = typeof t.reason === 'string' ? t.reason.toLowerCase() : '';
  const stopReason =
    r === 'length' || r === 'max_tokens' || r === 'max_output_tokens'
      ? 'max_tokens'
      : r === 'model_context_window_exceeded'
        ? 'model_context_window_exceeded'
        : r === 'content_filter' || r === 'safety' || r === 'refusal'
          ? 'refusal'
          : r === 'tool_calls' || r === 'tool_use'
            ? 'tool_use'
            : 'end_turn';
  const { input, output, cacheRead, cacheWrite } = t;
  return messagesResponse({
    text,
    stopReason,
    usage: { input_tokens: Math.max(0, input - cacheRead - cacheWrite), output_tokens: output, cache_read_input_tokens: cacheRead, cache_creation_input_tokens: cacheWrite },
    model: t.model,
    id: t.id,
    raw: t.parts === 1 ? t.first : undefined,
  });
}

/**
 * A provider error raised through LangChain as a {@link SummarizerError}.
 * @param {unknown} e
 * @param {string} label
 * @param {boolean} delivered
 */
function toSummarizerError(e, label, delivered) {
  // Every field is read without throwing: `e` may be anything (a getter that throws, a revoked Proxy).
  const response = field(e, 'response');
  const status = /** @type {number | undefined} */ (
    [field(e, 'status'), field(e, 'statusCode'), field(response, 'status')].find((s) => typeof s === 'number' && s >= 100 && s < 600)
  );
  const words = wordsOf(e);
  const error = field(e, 'error');
  let bodyText = '';
  if (error !== undefined) {
    try {
      bodyText = typeof error === 'string' ? error : JSON.stringify(error);
    } catch {
      bodyText = '';
    }
  }
  const code = field(e, 'code');
  const all = `${words}\n${bodyText}\n${typeof code === 'string' ? code : ''}`;
  const tooLong = isPromptTooLong(all, status) || field(e, 'lc_error_code') === 'CONTEXT_LENGTH_EXCEEDED';
  const lower = all.toLowerCase();
  const transient = status !== undefined ? TRANSIENT_STATUSES.includes(status) && !lower.includes('insufficient_quota') : TRANSIENT_WORDS.some((w) => lower.includes(w));
  const network = status === undefined && TRANSIENT_WORDS.slice(4).some((w) => lower.includes(w));
  const rawHeaders = field(e, 'headers');
  /** @type {Record<string, string>} */
  let headers = {};
  try {
    headers = rawHeaders && typeof rawHeaders === 'object' ? headersToObject(/** @type {Record<string, string>} */ (rawHeaders)) : {};
  } catch {
    // headers that cannot be read give no retry hint
  }
  // The provider's words cut short in the message; the whole error is `cause`, its body `error`.
  // (Cut keeping the words the library reads of a prompt-too-long answer.)
  const keep = (/** @type {string} */ t) => isPromptTooLong(t, status);
  const extra = tooLong && bodyText && !isPromptTooLong(words, status) ? ` (${quoteKeeping(bodyText, keep)})` : '';
  return new SummarizerError(`langchainSummarizer: ${label} failed${status !== undefined ? ` with status ${status}` : ''}: ${quoteKeeping(words, keep)}${extra}`, {
    code: tooLong ? 'PROMPT_TOO_LONG' : network ? 'NETWORK_ERROR' : 'PROVIDER_ERROR',
    provider: 'langchain',
    status,
    error,
    retryable: !tooLong && !delivered && transient,
    retryAfterMs: retryAfter(headers),
    cause: e,
  });
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
