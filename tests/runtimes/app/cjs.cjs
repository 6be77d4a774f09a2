// Node and Bun: the package through require(). Prints {ok, entry, report} as JSON.
// Usage: <runtime> cjs.cjs API_URL
const lib = require('context-compaction');

import('./smoke.js')
  .then(({ smoke }) => smoke(lib, process.argv[2]))
  .then((report) => console.log(JSON.stringify({ ok: true, entry: require.resolve('context-compaction'), report })))
  .catch((e) => console.log(JSON.stringify({ ok: false, error: String(e?.stack ?? e) })));
