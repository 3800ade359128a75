import { loadRecord } from '../file/load-record.js';
import type { DerivedTurn } from '../turn/derive-turns.js';
import type { RecordLocation } from '../turn/representative.js';

/** What the host says its transcript already holds for a turn (seed 000's sidecar). */
export interface HostView {
  /** True when the host transcript already has the turn's submitted user message. */
  hasUserMessage(sessionId: string, turnId: string): boolean;
  /** True when the host transcript already has an interruption marker for the turn. */
  hasInterruptionMarker(sessionId: string, turnId: string): boolean;
}

/** One step of recovering an abandoned turn (spec §12), in the order a writer applies them (TJ-RECOV-003). */
export type RecoveryAction =
  | {
      readonly kind: 'ensure_user_message';
      /**
       * The submitted record to restore into the host transcript, with a recovery marker. Read back from the journal
       * on each access, and not kept: a plan of many abandoned turns holds where their messages are, not the messages
       * (each can be as large as the line limit). Throws `ReaderError` `record_moved` if the file changed since.
       */
      readonly submitted: Readonly<Record<string, unknown>>;
    }
  | { readonly kind: 'ensure_interruption_marker' }
  | {
      readonly kind: 'append_interrupted';
      /** The record to append (without `created_at`, which the writer stamps). */
      readonly record: {
        readonly version: 1;
        readonly event: 'interrupted';
        readonly turn_id: string;
        readonly session_id: string;
        readonly reason: 'server_startup_recovery';
        readonly stream_id?: string;
      };
    };

/** The recovery of one abandoned turn. */
export interface TurnRecovery {
  /** The session. */
  readonly sessionId: string;
  /** The turn. */
  readonly turnId: string;
  /** Its state before recovery. */
  readonly state: string;
  /** The steps, in order. */
  readonly actions: readonly RecoveryAction[];
}

/**
 * The recovery plan of a store: one {@link TurnRecovery} per abandoned turn, in session order and then turn order.
 * Each is built anew when the iteration reaches it and not kept: a store of two million abandoned turns holds its
 * derived turns and one byte per planned turn, not two million recoveries (issue 11). What the host view answered is
 * asked once, when the plan is made, so every iteration gives the same plan. `JSON.stringify` prints it as an array.
 */
export interface RecoveryPlan extends Iterable<TurnRecovery> {
  /** The number of turns planned. */
  readonly length: number;
}

// What the host view answered for a planned turn: one byte each.
const HAS_USER_MESSAGE = 1;
const HAS_INTERRUPTION_MARKER = 2;

/** The lazy {@link RecoveryPlan} of the turns of some sessions. Internal to the reader. */
export class LazyRecoveryPlan implements RecoveryPlan {
  readonly #sessions: readonly { readonly turns: readonly DerivedTurn[] }[];
  readonly #turnsOf: (session: { readonly turns: readonly DerivedTurn[] }) => Iterable<DerivedTurn>;
  readonly #held: ReadonlySet<string>;
  readonly #load: (location: RecordLocation) => Record<string, unknown>;
  // The host's answers for planned turn i at [i].
  #answers: Uint8Array = new Uint8Array(64);
  readonly length: number;

  constructor(
    sessions: readonly { readonly turns: readonly DerivedTurn[] }[],
    held: ReadonlySet<string>,
    host: HostView | undefined,
    load: (location: RecordLocation) => Record<string, unknown>,
    // A session's turns: its `turns`, or the turn list of a check that lists them (see checkStoreListing).
    turnsOf: (session: { readonly turns: readonly DerivedTurn[] }) => Iterable<DerivedTurn> = (session) =>
      session.turns,
  ) {
    this.#sessions = sessions;
    this.#turnsOf = turnsOf;
    this.#held = held;
    this.#load = load;
    let planned = 0;
    for (const turn of this.#abandoned()) {
      if (planned === this.#answers.length) {
        const grown = new Uint8Array(planned * 2);
        grown.set(this.#answers);
        this.#answers = grown;
      }
      let answers = 0;
      // An orphan has no submitted record to restore: the host is not asked about it.
      if (!turn.orphan && (host?.hasUserMessage(turn.sessionId, turn.turnId) ?? false)) answers |= HAS_USER_MESSAGE;
      if (host?.hasInterruptionMarker(turn.sessionId, turn.turnId) ?? false) answers |= HAS_INTERRUPTION_MARKER;
      this.#answers[planned] = answers;
      planned += 1;
    }
    this.length = planned;
  }

  /** The abandoned turns (TJ-RECOV-002): not terminal, and no file of theirs held by a live writer. */
  *#abandoned(): Generator<DerivedTurn> {
    const held = this.#held;
    for (const session of this.#sessions)
      for (const turn of this.#turnsOf(session))
        if (!turn.terminal && (held.size === 0 || !turn.files.some((file) => held.has(file)))) yield turn;
  }

  *[Symbol.iterator](): Iterator<TurnRecovery> {
    let planned = 0;
    for (const turn of this.#abandoned()) {
      yield recoveryOf(turn, this.#answers[planned] as number, this.#load);
      planned += 1;
    }
  }

  /** The plan as an array, for `JSON.stringify`. */
  toJSON(): TurnRecovery[] {
    return [...this];
  }
}

/**
 * The `ensure_user_message` step: `kind`, and `submitted` read back on each access, both own enumerable members as
 * in an object literal. A class whose getter is one function for every instance: an object literal with a getter
 * made per planned turn gave each its own accessor and V8 a hidden class of its own, which lives in the old generation
 * until a mark-compact (issue 11: printing the plan of 100,000 abandoned turns filled the old generation with them;
 * the figure is in bench/results/history.md, "Figures that were in code comments").
 */
class EnsureUserMessage {
  readonly kind = 'ensure_user_message';
  declare readonly submitted: Readonly<Record<string, unknown>>;
  readonly #location: RecordLocation;
  readonly #load: (location: RecordLocation) => Record<string, unknown>;

  constructor(location: RecordLocation, load: (location: RecordLocation) => Record<string, unknown>) {
    this.#location = location;
    this.#load = load;
    Object.defineProperty(this, 'submitted', SUBMITTED);
  }

  static readonly read = (step: EnsureUserMessage) => step.#load(step.#location);
}

// One descriptor, so one getter, for every step: V8 then shares the hidden class that has it.
const SUBMITTED: PropertyDescriptor = {
  get(this: EnsureUserMessage) {
    return EnsureUserMessage.read(this);
  },
  enumerable: true,
  configurable: true,
};

/** The recovery of one abandoned turn, given what the host view answered for it. */
function recoveryOf(
  turn: DerivedTurn,
  answers: number,
  load: (location: RecordLocation) => Record<string, unknown>,
): TurnRecovery {
  const actions: RecoveryAction[] = [];
  // Read once: a derived turn builds its events on each read (see DerivedTurn.events).
  const submitted = turn.events.submitted;
  if (submitted !== undefined && (answers & HAS_USER_MESSAGE) === 0) {
    const { location } = submitted;
    actions.push(new EnsureUserMessage(location, load));
  }
  if ((answers & HAS_INTERRUPTION_MARKER) === 0) actions.push({ kind: 'ensure_interruption_marker' });
  const streamId = submitted?.summary.streamId;
  actions.push({
    kind: 'append_interrupted',
    record: {
      version: 1,
      event: 'interrupted',
      turn_id: turn.turnId,
      session_id: turn.sessionId,
      reason: 'server_startup_recovery',
      ...(typeof streamId === 'string' ? { stream_id: streamId } : {}),
    },
  });
  return { sessionId: turn.sessionId, turnId: turn.turnId, state: turn.state, actions };
}

/**
 * Computes the recovery plan (spec §12) as a pure function of the derived turns, the files a live writer holds, and
 * what the host's transcript holds (TJ-RECOV-001). Exactly the abandoned turns are planned (TJ-RECOV-002); the plan
 * never contains an assistant answer or a provider call (TJ-RECOV-004, TJ-RECOV-005). Without a host view every
 * `ensure_*` step is planned: host hooks are idempotent (TJ-RECOV-008), so planning them is always safe. The submitted
 * record to restore is read back from the journal with `load` when an `ensure_user_message` action's `submitted` is
 * read, not while planning: an audit that only reports the plan reads no message back. `auditStore` gives the same
 * plan for a whole store without building it (see {@link RecoveryPlan}).
 */
export function planRecovery(
  turns: readonly DerivedTurn[],
  heldFiles: ReadonlySet<string>,
  host?: HostView,
  load: (location: RecordLocation) => Record<string, unknown> = loadRecord,
): TurnRecovery[] {
  return [...new LazyRecoveryPlan([{ turns }], heldFiles, host, load)];
}
