// context.summarizeInParts on the long shared session (issue 14): a summarizer whose window is a
// quarter of the conversation refuses bigger requests with the real prompt-too-long error; in
// parts, every round is summarized and the loss report is empty, where today's truncation loses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as cc from '../../pkg/node.js';
import * as h from './helpers/support.mjs';

cc.setEnvironmentDefaults({});

/** The offline summarizer behind a window of `limit` tokens (the real 400 body above it). */
function quarterWindow(limit) {
  const offline = cc.offlineSummarizer();
  const sizes = [];
  const summarize = async (request, options) => {
    const n = h.requestTextTokens(request);
    sizes.push(n);
    if (n > limit) throw h.ptlError(n, limit);
    return offline(request, options);
  };
  return Object.assign(summarize, { sizes });
}

const { before } = h.loadLongTranscript();
const limit = Math.floor(cc.tokenCountWithEstimation(before) / 4);

test('in parts: every user message and file of the long session is named, the loss report is empty', async () => {
  const summarize = quarterWindow(limit);
  const r = await cc.compactConversation(before, { model: h.OPUS, summarize, summarizeInParts: true });
  assert.ok(r.summaryParts > 1, `summaryParts ${r.summaryParts}`);
  assert.deepEqual(r.lossReport, { files: [], userMessages: [], errors: [] });
  assert.ok(summarize.sizes.filter((n) => n <= limit).length >= r.summaryParts);
});

test('without it, today\'s truncation drops rounds and the loss report names what they held', async () => {
  const summarize = quarterWindow(limit);
  const r = await cc.compactConversation(before, { model: h.OPUS, summarize });
  const lost = r.lossReport.files.length + r.lossReport.userMessages.length;
  assert.ok(lost > 0, JSON.stringify(r.lossReport));
});
