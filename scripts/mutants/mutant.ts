/** One mutant of the mutation matrix (scripts/mutation-matrix.ts) and the helpers that name its command. */
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

/** A base adapter with exactly one defect switched on. */
export interface Mutant {
  /** `<base>:<defect>`. */
  readonly name: string;
  readonly command: string;
  /** The requirement ids the defect violates: a check citing one of them must fail. */
  readonly requirements: readonly string[];
  /**
   * A per-request timeout shorter than the kit's default, for a defect that shows as requests never answered: every
   * one of them would otherwise wait the full default before the check fails.
   */
  readonly timeoutMs?: number;
  /**
   * A multiplier below 1 of every time limit of the mutant's run (the per-request timeout and the checks' hang guards,
   * `timeoutScale` of the kit), for a defect that shows as a guard waited out: a take-over that never comes.
   */
  readonly timeoutScale?: number;
  /**
   * True for a mutant on a PostgreSQL store: the matrix starts a throwaway server and names it in
   * `TJ_MUTANT_POSTGRES_URL` (packages/conformance/test/adapter/mutants/store-postgres.mjs).
   */
  readonly postgres?: boolean;
}

/** The reference adapter with one defect (packages/conformance/test/adapter/broken-adapter.mjs <defect>). */
export const reference = (defect: string, ...requirements: string[]): Mutant => ({
  name: `reference:${defect}`,
  command: `node ${join(root, 'packages/conformance/test/adapter/broken-adapter.mjs')} ${defect}`,
  requirements,
});

/** The Python example adapter with one defect (`TJ_MUTANT=<defect>`). */
export const py = (defect: string, ...requirements: string[]): Mutant => ({
  name: `python:${defect}`,
  command: `TJ_MUTANT=${defect} python3 ${join(root, 'examples/python-adapter/adapter.py')}`,
  requirements,
});

/** `mutant` with a shorter per-request timeout (see {@link Mutant.timeoutMs}). */
export const withTimeout = (mutant: Mutant, timeoutMs: number): Mutant => ({ ...mutant, timeoutMs });

/** `mutant` with every time limit of its run scaled down (see {@link Mutant.timeoutScale}). */
export const withTimeoutScale = (mutant: Mutant, timeoutScale: number): Mutant => ({ ...mutant, timeoutScale });

/** `mutant` on the PostgreSQL server the matrix starts (see {@link Mutant.postgres}). */
export const onPostgres = (mutant: Mutant): Mutant => ({ ...mutant, postgres: true });
