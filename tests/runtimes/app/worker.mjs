// A Cloudflare Worker (module syntax): any request runs the smoke test against env.API_URL and
// answers {ok, report} as JSON.
import * as lib from 'context-compaction';
import { smoke } from './smoke.js';

export default {
  async fetch(_request, env) {
    try {
      return Response.json({ ok: true, entry: 'workerd', report: await smoke(lib, env.API_URL) });
    } catch (e) {
      return Response.json({ ok: false, error: String(e?.stack ?? e) });
    }
  },
};
