// The per-turn check written plainly in JavaScript: the yardstick the WASM package is timed
// against. Same rules as SPEC §3–§5 (and the package), no caching, no tricks:
//   - scan back from the end for the latest main-chain assistant message with `usage`,
//     stopping at a compact_boundary;
//   - total = input + cache_creation + cache_read + output tokens of that usage (when the
//     usage was logged mid-stream, `stop_reason: null`, output is at least the estimate of
//     the response's own lines);
//   - plus a length-based estimate of every sent message after the response's first line
//     that is not one of the response's own lines (split responses share `message.id`).
// Estimates per block, each rounded: text/thinking length / 4, tool_use (name + JSON of
// input) / 2, tool_result string / 4 plus its nested blocks, image/document 2,000, any other
// block JSON / 4; string content length / 4; attachment lines JSON of `attachment` / 4.
// Model thresholds: the SPEC §4 table; environment/config overrides are not modelled.

const isTranscript = (m) => typeof m.type === 'string';
const kindOf = (m) => (isTranscript(m) ? m.type : m.role);
const innerOf = (m) => (isTranscript(m) ? m.message : m);
const usageOf = (m) => innerOf(m)?.usage ?? null;
const idOf = (m) => (isTranscript(m) && typeof m.message?.id === 'string' ? m.message.id : null);
const isSide = (m) => m.isSidechain === true;
const isBoundary = (m) => m.type === 'system' && m.subtype === 'compact_boundary';

const round = (units, perToken) => Math.round(units / perToken);

export function estimateBlock(b) {
  switch (b.type) {
    case 'image':
    case 'document':
      return 2000;
    case 'text':
      return round(b.text.length, 4);
    case 'thinking':
      return round(b.thinking.length, 4);
    case 'redacted_thinking':
      return round(b.data.length, 4);
    case 'tool_use':
    case 'server_tool_use':
      return round(b.name.length + JSON.stringify(b.input === undefined ? {} : b.input).length, 2);
    case 'tool_result': {
      const c = b.content;
      if (typeof c === 'string') return round(c.length, 4);
      let n = 0;
      if (Array.isArray(c)) for (const x of c) n += estimateBlock(x);
      return n;
    }
    default:
      return round(JSON.stringify(b).length, 4);
  }
}

function estimateMessage(m) {
  const kind = kindOf(m);
  if (isSide(m)) return 0;
  if (kind === 'attachment' && isTranscript(m)) {
    return m.attachment === undefined ? 0 : round(JSON.stringify(m.attachment).length, 4);
  }
  if (kind !== 'user' && kind !== 'assistant') return 0;
  const c = innerOf(m)?.content;
  if (typeof c === 'string') return round(c.length, 4);
  if (!Array.isArray(c)) return 0;
  let n = 0;
  for (const b of c) n += estimateBlock(b);
  return n;
}

/** Context size of `messages` in tokens (transcript lines or API messages). */
export function tokenCountWithEstimation(messages) {
  let anchor = -1;
  let start = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (isSide(m)) continue;
    if (isBoundary(m)) {
      start = i + 1;
      break;
    }
    if (kindOf(m) === 'assistant' && usageOf(m) != null) {
      anchor = i;
      break;
    }
  }
  if (anchor < 0) {
    let n = 0;
    for (let i = start; i < messages.length; i++) n += estimateMessage(messages[i]);
    return n;
  }
  const id = idOf(messages[anchor]);
  const own = (m) => id !== null && !isSide(m) && kindOf(m) === 'assistant' && idOf(m) === id;
  // First line of the same response: walk back over its lines (results may sit between).
  let first = anchor;
  if (id !== null) {
    for (let j = anchor - 1; j >= 0; j--) {
      const m = messages[j];
      if (isSide(m)) continue;
      if (isBoundary(m)) break;
      if (kindOf(m) !== 'assistant') continue;
      if (idOf(m) !== id) break;
      first = j;
    }
  }
  const u = usageOf(messages[anchor]);
  let output = u.output_tokens ?? 0;
  // Usage logged while the response streamed (stop_reason null) does not cover the response:
  // it counts as the larger of its output and the estimate of its own lines.
  if (isTranscript(messages[anchor]) && messages[anchor].message.stop_reason === null) {
    let own_ = 0;
    for (let k = first; k <= anchor; k++) {
      if (k === first || k === anchor || own(messages[k])) own_ += estimateMessage(messages[k]);
    }
    output = Math.max(output, own_);
  }
  let total =
    (u.input_tokens ?? 0) +
    (u.cache_creation_input_tokens ?? 0) +
    (u.cache_read_input_tokens ?? 0) +
    output;
  for (let k = first + 1; k < messages.length; k++) {
    if (k === anchor || own(messages[k])) continue;
    total += estimateMessage(messages[k]);
  }
  return total;
}

const OUTPUT_DEFAULTS = [
  ['opus-4-6', 64000], ['sonnet-4-6', 32000], ['opus-4-5', 32000], ['sonnet-4-5', 32000],
  ['haiku-4-5', 32000], ['opus-4-1', 32000], ['sonnet-4', 32000], ['haiku-4', 32000],
  ['opus-4', 32000], ['3-7-sonnet', 32000], ['3-5-sonnet', 8192], ['3-5-haiku', 8192],
  ['claude-3-opus', 4096], ['claude-3-haiku', 4096],
];

/** Auto-compact threshold of `model` without config overrides (SPEC §4). */
export function autoCompactThreshold(model) {
  const m = model.toLowerCase();
  const window = m.trimEnd().endsWith('[1m]') ? 1_000_000 : 200_000;
  const maxOut = OUTPUT_DEFAULTS.find(([k]) => m.includes(k))?.[1] ?? 32000;
  return window - Math.min(maxOut, 20000) - 13000;
}

/** `shouldAutoCompact(messages, model)` with default options and no config. */
export function shouldAutoCompact(messages, model) {
  return tokenCountWithEstimation(messages) >= autoCompactThreshold(model);
}
