// Helpers of the reliability suite (tests/node/reliability.test.mjs, RELIABILITY.md): a seeded
// random-history generator (both shapes, parallel tool calls interleaved with their results,
// server tools, thinking, split responses, media, attachments, sub-agent and non-API lines),
// an independent checker of the Messages API invariants (written apart from the library and
// from helpers/conversations.mjs), a strict fake summarizer, exact-size media blocks, and a
// runner that executes a snippet in a separate Node process (a WebAssembly crash there cannot
// take the test runner down with it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const PKG = fileURLToPath(new URL('../../../pkg/node.js', import.meta.url));

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

const WORDS = ['parser', 'token', 'window', 'résumé', 'cache', '😀', 'thread', 'quoted"', 'back\\slash', 'line\n', 'tab\t', '中文', 'alpha', 'bravo'];

/** Deterministic text of about `len` UTF-16 units. */
export function words(len, k = 0) {
  let s = '';
  let i = k;
  while (s.length < len) {
    s += WORDS[i % WORDS.length] + ' ';
    i = (i * 31 + 7) >>> 0;
  }
  return s.slice(0, len).replace(/[\uD800-\uDBFF]$/, 'x'); // never end on half a pair
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
  let parent = null;
  const base = Date.UTC(2026, 2, 1);
  const line = (type, fields, sidechain = false) => {
    const uuid = `r-${String(++n).padStart(6, '0')}`;
    const l = {
      parentUuid: parent, isSidechain: sidechain, userType: 'external', cwd: '/work/app', sessionId: 'rel-js-1', version: '2.1.39',
      type, ...fields, uuid, timestamp: new Date(base + n * 1000).toISOString(),
    };
    if (!sidechain && type !== 'progress') parent = uuid;
    return l;
  };
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
      const logical = parent;
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

// ---- An independent checker of the Messages API invariants (SPEC §2) ---------------------------

const isSide = (m) => m?.isSidechain === true;
const isBoundary = (m) => !isSide(m) && m?.type === 'system' && m?.subtype === 'compact_boundary';

/** `{user, blocks, id}` of a message that is sent to the model, or null. */
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

/** The API view: after the last boundary, one response's lines merged (across interleaved
 *  result lines), consecutive same-role messages merged. `[{user, id, blocks, lines}]`. */
export function sentView(messages) {
  let start = 0;
  messages.forEach((m, i) => { if (isBoundary(m)) start = i + 1; });
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
    } else view.push({ user: p.user, id: p.id, blocks: [...p.blocks], lines: [i] });
  }
  return { view, problems };
}

/** Every broken invariant (empty array: valid). */
export function checkApi(messages) {
  const { view, problems } = sentView(messages);
  if (view.length === 0) return ['nothing is sent'];
  if (!view[0].user) problems.push(`the first message sent is an assistant message (lines ${view[0].lines})`);
  const uses = new Set();
  view.forEach((m, k) => {
    const at = `message ${k} (lines ${m.lines.join(',')})`;
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
        if (!(next?.user && next.blocks.some((r) => r?.type === 'tool_result' && r.tool_use_id === b.id))) problems.push(`${at}: tool_use ${b.id} not answered in the next message`);
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
      if (typeof t === 'string' && t !== 'tool_result' && t.endsWith('_tool_result') && !server.includes(b.tool_use_id)) problems.push(`${at}: ${t} ${b.tool_use_id} before/without its server_tool_use`);
    }
    for (const [id, count] of results) if (count > 1) problems.push(`${at}: tool_result ${id} given ${count} times`);
    for (const s of server) {
      if (!m.blocks.some((b) => b?.type !== 'tool_result' && b?.type?.endsWith('_tool_result') && b.tool_use_id === s)) problems.push(`${at}: server_tool_use ${s} has no result`);
    }
  });
  return problems;
}

/**
 * Failure mode 8: every sent assistant response of `output` that holds thinking is exactly a
 * response of `input` (transcripts: all lines of that message.id, byte-identical; API shape:
 * the whole message), and no thinking block is anywhere else.
 */
export function thinkingProblems(input, output) {
  const problems = [];
  const hasThinking = (m) => (sentPart(m)?.blocks ?? []).some((b) => b?.type === 'thinking' || b?.type === 'redacted_thinking');
  const sentFrom = (msgs) => msgs.reduce((s, m, i) => (isBoundary(m) ? i + 1 : s), 0);
  // Lines of response `id` in what is sent (after the last boundary).
  const linesOf = (msgs, id) => msgs.slice(sentFrom(msgs)).filter((m) => !isSide(m) && m?.type === 'assistant' && m.message?.id === id).map((m) => JSON.stringify(m.message));
  const inputs = new Set(input.map((m) => JSON.stringify(m)));
  const start = sentFrom(output);
  for (let i = start; i < output.length; i++) {
    const m = output[i];
    const p = sentPart(m);
    if (!p || !hasThinking(m)) continue;
    if (p.user) problems.push(`line ${i}: thinking in a user message`);
    else if (p.id !== undefined) {
      const a = linesOf(input, p.id);
      const b = linesOf(output, p.id);
      if (a.join('\n') !== b.join('\n')) problems.push(`response ${p.id}: lines edited or split (${a.length} in, ${b.length} out)`);
    } else if (!inputs.has(JSON.stringify(m))) problems.push(`line ${i}: an assistant message with thinking was edited`);
  }
  return problems;
}

/**
 * Asserts `output` is a valid request: the independent checker finds nothing, and the library's
 * validateForApi agrees (`strict`), or — for transformations of random histories — accepts it
 * whenever it accepted `input`.
 */
export function assertApiValid(cc, output, { input, strict = true, label = 'result' } = {}) {
  const mine = checkApi(output);
  assert.deepEqual(mine, [], `${label}: the independent checker rejects it:\n${mine.slice(0, 8).join('\n')}`);
  const v = cc.validateForApi(output);
  if (strict || (input && cc.validateForApi(input).valid)) {
    assert.equal(v.valid, true, `${label}: validateForApi rejects it: ${JSON.stringify(v.problems.slice(0, 5))}`);
  }
  if (input) {
    const t = thinkingProblems(input, output);
    assert.deepEqual(t, [], `${label}: thinking was edited:\n${t.join('\n')}`);
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

// ---- Summarizers -------------------------------------------------------------------------------

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

/** The exact body of the API's 400 "prompt is too long". */
export function ptlError(actual, limit) {
  const body = { type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${actual} tokens > ${limit} maximum` } };
  return Object.assign(new Error(`400 ${JSON.stringify(body)}`), { status: 400, error: body });
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

/** A Messages API response body with the summary. */
export function summaryBody(summary, o = {}) {
  return {
    id: 'msg_rel', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text: `<analysis>notes</analysis>\n<summary>\n${summary}\n</summary>` }],
    stop_reason: o.stopReason ?? 'end_turn', stop_sequence: null,
    usage: { input_tokens: 3_000, output_tokens: 200, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
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
