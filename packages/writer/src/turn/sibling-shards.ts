import { basename, dirname, join } from 'node:path';
import { JournalWriteError } from '../errors.js';
import { attempt } from '../fs/durable-ops.js';
import { type FileSystem, type SynchronousStat, synchronousStat } from '../fs/file-system.js';
import { isSettled } from '../fs/settled-change.js';
import { descriptorSource, readTurnRecords } from './read-turn-records.js';
import type { Siblings } from './store-siblings.js';
import type { TurnTable } from './turn-table.js';

/**
 * The incremental reader of a session's other shards (every file `<sessionId>~*.jsonl` and `<sessionId>.jsonl` in the
 * journal's directory other than the journal itself, spec §4.4): what lets a writer advance a turn another process
 * submitted, and recognise a retry that reached another process first. It remembers where each shard's read stopped
 * and caches the directory listing, so a read when nothing changed costs a `stat` of the directory and of each known
 * shard.
 *
 * One read at a time, in call order: the application's `refreshSiblings()`, the reads a writer's calls make and the
 * re-read from the start after a failed write (TJ-DUR-030) all queue here. A read that overlapped the re-read would
 * record a shard's end position in the fresh state after folding the shard into the discarded table, and the re-read
 * would then take that shard as read: every turn in it would be lost to the writer.
 */
export class SiblingShards implements Siblings {
  readonly #fs: FileSystem;
  readonly #dir: string;
  /** The journal's own file name, which is not a sibling. */
  readonly #own: string;
  readonly #sessionId: string;
  /** The writer's table of turns, which a re-read after a failed write replaces. */
  readonly #table: () => TurnTable;
  /**
   * Where incremental reads of the session's other shards resume, per file name, and the file's length and change
   * time when it was read (its length can exceed `end` by pre-allocated space, spec §3.8).
   */
  #ends = new Map<string, ShardRead>();
  /** The last listing of the session's other shards, and the directory's identity and change time when it was taken. */
  #listing: { names: readonly string[]; ino: number; ctimeMs: number | undefined; settled: boolean } | undefined;
  /** Settles when the last read queued has ended, successfully or not: the next one starts then. */
  #tail: Promise<void> = Promise.resolve();
  /**
   * The read queued and not started yet. A later call shares it instead of queueing another: it starts after that
   * call, so it sees everything the call needs (and a read from the start serves a plain read).
   */
  #waiting: { promise: Promise<void>; fromStart: boolean } | null = null;
  /** Reads queued or running: while there is one, only a read can tell what the shards hold. */
  #reads = 0;
  /** The file system's synchronous `stat`, when it has one (see {@link SiblingShards.unchanged}). */
  readonly #statNow: SynchronousStat | undefined;

  /**
   * @param path the journal whose siblings these are, of session `sessionId`.
   * @param table the writer's current table of turns, into which the shards' records are folded.
   */
  constructor(fs: FileSystem, path: string, sessionId: string, table: () => TurnTable) {
    this.#fs = fs;
    this.#dir = dirname(path);
    this.#own = basename(path);
    this.#sessionId = sessionId;
    this.#table = table;
    this.#statNow = synchronousStat(fs);
  }

  /**
   * True when the shards are known, without waiting, to hold nothing the last read did not fold into the table: no
   * read is queued or running, the listing is trusted and the directory's change time has not moved, and every
   * listed shard was read and has not changed since. It makes the checks a read makes when nothing changed (the
   * `stat` of the directory and of each shard), through the file system's synchronous `stat`, and changes nothing.
   * False when any of that cannot be told now (no synchronous `stat`, a `stat` that fails, a listed shard never
   * read): a {@link SiblingShards.read} then decides. What it buys: a writer that learns this issues its write in
   * the same synchronous run as the call, instead of a chain of promise reactions later.
   */
  unchanged(): boolean {
    const statNow = this.#statNow;
    const listing = this.#listing;
    if (statNow === undefined || this.#reads > 0 || listing?.settled !== true) return false;
    try {
      const dir = statNow(this.#dir);
      if (dir.ino !== listing.ino || dir.ctimeMs !== listing.ctimeMs) return false;
      for (const name of listing.names) {
        const known = this.#ends.get(name);
        if (known === undefined || !unchangedSince(known, statNow(join(this.#dir, name)))) return false;
      }
    } catch {
      // Any failure (a shard removed, EIO, …) only means "cannot be told now": the read that follows reports it.
      return false;
    }
    return true;
  }

  /** Folds what the session's other shards appended since the last read into the writer's table. */
  read(): Promise<void> {
    return this.#queue(false);
  }

  /**
   * Forgets every read position and the listing, then reads every shard from its start into the writer's table (the
   * table was just replaced: the re-read after a failed write). Starts once the reads queued before it have ended.
   */
  readFromStart(): Promise<void> {
    return this.#queue(true);
  }

  #queue(fromStart: boolean): Promise<void> {
    const waiting = this.#waiting;
    if (waiting !== null) {
      waiting.fromStart ||= fromStart;
      return waiting.promise;
    }
    const next = { promise: Promise.resolve(), fromStart };
    this.#reads += 1;
    next.promise = this.#tail.then(async () => {
      // Started: a later call queues a read of its own (this one may have passed what it needs).
      this.#waiting = null;
      if (next.fromStart) {
        this.#ends = new Map();
        this.#listing = undefined;
      }
      for (const name of await this.#names()) await this.#readShard(join(this.#dir, name), name);
    });
    this.#waiting = next;
    this.#tail = next.promise.then(
      () => {
        this.#reads -= 1;
      },
      () => {
        this.#reads -= 1;
      },
    );
    return next.promise;
  }

  /**
   * The names of the session's other shards. The directory is listed again only when its change time moved since a
   * listing that can be trusted: the recommended layout keeps every session of a store in one directory, so a listing
   * per submission would cost time in proportion to the whole store.
   */
  async #names(): Promise<readonly string[]> {
    const listedAt = Date.now();
    const dir = await attempt(this.#dir, 'stat', () => this.#fs.stat(this.#dir));
    const cached = this.#listing;
    if (cached?.settled === true && cached.ino === dir.ino && cached.ctimeMs === dir.ctimeMs) return cached.names;
    const names = (await attempt(this.#dir, 'readdir', () => this.#fs.readdir(this.#dir))).filter(
      (name) => name !== this.#own && isSessionFile(name, this.#sessionId),
    );
    this.#listing = { names, ino: dir.ino, ctimeMs: dir.ctimeMs, settled: isSettled(dir.ctimeMs, listedAt) };
    return names;
  }

  async #readShard(path: string, name: string): Promise<void> {
    const known = this.#ends.get(name);
    if (known !== undefined) {
      const now = await this.#fs.stat(path).catch((error: unknown) => {
        // Removed since the listing: the open below finds it gone too. Anything else fails the read.
        if (errnoOf(error) === 'ENOENT') return undefined;
        throw new JournalWriteError(path, 'stat', error);
      });
      if (now !== undefined && unchangedSince(known, now)) return;
    }
    let fd: number;
    try {
      fd = await this.#fs.open(path, 'read');
    } catch (error) {
      // ENOENT: the shard was removed since the listing (a sweep deleted an empty shard). EFTYPE: a FIFO, socket or
      // device under a shard's name, which holds no turns and is never read (TJ-DUR-031). Any other failure (EACCES,
      // EIO, EMFILE, ELOOP for a link that may lead to a real shard…) leaves turns unknown: skipping the shard would let
      // a retry that reached it be written again (TJ-TURN-003), so the read fails.
      const errno = errnoOf(error);
      if (errno === 'ENOENT' || errno === 'EFTYPE') return;
      throw new JournalWriteError(path, 'open', error);
    }
    try {
      const readAt = Date.now();
      const { size, ino, ctimeMs } = await this.#fs.fstat(fd);
      // A file that shrank or was replaced was rewritten by a sweep: read it again from the start.
      const from = known !== undefined && known.ino === ino && known.end <= size ? known.end : 0;
      const settled = isSettled(ctimeMs, readAt);
      // Nothing to read (a shard created and not written yet) is remembered too: the next check is then a `stat`,
      // not another open, and the check that needs no waiting (`unchanged`) can vouch for the shard.
      const end =
        from === size
          ? size
          : (await readTurnRecords(path, descriptorSource(this.#fs, path, fd), this.#table(), from)).end;
      this.#ends.set(name, { end, ino, size, ctimeMs, settled });
    } finally {
      // The shard was only read: a failed close loses nothing, and the read's own outcome is what the caller needs.
      await this.#fs.close(fd).catch(() => undefined);
    }
  }
}

function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Where a shard's last read ended, and what the shard's metadata said when it began. */
interface ShardRead {
  readonly end: number;
  readonly ino: number;
  readonly size: number;
  readonly ctimeMs: number | undefined;
  /** Whether `ctimeMs` was far enough before the read that a later write must have changed it (see `isSettled`). */
  readonly settled: boolean;
}

/**
 * Whether a shard cannot hold records its last read did not see. Its length alone decides when it ends where the read
 * did: an append grows it. With pre-allocated space after its lines, an append fills the space and the length stays
 * (TJ-FRAME-037), so only a change time that stayed the same, and that a later write would have moved, says so.
 */
function unchangedSince(known: ShardRead, now: { ino: number; size: number; ctimeMs?: number }): boolean {
  if (now.ino !== known.ino) return false;
  if (now.size === known.end) return true;
  return known.settled && now.size === known.size && now.ctimeMs === known.ctimeMs;
}

function isSessionFile(name: string, sessionId: string): boolean {
  return name === `${sessionId}.jsonl` || (name.startsWith(`${sessionId}~`) && name.endsWith('.jsonl'));
}
