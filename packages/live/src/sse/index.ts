// @turnjournal/live/sse: the Server-Sent Events transport of a conversation hub over plain node:http
// (packages/live/README.md, "SSE transport"; spec §18.7). Records go down a GET as events whose id is their seq, so a
// browser's EventSource resumes by itself; sends, cancels and acks go up as POSTs of the WebSocket transport's frames.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ConversationHub } from '../hub.js';
import { errorReply, parseClientFrame, parseClientId, requestIdOf, TransportRefusal } from '../transport/frames.js';
import { positive, type RunStart, TransportHost } from '../transport/host.js';
import { httpStatusOf, sendJson } from '../transport/http-replies.js';
import { serveCall } from '../transport/serve.js';
import { SseStream } from './stream.js';

export type { TransportErrorCode as SseErrorCode } from '../transport/frames.js';
export type { RunStart } from '../transport/host.js';

/** An `authorize` refusal: the request is answered with this HTTP status and message. */
export interface SseRefusal {
  /** The HTTP status (401, 403, 404, …). */
  readonly status: number;
  /** A short text for the client; no server detail. */
  readonly message?: string;
}

/** Options of {@link createSseTransport}. */
export interface SseTransportOptions {
  /** The hub whose sessions the streams subscribe to. */
  readonly hub: ConversationHub;
  /** The URL path of the endpoint (GET: the stream, POST: a call); `/sse` by default. Other paths are not handled. */
  readonly path?: string;
  /**
   * Decides who may connect, and to which session: the session id (a valid identifier, not reserved), or a refusal.
   * Called for every GET and POST before anything is read or opened; a throw answers 500 and goes to `onError`.
   */
  readonly authorize: (request: IncomingMessage) => string | SseRefusal | Promise<string | SseRefusal>;
  /**
   * Streams the run a client's send started (the app's worker): call `run.delta`, `run.done`, … and stop when
   * `run.signal` aborts. A rejection goes to `onError`, and a run it left active is ended with `run.error`.
   */
  readonly run: (start: RunStart) => Promise<void> | void;
  /** Errors a client is told only by code (write failures, a worker's rejection, a failed authorize). */
  readonly onError?: (error: unknown, context: { readonly sessionId: string | null; readonly op: string }) => void;
  /** Largest POST body, in bytes; a larger one is answered 413 (`payload_too_large`). 1 MiB by default. */
  readonly maxPayloadBytes?: number;
  /** Most open streams; a GET beyond is answered 503. 10,000 by default. */
  readonly maxConnections?: number;
  /** Most streams per session; a GET beyond is answered 429 (`too_many_subscribers`). 64 by default. */
  readonly maxSubscribersPerSession?: number;
  /** POSTs being read or served at once; one beyond is answered 429 (`too_many_requests`). 256 by default. */
  readonly maxPendingRequests?: number;
  /** Longest time a POST body may take to arrive; then 408. 10 s by default. */
  readonly bodyTimeoutMs?: number;
  /** Interval of the heartbeat comment; a stream that did not drain for `slowClientMs` at a heartbeat is dropped. 15 s. */
  readonly heartbeatMs?: number;
  /** Longest wait for a stream's buffer to drain (`write` returned false); then the client is cut off. 10 s. */
  readonly slowClientMs?: number;
  /** Bytes a stream may hold unsent before a control frame cuts the client off instead of queueing. 4 MiB. */
  readonly maxBufferedBytes?: number;
}

/** A running SSE transport (see {@link createSseTransport}). */
export interface SseTransport {
  /** Serves `request` when its path is the transport's, and returns true; returns false and leaves it otherwise. */
  handle(request: IncomingMessage, response: ServerResponse): boolean;
  /** Streams open now. */
  readonly connections: number;
  /** Stops taking requests (503) and ends every stream; the hub is left open for the caller to close. */
  close(): Promise<void>;
}

/**
 * Serves a hub's sessions as Server-Sent Events over `node:http` (spec §18.7): a GET on `path` authorized for a
 * session streams the snapshot or the records after the client's cursor (`Last-Event-ID`, else `?lastSeq=`), then
 * live records, each with `id: <seq>`; a POST on `path` takes one frame (`chat.send`, `chat.cancel`, `ack`, with
 * `clientId`) and answers it with the same reply or error as the WebSocket transport. Returns the transport, whose
 * `handle(request, response)` the app's request listener calls.
 */
export function createSseTransport(options: SseTransportOptions): SseTransport {
  const host = new TransportHost(options, 'createSseTransport');
  const path = options.path ?? '/sse';
  const limits = {
    maxPayloadBytes: positive(options.maxPayloadBytes, 1 << 20, 'maxPayloadBytes'),
    maxConnections: positive(options.maxConnections, 10_000, 'maxConnections'),
    maxPendingRequests: positive(options.maxPendingRequests, 256, 'maxPendingRequests'),
    bodyTimeoutMs: positive(options.bodyTimeoutMs, 10_000, 'bodyTimeoutMs'),
    heartbeatMs: positive(options.heartbeatMs, 15_000, 'heartbeatMs'),
    slowClientMs: positive(options.slowClientMs, 10_000, 'slowClientMs'),
    maxBufferedBytes: positive(options.maxBufferedBytes, 4 << 20, 'maxBufferedBytes'),
  };
  const streams = new Set<SseStream>();
  let opening = 0;
  let pending = 0;
  let closed = false;

  const heartbeat = setInterval(() => {
    for (const stream of streams) stream.heartbeat();
  }, limits.heartbeatMs);
  heartbeat.unref();

  function handle(request: IncomingMessage, response: ServerResponse): boolean {
    let pathname: string;
    try {
      pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      return false;
    }
    if (pathname !== path) return false;
    if (request.method === 'GET') openStream(request, response);
    else if (request.method === 'POST') serveFrame(request, response);
    else {
      response.setHeader('Allow', 'GET, POST');
      sendJson(response, 405, refusalBody('request', 'invalid_request', 'GET opens the stream, POST sends a frame'));
    }
    return true;
  }

  function openStream(request: IncomingMessage, response: ServerResponse): void {
    if (closed || streams.size + opening >= limits.maxConnections) {
      sendJson(
        response,
        503,
        refusalBody('hello', 'too_many_connections', closed ? 'server stopping' : 'too many streams'),
      );
      return;
    }
    let cursor: ReturnType<typeof streamOpening>;
    try {
      cursor = streamOpening(request);
    } catch (error) {
      if (!(error instanceof TransportRefusal)) throw error;
      sendJson(response, 400, refusalBody('hello', error.code, error.message));
      return;
    }
    opening += 1;
    decide(request, response, 'hello')
      .then((sessionId) => {
        if (sessionId === null) return;
        if (closed) return sendJson(response, 503, refusalBody('hello', 'too_many_connections', 'server stopping'));
        if (!host.claimSubscriber(sessionId))
          return sendJson(
            response,
            429,
            refusalBody('hello', 'too_many_subscribers', 'the session has as many subscribers as the server allows'),
          );
        const stream = new SseStream(response, sessionId, host, limits);
        streams.add(stream);
        void stream.ended.then(() => streams.delete(stream));
        stream.start(cursor);
      })
      .finally(() => {
        opening -= 1;
      });
  }

  function serveFrame(request: IncomingMessage, response: ServerResponse): void {
    if (closed) {
      refuseBody(request, response, 503, refusalBody('frame', 'session_closed', 'server stopping'));
      return;
    }
    if (pending >= limits.maxPendingRequests) {
      refuseBody(request, response, 429, refusalBody('frame', 'too_many_requests', 'too many requests in flight'));
      return;
    }
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > limits.maxPayloadBytes) {
      refuseBody(request, response, 413, tooLarge(limits.maxPayloadBytes));
      return;
    }
    pending += 1;
    served(request, response)
      .catch((error: unknown) => {
        const reply = errorReply(error);
        if (reply.reported) host.report(error, { sessionId: null, op: 'frame' });
        sendJson(response, httpStatusOf(reply.code), refusalBody('frame', reply.code, reply.message));
      })
      .finally(() => {
        pending -= 1;
      });
  }

  async function served(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const sessionId = await decide(request, response, 'frame');
    if (sessionId === null) return;
    const body = await readBody(request, limits.maxPayloadBytes, limits.bodyTimeoutMs);
    if (body.kind === 'too_large') return refuseBody(request, response, 413, tooLarge(limits.maxPayloadBytes));
    if (body.kind === 'timeout')
      return refuseBody(
        request,
        response,
        408,
        refusalBody('frame', 'invalid_request', 'the body did not arrive in time'),
      );
    if (body.kind === 'aborted') return;
    let op = 'frame';
    try {
      const frame = parseClientFrame(body.text);
      op = frame.type;
      if (frame.type === 'hello')
        throw new TransportRefusal('invalid_frame', 'hello is the GET stream; POST chat.send, chat.cancel or ack');
      // A POST has no hello: it names its client itself.
      const clientId = parseClientId(frame.clientId, `${frame.type}.clientId`);
      const reply = await serveCall(host, sessionId, clientId, frame);
      if (reply === null) sendJson(response, 200, { type: 'ok', op, requestId: frame.requestId });
      else sendJson(response, reply.type === 'chat.rejected' ? httpStatusOf(String(reply.code)) : 200, reply);
    } catch (error) {
      const reply = errorReply(error);
      if (reply.reported) host.report(error, { sessionId, op });
      sendJson(response, httpStatusOf(reply.code), {
        ...refusalBody(op, reply.code, reply.message),
        ...requestIdOf(body.text),
      });
    }
  }

  /** The authorized session id, or null once `response` was answered with the refusal. */
  async function decide(request: IncomingMessage, response: ServerResponse, op: string): Promise<string | null> {
    let decision: string | SseRefusal;
    try {
      decision = await host.authorized(request);
    } catch (error) {
      host.report(error, { sessionId: null, op: 'authorize' });
      refuseBody(request, response, 500, refusalBody(op, 'internal', 'authorization failed'));
      return null;
    }
    if (typeof decision === 'string') return decision;
    const status =
      Number.isInteger(decision.status) && decision.status >= 400 && decision.status < 600 ? decision.status : 403;
    refuseBody(
      request,
      response,
      status,
      refusalBody(op, 'unauthorized', String(decision.message ?? 'refused').slice(0, 200)),
    );
    return null;
  }

  return {
    handle,
    get connections() {
      return streams.size;
    },
    async close() {
      closed = true;
      clearInterval(heartbeat);
      const open = [...streams];
      for (const stream of open) stream.end();
      await Promise.all(open.map((stream) => stream.ended));
    },
  };
}

/** The cursor and client a GET asks to start from: `Last-Event-ID` (a reconnect) wins over `?lastSeq=`. */
function streamOpening(request: IncomingMessage): {
  clientId: string;
  lastSeq: number | null;
  epoch: string | undefined;
} {
  const query = new URL(request.url ?? '/', 'http://localhost').searchParams;
  const clientId = parseClientId(query.get('clientId') ?? undefined, 'the clientId query parameter');
  const header = request.headers['last-event-id'];
  const raw = typeof header === 'string' ? header : query.get('lastSeq');
  let lastSeq: number | null = null;
  if (raw !== null && raw !== '') {
    lastSeq = /^-?\d{1,16}$/.test(raw.trim()) ? Number(raw.trim()) : Number.NaN;
    if (!Number.isSafeInteger(lastSeq) || lastSeq < -1)
      throw new TransportRefusal('invalid_frame', 'Last-Event-ID (or lastSeq) is an integer seq >= -1');
  }
  const epoch = query.get('epoch');
  if (epoch !== null && epoch.length > 128)
    throw new TransportRefusal('invalid_frame', 'epoch is at most 128 characters');
  return { clientId, lastSeq, epoch: epoch ?? undefined };
}

type Body = { kind: 'text'; text: string } | { kind: 'too_large' } | { kind: 'timeout' } | { kind: 'aborted' };

/** Reads a request body of at most `max` bytes within `ms`; never holds more than `max` bytes of it. */
function readBody(request: IncomingMessage, max: number, ms: number): Promise<Body> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (body: Body): void => {
      clearTimeout(timer);
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('close', onClose);
      resolve(body);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) done({ kind: 'too_large' });
      else chunks.push(chunk);
    };
    const onEnd = (): void => done({ kind: 'text', text: Buffer.concat(chunks).toString('utf8') });
    const onClose = (): void => done({ kind: 'aborted' });
    const timer = setTimeout(() => done({ kind: 'timeout' }), ms);
    timer.unref();
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('close', onClose);
  });
}

/**
 * Answers a request whose body is not read (refused, too large, too slow) and closes its connection, so that the
 * rest of the body is never read or buffered.
 */
function refuseBody(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  body: Record<string, unknown>,
): void {
  const unread = !request.complete;
  sendJson(response, status, body, unread);
  if (unread) {
    request.pause();
    response.once('finish', () => request.socket.destroySoon());
  }
}

function refusalBody(op: string, code: string, message: string): Record<string, unknown> {
  return { type: 'error', op, code, message };
}

function tooLarge(max: number): Record<string, unknown> {
  return refusalBody('frame', 'payload_too_large', `a POST body is at most ${max} bytes`);
}
