// Type-checked by the matrix (tsc --noEmit): the declarations every entry resolves to.
import init, { microCompact, tokenCountWithEstimation } from 'context-compaction';
import * as inline from 'context-compaction/inline';

await init();
const n: number = tokenCountWithEstimation([{ role: 'user', content: 'hi' }]);
const m: number = inline.tokenCountWithEstimation([{ role: 'user', content: 'hi' }]);
const freed: number = microCompact([{ role: 'user', content: 'hi' }]).tokensFreed;
console.log(n + m + freed);
