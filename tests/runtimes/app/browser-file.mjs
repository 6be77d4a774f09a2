// A page's module bundled by esbuild with `--loader:.wasm=file`: esbuild copies the .wasm into the
// output and the import gives its URL, which init() fetches; the same for the second module
// (offlineSummarizer, previewCompaction, simulateSession), which loadExtras() fetches.
import init, * as lib from 'context-compaction';
import wasmUrl from 'context-compaction/context_compaction_bg.wasm';
import extraUrl from 'context-compaction/context_compaction_extra_bg.wasm';
import { smoke } from './smoke.js';

const api = new URL(location.href).searchParams.get('api');
try {
  await init({ module_or_path: new URL(wasmUrl, import.meta.url) });
  await lib.loadExtras({ module_or_path: new URL(extraUrl, import.meta.url) });
  globalThis.__smoke = { ok: true, report: await smoke(lib, api) };
} catch (e) {
  globalThis.__smoke = { ok: false, error: String(e?.stack ?? e) };
}
