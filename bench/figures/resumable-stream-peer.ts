/**
 * The peer of the AI SDK figure (issue 40): Vercel's `resumable-stream` on a local Redis, wired into a POST the way the
 * AI SDK's "Chatbot Resume Streams" page does it — `createUIMessageStreamResponse({ consumeSseStream })` hands a copy
 * of the SSE stream to `createNewResumableStream`, and the chat's active stream id is stored (a Redis SET here, where
 * the guide uses the app's database). Redis is Debian's `redis-server`, started by the bench (`startRedis`) with the
 * append-only file at `everysec`, the policy Redis uses when AOF is turned on. A peer that cannot start (no
 * redis-server, no package) is a {@link Peer} that says why, and its row is listed as skipped.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import type { Redis as RedisClient } from 'ioredis';
import type { Peer } from '../lib/peers.js';
import { startRedis } from '../lib/redis-server.js';

/** A running peer: a POST of the guide's shape over `stream`, and a stop that ends the clients and the server. */
export interface ResumableStreamPeer {
  /**
   * A POST for `chatId` whose answer is `stream`: its response; `created`, which resolves once the resumable stream
   * exists in Redis (a resume can find it); `settled`, once the stream has recorded its end there (what the guide
   * hands to `waitUntil`).
   */
  post(
    chatId: string,
    stream: ReadableStream<UIMessageChunk>,
  ): { response: Response; streamId: string; created: Promise<void>; settled: Promise<void> };
  /** The guide's GET: `resumeExistingStream` of a running stream, from its start (the SSE text). */
  resume(streamId: string): Promise<ReadableStream<string>>;
  stop(): Promise<void>;
}

function why(error: unknown): string {
  return error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
}

/** Starts Redis, connects a publisher and a subscriber, and creates the resumable-stream context over them. */
export async function startResumableStreamPeer(): Promise<Peer<ResumableStreamPeer>> {
  let modules: [typeof import('ioredis'), typeof import('resumable-stream/ioredis')];
  try {
    modules = await Promise.all([import('ioredis'), import('resumable-stream/ioredis')]);
  } catch (error) {
    return { ok: false, reason: `peer skipped: resumable-stream or ioredis is not installed: ${why(error)}` };
  }
  const [{ Redis }, { createResumableStreamContext }] = modules;
  let server: Awaited<ReturnType<typeof startRedis>>;
  try {
    server = await startRedis({ appendfsync: 'everysec' });
  } catch (error) {
    return { ok: false, reason: `peer skipped: ${why(error)}` };
  }
  const clients: RedisClient[] = [];
  const stop = async () => {
    await Promise.all(clients.map((client) => client.quit()));
    await server.stop();
  };
  try {
    const connect = async () => {
      const client = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 0 });
      clients.push(client);
      await client.connect();
      return client;
    };
    // Pub/sub takes a connection of its own; the publisher also does the GET/SET/INCR of the stream's sentinel.
    const publisher = await connect();
    const subscriber = await connect();
    // Its `exports` list no package.json: the manifest beside the resolved entry's `dist/`.
    const entry = createRequire(import.meta.url).resolve('resumable-stream/ioredis');
    const { version } = JSON.parse(await readFile(join(dirname(entry), '..', 'package.json'), 'utf8')) as {
      version: string;
    };
    const info = await publisher.info('server');
    const redisVersion = /redis_version:([\d.]+)/.exec(info)?.[1] ?? 'unknown version';
    let waiting: Promise<unknown>[] = [];
    const context = createResumableStreamContext({
      waitUntil: (promise) => {
        waiting.push(promise);
      },
      publisher,
      subscriber,
    });
    let stream = 0;
    return {
      ok: true,
      version: `resumable-stream ${version} on Redis ${redisVersion} (AOF everysec)`,
      value: {
        post(chatId, chunks) {
          stream += 1;
          const streamId = `stream-${stream}`;
          let consumed: Promise<void> | undefined;
          const response = createUIMessageStreamResponse({
            stream: chunks,
            consumeSseStream: ({ stream: sse }) => {
              consumed = (async () => {
                await context.createNewResumableStream(streamId, () => sse);
                await publisher.set(`chat:${chatId}:active-stream`, streamId);
              })();
            },
          });
          const created =
            consumed ?? Promise.reject(new Error('createUIMessageStreamResponse did not call consumeSseStream'));
          const settled = (async () => {
            await created;
            const pending = waiting;
            waiting = [];
            await Promise.all(pending);
          })();
          return { response, streamId, created, settled };
        },
        async resume(streamId) {
          const stream = await context.resumeExistingStream(streamId);
          if (stream === null || stream === undefined)
            throw new Error(`resumable-stream: stream ${streamId} is ${stream === null ? 'done' : 'unknown'}`);
          return stream;
        },
        stop,
      },
    };
  } catch (error) {
    await stop();
    return { ok: false, reason: `peer skipped: ${why(error)}` };
  }
}
