import { DeltaIds } from './delta-ids.js';
import type { LiveRecord } from './records.js';

/**
 * The records a live session appended and that are not yet durable, in seq order (spec §18.2): what the next sync
 * delivers. A group commit holds thousands of deltas (one every few microseconds for 20 ms), so a delta is kept as its
 * seq, `ts` and text in arrays, with its segment's {@link DeltaIds} shared, and handed on to the window that way: an
 * object per delta kept alive until the sync was one more for the garbage collector to copy, and most of what a delta
 * allocated. Other records are kept as built, with their size for the window.
 *
 * The arrays keep their capacity from one commit to the next (entries are overwritten, the live ones moved to the
 * front when a commit leaves some): growing them again after every commit was a copy per delta of its own.
 */
export class PendingRecords {
  readonly #seqs: number[] = [];
  readonly #ts: string[] = [];
  /** The record, or for a delta the ids of its segment. */
  readonly #items: (LiveRecord | DeltaIds | undefined)[] = [];
  /** A delta's text; '' for another record. */
  readonly #texts: string[] = [];
  /** Another record's size for the window; 0 for a delta. */
  readonly #sizes: number[] = [];
  /** The entries in use: indexes `#head` to `#end - 1`. */
  #head = 0;
  #end = 0;
  /** The ids of the last delta kept, shared by the deltas of its segment. */
  #ids = new DeltaIds('', '');

  /** How many records are kept. */
  get length(): number {
    return this.#end - this.#head;
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
    return this.#seqs[this.#head + index] as number;
  }

  /** The `ts` of the `index`-th record kept. */
  tsAt(index: number): string {
    return this.#ts[this.#head + index] as string;
  }

  /** The `index`-th record kept when it is not a delta, else the ids of the delta's segment. */
  itemAt(index: number): LiveRecord | DeltaIds {
    return this.#items[this.#head + index] as LiveRecord | DeltaIds;
  }

  /** The text of the `index`-th record kept, a delta. */
  textAt(index: number): string {
    return this.#texts[this.#head + index] as string;
  }

  /** The window's size of the `index`-th record kept, not a delta. */
  sizeAt(index: number): number {
    return this.#sizes[this.#head + index] as number;
  }

  /** Forgets the first `count` records. */
  dropFirst(count: number): void {
    const head = this.#head;
    this.#release(head, head + count);
    this.#head = head + count;
    if (this.#head === this.#end) {
      this.#head = 0;
      this.#end = 0;
    }
  }

  /** Keeps only the first `length` records. */
  truncate(length: number): void {
    const end = this.#head + length;
    this.#release(end, this.#end);
    this.#end = end;
    if (length === 0) this.#head = this.#end = 0;
  }

  #put(seq: number, ts: string, item: LiveRecord | DeltaIds, text: string, size: number): void {
    let end = this.#end;
    if (end === this.#seqs.length && this.#head > 0) end = this.#compact();
    this.#seqs[end] = seq;
    this.#ts[end] = ts;
    this.#items[end] = item;
    this.#texts[end] = text;
    this.#sizes[end] = size;
    this.#end = end + 1;
  }

  /** Moves the entries in use to the front (the arrays are full and a commit left a tail): the new end. */
  #compact(): number {
    const head = this.#head;
    const end = this.#end;
    for (const array of [this.#seqs, this.#ts, this.#items, this.#texts, this.#sizes] as unknown[][])
      array.copyWithin(0, head, end);
    this.#release(end - head, end);
    this.#head = 0;
    this.#end = end - head;
    return this.#end;
  }

  /** Lets the records and texts of entries `from` to `to - 1` go (their slots are reused later). */
  #release(from: number, to: number): void {
    this.#items.fill(undefined, from, to);
    this.#texts.fill('', from, to);
  }
}
