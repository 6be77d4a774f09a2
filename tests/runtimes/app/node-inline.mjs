// A Node program bundled by esbuild: the inline entry needs no file beside the bundle.
// Usage: node bundle.mjs API_URL
import * as lib from 'context-compaction/inline';
import { smoke } from './smoke.js';

try {
  const report = await smoke(lib, process.argv[2]);
  console.log(JSON.stringify({ ok: true, entry: 'context-compaction/inline', report }));
} catch (e) {
  console.log(JSON.stringify({ ok: false, error: String(e?.stack ?? e) }));
}
