/**
 * `@turnjournal/conformance/vitest`: the black-box conformance run as a vitest suite, for implementations tested
 * with vitest. `vitest` is an optional peer dependency; import this entry only from test files.
 * @module
 */
import { describe, it } from 'vitest';
import { type ConformanceTier, runConformance } from './adapter/runner.js';

/** Options of {@link defineConformanceSuite}. */
export interface ConformanceSuiteOptions {
  /** The adapter command, run with `sh -c` (spec/v1/adapter.md). */
  readonly adapter: string;
  /** Tiers to run (default `all`). */
  readonly tier?: ConformanceTier;
  /** Generated reader cases and writer rounds (default 100 and 20). */
  readonly runs?: number;
  /** Seed of generated cases and kill points. */
  readonly seed?: number;
  /** Per-request timeout in milliseconds (default 10 s). */
  readonly timeoutMs?: number;
  /** Run only the checks whose id starts with one of these prefixes. */
  readonly only?: readonly string[];
}

/**
 * Registers one `describe` with one `it` per conformance check (named by its check id and requirement ids). The
 * run happens while vitest collects the suite; a failed check fails its `it` with the check's details, a check that
 * covers only SHOULD requirements passes with a warning in its name (TJ-CONF-004), a skipped check is skipped.
 */
export function defineConformanceSuite(options: ConformanceSuiteOptions): void {
  describe(`turnjournal conformance: ${options.adapter}`, async () => {
    const report = await runConformance({
      adapter: options.adapter,
      ...(options.tier === undefined ? {} : { tier: options.tier }),
      ...(options.runs === undefined ? {} : { runs: options.runs, writerRounds: options.runs }),
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      ...(options.only === undefined ? {} : { only: options.only }),
    });
    for (const check of report.checks) {
      const name = `${check.id} [${check.requirements.join(', ')}]${check.status === 'warning' ? ' (warning)' : ''}`;
      if (check.status === 'skipped') {
        it.skip(`${name}: ${check.details.join('; ')}`, () => undefined);
        continue;
      }
      it(name, () => {
        if (check.status === 'failed' || check.status === 'stale_expected_failure')
          throw new Error(`${check.title}\n${check.details.join('\n')}`);
      });
    }
  });
}
