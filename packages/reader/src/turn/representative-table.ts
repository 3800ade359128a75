import { MAX_EXCERPT_BYTES } from '@turnjournal/schema';
import type { JournalRecord } from '../framing/read-journal.js';
import { ownString } from './own-string.js';
import type { RecordLocation, RecordSummary, RepresentativeRecord } from './representative.js';

// What a slot holds, in two views of one buffer. Doubles for what may pass 2^32 or be any JSON number (the excerpt is
// at EXCERPT_AT in the excerpt buffer):
const LINE = 0;
const OFFSET = 1;
const LENGTH = 2;
const CREATED_AT = 3;
const MESSAGE_INDEX = 4;
const EXCERPT_AT = 5;
const DOUBLES = 6;
// and unsigned 32-bit integers for the rest: indexes and counts of things held in arrays (an array has fewer than 2^32
// elements), flags, and the excerpt's length. Strings are indexes into the string list, plus one: 0 when absent.
const FILE = 0;
const ATTACHMENTS = 1;
const FLAGS = 2;
const STREAM_ID = 3;
const REASON = 4;
const EXCERPT_BYTES = 5;
const INTEGERS = 6;
const SLOT_BYTES = DOUBLES * 8 + INTEGERS * 4;
// FLAGS bits: which optional members the record has, and whether its excerpt was cut.
const HAS_CREATED_AT = 1;
const HAS_MESSAGE_INDEX = 2;
const HAS_ATTACHMENTS = 4;
const HAS_EXCERPT = 8;
const TRUNCATED = 16;
/** Slots a new table has room for: a store holds many small sessions, and the table grows as it fills. */
const INITIAL_SLOTS = 4;
// Slots live in pages of PAGE_SLOTS (288 KiB); the first page grows by doubling until it is whole. Pages are never
// copied: one growing table would reserve up to twice what the slots need and, while it grows, hold the old table and
// the new one together (three times), which for a million-turn journal was most of the process's memory.
const PAGE_BITS = 12;
const PAGE_SLOTS = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_SLOTS - 1;
// Excerpts live in pages of TEXT_PAGE_BYTES the same way; an excerpt never straddles two pages.
const TEXT_PAGE_BYTES = 256 * 1024;

/**
 * The representative records of a fold, column-wise by slot: numbers in typed arrays, content excerpts as UTF-8 bytes
 * in one buffer, and the few other strings a summary holds in one list. A fold keeps a representative for nearly every
 * record it reads; as objects (and as strings, for the excerpts) they would be most of what the garbage collector
 * copies and marks, so they are built only when asked for, by {@link RepresentativeTable.get}. Internal to the reader.
 */
export class RepresentativeTable {
  // Page p holds slots p * PAGE_SLOTS and up; #capacity is how many slots the pages hold.
  readonly #doubles: Float64Array[] = [];
  readonly #integers: Uint32Array[] = [];
  #capacity = 0;
  // Excerpts, one after the other, in pages; a replaced representative leaves its excerpt behind, which only
  // duplicates do. An excerpt's position is its page's number times TEXT_PAGE_BYTES plus where it starts there.
  readonly #text: Buffer[] = [Buffer.allocUnsafe(4 * MAX_EXCERPT_BYTES)];
  #textLength = 0;
  // Where the excerpt #writeExcerpt wrote last starts.
  #excerptAt = 0;
  readonly #strings: string[] = [];
  readonly #files: string[] = [];
  readonly #fileNumbers = new Map<string, number>();
  // Records come file after file, and a turn's records one after the other with the same stream_id: the last file and
  // stream_id stored are reused without a search or a copy.
  #fileIndex = -1;
  #streamIdIndex = -1;

  constructor() {
    this.#addPage(INITIAL_SLOTS);
  }

  /**
   * Stores the representative of a record read from `file` at `slot`, replacing what the slot held.
   * @param sharedStreamId an owned string equal to the record's `stream_id`, to keep instead of a new copy.
   */
  set(slot: number, record: JournalRecord, file: string, sharedStreamId?: string): void {
    if (slot >= this.#capacity) this.#grow(slot + 1);
    const page = slot >>> PAGE_BITS;
    const d = (slot & PAGE_MASK) * DOUBLES;
    const i = (slot & PAGE_MASK) * INTEGERS;
    const doubles = this.#doubles[page] as Float64Array;
    const integers = this.#integers[page] as Uint32Array;
    const v = record.value;
    let flags = 0;
    doubles[d + LINE] = record.line;
    doubles[d + OFFSET] = record.bytesOffset;
    doubles[d + LENGTH] = record.bytes.length;
    integers[i + FILE] = this.#fileNumber(file);
    if (typeof v.created_at === 'number') {
      doubles[d + CREATED_AT] = v.created_at;
      flags |= HAS_CREATED_AT;
    }
    if (typeof v.assistant_message_index === 'number') {
      doubles[d + MESSAGE_INDEX] = v.assistant_message_index;
      flags |= HAS_MESSAGE_INDEX;
    }
    if (Array.isArray(v.attachments)) {
      integers[i + ATTACHMENTS] = v.attachments.length;
      flags |= HAS_ATTACHMENTS;
    }
    integers[i + STREAM_ID] = typeof v.stream_id === 'string' ? this.#streamIdNumber(v.stream_id, sharedStreamId) : 0;
    integers[i + REASON] = typeof v.reason === 'string' ? this.#keep(v.reason) : 0;
    if (typeof v.content === 'string') {
      const bytes = this.#writeExcerpt(v.content);
      doubles[d + EXCERPT_AT] = this.#excerptAt;
      integers[i + EXCERPT_BYTES] = bytes;
      flags |= HAS_EXCERPT;
      // Cut when the content has more bytes than were written: surely when it has more UTF-16 units than the limit (a
      // unit takes at least one byte), which spares counting the bytes of a long message.
      if (v.content.length > MAX_EXCERPT_BYTES || Buffer.byteLength(v.content) > bytes) flags |= TRUNCATED;
    }
    integers[i + FLAGS] = flags;
  }

  /** Where the record at `slot` is. The slot must have been set. */
  location(slot: number): RecordLocation {
    const page = slot >>> PAGE_BITS;
    const d = (slot & PAGE_MASK) * DOUBLES;
    const i = (slot & PAGE_MASK) * INTEGERS;
    const doubles = this.#doubles[page] as Float64Array;
    return {
      file: this.#files[(this.#integers[page] as Uint32Array)[i + FILE] as number] as string,
      line: doubles[d + LINE] as number,
      offset: doubles[d + OFFSET] as number,
      length: doubles[d + LENGTH] as number,
    };
  }

  /** The representative at `slot`, as new objects. The slot must have been set. */
  get(slot: number): RepresentativeRecord {
    const page = slot >>> PAGE_BITS;
    const d = (slot & PAGE_MASK) * DOUBLES;
    const i = (slot & PAGE_MASK) * INTEGERS;
    const doubles = this.#doubles[page] as Float64Array;
    const integers = this.#integers[page] as Uint32Array;
    const flags = integers[i + FLAGS] as number;
    // Members in the order of RecordSummary, each only when the record had it.
    const summary: { -readonly [K in keyof RecordSummary]: RecordSummary[K] } = {};
    if ((flags & HAS_CREATED_AT) !== 0) summary.createdAt = doubles[d + CREATED_AT];
    const streamId = this.#string(integers[i + STREAM_ID] as number);
    if (streamId !== undefined) summary.streamId = streamId;
    const reason = this.#string(integers[i + REASON] as number);
    if (reason !== undefined) summary.reason = reason;
    if ((flags & HAS_MESSAGE_INDEX) !== 0) summary.assistantMessageIndex = doubles[d + MESSAGE_INDEX];
    if ((flags & HAS_EXCERPT) !== 0) {
      const position = doubles[d + EXCERPT_AT] as number;
      const at = position % TEXT_PAGE_BYTES;
      const text = this.#text[(position - at) / TEXT_PAGE_BYTES] as Buffer;
      summary.contentExcerpt = text.toString('utf8', at, at + (integers[i + EXCERPT_BYTES] as number));
      summary.contentTruncated = (flags & TRUNCATED) !== 0;
    }
    if ((flags & HAS_ATTACHMENTS) !== 0) summary.attachments = integers[i + ATTACHMENTS];
    return { location: this.location(slot), summary };
  }

  /**
   * Appends the excerpt of a content (spec TJ-AUDIT-012) to the excerpt pages; returns its length in bytes, and leaves
   * its position in `#excerptAt` rather than in a result object made for every record. It is what
   * `ownString(excerpt(content).text)` holds, as UTF-8: Buffer#write writes whole characters only, so it stops where
   * `excerpt` cuts, and writes a lone surrogate as the U+FFFD that `excerpt` counts it as and `ownString` makes of it.
   */
  #writeExcerpt(content: string): number {
    const pages = this.#text;
    let page = pages[pages.length - 1] as Buffer;
    let at = this.#textLength;
    if (at + MAX_EXCERPT_BYTES > page.length) {
      if (pages.length === 1 && page.length < TEXT_PAGE_BYTES) {
        // The first page grows (a small session needs a few hundred bytes) until it is whole.
        const grown = Buffer.allocUnsafe(Math.min(TEXT_PAGE_BYTES, page.length * 4));
        page.copy(grown, 0, 0, at);
        pages[0] = grown;
      } else {
        pages.push(Buffer.allocUnsafe(TEXT_PAGE_BYTES));
        at = 0;
      }
      page = pages[pages.length - 1] as Buffer;
    }
    const bytes = page.write(content, at, MAX_EXCERPT_BYTES, 'utf8');
    this.#textLength = at + bytes;
    this.#excerptAt = (pages.length - 1) * TEXT_PAGE_BYTES + at;
    return bytes;
  }

  // Strings are copied (see ownString): a kept substring would keep the whole line it was parsed from alive.
  #keep(text: string): number {
    return this.#strings.push(ownString(text));
  }

  #string(number: number): string | undefined {
    return number === 0 ? undefined : this.#strings[number - 1];
  }

  #streamIdNumber(streamId: string, shared: string | undefined): number {
    if (this.#strings[this.#streamIdIndex] !== streamId)
      this.#streamIdIndex = (shared === streamId ? this.#strings.push(shared) : this.#keep(streamId)) - 1;
    return this.#streamIdIndex + 1;
  }

  #fileNumber(file: string): number {
    if (this.#files[this.#fileIndex] !== file) {
      // A map, not a search of the list: a table shared by the folds of a store check holds every file of the store.
      let known = this.#fileNumbers.get(file);
      if (known === undefined) {
        known = this.#files.push(file) - 1;
        this.#fileNumbers.set(file, known);
      }
      this.#fileIndex = known;
    }
    return this.#fileIndex;
  }

  /** Makes room for `slots` slots: the first page doubles until it is whole, then whole pages are added. */
  #grow(slots: number): void {
    if (this.#capacity < PAGE_SLOTS) {
      const first = Math.min(PAGE_SLOTS, Math.max(slots, this.#capacity * 2));
      const [doubles, integers] = columns(first);
      doubles.set(this.#doubles[0] as Float64Array);
      integers.set(this.#integers[0] as Uint32Array);
      this.#doubles[0] = doubles;
      this.#integers[0] = integers;
      this.#capacity = first;
    }
    while (this.#capacity < slots) this.#addPage(PAGE_SLOTS);
  }

  #addPage(slots: number): void {
    const [doubles, integers] = columns(slots);
    this.#doubles.push(doubles);
    this.#integers.push(integers);
    this.#capacity += slots;
  }
}

/** The two columns of `slots` slots, in one buffer: one allocation instead of two, which small sessions notice. */
function columns(slots: number): [Float64Array, Uint32Array] {
  const buffer = new ArrayBuffer(slots * SLOT_BYTES);
  return [new Float64Array(buffer, 0, slots * DOUBLES), new Uint32Array(buffer, slots * DOUBLES * 8, slots * INTEGERS)];
}
