// Type-checked by the matrix (tsc --noEmit): `require` gets the CommonJS declarations.
import cc = require('context-compaction');

const n: number = cc.tokenCountWithEstimation([{ role: 'user', content: 'hi' }]);
const summarize = cc.anthropicSummarizer({ apiKey: 'key' });
console.log(n, typeof summarize);

// The count entry through `require`: its CommonJS declarations (count.d.cts over index.d.cts).
import count = require('context-compaction/count');

const counted: number = count.tokenCountWithEstimation([{ role: 'user', content: 'hi' }]);
void count.loadCompaction().then((main) => main.microCompact([{ role: 'user', content: 'hi' }]).tokensFreed + counted);
