import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FINDING_CODES } from '../../src/v1/index.js';

// The finding-code table of spec §13.1 and FINDING_CODES must be the same table: codes spelled exactly, with the
// same severity and repairable flag (TJ-AUDIT-001, TJ-AUDIT-002).
const spec = readFileSync(join(import.meta.dirname, '../../../../spec/v1/spec.md'), 'utf8');
const section = spec.slice(spec.indexOf('### 13.1 Finding codes'), spec.indexOf('### 13.2'));
const rows = [...section.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*([a-z ]+?)\s*\|\s*([a-z ]+?)\s*\|/gm)].map(
  ([, code, severity, repairable]) => ({
    code,
    severity,
    repairable,
  }),
);

describe('FINDING_CODES (spec §13.1)', () => {
  it('lists exactly the codes of the spec table (TJ-AUDIT-001)', () => {
    expect(rows.length).toBeGreaterThan(30);
    expect(Object.keys(FINDING_CODES).sort()).toEqual(rows.map((r) => r.code).sort());
  });

  it('gives each code the default severity and repairable flag of the table (TJ-AUDIT-002)', () => {
    for (const row of rows) {
      const info = FINDING_CODES[row.code as keyof typeof FINDING_CODES];
      // Context-dependent rows ("warn or info", "yes or no") name the default first.
      expect(`${row.code}: ${info.severity}`).toBe(`${row.code}: ${row.severity?.split(' or ')[0]}`);
      expect(`${row.code}: ${info.repairable ? 'yes' : 'no'}`).toBe(`${row.code}: ${row.repairable?.split(' or ')[0]}`);
    }
  });
});
