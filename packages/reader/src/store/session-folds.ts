import type { DerivedSession } from '../turn/derive-turns.js';
import { TurnFold, type TurnFoldOptions } from '../turn/derive-turns.js';
import { type FoldArena, withArena } from '../turn/fold-arena.js';
import type { StoreFile } from './discover-store.js';

// Shared by every session that has none: a store of 100,000 clean sessions would otherwise keep two empty arrays each.
const NO_TURNS: readonly never[] = Object.freeze([]);
const NO_FINDINGS: readonly never[] = Object.freeze([]);
const NO_FILES: readonly never[] = Object.freeze([]);
/** A finished session's derivation and the files it was read from, as `StoreCheck.sessions` lists them. */
export type CheckedSession = DerivedSession & { readonly files: readonly string[] };

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
  readonly #finished: { readonly sessionId: string; readonly derived: DerivedSession }[] = [];

  /**
   * @param files every journal the check will read, in any order (state documents are left out by the caller).
   * @param sessionOf the session a journal's turn records are folded into, from its name.
   */
  constructor(
    files: readonly StoreFile[],
    sessionOf: (file: StoreFile) => string,
    arena: FoldArena,
    options: TurnFoldOptions,
  ) {
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

  /** Marks a journal as read: the fold of its session is finished when no file of the session is left. */
  read(file: StoreFile): void {
    const sessionId = this.#sessionOf(file);
    const unread = (this.#unread.get(sessionId) ?? 0) - 1;
    if (unread > 0) {
      this.#unread.set(sessionId, unread);
      return;
    }
    this.#unread.delete(sessionId);
    const fold = this.#open.get(sessionId);
    if (fold === undefined) return;
    this.#open.delete(sessionId);
    this.#finished.push({ sessionId, derived: settled(fold.finish()) });
  }

  /** Folds still reading: those with a file not read yet. */
  get openFolds(): number {
    return this.#open.size;
  }

  /**
   * Every session derived, sorted by session id, with its files. Finishes the folds still open (a file the check did
   * not read, which `read` never saw), so call it once, after the last file.
   */
  sessions(filesOf: ReadonlyMap<string, readonly string[]>): CheckedSession[] {
    for (const [sessionId, fold] of this.#open) this.#finished.push({ sessionId, derived: settled(fold.finish()) });
    this.#open.clear();
    this.#unread.clear();
    return this.#finished
      .sort(({ sessionId: a }, { sessionId: b }) => (a < b ? -1 : a > b ? 1 : 0))
      .map(({ derived }) => {
        // Member by member, not a spread: V8 gave every spread copy a shape of its own, about 250 bytes per session.
        // The fold's copy of the session id, which its turns share: the name's copy can go with the discovery.
        const { sessionId, turns, turnCount, findings, omitted } = derived;
        return { sessionId, turns, turnCount, findings, omitted, files: filesOf.get(sessionId) ?? NO_FILES };
      });
  }
}

// An array that grew by `push` has room for 17 elements at least: a session of one turn kept 84 bytes for its list.
const SMALL = 17;

/** A fold's derivation as a check keeps it: empty lists shared, small ones copied to their size. */
function settled(derived: DerivedSession): DerivedSession {
  const { sessionId, turns, turnCount, findings, omitted } = derived;
  return {
    sessionId,
    turns: turns.length === 0 ? NO_TURNS : turns.length < SMALL ? [...turns] : turns,
    turnCount,
    findings: findings.length === 0 ? NO_FINDINGS : findings.length < SMALL ? [...findings] : findings,
    omitted,
  };
}
