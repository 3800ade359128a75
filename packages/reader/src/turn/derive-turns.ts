// Over 450 lines: one algorithm — the order-independent turn fold of spec §10 (TurnFold), whose per-record path,
// duplicate detection and finish step share the arena's columns and must be read together; the turn objects, the
// arena, the id index and the digests are already in modules of their own.
import { type Finding, type FindingCode, makeFinding, TURN_EVENTS, type TurnEventName } from '@turnjournal/schema';
import { readRecordBytes } from '../file/load-record.js';
import { parseObject } from '../framing/decode-line.js';
import type { JournalRecord } from '../framing/read-journal.js';
import { DEFAULT_MAX_FINDINGS_PER_CODE } from '../store/finding-sink.js';
import { explainInvalidIdentifier, isValidIdentifier } from '../store-format/identifiers.js';
import { hashBytes } from './byte-pool.js';
import { canonicalDigest, compareBytes } from './canonical-json.js';
import { DigestSet } from './digest-set.js';
import { flatCopy } from './flat-copy.js';
import { arenaHandedOver, claimArena, type FoldArena, ReadingLines } from './fold-arena.js';
import { EVENT_INDEX, type FoldContext, FoldedTurn, SUBMITTED, TERMINAL, TurnList } from './folded-turn.js';
import { IdIndex } from './id-index.js';
import { PagedIndex } from './paged-index.js';
import { type RecordLocation, type RepresentativeRecord, recordMovedError } from './representative.js';
import type { RepresentativeTable } from './representative-table.js';

/** The derived state of a turn (spec §10.1). */
export type TurnState = TurnEventName;

/** The number of turns from which a fold whose arena lists turns lists them (see FoldArena.listsTurns). */
const LIST_FROM_TURNS = 64;

// The turn list of each derivation whose fold made no turn objects (see FoldArena.listsTurns).
const turnLists = new WeakMap<DerivedSession, TurnList>();

/**
 * The turns of a derivation as a {@link TurnList}, when its fold's arena lists turns instead of making them (its
 * `turns` is then empty); undefined otherwise. Internal to the reader.
 */
export function turnListOf(derived: DerivedSession): TurnList | undefined {
  return turnLists.get(derived);
}

// The `omitted` of a fold that left nothing out: one frozen object for every such session.
const NOTHING_OMITTED: Readonly<Record<string, number>> = Object.freeze({});

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
  /**
   * The representative record of each event name seen (TJ-DERIVE-013): where it is and a summary (see `loadRecord`).
   * On the turns {@link TurnFold.finish} returns it is built anew on each access, from the fold's table, and not kept:
   * a report that reads the events of a million turns must not keep a million copies (read it once per use). It is
   * an accessor, not an own property, so a spread or `Object.keys` of the turn leaves it out (`JSON.stringify` keeps
   * it).
   */
  readonly events: Readonly<Partial<Record<TurnEventName, RepresentativeRecord>>>;
  /** The files holding the turn's records (recovery must not touch a turn whose file a live writer holds). */
  readonly files: readonly string[];
}

/** The derivation of one session's turns. */
export interface DerivedSession {
  /** The session id. */
  readonly sessionId: string;
  /**
   * Every turn, in code-point order of `turn_id` (TJ-DERIVE-007); empty from a fold that keeps no turns
   * ({@link TurnFoldOptions.keepTurns}).
   */
  readonly turns: readonly DerivedTurn[];
  /** The number of turns derived: `turns.length` when the turns are kept. */
  readonly turnCount: number;
  /**
   * Derivation findings: duplicates, conflicts, orphans, events after terminal, session mismatches. At most
   * {@link TurnFoldOptions.maxFindingsPerCode} per code and file; the rest are counted in `omitted`.
   */
  readonly findings: readonly Finding[];
  /**
   * Findings left out by the cap, per code. Counted as they arise, so a count may include findings about turns that a
   * `compacted` record later removed.
   */
  readonly omitted: Readonly<Record<string, number>>;
}

/** Options of a {@link TurnFold}. */
export interface TurnFoldOptions {
  /**
   * Findings kept per code and file (default 1,000, as the store check keeps): hostile input can produce one per
   * record, and a million finding objects would be most of the fold's memory (spec TJ-AUDIT-013).
   */
  readonly maxFindingsPerCode?: number;
  /**
   * False to derive the findings and the number of turns only: `turns` is then empty, and the fold keeps no summary
   * of any record (content excerpts, `created_at`, ...) and no object per turn, only what tells a duplicate from a
   * conflict. For a check whose caller reads its verdict, not its turns. True by default.
   */
  readonly keepTurns?: boolean;
  /**
   * Reads back the bytes of a record the fold has seen, when a second record of its turn and event name arrives (see
   * {@link TurnFold}): from the file at `location.file` by default. A caller that feeds records read from another
   * store (spec §19) reads them back from there.
   */
  readonly readRecord?: (location: RecordLocation) => Uint8Array;
}

/**
 * The order-independent fold of spec §10: feed every turn record of one session, from every shard, in any order, then
 * call {@link TurnFold.finish} once. It keeps per turn only its id (as UTF-8 bytes) and the location and a small
 * summary of one representative record per event name (the location alone when the turns are not kept, see
 * {@link TurnFoldOptions.keepTurns}), in typed arrays rather than objects and strings, so memory follows the number of
 * turns, not the size of the files or of the messages in them, and the garbage collector has little to trace.
 *
 * Exact duplicates (records equal as JSON values, spec §4.6) can only be records of the same turn and event name, so
 * nothing is computed for the first record of each: when a second one arrives, the first is read back from disk, and
 * from then on every distinct record of that name is known by the SHA-256 digest of its canonical JSON (see
 * canonicalDigest) in one set for the whole fold. Each duplicate costs one digest and one look-up, so a turn with a
 * million distinct records is derived in linear time, and the cost falls on duplicates alone.
 */
export class TurnFold {
  readonly #sessionId: string;
  readonly #sessionIdValid: boolean;
  // Every turn has a place, in the order first seen, and a number in the arena (see #number), where its
  // id is kept as UTF-8 bytes (FoldArena.ids) and the rest in columns: no object and no string per turn while records
  // arrive, and none at all when the turns are not kept. While ids come in increasing code-point order (turn ids are
  // usually time-prefixed, so a journal holds them in order), a new id is known to be new by comparing it with the
  // last one, and an earlier one is found by binary search: no hashing. The first id out of order builds the index.
  #count = 0;
  // The number of the turn at place 0; while the fold's turns are numbered one after the other (one fold reads at a
  // time, which a store of one session always does), a turn's number is that plus its place, and #numbers is not made.
  #firstNumber = 0;
  #numbers: PagedIndex | undefined;
  #byId: IdIndex | undefined;
  // The id of the record being added, as UTF-8 (code-point order is byte order; a lone surrogate is written as U+FFFD,
  // as ownString would keep it).
  #scratch = Buffer.allocUnsafe(64);
  readonly #keepTurns: boolean;
  readonly #shared: FoldArena;
  // False when the fold shares its arena with others (see withArena).
  readonly #ownArena: boolean;
  readonly #table: RepresentativeTable;
  // What every turn of the fold refers to for its session id and its arena.
  readonly #context: FoldContext;
  // The look-ups below are made on first use: a store of many small sessions has a fold per session, most of them
  // without a finding or a compaction record.
  #removed: Set<string> | undefined;
  readonly #findings: Finding[] = [];
  readonly #maxFindings: number;
  // Findings kept per code and file, and those left out per code.
  #findingCounts: Map<string, number> | undefined;
  #omitted: Map<string, number> | undefined;
  // Created by the first duplicate: most sessions have none, and a store of many small sessions would hold an empty
  // set per session.
  #digests: DigestSet | undefined;
  // The bytes of the representative last compared with a distinct duplicate: the duplicates of one turn event usually
  // follow each other, and each would otherwise read the representative back from disk.
  #representative: { slot: number; bytes: Uint8Array } | undefined;
  // Files are read one after the other: the file being read, and the numbering of lines across readings that tells
  // whether a turn's first terminal line belongs to the current reading (see ReadingLines).
  #file: string | undefined;
  readonly #lines = new ReadingLines();
  // The lists of files of the fold's turns, by number (see FoldArena.fileList): `[#file]` for every turn first seen in
  // it, at #fileList, and one list for each turn of several files.
  readonly #fileLists: (readonly string[])[] = [];
  #fileList = 0;
  // The place and id (a flat copy) of the previous record's turn: a turn's records usually follow each other, so most
  // skip the look-up.
  #last = -1;
  #lastId = '';
  #result: DerivedSession | undefined;
  readonly #readRecord: (location: RecordLocation) => Uint8Array;

  /**
   * @param sessionId the session whose records are folded.
   * @param options the finding cap.
   */
  constructor(sessionId: string, options: TurnFoldOptions = {}) {
    this.#maxFindings = options.maxFindingsPerCode ?? DEFAULT_MAX_FINDINGS_PER_CODE;
    this.#readRecord = options.readRecord ?? readRecordBytes;
    this.#keepTurns = options.keepTurns ?? true;
    this.#ownArena = !arenaHandedOver();
    this.#shared = claimArena(this.#keepTurns);
    this.#table = this.#shared.table;
    // A flat copy: every record's session_id is compared with it (see flatCopy).
    this.#sessionId = flatCopy(sessionId);
    this.#sessionIdValid = isValidIdentifier(sessionId);
    this.#context = { sessionId: this.#sessionId, arena: this.#shared, fileLists: this.#fileLists };
  }

  /**
   * Adds one record read from a file of this session; records of other families or types are ignored.
   * @throws Error after {@link TurnFold.finish}: the turns it returned still read their representatives from the fold.
   */
  add(record: JournalRecord, source: RecordSource): void {
    if (this.#result !== undefined) throw new Error('TurnFold.add() after finish(): a fold derives its turns once');
    const { validation, value } = record;
    if (validation.status !== 'valid') return;
    const { classification } = validation;
    if (classification.family !== 'turn') return;
    // The name as v1 defines it rather than as parsed: a constant, quick to compare and to look up.
    const event = classification.definition?.type ?? classification.type;
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
      if (Array.isArray(ids)) {
        this.#removed ??= new Set();
        for (const id of ids) if (typeof id === 'string') this.#removed.add(id);
      }
      return;
    }
    const index = EVENT_INDEX.get(event);
    if (index === undefined) return;
    if (this.#file !== source.file) {
      this.#file = source.file;
      // Past 2^31 lines the numbering starts over: the terminal lines of readings done are forgotten.
      if (!this.#lines.next())
        for (let place = 0; place < this.#count; place += 1) this.#shared.clearTerminalLine(this.#number(place));
      this.#fileList = this.#fileLists.push([source.file]) - 1;
    }
    const place = this.#place(value.turn_id as string);
    const arena = this.#shared;
    const turn = this.#number(place);
    this.#checkOrderInFile(index, place, turn, record, source);
    // The files of a turn are part of the turns kept, and of nothing else.
    const files = this.#keepTurns ? arena.fileList.get(turn) : this.#fileList;
    if (files !== this.#fileList) {
      const list = this.#fileLists[files] as readonly string[];
      if (!list.includes(source.file)) arena.fileList.set(turn, this.#fileLists.push([...list, source.file]) - 1);
    }
    const bit = 1 << index;
    if ((arena.eventBits(turn) & bit) === 0) {
      this.#table.set(arena.takeSlot(turn, index), record, source.file);
      return;
    }
    const slot = arena.slotOf(turn, index);
    // A second record of this event name: an exact copy of a distinct record seen before, or a new distinct one.
    const name = TURN_EVENTS[index] as TurnEventName;
    const representative = this.#representativeBytes(slot);
    this.#digests ??= new DigestSet();
    const digests = this.#digests;
    if (arena.markDigested(turn, bit)) {
      // Until now the representative was the only record of the name: it becomes the first known distinct one.
      digests.add(slot, digestOfStored(this.#table.location(slot), representative));
    }
    // The same bytes are the same value, without hashing: the common duplicate is a repeated write.
    const copy = compareBytes(record.bytes, representative) === 0 || !digests.add(slot, canonicalDigest(record.value));
    if (copy) {
      this.#report(
        'duplicate_event',
        `an exact copy of the turn's "${name}" record; counted once`,
        this.#at(place, record, source),
      );
      return;
    }
    this.#report(
      'conflicting_duplicate',
      `a second, different "${name}" record for the turn; the one with the smallest bytes represents it`,
      this.#at(place, record, source),
    );
    // The record with the smallest bytes represents the event (TJ-DERIVE-013).
    if (compareBytes(record.bytes, representative) < 0) {
      this.#table.set(slot, record, source.file);
      // A copy: the record's bytes may be a view of a whole read buffer.
      this.#representative = { slot, bytes: Uint8Array.from(record.bytes) };
    }
  }

  /** The bytes of the representative at `slot`, read back (see TurnFoldOptions.readRecord) unless last read. */
  #representativeBytes(slot: number): Uint8Array {
    if (this.#representative?.slot !== slot)
      this.#representative = { slot, bytes: this.#readRecord(this.#table.location(slot)) };
    return this.#representative.bytes;
  }

  /**
   * Derives every turn and returns them with the derivation findings. It ends the fold: later calls return the same
   * derivation, and {@link TurnFold.add} throws.
   */
  finish(): DerivedSession {
    this.#result ??= this.#derive();
    return this.#result;
  }

  #derive(): DerivedSession {
    const removed = this.#removed;
    const arena = this.#shared;
    // A fold of its own arena reads no more: the reading columns can go before the turns are made. A shared arena's
    // owner releases them when its last fold finishes (see SessionFolds).
    if (this.#ownArena) arena.releaseReadingColumns();
    // Made at its final size (an upper bound: compacted turns are left out, and the length cut after): grown by `push`,
    // a list of two million turns left the lists it outgrew to the garbage collector at the peak.
    // A small session's turns are made as objects even then: a list and its typed array cost more than a few turns.
    const listed = this.#keepTurns && arena.listsTurns && this.#count >= LIST_FROM_TURNS;
    const turns: FoldedTurn[] = this.#keepTurns && !listed ? new Array(this.#count) : [];
    // The numbers of the turns of a listing fold, in the same order.
    const numbers = listed ? new Uint32Array(this.#count) : undefined;
    let kept = 0;
    let count = 0;
    for (let place = 0; place < this.#count; place += 1) {
      const number = this.#number(place);
      if (removed?.has(arena.ids.get(number))) continue;
      count += 1;
      const bits = arena.eventBits(number);
      // The id is made into a string only for a finding the cap keeps: two million orphans keep a thousand.
      if ((bits & TERMINAL) === TERMINAL && this.#counts('terminal_conflict', undefined))
        this.#findings.push(
          makeFinding('terminal_conflict', 'the turn has both completed and interrupted; completed wins', {
            session_id: this.#sessionId,
            turn_id: arena.ids.get(number),
          }),
        );
      if ((bits & SUBMITTED) === 0 && this.#counts('orphan_turn', undefined))
        this.#findings.push(
          makeFinding('orphan_turn', 'the turn has events but no submitted record', {
            session_id: this.#sessionId,
            turn_id: arena.ids.get(number),
          }),
        );
      if (!this.#keepTurns) continue;
      // A turn of several files gets its list sorted; the turns of one file share theirs.
      const files = this.#fileLists[arena.fileList.get(number)] as readonly string[];
      if (files.length > 1) arena.fileList.set(number, this.#fileLists.push([...files].sort()) - 1);
      if (numbers !== undefined) numbers[kept] = number;
      else turns[kept] = new FoldedTurn(number, this.#context);
      kept += 1;
    }
    turns.length = numbers === undefined ? kept : 0;
    const findings =
      removed === undefined
        ? this.#findings
        : this.#findings.filter((f) => f.turn_id === undefined || !removed.has(f.turn_id));
    // Turns first seen in order are sorted already; UTF-8 bytes sort as code points do (TJ-DERIVE-007).
    if (this.#byId !== undefined) turns.sort((x, y) => arena.ids.compareEntries(x.index, y.index));
    const list = numbers?.subarray(0, kept);
    if (this.#byId !== undefined) list?.sort((x, y) => arena.ids.compareEntries(x, y));
    // The turns hold what they need: the look-ups and the digests can go.
    this.#byId = undefined;
    this.#digests = undefined;
    this.#last = -1;
    this.#lastId = '';
    this.#representative = undefined;
    const derived: DerivedSession = {
      sessionId: this.#sessionId,
      turns,
      turnCount: count,
      findings,
      omitted: this.#omitted === undefined ? NOTHING_OMITTED : Object.fromEntries(this.#omitted),
    };
    if (list !== undefined) turnLists.set(derived, new TurnList(list, this.#context));
    return derived;
  }

  /** The number in the arena of the turn at `place`. */
  #number(place: number): number {
    return this.#numbers === undefined ? this.#firstNumber + place : this.#numbers.get(place);
  }

  /** The place of the turn with this id, a new one when the id is new. */
  #place(turnId: string): number {
    if (this.#last >= 0 && turnId === this.#lastId) return this.#last;
    if (this.#scratch.length < turnId.length * 3) this.#scratch = Buffer.allocUnsafe(turnId.length * 3);
    const scratch = this.#scratch;
    const length = scratch.write(turnId, 0, 'utf8');
    const arena = this.#shared;
    let place = this.#byId === undefined ? this.#findInOrder(length) : -1;
    const hash = this.#byId === undefined ? 0 : hashBytes(scratch, 0, length);
    if (this.#byId !== undefined)
      place = this.#byId.find(hash, (p) => arena.ids.compare(this.#number(p), scratch, length) === 0);
    if (place < 0) {
      place = this.#count;
      this.#count += 1;
      const number = arena.addTurn(scratch, length);
      if (place === 0) this.#firstNumber = number;
      else if (this.#numbers === undefined && number !== this.#firstNumber + place) {
        // Another fold numbered turns in between: from now on the numbers are kept.
        this.#numbers = new PagedIndex();
        for (let earlier = 0; earlier < place; earlier += 1) this.#numbers.set(earlier, this.#firstNumber + earlier);
      }
      this.#numbers?.set(place, number);
      if (this.#keepTurns) arena.fileList.set(number, this.#fileList);
      this.#byId?.add(place, hash);
    }
    this.#last = place;
    // The parsed id itself, no copy: it may keep its line alive, but only the one line of the latest turn.
    this.#lastId = turnId;
    return place;
  }

  /**
   * The place of the turn whose id is in #scratch while ids have come in order, or -1 when it is new. A new id below
   * the last one ends the ordered mode: the index is built, and the caller adds the turn to it.
   */
  #findInOrder(length: number): number {
    const ids = this.#shared.ids;
    const scratch = this.#scratch;
    // The order of the id at a place and the new one.
    const order = (place: number) => ids.compare(this.#number(place), scratch, length);
    let low = 0;
    let high = this.#count;
    // The common case first: an id above every id seen.
    if (high === 0 || order(high - 1) < 0) return -1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const found = order(middle);
      if (found === 0) return middle;
      if (found > 0) high = middle;
      else low = middle + 1;
    }
    const byId = new IdIndex((place) => ids.hash(this.#number(place)));
    for (let place = 0; place < this.#count; place += 1) byId.add(place, ids.hash(this.#number(place)));
    this.#byId = byId;
    return -1;
  }

  // event_after_terminal depends on line order within one file (TJ-DERIVE-009): records of a file arrive in order.
  #checkOrderInFile(index: number, place: number, turn: number, record: JournalRecord, source: RecordSource): void {
    const terminalLine = this.#shared.terminalLineIn(turn, this.#lines.base);
    if (((1 << index) & TERMINAL) !== 0) {
      if (terminalLine === undefined) this.#lines.set(this.#shared, turn, record.line);
    } else if (terminalLine !== undefined && record.line > terminalLine) {
      this.#report(
        'event_after_terminal',
        `"${TURN_EVENTS[index]}" follows the turn's terminal event (line ${terminalLine}); ignored`,
        this.#at(place, record, source),
      );
    }
  }

  // Locations are built only for findings: add() runs once per record.
  #where(record: JournalRecord, source: RecordSource) {
    return { file: source.file, line: record.line, offset: record.offset, session_id: this.#sessionId };
  }

  #at(place: number, record: JournalRecord, source: RecordSource) {
    return { ...this.#where(record, source), turn_id: this.#shared.ids.get(this.#number(place)) };
  }

  /** Keeps a finding, or only counts it once its code and file have {@link TurnFoldOptions.maxFindingsPerCode}. */
  #report(code: FindingCode, message: string, location: Parameters<typeof makeFinding>[2]): void {
    if (this.#counts(code, location?.file)) this.#findings.push(makeFinding(code, message, location));
  }

  /** Counts a finding of `code` about `file`: true when the cap keeps it, false when only its count is kept. */
  #counts(code: FindingCode, file: string | undefined): boolean {
    const key = `${code}\u0000${file ?? ''}`;
    this.#findingCounts ??= new Map();
    const counts = this.#findingCounts;
    const kept = counts.get(key) ?? 0;
    if (kept >= this.#maxFindings) {
      this.#omitted ??= new Map();
      this.#omitted.set(code, (this.#omitted.get(code) ?? 0) + 1);
      return false;
    }
    counts.set(key, kept + 1);
    return true;
  }
}

/** The canonical digest of the record whose bytes were read back from `location`. */
function digestOfStored(location: RecordLocation, bytes: Uint8Array): Uint8Array {
  const parsed = parseObject(bytes);
  if (!parsed.ok) throw recordMovedError(location, parsed.reason);
  return canonicalDigest(parsed.value);
}
