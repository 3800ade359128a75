import { describe, expect, it } from 'vitest';
import {
  countSetting,
  DEFAULT_PROPERTY_RUNS,
  DEFAULT_PROPERTY_SEED,
  propertyRuns,
  propertySeed,
  seedSetting,
  suiteSeed,
  TestSettingError,
} from '../src/index.js';

function errorOf(run: () => unknown): TestSettingError {
  try {
    run();
  } catch (error) {
    if (error instanceof TestSettingError) return error;
    throw error;
  }
  throw new Error('expected a TestSettingError');
}

describe('test settings from the environment', () => {
  it('unset means the default', () => {
    expect(propertyRuns(undefined, {})).toBe(DEFAULT_PROPERTY_RUNS);
    expect(propertyRuns(7, {})).toBe(7);
    expect(propertySeed({})).toBe(DEFAULT_PROPERTY_SEED);
    expect(countSetting('TJ_CRASH_ROUNDS', 15, {})).toBe(15);
  });

  it('a valid value replaces the suite budget and the seed', () => {
    expect(propertyRuns(1000, { TJ_PROPERTY_RUNS: '5' })).toBe(5);
    expect(propertySeed({ TJ_PROPERTY_SEED: '42' })).toBe(42);
    // fast-check prints signed seeds: a printed seed must replay.
    expect(propertySeed({ TJ_PROPERTY_SEED: '-1939373737' })).toBe(-1939373737);
    expect(propertySeed({ TJ_PROPERTY_SEED: '0' })).toBe(0);
  });

  it.each(['', ' ', 'abc', '0', '-3', '1.5', '1e3', '0x10', '9007199254740993'])(
    'TJ_PROPERTY_RUNS=%j is an invalid_test_setting error, never zero cases or the default',
    (raw) => {
      const error = errorOf(() => propertyRuns(100, { TJ_PROPERTY_RUNS: raw }));
      expect(error.code).toBe('invalid_test_setting');
      expect(error.variable).toBe('TJ_PROPERTY_RUNS');
      expect(error.message).toBe(
        `TJ_PROPERTY_RUNS must be a positive integer, got ${JSON.stringify(raw)} (unset it to use the default)`,
      );
    },
  );

  it.each(['', 'abc', '1.5', '4294967296', '-2147483649'])(
    'TJ_PROPERTY_SEED=%j is an invalid_test_setting error',
    (raw) => {
      const error = errorOf(() => propertySeed({ TJ_PROPERTY_SEED: raw }));
      expect(error.code).toBe('invalid_test_setting');
      expect(error.variable).toBe('TJ_PROPERTY_SEED');
    },
  );

  it('the other suites use the same rules (TJ_CRASH_ROUNDS, TJ_CRASH_SEED)', () => {
    expect(errorOf(() => countSetting('TJ_CRASH_ROUNDS', 15, { TJ_CRASH_ROUNDS: '0' })).variable).toBe(
      'TJ_CRASH_ROUNDS',
    );
    expect(errorOf(() => suiteSeed({ TJ_CRASH_SEED: 'x' })).variable).toBe('TJ_CRASH_SEED');
    expect(suiteSeed({ TJ_CRASH_SEED: '-1' })).toBe(0xffffffff);
    expect(seedSetting('S', 3, {})).toBe(3);
  });
});
