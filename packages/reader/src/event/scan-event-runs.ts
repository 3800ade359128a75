import { parseJsonText } from '../framing/parse-line-text.js';
import type { JournalSource } from '../framing/read-journal.js';

/** How a run's first finishing record ended it (spec §6.3). */
export type ScannedRunFinish = 'done' | 'error' | 'cancelled';

/** One run of an event log as {@link scanEventRuns} finds it. */
export interface ScannedRun {
  /** The run's `request_id`. */
  readonly requestId: string;
  /** The `seq` of its first `chat.started`. */
  readonly startedSeq: number;
  /** The `ts` of that record. */
  readonly startedTs: string;
  /** How its first finishing record ended it, or null while it has none. */
  finish: ScannedRunFinish | null;
  /** The `seq` of its first finishing record, or null. */
  finishedSeq: number | null;
  /** The `ts` of its first finishing record, or null. */
  finishedTs: string | null;
  /** True once any `delivery.ack` names it (spec §6.4). */
  acked: boolean;
  /** The `client_id`s of its acks. */
  readonly ackedBy: Set<string>;
  /** The seqs of further `chat.started` records for the same `request_id` (TJ-EVENT-010 violations). */
  readonly duplicateStarts: number[];
}

/** Options of {@link scanEventRuns}. */
export interface ScanEventRunsOptions {
  /** Where the bytes come from. */
  readonly source: JournalSource;
  /** Byte offset where the scan starts (a line start); 0 by default. */
  readonly start?: number;
  /** Byte offset where it stops; only lines ending before it are read. */
  readonly end: number;
  /** Bytes per read; 1 MiB by default. */
  readonly chunkBytes?: number;
  /**
   * The runs of the part before `start`, from a checkpoint's run index (TJ-EVENT-019): the scan continues them (the map
   * is copied, not changed). Empty by default.
   */
  readonly initial?: ReadonlyMap<string, ScannedRun>;
  /** The `seq` of the last record before `start` (a record must exceed it to count); -1 by default. */
  readonly afterSeq?: number;
}

const RUN_TYPES: Readonly<Record<string, ScannedRunFinish | 'started' | 'ack'>> = {
  'chat.started': 'started',
  'chat.done': 'done',
  'chat.error': 'error',
  'chat.cancelled': 'cancelled',
  'delivery.ack': 'ack',
};
const PATTERNS = Object.keys(RUN_TYPES).map((type) => Buffer.from(`"${type}"`));
const LF = 0x0a;

/**
 * The runs of an event log (spec §6.3, §6.4) without folding every record: a byte search finds the lines that can be
 * `chat.started`, `chat.done`, `chat.error`, `chat.cancelled` or `delivery.ack` records, and only those lines are
 * parsed. What a live session needs at open (every `request_id` the log holds, TJ-EVENT-010; the finished runs no
 * client acknowledged, TJ-REPLAY-015) then costs one sequential read at memory-search speed instead of a JSON parse
 * of every delta. Lines are taken in file order and a record whose `seq` does not exceed the last one taken is
 * skipped, like the fold's sequence checks (TJ-EVENT-013) for a log written by a conformant writer.
 */
export async function scanEventRuns(options: ScanEventRunsOptions): Promise<Map<string, ScannedRun>> {
  const runs = new Map<string, ScannedRun>();
  for (const [id, run] of options.initial ?? []) runs.set(id, copyRun(run));
  const chunkBytes = Math.max(64 * 1024, options.chunkBytes ?? 1024 * 1024);
  let position = options.start ?? 0;
  let carry: Buffer = Buffer.alloc(0);
  let lastSeq = options.afterSeq ?? -1;
  while (position < options.end) {
    const chunk = Buffer.alloc(Math.min(chunkBytes, options.end - position));
    const n = await options.source.read(chunk, 0, chunk.length, position);
    if (n <= 0) break;
    position += n;
    const data = carry.length === 0 ? chunk.subarray(0, n) : Buffer.concat([carry, chunk.subarray(0, n)]);
    const complete = data.lastIndexOf(LF) + 1;
    const lines = data.subarray(0, complete);
    carry = Buffer.from(data.subarray(complete));
    const starts = new Set<number>();
    for (const pattern of PATTERNS) {
      for (let at = lines.indexOf(pattern); at >= 0; at = lines.indexOf(pattern, at + pattern.length)) {
        starts.add(lines.lastIndexOf(LF, at) + 1);
      }
    }
    for (const start of [...starts].sort((a, b) => a - b)) {
      const seq = applyLine(runs, lines.subarray(start, lines.indexOf(LF, start)), lastSeq);
      if (seq !== null) lastSeq = seq;
    }
  }
  return runs;
}

function applyLine(runs: Map<string, ScannedRun>, bytes: Buffer, lastSeq: number): number | null {
  const value = parseJsonText(bytes.toString('utf8'));
  if (typeof value !== 'object' || value === null) return null;
  const { seq, ts, type, payload } = value as Record<string, unknown>;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq <= lastSeq) return null;
  if (typeof type !== 'string' || typeof ts !== 'string' || typeof payload !== 'object' || payload === null)
    return null;
  return applyRunRecord(runs, seq, ts, type, payload as Record<string, unknown>) ? seq : null;
}

/** A copy of a run that shares nothing mutable with it. */
export function copyRun(run: ScannedRun): ScannedRun {
  return { ...run, ackedBy: new Set(run.ackedBy), duplicateStarts: [...run.duplicateStarts] };
}

/**
 * Applies one record to a map of runs as {@link scanEventRuns} does (spec §6.3, §6.4): a `chat.started` adds its run
 * (or notes a duplicate start), the first finishing record ends it, a `delivery.ack` marks it acknowledged. Writers
 * keep their run index (TJ-EVENT-019) with it. Returns false for a record of any other type or without a
 * `request_id`, which changes nothing.
 */
export function applyRunRecord(
  runs: Map<string, ScannedRun>,
  seq: number,
  ts: string,
  type: string,
  payload: Readonly<Record<string, unknown>>,
): boolean {
  const kind = Object.hasOwn(RUN_TYPES, type) ? RUN_TYPES[type] : undefined;
  const requestId = payload.request_id;
  if (kind === undefined || typeof requestId !== 'string' || requestId.length === 0) return false;
  const run = runs.get(requestId);
  if (kind === 'started') {
    if (run === undefined)
      runs.set(requestId, {
        requestId,
        startedSeq: seq,
        startedTs: ts,
        finish: null,
        finishedSeq: null,
        finishedTs: null,
        acked: false,
        ackedBy: new Set(),
        duplicateStarts: [],
      });
    else run.duplicateStarts.push(seq);
  } else if (kind === 'ack') {
    if (run !== undefined) {
      run.acked = true;
      const client = payload.client_id;
      if (typeof client === 'string') run.ackedBy.add(client);
    }
  } else if (run !== undefined && run.finish === null) {
    run.finish = kind;
    run.finishedSeq = seq;
    run.finishedTs = ts;
  }
  return true;
}
