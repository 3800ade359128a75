// @turnjournal/live/websocket: the WebSocket server transport of a conversation hub (packages/live/README.md,
// "WebSocket transport"; spec §18.7). `ws` is an optional peer dependency: only this subpath needs it.
import { type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { isValidIdentifier } from '@turnjournal/reader/store-format';
import { WebSocketServer } from 'ws';
import type { ConversationHub } from '../hub.js';
import { reservedSessionIdRefusal } from '../reserved-session-ids.js';
import { Connection, type ConnectionContext, type RunStart } from './connection.js';

export { CUT_OFF_CLOSE, type RunStart, SESSION_GONE_CLOSE } from './connection.js';
export type { WebSocketErrorCode } from './frames.js';

/** An `authorize` refusal: the upgrade is answered with this HTTP status and message, and no socket is opened. */
export interface WebSocketRefusal {
  /** The HTTP status (401, 403, 404, …). */
  readonly status: number;
  /** A short text for the client; no server detail. */
  readonly message?: string;
}

/** Options of {@link attachWebSocketTransport}. */
export interface WebSocketTransportOptions {
  /** The hub whose sessions the connections subscribe to. */
  readonly hub: ConversationHub;
  /** The HTTP server whose WebSocket upgrades on `path` this transport takes. */
  readonly server: Server;
  /** The URL path of the endpoint; `/ws` by default. Upgrades on other paths are left to other listeners. */
  readonly path?: string;
  /**
   * Decides who may connect, and to which session: the session id (a valid identifier, not reserved), or a refusal.
   * Called once per upgrade, before any socket exists; a throw answers 500 and goes to `onError`.
   */
  readonly authorize: (request: IncomingMessage) => string | WebSocketRefusal | Promise<string | WebSocketRefusal>;
  /**
   * Streams the run a client's send started (the app's worker): call `run.delta`, `run.done`, … and stop when
   * `run.signal` aborts. A rejection goes to `onError`, and a run it left active is ended with `run.error`.
   */
  readonly run: (start: RunStart) => Promise<void> | void;
  /** Errors a client is told only by code (write failures, a worker's rejection, a failed authorize). */
  readonly onError?: (error: unknown, context: { readonly sessionId: string | null; readonly op: string }) => void;
  /** Largest frame a client may send, in bytes; a larger one closes its connection (1009). 1 MiB by default. */
  readonly maxPayloadBytes?: number;
  /** Most open connections; an upgrade beyond is answered 503. 10,000 by default. */
  readonly maxConnections?: number;
  /** Most subscribed connections per session; a hello beyond is refused (`too_many_subscribers`). 64 by default. */
  readonly maxSubscribersPerSession?: number;
  /** Interval of the heartbeat: a connection that answered no ping and sent nothing for that long is dropped. 30 s. */
  readonly heartbeatMs?: number;
  /** Bytes a socket may hold unsent before the subscription waits for it to drain. 1 MiB by default. */
  readonly highWaterBytes?: number;
  /** Longest wait for a socket to drain below `highWaterBytes`; then the client is cut off. 10 s by default. */
  readonly slowClientMs?: number;
  /** Bytes unsent beyond which a reply cuts the client off instead of queueing. 4 × `highWaterBytes` by default. */
  readonly maxBufferedBytes?: number;
  /** Frames of one connection received and not yet answered; beyond, a frame is refused (`too_many_requests`). 32. */
  readonly maxQueuedFrames?: number;
}

/** A running WebSocket transport (see {@link attachWebSocketTransport}). */
export interface WebSocketTransport {
  /** Connections open now. */
  readonly connections: number;
  /** Stops taking upgrades and closes every connection (1001); the hub is left open for the caller to close. */
  close(): Promise<void>;
}

/**
 * Serves a hub's sessions over WebSocket on `server` (spec §18.7): `authorize(request)` picks the session, the client
 * says `hello` with its cursor and receives the snapshot or the records after it, then live records; `chat.send`,
 * `chat.cancel` and `ack` frames call the session, and every frame it cannot serve is answered with an error frame
 * carrying the `LiveError` code. Returns the transport, to close it.
 */
export function attachWebSocketTransport(options: WebSocketTransportOptions): WebSocketTransport {
  const { hub, server } = options;
  if (typeof options.authorize !== 'function' || typeof options.run !== 'function')
    throw new TypeError('attachWebSocketTransport needs authorize(request) and run(start) functions');
  const path = options.path ?? '/ws';
  const highWaterBytes = positive(options.highWaterBytes, 1 << 20, 'highWaterBytes');
  const limits = {
    maxPayloadBytes: positive(options.maxPayloadBytes, 1 << 20, 'maxPayloadBytes'),
    maxConnections: positive(options.maxConnections, 10_000, 'maxConnections'),
    maxSubscribersPerSession: positive(options.maxSubscribersPerSession, 64, 'maxSubscribersPerSession'),
    heartbeatMs: positive(options.heartbeatMs, 30_000, 'heartbeatMs'),
    highWaterBytes,
    slowClientMs: positive(options.slowClientMs, 10_000, 'slowClientMs'),
    maxBufferedBytes: positive(options.maxBufferedBytes, 4 * highWaterBytes, 'maxBufferedBytes'),
    maxQueuedFrames: positive(options.maxQueuedFrames, 32, 'maxQueuedFrames'),
  };
  const report = (error: unknown, context: { sessionId: string | null; op: string }): void => {
    try {
      options.onError?.(error, context);
    } catch (hookError) {
      // A throwing hook must not take the connection (or the process) with it; it is told on stderr once per throw.
      console.error('turnjournal websocket onError hook threw', hookError);
    }
  };
  const subscribers = new Map<string, number>();
  const connections = new Set<Connection>();
  let upgrading = 0;
  let closed = false;

  const context: ConnectionContext = {
    hub,
    limits,
    claimSubscriber(sessionId) {
      const count = subscribers.get(sessionId) ?? 0;
      if (count >= limits.maxSubscribersPerSession) return false;
      subscribers.set(sessionId, count + 1);
      return true;
    },
    releaseSubscriber(sessionId) {
      const count = (subscribers.get(sessionId) ?? 1) - 1;
      if (count <= 0) subscribers.delete(sessionId);
      else subscribers.set(sessionId, count);
    },
    startRun(start) {
      let worked: Promise<void>;
      try {
        worked = Promise.resolve(options.run(start));
      } catch (error) {
        worked = Promise.reject(error);
      }
      worked.catch(async (error: unknown) => {
        report(error, { sessionId: start.sessionId, op: 'run' });
        if (start.session.activeRequestId !== start.run.requestId) return;
        await start.run.error({ message: 'the worker failed' }).catch((finishError: unknown) => {
          const code = (finishError as { code?: unknown } | null)?.code;
          // The run ended meanwhile or the session closed or failed: the next open recovers the run.
          if (code !== 'run_not_active' && code !== 'session_closed' && code !== 'session_failed')
            report(finishError, { sessionId: start.sessionId, op: 'run' });
        });
      });
    },
    report,
  };

  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxPayloadBytes, clientTracking: false });

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    let pathname: string;
    try {
      pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      refuseUpgrade(socket, { status: 400, message: 'bad request URL' });
      return;
    }
    if (pathname !== path) {
      // Another listener may serve this path; with none, the socket would hang until the client gave up.
      if (server.listenerCount('upgrade') <= 1) refuseUpgrade(socket, { status: 404, message: 'not found' });
      return;
    }
    socket.on('error', () => undefined);
    if (closed || connections.size + upgrading >= limits.maxConnections) {
      refuseUpgrade(socket, { status: 503, message: closed ? 'server stopping' : 'too many connections' });
      return;
    }
    upgrading += 1;
    authorized(request)
      .then((decision) => {
        if (typeof decision !== 'string') return refuseUpgrade(socket, decision);
        if (closed) return refuseUpgrade(socket, { status: 503, message: 'server stopping' });
        if (socket.destroyed) return;
        wss.handleUpgrade(request, socket, head, (ws) => {
          const connection = new Connection(ws, decision, context);
          connections.add(connection);
          ws.on('close', () => connections.delete(connection));
        });
      })
      .catch((error: unknown) => {
        report(error, { sessionId: null, op: 'authorize' });
        refuseUpgrade(socket, { status: 500, message: 'authorization failed' });
      })
      .finally(() => {
        upgrading -= 1;
      });
  };

  async function authorized(request: IncomingMessage): Promise<string | WebSocketRefusal> {
    const decision = await options.authorize(request);
    if (typeof decision === 'string') {
      if (!isValidIdentifier(decision) || reservedSessionIdRefusal(decision) !== null)
        return { status: 400, message: 'invalid session id' };
      return decision;
    }
    if (typeof decision !== 'object' || decision === null || !Number.isInteger(decision.status))
      throw new TypeError('authorize must return a session id or { status, message }');
    return decision;
  }

  server.on('upgrade', onUpgrade);
  const heartbeat = setInterval(() => {
    for (const connection of connections) {
      if (!connection.alive) {
        connection.terminate();
        continue;
      }
      connection.alive = false;
      connection.ping();
    }
  }, limits.heartbeatMs);
  heartbeat.unref();

  return {
    get connections() {
      return connections.size;
    },
    async close() {
      closed = true;
      clearInterval(heartbeat);
      server.off('upgrade', onUpgrade);
      const open = [...connections];
      const gone = Promise.all(
        open.map(
          (connection) =>
            new Promise<void>((resolve) => {
              if (!connections.has(connection)) return resolve();
              const timer = setTimeout(() => {
                connection.terminate();
                resolve();
              }, 1000);
              timer.unref();
              connection.onClosed(() => {
                clearTimeout(timer);
                resolve();
              });
            }),
        ),
      );
      for (const connection of open) connection.close(1001, 'server stopping');
      await gone;
      wss.close();
    },
  };
}

function refuseUpgrade(socket: Duplex, refusal: WebSocketRefusal): void {
  if (socket.destroyed) return;
  const status =
    Number.isInteger(refusal.status) && refusal.status >= 400 && refusal.status < 600 ? refusal.status : 403;
  const body = String(refusal.message ?? STATUS_CODES[status] ?? 'refused').slice(0, 200);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Refused'}\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new TypeError(`${name} must be a positive number, got ${String(value)}`);
  return value;
}
