// A real WebSocket server on 127.0.0.1 over a hub, and clients that record every frame, for the transport tests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type ConversationHub, type ConversationHubOptions, openConversationHub } from '@turnjournal/live';
import {
  attachWebSocketTransport,
  type WebSocketTransport,
  type WebSocketTransportOptions,
} from '@turnjournal/live/websocket';
import { WebSocket } from 'ws';
import { tempStore } from '../support.js';

/** Longest any single wait of these tests may take: far above the few milliseconds each takes when quiet. */
export const HANG_GUARD_MS = 20_000;

export interface TestServer {
  readonly root: string;
  readonly hub: ConversationHub;
  readonly transport: WebSocketTransport;
  readonly http: Server;
  readonly url: string;
  /** Errors the transport reported to `onError`. */
  readonly reported: unknown[];
  close(): Promise<void>;
}

/**
 * Starts a hub and a transport on an ephemeral port. The session id is the `session` query parameter; the worker
 * answers "echo: <content>" in two deltas unless `run` is given.
 */
export async function startServer(
  options: { hub?: Partial<ConversationHubOptions>; transport?: Partial<WebSocketTransportOptions> } = {},
): Promise<TestServer> {
  const root = tempStore('tj-ws-');
  const hub = openConversationHub({ root, retention: false, ...options.hub });
  const http = createServer((_request, response) => {
    response.writeHead(404);
    response.end();
  });
  const reported: unknown[] = [];
  const transport = attachWebSocketTransport({
    hub,
    server: http,
    authorize(request) {
      const session = new URL(request.url ?? '/', 'http://localhost').searchParams.get('session');
      return session ?? { status: 401, message: 'name a session' };
    },
    async run({ run, content }) {
      await run.delta('echo: ');
      await run.delta(content);
      await run.done();
    },
    onError(error) {
      reported.push(error);
    },
    ...options.transport,
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    root,
    hub,
    transport,
    http,
    url: `ws://127.0.0.1:${port}/ws`,
    reported,
    async close() {
      await transport.close();
      await hub.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** A connected client that keeps every frame it received. */
export interface TestClient {
  readonly socket: WebSocket;
  readonly frames: Record<string, unknown>[];
  send(frame: unknown): void;
  /** Resolves with the first frame (from the start) that `match` accepts; rejects after the hang guard. */
  waitFor(match: (frame: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>>;
  /** Resolves with the close code and reason once the server closed the connection. */
  closed: Promise<{ code: number; reason: string }>;
  close(): void;
}

/** Opens a client to `session` on `server`; resolves once open. */
export async function connect(server: TestServer, session: string): Promise<TestClient> {
  const socket = new WebSocket(`${server.url}?session=${encodeURIComponent(session)}`);
  return clientOf(socket);
}

export function clientOf(socket: WebSocket): Promise<TestClient> {
  const frames: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  socket.on('message', (data) => {
    frames.push(JSON.parse(String(data)) as Record<string, unknown>);
    for (const wake of [...waiters]) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    socket.on('close', (code, reason) => {
      resolve({ code, reason: String(reason) });
      for (const wake of [...waiters]) wake();
    });
  });
  socket.on('error', () => undefined);
  const client: TestClient = {
    socket,
    frames,
    send(frame) {
      socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
    },
    waitFor(match, what) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no frame ${what} within ${HANG_GUARD_MS} ms; got ${JSON.stringify(frames).slice(-600)}`));
        }, HANG_GUARD_MS);
        const check = (): void => {
          const found = frames.find(match);
          if (found !== undefined) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(found);
          } else if (socket.readyState === socket.CLOSED) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`connection closed before a frame ${what}; got ${JSON.stringify(frames).slice(-600)}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
    closed,
    close() {
      socket.close();
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the client did not connect')), HANG_GUARD_MS);
    socket.once('open', () => {
      clearTimeout(timer);
      resolve(client);
    });
    socket.once('unexpected-response', (_request, response) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`upgrade refused with ${response.statusCode}`), { status: response.statusCode }));
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

/** The server still serves: a new client says hello to a fresh session and receives its snapshot and `live`. */
export async function expectServerUp(server: TestServer): Promise<void> {
  const probe = await connect(server, `probe-${Math.random().toString(36).slice(2, 10)}`);
  probe.send({ type: 'hello', clientId: 'probe', lastSeq: null });
  await probe.waitFor((f) => f.type === 'live', 'live');
  probe.close();
  await probe.closed;
}

/** Error frames of a client. */
export function errors(client: TestClient): Record<string, unknown>[] {
  return client.frames.filter((f) => f.type === 'error');
}
