// A page's module through `context-compaction/count`, bundled by Vite or webpack: its init()
// loads the counting module only; loadCompaction() loads the main entry (a chunk the bundler
// splits off, with the first module) and the smoke runs on what it resolves to. The fake
// API's origin comes in the page's query (?api=…); the result lands in globalThis.__smoke.
import init, { loadCompaction, shouldAutoCompact, tokenCountWithEstimation } from 'context-compaction/count';
import { smoke } from './smoke.js';

const api = new URL(location.href).searchParams.get('api');
const wasmFetched = () =>
  performance
    .getEntriesByType('resource')
    .map((e) => new URL(e.name).pathname)
    .filter((p) => p.endsWith('.wasm'));
try {
  await init();
  const probe = [{ role: 'user', content: 'Read the file and fix the failing test. '.repeat(200) }];
  const counted = tokenCountWithEstimation(probe);
  const should = shouldAutoCompact(probe, 'claude-sonnet-4-5');
  const before = wasmFetched();
  if (before.length !== 1 || !/count/.test(before[0])) {
    throw new Error(`before loadCompaction() the page fetched ${JSON.stringify(before)}: the counting module only was expected`);
  }
  const lib = await loadCompaction();
  if (lib.tokenCountWithEstimation(probe) !== counted || lib.shouldAutoCompact(probe, 'claude-sonnet-4-5') !== should) {
    throw new Error(`the count entry answered ${counted}/${should}, the main entry ${lib.tokenCountWithEstimation(probe)}`);
  }
  if (wasmFetched().length !== 2) throw new Error(`after loadCompaction(): ${JSON.stringify(wasmFetched())}`);
  globalThis.__smoke = { ok: true, report: await smoke(lib, api) };
} catch (e) {
  globalThis.__smoke = { ok: false, error: String(e?.stack ?? e) };
}
