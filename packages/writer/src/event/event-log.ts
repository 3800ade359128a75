// Over 450 lines: the event-log writer's public API (one documented method per record type, about 300 lines with its
// comments), its reservation step and the synchronous held-delta path (`holdDelta`), which reserves from the same
// private state; the input types, the transition rules, the fold, the queue, the delta and checkpoint line builders
// and compaction already live in modules of their own.
import type { EventLogSnapshot, ScannedRun } from '@turnjournal/reader';
import {
  applyRunRecord,
  copyRun,
  type IncrementalEventFold,
  readRunIndex,
  runIndexEntries,
} from '@turnjournal/reader/_internals';
import type { WritableJournal } from '@turnjournal/reader/record-store';
import type { Finding, FindingLocation } from '@turnjournal/schema';
import {
  type AppendAck,
  AppendFile,
  type AppendLineOptions,
  type Durability,
  flushAfter,
  holdLine,
  idleForFlush,
  type OpenReport,
} from '../append/append-file.js';
import { type EncodedRecord, encodeCheckedRecord } from '../append/encode-checked.js';
import { jsonBytesBound } from '../append/encode-record.js';
import { JournalAppender, type Prepared } from '../append/journal-appender.js';
import { WriterError, WriterPoisonedError } from '../errors.js';
import { CheckpointEncoder } from './checkpoint-encoder.js';
import { CheckpointLines } from './checkpoint-lines.js';
import { encodeCheckpointParts } from './checkpoint-parts.js';
import { type CompactEventLogOptions, compactOpenFile, type EventLogCompaction } from './compact-event-log.js';
import { deepFreeze } from './deep-freeze.js';
import { DeltaLines, encodeDeltaRecord } from './encode-delta.js';
import type {
  EventChatCancelledInput,
  EventChatDeltaInput,
  EventChatErrorInput,
  EventChatStartedInput,
  EventDeliveryAckOptions,
  EventLogAck,
  EventLogMessage,
  EventLogOpenRecovery,
  EventSegmentStartedInput,
  EventToolEndInput,
  EventToolResultInput,
  EventToolStartInput,
} from './event-log-inputs.js';
import { SERVER_STARTUP_RECOVERY } from './event-log-inputs.js';
import { whyNotApplicable } from './event-rules.js';
import { recoverTail, type TailRecovery } from './recover-tail.js';

type Payload = Record<string, unknown>;

/** The types whose payload carries messages (`message` or `messages`): the fold keeps them, snapshots hand them out. */
const MESSAGE_TYPES: ReadonlySet<string> = new Set(['message_append', 'message_edit', 'checkpoint', 'checkpoint.part']);
const HOLD: AppendLineOptions = { hold: true };
/** The `ts` the writer makes (`Date.prototype.toISOString` of epoch milliseconds): what a held delta's must be. */
const ISO_STAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Set by {@link EventLog}'s static block: reaches its private delta path for {@link holdDelta}. */
let holdDeltaOf: (log: EventLog, requestId: string, messageId: string, text: string, ts: string) => number;
/** Set by {@link EventLog}'s static block: reaches its private state for {@link lastCheckpoint}. */
let lastCheckpointOf: (log: EventLog) => { readonly payload: Payload; readonly lineBytes: number } | null;
/** Set by {@link EventLog}'s static block: reaches its private state for {@link lastCheckpointParts}. */
let lastCheckpointPartsOf: (log: EventLog, firstSeq: number) => readonly CheckpointPartKept[] | null;
/** Set by {@link EventLog}'s static block: reaches its fold for {@link messageCount}. */
let messageCountOf: (log: EventLog) => number;
/** Set by {@link EventLog}'s static block: reaches its checkpoint switch for {@link deferCheckpoints}. */
let deferCheckpointsOf: (log: EventLog, deferred: boolean) => void;
/** Set by {@link EventLog}'s static block: reaches its epoch for {@link writtenEpoch}. */
let writtenEpochOf: (log: EventLog) => string;
/** Set by {@link EventLog}'s static block: reaches its count of re-reads for {@link stateRereads}. */
let stateRereadsOf: (log: EventLog) => number;
/** Set by {@link EventLog}'s static block: reaches its private encoder for {@link oversizeRefusal}. */
let oversizeRefusalOf: (log: EventLog, type: string, payload: Payload | undefined, ahead: number) => unknown;

/** One record of a split checkpoint the log reserved (see {@link lastCheckpointParts}). */
export interface CheckpointPartKept {
  readonly seq: number;
  readonly ts: string;
  readonly payload: Readonly<Record<string, unknown>>;
  /** Its line's length in bytes, LF included. */
  readonly lineBytes: number;
}

/** A checkpoint reserved: its records' lines (one, or the parts of a split one) and what each holds. */
interface CheckpointReserved {
  readonly encoded: readonly EncodedRecord[];
  readonly seq: number;
}

/** What {@link openEventLog} found and chose, handed to the writer. */
export interface EventLogSettings {
  readonly interval: number;
  readonly clock: () => number;
  readonly maxLineBytes: number;
  readonly findings: readonly Finding[];
  readonly recovery: EventLogOpenRecovery;
  /** The log's epoch, or the one chosen for a log that has none (spec §6.7). */
  readonly epoch: string;
  /**
   * Every run of the log (the last checkpoint's run index continued by the records after it, TJ-EVENT-020): the
   * writer refuses their request ids (TJ-EVENT-010 across reopen and compaction) and writes the index into each
   * checkpoint (TJ-EVENT-019). The writer owns the map from now on.
   */
  readonly runs: Map<string, ScannedRun>;
}

/**
 * The writer of one event log (spec §6): message records, stream records of runs, delivery acks, checkpoints and
 * compaction, with the seq assigned by the writer.
 *
 * Every append builds the record `{seq, ts, type, payload}` (`ts` in RFC 3339 UTC from the clock, TJ-FAM-021),
 * validates it against the v1 schema, checks that it applies to the log's current state (an edit index in range, an
 * undo within the list, stream records for the active run only, TJ-EVENT-009, TJ-EVENT-010, TJ-EVENT-012: errors
 * with code `illegal_transition`, nothing written), reserves the next seq synchronously (so overlapping calls get
 * increasing seqs in call order and are written in that order, TJ-DUR-006) and resolves with `{seq, offset, length}`
 * once the durability mode acknowledges the record.
 *
 * A failed write (ENOSPC, EIO) rejects with code `write_failed` and leaves nothing in the file (TJ-DUR-023); the
 * appends already queued behind it are refused with `append_cancelled`, because their seqs come after the failed one;
 * the writer re-reads its state from the file before anything else is appended, and the next append reuses the failed
 * seq: no seq is ever skipped (TJ-DUR-030).
 * A failed fdatasync rejects and poisons the writer (`writer_poisoned`) until it is reopened (TJ-DUR-021).
 *
 * Checkpoints (TJ-EVENT-006): when an append brings the count of records since the last checkpoint to
 * `checkpointInterval` and their bytes to the length of the last checkpoint's line, a `checkpoint` record with the
 * current message list is reserved right after it, as a record of its own with its own seq (so no record can come
 * between). The byte condition keeps a long conversation's log linear: a checkpoint repeats every message, so one
 * every 50 records would make the file and the cost per record grow with the conversation (3,000 tool results: a
 * 57 MB log for 2.2 MB of records). The triggering call resolves with its own record's ack and does not wait for the
 * checkpoint; a checkpoint that fails to write is retried by the next append, and {@link EventLog.checkpointFailure}
 * tells why it failed. A message list whose checkpoint line would be over the line-size limit is checkpointed as a
 * split checkpoint, `checkpoint.part` records of up to 1 MiB of messages each with consecutive seqs, the run index on
 * the last (TJ-EVENT-028..030); one that cannot be split within the limit (a single message, or the run index, too long
 * for a part) is not checkpointed, and the writer tries again once an interval and as many bytes as the limit have
 * been appended (TJ-EVENT-022).
 */
export class EventLog {
  /** The event log file. */
  readonly path: string;
  /** Records at least between two automatic checkpoints (see the class comment for the byte condition). */
  readonly checkpointInterval: number;
  /** Findings about the lines read when the log was opened (its tail); mid-file damage is left in place. */
  readonly findings: readonly Finding[];
  /** Where opening found the state it continues from. */
  readonly recovery: EventLogOpenRecovery;
  readonly #file: WritableJournal;
  /** The journal again when it is a file, whose synchronous held path the held deltas take; null otherwise. */
  readonly #heldFile: AppendFile | null;
  /** The queue: reserves, encodes and appends in call order; re-reads the state after a failed write (TJ-DUR-030). */
  readonly #appender: JournalAppender;
  readonly #clock: () => number;
  readonly #maxLineBytes: number;
  /** The reader's fold of the log (spec §15): of its tail at open, continued with every record reserved since. */
  #fold: IncrementalEventFold;
  /** Records reserved since the last checkpoint (or the start of the file): what triggers the next checkpoint. */
  #sinceCheckpoint: number;
  /** Their bytes, LFs included: the next checkpoint waits until they reach {@link EventLog.#checkpointBytesDue}. */
  #bytesSinceCheckpoint: number;
  /**
   * The bytes since the last checkpoint that the next automatic one waits for: the length of the last checkpoint's
   * line (0 when there is none), what a checkpoint costs to write again; after one that did not encode (a message list
   * over the line-size limit), the bytes then plus the limit (TJ-EVENT-022).
   */
  #checkpointBytesDue: number;
  /** Where the fold's findings would point; the writer's own records apply, so it reports none. */
  readonly #where: FindingLocation;
  #runs: Map<string, ScannedRun>;
  #nextSeq: number;
  #checkpointDue: number;
  #checkpointFailure: unknown = null;
  #tsStamp = Number.NaN;
  #ts = '';
  /** The lines of this log's `chat.delta` records (with the serialised ids of its open segment). */
  readonly #deltaLines = new DeltaLines();
  /** The last `ts` a held delta came with that was checked (deltas come many per millisecond). */
  #heldTs = '';
  /**
   * Moves whenever the message list or the run index may have changed (every reservation but a held delta's, and a
   * re-read): the checkpoint payload {@link CheckpointLines} remembers holds the state of one version.
   */
  #stateVersion = 0;
  readonly #checkpointLines = new CheckpointLines();
  /** Encodes checkpoints from the text of their messages the writer already has. */
  readonly #checkpointEncoder: CheckpointEncoder;
  /** True while automatic checkpoints are put off (see {@link deferCheckpoints}). */
  #checkpointsDeferred = false;
  /**
   * The epoch this writer writes (spec §6.7): the log's, or a new one when the log has none — on the first record of a
   * new log (TJ-EVENT-023) and on every checkpoint (TJ-EVENT-024), which gives an older log that had none this one.
   */
  #epoch: string;
  /** The records of the last split checkpoint reserved (TJ-EVENT-028), for a live session's subscribers. */
  #lastParts: readonly CheckpointPartKept[] = [];
  /** How many times the state was re-read from the file after a failed write or sync (see {@link stateRereads}). */
  #rereads = 0;

  static {
    deferCheckpointsOf = (log, deferred) => {
      log.#checkpointsDeferred = deferred;
    };
    holdDeltaOf = (log, requestId, messageId, text, ts) => log.#holdDelta(requestId, messageId, text, ts);
    lastCheckpointOf = (log) => log.#lastCheckpoint();
    lastCheckpointPartsOf = (log, firstSeq) => (log.#lastParts[0]?.seq === firstSeq ? log.#lastParts : null);
    messageCountOf = (log) => log.#fold.messages.length;
    writtenEpochOf = (log) => log.#epoch;
    stateRereadsOf = (log) => log.#rereads;
    oversizeRefusalOf = (log, type, payload, ahead) => log.#oversizeRefusal(type, payload, ahead);
  }

  /** @internal use {@link openEventLog}. */
  constructor(file: WritableJournal, tail: TailRecovery, settings: EventLogSettings) {
    this.#file = file;
    this.#heldFile = file instanceof AppendFile ? file : null;
    this.#appender = new JournalAppender(file, () => this.#reread());
    this.#fold = tail.fold;
    this.#sinceCheckpoint = tail.sinceCheckpoint;
    this.#bytesSinceCheckpoint = tail.bytesSinceCheckpoint;
    this.#checkpointBytesDue = tail.checkpointBytes;
    this.#where = { file: file.name };
    this.#nextSeq = (tail.fold.lastSeq ?? -1) + 1;
    this.#clock = settings.clock;
    this.#runs = settings.runs;
    this.#maxLineBytes = settings.maxLineBytes;
    this.#checkpointEncoder = new CheckpointEncoder(settings.maxLineBytes);
    this.#epoch = settings.epoch;
    this.path = file.name;
    this.checkpointInterval = settings.interval;
    this.#checkpointDue = settings.interval;
    this.findings = settings.findings;
    this.recovery = settings.recovery;
  }

  /** The durability mode in force (TJ-DUR-013). */
  get durability(): Durability {
    return this.#file.durability;
  }

  /** What opening found and repaired: creation, lock take-over, torn tail. */
  get opened(): OpenReport {
    return this.#file.opened;
  }

  /**
   * The seq of the last record appended (acknowledged or still in flight), or null for an empty log. Once every
   * append has settled it is what a reader derives as `lastSeq`.
   */
  get lastSeq(): number | null {
    return this.#fold.lastSeq;
  }

  /** Why the last automatic checkpoint could not be appended, or null when it was (or none was due). */
  get checkpointFailure(): unknown {
    return this.#checkpointFailure;
  }

  /**
   * The render-ready view of the log (spec §15.3) from the writer's memory, without reading the file: the message list
   * (its messages are frozen), the active run, the open segment's overlay and the last seq. It includes appends still
   * in flight; await them (or {@link EventLog.idle}) before handing it to a client, so that it never shows a record
   * whose write then fails.
   */
  snapshot(): EventLogSnapshot {
    return this.#fold.snapshot();
  }

  /**
   * Every run of the log by `request_id`, in start order, with its outcome and acks (spec §6.3, §6.4): what the writer
   * holds in its run index (TJ-EVENT-019), including the records it has reserved and not yet written. Opening built it
   * from the last checkpoint's index and the records after it (TJ-EVENT-020), so no caller needs to scan the log for
   * its runs. The map and its runs are copies.
   */
  runs(): Map<string, ScannedRun> {
    const copy = new Map<string, ScannedRun>();
    for (const [id, run] of this.#runs) copy.set(id, copyRun(run));
    return copy;
  }

  /** Appends `message_append`: pushes one message (spec §6.2). */
  appendMessage(message: EventLogMessage): Promise<EventLogAck> {
    return this.#submit('message_append', { message });
  }

  /** Appends `message_edit` with `{index, message}`: replaces the message at `index`, which must exist. */
  editMessage(index: number, message: EventLogMessage): Promise<EventLogAck> {
    return this.#submit('message_edit', { index, message });
  }

  /** Appends `message_edit` with `{messages}`: replaces the whole list. */
  replaceMessages(messages: readonly EventLogMessage[]): Promise<EventLogAck> {
    return this.#submit('message_edit', { messages });
  }

  /** Appends `undo` with `{n}`: removes the last `n` messages (1 by default); the list must hold at least `n`. */
  undo(n = 1): Promise<EventLogAck> {
    return this.#submit('undo', { n });
  }

  /**
   * Appends `chat.started`: a run begins. Refused while another run is active (TJ-EVENT-009: finish it first) and for
   * a `requestId` the log already holds (TJ-EVENT-010): the writer knows the runs of the tail it folded when it was
   * opened, the request ids of every earlier `chat.started` (found at open by a scan of the lines before that tail),
   * and every run since.
   */
  chatStarted(input: EventChatStartedInput): Promise<EventLogAck> {
    return this.#typed('chat.started', input, (i) => ({
      request_id: i.requestId,
      ...defined('model', i.model),
      ...defined('content', i.content),
    }));
  }

  /** Appends `assistant.segment.started`: opens a segment of the active run (closing any open one). */
  segmentStarted(input: EventSegmentStartedInput): Promise<EventLogAck> {
    return this.#typed('assistant.segment.started', input, (i) => ({
      request_id: i.requestId,
      message_id: i.messageId,
    }));
  }

  /** Appends `chat.delta`: text of the open segment, which must be the active run's segment `messageId`. */
  delta(input: EventChatDeltaInput): Promise<EventLogAck> {
    return this.#typed('chat.delta', input, (i) => ({
      request_id: i.requestId,
      message_id: i.messageId,
      text: i.text,
    }));
  }

  /** Appends `tool.start` for the active run (it closes the open segment). */
  toolStart(input: EventToolStartInput): Promise<EventLogAck> {
    return this.#typed('tool.start', input, (i) => ({
      request_id: i.requestId,
      tool_call_id: i.toolCallId,
      tool: i.tool,
      ...defined('args', i.args),
    }));
  }

  /** Appends `tool.end` for the active run. */
  toolEnd(input: EventToolEndInput): Promise<EventLogAck> {
    return this.#typed('tool.end', input, (i) => ({
      request_id: i.requestId,
      tool_call_id: i.toolCallId,
      ...defined('is_error', i.isError),
    }));
  }

  /** Appends `tool.result` for the active run. */
  toolResult(input: EventToolResultInput): Promise<EventLogAck> {
    return this.#typed('tool.result', input, (i) => ({
      request_id: i.requestId,
      tool_call_id: i.toolCallId,
      output: i.output,
      ...defined('is_error', i.isError),
    }));
  }

  /** Appends `chat.done`: the active run finished normally. */
  chatDone(input: { readonly requestId: string }): Promise<EventLogAck> {
    return this.#typed('chat.done', input, (i) => ({ request_id: i.requestId }));
  }

  /** Appends `chat.error`: the active run failed. */
  chatError(input: EventChatErrorInput): Promise<EventLogAck> {
    return this.#typed('chat.error', input, (i) => ({ request_id: i.requestId, error: i.error }));
  }

  /**
   * Appends `chat.cancelled`: the run was cancelled. Allowed for the active run and for an earlier run this writer
   * knows never finished (an abandoned run, spec §15.3), which it closes.
   */
  chatCancelled(input: EventChatCancelledInput): Promise<EventLogAck> {
    return this.#typed('chat.cancelled', input, (i) => ({ request_id: i.requestId, ...defined('reason', i.reason) }));
  }

  /**
   * Appends `delivery.ack` for a finished run (spec §6.4). Call it only once the client confirmed receipt of the run's
   * finishing record (TJ-EVENT-012); refused for a run this writer knows has not finished, and for a `throughSeq` above
   * the seq of the last record before the ack, which no client can have received (TJ-EVENT-021). An ack for a run
   * outside the writer's knowledge is written (readers ignore one whose run is not in the log, TJ-REPLAY-017).
   */
  ack(requestId: string, options: EventDeliveryAckOptions = {}): Promise<EventLogAck> {
    return this.#typed('delivery.ack', options, (o) => ({
      request_id: requestId,
      ...defined('client_id', o.clientId),
      ...defined('through_seq', o.throughSeq),
    }));
  }

  /**
   * Appends a record of any type but `checkpoint` (use {@link EventLog.checkpoint}), in the envelope: a private
   * extension `x.<org>.<name>` (ignored by readers), a type of a later version (readers report it as
   * `unknown_record`, info), or a v1 type with a payload the typed methods do not build (extra members). A v1 type is
   * validated against its schema and checked against the state like the typed methods; another type must be a valid
   * event envelope. `payload` may be omitted only where the schema allows it.
   *
   * `options.hold` (in `none` mode; the other modes ignore it): the record is checked, given its seq and applied to
   * the writer's state as usual, but its line is kept in memory, and the call resolves once it is queued. Held lines
   * are written in call order, in one write, with the next append that is not held, on {@link EventLog.idle},
   * {@link EventLog.flush}, compaction and close, or once they add up to 64 KiB. For records whose loss with the
   * process is acceptable (a live session holds its deltas until its next sync, TJ-LIVE-007): a crash loses them,
   * and a failed write that loses one poisons the writer (`writer_poisoned`) until it is reopened.
   */
  append(
    type: string,
    payload?: Readonly<Record<string, unknown>>,
    options?: { readonly hold?: boolean },
  ): Promise<EventLogAck> {
    if (typeof type !== 'string' || type.length === 0)
      return Promise.reject(new WriterError('invalid_record', 'a record type must be a non-empty string', this.path));
    if (type === 'checkpoint' || type === 'checkpoint.part')
      return Promise.reject(
        new WriterError(
          'invalid_record',
          `a ${type} must equal the message list (TJ-EVENT-007, TJ-EVENT-030): use checkpoint(), not append()`,
          this.path,
        ),
      );
    if (payload !== undefined && (typeof payload !== 'object' || payload === null || Array.isArray(payload)))
      return Promise.reject(new WriterError('invalid_record', 'a payload must be a JSON object', this.path));
    return this.#submit(type, payload, options?.hold === true ? HOLD : undefined);
  }

  /**
   * Appends a `checkpoint` now, with the current message list (TJ-EVENT-007), whatever the count since the last one.
   * The next automatic checkpoint is due `checkpointInterval` records after it.
   */
  checkpoint(): Promise<EventLogAck> {
    return this.#submit('checkpoint', undefined);
  }

  /**
   * Closes every run this writer knows that never finished, by appending `chat.cancelled` with `reason` (by default
   * `server_startup_recovery`), so clients stop waiting for it (TJ-RECOV-011). Call it at startup, right after
   * opening, before this process starts runs of its own: the previous writer is gone (this one holds the lock), so an
   * unfinished run can no longer finish. Resolves with the runs closed, in the order their records were written.
   */
  async cancelUnfinishedRuns(reason: string = SERVER_STARTUP_RECOVERY): Promise<{ requestId: string; seq: number }[]> {
    if (typeof reason !== 'string' || reason.length === 0)
      throw new WriterError('invalid_record', 'the cancellation reason must be a non-empty string', this.path);
    await this.#appender.idle();
    // Every unfinished run of the log, those started before the tail the opening folded included (the run index,
    // TJ-EVENT-020): a run abandoned by an earlier crash stays open otherwise, and its clients wait forever.
    const unfinished = new Set(this.#fold.unfinishedRuns());
    for (const [requestId, run] of this.#runs) if (run.finish === null) unfinished.add(requestId);
    const ordered = [...unfinished].sort(
      (a, b) => (this.#runs.get(a)?.startedSeq ?? 0) - (this.#runs.get(b)?.startedSeq ?? 0),
    );
    const writes = ordered.map((requestId) =>
      this.#submit('chat.cancelled', { request_id: requestId, reason }).then((ack) => ({ requestId, seq: ack.seq })),
    );
    return Promise.all(writes);
  }

  /**
   * Compacts the log (spec §14.2; see {@link compactEventLog} for the rules) while this writer holds its lock: waits
   * for the appends in flight, rewrites the file atomically, and goes on appending to the new file; appends called
   * meanwhile wait and are written after it, in call order. If the replacement fails part-way the writer is poisoned
   * (the file may have changed under it): reopen it.
   */
  compact(options: CompactEventLogOptions = {}): Promise<EventLogCompaction> {
    return this.#appender.exclusive(() =>
      compactOpenFile(this.#file, options, this.#clock, this.#maxLineBytes, (error) => this.#appender.break(error)),
    );
  }

  /** Waits until every append, checkpoint and compaction called so far has settled, and held lines are written. */
  async idle(): Promise<void> {
    await this.#appender.idle();
    await this.#file.idle();
  }

  /**
   * Waits for pending appends, then fdatasyncs the file: what makes `none`-mode records durable before close. From
   * the first flush on, a `none`-mode log pre-allocates space after its lines (spec §11.6), as its syncs then need.
   */
  async flush(): Promise<void> {
    // Waiting on the file at once tells it a sync is coming, so it writes what is queued without pausing first; an
    // append file then issues the sync in the same run as that write, and the flush waits for that sync.
    const file = this.#heldFile;
    if (file === null) {
      const written = this.#file.idle();
      await this.#appender.idle();
      await written;
      await this.#file.flush();
      return;
    }
    const issued = idleForFlush(file);
    await this.#appender.idle();
    await flushAfter(file, await issued);
  }

  /**
   * Waits for everything called so far, fsyncs in `none` mode (TJ-DUR-015), closes the file and releases the lock;
   * overlapping calls close it once.
   */
  close(): Promise<void> {
    return this.#appender.close();
  }

  // ---- the append path -------------------------------------------------------------------------------------------

  /** Builds a payload from a typed input, refusing a non-object input with a clear error instead of a TypeError. */
  #typed<I>(type: string, input: I, build: (input: I) => Payload): Promise<EventLogAck> {
    if (typeof input !== 'object' || input === null)
      return Promise.reject(new WriterError('invalid_record', `${type} needs an input object`, this.path));
    return this.#submit(type, build(input));
  }

  #submit(type: string, payload: Payload | undefined, options?: AppendLineOptions): Promise<EventLogAck> {
    let seq = 0;
    return this.#appender
      .append(() => {
        seq = this.#nextSeq;
        return this.#reserve(type, payload);
      }, options)
      .then((ack) => ({ seq, cursor: (ack as AppendAck).cursor, length: (ack as AppendAck).length }));
  }

  /**
   * The reservation step: builds and checks the record against the current state, takes the next seq, applies the
   * record to the state, and returns its line — with an automatic checkpoint reserved right behind it when one is due
   * (TJ-EVENT-006).
   */
  #reserve(type: string, payload: Payload | undefined): Prepared {
    if (this.#file.poisoned) throw new WriterPoisonedError(this.path, 'an earlier sync or write failed');
    this.#stateVersion += 1;
    if (type === 'checkpoint') return this.#reserveCheckpoint();
    const encoded = this.#encode(type, payload);
    const { written, bytes } = encoded;
    const why = whyNotApplicable(this.#fold, type, written.payload as Payload | undefined, this.#runs);
    if (why !== null) throw new WriterError('illegal_transition', `${type}: ${why}`, this.path);
    const seq = this.#nextSeq;
    this.#nextSeq = seq + 1;
    this.#apply(type, written, encoded.valid, bytes.length, seq);
    if (type === 'message_append' && encoded.valid)
      this.#checkpointEncoder.noteAppended(bytes, seq, written.ts as string, written.payload as Payload);
    if (written.payload !== undefined)
      applyRunRecord(this.#runs, seq, written.ts as string, type, written.payload as Payload);
    if (
      this.#checkpointsDeferred ||
      this.#sinceCheckpoint < this.#checkpointDue ||
      this.#bytesSinceCheckpoint < this.#checkpointBytesDue
    )
      return bytes;
    const checkpoint = this.#autoCheckpoint();
    if (checkpoint === null) return bytes;
    // Remembered, as a held delta's checkpoint is: the deltas that may follow repeat its line, and a live session
    // keeps its payload for subscribers without rebuilding the list (see `lastCheckpoint`). A failed write of it
    // re-reads the state, which moves the version and so forgets it.
    if (checkpoint.single)
      this.#checkpointLines.remember(
        this.#stateVersion,
        checkpoint.written.payload as Payload,
        checkpoint.seq,
        checkpoint.written.ts as string,
        checkpoint.trailer,
      );
    return { line: bytes, trailer: checkpoint.trailer, trailerSettled: checkpoint.trailerSettled };
  }

  /**
   * The `checkpoint()` call's reservation: the checkpoint's line, or a split one's first part with the others behind,
   * whose outcome `settled` is told.
   */
  #reserveCheckpoint(): Prepared {
    const { encoded } = this.#reserveCheckpointRecords(this.#encodeCheckpoint());
    this.#checkpointFailure = null;
    if (encoded.length === 1) return (encoded[0] as EncodedRecord).bytes;
    // Every part in one write: acknowledged together, and truncated together if it fails (TJ-DUR-023), so the call
    // never resolves for, nor leaves in the file, an incomplete set.
    return { lines: Buffer.concat(encoded.map((record) => record.bytes)) };
  }

  /**
   * Takes the seqs of an encoded checkpoint's records and applies them to the state: one `checkpoint`, or the parts of
   * a split one (TJ-EVENT-028), whose lines together space the next checkpoint (TJ-EVENT-006).
   */
  #reserveCheckpointRecords(encoded: readonly EncodedRecord[]): CheckpointReserved {
    const seq = this.#nextSeq;
    let bytes = 0;
    for (const record of encoded) {
      const type = record.written.type as string;
      this.#apply(type, record.written, record.valid, record.bytes.length, this.#nextSeq);
      this.#nextSeq += 1;
      bytes += record.bytes.length;
    }
    this.#checkpointBytesDue = bytes;
    this.#checkpointDue = this.checkpointInterval;
    this.#lastParts =
      encoded.length === 1
        ? []
        : encoded.map((record, i) => ({
            seq: seq + i,
            ts: record.written.ts as string,
            payload: record.written.payload as Payload,
            lineBytes: record.bytes.length,
          }));
    return { encoded, seq };
  }

  /** @param ts the checkpoint's `ts`: by default from the clock; a held delta's checkpoint takes the delta's. */
  #autoCheckpoint(ts?: string): {
    trailer: Uint8Array;
    trailerSettled: (error: unknown) => void;
    written: Payload;
    seq: number;
    single: boolean;
  } | null {
    try {
      const { encoded, seq } = this.#reserveCheckpointRecords(this.#encodeCheckpoint(ts));
      const lines = encoded.map((record) => record.bytes);
      // A failure re-reads the state from the file; the count then makes the next append retry. A split checkpoint's
      // parts go out in one write (see appendLines): a failure truncates them all, leaving no incomplete set.
      return {
        trailer: lines.length === 1 ? (lines[0] as Uint8Array) : Buffer.concat(lines),
        single: lines.length === 1,
        trailerSettled: (error) => (this.#checkpointFailure = error),
        written: (encoded[0] as EncodedRecord).written,
        seq,
      };
    } catch (error) {
      // The list does not encode even split (a part over the line-size limit). A try serialises the whole list,
      // so try again only after an interval and as many bytes as the limit (TJ-EVENT-022): retrying every interval
      // made the cost of a record follow the length of the conversation (bench/results/history.md, "Long
      // conversations, 2026-11-27 night").
      this.#checkpointFailure = error;
      this.#checkpointDue = this.#sinceCheckpoint + this.checkpointInterval;
      this.#checkpointBytesDue = this.#bytesSinceCheckpoint + this.#maxLineBytes;
      return null;
    }
  }

  /**
   * A checkpoint's payload: the message list (TJ-EVENT-007) and the run index, every run of the log as of the
   * checkpoint (TJ-EVENT-019), so that opening reads no further back than the last checkpoint (TJ-EVENT-020).
   */
  #encodeCheckpoint(ts: string = this.#stamp()): EncodedRecord[] {
    const payload = { messages: [...this.#fold.messages], runs: runIndexEntries(this.#runs.values()) };
    // The fold's messages were parsed from lines and frozen, and the run index holds strings and numbers: the record
    // is kept as it is rather than parsed back from its line (see encodeParsedRecord), and the messages the last
    // checkpoint holds too are copied from its line (see CheckpointEncoder).
    const record = { seq: this.#nextSeq, ts, type: 'checkpoint', payload, epoch: this.#epoch } as const;
    try {
      return [this.#checkpointEncoder.encode(record, this.path)];
    } catch (error) {
      // Over the line-size limit: split over several lines (TJ-EVENT-028), never when one line fits (TJ-EVENT-029); the
      // epoch, an envelope member, goes on the last part (TJ-EVENT-024).
      if (!(error instanceof WriterError && error.code === 'line_too_long')) throw error;
      return encodeCheckpointParts(record, this.#maxLineBytes, this.path);
    }
  }

  /**
   * Applies a reserved record to the fold, with the reader's rules (spec §15.1, §15.3; `whyNotApplicable` has checked
   * that it applies), and counts it towards the next checkpoint. Its messages are frozen first: the fold keeps them
   * and snapshots hand them out.
   */
  #apply(type: string, written: Payload, valid: boolean, length: number, seq: number): void {
    if (MESSAGE_TYPES.has(type)) {
      // Only the messages: a checkpoint's run index is not kept, and freezing it would cost a walk of every run.
      const payload = written.payload as Payload;
      deepFreeze(payload.message);
      deepFreeze(payload.messages);
    }
    this.#fold.add(type, written, seq, valid, this.#where);
    if (type === 'checkpoint' || type === 'checkpoint.part') {
      this.#sinceCheckpoint = 0;
      this.#bytesSinceCheckpoint = 0;
      this.#checkpointBytesDue = length;
    } else {
      this.#sinceCheckpoint += 1;
      this.#bytesSinceCheckpoint += length;
    }
  }

  /**
   * Builds the record with the seq it will get and encodes it with the writers' checked encoder: the value kept is
   * the JSON a reader will parse (members JSON drops are dropped here too, so the writer's memory equals the file). A
   * v1 type must validate against its schema; any other type must be an accepted event record (its envelope).
   */
  #encode(type: string, payload: Payload | undefined, seq: number = this.#nextSeq): EncodedRecord {
    const ts = this.#stamp();
    // The first record of a log that has none carries its epoch (TJ-EVENT-023). A record encoded further ahead of an
    // empty log (`oversizeRefusal`) carries it too: its length is an upper bound of what the log will write.
    const first = this.#fold.lastSeq === null;
    if (type === 'chat.delta' && payload !== undefined && !first) {
      const fast = encodeDeltaRecord(seq, ts, payload, this.#maxLineBytes, this.#deltaLines);
      if (fast !== undefined) return fast;
    }
    const record = {
      seq,
      ts,
      type,
      ...(payload === undefined ? {} : { payload }),
      ...(first ? { epoch: this.#epoch } : {}),
    };
    return encodeCheckedRecord(record, { family: 'event', type, v1Only: false }, this.#maxLineBytes, this.path);
  }

  /**
   * `append('chat.delta', {request_id, message_id, text}, {hold: true})` without a promise (see {@link holdDelta}):
   * the seq, or -1 with nothing changed when the promise path must decide. Taken only where that path would reserve
   * the record at once, accept it and hold its line: the appender idle (nothing waiting, no re-read, no compaction)
   * on a usable `none`-mode file, the delta for the active run's open segment (`whyNotApplicable`'s rules), a `ts` of
   * the writer's own form, and the line within `maxLineBytes`. Then it does what that path does: the line from
   * {@link DeltaLines} (the checked encoder's bytes) held by the file as text, the next seq, the fold, the checkpoint
   * counters, and the automatic checkpoint when one falls due (TJ-EVENT-006), reserved and held right behind it with
   * the delta's `ts`.
   */
  #holdDelta(requestId: string, messageId: string, text: string, ts: string): number {
    const held = this.#heldFile;
    if (held === null || !this.#appender.preparesNow || held.durability !== 'none') return -1;
    if (typeof requestId !== 'string' || typeof messageId !== 'string' || typeof text !== 'string') return -1;
    const fold = this.#fold;
    if (requestId === '' || messageId === '' || fold.activeRequestId !== requestId) return -1;
    const segment = fold.openSegment;
    if (segment === undefined || segment.requestId !== requestId || segment.messageId !== messageId) return -1;
    if (ts !== this.#heldTs) {
      if (typeof ts !== 'string' || !ISO_STAMP.test(ts) || !Number.isFinite(Date.parse(ts))) return -1;
      this.#heldTs = ts;
    }
    const seq = this.#nextSeq;
    const lines = this.#deltaLines;
    const line = lines.line(seq, ts, requestId, messageId, text);
    const length = lines.bytes;
    if (length - 1 > this.#maxLineBytes) return -1;
    if (!holdLine(held, line, length)) return -1;
    // Nothing can fail from here on: the line is held, and the state follows it.
    this.#nextSeq = seq + 1;
    fold.addDelta(seq, requestId, messageId, text, this.#where);
    this.#sinceCheckpoint += 1;
    this.#bytesSinceCheckpoint += length;
    if (
      !this.#checkpointsDeferred &&
      this.#sinceCheckpoint >= this.#checkpointDue &&
      this.#bytesSinceCheckpoint >= this.#checkpointBytesDue
    )
      this.#holdCheckpoint(ts);
    return seq;
  }

  /**
   * The automatic checkpoint due behind a held delta (TJ-EVENT-006), with the delta's `ts`, held right behind it on
   * the file, which accepted the delta a moment ago and cannot refuse it. While the state has not changed since the
   * last one (deltas only), its line is the last one's with this `seq` and `ts` ({@link CheckpointLines}); otherwise
   * it is encoded and checked as any checkpoint is, and its payload remembered.
   */
  #holdCheckpoint(ts: string): void {
    const seq = this.#nextSeq;
    const lines = this.#checkpointLines;
    const payload = lines.payloadAt(this.#stateVersion);
    if (payload !== null) {
      const line = lines.line(seq, ts);
      const length = lines.bytes;
      if (length - 1 <= this.#maxLineBytes) {
        holdLine(this.#heldFile as AppendFile, line, length);
        this.#nextSeq = seq + 1;
        this.#apply('checkpoint', { seq, ts, type: 'checkpoint', payload, epoch: this.#epoch }, true, length, seq);
        this.#checkpointDue = this.checkpointInterval;
        this.#checkpointFailure = null;
        return;
      }
    }
    const checkpoint = this.#autoCheckpoint(ts);
    if (checkpoint === null) return;
    const { trailer } = checkpoint;
    holdLine(this.#heldFile as AppendFile, trailer, trailer.length);
    if (checkpoint.single)
      lines.remember(this.#stateVersion, checkpoint.written.payload as Payload, checkpoint.seq, ts, trailer);
    checkpoint.trailerSettled(null);
  }

  /**
   * Null when the line of `append(type, payload)` cannot exceed the line limit at the seq `ahead` places after the
   * next one; otherwise what encoding it there answers (see {@link oversizeRefusal}). Nothing is reserved or changed.
   */
  #oversizeRefusal(type: string, payload: Payload | undefined, ahead: number): unknown {
    if (payload !== undefined) {
      const bound = jsonBytesBound(payload);
      if (bound >= 0 && bound + 6 * type.length + 256 <= this.#maxLineBytes) return null;
    }
    try {
      this.#encode(type, payload, this.#nextSeq + ahead);
      return null;
    } catch (error) {
      return error;
    }
  }

  /** The last automatic checkpoint reserved, while the state it holds is current (see {@link lastCheckpoint}). */
  #lastCheckpoint(): { readonly payload: Payload; readonly lineBytes: number } | null {
    const payload = this.#checkpointLines.payloadAt(this.#stateVersion);
    return payload === null ? null : { payload, lineBytes: this.#checkpointLines.bytes };
  }

  /** The `ts` of a record reserved now, from the clock. */
  #stamp(): string {
    const now = this.#clock();
    if (typeof now !== 'number' || !Number.isFinite(now))
      throw new WriterError('invalid_option', `the clock returned ${String(now)}, not epoch milliseconds`, this.path);
    // Many records share a millisecond while a run streams: format each one once.
    if (now !== this.#tsStamp) {
      this.#tsStamp = now;
      this.#ts = new Date(now).toISOString();
    }
    return this.#ts;
  }

  /** After a failed write (TJ-DUR-030): the file holds what was acknowledged; the state and the next seq follow it. */
  async #reread(): Promise<void> {
    this.#rereads += 1;
    this.#stateVersion += 1;
    const reader = this.#file.reader();
    const end = await reader.end();
    const tail = await recoverTail(this.path, reader, end, this.#maxLineBytes);
    this.#fold = tail.fold;
    // The file's epoch when it has one; otherwise the one this writer chose, which its records may already carry.
    this.#epoch = tail.fold.epoch ?? this.#epoch;
    this.#sinceCheckpoint = tail.sinceCheckpoint;
    this.#bytesSinceCheckpoint = tail.bytesSinceCheckpoint;
    this.#checkpointBytesDue = tail.checkpointBytes;
    const index = await readRunIndex({
      source: reader,
      size: end,
      checkpointOffset: tail.runIndexOffset,
      maxLineBytes: this.#maxLineBytes,
    });
    this.#runs = index.runs;
    this.#nextSeq = (tail.fold.lastSeq ?? -1) + 1;
    this.#checkpointDue = this.checkpointInterval;
  }
}

function defined(key: string, value: unknown): Payload {
  return value === undefined ? {} : { [key]: value };
}

/**
 * @internal Appends a `chat.delta` held until the next write (`log.append('chat.delta', {request_id, message_id,
 * text}, {hold: true})` on a `none`-mode log) synchronously, without a promise: returns the record's seq once it is
 * reserved, folded and its line held, or -1 when nothing was done and the caller must make that `append` call, which
 * then gives the answer (its seq, or the refusal with its error code). A live session streams its deltas through
 * it: one promise per delta was most of what a delta cost. `ts` is the record's stamp as the writer makes it
 * (`new Date(ms).toISOString()`); the line is the checked encoder's, byte for byte. A held line cannot fail once
 * accepted: a write that loses it poisons the log (see `append`), and the caller's next sync says so.
 */
export function holdDelta(log: EventLog, requestId: string, messageId: string, text: string, ts: string): number {
  return holdDeltaOf(log, requestId, messageId, text, ts);
}

/**
 * @internal Puts the log's automatic checkpoints off while `deferred` is true (TJ-LIVE-023): appends reserve no
 * checkpoint behind them, and the first append after `deferCheckpoints(log, false)` reserves the one that fell due
 * meanwhile. A live session opens a session this way: a checkpoint repeats the whole message list, and recovery must
 * not need room for the conversation's size on a disk that has just run full.
 */
export function deferCheckpoints(log: EventLog, deferred: boolean): void {
  deferCheckpointsOf(log, deferred);
}

/**
 * @internal The last automatic checkpoint the log reserved (behind an `append` or a {@link holdDelta} call), while the
 * state it holds is still the log's: its payload (`{messages, runs}`, frozen) and the length of its line, LF
 * included; else null (then build it from `snapshot()` and `runs()`). Successive checkpoints of a stream of deltas
 * return the same payload.
 */
export function lastCheckpoint(
  log: EventLog,
): { readonly payload: Record<string, unknown>; readonly lineBytes: number } | null {
  return lastCheckpointOf(log);
}

/**
 * @internal The epoch the log writes on its first record and its checkpoints (spec §6.7): the log's, or the one it
 * chose for a log that had none. A live session gives it to the records it hands subscribers that carry it in the
 * file (the first record of a new log, every checkpoint), so that they equal the lines.
 */
export function writtenEpoch(log: EventLog): string {
  return writtenEpochOf(log);
}

/**
 * @internal How many times `log` has re-read its state from its file since it opened: once after each failed write
 * (TJ-DUR-030) and after a failed sync. A live session compares it across a flush to learn, without waiting for
 * anything, whether records it appended may have been taken back meanwhile.
 */
export function stateRereads(log: EventLog): number {
  return stateRereadsOf(log);
}

/**
 * @internal How many messages the log's list holds: `snapshot().messages.length` without the copy of the list that a
 * snapshot makes (a live session asks it at every segment, and the copy made the cost of a run follow the length of
 * the conversation).
 */
export function messageCount(log: EventLog): number {
  return messageCountOf(log);
}

/**
 * @internal Whether `log.append(type, payload)` would be refused for its size if it took the seq `ahead` places after
 * the log's next one: null when its line cannot exceed the log's line limit (a payload whose strings are too short to
 * reach it even if every character were escaped is answered without encoding it); otherwise the record is encoded
 * as `append` would encode it, and what that refuses is returned (`line_too_long`, or its schema's `invalid_record`),
 * or null. Nothing is reserved; the state rules (an active run, an open segment) are not asked. For a group of
 * appends that must go in whole: the live hub asks it for a tool result's message before it appends the result, as
 * the line limit is the one refusal of the message that the result's acceptance does not rule out. A larger `ahead` gives the seq more digits, never fewer:
 * use an upper bound.
 */
export function oversizeRefusal(
  log: EventLog,
  type: string,
  payload: Readonly<Record<string, unknown>> | undefined,
  ahead: number,
): unknown {
  return oversizeRefusalOf(log, type, payload as Payload | undefined, ahead);
}

/**
 * @internal The records of the split checkpoint (TJ-EVENT-028) the log reserved last, when its first part has seq
 * `firstSeq`: each part's `seq`, `ts`, payload (frozen) and line length; else null. A live session hands them to its
 * subscribers as it hands a single-line checkpoint's payload ({@link lastCheckpoint}).
 */
export function lastCheckpointParts(log: EventLog, firstSeq: number): readonly CheckpointPartKept[] | null {
  return lastCheckpointPartsOf(log, firstSeq);
}
