import * as fs from 'node:fs';
import { promisify } from 'node:util';
import { parallelFdatasync, parallelFsync } from './sync-scheduler.js';

/** How {@link FileSystem.open} opens a file. */
export type OpenMode =
  /** Read only; the file must exist. */
  | 'read'
  /** Read and write, creating the file when absent; never truncates. */
  | 'read-write'
  /** Read and write, creating the file; fails with EEXIST when it exists (O_CREAT|O_EXCL). */
  | 'create-exclusive';

/** File metadata the writer needs. */
export interface FileStat {
  /** Size in bytes. */
  readonly size: number;
  /** Inode number, to notice a file replaced under the same name. */
  readonly ino: number;
  /** Whether it is a directory. */
  readonly isDirectory: boolean;
  /**
   * Last status change, epoch milliseconds, when the file system keeps one (a directory's changes whenever an entry is
   * added, removed or renamed). Optional: without it a writer lists directories again instead of trusting a listing.
   */
  readonly ctimeMs?: number;
  /**
   * How many names (hard links) the file has; 0 once every name of an open file was removed (an operator's `rm -rf`
   * of its directory, a file renamed over it). Optional: with each sync that acknowledges appends, a writer checks
   * that its file still has a name (through `fstat` of the file when a `stat` of its directory cannot vouch for it)
   * and refuses those appends with `journal_unlinked` when it is 0 (TJ-DUR-036). Without it nothing is checked: the
   * writer goes on acknowledging records written to a file that no reader can find.
   */
  readonly nlink?: number;
  /**
   * Last modification, epoch milliseconds, when the file system keeps one. A lock file's is its holder's lease
   * (TJ-DUR-038): without it (or without {@link FileSystem.touch}) locks carry no lease, and a holder in another PID
   * namespace cannot be proved dead.
   */
  readonly mtimeMs?: number;
}

/** How a write is meant, for file systems that can use it. */
export interface WriteOptions {
  /**
   * True when an acknowledgement waits for this write: every append of an `AppendFile` (in every durability mode,
   * since even `none` resolves only once its bytes reach the OS) and the lock file. A hint: the real file system then
   * makes a small write synchronously (see {@link SYNC_WRITE_MAX_BYTES}); others may ignore it.
   */
  readonly awaited?: boolean;
}

/**
 * The file-system calls every writer operation goes through, and nothing else. One small layer, so that tests (and
 * the conformance kit's simulated file system) can inject faults (ENOSPC, EIO, a failing fsync) and simulate crashes
 * that lose unsynced data. Every method rejects with the Node.js errno error (`code` set) of the failing call.
 * Positions are explicit: the writer always knows where its bytes go, which is what lets it truncate a failed append
 * back (TJ-DUR-023).
 */
export interface FileSystem {
  /**
   * Opens a regular file and returns its descriptor. Never follows a symbolic link in the last component of `path`
   * (rejects with `ELOOP`) and never opens anything but a regular file: a FIFO, socket or device rejects with
   * `EFTYPE` (spec TJ-DUR-031, TJ-DUR-032), and the open itself never waits for a FIFO's other end.
   */
  open(path: string, mode: OpenMode): Promise<number>;
  /** Writes `length` bytes of `buffer` from `offset` at file `position`; returns the bytes written (may be short). */
  write(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: number,
    options?: WriteOptions,
  ): Promise<number>;
  /** Reads up to `length` bytes into `buffer` at `offset` from file `position`; returns the bytes read. */
  read(fd: number, buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  /** Flushes the file's data (and the metadata needed to read it back) to stable storage. */
  fdatasync(fd: number): Promise<void>;
  /** Flushes the file's data and metadata to stable storage. */
  fsync(fd: number): Promise<void>;
  /** Truncates an open file to `length` bytes. */
  ftruncate(fd: number, length: number): Promise<void>;
  /** Metadata of an open file. */
  fstat(fd: number): Promise<FileStat>;
  /** Closes a descriptor. */
  close(fd: number): Promise<void>;
  /** Metadata of a path; rejects with ENOENT when absent. */
  stat(path: string): Promise<FileStat>;
  /** Creates one directory (not its parents); rejects with EEXIST when it exists. */
  mkdir(path: string): Promise<void>;
  /** Flushes a directory's entries (creations, renames, removals) to stable storage. */
  fsyncDirectory(path: string): Promise<void>;
  /** Atomically renames `from` to `to`, replacing `to`. */
  rename(from: string, to: string): Promise<void>;
  /** Creates the name `newPath` for the existing file `existing` (a hard link); rejects with EEXIST when it exists. */
  link(existing: string, newPath: string): Promise<void>;
  /** Removes a file. */
  unlink(path: string): Promise<void>;
  /** Names of a directory's entries. */
  readdir(path: string): Promise<string[]>;
  /** The whole content of a (small) regular file; refuses links and special files as {@link FileSystem.open} does. */
  readFile(path: string): Promise<Uint8Array>;
  /**
   * Sets a file's modification time to now: how a lock's holder renews its lease (TJ-DUR-038). Optional: a file system
   * without it takes locks with no lease.
   */
  touch?(path: string): Promise<void>;
  /**
   * True when paths name files of this host's file system ({@link nodeFileSystem}, and a wrapper made by spreading
   * it): a compaction then also takes the flock foreign writers take on them (spec TJ-DUR-052), which only a host
   * process can. A simulated file system leaves it out.
   */
  readonly hostPaths?: boolean;
}

/** The name of one required call of the {@link FileSystem} layer (the optional `touch` and `hostPaths` are not). */
export type FileSystemOperation = Exclude<keyof FileSystem, 'touch' | 'hostPaths'>;

/**
 * Every call of the layer, in the order of the interface: for wrappers (fault injection, recording, simulation) that
 * must wrap each call and nothing else.
 */
export const FILE_SYSTEM_OPERATIONS: readonly FileSystemOperation[] = [
  'open',
  'write',
  'read',
  'fdatasync',
  'fsync',
  'ftruncate',
  'fstat',
  'close',
  'stat',
  'mkdir',
  'fsyncDirectory',
  'rename',
  'link',
  'unlink',
  'readdir',
  'readFile',
];

// Every open refuses a symbolic link as the last component (O_NOFOLLOW: `<sid>.jsonl -> /etc/passwd` must not be
// truncated and appended to) and cannot block (O_NONBLOCK: opening a FIFO for reading otherwise waits in the thread
// pool for a writer that never comes, and no `process.exit()` can end a process with a thread stuck in open(2)).
// O_NONBLOCK has no effect on reads and writes of regular files, the only files an open lets through (see openRegular).
const SAFE_FLAGS = (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);

const OPEN_FLAGS: Record<OpenMode, number> = {
  read: fs.constants.O_RDONLY | SAFE_FLAGS,
  'read-write': fs.constants.O_RDWR | fs.constants.O_CREAT | SAFE_FLAGS,
  'create-exclusive': fs.constants.O_RDWR | fs.constants.O_CREAT | fs.constants.O_EXCL | SAFE_FLAGS,
};

const openAsync = promisify(fs.open);

/**
 * The error an open of a file that is not regular rejects with: `EFTYPE` ("inappropriate file type"), the errno BSD
 * systems and libuv use for it, so callers handle it as any other errno error.
 */
function notRegularFile(path: string, stats: fs.Stats): NodeJS.ErrnoException {
  const kind = stats.isFIFO()
    ? 'a FIFO'
    : stats.isSocket()
      ? 'a socket'
      : stats.isCharacterDevice() || stats.isBlockDevice()
        ? 'a device'
        : stats.isDirectory()
          ? 'a directory'
          : 'not a regular file';
  return Object.assign(new Error(`EFTYPE: ${path} is ${kind}, not a regular file; refused`), {
    code: 'EFTYPE',
    path,
    syscall: 'open',
  });
}

/** Opens `path` with `flags` (which include {@link SAFE_FLAGS}), then keeps the descriptor only if it is a regular file. */
async function openRegular(path: string, flags: number): Promise<number> {
  return keepIfRegular(path, await openAsync(path, flags, 0o644));
}

/** `fd`, open at `path`, if it is a regular file; otherwise closes it and throws `EFTYPE`. */
function keepIfRegular(path: string, fd: number): number {
  let stats: fs.Stats;
  try {
    stats = fs.fstatSync(fd);
  } catch (error) {
    fs.closeSync(fd);
    throw error;
  }
  if (!stats.isFile()) {
    fs.closeSync(fd);
    throw notRegularFile(path, stats);
  }
  return fd;
}

/** Reads a whole regular file through {@link openRegular}, so a lock file that is a FIFO or a link is refused too. */
async function readRegularFile(path: string): Promise<Uint8Array> {
  return readWholeAndClose(await openRegular(path, OPEN_FLAGS.read));
}

/** The same, synchronously: the open cannot wait for a writer (`O_NONBLOCK`, see {@link SAFE_FLAGS}). */
function readRegularFileNow(path: string): Uint8Array {
  return readWholeAndClose(keepIfRegular(path, fs.openSync(path, OPEN_FLAGS.read)));
}

function readWholeAndClose(fd: number): Uint8Array {
  try {
    // Synchronous: the files read whole are lock files of a few dozen bytes, answered from the page cache.
    return fs.readFileSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
function writeAsync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number) {
  return new Promise<number>((resolve, reject) =>
    fs.write(fd, buffer, offset, length, position, (error, written) => (error ? reject(error) : resolve(written))),
  );
}
function readAsync(fd: number, buffer: Uint8Array, offset: number, length: number, position: number) {
  return new Promise<number>((resolve, reject) =>
    fs.read(fd, buffer, offset, length, position, (error, read) => (error ? reject(error) : resolve(read))),
  );
}
const fsyncAsync = promisify(fs.fsync);
const ftruncateAsync = promisify(fs.ftruncate);
const closeAsync = promisify(fs.close);

function toStat(stats: fs.Stats): FileStat {
  return {
    size: stats.size,
    ino: stats.ino,
    isDirectory: stats.isDirectory(),
    ctimeMs: stats.ctimeMs,
    mtimeMs: stats.mtimeMs,
    nlink: stats.nlink,
  };
}

/**
 * Awaited writes (see {@link WriteOptions.awaited}) up to this size are made with a synchronous call. Appending a line
 * to a file whose last page is cached only copies it into the page cache, while a trip through libuv's thread pool and
 * back costs several times that (bench/results/history.md, "The target not met: durable `submit` latency", step 1): on
 * the durable path (`write` then `fdatasync`) that trip alone added a visible share to the latency of a raw
 * `fdatasync`, and on the buffered path (`none` mode: a live session's deltas) it was most of the cost of an append.
 * The sync, which waits for the device, stays asynchronous. Larger writes go through the pool so the event loop never
 * copies megabytes. Appends made in one synchronous run still share one write: `AppendFile` in `none` mode waits a
 * microtask before it drains its queue, and in `group` mode the appends made while a sync is in flight share the next
 * write.
 */
export const SYNC_WRITE_MAX_BYTES = 64 * 1024;

/** Runs a synchronous call as a settled promise: its error rejects, as the asynchronous call's would. */
function settled<T>(call: () => T): Promise<T> {
  try {
    return Promise.resolve(call());
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * Where a file system keeps the synchronous twin of one of its calls: a symbol-keyed, non-enumerable property. An
 * object spread (`{ ...nodeFileSystem, stat: counted }`, the way tests and users wrap the layer) does not copy it, so
 * a wrapper never has a twin that bypasses its own call.
 */
function twinSlot<F>(name: string): {
  attach<T extends FileSystem>(fs: T, twin: F): T;
  of(fs: FileSystem): F | undefined;
} {
  const key = Symbol(`turnjournal.${name}`);
  return {
    attach(fs, twin) {
      Object.defineProperty(fs, key, { value: twin, enumerable: false });
      return fs;
    },
    of: (fs) => (fs as unknown as { [key]?: F })[key],
  };
}

/** A synchronous `stat`: returns what the file system's `stat` resolves with, throws what it rejects with. */
export type SynchronousStat = (path: string) => FileStat;

const STAT_NOW = twinSlot<SynchronousStat>('statNow');

/**
 * @internal Gives `fs` a synchronous twin of its `stat`, which must return what `fs.stat` resolves with and throw what
 * it rejects with. The real file systems have one; a test's wrapper that counts calls can have one too.
 */
export function withSynchronousStat<T extends FileSystem>(fs: T, statNow: SynchronousStat): T {
  return STAT_NOW.attach(fs, statNow);
}

/**
 * @internal The synchronous twin of `fs.stat`, when `fs` has one. What a check that must not wait uses: the check of a
 * session's other shards before a caller's turn id is written (`turn/sibling-shards.ts`). A promise, even one that is
 * already settled, can only be read after the current synchronous run: a `submit` that awaited the `stat` of its
 * directory issued its write several promise reactions later than one that did not, which cost the benchmark machine
 * several times what the `stat` itself costs right after an `fdatasync` (cold caches; bench/results/history.md, "A
 * caller's turn id: where its 20–50 µs went", and "Figures that were in code comments").
 */
export function synchronousStat(fs: FileSystem): SynchronousStat | undefined {
  return STAT_NOW.of(fs);
}

const statNow: SynchronousStat = (path) => toStat(fs.statSync(path));

/** A synchronous positional call (`writeSync`, `readSync`): returns the bytes moved (may be fewer), throws its error. */
type PositionalCall = (fd: number, buffer: Uint8Array, offset: number, length: number, position: number) => number;

/** A synchronous awaited `write`: returns the bytes written (may be short), throws what `write` rejects with. */
export type SynchronousWrite = PositionalCall;

const WRITE_NOW = twinSlot<SynchronousWrite>('writeNow');

/**
 * @internal Gives `fs` a synchronous twin of its awaited `write` (one with `{ awaited: true }`) of at most
 * {@link SYNC_WRITE_MAX_BYTES}, which must do what that call does.
 */
export function withSynchronousWrite<T extends FileSystem>(fs: T, writeNow: SynchronousWrite): T {
  return WRITE_NOW.attach(fs, writeNow);
}

/**
 * @internal The synchronous twin of an awaited `fs.write` of at most {@link SYNC_WRITE_MAX_BYTES}, when `fs` has one:
 * what a durable append uses to issue its `fdatasync` in the same synchronous run as its write. The real file
 * system's awaited write is already a `writeSync`, but returned as a settled promise it can only be read a few
 * promise reactions later (after each `await` of the write loop), and the sync is issued only then.
 */
export function synchronousWrite(fs: FileSystem): SynchronousWrite | undefined {
  return WRITE_NOW.of(fs);
}

const writeNow: SynchronousWrite = (fd, buffer, offset, length, position) =>
  fs.writeSync(fd, buffer, offset, length, position);

/** A synchronous positional read: returns the bytes read, throws what `read` rejects with. */
export type SynchronousRead = PositionalCall;

const READ_NOW = twinSlot<SynchronousRead>('readNow');

/** @internal Gives `fs` a synchronous twin of its `read`, which must do what that call does. */
export function withSynchronousRead<T extends FileSystem>(fs: T, readNow: SynchronousRead): T {
  return READ_NOW.attach(fs, readNow);
}

/**
 * @internal The synchronous twin of `fs.read`, when `fs` has one: what the file store's reader uses for the tail of a
 * journal a reconnecting subscriber reads (cached pages: a thread-pool trip would cost more than the read, issue 39).
 */
export function synchronousRead(fs: FileSystem): SynchronousRead | undefined {
  return READ_NOW.of(fs);
}

const readNow: SynchronousRead = (fd, buffer, offset, length, position) =>
  fs.readSync(fd, buffer, offset, length, position);

/** A synchronous `readFile`: returns what the file system's `readFile` resolves with, throws what it rejects with. */
export type SynchronousReadFile = (path: string) => Uint8Array;

const READ_FILE_NOW = twinSlot<SynchronousReadFile>('readFileNow');

/** @internal Gives `fs` a synchronous twin of its `readFile`, which must do what that call does. */
export function withSynchronousReadFile<T extends FileSystem>(fs: T, readFileNow: SynchronousReadFile): T {
  return READ_FILE_NOW.attach(fs, readFileNow);
}

/**
 * @internal The synchronous twin of `fs.readFile`, when `fs` has one: what the check of a journal's lock after a sync
 * uses (`append/link-watch.ts`). A thread-pool trip for the lock file's open at every such check made 64 sessions
 * syncing together in a busy directory markedly slower (bench/results/history.md, "sessions-64 and the lock check").
 */
export function synchronousReadFile(fs: FileSystem): SynchronousReadFile | undefined {
  return READ_FILE_NOW.of(fs);
}

/**
 * The real file system (Node.js `fs` on raw descriptors). Callback APIs are used rather than `FileHandle`: they cost
 * one thread-pool hop per call and no handle object, which matters on the durable append path. Calls the kernel
 * answers from its caches without waiting for the device (small awaited writes, see {@link SYNC_WRITE_MAX_BYTES};
 * `fstat` and `stat`) are made synchronously and returned as settled promises: a thread-pool trip would cost more than
 * the call. `fdatasync` and `fsync` beyond the few libuv's pool runs at once go to worker threads (`sync-scheduler.ts`),
 * so many files syncing together are not queued behind 4 threads.
 */
export const nodeFileSystem: FileSystem = {
  hostPaths: true,
  open: (path, mode) => openRegular(path, OPEN_FLAGS[mode]),
  write: (fd, buffer, offset, length, position, options) =>
    options?.awaited === true && length <= SYNC_WRITE_MAX_BYTES
      ? settled(() => fs.writeSync(fd, buffer, offset, length, position))
      : writeAsync(fd, buffer, offset, length, position),
  read: (fd, buffer, offset, length, position) => readAsync(fd, buffer, offset, length, position),
  fdatasync: (fd) => parallelFdatasync(fd),
  fsync: (fd) => parallelFsync(fd),
  ftruncate: (fd, length) => ftruncateAsync(fd, length),
  fstat: (fd) => settled(() => toStat(fs.fstatSync(fd))),
  close: (fd) => closeAsync(fd),
  stat: (path) => settled(() => statNow(path)),
  mkdir: (path) => fs.promises.mkdir(path).then(() => undefined),
  fsyncDirectory: async (path) => {
    const fd = await openAsync(path, fs.constants.O_RDONLY | (fs.constants.O_DIRECTORY ?? 0));
    try {
      await fsyncAsync(fd);
    } finally {
      await closeAsync(fd);
    }
  },
  rename: (from, to) => fs.promises.rename(from, to),
  link: (existing, newPath) => fs.promises.link(existing, newPath),
  unlink: (path) => fs.promises.unlink(path),
  readdir: (path) => fs.promises.readdir(path),
  readFile: (path) => readRegularFile(path),
  touch: (path) => {
    const now = new Date();
    return fs.promises.utimes(path, now, now);
  },
};
withSynchronousStat(nodeFileSystem, statNow);
withSynchronousWrite(nodeFileSystem, writeNow);
withSynchronousRead(nodeFileSystem, readNow);
withSynchronousReadFile(nodeFileSystem, readRegularFileNow);

/**
 * The real file system with `fdatasync` and `fsync` made on the calling thread, as better-sqlite3 commits: a durable
 * append then costs what the device takes and nothing more (no trip to a thread and back), but **every sync blocks
 * the event loop** for the device's latency — a fraction of a millisecond on a fast disk, tens of milliseconds on a
 * busy or rotating one — and syncs of different files can no longer overlap.
 * Pass it as `fs` only where one caller at a time waits for the writer (a command-line tool, a worker process that
 * does nothing but persist); a server with many sessions should keep {@link nodeFileSystem}. Failures still reject
 * with the errno error, so the writer's handling of a failed sync (TJ-DUR-021) is unchanged.
 */
export const blockingSyncFileSystem: FileSystem = {
  ...nodeFileSystem,
  fdatasync: (fd) => settled(() => fs.fdatasyncSync(fd)),
  fsync: (fd) => settled(() => fs.fsyncSync(fd)),
};
withSynchronousStat(blockingSyncFileSystem, statNow);
withSynchronousWrite(blockingSyncFileSystem, writeNow);
withSynchronousRead(blockingSyncFileSystem, readNow);
withSynchronousReadFile(blockingSyncFileSystem, readRegularFileNow);
