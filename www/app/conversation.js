// @ts-check
// The conversation: one Compactor holding the live lines, the summarizer it calls (the
// offline summarizer or the Anthropic API), and the transcript lines the page writes.
import * as cc from 'context-compaction';
import { $ } from './dom.js';
import { updateControls } from './controls.js';
import { updateMeter } from './meter.js';
import { progress } from './progress.js';
import { renderConversation } from './render.js';
import { baseURL, config, keyRefusal, online, session, settings } from './state.js';

/** @typedef {import('context-compaction').TranscriptLine} TranscriptLine */
/** @typedef {import('context-compaction').TranscriptMessage} TranscriptMessage */
/** @typedef {import('context-compaction').PostCompactMessage<TranscriptLine>} PostCompactLine */
/** @typedef {import('./state.js').OpenedFile} OpenedFile */

/**
 * The conversation is in transcript shape, so what the library writes into it (boundary,
 * summary, attachments) is transcript lines too.
 * @param {readonly PostCompactLine[]} messages
 */
export const asLines = (messages) => /** @type {TranscriptLine[]} */ (messages);

export function uuid() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map((v) => v.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** Every summary request goes through here: the offline summarizer or the Anthropic API. */
/** @type {ReturnType<typeof cc.anthropicSummarizer> | null} */
let client = null;
let clientKey = '';
export function anthropic() {
  // The settings form refuses such a base URL; checked again where the key leaves the page.
  const refusal = keyRefusal(baseURL(), settings.allowLocalHttp);
  if (refusal !== null) throw Object.assign(new Error(refusal), { code: 'INSECURE_BASE_URL' });
  const key = `${settings.apiKey}\n${baseURL()}`;
  if (!client || clientKey !== key) {
    client = cc.anthropicSummarizer({ apiKey: settings.apiKey, baseURL: baseURL(), maxRetries: 2 });
    clientKey = key;
  }
  return client;
}

/** Drops the API client (the key was forgotten). */
export function forgetClient() {
  client = null;
  clientKey = '';
}

/** @type {import('context-compaction').Summarizer | null} */
let offline = null;
function offlineSummarize() {
  if (typeof cc.offlineSummarizer !== 'function') {
    throw Object.assign(new Error('this build of the package has no offlineSummarizer(): rebuild it (bash scripts/build.sh)'), {
      code: 'OFFLINE_SUMMARIZER_MISSING',
    });
  }
  offline ??= cc.offlineSummarizer();
  return offline;
}

/**
 * A signal that aborts when any of `signals` does.
 * @param {(AbortSignal | undefined)[]} signals
 * @returns {AbortSignal | undefined}
 */
export function anySignal(signals) {
  const list = /** @type {AbortSignal[]} */ (signals.filter(Boolean));
  if (list.length <= 1) return list[0];
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(list);
  const ctl = new AbortController();
  for (const sig of list) {
    if (sig.aborted) ctl.abort(sig.reason);
    else sig.addEventListener('abort', () => ctl.abort(sig.reason), { once: true });
  }
  return ctl.signal;
}

/** @type {import('context-compaction').Summarizer} */
function summarizeDispatch(request, opts) {
  // A summary written ahead is nobody's running operation: not stopped by Stop, not named in
  // the compaction the user waits for.
  const busy = opts?.background ? null : session.busy;
  const useOffline = Boolean(busy?.offline) || !online();
  if (busy) busy.summarizer = useOffline ? 'offline summarizer' : `${settings.model} (API)`;
  const summarize = useOffline ? offlineSummarize() : anthropic();
  return summarize(request, {
    signal: anySignal([opts?.signal, busy?.controller.signal]),
    onText: opts?.onText,
  });
}

/** @param {readonly TranscriptLine[]} messages */
function makeCompactor(messages) {
  return new cc.Compactor({
    model: settings.model,
    config: config(),
    summarize: summarizeDispatch,
    onProgress: (event) => progress.event(event),
    onText: (text) => progress.text(text),
    preemptive: settings.preemptive,
    messages,
  });
}

/**
 * Replaces the conversation (the page starts with an empty one).
 * @param {{lines?: TranscriptLine[], file?: OpenedFile | null}} [options]
 */
export function resetSession({ lines = [], file = null } = {}) {
  if (session.chat) session.chat.free();
  session.chat = null;
  session.chat = makeCompactor(lines);
  session.history = lines.slice();
  session.file = file;
  session.compactions = 0;
  session.meta = metaFrom(lines);
  $('compaction-panel').hidden = true;
  $('preview').hidden = true;
  $('preview').replaceChildren();
  renderConversation();
  updateMeter();
  updateControls();
}

/** Rebuilds the Compactor after a model or config change, keeping the conversation. */
export function rebuildCompactor() {
  if (!session.chat || session.busy) return;
  const messages = asLines(session.chat.messages);
  session.chat.free();
  session.chat = makeCompactor(messages);
  updateMeter();
}

/**
 * The fields new lines copy from the session (a fresh one for a new chat).
 * @param {readonly TranscriptLine[]} lines
 */
function metaFrom(lines) {
  /** @type {typeof session.meta} */
  const meta = { sessionId: uuid(), cwd: '/', version: 'context-compaction-web' };
  for (let i = lines.length - 1; i >= 0; i--) {
    const l = lines[i];
    if (l && typeof l.sessionId === 'string') {
      meta.sessionId = l.sessionId;
      if (typeof l.cwd === 'string') meta.cwd = l.cwd;
      if (typeof l.version === 'string') meta.version = l.version;
      if (typeof l.gitBranch === 'string') meta.gitBranch = l.gitBranch;
      break;
    }
  }
  return meta;
}

/** The uuid of the last main-chain line written. */
function lastUuid() {
  for (let i = session.history.length - 1; i >= 0; i--) {
    const l = session.history[i];
    if (l && typeof l.uuid === 'string' && l.isSidechain !== true) return l.uuid;
  }
  return null;
}

/**
 * A Claude Code transcript line for a chat message.
 * @template {'user' | 'assistant'} T
 * @param {T} type
 * @param {TranscriptMessage & {role: T}} message
 * @param {Record<string, unknown>} [extra]
 * @returns {TranscriptLine}
 */
export function newLine(type, message, extra = {}) {
  /** @type {Record<string, unknown>} */
  const line = {
    parentUuid: lastUuid(),
    isSidechain: false,
    userType: 'external',
    cwd: session.meta.cwd,
    sessionId: session.meta.sessionId,
    version: session.meta.version,
  };
  if (session.meta.gitBranch) line.gitBranch = session.meta.gitBranch;
  Object.assign(line, { type, message, uuid: uuid(), timestamp: new Date().toISOString() }, extra);
  return /** @type {TranscriptLine} */ (line);
}

/** @param {TranscriptLine} line */
export function pushLine(line) {
  if (!session.chat) throw Object.assign(new Error('the conversation is not ready'), { code: 'NOT_READY' });
  session.chat.push(line);
  session.history.push(line);
}
