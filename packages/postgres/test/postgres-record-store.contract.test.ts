// The record-store contract (spec §19) run against the PostgreSQL store, on a real server this file starts.

import { storePathSegments } from '@turnjournal/reader/store-format';
import { describeRecordStoreContract } from '@turnjournal/test-support';
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openPostgresRecordStore, type PostgresRecordStore } from '../src/index.js';

let server: PostgresServer;
let admin: pg.Pool;
beforeAll(() => {
  server = startPostgres();
  admin = new pg.Pool({ connectionString: server.connectionString, max: 2 });
});
afterAll(async () => {
  await admin?.end();
  server?.stop();
});

let stores = 0;
const checked = describeRecordStoreContract('postgres', async () => {
  // Each test has a store of its own in the one database: the tables are shared, the rows are not.
  const name = `contract-${++stores}`;
  const opened: PostgresRecordStore[] = [];
  return {
    open() {
      const store = openPostgresRecordStore({ connectionString: server.connectionString, store: name });
      opened.push(store);
      return store;
    },
    async takeOver(store, location) {
      // The owner paused past the point where its lock connection died (a partition, a killed backend): the
      // database frees its advisory lock, and the next owner opens the journal and bumps its epoch (TJ-STORE-008).
      const stream = storePathSegments(location).join('/');
      const { rows } = await admin.query<{ pid: number }>(
        `WITH k AS (SELECT hashtextextended($1, 0) AS key)
         SELECT pid FROM pg_locks, k WHERE locktype = 'advisory' AND granted AND objsubid = 1
            AND classid = ((k.key >> 32) & 4294967295)::oid AND objid = (k.key & 4294967295)::oid`,
        [`${name}/${stream}`],
      );
      expect(rows, 'the owner holds its advisory lock').toHaveLength(1);
      await admin.query('SELECT pg_terminate_backend($1, 5000)', [rows[0]?.pid]);
      return store.openJournal(location, { durability: 'group' });
    },
    async dispose() {
      for (const store of opened.splice(0)) await store.close();
    },
  };
});

it('checks every requirement of the seam (spec §19.1)', () => {
  expect([...checked].sort()).toEqual([
    'TJ-STORE-001',
    'TJ-STORE-002',
    'TJ-STORE-003',
    'TJ-STORE-004',
    'TJ-STORE-005',
    'TJ-STORE-006',
    'TJ-STORE-007',
    'TJ-STORE-008',
    'TJ-STORE-009',
  ]);
});
