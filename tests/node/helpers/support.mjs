// The one helper module of the Node tests (tests/node/*.test.mjs), like the test-support
// crate is for the Rust tests:
// - conversations: fixed-shape fixtures (API shape, Claude Code transcript shape) and a
//   seeded random-history generator (both shapes, parallel tool calls interleaved with their
//   results, server tools, thinking, split responses, media, attachments, sub-agent and
//   non-API lines), all transcript lines written by one line writer;
// - one oracle of the Messages API rules (SPEC §2), written apart from the library: the API
//   view (`sentView`), `apiProblems`, `thinkingProblems` and the assertions built on them;
// - summarizers, summary bodies and API error fakes;
// - loaders for the real transcripts in ../shared/transcripts, and a runner that executes a
//   snippet in a separate Node process (a WebAssembly crash there cannot take the test runner
//   down with it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const PKG = fileURLToPath(new URL('../../../pkg/node.js', import.meta.url));
export const TRANSCRIPTS = fileURLToPath(new URL('../../../../shared/transcripts/', import.meta.url));
export const LONG_TRANSCRIPT = `${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`;

export const OPUS = 'claude-opus-4-6';
export const SONNET = 'claude-sonnet-4-5';

// ---- Randomness --------------------------------------------------------------------------------

/** A deterministic PRNG (mulberry32): `rng()` in [0, 1), plus helpers. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  next.int = (lo, hi) => lo + Math.floor(next() * (hi - lo)); // [lo, hi)
  next.bool = (p = 0.5) => next() < p;
  next.pick = (arr) => arr[Math.floor(next() * arr.length)];
  return next;
}

// ---- Text ------------------------------------------------------------------------------------

const WORDS = [
  'alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet',
  'kilo', 'lima', 'mike', 'november', 'oscar', 'papa', 'quebec', 'romeo', 'sierra', 'tango',
];

/** Deterministic filler text of exactly `chars` UTF-16 units (≈ chars / 4 tokens). */
export function filler(chars, seed = 0) {
  let out = '';
  let i = seed;
  while (out.length < chars) {
    out += WORDS[i % WORDS.length] + (i % 11 === 10 ? '.\n' : ' ');
    i += 7;
  }
  return out.slice(0, chars);
}

const RANDOM_WORDS = ['parser', 'token', 'window', 'résumé', 'cache', '😀', 'thread', 'quoted"', 'back\\slash', 'line\n', 'tab\t', '中文', 'alpha', 'bravo'];

/** Deterministic text of about `len` UTF-16 units, with non-ASCII, escapes and emoji (the
 *  random histories' text). */
export function words(len, k = 0) {
  let s = '';
  let i = k;
  while (s.length < len) {
    s += RANDOM_WORDS[i % RANDOM_WORDS.length] + ' ';
    i = (i * 31 + 7) >>> 0;
  }
  return s.slice(0, len).replace(/[\uD800-\uDBFF]$/, 'x'); // never end on half a pair
}

// ---- Transcript lines ------------------------------------------------------------------------

/**
 * The one writer of Claude Code transcript lines: `line(type, fields, sidechain)` returns a
 * line with the envelope (parentUuid, isSidechain, userType, cwd, sessionId, version and,
 * when given, gitBranch), then `type` and `fields`, then `uuid` and `timestamp`. `next()`
 * numbers the lines (uuid `${prefix}${n}` padded to `digits`, timestamp `base + n` seconds);
 * the parent chain follows main-chain lines other than progress.
 * @param {{next: () => number, prefix: string, digits: number, base: number, cwd: string, session: string, gitBranch?: string}} o
 */
export function transcriptWriter(o) {
  let parent = null;
  const line = (type, fields, sidechain = false) => {
    const n = o.next();
    const l = {
      parentUuid: parent, isSidechain: sidechain, userType: 'external', cwd: o.cwd, sessionId: o.session, version: '2.1.39',
      ...(o.gitBranch === undefined ? {} : { gitBranch: o.gitBranch }),
      type, ...fields, uuid: `${o.prefix}${String(n).padStart(o.digits, '0')}`, timestamp: new Date(o.base + n * 1000).toISOString(),
    };
    if (!sidechain && type !== 'progress') parent = l.uuid;
    return l;
  };
  line.parent = () => parent;
  return line;
}

// ---- API-shaped conversations ----------------------------------------------------------------

/**
 * An API-shaped conversation of `rounds` rounds. Each round: a user question (with a unique
 * marker `Q<i>`), an assistant reply with a `tool_use` (Read), the user's `tool_result`, and an
 * assistant answer (`A<i>`). With `thinking`, every assistant tool call starts with a signed
 * thinking block; with `usage`, the last assistant message carries an API usage.
 * @param {{rounds?: number, chars?: number, resultChars?: number, thinking?: boolean, usage?: number, prefix?: string}} [o]
 */
export function apiConversation(o = {}) {
  const { rounds = 12, chars = 800, resultChars = 2_000, thinking = false, usage, prefix = '' } = o;
  const msgs = [];
  for (let i = 0; i < rounds; i++) {
    const id = `toolu_${prefix}${String(i).padStart(4, '0')}`;
    msgs.push({ role: 'user', content: `Q${i}: ${filler(chars, i)}` });
    const call = [];
    if (thinking) call.push({ type: 'thinking', thinking: `thinking about Q${i} ${filler(200, i + 3)}`, signature: `sig-${i}-${'x'.repeat(40)}` });
    call.push({ type: 'text', text: `Reading the file for Q${i}.` });
    call.push({ type: 'tool_use', id, name: 'Read', input: { file_path: `/src/file${i}.rs` } });
    msgs.push({ role: 'assistant', content: call });
    msgs.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: id, content: `     1→// file${i}\n${filler(resultChars, i + 5)}` }],
    });
    msgs.push({ role: 'assistant', content: [{ type: 'text', text: `A${i}: ${filler(Math.floor(chars / 2), i + 9)}` }] });
  }
  if (usage !== undefined) {
    const last = msgs[msgs.length - 1];
    last.usage = { input_tokens: usage, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  }
  return msgs;
}

/** An API conversation of about `tokens` estimated tokens (no usage). */
export function apiConversationOfTokens(tokens, o = {}) {
  // One round is about (chars + chars/2 + resultChars + ~150) / 4 tokens.
  const chars = o.chars ?? 800;
  const resultChars = o.resultChars ?? 2_000;
  const perRound = (chars + chars / 2 + resultChars + 150) / 4;
  return apiConversation({ ...o, chars, resultChars, rounds: Math.max(2, Math.ceil(tokens / perRound)) });
}

// ---- Transcript-shaped conversations ---------------------------------------------------------

/**
 * Claude Code transcript lines: per round a user line, one API response split over several
 * assistant lines sharing `message.id` (thinking, text, two parallel tool calls) interleaved
 * with the tool_result user lines, a final assistant text line; plus progress,
 * file-history-snapshot and sidechain lines that are not part of the main conversation.
 * Every assistant response carries usage (small, so the count stays an estimate-like size).
 * @param {{rounds?: number, chars?: number, resultChars?: number, session?: string}} [o]
 */
export function transcriptConversation(o = {}) {
  const { rounds = 10, chars = 800, resultChars = 2_000, session = 'sess-0001' } = o;
  const lines = [];
  let n = 0;
  const line = transcriptWriter({
    next: () => ++n, prefix: 'u-', digits: 5, base: Date.UTC(2026, 0, 1, 12, 0, 0), cwd: '/home/user/project', session, gitBranch: 'main',
  });
  const push = ({ type, isSidechain = false, ...fields }) => {
    const l = line(type, fields, isSidechain);
    lines.push(l);
    return l;
  };
  let context = 3_000;
  for (let i = 0; i < rounds; i++) {
    push({ type: 'user', message: { role: 'user', content: `Q${i}: ${filler(chars, i)}` } });
    push({ type: 'progress', data: { type: 'hook_progress', hookEvent: 'UserPromptSubmit' }, toolUseID: `x${i}` });
    const mid = `msg_${String(i).padStart(4, '0')}`;
    context += Math.ceil((chars * 2 + resultChars * 2) / 4);
    const usage = { input_tokens: 3, cache_creation_input_tokens: 200, cache_read_input_tokens: context, output_tokens: 5 };
    const asst = (block) =>
      push({ type: 'assistant', requestId: `req_${i}`, message: { id: mid, type: 'message', role: 'assistant', model: OPUS, content: [block], stop_reason: null, usage } });
    asst({ type: 'thinking', thinking: `Thinking about Q${i}: ${filler(300, i + 1)}`, signature: `sig_${i}_${'s'.repeat(60)}` });
    asst({ type: 'text', text: `Let me look at two files for Q${i}.` });
    const t1 = `toolu_${i}_a`;
    const t2 = `toolu_${i}_b`;
    asst({ type: 'tool_use', id: t1, name: 'Read', input: { file_path: `/src/a${i}.rs` } });
    push({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: t1, content: `     1→// a${i}\n${filler(resultChars, i + 2)}` }] }, toolUseResult: { type: 'text' } });
    asst({ type: 'tool_use', id: t2, name: 'Grep', input: { pattern: `fn q${i}` } });
    push({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: t2, content: `b${i}: ${filler(resultChars, i + 4)}` }] } });
    if (i % 3 === 1) {
      // A sub-agent's line: not part of the main chain.
      push({ type: 'assistant', isSidechain: true, agentId: 'agent-1', message: { id: `side_${i}`, role: 'assistant', content: [{ type: 'text', text: 'side work' }] } });
    }
    const mid2 = `msg_${String(i).padStart(4, '0')}_b`;
    context += Math.ceil(chars / 4);
    push({
      type: 'assistant',
      message: {
        id: mid2, type: 'message', role: 'assistant', model: OPUS,
        content: [{ type: 'text', text: `A${i}: ${filler(chars, i + 7)}` }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 3, cache_creation_input_tokens: 300, cache_read_input_tokens: context, output_tokens: 200 },
      },
    });
    if (i % 4 === 0) push({ type: 'file-history-snapshot', messageId: `snap${i}`, snapshot: { trackedFileBackups: {} } });
  }
  return lines;
}

// ---- Random histories --------------------------------------------------------------------------

export const TOOLS = ['Read', 'Bash', 'Grep', 'Glob', 'WebFetch', 'Edit', 'Write', 'Task', 'TodoWrite', 'mcp__db__query'];
const ATTACHMENTS = ['skill_listing', 'skill_discovery', 'todo_reminder', 'new_file'];

/** A base64 string that decodes to exactly `bytes` bytes. */
export function base64OfBytes(bytes, fill = 0x89) {
  return Buffer.alloc(bytes, fill).toString('base64');
}

/** An image (or document) block whose base64 payload decodes to `bytes` bytes. */
export function mediaBlock(type = 'image', mediaType = 'image/png', bytes = 1024) {
  return { type, source: { type: 'base64', media_type: mediaType, data: base64OfBytes(bytes) } };
}

/**
 * A random, valid conversation. `shape`: 'api' or 'transcript' (random when omitted).
 * Transcripts write each response over one line or one line per block (sharing message.id),
 * with the results of parallel tool calls interleaved as each tool "finishes", and carry
 * progress, system, file-history-snapshot, sub-agent lines, attachments and sometimes an
 * earlier compact boundary.
 */
export function randomHistory(rng, o = {}) {
  const shape = o.shape ?? (rng.bool() ? 'api' : 'transcript');
  const transcript = shape === 'transcript';
  const turns = o.turns ?? rng.int(1, 9);
  const out = [];
  let n = 0;
  const line = transcriptWriter({ next: () => ++n, prefix: 'r-', digits: 6, base: Date.UTC(2026, 2, 1), cwd: '/work/app', session: 'rel-js-1' });
  const user = (content, extra = {}) => out.push(transcript ? line('user', { message: { role: 'user', content }, ...extra }) : { role: 'user', content });
  const media = () => {
    const k = rng.int(0, 4);
    if (k === 0) return mediaBlock('image', 'image/png', rng.int(100, 4000));
    if (k === 1) return { type: 'image', source: { type: 'url', url: `https://example.invalid/${++n}.png` } };
    if (k === 2) return mediaBlock('document', 'application/pdf', rng.int(100, 4000));
    return { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain' } };
  };
  const boundaryAt = transcript && rng.bool(0.2) ? rng.int(0, turns) : -1;
  for (let t = 0; t < turns; t++) {
    if (transcript) {
      for (let a = rng.int(0, 3); a > 0; a--) {
        const type = rng.pick(ATTACHMENTS);
        out.push(line('attachment', { attachment: { type, content: `${type}: body` } }));
      }
    }
    const prompt = `Q${++n}: ${words(rng.int(1, 1200), n)}`;
    const withMedia = rng.bool(0.25);
    user(withMedia ? [{ type: 'text', text: prompt }, media()] : rng.bool() ? prompt : [{ type: 'text', text: prompt }]);
    const responses = rng.int(1, 5);
    for (let r = 0; r < responses; r++) {
      const id = `msg_js_${++n}`;
      const blocks = [];
      for (let k = rng.int(0, 3); k > 0; k--) {
        blocks.push(rng.bool(0.25)
          ? { type: 'redacted_thinking', data: `EmwKAhgB${++n}${'Zm9v'.repeat(8)}` }
          : { type: 'thinking', thinking: words(rng.int(1, 400), ++n), signature: `ErUBCkYIBRgCIkD${++n}+/sig=` });
      }
      if (rng.bool(0.15)) {
        const sid = `srvtoolu_js_${++n}`;
        blocks.push({ type: 'server_tool_use', id: sid, name: 'web_search', input: { query: 'compaction' } });
        blocks.push({ type: 'web_search_tool_result', tool_use_id: sid, content: [{ type: 'web_search_result', url: 'https://example.invalid/s', title: 'r', encrypted_content: 'Eqgf' }] });
      }
      if (rng.bool(0.8)) blocks.push({ type: 'text', text: words(rng.int(1, 1000), ++n) });
      if (rng.bool(0.08)) blocks.push({ type: 'future_block_type', payload: { x: [1, true, null] } });
      const last = r === responses - 1;
      const tools = last && rng.bool(0.5) ? 0 : rng.int(last ? 0 : 1, 5);
      const firstTool = blocks.length;
      const calls = [];
      for (let k = 0; k < tools; k++) {
        const name = rng.pick(TOOLS);
        const tid = `toolu_js_${++n}`;
        const path = `/work/app/src/m${rng.int(0, 4)}.rs`;
        const input = name === 'Bash' ? { command: `cargo test ${n}` } : name === 'Grep' || name === 'Glob' ? { pattern: 'fn', path } : name === 'WebFetch' ? { url: 'https://example.invalid' } : { file_path: path };
        blocks.push({ type: 'tool_use', id: tid, name, input });
        const len = rng.bool(0.6) ? rng.int(0, 400) : rng.int(400, 5000);
        const body = rng.bool(0.15) ? [{ type: 'text', text: words(len, n) }, mediaBlock('image', 'image/jpeg', rng.int(50, 900))] : words(len, n);
        const result = { type: 'tool_result', tool_use_id: tid, content: body };
        if (rng.bool(0.1)) result.is_error = true;
        calls.push({ result, finish: rng.int(0, 256) });
      }
      if (blocks.length === 0) blocks.push({ type: 'text', text: 'Done.' });
      const order = calls.map((c, k) => k).sort((x, y) => calls[x].finish - calls[y].finish || x - y);
      const stop = tools ? 'tool_use' : 'end_turn';
      const usage = rng.bool(0.6)
        ? { input_tokens: rng.int(0, 50), cache_creation_input_tokens: rng.int(0, 20_000), cache_read_input_tokens: rng.int(0, 120_000), output_tokens: rng.int(1, 4000) }
        : undefined;
      if (!transcript) {
        const m = { role: 'assistant', content: blocks };
        if (usage) m.usage = usage;
        out.push(m);
        if (calls.length) out.push({ role: 'user', content: order.map((k) => calls[k].result) });
      } else {
        const split = rng.bool(0.6);
        const lines = split ? blocks.map((b) => [b]) : [blocks];
        const after = lines.map(() => []);
        for (const k of order) {
          const own = split ? firstTool + k : 0;
          after[own + (calls[k].finish % (lines.length - own))].push(k);
        }
        lines.forEach((content, j) => {
          const message = { id, type: 'message', role: 'assistant', model: 'claude-opus-4-6', content, stop_reason: stop, stop_sequence: null };
          if (usage) message.usage = usage;
          out.push(line('assistant', { requestId: `req_${id}`, message }));
          for (const k of after[j]) user([calls[k].result], { toolUseResult: { stdout: '…' } });
        });
      }
      if (!tools) break; // a response without tool calls ends the agent's loop
    }
    if (t === boundaryAt) {
      const logical = line.parent();
      out.push({ ...line('system', { subtype: 'compact_boundary', content: 'Conversation compacted', compactMetadata: { trigger: 'auto', preTokens: 171_000 } }), parentUuid: null, logicalParentUuid: logical });
      user('This session continues an earlier one. Summary: the parser.', { isCompactSummary: true });
    }
  }
  if (transcript) {
    for (let k = rng.int(0, 6); k > 0; k--) {
      const kind = rng.int(0, 4);
      const noise = kind === 0
        ? line('progress', { data: { type: 'bash_progress', output: 'x'.repeat(rng.int(0, 200)) } })
        : kind === 1
          ? line('system', { subtype: 'turn_duration', durationMs: 5 })
          : kind === 2
            ? line('assistant', { agentId: 'agent-7', message: { role: 'assistant', id: `side_${++n}`, content: [{ type: 'tool_use', id: `toolu_side_${n}`, name: 'Read', input: {} }], usage: { input_tokens: 990_000, output_tokens: 3 } } }, true)
            : { type: 'file-history-snapshot', messageId: `m${++n}`, snapshot: { trackedFileBackups: {} } };
      out.splice(rng.int(0, out.length + 1), 0, noise);
    }
  }
  return out;
}

// ---- Real transcripts ------------------------------------------------------------------------

/** The lines of a JSONL file, parsed with JSON.parse (blank lines skipped). */
export function readJsonl(path) {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

/**
 * The long real transcript: all lines, the index of its compact_boundary line, the lines
 * before it, and the real summary text (the isCompactSummary line right after the boundary).
 */
export function loadLongTranscript() {
  const text = readFileSync(LONG_TRANSCRIPT, 'utf8');
  const lines = readJsonl(LONG_TRANSCRIPT);
  const boundary = lines.findIndex((l) => l.type === 'system' && l.subtype === 'compact_boundary');
  const summaryLine = lines[boundary + 1];
  const c = summaryLine?.message?.content;
  const summaryText = typeof c === 'string' ? c : c.map((b) => b.text ?? '').join('');
  return { text, lines, boundary, before: lines.slice(0, boundary), summaryLine, summaryText };
}

/**
 * readFileState from the Read tool calls in transcript lines: path → {content (the matching
 * tool_result's text), timestamp (the index of the result's line)}.
 */
export function readFileStateFromLines(lines) {
  const calls = new Map();
  const state = new Map();
  lines.forEach((l, idx) => {
    const content = l?.message?.content;
    if (!Array.isArray(content)) return;
    for (const b of content) {
      if (b?.type === 'tool_use' && b.name === 'Read' && b.input?.file_path) calls.set(b.id, b.input.file_path);
      if (b?.type === 'tool_result' && calls.has(b.tool_use_id) && b.is_error !== true) {
        const text = typeof b.content === 'string' ? b.content : (b.content ?? []).map((x) => x.text ?? '').join('');
        const path = calls.get(b.tool_use_id);
        state.delete(path); // re-inserted: the Map order follows the reads too
        state.set(path, { content: text, timestamp: idx });
      }
    }
  });
  return state;
}

// ---- Summarizers and errors ------------------------------------------------------------------

/** A Messages API response body with the summary text (`o`: id, model, analysis, raw text,
 *  stopReason, usage). */
export function summaryResponse(summary = 'The user asked for things; they were done.', o = {}) {
  return {
    id: o.id ?? 'msg_summary',
    type: 'message',
    role: 'assistant',
    model: o.model ?? SONNET,
    content: [{ type: 'text', text: o.raw ?? `<analysis>${o.analysis ?? 'scratch work'}</analysis>\n<summary>\n${summary}\n</summary>` }],
    stop_reason: o.stopReason ?? 'end_turn',
    stop_sequence: null,
    usage: o.usage ?? { input_tokens: 5_000, output_tokens: 400, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

/**
 * A scripted summarizer that records its calls: `calls[i] = {request, options}`.
 * `answer` is a value, or a function `(request, options, n)` returning a value or a Promise.
 */
export function recordingSummarizer(answer = summaryResponse()) {
  const calls = [];
  const summarize = async (request, options) => {
    calls.push({ request, options });
    return typeof answer === 'function' ? answer(request, options, calls.length) : answer;
  };
  summarize.calls = calls;
  return summarize;
}

/** The exact Anthropic body of a prompt-too-long rejection. */
export function ptlBody(actual, limit) {
  return { type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${actual} tokens > ${limit} maximum` } };
}

/** An error as an SDK throws it for the 400 prompt-too-long answer. */
export function ptlError(actual, limit) {
  const body = ptlBody(actual, limit);
  const e = new Error(`400 ${JSON.stringify(body)}`);
  e.status = 400;
  e.error = body;
  return e;
}

/** A 529 overloaded error (optionally marked as already retried by the summarizer). */
export function overloadedError(o = {}) {
  const body = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
  const e = new Error(`529 ${JSON.stringify(body)}`);
  e.status = 529;
  e.error = body;
  if (o.retriesExhausted) e.retriesExhausted = true;
  return e;
}

/** Estimated tokens of a request the way a strict fake API counts them: JSON chars / 4. */
export const requestTokens = (request) => Math.ceil(JSON.stringify(request).length / 4);

/** A promise with its resolve/reject outside, and a flag once it settled. */
export function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A promise that never settles (and holds no handle: the process can still exit). */
export const never = () => new Promise(() => {});

/** Asserts that `promise` rejects with an Error of `code`; returns the error. */
export async function rejectsWithCode(promise, code, message) {
  let err;
  await assert.rejects(promise, (e) => {
    err = e;
    return true;
  }, message);
  assert.ok(err instanceof Error, `expected an Error, got ${String(err)}`);
  assert.equal(err.code, code, `${message ?? ''} expected code ${code}, got ${err.code}: ${err.message}`);
  return err;
}

/** Tokens of a summary request as a strict fake API sizes it: the text of the system prompt
 *  and of every text block / string content, 4 characters a token. */
export function requestTextTokens(request) {
  let chars = typeof request.system === 'string' ? request.system.length : JSON.stringify(request.system ?? '').length;
  for (const m of request.messages) {
    if (typeof m.content === 'string') chars += m.content.length;
    else for (const b of m.content ?? []) chars += typeof b.text === 'string' ? b.text.length : 0;
  }
  return Math.ceil(chars / 4);
}

/** A summarizer that answers the real 400 body above `limit` tokens; records requests/sizes. */
export function strictSummarizer(limit, answer = 'The user is fixing the parser; the latest request is pending.') {
  const calls = [];
  const sizes = [];
  const summarize = async (request, options) => {
    calls.push({ request, options });
    const n = requestTextTokens(request);
    sizes.push(n);
    if (n > limit) throw ptlError(n, limit);
    return summaryBody(answer);
  };
  return Object.assign(summarize, { calls, sizes });
}

/** The reliability suite's summary body: {@link summaryResponse} with id msg_rel, "notes" as
 *  the analysis and usage 3,000 in / 200 out. */
export function summaryBody(summary, o = {}) {
  return summaryResponse(summary, {
    id: 'msg_rel',
    analysis: 'notes',
    usage: { input_tokens: 3_000, output_tokens: 200, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    ...o,
  });
}

// ---- The one oracle of the Messages API rules (SPEC §2), written apart from the library --------

const isSide = (m) => m?.isSidechain === true;
const isBoundary = (m) => !isSide(m) && m?.type === 'system' && m?.subtype === 'compact_boundary';
const isThinking = (b) => b?.type === 'thinking' || b?.type === 'redacted_thinking';
const isServerResult = (b) => typeof b?.type === 'string' && b.type !== 'tool_result' && b.type.endsWith('_tool_result');

/** Index of the first line after the last main-chain compact boundary (0 without one). */
export const sentFrom = (messages) => messages.reduce((s, m, i) => (isBoundary(m) ? i + 1 : s), 0);

/** `{user, blocks, id}` of a message that is sent to the model, or null (sub-agent lines,
 *  system, progress, snapshots, unknown types, API messages without a user/assistant role).
 *  A non-empty string is one text block; an empty string or any other content, no block. */
function sentPart(m) {
  if (!m || typeof m !== 'object' || isSide(m)) return null;
  const blocks = (c) => (typeof c === 'string' ? (c === '' ? [] : [{ type: 'text', text: c }]) : Array.isArray(c) ? c : []);
  if (m.type === undefined) {
    if (m.role === 'user' || m.role === 'assistant') return { user: m.role === 'user', blocks: blocks(m.content) };
    return null;
  }
  if (m.type === 'user') return { user: true, blocks: blocks(m.message?.content) };
  if (m.type === 'assistant') return { user: false, blocks: blocks(m.message?.content), id: m.message?.id };
  if (m.type === 'attachment') return { user: true, blocks: [{ type: 'text', text: JSON.stringify(m.attachment ?? {}) }] };
  return null;
}

/**
 * The API view of a conversation (what the model is sent): main-chain lines after the last
 * compact boundary; attachment lines as user text; the lines of one response (same
 * message.id) merged into one assistant message even across interleaved tool_result lines;
 * consecutive messages of one role merged. Returns `{view: [{user, role, id, blocks, lines}],
 * problems}`, `problems` naming every line sent with empty content.
 */
export function sentView(messages) {
  const start = sentFrom(messages);
  const view = [];
  const problems = [];
  for (let i = start; i < messages.length; i++) {
    const p = sentPart(messages[i]);
    if (!p) continue;
    if (p.blocks.length === 0) problems.push(`line ${i} is sent with empty content`);
    if (!p.user && p.id !== undefined) {
      let a = -1;
      for (let k = view.length - 1; k >= 0; k--) if (!view[k].user) { a = k; break; }
      if (a >= 0 && view[a].id === p.id && view.length - a <= 2) {
        view[a].blocks.push(...p.blocks);
        view[a].lines.push(i);
        continue;
      }
    }
    const last = view.at(-1);
    if (last && last.user === p.user) {
      last.blocks.push(...p.blocks);
      last.lines.push(i);
      if (!p.user) last.id = p.id;
    } else view.push({ user: p.user, role: p.user ? 'user' : 'assistant', id: p.id, blocks: [...p.blocks], lines: [i] });
  }
  return { view, problems };
}

/**
 * Every rule of the Messages API that `messages` breaks (empty array: valid): something is
 * sent, a user message first; no empty content, no empty text block; each tool_use in an
 * assistant message, its id unique, answered in the very next message; each tool_result in a
 * user message right after its tool_use, once per message; each server_tool_use in an
 * assistant message with its result in the same message, after it. With `original` (the
 * input of a transformation), also {@link thinkingProblems}`(original, messages)`.
 */
export function apiProblems(messages, original) {
  const { view, problems } = sentView(messages);
  if (view.length === 0) return ['nothing is sent'];
  if (!view[0].user) problems.push(`the first message sent is an assistant message (lines ${view[0].lines})`);
  const uses = new Set();
  view.forEach((m, k) => {
    const at = `message ${k} (${m.role}, lines ${m.lines.join(',')})`;
    const server = [];
    const results = new Map();
    for (const b of m.blocks) {
      const t = b?.type;
      if (t === 'text' && (typeof b.text !== 'string' || b.text === '')) problems.push(`${at}: empty text block`);
      if (t === 'tool_use') {
        if (m.user) problems.push(`${at}: tool_use in a user message`);
        if (uses.has(b.id)) problems.push(`${at}: tool_use ${b.id} twice`);
        uses.add(b.id);
        const next = view[k + 1];
        if (!(next?.user && next.blocks.some((r) => r?.type === 'tool_result' && r.tool_use_id === b.id))) problems.push(`${at}: tool_use ${b.id} is not answered in the next message`);
      }
      if (t === 'tool_result') {
        results.set(b.tool_use_id, (results.get(b.tool_use_id) ?? 0) + 1);
        const prev = view[k - 1];
        if (!(m.user && prev && !prev.user && prev.blocks.some((u) => u?.type === 'tool_use' && u.id === b.tool_use_id))) problems.push(`${at}: tool_result ${b.tool_use_id} does not follow its tool_use`);
      }
      if (t === 'server_tool_use') {
        if (m.user) problems.push(`${at}: server_tool_use in a user message`);
        server.push(b.id);
      }
      if (isServerResult(b) && !server.includes(b.tool_use_id)) problems.push(`${at}: ${t} ${b.tool_use_id} before/without its server_tool_use`);
    }
    for (const [id, count] of results) if (count > 1) problems.push(`${at}: tool_result ${id} given ${count} times`);
    for (const s of server) {
      if (!m.blocks.some((b) => isServerResult(b) && b.tool_use_id === s)) problems.push(`${at}: server_tool_use ${s} has no result`);
    }
  });
  if (original) problems.push(...thinkingProblems(original, messages));
  return problems;
}

/**
 * SPEC §2 / failure mode 8: thinking is kept byte-identical or dropped with its whole
 * response. Every sent assistant response of `output` that holds thinking is exactly a
 * response of `input` (transcripts: all lines of that message.id, byte-identical; API shape:
 * the whole message), and no thinking block is sent in a user message.
 */
export function thinkingProblems(input, output) {
  const problems = [];
  const hasThinking = (m) => (sentPart(m)?.blocks ?? []).some(isThinking);
  // Lines of response `id` in what is sent (after the last boundary).
  const linesOf = (msgs, id) => msgs.slice(sentFrom(msgs)).filter((m) => !isSide(m) && m?.type === 'assistant' && m.message?.id === id).map((m) => JSON.stringify(m.message));
  const inputs = new Set(input.map((m) => JSON.stringify(m)));
  for (let i = sentFrom(output); i < output.length; i++) {
    const m = output[i];
    const p = sentPart(m);
    if (!p || !hasThinking(m)) continue;
    if (p.user) problems.push(`line ${i}: a thinking block in a user message`);
    else if (p.id !== undefined) {
      const a = linesOf(input, p.id);
      const b = linesOf(output, p.id);
      if (a.join('\n') !== b.join('\n')) problems.push(`response ${p.id}: a thinking block was edited or its response split (${a.length} lines in, ${b.length} out)`);
    } else if (!inputs.has(JSON.stringify(m))) problems.push(`line ${i}: a thinking block was edited (its assistant message differs from the input)`);
  }
  return problems;
}

/** Asserts that the conversation is valid for the Messages API ({@link apiProblems}; with
 *  `original`, thinking kept byte-identical). */
export function assertValidForApi(messages, original, label = 'conversation') {
  const problems = apiProblems(messages, original);
  assert.deepEqual(problems, [], `${label} is not valid for the Messages API:\n${problems.slice(0, 10).join('\n')}`);
}

/**
 * {@link assertValidForApi}, and the library's validateForApi agrees (`strict`), or — for
 * transformations of random histories — accepts `output` whenever it accepted `input`.
 */
export function assertApiValid(cc, output, { input, strict = true, label = 'result' } = {}) {
  assertValidForApi(output, input, label);
  const v = cc.validateForApi(output);
  if (strict || (input && cc.validateForApi(input).valid)) {
    assert.equal(v.valid, true, `${label}: validateForApi rejects it: ${JSON.stringify(v.problems.slice(0, 5))}`);
  }
}

/** The latest message the user wrote (text, not a tool result, not a summary, main chain). */
export function latestUserMessage(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    const p = sentPart(m);
    if (!p?.user || m.type === 'attachment' || m.isCompactSummary) continue;
    if (p.blocks.some((b) => b?.type === 'tool_result')) continue;
    if (p.blocks.some((b) => b?.type === 'text')) return { index: i, message: m };
  }
  return null;
}

// ---- Text checks -------------------------------------------------------------------------------

/** Whether a message has text (a non-empty string or text block), as SPEC §12 counts. */
export function hasText(m) {
  if (m?.isSidechain) return false;
  const c = m?.type !== undefined ? (m.type === 'user' || m.type === 'assistant' ? m.message?.content : undefined) : m?.content;
  if (typeof c === 'string') return c.length > 0;
  return Array.isArray(c) && c.some((b) => b?.type === 'text' && typeof b.text === 'string' && b.text.length > 0);
}

/** The texts of all text blocks/strings in messages, joined (for searching). */
export function allText(messages) {
  return JSON.stringify(messages);
}

// ---- Isolation ---------------------------------------------------------------------------------

/**
 * Runs `body` (the inside of an async function that gets `cc`, the built package) in a fresh
 * Node process and returns `{status, signal, stdout, stderr, value}`; `value` is what the
 * function returned (JSON), when it got that far. A crash of the WebAssembly instance or of
 * the process is reported here instead of killing the test runner.
 */
export function runIsolated(body, { timeout = 60_000 } = {}) {
  const code = `
    import * as cc from ${JSON.stringify(PKG)};
    cc.setEnvironmentDefaults({});
    const f = async (cc) => { ${body} };
    f(cc).then(
      (v) => { process.stdout.write('\\n@@RESULT@@' + JSON.stringify(v === undefined ? null : v) + '\\n'); },
      (e) => { process.stdout.write('\\n@@RESULT@@' + JSON.stringify({ thrown: true, name: e?.name, code: e?.code, message: String(e?.message ?? e) }) + '\\n'); },
    );
  `;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout, maxBuffer: 64 * 1024 * 1024 });
  const m = /@@RESULT@@(.*)\n/.exec(r.stdout ?? '');
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, value: m ? JSON.parse(m[1]) : undefined };
}

/**
 * The package's own `js_view.js` module instance (the one its glue imported: the same URL,
 * so the same module), for tests that switch its readers or call them directly.
 */
export async function packageJsView() {
  return packageSnippet('js_view.js');
}

/** The package's own js_index.js (microCompact's and the compaction's readers). */
export async function packageJsIndex() {
  return packageSnippet('js_index.js');
}

async function packageSnippet(file) {
  const snippets = new URL('../../../pkg/snippets/', import.meta.url);
  const [snippet] = readdirSync(snippets);
  return import(new URL(`${snippet}/src/bindings/${file}`, snippets));
}

/** What a synchronous call gives: its value, or its error's code and message. */
export function callOutcome(f) {
  try {
    return { value: f() };
  } catch (e) {
    return { code: e.code, message: e.message };
  }
}

// ---- The Compactor's summaries written ahead (compactor-preemptive, lead-round13) ----

/** `config` whose auto-compact threshold is 9,000 tokens for OPUS, and an early line below it. */
export const PREEMPT_LOW = { autoCompactPctOverride: 5 };
export const PREEMPT_EARLY = 8_000;

/** Lets the work a resolved summary resumes run to its end: the library yields to the event
 *  loop between its long passes (checkpoints), so one turn is not always enough. */
export async function flushTurns() {
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 0));
}

/** One round of about 500 tokens (two messages). */
export const qaRound = (i) => [
  { role: 'user', content: `question ${i}: ${filler(1_000, i)}` },
  { role: 'assistant', content: `answer ${i}: ${filler(1_000, i + 1_000)}` },
];
