// @ts-check
// Compaction: one operation at a time (with Stop), compacting now or automatically, and what
// a finished compaction shows (boundary and summary, the panel, the loss report).
import * as cc from 'context-compaction';
import { $, clip, fact, fmt, h, pct } from './dom.js';
import { asLines } from './conversation.js';
import { updateControls } from './controls.js';
import { showError } from './errors.js';
import { updateMeter } from './meter.js';
import { PHASES, progress } from './progress.js';
import { appendItems, boundaryItem, renderLine, summaryItem, summaryTextOf } from './render.js';
import { liveChat, online, session, settings } from './state.js';

/** @typedef {import('context-compaction').TranscriptLine} TranscriptLine */
/** @typedef {import('context-compaction').CompactionResult<TranscriptLine>} Result */
/** @typedef {import('context-compaction').LossReport} LossReport */

/**
 * Runs one operation at a time, with a Stop button (Esc) that aborts it.
 * @template T
 * @param {import('./state.js').Busy['kind']} kind
 * @param {(signal: AbortSignal) => Promise<T>} fn
 * @param {{offline?: boolean}} [options]
 * @returns {Promise<T | undefined>}
 */
export async function run(kind, fn, { offline: useOffline = false } = {}) {
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

export function stopBusy() {
  session.busy?.controller.abort();
}

/**
 * Shows a finished compaction: boundary + summary in the conversation, the panel beside it.
 * @param {Result} result
 * @param {{preemptive?: boolean}} [how] `preemptive`: a summary written ahead was swapped in
 */
export function showCompaction(result, how = {}) {
  const post = asLines(cc.buildPostCompactMessages(result));
  session.history.push(...post);
  $('preview').hidden = true; // it described the conversation before this compaction
  session.compactions += 1;
  const stats = progress.close();
  const summarizer = how.preemptive
    ? `written ahead by ${online() ? settings.model : 'the offline summarizer'} (no wait)`
    : (session.busy?.summarizer ?? (online() ? settings.model : 'offline summarizer'));

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
  /** @type {{path?: string, name?: string}[]} */
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

/** @param {Partial<LossReport>} loss */
function lossCount(loss) {
  return (loss.files?.length ?? 0) + (loss.userMessages?.length ?? 0) + (loss.errors?.length ?? 0);
}

/** @param {Partial<LossReport>} loss */
function lossSentence(loss) {
  const n = lossCount(loss);
  if (n === 0) return 'Nothing lost: the summary mentions every file, user message and error it replaces.';
  const parts = [];
  if (loss.files?.length) parts.push(`${loss.files.length} file${loss.files.length > 1 ? 's' : ''}`);
  if (loss.userMessages?.length) parts.push(`${loss.userMessages.length} user message${loss.userMessages.length > 1 ? 's' : ''}`);
  if (loss.errors?.length) parts.push(`${loss.errors.length} error${loss.errors.length > 1 ? 's' : ''}`);
  return `The summary does not mention ${parts.join(', ')}.`;
}

/** @param {Partial<LossReport> | null | undefined} loss */
function renderLossReport(loss) {
  const el = $('loss-report');
  if (!loss || typeof loss !== 'object') {
    el.replaceChildren(h('h3', { text: 'Loss report' }), h('p', { class: 'muted', text: 'This build of the package reports no loss report.' }));
    el.dataset.count = '';
    return;
  }
  /**
   * @param {string} title
   * @param {string[] | undefined} items
   * @param {string} key
   * @param {number} [max]
   */
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

/**
 * `/compact [instructions]`, and the "Compact offline" button (`offline: true`).
 * @param {{instructions?: string, offline?: boolean}} [options]
 */
export function compactNow({ instructions = '', offline: useOffline = false } = {}) {
  return run(
    'compact',
    async () => {
      progress.open(useOffline || !online() ? 'Compacting offline' : `Compacting with ${settings.model}`);
      const result = await liveChat().compact(instructions ? { customInstructions: instructions } : {});
      showCompaction(result);
    },
    { offline: useOffline },
  );
}

/** Auto-compaction (SPEC §6): compacts when the threshold is crossed; reports failures. */
export async function autoCompact() {
  const out = await liveChat().maybeAutoCompact();
  if (out?.wasCompacted && out.compactionResult) showCompaction(out.compactionResult, { preemptive: out.preemptive === true });
  else if (out?.error) showError(out.error, `Auto-compaction failed (${out.consecutiveFailures} in a row)`);
  if (!$('progress').hidden) progress.close();
  updateMeter();
  return out;
}
