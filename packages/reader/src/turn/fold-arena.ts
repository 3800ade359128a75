import { PagedIndex } from './paged-index.js';
import { RepresentativeTable } from './representative-table.js';

/**
 * Where turn folds keep their representatives: a table, and the table slot of each turn event (see TurnFold). A fold
 * has its own, or shares one with the other folds of a store check ({@link withArena}): a store of many small sessions
 * then holds one table, not a table, an index and their arrays per session (100,000 one-turn sessions: 630 → 260 MiB).
 * Turns are numbered across the folds that share it. Internal to the reader.
 */
export class FoldArena {
  readonly table = new RepresentativeTable();
  // The table slot of event i of turn n at n * TURN_EVENTS.length + i, valid where the turn's events have bit i.
  readonly slotOf = new PagedIndex();
  // Per turn, at its number: what a turn object would otherwise hold in fields of 8 bytes each (see FoldedTurn). Its
  // event bits; and, while its fold reads, the reading (see TurnFold) in which it had its first terminal event and
  // that event's line, LONG_LINE for a line the column cannot hold (in `longLines` then).
  readonly bits = new PagedIndex();
  readonly terminalReading = new PagedIndex();
  readonly terminalLine = new PagedIndex();
  longLines: Map<number, number> | undefined;
  /** Slots taken in the table. */
  slots = 0;
  /** Turns numbered. */
  turns = 0;
}

/** The `terminalLine` of a line above what a column entry holds. */
export const LONG_LINE = 0xffff_ffff;

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

/** The arena a fold under construction uses: the one handed over, or a new one of its own. */
export function claimArena(): FoldArena {
  const arena = handedOver ?? new FoldArena();
  handedOver = undefined;
  return arena;
}
