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

// A compaction's own copy of the caller's messages array (the same message objects), taken
// when it is called: what the callbacks do to the array afterwards (clear it, reverse it) does
// not change what the result keeps. The array itself when it is not one, is longer than `max`
// (the reading refuses it) or copying it throws (the reading reports it).
export function heldCopy(v, max) {
  try {
    return Array.isArray(v) && v.length <= max ? Array.prototype.slice.call(v) : v;
  } catch (e) {
    return v;
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
    const read = readFields(inner);
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
// usage as their fields where one of them has a toJSON (see asRead); `o` itself otherwise.
function readFields(o) {
  let out = hasToJson(o) ? fieldsOf(o) : o;
  const c = o.content;
  if (Array.isArray(c)) {
    let copy;
    if (typeof c.toJSON === 'function') copy = c.slice();
    for (let b = 0; b < c.length; b++) {
      if (hasToJson(c[b])) (copy ??= c.slice())[b] = fieldsOf(c[b]);
    }
    if (copy !== undefined) (out === o ? (out = { ...o }) : out).content = copy;
  }
  if (hasToJson(o.usage)) (out === o ? (out = { ...o }) : out).usage = fieldsOf(o.usage);
  return out;
}

// JSON text of message `m`, without the fields nothing reads (`omit`, an array, or undefined
// to write it whole). Which messages are read whole is decided in Rust (convert.rs). Throws
// what JSON.stringify throws (the caller catches it). A `toJSON` of the objects the count reads
// field by field is not honoured (asRead).
function jsonOf(m, omit) {
  m = asRead(m);
  // A shallow copy of its own enumerable keys in their order, as JSON.stringify would write
  // them, when `m` has a field to leave out.
  if (m === null || typeof m !== 'object' || omit === undefined || !omit.some((k) => Object.hasOwn(m, k))) return JSON.stringify(m);
  const o = {};
  for (const k of Object.keys(m)) if (!omit.includes(k)) o[k] = m[k];
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
// own (setAside / putBack below, called by the glue's guard around every call with js_view's
// enterPackage / leavePackage), so it never overwrites the bytes the outer call is filling.
let batchBytes = new Uint8Array(1 << 16);

/**
 * For a call into the package made while another is running: sets this file's state aside
 * (the batch buffer, the error not yet taken) and starts the nested call with fresh state.
 * Returns what `putBack` restores when the nested call returns.
 */
export function setAside() {
  const saved = [batchBytes, convertError];
  batchBytes = new Uint8Array(0);
  convertError = undefined;
  return saved;
}

/** Restores the state `setAside` returned. */
export function putBack(saved) {
  [batchBytes, convertError] = saved;
}

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

// From this length a string of a message's content is sent apart.
const APART_CHARS = 64;
const isOwnEnumerable = (o, k) => Object.prototype.propertyIsEnumerable.call(o, k);

// `m` to be written as JSON with the long strings of its content taken out (left as ""), the
// strings and their places pushed to `texts` / `slots` (the caller's own arrays: a getter may
// call the package again while they are filled), or `m` itself when it has none.
// The content is `m.message.content` when `m` has its own `message` object, else `m.content`;
// a place is 0 for a string content, b + 1 for the `text` of text block b or the string
// `content` of tool result b. Only own enumerable data that JSON.stringify would write as
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

// The UTF-8 JSON texts of messages start, start + 1, … of `arr`, one after another in one
// reused buffer: message start + k with the key lists its class `classes[k]` says (0: `omit`
// left out, 1: only `keys`; a value that is not an object as it is). TextEncoder writes each
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
      text = c === 1 ? pickedText(m, keys)
        : jsonOf(c === 0 && apart && sendingApart ? withApart(m, texts, slots) : m, c === 0 ? omit : undefined);
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
  let eol = '\n';
  for (let i = 0; i < count; i++) {
    const m = list[i];
    let t = JSON.stringify(m);
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
    const src = typeof t === 'string' && m !== null && typeof m === 'object' ? m[LINE] : undefined;
    if (src !== undefined && src !== null && typeof src.text === 'string') {
      // A line parseTranscript read: as it was read when its value is unchanged, with its
      // own line ending (no ending only for the last line written).
      if (i === 0 && src.bom === true) lines += '\ufeff';
      t = lineText(m, t, src.text);
      // A line's own ending; the file's last line may have none: it takes the ending of
      // the lines before (every line written ends with one).
      if (src.eol !== '') eol = src.eol;
      lines += t;
      lines += eol;
      continue;
    }
    lines += t;
    lines += eol;
  }
  return [lines, heads];
}

// Where parseTranscript keeps, on each line object it returns, the text the line was read
// from: a non-enumerable property under a registered symbol (JSON.stringify, spreading,
// Object.keys and deep equality do not see it; js_view.js carries it to the copies the
// library's edits make). `{text, eol, bom}`: the line's text without its line ending, the
// ending (`\n`, `\r\n`, or `''` for a last line without one), and whether a byte-order mark
// preceded it. Each object holds a slice of the file's text: the text stays in memory as long
// as the lines do.
const LINE = Symbol.for('context-compaction.transcriptLine');

// Keeps the text of each parsed line on its object (`values[k]` was parsed from
// `lines[k]`, the pieces of the file's text split at `\n`; `bom`: the first piece began with a
// byte-order mark, which was taken off before parsing).
export function rememberLines(values, lines, bom) {
  const n = lines.length;
  for (let k = 0; k < values.length; k++) {
    let text = lines[k];
    const last = k === n - 1;
    let eol = last ? '' : '\n';
    if (!last && text.length > 0 && text.charCodeAt(text.length - 1) === 13) {
      text = text.slice(0, -1);
      eol = '\r\n';
    }
    if (k === 0 && bom) text = text.slice(1);
    const src = { text, eol, bom: k === 0 && bom };
    try {
      Object.defineProperty(values[k], LINE, { value: src, configurable: true, writable: true });
    } catch {
      // A frozen object cannot happen here (JSON.parse made it); nothing to keep otherwise.
    }
  }
}

// The text of line object `m` (`current` = JSON.stringify(m)), read from `text`: `text` itself
// when the line's value has not changed (what it reads back to is what the object writes),
// otherwise `current` with every number whose text JSON.stringify would change (a big
// integer, 1e400, 1.0, -0) written as it was read, where the same number still sits at the
// same place.
function lineText(m, current, text) {
  if (current === text) return text;
  let again;
  try {
    again = JSON.stringify(JSON.parse(text));
  } catch {
    return current;
  }
  if (again === current) return text;
  const kept = numberTexts(text);
  if (kept.size === 0) return current;
  let nonce;
  do nonce = Math.random().toString(36).slice(2); while (current.includes(nonce) || text.includes(nonce));
  const held = [];
  const pathOf = new Map();
  const out = JSON.stringify(m, function (key, value) {
    const path = this === undefined || !pathOf.has(this) ? (key === '' ? '' : undefined) : pathOf.get(this) + '\u0000' + key;
    if (path === undefined) return value;
    if (value !== null && typeof value === 'object') pathOf.set(value, path);
    else if (typeof value === 'number') {
      const t = kept.get(path);
      if (t !== undefined && Object.is(Number(t), value)) {
        held.push(t);
        return `\u0001${nonce}#${held.length - 1}`;
      }
    }
    return value;
  });
  if (held.length === 0) return out;
  return out.replace(new RegExp(`"\\\\u0001${nonce}#(\\d+)"`, 'g'), (_, i) => held[Number(i)]);
}

// The numbers of JSON `text` whose text JSON.stringify would not write back (by their path:
// the keys and indices from the top, each preceded by a NUL character).
function numberTexts(text) {
  const out = new Map();
  const stack = []; // frames: [path, isArray, nextIndex, pendingKey]
  let path = '';
  const NUM = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const STR = /"(?:[^"\\]|\\.)*"/y;
  let expectKey = false;
  let key;
  const here = () => {
    const f = stack[stack.length - 1];
    if (f === undefined) return '';
    if (f[1]) return f[0] + '\u0000' + String(f[2]++);
    return f[0] + '\u0000' + key;
  };
  for (let i = 0; i < text.length; ) {
    const c = text[i];
    if (c === '{' || c === '[') {
      path = here();
      stack.push([path, c === '[', 0]);
      expectKey = c === '{';
      i++;
    } else if (c === '}' || c === ']') {
      stack.pop();
      i++;
    } else if (c === '"') {
      STR.lastIndex = i;
      const s = STR.exec(text);
      if (s === null) return out;
      i = STR.lastIndex;
      if (expectKey) {
        key = JSON.parse(s[0]);
        expectKey = false;
      } else here();
    } else if (c === ',') {
      const f = stack[stack.length - 1];
      expectKey = f !== undefined && !f[1];
      i++;
    } else if (c === '-' || (c >= '0' && c <= '9')) {
      NUM.lastIndex = i;
      const s = NUM.exec(text);
      if (s === null) return out;
      i = NUM.lastIndex;
      const p = here();
      if (JSON.stringify(Number(s[0])) !== s[0]) out.set(p, s[0]);
    } else if (c === 't' || c === 'n') {
      here();
      i += 4;
    } else if (c === 'f') {
      here();
      i += 5;
    } else i++; // `:` and whitespace
  }
  return out;
}

// The links of every element of `arr` as a transcript line, 4 numbers each: flags (1 has a
// string `uuid`, 2 `isSidechain: true`, 4 a `user` or `assistant` line, 8 a user line holding
// a `tool_result` for a `tool_use` of its anchor line, 16 an assistant line with the same
// `message.id` as its anchor line, 32 an `attachment` line, 64 a `compact_boundary` system
// line), where its `parentUuid` and its
// `logicalParentUuid` point
// (the index of the first element carrying that uuid; -1 for none: `parentUuid: null`, a
// `logicalParentUuid` that is not a string; -2 for a uuid no element carries; -3 for a
// `parentUuid` that is neither a string nor null), and its anchor: the nearest element above
// it by `parentUuid` that is not a progress line (-1 for none). What these mean is decided in
// Rust (transforms/transcript.rs). Null when reading an element throws (the lines are then
// read in file order).
export function chainLinks(arr) {
  try {
    const n = arr.length;
    const at = new Map();
    const lines = new Array(n);
    for (let i = 0; i < n; i++) {
      const m = arr[i];
      lines[i] = m !== null && typeof m === 'object' ? m : null;
      const u = lines[i] === null ? undefined : m.uuid;
      if (typeof u === 'string' && !at.has(u)) at.set(u, i);
    }
    const ref = (v) => (typeof v !== 'string' ? -1 : at.has(v) ? at.get(v) : -2);
    const parents = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const m = lines[i];
      const pu = m === null ? null : m.parentUuid;
      parents[i] = pu === null ? -1 : typeof pu === 'string' ? ref(pu) : -3;
    }
    const anchorOf = (i) => {
      let p = parents[i];
      for (let steps = 0; p >= 0 && steps < n; steps++) {
        const up = lines[p];
        if (up === null || up.type !== 'progress') return p;
        p = parents[p];
      }
      return -1;
    };
    const blocks = (m) => {
      const inner = m.message;
      const c = inner !== null && typeof inner === 'object' ? inner.content : undefined;
      return Array.isArray(c) ? c : [];
    };
    const idOf = (m) => {
      const inner = m.message;
      return inner !== null && typeof inner === 'object' && typeof inner.id === 'string' ? inner.id : undefined;
    };
    // Whether user line `m` answers a tool call of line `p`.
    const answers = (m, p) => {
      if (p === null || p.type !== 'assistant') return false;
      const ids = new Set();
      for (const b of blocks(p)) if (b !== null && typeof b === 'object' && b.type === 'tool_use') ids.add(b.id);
      if (ids.size === 0) return false;
      for (const b of blocks(m)) if (b !== null && typeof b === 'object' && b.type === 'tool_result' && ids.has(b.tool_use_id)) return true;
      return false;
    };
    // Whether assistant line `m` and line `p` are lines of one response.
    const sameResponse = (m, p) => p !== null && p.type === 'assistant' && idOf(m) !== undefined && idOf(m) === idOf(p);
    const out = new Int32Array(4 * n);
    for (let i = 0; i < n; i++) {
      const m = lines[i];
      if (m === null) {
        out[4 * i + 1] = -1;
        out[4 * i + 2] = -1;
        out[4 * i + 3] = -1;
        continue;
      }
      const t = m.type;
      const anchor = anchorOf(i);
      const up = anchor >= 0 ? lines[anchor] : null;
      out[4 * i] = (typeof m.uuid === 'string' ? 1 : 0) | (m.isSidechain === true ? 2 : 0) |
        (t === 'user' || t === 'assistant' ? 4 : 0) |
        (t === 'user' && answers(m, up) ? 8 : 0) |
        (t === 'assistant' && sameResponse(m, up) ? 16 : 0) |
        (t === 'attachment' ? 32 : 0) |
        (t === 'system' && m.subtype === 'compact_boundary' ? 64 : 0);
      out[4 * i + 1] = parents[i];
      out[4 * i + 2] = ref(m.logicalParentUuid);
      out[4 * i + 3] = anchor;
    }
    return out;
  } catch {
    return null;
  }
}
