import { dirname } from 'node:path';
import { JournalWriteError, journalFencedError, journalUnlinkedError, type WriterError } from '../errors.js';
import {
  type FileStat,
  type FileSystem,
  type SynchronousReadFile,
  type SynchronousStat,
  synchronousReadFile,
  synchronousStat,
} from '../fs/file-system.js';
import type { HeldLock } from '../fs/lock.js';
import { type LockFileState, LockFileWatch } from '../fs/lock-file-state.js';
import { isSettled } from '../fs/settled-change.js';

/** A look at the journal's directory: what its `stat` answered (undefined when it failed), and when it was made. */
type DirectoryLook = { readonly dir: FileStat | undefined; readonly readAt: number };

/** A file system's synchronous `stat` and `readFile`. */
type SynchronousLookups = { readonly stat: SynchronousStat; readonly readFile: SynchronousReadFile };

/** A check started with a sync (see {@link LinkWatch.start}): its answer once known, and the promise of it. */
export interface LinkCheck {
  /** The refusal, null when the file is linked, undefined while the check runs. */
  readonly answer: WriterError | null | undefined;
  readonly answered: Promise<WriterError | null>;
}

/** The check of a directory found unchanged (see `LinkWatch.start`): the file is linked, the lock this writer's. */
const LINKED: LinkCheck = { answer: null, answered: Promise.resolve(null) };

/**
 * Whether an open journal still has a name, checked once per sync before its appends are acknowledged (TJ-DUR-036):
 * every write and sync to a file whose last name was removed (`rm -rf` of its directory, a file renamed over it)
 * succeeds, and its bytes go when the descriptor closes, so without the check a caller is told a record is durable
 * that no reader will ever find.
 *
 * The file's link count (`fstat`) is the direct answer, but an `fstat` (or `stat`) of the journal at every sync made
 * every durable append on the benchmark machine (Linux 6.18, ext4) dearer, by far more than the call itself takes,
 * wherever it was placed — before the sync, during it or after it (bench/results/history.md, "Long conversations,
 * 2026-11-27 night"): the likely cause is multigrain timestamps (Linux 6.13+), where reading a file's change time makes
 * its next write take a fine-grained one, so every write dirties the inode and the next `fdatasync` commits it. A
 * `stat` of the directory costs nothing measurable (its entries change rarely), and no name in it can be removed or
 * replaced without moving its change time. So the directory is `stat`ed at every check, and the file only when the
 * directory is gone, is another one, or has changed since the file was last seen linked — or when its change time is
 * too recent to prove that (see `isSettled`).
 */
export class LinkWatch {
  readonly #fs: FileSystem;
  /** The file system's synchronous `stat`, when it has one: the directory's answer then costs no promise reaction. */
  readonly #statNow: SynchronousStat | undefined;
  /**
   * The file system's synchronous `stat` and `readFile`, when it has both: the lock is then looked at without a
   * thread-pool trip for its open, which 64 sessions syncing in a changing directory each paid at every sync.
   */
  readonly #lockNow: SynchronousLookups | undefined;
  readonly #path: string;
  readonly #dir: string;
  #fd: number;
  /** The journal's lock, whose file is in the same directory: checked with the file (TJ-DUR-040). */
  readonly #lock: HeldLock | undefined;
  readonly #lockFile: LockFileWatch | undefined;
  /** The directory as it was when the file was last seen linked, with a change time that proves it unchanged since. */
  #seen: { readonly ino: number; readonly ctimeMs: number } | null = null;

  /** Watches the file at `path`, open at `fd`, and the lock that guards it (when there is one). */
  constructor(fs: FileSystem, path: string, fd: number, lock?: HeldLock) {
    this.#fs = fs;
    this.#statNow = synchronousStat(fs);
    const readFileNow = synchronousReadFile(fs);
    this.#lockNow =
      this.#statNow !== undefined && readFileNow !== undefined
        ? { stat: this.#statNow, readFile: readFileNow }
        : undefined;
    this.#path = path;
    this.#dir = dirname(path);
    this.#fd = fd;
    this.#lock = lock;
    this.#lockFile =
      lock === undefined ? undefined : new LockFileWatch(lock.path, { ino: lock.ino, token: lock.holder.token });
  }

  /**
   * Starts a check; call it after the write of the appends it is for (it then sees an unlink that came before the
   * write, so the first record written after one is never acknowledged) and await `answered` unless `answer` is
   * already set. Started with the sync, it runs while the sync waits for the device; the real file system answers
   * at once, so `answer` is set before the sync can return.
   */
  start(): LinkCheck {
    const looked = this.#statNow === undefined ? undefined : this.#lookAtDirectory(this.#statNow);
    // The usual answer, known at once: no check object, no promise, no reaction per sync.
    if (looked !== undefined && this.#lock?.lost !== true && this.#unchanged(looked.dir)) return LINKED;
    const check: { answer: WriterError | null | undefined; answered: Promise<WriterError | null> } = {
      answer: undefined,
      answered: looked === undefined ? this.check() : this.#checkAfter(looked),
    };
    check.answered.then((answer) => {
      check.answer = answer;
    });
    return check;
  }

  /**
   * The error refusing the appends of a sync when the file has no name left (`nlink` 0), or when its lock is no longer
   * this writer's (TJ-DUR-040), or null. A failed `fstat` refuses them too: whether their bytes are reachable is
   * unknown. A file system whose `fstat` gives no `nlink` is not checked for links.
   *
   * The lock file lives in the journal's directory, so the directory's unchanged change time vouches for it as it
   * does for the journal: a take-over removes the lock and links a new one, which moves it. A lease found lost by its
   * renewal refuses at once.
   */
  async check(): Promise<WriterError | null> {
    if (this.#statNow !== undefined) return this.#checkAfter(this.#lookAtDirectory(this.#statNow));
    const readAt = Date.now();
    let dir: FileStat | undefined;
    try {
      dir = await this.#fs.stat(this.#dir);
    } catch {
      dir = undefined; // gone (or unreadable): only the file can tell
    }
    return this.#checkAfter({ dir, readAt });
  }

  /** The directory, looked at now (undefined when gone or unreadable: only the file can tell), and when. */
  #lookAtDirectory(statNow: SynchronousStat): DirectoryLook {
    const readAt = Date.now();
    try {
      return { dir: statNow(this.#dir), readAt };
    } catch {
      return { dir: undefined, readAt };
    }
  }

  /** Whether `dir` is the directory the file was last seen linked in, with the same change time. */
  #unchanged(dir: FileStat | undefined): boolean {
    const seen = this.#seen;
    return dir !== undefined && seen !== null && dir.ino === seen.ino && dir.ctimeMs === seen.ctimeMs;
  }

  /** {@link LinkWatch.check}, given the look at the directory it starts with. */
  async #checkAfter({ dir, readAt }: DirectoryLook): Promise<WriterError | null> {
    if (this.#lock?.lost === true) return journalFencedError(this.#path, this.#lock.path);
    if (this.#unchanged(dir)) return null;
    // The lock before the file: a removal of both between the two looks then reads as the file's (unlinked), which
    // it is; in the other order a file seen linked just before the removal would make the gone lock a take-over.
    const lockFile = this.#lockFile;
    const lock =
      lockFile === undefined
        ? 'held'
        : this.#lockNow === undefined
          ? await this.#lockState(lockFile)
          : this.#lockStateNow(lockFile, this.#lockNow);
    if (lock instanceof Error) return lock;
    let links: number | undefined;
    try {
      links = (await this.#fs.fstat(this.#fd)).nlink;
    } catch (error) {
      return new JournalWriteError(this.#path, 'fstat after sync', error);
    }
    // A lock replaced by another holder's is a take-over whatever became of the file (its taker replaces the file,
    // TJ-DUR-041). A lock gone with the file is the journal removed under the writer (TJ-DUR-036); a lock gone while
    // the file keeps its name lets any writer take the file: fenced.
    if (lock === 'replaced' || (lock === 'gone' && links !== 0)) {
      this.#lock?.markLost();
      return journalFencedError(this.#path, this.#lock?.path ?? `${this.#path}.lock`);
    }
    if (links === 0) return journalUnlinkedError(this.#path);
    // The directory was read before the file: a change between the two reads moves its change time past this one.
    this.#seen =
      links !== undefined && dir?.ctimeMs !== undefined && isSettled(dir.ctimeMs, readAt)
        ? { ino: dir.ino, ctimeMs: dir.ctimeMs }
        : null;
    return null;
  }

  /** Whether the lock file is still the one the lock created (TJ-DUR-040), or the error of a failed look at it. */
  async #lockState(lockFile: LockFileWatch): Promise<LockFileState | WriterError> {
    try {
      const stat = this.#statNow ?? ((path: string) => this.#fs.stat(path));
      return await lockFile.state(stat, (path) => this.#fs.readFile(path));
    } catch (error) {
      return lockReadError(lockFile, error);
    }
  }

  /** The same, through the file system's synchronous twins. */
  #lockStateNow(lockFile: LockFileWatch, now: SynchronousLookups): LockFileState | WriterError {
    try {
      return lockFile.stateNow(now);
    } catch (error) {
      return lockReadError(lockFile, error);
    }
  }

  /** Checks the file open at `fd` from now on (a rewrite replaced the file); forgets what was seen of the old one. */
  use(fd: number): void {
    this.#fd = fd;
    this.#seen = null;
  }
}

function lockReadError(lockFile: LockFileWatch, error: unknown): WriterError {
  return new JournalWriteError(lockFile.path, 'read lock after sync', error);
}
