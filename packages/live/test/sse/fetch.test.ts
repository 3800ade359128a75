// The SSE transport over Fetch Request → Response (spec §18.7), behind a node:http bridge on 127.0.0.1 as a framework
// would run it: resume by Last-Event-ID, calls by POST, the same refusals and bounds as the node:http transport.
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { type FetchSseServer, startFetchSseServer } from './fetch-harness.js';
import { expectSseServerUp, HANG_GUARD_MS, openStream, post } from './harness.js';

const servers: FetchSseServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function server(options: Parameters<typeof startFetchSseServer>[0] = {}): Promise<FetchSseServer> {
  const started = await startFetchSseServer(options);
  servers.push(started);
  return started;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > HANG_GUARD_MS) throw new Error(`${what} did not happen`);
    await sleep(10);
  }
}

describe('fetch sse transport: a conversation (TJ-LIVE-064)', () => {
  it('streams records as events whose id is their seq, and a reconnect mid-run gets exactly the rest', async () => {
    let release = (): void => undefined;
    const halfway = new Promise<void>((resolve) => {
      release = resolve;
    });
    const s = await server({
      hub: { deltaFlushMs: 1 },
      transport: {
        async run({ run }) {
          for (let i = 0; i < 40; i += 1) {
            await run.delta(`t${i} `);
            if (i === 20) await halfway;
            else if (i % 5 === 0) await sleep(5);
          }
          await run.done();
        },
      },
    });
    const first = await openStream(s, { session: 'chat', clientId: 'tab-1' });
    expect(first.status).toBe(200);
    expect(first.response.headers['content-type']).toMatch(/^text\/event-stream/);
    await first.waitFor((f) => f.type === 'live', 'live');
    const sent = await post(s, 'chat', {
      type: 'chat.send',
      requestId: 'r1',
      clientId: 'tab-1',
      payload: { content: 'go' },
    });
    expect(sent).toMatchObject({ status: 200, body: { type: 'chat.accepted', requestId: 'r1', created: true } });
    await first.waitFor((f) => f.type === 'chat.delta', 'a delta');
    first.destroy();
    await first.ended;
    const cursor = first.lastEventId;
    expect(cursor).toBeDefined();
    for (const event of first.events.filter((e) => typeof e.frame.seq === 'number'))
      expect(event.id).toBe(String(event.frame.seq));
    // The client comes back while the run is still streaming.
    const second = await openStream(s, { session: 'chat', clientId: 'tab-1' }, { 'Last-Event-ID': String(cursor) });
    await second.waitFor((f) => f.type === 'snapshot', 'the resume');
    release();
    await second.waitFor((f) => f.type === 'chat.done', 'chat.done');
    expect(second.events[0]?.frame).toMatchObject({ type: 'snapshot', mode: 'resume', after: Number(cursor) });
    const session = await s.hub.session('chat');
    await until(() => session.activeRequestId === undefined, 'the run to end');
    await second.waitFor((f) => f.seq === session.durableSeq, 'the last record');
    expect([...first.seqs(), ...second.seqs()]).toEqual(Array.from({ length: session.durableSeq + 1 }, (_, i) => i));
    second.destroy();
    await until(() => s.transport.connections === 0, 'both streams to close');
  });

  it('answers calls by POST with the status and code of the node:http transport (TJ-LIVE-051)', async () => {
    const s = await server({ transport: { maxPayloadBytes: 1024 } });
    const cases: Array<[unknown, number, string]> = [
      ['not json', 400, 'invalid_frame'],
      [{ type: 'hello', clientId: 'c', lastSeq: null }, 400, 'invalid_frame'],
      [{ type: 'chat.send', requestId: 'r1', payload: { content: 'x' } }, 400, 'invalid_frame'],
      [{ type: 'chat.cancel', requestId: 'nope', clientId: 'c' }, 404, 'unknown_run'],
      [
        { type: 'chat.send', requestId: 'r1', clientId: 'c', payload: { content: 'y'.repeat(2000) } },
        413,
        'payload_too_large',
      ],
    ];
    for (const [body, status, code] of cases) {
      const answer = await post(s, 'chat', body).catch((error: unknown) => {
        throw new Error(`POST ${JSON.stringify(body).slice(0, 60)}: ${String(error)}`);
      });
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status, code });
      for (const secret of [s.root, hostname(), String(process.pid)])
        expect(JSON.stringify(answer.body)).not.toContain(secret);
    }
    const unauthorized = await post(s, '', { type: 'ack', requestId: 'r1', clientId: 'c' });
    expect(unauthorized).toMatchObject({ status: 400, body: { code: 'unauthorized' } });
    const sent = await post(s, 'chat', {
      type: 'chat.send',
      requestId: 'r1',
      clientId: 'c',
      payload: { content: 'hi' },
    });
    expect(sent).toMatchObject({ status: 200, body: { type: 'chat.accepted', created: true } });
    expect(s.reported).toEqual([]);
    await expectSseServerUp(s);
  });
});

describe('sse transport: a hub with every session busy (TJ-LIVE-065)', () => {
  it('tells a stream too_many_sessions as an error event and ends it, and serves it once there is room', async () => {
    const s = await server({ hub: { maxOpenSessions: 1 } });
    const first = await openStream(s, { session: 'a', clientId: 'c' });
    await first.waitFor((f) => f.type === 'live', 'live');
    const a = await s.hub.session('a');
    const second = await openStream(s, { session: 'b', clientId: 'c' });
    expect(await second.waitFor((f) => f.type === 'error', 'the refusal')).toMatchObject({
      op: 'hello',
      code: 'too_many_sessions',
    });
    await second.ended;
    expect(s.reported).toEqual([]);
    first.destroy();
    await until(() => s.transport.connections === 0, 'the first stream to close');
    await until(() => a.subscriberCount === 0, 'the subscriber to leave');
    const again = await openStream(s, { session: 'b', clientId: 'c' });
    await again.waitFor((f) => f.type === 'live', 'live');
    again.destroy();
  });
});

describe('fetch sse transport: hostile streams (TJ-LIVE-064)', () => {
  it('refuses bad cursors with 400 invalid_frame before opening anything, and keeps serving', async () => {
    const s = await server();
    for (const lastEventId of ['abc', '-5', '1e3', '9'.repeat(40), '1.5', '']) {
      const headers: Record<string, string> = lastEventId === '' ? {} : { 'Last-Event-ID': lastEventId };
      const query: Record<string, string> =
        lastEventId === '' ? { session: 'chat', clientId: 'c', lastSeq: 'x' } : { session: 'chat', clientId: 'c' };
      const stream = await openStream(s, query, headers);
      expect({ lastEventId, status: stream.status }).toEqual({ lastEventId, status: 400 });
      expect(JSON.parse(await stream.body)).toMatchObject({ type: 'error', op: 'hello', code: 'invalid_frame' });
    }
    const noClient = await openStream(s, { session: 'chat' });
    expect(noClient.status).toBe(400);
    const reserved = await openStream(s, { session: '_turn_journal', clientId: 'c' });
    expect(JSON.parse(await reserved.body)).toMatchObject({ code: 'unauthorized' });
    expect(s.transport.connections).toBe(0);
    expect((await s.hub.session('chat')).subscriberCount).toBe(0);
    await expectSseServerUp(s);
  });

  it('cuts off a paused reader of a large session, server memory bounded, and it resumes gap-free', async () => {
    const s = await server({
      hub: { ringRecords: 2, checkpointInterval: 1_000_000 },
      transport: { slowClientMs: 1000 },
    });
    const session = await s.hub.session('big');
    const sent = await session.send({ requestId: 'r1', content: 'big' });
    if (!sent.created) throw new Error('expected a new run');
    const output = 'o'.repeat(256 * 1024);
    // 100 results: 200 records of 256 KiB, about 51 MiB of log.
    for (let i = 0; i < 100; i += 1) await sent.run.toolResult({ toolCallId: `c${i}`, output });
    await sent.run.done();
    const head = session.durableSeq;

    const baseline = process.memoryUsage().rss;
    const paused = await openStream(s, { session: 'big', clientId: 'slow', lastSeq: '-1' });
    paused.response.pause();
    let peak = baseline;
    const sampling = performance.now();
    while (performance.now() - sampling < 3000) {
      peak = Math.max(peak, process.memoryUsage().rss);
      await sleep(25);
    }
    const grown = peak - baseline;
    console.info(
      `fetch paused reader: ${head + 1} records (~51 MiB), server RSS grew ${(grown / 2 ** 20).toFixed(1)} MiB`,
    );
    expect(grown).toBeLessThan(32 * 1024 * 1024);
    await until(() => s.transport.connections === 0, 'the paused reader to be cut off');
    paused.response.resume();
    await paused.ended;
    const received = paused.seqs();
    expect(received).toEqual(Array.from({ length: received.length }, (_, i) => i));
    expect(received.length).toBeLessThan(head + 1);

    const again = await openStream(
      s,
      { session: 'big', clientId: 'slow' },
      { 'Last-Event-ID': String(paused.lastEventId ?? -1) },
    );
    await again.waitFor((f) => f.seq === head, `seq ${head}`);
    expect([...received, ...again.seqs()]).toEqual(Array.from({ length: head + 1 }, (_, i) => i));
    again.destroy();
    await expectSseServerUp(s);
  }, 90_000);

  it('drops an idle stream whose body has not drained when a heartbeat falls due (TJ-LIVE-052)', async () => {
    const s = await server({ transport: { heartbeatMs: 50, slowClientMs: 300, maxBufferedBytes: 64 << 20 } });
    const session = await s.hub.session('wide');
    const sent = await session.send({ requestId: 'r1', content: 'wide' });
    if (!sent.created) throw new Error('expected a new run');
    for (let i = 0; i < 40; i += 1) await sent.run.toolResult({ toolCallId: `c${i}`, output: 'w'.repeat(256 * 1024) });
    await sent.run.done();
    const paused = await openStream(s, { session: 'wide', clientId: 'c' });
    paused.response.pause();
    await until(() => s.transport.connections === 0, 'the undrained idle stream to be dropped');
    paused.destroy();
    await expectSseServerUp(s);
  });
});
