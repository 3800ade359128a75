// Fixed seed and run count for property tests, so CI is reproducible; raise the count with TJ_PROPERTY_RUNS and
// replay a failure with TJ_PROPERTY_SEED (fast-check prints the seed and path of every failure).
import type fc from 'fast-check';

const DEFAULT_RUNS = 100;
const DEFAULT_SEED = 20260511;

function envInt(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return value;
}

/** Parameters for `fc.assert`: fixed seed and run count unless the environment asks otherwise. */
export function propertyParameters<T>(overrides: fc.Parameters<T> = {}): fc.Parameters<T> {
  return {
    seed: envInt('TJ_PROPERTY_SEED') ?? DEFAULT_SEED,
    numRuns: envInt('TJ_PROPERTY_RUNS') ?? DEFAULT_RUNS,
    ...overrides,
  };
}

/** The seed of every property: TJ_PROPERTY_SEED when set, otherwise the repository's fixed seed. */
export function propertySeed(): number {
  return envInt('TJ_PROPERTY_SEED') ?? DEFAULT_SEED;
}

/** The run count of a property: TJ_PROPERTY_RUNS when set, otherwise `defaultRuns` (a suite's own budget). */
export function propertyRuns(defaultRuns: number = DEFAULT_RUNS): number {
  return envInt('TJ_PROPERTY_RUNS') ?? defaultRuns;
}
