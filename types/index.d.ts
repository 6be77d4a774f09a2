// Type declarations of the `context-compaction` package, written by hand (wasm-bindgen types
// every JS value as `any`). They describe both entries: the browser/bundler entry (web.js, needs
// `await init()`) and the Node entry (node.js, ready at import). The Anthropic summarizer's own
// types live beside this file in anthropic.d.ts (copied from js/).
//
// SPEC sections are those of the project's specification; see the package README.

// ============================================================================================
// Utilities
// ============================================================================================

/** A value or a promise of it: callbacks may answer synchronously or asynchronously. */
export type Awaitable<T> = T | PromiseLike<T>;

/**
 * A model id. Any string is accepted (unknown models get the defaults: a 200K window and 32K
 * output tokens, and results that carry the window say `contextWindowSource: 'default'`); the
 * ids of the model table are listed for completion. Claude ids match by family
 * (`claude-sonnet-4-5-20250929`, `us.anthropic.claude-…`); OpenAI and Gemini ids match with a
 * provider prefix (`openai/gpt-4o`, `openai:gpt-4.1`, `models/gemini-2.5-flash`) and a date or
 * release suffix (`-2025-04-14`, `-preview`, `-latest`, `-001`). A `[1m]` suffix asks for the
 * 1M-token window.
 */
export type ModelId =
  | 'claude-opus-4-6'
  | 'claude-sonnet-4-6'
  | 'claude-opus-4-5'
  | 'claude-sonnet-4-5'
  | 'claude-haiku-4-5'
  | 'claude-opus-4-1'
  | 'claude-sonnet-4'
  | 'claude-opus-4'
  | 'claude-3-7-sonnet-latest'
  | 'claude-3-5-sonnet-latest'
  | 'claude-3-5-haiku-latest'
  | 'claude-3-opus-latest'
  | 'claude-3-haiku-20240307'
  | 'gpt-5.2'
  | 'gpt-5.1'
  | 'gpt-5'
  | 'gpt-5-mini'
  | 'gpt-5-nano'
  | 'gpt-5-codex'
  | 'gpt-5-chat-latest'
  | 'gpt-4.1'
  | 'gpt-4.1-mini'
  | 'gpt-4.1-nano'
  | 'gpt-4o'
  | 'gpt-4o-mini'
  | 'o3'
  | 'o3-pro'
  | 'o3-mini'
  | 'o4-mini'
  | 'o1'
  | 'gemini-3-pro-preview'
  | 'gemini-3.1-pro-preview'
  | 'gemini-3-flash-preview'
  | 'gemini-2.5-pro'
  | 'gemini-2.5-flash'
  | 'gemini-2.5-flash-lite'
  | 'gemini-2.0-flash'
  | (string & {});

// ============================================================================================
// Content blocks (Anthropic Messages API, SPEC §2)
// ============================================================================================

/** Prompt-cache breakpoint of a block. */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

/** `{type: "text", text}`. */
export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl | null;
  /** Citations the model attached to this text (shape depends on the cited source). */
  citations?: unknown[] | null;
}

/** Image source: inline base64 data. */
export interface Base64ImageSource {
  type: 'base64';
  media_type: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
  data: string;
}

/** Source by URL (images and PDF documents). */
export interface UrlSource {
  type: 'url';
  url: string;
}

/** Source from the Files API. */
export interface FileSource {
  type: 'file';
  file_id: string;
}

/** Where an image comes from. */
export type ImageSource = Base64ImageSource | UrlSource | FileSource;

/** `{type: "image", source}`. Counts a fixed 2,000 tokens (never by data length). */
export interface ImageBlock {
  type: 'image';
  source: ImageSource;
  cache_control?: CacheControl | null;
}

/** Document source: a base64 PDF. */
export interface Base64PdfSource {
  type: 'base64';
  media_type: 'application/pdf';
  data: string;
}

/** Document source: plain text. */
export interface PlainTextSource {
  type: 'text';
  media_type: 'text/plain';
  data: string;
}

/** Document source: content blocks (custom content documents). */
export interface ContentBlockSource {
  type: 'content';
  content: string | Array<TextBlock | ImageBlock>;
}

/** Where a document comes from. */
export type DocumentSource = Base64PdfSource | PlainTextSource | ContentBlockSource | UrlSource | FileSource;

/** `{type: "document", source}`. Counts a fixed 2,000 tokens. */
export interface DocumentBlock {
  type: 'document';
  source: DocumentSource;
  title?: string | null;
  context?: string | null;
  citations?: { enabled?: boolean } | null;
  cache_control?: CacheControl | null;
}

/** `{type: "tool_use", id, name, input}`: a tool call of the assistant. */
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  /** The tool's input (its shape is the tool's business). */
  input: unknown;
  cache_control?: CacheControl | null;
}

/** What a `tool_result` may contain. */
export type ToolResultContentBlock = TextBlock | ImageBlock | DocumentBlock | UnknownBlock;

/** `{type: "tool_result", tool_use_id, content, is_error?}`: answers the `tool_use` with that id. */
export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | ToolResultContentBlock[];
  is_error?: boolean;
  cache_control?: CacheControl | null;
}

/** `{type: "thinking", thinking, signature}`: kept byte-identical or dropped with its turn. */
export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

/** `{type: "redacted_thinking", data}`: kept byte-identical or dropped with its turn. */
export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

/** `{type: "server_tool_use", id, name, input}`: a tool the API runs itself (web search, …). */
export interface ServerToolUseBlock {
  type: 'server_tool_use';
  id: string;
  name: 'web_search' | 'web_fetch' | 'code_execution' | (string & {});
  input: unknown;
  cache_control?: CacheControl | null;
}

/** One hit of a web search. */
export interface WebSearchResult {
  type: 'web_search_result';
  url: string;
  title: string;
  encrypted_content: string;
  page_age?: string | null;
}

/** A failed web search. */
export interface WebSearchToolResultError {
  type: 'web_search_tool_result_error';
  error_code: 'invalid_tool_input' | 'unavailable' | 'max_uses_exceeded' | 'too_many_requests' | 'query_too_long' | (string & {});
}

/** `{type: "web_search_tool_result", tool_use_id, content}`: answers a `server_tool_use`. */
export interface WebSearchToolResultBlock {
  type: 'web_search_tool_result';
  tool_use_id: string;
  content: WebSearchResult[] | WebSearchToolResultError;
  cache_control?: CacheControl | null;
}

/**
 * A block of any other type (`search_result`, `web_fetch_tool_result`, `container_upload`,
 * later additions): carried through untouched. Blocks whose type ends in `_tool_result` and
 * that carry a `tool_use_id` are paired with their `server_tool_use` like the known ones.
 */
export interface UnknownBlock {
  type: string;
  [field: string]: unknown;
}

/** The block types this package describes field by field. */
export type KnownContentBlock =
  | TextBlock
  | ImageBlock
  | DocumentBlock
  | ToolUseBlock
  | ToolResultBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ServerToolUseBlock
  | WebSearchToolResultBlock;

/**
 * A content block. Because {@link UnknownBlock} has `type: string`, testing `block.type`
 * keeps `UnknownBlock` in the narrowed type: test the field too, or cast to
 * {@link KnownContentBlock} when you know the block is one of those.
 *
 * @example
 * for (const b of blocks) {
 *   if (b.type === 'text' && typeof b.text === 'string') console.log(b.text);
 * }
 */
export type ContentBlock = KnownContentBlock | UnknownBlock;

// ============================================================================================
// Messages (SPEC §2)
// ============================================================================================

/** The role of an API message. */
export type Role = 'user' | 'assistant';

/**
 * Token usage the API reports for one response. The context size up to and including that
 * response is `input_tokens + cache_creation_input_tokens + cache_read_input_tokens +
 * output_tokens`.
 */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number } | null;
  server_tool_use?: { web_search_requests?: number; web_fetch_requests?: number } | null;
  service_tier?: 'standard' | 'priority' | 'batch' | (string & {}) | null;
}

/** Why the model stopped. */
export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded'
  | (string & {});

/**
 * API shape: a message as sent to the Anthropic Messages API. An assistant message may carry
 * the response's `usage` (and `id`) beside its content; the usage of the latest one gives the
 * exact context size (SPEC §3). It has no `type`: an object with a `type` is a transcript
 * line, so push `{role, content, id, usage}` of a response, not the response body itself.
 */
export interface ApiMessage {
  role: Role;
  content: string | ContentBlock[];
  /** The response id (`msg_…`). */
  id?: string;
  usage?: Usage | null;
  model?: string;
  stop_reason?: StopReason | null;
  stop_sequence?: string | null;
}

/** An API-shape user message with text content, as the library writes them. */
export interface ApiUserTextMessage extends ApiMessage {
  role: 'user';
  content: string;
}

/** The `message` of a transcript line (an API message plus the response's fields). */
export interface TranscriptMessage {
  role: Role;
  content: string | ContentBlock[];
  /** The response id; every line of one split response shares it (counted once). */
  id?: string;
  type?: 'message';
  model?: string;
  usage?: Usage | null;
  stop_reason?: StopReason | null;
  stop_sequence?: string | null;
  [field: string]: unknown;
}

/** Fields common to Claude Code session lines. Every field is kept, known or not. */
export interface TranscriptLineBase {
  /** The line type: `user`, `assistant`, `system`, `attachment`, `progress`, … */
  type: string;
  uuid?: string;
  parentUuid?: string | null;
  /** On a `compact_boundary` line: the last line before the compaction. */
  logicalParentUuid?: string | null;
  /** `true` on lines of sub-agents: not part of the main conversation. */
  isSidechain?: boolean;
  isMeta?: boolean;
  /** ISO-8601 time of the line. */
  timestamp?: string;
  sessionId?: string;
  cwd?: string;
  version?: string;
  gitBranch?: string;
  slug?: string;
  userType?: string;
  /** The API message of `user` and `assistant` lines (read on any line that has one). */
  message?: TranscriptMessage | null;
  /** The kind of a `system` line (e.g. `compact_boundary`). */
  subtype?: string;
  /** `true` on the summary line a compaction writes (resuming starts after it). */
  isCompactSummary?: boolean;
  [field: string]: unknown;
}

/** A `user` line: a user message or tool results. */
export interface TranscriptUserLine extends TranscriptLineBase {
  type: 'user';
  message: TranscriptMessage & { role: 'user' };
  isVisibleInTranscriptOnly?: boolean;
  /** Claude Code's structured result of the tool whose `tool_result` this line carries. */
  toolUseResult?: unknown;
  sourceToolAssistantUUID?: string;
}

/** An `assistant` line: one content block of a response (parallel blocks share `message.id`). */
export interface TranscriptAssistantLine extends TranscriptLineBase {
  type: 'assistant';
  message: TranscriptMessage & { role: 'assistant' };
  requestId?: string;
}

/** What a `compact_boundary` line records. */
export interface CompactMetadata {
  trigger: CompactTrigger;
  /** Context size before the compaction, in tokens. */
  preTokens: number;
  /** Tools discovered before the compaction (announced again after it). */
  preCompactDiscoveredTools?: string[];
}

/** A `system` line (hook summaries, notices, compaction boundaries). Never sent to the API. */
export interface TranscriptSystemLine extends TranscriptLineBase {
  type: 'system';
  subtype?: string;
  content?: string;
  level?: string;
  compactMetadata?: CompactMetadata;
}

/**
 * The `compact_boundary` system line: what precedes it is no longer sent. The library writes
 * it in transcript shape whatever the shape of the conversation.
 */
export interface CompactBoundaryLine extends TranscriptSystemLine {
  subtype: 'compact_boundary';
  content: string;
  parentUuid: null;
  logicalParentUuid: string | null;
  isSidechain: false;
  isMeta: false;
  timestamp: string;
  uuid: string;
  level: 'info';
  compactMetadata: CompactMetadata;
}

/** The summary line a compaction writes in a transcript (`isCompactSummary: true`). */
export interface CompactSummaryLine extends TranscriptUserLine {
  message: TranscriptMessage & { role: 'user'; content: string };
  isCompactSummary: true;
  isVisibleInTranscriptOnly: true;
  uuid: string;
  /** The boundary line's `uuid`. */
  parentUuid: string;
  timestamp: string;
}

/** A file restored after compaction (transcript shape). */
export interface RestoredFileAttachment {
  type: 'restored_file';
  path: string;
  content: string;
  /** Whether the content was cut to the per-file budget (head kept). */
  truncated: boolean;
}

/** A skill restored after compaction (transcript shape). */
export interface RestoredSkillAttachment {
  type: 'restored_skill';
  name: string;
  content: string;
  truncated: boolean;
}

/** Context announced again after compaction (transcript shape). */
export interface ContextAttachment {
  type: 'async_agent' | 'plan' | 'plan_mode' | 'deferred_tools' | 'agent_listing' | 'mcp_instructions';
  content: string;
}

/** The `attachment` of an attachment line: the library's kinds, or any other (kept as-is). */
export type TranscriptAttachment =
  | RestoredFileAttachment
  | RestoredSkillAttachment
  | ContextAttachment
  | { type: string; [field: string]: unknown };

/**
 * An `attachment` line: context the agent attached (sent to the API as user text). Lines of
 * kind `skill_discovery` / `skill_listing` are dropped by {@link stripReinjectedAttachments}.
 */
export interface TranscriptAttachmentLine extends TranscriptLineBase {
  type: 'attachment';
  attachment: TranscriptAttachment;
}

/**
 * A line of a type the library does not use (`progress`, `file-history-snapshot`, `summary`,
 * `queue-operation`, future types): carried through untouched. The fields of the known line
 * types are declared here too (optional, same types), so that a line narrowed by its `type`
 * still reads them typed: `if (line.type === 'system' && line.compactMetadata) …`.
 */
export interface OtherTranscriptLine extends TranscriptLineBase {
  type: string;
  compactMetadata?: CompactMetadata;
  attachment?: TranscriptAttachment;
}

/**
 * Transcript shape: one line of a Claude Code session JSONL file, as {@link parseTranscript}
 * returns it.
 */
export type TranscriptLine =
  | TranscriptUserLine
  | TranscriptAssistantLine
  | TranscriptSystemLine
  | TranscriptAttachmentLine
  | OtherTranscriptLine;

/** A conversation item: an API-shape message or a Claude Code transcript line. */
export type Message = ApiMessage | TranscriptLine;

/** A content block as input: anything with a string `type` (unknown types are kept as-is). */
export interface ContentBlockInput {
  readonly type: string;
}

/** An API-shape message as input (SDK message types fit). */
export interface ApiMessageInput {
  readonly role: Role;
  readonly content: string | readonly ContentBlockInput[];
}

/** A transcript line as input. */
export interface TranscriptLineInput {
  readonly type: string;
  readonly message?: {
    readonly role?: string | undefined;
    readonly content?: string | readonly ContentBlockInput[] | null | undefined;
  } | null | undefined;
}

/** A Vercel AI SDK `UIMessage` as input (what `useChat` keeps): `parts`, tool parts included. */
export interface UIMessageInput {
  readonly role: string;
  readonly parts: readonly unknown[];
}

/**
 * A message with a role, of any ecosystem: AI SDK `ModelMessage` (roles `system`, `user`,
 * `assistant`, `tool`), OpenAI Chat Completions messages (`developer`, `tool`, `tool_calls`,
 * content `null`), OpenAI Responses easy-input messages.
 */
export interface RoleMessageInput {
  readonly role: string;
  readonly content?: string | null | readonly ContentBlockInput[] | undefined;
}

/**
 * An item with a string `type`: OpenAI Responses input items (`function_call`,
 * `function_call_output`, `reasoning`, …) and LangChain messages — `BaseMessage` instances,
 * their stored form (`{type: 'human', data}`) and their serialized form
 * (`{lc: 1, type: 'constructor', id, kwargs}`).
 */
export interface TypedItemInput {
  readonly type: string;
}

/**
 * What functions accept as a message, of your own type: Anthropic messages (the SDK's
 * `MessageParam` fits) and Claude Code transcript lines, Vercel AI SDK `ModelMessage` and
 * `UIMessage`, OpenAI Chat Completions messages and Responses input items, LangChain messages.
 * The shape is detected from the array (one array, one shape: `MIXED_SHAPES` otherwise; a
 * message of no known shape is `INVALID_MESSAGE` naming its keys). Results give your objects
 * back with their type, and the messages the library adds are written in your shape: every
 * function is generic in the message type `M`.
 */
export type MessageInput =
  | ApiMessageInput
  | TranscriptLineInput
  | UIMessageInput
  | RoleMessageInput
  | TypedItemInput
  | ItemReferenceInput;

/** An OpenAI Responses `item_reference` (`{id}`, `type` optional): nothing to read, counted 0. */
export interface ItemReferenceInput {
  readonly id: string;
  readonly type?: 'item_reference' | null | undefined;
}

/** The shapes of message the library reads, as {@link CompactionResult.messageShape} names them. */
export type MessageShape = 'ai-sdk-model' | 'ai-sdk-ui' | 'openai-chat' | 'openai-responses' | 'langchain';

/**
 * Your own tokenizer, for counts in your model's tokens (e.g. `(text) => encoder.encode(text).length`
 * with a tiktoken encoder). It is called with each text the model reads — prose, reasoning,
 * tool output, a tool call's name and JSON arguments — and must return a finite number ≥ 0;
 * media still count their fixed size. Taken by {@link tokenCountWithEstimation},
 * {@link shouldAutoCompact}, {@link autoCompactIfNeeded} (its context) and the {@link Compactor}
 * (its running count). Usage the provider reported still anchors the count. A compaction given
 * one counts everything in its tokens: `preCompactTokenCount`, `truePostCompactTokenCount`, the
 * "smaller than before" and threshold checks, session memory's kept part. A call made from
 * inside your tokenizer counts with its own options only. A counter that throws or returns
 * anything else is an `INVALID_ARGUMENT` error naming what it returned. It must answer
 * synchronously: an async one (a remote `count_tokens` call) is refused, its promise settled
 * so that a rejection is not left unhandled.
 */
export type TokenCounter = (text: string) => number;

/**
 * What the `shape` option accepts: a shape the messages are of (`'anthropic'` for Anthropic
 * messages and Claude Code lines), or `'auto'` (the default) to detect it from the messages.
 */
export type ShapeName = 'anthropic' | MessageShape | 'auto';

/**
 * The `shape` option, taken by every function that reads messages. Detection is automatic;
 * naming the shape makes a message of any other shape a `MIXED_SHAPES` error, and makes a
 * conversation of plain `{role, content}` messages (which fit every shape) be answered in the
 * named one (e.g. a summary `UIMessage` with `parts` for `'ai-sdk-ui'`). An unknown name is
 * an `UNSUPPORTED_SHAPE` error listing the accepted ones.
 */
export interface ShapeOptions {
  shape?: ShapeName | undefined;
}

/** LangChain messages, told apart from Anthropic ones by what only they have. */
type LangChainLike =
  | { readonly lc_namespace: readonly string[] }
  | { readonly lc: number; readonly kwargs: object }
  | { readonly type: string; readonly data: { readonly content: unknown } };

/**
 * `true` when `M` is another ecosystem's message type (AI SDK, OpenAI, LangChain): what a
 * compaction adds to such a conversation is of type `M` too, and no boundary line is added.
 * A type that could be an Anthropic message or a transcript line is `false`.
 */
export type IsOtherShape<M> = [M] extends [LangChainLike]
  ? true
  : [M] extends [AnthropicLike]
    ? false
    : true;

/** What could be an Anthropic message (the SDK's `MessageParam` allows `role: 'system'`) or a line. */
type AnthropicLike =
  | ApiMessageInput
  | { readonly role: 'system'; readonly content?: string | readonly ContentBlockInput[] }
  | TranscriptLineInput;

/** Anthropic messages with no transcript line among them (the SDK's `MessageParam`). */
type ApiMessagesOnly<M> = [M] extends [ApiMessageInput | { readonly role: 'system'; readonly content?: string | readonly ContentBlockInput[] | undefined }] ? true : false;

/**
 * What a compaction adds to a conversation of `M`: `A` for Anthropic messages and lines (for
 * Anthropic messages with no line among them, `A`'s API messages and the boundary line only:
 * the summary, restored files and hook texts are then API user messages), else `M`.
 */
export type AddedMessage<M, A> = IsOtherShape<M> extends true
  ? M
  : ApiMessagesOnly<M> extends true
    ? Exclude<A, CompactSummaryLine | TranscriptAttachmentLine | TranscriptUserLine>
    : A;

// ============================================================================================
// Configuration (SPEC §4, §5)
// ============================================================================================

/**
 * Options that change windows, thresholds and enablement. Every field is optional; absent
 * fields take the defaults (in Node, the environment variables named below). An unknown key
 * throws `INVALID_CONFIG` (with a "did you mean" hint); so does a value out of range (a token
 * size below 1), and a window that leaves no room for the model: where a model is given, the
 * window (capped by `autoCompactWindow`) must be larger than the output reserve
 * (min(max output tokens, 20,000)) and, with automatic compaction on, leave more than the
 * 13,000-token auto-compact buffer above it — lower `maxOutputTokens` for a small window.
 */
export interface Config {
  /** Overrides the model's context window, in tokens. */
  contextWindow?: number | undefined;
  /** Overrides the model's default max output tokens (capped at the model's upper limit). */
  maxOutputTokens?: number | undefined;
  /** Enables the 1M-token context for models that support it (Sonnet 4/4.5/4.6, Opus 4.6). */
  enable1mContext?: boolean | undefined;
  /**
   * Caps the window used for auto-compaction. `CLAUDE_CODE_AUTO_COMPACT_WINDOW` gives the
   * default, ignored for a model it leaves no room (after the output reserve and the
   * 13,000-token buffer); a value given here that leaves none is `INVALID_CONFIG`.
   */
  autoCompactWindow?: number | undefined;
  /**
   * Percent (1–100) of the effective window at which to auto-compact; can only lower the
   * threshold (`CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`).
   */
  autoCompactPctOverride?: number | undefined;
  /** Overrides the blocking limit (default: effective window − 3,000). */
  blockingLimitOverride?: number | undefined;
  /** Disables all compaction, manual included (`DISABLE_COMPACT`). */
  disableCompact?: boolean | undefined;
  /** Disables automatic compaction; manual stays allowed (`DISABLE_AUTO_COMPACT`). */
  disableAutoCompact?: boolean | undefined;
  /** The user setting for auto-compaction (default `true`). */
  autoCompactEnabled?: boolean | undefined;
  /** Reactive-only mode: no proactive auto-compaction, compact only when the API rejects. */
  reactiveOnly?: boolean | undefined;
  /** Context-collapse mode: another mechanism manages the context. */
  contextCollapse?: boolean | undefined;
  /**
   * Context window of the model that writes summaries, when smaller than the main one. The
   * summary request keeps 20,000 tokens of it for the summary (SPEC §14) where the window also
   * holds 16,384 tokens of request besides; a smaller window keeps what it has beyond those
   * 16,384, at least a quarter of itself, and every request's `max_tokens` is what the window
   * leaves its input (never more output than the window holds). At least 4,096 tokens, else
   * `INVALID_CONFIG`.
   */
  summaryContextWindow?: number | undefined;
}

/**
 * The environment variables read as defaults (Node reads `process.env` at import). Values are
 * strings as in a shell: `"1"`/`"true"`/`"yes"`/`"on"` for the switches, numbers for the others;
 * unparseable values are ignored.
 */
export interface EnvironmentDefaults {
  DISABLE_COMPACT?: string | undefined;
  DISABLE_AUTO_COMPACT?: string | undefined;
  CLAUDE_AUTOCOMPACT_PCT_OVERRIDE?: string | undefined;
  CLAUDE_CODE_AUTO_COMPACT_WINDOW?: string | undefined;
  [variable: string]: string | undefined;
}

/** `{default, upperLimit}` max output tokens of a model. */
export interface ModelOutputLimits {
  /** The default `max_tokens`. */
  default: number;
  /** The largest `max_tokens` the model accepts. */
  upperLimit: number;
}

/**
 * Where a context window comes from: `'config'` (`config.contextWindow`, or
 * `config.enable1mContext` for a model that supports it), `'model'` (the model table, or a
 * `[1m]` suffix), or `'default'` (the model is not in the table: the 200,000-token default was
 * assumed — set `config.contextWindow` if you know better).
 */
export type ContextWindowSource = 'config' | 'model' | 'default';

/** Where a context size stands against the model's thresholds (SPEC §4). */
export interface TokenWarningState {
  /** `max(0, round((threshold − tokens) / threshold × 100))`. */
  percentLeft: number;
  /** At or above threshold − 20,000: show the warning (orange). */
  isAboveWarningThreshold: boolean;
  /** At or above threshold − 20,000: the same line, shown as an error (red). */
  isAboveErrorThreshold: boolean;
  /** At or above the auto-compact threshold (when auto-compaction is enabled). */
  isAboveAutoCompactThreshold: boolean;
  /** At or above the blocking limit (effective window − 3,000). */
  isAtBlockingLimit: boolean;
  /** The context window the thresholds derive from ({@link getContextWindowForModel}). */
  contextWindow: number;
  /** Where that window comes from; `'default'` means the model is unknown and 200,000 was assumed. */
  contextWindowSource: ContextWindowSource;
}

/**
 * Who makes a request. Requests from `compact` and `session_memory` (the compaction's own
 * requests) never trigger compaction; nor does `marble_origami` while context collapse is on.
 * Any other string is a normal request, except one that misspells those three (`Compact`,
 * `sessionMemory`): it throws `INVALID_ARGUMENT` naming them.
 */
export type QuerySource =
  | 'repl_main_thread'
  | 'sdk'
  | 'agent'
  | 'compact'
  | 'session_memory'
  | 'marble_origami'
  | (string & {});

/** Options of {@link shouldAutoCompact}. */
export interface ShouldAutoCompactOptions extends CountInputs {
  querySource?: QuerySource | undefined;
  /** Tokens already freed by snipping this turn, subtracted from the count. */
  snipTokensFreed?: number | undefined;
  config?: Config | undefined;
}

// ============================================================================================
// Errors
// ============================================================================================

/** Every `code` of a {@link ContextCompactionError}. */
export type ErrorCode =
  /**
   * An argument had the wrong type or shape (e.g. `messages` is not an array), or an options
   * object has an unknown key (`keepRecnt`; the message names the accepted keys and the one
   * probably meant).
   */
  | 'INVALID_ARGUMENT'
  /** A message or content block is malformed. */
  | 'INVALID_MESSAGE'
  /** A token count is negative, NaN, infinite or absurdly large. */
  | 'INVALID_TOKEN_COUNT'
  /** An unknown config key, or a value out of range. */
  | 'INVALID_CONFIG'
  /** A blank or invalid JSONL line (the message names the line number). */
  | 'MALFORMED_TRANSCRIPT'
  /** A message could not be written as JSON (a cycle, a `toJSON` giving no object). */
  | 'SERIALIZATION_FAILED'
  /** The caller's `signal` aborted; nothing was committed. */
  | 'ABORTED'
  /**
   * The summary was cut off (at `max_tokens`, at the model's context window, or by a refusal
   * or content filter); nothing was committed.
   */
  | 'SUMMARY_TRUNCATED'
  /** The summarizer returned no summary text; nothing was committed. */
  | 'EMPTY_SUMMARY'
  /** The summary request stayed too long after 3 retries dropping the oldest rounds; or an agent loop's request was still too long after its compaction. */
  | 'PROMPT_TOO_LONG'
  /** The summarizer failed (a non-transient error, or transient retries exhausted). */
  | 'SUMMARIZER_FAILED'
  /** The compacted context would not be smaller; nothing was committed. */
  | 'COMPACTION_NOT_SMALLER'
  /** Compaction is disabled (`disableCompact` / `DISABLE_COMPACT`). */
  | 'COMPACT_DISABLED'
  /** There is nothing to summarize. */
  | 'NOTHING_TO_COMPACT'
  /** Session-memory compaction did not apply (no memory, or still above the threshold). */
  | 'SESSION_MEMORY_NOT_APPLICABLE'
  /** A summary written ahead (pre-emptive) did not fit the conversation now; today's path ran. */
  | 'PREEMPTIVE_NOT_APPLICABLE'
  /** Reactive compaction was asked for an error that is not about the context's size. */
  | 'REACTIVE_NOT_APPLICABLE'
  /** Reactive compaction already ran for this turn. */
  | 'REACTIVE_ALREADY_TRIED'
  /**
   * The summarizer did not answer within `context.summaryTimeoutMs`, or a retry would have
   * waited past it; nothing was committed.
   */
  | 'TIMEOUT'
  /** Automatic compaction is paused: the context refilled right after each of the last compactions. */
  | 'THRASHING'
  /** The array holds messages of different shapes (e.g. an OpenAI `tool` message among AI SDK messages); the message names both indices. */
  | 'MIXED_SHAPES'
  /** A message could not be written in the caller's shape (LangChain instances with no `HumanMessage` whose class could build the summary); nothing was changed. */
  | 'UNSUPPORTED_SHAPE'
  /**
   * The Messages API refused its on-demand compaction because of the conversation's own
   * `compaction` block (`compaction_block_misplaced`, `compaction_signature_invalid`,
   * `compaction_content_mismatch`): it was moved or edited; nothing was committed.
   */
  | 'API_COMPACTION_REJECTED'
  /** Not a {@link CompactorSnapshot} (another format), a field of the wrong type or an unknown one, or a snapshot edited or damaged after it was written (its `check` fails). */
  | 'INVALID_SNAPSHOT'
  /** A {@link CompactorSnapshot} of a version this library does not read (e.g. written by a newer release). */
  | 'UNSUPPORTED_SNAPSHOT_VERSION'
  /** The messages given to {@link Compactor.restore} are not the ones the snapshot was taken of (their number, fingerprint or token count differs). */
  | 'SNAPSHOT_MISMATCH'
  /** The browser entry (`web.js`) was used before `init()` resolved, or `init()` could not load the `.wasm`. */
  | 'NOT_INITIALIZED'
  /**
   * The WebAssembly instance trapped and was replaced by a fresh one: the call that trapped, the
   * calls pending in it and the objects created in it (a {@link Compactor}, an
   * `offlineSummarizer()` function) fail with this code; later calls work on the fresh instance.
   */
  | 'INSTANCE_RESET'
  /** An agent loop (`runToolLoop`, `runChatToolLoop`) still called tools after `maxSteps` requests. */
  | 'MAX_STEPS_EXCEEDED'
  /** A provider's reply an agent loop cannot use (a Chat Completions answer without `choices[0].message`). */
  | 'INVALID_RESPONSE'
  /**
   * An agent loop's request failed (`runToolLoop`, `runChatToolLoop`: the SDK threw an error
   * status or a network failure): the SDK's error is `cause`, its HTTP status `status`.
   */
  | 'PROVIDER_ERROR';

/**
 * Every {@link ErrorCode}, read from the library at run time (a new array each call).
 *
 * @example
 * errorCodes().includes('THRASHING'); // true
 */
export declare function errorCodes(): ErrorCode[];

/**
 * What the library throws, and what its promises reject with: an `Error` subclass with a
 * stable `code` (one class for the browser and Node entries, so `instanceof` works).
 *
 * @example
 * try {
 *   await compactConversation(messages, context);
 * } catch (e) {
 *   if (!(e instanceof ContextCompactionError)) throw e;
 *   if (e.code === 'ABORTED') return;
 *   console.error(e.code, e.message, e.cause);
 * }
 */
export declare class ContextCompactionError extends Error {
  /** The library makes them; a test double of a callback may too. */
  constructor(message: string, code: ErrorCode);
  name: 'ContextCompactionError';
  code: ErrorCode;
  /** The error a callback (summarizer, hook, `readFile`) threw or rejected with, unchanged; for an agent loop's `PROVIDER_ERROR`, `ABORTED` or `PROMPT_TOO_LONG`, the SDK's error. */
  cause?: unknown;
  /** `PROVIDER_ERROR` (and an agent loop's `PROMPT_TOO_LONG`): the HTTP status of the SDK's error, when it had one. */
  status?: number;
}

/** A context-overflow error recognised by {@link parseContextOverflowError}. */
export interface ContextOverflow {
  /**
   * The form it had: Anthropic `prompt is too long: N tokens > M maximum`
   * (`prompt_too_long`), `input length and max_tokens exceed context limit: A + B > C`
   * (`input_plus_max_tokens`), HTTP 413 (`request_too_large`), OpenAI, Gemini, or another
   * recognisable "too long" text without numbers (`generic`).
   */
  kind: 'prompt_too_long' | 'input_plus_max_tokens' | 'request_too_large' | 'openai' | 'gemini' | 'generic';
  /** Tokens the request had (for `A + B > C`: A + B). */
  actual: number | null;
  /** The limit it exceeded. */
  limit: number | null;
  /** `actual − limit`: how many tokens must go. */
  gap: number | null;
}

// ============================================================================================
// Micro-compaction, boundary, API view (SPEC §2, §7, §10, §11)
// ============================================================================================

/** Options of {@link microCompact}. */
export interface MicroCompactOptions {
  /** The most recent compactable results that are never cleared (a whole number ≥ 0). Default 5. */
  keepRecent?: number | undefined;
  /**
   * Time-based variant: clear only when the last assistant message is older than this many
   * minutes (the prompt cache has expired by then). Off unless given; Claude Code uses 60.
   */
  idleMinutes?: number | undefined;
  /** The current time: ms since the epoch, a `Date` or an ISO-8601 string. Default `Date.now()`. */
  now?: number | Date | string | undefined;
  /** Time of the last assistant message (ms, a `Date` or an ISO-8601 string); default: read from the messages. */
  lastAssistantTimestamp?: number | Date | string | undefined;
  /** Keep the latest result per file path even when older than `keepRecent`. */
  keepLatestPerPath?: boolean | undefined;
  /**
   * Tool names whose results may be cleared; `'*'` allows every tool. Default: Claude Code's
   * Read, Bash, Shell, PowerShell, Grep, Glob, WebSearch, WebFetch, Edit, Write, plus results of
   * at least 500 tokens of any tool whose name reads as re-obtainable (`read_file`,
   * `mcp__github__get_issue`, `runShellCommand`), never `todo`/`task`/`ask`/`think`-like tools.
   */
  compactableTools?: string[] | undefined;
  /** {@link ShapeOptions.shape}. */
  shape?: ShapeName | undefined;
}

/** What {@link microCompact} returns. */
export interface MicroCompactResult<M> {
  /** A new array; unchanged messages are the same objects, changed ones are copies. */
  messages: M[];
  /** Tokens freed (estimate, padded by 4/3). */
  tokensFreed: number;
  /** `tool_use_id`s of the cleared results, oldest first, each once (results that share a
   * `tool_use_id` are listed by it once). */
  clearedToolUseIds: string[];
}

/** What triggered a compaction. */
export type CompactTrigger = 'auto' | 'manual';

/** Options of {@link createCompactBoundaryMessage}. */
export interface CompactBoundaryOptions {
  /** `uuid` of the last message before the compaction (`logicalParentUuid`). */
  lastUuid?: string | undefined;
  /** Names of tools discovered before the compaction. */
  preCompactDiscoveredTools?: string[] | undefined;
  /** The new line's `uuid`. Default: a random UUID. */
  uuid?: string | undefined;
  /** The new line's ISO-8601 `timestamp`. Default: now. */
  timestamp?: string | undefined;
  /** A transcript line whose session fields (`sessionId`, `cwd`, `version`, `gitBranch`, …) are copied. */
  template?: MessageInput | undefined;
}

/** A message sent to the Messages API, as {@link toApiMessages} gives it. */
export interface ApiViewMessage {
  role: Role;
  content: ContentBlock[];
}

/**
 * What {@link toApiMessages} gives for messages of type `M`. For Anthropic messages of your own
 * type (the SDK's `MessageParam`, `BetaMessageParam`, a `Message` pushed as it came) each view
 * message is `{role, content}` with your own block type (the view holds your blocks, and text
 * blocks it writes itself), so it goes to `client.messages.create` with no cast — also a
 * `Compactor<MessageParam>`'s messages after a compaction (the boundary line is left out of the
 * view); for transcript lines and other shapes, {@link ApiViewMessage}.
 */
export type ApiViewOf<M> = 0 extends 1 & M
  ? ApiViewMessage
  : M extends CompactBoundaryLine
    ? never // left out: the view starts after it
    : IsOtherShape<M> extends true
      ? ApiViewMessage
      : M extends { readonly role: infer R extends Role | 'system'; readonly content: string }
        ? { role: R; content: Array<{ type: 'text'; text: string }> }
        : M extends { readonly role: infer R extends Role | 'system'; readonly content?: string | ReadonlyArray<infer B> }
          ? { role: R; content: Array<Exclude<B, string>> }
          : ApiViewMessage;

/** One broken API invariant. */
export interface ApiProblem {
  /** Index of the message in the API view ({@link toApiMessages}). */
  message: number;
  /** What is wrong. */
  problem: string;
}

/** What {@link validateForApi} returns. */
export interface ApiValidation {
  valid: boolean;
  problems: ApiProblem[];
}

/** `keep` of the thinking edit. */
export type ThinkingKeep = 'all' | number | { type: 'all' } | { type: 'thinking_turns'; value: number };

/**
 * Options of {@link buildApiContextManagement}. An edit is sent when its switch is `true`, or
 * when its switch is absent and one of its own settings is given. A switch set to `false`
 * always wins. The idleness inputs never switch anything on. Unknown keys throw `INVALID_CONFIG`.
 */
export interface ContextManagementOptions {
  /** Send the `clear_thinking_20251015` edit (set it when the request enables extended thinking). */
  clearThinking?: boolean | undefined;
  /** A fixed `keep` for the thinking edit; default `"all"`, or 1 turn after an idle period. */
  thinkingKeep?: ThinkingKeep | undefined;
  /** Whether the session is idle (wins over the other idleness inputs). */
  isIdle?: boolean | undefined;
  /** Minutes since the last assistant message. */
  idleMinutes?: number | undefined;
  /** Time of the last assistant message, ms since the epoch (used with `nowMs`). */
  lastAssistantMs?: number | undefined;
  /** The current time, ms since the epoch. */
  nowMs?: number | undefined;
  /** Idle beyond this many minutes counts as idle. Default 60. */
  idleThresholdMinutes?: number | undefined;
  /** Send the `clear_tool_uses_20250919` edit. */
  clearToolUses?: boolean | undefined;
  /** `trigger` in input tokens. Default 180,000. */
  triggerInputTokens?: number | undefined;
  /** `clear_at_least` in input tokens (0 omits it). Default: trigger − target = 140,000. */
  clearAtLeast?: number | undefined;
  /** Where clearing should bring the context. Default 40,000. */
  targetInputTokens?: number | undefined;
  /** `keep` in tool uses: a whole number ≥ 0 (`INVALID_CONFIG` otherwise). Default: the API's. */
  keepToolUses?: number | undefined;
  /** `clear_tool_inputs`: all, none, or these tools. Default Bash, Glob, Grep, Read, WebFetch, WebSearch. */
  clearToolInputs?: boolean | string[] | undefined;
  /** `exclude_tools`. Default Edit, Write, NotebookEdit. */
  excludeTools?: string[] | undefined;
  /** Send the `compact_20260112` edit (the API's threshold compaction, beta `compact-2026-01-12`). */
  compact?: boolean | undefined;
  /** Its `trigger` in input tokens: a whole number ≥ 50,000 (the API's minimum). Default 150,000. */
  compactTriggerInputTokens?: number | undefined;
  /** Its `pause_after_compaction`: the response stops after the block (`stop_reason: 'compaction'`). */
  pauseAfterCompaction?: boolean | undefined;
  /** Its `instructions`: a summary prompt that replaces the API's (not blank). */
  compactInstructions?: string | undefined;
}

/** The `clear_thinking_20251015` edit. */
export interface ClearThinkingEdit {
  type: 'clear_thinking_20251015';
  keep: 'all' | { type: 'thinking_turns'; value: number };
}

/** The `clear_tool_uses_20250919` edit. */
export interface ClearToolUsesEdit {
  type: 'clear_tool_uses_20250919';
  trigger: { type: 'input_tokens'; value: number };
  keep?: { type: 'tool_uses'; value: number };
  clear_at_least?: { type: 'input_tokens'; value: number };
  clear_tool_inputs?: boolean | string[];
  exclude_tools?: string[];
}

/** The `compact_20260112` edit (beta header `compact-2026-01-12`). */
export interface CompactEdit {
  type: 'compact_20260112';
  trigger: { type: 'input_tokens'; value: number };
  pause_after_compaction?: boolean;
  instructions?: string;
}

/**
 * The `context_management` request parameter (beta header `context-management-2025-06-27`;
 * with the compaction edit also `compact-2026-01-12`).
 */
export interface ApiContextManagement {
  /** The thinking edit, when present, comes first; the compaction edit last. */
  edits: Array<ClearThinkingEdit | ClearToolUsesEdit | CompactEdit>;
}

/** Options of {@link applyApiCompaction}. Unknown keys throw `INVALID_ARGUMENT`. */
export interface ApplyApiCompactionOptions {
  /**
   * Leave out the messages before the compaction block (the API ignores them anyway).
   * Default `false`: the whole history stays and the block marks where the context starts.
   */
  dropIgnored?: boolean | undefined;
  /**
   * After a pause (`stop_reason: 'compaction'`), put the messages from the latest user
   * request on back after the block, so the next request answers it. Default `true`.
   */
  keepLastRequest?: boolean | undefined;
}

/** What {@link applyApiCompaction} reads of a Messages API response body. */
export interface ApiCompactionResponse {
  content: readonly unknown[];
  stop_reason?: string | null | undefined;
  usage?: (SummaryUsage & { iterations?: readonly ApiUsageIteration[] | null | undefined }) | null | undefined;
}

/** One step of a response's `usage.iterations` (the compaction, then the message). */
export interface ApiUsageIteration {
  type: 'compaction' | 'message' | (string & {});
  input_tokens?: number | null | undefined;
  output_tokens?: number | null | undefined;
  cache_creation_input_tokens?: number | null | undefined;
  cache_read_input_tokens?: number | null | undefined;
}

/** What {@link applyApiCompaction} returns. */
export interface ApiCompactionApplied<M, R extends ApiCompactionResponse = ApiCompactionResponse> {
  /**
   * The conversation to continue with: your messages (all, or from the block on with
   * `dropIgnored`), the response as `{role: 'assistant', content}` (its own `content` array,
   * the block byte for byte), then after a pause the messages put back (your objects; a
   * response among them as a shallow copy without its `usage`, which measured the context
   * before the compaction).
   */
  messages: Array<M | { role: 'assistant'; content: R['content'] }>;
  /** The response begins with a compaction block that has content: the context starts there. */
  compacted: boolean;
  /** The response's compaction block has `content: null`: it failed and changed nothing. */
  failed: boolean;
  /** `stop_reason` is `compaction` (`pause_after_compaction`): send the next request to go on. */
  paused: boolean;
  /** `stop_reason` is `model_context_window_exceeded`. */
  contextWindowExceeded: boolean;
  /** The response's `stop_reason`. */
  stopReason: string | null;
  /** The sum of `usage.iterations` (the top-level usage leaves the compaction out), else the usage. */
  billedUsage: {
    input_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
    output_tokens: number;
  };
  /** `usage.iterations` as the response gave them. */
  iterations: ApiUsageIteration[];
}

// ============================================================================================
// The summarizer contract (SPEC §14, §16)
// ============================================================================================

/** A text block of the summary request. */
export type SummaryRequestTextBlock = { type: 'text'; text: string };

/**
 * A message of the summary request. Tool calls and results are rendered as text and thinking
 * is left out, so the request needs no tool definitions.
 */
export type SummaryRequestMessage = { role: Role; content: SummaryRequestTextBlock[] };

/**
 * The Messages API request body the library builds for the summarizer: the conversation
 * followed by the summary instruction. Send it as it is (the model may be replaced).
 */
export type SummaryRequest = {
  /**
   * `summaryModel`, else the conversation's model (a `[1m]` id as it is: send it without the
   * suffix and with the `context-1m-2025-08-07` beta, as `anthropicSummarizer` does).
   */
  model: string;
  system: string;
  messages: SummaryRequestMessage[];
  /** At most 20,000 and at most the model's limit. */
  max_tokens: number;
} | OnDemandCompactionRequest;

/**
 * The request sent instead to a summarizer that offers the Messages API's on-demand
 * compaction (`summarize.onDemandCompaction === true`), for Anthropic messages: the
 * conversation as the API is sent it, and `compaction`. Send it with the beta header
 * `compact-2026-09-04`; the answer's `{type: 'compaction', content, signature}` block is
 * put first in the compacted conversation, byte for byte.
 */
export type OnDemandCompactionRequest = {
  model: string;
  /** The messages as the API is sent them ({@link toApiMessages}); blocks as they are. */
  messages: Array<{ role: 'user' | 'assistant'; content: string | Array<{ type: string; [field: string]: unknown }> }>;
  max_tokens: number;
  compaction: { type: 'summarize'; instructions?: string };
};

/** A block of the summarizer's response: text blocks are read, others ignored. */
export interface SummaryResponseBlock {
  type: string;
  text?: string | undefined;
  /** A `compaction` block's summary (`null`: the compaction failed). */
  content?: string | null | undefined;
}

/** The usage of the summary call (reported as {@link CompactionResult.compactionUsage}). */
export interface SummaryUsage {
  input_tokens?: number | null | undefined;
  output_tokens?: number | null | undefined;
  cache_creation_input_tokens?: number | null | undefined;
  cache_read_input_tokens?: number | null | undefined;
}

/**
 * What a summarizer resolves with: a Messages API response body (or a plain string, see
 * {@link Summarizer}). A `stop_reason` of `max_tokens`, `model_context_window_exceeded` or
 * `refusal` (an answer stopped before its end) is a failure (`SUMMARY_TRUNCATED`).
 * Other ecosystems' answers given as they are read alike: a LangChain message (its
 * `content`, and `response_metadata`'s `stop_reason` / `finish_reason` / `finishReason`) or
 * an AI SDK `generateText` result (`{text, finishReason}`, see {@link SummaryTextResponse});
 * a cut for length in any of their words (`length`, `MAX_TOKENS`), or a content filter's stop
 * (`content_filter`, `content-filter`, `SAFETY`), is `SUMMARY_TRUNCATED` too.
 */
export interface SummaryResponse {
  content: string | readonly SummaryResponseBlock[];
  stop_reason?: StopReason | null | undefined;
  usage?: SummaryUsage | null | undefined;
  /** A LangChain message's metadata: why it stopped. */
  response_metadata?: { stop_reason?: string | null | undefined; finish_reason?: string | null | undefined; finishReason?: string | null | undefined } | null | undefined;
}

/** An AI SDK `generateText` result returned by a summarizer as it is. */
export interface SummaryTextResponse {
  text: string;
  /** `length` (the output was cut): `SUMMARY_TRUNCATED`. */
  finishReason?: string | { unified?: string | undefined } | null | undefined;
  usage?: unknown;
}

/** The second argument of a {@link Summarizer}. */
export interface SummarizeOptions {
  /**
   * Abort the request when it fires: it fires with the caller's `context.signal` (same reason)
   * and when the time limit (`context.summaryTimeoutMs`, default 10 minutes) gives up on the
   * call, so that a request nobody waits for any more is not left running. A summary written
   * ahead gets its own, which also aborts when the conversation it is for is replaced.
   */
  signal?: AbortSignal;
  /** Report streamed text here for progress (the caller's `context.onText`; absent in the background). */
  onText?: (text: string) => void;
  /**
   * `true` for a summary the `Compactor` writes ahead (`preemptive`): nobody waits for it,
   * so it may go to a cheaper or lower-priority route (the Batches API is too slow for the
   * threshold, but a slower model is fine).
   */
  background?: boolean;
  /**
   * The window (tokens) the request was sized to: `config.summaryContextWindow`, else the
   * summary model's, with what the configuration gives the main model (`enable1mContext`, a
   * larger `contextWindow`). Past 200,000 a Claude model must be sent the 1M-context beta
   * (`anthropicSummarizer` does).
   */
  contextWindow?: number;
}

/**
 * The summarizer contract: send `request` to a model and resolve with the Messages API
 * response body, or with the summary text. To fail, throw or reject with the API's error: the
 * library reads `status` (or `statusCode`), `message`, `error`, `retriesExhausted` and
 * `retryAfterMs` from it to decide between the prompt-too-long retry, a transient retry with
 * backoff, and failure. The reply's `<analysis>` is discarded and its `<summary>` kept.
 *
 * A summarizer function with the property `onDemandCompaction: true` (as made by
 * `anthropicSummarizer({onDemandCompaction: true})`) can send an
 * {@link OnDemandCompactionRequest}: the library then asks the Messages API's on-demand
 * compaction for the summary of Anthropic messages, and falls back to the summary prompt when
 * the API cannot (`compaction_unavailable`, a failed summary).
 *
 * @example
 * const summarize: Summarizer = async (request, { signal }) => {
 *   const res = await fetch('/api/messages', { method: 'POST', body: JSON.stringify(request), signal });
 *   if (!res.ok) throw Object.assign(new Error(await res.text()), { status: res.status });
 *   return res.json();
 * };
 */
export type Summarizer = (request: SummaryRequest, options: SummarizeOptions) => Promise<SummaryResponse | SummaryTextResponse | string>;

/** Options of {@link offlineSummarizer}. */
export interface OfflineSummarizerOptions {
  /** Token budget of the summary (a whole number ≥ 1). Default 8,000. */
  maxTokens?: number | undefined;
}

/**
 * A summarizer that needs no model and no network: it writes the summary from the
 * conversation itself (every user message, files read/written/edited, commands and their
 * failures, errors and their fixes, the latest todo list, the current work), within a token
 * budget. Same input, same output, byte for byte. It has the contract of any
 * {@link Summarizer}, so the whole pipeline runs unchanged.
 *
 * It lives in the package's second WebAssembly module ({@link loadExtras}). Where that module
 * is not loaded yet in a browser (web and inline entries), the function returned loads it on its
 * first call, and a bad option is reported by that call (a rejected promise) rather than thrown
 * here; in Node and Workers it loads now and a bad option throws here.
 *
 * @example
 * const result = await compactConversation(messages, { model, summarize: offlineSummarizer() });
 */
export declare function offlineSummarizer(options?: OfflineSummarizerOptions | null): Summarizer;

/** A file that a compaction would restore, as {@link previewCompaction} sees it. */
export interface PreviewRestoredFile {
  /** The file's path. */
  path: string;
  /** Tokens it would take (0 when its content is not in the snapshot). */
  tokens: number;
  /** Whether it would be cut to fit. */
  truncated: boolean;
  /** Whether the snapshot holds its content (false: it would be read when compacting). */
  contentKnown: boolean;
}

/** A skill that a compaction would restore. */
export interface PreviewRestoredSkill {
  /** The skill's name. */
  name: string;
  /** Tokens it would take. */
  tokens: number;
  /** Whether it would be cut to fit. */
  truncated: boolean;
}

/** What {@link previewCompaction} reports. */
export interface CompactionPreview {
  /** Context size now. */
  tokensBefore: number;
  /** Estimated context size right after a compaction. */
  estimatedTokensAfter: number;
  /** The auto-compact threshold of the model. */
  threshold: number;
  /** Whether the threshold is crossed now. */
  isAboveThreshold: boolean;
  /** The context window the threshold derives from. */
  contextWindow: number;
  /** Where that window comes from; `'default'` means the model is unknown and 200,000 was assumed. */
  contextWindowSource: ContextWindowSource;
  /** What micro-compaction would clear now. */
  microCompact: { tokensFreed: number; clearedToolUseIds: string[] };
  /** Files that would be restored, most recent first. */
  restoredFiles: PreviewRestoredFile[];
  /** Skills that would be restored. */
  restoredSkills: PreviewRestoredSkill[];
  /** Estimated size of the summary (the offline summary's size, capped at the summary limit). */
  estimatedSummaryTokens: number;
}

/**
 * What a compaction would do now, without calling any model: tokens before and after, the
 * threshold, what micro-compaction would clear, which files and skills would be restored.
 * Asynchronous: it runs in the package's second WebAssembly module, loaded on first use
 * ({@link loadExtras}).
 *
 * @example
 * const p = await previewCompaction(lines, { model: 'claude-opus-4-6', readFileState });
 * if (p.isAboveThreshold) console.log(`would shrink ${p.tokensBefore} → ${p.estimatedTokensAfter}`);
 */
export declare function previewCompaction<M extends MessageInput>(
  messages: readonly M[],
  context: Omit<CompactContext, 'summarize'> & { summarize?: Summarizer },
): Promise<CompactionPreview>;

// ============================================================================================
// Hooks (SPEC §15)
// ============================================================================================

/** Input of the PreCompact hook. */
export interface PreCompactHookInput {
  trigger: CompactTrigger;
  /** The caller's `options.customInstructions` (`null` when none). */
  customInstructions: string | null;
  /** Context size before compaction, in tokens. */
  preTokens: number;
  /** The auto-compact threshold of the model. */
  threshold: number;
  /** The context window of the model. */
  window: number;
  /** `options.recompactionInfo` of {@link compactConversation} (`null` when none). */
  recompactionInfo?: RecompactionInfo | null;
  /** `true` when session-memory compaction is tried. */
  sessionMemory?: true;
}

/**
 * Text in a hook's answer: a string, or content blocks (their `text` blocks are read, one per
 * line; a block of another type is reported in {@link CompactionResult.hookErrors}).
 */
export type HookText = string | Array<string | { type: 'text'; text: string } | { type: string }>;

/**
 * Claude Code's hook JSON fields that ask nothing of a compaction: accepted and not read
 * (`continue: false` is reported: a compaction hook cannot stop anything).
 */
export interface ClaudeCodeHookFields {
  continue?: boolean;
  suppressOutput?: boolean;
}

/**
 * What the PreCompact hook may return: extra summary instructions (a string, or
 * `instructions`), and a message to show the user. A field of the wrong type, one this hook
 * does not read (`messages`), a misspelt one or a second one meaning the same is reported in
 * {@link CompactionResult.hookErrors} naming it; the rest is used.
 */
export type PreCompactHookOutput =
  | string
  | (ClaudeCodeHookFields & {
      instructions?: HookText | undefined;
      /** Same as `instructions` (the first given is used). */
      customInstructions?: HookText | undefined;
      /** Same as `instructions`. */
      newCustomInstructions?: HookText | undefined;
      userDisplayMessage?: HookText | undefined;
      /** Same as `userDisplayMessage`. */
      displayMessage?: HookText | undefined;
      /** Same as `userDisplayMessage` (Claude Code's hook JSON word). */
      systemMessage?: HookText | undefined;
    })
  | null
  | undefined
  | void;

/** Input of the SessionStart hook, run after compaction. */
export interface SessionStartHookInput {
  source: 'compact';
  model: string;
}

/**
 * What the SessionStart hook may return: texts appended to the conversation after the
 * compaction (as hook-result messages): every text of `messages`, `additionalContext`,
 * `message` and Claude Code's `hookSpecificOutput.additionalContext`, in that order. What
 * cannot be used is reported in {@link CompactionResult.hookErrors} naming the field.
 */
export type SessionStartHookOutput =
  | string
  | Array<HookText | { content: HookText }>
  | (ClaudeCodeHookFields & {
      messages?: HookText | Array<HookText | { role?: string | undefined; content: HookText }> | undefined;
      /** A single text. */
      additionalContext?: HookText | undefined;
      /** Same as `additionalContext`. */
      message?: HookText | undefined;
      /** Claude Code's SessionStart hook JSON. */
      hookSpecificOutput?: { hookEventName?: string | undefined; additionalContext?: HookText | undefined } | undefined;
    })
  | null
  | undefined
  | void;

/** Input of the PostCompact hook. */
export interface PostCompactHookInput {
  trigger: CompactTrigger;
  /** The summary text. */
  compactSummary: string;
  /** Context size before compaction, in tokens. */
  preTokens: number;
  /** Estimated context size after compaction, in tokens. */
  postTokens: number;
}

/**
 * What the PostCompact hook may return: a message to show the user. What cannot be used is
 * reported in {@link CompactionResult.hookErrors} naming the field.
 */
export type PostCompactHookOutput =
  | string
  | (ClaudeCodeHookFields & {
      userDisplayMessage?: HookText | undefined;
      /** Same as `userDisplayMessage`. */
      displayMessage?: HookText | undefined;
      /** Same as `userDisplayMessage` (Claude Code's hook JSON word). */
      systemMessage?: HookText | undefined;
    })
  | null
  | undefined
  | void;

/**
 * The hooks of a compaction. A hook that throws is reported in
 * {@link CompactionResult.hookErrors}; it never loses the conversation. Hooks are called with
 * the `hooks` object as `this`.
 */
export interface CompactHooks {
  /** Before the summary request: may add instructions and a message for the user. */
  preCompact?: ((input: PreCompactHookInput) => Awaitable<PreCompactHookOutput>) | undefined;
  /** After compaction: its texts are appended to the conversation. */
  sessionStart?: ((input: SessionStartHookInput) => Awaitable<SessionStartHookOutput>) | undefined;
  /** After compaction: may add a message for the user. */
  postCompact?: ((input: PostCompactHookInput) => Awaitable<PostCompactHookOutput>) | undefined;
}

// ============================================================================================
// The context of a compaction (SPEC §6, §7, §9, §12)
// ============================================================================================

/** What the agent knows of a file it read: the content is restored after compaction. */
export interface FileState {
  /** The content as read; without it the file is restored only through `readFile`. */
  content?: string | undefined;
  /** When it was read, in ms since the epoch or as a `Date` (most recent files are restored first). */
  timestamp?: number | Date | undefined;
  /** Same as `timestamp`. */
  mtime?: number | Date | undefined;
  /** Claude Code's partial-read fields (kept, not read). */
  offset?: number | undefined;
  limit?: number | undefined;
}

/** A {@link FileState} with its path, for the array form of the read-file state. */
export interface FileStateRecord extends FileState {
  path: string;
}

/**
 * The agent's read-file state: path → {@link FileState} (or the content string). Snapshotted
 * when a compaction starts and cleared (`clear()`, keys deleted, or emptied) when it succeeds.
 */
export type ReadFileState =
  | Map<string, FileState | string>
  | Record<string, FileState | string>
  | FileStateRecord[];

/** A skill invoked in the session: restored after compaction within the skills budget. */
export interface SkillState {
  /** The skill's instructions (the head is kept when cut). */
  content: string;
  /** Its name (default: the key). */
  name?: string | undefined;
}

/** Invoked skills: name → {@link SkillState} (or the content string), or an array of `{name, content}`. */
export type InvokedSkills =
  | Map<string, SkillState | string>
  | Record<string, SkillState | string>
  | Array<SkillState & { name: string }>;

/** A background agent still running, announced again after compaction. */
export interface AsyncAgent {
  id?: string | undefined;
  /** Same as `id`. */
  agentId?: string | undefined;
  description?: string | undefined;
  /** Default `running`. */
  status?: string | undefined;
}

/** Information about a repeated compaction, passed through to the PreCompact hooks. */
export interface RecompactionInfo {
  isRecompactionInChain?: boolean;
  turnsSincePreviousCompact?: number;
  previousCompactTurnId?: string;
  autoCompactThreshold?: number;
  querySource?: QuerySource;
  [field: string]: unknown;
}

/** A step of a compaction, reported to `context.onProgress`. */
export type ProgressEvent = ProgressEventOf<
  | { phase: 'start'; /** Context size before compaction. */ tokens: number }
  | { phase: 'preCompactHook' }
  | { phase: 'summarizing'; /** Attempt of the summary request, from 1. */ attempt: number }
  | {
      phase: 'summarizingPart';
      /** The part, from 1 (`summarizeInParts`). */
      attempt: number;
      /** Estimated tokens of this part's request. */
      tokens: number;
      /** e.g. `summarizing API turns 1–40 of 120`. */
      detail: string;
    }
  | {
      phase: 'retryPromptTooLong';
      /** Tokens dropped from the head of the request. */
      tokens: number;
      /** e.g. `dropped 3 oldest API rounds`. */
      detail: string;
    }
  | { phase: 'retryTransient'; /** The wait and the error, e.g. `waiting 1200 ms after: overloaded`. */ detail: string }
  | {
      phase: 'fallbackSummary';
      /** Why the API's on-demand compaction was not used, e.g. `… (compaction_unavailable)`. */
      detail: string;
    }
  | { phase: 'summarized' }
  | { phase: 'restoring' }
  | { phase: 'sessionStartHook' }
  | { phase: 'postCompactHook' }
  | { phase: 'done'; /** Estimated context size after compaction. */ tokens: number }
>;

/**
 * Every {@link ProgressEvent} may be marked `background: true`: it belongs to a summary the
 * `Compactor` writes ahead (`preemptive`), which nobody waits for — `start` (the tokens it
 * summarizes), `preCompactHook`, `summarizing` and its retries, `summarized`. Events of the
 * compaction the conversation waits for (including a swap of that summary) are not marked.
 */
export type ProgressEventOf<E> = E & { background?: true };

/** The `phase` of a {@link ProgressEvent}. */
export type ProgressPhase = ProgressEvent['phase'];

/**
 * The `context` of a compaction: the model, the summarizer, and what the agent knows that
 * must survive the compaction. Callbacks may answer synchronously or with a promise; every
 * wait is interrupted when `signal` aborts.
 *
 * The object may carry your own keys as well, but a key that misspells one of these
 * (`querySorce`, `hooks.PreCompact`), an option of the call (`customInstructions`) or a key of
 * `config` (`contextWindow`) given here throws `INVALID_ARGUMENT` naming it and the keys read:
 * silently ignored, it would change what the compaction does.
 *
 * @example
 * const context: CompactContext = {
 *   model: 'claude-opus-4-6',
 *   summarize: anthropicSummarizer({ apiKey }),
 *   readFileState: new Map([['src/main.rs', { content, timestamp: Date.now() }]]),
 *   hooks: { preCompact: () => ({ instructions: 'Keep the test plan.' }) },
 *   onProgress: (e) => console.error(e.phase),
 * };
 */
export interface CompactContext {
  /** The main model (windows and thresholds are its). */
  model: ModelId;
  /** Sends the summary request (SPEC §16). See {@link anthropicSummarizer}. */
  summarize: Summarizer;
  /**
   * The model that writes the summary (the request is sized for it: its window, `max_tokens`
   * within its output limit). Default: the summarizer's own `summaryModel` (the `model` given
   * to `anthropicSummarizer` / `openaiSummarizer`), else `model`.
   */
  summaryModel?: ModelId | undefined;
  /** Configuration; absent fields take the environment defaults. */
  config?: Config | undefined;
  /**
   * Files the agent read: snapshotted, restored after the summary (at most 5, 5,000 tokens
   * each, 50,000 together, and with skills no further than the warning line: the next request
   * stays 20,000 tokens below the auto-compact threshold). On success, the entries the
   * compaction read are deleted (those read when a summary written ahead started, for a swap);
   * an entry added or changed meanwhile (a new value, or its object changed in place) stays.
   */
  readFileState?: ReadFileState | undefined;
  /** Reads a file fresh for restoration (instead of the snapshot). `null`: not readable, skipped. */
  readFile?: ((path: string) => Awaitable<string | { content: string } | null | undefined>) | undefined;
  /** Paths of nested memory files loaded; cleared on success like `readFileState`. */
  loadedNestedMemoryPaths?: Set<string> | Map<string, unknown> | string[] | Record<string, unknown> | undefined;
  /** The current plan, attached again after compaction. */
  plan?: string | null | undefined;
  /** Whether plan mode is on (its instructions are attached again). */
  planMode?: boolean | undefined;
  /** Skills invoked in the session, restored within 5,000 tokens each and 25,000 together. */
  invokedSkills?: InvokedSkills | undefined;
  /** Names of skills already announced: deliberately never reset by a compaction (nor read). */
  sentSkillNames?: Set<string> | string[] | undefined;
  /** Tools discovered before compaction: announced again and recorded in the boundary. */
  discoveredTools?: Array<string | { name: string }> | undefined;
  /** Same as `discoveredTools` (used when that is absent). */
  tools?: Array<string | { name: string }> | undefined;
  /** Agents available, announced again. */
  agents?: Array<string | { name?: string | undefined; description?: string | undefined }> | undefined;
  /** MCP server instructions, announced again: one text, server → text, or a list. */
  mcpInstructions?: string | Record<string, string> | Array<string | { server?: string | undefined; instructions?: string | undefined }> | undefined;
  /** Background agents still running, announced again. */
  asyncAgents?: AsyncAgent[] | undefined;
  /**
   * The session memory (a running summary kept across the session), or a function giving
   * it. Session-memory compaction (SPEC §12) uses it as the summary, with no model call.
   */
  sessionMemory?: string | null | (() => Awaitable<string | null | undefined>) | undefined;
  /** PreCompact, SessionStart and PostCompact hooks. */
  hooks?: CompactHooks | undefined;
  /** Aborts the compaction at every wait; it then rejects with `ABORTED`, nothing committed. */
  signal?: AbortSignal | undefined;
  /** Called at each step. Exceptions it throws are ignored. */
  onProgress?: ((event: ProgressEvent) => void) | undefined;
  /** Passed to the summarizer to receive the summary text as it streams. */
  onText?: ((text: string) => void) | undefined;
  /** {@link autoCompactIfNeeded} and {@link Compactor.maybeAutoCompact} only: who makes the request (see {@link QuerySource}). */
  querySource?: QuerySource | undefined;
  /** {@link autoCompactIfNeeded} and {@link Compactor.maybeAutoCompact} only: tokens already freed by snipping this turn. */
  snipTokensFreed?: number | undefined;
  /**
   * {@link autoCompactIfNeeded}, {@link reactiveCompact} and the {@link Compactor} (both
   * `maybeAutoCompact` and `compact`, where the call's own `retryBaseMs` wins): first backoff
   * delay of transient retries, ms (not negative; default 1,000; each backoff at most 32,000).
   */
  retryBaseMs?: number | undefined;
  /**
   * Time limit of each callback of a compaction, ms: the summary request (after it the
   * compaction fails with `TIMEOUT`), `readFile` (the file is not restored) and each hook
   * (reported in `hookErrors`). It also bounds the waits before transient retries: a wait
   * that would take them together past it fails the compaction at once with `TIMEOUT`
   * (a server's `retryAfterMs` above 64,000 fails it at once with `SUMMARIZER_FAILED`,
   * whatever the limit). Default 600,000 (10 minutes); 0 for no limit; at most
   * 2,147,483,647 (the longest JavaScript timer), else `INVALID_ARGUMENT`.
   */
  summaryTimeoutMs?: number | undefined;
  /**
   * Content that must survive every compaction verbatim and exactly once: strings become user
   * messages, message objects are kept as given (the same objects), after the summary. A message
   * holding one half of a tool pair (a `tool_use`, or its `tool_result`) that is in the
   * conversation is kept where it is, with its other half (in `messagesToKeep`); one whose
   * other half is nowhere is added with that call or result rewritten as text.
   */
  pinned?: ReadonlyArray<string | MessageInput> | undefined;
  /**
   * Keep the latest user request verbatim after the summary on every path that compacts with
   * this context (automatic, reactive, session memory), as {@link CompactOptions.keepLastUserMessage}
   * does for one call.
   */
  keepLastUserMessage?: boolean | undefined;
  /**
   * Summarize a conversation too long for the summarizer's window in parts instead of
   * dropping its oldest rounds (SPEC §8, the default): the oldest part first, then each later
   * part with the summary so far in front, so every round is summarized. The window is
   * `config.summaryContextWindow` (else the summary model's own), or learnt from a
   * prompt-too-long answer; parts end between API turns (a tool call and its result stay
   * together). Dropping rounds stays only for one turn too long on its own. Default `false`.
   */
  summarizeInParts?: boolean | undefined;
  /** {@link ShapeOptions.shape}. */
  shape?: ShapeName | undefined;
  /** {@link TokenCounter}: your tokenizer instead of the character estimate. */
  tokenCounter?: TokenCounter | undefined;
  /**
   * The system prompt every request sends ({@link Preamble.system}): counted (by automatic
   * compaction and a {@link Compactor}) while no response's usage anchors the count.
   */
  system?: Preamble['system'] | undefined;
  /**
   * The tool definitions every request sends ({@link Preamble.tools}; `tools` here names the
   * discovered tools), counted like {@link CompactContext.system}.
   */
  toolDefinitions?: Preamble['tools'] | undefined;
  /**
   * The line an earlier compaction learned ({@link CompactionResult.calibration}), given back
   * to a stateless call whose messages no longer hold the usage it was learned from (API
   * messages after a compaction): where no usage anchors the count, the automatic decision
   * uses it, and where the messages' own usage teaches no line, the size checks and
   * `truePostCompactTokenCount` do; the result reports it again. `ratio` at least 0.25.
   * Not an option of a {@link Compactor}, which keeps its own.
   */
  calibration?: CountCalibration | null | undefined;
}

/** Options of {@link compactConversation}. */
export interface CompactOptions {
  /** Ask the model to carry on without asking questions (implied by `isAutoCompact`). */
  suppressFollowUpQuestions?: boolean | undefined;
  /** Extra summary instructions (`/compact <instructions>`); they go into the request only. */
  customInstructions?: string | undefined;
  /** Automatic compaction (trigger `auto`) rather than manual. */
  isAutoCompact?: boolean | undefined;
  /** Passed through to the PreCompact hooks. */
  recompactionInfo?: RecompactionInfo | undefined;
  /** First backoff delay of transient retries, ms. Default 1,000. */
  retryBaseMs?: number | undefined;
  /**
   * Append to the summary a short deterministic list of what its {@link LossReport} names
   * (files, user messages, errors it does not mention), so nothing is silently dropped.
   */
  appendMissing?: boolean | undefined;
  /** Keep the latest user request verbatim after the summary (in `messagesToKeep`). */
  keepLastUserMessage?: boolean | undefined;
  /** {@link ShapeOptions.shape}. */
  shape?: ShapeName | undefined;
}

// ============================================================================================
// Results (SPEC §6, §7, §13)
// ============================================================================================

/** The summary message: an API user message, or the transcript summary line. */
export type SummaryMessage = ApiUserTextMessage | CompactSummaryLine;

/** A restoration or announcement after compaction: an API user message, or an attachment line. */
export type AttachmentMessage = ApiUserTextMessage | TranscriptAttachmentLine;

/** A SessionStart hook's text: an API user message, or a `user` line with `isMeta: true`. */
export type HookResultMessage = ApiUserTextMessage | TranscriptUserLine;

/** A file restored after compaction. */
export interface RestoredFile {
  path: string;
  /** Same as `path`. */
  name: string;
  /** Tokens it takes. */
  tokens: number;
  /** Whether it was cut to fit (head kept). */
  truncated: boolean;
}

/** A skill restored after compaction. */
export interface RestoredSkill {
  name: string;
  tokens: number;
  truncated: boolean;
}

/**
 * A hook that threw, or whose answer had something that could not be used (a field of the
 * wrong type, one the hook does not read, a misspelt one, a getter that threw): reported, and
 * the compaction went on with the rest of the answer.
 */
export interface HookError {
  hook: 'preCompact' | 'sessionStart' | 'postCompact';
  /** What it threw, or which field of its answer was not used and why. */
  message: string;
}

/**
 * What the compacted part of the conversation had that the summary does not mention
 * (computed before any `appendMissing`).
 */
export interface LossReport {
  /** Paths of files read, written or edited that the summary does not name. */
  files: string[];
  /** Messages the user wrote that the summary does not mention (full text). */
  userMessages: string[];
  /** Errors the summary does not mention, as `source: first telling line`. */
  errors: string[];
}

/** The usage of the summary call. */
export interface CompactionUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
}

/**
 * A successful compaction (SPEC §7). Nothing of yours was changed: apply it with
 * {@link buildPostCompactMessages}.
 *
 * @typeParam M - the type of your messages (`messagesToKeep` are your own objects).
 */
export interface CompactionResult<M = Message> {
  /** The `compact_boundary` system line (always transcript shape). */
  boundaryMarker: CompactBoundaryLine;
  /**
   * The summary message, in the conversation's shape (pinned messages after it). When the
   * compacted context began with the provider's opaque compaction (an OpenAI Responses
   * `{type: 'compaction', encrypted_content}` item), that item, your own object, comes first:
   * no summarizer can read it, and the provider still does. When the kept messages end with
   * a tool call still waiting for its result (in messages, not transcript lines), the
   * attachments and hook messages follow here too, so that the call stays last and the
   * result you append follows it; `attachments` and `hookResults` are then empty.
   */
  summaryMessages: Array<AddedMessage<M, SummaryMessage> | M>;
  /**
   * Restored files and skills, plan, plan mode, agents, tools, MCP instructions (in
   * `summaryMessages` instead when a kept tool call is still waiting for its result).
   * Restored files and skills take no more than the compaction frees.
   */
  attachments: Array<AddedMessage<M, AttachmentMessage>>;
  /** The SessionStart hooks' texts (see `attachments` for a kept pending tool call). */
  hookResults: Array<AddedMessage<M, HookResultMessage>>;
  /**
   * Set when the messages were another ecosystem's: the added messages are in that shape,
   * and {@link buildPostCompactMessages} leaves the boundary line out (it stays here, in
   * `boundaryMarker`) and puts the conversation's leading system messages first.
   */
  messageShape?: MessageShape;
  /**
   * Your messages kept verbatim (session-memory compaction, `keepLastUserMessage`, pinned tool
   * pairs, a trailing turn whose tool calls still wait for their results (with an AI SDK
   * `tool-approval-response` after it, or paused by the API: a `server_tool_use` without its
   * result, or waiting for the client tools its code called: from the turn holding that
   * `server_tool_use`), and the system
   * messages that open the conversation, which {@link buildPostCompactMessages} puts before
   * the summary), else empty.
   */
  messagesToKeep: M[];
  /** The hooks' messages for the user, when any. */
  userDisplayMessage?: string;
  /** Context size before, in tokens. */
  preCompactTokenCount: number;
  /** What the summary call consumed (its input + output), in tokens. */
  postCompactTokenCount: number;
  /** Estimated size of the new context, in tokens. */
  truePostCompactTokenCount: number;
  /**
   * What the usage seen teaches (system prompt and tools, tokens per estimated token), or
   * `null`: `truePostCompactTokenCount` is this line at the compacted context's estimate.
   * Pass it as `tokenCountWithEstimation(messages, {calibration})`, `shouldAutoCompact(messages,
   * model, {calibration})` or `context.calibration` to count the compacted conversation on its
   * own (its messages no longer show the usage it was learned from).
   */
  calibration: CountCalibration | null;
  /** The usage the summarizer reported, `null` when it reported none (or no model call). */
  compactionUsage: CompactionUsage | null;
  /** The summary text (without the `<analysis>` part). */
  summary: string;
  trigger: CompactTrigger;
  restoredFiles: RestoredFile[];
  restoredSkills: RestoredSkill[];
  /** Hooks that threw, and the fields of hook answers that could not be used. */
  hookErrors: HookError[];
  /**
   * Prompt-too-long retries of the summary request (at most 3 when dropping rounds; with
   * `summarizeInParts`, each refusal that made the parts smaller counts too).
   */
  ptlRetries: number;
  /**
   * Summary calls whose answers made the summary: 1, more when the conversation was
   * summarized in parts (`context.summarizeInParts`), 0 when no model was called.
   */
  summaryParts: number;
  /** Transient-failure retries of the summary request. */
  transientRetries: number;
  /** Whether the session memory was the summary (no model call). */
  fromSessionMemory: boolean;
  /** What the summary does not mention of the part it replaces. */
  lossReport: LossReport;
}

/** The conversation after a compaction, as {@link buildPostCompactMessages} gives it. */
export type PostCompactMessage<M = Message> = AddedMessage<
  M,
  CompactBoundaryLine | SummaryMessage | M | AttachmentMessage | HookResultMessage
>;

/** Why an automatic compaction was not attempted. */
export type AutoCompactSkipReason =
  /** `disableCompact`, `disableAutoCompact` or `autoCompactEnabled: false`. */
  | 'disabled'
  /** 3 failures in a row: the circuit breaker is open. */
  | 'circuitBreakerOpen'
  /** The context is below the auto-compact threshold. */
  | 'belowThreshold'
  /** The request is the compaction's own (`compact`, `session_memory`), or context collapse's. */
  | 'querySource'
  /** Reactive-only mode. */
  | 'reactiveOnly'
  /** Context-collapse mode. */
  | 'contextCollapse'
  /** ({@link Compactor} only) a compaction is already running. */
  | 'compacting'
  /** ({@link Compactor} only) paused after three rapid refills in a row (`error.code` `THRASHING`); the pause does not hold at the blocking limit. */
  | 'thrashing'
  /**
   * No response reported usage since the last compaction, and what every request sends besides
   * the messages (the overhead learned from the usage seen before it, `calibration.overhead`)
   * is itself at or above the threshold: compacting again could not bring the context below it.
   * The next response's usage decides again.
   */
  | 'overheadAboveThreshold';

/** What {@link Compactor.maybeAutoCompact} resolves to: the outcome, and what the summary written ahead did. */
export type CompactorAutoCompactOutcome<M = Message> = AutoCompactOutcome<M> & {
  /** The summary written ahead was swapped in (no model call). */
  preemptive?: boolean;
  /**
   * The summary written ahead was stale at the threshold (the messages since its cut would
   * have put the context over the bound): it was brought up to date with one model call on
   * what came after its cut (its summary in front), and swapped in keeping the latest turn —
   * instead of summarizing the whole conversation again. The conversation waited for that
   * call.
   */
  caughtUp?: boolean;
  /**
   * It was swapped in one check before the threshold: the next turn, as large as the
   * largest seen (`background.headroom`), could have put the swap over the 1.3× bound, when
   * the conversation would have waited for a synchronous summary instead.
   */
  swappedEarly?: boolean;
  /** The last background summary failed with this (today's path ran). */
  backgroundError?: ContextCompactionError;
};

/**
 * What {@link autoCompactIfNeeded} and {@link Compactor.maybeAutoCompact} resolve with: a
 * compaction, a failure (reported, never thrown), or why nothing was attempted.
 */
export type AutoCompactOutcome<M = Message> =
  | {
      wasCompacted: true;
      compactionResult: CompactionResult<M>;
      /** Reset to 0. */
      consecutiveFailures: number;
      error?: undefined;
      skipped?: undefined;
    }
  | {
      wasCompacted: false;
      compactionResult?: undefined;
      /** One more than before: keep it in your {@link Tracking}. */
      consecutiveFailures: number;
      error: ContextCompactionError;
      skipped?: undefined;
    }
  | {
      wasCompacted: false;
      compactionResult?: undefined;
      consecutiveFailures: number;
      error?: undefined;
      skipped: AutoCompactSkipReason;
    };

/**
 * State you keep across turns for {@link autoCompactIfNeeded} and {@link reactiveCompact}. Pass
 * back the outcome you got (its other keys are ignored); a key that misspells one of these
 * throws `INVALID_ARGUMENT`.
 */
export interface Tracking {
  /** Failed auto-compactions in a row (3 opens the circuit breaker). */
  consecutiveFailures?: number;
  /** Your turn id: reactive compaction runs at most once per turn. */
  turnId?: string | number;
  /** Same as `turnId`. */
  turnCounter?: string | number;
  /** The turn in which reactive compaction last ran (from the previous result). */
  reactiveTurnId?: string | number;
}

/** The tracking state after {@link reactiveCompact}: pass it to the next call. */
export interface TrackingState {
  consecutiveFailures: number;
  turnId?: string;
  reactiveTurnId?: string;
}

/** What {@link reactiveCompact} resolves with. */
export interface ReactiveCompactResult<M = Message> {
  compactionResult: CompactionResult<M>;
  tracking: TrackingState;
}

// ============================================================================================
// Constants
// ============================================================================================

/** The library's constants (SPEC §4, §8, §9, §10), with their values as literal types. */
export interface Constants {
  readonly AUTOCOMPACT_BUFFER_TOKENS: 13000;
  readonly WARNING_THRESHOLD_BUFFER_TOKENS: 20000;
  readonly ERROR_THRESHOLD_BUFFER_TOKENS: 20000;
  readonly MANUAL_COMPACT_BUFFER_TOKENS: 3000;
  readonly MAX_OUTPUT_TOKENS_FOR_SUMMARY: 20000;
  readonly DEFAULT_CONTEXT_WINDOW: 200000;
  readonly ONE_MILLION_CONTEXT_WINDOW: 1000000;
  readonly DEFAULT_MAX_OUTPUT_TOKENS: 32000;
  readonly MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES: 3;
  readonly MAX_PTL_RETRIES: 3;
  readonly POST_COMPACT_MAX_FILES_TO_RESTORE: 5;
  readonly POST_COMPACT_MAX_TOKENS_PER_FILE: 5000;
  readonly POST_COMPACT_TOKEN_BUDGET: 50000;
  readonly POST_COMPACT_MAX_TOKENS_PER_SKILL: 5000;
  readonly POST_COMPACT_SKILLS_TOKEN_BUDGET: 25000;
  readonly IMAGE_TOKENS: 2000;
  readonly MICROCOMPACT_KEEP_RECENT: 5;
  readonly MICROCOMPACT_IDLE_MINUTES: 60;
  readonly CLEARED_TOOL_RESULT_PLACEHOLDER: '[Old tool result content cleared]';
  readonly PTL_MARKER_TEXT: "[Earlier turns of this conversation were left out so that the request fits the model's context window.]";
}

/**
 * The library's constants, frozen.
 *
 * @example
 * constants.AUTOCOMPACT_BUFFER_TOKENS; // 13000
 */
export declare const constants: Constants;

/** The same values as {@link constants}, as a new plain object. */
export declare function getConstants(): Constants;

// ============================================================================================
// Initialisation
// ============================================================================================

/**
 * A compiled `WebAssembly.Module` where the environment's types declare one (DOM lib);
 * `never` elsewhere (Node without the DOM lib has no WebAssembly types).
 */
export type WasmModule = typeof globalThis extends { WebAssembly: { Module: { prototype: infer M } } } ? M : never;

/** The bytes of the `.wasm` (a `BufferSource`). */
export type WasmBytes = ArrayBuffer | ArrayBufferView;

/** What {@link init} can load the `.wasm` from: a URL, a request or response, bytes, a module. */
export type InitInput = string | URL | Request | Response | WasmBytes | WasmModule;

/**
 * Loads the WebAssembly module. Browser/bundler entry: call it once, before anything else
 * (it fetches `context_compaction_bg.wasm` next to the glue, or from what you pass). Node
 * entry: already initialised at import; this is a no-op kept for isomorphic code.
 *
 * @example
 * import init, { tokenCountWithEstimation } from 'context-compaction';
 * await init();
 */
export default function init(
  moduleOrPath?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>,
): Promise<void>;

/**
 * Browser/bundler entry: initialises synchronously from the module's bytes or a compiled
 * `WebAssembly.Module`. The entries that instantiate the module at import (Node, `/inline`,
 * Workers) export it too, as a no-op, so that isomorphic code links everywhere.
 * @throws {ContextCompactionError} `NOT_INITIALIZED` (the engine's error as `cause`) for bytes
 * that are not this module, or an engine that compiles no WebAssembly here.
 */
export declare function initSync(module: { module: WasmBytes | WasmModule } | WasmBytes | WasmModule): void;

/**
 * Loads the package's second WebAssembly module now. It holds {@link offlineSummarizer},
 * {@link previewCompaction} and {@link simulateSession}, and loads by itself on their first use,
 * so a page that never calls them never downloads it; call this to load it ahead (say, when a
 * settings panel opens), or to say where it is. Browser/bundler entry: fetches
 * `context_compaction_extra.js` and `context_compaction_extra_bg.wasm` next to the package
 * (or the `.wasm` from what you pass); Node and Workers: read or instantiated at once. A
 * failure is a coded `NOT_INITIALIZED` error with the cause, and the next call tries again.
 *
 * @example
 * await loadExtras({ module_or_path: '/assets/context_compaction_extra_bg.wasm' });
 */
export declare function loadExtras(
  moduleOrPath?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>,
): Promise<void>;

/**
 * Sets the defaults that explicit `config` objects override, from environment variables
 * (`DISABLE_COMPACT`, `DISABLE_AUTO_COMPACT`, `CLAUDE_AUTOCOMPACT_PCT_OVERRIDE`,
 * `CLAUDE_CODE_AUTO_COMPACT_WINDOW`). The Node entry calls it with `process.env` at import;
 * call it again from Deno, tests, or a browser settings page.
 *
 * @example
 * setEnvironmentDefaults({ DISABLE_AUTO_COMPACT: '1' });
 */
export declare function setEnvironmentDefaults(env?: EnvironmentDefaults | null): void;

// ============================================================================================
// Token accounting and thresholds (SPEC §3, §4, §5)
// ============================================================================================

/**
 * `text.length / bytesPerToken`, rounded (UTF-16 code units, read without copying the string).
 *
 * @param bytesPerToken - default 4 (use 2 for JSON).
 * @example
 * roughTokenCountEstimation('hello world'); // 3
 */
export declare function roughTokenCountEstimation(text: string, bytesPerToken?: number | null): number;

/**
 * The context size in tokens: the `usage` of the latest assistant response (counted once per
 * `message.id`) plus an estimate of everything after it; with no usage, all estimated.
 *
 * @example
 * const used = tokenCountWithEstimation(parseTranscript(jsonl));
 */
export declare function tokenCountWithEstimation<M extends MessageInput>(
  messages: readonly M[],
  options?: TokenCountOptions | null,
): number;

/** Options of {@link tokenCountWithEstimation}. */
export interface TokenCountOptions extends CountInputs {
  /** With `model`, a usage more than twice the model's window throws `INVALID_TOKEN_COUNT` (bogus, e.g. added up across turns). */
  model?: ModelId | undefined;
  /** The model's configuration (its window). */
  config?: Config | null | undefined;
}

/**
 * What the counting functions take besides the messages ({@link TokenCountOptions},
 * {@link ShouldAutoCompactOptions}): usage the messages do not carry, what the request sends
 * besides them, their shape, a tokenizer, and the line a compaction learned.
 */
export interface CountInputs {
  /** {@link GivenUsage.usage}: what the provider reported for the last response, for messages that carry no usage. */
  usage?: GivenUsage['usage'] | undefined;
  /** {@link GivenUsage.usageAt}. */
  usageAt?: number | undefined;
  /** {@link Preamble.system}. */
  system?: Preamble['system'] | undefined;
  /** {@link Preamble.tools}. */
  tools?: Preamble['tools'] | undefined;
  /** {@link ShapeOptions.shape}. */
  shape?: ShapeName | undefined;
  /** {@link TokenCounter}: your tokenizer instead of the character estimate. */
  tokenCounter?: TokenCounter | undefined;
  /**
   * What a {@link Compactor} learned from the usage it saw ({@link Compactor.calibration}), or
   * a compaction result's {@link CompactionResult.calibration}: where no usage anchors the
   * count, the count is `overhead + ratio × estimate` (the system prompt and tools included,
   * so `system`/`tools` are then not added). Without it, the line is learned from the usage
   * before the latest compaction boundary, when the messages still hold it (a transcript).
   * `ratio` at least 0.25.
   */
  calibration?: CountCalibration | null | undefined;
}

/**
 * What a request sends besides the messages, which the messages never show: counted where no
 * usage anchors the count (usage already includes them) — in a coding agent often 20–30K
 * tokens of the first request.
 *
 * @example
 * tokenCountWithEstimation(messages, { system, tools });          // Anthropic / AI SDK
 * shouldAutoCompact(input, 'gpt-5', { system: instructions, tools }); // OpenAI Responses
 */
export interface Preamble {
  /** The system prompt: a string, or text blocks / parts (`{type: 'text', text}`). */
  system?: string | ReadonlyArray<string | { readonly type?: string | undefined; readonly text?: string | undefined }> | null | undefined;
  /**
   * The tool definitions as you send them (Anthropic's or OpenAI's array, the AI SDK's record, LangChain
   * tools), measured as JSON; a schema object (zod 3 or 4, or any Standard JSON Schema) as the JSON
   * Schema the SDKs send for it, an AI SDK tool's `outputSchema` (not sent) left out.
   * A tool marked `defer_loading: true` is left out: the model sees it only once a tool search loads it.
   */
  tools?: unknown;
}

/**
 * Usage you give for messages that carry none (AI SDK, OpenAI Chat Completions and Responses
 * messages): it anchors the count like the usage an Anthropic message carries, unless a later
 * message carries its own.
 *
 * @example
 * const { usage } = await generateText({ model, messages });   // AI SDK
 * shouldAutoCompact(messages, 'gpt-5', { usage });
 */
export interface GivenUsage {
  /**
   * Token counts in any ecosystem's names: `input_tokens` (Anthropic, OpenAI Responses,
   * LangChain), `inputTokens` (AI SDK `LanguageModelUsage`) or `prompt_tokens` (Chat
   * Completions); `output_tokens` / `outputTokens` / `completion_tokens`; Anthropic's
   * `cache_creation_input_tokens` and `cache_read_input_tokens` are added to the input.
   */
  usage: {
    input_tokens?: number | null | undefined;
    inputTokens?: number | null | undefined;
    prompt_tokens?: number | null | undefined;
    output_tokens?: number | null | undefined;
    outputTokens?: number | null | undefined;
    completion_tokens?: number | null | undefined;
    cache_creation_input_tokens?: number | null | undefined;
    cache_read_input_tokens?: number | null | undefined;
  };
  /** Index of the message of the response it belongs to. Default: the last assistant message. */
  usageAt?: number | undefined;
}

/**
 * The model's context window: `config.contextWindow` wins; 1,000,000 with `[1m]` or
 * `enable1mContext`; the model table (200,000 for Claude; e.g. 400,000 for GPT-5, 1,047,576
 * for GPT-4.1, 128,000 for GPT-4o, 200,000 for o3/o4-mini, 1,048,576 for Gemini 2.5 and 3);
 * else the default 200,000 ({@link TokenWarningState.contextWindowSource} says which).
 *
 * @example
 * getContextWindowForModel('openai/gpt-4.1'); // 1047576
 */
export declare function getContextWindowForModel(model: ModelId, config?: Config | null): number;

/** The model's default max output tokens; `config.maxOutputTokens` wins (capped at the upper limit). */
export declare function getMaxOutputTokensForModel(model: ModelId, config?: Config | null): number;

/**
 * `{default, upperLimit}` max output tokens from the model table (unknown: 32,000 / 32,000;
 * OpenAI and Gemini models: their maximum for both, e.g. 128,000 for GPT-5, 65,536 for
 * Gemini 2.5).
 *
 * @example
 * getModelOutputLimits('claude-opus-4-6'); // { default: 64000, upperLimit: 128000 }
 */
export declare function getModelOutputLimits(model: ModelId): ModelOutputLimits;

/**
 * `min(window, autoCompactWindow) − min(maxOutputTokens, 20,000)`, and never more than the
 * model's input limit (GPT-5: 272,000 input tokens of its 400,000-token window).
 */
export declare function getEffectiveContextWindowSize(model: ModelId, config?: Config | null): number;

/** Effective window − 13,000; `autoCompactPctOverride` can only lower it. */
export declare function getAutoCompactThreshold(model: ModelId, config?: Config | null): number;

/**
 * Where `tokenUsage` stands against the model's thresholds.
 *
 * @example
 * const { percentLeft, isAboveWarningThreshold } = calculateTokenWarningState(150_000, 'claude-sonnet-4-5');
 */
export declare function calculateTokenWarningState(
  tokenUsage: number,
  model: ModelId,
  config?: Config | null,
): TokenWarningState;

/** `false` with `disableCompact` or `disableAutoCompact`, else `autoCompactEnabled` (default `true`). */
export declare function isAutoCompactEnabled(config?: Config | null): boolean;

/**
 * Whether to compact automatically now: every guard (no recursion from the compaction's own
 * requests, reactive-only and context-collapse modes, enablement), then the count against the
 * threshold.
 *
 * @example
 * if (shouldAutoCompact(messages, 'claude-opus-4-6', { querySource: 'repl_main_thread' })) { … }
 */
export declare function shouldAutoCompact<M extends MessageInput>(
  messages: readonly M[],
  model: ModelId,
  options?: ShouldAutoCompactOptions | null,
): boolean;

// ============================================================================================
// Message transformations (SPEC §2, §7, §8, §10)
// ============================================================================================

/**
 * A new array where user messages' `image` / `document` blocks (also inside tool results)
 * become `[image]` / `[document]` text; messages without media are the same objects.
 */
export declare function stripImagesFromMessages<M extends MessageInput>(messages: readonly M[], options?: ShapeOptions | null): M[];

/** A new array without `skill_discovery` / `skill_listing` attachment lines. */
export declare function stripReinjectedAttachments<M extends MessageInput>(messages: readonly M[], options?: ShapeOptions | null): M[];

/**
 * Your messages grouped by API round (an assistant response and what follows it). A
 * `server_tool_use` whose result comes in a later response (its code called client tools:
 * programmatic tool calling) is in one group with that response.
 */
export declare function groupMessagesByApiRound<M extends MessageInput>(messages: readonly M[], options?: ShapeOptions | null): M[][];

/**
 * Recognises a context-overflow error (Anthropic, OpenAI, Gemini, HTTP 413) in a string, an
 * `Error`, an API error body or an SDK error (`status`, `message`, `error`, `body` are read),
 * also when another error wraps it (`cause`, an `AggregateError`'s `errors`; four levels deep).
 *
 * @returns `null` when it is not an overflow error.
 * @example
 * parseContextOverflowError('prompt is too long: 213462 tokens > 200000 maximum');
 * // { kind: 'prompt_too_long', actual: 213462, limit: 200000, gap: 13462 }
 */
export declare function parseContextOverflowError(error: unknown, status?: number | null): ContextOverflow | null;

/**
 * Drops the oldest API rounds to cover the gap the error names (20% of the rounds when it
 * names none), keeping at least one; a user marker message is put first when the rest would
 * start with an assistant message.
 *
 * @param error - the API's error (as for {@link parseContextOverflowError}), or nothing.
 * @returns the shortened conversation, or `null` when nothing can be dropped.
 */
export declare function truncateHeadForPTLRetry<M extends MessageInput>(
  messages: readonly M[],
  error?: unknown,
  options?: TruncateHeadOptions | null,
): Array<M | ApiUserTextMessage | TranscriptUserLine> | null;

/** Options of {@link truncateHeadForPTLRetry}. */
export interface TruncateHeadOptions {
  /** When its round goes, the latest user request stays at the head (as the pipeline's summary request does). */
  keepLatestRequest?: boolean | undefined;
  /** {@link ShapeOptions.shape}. */
  shape?: ShapeName | undefined;
  /**
   * {@link TokenCounter}: the rounds are measured with your tokenizer, so the gap the error
   * names (in the API's real tokens) is covered in tokens close to them.
   */
  tokenCounter?: TokenCounter | undefined;
}

/**
 * Clears old, large results of compactable tools (`[Old tool result content cleared]`),
 * keeping the most recent `keepRecent`; the structure stays valid. Byte-identical output for
 * identical input; the input is never mutated.
 *
 * @example
 * const { messages: lighter, tokensFreed, clearedToolUseIds } = microCompact(messages, { keepRecent: 5 });
 */
export declare function microCompact<M extends MessageInput>(
  messages: readonly M[],
  options?: MicroCompactOptions | null,
): MicroCompactResult<M>;

/**
 * The `compact_boundary` system line, keys in Claude Code's order.
 *
 * @example
 * const line = createCompactBoundaryMessage('manual', 170_251, { lastUuid: last.uuid });
 */
export declare function createCompactBoundaryMessage(
  trigger: CompactTrigger,
  preTokens: number,
  options?: CompactBoundaryOptions | null,
): CompactBoundaryLine;

/**
 * The conversation after a compaction: boundary marker, summary messages, kept messages,
 * attachments, hook results — in that order, nothing else, except that the kept system messages
 * that open the conversation (the app's instructions) come before the summary. For another ecosystem's messages
 * (`result.messageShape` set) there is no boundary line, and the conversation's leading system
 * messages come first: every message is of your type.
 *
 * @example
 * messages = buildPostCompactMessages(await compactConversation(messages, context));
 */
export declare function buildPostCompactMessages<M>(
  result: Pick<CompactionResult<M>, 'boundaryMarker' | 'summaryMessages'> &
    Partial<Pick<CompactionResult<M>, 'messagesToKeep' | 'attachments' | 'hookResults' | 'messageShape'>>,
): Array<PostCompactMessage<M>>;

/**
 * What is sent to the Messages API: `{role, content}` messages after the last compaction
 * boundary; non-API and sub-agent lines left out; split responses and consecutive messages of
 * one role merged; attachments as user text. A user message made of Claude Code lines (each
 * tool result a line of its own among hook outputs, attachments and interruption texts) sends
 * its `tool_result` blocks first, as the API requires; API messages keep their order. Claude
 * Code lines are read as the conversation
 * Claude Code resumes: when the file holds several branches (a rewind or resume wrote turns
 * again under another parent), the `parentUuid` chain from the latest leaf (with the results of
 * its parallel calls); a broken chain is read in file order. A sub-agent's own file (every turn
 * `isSidechain: true`) is read as its own conversation. A message with empty content is left
 * out, and a lone UTF-16 surrogate (text cut inside a surrogate pair, which the API refuses as
 * invalid JSON) is written as U+FFFD, as `String.prototype.toWellFormed` writes it, in text,
 * tool inputs (keys too) and tool results alike; nothing else changes.
 */
export declare function toApiMessages<M extends MessageInput>(messages: readonly M[], options?: ShapeOptions | null): Array<ApiViewOf<M>>;

/**
 * Checks the invariants the Messages API enforces (user first, tool pairs, no empty content
 * or empty text block, no image or document whose source the API refuses — base64 `data`
 * empty, not a string or a whole data URL, no `media_type`, a `url` source without its URL, a
 * `file` source without its `file_id`, also inside a tool result — no tool call id used twice, the `tool_result` blocks answering an
 * assistant message's calls first in the next message, before any other block: a user message
 * placed between a call and its result is reported, in every shape) on the API view of
 * `messages`. A
 * `server_tool_use` without its result in its message is valid only in the last message (a
 * turn the API paused with `stop_reason: "pause_turn"`, continued by sending it back), or when
 * its code called client tools (programmatic tool calling: a `tool_use` of the same message
 * whose `caller.tool_id` names it): its result then comes in the assistant message after their
 * `tool_result`s. A server tool result that answers no `server_tool_use` of its message or an
 * earlier one is reported. With `shape: 'anthropic'` declared, so is each of your messages
 * with empty content (`''` or `[]`) other than a final assistant message (an empty prefill):
 * the API refuses the array sent as it is, while {@link toApiMessages} leaves such a message
 * out (the problem names it, `messages[k]`, and is placed at the view message before it).
 * Without it, such a message also fits OpenAI Chat and the AI SDK, where it is valid: only
 * the view is checked. And so is each of your
 * Anthropic messages holding a lone UTF-16 surrogate (a string, or a key, cut inside a
 * surrogate pair): `JSON.stringify` writes it as an unpaired `\ud83d` escape, a request body
 * the API refuses; {@link toApiMessages} writes U+FFFD in its place.
 */
export declare function validateForApi<M extends MessageInput>(messages: readonly M[], options?: ShapeOptions | null): ApiValidation;

/**
 * The `context_management` request parameter for the API's server-side context editing, or
 * `null` when no edit applies.
 *
 * @example
 * const cm = buildApiContextManagement({ clearThinking: true, clearToolUses: true, idleMinutes: 75 });
 */
export declare function buildApiContextManagement(options?: ContextManagementOptions | null): ApiContextManagement | null;

/**
 * Applies what a Messages API response reports about the API's compaction (the
 * `compact_20260112` edit) to the Anthropic messages the request was sent with: the response
 * is appended as an assistant message (the block kept byte for byte, first in it), a pause is
 * continued from the latest user request, and `usage.iterations` are summed in `billedUsage`.
 * Counting ({@link tokenCountWithEstimation}) then starts at the block. Claude Code lines and
 * other ecosystems' messages are `UNSUPPORTED_SHAPE`; a response that is not a Messages API
 * body (or has a compaction block that is not first) is `INVALID_ARGUMENT`.
 *
 * @example
 * const response = await client.beta.messages.create({ model, max_tokens, messages,
 *   context_management: buildApiContextManagement({ compact: true, pauseAfterCompaction: true }),
 *   betas: ['compact-2026-01-12'] });
 * const applied = applyApiCompaction(messages, response);
 * messages = applied.messages;
 * if (applied.paused) { /* send the next request: the task goes on after the block *\/ }
 */
export declare function applyApiCompaction<M extends MessageInput, R extends ApiCompactionResponse = ApiCompactionResponse>(
  messages: readonly M[],
  response: R,
  options?: ApplyApiCompactionOptions | null,
): ApiCompactionApplied<M, R>;

// ============================================================================================
// Transcripts (SPEC §17)
// ============================================================================================

/**
 * The lines of a Claude Code session file, in order, unknown line types included. A blank or
 * malformed line throws `MALFORMED_TRANSCRIPT` naming its line number. Each line object keeps
 * (hidden, not enumerable) the text it was read from, so that {@link serializeTranscript}
 * writes it back as read while its value is unchanged.
 *
 * @example
 * const lines = parseTranscript(await readFile('session.jsonl', 'utf8'));
 */
export declare function parseTranscript(jsonl: string): TranscriptLine[];

/**
 * JSONL text, one line per message, each ending in a newline. A parsed transcript comes back
 * byte for byte: a line whose value did not change is written as it was read (spacing, number
 * spellings such as big integers or `1e400`, escapes, a `\r\n` ending, a leading byte-order
 * mark); a changed line is written by `JSON.stringify`, the numbers it still holds where they
 * were spelled as they were read.
 */
export declare function serializeTranscript<M extends MessageInput>(messages: readonly M[]): string;

// ============================================================================================
// The simulator (docs/simulate.md)
// ============================================================================================

/** Names of the built-in policies of {@link simulateSession}. */
export type SimulationPolicyName =
  | 'recorded'
  | 'claude-code'
  | 'batched-clearing'
  | 'pre-emptive'
  | 'api-clear-tool-uses'
  | 'api-compaction'
  | 'recommended';

/** When the client summarizes, in a {@link SimulationPolicy}. */
export interface SimulationCompactRule {
  /** Context size (tokens) at which it compacts; absent: the model's auto-compact threshold. */
  threshold?: number | undefined;
  /** Summaries written in the background from the early line on, refreshed when stale, swapped in at the threshold (or a check early) with every line since their cut kept, by the library's own rules: only when the context left is within 1.3× the synchronous path's, else the synchronous path runs and the conversation waits. */
  preEmptive?: boolean | undefined;
  /** The early line (tokens); absent: the library's automatic line (halfway between the warning line and the threshold, moved down for large turns, never below the warning line). */
  earlyAt?: number | undefined;
  /** Also compact when the cached prefix has expired and the context is at least this large. */
  whenCacheColdAbove?: number | undefined;
  /** Token budget of the files restored after a compaction (default 50,000; 0: none). */
  restoreBudget?: number | undefined;
}

/** When the client clears old tool results (SPEC §10's rules), in a {@link SimulationPolicy}. */
export interface SimulationMicroCompactRule {
  /** Most recent compactable results kept (default 5). */
  keepRecent?: number | undefined;
  /** Clear when the previous request is at least this many minutes old. */
  idleMinutes?: number | undefined;
  /** Clear whenever the cached prefix has expired (the rewrite is paid anyway). */
  whenCacheCold?: boolean | undefined;
  /** Clear when the context is at least this large… */
  trigger?: number | undefined;
  /** …and only when that frees at least this many tokens (default 0). */
  clearAtLeast?: number | undefined;
}

/** The API's `clear_tool_uses_20250919` edit, simulated. */
export interface SimulationClearToolUses {
  /** Input tokens from which it applies (default 100,000). */
  trigger?: number | undefined;
  /** Most recent tool uses kept (default 3). */
  keep?: number | undefined;
  /** Skip the edit unless it frees this many tokens (default 0). */
  clearAtLeast?: number | undefined;
  /** Tools whose results are never cleared. */
  excludeTools?: string[] | undefined;
}

/** The API's `compact_20260112` edit, simulated. */
export interface SimulationServerCompact {
  /** Input tokens from which it compacts (default 150,000, at least 50,000). */
  trigger?: number | undefined;
}

/** The Anthropic API's server-side context management, in a {@link SimulationPolicy}. */
export interface SimulationServerRule {
  clearToolUses?: SimulationClearToolUses | undefined;
  compact?: SimulationServerCompact | undefined;
}

/** A policy of {@link simulateSession}: plain data, so you can write your own. */
export interface SimulationPolicy {
  /** Its name in the report. */
  name: string;
  /** One line saying what it does. */
  description?: string | undefined;
  /** Replay the recorded requests as they were (the built-in `recorded` policy). */
  recorded?: boolean | undefined;
  /** Time-to-live of the cache entries its requests write (default `'5m'`). */
  ttl?: '5m' | '1h' | undefined;
  compact?: SimulationCompactRule | undefined;
  microCompact?: SimulationMicroCompactRule | undefined;
  server?: SimulationServerRule | undefined;
}

/** Prices in dollars per million tokens, each from 0 to 1,000,000 (a dollar a token); each replaces the model's list price. An `input` price alone also moves the cache prices (1.25×, 2×, 0.1×). */
export interface SimulationPriceOverrides {
  input?: number | undefined;
  cacheWrite5m?: number | undefined;
  cacheWrite1h?: number | undefined;
  cacheRead?: number | undefined;
  output?: number | undefined;
}

/** Options of {@link simulateSession}. */
export interface SimulateOptions {
  /** Policies to compare, by name or as objects (default: every built-in one). */
  policies?: Array<SimulationPolicyName | SimulationPolicy> | undefined;
  /** Model for prices and thresholds (default: the session's). */
  model?: ModelId | undefined;
  /** Prices overriding the model's list prices. */
  prices?: SimulationPriceOverrides | undefined;
  /** Summary output speed, tokens per second, at least 0.001 (default 50). */
  summaryTokensPerSecond?: number | undefined;
  /** Summary size budget, tokens, 1 to 1,000,000,000,000 (default 4,000). */
  summaryTokens?: number | undefined;
  /** Tokens of the hidden prefix: system prompt, tools, context not written to the transcript, at most 1,000,000,000,000 (default: measured on the first recorded request). */
  hiddenTokens?: number | undefined;
}

/** The prices a simulation used, dollars per million tokens. */
export interface SimulationPrices {
  input: number;
  cacheWrite5m: number;
  cacheWrite1h: number;
  cacheRead: number;
  output: number;
}

/** Tokens by billing class. */
export interface SimulationTokens {
  /** Uncached input (`input_tokens`). */
  input: number;
  /** Cache writes, both time-to-lives (`cache_creation_input_tokens`). */
  cacheWrite: number;
  /** The part of `cacheWrite` made with the 1-hour time-to-live. */
  cacheWrite1h: number;
  /** Cache reads (`cache_read_input_tokens`). */
  cacheRead: number;
  output: number;
}

/** One policy's result on the session. */
export interface SimulationPolicyReport {
  name: string;
  description: string;
  /** Conversation requests (the recorded calls). */
  requests: number;
  /** Summary calls the policy made (pre-emptive ones included: refreshes, and ones dropped unused). */
  summaryCalls: number;
  peakContext: number;
  meanContext: number;
  compactions: number;
  /** Clearings of old tool results (client or provider side). */
  microCompactions: number;
  /** Tokens by billing class, summary calls included. */
  tokens: SimulationTokens;
  /** Dollars at the simulation's prices. */
  cost: number;
  /** Cost relative to `claude-code`'s, when that policy was simulated too. */
  relativeCost: number | null;
  /** Seconds the conversation waited for summaries. */
  blockedSeconds: number;
  /** Compactions the conversation waited for (a summary written at the threshold, by the client or the provider). */
  waits: number;
  /** Pre-emptive summaries swapped in at the threshold (no wait). */
  swaps: number;
  /** Pre-emptive summaries swapped in a check before the threshold, as the library's `Compactor` does when one more turn like the largest seen could put the swap over the bound. */
  earlySwaps: number;
  /** Swap attempts refused: the context the ready summary would leave was over 1.3× the synchronous path's (then, at the threshold, the conversation waits for that path). */
  refusedSwaps: number;
  /** Of the refused swaps at the threshold, those brought up to date and swapped in, as the library's `Compactor` does (`outcome.caughtUp`): one chained call on the summary and what came after its cut, which the conversation waits for (counted in `waits`), keeping the latest turn. */
  caughtUp: number;
  /** Automatic compactions that failed as the library's `Compactor` fails them: the summary and the files it restores would not have been below the threshold (or not smaller than what they replace). Each summary was written, paid for and waited on; nothing was committed. */
  failedCompactions: number;
  /** Why the policy's automatic compaction stopped for the rest of the session, as the `Compactor` stops it: `'circuitBreakerOpen'` (3 failed compactions in a row) or `'thrashing'` (the context refilled to the threshold within 3 requests after each of 3 compactions in a row); `null`: it never stopped. A policy that stopped is never the recommended one (its context outgrows the threshold). */
  paused: 'thrashing' | 'circuitBreakerOpen' | null;
  /** The request (0-based) at which automatic compaction was first due and skipped for `paused`; `null` when it never stopped. */
  pausedAtRequest: number | null;
  /** Files read again: files Claude Code's rules would have restored after a compaction, which this policy did not, read again before the session's next tool call on them. */
  rereads: number;
  /** Tokens of the files read again. */
  rereadTokens: number;
  /** Dollars the re-reads add to `cost` (this cost minus the same replay's without them; can be negative when they move a compaction). */
  rereadCost: number;
  /** Number of items the summaries did not mention. */
  lost: number;
  /** What the summaries did not mention. */
  loss: LossReport;
}

/** Cache reads and writes summed over the recorded calls. */
export interface SimulationCacheTotals {
  cacheRead: number;
  cacheWrite: number;
}

/** A prompt change the agent made at a user prompt, seen in the recorded usage only. */
export interface SimulationClientBreak {
  /** Index of the call. */
  call: number;
  /** Transcript line (0-based) of the last line before the call. */
  line: number;
  /** Tokens the provider read. */
  atTokens: number;
  /** Tokens the cache model would have read. */
  modelRead: number;
}

/** How well the cache model reproduces the recorded usage. */
export interface SimulationCalibration {
  calls: number;
  recorded: SimulationCacheTotals;
  /** The recorded policy's replay, with the agent's prompt changes taken from the usage. */
  simulated: SimulationCacheTotals;
  readErrorPercent: number;
  writeErrorPercent: number;
  /** The same replay from the transcript alone. */
  modelOnly: SimulationCacheTotals;
  modelOnlyReadErrorPercent: number;
  modelOnlyWriteErrorPercent: number;
  clientBreaks: SimulationClientBreak[];
}

/** What {@link simulateSession} reports. */
export interface SimulationReport {
  model: string;
  prices: SimulationPrices;
  summaryTokensPerSecond: number;
  summaryTokens: number;
  /** The auto-compact threshold used (SPEC §4). */
  threshold: number;
  /** Tokens of the hidden prefix. */
  hiddenTokens: number;
  /** Calls replayed. */
  calls: number;
  /** One per policy, in the order asked (`recorded` only for sessions with usage). */
  policies: SimulationPolicyReport[];
  /** Present when the session has recorded usage. */
  calibration: SimulationCalibration | null;
  /** The cheapest policy whose summaries lose nothing. */
  recommended: string | null;
}

/**
 * Replays a recorded session (the JSONL text of a Claude Code session file, or its parsed
 * lines) request by request under compaction policies, through a model of the provider's
 * prompt cache with its time-to-live, and reports per policy the requests, peak and mean
 * context, compactions, tokens by billing class, cost, the time the conversation waited on
 * summaries, and what the summaries lose. Rejects with `INVALID_ARGUMENT` for unknown option
 * keys or policies, `MALFORMED_TRANSCRIPT` for a bad line. Asynchronous: it runs in the
 * package's second WebAssembly module, loaded on first use ({@link loadExtras}).
 *
 * @example
 * const report = await simulateSession(await readFile('session.jsonl', 'utf8'), {
 *   policies: ['claude-code', 'recommended', { name: 'early', compact: { threshold: 100_000 } }],
 * });
 * for (const p of report.policies) console.log(p.name, p.cost.toFixed(2), p.peakContext);
 */
export declare function simulateSession(
  session: string | readonly TranscriptLine[],
  options?: SimulateOptions | null,
): Promise<SimulationReport>;

// ============================================================================================
// The pipeline (SPEC §6, §7, §12, §13)
// ============================================================================================

/**
 * Full compaction (SPEC §7): PreCompact hooks, media stripped, the summary request (with
 * prompt-too-long and transient retries), restoration, SessionStart and PostCompact hooks.
 * Rejects with a {@link ContextCompactionError} (`PROMPT_TOO_LONG`, `SUMMARY_TRUNCATED`,
 * `EMPTY_SUMMARY`, `COMPACTION_NOT_SMALLER`, `SUMMARIZER_FAILED`, `ABORTED`, …); your messages
 * are never changed, and `readFileState` is cleared only on success.
 *
 * @example
 * const result = await compactConversation(messages, {
 *   model: 'claude-opus-4-6',
 *   summarize: anthropicSummarizer({ apiKey }),
 * }, { customInstructions: 'focus on the API' });
 * messages = buildPostCompactMessages(result);
 */
export declare function compactConversation<M extends MessageInput>(
  messages: readonly M[],
  context: CompactContext,
  options?: CompactOptions | null,
): Promise<CompactionResult<M>>;

/**
 * Session-memory compaction (SPEC §12): `context.sessionMemory` becomes the summary and the
 * most recent messages (10K–40K tokens) are kept verbatim; no model call, so `summarize` may
 * be omitted. Rejects with `SESSION_MEMORY_NOT_APPLICABLE` when it does not apply.
 */
export declare function trySessionMemoryCompaction<M extends MessageInput>(
  messages: readonly M[],
  context: Omit<CompactContext, 'summarize'> & { summarize?: Summarizer },
): Promise<CompactionResult<M>>;

/**
 * The auto-compact driver (SPEC §6): guards, the circuit breaker (3 failures in a row),
 * session memory first, then full compaction. A failure is reported in `error`, never thrown.
 *
 * @example
 * let tracking: Tracking = { consecutiveFailures: 0 };
 * const outcome = await autoCompactIfNeeded(messages, context, tracking);
 * tracking = { consecutiveFailures: outcome.consecutiveFailures };
 * if (outcome.wasCompacted) messages = buildPostCompactMessages(outcome.compactionResult);
 */
export declare function autoCompactIfNeeded<M extends MessageInput>(
  messages: readonly M[],
  context: CompactContext,
  tracking?: Tracking | null,
): Promise<AutoCompactOutcome<M>>;

/**
 * Reactive compaction (SPEC §13): after the API rejected a request as too long (or 413, media
 * too large, `max_output_tokens`), compacts once for the turn `tracking.turnId`; a second call
 * for the same turn rejects with `REACTIVE_ALREADY_TRIED`, an unrelated error with
 * `REACTIVE_NOT_APPLICABLE`.
 *
 * @param error - the API's error: a string, an `Error`, an API error body or an SDK error.
 */
export declare function reactiveCompact<M extends MessageInput>(
  messages: readonly M[],
  context: CompactContext,
  error: unknown,
  tracking?: Tracking | null,
): Promise<ReactiveCompactResult<M>>;

// ============================================================================================
// Compactor
// ============================================================================================

/** Options of {@link Compactor}: the `context` of a compaction, plus the initial messages. */
export interface CompactorOptions<M extends MessageInput = Message>
  extends Omit<CompactContext, 'summarize' | 'calibration'> {
  /** Required by `compact()` and by automatic compaction; may be omitted for counting only. */
  summarize?: Summarizer | undefined;
  /** Seeds the history. */
  messages?: readonly M[] | undefined;
  /**
   * Pre-emptive summaries (off by default: they spend summary calls a conversation may never
   * need). On, when the count crosses the early line the summary of the conversation so far
   * is written in the background; at the threshold {@link Compactor.maybeAutoCompact} swaps it
   * in with every message since its cut kept verbatim, with no model call, when the context it
   * leaves is at most 1.3× the synchronous path's (else today's path runs). `true` is
   * `{ earlyLine: 'auto' }`: halfway between the warning line and the threshold.
   */
  preemptive?: boolean | PreemptiveOptions | undefined;
}

/** Options of {@link CompactorOptions.preemptive}. */
export interface PreemptiveOptions {
  /** Tokens from which summaries are written ahead; `'auto'` (default): halfway between the warning line and the threshold. */
  earlyLine?: number | 'auto' | undefined;
}

/** {@link Compactor.background}: the summary written ahead of the threshold. */
export interface BackgroundSummaryState {
  /** `off` (option not set), `idle`, `running` (being written), `ready`. */
  state: 'off' | 'idle' | 'running' | 'ready';
  /** Running or ready: the summary stands for the messages before this index. */
  cut?: number;
  /** The early line in tokens, when on. */
  earlyLine?: number;
  /**
   * When on: the largest growth of the count seen between two `maybeAutoCompact` checks,
   * the turn a ready summary keeps room for (0 before the second check).
   */
  headroom?: number;
  /** The last background summary that failed (never thrown from `push`). */
  error?: ContextCompactionError;
}

/** Options of {@link Compactor.compact}. */
export interface CompactorCompactOptions {
  /** Extra summary instructions (`/compact <instructions>`). */
  customInstructions?: string | undefined;
  suppressFollowUpQuestions?: boolean | undefined;
  /** First backoff delay of transient retries, ms. Default 1,000. */
  retryBaseMs?: number | undefined;
  /** See {@link CompactOptions.appendMissing}. */
  appendMissing?: boolean | undefined;
  /** See {@link CompactOptions.keepLastUserMessage}. */
  keepLastUserMessage?: boolean | undefined;
  /**
   * This call's own AbortSignal, besides the `Compactor`'s `signal`: either aborts it (the
   * summarizer's signal fires, nothing is committed, the promise rejects with `ABORTED`).
   */
  signal?: AbortSignal | undefined;
}

/** Options of {@link Compactor.maybeAutoCompact}. */
export interface CompactorAutoCompactOptions {
  /**
   * Keep the latest user request verbatim after the summary in this call's compaction (the
   * `Compactor`'s own `keepLastUserMessage: true` keeps it in every call).
   */
  keepLastUserMessage?: boolean | undefined;
  /**
   * This call's own AbortSignal, besides the `Compactor`'s `signal`: either aborts it (the
   * summarizer's signal fires, nothing is committed; the outcome's `error.code` is `ABORTED`).
   */
  signal?: AbortSignal | undefined;
}

/**
 * A conversation that keeps its own token count and compacts itself: a turn costs the work
 * of its new messages, not of the whole history. Messages pushed while a compaction runs are
 * kept, in order, after it.
 *
 * @typeParam M - the type of your messages.
 * @example
 * const chat = new Compactor({ model: 'claude-sonnet-4-5', summarize: anthropicSummarizer({ apiKey }) });
 * chat.push({ role: 'user', content: 'hello' });
 * chat.warningState().percentLeft;   // O(1)
 * await chat.maybeAutoCompact();     // compacts when the threshold is crossed
 * await chat.compact({ customInstructions: 'keep the schema' });  // /compact
 */
export declare class Compactor<M extends MessageInput = Message> {
  /** Throws a {@link ContextCompactionError} on bad options or a malformed initial message. */
  constructor(options: CompactorOptions<M>);
  /** Appends one message; throws on a malformed one and then adds nothing. */
  push(message: M): void;
  /** Appends several messages, all or none. */
  pushMany(messages: readonly M[]): void;
  /**
   * The usage the provider reported for the latest response, when its message does not carry
   * it (AI SDK `result.usage`, OpenAI `completion.usage`, any ecosystem's names): the running
   * count is anchored there, as if the message carried it. Throws `INVALID_ARGUMENT` when no
   * response was pushed since the conversation began or was compacted.
   */
  setUsage(usage: GivenUsage['usage']): void;
  /** The conversation: a new array of your objects and the library's compaction messages. */
  readonly messages: Array<PostCompactMessage<M>>;
  /** Number of messages. */
  readonly length: number;
  /** The context size in tokens (as {@link tokenCountWithEstimation}), O(1). */
  tokenCount(): number;
  /** {@link calculateTokenWarningState} for the current size and the model, O(1). */
  warningState(): TokenWarningState;
  /**
   * What the usage seen so far (also before compactions) teaches about the requests' real
   * size, or `null` before the first usage. Where no usage anchors the count, as right after
   * a compaction, {@link Compactor.tokenCount} is `overhead + ratio × (the messages' estimate)`:
   * the first request after a compaction counts the system prompt and tools. Kept in
   * {@link Compactor.snapshot}.
   */
  calibration(): CountCalibration | null;
  /** Failed automatic compactions in a row (0 again after any compaction that succeeds, `compact()` included). */
  readonly tracking: { consecutiveFailures: number; /** Automatic compaction paused after three rapid refills in a row (it still compacts at the blocking limit). */ thrashing: boolean };
  /** Whether a compaction is running. */
  readonly compacting: boolean;
  /**
   * The summary written ahead ({@link CompactorOptions.preemptive}): a new object on each
   * read. Not in {@link Compactor.snapshot}: a restored Compactor starts without one.
   */
  readonly background: BackgroundSummaryState;
  /** The conversation as Claude Code JSONL. */
  toTranscript(): string;
  /**
   * Compacts when automatic compaction is due (SPEC §6); decided now, synchronously. Failures
   * are reported in the outcome, not thrown (an abort too: `error.code` `ABORTED`).
   */
  maybeAutoCompact(options?: CompactorAutoCompactOptions | null): Promise<CompactorAutoCompactOutcome<M>>;
  /**
   * Compacts now (manual, `/compact [instructions]`). Rejects with a
   * {@link ContextCompactionError}; on failure the conversation is unchanged.
   */
  compact(options?: CompactorCompactOptions | null): Promise<CompactionResult<M>>;
  /**
   * The state to store beside the messages, as plain JSON data: failures in a row, thrashing
   * detection, and the number, fingerprint and token count of the messages held now. O(1).
   * A compaction running now is not in it: restored, the conversation is the one held now, so
   * store {@link Compactor.messages} read at the same moment.
   *
   * @example
   * await storage.put({ messages: chat.messages, snapshot: chat.snapshot() });
   */
  snapshot(): CompactorSnapshot;
  /**
   * The `Compactor` that {@link Compactor.snapshot} saved, rebuilt over the messages stored
   * with it (on any machine) with the options of `new Compactor` (without `messages`): the
   * same token count, the same decisions. `snapshot` may be its JSON text. Throws a
   * {@link ContextCompactionError}: `INVALID_SNAPSHOT`, `UNSUPPORTED_SNAPSHOT_VERSION`,
   * `SNAPSHOT_MISMATCH` (not the messages of the snapshot), or the constructor's errors;
   * never restores partly.
   *
   * @example
   * const { messages, snapshot } = await load(conversationId);
   * const chat = Compactor.restore(snapshot, messages, { model: 'claude-sonnet-4-5', summarize });
   */
  static restore<M extends MessageInput = Message>(
    snapshot: CompactorSnapshot | string,
    messages: readonly (M | PostCompactMessage<M>)[],
    options: Omit<CompactorOptions<M>, 'messages'>,
  ): Compactor<M>;
  /**
   * The same, for the messages of a `Compactor` of {@link Message} (the default: `new
   * Compactor(options)` without `messages`) or of transcript lines: their
   * {@link Compactor.messages} mix the message types a compaction adds with yours, which the
   * form above cannot always tell apart.
   */
  static restore(
    snapshot: CompactorSnapshot | string,
    messages: readonly PostCompactMessage<Message>[],
    options: Omit<CompactorOptions<Message>, 'messages'>,
  ): Compactor<Message>;
  /** Releases the WASM memory of this object (it is unusable afterwards). */
  free(): void;
}

/** What the usage seen teaches about the requests' real size (see {@link Compactor.calibration}). */
export interface CountCalibration {
  /** Tokens every request sends besides the messages (system prompt, tool definitions). */
  overhead: number;
  /** Real tokens per estimated token of the messages (code and JSON run above 1). */
  ratio: number;
  /** Responses whose usage it was learned from (the latest 64 at most). */
  observations: number;
}

/**
 * What {@link Compactor.snapshot} returns: plain JSON data, versioned, to store beside the
 * messages (it does not contain them). Treat it as opaque: `check` covers every field, and
 * an edited snapshot is an `INVALID_SNAPSHOT` error.
 */
export interface CompactorSnapshot {
  /** Always `'context-compaction/compactor'`. */
  format: 'context-compaction/compactor';
  /** The snapshot format's version: 1. */
  v: 1;
  /** How many messages the `Compactor` held. */
  messages: number;
  /** 16 hex digits folding what the token count reads of each message (kind, size, id, usage). */
  fingerprint: string;
  /** The token count of those messages. */
  tokenCount: number;
  /** Failed automatic compactions in a row (the circuit breaker opens at 3). */
  consecutiveFailures: number;
  /** The thrashing detection. */
  thrash: {
    /** Turns since the last automatic compaction (`null`: none since the start or a manual one). */
    turnsSinceCompaction: number | null;
    /** Automatic compactions in a row after which the context refilled within 3 turns. */
    rapidRefills: number;
    /** Automatic compaction is paused. */
    thrashing: boolean;
    /**
     * The automatic-compaction threshold the pause was measured against (present while
     * paused). Restored into a `Compactor` whose threshold is higher (a larger model or
     * window), the pause ends: the detection starts over.
     */
    pausedAtThreshold?: number;
  };
  /** 16 hex digits over every other field. */
  /**
   * Usage given with {@link Compactor.setUsage} since the last compaction, and after how
   * many messages (`at`): given again there on restore. Absent when none was given.
   */
  usage?: {
    at: number;
    input_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
    output_tokens: number;
  };
  /**
   * What the usage seen taught (see {@link Compactor.calibration}), as `[estimated, real]`
   * pairs of the latest responses; absent before the first usage.
   */
  calibration?: Array<[number, number]>;
  /**
   * The pairs of those responses whose request held no tool result cleared since (by
   * {@link microCompact}); absent when that is all of them.
   */
  calibrationClean?: Array<[number, number]>;
  check: string;
}

// ============================================================================================
// The Anthropic summarizer (js/anthropic.js)
// ============================================================================================

export { anthropicSummarizer } from './anthropic.js';
export type {
  AnthropicSummarizerOptions,
  AnthropicApiError,
  AnthropicApiErrorCode,
  AnthropicApiErrorDetails,
  AnthropicSummarizerOptionsErrorCode,
  ApiErrorBody,
  ApiErrorType,
  FetchFunction,
  SummarizerAttemptOptions,
  MessagesRequest as AnthropicMessagesRequest,
  MessagesResponse as AnthropicMessagesResponse,
} from './anthropic.js';

// ============================================================================================
// The OpenAI and LangChain summarizers (js/openai.js, js/langchain.js); the AI SDK one is at
// the subpath `context-compaction/ai-sdk` (js/ai-sdk.d.ts)
// ============================================================================================

export { openaiSummarizer } from './openai.js';
export type {
  OpenAiSummarizerOptions,
  OpenAiSummarizer,
  OpenAiApiError,
  OpenAiApiErrorCode,
  OpenAiApiErrorDetails,
  OpenAiErrorBody,
  OpenAiSummarizerOptionsErrorCode,
} from './openai.js';
export { langchainSummarizer } from './langchain.js';
export type { LangChainChatModel, LangChainSummarizer, LangChainSummarizerOptions } from './langchain.js';
export type {
  SummarizerError,
  SummarizerErrorCode,
  SummarizerErrorDetails,
  SummaryResponseBody,
  SummarizeCallOptions,
} from './summary-request.js';
