// A chat page's first render with `context-compaction/count`: only the counting module loads
// for the meter; the rest of the package (compaction, the summarizers) loads when the page
// first needs it. Type-checked by `bash types/check.sh`.

import init, {
  calculateTokenWarningState,
  getAutoCompactThreshold,
  loadCompaction,
  shouldAutoCompact,
  tokenCountWithEstimation,
  type ContextCompactionError,
} from 'context-compaction/count';
import type { CompactionResult, Message, TokenWarningState } from 'context-compaction';

// Fetches context_compaction_count_bg.wasm only; the first module's .wasm is fetched and
// compiled ahead once the warning threshold is passed (prefetchCompaction: false would leave it
// to loadCompaction()).
await init({ prefetchCompaction: true });

const model = 'claude-sonnet-4-5';
let messages: Message[] = [{ role: 'user', content: 'Fix the failing test in src/lib.rs' }];

const tokens: number = tokenCountWithEstimation(messages);
const state: TokenWarningState = calculateTokenWarningState(tokens, model);
const threshold: number = getAutoCompactThreshold(model);
export const meter = { tokens, threshold, warn: state.isAboveWarningThreshold };

export async function maybeCompact(apiKey: string): Promise<CompactionResult<Message> | undefined> {
  if (!shouldAutoCompact(messages, model)) return undefined;
  try {
    const { buildPostCompactMessages, compactConversation, anthropicSummarizer } = await loadCompaction();
    const result = await compactConversation(messages, { model, summarize: anthropicSummarizer({ apiKey }) });
    messages = buildPostCompactMessages(result) as Message[];
    return result;
  } catch (e) {
    const err = e as ContextCompactionError;
    // The module could not be downloaded (offline?): the meter keeps working; a failed .wasm
    // download is fetched again at the next call (a failed JS download needs a page reload).
    if (err.code === 'NOT_INITIALIZED') return undefined;
    throw e;
  }
}

// Loading everything ahead, say while the page is idle.
export const prefetch = (): Promise<unknown> => loadCompaction();
