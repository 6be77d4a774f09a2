// A module service worker (registered by service-worker.html) that uses the package through
// its service-worker entry. A service worker refuses import(): every part the package loads on
// first use (the second module, the summarizers' request code) must come without one.
import init, {
  Compactor,
  anthropicSummarizer,
  compactConversation,
  langchainSummarizer,
  offlineSummarizer,
  openaiSummarizer,
  parseTranscript,
  previewCompaction,
  simulateSession,
  tokenCountWithEstimation,
} from '/pkg/service-worker.js';

const MODEL = 'claude-opus-4-6';
const apiSummarizer = async () => ({
  content: [{ type: 'text', text: '<summary>API-STYLE SUMMARY</summary>' }],
  usage: { input_tokens: 900, output_tokens: 40 },
});
const json = (body) => async () => new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } });

async function run() {
  const results = {};
  try {
    // The premise: this worker refuses a dynamic import.
    try {
      await import('/pkg/constants.js');
      results.dynamicImport = 'allowed';
    } catch (e) {
      results.dynamicImport = e?.name ?? String(e);
    }
    await init();
    const lines = parseTranscript(await (await fetch('/transcripts/cc_small_short.jsonl')).text());
    results.tokens = tokenCountWithEstimation(lines);
    results.apiSummary = (await compactConversation(lines, { model: MODEL, summarize: apiSummarizer })).summary;
    const chat = new Compactor({ model: MODEL, summarize: apiSummarizer, messages: lines });
    results.compactorSummary = (await chat.compact()).summary;
    chat.free();
    // The three summarizers whose request code web.js imports on first call.
    const viaAnthropic = anthropicSummarizer({
      apiKey: 'k',
      stream: false,
      fetch: json({ id: 'msg_1', type: 'message', role: 'assistant', model: MODEL, stop_reason: 'end_turn',
        content: [{ type: 'text', text: '<summary>VIA ANTHROPIC</summary>' }], usage: { input_tokens: 900, output_tokens: 40 } }),
    });
    results.anthropicSummary = (await compactConversation(lines, { model: MODEL, summarize: viaAnthropic })).summary;
    const viaOpenai = openaiSummarizer({
      apiKey: 'k',
      model: 'gpt-4.1',
      stream: false,
      fetch: json({ id: 'chatcmpl_1', object: 'chat.completion', model: 'gpt-4.1',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: '<summary>VIA OPENAI</summary>' } }],
        usage: { prompt_tokens: 900, completion_tokens: 40, total_tokens: 940 } }),
    });
    results.openaiSummary = (await compactConversation(lines, { model: MODEL, summarize: viaOpenai })).summary;
    const fakeModel = { _llmType: () => 'fake', invoke: async () => ({ content: '<summary>VIA LANGCHAIN</summary>' }) };
    const viaLangchain = langchainSummarizer(fakeModel, { stream: false });
    results.langchainSummary = (await compactConversation(lines, { model: MODEL, summarize: viaLangchain })).summary;
    // The second module: fetched on first use.
    const short = parseTranscript(await (await fetch('/tests/fixtures/short_session.jsonl')).text());
    results.offlineSummaryChars = (await compactConversation(short, { model: MODEL, summarize: offlineSummarizer() })).summary.length;
    const p = await previewCompaction(lines, { model: MODEL });
    results.preview = { tokensBefore: p.tokensBefore, threshold: p.threshold };
    const sim = await simulateSession(lines, { policies: ['claude-code'] });
    results.simulatedPolicies = sim.policies.map((x) => x.name);
  } catch (e) {
    results.failure = `${e?.code ?? ''} ${e?.stack ?? e}`;
  }
  return results;
}

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
self.addEventListener('message', (event) => {
  event.waitUntil(run().then((results) => event.source.postMessage(results)));
});
