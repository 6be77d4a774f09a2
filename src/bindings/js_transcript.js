// What the transcript functions need from JavaScript: serializeTranscript's writing of the
// lines (jsonLines) and parseTranscript's memory of the text each line was read from
// (rememberLines). A file of its own, apart from js_convert.js, so that the counting module
// of `context-compaction/count`, which reads no transcript file, does not download it. (The
// parentUuid links of a session file, which counts read too, are js_view.js's chainLinks.)

import { asWritten } from './js_batch.js';
import { linked, linkState } from './js_view.js';

// What the last failed parseLine, stringifyMessage or jsonLines threw: its message (see
// takeFailure).
let failure = 'unparseable';

function failed(e) {
  const m = e instanceof Error ? e.message : undefined;
  failure = typeof m === 'string' ? m : 'unparseable';
}

// The helpers below catch what they call throws and report it by a value the call cannot
// otherwise return, instead of throwing into WebAssembly: wasm-bindgen's glue leaks one
// externref table slot per throw of an import returning a value (exports.rs).

// JSON.parse(text), or undefined (which JSON.parse never returns) when it throws.
export function parseLine(text) {
  try {
    return JSON.parse(text);
  } catch (e) {
    failed(e);
    return undefined;
  }
}

// JSON.stringify(value), or null (which JSON.stringify never returns) when it throws.
export function stringifyMessage(value) {
  try {
    return JSON.stringify(asWritten(value));
  } catch (e) {
    failed(e);
    return null;
  }
}

// The message of what the last failed call above (or jsonLines) threw.
export function takeFailure() {
  const m = failure;
  failure = 'unparseable';
  return m;
}

// JSON.stringify of every message of the array `list` (its first `count` elements), as
// [lines, heads]: `lines` is every text followed by a newline (concatenated as `+=` does),
// `heads` a Uint8Array holding, per message, the character code of the first character of its
// text when the message is an object (not an array) whose text is a non-empty string starting
// with an ASCII character (`{` for a plain object without toJSON, which writes as one),
// otherwise 0. What is a valid line is decided in Rust (exports.rs).
// Undefined when reading an element or JSON.stringify throws (the caller then takes its
// message-by-message path); null when joining the lines does (longer than the engine's
// longest string: no path can write it).
let joining = false;
export function jsonLines(list, count) {
  joining = false;
  try {
    return linesOf(list, count);
  } catch (e) {
    failed(e);
    return joining ? null : undefined;
  }
}

function linesOf(list, count) {
  const heads = new Uint8Array(count);
  let lines = '';
  let eol = '\n';
  for (let i = 0; i < count; i++) {
    const m = list[i];
    let t = JSON.stringify(asWritten(m));
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
    const src = typeof t === 'string' && m !== null && typeof m === 'object' ? LINES.get(m) : undefined;
    if (src !== undefined && src !== null && typeof src.text === 'string') {
      // A line parseTranscript read: as it was read when its value is unchanged, with its
      // own line ending (no ending only for the last line written).
      if (i === 0 && src.bom === true) lines += '\ufeff';
      t = lineText(m, t, src.text);
      // A line's own ending; the file's last line may have none: it takes the ending of
      // the lines before (every line written ends with one).
      if (src.eol !== '') eol = src.eol;
      joining = true;
      lines += t;
      lines += eol;
      joining = false;
      continue;
    }
    joining = true;
    lines += t;
    lines += eol;
    joining = false;
  }
  return [lines, heads];
}

// Where parseTranscript keeps the text each line object it returns was read from: a WeakMap
// from the object, shared through the global symbol registry by every copy of these modules
// (js_view.js carries an entry to the copies the library's edits make). Not a property of the
// object: a symbol-keyed property, even non-enumerable, takes JSON.stringify off its fast path
// (about 1.5x slower on a real session's lines). `{text, eol, bom}`: the line's text without
// its line ending, the ending (`\n`, `\r\n`, or `''` for a last line without one), and whether
// a byte-order mark preceded it. Each entry holds a slice of the file's text: the text stays
// in memory as long as the lines do.
const LINES = (globalThis[Symbol.for('context-compaction.transcriptLines')] ??= new WeakMap());

// Keeps the text of each parsed line for its object (`values[k]` was parsed from
// `lines[k]`, the pieces of the file's text split at `\n`; `bom`: the first piece began with a
// byte-order mark, which was taken off before parsing).
export function rememberLines(values, lines, bom) {
  const n = lines.length;
  let ending = '\n';
  for (let k = 0; k < values.length; k++) {
    let text = lines[k];
    const last = k === n - 1;
    let eol = last ? '' : '\n';
    if (!last && text.length > 0 && text.charCodeAt(text.length - 1) === 13) {
      text = text.slice(0, -1);
      eol = '\r\n';
    }
    if (k === 0 && bom) text = text.slice(1);
    const v = values[k];
    // Kept only where JSON.stringify would not write the line back as it was read (spacing,
    // number spellings, escapes), where its ending differs from the line before's (jsonLines
    // writes a line with nothing kept with the ending of the one before; the first with `\n`),
    // or where a byte-order mark preceded it: a line written by JSON.stringify (every line
    // Claude Code writes) needs nothing kept, and serializeTranscript then writes it without
    // comparing texts.
    const newEnding = eol !== '' && eol !== ending;
    if (eol !== '') ending = eol;
    if (v !== null && typeof v === 'object' && (newEnding || (k === 0 && bom) || JSON.stringify(v) !== text)) {
      LINES.set(v, { text, eol, bom: k === 0 && bom });
    }
  }
}

// The text of line object `m` (`current` = JSON.stringify(m)), read from `text`: `text` itself
// when the line's value has not changed (what it reads back to is what the object writes),
// otherwise `current` with every number whose text JSON.stringify would change (a big
// integer, 1e400, 1.0, -0) written as it was read, where the same number still sits at the
// same place.
function lineText(m, current, text) {
  // The same characters: `current` is written (a slice of the file's text may be held as
  // two-byte characters where the file has any non-Latin-1 one, which makes the whole output
  // two-byte and its writing slower).
  if (current === text) return current;
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

// ---- A Compactor's pushes of Claude Code lines, along their parentUuid chain (SPEC §2) ----
// Whether a push leaves the conversation what file order says is told cheaply (js_view.js
// linked); when it may not, the Rust side reads the held lines' chain again (js_view.js
// chainLinks, transforms/transcript.rs conversation_mask). Here, apart from the counting
// module's files: only a Compactor pushes.

// A Compactor's pushes: the state it carries from one push to the next (`chainStep`).
export function chainState() {
  return linkState(false, new Set());
}

// Reads the lines of `arr` pushed after those `s` (chainState) has read (with `restart`, `s`
// starts afresh: `arr` is the whole conversation); true once a pushed line does not hang as
// written or the lines are a sub-agent's own (every later push then has the chain read by the
// Rust side).
export function chainStep(s, arr, restart) {
  if (restart) Object.assign(s, chainState(), { broken: false });
  if (!s.broken) {
    try {
      if (!linked(arr, 0, s) || (!s.main && s.side)) s.broken = true;
    } catch {
      // Reading threw: the push reports it.
    }
  }
  return s.broken === true;
}
