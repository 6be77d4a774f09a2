// Renders a conversation in the Anthropic Messages API shape ({role, content} messages, as
// `toApiMessages` gives them) into the other shapes the package reads, written apart from the
// library: Vercel AI SDK ModelMessage and UIMessage, OpenAI Chat Completions messages and
// Responses input items, LangChain messages (instances, stored, serialized). Each keeps
// everything the model reads — text, reasoning, tool names and arguments, tool outputs, media —
// so that the same conversation counts the same in every shape. Used by the shape tests.
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, mapChatMessagesToStoredMessages } from '@langchain/core/messages';

const blocks = (c) => (typeof c === 'string' ? [{ type: 'text', text: c }] : Array.isArray(c) ? c : []);
const isResult = (b) => b?.type === 'tool_result';
// A plain-text document (read as its text in every shape): a file of its text elsewhere.
const isTextDoc = (b) => b.type === 'document' && b.source?.type === 'text';
const base64Of = (text) => Buffer.from(text).toString('base64');
const dataUrl = (source) => (source?.type === 'base64' ? `data:${source.media_type};base64,${source.data}`
  : source?.type === 'text' ? `data:text/plain;base64,${base64Of(source.data)}` : source?.url ?? '');
const resultText = (c) => (typeof c === 'string' ? c : blocks(c).filter((b) => b.type === 'text' || isTextDoc(b)).map((b) => (b.type === 'text' ? b.text : b.source.data)).join(''));
const resultMedia = (c) => blocks(c).filter((b) => b.type === 'image' || (b.type === 'document' && !isTextDoc(b)));

/** Tool name of every tool_use id. */
function toolNames(api) {
  const names = new Map();
  for (const m of api) for (const b of blocks(m.content)) if (b.type === 'tool_use') names.set(b.id, b.name);
  return names;
}

// ---- Vercel AI SDK --------------------------------------------------------------------------

function aiMedia(b) {
  if (isTextDoc(b)) return { type: 'file', data: base64Of(b.source.data), mediaType: 'text/plain' };
  if (b.type === 'image') return { type: 'image', image: b.source?.type === 'base64' ? b.source.data : dataUrl(b.source), mediaType: b.source?.media_type ?? 'image/png' };
  return { type: 'file', data: b.source?.data ?? dataUrl(b.source), mediaType: b.source?.media_type ?? 'application/pdf' };
}

function aiOutput(b) {
  const media = resultMedia(b.content);
  if (media.length) {
    return { type: 'content', value: [
      ...blocks(b.content).filter((n) => n.type === 'text').map((n) => ({ type: 'text', text: n.text })),
      ...media.map((n) => ({ type: 'media', data: n.source?.data ?? '', mediaType: n.source?.media_type ?? 'image/png' })),
    ] };
  }
  return { type: b.is_error ? 'error-text' : 'text', value: resultText(b.content) };
}

/** ModelMessage[]: a user message's tool results become one `tool` message before the rest. */
export function toAiSdkModel(api) {
  const names = toolNames(api);
  const out = [];
  for (const m of api) {
    if (m.role === 'system') { out.push({ role: 'system', content: resultText(m.content) }); continue; }
    if (m.role === 'assistant') {
      const content = [];
      for (const b of blocks(m.content)) {
        if (b.type === 'text') content.push({ type: 'text', text: b.text });
        else if (b.type === 'thinking') content.push({ type: 'reasoning', text: b.thinking });
        else if (b.type === 'tool_use') content.push({ type: 'tool-call', toolCallId: b.id, toolName: b.name, input: b.input });
      }
      out.push({ role: 'assistant', content });
      continue;
    }
    if (typeof m.content === 'string') { out.push({ role: 'user', content: m.content }); continue; }
    const results = m.content.filter(isResult);
    if (results.length) {
      out.push({ role: 'tool', content: results.map((b) => ({ type: 'tool-result', toolCallId: b.tool_use_id, toolName: names.get(b.tool_use_id) ?? 'unknown', output: aiOutput(b) })) });
    }
    const rest = m.content.filter((b) => !isResult(b)).map((b) => (b.type === 'text' ? { type: 'text', text: b.text } : aiMedia(b)));
    if (rest.length) out.push({ role: 'user', content: rest });
  }
  return out;
}

/**
 * UIMessage[] (what `useChat` keeps): the assistant's steps up to the next user prompt are one
 * assistant UIMessage (`step-start` between steps), each tool part holding input and output.
 * Media inside a tool result has no place in a UI tool output: it is left out (the counts are
 * compared without it).
 */
export function toAiSdkUi(api) {
  const names = toolNames(api);
  const out = [];
  let assistant = null;
  let id = 0;
  const results = new Map();
  for (const m of api) for (const b of blocks(m.content)) if (isResult(b)) results.set(b.tool_use_id, b);
  for (const m of api) {
    if (m.role === 'assistant') {
      if (assistant === null) { assistant = { id: `a${++id}`, role: 'assistant', parts: [] }; out.push(assistant); }
      assistant.parts.push({ type: 'step-start' });
      for (const b of blocks(m.content)) {
        if (b.type === 'text') assistant.parts.push({ type: 'text', text: b.text });
        else if (b.type === 'thinking') assistant.parts.push({ type: 'reasoning', text: b.thinking });
        else if (b.type === 'tool_use') {
          const r = results.get(b.id);
          const part = { type: `tool-${names.get(b.id) ?? b.name}`, toolCallId: b.id, input: b.input };
          if (r === undefined) Object.assign(part, { state: 'input-available' });
          else if (r.is_error) Object.assign(part, { state: 'output-error', errorText: resultText(r.content) });
          else Object.assign(part, { state: 'output-available', output: resultText(r.content) });
          assistant.parts.push(part);
        }
      }
      continue;
    }
    const rest = blocks(m.content).filter((b) => !isResult(b));
    if (rest.length === 0) continue; // only results: they live in the assistant's tool parts
    assistant = null;
    out.push({ id: `u${++id}`, role: m.role === 'system' ? 'system' : 'user', parts: rest.map((b) => (b.type === 'text' ? { type: 'text', text: b.text } : { type: 'file', mediaType: b.source?.media_type ?? 'image/png', url: dataUrl(b.source) })) });
  }
  return out;
}

// ---- OpenAI -----------------------------------------------------------------------------------

function chatPart(b) {
  if (b.type === 'text') return { type: 'text', text: b.text };
  if (isTextDoc(b)) return { type: 'text', text: b.source.data };
  if (b.type === 'image') return { type: 'image_url', image_url: { url: dataUrl(b.source) } };
  return { type: 'file', file: { file_data: dataUrl(b.source), filename: 'document.pdf' } };
}

/**
 * Chat Completions messages: thinking as `reasoning_content` (the field OpenAI-compatible
 * servers use), tool results as `tool` messages; media a tool returned goes in a user message
 * after them (a `tool` message holds text only).
 */
export function toOpenAiChat(api) {
  const out = [];
  for (const m of api) {
    if (m.role === 'system') { out.push({ role: 'system', content: resultText(m.content) }); continue; }
    if (m.role === 'assistant') {
      const bs = blocks(m.content);
      const msg = { role: 'assistant', content: bs.filter((b) => b.type === 'text').map((b) => b.text).join('') || null };
      const thinking = bs.filter((b) => b.type === 'thinking').map((b) => b.thinking).join('');
      if (thinking) msg.reasoning_content = thinking;
      const calls = bs.filter((b) => b.type === 'tool_use');
      if (calls.length) msg.tool_calls = calls.map((b) => ({ id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) } }));
      out.push(msg);
      continue;
    }
    if (typeof m.content === 'string') { out.push({ role: 'user', content: m.content }); continue; }
    const media = [];
    for (const b of m.content.filter(isResult)) {
      out.push({ role: 'tool', tool_call_id: b.tool_use_id, content: resultText(b.content) });
      media.push(...resultMedia(b.content));
    }
    const rest = [...m.content.filter((b) => !isResult(b)), ...media];
    if (rest.length) out.push({ role: 'user', content: rest.map(chatPart) });
  }
  return out;
}

function responsesPart(b) {
  if (b.type === 'text') return { type: 'input_text', text: b.text };
  if (isTextDoc(b)) return { type: 'input_text', text: b.source.data };
  if (b.type === 'image') return { type: 'input_image', image_url: dataUrl(b.source), detail: 'auto' };
  return { type: 'input_file', file_data: dataUrl(b.source), filename: 'document.pdf' };
}

/** Responses input items: reasoning items (summary text), assistant messages, function calls and outputs. */
export function toOpenAiResponses(api) {
  const out = [];
  let n = 0;
  for (const m of api) {
    if (m.role === 'system') { out.push({ role: 'developer', content: resultText(m.content) }); continue; }
    if (m.role === 'assistant') {
      for (const b of blocks(m.content)) {
        if (b.type === 'thinking') out.push({ type: 'reasoning', id: `rs_${++n}`, summary: [{ type: 'summary_text', text: b.thinking }] });
        else if (b.type === 'text') out.push({ type: 'message', role: 'assistant', id: `msg_${++n}`, status: 'completed', content: [{ type: 'output_text', text: b.text, annotations: [] }] });
        else if (b.type === 'tool_use') out.push({ type: 'function_call', call_id: b.id, name: b.name, arguments: JSON.stringify(b.input ?? {}) });
      }
      continue;
    }
    if (typeof m.content === 'string') { out.push({ role: 'user', content: m.content }); continue; }
    for (const b of m.content.filter(isResult)) {
      const media = resultMedia(b.content);
      out.push({ type: 'function_call_output', call_id: b.tool_use_id, output: media.length ? blocks(b.content).map(responsesPart) : resultText(b.content) });
    }
    const rest = m.content.filter((b) => !isResult(b));
    if (rest.length) out.push({ type: 'message', role: 'user', content: rest.map(responsesPart) });
  }
  return out;
}

// ---- LangChain ----------------------------------------------------------------------------------

/**
 * LangChain messages, as ChatAnthropic writes them: content blocks kept (an AIMessage's
 * tool_use blocks also as `tool_calls`), each tool result a ToolMessage.
 */
export function toLangChain(api) {
  const out = [];
  for (const m of api) {
    if (m.role === 'system') { out.push(new SystemMessage(resultText(m.content))); continue; }
    if (m.role === 'assistant') {
      const bs = blocks(m.content);
      const calls = bs.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, name: b.name, args: b.input ?? {}, type: 'tool_call' }));
      out.push(new AIMessage({ content: bs, tool_calls: calls }));
      continue;
    }
    if (typeof m.content === 'string') { out.push(new HumanMessage(m.content)); continue; }
    for (const b of m.content.filter(isResult)) {
      out.push(new ToolMessage({ content: typeof b.content === 'string' ? b.content : blocks(b.content), tool_call_id: b.tool_use_id, status: b.is_error ? 'error' : 'success' }));
    }
    const rest = m.content.filter((b) => !isResult(b));
    if (rest.length) out.push(new HumanMessage({ content: rest }));
  }
  return out;
}

/** The stored form (`mapChatMessagesToStoredMessages`). */
export const toLangChainStored = (api) => mapChatMessagesToStoredMessages(toLangChain(api));

/** The serialized form (`JSON.stringify` of the instances: `{lc: 1, type: 'constructor', …}`). */
export const toLangChainSerialized = (api) => JSON.parse(JSON.stringify(toLangChain(api)));

/** Every shape, by the name `result.messageShape` gives (the LangChain forms share one). */
export const SHAPES = [
  { name: 'ai-sdk-model', shape: 'ai-sdk-model', convert: toAiSdkModel },
  { name: 'ai-sdk-ui', shape: 'ai-sdk-ui', convert: toAiSdkUi },
  { name: 'openai-chat', shape: 'openai-chat', convert: toOpenAiChat },
  { name: 'openai-responses', shape: 'openai-responses', convert: toOpenAiResponses },
  { name: 'langchain', shape: 'langchain', convert: toLangChain },
  { name: 'langchain-stored', shape: 'langchain', convert: toLangChainStored },
  { name: 'langchain-serialized', shape: 'langchain', convert: toLangChainSerialized },
];
