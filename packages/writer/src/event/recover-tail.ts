import type { JournalSource } from '@turnjournal/reader';
import { type IncrementalEventFold, recoverEventFold } from '@turnjournal/reader/_internals';
import type { Finding } from '@turnjournal/schema';
import { deepFreeze } from './deep-freeze.js';

/** What {@link recoverTail} derived from the tail of an event log. */
export interface TailRecovery {
  /**
   * The reader's fold of the tail, left open: the writer continues it with every record it reserves, so its state is
   * what a reader folds from the file (spec §15.1, §15.3). Its messages are frozen.
   */
  readonly fold: IncrementalEventFold;
  /** Accepted records after the last valid checkpoint (all accepted records when there is none). */
  readonly sinceCheckpoint: number;
  /** Bytes of the file after the last valid checkpoint's line (the whole file when there is none). */
  readonly bytesSinceCheckpoint: number;
  /** Length of the last valid checkpoint's line, LF included; 0 when there is none. */
  readonly checkpointBytes: number;
  /** Byte offset of the last valid checkpoint (its first part, for a split one), or null. */
  readonly checkpointOffset: number | null;
  /** Byte offset of the line holding its run index (the checkpoint's, or its last part's), or null. */
  readonly runIndexOffset: number | null;
  /** Where the forward fold began. */
  readonly startOffset: number;
  /** Framing findings of the lines read forwards, then the fold's findings. */
  readonly findings: readonly Finding[];
}

const CHUNK_BYTES = 64 * 1024;

/**
 * Recovers the state an event-log writer continues from: the reader's recovery (spec §15.2: backward scan to the last
 * valid checkpoint and the last `chat.started`, then the fold of the tail; cost follows the tail, TJ-REPLAY-005) run
 * over `source`, the descriptor the writer holds, up to `end`. Reading through the writer's file-system layer means
 * it recovers exactly the file it appends to, under injected faults and the simulated file system too. The last seq
 * comes from the last accepted record (TJ-EVENT-004).
 */
export async function recoverTail(
  path: string,
  source: JournalSource,
  end: number,
  maxLineBytes: number,
): Promise<TailRecovery> {
  const recovery = await recoverEventFold(path, { source, size: end, maxLineBytes, chunkBytes: CHUNK_BYTES });
  const { fold } = recovery;
  const checkpointLine = recovery.checkpointOffset === null ? 0 : recovery.checkpointBytes + 1;
  // Snapshots hand out these messages: frozen, no caller can change the writer's list through one.
  for (const message of fold.messages) deepFreeze(message);
  return {
    fold,
    sinceCheckpoint: recovery.acceptedSinceCheckpoint,
    bytesSinceCheckpoint: recovery.checkpointOffset === null ? end : end - (recovery.checkpointOffset + checkpointLine),
    checkpointBytes: checkpointLine,
    checkpointOffset: recovery.checkpointOffset,
    runIndexOffset: recovery.runIndexOffset,
    startOffset: recovery.startOffset,
    findings: [...recovery.framing, ...fold.finish().findings],
  };
}
