// One SSE stream: a GET that subscribes its client to the session and receives every frame as an event, the records
// with `id: <seq>` so that a reconnect's `Last-Event-ID` is the client's exact cursor. The bytes go to an
// {@link SseOutput}, a `node:http` response or a Fetch `Response`'s body, with the same bounds on both.
import type { LiveEvent, LiveTokenEvent } from '../records.js';
import type { Subscription } from '../subscription.js';
import { followSession, type Opening, type SubscriberSink } from '../transport/follow.js';
import { errorReply } from '../transport/frames.js';
import type { SessionHost } from '../transport/host.js';
import type { SseOutput } from './output.js';

/** The limits a stream applies. */
export interface StreamLimits {
  readonly slowClientMs: number;
  readonly maxBufferedBytes: number;
}

/** The response headers of an SSE stream. */
export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  // Proxies that buffer responses (nginx) would hold the events back.
  'X-Accel-Buffering': 'no',
};

/** One SSE response, streaming one subscription; the sink of {@link followSession}. */
export class SseStream implements SubscriberSink {
  readonly #output: SseOutput;
  readonly #sessionId: string;
  readonly #host: SessionHost;
  readonly #limits: StreamLimits;
  #subscription: Subscription<LiveEvent | LiveTokenEvent> | null = null;
  #closed = false;
  #ending = false;
  #stalledSince: number | null = null;

  constructor(output: SseOutput, sessionId: string, host: SessionHost, limits: StreamLimits) {
    this.#output = output;
    this.#sessionId = sessionId;
    this.#host = host;
    this.#limits = limits;
    void output.closed.then(() => this.#release());
  }

  /** Streams the subscription until the client leaves or the session ends (the headers are the caller's). */
  start(opening: Opening): void {
    this.#host.hub
      .session(this.#sessionId)
      .then(
        (session) => {
          if (this.#closed) return;
          return followSession(session, opening, this);
        },
        (error: unknown) => {
          // The session could not be opened (every slot busy, a failed reopen): the client is told the code, and its
          // EventSource retries with the same cursor.
          const reply = errorReply(error);
          if (reply.reported) this.#host.report(error, { sessionId: this.#sessionId, op: 'hello' });
          this.reply({ type: 'error', op: 'hello', code: reply.code, message: reply.message });
        },
      )
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

  /** Resolves once the output closed. */
  get ended(): Promise<void> {
    return this.#output.closed;
  }

  /** Takes the subscription now served, to close it with the stream. */
  following(subscription: Subscription<LiveEvent | LiveTokenEvent>): void {
    this.#subscription = subscription;
  }

  /**
   * Writes a subscription frame; when the output's buffer is past its high-water mark (`write` returned false),
   * waits for it to drain before the next is pulled, and cuts the client off after `slowClientMs` (TJ-LIVE-050).
   */
  async forward(frame: Record<string, unknown>, seq: number | undefined): Promise<boolean> {
    if (this.#closed) return false;
    if (this.#output.write(eventText(frame, seq))) return true;
    if (await this.#output.drained(this.#limits.slowClientMs)) return !this.#closed;
    this.#cutOff();
    return false;
  }

  /** Writes a control frame at once; a stream whose unsent bytes are past the hard bound is cut off instead. */
  reply(frame: Record<string, unknown>, seq?: number): void {
    if (this.#closed) return;
    if (this.#output.bufferedBytes >= this.#limits.maxBufferedBytes) {
      this.#cutOff();
      return;
    }
    this.#output.write(eventText(frame, seq));
  }

  /** Writes a heartbeat comment; a stream that has not drained for `slowClientMs` is a dead or stalled peer. */
  heartbeat(): void {
    if (this.#closed) return;
    if (this.#output.stalled()) {
      if (this.#stalledSince === null) this.#stalledSince = performance.now();
      else if (performance.now() - this.#stalledSince >= this.#limits.slowClientMs) this.#cutOff();
      return;
    }
    this.#stalledSince = null;
    this.#output.write(': heartbeat\n\n');
  }

  /** Ends the stream; the client reconnects with its Last-Event-ID. */
  end(): void {
    if (this.#ending) return;
    this.#ending = true;
    this.#release();
    this.#output.end();
  }

  /** Cuts off a client that does not read: what it has not received is dropped with the stream, not kept. */
  #cutOff(): void {
    if (this.#closed) return;
    this.#release();
    this.#output.destroy();
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
