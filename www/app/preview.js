// @ts-check
// The preview: what compacting now would do (previewCompaction, no model call).
import * as cc from 'context-compaction';
import { run } from './compaction.js';
import { $, clip, fact, fmt, h, pct } from './dom.js';
import { showError } from './errors.js';
import { config, liveChat, session, settings } from './state.js';

/** @typedef {import('context-compaction').CompactionPreview} CompactionPreview */
/**
 * A value of the preview: numbers, flags, text, and lists and records of them.
 * @typedef {null | undefined | number | boolean | string | PreviewList | {[key: string]: PreviewValue}} PreviewValue
 */
/** @typedef {PreviewValue[]} PreviewList */

/**
 * A readable rendering of whatever previewCompaction returns (numbers, flags, lists).
 * @param {PreviewValue} value
 * @param {number} [depth] of records in records (deeper ones are shown as JSON)
 * @returns {HTMLElement}
 */
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

/** @param {string} k a field name */
function humanKey(k) {
  return k.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/_/g, ' ').toLowerCase();
}

/**
 * The preview (previewCompaction): what compacting now would do, known fields first.
 * @param {CompactionPreview} p
 */
function renderPreview(p) {
  const known = new Set(['tokensBefore', 'estimatedTokensAfter', 'estimatedSummaryTokens', 'threshold', 'isAboveThreshold', 'microCompact', 'restoredFiles', 'restoredSkills']);
  const before = p.tokensBefore;
  const after = p.estimatedTokensAfter;
  /** @type {Partial<CompactionPreview['microCompact']>} */
  const mc = p.microCompact ?? {};
  /** @param {{path?: string, name?: string, tokens?: number}[]} list @param {string} what */
  const items = (list, what) =>
    Array.isArray(list) && list.length
      ? h('ul', { class: 'plain' }, list.slice(0, 30).map((r) => h('li', {}, h('code', { text: String(r.path ?? r.name ?? '?') }), typeof r.tokens === 'number' ? ` · ${fmt(r.tokens)} tokens` : '')))
      : h('span', { class: 'muted', text: `no ${what}` });
  /** @type {[string, PreviewValue][]} */
  const rest = Object.entries(p).filter(([k]) => !known.has(k)); // fields added later
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

export function preview() {
  if (!session.chat || session.busy) return;
  if (typeof cc.previewCompaction !== 'function') {
    showError({ code: 'PREVIEW_MISSING', message: 'this build of the package has no previewCompaction(): rebuild it (bash scripts/build.sh)' });
    return;
  }
  return run('preview', async () => {
    const p = await cc.previewCompaction(liveChat().messages, { model: settings.model, config: config() });
    const el = $('preview');
    el.replaceChildren(h('h3', { text: 'Preview: what compacting now would do (no model call)' }), p && typeof p === 'object' ? renderPreview(p) : renderValue(p));
    el.hidden = false;
    el.scrollIntoView({ block: 'nearest' });
  });
}
