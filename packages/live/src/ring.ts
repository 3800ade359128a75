import type { LiveRecord } from './records.js';

/**
 * The bounded window of the most recent durable records of a session (seed 003's `eventsRing`), by count and by
 * bytes. Seqs in it are consecutive, so a lookup is an index computation.
 */
export class RecordRing {
  readonly #capacity: number;
  readonly #maxBytes: number;
  readonly #records: (LiveRecord | undefined)[];
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
    this.#records = new Array(capacity);
    this.#sizes = new Array(capacity).fill(0);
  }

  /** The seq of the oldest record kept, or null when empty. */
  get firstSeq(): number | null {
    return this.#count === 0 ? null : this.#firstSeq;
  }

  /** Appends the record with the next seq; a record of another seq empties the window first. */
  push(record: LiveRecord, size: number): void {
    if (this.#count > 0 && record.seq !== this.#firstSeq + this.#count) this.clear();
    if (this.#count === 0) this.#firstSeq = record.seq;
    while (this.#count > 0 && (this.#count >= this.#capacity || this.#bytes + size > this.#maxBytes)) this.#evict();
    if (this.#count === 0) this.#firstSeq = record.seq;
    const index = (this.#head + this.#count) % this.#capacity;
    this.#records[index] = record;
    this.#sizes[index] = size;
    this.#count += 1;
    this.#bytes += size;
  }

  /** The record with `seq`, or undefined when it is not in the window. */
  get(seq: number): LiveRecord | undefined {
    const offset = seq - this.#firstSeq;
    if (this.#count === 0 || offset < 0 || offset >= this.#count) return undefined;
    return this.#records[(this.#head + offset) % this.#capacity];
  }

  /** Forgets every record (after a compaction, whose records keep their seqs but the window is rebuilt lazily). */
  clear(): void {
    this.#records.fill(undefined);
    this.#head = 0;
    this.#count = 0;
    this.#bytes = 0;
  }

  #evict(): void {
    this.#records[this.#head] = undefined;
    this.#bytes -= this.#sizes[this.#head] ?? 0;
    this.#head = (this.#head + 1) % this.#capacity;
    this.#count -= 1;
    this.#firstSeq += 1;
  }
}
