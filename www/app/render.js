// @ts-check
// Rendering the conversation: transcript lines as bubbles, tool calls and results, thinking,
// compaction boundaries and summary cards.
import { $, clip, fmt, h } from './dom.js';
import { session } from './state.js';

/** @typedef {import('context-compaction').TranscriptLine} TranscriptLine */
/** @typedef {import('./dom.js').Child} Child */
/**
 * A content block as the page reads it (any field may be missing or of another type).
 * @typedef {{type?: unknown, text?: unknown, content?: unknown, is_error?: unknown, name?: unknown, input?: unknown, thinking?: unknown}} LooseBlock
 */

/**
 * Text of a tool result's content (a string or blocks).
 * @param {unknown} content
 * @returns {string}
 */
export function toolResultText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((/** @type {LooseBlock | null} */ b) => (b && b.type === 'text' ? b.text : b && b.type === 'image' ? '[image]' : b && b.type ? `[${b.type}]` : ''))
    .join('\n');
}

/**
 * A one-line description of a tool call's input.
 * @param {unknown} input
 */
export function describeInput(input) {
  if (!input || typeof input !== 'object') return '';
  const o = /** @type {Record<string, unknown>} */ (input);
  for (const k of ['file_path', 'command', 'pattern', 'path', 'url', 'query', 'description', 'prompt', 'skill']) {
    const v = o[k];
    if (typeof v === 'string') return v.split('\n')[0].slice(0, 160);
  }
  return JSON.stringify(input).slice(0, 160);
}

/**
 * Plain text with ``` fences as code blocks (never HTML).
 * @param {string} text
 */
export function richText(text) {
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

/**
 * @param {string} role
 * @param {string} label
 * @param {Child} body
 * @param {Record<string, unknown>} [extra]
 */
function bubble(role, label, body, extra = {}) {
  return h(
    'li',
    { class: `msg msg-${role}`, ...extra },
    h('div', { class: 'msg-role', text: label }),
    h('div', { class: 'msg-body' }, body),
  );
}

/**
 * A collapsed block whose (long) content is rendered only when opened.
 * @param {string} cls
 * @param {string} summary
 * @param {() => string} getText
 * @param {number} [max]
 */
function lazyDetails(cls, summary, getText, max = 20000) {
  const pre = h('pre', { class: 'detail-text' });
  const d = h('details', { class: cls }, h('summary', {}, summary), pre);
  d.addEventListener('toggle', () => {
    if (d.open && !pre.textContent) pre.textContent = clip(getText(), max);
  });
  return h('li', { class: `msg-detail ${cls}-item` }, d);
}

/** @param {TranscriptLine} line */
export function boundaryItem(line) {
  /** @type {Partial<import('context-compaction').CompactMetadata>} */
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

/**
 * The text of a summary line, without the preamble when the <summary> tags are there.
 * @param {TranscriptLine} line
 */
export function summaryTextOf(line) {
  const c = line.message?.content;
  const text = typeof c === 'string' ? c : Array.isArray(c) ? c.filter((b) => b?.type === 'text').map((b) => /** @type {LooseBlock} */ (b).text).join('\n') : '';
  const m = /<summary>\n?([\s\S]*?)\n?<\/summary>/.exec(text);
  return m ? m[1] : text;
}

/**
 * @param {string} text
 * @param {string} [note]
 * @param {Child} [extra]
 */
export function summaryItem(text, note, extra) {
  const li = h(
    'li',
    { class: 'summary-card' },
    h('div', { class: 'summary-head' }, h('h3', { class: 'summary-title', text: 'Compaction summary' }), note ? h('span', { class: 'muted', text: note }) : null),
    h('div', { class: 'summary-body', tabindex: '0', 'aria-label': 'Summary text' }, richText(clip(text, 200000))),
    extra ?? null,
  );
  return li;
}

/**
 * The elements of one transcript line (none for lines a reader does not need).
 * @param {TranscriptLine} line
 * @returns {HTMLElement[]}
 */
export function renderLine(line) {
  if (!line || typeof line !== 'object' || line.isSidechain === true) return [];
  if (line.type === 'system') {
    if (line.subtype === 'compact_boundary') return [boundaryItem(line)];
    return [];
  }
  const m = line.message;
  if (!m || typeof m !== 'object') return [];
  /** @type {LooseBlock[]} */
  const blocks = Array.isArray(m.content) ? m.content : [];
  if (line.type === 'user') {
    if (line.isCompactSummary === true) return [summaryItem(summaryTextOf(line), 'written at compaction')];
    if (line.isMeta === true) return [];
    if (typeof m.content === 'string') return m.content ? [bubble('user', 'You', richText(clip(m.content, 8000)))] : [];
    const out = [];
    for (const b of blocks) {
      if (!b || typeof b !== 'object') continue;
      if (b.type === 'text' && b.text) out.push(bubble('user', 'You', richText(clip(/** @type {string} */ (b.text), 8000))));
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
    for (const b of blocks) {
      if (!b || typeof b !== 'object') continue;
      if (b.type === 'text' && b.text) out.push(bubble('assistant', 'Claude', richText(clip(/** @type {string} */ (b.text), 8000))));
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
        const thinking = /** @type {string} */ (b.thinking);
        out.push(lazyDetails('thinking', `thinking · ${fmt(thinking.length)} characters`, () => thinking));
      }
    }
    return out;
  }
  return [];
}

const conversationEl = () => $('conversation');

/** @param {boolean} [force] */
export function scrollToEnd(force = false) {
  const sc = $('conversation-scroll');
  const near = sc.scrollHeight - sc.scrollTop - sc.clientHeight < 160;
  if (force || near) sc.scrollTop = sc.scrollHeight;
}

/** Renders the whole record (history) into the conversation pane. */
export function renderConversation() {
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

/** @param {HTMLElement[]} items */
export function appendItems(items) {
  $('empty-state').hidden = true;
  conversationEl().append(...items);
  scrollToEnd(true);
}
