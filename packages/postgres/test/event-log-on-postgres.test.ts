// The event-log writer on the PostgreSQL store (spec §19): the same lines byte for byte as on a file, and the same
// state recovered on reopen, from a real server this file starts.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { converseThreeRuns, openScriptedLog, SCRIPT_START } from '@turnjournal/test-support';
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import { openFileRecordStore } from '@turnjournal/writer/file-store';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresRecordStore } from '../src/index.js';

let server: PostgresServer;
beforeAll(() => {
  server = startPostgres();
});
afterAll(() => server?.stop());

describe('an event log opened through the PostgreSQL store (spec §19)', () => {
  it('writes byte for byte the lines it writes to a file, and recovers the same state on reopen', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-pg-eventlog-'));
    const postgres = openPostgresRecordStore({ connectionString: server.connectionString, store: 'eventlog' });
    const stores = { file: openFileRecordStore({ root }), postgres };
    const states: Record<string, unknown> = {};
    try {
      for (const [name, store] of Object.entries(stores)) {
        const clock = { now: SCRIPT_START };
        const log = await openScriptedLog(store, clock);
        await converseThreeRuns(log);
        const before = { snapshot: log.snapshot(), runs: [...log.runs().values()] };
        await log.close();
        const reopened = await openScriptedLog(store, clock);
        expect({ snapshot: reopened.snapshot(), runs: [...reopened.runs().values()] }, name).toEqual(before);
        const next = await reopened.appendMessage({ role: 'user', content: 'after the reopen', id: 'late' });
        expect(next.seq, `${name}: the next seq follows the last record`).toBe((before.snapshot.lastSeq ?? -1) + 1);
        await reopened.close();
        states[name] = before;
      }
    } finally {
      await postgres.close();
    }
    expect(states.postgres).toEqual(states.file);
    const fileLines = readFileSync(join(root, 's1', 'events.jsonl'), 'utf8');
    // The rows as the database holds them, read with SQL rather than through the store under test.
    const db = new pg.Client({ connectionString: server.connectionString });
    await db.connect();
    try {
      const { rows } = await db.query<{ line: Buffer; start: string; seq: string | null; type: string | null }>(
        `SELECT line, start, seq, type FROM turnjournal_lines
          WHERE store = 'eventlog' AND stream = 's1/events.jsonl' ORDER BY position`,
      );
      expect(Buffer.concat(rows.map((row) => row.line)).toString('utf8')).toBe(fileLines);
      let cursor = 0;
      for (const row of rows) {
        expect(Number(row.start), 'each row starts where the lines before it end').toBe(cursor);
        cursor += row.line.length;
        const value = JSON.parse(row.line.toString('utf8')) as { seq: number; type: string };
        expect([row.seq === null ? null : Number(row.seq), row.type]).toEqual([value.seq, value.type]);
      }
    } finally {
      await db.end();
    }
    expect(fileLines.split('\n').filter((line) => line.includes('"type":"checkpoint"')).length).toBeGreaterThan(2);
  });
});
