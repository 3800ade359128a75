// Two real processes ("hosts") on one database: one owns a session and appends, the other follows it through the
// store's reader and channel only — what app servers behind a load balancer do (issue 36).
import type { JournalItem } from '@turnjournal/reader';
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresRecordStore } from '../src/index.js';
import { startHost as host, killHosts, WAIT_MS } from './support/host-process.js';

let server: PostgresServer;
beforeAll(() => {
  server = startPostgres();
});
afterAll(() => {
  killHosts();
  server?.stop();
});

/** The event log's rows of `sessionId`, read with SQL rather than through the store under test. */
async function rows(store: string, sessionId: string): Promise<{ seq: number | null; line: string }[]> {
  const db = new pg.Client({ connectionString: server.connectionString });
  await db.connect();
  try {
    const result = await db.query<{ seq: string | null; line: Buffer }>(
      'SELECT seq, line FROM turnjournal_lines WHERE store = $1 AND stream = $2 ORDER BY position',
      [store, `${sessionId}/events.jsonl`],
    );
    return result.rows.map((row) => ({ seq: row.seq === null ? null : Number(row.seq), line: row.line.toString() }));
  } finally {
    await db.end();
  }
}

describe('two hosts on one database', () => {
  it("a follower host delivers exactly the owner host's durable records, in order, each readable once announced", async () => {
    const count = 200;
    const follower = host('follower-host.mjs', [server.connectionString, 'hosts', 's1', String(count - 1)]);
    await follower.until('it listens', (line) => line === 'listening');
    const owner = host('owner-host.mjs', [server.connectionString, 'hosts', 's1', String(count)]);
    await owner.until('the owner is done', (line) => line === 'done');
    await follower.until('the follower is done', (line) => line === 'done');
    const acked = owner.lines.filter((line) => line.startsWith('ack ')).map((line) => Number(line.slice(4)));
    expect(acked).toHaveLength(count);
    const delivered = follower.lines
      .filter((line) => line.startsWith('record '))
      .map((line) => {
        const [, seq, ...rest] = line.split(' ');
        return { seq: Number(seq), line: `${rest.join(' ')}\n` };
      });
    // Seqs the owner did not acknowledge itself are its automatic checkpoints.
    const last = delivered.at(-1)?.seq ?? -1;
    expect(last).toBeGreaterThanOrEqual(count - 1);
    expect(delivered).toEqual((await rows('hosts', 's1')).filter((row) => row.seq !== null && row.seq <= last));
    const seqs = new Set(delivered.map((record) => record.seq));
    expect(acked.filter((seq) => seq <= last && !seqs.has(seq))).toEqual([]);
    expect(
      follower.lines.filter((line) => line.startsWith('heard ')).length,
      'the follower was told of announcements, not only of its start',
    ).toBeGreaterThan(0);
  });

  it('a host killed mid-stream loses no acknowledged record, and the next host takes the session over', async () => {
    const owner = host('owner-host.mjs', [server.connectionString, 'killed', 's1', '100000']);
    await owner.until('40 acknowledgements', (line) => line === 'ack 39');
    owner.child.kill('SIGKILL');
    await new Promise((resolve) => owner.child.once('exit', resolve));
    const acked = owner.lines.filter((line) => line.startsWith('ack ')).map((line) => Number(line.slice(4)));
    const store = openPostgresRecordStore({ connectionString: server.connectionString, store: 'killed' });
    try {
      // The killed host's lock is freed once the server notices its connection is gone.
      const deadline = Date.now() + WAIT_MS;
      while (await store.ownerHeld({ family: 'event', sessionId: 's1' })) {
        if (Date.now() > deadline) throw new Error('the killed host still holds the journal');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const journal = await store.openJournal({ family: 'event', sessionId: 's1' }, { durability: 'group' });
      const items: JournalItem[] = [];
      for await (const batch of journal.reader().records()) items.push(...batch);
      const seqs = items.map((item) => (item.kind === 'record' ? item.record.value.seq : item.finding.code));
      expect(seqs, 'every line is a record, seqs 0, 1, … without a gap').toEqual(seqs.map((_, i) => i));
      expect(seqs.length, 'every acknowledged record is there').toBeGreaterThanOrEqual((acked.at(-1) as number) + 1);
      await journal.close();
    } finally {
      await store.close();
    }
  });
});
