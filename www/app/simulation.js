// @ts-check
// The simulated cost of the open session under each policy: the package's simulateSession
// (docs/simulate.md) over the opened file's lines, shown as the same side-by-side table as
// `context-compaction simulate` (its rows come from the package's analysis.mjs).
import * as cc from 'context-compaction';
import { SIMULATION_COLUMNS, simulationRows } from 'context-compaction/analysis.mjs';
import { h } from './dom.js';

/** @import { SimulationReport, TranscriptLine } from 'context-compaction' */

/**
 * The simulation of `lines` under the built-in policies, or the error it threw.
 * @param {readonly TranscriptLine[]} lines
 * @returns {Promise<{report: SimulationReport} | {error: string}>}
 */
export async function simulateLines(lines) {
  try {
    return { report: await cc.simulateSession(lines) };
  } catch (e) {
    const err = /** @type {{code?: string, message?: string}} */ (e);
    return { error: `${err.code ?? 'ERROR'}: ${err.message ?? String(e)}` };
  }
}

/**
 * The section of the analysis that shows the simulated cost per policy. It says "simulating"
 * until simulateSession answers (its WebAssembly module loads on first use), then shows the
 * table in its place.
 * @param {readonly TranscriptLine[]} lines
 */
export function simulationSection(lines) {
  const pending = h(
    'section',
    { class: 'simulation', dataset: { simulation: 'pending' } },
    h('h4', { text: 'Simulated cost of this session under each policy' }),
    h('p', { class: 'note muted', text: 'Simulating…' }),
  );
  simulateLines(lines).then((result) => pending.replaceWith(simulationResult(result)));
  return pending;
}

/**
 * The simulation section for a finished simulation (its table, or why there is none).
 * @param {{report: SimulationReport} | {error: string}} result
 */
function simulationResult(result) {
  const title = h('h4', { text: 'Simulated cost of this session under each policy' });
  if ('error' in result) {
    return h('section', { class: 'simulation', dataset: { simulation: 'error' } }, title, h('p', { class: 'note muted', text: `Not simulated: ${result.error}` }));
  }
  const r = result.report;
  const table = h(
    'table',
    { class: 'simulation-table' },
    h('caption', { class: 'visually-hidden', text: 'Simulated cost per policy' }),
    h('thead', {}, h('tr', {}, SIMULATION_COLUMNS.map((c) => h('th', { scope: 'col', text: c })))),
    h(
      'tbody',
      {},
      simulationRows(r).map((cells, i) =>
        h(
          'tr',
          { dataset: { policy: r.policies[i].name }, class: r.policies[i].name === r.recommended ? 'recommended' : '' },
          cells.map((c) => h('td', { text: c })),
        ),
      ),
    ),
  );
  const c = r.calibration;
  const p = r.prices;
  return h(
    'section',
    { class: 'simulation', dataset: { simulation: 'ok' } },
    title,
    h('div', { class: 'table-scroll', tabindex: '0' }, table),
    h(
      'p',
      { class: 'note muted' },
      `${r.model} at $${p.input} input, $${p.cacheWrite5m} cache write, $${p.cacheRead} cache read, $${p.output} output per million tokens; ` +
        `summaries of at most ${r.summaryTokens} tokens at ${r.summaryTokensPerSecond} tokens/s. ` +
        (r.recommended ? `* recommended: ${r.recommended}. ` : '') +
        (c
          ? `The cache model reproduces the recorded cache reads within ${Math.abs(c.readErrorPercent).toFixed(1)}% and writes within ${Math.abs(c.writeErrorPercent).toFixed(1)}%.`
          : 'No recorded usage to calibrate on.'),
    ),
  );
}
