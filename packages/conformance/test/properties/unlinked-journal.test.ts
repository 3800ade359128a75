// A journal removed while its writer holds it open (TJ-DUR-036), on the simulated file system: for random schedules of
// concurrent appends with the file unlinked (or renamed over) at a random point, no append called after the removal is
// acknowledged, the writer refuses for good once it noticed, and a reopen creates the journal afresh.
import type { Durability } from '@turnjournal/writer';
import { AppendFile } from '@turnjournal/writer/file-system';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedFileSystem } from '../../src/simulated-fs/index.js';
import { DEAD_HOLDERS, splitCommitted } from './sim-support.js';
import { checkProperty } from './support.js';

const DIR = '/store/s1';
const FILE = `${DIR}/events.jsonl`;

const line = (n: number) => new TextEncoder().encode(`{"n":${n}}\n`);

interface Schedule {
  readonly durability: Durability;
  /** `true`: start one append; `false`: wait for every append started so far. */
  readonly steps: readonly boolean[];
  /** The step before which the journal is removed. */
  readonly removeAt: number;
  /** How: unlinked, or replaced by another file renamed over its name. */
  readonly how: 'unlink' | 'rename-over';
}

const REFUSALS = new Set(['journal_unlinked', 'writer_poisoned', 'append_cancelled']);

async function run(schedule: Schedule, seen: { refused: number }): Promise<void> {
  const sim = new SimulatedFileSystem();
  await sim.mkdir('/store');
  await sim.mkdir(DIR);
  const fs = sim.view();
  const file = await AppendFile.open(FILE, { durability: schedule.durability, fs, lock: DEAD_HOLDERS });
  const after = new Set<number>();
  const acked = new Set<number>();
  const refused: string[] = [];
  let pending: Promise<unknown>[] = [];
  let n = 0;
  for (const [i, append] of schedule.steps.entries()) {
    if (i === schedule.removeAt) {
      if (schedule.how === 'unlink') await sim.unlink(FILE);
      else {
        const fd = await sim.open(`${DIR}/other`, 'create-exclusive');
        await sim.close(fd);
        await sim.rename(`${DIR}/other`, FILE);
      }
    }
    if (!append) {
      await Promise.allSettled(pending);
      pending = [];
      continue;
    }
    const k = n++;
    if (i >= schedule.removeAt) after.add(k);
    pending.push(
      file.appendLine(line(k)).then(
        () => acked.add(k),
        (error: { code?: string }) => refused.push(error.code ?? String(error)),
      ),
    );
  }
  await Promise.allSettled(pending);
  // The oracle: nothing written after the removal was acknowledged; every refusal says why.
  for (const k of after) expect(acked.has(k), `append ${k}, called after the removal, was acknowledged`).toBe(false);
  for (const code of refused) expect(REFUSALS.has(code), code).toBe(true);
  if (after.size > 0) {
    expect(refused).toContain('journal_unlinked');
    expect(file.poisoned).toBe(true);
    seen.refused += 1;
  }
  await file.close().catch(() => undefined);
  // A reopen writes to a journal that a reader finds: created afresh after an unlink, the new file after a rename.
  const reopened = await AppendFile.open(FILE, { durability: schedule.durability, fs, lock: DEAD_HOLDERS });
  await reopened.appendLine(line(1000));
  await reopened.close();
  const { lines } = splitCommitted(sim.peek(FILE) ?? new Uint8Array(0));
  expect(lines.at(-1)).toBe('{"n":1000}');
  if (schedule.removeAt < schedule.steps.length) expect(lines).toEqual(['{"n":1000}']);
}

const schedules = fc
  .record({
    durability: fc.constantFrom<Durability>('every', 'group'),
    steps: fc.array(fc.boolean(), { minLength: 1, maxLength: 30 }),
    removeAt: fc.nat({ max: 30 }),
    how: fc.constantFrom<'unlink' | 'rename-over'>('unlink', 'rename-over'),
  })
  .map((s) => ({ ...s, removeAt: Math.min(s.removeAt, s.steps.length) }));

describe('a journal removed under its writer, on the simulated file system (TJ-DUR-036)', () => {
  it('no append called after the removal is acknowledged; a reopen creates the journal afresh (TJ-DUR-036)', async () => {
    const seen = { refused: 0 };
    await checkProperty(
      'unlinked journal (TJ-DUR-036)',
      fc.asyncProperty(schedules, (s) => run(s, seen)),
      { defaultRuns: 150 },
    );
    // Not vacuous: removals fell before appends that the writer then refused.
    expect(seen.refused).toBeGreaterThan(0);
  }, 300_000);
});
