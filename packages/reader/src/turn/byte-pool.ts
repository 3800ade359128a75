import { PagedIndex } from './paged-index.js';

// Strings are written one after the other in pages of PAGE_BYTES; one longer than a page gets a page of its own. The
// first page grows by doubling until it is whole, so a small session holds a few hundred bytes.
const PAGE_BYTES = 256 * 1024;
const INITIAL_BYTES = 256;
// An entry's page, where it starts there and its length in bytes, at 3 * entry in the entry index.
const STRIDE = 3;

/**
 * Strings kept as UTF-8 bytes in a few large buffers instead of one heap string each: the `stream_id`s and `reason`s
 * of a fold's representatives, which a journal of a million turns holds a million of, each a string for the garbage
 * collector to copy and mark. A string comes back as `ownString` would have kept it: a lone surrogate is written, and
 * read back, as U+FFFD. Internal to the reader.
 */
export class BytePool {
  readonly #pages: Buffer[] = [Buffer.allocUnsafe(INITIAL_BYTES)];
  // Bytes used in the last page.
  #used = 0;
  readonly #entries = new PagedIndex();
  #count = 0;

  /** Keeps `text`; returns its entry number. */
  add(text: string): number {
    const bytes = Buffer.byteLength(text);
    let page = this.#pages.length - 1;
    let buffer = this.#pages[page] as Buffer;
    if (this.#used + bytes > buffer.length) {
      if (page === 0 && buffer.length < PAGE_BYTES && this.#used + bytes <= PAGE_BYTES) {
        let size = buffer.length * 2;
        while (size < this.#used + bytes) size *= 2;
        const grown = Buffer.allocUnsafe(Math.min(PAGE_BYTES, size));
        buffer.copy(grown, 0, 0, this.#used);
        this.#pages[0] = grown;
        buffer = grown;
      } else {
        buffer = Buffer.allocUnsafe(Math.max(PAGE_BYTES, bytes));
        this.#pages.push(buffer);
        page += 1;
        this.#used = 0;
      }
    }
    const at = this.#used;
    buffer.write(text, at, bytes, 'utf8');
    this.#used = at + bytes;
    const entry = this.#count;
    this.#count += 1;
    this.#entries.set(entry * STRIDE, page);
    this.#entries.set(entry * STRIDE + 1, at);
    this.#entries.set(entry * STRIDE + 2, bytes);
    return entry;
  }

  /** The string of an entry `add` returned, as a new string. */
  get(entry: number): string {
    const at = this.#entries.get(entry * STRIDE + 1);
    const buffer = this.#pages[this.#entries.get(entry * STRIDE)] as Buffer;
    return buffer.toString('utf8', at, at + this.#entries.get(entry * STRIDE + 2));
  }
}
