// The class of every error the library throws or rejects with (src/bindings/errors.rs). It
// is exported by the package (web.js / node.js) so that `err instanceof
// ContextCompactionError` works; `code` is the stable `ErrorCode`, and `cause` (when the
// bindings add it) is the callback's own error.

export class ContextCompactionError extends Error {
  /**
   * @param {string} message
   * @param {string} code
   */
  constructor(message, code) {
    super(message);
    this.name = 'ContextCompactionError';
    this.code = code;
  }
}

/**
 * @param {string} message
 * @param {string} code
 */
export function codedError(message, code) {
  return new ContextCompactionError(message, code);
}

/**
 * The error a browser entry's init() (web.js, count.js) reports when its .wasm cannot be
 * loaded: NOT_INITIALIZED with the cause and, in Node without an input, the hint that the
 * entry's Node form (`entry`: the import it answers to) needs no init.
 * @param {unknown} e what the glue's init threw
 * @param {unknown} input what init() was given
 * @param {string} entry
 */
export function initFailure(e, input, entry) {
  const node = typeof process !== 'undefined' && process.versions != null && process.versions.node != null;
  const hint = node && input === undefined
    ? ` (in Node, import '${entry}' as usual: its Node form loads the .wasm itself; or pass the bytes: init({ module_or_path: readFileSync(...) }))`
    : '';
  const why = e instanceof Error ? e.message : String(e);
  // Bytes that are not WebAssembly (the file starts with `<!do`, `<htm`): the server answered
  // the .wasm's URL with something else, most often a single-page app's index.html fallback.
  const notWasm = /magic (word|number)|expected magic|wasm magic/i.test(why)
    ? `; what was fetched${urlOf(input)} is not WebAssembly: the server answered that URL with another file (an HTML page, often a single-page app's fallback), so the .wasm is not served there — serve the package's .wasm files at that path or pass their URL to init({ module_or_path })`
    : '';
  const err = codedError(`init() could not load the .wasm: ${why}${notWasm}${hint}`, 'NOT_INITIALIZED');
  err.cause = e;
  return err;
}

/**
 * ` from URL` for what init() was given, when it names a URL; else nothing (the entry's own
 * default, beside it).
 * @param {unknown} input
 */
function urlOf(input) {
  const v = input !== null && typeof input === 'object' && 'module_or_path' in input ? input.module_or_path : input;
  if (typeof v === 'string' || v instanceof URL) return ` from ${String(v)}`;
  if (typeof Request !== 'undefined' && v instanceof Request) return ` from ${v.url}`;
  if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) return ' (the bytes given to init())';
  return ' (from the .wasm beside the entry, by default)';
}
