// Types of js/http.js: the HTTP helpers the fetch-based summarizers share.

/** A server-sent events parser; `push` text cut anywhere, `end` at the end of the stream. */
export declare function createSseParser(dispatch: (event: string, data: string) => void): { push(text: string): void; end(): void };
/** The wait a response asks for (`retry-after-ms`, else `retry-after` in seconds or as a date), in ms. */
export declare function retryAfter(headers: Record<string, string>): number | undefined;
/** Waits `ms`, or rejects with `abortError(signal)` as soon as `signal` aborts. */
export declare function sleep(ms: number, signal: AbortSignal | undefined, abortError: (signal: AbortSignal | undefined) => Error): Promise<void>;
/** Adds headers (an object or a `Headers`) in lower case; `null`/`undefined` removes one. */
export declare function mergeHeaders(
  into: Record<string, string>,
  extra: Record<string, string | null | undefined> | Headers | undefined,
  optionError: (message: string) => Error,
): void;
/** Response headers as a plain object with lower-case names. */
export declare function headersToObject(headers: Headers | Record<string, string> | undefined): Record<string, string>;
/** A one-line description of an error and its cause. */
export declare function describe(e: unknown): string;
/** Throws `optionError` unless `value` is a non-negative finite number (or absent, when optional). */
export declare function checkCount(name: string, value: unknown, optional: boolean, optionError: (message: string) => Error): void;
/** The name of `known` that `name` most likely misspells, if any. */
export declare function likelyMeant(name: string, known: readonly string[]): string | undefined;
/** The named variables of `process.env` where there is one (an empty value is unset). */
export declare function readEnvironment(names: readonly string[]): Record<string, string | undefined>;
