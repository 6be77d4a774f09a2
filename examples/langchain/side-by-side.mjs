// LangChain v1: our compaction as an agent middleware, side by side with LangChain's own
// summarizationMiddleware on the same conversation — what each keeps, what each loses, and
// the tokens the model is sent afterwards.
// Run: node examples/langchain/side-by-side.mjs   (no API key: LangChain fake chat models)
import { createAgent, summarizationMiddleware } from 'langchain';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { fakeModel } from '@langchain/core/testing';
// In your app: 'context-compaction' and 'context-compaction/agents/langchain'.
import { tokenCountWithEstimation } from '../../pkg/node.js';
import { compactionMiddleware } from '../../pkg/agents/langchain.js';

const text = (content) =>
  typeof content === 'string' ? content : content.map((b) => (typeof b === 'string' ? b : b.text ?? JSON.stringify(b))).join('\n');

/** A summarizer over any LangChain chat model: the library's request in, the model's text out. */
export function langchainSummarizer(model) {
  return async (request, { signal }) => {
    const messages = [
      new SystemMessage(text(request.system ?? '')),
      ...request.messages.map((m) => (m.role === 'user' ? new HumanMessage(text(m.content)) : new AIMessage(text(m.content)))),
    ];
    const reply = await model.invoke(messages, { signal });
    return text(reply.content);
  };
}

/**
 * What a typical model summary does: it names the first request and the files it saw, and
 * forgets the rest (the errors, later instructions). The same fake writes both middlewares'
 * summaries.
 */
function fakeSummaryReply(messages) {
  const all = messages.map((m) => text(m.content)).join('\n');
  const files = [...new Set(all.match(/(?:src|docs)\/[\w/-]+\.\w+/g) ?? [])];
  const first = all.match(/Refactor[^\n"]*/)?.[0] ?? 'a refactoring';
  return new AIMessage(`<summary>The user asked: ${first}. Files involved: ${files.join(', ')}. Work is in progress.</summary>`);
}

/** The conversation both agents start from: a refactoring session with big tool outputs. */
export function conversation() {
  const big = (path) => `// ${path}\n` + `export function step() { return "${path}"; }\n`.repeat(120);
  const call = (id, name, args) => ({ id, name, args, type: 'tool_call' });
  return [
    new HumanMessage({ id: 'h1', content: 'Refactor the parser in src/parser.ts and keep its public API.' }),
    new AIMessage({ id: 'a1', content: '', tool_calls: [call('c1', 'read_file', { path: 'src/parser.ts' })] }),
    new ToolMessage({ id: 't1', tool_call_id: 'c1', name: 'read_file', content: big('src/parser.ts') }),
    new AIMessage({ id: 'a2', content: '', tool_calls: [call('c2', 'run', { cmd: 'npm test' })] }),
    new ToolMessage({ id: 't2', tool_call_id: 'c2', name: 'run', status: 'error', content: "Error: TypeError: cannot read 'kind' of undefined at src/lexer.ts:12" }),
    new HumanMessage({ id: 'h2', content: 'Do not touch src/legacy.ts, other teams depend on it.' }),
    new AIMessage({ id: 'a3', content: '', tool_calls: [call('c3', 'read_file', { path: 'src/lexer.ts' })] }),
    new ToolMessage({ id: 't3', tool_call_id: 'c3', name: 'read_file', content: big('src/lexer.ts') }),
    new AIMessage({ id: 'a4', content: '', tool_calls: [call('c4', 'read_file', { path: 'src/ast.ts' })] }),
    new ToolMessage({ id: 't4', tool_call_id: 'c4', name: 'read_file', content: big('src/ast.ts') }),
    new AIMessage({ id: 'a5', content: 'Fixed the lexer; the tests pass.' }),
    new HumanMessage({ id: 'h3', content: 'Now update the docs in docs/parser.md.' }),
  ];
}

/** The facts of the conversation: files, user messages, errors. */
function factsOf(messages) {
  const all = messages.map((m) => text(m.content)).join('\n');
  return {
    files: [...new Set(all.match(/(?:src|docs)\/[\w/-]+\.\w+/g) ?? [])],
    userMessages: messages.filter((m) => HumanMessage.isInstance(m)).map((m) => text(m.content)),
    errors: all.split('\n').filter((l) => l.startsWith('Error:')),
  };
}

/** Which facts of `before` the messages the model is sent no longer mention. */
function lostFacts(before, sent) {
  const seen = sent.map((m) => text(m.content)).join('\n');
  const facts = factsOf(before);
  return {
    files: facts.files.filter((f) => !seen.includes(f)),
    userMessages: facts.userMessages.filter((u) => !seen.includes(u)),
    errors: facts.errors.filter((e) => !seen.includes(e)),
  };
}

async function runAgent(middleware, summaryModel) {
  const model = fakeModel().respond(new AIMessage('The docs are updated.'));
  const agent = createAgent({ model, tools: [], systemPrompt: 'You are a careful coding agent.', middleware: [middleware] });
  const input = conversation();
  const state = await agent.invoke({ messages: input });
  const sent = model.calls[0].messages;
  return {
    sentMessages: sent.length,
    tokensSent: tokenCountWithEstimation(sent),
    kinds: sent.map((m) => m.getType()),
    lost: lostFacts(input, sent),
    summaryCalls: summaryModel.callCount,
    final: text(state.messages.at(-1).content),
  };
}

export async function main({ log = console.log } = {}) {
  const tokensBefore = tokenCountWithEstimation(conversation());
  const threshold = 2_000; // both trigger at the same size

  const theirsModel = fakeModel().respond(fakeSummaryReply);
  const theirs = await runAgent(
    summarizationMiddleware({ model: theirsModel, trigger: { tokens: threshold }, keep: { messages: 6 } }),
    theirsModel,
  );

  const oursModel = fakeModel().respond(fakeSummaryReply);
  let ourResult;
  const config = { contextWindow: 20_000 + 13_000 + threshold, maxOutputTokens: 20_000 }; // threshold = 2,000 tokens
  const ours = await runAgent(
    compactionMiddleware({ model: 'openai:gpt-4.1', summarize: langchainSummarizer(oursModel), config, onCompaction: (r) => (ourResult = r) }),
    oursModel,
  );

  const appendModel = fakeModel().respond(fakeSummaryReply);
  const oursAppend = await runAgent(
    compactionMiddleware({ model: 'openai:gpt-4.1', summarize: langchainSummarizer(appendModel), config, compactOptions: { appendMissing: true } }),
    appendModel,
  );

  const rows = { 'langchain summarizationMiddleware': theirs, 'compactionMiddleware': ours, 'compactionMiddleware + appendMissing': oursAppend };
  log(`conversation: ${tokensBefore} tokens, ${conversation().length} messages; both trigger at ${threshold}`);
  for (const [name, r] of Object.entries(rows)) {
    const lost = [...r.lost.files, ...r.lost.userMessages.map((u) => `"${u}"`), ...r.lost.errors];
    log(`${name.padEnd(38)} sent ${String(r.tokensSent).padStart(5)} tokens in ${r.sentMessages} messages; lost: ${lost.join('; ') || 'nothing'}`);
  }
  log(`our lossReport (what the model's summary left out): ${JSON.stringify(ourResult?.lossReport)}`);
  return { tokensBefore, threshold, theirs, ours, oursAppend, lossReport: ourResult?.lossReport };
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
