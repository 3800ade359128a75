import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { WebSocket } from 'ws';
import { round } from '../lib/stats.js';
import type { Figure, FigureRow } from '../lib/types.js';

const MiB = 1024 * 1024;
/** Longest wait for one step (connections opening, a cut-off): far above what each takes. */
const STEP_GUARD_MS = 120_000;

/** The server child (bench/child/live-memory-server.mjs) and its command channel. */
interface ServerChild {
  readonly port: number;
  readonly bigSeq: number;
  ask<T>(command: string): Promise<T>;
  stop(): Promise<void>;
}

async function startServer(root: string, dir: string, sessionBytes: number, subscribers: number): Promise<ServerChild> {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--expose-gc',
      join(root, 'bench', 'child', 'live-memory-server.mjs'),
      dir,
      String(sessionBytes),
      String(subscribers),
    ],
    { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const lines: string[] = [];
  let wake: (() => void) | null = null;
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
    lines.push(line);
    wake?.();
  });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const next = async <T>(): Promise<T> => {
    const started = performance.now();
    while (lines.length === 0) {
      if (child.exitCode !== null) throw new Error(`the memory server exited: ${stderr.slice(-800)}`);
      if (performance.now() - started > STEP_GUARD_MS) throw new Error('the memory server did not answer');
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 100);
      });
    }
    return JSON.parse(lines.shift() as string) as T;
  };
  const { port, bigSeq } = await next<{ port: number; bigSeq: number }>();
  return {
    port,
    bigSeq,
    async ask<T>(command: string): Promise<T> {
      child.stdin?.write(`${command}\n`);
      return next<T>();
    },
    async stop() {
      child.stdin?.end('exit\n');
      await exited;
    },
  };
}

interface Measure {
  readonly rss: number;
  readonly heapUsed: number;
  readonly ws: number;
  readonly sse: number;
}

/** An idle WebSocket subscriber of `session`, resolved once its replay reached the head (`live`). */
function idleWebSocket(port: number, session: string, clientId: string): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/ws?session=${session}`);
    socket.once('error', reject);
    socket.once('open', () => socket.send(JSON.stringify({ type: 'hello', clientId, lastSeq: null })));
    socket.on('message', (data) => {
      if ((JSON.parse(String(data)) as { type?: unknown }).type === 'live') resolve(() => socket.terminate());
    });
  });
}

/** An idle SSE subscriber of `session`, resolved once its `live` event arrived. */
function idleSse(port: number, session: string, clientId: string): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const get = request({ host: '127.0.0.1', port, path: `/sse?session=${session}&clientId=${clientId}` });
    get.once('error', reject);
    get.once('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes('"type":"live"')) {
          text = '';
          resolve(() => get.destroy());
        }
      });
    });
    get.end();
  });
}

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > STEP_GUARD_MS) throw new Error(`${what} did not happen`);
    await sleep(50);
  }
}

/** Server RSS and heap per idle connection: `count` subscribers of one session, opened in batches. */
async function perIdleConnection(
  server: ServerChild,
  transport: 'ws' | 'sse',
  count: number,
): Promise<{ rssBytes: number; heapBytes: number }> {
  const before = await server.ask<Measure>('measure');
  const closers: (() => void)[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = Array.from({ length: Math.min(50, count - i) }, (_, j) =>
      transport === 'ws' ? idleWebSocket(server.port, 'idle', `c${i + j}`) : idleSse(server.port, 'idle', `c${i + j}`),
    );
    closers.push(...(await Promise.all(batch)));
  }
  const after = await server.ask<Measure>('measure');
  if (after[transport] !== count) throw new Error(`${after[transport]} of ${count} ${transport} connections open`);
  for (const close of closers) close();
  await until(async () => (await server.ask<{ ws: number; sse: number }>('count'))[transport] === 0, 'the close');
  return { rssBytes: (after.rss - before.rss) / count, heapBytes: (after.heapUsed - before.heapUsed) / count };
}

/**
 * Peak server RSS over its baseline while one client that does not read replays the big session from the start,
 * until the server cut it off (slowClientMs, 10 s by default).
 */
async function pausedReader(server: ServerChild, transport: 'ws' | 'sse'): Promise<{ grownBytes: number; ms: number }> {
  await server.ask('sample');
  const started = performance.now();
  // The cut-off resets the connection under the paused client: that error, and no other, is expected.
  const unexpected: unknown[] = [];
  const onError = (error: NodeJS.ErrnoException): void => {
    if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') unexpected.push(error);
  };
  let stop: () => void;
  if (transport === 'ws') {
    const socket = new WebSocket(`ws://127.0.0.1:${server.port}/ws?session=big`);
    socket.on('error', onError);
    await new Promise<void>((resolve) => socket.once('open', () => resolve()));
    socket.send(JSON.stringify({ type: 'hello', clientId: 'paused', lastSeq: -1 }));
    socket.pause();
    stop = () => socket.terminate();
  } else {
    const get = request({ host: '127.0.0.1', port: server.port, path: '/sse?session=big&clientId=paused&lastSeq=-1' });
    get.on('error', onError);
    get.once('response', (response) => {
      response.on('error', onError);
      response.pause();
    });
    get.end();
    stop = () => get.destroy();
  }
  const open = async () => (await server.ask<{ ws: number; sse: number }>('count'))[transport];
  await until(async () => (await open()) === 1, 'the paused reader to connect');
  await until(async () => (await open()) === 0, 'the cut-off');
  const ms = performance.now() - started;
  const { baseline, peak } = await server.ask<{ baseline: number; peak: number }>('peak');
  stop();
  if (unexpected.length > 0)
    throw new Error(`the paused reader failed otherwise than by its cut-off: ${String(unexpected[0])}`);
  return { grownBytes: peak - baseline, ms };
}

/**
 * Server memory of the transports (issue 38): RSS and heap per idle connection over WebSocket and SSE (1,000
 * subscribers of one session), and the peak RSS a client that stops reading costs on a 100 MB session until it is cut
 * off (TJ-LIVE-040, TJ-LIVE-050: bounded by the drain wait, not by the session). The server runs in a child process
 * (`node --expose-gc`), measured after GC; the clients run here.
 */
export const liveMemory: Figure = {
  id: 'live-memory',
  title: 'server memory per idle WebSocket/SSE connection, and with a paused reader on a large session',
  async run(context): Promise<FigureRow[]> {
    const quick = context.mode === 'quick';
    const connections = quick ? 100 : 1000;
    // Quick: still larger than the loopback socket buffers take, so the drain wait, not the kernel, is measured.
    const sessionBytes = (quick ? 30 : 100) * 1000 * 1000;
    const scale = quick ? ' (quick mode: 100 connections, 30 MB session; full run: 1,000 and 100 MB)' : '';
    const server = await startServer(context.root, join(context.workDir, 'store'), sessionBytes, connections + 10);
    try {
      const idle: Record<'ws' | 'sse', { rssBytes: number; heapBytes: number }> = {
        ws: await perIdleConnection(server, 'ws', connections),
        sse: await perIdleConnection(server, 'sse', connections),
      };
      context.log(`  idle: ws ${JSON.stringify(idle.ws)}, sse ${JSON.stringify(idle.sse)}`);
      const paused = { ws: await pausedReader(server, 'ws'), sse: await pausedReader(server, 'sse') };
      context.log(`  paused: ws ${JSON.stringify(paused.ws)}, sse ${JSON.stringify(paused.sse)}`);
      const label = { ws: 'WebSocket', sse: 'SSE' } as const;
      const rows: FigureRow[] = [];
      for (const transport of ['ws', 'sse'] as const)
        rows.push({
          id: `live-memory-idle-${transport}`,
          name: `server RSS per idle ${label[transport]} connection, ${connections} subscribers of one session${scale}`,
          value: round(idle[transport].rssBytes / 1024, 3),
          unit: 'KiB',
          floor: null,
          ratio: null,
          direction: 'lower',
          target: 'none',
          met: null,
          status: 'info',
          note: `after GC; JS heap ${round(idle[transport].heapBytes / 1024, 3)} KiB per connection`,
          details: {
            connections,
            rssBytesPerConnection: idle[transport].rssBytes,
            heapBytesPerConnection: idle[transport].heapBytes,
          },
        });
      const boundMiB = 64;
      for (const transport of ['ws', 'sse'] as const) {
        const grownMiB = round(paused[transport].grownBytes / MiB, 3);
        rows.push({
          id: `live-memory-paused-${transport}`,
          name: `server RSS growth, one paused ${label[transport]} reader replaying a ${sessionBytes / 1e6} MB session${scale}`,
          value: grownMiB,
          unit: 'MiB',
          floor: null,
          ratio: null,
          direction: 'lower',
          target: `value <= ${boundMiB} MiB`,
          met: grownMiB <= boundMiB,
          status: 'measured',
          note: `peak over the baseline until the cut-off (${round(paused[transport].ms / 1000, 1)} s; slowClientMs 10 s, heartbeat 5 s); ${server.bigSeq + 1} records`,
          details: {
            sessionBytes,
            records: server.bigSeq + 1,
            grownBytes: paused[transport].grownBytes,
            cutOffMs: paused[transport].ms,
          },
        });
      }
      return rows;
    } finally {
      await server.stop();
    }
  },
};
