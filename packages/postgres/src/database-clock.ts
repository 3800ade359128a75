import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { reportCleanupFailure } from './connection-errors.js';

/** How long an estimate of the server's clock is used before the next reading of `clock()` measures it again. */
const REFRESH_MS = 60_000;

/**
 * The database server's clock as this host estimates it: the host's wall clock plus the offset last measured by a
 * query of the server's `clock_timestamp()`, taken at the midpoint of the query's round trip (so off by at most half
 * of it). Hosts that share a store stamp and age records by this one clock, whatever their own clocks say
 * (TJ-STORE-026). Readings never decrease, so a new measurement that moves the estimate back holds it where it was
 * until the clock passes it (TJ-LIVE-031, TJ-LIVE-032).
 */
export class DatabaseClock {
  readonly #pool: pg.Pool;
  /** Server time minus host time, in ms; null until measured. */
  #offset: number | null = null;
  /** When the offset was measured, on the monotonic clock (the host's wall clock may step). */
  #measuredAt = Number.NEGATIVE_INFINITY;
  #last = Number.NEGATIVE_INFINITY;
  #measuring: Promise<number> | null = null;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** Asks the server for its time now (epoch ms), and takes the offset from this reading. */
  measure(): Promise<number> {
    this.#measuring ??= (async () => {
      try {
        const sent = Date.now();
        const { rows } = await this.#pool.query<{ ms: string }>(
          'SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms',
        );
        const received = Date.now();
        const server = Number(rows[0]?.ms);
        if (!Number.isFinite(server)) throw new Error(`the server's clock_timestamp() read as ${rows[0]?.ms}`);
        this.#offset = server - (sent + received) / 2;
        this.#measuredAt = performance.now();
        return server;
      } finally {
        this.#measuring = null;
      }
    })();
    return this.#measuring;
  }

  /** True once the offset was measured: before that, {@link DatabaseClock.now} refuses to guess. */
  get measured(): boolean {
    return this.#offset !== null;
  }

  /**
   * The server's time now (epoch ms), as estimated from the last measurement; measured again in the background once
   * the estimate is older than a minute. Throws when the store was never used (nothing measured yet).
   */
  now(): number {
    const offset = this.#offset;
    if (offset === null)
      throw new Error(
        "the database's clock has not been read yet: call the store's setup() (or open a journal) before its clock",
      );
    if (performance.now() - this.#measuredAt > REFRESH_MS && this.#measuring === null)
      // A failed refresh keeps the last offset: the clock goes on from it rather than fall back to the host's.
      this.measure().catch(reportCleanupFailure("measuring the database's clock"));
    this.#last = Math.max(this.#last, Date.now() + offset);
    return this.#last;
  }
}
