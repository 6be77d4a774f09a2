// @ts-check
// The option checks the summarizers' factories share (anthropic.js, openai.js, langchain.js):
// header merging, counts, the "did you mean" hint, environment variables and the guard that
// turns a throwing argument into a coded error. Kept apart from http.js (the request machinery,
// loaded on a summarizer's first call) so that a page loads only these with the factories.
// Each takes the caller's own error constructor so its errors keep their class and code.

/**
 * Adds the caller's headers, in every form `fetch` takes: a plain object (a record of names
 * and values), an array (or another iterable) of `[name, value]` pairs, or a `Headers` (or
 * anything with `forEach` and `get`, a `Map` among them). Names are written in lower case; a
 * `null`/`undefined` value removes one. A name that is not a string, a name the global `fetch`
 * could not send (unless `anyName`: the caller's own fetch, which may send it another way), a
 * pair that is not two elements, or anything else given is the caller's error (`optionError`),
 * not a header named "0".
 * @param {Record<string, string>} into
 * @param {Record<string, string | null | undefined> | Iterable<readonly [string, string | null | undefined]> | ReadonlyMap<string, string | null | undefined> | Headers | undefined} extra
 * @param {(message: string) => Error} optionError The caller's error for a bad option.
 * @param {boolean} [anyName] Whether any string is a name (the caller's own fetch).
 */
export function mergeHeaders(into, extra, optionError, anyName = false) {
  if (extra === undefined || extra === null) return;
  if (typeof extra !== 'object') {
    throw optionError(`headers must be an object, an array of [name, value] pairs or a Headers, not ${aType(extra)}`);
  }
  const x = /** @type {{forEach?: unknown, get?: unknown, [Symbol.iterator]?: unknown}} */ (extra);
  /** @type {Array<[unknown, unknown]>} */
  const entries = [];
  if (typeof x.forEach === 'function' && typeof x.get === 'function') {
    /** @type {Headers} */ (extra).forEach((v, k) => entries.push([k, v]));
  } else if (typeof x[Symbol.iterator] === 'function') {
    let i = 0;
    for (const pair of /** @type {Iterable<unknown>} */ (extra)) {
      if (!Array.isArray(pair) || pair.length !== 2) {
        throw optionError(
          `headers[${i}] must be a [name, value] pair, not ${Array.isArray(pair) ? `an array of ${pair.length}` : aType(pair)}`,
        );
      }
      entries.push([pair[0], pair[1]]);
      i += 1;
    }
  } else {
    for (const [k, v] of Object.entries(extra)) entries.push([k, v]);
  }
  for (const [name, value] of entries) {
    if (typeof name !== 'string' || (!anyName && !HEADER_NAME.test(name))) {
      throw optionError(
        `headers: ${typeof name === 'string' ? JSON.stringify(quote(name, 60)) : aType(name)} is not a header name fetch can send ` +
          "(letters, digits and !#$%&'*+-.^_`|~ only)",
      );
    }
    const key = name.toLowerCase();
    if (value === null || value === undefined) delete into[key];
    // Defined, not assigned: a header named `__proto__` is a header, not the prototype.
    else Object.defineProperty(into, key, { value: typeof value === 'string' ? value : asText(value), enumerable: true, writable: true, configurable: true });
  }
}

/**
 * The type of `v` with its article, for a message: "a string", "an object", "null".
 * @param {unknown} v
 */
function aType(v) {
  if (v === null) return 'null';
  const t = typeof v;
  return t === 'object' || t === 'undefined' ? `an ${t}` : `a ${t}`;
}

/** A header name `fetch` sends: an HTTP token (RFC 9110). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Refuses a request header whose value the global `fetch` would refuse at every request (then
 * retried as if the network had failed): a line break or NUL inside it, or a character above
 * U+00FF. Not for the caller's own fetch, which may send such a value another way.
 * `fetch` trims spaces, tabs and line breaks at either end, so those pass. The message names
 * the header and where its value came from (`origin`), never the value (a key, say).
 * @param {Record<string, string>} headers
 * @param {(name: string) => string} origin Where a header's value came from, in words.
 * @param {(message: string) => Error} optionError
 */
export function checkHeaderValues(headers, origin, optionError) {
  for (const [name, value] of Object.entries(headers)) {
    const inner = value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
    const bad = /[\0\r\n]|[^\0-\u00ff]/.exec(inner);
    if (bad === null) continue;
    const c = bad[0];
    const what =
      c === '\r' || c === '\n'
        ? 'a line break'
        : c === '\0'
          ? 'a NUL character'
          : `the character U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}, which is not Latin-1`;
    throw optionError(`the ${name} header (from ${origin(name)}) holds ${what}: fetch cannot send it`);
  }
}

/**
 * The URL of an API path under the caller's `baseURL`: `path` appended to its path (a query it
 * has is kept after the path), refused (`optionError`) when `baseURL` is not a URL, is not an
 * http(s) one (unless `anyScheme`: the caller's own fetch, which may reach another scheme) or
 * has a fragment (never sent: the path would land in it).
 * @param {unknown} baseURL
 * @param {string} path
 * @param {(message: string) => Error} optionError
 * @param {boolean} [anyScheme] Whether a URL of any scheme is taken (the caller's own fetch).
 * @returns {{url: string, root: string}} The URL, and the base without its trailing slashes.
 */
export function apiURL(baseURL, path, optionError, anyScheme = false) {
  if (typeof baseURL !== 'string' || baseURL === '') throw optionError('baseURL must be a non-empty string');
  /** @type {URL} */
  let u;
  try {
    u = new URL(baseURL);
  } catch {
    throw optionError(`baseURL is not a URL: ${quote(baseURL, 200)}`);
  }
  if (!anyScheme && u.protocol !== 'https:' && u.protocol !== 'http:') {
    throw optionError(`baseURL must be an http(s) URL, not ${quote(u.protocol, 40)} (${quote(baseURL, 200)})`);
  }
  if (baseURL.includes('#')) {
    throw optionError(`baseURL has a fragment (#…), which is never sent: remove it (${quote(baseURL, 200)})`);
  }
  const root = baseURL.replace(/\/+$/, '');
  if (u.search === '' && !baseURL.includes('?')) return { url: root + path, root };
  u.pathname = u.pathname.replace(/\/+$/, '') + path;
  return { url: u.href, root };
}

/**
 * The most code units of server or caller text (a response header, an error body, an error's
 * message) quoted in an error message: the whole value stays on the error's fields
 * (`headers`, `error`, `requestId`, `cause`), the message only shows its start.
 */
export const MAX_QUOTED = 500;

/**
 * `text` cut to at most `max` code units (never in the middle of a surrogate pair), with an
 * ellipsis and the number of code units left out when it was longer. A value that is not a
 * string is first turned into text ({@link asText}).
 * @param {unknown} value
 * @param {number} [max]
 * @returns {string}
 */
export function quote(value, max = MAX_QUOTED) {
  const text = typeof value === 'string' ? value : asText(value);
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}

/**
 * {@link quote} for text whose words the library reads (a provider's "prompt is too long: N
 * tokens > M maximum"): when the cut start no longer passes `keep` but the whole does, an
 * excerpt around the first place that makes it pass is added, so a message cut short still
 * says what the library looks for.
 * @param {string} text
 * @param {(text: string) => boolean} keep
 * @returns {string}
 */
export function quoteKeeping(text, keep) {
  const cut = quote(text);
  if (cut === text || keep(cut) || !keep(text)) return cut;
  // The shortest start of `text` that passes ends where the words it looks for end.
  let lo = 0;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keep(text.slice(0, mid))) hi = mid;
    else lo = mid + 1;
  }
  let from = Math.max(0, lo - 200);
  const first = text.charCodeAt(from);
  if (first >= 0xdc00 && first <= 0xdfff) from += 1;
  return `${cut} [… ${quote(text.slice(from, from + 400), 400)}]`;
}

/**
 * Whether `v` is an instance of `C`, never throwing: `instanceof` on a revoked Proxy throws
 * (it reads the prototype through a trap that is gone).
 * @param {unknown} v
 * @param {Function} C
 */
export function isInstance(v, C) {
  try {
    return v instanceof C;
  } catch {
    return false;
  }
}

/**
 * `v[key]`, or `undefined` when `v` is not an object or reading it throws (a getter, a
 * Proxy's trap, a revoked Proxy).
 * @param {unknown} v
 * @param {string} key
 * @returns {unknown}
 */
export function field(v, key) {
  if (v === null || (typeof v !== 'object' && typeof v !== 'function')) return undefined;
  try {
    return /** @type {Record<string, unknown>} */ (v)[key];
  } catch {
    return undefined;
  }
}

/**
 * What kind of value `v` is, for one that cannot be turned into text: "a revoked Proxy",
 * "an object with a null prototype", "an object whose conversion to text throws".
 * @param {unknown} v
 */
function kindOf(v) {
  if (v === null) return 'null';
  if (typeof v !== 'object' && typeof v !== 'function') return typeof v;
  let proto;
  try {
    proto = Object.getPrototypeOf(v);
  } catch {
    return 'a value that cannot be read (a revoked Proxy, or a Proxy whose traps throw)';
  }
  if (proto === null) return `${typeof v === 'function' ? 'a function' : 'an object'} with a null prototype`;
  return `${typeof v === 'function' ? 'a function' : 'an object'} whose conversion to text throws`;
}

/**
 * `v` as text, never throwing: a string as it is, a symbol's description, else `String(v)`;
 * a value whose conversion throws or gives no string (a null-prototype object, a throwing
 * `toString` or `Symbol.toPrimitive`, a revoked Proxy) is described by its kind.
 * @param {unknown} v
 * @returns {string}
 */
export function asText(v) {
  if (typeof v === 'string') return v;
  if (typeof v === 'symbol') return v.toString();
  try {
    const s = String(v);
    if (typeof s === 'string') return s;
  } catch {
    // described below
  }
  return kindOf(v);
}

/**
 * The words of a thrown value: an `Error`'s message (or its name when it has none), a string
 * as it is, an object's own string `message`, else {@link asText}. Never throws; not cut.
 * @param {unknown} e
 * @returns {string}
 */
export function wordsOf(e) {
  if (typeof e === 'string') return e;
  const message = field(e, 'message');
  if (typeof message === 'string' && message !== '') return message;
  if (isInstance(e, Error)) {
    const name = field(e, 'name');
    return typeof name === 'string' && name !== '' ? name : 'Error';
  }
  return asText(e);
}

/**
 * A one-line description of an error and its cause (undici puts the reason in `cause`), for
 * any thrown value: it never throws (a null-prototype object, a throwing `toString`, a revoked
 * Proxy are described by their kind), and each part is cut to {@link MAX_QUOTED} code units.
 * @param {unknown} e
 * @returns {string}
 */
export function describe(e) {
  const words = quote(wordsOf(e));
  if (!isInstance(e, Error)) return words;
  const cause = field(e, 'cause');
  if (cause === undefined || cause === null) return words;
  // A cause that is not an Error is read for its code (undici's `{code: 'ECONNREFUSED'}`).
  const code = isInstance(cause, Error) ? undefined : field(cause, 'code');
  const why = quote(code !== undefined && code !== null ? asText(code) : wordsOf(cause));
  return why && why !== words ? `${words} (${why})` : words;
}

/**
 * @param {string} name
 * @param {unknown} value
 * @param {boolean} optional
 * @param {(message: string) => Error} optionError The caller's error for a bad option.
 */
export function checkCount(name, value, optional, optionError) {
  if (optional && (value === undefined || value === null)) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw optionError(`${name} must be a non-negative number`);
  }
}

/** The longest wait `setTimeout` runs (2^31-1 ms, about 24.8 days): a longer one fires at once. */
export const MAX_TIMER_MS = 2147483647;

/**
 * `checkCount` for an option in milliseconds that becomes a timer (`timeoutMs`,
 * `idleTimeoutMs`, `retryBaseMs`, `retryMaxMs`, `maxRetryAfterMs`): also at most
 * `MAX_TIMER_MS`, as the core's `context.summaryTimeoutMs` (setTimeout would run a longer one
 * after 1 ms: every request would time out at once, a long retry-after be retried at once).
 * @param {string} name
 * @param {unknown} value
 * @param {boolean} optional
 * @param {(message: string) => Error} optionError The caller's error for a bad option.
 */
export function checkTimerMs(name, value, optional, optionError) {
  checkCount(name, value, optional, optionError);
  if (typeof value === 'number' && value > MAX_TIMER_MS) {
    throw optionError(
      `${name} is ${value}; at most ${MAX_TIMER_MS} ms (about 24.8 days, the longest timer JavaScript runs)${optional ? ', or 0 (or leave it out) for no limit' : ''}`,
    );
  }
}

/**
 * {@link checkTimerMs} for each of a summarizer's timer options, in the order given:
 * `timeoutMs` and `idleTimeoutMs` may be left out (no limit), the others (`retryBaseMs`,
 * `retryMaxMs`, `maxRetryAfterMs`, which have defaults) may not.
 * @param {Record<string, unknown>} values The options' values by name.
 * @param {(message: string) => Error} optionError The caller's error for a bad option.
 */
export function checkTimers(values, optionError) {
  for (const [name, value] of Object.entries(values)) {
    checkTimerMs(name, value, name === 'timeoutMs' || name === 'idleTimeoutMs', optionError);
  }
}

/**
 * The name of `known` that `name` most likely misspells: the same but for case, or within two
 * edits (one for names of fewer than 6 characters); `undefined` when there is none.
 * @param {string} name
 * @param {readonly string[]} known
 * @returns {string | undefined}
 */
export function likelyMeant(name, known) {
  const a = name.toLowerCase();
  let best;
  let bestDistance = Infinity;
  for (const k of known) {
    const b = k.toLowerCase();
    // Edit distance, one row at a time.
    let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const row = [i];
      for (let j = 1; j <= b.length; j++) {
        row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
      }
      prev = row;
    }
    const d = prev[b.length];
    const allowed = Math.min(a.length, b.length) < 6 ? 1 : 2;
    if (d <= allowed && d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  return best;
}

/**
 * The values of the named variables of `process.env` where there is one (Node, Bun, Deno's Node
 * compatibility); an empty value counts as unset, and so does one the runtime refuses to read
 * (Deno without `--allow-env` throws `NotCapable`). Nothing in browsers.
 * @param {readonly string[]} names
 * @returns {Record<string, string | undefined>}
 */
export function readEnvironment(names) {
  const env = /** @type {{process?: {env?: Record<string, string | undefined>}}} */ (globalThis).process?.env;
  /** @type {Record<string, string | undefined>} */
  const out = {};
  if (!env || typeof env !== 'object') return out;
  for (const name of names) {
    let v;
    try {
      v = env[name];
    } catch {
      // refused (no permission): unset
    }
    out[name] = typeof v === 'string' && v !== '' ? v : undefined;
  }
  return out;
}

/**
 * Runs a summarizer factory's reading of its arguments so that whatever the caller's objects
 * throw while being read (a Proxy's traps, a getter, a revoked Proxy) is a coded option error
 * naming what happened, with the original as its `cause`, never a bare exception. The
 * factory's own coded errors pass through as they are.
 * @template T
 * @param {() => T} build
 * @param {(message: string) => Error} optionError The caller's error for a bad option.
 * @returns {T}
 */
export function guardOptions(build, optionError) {
  try {
    return build();
  } catch (e) {
    if (isInstance(e, Error) && typeof field(e, 'code') === 'string') throw e;
    const why = quote(wordsOf(e));
    throw Object.assign(optionError(`reading the arguments threw: ${why}`), { cause: e });
  }
}

/**
 * A module imported on first use: the returned function imports it with `load` the first time
 * and gives the same promise after. A failed load rejects with `failed(error)` (the caller's own
 * coded error) and is tried again by the next call; `load` gets the number of failures so far,
 * so that a retry can import anew (import-again.js: a browser keeps a failed import).
 * @template T
 * @param {(failures: number) => Promise<T>} load
 * @param {(error: unknown) => Error} failed
 * @returns {() => Promise<T>}
 */
export function loadOnce(load, failed) {
  /** @type {Promise<T> | undefined} */
  let loading;
  let failures = 0;
  return () => {
    loading ??= load(failures).catch((e) => {
      loading = undefined;
      failures++;
      throw failed(e);
    });
    return loading;
  };
}
