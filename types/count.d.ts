// Declarations of `context-compaction/count`: the entry for a page's first render. Its init()
// loads only the counting module (the stateless count, thresholds and warning state); the
// rest of the package loads on demand through loadCompaction(). The functions are the same
// as the main entry's: their declarations are those of index.d.ts.
import type { InitInput, WasmBytes, WasmModule } from './index.js';

export {
  ContextCompactionError,
  calculateTokenWarningState,
  constants,
  errorCodes,
  getAutoCompactThreshold,
  getConstants,
  getContextWindowForModel,
  getEffectiveContextWindowSize,
  getMaxOutputTokensForModel,
  getModelOutputLimits,
  isAutoCompactEnabled,
  roughTokenCountEstimation,
  setEnvironmentDefaults,
  shouldAutoCompact,
  tokenCountWithEstimation,
} from './index.js';

/**
 * Loads the counting module: call it once, before anything else (it fetches
 * `context_compaction_count_bg.wasm` next to the glue, or from what you pass). A failure is a
 * coded `NOT_INITIALIZED` error with the cause.
 *
 * @example
 * import init, { shouldAutoCompact } from 'context-compaction/count';
 * await init();
 */
export default function init(
  moduleOrPath?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>,
): Promise<void>;

/** Initialises the counting module synchronously from its bytes or a compiled module. */
export declare function initSync(module: { module: WasmBytes | WasmModule } | WasmBytes | WasmModule): void;

/**
 * Loads the package's first module (`web.js` and `context_compaction_bg.wasm`, or the `.wasm`
 * from what you pass) and resolves to the main entry's exports: compaction, the `Compactor`,
 * `microCompact`, the summarizers, everything. It loads once; later calls resolve to the same
 * exports. Environment defaults set through this entry apply to it too. A failure is a coded
 * `NOT_INITIALIZED` error with the cause, and the next call tries again.
 *
 * @example
 * if (shouldAutoCompact(messages, model)) {
 *   const { compactConversation, anthropicSummarizer } = await loadCompaction();
 *   const result = await compactConversation(messages, { model, summarize: anthropicSummarizer({ apiKey }) });
 * }
 */
export declare function loadCompaction(
  moduleOrPath?: { module_or_path: InitInput | Promise<InitInput> } | InitInput | Promise<InitInput>,
): Promise<typeof import('./index.js')>;
