import { dirname, join } from 'node:path';
import { type EventLogSnapshot, isValidIdentifier } from '@turnjournal/reader';
import {
  DEFAULT_CHECKPOINT_INTERVAL,
  EVENT_STREAM_TYPES,
  type Finding,
  type Message,
  validateRecord,
} from '@turnjournal/schema';
import { AppendFile, DURABILITY_MODES, type Durability, type OpenReport } from '../append/append-file.js';
import { DEFAULT_MAX_LINE_BYTES, encodeRecord, serialiseRecord } from '../append/encode-record.js';
import { WriterError, WriterPoisonedError } from '../errors.js';
import { ensureDirectory } from '../fs/durable-ops.js';
import { type FileSystem, nodeFileSystem } from '../fs/file-system.js';
import type { AcquireLockOptions } from '../fs/lock.js';
import { type CompactEventLogOptions, compactOpenFile, type EventLogCompaction } from './compact-event-log.js';
import { EventState } from './event-state.js';
import { readPriorRequestIds } from './prior-request-ids.js';
import { recoverTail } from './recover-tail.js';
import { WriteFence } from './write-fence.js';

/** The recommended file name of an event log inside its session directory (spec §4.4). */
export const EVENT_LOG_FILE_NAME = 'events.jsonl';

/** Reason of the `chat.cancelled` records that startup recovery appends (TJ-RECOV-011). */
export const SERVER_STARTUP_RECOVERY = 'server_startup_recovery';

/** Options every way of naming an event log shares. */
export interface EventLogCommonOptions {
  /**
   * Durability mode (TJ-DUR-013, declared as {@link EventLog.durability}); `every` by default. `group` shares one
   * fdatasync among overlapping appends. `none` acknowledges once the bytes reach the OS: TJ-DUR-016 says a writer
   * SHOULD NOT use it for message records and delivery acks, which every event log holds, so choose it only for a
   * log whose loss on power failure is acceptable.
   */
  readonly durability?: Durability;
  /**
   * Records between two automatic checkpoints (TJ-EVENT-006): after this many records since the last checkpoint (or the
   * start of the file; records of every type count), a `checkpoint` is appended. `DEFAULT_CHECKPOINT_INTERVAL` of
   * `@turnjournal/schema` (50) by default.
   */
  readonly checkpointInterval?: number;
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /** Wall clock in epoch milliseconds, for `ts` and compaction's retention; `Date.now` by default. */
  readonly clock?: () => number;
  /** Line-size limit in bytes without the LF; 16 MiB by default. */
  readonly maxLineBytes?: number;
  /** Options of the lock acquisition. */
  readonly lock?: AcquireLockOptions;
}

/**
 * Options of {@link openEventLog}: the file itself (`file`), or a store root and a session id, which give
 * `<root>/<sessionId>/events.jsonl` (spec §4.4; the session id must be a valid identifier, TJ-FAM-010). Missing
 * directories are created durably (TJ-DUR-008).
 */
export type OpenEventLogOptions = EventLogCommonOptions &
  (
    | {
        /** The event log file. */
        readonly file: string;
        /** Not with `file`. */
        readonly root?: undefined;
        /** Not with `file`. */
        readonly sessionId?: undefined;
      }
    | {
        /** Not with `root`. */
        readonly file?: undefined;
        /** The store root. */
        readonly root: string;
        /** The session, a valid identifier (spec §4.3). */
        readonly sessionId: string;
      }
  );

/** Where an acknowledged event record was written. */
export interface EventLogAck {
  /** The seq the record carries (TJ-EVENT-003). */
  readonly seq: number;
  /** Byte offset of its line. */
  readonly offset: number;
  /** Length of its line, LF included. */
  readonly length: number;
}

/** Where opening found the state the writer continues from (spec §15.2). */
export interface EventLogOpenRecovery {
  /** Byte offset of the last valid checkpoint, or null when the log has none (it was then folded from its start). */
  readonly checkpointOffset: number | null;
  /** Where the forward read began: the checkpoint, an earlier `chat.started` of a possibly active run, or 0. */
  readonly startOffset: number;
}

/** A `chat.started` to append (spec §6.3). */
export interface EventChatStartedInput {
  /** The client-generated id of the run; unique in the session (TJ-EVENT-010). */
  readonly requestId: string;
  /** The model of the run. */
  readonly model?: string | null;
  /** The user message text. */
  readonly content?: string;
}

/** An `assistant.segment.started` to append. */
export interface EventSegmentStartedInput {
  /** The active run. */
  readonly requestId: string;
  /** The id of the assistant message the segment becomes. */
  readonly messageId: string;
}

/** A `chat.delta` to append. */
export interface EventChatDeltaInput {
  /** The active run. */
  readonly requestId: string;
  /** The open segment's message id. */
  readonly messageId: string;
  /** The streamed text. */
  readonly text: string;
}

/** A `tool.start` to append. */
export interface EventToolStartInput {
  /** The active run. */
  readonly requestId: string;
  /** The id of the tool call. */
  readonly toolCallId: string;
  /** The tool's name. */
  readonly tool: string;
  /** The call's arguments, any JSON value. */
  readonly args?: unknown;
}

/** A `tool.end` to append. */
export interface EventToolEndInput {
  /** The active run. */
  readonly requestId: string;
  /** The id of the tool call. */
  readonly toolCallId: string;
  /** True when the call failed. */
  readonly isError?: boolean;
}

/** A `tool.result` to append. */
export interface EventToolResultInput {
  /** The active run. */
  readonly requestId: string;
  /** The id of the tool call. */
  readonly toolCallId: string;
  /** The tool's output. */
  readonly output: string;
  /** True when the output is an error. */
  readonly isError?: boolean;
}

/** A `chat.error` to append. */
export interface EventChatErrorInput {
  /** The active run. */
  readonly requestId: string;
  /** What failed. */
  readonly error: { readonly message: string; readonly name?: string; readonly code?: string };
}

/** A `chat.cancelled` to append. */
export interface EventChatCancelledInput {
  /** The run. */
  readonly requestId: string;
  /** Why, an open string (e.g. `user`, `server_startup_recovery`). */
  readonly reason?: string;
}

/** Optional members of a `delivery.ack` (spec §6.4). */
export interface EventDeliveryAckOptions {
  /** Which client acknowledged. */
  readonly clientId?: string;
  /** The highest seq the client has received. */
  readonly throughSeq?: number;
}

type Payload = Record<string, unknown>;

/**
 * A message to append: the v1 Message (a string `role`, any `content`) with any further members (`id`,
 * `tool_call_id`, …), which are stored and preserved as they are (spec §4.6).
 */
export type EventLogMessage = Message & { readonly [member: string]: unknown };

function requireIdentifier(id: unknown, what: string): asserts id is string {
  if (typeof id !== 'string' || !isValidIdentifier(id))
    throw new WriterError(
      'invalid_identifier',
      `the ${what} ${JSON.stringify(String(id)).slice(0, 80)} is not a valid identifier (1-128 of A-Z a-z 0-9 . _ -, not "." or "..")`,
    );
}

/**
 * The recommended path of a session's event log, `<root>/<sessionId>/events.jsonl` (spec §4.4). Throws a
 * {@link WriterError} (`invalid_identifier`) for a session id that is not a valid identifier, before any path is
 * built (TJ-FAM-010).
 */
export function eventLogPath(root: string, sessionId: string): string {
  requireIdentifier(sessionId, 'session id');
  return join(root, sessionId, EVENT_LOG_FILE_NAME);
}

function resolvePath(options: OpenEventLogOptions): string {
  const { file, root, sessionId } = options as { file?: unknown; root?: unknown; sessionId?: unknown };
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
  const durability = options.durability ?? 'every';
  if (!DURABILITY_MODES.includes(durability))
    throw new WriterError(
      'invalid_option',
      `durability must be one of ${DURABILITY_MODES.join(', ')}, got ${String(durability)}`,
    );
  const interval = options.checkpointInterval ?? DEFAULT_CHECKPOINT_INTERVAL;
  if (!Number.isSafeInteger(interval) || interval < 1)
    throw new WriterError('invalid_option', `checkpointInterval must be an integer >= 1, got ${String(interval)}`);
  const clock = options.clock ?? Date.now;
  if (typeof clock !== 'function') throw new WriterError('invalid_option', '`clock` must be a function');
  const fence = new WriteFence(options.fs ?? nodeFileSystem, path);
  await ensureDirectory(fence.fs, dirname(path));
  const file = await AppendFile.open(path, {
    durability,
    fs: fence.fs,
    ...(options.maxLineBytes === undefined ? {} : { maxLineBytes: options.maxLineBytes }),
    ...(options.lock === undefined ? {} : { lock: options.lock }),
  });
  try {
    const tail = await recoverTail(path, file.source, file.size, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
    const priorRequestIds = await readPriorRequestIds(file.source, tail.startOffset);
    return new EventLog(file, fence, EventState.fromFold(tail.state, tail.sinceCheckpoint), {
      priorRequestIds,
      interval,
      clock,
      maxLineBytes: options.maxLineBytes,
      findings: tail.findings,
      recovery: { checkpointOffset: tail.checkpointOffset, startOffset: tail.startOffset },
    });
  } catch (error) {
    await file.close().catch(() => undefined);
    throw error;
  }
}

interface EventLogSettings {
  readonly interval: number;
  readonly clock: () => number;
  readonly maxLineBytes: number | undefined;
  readonly findings: readonly Finding[];
  readonly recovery: EventLogOpenRecovery;
  /** Request ids of runs started before the tail the opening recovery folded (TJ-EVENT-010 across reopen). */
  readonly priorRequestIds: ReadonlySet<string>;
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
 * appends already queued behind it are refused with the same code, because their seqs come after the failed one; the
 * writer then re-reads its state from the file, and the next append reuses the failed seq: no seq is ever skipped.
 * A failed fdatasync rejects and poisons the writer (`writer_poisoned`) until it is reopened (TJ-DUR-021).
 *
 * Checkpoints (TJ-EVENT-006): when an append brings the count of records since the last checkpoint to
 * `checkpointInterval`, a `checkpoint` record with the current message list is reserved right after it, as a record
 * of its own with its own seq (so no record can come between). The triggering call resolves with its own record's
 * ack and does not wait for the checkpoint; a checkpoint that fails is retried by the next append, and
 * {@link EventLog.checkpointFailure} tells why it failed.
 */
export class EventLog {
  /** The event log file. */
  readonly path: string;
  /** Records between two automatic checkpoints. */
  readonly checkpointInterval: number;
  /** Findings about the lines read when the log was opened (its tail); mid-file damage is left in place. */
  readonly findings: readonly Finding[];
  /** Where opening found the state it continues from. */
  readonly recovery: EventLogOpenRecovery;
  readonly #file: AppendFile;
  readonly #fence: WriteFence;
  readonly #clock: () => number;
  readonly #maxLineBytes: number | undefined;
  readonly #priorRequestIds: ReadonlySet<string>;
  #state: EventState;
  #nextSeq: number;
  #checkpointDue: number;
  #checkpointFailure: unknown = null;
  /** Appends handed to the append file and not settled yet. */
  #inFlight = 0;
  #settledWaiters: (() => void)[] = [];
  /** True after an append failed: the state is re-read from the file once every queued append has settled. */
  #dirty = false;
  /** Set while a compaction or a state re-read runs: appends called meanwhile wait in `#held`, in call order. */
  #exclusive: Promise<void> | null = null;
  #held: (() => void)[] = [];
  #poison: unknown = null;
  #closing = false;
  #closed = false;

  /** @internal use {@link openEventLog}. */
  constructor(file: AppendFile, fence: WriteFence, state: EventState, settings: EventLogSettings) {
    this.#file = file;
    this.#fence = fence;
    this.#state = state;
    this.#nextSeq = (state.lastSeq ?? -1) + 1;
    this.#clock = settings.clock;
    this.#maxLineBytes = settings.maxLineBytes;
    this.#priorRequestIds = settings.priorRequestIds;
    this.path = file.path;
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
    return this.#state.lastSeq;
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
    return this.#state.snapshot();
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
   * finishing record (TJ-EVENT-012); refused for a run this writer knows has not finished. An ack for a run outside
   * the writer's knowledge is written (readers ignore one whose run is not in the log, TJ-REPLAY-017).
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
   */
  append(type: string, payload?: Readonly<Record<string, unknown>>): Promise<EventLogAck> {
    if (typeof type !== 'string' || type.length === 0)
      return Promise.reject(new WriterError('invalid_record', 'a record type must be a non-empty string', this.path));
    if (type === 'checkpoint')
      return Promise.reject(
        new WriterError(
          'invalid_record',
          'a checkpoint must equal the message list (TJ-EVENT-007): use checkpoint(), not append()',
          this.path,
        ),
      );
    if (payload !== undefined && (typeof payload !== 'object' || payload === null || Array.isArray(payload)))
      return Promise.reject(new WriterError('invalid_record', 'a payload must be a JSON object', this.path));
    return this.#submit(type, payload);
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
    await this.#untilExclusiveEnds();
    const writes = this.#state
      .unfinishedRuns()
      .map((requestId) =>
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
    const refusal = this.#refusal();
    if (refusal !== null) return Promise.reject(refusal);
    return this.#runExclusive(() =>
      compactOpenFile(this.#file, options, this.#clock, this.#maxLineBytes, (error) => {
        this.#poison = error;
      }),
    );
  }

  /** Waits until every append, checkpoint and compaction called so far has settled. */
  async idle(): Promise<void> {
    for (;;) {
      if (this.#exclusive !== null) await this.#exclusive;
      else if (this.#inFlight > 0) await new Promise<void>((resolve) => this.#settledWaiters.push(resolve));
      else return;
    }
  }

  /** Waits for pending appends, then fsyncs the file: what makes `none`-mode records durable before close. */
  async flush(): Promise<void> {
    await this.idle();
    await this.#file.flush();
  }

  /** Waits for everything called so far, fsyncs in `none` mode (TJ-DUR-015), closes the file and releases the lock. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closing = true;
    await this.idle();
    this.#closed = true;
    await this.#file.close();
  }

  // ---- the append path -------------------------------------------------------------------------------------------

  /** Builds a payload from a typed input, refusing a non-object input with a clear error instead of a TypeError. */
  #typed<I>(type: string, input: I, build: (input: I) => Payload): Promise<EventLogAck> {
    if (typeof input !== 'object' || input === null)
      return Promise.reject(new WriterError('invalid_record', `${type} needs an input object`, this.path));
    return this.#submit(type, build(input));
  }

  #refusal(): WriterError | null {
    if (this.#closing) return new WriterError('writer_closed', `${this.path} is closed`, this.path);
    if (this.#poison !== null) return new WriterPoisonedError(this.path, this.#poison);
    if (this.#file.poisoned) return new WriterPoisonedError(this.path, 'an earlier sync or write failed');
    return null;
  }

  #submit(type: string, payload: Payload | undefined): Promise<EventLogAck> {
    const refusal = this.#refusal();
    if (refusal !== null) return Promise.reject(refusal);
    if (this.#exclusive !== null || this.#held.length > 0)
      return new Promise((resolve, reject) => this.#held.push(() => this.#write(type, payload).then(resolve, reject)));
    return this.#write(type, payload);
  }

  #write(type: string, payload: Payload | undefined): Promise<EventLogAck> {
    try {
      const refusal = this.#refusal();
      if (refusal !== null && refusal.code === 'writer_poisoned') throw refusal;
      const body = type === 'checkpoint' ? { messages: [...this.#state.messages] } : payload;
      const { value, bytes } = this.#prepare(type, body, type === 'checkpoint');
      this.#checkApplies(type, value.payload as Payload | undefined);
      const seq = this.#nextSeq;
      this.#nextSeq = seq + 1;
      this.#state.apply(type, value.payload as Payload | undefined, seq);
      const written = this.#hand(bytes, seq);
      if (type === 'checkpoint') {
        this.#checkpointDue = this.checkpointInterval;
        this.#checkpointFailure = null;
      } else if (this.#state.sinceCheckpoint >= this.#checkpointDue) this.#autoCheckpoint();
      return written;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #autoCheckpoint(): void {
    try {
      const { value, bytes } = this.#prepare('checkpoint', { messages: [...this.#state.messages] }, true);
      const seq = this.#nextSeq;
      this.#nextSeq = seq + 1;
      this.#state.apply('checkpoint', value.payload as Payload, seq);
      this.#checkpointDue = this.checkpointInterval;
      this.#hand(bytes, seq).then(
        () => {
          this.#checkpointFailure = null;
        },
        (error: unknown) => {
          // The failure path re-reads the state from the file; the count then makes the next append retry.
          this.#checkpointFailure = error;
        },
      );
    } catch (error) {
      // The list does not encode (over the line-size limit): try again an interval later rather than on every append.
      this.#checkpointFailure = error;
      this.#checkpointDue = this.#state.sinceCheckpoint + this.checkpointInterval;
    }
  }

  /**
   * Builds the record with the seq it will get, as the JSON a reader will parse (a JSON round trip, so members that
   * JSON drops are dropped here too and the writer's memory equals the file), validates it, and encodes it.
   */
  #prepare(
    type: string,
    payload: Payload | undefined,
    canonical: boolean,
  ): { value: Record<string, unknown>; bytes: Uint8Array } {
    const now = this.#clock();
    if (typeof now !== 'number' || !Number.isFinite(now))
      throw new WriterError('invalid_option', `the clock returned ${String(now)}, not epoch milliseconds`, this.path);
    const record: Record<string, unknown> = {
      seq: this.#nextSeq,
      ts: new Date(now).toISOString(),
      type,
      ...(payload === undefined ? {} : { payload }),
    };
    let value = record;
    if (!canonical) {
      let json: string;
      try {
        json = serialiseRecord(record);
      } catch (error) {
        throw error instanceof WriterError
          ? new WriterError(error.code, `the ${type} record: ${error.message}`, this.path, { cause: error.cause })
          : error;
      }
      value = JSON.parse(json) as Record<string, unknown>;
    }
    this.#validate(type, value);
    try {
      return { value, bytes: encodeRecord(value, this.#maxLineBytes) };
    } catch (error) {
      if (error instanceof WriterError && error.file === undefined)
        throw new WriterError(error.code, `${this.path}: ${error.message}`, this.path, { cause: error });
      throw error;
    }
  }

  /** A v1 type must validate against its schema; any other type must be an accepted event record (its envelope). */
  #validate(type: string, value: Record<string, unknown>): void {
    const validation = validateRecord(value);
    const classification = validation.classification;
    const family = classification.family;
    const actual = family === 'none' ? undefined : classification.type;
    const accepted =
      validation.status === 'valid' || validation.status === 'unknown' || validation.status === 'extension';
    if (accepted && family === 'event' && actual === type) return;
    const detail =
      validation.status === 'invalid'
        ? validation.errors.map((error) => error.message).join('; ')
        : family !== 'event'
          ? `a record of type "${type}" is not an event record (family ${family})`
          : `it validates as ${validation.status}`;
    throw new WriterError('invalid_record', `refusing to write an invalid "${type}" record: ${detail}`, this.path);
  }

  /** Checks that a valid record applies to the current state; what a reader would report, the writer refuses. */
  #checkApplies(type: string, payload: Payload | undefined): void {
    const state = this.#state;
    const refuse = (why: string): never => {
      throw new WriterError('illegal_transition', `${type}: ${why}`, this.path);
    };
    const body = payload ?? {};
    if (type === 'message_edit' && 'index' in body && 'message' in body) {
      const index = body.index as number;
      // TJ-REPLAY-002: a reader reports an out-of-range edit as inapplicable_event; never write one.
      if (index >= state.messages.length)
        refuse(`index ${index} is out of range for a list of ${state.messages.length} message(s)`);
      return;
    }
    if (type === 'undo') {
      const n = (body.n as number | undefined) ?? 1;
      if (n > state.messages.length) refuse(`cannot remove ${n} message(s) from a list of ${state.messages.length}`);
      return;
    }
    const requestId = body.request_id as string;
    if (type === 'delivery.ack') {
      const run = state.runs.get(requestId);
      if (run !== undefined && run.finish === undefined)
        refuse(`run "${requestId}" has not finished; acknowledge it after its finishing record (TJ-EVENT-012)`);
      return;
    }
    if (!EVENT_STREAM_TYPES.has(type)) return;
    const active = state.activeRequestId;
    if (type === 'chat.started') {
      if (active !== undefined)
        refuse(
          `run "${active}" is still active; append its chat.done, chat.error or chat.cancelled first (TJ-EVENT-009)`,
        );
      if (state.runs.has(requestId) || this.#priorRequestIds.has(requestId))
        refuse(`run "${requestId}" already started in this log (TJ-EVENT-010)`);
      return;
    }
    const run = state.runs.get(requestId);
    if (type === 'chat.cancelled' && run !== undefined && run.finish === undefined) return;
    if (active === undefined) refuse(`there is no active run (request_id "${requestId}")`);
    if (requestId !== active) refuse(`run "${requestId}" is not the active run "${active}"`);
    if (type === 'chat.delta') {
      const segment = state.segment;
      if (segment === undefined || segment.requestId !== requestId || segment.messageId !== body.message_id)
        refuse(
          `message_id "${String(body.message_id)}" is not the open segment${segment === undefined ? ' (none is open)' : ` "${segment.messageId}"`}; append assistant.segment.started first`,
        );
    }
  }

  /** Hands an encoded record to the append file and tracks it until it settles. */
  #hand(bytes: Uint8Array, seq: number): Promise<EventLogAck> {
    this.#inFlight += 1;
    return this.#file.appendLine(bytes).then(
      (ack) => {
        this.#settled(false);
        return { seq, offset: ack.offset, length: ack.length };
      },
      (error: unknown) => {
        this.#settled(true);
        throw error;
      },
    );
  }

  #settled(failed: boolean): void {
    this.#inFlight -= 1;
    if (failed) this.#dirty = true;
    if (this.#inFlight > 0) return;
    const waiters = this.#settledWaiters;
    this.#settledWaiters = [];
    for (const resolve of waiters) resolve();
    // Re-read the state once nothing is queued behind the failure; a compaction in progress does it itself.
    if (this.#dirty && this.#exclusive === null) this.#runExclusive(async () => undefined).catch(() => undefined);
  }

  /**
   * Runs `task` with the file to itself: appends called meanwhile wait, in order. Before the task, every append in
   * flight settles and, after a failure, the state is re-read from the file.
   */
  #runExclusive<T>(task: () => Promise<T>): Promise<T> {
    if (this.#exclusive !== null || this.#held.length > 0)
      return new Promise<T>((resolve, reject) =>
        this.#held.push(() => {
          this.#runExclusive(task).then(resolve, reject);
        }),
      );
    let open = (): void => undefined;
    // Set before the task starts, so that even a task that fails at once is seen as exclusive until it settles.
    this.#exclusive = new Promise<void>((resolve) => {
      open = resolve;
    });
    return (async () => {
      try {
        while (this.#inFlight > 0) await new Promise<void>((resolve) => this.#settledWaiters.push(resolve));
        if (this.#dirty) await this.#reread();
        const refusal = this.#refusal();
        if (refusal !== null && refusal.code === 'writer_poisoned') throw refusal;
        return await task();
      } finally {
        this.#exclusive = null;
        open();
        this.#release();
      }
    })();
  }

  /** Runs the appends held during an exclusive task, in call order, until one of them starts another. */
  #release(): void {
    while (this.#exclusive === null && this.#held.length > 0) (this.#held.shift() as () => void)();
  }

  async #untilExclusiveEnds(): Promise<void> {
    while (this.#exclusive !== null) await this.#exclusive;
  }

  /** After a failure: the file holds what was acknowledged; the state, the next seq and the fence follow it again. */
  async #reread(): Promise<void> {
    this.#dirty = false;
    if (this.#file.poisoned) return; // nothing more can be written: every append fails with writer_poisoned
    try {
      const tail = await recoverTail(
        this.path,
        this.#file.source,
        this.#file.size,
        this.#maxLineBytes ?? DEFAULT_MAX_LINE_BYTES,
      );
      this.#state = EventState.fromFold(tail.state, tail.sinceCheckpoint);
      this.#nextSeq = (this.#state.lastSeq ?? -1) + 1;
      this.#checkpointDue = this.checkpointInterval;
      this.#fence.reopen();
    } catch (error) {
      this.#poison = error;
    }
  }
}

function defined(key: string, value: unknown): Payload {
  return value === undefined ? {} : { [key]: value };
}
