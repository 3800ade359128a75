// One client connection of the WebSocket transport: its frames, served one at a time in arrival order, and its one
// subscription, forwarded with backpressure.
import type { WebSocket } from 'ws';
import type { ConversationHub, HubSession } from '../hub.js';
import type { LiveRun } from '../live-run.js';
import type { ConversationView, LiveRecord } from '../records.js';
import type { Subscription } from '../subscription.js';
import { type ClientFrame, errorReply, parseClientFrame, TransportRefusal } from './frames.js';

/** What a connection needs of its transport. */
export interface ConnectionContext {
  readonly hub: ConversationHub;
  readonly limits: {
    readonly maxQueuedFrames: number;
    readonly highWaterBytes: number;
    readonly maxBufferedBytes: number;
    readonly slowClientMs: number;
    readonly maxSubscribersPerSession: number;
  };
  /** Counts subscribers per session id across connections; false when the session has its maximum. */
  readonly claimSubscriber: (sessionId: string) => boolean;
  readonly releaseSubscriber: (sessionId: string) => void;
  readonly startRun: (input: RunStart) => void;
  readonly report: (error: unknown, context: { sessionId: string; op: string }) => void;
}

/** A run a client's send started, handed to the app's worker. */
export interface RunStart {
  readonly session: HubSession;
  readonly run: LiveRun;
  readonly sessionId: string;
  readonly clientId: string;
  readonly content: string;
}

/** Close code of a client cut off for not reading: it reconnects with its cursor (the last seq it received). */
export const CUT_OFF_CLOSE = 4008;
/** Close code of a session that closed or failed under the connection: the client reconnects, which reopens it. */
export const SESSION_GONE_CLOSE = 1012;

/** One WebSocket connection, bound to the session its authorization named. */
export class Connection {
  readonly #socket: WebSocket;
  readonly #sessionId: string;
  readonly #context: ConnectionContext;
  #clientId: string | null = null;
  #subscribed = false;
  #subscription: Subscription | null = null;
  #closed = false;
  /** Frames received and not yet served; served one at a time so a send after hello waits for the hello. */
  #queued = 0;
  #tail: Promise<void> = Promise.resolve();
  /** Set by any frame or pong: the heartbeat terminates a connection that stayed silent for a whole interval. */
  alive = true;

  constructor(socket: WebSocket, sessionId: string, context: ConnectionContext) {
    this.#socket = socket;
    this.#sessionId = sessionId;
    this.#context = context;
    // Registered before anything is awaited: a frame sent right after the upgrade is never lost.
    socket.on('message', (data, isBinary) => this.#receive(data, isBinary));
    socket.on('pong', () => {
      this.alive = true;
    });
    socket.on('close', () => this.#ended());
    // A socket error is followed by 'close'; without a listener it would be thrown by the emitter.
    socket.on('error', () => undefined);
  }

  /** Ends the connection with a close frame; the socket's 'close' releases the subscription. */
  close(code: number, reason: string): void {
    if (this.#socket.readyState === this.#socket.OPEN || this.#socket.readyState === this.#socket.CONNECTING)
      this.#socket.close(code, reason);
  }

  /** Calls `listener` once the socket has closed. */
  onClosed(listener: () => void): void {
    if (this.#socket.readyState === this.#socket.CLOSED) listener();
    else this.#socket.once('close', listener);
  }

  /** Drops the connection without a close handshake (a dead peer). */
  terminate(): void {
    this.#socket.terminate();
  }

  /** Pings the peer for the heartbeat. */
  ping(): void {
    if (this.#socket.readyState === this.#socket.OPEN) this.#socket.ping();
  }

  #receive(data: unknown, isBinary: boolean): void {
    this.alive = true;
    if (this.#closed) return;
    if (isBinary) {
      this.#reply({ type: 'error', code: 'invalid_frame', message: 'frames are text (JSON)' });
      return;
    }
    if (this.#queued >= this.#context.limits.maxQueuedFrames) {
      this.#reply({ type: 'error', code: 'too_many_requests', message: 'too many frames in flight; wait for replies' });
      return;
    }
    this.#queued += 1;
    const text = Buffer.isBuffer(data) ? data.toString('utf8') : String(data);
    this.#tail = this.#tail.then(async () => {
      let op = 'frame';
      try {
        const frame = parseClientFrame(text);
        op = frame.type;
        await this.#serve(frame);
      } catch (error) {
        this.#replyError(error, op, text);
      } finally {
        this.#queued -= 1;
      }
    });
  }

  #replyError(error: unknown, op: string, text: string): void {
    const reply = errorReply(error);
    if (reply.reported) this.#context.report(error, { sessionId: this.#sessionId, op });
    const requestId = requestIdOf(text);
    this.#reply({ type: 'error', op, code: reply.code, message: reply.message, ...requestId });
  }

  async #serve(frame: ClientFrame): Promise<void> {
    if (frame.type === 'hello') return this.#hello(frame);
    const clientId = this.#clientId;
    if (clientId === null) throw new TransportRefusal('hello_first', `send hello before ${frame.type}`);
    const session = await this.#context.hub.session(this.#sessionId);
    if (frame.type === 'chat.send') {
      const { requestId, content } = frame;
      try {
        const sent = await session.send({ requestId, content });
        if (sent.created)
          this.#context.startRun({ session, run: sent.run, sessionId: this.#sessionId, clientId, content });
        this.#reply({ type: 'chat.accepted', requestId, created: sent.created, status: sent.status });
      } catch (error) {
        const reply = errorReply(error);
        if (reply.reported) this.#context.report(error, { sessionId: this.#sessionId, op: frame.type });
        this.#reply({ type: 'chat.rejected', requestId, code: reply.code, message: reply.message });
      }
      return;
    }
    if (frame.type === 'chat.cancel') {
      await session.cancel(frame.requestId, 'client_cancelled');
      return;
    }
    await session.ack(frame.requestId, {
      clientId,
      ...(frame.throughSeq === undefined ? {} : { throughSeq: frame.throughSeq }),
    });
  }

  async #hello(frame: Extract<ClientFrame, { type: 'hello' }>): Promise<void> {
    // One subscription per connection: a second hello would double every frame the client receives.
    if (this.#subscribed)
      throw new TransportRefusal('already_subscribed', 'this connection has said hello; open another to resubscribe');
    if (frame.sessionId !== undefined && frame.sessionId !== this.#sessionId)
      throw new TransportRefusal('forbidden_session', 'this connection was authorized for another session');
    if (!this.#context.claimSubscriber(this.#sessionId))
      throw new TransportRefusal('too_many_subscribers', 'the session has as many subscribers as the server allows');
    this.#subscribed = true;
    let session: HubSession;
    try {
      session = await this.#context.hub.session(this.#sessionId);
    } catch (error) {
      // A close meanwhile released the claim already (`#ended`).
      if (!this.#closed) {
        this.#subscribed = false;
        this.#context.releaseSubscriber(this.#sessionId);
      }
      throw error;
    }
    if (this.#closed) return;
    const { clientId, lastSeq, epoch } = frame;
    this.#clientId = clientId;
    // Everything up to subscribe() is synchronous: the view, the head and the cursor describe one state.
    const head = session.durableSeq;
    let after: number;
    if (lastSeq === null) {
      const view = session.snapshot({ clientId });
      this.#reply({ type: 'snapshot', mode: 'full', payload: view, runs: runStatuses(session, view) });
      after = view.lastSeq ?? -1;
    } else {
      this.#reply({ type: 'snapshot', mode: 'resume', after: lastSeq, head });
      after = lastSeq;
    }
    const subscription = session.subscribe({
      after,
      ...(lastSeq === null || epoch === undefined ? {} : { epoch }),
    });
    this.#subscription = subscription;
    this.#follow(session, subscription, head).catch((error: unknown) => {
      this.#context.report(error, { sessionId: this.#sessionId, op: 'follow' });
      this.close(SESSION_GONE_CLOSE, 'session unavailable');
    });
  }

  /**
   * Forwards the subscription: replayed records, then live ones. It pulls the next record only once the socket took
   * the last one (below the high-water mark), so a slow client holds at most that much here; one that does not drain
   * for `slowClientMs` is cut off, and a subscription the session cut off for lagging resumes from its cursor.
   */
  async #follow(session: HubSession, first: Subscription, head: number): Promise<void> {
    let subscription = first;
    let caughtUp = first.cursor >= head;
    if (caughtUp) this.#reply({ type: 'live', head });
    while (!this.#closed) {
      let resumeAfter: number | null = null;
      for await (const event of subscription) {
        if (this.#closed) break;
        if (event.kind === 'record') {
          if (!(await this.#forward(recordFrame(event.record), event.record.seq))) return;
          if (!caughtUp && event.record.seq >= head) {
            caughtUp = true;
            this.#reply({ type: 'live', head: event.record.seq });
          }
        } else if (event.kind === 'snapshot') {
          const own = session.snapshot({ clientId: this.#clientId ?? undefined });
          const view = own.lastSeq === event.view.lastSeq ? own : event.view;
          const frame = { type: 'snapshot', mode: event.reason, payload: view, runs: runStatuses(session, view) };
          if (!(await this.#forward(frame, view.lastSeq ?? -1))) return;
          if (!caughtUp) {
            caughtUp = true;
            this.#reply({ type: 'live', head: view.lastSeq ?? -1 });
          }
        } else resumeAfter = event.cursor;
      }
      if (resumeAfter === null || this.#closed || session.ended) break;
      subscription = session.subscribe({ after: resumeAfter });
      this.#subscription = subscription;
    }
    if (!this.#closed) this.close(SESSION_GONE_CLOSE, 'session closed; reconnect');
  }

  /** Sends a subscription frame once the socket drained below the high-water mark; false once cut off or closed. */
  async #forward(frame: object, seq: number): Promise<boolean> {
    const { highWaterBytes, slowClientMs } = this.#context.limits;
    if (this.#socket.bufferedAmount >= highWaterBytes && !(await this.#drained(slowClientMs))) {
      this.#cutOff(seq - 1);
      return false;
    }
    if (this.#closed) return false;
    this.#socket.send(JSON.stringify(frame));
    return true;
  }

  /** Resolves true once the socket's buffer fell below the high-water mark, false after `ms` or on close. */
  #drained(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const started = performance.now();
      const check = (): void => {
        if (this.#closed) resolve(false);
        else if (this.#socket.bufferedAmount < this.#context.limits.highWaterBytes) resolve(true);
        else if (performance.now() - started >= ms) resolve(false);
        else setTimeout(check, 20).unref();
      };
      check();
    });
  }

  /** A reply to the client's own frame: never queued past the hard bound, which cuts the client off instead. */
  #reply(frame: Record<string, unknown>): void {
    if (this.#closed || this.#socket.readyState !== this.#socket.OPEN) return;
    if (this.#socket.bufferedAmount >= this.#context.limits.maxBufferedBytes) {
      this.#cutOff(this.#subscription?.cursor ?? -1);
      return;
    }
    this.#socket.send(JSON.stringify(frame));
  }

  #cutOff(cursor: number): void {
    if (this.#closed) return;
    this.#ended();
    // The close frame queues behind what the client has not read; ws destroys the socket if the handshake stalls.
    this.#socket.close(CUT_OFF_CLOSE, `cut off: resume after seq ${cursor}`);
  }

  #ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscription?.close();
    if (this.#subscribed) this.#context.releaseSubscriber(this.#sessionId);
  }
}

/** The frame of one record: a checkpoint goes without its payload (the whole transcript), its seq and epoch kept. */
function recordFrame(record: LiveRecord): Record<string, unknown> {
  const requestId = (record.payload as { request_id?: unknown } | undefined)?.request_id;
  if (record.type === 'checkpoint') {
    const { payload: _transcript, ...rest } = record as unknown as Record<string, unknown>;
    return { ...rest, requestId: null };
  }
  return { ...record, requestId: typeof requestId === 'string' ? requestId : null };
}

/** The outcome of every turn of the view (the view lists the active run and the missed ones, not the others). */
function runStatuses(session: HubSession, view: ConversationView): Record<string, string> {
  const statuses: Record<string, string> = {};
  for (const message of view.messages) {
    const requestId = (message as { request_id?: unknown }).request_id;
    if (message.role !== 'user' || typeof requestId !== 'string') continue;
    statuses[requestId] = session.statusOf(requestId) ?? 'interrupted';
  }
  return statuses;
}

/** The `requestId` of a frame's text, when it is a short string, to name the request an error reply answers. */
function requestIdOf(text: string): { requestId?: string } {
  try {
    const id = (JSON.parse(text) as { requestId?: unknown } | null)?.requestId;
    return typeof id === 'string' && id.length <= 128 ? { requestId: id } : {};
  } catch (error) {
    if (error instanceof SyntaxError) return {};
    throw error;
  }
}
