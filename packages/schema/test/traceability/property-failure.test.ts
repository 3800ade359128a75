// Coverage of TJ-CONF-010 for the schema package's property suites: with the kit's parameters (fixed seed from
// TJ_PROPERTY_SEED), a failing property reports its seed, its replay path and the shrunk counterexample.

import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

describe('property failures can be replayed (spec §17.2)', () => {
  it('a failing property prints the seed, the path and the shrunk counterexample, and replaying them fails the same way (TJ-CONF-010)', () => {
    const parameters = propertyParameters<[number]>();
    expect(typeof parameters.seed).toBe('number');
    // Fails for every integer of 1000 or more: the shrunk counterexample is exactly 1000.
    const property = fc.property(fc.integer({ min: 0, max: 1_000_000 }), (n) => n < 1000);
    let message = '';
    try {
      fc.assert(property, { ...parameters, numRuns: 200 });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain(`seed: ${parameters.seed}`);
    const path = /path: "([^"]+)"/.exec(message)?.[1];
    expect(path).toBeDefined();
    expect(message).toContain('Counterexample: [1000]');
    // The printed seed and path replay the failure directly to the same counterexample.
    const replay = fc.check(property, { seed: parameters.seed, path, endOnFailure: true });
    expect(replay.failed).toBe(true);
    expect(replay.counterexample).toEqual([1000]);
  });
});
