// @ts-check
// The page's state: the settings (kept in localStorage) and the session (the Compactor, the
// record of every line, the opened file, the running operation).

/** @typedef {import('context-compaction').Compactor<TranscriptLine>} Chat */
/** @typedef {import('context-compaction').TranscriptLine} TranscriptLine */
/** @typedef {import('context-compaction').Config} Config */
/** @typedef {ReturnType<typeof import('../analysis.js').analyzeLines>} Analysis */
/** @typedef {{name: string, size: number, analysis: Analysis}} OpenedFile */
/**
 * The running operation.
 * @typedef {{kind: 'chat' | 'compact' | 'preview', controller: AbortController, offline: boolean, summarizer: string | null}} Busy
 */

export const store = {
  /** @param {string} key */
  get(key) {
    try {
      return localStorage.getItem(`context-compaction.${key}`) ?? '';
    } catch {
      return '';
    }
  },
  /** @param {string} key @param {string | null | undefined} value */
  set(key, value) {
    try {
      if (value === '' || value === null || value === undefined) localStorage.removeItem(`context-compaction.${key}`);
      else localStorage.setItem(`context-compaction.${key}`, value);
    } catch {
      /* storage unavailable (private mode): the setting lasts for this page only */
    }
  },
};

export const DEFAULT_BASE_URL = 'https://api.anthropic.com';

export const settings = {
  model: store.get('model') || 'claude-sonnet-4-5',
  apiKey: store.get('apiKey'),
  baseURL: store.get('baseURL'),
  autoPct: store.get('autoPct'),
};

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

export const online = () => settings.apiKey !== '';
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
