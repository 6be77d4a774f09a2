// @ts-check
// The chat: a turn sent to the Messages API (streamed), reactive compaction when the prompt is
// too long, automatic compaction around each turn, and the composer's commands.
import * as cc from 'context-compaction';
import { compactNow, autoCompact, run, showCompaction } from './compaction.js';
import { anthropic, asLines, newLine, pushLine, resetSession } from './conversation.js';
import { updateControls } from './controls.js';
import { $, h } from './dom.js';
import { codeOf, messageOf, showError } from './errors.js';
import { updateMeter } from './meter.js';
import { progress } from './progress.js';
import { appendItems, renderLine, richText, scrollToEnd } from './render.js';
import { liveChat, online, session, settings } from './state.js';

/** @typedef {import('context-compaction').AnthropicMessagesRequest} MessagesRequest */
/** @typedef {import('context-compaction').AnthropicMessagesResponse} MessagesResponse */

/**
 * The Messages API request of a chat turn, from the conversation's API view.
 * @returns {MessagesRequest}
 */
function chatRequest() {
  // The API view is a Messages API conversation; js/anthropic.d.ts's block params declare fewer
  // block shapes than index.d.ts's ContentBlock (server tool blocks, any block in a tool
  // result), so the two types do not line up: the one cast of the page.
  const messages = /** @type {MessagesRequest['messages']} */ (/** @type {unknown} */ (cc.toApiMessages(asLines(liveChat().messages))));
  /** @type {MessagesRequest} */
  const request = {
    model: settings.model,
    max_tokens: Math.min(8192, cc.getMaxOutputTokensForModel(settings.model)),
    messages,
  };
  // A Claude Code session carries tool calls: the API wants their tools declared. They are
  // declared by name only and never offered (`tool_choice: none`): this page runs no tools.
  /** @type {Set<string>} */
  const names = new Set();
  for (const m of messages) {
    if (Array.isArray(m.content)) for (const b of m.content) if (b?.type === 'tool_use' && typeof b.name === 'string') names.add(b.name);
  }
  if (names.size) {
    request.tools = [...names].map((name) => ({ name, description: `${name} (used earlier in this session; not available here)`, input_schema: { type: 'object' } }));
    request.tool_choice = { type: 'none' };
  }
  return request;
}

/**
 * One chat turn: the user's line, the streamed answer, the assistant's line, auto-compaction.
 * @param {string} text
 */
function chatTurn(text) {
  return run('chat', async (signal) => {
    await autoCompact();
    pushLine(newLine('user', { role: 'user', content: text }));
    $('preview').hidden = true;
    appendItems(renderLine(session.history[session.history.length - 1]));
    updateMeter();
    updateControls();

    let reactiveDone = false;
    for (;;) {
      const body = h('div', { class: 'text streaming', 'aria-busy': 'true' });
      const item = h('li', { class: 'msg msg-assistant', dataset: { state: 'streaming' } }, h('div', { class: 'msg-role', text: 'Claude' }), h('div', { class: 'msg-body' }, body));
      appendItems([item]);
      let streamed = '';
      /** @type {MessagesResponse} */
      let response;
      try {
        response = await anthropic()(chatRequest(), {
          signal,
          onText: (t) => {
            streamed += t;
            body.append(t);
            updateMeter(cc.roughTokenCountEstimation(streamed));
            scrollToEnd();
          },
        });
      } catch (err) {
        const e = /** @type {{code?: unknown, status?: number} | null | undefined} */ (err);
        body.removeAttribute('aria-busy');
        body.classList.remove('streaming');
        const overflow = e && e.code !== 'ABORTED' ? cc.parseContextOverflowError(e, e.status ?? null) : null;
        if (overflow && !reactiveDone) {
          // Reactive compaction (SPEC §13): the API said the prompt is too long; compact once
          // and send the turn again.
          item.remove();
          reactiveDone = true;
          progress.open('Prompt too long: compacting');
          showCompaction(await liveChat().compact({}));
          continue;
        }
        item.dataset.state = e?.code === 'ABORTED' ? 'stopped' : 'failed';
        if (!streamed) body.textContent = e?.code === 'ABORTED' ? '(stopped)' : '(no answer)';
        item.append(h('p', { class: 'msg-error', dataset: { code: codeOf(e) } }, h('strong', { text: codeOf(e) }), ` ${messageOf(e)}`));
        throw e;
      }
      const line = newLine(
        'assistant',
        {
          id: response.id,
          type: 'message',
          role: 'assistant',
          model: response.model ?? settings.model,
          content: response.content,
          stop_reason: response.stop_reason ?? null,
          stop_sequence: response.stop_sequence ?? null,
          usage: response.usage,
        },
        response._request_id ? { requestId: response._request_id } : {},
      );
      pushLine(line);
      item.dataset.state = 'done';
      const text = (response.content ?? []).filter((b) => b?.type === 'text').map((b) => /** @type {{text: string}} */ (b).text).join('');
      body.removeAttribute('aria-busy');
      body.classList.remove('streaming');
      body.replaceChildren(richText(text || streamed));
      if (response.stop_reason === 'max_tokens') item.append(h('p', { class: 'muted', text: '(cut at max_tokens)' }));
      break;
    }
    updateMeter();
    await autoCompact();
  });
}

/** The composer: a message, or /compact [instructions], or /clear. */
export function submitComposer() {
  const input = /** @type {HTMLTextAreaElement} */ ($('composer-input'));
  const text = input.value.trim();
  if (!text || session.busy || !session.chat) return;
  const command = /^\/(\w+)(?:\s+([\s\S]*))?$/.exec(text);
  if (command) {
    const [, name, rest = ''] = command;
    if (name === 'compact') {
      input.value = '';
      compactNow({ instructions: rest.trim() });
      return;
    }
    if (name === 'clear') {
      input.value = '';
      resetSession();
      return;
    }
    showError({ code: 'UNKNOWN_COMMAND', message: `/${name}: the commands are /compact [instructions] and /clear` });
    return;
  }
  if (!online()) {
    showError({
      code: 'OFFLINE',
      message: 'offline mode: the assistant is off. Add an API key under Connection to chat, or type /compact to compact.',
    });
    return;
  }
  input.value = '';
  chatTurn(text);
}
