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
  parseContextOverflowError,
  shouldAutoCompact,
  tokenCountWithEstimation,
} from 'context-compaction';
import { convertToModelMessages, createUIMessageStream, createUIMessageStreamResponse, safeValidateUIMessages, streamText } from 'ai';
import { MAX_CONSECUTIVE_FAILURES, checkOptions, codedError, eitherSignal, notifyIgnoringResult } from './common.js';

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

/**
 * The usage a step reported, when it has the AI SDK's `inputTokens`.
 *
 * @param {any} step
 * @returns {any}
 */
function usageOf(step) {
  const usage = step?.usage;
  return usage && typeof usage.inputTokens === 'number' ? usage : undefined;
}

/**
 * Index of the last assistant message (an object), or -1.
 *
 * @param {any[]} messages
 * @returns {number}
 */
function lastAssistant(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m !== null && typeof m === 'object' && m.role === 'assistant') return i;
  }
  return -1;
}

const PREPARE_STEP_KEYS = [
  'summarize', 'modelId', 'config', 'context', 'compactOptions', 'system', 'tools', 'prepareStep', 'onCompaction', 'onError',
];

/** Compacted runs a prepareStep remembers for `conversation(messages)` without a `result`. */
const REMEMBERED_RUNS = 32;

/**
 * A fingerprint of messages: a 53-bit hash of their JSON, one message after another, or
 * `null` when one cannot be written as JSON. Two runs are told apart by it; a collision
 * needs two different conversations of the same length with the same hash.
 *
 * @param {any[]} messages
 * @returns {string | null}
 */
function fingerprint(messages) {
  let h1 = 0xdeadbeef ^ messages.length;
  let h2 = 0x41c6ce57 ^ messages.length;
  for (const m of messages) {
    let text;
    try {
      text = JSON.stringify(m) ?? 'undefined';
    } catch {
      return null;
    }
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 2654435761);
      h2 = Math.imul(h2 ^ c, 1597334677);
    }
    h1 = Math.imul(h1 ^ 0x1e, 2654435761); // a separator: ["ab","c"] is not ["a","bc"]
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return `${messages.length}:${(4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)}`;
}

/**
 * A `prepareStep` for `generateText` / `streamText` (with `stopWhen`) that compacts the
 * conversation before a step when automatic compaction is due. The AI SDK gives every step
 * the run's original messages plus the steps' responses; once compacted, every later step of
 * the run is sent the compacted messages plus what came after. After the run,
 * `prepareStep.conversation([...messages, ...result.response.messages], result)` is the history to
 * keep for the next turn (compacted if a compaction happened, else that array).
 *
 * One prepareStep may serve runs in flight together (one per user of a server route): each
 * run's state is its own, found by the run's `steps` array (the same array in every step of a
 * run), and `conversation(messages, result?)` finds the run by `result.steps` or, without
 * `result`, by the messages themselves (the run whose messages they begin with).
 *
 * The count is anchored on the last step's reported usage; at a run's first step, on the
 * usage the run before it reported when its answer is among the messages (given back by
 * `conversation(messages, result)`: pass `result`), else estimated, with `system` and `tools`
 * counted when given. Three failed compactions in a row
 * (across the runs it serves) stop further attempts in those runs (reported through
 * `onError`, never thrown into the run); each later run still tries once when due, and a
 * success closes the breaker, so a summarizer outage that is over does not leave compaction
 * off for good.
 *
 * @param {import('./ai-sdk.js').CompactionPrepareStepOptions} options
 * @returns {import('./ai-sdk.js').CompactingPrepareStep}
 * @example
 * const prepareStep = compactionPrepareStep({ summarize });
 * const result = await generateText({ model, tools, messages, stopWhen: stepCountIs(20), prepareStep });
 * messages = prepareStep.conversation([...messages, ...result.response.messages], result);
 */
export function compactionPrepareStep(options) {
  const where = 'compactionPrepareStep(options)';
  const o = checkOptions(where, options, {
    accepted: PREPARE_STEP_KEYS,
    required: ['summarize'],
    functions: ['summarize', 'prepareStep', 'onCompaction', 'onError'],
    objects: ['config', 'context', 'compactOptions'],
  });
  /**
   * A run's state: the messages it started from up to the last compaction (their number and
   * fingerprint) and what replaces them.
   * `head` is the fingerprint of the first message alone, a cheap first check.
   * `probed`: the run already made its one attempt while the circuit breaker was open.
   * @typedef {{ prefixLength: number, replacement: any[] | null, print: string | null, head: string | null, probed: boolean }} Run
   */
  /** @type {WeakMap<object, Run>} by the run's `steps` array (else its first message) */
  const runs = new WeakMap();
  /** @type {Run[]} the latest compacted runs, newest last */
  const remembered = [];
  /** @type {{ compactions: number, consecutiveFailures: number, lastResult: any }} */
  const state = { compactions: 0, consecutiveFailures: 0, lastResult: null };
  /**
   * The usage a run's last step reported, by that run's last assistant message (the caller's
   * own object, given back by `conversation(messages, result)`): the next run's first step
   * counts from it instead of estimating the whole conversation.
   * @type {WeakMap<object, any>}
   */
  const answered = new WeakMap();

  /** @param {Run} run @param {any[]} messages */
  const current = (run, messages) =>
    run.replacement ? [...run.replacement, ...messages.slice(run.prefixLength)] : messages;

  /** @param {any} args @returns {Run} */
  const runOf = (args) => {
    // The AI SDK passes the run's own `steps` array to every step of the run; a caller that
    // gives none is told apart by the run's first message object.
    const key = args.steps && typeof args.steps === 'object' ? args.steps : args.messages?.[0];
    const fresh = () => ({ prefixLength: 0, replacement: null, print: null, head: null, probed: false });
    if (!key || typeof key !== 'object') return fresh();
    let run = runs.get(key);
    if (!run || args.stepNumber === 0) {
      run = fresh();
      runs.set(key, run);
    }
    return run;
  };

  /** @type {any} */
  const prepareStep = async (/** @type {any} */ args) => {
    const run = runOf(args);
    let messages = current(run, args.messages);
    const modelId = modelIdOf(o.modelId, args.model, where);
    const last = args.steps?.[args.steps.length - 1];
    let usage = usageOf(last);
    if (!usage && args.stepNumber === 0) {
      // A run's first step: the usage the run before it reported, when its answer is here.
      const at = lastAssistant(messages);
      if (at >= 0) usage = answered.get(messages[at]);
    }
    // Named: plain text messages fit the Anthropic shape too, and a compaction answered in it
    // would open with a Claude Code boundary line the AI SDK cannot send.
    const countOptions = { config: o.config, usage, system: o.system, tools: o.tools, shape: /** @type {const} */ ('ai-sdk-model') };
    // Open after three failures in a row; each later run (a new turn) still tries once, so
    // an outage that is over does not leave compaction off for good, and a success closes it.
    const open = state.consecutiveFailures >= MAX_CONSECUTIVE_FAILURES;
    if ((!open || !run.probed) && shouldAutoCompact(messages, modelId, countOptions)) {
      if (open) run.probed = true;
      try {
        const result = await compactConversation(
          messages,
          // `system` and `tools` as the decision counted them: in the result's counts too.
          { system: o.system, toolDefinitions: o.tools, ...o.context, model: modelId, summarize: o.summarize, config: o.config },
          { keepLastUserMessage: true, shape: 'ai-sdk-model', ...o.compactOptions, isAutoCompact: true },
        );
        run.prefixLength = args.messages.length;
        run.replacement = buildPostCompactMessages(result);
        run.print = fingerprint(args.messages);
        run.head = fingerprint(args.messages.slice(0, 1));
        const at = remembered.indexOf(run);
        if (at >= 0) remembered.splice(at, 1);
        remembered.push(run);
        if (remembered.length > REMEMBERED_RUNS) remembered.shift();
        messages = current(run, args.messages);
        state.compactions += 1;
        state.consecutiveFailures = 0;
        state.lastResult = result;
        await o.onCompaction?.(result, { stepNumber: args.stepNumber });
      } catch (error) {
        // A compaction the caller aborted (a `signal` in `context`) is reported, not counted:
        // it says nothing of whether compaction works.
        if (/** @type {any} */ (error)?.code !== 'ABORTED') state.consecutiveFailures += 1;
        await o.onError?.(error);
      }
    }
    const own = o.prepareStep ? await o.prepareStep({ ...args, messages }) : undefined;
    if (run.replacement) return { messages, ...own };
    return own ?? {};
  };
  prepareStep.conversation = (/** @type {any[]} */ messages, /** @type {any} */ result) => {
    if (!Array.isArray(messages)) throw codedError('INVALID_ARGUMENT', 'prepareStep.conversation(messages): expected an array');
    if (result !== undefined && result !== null) {
      const steps = /** @type {any} */ (result).steps;
      if (!Array.isArray(steps)) {
        throw codedError('INVALID_ARGUMENT', 'prepareStep.conversation(messages, result): "result" must be the result of generateText (with its "steps" array)');
      }
      const run = runs.get(steps);
      // Its last step's usage, for the next run's first step (the answer is the last
      // assistant message of what the caller keeps).
      const usage = usageOf(steps[steps.length - 1]);
      const at = usage ? lastAssistant(messages) : -1;
      if (at >= 0) answered.set(messages[at], usage);
      return run ? current(run, messages) : messages;
    }
    // The run these messages continue: the newest compacted one whose messages they begin with.
    const head = fingerprint(messages.slice(0, 1));
    /** @type {Map<number, string | null>} */
    const prints = new Map();
    for (let i = remembered.length - 1; i >= 0; i--) {
      const run = /** @type {Run} */ (remembered[i]);
      if (run.print === null || run.head !== head || run.prefixLength > messages.length) continue;
      if (!prints.has(run.prefixLength)) prints.set(run.prefixLength, fingerprint(messages.slice(0, run.prefixLength)));
      if (prints.get(run.prefixLength) === run.print) return current(run, messages);
    }
    return messages;
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
 * The error text of a UIMessage the AI SDK refuses (`safeValidateUIMessages`): where, and its
 * first issue.
 *
 * @param {unknown} error the validation's error (a TypeValidationError, its `cause` a ZodError)
 * @param {string} field `body.messages` or `body.message`
 * @param {number} offset the index in `body.messages` of the first message validated
 * @returns {string}
 */
function invalidMessage(error, field, offset) {
  const issue = /** @type {any} */ (error)?.cause?.issues?.[0];
  if (!issue || !Array.isArray(issue.path)) {
    const text = error instanceof Error ? error.message : String(error);
    return `${field}: not a UIMessage the AI SDK accepts: ${text.slice(0, 300)}`;
  }
  const [index, ...rest] = issue.path;
  let where = field === 'body.messages' ? `${field}[${offset + Number(index)}]` : field;
  for (const key of rest) where += typeof key === 'number' ? `[${key}]` : `.${String(key)}`;
  return `${where}: not a UIMessage the AI SDK accepts (${String(issue.message).slice(0, 200)})`;
}

/** Chats whose state (failures in a row, the last reported usage) a handler keeps, at most. */
const REMEMBERED_CHATS = 10_000;

/**
 * One holder at a time per key: `await turn(key)` resolves, once every earlier holder of
 * `key` has released, to this holder's release function (idempotent).
 *
 * @returns {(key: string) => Promise<() => void>}
 */
function keyedQueue() {
  /** @type {Map<string, Promise<void>>} */
  const tails = new Map();
  return async (key) => {
    const before = tails.get(key);
    /** @type {() => void} */
    let open = () => {};
    /** @type {Promise<void>} */
    const mine = new Promise((resolve) => {
      open = () => resolve();
    });
    const tail = before ? before.then(() => mine) : mine;
    tails.set(key, tail);
    if (before) await before;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      open();
      if (tails.get(key) === tail) tails.delete(key);
    };
  };
}

/**
 * What a handler remembers of each chat between requests, in its process: failed automatic
 * compactions in a row, and the usage the model reported for its last answer (with that
 * answer's id). The least recently used chats are forgotten beyond `limit`.
 *
 * @param {number} limit
 */
function chatMemory(limit) {
  /** @typedef {{ failures: number, usage: { messageId: string, usage: any } | null }} ChatState */
  /** @type {Map<string, ChatState>} */
  const states = new Map();
  return {
    /** @param {string} id @returns {ChatState} */
    get(id) {
      const s = states.get(id);
      return s ? { ...s } : { failures: 0, usage: null };
    },
    /** @param {string} id @param {ChatState} s */
    set(id, s) {
      states.delete(id);
      if (s.failures === 0 && !s.usage) return;
      states.set(id, { ...s });
      if (states.size > limit) states.delete(/** @type {string} */ (states.keys().next().value));
    },
  };
}

/**
 * A stream of `buffered` then what `reader` still gives.
 *
 * @param {any[]} buffered
 * @param {ReadableStreamDefaultReader<any>} reader
 * @returns {ReadableStream<any>}
 */
function replay(buffered, reader) {
  return new ReadableStream({
    start(controller) {
      for (const chunk of buffered) controller.enqueue(chunk);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}

/**
 * The HTTP status an AI SDK error carries (`APICallError.statusCode`), if any.
 *
 * @param {unknown} error
 * @returns {number | undefined}
 */
function statusOf(error) {
  const e = /** @type {any} */ (error);
  const status = e?.statusCode ?? e?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * A `useChat` backend route: a plain `Request → Response` handler (the shape of Next.js App
 * Router route handlers, Hono, Remix, Workers). It loads the chat's `UIMessage[]` from
 * `store`, appends the new message, compacts when automatic compaction is due — streaming
 * `data-compaction` parts to the page (`{status: 'compacting', phase}` then
 * `{status: 'compacted', tokensBefore, tokensAfter, summary}`, one part updated in place) and
 * saving the compacted conversation — then streams the model's answer with `streamText` and
 * saves the conversation again when it is complete (also when the page stops reading: the
 * answer is read to its end on the server; the request's `signal` aborts it).
 *
 * The count is anchored on the usage the model reported for the chat's last answer (kept by
 * the handler, in its process; estimated before the first answer). A request the provider
 * rejects as too long before anything was streamed is compacted and sent once more. Three
 * failed automatic compactions in a row stop further attempts for that chat (each reported
 * through `onError` and a `failed` part; the turn goes on uncompacted). A continuation (the
 * page resubmits after a client-side tool result, so the last message is the assistant's) is
 * compacted without that message, which is kept verbatim after the summary for the answer
 * to extend.
 *
 * Requests on one chat id are served one at a time (the next waits until the answer before
 * it is saved); with several processes, the store must serialize its writes (see
 * {@link ChatStore}).
 *
 * The request body is what `useChat` sends: `{id, messages}`, or `{id, message}` when the
 * page sends only its new message (recommended with a store: the server's copy is the
 * compacted one). A bad request answers 400 with `{error: {code, message}}`, nothing stored:
 * among others a new message (or a new chat's messages) that is not a UIMessage the AI SDK
 * accepts (`safeValidateUIMessages`), which would otherwise be stored and fail every later
 * request of the chat, and a system message added to a stored chat (instructions to the
 * model from whoever can post to the route).
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
  const turn = keyedQueue();
  const chats = chatMemory(REMEMBERED_CHATS);
  const own = o.streamTextOptions ?? {};
  const preamble = { config: o.config, system: o.system, tools: o.tools };
  /** @param {any} event */
  const reportStreamError = (event) => {
    // streamText's own default when the caller gives no onError.
    if (typeof own.onError === 'function') notifyIgnoringResult(own.onError, event);
    else console.error(event?.error);
  };

  /**
   * Answers one request of `chatId`, holding its turn until `release()` (called once the
   * answer is saved, or when this throws).
   *
   * @param {Request} request
   * @param {string} chatId
   * @param {any[]} incoming
   * @param {string} field where the request holds them: `body.messages` or `body.message`
   * @param {() => void} release
   */
  async function answer(request, chatId, incoming, field, release) {
    const stored = (await o.store.load(chatId)) ?? [];
    // What the page sent that the conversation takes (the new message, or every message of a
    // new chat) must be a UIMessage the AI SDK reads: else it would be stored, and every later
    // request of the chat would fail on it.
    const offset = stored.length === 0 ? 0 : incoming.length - 1;
    const checked = await safeValidateUIMessages({ messages: incoming.slice(offset) });
    if (!checked.success) {
      release();
      return errorResponse(400, 'INVALID_REQUEST', invalidMessage(checked.error, field, offset));
    }
    // A message the page adds to a chat (a stored one's new message, a new chat's messages)
    // is the user's (or the assistant's it continues): a system message would be stored and
    // sent as instructions to the model on every turn (prompt injection by whoever can post
    // to the route); the handler's `system` option gives the instructions.
    const sys = incoming.slice(offset).findIndex((m) => m?.role === 'system');
    if (sys >= 0) {
      release();
      return errorResponse(400, 'INVALID_REQUEST', `${field === 'body.messages' ? `body.messages[${offset + sys}]` : field}.role: a request may not add a system message to a chat (give instructions in the handler's "system" option)`);
    }
    /** @type {any[]} */
    let messages = mergeIncoming(stored, incoming);
    const chat = chats.get(chatId);
    // A continuation: the answer extends the last message, which is never summarized.
    const continued = messages[messages.length - 1]?.role === 'assistant' ? messages[messages.length - 1] : undefined;
    /** @type {any} */
    let lastUsage;
    const countOptions = () => {
      const anchor = chat.usage;
      const at = anchor ? messages.findIndex((m) => m.id === anchor.messageId) : -1;
      return anchor && at >= 0 && messages[at].role === 'assistant' ? { ...preamble, usage: anchor.usage, usageAt: at } : preamble;
    };

    /**
     * Compacts `messages` (streaming its progress), saves them; `true` when it did.
     * @param {any} writer
     * @param {'auto' | 'reactive'} reason
     */
    const compact = async (writer, reason) => {
      const partId = `compaction-${Date.now().toString(36)}-${reason}`;
      const tokensBefore = tokenCountWithEstimation(messages, countOptions());
      writer.write({ type: 'data-compaction', id: partId, data: { status: 'compacting', phase: 'start', tokensBefore } });
      /** @type {any} */
      let result;
      try {
        result = await compactConversation(
          continued ? messages.slice(0, -1) : messages,
          {
            system: o.system,
            toolDefinitions: o.tools,
            ...o.context,
            model: modelId,
            summarize: o.summarize,
            config: o.config,
            signal: request.signal,
            onProgress: (/** @type {any} */ e) => writer.write({ type: 'data-compaction', id: partId, data: { status: 'compacting', phase: e.phase, tokensBefore } }),
          },
          // A reactive one, like an automatic one, asks the model to carry on (SPEC §13-14).
          { keepLastUserMessage: true, suppressFollowUpQuestions: true, ...o.compactOptions, isAutoCompact: reason === 'auto' },
        );
        const compacted = buildPostCompactMessages(result);
        messages = continued ? [...compacted, continued] : compacted;
        chat.usage = null; // it measured the conversation before the compaction
        chat.failures = 0;
        chats.set(chatId, chat);
        await o.store.save(chatId, messages);
      } catch (error) {
        // Not compacted: the turn goes on with the conversation as it was. An abort (the
        // page went away) is no failure of the compaction.
        if (reason === 'auto' && !request.signal?.aborted) {
          chat.failures += 1;
          chats.set(chatId, chat);
        }
        const code = /** @type {any} */ (error)?.code ?? 'SUMMARIZER_FAILED';
        writer.write({ type: 'data-compaction', id: partId, data: { status: 'failed', tokensBefore, code } });
        await o.onError?.(error);
        return false;
      }
      const tokensAfter = tokenCountWithEstimation(messages, preamble);
      writer.write({ type: 'data-compaction', id: partId, data: { status: 'compacted', tokensBefore, tokensAfter, summary: result.summary } });
      await o.onCompaction?.(result, { chatId, reason });
      return true;
    };

    /**
     * Starts the model's answer and reads it up to its first content (or error): `rejected`
     * is the error of a request that failed before anything was streamed.
     */
    const startAnswer = async () => {
      /** @type {any} */
      let failure;
      let peeking = true;
      /** @type {any[]} */
      const held = [];
      const result = streamText({
        ...own,
        model: o.model,
        system: o.system,
        tools: o.tools,
        stopWhen: o.stopWhen,
        abortSignal: eitherSignal(own.abortSignal, request.signal),
        messages: await convertToModelMessages(messages, { tools: o.tools, ignoreIncompleteToolCalls: true }),
        onError: (/** @type {any} */ event) => {
          if (!peeking) return reportStreamError(event);
          failure ??= event;
          held.push(event);
        },
        onStepFinish: async (/** @type {any} */ step) => {
          if (step?.usage && typeof step.usage.inputTokens === 'number') lastUsage = step.usage;
          await own.onStepFinish?.(step);
        },
      });
      const reader = result.toUIMessageStream().getReader();
      /** @type {any[]} */
      const buffered = [];
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffered.push(value);
        if (value?.type !== 'start' && value?.type !== 'start-step') break;
      }
      const last = buffered[buffered.length - 1];
      const rejected = last?.type === 'error' ? failure?.error ?? last.errorText : undefined;
      return {
        rejected,
        forward() {
          peeking = false;
          for (const event of held) reportStreamError(event);
          return replay(buffered, reader);
        },
        drop() {
          peeking = false;
          reader.cancel().catch(() => {});
        },
      };
    };

    const stream = createUIMessageStream({
      originalMessages: messages,
      execute: async ({ writer }) => {
        if (chat.failures < MAX_CONSECUTIVE_FAILURES && shouldAutoCompact(messages, modelId, countOptions())) {
          await compact(writer, 'auto');
        }
        let reply = await startAnswer();
        if (reply.rejected !== undefined && parseContextOverflowError(reply.rejected, statusOf(reply.rejected))) {
          // Rejected as too long before anything was streamed: compacted once, asked again.
          if (await compact(writer, 'reactive')) {
            reply.drop();
            reply = await startAnswer();
          }
        }
        writer.merge(reply.forward());
      },
      // `messages` is the compacted conversation when a compaction ran (the stream's own
      // list is the one it started with): the answer goes after it, or replaces the
      // continued message it extends. An answer with nothing in it is not saved.
      onFinish: async ({ responseMessage }) => {
        const answered = Array.isArray(responseMessage?.parts) && responseMessage.parts.length > 0;
        const before = continued ? messages.slice(0, -1) : messages;
        await o.store.save(chatId, answered ? [...before, responseMessage] : messages);
        if (answered && lastUsage) {
          chat.usage = { messageId: responseMessage.id, usage: lastUsage };
          chats.set(chatId, chat);
        }
      },
      onError: (error) => {
        // Its result is ignored: a rejection of an async onError must not go unhandled.
        notifyIgnoringResult(o.onError, error);
        return error instanceof Error ? error.message : String(error);
      },
    });
    // One copy for the page, one read here to its end: the answer is saved (and the turn
    // released) whether or not the page reads it all.
    const [toPage, toStore] = stream.tee();
    (async () => {
      const reader = toStore.getReader();
      try {
        while (!(await reader.read()).done);
      } catch {
        // reported on the page's copy
      } finally {
        release();
      }
    })();
    return createUIMessageStreamResponse({ stream: toPage });
  }

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
    const release = await turn(chatId);
    try {
      return await answer(request, chatId, incoming, Array.isArray(body.messages) ? 'body.messages' : 'body.message', release);
    } catch (error) {
      release();
      throw error;
    }
  };
}
