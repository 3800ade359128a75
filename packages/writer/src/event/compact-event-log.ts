import { EventLogFold, type JournalSource, readJournal } from '@turnjournal/reader';
import type { JournalCursor, WritableJournal } from '@turnjournal/reader/record-store';
import { EVENT_FINISHING_TYPES, isAcceptedRecord } from '@turnjournal/schema';
import { AppendFile } from '../append/append-file.js';
import { JournalWriteError, WriterError } from '../errors.js';
import type { FileSystem } from '../fs/file-system.js';
import { nodeFileSystem } from '../fs/file-system.js';
import { holdForeignFlock } from '../fs/foreign-flock.js';
import type { AcquireLockOptions } from '../fs/lock.js';
import { DEFAULT_RETENTION_SECONDS } from '../retention/retention-window.js';

/** Options of {@link compactEventLog} and {@link EventLog.compact}. */
export interface CompactEventLogOptions {
  /**
   * The retention window in seconds (TJ-RET-001): no record whose `ts` is younger than `now` minus the window is
   * removed (TJ-RET-013). 48 hours by default. 0 lets every record of a finished, delivered run go.
   */
  readonly retentionSeconds?: number;
  /** The current time in epoch milliseconds; the clock of the open writer, or `Date.now()`, by default. */
  readonly now?: number;
  /**
   * The delivery window in seconds (TJ-LIVE-015, TJ-RET-018): a finished run that no `delivery.ack` names and whose
   * finishing record is older than `now` minus the window counts as delivered, with outcome `expired`, so it no longer
   * blocks compaction. 48 hours by default; `Infinity` keeps undelivered runs forever (the behaviour before expiry).
   */
  readonly deliveryWindowSeconds?: number;
}

/** The default delivery window: 48 hours (TJ-LIVE-015). */
export const DEFAULT_DELIVERY_WINDOW_SECONDS = 48 * 3600;

/**
 * How far past `now` a record's `ts` may be and still count as its time (TJ-RET-019): 5 minutes, room for the skew
 * between the clocks of hosts that share a store. A later `ts` was written by a clock that was ahead.
 */
const FUTURE_TOLERANCE_MS = 5 * 60_000;

/** Options of {@link compactEventLog}: a standalone compaction, which takes the file's lock itself. */
export interface CompactEventLogFileOptions extends CompactEventLogOptions {
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /** Options of the lock acquisition. */
  readonly lock?: AcquireLockOptions;
  /** Line-size limit in bytes; 16 MiB by default. */
  readonly maxLineBytes?: number;
  /**
   * How long to wait for a foreign writer's flock on `<dir>/.<name>.lock` (gptme's `.events.jsonl.lock`, spec
   * TJ-DUR-050) before failing with `journal_locked`; 10,000 ms by default.
   */
  readonly foreignLockWaitMs?: number;
}

/**
 * Why a compaction removed nothing (when a record kept it from every checkpoint but one that already leads the log,
 * that record's reason is given):
 * - `no_checkpoint`: the log has no valid checkpoint to keep as its first record (TJ-RET-012);
 * - `nothing_before_checkpoint`: the last checkpoint already leads the log;
 * - `unfinished_run`: a run that has not finished has a record before every usable checkpoint (TJ-RET-013);
 * - `undelivered_run`: a finished run without a `delivery.ack` has a record before every usable checkpoint;
 * - `retention`: a record younger than the retention window (or with a `ts` that does not parse) comes before every
 *   usable checkpoint.
 */
export type EventLogCompactionBlock =
  | 'no_checkpoint'
  | 'nothing_before_checkpoint'
  | 'unfinished_run'
  | 'undelivered_run'
  | 'retention';

/** What a compaction of an event log did (spec §14.2). */
export interface EventLogCompaction {
  /** True when the file was rewritten without its prefix. */
  readonly compacted: boolean;
  /** Records (parsed lines, valid or not) removed before the checkpoint kept. */
  readonly removedRecords: number;
  /** Damaged lines (malformed, zero-filled, oversized) removed with that prefix. */
  readonly removedDamagedLines: number;
  /** Bytes removed. */
  readonly removedBytes: number;
  /** The `seq` of the checkpoint that now leads the log, or null when nothing was compacted. */
  readonly checkpointSeq: number | null;
  /** The first accepted `seq` of the log after the call: below it, replay answers `compacted` (TJ-REPLAY-013). */
  readonly firstRetainedSeq: number | null;
  /** Why nothing was removed, when `compacted` is false. */
  readonly reason?: EventLogCompactionBlock;
  /**
   * The finished runs without a `delivery.ack` whose delivery expired (TJ-RET-018): they no longer blocked compaction.
   * No ack is written for them (TJ-EVENT-012); a live snapshot no longer lists them as undelivered (TJ-LIVE-015).
   */
  readonly expiredRuns: readonly string[];
  /**
   * Records whose `ts` is more than 5 minutes past `now` (written while a clock was ahead): each counted as written
   * when the first later record with a `ts` that is not in the future was, or now when none is (TJ-RET-019).
   */
  readonly futureStampedRecords: number;
  /** The record that stopped compaction from reaching a later checkpoint, when one did. */
  readonly blockedBy?: {
    /** Where its line is: an opaque cursor of the log (for a file store, the line's byte offset). */
    readonly cursor: JournalCursor;
    /** Its `seq`, when it has one. */
    readonly seq: number | null;
    /** The run it belongs to, when a run blocked. */
    readonly requestId?: string;
  };
}

/** Bytes per read while compacting. */
const CHUNK_BYTES = 1024 * 1024;
const DAMAGE_CODES = new Set(['malformed_line', 'zero_filled_region', 'oversized_line']);

interface Candidate {
  readonly offset: number;
  readonly seq: number;
  readonly recordsBefore: number;
  readonly damagedBefore: number;
}

interface Blocker {
  readonly offset: number;
  readonly seq: number | null;
  readonly reason: 'unfinished_run' | 'undelivered_run' | 'retention';
  readonly requestId?: string;
}

/** The plan of a compaction: the checkpoint to keep, or why there is none. */
interface CompactionPlan {
  readonly keep: Candidate | undefined;
  readonly reason: EventLogCompactionBlock | undefined;
  readonly blocker: Blocker | undefined;
  readonly firstSeq: number | null;
  readonly expiredRuns: readonly string[];
  readonly futureStamped: number;
}

/** The one of `a` and `b` earlier in the file. */
function earlier(a: Blocker | undefined, b: Blocker | undefined): Blocker | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a.offset <= b.offset ? a : b;
}

function requireRetention(
  options: CompactEventLogOptions,
  clock: () => number,
): { now: number; cutoff: number; deliveryCutoff: number } {
  const retention = options.retentionSeconds ?? DEFAULT_RETENTION_SECONDS;
  if (typeof retention !== 'number' || !Number.isFinite(retention) || retention < 0)
    throw new WriterError(
      'invalid_option',
      `retentionSeconds must be a finite number >= 0, got ${String(options.retentionSeconds)}`,
    );
  const now = options.now ?? clock();
  if (typeof now !== 'number' || !Number.isFinite(now))
    throw new WriterError('invalid_option', `now must be epoch milliseconds, got ${String(options.now)}`);
  const window = options.deliveryWindowSeconds ?? DEFAULT_DELIVERY_WINDOW_SECONDS;
  if (typeof window !== 'number' || Number.isNaN(window) || window < 0)
    throw new WriterError(
      'invalid_option',
      `deliveryWindowSeconds must be a number >= 0, got ${String(options.deliveryWindowSeconds)}`,
    );
  return { now, cutoff: now - retention * 1000, deliveryCutoff: now - window * 1000 };
}

/**
 * Reads the whole log forwards (compaction is the one event-log operation whose cost follows the file: it must know
 * every run's fate) and chooses the checkpoint C to keep: the last accepted, valid `checkpoint` such that every record
 * before it may go (TJ-RET-013): none belongs to a run that is not finished and delivered (judged on the whole log,
 * with the reader's fold), and none is younger than the cutoff or has a `ts` that does not parse. Damaged lines
 * constrain nothing: they hold no record. A record "belongs to a run" when its `payload.request_id` names a run,
 * whatever its type, so an extension record of a live run is kept too.
 *
 * A `ts` more than the tolerance past `now` (a clock that was ahead) is not the record's time: the log is appended in
 * time order, so the record was written no later than the first later record whose `ts` is plausible, and counts as
 * written then — or now, while no such record follows (TJ-RET-019). Without this, records stamped while a clock was
 * 30 days ahead blocked compaction for 30 days.
 */
async function planCompaction(
  path: string,
  source: JournalSource,
  maxLineBytes: number | undefined,
  now: number,
  cutoff: number,
  deliveryCutoff: number,
): Promise<CompactionPlan> {
  const fold = new EventLogFold();
  const candidates: Candidate[] = [];
  const firstOfRun = new Map<string, { offset: number; seq: number | null }>();
  /** When each run's first finishing record was written (NaN when its `ts` does not parse: never expired). */
  const finishedAt = new Map<string, number>();
  let young: Blocker | undefined;
  const future = now + FUTURE_TOLERANCE_MS;
  /** The first future-stamped record since the last plausibly stamped one, and the runs such records finished. */
  let unresolved: Blocker | undefined;
  const unresolvedFinished: string[] = [];
  let futureStamped = 0;
  let records = 0;
  let damaged = 0;
  // A split checkpoint is a candidate at its first part once its last part follows (TJ-RET-021): the parts read so far.
  let parts: (Candidate & { parts: number; next: number }) | undefined;
  const where = { file: path };
  for await (const batch of readJournal(path, {
    source,
    chunkBytes: CHUNK_BYTES,
    ...(maxLineBytes === undefined ? {} : { maxLineBytes }),
  })) {
    for (const item of batch) {
      if (item.kind === 'finding') {
        if (DAMAGE_CODES.has(item.finding.code)) {
          damaged += 1;
          // A damaged line between two parts leaves the set incomplete for a backward scan (TJ-REPLAY-020).
          parts = undefined;
        }
        continue;
      }
      const { value, validation, offset } = item.record;
      const seq = typeof value.seq === 'number' && Number.isSafeInteger(value.seq) ? value.seq : null;
      const accepted = fold.add(item.record, where);
      const type =
        accepted && seq !== null && validation.status === 'valid' && validation.classification.family === 'event'
          ? validation.classification.type
          : undefined;
      if (type === 'checkpoint')
        candidates.push({ offset, seq: seq as number, recordsBefore: records, damagedBefore: damaged });
      if (type === 'checkpoint.part') {
        const { part, parts: count } = value.payload as { part: number; parts: number };
        // The seq the set's first part must have: the candidate's seq, and what every part of the set must agree on.
        const seqOf = (seq as number) - part;
        if (part === 0)
          parts = { offset, seq: seqOf, recordsBefore: records, damagedBefore: damaged, parts: count, next: 0 };
        if (parts !== undefined && part === parts.next && count === parts.parts && seqOf === parts.seq) {
          parts.next += 1;
          if (parts.next === parts.parts) {
            const { parts: _count, next: _next, ...candidate } = parts;
            candidates.push(candidate);
            parts = undefined;
          }
        } else parts = undefined;
      } else if (accepted) parts = undefined;
      records += 1;
      const time = typeof value.ts === 'string' ? Date.parse(value.ts) : undefined;
      if (time !== undefined && time > future) {
        futureStamped += 1;
        unresolved ??= { offset, seq, reason: 'retention' };
      } else if (time !== undefined) {
        if (Number.isFinite(time)) {
          // A plausible ts: the future-stamped records before it were written no later than this one.
          if (unresolved !== undefined && time > cutoff) young = earlier(young, unresolved);
          unresolved = undefined;
          for (const requestId of unresolvedFinished.splice(0)) finishedAt.set(requestId, time);
        }
        // An unparseable ts counts as young: its age is unknown, so the record is kept.
        if (young === undefined && !(time <= cutoff)) young = { offset, seq, reason: 'retention' };
      }
      if (isAcceptedRecord(validation) && validation.classification.family === 'event') {
        const payload = value.payload;
        const requestId =
          typeof payload === 'object' && payload !== null ? (payload as Record<string, unknown>).request_id : undefined;
        if (typeof requestId === 'string' && !firstOfRun.has(requestId)) firstOfRun.set(requestId, { offset, seq });
        if (
          typeof requestId === 'string' &&
          EVENT_FINISHING_TYPES.has(validation.classification.type) &&
          !finishedAt.has(requestId)
        ) {
          // A future-stamped finish never expires until a plausible ts after it says when it was written.
          finishedAt.set(requestId, time !== undefined && time <= future ? time : Number.NaN);
          if (time !== undefined && time > future) unresolvedFinished.push(requestId);
        }
      }
    }
  }
  const state = fold.finish();
  // Future-stamped records with no plausible ts after them count as written now: young.
  let blocker = earlier(young, unresolved);
  const expiredRuns: string[] = [];
  for (const run of state.runs) {
    if (run.finishedSeq !== null && run.delivered) continue;
    // Delivery expiry (TJ-RET-018): a finished run nobody acknowledged within the window counts as delivered.
    if (run.finishedSeq !== null && (finishedAt.get(run.requestId) ?? Number.NaN) <= deliveryCutoff) {
      expiredRuns.push(run.requestId);
      continue;
    }
    const first = firstOfRun.get(run.requestId);
    if (first === undefined || (blocker !== undefined && blocker.offset <= first.offset)) continue;
    blocker = {
      offset: first.offset,
      seq: first.seq,
      reason: run.finishedSeq === null ? 'unfinished_run' : 'undelivered_run',
      requestId: run.requestId,
    };
  }
  const limit = blocker?.offset ?? Number.POSITIVE_INFINITY;
  let keep: Candidate | undefined;
  for (let i = candidates.length - 1; i >= 0; i--) {
    const candidate = candidates[i] as Candidate;
    if (candidate.offset <= limit) {
      keep = candidate;
      break;
    }
  }
  // A blocker only explains the result when it kept compaction from a later checkpoint.
  const blocked = blocker !== undefined && candidates.some((candidate) => candidate.offset > blocker.offset);
  let reason: EventLogCompactionBlock | undefined;
  if (candidates.length === 0) reason = 'no_checkpoint';
  else if (keep === undefined || keep.offset === 0)
    reason = blocked ? blocker?.reason : keep === undefined ? undefined : 'nothing_before_checkpoint';
  return {
    keep,
    reason,
    blocker: blocked ? blocker : undefined,
    firstSeq: state.firstSeq,
    expiredRuns,
    futureStamped,
  };
}

async function* readRange(source: JournalSource, from: number, to: number): AsyncGenerator<Uint8Array> {
  for (let position = from; position < to; ) {
    const buffer = new Uint8Array(Math.min(CHUNK_BYTES, to - position));
    let filled = 0;
    while (filled < buffer.length) {
      const read = await source.read(buffer, filled, buffer.length - filled, position + filled);
      if (read === 0) throw new Error(`the file shrank while it was compacted, at byte ${position + filled}`);
      filled += read;
    }
    position += filled;
    yield buffer;
  }
}

/**
 * Compacts an event log opened as `file`, whose lock the caller holds (TJ-RET-008 for event logs): chooses the
 * checkpoint C (see {@link compactEventLog}) and replaces the file atomically (TJ-DUR-009) with the bytes from C's line
 * to the end, copied from the file as they are, never re-serialised (TJ-RET-012, TJ-RET-014). `onRewriteFailure` is
 * told when the replacement failed after the file behind the writer may have changed (the file is then poisoned).
 * @internal
 */
export async function compactOpenFile(
  file: WritableJournal,
  options: CompactEventLogOptions,
  clock: () => number,
  maxLineBytes: number | undefined,
  onRewriteFailure: (error: unknown) => void = () => undefined,
): Promise<EventLogCompaction> {
  const { now, cutoff, deliveryCutoff } = requireRetention(options, clock);
  const source = file.reader();
  const end = await source.end();
  const bounded: JournalSource = {
    read: (buffer, offset, length, position) =>
      position >= end ? Promise.resolve(0) : source.read(buffer, offset, Math.min(length, end - position), position),
  };
  const plan = await planCompaction(file.name, bounded, maxLineBytes, now, cutoff, deliveryCutoff);
  const blockedBy =
    plan.blocker === undefined
      ? {}
      : {
          blockedBy: {
            cursor: plan.blocker.offset,
            seq: plan.blocker.seq,
            ...(plan.blocker.requestId === undefined ? {} : { requestId: plan.blocker.requestId }),
          },
        };
  const keep = plan.keep;
  if (keep === undefined || keep.offset === 0)
    return {
      compacted: false,
      removedRecords: 0,
      removedDamagedLines: 0,
      removedBytes: 0,
      checkpointSeq: null,
      firstRetainedSeq: plan.firstSeq,
      expiredRuns: plan.expiredRuns,
      futureStampedRecords: plan.futureStamped,
      ...(plan.reason === undefined ? {} : { reason: plan.reason }),
      ...blockedBy,
    };
  try {
    await file.rewrite(readRange(bounded, keep.offset, end));
  } catch (error) {
    // Only a failure that poisoned the file (after the rename, or a failed sync) can have changed what is behind the
    // writer. Before the rename the log is untouched and the writer goes on: a disk too full for the copy, the usual
    // reason to compact, must not take a live session's log down with it.
    if (file.poisoned) onRewriteFailure(error);
    throw error;
  }
  return {
    compacted: true,
    removedRecords: keep.recordsBefore,
    removedDamagedLines: keep.damagedBefore,
    removedBytes: keep.offset,
    checkpointSeq: keep.seq,
    firstRetainedSeq: keep.seq,
    expiredRuns: plan.expiredRuns,
    futureStampedRecords: plan.futureStamped,
    ...blockedBy,
  };
}

/**
 * Compacts the event log at `path` (spec §14.2) while no writer has it open: takes the file's lock the way a writer
 * does (so it fails with `JournalLockedError` while a live writer holds it; use {@link EventLog.compact} on the open
 * writer instead), repairs a torn tail (TJ-DUR-005), and then:
 *
 * - chooses C, the latest valid, accepted `checkpoint` (or complete split checkpoint, from its first part, TJ-RET-021)
 *   such that every record before it may be removed: no record of a
 *   run that is not finished and delivered, and no record younger than the retention window (TJ-RET-013; a `ts` that
 *   does not parse counts as young);
 * - replaces the file atomically (temporary file, fsync, rename, directory fsync, TJ-DUR-009; stale temporary files
 *   of an earlier crashed replace are removed first, TJ-DUR-010) with C's line and every line after it, byte for
 *   byte as they were in the file: unknown fields, unknown and extension types and damaged lines after C are kept
 *   exactly (TJ-RET-012), and every retained record keeps its `seq` (TJ-RET-014). Damaged lines before C go with the
 *   prefix.
 *
 * When no checkpoint qualifies, nothing is written and the report says why. After a compaction C is the first
 * record, so a replay from below its seq answers `compacted` (TJ-REPLAY-013).
 *
 * Throughout, it holds the flock that foreign writers take around their appends, `<dir>/.<name>.lock` (gptme's
 * `.events.jsonl.lock`), through util-linux's flock(1) in a child process (TJ-DUR-050, TJ-DUR-052), so that such a
 * writer's append waits and lands in the new file; without flock(1) it refuses a log whose lock file exists
 * (`foreign_lock_unavailable`, TJ-DUR-053).
 */
export async function compactEventLog(
  path: string,
  options: CompactEventLogFileOptions = {},
): Promise<EventLogCompaction> {
  const fs = options.fs ?? nodeFileSystem;
  requireRetention(options, Date.now);
  try {
    await fs.stat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new WriterError('invalid_option', `${path}: there is no event log to compact`, path, { cause: error });
    // Any other failure of the look (EACCES, EIO) says nothing about the log's absence: it fails the compaction.
    throw new JournalWriteError(path, 'stat', error);
  }
  // Held from before the open (whose torn-tail repair truncates) to after the close, which follows the rename: a
  // foreign writer that appends under this flock (gptme) waits, then appends to the new file (TJ-DUR-050, TJ-DUR-052).
  // Only on this host's files: a simulated file system's paths are no file a foreign writer could lock.
  const foreign =
    fs.hostPaths === true
      ? await holdForeignFlock(path, options.foreignLockWaitMs)
      : { release: async () => undefined };
  try {
    const file = await AppendFile.open(path, {
      durability: 'every',
      fs,
      ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
      ...(options.lock === undefined ? {} : { lock: options.lock }),
    });
    try {
      return await compactOpenFile(file, options, Date.now, options.maxLineBytes);
    } finally {
      await file.close();
    }
  } finally {
    await foreign.release();
  }
}
