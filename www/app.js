// The context-compaction web page: a chat with Claude (the user's key, the Messages API over
// fetch, streamed), a context meter, automatic and manual compaction with progress and a
// loss report, and an analyser/compactor for Claude Code session files. Plain ES modules, no
// framework, no build step: the only import is the package itself.
//
// The conversation is always a list of Claude Code transcript lines held by one `Compactor`
// (the library keeps the running token count); `session.history` is the append-only record of
// every line, i.e. the session file: an opened file's lines, then what each compaction wrote
// (boundary, summary, …) and every chat turn. "Download" writes that record with
// `serializeTranscript`, so Claude Code resumes after the last boundary.

import init, * as cc from '/pkg/web.js';
import { analyzeLines, thresholdsFor } from './analysis.js';

// ---- Small helpers ----------------------------------------------------------------------------

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
const fmt = (n) => (typeof n === 'number' && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const pct = (x, digits = 1) => (Number.isFinite(x) ? `${(x * 100).toFixed(digits)}%` : '–');
const signedPct = (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)}%` : '–');
const kb = (bytes) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1e3))} kB`);

/** Creates an element: `h('p', {class: 'x', text: 'hi'}, child, …)`. */
function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/** An SVG element. */
function s(tag, attrs, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs ?? {})) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  return el;
}

/** Text cut to `max` characters with a note of what was left out. */
function clip(text, max) {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… (${fmt(text.length - max)} more characters)`;
}

function uuid() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map((v) => v.toString(16).padStart(2, '0')).join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

const store = {
  get(key) {
    try {
      return localStorage.getItem(`context-compaction.${key}`) ?? '';
    } catch {
      return '';
    }
  },
  set(key, value) {
    try {
      if (value === '' || value === null || value === undefined) localStorage.removeItem(`context-compaction.${key}`);
      else localStorage.setItem(`context-compaction.${key}`, value);
    } catch {
      /* storage unavailable (private mode): the setting lasts for this page only */
    }
  },
};

// ---- State ------------------------------------------------------------------------------------

const DEFAULT_BASE_URL = 'https://api.anthropic.com';

const settings = {
  model: store.get('model') || 'claude-sonnet-4-5',
  apiKey: store.get('apiKey'),
  baseURL: store.get('baseURL'),
  autoPct: store.get('autoPct'),
};

const session = {
  /** @type {any} the Compactor holding the live conversation */
  chat: null,
  /** Every line ever written, in order: the session file. */
  history: /** @type {any[]} */ ([]),
  /** The opened file: `{name, size, analysis}`, or null for a chat started here. */
  file: /** @type {any} */ (null),
  /** Fields copied onto new lines (sessionId, cwd, version, gitBranch). */
  meta: /** @type {Record<string, string>} */ ({}),
  compactions: 0,
  /** The running operation: `{kind, controller, offline}`, or null. */
  busy: /** @type {any} */ (null),
};

const online = () => settings.apiKey !== '';
const baseURL = () => settings.baseURL || DEFAULT_BASE_URL;

/** The library config the settings make (only the auto-compact percentage for now). */
function config() {
  const c = {};
  const p = Number(settings.autoPct);
  if (settings.autoPct !== '' && Number.isFinite(p) && p >= 1 && p <= 100) c.autoCompactPctOverride = p;
  return c;
}

// ---- Errors ----------------------------------------------------------------------------------

/** The stable code of an error: the library's and the summarizer's `code`, else its name. */
function codeOf(e) {
  if (e && typeof e === 'object' && typeof e.code === 'string') return e.code;
  if (e && typeof e === 'object' && typeof e.name === 'string' && e.name !== 'Error') return e.name;
  return 'ERROR';
}

function messageOf(e) {
  if (e && typeof e === 'object' && typeof e.message === 'string') return e.message;
  return String(e);
}

/** Shows an error (dismissible), with its code. */
function showError(e, what) {
  const code = codeOf(e);
  const item = h(
    'div',
    { class: 'error-item', role: 'alert', dataset: { code } },
    h('strong', { class: 'error-code', text: code }),
    h('span', { text: `${what ? `${what}: ` : ''}${messageOf(e)}` }),
    h('button', { type: 'button', class: 'btn btn-small', 'aria-label': 'Dismiss this error', onclick: () => item.remove(), text: 'Dismiss' }),
  );
  $('errors').append(item);
  while ($('errors').children.length > 4) $('errors').firstElementChild?.remove();
  return item;
}

// ---- The conversation (Compactor) ---------------------------------------------------------------

/** Every summary request goes through here: the offline summarizer or the Anthropic API. */
let client = null;
let clientKey = '';
function anthropic() {
  const key = `${settings.apiKey}\n${baseURL()}`;
  if (!client || clientKey !== key) {
    client = cc.anthropicSummarizer({ apiKey: settings.apiKey, baseURL: baseURL(), maxRetries: 2 });
    clientKey = key;
  }
  return client;
}

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

/** A signal that aborts when any of `signals` does. */
function anySignal(signals) {
  const list = signals.filter(Boolean);
  if (list.length <= 1) return list[0];
  if (typeof AbortSignal.any === 'function') return AbortSignal.any(list);
  const ctl = new AbortController();
  for (const sig of list) {
    if (sig.aborted) ctl.abort(sig.reason);
    else sig.addEventListener('abort', () => ctl.abort(sig.reason), { once: true });
  }
  return ctl.signal;
}

function summarizeDispatch(request, opts) {
  const useOffline = Boolean(session.busy?.offline) || !online();
  if (session.busy) session.busy.summarizer = useOffline ? 'offline summarizer' : `${settings.model} (API)`;
  const summarize = useOffline ? offlineSummarize() : anthropic();
  return summarize(request, {
    signal: anySignal([opts?.signal, session.busy?.controller.signal]),
    onText: opts?.onText,
  });
}

function makeCompactor(messages) {
  return new cc.Compactor({
    model: settings.model,
    config: config(),
    summarize: summarizeDispatch,
    onProgress: (event) => progress.event(event),
    onText: (text) => progress.text(text),
    messages,
  });
}

/** Replaces the conversation (the page starts with an empty one). */
function resetSession({ lines = [], file = null } = {}) {
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
function rebuildCompactor() {
  if (!session.chat || session.busy) return;
  const messages = session.chat.messages;
  session.chat.free();
  session.chat = makeCompactor(messages);
  updateMeter();
}

/** The fields new lines copy from the session (a fresh one for a new chat). */
function metaFrom(lines) {
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

/** A Claude Code transcript line for a chat message. */
function newLine(type, message, extra = {}) {
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
  return line;
}

function pushLine(line) {
  session.chat.push(line);
  session.history.push(line);
}

// ---- The context meter -----------------------------------------------------------------------

/** Updates the meter from the Compactor's count (plus `extra` tokens streaming in). */
function updateMeter(extra = 0) {
  if (!session.chat) return;
  const cfg = config();
  const model = settings.model;
  const tokens = session.chat.tokenCount() + extra;
  const ws = cc.calculateTokenWarningState(tokens, model, cfg);
  const t = thresholdsFor(cc, model, cfg);
  const window = t.effectiveWindow;
  const at = (n) => `${Math.min(100, Math.max(0, (n / window) * 100)).toFixed(2)}%`;
  const level = ws.isAboveErrorThreshold ? 'error' : ws.isAboveWarningThreshold ? 'warning' : 'ok';

  const meter = $('meter');
  meter.dataset.level = level;
  meter.dataset.tokens = String(tokens);
  meter.dataset.percentLeft = String(ws.percentLeft);
  meter.setAttribute('aria-valuemax', String(window));
  meter.setAttribute('aria-valuenow', String(Math.min(tokens, window)));
  meter.setAttribute('aria-valuetext', `${fmt(tokens)} tokens used, ${ws.percentLeft}% left`);
  $('meter-fill').style.width = at(tokens);
  $('meter-mark-warning').style.left = at(t.warningThreshold);
  $('meter-mark-error').style.left = at(t.errorThreshold);
  const auto = $('meter-mark-auto');
  auto.style.left = at(t.autoCompactThreshold);
  auto.hidden = !t.autoCompactEnabled;

  const flags = [];
  if (ws.isAtBlockingLimit) flags.push('blocking limit reached');
  else if (ws.isAboveAutoCompactThreshold) flags.push('auto-compact due');
  else if (ws.isAboveErrorThreshold) flags.push('above the error line');
  else if (ws.isAboveWarningThreshold) flags.push('above the warning line');
  $('meter-text').replaceChildren(
    h('strong', { id: 'meter-tokens', text: `${fmt(tokens)} tokens` }),
    ` used of ${fmt(window)} · `,
    h('strong', { id: 'meter-left', text: `${ws.percentLeft}% left` }),
    ' before auto-compact',
    flags.length ? h('span', { class: `flag flag-${level}`, text: ` · ${flags.join(', ')}` }) : '',
  );
  $('meter-legend').replaceChildren(
    h('span', { class: 'legend legend-model', text: `${model}: window ${fmt(t.contextWindow)}, effective ${fmt(window)}` }),
    h('span', { class: 'legend legend-warning', text: `warning ${fmt(t.warningThreshold)}` }),
    h('span', { class: 'legend legend-error', text: `error ${fmt(t.errorThreshold)}` }),
    h('span', { class: 'legend legend-auto', text: t.autoCompactEnabled ? `auto-compact ${fmt(t.autoCompactThreshold)}` : 'auto-compact off' }),
    h('span', { class: 'legend legend-blocking', text: `blocking ${fmt(t.blockingLimit)}` }),
  );
}

// ---- Controls and mode -----------------------------------------------------------------------

function updateControls() {
  const busy = Boolean(session.busy);
  const ready = Boolean(session.chat);
  const isOnline = online();
  const hasConversation = ready && session.chat.length > 0;

  document.body.dataset.mode = isOnline ? 'online' : 'offline';
  document.body.dataset.busy = busy ? session.busy.kind : '';
  const mode = $('mode');
  mode.dataset.mode = isOnline ? 'online' : 'offline';
  mode.textContent = isOnline
    ? `Online · ${settings.model} via ${new URL(baseURL()).host}`
    : 'Offline · compaction only (no API key)';
  $('connection-state').textContent = isOnline ? 'online' : 'offline';
  $('connection-state').dataset.mode = isOnline ? 'online' : 'offline';

  const input = /** @type {HTMLTextAreaElement} */ ($('composer-input'));
  input.disabled = !ready;
  input.placeholder = isOnline
    ? `Message ${settings.model}…  (/compact [instructions] to compact now)`
    : 'Offline mode: the assistant is off. Type /compact [instructions] to compact, or add an API key to chat.';
  /** @type {HTMLButtonElement} */ ($('send-button')).disabled = !ready || busy;
  $('stop-button').hidden = !busy;
  $('forget-key').toggleAttribute('disabled', !settings.apiKey && !/** @type {HTMLInputElement} */ ($('api-key')).value);

  $('file-actions').hidden = !hasConversation && !session.file;
  /** @type {HTMLButtonElement} */ ($('preview-button')).disabled = busy || !hasConversation;
  /** @type {HTMLButtonElement} */ ($('compact-offline')).disabled = busy || !hasConversation;
  const download = /** @type {HTMLButtonElement} */ ($('download-button'));
  download.disabled = busy || session.history.length === 0;
  download.textContent = session.compactions > 0 ? 'Download compacted .jsonl' : 'Download .jsonl';
  /** @type {HTMLButtonElement} */ ($('open-file')).disabled = busy;
  /** @type {HTMLButtonElement} */ ($('open-demo')).disabled = busy;
  /** @type {HTMLButtonElement} */ ($('new-chat')).disabled = busy || (!hasConversation && !session.file);

  const info = [];
  if (session.file) info.push(session.file.name);
  if (ready) info.push(`${fmt(session.chat.length)} lines in the live conversation`);
  if (session.compactions) info.push(`${session.compactions} compaction${session.compactions > 1 ? 's' : ''} here`);
  $('conversation-info').textContent = info.join(' · ');
}

// ---- Rendering the conversation ----------------------------------------------------------------

/** Text of a tool result's content (a string or blocks). */
function toolResultText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => (b && b.type === 'text' ? b.text : b && b.type === 'image' ? '[image]' : b && b.type ? `[${b.type}]` : ''))
    .join('\n');
}

/** A one-line description of a tool call's input. */
function describeInput(input) {
  if (!input || typeof input !== 'object') return '';
  for (const k of ['file_path', 'command', 'pattern', 'path', 'url', 'query', 'description', 'prompt', 'skill']) {
    if (typeof input[k] === 'string') return input[k].split('\n')[0].slice(0, 160);
  }
  return JSON.stringify(input).slice(0, 160);
}

/** Plain text with ``` fences as code blocks (never HTML). */
function richText(text) {
  const out = document.createDocumentFragment();
  const fence = /```[^\n`]*\n([\s\S]*?)```/g;
  let last = 0;
  for (const m of text.matchAll(fence)) {
    const before = text.slice(last, m.index).replace(/^\n+|\n+$/g, '');
    if (before) out.append(h('div', { class: 'text', text: before }));
    out.append(h('pre', { class: 'code' }, h('code', { text: m[1] })));
    last = m.index + m[0].length;
  }
  const rest = last > 0 ? text.slice(last).replace(/^\n+/, '') : text.slice(last);
  if (rest) out.append(h('div', { class: 'text', text: rest }));
  return out;
}

function bubble(role, label, body, extra = {}) {
  return h(
    'li',
    { class: `msg msg-${role}`, ...extra },
    h('div', { class: 'msg-role', text: label }),
    h('div', { class: 'msg-body' }, body),
  );
}

/** A collapsed block whose (long) content is rendered only when opened. */
function lazyDetails(cls, summary, getText, max = 20000) {
  const pre = h('pre', { class: 'detail-text' });
  const d = h('details', { class: cls }, h('summary', {}, summary), pre);
  d.addEventListener('toggle', () => {
    if (d.open && !pre.textContent) pre.textContent = clip(getText(), max);
  });
  return h('li', { class: `msg-detail ${cls}-item` }, d);
}

function boundaryItem(line) {
  const meta = line.compactMetadata && typeof line.compactMetadata === 'object' ? line.compactMetadata : {};
  const bits = ['Conversation compacted'];
  if (meta.trigger) bits.push(`${meta.trigger}`);
  if (typeof meta.preTokens === 'number') bits.push(`${fmt(meta.preTokens)} tokens before`);
  return h(
    'li',
    { class: 'boundary', dataset: { trigger: meta.trigger ?? '' } },
    h('span', { text: bits.join(' · ') }),
  );
}

/** The text of a summary line, without the preamble when the <summary> tags are there. */
function summaryTextOf(line) {
  const c = line.message?.content;
  const text = typeof c === 'string' ? c : Array.isArray(c) ? c.filter((b) => b?.type === 'text').map((b) => b.text).join('\n') : '';
  const m = /<summary>\n?([\s\S]*?)\n?<\/summary>/.exec(text);
  return m ? m[1] : text;
}

function summaryItem(text, note, extra) {
  const li = h(
    'li',
    { class: 'summary-card' },
    h('div', { class: 'summary-head' }, h('h3', { class: 'summary-title', text: 'Compaction summary' }), note ? h('span', { class: 'muted', text: note }) : null),
    h('div', { class: 'summary-body', tabindex: '0', 'aria-label': 'Summary text' }, richText(clip(text, 200000))),
    extra ?? null,
  );
  return li;
}

/** The elements of one transcript line (none for lines a reader does not need). */
function renderLine(line) {
  if (!line || typeof line !== 'object' || line.isSidechain === true) return [];
  if (line.type === 'system') {
    if (line.subtype === 'compact_boundary') return [boundaryItem(line)];
    return [];
  }
  const m = line.message;
  if (!m || typeof m !== 'object') return [];
  if (line.type === 'user') {
    if (line.isCompactSummary === true) return [summaryItem(summaryTextOf(line), 'written at compaction')];
    if (line.isMeta === true) return [];
    if (typeof m.content === 'string') return m.content ? [bubble('user', 'You', richText(clip(m.content, 8000)))] : [];
    const out = [];
    for (const b of Array.isArray(m.content) ? m.content : []) {
      if (!b || typeof b !== 'object') continue;
      if (b.type === 'text' && b.text) out.push(bubble('user', 'You', richText(clip(b.text, 8000))));
      else if (b.type === 'image') out.push(bubble('user', 'You', h('span', { class: 'chip', text: '[image]' })));
      else if (b.type === 'tool_result') {
        const text = toolResultText(b.content);
        const label = `${b.is_error ? '✗ error' : '↳ result'} · ${fmt(text.length)} characters`;
        out.push(lazyDetails(b.is_error ? 'tool-result tool-error' : 'tool-result', label, () => text));
      }
    }
    return out;
  }
  if (line.type === 'assistant') {
    const out = [];
    for (const b of Array.isArray(m.content) ? m.content : []) {
      if (!b || typeof b !== 'object') continue;
      if (b.type === 'text' && b.text) out.push(bubble('assistant', 'Claude', richText(clip(b.text, 8000))));
      else if (b.type === 'tool_use') {
        out.push(
          h(
            'li',
            { class: 'msg-detail tool-call' },
            h('span', { class: 'tool-name', text: `⚙ ${b.name}` }),
            h('span', { class: 'tool-input', text: describeInput(b.input) }),
          ),
        );
      } else if (b.type === 'thinking' && b.thinking) {
        out.push(lazyDetails('thinking', `thinking · ${fmt(b.thinking.length)} characters`, () => b.thinking));
      }
    }
    return out;
  }
  return [];
}

const conversationEl = () => $('conversation');

function scrollToEnd(force = false) {
  const sc = $('conversation-scroll');
  const near = sc.scrollHeight - sc.scrollTop - sc.clientHeight < 160;
  if (force || near) sc.scrollTop = sc.scrollHeight;
}

/** Renders the whole record (history) into the conversation pane. */
function renderConversation() {
  const list = conversationEl();
  const log = $('conversation-scroll');
  const frag = document.createDocumentFragment();
  for (const line of session.history) for (const el of renderLine(line)) frag.append(el);
  const empty = $('empty-state');
  // A whole session at once is not read out by screen readers: only what is added later.
  log.setAttribute('aria-live', 'off');
  list.replaceChildren(empty, frag);
  empty.hidden = session.history.length > 0;
  scrollToEnd(true);
  setTimeout(() => log.setAttribute('aria-live', 'polite'), 0);
}

function appendItems(items) {
  $('empty-state').hidden = true;
  conversationEl().append(...items);
  scrollToEnd(true);
}

// ---- Progress of a compaction ------------------------------------------------------------------

const PHASES = {
  start: 'Starting',
  preCompactHook: 'PreCompact hooks',
  summarizing: 'Writing the summary',
  retryPromptTooLong: 'Request too long: dropping the oldest rounds',
  retryTransient: 'Transient error: retrying',
  summarized: 'Summary received',
  restoring: 'Restoring files and skills',
  sessionStartHook: 'SessionStart hooks',
  postCompactHook: 'PostCompact hooks',
  done: 'Done',
};

const progress = {
  chars: 0,
  tail: '',
  phases: /** @type {string[]} */ ([]),
  startedAt: 0,
  open(title) {
    this.chars = 0;
    this.tail = '';
    this.phases = [];
    this.startedAt = performance.now();
    $('progress-title').textContent = title;
    $('progress-phase').textContent = '';
    $('progress-chars').textContent = '';
    $('progress-steps').replaceChildren();
    $('progress-text').textContent = '';
    $('progress').hidden = false;
    $('progress').dataset.phase = '';
  },
  event(e) {
    if (!e || typeof e.phase !== 'string') return;
    if ($('progress').hidden) this.open(session.busy?.kind === 'chat' ? 'Auto-compacting' : 'Compacting');
    this.phases.push(e.phase);
    const label = PHASES[e.phase] ?? e.phase;
    const detail = [e.attempt > 1 ? `attempt ${e.attempt}` : '', typeof e.tokens === 'number' ? `${fmt(e.tokens)} tokens` : '', e.detail ?? '']
      .filter(Boolean)
      .join(', ');
    $('progress-phase').textContent = detail ? `${label} (${detail})` : label;
    $('progress').dataset.phase = e.phase;
    const steps = $('progress-steps');
    steps.lastElementChild?.classList.add('done');
    steps.append(h('li', { text: label, dataset: { phase: e.phase } }));
  },
  text(t) {
    if (typeof t !== 'string') return;
    this.chars += t.length;
    this.tail = (this.tail + t).slice(-700);
    $('progress-chars').textContent = `${fmt(this.chars)} characters of summary`;
    $('progress-text').textContent = this.tail;
  },
  close() {
    $('progress').hidden = true;
    return { phases: this.phases, chars: this.chars, ms: performance.now() - this.startedAt };
  },
};

// ---- Operations ------------------------------------------------------------------------------

/** Runs one operation at a time, with a Stop button (Esc) that aborts it. */
async function run(kind, fn, { offline: useOffline = false } = {}) {
  if (session.busy) return undefined;
  const controller = new AbortController();
  session.busy = { kind, controller, offline: useOffline, summarizer: null };
  updateControls();
  try {
    return await fn(controller.signal);
  } catch (e) {
    if (controller.signal.aborted) showError({ code: 'ABORTED', message: `${kind === 'chat' ? 'the chat turn' : 'the compaction'} was stopped; nothing was lost` });
    else showError(e, kind === 'chat' ? 'The chat turn failed' : kind === 'preview' ? 'Preview failed' : 'Compaction failed');
    return undefined;
  } finally {
    if (!$('progress').hidden) progress.close();
    session.busy = null;
    updateControls();
    updateMeter();
  }
}

function stopBusy() {
  session.busy?.controller.abort();
}

/** Shows a finished compaction: boundary + summary in the conversation, the panel beside it. */
function showCompaction(result) {
  const post = cc.buildPostCompactMessages(result);
  session.history.push(...post);
  $('preview').hidden = true; // it described the conversation before this compaction
  session.compactions += 1;
  const stats = progress.close();
  const summarizer = session.busy?.summarizer ?? (online() ? settings.model : 'offline summarizer');

  const items = [];
  for (const line of post) {
    if (line.type === 'system' && line.subtype === 'compact_boundary') items.push(boundaryItem(line));
    else if (line.isCompactSummary === true) {
      const loss = result.lossReport;
      const lossNote = loss
        ? h('p', { class: `loss-note ${lossCount(loss) ? 'loss-some' : 'loss-none'}` }, lossSentence(loss), ' ', h('a', { href: '#compaction-panel', text: 'Loss report →' }))
        : null;
      items.push(
        summaryItem(result.summary ?? summaryTextOf(line), `${fmt(cc.roughTokenCountEstimation(result.summary ?? ''))} tokens · ${summarizer}`, lossNote),
      );
    } else items.push(...renderLine(line).map((el) => (el.classList.add('restored'), el)));
  }
  appendItems(items);

  // The panel beside the conversation.
  const before = result.preCompactTokenCount;
  const after = result.truePostCompactTokenCount;
  const panel = $('compaction-panel');
  panel.hidden = false;
  const restored = [...(result.restoredFiles ?? []), ...(result.restoredSkills ?? [])];
  $('compaction-summary').replaceChildren(
    h(
      'dl',
      { class: 'facts' },
      fact('Trigger', result.trigger, 'trigger'),
      fact('Summarizer', summarizer, 'summarizer'),
      fact('Context', `${fmt(before)} → ${fmt(after)} tokens (${before > 0 ? `−${pct((before - after) / before, 0)}` : '–'})`, 'compaction-tokens'),
      fact('Summary', `${fmt(cc.roughTokenCountEstimation(result.summary ?? ''))} tokens, ${fmt((result.summary ?? '').length)} characters`, 'summary-size'),
      fact('Kept verbatim', `${fmt(Array.isArray(result.messagesToKeep) ? result.messagesToKeep.length : 0)} messages`, 'kept'),
      restored.length ? fact('Restored', restored.map((r) => r.path ?? r.name ?? '?').join(', '), 'restored') : null,
      fact('Steps', `${stats.phases.map((p) => PHASES[p] ?? p).join(' → ')} (${fmt(stats.ms)} ms, ${fmt(stats.chars)} characters streamed)`, 'steps'),
    ),
  );
  panel.dataset.before = String(before);
  panel.dataset.after = String(after);
  renderLossReport(result.lossReport);
  return post;
}

function lossCount(loss) {
  return (loss.files?.length ?? 0) + (loss.userMessages?.length ?? 0) + (loss.errors?.length ?? 0);
}

function lossSentence(loss) {
  const n = lossCount(loss);
  if (n === 0) return 'Nothing lost: the summary mentions every file, user message and error it replaces.';
  const parts = [];
  if (loss.files?.length) parts.push(`${loss.files.length} file${loss.files.length > 1 ? 's' : ''}`);
  if (loss.userMessages?.length) parts.push(`${loss.userMessages.length} user message${loss.userMessages.length > 1 ? 's' : ''}`);
  if (loss.errors?.length) parts.push(`${loss.errors.length} error${loss.errors.length > 1 ? 's' : ''}`);
  return `The summary does not mention ${parts.join(', ')}.`;
}

function renderLossReport(loss) {
  const el = $('loss-report');
  if (!loss || typeof loss !== 'object') {
    el.replaceChildren(h('h3', { text: 'Loss report' }), h('p', { class: 'muted', text: 'This build of the package reports no loss report.' }));
    el.dataset.count = '';
    return;
  }
  const group = (title, items, key, max = 300) =>
    h(
      'section',
      { class: 'loss-group', dataset: { group: key, count: String(items?.length ?? 0) } },
      h('h4', {}, `${title} `, h('span', { class: 'count', text: String(items?.length ?? 0) })),
      items?.length
        ? h('ul', {}, items.slice(0, 50).map((x) => h('li', { text: clip(String(x), max) })), items.length > 50 ? h('li', { class: 'muted', text: `… and ${items.length - 50} more` }) : null)
        : h('p', { class: 'muted', text: 'none missing' }),
    );
  el.dataset.count = String(lossCount(loss));
  el.replaceChildren(
    h('h3', { text: 'Loss report' }),
    h('p', { class: lossCount(loss) ? 'loss-some' : 'loss-none', text: lossSentence(loss) }),
    group('Files not named', loss.files, 'files'),
    group('User messages not mentioned', loss.userMessages, 'userMessages', 240),
    group('Errors not mentioned', loss.errors, 'errors'),
  );
}

/** `/compact [instructions]`, and the "Compact offline" button (`offline: true`). */
function compactNow({ instructions = '', offline: useOffline = false } = {}) {
  return run(
    'compact',
    async () => {
      progress.open(useOffline || !online() ? 'Compacting offline' : `Compacting with ${settings.model}`);
      const result = await session.chat.compact(instructions ? { customInstructions: instructions } : {});
      showCompaction(result);
    },
    { offline: useOffline },
  );
}

/** Auto-compaction (SPEC §6): compacts when the threshold is crossed; reports failures. */
async function autoCompact() {
  const out = await session.chat.maybeAutoCompact();
  if (out?.wasCompacted && out.compactionResult) showCompaction(out.compactionResult);
  else if (out?.error) showError(out.error, `Auto-compaction failed (${out.consecutiveFailures} in a row)`);
  if (!$('progress').hidden) progress.close();
  updateMeter();
  return out;
}

/** The Messages API request of a chat turn, from the conversation's API view. */
function chatRequest() {
  const messages = cc.toApiMessages(session.chat.messages);
  const request = {
    model: settings.model,
    max_tokens: Math.min(8192, cc.getMaxOutputTokensForModel(settings.model)),
    messages,
  };
  // A Claude Code session carries tool calls: the API wants their tools declared. They are
  // declared by name only and never offered (`tool_choice: none`): this page runs no tools.
  const names = new Set();
  for (const m of messages) {
    if (Array.isArray(m.content)) for (const b of m.content) if (b?.type === 'tool_use' && typeof b.name === 'string') names.add(b.name);
  }
  if (names.size) {
    request.tools = [...names].map((name) => ({ name, description: `${name} (used earlier in this session; not available here)`, input_schema: { type: 'object' } }));
    request.tool_choice = { type: 'none' };
  }
  return request;
}

/** One chat turn: the user's line, the streamed answer, the assistant's line, auto-compaction. */
function chatTurn(text) {
  return run('chat', async (signal) => {
    await autoCompact();
    pushLine(newLine('user', { role: 'user', content: text }));
    $('preview').hidden = true;
    appendItems(renderLine(session.history[session.history.length - 1]));
    updateMeter();
    updateControls();

    let reactiveDone = false;
    for (;;) {
      const body = h('div', { class: 'text streaming', 'aria-busy': 'true' });
      const item = h('li', { class: 'msg msg-assistant', dataset: { state: 'streaming' } }, h('div', { class: 'msg-role', text: 'Claude' }), h('div', { class: 'msg-body' }, body));
      appendItems([item]);
      let streamed = '';
      let response;
      try {
        response = await anthropic()(chatRequest(), {
          signal,
          onText: (t) => {
            streamed += t;
            body.append(t);
            updateMeter(cc.roughTokenCountEstimation(streamed));
            scrollToEnd();
          },
        });
      } catch (e) {
        body.removeAttribute('aria-busy');
        body.classList.remove('streaming');
        const overflow = e && e.code !== 'ABORTED' ? cc.parseContextOverflowError(e, e.status ?? null) : null;
        if (overflow && !reactiveDone) {
          // Reactive compaction (SPEC §13): the API said the prompt is too long; compact once
          // and send the turn again.
          item.remove();
          reactiveDone = true;
          progress.open('Prompt too long: compacting');
          showCompaction(await session.chat.compact({}));
          continue;
        }
        item.dataset.state = e?.code === 'ABORTED' ? 'stopped' : 'failed';
        if (!streamed) body.textContent = e?.code === 'ABORTED' ? '(stopped)' : '(no answer)';
        item.append(h('p', { class: 'msg-error', dataset: { code: codeOf(e) } }, h('strong', { text: codeOf(e) }), ` ${messageOf(e)}`));
        throw e;
      }
      const line = newLine(
        'assistant',
        {
          id: response.id,
          type: 'message',
          role: 'assistant',
          model: response.model ?? settings.model,
          content: response.content,
          stop_reason: response.stop_reason ?? null,
          stop_sequence: response.stop_sequence ?? null,
          usage: response.usage,
        },
        response._request_id ? { requestId: response._request_id } : {},
      );
      pushLine(line);
      item.dataset.state = 'done';
      const text = (response.content ?? []).filter((b) => b?.type === 'text').map((b) => b.text).join('');
      body.removeAttribute('aria-busy');
      body.classList.remove('streaming');
      body.replaceChildren(richText(text || streamed));
      if (response.stop_reason === 'max_tokens') item.append(h('p', { class: 'muted', text: '(cut at max_tokens)' }));
      break;
    }
    updateMeter();
    await autoCompact();
  });
}

/** The composer: a message, or /compact [instructions], or /clear. */
function submitComposer() {
  const input = /** @type {HTMLTextAreaElement} */ ($('composer-input'));
  const text = input.value.trim();
  if (!text || session.busy || !session.chat) return;
  const command = /^\/(\w+)(?:\s+([\s\S]*))?$/.exec(text);
  if (command) {
    const [, name, rest = ''] = command;
    if (name === 'compact') {
      input.value = '';
      compactNow({ instructions: rest.trim() });
      return;
    }
    if (name === 'clear') {
      input.value = '';
      resetSession();
      return;
    }
    showError({ code: 'UNKNOWN_COMMAND', message: `/${name}: the commands are /compact [instructions] and /clear` });
    return;
  }
  if (!online()) {
    showError({
      code: 'OFFLINE',
      message: 'offline mode: the assistant is off. Add an API key under Connection to chat, or type /compact to compact.',
    });
    return;
  }
  input.value = '';
  chatTurn(text);
}

// ---- Session files --------------------------------------------------------------------------

function fact(term, value, key) {
  return h('div', { class: 'fact' }, h('dt', { text: term }), h('dd', { dataset: key ? { fact: key } : undefined }, value));
}

function stateText(ws) {
  const flags = [];
  if (ws.isAboveWarningThreshold) flags.push('warning');
  if (ws.isAboveErrorThreshold) flags.push('error');
  if (ws.isAboveAutoCompactThreshold) flags.push('auto-compact');
  if (ws.isAtBlockingLimit) flags.push('blocking');
  return `${ws.percentLeft}% left · ${flags.length ? `above ${flags.join(', ')}` : 'below every threshold'}`;
}

/** Real context per call (line) against the library's estimate (dashed), with the thresholds. */
function chart(a) {
  const W = 640;
  const H = 220;
  const L = 52;
  const R = 8;
  const T = 10;
  const B = 26;
  const t = a.end.thresholds;
  const rows = a.rows;
  const max = Math.max(t.contextWindow, ...rows.map((r) => Math.max(r.realContext, r.estimate)));
  const x = (i) => L + (rows.length <= 1 ? 0 : (i / (rows.length - 1)) * (W - L - R));
  const y = (v) => T + (1 - v / max) * (H - T - B);
  const path = (key) => rows.map((r, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(r[key]).toFixed(1)}`).join('');
  const hline = (v, cls, label) => [
    s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: cls }),
    s('text', { x: W - R - 2, y: y(v) - 3, class: `${cls}-label`, 'text-anchor': 'end' }, label),
  ];
  const ticks = [];
  const step = max > 400_000 ? 200_000 : 50_000;
  for (let v = 0; v <= max; v += step) {
    ticks.push(s('line', { x1: L, x2: W - R, y1: y(v), y2: y(v), class: 'grid' }));
    ticks.push(s('text', { x: L - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'tick' }, v === 0 ? '0' : `${v / 1000}K`));
  }
  const boundaries = a.boundaries.map((b) => {
    const i = rows.findIndex((r) => r.first > b.index);
    if (i < 0) return null;
    const bx = i === 0 ? x(0) : (x(i - 1) + x(i)) / 2;
    return s('g', {}, s('line', { x1: bx, x2: bx, y1: T, y2: H - B, class: 'boundary-line' }), s('text', { x: bx + 4, y: T + 12, class: 'boundary-label' }, 'compacted'));
  });
  const desc = `Context per API call: real (solid) against the library's estimate (dashed), ${rows.length} calls; auto-compact threshold ${fmt(t.autoCompactThreshold)} tokens.`;
  return s(
    'svg',
    { viewBox: `0 0 ${W} ${H}`, class: 'chart', role: 'img', 'aria-label': desc },
    s('title', {}, desc),
    ticks,
    hline(t.effectiveWindow, 'limit', `effective window ${fmt(t.effectiveWindow)}`),
    hline(t.autoCompactThreshold, 'auto', `auto-compact ${fmt(t.autoCompactThreshold)}`),
    hline(t.warningThreshold, 'warn', `warning ${fmt(t.warningThreshold)}`),
    boundaries,
    s('path', { d: path('realContext'), class: 'real' }),
    s('path', { d: path('estimate'), class: 'estimate' }),
    s('text', { x: L, y: H - 6, class: 'tick' }, 'call 1'),
    s('text', { x: W - R, y: H - 6, class: 'tick', 'text-anchor': 'end' }, `call ${rows.length ? rows[rows.length - 1].n : 0}`),
  );
}

function renderAnalysis(a, file) {
  const el = $('analysis');
  const ws = a.end.warningState;
  const t = a.end.thresholds;
  const table = h(
    'table',
    { class: 'calls' },
    h('caption', { class: 'visually-hidden', text: 'Per API call: real context against the estimate' }),
    h('thead', {}, h('tr', {}, ['#', 'line', 'real', 'estimate', 'error'].map((c) => h('th', { scope: 'col', text: c })))),
    h(
      'tbody',
      {},
      a.rows.map((r) =>
        h(
          'tr',
          { class: r.anchored ? '' : 'unanchored' },
          h('td', { text: String(r.n) }),
          h('td', { text: String(r.lineNumber) }),
          h('td', { text: fmt(r.realContext) }),
          h('td', { text: fmt(r.estimate) }),
          h('td', { text: `${signedPct(r.error)}${r.anchored ? '' : ' *'}` }),
        ),
      ),
    ),
  );
  el.replaceChildren(
    ...[h('h3', { class: 'file-name' }, h('span', { text: file.name }), h('span', { class: 'muted', text: ` · ${kb(file.size)}` })),
    a.subAgent ? h('p', { class: 'note muted', text: 'A sub-agent session file: analysed as its own conversation.' }) : null,
    h(
      'dl',
      { class: 'facts' },
      fact('Lines', fmt(a.lineCount), 'lines'),
      fact('API calls', fmt(a.callCount), 'calls'),
      fact('Model', a.model ?? 'unknown (defaults)', 'model'),
      fact('Context now', `${fmt(a.end.tokens)} tokens of ${fmt(t.effectiveWindow)}`, 'tokens'),
      h('div', { class: `fact state-${ws.isAboveErrorThreshold ? 'error' : ws.isAboveWarningThreshold ? 'warning' : 'ok'}` }, h('dt', { text: 'Warning state' }), h('dd', { dataset: { fact: 'warning-state' }, text: stateText(ws) })),
      fact('Auto-compact', `${a.end.shouldAutoCompact ? 'due now' : 'not due'} (threshold ${fmt(t.autoCompactThreshold)})`, 'should-compact'),
      fact(
        'Compactions',
        a.boundaries.length
          ? a.boundaries.map((b) => `line ${b.lineNumber} (${b.trigger ?? '?'}, ${fmt(b.preTokens)} tokens before)`).join('; ')
          : 'none',
        'boundaries',
      ),
      fact(
        'Estimate',
        `median |error| ${pct(a.stats.anchored.median, 2)}, p90 ${pct(a.stats.anchored.p90, 2)} over ${a.stats.anchored.count} anchored calls`,
        'accuracy',
      ),
      fact('Micro-compaction', `would clear ${fmt(a.microCompact.resultsCleared)} tool results, about ${fmt(a.microCompact.tokensFreed)} tokens`, 'micro'),
    ),
    chart(a),
    h('p', { class: 'chart-legend muted' }, h('span', { class: 'key key-real' }), ' real context (usage)  ', h('span', { class: 'key key-estimate' }), ' our estimate before the call'),
    h('details', { class: 'calls-details' }, h('summary', { text: `Per-call context: real vs estimated (${a.rows.length} calls; * = no earlier usage to anchor on)` }), h('div', { class: 'table-scroll', tabindex: '0' }, table)),
    ].filter(Boolean),
  );
  el.hidden = false;
}

/** Parses, analyses and opens a session file's text. */
function openText(name, text, size = text.length) {
  if (session.busy) return;
  let lines;
  try {
    lines = cc.parseTranscript(text);
    lines.forEach((l, i) => {
      if (!l || typeof l !== 'object' || typeof l.type !== 'string') {
        throw Object.assign(new Error(`line ${i + 1}: a Claude Code transcript line needs a string "type"`), { code: 'MALFORMED_TRANSCRIPT' });
      }
    });
  } catch (e) {
    showError(e, `Cannot open ${name}`);
    return;
  }
  let analysis;
  try {
    analysis = analyzeLines(cc, lines);
  } catch (e) {
    showError(e, `Cannot analyse ${name}`);
    return;
  }
  const file = { name, size, analysis };
  if (analysis.model && analysis.model !== settings.model) {
    settings.model = analysis.model;
    /** @type {HTMLInputElement} */ ($('model')).value = analysis.model;
  }
  resetSession({ lines: analysis.lines, file });
  renderAnalysis(analysis, file);
  document.body.dataset.file = name;
  $('analysis').focus?.();
}

async function openFile(file) {
  if (!file) return;
  if (!/\.(jsonl|json|txt)$/i.test(file.name) && file.type && !/json|text/.test(file.type)) {
    showError({ code: 'UNSUPPORTED_FILE', message: `${file.name}: not a .jsonl session file` });
    return;
  }
  let text;
  try {
    text = await file.text();
  } catch (e) {
    showError(e, `Cannot read ${file.name}`);
    return;
  }
  openText(file.name, text, file.size);
}

// ---- Preview ----------------------------------------------------------------------------------

/** A readable rendering of whatever previewCompaction returns (numbers, flags, lists). */
function renderValue(value, depth = 0) {
  if (value === null || value === undefined) return h('span', { class: 'muted', text: '–' });
  if (typeof value === 'number') return h('span', { text: fmt(value) });
  if (typeof value === 'boolean') return h('span', { class: value ? 'yes' : 'no', text: value ? 'yes' : 'no' });
  if (typeof value === 'string') return h('span', { text: clip(value, 300) });
  if (Array.isArray(value)) {
    if (value.length === 0) return h('span', { class: 'muted', text: 'none' });
    return h(
      'ul',
      { class: 'plain' },
      value.slice(0, 30).map((v) => {
        if (v && typeof v === 'object' && !Array.isArray(v)) {
          const name = v.path ?? v.name ?? v.toolUseId ?? v.id;
          const rest = Object.entries(v).filter(([k]) => !['path', 'name', 'toolUseId', 'id', 'content'].includes(k));
          return h('li', {}, name ? h('code', { text: String(name) }) : null, rest.length ? ` ${rest.map(([k, x]) => `${humanKey(k)} ${typeof x === 'number' ? fmt(x) : String(x)}`).join(', ')}` : '');
        }
        return h('li', {}, renderValue(v, depth + 1));
      }),
      value.length > 30 ? h('li', { class: 'muted', text: `… and ${value.length - 30} more` }) : null,
    );
  }
  if (typeof value === 'object') {
    if (depth > 1) return h('code', { text: clip(JSON.stringify(value), 200) });
    return h('dl', { class: 'facts nested' }, Object.entries(value).map(([k, v]) => fact(humanKey(k), renderValue(v, depth + 1), k)));
  }
  return h('span', { text: String(value) });
}

function humanKey(k) {
  return k.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/_/g, ' ').toLowerCase();
}

/** The preview (previewCompaction): what compacting now would do, known fields first. */
function renderPreview(p) {
  const known = new Set(['tokensBefore', 'estimatedTokensAfter', 'estimatedSummaryTokens', 'threshold', 'isAboveThreshold', 'microCompact', 'restoredFiles', 'restoredSkills']);
  const before = p.tokensBefore;
  const after = p.estimatedTokensAfter;
  const mc = p.microCompact ?? {};
  const items = (list, what) =>
    Array.isArray(list) && list.length
      ? h('ul', { class: 'plain' }, list.slice(0, 30).map((r) => h('li', {}, h('code', { text: String(r.path ?? r.name ?? '?') }), typeof r.tokens === 'number' ? ` · ${fmt(r.tokens)} tokens` : '')))
      : h('span', { class: 'muted', text: `no ${what}` });
  const rest = Object.entries(p).filter(([k]) => !known.has(k));
  return h(
    'div',
    {},
    h(
      'dl',
      { class: 'facts' },
      fact('Tokens now', fmt(before), 'preview-before'),
      fact('After (estimated)', `${fmt(after)} tokens${before > 0 && Number.isFinite(after) ? ` (−${pct((before - after) / before, 0)})` : ''}`, 'preview-after'),
      typeof p.estimatedSummaryTokens === 'number' ? fact('Summary', `about ${fmt(p.estimatedSummaryTokens)} tokens (offline summarizer)`, 'preview-summary') : null,
      fact('Threshold', `${fmt(p.threshold)} tokens · ${p.isAboveThreshold ? 'crossed: auto-compaction is due' : 'not crossed'}`, 'preview-threshold'),
      fact(
        'Micro-compaction',
        Array.isArray(mc.clearedToolUseIds) && mc.clearedToolUseIds.length
          ? h('span', {}, `would clear ${fmt(mc.clearedToolUseIds.length)} old tool results, about ${fmt(mc.tokensFreed)} tokens `, h('details', { class: 'inline-details' }, h('summary', { text: 'ids' }), h('code', { class: 'ids', text: mc.clearedToolUseIds.join(' ') })))
          : 'nothing to clear',
        'preview-micro',
      ),
      fact('Files restored', items(p.restoredFiles, 'files'), 'preview-files'),
      fact('Skills restored', items(p.restoredSkills, 'skills'), 'preview-skills'),
      rest.map(([k, v]) => fact(humanKey(k), renderValue(v, 1), k)),
    ),
  );
}

function preview() {
  if (!session.chat || session.busy) return;
  if (typeof cc.previewCompaction !== 'function') {
    showError({ code: 'PREVIEW_MISSING', message: 'this build of the package has no previewCompaction(): rebuild it (bash scripts/build.sh)' });
    return;
  }
  return run('preview', async () => {
    const p = await cc.previewCompaction(session.chat.messages, { model: settings.model, config: config() });
    const el = $('preview');
    el.replaceChildren(h('h3', { text: 'Preview: what compacting now would do (no model call)' }), p && typeof p === 'object' ? renderPreview(p) : renderValue(p));
    el.hidden = false;
    el.scrollIntoView({ block: 'nearest' });
  });
}

// ---- Download ---------------------------------------------------------------------------------

function download() {
  if (session.history.length === 0) return;
  let text;
  try {
    text = cc.serializeTranscript(session.history);
  } catch (e) {
    showError(e, 'Cannot write the transcript');
    return;
  }
  const base = (session.file?.name ?? `chat-${session.meta.sessionId}.jsonl`).replace(/\.jsonl?$/i, '');
  const name = session.compactions > 0 ? `${base}.compacted.jsonl` : `${base}.jsonl`;
  const url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// ---- Connection settings ---------------------------------------------------------------------

function loadSettingsIntoForm() {
  /** @type {HTMLInputElement} */ ($('model')).value = settings.model;
  /** @type {HTMLInputElement} */ ($('api-key')).value = settings.apiKey;
  /** @type {HTMLInputElement} */ ($('base-url')).value = settings.baseURL;
  /** @type {HTMLInputElement} */ ($('auto-pct')).value = settings.autoPct;
}

function saveSettings() {
  const model = /** @type {HTMLInputElement} */ ($('model')).value.trim() || 'claude-sonnet-4-5';
  const apiKey = /** @type {HTMLInputElement} */ ($('api-key')).value.trim();
  let base = /** @type {HTMLInputElement} */ ($('base-url')).value.trim().replace(/\/+$/, '');
  const autoPct = /** @type {HTMLInputElement} */ ($('auto-pct')).value.trim();
  if (base) {
    try {
      const u = new URL(base);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('not http(s)');
    } catch {
      showError({ code: 'INVALID_BASE_URL', message: `not an http(s) URL: ${base}` });
      return;
    }
  }
  if (autoPct !== '' && !(Number(autoPct) >= 1 && Number(autoPct) <= 100)) {
    showError({ code: 'INVALID_CONFIG', message: 'auto-compact percentage must be between 1 and 100' });
    return;
  }
  const changedCompactor = model !== settings.model || autoPct !== settings.autoPct;
  Object.assign(settings, { model, apiKey, baseURL: base === DEFAULT_BASE_URL ? '' : base, autoPct });
  store.set('model', model);
  store.set('apiKey', apiKey);
  store.set('baseURL', settings.baseURL);
  store.set('autoPct', autoPct);
  if (changedCompactor) rebuildCompactor();
  updateMeter();
  updateControls();
}

function forgetKey() {
  settings.apiKey = '';
  store.set('apiKey', '');
  /** @type {HTMLInputElement} */ ($('api-key')).value = '';
  client = null;
  clientKey = '';
  updateControls();
}

// ---- Demo transcripts ------------------------------------------------------------------------

async function loadDemoList() {
  try {
    const res = await fetch('/transcripts/index.json');
    if (!res.ok) return;
    const list = await res.json();
    if (!Array.isArray(list) || list.length === 0) return;
    const select = /** @type {HTMLSelectElement} */ ($('demo-select'));
    select.replaceChildren(...list.map((f) => h('option', { value: f.url, text: `${f.name} (${kb(f.size)})` })));
    const preferred = list.find((f) => f.name === 'cc_long_autocompact_4d5611e5.jsonl');
    if (preferred) select.value = preferred.url;
    $('demo-row').hidden = false;
  } catch {
    /* no demo list: the picker and drag and drop remain */
  }
}

async function openDemo() {
  const select = /** @type {HTMLSelectElement} */ ($('demo-select'));
  const url = select.value;
  if (!url) return;
  try {
    const res = await fetch(url);
    if (!res.ok) throw Object.assign(new Error(`${url}: HTTP ${res.status}`), { code: 'FETCH_FAILED' });
    const text = await res.text();
    openText(decodeURIComponent(url.split('/').pop() ?? 'demo.jsonl'), text, Number(res.headers.get('content-length')) || text.length);
  } catch (e) {
    showError(e, 'Cannot open the demo');
  }
}

// ---- Wiring -----------------------------------------------------------------------------------

function wire() {
  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    submitComposer();
  });
  $('composer-input').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submitComposer();
    }
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && session.busy) stopBusy();
  });
  $('stop-button').addEventListener('click', stopBusy);
  $('progress-stop').addEventListener('click', stopBusy);
  $('new-chat').addEventListener('click', () => {
    resetSession();
    $('analysis').hidden = true;
    delete document.body.dataset.file;
    $('composer-input').focus();
  });

  $('connection-form').addEventListener('submit', (e) => {
    e.preventDefault();
    saveSettings();
  });
  $('forget-key').addEventListener('click', forgetKey);
  $('api-key').addEventListener('input', updateControls);

  const fileInput = /** @type {HTMLInputElement} */ ($('file-input'));
  $('open-file').addEventListener('click', () => fileInput.click());
  fileInput.addEventListener('change', () => {
    const f = fileInput.files?.[0];
    fileInput.value = '';
    openFile(f);
  });
  $('open-demo').addEventListener('click', openDemo);
  $('preview-button').addEventListener('click', preview);
  $('compact-offline').addEventListener('click', () => compactNow({ offline: true }));
  $('download-button').addEventListener('click', download);

  // Drag and drop anywhere on the page.
  let depth = 0;
  const hasFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
  document.addEventListener('dragenter', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    depth += 1;
    $('drop-overlay').hidden = false;
  });
  document.addEventListener('dragover', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
  });
  document.addEventListener('dragleave', (e) => {
    if (!hasFiles(e)) return;
    depth = Math.max(0, depth - 1);
    if (depth === 0) $('drop-overlay').hidden = true;
  });
  document.addEventListener('drop', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    depth = 0;
    $('drop-overlay').hidden = true;
    if (session.busy) {
      showError({ code: 'BUSY', message: 'wait for the running operation to finish (or press Esc) before opening a file' });
      return;
    }
    openFile(e.dataTransfer?.files?.[0]);
  });
}

async function main() {
  wire();
  loadSettingsIntoForm();
  try {
    await init();
  } catch (e) {
    $('mode').textContent = 'The WebAssembly module failed to load';
    showError(e, 'Cannot load /pkg/web.js (build the package: bash scripts/build.sh)');
    document.body.dataset.state = 'failed';
    return;
  }
  resetSession();
  loadDemoList();
  document.body.dataset.state = 'ready';
}

main();
