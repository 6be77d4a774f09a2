// The behaviour of the `context-compaction/count` entry (count.js, written by
// scripts/package.mjs, calls `countLoader` with the counting module's glue and re-exports the
// rest of it): its init, the first module loaded on demand (`loadCompaction`) or ahead, and the
// environment defaults it shares with web.js (defaults.js).
//
// Loading ahead: once `calculateTokenWarningState` reports the warning threshold passed or
// `shouldAutoCompact` answers true, the first module's .wasm is fetched and compiled in the
// background, so that the first compaction does not wait for it; its JS (web.js) is imported at
// loadCompaction() only. Only the .wasm goes ahead because a browser keeps a failed import of a
// JS module until the page reloads: a network failure while loading ahead (which the page did
// not ask for) must not break the loadCompaction() it asks for later. A fetch that failed is
// simply made again (after 30 s when ahead).

import { joinDefaults, shareDefaults } from './defaults.js';

/** How long a failed load ahead waits before the next one. */
const AHEAD_RETRY_MS = 30_000;

/**
 * @typedef {{ module_or_path?: unknown, prefetchCompaction?: unknown } | unknown} CountInput
 * @typedef {{ default: (input?: unknown) => Promise<unknown> }} MainEntry web.js's exports
 */

/**
 * The count entry's functions over the counting module's glue.
 * @param {object} how
 * @param {(input?: unknown) => Promise<unknown>} how.glueInit the counting glue's init
 * @param {(module: unknown) => void} how.glueInitSync the counting glue's initSync
 * @param {(tokens: unknown, model: unknown, config?: unknown) => { isAboveWarningThreshold: boolean }} how.warningState
 * @param {(messages: unknown, model: unknown, options?: unknown) => boolean} how.should
 * @param {(env: unknown) => void} how.setDefaults the counting module's setEnvironmentDefaults
 * @param {(message: string, code: string) => Error & { cause?: unknown }} how.codedError
 * @param {(e: unknown, input: unknown, entry: string, call?: string) => Error} how.initFailure the
 *   error of a failed init or initSync (src/bindings/js_error.js)
 * @param {(failures: number) => Promise<MainEntry>} how.loadMain imports web.js; `failures`: the
 *   imports of it that failed before (a retry imports anew: import-again.js)
 * @param {() => URL} how.firstWasm where the first module's .wasm is by default
 */
export function countLoader({ glueInit, glueInitSync, warningState, should, setDefaults, codedError, initFailure, loadMain, firstWasm }) {
  /** @type {MainEntry | undefined} */
  let full;
  /** @type {Promise<MainEntry> | undefined} */
  let pending;
  /** Where the first module's .wasm is fetched from ahead; null: no loading ahead. @type {{ where: unknown } | null} */
  let ahead = { where: undefined };
  /** The first module compiled ahead (undefined while none is, or after it failed). @type {Promise<WebAssembly.Module | undefined> | undefined} */
  let compiled;
  let aheadFailedAt = -Infinity;
  let mainFailures = 0;

  const inNode = () => typeof process !== 'undefined' && process.versions != null && process.versions.node != null;

  /**
   * @param {unknown} where the .wasm given ahead, or undefined: the file beside web.js
   * @returns {Promise<WebAssembly.Module>}
   */
  const compile = async (where) => {
    // firstWasm() throws where the bundle has no import.meta.url (esbuild's iife and cjs
    // formats, a worker run from a blob: URL): a rejection here, never a throw from the
    // per-turn check that asked to load ahead.
    const w = await (where === undefined ? firstWasm() : where);
    if (w instanceof WebAssembly.Module) return w;
    if (w instanceof ArrayBuffer || ArrayBuffer.isView(w)) return WebAssembly.compile(/** @type {BufferSource} */ (w));
    const response = w instanceof Response ? w : await fetch(/** @type {RequestInfo | URL} */ (w));
    if (!response.ok) throw new Error(`${response.status} fetching ${response.url}`);
    return WebAssembly.compile(await response.arrayBuffer());
  };

  const loadAhead = () => {
    if (full !== undefined || pending !== undefined || compiled !== undefined || ahead === null) return;
    if (Date.now() - aheadFailedAt < AHEAD_RETRY_MS) return;
    compiled = compile(ahead.where).catch(() => {
      aheadFailedAt = Date.now();
      compiled = undefined; // loadCompaction() fetches it itself
      return undefined;
    });
  };

  /**
   * Loads the main entry and resolves to its exports; overlapping calls share one load.
   * @param {unknown} [input] where the first module's .wasm is (as web.js's init takes it)
   */
  const loadCompaction = (input) => {
    if (full !== undefined) return Promise.resolve(full);
    const early = input === undefined ? compiled : undefined;
    pending ??= Promise.resolve(early)
      .then(async (module) => {
        const m = await loadMain(mainFailures).catch((e) => {
          mainFailures++;
          throw e;
        });
        await m.default(module !== undefined ? { module_or_path: module } : input);
        full = m;
        return m;
      })
      .catch((e) => {
        pending = undefined; // the next call tries again
        const why = e?.code === 'NOT_INITIALIZED' && e.cause !== undefined ? e.cause : e;
        const hint =
          inNode() && input === undefined
            ? " (in Node, import 'context-compaction/count' as usual: its Node form needs no download; or pass the bytes: loadCompaction({ module_or_path: readFileSync(...) }))"
            : '';
        const err = codedError(
          `loadCompaction() could not load the first module (web.js, context_compaction_bg.wasm): ${why instanceof Error ? why.message : String(why)}${hint}`,
          'NOT_INITIALIZED',
        );
        err.cause = e;
        throw err;
      });
    return pending;
  };

  /** @param {unknown} input */
  const prefetchOption = (input) => {
    const option = input !== null && typeof input === 'object' && Object.getPrototypeOf(input) === Object.prototype
      ? /** @type {{ prefetchCompaction?: unknown }} */ (input).prefetchCompaction
      : undefined;
    if (option === undefined) return;
    aheadFailedAt = -Infinity; // a new place (or none) is tried at once
    if (option === false) ahead = null;
    else if (option === true) ahead = { where: undefined };
    else {
      const where = /** @type {{ module_or_path?: unknown }} */ (option).module_or_path;
      ahead = { where };
      // A place given as a promise may reject before it is used: not an unhandled rejection.
      if (where instanceof Promise) where.catch(() => {});
    }
  };

  return {
    /** @param {unknown} tokens @param {unknown} model @param {unknown} [config] */
    calculateTokenWarningState(tokens, model, config) {
      const state = warningState(tokens, model, config);
      if (state.isAboveWarningThreshold) loadAhead();
      return state;
    },
    /** @param {unknown} messages @param {unknown} model @param {unknown} [options] */
    shouldAutoCompact(messages, model, options) {
      const due = should(messages, model, options);
      if (due) loadAhead();
      return due;
    },
    /** The counting module's defaults, shared with web.js's modules. @param {unknown} env */
    setEnvironmentDefaults(env) {
      setDefaults(env);
      shareDefaults(setDefaults, env);
    },
    loadCompaction,
    /** @param {CountInput} [input] */
    async init(input) {
      prefetchOption(input);
      try {
        const r = await glueInit(input);
        joinDefaults(setDefaults);
        return r;
      } catch (e) {
        throw initFailure(e, input, 'context-compaction/count');
      }
    },
    /** @param {unknown} module */
    initSync(module) {
      try {
        glueInitSync(module);
      } catch (e) {
        // Bytes that are not this .wasm, or an engine that compiles none (a CSP without
        // 'wasm-unsafe-eval'): coded, as init() reports it.
        throw initFailure(e, module, 'context-compaction/count', 'initSync()');
      }
      joinDefaults(setDefaults);
    },
  };
}
