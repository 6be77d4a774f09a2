// Declarations of context-compaction/agents/openai (js/agents/openai.js).
import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { CompactContext, CompactOptions, CompactionResult, Config, Summarizer } from 'context-compaction';

/** A tool: its parsed arguments in (a custom tool: its free-form input text), the `tool` message's content out (JSON-encoded unless a string; an `Error` returned is answered as if thrown: `Error: <message>`). */
export type ChatToolFunction = (args: any, info: { id: string }) => unknown;

/** Options of {@link runChatToolLoop}. An unknown key throws `INVALID_ARGUMENT`. */
export interface ChatToolLoopOptions {
  client: OpenAI;
  /** The conversation so far (not mutated). */
  messages: ChatCompletionMessageParam[];
  /** The request without `messages` (`model` required; no `stream`). */
  request: Omit<ChatCompletionCreateParamsNonStreaming, 'messages'>;
  tools?: Record<string, ChatToolFunction> | undefined;
  summarize: Summarizer;
  config?: Config | undefined;
  context?: Partial<Omit<CompactContext, 'model' | 'summarize' | 'config' | 'signal'>> | undefined;
  /** Default `{ keepLastUserMessage: true }`. */
  compactOptions?: Omit<CompactOptions, 'isAutoCompact'> | undefined;
  /** Requests at most (default 25); then `MAX_STEPS_EXCEEDED`. */
  maxSteps?: number | undefined;
  signal?: AbortSignal | undefined;
  onStep?: ((completion: ChatCompletion, info: { step: number }) => void | Promise<void>) | undefined;
  onCompaction?: ((result: CompactionResult<ChatCompletionMessageParam>, info: { step: number; reason: 'auto' | 'reactive' }) => void | Promise<void>) | undefined;
  onError?: ((error: unknown) => void | Promise<void>) | undefined;
}

/** What {@link runChatToolLoop} resolves with. */
export interface ChatToolLoopResult {
  /** The conversation to keep (compacted if a compaction ran), ending with the last reply. */
  messages: ChatCompletionMessageParam[];
  completion: ChatCompletion;
  steps: number;
  compactions: number;
}

/**
 * A Chat Completions tool loop that compacts when due and once after a context-length rejection.
 * A request the SDK fails (an error status after the SDK's own retries, a network failure)
 * rejects with a `ContextCompactionError` coded `PROVIDER_ERROR` (the SDK's HTTP `status`
 * copied), `ABORTED` when `signal` aborted it, or `PROMPT_TOO_LONG` when the request was still
 * too long after the compaction; the SDK's own error is its `cause`, unchanged.
 *
 * @example
 * const { messages: history } = await runChatToolLoop({ client, summarize, messages, request: { model: 'gpt-4.1', tools }, tools: { read_file } });
 */
export declare function runChatToolLoop(options: ChatToolLoopOptions): Promise<ChatToolLoopResult>;
