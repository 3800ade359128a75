import { PagedIndex } from './paged-index.js';

// Strings are written one after the other in pages of PAGE_BYTES; one longer than a page gets a page of its own. The
// first page grows by doubling until it is whole, so a small session holds a few hundred bytes.
const PAGE_BYTES = 256 * 1024;
const INITIAL_BYTES = 256;

/**
 * Strings kept as UTF-8 bytes in a few large buffers instead of one heap string each: the turn ids of a fold's arena,
 * the `stream_id`s and `reason`s of its representatives, which a journal of a million turns holds a million of, each a
 * string for the garbage collector to copy and mark. A string comes back as `ownString` would have kept it: a lone
 * surrogate is written, and read back, as U+FFFD. Internal to the reader.
 *
 * An entry costs its bytes and 4 more, where it starts in its page: its page is the last one whose first entry is not
 * after it (a search of the few page numbers, the last page first), and it ends where the next entry of its page
 * starts, or where the page's bytes end (issue 14: an entry's page, start and length took 12 bytes).
 */
export class BytePool {
  readonly #pages: Buffer[] = [Buffer.allocUnsafe(INITIAL_BYTES)];
  // Per page: the number of its first entry, and, for each page but the last, the bytes it used.
  readonly #firstEntries: number[] = [0];
  readonly #pageEnds: number[] = [];
  // Bytes used in the last page.
  #used = 0;
  // Per entry: where it starts in its page.
  readonly #starts = new PagedIndex();
  #count = 0;

  /** Bytes of the strings kept (their entries' index aside). */
  get heldBytes(): number {
    let bytes = this.#used;
    for (let page = 0; page < this.#pages.length - 1; page += 1) bytes += (this.#pages[page] as Buffer).length;
    return bytes;
  }

  /** Bytes of the entries' index (for tests that count what a fold keeps). */
  get indexBytes(): number {
    return this.#starts.heldBytes;
  }

  /** Keeps `text`; returns its entry number. */
  add(text: string): number {
    const bytes = Buffer.byteLength(text);
    const entry = this.#reserve(bytes);
    (this.#pages[this.#pages.length - 1] as Buffer).write(text, this.#starts.get(entry), bytes, 'utf8');
    return entry;
  }

  /** Keeps the first `length` bytes of `bytes` (UTF-8); returns their entry number. */
  addBytes(bytes: Uint8Array, length: number): number {
    const entry = this.#reserve(length);
    (this.#pages[this.#pages.length - 1] as Buffer).set(bytes.subarray(0, length), this.#starts.get(entry));
    return entry;
  }

  /** The order of an entry's bytes and the first `length` bytes of `bytes`: negative, 0 or positive. */
  compare(entry: number, bytes: Uint8Array, length: number): number {
    const page = this.#pageOf(entry);
    const at = this.#starts.get(entry);
    return (this.#pages[page] as Buffer).compare(bytes, 0, length, at, this.#end(entry, page));
  }

  /** The order of two entries' bytes, which is their strings' code-point order (UTF-8 keeps it). */
  compareEntries(a: number, b: number): number {
    const page = this.#pageOf(b);
    const at = this.#starts.get(b);
    const end = this.#end(b, page);
    return this.compare(a, (this.#pages[page] as Buffer).subarray(at, end), end - at);
  }

  /** An entry's length in bytes. */
  size(entry: number): number {
    return this.#end(entry, this.#pageOf(entry)) - this.#starts.get(entry);
  }

  /** A 32-bit hash (FNV-1a) of an entry's bytes, the same as {@link hashBytes} of them. */
  hash(entry: number): number {
    const page = this.#pageOf(entry);
    return hashBytes(this.#pages[page] as Buffer, this.#starts.get(entry), this.#end(entry, page));
  }

  /** The string of an entry `add` returned, as a new string. */
  get(entry: number): string {
    const page = this.#pageOf(entry);
    return (this.#pages[page] as Buffer).toString('utf8', this.#starts.get(entry), this.#end(entry, page));
  }

  /** The page holding `entry`: the last page whose first entry is not after it (a page may hold none). */
  #pageOf(entry: number): number {
    const firsts = this.#firstEntries;
    let high = firsts.length - 1;
    if (entry >= (firsts[high] as number)) return high;
    // firsts[low] <= entry < firsts[high]
    let low = 0;
    while (high - low > 1) {
      const middle = (low + high) >>> 1;
      if ((firsts[middle] as number) <= entry) low = middle;
      else high = middle;
    }
    return low;
  }

  /** Where `entry`, in page `page`, ends: where the next entry of the page starts, or where the page's bytes end. */
  #end(entry: number, page: number): number {
    const next = entry + 1;
    if (page === this.#pages.length - 1) return next < this.#count ? this.#starts.get(next) : this.#used;
    return next < (this.#firstEntries[page + 1] as number) ? this.#starts.get(next) : (this.#pageEnds[page] as number);
  }

  /** Makes room for an entry of `bytes` bytes at the end of the last page (or a new one); returns its number. */
  #reserve(bytes: number): number {
    const page = this.#pages.length - 1;
    const buffer = this.#pages[page] as Buffer;
    if (this.#used + bytes > buffer.length) {
      if (page === 0 && buffer.length < PAGE_BYTES && this.#used + bytes <= PAGE_BYTES) {
        let size = buffer.length * 2;
        while (size < this.#used + bytes) size *= 2;
        const grown = Buffer.allocUnsafe(Math.min(PAGE_BYTES, size));
        buffer.copy(grown, 0, 0, this.#used);
        this.#pages[0] = grown;
      } else {
        this.#pages.push(Buffer.allocUnsafe(Math.max(PAGE_BYTES, bytes)));
        this.#pageEnds.push(this.#used);
        this.#firstEntries.push(this.#count);
        this.#used = 0;
      }
    }
    const entry = this.#count;
    this.#count += 1;
    this.#starts.set(entry, this.#used);
    this.#used += bytes;
    return entry;
  }
}

/** FNV-1a of `bytes[from..to)`: a 32-bit hash for tables keyed by pooled bytes. */
export function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i += 1) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  return hash >>> 0;
}
