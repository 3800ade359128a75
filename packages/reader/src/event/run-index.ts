import type { JournalSource } from '../framing/read-journal.js';
import { readJournal } from '../framing/read-journal.js';
import { type ScannedRun, type ScannedRunFinish, scanEventRuns } from './scan-event-runs.js';

/**
 * One run in the run index a `checkpoint` carries (spec §6.6, TJ-EVENT-019): the state, as of the checkpoint, of a run
 * started before it.
 */
export interface RunIndexEntry {
  /** The run's `request_id`. */
  readonly request_id: string;
  /** The `seq` of its first `chat.started`. */
  readonly started_seq: number;
  /** The `ts` of that record. */
  readonly started_ts: string;
  /** How its first finishing record ended it, or null while it has none. */
  readonly outcome: ScannedRunFinish | null;
  /** The `seq` of that finishing record, or null. */
  readonly finished_seq: number | null;
  /** Its `ts`, or null. */
  readonly finished_ts: string | null;
  /** True once a `delivery.ack` named it. */
  readonly acked: boolean;
  /** The `client_id`s of its acks. */
  readonly acked_by: readonly string[];
}

/** The run index of a checkpoint for `runs`, in start order (TJ-EVENT-019). */
export function runIndexEntries(runs: Iterable<ScannedRun>): RunIndexEntry[] {
  const entries: RunIndexEntry[] = [];
  for (const run of runs)
    entries.push({
      request_id: run.requestId,
      started_seq: run.startedSeq,
      started_ts: run.startedTs,
      outcome: run.finish,
      finished_seq: run.finishedSeq,
      finished_ts: run.finishedTs,
      acked: run.acked,
      acked_by: [...run.ackedBy],
    });
  return entries.sort((a, b) => a.started_seq - b.started_seq);
}

const OUTCOMES = new Set<unknown>(['done', 'error', 'cancelled', null]);

function isEntry(value: unknown): value is RunIndexEntry {
  if (typeof value !== 'object' || value === null) return false;
  const e = value as Record<string, unknown>;
  const seqOrNull = (v: unknown) => v === null || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);
  return (
    typeof e.request_id === 'string' &&
    e.request_id.length > 0 &&
    typeof e.started_seq === 'number' &&
    seqOrNull(e.started_seq) &&
    typeof e.started_ts === 'string' &&
    OUTCOMES.has(e.outcome) &&
    seqOrNull(e.finished_seq) &&
    (e.finished_ts === null || typeof e.finished_ts === 'string') &&
    (e.outcome === null) === (e.finished_seq === null) &&
    typeof e.acked === 'boolean' &&
    Array.isArray(e.acked_by) &&
    e.acked_by.every((c) => typeof c === 'string')
  );
}

/**
 * The runs a checkpoint's `payload.runs` lists (TJ-EVENT-019), or null when the checkpoint has no run index (a file
 * written before it existed) or a malformed one: the caller then scans the records before the checkpoint
 * (TJ-EVENT-020).
 */
export function runsFromCheckpoint(payload: unknown): Map<string, ScannedRun> | null {
  if (typeof payload !== 'object' || payload === null) return null;
  const list = (payload as { runs?: unknown }).runs;
  if (!Array.isArray(list) || !list.every(isEntry)) return null;
  const runs = new Map<string, ScannedRun>();
  for (const e of list as RunIndexEntry[]) {
    if (runs.has(e.request_id)) return null;
    runs.set(e.request_id, {
      requestId: e.request_id,
      startedSeq: e.started_seq,
      startedTs: e.started_ts,
      finish: e.outcome,
      finishedSeq: e.finished_seq,
      finishedTs: e.finished_ts,
      acked: e.acked,
      ackedBy: new Set(e.acked_by),
      duplicateStarts: [],
    });
  }
  return runs;
}

/** Options of {@link readRunIndex}. */
export interface ReadRunIndexOptions {
  /** Where the bytes come from. */
  readonly source: JournalSource;
  /** Bytes of the file to read. */
  readonly size: number;
  /**
   * Byte offset of the line holding the last valid checkpoint's run index, as the recovery found it: the checkpoint's
   * line, or its last part's for a split checkpoint (TJ-EVENT-030); null when the log has none.
   */
  readonly checkpointOffset: number | null;
  /** Line-size limit in bytes; 16 MiB by default. */
  readonly maxLineBytes?: number;
}

/** What {@link readRunIndex} found. */
export interface RunIndexRead {
  /** Every run of the log, by `request_id`, in start order. */
  readonly runs: Map<string, ScannedRun>;
  /** Where the scan of run records began: the checkpoint when it carried an index, else 0 (the whole log). */
  readonly scannedFrom: number;
}

/**
 * Every run of an event log at a cost that follows its tail (TJ-EVENT-020): the run index of the last valid
 * checkpoint, continued by a scan of the run records after it. A log whose last checkpoint carries no index (written
 * before TJ-EVENT-019, or without any checkpoint) is scanned from its start, as before; its next checkpoint carries one.
 */
export async function readRunIndex(options: ReadRunIndexOptions): Promise<RunIndexRead> {
  const { source, size, checkpointOffset } = options;
  if (checkpointOffset !== null) {
    const checkpoint = await readRecordAt(source, size, checkpointOffset, options.maxLineBytes);
    const initial = checkpoint === null ? null : runsFromCheckpoint(checkpoint.payload);
    if (checkpoint !== null && initial !== null) {
      const runs = await scanEventRuns({
        source,
        start: checkpointOffset,
        end: size,
        initial,
        afterSeq: checkpoint.seq,
      });
      return { runs, scannedFrom: checkpointOffset };
    }
  }
  return { runs: await scanEventRuns({ source, end: size }), scannedFrom: 0 };
}

/** True for the last part of a split checkpoint, the one that carries its run index (TJ-EVENT-030). */
function isLastPart(value: { type?: unknown; payload?: unknown }): boolean {
  if (value.type !== 'checkpoint.part' || typeof value.payload !== 'object' || value.payload === null) return false;
  const { part, parts } = value.payload as { part?: unknown; parts?: unknown };
  return typeof part === 'number' && part === (parts as number) - 1;
}

/** The record of the line at `offset` (salvaged after damage as a tolerant reader would), or null. */
async function readRecordAt(
  source: JournalSource,
  size: number,
  offset: number,
  maxLineBytes: number | undefined,
): Promise<{ seq: number; payload: unknown } | null> {
  const bounded: JournalSource = {
    read: (buffer, at, length, position) =>
      position >= size ? Promise.resolve(0) : source.read(buffer, at, Math.min(length, size - position), position),
  };
  for await (const batch of readJournal('', {
    source: bounded,
    startOffset: offset,
    mode: 'tolerant',
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
  })) {
    for (const item of batch) {
      if (item.kind !== 'record') continue;
      const value = item.record.value as { seq?: unknown; type?: unknown; payload?: unknown };
      if (typeof value.seq !== 'number' || !(value.type === 'checkpoint' || isLastPart(value))) return null;
      return { seq: value.seq, payload: value.payload };
    }
  }
  return null;
}
