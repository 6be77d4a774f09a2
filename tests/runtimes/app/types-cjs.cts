// Type-checked by the matrix (tsc --noEmit): `require` gets the CommonJS declarations.
import cc = require('context-compaction');

const n: number = cc.tokenCountWithEstimation([{ role: 'user', content: 'hi' }]);
const summarize = cc.anthropicSummarizer({ apiKey: 'key' });
console.log(n, typeof summarize);
