import { createHash } from 'node:crypto';
import { type Finding, type FindingCode, makeFinding, TURN_EVENTS, type TurnEventName } from '@turnjournal/schema';
import type { JournalRecord } from '../framing/read-journal.js';
import { canonicalJson, compareBytes, compareCodePoints } from './canonical-json.js';

/** The derived state of a turn (spec §10.1). */
export type TurnState = TurnEventName;

const RANK: Readonly<Record<TurnEventName, number>> = {
  submitted: 0,
  worker_started: 1,
  assistant_started: 2,
  completed: 3,
  interrupted: 3,
};
const TERMINAL_RANK = 3;

/** Where a record came from. */
export interface RecordSource {
  /** The file the record was read from. */
  readonly file: string;
  /** The session the file belongs to; records are attributed to it (TJ-FAM-018). */
  readonly sessionId: string;
}

/** One turn as derived from every record of its session (spec §10.5). */
export interface DerivedTurn {
  /** The turn id. */
  readonly turnId: string;
  /** The session the turn belongs to. */
  readonly sessionId: string;
  /** Its state: the highest-ranked event; `completed` wins over `interrupted`. */
  readonly state: TurnState;
  /** True when the turn has events but no `submitted` (TJ-DERIVE-012). */
  readonly orphan: boolean;
  /** True once the state is `completed` or `interrupted`. */
  readonly terminal: boolean;
  /** The representative record of each event name seen (TJ-DERIVE-013), unknown members included. */
  readonly events: Readonly<Partial<Record<TurnEventName, Record<string, unknown>>>>;
  /** The files holding the turn's records (recovery must not touch a turn whose file a live writer holds). */
  readonly files: readonly string[];
}

/** The derivation of one session's turns. */
export interface DerivedSession {
  /** The session id. */
  readonly sessionId: string;
  /** Every turn, in code-point order of `turn_id` (TJ-DERIVE-007). */
  readonly turns: readonly DerivedTurn[];
  /** Derivation findings: duplicates, conflicts, orphans, events after terminal, session mismatches. */
  readonly findings: readonly Finding[];
}

interface Representative {
  bytes: Uint8Array;
  value: Record<string, unknown>;
}

interface TurnAccumulator {
  readonly files: Set<string>;
  readonly seen: Map<TurnEventName, Set<string>>;
  readonly representatives: Map<TurnEventName, Representative>;
}

/**
 * The order-independent fold of spec §10: feed every turn record of one session, from every shard, in any order, then
 * call {@link TurnFold.finish}. It keeps per turn only one representative record per event name and a 16-byte digest of
 * each distinct record, so memory follows the number of turns, not the size of the files.
 */
export class TurnFold {
  readonly #sessionId: string;
  readonly #turns = new Map<string, TurnAccumulator>();
  readonly #removed = new Set<string>();
  readonly #findings: Finding[] = [];
  readonly #terminalLineByFileTurn = new Map<string, number>();

  /** @param sessionId the session whose records are folded. */
  constructor(sessionId: string) {
    this.#sessionId = sessionId;
  }

  /** Adds one record read from a file of this session; records of other families or types are ignored. */
  add(record: JournalRecord, source: RecordSource): void {
    const { validation, value } = record;
    if (validation.status !== 'valid' || validation.classification.family !== 'turn') return;
    const event = validation.classification.type;
    const where = { file: source.file, line: record.line, offset: record.offset, session_id: this.#sessionId };
    if (typeof value.session_id === 'string' && value.session_id !== this.#sessionId) {
      this.#report(
        'session_mismatch',
        `record names session "${value.session_id}"; it is attributed to its file's session`,
        where,
      );
    }
    if (event === 'compacted') {
      const ids = value.removed_turn_ids;
      if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'string') this.#removed.add(id);
      return;
    }
    if (!isTurnEvent(event)) return;
    const turnId = value.turn_id as string;
    const at = { ...where, turn_id: turnId };
    this.#checkOrderInFile(event, turnId, source.file, record.line, at);

    const turn = this.#turn(turnId);
    turn.files.add(source.file);
    const digest = createHash('sha256').update(canonicalJson(value)).digest('base64').slice(0, 22);
    const seen = turn.seen.get(event) ?? new Set<string>();
    if (seen.has(digest)) {
      this.#report('duplicate_event', `an exact copy of the turn's "${event}" record; counted once`, at);
      return;
    }
    seen.add(digest);
    turn.seen.set(event, seen);
    const current = turn.representatives.get(event);
    if (current !== undefined) {
      this.#report(
        'conflicting_duplicate',
        `a second, different "${event}" record for the turn; the one with the smallest bytes represents it`,
        at,
      );
    }
    if (current === undefined || compareBytes(record.bytes, current.bytes) < 0) {
      turn.representatives.set(event, { bytes: Uint8Array.from(record.bytes), value });
    }
  }

  /** Derives every turn and returns them with the derivation findings. */
  finish(): DerivedSession {
    const turns: DerivedTurn[] = [];
    const findings = this.#findings.filter((f) => f.turn_id === undefined || !this.#removed.has(f.turn_id));
    for (const [turnId, turn] of this.#turns) {
      if (this.#removed.has(turnId)) continue;
      const events: Partial<Record<TurnEventName, Record<string, unknown>>> = {};
      let rank = -1;
      for (const [event, representative] of turn.representatives) {
        events[event] = representative.value;
        rank = Math.max(rank, RANK[event]);
      }
      const state: TurnState =
        rank === TERMINAL_RANK
          ? events.completed !== undefined
            ? 'completed'
            : 'interrupted'
          : (TURN_EVENTS.find((e) => RANK[e] === rank) ?? 'submitted');
      const orphan = events.submitted === undefined;
      const where = { session_id: this.#sessionId, turn_id: turnId };
      if (events.completed !== undefined && events.interrupted !== undefined) {
        findings.push(
          makeFinding('terminal_conflict', 'the turn has both completed and interrupted; completed wins', where),
        );
      }
      if (orphan) findings.push(makeFinding('orphan_turn', 'the turn has events but no submitted record', where));
      turns.push({
        turnId,
        sessionId: this.#sessionId,
        state,
        orphan,
        terminal: rank === TERMINAL_RANK,
        events,
        files: [...turn.files].sort(),
      });
    }
    turns.sort((x, y) => compareCodePoints(x.turnId, y.turnId));
    return { sessionId: this.#sessionId, turns, findings };
  }

  #turn(turnId: string): TurnAccumulator {
    let turn = this.#turns.get(turnId);
    if (turn === undefined) {
      turn = { files: new Set(), seen: new Map(), representatives: new Map() };
      this.#turns.set(turnId, turn);
    }
    return turn;
  }

  // event_after_terminal depends on line order within one file (TJ-DERIVE-009): records of a file arrive in order.
  #checkOrderInFile(
    event: TurnEventName,
    turnId: string,
    file: string,
    line: number,
    at: Parameters<typeof makeFinding>[2],
  ): void {
    const key = `${file}\u0000${turnId}`;
    const terminalLine = this.#terminalLineByFileTurn.get(key);
    if (RANK[event] === TERMINAL_RANK) {
      if (terminalLine === undefined) this.#terminalLineByFileTurn.set(key, line);
    } else if (terminalLine !== undefined && line > terminalLine) {
      this.#report(
        'event_after_terminal',
        `"${event}" follows the turn's terminal event (line ${terminalLine}); ignored`,
        at,
      );
    }
  }

  #report(code: FindingCode, message: string, location: Parameters<typeof makeFinding>[2]): void {
    this.#findings.push(makeFinding(code, message, location));
  }
}

function isTurnEvent(event: string): event is TurnEventName {
  return Object.hasOwn(RANK, event);
}
