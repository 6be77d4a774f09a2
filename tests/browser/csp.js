// The page of tests/browser/csp.html: for each entry, whether its import, its init(), a count and
// then initSync() succeed (`ok`) or the error's code (else its name: an uncoded error).
import { runPage } from '/tests/browser/page-helpers.js';

const outcome = async (f) => {
  try {
    await f();
    return 'ok';
  } catch (e) {
    return e?.code ?? e?.name ?? String(e);
  }
};

await runPage(async (results) => {
  for (const entry of ['inline.js', 'web.js', 'count.js']) {
    let m;
    results[`${entry} import`] = await outcome(async () => {
      m = await import(`/pkg/${entry}`);
    });
    if (m === undefined) continue;
    results[`${entry} init`] = await outcome(() => m.default());
    results[`${entry} count`] = await outcome(() => m.tokenCountWithEstimation([{ role: 'user', content: 'hello' }]));
    // After init(): a no-op where init() succeeded; where it failed, initSync() compiles the
    // bytes itself and must report the refusal coded too.
    const wasm = entry === 'count.js' ? 'context_compaction_count_bg.wasm' : 'context_compaction_bg.wasm';
    const module = await (await fetch(`/pkg/${wasm}`)).arrayBuffer();
    results[`${entry} initSync`] = await outcome(() => m.initSync({ module }));
  }
});
