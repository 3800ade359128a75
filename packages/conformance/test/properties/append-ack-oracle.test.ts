// The acknowledgement oracle (TJ-CONF-009, TJ-DUR-024) for AppendFile in `every` and `group` mode under power loss:
// many concurrent appends, a crash at a random file-system call, a crash image drawn by the simulated file system
// (unsynced writes lost, torn, zeroed or reordered; unsynced entries dropped), then a reopen that repairs the tail
// and appends again. The power-loss complement of the SIGKILL tests in packages/writer/test/durability.
import { readJournal } from '@turnjournal/reader';
import type { Durability } from '@turnjournal/writer';
import { AppendFile } from '@turnjournal/writer/file-system';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedFileSystem, seededRandom } from '../../src/simulated-fs/index.js';
import { bytesSource, DEAD_HOLDERS, splitCommitted } from './sim-support.js';
import { checkProperty } from './support.js';

const DIR = '/store/logs';
const FILE = `${DIR}/events.jsonl`;

interface Round {
  /** How many appends are started at once. */
  readonly appends: number;
  /** The crash point: this many file-system calls after the round starts. */
  readonly crashAfter: number;
  /** Seed of the crash image. */
  readonly seed: number;
}

function record(n: number): Record<string, unknown> {
  return { seq: n, ts: '2026-05-11T00:00:00Z', type: 'x.test.append', payload: { n, pad: 'p'.repeat((n * 37) % 90) } };
}

/** The `n` of every record the reference reader accepts from `bytes`, and its findings' codes. */
async function survivors(bytes: Uint8Array): Promise<{ ns: number[]; codes: string[] }> {
  const ns: number[] = [];
  const codes: string[] = [];
  for await (const batch of readJournal(FILE, { source: bytesSource(bytes) }))
    for (const item of batch) {
      if (item.kind === 'finding') codes.push(item.finding.code);
      else ns.push((item.record.value.payload as { n: number }).n);
    }
  return { ns, codes };
}

/**
 * How often the interesting cases happened, so a property that never exercises them fails instead of passing. One
 * counter per test: a shared one would let the `group` test pass on what the `every` test exercised.
 */
interface Seen {
  ackedAndLost: number;
  tornTail: number;
  survivedUnacked: number;
  /** Crash images that end in pre-allocated space (spec §3.8): the writer's layout, not only appends, was crashed. */
  endedInSpace: number;
}

async function runRounds(durability: Durability, rounds: readonly Round[], seen: Seen): Promise<void> {
  const sim = new SimulatedFileSystem();
  await sim.mkdir('/store');
  await sim.mkdir(DIR);
  await sim.fsyncDirectory('/');
  await sim.fsyncDirectory('/store');
  let next = 0;
  let expected: number[] = []; // the records in the file, in order, after the last crash
  for (const round of rounds) {
    const acked = new Set<number>();
    const attempted: number[] = [];
    sim.crashAtCall(sim.calls + round.crashAfter);
    let writer: AppendFile | undefined;
    try {
      writer = await AppendFile.open(FILE, { durability, fs: sim.view(), lock: DEAD_HOLDERS });
    } catch {
      // The crash point fell inside the open: nothing of this round was appended.
    }
    if (writer !== undefined) {
      const opened = writer;
      await Promise.allSettled(
        Array.from({ length: round.appends }, () => {
          const n = next++;
          attempted.push(n);
          return opened.appendRecord(record(n)).then(() => {
            acked.add(n);
          });
        }),
      );
    }
    sim.crash(seededRandom(round.seed));
    const bytes = sim.peek(FILE) ?? new Uint8Array(0);
    const { ns, codes } = await survivors(bytes);
    // No damage: only complete records and at most a torn tail (TJ-FRAME-003, TJ-FRAME-030).
    expect(codes.filter((code) => code !== 'torn_tail' && code !== 'unknown_record')).toEqual([]);
    expect(codes.filter((code) => code === 'torn_tail').length).toBeLessThanOrEqual(1);
    // Gap-free prefix of what was appended, nothing twice (TJ-CONF-009).
    const appended = [...expected, ...attempted];
    expect(ns).toEqual(appended.slice(0, ns.length));
    // Every acknowledged record survives (TJ-DUR-024), and so does everything durable before this round.
    expect(ns.length).toBeGreaterThanOrEqual(expected.length);
    for (const n of acked) expect(ns).toContain(n);
    // The torn tail is never a complete line: it is what the next open moves aside.
    expect(splitCommitted(bytes).tail.includes(0x0a)).toBe(false);
    if (acked.size > 0 && acked.size < attempted.length) seen.ackedAndLost += 1;
    if (codes.includes('torn_tail')) seen.tornTail += 1;
    if (ns.some((n) => attempted.includes(n) && !acked.has(n))) seen.survivedUnacked += 1;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0) seen.endedInSpace += 1;
    expected = ns;
  }
}

const rounds = fc.array(
  fc.record({
    appends: fc.integer({ min: 1, max: 24 }),
    crashAfter: fc.integer({ min: 0, max: 120 }),
    seed: fc.integer({ min: 0, max: 0x7fffffff }),
  }),
  { minLength: 1, maxLength: 4 },
);

describe('AppendFile under simulated power loss: the ack oracle (TJ-CONF-009, TJ-DUR-024)', () => {
  for (const durability of ['every', 'group'] as const) {
    it(`${durability} mode: acknowledged records survive; survivors are a gap-free prefix plus a torn tail (TJ-CONF-009, TJ-DUR-003, TJ-DUR-005, TJ-DUR-024${durability === 'group' ? ', TJ-DUR-014' : ''})`, async () => {
      const seen: Seen = { ackedAndLost: 0, tornTail: 0, survivedUnacked: 0, endedInSpace: 0 };
      await checkProperty(
        `ack oracle: AppendFile ${durability} (TJ-CONF-009)`,
        fc.asyncProperty(rounds, (r) => runRounds(durability, r, seen)),
        {
          defaultRuns: 150,
        },
      );
      // Not vacuous: crashes fell between acknowledgements, tore tails and kept unacknowledged records.
      expect(seen.ackedAndLost).toBeGreaterThan(0);
      expect(seen.tornTail).toBeGreaterThan(0);
      expect(seen.survivedUnacked).toBeGreaterThan(0);
      expect(seen.endedInSpace, 'crash images with pre-allocated space after the lines (TJ-DUR-033)').toBeGreaterThan(
        0,
      );
    }, 300_000);
  }

  it('the oracle catches a writer that acknowledges before syncing (TJ-DUR-003): `none` mode fails it', async () => {
    // Proof that the property has teeth: `none` acknowledges on write, so some crash image loses an acked record.
    // Only the acknowledgement check counts: `expect(ns).toContain(n)` failing means an acked record was lost.
    let caught = false;
    for (let seed = 1; seed <= 40 && !caught; seed++) {
      const seen: Seen = { ackedAndLost: 0, tornTail: 0, survivedUnacked: 0, endedInSpace: 0 };
      try {
        await runRounds('none', [{ appends: 8, crashAfter: 1000, seed }], seen);
      } catch (error) {
        caught = /to include \d+/.test(String(error));
      }
    }
    expect(caught).toBe(true);
  });
});
