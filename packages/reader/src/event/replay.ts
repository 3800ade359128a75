import type { Finding } from '@turnjournal/schema';
import { ReaderError } from '../errors.js';
import { type JournalRecord, type ReadJournalOptions, readJournal } from '../framing/read-journal.js';
import { EventLogFold, type EventLogSnapshot, eventLogSnapshot } from './fold-event-log.js';

/** Why a replay returns a snapshot instead of records (spec §15.4). */
export type ReplayReason = 'compacted' | 'ahead' | 'reset';

/** Options of {@link replayEventLog}. */
export interface ReplayEventLogOptions extends ReadJournalOptions {
  /**
   * The highest `seq` the client holds: it has received every record up to it. Absent, or -1, when it holds nothing.
   * Must be an integer >= -1.
   */
  readonly after?: number;
  /**
   * The epoch of the log the client's cursor comes from (spec §6.7): a string, or null for a log that had none. When
   * given with `after >= 0` and different from the log's epoch, the answer is a snapshot with reason `reset`
   * (TJ-REPLAY-018). Absent (a client that predates epochs): the cursor alone decides.
   */
  readonly epoch?: string | null;
}

/** What a client that resumes after `after` receives (spec §15.4). */
export type EventReplay =
  | {
      readonly kind: 'records';
      /** Every accepted record with `seq > after`, in `seq` order, unknown and extension types included (TJ-REPLAY-012). */
      readonly records: readonly JournalRecord[];
      /** The highest accepted `seq` of the log, or null when it has none. */
      readonly lastSeq: number | null;
      /** Framing and fold findings of the whole log. */
      readonly findings: readonly Finding[];
    }
  | {
      readonly kind: 'snapshot';
      /** `compacted` (TJ-REPLAY-013), `ahead` (TJ-REPLAY-014) or `reset` (another history, TJ-REPLAY-018). */
      readonly reason: ReplayReason;
      /** The log's snapshot (spec §15.3), which the client renders instead of records. */
      readonly snapshot: EventLogSnapshot;
      /** Framing and fold findings of the whole log. */
      readonly findings: readonly Finding[];
    };

/**
 * Replays an event log to a client that holds every record up to `seq` `after` (spec §15.4). Reads the whole file
 * forwards, because which records are accepted depends on every seq before them (TJ-EVENT-013), and:
 * - returns the accepted records with `seq > after` when the log still holds all of them (TJ-REPLAY-012);
 * - returns a snapshot with reason `ahead` when `after` is greater than the last accepted `seq` (TJ-REPLAY-014),
 *   including an empty log and any `after >= 0`, whose position cannot be in this log;
 * - returns a snapshot with reason `reset`, before any other answer, when `epoch` is given, `after >= 0`, and the
 *   epoch differs from the log's (TJ-REPLAY-018): the cursor belongs to another history of the session;
 * - returns a snapshot with reason `compacted` when `after + 1` is below the first accepted `seq`, the leading
 *   checkpoint of a compacted log (TJ-REPLAY-013); a client holding nothing (`after = -1`) of a log whose first seq
 *   is above 0 gets it too, since the records it lacks were removed.
 *
 * Record bytes are copied, so the records stay valid after the read. Throws `ReaderError` (`invalid_option`) for an
 * `after` that is not an integer >= -1 or an `epoch` that is neither a string nor null, and `ReaderError` in `strict`
 * mode.
 */
export async function replayEventLog(path: string, options: ReplayEventLogOptions = {}): Promise<EventReplay> {
  const after = options.after ?? -1;
  if (!Number.isSafeInteger(after) || after < -1) {
    throw new ReaderError('invalid_option', `after must be an integer >= -1, got ${String(options.after)}`);
  }
  const epoch = options.epoch;
  if (epoch !== undefined && epoch !== null && typeof epoch !== 'string')
    throw new ReaderError('invalid_option', `epoch must be a string or null, got ${typeof epoch}`);
  const fold = new EventLogFold();
  const framing: Finding[] = [];
  const records: JournalRecord[] = [];
  const source = { file: path };
  for await (const batch of readJournal(path, options)) {
    for (const item of batch) {
      if (item.kind === 'finding') framing.push(item.finding);
      else if (fold.add(item.record, source) && (item.record.value.seq as number) > after) {
        records.push({ ...item.record, bytes: Uint8Array.from(item.record.bytes) });
      }
    }
  }
  const state = fold.finish();
  const findings = [...framing, ...state.findings];
  const reset = epoch !== undefined && after >= 0 && epoch !== state.epoch;
  const ahead = after > (state.lastSeq ?? -1);
  const compacted = state.firstSeq !== null && after + 1 < state.firstSeq;
  if (reset || ahead || compacted) {
    const reason = reset ? 'reset' : ahead ? 'ahead' : 'compacted';
    return { kind: 'snapshot', reason, snapshot: eventLogSnapshot(state), findings };
  }
  return { kind: 'records', records, lastSeq: state.lastSeq, findings };
}
