// The inline entry, which needs no file beside it: a Node program bundled by esbuild (run as
// `node bundle.mjs API_URL`), and Deno with no read permission (`deno run --allow-net`).
import * as lib from 'context-compaction/inline';
import { smoke } from './smoke.js';

try {
  const report = await smoke(lib, (globalThis.Deno?.args ?? process.argv.slice(2))[0]);
  console.log(JSON.stringify({ ok: true, entry: 'context-compaction/inline', report }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e?.stack ?? e) }));
}
