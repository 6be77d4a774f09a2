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
