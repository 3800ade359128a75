import { describe, expect, it } from 'vitest';
import { DEFAULT_HISTORIES, historyCount } from '../../../src/adapter/runner/writer/histories.js';
import { catchProbability } from '../../../src/adapter/runner/writer/race.js';
import { runConformance } from '../../support/internals.js';
import { brokenAdapter } from '../support.js';

describe('writer/histories: generated histories from generated starting states (TJ-CONF-054)', () => {
  it('the default run has as many histories as catch a defect of one history in five with probability ≥ 99 %, and --runs scales them', () => {
    expect(DEFAULT_HISTORIES).toBe(21);
    expect(catchProbability(21, 0.2)).toBeGreaterThanOrEqual(0.99);
    expect(catchProbability(20, 0.2)).toBeLessThan(0.99);
    expect(historyCount(20, 9)).toBe(21);
    expect(historyCount(40, 9)).toBe(42);
    // At least one history per starting state, and none without rounds (the check is then not proven).
    expect(historyCount(3, 9)).toBe(9);
    expect(historyCount(0, 9)).toBe(0);
  });

  it('a writer that counts records for the next seq fails only on the compacted start, with the seed and steps printed (TJ-CONF-054, TJ-EVENT-003, TJ-EVENT-004)', async () => {
    const report = await runConformance({
      adapter: brokenAdapter('event-seq-from-count'),
      tier: 'writer',
      runs: 1,
      writerRounds: 1,
      only: ['writer/histories'],
    });
    const check = report.checks.find((c) => c.id === 'writer/histories');
    expect(check?.status).toBe('failed');
    expect(check?.title).toMatch(
      /\(9 histories, seed 20260511: a defect shown by one history in 5 is caught with probability 86\.5 %\)/,
    );
    expect(check?.situations).toBe(9);
    const details = check?.details.join('\n') ?? '';
    // Every failing history started from the compacted log: on any other start a count of records is the next seq.
    const failing = [...details.matchAll(/history \d+ \(seed \d+, (\w+) from (\w+)\): step/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    expect(failing.length).toBeGreaterThan(0);
    expect(new Set(failing)).toEqual(new Set(['event compacted']));
    expect(details).toMatch(/steps of history 0 \(seed \d+, event from compacted\): .*event-append/);
  }, 120_000);
});
