// The client of the WebSocket transport: one connection at a time, reopened with backoff after any close, resumed
// from the last seq it delivered so the app sees every record once, in order (TJ-LIVE-054).
import { ClientError } from './errors.js';
import type { ClientEvent, ConnectionState, RecordFrame, SnapshotMode, ViewFrame } from './frames.js';
import {
  type FetchFunction,
  type Link,
  type LinkEvents,
  openSseLink,
  openWebSocketLink,
  type WebSocketConstructor,
} from './links.js';

/** Where a client starts: the cursor it stored (the last seq it holds and that log's epoch). */
export interface ClientCursor {
  /** The last seq the client holds, or null to ask for the whole view. */
  readonly lastSeq: number | null;
  /** The epoch of the log `lastSeq` belongs to, when known. */
  readonly epoch?: string | null;
}

/** Options of {@link LiveClient}. */
export interface LiveClientOptions {
  /** The transport's URL (with whatever names the session to `authorize`), or a function called at every connect. */
  readonly url: string | (() => string);
  /** The server transport: `websocket` (default; `ws://` or `wss://` URL) or `sse` (`http://` or `https://`). */
  readonly transport?: 'websocket' | 'sse';
  /** This client's id (1 to 128 characters): acks are recorded in its name, and snapshots list what it missed. */
  readonly clientId: string;
  /** The cursor to resume from, as stored by the app; by default the whole view is asked for. */
  readonly cursor?: ClientCursor;
  /** The WebSocket constructor; `globalThis.WebSocket` by default (browsers, Node 22). */
  readonly WebSocket?: WebSocketConstructor;
  /** The `fetch` of the SSE transport; `globalThis.fetch` by default. */
  readonly fetch?: FetchFunction;
  /** First reconnect delay; doubled per failed attempt up to `maxBackoffMs`, with jitter. 250 ms by default. */
  readonly backoffMs?: number;
  /** Longest reconnect delay. 5 s by default. */
  readonly maxBackoffMs?: number;
  /** Longest wait for a connection to open; then it is dropped and retried. 10 s by default. */
  readonly connectTimeoutMs?: number;
  /** Called with every event, in order, before the async iterators get it. */
  readonly onEvent?: (event: ClientEvent) => void;
}

/** The answer to a send: the server holds the message (`created: false`: it held it already, a retry). */
export interface SendAnswer {
  /** The request id of the send (the one given, or the one the client made). */
  readonly requestId: string;
  /** False when the server held the message already (a retry). */
  readonly created: boolean;
  /** The run's status when answered (`running`, `done`, …). */
  readonly status: string;
}

interface PendingSend {
  readonly content: string;
  readonly resolve: (answer: SendAnswer) => void;
  readonly reject: (error: ClientError) => void;
}

/**
 * A live session's client over the WebSocket transport (packages/client/README.md): it connects, says hello with its
 * cursor, delivers records in seq order (dropping any it delivered already), and after any close reconnects with
 * backoff and resumes from the last seq it delivered. Sends are kept until the server answers them and resent with
 * the same request id after a reconnect, so a send is never lost and never doubled (TJ-LIVE-055).
 */
export class LiveClient {
  readonly #options: LiveClientOptions;
  readonly #open: (url: string, events: LinkEvents) => Link;
  #lastSeq: number | null;
  #epoch: string | null | undefined;
  #state: ConnectionState = 'connecting';
  #link: Link | null = null;
  #attempt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #pending = new Map<string, PendingSend>();
  /** Cancels and acks made while not live: sent once the next connection is live. */
  #queued: Record<string, unknown>[] = [];
  readonly #iterators = new Set<(event: ClientEvent | null) => void>();
  #duplicates = 0;
  #gaps = 0;

  constructor(options: LiveClientOptions) {
    if (typeof options.clientId !== 'string' || options.clientId.length === 0 || options.clientId.length > 128)
      throw new TypeError('clientId is a string of 1 to 128 characters');
    if (options.transport === 'sse') {
      const fetchImpl = options.fetch ?? globalThis.fetch;
      if (typeof fetchImpl !== 'function') throw new TypeError('no fetch here: pass options.fetch');
      this.#open = (url, events) => openSseLink(fetchImpl, url, this.#start(), events);
    } else {
      const platform = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
      if (platform === undefined)
        throw new TypeError('no WebSocket here: pass options.WebSocket (in Node 20, the WebSocket of the ws package)');
      this.#open = (url, events) => openWebSocketLink(platform, url, this.#start(), events);
    }
    this.#options = options;
    const lastSeq = options.cursor?.lastSeq ?? null;
    if (lastSeq !== null && (!Number.isSafeInteger(lastSeq) || lastSeq < -1))
      throw new TypeError('cursor.lastSeq is an integer >= -1 or null');
    this.#lastSeq = lastSeq;
    this.#epoch = options.cursor?.epoch;
    this.#connect();
  }

  /** Records dropped because their seq was delivered already (a replay overlapping what the client held). */
  get duplicates(): number {
    return this.#duplicates;
  }

  /** Connections dropped because a seq was skipped; each resumed from the last seq delivered. */
  get gaps(): number {
    return this.#gaps;
  }

  /** The connection's state. */
  get state(): ConnectionState {
    return this.#state;
  }

  /** The cursor to store: the last seq delivered to the app and its log's epoch (resume from it after a reload). */
  get cursor(): ClientCursor {
    return { lastSeq: this.#lastSeq, epoch: this.#epoch ?? null };
  }

  /**
   * Sends a user message; resolves once the server holds it (durable), rejects with a {@link ClientError} when it
   * refuses it (`run_active`, `request_id_conflict`, …) or the client closes first. Kept across reconnects and
   * resent with the same `requestId`, which the server answers as a retry if it got it already.
   */
  send(content: string, options: { readonly requestId?: string } = {}): Promise<SendAnswer> {
    const requestId = options.requestId ?? randomRequestId();
    if (this.#state === 'closed')
      return Promise.reject(new ClientError('client_closed', 'the client is closed', requestId));
    if (this.#pending.has(requestId))
      return Promise.reject(new ClientError('invalid_request', `a send of ${requestId} is pending already`, requestId));
    return new Promise((resolve, reject) => {
      this.#pending.set(requestId, { content, resolve, reject });
      if (this.#state === 'live') this.#sendFrame(sendFrame(requestId, content));
    });
  }

  /** Asks the server to cancel the run `requestId`; a refusal arrives as an `error` event. */
  cancel(requestId: string): void {
    this.#callFrame({ type: 'chat.cancel', requestId });
  }

  /** Acknowledges a finished run the app has shown (through the last seq delivered by default). */
  ack(requestId: string, throughSeq: number | undefined = this.#lastSeq ?? undefined): void {
    this.#callFrame({ type: 'ack', requestId, ...(throughSeq === undefined ? {} : { throughSeq }) });
  }

  /** The events from now on, in order, until the client closes. */
  events(): AsyncIterableIterator<ClientEvent> {
    const buffered: ClientEvent[] = [];
    let wake: (() => void) | null = null;
    let done = this.#state === 'closed';
    const listener = (event: ClientEvent | null): void => {
      if (event === null) done = true;
      else buffered.push(event);
      wake?.();
    };
    if (!done) this.#iterators.add(listener);
    const iterators = this.#iterators;
    const iterator: AsyncIterableIterator<ClientEvent> = {
      async next() {
        while (buffered.length === 0 && !done) await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        const event = buffered.shift();
        return event === undefined ? { done: true, value: undefined } : { done: false, value: event };
      },
      async return() {
        done = true;
        iterators.delete(listener);
        return { done: true, value: undefined };
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }

  /** Closes the connection for good: pending sends reject with `client_closed`, iterators end. */
  close(): void {
    if (this.#state === 'closed') return;
    clearTimeout(this.#timer);
    this.#link?.close();
    this.#link = null;
    this.#setState('closed');
    for (const [requestId, pending] of this.#pending)
      pending.reject(new ClientError('client_closed', 'the client closed before the server answered', requestId));
    this.#pending.clear();
    for (const listener of this.#iterators) listener(null);
    this.#iterators.clear();
  }

  #start() {
    return {
      clientId: this.#options.clientId,
      lastSeq: this.#lastSeq,
      epoch: this.#epoch,
      connectTimeoutMs: this.#options.connectTimeoutMs ?? 10_000,
    };
  }

  #connect(): void {
    clearTimeout(this.#timer);
    if (this.#state === 'closed') return;
    const url = typeof this.#options.url === 'function' ? this.#options.url() : this.#options.url;
    let link: Link | null = null;
    const events: LinkEvents = {
      frame: (frame) => {
        if (link !== null && this.#link === link) this.#frame(link, frame);
      },
      dropped: () => {
        if (link !== null) this.#dropped(link);
      },
    };
    try {
      link = this.#open(url, events);
    } catch (error) {
      // A malformed URL (SyntaxError in browsers) is the app's bug: retrying would not fix it.
      this.close();
      throw error;
    }
    this.#link = link;
  }

  #dropped(link: Link): void {
    if (this.#link !== link) return;
    this.#link = null;
    link.close();
    if (this.#state === 'closed') return;
    const base = this.#options.backoffMs ?? 250;
    const delay = Math.min(this.#options.maxBackoffMs ?? 5000, base * 2 ** this.#attempt) * (0.5 + Math.random() / 2);
    this.#attempt += 1;
    this.#setState('reconnecting');
    this.#timer = setTimeout(() => this.#connect(), delay);
  }

  #frame(link: Link, frame: Record<string, unknown> | null): void {
    if (frame === null) return;
    if (typeof frame.seq === 'number') {
      this.#record(link, frame as unknown as RecordFrame);
      return;
    }
    switch (frame.type) {
      case 'snapshot': {
        if (frame.mode !== 'resume') {
          const view = frame.payload as ViewFrame;
          this.#lastSeq = view.lastSeq ?? -1;
          this.#epoch = view.epoch;
          this.#emit({
            kind: 'snapshot',
            mode: frame.mode as SnapshotMode,
            view,
            runs: (frame.runs ?? {}) as Record<string, string>,
          });
        }
        if (this.#state !== 'live') this.#setState('replaying');
        return;
      }
      case 'token': {
        const { requestId, messageId, offset, text } = frame;
        if (
          typeof requestId !== 'string' ||
          typeof messageId !== 'string' ||
          typeof text !== 'string' ||
          !Number.isSafeInteger(offset) ||
          (offset as number) < 0
        )
          return;
        this.#emit({ kind: 'token', requestId, messageId, offset: offset as number, text });
        return;
      }
      case 'live':
        this.#attempt = 0;
        this.#setState('live');
        // Every unanswered send goes again with its request id: the server answers created: false if it has it.
        for (const [requestId, pending] of this.#pending) this.#sendFrame(sendFrame(requestId, pending.content));
        for (const queued of this.#queued.splice(0)) this.#sendFrame(queued);
        return;
      case 'chat.accepted':
      case 'chat.rejected': {
        const requestId = String(frame.requestId);
        const pending = this.#pending.get(requestId);
        if (pending === undefined) return;
        this.#pending.delete(requestId);
        if (frame.type === 'chat.accepted')
          pending.resolve({ requestId, created: frame.created === true, status: String(frame.status) });
        else pending.reject(new ClientError(String(frame.code), String(frame.message), requestId));
        return;
      }
      case 'error': {
        const requestId = typeof frame.requestId === 'string' ? frame.requestId : undefined;
        const pending = requestId === undefined ? undefined : this.#pending.get(requestId);
        if (frame.op === 'chat.send' && requestId !== undefined && pending !== undefined) {
          this.#pending.delete(requestId);
          pending.reject(new ClientError(String(frame.code), String(frame.message), requestId));
          return;
        }
        this.#emit({
          kind: 'error',
          op: String(frame.op ?? 'frame'),
          code: String(frame.code),
          message: String(frame.message),
          requestId,
        });
        return;
      }
    }
  }

  #record(link: Link, record: RecordFrame): void {
    const last = this.#lastSeq ?? -1;
    if (record.seq <= last) {
      this.#duplicates += 1;
      return;
    }
    if (record.seq !== last + 1) {
      // Never deliver around a hole: reconnect, which resumes from the last seq delivered.
      this.#gaps += 1;
      this.#dropped(link);
      return;
    }
    this.#lastSeq = record.seq;
    // The log's epoch as a reader folds it: a record that carries one sets it, a checkpoint without one clears it.
    if (typeof record.epoch === 'string') this.#epoch = record.epoch;
    else if (record.type === 'checkpoint') this.#epoch = null;
    this.#emit({ kind: 'record', record });
  }

  #callFrame(frame: Record<string, unknown>): void {
    if (this.#state === 'closed') throw new ClientError('client_closed', 'the client is closed');
    if (this.#state === 'live') this.#sendFrame(frame);
    else this.#queued.push(frame);
  }

  #sendFrame(frame: Record<string, unknown>): void {
    const link = this.#link;
    // Not ready: the drop that follows reconnects, and the next `live` sends the pending sends again.
    if (link === null || !link.ready) {
      if (frame.type !== 'chat.send') this.#queued.push(frame);
      return;
    }
    link.send(frame);
  }

  #setState(state: ConnectionState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.#emit({ kind: 'state', state });
  }

  #emit(event: ClientEvent): void {
    this.#options.onEvent?.(event);
    for (const listener of this.#iterators) listener(event);
  }
}

function sendFrame(requestId: string, content: string): Record<string, unknown> {
  return { type: 'chat.send', requestId, payload: { content } };
}

/** A request id the server accepts (an identifier), unique enough for one client's sends. */
function randomRequestId(): string {
  const random = Math.random().toString(36).slice(2, 12);
  return `r-${Date.now().toString(36)}-${random}`;
}
