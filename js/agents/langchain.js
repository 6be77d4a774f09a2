// Drop-in compaction for LangChain v1 agents (`context-compaction/agents/langchain`): an agent
// middleware for `createAgent({ middleware: [...] })` that compacts the agent's messages in
// its `beforeModel` hook when automatic compaction is due. `langchain` and `@langchain/core`
// are the caller's own installed packages (optional peer dependencies). Nothing else is
// imported: `@langchain/langgraph` comes only as `langchain`'s own dependency, which a strict
// layout (pnpm, Yarn PnP) does not let this package import.
import { buildPostCompactMessages, compactConversation, shouldAutoCompact } from 'context-compaction';
import { createMiddleware } from 'langchain';
import { RemoveMessage } from '@langchain/core/messages';
import { MAX_CONSECUTIVE_FAILURES, checkOptions, codedError, eitherSignal } from './common.js';

/**
 * The id of a `RemoveMessage` that clears a graph's whole message list: LangGraph's
 * `REMOVE_ALL_MESSAGES` (`@langchain/langgraph`), a value stored in checkpoints, written here
 * (tests/node/runtimes-round13.test.mjs compares it with LangGraph's).
 */
const REMOVE_ALL_MESSAGES = '__remove_all__';

/** Threads whose failed compactions in a row the middleware remembers, at most. */
const REMEMBERED_THREADS = 10_000;

const KEYS = ['model', 'summarize', 'config', 'context', 'compactOptions', 'system', 'tools', 'name', 'onCompaction', 'onError'];

/**
 * The model id of a LangChain chat model (`model`, `modelName` or `modelId`), or the string
 * given (`'openai:gpt-4.1'` works: the model table reads through provider prefixes).
 *
 * @param {unknown} model
 * @returns {string | undefined}
 */
function modelIdOf(model) {
  if (typeof model === 'string') return model || undefined;
  if (!model || typeof model !== 'object') return undefined;
  const m = /** @type {Record<string, unknown>} */ (model);
  for (const key of ['model', 'modelName', 'modelId']) if (typeof m[key] === 'string' && m[key]) return /** @type {string} */ (m[key]);
  return undefined;
}

/**
 * Which user turn the messages are in: the position and id of the latest human message.
 *
 * @param {any[]} messages
 * @returns {string}
 */
function turnOf(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    const type = typeof m?._getType === 'function' ? m._getType() : m?.type ?? m?.role;
    if (type === 'human' || type === 'user') return `${i}:${typeof m.id === 'string' ? m.id : ''}`;
  }
  return '';
}

/**
 * An agent middleware that compacts the conversation before a model call when automatic
 * compaction is due (the count is anchored on the last `AIMessage.usage_metadata`, else
 * estimated with `system` and `tools` when given). The agent's messages are replaced by the
 * summary (a `HumanMessage` built with your own class), the latest user request verbatim
 * (unless `compactOptions.keepLastUserMessage` is `false`) and what the compaction restores;
 * leading `SystemMessage`s stay first. A failed compaction leaves the messages as they were
 * and is reported through `onError`; after three failures in a row in one thread (the run's
 * `configurable.thread_id`; runs without one share a count) the middleware stops trying for
 * that thread, not for the agent's other threads, until the thread's next user turn, which
 * tries once more when due (a success resets the count). The run's abort signal reaches the
 * summarizer (an aborted compaction is no failure, and nothing is counted or reported as
 * compacted).
 *
 * @param {import('./langchain.js').CompactionMiddlewareOptions} options
 * @returns {import('./langchain.js').CompactionMiddleware}
 * @example
 * const agent = createAgent({ model, tools, middleware: [compactionMiddleware({ model: 'openai:gpt-4.1', summarize })] });
 */
export function compactionMiddleware(options) {
  const where = 'compactionMiddleware(options)';
  const o = checkOptions(where, options, {
    accepted: KEYS,
    required: ['model', 'summarize'],
    functions: ['summarize', 'onCompaction', 'onError'],
    objects: ['config', 'context', 'compactOptions'],
  });
  const modelId = modelIdOf(o.model);
  if (!modelId) {
    throw codedError('INVALID_ARGUMENT', `${where}: "model" must be a model id (e.g. "openai:gpt-4.1") or a chat model with a "model" or "modelName" string`);
  }
  if (o.name !== undefined && (typeof o.name !== 'string' || !o.name)) {
    throw codedError('INVALID_ARGUMENT', `${where}: "name" must be a non-empty string`);
  }
  /** @type {{ compactions: number, consecutiveFailures: number, lastResult: any }} */
  const state = { compactions: 0, consecutiveFailures: 0, lastResult: null };
  /**
   * Failed compactions in a row by thread id (the least recently used forgotten first), with
   * the user turn of the last one (see `turnOf`).
   * @type {Map<string, { n: number, turn: string }>}
   */
  const failures = new Map();
  /** @param {string} thread @param {number} n @param {string} turn */
  const setFailures = (thread, n, turn) => {
    failures.delete(thread);
    if (n > 0) failures.set(thread, { n, turn });
    if (failures.size > REMEMBERED_THREADS) {
      const oldest = failures.keys().next().value;
      if (oldest !== undefined) failures.delete(oldest);
    }
    state.consecutiveFailures = n;
  };
  const middleware = createMiddleware({
    name: o.name ?? 'ContextCompactionMiddleware',
    beforeModel: async (/** @type {{ messages: any[] }} */ agentState, /** @type {any} */ runtime) => {
      const messages = agentState.messages;
      const id = runtime?.configurable?.thread_id;
      const thread = typeof id === 'string' || typeof id === 'number' ? String(id) : '';
      const last = failures.get(thread);
      const failed = last?.n ?? 0;
      state.consecutiveFailures = failed;
      // Open after three failures in a row; a new user turn in the thread still tries once
      // (a success closes it), so an outage that is over does not leave the thread without
      // compaction for good.
      const turn = failed >= MAX_CONSECUTIVE_FAILURES ? turnOf(messages) : '';
      if (failed >= MAX_CONSECUTIVE_FAILURES && turn === last?.turn) return undefined;
      if (!shouldAutoCompact(messages, modelId, { config: o.config, system: o.system, tools: o.tools })) return undefined;
      // The run's signal, and the caller's own (`context.signal`): either aborts the compaction.
      const runSignal = runtime?.signal ?? undefined;
      const signal = eitherSignal(o.context?.signal, runSignal);
      try {
        const result = await compactConversation(
          messages,
          // `system` and `tools` as the decision counted them: in the result's counts too.
          { system: o.system, toolDefinitions: o.tools, ...o.context, model: modelId, summarize: o.summarize, config: o.config, ...(signal ? { signal } : {}) },
          { keepLastUserMessage: true, ...o.compactOptions, isAutoCompact: true },
        );
        // The run was aborted while the summary was written: nothing of it is kept.
        if (runSignal?.aborted) return undefined;
        state.compactions += 1;
        setFailures(thread, 0, '');
        state.lastResult = result;
        await o.onCompaction?.(result);
        return { messages: [new RemoveMessage({ id: REMOVE_ALL_MESSAGES }), ...buildPostCompactMessages(result)] };
      } catch (error) {
        // The run aborted: it ends with the error. A compaction aborted otherwise (a `signal`
        // in `context`) is reported, not counted: it says nothing of whether compaction works.
        if (runSignal?.aborted) throw error;
        if (/** @type {any} */ (error)?.code !== 'ABORTED') setFailures(thread, failed + 1, turn || turnOf(messages));
        await o.onError?.(error);
        return undefined;
      }
    },
  });
  return /** @type {any} */ (Object.defineProperties(middleware, {
    compactions: { get: () => state.compactions, enumerable: false },
    consecutiveFailures: { get: () => state.consecutiveFailures, enumerable: false },
    lastResult: { get: () => state.lastResult, enumerable: false },
  }));
}
