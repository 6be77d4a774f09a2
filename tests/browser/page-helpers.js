// What the pages that check loading on demand share (extras.html, count.html, retry.html,
// retry-count.html): the model they compact for, the paths the page fetched so far, a summarizer
// answering as an API would, and the reporting of a page's results.
export const MODEL = 'claude-opus-4-6';

/** The paths of every resource the page fetched so far. */
export const fetched = () => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname);

/** A summarizer that answers at once, in the Messages API's form. */
export const apiSummarizer = async () => ({
  content: [{ type: 'text', text: '<summary>API-STYLE SUMMARY</summary>' }],
  usage: { input_tokens: 900, output_tokens: 40 },
});

/**
 * Runs `body(results)` and reports: `results` as JSON into `#output`, and `data-status` on the
 * body (`done`, or `failed` with the exception's stack as `results.failure`).
 */
export async function runPage(body) {
  const results = {};
  try {
    await body(results);
    document.body.dataset.status = 'done';
  } catch (e) {
    results.failure = String(e?.stack ?? e);
    document.body.dataset.status = 'failed';
  }
  document.getElementById('output').textContent = JSON.stringify(results);
}

/** Calls `f` twice, recording each outcome as `results['<name> 1']`, `['<name> 2']`: `ok` or the error's code. */
export async function twice(results, name, f) {
  for (const i of [1, 2]) {
    try {
      await f();
      results[`${name} ${i}`] = 'ok';
    } catch (e) {
      results[`${name} ${i}`] = e.code ?? String(e);
    }
  }
}
