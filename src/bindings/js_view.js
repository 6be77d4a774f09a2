// Readers behind the Rust view of JS conversations (src/bindings/js_view.rs): those the
// count uses, and what the readers of js_index.js (microCompact's and the compaction's) and
// the edits of js_edit.js share with them. They read properties and measure string lengths;
// every decision (what to count, clear, drop or keep) is made in Rust. Each call handles a
// whole range of messages, so a decision crosses the JS/WASM boundary a handful of times
// instead of once per property.

// Header bits of a message: kind in bits 0-2 (0 user, 1 assistant, 2 system, 3 attachment,
// 4 other line, 5 a `{role, …}` message of an unknown role, 7 not a message), 8 transcript line, 16 sidechain, 32 compact boundary,
// 64 carries usage, 128 always set (0 means "not read yet" on the Rust side), 256 a
// transcript line whose message.stop_reason is null (usage logged mid-stream), bits 9-11 the
// message's shape (model::shape::Shape codes below), 4096 begins with a server-side
// `compaction` block (or is an OpenAI Responses `compaction` item): the context starts here,
// 8192 a `{role: 'system'}` message with `clear_at: 'next_user_message'` (the model stops
// reading it once a later user message exists: measure::tokens::is_read).
const STARTS_CONTEXT = 4096;
const CLEARS_AT_USER = 8192;

// Whether content begins with a `compaction` block that did not fail (`content: null`), or
// an opaque one (no `content`, the provider's `encrypted_content` only: model::messages
// is_opaque_compaction).
function beginsWithCompaction(c) {
  if (!Array.isArray(c) || c.length === 0) return false;
  const b = c[0];
  return b !== null && typeof b === 'object' && b.type === 'compaction' && b.content !== null &&
    (b.content !== undefined || isOpaqueCompaction(b));
}

function isOpaqueCompaction(b) {
  return !('content' in b) && typeof b.encrypted_content === 'string' && b.encrypted_content.length > 0;
}

// Whether `p` is the AI SDK's form of that block (@ai-sdk/anthropic): a text part marked
// `{anthropic: {type: 'compaction'}}` in its `providerOptions` (ModelMessage) or
// `providerMetadata` (UIMessage), which the provider sends back as the block. An empty one
// is not sent (the provider drops it), so it starts nothing.
export function isAiCompaction(p) {
  if (p === null || typeof p !== 'object' || p.type !== 'text' || typeof p.text !== 'string' || p.text === '') return false;
  return marksCompaction(p.providerOptions) || marksCompaction(p.providerMetadata);
}

function marksCompaction(o) {
  const a = o !== null && typeof o === 'object' ? o.anthropic : undefined;
  return a !== null && typeof a === 'object' && a.type === 'compaction';
}

// Whether an AI SDK message's parts (`list`: a ModelMessage's content, a UIMessage's parts)
// begin a step with that compaction: what the provider sends then begins with the block. The
// parts the provider does not send (empty text, a UIMessage's step markers, sources and
// data) are passed over; `steps`: every step of a UIMessage is looked at (the provider sends
// each as a message of its own).
function aiBeginsWithCompaction(list, steps) {
  let first = true;
  for (const p of parts(list)) {
    const t = p !== null && typeof p === 'object' ? p.type : undefined;
    if (steps && t === 'step-start') { first = true; continue; }
    if (t === 'text' && p.text === '') continue;
    if (steps && typeof t === 'string' && (t.startsWith('source-') || t.startsWith('data-'))) continue;
    if (first && isAiCompaction(p)) return true;
    if (!steps) return false;
    first = false;
  }
  return false;
}

// Whether the `{role, …}` assistant message `m` begins with a compaction (the Messages API's
// block, or the AI SDK's part standing for it).
function startsContext(m) {
  const c = m.content;
  if (Array.isArray(c)) return beginsWithCompaction(c) || aiBeginsWithCompaction(c, false);
  const ps = m.parts;
  return Array.isArray(ps) && aiBeginsWithCompaction(ps, true);
}

// The tables below are switches, not objects: a keyed read of changing names on an object is
// a slow generic lookup in V8, slowest for a name it lacks (which it looks for along the
// prototype chain), and every message of another shape asks them (measured: 13 % of
// microCompact on Responses items). A switch also never answers for `constructor` or
// `toString`.

// Shapes, as numbered by model::shape::Shape.
export const ANY = 0, ANTHROPIC = 1, AI_MODEL = 2, AI_UI = 3, CHAT = 4, RESPONSES = 5, LANGCHAIN = 6;
// Not a shape: a plain message only OpenAI's shapes hold (a `developer` message), read as
// ANY (shapeOfHeader); the Rust side's ShapeOf::see_code notes it (model::shape::OPENAI_PLAIN_CODE).
const OPENAI_PLAIN = 7;
const SHAPE_SHIFT = 9;

// Kinds of roles outside Claude Code lines: tool results travel on the user side (as
// Anthropic's do), developer instructions are system prompts; `human` and `ai` are the
// roles of LangChain's `{role, content}` dicts (coerceMessageLikeToMessage reads them).
// Any other role is no message the library can read (UNKNOWN_ROLE: an error naming it,
// never a message silently left out; model::view::MESSAGE_ROLES lists these).
function roleKind(r) {
  switch (r) {
    case 'user': case 'tool': case 'function': case 'human': return 0;
    case 'assistant': case 'ai': return 1;
    case 'system': case 'developer': return 2;
    default: return undefined;
  }
}

// The header kind of a `{role, …}` message whose role is a string roleKind does not know.
const UNKNOWN_ROLE = 5;

// OpenAI Responses input items other than `message`, with their side (0 user, 1 assistant).
function responsesItem(t) {
  switch (t) {
    case 'function_call': case 'custom_tool_call': case 'reasoning': case 'compaction':
    case 'web_search_call': case 'file_search_call': case 'computer_call':
    case 'image_generation_call': case 'code_interpreter_call': case 'local_shell_call':
    case 'shell_call': case 'apply_patch_call': case 'mcp_call': case 'mcp_list_tools':
    case 'mcp_approval_request': case 'tool_search_call': case 'program':
      return 1;
    case 'function_call_output': case 'custom_tool_call_output': case 'computer_call_output':
    case 'local_shell_call_output': case 'shell_call_output': case 'apply_patch_call_output':
    case 'mcp_approval_response': case 'tool_search_output': case 'program_output':
      return 0;
    case 'additional_tools': case 'configuration_update': return 2;
    case 'item_reference': case 'compaction_trigger': return 4;
    default: return undefined;
  }
}

// The side of a Responses item `m` of type `t` (0 user, 1 assistant, 2 instructions, 4
// nothing to read), or undefined when `m` is not one. Item types added after this list
// are recognised by their `call_id` or their name (`…_call`, `…_output`).
export function responsesSide(m, t) {
  const k = responsesItem(t);
  if (k !== undefined) return k;
  if (m.message !== undefined) return undefined;
  if (t.endsWith('_call_output') || t.endsWith('_output')) return 0;
  if (t.endsWith('_call') || typeof m.call_id === 'string') return 1;
  return undefined;
}

// LangChain message types (instances' and stored messages' `type`).
function lcTypeKind(t) {
  switch (t) {
    case 'human': case 'tool': case 'function': case 'generic': return 0;
    case 'ai': return 1;
    case 'system': case 'developer': return 2;
    case 'remove': return 4;
    default: return undefined;
  }
}

// The fields of a LangChain message (an instance, its serialized `{lc: 1, kwargs}` form,
// its stored `{type, data}` form, or a dict keyed by type `{type: 'human' | 'ai' | 'tool' |
// 'system', content, …}` as its coerceMessageLikeToMessage reads it), or undefined when `m`
// is none of these.
export function lcFields(m) {
  if (Array.isArray(m.lc_namespace)) return m;
  if (m.lc === 1 && m.type === 'constructor' && Array.isArray(m.id)) {
    const k = m.kwargs;
    return k !== null && typeof k === 'object' ? k : undefined;
  }
  const t = m.type;
  if (typeof t !== 'string' || lcTypeKind(t) === undefined || m.message !== undefined) return undefined;
  const d = m.data;
  if (d !== null && typeof d === 'object') return 'content' in d ? d : undefined;
  // A dict: a Claude Code `system` line (which has a uuid, a subtype) is not one.
  if (d === undefined && 'content' in m &&
      (t !== 'system' || (m.uuid === undefined && m.subtype === undefined && m.parentUuid === undefined))) return m;
  return undefined;
}

// The kind of a LangChain message whose fields are `f`.
export function lcKind(m, f) {
  let t = m.type;
  // LangChain before 1.0: no `type` property, `_getType()` instead.
  if (typeof t !== 'string' && typeof m._getType === 'function') t = m._getType();
  if (m.lc === 1 && m.type === 'constructor') {
    const cls = String(m.id[m.id.length - 1]);
    t = cls.startsWith('Human') ? 'human' : cls.startsWith('AI') ? 'ai'
      : cls.startsWith('System') ? 'system' : cls.startsWith('Tool') ? 'tool'
      : cls.startsWith('Function') ? 'function' : 'generic';
  }
  if (t === 'generic') {
    const r = f.role;
    return r === 'assistant' || r === 'ai' ? 1 : r === 'system' ? 2 : 0;
  }
  const k = lcTypeKind(t);
  return k === undefined ? 4 : k;
}

// The shape that the parts of a `{role, content}` message reveal (ANY when every part is
// plain text, as several ecosystems write it).
function partsShape(c) {
  if (!Array.isArray(c)) return ANY;
  for (const p of parts(c)) {
    if (p === null || typeof p !== 'object') continue;
    const t = p.type;
    // The common parts first (the switch below compares one case after another). A text
    // part standing for the API's compaction block is the AI SDK's (ModelMessage).
    if (t === 'text') {
      if (p.providerOptions !== undefined && isAiCompaction(p)) return AI_MODEL;
      continue;
    }
    if (t === 'tool_use' || t === 'tool_result' || t === 'thinking') return ANTHROPIC;
    switch (t) {
      case 'text': case 'refusal': continue;
      case 'image':
        if ('source' in p) return ANTHROPIC;
        if ('image' in p) return AI_MODEL;
        continue;
      case 'file':
        if ('file' in p) return CHAT;
        if ('data' in p) return AI_MODEL;
        continue;
      case 'reasoning': case 'tool-call': case 'tool-result': case 'tool-approval-request':
      case 'tool-approval-response':
        return AI_MODEL;
      case 'image_url': case 'input_audio': return CHAT;
      case 'input_text': case 'output_text': case 'input_image': case 'input_file': return RESPONSES;
      default: return ANTHROPIC;
    }
  }
  return ANY;
}

// A transcript line has a string `type`; a Messages API response body (`type: "message"`
// with a `role`), an OpenAI Responses item and a stored LangChain message are not lines.
export const isLine = (m) => typeof m.type === 'string' &&
  (m.message !== undefined || (!(m.type === 'message' && typeof m.role === 'string') &&
    responsesSide(m, m.type) === undefined && lcFields(m) === undefined));

// The kind of a Claude Code line of type `t` (0 user, 1 assistant, 2 system, 3 attachment;
// undefined for other types): a switch, which a per-turn scan runs on every line it passes,
// costs less than a keyed lookup.
function lineKind(t) {
  switch (t) {
    case 'user': return 0;
    case 'assistant': return 1;
    case 'system': return 2;
    case 'attachment': return 3;
    default: return undefined;
  }
}

// Claude Code line types besides those of lineKind: decided without looking further.
function isOtherLineType(t) {
  switch (t) {
    case 'progress': case 'summary': case 'file-history-snapshot': case 'queue-operation':
    case 'custom-title': case 'tag':
      return true;
    default:
      return false;
  }
}

// Whether `u` is a response's usage: not absent, and not an object whose every input count
// is absent or 0. A real request always has input; Claude Code writes its own messages (an
// API error, an interrupted turn: model `<synthetic>`) with all counts 0, SDKs leave every
// count undefined when the provider reports none, and a stream's `message_delta` usage may
// give the output alone. Such a usage says nothing of the context,
// so the count neither starts from it nor stops its search there (model::view
// UsageCounts::is_zero). A usage that is not an object, or holds a count that is not a
// number, is usage (reading it reports it).
function carriesUsage(u) {
  if (u === undefined || u === null) return false;
  if (typeof u !== 'object' || Array.isArray(u)) return true;
  // A real response's `input_tokens` is not 0 (at least 1): the common case reads one count.
  let v = u.input_tokens;
  if (v === undefined || v === null) v = otherCount(u.inputTokens, u.prompt_tokens);
  if (counts(v) || counts(u.cache_creation_input_tokens) || counts(u.cache_read_input_tokens)) return true;
  // The output alone (a stream's `message_delta` usage, `input_tokens: null`) is no usage;
  // one that is not a count (NaN, -1, '12') is read, to be reported.
  v = u.output_tokens;
  if (v === undefined || v === null) v = otherCount(u.outputTokens, u.completion_tokens);
  return notCount(v);
}

// A value given that is not a token count (check_token_count in model/error.rs refuses it).
const notCount = (v) => v !== undefined && v !== null && !(typeof v === 'number' && v >= 0 && v <= 1e15);

// The count otherUsage reads from another ecosystem's two names: the first given, as setUsage
// reads them (one that is not a number is read, to be reported).
const otherCount = (a, b) => countOf(a != null ? a : b);

// A count as given, or the `total` of an AI SDK provider's count (LanguageModelV3Usage gives
// `inputTokens: {total, noCache, cacheRead, cacheWrite}`, `outputTokens: {total, …}`).
const countOf = (v) => (v !== null && typeof v === 'object' && 'total' in v ? v.total : v);

// carriesUsage of LangChain's `usage_metadata` (lcUsage reads it).
function lcCarriesUsage(u) {
  if (u === null || typeof u !== 'object') return false;
  return Array.isArray(u) || counts(u.input_tokens) || notCount(u.output_tokens);
}

// A count that is given and not 0 (what is not a number is given: reading it reports it).
const counts = (v) => v !== undefined && v !== null && v !== 0;

// The header of a Claude Code line of type `t` (`k` = lineKind(t)).
function lineHeader(m, k) {
  let bits = (k === undefined ? 4 : k) | 8 | (ANTHROPIC << SHAPE_SHIFT) | 128;
  if (m.isSidechain === true) bits |= 16;
  if (k === 2 && m.subtype === 'compact_boundary') bits |= 32;
  const inner = m.message;
  if (inner !== null && typeof inner === 'object') {
    // The common case (a response's input_tokens, above 0) read here, without a call.
    const u = inner.usage;
    if (u != null && (u.input_tokens > 0 || carriesUsage(u))) bits |= 64;
    if (inner.stop_reason === null) bits |= 256;
    if (k === 1 && beginsWithCompaction(inner.content)) bits |= STARTS_CONTEXT;
  }
  return bits;
}

// The header of message `m`. With `full` false (backward scans, which need only the kind,
// sidechain, boundary and usage bits) the shape of a `{role, content}` message is not worked
// out from its parts.
export function header(m, full = true) {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return 7 | 128;
  const t = m.type;
  if (typeof t === 'string') {
    const k = lineKind(t);
    // Claude Code lines, the common case, first (a LangChain `system` message also has
    // `type: 'system'`: told apart by its fields).
    if (m.message !== undefined || isOtherLineType(t) ||
        (k !== undefined && (k !== 2 || lcFields(m) === undefined))) return lineHeader(m, k);
  }
  // Only LangChain instances older than 1.0 have no string `type` (checked cheaply first:
  // most messages here are {role, content}).
  const f = typeof t === 'string' || Array.isArray(m.lc_namespace) ? lcFields(m) : undefined;
  if (f !== undefined) {
    const k = lcKind(m, f);
    let bits = k | (LANGCHAIN << SHAPE_SHIFT) | 128;
    if (k === 1 && lcCarriesUsage(f.usage_metadata)) bits |= 64;
    // ChatAnthropic keeps the API's compaction block in the AIMessage's content as it is.
    if (k === 1 && beginsWithCompaction(f.content)) bits |= STARTS_CONTEXT;
    return bits;
  }
  const r = m.role;
  if (typeof t === 'string' && !(t === 'message' && typeof r === 'string')) {
    const side = responsesSide(m, t);
    if (side !== undefined) return side | (RESPONSES << SHAPE_SHIFT) | 128 | (t === 'compaction' ? STARTS_CONTEXT : 0);
    return lineHeader(m, lineKind(t)); // another Claude Code line type
  }
  if (typeof r !== 'string') {
    // An OpenAI Responses item reference may leave its `type` out: `{id}`.
    if ((t === undefined || t === null) && typeof m.id === 'string' &&
      Object.keys(m).every((key) => key === 'id' || key === 'type')) {
      return 4 | (RESPONSES << SHAPE_SHIFT) | 128;
    }
    return 7 | 128;
  }
  const k = roleKind(r);
  if (k === undefined) return UNKNOWN_ROLE | 128;
  let bits = k | 128;
  const u = m.usage;
  if (u != null && (u.input_tokens > 0 || carriesUsage(u))) bits |= 64;
  if (k === 1 && startsContext(m)) bits |= STARTS_CONTEXT;
  if (k === 2 && m.clear_at === 'next_user_message') bits |= CLEARS_AT_USER;
  if (!full) return bits;
  let shape;
  if (r === 'human' || r === 'ai') shape = LANGCHAIN;
  else if (Array.isArray(m.parts)) shape = AI_UI;
  // The AI SDK's `tool` message holds an array of parts and no `tool_call_id`.
  else if (r === 'tool') shape = typeof m.tool_call_id === 'string' || typeof m.content === 'string' || 'tool_call_id' in m ? CHAT : AI_MODEL;
  else if (r === 'function' || Array.isArray(m.tool_calls) || m.function_call != null || typeof m.refusal === 'string' || m.audio != null) shape = CHAT;
  else {
    shape = partsShape(m.content);
    if (t === 'message' && shape === ANY && typeof m.content === 'string') shape = RESPONSES;
    // The reasoning an OpenAI-compatible server adds to a Chat reply (chatReasoning). A sign
    // of Chat only where the content shows no other shape: a message of another shape may
    // carry the field too (kept from such a reply by a proxy or a store).
    else if (shape === ANY && k === 1 && (typeof m.reasoning_content === 'string' || typeof m.reasoning === 'string')) shape = CHAT;
    // OpenAI's instructions role (Chat, Responses; LangChain reads it too): no Anthropic or
    // AI SDK message has it, so a conversation of plain messages holding one is OpenAI's.
    else if (shape === ANY && r === 'developer') shape = OPENAI_PLAIN;
  }
  // Usage in the Messages API's terms is Anthropic's; another shape's `usage` is not read.
  if (bits & 64) {
    if (shape === ANY) shape = ANTHROPIC;
    else if (shape !== ANTHROPIC) bits &= ~64;
  }
  return bits | (shape << SHAPE_SHIFT);
}

// OPENAI_PLAIN (7) reads as ANY (0).
export const shapeOfHeader = (h) => ((h >> SHAPE_SHIFT) & 7) % 7;

// The keys of arr[i] (for the error naming a message of no known shape); [] for non-objects.
function keysOf_(arr, i) {
  const m = arr[i];
  return m !== null && typeof m === 'object' ? Object.keys(m).slice(0, 20) : [];
}

// Length of `arr`, or -1 when it is not an array.
// The most messages a conversation is read with (2^24): only a sparse array is longer, and
// room is reserved by length. -1: not an array; -4: longer than that.
const MAX_MESSAGES = 16777216;
// The most blocks or parts a message's content is read with: the Messages API takes far
// fewer, and only a sparse array is longer. `parts(list)` refuses a longer one (reported as
// the reading error of that message) before anything walks it element by element.
const MAX_PARTS = 1048576;
export function parts(list) {
  if (list.length > MAX_PARTS) {
    throw new RangeError(`an array of ${list.length} elements in a message (more than ${MAX_PARTS}: a sparse array?)`);
  }
  return list;
}
function arrayLength_(arr) {
  if (!Array.isArray(arr)) return -1;
  return arr.length > MAX_MESSAGES ? -4 : arr.length;
}


// ---- A Claude Code session file read along its parentUuid chain (SPEC §2) ----
// Which lines form the conversation is decided in Rust (transforms/transcript.rs
// conversation_mask, from chainLinks). While the Rust side reads an array whose conversation
// is not what `isSidechain` says (a file holding several branches, a sub-agent's own file), the
// mask it gave is in effect for that array: every header of it read here has the sidechain
// bit (16) set where the line is not part of the conversation, cleared where it is.
let chainArr = null, chainOn = null;
const chainSaved = [];
export function enterChain(arr, on) {
  chainSaved.push(chainArr, chainOn);
  chainArr = arr;
  chainOn = on.slice(); // `on` is a view on WASM memory
}
export function leaveChain() {
  chainOn = chainSaved.pop() ?? null;
  chainArr = chainSaved.pop() ?? null;
}
// Header `h` of arr[i] as the conversation in effect has it.
// (A mask of another length is of the array as it was: not in effect.)
// A context start that closes the window of OpenAI's `/responses/compact` starts nothing
// (closesWindow).
export const onChain = (arr, i, h) => {
  if ((h & STARTS_CONTEXT) && closesWindow(arr, i)) h &= ~STARTS_CONTEXT;
  return arr !== chainArr || chainOn.length !== arr.length ? h : chainOn[i] === 1 ? h & ~16 : h | 16;
};

// Whether arr[i], a provider's opaque compaction alone (an OpenAI Responses `compaction`
// item, or a message holding only a `compaction` block with no readable `content`), closes the
// window OpenAI's `/responses/compact` returns: the user (and system, developer) messages it
// kept, then the item. The provider reads those messages, so the context does not start at
// the item (model::messages::closes_compact_window says the same of the Rust side's messages).
function closesWindow(arr, i) {
  if (i === 0 || !isOpaqueItem(arr[i])) return false;
  for (let k = 0; k < i; k++) if (!isWindowInput(arr[k])) return false;
  return true;
}

// Whether `m` (a message that starts the context) is a provider's opaque compaction alone.
function isOpaqueItem(m) {
  if (m.message !== undefined) return false;
  if (m.type !== 'compaction' || m.role !== undefined) {
    const c = (typeof m.role === 'string' ? m : lcFields(m) ?? m).content;
    if (!Array.isArray(c) || c.length !== 1 || !beginsWithCompaction(c) || !isOpaqueCompaction(c[0])) return false;
  }
  return true;
}

// What the `/responses/compact` window rule reads of arr[i] (for a count kept push by push,
// which sees one message at a time: tokens::RunningCount): 1 a window input (isWindowInput),
// 2 an opaque compaction alone (isOpaqueItem). 0 when reading it throws (the readers that
// count it report that).
export function windowFacts(arr, i) {
  try {
    const m = arr[i];
    if (m === null || typeof m !== 'object') return 0;
    return (isWindowInput(m) ? 1 : 0) | (isOpaqueItem(m) ? 2 : 0);
  } catch (_) {
    return 0;
  }
}

// A user, system or developer message that holds no tool result (any shape but a line).
function isWindowInput(m) {
  if (m === null || typeof m !== 'object' || m.message !== undefined) return false;
  const r = m.role;
  let f = m;
  if (typeof r === 'string') {
    if (!(r === 'user' || r === 'human' || roleKind(r) === 2) || (m.type ?? 'message') !== 'message') return false;
  } else {
    f = lcFields(m);
    const k = f === undefined ? 1 : lcKind(m, f);
    if (k !== 2 && (k !== 0 || f.tool_call_id !== undefined)) return false;
  }
  const c = f.content;
  return !Array.isArray(c) || !parts(c).some((p) => p !== null && typeof p === 'object' && p.type === 'tool_result');
}

// What `linked` knows of the lines before the next one: `open` (nothing: the lines before
// the range were not read, the first ones may name any parent), the uuid of the latest line
// that is not a progress line (`at`) and of the progress lines since (`after`), the lines of
// the latest response (`calls`, while nothing but its lines, their results and progress lines
// came since it began, and their `id`), whether a main-chain and a sub-agent turn were seen,
// the uuids seen (`seen`; null: not kept) and the parents taken for ones no line carries
// (`missing`).
export const linkState = (open, seen = null) => ({ open, at: null, after: [], id: undefined, calls: [], main: false, side: false, seen, missing: seen === null ? null : new Set() });

// Whether the lines arr[from..] hang together as they were written (`s`: linkState, updated):
// each line with a string `uuid` (sub-agent lines of a main session aside) names as its
// `parentUuid` (a compact boundary without one: its `logicalParentUuid`) the latest line before
// it that is not a progress line, or a progress line written since; a tool result may name the
// line of the latest response whose call it answers (Claude Code hangs each parallel call's
// result from its call); a line without a parentUuid, or (with `s.seen`) naming a parent no
// line carries, breaks the chain, which is then read in file order anyway. The parentUuid
// chain from the leaf then passes, or takes in, every line a count reads, as file order does.
// False when a line breaks this: the Rust side then follows the chain (or reads the file in
// file order when it is broken).
export function linked(arr, from, s) {
  for (let i = from, n = arr.length; i < n; i++) {
    const m = arr[i];
    if (m === null || typeof m !== 'object') continue;
    const t = m.type;
    const turn = t === 'user' || t === 'assistant';
    if (m.isSidechain === true) {
      if (turn) s.side = true;
      continue;
    }
    if (turn) s.main = true;
    const u = m.uuid;
    if (typeof u !== 'string') continue;
    let p = m.parentUuid;
    if (p === null && typeof m.logicalParentUuid === 'string') p = m.logicalParentUuid;
    const after = s.after;
    // Where the line hangs: from the latest line but progress lines (0), a progress line since
    // (1), elsewhere (2).
    const where = p === s.at ? 0 : typeof p === 'string' && (p === after[after.length - 1] || after.includes(p)) ? 1 : 2;
    // Whether it is a result of a call of the latest response that names that call's line
    // (or a progress line after it, when that line is the latest).
    let answers = false;
    if (t === 'user' && s.calls.length > 0 && typeof p === 'string') {
      const k = s.calls.indexOf(where === 2 ? p : s.at);
      answers = k >= 0 && answersCall(m, s.calls[k + 1]);
    }
    // A line that says nothing of its place (no parentUuid, or one of another type), or names
    // a parent no line carries: a chain that reaches it is not followed (file order).
    const unplaced = p !== null && (typeof p !== 'string' || (s.seen !== null && !s.seen.has(p)));
    if (!(s.open || where < 2 || answers || unplaced)) return false;
    if (s.seen !== null) {
      // A parent taken for one no line carries, carried by a later line: not file order.
      if (unplaced && typeof p === 'string') s.missing.add(p);
      if (s.missing.has(u)) return false;
      s.seen.add(u);
    }
    if (t === 'progress') {
      if (after.length >= 4096) return false;
      after.push(u);
      continue;
    }
    if (t === 'assistant') {
      const id = idOf(m);
      // A line of the latest response when it continues its lines.
      if (s.calls.length !== 0 && (id === undefined || id !== s.id || s.calls.indexOf(s.at) < 0)) s.calls.length = 0;
      s.id = id;
      s.calls.push(u, m);
    } else if (!answers && s.calls.length !== 0) s.calls.length = 0;
    s.open = false;
    s.at = u;
    if (after.length !== 0) after.length = 0;
  }
  return true;
}

// Whether user line `m` holds a result for a `tool_use` of assistant line `call`.
function answersCall(m, call) {
  const c = m.message?.content, d = call.message?.content;
  if (!Array.isArray(c) || !Array.isArray(d)) return false;
  for (const b of c) {
    if (b === null || typeof b !== 'object' || b.type !== 'tool_result') continue;
    for (const x of d) if (x !== null && typeof x === 'object' && x.type === 'tool_use' && x.id === b.tool_use_id) return true;
  }
  return false;
}


// Whether the lines arr[stop..len) hang as written (linkedTail, else linked), remembered for
// the last array asked about: asked again about the same line objects, as a per-render count
// of an unchanged conversation does, the answer is the one given (the link fields of a line
// object changed in place, which no session does, are read when the lines change).
let linkedArr = null, linkedLines = [], linkedStop = -1;
function tailLinked(arr, stop, len, W, tag) {
  if (arr === linkedArr && stop === linkedStop && len - stop === linkedLines.length) {
    let i = stop;
    while (i < len && arr[i] === linkedLines[i - stop]) i++;
    if (i === len) return true;
  }
  // (`linked` from a little before: the results of the response before may hang from its
  // lines before `stop`.)
  if (!linkedTail(arr, stop, len, W, tag) && !linked(arr, Math.max(0, stop - 64), linkState(true))) return false;
  linkedArr = arr;
  linkedStop = stop;
  linkedLines = arr.slice(stop, len);
  return true;
}

// Whether the lines arr[stop..len) hang together as they were written, read backwards over
// their tags (W[tag - i], countTail_'s): each line with a string `uuid`
// that a count reads, or that such a line hangs from (sub-agent lines of a main session
// aside), names as its `parentUuid` a line before it that only lines of another type (progress
// lines: never counted) separate from it, or names no parent at all (a chain that reaches it
// is not followed: file order). The parentUuid chain from the leaf then passes every line of
// the range a count reads, as file order does. False when not so (a fork, a parallel call's
// result hung from its call, a parent no line of the range carries, a root): `linked` then
// decides.
function linkedTail(arr, stop, len, W, tag) {
  // The parents named by the lines after, not met yet: want[0..n) (the array's length is
  // never set: that is a slow generic write).
  const want = [];
  let n = 0, root = false;
  for (let i = len - 1; i >= stop; i--) {
    const h = W[tag - i];
    // A line of another type no line after names is passed over: whatever it hangs from, it
    // is never counted.
    const other = (h & 7) === 4;
    if ((h & 16) || (other && n === 0)) continue;
    const m = arr[i];
    const u = m.uuid;
    if (typeof u !== 'string') continue;
    let k = 0;
    for (let j = 0; j < n; j++) if (want[j] !== u) want[k++] = want[j];
    // A line passed over, or one before the root the chain starts at.
    if (!other && (k > 0 || root)) return false;
    if (other && k === n) continue; // not named either
    n = k;
    if (i === stop) break;
    const p = m.parentUuid;
    if (typeof p === 'string') want[n++] = p;
    else if (p === null) root = true;
  }
  return true;
}

// The links of every element of `arr` as a transcript line, 4 numbers each: flags (1 has a
// string `uuid`, 2 `isSidechain: true`, 4 a `user` or `assistant` line, 8 a user line holding
// a `tool_result` for a `tool_use` of its anchor line, 16 an assistant line with the same
// `message.id` as its anchor line, 32 an `attachment` line, 64 a `compact_boundary` system
// line), where its `parentUuid` and its
// `logicalParentUuid` point
// (the index of the first element carrying that uuid; -1 for none: `parentUuid: null`, a
// `logicalParentUuid` that is not a string; -2 for a uuid no element carries; -3 for a
// `parentUuid` that is neither a string nor null), and its anchor: the nearest element above
// it by `parentUuid` that is not a progress line (-1 for none). What these mean is decided in
// Rust (transforms/transcript.rs). Written into `out` (4 numbers an element, a view on WASM
// memory); false when reading an element throws or the array is not of out's length (the
// lines are then read in file order).
export function chainLinks(arr, out) {
  try {
    const n = arr.length;
    if (4 * n !== out.length) return false;
    const at = new Map();
    const lines = new Array(n);
    for (let i = 0; i < n; i++) {
      const m = arr[i];
      lines[i] = m !== null && typeof m === 'object' ? m : null;
      const u = lines[i] === null ? undefined : m.uuid;
      if (typeof u === 'string' && !at.has(u)) at.set(u, i);
    }
    const ref = (v) => (typeof v !== 'string' ? -1 : at.has(v) ? at.get(v) : -2);
    const parents = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const m = lines[i];
      const pu = m === null ? null : m.parentUuid;
      parents[i] = pu === null ? -1 : typeof pu === 'string' ? ref(pu) : -3;
    }
    const anchorOf = (i) => {
      let p = parents[i];
      for (let steps = 0; p >= 0 && steps < n; steps++) {
        const up = lines[p];
        if (up === null || up.type !== 'progress') return p;
        p = parents[p];
      }
      return -1;
    };
    const blocks = (m) => {
      const inner = m.message;
      const c = inner !== null && typeof inner === 'object' ? inner.content : undefined;
      return Array.isArray(c) ? c : [];
    };
    const idOf = (m) => {
      const inner = m.message;
      return inner !== null && typeof inner === 'object' && typeof inner.id === 'string' ? inner.id : undefined;
    };
    // Whether user line `m` answers a tool call of line `p`.
    const answers = (m, p) => {
      if (p === null || p.type !== 'assistant') return false;
      const ids = new Set();
      for (const b of blocks(p)) if (b !== null && typeof b === 'object' && b.type === 'tool_use') ids.add(b.id);
      if (ids.size === 0) return false;
      for (const b of blocks(m)) if (b !== null && typeof b === 'object' && b.type === 'tool_result' && ids.has(b.tool_use_id)) return true;
      return false;
    };
    // Whether assistant line `m` and line `p` are lines of one response.
    const sameResponse = (m, p) => p !== null && p.type === 'assistant' && idOf(m) !== undefined && idOf(m) === idOf(p);
    for (let i = 0; i < n; i++) {
      const m = lines[i];
      if (m === null) {
        out[4 * i + 1] = -1;
        out[4 * i + 2] = -1;
        out[4 * i + 3] = -1;
        continue;
      }
      const t = m.type;
      const anchor = anchorOf(i);
      const up = anchor >= 0 ? lines[anchor] : null;
      out[4 * i] = (typeof m.uuid === 'string' ? 1 : 0) | (m.isSidechain === true ? 2 : 0) |
        (t === 'user' || t === 'assistant' ? 4 : 0) |
        (t === 'user' && answers(m, up) ? 8 : 0) |
        (t === 'assistant' && sameResponse(m, up) ? 16 : 0) |
        (t === 'attachment' ? 32 : 0) |
        (t === 'system' && m.subtype === 'compact_boundary' ? 64 : 0);
      out[4 * i + 1] = parents[i];
      out[4 * i + 2] = ref(m.logicalParentUuid);
      out[4 * i + 3] = anchor;
    }
    return true;
  } catch {
    return false;
  }
}

// 1 when the conversation of `arr` may not be what `isSidechain` says (a line that does not
// hang as `linked` reads it, a sub-agent's own file: the Rust side then reads its chain), else
// 0 (also for messages that are not Claude Code lines, and when reading throws: the readers
// report it).
export function chainMayDiffer(arr) {
  try {
    const last = arr[arr.length - 1];
    if (last === null || typeof last !== 'object' || typeof last.type !== 'string' || last.role !== undefined) return 0;
    const s = linkState(false, new Set());
    return linked(arr, 0, s) && (s.main || !s.side) ? 0 : 1;
  } catch {
    return 0;
  }
}



// Index of the last main-chain message before `end` matching `mask` (1: assistant carrying
// usage, 2: any assistant, 4: compact boundary); -1 when none; -2 - i when arr[i] is not a
// message (the Rust side reports it).
function rfind_(arr, end, mask) {
  for (let i = end - 1; i >= 0; i--) {
    const m = arr[i];
    // A search for where the context starts passes {role, content} messages (no string
    // `type`, not LangChain) quickly: only an assistant one that begins with a compaction
    // block is a start; header(m, false) says the same, reading more.
    if (mask === 4 && m !== null && typeof m === 'object' && !Array.isArray(m) && typeof m.type !== 'string' &&
        !Array.isArray(m.lc_namespace) && typeof m.role === 'string') {
      if (m.role === 'assistant' && startsContext(m) && !closesWindow(arr, i)) return i;
      continue;
    }
    const h = onChain(arr, i, header(m, false));
    if ((h & 7) === 7) return -2 - i;
    if (h & 16) continue;
    if ((mask & 4) && (h & (32 | STARTS_CONTEXT))) return i;
    if ((h & 7) === 1 && ((mask & 2) || ((mask & 1) && (h & 64)))) return i;
  }
  return -1;
}

// The latest main-chain assistant message with usage before `end`, unless a compact
// boundary comes first. Writes [status, present mask, input, cache_creation, cache_read,
// output] into `out` (status 0 none, 1 usage, 2 boundary, 3 not a message; present bit k =
// USAGE_KEYS[k] given, a non-number written as NaN, usage not an object: mask -1) and
// returns the index (-1 when none).
function latestUsage_(arr, end, out) {
  for (let i = end - 1; i >= 0; i--) {
    const m = arr[i];
    const h = onChain(arr, i, header(m, false));
    if ((h & 7) === 7) { out[0] = 3; return i; }
    if (h & 16) continue;
    if (h & 32) { out[0] = 2; return i; }
    if ((h & STARTS_CONTEXT) && !(h & 64)) { out[0] = 4; return i; }
    if ((h & 7) === 1 && (h & 64)) {
      out[0] = 1;
      out[1] = readUsage(arr, i, out.subarray(2));
      return i;
    }
  }
  out[0] = 0;
  return -1;
}

// The nearest main-chain assistant line before `before` if it shares arr[last]'s
// message.id; -1 otherwise (also when a compact boundary or a non-message comes first).
function previousSibling_(arr, before, last) {
  const id = idOf(arr[last]);
  if (id === undefined) return -1;
  for (let i = before - 1; i >= 0; i--) {
    const h = onChain(arr, i, header(arr[i], false));
    if ((h & 7) === 7 || (h & 32)) return -1;
    if (h & 16) continue;
    if ((h & 7) === 1) return idOf(arr[i]) === id ? i : -1;
  }
  return -1;
}

const USAGE_KEYS = ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens'];

// Writes the four usage counts of arr[i] into `out` and returns a bitmask of the ones that
// are present (bit k for USAGE_KEYS[k]); a present value that is not a number is written as
// NaN. Returns -1 when `usage` is not an object.
function readUsage_(arr, i, out) {
  const m = arr[i];
  const line = isLine(m);
  const f = line ? undefined : lcFields(m);
  if (f !== undefined) return lcUsage(f.usage_metadata, out);
  return usageCounts(line ? m.message && m.message.usage : m.usage, out);
}

// readUsage_ of the usage object `u`.
function usageCounts(u, out) {
  if (u === null || typeof u !== 'object' || Array.isArray(u)) return -1;
  // Named reads (one property each), not a loop over USAGE_KEYS: a keyed read of changing
  // names is a slow generic lookup, and a per-turn count reads this on every call.
  let present = 0, v = u.input_tokens;
  if (v !== undefined && v !== null) { present |= 1; out[0] = typeof v === 'number' ? v : NaN; }
  v = u.cache_creation_input_tokens;
  if (v !== undefined && v !== null) { present |= 2; out[1] = typeof v === 'number' ? v : NaN; }
  v = u.cache_read_input_tokens;
  if (v !== undefined && v !== null) { present |= 4; out[2] = typeof v === 'number' ? v : NaN; }
  v = u.output_tokens;
  if (v !== undefined && v !== null) { present |= 8; out[3] = typeof v === 'number' ? v : NaN; }
  // Another ecosystem's names (the AI SDK's, OpenAI Chat's), as setUsage reads them: its input
  // already holds the cached tokens (model::view UsageCounts::from_usage).
  if ((present & 9) !== 9) present = otherUsage(u, out, present);
  return present;
}

function otherUsage(u, out, present) {
  if ((present & 1) === 0) {
    const v = otherCount(u.inputTokens, u.prompt_tokens);
    if (v != null) { present |= 1; out[0] = typeof v === 'number' ? v : NaN; }
  }
  if ((present & 8) === 0) {
    const v = otherCount(u.outputTokens, u.completion_tokens);
    if (v != null) { present |= 8; out[3] = typeof v === 'number' ? v : NaN; }
  }
  return present;
}

// LangChain's `usage_metadata` in the Messages API's terms: its `input_tokens` already
// include cached reads and writes, so they are the whole input; `output_tokens` the output.
function lcUsage(u, out) {
  if (u === null || typeof u !== 'object' || Array.isArray(u)) return -1;
  let present = 0;
  for (const [k, key] of [[0, 'input_tokens'], [3, 'output_tokens']]) {
    const v = u[key];
    if (v === undefined || v === null) continue;
    present |= 1 << k;
    out[k] = typeof v === 'number' ? v : NaN;
  }
  return present;
}

function idOf(m) {
  const inner = m.message;
  return inner !== null && typeof inner === 'object' && typeof inner.id === 'string' ? inner.id : undefined;
}

function messageId_(arr, i) {
  return idOf(arr[i]);
}

function sameResponse_(arr, i, j) {
  const a = idOf(arr[i]);
  if (a !== undefined) return a === idOf(arr[j]);
  // The output items of one OpenAI Responses response (reasoning, message, calls) are
  // consecutive assistant-side items.
  if (shapeOfHeader(header(arr[i])) !== RESPONSES || shapeOfHeader(header(arr[j])) !== RESPONSES) return false;
  for (let k = Math.min(i, j); k <= Math.max(i, j); k++) if ((header(arr[k]) & 7) !== 1) return false;
  return true;
}

function stringField_(arr, i, k) {
  const v = arr[i][k];
  return typeof v === 'string' ? v : undefined;
}

function boundaryKept_(arr, i) {
  const meta = arr[i].compactMetadata;
  const k = meta !== null && typeof meta === 'object' ? meta.keptMessages : undefined;
  // The rule (whole numbers only) is applied in Rust: view::kept_messages_from.
  return typeof k === 'number' ? k : undefined;
}

export function contentOf(m) {
  if (isLine(m)) {
    const inner = m.message;
    return inner !== null && typeof inner === 'object' ? inner.content : undefined;
  }
  return m.content;
}

// PLAIN_ARRAYS: the readers that hand the Rust side a list of numbers (a `Vec<u32>` there)
// return a plain array: the glue copies any array-like into WASM memory, and a typed array
// of more than a few numbers costs an ArrayBuffer allocation, more than most reads.
export const RS = '\u001e';
const SEP_ALL = /\u001e/g;
const PLACEHOLDER = '[Old tool result content cleared]';
// A described block's flag: a plain-text document (js_view.rs PLAIN_TEXT).
const PLAIN_TEXT = 2;
const MISSING = 0xffffffff;
// The constants js_index.js reads, for it to keep as its own (an exported constant is read
// through a cell on every use, here as there; these stay this module's for its hot paths).
export const VIEW_CONSTANTS = { PLACEHOLDER, PLAIN_TEXT, MISSING, UNKNOWN_ROLE };

// A content block's kind by its `type` (a switch: a per-turn count describes blocks on every
// call, and a keyed read of changing names is a slow generic lookup).
export function blockKind(t) {
  switch (t) {
    case 'text': return 0;
    case 'tool_use': return 3;
    case 'tool_result': return 5;
    case 'thinking': return 7;
    case 'image': return 1;
    case 'document': return 2;
    case 'server_tool_use': return 4;
    case 'redacted_thinking': return 8;
    default: return undefined;
  }
}

// The caller's tokenizer (`tokenCounter`, put in effect by the Rust side for one call, else
// null) and the first problem it had. With a tokenizer, lengths are reported in its tokens
// times the characters per token the core's estimate divides by (4 for prose, 2 for tool-call
// JSON), so the estimate comes out in the caller's tokens and every other rule reads lengths
// unchanged. Calls nest (a tokenizer, a getter or a callback may call the package again):
// each call pushes its own tokenizer, or none, and restores the one before it when it
// returns; while the tokenizer itself runs none is in effect, so a call it makes counts as
// that call's own options say.
let COUNTER = null;
let counterError = null;
const counterStack = [];

export function enterTokenCounter(f) {
  counterStack.push(COUNTER, counterError);
  COUNTER = typeof f === 'function' ? f : null;
  counterError = null;
}

export function leaveTokenCounter() {
  if (counterStack.length < 2) {
    COUNTER = null;
    counterError = null;
    return;
  }
  counterError = counterStack.pop();
  COUNTER = counterStack.pop();
}

export function takeCounterError() {
  const e = counterError;
  counterError = null;
  return e === null ? undefined : e;
}

// Whether `v` is a promise (an async tokenizer's answer, refused: counts are synchronous),
// then settled here so that its rejection is not left unhandled (which ends a Node process).
// (Never throws: env.rs calls it on whatever the tokenizer answered, a Proxy too.)
export function settledPromise(v) {
  try {
    return v instanceof Promise && (v.catch(() => {}), true);
  } catch (_) {
    return false;
  }
}

function counted(s, perToken) {
  const f = COUNTER;
  // Its first problem is the call's answer: the tokenizer is not asked again.
  if (counterError !== null) return s.length;
  let n;
  COUNTER = null;
  try {
    n = f(s);
  } catch (e) {
    // Reading what it threw may throw too (a revoked Proxy): still the tokenizer's error, not
    // the messages' (nor asked again).
    counterError = 'tokenCounter threw: a value that cannot be read';
    try {
      counterError = `tokenCounter threw: ${e instanceof Error ? e.message : e !== null && typeof e == 'object' ? 'a non-Error object' : String(e)}`;
    } catch {}
    return s.length;
  } finally {
    COUNTER = f;
  }
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) {
    counterError = `tokenCounter must return a finite number ≥ 0; it returned ${typeof n === 'number' ? n : settledPromise(n) ? 'a Promise (it must count synchronously)' : typeof n}`;
    return s.length;
  }
  // No tokenizer gives more tokens than the text has UTF-8 bytes (at most 3 per UTF-16 unit).
  if (n > 4 * s.length + 16) {
    counterError = `tokenCounter returned ${n} tokens for a text of ${s.length} characters: more than any tokenizer gives`;
    return s.length;
  }
  const units = Math.round(n) * perToken;
  // Non-empty text stays non-empty (rules tell "has text" by a length > 0); MISSING is not a
  // length.
  return units === 0 && s.length > 0 ? 1 : Math.min(units, MISSING - 1);
}

// Length of a text the model reads: UTF-16 units, or the tokenizer's count in those units.
export function tlen(s) {
  return COUNTER === null ? s.length : counted(s, 4);
}

// The JSON text of a value the model reads. A value JSON cannot write (cyclic, a BigInt,
// nested past the engine's stack) is a reading error of its message, never a length of 0
// that would drop it from the count.
function jsonText(v) {
  let s;
  try {
    s = JSON.stringify(v);
  } catch (e) {
    throw new TypeError(`a value that cannot be written as JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  return typeof s === 'string' ? s : '';
}

export function jsonLen(v) {
  const s = jsonText(v);
  return COUNTER === null ? s.length : counted(s, 4);
}

// Length of a tool call: its name and its arguments as JSON (a string is already JSON).
function callLen(name, input) {
  const args = typeof input === 'string' ? input : jsonText(input === undefined ? {} : input);
  return COUNTER === null ? name.length + args.length : counted(name + args, 2);
}

// `s` as the strings that cross keep it: an RS inside (their separator) becomes U+FFFD.
export const rsFree = (s) => (s.indexOf(RS) === -1 ? s : s.replace(SEP_ALL, '\ufffd'));

// Strings of the last description, interned: symbol k + 1 is `strings[k]`, 0 is none.
let strings = [];
let symbols = new Map();
let interning = true;
function sym(s) {
  if (!interning) return 0;
  let k = symbols.get(s);
  if (k === undefined) {
    strings.push(rsFree(s));
    k = strings.length;
    symbols.set(s, k);
  }
  return k;
}

// The interned strings as the tool index (js_index.js) uses them; the variables stay this
// module's (an exported variable is read through a cell, slower on the count's paths).
// The string of symbol `s` (> 0).
export const symbolString = (s) => strings[s - 1];
// `list` becomes the strings `takeStrings` gives, with none interned.
export function giveStrings(list) {
  strings = list;
  if (symbols.size !== 0) symbols = new Map();
}
// Interning on or off; returns what it was.
export function setInterning(on) {
  const was = interning;
  interning = on;
  return was;
}
// Interning from none, the strings before set aside: returns them for putInternedBack.
export function internAfresh() {
  const saved = [strings, symbols, interning];
  strings = [];
  symbols = new Map();
  interning = true;
  return saved;
}
export function putInternedBack(saved) {
  [strings, symbols, interning] = saved;
}

// Nine numbers per block: kind, text length (MISSING: a required field is missing), JSON
// length, flags (1 = cleared placeholder, 2 = a plain-text document: counted as its text), nested block count, then the symbols of id, name,
// path and tool_use_id (a tool_use's: its `caller.tool_id`). Kinds: 0 text, 1 image, 2 document, 3 tool_use, 4 server_tool_use,
// 5 tool_result, 6 server tool result, 7 thinking, 8 redacted_thinking, 9 other, 10 not an
// object, 11 no string `type`, 12 tool_reference. Nested tool_result blocks follow their parent.
function describeBlock(b, estimate, out) {
  if (b === null || typeof b !== 'object' || Array.isArray(b)) {
    out.push(10, 0, 0, 0, 0, 0, 0, 0, 0);
    return;
  }
  const t = b.type;
  if (typeof t !== 'string') {
    out.push(11, 0, 0, 0, 0, 0, 0, 0, 0);
    return;
  }
  if (t === 'compaction') {
    // The server-side compaction block counts as its summary text, an opaque one as its
    // encrypted text, plus its `tool_changes` as JSON when it has any (the tools the model
    // reads they add; the Rust side's view::block_info does the same).
    const n = typeof b.content === 'string' ? tlen(b.content) : isOpaqueCompaction(b) ? tlen(b.encrypted_content) : 0;
    const tc = b.tool_changes;
    out.push(0, n + (tc === undefined || tc === null || (Array.isArray(tc) && tc.length === 0) ? 0 : jsonLen(tc)), 0, 0, 0, 0, 0, 0, 0);
    return;
  }
  let k = blockKind(t);
  // 12: a tool a tool search loaded (the core counts the definition it brings in).
  if (k === undefined) k = t === 'tool_reference' ? 12 : t.endsWith('_tool_result') && typeof b.tool_use_id === 'string' ? 6 : 9;
  let text = 0, json = 0, flags = 0, id = 0, name = 0, path = 0, tid = 0;
  let nested = null, media = null;
  switch (k) {
    case 0: text = typeof b.text === 'string' ? tlen(b.text) : MISSING; break;
    case 2: {
      // A plain-text document is read as its text (view::block_info does the same), plus
      // the text it holds besides (sideTextLen).
      const n = plainTextLen(b.source);
      if (n >= 0) { text = n; flags = PLAIN_TEXT; }
      text += sideTextLen(b, n < 0);
      break;
    }
    case 7: text = typeof b.thinking === 'string' ? tlen(b.thinking) : MISSING; break;
    case 8: text = typeof b.data === 'string' ? tlen(b.data) : MISSING; break;
    case 3: case 4: {
      const input = b.input;
      if (typeof b.id !== 'string' || typeof b.name !== 'string') { text = MISSING; break; }
      id = sym(b.id);
      name = sym(b.name);
      path = toolPath(input);
      // A client call made by a server tool's code (programmatic tool calling): the last
      // word names that server_tool_use (BlockInfo::caller; Rust's view reads it so too).
      if (k === 3) {
        const c = b.caller;
        if (c !== null && typeof c === 'object' && typeof c.tool_id === 'string') tid = sym(c.tool_id);
      }
      // A string input is free-form text (an OpenAI custom tool's): counted as text.
      if (estimate && typeof input === 'string') { json = callLen(b.name, ''); text = tlen(input); }
      else if (estimate) json = callLen(b.name, input === undefined ? {} : input);
      break;
    }
    case 5: {
      if (typeof b.tool_use_id !== 'string') { text = MISSING; break; }
      tid = sym(b.tool_use_id);
      const c = b.content;
      if (typeof c === 'string') {
        text = tlen(c);
        if (c === PLACEHOLDER) flags = 1;
      } else if (Array.isArray(c)) {
        nested = c;
      } else if (c !== undefined && c !== null) {
        text = MISSING;
      }
      break;
    }
    case 6:
      tid = sym(b.tool_use_id);
      if (estimate) {
        media = [];
        json = readableLen(b, media);
      }
      break;
    default: if (estimate) json = jsonLen(b);
  }
  if (media !== null && media.length > 0) {
    // The media inside a server tool's result, as nested blocks (counted as media).
    out.push(k, text, json, flags, media.length, id, name, path, tid);
    for (const mk of media) out.push(mk, 0, 0, 0, 0, 0, 0, 0, 0);
    return;
  }
  out.push(k, text, json, flags, nested ? nested.length : 0, id, name, path, tid);
  // The blocks inside a tool result are measured even for a structure: micro-compaction
  // weighs the result by them, another block (a `search_result`) as its JSON, as the count
  // does (view::block_info_with measures them so too).
  if (nested) for (const n of parts(nested)) describeBlock(n, true, out);
}

// The length (tlen) of the text a document `b` holds besides its plain text or its media
// (`media`: it has no plain text): its `context`, and the text blocks of a `content` source
// that also holds images (MediaBlock::side_text_units in Rust reads the same).
function sideTextLen(b, media) {
  let n = typeof b.context === 'string' ? tlen(b.context) : 0;
  const s = b.source;
  if (media && s !== null && typeof s === 'object' && Array.isArray(s.content)) {
    for (const p of parts(s.content)) if (p !== null && typeof p === 'object' && p.type === 'text' && typeof p.text === 'string') n += tlen(p.text);
  }
  return n;
}

// The length (tlen) of a plain-text document's text, given its `source`: a `text` source's
// `data`, or a `content` source (a string, or blocks that are all text); -1 for a document
// of media (MediaBlock::plain_texts in Rust reads the same).
export function plainTextLen(source) {
  if (source === null || typeof source !== 'object') return -1;
  if (source.type === 'text') return typeof source.data === 'string' ? tlen(source.data) : -1;
  if (source.type !== 'content') return -1;
  const c = source.content;
  if (typeof c === 'string') return tlen(c);
  if (!Array.isArray(c)) return -1;
  let n = 0;
  for (const p of parts(c)) {
    if (p === null || typeof p !== 'object' || p.type !== 'text' || typeof p.text !== 'string') return -1;
    n += tlen(p.text);
  }
  return n;
}

// Whether `v` is an image or a document whose source the model reads as media (base64, URL,
// file), not as text (view::media_in).
function isMediaIn(v) {
  if (v === null || typeof v !== 'object' || (v.type !== 'image' && v.type !== 'document')) return false;
  const src = v.source;
  return src !== null && typeof src === 'object' && !Array.isArray(src) && src.type !== 'text' && src.type !== 'content';
}

// The JSON length of a server tool's result `b` without what the model does not read as
// text: what is counted apart (pushed on `media` by kind: 1 image or 2 document, counted as
// media; 12 a server-side tool search's `tool_reference`, counted as the tool it loads) and
// `encrypted_content` strings (web search pages, which the API expands itself).
// view::readable_object_units in Rust gives the same.
function readableLen(b, media) {
  const s = jsonText(b);
  if (s.indexOf('"encrypted_content"') === -1 && s.indexOf('"encryptedContent"') === -1 && s.indexOf('"source"') === -1 &&
      s.indexOf('"tool_reference"') === -1) {
    return COUNTER === null ? s.length : counted(s, 4);
  }
  let r;
  try {
    r = JSON.stringify(b, (key, v) => {
      // (`encryptedContent`: the AI SDK's name for it in a provider-executed result.)
      if ((key === 'encrypted_content' || key === 'encryptedContent') && typeof v === 'string') return undefined;
      if (isMediaIn(v)) {
        media.push(v.type === 'image' ? 1 : 2);
        return undefined;
      }
      if (v !== null && typeof v === 'object' && v.type === 'tool_reference') {
        media.push(12);
        return undefined;
      }
      return v;
    });
  } catch (e) {
    throw new TypeError(`a value that cannot be written as JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  const t = typeof r === 'string' ? r : '';
  return COUNTER === null ? t.length : counted(t, 4);
}

// ---- Messages of other ecosystems, described as the blocks the core knows ----------------
// Each part becomes the block of the same meaning: text, reasoning, media, a tool call (name
// and arguments), a tool result (its output's text, or nested parts). Parts the model never
// receives (UI step markers, sources, data parts) become no block; a part of unknown type
// or with a field of an unexpected type is counted by its JSON length, never as nothing.

export const mediaKind = (type) => (typeof type === 'string' && type.startsWith('image/') ? 1 : 2);

function pushBlock(out, k, text, json, id, name, path, tid, nested, flags = 0) {
  out.push(k, text, json, flags, nested, id, name, path, tid);
}

// A tool result's output that is the cleared placeholder (flag 1).
export const clearedFlag = (v) => (v === PLACEHOLDER ? 1 : 0);

export function strLen(v) {
  return typeof v === 'string' ? tlen(v) : jsonLen(v);
}

// The file a tool call's input names (`file_path`, `path` or `notebook_path`), if any.
export function pathIn(input) {
  if (input === null || typeof input !== 'object') return undefined;
  return typeof input.file_path === 'string' ? input.file_path
    : typeof input.path === 'string' ? input.path
    : typeof input.notebook_path === 'string' ? input.notebook_path : undefined;
}

function toolPath(input) {
  const p = pathIn(input);
  return p === undefined ? 0 : sym(p);
}

// The length of a text file's text (an AI SDK file part's `data`, or a UIMessage file part's
// `url`, of a text/* `mediaType`): base64 (or a data URL of it) read as the bytes it holds,
// a data URL of text as its text; bytes as their count. -1 for media, an http(s) URL (not
// read here) or anything else. Without a tokenizer the text is not decoded: its UTF-8 bytes
// stand for its length (the same for ASCII, more otherwise).
function fileTextLen(v, mediaType) {
  if (typeof mediaType !== 'string' || !mediaType.startsWith('text/')) return -1;
  if (COUNTER !== null) {
    const t = fileText(v);
    return t === undefined ? -1 : tlen(t);
  }
  if (typeof v === 'string') {
    if (v.startsWith('data:')) {
      const comma = v.indexOf(',');
      if (comma < 0) return -1;
      return v.lastIndexOf(';base64', comma) >= 0 ? base64Bytes(v, comma + 1) : v.length - comma - 1;
    }
    if (/^https?:\/\//.test(v)) return -1;
    return base64Bytes(v, 0);
  }
  if (isBytes(v)) return v.byteLength;
  if (v instanceof URL && v.protocol === 'data:') return fileTextLen(v.href, mediaType);
  return -1;
}

// The bytes the base64 text `s` holds from `from` on.
function base64Bytes(s, from) {
  let end = s.length;
  while (end > from && s.charCodeAt(end - 1) === 61 /* = */) end--;
  return Math.floor((end - from) * 3 / 4);
}

// The text of a text file (see fileTextLen), decoded as UTF-8; undefined when it is not one.
export function fileText(v) {
  if (typeof v === 'string') {
    if (v.startsWith('data:')) {
      const d = dataUrl.exec(v);
      if (!d) return undefined;
      if (d[2]) return base64Text(d[3]);
      try {
        return decodeURIComponent(d[3]);
      } catch (_) {
        return d[3];
      }
    }
    if (/^https?:\/\//.test(v)) return undefined;
    return base64Text(v);
  }
  // A copy: a browser's TextDecoder refuses a view of shared memory.
  if (isBytes(v)) return new TextDecoder().decode(new Uint8Array(v.buffer || v, v.byteOffset, v.byteLength).slice());
  // The AI SDK takes a `URL` too; one of a `data:` URL holds the file (the SDK sends its data).
  if (v instanceof URL && v.protocol === 'data:') return fileText(v.href);
  return undefined;
}

// Bytes of any realm (an ArrayBuffer, a SharedArrayBuffer, a view on one), told by their tag
// (`instanceof` fails for another realm's, a worker's or `vm`'s): counted and read as text as
// js_edit.js's mediaSource sends them.
export const isBytes = (v) => ArrayBuffer.isView(v) || /^\[object (Shared)?ArrayBuffer\]$/.test(Object.prototype.toString.call(v));

function base64Text(s) {
  try {
    if (typeof Buffer === 'function') return Buffer.from(s, 'base64').toString('utf8');
    const bin = atob(s.replace(/\s+/g, ''));
    const bytes = new Uint8Array(bin.length);
    for (let k = 0; k < bin.length; k++) bytes[k] = bin.charCodeAt(k);
    return new TextDecoder().decode(bytes);
  } catch (_) {
    return undefined;
  }
}

// A tool call: its name and its arguments (an object, or a JSON string as OpenAI sends them).
// `text`: the length of a free-form input counted as text (`input` is then '').
function pushCall(out, estimate, id, name, input, text = 0) {
  const n = typeof name === 'string' ? name : '';
  const json = estimate ? callLen(n, input) : 0;
  const path = typeof input === 'string' ? 0 : toolPath(input);
  pushBlock(out, 3, text, json, typeof id === 'string' ? sym(id) : 0, sym(n), path, 0, 0);
}

// A provider-executed tool's result (AI SDK) in Anthropic form, `<name>_tool_result`
// (js_edit.js writes it so; the count measures the same object, so both give one count).
const idText = (v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '');
export const serverResult = (id, name, value) => ({ type: `${idText(name)}_tool_result`, tool_use_id: idText(id), content: value === undefined ? null : value });

// The value of a ModelMessage provider-executed `tool-result` part (isProviderResult): its
// output's `value` (`{type: 'json', value}`…), else the output (or an older `result`) itself.
export function providerResultValue(p) {
  const o = p.output !== undefined ? p.output : p.result;
  return o !== null && typeof o === 'object' && 'value' in o ? o.value : o;
}

// A ChatOpenAI custom tool's call (`isCustomTool`, args `{input}`): its free-form input, text
// as in the Responses custom_tool_call ChatOpenAI sends for it; undefined for any other call.
export function customInput(c) {
  const a = callArgs(c);
  return c.isCustomTool === true && a !== null && typeof a === 'object' && typeof a.input === 'string' ? a.input : undefined;
}

// A provider-executed tool's result: a server tool result (as Anthropic's
// web_search_tool_result), measured as the JSON of `measured` (serverResult's block) without
// what the model does not read as text (readableLen: a fetched PDF or image counted as media,
// a tool search's tool_reference as the tool it loads, as in Anthropic form); never cleared.
function pushServerResult(out, estimate, id, measured) {
  const media = [];
  pushBlock(out, 6, 0, estimate ? readableLen(measured, media) : 0, 0, 0, 0, typeof id === 'string' ? sym(id) : 0, media.length);
  for (const k of media) pushBlock(out, k, 0, 0, 0, 0, 0, 0, 0);
}

// A tool result whose output is a string, an array of parts, or any other JSON value. Parts
// that are one text part of the cleared placeholder are cleared (flag 1), as a string is;
// `kept`: an output that has no form without its media (an OpenAI computer screenshot) or is
// no output to clear (keptOutput), marked as if cleared (never picked).
export function pushResult(out, estimate, id, output, kept = false) {
  const tid = typeof id === 'string' ? sym(id) : 0;
  if (Array.isArray(output)) {
    const one = output.length === 1 ? output[0] : undefined;
    const cleared = kept || (one !== null && typeof one === 'object' && one.text === PLACEHOLDER) ? 1 : 0;
    pushBlock(out, 5, 0, 0, 0, 0, 0, tid, output.length, cleared);
    // Measured even for a structure, as describeBlock measures a tool_result's blocks (another
    // part, a `search_result` ChatAnthropic passes on, as its JSON).
    for (const p of parts(output)) pushPart(p, true, out);
  } else {
    pushBlock(out, 5, output === undefined || output === null ? 0 : strLen(output), 0, 0, 0, 0, tid, 0,
      kept ? 1 : clearedFlag(output));
  }
}

// An AI SDK `tool-result` part's `output` (`text`, `json`, `error-text`, `error-json`,
// `content`, `execution-denied`; a bare `result` from older versions).
function pushAiOutput(out, estimate, id, p) {
  const o = p.output !== undefined ? p.output : p.result;
  if (o === null || typeof o !== 'object' || Array.isArray(o) || typeof o.type !== 'string') {
    pushResult(out, estimate, id, o);
    return;
  }
  switch (o.type) {
    case 'text': case 'error-text': case 'json': case 'error-json':
      pushBlock(out, 5, o.value === undefined ? 0 : strLen(o.value), 0, 0, 0, 0, typeof id === 'string' ? sym(id) : 0, 0,
        clearedFlag(o.value));
      return;
    case 'content': pushResult(out, estimate, id, Array.isArray(o.value) ? o.value : []); return;
    // A denial has no output to clear: counted, marked as if cleared (never picked).
    case 'execution-denied':
      pushBlock(out, 5, typeof o.reason === 'string' ? tlen(o.reason) : 0, 0, 0, 0, 0, typeof id === 'string' ? sym(id) : 0, 0, 1);
      return;
    default: pushBlock(out, 5, jsonLen(o), 0, 0, 0, 0, typeof id === 'string' ? sym(id) : 0, 0);
  }
}

// The opaque reasoning an AI SDK reasoning part keeps in its provider options
// (`providerOptions`; a UIMessage's `providerMetadata`): @ai-sdk/anthropic's `redactedData`
// (a redacted_thinking block), @ai-sdk/openai's `reasoningEncryptedContent` (a reasoning
// item's encrypted_content), under whichever provider name; undefined when none.
export function opaqueReasoning(p) {
  for (const o of [p.providerOptions, p.providerMetadata]) {
    if (o === null || typeof o !== 'object') continue;
    for (const k of Object.keys(o)) {
      const v = o[k];
      if (v === null || typeof v !== 'object') continue;
      if (typeof v.redactedData === 'string' && v.redactedData.length > 0) return v.redactedData;
      const e = v.reasoningEncryptedContent;
      if (typeof e === 'string' && e.length > 0) return e;
    }
  }
  return undefined;
}

// One content part of any ecosystem: pushes exactly one block (with its nested blocks).
export function pushPart(p, estimate, out) {
  if (typeof p === 'string') { pushBlock(out, 0, tlen(p), 0, 0, 0, 0, 0, 0); return; }
  if (p === null || typeof p !== 'object' || Array.isArray(p)) {
    pushBlock(out, 9, 0, estimate ? jsonLen(p) : 0, 0, 0, 0, 0, 0);
    return;
  }
  switch (p.type) {
    case 'text': case 'input_text': case 'output_text': case 'summary_text': case 'reasoning_text':
      if (typeof p.text === 'string') { pushBlock(out, 0, tlen(p.text), 0, 0, 0, 0, 0, 0); return; }
      break;
    case 'refusal':
      if (typeof p.refusal === 'string') { pushBlock(out, 0, tlen(p.refusal), 0, 0, 0, 0, 0, 0); return; }
      break;
    case 'reasoning': {
      const t = typeof p.text === 'string' ? p.text : p.reasoning;
      if (typeof t === 'string') {
        // No text: the provider's opaque reasoning, as redacted thinking (its Anthropic and
        // OpenAI Responses forms count so).
        const d = t.length === 0 ? opaqueReasoning(p) : undefined;
        if (d !== undefined) pushBlock(out, 8, tlen(d), 0, 0, 0, 0, 0, 0);
        else pushBlock(out, 7, tlen(t), 0, 0, 0, 0, 0, 0);
        return;
      }
      break;
    }
    case 'thinking': case 'redacted_thinking': case 'tool_result': case 'compaction':
      describeBlock(p, estimate, out);
      return;
    case 'image': case 'image_url': case 'input_image':
    case 'image-data': case 'image-url': case 'image-file-id': case 'computer_screenshot':
      pushBlock(out, 1, 0, 0, 0, 0, 0, 0, 0);
      return;
    case 'document': {
      const n = plainTextLen(p.source);
      if (n >= 0) { pushBlock(out, 2, n, 0, 0, 0, 0, 0, 0, PLAIN_TEXT); return; }
      pushBlock(out, 2, 0, 0, 0, 0, 0, 0, 0);
      return;
    }
    // LangChain's plain-text file: its `text`; else, as a file is, the text its `data`
    // (base64 or bytes) holds.
    case 'text-plain':
      if (typeof p.text === 'string') { pushBlock(out, 0, tlen(p.text), 0, 0, 0, 0, 0, 0); return; }
    // falls through
    // A Responses `input_file` too: the API gives the model the text of a text file (its data
    // URL's type).
    case 'file': case 'file-data': case 'input_file': {
      // The `context` @ai-sdk/anthropic sends with a document (an AI SDK file part's provider
      // options, a UIMessage's provider metadata): counted as an Anthropic document's is.
      const x = (p.providerOptions || p.providerMetadata)?.anthropic?.context;
      const c = typeof x === 'string' ? tlen(x) : 0, type = p.mediaType || p.mimeType || p.mime_type || /^data:([^;,]*)/.exec(p.file_data)?.[1];
      // A text file (an AI SDK file part of a text/* type) is read as its text, as is
      // LangChain's older plain-text file (`source_type: 'text'`, its `text`).
      const n = p.source_type === 'text' && typeof p.text === 'string' ? tlen(p.text) : fileTextLen(p.data ?? p.url ?? p.file_data, type);
      if (n >= 0) { pushBlock(out, 2, n + c, 0, 0, 0, 0, 0, 0, PLAIN_TEXT); return; }
      const k = mediaKind(type);
      pushBlock(out, k, k === 2 ? c : 0, 0, 0, 0, 0, 0, 0);
      return;
    }
    // Audio and video too: media the API view sends as documents (stripped as `[document]`).
    case 'media': case 'file-url': case 'file-id': case 'input_audio': case 'audio': case 'video':
      pushBlock(out, mediaKind(p.mediaType || p.mimeType || p.mime_type), 0, 0, 0, 0, 0, 0, 0);
      return;
    // Gemini's own parts (LangChain keeps them in a ChatGoogle message's content): media.
    case 'inlineData': case 'fileData': {
      const d = p[p.type];
      if (d !== null && typeof d === 'object') {
        pushBlock(out, mediaKind(d.mimeType || d.mime_type), 0, 0, 0, 0, 0, 0, 0);
        return;
      }
      break;
    }
    case 'tool-call': case 'tool_use': case 'tool_call': case 'server_tool_use': case 'server_tool_call':
      pushCall(out, estimate, p.toolCallId !== undefined ? p.toolCallId : p.id,
        p.toolName !== undefined ? p.toolName : p.name, 'input' in p ? p.input : p.args);
      return;
    case 'tool-result':
      pushAiOutput(out, estimate, p.toolCallId, p);
      return;
    // @ai-sdk/anthropic's tool reference in a tool's output (a client-side tool search), which
    // it sends as a tool_reference block: counted as the tool it loads, as that block is.
    case 'custom':
      if (p.providerOptions?.anthropic?.type === 'tool-reference') { pushBlock(out, 12, 0, 0, 0, 0, 0, 0, 0); return; }
      break;
    // A piece of a streamed call's arguments (LangChain keeps Anthropic's deltas in the
    // message): the call holds them, counted there; this block counts nothing. Nor do the AI
    // SDK's tool approval request and response: the SDK leaves them out of every prompt it
    // sends (the model reads the call and its result, or the `execution-denied` result with
    // the reason) — but a response about a provider-executed tool (`providerExecuted`, as
    // convertToModelMessages marks it), which the provider is sent (an OpenAI MCP approval).
    case 'tool-approval-response':
      if (p.providerExecuted === true) break;
    // falls through
    case 'input_json_delta': case 'tool-approval-request':
      pushBlock(out, 9, 0, 0, 0, 0, 0, 0, 0);
      return;
    default:
      // An Anthropic server tool's result (web_search_tool_result, code_execution_tool_result,
      // mcp_tool_result, …), which ChatAnthropic keeps in an AIMessage's content as the API
      // gave it: read as that block is in Anthropic shape (paired with its server_tool_use,
      // what the model does not read left out).
      if (isServerResultBlock(p)) { describeBlock(p, estimate, out); return; }
      break;
  }
  pushBlock(out, 9, 0, estimate ? jsonLen(p) : 0, 0, 0, 0, 0, 0);
}

// Whether part `p` (an object) is an Anthropic server tool's result block (view.rs
// BlockKind::ServerToolResult: a `…_tool_result` type with a `tool_use_id`).
export function isServerResultBlock(p) {
  return typeof p.type === 'string' && p.type.endsWith('_tool_result') && typeof p.tool_use_id === 'string';
}

// Pushes the blocks of a content field (a string, an array of parts, or nothing); returns
// how many top-level blocks it pushed.
function pushContent(c, estimate, out) {
  if (typeof c === 'string') {
    if (c.length === 0) return 0;
    pushBlock(out, 0, tlen(c), 0, 0, 0, 0, 0, 0);
    return 1;
  }
  if (Array.isArray(c)) {
    for (const p of parts(c)) pushPart(p, estimate, out);
    return c.length;
  }
  if (c === undefined || c === null) return 0;
  pushBlock(out, 9, 0, estimate ? jsonLen(c) : 0, 0, 0, 0, 0, 0);
  return 1;
}

// A UIMessage tool part (`tool-<name>` or `dynamic-tool`): the call, and its result once
// there is one (`output-available`: the output; `output-error`: the error text;
// `output-denied`: the denial). Returns how many blocks it pushed (uiToolWidth in js_edit.js).
// A part still streaming its input (the stream stopped while the model wrote it) is no call:
// the AI SDK does not send it (convertToModelMessages leaves it out); nothing is pushed.
function pushUiTool(p, estimate, out) {
  if (p.state === 'input-streaming') return 0;
  const name = p.type === 'dynamic-tool' ? p.toolName : p.type.slice(5);
  pushCall(out, estimate, p.toolCallId, name, uiInput(p));
  const tid = typeof p.toolCallId === 'string' ? sym(p.toolCallId) : 0;
  if (p.providerExecuted === true && (p.state === 'output-available' || p.state === 'output-error')) {
    // A provider-executed tool's result: a server tool result, never cleared.
    pushServerResult(out, estimate, p.toolCallId, serverResult(p.toolCallId, name, p.state === 'output-error' ? p.errorText : p.output));
    return 2;
  }
  if (p.state === 'output-denied') {
    const reason = uiDenial(p);
    pushBlock(out, 5, tlen(reason), 0, 0, 0, 0, tid, 0, 1);
    return 2;
  }
  if (p.state === 'output-available') {
    pushBlock(out, 5, p.output === undefined ? 0 : strLen(p.output), 0, 0, 0, 0, tid, 0, clearedFlag(p.output));
    return 2;
  }
  if (p.state === 'output-error') {
    pushBlock(out, 5, p.errorText === undefined ? 0 : strLen(p.errorText), 0, 0, 0, 0, tid, 0, clearedFlag(p.errorText));
    return 2;
  }
  return 1;
}

// The input a UIMessage tool part's call is sent with: its `input`; for a call whose input did
// not parse (`output-error` with no `input`), the text the model wrote (`rawInput`), as
// convertToModelMessages sends it.
export const uiInput = (p) => (p.state === 'output-error' && p.input == null ? p.rawInput : p.input);

// Describes a message of another ecosystem as [4, n] and n blocks.
export function describeForeign(m, shape, estimate, out) {
  const at = out.length;
  out.push(4, 0);
  let n = 0;
  switch (shape) {
    case AI_MODEL:
      if (m.role === 'assistant' && Array.isArray(m.content)) {
        // A tool result inside an assistant message is a provider-executed tool's (its
        // `tool-call` has `providerExecuted`): a server tool result, as Anthropic's
        // web_search_tool_result is, never cleared by micro-compaction.
        for (const p of parts(m.content)) {
          if (isProviderResult(p)) pushServerResult(out, estimate, p.toolCallId, serverResult(p.toolCallId, p.toolName, providerResultValue(p)));
          else pushPart(p, estimate, out);
        }
        n = m.content.length;
        break;
      }
      n = pushContent(m.content, estimate, out);
      break;
    case AI_UI:
      if (!Array.isArray(m.parts)) { n = pushContent(m.content, estimate, out); break; }
      for (const p of parts(m.parts)) {
        if (p === null || typeof p !== 'object') { pushPart(p, estimate, out); n++; continue; }
        const t = p.type;
        if (typeof t !== 'string') { pushPart(p, estimate, out); n++; continue; }
        if (t === 'step-start' || t.startsWith('source-') || t.startsWith('data-')) continue;
        // The provider's compaction (it begins the step the API answered with it): the API
        // reads from there on (the API view leaves the steps before out), so a count drops
        // what came before.
        if (estimate && isAiCompaction(p)) out.length = at + 2, n = 0;
        if (t === 'dynamic-tool' || t.startsWith('tool-')) { n += pushUiTool(p, estimate, out); continue; }
        if (t === 'file') { pushPart(p, estimate, out); n++; continue; }
        pushPart(p, estimate, out);
        n++;
      }
      break;
    case CHAT:
      // A `tool` message with no `tool_call_id` answers no call: [6, 0], which the Rust side
      // reports as that missing field.
      if (m.role === 'tool' && typeof m.tool_call_id !== 'string') {
        out.length = at;
        out.push(6, 0);
        return;
      }
      n = describeChat(m, estimate, out);
      break;
    case RESPONSES:
      n = describeResponsesItem(m, estimate, out);
      break;
    case LANGCHAIN: {
      const f = lcFields(m);
      // A `{role, content, tool_calls?, tool_call_id?}` dict, which LangChain reads as
      // OpenAI Chat's (coerceMessageLikeToMessage): read as one.
      if (f === undefined) { n = describeChat(m, estimate, out); break; }
      const kind = lcKind(m, f);
      // A ToolMessage; a FunctionMessage, as OpenAI Chat's `role: 'function'` message.
      const fn = kind === 0 ? lcFunctionName(m, f) : undefined;
      if (kind === 0 && (typeof f.tool_call_id === 'string' || fn !== undefined)) {
        pushResult(out, estimate, fn === undefined ? f.tool_call_id : legacyId(fn), f.content);
        n = 1;
        break;
      }
      n = pushLcContent(f, estimate, out);
      for (const c of lcToolCalls(f)) {
        const input = customInput(c);
        if (input !== undefined) pushCall(out, estimate, c.id, callName(c), '', estimate ? tlen(input) : 0);
        else pushCall(out, estimate, c.id, callName(c), callArgs(c));
        n++;
      }
      n += pushLegacy(out, estimate, legacyCall(m, f));
      // An audio reply from ChatOpenAI: OpenAI Chat's `audio`, kept in additional_kwargs; the
      // reasoning and the built-in tools' items kept there (after every other block: the
      // content's blocks keep their numbers).
      if (kind === 1) n += pushAudio(lcAudio(f), out) + pushLcItems(f, estimate, out);
      break;
    }
    default:
      break;
  }
  out[at + 1] = n;
}

// Where the message being described sits (its array and index: what describeChat needs for
// the ids of legacy function calls); null when not known (an estimate needs no ids).
let readArr = null, readAt = 0;
// For the readers of js_index.js, which describe messages too (null: none).
export function readingAt(arr, i) {
  readArr = arr;
  readAt = i;
}

// OpenAI Chat's legacy function calling has no ids: a call and its result pair by order (a
// `role: 'function'` message answers the latest assistant `function_call` before it of the
// same `name`). The call of message j reads as the tool call `function_call@j`, and a result
// as its call's (undefined when no call of its name comes before it).
export const legacyCallId = (j) => `function_call@${j}`;
// LangChain keeps the same calls and answers (legacyCall, lcFunctionName): read alike.
export function legacyResultId(arr, i, name) {
  for (let j = Math.min(i, arr.length) - 1; j >= 0; j--) {
    const a = arr[j];
    if (a !== null && typeof a === 'object' && legacyCall(a, a.role === 'assistant' ? undefined : lcFields(a))?.name === name) return legacyCallId(j);
  }
  return undefined;
}

// The legacy function call of message `a`: OpenAI Chat's `function_call` (`f` undefined), or,
// of a LangChain AI message with fields `f` and no tool calls, the one ChatOpenAI keeps in
// `additional_kwargs.function_call` (and sends as Chat's); undefined when there is none.
export function legacyCall(a, f) {
  const fc = f === undefined ? a.function_call : lcKind(a, f) === 1 && lcCalls(f).length === 0 ? f.additional_kwargs?.function_call : undefined;
  return fc !== null && typeof fc === 'object' ? fc : undefined;
}

// The function a LangChain FunctionMessage `m` (fields `f`) answers: its `name` (ChatOpenAI
// sends it as a Chat `role: 'function'` message); undefined for another message.
export const lcFunctionName = (m, f) =>
  /^(function|FunctionMessage)$/.test(m.lc === 1 ? m.id[m.id.length - 1] : m.type ?? m._getType?.()) && typeof f.name === 'string' ? f.name : undefined;

// Pushes legacy call `fc` (legacyCall) of the message being read (its id: legacyCallId); returns
// how many blocks it pushed.
function pushLegacy(out, estimate, fc) {
  if (fc === undefined) return 0;
  pushCall(out, estimate, interning && readArr !== null ? legacyCallId(readAt) : undefined, fc.name, fc.arguments);
  return 1;
}

// The id of a legacy result to the function `name` in the message being read (legacyResultId).
const legacyId = (name) => (interning && readArr !== null ? legacyResultId(readArr, readAt, name) : undefined);

// The reasoning an OpenAI-compatible server adds to a Chat reply, which the caller sends back
// (the model reads it within a tool loop): `reasoning_content` (DeepSeek, older vLLM), or
// `reasoning` (vLLM since it dropped `reasoning_content`, OpenRouter); undefined when none.
export function chatReasoning(m) {
  const r = typeof m.reasoning_content === 'string' && m.reasoning_content !== '' ? m.reasoning_content : m.reasoning;
  return typeof r === 'string' && r !== '' ? r : undefined;
}

// An OpenAI Chat message (also a LangChain `{role, …}` dict) as blocks: its reasoning, its
// content, its refusal, its tool calls; returns how many top-level blocks it pushed.
function describeChat(m, estimate, out) {
  if (m.role === 'tool' || m.role === 'function') {
    const id = m.role === 'function' ? legacyId(m.name) : m.tool_call_id;
    pushResult(out, estimate, id, typeof m.content === 'string' || Array.isArray(m.content) ? m.content : '');
    return 1;
  }
  let n = 0;
  const r = chatReasoning(m);
  if (r !== undefined) {
    pushBlock(out, 7, tlen(r), 0, 0, 0, 0, 0, 0);
    n++;
  }
  n += pushContent(m.content, estimate, out);
  // A refusal (`content: null`) is the assistant's answer, which the model reads back.
  if (typeof m.refusal === 'string' && m.refusal.length > 0) {
    pushBlock(out, 0, tlen(m.refusal), 0, 0, 0, 0, 0, 0);
    n++;
  }
  if (Array.isArray(m.tool_calls)) {
    for (const c of parts(m.tool_calls)) {
      pushChatCall(out, estimate, c);
      n++;
    }
  }
  return n + pushLegacy(out, estimate, legacyCall(m)) + pushAudio(m.audio, out);
}

// An assistant's audio reply (OpenAI Chat's `audio: {id, data, transcript}`): its transcript
// as text, its audio (`data`) as media, as input_audio is; returns how many blocks it pushed
// (audioBlocks in js_edit.js).
function pushAudio(a, out) {
  const t = a && a.transcript;
  if (typeof t === 'string' && t) pushBlock(out, 0, tlen(t), 0, 0, 0, 0, 0, 0);
  if (a && a.data) pushBlock(out, 2, 0, 0, 0, 0, 0, 0, 0);
  return (typeof t === 'string' && t ? 1 : 0) + (a && a.data ? 1 : 0);
}

// Whether a LangChain AI message (fields `f`) is in LangChain's standard form
// (`response_metadata.output_version: 'v1'`, ChatOpenAI's `outputVersion: 'v1'` and the
// integrations built on it): its content then holds its reasoning and its built-in tools'
// items as standard blocks, and ChatOpenAI sends it from those blocks alone, on Chat
// Completions and on the Responses API alike; what `additional_kwargs` keeps beside them
// (reasoning, reasoning_content, tool_outputs, audio) is not sent.
const lcStandard = (f) => f.response_metadata?.output_version === 'v1';

// The audio reply a LangChain AI message's fields `f` hold: ChatOpenAI keeps OpenAI Chat's
// `audio: {id, data, expires_at, transcript}` in `additional_kwargs.audio` (its content is then
// empty); undefined when there is none or it is not sent (lcStandard).
export function lcAudio(f) {
  if (lcStandard(f)) return undefined;
  const extra = f.additional_kwargs;
  const a = extra !== null && typeof extra === 'object' ? extra.audio : undefined;
  return a !== null && typeof a === 'object' ? a : undefined;
}

// The OpenAI Responses items a LangChain AI message (fields `f`) holds beside its content and
// tool_calls, as LangChain's own reading (contentBlocks) takes them:
// - an OpenAI-compatible server's reasoning (DeepSeek, vLLM, xAI, Ollama), which ChatOpenAI and
//   the integrations built on it keep as Chat's `additional_kwargs.reasoning_content`: read as
//   a reasoning item of that text;
// - ChatOpenAI's on the Responses API, which it sends back as those items: the response's
//   reasoning items (those of `response_metadata.output` when it is there, else
//   `additional_kwargs.reasoning`) and its built-in tools' items (`additional_kwargs.tool_outputs`:
//   mcp_call, code_interpreter_call, web_search_call, …; of a response not streamed, which has
//   no `response_metadata.output`, only the kinds ChatOpenAI sends back: computer, MCP, code
//   interpreter and image generation calls). Left out, as read elsewhere: a
//   reasoning item with text when the content holds a `reasoning` part of it (ChatOpenAI writes
//   its summary there too: a part without an id, or with the item's), an item whose call is in
//   tool_calls (a streamed computer or custom tool call), a generated image whose content part
//   (same `id`) is there.
// None for a message in the standard form (lcStandard): its content holds them.
export function lcItems(f) {
  if (lcStandard(f)) return [];
  const x = f.additional_kwargs, o = f.response_metadata?.output, c = f.content, items = [];
  const has = (t, id) => Array.isArray(c) && c.some((p) => p?.type === t && p.id === id);
  const rc = x?.reasoning_content;
  if (typeof rc === 'string' && rc !== '') items.push({ type: 'reasoning', summary: [{ type: 'summary_text', text: rc }] });
  for (const r of Array.isArray(o) && o.length > 0 ? parts(o) : [x?.reasoning]) {
    if (r?.type === 'reasoning' && !(reasoningTexts(r).some((t) => t !== '') &&
      (has('reasoning', undefined) || (typeof r.id === 'string' && has('reasoning', r.id))))) items.push(r);
  }
  const outs = x?.tool_outputs;
  if (Array.isArray(outs)) {
    const ids = lcCalls(f).map((t) => t?.id), all = Array.isArray(o) && o.length > 0;
    for (const it of parts(outs)) {
      if (typeof it?.type === 'string' && (all || /^(computer|mcp|code_interpreter|image_generation)_call$/.test(it.type)) &&
        !(typeof it.call_id === 'string' && ids.includes(it.call_id)) &&
        !(it.type === 'image_generation_call' && typeof it.id === 'string' && has('image', it.id))) items.push(it);
    }
  }
  return items;
}

// Whether an item of lcItems is read as a Responses item reads (reasoning, a generated image,
// code interpreter's code, logs and images); any other is read as its JSON (what a Responses
// item of its kind reads as, but for a call or an output: those pair with other items by
// call_id, and a LangChain conversation's calls are its tool_calls).
export const lcItemRead = (it) => /^(reasoning|image_generation_call|code_interpreter_call)$/.test(it.type);

// The texts of a Responses reasoning item (its summary's and content's; a sparse array with a
// huge `length` refused by `parts` before it is walked).
export const reasoningTexts = (m) => [m.summary, m.content].flatMap((l) => (Array.isArray(l) ? parts(l).filter((p) => typeof p?.text === 'string').map((p) => p.text) : []));

// Pushes the items of lcItems; returns how many blocks.
function pushLcItems(f, estimate, out) {
  let n = 0;
  for (const it of lcItems(f)) {
    if (lcItemRead(it)) n += describeResponsesItem(it, estimate, out);
    else {
      pushBlock(out, 9, 0, estimate ? jsonLen(it) : 0, 0, 0, 0, 0, 0);
      n++;
    }
  }
  return n;
}

// A tool call element `c` of `tool_calls` (an object): OpenAI's `{id, function: {name,
// arguments}}` (or `custom: {name, input}`), or LangChain's `{id, name, args}` (its messages'
// and the dicts its coerceMessageLikeToMessage reads, which also takes OpenAI's form).
function fnOf(c) {
  const fn = c.function || c.custom;
  return fn !== null && typeof fn === 'object' ? fn : undefined;
}
export const isCall = (c) => c !== null && typeof c === 'object' && (fnOf(c) !== undefined || typeof c.name === 'string');
export function callName(c) {
  const fn = fnOf(c);
  return fn !== undefined ? fn.name : c.name;
}
export function callArgs(c) {
  const fn = fnOf(c);
  return fn !== undefined ? (fn.arguments !== undefined ? fn.arguments : fn.input) : c.args;
}

// Pushes the block of a `tool_calls` element: a call (isCall), else a part.
function pushChatCall(out, estimate, c) {
  if (!isCall(c)) return pushPart(c, estimate, out);
  const input = callArgs(c);
  // A custom tool's free-form input (`custom.input`) is text, as a Responses custom call's.
  if (typeof input === 'string' && c.custom !== undefined && c.custom === fnOf(c)) pushCall(out, estimate, c.id, callName(c), '', estimate ? tlen(input) : 0);
  else pushCall(out, estimate, c.id, callName(c), input);
}

// A LangChain message's content parts (fields `f`) as blocks. Streamed Anthropic chunks
// leave a `tool_use` part with `input: ""` (the arguments came as `input_json_delta` parts,
// parsed into `tool_calls`): the call's arguments are taken from `tool_calls` (the deltas
// count nothing: pushPart).
function pushLcContent(f, estimate, out) {
  const c = f.content;
  if (!Array.isArray(c)) return pushContent(c, estimate, out);
  const mirrored = lcMirrored(f);
  for (let k = 0, nk = parts(c).length; k < nk; k++) {
    const p = c[k];
    if (p !== null && typeof p === 'object') {
      const t = p.type;
      if (t === 'tool_use' && typeof p.input === 'string') {
        pushCall(out, estimate, p.id, p.name, lcPartInput(f, p));
        continue;
      }
      // A Gemini `functionCall` part that tool_calls holds too: counted there.
      if (mirrored !== null && mirrored.has(k)) {
        pushBlock(out, 9, 0, 0, 0, 0, 0, 0, 0);
        continue;
      }
    }
    pushPart(p, estimate, out);
  }
  return c.length;
}

// The indexes of a LangChain message's content parts (fields `f`) that are Gemini
// `functionCall` parts (`{type: 'functionCall', functionCall: {name, args}}`, no id) whose call
// its `tool_calls` also holds, as @langchain/google returns them: each matched, in order, to a
// call of the same name. Null when there is none.
export function lcMirrored(f) {
  const c = f.content;
  let mirrored = null, calls = null;
  for (let k = 0, nk = parts(c).length; k < nk; k++) {
    const p = c[k];
    if (p === null || typeof p !== 'object' || p.type !== 'functionCall') continue;
    const fc = p.functionCall;
    if (fc === null || typeof fc !== 'object') continue;
    if (calls === null) calls = lcCalls(f).filter((x) => x !== null && typeof x === 'object');
    const j = calls.findIndex((x) => callName(x) === fc.name);
    if (j < 0) continue;
    calls.splice(j, 1);
    if (mirrored === null) mirrored = new Set();
    mirrored.add(k);
  }
  return mirrored;
}

// The input of a LangChain content `tool_use` part `p` whose `input` is a string (what
// streaming leaves): the parsed arguments of its call in `tool_calls`, else that string.
export function lcPartInput(f, p) {
  const calls = f.tool_calls;
  if (Array.isArray(calls)) {
    for (const c of parts(calls)) {
      if (c !== null && typeof c === 'object' && c.id === p.id && c.args !== undefined) return c.args;
    }
  }
  return p.input;
}

// The `tool_calls` of a LangChain message's fields `f` that are calls: objects, and not also
// written in its content (as Anthropic models return them), so that each counts once.
export function lcToolCalls(f) {
  const calls = lcCalls(f);
  if (calls.length === 0) return calls;
  const seen = new Set();
  if (Array.isArray(f.content)) {
    for (const p of parts(f.content)) if (p !== null && typeof p === 'object' && typeof p.id === 'string') seen.add(p.id);
  }
  return calls.filter((c) => c !== null && typeof c === 'object' && !seen.has(c.id));
}

// A LangChain AI message's tool calls ({id, name, args}): `tool_calls`, or in what older
// LangChain versions stored, only OpenAI's form in `additional_kwargs.tool_calls` (which
// LangChain itself reads back into `tool_calls` when it loads the message).
export function lcCalls(f) {
  // Present, it is LangChain's own reading; but when it is empty and calls did not parse
  // (`invalid_tool_calls`), ChatOpenAI sends the raw calls it keeps in
  // `additional_kwargs.tool_calls` (convertMessagesToCompletionsMessageParams), and a
  // ToolMessage may answer them: those are the message's calls.
  const tc = f.tool_calls;
  if (Array.isArray(tc) && (tc.length || !f.invalid_tool_calls?.length)) return parts(tc);
  const extra = f.additional_kwargs;
  const openai = extra !== null && typeof extra === 'object' ? extra.tool_calls : undefined;
  if (!Array.isArray(openai)) return [];
  return parts(openai).map((c) => {
    const fn = c !== null && typeof c === 'object' ? c.function : undefined;
    if (fn === null || typeof fn !== 'object') return c;
    return { id: c.id, name: fn.name, args: parseArgs(fn.arguments) };
  });
}

// An OpenAI Responses item as blocks.
function describeResponsesItem(m, estimate, out) {
  switch (m.type) {
    case 'message': case undefined:
      return pushContent(m.content, estimate, out);
    case 'function_call':
      pushCall(out, estimate, m.call_id, m.name, m.arguments);
      return 1;
    case 'custom_tool_call': {
      // Its input is free-form text, not JSON: counted as text.
      const free = typeof m.input === 'string';
      pushCall(out, estimate, m.call_id, m.name, free ? '' : m.input, free && estimate ? tlen(m.input) : 0);
      return 1;
    }
    case 'reasoning': {
      let text = 0;
      for (const t of reasoningTexts(m)) text += tlen(t);
      if (text > 0) pushBlock(out, 7, text, 0, 0, 0, 0, 0, 0);
      else pushBlock(out, 8, typeof m.encrypted_content === 'string' ? tlen(m.encrypted_content) : 0, 0, 0, 0, 0, 0, 0);
      return 1;
    }
    case 'compaction':
      pushBlock(out, 8, typeof m.encrypted_content === 'string' ? tlen(m.encrypted_content) : 0, 0, 0, 0, 0, 0, 0);
      return 1;
    case 'image_generation_call':
      // The generated image (base64 in `result`) counts as an image, not as its text.
      if (typeof m.result === 'string' && m.result.length > 0) {
        pushBlock(out, 1, 0, 0, 0, 0, 0, 0, 0);
        return 1;
      }
      pushBlock(out, 9, 0, estimate ? jsonLen(m) : 0, 0, 0, 0, 0, 0);
      return 1;
    case 'code_interpreter_call': {
      // Its code and logs by their JSON, each image it made as an image (never its base64).
      const outs = Array.isArray(m.outputs) ? m.outputs : [];
      const rest = outs.filter((o) => o === null || typeof o !== 'object' || o.type !== 'image');
      const images = outs.length - rest.length;
      pushBlock(out, 9, 0, estimate ? jsonLen(images === 0 ? m : { ...m, outputs: rest }) : 0, 0, 0, 0, 0, 0);
      for (let k = 0; k < images; k++) pushBlock(out, 1, 0, 0, 0, 0, 0, 0, 0);
      return 1 + images;
    }
    default: {
      const c = hostedCall(m);
      if (c !== undefined) {
        pushCall(out, estimate, c[0], c[1], c[2]);
        return 1;
      }
      const o = responsesOutput(m);
      if (o !== undefined) {
        pushResult(out, estimate, outputCallId(m), o, keptOutput(m));
        return 1;
      }
      pushBlock(out, 9, 0, estimate ? jsonLen(m) : 0, 0, 0, 0, 0, 0);
      return 1;
    }
  }
}

// Describes the content of arr[start..end]. Two numbers per message, then its blocks:
// [0, 0] no content (or not a message), [1, n] string content of n UTF-16 units, [2, n] an
// attachment payload of n JSON units, [3, 0] content of a wrong type, [4, n] n blocks, [5, 0]
// a line whose `message` is not an object, [6, 0] an OpenAI Chat `tool` message with no
// `tool_call_id`. The strings the symbols refer to are fetched with `takeStrings`; an estimate (which needs
// no ids or names) interns nothing and leaves every symbol 0.
// `shape` is the array's (the Rust side has read every message of the range): messages of
// another ecosystem are described by its rules, plain ones included.
function describeContents_(arr, start, end, estimate, shape) {
  strings = [];
  symbols = new Map();
  interning = !estimate;
  const out = [];
  for (let i = start; i < end; i++) {
    readArr = arr;
    readAt = i;
    describeOne(arr[i], shape, estimate, out);
  }
  readArr = null;
  return out; // a plain array: see PLAIN_ARRAYS
}

// Describes one message (see describeContents_).
export function describeOne(m, shape, estimate, out) {
  if (m === null || typeof m !== 'object') { out.push(0, 0); return; }
  if (shape >= AI_MODEL) {
    describeForeign(m, shape, estimate, out);
    return;
  }
  if (m.type === 'attachment') {
    if (m.attachment === undefined) out.push(0, 0);
    else out.push(2, jsonLen(m.attachment));
    return;
  }
  // A line whose `message` is there but not an object (5: named by the Rust side).
  const inner = m.message;
  if (inner !== undefined && inner !== null && (typeof inner !== 'object' || Array.isArray(inner)) && isLine(m)) {
    out.push(5, 0);
    return;
  }
  const c = contentOf(m);
  if (c === undefined || c === null) out.push(0, 0);
  else if (typeof c === 'string') out.push(1, tlen(c));
  else if (!Array.isArray(c)) out.push(3, 0);
  else {
    out.push(4, c.length);
    for (const b of parts(c)) describeBlock(b, estimate, out);
  }
}

// What a count at the end of `arr` reads, in one pass and one crossing (see
// JsConversation::read_tail): the readers above answer the same questions one call each.
// Writes into `f` (numbers, `cap` of them from F[fb]) and `w` (the content words, `wcap`
// from W[wb]): buffers in WASM memory the Rust side keeps from call to call, seen through
// views on that memory kept here (no allocation on either side):
//   f[0..7)  latestUsage_'s answer for the whole array: status, index, present mask, usage;
//   f[7] n, f[8] c, f[9] sf, f[10] from, f[11] the shape the contents were described by
//     (-1: none described), f[12] the number of words in `w`, f[13] the array's length
//     (written first, so the Rust side learns it from this crossing alone);
//   f[14..14+n)  the headers of arr[len-n..len), the last message's first;
//   then the c earlier lines of the anchor response, each what previousSibling_ gives for the
//     one before (descending);
//   then len - sf flags: sameResponse_(arr, k, anchor) for the assistant messages k of
//     arr[sf..len) (0 for others);
//   then len - from offsets into `w` (-1: not described), one per message of arr[from..len):
//     describeContents_(…, estimate = true) of each described message.
// Returns how much of `f` it used; -1 when `f` is too small, -3 when `w` is (f[12] then
// says how many words it needs): the Rust side grows them and asks again; -2 when reading
// threw and -4 when `arr` is not an array (the Rust side then asks the readers, which
// report it).
// Which messages are described is only what is likely asked for (never the anchor
// response's own lines when its usage is final, nor lines no count reads at either end);
// the Rust side reads any other one itself. With a tokenizer in effect nothing is described
// (its errors must come from what the count reads).
const TAIL_HEAD = 14;
function tail_(arr, shape, F, fb, cap, W, wb, wcap) {
  const len = arr.length;
  if (cap < TAIL_HEAD) return -1;
  F[fb + 13] = len;
  let n = 0; // headers written, from the end
  let status = 0, at = -1;
  F[fb + 2] = 0;
  for (let i = len - 1; i >= 0; i--) {
    const m = arr[i];
    const full = onChain(arr, i, header(m));
    if (TAIL_HEAD + n >= cap) return -1;
    F[fb + TAIL_HEAD + n++] = full;
    // The scan reads headers as latestUsage_ does (a {role, content} message's `usage` is
    // seen whatever its parts).
    const h = (full & 8) ? full : onChain(arr, i, header(m, false));
    if ((h & 7) === 7) { status = 3; at = i; break; }
    if (h & 16) continue;
    if (h & 32) { status = 2; at = i; break; }
    if ((h & STARTS_CONTEXT) && !(h & 64)) { status = 4; at = i; break; }
    if ((h & 7) === 1 && (h & 64)) {
      status = 1; at = i;
      F[fb + 2] = readUsage_(arr, i, USAGE_OUT);
      F[fb + 3] = USAGE_OUT[0]; F[fb + 4] = USAGE_OUT[1]; F[fb + 5] = USAGE_OUT[2]; F[fb + 6] = USAGE_OUT[3];
      break;
    }
  }
  F[fb + 0] = status;
  F[fb + 1] = at;
  const hd = TAIL_HEAD + len - 1; // header of arr[i] at F[fb + hd - i]
  let first = at;
  const chain = [];
  // The anchor response's earlier lines, as previousSibling_ finds them one by one (full
  // headers have the same kind, sidechain and boundary bits as the ones it reads).
  const id = status === 1 ? idOf(arr[at]) : undefined;
  if (id !== undefined) {
    for (let i = at - 1; i >= 0; i--) {
      let h;
      if (i >= len - n) h = F[fb + hd - i];
      else {
        if (TAIL_HEAD + n >= cap) return -1;
        h = onChain(arr, i, header(arr[i]));
        F[fb + TAIL_HEAD + n++] = h;
      }
      if ((h & 7) === 7 || (h & 32)) break;
      if (h & 16) continue;
      if ((h & 7) === 1) {
        if (idOf(arr[i]) !== id) break;
        chain.push(i);
        first = i;
      }
    }
  }
  const c = chain.length;
  const sf = status === 1 ? first + 1 : len;
  // Contents: from the response's first line (its own lines only when its usage was logged
  // mid-stream), after a boundary, from a context start, or all.
  const from = status === 1 ? first : status === 2 ? at + 1 : status === 4 ? at : status === 0 ? 0 : len;
  const flagsAt = TAIL_HEAD + n + c;
  const offsetsAt = flagsAt + len - sf;
  const used = offsetsAt + len - from;
  if (used > cap) return -1;
  F[fb + 7] = n; F[fb + 8] = c; F[fb + 9] = sf; F[fb + 10] = from;
  for (let k = 0; k < c; k++) F[fb + TAIL_HEAD + n + k] = chain[k];
  for (let k = sf; k < len; k++) {
    F[fb + flagsAt + k - sf] = k !== at && (F[fb + hd - k] & 7) === 1 && sameResponse_(arr, k, at) ? 1 : 0;
  }
  for (let k = from; k < len; k++) F[fb + offsetsAt + k - from] = -1;
  let described = shape;
  for (let i = from; i < len && described !== -1; i++) {
    const s = shapeOfHeader(F[fb + hd - i]);
    if (s === ANY) continue;
    if (described === ANY) described = s;
    else if (s !== described) described = -1; // two shapes: the Rust side reports it
  }
  if (COUNTER !== null) described = -1;
  F[fb + 11] = described;
  F[fb + 12] = 0;
  if (described === -1) {
    tailStats.reads++;
    return used;
  }
  const partial = status === 1 && (F[fb + hd - at] & 256) !== 0;
  // A count asks for the contents of ranges that begin and end with a message sent to the
  // model (lines in between are read with them): those before the first and after the last
  // such message are left out.
  let start = from, end = len;
  while (start < end && !maybeSent(F[fb + hd - start])) start++;
  while (end > start && !maybeSent(F[fb + hd - end + 1])) end--;
  interning = false; // an estimate needs no ids or names (describeContents_ starts afresh)
  const words = [];
  for (let i = start; i < end; i++) {
    if (!partial && (i === at || (i >= sf && F[fb + flagsAt + i - sf] === 1))) continue;
    F[fb + offsetsAt + i - from] = words.length;
    describeOne(arr[i], described, true, words);
  }
  if (words.length > wcap) {
    F[fb + 12] = words.length;
    return -3;
  }
  for (let k = 0; k < words.length; k++) W[wb + k] = words[k];
  F[fb + 12] = words.length;
  tailStats.reads++;
  tailStats.described += end - start;
  return used;
}
let USAGE_OUT = new Float64Array(4);

// ---- The per-turn count's record (JsTailRecord in js_view.rs, measure::tokens::count_tail) ----
// One pass from the end of an array of Claude Code transcript lines, written into WASM
// memory: what the count reads, for the Rust side to decide the count from without another
// call. Anything else (a message of another shape, no usage, a boundary or a context start
// before the usage, a tokenizer in effect, reading throws) writes nothing: the general path
// (tail_ and the readers above) counts and reports it.

// The header of a Claude Code line (`header`'s first case, reading what it reads: a getter
// that throws there throws here too); 0 for anything else.
function lineTag(m) {
  if (m === null || typeof m !== 'object' || Array.isArray(m)) return 0;
  const t = m.type;
  if (typeof t !== 'string') return 0;
  // Progress lines and the like, the most common lines at the end of a transcript, first.
  if (isOtherLineType(t)) return lineHeader(m, undefined);
  const k = lineKind(t);
  if (m.message !== undefined || (k !== undefined && (k !== 2 || lcFields(m) === undefined))) return lineHeader(m, k);
  return 0;
}

// A tag bit: an assistant line with the `message.id` of the line whose usage was read.
const SAME_RESPONSE = 1 << 16;

// Writes into `F` (from F[fb]): [words needed when -1 is returned, len, n, first, at,
// present mask, input, cache_creation, cache_read, output] and into `W` (from W[wb], `wcap`
// words): the tags (headers, | SAME_RESPONSE) of arr[len-1], arr[len-2], … arr[len-n]; then
// one offset per message of arr[first..len) into the descriptions that follow (MISSING: not
// described); then the descriptions (describeOne's words, estimate). `at` is the latest
// main-chain assistant line with usage, read as readUsage_ reads it; the tags go back to it,
// then over its response's earlier lines to the line the Rust side's search stops at; the
// descriptions are of the lines the count may estimate (its own lines only when its usage
// was logged mid-stream, or when they sit between others). Returns the words used; 0 when
// there is no record (see above), -1 when W is too small (F[fb] then says how many words
// it needs). Written straight into W: no array is built for the tags.
function countTail_(arr, F, fb, W, wb, wcap) {
  if (COUNTER !== null) return 0;
  const len = arr.length;
  let at = -1, n = 0;
  for (let i = len - 1; i >= 0; i--) {
    const h = lineTag(arr[i]);
    if (h === 0) return i === len - 1 ? roleTail_(arr, len, F, fb, W, wb, wcap) : 0;
    if (n < wcap) W[wb + n] = h;
    n++;
    if (h & 16) continue;
    if (h & (32 | STARTS_CONTEXT)) return 0;
    if ((h & 7) === 1 && (h & 64)) { at = i; break; }
  }
  if (at < 0) return 0;
  const m = arr[at];
  const present = usageCounts(m.message.usage, USAGE_OUT);
  // Kept here: a getter read below may run another count, which uses USAGE_OUT too.
  const u0 = USAGE_OUT[0], u1 = USAGE_OUT[1], u2 = USAGE_OUT[2], u3 = USAGE_OUT[3];
  const id = idOf(m);
  let first = at, stop = 0;
  for (let i = at - 1; i >= 0; i--) {
    const x = arr[i];
    let h = lineTag(x);
    if (h === 0) return 0;
    if ((h & 7) === 1 && id !== undefined && idOf(x) === id) h |= SAME_RESPONSE;
    if (n < wcap) W[wb + n] = h;
    n++;
    stop = i;
    if (h & 32) break;
    if (h & 16) continue;
    if ((h & 7) === 1) {
      if (!(h & SAME_RESPONSE)) break;
      first = i;
    }
  }
  const offsets = n, words = n + len - first;
  if (words > wcap) {
    F[fb] = words + 64;
    return -1;
  }
  const tag = wb + len - 1; // the tag of arr[i] is W[tag - i]
  // The lines read (from where the search stopped) hang as written: else the chain decides
  // (SPEC §2), on the general path.
  if (!tailLinked(arr, stop, len, W, tag)) return 0;
  // A response a compaction kept carries the old context's usage: the general path decides
  // when the response may have begun in a kept window (tokens::stateless_count).
  if (!(W[tag - stop] & 32) && mayBeKept(arr, stop, first, len)) return 0;
  for (let i = at + 1; i < len; i++) {
    if ((W[tag - i] & 7) === 1 && idOf(arr[i]) === id && id !== undefined) W[tag - i] |= SAME_RESPONSE;
  }
  // Descriptions: from the response's first line to the last line that may be sent. (Reads
  // at least what `tail_` reads, so what throws there throws here.) The response's own lines
  // are left out when its usage is final, unless another message the count estimates came
  // before them.
  for (let i = first; i < len; i++) W[wb + offsets + i - first] = MISSING;
  let end = len;
  while (end > first && !maybeSent(W[tag - end + 1])) end--;
  let reading = (W[tag - at] & 256) !== 0;
  let out = null;
  for (let i = first; i < end; i++) {
    const h = W[tag - i];
    if (!reading) {
      if (i === at || (h & SAME_RESPONSE)) continue;
      reading = maybeSent(h);
    }
    if (out === null) {
      out = [];
      interning = false; // an estimate needs no ids or names
    }
    W[wb + offsets + i - first] = out.length;
    describeOne(arr[i], ANTHROPIC, true, out);
  }
  const used = words + (out === null ? 0 : out.length);
  if (used > wcap) {
    F[fb] = used + 64;
    return -1;
  }
  if (out !== null) for (let k = 0; k < out.length; k++) W[wb + words + k] = out[k];
  F[fb + 1] = len; F[fb + 2] = n; F[fb + 3] = first; F[fb + 4] = at; F[fb + 5] = present;
  F[fb + 6] = u0; F[fb + 7] = u1; F[fb + 8] = u2; F[fb + 9] = u3;
  countStats.records++;
  return used;
}

// The most messages the per-turn record of `{role, content}` messages is written for (as
// MAX_RECORD_MESSAGES in js_view.rs).
const MAX_TAIL_MESSAGES = 1 << 22;

// The per-turn record of an array of `{role, content}` messages (or another ecosystem's
// messages, of one shape) that no usage anchors: no message carries usage, none starts the
// context, none is a transcript line. The count is then the estimate of every message
// (tokens::count_tail's unanchored case): the record holds every message's tag, from the
// last to the first, one offset per message, and the descriptions of the messages from the
// first to the last that may be sent, described by the shape their headers show (as `tail_`
// describes them). Anything else writes nothing (0): the general path counts, and reports
// what is wrong (a message of no known shape, an unknown role, two shapes).
function roleTail_(arr, len, F, fb, W, wb, wcap) {
  // Longer than any real conversation (a sparse array's length): the general path reads it,
  // and reports it, without room reserved by its length.
  if (len === 0 || len > MAX_TAIL_MESSAGES) return 0;
  // Without room for the tags and offsets, the headers are still read first: a conversation
  // the record does not settle (usage on its last reply, the common case) asks for no room.
  const room = 2 * len <= wcap;
  const tag = wb + len - 1; // the tag of arr[i] is W[tag - i]
  let shape = ANY;
  for (let i = len - 1; i >= 0; i--) {
    const m = arr[i];
    const h = header(m);
    // Not a message or an unknown role; a line; usage (an anchor); a context start.
    if ((h & 7) >= 5 || (h & (8 | 16 | 32 | 64 | STARTS_CONTEXT))) return 0;
    // Usage another shape's header leaves out is still seen by the search for an anchor
    // (latestUsage_ reads `header(m, false)`).
    if ((h & 7) === 1 && m.usage != null) return 0;
    const s = shapeOfHeader(h);
    if (s !== ANY) {
      if (shape === ANY) shape = s;
      else if (s !== shape) return 0;
    }
    if (room) W[tag - i] = h;
  }
  if (!room) {
    // Room for the tags, the offsets and a guess at the descriptions (a text or two per
    // message), so that the next try, which describes them, most likely fits.
    F[fb] = 24 * len + 64;
    return -1;
  }
  const offsets = wb + len;
  for (let i = 0; i < len; i++) W[offsets + i] = MISSING;
  let start = 0, end = len;
  while (start < end && !maybeSent(W[tag - start])) start++;
  while (end > start && !maybeSent(W[tag - end + 1])) end--;
  const out = [];
  interning = false; // an estimate needs no ids or names
  for (let i = start; i < end; i++) {
    W[offsets + i] = out.length;
    describeOne(arr[i], shape, true, out);
  }
  const used = 2 * len + out.length;
  if (used > wcap) {
    F[fb] = used + 64;
    return -1;
  }
  const words = wb + 2 * len;
  for (let k = 0; k < out.length; k++) W[words + k] = out[k];
  F[fb + 1] = len; F[fb + 2] = len; F[fb + 3] = 0; F[fb + 4] = 0; F[fb + 5] = -1;
  F[fb + 6] = 0; F[fb + 7] = 0; F[fb + 8] = 0; F[fb + 9] = 0;
  countStats.records++;
  return used;
}

// Where the per-turn record found the last compact_boundary line of an array of lines before
// the lines it reads, per array: a conversation that only grew since is searched from where
// the last search ended, so the search reads each line once, not on every count. The prefix
// searched is taken as unchanged while its last line and the boundary found are still where
// they were. `kept` and `last`: the boundary's keptMessages and the index of the last line of
// its window, as last measured (`kept` -1: not measured).
const BOUNDARIES = new WeakMap();

// The entry boundaryOf gave last, and its array: a count asked again of the same array (a
// chat UI's every render) finds it without a WeakMap lookup.
let lastBoundArr = null, lastBound = null;

// The entry of `arr` in BOUNDARIES, its search brought up to arr[0..end).
function boundaryOf(arr, end) {
  const l = lastBound;
  if (arr === lastBoundArr && l.end === end && end > 0 && arr[end - 1] === l.lastLine && (l.at < 0 || arr[l.at] === l.line)) return l;
  const e = boundaryFrom(arr, end);
  lastBoundArr = arr;
  lastBound = e;
  return e;
}

// boundaryOf without the last entry's shortcut.
function boundaryFrom(arr, end) {
  let e = BOUNDARIES.get(arr), lo = 0, found = -1;
  if (e !== undefined && e.end > 0 && e.end <= end && arr[e.end - 1] === e.lastLine &&
      (e.at < 0 || arr[e.at] === e.line)) {
    lo = e.end;
    found = e.at;
  } else {
    e = undefined;
  }
  for (let i = end - 1; i >= lo; i--) {
    const m = arr[i];
    if (m !== null && typeof m === 'object' && m.type === 'system' && m.subtype === 'compact_boundary') {
      found = i;
      break;
    }
  }
  const line = found >= 0 ? arr[found] : null;
  if (e === undefined || e.at !== found || e.line !== line) {
    e = { end: 0, lastLine: null, at: found, line, kept: -1, last: -1 };
    BOUNDARIES.set(arr, e);
  }
  e.end = end;
  e.lastLine = end > 0 ? arr[end - 1] : null;
  return e;
}

// Whether the response whose first line is arr[first] may have begun among the messages the
// last compaction kept (the summary and `keptMessages` sent lines after a boundary before
// `stop`): then the general path reads the boundary as tokens::stateless_count does. Leans to
// yes where it cannot tell (a sub-agent's boundary, lines a sub-agent's file sends).
function mayBeKept(arr, stop, first, len) {
  const e = boundaryOf(arr, stop);
  if (e.at < 0) return false;
  if (e.line.isSidechain === true) return true;
  const meta = e.line.compactMetadata;
  const kept = meta !== null && typeof meta === 'object' ? meta.keptMessages : undefined;
  // (Rust reads whole numbers only: anything else positive is left to it.)
  if (typeof kept !== 'number' || !(kept > 0)) return false;
  if (e.kept !== kept) {
    // The line where the window's (kept + 1)-th sent line sits; lines a main session's file
    // does not send (sub-agent lines, progress, system) are not counted.
    let seen = 0, last = -1;
    for (let i = e.at + 1; i < len; i++) {
      const m = arr[i];
      if (m === null || typeof m !== 'object' || m.isSidechain === true) continue;
      const t = m.type;
      if ((t === 'user' || t === 'assistant' || t === 'attachment') && ++seen > kept) {
        last = i;
        break;
      }
    }
    // A window that runs to the end is measured again when the conversation grows.
    if (last < 0) return true;
    e.kept = kept;
    e.last = last;
  }
  return first <= e.last;
}

// Whether a message with header `h` may be sent to the model (tokens::is_sent decides; this
// only keeps the tail read from describing lines no count reads).
const maybeSent = (h) => (h & 16) === 0 && ((h & 7) === 0 || (h & 7) === 1 || (h & 7) === 3 || ((h & 7) === 2 && (h & 8) === 0));
// What a reading keeps between its crossings (interned strings, the usage buffer, the errors
// not yet taken; js_index.js's tool index, through setAsideToo). The package may be called
// while another of its calls is reading (from a getter, a toJSON or a callback of the caller),
// in either module (both glues share this file): the glue's guard (scripts/package.mjs,
// __ccEnter) calls enterPackage and leavePackage around every call, and a nested call reads
// with fresh state while the outer call's is set aside, then put back when the nested call
// returns.
let packageDepth = 0;
// The other snippets' state set aside with this module's: each function registered sets its
// own aside and returns the function that puts it back.
const setAsides = [];
export function setAsideToo(f) {
  setAsides.push(f);
}
export function enterPackage() {
  if (packageDepth++ === 0) return undefined;
  const saved = [strings, symbols, interning, USAGE_OUT, readError, counterError, COUNTER, readArr, readAt, setAsides.map((f) => f())];
  strings = [];
  symbols = new Map();
  interning = true;
  USAGE_OUT = new Float64Array(4);
  readError = null;
  counterError = null;
  readArr = null;
  // A nested call counts with its own tokenizer or none, never the outer call's.
  COUNTER = null;
  return saved;
}
export function leavePackage(saved) {
  packageDepth--;
  if (saved !== undefined) {
    let putBack;
    [strings, symbols, interning, USAGE_OUT, readError, counterError, COUNTER, readArr, readAt, putBack] = saved;
    for (const f of putBack) f();
  }
}

// The strings of the last description, each preceded by RS (RS inside a string becomes
// U+FFFD).
export function takeStrings() {
  const s = strings.length === 0 ? '' : RS + strings.join(RS);
  strings = [];
  if (symbols.size !== 0) symbols = new Map();
  return s;
}

// A data URL: its media type, `;base64` when so, its data (parameters such as
// `;charset=utf-8`, which a Blob's type brings, passed over). A parameter's name holds no `=`:
// each parameter then splits one way only, and a long string that is not a data URL (no comma)
// is refused in linear time, not in the square of its length.
export const dataUrl = /^data:([^;,]+)?(?:;[^;,=]+=[^;,]*)*(;base64)?,(.*)$/s;

// OpenAI's built-in tools whose call and output are two items paired by `call_id`: the name
// their call has as a tool_use (0: the item's `name`), the field that holds its input, and the
// one that holds its id when not `call_id`.
const HOSTED_CALLS = new Map([
  ['computer_call', ['computer', 'action']],
  ['local_shell_call', ['local_shell', 'action']],
  ['shell_call', ['shell', 'action']],
  ['apply_patch_call', ['apply_patch', 'operation']],
  ['tool_search_call', ['tool_search', 'arguments']],
  ['mcp_approval_request', [0, 'arguments', 'id']],
]);

// The call a Responses item `m` is, as [id, name, input]: a built-in tool's (HOSTED_CALLS; a
// tool search the server ran is not one the client answers), or an `mcp_approval_request`
// (the MCP tool it asks to run, by its `id`, which the `mcp_approval_response` names as its
// `approval_request_id`); undefined for any other item.
export function hostedCall(m) {
  const h = HOSTED_CALLS.get(m.type);
  if (h === undefined || m.execution === 'server') return undefined;
  // A call with no id is none the client answers (a tool search the server ran, stored with
  // `call_id: null` and no `execution`).
  const id = m[h[2] || 'call_id'];
  return id == null ? undefined : [id, h[0] || m.name, m[h[1]]];
}

// Whether a Responses output item's result is kept as it is, never cleared (read as if
// cleared): a computer screenshot, or an item with no `output` to clear (an MCP approval's
// answer, the tools a tool search loaded, a patch's status).
export const keptOutput = (m) => isMediaPart(m.output) || !('output' in m);

// The call id a Responses output item answers: its `call_id`; a `local_shell_call_output`
// names its call by `id` (the openai SDK's LocalShellCallOutput: "the unique ID of the local
// shell tool call generated by the model", the call's `call_id`), an `mcp_approval_response`
// by `approval_request_id`.
export function outputCallId(m) {
  if (typeof m.call_id === 'string') return m.call_id;
  return m.type === 'local_shell_call_output' ? m.id : m.type === 'mcp_approval_response' ? m.approval_request_id : m.call_id;
}

// The output a Responses output item holds, as a tool result reads it (a string, an array
// of parts, or another JSON value); undefined when the item is none. A `shell_call_output`'s
// `[{stdout, stderr, outcome}]` is the text of its streams; an `apply_patch_call_output`
// may have no `output` (its `status` says how the patch went).
export function responsesOutput(m) {
  const t = m.type;
  if (responsesSide(m, t) !== 0) return undefined;
  const o = m.output;
  if (t === 'shell_call_output') return Array.isArray(o) ? shellText(o) : o;
  if (t === 'apply_patch_call_output' || t === 'local_shell_call_output') return o === undefined || o === null ? '' : o;
  // An MCP approval's answer, and the tools a client-run tool search loaded (no `output`).
  if (t === 'mcp_approval_response') return { approve: m.approve, reason: m.reason };
  if (t === 'tool_search_output') return m.execution === 'server' || m.call_id == null ? undefined : { tools: m.tools };
  if (!('output' in m)) return undefined;
  return isMediaPart(o) ? [o] : o;
}

// The text of a `shell_call_output`'s output (`[{stdout, stderr, outcome}]`): its streams'
// non-empty texts, one a line; the list itself when an element is not of that form.
export function shellText(list) {
  let text = '';
  for (const e of parts(list)) {
    if (e === null || typeof e !== 'object' || (typeof e.stdout !== 'string' && typeof e.stderr !== 'string')) return list;
    for (const s of [e.stdout, e.stderr]) {
      if (typeof s === 'string' && s.length > 0) text = text.length === 0 ? s : `${text}\n${s}`;
    }
  }
  return text;
}

// The reason a UIMessage tool part in state `output-denied` was denied (what the AI SDK
// sends as its error result).
export const uiDenial = (p) => (p.approval !== null && typeof p.approval === 'object' && typeof p.approval.reason === 'string'
  ? p.approval.reason : 'The tool call was denied.');

// Whether part `p` of an AI SDK assistant message is a provider-executed tool's result.
export const isProviderResult = (p) => p !== null && typeof p === 'object' && p.type === 'tool-result';

// Whether `v` is one media part (an OpenAI computer screenshot is a tool output of its own).
export const isMediaPart = (v) => v !== null && typeof v === 'object' && v.type === 'computer_screenshot';

export function parseArgs(v) {
  if (typeof v !== 'string') return v !== null && typeof v === 'object' ? v : {};
  try {
    const o = JSON.parse(v);
    return o !== null && typeof o === 'object' && !Array.isArray(o) ? o : { arguments: v };
  } catch (_) {
    return { arguments: v };
  }
}

// ---- The guard every entry point the Rust side calls goes through ------------------------
// The caller's objects may throw when read (a Proxy, a reactive store, a getter). Nothing
// thrown may cross into WebAssembly: each entry catches it, keeps the first such error for
// the Rust side (`takeReadError`, which reports it as a coded error with the original as its
// cause) and answers a neutral value that makes the Rust side ask for it.

// A header bit: reading this message threw (with the "not a message" kind).
const READ_FAILED = 7 | (1 << 20);
let readError = null;

export function takeReadError() {
  const e = readError;
  readError = null;
  return e === null ? undefined : e;
}

// One wrapper per entry (not a shared higher-order one), so each call site stays monomorphic.
export function failed(err) {
  if (readError === null) readError = err === undefined ? new Error('undefined was thrown') : err;
}

export function keysOf(arr, i) {
  try {
    return keysOf_(arr, i);
  } catch (e) {
    failed(e);
  }
  return [];
}

export function arrayLength(arr) {
  try {
    return arrayLength_(arr);
  } catch (e) {
    failed(e);
  }
  return -3;
}

// Writes the headers of arr[start..start+out.length] into `out` (a view on WASM memory); the
// headers before an element whose reading throws are kept, so that the error names it.
export function readHeaders(arr, start, out) {
  let k = 0;
  try {
    for (; k < out.length; k++) out[k] = onChain(arr, start + k, header(arr[start + k]));
    return;
  } catch (e) {
    failed(e);
  }
  out.fill(READ_FAILED, k);
}

export function rfind(arr, end, mask) {
  try {
    return rfind_(arr, end, mask);
  } catch (e) {
    failed(e);
  }
  return -1;
}

export function latestUsage(arr, end, out) {
  try {
    return latestUsage_(arr, end, out);
  } catch (e) {
    failed(e);
  }
  out[0] = 0;
  return -1;
}

export function previousSibling(arr, before, last) {
  try {
    return previousSibling_(arr, before, last);
  } catch (e) {
    failed(e);
  }
  return -1;
}

export function readUsage(arr, i, out) {
  try {
    return readUsage_(arr, i, out);
  } catch (e) {
    failed(e);
  }
  return -1;
}

export function messageId(arr, i) {
  try {
    return messageId_(arr, i);
  } catch (e) {
    failed(e);
  }
  return undefined;
}

export function sameResponse(arr, i, j) {
  try {
    return sameResponse_(arr, i, j);
  } catch (e) {
    failed(e);
  }
  return false;
}

export function stringField(arr, i, k) {
  try {
    return stringField_(arr, i, k);
  } catch (e) {
    failed(e);
  }
  return undefined;
}

export function boundaryKept(arr, i) {
  try {
    return boundaryKept_(arr, i);
  } catch (e) {
    failed(e);
  }
  return undefined;
}

export function describeContents(arr, start, end, estimate, shape) {
  try {
    return describeContents_(arr, start, end, estimate, shape);
  } catch (e) {
    failed(e);
  }
  return [];
}

// Whether `tail` reads (tests switch it off to compare the count with the readers' own:
// tests/node/tail.test.mjs imports this module from the package's snippets), and how many
// reads and described messages it made (for those tests to see that it did).
let tailReads = true;
const tailStats = { reads: 0, described: 0 };
export function setTailReads(on) {
  tailReads = on === true;
  return tailStats;
}

// Reading throws: nothing is recorded (the Rust side reads again with the readers above,
// which report what they meet).
// Views on the WASM memory of the instance that calls (a page may run two instances of the
// module, which share this file); made again when the memory grows (the old buffer is then
// detached, of length 0).
let tailMemory = null, tailF = null, tailW = null;

export function tail(arr, shape, memory, fb, cap, wb, wcap) {
  if (!tailReads) return -2;
  if (memory !== tailMemory || tailF.byteLength === 0) {
    tailMemory = memory;
    tailF = new Float64Array(memory.buffer);
    tailW = new Uint32Array(memory.buffer);
  }
  if (!isArrayOrThrew(arr)) return -4;
  try {
    return tail_(arr, shape, tailF, fb, cap, tailW, wb, wcap);
  } catch (_) {
    return -2;
  }
}

// Whether the per-turn count's record is made (tests switch it off to compare with the
// general path; with `setTailReads(false)` it is off too), how many it made, and how many of
// them the glue's per-turn route made (`perTurnRecord`).
let countFast = true;
const countStats = { records: 0, routed: 0 };
export function setCountFast(on) {
  countFast = on === true;
  return countStats;
}

// Array.isArray(arr), false when it throws (a revoked Proxy): the general path then reads
// the array again (arrayLength) and reports what threw as a coded error.
function isArrayOrThrew(arr) {
  try {
    return Array.isArray(arr);
  } catch (_) {
    return false;
  }
}

export function countTail(arr, memory, fb, wb, wcap) {
  if (!countFast || !tailReads || !isArrayOrThrew(arr)) return 0;
  if (memory !== tailMemory || tailF.byteLength === 0) {
    tailMemory = memory;
    tailF = new Float64Array(memory.buffer);
    tailW = new Uint32Array(memory.buffer);
  }
  const F = tailF;
  try {
    const used = countTail_(arr, F, fb, tailW, wb, wcap);
    // The memory grew meanwhile (a getter called the package): what was written after that
    // went nowhere, so the record is not whole.
    return F.byteLength === 0 ? 0 : used;
  } catch (_) {
    return 0; // the general path reads again, and reports what threw
  }
}

// The per-turn record written without a call from Rust (scripts/package.mjs routes
// `tokenCountWithEstimation(messages)` and `shouldAutoCompact(messages, model)` here first):
// into the record at the address `__ccPerTurnRecord` gives (asked once per instance: `wasm`,
// the instance's exports, is the key; a fresh instance after a trap has exports of its own,
// and the package's modules that share this file — the `count` entry's and the first — each
// their own), whose numbers 10 and 11 hold its words' capacity and byte address (js_view.rs,
// FastRecord). Returns the words used; 0 (or less) when there is no record: the export itself
// then runs (and makes the record larger when it was too small).
let fastWasm = null, fastAt = 0, fastMemory = null, fastBusy = false;
let fastF = new Float64Array(0), fastW = new Uint32Array(0);
export function perTurnRecord(arr, wasm) {
  // A getter of a message may call the package again while the record is written: that
  // call takes the export (its own buffers), never this record; nor does it switch to its
  // instance's record (which would publish this one's capacity again, while it is marked).
  if (fastBusy || !countFast || !tailReads || !isArrayOrThrew(arr)) return 0;
  if (wasm !== fastWasm) {
    fastAt = wasm.__ccPerTurnRecord() >>> 0;
    fastWasm = wasm;
    fastMemory = null;
  }
  const memory = wasm.memory;
  if (memory !== fastMemory || fastF.byteLength === 0) {
    fastMemory = memory;
    fastF = new Float64Array(memory.buffer);
    fastW = new Uint32Array(memory.buffer);
  }
  // The words' capacity and byte address (they move when a larger record is needed:
  // js_view.rs, fast_record_fit). While it is written, the record is marked (no capacity),
  // so that a count a getter makes meanwhile does not move it: the words stay where this pass
  // writes them.
  const fb = fastAt >>> 3, F = fastF, cap = F[fb + 10];
  F[fb + 10] = 0;
  fastBusy = true;
  let used;
  try {
    used = countTail_(arr, F, fb, fastW, F[fb + 11] >>> 2, cap >>> 0);
  } catch (_) {
    used = 0; // the export reads again, and reports what threw
  }
  fastBusy = false;
  if (F.byteLength === 0) {
    // The memory grew meanwhile: what was written after that went nowhere (the record is not
    // whole), and the mark is taken off through a view of the memory as it is now.
    new Float64Array(wasm.memory.buffer)[fb + 10] = cap;
    return 0;
  }
  F[fb + 10] = cap;
  if (used > 0) countStats.routed++;
  return used;
}
