// @ts-check
// The HTTP machinery the fetch-based summarizers share (anthropic.js, openai.js): a server-sent
// events parser, retry hints of response headers, a sleep that ends on abort, header helpers,
// option checks and the "did you mean" hint. Plain JavaScript, no dependencies; each summarizer
// passes in its own error constructors so its errors keep their class and code. The option
// checks live in options.js (loaded with the factories) and are re-exported here.

import { describe, MAX_TIMER_MS } from './options.js';

export { mergeHeaders, describe, checkCount, likelyMeant, readEnvironment, guardOptions, quote, quoteKeeping, MAX_QUOTED, isInstance, field, asText, wordsOf } from './options.js';

/**
 * The most content blocks of a summary answer that are read (src/drive/answers.rs
 * `MAX_SUMMARY_BLOCKS`): a stream event naming a block at or past it is the server's error.
 */
export const MAX_SUMMARY_BLOCKS = 100_000;

/**
 * The most text of a summary answer that is read, in UTF-16 code units (src/drive/answers.rs
 * `MAX_SUMMARY_TEXT`, 16 Mi): a stream line, an event's data or the text assembled from a
 * stream that passes it is refused as soon as it does.
 */
export const MAX_SUMMARY_TEXT = 16 * 1024 * 1024;

/**
 * A server-sent events parser (the WHATWG `text/event-stream` rules): lines end with CRLF, LF
 * or CR, `event:` names the event, `data:` lines are joined with LF, a blank line dispatches,
 * lines starting with `:` are comments. Text may be pushed in pieces cut anywhere; each piece
 * is scanned once (a long line in many pieces costs its length, not its length squared). A
 * pending line, or an event's data, longer than {@link MAX_SUMMARY_TEXT} code units throws
 * `tooLarge(what)` as soon as it is.
 * @param {(event: string, data: string) => void} dispatch
 * @param {(what: string) => Error} [tooLarge] The caller's error (default: a `RangeError`).
 */
export function createSseParser(dispatch, tooLarge = (what) => new RangeError(what)) {
  /** The pending line: the pieces of it pushed so far, and their total length. */
  /** @type {string[]} */
  let parts = [];
  let pending = 0;
  /** The last piece ended with a CR: an LF starting the next one is the rest of a CRLF. */
  let afterCr = false;
  let eventName = '';
  /** @type {string[]} */
  let data = [];
  let dataLength = 0;
  const over = (/** @type {string} */ what) => {
    throw tooLarge(`${what} is longer than ${MAX_SUMMARY_TEXT} code units (the most a summary answer holds)`);
  };
  const line = (/** @type {string} */ text) => {
    if (text === '') {
      if (data.length > 0) {
        const name = eventName || 'message';
        const joined = data.join('\n');
        eventName = '';
        data = [];
        dataLength = 0;
        dispatch(name, joined);
      } else {
        eventName = '';
      }
      return;
    }
    if (text.charCodeAt(0) === 58 /* : */) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* space */) value = value.slice(1);
    if (field === 'event') eventName = value;
    else if (field === 'data') {
      dataLength += value.length + 1;
      if (dataLength > MAX_SUMMARY_TEXT) over('a stream event\'s data');
      data.push(value);
    }
  };
  return {
    /** @param {string} text */
    push(text) {
      let start = 0;
      if (afterCr && text.length > 0) {
        if (text.charCodeAt(0) === 10) start = 1;
        afterCr = false;
      }
      // The next LF and CR at or after `start` (-1: none left in this piece), each searched
      // again only once passed.
      let lf = text.indexOf('\n', start);
      let cr = text.indexOf('\r', start);
      while (lf >= 0 || cr >= 0) {
        const end = cr < 0 || (lf >= 0 && lf < cr) ? lf : cr;
        const piece = text.slice(start, end);
        let whole = piece;
        if (pending + piece.length > MAX_SUMMARY_TEXT) over('a stream line');
        if (parts.length > 0) {
          parts.push(piece);
          whole = parts.join('');
          parts = [];
          pending = 0;
        }
        if (end === cr) {
          if (end + 1 < text.length) start = text.charCodeAt(end + 1) === 10 ? end + 2 : end + 1;
          else {
            start = end + 1;
            afterCr = true;
          }
        } else {
          start = end + 1;
        }
        line(whole);
        if (lf >= 0 && lf < start) lf = text.indexOf('\n', start);
        if (cr >= 0 && cr < start) cr = text.indexOf('\r', start);
      }
      if (start < text.length) {
        pending += text.length - start;
        if (pending > MAX_SUMMARY_TEXT) over('a stream line');
        parts.push(start === 0 ? text : text.slice(start));
      }
    },
    /** The end of the stream: an unfinished line is dropped (it ends no event). */
    end() {
      parts = [];
      pending = 0;
      afterCr = false;
    },
  };
}


/**
 * Feeds a response body to a server-sent-events `parser` until `finished()` says the answer
 * is whole or the body ends: chunk by chunk when the body streams (each chunk restarts the
 * idle timer, `bumpIdle`), else the whole text at once. A read that fails rejects with
 * `stopError()` when the attempt was stopped, else with `broken(error)`. The body is cancelled
 * when reading stops before its end. Whether the answer came whole is the caller's to check.
 * @param {Response} response
 * @param {{push(text: string): void, end(): void}} parser
 * @param {() => boolean} finished
 * @param {<T>(p: Promise<T>) => Promise<T>} guard
 * @param {() => void} bumpIdle
 * @param {AbortController} ctl
 * @param {() => Error} stopError
 * @param {(error: unknown) => Error} broken
 */
export async function readSseBody(response, parser, finished, guard, bumpIdle, ctl, stopError, broken) {
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
    return;
  }
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  let done = false;
  try {
    while (!finished()) {
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
/**
 * The wait a response asks for: `retry-after-ms`, else `retry-after` (seconds or an HTTP date).
 * @param {Record<string, string>} h
 * @returns {number | undefined}
 */
export function retryAfter(h) {
  const ms = h['retry-after-ms'];
  if (ms !== undefined) {
    const n = Number(ms.trim());
    if (ms.trim() !== '' && Number.isFinite(n) && n >= 0) return n;
  }
  const ra = h['retry-after'];
  if (ra !== undefined) {
    const s = Number(ra.trim());
    if (ra.trim() !== '' && Number.isFinite(s)) return Math.max(0, s * 1000);
    const date = Date.parse(ra);
    if (!Number.isNaN(date)) return Math.max(0, date - Date.now());
  }
  return undefined;
}

/**
 * Adds (`on`) or removes an abort listener on the caller's `signal`, never throwing: a signal
 * whose methods throw (a polyfill, a wrapped signal) must not break a request or escape from a
 * timer. Its `aborted` is read the same way (`isAborted`).
 * @param {AbortSignal | undefined} signal
 * @param {() => void} f
 * @param {boolean} on
 */
function listenAbort(signal, f, on) {
  try {
    if (on) signal?.addEventListener('abort', f, { once: true });
    else signal?.removeEventListener('abort', f);
  } catch {
    // not observed, or left attached (`once`; the settled promise ignores it)
  }
}
/** @param {AbortSignal | undefined} signal */
function isAborted(signal) {
  try {
    return !!signal?.aborted;
  } catch {
    return false;
  }
}


/**
 * Waits `ms`, or rejects with `abortError(signal)` as soon as `signal` aborts.
 * @param {number} ms
 * @param {AbortSignal | undefined} signal
 * @param {(signal: AbortSignal | undefined) => Error} abortError The caller's `AbortError`.
 * @returns {Promise<void>}
 */
export function sleep(ms, signal, abortError) {
  return new Promise((resolve, reject) => {
    if (isAborted(signal)) {
      reject(abortError(signal));
      return;
    }
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    // Timers of at most MAX_TIMER_MS one after another: setTimeout runs a longer one after
    // 1 ms. (The options' waits are at most that long; this keeps any other wait right too.)
    let left = ms;
    const next = () => {
      const step = Math.min(left, MAX_TIMER_MS);
      left -= step;
      timer = setTimeout(() => {
        if (left > 0) {
          next();
          return;
        }
        listenAbort(signal, onAbort, false);
        resolve();
      }, step);
    };
    next();
    listenAbort(signal, onAbort, true);
  });
}


/**
 * Calls the summary's `onText(text)`. What it throws passes through (the summarizer reports
 * it); what it returns is ignored — so when it is a promise (an async `onText`) or any
 * thenable, its rejection is ignored too, rather than left as an unhandled rejection (which
 * ends a Node process by default).
 * @param {(text: string) => unknown} onText
 * @param {string} text
 * @returns {void}
 */
export function giveText(onText, text) {
  const r = onText(text);
  if (r !== null && (typeof r === 'object' || typeof r === 'function')) {
    try {
      const then = /** @type {{then?: unknown}} */ (r).then;
      if (typeof then === 'function') then.call(r, undefined, () => {});
    } catch {
      // a thenable whose `then` throws: nothing to wait for
    }
  }
}

/**
 * Response headers as a plain object with lower-case names.
 * @param {Headers | Record<string, string> | undefined} h
 * @returns {Record<string, string>}
 */
export function headersToObject(h) {
  /** @type {Record<string, string>} */
  const out = {};
  if (!h) return out;
  if (typeof (/** @type {{forEach?: unknown, get?: unknown}} */ (h).forEach) === 'function' && typeof (/** @type {{forEach?: unknown, get?: unknown}} */ (h).get) === 'function') {
    /** @type {Headers} */ (h).forEach((v, k) => {
      out[k.toLowerCase()] = v;
    });
  } else {
    for (const [k, v] of Object.entries(h)) out[k.toLowerCase()] = String(v);
  }
  return out;
}





/**
 * The controls of one HTTP attempt: it is stopped by the caller's `signal`, by `timeoutMs`
 * (the whole attempt) and by `idleTimeoutMs` without data (restarted by `bumpIdle`); either
 * left out or 0 is no limit.
 * `guard(promise)` settles with `promise`, or rejects as soon as the attempt is stopped (even
 * when a custom fetch ignores its signal); `stopError()` is the error for why it stopped: the
 * caller's `abortError(signal)`, or `timeoutError('timeout' | 'idle')`; `stopped()` says whether
 * it was stopped (the caller's abort reaches `fetch` as the abort reason). Call `end(finished)`
 * when the attempt is over (it clears the timers and aborts an unfinished request).
 * @param {AbortSignal | undefined} signal
 * @param {number | null | undefined} timeoutMs
 * @param {number | null | undefined} idleTimeoutMs
 * @param {(signal: AbortSignal | undefined) => Error} abortError
 * @param {(why: 'timeout' | 'idle') => Error} timeoutError
 */
export function attemptControls(signal, timeoutMs, idleTimeoutMs, abortError, timeoutError) {
  const ctl = new AbortController();
  /** @type {null | 'user' | 'timeout' | 'idle'} */
  let stopReason = null;
  const stop = (/** @type {'user' | 'timeout' | 'idle'} */ why) => {
    if (stopReason === null) stopReason = why;
    let reason;
    try {
      reason = why === 'user' ? signal?.reason : undefined;
    } catch {
      // no reason
    }
    ctl.abort(reason);
  };
  const onUserAbort = () => stop('user');
  listenAbort(signal, onUserAbort, true);
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let deadline;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let idle;
  // 0 (as left out) is no limit, as the core's `summaryTimeoutMs`: a timer of 0 ms stopped every
  // attempt before its answer.
  if (timeoutMs != null && timeoutMs > 0) deadline = setTimeout(() => stop('timeout'), timeoutMs);
  const bumpIdle = () => {
    if (idleTimeoutMs == null || !(idleTimeoutMs > 0)) return;
    clearTimeout(idle);
    idle = setTimeout(() => stop('idle'), idleTimeoutMs);
  };
  const stopError = () => (stopReason === 'user' ? abortError(signal) : timeoutError(stopReason === 'idle' ? 'idle' : 'timeout'));
  /**
   * @template T
   * @param {Promise<T>} promise
   * @returns {Promise<T>}
   */
  const guard = (promise) =>
    new Promise((resolve, reject) => {
      if (ctl.signal.aborted) {
        promise.then(undefined, () => {});
        reject(stopError());
        return;
      }
      const onAbort = () => reject(stopError());
      ctl.signal.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (v) => {
          ctl.signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (e) => {
          ctl.signal.removeEventListener('abort', onAbort);
          reject(e);
        },
      );
    });
  if (isAborted(signal)) stop('user');
  /** @param {boolean} finished */
  const end = (finished) => {
    clearTimeout(deadline);
    clearTimeout(idle);
    listenAbort(signal, onUserAbort, false);
    if (!finished && !ctl.signal.aborted) ctl.abort();
  };
  const stopped = () => stopReason !== null;
  return { ctl, guard, bumpIdle, stopError, stopped, end };
}

/**
 * Whether an HTTP error answer is worth another attempt: never when `never` (the request
 * itself must change), else as the server's `x-should-retry` header says, else for 408, 409,
 * 429 and 5xx.
 * @param {number} status
 * @param {Record<string, string>} headers Lower-case names.
 * @param {boolean} never
 */
export function retryableStatus(status, headers, never) {
  if (never) return false;
  const hint = headers['x-should-retry'];
  if (hint === 'true') return true;
  if (hint === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * What one fetch attempt's reader gets: the response, the attempt's controls, and the
 * response's headers (lower-case names) and request id.
 * @typedef {{
 *   response: Response,
 *   guard: <T>(p: Promise<T>) => Promise<T>,
 *   bumpIdle: () => void,
 *   ctl: AbortController,
 *   stopError: () => Error,
 *   requestId: string | undefined,
 *   headers: Record<string, string>,
 * }} AttemptResponse
 */

/**
 * One HTTP attempt of a fetch summarizer (anthropic-send.js, openai-send.js): the POST under
 * the attempt's controls (`attemptControls`), a failed request as the provider's retryable
 * NETWORK_ERROR, an answer that is not ok as `o.httpError`, then the server-sent events
 * (`o.readStream`) or the whole JSON answer (`o.readJson`, whose text `o.textOf` gives to
 * `call.onText`). The request id is set on the message as `_request_id` (not enumerable).
 * `o.api` names the API in messages ("Anthropic API"); `o.error(message, fields)` makes the
 * provider's error.
 * @template {object} M
 * @param {{
 *   api: string,
 *   url: string,
 *   init: {headers: Record<string, string>, body: string},
 *   fetchImpl: (url: string, init: any) => Promise<Response>,
 *   timeoutMs: number | null | undefined,
 *   idleTimeoutMs: number | null | undefined,
 *   useStream: boolean,
 *   requestIdHeader: string,
 *   abortError: (signal: AbortSignal | undefined) => Error,
 *   error: (message: string, fields: Record<string, unknown>) => Error,
 *   httpError: (status: number, statusText: string, text: string, headers: Record<string, string>) => Error,
 *   readStream: (r: AttemptResponse) => Promise<M>,
 *   readJson: (r: AttemptResponse) => Promise<M>,
 *   textOf: (message: M) => string,
 * }} o
 * @param {AbortSignal | undefined} signal
 * @param {{delivered: boolean, onText: ((text: string) => void) | undefined}} call
 * @returns {Promise<M>}
 */
export async function fetchAttempt(o, signal, call) {
  // The caller's fetch is called as a plain function (a bound `this` would be `o`).
  const { timeoutMs, idleTimeoutMs, fetchImpl } = o;
  const { ctl, guard, bumpIdle, stopError, end } = attemptControls(signal, timeoutMs, idleTimeoutMs, o.abortError, (why) =>
    o.error(
      why === 'idle'
        ? `${o.api} request timed out: no data for ${idleTimeoutMs} ms`
        : `${o.api} request timed out after ${timeoutMs} ms`,
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
        Promise.resolve().then(() => fetchImpl(o.url, { method: 'POST', ...o.init, signal: ctl.signal })),
      );
    } catch (e) {
      if (ctl.signal.aborted) throw stopError();
      throw o.error(`Network error calling the ${o.api}: ${describe(e)}`, { code: 'NETWORK_ERROR', retryable: true, cause: e });
    }
    bumpIdle();
    // A custom fetch may resolve to anything: what is not a Response is the provider's
    // INVALID_RESPONSE, never a TypeError of reading it.
    if (response === null || typeof response !== 'object' || typeof response.status !== 'number') {
      const what = response === null ? 'null' : typeof response === 'object' ? 'an object without a numeric status' : typeof response;
      throw o.error(`The fetch function given for the ${o.api} resolved to ${what}, not a Response`, { code: 'INVALID_RESPONSE' });
    }
    const headers = headersToObject(response.headers);
    const requestId = headers[o.requestIdHeader];
    if (!response.ok) {
      let text = '';
      try {
        text = await guard(response.text());
      } catch {
        if (ctl.signal.aborted) throw stopError();
      }
      throw o.httpError(response.status, response.statusText, text, headers);
    }
    const r = { response, guard, bumpIdle, ctl, stopError, requestId, headers };
    let message;
    if (o.useStream && !/\bjson\b/i.test(headers['content-type'] ?? '')) {
      message = await o.readStream(r);
    } else {
      message = await o.readJson(r);
      const text = o.textOf(message);
      if (text && call.onText) {
        call.delivered = true;
        giveText(call.onText, text);
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

/**
 * Runs `attempt()` until it succeeds or a failure must not be retried: the summarizers'
 * shared retry rule. Only errors `isOwn(err)` recognises are retried (anything else, e.g. an
 * exception thrown by the caller's `onText`, passes through untouched); never after an abort,
 * a non-retryable error, or once text was delivered (`call.delivered`). The wait is the
 * server's `retryAfterMs` (above `maxRetryAfterMs` the error is thrown instead), else full
 * jitter up to `min(retryMaxMs, retryBaseMs * 2^attempt)`. The error thrown carries `attempts`
 * and, when the library should not retry it either, `retriesExhausted`.
 * @template T
 * @param {() => Promise<T>} attempt
 * @param {{delivered: boolean}} call
 * @param {{
 *   isOwn: (err: unknown) => boolean,
 *   maxRetries: number, retryBaseMs: number, retryMaxMs: number, maxRetryAfterMs: number,
 *   signal: AbortSignal | undefined, abortError: (signal: AbortSignal | undefined) => Error,
 *   transient?: Set<number>,
 * }} o `transient`: statuses the library retries itself; a non-retryable error with one of
 *   them (an exhausted quota's 429) is marked `retriesExhausted` so the library does not.
 * @returns {Promise<T>}
 */
export async function withRetries(attempt, call, o) {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (caught) {
      let own = false;
      try {
        own = o.isOwn(caught);
      } catch {
        // a value `instanceof` cannot read (a revoked Proxy): not ours
      }
      if (!own) throw caught;
      const err = /** @type {any} */ (caught);
      err.attempts = n + 1;
      if (err.code === 'ABORTED' || call.delivered) throw err;
      if (!err.retryable) {
        if (o.transient !== undefined && err.status !== undefined && o.transient.has(err.status)) err.retriesExhausted = true;
        throw err;
      }
      if (n >= o.maxRetries) {
        err.retriesExhausted = true;
        throw err;
      }
      let delay;
      if (err.retryAfterMs !== undefined) {
        if (err.retryAfterMs > o.maxRetryAfterMs) {
          // Waiting that long is the caller's decision, not a silent stall inside summarize.
          err.retriesExhausted = true;
          throw err;
        }
        delay = err.retryAfterMs;
      } else {
        delay = Math.random() * Math.min(o.retryMaxMs, o.retryBaseMs * 2 ** n);
      }
      await sleep(delay, o.signal, o.abortError);
    }
  }
}

