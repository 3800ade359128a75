/** Quick (CI smoke run, under a minute) or full (the published figures). */
export type BenchMode = 'quick' | 'full';

/** Which way a figure is better. */
export type Direction = 'higher' | 'lower';

/** One row of the results table and of `latest.json`. */
export interface FigureRow {
  /** Stable id of the row, e.g. `read-derive-100mb`. */
  readonly id: string;
  /** What is measured, for people. */
  readonly name: string;
  /** The measured figure, or null when it cannot be measured yet (pending). */
  readonly value: number | null;
  /** Unit of `value` (and of `floor` unless `floorUnit` says otherwise). */
  readonly unit: string;
  /** The physical floor measured in the same run, or null when the row has none. */
  readonly floor: number | null;
  /** Unit of `floor` when it differs from `unit`. */
  readonly floorUnit?: string;
  /** How the ratio is defined for this row, e.g. `value / floor`. */
  readonly ratioDefinition?: string;
  /** The ratio the target applies to, or null. */
  readonly ratio: number | null;
  /** Whether a higher or lower ratio (or value, for rows without a floor) is better. */
  readonly direction: Direction;
  /** The target in words, e.g. `ratio >= 0.6`; `none` for information rows. */
  readonly target: string;
  /** Whether the target is met; null for information rows and pending rows. */
  readonly met: boolean | null;
  /** `measured`, `pending` (the code under test does not exist yet) or `info` (no target). */
  readonly status: 'measured' | 'pending' | 'info';
  /** Short remark printed under the table (sizes, iterations, why pending). */
  readonly note?: string;
  /** Raw numbers behind the row (iterations, samples, bytes…). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** What every figure receives. */
export interface BenchContext {
  readonly mode: BenchMode;
  /** A fresh directory on the same disk as the repository, deleted after the figure. */
  readonly workDir: string;
  /** Repository root. */
  readonly root: string;
  /** Progress messages (stderr). */
  log(message: string): void;
}

/** One figure of the harness: it measures a subject and its floor and returns rows. */
export interface Figure {
  /** Stable id (used by `--only`). */
  readonly id: string;
  /** One line about it. */
  readonly title: string;
  run(context: BenchContext): Promise<FigureRow[]>;
}
