// The smoke test every runtime and bundler of the matrix runs (tests/runtimes/run.mjs): the same
// four uses of the package, in plain JavaScript with no imports, so that each runtime loads the
// package its own way and passes the module in.
//
//   import * as lib from 'context-compaction';
//   import { smoke } from './smoke.js';
//   const report = await smoke(lib, 'http://127.0.0.1:40123'); // throws on the first failure
//
// 1. count: tokenCountWithEstimation of an Anthropic conversation with tool calls;
// 2. micro-compact: microCompact clears the older tool results and frees tokens;
// 3. offline compaction: compactConversation with offlineSummarizer (no network), smaller after;
// 4. summary through a fake server: compactConversation with anthropicSummarizer pointed at a
//    fake Messages API (tests/fake-api/server.mjs) by `baseURL`, whose summary text comes back;
// 5. a Compactor without a summarizer counts as the stateless count.

/** The summary text the fake server answers with; the smoke test looks for it in the result. */
export const FAKE_SUMMARY = 'Runtime smoke summary: the user asked to read eight files.';

/**
 * A conversation of `rounds` tool calls (a Read of a large file each), in the Anthropic shape.
 * @param {number} rounds
 * @returns {object[]}
 */
export function conversation(rounds) {
  const messages = [{ role: 'user', content: 'Please read the project files and explain them.' }];
  for (let i = 0; i < rounds; i++) {
    const id = `toolu_${String(i).padStart(4, '0')}`;
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: `Reading file ${i}.` },
        { type: 'tool_use', id, name: 'Read', input: { file_path: `/src/file${i}.rs` } },
      ],
    });
    messages.push({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: id,
          content: `fn item_${i}() -> usize { ${i} }\n`.repeat(400),
        },
      ],
    });
  }
  messages.push({ role: 'assistant', content: 'I have read every file.' });
  messages.push({ role: 'user', content: 'Thanks, now summarise what they do.' });
  return messages;
}

/**
 * Fails with a message naming the step when `ok` is false.
 * @param {boolean} ok
 * @param {string} what
 */
function check(ok, what) {
  if (!ok) throw new Error(`smoke: ${what}`);
}

/**
 * The text of a summary message of the Anthropic shape (a string or text blocks).
 * @param {any} message
 * @returns {string}
 */
function textOf(message) {
  if (typeof message?.content === 'string') return message.content;
  if (Array.isArray(message?.content)) {
    return message.content.map((b) => (typeof b?.text === 'string' ? b.text : '')).join('');
  }
  return '';
}

/**
 * Runs the four steps against a loaded package. Throws an Error naming the failed step.
 * @param {any} lib The package's module namespace (after `await init()` where one is needed).
 * @param {string} apiUrl Origin of the fake Messages API, e.g. `http://127.0.0.1:40123`.
 * @returns {Promise<{tokens: number, tokensFreed: number, offline: {pre: number, post: number}, summary: string}>}
 */
export async function smoke(lib, apiUrl) {
  const messages = conversation(8);

  // 1. count
  const tokens = lib.tokenCountWithEstimation(messages);
  check(Number.isInteger(tokens) && tokens > 10000, `tokenCountWithEstimation gave ${tokens}`);

  // 2. micro-compact
  const micro = lib.microCompact(messages, { keepRecent: 2 });
  check(micro.tokensFreed > 5000, `microCompact freed ${micro.tokensFreed} tokens`);
  check(micro.clearedToolUseIds.length === 6, `microCompact cleared ${micro.clearedToolUseIds.length} results`);
  check(micro.messages.length === messages.length, 'microCompact changed the message count');

  // 3. offline compaction
  const offline = await lib.compactConversation(messages, {
    model: 'claude-sonnet-4-5',
    summarize: lib.offlineSummarizer(),
  });
  const offlineNext = lib.buildPostCompactMessages(offline);
  const post = lib.tokenCountWithEstimation(offlineNext);
  check(Array.isArray(offlineNext) && offlineNext.length > 0, 'offline compaction gave no messages');
  check(post < tokens / 2, `offline compaction left ${post} of ${tokens} tokens`);

  // 4. a summary through the fake server
  const summarize = lib.anthropicSummarizer({
    apiKey: 'sk-ant-smoke-test',
    baseURL: apiUrl,
    maxRetries: 0,
  });
  const online = await lib.compactConversation(messages, { model: 'claude-sonnet-4-5', summarize });
  const next = lib.buildPostCompactMessages(online);
  const summary = next.map(textOf).find((t) => t.includes(FAKE_SUMMARY));
  check(summary !== undefined, 'the summary from the fake server is not in the compacted messages');

  // 5. a Compactor without a summarizer (the running count a page keeps): it needs no code
  //    built from strings, which Workers and a strict CSP refuse.
  const running = new lib.Compactor({ model: 'claude-sonnet-4-5' });
  running.pushMany(messages);
  check(running.tokenCount() === tokens, `a Compactor counted ${running.tokenCount()} for ${tokens}`);

  // A coded error is an Error with a stable code, in every runtime.
  let code;
  try {
    lib.tokenCountWithEstimation('not an array');
  } catch (e) {
    code = e instanceof Error ? e.code : `not an Error: ${e}`;
  }
  check(typeof code === 'string' && code.length > 0, `a bad argument threw code ${code}`);

  return { tokens, tokensFreed: micro.tokensFreed, offline: { pre: tokens, post }, summary: FAKE_SUMMARY };
}
