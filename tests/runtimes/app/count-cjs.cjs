// Node: `context-compaction/count` through require(): the main entry's counting part, and
// loadCompaction() resolving to the main entry, which the smoke test runs on. Prints
// {ok, entry, report} as JSON. Usage: <runtime> count-cjs.cjs API_URL
const count = require('context-compaction/count');

const probe = [{ role: 'user', content: 'Read the file and fix the failing test. '.repeat(200) }];
count
  .loadCompaction()
  .then(async (lib) => {
    if (lib.tokenCountWithEstimation(probe) !== count.tokenCountWithEstimation(probe)) throw new Error('the count entry and the main entry disagree');
    const { smoke } = await import('./smoke.js');
    return smoke(lib, process.argv[2]);
  })
  .then((report) => console.log(JSON.stringify({ ok: true, entry: require.resolve('context-compaction/count'), report })))
  .catch((e) => console.log(JSON.stringify({ ok: false, error: String(e?.stack ?? e) })));
