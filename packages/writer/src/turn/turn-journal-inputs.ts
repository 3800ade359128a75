import type { RecordStore } from '@turnjournal/reader/record-store';
import type { Attachment, TurnEventName } from '@turnjournal/schema';
import type { Durability } from '../append/append-file.js';
import type { FileSystem } from '../fs/file-system.js';
import type { AcquireLockOptions } from '../fs/lock.js';

/** Where a turn journal is: a directory plus the name derived from the session and shard (the usual way). */
export interface TurnJournalInDirectory {
  /** The turn journal directory (spec §4.4 recommends `<root>/_turn_journal`); created, durably, when missing. */
  readonly dir: string;
  /**
   * The shard, for servers where several processes write one session: the file becomes `<sessionId>~<shard>.jsonl`
   * and each process holds its own lock. A valid identifier (TJ-FAM-014); the process id is the recommended choice
   * (TJ-FAM-015). Without it the file is `<sessionId>.jsonl`.
   */
  readonly shard?: string;
  /** Not used with `dir`. */
  readonly file?: undefined;
  /** Not used with `dir`. */
  readonly store?: undefined;
}

/**
 * Where a turn journal is: an existing journal's explicit path (recovery uses this for journals found by a scan).
 * Its directory's other files `<sessionId>.jsonl` and `<sessionId>~*.jsonl` are read as the session's other shards.
 */
export interface TurnJournalAtPath {
  /** The journal file. */
  readonly file: string;
  /** Not used with `file`. */
  readonly dir?: undefined;
  /** Not used with `file`. */
  readonly shard?: undefined;
  /** Not used with `file`. */
  readonly store?: undefined;
}

/**
 * Where a turn journal is: a record store (spec §19), whose journal at `{ family: 'turn', sessionId, shard }` it is.
 * The session's other shards are the store's other turn journals of the session. `fs` and `lock` are then the store's
 * business.
 */
export interface TurnJournalInStore {
  /** The record store. */
  readonly store: RecordStore;
  /** The shard (see {@link TurnJournalInDirectory.shard}). */
  readonly shard?: string;
  /** Not used with `store`. */
  readonly dir?: undefined;
  /** Not used with `store`. */
  readonly file?: undefined;
}

/** Options of {@link openTurnJournal}: where the journal is, and how to write it. */
export type OpenTurnJournalOptions = (TurnJournalInDirectory | TurnJournalAtPath | TurnJournalInStore) &
  TurnJournalWriteOptions;

/** How a turn journal is written. */
export interface TurnJournalWriteOptions {
  /** The session; a valid identifier (spec §4.3), checked before any path is built (TJ-FAM-010). */
  readonly sessionId: string;
  /** Durability mode; `every` by default (TJ-DUR-012). `none` is refused for turn journals (TJ-DUR-016). */
  readonly durability?: Exclude<Durability, 'none'>;
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /** Wall clock in epoch milliseconds, for `created_at` and generated turn ids; `Date.now` by default. */
  readonly clock?: () => number;
  /** Line-size limit in bytes; 16 MiB by default. */
  readonly maxLineBytes?: number;
  /** Options of the lock acquisition. */
  readonly lock?: AcquireLockOptions;
}

/** A user turn to submit. */
export interface SubmitInput {
  /** The exact text the user submitted. */
  readonly content: string;
  /**
   * The turn id. Give the id the client generated when the user pressed send and resends with every retry: a retried
   * submission with the same id and content is then recognised and not written twice. Without it a new id of the
   * recommended form is generated; a caller that retries must then reuse the id it got back.
   */
  readonly turnId?: string;
  /** Attachment metadata (never the bytes, TJ-TURN-011). */
  readonly attachments?: readonly Attachment[];
  /** The stream the turn's output is delivered on. */
  readonly streamId?: string | null;
  /** Working directory or workspace of the turn. */
  readonly workspace?: string | null;
  /** Model requested for the turn. */
  readonly model?: string | null;
  /** Provider of that model. */
  readonly modelProvider?: string | null;
  /** Author role; `user` by default. */
  readonly role?: string;
  /** Further members to store in the record (kept by every reader); they may not redefine a member above. */
  readonly extra?: Readonly<Record<string, unknown>>;
}

/** The outcome of {@link TurnJournal.submit}. */
export interface SubmitResult {
  /** The turn id. */
  readonly turnId: string;
  /** False when the turn was already submitted with the same content (a retry): nothing was written. */
  readonly created: boolean;
  /** The turn's state after the call. */
  readonly state: TurnEventName;
}
