// Writer bugs the property suites found, each as the smallest test that shows it, kept as regression tests: each fails
// on the writer that had the bug.
import { readFileSync } from 'node:fs';
import { checkStore } from '@turnjournal/reader';
import { openTurnJournal, sweepTurnJournals, type TurnJournal } from '@turnjournal/writer';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedFileSystem, seededRandom } from '../../src/simulated-fs/index.js';
import { DEAD_HOLDERS, realTempDir } from './sim-support.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('writer bugs the property suites found, now fixed', () => {
  // Found by turn-journal-model.test.ts (a submit of a turn id that a compaction pruned). After a sweep prunes turn t0, the journal ends with `compacted` listing t0 in removed_turn_ids.
  // The writer's turn table forgets t0, so submit({turnId: 't0'}) answers created: true and appends `submitted`; but
  // the reader excludes every record of a turn listed in removed_turn_ids (TJ-DERIVE-006), so the acknowledged turn
  // is invisible to every reader, recovery included: an acknowledged submission that no derivation shows
  // (TJ-DUR-001, TJ-DUR-024), and a retried submission of the pruned turn is written again (TJ-TURN-003).
  it('a submit of a pruned turn id is refused, never acknowledged and then dropped by derivation (TJ-DERIVE-006, TJ-DUR-024, TJ-TURN-003)', async () => {
    const tmp = realTempDir('tj-bug-');
    cleanups.push(tmp.remove);
    const journal = await openTurnJournal({ dir: tmp.dir, sessionId: 's1', clock: () => 1_000_000 });
    await journal.submit({ turnId: 't0', content: 'first' });
    await journal.complete('t0');
    await journal.close();
    const sweep = await sweepTurnJournals(tmp.dir, { retentionSeconds: 0 });
    expect(sweep.sessions[0]?.prunedTurnIds).toEqual(['t0']);
    expect(readFileSync(`${tmp.dir}/s1.jsonl`, 'utf8')).toContain('"removed_turn_ids":["t0"]');
    const reopened = await openTurnJournal({ dir: tmp.dir, sessionId: 's1' });
    // The writer's answer: the retired id is refused (the other correct answer, a derived turn, is impossible: readers
    // drop every record of a removed turn).
    await expect(reopened.submit({ turnId: 't0', content: 'second' })).rejects.toMatchObject({
      code: 'turn_id_conflict',
    });
    await reopened.close();
    expect(readFileSync(`${tmp.dir}/s1.jsonl`, 'utf8')).not.toContain('"content":"second"');
    const derived = (await checkStore([tmp.dir])).sessions.flatMap((s) => s.turns.map((t) => t.turnId));
    expect(derived).not.toContain('t0');
  });

  // Found by turn-journal-model.test.ts: [fault(fdatasync fails during submit(t0)), crash(during submit(t0), after 0
  // calls, seed 0)]. A submit whose record was written but not synced (its fdatasync failed, or the process was
  // killed between write and fdatasync) leaves the line in the page cache only. A reopened writer reads it, takes the
  // turn as submitted, and answers a retry of the same submission with `created: false` at once: an acknowledgement
  // (TJ-DUR-001) of a record that is not durable. A power loss then loses the acknowledged turn (TJ-DUR-024). The
  // writer should fsync an existing file when it opens it (before trusting what it reads), or sync before answering
  // a retry. The scenarios below run the power loss with 16 crash images each; one losing the turn is enough.
  const retryAfter = async (disturb: (sim: SimulatedFileSystem, journal: TurnJournal) => Promise<void>) => {
    const lost: number[] = [];
    for (let seed = 1; seed <= 16; seed++) {
      const sim = new SimulatedFileSystem();
      const open = () =>
        openTurnJournal({ dir: '/store/_turn_journal', sessionId: 's1', fs: sim.view(), lock: DEAD_HOLDERS });
      await disturb(sim, await open());
      const reopened = await open();
      const retry = await reopened.submit({ turnId: 't0', content: 'hello' });
      expect(retry).toMatchObject({ created: false, state: 'submitted' }); // acknowledged
      sim.crash(seededRandom(seed));
      const text = new TextDecoder().decode(sim.peek('/store/_turn_journal/s1.jsonl') ?? new Uint8Array(0));
      if (!text.includes('"turn_id":"t0"')) lost.push(seed);
    }
    expect(lost, `crash images that lost the acknowledged turn: seeds ${lost.join(', ')}`).toEqual([]);
  };

  it('after a failed fdatasync and a reopen, a retried submit is acknowledged only once its record is durable (TJ-DUR-001, TJ-DUR-021, TJ-DUR-024)', async () => {
    await retryAfter(async (sim, journal) => {
      sim.inject({ op: 'fdatasync', path: 's1.jsonl', errno: 'EIO' });
      await expect(journal.submit({ turnId: 't0', content: 'hello' })).rejects.toMatchObject({ code: 'write_failed' });
      await journal.close();
    });
  });

  it('after a process kill between write and fdatasync, a retried submit is acknowledged only once its record is durable (TJ-DUR-001, TJ-DUR-024)', async () => {
    await retryAfter(async (sim, journal) => {
      // The submit's calls: stat and readdir of the directory (other shards; the simulator keeps no change time, so
      // the writer lists it every time), write, fdatasync. Die just before the fdatasync.
      sim.crashAtCall(sim.calls + 3);
      // The kill surfaces as the failure of the fdatasync call the process died in.
      await expect(journal.submit({ turnId: 't0', content: 'hello' })).rejects.toMatchObject({
        code: 'write_failed',
        errno: 'ESIMCRASH',
      });
      expect(new TextDecoder().decode(sim.peek('/store/_turn_journal/s1.jsonl'))).toContain('"turn_id":"t0"');
      sim.kill();
    });
  });
});
