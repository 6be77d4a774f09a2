// A fake Anthropic Messages API for tests: an `http` server on 127.0.0.1 and a free port that
// speaks the wire format (JSON answers, server-sent event streams, error bodies, retry headers)
// and can misbehave on purpose (slow, dropped, stalled). Every request is recorded.
//
//   import { startFakeApi, reply } from '../fake-api/server.mjs';
//   const api = await startFakeApi([reply.overloaded(), reply.stream('Hello')]);
//   try { ...fetch(`${api.url}/v1/messages`)...; api.requests[0].body } finally { await api.close(); }
//
// The handler decides each answer:
// - omitted: a successful answer to every request (streamed when the body says `stream: true`);
// - an array of replies: the n-th request gets the n-th reply, the last one repeats;
// - a reply (one of `reply.*`): every request gets it;
// - a function `(request, res, api)`: returns a reply, a plain object (sent as a 200 JSON body)
//   or nothing (it then answered through `res`, a node `http.ServerResponse`, itself).
// A reply is `async (res, request, api) => void`; write your own with `api.wait(ms)` for delays
// (they end early when the server closes, so no test waits on a dead server).
//
// Every response carries CORS headers (and OPTIONS preflights are answered), so browser tests can
// call the server from a page; preflights are recorded apart, in `preflights`.

import { createServer } from 'node:http';

const REPLY = Symbol('fake-api reply');

/**
 * @typedef {object} RecordedRequest
 * @property {number} index 0 for the first request to the server.
 * @property {string} method
 * @property {string} path The request target, e.g. `/v1/messages`.
 * @property {Record<string, string | string[] | undefined>} headers Node's header object (names in lower case).
 * @property {any} body The JSON-parsed body, or the raw text when it is not JSON.
 * @property {string} rawBody
 * @property {number} receivedAt `Date.now()` when the body was fully read.
 */

/**
 * @typedef {(res: import('node:http').ServerResponse, request: RecordedRequest, api: FakeApi) => Promise<void> | void} Reply
 */

/**
 * @typedef {object} FakeApi
 * @property {string} url Origin, e.g. `http://127.0.0.1:40123` (use as `baseURL`).
 * @property {RecordedRequest[]} requests Every non-OPTIONS request, in order.
 * @property {RecordedRequest[]} preflights OPTIONS requests.
 * @property {() => Promise<void>} close Destroys open connections (stalled streams too) and stops the server.
 * @property {(ms: number) => Promise<void>} wait A delay that ends early when the server closes.
 * @property {(n: number) => Promise<RecordedRequest>} waitForRequest Resolves when request n (from 1) has arrived.
 * @property {import('node:http').Server} server
 */

/**
 * Starts the fake API.
 * @param {Reply | Reply[] | ((request: RecordedRequest, res: import('node:http').ServerResponse, api: FakeApi) => any)} [handler]
 * @returns {Promise<FakeApi>}
 */
export async function startFakeApi(handler) {
  /** @type {RecordedRequest[]} */
  const requests = [];
  /** @type {RecordedRequest[]} */
  const preflights = [];
  /** @type {Set<() => void>} */
  const pending = new Set();
  /** @type {Array<{n: number, resolve: (r: RecordedRequest) => void}>} */
  const waiters = [];
  let closed = false;

  const wait = (/** @type {number} */ ms) =>
    new Promise((resolve) => {
      if (closed) return resolve(undefined);
      const done = () => {
        clearTimeout(timer);
        pending.delete(done);
        resolve(undefined);
      };
      const timer = setTimeout(done, ms);
      pending.add(done);
    });

  const server = createServer(async (req, res) => {
    cors(req, res);
    const rawBody = await readBody(req).catch(() => '');
    let body;
    try {
      body = JSON.parse(rawBody);
    } catch {
      body = rawBody;
    }
    /** @type {RecordedRequest} */
    const rec = {
      index: 0,
      method: req.method ?? '',
      path: req.url ?? '',
      headers: { ...req.headers },
      body,
      rawBody,
      receivedAt: Date.now(),
    };
    if (req.method === 'OPTIONS') {
      rec.index = preflights.length;
      preflights.push(rec);
      res.writeHead(204).end();
      return;
    }
    rec.index = requests.length;
    requests.push(rec);
    for (const w of [...waiters]) {
      if (requests.length >= w.n) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(requests[w.n - 1]);
      }
    }
    try {
      let r;
      if (handler === undefined) r = reply.auto();
      else if (Array.isArray(handler)) r = handler[Math.min(rec.index, handler.length - 1)];
      else if (isReply(handler)) r = handler;
      else r = await handler(rec, res, api);
      if (r === undefined || r === null) return;
      if (!isReply(r)) r = reply.json(r);
      await r(res, rec, api);
    } catch (e) {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(errorBody('api_error', `fake API handler failed: ${e}`)));
      } else {
        res.destroy();
      }
    }
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(undefined));
  });
  const address = /** @type {import('node:net').AddressInfo} */ (server.address());

  /** @type {FakeApi} */
  const api = {
    url: `http://127.0.0.1:${address.port}`,
    requests,
    preflights,
    server,
    wait,
    waitForRequest(n) {
      if (requests.length >= n) return Promise.resolve(requests[n - 1]);
      return new Promise((resolve) => waiters.push({ n, resolve }));
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const done of [...pending]) done();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
  return api;
}

// ---- Bodies and events -----------------------------------------------------------------------

let ids = 0;
const nextId = () => `msg_fake_${String(++ids).padStart(6, '0')}`;

/**
 * @typedef {object} MessageOptions
 * @property {string} [id]
 * @property {string} [model] Default `claude-fake-1`.
 * @property {number} [inputTokens] Default 100.
 * @property {number} [outputTokens] Default: a rough count of the text.
 * @property {string} [stopReason] Default `end_turn`.
 * @property {string} [thinking] A thinking block before the text.
 * @property {string[]} [pieces] The text deltas of a stream (default: the text cut in ~4 pieces).
 */

/**
 * A non-streamed Messages API response body.
 * @param {string} text
 * @param {MessageOptions} [o]
 */
export function messageBody(text = 'Summary.', o = {}) {
  const content = [];
  if (o.thinking !== undefined) content.push({ type: 'thinking', thinking: o.thinking, signature: 'sig_fake' });
  content.push({ type: 'text', text });
  return {
    id: o.id ?? nextId(),
    type: 'message',
    role: 'assistant',
    model: o.model ?? 'claude-fake-1',
    content,
    stop_reason: o.stopReason ?? 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: o.inputTokens ?? 100,
      output_tokens: o.outputTokens ?? Math.max(1, Math.ceil(text.length / 4)),
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

/** Cuts text into about `n` pieces (on code points, never inside a surrogate pair). */
export function pieces(text, n = 4) {
  const chars = Array.from(text);
  const size = Math.max(1, Math.ceil(chars.length / n));
  const out = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/**
 * The server-sent events of a streamed answer, in the API's order: message_start, ping, the
 * (optional) thinking block, the text block with its deltas, message_delta, message_stop.
 * @param {string} text
 * @param {MessageOptions} [o]
 * @returns {Array<{event: string, data: any}>}
 */
export function messageEvents(text = 'Summary.', o = {}) {
  const body = messageBody(text, o);
  const parts = o.pieces ?? pieces(text);
  const events = [];
  events.push({
    event: 'message_start',
    data: {
      type: 'message_start',
      message: { ...body, content: [], stop_reason: null, usage: { ...body.usage, output_tokens: 1 } },
    },
  });
  events.push({ event: 'ping', data: { type: 'ping' } });
  let index = 0;
  if (o.thinking !== undefined) {
    events.push({
      event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } },
    });
    for (const t of pieces(o.thinking, 2)) {
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: t } },
      });
    }
    events.push({
      event: 'content_block_delta',
      data: { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: 'sig_fake' } },
    });
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    index++;
  }
  events.push({
    event: 'content_block_start',
    data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
  });
  for (const p of parts) {
    events.push({
      event: 'content_block_delta',
      data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } },
    });
  }
  events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  events.push({
    event: 'message_delta',
    data: {
      type: 'message_delta',
      delta: { stop_reason: body.stop_reason, stop_sequence: null },
      usage: { output_tokens: body.usage.output_tokens },
    },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/**
 * An `error` stream event.
 * @param {string} [type] Default `overloaded_error`.
 * @param {string} [message] Default `Overloaded`.
 */
export function errorEvent(type = 'overloaded_error', message = 'Overloaded') {
  return { event: 'error', data: errorBody(type, message) };
}

/**
 * An API error body.
 * @param {string} type
 * @param {string} message
 */
export function errorBody(type, message) {
  return { type: 'error', error: { type, message } };
}

/**
 * Encodes events as server-sent events text.
 * @param {Array<{event?: string, data: any} | string>} events Strings are written as they are.
 * @param {string} [eol] Line ending, default `\n` (the API's); `\r\n` and `\r` are legal too.
 */
export function encodeEvents(events, eol = '\n') {
  return events
    .map((e) =>
      typeof e === 'string'
        ? e
        : (e.event ? `event: ${e.event}${eol}` : '') +
          `data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}${eol}${eol}`,
    )
    .join('');
}

// ---- Replies ---------------------------------------------------------------------------------

/**
 * @typedef {object} StreamOptions
 * @property {Array<{event?: string, data: any} | string>} [events] The events (default: `messageEvents(text, o)`).
 * @property {'mid' | 'events' | 'whole'} [split] How to cut the bytes into writes when no
 *   `chunkSize` is given: `mid` (default) writes each event in two halves (so events, and
 *   multi-byte characters, are split across TCP chunks); `events` writes one event per chunk;
 *   `whole` writes everything at once.
 * @property {number} [chunkSize] Writes fixed-size byte chunks instead.
 * @property {number} [delayMs] Delay between writes (default 2).
 * @property {string} [eol] Line ending (default `\n`).
 * @property {number} [status] Default 200.
 * @property {Record<string, string>} [headers] Extra response headers.
 * @property {'end' | 'drop' | 'stall'} [finish] After the events: end the response (default),
 *   destroy the socket, or keep the connection open without writing.
 * @property {number} [afterEvents] With `drop`/`stall`: how many events to send first (default all).
 */

/** Whether `x` is a reply made here. */
function isReply(x) {
  return typeof x === 'function' && x[REPLY] === true;
}

/** @param {Reply} fn */
function mark(fn) {
  /** @type {any} */ (fn)[REPLY] = true;
  return fn;
}

/** @param {Record<string, string> | undefined} extra */
function baseHeaders(extra) {
  return { 'request-id': `req_fake_${String(++ids).padStart(6, '0')}`, ...(extra ?? {}) };
}

/**
 * Builders of scripted answers. Each returns a reply, for `startFakeApi` or its arrays.
 */
export const reply = {
  /**
   * A JSON answer.
   * @param {any} body
   * @param {{status?: number, headers?: Record<string, string>, delayMs?: number}} [o]
   */
  json(body, o = {}) {
    return mark(async (res, _req, api) => {
      if (o.delayMs) await api.wait(o.delayMs);
      if (res.destroyed) return;
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(o.status ?? 200, { 'content-type': 'application/json', ...baseHeaders(o.headers) });
      res.end(text);
    });
  },

  /**
   * A successful non-streamed answer.
   * @param {string} [text]
   * @param {MessageOptions & {headers?: Record<string, string>, delayMs?: number}} [o]
   */
  message(text = 'Summary.', o = {}) {
    return mark(async (res, req, api) => {
      const body = messageBody(text, { model: req.body?.model, ...o });
      await reply.json(body, o)(res, req, api);
    });
  },

  /**
   * A streamed answer (server-sent events), cut into several writes with delays.
   * @param {string} [text]
   * @param {MessageOptions & StreamOptions} [o]
   */
  stream(text = 'Summary.', o = {}) {
    return mark(async (res, req, api) => {
      const events = o.events ?? messageEvents(text, { model: req.body?.model, ...o });
      const sent = o.finish && o.finish !== 'end' && o.afterEvents !== undefined ? events.slice(0, o.afterEvents) : events;
      const eol = o.eol ?? '\n';
      res.writeHead(o.status ?? 200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache',
        ...baseHeaders(o.headers),
      });
      res.flushHeaders();
      /** @type {Buffer[]} */
      const writes = [];
      if (o.chunkSize) {
        const all = Buffer.from(encodeEvents(sent, eol));
        for (let i = 0; i < all.length; i += o.chunkSize) writes.push(all.subarray(i, i + o.chunkSize));
      } else if (o.split === 'whole') {
        writes.push(Buffer.from(encodeEvents(sent, eol)));
      } else {
        for (const e of sent) {
          const b = Buffer.from(encodeEvents([e], eol));
          if (o.split === 'events' || b.length < 2) writes.push(b);
          else {
            const cut = Math.floor(b.length / 2);
            writes.push(b.subarray(0, cut), b.subarray(cut));
          }
        }
      }
      for (const w of writes) {
        if (res.destroyed) return;
        res.write(w);
        await api.wait(o.delayMs ?? 2);
      }
      if (res.destroyed) return;
      if (o.finish === 'drop') res.socket?.destroy();
      else if (o.finish === 'stall') await new Promise((resolve) => res.once('close', resolve));
      else res.end();
    });
  },

  /**
   * The answer the request asks for: streamed when its body has `stream: true`, JSON otherwise.
   * @param {string} [text]
   * @param {MessageOptions & StreamOptions} [o]
   */
  auto(text = 'Summary.', o = {}) {
    return mark(async (res, req, api) => {
      const r = req.body && req.body.stream === true ? reply.stream(text, o) : reply.message(text, o);
      await r(res, req, api);
    });
  },

  /**
   * An API error answer.
   * @param {number} status
   * @param {string} type
   * @param {string} message
   * @param {{headers?: Record<string, string>, delayMs?: number}} [o]
   */
  error(status, type, message, o = {}) {
    return reply.json(errorBody(type, message), { ...o, status });
  },

  /**
   * 400 `prompt is too long: N tokens > M maximum`.
   * @param {number} [actual]
   * @param {number} [limit]
   */
  promptTooLong(actual = 210_000, limit = 200_000) {
    return reply.error(400, 'invalid_request_error', `prompt is too long: ${actual} tokens > ${limit} maximum`);
  },

  /**
   * 529 overloaded_error.
   * @param {{headers?: Record<string, string>}} [o]
   */
  overloaded(o = {}) {
    return reply.error(529, 'overloaded_error', 'Overloaded', o);
  },

  /**
   * 429 rate_limit_error with retry hints.
   * @param {{retryAfter?: string | number, retryAfterMs?: string | number, headers?: Record<string, string>}} [o]
   */
  rateLimited(o = {}) {
    const headers = { ...(o.headers ?? {}) };
    if (o.retryAfter !== undefined) headers['retry-after'] = String(o.retryAfter);
    if (o.retryAfterMs !== undefined) headers['retry-after-ms'] = String(o.retryAfterMs);
    return reply.error(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit', {
      headers,
    });
  },

  /**
   * Waits `ms` before answering with `inner` (default: the answer the request asks for).
   * @param {number} ms
   * @param {Reply} [inner]
   */
  slow(ms, inner = reply.auto()) {
    return mark(async (res, req, api) => {
      await api.wait(ms);
      if (!res.destroyed) await inner(res, req, api);
    });
  },

  /**
   * A stream cut off by a destroyed socket after `afterEvents` events (default 3: through the
   * text block's start, before any text).
   * @param {string} [text]
   * @param {MessageOptions & StreamOptions} [o]
   */
  drop(text = 'Summary.', o = {}) {
    return reply.stream(text, { afterEvents: 3, ...o, finish: 'drop' });
  },

  /**
   * A stream that stops writing after `afterEvents` events (default 3) and never ends.
   * @param {string} [text]
   * @param {MessageOptions & StreamOptions} [o]
   */
  stall(text = 'Summary.', o = {}) {
    return reply.stream(text, { afterEvents: 3, ...o, finish: 'stall' });
  },

  /**
   * A stream with an `error` event after `afterEvents` events of the normal answer (default 1:
   * right after message_start), then the end of the response.
   * @param {string} [type]
   * @param {string} [message]
   * @param {{afterEvents?: number, text?: string} & MessageOptions & StreamOptions} [o]
   */
  streamError(type = 'overloaded_error', message = 'Overloaded', o = {}) {
    return mark(async (res, req, api) => {
      const events = messageEvents(o.text ?? 'Summary.', { model: req.body?.model, ...o });
      const sent = [...events.slice(0, o.afterEvents ?? 1), errorEvent(type, message)];
      await reply.stream('', { ...o, events: sent })(res, req, api);
    });
  },

  /** Destroys the connection before any answer (the client sees a network error). */
  hangUp() {
    return mark(async (res) => {
      res.socket?.destroy();
    });
  },
};

// ---- Plumbing --------------------------------------------------------------------------------

/**
 * @param {import('node:http').IncomingMessage} req
 * @returns {Promise<string>}
 */
function readBody(req) {
  return new Promise((resolve, reject) => {
    /** @type {Buffer[]} */
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {import('node:http').ServerResponse} res
 */
function cors(req, res) {
  res.setHeader('access-control-allow-origin', req.headers.origin ?? '*');
  res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
  res.setHeader('access-control-allow-headers', req.headers['access-control-request-headers'] ?? '*');
  res.setHeader('access-control-expose-headers', 'request-id, retry-after, retry-after-ms, x-should-retry');
  res.setHeader('access-control-max-age', '600');
}
