import { AdapterFailure, requestTimeouts } from '../process.js';
import type { CheckReport } from '../report.js';
import { applyBaseline, type OwnStatus } from './baseline.js';

/**
 * What a check's body returns: its failures (none: passed), or why it was skipped. `unproven` marks a skip that
 * leaves a claimed level unproven (a tool the check needs is missing): the run then cannot be CONFORMANT.
 */
export type Outcome =
  | {
      readonly failures: readonly string[];
      /** The independent situations the check exercised (stores, rounds), when more than one; default 1. */
      readonly situations?: number;
    }
  | { readonly skip: string; readonly unproven?: true };

/** A check as recorded, before the baseline turns its status into an expected or stale failure. */
export type RecordedCheck = CheckReport & { status: OwnStatus };

/** Runs check bodies and records their outcome: one concern, shared by every tier. */
export class CheckRecorder {
  /** The checks recorded so far, in run order, with their own statuses. */
  readonly checks: RecordedCheck[] = [];
  /** Ids of the checks skipped with `unproven`. */
  readonly unproven: string[] = [];

  constructor(
    private readonly levels: ReadonlyMap<string, string>,
    private readonly baseline: ReadonlyMap<string, string>,
    /** Whether `--only` selected the check; unselected checks are not run at all. */
    readonly selected: (id: string) => boolean,
    private readonly onCheck?: (check: CheckReport, done: number) => void,
  ) {}

  /** Runs `body` as the check `id` (unless not selected) and records its outcome; never throws. */
  async record(
    id: string,
    title: string,
    tier: CheckReport['tier'],
    requirements: readonly string[],
    body: () => Promise<Outcome>,
  ): Promise<void> {
    if (!this.selected(id)) return;
    const started = performance.now();
    const timeouts = { count: 0 };
    let outcome: Outcome;
    try {
      outcome = await requestTimeouts.run(timeouts, body);
    } catch (error) {
      outcome = { failures: [error instanceof AdapterFailure ? error.message : `harness error: ${String(error)}`] };
    }
    let status: OwnStatus;
    let details: string[];
    if ('skip' in outcome) {
      status = 'skipped';
      details = [outcome.skip];
      if (outcome.unproven === true) this.unproven.push(id);
    } else if (outcome.failures.length === 0) {
      status = 'passed';
      details = [];
    } else {
      details = [...outcome.failures];
      // A check covering only SHOULD requirements is a warning (TJ-CONF-004).
      const shouldOnly =
        requirements.length > 0 && requirements.every((r) => (this.levels.get(r) ?? 'MUST').startsWith('SHOULD'));
      status = shouldOnly ? 'warning' : 'failed';
    }
    // A request left unanswered is no wrong answer: the report says so, and how to tell a slow machine from a hang.
    const timedOut = status !== 'passed' && status !== 'skipped' && timeouts.count > 0;
    if (timedOut)
      details.unshift(
        'timed out: the adapter did not answer a request within its time limit (not a wrong answer). On a slow or loaded machine run again with --timeout-scale 3 (or TURNJOURNAL_TIMEOUT_SCALE=3); a hang fails at any scale.',
      );
    const check: RecordedCheck = {
      id,
      title,
      tier,
      requirements: [...requirements],
      status,
      details,
      ...(timedOut ? { timed_out: true } : {}),
      situations: 'skip' in outcome ? 0 : (outcome.situations ?? 1),
      duration_ms: Math.round(performance.now() - started),
    };
    this.checks.push(check);
    this.onCheck?.(applyBaseline(check, this.baseline), this.checks.length);
  }
}
