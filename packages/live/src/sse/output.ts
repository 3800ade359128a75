// Where an SSE stream's bytes go: a `node:http` response, or the body of a Fetch `Response`. The stream's bounds
// (TJ-LIVE-050, TJ-LIVE-052) are the same on both; only how "the buffer is full" and "it drained" are learnt differs.
import type { ServerResponse } from 'node:http';

/** The byte sink of one SSE stream. */
export interface SseOutput {
  /** Queues `text`; false when the buffer is past its high-water mark (wait for {@link drained} before the next). */
  write(text: string): boolean;
  /** Bytes queued and not yet taken by the peer's side. */
  readonly bufferedBytes: number;
  /** Resolves true once the buffer drained, false after `ms` or when the output closed first. */
  drained(ms: number): Promise<boolean>;
  /**
   * Asked at each heartbeat: true when the peer's side has not taken what the output holds since the last time it
   * was asked. A stream stalled for `slowClientMs` of heartbeats is a dead or stalled peer (TJ-LIVE-052).
   */
  stalled(): boolean;
  /** Ends the stream after what is queued; a peer that does not take it within a grace period is dropped. */
  end(): void;
  /** Drops the stream and what it holds unsent: the cut-off of a client that does not read. */
  destroy(): void;
  /** Resolves once the output closed, by the peer, {@link end} or {@link destroy}. */
  readonly closed: Promise<void>;
}

/** Longest wait for a cut-off or closed stream's last bytes before its socket is destroyed. */
const END_GRACE_MS = 1000;

/** The output of an SSE stream on a `node:http` response, its headers written. */
export class NodeSseOutput implements SseOutput {
  readonly #response: ServerResponse;
  readonly closed: Promise<void>;

  constructor(response: ServerResponse) {
    this.#response = response;
    this.closed = new Promise((resolve) => response.once('close', resolve));
    // A socket error is followed by 'close'; without a listener it would be thrown by the emitter.
    response.on('error', () => undefined);
  }

  write(text: string): boolean {
    return this.#response.write(text);
  }

  get bufferedBytes(): number {
    return this.#response.writableLength;
  }

  drained(ms: number): Promise<boolean> {
    const response = this.#response;
    return new Promise((resolve) => {
      const done = (drained: boolean): void => {
        clearTimeout(timer);
        response.off('drain', onDrain);
        response.off('close', onClose);
        resolve(drained);
      };
      const onDrain = (): void => done(true);
      const onClose = (): void => done(false);
      const timer = setTimeout(() => done(false), ms);
      timer.unref();
      response.once('drain', onDrain);
      response.once('close', onClose);
    });
  }

  stalled(): boolean {
    return this.#response.writableNeedDrain;
  }

  end(): void {
    const response = this.#response;
    if (response.destroyed || response.writableEnded) return;
    response.end();
    // A client that stopped reading would hold the end (and everything before it) in memory: it gets a grace period.
    const timer = setTimeout(() => response.destroy(), END_GRACE_MS);
    timer.unref();
    response.once('close', () => clearTimeout(timer));
  }

  destroy(): void {
    this.#response.destroy();
  }
}

/**
 * The output of an SSE stream as the body of a Fetch `Response`: a byte stream whose queue holds at most
 * `highWaterBytes` before {@link write} says to wait. The server that sends the body (Node's bridge of a framework,
 * Deno, Bun) pulls from it as its socket drains, so a peer that does not read leaves the queue full, and the stream
 * is cut off after the wait like a `node:http` one.
 */
export class FetchSseOutput implements SseOutput {
  readonly body: ReadableStream<Uint8Array>;
  readonly closed: Promise<void>;
  readonly #highWaterBytes: number;
  readonly #encoder = new TextEncoder();
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #done = false;
  /** Bytes enqueued since the start, and how many of them the peer's side had taken at the last `stalled()`. */
  #enqueued = 0;
  #takenAtCheck = 0;
  #markClosed!: () => void;
  readonly #waiters = new Set<() => void>();

  constructor(highWaterBytes: number) {
    this.#highWaterBytes = highWaterBytes;
    this.closed = new Promise((resolve) => {
      this.#markClosed = resolve;
    });
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          this.#controller = controller;
        },
        // Called whenever the queue is below its high-water mark after a read: the peer's side took bytes.
        pull: () => this.#wake(),
        cancel: () => this.#close(),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: highWaterBytes }),
    );
  }

  write(text: string): boolean {
    if (this.#done) return false;
    const bytes = this.#encoder.encode(text);
    this.#controller.enqueue(bytes);
    this.#enqueued += bytes.byteLength;
    return !this.#full();
  }

  stalled(): boolean {
    // The server that sends the body may have taken the last chunk and be waiting on its own socket: the queue is
    // then below its mark, and only a heartbeat that stays untaken shows that nothing moves.
    const taken = this.#enqueued - this.bufferedBytes;
    const stalled = !this.#done && this.bufferedBytes > 0 && taken === this.#takenAtCheck;
    this.#takenAtCheck = taken;
    return stalled;
  }

  get bufferedBytes(): number {
    if (this.#done) return 0;
    return this.#highWaterBytes - (this.#controller.desiredSize ?? 0);
  }

  /** True while the queue is at or past its high-water mark. */
  #full(): boolean {
    return !this.#done && (this.#controller.desiredSize ?? 0) <= 0;
  }

  drained(ms: number): Promise<boolean> {
    if (this.#done) return Promise.resolve(false);
    if (!this.#full()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const wake = (): void => {
        if (!this.#done && this.#full()) return;
        clearTimeout(timer);
        this.#waiters.delete(wake);
        resolve(!this.#done);
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(wake);
        resolve(false);
      }, ms);
      timer.unref();
      this.#waiters.add(wake);
    });
  }

  end(): void {
    if (this.#done) return;
    // What is queued stays readable after the close; it is at most the stream's bound, and goes with the body.
    this.#controller.close();
    this.#close();
  }

  destroy(): void {
    if (this.#done) return;
    this.#controller.error(new Error('the SSE stream was cut off: the client did not read'));
    this.#close();
  }

  #close(): void {
    if (this.#done) return;
    this.#done = true;
    this.#markClosed();
    this.#wake();
  }

  #wake(): void {
    for (const wake of [...this.#waiters]) wake();
  }
}
