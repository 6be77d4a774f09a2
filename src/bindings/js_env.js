// Helpers behind the Rust environment of the pipeline (src/bindings/env.rs): calling the
// caller's callbacks so that a thrown error, a rejected Promise and a plain value all come
// back as a Promise, and so that the caller's AbortSignal interrupts every wait at once even
// when a callback ignores it. No decisions are made here.

// The caller's signal is the caller's object: what its methods or getters throw (a polyfill, a
// wrapped signal) must never escape into the library's promises, where it would leave one
// unsettled and surface as an unhandled rejection. Every use of it goes through these.
import { SEEN_ENTRIES, sameState, setApartWriter, stateKey } from './js_batch.js';

function aborted(signal) {
  try {
    return !!(signal && signal.aborted);
  } catch {
    return false;
  }
}
function listen(signal, f) {
  try {
    if (signal) signal.addEventListener('abort', f, { once: true });
  } catch {
    // not observed: the awaits still check `aborted`
  }
}
function unlisten(signal, f) {
  try {
    if (signal) signal.removeEventListener('abort', f);
  } catch {
    // left attached: `once`, and a settled promise ignores it
  }
}

function abortError(signal) {
  let reason;
  try {
    reason = signal && signal.reason;
  } catch {
    // no reason: the library's own AbortError
  }
  // `instanceof` reads the prototype: a revoked Proxy (or one whose getPrototypeOf trap
  // throws) as the reason would throw here, inside the signal's abort listener, where nothing
  // catches it (an uncaught exception, and the wait it should end never ended).
  let given = false;
  try {
    given = reason instanceof Error;
  } catch {
    // not an Error we can tell: the library's own AbortError
  }
  if (given) return reason;
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  e.code = 'ABORTED';
  return e;
}

function timeoutError(ms, what) {
  const e = new Error(`${what} did not answer within ${ms} ms (summaryTimeoutMs)`);
  e.name = 'TimeoutError';
  e.code = 'TIMEOUT';
  e.contextCompactionTimeout = true;
  return e;
}

// Promise of `f(...args)`, rejected as soon as `signal` aborts or, with `timeoutMs` > 0,
// when the callback has not settled by then (`what` names it: "The summarizer", …).
export function callAbortable(f, thisArg, args, signal, timeoutMs, what) {
  if (aborted(signal)) return Promise.reject(abortError(signal));
  let result;
  try {
    result = Promise.resolve(f.apply(thisArg, args));
  } catch (e) {
    return Promise.reject(e);
  }
  if (!signal && !(timeoutMs > 0)) return result;
  return new Promise((resolve, reject) => {
    let timer = null;
    const done = () => {
      unlisten(signal, onAbort);
      if (timer !== null) clearTimeout(timer);
    };
    const onAbort = () => { done(); reject(abortError(signal)); };
    listen(signal, onAbort);
    if (timeoutMs > 0) timer = setTimeout(() => { done(); reject(timeoutError(timeoutMs, what)); }, timeoutMs);
    result.then(
      (v) => { done(); resolve(v); },
      (e) => { done(); reject(e); },
    );
  });
}

// The summarizer called as `callAbortable` calls it, `opts` its second argument, whose `signal`
// becomes the call's own: aborted with the caller's `signal` (same reason) and also when the
// time limit gives up on the call, so that a summary request nobody waits for any more is
// cancelled instead of streaming (and being billed) to its end.
export function callSummarizer(f, request, opts, signal, timeoutMs) {
  // The caller's reason as it is (a string, any value, not made an Error): the summarizer
  // sees what the caller's signal would have shown it.
  const { c, release } = abortLinked([signal], reasonOf);
  opts.signal = c.signal;
  const p = callAbortable(f, undefined, [request, opts], signal, timeoutMs, 'The summarizer');
  p.then(release, (e) => {
    release();
    if (ownTimeout(e)) c.abort(e);
  });
  return p;
}

// Whether `e` is timeoutError's: what a summarizer rejected with is the caller's value, and
// reading a field of it may throw (a Proxy's trap, a revoked Proxy), which in this handler
// would be an unhandled rejection (the end of a Node process by default).
function ownTimeout(e) {
  try {
    return e?.contextCompactionTimeout === true;
  } catch {
    return false;
  }
}

// `signal.reason`, undefined when reading it throws (the controller then gives its own).
function reasonOf(signal) {
  try {
    return signal.reason;
  } catch {
    return undefined;
  }
}

// A Promise resolved after `ms`, rejected at once when `signal` aborts.
export function sleepAbortable(ms, signal) {
  return new Promise((resolve, reject) => {
    if (aborted(signal)) return reject(abortError(signal));
    const timer = setTimeout(() => {
      unlisten(signal, onAbort);
      resolve();
    }, ms);
    const onAbort = () => { clearTimeout(timer); reject(abortError(signal)); };
    listen(signal, onAbort);
  });
}

// A Promise resolved on the next turn of the event loop, once what was queued meanwhile (an
// abort, a timer, a signal handler) has run (a microtask would run before them, so it would
// not do): setImmediate where there is one (Node, Bun); else a message to a fresh
// MessageChannel (browsers, Deno, workers), closed once it arrives: browsers clamp a
// setTimeout 0 set from a timer's continuation to 4 ms after five levels, which would add
// 4 ms to each of a compaction's pauses; else setTimeout 0.
export function nextTurn() {
  return new Promise((resolve) => {
    if (typeof setImmediate === 'function') setImmediate(resolve);
    else if (typeof MessageChannel === 'function') {
      const { port1, port2 } = new MessageChannel();
      port1.onmessage = () => {
        port1.close();
        port2.close();
        resolve();
      };
      port2.postMessage(null);
    } else setTimeout(resolve, 0);
  });
}

// Milliseconds from a monotonic clock (performance.now, else Date.now).
// The summarizer of a context that gave none: calling it is an error. Defined here, not
// built from a string, so that it works where code from strings is refused (a strict CSP,
// Cloudflare Workers, Node's --disallow-code-generation-from-strings).
function missingSummarizer() {
  throw new Error('no summarize callback');
}

export function noSummarizer() {
  return missingSummarizer;
}

export function nowMs() {
  return typeof performance !== 'undefined' && typeof performance.now === 'function' ? performance.now() : Date.now();
}

export function isAborted(signal) {
  return aborted(signal);
}

// Calls `f(event)` and swallows what it throws: progress reporting never breaks compaction.
// Its result is ignored; when it is a promise (an async callback) or any thenable, its
// rejection is ignored too — left alone it would be an unhandled rejection, which ends a Node
// process by default.
export function notify(f, event) {
  try {
    const r = f(event);
    if (r !== null && (typeof r === 'object' || typeof r === 'function')) {
      const then = r.then;
      if (typeof then === 'function') then.call(r, undefined, ignore);
    }
  } catch (_) {
    // ignored on purpose
  }
}
function ignore() {}

export function newUuid() {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function') return c.randomUUID();
  const h = [];
  for (let i = 0; i < 32; i++) h.push(Math.floor(Math.random() * 16).toString(16));
  h[12] = '4';
  h[16] = ((parseInt(h[16], 16) & 3) | 8).toString(16);
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
}

export function nowIso() {
  return new Date().toISOString();
}

// What the latest reading of each of `states` saw of it (SEEN_ENTRIES, js_batch.js), taken
// by a compaction right after it read them (a summary written ahead: when it started), and
// given to clearStates when it commits: another reading of the same state meanwhile (a
// preview, another compaction) does not change what it clears.
export function seenOf(states) {
  return states.map((v) => (v !== null && typeof v === 'object' ? SEEN_ENTRIES.get(v) : undefined));
}

// Empties the caller's read-file state and loaded-memory paths (`states`) after a successful
// compaction (Map/Set: clear(); plain object: its own keys deleted; array: emptied). Where the
// compaction read a state's entries (`seen`, seenOf's), only those are deleted, each while it
// still holds what was read (a file state with the same content and time as when it was read
// — a getter or Proxy may give a new object each time —, any other value the same value): an
// entry the agent added or changed while the compaction ran (a file it read during the summary
// request, in a new object or in place) stays; so do the entries of a state that replaced the
// one read (an immutable update) but hold something else. Never throws: it runs after the
// compaction succeeded, and a state the caller froze or sealed (or a Map whose clear() throws)
// is left as it is rather than losing the result.
// The reads of the files `kept` names (paths of the first state, readFileState, each ended by
// a NUL) stay: the kept messages still hold their content.
export function clearStates(states, seen, kept) {
  if (kept.length > 0 && Array.isArray(seen[0])) {
    const keep = new Set(kept.split('\0'));
    seen = [seen[0].filter((e) => !keep.has(e[0])), ...seen.slice(1)];
  }
  states.forEach((v, i) => clearState(v, seen[i]));
}

function clearState(v, seen) {
  if (v === null || typeof v !== 'object') return;
  SEEN_ENTRIES.delete(v); // the reading is the compaction's now: not kept here any longer
  try {
    if (seen !== undefined) clearSeen(v, seen);
    else if (typeof v.clear === 'function') v.clear();
    else if (Array.isArray(v)) v.length = 0;
    else {
      for (const k of Object.keys(v)) {
        try {
          delete v[k];
        } catch {
          // a non-configurable key stays
        }
      }
    }
  } catch {
    // frozen, sealed or read-only: nothing cleared
  }
}

// Whether entry value `y` still holds what was read (`x`, whose stateKey was then `key`): a
// file state with the same content and time as then (the same object changed in place since
// does not), else the same value.
function sameEntry(x, key, y) {
  return key !== undefined ? sameState(stateKey(y), key) : x === y;
}

// clearState of the entries `seen` of `v` (as entriesOf read them).
function clearSeen(v, seen) {
  if (v instanceof Map) {
    for (const [k, x, key] of seen) if (v.has(k) && sameEntry(x, key, v.get(k))) v.delete(k);
  } else if (Array.isArray(v)) {
    // By path, content and time, else by identity (one lookup per element: a long array
    // stays linear, however many records share a content or a time; keyed by the content
    // string itself, then the time, then the path). A record with the same content and time
    // under another path (a `cp -p` copy the agent read meanwhile) is another file: it stays.
    const same = new Set(), held = new Map();
    for (const [k, x, key] of seen) {
      if (key === undefined) {
        same.add(x);
        continue;
      }
      let times = held.get(key[0]);
      if (times === undefined) held.set(key[0], (times = new Map()));
      let paths = times.get(key[1]);
      if (paths === undefined) times.set(key[1], (paths = new Set()));
      paths.add(k);
    }
    let n = 0;
    for (let i = 0; i < v.length; i++) {
      const y = v[i];
      const key = stateKey(y);
      const paths = key === undefined ? undefined : held.get(key[0])?.get(key[1]);
      if (!((paths !== undefined && paths.has(pathOf(y))) || same.has(y))) v[n++] = y;
    }
    v.length = n;
  } else {
    for (const [k, x, key] of seen) {
      try {
        if (Object.prototype.hasOwnProperty.call(v, k) && sameEntry(x, key, v[k])) delete v[k];
      } catch {
        // a non-configurable key stays
      }
    }
  }
}

// The path of record `y` as entriesOf keys it (`path`, else `name`); a unique value no path
// equals when reading it throws (a path that cannot be read is not known to be the one read).
const UNREADABLE = Symbol('unreadable path');
function pathOf(y) {
  try {
    return y.path ?? y.name;
  } catch {
    return UNREADABLE;
  }
}

// A controller aborted when one of `parents` (absent ones aside) aborts, with that one's
// reason as `why` gives it (the first already aborted, else the first to abort; by default an
// Error); `release()` detaches it from them once its work has settled (a long-lived parent
// keeps no listener per call).
function abortLinked(parents, why = abortError) {
  const c = new AbortController();
  const links = parents.filter(Boolean).map((p) => [p, () => c.abort(why(p))]);
  const early = links.find(([p]) => aborted(p));
  if (early) c.abort(why(early[0]));
  else for (const [p, on] of links) listen(p, on);
  return { c, release: () => { for (const [p, on] of links) unlisten(p, on); } };
}

// A signal for one summary written ahead: it aborts when `parent` (the Compactor's signal, if
// any) aborts, or when `cancel()` is called — deferred to a microtask, so that a listener of
// the caller's never runs inside a call into the library. `release()` detaches it from
// `parent` once the summary has settled.
export function linkedAbort(parent) {
  const { c, release } = abortLinked([parent]);
  return {
    signal: c.signal,
    cancel() {
      queueMicrotask(() => {
        const e = new Error('The summary written ahead was dropped: the conversation it was for was replaced');
        e.name = 'AbortError';
        e.code = 'ABORTED';
        c.abort(e);
      });
    },
    release,
  };
}

// The signal of one call given a signal of its own (`call`) besides its context's
// (`context`): `{signal, release()}`, the signal aborted when either is (with that one's
// reason). With one of them absent, the other as it is.
export function eitherAbort(context, call) {
  if (!context || !call) return { signal: context || call, release: ignore };
  const { c, release } = abortLinked([context, call]);
  return { signal: c.signal, release };
}

const brandGetter = (proto, key) => {
  const d = proto && Object.getOwnPropertyDescriptor(proto, key);
  return d && typeof d.get === 'function' ? (v) => d.get.call(v) : undefined;
};
const typedArrayName = brandGetter(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag);
const brands = [
  ['Date', (v) => Date.prototype.getTime.call(v)],
  ['RegExp', brandGetter(RegExp.prototype, 'source')],
  ['ArrayBuffer', brandGetter(ArrayBuffer.prototype, 'byteLength')],
  ['SharedArrayBuffer', typeof SharedArrayBuffer === 'function' ? brandGetter(SharedArrayBuffer.prototype, 'byteLength') : undefined],
  ['DataView', brandGetter(DataView.prototype, 'byteLength')],
  ['Map', (v) => Map.prototype.has.call(v)],
  ['Set', (v) => Set.prototype.has.call(v)],
  ['WeakMap', (v) => WeakMap.prototype.has.call(v, brands)],
  ['WeakSet', (v) => WeakSet.prototype.has.call(v, brands)],
  ['WeakRef', typeof WeakRef === 'function' ? (v) => WeakRef.prototype.deref.call(v) : undefined],
  ['Boolean object', (v) => Boolean.prototype.valueOf.call(v)],
  ['Number object', (v) => Number.prototype.valueOf.call(v)],
  ['String object', (v) => String.prototype.valueOf.call(v)],
].filter(([, check]) => check !== undefined);
export function builtinKind(v) {
  if (typeof v === 'function') return 'function';
  if (typeof v === 'symbol') return 'Symbol';
  if (typeof v === 'bigint') return 'BigInt';
  if (v === null || typeof v !== 'object') return undefined;
  try {
    if (typeof Error.isError === 'function' ? Error.isError(v) : v instanceof Error) return 'Error';
  } catch {
    // A Proxy's trap threw: not an Error.
  }
  const typed = typedArrayName && typedArrayName(v);
  if (typeof typed === 'string') return typed;
  for (const [name, check] of brands) {
    try {
      check(v);
      return name;
    } catch {
      // Not this one.
    }
  }
  return undefined;
}

// From this length a string of a message's content is sent apart.
const APART_CHARS = 64;
const isOwnEnumerable = (o, k) => Object.prototype.propertyIsEnumerable.call(o, k);

// `m` to be written as JSON with the long strings of its content taken out (left as ""), the
// strings and their places pushed to `texts` / `slots` (the caller's own arrays: a getter may
// call the package again while they are filled), or `m` itself when it has none.
// The content is `m.message.content` when `m` has its own `message` object, else `m.content`;
// a place is 0 for a string content, b + 1 for the `text` of text block b or the string
// `content` of tool result b, b + 1 + (k + 1) * 2^21 for a string field of the input of tool
// use b (inputApart). Only own enumerable data that JSON.stringify would write as
// it is (no toJSON on the way) is taken; the copies keep every other field and key order.
// Rust puts each string back (`Message::put_apart_text`) and reads the message again whole
// when a place does not hold "" there.
function withApart(m, texts, slots) {
  if (m === null || typeof m !== 'object' || Array.isArray(m) || typeof m.toJSON === 'function') return m;
  const msg = isOwnEnumerable(m, 'message') ? m.message : undefined;
  const inner = msg !== null && typeof msg === 'object' && !Array.isArray(msg);
  const carrier = inner ? msg : m;
  if (inner && typeof carrier.toJSON === 'function') return m;
  if (!isOwnEnumerable(carrier, 'content')) return m;
  const c = carrier.content;
  let content;
  if (typeof c === 'string') {
    if (c.length < APART_CHARS) return m;
    texts.push(c);
    slots.push(0);
    content = '';
  } else if (Array.isArray(c) && typeof c.toJSON !== 'function') {
    for (let b = 0; b < c.length; b++) {
      const x = c[b];
      if (x === null || typeof x !== 'object' || Array.isArray(x) || typeof x.toJSON === 'function') continue;
      const t = x.type;
      if (t === 'tool_use') {
        const input = b < 2097151 && isOwnEnumerable(x, 'input') && inputApart(x.input, b, texts, slots);
        if (input) {
          if (content === undefined) content = c.slice();
          content[b] = { ...x, input };
        }
        continue;
      }
      const f = t === 'text' ? 'text' : t === 'tool_result' ? 'content' : undefined;
      if (f === undefined || !isOwnEnumerable(x, f)) continue;
      const v = x[f];
      if (typeof v !== 'string' || v.length < APART_CHARS) continue;
      if (content === undefined) content = c.slice();
      content[b] = f === 'text' ? { ...x, text: '' } : { ...x, content: '' };
      texts.push(v);
      slots.push(b + 1);
    }
    if (content === undefined) return m;
  } else return m;
  const copy = { ...carrier, content };
  return inner ? { ...m, message: copy } : copy;
}

// A copy of the input object of tool use block `b` with its long string fields left as "",
// the strings and their places pushed to `texts` / `slots` (place b + 1 + (k + 1) * 2^21 for
// the field that is the input's k-th in its JSON text); undefined when it has none. Only a
// plain object none of whose fields has a toJSON (which could leave it out of the text) is
// taken; its fields are read once, into the copy that is then written. 2097152 is 2^21.
function inputApart(input, b, texts, slots) {
  if (input === null || typeof input !== 'object' || Array.isArray(input) || typeof input.toJSON === 'function') return;
  const copy = { ...input };
  const from = texts.length;
  let k = 0;
  let found;
  for (const key of Object.keys(copy)) {
    const v = copy[key];
    const type = typeof v;
    // What JSON.stringify leaves out does not count in the text's fields.
    if (v === undefined || type === 'function' || type === 'symbol') continue;
    if (typeof v?.toJSON === 'function') {
      texts.length = slots.length = from;
      return;
    }
    if (type === 'string' && v.length >= APART_CHARS && k < 2047) {
      texts.push(v);
      slots.push(b + 1 + (k + 1) * 2097152);
      copy[key] = '';
      found = copy;
    }
    k++;
  }
  return found;
}

setApartWriter(withApart);

// What a `Compactor` holds of its options (its callbacks: summarize, hooks, onProgress…). Held
// strongly in WASM, they would be a GC root: a callback that refers back to its Compactor (a
// class holding both, `summarize: (r) => this.call(r)`) would keep it alive for good, its
// finalizer never run, its messages never freed. So WASM holds them weakly, and the JS object
// of the Compactor strongly (the glue's `__ccKept`): they live exactly as long as it does.
// (Without WeakRef, strongly.)
const weakRefs = typeof WeakRef === 'function';
export function weakly(v) {
  return weakRefs && Object(v) === v ? new WeakRef(v) : v;
}
export function strongly(h) {
  return weakRefs && h instanceof WeakRef ? h.deref() : h;
}
