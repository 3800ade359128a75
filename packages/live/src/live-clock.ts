import { performance } from 'node:perf_hooks';

/**
 * The clocks a hub reads (spec §18.6): the wall clock, for the `ts` of records and the age of what they stamp, and a
 * monotonic clock, which no step of the wall clock moves, for durations measured inside the process.
 */
export interface LiveClock {
  /** Wall-clock time in epoch milliseconds (`Date.now`). */
  now(): number;
  /** Milliseconds on a clock that never steps and never goes back (`performance.now`); its origin is arbitrary. */
  monotonic(): number;
}

/** The system's clocks: `Date.now` and `performance.now`. */
export const systemClock: LiveClock = { now: () => Date.now(), monotonic: () => performance.now() };

/**
 * The times a hub decides with (spec §18.6), from a {@link LiveClock} read through one process:
 * - {@link ProcessTime.stamp}, the `ts` of a record written now: the wall clock, never below an earlier stamp of the
 *   process (TJ-LIVE-032), so that a step back of the wall clock does not make records written after it look older
 *   than records written before;
 * - {@link ProcessTime.now}, the "now" that ages are measured against (delivery expiry, retention): the wall clock,
 *   but never further from the wall clock read at the start than the monotonic time elapsed since, and never below an
 *   earlier reading (TJ-LIVE-031). A forward step therefore ages nothing the process has not waited for; a step back
 *   holds the time still until the wall clock is past it again.
 */
export class ProcessTime {
  readonly #clock: LiveClock;
  /** The wall and monotonic readings ages are bounded from. */
  #start: { readonly wall: number; readonly monotonic: number } | undefined;
  #lastNow = Number.NEGATIVE_INFINITY;
  #lastStamp = Number.NEGATIVE_INFINITY;

  /**
   * Takes the start readings now, or with `deferStart` at the first stamp or age asked for: a record store's clock (a
   * database's) can be read only once the store has reached its server, which is after the hub is made.
   */
  constructor(clock: LiveClock, options: { readonly deferStart?: boolean } = {}) {
    this.#clock = clock;
    if (options.deferStart !== true) this.#start = { wall: clock.now(), monotonic: clock.monotonic() };
  }

  #startFrom(wall: number): { readonly wall: number; readonly monotonic: number } {
    this.#start ??= { wall, monotonic: this.#clock.monotonic() };
    return this.#start;
  }

  /** The monotonic clock's reading (milliseconds): for idle time and a subscriber's lag. */
  monotonic(): number {
    return this.#clock.monotonic();
  }

  /** The stamp of a record written now, in epoch milliseconds (TJ-LIVE-032); a reading that is not finite as it is. */
  stamp(): number {
    const wall = this.#clock.now();
    if (!Number.isFinite(wall)) return wall; // the writer refuses it with a clear error
    this.#startFrom(wall);
    if (wall > this.#lastStamp) this.#lastStamp = wall;
    return this.#lastStamp;
  }

  /** Now, in epoch milliseconds, for the age of a record (TJ-LIVE-031). */
  now(): number {
    const wall = this.#clock.now();
    const start = this.#startFrom(wall);
    const elapsed = start.wall + (this.#clock.monotonic() - start.monotonic);
    const now = Math.min(wall, elapsed);
    if (!Number.isFinite(now)) return now; // compaction refuses it with a clear error
    if (now > this.#lastNow) this.#lastNow = now;
    return this.#lastNow;
  }
}
