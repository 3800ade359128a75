import { DeltaIds } from './delta-ids.js';
import type { LiveRecord } from './records.js';

/**
 * The window of the most recent durable records of a session (seed 003's `eventsRing`). Its base bounds (a count and
 * bytes) decide what a subscriber joining from a recent cursor finds in memory; past them, the window keeps the records
 * that a subscriber still reading has not received yet (see {@link RecordRing.beginCommit}), up to a hard byte bound,
 * so that one large commit cuts off no subscriber that keeps reading (TJ-LIVE-030). Its bytes are what the caller
 * counts for each record: what it adds to the session's memory (a checkpoint of the session's own messages adds their
 * references, not its line, TJ-LIVE-067). Seqs in it are consecutive, so a lookup is an index computation. A delta is
 * kept as its `ts`, text and the {@link DeltaIds} of its segment, and its record is built the first time it is read
 * (then kept): a session that streams with nobody subscribed builds none, and the window holds no object per delta for
 * the garbage collector to copy and promote.
 */
export class RecordRing {
  readonly #capacity: number;
  readonly #maxBytes: number;
  readonly #hardBytes: number;
  /** Length of the arrays below: the base capacity, grown (doubled) while subscribers hold more. */
  #slots: number;
  /** The record, or for a delta not read yet the ids of its segment. */
  #items: (LiveRecord | DeltaIds | undefined)[];
  /** A delta's `ts` and text while its record is not built; '' otherwise. */
  #ts: string[];
  #texts: string[];
  #sizes: number[];
  /** When each record became durable, on the monotonic clock: how long a subscriber lacking it has been behind. */
  #times: number[];
  /** Index of the oldest record. */
  #head = 0;
  #count = 0;
  #bytes = 0;
  /** Seq of the oldest record (meaningful when count > 0). */
  #firstSeq = 0;
  /** Records from this seq on stay past the base bounds: a subscriber still reading has not received them. */
  #keepFrom = Number.POSITIVE_INFINITY;
  /** The monotonic time of the commit under way. */
  #now = 0;

  /**
   * @param capacity most records kept for nobody in particular
   * @param maxBytes most bytes kept for nobody in particular (by the sizes the records are pushed with)
   * @param hardBytes most bytes kept in all, while subscribers still reading need more than the bounds above
   */
  constructor(capacity: number, maxBytes: number, hardBytes = maxBytes) {
    this.#capacity = capacity;
    this.#maxBytes = maxBytes;
    this.#hardBytes = Math.max(maxBytes, hardBytes);
    this.#slots = capacity;
    this.#items = new Array(capacity);
    this.#ts = new Array(capacity).fill('');
    this.#texts = new Array(capacity).fill('');
    this.#sizes = new Array(capacity).fill(0);
    this.#times = new Array(capacity).fill(0);
  }

  /** The seq of the oldest record kept, or null when empty. */
  get firstSeq(): number | null {
    return this.#count === 0 ? null : this.#firstSeq;
  }

  /** Records kept now. */
  get size(): number {
    return this.#count;
  }

  /** Bytes kept now (by the sizes the records were pushed with). */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Starts a commit: the records pushed until the next call became durable at `now` (monotonic milliseconds), and the
   * ones from seq `keepFrom` on are kept past the base bounds (up to the hard byte bound) until a later commit moves
   * it: some subscriber still reading has not received them.
   */
  beginCommit(now: number, keepFrom: number): void {
    this.#now = now;
    this.#keepFrom = keepFrom;
  }

  /** When the record with `seq` became durable (monotonic milliseconds), or undefined when it is not in the window. */
  durableAt(seq: number): number | undefined {
    const index = this.#indexOf(seq);
    return index < 0 ? undefined : this.#times[index];
  }

  /**
   * Appends the record with the next seq, counted as `size` bytes (its JSON length, or what it adds to the session's
   * memory when less: TJ-LIVE-067); a record of another seq empties the window first.
   */
  push(record: LiveRecord, size: number): void {
    // The slot first: it may grow the arrays, and `this.#items[...] =` would read the old one before the call.
    const index = this.#slot(record.seq, size);
    this.#items[index] = record;
  }

  /** {@link RecordRing.push} of the `chat.delta` `text` of the segment `ids`, with `seq` and `ts`. */
  pushDelta(seq: number, ts: string, ids: DeltaIds, text: string, size: number): void {
    const index = this.#slot(seq, size);
    this.#items[index] = ids;
    this.#ts[index] = ts;
    this.#texts[index] = text;
  }

  /** The record with `seq`, or undefined when it is not in the window. */
  get(seq: number): LiveRecord | undefined {
    const index = this.#indexOf(seq);
    if (index < 0) return undefined;
    const item = this.#items[index];
    if (!(item instanceof DeltaIds)) return item;
    const record = item.record(seq, this.#ts[index] as string, this.#texts[index] as string);
    this.#items[index] = record;
    this.#ts[index] = '';
    this.#texts[index] = '';
    return record;
  }

  /** Forgets every record (after a compaction, whose records keep their seqs but the window is rebuilt lazily). */
  clear(): void {
    this.#items.fill(undefined);
    this.#ts.fill('');
    this.#texts.fill('');
    this.#head = 0;
    this.#count = 0;
    this.#bytes = 0;
  }

  #indexOf(seq: number): number {
    const offset = seq - this.#firstSeq;
    if (this.#count === 0 || offset < 0 || offset >= this.#count) return -1;
    return (this.#head + offset) % this.#slots;
  }

  /** Makes room for the record with `seq` and `size` and counts it: the index of its slot. */
  #slot(seq: number, size: number): number {
    if (this.#count > 0 && seq !== this.#firstSeq + this.#count) this.clear();
    if (this.#count === 0) this.#firstSeq = seq;
    while (
      this.#count > 0 &&
      (this.#count >= this.#capacity || this.#bytes + size > this.#maxBytes) &&
      (this.#firstSeq < this.#keepFrom || this.#bytes + size > this.#hardBytes)
    )
      this.#evict();
    if (this.#count === 0) this.#firstSeq = seq;
    // Grown for a burst that subscribers were reading, the arrays shrink once the base window holds everything again
    // (to twice the base, so that a lag around the base does not copy them back and forth at every commit).
    if (this.#count < this.#capacity && this.#slots > 2 * this.#capacity) this.#resize(2 * this.#capacity);
    if (this.#count === this.#slots) this.#resize(2 * this.#slots);
    const index = (this.#head + this.#count) % this.#slots;
    this.#sizes[index] = size;
    this.#times[index] = this.#now;
    this.#count += 1;
    this.#bytes += size;
    return index;
  }

  /** Moves the records kept into arrays of `slots` entries, the oldest first. */
  #resize(slots: number): void {
    const items: (LiveRecord | DeltaIds | undefined)[] = new Array(slots);
    const ts: string[] = new Array(slots).fill('');
    const texts: string[] = new Array(slots).fill('');
    const sizes: number[] = new Array(slots).fill(0);
    const times: number[] = new Array(slots).fill(0);
    for (let i = 0; i < this.#count; i += 1) {
      const from = (this.#head + i) % this.#slots;
      items[i] = this.#items[from];
      ts[i] = this.#ts[from] as string;
      texts[i] = this.#texts[from] as string;
      sizes[i] = this.#sizes[from] as number;
      times[i] = this.#times[from] as number;
    }
    this.#items = items;
    this.#ts = ts;
    this.#texts = texts;
    this.#sizes = sizes;
    this.#times = times;
    this.#slots = slots;
    this.#head = 0;
  }

  #evict(): void {
    const head = this.#head;
    this.#items[head] = undefined;
    this.#ts[head] = '';
    this.#texts[head] = '';
    this.#bytes -= this.#sizes[head] ?? 0;
    this.#head = (head + 1) % this.#slots;
    this.#count -= 1;
    this.#firstSeq += 1;
  }
}
