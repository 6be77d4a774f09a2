// Drop-in compaction for OpenAI SDK tool loops (`context-compaction/agents/openai`):
// runChatToolLoop() drives `client.chat.completions.create` with your Chat Completions
// messages, compacting them before a request when automatic compaction is due (the count is
// anchored on the last completion's `usage`) and after a context-length rejection (once per
// step). `openai` is the caller's own client; this module does not import it.
import { buildPostCompactMessages, compactConversation, parseContextOverflowError, shouldAutoCompact } from 'context-compaction';
import { MAX_CONSECUTIVE_FAILURES, checkOptions, codedError, providerError, thrownText, toolJson, toolNamed } from './common.js';

/**
 * The usage each completion reported, by its reply (the message object the loop appended to
 * the messages it returned): a later run over those messages counts from it at once.
 * @type {WeakMap<object, any>}
 */
const reported = new WeakMap();

const KEYS = [
  'client', 'messages', 'request', 'tools', 'summarize', 'config', 'context', 'compactOptions', 'maxSteps', 'signal', 'onStep', 'onCompaction', 'onError',
];

/**
 * Runs a Chat Completions tool loop to its end. Before each request the messages are
 * compacted when due (`compactConversation`; the summary is a user message, leading
 * system/developer messages stay first, the latest user request is kept verbatim unless
 * `compactOptions.keepLastUserMessage` is `false`). A request rejected as too long is retried
 * once after a compaction. Each `tool_calls` entry runs `tools[name](parsedArguments)` (a
 * custom tool's call: `tools[name](input)`, its free-form text); what
 * it returns (or `Error: ` and the message of what it throws, or of a name that is not one of
 * the caller's tools, or of an answer with no JSON form) is the `tool` message. Resolves with the
 * conversation to keep (`messages`, compacted if a compaction ran), the last completion and
 * the number of compactions; `MAX_STEPS_EXCEEDED` after `maxSteps` requests (default 25).
 * A failed proactive compaction is reported through `onError` and the request goes on
 * uncompacted; three in a row stop further attempts in this run. The first request of a run
 * counts from the usage the previous run's last completion reported when its reply is the
 * last assistant message of `messages` (the same object: keep the returned `messages`).
 * Else it is estimated.
 * A request the SDK fails (an error status after the SDK's own retries, a network failure)
 * rejects with a `ContextCompactionError` coded `PROVIDER_ERROR` (the SDK's HTTP `status`
 * copied), `ABORTED` when `signal` aborted it, or `PROMPT_TOO_LONG` when the request was still
 * too long after the compaction; the SDK's own error is its `cause`, unchanged.
 *
 * @param {import('./openai.js').ChatToolLoopOptions} options
 * @returns {Promise<import('./openai.js').ChatToolLoopResult>}
 * @example
 * const { messages: history } = await runChatToolLoop({
 *   client, summarize, messages, request: { model: 'gpt-4.1', tools: toolDefinitions }, tools: { read_file },
 * });
 */
export async function runChatToolLoop(options) {
  const where = 'runChatToolLoop(options)';
  const o = checkOptions(where, options, {
    accepted: KEYS,
    required: ['client', 'messages', 'request', 'summarize'],
    functions: ['summarize', 'onStep', 'onCompaction', 'onError'],
    objects: ['client', 'request', 'tools', 'config', 'context', 'compactOptions'],
  });
  if (typeof o.client.chat?.completions?.create !== 'function') throw codedError('INVALID_ARGUMENT', `${where}: "client" must be an OpenAI client (client.chat.completions.create)`);
  if (!Array.isArray(o.messages)) throw codedError('INVALID_ARGUMENT', `${where}: "messages" must be an array of Chat Completions messages`);
  if (typeof o.request.model !== 'string' || !o.request.model) throw codedError('INVALID_ARGUMENT', `${where}: "request.model" is required (a model id)`);
  if ('messages' in o.request) throw codedError('INVALID_ARGUMENT', `${where}: "request.messages" must be absent: give the conversation as "messages"`);
  if (o.request.stream) throw codedError('INVALID_ARGUMENT', `${where}: "request.stream" is not supported (the loop reads whole completions)`);
  const maxSteps = o.maxSteps ?? 25;
  if (!Number.isInteger(maxSteps) || maxSteps < 1) throw codedError('INVALID_ARGUMENT', `${where}: "maxSteps" must be a positive integer, got ${maxSteps}`);
  const model = o.request.model;
  /** @type {Record<string, (args: any, info: { id: string }) => unknown>} */
  const tools = o.tools ?? {};
  /** @type {any[]} */
  let messages = [...o.messages];
  /** @type {any} */
  let usage;
  // The usage of the run before, when its last reply is the last assistant message here.
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m === null || typeof m !== 'object' || m.role !== 'assistant') continue;
    usage = reported.get(m);
    break;
  }
  let compactions = 0;
  let failures = 0;

  /** @param {boolean} auto */
  const compact = async (auto) => {
    const result = await compactConversation(
      messages,
      // The request's tools as the decision counted them: in the result's counts too.
      { toolDefinitions: o.request.tools, ...o.context, model, summarize: o.summarize, config: o.config, signal: o.signal },
      // Named: plain text messages fit the Anthropic shape too, and a compaction answered in it
      // would open with a Claude Code boundary line OpenAI refuses.
      // A reactive one runs mid-task too: its summary also asks the model to carry on.
      { keepLastUserMessage: true, shape: 'openai-chat', suppressFollowUpQuestions: true, ...o.compactOptions, isAutoCompact: auto },
    );
    messages = buildPostCompactMessages(result);
    usage = undefined; // the last usage measured the old context
    compactions += 1;
    return result;
  };
  const send = () => o.client.chat.completions.create({ ...o.request, messages }, o.signal ? { signal: o.signal } : undefined);

  for (let step = 0; step < maxSteps; step++) {
    if (failures < MAX_CONSECUTIVE_FAILURES && shouldAutoCompact(messages, model, { config: o.config, usage, tools: o.request.tools, shape: 'openai-chat' })) {
      try {
        const result = await compact(true);
        failures = 0;
        await o.onCompaction?.(result, { step, reason: 'auto' });
      } catch (error) {
        // Aborted: the loop ends with it (no failure of the compaction). Else reported, and
        // the request goes on uncompacted.
        if (o.signal?.aborted) throw error;
        failures += 1;
        await o.onError?.(error);
      }
    }
    /** @type {any} */
    let completion;
    try {
      completion = await send();
    } catch (error) {
      if (o.signal?.aborted || !parseContextOverflowError(error, /** @type {any} */ (error)?.status)) throw providerError(where, error, o.signal, false);
      let result;
      try {
        result = await compact(false);
      } catch (compactionError) {
        // Nothing to gain (e.g. already compact): the API's rejection is the answer.
        /** @type {any} */ (compactionError).apiError = error;
        throw compactionError;
      }
      await o.onCompaction?.(result, { step, reason: 'reactive' });
      try {
        completion = await send();
      } catch (again) {
        throw providerError(where, again, o.signal, true);
      }
    }
    const reply = completion.choices?.[0]?.message;
    if (!reply) throw codedError('INVALID_RESPONSE', `${where}: completion ${completion.id ?? ''} has no choices[0].message`);
    messages.push(reply);
    usage = completion.usage ?? undefined;
    if (usage && typeof reply === 'object') reported.set(reply, usage);
    await o.onStep?.(completion, { step });
    const calls = reply.tool_calls ?? [];
    if (calls.length === 0) return { messages, completion, steps: step + 1, compactions };
    for (const call of calls) {
      let content;
      try {
        // A custom (free-form) tool's call carries its name and raw text input in `custom`.
        const custom = call.type === 'custom';
        const name = custom ? call.custom?.name : call.function?.name;
        const run = toolNamed(tools, name);
        if (!run) throw new Error(`no tool named "${name}"`);
        const args = custom ? (call.custom.input ?? '') : JSON.parse(call.function.arguments || '{}');
        const out = await run(args, { id: call.id });
        content = typeof out === 'string' ? out : toolJson(out);
      } catch (error) {
        content = `Error: ${thrownText(error)}`;
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content });
    }
  }
  throw codedError('MAX_STEPS_EXCEEDED', `${where}: the model still called tools after ${maxSteps} requests (raise "maxSteps")`);
}
