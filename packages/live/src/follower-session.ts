import { readRunIndex, recoverEventFold } from '@turnjournal/reader/_internals';
import type { JournalReader, RecordStore } from '@turnjournal/reader/record-store';
import { isAcceptedRecord } from '@turnjournal/schema';
import { DiskReader } from './disk-reader.js';
import { LiveError } from './errors.js';
import { Listening, type LiveListener } from './fanout-listener.js';
import type { ConversationView, LiveEvent, LiveRecord, LiveRunStatus } from './records.js';
import { RecordRing } from './ring.js';
import type { LiveRunInfo, LiveSessionSettings, SendResult, SubscribeOptions } from './session-inputs.js';
import { openSubscription, type Subscription, type SubscriptionSource } from './subscription.js';
import { ViewFold } from './view-fold.js';

/** Most records a follower reads from the store per step while it catches up with an announcement. */
const CATCH_UP_BATCH = 256;

function notOwner(sessionId: string, what: string): LiveError {
  return new LiveError(
    'not_owner',
    `session "${sessionId}" is owned by another process, which writes its records; ${what} must go to it (TJ-LIVE-043)`,
  );
}

/**
 * A session served by a process that does not own it (spec §18.8): another process holds its journals and writes its
 * records; this one serves subscribers, snapshots and run status from the store, following what the owner announces
 * durable on the store's channel (TJ-LIVE-042). Its subscribers get exactly the records the owner's get, a little
 * later (by the channel's delay). Every call that writes — `send`, `cancel`, `ack`, `compact` — is refused with
 * `not_owner` (TJ-LIVE-043): the application sends it to the owner. Obtain it from {@link ConversationHub.session},
 * which answers a follower when another process owns the session.
 */
export class FollowerSession implements SubscriptionSource {
  /** The session id. */
  readonly sessionId: string;
  /** What this process is to the session: `follower`. */
  readonly role = 'follower' as const;
  readonly #store: RecordStore;
  readonly #settings: LiveSessionSettings;
  readonly #disk: DiskReader;
  readonly #fold: ViewFold;
  /** The records read for the last announcements, which live subscribers take as the owner's take from its window. */
  readonly #ring: RecordRing;
  readonly #subscribers = new Set<Subscription>();
  #durableSeq: number;
  #closed = false;
  #stopListening: () => void = () => undefined;
  /** The catch-up under way, or null; an announcement meanwhile is taken by it (it reads to the newest mark). */
  #catchingUp: Promise<void> | null = null;
  #announced: number;
  #waiters: (() => void)[] = [];
  #lastUsed: number;
  #failure: unknown = null;

  private constructor(
    sessionId: string,
    store: RecordStore,
    settings: LiveSessionSettings,
    fold: ViewFold,
    durableSeq: number,
  ) {
    this.sessionId = sessionId;
    this.#store = store;
    this.#settings = settings;
    this.#fold = fold;
    this.#durableSeq = durableSeq;
    this.#announced = durableSeq;
    this.#disk = new DiskReader(() => store.openReader({ family: 'event', sessionId }));
    this.#ring = new RecordRing(settings.ringRecords, settings.ringBytes, settings.subscriberLagBytes);
    this.#lastUsed = settings.time.monotonic();
  }

  /**
   * @internal Opens a follower: the durable end its owner announced, the fold of the log through it (from the last
   * checkpoint, as a writer recovers its tail, spec §15.2), then the channel's announcements.
   */
  static async open(sessionId: string, store: RecordStore, settings: LiveSessionSettings): Promise<FollowerSession> {
    const durable = await store.channel.durableSeq(sessionId);
    const reader = await store.openReader({ family: 'event', sessionId });
    let fold: ViewFold;
    try {
      fold = await foldThrough(reader, durable);
    } finally {
      await reader.close();
    }
    const session = new FollowerSession(sessionId, store, settings, fold, fold.lastSeq ?? -1);
    session.#stopListening = store.channel.listen(sessionId, (seq) => session.#heard(seq));
    return session;
  }

  // ---- public API ----------------------------------------------------------------------------------------------

  /** The highest seq the owner announced durable that this follower has read (what subscribers are offered). */
  get durableSeq(): number {
    return this.#durableSeq;
  }

  /** True once closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** @internal True once the follower delivers no more records: closed, or its store failed it. */
  get ended(): boolean {
    return this.#closed || this.#failure !== null;
  }

  /** @internal True once the hub must not hand it out any more. */
  get retired(): boolean {
    return this.ended;
  }

  /** @internal True while the hub must not close the follower to make room: it has subscribers, or its owner a run. */
  get busy(): boolean {
    return this.subscriberCount > 0 || this.activeRequestId !== undefined;
  }

  /** @internal The hub handed the session out. */
  touch(): void {
    this.#lastUsed = this.#settings.time.monotonic();
  }

  /** @internal When the session was last used, on the monotonic clock (ms), for the hub's idle close. */
  get lastUsed(): number {
    return this.#lastUsed;
  }

  /** The active run's id, as the owner's durable records say, or undefined. */
  get activeRequestId(): string | undefined {
    return this.#fold.activeRequestId;
  }

  /** @internal What the window of recent records holds now (see `LiveSession.windowUsage`). */
  get windowUsage(): { readonly records: number; readonly bytes: number } {
    return { records: this.#ring.size, bytes: this.#ring.bytes };
  }

  /** Subscribers currently attached. */
  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  /** Refused with `not_owner` (TJ-LIVE-043): sends go to the owner. */
  send(_input: unknown): Promise<SendResult> {
    return Promise.reject(notOwner(this.sessionId, 'a send'));
  }

  /** Refused with `not_owner` (TJ-LIVE-043): cancellations go to the owner. */
  cancel(_requestId: string, _reason?: string): Promise<void> {
    return Promise.reject(notOwner(this.sessionId, 'a cancellation'));
  }

  /** Refused with `not_owner` (TJ-LIVE-043): acknowledgements go to the owner. */
  ack(_requestId: string, _options?: unknown): Promise<void> {
    return Promise.reject(notOwner(this.sessionId, 'an acknowledgement'));
  }

  /** Refused with `not_owner` (TJ-LIVE-043): the owner compacts its log. */
  compact(_options?: unknown): Promise<never> {
    return Promise.reject(notOwner(this.sessionId, 'a compaction'));
  }

  /** What the owner's durable records say of the run `requestId` (see `LiveSession.runInfo`). */
  runInfo(requestId: string): LiveRunInfo | undefined {
    const run = this.#fold.runs.get(requestId);
    if (run === undefined) return undefined;
    return {
      requestId,
      status: run.finish ?? 'running',
      startedSeq: run.startedSeq,
      finishedSeq: run.finishedSeq,
      acked: run.acked,
    };
  }

  /** The status of the run `requestId` as the durable records say, or undefined (a turn's is the owner's to tell). */
  statusOf(requestId: string): LiveRunStatus | undefined {
    const run = this.#fold.runs.get(requestId);
    return run === undefined ? undefined : (run.finish ?? 'running');
  }

  /** Streams the log from a cursor exactly as the owner's `subscribe` does (TJ-LIVE-042). */
  subscribe(options: SubscribeOptions = {}): Subscription {
    if (this.#closed) throw new LiveError('session_closed', `session "${this.sessionId}" is closed`);
    const subscription = openSubscription(this, options, this.#fold.epoch);
    this.#subscribers.add(subscription);
    this.#lastUsed = this.#settings.time.monotonic();
    return subscription;
  }

  /**
   * What {@link subscribe} streams, delivered by callback: `listener` gets every event once, in order, the records
   * that are ready at once (a commit's, a batch read from the store) in one call. Observe the returned `done`.
   */
  listen(options: SubscribeOptions, listener: LiveListener): Listening {
    return new Listening(this.subscribe(options), listener);
  }

  /** The conversation view through {@link FollowerSession.durableSeq} (TJ-LIVE-013). */
  snapshot(options: { readonly clientId?: string } = {}): ConversationView {
    return this.#fold.view(
      this.sessionId,
      options.clientId,
      this.#settings.time.now(),
      this.#settings.deliveryWindowMs,
    );
  }

  /** Nothing to flush: a follower writes nothing. */
  async flush(): Promise<void> {}

  /** Stops following: ends every subscription (with its cursor) and closes the reader. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stopListening();
    this.#wake();
    for (const subscription of [...this.#subscribers]) subscription.close();
    // A catch-up never rejects (a failure fails the follower instead): its end is all there is to wait for.
    await this.#catchingUp;
    await this.#disk.close();
  }

  // ---- SubscriptionSource ----------------------------------------------------------------------------------------

  /** @internal */
  fromRing(seq: number): LiveRecord | undefined {
    return this.#ring.get(seq);
  }

  /** @internal */
  fromDisk(
    after: number,
    through: number,
    limit: number,
  ): Promise<{ kind: 'records'; records: readonly LiveRecord[] } | { kind: 'compacted' }> {
    return this.#disk.readAfter(after, Math.min(through, this.#durableSeq), limit);
  }

  /** @internal */
  snapshotEvent(reason: 'compacted' | 'ahead' | 'reset'): { event: LiveEvent; seq: number } {
    const view = this.snapshot();
    return { event: { kind: 'snapshot', reason, view }, seq: view.lastSeq ?? -1 };
  }

  /** @internal */
  changed(): Promise<void> {
    if (this.ended) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  /** @internal */
  detach(subscription: Subscription): void {
    this.#subscribers.delete(subscription);
    this.#lastUsed = this.#settings.time.monotonic();
  }

  // ---- following -------------------------------------------------------------------------------------------------

  /** An announcement: a seq, or `undefined` when some may have been missed (then the durable end is read again). */
  #heard(seq: number | undefined): void {
    if (this.ended) return;
    if (seq === undefined) {
      this.#store.channel.durableSeq(this.sessionId).then(
        (durable) => this.#heard(durable),
        (error: unknown) => this.#fail(error),
      );
      return;
    }
    if (seq > this.#announced) this.#announced = seq;
    this.#follow();
  }

  /** Starts the catch-up to the newest announcement unless one runs; each catch-up ends by looking again. */
  #follow(): void {
    if (this.#catchingUp !== null || this.#durableSeq >= this.#announced || this.ended) return;
    this.#catchingUp = this.#catchUp().finally(() => {
      this.#catchingUp = null;
      this.#follow();
    });
  }

  /** Reads the records after the durable seq through the newest announcement, folds them and wakes subscribers. */
  async #catchUp(): Promise<void> {
    try {
      while (this.#durableSeq < this.#announced && !this.ended) {
        const batch = await this.#disk.readAfter(this.#durableSeq, this.#announced, CATCH_UP_BATCH);
        if (batch.kind === 'compacted' || batch.records.length === 0) {
          // The owner compacted (or replaced) the log under the reader: read it afresh once before calling it lost.
          await this.#disk.reopen();
          const again = await this.#disk.readAfter(this.#durableSeq, this.#announced, CATCH_UP_BATCH);
          if (again.kind === 'compacted' || again.records.length === 0) {
            throw new LiveError(
              'session_failed',
              `session "${this.sessionId}": the store does not hold seq ${this.#durableSeq + 1}, which its owner announced durable`,
            );
          }
          this.#advance(again.records, again.sizes);
          continue;
        }
        this.#advance(batch.records, batch.sizes);
      }
    } catch (error) {
      this.#fail(error);
    }
  }

  #advance(records: readonly LiveRecord[], sizes: readonly number[]): void {
    // The window keeps what a live subscriber has not taken yet, up to its hard bound (TJ-LIVE-030, as the owner's).
    let keepFrom = Number.POSITIVE_INFINITY;
    for (const subscription of this.#subscribers)
      if (subscription.streaming) keepFrom = Math.min(keepFrom, subscription.cursor + 1);
    this.#ring.beginCommit(this.#settings.time.monotonic(), keepFrom);
    for (const [i, record] of records.entries()) {
      this.#fold.apply(record);
      this.#ring.push(record, sizes[i] as number);
      this.#durableSeq = record.seq;
    }
    this.#wake();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }

  #fail(error: unknown): void {
    if (this.#failure !== null || this.#closed) return;
    this.#failure = error;
    this.#settings.onFailure?.(this.sessionId, error);
    this.#wake();
  }
}

/**
 * The view of the log through seq `durable` (none when it is -1): the fold of the tail before the first record past
 * it (spec §15.2, as a writer recovers), the runs from the checkpoint's run index (TJ-EVENT-020), then the records up
 * to `durable` that lie after the seek point.
 */
async function foldThrough(reader: JournalReader, durable: number): Promise<ViewFold> {
  const end = durable < 0 ? 0 : await reader.seekSeq(durable + 1);
  const recovery = await recoverEventFold(reader.name, { source: reader, size: end });
  const index = await readRunIndex({ source: reader, size: end, checkpointOffset: recovery.runIndexOffset });
  const fold = new ViewFold(recovery.fold.snapshot(), index.runs);
  if (durable < 0) return fold;
  for await (const batch of reader.records({ from: end })) {
    for (const item of batch) {
      if (item.kind !== 'record') continue;
      const { validation, value } = item.record;
      if (!isAcceptedRecord(validation) || validation.classification.family !== 'event') continue;
      const seq = value.seq as number;
      if (seq <= (fold.lastSeq ?? -1)) continue;
      if (seq > durable || seq !== (fold.lastSeq ?? -1) + 1) return fold;
      fold.apply(value as unknown as LiveRecord);
    }
  }
  return fold;
}
