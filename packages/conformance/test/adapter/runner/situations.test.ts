import { describe, expect, it } from 'vitest';
import { formatConformanceReport } from '../../../src/adapter/format.js';
import { assembleReport, type RunDescription } from '../../../src/adapter/runner/assemble-report.js';
import { CheckRecorder } from '../../../src/adapter/runner/record.js';

// The report says how hard each requirement was tested: the situations each check exercised (stores, rounds) and
// their sum per requirement id, in the JSON report and the text summary (TJ-CONF-051).

const RUN: RunDescription = {
  adapter: 'test',
  tier: 'all',
  runs: 0,
  writerRounds: 0,
  seed: 1,
  timeoutMs: 1000,
  timeoutScale: 1,
  expectedFailuresPath: undefined,
  claims: null,
  partial: true,
  notProven: [],
};

async function recorded() {
  const recorder = new CheckRecorder(new Map(), new Map(), () => true);
  await recorder.record('a/rounds', 'ninety rounds', 'writer', ['TJ-DUR-017', 'TJ-DUR-025'], async () => ({
    failures: [],
    situations: 90,
  }));
  await recorder.record('a/one', 'one case', 'reader', ['TJ-DUR-017', 'TJ-FRAME-001'], async () => ({ failures: [] }));
  await recorder.record('a/failed', 'one failing case', 'reader', ['TJ-FRAME-002'], async () => ({
    failures: ['wrong'],
  }));
  await recorder.record('a/skipped', 'skipped', 'reader', ['TJ-FRAME-001', 'TJ-FRAME-003'], async () => ({
    skip: 'not claimed',
  }));
  return recorder.checks;
}

describe('situations per check and per requirement (TJ-CONF-051)', () => {
  it('counts a check of rounds by its rounds, one of a case as one, a skipped one as none, and sums them per id', async () => {
    const report = assembleReport(RUN, await recorded(), { baseline: new Map(), judged: () => true });
    expect(report.checks.map((c) => [c.id, c.situations])).toEqual([
      ['a/rounds', 90],
      ['a/one', 1],
      ['a/failed', 1],
      ['a/skipped', 0],
    ]);
    expect(report.requirements['TJ-DUR-017']).toMatchObject({ passed: 2, situations: 91 });
    expect(report.requirements['TJ-DUR-025']).toMatchObject({ passed: 1, situations: 90 });
    expect(report.requirements['TJ-FRAME-001']).toMatchObject({ passed: 1, skipped: 1, situations: 1 });
    expect(report.requirements['TJ-FRAME-003']).toMatchObject({ skipped: 1, situations: 0 });
  });

  it('the text says how many requirements each band of situations holds and names those of a single one', async () => {
    const report = assembleReport(RUN, await recorded(), { baseline: new Map(), judged: () => true });
    const text = formatConformanceReport(report, 'text');
    expect(text).toContain(
      'situations per requirement (JSON report: requirements.<id>.situations): none (every check skipped): 1, 1: 2, 10–99: 2\n',
    );
    expect(text).toContain('exercised by a single situation: TJ-FRAME-001, TJ-FRAME-002\n');
    // The table of requirements not all passed gains the column.
    expect(text).toMatch(/requirement {7}passed failed warning skipped xfail stale situations\n/);
    expect(text).toMatch(/TJ-FRAME-002 {5}\s+0\s+1\s+0\s+0\s+0\s+0\s+1\n/);
  });
});
