// Readers used by the Rust view of JS conversations (src/bindings/js_view.rs).
// They only read properties and measure string lengths; every decision is made in Rust.
// Each returns primitives so that one call crosses the JS/WASM boundary once.

// Kind codes: 0 user, 1 assistant, 2 system, 3 attachment, 4 other line, 7 not an object.
// Flags: 8 transcript line, 16 sidechain, 32 compact boundary, 64 has usage.
const KIND = { user: 0, assistant: 1, system: 2, attachment: 3 };

export function header(m) {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return 7;
  const t = m.type;
  let bits;
  if (typeof t === 'string') {
    const k = KIND[t];
    bits = (k === undefined ? 4 : k) | 8;
    if (m.isSidechain === true) bits |= 16;
    if (k === 2 && m.subtype === 'compact_boundary') bits |= 32;
    const inner = m.message;
    if (inner !== null && typeof inner === 'object' && inner.usage != null) bits |= 64;
  } else {
    const r = m.role;
    if (typeof r !== 'string') return 7;
    const k = KIND[r];
    bits = k === undefined || k === 3 ? 4 : k;
    if (m.usage != null) bits |= 64;
  }
  return bits;
}

function usageOf(m) {
  return typeof m.type === 'string' ? m.message && m.message.usage : m.usage;
}

const USAGE_KEYS = ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens'];

// NaN marks a value that is present but not a number; undefined an absent/null one.
export function usageField(m, k) {
  const u = usageOf(m);
  if (u === null || typeof u !== 'object') return undefined;
  const v = u[USAGE_KEYS[k]];
  if (v === undefined || v === null) return undefined;
  return typeof v === 'number' ? v : NaN;
}

export function usageIsObject(m) {
  const u = usageOf(m);
  return u !== null && typeof u === 'object' && !Array.isArray(u);
}

export function messageId(m) {
  const inner = m.message;
  if (inner === null || typeof inner !== 'object') return undefined;
  return typeof inner.id === 'string' ? inner.id : undefined;
}

export function stringField(m, k) {
  const v = m[k];
  return typeof v === 'string' ? v : undefined;
}

export function attachmentType(m) {
  const a = m.attachment;
  return a !== null && typeof a === 'object' && typeof a.type === 'string' ? a.type : undefined;
}

function contentOf(m) {
  if (typeof m.type === 'string') {
    const inner = m.message;
    return inner !== null && typeof inner === 'object' ? inner.content : undefined;
  }
  return m.content;
}

export function contentEquals(m, text) {
  const c = contentOf(m);
  if (typeof c === 'string') return c === text;
  return Array.isArray(c) && c.length === 1 && c[0] !== null && typeof c[0] === 'object' &&
    c[0].type === 'text' && c[0].text === text;
}

const RS = '\u001e';
const US = '\u001f';
const SEP_ANY = /[\u001e\u001f]/;
const SEP_ALL = /[\u001e\u001f]/g;
const clean = (s) => (typeof s === 'string' ? (SEP_ANY.test(s) ? s.replace(SEP_ALL, '\ufffd') : s) : '');
const BLOCK_KIND = {
  text: 0, image: 1, document: 2, tool_use: 3, server_tool_use: 4, tool_result: 5,
  thinking: 7, redacted_thinking: 8,
};
const PLACEHOLDER = '[Old tool result content cleared]';

function jsonLen(v) {
  try {
    const s = JSON.stringify(v);
    return typeof s === 'string' ? s.length : 0;
  } catch (_) {
    return 0;
  }
}

// One record per block: "kind:text:json:cleared:nested" US id US name US path US tool_use_id.
// kind 6 = server tool result, 9 = other, 10 = not an object, 11 = type missing/not a string.
function describeBlock(b, estimate, out) {
  if (b === null || typeof b !== 'object' || Array.isArray(b)) {
    out.push('10:0:0:0:0' + US + US + US + US);
    return;
  }
  const t = b.type;
  if (typeof t !== 'string') {
    out.push('11:0:0:0:0' + US + US + US + US);
    return;
  }
  let k = BLOCK_KIND[t];
  if (k === undefined) k = t.endsWith('_tool_result') && typeof b.tool_use_id === 'string' ? 6 : 9;
  let text = 0, json = 0, cleared = 0, id = '', name = '', path = '', tid = '';
  let nested = null;
  switch (k) {
    case 0: text = typeof b.text === 'string' ? b.text.length : -1; break;
    case 7: text = typeof b.thinking === 'string' ? b.thinking.length : -1; break;
    case 8: text = typeof b.data === 'string' ? b.data.length : -1; break;
    case 3: case 4: {
      id = typeof b.id === 'string' ? clean(b.id) : (text = -1, '');
      name = typeof b.name === 'string' ? clean(b.name) : (text = -1, '');
      const input = b.input;
      if (input !== null && typeof input === 'object') {
        const p = typeof input.file_path === 'string' ? input.file_path
          : typeof input.path === 'string' ? input.path
          : typeof input.notebook_path === 'string' ? input.notebook_path : '';
        path = clean(p);
      }
      if (estimate) json = name.length + jsonLen(input === undefined ? {} : input);
      break;
    }
    case 5: {
      if (typeof b.tool_use_id !== 'string') { text = -1; break; }
      tid = clean(b.tool_use_id);
      const c = b.content;
      if (typeof c === 'string') {
        text = c.length;
        cleared = c === PLACEHOLDER ? 1 : 0;
      } else if (Array.isArray(c)) {
        nested = c;
      } else if (c !== undefined && c !== null) {
        text = -1;
      }
      break;
    }
    case 6: tid = clean(b.tool_use_id); if (estimate) json = jsonLen(b); break;
    default: if (estimate) json = jsonLen(b);
  }
  out.push(k + ':' + text + ':' + json + ':' + cleared + ':' + (nested ? nested.length : 0) +
    US + id + US + name + US + path + US + tid);
  if (nested) for (const n of nested) describeBlock(n, estimate, out);
}

// undefined: no content; a number: string content of that length; a string: block records
// separated by RS; null: content of a wrong type.
export function describeContent(m, estimate) {
  if (m.type === 'attachment') {
    const a = m.attachment;
    return a === undefined ? undefined : -1 - jsonLen(a);
  }
  const c = contentOf(m);
  if (c === undefined || c === null) return undefined;
  if (typeof c === 'string') return c.length;
  if (!Array.isArray(c)) return null;
  const out = [];
  for (const b of c) describeBlock(b, estimate, out);
  return out.join(RS);
}

// Applying edits: shallow copies, so every object the edit does not touch is shared.
export function withContent(m, content) {
  if (typeof m.type === 'string') {
    return { ...m, message: { ...m.message, content } };
  }
  return { ...m, content };
}

export function contentArray(m) {
  const c = contentOf(m);
  return Array.isArray(c) ? c.slice() : undefined;
}
