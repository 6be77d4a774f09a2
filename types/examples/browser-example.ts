// A web chat page with context-compaction: `await init()` once, then a Compactor holds the
// conversation, feeds a context meter, compacts automatically when the threshold is crossed,
// and on `/compact [instructions]`. Type-checked by `bash types/check.sh`.

import init, {
  anthropicSummarizer,
  buildApiContextManagement,
  Compactor,
  getAutoCompactThreshold,
  getEffectiveContextWindowSize,
  toApiMessages,
  type AnthropicMessagesResponse,
  type ApiMessage,
  type AutoCompactOutcome,
  type CompactionResult,
  type ContextCompactionError,
  type Message,
  type TokenWarningState,
  type TranscriptLine,
} from 'context-compaction';

await init(); // fetches context_compaction_bg.wasm next to the module

const model = 'claude-sonnet-4-5';
const apiKey = localStorage.getItem('anthropic-api-key') ?? '';
const log = document.querySelector<HTMLElement>('#log')!;
const meter = document.querySelector<HTMLMeterElement>('#meter')!;
const input = document.querySelector<HTMLTextAreaElement>('#input')!;

// The browser calls the API directly with the user's key (kept in this browser only).
const headers = { 'anthropic-dangerous-direct-browser-access': 'true' };
const summarize = anthropicSummarizer({ apiKey, headers, timeoutMs: 120_000 });
let turn = new AbortController(); // the Stop button aborts the current model call

const chat = new Compactor<ApiMessage>({
  model,
  summarize,
  onProgress: (e) => {
    log.dataset.phase = e.phase;
    if (e.phase === 'summarizing' && e.attempt > 1) show('system', `retrying the summary (${e.attempt})`);
  },
  onText: (text) => {
    log.lastElementChild?.append(text);
  },
});

// API messages have no `type`; transcript lines (the library's boundary line) have one.
const isLine = (m: Message): m is TranscriptLine => typeof (m as { type?: unknown }).type === 'string';

function textOf(message: Message): string {
  const content = isLine(message) ? message.message?.content : message.content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  // Unknown block types are kept as-is: narrow on `type`, then on the field.
  return content.map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : `[${b.type}]`)).join('\n');
}

function show(who: string, text: string): void {
  const p = document.createElement('p');
  p.className = who;
  p.textContent = text;
  log.append(p);
}

function updateMeter(state: TokenWarningState): void {
  meter.value = 100 - state.percentLeft;
  meter.className = state.isAboveErrorThreshold ? 'red' : state.isAboveWarningThreshold ? 'orange' : '';
  meter.title = `${chat.tokenCount()} of ${getEffectiveContextWindowSize(model)} tokens; auto-compact at ${getAutoCompactThreshold(model)}`;
}

function showCompaction(result: CompactionResult<ApiMessage>): void {
  show('boundary', `— conversation compacted (${result.trigger}): ${result.preCompactTokenCount} → ${result.truePostCompactTokenCount} tokens —`);
  for (const m of result.summaryMessages) show('summary', textOf(m));
  if (result.userDisplayMessage) show('system', result.userDisplayMessage);
}

async function callModel(): Promise<AnthropicMessagesResponse> {
  const res = await fetch('https://api.anthropic.com/v1/messages', {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({
      model,
      max_tokens: 4096,
      messages: toApiMessages(chat.messages),
      context_management: buildApiContextManagement({ clearToolUses: true }) ?? undefined,
    }),
    signal: turn.signal,
  });
  if (!res.ok) throw Object.assign(new Error(await res.text()), { status: res.status });
  return (await res.json()) as AnthropicMessagesResponse;
}

async function send(text: string): Promise<void> {
  if (text.startsWith('/compact')) {
    const customInstructions = text.slice('/compact'.length).trim() || undefined;
    try {
      showCompaction(await chat.compact({ customInstructions }));
    } catch (e) {
      show('error', `compaction failed: ${(e as ContextCompactionError).code}`);
    }
    updateMeter(chat.warningState());
    return;
  }
  chat.push({ role: 'user', content: text });
  show('user', text);
  const reply = await callModel();
  // The response's usage rides along: the next count is exact.
  chat.push({ role: 'assistant', content: reply.content, id: reply.id, usage: reply.usage });
  show('assistant', textOf(chat.messages[chat.length - 1]!));

  const outcome: AutoCompactOutcome<ApiMessage> = await chat.maybeAutoCompact();
  if (outcome.wasCompacted) showCompaction(outcome.compactionResult);
  else if (outcome.error) show('error', `auto-compaction failed: ${outcome.error.message}`);
  updateMeter(chat.warningState());
}

input.addEventListener('keydown', (event) => {
  if (event.key !== 'Enter' || event.shiftKey) return;
  event.preventDefault();
  const text = input.value.trim();
  input.value = '';
  if (text) void send(text).catch((e: unknown) => show('error', String(e)));
});

document.querySelector('#stop')?.addEventListener('click', () => {
  turn.abort();
  turn = new AbortController();
});

updateMeter(chat.warningState());
