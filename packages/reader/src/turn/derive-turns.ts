import { createHash } from 'node:crypto';
import { type Finding, type FindingCode, makeFinding, TURN_EVENTS, type TurnEventName } from '@turnjournal/schema';
import type { JournalRecord } from '../framing/read-journal.js';
import { explainInvalidIdentifier, isValidIdentifier } from '../store/identifiers.js';
import { canonicalJson, compareBytes, compareCodePoints } from './canonical-json.js';
import { ownString } from './own-string.js';
import { type RepresentativeRecord, readRecordBytes, representativeOf } from './representative.js';

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
  /** The representative record of each event name seen (TJ-DERIVE-013): where it is and a summary (see `loadRecord`). */
  readonly events: Readonly<Partial<Record<TurnEventName, RepresentativeRecord>>>;
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

// Plain arrays and objects rather than Maps and Sets: a turn has a handful of records, and a collection per turn costs
// hundreds of bytes, which dominates memory on journals with millions of turns.
interface TurnAccumulator {
  readonly files: string[];
  /** `<event>:<digest>` of every distinct record seen. */
  readonly seen: string[];
  readonly representatives: Partial<Record<TurnEventName, RepresentativeRecord>>;
}

/**
 * The order-independent fold of spec §10: feed every turn record of one session, from every shard, in any order, then
 * call {@link TurnFold.finish}. It keeps per turn only the location and a small summary of one representative record
 * per event name, and a 16-byte digest of each distinct record, so memory follows the number of turns, not the size of
 * the files or of the messages in them.
 */
export class TurnFold {
  readonly #sessionId: string;
  readonly #turns = new Map<string, TurnAccumulator>();
  readonly #removed = new Set<string>();
  readonly #findings: Finding[] = [];
  // Line of the first terminal event per turn, for the file being read: files are read one after the other.
  #terminalLines: { file: string; lines: Map<string, number> } = { file: '', lines: new Map() };

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
    if (typeof value.session_id === 'string' && !isValidIdentifier(value.session_id)) {
      this.#report('invalid_session_id', explainInvalidIdentifier(value.session_id), where);
    } else if (typeof value.session_id === 'string' && value.session_id !== this.#sessionId) {
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
    const turnId = ownString(value.turn_id as string);
    const at = { ...where, turn_id: turnId };
    this.#checkOrderInFile(event, turnId, source.file, record.line, at);

    const turn = this.#turn(turnId);
    if (!turn.files.includes(source.file)) turn.files.push(source.file);
    const digest = `${event}:${createHash('sha256').update(canonicalJson(value)).digest().toString('base64', 0, 16)}`;
    if (turn.seen.includes(digest)) {
      this.#report('duplicate_event', `an exact copy of the turn's "${event}" record; counted once`, at);
      return;
    }
    turn.seen.push(digest);
    const current = turn.representatives[event];
    if (current !== undefined) {
      this.#report(
        'conflicting_duplicate',
        `a second, different "${event}" record for the turn; the one with the smallest bytes represents it`,
        at,
      );
    }
    // Only a second distinct record of the same event needs the first one's bytes; it is read back from disk then.
    if (current === undefined || compareBytes(record.bytes, readRecordBytes(current.location)) < 0) {
      turn.representatives[event] = representativeOf(record, source.file);
    }
  }

  /** Derives every turn and returns them with the derivation findings. */
  finish(): DerivedSession {
    const turns: DerivedTurn[] = [];
    const findings = this.#findings.filter((f) => f.turn_id === undefined || !this.#removed.has(f.turn_id));
    for (const [turnId, turn] of this.#turns) {
      if (this.#removed.has(turnId)) continue;
      const events: Partial<Record<TurnEventName, RepresentativeRecord>> = {};
      let rank = -1;
      for (const event of TURN_EVENTS) {
        const representative = turn.representatives[event];
        if (representative === undefined) continue;
        events[event] = representative;
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
      turn = { files: [], seen: [], representatives: {} };
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
    if (this.#terminalLines.file !== file) this.#terminalLines = { file, lines: new Map() };
    const terminalLine = this.#terminalLines.lines.get(turnId);
    if (RANK[event] === TERMINAL_RANK) {
      if (terminalLine === undefined) this.#terminalLines.lines.set(turnId, line);
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
