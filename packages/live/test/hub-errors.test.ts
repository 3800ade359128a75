// Failures of work no caller awaits — the retention job, the idle close, the close of a session the hub lets go, a
// session's timed sync — are told to `onError` and counted in `hub.metrics()`, never dropped.
import { SimulatedFileSystem } from '@turnjournal/conformance';
import { type HubFailure, LiveSession, openConversationHub } from '@turnjournal/live';
import { type FileSystem, nodeFileSystem } from '@turnjournal/writer/file-system';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tempStore } from './support.js';

/** The lock of a simulated store: a holder that is gone is dead (nothing else runs on it). */
const DEAD = { statusOf: (text: string | undefined) => (text === undefined ? ('none' as const) : ('stale' as const)) };

/** The real file system, whose listings of the turn-journal directory fail with EIO while `failing.on`. */
function failingListings(): { fs: FileSystem; failing: { on: boolean } } {
  const failing = { on: false };
  const fs: FileSystem = {
    ...nodeFileSystem,
    async readdir(path) {
      if (failing.on && path.endsWith('_turn_journal'))
        throw Object.assign(new Error(`EIO: injected, readdir '${path}'`), { code: 'EIO' });
      return nodeFileSystem.readdir(path);
    },
  };
  return { fs, failing };
}

/** Resolves once `check` holds, polling; fails after `ms` (a hang guard, far above the few intervals awaited). */
async function eventually(check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('the condition did not hold in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('hub background failures: onError and metrics (TJ-LIVE-041)', () => {
  it('reports a failed sweep of the timed retention pass, with its code, and counts it', async () => {
    const { fs, failing } = failingListings();
    const failures: HubFailure[] = [];
    const hub = openConversationHub({
      root: tempStore('tj-live-errors-'),
      fs,
      retention: { intervalMs: 20 },
      onError: (failure) => failures.push(failure),
    });
    await hub.session('s1');
    failing.on = true;
    await eventually(() => failures.length > 0);
    failing.on = false;
    await hub.close();
    expect(failures[0]).toMatchObject({ task: 'retention', code: 'write_failed' });
    expect(failures[0]?.sessionId).toBeUndefined();
    expect(String(failures[0]?.error)).toMatch(/EIO/);
    const metrics = hub.metrics();
    expect(metrics.failuresByTask.retention).toBe(failures.length);
    expect(metrics.failuresByCode.write_failed).toBe(failures.length);
    expect(metrics.failures).toBe(failures.length);
  });

  it('reports a failed close of an idle session (task idle_close)', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      // Idle time is measured on the monotonic clock (spec §18.6): the test moves it.
      const clock = { now: 1_000_000, monotonic: 0 };
      const failures: HubFailure[] = [];
      const hub = openConversationHub({
        root: tempStore('tj-live-errors-'),
        clock: { now: () => clock.now, monotonic: () => clock.monotonic },
        idleCloseMs: 2000,
        retention: false,
        onError: (failure) => failures.push(failure),
      });
      const session = await hub.session('s1');
      const close = vi
        .spyOn(LiveSession.prototype, 'close')
        .mockRejectedValueOnce(Object.assign(new Error('fsync on close failed: EIO'), { code: 'write_failed' }));
      clock.now += 10_000;
      clock.monotonic += 10_000;
      await vi.advanceTimersByTimeAsync(1000);
      expect(close).toHaveBeenCalledTimes(1);
      expect(failures).toMatchObject([{ task: 'idle_close', sessionId: 's1', code: 'write_failed' }]);
      expect(hub.metrics().failuresByTask.idle_close).toBe(1);
      close.mockRestore();
      await session.close();
      await hub.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports a failed close of a retired session it reopens (task close), and still hands out the new one', async () => {
    const failures: HubFailure[] = [];
    const hub = openConversationHub({
      root: tempStore('tj-live-errors-'),
      retention: false,
      onError: (failure) => failures.push(failure),
    });
    const first = await hub.session('s1');
    const closing = first.close();
    const close = vi
      .spyOn(LiveSession.prototype, 'close')
      .mockRejectedValueOnce(Object.assign(new Error('injected'), { code: 'write_failed' }));
    const again = await hub.session('s1');
    await closing;
    expect(close).toHaveBeenCalled();
    expect(again).not.toBe(first);
    expect(failures).toMatchObject([{ task: 'close', sessionId: 's1', code: 'write_failed' }]);
    close.mockRestore();
    await hub.close();
  });

  it('rejects hub.close() with a session close that failed, after closing the others', async () => {
    const hub = openConversationHub({ root: tempStore('tj-live-errors-'), retention: false, onError: () => undefined });
    const [a, b] = await Promise.all([hub.session('a'), hub.session('b')]);
    const failure = Object.assign(new Error('injected'), { code: 'write_failed' });
    const close = vi.spyOn(a, 'close').mockRejectedValueOnce(failure);
    await expect(hub.close()).rejects.toBe(failure);
    expect(close).toHaveBeenCalledTimes(1);
    expect(b.closed).toBe(true);
    expect(hub.metrics().failuresByTask.close).toBe(1);
    close.mockRestore();
    await a.close();
  });

  it('reports a session that fails in its timed sync of held deltas (task session), which no caller awaits', async () => {
    const sim = new SimulatedFileSystem();
    const failures: HubFailure[] = [];
    const hub = openConversationHub({
      root: '/s',
      fs: sim,
      lock: DEAD,
      retention: false,
      deltaFlushMs: 5,
      onError: (failure) => failures.push(failure),
    });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    sim.inject({ op: 'fdatasync', path: 'events.jsonl', errno: 'EIO' });
    await sent.run.delta('accepted before its sync');
    await eventually(() => failures.length > 0);
    expect(failures).toMatchObject([{ task: 'session', sessionId: 's1', code: 'write_failed' }]);
    expect(session.ended).toBe(true);
    await hub.close();
  });

  it('emits a process warning when no onError is given', async () => {
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const { fs, failing } = failingListings();
    const hub = openConversationHub({ root: tempStore('tj-live-errors-'), fs, retention: { intervalMs: 20 } });
    await hub.session('s1');
    failing.on = true;
    await eventually(() => warn.mock.calls.length > 0);
    failing.on = false;
    await hub.close();
    expect(String(warn.mock.calls[0]?.[0])).toMatch(/retention failed \(write_failed\): .*EIO/);
    expect(warn.mock.calls[0]?.[1]).toMatchObject({ code: 'TURNJOURNAL_BACKGROUND_FAILURE' });
  });
});

describe('LiveSession.close() (TJ-LIVE-041)', () => {
  it('rejects with the failure of its last sync (records accepted before close are lost), after releasing the journals', async () => {
    const sim = new SimulatedFileSystem();
    const hub = openConversationHub({
      root: '/s',
      fs: sim,
      lock: DEAD,
      retention: false,
      deltaFlushMs: 60_000,
      onError: () => undefined,
    });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('held until the next sync');
    sim.inject({ op: 'fdatasync', path: 'events.jsonl', errno: 'EIO' });
    await expect(session.close()).rejects.toMatchObject({ code: 'write_failed', errno: 'EIO' });
    expect(session.closed).toBe(true);
    // The locks were released: the session opens again and recovers.
    const again = await hub.session('s1');
    expect(again).not.toBe(session);
    await hub.close();
  });
});
