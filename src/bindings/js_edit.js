// The applier of the core's edits (applyEdits), the copies of a message it and
// microCompactApply (js_index.js) make, and the readers of a conversation in the Anthropic
// form a compaction reads (anthropicForm, userMessageIn): apart from js_view.js, whose readers
// they use, so that the counting module of `context-compaction/count`, which edits and
// compacts nothing, does not download them. Every decision is made in Rust.
import { plainSlice } from './js_batch.js';
import { AI_MODEL, AI_UI, ANY, CHAT, LANGCHAIN, RESPONSES, RS, blockKind, callArgs, chatReasoning, callName, contentOf, dataUrl, failed, fileText, header, hostedCall, isAiCompaction, isBytes, isCall, isLine, isMediaPart, isProviderResult, isServerResultBlock, lcAudio, customInput, providerResultValue, serverResult, lcCalls, lcFields, lcFunctionName, legacyCall, lcItemRead, lcItems, lcPartInput, lcMirrored, legacyCallId, legacyResultId, mediaKind, opaqueReasoning, outputCallId, parseArgs, parts, reasoningTexts, responsesOutput, shapeOfHeader, shellText, uiDenial, uiInput } from './js_view.js';

// Applies edits to a copy of `arr`. `ops` holds 5 numbers per edit, sorted by message:
// [op, message, block, nested (or 0xffffffff), text index]; op 0 = replace the block (or the
// nested block) with a text block, op 1 = set the tool_result's content to the text. Only the
// edited messages, their content arrays and edited blocks are copied; all else is shared.
function applyEdits_(arr, ops, texts) {
  const T = texts.split(RS);
  const out = plainSlice(arr, 0, arr.length);
  let cur = -1;
  let content = null;
  let shapeOf = -1, shape = ANY; // the shape of message `shapeOf` (ops come by message)
  const flush = () => { if (cur >= 0) out[cur] = withContent(arr[cur], content); };
  for (let k = 0; k < ops.length; k += 5) {
    const op = ops[k], i = ops[k + 1], b = ops[k + 2], n = ops[k + 3], text = T[ops[k + 4]];
    if (i !== shapeOf) {
      shapeOf = i;
      shape = shapeOfHeader(header(arr[i]));
    }
    if (shape >= AI_MODEL) {
      if (i !== cur) { flush(); cur = -1; }
      out[i] = op === 0 ? replaceForeignPart(out[i], shape, b, n, text) : setForeignResult(out[i], shape, b, text);
      continue;
    }
    if (i !== cur) {
      flush();
      cur = i;
      content = contentOf(arr[i]).slice();
    }
    if (op === 0 && n === 0xffffffff) {
      content[b] = keepBreakpoint({ type: 'text', text }, content[b]);
    } else if (op === 0) {
      const tr = { ...content[b] };
      const inner = tr.content.slice();
      inner[n] = keepBreakpoint({ type: 'text', text }, inner[n]);
      tr.content = inner;
      content[b] = tr;
    } else {
      content[b] = keepBreakpoint({ ...content[b], content: text }, content[b]);
    }
  }
  flush();
  return out;
}

// Block `to`, which stands for block `from` (a cleared tool result, an image's text), with the
// cache breakpoint (`cache_control`) `from` or the last block of its content carried: the
// caller's cached prefix still ends there.
export function keepBreakpoint(to, from) {
  let c = from?.cache_control;
  if (c === undefined && Array.isArray(from?.content)) for (const p of from.content) if (p?.cache_control !== undefined) c = p.cache_control;
  if (c !== undefined) to.cache_control = c;
  return to;
}

// Part `to` with the cache breakpoint or provider options of part `from` it stands for (its
// `cache_control`, an AI SDK part's `providerOptions` / UI part's `providerMetadata`, an
// OpenAI part's `prompt_cache_breakpoint`).
function withOptionsOf(to, from) {
  const q = { ...to };
  for (const f of ['cache_control', 'providerOptions', 'providerMetadata', 'prompt_cache_breakpoint']) if (from?.[f] !== undefined) q[f] = from[f];
  return q;
}

// ---- Copies of a message with new content (these edits, microCompactApply in js_index.js) --

// Where parseTranscript keeps the text a line was read from (the WeakMap of js_transcript.js,
// shared through the global symbol registry): a copy of an edited line keeps it, so that
// serializeTranscript writes the numbers the line still holds as they were read.
const READ_FROM = (globalThis[Symbol.for('context-compaction.transcriptLines')] ??= new WeakMap());

export function withContent(m, content) {
  if (isLine(m)) {
    const copy = { ...m, message: { ...m.message, content } };
    const src = READ_FROM.get(m);
    if (src !== undefined) READ_FROM.set(copy, src);
    return copy;
  }
  return { ...m, content };
}

// A copy of message `m` without its `usage` (applyApiCompaction: a response put back after the
// API's compaction block measured the context before the block; a LangChain message a
// compaction keeps: its `usage_metadata` measured the context the summary replaced, and
// LangChain messages have no boundary line to say so). `m` itself when it has none.
export function withoutUsage(m) {
  const f = m !== null && typeof m === 'object' ? lcFields(m) : undefined;
  if (f === undefined) {
    const copy = { ...m };
    delete copy.usage;
    return copy;
  }
  if (f.usage_metadata === undefined) return m;
  if (Array.isArray(m.lc_namespace)) return rebuildLc(m, m.content, false);
  const fields = { ...f };
  delete fields.usage_metadata;
  if (m.lc === 1) return { ...m, kwargs: fields };
  return f === m ? fields : { ...m, data: fields };
}

// A copy of the foreign message `m` whose tool result at block `b` (as describeForeign
// numbers blocks) is `text`, in the message's own shape: an AI SDK `tool-result` output of
// type `text`, a UIMessage tool part's `output` (or `errorText`), an OpenAI `tool` message's
// or Responses output item's content, a LangChain ToolMessage rebuilt with its own class.
export function setForeignResult(m, shape, b, text) {
  switch (shape) {
    case AI_MODEL: {
      const content = m.content.slice();
      const part = content[b];
      const o = part.output;
      // An error stays an error (the provider marks it so), with the output's own options.
      const typed = o !== null && typeof o === 'object' && !Array.isArray(o);
      const type = typed && (o.type === 'error-text' || o.type === 'error-json') ? o.type : 'text';
      const output = { type, value: text };
      // Its options, or those of the first part of a content output (where the AI SDK's
      // Anthropic provider reads a cache breakpoint for the whole result).
      const opts = !typed ? undefined : o.providerOptions ?? (o.type === 'content' && Array.isArray(o.value)
        ? o.value.find((q) => q?.providerOptions != null)?.providerOptions : undefined);
      if (opts !== undefined) output.providerOptions = opts;
      if (typed && o.type === 'execution-denied') return m; // nothing to clear: no output
      content[b] = { ...part, output };
      return { ...m, content };
    }
    case AI_UI: {
      // The tool part whose result is block `b` (uiPartOf numbers blocks as describeForeign).
      const j = uiPartOf(m.parts, b);
      const p = j < 0 ? undefined : m.parts[j];
      if (p === undefined || (p.state !== 'output-available' && p.state !== 'output-error')) return m;
      // Cleared, a part is an error text (`output-error`), which the AI SDK takes for any tool:
      // it never checks it against the tool's outputSchema nor gives it to toModelOutput, and
      // sends it to the model as the text it is.
      const q = { ...p, state: 'output-error', errorText: text };
      delete q.output;
      const parts = m.parts.slice();
      parts[j] = q;
      return { ...m, parts };
    }
    case CHAT:
      return { ...m, content: Array.isArray(m.content) ? clearedParts(m.content, text) : text };
    case RESPONSES:
      return withOutput(m, text);
    case LANGCHAIN: {
      if (Array.isArray(m.lc_namespace)) return rebuildLc(m, text);
      if (lcFields(m) === undefined) return { ...m, content: text }; // a `{role, …}` dict
      return lcWithContent(m, text);
    }
    default:
      return m;
  }
}

// The parts of an OpenAI Chat `tool` message whose content was `list`, cleared to `text`: one
// text part, which keeps the fields of the list's last text part (its `cache_control`).
function clearedParts(list, text) {
  let last;
  for (const p of parts(list)) if (p !== null && typeof p === 'object' && p.type === 'text') last = p;
  return [last === undefined ? { type: 'text', text } : { ...last, text }];
}

// A Responses output item `m` whose output is `text` (the cleared placeholder), in its own
// form: a `shell_call_output` keeps its list (each command's `outcome`), the first `stdout`
// the text and the other streams empty; a list with a `prompt_cache_breakpoint` stays a list
// of one part with that mark.
function withOutput(m, text) {
  const o = m.output;
  if (m.type === 'shell_call_output' && Array.isArray(o) && o.length > 0 && !Array.isArray(shellText(o))) {
    return { ...m, output: o.map((e, k) => ({ ...e, stdout: k === 0 ? text : '', stderr: '' })) };
  }
  const bp = o?.findLast?.((p) => p?.prompt_cache_breakpoint)?.prompt_cache_breakpoint;
  return { ...m, output: bp ? [{ type: 'input_text', text, prompt_cache_breakpoint: bp }] : text };
}

// How many blocks describeForeign reads a UIMessage tool part as: the call, and its result
// once there is one (an output, an error or a denial); none while its input is streaming
// (not sent): how pushUiTool (js_view.js) numbers blocks, and uiPartOf by it.
const uiToolWidth = (p) => (p.state === 'output-available' || p.state === 'output-error' || p.state === 'output-denied' ? 2
  : p.state === 'input-streaming' ? 0 : 1);

// The index in a UIMessage's `parts` of describeForeign's block `b` (-1 when none).
function uiPartOf(parts, b) {
  let k = 0;
  for (let j = 0; j < parts.length; j++) {
    const p = parts[j];
    const t = p !== null && typeof p === 'object' ? p.type : undefined;
    if (typeof t === 'string' && (t === 'step-start' || t.startsWith('source-') || t.startsWith('data-'))) continue;
    const width = typeof t === 'string' && (t === 'dynamic-tool' || t.startsWith('tool-')) ? uiToolWidth(p) : 1;
    if (b < k + width) return j;
    k += width;
  }
  return -1;
}

// A LangChain message instance like `m` (its own class) with `content`.
// The fields are added one by one, only the defined ones, in this order: deleting the
// undefined ones afterwards made the object a slow dictionary (28 % of microCompact on
// LangChain instances, measured); named reads, not a loop of keyed ones.
function rebuildLc(m, content, usage = true) {
  const fields = { content };
  let v;
  if ((v = m.tool_call_id) !== undefined) fields.tool_call_id = v;
  if ((v = m.tool_calls) !== undefined) fields.tool_calls = v;
  if ((v = m.name) !== undefined) fields.name = v;
  if ((v = m.id) !== undefined) fields.id = v;
  if ((v = m.status) !== undefined) fields.status = v;
  if ((v = m.artifact) !== undefined) fields.artifact = v;
  if ((v = m.additional_kwargs) !== undefined) fields.additional_kwargs = v;
  if ((v = m.response_metadata) !== undefined) fields.response_metadata = v;
  if (usage && (v = m.usage_metadata) !== undefined) fields.usage_metadata = v;
  // A ToolMessage's own metadata (@langchain/core 1.x): not the model's to read, the caller's.
  if ((v = m.metadata) !== undefined) fields.metadata = v;
  return new m.constructor(fields);
}

// A copy of the LangChain message `m` (not an instance) with `content`, in its own form.
function lcWithContent(m, content) {
  if (m.lc === 1) return { ...m, kwargs: { ...m.kwargs, content } };
  if (lcFields(m) === m) return { ...m, content };
  return { ...m, data: { ...m.data, content } };
}

// ---- Another ecosystem's conversation in the Anthropic form the pipeline reads ------------
// A compaction reads whole messages (it writes the summary request): those of other shapes
// are converted to Anthropic API messages first. `origin[k]` is the index of the caller's
// message that Anthropic message k came from (a UIMessage may become several; OpenAI
// Responses items of one turn become one). Reasoning becomes thinking (no signature: it is
// measured, never sent; a summary request leaves thinking out); tool arguments given as JSON
// text are parsed (kept as `{ arguments: text }` when they are not JSON).

// Bytes (an ArrayBuffer or a view on one: the AI SDK's DataContent) as base64.
function bytesBase64(v) {
  const u8 = ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(v);
  if (typeof Buffer === 'function') return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('base64');
  let bin = '';
  for (let k = 0; k < u8.length; k += 0x8000) bin += String.fromCharCode.apply(null, u8.subarray(k, k + 0x8000));
  return btoa(bin);
}

// Bytes (a Buffer, a typed array, an ArrayBuffer, of any realm) decoded as UTF-8 (what a
// `readFile` answers when it is `fs.promises.readFile(path)` without an encoding); undefined
// for any other value, or when they cannot be decoded. Never throws.
export function bytesText(v) {
  try {
    const tag = v !== null && typeof v === 'object' ? Object.prototype.toString.call(v) : '';
    if (!ArrayBuffer.isView(v) && tag !== '[object ArrayBuffer]' && tag !== '[object SharedArrayBuffer]') return undefined;
    // A copy: TextDecoder refuses a view of shared memory.
    const u8 = ArrayBuffer.isView(v) ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength) : new Uint8Array(v);
    return new TextDecoder().decode(u8.slice());
  } catch (_) {
    return undefined;
  }
}

// The media type of an image given as base64 `data`, from its first bytes (the AI SDK
// detects it so too); undefined when they name none of these.
function imageTypeOf(data) {
  if (typeof data !== 'string') return undefined;
  if (data.startsWith('iVBORw0KGgo')) return 'image/png';
  if (data.startsWith('/9j/')) return 'image/jpeg';
  if (data.startsWith('R0lGOD')) return 'image/gif';
  if (data.startsWith('UklGR')) return 'image/webp';
  return undefined;
}

// The Anthropic `source` of media given as `v` (a data URL, an http(s) URL, base64, bytes);
// `image`: it is an image (of the type its first bytes tell when `mediaType` is not given;
// none is invented).
function mediaSource(v, mediaType, image) {
  if (typeof v === 'string') {
    const d = dataUrl.exec(v);
    if (d) return { type: 'base64', media_type: d[1] || mediaType || 'application/octet-stream', data: d[3] };
    if (/^https?:\/\//.test(v)) return { type: 'url', url: v };
    return base64Source(v, mediaType, image);
  }
  // Told by their tag, not `instanceof`: a URL or an ArrayBuffer made in another realm (an
  // iframe, a worker's transfer, `vm`, a test environment's globals) is one too.
  const tag = v !== null && typeof v === 'object' ? Object.prototype.toString.call(v) : '';
  // A `URL` of a `data:` URL holds the media itself (the AI SDK sends it as its data).
  if (tag === '[object URL]') return v.protocol === 'data:' ? mediaSource(v.href, mediaType, image) : { type: 'url', url: v.href };
  // Bytes (Uint8Array, Buffer, ArrayBuffer, SharedArrayBuffer): sent as the base64 they are.
  if (isBytes(v)) {
    return base64Source(bytesBase64(v), mediaType, image);
  }
  // Any other object (a Blob or File, a Response, a stream, …), or a number or boolean, holds
  // no media this reading can send: sent, it was an empty base64 source the API refuses, the
  // caller's media gone without a word. Refused when the messages are read as sent
  // (toApiMessages, validateForApi); a compaction, which sends no media, reads it as the
  // media marker. (No data at all, `undefined` or `null`, is left as it was.)
  if (readingAsSent && (tag !== '' || (v !== undefined && v !== null))) {
    const kind = tag !== '' ? tag.slice(8, -1) : typeof v;
    throw new TypeError(`media data given as ${kind === 'Object' ? 'an object' : `${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind}`} cannot be sent: give base64 text, a data: or http(s) URL, a URL or bytes (Uint8Array, ArrayBuffer, Buffer)${kind === 'Blob' || kind === 'File' ? ` (read it first: new Uint8Array(await ${kind.toLowerCase()}.arrayBuffer()))` : ''}`);
  }
  return { type: 'base64', media_type: mediaType || 'application/octet-stream', data: '' };
}

// Whether `anthropicForm_` reads the messages as they are sent (not for a compaction).
let readingAsSent = false;

function base64Source(data, mediaType, image) {
  const type = mediaType || (image ? imageTypeOf(data) : 'application/octet-stream');
  return type === undefined ? { type: 'base64', data } : { type: 'base64', media_type: type, data };
}

// The Anthropic file source of a provider's file id (the AI SDK's `fileId`: a string, or one
// per provider).
function fileSource(id) {
  if (typeof id === 'string') return { type: 'file', file_id: id };
  if (id !== null && typeof id === 'object') {
    if (typeof id.anthropic === 'string') return { type: 'file', file_id: id.anthropic };
    for (const k of Object.keys(id)) if (typeof id[k] === 'string') return { type: 'file', file_id: id[k] };
  }
  return { type: 'file', file_id: '' };
}

// A provider-executed tool's use and result in Anthropic form: a server_tool_use and its
// `<name>_tool_result` in the same message (as web_search_tool_result).
const serverUse = (id, name, input) => ({ type: 'server_tool_use', id: textOf(id), name: textOf(name), input: parseArgs(input) });

// The provider file id a LangChain media block names (v1 `fileId`, the older
// `source_type: 'id'` with `id`); undefined when it names none.
const lcFileId = (p) => (typeof p.fileId === 'string' ? p.fileId
  : p.source_type === 'id' && typeof p.id === 'string' ? p.id : undefined);

// An OpenAI file part (Chat's `file.file`, Responses' `input_file`): its data, else its URL,
// else the uploaded file it names; a PDF unless the data URL says otherwise; its `filename`
// as the document's title; `text`: a text file (its data URL says so) is its text (the
// Responses API gives the model that text; Chat takes PDFs only).
function openaiFile(data, url, fileId, filename, text) {
  const b = data === undefined && url === undefined && typeof fileId === 'string'
    ? { type: 'document', source: fileSource(fileId) }
    : (text && textDocument(data, dataUrl.exec(data)?.[1])) || mediaBlock(data !== undefined ? data : url, 'application/pdf');
  if (b.type === 'document' && typeof filename === 'string' && filename !== '') b.title = filename;
  return b;
}

// The plain-text document of `v` (fileText) if `type` is a text type.
function textDocument(v, type) {
  const text = typeof type === 'string' && type.startsWith('text/') ? fileText(v) : undefined;
  return text === undefined ? undefined : { type: 'document', source: { type: 'text', media_type: 'text/plain', data: text } };
}

function mediaBlock(v, mediaType, image = false) {
  const source = mediaSource(v, mediaType, image);
  const t = source.media_type || mediaType || '';
  return { type: image || t.startsWith('image/') || (source.type === 'url' && !mediaType) ? 'image' : 'document', source };
}

// Media a file URI names (Gemini's `fileUri`: an http(s) URL, or a `gs://` or Files API URI,
// kept as a file source).
function fileMedia(uri, mediaType) {
  if (typeof uri === 'string' && /^https?:\/\//.test(uri)) return mediaBlock(uri, mediaType);
  return { type: mediaKind(mediaType) === 1 ? 'image' : 'document', source: fileSource(uri) };
}

const textOf = (v) => (typeof v === 'string' ? v : JSON.stringify(v) ?? '');

// The compaction block an AI SDK compaction text part stands for, with the signature the
// provider keeps beside it.
function aiCompaction(p, text) {
  const b = { type: 'compaction', content: text };
  for (const o of [p.providerOptions, p.providerMetadata]) {
    const a = o !== null && typeof o === 'object' ? o.anthropic : undefined;
    if (a !== null && typeof a === 'object' && typeof a.signature === 'string') { b.signature = a.signature; break; }
  }
  return b;
}

const withoutIndex = ({ index: _, ...b }) => b;

// OpenAI programmatic tool calling: a `program` item runs code on the server, which calls
// client tools (each call names it: `caller: {type: 'program', caller_id}`) and ends with its
// `program_output`. A compaction reads them as Anthropic's programmatic tool calling: the
// program a server tool's use (`program`, its code), its output that tool's result, each call
// its code made a client call whose caller is that use, so its cuts keep them together
// (view.rs server_call_links, boundary::pending_turn). The count's reading (js_view.js, also
// what a prompt-too-long cut reads) keeps them as items of their own: the count entry has no
// room left for this.
const programBlock = (m) => (m.type === 'program' ? { type: 'server_tool_use', id: textOf(m.call_id), name: 'program', input: { code: m.code } }
  : serverResult(m.call_id, 'program', m.result));

// A tool call `b` of Responses item `m`, with the program whose code made it as its caller.
function byProgram(m, b) {
  const c = m.caller?.type === 'program' ? m.caller.caller_id : undefined;
  if (typeof c === 'string') b.caller = { type: 'program', tool_id: c };
  return b;
}

// A part of any ecosystem as an Anthropic block (undefined: not sent).
function anthropicBlock(p) {
  if (typeof p === 'string') return { type: 'text', text: p };
  if (p === null || typeof p !== 'object') return undefined;
  switch (p.type) {
    case 'text': case 'input_text': case 'output_text': {
      // An empty text part is dropped before sending (the AI SDK does; the Messages API
      // refuses empty text blocks).
      const text = textOf(p.text);
      if (text === '') return undefined;
      // The AI SDK's form of the API's compaction block: sent back as that block.
      if (isAiCompaction(p)) return aiCompaction(p, text);
      return { type: 'text', text };
    }
    // The API's compaction block as LangChain keeps it (a streamed one with its `index`); and
    // Anthropic's MCP tool uses (ChatAnthropic keeps them in an AIMessage's content).
    case 'compaction': case 'mcp_tool_use': return withoutIndex(p);
    case 'refusal': return { type: 'text', text: textOf(p.refusal) };
    case 'image': {
      if (p.source !== undefined) return p;
      const v = p.image !== undefined ? p.image : p.url !== undefined ? p.url : p.data;
      // LangChain's image by provider file id (v1 `fileId`; older `source_type: 'id'`).
      if (v === undefined && lcFileId(p) !== undefined) return { type: 'image', source: fileSource(lcFileId(p)) };
      return mediaBlock(v, p.mediaType || p.mimeType || p.mime_type, true);
    }
    // OpenAI's image parts hold images only: an image block, as the count reads them, also
    // when their data URL names no image type (validateForApi then names an image).
    case 'image_url': return mediaBlock(typeof p.image_url === 'string' ? p.image_url : p.image_url && p.image_url.url, undefined, true);
    // OpenAI's parts name an uploaded file by `file_id` when they hold no data or URL: a
    // file source keeps that reference (never an empty base64 block), and `filename` the title.
    case 'input_image': return p.image_url === undefined && typeof p.file_id === 'string'
      ? { type: 'image', source: fileSource(p.file_id) } : mediaBlock(p.image_url, undefined, true);
    // LangChain's plain-text file: its `text`; else, as a file is, what its `data` holds.
    case 'text-plain':
      if (typeof p.text === 'string') return blocksOf(p.text)[0];
    // falls through
    case 'file': {
      if (p.file !== null && typeof p.file === 'object') return openaiFile(p.file.file_data, undefined, p.file.file_id, p.file.filename);
      const v = p.data !== undefined ? p.data : p.url;
      const type = p.mediaType || p.mimeType || p.mime_type;
      if (v === undefined && lcFileId(p) !== undefined) {
        return { type: mediaKind(type) === 1 ? 'image' : 'document', source: fileSource(lcFileId(p)) };
      }
      // A text file is a plain-text document, its text decoded (as @ai-sdk/anthropic sends
      // it): read as text, and the summarizer reads it. LangChain's older plain-text file
      // (`source_type: 'text'`) holds its text as it is (ChatAnthropic sends that document).
      const doc = (p.source_type === 'text' && typeof p.text === 'string'
        ? { type: 'document', source: { type: 'text', media_type: 'text/plain', data: p.text } }
        : textDocument(v, type)) || mediaBlock(v, type);
      if (doc.type !== 'document') return doc;
      // A document's title (the file name) and the `context` @ai-sdk/anthropic sends with it
      // (its provider options' `title` and `context`).
      const a = (p.providerOptions || p.providerMetadata)?.anthropic;
      const title = a?.title || p.filename || p.title;
      if (typeof title === 'string') doc.title = title;
      if (typeof a?.context === 'string') doc.context = a.context;
      return doc;
    }
    case 'input_file': return openaiFile(p.file_data, p.file_url, p.file_id, p.filename, 1);
    // LangChain's Gemini media (`data` or `fileUri`), and Gemini's own parts.
    case 'media': return p.data === undefined && typeof p.fileUri === 'string'
      ? fileMedia(p.fileUri, p.mediaType || p.mimeType) : mediaBlock(p.data, p.mediaType || p.mimeType);
    case 'inlineData': case 'fileData': {
      const d = p[p.type];
      if (d === null || typeof d !== 'object') return { type: 'text', text: JSON.stringify(p) ?? '' };
      return p.type === 'inlineData' ? mediaBlock(d.data, d.mimeType || d.mime_type) : fileMedia(d.fileUri, d.mimeType || d.mime_type);
    }
    // The AI SDK's tool-output media parts; OpenAI's audio and computer screenshots;
    // LangChain's audio blocks. Sent as the media they are (never as their base64 text).
    case 'image-data': return mediaBlock(p.data, p.mediaType, true);
    case 'image-url': return mediaBlock(p.url, undefined);
    // A provider's file id: a file source (no media type or size to tell).
    case 'image-file-id': return { type: 'image', source: fileSource(p.fileId) };
    case 'file-data': return textDocument(p.data, p.mediaType) || mediaBlock(p.data, p.mediaType || 'application/octet-stream');
    // A file (a document) unless its media type says image.
    case 'file-url': return mediaBlock(p.url, p.mediaType || 'application/pdf');
    case 'file-id': return { type: mediaKind(p.mediaType) === 1 ? 'image' : 'document', source: fileSource(p.fileId) };
    case 'input_audio': {
      const a = p.input_audio !== null && typeof p.input_audio === 'object' ? p.input_audio : {};
      return mediaBlock(a.data, `audio/${typeof a.format === 'string' ? a.format : 'wav'}`);
    }
    case 'audio':
      return mediaBlock(p.data !== undefined ? p.data : p.url, p.mimeType || p.mime_type || p.mediaType || 'audio/wav');
    // LangChain's video blocks (and the older `source_type` form): media, never base64 text.
    case 'video':
      return mediaBlock(p.data !== undefined ? p.data : p.url, p.mimeType || p.mime_type || p.mediaType || 'video/mp4');
    case 'computer_screenshot':
      if (p.image_url === undefined && typeof p.file_id === 'string') return { type: 'image', source: fileSource(p.file_id) };
      return mediaBlock(p.image_url, typeof p.image_url === 'string' ? undefined : 'image/png');
    case 'tool-call': return { type: 'tool_use', id: textOf(p.toolCallId), name: textOf(p.toolName), input: parseArgs(p.input) };
    case 'tool_call': return { type: 'tool_use', id: textOf(p.id), name: textOf(p.name), input: parseArgs(p.args) };
    // LangChain v1's server tool call and result: a server tool's use and result (as
    // Anthropic's server_tool_use and web_search_tool_result), so a paused turn is seen.
    case 'server_tool_call': return { type: 'server_tool_use', id: textOf(p.id), name: textOf(p.name), input: parseArgs(p.args) };
    case 'server_tool_call_result': return { ...p, type: 'server_tool_result', tool_use_id: textOf(p.toolCallId) };
    case 'tool-result': return aiResult(p);
    // Reasoning stays, as the thinking it is: the count reads it, so the compaction's sizes
    // and decisions must too (a summary request leaves thinking out).
    case 'reasoning': {
      const t = typeof p.text === 'string' ? p.text : p.reasoning;
      if (typeof t === 'string' && t.length > 0) return { type: 'thinking', thinking: t };
      // Only the provider's opaque reasoning: redacted thinking, as the count reads it.
      const d = typeof t === 'string' ? opaqueReasoning(p) : undefined;
      return d === undefined ? undefined : { type: 'redacted_thinking', data: d };
    }
    case 'thinking': return typeof p.thinking === 'string' ? p : undefined;
    case 'redacted_thinking': return typeof p.data === 'string' ? p : undefined;
    case 'step-start': return undefined;
    // A streamed call's arguments, in pieces (LangChain keeps Anthropic's deltas in the
    // message): its call holds them.
    case 'input_json_delta': return undefined;
    // A tool approval's request and answer (AI SDK) steer the agent loop; they are no
    // message content of their own.
    case 'tool-approval-request': case 'tool-approval-response': return undefined;
    // @ai-sdk/anthropic's tool reference in a tool's output: the tool_reference it sends.
    case 'custom': {
      const a = p.providerOptions?.anthropic;
      if (a?.type === 'tool-reference') return { type: 'tool_reference', tool_name: textOf(a.toolName) };
    }
    // falls through
    default:
      if (typeof p.type === 'string' && (p.type.startsWith('source-') || p.type.startsWith('data-'))) return undefined;
      // Anthropic's server tool results (ChatAnthropic keeps them in an AIMessage's content):
      // sent as they are, without the `index` a stream leaves on them.
      if (isServerResultBlock(p)) return withoutIndex(p);
      return blockKind(p.type) !== undefined ? p : { type: 'text', text: JSON.stringify(p) ?? '' };
  }
}

const blocksOf = (c) => (typeof c === 'string' ? (c.length ? [{ type: 'text', text: c }] : [])
  : Array.isArray(c) ? c.map(anthropicBlock).filter((b) => b !== undefined) : []);

function resultBlock(id, output, isError) {
  const content = typeof output === 'string' ? output
    : Array.isArray(output) ? output.map(anthropicBlock).filter((b) => b !== undefined)
    : textOf(output === undefined ? '' : output);
  const b = { type: 'tool_result', tool_use_id: textOf(id), content };
  if (isError) b.is_error = true;
  return b;
}

function aiResult(p) {
  const o = p.output !== undefined ? p.output : p.result;
  if (o === null || typeof o !== 'object' || typeof o.type !== 'string') return resultBlock(p.toolCallId, o, false);
  switch (o.type) {
    case 'text': return resultBlock(p.toolCallId, textOf(o.value), false);
    case 'error-text': return resultBlock(p.toolCallId, textOf(o.value), true);
    case 'json': return resultBlock(p.toolCallId, textOf(o.value), false);
    case 'error-json': return resultBlock(p.toolCallId, textOf(o.value), true);
    case 'content': return resultBlock(p.toolCallId, Array.isArray(o.value) ? o.value : [], false);
    case 'execution-denied': return resultBlock(p.toolCallId, textOf(o.reason ?? 'The tool call was denied.'), true);
    default: return resultBlock(p.toolCallId, textOf(o), false);
  }
}

const ROLE_OF_KIND = ['user', 'assistant', 'system'];

// An OpenAI Chat message (or a LangChain `{role, …}` dict) in Anthropic form; it is `arr[i]`
// (a legacy function call's id is its message's index: legacyCallId).
// `content` with the speaker's `name` (OpenAI Chat's participant name, LangChain's `name`)
// in front of its first text: in a conversation of several people the summary can say who
// said what.
function named(content, name) {
  if (typeof name !== 'string' || name.trim() === '') return content;
  const k = content.findIndex((b) => b.type === 'text');
  if (k < 0) return [{ type: 'text', text: `${name}:` }, ...content];
  content[k] = { ...content[k], text: `${name}: ${content[k].text}` };
  return content;
}

function anthropicChat(m, kind, role, arr, i) {
  if (m.role === 'tool' || m.role === 'function') {
    const id = m.role === 'function' ? legacyResultId(arr, i, m.name) : m.tool_call_id;
    return [{ role: 'user', content: [resultBlock(id, Array.isArray(m.content) ? m.content : textOf(m.content ?? ''), false)] }];
  }
  if (kind === 2) return [{ role: 'system', content: blocksOf(m.content).map((b) => b.text || '').join('\n') }];
  const content = blocksOf(m.content);
  // Reasoning given back (chatReasoning) first, as the count reads it.
  const r = chatReasoning(m);
  if (r !== undefined) content.unshift({ type: 'thinking', thinking: r });
  // A refusal (`content: null`) is what the assistant answered.
  if (typeof m.refusal === 'string' && m.refusal.length > 0) content.push({ type: 'text', text: m.refusal });
  if (Array.isArray(m.tool_calls)) {
    for (const c of parts(m.tool_calls)) {
      if (!isCall(c)) continue;
      const input = callArgs(c);
      // A custom tool's free-form input stays the text it is (as a Responses custom call's).
      const free = typeof input === 'string' && c.custom !== null && typeof c.custom === 'object' && c.function === undefined;
      content.push({ type: 'tool_use', id: textOf(c.id), name: textOf(callName(c)), input: free ? input : parseArgs(input) });
    }
  }
  if (m.function_call) content.push({ type: 'tool_use', id: legacyCallId(i), name: textOf(m.function_call.name), input: parseArgs(m.function_call.arguments) });
  content.push(...audioBlocks(m.audio));
  return [{ role, content: named(content, m.name) }];
}

// An assistant's audio reply (`audio: {transcript, data}`) as blocks: its transcript as text,
// its audio as the media it is (pushAudio in js_view.js reads the same).
function audioBlocks(a) {
  const t = a && a.transcript;
  return [...(typeof t === 'string' && t ? [{ type: 'text', text: t }] : []), ...(a && a.data ? [mediaBlock(a.data, 'audio/wav')] : [])];
}

// The Anthropic messages of one foreign message `arr[i]`, by shape; each is {role, content}.
function anthropicMessages(arr, i, m, shape) {
  const kind = header(m) & 7;
  const role = ROLE_OF_KIND[kind];
  if (role === undefined) return [];
  switch (shape) {
    case AI_MODEL:
      if (m.role === 'system') return [{ role: 'system', content: textOf(m.content) }];
      if (m.role === 'assistant' && Array.isArray(m.content)) {
        // A provider-executed tool's call and result, both in the assistant message, are a
        // server tool's use and result (as Anthropic's server_tool_use and
        // web_search_tool_result).
        const content = [];
        for (const p of parts(m.content)) {
          if (isProviderResult(p)) {
            content.push(serverResult(p.toolCallId, p.toolName, providerResultValue(p)));
          } else if (p !== null && typeof p === 'object' && p.type === 'tool-call' && p.providerExecuted === true) {
            content.push(serverUse(p.toolCallId, p.toolName, p.input));
          } else {
            const b = anthropicBlock(p);
            if (b !== undefined) content.push(b);
          }
        }
        return [{ role, content }];
      }
      return [{ role, content: blocksOf(m.content) }];
    case AI_UI: {
      if (kind !== 1) return [{ role, content: blocksOf(m.parts) }];
      // An assistant UIMessage holds whole steps: each step's calls, then their results.
      const out = [];
      let calls = [], results = [];
      const flush = () => {
        if (calls.length) out.push({ role: 'assistant', content: calls });
        if (results.length) out.push({ role: 'user', content: results });
        calls = []; results = [];
      };
      for (const p of parts(m.parts)) {
        const t = p !== null && typeof p === 'object' ? p.type : undefined;
        if (t === 'step-start') { flush(); continue; }
        if (typeof t === 'string' && (t === 'dynamic-tool' || t.startsWith('tool-'))) {
          // A part still streaming its input is not sent (convertToModelMessages leaves it out).
          if (p.state === 'input-streaming') continue;
          const name = t === 'dynamic-tool' ? p.toolName : t.slice(5);
          if (p.providerExecuted === true) {
            // A provider-executed tool: its use and result both in the assistant message.
            calls.push(serverUse(p.toolCallId, name, uiInput(p)));
            if (p.state === 'output-available' || p.state === 'output-error') {
              calls.push(serverResult(p.toolCallId, name, p.state === 'output-error' ? p.errorText : p.output));
            }
            continue;
          }
          calls.push({ type: 'tool_use', id: textOf(p.toolCallId), name: textOf(name), input: parseArgs(uiInput(p)) });
          if (p.state === 'output-available') results.push(resultBlock(p.toolCallId, textOf(p.output), false));
          else if (p.state === 'output-error') results.push(resultBlock(p.toolCallId, textOf(p.errorText), true));
          // The AI SDK sends a denied call's result as an error text (convertToModelMessages).
          else if (p.state === 'output-denied') results.push(resultBlock(p.toolCallId, uiDenial(p), true));
          continue;
        }
        const b = anthropicBlock(p);
        if (b === undefined) continue;
        if (results.length) flush();
        calls.push(b);
      }
      flush();
      return out;
    }
    case CHAT:
      return anthropicChat(m, kind, role, arr, i);
    case RESPONSES:
      switch (m.type) {
        case 'function_call': return [{ role: 'assistant', content: [byProgram(m, { type: 'tool_use', id: textOf(m.call_id), name: textOf(m.name), input: parseArgs(m.arguments) })] }];
        case 'custom_tool_call': return [{ role: 'assistant', content: [byProgram(m, { type: 'tool_use', id: textOf(m.call_id), name: textOf(m.name), input: typeof m.input === 'string' ? m.input : parseArgs(m.input) })] }];
        // A program (programmatic tool calling) and its output: a server tool's use and result.
        case 'program': case 'program_output': return [{ role: 'assistant', content: [programBlock(m)] }];
        case 'compaction':
          // The provider's own compaction: an opaque block standing for the conversation
          // before it (model::messages holds_opaque_compaction).
          if (typeof m.encrypted_content !== 'string' || m.encrypted_content.length === 0) return [];
          return [{ role: 'assistant', content: [{ type: 'compaction', encrypted_content: m.encrypted_content }] }];
        case 'reasoning': {
          // Its summary (and content) text as thinking, else its encrypted text as redacted
          // thinking: what the count reads of it.
          const text = reasoningTexts(m).join('');
          if (text.length > 0) return [{ role: 'assistant', content: [{ type: 'thinking', thinking: text }] }];
          if (typeof m.encrypted_content === 'string' && m.encrypted_content.length > 0) {
            return [{ role: 'assistant', content: [{ type: 'redacted_thinking', data: m.encrypted_content }] }];
          }
          return [];
        }
        case 'item_reference': return [];
        // Tools made available from here on: a system message of the Messages API's
        // `tool_addition` blocks, which a compaction keeps (Message::changes_tools).
        case 'additional_tools': {
          const tools = Array.isArray(m.tools) ? parts(m.tools) : [];
          return [{ role: 'system', content: tools.map((t) => ({ type: 'tool_addition', tool: { type: 'tool_definition', definition: t } })) }];
        }
        case 'message': case undefined:
          if (kind === 2) return [{ role: 'system', content: blocksOf(m.content).map((b) => b.text || '').join('\n') }];
          return [{ role, content: blocksOf(m.content) }];
        case 'image_generation_call':
          // The generated image as the image it is (counted as one, sent to a summarizer as
          // a marker), never as its base64 text.
          if (typeof m.result === 'string' && m.result.length > 0) {
            return [{ role: 'assistant', content: [mediaBlock(m.result, 'image/png')] }];
          }
          return [{ role: 'assistant', content: [{ type: 'text', text: JSON.stringify(m) ?? '' }] }];
        case 'code_interpreter_call': {
          // Its code and logs as text, each image it made as the image it is.
          const outs = Array.isArray(m.outputs) ? m.outputs : [];
          const isImage = (o) => o !== null && typeof o === 'object' && o.type === 'image';
          const images = outs.filter(isImage).map((o) => mediaBlock(o.url, 'image/png'));
          const rest = images.length === 0 ? m : { ...m, outputs: outs.filter((o) => !isImage(o)) };
          return [{ role: 'assistant', content: [{ type: 'text', text: JSON.stringify(rest) ?? '' }, ...images] }];
        }
        default: {
          const c = hostedCall(m);
          if (c !== undefined) {
            return [{ role: 'assistant', content: [byProgram(m, { type: 'tool_use', id: textOf(c[0]), name: c[1], input: parseArgs(c[2]) })] }];
          }
          // An output item answers a call; an item that holds its own output (mcp_call) is
          // the assistant's. A failed patch is an error result.
          const o = responsesOutput(m);
          if (o !== undefined) {
            return [{ role: 'user', content: [resultBlock(outputCallId(m), Array.isArray(o) ? o : textOf(o), m.type === 'apply_patch_call_output' && m.status === 'failed')] }];
          }
          return [{ role: 'assistant', content: [{ type: 'text', text: JSON.stringify(m) ?? '' }] }];
        }
      }
    case LANGCHAIN: {
      const f = lcFields(m);
      if (f === undefined) return anthropicChat(m, kind, role, arr, i); // a `{role, …}` dict
      const fn = kind === 0 ? lcFunctionName(m, f) : undefined;
      if (kind === 0 && (typeof f.tool_call_id === 'string' || fn !== undefined)) {
        const id = fn === undefined ? f.tool_call_id : legacyResultId(arr, i, fn);
        return [{ role: 'user', content: [resultBlock(id, Array.isArray(f.content) ? f.content : textOf(f.content ?? ''), f.status === 'error')] }];
      }
      if (kind === 2) return [{ role: 'system', content: blocksOf(f.content).map((b) => b.text || '').join('\n') }];
      // Gemini `functionCall` parts that tool_calls holds too: the calls are read from there.
      const mirrored = Array.isArray(f.content) ? lcMirrored(f) : null;
      const content = blocksOf(mirrored === null ? f.content : f.content.filter((_, k) => !mirrored.has(k)));
      {
        const seen = new Set();
        for (let k = 0; k < content.length; k++) {
          const b = content[k];
          if (b.type !== 'tool_use') continue;
          seen.add(b.id);
          // A streamed call's arguments (its part's `input` is a string): from tool_calls.
          if (typeof b.input === 'string') content[k] = { ...b, input: parseArgs(lcPartInput(f, b)) };
        }
        for (const c of lcCalls(f)) {
          if (c !== null && typeof c === 'object' && !seen.has(c.id)) {
            content.push({ type: 'tool_use', id: textOf(c.id), name: textOf(callName(c)), input: customInput(c) ?? parseArgs(callArgs(c)) });
          }
        }
        const fc = legacyCall(m, f);
        if (fc !== undefined) content.push({ type: 'tool_use', id: legacyCallId(i), name: textOf(fc.name), input: parseArgs(fc.arguments) });
      }
      if (kind === 1) lcKeptBlocks(arr, i, f, content);
      if (kind === 1) lcDoneServerCalls(f, content);
      // The usage the response reported (what the count anchors on) goes with it, in the
      // Messages API's terms (lcUsage): the compaction counts what the count counted.
      const u = kind === 1 ? f.usage_metadata : undefined;
      if (u !== null && typeof u === 'object' && !Array.isArray(u)) {
        const usage = {};
        if (typeof u.input_tokens === 'number') usage.input_tokens = u.input_tokens;
        if (typeof u.output_tokens === 'number') usage.output_tokens = u.output_tokens;
        if (Object.keys(usage).length !== 0) return [{ role, content: named(content, f.name), usage }];
      }
      return [{ role, content: named(content, f.name) }];
    }
    default:
      return [];
  }
}

// Another provider's built-in tool call in a LangChain AI message (fields `f`, its Anthropic
// blocks `content`) that has no result beside it: ChatOpenAI's standard form keeps a Responses
// `mcp_list_tools` or `mcp_call` as a `server_tool_call` alone (the items stay in
// additional_kwargs and are not sent). Only Anthropic pauses a turn on a server tool's call;
// elsewhere the call ran within the response, so it is read as the item it is (text), as the
// Responses items are, not as a use waiting for its result.
function lcDoneServerCalls(f, content) {
  const provider = f.response_metadata?.model_provider;
  if (typeof provider !== 'string' || provider === 'anthropic') return;
  const answered = new Set(content.filter((b) => b.type === 'server_tool_result').map((b) => b.tool_use_id));
  for (let k = 0; k < content.length; k++) {
    const b = content[k];
    if (b.type === 'server_tool_use' && !answered.has(b.id)) {
      content[k] = { type: 'text', text: JSON.stringify({ type: 'server_tool_call', id: b.id, name: b.name, args: b.input }) };
    }
  }
}

// Adds to `content` (the Anthropic blocks of a LangChain AI message, fields `f`, which is
// `arr[i]`) what the message holds beside its content and tool_calls, as the count reads it
// (describeForeign in js_view.js): its audio reply; its Responses items (lcItems) as those
// items are read, reasoning first, the others before its calls.
function lcKeptBlocks(arr, i, f, content) {
  content.push(...audioBlocks(lcAudio(f)));
  const thinking = [], tools = [];
  for (const it of lcItems(f)) {
    (it.type === 'reasoning' ? thinking : tools).push(...(lcItemRead(it)
      ? anthropicMessages(arr, i, it, RESPONSES).flatMap((a) => a.content) : [{ type: 'text', text: JSON.stringify(it) ?? '' }]));
  }
  const at = content.findIndex((b) => b.type === 'tool_use');
  content.splice(at < 0 ? content.length : at, 0, ...tools);
  content.unshift(...thinking);
}

// The indexes of the OpenAI Responses `mcp_approval_response` items of `arr` the API has not
// acted on yet (null when there is none): those in the run of output items that ends the
// array (nothing the API wrote after them: no `mcp_call` it ran on an approval, no answer to
// a denial) whose `mcp_approval_request` comes before that run. Such an answer is the user's
// decision on a call still pending, not a result the model has read: a compaction reads it
// with no counterpart (as the AI SDK's `tool-approval-response`), so that the request reads
// as a call still waiting, which it keeps with everything after it (boundary::pending_turn,
// kept_originals). An answer the API has acted on reads as the request's result.
function unsentApprovals(arr) {
  let tail = arr.length;
  let any = false;
  for (; tail > 0; tail--) {
    const m = arr[tail - 1];
    if (m === null || typeof m !== 'object' || typeof m.type !== 'string' || m.type === 'message' ||
        shapeOfHeader(header(m)) !== RESPONSES || (header(m) & 7) !== 0) break;
    if (m.type === 'mcp_approval_response') any = true;
  }
  if (!any) return null;
  const requests = new Set();
  for (let j = tail - 1; j >= 0; j--) {
    const m = arr[j];
    if (m === null || typeof m !== 'object') continue;
    // The requests of the turn before the run (the API writes nothing else between them).
    if ((header(m) & 7) !== 1) break;
    if (m.type === 'mcp_approval_request' && typeof m.id === 'string') requests.add(m.id);
  }
  let out = null;
  for (let i = tail; i < arr.length; i++) {
    const m = arr[i];
    if (m.type === 'mcp_approval_response' && requests.has(m.approval_request_id)) (out ??= new Set()).add(i);
  }
  return out;
}

// The whole array in Anthropic form: [messages, origin]. Consecutive messages of one role
// that came from different foreign messages stay separate (the pipeline's API view merges
// them as it merges Anthropic ones); empty ones are left out. `compacting`: read for a
// compaction, where an approval the API has not acted on yet has no counterpart
// (unsentApprovals); else read as sent (toApiMessages, validateForApi), where it is its
// request's result.
function anthropicForm_(arr, compacting) {
  const outer = readingAsSent;
  readingAsSent = !compacting;
  try {
    return anthropicFormRead(arr, compacting);
  } finally {
    readingAsSent = outer;
  }
}

function anthropicFormRead(arr, compacting) {
  const messages = [];
  const origin = [];
  const unsent = compacting ? unsentApprovals(arr) : null;
  // OpenAI Responses: whether an item reference came yet, and the ids of the calls read.
  let referenced = false;
  const calls = new Set();
  for (let i = 0; i < arr.length; i++) {
    const m = arr[i];
    const h = header(m);
    const shape = shapeOfHeader(h);
    if (shape === RESPONSES && (h & 7) === 4 && m.type !== 'compaction_trigger') referenced = true;
    const list = unsent !== null && unsent.has(i) ? [] : shape >= AI_MODEL ? anthropicMessages(arr, i, m, shape) : [m];
    for (const a of list) {
      if (a !== m && Array.isArray(a.content) && a.content.length === 0) continue;
      if (shape === RESPONSES && Array.isArray(a.content)) {
        if (a.role === 'assistant') {
          for (const b of a.content) if (b.type === 'tool_use' || b.type === 'server_tool_use') calls.add(b.id);
        } else if (referenced && a.role === 'user') {
          const call = referencedCall(a, calls);
          if (call !== undefined) {
            messages.push(call);
            origin.push(i);
          }
        }
      }
      messages.push(a);
      origin.push(i);
    }
  }
  return [messages, new Uint32Array(origin)];
}

// The call an OpenAI Responses output `a` (Anthropic form) answers when it is none of `calls`
// read and an item reference came before it: a reference may stand for the call (the provider
// reads it from the items it stored), which the Anthropic form does not have. A `tool_use`
// named `item_reference`, read as part of the output's message, stands for it there: the
// output is no orphan (validateForApi, toApiMessages), and a compaction keeps or summarizes
// the two together (the references before the output go with it: kept_originals). Undefined
// when every call is known.
function referencedCall(a, calls) {
  let content;
  for (const b of a.content) {
    if (b.type !== 'tool_result' || calls.has(b.tool_use_id)) continue;
    calls.add(b.tool_use_id);
    (content ??= []).push({ type: 'tool_use', id: b.tool_use_id, name: 'item_reference', input: {} });
  }
  return content === undefined ? undefined : { role: 'assistant', content };
}

// The caller's shape of a user message the compaction adds (`msg`: Anthropic
// {role: 'user', content}); `arr` is the caller's array and `shape` its shape's code as Rust
// decided it (LangChain messages are built with the class of one of its human messages),
// `id` a new id for a UIMessage; `summaryOf` (defined for the summary) goes into a
// UIMessage's `metadata`.
function userMessageIn_(arr, shape, msg, id, summaryOf) {
  const blocks = typeof msg.content === 'string' ? [{ type: 'text', text: msg.content }] : msg.content;
  const text = blocks.filter((b) => b && b.type === 'text').map((b) => b.text).join('\n\n');
  // A message of the array's shape shows which of LangChain's forms it uses (a plain
  // message when the caller named the shape and every message is plain).
  let sample;
  if (shape === LANGCHAIN) {
    for (const m of arr) {
      if (shapeOfHeader(header(m)) === shape) { sample = m; break; }
    }
    if (sample === undefined) shape = ANY;
  }
  switch (shape) {
    case AI_UI: {
      const out = { id, role: 'user', parts: [{ type: 'text', text }] };
      if (summaryOf !== undefined) out.metadata = { compactSummary: true, compactMetadata: summaryOf };
      return out;
    }
    case RESPONSES: return { type: 'message', role: 'user', content: [{ type: 'input_text', text }] };
    case LANGCHAIN: {
      if (Array.isArray(sample.lc_namespace)) {
        const human = arr.find((m) => m !== null && typeof m === 'object' && Array.isArray(m.lc_namespace) && m.type === 'human');
        if (human === undefined) return undefined;
        return new human.constructor({ content: text });
      }
      if (sample.lc === 1) {
        return { lc: 1, type: 'constructor', id: ['langchain_core', 'messages', 'HumanMessage'], kwargs: { content: text, additional_kwargs: {}, response_metadata: {} } };
      }
      if (lcFields(sample) === sample) return { type: 'human', content: text };
      return { type: 'human', data: { content: text, additional_kwargs: {}, response_metadata: {} } };
    }
    default:
      return { role: 'user', content: text };
  }
}

// A copy of the foreign message `m` with the part at block `b` (or, when `n` is not
// 0xffffffff, the part `n` of that tool result's output) replaced by a text part of its
// shape (`input_text` in OpenAI Responses, `text` elsewhere), which keeps the part's cache
// breakpoint or provider options.
function replaceForeignPart(m, shape, b, n, text) {
  const part = { type: shape === RESPONSES ? 'input_text' : 'text', text };
  const nested = n !== 0xffffffff;
  const swap = (list, k) => { const c = list.slice(); c[k] = withOptionsOf(part, list[k]); return c; };
  switch (shape) {
    case AI_MODEL: {
      const content = m.content.slice();
      if (nested) {
        const p = content[b];
        content[b] = { ...p, output: { ...p.output, value: swap(p.output.value, n) } };
      } else {
        content[b] = withOptionsOf(part, content[b]);
      }
      return { ...m, content };
    }
    case AI_UI: {
      const j = uiPartOf(m.parts, b);
      return j < 0 ? m : { ...m, parts: swap(m.parts, j) };
    }
    case CHAT: {
      if (nested) return { ...m, content: swap(m.content, n) };
      const skip = chatReasoning(m) !== undefined ? 1 : 0;
      return { ...m, content: swap(m.content, b - skip) };
    }
    case RESPONSES:
      // A computer screenshot output is read as a list of one part (responsesOutput), but the
      // API takes nothing but a screenshot there (no text, no list): kept as it is, as
      // micro-compaction keeps it (keptOutput).
      if (nested && isMediaPart(m.output)) return m;
      if (nested) return { ...m, output: swap(Array.isArray(m.output) ? m.output : [m.output], n) };
      return { ...m, content: swap(m.content, b) };
    case LANGCHAIN: {
      const f = lcFields(m);
      if (f === undefined) return replaceForeignPart(m, CHAT, b, n, text); // a `{role, …}` dict
      const content = swap(f.content, nested ? n : b);
      if (Array.isArray(m.lc_namespace)) return rebuildLc(m, content);
      return lcWithContent(m, content);
    }
    default:
      return m;
  }
}

export function applyEdits(arr, ops, texts) {
  try {
    return applyEdits_(arr, ops, texts);
  } catch (e) {
    failed(e);
  }
  return null;
}

export function anthropicForm(arr, compacting) {
  try {
    return anthropicForm_(arr, compacting);
  } catch (e) {
    failed(e);
  }
  return [[], new Uint32Array(0)];
}

export function userMessageIn(arr, shape, msg, id, summaryOf) {
  try {
    return userMessageIn_(arr, shape, msg, id, summaryOf);
  } catch (e) {
    failed(e);
  }
  return undefined;
}
