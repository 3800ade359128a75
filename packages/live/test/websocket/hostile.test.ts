// Hostile clients over real sockets on 127.0.0.1 (spec §18.7): malformed, binary and huge frames, floods, bad ids and
// cursors, a paused reader on a large session, dead peers and 1,000 connections. Each case ends by checking that the
// server still serves a new client. Waits are bounded by HANG_GUARD_MS, far above what each takes when quiet.
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import {
  clientOf,
  connect,
  errors,
  expectServerUp,
  HANG_GUARD_MS,
  startServer,
  type TestClient,
  type TestServer,
} from './harness.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function server(options: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
  const started = await startServer(options);
  servers.push(started);
  return started;
}

/** Resolves once `condition` holds, polling; rejects after the hang guard. */
async function until(condition: () => boolean, what: string): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > HANG_GUARD_MS) throw new Error(`${what} did not happen`);
    await sleep(10);
  }
}

/** Sends `frame` and resolves with the error frame it got (the n-th error of the client). */
async function refusal(client: TestClient, frame: unknown, binary = false): Promise<Record<string, unknown>> {
  const before = errors(client).length;
  if (binary) client.socket.send(Buffer.from([0, 1, 2, 3]), { binary: true });
  else client.send(frame);
  await until(() => errors(client).length > before, `an error reply to ${JSON.stringify(frame).slice(0, 60)}`);
  return errors(client)[before] as Record<string, unknown>;
}

function leaksNothing(frames: readonly Record<string, unknown>[], root: string): void {
  const text = JSON.stringify(frames.filter((f) => f.type === 'error' || f.type === 'chat.rejected'));
  for (const secret of [root, hostname(), `pid ${process.pid}`, String(process.pid)])
    expect(text).not.toContain(secret);
}

describe('hostile frames (TJ-LIVE-038)', () => {
  it('answers malformed, binary, unknown and out-of-bounds frames with an error code and keeps the connection', async () => {
    const s = await server();
    const client = await connect(s, 'chat');
    expect((await refusal(client, { type: 'chat.send', requestId: 'r0', payload: { content: 'x' } })).code).toBe(
      'hello_first',
    );
    expect((await refusal(client, 'not json')).code).toBe('invalid_frame');
    expect((await refusal(client, '[1,2]')).code).toBe('invalid_frame');
    expect((await refusal(client, 'null')).code).toBe('invalid_frame');
    expect((await refusal(client, null, true)).code).toBe('invalid_frame');
    expect((await refusal(client, { type: 'rm -rf' })).code).toBe('invalid_frame');
    expect((await refusal(client, { type: 'hello', clientId: 'x'.repeat(100_000), lastSeq: null })).code).toBe(
      'invalid_frame',
    );
    expect((await refusal(client, { type: 'hello', clientId: 'c', lastSeq: 'abc' })).code).toBe('invalid_frame');
    expect((await refusal(client, { type: 'hello', clientId: 'c', lastSeq: -7 })).code).toBe('invalid_frame');
    expect((await refusal(client, { type: 'hello', sessionId: 'other', clientId: 'c', lastSeq: null })).code).toBe(
      'forbidden_session',
    );
    client.send({ type: 'hello', clientId: 'c', lastSeq: null });
    client.send({ type: 'chat.send', requestId: 'r1', payload: { content: 'hi' } });
    await client.waitFor((f) => f.type === 'chat.done', 'chat.done');
    const rejected = await (async () => {
      client.send({ type: 'chat.send', requestId: '../../etc/passwd', payload: { content: 'x' } });
      return client.waitFor((f) => f.type === 'chat.rejected', 'chat.rejected');
    })();
    expect(rejected.code).toBe('invalid_request');
    expect((await refusal(client, { type: 'ack', requestId: 'r1', throughSeq: 1e12 })).code).toBe('ack_beyond_log');
    expect((await refusal(client, { type: 'ack', requestId: 'r1', throughSeq: 0 })).code).toBe('ack_before_finish');
    expect((await refusal(client, { type: 'ack', requestId: 'r1', throughSeq: 1.5 })).code).toBe('invalid_frame');
    expect((await refusal(client, { type: 'ack', requestId: 'nope' })).code).toBe('unknown_run');
    expect((await refusal(client, { type: 'chat.cancel', requestId: 'r1' })).code).toBe('run_not_active');
    expect(client.socket.readyState).toBe(WebSocket.OPEN);
    leaksNothing(client.frames, s.root);
    await expectServerUp(s);
  });

  it('answers an ahead cursor with a snapshot, and refuses bad and reserved session ids at the upgrade', async () => {
    const s = await server();
    const client = await connect(s, 'chat');
    client.send({ type: 'hello', clientId: 'c', lastSeq: 1_000_000_000 });
    const snapshot = await client.waitFor((f) => f.type === 'snapshot' && f.mode !== 'resume', 'a snapshot');
    expect(snapshot.mode).toBe('ahead');
    for (const [session, status] of [
      ['../../etc', 400],
      ['_turn_journal', 400],
      ['sessions', 400],
      ['a'.repeat(200), 400],
    ] as const)
      await expect(connect(s, session)).rejects.toMatchObject({ status });
    const anonymous = new WebSocket(s.url);
    anonymous.on('error', () => undefined);
    const status = await new Promise((resolve) =>
      anonymous.once('unexpected-response', (_q, r) => resolve(r.statusCode)),
    );
    expect(status).toBe(401);
    await expectServerUp(s);
  });

  it('closes a connection whose frame is larger than maxPayload (1009), 50 MB included', async () => {
    const s = await server({ transport: { maxPayloadBytes: 64 * 1024 } });
    for (const size of [65 * 1024, 50 * 1024 * 1024]) {
      const client = await connect(s, 'chat');
      client.send({ type: 'hello', clientId: 'c', lastSeq: null });
      await client.waitFor((f) => f.type === 'live', 'live');
      client.send({ type: 'chat.send', requestId: 'big', payload: { content: 'x'.repeat(size) } });
      expect((await client.closed).code).toBe(1009);
    }
    await expectServerUp(s);
  });

  it('survives a flood of 20,000 frames from one client, memory bounded', async () => {
    const s = await server();
    const client = await connect(s, 'chat');
    client.send({ type: 'hello', clientId: 'c', lastSeq: null });
    await client.waitFor((f) => f.type === 'live', 'live');
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 20_000; i += 1) {
      client.send(i % 3 === 0 ? 'garbage' : { type: 'ack', requestId: `r${i}`, throughSeq: i });
    }
    // Answered frame by frame, or cut off for not reading the answers: never queued without bound.
    await until(
      () => client.socket.readyState === WebSocket.CLOSED || errors(client).length >= 20_000,
      'the flood to be answered',
    );
    const grown = process.memoryUsage().rss - before;
    // Every frame answered (most with too_many_requests), nothing kept per frame: growth is garbage, not state.
    expect(grown).toBeLessThan(128 * 1024 * 1024);
    for (const code of new Set(errors(client).map((f) => f.code)))
      expect(['invalid_frame', 'unknown_run', 'too_many_requests']).toContain(code);
    console.info(`flood: ${errors(client).length} error replies, RSS grew ${(grown / 2 ** 20).toFixed(1)} MiB`);
    await expectServerUp(s);
  }, 60_000);
});

describe('slow and dead clients (TJ-LIVE-040)', () => {
  it('cuts off a paused reader of a large session with its cursor, server memory bounded', async () => {
    const s = await server({
      hub: { ringRecords: 2, checkpointInterval: 1_000_000 },
      transport: { highWaterBytes: 256 * 1024, slowClientMs: 1000 },
    });
    const session = await s.hub.session('big');
    const sent = await session.send({ requestId: 'r1', content: 'big' });
    if (!sent.created) throw new Error('expected a new run');
    const output = 'o'.repeat(256 * 1024);
    // 100 results: 200 records of 256 KiB, about 51 MiB of log.
    for (let i = 0; i < 100; i += 1) await sent.run.toolResult({ toolCallId: `c${i}`, output });
    await sent.run.done();
    const head = session.durableSeq;

    const client = await connect(s, 'big');
    client.socket.pause();
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    client.send({ type: 'hello', clientId: 'slow', lastSeq: -1 });
    const sampling = performance.now();
    while (performance.now() - sampling < 3000) {
      peak = Math.max(peak, process.memoryUsage().rss);
      await sleep(25);
    }
    const grown = peak - baseline;
    console.info(
      `paused reader: session ${head + 1} records (~51 MiB), server RSS grew ${(grown / 2 ** 20).toFixed(1)} MiB`,
    );
    expect(grown).toBeLessThan(32 * 1024 * 1024);
    client.socket.resume();
    const closed = await client.closed;
    expect(closed.code).toBe(4008);
    const cursor = Number(/resume after seq (-?\d+)/.exec(closed.reason)?.[1]);
    const seqs = client.frames.filter((f) => typeof f.seq === 'number').map((f) => f.seq as number);
    // Every record up to the cursor, none after, so a reconnect with lastSeq = cursor misses and repeats nothing.
    expect(seqs).toEqual(Array.from({ length: cursor + 1 }, (_, i) => i));
    expect(cursor).toBeLessThan(head);

    // The client resumes from its cursor and receives the rest.
    const again = await connect(s, 'big');
    again.send({ type: 'hello', clientId: 'slow', lastSeq: cursor });
    await again.waitFor((f) => f.seq === head, `seq ${head}`);
    expect(again.frames.filter((f) => typeof f.seq === 'number')[0]?.seq).toBe(cursor + 1);
    again.close();
    await expectServerUp(s);
  }, 90_000);

  it('drops a peer that answers no ping within the heartbeat', async () => {
    const s = await server({ transport: { heartbeatMs: 100 } });
    const client = await connect(s, 'chat');
    client.send({ type: 'hello', clientId: 'c', lastSeq: null });
    await client.waitFor((f) => f.type === 'live', 'live');
    expect(s.transport.connections).toBe(1);
    client.socket.pause();
    await until(() => s.transport.connections === 0, 'the dead peer to be dropped');
    client.socket.terminate();
    await expectServerUp(s);
  });
});

describe('many connections (TJ-LIVE-040)', () => {
  it('serves 1,000 connections, refuses the 1,001st with 503 and subscribers past the per-session limit', async () => {
    const s = await server({ transport: { maxConnections: 1000, maxSubscribersPerSession: 100 } });
    const clients: TestClient[] = [];
    for (let batch = 0; batch < 10; batch += 1) {
      const opened = await Promise.all(
        Array.from({ length: 100 }, () => clientOf(new WebSocket(`${s.url}?session=s${batch}`))),
      );
      for (const client of opened) client.send({ type: 'hello', clientId: 'c', lastSeq: null });
      await Promise.all(opened.map((client) => client.waitFor((f) => f.type === 'live', 'live')));
      clients.push(...opened);
    }
    expect(s.transport.connections).toBe(1000);
    await expect(connect(s, 's0')).rejects.toMatchObject({ status: 503 });
    // Free one slot: the 101st subscriber of s0 is refused, the connection itself stays.
    clients[999]?.close();
    await until(() => s.transport.connections === 999, 'a connection to close');
    const extra = await connect(s, 's0');
    expect((await refusal(extra, { type: 'hello', clientId: 'c', lastSeq: null })).code).toBe('too_many_subscribers');
    extra.close();
    for (const client of clients) client.socket.terminate();
    await until(() => s.transport.connections === 0, 'every connection to close');
    await expectServerUp(s);
  }, 120_000);
});
