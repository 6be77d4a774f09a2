// A page's module bundled by esbuild: the inline entry (the .wasm inside the JavaScript, no init).
import * as lib from 'context-compaction/inline';
import { smoke } from './smoke.js';

const api = new URL(location.href).searchParams.get('api');
try {
  globalThis.__smoke = { ok: true, report: await smoke(lib, api) };
} catch (e) {
  globalThis.__smoke = { ok: false, error: String(e?.stack ?? e) };
}
