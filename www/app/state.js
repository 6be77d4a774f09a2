// @ts-check
// The page's state: the settings (kept in localStorage; the API key in sessionStorage, for this
// tab only, unless the user asks to remember it) and the session (the Compactor, the record of
// every line, the opened file, the running operation).

/** @typedef {import('context-compaction').Compactor<TranscriptLine>} Chat */
/** @typedef {import('context-compaction').TranscriptLine} TranscriptLine */
/** @typedef {import('context-compaction').Config} Config */
/** @typedef {ReturnType<typeof import('../analysis.js').analyzeLines>} Analysis */
/** @typedef {{name: string, size: number, analysis: Analysis}} OpenedFile */
/**
 * The running operation.
 * @typedef {{kind: 'chat' | 'compact' | 'preview', controller: AbortController, offline: boolean, summarizer: string | null}} Busy
 */

/**
 * A `context-compaction.`-prefixed view of a Web Storage area (absent or failing storage, as in
 * some private modes, reads as empty and keeps nothing: the setting lasts for this page only).
 * @param {() => Storage} area
 */
function storeIn(area) {
  return {
    /** @param {string} key */
    get(key) {
      try {
        return area().getItem(`context-compaction.${key}`) ?? '';
      } catch {
        return '';
      }
    },
    /** @param {string} key @param {string | null | undefined} value */
    set(key, value) {
      try {
        if (value === '' || value === null || value === undefined) area().removeItem(`context-compaction.${key}`);
        else area().setItem(`context-compaction.${key}`, value);
      } catch {
        /* storage unavailable: nothing kept */
      }
    },
  };
}

/** The settings kept in this browser (localStorage). */
export const store = storeIn(() => localStorage);
/** What is kept for this tab only (sessionStorage): the API key by default. */
export const tabStore = storeIn(() => sessionStorage);

export const DEFAULT_BASE_URL = 'https://api.anthropic.com';

// A key saved in localStorage by an earlier version of the page counts as remembered (the box
// is then ticked, and unticking it moves the key to this tab only).
const legacyKey = store.get('apiKey');
const rememberKey = store.get('rememberKey') === '1' || (store.get('rememberKey') === '' && legacyKey !== '');

export const settings = {
  model: store.get('model') || 'claude-sonnet-4-5',
  apiKey: tabStore.get('apiKey') || (rememberKey ? legacyKey : ''),
  /** Keep the key in this browser (localStorage) instead of this tab only (sessionStorage, the default). */
  rememberKey,
  /** Allow an http:// base URL on a loopback address (a local test server); off by default. */
  allowLocalHttp: store.get('allowLocalHttp') === '1',
  baseURL: store.get('baseURL'),
  autoPct: store.get('autoPct'),
  /** Summaries written ahead (the Compactor's `preemptive` option); off by default. */
  preemptive: store.get('preemptive') === '1',
};

/** The host names an http:// base URL may have when local test servers are allowed. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost']);

/**
 * Why the API key may not be sent to `base`, or null when it may: only to https:// origins,
 * or to an http:// loopback server (127.0.0.1, localhost) when `allowLocalHttp` is on.
 * @param {string} base an absolute URL
 * @param {boolean} allowLocalHttp
 * @returns {string | null}
 */
export function keyRefusal(base, allowLocalHttp) {
  let u;
  try {
    u = new URL(base);
  } catch {
    return `not an http(s) URL: ${base}`;
  }
  if (u.protocol === 'https:') return null;
  if (u.protocol !== 'http:') return `not an http(s) URL: ${base}`;
  if (!LOOPBACK_HOSTS.has(u.hostname)) {
    return `the API key is sent only to https:// origins, never in clear to ${u.host} (http:// is allowed for a local test server on 127.0.0.1 or localhost only)`;
  }
  if (!allowLocalHttp) {
    return `the API key is sent only to https:// origins: tick "Allow a local http:// test server" to use ${u.host}`;
  }
  return null;
}

/**
 * Saves the key where the settings say (this tab, or this browser) and removes it from the other.
 * @param {string} apiKey
 * @param {boolean} remember
 */
export function storeKey(apiKey, remember) {
  tabStore.set('apiKey', remember ? '' : apiKey);
  store.set('apiKey', remember ? apiKey : '');
  store.set('rememberKey', remember ? '1' : '0');
}

export const session = {
  /** @type {Chat | null} the Compactor holding the live conversation */
  chat: null,
  /** Every line ever written, in order: the session file. */
  history: /** @type {TranscriptLine[]} */ ([]),
  /** The opened file: `{name, size, analysis}`, or null for a chat started here. */
  file: /** @type {OpenedFile | null} */ (null),
  /** Fields copied onto new lines (sessionId, cwd, version, gitBranch). */
  meta: /** @type {{sessionId: string, cwd: string, version: string, gitBranch?: string}} */ ({ sessionId: '', cwd: '/', version: '' }),
  compactions: 0,
  /** The running operation: `{kind, controller, offline}`, or null. */
  busy: /** @type {Busy | null} */ (null),
};

/** The live Compactor (the page creates it at start-up, before any control is enabled). */
export function liveChat() {
  if (!session.chat) throw Object.assign(new Error('the conversation is not ready'), { code: 'NOT_READY' });
  return session.chat;
}

/** Online: a key, and a base URL it may be sent to (keyRefusal). */
export const online = () => settings.apiKey !== '' && keyRefusal(baseURL(), settings.allowLocalHttp) === null;
export const baseURL = () => settings.baseURL || DEFAULT_BASE_URL;

/**
 * The library config the settings make (only the auto-compact percentage for now).
 * @returns {Config}
 */
export function config() {
  /** @type {Config} */
  const c = {};
  const p = Number(settings.autoPct);
  if (settings.autoPct !== '' && Number.isFinite(p) && p >= 1 && p <= 100) c.autoCompactPctOverride = p;
  return c;
}
