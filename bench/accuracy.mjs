// The count against the API's own numbers where no usage anchors it (issue 12, "the count from
// the first request"): each row compares what the package counts before an API call of a real
// session with what that call really sent (input + cache creation + cache read tokens of its
// usage, logged in the transcript).
//
// Rows:
//   - the first call after each compaction boundary (no usage after the boundary: the count is
//     the line learned from the usage before it), stateless `tokenCountWithEstimation`;
//   - every call after a boundary (the later ones anchored on the latest usage);
//   - the chat page's meter right after a compaction: a `Compactor` holding the lines before
//     the boundary compacts them (its summarizer answers with the session's own summary at
//     once) and its `tokenCount()` (what www/app/meter.js shows) is compared with the next
//     request's real size;
//   - the first call of each session (info): nothing was seen yet, and no transcript carries
//     the system prompt and tools the call sent, so the count holds the messages alone.

import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/** Parses a JSONL transcript. */
const readLines = (file) => readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

const isBoundary = (l) => l.type === 'system' && l.subtype === 'compact_boundary' && l.isSidechain !== true;

/** One entry per API call of the main chain: its first line and its real input size. */
export function apiCalls(lines) {
  const seen = new Set();
  const out = [];
  lines.forEach((l, i) => {
    if (l.isSidechain === true || l.type !== 'assistant') return;
    const id = l.message?.id;
    const u = l.message?.usage;
    if (typeof id !== 'string' || !u || seen.has(id)) return;
    seen.add(id);
    const n = (x) => (typeof x === 'number' ? x : 0);
    out.push({ firstLine: i, real: n(u.input_tokens) + n(u.cache_creation_input_tokens) + n(u.cache_read_input_tokens) });
  });
  return out;
}

/** The session's own summary after a boundary, as the text a summarizer would return. */
function summaryAfter(lines, b) {
  const line = lines.slice(b + 1).find((l) => l.isCompactSummary === true);
  const c = line?.message?.content;
  if (typeof c === 'string') return c;
  return Array.isArray(c) ? c.map((x) => x.text ?? '').join('') : null;
}

const pct = (count, real) => (100 * (count - real)) / real;
const fmtPct = (x) => `${x >= 0 ? '+' : ''}${x.toFixed(1)} %`;

/**
 * Measures the rows on every transcript in `dir` (sub-agent files, `*.agent-*.jsonl`, left
 * out: they are one request each). Returns bench rows and the per-call detail.
 */
export async function measureAccuracy({ cc, dir, model }) {
  const files = readdirSync(dir).filter((f) => f.endsWith('.jsonl') && !f.includes('.agent-')).sort();
  const first = [];
  const after = [];
  const meter = [];
  const sessionStart = [];
  for (const f of files) {
    const lines = readLines(path.join(dir, f));
    const calls = apiCalls(lines);
    if (calls.length) {
      const c = calls[0];
      sessionStart.push({ file: f, count: cc.tokenCountWithEstimation(lines.slice(0, c.firstLine)), real: c.real });
    }
    const boundaries = lines.map((l, i) => (isBoundary(l) ? i : -1)).filter((i) => i >= 0);
    for (const [k, b] of boundaries.entries()) {
      const end = boundaries[k + 1] ?? lines.length;
      const inside = calls.filter((c) => c.firstLine > b && c.firstLine < end);
      inside.forEach((c, n) => {
        const count = cc.tokenCountWithEstimation(lines.slice(0, c.firstLine));
        const row = { file: f, line: c.firstLine, count, real: c.real, error: pct(count, c.real) };
        after.push(row);
        if (n === 0) first.push(row);
      });
      const summary = summaryAfter(lines, b);
      if (!inside.length || summary === null) continue;
      const response = {
        id: 'msg_accuracy', type: 'message', role: 'assistant', model, stop_reason: 'end_turn',
        content: [{ type: 'text', text: `<summary>\n${summary}\n</summary>` }],
        usage: { input_tokens: 1, output_tokens: Math.round(summary.length / 4) },
      };
      const chat = new cc.Compactor({ model, messages: lines.slice(0, b), summarize: async () => response });
      await chat.compact();
      const count = chat.tokenCount();
      meter.push({ file: f, boundary: b, count, real: inside[0].real, error: pct(count, inside[0].real) });
    }
  }
  const worst = (xs) => xs.reduce((w, x) => (Math.abs(x.error) > Math.abs(w.error) ? x : w), xs[0]);
  const rows = [];
  const pctRow = (id, name, xs, note) => {
    if (!xs.length) {
      rows.push({ id, group: 'accuracy', name, unit: '%', value: NaN, target: 10, targetText: 'within ±10 %', result: 'MISS', note: 'no such call in the shared transcripts' });
      return;
    }
    const w = worst(xs);
    const value = Math.abs(w.error);
    rows.push({
      id, group: 'accuracy', name, unit: '% off (worst)', value, target: 10, targetText: 'within ±10 %',
      result: value <= 10 ? 'PASS' : 'MISS',
      note: `${xs.length} case(s); worst ${w.file} line ${w.line ?? w.boundary}: counted ${w.count.toLocaleString('en')}, real ${w.real.toLocaleString('en')} (${fmtPct(w.error)}). ${note}`,
    });
  };
  pctRow('accuracy.firstAfterCompaction', 'first request after a compaction: tokenCountWithEstimation vs its real usage', first,
    'Nothing after the boundary carries usage: the count is the line learned from the usage before it (system prompt + tools + the conversation\'s own ratio).');
  pctRow('accuracy.afterCompaction', 'every request after a compaction: tokenCountWithEstimation vs its real usage', after,
    'The later ones are anchored on the latest usage.');
  pctRow('accuracy.meter', 'chat page meter right after a compaction (Compactor.tokenCount()) vs the next request\'s real size', meter,
    'A Compactor holding the lines before the boundary compacts them (summarizer: the session\'s own summary); its count is what www/app/meter.js shows.');
  const s = sessionStart.map((x) => `${x.file}: ${x.count.toLocaleString('en')} vs ${x.real.toLocaleString('en')}`).join('; ');
  rows.push({
    id: 'accuracy.sessionStart', group: 'accuracy', name: 'first request of a session, messages alone (no system prompt or tools given)', unit: '% off (worst)',
    value: Math.max(...sessionStart.map((x) => Math.abs(pct(x.count, x.real)))), result: 'info',
    note: `${s}. No transcript carries the system prompt and tool definitions its first call sent, so the issue's "within 5 % when they are given" cannot be measured on them; ` +
      'given as `system` and `tools` options they are counted while no usage anchors the count (tests/session.rs, tests/node/tail.test.mjs).',
  });
  return { rows, detail: { first, after, meter, sessionStart } };
}
