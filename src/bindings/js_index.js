// The readers only microCompact and the compaction call: the tool index (toolIndex,
// apiToolIndex), microCompact's one-crossing apply (microCompactApply, microCompactResult),
// the tool_use_ids of chosen results (toolUseIdsAt) and the checks of the compaction's reading
// (firstRefused, attachmentType, contentEquals). Apart from js_view.js, whose readers and
// interned strings they use, so that the counting module of `context-compaction/count`,
// which calls none of them, does not download them. Every decision is made in Rust.
//
// js_view.js keeps the state the count's readers share with these (the interned strings,
// where the message being described sits) in variables of its own, reached from here through
// the small functions it exports for that (an exported variable is read through a cell, which
// is slower on the count's paths); the tool index's buffers are this file's, set aside for a
// nested call with js_view.js's own state (setAsideToo).
import { plainSlice } from './js_batch.js';
import {
  AI_MODEL, ANTHROPIC, ANY, CHAT, LANGCHAIN, RESPONSES, VIEW_CONSTANTS, callArgs, callName, clearedFlag,
  contentOf, describeForeign, describeOne, failed, giveStrings, header, internAfresh, hostedCall, isCall, keptOutput,
  chatReasoning, isProviderResult, jsonLen, lcFields, lcFunctionName, legacyCall, lcKind, lcPartInput, lcToolCalls, legacyCallId, legacyResultId, onChain,
  outputCallId, parts, pathIn, plainTextLen, pushPart, pushResult, putInternedBack, readingAt, responsesOutput, rsFree,
  setAsideToo, setInterning, shapeOfHeader, strLen, symbolString, tlen,
} from './js_view.js';
import { keepBreakpoint, setForeignResult, withContent } from './js_edit.js';

// Copies of js_view.js's constants: an imported binding is read through a cell on every use,
// and these are compared in the loops below.
const { PLACEHOLDER, MISSING, PLAIN_TEXT, UNKNOWN_ROLE } = VIEW_CONSTANTS;

// The number of `key` in `map`, numbering a new key after the others (from 1).
function numbered(map, key) {
  let n = map.get(key);
  if (n === undefined) {
    n = map.size + 1;
    map.set(key, n);
  }
  return n;
}

// The tool names of one tool index, numbered in the order they are first met (`list` is
// what `takeStrings` then gives: the Rust side reads a rule for each name). A session uses a
// handful of tools: a name is checked against the previous call's first (most often the
// same), then looked up in the list, in a Map only past 16 names. Both readers of the index
// (toolIndex_, apiToolIndex_) make one per reading.
class ToolNames {
  constructor() {
    this.list = [];
    this.byName = null;
    this.last = null;
    this.lastK = -1;
  }

  number(s) {
    if (s !== this.last) {
      this.last = s;
      this.lastK = this.lookUp(s);
    }
    return this.lastK;
  }

  lookUp(s) {
    const list = this.list;
    if (this.byName === null) {
      for (let k = 0; k < list.length; k++) if (list[k] === s) return k;
      if (list.length === 16) {
        this.byName = new Map();
        for (let k = 0; k < list.length; k++) this.byName.set(list[k], k);
      }
    }
    if (this.byName !== null) {
      const k = this.byName.get(s);
      if (k !== undefined) return k;
      this.byName.set(s, list.length);
    }
    list.push(rsFree(s));
    return list.length - 1;
  }
}

// Every client tool call (assistant messages) and tool result (user messages) of the main
// chain from arr[from] on, each result matched with the latest earlier call of its id:
// [3 numbers per call: message, name (index into the strings `takeStrings` gives), path
// (0 = none or not asked, else symbol + 1), then 6 per result: message, block, call (0 =
// none, else index + 1), text length, media count, cleared, then the number of calls, of
// results and of path symbols]. Returns null when a message is malformed or of another shape than the ones
// before it (the Rust side then reads them in detail to report where).
//
// With `keep` (microCompact), what the edits need later is kept for `microCompactApply`: each
// result's tool_use_id and its message's shape, so the edits are applied without reading the
// messages again.
function toolIndex_(arr, from, withPaths, keep) {
  internAfresh();
  kept = null;
  const pathSyms = withPaths ? new Map() : null;
  nUses = 0;
  nResults = 0;
  const ids = [];
  const resultIds = keep ? [] : null;
  // Each result's shape when one is of another ecosystem's (null while all are ANY).
  let resultShapes = null;
  // The tool names, numbered apart from the strings another shape's description interns
  // (its ids and paths).
  const names = new ToolNames();
  // The number of path `p`, 0 when paths are not asked for.
  const pathNumber = (p) => (pathSyms === null ? 0 : numbered(pathSyms, p));
  const pathOf = (input) => {
    const p = pathSyms === null ? undefined : pathIn(input);
    return p === undefined ? 0 : pathNumber(p);
  };
  let byId = null; // built only when a result's call is not among the recent ones
  const findCall = (id) => {
    const stop = Math.max(0, ids.length - 64);
    for (let k = ids.length - 1; k >= stop; k--) if (ids[k] === id) return k + 1;
    if (stop === 0) return 0;
    if (byId === null) byId = new Map();
    for (let k = byId.size; k < ids.length; k++) byId.set(ids[k], k + 1);
    return byId.get(id) || 0;
  };
  // A result of message i, block b, of another ecosystem's `shape`.
  const recordResult = (i, b, id, text, media, cleared, shape) => {
    pushIndexWords(i, b, id === null ? 0 : findCall(id), text, media, cleared);
    if (keep) {
      resultIds.push(id === null ? undefined : id);
      if (resultShapes === null) resultShapes = new Array(resultIds.length - 1).fill(ANY);
      resultShapes.push(shape);
    }
  };
  // The calls and results of `words`, describeForeign's description of message i (or of one
  // of its blocks, numbered from b0).
  const indexWords = (i, words, shape, b0) => {
    let pos = 2;
    for (let b = b0; b < b0 + words[1]; b++) {
      const k = words[pos];
      if (k === 3) {
        const path = words[pos + 7] === 0 ? 0 : pathNumber(symbolString(words[pos + 7]));
        ids.push(words[pos + 5] === 0 ? null : symbolString(words[pos + 5]));
        pushUse(i, words[pos + 6] === 0 ? -1 : names.number(symbolString(words[pos + 6])), path);
      } else if (k === 5) {
        let text = words[pos + 1], media = 0;
        let q = pos + BLOCK_WORDS;
        for (let j = 0; j < words[pos + 4]; j++) {
          if (words[q] === 0 || (words[q + 3] & PLAIN_TEXT)) text += words[q + 1];
          else if (words[q] === 1 || words[q] === 2) media++;
          else if (words[q] === 9) text += words[q + 2]; // another block: its JSON
          q = skipBlock(words, q);
        }
        const id = words[pos + 8] === 0 ? null : symbolString(words[pos + 8]);
        recordResult(i, b, id, text, media, words[pos + 3] & 1, shape);
      }
      pos = skipBlock(words, pos);
    }
  };
  // Another ecosystem's message read where it is: its calls and results get what
  // describeForeign would give them (its block numbers, lengths and flags), but no
  // description is written and no id interned. What is rare (a result holding parts, an
  // Anthropic block among the parts, a UIMessage) is described as describeForeign does.
  // A call (pushCall's numbers).
  const indexCall = (i, id, name, input) => {
    const f = pathSyms === null ? undefined : pathIn(input);
    ids.push(typeof id === 'string' ? rsFree(id) : null);
    pushUse(i, names.number(typeof name === 'string' ? rsFree(name) : ''), f === undefined ? 0 : pathNumber(rsFree(f)));
  };
  // Block b of message i as describeForeign describes it (`describe` pushes it), then indexed.
  const indexDescribed = (i, b, shape, describe) => {
    const words = [4, 1];
    describe(words);
    indexWords(i, words, shape, b);
  };
  const resultId = (id) => (typeof id === 'string' ? rsFree(id) : null);
  // A result whose output is a string or any JSON value but an array (pushResult's numbers).
  const indexOutput = (i, b, id, output, shape, kept = false) => {
    if (Array.isArray(output)) {
      indexDescribed(i, b, shape, (words) => pushResult(words, false, id, output, kept));
      return;
    }
    recordResult(i, b, resultId(id), output === undefined || output === null ? 0 : strLen(output), 0, kept ? 1 : clearedFlag(output), shape);
  };
  // One part (pushPart's numbers).
  const indexPart = (i, b, p, shape) => {
    if (p === null || typeof p !== 'object' || Array.isArray(p)) return;
    const t = p.type;
    if (t === 'tool-call' || t === 'tool_use' || t === 'tool_call' || t === 'server_tool_use' || t === 'server_tool_call') {
      indexCall(i, p.toolCallId !== undefined ? p.toolCallId : p.id,
        p.toolName !== undefined ? p.toolName : p.name, 'input' in p ? p.input : p.args);
    } else if (t === 'tool-result') {
      // pushAiOutput's numbers.
      const o = p.output !== undefined ? p.output : p.result;
      if (o === null || typeof o !== 'object' || Array.isArray(o) || typeof o.type !== 'string') {
        indexOutput(i, b, p.toolCallId, o, shape);
        return;
      }
      switch (o.type) {
        case 'text': case 'error-text': case 'json': case 'error-json':
          recordResult(i, b, resultId(p.toolCallId), o.value === undefined ? 0 : strLen(o.value), 0, clearedFlag(o.value), shape);
          return;
        case 'content':
          indexOutput(i, b, p.toolCallId, Array.isArray(o.value) ? o.value : [], shape);
          return;
        case 'execution-denied':
          recordResult(i, b, resultId(p.toolCallId), typeof o.reason === 'string' ? tlen(o.reason) : 0, 0, 1, shape);
          return;
        default:
          recordResult(i, b, resultId(p.toolCallId), jsonLen(o), 0, 0, shape);
      }
    } else if (t === 'tool_result') {
      indexDescribed(i, b, shape, (words) => pushPart(p, false, words));
    }
  };
  // A content field from block b0 on (pushContent's numbers); returns its number of blocks.
  const indexContent = (i, c, b0, shape) => {
    if (Array.isArray(c)) {
      for (let k = 0, nk = parts(c).length; k < nk; k++) indexPart(i, b0 + k, c[k], shape);
      return c.length;
    }
    return c === undefined || c === null || c === '' ? 0 : 1;
  };
  // An OpenAI Chat message (or a LangChain `{role, …}` dict) i (describeChat's numbers).
  const indexChat = (i, m, shape) => {
    if (m.role === 'tool' || m.role === 'function') {
      const id = m.role === 'function' ? legacyResultId(arr, i, m.name) : m.tool_call_id;
      indexOutput(i, 0, id, typeof m.content === 'string' || Array.isArray(m.content) ? m.content : '', shape);
      return;
    }
    let b = chatReasoning(m) !== undefined ? 1 : 0;
    b += indexContent(i, m.content, b, shape);
    if (typeof m.refusal === 'string' && m.refusal.length > 0) b++;
    if (Array.isArray(m.tool_calls)) {
      for (const c of parts(m.tool_calls)) {
        if (isCall(c)) indexCall(i, c.id, callName(c), callArgs(c));
        else indexPart(i, b, c, shape);
        b++;
      }
    }
    if (m.function_call !== null && typeof m.function_call === 'object') {
      indexCall(i, legacyCallId(i), m.function_call.name, m.function_call.arguments);
    }
  };
  // Message i of `shape` (describeForeign's numbers); false for a UIMessage, left to it.
  const indexForeign = (i, m, shape) => {
    switch (shape) {
      case AI_MODEL:
        if (m.role === 'assistant' && Array.isArray(m.content)) {
          const c = m.content;
          // Provider-executed results are described as server tool results: not indexed.
          for (let k = 0, nk = parts(c).length; k < nk; k++) if (!isProviderResult(c[k])) indexPart(i, k, c[k], shape);
          return true;
        }
        indexContent(i, m.content, 0, shape);
        return true;
      case CHAT:
        indexChat(i, m, shape);
        return true;
      case RESPONSES:
        switch (m.type) {
          case 'message': case undefined: indexContent(i, m.content, 0, shape); break;
          case 'function_call': indexCall(i, m.call_id, m.name, m.arguments); break;
          case 'custom_tool_call': indexCall(i, m.call_id, m.name, m.input); break;
          case 'reasoning': case 'compaction': break;
          default: {
            // describeResponsesItem's numbers: a built-in tool's call, an output item's result.
            const c = hostedCall(m);
            if (c !== undefined) {
              indexCall(i, c[0], c[1], c[2]);
              break;
            }
            const o = responsesOutput(m);
            if (o !== undefined) indexOutput(i, 0, outputCallId(m), o, shape, keptOutput(m));
          }
        }
        return true;
      case LANGCHAIN: {
        const f = lcFields(m);
        if (f === undefined) {
          indexChat(i, m, shape);
          return true;
        }
        const kind = lcKind(m, f), fn = kind === 0 ? lcFunctionName(m, f) : undefined;
        if (kind === 0 && (typeof f.tool_call_id === 'string' || fn !== undefined)) {
          indexOutput(i, 0, fn === undefined ? f.tool_call_id : legacyResultId(arr, i, fn), f.content, shape);
          return true;
        }
        const c = f.content;
        if (Array.isArray(c)) {
          // pushLcContent's numbers: a streamed `tool_use` part's arguments from tool_calls.
          for (let k = 0, nk = parts(c).length; k < nk; k++) {
            const p = c[k];
            if (p !== null && typeof p === 'object' && p.type === 'tool_use' && typeof p.input === 'string') {
              indexCall(i, p.id, p.name, lcPartInput(f, p));
            } else {
              indexPart(i, k, p, shape);
            }
          }
        }
        for (const x of lcToolCalls(f)) indexCall(i, x.id, callName(x), callArgs(x));
        const fc = legacyCall(m, f);
        if (fc !== undefined) indexCall(i, legacyCallId(i), fc.name, fc.arguments);
        return true;
      }
      default:
        return false;
    }
  };
  let arrayShape = ANY;
  for (let i = from; i < arr.length; i++) {
    const m = arr[i];
    // An Anthropic API message (`{role: 'user' | 'assistant', content}`, nothing of another
    // shape) is read in one pass over its blocks, its shape (what `header` works out from
    // the first block that is not text) found on the way. Anything else, or a first
    // non-text block of a type not listed here, is read by the general path below.
    const role = microFast && m !== null && typeof m === 'object' ? m.role : undefined;
    if ((role === 'user' || role === 'assistant') && m.type === undefined && !Array.isArray(m) &&
        m.lc_namespace === undefined && m.parts === undefined && m.tool_calls === undefined &&
        m.function_call === undefined) {
      const kind = role === 'user' ? 0 : 1;
      const c = m.content;
      let shape = ANY, general = false;
      if (Array.isArray(c)) {
        for (let b = 0, nb = parts(c).length; b < nb; b++) {
          const x = c[b];
          if (x === null || typeof x !== 'object') return null;
          const t = x.type;
          if (typeof t !== 'string') return null;
          if (t === 'text') continue;
          if (shape === ANY) {
            if (t !== 'tool_use' && t !== 'tool_result' && t !== 'thinking' && t !== 'redacted_thinking') {
              general = true; // nothing of this message was recorded yet
              break;
            }
            shape = ANTHROPIC;
          }
          if (kind === 1 && t === 'tool_use') {
            if (typeof x.id !== 'string' || typeof x.name !== 'string') return null;
            ids.push(x.id);
            pushUse(i, names.number(x.name), pathOf(x.input));
          } else if (kind === 0 && t === 'tool_result') {
            const id = x.tool_use_id;
            if (typeof id !== 'string') return null;
            if (!pushIndexedResult(i, b, findCall(id), x.content)) return null;
            if (keep) {
              resultIds.push(id);
              if (resultShapes !== null) resultShapes.push(ANY);
            }
          }
        }
      } else if (c !== undefined && c !== null && typeof c !== 'string') {
        general = true; // malformed: the general path reports it
      }
      if (!general) {
        if (m.usage !== undefined && m.usage !== null) shape = ANTHROPIC;
        if (shape !== ANY) {
          if (arrayShape === ANY) arrayShape = shape;
          else if (shape !== arrayShape) return null;
        }
        continue;
      }
    }
    const h = onChain(arr, i, header(m));
    const kind = h & 7;
    if (kind === 7 || kind === UNKNOWN_ROLE) return null; // the Rust side names what is wrong
    const shape = shapeOfHeader(h);
    // Two shapes in one array: the Rust side reads the messages in detail and reports it.
    if (shape !== ANY) {
      if (arrayShape === ANY) arrayShape = shape;
      else if (shape !== arrayShape) return null;
    }
    if ((h & 16) || kind > 1) continue;
    // describeForeign's [6, 0]: the Rust side names the missing field.
    if (shape === CHAT && m.role === 'tool' && typeof m.tool_call_id !== 'string') return null;
    if (shape >= AI_MODEL && microFast && indexForeign(i, m, shape)) continue;
    if (shape >= AI_MODEL) {
      // Another ecosystem's message: its calls and results as describeForeign numbers them
      // (a UIMessage holds both; the edits use the same block numbers).
      const words = [];
      readingAt(arr, i);
      describeForeign(m, shape, false, words);
      readingAt(null, 0);
      indexWords(i, words, shape, 0);
      continue;
    }
    const c = contentOf(m);
    if (c === undefined || c === null || typeof c === 'string') continue;
    if (!Array.isArray(c)) return null;
    for (let b = 0, nb = parts(c).length; b < nb; b++) {
      const x = c[b];
      if (x === null || typeof x !== 'object' || typeof x.type !== 'string') return null;
      if (kind === 1 && x.type === 'tool_use') {
        if (typeof x.id !== 'string' || typeof x.name !== 'string') return null;
        ids.push(x.id);
        pushUse(i, names.number(x.name), pathOf(x.input));
      } else if (kind === 0 && x.type === 'tool_result') {
        if (typeof x.tool_use_id !== 'string') return null;
        if (!pushIndexedResult(i, b, findCall(x.tool_use_id), x.content)) return null;
        if (keep) {
          resultIds.push(x.tool_use_id);
          if (resultShapes !== null) resultShapes.push(ANY);
        }
      }
    }
  }
  // The calls, then the results, then the counts, in the reused buffer: the glue copies them
  // into WASM memory (no array is grown or joined, and no ArrayBuffer allocated per read).
  const n = nUses + nResults;
  if (idxUses.length < n + 3) {
    const more = new Uint32Array(2 * (n + 3));
    more.set(idxUses.subarray(0, nUses));
    idxUses = more;
  }
  idxUses.set(idxResults.subarray(0, nResults), nUses);
  idxUses[n] = nUses / 3;
  idxUses[n + 1] = nResults / 6;
  idxUses[n + 2] = pathSyms === null ? 0 : pathSyms.size;
  giveStrings(names.list); // what `takeStrings` gives
  if (keep && microFast) kept = { arr, len: arr.length, ids: resultIds, shapes: resultShapes };
  return idxUses.subarray(0, n + 3);
}

// microCompact's reading of Anthropic API messages (`{role: 'user' | 'assistant', content}`),
// the whole array in one pass: the tool index `toolIndex_` gives from index 0 (such messages
// never start a context, so the active part is all of them), written into WASM memory at
// `at` (the calls, the results, the counts; `cap` words there). Returns the words written;
// -1 when a message is of another kind, or malformed, or a block is not one this pass knows
// (the Rust side then finds where the context starts and reads with `toolIndex_`, which
// reports what is wrong); -n when n words are needed. No closure is made per call (one
// ToolNames), nor, up to 16 tool names, a Map; the ids are not kept (microCompactApply_ reads
// them from the blocks it clears).
function apiToolIndex_(arr, withPaths, memory, at, cap) {
  kept = null;
  nUses = 0;
  nResults = 0;
  let pathSyms = null;
  const ids = [];
  const names = new ToolNames();
  for (let i = 0; i < arr.length; i++) {
    const m = arr[i];
    if (m === null || typeof m !== 'object') return -1;
    const role = m.role;
    if ((role !== 'user' && role !== 'assistant') || m.type !== undefined || Array.isArray(m) ||
        m.lc_namespace !== undefined || m.parts !== undefined || m.tool_calls !== undefined ||
        m.function_call !== undefined) return -1;
    const c = m.content;
    if (!Array.isArray(c)) {
      if (c !== undefined && c !== null && typeof c !== 'string') return -1;
      continue;
    }
    const user = role === 'user';
    let seen = false; // a block that is not text met (its type then was checked)
    for (let b = 0, nb = parts(c).length; b < nb; b++) {
      const x = c[b];
      if (x === null || typeof x !== 'object') return -1;
      const t = x.type;
      if (typeof t !== 'string') return -1;
      if (t === 'text') continue;
      if (!seen) {
        if (t !== 'tool_use' && t !== 'tool_result' && t !== 'thinking' && t !== 'redacted_thinking') return -1;
        seen = true;
      }
      if (!user && t === 'tool_use') {
        const id = x.id, name = x.name;
        if (typeof id !== 'string' || typeof name !== 'string') return -1;
        ids.push(id);
        const p = withPaths ? pathIn(x.input) : undefined;
        pushUse(i, names.number(name), p === undefined ? 0 : numbered(pathSyms ??= new Map(), p));
      } else if (user && t === 'tool_result') {
        const id = x.tool_use_id;
        if (typeof id !== 'string') return -1;
        // The call: most often among the last few (else 0, and the general reader looks
        // further, with a Map).
        let call = 0;
        const stop = Math.max(0, ids.length - 64);
        for (let k = ids.length - 1; k >= stop; k--) {
          if (ids[k] === id) {
            call = k + 1;
            break;
          }
        }
        if (call === 0 && stop > 0) return -1;
        if (!pushIndexedResult(i, b, call, x.content)) return -1;
      }
    }
  }
  const n = nUses + nResults;
  if (n + 3 > cap) return -(n + 3);
  if (memory !== idxMemory || idxW.byteLength === 0) {
    idxMemory = memory;
    idxW = new Uint32Array(memory.buffer);
  }
  idxW.set(idxUses.subarray(0, nUses), at);
  idxW.set(idxResults.subarray(0, nResults), at + nUses);
  idxW[at + n] = nUses / 3;
  idxW[at + n + 1] = nResults / 6;
  idxW[at + n + 2] = pathSyms === null ? 0 : pathSyms.size;
  giveStrings(names.list); // what `takeStrings` gives
  setInterning(true);
  // The ids microCompactApply_ reports: read again there from the results it clears.
  kept = { arr, len: arr.length, ids: null, shapes: null };
  return n + 3;
}
// A view on the WASM memory `apiToolIndex_` writes into (made again when the memory grows).
let idxMemory = null, idxW = null;

// Appends a tool result's six words to the tool index's `results`: its message and block, its
// call, and what its `content` holds (text length, media blocks, 1 when it is the placeholder
// already). False when the content is malformed: the caller then returns null, and the general
// path reports it.
function pushIndexedResult(message, block, call, cc) {
  let text = 0, media = 0, cleared = 0;
  if (typeof cc === 'string') {
    text = cc.length;
    if (text === PLACEHOLDER.length && cc === PLACEHOLDER) cleared = 1;
  } else if (Array.isArray(cc)) {
    for (const n of cc) {
      if (n === null || typeof n !== 'object') return false;
      if (n.type === 'image') media++;
      else if (n.type === 'document') {
        const t = plainTextLen(n.source); // a plain-text document is its text
        if (t >= 0) text += t;
        else media++;
      } else if (n.type === 'text') {
        if (typeof n.text !== 'string') return false;
        text += n.text.length;
      } else if (typeof n.type === 'string' && n.type !== 'tool_reference') {
        // Another block (a `search_result`): as its JSON, as the count weighs it (kind 9 of
        // indexWords; view::ConversationView::tool_index).
        text += jsonLen(n);
      }
    }
  } else if (cc !== undefined && cc !== null) {
    return false;
  }
  pushIndexWords(message, block, call, text, media, cleared);
  return true;
}

// The tool index's calls (3 words each) and results (6 each) as `toolIndex_` writes them:
// buffers reused from one read to the next, grown when full.
let idxUses = new Uint32Array(768), idxResults = new Uint32Array(768);
let nUses = 0, nResults = 0;

function pushUse(message, name, path) {
  if (nUses + 3 > idxUses.length) {
    const more = new Uint32Array(2 * idxUses.length);
    more.set(idxUses);
    idxUses = more;
  }
  idxUses[nUses] = message;
  idxUses[nUses + 1] = name;
  idxUses[nUses + 2] = path;
  nUses += 3;
}

function pushIndexWords(message, block, call, text, media, cleared) {
  if (nResults + 6 > idxResults.length) {
    const more = new Uint32Array(2 * idxResults.length);
    more.set(idxResults);
    idxResults = more;
  }
  const r = idxResults;
  r[nResults] = message;
  r[nResults + 1] = block;
  r[nResults + 2] = call;
  r[nResults + 3] = text;
  r[nResults + 4] = media;
  r[nResults + 5] = cleared;
  nResults += 6;
}

// What the last `toolIndex_` with `keep` read, for `microCompactApply_` (null when none).
let kept = null;

// A call made while another is reading (enterPackage in js_view.js) builds its tool index in
// buffers of its own; the outer call's are put back when it returns.
setAsideToo(() => {
  const saved = [kept, nUses, nResults, idxUses, idxResults];
  kept = null;
  nUses = 0;
  nResults = 0;
  idxUses = new Uint32Array(768);
  idxResults = new Uint32Array(768);
  return () => {
    [kept, nUses, nResults, idxUses, idxResults] = saved;
  };
});

// Whether microCompact's reads take their fast paths (the one-pass reading of Anthropic API
// messages in `toolIndex_`, `microCompactApply_`). Tests switch them off to compare the
// results with the general readers' (tests/node/micro-fast.test.mjs imports this module from
// the package's snippets).
let microFast = true;
export function setMicroFast(on) {
  microFast = on === true;
}

const BLOCK_WORDS = 9;

// The position after the block at `pos` of a description and its nested blocks.
function skipBlock(words, pos) {
  const nested = words[pos + 4];
  pos += BLOCK_WORDS;
  for (let j = 0; j < nested; j++) pos = skipBlock(words, pos);
  return pos;
}

// The foreign message's block `b` as described (its position in `words`), or -1.
function foreignBlock(m, b, words) {
  describeForeign(m, shapeOfHeader(header(m)), false, words);
  let pos = 2;
  for (let k = 0; k < words[1]; k++) {
    if (k === b) return pos;
    pos = skipBlock(words, pos);
  }
  return -1;
}

// microCompact's result object, built in one call (no key crosses as a string).
export function microCompactResult(messages, tokensFreed, clearedToolUseIds) {
  return { messages, tokensFreed, clearedToolUseIds: onceEach(clearedToolUseIds) };
}

// Per hash of an id, the call of mayRepeat that last saw it (a call's number marks what it
// saw, so nothing is cleared between calls).
const SEEN_AT = new Uint16Array(65536);
let seenCall = 0;
// Of the last four characters (where generated ids differ: `toolu_…`, `call_…`), and the length.
const idHash = (id) => {
  const n = id.length;
  if (n < 4) return (n === 0 ? 0 : id.charCodeAt(0) * 31 + id.charCodeAt(n - 1) + n * 7919) & 0xffff;
  const h = ((id.charCodeAt(n - 1) * 31 + id.charCodeAt(n - 2)) * 31 + id.charCodeAt(n - 3)) * 31 + id.charCodeAt(n - 4) + n * 7919;
  return (h ^ (h >>> 16)) & 0xffff;
};

// False when the ids (strings) are surely all different: no two share a hash of a few of
// their characters. A Set of 60 ids costs a microCompact about a tenth of its time; this
// reads four characters of each. True (look with a Set) on any shared hash or a non-string.
function mayRepeat(ids) {
  if (++seenCall === 65536) {
    SEEN_AT.fill(0);
    seenCall = 1;
  }
  const mark = seenCall;
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k];
    if (typeof id !== 'string') return true;
    const h = idHash(id);
    if (SEEN_AT[h] === mark) return true;
    SEEN_AT[h] = mark;
  }
  return false;
}

// `ids` with each id once, where it first comes (results that share a tool_use_id are listed
// by it once: the Rust side's MicroCompactPlan::cleared_tool_use_ids does the same).
function onceEach(ids) {
  if (ids.length < 2 || !mayRepeat(ids)) return ids;
  const seen = new Set();
  const out = [];
  for (const id of ids) {
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(id);
  }
  return out.length === ids.length ? ids : out;
}

// microCompact's result, `{messages, tokensFreed, clearedToolUseIds}`, from the results the
// Rust side chose to clear: `picked` holds their positions in the tool index the last
// `toolIndex_` with `keep` read of `arr` (ascending), `text` the content they get. A copy of
// `arr` sharing every other message; each edited message, its content array and the edited
// blocks are copied. Null when that index is not of `arr` as it is (the Rust side then
// applies its edits the general way).
function microCompactApply_(arr, picked, text, tokensFreed) {
  const k0 = kept;
  kept = null;
  if (!microFast) return null;
  if (picked.length === 0) return { messages: plainSlice(arr, 0, arr.length), tokensFreed, clearedToolUseIds: [] };
  if (k0 === null || k0.arr !== arr || k0.len !== arr.length) return null;
  // ids null: the index was read by apiToolIndex_, and each id is read from its block.
  const { ids, shapes } = k0;
  const results = idxResults;
  const count = ids === null ? nResults / 6 : ids.length;
  const out = plainSlice(arr, 0, arr.length);
  const cleared = [];
  let cur = -1, content = null;
  for (let q = 0; q < picked.length; q++) {
    const r = picked[q];
    if (r >= count) return null;
    const i = results[r * 6], b = results[r * 6 + 1], shape = shapes === null ? ANY : shapes[r];
    if (shape >= AI_MODEL) {
      cleared.push(ids[r]);
      out[i] = setForeignResult(out[i], shape, b, text);
      continue;
    }
    if (i !== cur) {
      if (cur >= 0) out[cur] = withContent(arr[cur], content);
      cur = i;
      content = contentOf(arr[i]).slice();
    }
    const block = content[b];
    cleared.push(ids === null ? block.tool_use_id : ids[r]);
    content[b] = keepBreakpoint({ ...block, content: text }, block);
  }
  if (cur >= 0) out[cur] = withContent(arr[cur], content);
  return { messages: out, tokensFreed, clearedToolUseIds: onceEach(cleared) };
}

// The tool_use_id of the tool result at each [message, block] pair of `at`.
function toolUseIdsAt_(arr, at) {
  const out = [];
  let last = -1, shape = ANY; // the shape of message `last` (edits come by message)
  for (let k = 0; k < at.length; k += 2) {
    const m = arr[at[k]];
    if (at[k] !== last) {
      last = at[k];
      shape = shapeOfHeader(header(m));
    }
    if (shape >= AI_MODEL) {
      const saved = internAfresh();
      const words = [];
      readingAt(arr, at[k]);
      const pos = foreignBlock(m, at[k + 1], words);
      readingAt(null, 0);
      out.push(pos >= 0 && words[pos + 8] !== 0 ? symbolString(words[pos + 8]) : undefined);
      putInternedBack(saved);
      continue;
    }
    out.push(contentOf(m)[at[k + 1]].tool_use_id);
  }
  return out;
}

function attachmentType_(arr, i) {
  const a = arr[i].attachment;
  return a !== null && typeof a === 'object' && typeof a.type === 'string' ? a.type : undefined;
}

function contentEquals_(arr, i, text) {
  const c = contentOf(arr[i]);
  if (typeof c === 'string') return c === text;
  return Array.isArray(c) && c.length === 1 && c[0] !== null && typeof c[0] === 'object' &&
    c[0].type === 'text' && c[0].text === text;
}

// Index of the first message of arr[from..to) whose content the structural reading
// (`describeContents_` without an estimate) describes as something the Rust side refuses —
// a content of the wrong type, a line whose `message` is not an object, a block that is not
// an object or has no string `type`, a required field missing — or whose description throws
// (the error kept, as `failed` keeps it); -1 when there is none. A filter before that
// reading: the Rust side reads each message it names (and only those) to give the error the
// count gives (check_as_counted in async_exports.rs). Interns nothing.
function firstRefused_(arr, from, to, shape) {
  const was = setInterning(false);
  const out = [];
  try {
    for (let i = from; i < to; i++) {
      out.length = 0;
      try {
        describeOne(arr[i], shape, false, out);
      } catch (e) {
        failed(e); // the Rust side reports it for message i
        return i;
      }
      const tag = out[0];
      if (tag === 4) {
        for (let k = 2; k < out.length; k += 9) {
          if (out[k] === 10 || out[k] === 11 || out[k + 1] === MISSING) return i;
        }
      } else if (tag !== 0 && tag !== 1 && tag !== 2) return i;
    }
    return -1;
  } finally {
    setInterning(was);
  }
}

export function firstRefused(arr, from, to, shape) {
  try {
    return firstRefused_(arr, from, to, shape);
  } catch (e) {
    failed(e);
  }
  return from;
}

export function attachmentType(arr, i) {
  try {
    return attachmentType_(arr, i);
  } catch (e) {
    failed(e);
  }
  return undefined;
}

export function contentEquals(arr, i, text) {
  try {
    return contentEquals_(arr, i, text);
  } catch (e) {
    failed(e);
  }
  return false;
}

export function toolIndex(arr, from, withPaths, keep) {
  try {
    return toolIndex_(arr, from, withPaths, keep);
  } catch (e) {
    kept = null;
    failed(e);
  }
  return null;
}

export function apiToolIndex(arr, withPaths, memory, at, cap) {
  if (!microFast || !Array.isArray(arr)) return -1;
  try {
    return apiToolIndex_(arr, withPaths, memory, at, cap);
  } catch (_) {
    kept = null;
    return -1; // read again by toolIndex_, which reports what threw
  }
}

export function microCompactApply(arr, picked, text, tokensFreed) {
  try {
    return microCompactApply_(arr, picked, text, tokensFreed);
  } catch (e) {
    failed(e);
  }
  return undefined;
}

export function toolUseIdsAt(arr, at) {
  try {
    return toolUseIdsAt_(arr, at);
  } catch (e) {
    failed(e);
  }
  return [];
}
