// Drop-in compaction for Anthropic SDK tool-use loops (`context-compaction/agents/anthropic`):
// runToolLoop() drives `client.messages.create` (or `client.messages.stream`) with a
// `Compactor` holding the conversation: it compacts before a request when due, runs your
// tools, and after a "prompt is too long" rejection compacts once and retries the request.
// `@anthropic-ai/sdk` is the caller's own client; this module does not import it.
import { applyApiCompaction, parseContextOverflowError, toApiMessages } from 'context-compaction';
import { checkOptions, codedError, notifyIgnoringResult, providerError, thrownText, toolJson, toolNamed } from './common.js';

const KEYS = [
  'client', 'compactor', 'request', 'tools', 'maxSteps', 'stream', 'signal', 'compactOptions', 'onStep', 'onCompaction', 'onError', 'onText',
];

const COMPACT_KEYS = ['customInstructions', 'suppressFollowUpQuestions', 'retryBaseMs', 'appendMissing', 'keepLastUserMessage'];

/** The block types a `tool_result`'s content array may hold (the Messages API refuses others). */
const RESULT_BLOCKS = new Set(['text', 'image', 'document', 'search_result', 'tool_reference', 'browser_state']);

/**
 * A tool's answer as a `tool_result` content: a string as it is; an array of content blocks
 * (objects whose `type` a tool result may hold) as blocks; anything else — a list of names
 * or records (`['a.txt']`, `[{type: 'file', path}]`), an object, a number — as its JSON text.
 *
 * @param {unknown} value
 * @returns {string | any[]}
 */
function resultContent(value) {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((b) => b !== null && typeof b === 'object' && RESULT_BLOCKS.has(b.type))) return value;
  return toolJson(value);
}

/**
 * Answers every client tool call of `message` (already pushed to `compactor`) with an error
 * result saying `why`: what the loop leaves behind when it ends before running them.
 *
 * @param {any} compactor
 * @param {any} message
 * @param {string} why
 */
function answerNotRun(compactor, message, why) {
  const calls = Array.isArray(message?.content) ? message.content.filter((/** @type {any} */ b) => b?.type === 'tool_use' && typeof b.id === 'string') : [];
  if (calls.length === 0) return;
  compactor.push({ role: 'user', content: calls.map((/** @type {any} */ b) => ({ type: 'tool_result', tool_use_id: b.id, is_error: true, content: why })) });
}

/**
 * Runs a tool-use loop to its end: before every request, `compactor.maybeAutoCompact()`; the
 * request is `request` plus the compactor's conversation as the Messages API sees it
 * (`toApiMessages`); the assistant's reply (with its `usage`, which anchors the count) and
 * the tools' results are pushed to the compactor. A request rejected as too long is retried
 * once after `compactor.compact()` (SPEC §13: never twice for the same step). A tool that
 * throws answers with `is_error: true` and its message (whatever it threw), as does one whose
 * answer has no JSON form (a function, a Symbol, a cycle); a tool the model names but `tools`
 * lacks answers the same way (a member every object inherits, such as `constructor`, is no
 * tool).
 *
 * Both compactions keep the latest user request verbatim after the summary unless
 * `compactOptions.keepLastUserMessage` is `false` (the Compactor's own
 * `keepLastUserMessage: true` keeps it in every case). `signal` aborts a compaction in
 * progress too (nothing is committed; the loop rejects with `ABORTED`). A failed automatic
 * compaction is reported through `onError` and the request goes on uncompacted; after three
 * in a row the Compactor stops trying (its `tracking.consecutiveFailures`) until a compaction
 * succeeds again (the reactive one after a rejection, or a manual `compact()`).
 *
 * Stops at a reply that is not `tool_use`, or with `MAX_STEPS_EXCEEDED` after `maxSteps`
 * requests (default 25). A turn the API paused (`pause_turn`) is sent back to go on, and so is
 * one the API's own compaction paused (`stop_reason: 'compaction'`, with the messages from the
 * latest user request on put back after its block, as {@link applyApiCompaction} does); a reply
 * cut off by `max_tokens` or `model_context_window_exceeded` inside a tool call has its calls
 * answered as not run (`is_error: true`) and the model is asked again; the calls of a final
 * reply with another stop reason (`refusal`…) are answered the same way before it is
 * returned. When `onStep` throws, the reply's tool calls are answered as not run before the
 * loop rejects with that error: the Compactor's conversation stays one the API takes.
 *
 * A request the SDK fails (an error status after the SDK's own retries, a network failure)
 * rejects with a `ContextCompactionError` coded `PROVIDER_ERROR` (the SDK's HTTP `status`
 * copied), `ABORTED` when `signal` aborted it, or `PROMPT_TOO_LONG` when the request was still
 * too long after the compaction; the SDK's own error is its `cause`, unchanged. What `onText`
 * throws ends the loop as it is (not the SDK's error around it).
 *
 * @param {import('./anthropic.js').AnthropicToolLoopOptions} options
 * @returns {Promise<import('./anthropic.js').AnthropicToolLoopResult>}
 * @example
 * const compactor = new Compactor({ model: 'claude-sonnet-4-5', summarize });
 * compactor.push({ role: 'user', content: 'Fix the failing test' });
 * const { message } = await runToolLoop({ client, compactor, request: { model, max_tokens: 4096, tools }, tools: { read_file } });
 */
export async function runToolLoop(options) {
  const where = 'runToolLoop(options)';
  const o = checkOptions(where, options, {
    accepted: KEYS,
    required: ['client', 'compactor', 'request'],
    functions: ['onStep', 'onCompaction', 'onError', 'onText'],
    objects: ['client', 'compactor', 'request', 'tools', 'compactOptions'],
  });
  if (typeof o.client.messages?.create !== 'function') throw codedError('INVALID_ARGUMENT', `${where}: "client" must be an Anthropic client (client.messages.create)`);
  if (typeof o.compactor.maybeAutoCompact !== 'function' || typeof o.compactor.push !== 'function') {
    throw codedError('INVALID_ARGUMENT', `${where}: "compactor" must be a Compactor`);
  }
  if ('messages' in o.request) throw codedError('INVALID_ARGUMENT', `${where}: "request.messages" must be absent: the compactor holds the conversation`);
  // Those of Compactor.compact but `signal` (the loop's own is used).
  if (o.compactOptions) {
    checkOptions('runToolLoop(options.compactOptions)', o.compactOptions, { accepted: COMPACT_KEYS });
  }
  const maxSteps = o.maxSteps ?? 25;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw codedError('INVALID_ARGUMENT', `${where}: "maxSteps" must be a positive integer, got ${maxSteps}`);
  /** @type {Record<string, (input: any, info: { id: string }) => unknown>} */
  const tools = o.tools ?? {};
  let compactions = 0;
  const keepLastUserMessage = o.compactOptions?.keepLastUserMessage ?? true;
  const withSignal = o.signal ? { signal: o.signal } : {};

  /** What `onText` threw (the SDK ends the stream with an error of its own around it). */
  /** @type {{ error: unknown } | undefined} */
  let textError;
  /** @param {any} body */
  const send = async (body) => {
    const requestOptions = o.signal ? { signal: o.signal } : undefined;
    if (!o.stream) return o.client.messages.create(body, requestOptions);
    const stream = o.client.messages.stream(body, requestOptions);
    if (o.onText) {
      stream.on('text', (/** @type {string} */ t) => {
        try {
          notifyIgnoringResult(o.onText, t);
        } catch (error) {
          textError = { error };
          throw error;
        }
      });
    }
    return stream.finalMessage();
  };
  /**
   * A failed request as the loop rejects with it: what `onText` threw, untouched; else the
   * SDK's error as a coded one (ABORTED, PROMPT_TOO_LONG after the compaction, PROVIDER_ERROR).
   * @param {unknown} error
   * @param {boolean} compacted
   */
  const failed = (error, compacted) => {
    if (textError) return textError.error;
    return providerError(where, error, o.signal, compacted);
  };

  for (let step = 0; step < maxSteps; step++) {
    const auto = await o.compactor.maybeAutoCompact({ keepLastUserMessage, ...withSignal });
    if (auto.wasCompacted) {
      compactions += 1;
      await o.onCompaction?.(auto.compactionResult, { step, reason: 'auto' });
    } else if (auto.error) {
      // Aborted: the loop ends with it. Else reported, and the request goes on uncompacted.
      if (o.signal?.aborted) throw auto.error;
      await o.onError?.(auto.error);
    }
    /** @type {any} */
    let message;
    try {
      message = await send({ ...o.request, messages: toApiMessages(o.compactor.messages) });
    } catch (error) {
      if (textError || o.signal?.aborted || !parseContextOverflowError(error, /** @type {any} */ (error)?.status)) throw failed(error, false);
      let result;
      try {
        // Mid-task, as an automatic one: the summary asks the model to carry on (SPEC §13-14).
        result = await o.compactor.compact({ suppressFollowUpQuestions: true, ...o.compactOptions, keepLastUserMessage, ...withSignal });
      } catch (compactionError) {
        // Nothing to gain (e.g. already compact): the API's rejection is the answer.
        /** @type {any} */ (compactionError).apiError = error;
        throw compactionError;
      }
      compactions += 1;
      await o.onCompaction?.(result, { step, reason: 'reactive' });
      try {
        message = await send({ ...o.request, messages: toApiMessages(o.compactor.messages) });
      } catch (again) {
        throw failed(again, true);
      }
    }
    if (message.stop_reason === 'compaction') {
      // The API compacted the context and paused (`pause_after_compaction` of the
      // compact_20260112 edit): it ignores what came before the block from now on, so the
      // messages from the latest user request on go after it (applyApiCompaction's rule),
      // and the next request goes on with the task.
      // (As the API saw them: a Compactor may hold transcript lines or another shape.)
      const before = toApiMessages(o.compactor.messages);
      o.compactor.pushMany(applyApiCompaction(before, message).messages.slice(before.length));
      await o.onStep?.(message, { step });
      continue;
    }
    o.compactor.push({ role: 'assistant', content: message.content, usage: message.usage });
    try {
      await o.onStep?.(message, { step });
    } catch (error) {
      // The reply is in the caller's Compactor already: its tool calls are answered (not run)
      // before the error ends the loop, so that the conversation stays one the API takes.
      answerNotRun(o.compactor, message, 'The loop stopped before this call ran (onStep threw).');
      throw error;
    }
    // A turn the API paused (a long server-side tool run) goes on when the paused reply is
    // sent back as it is: the next request, with nothing after it.
    if (message.stop_reason === 'pause_turn') continue;
    // A reply cut off inside a tool call — by max_tokens, or by the context window (Claude
    // 4.5 models stop with `model_context_window_exceeded` where earlier ones refused the
    // request): the call is answered (not run, its input is incomplete) so that the
    // conversation stays one the API takes, and the model is asked again.
    const stopped = message.stop_reason === 'max_tokens' || message.stop_reason === 'model_context_window_exceeded';
    const cut = stopped && message.content.some((/** @type {any} */ b) => b?.type === 'tool_use');
    if (message.stop_reason !== 'tool_use' && !cut) {
      // A final reply that still holds tool calls (stopped by a refusal, or `end_turn` from a
      // proxy): they are answered as not run, so that the next turn's request is one the API
      // takes.
      answerNotRun(o.compactor, message, `The reply ended (${message.stop_reason}) before this call ran.`);
      return { message, steps: step + 1, compactions };
    }
    if (cut) {
      answerNotRun(o.compactor, message, `The reply was cut off by ${message.stop_reason} before this call was complete: it was not run.`);
      continue;
    }
    const results = [];
    for (const block of message.content) {
      if (block.type !== 'tool_use') continue;
      const run = toolNamed(tools, block.name);
      try {
        if (!run) throw new Error(`no tool named "${block.name}"`);
        results.push({ type: 'tool_result', tool_use_id: block.id, content: resultContent(await run(block.input, { id: block.id })) });
      } catch (error) {
        results.push({ type: 'tool_result', tool_use_id: block.id, is_error: true, content: thrownText(error) });
      }
    }
    try {
      o.compactor.push({ role: 'user', content: results });
    } catch (error) {
      // Blocks the conversation cannot hold (a text block without text…): each such answer
      // becomes the tool's error, so that every call of the reply pushed above is answered.
      const why = `the tool returned content blocks the conversation cannot hold: ${thrownText(error)}`;
      o.compactor.push({ role: 'user', content: results.map((r) => (Array.isArray(r.content) ? { ...r, is_error: true, content: why } : r)) });
    }
  }
  throw codedError('MAX_STEPS_EXCEEDED', `${where}: the model still called tools after ${maxSteps} requests (raise "maxSteps")`);
}
