// One SSE stream: a GET that subscribes its client to the session and receives every frame as an event, the records
// with `id: <seq>` so that a reconnect's `Last-Event-ID` is the client's exact cursor.
import type { ServerResponse } from 'node:http';
import type { LiveEvent, LiveTokenEvent } from '../records.js';
import type { Subscription } from '../subscription.js';
import { followSession, type Opening, type SubscriberSink } from '../transport/follow.js';
import type { TransportHost } from '../transport/host.js';

/** The limits a stream applies. */
export interface StreamLimits {
  readonly slowClientMs: number;
  readonly maxBufferedBytes: number;
}

/** Longest wait for a cut-off or closed stream's last bytes before its socket is destroyed. */
const END_GRACE_MS = 1000;

/** One SSE response, streaming one subscription; the sink of {@link followSession}. */
export class SseStream implements SubscriberSink {
  readonly #response: ServerResponse;
  readonly #sessionId: string;
  readonly #host: TransportHost;
  readonly #limits: StreamLimits;
  #subscription: Subscription<LiveEvent | LiveTokenEvent> | null = null;
  #closed = false;
  readonly #ended: Promise<void>;

  constructor(response: ServerResponse, sessionId: string, host: TransportHost, limits: StreamLimits) {
    this.#response = response;
    this.#sessionId = sessionId;
    this.#host = host;
    this.#limits = limits;
    this.#ended = new Promise((resolve) => response.once('close', resolve));
    response.once('close', () => this.#release());
    // A socket error is followed by 'close'; without a listener it would be thrown by the emitter.
    response.on('error', () => undefined);
  }

  /** Writes the headers and streams the subscription until the client leaves or the session ends. */
  start(opening: Opening): void {
    this.#response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // Proxies that buffer responses (nginx) would hold the events back.
      'X-Accel-Buffering': 'no',
    });
    this.#response.flushHeaders();
    this.#host.hub
      .session(this.#sessionId)
      .then((session) => {
        if (this.#closed) return;
        return followSession(session, opening, this);
      })
      .then(
        // The session closed or failed: ending the stream makes the client reconnect with its Last-Event-ID.
        () => this.end(),
        (error: unknown) => {
          this.#host.report(error, { sessionId: this.#sessionId, op: 'follow' });
          this.end();
        },
      );
  }

  /** True once the client left, or the stream was cut off or ended. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Resolves once the response closed. */
  get ended(): Promise<void> {
    return this.#ended;
  }

  /** Takes the subscription now served, to close it with the stream. */
  following(subscription: Subscription<LiveEvent | LiveTokenEvent>): void {
    this.#subscription = subscription;
  }

  /**
   * Writes a subscription frame; when the response's buffer is past its high-water mark (`write` returned false),
   * waits for it to drain before the next is pulled, and cuts the client off after `slowClientMs` (TJ-LIVE-050).
   */
  async forward(frame: Record<string, unknown>, seq: number | undefined): Promise<boolean> {
    if (this.#closed) return false;
    if (this.#response.write(eventText(frame, seq))) return true;
    if (await this.#drained()) return !this.#closed;
    this.#cutOff();
    return false;
  }

  /** Writes a control frame at once; a stream whose unsent bytes are past the hard bound is cut off instead. */
  reply(frame: Record<string, unknown>, seq?: number): void {
    if (this.#closed) return;
    if (this.#response.writableLength >= this.#limits.maxBufferedBytes) {
      this.#cutOff();
      return;
    }
    this.#response.write(eventText(frame, seq));
  }

  /** Writes a heartbeat comment; a stream that has not drained for `slowClientMs` is a dead or stalled peer. */
  heartbeat(): void {
    if (this.#closed) return;
    if (this.#response.writableNeedDrain) {
      if (this.#stalledSince === null) this.#stalledSince = performance.now();
      else if (performance.now() - this.#stalledSince >= this.#limits.slowClientMs) this.#cutOff();
      return;
    }
    this.#stalledSince = null;
    this.#response.write(': heartbeat\n\n');
  }

  #stalledSince: number | null = null;

  /** Ends the stream; the client reconnects with its Last-Event-ID. */
  end(): void {
    if (this.#closed && this.#response.writableEnded) return;
    this.#release();
    this.#finish();
  }

  /** Resolves true once the response drained, false after `slowClientMs` or on close. */
  #drained(): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (drained: boolean): void => {
        clearTimeout(timer);
        this.#response.off('drain', onDrain);
        this.#response.off('close', onClose);
        resolve(drained);
      };
      const onDrain = (): void => done(true);
      const onClose = (): void => done(false);
      const timer = setTimeout(() => done(false), this.#limits.slowClientMs);
      timer.unref();
      this.#response.once('drain', onDrain);
      this.#response.once('close', onClose);
    });
  }

  /** Cuts off a client that does not read: what it has not received is dropped with the socket, not kept. */
  #cutOff(): void {
    if (this.#closed) return;
    this.#release();
    this.#response.destroy();
  }

  #finish(): void {
    if (this.#response.destroyed) return;
    this.#response.end();
    // A client that stopped reading would hold the end (and everything before it) in memory: it gets a grace period.
    const timer = setTimeout(() => this.#response.destroy(), END_GRACE_MS);
    timer.unref();
    this.#response.once('close', () => clearTimeout(timer));
  }

  #release(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#subscription?.close();
    this.#host.releaseSubscriber(this.#sessionId);
  }
}

/** One SSE event: `id: <seq>` for a frame that moves the client's cursor, then the frame as one `data` line. */
function eventText(frame: Record<string, unknown>, seq: number | undefined): string {
  // JSON.stringify escapes CR and LF inside strings: the data is one line, as the event format needs.
  const data = `data: ${JSON.stringify(frame)}\n\n`;
  return seq === undefined ? data : `id: ${seq}\n${data}`;
}
