// Shared fixtures of the pipeline tests: conversation generators (API shape and Claude Code
// transcript shape), scripted summarizers and API errors, a Messages-API validity checker for
// compacted conversations, and loaders for the real transcripts in ../shared/transcripts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../../', import.meta.url));
export const TRANSCRIPTS = fileURLToPath(new URL('../../../../shared/transcripts/', import.meta.url));
export const LONG_TRANSCRIPT = `${TRANSCRIPTS}cc_long_autocompact_4d5611e5.jsonl`;

export const OPUS = 'claude-opus-4-6';
export const SONNET = 'claude-sonnet-4-5';

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
  let parent = null;
  let n = 0;
  const base = Date.UTC(2026, 0, 1, 12, 0, 0);
  const push = (line) => {
    const uuid = `u-${String(++n).padStart(5, '0')}`;
    const full = {
      parentUuid: parent,
      isSidechain: false,
      userType: 'external',
      cwd: '/home/user/project',
      sessionId: session,
      version: '2.1.39',
      gitBranch: 'main',
      ...line,
      uuid,
      timestamp: new Date(base + n * 1000).toISOString(),
    };
    lines.push(full);
    if (!full.isSidechain && full.type !== 'progress') parent = uuid;
    return full;
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

/** A Messages API response body with the summary text. */
export function summaryResponse(summary = 'The user asked for things; they were done.', o = {}) {
  return {
    id: 'msg_summary',
    type: 'message',
    role: 'assistant',
    model: o.model ?? SONNET,
    content: [{ type: 'text', text: o.raw ?? `<analysis>scratch work</analysis>\n<summary>\n${summary}\n</summary>` }],
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

// ---- The API view and its validity -----------------------------------------------------------

const blocksOf = (content) => {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (Array.isArray(content)) return content;
  return [];
};

/**
 * The API view of a conversation (what is sent to the model): for transcript lines, only
 * main-chain user/assistant/attachment lines after the last compact_boundary; the lines of one
 * response (same message.id) merged into one assistant message even when tool_result lines
 * are interleaved; consecutive messages of one role merged. API-shaped messages are taken by
 * role (lines without a role, like the boundary marker, are not sent).
 * Returns `[{role, content: Block[], sources: number[]}]`.
 */
export function apiView(messages) {
  let start = 0;
  messages.forEach((m, i) => {
    if (m && m.type === 'system' && m.subtype === 'compact_boundary') start = i + 1;
  });
  const view = [];
  let lastAssistant = -1;
  let lastAssistantId;
  for (let i = start; i < messages.length; i++) {
    const m = messages[i];
    if (!m || typeof m !== 'object' || m.isSidechain === true) continue;
    let role;
    let blocks;
    let id;
    if (m.type !== undefined) {
      if (m.type === 'attachment') {
        role = 'user';
        blocks = [{ type: 'text', text: JSON.stringify(m.attachment ?? {}) }];
      } else if (m.type === 'user' || m.type === 'assistant') {
        role = m.message?.role ?? m.type;
        blocks = blocksOf(m.message?.content);
        id = m.message?.id;
        if (m.message?.content === '' || (Array.isArray(m.message?.content) && m.message.content.length === 0)) blocks = null;
      } else continue;
    } else if (m.role === 'user' || m.role === 'assistant') {
      role = m.role;
      blocks = m.content === '' || (Array.isArray(m.content) && m.content.length === 0) ? null : blocksOf(m.content);
    } else continue;
    if (blocks === null) {
      // Empty content: kept visible so the validator reports it.
      view.push({ role, content: [], sources: [i], empty: true });
      if (role === 'assistant') {
        lastAssistant = view.length - 1;
        lastAssistantId = id;
      }
      continue;
    }
    if (role === 'assistant' && id !== undefined && id === lastAssistantId && lastAssistant >= 0) {
      view[lastAssistant].content.push(...blocks);
      view[lastAssistant].sources.push(i);
      continue;
    }
    const last = view[view.length - 1];
    if (last && last.role === role && !last.empty) {
      last.content.push(...blocks);
      last.sources.push(i);
    } else {
      view.push({ role, content: [...blocks], sources: [i] });
    }
    if (role === 'assistant') {
      lastAssistant = view.length - 1;
      lastAssistantId = id;
    }
  }
  return view;
}

/**
 * Problems that would make the Messages API reject the conversation (SPEC §2), as strings:
 * first sent message not a user message; empty content or empty text blocks; a tool_use not
 * answered in the very next message; a tool_result not following its tool_use; a server tool
 * use without its result in the same response; a thinking block that is not byte-identical
 * to one of `original` (when given).
 */
export function apiProblems(messages, original) {
  const problems = [];
  const view = apiView(messages);
  if (view.length === 0) return ['no message is sent'];
  if (view[0].role !== 'user') problems.push(`the first message sent is ${view[0].role}`);
  const thinkingOk = new Set();
  if (original) {
    for (const m of original) {
      const c = m?.message?.content ?? m?.content;
      if (Array.isArray(c)) for (const b of c) if (b?.type === 'thinking' || b?.type === 'redacted_thinking') thinkingOk.add(JSON.stringify(b));
    }
  }
  view.forEach((msg, k) => {
    const where = `view[${k}] (${msg.role}, lines ${msg.sources.join(',')})`;
    if (msg.empty || msg.content.length === 0) problems.push(`${where}: empty content`);
    for (const b of msg.content) {
      if (b?.type === 'text' && (typeof b.text !== 'string' || b.text === '')) problems.push(`${where}: empty text block`);
      if ((b?.type === 'thinking' || b?.type === 'redacted_thinking') && original && !thinkingOk.has(JSON.stringify(b))) {
        problems.push(`${where}: a thinking block was edited`);
      }
    }
    if (msg.role === 'assistant') {
      const uses = msg.content.filter((b) => b?.type === 'tool_use').map((b) => b.id);
      if (uses.length) {
        const next = view[k + 1];
        const answered = new Set(next && next.role === 'user' ? next.content.filter((b) => b?.type === 'tool_result').map((b) => b.tool_use_id) : []);
        for (const id of uses) if (!answered.has(id)) problems.push(`${where}: tool_use ${id} is not answered in the next message`);
      }
      const serverUses = msg.content.filter((b) => b?.type === 'server_tool_use').map((b) => b.id);
      const serverResults = new Set(msg.content.filter((b) => b?.tool_use_id !== undefined && b?.type !== 'tool_result').map((b) => b.tool_use_id));
      for (const id of serverUses) if (!serverResults.has(id)) problems.push(`${where}: server_tool_use ${id} has no result`);
    }
    if (msg.role === 'user') {
      const prev = view[k - 1];
      const asked = new Set(prev && prev.role === 'assistant' ? prev.content.filter((b) => b?.type === 'tool_use').map((b) => b.id) : []);
      for (const b of msg.content) {
        if (b?.type === 'tool_result' && !asked.has(b.tool_use_id)) problems.push(`${where}: tool_result ${b.tool_use_id} does not follow its tool_use`);
      }
    }
  });
  return problems;
}

/** Asserts that the conversation is valid for the Messages API (see {@link apiProblems}). */
export function assertValidForApi(messages, original, label = 'conversation') {
  const problems = apiProblems(messages, original);
  assert.deepEqual(problems, [], `${label} is not valid for the Messages API:\n${problems.slice(0, 10).join('\n')}`);
}

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
