// Test settings read from the environment. A value that is set but unusable (empty, not a number, zero or negative
// where a count is asked for) is an error: silently falling back, or running zero cases, would let a CI run pass
// while testing nothing.

/** Raised when a test setting in the environment is set to a value the suites cannot use. */
export class TestSettingError extends Error {
  /** Stable code, so a test can assert the reason. */
  readonly code = 'invalid_test_setting';
  /** The environment variable at fault. */
  readonly variable: string;

  constructor(variable: string, expected: string, raw: string) {
    super(`${variable} must be ${expected}, got ${JSON.stringify(raw)} (unset it to use the default)`);
    this.name = 'TestSettingError';
    this.variable = variable;
  }
}

/** A positive integer count from `variable` (e.g. rounds, steps); `fallback` only when the variable is unset. */
export function countSetting(variable: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[variable];
  if (raw === undefined) return fallback;
  const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) throw new TestSettingError(variable, 'a positive integer', raw);
  return value;
}

/**
 * A 32-bit seed from `variable`; `fallback` only when the variable is unset. Negative values are accepted because
 * fast-check prints signed seeds, and a printed seed must replay.
 */
export function seedSetting(variable: string, fallback: number, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[variable];
  if (raw === undefined) return fallback;
  const value = /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < -0x80000000 || value > 0xffffffff) {
    throw new TestSettingError(variable, 'an integer seed between -2147483648 and 4294967295', raw);
  }
  return value;
}
