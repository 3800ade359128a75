// Crash at every byte (spec §3.1): a crash during an append leaves any prefix of a valid history on disk. For every
// cut point of generated valid histories of every JSONL family (every byte of short files, a seeded sample plus every
// line boundary of longer ones), the reference reader must derive from the prefix exactly what it derives from the
// complete records in it, report at most a torn tail beyond their findings, and report nothing of severity error
// (TJ-FRAME-003, TJ-FRAME-004, TJ-FRAME-024, TJ-FRAME-030). A state document is replaced atomically instead: a crash
// at any call of writeStateDocument leaves the old or the new document, never a mix (TJ-DUR-009).

import { readStateDocument } from '@turnjournal/reader';
import { writeStateDocument } from '@turnjournal/writer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedFileSystem, seededRandom } from '../../src/simulated-fs/index.js';
import { completeRecords, type History, histories, observe, severityOf, writeStoreFiles } from './histories.js';
import { DEAD_HOLDERS, realTempDir } from './sim-support.js';
import { checkProperty } from './support.js';

const EVERY_BYTE_UP_TO = 600;
const SAMPLED_CUTS = 40;

/** Cut points: every byte of a short file; otherwise every line boundary (±1) and a seeded sample. */
function cutPoints(bytes: Uint8Array, seed: number): number[] {
  if (bytes.length <= EVERY_BYTE_UP_TO) return Array.from({ length: bytes.length + 1 }, (_, i) => i);
  const cuts = new Set<number>([0, bytes.length]);
  for (let i = 0; i < bytes.length; i++)
    if (bytes[i] === 0x0a) for (const c of [i, i + 1, i + 2]) if (c <= bytes.length) cuts.add(c);
  const random = seededRandom(seed);
  for (let i = 0; i < SAMPLED_CUTS; i++) cuts.add(Math.floor(random() * (bytes.length + 1)));
  return [...cuts].sort((a, b) => a - b);
}

async function checkPrefixes(history: History, seed: number): Promise<void> {
  const tmp = realTempDir('tj-prefix-');
  try {
    const memo = new Map<number, Awaited<ReturnType<typeof observe>>>();
    const observeBytes = async (bytes: Uint8Array, key: number | undefined) => {
      const cached = key === undefined ? undefined : memo.get(key);
      if (cached !== undefined) return cached;
      writeStoreFiles(tmp.dir, { [history.path]: bytes });
      const observed = await observe(tmp.dir);
      if (key !== undefined) memo.set(key, observed);
      return observed;
    };
    for (const cut of cutPoints(history.bytes, seed)) {
      const complete = completeRecords(history.bytes, cut);
      const whole = await observeBytes(complete, complete.length);
      const torn = await observeBytes(history.bytes.subarray(0, cut), undefined);
      const where = `${history.family} history of ${history.bytes.length} bytes cut at ${cut}`;
      expect(torn.turns, where).toEqual(whole.turns);
      expect(torn.runs, where).toEqual(whole.runs);
      expect(torn.event_logs, where).toEqual(whole.event_logs);
      const tornCodes = torn.findings.map((f) => f.code);
      const tails = tornCodes.filter((code) => code === 'torn_tail').length;
      expect(tails, where).toBe(cut === complete.length ? 0 : 1);
      expect(tornCodes.filter((code) => code !== 'torn_tail').sort(), where).toEqual(
        whole.findings.map((f) => f.code).sort(),
      );
      expect(
        tornCodes.filter((code) => severityOf(code) === 'error'),
        where,
      ).toEqual([]);
    }
  } finally {
    tmp.remove();
  }
}

describe('crash at every byte of valid histories (TJ-FRAME-003, TJ-FRAME-004)', () => {
  for (const family of ['turn', 'event', 'run'] as const) {
    it(`${family} family: a prefix derives as its complete records, plus at most a torn tail (TJ-FRAME-003, TJ-FRAME-004, TJ-FRAME-024, TJ-FRAME-030)`, async () => {
      await checkProperty(
        `crash prefix: ${family} (TJ-FRAME-003)`,
        fc.asyncProperty(histories[family], fc.nat(), async ({ make }, seed) => checkPrefixes(await make(), seed)),
        { defaultRuns: family === 'turn' ? 20 : 12 },
      );
    }, 300_000);
  }

  it('state family: a crash at any call of writeStateDocument leaves the old or the new document (TJ-DUR-009, TJ-STATE-001)', async () => {
    const write = (sim: SimulatedFileSystem, n: number) =>
      writeStateDocument({
        root: '/s',
        sessionId: 's1',
        fs: sim.view(),
        lock: DEAD_HOLDERS,
        state: { messages: Array.from({ length: n }, (_, i) => ({ role: 'user', content: `m${i}` })) },
      });
    await checkProperty(
      'crash during a state replace (TJ-DUR-009)',
      fc.asyncProperty(fc.nat(60), fc.nat(), async (crashAfter, seed) => {
        const sim = new SimulatedFileSystem();
        await write(sim, 1);
        sim.crashAtCall(sim.calls + crashAfter);
        await write(sim, 2).catch(() => undefined);
        sim.crash(seededRandom(seed));
        const tmp = realTempDir('tj-state-');
        try {
          sim.materialize(tmp.dir, '/s');
          const state = await readStateDocument(`${tmp.dir}/sessions/state/s1.json`);
          expect(state.status).toBe('valid');
          const count = state.status === 'valid' ? state.state.messages.length : -1;
          expect([1, 2]).toContain(count);
        } finally {
          tmp.remove();
        }
      }),
      { defaultRuns: 100 },
    );
  }, 300_000);
});
