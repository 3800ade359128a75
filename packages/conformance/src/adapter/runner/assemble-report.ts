import type { StartResult } from '../protocol.js';
import type { ConformanceReport } from '../report.js';
import { type BaselineRun, evaluateBaseline } from './baseline.js';
import type { RecordedCheck } from './record.js';

/** What the report says about the run besides its checks. */
export interface RunDescription {
  readonly adapter: string;
  readonly tier: 'reader' | 'writer' | 'all';
  readonly runs: number;
  readonly writerRounds: number;
  readonly seed: number;
  /** The per-request time limit, scaled, and the scale (TJ-CONF-044). */
  readonly timeoutMs: number;
  readonly timeoutScale: number;
  readonly expectedFailuresPath: string | undefined;
  /** The claim `start` answered, or null when it failed. */
  readonly claims: StartResult | null;
  /** `--only` or `--tier` left out checks the claim calls for. */
  readonly partial: boolean;
  /** Skipped checks a claimed level needs. */
  readonly notProven: readonly string[];
}

type Counts = ConformanceReport['summary'];
type RequirementCounts = ConformanceReport['requirements'][string];

const zero = (): Counts => ({
  passed: 0,
  failed: 0,
  warning: 0,
  skipped: 0,
  expected_failure: 0,
  stale_expected_failure: 0,
});

/** Assembles the report: the baseline applied (TJ-CONF-017), counts per status and per requirement, the verdicts. */
export function assembleReport(
  run: RunDescription,
  recorded: readonly RecordedCheck[],
  baseline: Omit<BaselineRun, 'started'>,
): ConformanceReport {
  const { checks } = evaluateBaseline(recorded, { ...baseline, started: run.claims !== null });
  const summary = zero();
  const requirements: Record<string, RequirementCounts> = {};
  for (const check of checks) {
    summary[check.status]++;
    for (const id of check.requirements) {
      const counts = requirements[id] ?? { ...zero(), situations: 0 };
      requirements[id] = counts;
      counts[check.status]++;
      counts.situations += check.situations;
    }
  }
  const { claims } = run;
  const ok = summary.failed === 0 && summary.stale_expected_failure === 0;
  return {
    spec: 'v1',
    protocol: 1,
    adapter: {
      command: run.adapter,
      ...(claims === null ? {} : { name: claims.name, version: claims.version, language: claims.language }),
      levels: [...(claims?.levels ?? [])],
      families: [...(claims?.families ?? [])],
      durability: [...(claims?.durability ?? [])],
      features: [...(claims?.features ?? [])],
    },
    options: {
      tier: run.tier,
      runs: run.runs,
      writer_rounds: run.writerRounds,
      seed: run.seed,
      expected_failures: run.expectedFailuresPath ?? null,
      timeout_ms: run.timeoutMs,
      timeout_scale: run.timeoutScale,
    },
    ok,
    partial: run.partial,
    not_proven: [...run.notProven],
    // A run that passes only thanks to a baseline entry is not a conformance claim (TJ-CONF-003); neither is a partial
    // run, nor one that skipped a check a claimed level needs (no false greens).
    conformant: ok && baseline.baseline.size === 0 && !run.partial && run.notProven.length === 0,
    summary,
    requirements,
    checks,
  };
}
