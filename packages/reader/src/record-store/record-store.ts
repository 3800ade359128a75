import type { BackwardLine } from '../event/read-lines-backward.js';
import type { JournalItem, JournalSource, RecoveryMode } from '../framing/read-journal.js';
import type { StoreLocation } from '../store-format/layout.js';

/**
 * A position in one journal's committed lines: where a line starts, or the end. Opaque to callers: compare cursors of
 * one journal, hand them back to the journal they came from, never compute with them. A file store's cursor is the
 * line's byte offset; a database's is the line's position in the stream's concatenated lines, kept with the row.
 */
export type JournalCursor = number;

/**
 * When an append is acknowledged (spec §11.3, TJ-STORE-003): `every` after its own sync, `group` after the sync that
 * covers it (appends made while one is in flight share the next), `none` once the store holds it in memory, durable
 * only after {@link WritableJournal.flush} or close.
 */
export type JournalDurability = 'every' | 'group' | 'none';

/** Options of {@link JournalReader.records}. */
export interface JournalReadOptions {
  /** First line to read (a cursor this journal gave); its start by default. */
  readonly from?: JournalCursor;
  /** Nothing at or after this cursor is read; the end when the read began by default. */
  readonly to?: JournalCursor;
  /** Recovery mode (spec §3.4); `tolerant` by default. */
  readonly mode?: RecoveryMode;
  /** Line-size limit in bytes without the LF; 16 MiB by default. */
  readonly maxLineBytes?: number;
}

/** Options of {@link JournalReader.recordsFromSeq}: where the read ends, and how it reads. */
export type SeqReadOptions = Omit<JournalReadOptions, 'from'>;

/**
 * A lock-free reader of one journal's committed lines (spec §16, TJ-STORE-001, TJ-STORE-002). Every backend holds
 * the exact bytes of each line, so one codec (spec §3) reads them all: records, findings and line numbers are the same
 * whichever store holds the journal. A reader never takes a lock and never sees a line that is not committed; lines
 * appended while it reads are seen by a read that starts later.
 *
 * As a {@link JournalSource} it reads the journal's committed lines as one byte stream (each line with its LF, at
 * its cursor): the view the codec's own algorithms (the backward scan, the seek by bisection) run on.
 */
export interface JournalReader extends JournalSource {
  /** What findings name the journal by: a file's path, a database stream's URL. */
  readonly name: string;
  /**
   * The end of the journal's bytes now: after its last committed line, or, on a file store, after what may follow
   * that line (pre-allocated space, a torn tail or a line being written), which every read of the codec steps over.
   */
  end(): Promise<JournalCursor>;
  /** The records and findings of the lines from `options.from` to `options.to`, in order, in small batches. */
  records(options?: JournalReadOptions): AsyncGenerator<JournalItem[]>;
  /**
   * A cursor from which a forward read meets every event record with `seq >= target` (TJ-STORE-005): every record
   * before it has a smaller seq. It may be earlier than the first such record, never later.
   */
  seekSeq(target: number, options?: { readonly to?: JournalCursor }): Promise<JournalCursor>;
  /**
   * Optional: `records({ from: await seekSeq(target, { to }), to })` in one call, which a backend may answer with
   * fewer reads (the file store serves the first lines from the bytes its seek read last).
   */
  recordsFromSeq?(target: number, options?: SeqReadOptions): AsyncGenerator<JournalItem[]>;
  /** The committed lines before `options.to` (the end by default), last first; the caller stops by leaving the loop. */
  readBackward(options?: { readonly to?: JournalCursor; readonly maxLineBytes?: number }): AsyncGenerator<BackwardLine>;
  /** Releases what the reader holds; later calls fail. */
  close(): Promise<void>;
}

/** What a {@link WritableJournal} answers for an acknowledged append. */
export interface JournalAppendAck {
  /** Where the line starts. */
  readonly cursor: JournalCursor;
  /** The line's length in the journal, LF included. */
  readonly length: number;
}

/** The state of a {@link WritableJournal}. */
export type WritableJournalState =
  /** Appends are accepted. */
  | 'open'
  /** Another owner took the journal over (TJ-DUR-040): nothing more is appended, ever. */
  | 'fenced'
  /** A write or sync failed: appends are refused until the journal is opened again (TJ-DUR-021). */
  | 'poisoned'
  /** Closed by its owner. */
  | 'closed';

/** What opening a {@link WritableJournal} found and did before the first append. */
export interface JournalOpenReport {
  /** True when the journal did not exist and was created (durably, TJ-DUR-007). */
  readonly created: boolean;
  /** True when the journal was taken over from an owner proved gone. */
  readonly tookOverLock: boolean;
  /** The torn tail a crashed owner left and the open moved aside (TJ-DUR-005), or null. */
  readonly tornTail: { readonly length: number; readonly quarantine: string } | null;
}

/** Options of {@link WritableJournal.appendLine}. */
export interface JournalAppendOptions {
  /**
   * In `none` mode only: the journal may keep the line in memory until a write is due (the next append that is not
   * held, a flush, or a bound of its own), and acknowledges it at once. What a live session streams deltas with.
   */
  readonly hold?: boolean;
}

/**
 * A journal opened for appending by its single owner (TJ-STORE-003, TJ-STORE-004): whole encoded lines, acknowledged
 * per the journal's durability, in call order. Opening took the journal's lock (one owner per journal, TJ-DUR-017) and
 * made what a crashed owner left committed or removed (TJ-DUR-005). The writers of `@turnjournal/writer` append
 * through this interface only.
 *
 * A failed append is undone before the next one (TJ-DUR-023), and every append queued behind it is refused with
 * `append_cancelled` (TJ-DUR-030): it was encoded assuming the failed one precedes it. From then on the journal is
 * {@link WritableJournal.interrupted} and refuses appends until its owner, having re-read what the journal holds,
 * calls {@link WritableJournal.resume}. A failure that leaves the journal's state unknown (a failed sync) poisons it.
 */
export interface WritableJournal {
  /** What findings and errors name the journal by. */
  readonly name: string;
  /** When appends are acknowledged. */
  readonly durability: JournalDurability;
  /** The journal's state now. */
  readonly state: WritableJournalState;
  /** What opening found and did. */
  readonly opened: JournalOpenReport;
  /** True when a failure made the journal refuse appends until it is opened again (`state` is then not `open`). */
  readonly poisoned: boolean;
  /** True from a failed append until {@link WritableJournal.resume}: appends are refused meanwhile. */
  readonly interrupted: boolean;
  /** Appends one encoded line (its bytes, LF included); resolves once it is acknowledged. */
  appendLine(line: Uint8Array, options?: JournalAppendOptions): Promise<JournalAppendAck>;
  /**
   * Appends several whole lines (each LF-terminated) as one: one acknowledgement (of the first line's cursor and the
   * lines' whole length), and a failure leaves none of them.
   */
  appendLines(lines: Uint8Array, options?: JournalAppendOptions): Promise<JournalAppendAck>;
  /** Resolves once every append handed over has been written or refused. */
  idle(): Promise<void>;
  /** Makes every acknowledged line durable (a no-op beyond waiting for `every` and `group`). */
  flush(): Promise<void>;
  /** Lets appends through again after a failed append: the owner has re-read what the journal holds. */
  resume(): void;
  /**
   * Replaces the journal's lines with `lines`, atomically (TJ-STORE-006): a reader, and a crash, see the old lines or
   * the new, never a mix. Appends wait for it. Cursors of the old lines are no longer valid.
   */
  rewrite(lines: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void>;
  /** A reader of what this owner's journal holds, read through the owner's own handle. */
  reader(): JournalReader;
  /** Makes what was acknowledged durable and releases the lock; the journal refuses appends from then on. */
  close(): Promise<void>;
}

/** Options of {@link RecordStore.openJournal}. */
export interface OpenJournalOptions {
  /** When appends are acknowledged. */
  readonly durability: JournalDurability;
  /** Line-size limit in bytes without the LF; 16 MiB by default. */
  readonly maxLineBytes?: number;
}

/** One journal or document a store holds, as {@link RecordStore.list} finds it. */
export interface StoreEntry {
  /** Where it is in the store's layout. */
  readonly location: StoreLocation;
  /** What findings name it by. */
  readonly name: string;
}

/** What {@link RecordStore.list} returns: every entry, or those of one family or one session. */
export interface ListOptions {
  readonly family?: StoreLocation['family'];
  readonly sessionId?: string;
}

/**
 * How owners tell the store's readers that a journal is durable through a seq (TJ-STORE-007, TJ-LIVE-042). Like a
 * database's notification channel, it is asynchronous, may fail, and may miss announcements made while a listener
 * was not connected: a listener re-reads the durable end ({@link StoreChannel.durableSeq}) when it (re)subscribes and
 * when it is told it may have missed some.
 */
export interface StoreChannel {
  /** Announces that the event log of `sessionId` is durable through `seq`. */
  publish(sessionId: string, seq: number): Promise<void>;
  /**
   * Calls `listener` with later announcements for `sessionId` (possibly not each of them, never out of order), and
   * with `undefined` when some may have been missed; returns the function that stops it.
   */
  listen(sessionId: string, listener: (seq: number | undefined) => void): () => void;
  /** The last seq announced durable for `sessionId`, as the store knows it now; -1 when none is known. */
  durableSeq(sessionId: string): Promise<number>;
  /** Frees what announcing for `sessionId` held (its owner closed the session); a later `publish` takes it again. */
  release(sessionId: string): Promise<void>;
}

/**
 * A store of journals and documents, one per process (TJ-STORE-001): files under a root directory, or a database.
 * Writers, readers, the sweep and live sessions reach storage through it only.
 */
export interface RecordStore {
  /** What findings name the store by: a directory, a database URL. */
  readonly name: string;
  /** Opens the journal at `location` for appending; fails with `journal_locked` while another owner holds it. */
  openJournal(location: StoreLocation, options: OpenJournalOptions): Promise<WritableJournal>;
  /**
   * Whether an owner may hold the journal at `location` now (a hint: the answer can change at once). False only when
   * no owner holds it or its owner is proved gone, so that a follower knows when to try to become the owner.
   */
  ownerHeld(location: StoreLocation): Promise<boolean>;
  /** A lock-free reader of the journal at `location`; fails with `not_found` when there is none. */
  openReader(location: StoreLocation): Promise<JournalReader>;
  /** The journals and documents the store holds. */
  list(options?: ListOptions): AsyncGenerator<StoreEntry>;
  /** The bytes of the document at `location` (a state snapshot), or undefined when there is none. */
  readDocument(location: StoreLocation & { readonly family: 'state' }): Promise<Uint8Array | undefined>;
  /** Replaces the document at `location` durably and atomically (TJ-STORE-006). */
  replaceDocument(location: StoreLocation & { readonly family: 'state' }, bytes: Uint8Array): Promise<void>;
  /** The store's notification channel. */
  readonly channel: StoreChannel;
  /**
   * The wall clock (epoch ms) every host sharing the store stamps and ages records by (TJ-STORE-026), when the store
   * has one of its own (a database server's); a hub or a sweep on the store uses it unless given another clock.
   */
  readonly clock?: () => number;
}
