// A session's life in the hub on a bad day: a sync that fails, a close while requests arrive, a session handed out
// just before the idle close. `hub.session()` must hand out a session whose calls work, and a subscriber must never
// wait for records that will not come.
import { SimulatedFileSystem } from '@turnjournal/conformance';
import { type LiveEvent, openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { TestClock, tempStore } from './support.js';

function store(): string {
  const dir = tempStore('tj-live-lifecycle-');
  return dir;
}

/** The lock of a simulated store: a holder that is gone is dead (nothing else runs on it). */
const DEAD = { statusOf: (text: string | undefined) => (text === undefined ? ('none' as const) : ('stale' as const)) };

/** What a pending `next()` gave within `ms`, or 'waiting'. */
async function within<T>(promise: Promise<T>, ms = 1000): Promise<T | 'waiting'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waiting = new Promise<'waiting'>((resolve) => {
    timer = setTimeout(() => resolve('waiting'), ms);
  });
  try {
    return await Promise.race([promise, waiting]);
  } finally {
    clearTimeout(timer);
  }
}

describe('a session whose event log failed a sync (TJ-DUR-021)', () => {
  it('ends its subscribers at the last durable record, and hub.session() reopens and recovers it', async () => {
    const sim = new SimulatedFileSystem();
    const hub = openConversationHub({ root: '/s', fs: sim, lock: DEAD, retention: false, deltaFlushMs: 60_000 });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    const head = session.durableSeq;
    // One subscriber waits live at the head, one is behind and still catching up.
    const live = session.subscribe({ after: head });
    const waiting = live.next();
    const behind = session.subscribe({ after: -1 });
    const first = await behind.next();
    expect(first.done).toBe(false);
    sim.inject({ op: 'fdatasync', path: 'events.jsonl', errno: 'EIO' });
    await expect(sent.run.toolStart({ toolCallId: 'c1', tool: 'search' })).rejects.toThrow(/EIO/);
    // The live one ends instead of waiting forever (before, it hung, and kept the session from its idle close).
    expect(await within(waiting)).toEqual({ done: true, value: undefined });
    expect(live.cursor).toBe(head);
    // The one behind still gets every durable record, once, then ends.
    const rest: LiveEvent[] = [];
    for (;;) {
      const next = await within(behind.next());
      if (next === 'waiting') throw new Error('the subscriber behind hangs');
      if (next.done === true) break;
      rest.push(next.value);
    }
    const seqs = [first.value, ...rest].map((e) => (e.kind === 'record' ? e.record.seq : -99));
    expect(seqs).toEqual(Array.from({ length: head + 1 }, (_, i) => i));
    expect(session.subscriberCount).toBe(0);
    // The failed session is not handed out again: its calls would all be refused ("reopen it").
    const again = await hub.session('s1');
    expect(again).not.toBe(session);
    expect(session.closed).toBe(true);
    expect(['done', 'cancelled']).toContain(again.statusOf('r1'));
    const next = await again.send({ requestId: 'r2', content: 'again' });
    expect(next.created).toBe(true);
    if (next.created) await next.run.done();
    expect(again.statusOf('r2')).toBe('done');
    await hub.close();
  });
});

describe('hub.session() while the session is closing', () => {
  it('waits for the close and hands out the session opened again, not the closing one', async () => {
    const root = store();
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const closing = session.close();
    const again = await hub.session('s1');
    expect(again).not.toBe(session);
    // A second close() waits for the same close (before, it returned at once while the journals were still open).
    await session.close();
    expect(session.closed).toBe(true);
    const sent = await again.send({ requestId: 'r1', content: 'hi' });
    expect(sent.created).toBe(true);
    if (sent.created) await sent.run.done();
    await closing;
    await hub.close();
  });
});

describe('the idle close and hub.session()', () => {
  it('spares a session the hub just handed out', async () => {
    const root = store();
    const clock = new TestClock(0);
    // The idle check runs every second (its floor); the clock says the session was idle far longer.
    const hub = openConversationHub({ root, retention: false, idleCloseMs: 1000, clock });
    const session = await hub.session('s1');
    clock.pass(60_000);
    const handed = await hub.session('s1');
    expect(handed).toBe(session);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    // The caller is about to use it (a request body still being read): it must still be open.
    expect(handed.closed).toBe(false);
    const sent = await handed.send({ requestId: 'r1', content: 'hi' });
    expect(sent.created).toBe(true);
    if (sent.created) await sent.run.done();
    // Once idle for the idle time again, it is closed.
    clock.pass(60_000);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(handed.closed).toBe(true);
    await hub.close();
  }, 10_000);
});
