// A stalled sync releases a burst (issue 34, finding 3): with one fdatasync held while the producer streams faster
// than the window holds, the commit after it delivers more records than the window's base bound at once. The cut-off
// follows each subscriber's own lag (TJ-LIVE-030): one that keeps reading gets every record; one that stopped reading
// is cut off with its cursor once it has been behind for the lag limit, or once it would hold more than the byte
// bound, and the window shrinks back.
import { join } from 'node:path';
import { type HubSession, type LiveEvent, openConversationHub, type Subscription } from '@turnjournal/live';
import { nodeFileSystem } from '@turnjournal/writer/file-system';
import { describe, expect, it } from 'vitest';
import { TestClock, take, tempStore, withPaths } from './support.js';

const WINDOW = 32;
const BURST = 500;
const LAG_MS = 10_000;

/** The node file system with the next fdatasync of `log` held until `release()`; `stalled` resolves when it is. */
function stallingFileSystem(log: () => string) {
  const { fs: base, pathOf } = withPaths(nodeFileSystem);
  let armed = false;
  let release = (): void => undefined;
  let entered = (): void => undefined;
  const stalled = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const gate = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    fs: {
      ...base,
      async fdatasync(fd: number) {
        if (armed && pathOf(fd) === log()) {
          armed = false;
          entered();
          await gate;
        }
        return base.fdatasync(fd);
      },
    },
    arm: () => {
      armed = true;
    },
    stalled,
    release: () => release(),
  };
}

/** Reads `subscription` until it yields a record with seq `through` or anything else; every event, in order. */
async function readThrough(subscription: Subscription, through: number): Promise<LiveEvent[]> {
  const events: LiveEvent[] = [];
  for (;;) {
    const next = await subscription.next();
    if (next.done === true) return events;
    events.push(next.value);
    if (next.value.kind !== 'record' || next.value.record.seq >= through) return events;
  }
}

/** A session streaming run r1, and two subscribers that have read through its head (so both stream live). */
async function streamingWithTwoSubscribers(options: { ringBytes?: number; subscriberLagBytes?: number } = {}) {
  const root = tempStore('tj-live-stall-');
  let logPath = '';
  const stalling = stallingFileSystem(() => logPath);
  const clock = new TestClock('2026-06-19T00:00:00Z');
  const hub = openConversationHub({
    root,
    fs: stalling.fs,
    clock,
    retention: false,
    ringRecords: WINDOW,
    subscriberLagMs: LAG_MS,
    checkpointInterval: 1_000_000,
    ...options,
  });
  const session: HubSession = await hub.session('s1');
  logPath = join(root, 's1', 'events.jsonl');
  const sent = await session.send({ requestId: 'r1', content: 'count to many' });
  if (!sent.created) throw new Error('expected a new run');
  const head = session.durableSeq;
  const reading = session.subscribe({ after: head - 1 });
  const paused = session.subscribe({ after: head - 1 });
  for (const subscription of [reading, paused])
    expect((await take(subscription, 1)).map((e) => (e.kind === 'record' ? e.record.seq : e.kind))).toEqual([head]);
  return { hub, session, run: sent.run, clock, stalling, reading, paused, head };
}

/** Appends `count` deltas while the next sync is held (6 s pass meanwhile), then lets it go: one commit of them all. */
async function burstBehindStalledSync(
  context: Awaited<ReturnType<typeof streamingWithTwoSubscribers>>,
  count: number,
  text = 'tok ',
): Promise<number> {
  const { session, run, clock, stalling } = context;
  stalling.arm();
  await run.delta(text); // the delta timer starts the sync that stalls
  await stalling.stalled;
  for (let i = 1; i < count; i += 1) await run.delta(text);
  clock.pass(6_000);
  stalling.release();
  await session.flush();
  return session.durableSeq;
}

describe('a burst after a stalled sync (TJ-LIVE-030)', () => {
  it('cuts off no subscriber that keeps reading; cuts off one that stopped, after the lag limit, and the window shrinks back', async () => {
    const context = await streamingWithTwoSubscribers();
    const { hub, session, run, clock, reading, paused, head } = context;
    // The run's first delta opens its segment: BURST deltas are BURST + 1 records.
    const reader = readThrough(reading, head + BURST + 1);
    const last = await burstBehindStalledSync(context, BURST);
    expect(last).toBe(head + BURST + 1);
    const events = await reader;
    // Every record, in order, with no gap and no cut_off, though one commit delivered more than WINDOW records.
    expect(events.map((e) => (e.kind === 'record' ? e.record.seq : e.kind))).toEqual(
      Array.from({ length: BURST + 1 }, (_, i) => head + 1 + i),
    );
    // The paused subscriber is within the lag limit: the window keeps what it has not received.
    expect(session.windowUsage.records).toBeGreaterThan(BURST);

    // It stays behind past the lag limit: the next delivery cuts it off, and the window is back to its base bound.
    clock.pass(LAG_MS + 1);
    await run.delta('more');
    await session.flush();
    expect(session.windowUsage.records).toBeLessThanOrEqual(WINDOW);
    expect(await paused.next()).toEqual({ done: false, value: { kind: 'cut_off', cursor: head } });
    expect((await paused.next()).done).toBe(true);
    // The reader was not: it goes on live.
    expect((await take(reading, 1)).map((e) => (e.kind === 'record' ? e.record.seq : e.kind))).toEqual([last + 1]);
    reading.close();
    await run.done();
    await hub.close();
  });

  it('never keeps more than the byte bound for a subscriber: past it, a paused one is cut off within the lag limit', async () => {
    const lagBytes = 16 * 1024;
    const context = await streamingWithTwoSubscribers({ ringBytes: 4 * 1024, subscriberLagBytes: lagBytes });
    const { hub, session, run, reading, paused, head } = context;
    // ~120 bytes per delta in the window's measure: the burst is several times the byte bound.
    const reader = readThrough(reading, head + BURST + 1);
    await burstBehindStalledSync(context, BURST);
    const events = await reader;
    expect(session.windowUsage.bytes).toBeLessThanOrEqual(lagBytes);
    // One commit larger than the byte bound is the one burst that cuts off a reader too (the bound is the memory's):
    // after the records the sync that stalled covered, with its cursor, never with a gap.
    const seqs = events.flatMap((e) => (e.kind === 'record' ? [e.record.seq] : []));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => head + 1 + i));
    expect(events.slice(seqs.length)).toEqual([{ kind: 'cut_off', cursor: head + seqs.length }]);
    const cut = await paused.next();
    expect(cut).toEqual({ done: false, value: { kind: 'cut_off', cursor: head } });
    await run.done();
    await hub.close();
  });
});
