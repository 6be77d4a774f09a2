// @ts-check
// The progress of a compaction: its phases, the summary streaming in.
import { $, fmt, h } from './dom.js';
import { session } from './state.js';

/** @typedef {import('context-compaction').ProgressEvent} ProgressEvent */

/** @type {Record<string, string>} */
export const PHASES = {
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

/**
 * The status line of the summary written ahead (`preemptive`), from its progress events and the
 * Compactor's `background` state.
 * @param {ProgressEvent} [e]
 */
export function showBackground(e) {
  const el = $('background-state');
  const bg = session.chat?.background;
  if (!bg || bg.state === 'off') {
    el.hidden = true;
    return;
  }
  el.hidden = false;
  el.dataset.state = bg.state;
  const line = typeof bg.earlyLine === 'number' ? ` (early line ${fmt(bg.earlyLine)} tokens)` : '';
  const text =
    e?.phase === 'start' && typeof e.tokens === 'number'
      ? `Writing the summary ahead of ${fmt(e.tokens)} tokens`
      : bg.state === 'ready'
        ? 'Summary written ahead: ready to swap in at the threshold'
        : bg.state === 'running'
          ? 'Writing the summary ahead'
          : bg.error
            ? `Summary ahead failed (${bg.error.code}); the threshold will compact as usual`
            : 'Summary ahead: waiting for the early line';
  el.textContent = text + line;
  // The summary lands in the Compactor right after its last event: read the state again then.
  if (e?.phase === 'summarized') setTimeout(() => showBackground(), 0);
}

export const progress = {
  chars: 0,
  tail: '',
  phases: /** @type {string[]} */ ([]),
  startedAt: 0,
  /** @param {string} title */
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
  /** @param {ProgressEvent} e */
  event(e) {
    if (!e || typeof e.phase !== 'string') return;
    if (e.background) {
      // The summary written ahead: nobody waits for it, so it is a status line, not the panel.
      showBackground(e);
      return;
    }
    if ($('progress').hidden) this.open(session.busy?.kind === 'chat' ? 'Auto-compacting' : 'Compacting');
    this.phases.push(e.phase);
    const label = PHASES[e.phase] ?? e.phase;
    const attempt = 'attempt' in e ? e.attempt : undefined;
    const tokens = 'tokens' in e ? e.tokens : undefined;
    const detail = [attempt !== undefined && attempt > 1 ? `attempt ${attempt}` : '', typeof tokens === 'number' ? `${fmt(tokens)} tokens` : '', ('detail' in e ? e.detail : undefined) ?? '']
      .filter(Boolean)
      .join(', ');
    $('progress-phase').textContent = detail ? `${label} (${detail})` : label;
    $('progress').dataset.phase = e.phase;
    const steps = $('progress-steps');
    steps.lastElementChild?.classList.add('done');
    steps.append(h('li', { text: label, dataset: { phase: e.phase } }));
  },
  /** @param {string} t */
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
