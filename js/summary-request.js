// @ts-check
// What the summarizers for other providers (openai.js, ai-sdk.js, langchain.js) share: the
// library's summary request (a Messages API body) read as plain chat text, the answer written
// back as a Messages API response body, the prompt-too-long rule of the library (so a coded
// error can say so), and the error class of the SDK-based summarizers. Plain JavaScript, no
// dependencies.

/**
 * The library's summary request as plain chat text: the system prompt, then user and assistant
 * turns whose content is one string (text blocks joined by a newline; any other block, which
 * the library does not send today, written as `[type]`).
 * @param {unknown} request A Messages API request body.
 * @param {string} who The summarizer's name, for the error message.
 * @returns {{system: string | undefined, messages: Array<{role: 'user' | 'assistant', content: string}>, maxTokens: number | undefined, model: string | undefined}}
 */
export function chatOfRequest(request, who) {
  if (request === null || typeof request !== 'object' || Array.isArray(request)) {
    throw invalidRequest(who, 'request must be a Messages API request body (an object)');
  }
  const r = /** @type {Record<string, unknown>} */ (request);
  if (!Array.isArray(r.messages)) throw invalidRequest(who, 'request.messages must be an array');
  /** @type {Array<{role: 'user' | 'assistant', content: string}>} */
  const messages = [];
  r.messages.forEach((m, i) => {
    if (m === null || typeof m !== 'object') throw invalidRequest(who, `request.messages[${i}] must be an object`);
    const role = /** @type {{role?: unknown}} */ (m).role;
    if (role !== 'user' && role !== 'assistant') {
      throw invalidRequest(who, `request.messages[${i}].role must be 'user' or 'assistant' (got ${JSON.stringify(role)})`);
    }
    messages.push({ role, content: textOfContent(/** @type {{content?: unknown}} */ (m).content) });
  });
  const system = r.system === undefined || r.system === null ? undefined : textOfContent(r.system);
  const maxTokens = typeof r.max_tokens === 'number' && Number.isFinite(r.max_tokens) && r.max_tokens > 0 ? r.max_tokens : undefined;
  return { system: system || undefined, messages, maxTokens, model: typeof r.model === 'string' ? r.model : undefined };
}

/**
 * The text of a Messages API content (a string or an array of blocks).
 * @param {unknown} content
 * @returns {string}
 */
export function textOfContent(content) {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((b) => {
      if (typeof b === 'string') return b;
      if (b && typeof b === 'object') {
        if (typeof b.text === 'string') return b.text;
        if (typeof b.type === 'string') return `[${b.type}]`;
      }
      return '';
    })
    .filter((t) => t !== '')
    .join('\n');
}

/**
 * A Messages API response body for a summary text, as the library reads it back.
 * @param {object} answer
 * @param {string} answer.text The summary text.
 * @param {'end_turn' | 'max_tokens' | 'model_context_window_exceeded' | 'refusal' | 'tool_use' | 'stop_sequence' | null} answer.stopReason
 * @param {{input_tokens?: number, output_tokens?: number, cache_read_input_tokens?: number, cache_creation_input_tokens?: number}} [answer.usage]
 * @param {string} [answer.model]
 * @param {string} [answer.id]
 * @param {unknown} [answer.raw] The provider's own answer, kept as the non-enumerable `providerResponse`.
 * @returns {import('./summary-request.js').SummaryResponseBody}
 */
export function messagesResponse({ text, stopReason, usage = {}, model = '', id = '', raw }) {
  const clean = (/** @type {unknown} */ n) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.round(n) : 0);
  const body = {
    id,
    type: /** @type {'message'} */ ('message'),
    role: /** @type {'assistant'} */ ('assistant'),
    model,
    content: text ? [{ type: /** @type {'text'} */ ('text'), text }] : [],
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: clean(usage.input_tokens),
      output_tokens: clean(usage.output_tokens),
      cache_creation_input_tokens: clean(usage.cache_creation_input_tokens),
      cache_read_input_tokens: clean(usage.cache_read_input_tokens),
    },
  };
  if (raw !== undefined) Object.defineProperty(body, 'providerResponse', { value: raw, enumerable: false, configurable: true });
  return body;
}

/**
 * Whether an error text (with its HTTP status) says the prompt was too long for the model's
 * context — the same rule the library applies to a summarizer's error
 * (`parseContextOverflowError`, src/transforms/ptl.rs): Anthropic's "prompt is too long",
 * "exceed context limit", Gemini's "input token count … maximum number of tokens allowed",
 * xAI's "maximum prompt length is", the llama.cpp server's "exceeds the available context size",
 * OpenAI's "maximum context length" / `context_length_exceeded`, a 413 or "request too large",
 * and the generic wordings.
 * @param {string} text
 * @param {number | undefined} [status]
 */
export function isPromptTooLong(text, status) {
  const s = String(text).toLowerCase();
  if (s.includes('prompt is too long') || s.includes('exceed context limit')) return true;
  if (s.includes('input token count') && s.includes('maximum number of tokens allowed')) return true;
  if (s.includes('maximum prompt length is') || s.includes('available context size')) return true;
  if (s.includes('maximum context length') || s.includes('context_length_exceeded')) return true;
  if (status === 413 || s.includes('request_too_large') || s.includes('request too large')) return true;
  return [
    'exceeds the context window',
    'context window exceeded',
    'context length exceeded',
    'too many tokens',
    'input is too long',
    'exceeds the maximum number of tokens',
  ].some((g) => s.includes(g));
}

/** The statuses the library and these summarizers treat as transient. */
export const TRANSIENT_STATUSES = Object.freeze([408, 409, 429, 500, 502, 503, 504, 529]);

// SummarizerError lives in summarizer-error.js (the factories load it with them; the rest of
// this file is loaded with a summarizer's request half) and is re-exported here.
export { SummarizerError } from './summarizer-error.js';

/**
 * @param {string} who
 * @param {string} message
 */
function invalidRequest(who, message) {
  return Object.assign(new TypeError(`${who}: ${message}`), { code: 'INVALID_ARGUMENT' });
}
