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
import type {
  ActiveRun,
  EventLogFoldOptions,
  EventLogSnapshot,
  EventLogSource,
  EventLogState,
  EventRun,
  EventRunStatus,
} from './fold-event-log.js';

interface RunAccumulator {
  readonly requestId: string;
  readonly startedSeq: number;
  readonly where: FindingLocation;
  lastSeq: number;
  finishedSeq: number | null;
  finish: EventRunStatus | undefined;
}

/** A split checkpoint being read (spec §6.2): the parts so far, and which one must come next. */
interface OpenParts {
  readonly parts: number;
  readonly where: FindingLocation;
  next: number;
  nextSeq: number;
  readonly messages: Message[];
}

interface OpenSegment {
  readonly requestId: string;
  readonly messageId: string;
  /**
   * The deltas' texts; joined into one element whenever the text is read, so reading it again costs no new join, and
   * every {@link JOIN_DELTAS} deltas into one piece, so that an answer streamed in tiny deltas does not keep a string
   * and an array slot per delta until its segment closes.
   */
  parts: string[];
  /** How many of `parts`, from the start, are joined pieces; the deltas after them are kept apart. */
  joined: number;
}

/** Deltas kept apart at the end of an open segment's parts before they are joined into one piece. */
const JOIN_DELTAS = 512;

/**
 * Adds a delta's text to the open segment. Joining puts the parts in a new array (never changes the old one), so an
 * overlay read later from the old array still sees the text as of when it was taken.
 */
function appendDelta(segment: OpenSegment, text: string): void {
  segment.parts.push(text);
  if (segment.parts.length - segment.joined < JOIN_DELTAS) return;
  const parts = segment.parts.slice(0, segment.joined);
  parts.push(segment.parts.slice(segment.joined).join(''));
  segment.parts = parts;
  segment.joined = parts.length;
}

/**
 * The fold of an event log (spec §6.5, §15), applied one record at a time and readable between two records: the rules
 * of `@turnjournal/reader`'s `EventLogFold`, which is a thin layer over it, and what a writer keeps to check and apply
 * its own appends (spec §15.1, §15.3), so that the writer's state and a reader's fold of the same file are one piece
 * of code and cannot drift apart. A writer continues the fold its opening recovery built ({@link recoverEventFold}); after a
 * failed write it recovers a new one from the file rather than undoing records here (TJ-DUR-030).
 *
 * The choices where the spec is silent are listed on `EventLogFold`.
 */
export class IncrementalEventFold {
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
  /** The log's epoch as of the records folded (spec §6.7), or null for none. */
  #epoch: string | null = null;
  /** The split checkpoint whose parts are being read, if any (TJ-REPLAY-019). */
  #parts: OpenParts | undefined;
  readonly #findings: Finding[] = [];

  /** @param options where the fold starts; by default at the start of the file. */
  constructor(options: EventLogFoldOptions = {}) {
    this.#messagesKnown = !(options.messagesUnknownUntilCheckpoint ?? false);
  }

  /**
   * Adds the next record of the file as `EventLogFold.add` does: an accepted record of the event family (valid, unknown
   * or extension, spec §6.5) goes on to {@link IncrementalEventFold.add}; any other record is ignored. Returns true
   * when the record is accepted.
   */
  addRecord(record: JournalRecord, source: EventLogSource): boolean {
    const { validation, value } = record;
    if (!isAcceptedRecord(validation) || validation.classification.family !== 'event') return false;
    const seq = value.seq;
    // The family envelope guarantees an integer >= 0; the guard keeps the fold total for hand-built records.
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) return false;
    const where: FindingLocation =
      source.lineNumbers === false
        ? { file: source.file, offset: record.offset }
        : { file: source.file, line: record.line, offset: record.offset };
    return this.add(validation.classification.type, value, seq, validation.status === 'valid', where);
  }

  /**
   * Adds an accepted event record `value` of `type` with `seq` (a safe integer >= 0): the sequence checks first
   * (TJ-EVENT-013..015), then, when `valid` (it is a valid v1 record), its effect on the message list, the runs and
   * the open segment; an unknown or extension type takes part in the sequence checks only (spec §6.5). Returns true
   * when the record is accepted, false when its seq excludes it (`seq_duplicate`, `seq_regression`, TJ-EVENT-014).
   * `where` locates the findings the record causes.
   */
  add(type: string, value: Record<string, unknown>, seq: number, valid: boolean, where: FindingLocation): boolean {
    if (!this.#acceptSeq(seq, where)) return false;
    this.#foldEpoch(type, value, valid, where);
    if (valid && type === 'checkpoint.part') {
      // A complete split checkpoint is one checkpoint at its last part: one without an epoch clears it (§6.7).
      if (this.#part(value.payload as PartPayload, seq, where) && epochOf(value) === null) this.#epoch = null;
    } else {
      if (this.#parts !== undefined) this.#interruptParts();
      if (valid) this.#apply(type, value, seq, where);
    }
    return true;
  }

  /** The log's epoch as of the records folded (spec §6.7, TJ-EVENT-025), or null when it has none. */
  get epoch(): string | null {
    return this.#epoch;
  }

  // TJ-EVENT-025, TJ-EVENT-026: an epoch sets the log's, a checkpoint without one clears it, and a second one conflicts.
  #foldEpoch(type: string, value: Record<string, unknown>, valid: boolean, where: FindingLocation): void {
    const epoch = epochOf(value);
    if (epoch === null) {
      if (valid && type === 'checkpoint') this.#epoch = null;
      return;
    }
    const before = this.#epoch;
    if (before !== null && before !== epoch)
      this.#report(
        'epoch_conflict',
        `epoch ${JSON.stringify(epoch.slice(0, 64))} differs from the log's epoch ${JSON.stringify(before.slice(0, 64))}: two histories in one log`,
        where,
      );
    this.#epoch = epoch;
  }

  /**
   * {@link IncrementalEventFold.add} of a valid `chat.delta` record, given by its members rather than as an object: a
   * writer streaming an answer folds thousands of them, and builds no record object for any. The same effect and the
   * same findings as `add('chat.delta', {seq, ts, type, payload: {request_id, message_id, text}}, seq, true, where)`.
   */
  addDelta(seq: number, requestId: string, messageId: string, text: string, where: FindingLocation): boolean {
    if (!this.#acceptSeq(seq, where)) return false;
    if (this.#parts !== undefined) this.#interruptParts();
    // `#stream` for a delta (not a segment-closing type): the open segment's text, then the run's last seq.
    const segment = this.#segment;
    if (segment !== undefined && messageId === segment.messageId) appendDelta(segment, text);
    const run = this.#runs.get(requestId);
    if (run !== undefined) run.lastSeq = seq;
    return true;
  }

  /**
   * Takes the message list as it stands as known from here on: records added later change it even when the fold began
   * part-way through a log (`messagesUnknownUntilCheckpoint`) and accepted no checkpoint (its seq was excluded). What
   * a recovered tail ends with, so that a writer continuing the fold applies its own message records. No effect on a
   * fold that knows its list.
   */
  assumeMessagesKnown(): void {
    this.#messagesKnown = true;
  }

  /** The message list as folded so far (spec §15.1). The array is the fold's own: read it, do not keep it. */
  get messages(): readonly Message[] {
    return this.#messages;
  }

  /** The highest accepted `seq`, or null before any record was accepted. */
  get lastSeq(): number | null {
    return this.#lastSeq;
  }

  /** The `request_id` of the active run (the last `chat.started`'s run while it has no finishing record), if any. */
  get activeRequestId(): string | undefined {
    const requestId = this.#lastStarted;
    return requestId !== undefined && this.#runs.get(requestId)?.finish === undefined ? requestId : undefined;
  }

  /**
   * Whether the run of `requestId` has a finishing record, or undefined when the records folded hold no
   * `chat.started` for it.
   */
  isRunFinished(requestId: string): boolean | undefined {
    const run = this.#runs.get(requestId);
    return run === undefined ? undefined : run.finish !== undefined;
  }

  /** The open segment (the last `assistant.segment.started` not closed since), if any, whichever run it belongs to. */
  get openSegment(): { readonly requestId: string; readonly messageId: string } | undefined {
    return this.#segment;
  }

  /** The `request_id`s of the runs folded that have no finishing record (the active run included), in start order. */
  unfinishedRuns(): string[] {
    const ids: string[] = [];
    for (const run of this.#runs.values()) if (run.finish === undefined) ids.push(run.requestId);
    return ids;
  }

  /** The render-ready view of the records folded so far (spec §15.3); the message list is a copy. */
  snapshot(): EventLogSnapshot {
    const requestId = this.activeRequestId;
    const run = requestId === undefined ? undefined : this.#runs.get(requestId);
    const activeRun: ActiveRun | null =
      run === undefined
        ? null
        : { requestId: run.requestId, status: 'running', startedSeq: run.startedSeq, lastSeq: run.lastSeq };
    const overlayAsOfNow = this.#overlayLater(activeRun);
    let overlay: EventLogSnapshot['overlay'] | undefined;
    return {
      messages: [...this.#messages],
      activeRun,
      // Built when first read: joining an open segment's text costs its length, and a writer takes a snapshot at
      // every checkpoint (for its message list) while a long answer streams; joined each time, the cost of a delta
      // grew with the answer.
      get overlay() {
        overlay ??= overlayAsOfNow();
        return overlay;
      },
      lastSeq: this.#lastSeq,
      epoch: this.#epoch,
    };
  }

  /**
   * Everything derived from the records folded so far: the snapshot, the runs with their status (an unfinished run
   * before the last `chat.started` is abandoned and reported, TJ-REPLAY-010) and the findings. The fold is not
   * changed: more records may follow.
   */
  finish(): EventLogState {
    const findings = [...this.#findings];
    // The file ends inside a split checkpoint (a crash between its parts): the list stays as the records before it made it.
    if (this.#parts !== undefined) findings.push(incompleteParts(this.#parts, 'the log ends before its last part'));
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
    return {
      messages: [...this.#messages],
      activeRun,
      overlay: this.#overlay(activeRun),
      lastSeq: this.#lastSeq,
      epoch: this.#epoch,
      firstSeq: this.#firstSeq,
      runs,
      undelivered: runs.filter((r) => r.finishedSeq !== null && !r.delivered),
      findings,
    };
  }

  /**
   * The overlay as of now, built when the returned function is called: the segment's parts are only ever pushed to
   * (or replaced by a new array when joined), so the first `count` of them stay the text as of now.
   */
  #overlayLater(activeRun: ActiveRun | null): () => EventLogSnapshot['overlay'] {
    const segment = this.#segment;
    if (segment === undefined || activeRun === null || segment.requestId !== activeRun.requestId) return () => null;
    const { requestId, messageId, parts } = segment;
    const count = parts.length;
    return () => ({
      requestId,
      messageId,
      text: count === 1 ? (parts[0] as string) : parts.slice(0, count).join(''),
    });
  }

  #overlay(activeRun: ActiveRun | null): EventLogSnapshot['overlay'] {
    const segment = this.#segment;
    if (segment === undefined || activeRun === null || segment.requestId !== activeRun.requestId) return null;
    const text = segment.parts.length === 1 ? (segment.parts[0] as string) : segment.parts.join('');
    segment.parts = [text];
    segment.joined = 1;
    return { requestId: segment.requestId, messageId: segment.messageId, text };
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

  /**
   * A `checkpoint.part` (TJ-REPLAY-019): part 0 opens a set (closing an unfinished one as incomplete); the part due
   * next, with the next seq and the same count, continues it; the last one replaces the list with the parts' messages.
   * Anything else leaves the set incomplete, with no effect on the list.
   */
  /** Folds one part of a split checkpoint; true when it completed the set. */
  #part(payload: PartPayload, seq: number, where: FindingLocation): boolean {
    const { part, parts, messages } = payload;
    const open = this.#parts;
    if (open !== undefined && (part !== open.next || parts !== open.parts || seq !== open.nextSeq))
      this.#interruptParts();
    if (this.#parts === undefined) {
      if (part !== 0 || parts < 2) {
        this.#report('incomplete_checkpoint', `checkpoint part ${part} of ${parts} has no part 0 before it`, where);
        return false;
      }
      this.#parts = { parts, where, next: 0, nextSeq: seq, messages: [] };
    }
    const current = this.#parts as OpenParts;
    for (const message of messages) current.messages.push(message);
    current.next += 1;
    current.nextSeq = seq + 1;
    if (current.next < current.parts) return false;
    this.#parts = undefined;
    this.#messages = current.messages;
    this.#messagesKnown = true;
    return true;
  }

  #interruptParts(): void {
    const open = this.#parts as OpenParts;
    this.#parts = undefined;
    this.#findings.push(incompleteParts(open, `part ${open.next} does not follow`));
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
      this.#segment = { requestId, messageId: payload.message_id, parts: [], joined: 0 };
    } else if (type === 'chat.delta' && this.#segment !== undefined && payload.message_id === this.#segment.messageId) {
      appendDelta(this.#segment, payload.text ?? '');
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

/** Longest epoch a reader takes (spec §6.7): a longer value, or one that is not a string, is not an epoch. */
const MAX_EPOCH_LENGTH = 128;

/** The `epoch` envelope member of an event record (spec §6.7), or null when it has none or one that is not an epoch. */
export function epochOf(value: Readonly<Record<string, unknown>>): string | null {
  const epoch = value.epoch;
  return typeof epoch === 'string' && epoch.length >= 1 && epoch.length <= MAX_EPOCH_LENGTH ? epoch : null;
}

interface PartPayload {
  readonly part: number;
  readonly parts: number;
  readonly messages: readonly Message[];
}

function incompleteParts(open: OpenParts, why: string): Finding {
  return makeFinding(
    'incomplete_checkpoint',
    `a checkpoint split in ${open.parts} parts has ${open.next}: ${why}; it changes nothing`,
    open.where,
  );
}
