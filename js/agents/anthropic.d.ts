// Declarations of context-compaction/agents/anthropic (js/agents/anthropic.js).
import type Anthropic from '@anthropic-ai/sdk';
import type { CompactionResult, Compactor, CompactorCompactOptions, MessageInput } from 'context-compaction';

/** A tool: its input in, a `tool_result` content out (a string, blocks, or JSON-able value; an `Error` returned is answered as if thrown: `is_error`, its message). */
export type AnthropicToolFunction = (input: any, info: { id: string }) => unknown;

/** What the options of {@link runToolLoop} share, whichever client is given. */
interface ToolLoopCommonOptions {
  /** Holds the conversation (push the user's message first). */
  compactor: Compactor<any>;
  /** The tools to run, by name. */
  tools?: Record<string, AnthropicToolFunction> | undefined;
  /** Requests at most (default 25); then `MAX_STEPS_EXCEEDED`. */
  maxSteps?: number | undefined;
  /** Use `client.messages.stream` (text through `onText`). */
  stream?: boolean | undefined;
  /** Aborts the requests and a compaction in progress (nothing committed; rejects with `ABORTED`). */
  signal?: AbortSignal | undefined;
  /**
   * Options of the compaction after a prompt-too-long rejection; `keepLastUserMessage`
   * (default `true`: the latest user request kept verbatim) applies to the automatic one too.
   */
  compactOptions?: Omit<CompactorCompactOptions, 'signal'> | undefined;
  onCompaction?: ((result: CompactionResult<MessageInput>, info: { step: number; reason: 'auto' | 'reactive' }) => void | Promise<void>) | undefined;
  /**
   * Called with the coded error of a failed automatic compaction (the request goes on
   * uncompacted; after three in a row the Compactor stops trying).
   */
  onError?: ((error: unknown) => void | Promise<void>) | undefined;
  onText?: ((text: string) => void) | undefined;
}

/** Options of {@link runToolLoop} over the client's `messages`. An unknown key throws `INVALID_ARGUMENT`. */
export interface AnthropicToolLoopOptions extends ToolLoopCommonOptions {
  client: Anthropic;
  /** The request without `messages` (model, max_tokens, system, tools…). */
  request: Omit<Anthropic.MessageCreateParamsNonStreaming, 'messages' | 'stream'>;
  onStep?: ((message: Anthropic.Message, info: { step: number }) => void | Promise<void>) | undefined;
}

/**
 * Options of {@link runToolLoop} over `client.beta` (the beta `messages`): what a request with
 * `context_management` (the API's own compaction, `buildApiContextManagement`) and
 * `betas` needs. An unknown key throws `INVALID_ARGUMENT`.
 */
export interface AnthropicBetaToolLoopOptions extends ToolLoopCommonOptions {
  /** `anthropic.beta`. */
  client: Anthropic.Beta;
  /** The beta request without `messages` (model, max_tokens, betas, context_management, tools…). */
  request: Omit<Anthropic.Beta.MessageCreateParamsNonStreaming, 'messages' | 'stream'>;
  onStep?: ((message: Anthropic.Beta.BetaMessage, info: { step: number }) => void | Promise<void>) | undefined;
}

/** What {@link runToolLoop} resolves with. */
export interface AnthropicToolLoopResult {
  /** The last reply (not `tool_use`). */
  message: Anthropic.Message;
  /** Requests answered. */
  steps: number;
  compactions: number;
}

/** What {@link runToolLoop} over `client.beta` resolves with. */
export interface AnthropicBetaToolLoopResult {
  /** The last reply (not `tool_use`). */
  message: Anthropic.Beta.BetaMessage;
  /** Requests answered. */
  steps: number;
  compactions: number;
}

/**
 * A tool-use loop over `client.messages.create` / `stream` with a `Compactor`: compacts when
 * due and once after a prompt-too-long rejection, keeping the latest user request verbatim;
 * a failed automatic compaction is reported through `onError`.
 * A request the SDK fails (an error status after the SDK's own retries, a network failure)
 * rejects with a `ContextCompactionError` coded `PROVIDER_ERROR` (the SDK's HTTP `status`
 * copied), `ABORTED` when `signal` aborted it, or `PROMPT_TOO_LONG` when the request was still
 * too long after the compaction; the SDK's own error is its `cause`, unchanged. What `onText` throws ends the loop as it is.
 *
 * @example
 * const { message } = await runToolLoop({ client, compactor, request: { model, max_tokens: 4096, tools }, tools: { read_file } });
 */
export declare function runToolLoop(options: AnthropicToolLoopOptions): Promise<AnthropicToolLoopResult>;
/**
 * The same loop over `client.beta` (pass `anthropic.beta`): a request with `betas` and
 * `context_management`; a turn the API's own compaction paused (`stop_reason: 'compaction'`)
 * goes on after its block.
 *
 * @example
 * const { message } = await runToolLoop({ client: anthropic.beta, compactor, request: { model, max_tokens: 4096, betas: ['compact-2026-01-12'],
 *   context_management: buildApiContextManagement({ compact: true, pauseAfterCompaction: true }) } });
 */
export declare function runToolLoop(options: AnthropicBetaToolLoopOptions): Promise<AnthropicBetaToolLoopResult>;
