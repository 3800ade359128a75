// @turnjournal/client against a real hub and WebSocket transport over real sockets on 127.0.0.1: a conversation, a
// server restart mid-stream, cancel and ack, and a scripted peer that repeats and skips seqs.
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ClientError, type ClientEvent, LiveClient, type RecordFrame } from '@turnjournal/client';
import { type ConversationHub, openConversationHub } from '@turnjournal/live';
import { createSseTransport } from '@turnjournal/live/sse';
import { attachWebSocketTransport, type RunStart, type WebSocketTransport } from '@turnjournal/live/websocket';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';

const HANG_GUARD_MS = 20_000;

interface Running {
  readonly hub: ConversationHub;
  readonly transport: WebSocketTransport;
  readonly http: Server;
  readonly port: number;
  stop(): Promise<void>;
}

/** A hub on `root` and the WebSocket transport on `port` (0: any); the session is the `session` query parameter. */
async function startServer(root: string, port: number, run: (start: RunStart) => Promise<void>): Promise<Running> {
  const hub = openConversationHub({ root, retention: false });
  const authorize = (request: { url?: string | undefined }) =>
    new URL(request.url ?? '/', 'http://x').searchParams.get('session') ?? { status: 401 };
  const sse = createSseTransport({ hub, authorize, run });
  const http = createServer((request, response) => {
    if (!sse.handle(request, response)) response.writeHead(404).end();
  });
  const transport = attachWebSocketTransport({ hub, server: http, authorize, run });
  await new Promise<void>((resolve) => http.listen(port, '127.0.0.1', resolve));
  return {
    hub,
    transport,
    http,
    port: (http.address() as AddressInfo).port,
    async stop() {
      await transport.close();
      await sse.close();
      await hub.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

const echo = async ({ run, content }: RunStart): Promise<void> => {
  await run.delta('echo: ');
  await run.delta(content);
  await run.done();
};

const running: Running[] = [];
const clients: LiveClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const server of running.splice(0)) await server.stop();
});

function client(port: number, options: Partial<ConstructorParameters<typeof LiveClient>[0]> = {}) {
  const events: ClientEvent[] = [];
  const created = new LiveClient({
    url: `ws://127.0.0.1:${port}/ws?session=chat`,
    clientId: 'tab-1',
    WebSocket: WebSocket as unknown as ConstructorParameters<typeof LiveClient>[0]['WebSocket'],
    backoffMs: 20,
    maxBackoffMs: 200,
    onEvent: (event) => events.push(event),
    ...options,
  });
  clients.push(created);
  const records = (): RecordFrame[] => events.flatMap((event) => (event.kind === 'record' ? [event.record] : []));
  return { client: created, events, records };
}

/** Options of a client of the SSE transport on `port`. */
function sseOptions(port: number): Partial<ConstructorParameters<typeof LiveClient>[0]> {
  return { transport: 'sse', url: `http://127.0.0.1:${port}/sse?session=chat` };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > HANG_GUARD_MS) throw new Error(`${what} did not happen`);
    await sleep(5);
  }
}

/** `promise`, or a rejection naming `what` after the hang guard. */
function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not come within ${HANG_GUARD_MS} ms`)), HANG_GUARD_MS);
  });
  return Promise.race([promise, guard]).finally(() => clearTimeout(timer));
}

function tempRoot(): string {
  return mkdtempSync(join(tmpdir(), 'tj-client-'));
}

describe('LiveClient over the WebSocket transport', () => {
  it('sends, streams the run in seq order and answers the send (TJ-LIVE-054)', async () => {
    const server = await startServer(tempRoot(), 0, echo);
    running.push(server);
    const { client: c, events, records } = client(server.port);
    const answer = await c.send('hi', { requestId: 'r1' });
    expect(answer).toEqual({ requestId: 'r1', created: true, status: 'running' });
    await until(() => records().some((r) => r.type === 'chat.done'), 'chat.done');
    expect(events[0]).toMatchObject({ kind: 'snapshot', mode: 'full' });
    expect(events[1]).toEqual({ kind: 'state', state: 'replaying' });
    expect(records().map((r) => r.seq)).toEqual(records().map((_, i) => i));
    expect(c.cursor.lastSeq).toBe(records().at(-1)?.seq);
    await expect(c.send('hi', { requestId: 'r1' })).resolves.toMatchObject({ created: false });
    await expect(c.send('other', { requestId: 'r1' })).rejects.toMatchObject({ code: 'request_id_conflict' });
  });

  it.each(['websocket', 'sse'] as const)(
    'resumes across a server restart mid-stream with no gap and no duplicate, and resends an unanswered send, over %s (TJ-LIVE-054, TJ-LIVE-055)',
    async (transport) => {
      const root = tempRoot();
      let produced = 0;
      const slow = async ({ run }: RunStart): Promise<void> => {
        for (let i = 0; i < 200 && !run.signal.aborted; i += 1) {
          await run.delta(`t${i} `);
          produced += 1;
          await sleep(2);
        }
        if (!run.signal.aborted) await run.done();
      };
      const first = await startServer(root, 0, slow);
      const port = first.port;
      const { client: c, events, records } = client(port, transport === 'sse' ? sseOptions(port) : {});
      await c.send('long answer', { requestId: 'r1' });
      await until(() => records().filter((r) => r.type === 'chat.delta').length >= 5, 'some deltas');
      // Mid-stream: the server goes away (its shutdown cancels the run) and comes back on the same store and port.
      await first.stop();
      expect(produced).toBeLessThan(200);
      await until(() => c.state === 'reconnecting', 'the client to notice');
      // A send made while the server is down waits, and goes out once the client is live again.
      const whileDown = c.send('after the restart', { requestId: 'r2' });
      const second = await startServer(root, port, echo);
      running.push(second);
      await expect(within(whileDown, 'the answer to the send made while down')).resolves.toMatchObject({
        requestId: 'r2',
        created: true,
      });
      await until(() => records().some((r) => r.type === 'chat.done' && r.requestId === 'r2'), 'the second run to end');
      const session = await second.hub.session('chat');
      const seqs = records().map((r) => r.seq);
      expect(seqs).toEqual(Array.from({ length: session.durableSeq + 1 }, (_, i) => i));
      expect(records().find((r) => r.type === 'chat.cancelled')?.payload).toMatchObject({ reason: 'server_shutdown' });
      const states = events.flatMap((e) => (e.kind === 'state' ? [e.state] : []));
      expect(states).toContain('reconnecting');
      expect(states.at(-1)).toBe('live');
      // The resumed connection started after the client's cursor: no snapshot replaced the state it held.
      expect(events.filter((e) => e.kind === 'snapshot')).toHaveLength(1);
    },
  );

  it.each(['websocket', 'sse'] as const)(
    'cancels a run by id and acknowledges it, over %s (TJ-LIVE-055)',
    async (transport) => {
      const server = await startServer(tempRoot(), 0, async ({ run }) => {
        await run.delta('thinking');
        await new Promise((resolve) => run.signal.addEventListener('abort', resolve));
      });
      running.push(server);
      const { client: c, records } = client(server.port, transport === 'sse' ? sseOptions(server.port) : {});
      await c.send('x', { requestId: 'r1' });
      await expect(c.send('y', { requestId: 'r2' })).rejects.toBeInstanceOf(ClientError);
      c.cancel('r1');
      await until(() => records().some((r) => r.type === 'chat.cancelled'), 'chat.cancelled');
      c.ack('r1');
      const session = await server.hub.session('chat');
      await until(() => session.runInfo('r1')?.acked === true, 'the ack');
      expect(session.snapshot({ clientId: 'tab-1' }).undelivered).toEqual([]);
    },
  );

  it.each(['websocket', 'sse'] as const)(
    'hands on each token as produced, as a token event that moves no cursor, over %s (TJ-LIVE-060)',
    async (transport) => {
      let release = (): void => undefined;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const held = async ({ run }: RunStart): Promise<void> => {
        await run.delta('one ');
        await sleep(20);
        await run.delta('two');
        await gate;
        await run.done();
      };
      const server = await startServer(tempRoot(), 0, held);
      running.push(server);
      const { client: c, events, records } = client(server.port, transport === 'sse' ? sseOptions(server.port) : {});
      await c.send('go', { requestId: 'r1' });
      const tokens = () => events.flatMap((event) => (event.kind === 'token' ? [event] : []));
      // The run is parked before its end: the tokens came on their own, not with the run's end.
      await until(() => tokens().reduce((text, t) => text.slice(0, t.offset) + t.text, '') === 'one two', 'tokens');
      expect(tokens()[0]).toEqual({ kind: 'token', requestId: 'r1', messageId: 'r1.a1', offset: 0, text: 'one ' });
      expect(records().some((r) => r.type === 'chat.done')).toBe(false);
      const cursor = c.cursor.lastSeq;
      expect(cursor).toBe(records().at(-1)?.seq);
      release();
      await until(() => records().some((r) => r.type === 'chat.done'), 'chat.done');
      expect(records().map((r) => r.seq)).toEqual(records().map((_, i) => i));
    },
  );

  it('yields its events to an async iterator until closed, and rejects sends it cannot finish', async () => {
    const server = await startServer(tempRoot(), 0, echo);
    running.push(server);
    const { client: c } = client(server.port);
    const seen: string[] = [];
    const reading = (async () => {
      for await (const event of c.events()) {
        seen.push(event.kind === 'record' ? event.record.type : event.kind);
        if (event.kind === 'record' && event.record.type === 'chat.done') c.close();
      }
    })();
    await c.send('hi', { requestId: 'r1' });
    await reading;
    expect(seen).toContain('chat.done');
    expect(seen.at(-1)).toBe('state');
    expect(c.state).toBe('closed');
    await expect(c.send('late')).rejects.toMatchObject({ code: 'client_closed' });
  });
});

describe('LiveClient against a peer that repeats and skips seqs (TJ-LIVE-054)', () => {
  it('delivers each seq once, and reconnects from its cursor at a gap instead of delivering around it', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    await new Promise<void>((resolve) => wss.once('listening', resolve));
    const hellos: Record<string, unknown>[] = [];
    const record = (seq: number) => JSON.stringify({ seq, ts: '2026-01-01T00:00:00Z', type: 'x', requestId: null });
    wss.on('connection', (socket) => {
      socket.on('message', (data) => {
        const hello = JSON.parse(String(data)) as Record<string, unknown>;
        hellos.push(hello);
        if (hellos.length === 1) {
          socket.send(JSON.stringify({ type: 'snapshot', mode: 'resume', after: -1, head: 3 }));
          for (const seq of [0, 1, 2, 1, 2, 3, 5, 6]) socket.send(record(seq));
        } else {
          socket.send(JSON.stringify({ type: 'snapshot', mode: 'resume', after: hello.lastSeq, head: 6 }));
          for (const seq of [3, 4, 5, 6]) socket.send(record(seq));
          socket.send(JSON.stringify({ type: 'live', head: 6 }));
        }
      });
    });
    try {
      const port = (wss.address() as AddressInfo).port;
      const { client: c, records } = client(port, { cursor: { lastSeq: -1 } });
      await until(() => c.state === 'live', 'live');
      expect(records().map((r) => r.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      expect(hellos.map((h) => h.lastSeq)).toEqual([-1, 3]);
      expect(c.duplicates).toBe(3);
      expect(c.gaps).toBe(1);
    } finally {
      for (const socket of wss.clients) socket.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    }
  });

  it('parses an SSE stream whose lines end in CRLF, split across chunks anywhere, with multi-line data', async () => {
    const frames = [
      { type: 'snapshot', mode: 'resume', after: -1, head: 2 },
      ...[0, 1, 2].map((seq) => ({ seq, ts: '2026-01-01T00:00:00Z', type: 'x', requestId: null })),
      { type: 'live', head: 2 },
    ];
    // Each frame's JSON in two data lines (split at its first comma), which the event joins with a LF.
    const data = (f: object) => `data: ${JSON.stringify(f).replace(',', ',\r\ndata: ')}`;
    const text = frames.map((f, i) => `: comment\r\nid: ${i}\r\n${data(f)}\r\n\r\n`).join('');
    const http = createServer(async (request, response) => {
      if (request.method !== 'GET') return response.writeHead(405).end();
      response.writeHead(200, { 'Content-Type': 'text/event-stream' });
      // Cut after every CR, so that each CRLF arrives in two chunks.
      for (const piece of text.split(/(?<=\r)/)) {
        response.write(piece);
        await sleep(1);
      }
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    try {
      const port = (http.address() as AddressInfo).port;
      const { client: c, records } = client(port, { ...sseOptions(port), cursor: { lastSeq: -1 } });
      await until(() => c.state === 'live', 'live');
      expect(records().map((r) => r.seq)).toEqual([0, 1, 2]);
      c.close();
    } finally {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    }
  });
});
