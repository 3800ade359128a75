// Over 450 lines: one state machine — the write queue with its held chunks, the failure fence, the poison and the
// `none`-mode sync counters share `#queue`, `#unwrittenBytes`, `#failed` and `#poison`, and every path (append, hold,
// drain, idle, flush, rewrite, close) reads and changes them together; split, they would have to be exposed.
import { dirname } from 'node:path';
import { setImmediate } from 'node:timers';
import type { JournalSource } from '@turnjournal/reader';
import { LineViewReader } from '@turnjournal/reader/_internals';
import type {
  JournalCursor,
  JournalReader,
  WritableJournal,
  WritableJournalState,
} from '@turnjournal/reader/record-store';
import { AppendCancelledError, JournalWriteError, WriterError, WriterPoisonedError } from '../errors.js';
import { afterFailure } from '../fs/after-failure.js';
import { attempt, replaceFile, writeAll, writeAllNow } from '../fs/durable-ops.js';
import {
  type FileSystem,
  nodeFileSystem,
  SYNC_WRITE_MAX_BYTES,
  type SynchronousWrite,
  synchronousWrite,
} from '../fs/file-system.js';
import { type AcquireLockOptions, acquireLock, type HeldLock } from '../fs/lock.js';
import { DEFAULT_MAX_LINE_BYTES, encodeRecordText } from './encode-record.js';
import { replaceWithCopy } from './fence-file.js';
import { type LinkCheck, LinkWatch } from './link-watch.js';
import { nextSpaceEnd, spaceEndAhead } from './preallocation.js';
import { repairTornTail, type TornTailRepair } from './repair-torn-tail.js';

/**
 * When an append is acknowledged (spec §11.3):
 * - `every`: each record is written and fdatasync'ed on its own before its promise resolves;
 * - `group`: the records appended while a sync is in flight are written together with one write and covered by one
 *   fdatasync; each promise resolves once the sync covering its bytes has returned;
 * - `none`: the promise resolves once the bytes are handed to the OS; the file is fsync'ed on {@link AppendFile.flush}
 *   and on close. A crash can lose acknowledged records: do not use it for turn records, message records or acks.
 */
export type Durability = 'every' | 'group' | 'none';

/** The durability modes. */
export const DURABILITY_MODES: readonly Durability[] = ['every', 'group', 'none'];

/** Options of {@link AppendFile.open}. */
export interface AppendFileOptions {
  /** The durability mode of the file (TJ-DUR-013). */
  readonly durability: Durability;
  /** The file-system layer; the real one by default. */
  readonly fs?: FileSystem;
  /** Line-size limit in bytes without the LF; 16 MiB by default. */
  readonly maxLineBytes?: number;
  /** Options of the lock acquisition. */
  readonly lock?: AcquireLockOptions;
  /**
   * Pre-allocate space after the last line (spec §11.6), so that most appends overwrite space the file has and their
   * fdatasync commits no new file size. Default: on in `every` and `group` modes; in `none`, on from the first
   * {@link AppendFile.flush}, which tells a file whose caller syncs it at boundaries of its own (a live session) from
   * one synced only on close, where the space gains nothing.
   */
  readonly preallocate?: boolean;
}

/** Where an acknowledged record was written. */
export interface AppendAck {
  /** Where the record's line starts (an opaque cursor of the journal; for a file, its byte offset). */
  readonly cursor: JournalCursor;
  /** Length of the line, LF included. */
  readonly length: number;
}

/** A torn tail an open moved aside (TJ-DUR-005): what a crash left of a line that was never committed. */
export interface TornTailReport {
  /** How many torn bytes there were. */
  readonly length: number;
  /** Where they were kept: for a file store, the quarantine file `<file>.<offset>.torn` beside it (spec §4.5). */
  readonly quarantine: string;
}

/** What {@link AppendFile.open} found and did before the first append. */
export interface OpenReport {
  /** True when the file did not exist and was created (and synced with its directory, TJ-DUR-007). */
  readonly created: boolean;
  /** True when the lock was taken over from a dead writer. */
  readonly tookOverLock: boolean;
  /** The torn tail that was moved aside and truncated, if any (TJ-DUR-005). */
  readonly tornTail: TornTailReport | null;
}

/** An append's write: its acknowledgement (and, unless `none`, its fdatasync) waits for it. */
const AWAITED = { awaited: true } as const;

/**
 * Held lines (see `AppendFile.appendLine`) are written once they add up to this many bytes, even when nothing
 * else asks for a write: memory stays bounded, and one write of this size is still a small one (see
 * `SYNC_WRITE_MAX_BYTES`).
 */
export const HOLD_MAX_BYTES = 64 * 1024;
/** The first buffer of a chunk of held lines; it doubles up to `HOLD_MAX_BYTES` as lines join it. */
const HOLD_FIRST_CHUNK_BYTES = 1024;

/** Options of `AppendFile.appendLine` (see there). */
export interface AppendLineOptions {
  /** Keep the line in memory until a write is due (`none` mode only). */
  readonly hold?: boolean;
}

/**
 * A line waiting for its write, or a chunk of held lines: consecutive held lines are copied into one buffer (its first
 * `length` bytes), so holding thousands of them keeps a few chunks alive, not an object and a buffer per line.
 */
interface Pending {
  /** The line, or a chunk's buffer (replaced by a larger one as the chunk grows); empty for a line given as `text`. */
  bytes: Uint8Array;
  /**
   * A line of `appendRecord`, as text without its LF (`bytes` then empty): copied into the batch's write as UTF-8,
   * without a buffer of its own. Null for a line given as bytes and for a chunk.
   */
  readonly text: string | null;
  /**
   * A chunk of held lines given as text (`holdLine`): the lines, LFs included, concatenated as they come — a
   * rope, which V8 flattens once, when the chunk is written, so a held line costs no encoding of its own. Null for
   * any other entry (`bytes` is then unused).
   */
  heldText: string | null;
  /** Bytes of the line in use: all of `bytes` (or the UTF-8 of `text` and its LF), up to its capacity for a chunk. */
  length: number;
  /** True for a chunk of held lines: their promises resolved when they were queued, so nobody waits for its write. */
  readonly held: boolean;
  readonly resolve: (ack: AppendAck) => void;
  readonly reject: (error: unknown) => void;
}

const IGNORE = (): void => undefined;
/** The `bytes` of a line queued as text. */
const EMPTY = new Uint8Array(0);
const LF = 0x0a;

/** Set by {@link AppendFile}'s static block: reaches its private held path for {@link holdLine}. */
let holdLineOf: (file: AppendFile, line: string | Uint8Array, length: number) => boolean;
/** Set by {@link AppendFile}'s static block: reach its private flush in two steps, {@link idleForFlush}. */
let idleForFlushOf: (file: AppendFile) => Promise<WriteSync | null>;
let flushAfterOf: (file: AppendFile, issued: WriteSync | null) => Promise<void>;

/**
 * A sync a write issued right after it for the flushes waiting for it (see `AppendFile.#syncAfterWrite`): the count of
 * writes it covers, its outcome, and its failure once it failed (the file's poison then).
 */
interface WriteSync {
  readonly covered: number;
  done: Promise<void>;
  failure: unknown;
}

/**
 * One journal file opened for appending by its single writer (spec §11). Opening takes the file's lock (TJ-DUR-017),
 * creates the file durably or repairs its torn tail (TJ-DUR-005); appends are written in call order (TJ-DUR-006) as
 * whole lines with short-write looping (TJ-DUR-002) at the position the writer tracks, and acknowledged per the
 * {@link Durability} mode. A failed write is truncated back before the next append (TJ-DUR-023), and every append
 * queued behind it when it failed is refused with {@link AppendCancelledError} (TJ-DUR-030): it was encoded by a caller
 * that assumed the failed record would precede it. A failed sync, or a failed write that cannot be truncated back,
 * poisons the file: every later append fails with {@link WriterPoisonedError} until it is reopened (TJ-DUR-021).
 *
 * The writers of this package append through a `JournalAppender`, which keeps the refusal in force until the
 * writer has re-read its state from the file; used on its own, the file accepts appends again once its queue is empty.
 */
export class AppendFile implements WritableJournal {
  /** The journal file. */
  readonly path: string;
  /** The durability mode in force (TJ-DUR-013). */
  readonly durability: Durability;
  /** What opening found and repaired. */
  readonly opened: OpenReport;
  readonly #fs: FileSystem;
  /** The file system's synchronous awaited write, when it has one (see `synchronousWrite`). */
  readonly #writeNow: SynchronousWrite | undefined;
  readonly #lock: HeldLock;
  readonly #maxLineBytes: number;
  #fd: number;
  /** Whether the file still has a name, checked with every sync that acknowledges appends (TJ-DUR-036). */
  readonly #links: LinkWatch;
  /** Where the file's lines end: the next line starts here (the space after it is not counted). */
  #size: number;
  /** The file's length: `#size` plus the pre-allocated space after the lines (spec §3.8, §11.6). */
  #fileEnd: number;
  #preallocate: boolean;
  /** `none` mode without a choice of the caller: pre-allocate once the file is flushed (see `preallocate`). */
  readonly #preallocateOnFlush: boolean;
  #queue: Pending[] = [];
  /** Bytes queued or being written, not yet in `#size`: where the next line will start is `#size` plus this. */
  #unwrittenBytes = 0;
  /** Chunks of held lines in `#queue`, and their bytes. */
  #heldChunks = 0;
  #heldBytes = 0;
  /** Set by `idle` (and so `flush`, close, rewrite): the next batch is written even if every line of it is held. */
  #writeHeld = false;
  /** Callers waiting in `idle` (a flush among them): the drain then goes on without waiting for a macrotask. */
  #idleWaiters = 0;
  #draining: Promise<void> | null = null;
  #poison: unknown = null;
  /**
   * The failure that lost held lines: their appends were acknowledged when they were queued, so nobody was told. Close
   * rejects with it, as it does when its final sync fails: a caller's last chance to learn that records are gone.
   */
  #heldLost: unknown = null;
  /** The failed write that queued appends are refused for, until the queue is empty or `AppendFile.resume`. */
  #failed: unknown = null;
  #resumeByOwner = false;
  #closed = false;
  #closing: Promise<void> | null = null;
  /** Settles once the rewrite under way (and any queued behind it) has ended; null when none runs. */
  #rewriting: Promise<void> | null = null;
  /**
   * The syncs of flushes that have not returned. Close and rewrite wait for them before they close the descriptor: a
   * flush nobody awaited whose sync the scheduler had not issued yet would otherwise sync a closed descriptor (EBADF,
   * and the file poisoned), or, once its number is reused, another file.
   */
  readonly #flushSyncs = new Set<Promise<void>>();
  /**
   * `none` mode: writes completed, and how many of them the last completed sync covers. Counters, not an "unsynced"
   * flag: a write that completes while a sync runs may not be covered by it, and a flag the sync clears when it
   * returns would forget that write, so the next flush would return without syncing it.
   */
  #writesDone = 0;
  #writesSynced = 0;
  /**
   * Flushes waiting for the queue to be written (see {@link idleForFlush}): while there are any, the write that
   * empties the queue issues the sync itself, in the same synchronous run, rather than the flush a few promise
   * reactions later (see `#syncAfterWrite`).
   */
  #flushWaiters = 0;
  /** The sync the last such write issued; null before the first. */
  #writeSync: WriteSync | null = null;
  /**
   * The extension of the space under way (see `#extendAhead`), which never rejects; null when none runs. A batch that
   * would write past the space waits for it, so that its zeros never land on a line.
   */
  #extension: Promise<void> | null = null;
  /** Set when an extension ahead could not write its zeros: from then on, each batch past the space extends it. */
  #extendingRefused = false;
  /** Changed whenever the space is cut (a truncation, a rewrite): an extension begun before then leaves `#fileEnd`. */
  #spaceCuts = 0;

  static {
    holdLineOf = (file, line, length) => file.#holdNow(line, length);
    idleForFlushOf = (file) => file.#idleForFlush();
    flushAfterOf = (file, issued) => file.#flushAfter(issued);
  }

  private constructor(
    path: string,
    options: AppendFileOptions,
    fs: FileSystem,
    lock: HeldLock,
    fd: number,
    size: number,
    fileEnd: number,
    opened: OpenReport,
  ) {
    this.path = path;
    this.durability = options.durability;
    this.opened = opened;
    this.#fs = fs;
    this.#writeNow = synchronousWrite(fs);
    this.#lock = lock;
    this.#maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
    this.#fd = fd;
    this.#links = new LinkWatch(fs, path, fd, lock);
    this.#size = size;
    this.#fileEnd = fileEnd;
    this.#preallocate = options.preallocate ?? options.durability !== 'none';
    this.#preallocateOnFlush = options.preallocate === undefined && options.durability === 'none';
  }

  /**
   * Opens `path` for appending: takes its lock (`<path>.lock`, failing with `JournalLockedError` while another live
   * writer holds it), creates it if absent (fsync of the file, then of its directory), otherwise repairs a torn tail.
   * The directory must exist. Mid-file damage is left in place: readers skip it and report it.
   */
  static async open(path: string, options: AppendFileOptions): Promise<AppendFile> {
    const fs = options.fs ?? nodeFileSystem;
    const lock = await acquireLock(fs, `${path}.lock`, path, options.lock);
    let fd: number | undefined;
    try {
      if (lock.tookOverExpiredLease) await replaceWithCopy(fs, path);
      let created = false;
      try {
        fd = await fs.open(path, 'create-exclusive');
        created = true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new JournalWriteError(path, 'create', error);
        fd = await attempt(path, 'open', () => fs.open(path, 'read-write'));
      }
      const openFd = fd;
      let tornTail: TornTailRepair | null = null;
      let size = 0;
      let fileEnd = 0;
      if (created) {
        await attempt(path, 'fsync', () => fs.fsync(openFd));
        await attempt(dirname(path), 'fsync directory', () => fs.fsyncDirectory(dirname(path)));
      } else {
        const tail = await repairTornTail(fs, path, openFd);
        ({ tornTail, linesEnd: size, fileEnd } = tail);
        // What is in the file may not be durable yet: a writer that died between a write and its sync, or whose sync
        // failed, left bytes only in the page cache. Sync before anything read from them is trusted (a retried submit
        // answered "already written", a seq continued), or a power loss could take back what that answer promised.
        if (tornTail === null && fileEnd > 0) await attempt(path, 'fsync', () => fs.fsync(openFd));
      }
      const opened = {
        created,
        tookOverLock: lock.tookOver,
        tornTail: tornTail === null ? null : { length: tornTail.length, quarantine: tornTail.quarantine },
      };
      return new AppendFile(path, options, fs, lock, openFd, size, fileEnd, opened);
    } catch (error) {
      const openFd = fd;
      if (openFd !== undefined) await afterFailure(error, () => fs.close(openFd));
      await lock.release();
      throw error;
    }
  }

  /**
   * Bytes of lines in the file that this writer has written or found committed: where its next line starts. The file
   * can be longer, by the pre-allocated space after its lines (spec §3.8).
   */
  get size(): number {
    return this.#size;
  }

  /** The file's path: what findings and errors name it by. */
  get name(): string {
    return this.path;
  }

  /** The file's state (see `WritableJournalState`). */
  get state(): WritableJournalState {
    if (this.#closing !== null || this.#closed) return 'closed';
    if (this.#poison === null) return 'open';
    return (this.#poison as { code?: unknown }).code === 'journal_fenced' ? 'fenced' : 'poisoned';
  }

  /** A reader of the lines this writer holds, through its own descriptor (see {@link AppendFile.source}). */
  reader(): JournalReader {
    const source = this.source;
    return new LineViewReader(this.path, {
      read: source.read,
      end: () => Promise.resolve(this.#size),
      close: () => Promise.resolve(),
    });
  }

  /** True when an earlier failure made the file refuse appends. */
  get poisoned(): boolean {
    return this.#poison !== null;
  }

  /**
   * True from a failed write until the appends queued behind it are refused and, under a `JournalAppender`,
   * until it has re-read its state and called `AppendFile.resume`.
   */
  get interrupted(): boolean {
    return this.#failed !== null;
  }

  /**
   * @internal Called by `JournalAppender`: after a failed write, appends stay refused until
   * `AppendFile.resume`, not just until the queue is empty.
   */
  resumeByOwner(): void {
    this.#resumeByOwner = true;
  }

  /** @internal Lets appends through again after a failed write: the owner has re-read its state from the file. */
  resume(): void {
    this.#failed = null;
  }

  /**
   * A positional reader over the lines of the open file (through the file-system layer), for reading back what it
   * holds: it ends at {@link AppendFile.size}, so the pre-allocated space after the lines is never read as a tail.
   */
  get source(): JournalSource {
    return {
      read: (buffer, offset, length, position) => {
        const readable = Math.max(0, Math.min(length, this.#size - position));
        return attempt(this.path, 'read', () => this.#fs.read(this.#fd, buffer, offset, readable, position));
      },
    };
  }

  /** Encodes `record` as one line (see `encodeRecord`) and appends it. */
  appendRecord(record: unknown): Promise<AppendAck> {
    if (this.#rewriting !== null) return this.#rewriting.then(() => this.appendRecord(record));
    let text: string;
    let length: number;
    try {
      ({ text, length } = encodeRecordText(record, this.#maxLineBytes));
    } catch (error) {
      return Promise.reject(error instanceof WriterError ? withFile(error, this.path) : error);
    }
    const refusal = this.#refusal();
    if (refusal !== null) return Promise.reject(refusal);
    // No scan for LFs, as `appendLine` makes: `JSON.stringify` escapes every control character, so the one LF of the
    // line is the one the write adds after it. The text is queued as it is, and copied once, into the batch's write.
    return this.#enqueue(EMPTY, text, length);
  }

  /**
   * Appends one encoded line (it must end with its single LF, as `encodeRecord` makes it). Resolves when the
   * durability mode acknowledges it; rejects, writing nothing that stays, when the write fails.
   *
   * `options.hold` (`none` mode only; the other modes ignore it): keep the line in memory instead of handing it to
   * the OS now. The call resolves at once, with the offset the line will have; held lines are written in call order,
   * in one write, with the next line that is not held, on {@link AppendFile.idle}, {@link AppendFile.flush} and
   * close, or once they add up to 64 KiB. A crash of the process loses them, and a failed write that loses one of them
   * poisons the file: their appends were acknowledged, and only a reopen can tell what the file holds.
   */
  appendLine(bytes: Uint8Array, options?: { readonly hold?: boolean }): Promise<AppendAck> {
    if (this.#rewriting !== null) return this.#rewriting.then(() => this.appendLine(bytes, options));
    const refusal = this.#refusal();
    if (refusal !== null) return Promise.reject(refusal);
    if (bytes.length === 0 || bytes[bytes.length - 1] !== 0x0a || bytes.indexOf(0x0a) !== bytes.length - 1)
      return Promise.reject(
        new WriterError('invalid_record', 'an appended line must contain exactly one LF, at its end', this.path),
      );
    // The line-size limit holds at the seam too (TJ-DUR-028), not only for the records the writers above encode.
    if (bytes.length - 1 > this.#maxLineBytes)
      return Promise.reject(
        new WriterError(
          'line_too_long',
          `a line of ${bytes.length - 1} bytes is over the ${this.#maxLineBytes}-byte line-size limit`,
          this.path,
        ),
      );
    if (options?.hold === true && this.durability === 'none') return this.#hold(bytes);
    return this.#enqueue(bytes, null, bytes.length);
  }

  /**
   * {@link AppendFile.appendLine} of several whole lines as one item: written in one write, acknowledged together,
   * and, when that write fails, truncated away together (TJ-DUR-023), so that none of them stays without the others.
   * The parts of a split checkpoint go out this way: a failed write between two of them would leave an incomplete
   * checkpoint in the log (TJ-REPLAY-019). The caller vouches that `bytes` are whole encoded lines.
   */
  appendLines(bytes: Uint8Array, options?: { readonly hold?: boolean }): Promise<AppendAck> {
    if (this.#rewriting !== null) return this.#rewriting.then(() => this.appendLines(bytes, options));
    const refusal = this.#refusal();
    if (refusal !== null) return Promise.reject(refusal);
    if (bytes.length === 0 || bytes[bytes.length - 1] !== LF)
      return Promise.reject(
        new WriterError('invalid_record', 'appended lines must be whole lines, ending with an LF', this.path),
      );
    if (options?.hold === true && this.durability === 'none') return this.#hold(bytes);
    return this.#enqueue(bytes, null, bytes.length);
  }

  /** Why an append is refused before it is queued (the file closed or poisoned), or null. */
  #refusal(): Error | null {
    if (this.#closed) return new WriterError('writer_closed', `${this.path} is closed`, this.path);
    if (this.#poison !== null) return new WriterPoisonedError(this.path, this.#poison);
    return null;
  }

  /** Queues a line (`bytes`, or `text` and its LF) for the next write; resolves when it is acknowledged. */
  #enqueue(bytes: Uint8Array, text: string | null, length: number): Promise<AppendAck> {
    return new Promise<AppendAck>((resolve, reject) => {
      this.#queue.push({ bytes, text, heldText: null, length, held: false, resolve, reject });
      this.#unwrittenBytes += length;
      this.#draining ??= this.#drain();
    });
  }

  #hold(bytes: Uint8Array): Promise<AppendAck> {
    // Behind a failed write the line would be refused after its promise resolved: refuse it now instead.
    if (this.#failed !== null) return Promise.reject(new AppendCancelledError(this.path, this.#failed));
    const offset = this.#size + this.#unwrittenBytes;
    const chunk = this.#heldChunkFor(bytes.length);
    chunk.bytes.set(bytes, chunk.length);
    this.#held(chunk, bytes.length);
    return Promise.resolve({ cursor: offset, length: bytes.length });
  }

  /**
   * The synchronous held path (see {@link holdLine}): a line given as bytes is copied into a chunk of held bytes, one
   * given as text joined to a chunk of held text, encoded when the chunk is written. False, with nothing queued, when
   * the file would not hold it.
   */
  #holdNow(line: string | Uint8Array, length: number): boolean {
    if (
      this.#rewriting !== null ||
      this.#closed ||
      this.#poison !== null ||
      this.#failed !== null ||
      this.durability !== 'none'
    )
      return false;
    if (typeof line !== 'string') {
      const chunk = this.#heldChunkFor(length);
      chunk.bytes.set(line, chunk.length);
      this.#held(chunk, length);
      return true;
    }
    const text = line;
    const last = this.#queue[this.#queue.length - 1];
    let chunk: Pending;
    if (last?.heldText != null && last.length + length <= HOLD_MAX_BYTES) {
      chunk = last;
      chunk.heldText += text;
    } else {
      chunk = { bytes: EMPTY, text: null, heldText: text, length: 0, held: true, resolve: IGNORE, reject: IGNORE };
      this.#queue.push(chunk);
      this.#heldChunks += 1;
    }
    this.#held(chunk, length);
    return true;
  }

  /** The chunk of held lines at the queue's end with room for `length` more bytes after its `length`: grown or new. */
  #heldChunkFor(length: number): Pending {
    const last = this.#queue[this.#queue.length - 1];
    const joined = last?.held === true && last.heldText === null ? last.length + length : Number.POSITIVE_INFINITY;
    if (last !== undefined && joined <= Math.max(last.bytes.length, HOLD_MAX_BYTES)) {
      if (joined > last.bytes.length) {
        // A chunk starts small and doubles up to the bound: a server streaming to many sessions holds a few deltas in
        // each, and a chunk of the bound's size per session would be mostly empty.
        const grown = Buffer.allocUnsafe(Math.min(HOLD_MAX_BYTES, Math.max(joined, last.bytes.length * 2)));
        grown.set(last.bytes.subarray(0, last.length), 0);
        last.bytes = grown;
      }
      return last;
    }
    const chunk = Buffer.allocUnsafe(Math.max(HOLD_FIRST_CHUNK_BYTES, length));
    const pending: Pending = {
      bytes: chunk,
      text: null,
      heldText: null,
      length: 0,
      held: true,
      resolve: IGNORE,
      reject: IGNORE,
    };
    this.#queue.push(pending);
    this.#heldChunks += 1;
    return pending;
  }

  /** Counts `length` bytes just copied into `chunk`; at the bound, the held lines go. */
  #held(chunk: Pending, length: number): void {
    chunk.length += length;
    this.#unwrittenBytes += length;
    this.#heldBytes += length;
    if (this.#heldBytes >= HOLD_MAX_BYTES) this.#draining ??= this.#drain();
  }

  /** True while the queue holds a line that is to be written now: one not held, or held ones that must go. */
  #writeDue(): boolean {
    const queued = this.#queue.length;
    return queued > this.#heldChunks || (queued > 0 && (this.#writeHeld || this.#heldBytes >= HOLD_MAX_BYTES));
  }

  async #drain(): Promise<void> {
    try {
      // Small writes are synchronous (see SYNC_WRITE_MAX_BYTES), so a drain started by the first append of a burst
      // would write it alone, before the caller queues the rest. In `none` mode, where nothing else batches the
      // writes, wait one microtask first: the appends made in the same synchronous run share one write, and a caller
      // awaiting each append pays a microtask, not a thread-pool trip. (`group` batches behind its in-flight sync.)
      if (this.durability === 'none') await undefined;
      while (this.#writeDue()) {
        const holding = this.#heldChunks > 0;
        const batch = this.#takeBatch();
        const writing = this.#writeBatch(batch);
        if (writing !== undefined) await writing;
        // A batch of several records means callers keep many appends in flight: let every one whose append was just
        // acknowledged run and append its next record (a macrotask runs after all their microtasks) before writing
        // again, so the next write is as large as the last. A lone caller (batches of one) is not delayed, and
        // neither are held lines: they come without waiting for their writes, and wait for no macrotask either, so
        // a loop of held appends that never yields must still see its lines written at the bound. Nor is a caller
        // waiting in `idle`: a flush's sync would only start later, and the appends it waits for are written.
        if (this.durability === 'none' && batch.length > 1 && !holding && this.#idleWaiters === 0)
          await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.#draining = null;
      // Everything queued behind the failure has been refused: a caller appending now knows of the failure.
      if (!this.#resumeByOwner) this.#failed = null;
    }
  }

  /**
   * The next batch: one line in `every` mode; otherwise the whole queue — except when only held lines wait and only
   * their bound makes them due, when the batch stops at the bound, so the write stays a small one (see
   * `SYNC_WRITE_MAX_BYTES`) and the rest waits in the queue.
   */
  #takeBatch(): Pending[] {
    if (this.durability === 'every') return this.#queue.splice(0, 1);
    if (this.#queue.length > this.#heldChunks || this.#writeHeld) {
      this.#heldChunks = 0;
      this.#heldBytes = 0;
      this.#writeHeld = false;
      return this.#queue.splice(0);
    }
    let chunks = 0;
    let bytes = 0;
    for (const pending of this.#queue) {
      if (chunks > 0 && bytes + pending.length > HOLD_MAX_BYTES) break;
      chunks += 1;
      bytes += pending.length;
    }
    this.#heldChunks -= chunks;
    this.#heldBytes -= bytes;
    return this.#queue.splice(0, chunks);
  }

  /**
   * Writes `batch` and acknowledges its lines (after their sync, unless `none`). Undefined when that all happened in
   * this synchronous run (a small write in `none` mode, a live session's usual batch): the drain then goes on without
   * the promise and the reaction an async function would cost per batch; otherwise the promise of its end.
   */
  #writeBatch(batch: Pending[]): Promise<void> | undefined {
    const first = batch[0] as Pending;
    let bytes: Uint8Array;
    try {
      bytes = batch.length === 1 && first.text === null && first.heldText === null ? used(first) : concat(batch);
    } catch (error) {
      // Held lines counted wrong by their writer (see `concat`): nothing of the batch is written, and since held lines
      // were acknowledged, the file is poisoned, as for a failed write that loses them.
      for (const pending of batch) this.#unwrittenBytes -= pending.length;
      this.#poison ??= new JournalWriteError(this.path, 'write', error);
      this.#heldLost ??= this.#poison;
      for (const pending of batch) pending.reject(new WriterPoisonedError(this.path, this.#poison));
      return undefined;
    }
    this.#unwrittenBytes -= bytes.length;
    return this.#writeLines(batch, bytes);
  }

  /** The rest of {@link writeBatch}: writes `bytes`, the lines of `batch`, unless the file refuses them now. */
  #writeLines(batch: Pending[], bytes: Uint8Array): Promise<void> | undefined {
    if (this.#poison !== null) {
      for (const pending of batch) pending.reject(new WriterPoisonedError(this.path, this.#poison));
      return undefined;
    }
    if (this.#failed !== null) {
      // A held line queued before the failure was acknowledged: losing it is not a refusal the caller saw.
      if (batch.some((pending) => pending.held)) this.#poison = this.#heldLost = this.#failed;
      for (const pending of batch) pending.reject(new AppendCancelledError(this.path, this.#failed));
      return undefined;
    }
    const extension = this.#extension;
    if (extension !== null && this.#size + bytes.length > this.#fileEnd)
      return extension.then(() => this.#writeLines(batch, bytes));
    const start = this.#size;
    const end = start + bytes.length;
    // Past the space, the same write also zero-fills the next space (spec §11.6): one write, and the sync that makes
    // the lines durable makes the new file length durable with them, so an acknowledgement never waits for two.
    // In `none` mode only a batch with a line someone waits for adds space (a live session's records, a sync follows):
    // a batch of held lines only, written at their bound, is synced by nobody, and the space would double its write.
    const spaced = this.#preallocate && end > this.#fileEnd && (this.durability !== 'none' || hasAwaited(batch));
    const spaceEnd = spaced ? nextSpaceEnd(end) : end;
    let writing: Promise<void> | undefined;
    try {
      writing = this.#writeAt(spaceEnd > end ? withSpace(bytes, spaceEnd - start) : bytes, start);
    } catch (error) {
      return this.#afterFailedWrite(batch, bytes, start, spaceEnd, error);
    }
    if (writing === undefined) return this.#afterWrite(batch, start, end, spaceEnd);
    return writing.then(
      () => this.#afterWrite(batch, start, end, spaceEnd),
      (error: unknown) => this.#afterFailedWrite(batch, bytes, start, spaceEnd, error),
    );
  }

  /**
   * A write of `batch` (`bytes`, then the space up to `spaceEnd`) at `start` failed with `error`. The space is an
   * optimisation, never a reason to refuse records: a disk or quota with room for the lines but not for the space
   * after them (the space is up to 64 KiB) would otherwise refuse every append from then on. So on a lack of room
   * the write is cut back (TJ-DUR-023) and the lines written alone; a second failure, or any other, is the append's.
   */
  async #afterFailedWrite(
    batch: Pending[],
    bytes: Uint8Array,
    start: number,
    spaceEnd: number,
    error: unknown,
  ): Promise<void> {
    const end = start + bytes.length;
    // The truncations below cut the space: an extension still writing zeros past it would grow the file again.
    if (this.#extension !== null) await this.#extension;
    try {
      if (spaceEnd === end || !isOutOfSpace(error)) throw error;
      // A truncation that fails here is tried again below; the append reports the write's failure, not its own.
      await this.#fs.ftruncate(this.#fd, start).catch(() => Promise.reject(error));
      this.#cutSpace(start);
      const writing = this.#writeAt(bytes, start);
      if (writing !== undefined) await writing;
    } catch (failed) {
      const failure = new JournalWriteError(this.path, 'write', failed);
      // Set before anything is awaited: no append queued behind this one may be written (TJ-DUR-030).
      this.#failed = failure;
      // Held lines in this batch, or queued behind it, were acknowledged and are lost: the writer's memory holds
      // records the file never will, so it is poisoned until a reopen reads what the file holds.
      if (batch.some((pending) => pending.held) || this.#heldChunks > 0) this.#poison = this.#heldLost = failure;
      // Undo a partial write so the next append starts on a line boundary (TJ-DUR-023); if that fails too, refuse.
      // The truncation takes any space after the lines with it (TJ-DUR-023): the file ends where its lines do.
      try {
        await this.#fs.ftruncate(this.#fd, start);
        this.#cutSpace(start);
      } catch (truncateError) {
        this.#poison = new JournalWriteError(this.path, 'ftruncate after a failed write', truncateError);
      }
      for (const pending of batch) pending.reject(failure);
      this.#cancelQueued(failure);
      return;
    }
    await this.#afterWrite(batch, start, end, end);
  }

  /**
   * `batch` is written at `start` up to `end`, the space after it up to `spaceEnd`: in `none` mode its lines are
   * acknowledged now (and the sync a waiting flush wants is issued), otherwise once their sync and the link check
   * after it have returned.
   */
  #afterWrite(batch: Pending[], start: number, end: number, spaceEnd: number): Promise<void> | undefined {
    if (this.durability !== 'none') return this.#syncBatch(batch, start, end, spaceEnd);
    this.#writesDone += 1;
    if (this.#flushWaiters > 0 && !this.#writeDue()) this.#syncAfterWrite();
    this.#acknowledge(batch, start, end, spaceEnd);
    return undefined;
  }

  /** `every` and `group` modes: fdatasyncs the written `batch`, checks the file's name, then acknowledges it. */
  async #syncBatch(batch: Pending[], start: number, end: number, spaceEnd: number): Promise<void> {
    let linked: LinkCheck;
    try {
      const sync = this.#fs.fdatasync(this.#fd);
      linked = this.#links.start();
      await sync;
    } catch (error) {
      const failure = new JournalWriteError(this.path, 'fdatasync', error);
      this.#poison = failure;
      for (const pending of batch) pending.reject(failure);
      return;
    }
    const unlinked = linked.answer !== undefined ? linked.answer : await linked.answered;
    if (unlinked !== null) {
      this.#poison = unlinked;
      for (const pending of batch) pending.reject(unlinked);
      return;
    }
    // The sync of an extension ahead ran beside this one: had it failed, it may have taken the error of these lines
    // with it (a failed sync reports an error once), so this sync's success proves nothing.
    if (this.#poison !== null) {
      for (const pending of batch) pending.reject(new WriterPoisonedError(this.path, this.#poison));
      return;
    }
    this.#acknowledge(batch, start, end, spaceEnd);
  }

  /** The lines of `batch`, written from `start` to `end` with space up to `spaceEnd`, are in the file: resolves them. */
  #acknowledge(batch: Pending[], start: number, end: number, spaceEnd: number): void {
    this.#size = end;
    this.#fileEnd = Math.max(this.#fileEnd, spaceEnd);
    if (this.#preallocate && this.durability !== 'group' && this.#extension === null && this.#queue.length === 0)
      this.#extendAhead();
    let offset = start;
    for (const pending of batch) {
      pending.resolve({ cursor: offset, length: pending.length });
      offset += pending.length;
    }
  }

  /**
   * Extends the space before the appends reach its end (see `spaceEndAhead`), in the background, when no append waits
   * to be written, in `every` and `none` modes: zeros written past it, then a sync, so that the append that would have
   * reached the end writes into space the file holds and its own sync commits no new length (an append that extends
   * the space pays a write of the new space and a journal commit with its sync). The sync is the file's like any
   * other: its failure poisons the file (TJ-DUR-021), since it may have consumed the error of lines written meanwhile,
   * and so does a write that fails for another reason than room. Without room for the zeros, nothing written changes:
   * the appends go on within the space, and the one that passes its end extends it itself and is cut back to its lines
   * there; none is tried ahead again. Not in `group` mode, whose appends come in a steady stream and share their
   * syncs: there an extension ahead ran beside the batches' syncs and made the batch that reached the end wait for it,
   * and a batch that extends the space itself spreads the cost over all of its appends.
   */
  #extendAhead(): void {
    if (this.#extendingRefused || this.#closing !== null || this.#poison !== null || this.#failed !== null) return;
    const to = spaceEndAhead(this.#size, this.#fileEnd);
    if (to === undefined) return;
    const from = this.#fileEnd;
    const cuts = this.#spaceCuts;
    const extension: Promise<void> = this.#writeSpace(from, to, cuts)
      .then(undefined, (error: unknown) => {
        // `#sync` poisons the file before it rejects; a write that failed otherwise than for room is recorded so too.
        this.#poison ??= new JournalWriteError(this.path, 'pre-allocate', error);
      })
      .then(() => {
        // Before anything waiting for it goes on: a batch that waited must not find it still under way.
        this.#flushSyncs.delete(extension);
        if (this.#extension === extension) this.#extension = null;
      });
    this.#extension = extension;
    // Close and rewrite wait for it before they close the descriptor, as for a flush's sync.
    this.#flushSyncs.add(extension);
  }

  async #writeSpace(from: number, to: number, cuts: number): Promise<void> {
    try {
      await writeAll(this.#fs, this.#fd, new Uint8Array(to - from), from);
    } catch (error) {
      if (!isOutOfSpace(error)) throw error;
      // No room for the space: the zeros that fitted are cut away, leaving the file as it was (a closed file holds
      // only lines, TJ-DUR-034, and the room goes back to the lines), and the append that passes the space extends it
      // itself, cutting that write back to its lines. A truncation that fails poisons the file, as after a failed
      // write (see `#afterFailedWrite`).
      this.#extendingRefused = true;
      await this.#fs.ftruncate(this.#fd, from);
      return;
    }
    await this.#sync(this.#writesDone);
    if (cuts === this.#spaceCuts) this.#fileEnd = Math.max(this.#fileEnd, to);
  }

  /** The space was cut: the file now ends at `end`. */
  #cutSpace(end: number): void {
    this.#fileEnd = end;
    this.#spaceCuts += 1;
  }

  /**
   * Refuses every append queued when a write failed, in the same synchronous run as the failed write's rejection
   * (TJ-DUR-030): so an append made by a caller that has seen the failure is never among them. On its own (no owner
   * that re-reads its state and resumes), the file then takes appends again: before, the drain that failed went on
   * with the queue, and an append made from the failure's rejection handler joined it and was refused as well, and so
   * on for every append of a caller that awaits each one.
   */
  #cancelQueued(failure: unknown): void {
    const queued = this.#queue.splice(0);
    this.#heldChunks = 0;
    this.#heldBytes = 0;
    for (const pending of queued) {
      this.#unwrittenBytes -= pending.length;
      pending.reject(new AppendCancelledError(this.path, failure));
    }
    if (!this.#resumeByOwner) this.#failed = null;
  }

  /**
   * Writes all of `out` at `position`: synchronously when the file system can (undefined is then returned), so the
   * sync that follows (or, in `none` mode, the acknowledgement) runs in the same synchronous run as the write, not a
   * few promise reactions later.
   */
  #writeAt(out: Uint8Array, position: number): Promise<void> | undefined {
    if (this.#writeNow !== undefined && out.length <= SYNC_WRITE_MAX_BYTES) {
      writeAllNow(this.#writeNow, this.#fd, out, position);
      return undefined;
    }
    return writeAll(this.#fs, this.#fd, out, position, AWAITED);
  }

  /** Waits until every append made so far is settled and its line written (held lines included). */
  async idle(): Promise<void> {
    if (this.#queue.length > 0) {
      this.#writeHeld = true;
      this.#draining ??= this.#drain();
    }
    if (this.#draining === null) return;
    this.#idleWaiters += 1;
    try {
      while (this.#draining !== null) await this.#draining;
    } finally {
      this.#idleWaiters -= 1;
    }
  }

  /**
   * Waits for pending appends and writes the held lines, then fdatasyncs the file: what makes `none`-mode lines
   * durable (spec §11.1) before close, which fsyncs (TJ-DUR-015). From the first flush on, a `none`-mode file
   * pre-allocates space as the other modes do (unless opened with `preallocate: false`): a caller that flushes is
   * one that syncs at its own boundaries, and each of those syncs then commits no new file size (spec §11.6).
   */
  async flush(): Promise<void> {
    // Closing makes every line durable with its own sync (or reports why not): a flush that meets it answers with it.
    if (this.#closing !== null) return this.#closing;
    return this.#flushAfter(await this.#idleForFlush());
  }

  /**
   * {@link AppendFile.idle}, telling the file that a flush follows (see {@link idleForFlush}): in `none` mode the write
   * that empties the queue issues the sync at once. Resolves with the sync so issued meanwhile, or null.
   */
  async #idleForFlush(): Promise<WriteSync | null> {
    if (this.#preallocateOnFlush) this.#preallocate = true;
    if (this.durability !== 'none') {
      await this.idle();
      return null;
    }
    const before = this.#writeSync;
    this.#flushWaiters += 1;
    try {
      await this.idle();
    } finally {
      this.#flushWaiters -= 1;
    }
    return this.#writeSync === before ? null : this.#writeSync;
  }

  /**
   * The rest of a flush, once the queue it waited for is written: `issued`, the sync a write issued while it waited,
   * when that sync covers every write made (its failure is then this flush's, as the failure of its own sync would
   * be); otherwise a sync of its own, unless every write is synced already. A file poisoned otherwise refuses.
   */
  #flushAfter(issued: WriteSync | null): Promise<void> {
    if (this.#closing !== null) return this.#closing;
    const covered = this.#writesDone;
    const covering = issued !== null && issued.covered >= covered;
    if (this.#poison !== null && !(covering && this.#poison === issued.failure))
      return Promise.reject(new WriterPoisonedError(this.path, this.#poison));
    if (covering) return issued.done;
    if (covered === this.#writesSynced) return Promise.resolve();
    return this.#sync(covered);
  }

  /**
   * Issues the sync of the flushes waiting for the write that just emptied the queue, right after that write (see
   * {@link idleForFlush}); each of them finds it covering what it must make durable and answers with it. Its failure
   * poisons the file (as a flush's own sync does, TJ-DUR-021): the flushes waiting for it reject with it, and every
   * later append and flush is refused with it — so the rejection is observed here too, for when nobody waits for it
   * (the flush met a close meanwhile, whose own sync then reports the file's state).
   */
  #syncAfterWrite(): void {
    const issued: WriteSync = { covered: this.#writesDone, done: Promise.resolve(), failure: undefined };
    issued.done = this.#sync(issued.covered, issued);
    this.#writeSync = issued;
    issued.done.then(undefined, (error: unknown) => {
      if (error !== issued.failure) throw error;
    });
  }

  /**
   * fdatasyncs the file, then records that the first `covered` writes are durable; a failed sync poisons the file
   * (TJ-DUR-021), as does finding the file unlinked (TJ-DUR-036), and rejects with that (noted in `issued` too).
   */
  async #sync(covered: number, issued?: WriteSync): Promise<void> {
    // fdatasync, not fsync: the data and the file size are what a reader needs back; an fsync would also commit the
    // modification time, which turns every sync into a journal commit even inside pre-allocated space.
    const sync = this.#fs.fdatasync(this.#fd);
    this.#flushSyncs.add(sync);
    const linked = this.#links.start();
    try {
      await sync;
    } catch (error) {
      this.#poison = new JournalWriteError(this.path, 'fdatasync', error);
      if (issued !== undefined) issued.failure = this.#poison;
      throw this.#poison;
    } finally {
      this.#flushSyncs.delete(sync);
    }
    const unlinked = linked.answer !== undefined ? linked.answer : await linked.answered;
    if (unlinked !== null) {
      this.#poison ??= unlinked;
      if (issued !== undefined) issued.failure = this.#poison;
      throw unlinked;
    }
    this.#writesSynced = Math.max(this.#writesSynced, covered);
  }

  /** Waits until no flush's sync is running (see `#flushSyncs`); their failures are their callers' to see. */
  async #flushSyncsSettled(): Promise<void> {
    while (this.#flushSyncs.size > 0) await Promise.allSettled([...this.#flushSyncs]);
  }

  /**
   * Replaces the whole file atomically with `chunks` (TJ-DUR-009) while holding its lock, and goes on appending to
   * the new file. Used by compaction and retention, which keep the lines they retain byte for byte.
   */
  rewrite(chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void> {
    // Appends made from now on wait for the new file (TJ-STORE-006): written before the rename, they would be lost
    // with the old one; in call order after it, once it is open, they follow its lines.
    const result = (this.#rewriting ?? Promise.resolve()).then(() => this.#rewrite(chunks));
    const gate = result.then(
      () => undefined,
      () => undefined,
    );
    this.#rewriting = gate;
    // Registered before any append waits on the gate: those appends find it cleared and go through.
    gate.then(() => {
      if (this.#rewriting === gate) this.#rewriting = null;
    });
    return result;
  }

  async #rewrite(chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void> {
    await this.flush();
    try {
      await replaceFile(this.#fs, this.path, chunks);
    } catch (error) {
      // Before the rename the old file is untouched and appends may go on; after it (a failed directory fsync) the
      // descriptor names a replaced file, so refuse appends rather than write where nobody reads.
      if (!(error instanceof JournalWriteError && error.operation === 'fsync directory')) throw error;
      this.#poison = error;
      throw error;
    }
    try {
      await this.#flushSyncsSettled();
      await this.#fs.close(this.#fd).catch(() => undefined);
      this.#fd = await this.#fs.open(this.path, 'read-write');
      this.#links.use(this.#fd);
      this.#size = (await this.#fs.fstat(this.#fd)).size;
      this.#cutSpace(this.#size);
    } catch (error) {
      this.#poison = new JournalWriteError(this.path, 'reopen after rewrite', error);
      throw this.#poison;
    }
  }

  /**
   * Waits for pending appends, fsyncs in `none` mode (TJ-DUR-015), closes the file and releases the lock. Rejects when
   * that final sync fails, or when a failed write lost held lines, whose appends were acknowledged (the lock is
   * released all the same, so a reopen can repair). Every call, overlapping or
   * later, answers with the one close: the descriptor is closed exactly once.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    // Lines held while the last write ran start no write of their own: idle again until none is left. The syncs of
    // flushes started before close are waited for inside the loop, so nothing is queued after the last look.
    do {
      await this.idle();
      await this.#flushSyncsSettled();
    } while (this.#queue.length > 0);
    this.#closed = true;
    let failure: unknown = null;
    if (this.#writesDone !== this.#writesSynced && this.#poison === null) {
      try {
        await this.#fs.fsync(this.#fd);
        // The records this sync was to make durable are in no file once the file lost its last name (TJ-DUR-036).
        failure = await this.#links.check();
      } catch (error) {
        failure = new JournalWriteError(this.path, 'fsync on close', error);
      }
    }
    // A closed file holds only lines (TJ-DUR-034). Not synced, and a failure ignored: a crash that undoes the
    // truncation leaves space that readers ignore and the next writer reuses, so it costs no sync at every close.
    if (this.#fileEnd > this.#size && this.#poison === null)
      await this.#fs.ftruncate(this.#fd, this.#size).catch(() => undefined);
    await this.#fs.close(this.#fd).catch(() => undefined);
    await this.#lock.release();
    if (failure !== null) throw failure;
    if (this.#heldLost !== null) throw this.#heldLost;
  }
}

/** `bytes` followed by NUL bytes up to `length`: the lines and the space after them, for one write. */
function withSpace(bytes: Uint8Array, length: number): Uint8Array {
  const out = Buffer.alloc(length);
  out.set(bytes, 0);
  return out;
}

/** Errno codes of a write refused for want of room: the disk is full, the quota is reached, the file is at its limit. */
const OUT_OF_SPACE = new Set(['ENOSPC', 'EDQUOT', 'EFBIG']);

function isOutOfSpace(error: unknown): boolean {
  return OUT_OF_SPACE.has((error as NodeJS.ErrnoException | undefined)?.code ?? '');
}

/** True when `batch` holds a line that is not held: an append whose promise waits for this write. */
function hasAwaited(batch: readonly Pending[]): boolean {
  for (const pending of batch) if (!pending.held) return true;
  return false;
}

function used(pending: Pending): Uint8Array {
  return pending.length === pending.bytes.length ? pending.bytes : pending.bytes.subarray(0, pending.length);
}

/** The lines of `batch` in one buffer, each text line written into it as UTF-8 with its LF. */
function concat(batch: readonly Pending[]): Uint8Array {
  let length = 0;
  for (const pending of batch) length += pending.length;
  // Unsafe (not zeroed): every byte is written below, the lengths add up to it.
  const out = Buffer.allocUnsafe(length);
  let offset = 0;
  for (const pending of batch) {
    if (pending.heldText !== null) {
      // The held lines' lengths were counted as they came (by their writer); a wrong count would leave bytes of
      // unzeroed memory in the file, so it is checked here, once per chunk, and never written.
      const written = out.write(pending.heldText, offset, pending.length, 'utf8');
      if (written !== pending.length || Buffer.byteLength(pending.heldText, 'utf8') !== pending.length)
        throw new Error(`held lines of ${pending.length} bytes encode to ${written}: a writer miscounted them`);
    } else if (pending.text === null) out.set(used(pending), offset);
    else {
      out.write(pending.text, offset, pending.length - 1, 'utf8');
      out[offset + pending.length - 1] = LF;
    }
    offset += pending.length;
  }
  return out;
}

function withFile(error: WriterError, file: string): WriterError {
  return error.file === undefined ? new WriterError(error.code, `${file}: ${error.message}`, file) : error;
}

/**
 * @internal For the event-log writer's held `chat.delta` lines and the checkpoints behind them (`EventLog`'s
 * synchronous delta path): what `appendLine(bytes, { hold: true })` does, but synchronously, without a promise, and
 * for a line given as text without encoding it now. `line` is one line, its one LF at its end, of `length` UTF-8
 * bytes, LF included (the caller built it and counted it; the count is checked when the chunk is written). True once
 * the line is held; false, with nothing queued, when the file would not hold it now (not in `none` mode, closed,
 * poisoned, or behind a failed write): the caller then takes the promise path, which says why.
 */
export function holdLine(file: AppendFile, line: string | Uint8Array, length: number): boolean {
  return holdLineOf(file, line, length);
}

/**
 * @internal `file.flush()` in two steps, for a caller that waits for something else between them (an event log, for
 * its appender): the first waits for the queue like `idle`, telling the file that a flush follows, so that in `none`
 * mode the write that empties the queue issues the sync in its own synchronous run (a flush would issue it several
 * promise reactions later); `flushAfter` then waits for that sync when it covers every write made, else issues one.
 */
export function idleForFlush(file: AppendFile): Promise<unknown> {
  return idleForFlushOf(file);
}

/** @internal The second step of {@link idleForFlush}: `issued` is what the first resolved with. */
export function flushAfter(file: AppendFile, issued: unknown): Promise<void> {
  return flushAfterOf(file, issued as WriteSync | null);
}
