import { type Finding, type FindingCode, makeFinding, TURN_EVENTS, type TurnEventName } from '@turnjournal/schema';
import { parseObject } from '../framing/decode-line.js';
import type { JournalRecord } from '../framing/read-journal.js';
import { explainInvalidIdentifier, isValidIdentifier } from '../store/identifiers.js';
import { canonicalJson, compareBytes, compareCodePoints } from './canonical-json.js';
import { ownString } from './own-string.js';
import {
  type RecordLocation,
  RecordMovedError,
  type RepresentativeRecord,
  readRecordBytes,
  representativeOf,
} from './representative.js';

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
  /** The turn id, copied off the line it was parsed from. */
  readonly id: string;
  /** The reading (see TurnFold) during which `terminalLine` was seen, and the line of its first terminal event. */
  terminalReading: number;
  terminalLine: number;
  readonly files: string[];
  readonly representatives: Partial<Record<TurnEventName, RepresentativeRecord>>;
  /**
   * Where every distinct record of an event name is, once the turn has a second record of that name; until then the
   * representative is the only distinct record. Absent on almost every turn.
   */
  distinct?: Partial<Record<TurnEventName, RecordLocation[]>>;
}

/**
 * The order-independent fold of spec §10: feed every turn record of one session, from every shard, in any order, then
 * call {@link TurnFold.finish}. It keeps per turn only the location and a small summary of one representative record
 * per event name, so memory follows the number of turns, not the size of the files or of the messages in them.
 *
 * Exact duplicates (records equal as JSON values, spec §4.6) can only be records of the same turn and event name, so
 * nothing is computed for the first record of each: when a second one arrives, the distinct records seen before are
 * read back from disk and compared with it, bytes first, then as canonical JSON. The comparison is exact, and its cost
 * falls on duplicates alone.
 */
export class TurnFold {
  readonly #sessionId: string;
  readonly #sessionIdValid: boolean;
  readonly #turns = new Map<string, TurnAccumulator>();
  readonly #removed = new Set<string>();
  readonly #findings: Finding[] = [];
  // Files are read one after the other: the file being read, and a count that changes whenever it does, so a turn's
  // first terminal line is known to belong to the current file's reading.
  #file: string | undefined;
  #reading = 0;
  // The turn of the previous record: a turn's records usually follow each other, so most records skip the map.
  #last: TurnAccumulator | undefined;

  /** @param sessionId the session whose records are folded. */
  constructor(sessionId: string) {
    this.#sessionId = sessionId;
    this.#sessionIdValid = isValidIdentifier(sessionId);
  }

  /** Adds one record read from a file of this session; records of other families or types are ignored. */
  add(record: JournalRecord, source: RecordSource): void {
    const { validation, value } = record;
    if (validation.status !== 'valid' || validation.classification.family !== 'turn') return;
    const event = validation.classification.type;
    const sessionId = value.session_id;
    if (typeof sessionId === 'string') {
      const valid = sessionId === this.#sessionId ? this.#sessionIdValid : isValidIdentifier(sessionId);
      if (!valid) {
        this.#report('invalid_session_id', explainInvalidIdentifier(sessionId), this.#where(record, source));
      } else if (sessionId !== this.#sessionId) {
        this.#report(
          'session_mismatch',
          `record names session "${sessionId}"; it is attributed to its file's session`,
          this.#where(record, source),
        );
      }
    }
    if (event === 'compacted') {
      const ids = value.removed_turn_ids;
      if (Array.isArray(ids)) for (const id of ids) if (typeof id === 'string') this.#removed.add(id);
      return;
    }
    if (!isTurnEvent(event)) return;
    const turn = this.#turn(value.turn_id as string, source.file);
    this.#checkOrderInFile(event, turn, record, source);

    if (!turn.files.includes(source.file)) turn.files.push(source.file);
    const current = turn.representatives[event];
    if (current === undefined) {
      turn.representatives[event] = representativeOf(record, source.file, sharedStreamId(turn, value.stream_id));
      return;
    }
    // A second record of this event name: an exact copy of a distinct record seen before, or a new distinct one.
    turn.distinct ??= {};
    const distinct = turn.distinct[event] ?? [current.location];
    turn.distinct[event] = distinct;
    if (distinct.some((location) => isSameRecord(location, record))) {
      this.#report(
        'duplicate_event',
        `an exact copy of the turn's "${event}" record; counted once`,
        this.#at(turn, record, source),
      );
      return;
    }
    this.#report(
      'conflicting_duplicate',
      `a second, different "${event}" record for the turn; the one with the smallest bytes represents it`,
      this.#at(turn, record, source),
    );
    const representative = representativeOf(record, source.file, sharedStreamId(turn, value.stream_id));
    distinct.push(representative.location);
    // The record with the smallest bytes represents the event (TJ-DERIVE-013); the current one is read back for that.
    if (compareBytes(record.bytes, readRecordBytes(current.location)) < 0) turn.representatives[event] = representative;
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

  #turn(turnId: string, file: string): TurnAccumulator {
    const last = this.#last;
    if (last !== undefined && last.id === turnId) return last;
    // The map is keyed by the copied id, which differs from the parsed one only when that has lone surrogates.
    let turn = this.#turns.get(turnId);
    if (turn === undefined) {
      // A copy of the id: the parsed string may share memory with the whole line (see ownString).
      const id = ownString(turnId);
      if (id !== turnId) turn = this.#turns.get(id);
      if (turn === undefined) {
        // `[file]`, not `[]` and a push: a pushed-to empty array reserves room for 17 files, and a turn has one or two.
        turn = { id, terminalReading: -1, terminalLine: 0, files: [file], representatives: {} };
        this.#turns.set(id, turn);
      }
    }
    this.#last = turn;
    return turn;
  }

  // event_after_terminal depends on line order within one file (TJ-DERIVE-009): records of a file arrive in order.
  #checkOrderInFile(event: TurnEventName, turn: TurnAccumulator, record: JournalRecord, source: RecordSource): void {
    if (this.#file !== source.file) {
      this.#file = source.file;
      this.#reading += 1;
    }
    const terminalLine = turn.terminalReading === this.#reading ? turn.terminalLine : undefined;
    if (RANK[event] === TERMINAL_RANK) {
      if (terminalLine === undefined) {
        turn.terminalReading = this.#reading;
        turn.terminalLine = record.line;
      }
    } else if (terminalLine !== undefined && record.line > terminalLine) {
      this.#report(
        'event_after_terminal',
        `"${event}" follows the turn's terminal event (line ${terminalLine}); ignored`,
        this.#at(turn, record, source),
      );
    }
  }

  // Locations are built only for findings: add() runs once per record.
  #where(record: JournalRecord, source: RecordSource) {
    return { file: source.file, line: record.line, offset: record.offset, session_id: this.#sessionId };
  }

  #at(turn: TurnAccumulator, record: JournalRecord, source: RecordSource) {
    return { ...this.#where(record, source), turn_id: turn.id };
  }

  #report(code: FindingCode, message: string, location: Parameters<typeof makeFinding>[2]): void {
    this.#findings.push(makeFinding(code, message, location));
  }
}

/** True when the record is equal as a JSON value (spec §4.6) to the one stored at `location`: same bytes, or same canonical JSON. */
function isSameRecord(location: RecordLocation, record: JournalRecord): boolean {
  const stored = readRecordBytes(location);
  if (compareBytes(stored, record.bytes) === 0) return true;
  const parsed = parseObject(stored);
  if (!parsed.ok) throw new RecordMovedError(location, parsed.reason);
  return canonicalJson(parsed.value) === canonicalJson(record.value);
}

/**
 * The `stream_id` string another representative of the turn already holds, when the record's is the same (a turn's
 * records usually share it): one copy per turn instead of one per record.
 */
function sharedStreamId(turn: TurnAccumulator, streamId: unknown): string | undefined {
  if (typeof streamId !== 'string') return undefined;
  for (const event of TURN_EVENTS) {
    const held = turn.representatives[event]?.summary.streamId;
    if (held === streamId) return held;
  }
  return undefined;
}

function isTurnEvent(event: string): event is TurnEventName {
  return Object.hasOwn(RANK, event);
}
