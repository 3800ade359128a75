import { DeltaIds } from './delta-ids.js';
import type { LiveRecord } from './records.js';

/** Entries the arrays keep when the list empties (about 20 ms of a fast stream); beyond, they are let go. */
const KEPT_CAPACITY = 4096;

/**
 * The records a live session appended and that are not yet durable, in seq order (spec §18.2): what the next sync
 * delivers. A group commit holds thousands of deltas (one every few microseconds for 20 ms), so a delta is kept as its
 * seq, `ts` and text in arrays, with its segment's {@link DeltaIds} shared, and handed on to the window that way: an
 * object per delta kept alive until the sync was one more for the garbage collector to copy, and most of what a delta
 * allocated. Other records are kept as built, with their size for the window.
 *
 * The arrays are a circular buffer that doubles when full and is never copied otherwise: a sync commits the records
 * it covers while the session goes on appending, so the list is consumed from its front as it grows at its end, and
 * an array per field re-grown, or moved to the front, after every commit cost a copy per delta of its own.
 */
export class PendingRecords {
  #seqs: number[] = [];
  #ts: string[] = [];
  /** The record, or for a delta the ids of its segment. */
  #items: (LiveRecord | DeltaIds | undefined)[] = [];
  /** A delta's text; '' for another record. */
  #texts: string[] = [];
  /** Another record's size for the window; 0 for a delta. */
  #sizes: number[] = [];
  /** The arrays' length, a power of two (or 0), less one. */
  #mask = -1;
  /** Where the first record is, and how many are kept. */
  #head = 0;
  #count = 0;
  /** The ids of the last delta kept, shared by the deltas of its segment. */
  #ids = new DeltaIds('', '');

  /** How many records are kept. */
  get length(): number {
    return this.#count;
  }

  /** Keeps a record and its size for the window. */
  push(record: LiveRecord, size: number): void {
    this.#put(record.seq, record.ts, record, '', size);
  }

  /** Keeps a `chat.delta` by its members. */
  pushDelta(seq: number, ts: string, requestId: string, messageId: string, text: string): void {
    let ids = this.#ids;
    if (ids.requestId !== requestId || ids.messageId !== messageId) {
      ids = new DeltaIds(requestId, messageId);
      this.#ids = ids;
    }
    this.#put(seq, ts, ids, text, 0);
  }

  /** The seq of the `index`-th record kept. */
  seqAt(index: number): number {
    return this.#seqs[(this.#head + index) & this.#mask] as number;
  }

  /** The `ts` of the `index`-th record kept. */
  tsAt(index: number): string {
    return this.#ts[(this.#head + index) & this.#mask] as string;
  }

  /** The `index`-th record kept when it is not a delta, else the ids of the delta's segment. */
  itemAt(index: number): LiveRecord | DeltaIds {
    return this.#items[(this.#head + index) & this.#mask] as LiveRecord | DeltaIds;
  }

  /** The text of the `index`-th record kept, a delta. */
  textAt(index: number): string {
    return this.#texts[(this.#head + index) & this.#mask] as string;
  }

  /** The window's size of the `index`-th record kept, not a delta. */
  sizeAt(index: number): number {
    return this.#sizes[(this.#head + index) & this.#mask] as number;
  }

  /** Forgets the first `count` records. */
  dropFirst(count: number): void {
    this.#release(0, count);
    this.#head = (this.#head + count) & this.#mask;
    this.#count -= count;
    if (this.#count === 0 && this.#mask + 1 > KEPT_CAPACITY) this.#reset();
  }

  /** Keeps only the first `length` records. */
  truncate(length: number): void {
    this.#release(length, this.#count);
    this.#count = length;
    if (length === 0 && this.#mask + 1 > KEPT_CAPACITY) this.#reset();
  }

  /**
   * Lets arrays grown by a long burst go once it is committed: a hub holds many sessions, and each would keep its
   * largest burst's arrays (up to megabytes) for good.
   */
  #reset(): void {
    this.#seqs = [];
    this.#ts = [];
    this.#items = [];
    this.#texts = [];
    this.#sizes = [];
    this.#mask = -1;
    this.#head = 0;
  }

  #put(seq: number, ts: string, item: LiveRecord | DeltaIds, text: string, size: number): void {
    if (this.#count === this.#mask + 1) this.#grow();
    const at = (this.#head + this.#count) & this.#mask;
    this.#seqs[at] = seq;
    this.#ts[at] = ts;
    this.#items[at] = item;
    this.#texts[at] = text;
    this.#sizes[at] = size;
    this.#count += 1;
  }

  /** Doubles the arrays, the records kept moved to their front in order. */
  #grow(): void {
    const length = Math.max(64, (this.#mask + 1) * 2);
    const seqs = new Array<number>(length).fill(0);
    const ts = new Array<string>(length).fill('');
    const items = new Array<LiveRecord | DeltaIds | undefined>(length).fill(undefined);
    const texts = new Array<string>(length).fill('');
    const sizes = new Array<number>(length).fill(0);
    for (let i = 0; i < this.#count; i += 1) {
      const from = (this.#head + i) & this.#mask;
      seqs[i] = this.#seqs[from] as number;
      ts[i] = this.#ts[from] as string;
      items[i] = this.#items[from];
      texts[i] = this.#texts[from] as string;
      sizes[i] = this.#sizes[from] as number;
    }
    this.#seqs = seqs;
    this.#ts = ts;
    this.#items = items;
    this.#texts = texts;
    this.#sizes = sizes;
    this.#mask = length - 1;
    this.#head = 0;
  }

  /** Lets the records and texts of the `from`-th to the `to - 1`-th kept go (their slots are reused later). */
  #release(from: number, to: number): void {
    for (let i = from; i < to; i += 1) {
      const at = (this.#head + i) & this.#mask;
      this.#items[at] = undefined;
      this.#texts[at] = '';
    }
  }
}
