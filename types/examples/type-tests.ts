// Type-level tests of types/index.d.ts: every `@ts-expect-error` line must fail to compile
// (tsc reports an unused directive otherwise), every other line must compile. Nothing here
// runs. Checked by `bash types/check.sh`.

import {
  anthropicSummarizer,
  autoCompactIfNeeded,
  buildApiContextManagement,
  applyApiCompaction,
  buildPostCompactMessages,
  calculateTokenWarningState,
  compactConversation,
  Compactor,
  constants,
  createCompactBoundaryMessage,
  getModelOutputLimits,
  microCompact,
  parseContextOverflowError,
  parseTranscript,
  reactiveCompact,
  shouldAutoCompact,
  stripImagesFromMessages,
  tokenCountWithEstimation,
  truncateHeadForPTLRetry,
  trySessionMemoryCompaction,
  type AnthropicApiError,
  type ApiMessage,
  type CompactContext,
  type CompactionResult,
  type Config,
  type ContentBlock,
  type ContextCompactionError,
  type ContextWindowSource,
  type ErrorCode,
  type KnownContentBlock,
  type Message,
  type ProgressEvent,
  type Summarizer,
  type TranscriptLine,
} from 'context-compaction';
import { expectType, type Equal } from './expect.js';
import * as pkg from 'context-compaction';


declare const messages: ApiMessage[];
declare const lines: TranscriptLine[];
declare const summarize: Summarizer;
declare const context: CompactContext;
const model = 'claude-opus-4-6';

// ---- Messages -------------------------------------------------------------------------------

tokenCountWithEstimation([{ role: 'user', content: 'hi' }]);
tokenCountWithEstimation([
  { role: 'user', content: [{ type: 'text', text: 'look', cache_control: { type: 'ephemeral' } }] },
  { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Read', input: { file_path: 'a.rs' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'fn main() {}' }] },
  { role: 'assistant', content: [{ type: 'search_result', source: 'x', title: 'an unknown block type' }] },
]);
tokenCountWithEstimation(lines);
tokenCountWithEstimation([...lines, ...messages]);

// SDK message types (interfaces with block types this package does not list) fit as input.
interface SdkSearchResultBlockParam {
  type: 'search_result';
  source: string;
  title: string;
  content: Array<{ type: 'text'; text: string }>;
}
interface SdkMessageParam {
  role: 'user' | 'assistant';
  content: string | Array<SdkSearchResultBlockParam | { type: 'text'; text: string }>;
}
declare const sdkMessages: SdkMessageParam[];
tokenCountWithEstimation(sdkMessages);
// …and come back with their own type.
expectType<Equal<ReturnType<typeof stripImagesFromMessages<SdkMessageParam>>, SdkMessageParam[]>>();
expectType<Equal<typeof sdkMessages, ReturnType<typeof microCompact<SdkMessageParam>>['messages']>>();

// @ts-expect-error a number where a message is expected
tokenCountWithEstimation([42]);
// @ts-expect-error not an array of messages
tokenCountWithEstimation({ role: 'user', content: 'hi' });
// @ts-expect-error content must be a string or blocks
tokenCountWithEstimation([{ role: 'user', content: 42 }]);
// A system message given as a message (OpenAI, AI SDK, Anthropic SDK types that allow it) is
// counted: it is what the model reads first.
tokenCountWithEstimation([{ role: 'system', content: 'be brief' }]);
// @ts-expect-error a block needs a string `type`
tokenCountWithEstimation([{ role: 'user', content: [{ text: 'no type' }] }]);

// Descriptive block types: known ones are checked field by field.
const image: ContentBlock = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } };
const pdf: ContentBlock = { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } };
const search: ContentBlock = { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] };
void [image, pdf, search];
// A block of any type fits ContentBlock (unknown blocks are kept); KnownContentBlock checks
// the fields of the known types.
const anyImage: ContentBlock = { type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: '' } };
// @ts-expect-error an image's base64 source needs a media type the API accepts
const badImage: KnownContentBlock = { type: 'image', source: { type: 'base64', media_type: 'image/bmp', data: '' } };
// @ts-expect-error a tool_result needs its tool_use_id
const badResult: KnownContentBlock = { type: 'tool_result', content: 'ok' };
void [anyImage, badImage, badResult];
// Narrowing on `type` keeps the unknown-block member: test the field too.
declare const block: ContentBlock;
if (block.type === 'tool_use' && typeof block.name === 'string') expectType<Equal<typeof block.name, string>>();
// @ts-expect-error `block.text` may be any value of an unknown block until tested
const text: string = block.type === 'text' ? block.text : '';

// Transcript lines narrow on `type` and keep their typed fields.
for (const line of lines) {
  if (line.type === 'system' && line.compactMetadata) {
    expectType<Equal<typeof line.compactMetadata.trigger, 'auto' | 'manual'>>();
  }
  if (line.type === 'assistant' && line.message?.usage) {
    expectType<Equal<typeof line.message.usage.input_tokens, number>>();
  }
}
expectType<Equal<ReturnType<typeof parseTranscript>, TranscriptLine[]>>();

// ---- Thresholds and config ------------------------------------------------------------------

calculateTokenWarningState(150_000, model, { autoCompactPctOverride: 80 });
// @ts-expect-error the token count is a number
calculateTokenWarningState('150000', model);
// @ts-expect-error a misspelt config key (the library throws INVALID_CONFIG at run time too)
calculateTokenWarningState(150_000, model, { disableAutocompact: true });
// @ts-expect-error switches are booleans, not environment strings
const config: Config = { disableCompact: '1' };
expectType<Equal<ReturnType<typeof getModelOutputLimits>, { default: number; upperLimit: number }>>();
// The warning state says where the window comes from (an unknown model: 'default').
expectType<Equal<ReturnType<typeof calculateTokenWarningState>['contextWindowSource'], ContextWindowSource>>();
expectType<Equal<ContextWindowSource, 'config' | 'model' | 'default'>>();
calculateTokenWarningState(150_000, 'openai/gpt-4.1');
shouldAutoCompact(messages, model, { querySource: 'repl_main_thread', snipTokensFreed: 0 });
shouldAutoCompact(messages, 'my-own-model', { querySource: 'my_tool' });

// ---- Boundary, retry, context management ----------------------------------------------------

const boundary = createCompactBoundaryMessage('manual', 170_251, { lastUuid: 'u-1' });
expectType<Equal<typeof boundary.subtype, 'compact_boundary'>>();
// @ts-expect-error the trigger is "auto" or "manual"
createCompactBoundaryMessage('automatic', 170_251);
// @ts-expect-error preTokens is a number
createCompactBoundaryMessage('auto', '170251');

const overflow = parseContextOverflowError(new Error('prompt is too long: 213462 tokens > 200000 maximum'));
if (overflow) expectType<Equal<typeof overflow.gap, number | null>>();
const truncated = truncateHeadForPTLRetry(lines, { status: 413 });
if (truncated) tokenCountWithEstimation(truncated);

const cm = buildApiContextManagement({ clearThinking: true, thinkingKeep: 1, excludeTools: ['Edit'] });
if (cm) expectType<Equal<(typeof cm.edits)[number]['type'], 'clear_thinking_20251015' | 'clear_tool_uses_20250919' | 'compact_20260112'>>();
// @ts-expect-error the compaction trigger is a number of input tokens
buildApiContextManagement({ compactTriggerInputTokens: '60000' });
const applied = applyApiCompaction([{ role: 'user' as const, content: 'hi' }], { content: [], stop_reason: 'compaction' });
expectType<Equal<typeof applied.paused, boolean>>();
// @ts-expect-error thinkingKeep is "all", a number of turns or an object
buildApiContextManagement({ thinkingKeep: 'none' });

// ---- The pipeline ---------------------------------------------------------------------------

// The Anthropic summarizer fits the summarizer contract.
const anthropic: Summarizer = anthropicSummarizer({ apiKey: 'sk-ant-…', model: 'claude-haiku-4-5' });
// A gateway or OAuth token instead of a key.
const viaToken: Summarizer = anthropicSummarizer({ authToken: 'token', baseURL: 'https://gateway.example' });
// @ts-expect-error a misspelt option (it throws INVALID_ARGUMENT at run time too)
anthropicSummarizer({ apiKy: 'sk-ant-…' });
void viaToken;
// A summarizer may resolve with a plain string.
const offline: Summarizer = async (request, { onText }) => {
  const text = `<summary>${request.messages.length} messages</summary>`;
  onText?.(text);
  return text;
};
// @ts-expect-error a summarizer resolves with a response body or a string
const wrong: Summarizer = async () => 42;
void [anthropic, offline, wrong];

// @ts-expect-error the model is required
compactConversation(messages, { summarize });
// @ts-expect-error the summarizer is required for a full compaction
compactConversation(messages, { model });
// Session-memory compaction makes no model call: no summarizer needed.
trySessionMemoryCompaction(messages, { model, sessionMemory: () => 'what happened so far' });

compactConversation(messages, {
  model,
  summarize,
  readFileState: new Map([['a.rs', { content: 'fn a() {}', timestamp: 1 }]]),
  invokedSkills: [{ name: 'pdf', content: '# PDF' }],
  mcpInstructions: { github: 'Use the GitHub server for issues.' },
  hooks: {
    preCompact: async ({ trigger }) => (trigger === 'auto' ? 'Keep the TODO list.' : undefined),
    sessionStart: () => ({ messages: ['Re-read CONTRIBUTING.md.'] }),
    postCompact: ({ compactSummary }) => ({ userDisplayMessage: compactSummary.slice(0, 100) }),
  },
  onProgress: (e) => {
    if (e.phase === 'summarizing') expectType<Equal<typeof e.attempt, number>>();
    // @ts-expect-error not a phase
    if (e.phase === 'finished') return;
  },
});
compactConversation(messages, {
  model,
  summarize,
  // @ts-expect-error a PreCompact hook returns instructions, not a number
  hooks: { preCompact: () => 42 },
});
compactConversation(messages, {
  model,
  summarize,
  // @ts-expect-error a misspelt context key
  readFileStates: new Map(),
});

declare const result: CompactionResult<ApiMessage>;
expectType<Equal<typeof result.messagesToKeep, ApiMessage[]>>();
expectType<Equal<typeof result.compactionUsage, import('context-compaction').CompactionUsage | null>>();
expectType<Equal<typeof result.trigger, 'auto' | 'manual'>>();
// @ts-expect-error reading a field a CompactionResult does not have
result.summaryText;
// @ts-expect-error reading a field a CompactionResult does not have
result.tokensSaved;
const after: Message[] = buildPostCompactMessages(result);
void after;

const outcome = await autoCompactIfNeeded(messages, context, { consecutiveFailures: 1 });
// @ts-expect-error compactionResult exists only when wasCompacted is true
outcome.compactionResult.summary;
if (outcome.wasCompacted) outcome.compactionResult.summary;
else if (outcome.error) expectType<Equal<typeof outcome.error.code, ErrorCode>>();
else expectType<Equal<typeof outcome.skipped, import('context-compaction').AutoCompactSkipReason>>();

const reactive = await reactiveCompact(messages, context, { status: 413 }, { turnId: 7 });
reactive.tracking.consecutiveFailures;

// ---- Errors ---------------------------------------------------------------------------------

declare const error: ContextCompactionError;
expectType<Equal<typeof error.name, 'ContextCompactionError'>>();
const code: ErrorCode = 'SESSION_MEMORY_NOT_APPLICABLE';
// @ts-expect-error not an error code of the library
const badCode: ErrorCode = 'TIMED_OUT';
void [code, badCode];
// AnthropicApiError is a type only: the package exports the class as a property of
// anthropicSummarizer, not as a value of its own.
// @ts-expect-error no value named AnthropicApiError
pkg.AnthropicApiError;
const apiErr: AnthropicApiError = new anthropicSummarizer.AnthropicApiError('overloaded', { status: 529 });
void apiErr;
declare const apiError: AnthropicApiError;
expectType<Equal<typeof apiError.retriesExhausted, boolean>>();

// ---- Constants ------------------------------------------------------------------------------

expectType<Equal<typeof constants.AUTOCOMPACT_BUFFER_TOKENS, 13000>>();
expectType<Equal<typeof constants.CLEARED_TOOL_RESULT_PLACEHOLDER, '[Old tool result content cleared]'>>();
// @ts-expect-error constants are read-only
constants.MAX_PTL_RETRIES = 5;

// ---- Compactor ------------------------------------------------------------------------------

const chat = new Compactor<ApiMessage>({ model, summarize, config: { autoCompactWindow: 100_000 } });
chat.push({ role: 'user', content: 'hello' });
chat.pushMany(messages);
// @ts-expect-error a number where a message is expected
chat.push(42);
// @ts-expect-error the model is required
new Compactor({ summarize });
expectType<Equal<ReturnType<typeof chat.tokenCount>, number>>();
expectType<Equal<typeof chat.tracking, { consecutiveFailures: number; thrashing: boolean }>>();
const compacted = await chat.compact({ customInstructions: 'keep the schema' });
// @ts-expect-error reading a field a CompactionResult does not have
compacted.newMessages;
const auto = await chat.maybeAutoCompact();
if (!auto.wasCompacted && auto.skipped === 'compacting') chat.compacting;
// @ts-expect-error messages is read-only: push instead
chat.messages = [];

// A snapshot, stored as JSON and restored: the same message type comes back.
const snap = chat.snapshot();
expectType<Equal<typeof snap.v, 1>>();
const again = Compactor.restore(JSON.stringify(snap), chat.messages, { model, summarize });
expectType<Equal<typeof again, Compactor<ApiMessage>>>();
Compactor.restore(snap, chat.messages, { model });
// @ts-expect-error the messages are the second argument, not an option
Compactor.restore(snap, chat.messages, { model, messages: chat.messages });
// @ts-expect-error a snapshot is not any object
Compactor.restore({ v: 1 }, chat.messages, { model });
// The README's flow: a Compactor of the default message type (no `messages` given), its
// messages and snapshot kept as objects, restored with the same options.
{
  const options = { model, summarize };
  const first = new Compactor(options);
  first.push({ role: 'user', content: 'Where is the config read?' });
  const store = new Map<string, { messages: Compactor['messages']; snapshot: ReturnType<Compactor['snapshot']> }>();
  store.set('chat', { messages: first.messages, snapshot: first.snapshot() });
  const { messages, snapshot } = store.get('chat')!;
  const restored = Compactor.restore(snapshot, messages, options);
  expectType<Equal<typeof restored, Compactor<Message>>>();
  expectType<Equal<typeof first, Compactor<Message>>>();
  // A Compactor of transcript lines restores as one of Message (transcript lines are Messages).
  const lines = new Compactor({ model, messages: parseTranscript('') });
  const restoredLines = Compactor.restore(lines.snapshot(), lines.messages, { model });
  restoredLines.push(parseTranscript('')[0]!);
  // @ts-expect-error still not any array
  Compactor.restore(snapshot, [1, 2], options);
}

// ---- Progress events ------------------------------------------------------------------------

const phases: Array<ProgressEvent['phase']> = ['start', 'preCompactHook', 'summarizing', 'summarized', 'done'];
void phases;

// ---- The second module (offlineSummarizer, previewCompaction, simulateSession) -------------------

// Loaded on first use: previewCompaction and simulateSession are asynchronous.
expectType<Equal<ReturnType<typeof pkg.previewCompaction<ApiMessage>>, Promise<pkg.CompactionPreview>>>();
expectType<Equal<ReturnType<typeof pkg.simulateSession>, Promise<pkg.SimulationReport>>>();
const preview = await pkg.previewCompaction(messages, { model });
expectType<Equal<typeof preview.tokensBefore, number>>();
// @ts-expect-error a promise, not the preview: await it
pkg.previewCompaction(messages, { model }).tokensBefore;
// loadExtras loads it ahead, from where it is by default or from what is given.
expectType<Equal<ReturnType<typeof pkg.loadExtras>, Promise<void>>>();
await pkg.loadExtras();
await pkg.loadExtras({ module_or_path: new URL('https://example.com/context_compaction_extra_bg.wasm') });
// offlineSummarizer still returns its summarizer at once.
expectType<Equal<ReturnType<typeof pkg.offlineSummarizer>, Summarizer>>();
