// Declarations of `context-compaction/count`: the entry for a page's first render. Its init()
// loads only the counting module (the stateless count, thresholds and warning state); the
// rest of the package loads on demand through loadCompaction() (its .wasm ahead, by itself, once
// `calculateTokenWarningState` reports the warning threshold passed or `shouldAutoCompact`
// answers true, unless init() is told `prefetchCompaction: false`). The functions are the
// same as the main entry's: their declarations are those of index.d.ts. One difference, kept
// for the counting module's size: where the browser loads it (not in Node or Workers, whose
// count entry is the main one), an option whose getter or Proxy trap throws is read as absent
// (the main entry refuses it with `INVALID_ARGUMENT` naming the key).
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

/** What {@link init} of the count entry takes in its object form. */
export interface CountInitOptions {
  /** Where the counting module's `.wasm` is (by default next to the glue). */
  module_or_path?: InitInput | Promise<InitInput> | undefined;
  /**
   * Loading the first module ahead: by default its `.wasm` is fetched and compiled by itself
   * once `calculateTokenWarningState` reports the warning threshold passed or
   * `shouldAutoCompact` answers true, so that the compaction does not wait for the download
   * ({@link loadCompaction} then instantiates it and imports the JS). `false`: only
   * {@link loadCompaction} loads it. `{ module_or_path }`: where its `.wasm` is (not a
   * `Response`: its body can be read once, and a failed load ahead is tried again).
   */
  prefetchCompaction?: boolean | { module_or_path: Exclude<InitInput, Response> | Promise<Exclude<InitInput, Response>> } | undefined;
}

/**
 * Loads the counting module: call it once, before anything else (it fetches
 * `context_compaction_count_bg.wasm` next to the glue, or from what you pass). A failure is a
 * coded `NOT_INITIALIZED` error with the cause. In Node and Workers: a no-op.
 *
 * @example
 * import init, { shouldAutoCompact } from 'context-compaction/count';
 * await init();
 */
export default function init(moduleOrPath?: CountInitOptions | InitInput | Promise<InitInput>): Promise<void>;

/**
 * Initialises the counting module synchronously from its bytes or a compiled module (browser
 * form; in Node and Workers the entry is ready at import and this is a no-op).
 * @throws {ContextCompactionError} `NOT_INITIALIZED` (the engine's error as `cause`) for bytes
 * that are not the counting module, or an engine that compiles no WebAssembly here.
 */
export declare function initSync(module: { module: WasmBytes | WasmModule } | WasmBytes | WasmModule): void;

/**
 * Loads the package's first module (`web.js` and `context_compaction_bg.wasm`, or the `.wasm`
 * from what you pass) and resolves to the main entry's exports: compaction, the `Compactor`,
 * `microCompact`, the summarizers, everything. It loads once; calls that overlap share the
 * first call's load (and its input), later calls resolve to the same exports. Environment
 * defaults given to either entry reach both. A failure is a coded `NOT_INITIALIZED` error with
 * the cause, and the next call tries again; a browser keeps a failed download of a JS module
 * until the page reloads (a failed `.wasm` download is fetched again). In Node and Workers it
 * resolves to the main entry, loaded already.
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
