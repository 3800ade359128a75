/**
 * The servers a team would otherwise keep resumable chat in (issue 39), started by the bench itself from Debian's
 * packages and reached with their usual Node clients: Redis (ioredis) with the append-only file on, and PostgreSQL
 * (node-postgres) with `synchronous_commit` on. A server that cannot start is a {@link Peer} that says why, so its
 * rows are listed as skipped with that reason and the run goes on.
 */

// The one import of the throwaway PostgreSQL server, shared with the PostgreSQL binding's tests.
import { startPostgres } from '@turnjournal/test-support/postgres-server';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { Peer } from './peers.js';
import { type RedisOptions, startRedis } from './redis-server.js';

/** A running Redis peer: its client and a stop that ends both. */
export interface RedisPeer {
  readonly client: Redis;
  /** Opens another connection to the same server (pub/sub needs its own). */
  connect(): Promise<Redis>;
  stop(): Promise<void>;
}

/** A running PostgreSQL peer: a connected client and a stop that ends it and the server. */
export interface PostgresPeer {
  readonly client: pg.Client;
  stop(): Promise<void>;
}

function why(error: unknown): string {
  return error instanceof Error ? (error.message.split('\n')[0] ?? error.message) : String(error);
}

/** Starts Redis with the given AOF sync policy and connects to it; a failure is the peer's reason, not thrown. */
export async function startRedisPeer(options: RedisOptions): Promise<Peer<RedisPeer>> {
  let server: Awaited<ReturnType<typeof startRedis>>;
  try {
    server = await startRedis(options);
  } catch (error) {
    return { ok: false, reason: `peer skipped: ${why(error)}` };
  }
  const clients: Redis[] = [];
  const connect = async () => {
    const client = new Redis({ host: server.host, port: server.port, lazyConnect: true, maxRetriesPerRequest: 0 });
    clients.push(client);
    await client.connect();
    return client;
  };
  try {
    const client = await connect();
    return {
      ok: true,
      version: `${server.version}, AOF appendfsync ${options.appendfsync}`,
      value: {
        client,
        connect,
        async stop() {
          await Promise.all(clients.map((c) => c.quit()));
          await server.stop();
        },
      },
    };
  } catch (error) {
    for (const c of clients) c.disconnect();
    await server.stop();
    return { ok: false, reason: `peer skipped: cannot connect to Redis: ${why(error)}` };
  }
}

/** Starts PostgreSQL (fsync and `synchronous_commit` on) and connects to it; a failure is the peer's reason. */
export async function startPostgresPeer(): Promise<Peer<PostgresPeer>> {
  let server: ReturnType<typeof startPostgres>;
  try {
    server = startPostgres();
  } catch (error) {
    return { ok: false, reason: `peer skipped: ${why(error)}` };
  }
  const client = new pg.Client({ connectionString: server.connectionString });
  try {
    await client.connect();
    const version =
      (await client.query<{ server_version: string }>('SHOW server_version')).rows[0]?.server_version ?? 'unknown';
    return {
      ok: true,
      version: `PostgreSQL ${version}, synchronous_commit on`,
      value: {
        client,
        async stop() {
          await client.end();
          server.stop();
        },
      },
    };
  } catch (error) {
    server.stop();
    return { ok: false, reason: `peer skipped: cannot connect to PostgreSQL: ${why(error)}` };
  }
}
