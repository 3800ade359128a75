import { MAX_EXCERPT_BYTES } from '@turnjournal/schema';
import type { JournalRecord } from '../framing/read-journal.js';
import { BytePool } from './byte-pool.js';
import { FileNumbers } from './file-numbers.js';
import { LocationTable } from './location-table.js';
import type { RecordLocation, RecordSummary, RepresentativeRecord } from './representative.js';

// What a slot holds, in two views of one buffer: doubles for the offset, which may pass 2^32, and for `created_at`,
// which may be any JSON number (NaN, which JSON cannot hold, when the record has none):
const OFFSET = 0;
const CREATED_AT = 1;
const DOUBLES = 2;
// and unsigned 32-bit integers for the rest. Strings are indexes into the string list, plus one: 0 when absent.
const LINE = 0;
const LENGTH = 1;
const FILE = 2;
const STREAM_ID = 3;
// FLAGS: the bits below, and in bits 8-15 the excerpt's length in bytes (at most MAX_EXCERPT_BYTES).
const FLAGS = 4;
// Two members whose meaning the flags give: what most records have, in a few bytes. A record of a turn event holds
// at most two of an excerpt's position (`submitted`), an `assistant_message_index` (`assistant_started`,
// `completed`), a `reason` (`interrupted`) and an attachment count (`submitted`); anything that does not fit (a third
// one, a number that is not a small integer, a line past 2^32 - 1) goes to the slot's entry in the rare map.
const FIRST = 5;
// Columns FIRST and FIRST + 1 (SECOND): a member goes to the first of them still free.
const SLOT_MEMBERS = 2;
const INTEGERS = FIRST + SLOT_MEMBERS;
// FLAGS bits: which optional members the record has, and where each is.
const HAS_MESSAGE_INDEX = 1;
const HAS_ATTACHMENTS = 2;
const HAS_EXCERPT = 4;
const TRUNCATED = 8;
const HAS_REASON = 16;
// Set when the member is in FIRST or SECOND (excerpt: always FIRST); clear when it is in the rare map.
const MESSAGE_INDEX_IN_SLOT = 32;
const ATTACHMENTS_IN_SLOT = 64;
const REASON_IN_SLOT = 128;
const EXCERPT_LENGTH_SHIFT = 8;
/** The largest number FIRST or SECOND hold as it is. */
const MAX_IN_SLOT = 0xffff_fffe;
/** Distinct `reason`s kept once each (see RepresentativeTable.#reasons). */
const REASONS_KEPT = 64;
/** Slots a new table has room for: a store holds many small sessions, and the table grows as it fills. */
const INITIAL_SLOTS = 4;
// Slots live in pages of PAGE_SLOTS (176 KiB); the first page grows by doubling until it is whole. Pages are never
// copied: one growing table would reserve up to twice what the slots need and, while it grows, hold the old table and
// the new one together (three times), which for a million-turn journal was most of the process's memory.
const PAGE_BITS = 12;
const PAGE_SLOTS = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_SLOTS - 1;
// Excerpts live in pages of TEXT_PAGE_BYTES the same way; an excerpt never straddles two pages.
const TEXT_PAGE_BYTES = 256 * 1024;

/** What a slot could not hold in its columns (see FIRST and SECOND). */
interface RareMembers {
  line?: number;
  excerptAt?: number;
  assistantMessageIndex?: number;
  attachments?: number;
  reason?: number;
}

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
  // `stream_id`s and `reason`s, as bytes (see BytePool).
  readonly #strings = new BytePool();
  readonly #files = new FileNumbers();
  // A turn's records come one after the other with the same stream_id: the last one stored is reused without a copy.
  #lastStreamId: string | undefined;
  #lastStreamIdNumber = 0;
  // The few distinct reasons a store uses, each kept once; past REASONS_KEPT distinct ones, each record's is kept.
  readonly #reasons = new Map<string, number>();
  // The table of a fold that keeps no turns: locations only, in a table of their own, and none of the above.
  readonly #locations: LocationTable | undefined;
  // What slots could not hold in their columns, by slot; made on first use (most stores need none).
  #rare: Map<number, RareMembers> | undefined;

  /**
   * @param summaries false for a table that keeps each representative's location only, for a fold whose turns nobody
   * reads (see TurnFoldOptions.keepTurns): duplicates still find the representative's bytes on disk, and `get`
   * throws.
   */
  constructor(summaries = true) {
    if (summaries) this.#addPage(INITIAL_SLOTS);
    else this.#locations = new LocationTable();
  }

  /** Bytes the table's columns, excerpts and strings hold (for tests that count what a fold keeps). */
  get heldBytes(): number {
    if (this.#locations !== undefined) return this.#locations.heldBytes;
    let bytes = this.#strings.heldBytes;
    for (const column of this.#doubles) bytes += column.buffer.byteLength;
    // The excerpts written, not the pages reserved for them: a table that writes none holds none.
    return bytes + (this.#text.length - 1) * TEXT_PAGE_BYTES + this.#textLength;
  }

  /** False when the table keeps locations only. */
  get summaries(): boolean {
    return this.#locations === undefined;
  }

  /**
   * Stores the representative of a record read from `file` at `slot`, replacing what the slot held.
   */
  set(slot: number, record: JournalRecord, file: string): void {
    if (this.#locations !== undefined) {
      this.#locations.set(slot, record, file);
      return;
    }
    if (slot >= this.#capacity) this.#grow(slot + 1);
    const page = slot >>> PAGE_BITS;
    const d = (slot & PAGE_MASK) * DOUBLES;
    const i = (slot & PAGE_MASK) * INTEGERS;
    const doubles = this.#doubles[page] as Float64Array;
    const integers = this.#integers[page] as Uint32Array;
    const v = record.value;
    this.#rare?.delete(slot);
    let flags = 0;
    // FIRST, then SECOND: the next column free for a member, SLOT_MEMBERS when both are taken.
    let free = 0;
    doubles[d + OFFSET] = record.bytesOffset;
    if (record.line <= MAX_IN_SLOT) integers[i + LINE] = record.line;
    else this.#aside(slot).line = record.line;
    integers[i + LENGTH] = record.bytes.length;
    integers[i + FILE] = this.#files.numberOf(file);
    doubles[d + CREATED_AT] = typeof v.created_at === 'number' ? v.created_at : Number.NaN;
    integers[i + STREAM_ID] = typeof v.stream_id === 'string' ? this.#streamIdNumber(v.stream_id) : 0;
    if (typeof v.content === 'string') {
      const bytes = this.#writeExcerpt(v.content);
      flags |= HAS_EXCERPT | (bytes << EXCERPT_LENGTH_SHIFT);
      if (this.#excerptAt <= MAX_IN_SLOT) {
        integers[i + FIRST] = this.#excerptAt;
        free = 1;
      } else this.#aside(slot).excerptAt = this.#excerptAt;
      // Cut when the content has more bytes than were written: surely when it has more UTF-16 units than the limit (a
      // unit takes at least one byte), which spares counting the bytes of a long message.
      if (v.content.length > MAX_EXCERPT_BYTES || Buffer.byteLength(v.content) > bytes) flags |= TRUNCATED;
    }
    const index = v.assistant_message_index;
    if (typeof index === 'number') {
      flags |= HAS_MESSAGE_INDEX;
      if (free < SLOT_MEMBERS && Number.isInteger(index) && index >= 0 && index <= MAX_IN_SLOT) {
        integers[i + FIRST + free] = index;
        free += 1;
        flags |= MESSAGE_INDEX_IN_SLOT;
      } else this.#aside(slot).assistantMessageIndex = index;
    }
    if (typeof v.reason === 'string') {
      flags |= HAS_REASON;
      const reason = this.#reasonNumber(v.reason);
      if (free < SLOT_MEMBERS) {
        integers[i + FIRST + free] = reason;
        free += 1;
        flags |= REASON_IN_SLOT;
      } else this.#aside(slot).reason = reason;
    }
    if (Array.isArray(v.attachments)) {
      flags |= HAS_ATTACHMENTS;
      if (free < SLOT_MEMBERS) {
        integers[i + FIRST + free] = v.attachments.length;
        free += 1;
        flags |= ATTACHMENTS_IN_SLOT;
      } else this.#aside(slot).attachments = v.attachments.length;
    }
    integers[i + FLAGS] = flags;
  }

  /** The slot's entry in the rare map, made on first use. */
  #aside(slot: number): RareMembers {
    this.#rare ??= new Map();
    let rare = this.#rare.get(slot);
    if (rare === undefined) {
      rare = {};
      this.#rare.set(slot, rare);
    }
    return rare;
  }

  /** Where the record at `slot` is. The slot must have been set. */
  location(slot: number): RecordLocation {
    if (this.#locations !== undefined) return this.#locations.location(slot);
    const page = slot >>> PAGE_BITS;
    const i = (slot & PAGE_MASK) * INTEGERS;
    const integers = this.#integers[page] as Uint32Array;
    return {
      file: this.#files.fileOf(integers[i + FILE] as number),
      line: this.#rare?.get(slot)?.line ?? (integers[i + LINE] as number),
      offset: (this.#doubles[page] as Float64Array)[(slot & PAGE_MASK) * DOUBLES + OFFSET] as number,
      length: integers[i + LENGTH] as number,
    };
  }

  /** The representative at `slot`, as new objects. The slot must have been set. */
  get(slot: number): RepresentativeRecord {
    if (!this.summaries) throw new Error('RepresentativeTable.get(): this table keeps locations only');
    const page = slot >>> PAGE_BITS;
    const d = (slot & PAGE_MASK) * DOUBLES;
    const i = (slot & PAGE_MASK) * INTEGERS;
    const doubles = this.#doubles[page] as Float64Array;
    const integers = this.#integers[page] as Uint32Array;
    const flags = integers[i + FLAGS] as number;
    const rare = this.#rare?.get(slot);
    // The members kept in FIRST and SECOND, in the order `set` put them there.
    let next = i + FIRST;
    let excerptAt: number | undefined;
    if ((flags & HAS_EXCERPT) !== 0) excerptAt = rare?.excerptAt ?? (integers[next++] as number);
    const index = (flags & MESSAGE_INDEX_IN_SLOT) !== 0 ? (integers[next++] as number) : rare?.assistantMessageIndex;
    const reason = (flags & REASON_IN_SLOT) !== 0 ? (integers[next++] as number) : rare?.reason;
    const attachments = (flags & ATTACHMENTS_IN_SLOT) !== 0 ? (integers[next++] as number) : rare?.attachments;
    // Members in the order of RecordSummary, each only when the record had it.
    const summary: { -readonly [K in keyof RecordSummary]: RecordSummary[K] } = {};
    const createdAt = doubles[d + CREATED_AT] as number;
    if (!Number.isNaN(createdAt)) summary.createdAt = createdAt;
    const streamId = this.#string(integers[i + STREAM_ID] as number);
    if (streamId !== undefined) summary.streamId = streamId;
    if ((flags & HAS_REASON) !== 0) summary.reason = this.#string(reason as number);
    if ((flags & HAS_MESSAGE_INDEX) !== 0) summary.assistantMessageIndex = index;
    if (excerptAt !== undefined) {
      const at = excerptAt % TEXT_PAGE_BYTES;
      const text = this.#text[(excerptAt - at) / TEXT_PAGE_BYTES] as Buffer;
      summary.contentExcerpt = text.toString('utf8', at, at + ((flags >>> EXCERPT_LENGTH_SHIFT) & 0xff));
      summary.contentTruncated = (flags & TRUNCATED) !== 0;
    }
    if ((flags & HAS_ATTACHMENTS) !== 0) summary.attachments = attachments;
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

  #string(number: number): string | undefined {
    return number === 0 ? undefined : this.#strings.get(number - 1);
  }

  #streamIdNumber(streamId: string): number {
    if (this.#lastStreamId !== streamId) {
      this.#lastStreamIdNumber = this.#strings.add(streamId) + 1;
      // Not the parsed string itself: it may share memory with the whole line (see ownString).
      this.#lastStreamId = this.#strings.get(this.#lastStreamIdNumber - 1);
    }
    return this.#lastStreamIdNumber;
  }

  #reasonNumber(reason: string): number {
    let number = this.#reasons.get(reason);
    if (number === undefined) {
      number = this.#strings.add(reason) + 1;
      if (this.#reasons.size < REASONS_KEPT) this.#reasons.set(this.#strings.get(number - 1), number);
    }
    return number;
  }

  /** Makes room for `slots` slots: the first page doubles until it is whole, then whole pages are added. */
  #grow(slots: number): void {
    if (this.#capacity < PAGE_SLOTS) {
      const first = Math.min(PAGE_SLOTS, Math.max(slots, this.#capacity * 2));
      const [doubles, integers] = this.#columns(first);
      doubles.set(this.#doubles[0] as Float64Array);
      integers.set(this.#integers[0] as Uint32Array);
      this.#doubles[0] = doubles;
      this.#integers[0] = integers;
      this.#capacity = first;
    }
    while (this.#capacity < slots) this.#addPage(PAGE_SLOTS);
  }

  #addPage(slots: number): void {
    const [doubles, integers] = this.#columns(slots);
    this.#doubles.push(doubles);
    this.#integers.push(integers);
    this.#capacity += slots;
  }

  /** The two columns of `slots` slots, in one buffer: one allocation instead of two, which small sessions notice. */
  #columns(slots: number): [Float64Array, Uint32Array] {
    const doubles = slots * DOUBLES;
    const buffer = new ArrayBuffer(doubles * 8 + slots * INTEGERS * 4);
    return [new Float64Array(buffer, 0, doubles), new Uint32Array(buffer, doubles * 8, slots * INTEGERS)];
  }
}
