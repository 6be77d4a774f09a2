// The conversation in the three formats the benchmark compares:
//   - the API view of a Claude Code transcript (Anthropic Messages API shape, what microCompact
//     takes), built as SPEC §2 describes;
//   - the Vercel AI SDK's ModelMessage[] (what pruneMessages takes);
//   - LangChain BaseMessage[] (what trimMessages takes).
// All conversions run once, before timing; only the compaction calls are timed.

import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';

const isBoundary = (l) => l.type === 'system' && l.subtype === 'compact_boundary';

/** Index of the first line after the last main-chain compact_boundary (0 when none). */
export function activeStart(lines) {
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i].isSidechain !== true && isBoundary(lines[i])) return i + 1;
  }
  return 0;
}

const blocksOf = (content) =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : [...content];

/**
 * The API view of transcript lines `lines[from..]` (SPEC §2): main-chain user and assistant
 * lines only; all assistant lines of one response (same `message.id`) become one assistant
 * message, and the user lines that follow them (tool results of parallel calls are written
 * interleaved with the response's lines) become one user message. Returns `{role, content}`
 * objects; content blocks are the transcript's own block objects (not copied).
 */
export function buildApiView(lines, from = 0) {
  const out = [];
  let response = null; // {id, message} of the assistant message being assembled
  let user = null; // the user message after it
  for (let i = from; i < lines.length; i++) {
    const l = lines[i];
    if (l.isSidechain === true || (l.type !== 'user' && l.type !== 'assistant')) continue;
    const m = l.message;
    if (m == null || m.content == null) continue;
    if (l.type === 'assistant') {
      const id = typeof m.id === 'string' ? m.id : null;
      if (response !== null && id !== null && response.id === id) {
        response.message.content.push(...blocksOf(m.content));
        continue;
      }
      response = { id, message: { role: 'assistant', content: blocksOf(m.content) } };
      out.push(response.message);
      user = null;
    } else {
      if (user === null) {
        user = { role: 'user', content: m.content };
        out.push(user);
      } else {
        user.content = [...blocksOf(user.content), ...blocksOf(m.content)];
      }
      // A user line ends nothing: later lines of the same response still join it.
    }
  }
  // The API wants the tool results right after their calls: in a merged user message put the
  // tool_result blocks first (they are already first except with interleaving).
  for (const m of out) {
    if (m.role === 'user' && Array.isArray(m.content)) {
      const results = m.content.filter((b) => b.type === 'tool_result');
      if (results.length > 0 && results.length < m.content.length) {
        m.content = [...results, ...m.content.filter((b) => b.type !== 'tool_result')];
      }
    }
  }
  return out;
}

/** Tool name of every tool_use id in an API view. */
function toolNames(view) {
  const names = new Map();
  for (const m of view) {
    if (m.role === 'assistant' && Array.isArray(m.content)) {
      for (const b of m.content) if (b.type === 'tool_use') names.set(b.id, b.name);
    }
  }
  return names;
}

function resultText(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.filter((b) => b.type === 'text').map((b) => b.text).join('\n');
}

/**
 * The API view as AI SDK ModelMessage[]: assistant `text` / `reasoning` / `tool-call` parts;
 * a user message's tool_result blocks become one `role: 'tool'` message of `tool-result`
 * parts (output `text` or `error-text`), its other blocks a user message after it.
 */
export function toAiSdk(view) {
  const names = toolNames(view);
  const out = [];
  for (const m of view) {
    if (m.role === 'assistant') {
      const parts = [];
      for (const b of m.content) {
        if (b.type === 'text') parts.push({ type: 'text', text: b.text });
        else if (b.type === 'thinking') {
          parts.push({
            type: 'reasoning',
            text: b.thinking,
            providerOptions: { anthropic: { signature: b.signature } },
          });
        } else if (b.type === 'tool_use') {
          parts.push({ type: 'tool-call', toolCallId: b.id, toolName: b.name, input: b.input });
        }
      }
      out.push({ role: 'assistant', content: parts });
      continue;
    }
    if (typeof m.content === 'string') {
      out.push({ role: 'user', content: m.content });
      continue;
    }
    const results = [];
    const rest = [];
    for (const b of m.content) {
      if (b.type === 'tool_result') {
        const value = resultText(b.content);
        results.push({
          type: 'tool-result',
          toolCallId: b.tool_use_id,
          toolName: names.get(b.tool_use_id) ?? 'unknown',
          output: b.is_error ? { type: 'error-text', value } : { type: 'text', value },
        });
      } else if (b.type === 'text') {
        rest.push({ type: 'text', text: b.text });
      } else if (b.type === 'image' && b.source?.type === 'base64') {
        rest.push({ type: 'image', image: b.source.data, mediaType: b.source.media_type });
      }
    }
    if (results.length) out.push({ role: 'tool', content: results });
    if (rest.length) out.push({ role: 'user', content: rest });
  }
  return out;
}

/**
 * The API view as LangChain messages: HumanMessage; AIMessage with its text/thinking blocks
 * as content and its tool_use blocks as `tool_calls`; one ToolMessage per tool_result.
 */
export function toLangChain(view) {
  const out = [];
  for (const m of view) {
    if (m.role === 'assistant') {
      const content = [];
      const toolCalls = [];
      for (const b of m.content) {
        if (b.type === 'text') content.push({ type: 'text', text: b.text });
        else if (b.type === 'thinking') {
          content.push({ type: 'thinking', thinking: b.thinking, signature: b.signature });
        } else if (b.type === 'tool_use') {
          toolCalls.push({ type: 'tool_call', id: b.id, name: b.name, args: b.input });
        }
      }
      out.push(new AIMessage({ content, tool_calls: toolCalls }));
      continue;
    }
    if (typeof m.content === 'string') {
      out.push(new HumanMessage({ content: m.content }));
      continue;
    }
    const rest = [];
    for (const b of m.content) {
      if (b.type === 'tool_result') {
        out.push(
          new ToolMessage({
            content: resultText(b.content),
            tool_call_id: b.tool_use_id,
            status: b.is_error ? 'error' : 'success',
          }),
        );
      } else if (b.type === 'text') {
        rest.push({ type: 'text', text: b.text });
      }
    }
    if (rest.length) out.push(new HumanMessage({ content: rest }));
  }
  return out;
}
