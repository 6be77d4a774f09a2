// @ts-check
// Controls and mode: what is enabled, the mode line, the conversation's info line.
import { $, fmt } from './dom.js';
import { baseURL, online, session, settings } from './state.js';

export function updateControls() {
  const busy = Boolean(session.busy);
  const ready = Boolean(session.chat);
  const isOnline = online();
  const hasConversation = ready && (session.chat?.length ?? 0) > 0;

  document.body.dataset.mode = isOnline ? 'online' : 'offline';
  document.body.dataset.busy = session.busy ? session.busy.kind : '';
  const mode = $('mode');
  mode.dataset.mode = isOnline ? 'online' : 'offline';
  mode.textContent = isOnline
    ? `Online · ${settings.model} via ${new URL(baseURL()).host}`
    : settings.apiKey
      ? 'Offline · compaction only (the API key is kept back: the base URL is not https://)'
      : 'Offline · compaction only (no API key)';
  $('connection-state').textContent = isOnline ? 'online' : 'offline';
  $('connection-state').dataset.mode = isOnline ? 'online' : 'offline';

  const input = /** @type {HTMLTextAreaElement} */ ($('composer-input'));
  input.disabled = !ready;
  input.placeholder = isOnline
    ? `Message ${settings.model}…  (/compact [instructions] to compact now)`
    : 'Offline mode: the assistant is off. Type /compact [instructions] to compact, or add an API key to chat.';
  /** @type {HTMLButtonElement} */ ($('send-button')).disabled = !ready || busy;
  $('stop-button').hidden = !busy;
  $('forget-key').toggleAttribute('disabled', !settings.apiKey && !/** @type {HTMLInputElement} */ ($('api-key')).value);

  $('file-actions').hidden = !hasConversation && !session.file;
  /** @type {HTMLButtonElement} */ ($('preview-button')).disabled = busy || !hasConversation;
  /** @type {HTMLButtonElement} */ ($('compact-offline')).disabled = busy || !hasConversation;
  const download = /** @type {HTMLButtonElement} */ ($('download-button'));
  download.disabled = busy || session.history.length === 0;
  download.textContent = session.compactions > 0 ? 'Download compacted .jsonl' : 'Download .jsonl';
  /** @type {HTMLButtonElement} */ ($('open-file')).disabled = busy;
  /** @type {HTMLButtonElement} */ ($('open-demo')).disabled = busy;
  /** @type {HTMLButtonElement} */ ($('new-chat')).disabled = busy || (!hasConversation && !session.file);

  const info = [];
  if (session.file) info.push(session.file.name);
  if (session.chat) info.push(`${fmt(session.chat.length)} lines in the live conversation`);
  if (session.compactions) info.push(`${session.compactions} compaction${session.compactions > 1 ? 's' : ''} here`);
  $('conversation-info').textContent = info.join(' · ');
}
