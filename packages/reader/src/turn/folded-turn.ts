import { TURN_EVENTS, type TurnEventName } from '@turnjournal/schema';
import type { DerivedTurn, TurnState } from './derive-turns.js';
import type { FoldArena } from './fold-arena.js';
import type { RepresentativeRecord } from './representative.js';

// The per-turn state of `TurnFold` (derive-turns.ts), apart from the fold itself: the event bit set and the object
// each derived turn is.

// A turn's events are a bit set: bit i stands for TURN_EVENTS[i]. The representative of that event is in the slot of
// the fold's table that the fold's arena gives (FoldArena.slotOf): slots are taken as records arrive, so a turn with
// one event costs one slot, not one per event name.
export const EVENT_INDEX = new Map<string, number>(TURN_EVENTS.map((event, index) => [event, index]));
const bitOf = (event: TurnEventName) => 1 << TURN_EVENTS.indexOf(event);
export const SUBMITTED = bitOf('submitted');
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
  /** The fold's lists of files: a turn's is at the number in its arena's `fileList` column. */
  readonly fileLists: readonly (readonly string[])[];
}

/**
 * One turn a fold returns, made by `TurnFold.finish` from the fold's columns (while records arrive a turn is a number
 * in them, no object: a fold that keeps no turns never makes one). Its own enumerable members are those of
 * {@link DerivedTurn}, in that order, and none is stored in it: `turnId` is read from the arena's bytes (a new string
 * on each read), `sessionId` is its fold's, `files` is in its fold's lists, and `state`, `orphan` and `terminal` follow
 * from its event bits, in its arena's columns. They are accessors defined on each turn with the same getter, so every
 * turn has one hidden class: 40 bytes a turn and no string, where an object and its id string took about 100 (issue 11:
 * 2 M orphan records; issue 14). `events` builds the representatives on each read: most callers read the states of
 * all turns, and the records of a few.
 */
export class FoldedTurn implements DerivedTurn {
  declare readonly turnId: string;
  declare readonly sessionId: string;
  declare readonly state: TurnState;
  declare readonly orphan: boolean;
  declare readonly terminal: boolean;
  declare readonly files: readonly string[];
  readonly #fold: FoldContext;
  readonly #index: number;

  // Own, enumerable and read-only, as data members would be; `Object.defineProperty` with the same descriptor on every
  // turn keeps one hidden class for them all.
  static readonly #members: PropertyDescriptorMap = {
    // A new string on each read, from the arena's bytes: a million turns hold no string each.
    turnId: {
      enumerable: true,
      get(this: FoldedTurn) {
        return this.#fold.arena.ids.get(this.#index);
      },
    },
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
    // The list its fold settled (sorted), shared by the turns of one file.
    files: {
      enumerable: true,
      get(this: FoldedTurn) {
        return this.#fold.fileLists[this.#fold.arena.fileList.get(this.#index)] as readonly string[];
      },
    },
  };

  constructor(index: number, fold: FoldContext) {
    // Member by member, in the order of DerivedTurn: that is the order of Object.keys and of a spread.
    const members = FoldedTurn.#members;
    Object.defineProperty(this, 'turnId', members.turnId as PropertyDescriptor);
    Object.defineProperty(this, 'sessionId', members.sessionId as PropertyDescriptor);
    Object.defineProperty(this, 'state', members.state as PropertyDescriptor);
    Object.defineProperty(this, 'orphan', members.orphan as PropertyDescriptor);
    Object.defineProperty(this, 'terminal', members.terminal as PropertyDescriptor);
    Object.defineProperty(this, 'files', members.files as PropertyDescriptor);
    this.#fold = fold;
    this.#index = index;
  }

  /** The turn's number in its arena, in the order first seen: where its slots and columns are. */
  get index(): number {
    return this.#index;
  }

  /** Bit set of the event names that have a representative (kept in its arena's column). */
  get eventBits(): number {
    return this.#fold.arena.eventBits(this.#index);
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
