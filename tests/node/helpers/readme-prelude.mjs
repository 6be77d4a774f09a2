// The world the README samples run in (tests/node/readme-samples.test.mjs): every name a sample
// uses without defining it, made of fakes — no API key, no network. `fetch` is replaced by a fake
// that speaks the Anthropic Messages API and the OpenAI Chat Completions and Responses APIs
// (streamed or not), so `anthropicSummarizer`, `openaiSummarizer` and the real `@anthropic-ai/sdk`
// and `openai` clients all run for real against it. The fake model writes a summary whose length
// is about fixed (as a real model's is): a compaction of a conversation that is already a summary
// is then not smaller, which is what the README's Compactor sample must handle.
import * as fs from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { generateText, streamText, stepCountIs, tool, jsonSchema, convertToModelMessages } from 'ai';
import { createAgent } from 'langchain';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
import { fakeAiSdkModel } from './readme-modules/ai-sdk-provider.mjs';

/** The summary the fake model writes: about 600 tokens, plus one line per instruction it was given. */
export function fakeSummaryText(requestJson) {
  const body = 'The user is building a parser in src/parser.ts; the tests in test/parser.test.ts pass. '.repeat(28);
  const extra = /keep the schema/.test(requestJson) ? 'As asked, the database schema in db/schema.sql is kept as it was agreed. '.repeat(3) : '';
  const carried = /continued from a previous conversation|continues an earlier conversation/i.test(requestJson)
    ? 'The earlier summary is carried over: every request and file it named still stands. '.repeat(3)
    : '';
  return `<analysis>Read the conversation.</analysis>\n<summary>\n${body}\n${carried}${extra}\n</summary>`;
}

const isSummaryRequest = (json) => json.includes('<summary>');

function sse(events) {
  const text = events.map((e) => (e.event ? `event: ${e.event}\n` : '') + `data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`).join('');
  return new Response(text, { headers: { 'content-type': 'text/event-stream', 'request-id': 'req_fake', 'x-request-id': 'req_fake' } });
}
const json = (body, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'request-id': 'req_fake', 'x-request-id': 'req_fake' } });

/** The fake Anthropic Messages API: a summary for summary requests, else a short answer. */
function anthropicAnswer(body) {
  const text = JSON.stringify(body);
  const usage = { input_tokens: Math.ceil(text.length / 4), output_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  let content;
  let stop_reason = 'end_turn';
  if (body.compaction) {
    content = [{ type: 'compaction', content: fakeSummaryText(text).replace(/<\/?(analysis|summary)>/g, ''), signature: 'sig_fake' }];
    stop_reason = 'compaction';
    usage.input_tokens = 0;
    usage.output_tokens = 0;
  } else {
    content = [{ type: 'text', text: isSummaryRequest(text) ? fakeSummaryText(text) : 'Done: the tests pass.' }];
  }
  const message = { id: 'msg_fake', type: 'message', role: 'assistant', model: body.model, content, stop_reason, stop_sequence: null, usage };
  if (!body.stream) return json(message);
  const events = [{ event: 'message_start', data: { type: 'message_start', message: { ...message, content: [], stop_reason: null } } }];
  content.forEach((b, index) => {
    if (b.type === 'compaction') {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'compaction', content: '' } } });
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'compaction_delta', content: b.content, signature: b.signature } } });
    } else {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
      events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } } });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason, stop_sequence: null }, usage } });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return sse(events);
}

/** The fake OpenAI Chat Completions API. */
function chatAnswer(body) {
  const text = JSON.stringify(body);
  const answer = isSummaryRequest(text) ? fakeSummaryText(text) : 'Done: the tests pass.';
  const usage = { prompt_tokens: Math.ceil(text.length / 4), completion_tokens: 50, total_tokens: Math.ceil(text.length / 4) + 50 };
  const base = { id: 'chatcmpl-fake', object: 'chat.completion', created: 1, model: body.model };
  if (!body.stream) return json({ ...base, choices: [{ index: 0, message: { role: 'assistant', content: answer, refusal: null }, finish_reason: 'stop', logprobs: null }], usage });
  return sse([
    { data: { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: answer }, finish_reason: null }] } },
    { data: { ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
    { data: { ...base, object: 'chat.completion.chunk', choices: [], usage } },
    { data: '[DONE]' },
  ]);
}

/** The fake OpenAI Responses API. */
function responsesAnswer(body) {
  const text = JSON.stringify(body);
  const answer = isSummaryRequest(text) ? fakeSummaryText(text) : 'Done: the tests pass.';
  const usage = { input_tokens: Math.ceil(text.length / 4), output_tokens: 50, total_tokens: Math.ceil(text.length / 4) + 50 };
  const response = {
    id: 'resp_fake', object: 'response', created_at: 1, status: 'completed', model: body.model,
    output: [{ type: 'message', id: 'msg_fake', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: answer, annotations: [] }] }],
    usage,
  };
  if (!body.stream) return json({ ...response, output_text: answer });
  return sse([
    { event: 'response.created', data: { type: 'response.created', response: { ...response, status: 'in_progress', output: [] } } },
    { event: 'response.output_text.delta', data: { type: 'response.output_text.delta', delta: answer, output_index: 0, content_index: 0 } },
    { event: 'response.completed', data: { type: 'response.completed', response } },
  ]);
}

/** Every request the fake `fetch` served, `{url, body}`. */
export const served = [];

/** A `fetch` that answers the Anthropic and OpenAI APIs (any host: base URLs are the caller's). */
export async function fakeFetch(input, init = {}) {
  const url = String(input instanceof Request ? input.url : input);
  const raw = init.body ?? (input instanceof Request ? await input.text() : '{}');
  const body = JSON.parse(typeof raw === 'string' ? raw : new TextDecoder().decode(raw));
  served.push({ url, body });
  if (url.endsWith('/v1/messages')) return anthropicAnswer(body);
  if (url.endsWith('/chat/completions')) return chatAnswer(body);
  if (url.endsWith('/responses')) return responsesAnswer(body);
  return json({ error: { message: `the fake API has no ${url}` } }, 404);
}

const big = (label, n) => `${label}: ` + 'line of code that the agent read from the file\n'.repeat(n);

/** An Anthropic conversation with tool use; the last reply's usage puts it past the threshold of 200K models. */
function anthropicConversation() {
  const messages = [];
  for (let i = 0; i < 12; i += 1) {
    messages.push({ role: 'user', content: i === 0 ? 'Fix the failing parser test in src/parser.ts.' : `Go on with step ${i}.` });
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `Reading file ${i}.` }, { type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { file_path: `src/file${i}.ts` } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: big(`src/file${i}.ts`, 60) }] });
    messages.push({ role: 'assistant', content: `Step ${i} is done.` });
  }
  messages[messages.length - 1].usage = { input_tokens: 170_000, output_tokens: 200, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  return messages;
}

function chatConversation() {
  return [
    { role: 'system', content: 'You are a coding agent.' },
    { role: 'user', content: 'Fix the failing parser test.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"src/parser.ts"}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: big('src/parser.ts', 200) },
    { role: 'assistant', content: 'The parser is fixed.' },
    { role: 'user', content: 'Now update the docs.' },
    { role: 'assistant', content: 'The docs are updated.' },
  ];
}

function responseItemsConversation() {
  return [
    { role: 'user', content: 'Fix the failing parser test.' },
    { type: 'function_call', call_id: 'call_1', name: 'read_file', arguments: '{"path":"src/parser.ts"}' },
    { type: 'function_call_output', call_id: 'call_1', output: big('src/parser.ts', 200) },
    { role: 'assistant', content: 'The parser is fixed.' },
    { role: 'user', content: 'Now update the docs.' },
  ];
}

function uiConversation() {
  const out = [];
  for (let i = 0; i < 6; i += 1) {
    out.push({ id: `u${i}`, role: 'user', parts: [{ type: 'text', text: `Please review file ${i}.` }] });
    out.push({
      id: `a${i}`,
      role: 'assistant',
      parts: [
        { type: 'tool-readFile', toolCallId: `call_${i}`, state: 'output-available', input: { path: `src/file${i}.ts` }, output: big(`src/file${i}.ts`, 60) },
        { type: 'text', text: `File ${i} looks fine.` },
      ],
    });
  }
  return out;
}

function modelConversation() {
  return [
    { role: 'user', content: 'Fix the failing parser test.' },
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'readFile', input: { path: 'src/parser.ts' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'readFile', output: { type: 'text', value: big('src/parser.ts', 200) } }] },
    { role: 'assistant', content: 'The parser is fixed.' },
  ];
}

/** A LangChain chat model (LangChain's own fake) that answers summary requests with a summary. */
function langchainChatModel() {
  const m = fakeModel();
  for (let i = 0; i < 20; i += 1) m.respond((messages) => new AIMessage(isSummaryRequest(JSON.stringify(messages)) ? fakeSummaryText(JSON.stringify(messages)) : 'Done.'));
  return m;
}

/**
 * The names a sample may use without defining them. A fresh world per sample (each runs in its
 * own process). Installs the fake `fetch` and fake API keys.
 */
export async function world() {
  globalThis.fetch = fakeFetch;
  process.env.ANTHROPIC_API_KEY = 'sk-ant-fake';
  process.env.OPENAI_API_KEY = 'sk-fake';
  const pkg = await import('context-compaction');
  const readFileTool = tool({
    description: 'Reads a file.',
    inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
    execute: async ({ path }) => big(path, 5),
  });
  const controller = new AbortController();
  const summarize = pkg.anthropicSummarizer({ apiKey: 'sk-ant-fake' });
  const messages = anthropicConversation();
  return {
    fs,
    // the conversations, in each shape
    messages,
    uiMessages: uiConversation(),
    modelMessages: modelConversation(),
    chatMessages: chatConversation(),
    responseItems: responseItemsConversation(),
    history: [new SystemMessage('Be brief.'), new HumanMessage('Fix the parser.'), new AIMessage({ content: 'Fixed.', usage_metadata: { input_tokens: 900, output_tokens: 20, total_tokens: 920 } }), new HumanMessage('Thanks.')],
    userMessage: { role: 'user', content: 'Now add a test for the empty input.' },
    assistantReply: { role: 'assistant', content: 'The test is added and passes.', usage: { input_tokens: 170_000, output_tokens: 120, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } },
    aiMessage: new AIMessage({ content: '', tool_calls: [{ id: 'call_1', name: 'read_file', args: { path: 'src/parser.ts' } }] }),
    toolMessage: new ToolMessage({ tool_call_id: 'call_1', name: 'read_file', content: big('src/parser.ts', 300) }),
    // models and clients (fakes, or the real SDKs over the fake fetch)
    model: fakeAiSdkModel('gpt-4.1'),
    chatModel: langchainChatModel(),
    client: new Anthropic({ apiKey: 'sk-ant-fake', fetch: fakeFetch, maxRetries: 0 }),
    openai: new OpenAI({ apiKey: 'sk-fake', fetch: fakeFetch, maxRetries: 0 }),
    // what the samples' calls take
    summarize,
    apiKey: 'sk-ant-fake',
    system: 'You are a coding agent.',
    tools: { readFile: readFileTool },
    readFileTool: { name: 'read_file', description: 'Reads a file.', input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
    definitions: [{ type: 'function', function: { name: 'read_file', description: 'Reads a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } }],
    read_file: async ({ path }) => big(path, 5),
    response: { messages: [{ role: 'user', content: 'Hello' }, { role: 'assistant', content: 'Hi! How can I help?' }], usage: { inputTokens: 1200, outputTokens: 40, totalTokens: 1240 } },
    completion: { usage: { prompt_tokens: 3_000, completion_tokens: 50, total_tokens: 3_050 } },
    context: { model: 'claude-sonnet-4-5', summarize },
    readFileState: new Map([['src/parser.ts', { content: big('src/parser.ts', 10), timestamp: 1 }]]),
    hooks: { preCompact: () => ({ instructions: 'Keep the test plan.' }) },
    controller,
    // the libraries' own names a snippet may use without importing
    generateText, streamText, stepCountIs, convertToModelMessages,
    createAgent, AIMessage, HumanMessage, SystemMessage, ToolMessage,
    ...Object.fromEntries(Object.entries(pkg).filter(([k]) => k !== 'default')),
    ...(await import('context-compaction/agents/ai-sdk')),
    ...(await import('context-compaction/agents/langchain')),
    ...(await import('context-compaction/agents/anthropic')),
    ...(await import('context-compaction/agents/openai')),
  };
}
