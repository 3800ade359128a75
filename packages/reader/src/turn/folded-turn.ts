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
 * A turn of a fold, read from the fold's columns (while records arrive a turn is a number in them, no object: a fold
 * that keeps no turns never makes one): `turnId` is read from the arena's bytes (a new string on each read),
 * `sessionId` is its fold's, `files` is in its fold's lists, and `state`, `orphan` and `terminal` follow from its event
 * bits, in its arena's columns. Its members are prototype getters, so a view is two fields, quick to make: the turn
 * lists of an audit make one per turn on each walk (see TurnList). Internal to the reader.
 */
export class TurnView implements DerivedTurn {
  readonly #fold: FoldContext;
  readonly #index: number;

  constructor(index: number, fold: FoldContext) {
    this.#fold = fold;
    this.#index = index;
  }

  /** A new string on each read, from the arena's bytes: a million turns hold no string each. */
  get turnId(): string {
    return this.#fold.arena.ids.get(this.#index);
  }

  get sessionId(): string {
    return this.#fold.sessionId;
  }

  get state(): TurnState {
    const events = this.eventBits;
    return BY_RANK.find(({ bit }) => (events & bit) !== 0)?.event ?? 'submitted';
  }

  get orphan(): boolean {
    return (this.eventBits & SUBMITTED) === 0;
  }

  get terminal(): boolean {
    return (this.eventBits & TERMINAL) !== 0;
  }

  /** The list its fold settled (sorted), shared by the turns of one file. */
  get files(): readonly string[] {
    return this.#fold.fileLists[this.#fold.arena.fileList.get(this.#index)] as readonly string[];
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

// The members of DerivedTurn that a FoldedTurn has as its own, in the interface's order.
const OWN_MEMBERS = ['turnId', 'sessionId', 'state', 'orphan', 'terminal', 'files'] as const;
// Own, enumerable and read-only, as data members would be, with the getters of TurnView: `Object.defineProperty`
// with the same descriptor on every turn keeps one hidden class for them all.
const OWN_DESCRIPTORS = OWN_MEMBERS.map((member) => ({
  member,
  descriptor: {
    enumerable: true,
    get: (Object.getOwnPropertyDescriptor(TurnView.prototype, member) as PropertyDescriptor).get,
  } as PropertyDescriptor,
}));

/**
 * One turn a fold returns, made by `TurnFold.finish`: a {@link TurnView} whose members of {@link DerivedTurn} are its
 * own (so a spread or `Object.keys` of it lists them, in that order), none of them stored in it: 40 bytes a turn and
 * no string, where an object and its id string took about 100 (issue 11: 2 M orphan records; issue 14). `events`
 * builds the representatives on each read: most callers read the states of all turns, and the records of a few.
 */
export class FoldedTurn extends TurnView {
  constructor(index: number, fold: FoldContext) {
    super(index, fold);
    // Member by member, in the order of DerivedTurn: that is the order of Object.keys and of a spread.
    for (const { member, descriptor } of OWN_DESCRIPTORS) Object.defineProperty(this, member, descriptor);
  }
}

/**
 * The turns of a fold that makes no turn object until asked (see FoldArena.listsTurns): the turns' numbers in the
 * fold's order, each made into a {@link TurnView} when an iteration reaches it and not kept. 4 bytes a turn, where
 * the array of turn objects took 48 (issue 11: an audit of 2 M orphan records held them all at its peak). Internal to
 * the reader: an audit's findings and plan, and a recovery, walk the turns once or twice each.
 */
export class TurnList implements Iterable<TurnView> {
  readonly #numbers: Uint32Array;
  readonly #context: FoldContext;

  constructor(numbers: Uint32Array, context: FoldContext) {
    this.#numbers = numbers;
    this.#context = context;
  }

  /** The number of turns. */
  get length(): number {
    return this.#numbers.length;
  }

  *[Symbol.iterator](): Iterator<TurnView> {
    for (const number of this.#numbers) yield new TurnView(number, this.#context);
  }
}
