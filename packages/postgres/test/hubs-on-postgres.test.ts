// Live sessions on PostgreSQL (spec §18.8, §19): two hubs, as two app servers on one database would open them, serve
// one session — the first as its owner, the second as a follower that delivers exactly the owner's records, through
// the database's channel — from a real server this file starts.
import { type HubSession, type LiveEvent, type LiveRecord, openConversationHub } from '@turnjournal/live';
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresRecordStore } from '../src/index.js';

/** Hang guard of a wait for records: far above the quiet duration (a fraction of a second). */
const WAIT_MS = 30_000;

let server: PostgresServer;
beforeAll(() => {
  server = startPostgres();
});
afterAll(() => server?.stop());

async function collect(session: HubSession, requestId: string): Promise<LiveRecord[]> {
  const subscription = session.subscribe({ after: -1 });
  const records: LiveRecord[] = [];
  const guard = setTimeout(() => subscription.close(), WAIT_MS);
  try {
    for await (const event of subscription as AsyncIterable<LiveEvent>) {
      if (event.kind !== 'record') throw new Error(`unexpected ${event.kind} event`);
      records.push(event.record);
      if (
        event.record.type === 'chat.done' &&
        (event.record.payload as { request_id?: unknown }).request_id === requestId
      )
        break;
    }
  } finally {
    clearTimeout(guard);
    subscription.close();
  }
  return records;
}

describe('two hubs on one PostgreSQL database', () => {
  it('serve one session as owner and follower, record for record; writes on the follower are refused', async () => {
    const storeA = openPostgresRecordStore({ connectionString: server.connectionString, store: 'hubs' });
    const storeB = openPostgresRecordStore({ connectionString: server.connectionString, store: 'hubs' });
    const hostA = openConversationHub({ store: storeA, retention: false, deltaFlushMs: 5 });
    const hostB = openConversationHub({ store: storeB, retention: false, deltaFlushMs: 5 });
    try {
      const owned = await hostA.session('s1');
      expect(owned.role).toBe('owner');
      const followed = await hostB.session('s1');
      expect(followed.role, 'the database holds host A’s lock').toBe('follower');
      const fromOwner = collect(owned, 'r1');
      const fromFollower = collect(followed, 'r1');
      const sent = await owned.send({ requestId: 'r1', content: 'hello' });
      if (!sent.created) throw new Error('the send created no run');
      for (let n = 0; n < 200; n++) void sent.run.delta(`token ${n} `);
      await sent.run.done();
      const [ownerRecords, followerRecords] = await Promise.all([fromOwner, fromFollower]);
      expect(followerRecords.map((r) => r.seq)).toEqual(followerRecords.map((_, i) => i));
      expect(followerRecords).toEqual(ownerRecords);
      await expect(followed.send({ requestId: 'r2', content: 'x' })).rejects.toMatchObject({ code: 'not_owner' });
      await hostA.close();
      const owner = await hostB.session('s1');
      expect(owner.role, 'host A closed: host B owns the session').toBe('owner');
      expect(owner.snapshot().messages).toEqual(owned.snapshot().messages);
    } finally {
      await hostB.close();
      await hostA.close();
      await storeA.close();
      await storeB.close();
    }
  });
});
