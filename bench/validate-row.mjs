// The validateForApi rows of bench.mjs alone (node bench/validate-row.mjs [pkg dir]): ms per
// call of validateForApi and of JSON.stringify on the same input, batches side by side.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { activeStart, buildApiView } from './formats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dir = path.resolve(process.argv[2] ?? path.join(here, '../pkg'));
const cc = await import(path.join(dir, 'node.js'));
const jsonl = readFileSync(path.resolve(here, '../../shared/transcripts/cc_long_autocompact_4d5611e5.jsonl'), 'utf8');
const lines = cc.parseTranscript(jsonl);
const apiView = buildApiView(lines, activeStart(lines));
const time = (f, n) => { const t = performance.now(); for (let i = 0; i < n; i++) f(); return (performance.now() - t) / n; };
const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
for (const [name, msgs] of [['apiView', apiView], ['lines', lines]]) {
  const v = [], s = [];
  for (let b = 0; b < 15; b++) { v.push(time(() => cc.validateForApi(msgs), 5)); s.push(time(() => JSON.stringify(msgs), 20)); }
  const r = median(v.map((x, i) => x / s[i]));
  console.log(`${name} (${msgs.length}): validateForApi ${median(v).toFixed(2)} ms, JSON.stringify ${median(s).toFixed(2)} ms, ratio ${r.toFixed(1)}x`);
}
