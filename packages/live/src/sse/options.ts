// The options both SSE transports take (node:http and Fetch): one endpoint serves them, so their limits and hooks are
// one set, told apart only by the request type `authorize` is given.
import type { ConversationHub } from '../hub.js';
import type { RunStart } from '../transport/host.js';

/** An `authorize` refusal: the request is answered with this HTTP status and message. */
export interface SseRefusal {
  /** The HTTP status (401, 403, 404, …). */
  readonly status: number;
  /** A short text for the client; no server detail. */
  readonly message?: string;
}

/** What both SSE transports take: the hub, the hooks, and the limits; `R` is the request type of the server. */
export interface SseEndpointOptions<R> {
  /** The hub whose sessions the streams subscribe to. */
  readonly hub: ConversationHub;
  /**
   * Decides who may connect, and to which session: the session id (a valid identifier, not reserved), or a refusal.
   * Called for every GET and POST before anything is read or opened; a throw answers 500 and goes to `onError`.
   */
  readonly authorize: (request: R) => string | SseRefusal | Promise<string | SseRefusal>;
  /**
   * Streams the run a client's send started (the app's worker): call `run.delta`, `run.done`, … and stop when
   * `run.signal` aborts. A rejection goes to `onError`, and a run it left active is ended with `run.error`.
   */
  readonly run: (start: RunStart) => Promise<void> | void;
  /** Errors a client is told only by code (write failures, a worker's rejection, a failed authorize). */
  readonly onError?: (error: unknown, context: { readonly sessionId: string | null; readonly op: string }) => void;
  /** Largest POST body, in bytes; a larger one is answered 413 (`payload_too_large`), its rest not read. 1 MiB. */
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
  /** Bytes a stream may hold unsent before a control frame cuts the client off instead of queueing. 4 MiB. */
  readonly maxBufferedBytes?: number;
}
