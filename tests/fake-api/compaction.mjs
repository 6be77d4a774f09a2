// The Messages API's compaction answers for the fake API (server.mjs): on-demand compaction
// (beta compact-2026-09-04: one `{type: 'compaction', content, signature}` block,
// `stop_reason: 'compaction'`, usage 0), its named errors, and threshold compaction
// (the compact_20260112 edit: the block first, then the answer, `usage.iterations`).
// Streamed answers use the ordinary content-block events with `compaction_delta` deltas.
//
//   import { compactionReply, compactionError } from '../fake-api/compaction.mjs';
//   const api = await startFakeApi([compactionError.unavailable(), compactionReply('Summary.')]);

import { reply, errorBody, pieces } from './server.mjs';

let n = 0;

/**
 * The on-demand compaction answer body.
 * @param {string | null} summary `null` (or '') for a failed summary (empty content).
 * @param {{stopReason?: string, signature?: string}} [o]
 */
export function compactionBody(summary, o = {}) {
  const failed = summary === null || summary === '';
  return {
    id: `msg_compact_${++n}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-fake-1',
    content: failed ? [] : [{ type: 'compaction', content: summary, signature: o.signature ?? `sig_${n}` }],
    stop_reason: o.stopReason ?? (failed ? 'max_tokens' : 'compaction'),
    stop_sequence: null,
    usage: { input_tokens: 0, output_tokens: 0 },
  };
}

/**
 * The stream events of a compaction answer: the block opens with `content: null`, its text
 * comes in `compaction_delta` pieces, the signature in the last delta.
 * @param {ReturnType<typeof compactionBody>} body
 */
export function compactionEvents(body) {
  const events = [
    { event: 'message_start', data: { type: 'message_start', message: { ...body, content: [], stop_reason: null } } },
    { event: 'ping', data: { type: 'ping' } },
  ];
  body.content.forEach((block, index) => {
    const open = block.type === 'compaction' ? { type: 'compaction', content: null } : { type: block.type, text: '' };
    events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: open } });
    if (block.type === 'compaction') {
      const parts = pieces(block.content ?? '', 3);
      parts.forEach((p, k) => {
        const delta = { type: 'compaction_delta', content: p };
        if (k === parts.length - 1) {
          if (block.signature !== undefined) delta.signature = block.signature;
          if (block.encrypted_content !== undefined) delta.encrypted_content = block.encrypted_content;
        }
        events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta } });
      });
    } else {
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } },
      });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({
    event: 'message_delta',
    data: { type: 'message_delta', delta: { stop_reason: body.stop_reason, stop_sequence: null }, usage: body.usage },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/**
 * A reply with `body`: streamed when the request asks for it, JSON otherwise.
 * @param {any} body
 */
export function bodyReply(body) {
  // `reply.slow(0, …)` makes it a reply the server recognises (in arrays too).
  return reply.slow(0, async (res, req, api) => {
    const r = req.body && req.body.stream === true ? reply.stream('', { events: compactionEvents(body) }) : reply.json(body);
    await r(res, req, api);
  });
}

/**
 * The on-demand compaction answer (see {@link compactionBody}).
 * @param {string | null} summary
 * @param {{stopReason?: string, signature?: string}} [o]
 */
export function compactionReply(summary, o = {}) {
  return bodyReply(compactionBody(summary, o));
}

/** The named refusals of on-demand compaction, with the statuses the docs give them. */
export const compactionError = {
  unavailable: () => reply.json(errorBody('compaction_unavailable', 'Compaction is temporarily unavailable.'), { status: 529 }),
  nothingToSummarize: () =>
    reply.json(errorBody('compaction_nothing_to_summarize', 'There is nothing to summarize.'), { status: 400 }),
  misplaced: () =>
    reply.json(errorBody('compaction_block_misplaced', 'The compaction block must be the first block of the first message.'), {
      status: 400,
    }),
  signatureInvalid: () =>
    reply.json(errorBody('compaction_signature_invalid', 'The compaction block signature is invalid.'), { status: 400 }),
  contentMismatch: () =>
    reply.json(errorBody('compaction_content_mismatch', 'The compaction block content was modified.'), { status: 400 }),
};

/**
 * A threshold-compaction answer (the compact_20260112 edit): the block, then the text, with
 * `usage.iterations` (the compaction step, then the message step).
 * @param {string | null} summary `null`: a failed compaction (`content: null`).
 * @param {{text?: string, paused?: boolean}} [o]
 */
export function thresholdBody(summary, o = {}) {
  const content = [{ type: 'compaction', content: summary, encrypted_content: summary === null ? null : 'RW5jcnlwdGVk' }];
  if (!o.paused) content.push({ type: 'text', text: o.text ?? 'The tests pass now.' });
  return {
    id: `msg_threshold_${++n}`,
    type: 'message',
    role: 'assistant',
    model: 'claude-fake-1',
    content,
    stop_reason: o.paused ? 'compaction' : 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: o.paused ? 0 : 3_000,
      output_tokens: o.paused ? 0 : 40,
      iterations: [
        { type: 'compaction', input_tokens: 160_000, output_tokens: 2_800 },
        ...(o.paused ? [] : [{ type: 'message', input_tokens: 3_000, output_tokens: 40, cache_read_input_tokens: 500 }]),
      ],
    },
  };
}
