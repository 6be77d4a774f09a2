// Node.js agent tooling with context-compaction: analyse a Claude Code session file, decide
// whether to compact, compact it with the Anthropic summarizer and hooks, write the result, and
// keep a running conversation with a Compactor. Type-checked by `bash types/check.sh`.
//
//   node --experimental-strip-types node-example.ts session.jsonl   (or compile it first)

import { readFile, writeFile } from 'node:fs/promises';
import {
  anthropicSummarizer,
  buildPostCompactMessages,
  calculateTokenWarningState,
  compactConversation,
  Compactor,
  constants,
  getAutoCompactThreshold,
  microCompact,
  parseTranscript,
  serializeTranscript,
  shouldAutoCompact,
  tokenCountWithEstimation,
  toApiMessages,
  validateForApi,
  type CompactContext,
  type CompactionResult,
  type ContextCompactionError,
  type FileState,
  type ModelId,
  type ProgressEvent,
  type TranscriptLine,
} from 'context-compaction'; // the Node entry needs no init()

const path = process.argv[2] ?? 'session.jsonl';
const model: ModelId = 'claude-opus-4-6';

// 1. Read the session. A blank or malformed line throws MALFORMED_TRANSCRIPT with its number.
let lines: TranscriptLine[];
try {
  lines = parseTranscript(await readFile(path, 'utf8'));
} catch (e) {
  const err = e as ContextCompactionError;
  console.error(`${path}: ${err.code === 'MALFORMED_TRANSCRIPT' ? err.message : String(e)}`);
  process.exit(1);
}

// 2. Analyse: exact usage of the last response + estimate of what follows.
const used = tokenCountWithEstimation(lines);
const state = calculateTokenWarningState(used, model);
const threshold = getAutoCompactThreshold(model);
console.log(`${lines.length} lines, ${used} tokens in context, ${state.percentLeft}% left`);
console.log(`auto-compact at ${threshold} (buffer ${constants.AUTOCOMPACT_BUFFER_TOKENS})`);
if (state.isAboveWarningThreshold) console.log('warning: the context is getting full');

// Per-line facts: narrow on `type`, then on the field (unknown line types are kept as-is).
for (const line of lines) {
  if (line.type === 'system' && line.subtype === 'compact_boundary' && line.compactMetadata) {
    console.log(`earlier ${line.compactMetadata.trigger} compaction at ${line.compactMetadata.preTokens} tokens`);
  }
}

// 3. What micro-compaction would free (the input is not changed).
const micro = microCompact(lines, { keepRecent: constants.MICROCOMPACT_KEEP_RECENT });
console.log(`micro-compaction: ${micro.tokensFreed} tokens in ${micro.clearedToolUseIds.length} results`);

// 4. The API view and its invariants.
const { valid, problems } = validateForApi(lines);
if (!valid) for (const p of problems) console.warn(`api message ${p.message}: ${p.problem}`);
console.log(`${toApiMessages(lines).length} messages are sent to the API`);

// 5. Compact when due, with the Anthropic summarizer, hooks, progress and a time limit.
const readFileState = new Map<string, FileState>([
  ['src/lib.rs', { content: 'pub fn answer() -> u32 { 42 }\n', timestamp: Date.now() }],
]);
const context: CompactContext = {
  model,
  summarize: anthropicSummarizer({ apiKey: process.env.ANTHROPIC_API_KEY, maxRetries: 2 }),
  readFileState,
  readFile: async (file) => {
    try {
      return await readFile(file, 'utf8');
    } catch {
      return null; // unreadable now: not restored
    }
  },
  planMode: false,
  discoveredTools: ['WebFetch', { name: 'NotebookEdit' }],
  invokedSkills: { 'pdf-tools': { content: '# PDF tools\nUse pdftotext for …' } },
  hooks: {
    preCompact: ({ trigger, preTokens, customInstructions }) => ({
      instructions: customInstructions ? undefined : 'Keep the list of failing tests verbatim.',
      userDisplayMessage: `${trigger} compaction of ${preTokens} tokens`,
    }),
    sessionStart: ({ source, model: m }) => [`Session resumed after ${source} on ${m}.`],
    postCompact: async ({ compactSummary, postTokens }) =>
      `Summary of ${compactSummary.length} characters; ${postTokens} tokens now.`,
  },
  signal: AbortSignal.timeout(5 * 60_000),
  onProgress: (event: ProgressEvent) => {
    switch (event.phase) {
      case 'start':
        console.error(`compacting ${event.tokens} tokens`);
        break;
      case 'summarizing':
        console.error(`summary request, attempt ${event.attempt}`);
        break;
      case 'retryPromptTooLong':
        console.error(`too long: ${event.detail} (${event.tokens} tokens)`);
        break;
      case 'retryTransient':
        console.error(event.detail);
        break;
      case 'done':
        console.error(`done: ${event.tokens} tokens`);
        break;
      default:
        console.error(event.phase);
    }
  },
  onText: (text) => process.stderr.write(text),
};

if (shouldAutoCompact(lines, model, { querySource: 'repl_main_thread' }) || process.argv.includes('--force')) {
  let result: CompactionResult<TranscriptLine>;
  try {
    result = await compactConversation(lines, context, { customInstructions: 'Focus on the API design.' });
  } catch (e) {
    const err = e as ContextCompactionError;
    switch (err.code) {
      case 'ABORTED':
        console.error('timed out; nothing was changed');
        break;
      case 'PROMPT_TOO_LONG':
      case 'SUMMARIZER_FAILED':
        console.error(`the summarizer failed: ${err.message}`, err.cause);
        break;
      default:
        console.error(`${err.code}: ${err.message}`);
    }
    process.exit(1);
  }
  const compacted = buildPostCompactMessages(result);
  await writeFile(path.replace(/\.jsonl$/, '') + '.compacted.jsonl', serializeTranscript(compacted));
  console.log(`${result.preCompactTokenCount} → ${result.truePostCompactTokenCount} tokens`);
  console.log(`restored: ${result.restoredFiles.map((f) => `${f.path} (${f.tokens})`).join(', ') || 'nothing'}`);
  if (result.userDisplayMessage) console.log(result.userDisplayMessage);
  for (const h of result.hookErrors) console.warn(`${h.hook} hook failed: ${h.message}`);
  if (result.compactionUsage) console.log(`summary call: ${result.compactionUsage.output_tokens} output tokens`);
  console.log(result.boundaryMarker.compactMetadata.preTokens === result.preCompactTokenCount);
}

// 6. A long-running agent keeps its conversation in a Compactor: O(1) counts per turn, and
// automatic compaction when the threshold is crossed (failures reported, not thrown).
const agent = new Compactor<TranscriptLine>({ ...context, messages: lines });
console.log(`${agent.length} lines, ${agent.tokenCount()} tokens, ${agent.warningState().percentLeft}% left`);
const outcome = await agent.maybeAutoCompact();
if (outcome.wasCompacted) {
  console.log(`compacted: ${outcome.compactionResult.summary.slice(0, 80)}…`);
} else if (outcome.error) {
  console.warn(`auto-compaction failed (${outcome.consecutiveFailures} in a row): ${outcome.error.code}`);
} else {
  console.log(`not compacted: ${outcome.skipped}`);
}
await writeFile(path.replace(/\.jsonl$/, '') + '.agent.jsonl', agent.toTranscript());
agent.free();
