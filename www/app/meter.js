// @ts-check
// The context meter: the Compactor's count against the model's thresholds.
import * as cc from 'context-compaction';
import { thresholdsFor } from '../analysis.js';
import { $, fmt, h } from './dom.js';
import { showBackground } from './progress.js';
import { config, session, settings } from './state.js';

/**
 * Updates the meter from the Compactor's count (plus `extra` tokens streaming in).
 * @param {number} [extra]
 */
export function updateMeter(extra = 0) {
  if (!session.chat) return;
  const cfg = config();
  const model = settings.model;
  const tokens = session.chat.tokenCount() + extra;
  const ws = cc.calculateTokenWarningState(tokens, model, cfg);
  const t = thresholdsFor(cc, model, cfg);
  const window = t.effectiveWindow;
  const at = (/** @type {number} */ n) => `${Math.min(100, Math.max(0, (n / window) * 100)).toFixed(2)}%`;
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
  showBackground();
}
