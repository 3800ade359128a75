import { TURN_EVENTS } from '@turnjournal/schema';
import { BytePool } from './byte-pool.js';
import { PagedIndex } from './paged-index.js';
import { RepresentativeTable } from './representative-table.js';

// A turn's entry in the `bits` column: the event names it has a representative of in bits 0-7, those whose distinct
// records are in the fold's digest set in bits 8-15 (see TurnFold), and from bit RANKS on, 3 bits per event name,
// where the event's slot is: its place among the turn's slots, which follow the turn's first one in the table, or
// SCATTERED when another turn took a slot in between.
const RANKS = 16;
const RANK_BITS = 3;
const SCATTERED = 0b111;

/**
 * Where turn folds keep their representatives: a table, and the table slot of each turn event (see TurnFold). A fold
 * has its own, or shares one with the other folds of a store check ({@link withArena}): a store of many small sessions
 * then holds one table, not a table, an index and their arrays per session (100,000 one-turn sessions: well under half
 * the memory; bench/results/history.md, "`checkStore` memory (issue 14), 2026-11-25 evening").
 * Turns are numbered across the folds that share it, and what a turn object would otherwise hold in fields of 8 bytes
 * each is in columns here, at the turn's number (issue 11: 2 M orphan records). Internal to the reader.
 */
export class FoldArena {
  readonly table: RepresentativeTable;
  // Per turn: the slot of its first event. A turn's events usually arrive one after the other, so their slots follow
  // it: 4 bytes a turn, where an index of a slot per event name took 20.
  readonly #firstSlot = new PagedIndex();
  // The slot of event i of turn n, at n * TURN_EVENTS.length + i, for the events whose slot does not follow the
  // turn's others (see SCATTERED); its pages are made where such an event is.
  readonly #scattered = new PagedIndex();
  // Per turn: its bits (see RANKS), and, while its fold reads, the line of its first terminal event in its fold's
  // numbering of lines (see terminalLineIn): one column, where the reading and the line took two. LONG_LINE for a
  // number the column cannot hold, in `longLines` then.
  readonly bits = new PagedIndex();
  #terminalLine = new PagedIndex();
  #longLines: Map<number, number> | undefined;
  // Per turn: the number of its list of files in its fold (see TurnFold): a column, where a member of each turn's
  // object took 8 bytes.
  readonly fileList = new PagedIndex();
  /** Every turn's id, as UTF-8 bytes: entry n is turn n's (see TurnFold). */
  readonly ids = new BytePool();
  /** Slots taken in the table. */
  slots = 0;
  /**
   * True when the folds of this arena make no turn objects: each derivation's `turns` is empty and its turns are a
   * {@link TurnList} instead (see turnListOf), unless it has only a few (see TurnFold). Set by an internal caller (an audit that walks the turns) before any
   * fold is built.
   */
  listsTurns = false;

  /** @param summaries false for a table of locations only (see RepresentativeTable). */
  constructor(summaries = true) {
    this.table = new RepresentativeTable(summaries);
  }

  /** Bytes of the per-turn columns (the table and the ids aside), for tests that count what a fold keeps. */
  get columnBytes(): number {
    const columns = [this.#firstSlot, this.#scattered, this.bits, this.#terminalLine, this.fileList];
    return columns.reduce((bytes, column) => bytes + column.heldBytes, 0);
  }

  /** Numbers a new turn whose id is the first `length` bytes of `id`: the next number. */
  addTurn(id: Uint8Array, length: number): number {
    return this.ids.addBytes(id, length);
  }

  /** Bit set of the event names turn `turn` has a representative of (bit i: TURN_EVENTS[i]). */
  eventBits(turn: number): number {
    return this.bits.get(turn) & 0xff;
  }

  /** Marks the event name's records of turn `turn` as being in the digest set; false when they were already. */
  markDigested(turn: number, bit: number): boolean {
    const had = this.bits.get(turn);
    if ((had & (bit << 8)) !== 0) return false;
    this.bits.set(turn, had | (bit << 8));
    return true;
  }

  /**
   * The line of the turn's first terminal event in the reading whose lines are numbered from `base` on, or undefined
   * when it had none there. A fold numbers the lines of its readings one after the other (a reading's line n is
   * `base + n`, and the next reading's base is past every number stored in this one), so a number stored in an
   * earlier reading is at most the current base, and no column need be cleared when a reading starts.
   */
  terminalLineIn(turn: number, base: number): number | undefined {
    const stored = this.#terminalLine.get(turn);
    const numbered = stored === LONG_LINE ? (this.#longLines?.get(turn) ?? 0) : stored;
    return numbered > base ? numbered - base : undefined;
  }

  /** Records `line` (1 or more) as the turn's first terminal line in the reading numbered from `base`. */
  setTerminalLine(turn: number, base: number, line: number): void {
    const numbered = base + line;
    if (numbered < LONG_LINE) {
      this.#terminalLine.set(turn, numbered);
      return;
    }
    this.#terminalLine.set(turn, LONG_LINE);
    this.#longLines ??= new Map();
    this.#longLines.set(turn, numbered);
  }

  /**
   * Forgets every turn's terminal line, once no fold of the arena reads any more: the column serves `add` alone (4
   * bytes a turn, 8 MB of the 2 M orphan records of issue 11), and the turns a fold returns never read it.
   */
  releaseReadingColumns(): void {
    this.#terminalLine = new PagedIndex();
    this.#longLines = undefined;
  }

  /** Forgets the turn's terminal line (see TurnFold, which numbers its lines anew before they outgrow the column). */
  clearTerminalLine(turn: number): void {
    this.#terminalLine.set(turn, 0);
    this.#longLines?.delete(turn);
  }

  /**
   * Takes the next slot of the table for event `event` (its index in TURN_EVENTS) of turn `turn`, which has no
   * representative of that event yet, and sets the event's bit.
   */
  takeSlot(turn: number, event: number): number {
    const slot = this.slots;
    this.slots += 1;
    const bits = this.bits.get(turn);
    const taken = countBits(bits & 0xff);
    let rank = taken;
    if (taken === 0) this.#firstSlot.set(turn, slot);
    else if (slot !== this.#firstSlot.get(turn) + taken) {
      rank = SCATTERED;
      this.#scattered.set(turn * TURN_EVENTS.length + event, slot);
    }
    // The event's bit with its rank: the caller stores the representative next.
    this.bits.set(turn, bits | (1 << event) | (rank << (RANKS + RANK_BITS * event)));
    return slot;
  }

  /** The slot of event `event` of turn `turn`, which has a representative of it. */
  slotOf(turn: number, event: number): number {
    const rank = (this.bits.get(turn) >>> (RANKS + RANK_BITS * event)) & SCATTERED;
    return rank === SCATTERED
      ? this.#scattered.get(turn * TURN_EVENTS.length + event)
      : this.#firstSlot.get(turn) + rank;
  }
}

/** The number of bits set in `bits`, a byte. */
function countBits(bits: number): number {
  let count = 0;
  for (let rest = bits; rest !== 0; rest &= rest - 1) count += 1;
  return count;
}

/** The terminal-line column's entry for a number above what it holds (in `longLines` then). */
const LONG_LINE = 0xffff_ffff;
/** The number past which a fold numbers the lines of its next reading from 0 again (see ReadingLines). */
const RENUMBER_AT = 2 ** 31;

/**
 * How a fold numbers the lines of its readings one after the other (see FoldArena.terminalLineIn): `base` is the
 * current reading's line 0, and each reading starts past the highest number stored in the one before. Before the
 * numbers outgrow the arena's column, the numbering starts from 0 again: once per 2^31 lines.
 */
export class ReadingLines {
  base = 0;
  #last = 0;

  /** Stores `line` as the turn's first terminal line in the current reading. */
  set(arena: FoldArena, turn: number, line: number): void {
    arena.setTerminalLine(turn, this.base, line);
    this.#last = Math.max(this.#last, this.base + line);
  }

  /**
   * Starts a reading. False when the numbering starts over: the caller then forgets (FoldArena.clearTerminalLine) the
   * terminal lines of its turns, which belong to readings done.
   */
  next(): boolean {
    this.base = this.#last;
    if (this.base < RENUMBER_AT) return true;
    this.base = 0;
    this.#last = 0;
    return false;
  }
}

// The arena handed to the next fold built (see withArena): set and cleared synchronously around one construction.
let handedOver: FoldArena | undefined;

/**
 * Runs `build` (which constructs one TurnFold) with `arena` handed to the fold, so that the public constructor stays
 * `new TurnFold(sessionId, options)` and the arena is no part of the public API.
 */
export function withArena<T>(arena: FoldArena, build: () => T): T {
  handedOver = arena;
  try {
    return build();
  } finally {
    handedOver = undefined;
  }
}

/** True while {@link withArena} hands an arena to the fold being built. */
export function arenaHandedOver(): boolean {
  return handedOver !== undefined;
}

/** The arena a fold under construction uses: the one handed over, or a new one of its own. */
export function claimArena(summaries: boolean): FoldArena {
  const arena = handedOver ?? new FoldArena(summaries);
  handedOver = undefined;
  return arena;
}
