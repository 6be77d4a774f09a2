// The conversions of src/bindings/convert.rs that read a whole message or argument in JS:
// entries, copies, JSON texts and the batches of messages' UTF-8 JSON. A file apart from
// js_convert.js (whose guarded reads the counting module also uses): the count entry's page
// never loads it. Each catches what the caller's objects throw; the error is kept in
// js_convert.js (`failed`) for the Rust side, which reports it with the original as the cause.
import { failed } from './js_convert.js';
import { setAsideToo } from './js_view.js';

// Entries of a Map, a plain object, or an array of {path, …} records, as [key, value] pairs;
// null for anything else or when reading throws. Every element of the result is a pair: a
// hole of the caller's array reads as `undefined` (Array.from, not map, which keeps holes that
// the Rust side would read as `undefined` pairs), like an element that is `undefined`.
export function entriesOf(v) {
  try {
    if (v === null || v === undefined) return [];
    let e;
    if (v instanceof Map) e = Array.from(v.entries());
    else if (Array.isArray(v)) {
      // Longer than any list of files (a sparse array: Array.from of 2^32 − 1 ran Node out of
      // memory; past 10^7 the pairs passed the externref table and trapped).
      if (v.length > 1 << 20) throw new RangeError(`an array of ${v.length} records (a sparse array?)`);
      e = Array.from(v, (x) => [x && typeof x === 'object' ? (x.path ?? x.name) : x, x]);
    } else if (typeof v === 'object') e = Object.entries(v);
    else return null;
    SEEN_ENTRIES.set(v, e.map(([k, x]) => [k, x, stateKey(x)]));
    return e;
  } catch (e) {
    return failed(e);
  }
}

// The entries entriesOf read last from each object, as [key, value, stateKey(value)] (a
// compaction reads the caller's `readFileState` when it starts and takes them, js_env.js
// seenOf): js_env.js `clearStates` deletes only those after the compaction succeeds, so what
// the agent read or re-read meanwhile stays.
export const SEEN_ENTRIES = new WeakMap();

// What a file state object holds: [content, time], as strings, when it was read (an entry
// changed in place since, `Object.assign(entry, newRead)`, no longer holds them). The content
// is the string the entry holds, never a copy (no key is built from it: compared with ===, the
// same string is equal at once). undefined for anything else, or when reading it throws.
export function stateKey(x) {
  if (x === null || typeof x !== 'object') return undefined;
  try {
    const c = x.content;
    return [typeof c === 'string' ? c : String(c), String(x.timestamp ?? x.mtime)];
  } catch {
    return undefined;
  }
}

// Whether two stateKey results hold the same content and time.
export function sameState(a, b) {
  return a !== undefined && b !== undefined && a[1] === b[1] && a[0] === b[0];
}

// A compaction's own copy of the caller's messages array (the same message objects), taken
// when it is called: what the callbacks do to the array afterwards (clear it, reverse it) does
// not change what the result keeps. The array itself when it is not one, is longer than `max`
// (the reading refuses it) or copying it throws (the reading reports it).
export function heldCopy(v, max) {
  try {
    return Array.isArray(v) && v.length <= max ? plainSlice(v, 0, v.length) : v;
  } catch (e) {
    return v;
  }
}

// A new plain Array of the elements arr[start..end) (holes read as undefined), however the
// caller's array was made: Array.prototype.slice makes its result with the array's
// `constructor[Symbol.species]`, which an Array subclass may make throw or give a non-array.
export function plainSlice(arr, start, end) {
  const out = new Array(Math.max(0, end - start));
  for (let i = start; i < end; i++) out[i - start] = arr[i];
  return out;
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

// JSON.stringify(v) (undefined when `v` has no JSON form), or null, which it never returns,
// when it throws (a cycle, a BigInt, a throwing getter or toJSON: kept as above); and
// JSON.parse(text), or undefined, which it never returns, when the text is not JSON. Not
// js-sys's JSON: its imports are `catch`, and the glue leaks an externref table slot (and
// WASM memory) on every throw of such an import.
export function jsonCaught(v) {
  try {
    return JSON.stringify(v);
  } catch (e) {
    return failed(e);
  }
}

export function parseCaught(text) {
  try {
    return JSON.parse(text);
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

// Whether string `s` holds a lone UTF-16 surrogate (in a `u` regex a pair is one code point,
// never matched by the class).
const LONE = /[\ud800-\udfff]/u;
const wellFormed = typeof ''.isWellFormed === 'function' ? (s) => s.isWellFormed() : (s) => !LONE.test(s);

// The indexes of the messages of `arr` holding a string (a value or a key, at any depth) with
// a lone UTF-16 surrogate, which the JSON text `JSON.stringify` writes of them keeps as an
// unpaired `\ud800` escape; what crosses into Rust holds U+FFFD in its place. Read without
// recursion, each object once; a message whose reading throws is left out (reading it for
// the view reported that already).
export function loneSurrogates(arr) {
  const out = [];
  try {
    for (let i = 0, n = arr.length; i < n; i++) {
      try {
        if (holdsLone(arr[i])) out.push(i);
      } catch {
        // Left out: see above.
      }
    }
  } catch {
    // Left out: see above.
  }
  return new Uint32Array(out);
}

function holdsLone(v) {
  const stack = [v];
  const seen = new Set();
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === 'string') {
      if (!wellFormed(x)) return true;
      continue;
    }
    if (x === null || typeof x !== 'object' || ArrayBuffer.isView(x) || seen.has(x)) continue;
    seen.add(x);
    if (Array.isArray(x)) {
      for (let k = 0; k < x.length; k++) stack.push(x[k]);
      continue;
    }
    for (const k of Object.keys(x)) {
      if (!wellFormed(k)) return true;
      stack.push(x[k]);
    }
  }
  return false;
}

// The own enumerable fields of `o` but a `toJSON`, in their order.
function fieldsOf(o) {
  const c = {};
  for (const k of Object.keys(o)) if (k !== 'toJSON') c[k] = o[k];
  return c;
}

const hasToJson = (o) => o !== null && typeof o === 'object' && typeof o.toJSON === 'function';

// Message `m` as the count reads it (its properties), for JSON.stringify: where a `toJSON`
// would make JSON.stringify write something else — on the message, its transcript `message`,
// its content array, a block of it or its usage, the objects the count reads field by field
// — a copy of their own enumerable fields instead (`m` itself when there is none). The count
// (tokenCountWithEstimation, a Compactor) and a compaction then read the same conversation;
// what the count measures as JSON (a tool's input, an unknown block) stays JSON's.
function asRead(m) {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return m;
  let out = m;
  const own = () => (out === m ? (out = hasToJson(m) ? fieldsOf(m) : { ...m }) : out);
  if (hasToJson(m)) own();
  const inner = m.message;
  if (inner !== null && typeof inner === 'object' && !Array.isArray(inner)) {
    const read = readFields(withInherited(inner, READ));
    if (read !== inner) own().message = read;
  } else {
    const read = readFields(m);
    if (read !== m) {
      if (read.content !== m.content) own().content = read.content;
      if (read.usage !== m.usage) own().usage = read.usage;
    }
  }
  return out;
}

// `o` (a message or a transcript line's `message`) with its content array, its blocks and its
// usage as their fields where one of them has a toJSON (see asRead) or fields it has only
// through its prototype (withInherited); `o` itself otherwise.
const readFields = (o) => partsOf(o, false);

// `o` with its content array, its blocks and its usage as they are read (partOf): `honour`
// (serializeTranscript) leaves what has a toJSON as it is, for JSON.stringify to call; else
// (the count's reading) each such object is its own fields. `o` itself when nothing changes.
function partsOf(o, honour) {
  let out = !honour && hasToJson(o) ? fieldsOf(o) : o;
  const c = o.content;
  if (Array.isArray(c) && !(honour && hasToJson(c))) {
    let copy;
    if (!honour && typeof c.toJSON === 'function') copy = c.slice();
    for (let b = 0; b < c.length; b++) {
      const x = c[b];
      const read = partOf(x, READ_BLOCK, honour);
      if (read !== x) (copy ??= c.slice())[b] = read;
    }
    if (copy !== undefined) (out === o ? (out = { ...o }) : out).content = copy;
  }
  const u = o.usage;
  const usage = partOf(u, READ_USAGE, honour);
  if (usage !== u) (out === o ? (out = { ...o }) : out).usage = usage;
  return out;
}

// A block or usage `x` as read: with the fields of `keys` it has only through its prototype
// (withInherited); one with a toJSON as it is (`honour`) or as its own fields.
function partOf(x, keys, honour) {
  if (honour && hasToJson(x)) return x;
  const read = withInherited(x, keys);
  return read === x && hasToJson(x) ? fieldsOf(x) : read;
}

// The fields of a message, of a block or part of its content and of its usage that the count
// reads (js_view.js, js_index.js) by name, whichever its shape.
const READ = ['type', 'role', 'content', 'message', 'usage', 'id', 'name', 'parts', 'tool_calls',
  'tool_call_id', 'function_call', 'call_id', 'refusal', 'uuid', 'parentUuid', 'logicalParentUuid',
  'isSidechain', 'subtype', 'input', 'output', 'arguments', 'encrypted_content', 'reasoning_content',
  'reasoning', 'summary', 'attachment', 'compactMetadata', 'isMeta', 'isCompactSummary', 'timestamp',
  'lc', 'lc_namespace', 'kwargs'];
const READ_BLOCK = ['type', 'text', 'id', 'name', 'input', 'tool_use_id', 'content', 'is_error',
  'source', 'thinking', 'signature', 'data', 'toolCallId', 'toolName', 'output', 'result', 'args',
  'state', 'errorText', 'approval', 'providerOptions', 'providerMetadata', 'providerExecuted',
  'encrypted_content', 'refusal', 'mediaType', 'mimeType', 'mime_type', 'file_data', 'url',
  'context', 'citations', 'cache_control'];
const READ_USAGE = ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens',
  'output_tokens', 'inputTokens', 'outputTokens', 'prompt_tokens', 'completion_tokens'];

// Object `o` (a message, a transcript line's `message`, a block, a usage) with the fields of `keys` it
// has only through its prototype (a class whose getters read its data, a Mongoose document)
// copied in, so that reading it whole sees what the count reads: JSON.stringify writes own
// fields alone, and such a message came out `{}` (refused by a compaction after the count and
// a Compactor's push had taken it). `o` itself when it has none (every plain object).
function withInherited(o, keys) {
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return o;
  try {
    const p = Object.getPrototypeOf(o);
    if (p === Object.prototype || p === null) return o;
    let out;
    for (const k of keys) {
      if (Object.prototype.hasOwnProperty.call(o, k) || !(k in o)) continue;
      const v = o[k];
      if (v === undefined || typeof v === 'function') continue;
      (out ??= hasToJson(o) ? fieldsOf(o) : { ...o })[k] = v;
    }
    return out ?? o;
  } catch {
    // A Proxy whose trap throws: read as JSON.stringify reads it, its own fields.
    return o;
  }
}

// Message `m` as serializeTranscript writes it: what JSON.stringify writes (a `toJSON` is
// honoured), but where the message, its transcript `message`, a content block or a usage
// has fields only through its prototype (withInherited), with those fields: such a message
// was written `{}`, its conversation lost from the file. `m` itself when there are none.
export function asWritten(m) {
  if (m === null || typeof m !== 'object' || Array.isArray(m) || hasToJson(m)) return m;
  const out = withInherited(m, READ);
  const inner = out.message;
  if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return partsOf(out, true);
  if (hasToJson(inner)) return out;
  const read = partsOf(withInherited(inner, READ), true);
  return read === inner ? out : { ...out, message: read };
}


// JSON text of message `m`, without the fields nothing reads (`omit`, a Set, or undefined
// to write it whole). Which messages are read whole is decided in Rust (convert.rs). Throws
// what JSON.stringify throws (the caller catches it). A `toJSON` of the objects the count reads
// field by field is not honoured (asRead).
function jsonOf(m, omit) {
  m = asRead(m);
  if (m === null || typeof m !== 'object' || omit === undefined) return JSON.stringify(m);
  // A shallow copy of its own enumerable keys in their order, as JSON.stringify would write
  // them, when `m` has a field to leave out (a key JSON.stringify does not write — not
  // enumerable — needs no copy either).
  const keys = Object.keys(m);
  let k = 0;
  while (k < keys.length && !omit.has(keys[k])) k++;
  if (k === keys.length) return JSON.stringify(m);
  const o = {};
  for (const key of keys) if (!omit.has(key)) o[key] = m[key];
  return JSON.stringify(o);
}

// Whether pickedText writes plain fields without JSON: tests switch it off to compare with the
// JSON of the same fields (tests/node/read-batch.test.mjs).
let picking = true;
export function setPickedFields(on) {
  picking = on === true;
}

// The text of the fields `keys` of a message whose payload is never read, each read once (a
// getter that throws counts as absent). When each is absent, a boolean or a string without
// U+001F, they are written without JSON: U+001F, then per key its tag and value followed by
// U+001F (`-` absent, `t` true, `f` false, `s` and the string); Rust reads them back in the
// keys' order (convert.rs, `Reading::message`). Otherwise the JSON of the object of those that
// are not undefined.
function pickedText(m, keys) {
  if (m === null || typeof m !== 'object') return JSON.stringify(m);
  const values = new Array(keys.length);
  let plain = true;
  for (let i = 0; i < keys.length; i++) {
    let v;
    try {
      v = m[keys[i]];
    } catch {
      v = undefined;
    }
    values[i] = v;
    if (v !== undefined && typeof v !== 'boolean' && (typeof v !== 'string' || v.includes('\u001f'))) plain = false;
  }
  if (!plain || !picking) {
    const o = {};
    for (let i = 0; i < keys.length; i++) if (values[i] !== undefined) o[keys[i]] = values[i];
    return JSON.stringify(o);
  }
  let out = '\u001f';
  for (const v of values) out += v === undefined ? '-\u001f' : v === true ? 't\u001f' : v === false ? 'f\u001f' : 's' + v + '\u001f';
  return out;
}

const encoder = new TextEncoder();
// The largest batch buffer kept between calls.
const KEPT_BYTES = 1 << 22;

// `type`, `role` and `subtype` of messages [start, end) of `arr`, as one string: per message
// (separated by U+001E) either U+0002 (not an object) or the three fields separated by
// U+001F, each the field's string or U+0000 (not a string, or its getter throws). It stops
// before an element whose reading throws or whose fields hold one of those separators (the
// caller reads that one whole). What is read of each message is decided in Rust from these.
const HEAD_SEPARATORS = /[\u0000\u0002\u001e\u001f]/;
export function headsOf(arr, start, end) {
  let out = '';
  for (let i = start; i < end; i++) {
    let head = '';
    try {
      const m = arr[i];
      if (m === null || typeof m !== 'object') head = '\u0002';
      else {
        for (let k = 0; k < 3; k++) {
          let v;
          try {
            v = m[k === 0 ? 'type' : k === 1 ? 'role' : 'subtype'];
          } catch {
            v = undefined;
          }
          if (k > 0) head += '\u001f';
          if (typeof v !== 'string') head += '\u0000';
          else if (HEAD_SEPARATORS.test(v)) return out;
          else head += v;
        }
      }
    } catch {
      return out;
    }
    out += i > start ? '\u001e' + head : head;
  }
  return out;
}

// The buffer jsonBatch writes into, reused from call to call. A getter or toJSON of a message
// may call the package while a batch is written: that nested call works with a buffer of its
// own (set aside here through js_view.js's setAsideToo, which the glue's guard runs around
// every nested call), so it never overwrites the bytes the outer call is filling.
let batchBytes = new Uint8Array(1 << 16);
setAsideToo(() => {
  const saved = batchBytes;
  batchBytes = new Uint8Array(0);
  return () => {
    batchBytes = saved;
  };
});

// Whether jsonBatch writes more than one message per call: tests switch batches off to
// compare with the messages read one by one (tests/node/read-batch.test.mjs imports this
// module from the package's snippets).
let batching = true;
export function setReadBatch(on) {
  batching = on === true;
}

// Whether jsonBatch may send long strings apart (withApart): tests switch it off to compare
// with the messages written as JSON whole (tests/node/read-batch.test.mjs).
let sendingApart = true;
export function setApartTexts(on) {
  sendingApart = on === true;
}

// What sends the long strings of a message apart (withApart, in js_env.js: the counting
// module's page, which never writes a batch, does not load it); set when js_env.js loads.
// Without it every message is written as JSON whole.
let apartWriter;
export function setApartWriter(f) {
  apartWriter = f;
}

// The UTF-8 JSON texts of messages start, start + 1, … of `arr`, one after another in one
// reused buffer: message start + k with the keys its class `classes[k]` says (0: the keys
// of the Set `omit` left out, 1: only the list `keys`; a value that is not an object as it
// is). TextEncoder writes each
// text in one native pass (JSON.stringify has already escaped lone surrogates). With `apart`,
// the long strings of a class-0 message's content follow its text, as UTF-8 as they are
// (withApart; TextEncoder writes a lone surrogate as U+FFFD, as Rust reads its escape). Stops
// at the end of `classes`, once `maxBytes` are written, or at the first message that cannot be
// written. Returns [count, bytes, ends, stop, apart]: `ends[k]` is where message start + k's
// text and its strings end in `bytes` (views valid until the next call); `stop` says why
// message start + count was not written: 0 it was not asked for, 1 reading it threw, 2
// JSON.stringify threw, 3 it has no JSON text (the error thrown is kept for
// takeConvertError); `apart` holds per string sent apart its message k, its place and its
// length in bytes.
export function jsonBatch(arr, start, classes, keys, omit, maxBytes, apart) {
  const asked = batching ? classes.length : 1;
  const ends = new Uint32Array(asked);
  // Per string sent apart: its message, its place, its length in bytes; and the strings and
  // places of the message being written.
  const sent = [], texts = [], slots = [];
  let buf = batchBytes;
  let at = 0;
  let n = 0;
  let stop = 0;
  for (; n < asked && (n === 0 || at < maxBytes); n++) {
    let m;
    try {
      m = arr[start + n];
    } catch (e) {
      failed(e);
      stop = 1;
      break;
    }
    let text;
    texts.length = 0;
    slots.length = 0;
    try {
      const c = classes[n];
      if (c !== 1) m = withInherited(m, READ);
      text = c === 1 ? pickedText(m, keys)
        : jsonOf(c === 0 && apart && sendingApart && apartWriter ? apartWriter(m, texts, slots) : m, c === 0 ? omit : undefined);
    } catch (e) {
      failed(e);
      stop = 2;
      break;
    }
    if (typeof text !== 'string') {
      stop = 3;
      break;
    }
    let chars = text.length;
    for (const t of texts) chars += t.length;
    const need = at + chars * 3;
    if (buf.length < need) {
      const grown = new Uint8Array(Math.max(need, 2 * buf.length));
      grown.set(buf.subarray(0, at));
      buf = batchBytes = grown;
    }
    at += encoder.encodeInto(text, buf.subarray(at)).written;
    for (let s = 0; s < texts.length; s++) {
      const written = encoder.encodeInto(texts[s], buf.subarray(at)).written;
      at += written;
      sent.push(n, slots[s], written);
    }
    ends[n] = at;
  }
  const bytes = buf.subarray(0, at);
  if (batchBytes.length > KEPT_BYTES) batchBytes = new Uint8Array(1 << 16);
  return [n, bytes, ends.subarray(0, n), stop, new Uint32Array(sent)];
}
