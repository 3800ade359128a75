// The SSE transport apart from its HTTP server (spec §18.7): limits, authorization, cursors, the streams and the calls.
// `createSseTransport` (node:http) and `createFetchSseTransport` (Fetch Request → Response) only translate requests
// and answers, so both refuse, bound and serve exactly alike.

import type { Opening } from '../transport/follow.js';
import { errorReply, parseClientFrame, parseClientId, requestIdOf, TransportRefusal } from '../transport/frames.js';
import { positive, TransportHost } from '../transport/host.js';
import { httpStatusOf } from '../transport/http-replies.js';
import { serveCall } from '../transport/serve.js';
import type { SseEndpointOptions } from './options.js';
import type { SseOutput } from './output.js';
import { SseStream } from './stream.js';

/** What the endpoint takes: the options both transports share, and the drain wait each documents its own way. */
type EndpointOptions<Request> = SseEndpointOptions<Request> & { readonly slowClientMs?: number };

/** An answer to a request: an HTTP status and a JSON body. */
export interface SseAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

/** A POST body as read: its text, or why it was not read whole. */
export type SseBody =
  | { kind: 'text'; text: string }
  | { kind: 'too_large' }
  | { kind: 'timeout' }
  | { kind: 'aborted' };

/** Reads a request's body of at most `max` bytes within `ms`, holding no more than `max` bytes of it. */
export type ReadSseBody = (max: number, ms: number) => Promise<SseBody>;

/** What a GET carries that decides its stream: the URL (its query) and the `Last-Event-ID` header. */
export interface SseStreamRequest {
  readonly url: string;
  readonly lastEventId: string | undefined;
}

/** The shared state and logic of one SSE transport. */
export class SseEndpoint<Request> {
  readonly limits: {
    readonly maxPayloadBytes: number;
    readonly maxConnections: number;
    readonly maxPendingRequests: number;
    readonly bodyTimeoutMs: number;
    readonly heartbeatMs: number;
    readonly slowClientMs: number;
    readonly maxBufferedBytes: number;
  };
  readonly #host: TransportHost<Request>;
  readonly #streams = new Set<SseStream>();
  readonly #heartbeat: ReturnType<typeof setInterval>;
  #opening = 0;
  #pending = 0;
  #closed = false;

  constructor(options: EndpointOptions<Request>, name: string) {
    this.#host = new TransportHost(options, name);
    this.limits = {
      maxPayloadBytes: positive(options.maxPayloadBytes, 1 << 20, 'maxPayloadBytes'),
      maxConnections: positive(options.maxConnections, 10_000, 'maxConnections'),
      maxPendingRequests: positive(options.maxPendingRequests, 256, 'maxPendingRequests'),
      bodyTimeoutMs: positive(options.bodyTimeoutMs, 10_000, 'bodyTimeoutMs'),
      heartbeatMs: positive(options.heartbeatMs, 15_000, 'heartbeatMs'),
      slowClientMs: positive(options.slowClientMs, 10_000, 'slowClientMs'),
      maxBufferedBytes: positive(options.maxBufferedBytes, 4 << 20, 'maxBufferedBytes'),
    };
    this.#heartbeat = setInterval(() => {
      for (const stream of this.#streams) stream.heartbeat();
    }, this.limits.heartbeatMs);
    this.#heartbeat.unref();
  }

  /** Streams open now. */
  get connections(): number {
    return this.#streams.size;
  }

  /**
   * Opens the stream a GET asks for: checks the limits and the cursor, authorizes, then takes the output from
   * `open(sessionId)` (the caller writes the headers there) and streams into it. Resolves null once the stream is
   * open, or with the refusal to answer instead (TJ-LIVE-053); nothing is opened for a refusal.
   */
  async openStream(request: Request, asked: SseStreamRequest, open: () => SseOutput): Promise<SseAnswer | null> {
    if (this.#closed || this.#streams.size + this.#opening >= this.limits.maxConnections)
      return refusal(503, 'hello', 'too_many_connections', this.#closed ? 'server stopping' : 'too many streams');
    let opening: Opening;
    try {
      opening = streamOpening(asked);
    } catch (error) {
      if (!(error instanceof TransportRefusal)) throw error;
      return refusal(400, 'hello', error.code, error.message);
    }
    this.#opening += 1;
    try {
      return await this.#opened(request, opening, open);
    } catch (error) {
      // Not the client's doing (a throwing `open`): told to the operator, answered by its code alone.
      this.#host.report(error, { sessionId: null, op: 'hello' });
      return refusal(500, 'hello', 'internal', 'the server could not open the stream');
    } finally {
      this.#opening -= 1;
    }
  }

  async #opened(request: Request, opening: Opening, open: () => SseOutput): Promise<SseAnswer | null> {
    const decision = await this.#decide(request, 'hello');
    if (typeof decision !== 'string') return decision;
    if (this.#closed) return refusal(503, 'hello', 'too_many_connections', 'server stopping');
    if (!this.#host.claimSubscriber(decision))
      return refusal(429, 'hello', 'too_many_subscribers', 'the session has as many subscribers as the server allows');
    let output: SseOutput;
    try {
      output = open();
    } catch (error) {
      this.#host.releaseSubscriber(decision);
      throw error;
    }
    const stream = new SseStream(output, decision, this.#host, this.limits);
    this.#streams.add(stream);
    void stream.ended.then(() => this.#streams.delete(stream));
    stream.start(opening);
    return null;
  }

  /**
   * Serves a POST: one call frame (TJ-LIVE-051), its body read by `read` only once the request is authorized and
   * within the limits. Resolves with the answer, or null when the client left before its body arrived.
   */
  async serveFrame(request: Request, declaredBytes: number, read: ReadSseBody): Promise<SseAnswer | null> {
    if (this.#closed) return refusal(503, 'frame', 'session_closed', 'server stopping');
    if (this.#pending >= this.limits.maxPendingRequests)
      return refusal(429, 'frame', 'too_many_requests', 'too many requests in flight');
    if (declaredBytes > this.limits.maxPayloadBytes) return this.#tooLarge();
    this.#pending += 1;
    try {
      return await this.#served(request, read);
    } catch (error) {
      const reply = errorReply(error);
      if (reply.reported) this.#host.report(error, { sessionId: null, op: 'frame' });
      return refusal(httpStatusOf(reply.code), 'frame', reply.code, reply.message);
    } finally {
      this.#pending -= 1;
    }
  }

  /** Stops taking requests (503) and ends every stream. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#heartbeat);
    const open = [...this.#streams];
    for (const stream of open) stream.end();
    await Promise.all(open.map((stream) => stream.ended));
  }

  async #served(request: Request, read: ReadSseBody): Promise<SseAnswer | null> {
    const sessionId = await this.#decide(request, 'frame');
    if (typeof sessionId !== 'string') return sessionId;
    const body = await read(this.limits.maxPayloadBytes, this.limits.bodyTimeoutMs);
    if (body.kind === 'too_large') return this.#tooLarge();
    if (body.kind === 'timeout') return refusal(408, 'frame', 'invalid_request', 'the body did not arrive in time');
    if (body.kind === 'aborted') return null;
    let op = 'frame';
    try {
      const frame = parseClientFrame(body.text);
      op = frame.type;
      if (frame.type === 'hello')
        throw new TransportRefusal('invalid_frame', 'hello is the GET stream; POST chat.send, chat.cancel or ack');
      // A POST has no hello: it names its client itself.
      const clientId = parseClientId(frame.clientId, `${frame.type}.clientId`);
      const reply = await serveCall(this.#host, sessionId, clientId, frame);
      if (reply === null) return { status: 200, body: { type: 'ok', op, requestId: frame.requestId } };
      return { status: reply.type === 'chat.rejected' ? httpStatusOf(String(reply.code)) : 200, body: reply };
    } catch (error) {
      const reply = errorReply(error);
      if (reply.reported) this.#host.report(error, { sessionId, op });
      const refused = refusal(httpStatusOf(reply.code), op, reply.code, reply.message);
      return { status: refused.status, body: { ...refused.body, ...requestIdOf(body.text) } };
    }
  }

  /** The authorized session id, or the refusal to answer. */
  async #decide(request: Request, op: string): Promise<string | SseAnswer> {
    let decision: Awaited<ReturnType<TransportHost<Request>['authorized']>>;
    try {
      decision = await this.#host.authorized(request);
    } catch (error) {
      this.#host.report(error, { sessionId: null, op: 'authorize' });
      return refusal(500, op, 'internal', 'authorization failed');
    }
    if (typeof decision === 'string') return decision;
    const status =
      Number.isInteger(decision.status) && decision.status >= 400 && decision.status < 600 ? decision.status : 403;
    return refusal(status, op, 'unauthorized', String(decision.message ?? 'refused').slice(0, 200));
  }

  #tooLarge(): SseAnswer {
    return refusal(413, 'frame', 'payload_too_large', `a POST body is at most ${this.limits.maxPayloadBytes} bytes`);
  }
}

/** The cursor and client a GET asks to start from: `Last-Event-ID` (a reconnect) wins over `?lastSeq=`. */
function streamOpening(asked: SseStreamRequest): Opening {
  const query = new URL(asked.url, 'http://localhost').searchParams;
  const clientId = parseClientId(query.get('clientId') ?? undefined, 'the clientId query parameter');
  const raw = asked.lastEventId ?? query.get('lastSeq');
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

/** A refusal: the status, and the body of a WebSocket error frame. */
export function refusal(status: number, op: string, code: string, message: string): SseAnswer {
  return { status, body: { type: 'error', op, code, message } };
}
