// Entries live in pages of PAGE_ENTRIES (64 KiB); the first page grows by doubling until it is whole, so a small
// session holds a few dozen bytes and a large one never copies, nor holds a table twice its need (see
// RepresentativeTable, which pages its slots the same way).
const PAGE_BITS = 14;
const PAGE_ENTRIES = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_ENTRIES - 1;
const INITIAL_ENTRIES = 8;

/** A growable array of unsigned 32-bit integers, 0 where never set. Internal to the reader. */
export class PagedIndex {
  readonly #pages: Uint32Array[] = [new Uint32Array(INITIAL_ENTRIES)];
  #capacity = INITIAL_ENTRIES;

  /** The entry at `at`, 0 when it was never set. */
  get(at: number): number {
    if (at >= this.#capacity) return 0;
    return (this.#pages[at >>> PAGE_BITS] as Uint32Array)[at & PAGE_MASK] as number;
  }

  /** Sets the entry at `at`, growing the array as needed. */
  set(at: number, value: number): void {
    if (at >= this.#capacity) this.#grow(at + 1);
    (this.#pages[at >>> PAGE_BITS] as Uint32Array)[at & PAGE_MASK] = value;
  }

  #grow(entries: number): void {
    if (this.#capacity < PAGE_ENTRIES) {
      const first = new Uint32Array(Math.min(PAGE_ENTRIES, Math.max(entries, this.#capacity * 2)));
      first.set(this.#pages[0] as Uint32Array);
      this.#pages[0] = first;
      this.#capacity = first.length;
    }
    while (this.#capacity < entries) {
      this.#pages.push(new Uint32Array(PAGE_ENTRIES));
      this.#capacity += PAGE_ENTRIES;
    }
  }
}
