// @ts-check
// The connection settings: model, API key, base URL, auto-compact percentage.
import { forgetClient, rebuildCompactor } from './conversation.js';
import { updateControls } from './controls.js';
import { $ } from './dom.js';
import { showError } from './errors.js';
import { updateMeter } from './meter.js';
import { DEFAULT_BASE_URL, keyRefusal, settings, store, storeKey, tabStore } from './state.js';

export function loadSettingsIntoForm() {
  /** @type {HTMLInputElement} */ ($('model')).value = settings.model;
  /** @type {HTMLInputElement} */ ($('api-key')).value = settings.apiKey;
  /** @type {HTMLInputElement} */ ($('remember-key')).checked = settings.rememberKey;
  /** @type {HTMLInputElement} */ ($('base-url')).value = settings.baseURL;
  /** @type {HTMLInputElement} */ ($('allow-local-http')).checked = settings.allowLocalHttp;
  /** @type {HTMLInputElement} */ ($('auto-pct')).value = settings.autoPct;
  /** @type {HTMLInputElement} */ ($('preemptive')).checked = settings.preemptive;
}

export function saveSettings() {
  const model = /** @type {HTMLInputElement} */ ($('model')).value.trim() || 'claude-sonnet-4-5';
  const apiKey = /** @type {HTMLInputElement} */ ($('api-key')).value.trim();
  let base = /** @type {HTMLInputElement} */ ($('base-url')).value.trim().replace(/\/+$/, '');
  const autoPct = /** @type {HTMLInputElement} */ ($('auto-pct')).value.trim();
  const rememberKey = /** @type {HTMLInputElement} */ ($('remember-key')).checked;
  const allowLocalHttp = /** @type {HTMLInputElement} */ ($('allow-local-http')).checked;
  const preemptive = /** @type {HTMLInputElement} */ ($('preemptive')).checked;
  if (base) {
    try {
      const u = new URL(base);
      if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('not http(s)');
    } catch {
      showError({ code: 'INVALID_BASE_URL', message: `not an http(s) URL: ${base}` });
      return;
    }
    // The key never goes in clear to another host: refused here, before anything is saved.
    const refusal = keyRefusal(base, allowLocalHttp);
    if (refusal !== null) {
      showError({ code: 'INSECURE_BASE_URL', message: refusal });
      return;
    }
  }
  if (autoPct !== '' && !(Number(autoPct) >= 1 && Number(autoPct) <= 100)) {
    showError({ code: 'INVALID_CONFIG', message: 'auto-compact percentage must be between 1 and 100' });
    return;
  }
  const changedCompactor = model !== settings.model || autoPct !== settings.autoPct || preemptive !== settings.preemptive;
  Object.assign(settings, { model, apiKey, rememberKey, allowLocalHttp, baseURL: base === DEFAULT_BASE_URL ? '' : base, autoPct, preemptive });
  store.set('model', model);
  storeKey(apiKey, rememberKey);
  store.set('allowLocalHttp', allowLocalHttp ? '1' : '');
  store.set('baseURL', settings.baseURL);
  store.set('autoPct', autoPct);
  store.set('preemptive', preemptive ? '1' : '');
  if (changedCompactor) rebuildCompactor();
  updateMeter();
  updateControls();
}

/** Forgets the key everywhere it may be kept (this tab and this browser). */
export function forgetKey() {
  settings.apiKey = '';
  store.set('apiKey', '');
  tabStore.set('apiKey', '');
  /** @type {HTMLInputElement} */ ($('api-key')).value = '';
  forgetClient();
  updateControls();
}
