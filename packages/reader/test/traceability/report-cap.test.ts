// Coverage of TJ-AUDIT-013 (spec §13.3): hostile input cannot make a report grow one finding per line without bound.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildReport, checkStore } from '../../src/index.js';

function storeWithDamage(lines: Record<string, number>): string {
  const store = mkdtempSync(join(tmpdir(), 'tj-cap-'));
  mkdirSync(join(store, '_turn_journal'));
  for (const [name, bad] of Object.entries(lines)) {
    const good = `${JSON.stringify({ version: 1, event: 'submitted', turn_id: 't1', session_id: name, created_at: 1, role: 'user', content: 'x' })}\n`;
    writeFileSync(join(store, '_turn_journal', `${name}.jsonl`), good + 'not json\n'.repeat(bad));
  }
  return store;
}

describe('finding caps (spec §13.3)', () => {
  it('keeps at most 1,000 findings per code and file by default and states how many it left out (TJ-AUDIT-013)', async () => {
    const store = storeWithDamage({ big: 1234, small: 7 });
    const check = await checkStore([store]);
    const malformed = (file: string) =>
      check.findings.filter((f) => f.code === 'malformed_line' && f.file === join(store, '_turn_journal', file));
    expect(malformed('big.jsonl')).toHaveLength(1000);
    // The cap is per file: the small file's findings are all kept.
    expect(malformed('small.jsonl')).toHaveLength(7);
    expect(check.omitted).toEqual({ malformed_line: 234 });
    // The kept findings are the first ones, in file order.
    expect(malformed('big.jsonl').map((f) => f.line)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 2));
    const report = buildReport(check, { command: 'check', mode: 'tolerant', paths: [store] });
    expect(report.summary.omitted).toEqual({ malformed_line: 234 });
    // The cap is configurable.
    const tight = await checkStore([store], { maxFindingsPerCode: 5 });
    expect(tight.findings.filter((f) => f.code === 'malformed_line')).toHaveLength(10);
    expect(tight.omitted).toEqual({ malformed_line: 1234 - 5 + 7 - 5 });
  });
});
