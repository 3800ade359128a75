import type { FileHandle } from 'node:fs/promises';
import { type Finding, validateRecord } from '@turnjournal/schema';
import { ReaderError } from '../errors.js';
import { openRegular, pathExists } from '../file/open-regular.js';
import { decodeLine } from '../framing/decode-line.js';
import { DEFAULT_MAX_LINE_BYTES } from '../framing/line-splitter.js';
import { type JournalSource, type RecoveryMode, readJournal } from '../framing/read-journal.js';
import type { EventLogState } from './fold-event-log.js';
import { IncrementalEventFold } from './incremental-event-fold.js';
import { type ReadCounter, readLinesBackward } from './read-lines-backward.js';

/** Options of {@link recoverEventLog}. */
export interface RecoverEventLogOptions {
  /** Bytes per positional read, backwards and forwards; 64 KiB by default. */
  readonly chunkBytes?: number;
  /** Line-size limit in bytes without the LF; 16 MiB by default (TJ-FRAME-031). */
  readonly maxLineBytes?: number;
  /**
   * `tolerant` (default) recovers from the last valid checkpoint, stepping over damage (spec §15.2). `prefix` derives
   * the state of the records before the first damaged line only (TJ-EVENT-031): no checkpoint is trusted, since the
   * damage may lie anywhere before it, so the log is folded from its start and its cost follows the file (TJ-EVENT-032).
   */
  readonly mode?: Exclude<RecoveryMode, 'strict'>;
  /**
   * True (default) to read back to the last `chat.started` when it lies before the last valid checkpoint, so that the
   * active run and its overlay are exact (TJ-REPLAY-011) — unless the checkpoint's run index shows every run before it
   * finished: the active run then started after it, and a log without runs is not read back to its start. False to
   * read only from the checkpoint on: the cost then follows the checkpoint's tail alone (TJ-REPLAY-005), and a run
   * started before the checkpoint is not seen.
   */
  readonly findActiveRun?: boolean;
  /**
   * Where the bytes come from; by default the file at `path` is opened. A writer passes the descriptor it holds, so
   * that it recovers exactly the file it appends to, through its file-system layer. Needs `size`.
   */
  readonly source?: JournalSource;
  /** With `source`: the file's length; nothing at or after it is read. */
  readonly size?: number;
}

/** The result of {@link recoverEventLog}: the fold of the tail, and where the tail began. */
export interface EventLogRecovery extends EventLogState {
  /** Byte offset of the last valid checkpoint, or null when the log has none and was folded from the start. */
  readonly checkpointOffset: number | null;
  /** Byte offset where the forward fold began: the checkpoint, an earlier `chat.started`, or 0. */
  readonly startOffset: number;
  /** Bytes read in all, backwards and forwards: it follows the tail, not the file (TJ-REPLAY-005). */
  readonly bytesRead: number;
  /** Accepted records after the last valid checkpoint (all accepted records read when there is none). */
  readonly acceptedSinceCheckpoint: number;
  /**
   * Framing findings of the lines read forwards, then the fold's findings. Lines before `startOffset` are not read,
   * so their findings are absent; when `startOffset > 0` findings carry byte offsets but no line numbers, which would
   * need the whole prefix to count.
   */
  readonly findings: readonly Finding[];
}

/**
 * What {@link recoverEventFold} found: the fold of the tail, still open, so that a writer continues it with the records
 * it appends, and where the tail began.
 */
export interface EventFoldRecovery {
  /** The fold of the tail; {@link IncrementalEventFold.finish} gives what {@link recoverEventLog} returns. */
  readonly fold: IncrementalEventFold;
  /**
   * Byte offset of the last valid checkpoint (of its first part, for a split one), or null when the log has none and
   * was folded from the start.
   */
  readonly checkpointOffset: number | null;
  /**
   * Byte offset of the line holding that checkpoint's run index: the checkpoint's own line, or its last part's
   * (TJ-EVENT-030); null without a checkpoint.
   */
  readonly runIndexOffset: number | null;
  /** Byte offset where the forward fold began: the checkpoint, an earlier `chat.started`, or 0. */
  readonly startOffset: number;
  /** Bytes read in all, backwards and forwards. */
  readonly bytesRead: number;
  /** Accepted records after the last valid checkpoint (all accepted records read when there is none). */
  readonly acceptedSinceCheckpoint: number;
  /**
   * Length in bytes of the last valid checkpoint's line (without its LF; of its parts' lines for a split checkpoint,
   * from the first part's start to the last part's end), 0 when there is none: a writer spaces its next checkpoint by
   * it (TJ-EVENT-006).
   */
  readonly checkpointBytes: number;
  /** Framing findings of the lines read forwards (the fold holds its own). */
  readonly framing: readonly Finding[];
  /**
   * Where the file's bytes end before its pre-allocated space (spec §3.8): the end of the last line, or of a torn tail;
   * the file's size when it has no space. A reader following the log resumes here (TJ-FRAME-037).
   */
  readonly dataEnd: number;
}

const DEFAULT_CHUNK_BYTES = 64 * 1024;

// Byte patterns without which a line cannot hold a checkpoint or chat.started: the type is spelt out in the line unless
// JSON escapes spell it, and an escape needs a backslash-u. Lines with neither are never parsed by the backward scan.
const CHECKPOINT = Buffer.from('checkpoint');
const CHAT_STARTED = Buffer.from('chat.started');
const ESCAPE = Buffer.from('\\u');

/** The last part of a split checkpoint found by the backward scan, and the part and seq that must come before it. */
interface PartsFound {
  readonly parts: number;
  readonly lastOffset: number;
  /** Where the last part's line ends (its LF excluded). */
  readonly end: number;
  expect: number;
  expectSeq: number;
  /** What {@link noRunOpenAt} says of its run index. */
  readonly noRunOpen: boolean;
}

/**
 * Recovers an event log from its last valid checkpoint (spec §15.2): scans the file backwards from the end in chunks,
 * skipping pre-allocated space (TJ-FRAME-036), a torn tail and damaged lines (TJ-REPLAY-003, TJ-REPLAY-006), then
 * folds that checkpoint and the accepted records after it (TJ-REPLAY-004) with {@link EventLogFold}. Without a valid
 * checkpoint it folds the whole file (TJ-REPLAY-008). With `findActiveRun` (default) the fold starts at the last `chat.started` when that is earlier,
 * and message records before the checkpoint then change nothing (the checkpoint replaces the list).
 *
 * For a log without seq findings the messages and last seq equal those of the whole-file fold (TJ-REPLAY-007). The
 * recovery trusts the checkpoint: a checkpoint whose `seq` the whole-file fold would exclude as a duplicate or
 * regression is still used, because telling would need the prefix the recovery exists to skip. Runs, undelivered
 * runs and findings cover the part read only; an audit of the whole log reads it all.
 *
 * With `mode: 'prefix'` no checkpoint is trusted: the log is folded from its start up to its first damaged line
 * (TJ-EVENT-031, TJ-EVENT-032), so the answer equals a prefix-mode read of the whole file.
 *
 * A log that does not exist yet (nothing was ever appended to the session) recovers as an empty one, as seed 002's
 * reader answers an empty message list: no records, no findings.
 */
export async function recoverEventLog(path: string, options: RecoverEventLogOptions = {}): Promise<EventLogRecovery> {
  if (options.source === undefined && !(await pathExists(path)))
    return recoverEventLog(path, { ...options, source: { read: () => Promise.resolve(0) }, size: 0 });
  // The checkpoint's length and where the data ends are for a writer continuing the log, not part of what a reader
  // recovers.
  const {
    fold,
    framing,
    checkpointBytes: _writersOnly,
    runIndexOffset: _runIndexOnly,
    dataEnd: _followersOnly,
    ...tail
  } = await recoverEventFold(path, options);
  const state = fold.finish();
  return { ...state, findings: [...framing, ...state.findings], ...tail };
}

/**
 * {@link recoverEventLog} without its last step: the fold of the tail is returned open, not finished. A writer
 * continues it with every record it appends (spec §15.1, §15.3), so that its state is the reader's fold of the file.
 */
export async function recoverEventFold(path: string, options: RecoverEventLogOptions = {}): Promise<EventFoldRecovery> {
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const findActiveRun = options.findActiveRun ?? true;
  if (options.mode !== undefined && options.mode !== 'tolerant' && options.mode !== 'prefix')
    throw new ReaderError(
      'invalid_option',
      `recoverEventLog: mode must be tolerant or prefix, not ${String(options.mode)}`,
    );
  if (options.source !== undefined && (options.size === undefined || !Number.isSafeInteger(options.size)))
    throw new ReaderError('invalid_option', 'recoverEventLog: a source needs its size');
  const handle = options.source === undefined ? await openRegular(path) : undefined;
  try {
    const size = options.size ?? (await (handle as FileHandle).stat()).size;
    const whole: JournalSource = options.source ?? {
      read: async (buffer, offset, length, position) =>
        (await (handle as FileHandle).read(buffer, offset, length, position)).bytesRead,
    };
    // Nothing at or after `size` is read, so a writer appending meanwhile cannot change the answer.
    const source: JournalSource = {
      read: (buffer, offset, length, position) =>
        position >= size ? Promise.resolve(0) : whole.read(buffer, offset, Math.min(length, size - position), position),
    };
    const counter: ReadCounter = { bytesRead: 0 };
    let checkpoint: number | undefined;
    let runIndexOffset: number | undefined;
    let checkpointBytes = 0;
    let started: number | undefined;
    // True when the checkpoint's run index shows every run before it finished: the active run, if any, started after
    // it, so the scan found its chat.started already and need not read on to the start of a log without runs.
    let noRunOpen = false;
    // A split checkpoint is found from its last part back to its first, each line right before the one after it
    // (TJ-REPLAY-020): any other line between them, or a part that does not fit, leaves the set incomplete, skipped as
    // a damaged checkpoint is (a crash between parts tears or loses the last one).
    let parts: PartsFound | undefined;
    const prefix = options.mode === 'prefix';
    for await (const line of readLinesBackward(source, size, chunkBytes, maxLineBytes, counter)) {
      // The scan meets its first line only once it has stepped over the space at the end: in prefix mode, where no
      // checkpoint is trusted (TJ-EVENT-032), that is all it is for.
      if (prefix) break;
      if (line.kind === 'oversized') {
        parts = undefined;
        continue;
      }
      const wanted = checkpoint === undefined ? [CHECKPOINT, CHAT_STARTED] : [CHAT_STARTED];
      const record = eventRecordOf(line.offset, line.bytes, wanted);
      const type = record?.type;
      if (checkpoint === undefined) {
        if (type === 'checkpoint.part') {
          const { part, parts: count } = (record as EventRecordFound).value.payload as { part: number; parts: number };
          const seq = (record as EventRecordFound).value.seq as number;
          if (parts !== undefined && part === parts.expect && count === parts.parts && seq === parts.expectSeq) {
            parts.expect -= 1;
            parts.expectSeq -= 1;
            if (part === 0) {
              checkpoint = line.offset;
              runIndexOffset = parts.lastOffset;
              checkpointBytes = parts.end - line.offset;
              noRunOpen = parts.noRunOpen;
              parts = undefined;
            }
          } else
            parts =
              part === count - 1 && part >= 1
                ? {
                    parts: count,
                    lastOffset: line.offset,
                    end: line.offset + line.bytes.length,
                    expect: part - 1,
                    expectSeq: seq - 1,
                    noRunOpen: noRunOpenAt((record as EventRecordFound).value),
                  }
                : undefined;
        } else {
          parts = undefined;
          if (type === 'checkpoint') {
            checkpoint = line.offset;
            runIndexOffset = line.offset;
            checkpointBytes = line.bytes.length;
            noRunOpen = noRunOpenAt((record as EventRecordFound).value);
          }
        }
      }
      if (type === 'chat.started' && started === undefined) started = line.offset;
      if (checkpoint !== undefined && (started !== undefined || !findActiveRun || noRunOpen)) break;
    }
    // The scan read the space at the end once (it meets no line before it has): the forward read stops where it begins,
    // so the space costs one memory scan, never a second read or a line split (TJ-FRAME-036, TJ-REPLAY-005).
    const dataEnd = counter.spaceStart ?? size;
    const data: JournalSource = {
      read: (buffer, offset, length, position) =>
        position >= dataEnd
          ? Promise.resolve(0)
          : source.read(buffer, offset, Math.min(length, dataEnd - position), position),
    };
    const startOffset = checkpoint === undefined ? 0 : Math.min(checkpoint, started ?? checkpoint);
    const fold = new IncrementalEventFold({
      messagesUnknownUntilCheckpoint: checkpoint !== undefined && startOffset < checkpoint,
    });
    const framing: Finding[] = [];
    const where = { file: path, lineNumbers: startOffset === 0 };
    let acceptedSinceCheckpoint = 0;
    const lastOfCheckpoint = runIndexOffset ?? -1;
    for await (const batch of readJournal(path, {
      mode: prefix ? 'prefix' : 'tolerant',
      startOffset,
      chunkBytes,
      maxLineBytes,
      source: data,
    })) {
      for (const item of batch) {
        if (item.kind === 'finding') framing.push(item.finding);
        else if (fold.addRecord(item.record, where) && item.record.offset > lastOfCheckpoint)
          acceptedSinceCheckpoint += 1;
      }
    }
    // The tail is read to its end: records added from here on (a writer's own) change the list as it stands, even if
    // the checkpoint that should have made it known was excluded by the seq checks.
    fold.assumeMessagesKnown();
    return {
      fold,
      framing,
      checkpointOffset: checkpoint ?? null,
      runIndexOffset: runIndexOffset ?? null,
      startOffset,
      bytesRead: counter.bytesRead + (dataEnd - startOffset),
      acceptedSinceCheckpoint,
      checkpointBytes,
      dataEnd,
    };
  } finally {
    await handle?.close();
  }
}

/**
 * True when the checkpoint (or last part) `value` carries a run index (TJ-EVENT-019) in which every run has finished:
 * no `chat.started` before it can belong to the active run. False without an index, or with a malformed one.
 */
function noRunOpenAt(value: Record<string, unknown>): boolean {
  const runs = (value.payload as { runs?: unknown } | undefined)?.runs;
  return (
    Array.isArray(runs) &&
    runs.every((run) => typeof run === 'object' && run !== null && typeof run.outcome === 'string')
  );
}

interface EventRecordFound {
  readonly type: string;
  readonly value: Record<string, unknown>;
}

/**
 * The valid event record a line holds and its type, when the line may hold one of `wanted` (a record of another type
 * can come back too); decoded as the tolerant reader does.
 */
function eventRecordOf(offset: number, bytes: Uint8Array, wanted: readonly Buffer[]): EventRecordFound | undefined {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!wanted.some((pattern) => view.includes(pattern)) && !view.includes(ESCAPE)) return undefined;
  const decoded = decodeLine({ kind: 'line', number: 0, offset, bytes }, true);
  const value =
    decoded.kind === 'record' ? decoded.value : decoded.kind === 'damage' ? decoded.salvaged?.value : undefined;
  if (value === undefined) return undefined;
  const validation = validateRecord(value);
  if (validation.status !== 'valid' || validation.classification.family !== 'event') return undefined;
  return { type: validation.classification.type, value: value as Record<string, unknown> };
}
