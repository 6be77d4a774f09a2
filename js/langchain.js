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
//
// This file checks the arguments; calling the model (attempts, retries, reading the answer) is
// langchain-send.js, loaded on a summarizer's first call.

import { checkCount, checkTimers, describe, guardOptions, likelyMeant, loadOnce } from './options.js';
import { importAgain } from './defaults.js';
import { SummarizerError } from './summarizer-error.js';

/** The options {@link langchainSummarizer} reads; any other key is a mistake. */
const OPTION_KEYS = Object.freeze(['stream', 'maxRetries', 'timeoutMs', 'idleTimeoutMs', 'retryBaseMs', 'retryMaxMs', 'maxRetryAfterMs', 'callOptions']);

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
  checkCount('maxRetries', maxRetries, false, optionError);
  checkTimers({ timeoutMs, idleTimeoutMs, retryBaseMs, retryMaxMs, maxRetryAfterMs }, optionError);
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

  /** What a call needs from these arguments (read by langchain-send.js). */
  const cfg = {
    lc, label, useStream, callOptions, timeoutMs, idleTimeoutMs,
    retry: { maxRetries, retryBaseMs, retryMaxMs, maxRetryAfterMs },
  };

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
    const state = { delivered: false, onText: onText ?? undefined };
    const sender = await loadSender();
    return sender.send(cfg, request, signal, state);
  }

  // Read by the library (unless `context.summaryModel` is given): the request it writes is
  // sized for the model this summarizer calls (its window and output limit), not the
  // conversation's (a 200K Claude conversation summarized by a 128K gpt-4o).
  const name = modelName(chatModel, 0);
  if (name) Object.defineProperty(summarize, 'summaryModel', { value: name, enumerable: true });
  return summarize;
}

/** Lets users reach the error class through the function. */
langchainSummarizer.SummarizerError = SummarizerError;
/**
 * The module that calls the model (langchain-send.js: the attempt, retries, reading the
 * answer and the provider's errors), loaded on a summarizer's first call, so that a page that
 * only makes a summarizer does not download it. A failed load is a retryable `NETWORK_ERROR`
 * SummarizerError, and the next call tries again.
 */
const loadSender = /* @__PURE__ */ loadOnce(
  (n) => importAgain(n, () => import('./langchain-send.js'), import.meta.url, 'langchain.js', 'langchain-send.js'),
  (e) =>
    new SummarizerError(`langchainSummarizer: could not load its model-calling code (langchain-send.js): ${describe(e)}`, {
      code: 'NETWORK_ERROR',
      provider: 'langchain',
      retryable: true,
      cause: e,
    }),
);

/**
 * A name for messages: the model's class and model name.
 * @param {any} m
 */
function modelLabel(m) {
  const cls = typeof m._llmType === 'function' ? safe(() => m._llmType()) : m.constructor?.name;
  return [cls, modelName(m, 0)].filter(Boolean).join(' ') || 'chat model';
}

/**
 * The id of the model a LangChain chat model calls: its `model` (ChatAnthropic, ChatOpenAI,
 * ChatGoogleGenerativeAI, ChatOllama… ; `modelName` in older releases), the default model of
 * `initChatModel` (`_defaultConfig.model`), the model a `withConfig` / `withRetry` binding
 * (`bound`) or `withFallbacks` (`runnable`) wraps, else what it reports to LangSmith
 * (`getLsParams().ls_model_name`). Never throws.
 * @param {any} m
 * @param {number} depth
 * @returns {string | undefined}
 */
function modelName(m, depth) {
  if (m === null || typeof m !== 'object' || depth > 3) return undefined;
  const named = (/** @type {unknown} */ n) => (typeof n === 'string' && n.trim() !== '' ? n : undefined);
  return (
    safe(() => named(m.model) ?? named(m.modelName) ?? named(m.model_name) ?? named(m._defaultConfig?.model)) ??
    modelName(safe(() => m.bound ?? m.runnable), depth + 1) ??
    safe(() => named(m.getLsParams?.({})?.ls_model_name))
  );
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
 * @param {string} message
 */
function optionError(message) {
  return Object.assign(new TypeError(`langchainSummarizer: ${message}`), { code: 'INVALID_ARGUMENT' });
}
