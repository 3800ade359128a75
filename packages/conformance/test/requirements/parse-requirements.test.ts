import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRequirements } from '../support/internals.js';

describe('parseRequirements', () => {
  it('reads id, level, section and text, including continuation lines', () => {
    const markdown = [
      '## 3. Framing',
      '- **TJ-FRAME-001** A reader MUST split on LF only,',
      '  never on U+2028.',
      '- **TJ-FRAME-002** A writer SHOULD NOT write a BOM.',
      '',
      '```',
      '- **TJ-FRAME-009** inside a code fence MUST be ignored',
      '```',
    ].join('\n');
    expect(parseRequirements(markdown)).toEqual([
      {
        id: 'TJ-FRAME-001',
        level: 'MUST',
        section: '3. Framing',
        text: 'A reader MUST split on LF only, never on U+2028.',
      },
      { id: 'TJ-FRAME-002', level: 'SHOULD NOT', section: '3. Framing', text: 'A writer SHOULD NOT write a BOM.' },
    ]);
  });

  it('rejects a duplicate id and an item without a BCP 14 keyword', () => {
    expect(() => parseRequirements('- **TJ-A-001** MUST x\n- **TJ-A-001** MUST y')).toThrow(
      expect.objectContaining({ name: 'ConformanceError', code: 'invalid_requirements' }),
    );
    expect(() => parseRequirements('- **TJ-A-001** lowercase must only')).toThrow(/no BCP 14 keyword/);
  });

  it('finds requirements in the v1 spec, each with a level', () => {
    const spec = readFileSync(join(import.meta.dirname, '../../../../spec/v1/spec.md'), 'utf8');
    const requirements = parseRequirements(spec);
    expect(requirements.length).toBeGreaterThan(100);
    expect(new Set(requirements.map((r) => r.id.split('-')[1]))).toEqual(
      new Set([
        'FRAME',
        'FAM',
        'TURN',
        'EVENT',
        'RUN',
        'STATE',
        'COMPAT',
        'DERIVE',
        'DUR',
        'RECOV',
        'AUDIT',
        'RET',
        'REPLAY',
        'RUNSEM',
        'CONF',
        'LIVE',
        'STORE',
      ]),
    );
  });
});
