// @turnjournal/live/websocket: the WebSocket server transport of a conversation hub (packages/live/README.md,
// "WebSocket transport"; spec §18.7). `ws` is an optional peer dependency: only this subpath needs it.
import { type IncomingMessage, type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { ConversationHub } from '../hub.js';
import type { TransportErrorCode } from '../transport/frames.js';
import { positive, type RunStart, TransportHost } from '../transport/host.js';
import { Connection } from './connection.js';

export type { RunStart } from '../transport/host.js';
export { CUT_OFF_CLOSE, SESSION_GONE_CLOSE } from './connection.js';

/** Codes of the transport's own refusals, besides the `LiveErrorCode`s of the session calls. */
export type WebSocketErrorCode = TransportErrorCode;

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
  const { server } = options;
  const host = new TransportHost(options, 'attachWebSocketTransport');
  const path = options.path ?? '/ws';
  const highWaterBytes = positive(options.highWaterBytes, 1 << 20, 'highWaterBytes');
  const limits = {
    maxPayloadBytes: positive(options.maxPayloadBytes, 1 << 20, 'maxPayloadBytes'),
    maxConnections: positive(options.maxConnections, 10_000, 'maxConnections'),
    heartbeatMs: positive(options.heartbeatMs, 30_000, 'heartbeatMs'),
    highWaterBytes,
    slowClientMs: positive(options.slowClientMs, 10_000, 'slowClientMs'),
    maxBufferedBytes: positive(options.maxBufferedBytes, 4 * highWaterBytes, 'maxBufferedBytes'),
    maxQueuedFrames: positive(options.maxQueuedFrames, 32, 'maxQueuedFrames'),
  };
  const connections = new Set<Connection>();
  let upgrading = 0;
  let closed = false;

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
    host
      .authorized(request)
      .then((decision) => {
        if (typeof decision !== 'string') return refuseUpgrade(socket, decision);
        if (closed) return refuseUpgrade(socket, { status: 503, message: 'server stopping' });
        if (socket.destroyed) return;
        wss.handleUpgrade(request, socket, head, (ws) => {
          const connection = new Connection(ws, decision, host, limits);
          connections.add(connection);
          ws.on('close', () => connections.delete(connection));
        });
      })
      .catch((error: unknown) => {
        host.report(error, { sessionId: null, op: 'authorize' });
        refuseUpgrade(socket, { status: 500, message: 'authorization failed' });
      })
      .finally(() => {
        upgrading -= 1;
      });
  };

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
