// What the pages that check loading on demand share (extras.html, count.html): the model they
// compact for, the paths the page fetched so far, and a summarizer answering as an API would.
export const MODEL = 'claude-opus-4-6';

/** The paths of every resource the page fetched so far. */
export const fetched = () => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname);

/** A summarizer that answers at once, in the Messages API's form. */
export const apiSummarizer = async () => ({
  content: [{ type: 'text', text: '<summary>API-STYLE SUMMARY</summary>' }],
  usage: { input_tokens: 900, output_tokens: 40 },
});
