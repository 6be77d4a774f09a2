// @ts-check
// Errors: shown with their stable code, dismissible.
import { $, h } from './dom.js';

/**
 * The stable code of an error: the library's and the summarizer's `code`, else its name.
 * @param {unknown} e
 */
export function codeOf(e) {
  const o = /** @type {{code?: unknown, name?: unknown} | null} */ (e);
  if (o && typeof o === 'object' && typeof o.code === 'string') return o.code;
  if (o && typeof o === 'object' && typeof o.name === 'string' && o.name !== 'Error') return o.name;
  return 'ERROR';
}

/** @param {unknown} e */
export function messageOf(e) {
  const o = /** @type {{message?: unknown} | null} */ (e);
  if (o && typeof o === 'object' && typeof o.message === 'string') return o.message;
  return String(e);
}

/**
 * Shows an error (dismissible), with its code.
 * @param {unknown} e
 * @param {string} [what]
 */
export function showError(e, what) {
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
