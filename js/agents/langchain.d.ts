// Declarations of context-compaction/agents/langchain (js/agents/langchain.js).
import type { AgentMiddleware } from 'langchain';
import type { BaseMessage } from '@langchain/core/messages';
import type { CompactContext, CompactOptions, CompactionResult, Config, Preamble, Summarizer } from 'context-compaction';

/** Options of {@link compactionMiddleware}. An unknown key throws `INVALID_ARGUMENT`. */
export interface CompactionMiddlewareOptions {
  /** The agent's model id (`'openai:gpt-4.1'`) or chat model (its `model`/`modelName` is read): thresholds are its. */
  model: string | { model?: string | undefined; modelName?: string | undefined; modelId?: string | undefined };
  /** Writes the summary (the library's summarizer contract). */
  summarize: Summarizer;
  config?: Config | undefined;
  context?: Partial<Omit<CompactContext, 'model' | 'summarize' | 'config'>> | undefined;
  /** Default `{ keepLastUserMessage: true }`. */
  compactOptions?: Omit<CompactOptions, 'isAutoCompact'> | undefined;
  /** The agent's system prompt, counted when no usage anchors the count. */
  system?: Preamble['system'] | undefined;
  /** The agent's tool definitions, counted when no usage anchors the count. */
  tools?: Preamble['tools'] | undefined;
  /** The middleware's name. Default `'ContextCompactionMiddleware'`. */
  name?: string | undefined;
  onCompaction?: ((result: CompactionResult<BaseMessage>) => void | Promise<void>) | undefined;
  onError?: ((error: unknown) => void | Promise<void>) | undefined;
}

/** The middleware, with its state. */
export type CompactionMiddleware = AgentMiddleware & {
  readonly compactions: number;
  /** Failed compactions in a row of the thread that ran last (3 stop further attempts in that thread until its next user turn, which tries once more; a success resets it). */
  readonly consecutiveFailures: number;
  readonly lastResult: CompactionResult<BaseMessage> | null;
};

/**
 * An agent middleware (`createAgent({ middleware: [...] })`) that compacts the messages in
 * `beforeModel` when automatic compaction is due.
 *
 * @example
 * const agent = createAgent({ model, tools, middleware: [compactionMiddleware({ model: 'openai:gpt-4.1', summarize })] });
 */
export declare function compactionMiddleware(options: CompactionMiddlewareOptions): CompactionMiddleware;
