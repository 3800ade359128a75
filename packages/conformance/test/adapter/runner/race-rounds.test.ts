import { describe, expect, it } from 'vitest';
import { catchProbability, roundsToCatch } from '../../../src/adapter/runner/writer/race.js';

describe('race rounds are sized from the catch probability the check states (TJ-CONF-045)', () => {
  it('90 rounds are the fewest that catch a defect of 5 % of rounds with probability ≥ 99 %', () => {
    expect(roundsToCatch(0.99, 0.05)).toBe(90);
    expect(catchProbability(90, 0.05)).toBeGreaterThanOrEqual(0.99);
    expect(catchProbability(89, 0.05)).toBeLessThan(0.99);
  });

  it('the 10 rounds of before catch such a defect less than half of the time', () => {
    expect(catchProbability(10, 0.05)).toBeCloseTo(0.401, 3);
  });
});
