// Drop-in compaction for Vercel AI SDK agent loops (`context-compaction/agents/ai-sdk`):
// - compactionPrepareStep(): a `prepareStep` for generateText/streamText with `stopWhen` that
//   compacts the step's ModelMessage[] when automatic compaction is due;
// - createChatHandler(): a `useChat` backend route (Request → Response) that keeps UIMessage[]
//   in a store, compacts when due, streams progress as `data-compaction` parts and persists
//   the compacted conversation;
// - memoryChatStore(): the in-memory store of that route.
// `ai` is the caller's own installed package (a peer dependency).
import {
  buildPostCompactMessages,
  compactConversation,
  shouldAutoCompact,
  tokenCountWithEstimation,
} from 'context-compaction';
import { convertToModelMessages, createUIMessageStream, createUIMessageStreamResponse, streamText } from 'ai';
import { MAX_CONSECUTIVE_FAILURES, checkOptions, codedError, notifyIgnoringResult } from './common.js';

/**
 * The model id thresholds are computed for: the `model` option, else the AI SDK model's own
 * `modelId` (a string model is a gateway id such as `openai/gpt-4.1`).
 *
 * @param {unknown} given
 * @param {unknown} model
 * @param {string} where
 * @returns {string}
 */
function modelIdOf(given, model, where) {
  if (typeof given === 'string' && given) return given;
  if (typeof model === 'string' && model) return model;
  const id = model && typeof model === 'object' ? /** @type {{modelId?: unknown}} */ (model).modelId : undefined;
  if (typeof id === 'string' && id) return id;
  throw codedError('INVALID_ARGUMENT', `${where}: cannot tell the model id (give the "modelId" option: a string such as "openai/gpt-4.1")`);
}

const PREPARE_STEP_KEYS = [
  'summarize', 'modelId', 'config', 'context', 'compactOptions', 'system', 'tools', 'prepareStep', 'onCompaction', 'onError',
];

/**
 * A `prepareStep` for `generateText` / `streamText` (with `stopWhen`) that compacts the
 * conversation before a step when automatic compaction is due. The AI SDK gives every step
 * the run's original messages plus the steps' responses; once compacted, every later step of
 * the run is sent the compacted messages plus what came after. After the run,
 * `prepareStep.conversation([...messages, ...result.response.messages])` is the history to
 * keep for the next turn (compacted if a compaction happened, else that array).
 *
 * The count is anchored on the last step's reported usage; before the first step it is
 * estimated, with `system` and `tools` counted when given. Three failed compactions in a row
 * stop further attempts (reported through `onError`, never thrown into the run).
 *
 * @param {import('./ai-sdk.js').CompactionPrepareStepOptions} options
 * @returns {import('./ai-sdk.js').CompactingPrepareStep}
 * @example
 * const prepareStep = compactionPrepareStep({ summarize });
 * const result = await generateText({ model, tools, messages, stopWhen: stepCountIs(20), prepareStep });
 * messages = prepareStep.conversation([...messages, ...result.response.messages]);
 */
export function compactionPrepareStep(options) {
  const where = 'compactionPrepareStep(options)';
  const o = checkOptions(where, options, {
    accepted: PREPARE_STEP_KEYS,
    required: ['summarize'],
    functions: ['summarize', 'prepareStep', 'onCompaction', 'onError'],
    objects: ['config', 'context', 'compactOptions'],
  });
  /** @type {{ prefixLength: number, replacement: any[] | null }} */
  let run = { prefixLength: 0, replacement: null };
  /** @type {{ compactions: number, consecutiveFailures: number, lastResult: any }} */
  const state = { compactions: 0, consecutiveFailures: 0, lastResult: null };

  /** @param {any[]} messages */
  const current = (messages) =>
    run.replacement ? [...run.replacement, ...messages.slice(run.prefixLength)] : messages;

  /** @type {any} */
  const prepareStep = async (/** @type {any} */ args) => {
    if (args.stepNumber === 0) run = { prefixLength: 0, replacement: null };
    let messages = current(args.messages);
    const modelId = modelIdOf(o.modelId, args.model, where);
    const last = args.steps?.[args.steps.length - 1];
    const usage = last?.usage && typeof last.usage.inputTokens === 'number' ? last.usage : undefined;
    const countOptions = { config: o.config, usage, system: o.system, tools: o.tools };
    if (state.consecutiveFailures < MAX_CONSECUTIVE_FAILURES && shouldAutoCompact(messages, modelId, countOptions)) {
      try {
        const result = await compactConversation(
          messages,
          { ...o.context, model: modelId, summarize: o.summarize, config: o.config },
          { keepLastUserMessage: true, ...o.compactOptions, isAutoCompact: true },
        );
        run = { prefixLength: args.messages.length, replacement: buildPostCompactMessages(result) };
        messages = current(args.messages);
        state.compactions += 1;
        state.consecutiveFailures = 0;
        state.lastResult = result;
        await o.onCompaction?.(result, { stepNumber: args.stepNumber });
      } catch (error) {
        state.consecutiveFailures += 1;
        await o.onError?.(error);
      }
    }
    const own = o.prepareStep ? await o.prepareStep({ ...args, messages }) : undefined;
    if (run.replacement) return { messages, ...own };
    return own ?? {};
  };
  prepareStep.conversation = (/** @type {any[]} */ messages) => {
    if (!Array.isArray(messages)) throw codedError('INVALID_ARGUMENT', 'prepareStep.conversation(messages): expected an array');
    return current(messages);
  };
  Object.defineProperties(prepareStep, {
    compactions: { get: () => state.compactions, enumerable: true },
    consecutiveFailures: { get: () => state.consecutiveFailures, enumerable: true },
    lastResult: { get: () => state.lastResult, enumerable: true },
  });
  return prepareStep;
}

/**
 * An in-memory {@link ChatStore}: conversations by chat id, copied in and out (a caller
 * mutating what it loaded does not change the store). For one process; keep conversations in
 * a database, a KV store or files across processes (same two methods).
 *
 * @returns {import('./ai-sdk.js').ChatStore & { readonly size: number }}
 */
export function memoryChatStore() {
  /** @type {Map<string, any[]>} */
  const chats = new Map();
  return {
    async load(chatId) {
      const found = chats.get(chatId);
      return found ? structuredClone(found) : null;
    },
    async save(chatId, messages) {
      chats.set(chatId, structuredClone(messages));
    },
    get size() {
      return chats.size;
    },
  };
}

const HANDLER_KEYS = [
  'model', 'modelId', 'summarize', 'store', 'system', 'tools', 'stopWhen', 'config', 'context', 'compactOptions',
  'streamTextOptions', 'onCompaction', 'onError',
];

/**
 * A JSON error answer of the route.
 *
 * @param {number} status
 * @param {string} code
 * @param {string} message
 */
function errorResponse(status, code, message) {
  return new Response(JSON.stringify({ error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

/**
 * The conversation to answer: the stored one with the request's new message appended (a
 * message whose id is already stored — a regenerate — replaces it and what followed), or the
 * request's messages when nothing is stored yet.
 *
 * @param {any[]} stored
 * @param {any[]} incoming
 */
function mergeIncoming(stored, incoming) {
  if (stored.length === 0) return incoming;
  const last = incoming[incoming.length - 1];
  if (!last) return stored;
  const at = stored.findIndex((m) => m.id === last.id);
  return at >= 0 ? [...stored.slice(0, at), last] : [...stored, last];
}

/**
 * A `useChat` backend route: a plain `Request → Response` handler (the shape of Next.js App
 * Router route handlers, Hono, Remix, Workers). It loads the chat's `UIMessage[]` from
 * `store`, appends the new message, compacts when automatic compaction is due — streaming
 * `data-compaction` parts to the page (`{status: 'compacting', phase}` then
 * `{status: 'compacted', tokensBefore, tokensAfter, summary}`, one part updated in place) and
 * saving the compacted conversation — then streams the model's answer with `streamText` and
 * saves the conversation again when it is complete.
 *
 * The request body is what `useChat` sends: `{id, messages}`, or `{id, message}` when the
 * page sends only its new message (recommended with a store: the server's copy is the
 * compacted one). A bad request answers 400 with `{error: {code, message}}`.
 *
 * @param {import('./ai-sdk.js').ChatHandlerOptions} options
 * @returns {(request: Request) => Promise<Response>}
 * @example
 * export const POST = createChatHandler({ model: openai('gpt-4.1'), summarize, store: memoryChatStore() });
 */
export function createChatHandler(options) {
  const where = 'createChatHandler(options)';
  const o = checkOptions(where, options, {
    accepted: HANDLER_KEYS,
    required: ['model', 'summarize', 'store'],
    functions: ['summarize', 'onCompaction', 'onError'],
    objects: ['store', 'config', 'context', 'compactOptions', 'streamTextOptions'],
  });
  if (typeof o.store.load !== 'function' || typeof o.store.save !== 'function') {
    throw codedError('INVALID_ARGUMENT', `${where}: "store" needs load(chatId) and save(chatId, messages) functions`);
  }
  const modelId = modelIdOf(o.modelId, o.model, where);

  return async function handleChat(request) {
    if (request.method !== 'POST') return errorResponse(405, 'METHOD_NOT_ALLOWED', `expected POST, got ${request.method}`);
    /** @type {any} */
    let body;
    try {
      body = await request.json();
    } catch (error) {
      return errorResponse(400, 'INVALID_REQUEST', `the body is not JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
    const chatId = body?.id;
    if (typeof chatId !== 'string' || !chatId) return errorResponse(400, 'INVALID_REQUEST', 'body.id: expected the chat id (a non-empty string)');
    const incoming = Array.isArray(body.messages) ? body.messages : body.message && typeof body.message === 'object' ? [body.message] : null;
    if (!incoming || incoming.length === 0) return errorResponse(400, 'INVALID_REQUEST', 'body.messages (an array) or body.message (an object) is required');
    for (const [i, m] of incoming.entries()) {
      if (!m || typeof m !== 'object' || typeof m.id !== 'string' || !Array.isArray(m.parts)) {
        return errorResponse(400, 'INVALID_REQUEST', `body.messages[${i}]: expected a UIMessage ({id, role, parts})`);
      }
    }
    let messages = mergeIncoming((await o.store.load(chatId)) ?? [], incoming);

    const stream = createUIMessageStream({
      originalMessages: messages,
      execute: async ({ writer }) => {
        const preamble = { config: o.config, system: o.system, tools: o.tools };
        if (shouldAutoCompact(messages, modelId, preamble)) {
          const partId = `compaction-${Date.now().toString(36)}`;
          const tokensBefore = tokenCountWithEstimation(messages, preamble);
          writer.write({ type: 'data-compaction', id: partId, data: { status: 'compacting', phase: 'start', tokensBefore } });
          try {
            const result = await compactConversation(
              messages,
              {
                ...o.context,
                model: modelId,
                summarize: o.summarize,
                config: o.config,
                signal: request.signal,
                onProgress: (e) => writer.write({ type: 'data-compaction', id: partId, data: { status: 'compacting', phase: e.phase, tokensBefore } }),
              },
              { keepLastUserMessage: true, ...o.compactOptions, isAutoCompact: true },
            );
            messages = buildPostCompactMessages(result);
            await o.store.save(chatId, messages);
            const tokensAfter = tokenCountWithEstimation(messages, preamble);
            writer.write({ type: 'data-compaction', id: partId, data: { status: 'compacted', tokensBefore, tokensAfter, summary: result.summary } });
            await o.onCompaction?.(result, { chatId });
          } catch (error) {
            // Not compacted: the conversation is unchanged and the turn goes on.
            const code = /** @type {any} */ (error)?.code ?? 'SUMMARIZER_FAILED';
            writer.write({ type: 'data-compaction', id: partId, data: { status: 'failed', tokensBefore, code } });
            await o.onError?.(error);
          }
        }
        const result = streamText({
          ...o.streamTextOptions,
          model: o.model,
          system: o.system,
          tools: o.tools,
          stopWhen: o.stopWhen,
          messages: await convertToModelMessages(messages, { tools: o.tools, ignoreIncompleteToolCalls: true }),
        });
        writer.merge(result.toUIMessageStream());
      },
      // `messages` is the compacted conversation when a compaction ran (the stream's own
      // list is the one it started with): the answer goes after it.
      onFinish: async ({ responseMessage, isContinuation }) => {
        const before = isContinuation ? messages.slice(0, -1) : messages;
        await o.store.save(chatId, [...before, responseMessage]);
      },
      onError: (error) => {
        // Its result is ignored: a rejection of an async onError must not go unhandled.
        notifyIgnoringResult(o.onError, error);
        return error instanceof Error ? error.message : String(error);
      },
    });
    return createUIMessageStreamResponse({ stream });
  };
}
