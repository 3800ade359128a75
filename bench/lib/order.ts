import { Prng } from '../generate/prng.js';
import { nowMs } from './stats.js';

/**
 * Times one sample of each of several latency series, in an order shuffled afresh for every sample (seeded, so a run
 * repeats its orders). A fixed order biases a series by its place in the loop, not by what it does: in
 * `durable-submit`, the series timed right after the pre-allocated floor's sync paid more per median sample than the
 * next one, and swapping the two series moved the difference with them (the figures are in
 * bench/results/history.md, "Tonight's changes, 2026-11-26 night"). With every order equally likely, each series
 * follows each other one equally often, and such an effect falls on all of them.
 */
export class ShuffledSamples {
  readonly #prng: Prng;
  readonly #order: number[];

  /** @param count how many series each sample times; `seed` fixes the sequence of orders. */
  constructor(count: number, seed = 0x0bde5) {
    if (!Number.isInteger(count) || count < 1)
      throw new RangeError(`series count must be a positive integer: ${count}`);
    this.#prng = new Prng(seed);
    this.#order = Array.from({ length: count }, (_, i) => i);
  }

  /**
   * Runs each function of `series` once, in a fresh random order, timing each from its call until it returns (or,
   * when it returns a promise, until that settles); resolves with the durations in ms in the order of `series`.
   * A series that returns nothing is not awaited, so a synchronous floor is not billed a promise reaction.
   */
  async sample(series: readonly (() => unknown)[]): Promise<number[]> {
    const order = this.#order;
    if (series.length !== order.length) throw new RangeError(`expected ${order.length} series, got ${series.length}`);
    // Fisher–Yates on the previous order: any permutation is as likely as any other.
    for (let i = order.length - 1; i > 0; i -= 1) {
      const j = this.#prng.int(0, i);
      const swap = order[i] as number;
      order[i] = order[j] as number;
      order[j] = swap;
    }
    const durations = new Array<number>(series.length).fill(0);
    for (const index of order) {
      const run = series[index] as () => unknown;
      const begin = nowMs();
      const returned = run();
      if (returned instanceof Promise) await returned;
      durations[index] = nowMs() - begin;
    }
    return durations;
  }
}
