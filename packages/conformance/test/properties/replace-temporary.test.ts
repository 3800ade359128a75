// A compaction replaces its file through a temporary copy (TJ-DUR-009). Every failure on the way must remove the
// temporary file it created, whichever call failed: before, a failed close of the copy left it behind, next to a live
// log, until the next replace of that file happened to clear it. Run on the simulated file system, which fails the
// calls the real one cannot be made to fail.
import { openEventLog, openTurnJournal } from '@turnjournal/writer';
import { describe, expect, it } from 'vitest';
import { SimulatedFileSystem } from '../../src/simulated-fs/index.js';
import { DEAD_HOLDERS } from './sim-support.js';

const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const LATER = Date.parse('2026-03-01T00:00:00.000Z');

/** A simulated store with an event log that one compaction can shorten: a delivered run, a checkpoint, another run. */
async function compactableLog(sim: SimulatedFileSystem) {
  let now = T0;
  const log = await openEventLog({
    root: '/s',
    sessionId: 's1',
    fs: sim.view(),
    clock: () => (now += 1000),
    lock: DEAD_HOLDERS,
  });
  for (const id of ['r1', 'r2']) {
    await log.chatStarted({ requestId: id, content: id });
    await log.chatDone({ requestId: id });
    await log.ack(id, { clientId: 'c1' });
    if (id === 'r1') await log.checkpoint();
  }
  return log;
}

const temporaries = async (sim: SimulatedFileSystem, dir: string) =>
  (await sim.readdir(dir)).filter((name) => name.endsWith('.tmp'));

describe('a failed replace removes its temporary file (TJ-DUR-009, TJ-DUR-037)', () => {
  for (const op of ['write', 'fsync', 'close'] as const)
    it(`EIO on the ${op} of a compaction's copy: refused, the copy removed, the log unchanged and still appending`, async () => {
      const sim = new SimulatedFileSystem();
      const log = await compactableLog(sim);
      const dir = log.path.slice(0, log.path.lastIndexOf('/'));
      const before = sim.peek(log.path);
      sim.inject({ op, path: '.tmp', errno: 'EIO' });
      await expect(log.compact({ now: LATER, retentionSeconds: 0 })).rejects.toMatchObject({
        code: 'write_failed',
        operation: op,
        errno: 'EIO',
      });
      expect(await temporaries(sim, dir)).toEqual([]);
      expect(sim.peek(log.path)).toEqual(before);
      await log.appendMessage({ role: 'user', content: 'after' });
      expect((await log.compact({ now: LATER, retentionSeconds: 0 })).compacted).toBe(true);
      await log.close();
    });

  it("EIO on the close of a turn journal's quarantine copy of a torn tail: the open fails and leaves no copy", async () => {
    const sim = new SimulatedFileSystem();
    const journal = await openTurnJournal({ dir: '/t', sessionId: 's1', fs: sim.view(), lock: DEAD_HOLDERS });
    await journal.submit({ content: 'hello' });
    await journal.close();
    // A torn tail: the next open copies it aside through a replace (TJ-DUR-005).
    const fd = await sim.open('/t/s1.jsonl', 'read-write');
    const size = (await sim.fstat(fd)).size;
    await sim.write(fd, new TextEncoder().encode('{"torn'), 0, 6, size);
    await sim.close(fd);
    // The second temporary file the open closes: the first is the lock's (`.s1.jsonl.lock.<hex>.tmp`, TJ-DUR-029).
    sim.inject({ op: 'close', path: '.tmp', errno: 'EIO', nth: 2 });
    await expect(
      openTurnJournal({ dir: '/t', sessionId: 's1', fs: sim.view(), lock: DEAD_HOLDERS }),
    ).rejects.toMatchObject({ operation: 'close' });
    expect(await temporaries(sim, '/t')).toEqual([]);
    const reopened = await openTurnJournal({ dir: '/t', sessionId: 's1', fs: sim.view(), lock: DEAD_HOLDERS });
    expect(reopened.opened.tornTail).not.toBeNull();
    await reopened.close();
  });
});
