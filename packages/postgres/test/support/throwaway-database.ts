// A throwaway PostgreSQL server for one test file: started before its tests, with an admin pool for looking at the
// tables behind the store's back, and every store the file opened closed before the server stops.
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import { openPostgresRecordStore, type PostgresRecordStore, type PostgresRecordStoreOptions } from '../../src/index.js';

/** The file's server, its admin pool, and `open`, which opens a store on it and closes it at the end of the file. */
export interface ThrowawayDatabase {
  readonly server: PostgresServer;
  readonly admin: pg.Pool;
  open(
    options: Pick<PostgresRecordStoreOptions, 'store' | 'setup' | 'maxLineBytes' | 'maxConcurrentCommits'>,
  ): PostgresRecordStore;
}

/** Registers the file's `beforeAll` and `afterAll`; read the members inside tests, once the server is up. */
export function useThrowawayDatabase(): ThrowawayDatabase {
  let server: PostgresServer | undefined;
  let admin: pg.Pool | undefined;
  const opened: PostgresRecordStore[] = [];
  beforeAll(() => {
    server = startPostgres();
    admin = new pg.Pool({ connectionString: server.connectionString, max: 2 });
  });
  afterAll(async () => {
    for (const store of opened) await store.close();
    await admin?.end();
    server?.stop();
  });
  const up = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the throwaway database is used before its beforeAll started it');
    return value;
  };
  return {
    get server() {
      return up(server);
    },
    get admin() {
      return up(admin);
    },
    open(options) {
      const store = openPostgresRecordStore({ connectionString: up(server).connectionString, ...options });
      opened.push(store);
      return store;
    },
  };
}
