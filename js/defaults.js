// The environment defaults shared by the package's browser entries loaded in one page: web.js
// (the first and second modules) and count.js (the counting module). Each entry's
// setEnvironmentDefaults applies them to its own modules (which check them), then shares them
// here with the other entries joined; an entry joins once its module is initialised, and then
// gets the latest defaults any entry was given. So the page's meter (count.js) and its
// compaction (web.js) always read the same defaults, whichever entry was told.

/**
 * The variables the modules read (bindings/exports.rs `set_environment_defaults`): what is
 * shared is a copy of these, taken when they are given, so that a change the page makes to
 * its object afterwards reaches no entry (the one told read it at once).
 */
const NAMES = ['DISABLE_COMPACT', 'DISABLE_AUTO_COMPACT', 'CLAUDE_AUTOCOMPACT_PCT_OVERRIDE', 'CLAUDE_CODE_AUTO_COMPACT_WINDOW'];

/** @type {Set<(env: unknown) => void>} each joined entry's own setter */
const locals = new Set();
/** @type {{ env: unknown } | undefined} */
let latest;

/**
 * The variables of `env` as the modules read them (a getter that throws reads as absent).
 * @param {unknown} env
 */
function copyOf(env) {
  if (env === null || typeof env !== 'object') return env;
  /** @type {Record<string, string>} */
  const copy = {};
  for (const name of NAMES) {
    try {
      const value = /** @type {Record<string, unknown>} */ (env)[name];
      if (typeof value === 'string') copy[name] = value;
    } catch (_) {
      // absent, as the modules read it
    }
  }
  return copy;
}

/**
 * Joins an entry whose module is initialised: it gets the latest defaults given to any entry.
 * @param {(env: unknown) => void} local the entry's own setter (its modules only)
 */
export function joinDefaults(local) {
  if (locals.has(local)) return;
  locals.add(local);
  if (latest !== undefined) local(latest.env);
}

/**
 * Shares defaults an entry's own setter accepted with the other entries joined.
 * @param {(env: unknown) => void} local the entry's own setter, already called
 * @param {unknown} env
 */
export function shareDefaults(local, env) {
  const copy = copyOf(env);
  latest = { env: copy };
  for (const other of locals) if (other !== local) other(copy);
}

/**
 * The import of a module of the package, at attempt `n` (the number of its imports that failed
 * before). The first is the call site's static `import('./file.js')` (`load`), which bundlers
 * see and split. A browser keeps a failed `import()` of a URL in its module map for the page's
 * lifetime: importing the same URL again fails at once, with no request. So a retry repeats
 * `load` (what a bundler rewrote: its chunk loader may fetch anew, as webpack's does), and when
 * that fails where the package runs unbundled (`base`, the importer's import.meta.url, is the
 * package's own file `self` served over http(s)), imports `file` beside it with `?retry=n`: a URL
 * the browser has not seen, so fetched again. (A module that failed among the imported one's own
 * imports stays failed.) In this file because every browser entry loads it. The import of the
 * computed URL is count.js's own (`setImportUrl`): no module a Worker may load (workerd.js,
 * web.js, the summarizers) may hold an `import()` of a computed specifier, which miniflare's
 * module locator refuses. So a page that loaded only web.js gets the first step only (the
 * static import repeated: a fresh fetch under webpack, the cached failure unbundled).
 * @template T
 * @param {number} n
 * @param {() => Promise<T>} load
 * @param {string} base
 * @param {string} self the importer's file name in the package (`anthropic.js`)
 * @param {string} file the module imported, beside it (`anthropic-send.js`)
 * @returns {Promise<T>}
 */
export async function importAgain(n, load, base, self, file) {
  const given = provided.get(file);
  if (given !== undefined) return given;
  try {
    return await load();
  } catch (e) {
    // `base` is no URL where the bundle has no import.meta.url (workerd, esbuild's iife and
    // cjs formats): the import's own error is the one to report, not the URL's.
    let url;
    try {
      url = new URL(base);
    } catch (_) {
      throw e;
    }
    if (!n || !importUrl || !/^https?:$/.test(url.protocol) || !url.pathname.endsWith(`/${self}`)) throw e;
    return importUrl(new URL(`./${file}?retry=${n}`, url).href);
  }
}

/** @type {((url: string) => Promise<any>) | undefined} */
let importUrl;
/**
 * How a browser entry imports a computed URL (`(url) => import(url)`, written there).
 * @param {(url: string) => Promise<any>} f
 */
export function setImportUrl(f) {
  importUrl = f;
}

/**
 * Modules of the package an entry imported statically, by file name (`anthropic-send.js`):
 * `importAgain` answers with them and never calls `import()`, which a module service worker
 * refuses (service-worker.js provides every module the package would load on first use).
 * @type {Map<string, any>}
 */
const provided = new Map();
/**
 * Gives `importAgain` a module of the package imported statically.
 * @param {string} file the module's file name in the package
 * @param {any} module its namespace (or, for a glue, the glue itself)
 */
export function provideModule(file, module) {
  provided.set(file, module);
}
