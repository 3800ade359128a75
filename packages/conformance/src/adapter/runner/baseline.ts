import type { CheckReport, CheckStatus } from '../report.js';

/** The status a check earns by itself, before the expected-failures baseline is applied. */
export type OwnStatus = Extract<CheckStatus, 'passed' | 'failed' | 'warning' | 'skipped'>;

/** What {@link evaluateBaseline} needs to know about the run besides its checks. */
export interface BaselineRun {
  /** The expected-failures baseline: check id → reason (TJ-CONF-017). */
  readonly baseline: ReadonlyMap<string, string>;
  /**
   * Whether this run could have run the check `id` (its tier ran and `--only` selected it). An entry for a check
   * the run did not select says nothing about that check, so it is neither expected nor stale.
   */
  readonly judged: (id: string) => boolean;
  /** False when `start` failed: no check ran, so no baseline entry can be judged. */
  readonly started: boolean;
}

/** The result of {@link evaluateBaseline}. */
export interface BaselineEvaluation {
  /** Every check with its final status, then one `stale_expected_failure` entry per entry naming no check. */
  readonly checks: CheckReport[];
  /** Baseline entries this run could not judge (not selected, tier not run, or `start` failed). */
  readonly unjudged: string[];
}

/**
 * The final status of one check under the baseline: a listed failing check is an expected failure, a listed passing
 * check is stale (TJ-CONF-017); a skipped check stays skipped, whether listed or not.
 */
export function applyBaseline(check: CheckReport & { status: OwnStatus }, baseline: ReadonlyMap<string, string>) {
  const reason = baseline.get(check.id);
  if (reason === undefined || check.status === 'skipped') return check;
  if (check.status === 'passed')
    return {
      ...check,
      status: 'stale_expected_failure' as const,
      details: [...check.details, 'listed in the expected-failures baseline but passed: remove the entry'],
    };
  return { ...check, status: 'expected_failure' as const, details: [...check.details, `expected failure: ${reason}`] };
}

/**
 * Applies the expected-failures baseline to the checks of a run (TJ-CONF-017). Pure: the same checks and baseline
 * give the same answer. Only an entry whose check now passes is stale — and an entry naming no check at all, when
 * the run selected that id and got past `start` (so a typo in the baseline does not go unnoticed).
 */
export function evaluateBaseline(
  checks: readonly (CheckReport & { status: OwnStatus })[],
  run: BaselineRun,
): BaselineEvaluation {
  const evaluated: CheckReport[] = checks.map((check) => applyBaseline(check, run.baseline));
  const known = new Set(checks.map((c) => c.id));
  const unjudged: string[] = [];
  for (const [id, reason] of run.baseline) {
    if (known.has(id)) continue;
    if (!run.started || !run.judged(id)) {
      unjudged.push(id);
      continue;
    }
    evaluated.push({
      id,
      title: 'expected-failures entry for a check that does not exist',
      tier: 'adapter',
      requirements: ['TJ-CONF-017'],
      status: 'stale_expected_failure',
      details: [`no such check (reason given: ${reason}): remove the entry`],
      situations: 0,
      duration_ms: 0,
    });
  }
  return { checks: evaluated, unjudged };
}
