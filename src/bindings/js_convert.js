// Helpers of the conversions of src/bindings/convert.rs that are shorter in JS than
// through Reflect. No decisions are made here. Each catches what the caller's objects throw
// (a Proxy's traps, a getter): nothing thrown crosses into WebAssembly; the error is kept
// for the Rust side (`takeConvertError`), which reports it with the original as the cause.

let convertError;

function failed(e) {
  if (convertError === undefined) convertError = e === undefined ? new Error('undefined was thrown') : e;
  return null;
}

/** The error the last guarded read kept (undefined when none); reading clears it. */
export function takeConvertError() {
  const e = convertError;
  convertError = undefined;
  return e;
}

// Entries of a Map, a plain object, or an array of {path, …} records, as [key, value] pairs;
// null for anything else or when reading throws.
export function entriesOf(v) {
  try {
    if (v === null || v === undefined) return [];
    if (v instanceof Map) return Array.from(v.entries());
    if (Array.isArray(v)) return v.map((x) => [x && typeof x === 'object' ? (x.path ?? x.name) : x, x]);
    if (typeof v === 'object') return Object.entries(v);
    return null;
  } catch (e) {
    return failed(e);
  }
}

// The own enumerable string keys of an object; null when reading throws.
export function keysOf(v) {
  try {
    return Object.keys(v);
  } catch (e) {
    return failed(e);
  }
}

// The elements of an array (a copy), undefined for a non-array; null when reading throws.
export function itemsOf(v) {
  try {
    return Array.isArray(v) ? Array.from(v) : undefined;
  } catch (e) {
    return failed(e);
  }
}

// Array.isArray, false when it throws (a revoked Proxy).
export function isArray(v) {
  try {
    return Array.isArray(v);
  } catch (e) {
    failed(e);
    return false;
  }
}

// JSON text of an options object where a number that JSON cannot hold (NaN, ±Infinity)
// becomes its name as a string, so that the typed reading rejects it instead of reading null;
// undefined when writing throws (a cycle, a BigInt, a throwing getter: kept as above).
export function strictJson(v) {
  try {
    return JSON.stringify(v, (_, x) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
  } catch (e) {
    failed(e);
    return undefined;
  }
}

// Whether `v` nests objects and arrays more than `limit` levels deep (`v` itself is level 1),
// without recursion; false when reading it throws (the caller reports that separately).
export function deeperThan(v, limit) {
  try {
    const stack = [v, 1];
    while (stack.length > 0) {
      const depth = stack.pop();
      const x = stack.pop();
      if (depth > limit) return true;
      const items = Array.isArray(x) ? x : Object.values(x);
      for (const c of items) if (c !== null && typeof c === 'object') stack.push(c, depth + 1);
    }
    return false;
  } catch (e) {
    failed(e);
    return false;
  }
}

// JSON text of message `m`; when `keys` is an array, of a new object with only those of its
// fields that are not undefined (a field whose getter throws is left out, as if absent). Which
// messages are read whole and which keys are kept is decided in Rust (convert.rs). Throws what
// JSON.stringify throws (the caller catches it).
export function jsonOf(m, keys, omit) {
  if (keys === undefined) {
    // Without the fields nothing reads (`omit`), when `m` has one: a shallow copy of its own
    // enumerable keys in their order, as JSON.stringify would write them. An object with its
    // own toJSON is written as it says.
    if (omit === undefined || typeof m.toJSON === 'function' || !omit.some((k) => Object.hasOwn(m, k))) return JSON.stringify(m);
    const o = {};
    for (const k of Object.keys(m)) if (!omit.includes(k)) o[k] = m[k];
    return JSON.stringify(o);
  }
  const o = {};
  for (const k of keys) {
    let v;
    try {
      v = m[k];
    } catch {
      continue;
    }
    if (v !== undefined) o[k] = v;
  }
  return JSON.stringify(o);
}

const encoder = new TextEncoder();
// A reused buffer for jsonBytes (at most KEPT_BYTES are kept between calls).
const KEPT_BYTES = 1 << 22;
let scratch = new Uint8Array(1 << 16);

// The UTF-8 bytes of jsonOf(m, keys) as a view of a reused buffer, valid until the next call
// (the Rust side copies them at once); null when JSON.stringify gives no text. TextEncoder
// writes the text in one native pass (JSON.stringify has already escaped lone surrogates).
export function jsonBytes(m, keys, omit) {
  const text = jsonOf(m, keys, omit);
  if (typeof text !== 'string') return null;
  const need = text.length * 3;
  let buf = scratch;
  if (buf.length < need) {
    buf = new Uint8Array(Math.max(need, 2 * buf.length));
    if (buf.length <= KEPT_BYTES) scratch = buf;
  }
  const { written } = encoder.encodeInto(text, buf);
  return buf.subarray(0, written);
}

// `type`, `role` and `subtype` of messages [start, end) of `arr`, as the JSON text of one
// [type, role, subtype] triple per message (null for a field that is not a string, or whose
// getter throws; null for an element that is not an object); null when
// reading an element throws (the caller then reads message by message). What is read of each
// message is decided in Rust from these.
export function headsOf(arr, start, end) {
  const out = [];
  try {
    for (let i = start; i < end; i++) {
      const m = arr[i];
      if (m === null || typeof m !== 'object') {
        out.push(null);
        continue;
      }
      const field = (k) => {
        try {
          const v = m[k];
          return typeof v === 'string' ? v : null;
        } catch {
          return null;
        }
      };
      out.push([field('type'), field('role'), field('subtype')]);
    }
  } catch {
    return null;
  }
  return JSON.stringify(out);
}

let batchBytes = new Uint8Array(1 << 16);

// Whether jsonBatch writes anything: tests switch it off to compare with the messages read
// one by one (tests/node/read-batch.test.mjs imports this module from the package's snippets).
let batching = true;
export function setReadBatch(on) {
  batching = on === true;
}

// The UTF-8 JSON texts of messages start, start + 1, … of `arr`, one after another in one
// reused buffer, as jsonBytes writes each: message start + k with the key lists its class
// `classes[k]` says (0: `omit` left out, 1: only `keys`, 2: as it is). Stops before the
// first message that cannot be written (its getter or JSON.stringify throws, or it gives no
// text: the caller reads that one alone and reports it), at the end of `classes`, or once
// `maxBytes` are written. Returns [count, bytes, ends]: `ends[k]` is where message
// start + k's text ends in `bytes` (views valid until the next call).
export function jsonBatch(arr, start, classes, keys, omit, maxBytes) {
  if (!batching) return [0, new Uint8Array(0), new Uint32Array(0)];
  const ends = new Uint32Array(classes.length);
  let at = 0;
  let n = 0;
  for (; n < classes.length && (n === 0 || at < maxBytes); n++) {
    let text;
    try {
      const m = arr[start + n];
      const c = classes[n];
      text = jsonOf(m, c === 1 ? keys : undefined, c === 0 ? omit : undefined);
    } catch {
      break;
    }
    if (typeof text !== 'string') break;
    const need = at + text.length * 3;
    if (batchBytes.length < need) {
      const grown = new Uint8Array(Math.max(need, 2 * batchBytes.length));
      grown.set(batchBytes.subarray(0, at));
      batchBytes = grown;
    }
    at += encoder.encodeInto(text, batchBytes.subarray(at)).written;
    ends[n] = at;
  }
  const bytes = batchBytes.subarray(0, at);
  if (batchBytes.length > KEPT_BYTES) batchBytes = new Uint8Array(1 << 16);
  return [n, bytes, ends.subarray(0, n)];
}

// JSON.stringify of every message of the array `list` (its first `count` elements), as
// [lines, heads]: `lines` is every text followed by a newline (concatenated as `+=` does),
// `heads` a Uint8Array holding, per message, the character code of the first character of its
// text when the message is an object (not an array) whose text is a non-empty string starting
// with an ASCII character (`{` for a plain object without toJSON, which writes as one),
// otherwise 0. What is a valid line is decided in Rust (exports.rs).
// Throws what reading an element or JSON.stringify throws (the caller then takes its
// message-by-message path).
export function jsonLines(list, count) {
  const heads = new Uint8Array(count);
  let lines = '';
  for (let i = 0; i < count; i++) {
    const m = list[i];
    const t = JSON.stringify(m);
    if (typeof t === 'string' && m !== null && typeof m === 'object' && !Array.isArray(m)) {
      const p = Object.getPrototypeOf(m);
      // A plain object without toJSON is written as an object, `{` first: known without
      // reading the text (the engine may hold a non-ASCII one as a rope, which reading a
      // character would copy whole).
      if ((p === Object.prototype || p === null) && m.toJSON === undefined) heads[i] = 123;
      else if (t.length > 0) {
        const c = t.charCodeAt(0);
        if (c < 128) heads[i] = c;
      }
    }
    lines += t;
    lines += '\n';
  }
  return [lines, heads];
}
