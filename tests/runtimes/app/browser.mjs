// A page's module, bundled by Vite or webpack: the default (browser) entry and `await init()`.
// The fake API's origin comes in the page's query (?api=…); the result lands in
// globalThis.__smoke for the test to read.
import init, * as lib from 'context-compaction';
import { smoke } from './smoke.js';

const api = new URL(location.href).searchParams.get('api');
try {
  await init();
  globalThis.__smoke = { ok: true, report: await smoke(lib, api) };
} catch (e) {
  globalThis.__smoke = { ok: false, error: String(e?.stack ?? e) };
}
