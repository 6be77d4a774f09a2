// Helpers of the conversions of src/bindings/convert.rs that are shorter in JS than
// through Reflect. No decisions are made here. Each catches what the caller's objects throw
// (a Proxy's traps, a getter): nothing thrown crosses into WebAssembly; the error is kept
// for the Rust side (`takeConvertError`), which reports it with the original as the cause.

let convertError;

export function failed(e) {
  if (convertError === undefined) convertError = e === undefined ? new Error('undefined was thrown') : e;
  return null;
}

/** The error the last guarded read kept (undefined when none); reading clears it. */
export function takeConvertError() {
  const e = convertError;
  convertError = undefined;
  return e;
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
// Undefined too past 2^22 elements, more than any list of options, answers or results has
// (a sparse array's length: copied, 5e7 trapped the instance, 2^32 − 1 took seconds).
export function itemsOf(v) {
  try {
    return Array.isArray(v) && v.length <= 1 << 22 ? Array.from(v) : undefined;
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

// obj[key] for an options object (or a function carrying flags); undefined when reading
// throws (a getter, a Proxy's trap), with what it threw kept for `propThrew`. Not
// Reflect.get through js-sys: its import is declared `catch`, and wasm-bindgen's glue leaks
// one externref table slot (and its entry in WASM memory) for every throw of such an import.
let propError;
let propFailed = false;
export function propOf(obj, key) {
  try {
    return obj[key];
  } catch (e) {
    propFailed = true;
    propError = e;
    return undefined;
  }
}

// arr[i] (an index read), caught as propOf's reads are (propThrew then tells): the same read,
// imported under its own name where Rust passes an index.
export const elemOf = propOf;

// Whether the last propOf that gave undefined threw, and then what it threw (else
// undefined, with `threw` false); reading clears it.
export function propThrew() {
  const e = propError;
  const threw = propFailed;
  propFailed = false;
  propError = undefined;
  return threw ? [e] : undefined;
}

/**
 * For a call into the package made while another is running: sets this file's state aside
 * (the error not yet taken) and starts the nested call with fresh state. Returns what
 * `putBack` restores when the nested call returns. (js_batch.js sets its batch buffer aside
 * with js_view.js's setAsideToo.)
 */
export function setAside() {
  const saved = convertError;
  convertError = undefined;
  return saved;
}

/** Restores the state `setAside` returned. */
export function putBack(saved) {
  convertError = saved;
}

// The JSON of tool definitions as the request sends them. A schema object (zod, Valibot,
// ArkType: Standard JSON Schema's `~standard.jsonSchema`) is written as the JSON Schema the SDKs
// send for it, a zod 3 schema by its definition (its object's fields are behind a function), a
// LangChain tool (whose `toJSON` names only its class) as its name, description and schema; an
// AI SDK tool's `outputSchema` is not sent. Otherwise JSON.stringify's text. Undefined when it
// throws. A schema's JSON Schema is kept by schema object (schemas are immutable): the
// per-turn count of the same tools converts each once.
const schemas = new WeakMap();
const asJsonSchema = (o) => {
  const s = o['~standard']?.jsonSchema;
  if (typeof s?.input === 'function') return s.input({ target: 'draft-07' });
  const d = o._def;
  if (typeof d?.typeName === 'string') return typeof d.shape === 'function' ? { ...d, shape: d.shape() } : d;
  return o;
};
const schemaJson = function (k, x) {
  const o = this[k];
  if (o === null || typeof o !== 'object') return x;
  if (k === 'outputSchema' && this.inputSchema !== undefined) return undefined;
  if (x !== o && typeof o.name === 'string' && 'schema' in o) return { name: o.name, description: o.description, input_schema: o.schema };
  if (!('~standard' in o || '_def' in o)) return x;
  let j = schemas.get(o);
  if (j === undefined) {
    try {
      j = asJsonSchema(o);
    } catch {
      j = x; // what a schema threw: its own JSON, as without this reading
    }
    schemas.set(o, j);
  }
  return j;
};
export function jsonOf(v) {
  try {
    return JSON.stringify(v, schemaJson);
  } catch {
    return undefined;
  }
}
