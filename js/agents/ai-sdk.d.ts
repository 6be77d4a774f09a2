// Declarations of context-compaction/agents/ai-sdk (js/agents/ai-sdk.js).
import type { LanguageModel, ModelMessage, PrepareStepFunction, StopCondition, ToolSet, UIMessage, streamText } from 'ai';
import type { CompactContext, CompactOptions, CompactionResult, Config, Preamble, Summarizer } from 'context-compaction';

/** Options of {@link compactionPrepareStep}. An unknown key throws `INVALID_ARGUMENT`. */
export interface CompactionPrepareStepOptions {
  /** Writes the summary (the library's summarizer contract). */
  summarize: Summarizer;
  /** The model id thresholds are computed for. Default: the step model's `modelId`. */
  modelId?: string;
  /** Windows and thresholds (e.g. `contextWindow`). */
  config?: Config;
  /** More of the compaction's context: hooks, pinned content, readFileState, signal… */
  context?: Partial<Omit<CompactContext, 'model' | 'summarize' | 'config'>>;
  /** Options of each compaction. Default `{ keepLastUserMessage: true }`. */
  compactOptions?: Omit<CompactOptions, 'isAutoCompact'>;
  /** The system prompt given to generateText, counted before the first usage is known. */
  system?: Preamble['system'];
  /** The tools given to generateText, counted before the first usage is known. */
  tools?: Preamble['tools'];
  /** Your own prepareStep, called after the compaction with the (compacted) messages; its result wins. */
  prepareStep?: PrepareStepFunction<any>;
  /** Called after each compaction. */
  onCompaction?: (result: CompactionResult<ModelMessage>, info: { stepNumber: number }) => void | Promise<void>;
  /** Called with the coded error of a failed compaction (the run goes on uncompacted). */
  onError?: (error: unknown) => void | Promise<void>;
}

/** The `prepareStep` function {@link compactionPrepareStep} returns, with its state. */
export interface CompactingPrepareStep extends PrepareStepFunction<any> {
  /**
   * The history to keep after the run: pass `[...messages, ...result.response.messages]`;
   * returns it compacted when a compaction ran during the run (else the same array).
   */
  conversation(messages: ModelMessage[]): ModelMessage[];
  /** Compactions so far. */
  readonly compactions: number;
  /** Failed compactions in a row (3 stop further attempts). */
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
 * messages = prepareStep.conversation([...messages, ...result.response.messages]);
 */
export declare function compactionPrepareStep(options: CompactionPrepareStepOptions): CompactingPrepareStep;

/** Where {@link createChatHandler} keeps each chat's `UIMessage[]` (a database, KV, files…). */
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
  modelId?: string;
  summarize: Summarizer;
  store: ChatStore;
  system?: string;
  tools?: ToolSet;
  stopWhen?: StopCondition<any> | Array<StopCondition<any>>;
  config?: Config;
  context?: Partial<Omit<CompactContext, 'model' | 'summarize' | 'config' | 'signal' | 'onProgress'>>;
  /** Default `{ keepLastUserMessage: true }`. */
  compactOptions?: Omit<CompactOptions, 'isAutoCompact'>;
  /** More options of the `streamText` call. */
  streamTextOptions?: Partial<Omit<Parameters<typeof streamText>[0], 'model' | 'messages' | 'prompt' | 'system' | 'tools' | 'stopWhen'>>;
  onCompaction?: (result: CompactionResult<UIMessage>, info: { chatId: string }) => void | Promise<void>;
  onError?: (error: unknown) => void | Promise<void>;
}

/**
 * A `useChat` backend route (`Request → Response`): loads the chat, appends the new message,
 * compacts when due (streaming `data-compaction` parts and saving the compacted
 * conversation), streams the answer and saves the conversation.
 *
 * @example
 * export const POST = createChatHandler({ model: openai('gpt-4.1'), summarize, store: memoryChatStore() });
 */
export declare function createChatHandler(options: ChatHandlerOptions): (request: Request) => Promise<Response>;
