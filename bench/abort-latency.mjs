// How soon an AbortSignal stops a compaction of a large session (issue 13): a generated
// session of about `mb` megabytes of API messages (Read calls and their results) is compacted
// with the offline summarizer, and aborted at several points of the library's own synchronous
// work; for each, the delay from `abort()` to the rejection. Shared by
// tests/node/abort-large.test.mjs (which checks the code, and logs the delays) and
// bench/bench.mjs (which reports the worst delay against the goal of 100 ms).

const WORDS = 'the parser reads each line keeps unknown types and groups responses by id ';

/** About `mb` megabytes of API messages: a request, a Read call and a 16,000-character result per turn. */
export function largeSession(mb) {
  const size = 16_000;
  const turns = Math.ceil((mb * 1e6) / size);
  const filler = WORDS.repeat(Math.ceil(size / WORDS.length));
  const messages = [];
  for (let i = 0; i < turns; i++) {
    messages.push({ role: 'user', content: `Step ${i}: read src/file${i}.txt and say what it does.` });
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { file_path: `/p/src/file${i}.txt` } }] });
    // Each result its own string (a slice of a shared one would be counted once).
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `file ${i}\n` + filler.slice(i % 7, size + (i % 7)) }] });
  }
  return messages;
}

/**
 * The abort points: `after` ms after the call (while the messages are read), or `after` ms
 * after the progress event `phase` (in the passes that follow it).
 */
export const ABORT_POINTS = [
  { name: 'while reading the messages', after: 50 },
  { name: 'right after the start event (token count, media stripping)', phase: 'start', after: 0 },
  { name: 'right after the PreCompact hooks (stripping, fitting the request)', phase: 'preCompactHook', after: 0 },
  { name: '300 ms after the PreCompact hooks', phase: 'preCompactHook', after: 300 },
  { name: '1,500 ms after the PreCompact hooks', phase: 'preCompactHook', after: 1500 },
];

/**
 * Compacts `messages` once per abort point and aborts there. Returns, per point, `{name,
 * outcome: 'aborted' | 'completed' | 'failed', code, delayMs, message}` (`delayMs`: from
 * `abort()` to the rejection).
 */
export async function measureAbortDelays(cc, messages, model, points = ABORT_POINTS) {
  const out = [];
  for (const p of points) {
    const ac = new AbortController();
    let abortedAt;
    const abort = () => {
      abortedAt = performance.now();
      ac.abort();
    };
    if (p.phase === undefined) setTimeout(abort, p.after);
    let timer;
    const onProgress = (e) => {
      if (e.phase === p.phase && timer === undefined) timer = setTimeout(abort, p.after);
    };
    try {
      await cc.compactConversation(messages, { model, summarize: cc.offlineSummarizer(), signal: ac.signal, onProgress });
      out.push({ name: p.name, outcome: 'completed' });
    } catch (e) {
      const delayMs = abortedAt === undefined ? undefined : performance.now() - abortedAt;
      out.push({ name: p.name, outcome: e && e.code === 'ABORTED' ? 'aborted' : 'failed', code: e && e.code, delayMs, message: e && e.message });
    }
    clearTimeout(timer);
    // Let the aborted run's garbage go before the next.
    await new Promise((r) => setTimeout(r, 50));
  }
  return out;
}
