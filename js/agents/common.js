// Shared by the agent-loop helpers (js/agents/*.js): option checks that throw the library's
// coded errors. Internal: not a public entry of the package.
import { ContextCompactionError, parseContextOverflowError } from 'context-compaction';

/**
 * A coded error of the library (`error.code`), with the original error as `cause`.
 *
 * @param {string} code
 * @param {string} message
 * @param {unknown} [cause]
 * @returns {ContextCompactionError}
 */
export function codedError(code, message, cause) {
  const error = new ContextCompactionError(message, /** @type {any} */ (code));
  if (cause !== undefined) error.cause = cause;
  return error;
}

/**
 * What the provider's SDK threw for a request of an agent loop, as the library's coded error
 * with the SDK's own error as `cause` (unchanged: its class, `status`, `headers`, body):
 * `ABORTED` when the loop's `signal` aborted, `PROMPT_TOO_LONG` for a rejection as too long
 * after the loop compacted (`compacted`: the compaction did not cure it), else
 * `PROVIDER_ERROR`; a `ContextCompactionError` as it is. The SDK error's HTTP `status`, when
 * it has one, is copied.
 *
 * @param {string} where
 * @param {unknown} error
 * @param {AbortSignal | undefined} signal
 * @param {boolean} compacted
 * @returns {ContextCompactionError}
 */
export function providerError(where, error, signal, compacted) {
  // Already one of the library's coded errors (toApiMessages refusing the conversation before
  // any request was sent, a client that wraps the library): its code stands.
  if (error instanceof ContextCompactionError) return error;
  if (signal?.aborted) return codedError('ABORTED', `${where}: aborted during the request to the provider`, error);
  const tooLong = compacted && parseContextOverflowError(error, /** @type {any} */ (error)?.status) !== null;
  const coded = codedError(
    tooLong ? 'PROMPT_TOO_LONG' : 'PROVIDER_ERROR',
    `${where}: ${tooLong ? 'the request was still too long after the compaction' : 'the request failed'}: ${thrownText(error)}`,
    error,
  );
  let status;
  try {
    status = /** @type {any} */ (error)?.status;
  } catch {
    // a getter or revoked Proxy: no status
  }
  if (typeof status === 'number') /** @type {any} */ (coded).status = status;
  return coded;
}

/**
 * Edit distance, to name the key a misspelt one probably meant.
 *
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
function distance(a, b) {
  /** @type {number[]} */
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1].toLowerCase() === b[j - 1].toLowerCase() ? 0 : 1;
      row.push(Math.min(/** @type {number} */ (prev[j]) + 1, /** @type {number} */ (row[j - 1]) + 1, /** @type {number} */ (prev[j - 1]) + cost));
    }
    prev = row;
  }
  return /** @type {number} */ (prev[b.length]);
}

/**
 * Checks an options object: a plain object, no unknown key (the error names the key, the one
 * probably meant and every accepted key), every required key present, every function-valued
 * key a function.
 *
 * @param {string} where - the helper's name, e.g. `compactionPrepareStep(options)`.
 * @param {unknown} options
 * @param {{ accepted: string[], required?: string[], functions?: string[], objects?: string[] }} rules
 * @returns {Record<string, any>}
 */
export function checkOptions(where, options, rules) {
  try {
    return checkOptions_(where, options, rules);
  } catch (e) {
    if (e instanceof ContextCompactionError) throw e;
    // A getter or Proxy trap of the caller's threw (or a revoked Proxy): refused as a bad
    // option, with what it threw as the cause, not passed on as it is (uncoded).
    let why;
    try {
      why = e instanceof Error ? String(e.message) : String(e);
    } catch {
      why = 'a value that has no text';
    }
    throw codedError('INVALID_ARGUMENT', `${where}: reading the options threw: ${why}`, e);
  }
}

/** checkOptions, reads that throw left to it. @param {string} where @param {unknown} options @param {{ accepted: string[], required?: string[], functions?: string[], objects?: string[] }} rules @returns {Record<string, any>} */
function checkOptions_(where, options, rules) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw codedError('INVALID_ARGUMENT', `${where}: expected an options object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`);
  }
  const given = /** @type {Record<string, unknown>} */ (options);
  for (const key of Object.keys(given)) {
    if (rules.accepted.includes(key)) continue;
    const near = rules.accepted
      .map((k) => ({ k, d: distance(key, k) }))
      .filter(({ k, d }) => d <= Math.max(2, Math.floor(k.length / 4)))
      .sort((x, y) => x.d - y.d)[0];
    throw codedError(
      'INVALID_ARGUMENT',
      `${where}: unknown option "${key}"${near ? ` (did you mean "${near.k}"?)` : ''}; accepted: ${rules.accepted.join(', ')}`,
    );
  }
  for (const key of rules.required ?? []) {
    if (given[key] === undefined || given[key] === null) {
      throw codedError('INVALID_ARGUMENT', `${where}: option "${key}" is required`);
    }
  }
  for (const key of rules.functions ?? []) {
    if (given[key] !== undefined && typeof given[key] !== 'function') {
      throw codedError('INVALID_ARGUMENT', `${where}: option "${key}" must be a function, got ${typeof given[key]}`);
    }
  }
  for (const key of rules.objects ?? []) {
    const v = given[key];
    if (v !== undefined && (v === null || typeof v !== 'object')) {
      throw codedError('INVALID_ARGUMENT', `${where}: option "${key}" must be an object, got ${v === null ? 'null' : typeof v}`);
    }
  }
  return given;
}

/**
 * The tool the model named, from the caller's `tools`: a function, found by its own name or
 * a method of a class instance, never a member every object inherits (`constructor`,
 * `toString`, `hasOwnProperty`…: a model that names one has named no tool of the caller's).
 *
 * @param {Record<string, unknown>} tools
 * @param {unknown} name
 * @returns {((...args: any[]) => unknown) | undefined}
 */
export function toolNamed(tools, name) {
  if (typeof name !== 'string') return undefined;
  const run = tools[name];
  if (typeof run !== 'function') return undefined;
  if (!Object.hasOwn(tools, name) && (name === 'constructor' || run === /** @type {any} */ (Object.prototype)[name])) return undefined;
  return /** @type {(...args: any[]) => unknown} */ (run);
}

/**
 * The text of what a tool threw, for the error result the model is sent: an `Error`'s message
 * (of any realm), else the value as text. Never throws (a null-prototype object, a `message`
 * getter or `toString` that throws, a revoked Proxy): the result must be written whatever was
 * thrown, or the model's call would stay unanswered.
 *
 * @param {unknown} error
 * @returns {string}
 */
export function thrownText(error) {
  try {
    if (isError(error) && typeof error.message === 'string') return error.message;
    return String(error);
  } catch {
    try {
      return `the tool threw ${Object.prototype.toString.call(error)}, which has no text`;
    } catch {
      return 'the tool threw a value that has no text';
    }
  }
}

/**
 * Whether `v` is an Error, also one made in another realm (a `vm` context, an iframe).
 *
 * @param {unknown} v
 * @returns {v is Error}
 */
function isError(v) {
  return v instanceof Error || Object.prototype.toString.call(v) === '[object Error]';
}

/**
 * A tool's answer as JSON text. Throws (to be answered as the tool's error) when the value
 * has no JSON form: a function, a Symbol, a `BigInt`, a cycle. An `Error` returned (of any
 * realm) is thrown as it is: its JSON is `{}`, which told the model neither that the tool
 * failed nor why.
 *
 * @param {unknown} value
 * @returns {string}
 */
export function toolJson(value) {
  if (isError(value)) throw value;
  const text = JSON.stringify(value ?? null);
  if (typeof text !== 'string') throw new Error(`the tool returned ${typeof value === 'function' ? 'a function' : typeof value === 'symbol' ? 'a Symbol' : 'a value'}, which has no JSON form`);
  return text;
}

/** Failed automatic compactions in a row after which the helpers stop trying (SPEC §6). */
export const MAX_CONSECUTIVE_FAILURES = 3;

/**
 * Calls a notification callback whose result is ignored (`f(...args)`); a promise it returns
 * that rejects is ignored too, not left as an unhandled rejection (which ends a Node process
 * by default). What it throws synchronously passes through.
 * @param {((...args: any[]) => unknown) | undefined} f
 * @param {...unknown} args
 * @returns {void}
 */
export function notifyIgnoringResult(f, ...args) {
  if (typeof f !== 'function') return;
  const r = f(...args);
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
 * A signal aborted when either given one is (either may be absent).
 *
 * @param {AbortSignal | undefined | null} a
 * @param {AbortSignal | undefined | null} b
 * @returns {AbortSignal | undefined}
 */
export function eitherSignal(a, b) {
  if (!a) return b ?? undefined;
  if (!b) return a;
  if (typeof AbortSignal.any === 'function') return AbortSignal.any([a, b]);
  const c = new AbortController();
  if (a.aborted) c.abort(a.reason);
  else if (b.aborted) c.abort(b.reason);
  else {
    a.addEventListener('abort', () => c.abort(a.reason), { once: true });
    b.addEventListener('abort', () => c.abort(b.reason), { once: true });
  }
  return c.signal;
}
