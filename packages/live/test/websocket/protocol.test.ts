// The WebSocket transport's frame protocol over real sockets on 127.0.0.1 (spec §18.7).
import { hostname } from 'node:os';
import { WriterError } from '@turnjournal/writer';
import { afterEach, describe, expect, it } from 'vitest';
import { errorReply } from '../../src/transport/frames.js';
import { connect, errors, expectServerUp, startServer, type TestServer } from './harness.js';

const servers: TestServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function server(options: Parameters<typeof startServer>[0] = {}): Promise<TestServer> {
  const started = await startServer(options);
  servers.push(started);
  return started;
}

describe('websocket transport: a conversation', () => {
  it('serves a send made in the same tick as the hello, and streams the run (TJ-LIVE-039)', async () => {
    const s = await server();
    const client = await connect(s, 'chat');
    // No wait between the two: the transport registers its handler before it awaits anything.
    client.send({ type: 'hello', clientId: 'tab-1', lastSeq: null });
    client.send({ type: 'chat.send', requestId: 'r1', payload: { content: 'hi' } });
    await client.waitFor((f) => f.type === 'chat.done', 'chat.done');
    expect(client.frames.find((f) => f.type === 'chat.accepted')).toMatchObject({ requestId: 'r1', created: true });
    const assistant = client.frames.find(
      (f) => f.type === 'message_append' && (f.payload as { message: { role: string } }).message.role === 'assistant',
    );
    expect(assistant?.payload).toMatchObject({ message: { content: 'echo: hi' } });
    expect(errors(client)).toEqual([]);
  });

  it('refuses a second hello on one connection and never doubles its frames (TJ-LIVE-039)', async () => {
    const s = await server();
    const client = await connect(s, 'chat');
    client.send({ type: 'hello', clientId: 'tab-1', lastSeq: null });
    client.send({ type: 'hello', clientId: 'tab-1', lastSeq: null });
    client.send({ type: 'chat.send', requestId: 'r1', payload: { content: 'hi' } });
    await client.waitFor((f) => f.type === 'chat.done', 'chat.done');
    expect(errors(client).map((f) => f.code)).toEqual(['already_subscribed']);
    const seqs = client.frames.filter((f) => typeof f.seq === 'number').map((f) => f.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(client.frames.filter((f) => f.type === 'snapshot')).toHaveLength(1);
  });

  it('refuses a send while a run is active with run_active, and cancels a run by id', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const s = await server({
      transport: {
        async run({ run }) {
          await run.delta('thinking');
          await Promise.race([held, new Promise((resolve) => run.signal.addEventListener('abort', resolve))]);
          if (!run.signal.aborted) await run.done();
        },
      },
    });
    const client = await connect(s, 'chat');
    client.send({ type: 'hello', clientId: 'tab-1', lastSeq: null });
    client.send({ type: 'chat.send', requestId: 'r1', payload: { content: 'one' } });
    client.send({ type: 'chat.send', requestId: 'r2', payload: { content: 'two' } });
    const rejected = await client.waitFor((f) => f.type === 'chat.rejected', 'chat.rejected');
    expect(rejected).toMatchObject({ requestId: 'r2', code: 'run_active' });
    client.send({ type: 'chat.cancel', requestId: 'r1' });
    const cancelled = await client.waitFor((f) => f.type === 'chat.cancelled', 'chat.cancelled');
    expect(cancelled.payload).toEqual({ request_id: 'r1', reason: 'client_cancelled' });
    release();
    await expectServerUp(s);
  });

  it('sends a checkpoint without its payload, keeping its seq (TJ-LIVE-040)', async () => {
    const s = await server({ hub: { checkpointInterval: 2 } });
    const client = await connect(s, 'chat');
    client.send({ type: 'hello', clientId: 'tab-1', lastSeq: null });
    for (let i = 0; i < 4; i += 1) {
      client.send({ type: 'chat.send', requestId: `r${i}`, payload: { content: `message ${i}` } });
      await client.waitFor((f) => f.type === 'chat.done' && f.requestId === `r${i}`, `chat.done of r${i}`);
    }
    const checkpoints = client.frames.filter((f) => f.type === 'checkpoint');
    expect(checkpoints.length).toBeGreaterThan(0);
    for (const checkpoint of checkpoints) {
      expect(checkpoint.payload).toBeUndefined();
      expect(typeof checkpoint.seq).toBe('number');
    }
  });
});

describe('websocket transport: error replies (TJ-LIVE-038)', () => {
  it('answers a refused journal call by code, without server paths, host name or pid', () => {
    const error = new WriterError(
      'write_failed',
      'EIO writing /srv/store/s1/events.jsonl',
      '/srv/store/s1/events.jsonl',
    );
    const reply = errorReply(error);
    expect(reply.code).toBe('write_failed');
    for (const secret of ['/srv/store', hostname(), String(process.pid)]) expect(reply.message).not.toContain(secret);
    expect(errorReply(new Error(`at ${hostname()} pid ${process.pid}`))).toMatchObject({ code: 'internal' });
  });
});
