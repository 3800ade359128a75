import { MAX_EXCERPT_BYTES } from '@turnjournal/schema';
import type { JournalRecord } from '../framing/read-journal.js';
import { BytePool } from './byte-pool.js';
import { LocationTable } from './location-table.js';
import type { RecordLocation, RecordSummary, RepresentativeRecord } from './representative.js';

// Where a slot's record is (file, line, offset, length) is in a LocationTable, 8 bytes a slot; `created_at`, which may
// be any JSON number (NaN, which JSON cannot hold, when the record has none), in a column of doubles; and the rest in a
// column of four unsigned 32-bit integers a slot, made page by page only where a slot has one of them: a record with
// no stream_id, content, reason, message index or attachments (the 2 M orphan `worker_started` records of issue 11)
// costs 16 bytes, where one buffer of every member took 44. Strings are indexes into the string list, plus one: 0 when
// absent.
const STREAM_ID = 0;
// FLAGS: the bits below, and in bits 8-15 the excerpt's length in bytes (at most MAX_EXCERPT_BYTES).
const FLAGS = 1;
// Two members whose meaning the flags give: what most records have, in a few bytes. A record of a turn event holds
// at most two of an excerpt's position (`submitted`), an `assistant_message_index` (`assistant_started`,
// `completed`), a `reason` (`interrupted`) and an attachment count (`submitted`); anything that does not fit (a third
// one, a number that is not a small integer) goes to the slot's entry in the rare map.
const FIRST = 2;
// Columns FIRST and FIRST + 1 (SECOND): a member goes to the first of them still free.
const SLOT_MEMBERS = 2;
const EXTRAS = FIRST + SLOT_MEMBERS;
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
// Slots live in pages of PAGE_SLOTS (a column of created_at 256 KiB, of the optional members 512 KiB: at that size the
// C allocator maps each page on its own instead of carving it from its heap between the reader's 128 KiB read buffers,
// see LocationTable); the first page grows by doubling until it is whole. Pages are never copied: one
// growing table would reserve up to twice what the slots need and, while it grows, hold the old table and the new one
// together (three times), which for a million-turn journal was most of the process's memory.
const PAGE_BITS = 15;
const PAGE_SLOTS = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_SLOTS - 1;
// Excerpts live in pages of TEXT_PAGE_BYTES the same way; an excerpt never straddles two pages.
const TEXT_PAGE_BYTES = 256 * 1024;

/** What a slot could not hold in its columns (see FIRST and SECOND). */
interface RareMembers {
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
  // Where each slot's record is, in every table.
  readonly #locations = new LocationTable();
  // Page p holds slots p * PAGE_SLOTS and up; #capacity is how many slots the pages hold. A page of `#extras` is made
  // when a slot of it first has a member there (see EXTRAS), and is of the size of its `#createdAt` page.
  readonly #createdAt: Float64Array[] = [];
  readonly #extras: (Uint32Array | undefined)[] = [];
  #capacity = 0;
  // What `set` puts in FIRST and SECOND, gathered before it knows whether the slot's page needs its extras column.
  readonly #members = new Uint32Array(SLOT_MEMBERS);
  // Excerpts, one after the other, in pages; a replaced representative leaves its excerpt behind, which only
  // duplicates do. An excerpt's position is its page's number times TEXT_PAGE_BYTES plus where it starts there.
  readonly #text: Buffer[] = [Buffer.allocUnsafe(4 * MAX_EXCERPT_BYTES)];
  #textLength = 0;
  // Where the excerpt #writeExcerpt wrote last starts.
  #excerptAt = 0;
  // `stream_id`s and `reason`s, as bytes (see BytePool).
  readonly #strings = new BytePool();
  // A turn's records come one after the other with the same stream_id: the last one stored is reused without a copy.
  #lastStreamId: string | undefined;
  #lastStreamIdNumber = 0;
  // The few distinct reasons a store uses, each kept once; past REASONS_KEPT distinct ones, each record's is kept.
  readonly #reasons = new Map<string, number>();
  // False for the table of a fold that keeps no turns: locations only, and none of the above.
  readonly #summaries: boolean;
  // What slots could not hold in their columns, by slot; made on first use (most stores need none).
  #rare: Map<number, RareMembers> | undefined;

  /**
   * @param summaries false for a table that keeps each representative's location only, for a fold whose turns nobody
   * reads (see TurnFoldOptions.keepTurns): duplicates still find the representative's bytes on disk, and `get`
   * throws.
   */
  constructor(summaries = true) {
    this.#summaries = summaries;
    if (summaries) this.#addPage(INITIAL_SLOTS);
  }

  /** Bytes the table's columns, excerpts and strings hold (for tests that count what a fold keeps). */
  get heldBytes(): number {
    let bytes = this.#locations.heldBytes;
    if (!this.#summaries) return bytes;
    bytes += this.#strings.heldBytes;
    for (const column of this.#createdAt) bytes += column.byteLength;
    for (const column of this.#extras) bytes += column?.byteLength ?? 0;
    // The excerpts written, not the pages reserved for them: a table that writes none holds none.
    return bytes + (this.#text.length - 1) * TEXT_PAGE_BYTES + this.#textLength;
  }

  /** False when the table keeps locations only. */
  get summaries(): boolean {
    return this.#summaries;
  }

  /**
   * Stores the representative of a record read from `file` at `slot`, replacing what the slot held.
   */
  set(slot: number, record: JournalRecord, file: string): void {
    this.#locations.set(slot, record, file);
    if (!this.#summaries) return;
    if (slot >= this.#capacity) this.#grow(slot + 1);
    const page = slot >>> PAGE_BITS;
    const at = slot & PAGE_MASK;
    const v = record.value;
    this.#rare?.delete(slot);
    (this.#createdAt[page] as Float64Array)[at] = typeof v.created_at === 'number' ? v.created_at : Number.NaN;
    const streamId = typeof v.stream_id === 'string' ? this.#streamIdNumber(v.stream_id) : 0;
    let flags = 0;
    // What goes to FIRST and SECOND; `free` is the next of them free, SLOT_MEMBERS when both are taken.
    const members = this.#members;
    members.fill(0);
    let free = 0;
    if (typeof v.content === 'string') {
      const bytes = this.#writeExcerpt(v.content);
      flags |= HAS_EXCERPT | (bytes << EXCERPT_LENGTH_SHIFT);
      if (this.#excerptAt <= MAX_IN_SLOT) {
        members[0] = this.#excerptAt;
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
        members[free] = index;
        free += 1;
        flags |= MESSAGE_INDEX_IN_SLOT;
      } else this.#aside(slot).assistantMessageIndex = index;
    }
    if (typeof v.reason === 'string') {
      flags |= HAS_REASON;
      const reason = this.#reasonNumber(v.reason);
      if (free < SLOT_MEMBERS) {
        members[free] = reason;
        free += 1;
        flags |= REASON_IN_SLOT;
      } else this.#aside(slot).reason = reason;
    }
    if (Array.isArray(v.attachments)) {
      flags |= HAS_ATTACHMENTS;
      if (free < SLOT_MEMBERS) {
        members[free] = v.attachments.length;
        free += 1;
        flags |= ATTACHMENTS_IN_SLOT;
      } else this.#aside(slot).attachments = v.attachments.length;
    }
    let extras = this.#extras[page];
    // Nothing to store, and no page whose earlier entry for the slot must be cleared: the slot's extras read 0.
    if (extras === undefined && streamId === 0 && flags === 0) return;
    if (extras === undefined) {
      extras = new Uint32Array((this.#createdAt[page] as Float64Array).length * EXTRAS);
      this.#extras[page] = extras;
    }
    const i = at * EXTRAS;
    extras[i + STREAM_ID] = streamId;
    extras[i + FLAGS] = flags;
    extras[i + FIRST] = members[0] as number;
    extras[i + FIRST + 1] = members[1] as number;
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
    return this.#locations.location(slot);
  }

  /** The representative at `slot`, as new objects. The slot must have been set. */
  get(slot: number): RepresentativeRecord {
    if (!this.summaries) throw new Error('RepresentativeTable.get(): this table keeps locations only');
    const page = slot >>> PAGE_BITS;
    const at = slot & PAGE_MASK;
    const i = at * EXTRAS;
    // A page without extras reads as zeros: no stream_id, no flags.
    const integers = this.#extras[page] ?? NO_EXTRAS;
    const flags = integers[i + FLAGS] ?? 0;
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
    const createdAt = (this.#createdAt[page] as Float64Array)[at] as number;
    if (!Number.isNaN(createdAt)) summary.createdAt = createdAt;
    const streamId = this.#string(integers[i + STREAM_ID] ?? 0);
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
      const createdAt = new Float64Array(first);
      createdAt.set(this.#createdAt[0] as Float64Array);
      this.#createdAt[0] = createdAt;
      const extras = this.#extras[0];
      if (extras !== undefined) {
        this.#extras[0] = new Uint32Array(first * EXTRAS);
        this.#extras[0].set(extras);
      }
      this.#capacity = first;
    }
    while (this.#capacity < slots) this.#addPage(PAGE_SLOTS);
  }

  #addPage(slots: number): void {
    this.#createdAt.push(new Float64Array(slots));
    this.#extras.push(undefined);
    this.#capacity += slots;
  }
}

/** What a page without an extras column reads as: every index past its end is undefined, taken as 0. */
const NO_EXTRAS = new Uint32Array(0);
