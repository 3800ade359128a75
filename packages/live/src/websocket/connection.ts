// One client connection of the WebSocket transport: its frames, served one at a time in arrival order, and its one
// subscription, forwarded with backpressure.
import type { WebSocket } from 'ws';
import type { HubSession } from '../hub.js';
import type { LiveEvent, LiveTokenEvent } from '../records.js';
import type { Subscription } from '../subscription.js';
import { followSession, type SubscriberSink } from '../transport/follow.js';
import { type ClientFrame, errorReply, parseClientFrame, requestIdOf, TransportRefusal } from '../transport/frames.js';
import type { TransportHost } from '../transport/host.js';
import { serveCall } from '../transport/serve.js';

/** The limits a connection applies. */
export interface ConnectionLimits {
  readonly maxQueuedFrames: number;
  readonly highWaterBytes: number;
  readonly maxBufferedBytes: number;
  readonly slowClientMs: number;
}

/** Close code of a client cut off for not reading: it reconnects with its cursor (the last seq it received). */
export const CUT_OFF_CLOSE = 4008;
/** Close code of a session that closed or failed under the connection: the client reconnects, which reopens it. */
export const SESSION_GONE_CLOSE = 1012;

/** One WebSocket connection, bound to the session its authorization named; the sink of its one subscription. */
export class Connection implements SubscriberSink {
  readonly #socket: WebSocket;
  readonly #sessionId: string;
  readonly #host: TransportHost;
  readonly #limits: ConnectionLimits;
  #clientId: string | null = null;
  #subscribed = false;
  #subscription: Subscription<LiveEvent | LiveTokenEvent> | null = null;
  #closed = false;
  /** Frames received and not yet served; served one at a time so a send after hello waits for the hello. */
  #queued = 0;
  #tail: Promise<void> = Promise.resolve();
  /** Set by any frame or pong: the heartbeat terminates a connection that stayed silent for a whole interval. */
  alive = true;

  constructor(socket: WebSocket, sessionId: string, host: TransportHost, limits: ConnectionLimits) {
    this.#socket = socket;
    this.#sessionId = sessionId;
    this.#host = host;
    this.#limits = limits;
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

  /** True once the socket closed or the client was cut off. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Takes the subscription now served, to close it with the connection. */
  following(subscription: Subscription<LiveEvent | LiveTokenEvent>): void {
    this.#subscription = subscription;
  }

  /** Pings the peer for the heartbeat. */
  ping(): void {
    if (this.#socket.readyState === this.#socket.OPEN) this.#socket.ping();
  }

  #receive(data: unknown, isBinary: boolean): void {
    this.alive = true;
    if (this.#closed) return;
    if (isBinary) {
      this.reply({ type: 'error', code: 'invalid_frame', message: 'frames are text (JSON)' });
      return;
    }
    if (this.#queued >= this.#limits.maxQueuedFrames) {
      this.reply({ type: 'error', code: 'too_many_requests', message: 'too many frames in flight; wait for replies' });
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
    if (reply.reported) this.#host.report(error, { sessionId: this.#sessionId, op });
    const requestId = requestIdOf(text);
    this.reply({ type: 'error', op, code: reply.code, message: reply.message, ...requestId });
  }

  async #serve(frame: ClientFrame): Promise<void> {
    if (frame.type === 'hello') return this.#hello(frame);
    const clientId = this.#clientId;
    if (clientId === null) throw new TransportRefusal('hello_first', `send hello before ${frame.type}`);
    // The hello named the client: a frame's own clientId is not a second identity on one connection.
    const reply = await serveCall(this.#host, this.#sessionId, clientId, frame);
    if (reply !== null) this.reply(reply);
  }

  async #hello(frame: Extract<ClientFrame, { type: 'hello' }>): Promise<void> {
    // One subscription per connection: a second hello would double every frame the client receives.
    if (this.#subscribed)
      throw new TransportRefusal('already_subscribed', 'this connection has said hello; open another to resubscribe');
    if (frame.sessionId !== undefined && frame.sessionId !== this.#sessionId)
      throw new TransportRefusal('forbidden_session', 'this connection was authorized for another session');
    if (!this.#host.claimSubscriber(this.#sessionId))
      throw new TransportRefusal('too_many_subscribers', 'the session has as many subscribers as the server allows');
    this.#subscribed = true;
    let session: HubSession;
    try {
      session = await this.#host.hub.session(this.#sessionId);
    } catch (error) {
      // A close meanwhile released the claim already (`#ended`).
      if (!this.#closed) {
        this.#subscribed = false;
        this.#host.releaseSubscriber(this.#sessionId);
      }
      throw error;
    }
    if (this.#closed) return;
    this.#clientId = frame.clientId;
    followSession(session, frame, this)
      .then(() => {
        if (!this.#closed) this.close(SESSION_GONE_CLOSE, 'session closed; reconnect');
      })
      .catch((error: unknown) => {
        this.#host.report(error, { sessionId: this.#sessionId, op: 'follow' });
        this.close(SESSION_GONE_CLOSE, 'session unavailable');
      });
  }

  /** Sends a subscription frame once the socket drained below the high-water mark; false once cut off or closed. */
  async forward(frame: Record<string, unknown>, seq: number | undefined): Promise<boolean> {
    const { highWaterBytes, slowClientMs } = this.#limits;
    if (this.#socket.bufferedAmount >= highWaterBytes && !(await this.#drained(slowClientMs))) {
      // A token moves no cursor: the client holds what its subscription was sent.
      this.#cutOff(seq === undefined ? (this.#subscription?.cursor ?? -1) : seq - 1);
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
        else if (this.#socket.bufferedAmount < this.#limits.highWaterBytes) resolve(true);
        else if (performance.now() - started >= ms) resolve(false);
        else setTimeout(check, 20).unref();
      };
      check();
    });
  }

  /** A reply to the client's own frame: never queued past the hard bound, which cuts the client off instead. */
  reply(frame: Record<string, unknown>): void {
    if (this.#closed || this.#socket.readyState !== this.#socket.OPEN) return;
    if (this.#socket.bufferedAmount >= this.#limits.maxBufferedBytes) {
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
    if (this.#subscribed) this.#host.releaseSubscriber(this.#sessionId);
  }
}
