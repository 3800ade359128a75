import type { JournalRecord } from '../framing/read-journal.js';
import { FileNumbers } from './file-numbers.js';
import type { RecordLocation } from './representative.js';

// Slots live in pages of PAGE_SLOTS; the first page grows by doubling until it is whole, so a small session holds a
// few dozen bytes. A page's narrow columns are one buffer of 8 bytes a slot, 256 KiB for a whole page: at that size
// the C allocator maps each page on its own instead of carving it from its heap between the reader's 128 KiB read
// buffers, whose holes the heap could then not give back (issue 14: see PagedIndex, in paged-index.ts).
const PAGE_BITS = 15;
const PAGE_SLOTS = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_SLOTS - 1;
const INITIAL_SLOTS = 4;
// Per slot: the offset as a signed 32-bit distance from its page's first offset, the length in 16 bits, and the line
// as a signed 16-bit distance from the first line of its block of LINE_BLOCK slots (a block of one file spans a few
// thousand lines; a page spans too many for 16 bits). A page whose offsets or lines do not fit (a record 2 GiB away
// from the page's first, in another file or a replacement; sparse lines) gets a column of doubles for them instead.
const NARROW_BYTES = 4 + 2 + 2;
const LINE_BLOCK_BITS = 12;
const TWO_31 = 2 ** 31;
const TWO_15 = 2 ** 15;
// The length column's entry for a record of this many bytes or more, whose length is in the long-length map.
const LONG_LENGTH = 0xffff;
// A page's `file` before any slot of it is set.
const NO_FILE = -1;

/** One page of slots (see PAGE_SLOTS). */
class Page {
  readonly size: number;
  readonly narrow: ArrayBuffer;
  offsetBase = Number.NaN;
  offsets: Int32Array | Float64Array;
  wideOffsets = false;
  readonly lineBases: Float64Array;
  lines: Int16Array | Float64Array;
  wideLines = false;
  readonly lengths: Uint16Array;
  // The file of every slot set in the page, until a slot of another file makes `files`.
  file = NO_FILE;
  files: Uint32Array | undefined;

  /** A page of `size` slots, holding what `from` (a smaller first page) held. */
  constructor(size: number, from?: Page) {
    this.size = size;
    this.narrow = new ArrayBuffer(size * NARROW_BYTES);
    this.offsets = new Int32Array(this.narrow, 0, size);
    this.lengths = new Uint16Array(this.narrow, size * 4, size);
    this.lines = new Int16Array(this.narrow, size * 6, size);
    this.lineBases = new Float64Array(Math.ceil(size / (1 << LINE_BLOCK_BITS))).fill(Number.NaN);
    if (from === undefined) return;
    this.offsetBase = from.offsetBase;
    if (from.wideOffsets) this.widenOffsets();
    this.offsets.set(from.offsets);
    if (from.wideLines) this.widenLines();
    this.lines.set(from.lines);
    this.lineBases.set(from.lineBases);
    this.lengths.set(from.lengths);
    this.file = from.file;
    if (from.files !== undefined) {
      this.files = new Uint32Array(size);
      this.files.set(from.files);
    }
  }

  /** The held bytes: the narrow buffer, the block bases, and the wide columns made. */
  get heldBytes(): number {
    let bytes = this.narrow.byteLength + this.lineBases.byteLength + (this.files?.byteLength ?? 0);
    if (this.wideOffsets) bytes += this.offsets.byteLength;
    if (this.wideLines) bytes += this.lines.byteLength;
    return bytes;
  }

  widenOffsets(): void {
    const wide = new Float64Array(this.size);
    for (let at = 0; at < this.size; at += 1) wide[at] = this.offsetBase + (this.offsets[at] as number);
    this.offsets = wide;
    this.wideOffsets = true;
  }

  widenLines(): void {
    const wide = new Float64Array(this.size);
    for (let at = 0; at < this.size; at += 1)
      wide[at] = (this.lineBases[at >>> LINE_BLOCK_BITS] as number) + (this.lines[at] as number);
    this.lines = wide;
    this.wideLines = true;
  }
}

/**
 * Where the representative records of a fold that keeps no turns are (see TurnFoldOptions.keepTurns): per slot a file,
 * a line, an offset and a length, in 8 bytes where four 32-bit columns took 16 (issue 14), and the exact values
 * whatever they are. The files of a page are one number until a page holds slots of two files. Internal to the
 * reader.
 */
export class LocationTable {
  // Page p holds slots p * PAGE_SLOTS and up; a page is made when a slot of it is first set.
  readonly #pages: (Page | undefined)[] = [];
  readonly #files = new FileNumbers();
  // The lengths of the records of LONG_LENGTH bytes or more, by slot; made on first use.
  #longLengths: Map<number, number> | undefined;

  /** Bytes the table's columns hold (for tests that count what a fold keeps). */
  get heldBytes(): number {
    let bytes = 0;
    for (const page of this.#pages) bytes += page?.heldBytes ?? 0;
    return bytes;
  }

  /** Stores where the record read from `file` is, at `slot`, replacing what the slot held. */
  set(slot: number, record: JournalRecord, file: string): void {
    const page = this.#pageFor(slot);
    const at = slot & PAGE_MASK;
    const number = this.#files.numberOf(file);
    if (page.files !== undefined) page.files[at] = number;
    else if (page.file === NO_FILE) page.file = number;
    else if (page.file !== number) {
      page.files = new Uint32Array(page.size).fill(page.file);
      page.files[at] = number;
    }
    const offset = record.bytesOffset;
    if (Number.isNaN(page.offsetBase)) page.offsetBase = offset;
    if (!page.wideOffsets && Math.abs(offset - page.offsetBase) >= TWO_31) page.widenOffsets();
    page.offsets[at] = page.wideOffsets ? offset : offset - page.offsetBase;
    const line = record.line;
    const block = at >>> LINE_BLOCK_BITS;
    if (Number.isNaN(page.lineBases[block] as number)) page.lineBases[block] = line;
    const lineBase = page.lineBases[block] as number;
    if (!page.wideLines && Math.abs(line - lineBase) >= TWO_15) page.widenLines();
    page.lines[at] = page.wideLines ? line : line - lineBase;
    const length = record.bytes.length;
    if (length < LONG_LENGTH) {
      page.lengths[at] = length;
      this.#longLengths?.delete(slot);
    } else {
      page.lengths[at] = LONG_LENGTH;
      this.#longLengths ??= new Map();
      this.#longLengths.set(slot, length);
    }
  }

  /** Where the record at `slot` is. The slot must have been set. */
  location(slot: number): RecordLocation {
    const page = this.#pages[slot >>> PAGE_BITS] as Page;
    const at = slot & PAGE_MASK;
    const offset = page.offsets[at] as number;
    const line = page.lines[at] as number;
    const length = page.lengths[at] as number;
    return {
      file: this.#files.fileOf(page.files?.[at] ?? page.file),
      line: page.wideLines ? line : (page.lineBases[at >>> LINE_BLOCK_BITS] as number) + line,
      offset: page.wideOffsets ? offset : page.offsetBase + offset,
      length: length === LONG_LENGTH ? (this.#longLengths?.get(slot) as number) : length,
    };
  }

  /** The page of `slot`, made or grown as needed: the first page doubles until it is whole. */
  #pageFor(slot: number): Page {
    const number = slot >>> PAGE_BITS;
    let page = this.#pages[number];
    const at = slot & PAGE_MASK;
    if (page === undefined) {
      page = new Page(number === 0 ? Math.max(INITIAL_SLOTS, at + 1) : PAGE_SLOTS);
      this.#pages[number] = page;
    } else if (at >= page.size) {
      page = new Page(Math.min(PAGE_SLOTS, Math.max(at + 1, page.size * 2)), page);
      this.#pages[number] = page;
    }
    return page;
  }
}
