import { TURN_EVENTS, type TurnEventName } from '@turnjournal/schema';
import type { DerivedTurn, TurnState } from './derive-turns.js';
import { type FoldArena, LONG_LINE } from './fold-arena.js';
import type { RepresentativeRecord } from './representative.js';

// The per-turn state of `TurnFold` (derive-turns.ts), apart from the fold itself: the event bit set and the object
// each derived turn is.

// A turn's events are a bit set: bit i stands for TURN_EVENTS[i]. The representative of that event is in the slot of
// the fold's table that the fold's arena gives (FoldArena.slotOf): slots are taken as records arrive, so a turn with
// one event costs one slot, not one per event name.
export const EVENT_INDEX = new Map<string, number>(TURN_EVENTS.map((event, index) => [event, index]));
const bitOf = (event: TurnEventName) => 1 << TURN_EVENTS.indexOf(event);
const SUBMITTED = bitOf('submitted');
export const TERMINAL = bitOf('completed') | bitOf('interrupted');
// Event names from the highest rank down, `completed` before `interrupted` (TJ-DERIVE-010): a turn's state is the
// first one it has.
const BY_RANK = (['completed', 'interrupted', 'assistant_started', 'worker_started', 'submitted'] as const).map(
  (event) => ({ event, bit: bitOf(event) }),
);

/** What the turns of one fold share: an 8-byte reference per turn instead of a session id and an arena. */
export interface FoldContext {
  readonly sessionId: string;
  readonly arena: FoldArena;
}

/**
 * One turn of a fold: its state while records arrive, and the turn `TurnFold.finish` returns, the same object,
 * so that a journal of millions of turns holds one small object per turn, never two. Its own enumerable members are
 * those of {@link DerivedTurn}, in that order, but only `turnId` and `files` are stored in it: `sessionId` is its fold's,
 * and `state`, `orphan` and `terminal` follow from its event bits, which are kept with its representatives and the
 * line of its first terminal event in its arena's columns. They are accessors defined on each turn with the same
 * getter, so every turn has one hidden class and none holds them: 56 bytes a turn instead of 112 (issue 11: 2 M
 * orphan records). `events` builds the representatives on each read: most callers read the states of all turns, and
 * the records of a few.
 */
export class FoldedTurn implements DerivedTurn {
  declare readonly turnId: string;
  declare readonly sessionId: string;
  declare readonly state: TurnState;
  declare readonly orphan: boolean;
  declare readonly terminal: boolean;
  /** Files holding the turn's records, in the order seen, until settled. Shared by the turns of one file: replaced, never pushed to. */
  declare files: readonly string[];
  readonly #fold: FoldContext;
  readonly #index: number;

  // Own, enumerable and read-only, as data members would be; `Object.defineProperty` with the same descriptor on every
  // turn keeps one hidden class for them all.
  static readonly #members: PropertyDescriptorMap = {
    sessionId: {
      enumerable: true,
      get(this: FoldedTurn) {
        return this.#fold.sessionId;
      },
    },
    state: {
      enumerable: true,
      get(this: FoldedTurn): TurnState {
        const events = this.eventBits;
        return BY_RANK.find(({ bit }) => (events & bit) !== 0)?.event ?? 'submitted';
      },
    },
    orphan: {
      enumerable: true,
      get(this: FoldedTurn) {
        return (this.eventBits & SUBMITTED) === 0;
      },
    },
    terminal: {
      enumerable: true,
      get(this: FoldedTurn) {
        return (this.eventBits & TERMINAL) !== 0;
      },
    },
  };

  constructor(turnId: string, index: number, files: readonly string[], fold: FoldContext) {
    // Member by member, in the order of DerivedTurn: that is the order of Object.keys and of a spread.
    this.turnId = turnId;
    const members = FoldedTurn.#members;
    Object.defineProperty(this, 'sessionId', members.sessionId as PropertyDescriptor);
    Object.defineProperty(this, 'state', members.state as PropertyDescriptor);
    Object.defineProperty(this, 'orphan', members.orphan as PropertyDescriptor);
    Object.defineProperty(this, 'terminal', members.terminal as PropertyDescriptor);
    this.files = files;
    this.#fold = fold;
    this.#index = index;
  }

  /** The turn's number in its arena, in the order first seen: where its slots and columns are. */
  get index(): number {
    return this.#index;
  }

  // The turn's bits, in its arena's column: event names with a representative in bits 0-7, and, shifted by 8, those
  // whose distinct records are in the fold's digest set (those that have had a second record). Not a private
  // accessor: a class with private methods or accessors stores a brand in each instance, 8 bytes a turn.

  /** Bit set of the event names that have a representative. */
  get eventBits(): number {
    return this.#fold.arena.bits.get(this.#index) & 0xff;
  }

  addEvent(bit: number): void {
    const { bits } = this.#fold.arena;
    bits.set(this.#index, bits.get(this.#index) | bit);
  }

  /** Marks the event name's records as being in the digest set; false when they were already. */
  markDigested(bit: number): boolean {
    const { bits } = this.#fold.arena;
    const had = bits.get(this.#index);
    if ((had & (bit << 8)) !== 0) return false;
    bits.set(this.#index, had | (bit << 8));
    return true;
  }

  /** The line of the turn's first terminal event, when it was seen in the given reading (1 or more). */
  terminalLineIn(reading: number): number | undefined {
    const arena = this.#fold.arena;
    if (arena.terminalReading.get(this.#index) !== reading) return undefined;
    const line = arena.terminalLine.get(this.#index);
    return line === LONG_LINE ? arena.longLines?.get(this.#index) : line;
  }

  setTerminalLine(reading: number, line: number): void {
    const arena = this.#fold.arena;
    arena.terminalReading.set(this.#index, reading);
    if (line < LONG_LINE) {
      arena.terminalLine.set(this.#index, line);
      return;
    }
    arena.terminalLine.set(this.#index, LONG_LINE);
    arena.longLines ??= new Map();
    arena.longLines.set(this.#index, line);
  }

  /** Settles what the turn holds once every record is in: its files, sorted. */
  settle(): void {
    if (this.files.length > 1) this.files = [...this.files].sort();
  }

  get events(): Readonly<Partial<Record<TurnEventName, RepresentativeRecord>>> {
    const events: Partial<Record<TurnEventName, RepresentativeRecord>> = {};
    const { arena } = this.#fold;
    const bits = this.eventBits;
    for (const [index, event] of TURN_EVENTS.entries())
      if ((bits & (1 << index)) !== 0) events[event] = arena.table.get(arena.slotOf(this.#index, index));
    return events;
  }

  /** The turn as a plain object, `events` included, in the member order of {@link DerivedTurn}. */
  toJSON(): DerivedTurn {
    const { turnId, sessionId, state, orphan, terminal, events, files } = this;
    return { turnId, sessionId, state, orphan, terminal, events, files };
  }
}
