/** Statistics over timing samples. */
import type { FigureRow } from './types.js';

/** The q-quantile (0..1) of the samples, by nearest rank on the sorted values. */
export function quantile(samples: readonly number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] as number;
}

/** The median of the samples (mean of the two middle values for an even count). */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Milliseconds since an arbitrary origin, with sub-microsecond resolution. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** Runs `fn` once and returns its wall time in milliseconds. */
export async function timeMs(fn: () => unknown): Promise<number> {
  const start = nowMs();
  await fn();
  return nowMs() - start;
}

/**
 * Times two functions alternately (a, b, a, b, …) so drift in the machine (thermal state, other load, page cache)
 * falls on both equally; returns every sample of each. A warm-up run of each comes first and is not counted.
 */
export async function alternate(
  iterations: number,
  a: () => unknown,
  b: () => unknown,
): Promise<{ a: number[]; b: number[] }> {
  await a();
  await b();
  const out = { a: [] as number[], b: [] as number[] };
  for (let i = 0; i < iterations; i += 1) {
    gc();
    out.a.push(await timeMs(a));
    gc();
    out.b.push(await timeMs(b));
  }
  return out;
}

/** Runs a full garbage collection when node runs with --expose-gc, so one sample's garbage is not billed to the next. */
export function gc(): void {
  (globalThis as { gc?: () => void }).gc?.();
}

/** Rounds to `digits` significant digits, for the table and the JSON file. */
export function round(value: number, digits = 4): number {
  if (!Number.isFinite(value) || value === 0) return value;
  return Number(value.toPrecision(digits));
}

/** A measured row's ratio (rounded) and whether it meets `limit`, for a higher-is-better or lower-is-better ratio. */
export function judge(ratio: number, direction: 'higher' | 'lower', limit: number): { ratio: number; met: boolean } {
  return { ratio: round(ratio, 3), met: direction === 'higher' ? ratio >= limit : ratio <= limit };
}

/** What {@link throughputRow} needs: a higher-is-better rate and the floor's rate in the same unit. */
export interface ThroughputInput {
  readonly id: string;
  readonly name: string;
  readonly unit: string;
  /** The subject's rate. */
  readonly value: number;
  /** The floor's rate, measured in the same run. */
  readonly floor: number;
  /** The least `value / floor` that meets the target; absent for an information row. */
  readonly minRatio?: number;
  readonly note?: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** A throughput row (`ratio = value / floor`, higher is better), measured against a target or reported as information. */
export function throughputRow(input: ThroughputInput): FigureRow {
  const ratio = input.value / input.floor;
  const verdict =
    input.minRatio === undefined
      ? { target: 'none (reported)', ratio: round(ratio, 3), met: null, status: 'info' as const }
      : {
          target: `ratio >= ${input.minRatio}`,
          ...judge(ratio, 'higher', input.minRatio),
          status: 'measured' as const,
        };
  return {
    id: input.id,
    name: input.name,
    value: round(input.value),
    unit: input.unit,
    floor: round(input.floor),
    ratioDefinition: 'value / floor (throughput)',
    direction: 'higher',
    ...verdict,
    ...(input.note === undefined ? {} : { note: input.note }),
    ...(input.details === undefined ? {} : { details: input.details }),
  };
}

/** What {@link latencyInfoRow} needs: a lower-is-better time in milliseconds and the floor's, from the same run. */
export interface LatencyInfoInput {
  readonly id: string;
  readonly name: string;
  /** The subject's time, ms. */
  readonly value: number;
  /** The floor's time, ms, measured in the same run. */
  readonly floor: number;
  readonly note: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

/** A latency row reported as information (`ratio = value / floor`, lower is better, no target). */
export function latencyInfoRow(input: LatencyInfoInput): FigureRow {
  return {
    id: input.id,
    name: input.name,
    value: round(input.value),
    unit: 'ms',
    floor: round(input.floor),
    ratioDefinition: 'value / floor (latency); lower is better',
    direction: 'lower',
    target: 'none (reported)',
    ratio: round(input.value / input.floor, 3),
    met: null,
    status: 'info',
    note: input.note,
    ...(input.details === undefined ? {} : { details: input.details }),
  };
}
