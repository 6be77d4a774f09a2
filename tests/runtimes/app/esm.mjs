// Node, Deno and Bun: the package as an ES module. Prints {ok, entry, report} as JSON.
// Usage: <runtime> esm.mjs API_URL
import * as lib from 'context-compaction';
import { smoke } from './smoke.js';

const api = (globalThis.Deno?.args ?? process.argv.slice(2))[0];
try {
  const report = await smoke(lib, api);
  console.log(JSON.stringify({ ok: true, entry: import.meta.resolve('context-compaction'), report }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e?.stack ?? e) }));
}
