// @ts-check
// The context-compaction web page: a chat with Claude (the user's key, the Messages API over
// fetch, streamed), a context meter, automatic and manual compaction with progress and a
// loss report, and an analyser/compactor for Claude Code session files. Plain ES modules, no
// framework, no build step. This module wires the page; the sections live in app/ (state.js,
// conversation.js, meter.js, controls.js, render.js, progress.js, compaction.js, chat.js,
// files.js, preview.js, connection.js, dom.js, errors.js). The package is imported as
// `context-compaction` (index.html's import map: /pkg/web.js).
//
// The conversation is always a list of Claude Code transcript lines held by one `Compactor`
// (the library keeps the running token count); `session.history` is the append-only record of
// every line, i.e. the session file: an opened file's lines, then what each compaction wrote
// (boundary, summary, …) and every chat turn. "Download" writes that record with
// `serializeTranscript`, so Claude Code resumes after the last boundary.

import init from 'context-compaction';
import { submitComposer } from './app/chat.js';
import { compactNow, stopBusy } from './app/compaction.js';
import { forgetKey, loadSettingsIntoForm, saveSettings } from './app/connection.js';
import { resetSession } from './app/conversation.js';
import { updateControls } from './app/controls.js';
import { $ } from './app/dom.js';
import { showError } from './app/errors.js';
import { download, loadDemoList, openDemo, openFile } from './app/files.js';
import { preview } from './app/preview.js';
import { session } from './app/state.js';

// ---- Wiring -----------------------------------------------------------------------------------

function wire() {
  $('composer').addEventListener('submit', (e) => {
    e.preventDefault();
    submitComposer();
  });
  $('composer-input').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      submitComposer();
    }
  });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && session.busy) stopBusy();
  });
  $('stop-button').addEventListener('click', stopBusy);
  $('progress-stop').addEventListener('click', stopBusy);
  $('new-chat').addEventListener('click', () => {
    resetSession();
    $('analysis').hidden = true;
    delete document.body.dataset.file;
    $('composer-input').focus();
  });

  $('connection-form').addEventListener('submit', (e) => {
    e.preventDefault();
    saveSettings();
  });
  $('forget-key').addEventListener('click', forgetKey);
  $('api-key').addEventListener('input', updateControls);

  const fileInput = /** @type {HTMLInputElement} */ ($('file-input'));
  $('open-file').addEventListener('click', () => fileInput.click());
  fileInput.addEventListener('change', () => {
    const f = fileInput.files?.[0];
    fileInput.value = '';
    openFile(f);
  });
  $('open-demo').addEventListener('click', openDemo);
  $('preview-button').addEventListener('click', preview);
  $('compact-offline').addEventListener('click', () => compactNow({ offline: true }));
  $('download-button').addEventListener('click', download);

  // Drag and drop anywhere on the page.
  let depth = 0;
  /** @param {DragEvent} e */
  const hasFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes('Files');
  document.addEventListener('dragenter', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    depth += 1;
    $('drop-overlay').hidden = false;
  });
  document.addEventListener('dragover', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
  });
  document.addEventListener('dragleave', (e) => {
    if (!hasFiles(e)) return;
    depth = Math.max(0, depth - 1);
    if (depth === 0) $('drop-overlay').hidden = true;
  });
  document.addEventListener('drop', (e) => {
    if (!hasFiles(e)) return;
    e.preventDefault();
    depth = 0;
    $('drop-overlay').hidden = true;
    if (session.busy) {
      showError({ code: 'BUSY', message: 'wait for the running operation to finish (or press Esc) before opening a file' });
      return;
    }
    openFile(e.dataTransfer?.files?.[0]);
  });
}

async function main() {
  wire();
  loadSettingsIntoForm();
  try {
    await init();
  } catch (e) {
    $('mode').textContent = 'The WebAssembly module failed to load';
    showError(e, 'Cannot load /pkg/web.js (build the package: bash scripts/build.sh)');
    document.body.dataset.state = 'failed';
    return;
  }
  resetSession();
  loadDemoList();
  document.body.dataset.state = 'ready';
}

main();
