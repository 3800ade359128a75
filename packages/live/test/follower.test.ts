// Owners and followers (spec §18.8, §19.3): a hub that cannot take a session's journals because another process
// holds them serves the session's readers as a follower — exactly the owner's durable records, gap-free, never one the
// owner has not made durable — refuses every write with `not_owner`, and becomes the owner once that process is gone.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { type HubSession, type LiveEvent, type LiveRecord, openConversationHub } from '@turnjournal/live';
import { SimulatedBacking, SimulatedRecordStore } from '@turnjournal/test-support';
import { describe, expect, it } from 'vitest';
import { tempStore as tempDir } from './support.js';

/** Hang guard of a wait for records: far above the quiet duration (tens of milliseconds). */
const WAIT_MS = 20_000;

const quietHub = (root: string) => openConversationHub({ root, retention: false, followPollMs: 5, deltaFlushMs: 5 });

/** Collects a subscription's records until one satisfies `done` (or the hang guard fires). */
async function collect(session: HubSession, done: (record: LiveRecord) => boolean, after = -1): Promise<LiveRecord[]> {
  const subscription = session.subscribe({ after });
  const records: LiveRecord[] = [];
  const guard = setTimeout(() => subscription.close(), WAIT_MS);
  try {
    for await (const event of subscription as AsyncIterable<LiveEvent>) {
      if (event.kind !== 'record') throw new Error(`unexpected ${event.kind} event: ${JSON.stringify(event)}`);
      records.push(event.record);
      if (done(event.record)) break;
    }
  } finally {
    clearTimeout(guard);
    subscription.close();
  }
  return records;
}

/** Resolves once `session` has read through `seq` (a hang guard of {@link WAIT_MS}). */
async function caughtUp(session: HubSession, seq: number): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (session.durableSeq < seq) {
    if (Date.now() > deadline) throw new Error(`the follower stayed at seq ${session.durableSeq}, below ${seq}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const finished = (requestId: string) => (record: LiveRecord) =>
  record.type === 'chat.done' && (record.payload as { request_id?: unknown }).request_id === requestId;

function logRecords(root: string, sessionId: string): LiveRecord[] {
  return readFileSync(join(root, sessionId, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim().length > 0 && !line.startsWith('\0'))
    .map((line) => JSON.parse(line) as LiveRecord)
    .filter((record) => typeof record.seq === 'number');
}

describe('a second hub on the same root follows the session its owner holds (TJ-LIVE-042)', () => {
  it('its subscriber receives exactly the owner subscriber’s records, gap-free, while the owner streams', async () => {
    const root = tempDir();
    const owner = quietHub(root);
    const other = quietHub(root);
    try {
      const owned = await owner.session('s1');
      expect(owned.role).toBe('owner');
      const followed = await other.session('s1');
      expect(followed.role, 'the journals are held by the first hub: the second follows').toBe('follower');
      const fromOwner = collect(owned, finished('r1'));
      const fromFollower = collect(followed, finished('r1'));
      const sent = await owned.send({ requestId: 'r1', content: 'hello' });
      if (!sent.created) throw new Error('the send created no run');
      for (let n = 0; n < 300; n++) {
        void sent.run.delta(`token ${n} `);
        if (n % 50 === 0) await new Promise((resolve) => setTimeout(resolve, 2));
      }
      await sent.run.done();
      const [ownerRecords, followerRecords] = await Promise.all([fromOwner, fromFollower]);
      expect(followerRecords.map((r) => r.seq)).toEqual(followerRecords.map((_, i) => i));
      expect(followerRecords).toEqual(ownerRecords);
      expect(followed.snapshot().messages).toEqual(owned.snapshot().messages);
      expect(followed.snapshot().lastSeq).toBe(owned.snapshot().lastSeq);
    } finally {
      await other.close();
      await owner.close();
    }
  });

  it('never delivers a record its owner has not made durable (TJ-STORE-010)', async () => {
    const root = tempDir();
    // Deltas wait up to a minute for their sync: until the owner flushes, they are in the file but not durable.
    const owner = openConversationHub({ root, retention: false, deltaFlushMs: 60_000 });
    const other = quietHub(root);
    try {
      const owned = await owner.session('s1');
      const sent = await owned.send({ requestId: 'r1', content: 'hello' });
      if (!sent.created) throw new Error('the send created no run');
      const durableAtSend = owned.durableSeq;
      for (let n = 0; n < 20; n++) void sent.run.delta(`token ${n} `);
      await owned.flush();
      const flushed = owned.durableSeq;
      // 40 deltas of 4 KiB: held chunks are written once they reach 64 KiB, so the file holds them, none synced.
      for (let n = 20; n < 60; n++) void sent.run.delta(`token ${n} ${'x'.repeat(4096)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(logRecords(root, 's1').at(-1)?.seq, 'the file holds records past the durable seq').toBeGreaterThan(
        flushed,
      );
      const followed = await other.session('s1');
      expect(followed.role).toBe('follower');
      const seen = collect(followed, (record) => record.seq === flushed);
      expect((await seen).map((r) => r.seq).at(-1)).toBe(flushed);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(followed.durableSeq, 'nothing past the owner’s durable mark').toBe(flushed);
      expect(flushed).toBeGreaterThan(durableAtSend);
      await owned.flush();
      const rest = await collect(followed, (record) => record.seq === owned.durableSeq, flushed);
      expect(rest.map((r) => r.seq)).toEqual(rest.map((_, i) => flushed + 1 + i));
    } finally {
      await other.close();
      await owner.close();
    }
  });

  it('refuses every write with `not_owner` and appends nothing (TJ-LIVE-043); owns the session once its owner closed', async () => {
    const root = tempDir();
    const owner = quietHub(root);
    const other = quietHub(root);
    try {
      const owned = await owner.session('s1');
      const sent = await owned.send({ requestId: 'r1', content: 'hello' });
      if (sent.created) await sent.run.done();
      const followed = await other.session('s1');
      expect(followed.role).toBe('follower');
      const before = logRecords(root, 's1').length;
      await expect(followed.send({ requestId: 'r2', content: 'x' })).rejects.toMatchObject({ code: 'not_owner' });
      await expect(followed.cancel('r1')).rejects.toMatchObject({ code: 'not_owner' });
      await expect(followed.ack('r1')).rejects.toMatchObject({ code: 'not_owner' });
      await expect(followed.compact()).rejects.toMatchObject({ code: 'not_owner' });
      expect(logRecords(root, 's1')).toHaveLength(before);
      // A follower lags its owner by the channel's delay (a poll of the durable mark): wait until it has caught up.
      await caughtUp(followed, owned.durableSeq);
      expect(followed.statusOf('r1')).toBe('done');
      await owner.close();
      const now = await other.session('s1');
      expect(now.role, 'the owner closed: the next call owns the session').toBe('owner');
      const again = await now.send({ requestId: 'r2', content: 'again' });
      expect(again.created).toBe(true);
      if (again.created) await again.run.done();
      expect(now.statusOf('r2')).toBe('done');
    } finally {
      await other.close();
      await owner.close();
    }
  });
});

describe('a follower across its owner’s compaction (TJ-LIVE-042)', () => {
  it('reads the replaced log: the records after the compaction reach its subscriber, none lost or repeated', async () => {
    const root = tempDir();
    const owner = openConversationHub({
      root,
      retention: false,
      followPollMs: 5,
      deltaFlushMs: 5,
      checkpointInterval: 4,
    });
    const other = quietHub(root);
    try {
      const owned = await owner.session('s1');
      // The follower reads r1 from the log as it is written: its reader is open on the file before the compaction.
      const followed = await other.session('s1');
      const before = collect(followed, finished('r1'));
      const first = await owned.send({ requestId: 'r1', content: 'hello' });
      if (!first.created) throw new Error('the send created no run');
      for (let n = 0; n < 20; n++) void first.run.delta(`token ${n} `);
      await first.run.done();
      await before;
      await caughtUp(followed, owned.durableSeq);
      const live = collect(followed, finished('r2'), followed.durableSeq);
      await owned.ack('r1');
      const compaction = await owned.compact({ retentionSeconds: 0 });
      expect(compaction.compacted, 'the owner compacted its log').toBe(true);
      const second = await owned.send({ requestId: 'r2', content: 'again' });
      if (!second.created) throw new Error('the send created no run');
      for (let n = 0; n < 20; n++) void second.run.delta(`word ${n} `);
      await second.run.done();
      const records = await live;
      const start = records[0]?.seq ?? -1;
      expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => start + i));
      expect(records.at(-1)?.seq).toBe(owned.durableSeq);
      expect(followed.snapshot().messages).toEqual(owned.snapshot().messages);
    } finally {
      await other.close();
      await owner.close();
    }
  });
});

describe('hubs on a record store other than files (spec §19): two hosts on one simulated database', () => {
  it('the second hub follows the first one’s session through the store, record for record', async () => {
    const backing = new SimulatedBacking();
    const hostA = openConversationHub({ store: new SimulatedRecordStore(backing), retention: false, deltaFlushMs: 5 });
    const hostB = openConversationHub({ store: new SimulatedRecordStore(backing), retention: false, deltaFlushMs: 5 });
    try {
      const owned = await hostA.session('s1');
      expect(owned.role).toBe('owner');
      const followed = await hostB.session('s1');
      expect(followed.role, 'the simulated database holds the lock of host A').toBe('follower');
      const fromOwner = collect(owned, finished('r1'));
      const fromFollower = collect(followed, finished('r1'));
      const sent = await owned.send({ requestId: 'r1', content: 'hello' });
      if (!sent.created) throw new Error('the send created no run');
      for (let n = 0; n < 100; n++) void sent.run.delta(`token ${n} `);
      await sent.run.done();
      const [ownerRecords, followerRecords] = await Promise.all([fromOwner, fromFollower]);
      expect(followerRecords).toEqual(ownerRecords);
      // The retention job sweeps the simulated store's turn journals through the seam (TJ-STORE-011): it audited host
      // A's turn journal of s1, whose one turn is younger than the window.
      const swept = (await hostA.runRetention()).turns;
      expect(swept).toMatchObject({ dir: 'simulated://store', dryRun: false });
      expect('sessions' in swept ? swept.sessions.map((s) => [s.sessionId, s.skipped]) : swept).toEqual([
        ['s1', 'no turn is terminal, delivered and older than the window'],
      ]);
    } finally {
      await hostB.close();
      await hostA.close();
    }
  });

  it('refuses both a root and a store, and neither', () => {
    expect(() => openConversationHub({ root: '/tmp/x', store: new SimulatedRecordStore() })).toThrow(
      expect.objectContaining({ code: 'invalid_request' }),
    );
    expect(() => openConversationHub({})).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});

const OWNER_CHILD = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'owner-child.mjs');
const BUILT_LIVE = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'index.js');

describe('two real processes on one root (TJ-LIVE-042)', () => {
  it('a follower process serves a subscriber gap-free while the owner process streams', async () => {
    const root = tempDir();
    const child = spawn(process.execPath, [OWNER_CHILD, BUILT_LIVE, root, 's1', '400'], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const lines = createInterface({ input: child.stdout });
    const said = (what: string) =>
      new Promise<void>((resolve, reject) => {
        const guard = setTimeout(() => reject(new Error(`the owner never said "${what}": ${stderr}`)), WAIT_MS);
        lines.on('line', (line) => {
          if (line === what) {
            clearTimeout(guard);
            resolve();
          }
        });
      });
    const ready = said('owning');
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const hub = quietHub(root);
    try {
      await ready;
      const followed = await hub.session('s1');
      expect(followed.role, 'another process holds the journals').toBe('follower');
      const received = collect(followed, finished('r1'));
      child.stdin.write('go\n');
      const records = await received;
      expect(await exited, stderr).toBe(0);
      expect(
        records.map((r) => r.seq),
        'every seq once, in order',
      ).toEqual(records.map((_, i) => i));
      const log = logRecords(root, 's1').filter((record) => record.seq <= (records.at(-1)?.seq ?? -1));
      expect(records, 'exactly the records the owner wrote').toEqual(log);
      expect(records.filter((r) => r.type === 'chat.delta')).toHaveLength(400);
    } finally {
      child.kill();
      await hub.close();
    }
  });
});
