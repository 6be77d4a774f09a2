// An OpenAI SDK Chat Completions tool loop that compacts when due (anchored on the reported
// usage) and once more after a context-length rejection. The SDK client talks to a fake
// server (a custom `fetch`).
// Run: node examples/openai/tool-loop.mjs   (no API key)
import OpenAI from 'openai';
// In your app: 'context-compaction' and 'context-compaction/agents/openai'.
import { offlineSummarizer, tokenCountWithEstimation } from '../../pkg/node.js';
import { runChatToolLoop } from '../../pkg/agents/openai.js';

const json = (status, body) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * A fake Chat Completions server: asks for `files` one per reply with `read_file`, then
 * answers; rejects one request (the `rejectAt`-th) with OpenAI's context-length error.
 */
export function fakeChatCompletions({ files, rejectAt = -1 }) {
  const requests = [];
  let served = 0;
  const fetch = async (url, init) => {
    const body = JSON.parse(init.body);
    const tokens = Math.ceil(JSON.stringify(body.messages).length / 4);
    requests.push({ tokens, messages: body.messages.length, body });
    if (requests.length - 1 === rejectAt) {
      return json(400, { error: { message: `This model's maximum context length is 128000 tokens. However, your messages resulted in ${tokens + 130000} tokens. Please reduce the length of the messages.`, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } });
    }
    const next = files[served];
    if (next) served += 1;
    const message = next
      ? { role: 'assistant', content: null, tool_calls: [{ id: `call_${requests.length}`, type: 'function', function: { name: 'read_file', arguments: JSON.stringify({ path: next }) } }] }
      : { role: 'assistant', content: `Reviewed ${files.length} files.` };
    return json(200, {
      id: `chatcmpl-${requests.length}`, object: 'chat.completion', created: 1, model: body.model,
      choices: [{ index: 0, message, finish_reason: next ? 'tool_calls' : 'stop' }],
      usage: { prompt_tokens: tokens, completion_tokens: 20, total_tokens: tokens + 20 },
    });
  };
  return { fetch, requests };
}

export async function main({ log = console.log } = {}) {
  const files = Array.from({ length: 6 }, (_, i) => `src/handler_${i}.py`);
  const server = fakeChatCompletions({ files, rejectAt: 3 });
  const client = new OpenAI({ apiKey: 'sk-fake', fetch: server.fetch, maxRetries: 0 });
  const events = [];
  const start = [
    { role: 'system', content: 'You are a code reviewer.' },
    { role: 'user', content: `Review ${files.join(', ')}` },
  ];
  const result = await runChatToolLoop({
    client,
    summarize: offlineSummarizer(), // any summarizer following the contract
    config: { contextWindow: 40_000 }, // a small window, so the example compacts
    messages: start,
    request: { model: 'gpt-4.1', tools: [{ type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } }] },
    tools: { read_file: ({ path }) => `# ${path}\n` + `def handler(): return "${path}"\n`.repeat(400) },
    onCompaction: (r, { step, reason }) => events.push({ step, reason, before: r.preCompactTokenCount, after: r.truePostCompactTokenCount }),
  });
  for (const e of events) log(`step ${e.step}: ${e.reason} compaction ${e.before} → ${e.after} tokens`);
  log(`${result.steps} completions, ${result.compactions} compactions; request sizes: ${server.requests.map((r) => r.tokens).join(', ')}`);
  log(`history to keep: ${result.messages.length} messages, ${tokenCountWithEstimation(result.messages)} tokens; answer: ${result.completion.choices[0].message.content}`);
  return { result, events, requests: server.requests };
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
