// Declarations of context-compaction/agents/ai-sdk (js/agents/ai-sdk.js).
import type { LanguageModel, ModelMessage, PrepareStepFunction, StopCondition, ToolSet, UIMessage, streamText } from 'ai';
import type { CompactContext, CompactOptions, CompactionResult, Config, Preamble, Summarizer } from 'context-compaction';

/** Options of {@link compactionPrepareStep}. An unknown key throws `INVALID_ARGUMENT`. */
export interface CompactionPrepareStepOptions {
  /** Writes the summary (the library's summarizer contract). */
  summarize: Summarizer;
  /** The model id thresholds are computed for. Default: the step model's `modelId`. */
  modelId?: string | undefined;
  /** Windows and thresholds (e.g. `contextWindow`). */
  config?: Config | undefined;
  /** More of the compaction's context: hooks, pinned content, readFileState, signal… */
  context?: Partial<Omit<CompactContext, 'model' | 'summarize' | 'config'>> | undefined;
  /** Options of each compaction. Default `{ keepLastUserMessage: true }`. */
  compactOptions?: Omit<CompactOptions, 'isAutoCompact'> | undefined;
  /** The system prompt given to generateText, counted before the first usage is known. */
  system?: Preamble['system'] | undefined;
  /** The tools given to generateText, counted before the first usage is known. */
  tools?: Preamble['tools'] | undefined;
  /** Your own prepareStep, called after the compaction with the (compacted) messages; its result wins. */
  prepareStep?: PrepareStepFunction<any> | undefined;
  /** Called after each compaction. */
  onCompaction?: ((result: CompactionResult<ModelMessage>, info: { stepNumber: number }) => void | Promise<void>) | undefined;
  /** Called with the coded error of a failed compaction (the run goes on uncompacted). */
  onError?: ((error: unknown) => void | Promise<void>) | undefined;
}

/**
 * The `prepareStep` function {@link compactionPrepareStep} returns, with its state. Generic over
 * the run's tools, so that it is the `prepareStep` of a `generateText` / `streamText` call with
 * any `tools` (a `PrepareStepFunction<any>` is not: its `activeTools` would be `keyof any`).
 */
export interface CompactingPrepareStep {
  <TOOLS extends ToolSet>(options: Parameters<PrepareStepFunction<TOOLS>>[0]): ReturnType<PrepareStepFunction<TOOLS>>;
  /**
   * The history to keep after a run: pass `[...messages, ...result.response.messages]`;
   * returns it compacted when a compaction ran during that run (else the same array). The run
   * is `result`'s when given (generateText's result; for streamText,
   * `{ steps: await result.steps }`), else the one whose messages these begin with (a prepareStep may serve runs in
   * flight together; it remembers the latest 32 that compacted). With `result`, the usage
   * its last step reported is remembered by the last assistant message of `messages`: the
   * next run's first step counts from it (without `result`, or when the messages were copied,
   * that step estimates the whole conversation).
   */
  conversation(messages: ModelMessage[], result?: { steps: readonly unknown[] }): ModelMessage[];
  /** Compactions so far (all runs). */
  readonly compactions: number;
  /** Failed compactions in a row, across the runs it serves (3 stop further attempts, but each new run still tries once when due; a success resets it). */
  readonly consecutiveFailures: number;
  /** The last compaction, or `null`. */
  readonly lastResult: CompactionResult<ModelMessage> | null;
}

/**
 * A `prepareStep` for `generateText` / `streamText` that compacts the step's messages when
 * automatic compaction is due.
 *
 * @example
 * const prepareStep = compactionPrepareStep({ summarize });
 * const result = await generateText({ model, tools, messages, stopWhen: stepCountIs(20), prepareStep });
 * messages = prepareStep.conversation([...messages, ...result.response.messages], result);
 */
export declare function compactionPrepareStep(options: CompactionPrepareStepOptions): CompactingPrepareStep;

/**
 * Where {@link createChatHandler} keeps each chat's `UIMessage[]` (a database, KV, files…).
 * A handler serves the requests of one chat id one at a time (load … save), so one process
 * needs nothing more. With several processes (serverless functions, replicas), two requests
 * on one chat may run together: `save` replaces the whole list, so make it conditional on the
 * list `load` returned (a version column, a compare-and-set, a transaction) or send a chat's
 * requests to one process; otherwise the last save wins and a turn can be lost.
 */
export interface ChatStore<M extends UIMessage = UIMessage> {
  /** The stored conversation, or `null`/`undefined` for a new chat. */
  load(chatId: string): Promise<M[] | null | undefined>;
  /** Replaces the stored conversation. */
  save(chatId: string, messages: M[]): Promise<void>;
}

/** An in-memory {@link ChatStore} (one process); copies in and out. */
export declare function memoryChatStore(): ChatStore & { readonly size: number };

/** The `data-compaction` part the route streams (one part, updated in place by its `id`). */
export type CompactionDataPart =
  | { status: 'compacting'; phase: string; tokensBefore: number }
  | { status: 'compacted'; tokensBefore: number; tokensAfter: number; summary: string }
  | { status: 'failed'; tokensBefore: number; code: string };

/** Options of {@link createChatHandler}. An unknown key throws `INVALID_ARGUMENT`. */
export interface ChatHandlerOptions {
  /** The model that answers. */
  model: LanguageModel;
  /** The model id thresholds are computed for. Default: `model.modelId` (or the string model). */
  modelId?: string | undefined;
  summarize: Summarizer;
  store: ChatStore;
  system?: string | undefined;
  tools?: ToolSet | undefined;
  stopWhen?: StopCondition<any> | Array<StopCondition<any>> | undefined;
  config?: Config | undefined;
  context?: Partial<Omit<CompactContext, 'model' | 'summarize' | 'config' | 'signal' | 'onProgress'>> | undefined;
  /** Default `{ keepLastUserMessage: true }`. */
  compactOptions?: Omit<CompactOptions, 'isAutoCompact'> | undefined;
  /** More options of the `streamText` call. */
  streamTextOptions?: Partial<Omit<Parameters<typeof streamText>[0], 'model' | 'messages' | 'prompt' | 'system' | 'tools' | 'stopWhen'>> | undefined;
  /** Called after each compaction: `auto` when due, `reactive` after a prompt-too-long rejection. */
  onCompaction?: ((result: CompactionResult<UIMessage>, info: { chatId: string; reason: 'auto' | 'reactive' }) => void | Promise<void>) | undefined;
  /** Called with a failed compaction's coded error (the turn goes on uncompacted), and with the stream's errors. */
  onError?: ((error: unknown) => void | Promise<void>) | undefined;
}

/**
 * A `useChat` backend route (`Request → Response`): loads the chat, appends the new message,
 * compacts when due (the count anchored on the usage the model reported for the chat's last
 * answer; streaming `data-compaction` parts and saving the compacted conversation), streams
 * the answer and saves the conversation. A request rejected as too long before anything was
 * streamed is compacted and sent once more; three failed automatic compactions in a row stop
 * further attempts for that chat. Requests on one chat id are served one at a time. A bad
 * request (a new message that is not a UIMessage the AI SDK accepts, among others) answers
 * 400 with `{error: {code: 'INVALID_REQUEST', message}}` and stores nothing.
 *
 * @example
 * export const POST = createChatHandler({ model: openai('gpt-4.1'), summarize, store: memoryChatStore() });
 */
export declare function createChatHandler(options: ChatHandlerOptions): (request: Request) => Promise<Response>;
