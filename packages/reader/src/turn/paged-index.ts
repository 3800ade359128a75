// Entries live in pages of PAGE_ENTRIES (256 KiB); the first page grows by doubling until it is whole, so a small
// session holds a few dozen bytes and a large one never copies, nor holds a table twice its need (see
// RepresentativeTable, which pages its slots the same way). A later page is made when an entry in it is first set, so
// an index set at a few scattered places holds the pages of those places only. At 256 KiB the C allocator maps each
// page on its own (lazily: a page's untouched part takes no memory) instead of carving it from its heap between the
// reader's 128 KiB read buffers, whose holes the heap could then not give back: pages of 64 KiB raised the peak RSS
// of a check of the 1 GiB journal (issue 14; bench/results/history.md, "Figures that were in code comments").
const PAGE_BITS = 16;
const PAGE_ENTRIES = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_ENTRIES - 1;
const INITIAL_ENTRIES = 8;

/** A growable array of unsigned 32-bit integers, 0 where never set. Internal to the reader. */
export class PagedIndex {
  readonly #pages: (Uint32Array | undefined)[] = [new Uint32Array(INITIAL_ENTRIES)];

  /** Bytes of the pages made (for tests that count what a fold keeps). */
  get heldBytes(): number {
    let bytes = 0;
    for (const page of this.#pages) bytes += page?.byteLength ?? 0;
    return bytes;
  }

  /** The entry at `at`, 0 when it was never set. */
  get(at: number): number {
    const page = this.#pages[at >>> PAGE_BITS];
    // Past the end of a typed array, an index reads undefined.
    return page?.[at & PAGE_MASK] ?? 0;
  }

  /** Sets the entry at `at`, growing the array as needed. */
  set(at: number, value: number): void {
    const number = at >>> PAGE_BITS;
    let page = this.#pages[number];
    if (page === undefined) {
      page = new Uint32Array(PAGE_ENTRIES);
      this.#pages[number] = page;
    } else if (number === 0 && at >= page.length) {
      const first = new Uint32Array(Math.min(PAGE_ENTRIES, Math.max(at + 1, page.length * 2)));
      first.set(page);
      this.#pages[0] = first;
      page = first;
    }
    page[at & PAGE_MASK] = value;
  }
}
