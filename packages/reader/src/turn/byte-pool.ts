import { PagedIndex } from './paged-index.js';

// Strings are written one after the other in pages of PAGE_BYTES; one longer than a page gets a page of its own. The
// first page grows by doubling until it is whole, so a small session holds a few hundred bytes.
const PAGE_BYTES = 256 * 1024;
const INITIAL_BYTES = 256;
// An entry's page, where it starts there and its length in bytes, at 3 * entry in the entry index.
const STRIDE = 3;

/**
 * Strings kept as UTF-8 bytes in a few large buffers instead of one heap string each: the turn ids of a fold's arena,
 * the `stream_id`s and `reason`s of its representatives, which a journal of a million turns holds a million of, each a string for the garbage
 * collector to copy and mark. A string comes back as `ownString` would have kept it: a lone surrogate is written, and
 * read back, as U+FFFD. Internal to the reader.
 */
export class BytePool {
  readonly #pages: Buffer[] = [Buffer.allocUnsafe(INITIAL_BYTES)];
  // Bytes used in the last page.
  #used = 0;
  readonly #entries = new PagedIndex();
  #count = 0;

  /** Bytes of the strings kept (their entries' index aside). */
  get heldBytes(): number {
    let bytes = this.#used;
    for (let page = 0; page < this.#pages.length - 1; page += 1) bytes += (this.#pages[page] as Buffer).length;
    return bytes;
  }

  /** Keeps `text`; returns its entry number. */
  add(text: string): number {
    const bytes = Buffer.byteLength(text);
    const entry = this.#reserve(bytes);
    this.#buffer(entry).write(text, this.#entries.get(entry * STRIDE + 1), bytes, 'utf8');
    return entry;
  }

  /** Keeps the first `length` bytes of `bytes` (UTF-8); returns their entry number. */
  addBytes(bytes: Uint8Array, length: number): number {
    const entry = this.#reserve(length);
    this.#buffer(entry).set(bytes.subarray(0, length), this.#entries.get(entry * STRIDE + 1));
    return entry;
  }

  /** The order of an entry's bytes and the first `length` bytes of `bytes`: negative, 0 or positive. */
  compare(entry: number, bytes: Uint8Array, length: number): number {
    const at = this.#entries.get(entry * STRIDE + 1);
    return this.#buffer(entry).compare(bytes, 0, length, at, at + this.#entries.get(entry * STRIDE + 2));
  }

  /** The order of two entries' bytes, which is their strings' code-point order (UTF-8 keeps it). */
  compareEntries(a: number, b: number): number {
    const at = this.#entries.get(b * STRIDE + 1);
    return this.compare(a, this.#buffer(b).subarray(at, at + this.#entries.get(b * STRIDE + 2)), this.size(b));
  }

  /** An entry's length in bytes. */
  size(entry: number): number {
    return this.#entries.get(entry * STRIDE + 2);
  }

  /** A 32-bit hash (FNV-1a) of an entry's bytes, the same as {@link hashBytes} of them. */
  hash(entry: number): number {
    const at = this.#entries.get(entry * STRIDE + 1);
    return hashBytes(this.#buffer(entry), at, at + this.size(entry));
  }

  #buffer(entry: number): Buffer {
    return this.#pages[this.#entries.get(entry * STRIDE)] as Buffer;
  }

  /** Makes room for an entry of `bytes` bytes at the end of the last page (or a new one); returns its number. */
  #reserve(bytes: number): number {
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
    return this.#buffer(entry).toString('utf8', at, at + this.size(entry));
  }
}

/** FNV-1a of `bytes[from..to)`: a 32-bit hash for tables keyed by pooled bytes. */
export function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let hash = 0x811c9dc5;
  for (let i = from; i < to; i += 1) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193);
  return hash >>> 0;
}
