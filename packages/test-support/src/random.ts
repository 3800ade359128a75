// The repository's one seeded generator is the conformance kit's product `Random` (mulberry32); tests use it through
// this small functional view, so a failing round replays from its printed seed and no second copy exists.
// test-support is never built or published: it runs only under vitest and tsx, against the sources.
import { Random } from '../../conformance/src/adapter/random.js';
import { seedSetting } from './settings.js';

/** A seeded pseudo-random generator: the same seed gives the same sequence, so a failure can be replayed. */
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
  const random = new Random(seed);
  return {
    seed,
    next: () => random.next(),
    int: (min, max) => random.int(min, max),
    pick: (items) => random.pick(items),
  };
}

/** The seed of a randomised non-property suite: `TJ_CRASH_SEED` when set (to replay or explore), else 20260511. */
export function suiteSeed(env: NodeJS.ProcessEnv = process.env): number {
  return seedSetting('TJ_CRASH_SEED', 20260511, env) >>> 0;
}
