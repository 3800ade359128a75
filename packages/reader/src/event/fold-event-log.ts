import {
  EVENT_FINISHING_TYPES,
  EVENT_STREAM_TYPES,
  type EventChatStarted,
  type EventMessageAppend,
  type EventMessageEdit,
  type EventUndo,
  type Finding,
  type FindingCode,
  type FindingLocation,
  isAcceptedRecord,
  type Message,
  makeFinding,
  SEGMENT_CLOSING_TYPES,
} from '@turnjournal/schema';
import type { JournalRecord } from '../framing/read-journal.js';

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

interface RunAccumulator {
  readonly requestId: string;
  readonly startedSeq: number;
  readonly where: FindingLocation;
  lastSeq: number;
  finishedSeq: number | null;
  finish: EventRunStatus | undefined;
}

interface OpenSegment {
  readonly requestId: string;
  readonly messageId: string;
  readonly parts: string[];
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
  #messagesKnown: boolean;
  #messages: Message[] = [];
  /** Accepted seqs as closed ranges `[from, to]`, flattened: seqs only grow, so a range per gap suffices. */
  readonly #ranges: number[] = [];
  #firstSeq: number | null = null;
  #lastSeq: number | null = null;
  readonly #runs = new Map<string, RunAccumulator>();
  readonly #acked = new Set<string>();
  #lastStarted: string | undefined;
  #segment: OpenSegment | undefined;
  readonly #findings: Finding[] = [];

  /** @param options where the fold starts; by default at the start of the file. */
  constructor(options: EventLogFoldOptions = {}) {
    this.#messagesKnown = !(options.messagesUnknownUntilCheckpoint ?? false);
  }

  /**
   * Adds the next record of the file. Returns true when the record is accepted: an event record that passes the
   * sequence checks (TJ-EVENT-013) and so belongs to the fold and to replay (TJ-REPLAY-012); false when it is ignored
   * (another family, invalid, unsupported version) or excluded (`seq_duplicate`, `seq_regression`, TJ-EVENT-014).
   */
  add(record: JournalRecord, source: EventLogSource): boolean {
    const { validation, value } = record;
    if (!isAcceptedRecord(validation) || validation.classification.family !== 'event') return false;
    const seq = value.seq;
    // The family envelope guarantees an integer >= 0; the guard keeps the fold total for hand-built records.
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return false;
    const where: FindingLocation =
      source.lineNumbers === false
        ? { file: source.file, offset: record.offset }
        : { file: source.file, line: record.line, offset: record.offset };
    if (!this.#acceptSeq(seq, where)) return false;
    if (validation.status === 'valid') this.#apply(validation.classification.type, value, seq, where);
    return true;
  }

  /** Ends the fold: decides the active and abandoned runs and returns the derived state. */
  finish(): EventLogState {
    const findings = [...this.#findings];
    const runs: EventRun[] = [];
    let activeRun: ActiveRun | null = null;
    for (const run of this.#runs.values()) {
      let status: EventRunStatus;
      if (run.finish !== undefined) status = run.finish;
      else if (run.requestId === this.#lastStarted) status = 'running';
      else {
        // TJ-EVENT-009 allows one active run: an unfinished run before the last chat.started can never finish.
        status = 'abandoned';
        findings.push(
          makeFinding(
            'abandoned_run',
            `run "${run.requestId}" has no chat.done, chat.error or chat.cancelled and a later run started`,
            run.where,
          ),
        );
      }
      if (status === 'running') {
        activeRun = { requestId: run.requestId, status: 'running', startedSeq: run.startedSeq, lastSeq: run.lastSeq };
      }
      runs.push({
        requestId: run.requestId,
        status,
        startedSeq: run.startedSeq,
        lastSeq: run.lastSeq,
        finishedSeq: run.finishedSeq,
        delivered: this.#acked.has(run.requestId),
      });
    }
    const segment = this.#segment;
    const overlay =
      segment !== undefined && activeRun !== null && segment.requestId === activeRun.requestId
        ? { requestId: segment.requestId, messageId: segment.messageId, text: segment.parts.join('') }
        : null;
    return {
      messages: [...this.#messages],
      activeRun,
      overlay,
      lastSeq: this.#lastSeq,
      firstSeq: this.#firstSeq,
      runs,
      undelivered: runs.filter((r) => r.finishedSeq !== null && !r.delivered),
      findings,
    };
  }

  // TJ-EVENT-013..015: exclude seq <= highest accepted; a jump of more than one is a gap, never at the first record.
  #acceptSeq(seq: number, where: FindingLocation): boolean {
    const last = this.#lastSeq;
    if (last !== null && seq <= last) {
      if (this.#wasAccepted(seq)) {
        this.#report('seq_duplicate', `seq ${seq} was already accepted; the record is excluded`, where);
      } else {
        this.#report('seq_regression', `seq ${seq} is below the highest accepted seq ${last}; excluded`, where);
      }
      return false;
    }
    if (last !== null && seq > last + 1) {
      this.#report('seq_gap', `seq jumps from ${last} to ${seq}`, where);
    }
    const end = this.#ranges.length - 1;
    if (last !== null && seq === last + 1 && end >= 0) this.#ranges[end] = seq;
    else this.#ranges.push(seq, seq);
    this.#firstSeq ??= seq;
    this.#lastSeq = seq;
    return true;
  }

  #wasAccepted(seq: number): boolean {
    const ranges = this.#ranges;
    let lo = 0;
    let hi = ranges.length / 2 - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const from = ranges[2 * mid] ?? 0;
      const to = ranges[2 * mid + 1] ?? -1;
      if (seq < from) hi = mid - 1;
      else if (seq > to) lo = mid + 1;
      else return true;
    }
    return false;
  }

  #apply(type: string, value: Record<string, unknown>, seq: number, where: FindingLocation): void {
    if (SEGMENT_CLOSING_TYPES.has(type)) this.#segment = undefined;
    switch (type) {
      case 'message_append':
        if (this.#messagesKnown) this.#messages.push((value as EventMessageAppend).payload.message);
        return;
      case 'message_edit':
        if (this.#messagesKnown) this.#edit(value as EventMessageEdit, where);
        return;
      case 'undo':
        if (this.#messagesKnown) this.#undo(value as EventUndo, where);
        return;
      case 'checkpoint':
        this.#messages = [...(value.payload as { messages: Message[] }).messages];
        this.#messagesKnown = true;
        return;
      case 'delivery.ack':
        // An ack counts wherever it is; one for a request_id with no run is never consulted (TJ-REPLAY-017).
        this.#acked.add((value.payload as { request_id: string }).request_id);
        return;
      default:
        if (EVENT_STREAM_TYPES.has(type)) this.#stream(type, value, seq, where);
    }
  }

  // TJ-REPLAY-001, TJ-REPLAY-002: out-of-range index changes nothing and is reported.
  #edit(record: EventMessageEdit, where: FindingLocation): void {
    const payload = record.payload;
    if ('index' in payload && 'message' in payload) {
      if (payload.index < this.#messages.length) this.#messages[payload.index] = payload.message;
      else {
        this.#report(
          'inapplicable_event',
          `message_edit index ${payload.index} is out of range for a list of ${this.#messages.length}; no effect`,
          where,
        );
      }
      return;
    }
    this.#messages = [...payload.messages];
  }

  // TJ-REPLAY-002: an undo beyond the list empties it and is reported.
  #undo(record: EventUndo, where: FindingLocation): void {
    const n = record.payload?.n ?? 1;
    if (n > this.#messages.length) {
      this.#report(
        'inapplicable_event',
        `undo of ${n} message(s) exceeds the list of ${this.#messages.length}; the list is emptied`,
        where,
      );
      this.#messages = [];
      return;
    }
    this.#messages.length -= n;
  }

  #stream(type: string, value: Record<string, unknown>, seq: number, where: FindingLocation): void {
    const payload = value.payload as { request_id: string; message_id?: string; text?: string };
    const requestId = payload.request_id;
    if (type === 'chat.started') {
      // A segment belongs to the run whose chat.started precedes it: a new run leaves no segment open.
      this.#segment = undefined;
      this.#lastStarted = requestId;
      const earlier = this.#runs.get(requestId);
      // TJ-EVENT-016: a second chat.started for a request id starts no run (TJ-EVENT-010) and is reported.
      if (earlier !== undefined)
        this.#report(
          'duplicate_run_start',
          `run "${requestId}" already started at seq ${earlier.startedSeq}; this chat.started starts no run`,
          where,
        );
      if (earlier === undefined) {
        const started = (value as EventChatStarted).payload;
        this.#runs.set(started.request_id, {
          requestId,
          startedSeq: seq,
          where,
          lastSeq: seq,
          finishedSeq: null,
          finish: undefined,
        });
      }
      return;
    }
    if (type === 'assistant.segment.started' && payload.message_id !== undefined) {
      this.#segment = { requestId, messageId: payload.message_id, parts: [] };
    } else if (type === 'chat.delta' && this.#segment !== undefined && payload.message_id === this.#segment.messageId) {
      this.#segment.parts.push(payload.text ?? '');
    }
    const run = this.#runs.get(requestId);
    if (run === undefined) return;
    run.lastSeq = seq;
    const finish = EVENT_FINISHING_TYPES.get(type);
    if (finish !== undefined && run.finish === undefined) {
      run.finish = finish;
      run.finishedSeq = seq;
    }
  }

  #report(code: FindingCode, message: string, where: FindingLocation): void {
    this.#findings.push(makeFinding(code, message, where));
  }
}

/** The snapshot members of a fold's result (spec §15.3): messages, active run, overlay and last seq. */
export function eventLogSnapshot(state: EventLogState): EventLogSnapshot {
  return { messages: state.messages, activeRun: state.activeRun, overlay: state.overlay, lastSeq: state.lastSeq };
}
