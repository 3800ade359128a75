import { TURN_EVENTS, type TurnEventName } from '@turnjournal/schema';
import type { DerivedTurn, TurnState } from './derive-turns.js';
import type { FoldArena } from './fold-arena.js';
import type { RepresentativeRecord } from './representative.js';

// The per-turn state of `TurnFold` (derive-turns.ts), apart from the fold itself: the event bit set and the object
// each derived turn is.

// A turn's events are a bit set: bit i stands for TURN_EVENTS[i]. The representative of that event is in the slot of
// the fold's table that the fold's slot index gives at `turn.index * TURN_EVENTS.length + i`: slots are taken as
// records arrive, so a turn with one event costs one slot, not one per event name.
export const EVENT_INDEX = new Map<string, number>(TURN_EVENTS.map((event, index) => [event, index]));
const bitOf = (event: TurnEventName) => 1 << TURN_EVENTS.indexOf(event);
const SUBMITTED = bitOf('submitted');
export const TERMINAL = bitOf('completed') | bitOf('interrupted');
// Event names from the highest rank down, `completed` before `interrupted` (TJ-DERIVE-010): a turn's state is the
// first one it has.
const BY_RANK = (['completed', 'interrupted', 'assistant_started', 'worker_started', 'submitted'] as const).map(
  (event) => ({ event, bit: bitOf(event) }),
);

/**
 * One turn of a fold: its state while records arrive, and the turn `TurnFold.finish` returns, the same object,
 * so that a journal of millions of turns holds one small object per turn, never two. Its representatives stay in the
 * fold's table, and `events` builds them on each read: most callers read the states of all turns, and the records of
 * a few. Its own enumerable members are those of {@link DerivedTurn}, in that order; what the fold keeps is private.
 */
export class FoldedTurn implements DerivedTurn {
  readonly turnId: string;
  readonly sessionId: string;
  // Settled by finish(); a turn is read only after it.
  state: TurnState = 'submitted';
  orphan = false;
  terminal = false;
  /** Files holding the turn's records, in the order seen, until settled. Shared by the turns of one file: replaced, never pushed to. */
  files: readonly string[];
  readonly #arena: FoldArena;
  readonly #index: number;
  // Event names with a representative in bits 0-7, and, shifted by 8, those whose distinct records are in the fold's
  // digest set (those that have had a second record).
  #bits = 0;
  // The reading (see TurnFold) during which `#terminalLine` was seen, and the line of its first terminal event.
  #terminalReading = -1;
  #terminalLine = 0;

  constructor(turnId: string, sessionId: string, index: number, files: readonly string[], arena: FoldArena) {
    this.turnId = turnId;
    this.sessionId = sessionId;
    this.files = files;
    this.#arena = arena;
    this.#index = index;
  }

  /** The turn's number in its arena, in the order first seen: where its slots are in the arena's slot index. */
  get index(): number {
    return this.#index;
  }

  /** Bit set of the event names that have a representative. */
  get eventBits(): number {
    return this.#bits & 0xff;
  }

  addEvent(bit: number): void {
    this.#bits |= bit;
  }

  /** Marks the event name's records as being in the digest set; false when they were already. */
  markDigested(bit: number): boolean {
    if ((this.#bits & (bit << 8)) !== 0) return false;
    this.#bits |= bit << 8;
    return true;
  }

  /** The line of the turn's first terminal event, when it was seen in the given reading. */
  terminalLineIn(reading: number): number | undefined {
    return this.#terminalReading === reading ? this.#terminalLine : undefined;
  }

  setTerminalLine(reading: number, line: number): void {
    this.#terminalReading = reading;
    this.#terminalLine = line;
  }

  /** Derives the state once every record is in. */
  settle(): void {
    const events = this.eventBits;
    this.state = BY_RANK.find(({ bit }) => (events & bit) !== 0)?.event ?? 'submitted';
    this.orphan = (events & SUBMITTED) === 0;
    this.terminal = (events & TERMINAL) !== 0;
    if (this.files.length > 1) this.files = [...this.files].sort();
  }

  get events(): Readonly<Partial<Record<TurnEventName, RepresentativeRecord>>> {
    const events: Partial<Record<TurnEventName, RepresentativeRecord>> = {};
    for (const [index, event] of TURN_EVENTS.entries())
      if ((this.#bits & (1 << index)) !== 0)
        events[event] = this.#arena.table.get(this.#arena.slotOf.get(this.#index * TURN_EVENTS.length + index));
    return events;
  }

  /** The turn as a plain object, `events` included, in the member order of {@link DerivedTurn}. */
  toJSON(): DerivedTurn {
    const { turnId, sessionId, state, orphan, terminal, events, files } = this;
    return { turnId, sessionId, state, orphan, terminal, events, files };
  }
}
