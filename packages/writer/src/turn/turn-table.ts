import { hash } from 'node:crypto';
import type { TurnEventName } from '@turnjournal/schema';

/** Rank of each turn event in the state machine (spec §10.1); both terminal events share the top rank. */
export const TURN_RANK: Readonly<Record<TurnEventName, number>> = {
  submitted: 0,
  worker_started: 1,
  assistant_started: 2,
  completed: 3,
  interrupted: 3,
};

/** What a writer knows about one turn of its session. */
export interface KnownTurn {
  /** The derived state (spec §10.2): the highest-ranked event; `completed` wins over `interrupted`. */
  state: TurnEventName | null;
  /**
   * Digest of the submitted `content`, or null for a turn seen without `submitted` (an orphan, so far). Read it with
   * {@link submittedDigest}: a turn this writer is submitting holds its content until the digest is computed.
   */
  contentDigest: string | null;
  /** The content of a submission whose digest is not computed yet. */
  pendingContent?: string | undefined;
  /** The turn's `stream_id`, from its `submitted` record. */
  streamId: string | null | undefined;
}

/** Digest of a submitted content, to recognise a retried submission without keeping the text. */
export function contentDigest(content: string): string {
  // The one-shot form: no Hash object per digest.
  if ((content as unknown as WellFormed).isWellFormed()) return hash('sha256', content, 'base64');
  // A lone surrogate has no UTF-8 form: hashed as text it becomes U+FFFD, and a content with U+FFFD in its place had
  // the same digest, so a retry with that other content was taken for the same submission. The line keeps the two
  // apart (JSON escapes a lone surrogate), and so does its JSON text here; the prefix, which base64 never holds,
  // keeps these digests apart from every well-formed content's.
  return `~${hash('sha256', JSON.stringify(content), 'base64')}`;
}

/** `String.prototype.isWellFormed` (Node 20), which the compiler's library does not declare. */
interface WellFormed {
  isWellFormed(): boolean;
}

/**
 * The digest of the turn's submitted content, or null for an orphan. A pending content is digested on first use and
 * dropped, so a submission can put its digest off until its record is on its way to the disk.
 */
export function submittedDigest(turn: KnownTurn): string | null {
  if (turn.pendingContent !== undefined) {
    turn.contentDigest = contentDigest(turn.pendingContent);
    turn.pendingContent = undefined;
  }
  return turn.contentDigest;
}

/** True when `state` is terminal. */
export function isTerminal(state: TurnEventName | null): boolean {
  return state === 'completed' || state === 'interrupted';
}

/** The state after adding `event` to a turn in `state` (the order-independent fold of spec §10.2). */
export function foldState(state: TurnEventName | null, event: TurnEventName): TurnEventName {
  if (state === null) return event;
  if (state === 'completed' || event === 'completed') return TURN_RANK[event] >= TURN_RANK[state] ? event : state;
  return TURN_RANK[event] > TURN_RANK[state] ? event : state;
}

/**
 * The turns of one session as far as a writer has read them (its own file and its sibling shards), folded in any
 * order. Only what transitions and idempotent submission need is kept: state, content digest and stream id.
 */
export class TurnTable {
  readonly #turns = new Map<string, KnownTurn>();
  /** Turn ids a `compacted` record lists as removed: readers drop every record of them (spec §10.2). */
  readonly #removed = new Set<string>();

  /** The turn, if known. */
  get(turnId: string): KnownTurn | undefined {
    return this.#turns.get(turnId);
  }

  /** Every known turn id with its state. */
  entries(): IterableIterator<[string, KnownTurn]> {
    return this.#turns.entries();
  }

  /** Folds one valid turn record (a `compacted` record forgets the turns it removed). */
  add(event: string, value: Readonly<Record<string, unknown>>): void {
    if (event === 'compacted') {
      const removed = value.removed_turn_ids;
      if (Array.isArray(removed))
        for (const id of removed)
          if (typeof id === 'string') {
            this.#turns.delete(id);
            this.#removed.add(id);
          }
      return;
    }
    if (!(event in TURN_RANK) || typeof value.turn_id !== 'string') return;
    const name = event as TurnEventName;
    let turn = this.#turns.get(value.turn_id);
    if (turn === undefined) {
      turn = { state: null, contentDigest: null, streamId: undefined };
      this.#turns.set(value.turn_id, turn);
    }
    turn.state = foldState(turn.state, name);
    if (name === 'submitted' && typeof value.content === 'string' && submittedDigest(turn) === null) {
      turn.contentDigest = contentDigest(value.content);
      const streamId = value.stream_id;
      turn.streamId = typeof streamId === 'string' || streamId === null ? streamId : undefined;
    }
  }

  /** True when a retention sweep removed the turn: a record of it would be dropped by every reader. */
  isRemoved(turnId: string): boolean {
    return this.#removed.has(turnId);
  }

  /** Inserts a turn the writer is submitting. */
  insert(turnId: string, turn: KnownTurn): void {
    this.#turns.set(turnId, turn);
  }

  /** Forgets a turn whose submission failed to write. */
  delete(turnId: string): void {
    this.#turns.delete(turnId);
  }
}
