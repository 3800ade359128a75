import type { Finding, Message } from '@turnjournal/schema';
import type { JournalRecord } from '../framing/read-journal.js';
import { IncrementalEventFold } from './incremental-event-fold.js';

/** Where an event record came from. */
export interface EventLogSource {
  /** The file the record was read from; every finding names it (TJ-AUDIT-003). */
  readonly file: string;
  /**
   * False when `record.line` is not the line number in the file (a read that started part-way through the file, as
   * checkpoint recovery does): findings then carry the byte offset only, never a wrong line number. Default true.
   */
  readonly lineNumbers?: boolean;
}

/** Options of {@link EventLogFold}. */
export interface EventLogFoldOptions {
  /**
   * True when the fold starts part-way through a log, before its last valid checkpoint: the message list is unknown
   * until the first accepted `checkpoint`, so message records before it change no list and report nothing. They
   * still close an open segment (spec §15.3). Default false: the fold starts at the start of the file from an empty
   * list (spec §15.1).
   */
  readonly messagesUnknownUntilCheckpoint?: boolean;
}

/** How a run of an event log ended, or that it has not (spec §6.3, §15.3). */
export type EventRunStatus = 'running' | 'abandoned' | 'done' | 'error' | 'cancelled';

/** One run of an event log, correlated by `request_id` (spec §6.3). */
export interface EventRun {
  /** The client-generated id of the run. */
  readonly requestId: string;
  /**
   * `running` for the active run; `abandoned` for an earlier run that never finished (TJ-REPLAY-010); otherwise the
   * first finishing record decides: `done`, `error` or `cancelled`.
   */
  readonly status: EventRunStatus;
  /** The `seq` of its `chat.started`. */
  readonly startedSeq: number;
  /** The highest `seq` among its stream records (not its `delivery.ack`). */
  readonly lastSeq: number;
  /** The `seq` of its first finishing record, or null while it has none. */
  readonly finishedSeq: number | null;
  /** True once the log has a `delivery.ack` for its `request_id`, anywhere in the log (spec §6.4). */
  readonly delivered: boolean;
}

/** The active run as a snapshot shows it (spec §15.3 `active_run`). */
export interface ActiveRun {
  /** The client-generated id of the run. */
  readonly requestId: string;
  /** Always `running`. */
  readonly status: 'running';
  /** The `seq` of its `chat.started`. */
  readonly startedSeq: number;
  /** The highest `seq` among its stream records. */
  readonly lastSeq: number;
}

/** The buffered text of the open assistant segment (spec §15.3 `overlay`, TJ-REPLAY-009). */
export interface SegmentOverlay {
  /** The active run the segment belongs to. */
  readonly requestId: string;
  /** The segment's `message_id`. */
  readonly messageId: string;
  /** The concatenated `text` of the segment's `chat.delta` records, in `seq` order. */
  readonly text: string;
}

/** The render-ready view of an event log (spec §15.3 `snapshot()`), with the TypeScript member names. */
export interface EventLogSnapshot {
  /** The message list (spec §15.1). */
  readonly messages: readonly Message[];
  /** The active run, or null when the last `chat.started` has a finishing record or there is none. */
  readonly activeRun: ActiveRun | null;
  /** The open segment's buffered text, or null when no segment of the active run is open. */
  readonly overlay: SegmentOverlay | null;
  /** The highest accepted `seq`, or null for a log without accepted records. */
  readonly lastSeq: number | null;
  /**
   * The log's epoch (spec §6.7): the identity of its history, which a client stores with its cursor and sends back on
   * replay (TJ-REPLAY-018); null when the log has none (written by writers that predate epochs, or empty).
   */
  readonly epoch: string | null;
}

/** Everything the fold of one event log derives. */
export interface EventLogState extends EventLogSnapshot {
  /** The first accepted `seq`, or null: compaction removes the seqs below it (spec §14.2, TJ-REPLAY-013). */
  readonly firstSeq: number | null;
  /** Every run that has a `chat.started`, in the order of its first `chat.started`. */
  readonly runs: readonly EventRun[];
  /** The finished runs without a `delivery.ack` (TJ-REPLAY-015), in the same order. */
  readonly undelivered: readonly EventRun[];
  /** Sequence, message and run findings, in file order; `abandoned_run` findings last. */
  readonly findings: readonly Finding[];
}

/**
 * The fold of one event log (spec §6.5, §15): feed the records of one `events.jsonl` in file order with
 * {@link EventLogFold.add}, then call {@link EventLogFold.finish}.
 *
 * A record takes part when its schema verdict is valid, unknown or extension and its family is `event`; unknown and
 * extension types take part in the sequence checks only (spec §6.5). Memory follows the message list, the number of
 * runs, the open segment's text and the number of seq gaps, not the length of the log.
 *
 * Choices where the spec is silent, so that every binding gives one answer:
 * - a `message_edit` payload with both `index`+`message` and `messages` is the index form;
 * - a second `chat.started` for a `request_id` that already has a run starts no run (TJ-EVENT-010), but it is still
 *   the log's last `chat.started`, so that run is the candidate active run;
 * - stream records of a `request_id` without a `chat.started` in the folded records belong to no run;
 * - a run's first finishing record decides its status; later ones change nothing;
 * - a `chat.delta` extends the open segment when its `message_id` is the segment's (TJ-REPLAY-009);
 * - a `chat.started` closes the open segment, so a segment of the active run is one that follows its `chat.started`.
 */
export class EventLogFold {
  // The rules live in the incremental fold, which writers continue with their own records: one fold for both.
  readonly #fold: IncrementalEventFold;

  /** @param options where the fold starts; by default at the start of the file. */
  constructor(options: EventLogFoldOptions = {}) {
    this.#fold = new IncrementalEventFold(options);
  }

  /**
   * Adds the next record of the file. Returns true when the record is accepted: an event record that passes the
   * sequence checks (TJ-EVENT-013) and so belongs to the fold and to replay (TJ-REPLAY-012); false when it is ignored
   * (another family, invalid, unsupported version) or excluded (`seq_duplicate`, `seq_regression`, TJ-EVENT-014).
   */
  add(record: JournalRecord, source: EventLogSource): boolean {
    return this.#fold.addRecord(record, source);
  }

  /** Ends the fold: decides the active and abandoned runs and returns the derived state. */
  finish(): EventLogState {
    return this.#fold.finish();
  }
}

/** The snapshot members of a fold's result (spec §15.3): messages, active run, overlay and last seq. */
export function eventLogSnapshot(state: EventLogState): EventLogSnapshot {
  return {
    messages: state.messages,
    activeRun: state.activeRun,
    overlay: state.overlay,
    lastSeq: state.lastSeq,
    epoch: state.epoch,
  };
}
