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
 * The error a browser entry's init() or initSync() (web.js, count.js) reports when its .wasm
 * cannot be loaded: NOT_INITIALIZED with the cause and, in Node without an input, the hint
 * that the entry's Node form (`entry`: the import it answers to) needs no init.
 * @param {unknown} e what the glue's init threw
 * @param {unknown} input what init() was given
 * @param {string} entry
 * @param {string} [call] the function that failed
 */
export function initFailure(e, input, entry, call = 'init()') {
  const node = typeof process !== 'undefined' && process.versions != null && process.versions.node != null;
  const hint = node && input === undefined
    ? ` (in Node, import '${entry}' as usual: its Node form loads the .wasm itself; or pass the bytes: init({ module_or_path: readFileSync(...) }))`
    : '';
  const why = e instanceof Error ? e.message : String(e);
  // Bytes that are not WebAssembly (the file starts with `<!do`, `<htm`): the server answered
  // the .wasm's URL with something else, most often a single-page app's index.html fallback.
  const notWasm = /magic/i.test(why)
    ? `; what was fetched${urlOf(input)} is not WebAssembly (an HTML page? the .wasm is not served at that URL)`
    : '';
  const err = codedError(`${call} could not load the .wasm: ${why}${notWasm}${hint}`, 'NOT_INITIALIZED');
  err.cause = e;
  return err;
}

/**
 * Where what init() was given came from: ` from URL`, ` (bytes given)`, ` (default URL)`.
 * @param {unknown} input
 */
function urlOf(input) {
  const v = input?.module_or_path ?? input;
  if (typeof v === 'string' || v instanceof URL) return ` from ${v}`;
  if (typeof v?.url === 'string') return ` from ${v.url}`;
  return v instanceof ArrayBuffer || ArrayBuffer.isView(v) ? ' (bytes given)' : v === undefined ? ' (default URL)' : '';
}
