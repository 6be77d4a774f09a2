// The package's second WebAssembly module (offlineSummarizer, previewCompaction,
// simulateSession) behind functions that load it on first use. Every entry (web.js, node.js,
// inline.js, workerd.js, written by scripts/package.mjs) calls `extras` with its own way of
// loading the module: a fetch and a promise in browsers, a synchronous read or instantiation
// where the bytes are at hand (Node, Workers).

/**
 * The second module's initialised glue, as the entries use it.
 * @typedef {object} ExtraGlue
 * @property {(options?: unknown) => import('context-compaction').Summarizer} offlineSummarizer
 * @property {(messages: unknown, context: unknown) => import('context-compaction').CompactionPreview} previewCompaction
 * @property {(session: unknown, options?: unknown) => import('context-compaction').SimulationReport} simulateSession
 * @property {(env: unknown) => void} setEnvironmentDefaults
 */

/**
 * The second module's functions for one entry.
 * @param {object} how
 * @param {(input?: unknown, failures?: number) => ExtraGlue | Promise<ExtraGlue>} how.load
 *   instantiates the module and returns its glue (the glue itself when `sync`, else a promise of
 *   it); `failures`: the loads that failed before (a retry imports anew: import-again.js)
 * @param {boolean} how.sync whether `load` returns the glue itself
 * @param {(message: string, code: string) => Error & { cause?: unknown }} how.codedError the
 *   library's coded error (src/bindings/js_error.js)
 * @param {(env: unknown) => void} how.setBaseDefaults the first module's setEnvironmentDefaults
 */
export function extras({ load, sync, codedError, setBaseDefaults }) {
  /** @type {ExtraGlue | undefined} */
  let glue;
  /** @type {Promise<ExtraGlue> | undefined} */
  let pending;
  /** @type {unknown} */
  let env;
  let failures = 0;
  /** @param {ExtraGlue} g */
  const ready = (g) => {
    if (env !== undefined) g.setEnvironmentDefaults(env);
    glue = g;
    return g;
  };
  /** @param {unknown} e */
  const failed = (e) => {
    const err = codedError(
      `the second module (offlineSummarizer, previewCompaction, simulateSession) could not be loaded: ${e instanceof Error ? e.message : String(e)}`,
      'NOT_INITIALIZED',
    );
    err.cause = e;
    return err;
  };
  /** The glue, loaded now where the entry can; undefined where only a promise can give it. */
  const now = () => {
    if (glue !== undefined || !sync) return glue;
    try {
      return ready(/** @type {ExtraGlue} */ (load()));
    } catch (e) {
      throw failed(e);
    }
  };
  /** @param {unknown} [input] @returns {Promise<ExtraGlue>} */
  const later = (input) => {
    if (glue !== undefined) return Promise.resolve(glue);
    if (pending === undefined) {
      pending = Promise.resolve()
        .then(() => load(input, failures))
        .then(ready, (e) => {
          pending = undefined; // the next use tries again
          failures++;
          throw failed(e);
        });
    }
    return pending;
  };
  /** @returns {Promise<ExtraGlue>} */
  const get = () => (sync ? Promise.resolve().then(() => /** @type {ExtraGlue} */ (now())) : later());
  return {
    /** Loads the second module now (optional: it loads on first use). @param {unknown} [input] */
    loadExtras: async (input) => {
      if (sync) now();
      else await later(input);
    },
    /**
     * `offlineSummarizer` of the second module. Where it cannot load now, the load starts and
     * the function returned waits for it; a bad option, or a load that failed (tried again at
     * the next call), is reported by that function's call.
     * @param {unknown} [options]
     * @returns {import('context-compaction').Summarizer}
     */
    offlineSummarizer(options) {
      const g = now();
      if (g !== undefined) return g.offlineSummarizer(options);
      /** @type {import('context-compaction').Summarizer | undefined} */
      let summarize;
      const make = () => later().then((g2) => (summarize ??= g2.offlineSummarizer(options)));
      make().catch(() => {});
      return (request, opts) => (summarize !== undefined ? summarize(request, opts) : make().then((f) => f(request, opts)));
    },
    /** `previewCompaction` of the second module, as a promise. @param {unknown} messages @param {unknown} context */
    previewCompaction: async (messages, context) => (await get()).previewCompaction(messages, context),
    /** `simulateSession` of the second module, as a promise. @param {unknown} session @param {unknown} [options] */
    simulateSession: async (session, options) => (await get()).simulateSession(session, options),
    /** The environment defaults of both modules. @param {unknown} e */
    setEnvironmentDefaults(e) {
      setBaseDefaults(e);
      env = e;
      if (glue !== undefined) glue.setEnvironmentDefaults(e);
    },
  };
}
