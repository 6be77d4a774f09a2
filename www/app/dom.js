// @ts-check
// Rendering helpers of the page: element lookup and creation, number formats, clipping.

/**
 * The element with this id (the page's elements exist from the start).
 * @param {string} id
 */
export const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @param {unknown} n */
export const fmt = (n) => (typeof n === 'number' && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
/** @param {number} x @param {number} [digits] */
export const pct = (x, digits = 1) => (Number.isFinite(x) ? `${(x * 100).toFixed(digits)}%` : '–');
/** @param {number} x */
export const signedPct = (x) => (Number.isFinite(x) ? `${x >= 0 ? '+' : ''}${(x * 100).toFixed(2)}%` : '–');
/** @param {number} bytes */
export const kb = (bytes) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.max(1, Math.round(bytes / 1e3))} kB`);

/** @typedef {Node | string | number | null | undefined | false} Leaf */
/**
 * A child of h() and s(): nodes and text; null, undefined and false are skipped; arrays are
 * flattened.
 * @typedef {Leaf | Leaf[] | (Leaf | Leaf[])[]} Child
 */

/**
 * Creates an element: `h('p', {class: 'x', text: 'hi'}, child, …)`.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, unknown> | null} [props]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'class') el.className = /** @type {string} */ (v);
    else if (k === 'text') el.textContent = /** @type {string} */ (v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

/**
 * An SVG element.
 * @param {string} tag
 * @param {Record<string, unknown> | null} [attrs]
 * @param {...Child} children
 * @returns {SVGElement}
 */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs ?? {})) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : String(c));
  return el;
}

/**
 * Text cut to `max` characters with a note of what was left out.
 * @param {string} text
 * @param {number} max
 */
export function clip(text, max) {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… (${fmt(text.length - max)} more characters)`;
}

/**
 * One fact of a `<dl class="facts">`: a term and its value.
 * @param {string} term
 * @param {Child} value
 * @param {string} [key] `data-fact` of the value
 */
export function fact(term, value, key) {
  return h('div', { class: 'fact' }, h('dt', { text: term }), h('dd', { dataset: key ? { fact: key } : undefined }, value));
}
