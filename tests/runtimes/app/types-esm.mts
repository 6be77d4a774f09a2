// Type-checked by the matrix (tsc --noEmit): the declarations every entry resolves to.
import init, { microCompact, tokenCountWithEstimation } from 'context-compaction';
import * as inline from 'context-compaction/inline';

await init();
const n: number = tokenCountWithEstimation([{ role: 'user', content: 'hi' }]);
const m: number = inline.tokenCountWithEstimation([{ role: 'user', content: 'hi' }]);
const freed: number = microCompact([{ role: 'user', content: 'hi' }]).tokensFreed;
console.log(n + m + freed);

// The count entry: the same functions, and loadCompaction() resolving to the main entry.
import initCount, { loadCompaction, shouldAutoCompact } from 'context-compaction/count';

await initCount();
const due: boolean = shouldAutoCompact([{ role: 'user', content: 'hi' }], 'claude-sonnet-4-5');
const main = await loadCompaction();
console.log(due, main.microCompact([{ role: 'user', content: 'hi' }]).tokensFreed);

// The .wasm files as a bundler's file loader gives them (the README's esbuild recipe): URLs.
import wasmUrl from 'context-compaction/context_compaction_bg.wasm';
import extraUrl from 'context-compaction/context_compaction_extra_bg.wasm';
import countUrl from 'context-compaction/context_compaction_count_bg.wasm';
const urls: string[] = [wasmUrl, extraUrl, countUrl];
void urls;
