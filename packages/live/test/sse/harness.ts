// A real SSE server on 127.0.0.1 over a hub, behind either front end of the one SSE endpoint (node:http's
// `createSseTransport`, or `createFetchSseTransport` behind a framework-like bridge), and a node:http client that
// parses the event stream, for the SSE tests.
import { type ClientRequest, createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ConversationHub, type ConversationHubOptions, openConversationHub } from '@turnjournal/live';
import {
  createFetchSseTransport,
  createSseTransport,
  type SseEndpointOptions,
  type SseRefusal,
} from '@turnjournal/live/sse';
import { afterEach } from 'vitest';
import { tempStore } from '../support.js';
import { serveFetch } from './fetch-bridge.js';

/** Longest any single wait of these tests may take: far above the few milliseconds each takes when quiet. */
export const HANG_GUARD_MS = 20_000;

/** The two front ends of the SSE endpoint: `createSseTransport` (node:http) and `createFetchSseTransport` (Fetch). */
export const SSE_FRONT_ENDS = ['node', 'fetch'] as const;
export type SseFrontEnd = (typeof SSE_FRONT_ENDS)[number];

/**
 * Transport options both front ends take. `authorize` is given the request, of which it may read only the URL (a path
 * from node:http, an absolute URL from Fetch); `highWaterBytes` applies to the Fetch front end only.
 */
export interface SseTestTransportOptions extends Partial<Omit<SseEndpointOptions<never>, 'hub' | 'authorize'>> {
  readonly authorize?: (request: {
    readonly url?: string | undefined;
  }) => string | SseRefusal | Promise<string | SseRefusal>;
  readonly slowClientMs?: number;
  readonly highWaterBytes?: number;
}

export interface SseServerOptions {
  /** node:http by default. */
  readonly frontEnd?: SseFrontEnd;
  readonly hub?: Partial<ConversationHubOptions>;
  readonly transport?: SseTestTransportOptions;
}

export interface SseServer {
  readonly frontEnd: SseFrontEnd;
  readonly root: string;
  readonly hub: ConversationHub;
  /** What both front ends' transports share. */
  readonly transport: { readonly connections: number; close(): Promise<void> };
  readonly http: Server;
  readonly port: number;
  readonly reported: unknown[];
  close(): Promise<void>;
}

/** Starts a hub and the SSE transport on an ephemeral port at `/sse`; the session is the `session` query parameter. */
export async function startSseServer(options: SseServerOptions = {}): Promise<SseServer> {
  const frontEnd = options.frontEnd ?? 'node';
  const root = tempStore(`tj-sse-${frontEnd}-`);
  const hub = openConversationHub({ root, retention: false, ...options.hub });
  const reported: unknown[] = [];
  const shared = {
    hub,
    authorize(req: { readonly url?: string | undefined }) {
      const session = new URL(req.url ?? '/', 'http://localhost').searchParams.get('session');
      return session ?? { status: 401, message: 'name a session' };
    },
    async run({ run, content }: Parameters<SseEndpointOptions<never>['run']>[0]) {
      await run.delta('echo: ');
      await run.delta(content);
      await run.done();
    },
    onError(error: unknown) {
      reported.push(error);
    },
    ...options.transport,
  };
  let transport: SseServer['transport'];
  let http: Server;
  if (frontEnd === 'node') {
    const node = createSseTransport(shared);
    transport = node;
    http = createServer((req, res) => {
      if (!node.handle(req, res)) {
        res.writeHead(404);
        res.end();
      }
    });
  } else {
    const fetch = createFetchSseTransport({ ...shared, path: '/sse' });
    transport = fetch;
    http = createServer((req, res) => {
      void serveFetch(fetch.fetch, req, res);
    });
  }
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    frontEnd,
    root,
    hub,
    transport,
    http,
    port,
    reported,
    async close() {
      await transport.close();
      await hub.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/**
 * For a test file or a `describe` block: a starter of servers on `frontEnd` (defaults merged under each call's
 * options), each closed after its test.
 */
export function sseServers(
  frontEnd: SseFrontEnd,
): (options?: Omit<SseServerOptions, 'frontEnd'>) => Promise<SseServer> {
  const open: SseServer[] = [];
  afterEach(async () => {
    for (const server of open.splice(0)) await server.close();
  });
  return async (options = {}) => {
    const started = await startSseServer({ ...options, frontEnd });
    open.push(started);
    return started;
  };
}

/** Resolves once `condition` holds, polling; throws after HANG_GUARD_MS naming `what`. */
export async function until(condition: () => boolean, what: string): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > HANG_GUARD_MS) throw new Error(`${what} did not happen`);
    await sleep(10);
  }
}

/** One parsed SSE event. */
export interface SseEvent {
  readonly id: string | undefined;
  readonly frame: Record<string, unknown>;
}

/** A stream opened by {@link openStream}. */
export interface StreamClient {
  readonly status: number;
  readonly response: IncomingMessage;
  readonly request: ClientRequest;
  readonly events: SseEvent[];
  /** Comment lines received (heartbeats). */
  readonly comments: string[];
  /** The id of the last event that carried one: what a browser sends as Last-Event-ID on reconnect. */
  readonly lastEventId: string | undefined;
  /** The body text, for a refused stream (not 200). */
  readonly body: Promise<string>;
  readonly ended: Promise<void>;
  waitFor(match: (frame: Record<string, unknown>) => boolean, what: string): Promise<Record<string, unknown>>;
  /** Seqs of the record frames received, in order. */
  seqs(): number[];
  destroy(): void;
}

/** Opens a GET stream with the given query and headers; resolves once the response headers arrived. */
export function openStream(
  server: { readonly port: number },
  query: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<StreamClient> {
  const path = `/sse?${new URLSearchParams(query)}`;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no response headers')), HANG_GUARD_MS);
    const req = request({ host: '127.0.0.1', port: server.port, path, method: 'GET', headers }, (response) => {
      clearTimeout(timer);
      resolve(streamClient(req, response));
    });
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end();
  });
}

function streamClient(req: ClientRequest, response: IncomingMessage): StreamClient {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const waiters = new Set<() => void>();
  let lastEventId: string | undefined;
  let buffer = '';
  let text = '';
  let finished = false;
  response.setEncoding('utf8');
  const ended = new Promise<void>((resolve) => {
    const end = (): void => {
      finished = true;
      resolve();
      for (const wake of [...waiters]) wake();
    };
    response.once('end', end);
    response.once('close', end);
    response.once('error', end);
  });
  response.on('data', (chunk: string) => {
    text += response.statusCode === 200 ? '' : chunk;
    buffer += chunk;
    for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      let id: string | undefined;
      let data: string | undefined;
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comments.push(line);
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('data: ')) data = (data === undefined ? '' : `${data}\n`) + line.slice(6);
      }
      if (id !== undefined) lastEventId = id;
      if (data !== undefined) events.push({ id, frame: JSON.parse(data) as Record<string, unknown> });
    }
    for (const wake of [...waiters]) wake();
  });
  return {
    status: response.statusCode ?? 0,
    response,
    request: req,
    events,
    comments,
    get lastEventId() {
      return lastEventId;
    },
    body: ended.then(() => text),
    ended,
    waitFor(match, what) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no event ${what} within ${HANG_GUARD_MS} ms; got ${JSON.stringify(events).slice(-600)}`));
        }, HANG_GUARD_MS);
        const check = (): void => {
          const found = events.find((event) => match(event.frame));
          if (found !== undefined) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(found.frame);
          } else if (finished) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`stream ended before an event ${what}; got ${JSON.stringify(events).slice(-600)}`));
          }
        };
        waiters.add(check);
        check();
      });
    },
    seqs() {
      return events.filter((e) => typeof e.frame.seq === 'number').map((e) => e.frame.seq as number);
    },
    destroy() {
      req.destroy();
    },
  };
}

/** POSTs `body` (an object as JSON, or raw text) and resolves with the status and the parsed JSON answer. */
export function post(
  server: { readonly port: number },
  session: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no answer to a POST')), HANG_GUARD_MS);
    const req = request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: `/sse?session=${encodeURIComponent(session)}`,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
      },
      (response) => {
        let answer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          answer += chunk;
        });
        response.once('end', () => {
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(answer) as Record<string, unknown> });
        });
      },
    );
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    req.end(text);
  });
}

/** The server still serves: a new stream on a fresh session receives its snapshot and `live`. */
export async function expectSseServerUp(server: { readonly port: number }): Promise<void> {
  const probe = await openStream(server, {
    session: `probe-${Math.random().toString(36).slice(2, 10)}`,
    clientId: 'p',
  });
  if (probe.status !== 200) throw new Error(`the server refused a probe stream with ${probe.status}`);
  await probe.waitFor((f) => f.type === 'live', 'live');
  probe.destroy();
}
