import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkProperty, propertyFailureRoot, propertyParameters, writeFailureReport } from '../src/index.js';

describe('property runs', () => {
  it('propertyParameters gives the shared seed and run count, and a suite budget only when the variable is unset', () => {
    const saved = { ...process.env };
    try {
      delete process.env.TJ_PROPERTY_RUNS;
      delete process.env.TJ_PROPERTY_SEED;
      expect(propertyParameters({ defaultRuns: 1000, endOnFailure: true })).toEqual({
        endOnFailure: true,
        seed: 20260511,
        numRuns: 1000,
      });
      process.env.TJ_PROPERTY_RUNS = '3';
      process.env.TJ_PROPERTY_SEED = '9';
      expect(propertyParameters({ defaultRuns: 1000 })).toEqual({ seed: 9, numRuns: 3 });
      process.env.TJ_PROPERTY_RUNS = '';
      expect(() => propertyParameters()).toThrow('TJ_PROPERTY_RUNS must be a positive integer, got ""');
    } finally {
      process.env = saved;
    }
  });

  it('two failures of one property with one seed write two reports (concurrent runs never overwrite each other)', () => {
    const first = writeFailureReport('same property', 5, 'report one');
    const second = writeFailureReport('same property', 5, 'report two');
    expect(first).not.toBe(second);
    expect(dirname(dirname(first))).toBe(propertyFailureRoot());
    expect(readFileSync(first, 'utf8')).toBe('report one\n');
    expect(readFileSync(second, 'utf8')).toBe('report two\n');
  });

  it('checkProperty throws a report with the seed, the replay line, the counterexample and where it was written', async () => {
    const failing = fc.property(fc.integer({ min: 0, max: 1000 }), (n) => n < 10);
    const error = await checkProperty('n stays small', failing, { defaultRuns: 100 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/^property failed: n stays small\nseed: -?\d+\n/);
    expect(error?.message).toContain('counterexample: [10]');
    expect(error?.message).toMatch(/replay: TJ_PROPERTY_SEED=-?\d+ \(fast-check path /);
    const file = /counterexample written to (.+)$/.exec(error?.message ?? '')?.[1] ?? '';
    expect(readFileSync(file, 'utf8')).toContain('counterexample: [10]');
  });
});
