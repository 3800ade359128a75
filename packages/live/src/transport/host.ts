// What every transport shares around its connections: the authorization decision, the count of subscribers per
// session, the start of a client's run on the app's worker, and the operator's error hook. The WebSocket and SSE
// transports differ only in how frames arrive and records leave.
import type { IncomingMessage } from 'node:http';
import { isValidIdentifier } from '@turnjournal/reader/store-format';
import type { ConversationHub, HubSession } from '../hub.js';
import type { LiveRun } from '../live-run.js';
import { reservedSessionIdRefusal } from '../reserved-session-ids.js';

/** An `authorize` refusal: the request is answered with this HTTP status and message, and nothing is opened. */
export interface TransportRefusalResponse {
  /** The HTTP status (401, 403, 404, …). */
  readonly status: number;
  /** A short text for the client; no server detail. */
  readonly message?: string;
}

/** Decides who may connect, and to which session: the session id, or a refusal (`node:http`'s request, or Fetch's). */
export type Authorize<Request = IncomingMessage> = (
  request: Request,
) => string | TransportRefusalResponse | Promise<string | TransportRefusalResponse>;

/** A run a client's send started, handed to the app's worker. */
export interface RunStart {
  readonly session: HubSession;
  readonly run: LiveRun;
  readonly sessionId: string;
  readonly clientId: string;
  readonly content: string;
}

/** Where a transport's failures the client is not told about go. */
export type ReportError = (error: unknown, context: { readonly sessionId: string | null; readonly op: string }) => void;

/** Options every transport takes. */
export interface TransportHostOptions<Request = IncomingMessage> {
  readonly hub: ConversationHub;
  readonly authorize: Authorize<Request>;
  readonly run: (start: RunStart) => Promise<void> | void;
  readonly onError?: ReportError;
  readonly maxSubscribersPerSession?: number;
}

/** The shared state of one transport instance. */
export class TransportHost<Request = IncomingMessage> {
  readonly hub: ConversationHub;
  readonly maxSubscribersPerSession: number;
  readonly #options: TransportHostOptions<Request>;
  readonly #subscribers = new Map<string, number>();

  constructor(options: TransportHostOptions<Request>, name: string) {
    if (typeof options.authorize !== 'function' || typeof options.run !== 'function')
      throw new TypeError(`${name} needs authorize(request) and run(start) functions`);
    this.hub = options.hub;
    this.#options = options;
    this.maxSubscribersPerSession = positive(options.maxSubscribersPerSession, 64, 'maxSubscribersPerSession');
  }

  /** Hands `error` to the operator's hook; a throwing hook is told on stderr, never thrown at the connection. */
  readonly report: ReportError = (error, context) => {
    try {
      this.#options.onError?.(error, context);
    } catch (hookError) {
      console.error('turnjournal transport onError hook threw', hookError);
    }
  };

  /** The session `request` may use, checked (a valid identifier, not reserved), or the refusal to answer. */
  async authorized(request: Request): Promise<string | TransportRefusalResponse> {
    const decision = await this.#options.authorize(request);
    if (typeof decision === 'string') {
      if (!isValidIdentifier(decision) || reservedSessionIdRefusal(decision) !== null)
        return { status: 400, message: 'invalid session id' };
      return decision;
    }
    if (typeof decision !== 'object' || decision === null || !Number.isInteger(decision.status))
      throw new TypeError('authorize must return a session id or { status, message }');
    return decision;
  }

  /** Counts a subscriber of `sessionId`; false when the session has its maximum. */
  claimSubscriber(sessionId: string): boolean {
    const count = this.#subscribers.get(sessionId) ?? 0;
    if (count >= this.maxSubscribersPerSession) return false;
    this.#subscribers.set(sessionId, count + 1);
    return true;
  }

  /** Releases a subscriber counted by {@link claimSubscriber}. */
  releaseSubscriber(sessionId: string): void {
    const count = (this.#subscribers.get(sessionId) ?? 1) - 1;
    if (count <= 0) this.#subscribers.delete(sessionId);
    else this.#subscribers.set(sessionId, count);
  }

  /** Runs the app's worker for a created run; a rejection is reported and a run it left active ends with an error. */
  startRun(start: RunStart): void {
    let worked: Promise<void>;
    try {
      worked = Promise.resolve(this.#options.run(start));
    } catch (error) {
      worked = Promise.reject(error);
    }
    worked.catch(async (error: unknown) => {
      this.report(error, { sessionId: start.sessionId, op: 'run' });
      if (start.session.activeRequestId !== start.run.requestId) return;
      await start.run.error({ message: 'the worker failed' }).catch((finishError: unknown) => {
        const code = (finishError as { code?: unknown } | null)?.code;
        // The run ended meanwhile or the session closed or failed: the next open recovers the run.
        if (code !== 'run_not_active' && code !== 'session_closed' && code !== 'session_failed')
          this.report(finishError, { sessionId: start.sessionId, op: 'run' });
      });
    });
  }
}

/**
 * What a connection needs of its transport's host once it is authorized: the hub, the error hook, the subscriber
 * count and the worker. It does not depend on the kind of request (`node:http`'s or Fetch's) that was authorized.
 */
export type SessionHost = Pick<
  TransportHost,
  'hub' | 'report' | 'startRun' | 'claimSubscriber' | 'releaseSubscriber' | 'maxSubscribersPerSession'
>;

/** `value`, checked to be a positive number, or `fallback` when undefined. */
export function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} must be a positive number, got ${String(value)}`);
  return value;
}
