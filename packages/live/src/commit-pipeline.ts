import { runIndexEntries } from '@turnjournal/reader/_internals';
import type { EventLog, EventLogAck } from '@turnjournal/writer';
import {
  holdDelta,
  lastCheckpoint,
  lastCheckpointParts,
  stateRereads,
  writtenEpoch,
} from '@turnjournal/writer/_internals';
import { DeltaIds } from './delta-ids.js';
import { LiveError } from './errors.js';
import { PendingRecords } from './pending-records.js';
import type { RecordRing } from './ring.js';
import type { LiveSessionSettings } from './session-inputs.js';
import type { ViewFold } from './view-fold.js';

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve = (): void => undefined;
  let reject = (_: unknown): void => undefined;
  const promise = new Promise<void>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

const HOLD = { hold: true } as const;
const IGNORE = (): void => undefined;

/**
 * About the length of `payload`'s JSON (string lengths plus a little per member), for the window's byte bound, when
 * every member is a string, a finite number, a boolean or null — its own JSON round trip — looking once into a
 * `message` member, which the session builds itself (its caller-given members must be flat too); -1 otherwise. One
 * walk decides both.
 */
function flatSize(payload: Record<string, unknown>, nested = false): number {
  let size = 2;
  for (const key in payload) {
    const value = payload[key];
    let member: number;
    if (typeof value === 'string') member = value.length + 2;
    else if (typeof value === 'boolean' || value === null || (typeof value === 'number' && Number.isFinite(value)))
      member = 8;
    else if (!nested && key === 'message' && typeof value === 'object' && !Array.isArray(value))
      member = flatSize(value as Record<string, unknown>, true);
    else return -1;
    if (member < 0) return -1;
    size += key.length + 4 + member;
  }
  return size;
}

/** What the window counts for each message of a checkpoint: the reference its list holds, not the message. */
const MESSAGE_REFERENCE_BYTES = 16;

/**
 * What a checkpoint, or a part of a split one, adds to the memory the window keeps (TJ-LIVE-067): its list of
 * references and its other members' JSON (the run index), not its messages. Its messages are the session's own frozen
 * objects (the writer's fold holds them, the checkpoint's list only points at them), so counting its line — the whole
 * conversation again at every checkpoint — made one commit of a long conversation pass the byte bound and cut off a
 * subscriber that read every record as it came.
 */
function sizeOfSharedCheckpoint(payload: Readonly<Record<string, unknown>>): number {
  let size = 64;
  for (const key in payload) {
    const value = payload[key];
    if (key === 'messages' && Array.isArray(value)) size += key.length + 4 + value.length * MESSAGE_REFERENCE_BYTES;
    else size += key.length + 4 + (JSON.stringify(value)?.length ?? 4);
  }
  return size;
}

/**
 * The durability pipeline of a live session (spec §18.2): every record goes through the writer's `append` (a delta
 * through its synchronous `holdDelta` where it can), is kept in the pending list until a sync covers it, and is then
 * delivered — folded into the view, pushed into the window of recent records, announced to subscribers and on the
 * fan-out (TJ-LIVE-008). Syncs are group commits: callers
 * that ask while one runs share the next. Deltas are held by the writer until a sync, which the delta timer brings
 * within `deltaFlushMs` when no boundary comes first (TJ-LIVE-007).
 *
 * A failed write or sync fails the pipeline for good: every later sync rejects with that failure, and the session
 * refuses every call (reopen it: recovery reads what the file holds).
 */
export class CommitPipeline {
  readonly #sessionId: string;
  readonly #log: EventLog;
  readonly #fold: ViewFold;
  readonly #ring: RecordRing;
  readonly #settings: LiveSessionSettings;
  readonly #stampRef: { value: number | undefined };
  readonly #retainFrom: (now: number) => number;
  /** Records appended (handed to the writer) and not yet durable, in seq order. */
  readonly #pending = new PendingRecords();
  #durableSeq: number;
  /** What `changed()` handed out since the last wake-up; made only when someone waits (most deliveries have nobody). */
  #changed: Deferred | null = null;
  #flushRunning: Promise<void> | null = null;
  #flushNext: Deferred | null = null;
  #deltaTimer: ReturnType<typeof setTimeout> | null = null;
  #failure: unknown = null;
  /** The last append not held: its rejection, if its write fails, is told to {@link CommitPipeline.fail} first. */
  #lastWritten: Promise<unknown> | null = null;
  /** The last stamp turned into a `ts`, and that text: deltas come many per millisecond. */
  #tsStamp = Number.NaN;
  #ts = '';

  /**
   * @param stampRef the stamp the hub's writer clock reads while an append runs, so the record's `ts` is the one the
   * pipeline gives its pending copy.
   * @param retainFrom at each delivery, given the monotonic time: the first seq a live subscriber still reading has
   * not received (the window keeps it and the records after it, TJ-LIVE-030); the session cuts off meanwhile those
   * behind for longer than the lag limit.
   */
  constructor(
    sessionId: string,
    log: EventLog,
    fold: ViewFold,
    ring: RecordRing,
    settings: LiveSessionSettings,
    stampRef: { value: number | undefined },
    retainFrom: (now: number) => number,
  ) {
    this.#sessionId = sessionId;
    this.#log = log;
    this.#fold = fold;
    this.#ring = ring;
    this.#settings = settings;
    this.#stampRef = stampRef;
    this.#retainFrom = retainFrom;
    this.#durableSeq = fold.lastSeq ?? -1;
  }

  /** The highest durable (and delivered) seq, -1 for an empty log. */
  get durableSeq(): number {
    return this.#durableSeq;
  }

  /** Why the pipeline failed, or null. */
  get failure(): unknown {
    return this.#failure;
  }

  /** Resolves at the next delivery (or wake-up): subscribers wait on it. */
  changed(): Promise<void> {
    this.#changed ??= deferred();
    return this.#changed.promise;
  }

  /**
   * Appends one record through the writer's `append` (validated and checked against the log's state like its typed
   * methods) and keeps what was appended until it is durable. The writer reserves seqs synchronously, so the seqs
   * between its `lastSeq` before and after the call are this call's record and, when one fell due, the checkpoint the
   * writer added after it, with the message list it holds (TJ-EVENT-007). `ts` comes from the stamp the session's
   * clock hands the writer for the duration of the call. A refusal rejects with the writer's error and changes
   * nothing; a failed write fails the pipeline. With `hold` the writer keeps the line in memory until the next sync
   * (the stream records of TJ-LIVE-007). `knownSize`, when given, vouches that the session built `payload` of strings
   * only (no copy needed) and is its size for the window's byte bound.
   */
  append(type: string, payload: Record<string, unknown>, hold = false, knownSize = -1): Promise<EventLogAck> {
    const log = this.#log;
    const before = log.lastSeq ?? -1;
    const stamp = this.#settings.time.stamp();
    this.#stampRef.value = stamp;
    let written: Promise<EventLogAck>;
    try {
      written = log.append(type, payload, hold ? HOLD : undefined);
    } finally {
      this.#stampRef.value = undefined;
    }
    const after = log.lastSeq ?? -1;
    if (after === before) return written; // refused before anything was reserved
    const ts = this.#tsOf(stamp);
    // What subscribers get must equal what the log holds, and stay so: a payload of strings, numbers, booleans and
    // nulls (a delta, a segment start, most run records) is its own JSON round trip and nobody else holds it, so it
    // is kept as it is; one holding a caller's object (tool arguments, attachments, an error) is copied through JSON,
    // which also drops what the line dropped.
    const size = knownSize >= 0 ? knownSize : flatSize(payload);
    let kept = payload;
    let keptSize = size;
    if (size < 0) {
      const json = JSON.stringify(payload);
      kept = JSON.parse(json) as Record<string, unknown>;
      keptSize = json.length;
    }
    // The first record of a log carries its epoch in the file (TJ-EVENT-023), and so in what subscribers get.
    const record =
      before === -1
        ? { seq: before + 1, ts, type, payload: kept, epoch: writtenEpoch(log) }
        : { seq: before + 1, ts, type, payload: kept };
    this.#pending.push(record, keptSize + 64);
    if (after >= before + 2) this.#pushCheckpoint(before + 2, after, ts);
    // A held line cannot fail once accepted (the writer refuses up front or not at all); a write failure of the
    // batch it goes out with fails the pipeline through the sync. The handler is there so nothing goes unhandled.
    written.catch(hold ? this.#failed : (error: unknown) => this.fail(error, before + 1));
    if (!hold) this.#lastWritten = written;
    return written;
  }

  readonly #failed = (error: unknown): void => this.fail(error);

  /**
   * {@link CommitPipeline.append} of a payload the session built of strings (`size` its length; -1 for a caller's
   * payload, which the pipeline copies), with the line held
   * (TJ-LIVE-007), and the delta timer started: null once accepted, else the refusal's promise.
   */
  appendHeld(type: string, payload: Record<string, unknown>, size: number): Promise<void> | null {
    const before = this.#log.lastSeq;
    const written = this.append(type, payload, true, size);
    if (this.#log.lastSeq === before) return written.then(() => undefined);
    this.#scheduleDeltaFlush();
    return null;
  }

  /**
   * Appends a `chat.delta` of the open segment `messageId` of run `requestId`, held (TJ-LIVE-007), stamped with
   * `stamp` (the session's clock, read for this call), and starts the delta timer: null once accepted, else the
   * refusal's promise. The writer takes it synchronously where it can (its `holdDelta`: no promise, no record object,
   * the line kept as text until the write), with the automatic checkpoint that falls due behind it, and the delta is
   * kept by its members until the sync; what the synchronous path leaves to `append` (an appender that is busy, a
   * refusal) goes through {@link CommitPipeline.appendHeld}, which answers as before.
   */
  appendDelta(requestId: string, messageId: string, text: string, stamp: number): Promise<void> | null {
    const seq = Number.isFinite(stamp) ? holdDelta(this.#log, requestId, messageId, text, this.#tsOf(stamp)) : -1;
    if (seq < 0)
      return this.appendHeld(
        'chat.delta',
        { request_id: requestId, message_id: messageId, text },
        requestId.length + messageId.length + text.length + 40,
      );
    this.#pending.pushDelta(seq, this.#ts, requestId, messageId, text);
    const last = this.#log.lastSeq ?? seq;
    if (last > seq) this.#pushCheckpoint(seq + 1, last, this.#ts);
    this.#scheduleDeltaFlush();
    return null;
  }

  /**
   * Keeps the checkpoint the writer reserved with seqs `seq` to `last` behind the record just appended (TJ-EVENT-006):
   * the message list and the run index as of it (TJ-EVENT-019). Several seqs are the parts of a split checkpoint
   * (TJ-EVENT-028), which the writer keeps for the live session, payloads as they are. The writer's own payload when it
   * kept it (frozen, the same object for every checkpoint of a stream of deltas): neither the list nor the index copied
   * again at every checkpoint. The writer keeps every checkpoint it reserves (no test reaches the branch after it,
   * checked by making it throw); should it not, both are rebuilt from its snapshot (whose messages are its own objects
   * too), so that such a change costs a copy and not the session. Each is counted in the window by what it adds to the
   * session's memory, not by its line (TJ-LIVE-067).
   */
  #pushCheckpoint(seq: number, last: number, ts: string): void {
    const log = this.#log;
    if (last > seq) {
      // A checkpoint split over several records (TJ-EVENT-028): its parts, as the writer reserved them.
      const parts = lastCheckpointParts(log, seq);
      if (parts === null || parts.length !== last - seq + 1)
        throw new Error(`the writer reserved records ${seq}..${last} behind a record, and they are not a checkpoint`);
      // Every checkpoint carries the log's epoch (TJ-EVENT-024), a split one on its last part, as the writer wrote it.
      const epoch = writtenEpoch(log);
      for (const part of parts)
        this.#pending.push(
          {
            seq: part.seq,
            ts: part.ts,
            type: 'checkpoint.part',
            payload: part.payload,
            ...(part.seq === last ? { epoch } : {}),
          },
          sizeOfSharedCheckpoint(part.payload),
        );
      return;
    }
    const kept = lastCheckpoint(log);
    // Every checkpoint carries the log's epoch (TJ-EVENT-024).
    const epoch = writtenEpoch(log);
    if (kept !== null) {
      this.#pending.push(
        { seq, ts, type: 'checkpoint', payload: kept.payload, epoch },
        sizeOfSharedCheckpoint(kept.payload),
      );
      return;
    }
    const payload = { messages: log.snapshot().messages, runs: runIndexEntries(log.runs().values()) };
    this.#pending.push({ seq, ts, type: 'checkpoint', payload, epoch }, sizeOfSharedCheckpoint(payload));
  }

  /** Makes every record appended so far durable, then delivers it (group commit: concurrent callers share a sync). */
  durable(): Promise<void> {
    if (this.#flushRunning === null) {
      this.#flushRunning = this.#flushOnce();
      return this.#flushRunning;
    }
    if (this.#flushNext === null) {
      const next = deferred();
      this.#flushNext = next;
      this.#flushRunning
        .then(
          () => undefined,
          () => undefined,
        )
        .then(() => {
          this.#flushNext = null;
          const run = this.#flushRunning ?? this.#flushOnce();
          this.#flushRunning = run;
          run.then(next.resolve, next.reject);
        });
    }
    return this.#flushNext.promise;
  }

  /** Stops the delta timer (on close). */
  stop(): void {
    if (this.#deltaTimer !== null) clearTimeout(this.#deltaTimer);
    this.#deltaTimer = null;
  }

  /** Wakes every waiting subscriber (on close, or when a delivery moved the durable seq). */
  wakeAll(): void {
    const changed = this.#changed;
    this.#changed = null;
    changed?.resolve();
  }

  /** Fails the pipeline (the first failure stays); drops the pending records from `fromSeq` on, never delivered. */
  fail(error: unknown, fromSeq?: number): void {
    if (this.#failure === null) {
      this.#failure = error ?? new Error('unknown failure');
      // Subscribers waiting for the next record learn that none will come (see `LiveSession.ended`).
      this.wakeAll();
      this.#settings.onFailure?.(this.#sessionId, this.#failure);
    }
    if (fromSeq === undefined) return;
    // Seqs ascend: the records from `fromSeq` on are a tail.
    let keep = 0;
    while (keep < this.#pending.length && this.#pending.seqAt(keep) < fromSeq) keep += 1;
    this.#pending.truncate(keep);
  }

  /** The `ts` of epoch milliseconds `stamp` (a finite number), formatted once per millisecond. */
  #tsOf(stamp: number): string {
    if (stamp !== this.#tsStamp) {
      this.#tsStamp = stamp;
      this.#ts = new Date(stamp).toISOString();
    }
    return this.#ts;
  }

  async #flushOnce(): Promise<void> {
    try {
      const log = this.#log;
      const target = log.lastSeq ?? -1;
      const rereads = stateRereads(log);
      const lastWritten = this.#lastWritten;
      await log.flush();
      // A write that failed meanwhile was taken back, and the writer re-read its file before the flush returned
      // (TJ-DUR-030): its records and those after it are not in the file, and their rejections fail the pipeline
      // (see `append`), each through a few promise reactions. Wait for the last of them to have been told, so that
      // no such record up to `target` is delivered whatever the number of reactions on either side.
      if (this.#failure === null && lastWritten !== null && stateRereads(log) !== rereads)
        await lastWritten.then(IGNORE, IGNORE);
      if (this.#failure !== null) throw this.#failure;
      this.#commitThrough(target);
    } catch (error) {
      this.fail(error);
      throw error;
    } finally {
      this.#flushRunning = null;
    }
  }

  #scheduleDeltaFlush(): void {
    if (this.#deltaTimer !== null) return;
    this.#deltaTimer = setTimeout(() => {
      this.#deltaTimer = null;
      // A failed sync fails the pipeline (`#flushOnce`), which reports it through `onFailure` and refuses every later
      // call with it: nothing is lost by not handling the rejection again here.
      this.durable().catch(() => undefined);
    }, this.#settings.deltaFlushMs);
  }

  /** Delivers the pending records up to `target`, now durable: fold, window, subscribers, fan-out. */
  #commitThrough(target: number): void {
    let moved = false;
    // One splice per commit, not a shift per record: a group commit can cover tens of thousands of deltas, and
    // `shift` on an array that large moves every element each time.
    const pending = this.#pending;
    const now = this.#settings.time.monotonic();
    this.#ring.beginCommit(now, this.#retainFrom(now));
    let taken = 0;
    for (; taken < pending.length; taken += 1) {
      const seq = pending.seqAt(taken);
      if (seq > target) break;
      if (seq <= this.#durableSeq) continue;
      if (seq !== this.#durableSeq + 1) {
        // A seq the session never saw appended: delivering past it would leave subscribers a gap (TJ-LIVE-009).
        this.fail(new LiveError('session_failed', `seq ${this.#durableSeq + 1} is missing before ${seq}`));
        taken += 1;
        break;
      }
      const item = pending.itemAt(taken);
      if (item instanceof DeltaIds) {
        const ts = pending.tsAt(taken);
        const text = pending.textAt(taken);
        this.#fold.applyDelta(seq, ts, item.requestId, item.messageId, text);
        this.#ring.pushDelta(seq, ts, item, text, item.size(text));
      } else {
        this.#fold.apply(item);
        this.#ring.push(item, pending.sizeAt(taken));
      }
      this.#durableSeq = seq;
      moved = true;
    }
    pending.dropFirst(taken);
    if (!moved) return;
    this.wakeAll();
    this.#settings.fanOut.publish(this.#sessionId, this.#durableSeq);
  }
}
