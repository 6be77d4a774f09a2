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
