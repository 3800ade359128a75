// Coverage of the finding-code rules (spec §13.1) for the codes the reference implementation defines.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FINDING_CODES } from '../../src/index.js';

/** The codes of the table in spec §13.1, read from the spec itself. */
function specCodes(): string[] {
  const spec = readFileSync(join(import.meta.dirname, '../../../../spec/v1/spec.md'), 'utf8');
  const section = spec.slice(spec.indexOf('### 13.1'), spec.indexOf('### 13.2'));
  return [...section.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1] as string);
}

describe('finding codes (spec §13.1)', () => {
  it('every code the reference defines beyond §13.1 is snake_case, differs from every §13.1 code, and starts with x_<org>_ (TJ-AUDIT-005, TJ-AUDIT-006)', () => {
    const table = specCodes();
    expect(table.length).toBeGreaterThan(30);
    const defined = Object.keys(FINDING_CODES);
    // The reference implements every §13.1 code, spelled exactly.
    for (const code of table) expect(defined).toContain(code);
    const further = defined.filter((code) => !table.includes(code));
    for (const code of further) {
      expect(code, 'a further code must be snake_case').toMatch(/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/);
      expect(table, 'a further code must differ from every §13.1 code').not.toContain(code);
      expect(code, 'a further code should start with x_<org>_').toMatch(/^x_[a-z0-9]+_[a-z0-9_]+$/);
    }
    // Today the reference defines no further code: all of its codes are the §13.1 table.
    expect(further).toEqual([]);
    // The §13.1 codes themselves are snake_case and unique, so a further code can always be told apart.
    for (const code of table) expect(code).toMatch(/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/);
    expect(new Set(table).size).toBe(table.length);
  });
});
