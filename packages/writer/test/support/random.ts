/** A seeded pseudo-random generator (mulberry32): the same seed gives the same sequence, so a failure can be replayed. */
export interface SeededRandom {
  /** The seed it started from (print it in failure messages). */
  readonly seed: number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  /** One element of `items`. */
  pick<T>(items: readonly T[]): T;
}

/** A {@link SeededRandom} from `seed` (a 32-bit integer). */
export function seededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    seed,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: (items) => items[Math.floor(next() * items.length)] as (typeof items)[number],
  };
}

/** A positive integer from the environment variable `name`, or `fallback` when it is unset or not one. */
export function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

/** The seed of a randomised suite: `TJ_CRASH_SEED` when set (to replay a failure or explore), otherwise 20260511. */
export function suiteSeed(): number {
  // Fixed by default so CI is reproducible (the same rounds every run); TJ_CRASH_SEED explores others.
  const raw = process.env.TJ_CRASH_SEED;
  const fixed = raw === undefined || raw === '' ? 20260511 : Number(raw);
  if (!Number.isSafeInteger(fixed)) throw new Error(`TJ_CRASH_SEED must be an integer, got ${JSON.stringify(raw)}`);
  return fixed >>> 0;
}
