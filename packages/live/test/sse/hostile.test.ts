// Hostile clients of the SSE transport over real sockets on 127.0.0.1 (spec §18.7), through both front ends of its one
// endpoint (node:http and Fetch): bad cursors and ids, malformed and huge bodies, slow bodies, floods, a paused reader
// on a large session, connection limits. Each case ends by checking that the server still serves a new stream. Waits
// are bounded by HANG_GUARD_MS.
import { Agent, request } from 'node:http';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import {
  expectSseServerUp,
  openStream,
  post,
  SSE_FRONT_ENDS,
  type SseServer,
  type StreamClient,
  sseServers,
  until,
} from './harness.js';

function leaksNothing(text: string, root: string): void {
  for (const secret of [root, hostname(), `pid ${process.pid}`, String(process.pid)])
    expect(text).not.toContain(secret);
}

/** Sends a POST whose body arrives as `chunks`, `gapMs` apart; resolves with the status, or the socket's error code. */
function chunkedPost(s: SseServer, chunks: number, chunk: Buffer, gapMs: number): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: s.port, path: '/sse?session=chat', method: 'POST' }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    void (async () => {
      for (let i = 0; i < chunks && !req.destroyed; i += 1) {
        if (!req.write(chunk)) await new Promise((drained) => req.once('drain', drained));
        if (gapMs > 0) await sleep(gapMs);
      }
      if (!req.destroyed) req.end();
    })();
  });
}

describe('sse transport over node:http and over Fetch (TJ-LIVE-064)', () => {
  describe.each(SSE_FRONT_ENDS)('%s front end', (frontEnd) => {
    const server = sseServers(frontEnd);

    describe('hostile streams (TJ-LIVE-053)', () => {
      it('refuses bad cursors, client ids and session ids with 4xx and a code, and keeps serving', async () => {
        const s = await server();
        const cases: Array<[Record<string, string>, Record<string, string>, number, string]> = [
          [{ session: 'chat', clientId: 'c' }, { 'Last-Event-ID': 'abc' }, 400, 'invalid_frame'],
          [{ session: 'chat', clientId: 'c' }, { 'Last-Event-ID': '-5' }, 400, 'invalid_frame'],
          [{ session: 'chat', clientId: 'c' }, { 'Last-Event-ID': '1e3' }, 400, 'invalid_frame'],
          [{ session: 'chat', clientId: 'c' }, { 'Last-Event-ID': '9'.repeat(40) }, 400, 'invalid_frame'],
          [{ session: 'chat', clientId: 'c', lastSeq: '1.5' }, {}, 400, 'invalid_frame'],
          [{ session: 'chat', clientId: 'c', lastSeq: 'x' }, {}, 400, 'invalid_frame'],
          [{ session: 'chat' }, {}, 400, 'invalid_frame'],
          [{ session: 'chat', clientId: 'x'.repeat(100_00) }, {}, 400, 'invalid_frame'],
          [{ session: 'chat', clientId: 'c', epoch: 'e'.repeat(1000) }, {}, 400, 'invalid_frame'],
          [{ session: '../../etc', clientId: 'c' }, {}, 400, 'unauthorized'],
          [{ session: '_turn_journal', clientId: 'c' }, {}, 400, 'unauthorized'],
          [{ clientId: 'c' }, {}, 401, 'unauthorized'],
        ];
        for (const [query, headers, status, code] of cases) {
          const stream = await openStream(s, query, headers);
          expect({ query: JSON.stringify(query).slice(0, 80), headers, status: stream.status }).toEqual({
            query: JSON.stringify(query).slice(0, 80),
            headers,
            status,
          });
          const body = await stream.body;
          expect(JSON.parse(body)).toMatchObject({ type: 'error', op: 'hello', code });
        }
        // Refused before anything was opened.
        expect(s.transport.connections).toBe(0);
        expect((await s.hub.session('chat')).subscriberCount).toBe(0);
        // A cursor ahead of the log is a stale client, not an attack: it gets the view.
        const ahead = await openStream(s, { session: 'chat', clientId: 'c' }, { 'Last-Event-ID': '1000000000' });
        expect(await ahead.waitFor((f) => f.type === 'snapshot' && f.mode !== 'resume', 'a snapshot')).toMatchObject({
          mode: 'ahead',
        });
        ahead.destroy();
        await expectSseServerUp(s);
      });

      it('refuses a stream beyond the connection limit (503) and beyond the per-session limit (429)', async () => {
        const s = await server({ transport: { maxConnections: 12, maxSubscribersPerSession: 5 } });
        const open: StreamClient[] = [];
        for (let i = 0; i < 5; i += 1) open.push(await openStream(s, { session: 'one', clientId: `c${i}` }));
        const sixth = await openStream(s, { session: 'one', clientId: 'c5' });
        expect(sixth.status).toBe(429);
        expect(JSON.parse(await sixth.body)).toMatchObject({ code: 'too_many_subscribers' });
        for (let i = 0; i < 7; i += 1) open.push(await openStream(s, { session: `s${i}`, clientId: 'c' }));
        await until(() => s.transport.connections === 12, 'twelve streams');
        const thirteenth = await openStream(s, { session: 'other', clientId: 'c' });
        expect(thirteenth.status).toBe(503);
        for (const stream of open) stream.destroy();
        await until(() => s.transport.connections === 0, 'every stream to close');
        await expectSseServerUp(s);
      });
    });

    describe('hostile POSTs (TJ-LIVE-051)', () => {
      it('answers malformed, unknown and refused frames with a status and a code, never a crash', async () => {
        const s = await server();
        const stream = await openStream(s, { session: 'chat', clientId: 'c' });
        await stream.waitFor((f) => f.type === 'live', 'live');
        const refusals: Array<[unknown, number, string]> = [
          ['not json', 400, 'invalid_frame'],
          ['[1,2]', 400, 'invalid_frame'],
          ['null', 400, 'invalid_frame'],
          ['', 400, 'invalid_frame'],
          [{ type: 'rm -rf', clientId: 'c' }, 400, 'invalid_frame'],
          [{ type: 'hello', clientId: 'c', lastSeq: null }, 400, 'invalid_frame'],
          [{ type: 'chat.send', requestId: 'r0', payload: { content: 'x' } }, 400, 'invalid_frame'],
          [
            { type: 'chat.send', requestId: 'r0', clientId: 'x'.repeat(129), payload: { content: 'x' } },
            400,
            'invalid_frame',
          ],
          [
            { type: 'chat.send', requestId: '../../etc/passwd', clientId: 'c', payload: { content: 'x' } },
            400,
            'invalid_request',
          ],
          [{ type: 'ack', requestId: 'nope', clientId: 'c' }, 404, 'unknown_run'],
          [{ type: 'chat.cancel', requestId: 'nope', clientId: 'c' }, 404, 'unknown_run'],
        ];
        for (const [body, status, code] of refusals) {
          const answer = await post(s, 'chat', body);
          expect({ body: JSON.stringify(body).slice(0, 60), status: answer.status, code: answer.body.code }).toEqual({
            body: JSON.stringify(body).slice(0, 60),
            status,
            code,
          });
          leaksNothing(JSON.stringify(answer.body), s.root);
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
        await stream.waitFor((f) => f.type === 'chat.done', 'chat.done');
        const conflict = await post(s, 'chat', {
          type: 'chat.send',
          requestId: 'r1',
          clientId: 'c',
          payload: { content: 'other' },
        });
        expect(conflict).toMatchObject({ status: 409, body: { code: 'request_id_conflict' } });
        expect(
          (await post(s, 'chat', { type: 'ack', requestId: 'r1', clientId: 'c', throughSeq: 1e12 })).body.code,
        ).toBe('ack_beyond_log');
        expect((await post(s, 'chat', { type: 'ack', requestId: 'r1', clientId: 'c', throughSeq: 0 })).body.code).toBe(
          'ack_before_finish',
        );
        expect((await post(s, 'chat', { type: 'chat.cancel', requestId: 'r1', clientId: 'c' })).status).toBe(409);
        const wrongMethod = await new Promise<number>((resolve, reject) => {
          const req = request({ host: '127.0.0.1', port: s.port, path: '/sse?session=chat', method: 'PUT' }, (r) => {
            r.resume();
            resolve(r.statusCode ?? 0);
          });
          req.on('error', reject);
          req.end();
        });
        expect(wrongMethod).toBe(405);
        expect(s.reported).toEqual([]);
        stream.destroy();
        await expectSseServerUp(s);
      });

      it('refuses a body larger than maxPayloadBytes with 413, declared (50 MB) or streamed, holding none of it', async () => {
        const s = await server({ transport: { maxPayloadBytes: 64 * 1024 } });
        const before = process.memoryUsage().rss;
        // Declared: answered before the body is read.
        const declared = await new Promise<number>((resolve, reject) => {
          const req = request(
            {
              host: '127.0.0.1',
              port: s.port,
              path: '/sse?session=chat',
              method: 'POST',
              headers: { 'Content-Length': String(50 * 1024 * 1024) },
            },
            (response) => {
              response.resume();
              resolve(response.statusCode ?? 0);
            },
          );
          req.on('error', reject);
          req.write(Buffer.alloc(1024, 0x20));
        });
        expect(declared).toBe(413);
        // Whole and small, but over the limit: answered with the code.
        const whole = await post(s, 'chat', {
          type: 'chat.send',
          requestId: 'r1',
          clientId: 'c',
          payload: { content: 'y'.repeat(70 * 1024) },
        });
        expect(whole).toMatchObject({ status: 413, body: { code: 'payload_too_large' } });
        // Streamed without a length: refused once it passes the limit; the client may see the 413 or a reset socket.
        const streamed = await chunkedPost(s, 800, Buffer.alloc(64 * 1024, 0x20), 0);
        expect([413, 'ECONNRESET', 'EPIPE']).toContain(streamed);
        const grown = process.memoryUsage().rss - before;
        console.info(`${frontEnd} huge bodies: RSS grew ${(grown / 2 ** 20).toFixed(1)} MiB`);
        expect(grown).toBeLessThan(32 * 1024 * 1024);
        await expectSseServerUp(s);
      });

      it('answers a body that does not arrive within bodyTimeoutMs with 408', async () => {
        const s = await server({ transport: { bodyTimeoutMs: 200 } });
        const slow = await chunkedPost(s, 50, Buffer.from(' '), 100);
        expect([408, 'ECONNRESET', 'EPIPE']).toContain(slow);
        await expectSseServerUp(s);
      });

      it('survives a flood of 3,000 POSTs, answering past maxPendingRequests with 429, memory bounded', async () => {
        // The first 16 POSTs are held in authorize for 100 ms once all 16 arrived, so that the limit is reached however
        // fast the rest is served.
        let held = 0;
        let open: Promise<void> | null = null;
        let opened = (): void => undefined;
        const gate = new Promise<void>((resolve) => {
          opened = resolve;
        });
        const s = await server({
          transport: {
            maxPendingRequests: 16,
            async authorize(request) {
              if (held < 16) {
                held += 1;
                if (held === 16) open = sleep(100).then(opened);
                await gate;
              }
              return new URL(request.url ?? '/', 'http://x').searchParams.get('session') ?? { status: 401 };
            },
          },
        });
        const session = await s.hub.session('chat');
        const sent = await session.send({ requestId: 'r1', content: 'x' });
        if (!sent.created) throw new Error('expected a new run');
        await sent.run.done();
        const agent = new Agent({ keepAlive: true, maxSockets: 64 });
        const before = process.memoryUsage().rss;
        const statuses = new Map<number, number>();
        const frames = Array.from({ length: 3000 }, (_, i) =>
          i % 3 === 0 ? 'garbage' : { type: 'ack', requestId: i % 3 === 1 ? 'r1' : `r${i}`, clientId: 'c' },
        );
        await Promise.all(
          frames.map(
            (frame) =>
              new Promise<void>((resolve, reject) => {
                const req = request(
                  { host: '127.0.0.1', port: s.port, path: '/sse?session=chat', method: 'POST', agent },
                  (response) => {
                    response.resume();
                    response.once('end', () => {
                      statuses.set(response.statusCode ?? 0, (statuses.get(response.statusCode ?? 0) ?? 0) + 1);
                      resolve();
                    });
                  },
                );
                req.on('error', reject);
                req.end(typeof frame === 'string' ? frame : JSON.stringify(frame));
              }),
          ),
        );
        agent.destroy();
        await open;
        const grown = process.memoryUsage().rss - before;
        console.info(
          `${frontEnd} flood: statuses ${JSON.stringify(Object.fromEntries(statuses))}, RSS grew ${(grown / 2 ** 20).toFixed(1)} MiB`,
        );
        expect([...statuses.keys()].every((status) => [200, 400, 404, 429].includes(status))).toBe(true);
        expect(statuses.get(429)).toBeGreaterThan(0);
        expect([...statuses.values()].reduce((a, b) => a + b, 0)).toBe(3000);
        expect(grown).toBeLessThan(128 * 1024 * 1024);
        expect(s.reported).toEqual([]);
        await expectSseServerUp(s);
      }, 60_000);
    });

    describe('slow readers (TJ-LIVE-050, TJ-LIVE-052)', () => {
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
          `${frontEnd} paused reader: ${head + 1} records (~51 MiB), server RSS grew ${(grown / 2 ** 20).toFixed(1)} MiB`,
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

      it('drops an idle stream that has not drained when a heartbeat falls due (TJ-LIVE-052)', async () => {
        const s = await server({ transport: { heartbeatMs: 50, slowClientMs: 300, maxBufferedBytes: 64 << 20 } });
        const session = await s.hub.session('wide');
        const sent = await session.send({ requestId: 'r1', content: 'wide' });
        if (!sent.created) throw new Error('expected a new run');
        // A view of about 10 MiB: more than the loopback socket's buffers take, so the response stays undrained.
        for (let i = 0; i < 40; i += 1)
          await sent.run.toolResult({ toolCallId: `c${i}`, output: 'w'.repeat(256 * 1024) });
        await sent.run.done();
        const paused = await openStream(s, { session: 'wide', clientId: 'c' });
        paused.response.pause();
        // No record follows the snapshot: only the heartbeat can notice that the peer stopped reading.
        await until(() => s.transport.connections === 0, 'the undrained idle stream to be dropped');
        paused.destroy();
        await expectSseServerUp(s);
      });
    });
  });
});
