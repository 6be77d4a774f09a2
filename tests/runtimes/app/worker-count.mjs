// A Cloudflare Worker through `context-compaction/count`: in Workers the entry is the main
// entry's counting part (count-workerd.js) and loadCompaction() resolves to the main entry;
// the smoke test runs on that. Answers {ok, report} as JSON.
import init, { loadCompaction, tokenCountWithEstimation } from 'context-compaction/count';
import { smoke } from './smoke.js';

export default {
  async fetch(_request, env) {
    try {
      await init();
      const probe = [{ role: 'user', content: 'Read the file and fix the failing test. '.repeat(200) }];
      const lib = await loadCompaction();
      if (lib.tokenCountWithEstimation(probe) !== tokenCountWithEstimation(probe)) throw new Error('the count entry and the main entry disagree');
      return Response.json({ ok: true, entry: 'workerd', report: await smoke(lib, env.API_URL) });
    } catch (e) {
      return Response.json({ ok: false, error: String(e?.stack ?? e) });
    }
  },
};
