// An Anthropic SDK tool-use loop with a Compactor: compacts when due, and once more after a
// "prompt is too long" rejection. The SDK client talks to a fake Messages API (a custom
// `fetch`), over `messages.create` or `messages.stream`.
// Run: node examples/anthropic/tool-loop.mjs [--stream]   (no API key)
import Anthropic from '@anthropic-ai/sdk';
// In your app: 'context-compaction' and 'context-compaction/agents/anthropic'.
import { Compactor, offlineSummarizer, validateForApi } from '../../pkg/node.js';
import { runToolLoop } from '../../pkg/agents/anthropic.js';

const json = (status, body) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/** Server-sent events of a Messages API stream for one reply. */
function sse(message) {
  const events = [['message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 0 } } }]];
  message.content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } }]);
    } else {
      events.push(['content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } }]);
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
  });
  events.push(['message_delta', { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage: { output_tokens: message.usage.output_tokens } }]);
  events.push(['message_stop', { type: 'message_stop' }]);
  const text = events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join('');
  return new Response(text, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

/**
 * A fake Messages API: reads `files` one per reply with `read_file`, then answers; rejects
 * one request (the `rejectAt`-th) as too long, as the API does. Records every request.
 */
export function fakeMessagesApi({ files, rejectAt = -1 }) {
  const requests = [];
  let served = 0;
  const fetch = async (url, init) => {
    const body = JSON.parse(init.body);
    const tokens = Math.ceil(JSON.stringify(body.messages).length / 4);
    requests.push({ tokens, messages: body.messages.length, body });
    if (requests.length - 1 === rejectAt) {
      return json(400, { type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens + 250000} tokens > 200000 maximum` } });
    }
    const reads = body.messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b.type === 'tool_result').length;
    const next = files[served];
    const done = !next;
    if (!done) served += 1; // the fake remembers what it asked for (a model reads the summary)
    const id = `msg_${requests.length}`;
    const message = {
      id, type: 'message', role: 'assistant', model: body.model,
      content: done
        ? [{ type: 'text', text: `All ${files.length} files reviewed (${reads} results in view).` }]
        : [{ type: 'tool_use', id: `toolu_${requests.length}`, name: 'read_file', input: { path: next } }],
      stop_reason: done ? 'end_turn' : 'tool_use', stop_sequence: null,
      usage: { input_tokens: tokens, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
    return body.stream ? sse(message) : json(200, message);
  };
  return { fetch, requests };
}

export async function main({ log = console.log, stream = process.argv.includes('--stream') } = {}) {
  const files = Array.from({ length: 6 }, (_, i) => `src/mod_${i}.rs`);
  const api = fakeMessagesApi({ files, rejectAt: 4 });
  const client = new Anthropic({ apiKey: 'sk-ant-fake', fetch: api.fetch, maxRetries: 0 });
  const compactor = new Compactor({
    model: 'claude-sonnet-4-5',
    summarize: offlineSummarizer(), // or anthropicSummarizer({ apiKey }) — any summarizer
    config: { contextWindow: 40_000 }, // a small window, so the example compacts
    keepLastUserMessage: true,
  });
  compactor.push({ role: 'user', content: `Review ${files.join(', ')}` });
  const events = [];
  let streamed = '';
  const result = await runToolLoop({
    client,
    compactor,
    stream,
    request: { model: 'claude-sonnet-4-5', max_tokens: 1024, tools: [{ name: 'read_file', description: 'Read a file', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } }] },
    tools: { read_file: ({ path }) => `// ${path}\n` + `pub fn f() -> &'static str { "${path}" }\n`.repeat(250) },
    onCompaction: (r, { step, reason }) => events.push({ step, reason, before: r.preCompactTokenCount, after: r.truePostCompactTokenCount }),
    onText: (t) => (streamed += t),
  });
  for (const e of events) log(`step ${e.step}: ${e.reason} compaction ${e.before} → ${e.after} tokens`);
  log(`${result.steps} requests (${stream ? 'streamed' : 'create'}), ${result.compactions} compactions; request sizes: ${api.requests.map((r) => r.tokens).join(', ')}`);
  log(`answer: ${result.message.content[0].text}`);
  return { result, events, requests: api.requests, valid: validateForApi(compactor.messages), tokensAfter: compactor.tokenCount(), streamed };
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
