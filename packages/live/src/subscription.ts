import { LiveError } from './errors.js';
import type { LiveEvent, LiveRecord, LiveTokenEvent } from './records.js';

/** What a subscription needs from its session: the durable head, the window, the store, a view, a wake-up. */
export interface SubscriptionSource {
  /** The highest durable seq, -1 for none. */
  readonly durableSeq: number;
  /** The record with `seq` from the in-memory window, or undefined. */
  fromRing(seq: number): LiveRecord | undefined;
  /** Records after `after` through `through` from the store, or `compacted`. */
  fromDisk(
    after: number,
    through: number,
    limit: number,
  ): Promise<{ kind: 'records'; records: readonly LiveRecord[] } | { kind: 'compacted' }>;
  /** A snapshot event for `reason`, and the seq it is consistent with. */
  snapshotEvent(reason: 'compacted' | 'ahead' | 'reset'): { event: LiveEvent; seq: number };
  /** Resolves at the next durable record, or when the session closes or fails (then `ended` is true). */
  changed(): Promise<void>;
  /** True once the session delivers no more records: closed, or failed. */
  readonly ended: boolean;
  /** Called when the subscription ends. */
  detach(subscription: Subscription<LiveEvent | LiveTokenEvent>): void;
  /**
   * The open assistant segment's text as the worker produced it, durable or not, from `offset` when it is segment
   * `messageId` and from its start otherwise (TJ-LIVE-060); undefined when no segment is open or there is nothing
   * after `offset`. Absent on a source that has no tokens to give (a follower).
   */
  tokensAfter?(messageId: string, offset: number): LiveTokenEvent | undefined;
}

/**
 * A subscription of `source` from the client's `options` (spec §18.3), checked: `after` an integer of -1 or more, `epoch`
 * a string or null. A cursor whose epoch is not `logEpoch` (the epoch of the durable records, TJ-LIVE-008) belongs to
 * another history: the subscription starts with a `reset` snapshot (TJ-LIVE-020).
 */
export function openSubscription<E extends LiveEvent | LiveTokenEvent = LiveEvent>(
  source: SubscriptionSource,
  options: { readonly after?: number; readonly epoch?: string | null; readonly tokens?: boolean },
  logEpoch: string | null,
): Subscription<E> {
  const after = options.after ?? -1;
  if (!Number.isSafeInteger(after) || after < -1)
    throw new LiveError('invalid_request', `after must be an integer >= -1, got ${String(options.after)}`);
  const { epoch } = options;
  if (epoch !== undefined && epoch !== null && typeof epoch !== 'string')
    throw new LiveError('invalid_request', `epoch must be a string or null, got ${typeof epoch}`);
  const { tokens } = options;
  if (tokens !== undefined && typeof tokens !== 'boolean')
    throw new LiveError('invalid_request', `tokens must be a boolean, got ${typeof tokens}`);
  return new Subscription<E>(source, after, epoch !== undefined && after >= 0 && epoch !== logEpoch, tokens === true);
}

/** Most records read from the store per batch: what a subscriber catching up from disk holds at most. */
const DISK_BATCH = 256;

/**
 * One subscriber (spec §18.3): an async iterable of {@link LiveEvent}s with a cursor, the last seq it received.
 *
 * It pulls: each step takes the record after its cursor from the session's window of recent records, or from the
 * store when the window no longer holds it, or waits for the next durable record. Records only exist once durable
 * and seqs are consecutive, so "the record after the cursor" is exact: no gap, no duplicate, whatever appends race
 * the catch-up (TJ-LIVE-009). A subscriber holds at most one batch read from the store, so memory does not grow with
 * its lag; one that streamed live and then fell out of the window, or that the session cut off because it stayed
 * behind for longer than the lag limit (TJ-LIVE-030), is ended with `cut_off` and its cursor (TJ-LIVE-011).
 */
export class Subscription<E extends LiveEvent | LiveTokenEvent = LiveEvent> implements AsyncIterableIterator<E> {
  readonly #source: SubscriptionSource;
  #cursor: number;
  #live = false;
  #done = false;
  /** Set by the session: behind for longer than the lag limit, this subscriber no longer holds records in memory. */
  #cut = false;
  #batch: LiveRecord[] = [];
  #wake: (() => void) | null = null;
  /** The read from the store under way, or null: a second `next()` meanwhile waits for it rather than read again. */
  #reading: Promise<unknown> | null = null;

  /** True until the `reset` snapshot of a cursor of another history is yielded (TJ-LIVE-020). */
  #reset: boolean;
  /** Yield token events (TJ-LIVE-060). */
  readonly #tokens: boolean;
  /** The segment whose token text this subscriber was given, and how much of it. */
  #tokenSegment = '';
  #tokenLength = 0;

  /**
   * @param source the session
   * @param after the client's cursor: it holds every record up to this seq (-1: none)
   * @param reset true when the cursor belongs to another history (its epoch is not the log's): the first event is a
   *   `reset` snapshot, and the subscription continues after it
   * @param tokens yield the open segment's token text whenever the subscriber has every durable record (TJ-LIVE-060)
   */
  constructor(source: SubscriptionSource, after: number, reset = false, tokens = false) {
    this.#source = source;
    this.#cursor = after;
    this.#reset = reset;
    this.#tokens = tokens;
  }

  /** @internal True when it yields token events: the session wakes it at every token. */
  get wantsTokens(): boolean {
    return this.#tokens;
  }

  /** The last seq this subscriber received (its `after` until it received one). */
  get cursor(): number {
    return this.#cursor;
  }

  /** Ends the subscription; a pending `next()` resolves as done. */
  close(): void {
    if (this.#done) return;
    this.#done = true;
    this.#batch = [];
    this.#source.detach(this as Subscription<LiveEvent | LiveTokenEvent>);
    this.#wake?.();
  }

  /**
   * @internal True while the subscription streams live (it took a record from the window, or waits for the next one):
   * the window keeps what it has not received yet, within the lag limit (TJ-LIVE-030).
   */
  get streaming(): boolean {
    return this.#live && !this.#done && !this.#cut;
  }

  /** @internal The session cut it off (TJ-LIVE-030): its next step ends it with `cut_off` and its cursor. */
  cutOff(): void {
    this.#cut = true;
    this.#wake?.();
  }

  /** @internal the session closed or moved: re-check. */
  wake(): void {
    this.#wake?.();
  }

  /**
   * @internal The events a listener receives in one call, starting with `first` (the event `next()` just yielded):
   * then the records after it that are there without waiting (the rest of a batch read from the store, or the window
   * through the durable head), as `next()` would yield them one by one, up to `limit` events in all. Records taken
   * from the window come as one array shared by every listener at the same cursor, built once per commit.
   */
  takeReady(first: LiveEvent, limit: number): readonly LiveEvent[] {
    if (first.kind !== 'record' || this.#done || this.#cut || this.#reset) return [first];
    const source = this.#source;
    const seq = first.record.seq;
    if (this.#batch.length === 0 && this.#live && source.fromRing(seq) === first.record) {
      const events = sharedRun(source, seq, Math.min(source.durableSeq, seq + limit - 1));
      this.#cursor = (events.at(-1) as { record: LiveRecord }).record.seq;
      return events;
    }
    const events: LiveEvent[] = [first];
    while (events.length < limit) {
      const buffered = this.#batch.shift();
      let record: LiveRecord | undefined;
      if (buffered !== undefined) record = buffered;
      else {
        if (this.#cursor >= source.durableSeq) break;
        record = source.fromRing(this.#cursor + 1);
        if (record === undefined) break;
        this.#live = true;
      }
      this.#cursor = record.seq;
      events.push({ kind: 'record', record });
    }
    return events;
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<E> {
    return this;
  }

  /** Ends the iteration (a `break` out of `for await`). */
  async return(): Promise<IteratorResult<E>> {
    this.close();
    return { done: true, value: undefined };
  }

  /**
   * The next event. A call made before the previous one settled (a `Promise.race` with a heartbeat, say) is answered
   * after it: each call takes the record after the cursor as it is when the call resumes, and a call that finds a
   * read from the store under way waits for it and takes from its batch (two reads of the same batch yielded it
   * twice).
   */
  async next(): Promise<IteratorResult<E>> {
    return (await this.#next()) as IteratorResult<E>;
  }

  async #next(): Promise<IteratorResult<LiveEvent | LiveTokenEvent>> {
    const source = this.#source;
    for (;;) {
      if (this.#done) return { done: true, value: undefined };
      if (this.#reset) {
        this.#reset = false;
        const { event, seq } = source.snapshotEvent('reset');
        this.#cursor = seq;
        return { done: false, value: event };
      }
      const buffered = this.#batch.shift();
      if (buffered !== undefined) return this.#yield(buffered);
      if (this.#cut) return this.#cutOffEvent();
      const head = source.durableSeq;
      if (this.#cursor > head) {
        const { event, seq } = source.snapshotEvent('ahead');
        this.#cursor = seq;
        return { done: false, value: event };
      }
      if (this.#cursor < head) {
        const record = source.fromRing(this.#cursor + 1);
        if (record !== undefined) {
          this.#live = true;
          return this.#yield(record);
        }
        if (this.#live) return this.#cutOffEvent();
        if (this.#reading !== null) {
          await this.#reading;
          continue;
        }
        let batch: Awaited<ReturnType<SubscriptionSource['fromDisk']>>;
        const reading = source.fromDisk(this.#cursor, head, DISK_BATCH);
        this.#reading = reading.catch(() => undefined);
        try {
          batch = await reading;
        } catch (error) {
          // A read cut short because the subscription or its session ended meanwhile is the end, not a failure.
          if (this.#done || source.ended) {
            this.close();
            return { done: true, value: undefined };
          }
          throw error;
        } finally {
          this.#reading = null;
        }
        if (this.#done) return { done: true, value: undefined };
        if (batch.kind === 'compacted') {
          const { event, seq } = source.snapshotEvent('compacted');
          this.#cursor = seq;
          return { done: false, value: event };
        }
        // An empty batch means the log lost records below the head: nothing to serve from it, so go live.
        if (batch.records.length === 0) this.#live = true;
        this.#batch = [...batch.records];
        continue;
      }
      this.#live = true;
      // A failed session delivers nothing more: waiting would hang the client, which can resume from its cursor.
      if (source.ended) {
        this.close();
        return { done: true, value: undefined };
      }
      // Every durable record is out: the text the worker produced since is next (TJ-LIVE-060).
      const token = this.#tokens ? this.#token() : undefined;
      if (token !== undefined) return { done: false, value: token };
      await new Promise<void>((resolve) => {
        // Every call waiting is woken by close(), not only the last one (the calls woken by a record resume in the
        // order they waited, each clearing this before any of them waits again).
        const waiting = this.#wake;
        this.#wake =
          waiting === null
            ? resolve
            : () => {
                waiting();
                resolve();
              };
        source.changed().then(resolve, resolve);
      });
      this.#wake = null;
    }
  }

  /**
   * The open segment's text this subscriber was not given yet, or undefined. The text is read when the subscriber
   * takes it, so a slow reader gets the tokens produced meanwhile as one event and holds nothing per token; a segment
   * it has not seen starts at offset 0, the text so far.
   */
  #token(): LiveTokenEvent | undefined {
    const token = this.#source.tokensAfter?.(this.#tokenSegment, this.#tokenLength);
    if (token === undefined) return undefined;
    this.#tokenSegment = token.messageId;
    this.#tokenLength = token.offset + token.text.length;
    return token;
  }

  #cutOffEvent(): IteratorResult<LiveEvent> {
    const cursor = this.#cursor;
    this.close();
    return { done: false, value: { kind: 'cut_off', cursor } };
  }

  #yield(record: LiveRecord): IteratorResult<LiveEvent> {
    this.#cursor = record.seq;
    return { done: false, value: { kind: 'record', record } };
  }
}

/** The last run of window records built for listeners, per session: the next listener at the same cursor reuses it. */
const sharedRuns = new WeakMap<
  SubscriptionSource,
  readonly { readonly kind: 'record'; readonly record: LiveRecord }[]
>();

/**
 * The record events of the window from `from` through `through` (fewer if the window lacks some), the same frozen
 * array for every caller while the window holds the same records at both ends.
 */
function sharedRun(source: SubscriptionSource, from: number, through: number): readonly LiveEvent[] {
  const cached = sharedRuns.get(source);
  if (
    cached !== undefined &&
    cached.length === through - from + 1 &&
    cached[0]?.record === source.fromRing(from) &&
    cached[cached.length - 1]?.record === source.fromRing(through)
  )
    return cached;
  const events: { readonly kind: 'record'; readonly record: LiveRecord }[] = [];
  for (let seq = from; seq <= through; seq += 1) {
    const record = source.fromRing(seq);
    if (record === undefined) break;
    events.push({ kind: 'record', record });
  }
  Object.freeze(events);
  sharedRuns.set(source, events);
  return events;
}
