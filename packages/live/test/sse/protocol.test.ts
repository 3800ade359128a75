// The SSE transport over real sockets on 127.0.0.1 (spec §18.7), through both front ends of its one endpoint
// (node:http and Fetch): a conversation, resume by Last-Event-ID, calls by POST, heartbeats, a hub with no room.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { expectSseServerUp, openStream, post, SSE_FRONT_ENDS, sseServers, until } from './harness.js';

describe('sse transport over node:http and over Fetch (TJ-LIVE-064)', () => {
  describe.each(SSE_FRONT_ENDS)('%s front end', (frontEnd) => {
    const server = sseServers(frontEnd);

    describe('a conversation', () => {
      it('streams the view, then every record as an event whose id is its seq (TJ-LIVE-050)', async () => {
        const s = await server();
        const stream = await openStream(s, { session: 'chat', clientId: 'tab-1' });
        expect(stream.status).toBe(200);
        expect(stream.response.headers['content-type']).toMatch(/^text\/event-stream/);
        await stream.waitFor((f) => f.type === 'live', 'live');
        const sent = await post(s, 'chat', {
          type: 'chat.send',
          requestId: 'r1',
          clientId: 'tab-1',
          payload: { content: 'hi' },
        });
        expect(sent).toMatchObject({ status: 200, body: { type: 'chat.accepted', requestId: 'r1', created: true } });
        await stream.waitFor((f) => f.type === 'chat.done', 'chat.done');
        const records = stream.events.filter((e) => typeof e.frame.seq === 'number');
        expect(records.length).toBeGreaterThan(2);
        for (const event of records) expect(event.id).toBe(String(event.frame.seq));
        const assistant = records.find(
          (e) =>
            e.frame.type === 'message_append' &&
            (e.frame.payload as { message: { role: string } }).message.role === 'assistant',
        );
        expect(assistant?.frame.payload).toMatchObject({ message: { content: 'echo: hi' } });
        // The full snapshot carries the cursor it is consistent with, so a reconnect right after it resumes from there.
        expect(stream.events[0]).toMatchObject({ id: '-1', frame: { type: 'snapshot', mode: 'full' } });
        stream.destroy();
      });

      it.each(['after the run ended', 'while the run still streams'] as const)(
        'resumes from Last-Event-ID after a disconnect mid-run, back %s, with no gap and no duplicate (TJ-LIVE-050)',
        async (back) => {
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
          await first.waitFor((f) => f.type === 'live', 'live');
          await post(s, 'chat', { type: 'chat.send', requestId: 'r1', clientId: 'tab-1', payload: { content: 'go' } });
          await first.waitFor((f) => f.type === 'chat.delta', 'a delta');
          first.destroy();
          await first.ended;
          const cursor = first.lastEventId;
          expect(cursor).toBeDefined();
          const session = await s.hub.session('chat');
          if (back === 'after the run ended') {
            // The run goes on while the client is away.
            release();
            await until(() => session.activeRequestId === undefined, 'the run to end');
          }
          const second = await openStream(
            s,
            { session: 'chat', clientId: 'tab-1' },
            { 'Last-Event-ID': String(cursor) },
          );
          if (back === 'while the run still streams') {
            await second.waitFor((f) => f.type === 'snapshot', 'the resume');
            release();
          }
          await second.waitFor((f) => f.type === 'chat.done', 'chat.done');
          expect(second.events[0]?.frame).toMatchObject({ type: 'snapshot', mode: 'resume', after: Number(cursor) });
          await until(() => session.activeRequestId === undefined, 'the run to end');
          await second.waitFor((f) => f.seq === session.durableSeq, 'the last record');
          const seqs = [...first.seqs(), ...second.seqs()];
          expect(seqs).toEqual(Array.from({ length: session.durableSeq + 1 }, (_, i) => i));
          second.destroy();
          await until(() => s.transport.connections === 0, 'both streams to close');
        },
      );

      it('starts from ?lastSeq= on a first connect, and a Last-Event-ID header wins over it (TJ-LIVE-050)', async () => {
        const s = await server();
        const session = await s.hub.session('chat');
        for (const requestId of ['r1', 'r2']) {
          const sent = await session.send({ requestId, content: requestId });
          if (!sent.created) throw new Error('expected a new run');
          await sent.run.done();
        }
        const head = session.durableSeq;
        const byQuery = await openStream(s, { session: 'chat', clientId: 'c', lastSeq: '2' });
        await byQuery.waitFor((f) => f.type === 'live', 'live');
        expect(byQuery.seqs()).toEqual(Array.from({ length: head - 2 }, (_, i) => i + 3));
        const byHeader = await openStream(
          s,
          { session: 'chat', clientId: 'c', lastSeq: '0' },
          { 'Last-Event-ID': '4' },
        );
        await byHeader.waitFor((f) => f.type === 'live', 'live');
        expect(byHeader.seqs()).toEqual(Array.from({ length: head - 4 }, (_, i) => i + 5));
        byQuery.destroy();
        byHeader.destroy();
      });

      it('cancels a run and acknowledges one by POST, answering each (TJ-LIVE-051)', async () => {
        const s = await server({
          transport: {
            async run({ run }) {
              await run.delta('thinking');
              await new Promise((resolve) => run.signal.addEventListener('abort', resolve));
            },
          },
        });
        const stream = await openStream(s, { session: 'chat', clientId: 'tab-1' });
        await stream.waitFor((f) => f.type === 'live', 'live');
        await post(s, 'chat', { type: 'chat.send', requestId: 'r1', clientId: 'tab-1', payload: { content: 'x' } });
        const busy = await post(s, 'chat', {
          type: 'chat.send',
          requestId: 'r2',
          clientId: 'tab-1',
          payload: { content: 'y' },
        });
        expect(busy).toMatchObject({
          status: 409,
          body: { type: 'chat.rejected', requestId: 'r2', code: 'run_active' },
        });
        const cancelled = await post(s, 'chat', { type: 'chat.cancel', requestId: 'r1', clientId: 'tab-1' });
        expect(cancelled).toEqual({ status: 200, body: { type: 'ok', op: 'chat.cancel', requestId: 'r1' } });
        const record = await stream.waitFor((f) => f.type === 'chat.cancelled', 'chat.cancelled');
        const acked = await post(s, 'chat', {
          type: 'ack',
          requestId: 'r1',
          clientId: 'tab-1',
          throughSeq: record.seq,
        });
        expect(acked).toEqual({ status: 200, body: { type: 'ok', op: 'ack', requestId: 'r1' } });
        const session = await s.hub.session('chat');
        expect(session.runInfo('r1')?.acked).toBe(true);
        expect(session.snapshot({ clientId: 'tab-1' }).undelivered).toEqual([]);
        stream.destroy();
      });

      it('sends heartbeat comments on an idle stream (TJ-LIVE-052)', async () => {
        const s = await server({ transport: { heartbeatMs: 50 } });
        const stream = await openStream(s, { session: 'chat', clientId: 'c' });
        await stream.waitFor((f) => f.type === 'live', 'live');
        const started = performance.now();
        while (stream.comments.length < 2 && performance.now() - started < 20_000) await sleep(20);
        expect(stream.comments.length).toBeGreaterThanOrEqual(2);
        stream.destroy();
        await expectSseServerUp(s);
      });

      it('ends its streams on close, and answers later requests 503', async () => {
        const s = await server();
        const stream = await openStream(s, { session: 'chat', clientId: 'c' });
        await stream.waitFor((f) => f.type === 'live', 'live');
        await s.transport.close();
        await stream.ended;
        expect(s.transport.connections).toBe(0);
        const refused = await openStream(s, { session: 'chat', clientId: 'c' });
        expect(refused.status).toBe(503);
      });
    });

    describe('tokens (TJ-LIVE-060)', () => {
      it('sends each token at once as an event without id, ahead of its records, in segments mode', async () => {
        let release = (): void => undefined;
        const held = new Promise<void>((resolve) => {
          release = resolve;
        });
        const s = await server({
          // Nothing is synced on a timer: only the tokens can bring the text before the end.
          hub: { tokens: 'segments', deltaFlushMs: 600_000 },
          transport: {
            async run({ run }) {
              await run.delta('one ');
              await sleep(20);
              await run.delta('two');
              await held;
              await run.done();
            },
          },
        });
        const stream = await openStream(s, { session: 'chat', clientId: 'tab-1' });
        await stream.waitFor((f) => f.type === 'live', 'live');
        await post(s, 'chat', { type: 'chat.send', requestId: 'r1', clientId: 'tab-1', payload: { content: 'hi' } });
        await stream.waitFor(
          () =>
            stream.events
              .filter((e) => e.frame.type === 'token')
              .map((e) => e.frame.text)
              .join('') === 'one two',
          'both tokens',
        );
        const tokens = stream.events.filter((e) => e.frame.type === 'token');
        expect(tokens.map((e) => e.frame)).toEqual([
          { type: 'token', requestId: 'r1', messageId: 'r1.a1', offset: 0, text: 'one ' },
          { type: 'token', requestId: 'r1', messageId: 'r1.a1', offset: 4, text: 'two' },
        ]);
        // A token moves no cursor: no id, so a reconnect's Last-Event-ID stays the last record's seq.
        for (const event of tokens) expect(event.id).toBeUndefined();
        // No record of the text yet (segments mode writes none before a boundary).
        expect(stream.events.some((e) => e.frame.type === 'chat.delta')).toBe(false);
        release();
        await stream.waitFor((f) => f.type === 'chat.done', 'chat.done');
        stream.destroy();
      });
    });

    describe('a hub with every session busy (TJ-LIVE-065)', () => {
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
  });
});
