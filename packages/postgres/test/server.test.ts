// The tests' own PostgreSQL server (@turnjournal/test-support/postgres-server): started from Debian's binaries on a
// private socket, with the durability settings the store's guarantees assume.

import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';

let server: PostgresServer;
beforeAll(() => {
  server = startPostgres();
});
afterAll(() => server?.stop());

it('serves on its own socket only, with fsync and synchronous commit on', async () => {
  const client = new pg.Client({ connectionString: server.connectionString });
  await client.connect();
  try {
    const settings = await client.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'listen_addresses', 'unix_socket_directories') ORDER BY name",
    );
    expect(Object.fromEntries(settings.rows.map((row) => [row.name, row.setting]))).toEqual({
      fsync: 'on',
      listen_addresses: '',
      synchronous_commit: 'on',
      unix_socket_directories: server.socketDir,
    });
  } finally {
    await client.end();
  }
});
