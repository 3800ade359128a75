import { DeltaIds } from './delta-ids.js';
import type { LiveRecord } from './records.js';

/**
 * The bounded window of the most recent durable records of a session (seed 003's `eventsRing`), by count and by
 * bytes. Seqs in it are consecutive, so a lookup is an index computation. A delta is kept as its `ts`, text and the
 * {@link DeltaIds} of its segment, and its record is built the first time it is read (then kept): a session that
 * streams with nobody subscribed builds none, and the window holds no object per delta for the garbage collector to
 * copy and promote.
 */
export class RecordRing {
  readonly #capacity: number;
  readonly #maxBytes: number;
  /** The record, or for a delta not read yet the ids of its segment. */
  readonly #items: (LiveRecord | DeltaIds | undefined)[];
  /** A delta's `ts` and text while its record is not built; '' otherwise. */
  readonly #ts: string[];
  readonly #texts: string[];
  readonly #sizes: number[];
  /** Index of the oldest record. */
  #head = 0;
  #count = 0;
  #bytes = 0;
  /** Seq of the oldest record (meaningful when count > 0). */
  #firstSeq = 0;

  /**
   * @param capacity most records kept
   * @param maxBytes most bytes kept (by the records' JSON size)
   */
  constructor(capacity: number, maxBytes: number) {
    this.#capacity = capacity;
    this.#maxBytes = maxBytes;
    this.#items = new Array(capacity);
    this.#ts = new Array(capacity).fill('');
    this.#texts = new Array(capacity).fill('');
    this.#sizes = new Array(capacity).fill(0);
  }

  /** The seq of the oldest record kept, or null when empty. */
  get firstSeq(): number | null {
    return this.#count === 0 ? null : this.#firstSeq;
  }

  /** Appends the record with the next seq; a record of another seq empties the window first. */
  push(record: LiveRecord, size: number): void {
    this.#items[this.#slot(record.seq, size)] = record;
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
    const offset = seq - this.#firstSeq;
    if (this.#count === 0 || offset < 0 || offset >= this.#count) return undefined;
    const index = (this.#head + offset) % this.#capacity;
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

  /** Makes room for the record with `seq` and `size` and counts it: the index of its slot. */
  #slot(seq: number, size: number): number {
    if (this.#count > 0 && seq !== this.#firstSeq + this.#count) this.clear();
    if (this.#count === 0) this.#firstSeq = seq;
    while (this.#count > 0 && (this.#count >= this.#capacity || this.#bytes + size > this.#maxBytes)) this.#evict();
    if (this.#count === 0) this.#firstSeq = seq;
    const index = (this.#head + this.#count) % this.#capacity;
    this.#sizes[index] = size;
    this.#count += 1;
    this.#bytes += size;
    return index;
  }

  #evict(): void {
    const head = this.#head;
    this.#items[head] = undefined;
    this.#ts[head] = '';
    this.#texts[head] = '';
    this.#bytes -= this.#sizes[head] ?? 0;
    this.#head = (head + 1) % this.#capacity;
    this.#count -= 1;
    this.#firstSeq += 1;
  }
}
