import { randomUUID } from 'node:crypto';
import { dirname, join } from 'node:path';
import { readRunIndex } from '@turnjournal/reader/_internals';
import type { RecordStore, WritableJournal } from '@turnjournal/reader/record-store';
import { storePathSegments } from '@turnjournal/reader/store-format';
import { DEFAULT_CHECKPOINT_INTERVAL } from '@turnjournal/schema';
import { AppendFile } from '../append/append-file.js';
import { appendFileOptions, resolveWriterOptions } from '../append/writer-options.js';
import { WriterError } from '../errors.js';
import { afterFailure } from '../fs/after-failure.js';
import { ensureDirectory } from '../fs/durable-ops.js';
import { requireIdentifier } from '../require-identifier.js';
import { EventLog } from './event-log.js';
import type { OpenEventLogOptions } from './event-log-inputs.js';
import { recoverTail } from './recover-tail.js';

/** Longest epoch a reader takes (spec §6.7). */
const MAX_EPOCH_LENGTH = 128;

/** A new epoch from `newEpoch`, checked: a value readers would not take as an epoch is refused, not written. */
function chooseEpoch(newEpoch: () => string, path: string): string {
  const epoch: unknown = newEpoch();
  if (typeof epoch !== 'string' || epoch.length === 0 || epoch.length > MAX_EPOCH_LENGTH)
    throw new WriterError(
      'invalid_option',
      `newEpoch must return a string of 1 to ${MAX_EPOCH_LENGTH} characters (spec §6.7), got ${typeof epoch === 'string' ? `${epoch.length} characters` : typeof epoch}`,
      path,
    );
  return epoch;
}

/**
 * The recommended path of a session's event log, `<root>/<sessionId>/events.jsonl` (spec §4.4). Throws a
 * {@link WriterError} (`invalid_identifier`) for a session id that is not a valid identifier, before any path is
 * built (TJ-FAM-010).
 */
export function eventLogPath(root: string, sessionId: string): string {
  requireIdentifier(sessionId, 'session id');
  return join(root, ...storePathSegments({ family: 'event', sessionId }));
}

function resolvePath(options: OpenEventLogOptions): string {
  const { file, root, sessionId, store } = options as {
    file?: unknown;
    root?: unknown;
    sessionId?: unknown;
    store?: unknown;
  };
  if (store !== undefined) {
    if (file !== undefined || root !== undefined)
      throw new WriterError('invalid_option', 'give either `store` and `sessionId`, or `file`, or `root`, not two');
    if (typeof store !== 'object' || store === null || typeof (store as RecordStore).openJournal !== 'function')
      throw new WriterError('invalid_option', '`store` must be a record store (see @turnjournal/reader/record-store)');
    requireIdentifier(sessionId as string, 'session id');
    return (store as RecordStore).name;
  }
  if (file !== undefined) {
    if (root !== undefined || sessionId !== undefined)
      throw new WriterError('invalid_option', 'give either `file` or `root` and `sessionId`, not both');
    if (typeof file !== 'string' || file.length === 0)
      throw new WriterError('invalid_option', '`file` must be a non-empty path');
    return file;
  }
  if (typeof root !== 'string' || root.length === 0)
    throw new WriterError('invalid_option', 'give `file`, or `root` and `sessionId`');
  return eventLogPath(root, sessionId as string);
}

/** The log's journal: the store's, or the file at `path` (its directories created durably). */
async function openJournal(
  options: OpenEventLogOptions,
  path: string,
  resolved: ReturnType<typeof resolveWriterOptions>,
): Promise<WritableJournal> {
  if (options.store !== undefined)
    return options.store.openJournal(
      { family: 'event', sessionId: options.sessionId },
      { durability: resolved.durability, maxLineBytes: resolved.maxLineBytes },
    );
  await ensureDirectory(resolved.fs, dirname(path));
  return AppendFile.open(path, appendFileOptions(resolved));
}

/**
 * Opens an event log for appending (spec §6, §11): validates the options, creates missing directories durably, opens
 * the file with {@link AppendFile.open} (lock, durable creation or torn-tail repair, TJ-DUR-005, TJ-DUR-017), then
 * recovers the state to continue from by reading the file's tail backwards to the last valid checkpoint and forwards
 * from there (spec §15.2), through the descriptor it holds: the cost follows the tail, not the log. The next seq is
 * the last accepted seq + 1, or 0 for a log without records (TJ-EVENT-003, TJ-EVENT-004).
 */
export async function openEventLog(options: OpenEventLogOptions): Promise<EventLog> {
  if (typeof options !== 'object' || options === null)
    throw new WriterError('invalid_option', 'openEventLog needs an options object');
  const path = resolvePath(options);
  const resolved = resolveWriterOptions(options);
  const interval = options.checkpointInterval ?? DEFAULT_CHECKPOINT_INTERVAL;
  if (!Number.isSafeInteger(interval) || interval < 1)
    throw new WriterError('invalid_option', `checkpointInterval must be an integer >= 1, got ${String(interval)}`);
  const newEpoch = options.newEpoch ?? randomUUID;
  if (typeof newEpoch !== 'function') throw new WriterError('invalid_option', '`newEpoch` must be a function');
  const file = await openJournal(options, path, resolved);
  try {
    const reader = file.reader();
    const end = await reader.end();
    const tail = await recoverTail(file.name, reader, end, resolved.maxLineBytes);
    const epoch = tail.fold.epoch ?? chooseEpoch(newEpoch, file.name);
    // Every run of the log, from the last checkpoint's run index and the run records after it (TJ-EVENT-020).
    const index = await readRunIndex({
      source: reader,
      size: end,
      checkpointOffset: tail.runIndexOffset,
      maxLineBytes: resolved.maxLineBytes,
    });
    return new EventLog(file, tail, {
      epoch,
      runs: index.runs,
      interval,
      clock: resolved.clock,
      maxLineBytes: resolved.maxLineBytes,
      findings: tail.findings,
      recovery: { checkpointCursor: tail.checkpointOffset, startCursor: tail.startOffset },
    });
  } catch (error) {
    throw await afterFailure(error, () => file.close());
  }
}
