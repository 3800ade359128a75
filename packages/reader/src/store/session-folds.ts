import type { DerivedSession, DerivedTurn } from '../turn/derive-turns.js';
import { TurnFold, type TurnFoldOptions, turnListOf } from '../turn/derive-turns.js';
import { type FoldArena, withArena } from '../turn/fold-arena.js';
import type { StoreFile } from './store-listing.js';

// Shared by every session that has none: a store of 100,000 clean sessions would otherwise keep two empty arrays each.
const NO_TURNS: readonly never[] = Object.freeze([]);
const NO_FINDINGS: readonly never[] = Object.freeze([]);
const NO_FILES: readonly never[] = Object.freeze([]);
/** A finished session's derivation and the files it was read from, as `StoreCheck.sessions` lists them. */
export type CheckedSession = DerivedSession & { readonly files: readonly string[] };

/** A session's turns as a caller walks them: an array, or a list that makes each turn on iteration. */
export type TurnsOf = (session: {
  readonly turns: readonly DerivedTurn[];
}) => Iterable<DerivedTurn> & { readonly length: number };

// The turn lists of the sessions whose arena lists turns (see FoldArena.listsTurns), by the session's object.
const listed = new WeakMap<object, Iterable<DerivedTurn> & { readonly length: number }>();

/**
 * The turns of a session a store check made: its `turns`, or, when the check's arena lists turns instead of making
 * them, its turn list. Internal to the reader.
 */
export const turnsOf: TurnsOf = (session) => listed.get(session) ?? session.turns;

/**
 * The turn folds of a store check, one per session, each finished as soon as the last file that can hold its records
 * has been read: a fold holds its look-ups, finding counters and buffers while it reads, and a store of 100,000
 * sessions would otherwise hold 100,000 open folds until its last file (issue 11: 100 k session files). A file's
 * session is known from its name (see `sessionOf`), so which file is a session's last is known before reading starts.
 * Internal to the reader.
 */
export class SessionFolds {
  readonly #arena: FoldArena;
  readonly #options: TurnFoldOptions;
  readonly #sessionOf: (file: StoreFile) => string;
  // Files of each session not read yet; a session leaves the map with its last file.
  readonly #unread = new Map<string, number>();
  readonly #open = new Map<string, TurnFold>();
  // The turn journals read so far of each session not finished yet, in the order read (the discovery's).
  readonly #files = new Map<string, string[]>();
  readonly #finished: CheckedSession[] = [];
  readonly #released: (files: readonly string[]) => void;

  /**
   * @param files every journal the check will read, in any order (state documents are left out by the caller).
   * @param sessionOf the session a journal's turn records are folded into, from its name.
   * @param released told the turn journals of each session whose fold finished: no record of them is read back again.
   */
  constructor(
    files: readonly StoreFile[],
    sessionOf: (file: StoreFile) => string,
    arena: FoldArena,
    options: TurnFoldOptions,
    released: (files: readonly string[]) => void = () => undefined,
  ) {
    this.#released = released;
    this.#arena = arena;
    this.#options = options;
    this.#sessionOf = sessionOf;
    for (const file of files) {
      const sessionId = sessionOf(file);
      this.#unread.set(sessionId, (this.#unread.get(sessionId) ?? 0) + 1);
    }
  }

  /** The open fold of a session, made on its first turn record. */
  foldOf(sessionId: string): TurnFold {
    let fold = this.#open.get(sessionId);
    if (fold === undefined) {
      if (!this.#unread.has(sessionId)) throw new Error(`SessionFolds: no file of session "${sessionId}" is unread`);
      fold = withArena(this.#arena, () => new TurnFold(sessionId, this.#options));
      this.#open.set(sessionId, fold);
    }
    return fold;
  }

  /**
   * Marks a journal as read, with the family the check found it holds: a `turn` journal is one of its session's
   * files. The fold of the session is finished when no file of the session is left.
   */
  read(file: StoreFile, family: string): void {
    const sessionId = this.#sessionOf(file);
    if (family === 'turn') {
      const files = this.#files.get(sessionId);
      if (files === undefined) this.#files.set(sessionId, [file.path]);
      else files.push(file.path);
    }
    const unread = (this.#unread.get(sessionId) ?? 0) - 1;
    if (unread > 0) {
      this.#unread.set(sessionId, unread);
      return;
    }
    this.#unread.delete(sessionId);
    const files = this.#files.get(sessionId) ?? NO_FILES;
    this.#files.delete(sessionId);
    // The fold reads back no record of these files after it finishes (see TurnFold.add).
    this.#released(files);
    const fold = this.#open.get(sessionId);
    if (fold === undefined) return;
    this.#open.delete(sessionId);
    this.#finished.push(checkedSession(fold.finish(), files));
  }

  /** Folds still reading: those with a file not read yet. */
  get openFolds(): number {
    return this.#open.size;
  }

  /**
   * Every session derived, sorted by session id, with its turn journals. Finishes the folds still open (a file the
   * check did not read, which `read` never saw), so call it once, after the last file.
   */
  sessions(): CheckedSession[] {
    // Not released as each fold finishes: the next session's turns, numbered past the released pages, would make a
    // new page of the column each (100,000 sessions: 25 GB of pages zeroed).
    this.#arena.releaseReadingColumns();
    for (const [sessionId, fold] of this.#open)
      this.#finished.push(checkedSession(fold.finish(), this.#files.get(sessionId) ?? NO_FILES));
    this.#open.clear();
    this.#unread.clear();
    for (const files of this.#files.values()) this.#released(files);
    this.#files.clear();
    return this.#finished.sort(({ sessionId: a }, { sessionId: b }) => (a < b ? -1 : a > b ? 1 : 0));
  }
}

// An array that grew by `push` has room for 17 elements at least: a session of one turn kept 84 bytes for its list.
const SMALL = 17;

/**
 * A fold's derivation as a check keeps it, with the session's files: empty lists shared, small ones copied to their
 * size. The session id is the fold's copy, which its turns share: the copy the file name gave can go with the
 * discovery.
 */
function checkedSession(derived: DerivedSession, files: readonly string[]): CheckedSession {
  // Member by member, not a spread: V8 gave every spread copy a shape of its own, about 250 bytes per session.
  const { sessionId, turns, turnCount, findings, omitted } = derived;
  const checked: CheckedSession = {
    sessionId,
    turns: turns.length === 0 ? NO_TURNS : turns.length < SMALL ? [...turns] : turns,
    turnCount,
    findings: findings.length === 0 ? NO_FINDINGS : findings.length < SMALL ? [...findings] : findings,
    omitted,
    files,
  };
  const list = turnListOf(derived);
  if (list !== undefined) listed.set(checked, list);
  return checked;
}
