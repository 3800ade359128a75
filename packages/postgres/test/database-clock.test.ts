// TJ-STORE-026: hosts sharing a PostgreSQL store stamp and age records by the database's clock, not their own. A host
// whose clock is 30 days ahead (Date.now made so in this process) compacts a log another host wrote: by its own clock
// every run would be weeks old and its delivery expired; by the database's, nothing is.

import { openConversationHub } from '@turnjournal/live';
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import { openEventLog } from '@turnjournal/writer';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openPostgresRecordStore, type PostgresRecordStore } from '../src/index.js';

let server: PostgresServer;
const opened: PostgresRecordStore[] = [];
beforeAll(() => {
  server = startPostgres();
});
afterEach(() => {
  vi.restoreAllMocks();
});
afterAll(async () => {
  for (const store of opened) await store.close();
  server?.stop();
});

const DAY_MS = 24 * 3600 * 1000;
const open = () => {
  const store = openPostgresRecordStore({ connectionString: server.connectionString, store: 'clock' });
  opened.push(store);
  return store;
};
/** Makes this process's wall clock `skew` ms off from here on (the monotonic clock is left alone). */
function skewHostClock(skew: number): void {
  const real = Date.now.bind(Date);
  vi.spyOn(Date, 'now').mockImplementation(() => real() + skew);
}

describe("TJ-STORE-026: the database's clock", () => {
  it('is read once the store is used, and refuses to guess before', async () => {
    const store = open();
    expect(() => store.clock()).toThrow(/has not been read yet/);
    await store.setup();
    const server = await store.databaseNow();
    const estimate = store.clock();
    expect(Math.abs(estimate - server), 'the estimate is the server’s time, give or take a round trip').toBeLessThan(
      5_000,
    );
  });

  it('follows the server, not a host clock that is 30 days ahead, and never goes back', async () => {
    const store = open();
    skewHostClock(30 * DAY_MS);
    await store.setup();
    const first = store.clock();
    expect(Math.abs(first - (await store.databaseNow()))).toBeLessThan(5_000);
    expect(Date.now() - first, 'the host clock is 30 days ahead of it').toBeGreaterThan(29 * DAY_MS);
    vi.restoreAllMocks();
    // The host's clock steps 31 days back: until the next measurement the estimate would follow it back, and holds.
    skewHostClock(-DAY_MS);
    expect(store.clock()).toBeGreaterThanOrEqual(first);
    const server = await store.databaseNow();
    expect(Math.abs(store.clock() - server), 'measured again, it follows the server').toBeLessThan(5_000);
  });

  it('a host whose clock is 30 days ahead compacts a log written by another without expiring its undelivered run', async () => {
    // Host A, clock right: a run that finished and that no client has acknowledged yet, then a checkpoint.
    const writer = open();
    await writer.setup();
    const logA = await openEventLog({ store: writer, sessionId: 's1', durability: 'group', clock: writer.clock });
    await logA.appendMessage({ role: 'user', content: 'hello', id: 'm1' });
    await logA.chatStarted({ requestId: 'r1', content: 'hello' });
    await logA.chatDone({ requestId: 'r1' });
    await logA.checkpoint();
    await logA.close();

    // Host B, its clock 30 days ahead, takes the session over and compacts with the store's clock.
    skewHostClock(30 * DAY_MS);
    const compactor = open();
    await compactor.setup();
    // No `clock` given: a writer on a store with a clock of its own takes it by default.
    const logB = await openEventLog({ store: compactor, sessionId: 's1', durability: 'group' });
    const compaction = await logB.compact({ deliveryWindowSeconds: 48 * 3600, retentionSeconds: 48 * 3600 });
    expect(compaction.expiredRuns, 'the run finished seconds ago by the database’s clock').toEqual([]);
    expect(compaction.futureStampedRecords).toBe(0);
    expect(compaction.compacted).toBe(false);
    // What B stamps is the database's time too: its record is not 30 days younger than A's.
    const { seq } = await logB.appendMessage({ role: 'user', content: 'later', id: 'm2' });
    await logB.close();
    const reader = await compactor.openReader({ family: 'event', sessionId: 's1' });
    const stamps: number[] = [];
    for await (const batch of reader.records())
      for (const item of batch)
        if (item.kind === 'record' && (item.record.value.seq === 0 || item.record.value.seq === seq))
          stamps.push(Date.parse(item.record.value.ts as string));
    await reader.close();
    expect(stamps).toHaveLength(2);
    expect((stamps[1] as number) - (stamps[0] as number)).toBeLessThan(60_000);
  });

  it("a hub on the store, given no clock, stamps its records by the database's clock", async () => {
    skewHostClock(30 * DAY_MS);
    const store = open();
    await store.setup();
    const hub = openConversationHub({ store, retention: false });
    try {
      await (await hub.session('hub-clock')).send({ requestId: 'r1', content: 'hello' });
    } finally {
      await hub.close();
    }
    const reader = await store.openReader({ family: 'event', sessionId: 'hub-clock' });
    const stamps: number[] = [];
    for await (const batch of reader.records())
      for (const item of batch)
        if (item.kind === 'record' && typeof item.record.value.ts === 'string')
          stamps.push(Date.parse(item.record.value.ts));
    await reader.close();
    expect(stamps.length).toBeGreaterThan(0);
    const server = await store.databaseNow();
    for (const stamped of stamps) {
      expect(Math.abs(stamped - server), 'stamped by the server’s time').toBeLessThan(60_000);
      expect(Date.now() - stamped, 'not by this host’s clock, 30 days ahead').toBeGreaterThan(29 * DAY_MS);
    }
  });
});
