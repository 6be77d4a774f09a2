// @ts-check
// Session files: opening a Claude Code .jsonl (file picker, drag and drop, the demo list), its
// analysis (facts, the chart of real context against the estimate, the per-call table), and
// downloading the record as a session file.
import * as cc from 'context-compaction';
import { analyzeLines } from '../analysis.js';
import { resetSession } from './conversation.js';
import { $, fact, fmt, h, kb, pct, s, signedPct } from './dom.js';
import { showError } from './errors.js';
import { simulationSection } from './simulation.js';
import { session, settings } from './state.js';

/** @typedef {import('./state.js').Analysis} Analysis */
/** @typedef {import('./state.js').OpenedFile} OpenedFile */

/** @param {import('context-compaction').TokenWarningState} ws */
function stateText(ws) {
  const flags = [];
  if (ws.isAboveWarningThreshold) flags.push('warning');
  if (ws.isAboveErrorThreshold) flags.push('error');
  if (ws.isAboveAutoCompactThreshold) flags.push('auto-compact');
  if (ws.isAtBlockingLimit) flags.push('blocking');
  return `${ws.percentLeft}% left · ${flags.length ? `above ${flags.join(', ')}` : 'below every threshold'}`;
}

/**
 * Real context per call (line) against the library's estimate (dashed), with the thresholds.
 * @param {Analysis} a
 */
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
  /** @param {number} i the row */
  const x = (i) => L + (rows.length <= 1 ? 0 : (i / (rows.length - 1)) * (W - L - R));
  /** @param {number} v tokens */
  const y = (v) => T + (1 - v / max) * (H - T - B);
  /** @param {'realContext' | 'estimate'} key */
  const path = (key) => rows.map((r, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(r[key]).toFixed(1)}`).join('');
  /** @param {number} v tokens @param {string} cls @param {string} label */
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

/**
 * @param {Analysis} a
 * @param {OpenedFile} file
 */
export function renderAnalysis(a, file) {
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
    .../** @type {Node[]} */ ([h('h3', { class: 'file-name' }, h('span', { text: file.name }), h('span', { class: 'muted', text: ` · ${kb(file.size)}` })),
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
    a.callCount ? simulationSection(a.lines) : null,
    ].filter(Boolean)),
  );
  el.hidden = false;
}

/**
 * Parses, analyses and opens a session file's text.
 * @param {string} name
 * @param {string} text
 * @param {number} [size] in bytes
 */
export function openText(name, text, size = text.length) {
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

/** @param {File | undefined} file from the file picker or a drop */
export async function openFile(file) {
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

// ---- Demo transcripts ------------------------------------------------------------------------

export async function loadDemoList() {
  try {
    const res = await fetch('/transcripts/index.json');
    if (!res.ok) return;
    /** @type {{name: string, size: number, url: string}[]} www/serve.mjs's list (checked below) */
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

export async function openDemo() {
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

// ---- Download ---------------------------------------------------------------------------------

export function download() {
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
