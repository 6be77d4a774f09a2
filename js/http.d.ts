// Types of js/http.js: the HTTP helpers the fetch-based summarizers share.

/** The most content blocks of a summary answer that are read (src/drive/answers.rs `MAX_SUMMARY_BLOCKS`). */
export declare const MAX_SUMMARY_BLOCKS: number;
/** The most text of a summary answer that is read, in UTF-16 code units (src/drive/answers.rs `MAX_SUMMARY_TEXT`). */
export declare const MAX_SUMMARY_TEXT: number;
/**
 * A server-sent events parser; `push` text cut anywhere, `end` at the end of the stream. A
 * pending line or an event's data longer than `MAX_SUMMARY_TEXT` throws `tooLarge(what)`.
 */
export declare function createSseParser(
  dispatch: (event: string, data: string) => void,
  tooLarge?: (what: string) => Error,
): { push(text: string): void; end(): void };
/**
 * Feeds a response body to an SSE parser until `finished()` or the body ends (see
 * `readSseBody` in http.js); a failed read rejects with `stopError()` or `broken(error)`.
 */
export declare function readSseBody(
  response: Response,
  parser: { push(text: string): void; end(): void },
  finished: () => boolean,
  guard: <T>(p: Promise<T>) => Promise<T>,
  bumpIdle: () => void,
  ctl: AbortController,
  stopError: () => Error,
  broken: (error: unknown) => Error,
): Promise<void>;
/** The wait a response asks for (`retry-after-ms`, else `retry-after` in seconds or as a date), in ms. */
export declare function retryAfter(headers: Record<string, string>): number | undefined;
/** Waits `ms`, or rejects with `abortError(signal)` as soon as `signal` aborts. */
export declare function sleep(ms: number, signal: AbortSignal | undefined, abortError: (signal: AbortSignal | undefined) => Error): Promise<void>;
/** Adds headers (an object, an iterable of `[name, value]` pairs, a `Map` or a `Headers`) in lower case; `null`/`undefined` removes one. `anyName`: a name need not be an HTTP token (the caller's own fetch). */
export declare function mergeHeaders(
  into: Record<string, string>,
  extra: Record<string, string | null | undefined> | Iterable<readonly [string, string | null | undefined]> | ReadonlyMap<string, string | null | undefined> | Headers | undefined,
  optionError: (message: string) => Error,
  anyName?: boolean,
): void;
/** Calls `onText(text)`: a throw passes through; a returned promise's rejection is ignored. */
export declare function giveText(onText: (text: string) => unknown, text: string): void;
/** Response headers as a plain object with lower-case names. */
export declare function headersToObject(headers: Headers | Record<string, string> | undefined): Record<string, string>;
/** A one-line description of any thrown value and its cause; never throws, each part cut to `MAX_QUOTED`. */
export declare function describe(e: unknown): string;
/** The most code units of server or caller text an error message quotes. */
export declare const MAX_QUOTED: number;
/** `text` cut to at most `max` (default `MAX_QUOTED`) code units, with an ellipsis saying how much was left out. */
export declare function quote(text: unknown, max?: number): string;
/** `quote`, with an excerpt added around the words `keep` looks for when the cut start lost them. */
export declare function quoteKeeping(text: string, keep: (text: string) => boolean): string;
/** `v instanceof C`, false where `instanceof` throws (a revoked Proxy). */
export declare function isInstance(v: unknown, C: Function): boolean;
/** `v[key]`, or `undefined` when `v` is not an object or reading it throws. */
export declare function field(v: unknown, key: string): unknown;
/** `v` as text, never throwing (a value whose conversion throws is described by its kind). */
export declare function asText(v: unknown): string;
/** The words of a thrown value (an error's message, a string, an object's `message`), never throwing. */
export declare function wordsOf(e: unknown): string;
/** Throws `optionError` unless `value` is a non-negative finite number (or absent, when optional). */
export declare function checkCount(name: string, value: unknown, optional: boolean, optionError: (message: string) => Error): void;
/** Runs `build`; anything the caller's objects throw while read becomes `optionError(…)` with the original as `cause`. */
export declare function guardOptions<T>(build: () => T, optionError: (message: string) => Error): T;
/** The name of `known` that `name` most likely misspells, if any. */
export declare function likelyMeant(name: string, known: readonly string[]): string | undefined;
/** The named variables of `process.env` where there is one (an empty value is unset). */
export declare function readEnvironment(names: readonly string[]): Record<string, string | undefined>;
/** The controls of one HTTP attempt (see `attemptControls` in http.js). */
export interface AttemptControls<E extends Error = Error> {
  /** Aborted when the attempt is stopped; pass its signal to `fetch`. */
  ctl: AbortController;
  /** Settles with `promise`, or rejects with `stopError()` as soon as the attempt is stopped. */
  guard<T>(promise: Promise<T>): Promise<T>;
  /** Restarts the idle timer (call on every piece of data). */
  bumpIdle(): void;
  /** The error for why the attempt stopped: the caller's abort, or a timeout. */
  stopError(): E;
  /** Whether the attempt was stopped (by the caller or a timeout). */
  stopped(): boolean;
  /** Clears the timers; aborts the request when `finished` is false. */
  end(finished: boolean): void;
}
/** Stops an attempt on the caller's signal, after `timeoutMs`, or after `idleTimeoutMs` without data. */
export declare function attemptControls<E extends Error>(
  signal: AbortSignal | undefined,
  timeoutMs: number | null | undefined,
  idleTimeoutMs: number | null | undefined,
  abortError: (signal: AbortSignal | undefined) => E,
  timeoutError: (why: 'timeout' | 'idle') => E,
): AttemptControls<E>;
/** The summarizers' retry rule around `attempt` (see `withRetries` in http.js). */
export declare function withRetries<T>(
  attempt: () => Promise<T>,
  call: { delivered: boolean },
  options: {
    isOwn: (err: unknown) => boolean;
    maxRetries: number;
    retryBaseMs: number;
    retryMaxMs: number;
    maxRetryAfterMs: number;
    signal: AbortSignal | undefined;
    abortError: (signal: AbortSignal | undefined) => Error;
    transient?: Set<number>;
  },
): Promise<T>;
/** What one fetch attempt's reader gets (see `fetchAttempt` in http.js). */
export interface AttemptResponse {
  response: Response;
  guard<T>(promise: Promise<T>): Promise<T>;
  bumpIdle(): void;
  ctl: AbortController;
  stopError(): Error;
  /** The response's request id header, if any. */
  requestId: string | undefined;
  /** The response's headers, lower-case names. */
  headers: Record<string, string>;
}
/**
 * One HTTP attempt of a fetch summarizer: the POST under `attemptControls`, a failed request as
 * the provider's retryable NETWORK_ERROR, an answer that is not ok as `httpError`, then
 * `readStream` or `readJson` (whose `textOf` goes to `call.onText`); `_request_id` set on the
 * message.
 */
export declare function fetchAttempt<M extends object>(
  o: {
    api: string;
    url: string;
    init: { headers: Record<string, string>; body: string };
    fetchImpl: (url: string, init: any) => Promise<Response>;
    timeoutMs: number | null | undefined;
    idleTimeoutMs: number | null | undefined;
    useStream: boolean;
    requestIdHeader: string;
    abortError: (signal: AbortSignal | undefined) => Error;
    error: (message: string, fields: Record<string, unknown>) => Error;
    httpError: (status: number, statusText: string, text: string, headers: Record<string, string>) => Error;
    readStream: (r: AttemptResponse) => Promise<M>;
    readJson: (r: AttemptResponse) => Promise<M>;
    textOf: (message: M) => string;
  },
  signal: AbortSignal | undefined,
  call: { delivered: boolean; onText: ((text: string) => void) | undefined },
): Promise<M>;
/** Whether an HTTP error answer is worth another attempt (`never`, else `x-should-retry`, else 408, 409, 429, 5xx). */
export declare function retryableStatus(status: number, headers: Record<string, string>, never: boolean): boolean;
