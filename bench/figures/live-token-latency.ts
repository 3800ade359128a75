import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Server as SocketIoServer } from 'socket.io';
import { io as socketIoClient } from 'socket.io-client';
import { WebSocket } from 'ws';
import { LIVE_PATH, live } from '../lib/live.js';
import { latencyInfoRow, nowMs, quantile, round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';

type Transports = typeof import('../../packages/live/dist/websocket/index.js');
type SseTransports = typeof import('../../packages/live/dist/sse/index.js');
type TokenMode = 'durable' | 'segments';

const { attachWebSocketTransport }: Transports = await import(
  pathToFileURL(join(dirname(LIVE_PATH), 'websocket', 'index.js')).href
);
const { createSseTransport }: SseTransports = await import(
  pathToFileURL(join(dirname(LIVE_PATH), 'sse', 'index.js')).href
);

/** A model's pace: one token every 2 ms (500 tokens/s, a fast model), so that each token is its own event. */
const PACE_MS = 2;
/** Every 50th token ends a paragraph: `segments` mode then writes the text so far (TJ-LIVE-059). */
const token = (n: number) => (n % 50 === 49 ? `t${n}.\n\n` : `t${n} `);
const TOKEN_INDEX = /t(\d+)/g;

/** Produced → received times of one run, per token index (a token frame may carry several tokens). */
class Latencies {
  readonly produced: number[] = [];
  readonly tokens: number[] = [];
  readonly records: number[] = [];

  /** The tokens named in `text` arrived now, as a token (`record` false) or in a record. */
  arrived(text: string, record: boolean): void {
    const at = nowMs();
    const into = record ? this.records : this.tokens;
    for (const match of text.matchAll(TOKEN_INDEX)) {
      const n = Number(match[1]);
      const produced = this.produced[n];
      if (produced !== undefined && into[n] === undefined) into[n] = at - produced;
    }
  }
}

/** The worker of every run: `count` tokens at the model's pace, each stamped as it is handed to the run. */
async function produce(latencies: Latencies, count: number, delta: (text: string) => Promise<void>): Promise<void> {
  for (let n = 0; n < count; n += 1) {
    latencies.produced[n] = nowMs();
    await delta(token(n));
    await sleep(PACE_MS);
  }
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** One answer of `count` tokens through a hub in `mode`, received by one subscriber over `transport` on 127.0.0.1. */
async function liveRun(
  root: string,
  mode: TokenMode,
  transport: 'websocket' | 'sse',
  count: number,
): Promise<Latencies> {
  const latencies = new Latencies();
  const hub = live.openConversationHub({ root, retention: false, tokens: mode });
  const authorize = (req: { url?: string | undefined }) =>
    new URL(req.url ?? '/', 'http://x').searchParams.get('session') ?? { status: 401 };
  let finished = (): void => undefined;
  const done = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const run = async ({ run }: { run: { delta(text: string): Promise<void>; done(): Promise<void> } }) => {
    await produce(latencies, count, (text) => run.delta(text));
    await run.done();
  };
  const onFrame = (frame: Record<string, unknown>): void => {
    if (frame.type === 'token') latencies.arrived(frame.text as string, false);
    else if (frame.type === 'chat.delta') latencies.arrived((frame.payload as { text: string }).text, true);
    else if (
      frame.type === 'message_append' &&
      (frame.payload as { message: { role: string } }).message.role === 'assistant'
    )
      latencies.arrived((frame.payload as { message: { content: string } }).message.content, true);
    else if (frame.type === 'chat.done') finished();
  };
  const sse = createSseTransport({ hub, authorize, run });
  const http = createServer((req, res) => {
    if (!sse.handle(req, res)) res.writeHead(404).end();
  });
  const ws = attachWebSocketTransport({ hub, server: http, authorize, run });
  const port = await listen(http);
  try {
    if (transport === 'websocket') {
      const socket = new WebSocket(`ws://127.0.0.1:${port}/ws?session=s1`);
      socket.on('message', (data) => {
        const frame = JSON.parse(String(data)) as Record<string, unknown>;
        if (frame.type === 'live')
          socket.send(JSON.stringify({ type: 'chat.send', requestId: 'r1', payload: { content: 'go' } }));
        else onFrame(frame);
      });
      socket.on('open', () => socket.send(JSON.stringify({ type: 'hello', clientId: 'bench', lastSeq: null })));
      await done;
      socket.close();
    } else {
      const stream = request({ host: '127.0.0.1', port, path: '/sse?session=s1&clientId=bench', method: 'GET' });
      stream.on('response', (response) => {
        let buffer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          buffer += chunk;
          for (let at = buffer.indexOf('\n\n'); at >= 0; at = buffer.indexOf('\n\n')) {
            const data = buffer
              .slice(0, at)
              .split('\n')
              .find((line) => line.startsWith('data: '));
            buffer = buffer.slice(at + 2);
            if (data === undefined) continue;
            const frame = JSON.parse(data.slice(6)) as Record<string, unknown>;
            if (frame.type === 'live') {
              const call = request({
                host: '127.0.0.1',
                port,
                path: '/sse?session=s1',
                method: 'POST',
                headers: { 'Content-Type': 'application/json' },
              });
              call.on('response', (answer) => answer.resume());
              call.end(
                JSON.stringify({ type: 'chat.send', requestId: 'r1', clientId: 'bench', payload: { content: 'go' } }),
              );
            } else onFrame(frame);
          }
        });
      });
      stream.end();
      await done;
      stream.destroy();
    }
  } finally {
    await ws.close();
    await sse.close();
    await hub.close();
    await close(http);
  }
  return latencies;
}

/** The same tokens through Socket.IO (in-memory adapter, no durability) over its WebSocket transport on 127.0.0.1. */
async function socketIoRun(count: number): Promise<Latencies> {
  const latencies = new Latencies();
  const http = createServer();
  const server = new SocketIoServer(http);
  server.on('connection', (socket) => {
    socket.on('go', async () => {
      await produce(latencies, count, async (text) => {
        socket.emit('token', text);
      });
      socket.emit('done');
    });
  });
  const port = await listen(http);
  const client = socketIoClient(`http://127.0.0.1:${port}`, { transports: ['websocket'] });
  try {
    await new Promise<void>((resolve) => {
      client.on('token', (text: string) => latencies.arrived(text, false));
      client.on('done', () => resolve());
      client.on('connect', () => client.emit('go'));
    });
  } finally {
    client.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return latencies;
}

function complete(samples: readonly (number | undefined)[], count: number, what: string): number[] {
  const taken = samples.filter((sample): sample is number => sample !== undefined);
  if (taken.length !== count) throw new Error(`${what}: ${taken.length} of ${count} tokens arrived`);
  return taken;
}

/**
 * Token latency to a subscriber (issue 38): how long after the worker hands a token to `run.delta` a subscriber on
 * 127.0.0.1 receives it, over the WebSocket and the SSE transport, in each token mode (TJ-LIVE-060: tokens go out
 * as produced, before any sync), against the same tokens sent by Socket.IO with no durability in the same run.
 * Server and client share the process, as the Socket.IO pair does. Rows give p50 (the value) and p99 (details) per
 * transport and mode, the floor being Socket.IO's p50; the durable records' latency (the delta's record, or in
 * `segments` mode the record its text is written in) is in the details too.
 */
export const liveTokenLatency: Figure = {
  id: 'live-token-latency',
  title: 'token latency produced → received over WebSocket and SSE per token mode, vs Socket.IO in-memory',
  async run(context): Promise<FigureRow[]> {
    const count = context.mode === 'quick' ? 300 : 2000;
    // Socket.IO first and last: its figure is the median of both runs' p50s, so that a slow start does not bias it.
    const floors = [await socketIoRun(count)];
    const runs: { mode: TokenMode; transport: 'websocket' | 'sse'; latencies: Latencies }[] = [];
    for (const mode of ['durable', 'segments'] as const)
      for (const transport of ['websocket', 'sse'] as const) {
        context.log(`  live-token-latency: ${mode} over ${transport}`);
        const latencies = await liveRun(join(context.workDir, `${mode}-${transport}`), mode, transport, count);
        runs.push({ mode, transport, latencies });
      }
    floors.push(await socketIoRun(count));
    const floorSamples = floors.flatMap((floor) => complete(floor.tokens, count, 'socket.io'));
    const floorP50 = quantile(floorSamples, 0.5);
    const floorP99 = quantile(floorSamples, 0.99);
    const rows: FigureRow[] = runs.map(({ mode, transport, latencies }) => {
      const tokens = complete(latencies.tokens, count, `${mode} over ${transport}`);
      const records = latencies.records.filter((sample): sample is number => sample !== undefined);
      return latencyInfoRow({
        id: `live-token-latency-${transport}-${mode}`,
        name: `token latency p50, ${transport}, tokens: ${mode} (floor: Socket.IO p50)`,
        value: quantile(tokens, 0.5),
        floor: floorP50,
        note: `${count} tokens every ${PACE_MS} ms; p99 ${round(quantile(tokens, 0.99), 3)} ms (Socket.IO p99 ${round(floorP99, 3)} ms); records carrying the text: p50 ${round(quantile(records, 0.5), 3)} ms`,
        details: {
          tokens: count,
          paceMs: PACE_MS,
          p50Ms: round(quantile(tokens, 0.5)),
          p99Ms: round(quantile(tokens, 0.99)),
          socketIoP50Ms: round(floorP50),
          socketIoP99Ms: round(floorP99),
          recordP50Ms: round(quantile(records, 0.5)),
          recordP99Ms: round(quantile(records, 0.99)),
          recordsMeasured: records.length,
        },
      });
    });
    return rows;
  },
};
