import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import {
  currentBootId,
  currentPidNamespace,
  type LockHolder,
  type LockLease,
  type LockStatus,
  lockStatusOf,
  safeParseLockHolder,
} from '@turnjournal/reader/store-format';
import { JournalLockedError, JournalWriteError } from '../errors.js';
import { attempt, removeStaleTemporaries, temporaryName, writeAll } from './durable-ops.js';
import type { FileSystem } from './file-system.js';
import { Lease, renewPeriodically } from './lease.js';

/** The holder this process writes: every member of the lock-file format, the token always. */
type OwnHolder = LockHolder & { readonly token: string };

/** A held lock file (spec §11.4). */
export interface HeldLock {
  /** The lock file. */
  readonly path: string;
  /** What this acquisition wrote into it. */
  readonly holder: OwnHolder;
  /** True when the lock was taken over from a dead holder (TJ-DUR-019). */
  readonly tookOver: boolean;
  /**
   * True when the holder it was taken over from was only presumed dead, its lease having expired (TJ-DUR-039): it may
   * still run (paused, or cut off from the disk), so the file it guards must be replaced before it is written
   * (TJ-DUR-041).
   */
  readonly tookOverExpiredLease: boolean;
  /** The inode of the lock file this acquisition created: the lock is still its own while `path` leads to it. */
  readonly ino: number;
  /** True once the lease's renewal found the lock file replaced or gone (TJ-DUR-040). */
  readonly lost: boolean;
  /** Records that a check found the lock file replaced or gone: the lease stops, and {@link HeldLock.lost} is true. */
  markLost(): void;
  /** Removes the lock file if it is still this acquisition's (compared by token). Never throws. */
  release(): Promise<void>;
}

/** Options of `acquireLock`. */
export interface AcquireLockOptions {
  /**
   * What a lock file's status is, from its text and, for a lock with a lease, its modification time; the real check
   * by default (tests substitute it).
   */
  readonly statusOf?: (text: string | undefined, lease?: LockLease) => LockStatus;
  /** How many times to retry while another process is taking over the same stale lock; 50 by default. */
  readonly takeoverAttempts?: number;
  /**
   * The lease this writer promises in its locks (`lease_ms`, TJ-DUR-038), in milliseconds; 10,000 by default. A
   * writer in another PID namespace of this machine takes the lock over once it has seen no renewal for this long, so
   * a container restarted on the same node gets its journals back within about twice this time after the crash.
   */
  readonly leaseMs?: number;
}

const TAKEOVER_RETRY_MS = 10;

/** The default lease of a lock (see {@link AcquireLockOptions.leaseMs}). */
export const DEFAULT_LEASE_MS = 10_000;

/**
 * Tokens of locks this process released but may have left behind (the unlink, or the read that checks the token,
 * failed). Such a lock names this running process, so no other check can prove it dead, and every later open of its
 * file here would fail with "the holder is running" until the process exits. A token is random and only this set
 * vouches for it: a lock naming this process with any other token (another writer in this process, or in a worker
 * thread) is never taken over on its account.
 */
const abandonedTokens = new Set<string>();

/** True when `text` is a lock this process abandoned (see {@link abandonedTokens}). */
function isAbandoned(text: string): boolean {
  const holder = safeParseLockHolder(text);
  return holder?.token !== undefined && holder.pid === process.pid && abandonedTokens.has(holder.token);
}

function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === code;
}

async function readText(fs: FileSystem, path: string): Promise<string | undefined> {
  try {
    return new TextDecoder().decode(await fs.readFile(path));
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw error;
  }
}

/**
 * Creates the lock file `path` holding `holder`, or answers false when it exists. The lock never appears without its
 * content (TJ-DUR-029): the holder is written to a temporary file, synced, then hard-linked as `path`, which fails
 * with EEXIST like `O_CREAT|O_EXCL` does; then the directory is synced. An empty lock would name nobody, and a lock
 * that names nobody can never be proved dead.
 */
async function createLockFile(fs: FileSystem, path: string, holder: LockHolder): Promise<number | false> {
  const temporary = temporaryName(path);
  const fd = await attempt(temporary, 'create lock', () => fs.open(temporary, 'create-exclusive'));
  let linked = false;
  let ino: number;
  try {
    try {
      await attempt(temporary, 'write lock', () =>
        writeAll(fs, fd, new TextEncoder().encode(JSON.stringify(holder)), 0, { awaited: true }),
      );
      await attempt(temporary, 'fsync lock', () => fs.fsync(fd));
      ino = (await attempt(temporary, 'fstat lock', () => fs.fstat(fd))).ino;
    } finally {
      await fs.close(fd).catch(() => undefined);
    }
    try {
      await fs.link(temporary, path);
    } catch (error) {
      // ENOENT: a writer that just acquired the lock removed our temporary file as a leftover; the lock exists.
      if (isErrno(error, 'EEXIST') || isErrno(error, 'ENOENT')) return false;
      throw new JournalWriteError(path, 'link lock', error);
    }
    linked = true;
    // A failure here must remove the lock too: left behind, it names this live process and locks the file out.
    await attempt(dirname(path), 'fsync directory', () => fs.fsyncDirectory(dirname(path)));
    return ino;
  } catch (error) {
    if (linked) await fs.unlink(path).catch(() => undefined);
    throw error;
  } finally {
    await fs.unlink(temporary).catch(() => undefined);
  }
}

/** This process's lock object; `leaseMs` when it renews a lease (its file system can set modification times). */
function newHolder(leaseMs: number | undefined): OwnHolder {
  const bootId = currentBootId();
  const namespace = currentPidNamespace();
  return {
    pid: process.pid,
    host: hostname(),
    token: randomBytes(16).toString('hex'),
    ...(bootId === null ? {} : { boot_id: bootId }),
    ...(namespace === null ? {} : { pid_ns: namespace }),
    ...(leaseMs === undefined ? {} : { lease_ms: leaseMs }),
  };
}

function holderOf(text: string | undefined): LockHolder | undefined {
  const parsed = text === undefined ? undefined : safeParseLockHolder(text);
  return parsed === undefined ? undefined : { pid: parsed.pid, host: parsed.host, token: parsed.token };
}

/** The lock file's modification time and the time now, when the file system keeps one; undefined when it is gone. */
async function leaseOf(fs: FileSystem, path: string): Promise<LockLease | undefined> {
  let modifiedMs: number | undefined;
  try {
    modifiedMs = (await fs.stat(path)).mtimeMs;
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw new JournalWriteError(path, 'stat lock', error);
  }
  return modifiedMs === undefined ? undefined : { modifiedMs, nowMs: Date.now() };
}

/**
 * Watches the lock at `path`, whose lease looks expired, for `leaseMs` on this process's
 * monotonic clock (TJ-DUR-039): true when neither its modification time nor its inode moved in that time (the holder
 * is presumed dead), false as soon as either moves (it renewed, or another writer took the lock). Watching is what
 * keeps a step of the wall clock from passing for an expired lease: only time this process saw pass counts.
 */
async function leaseRunsOut(fs: FileSystem, path: string, leaseMs: number): Promise<boolean> {
  const first = await statOrUndefined(fs, path);
  if (first === undefined) return false;
  const started = performance.now();
  const step = Math.max(5, Math.min(250, Math.floor(leaseMs / 10)));
  while (performance.now() - started < leaseMs) {
    await new Promise((resolve) => setTimeout(resolve, step));
    const now = await statOrUndefined(fs, path);
    if (now === undefined || now.ino !== first.ino || now.mtimeMs !== first.mtimeMs) return false;
  }
  return true;
}

async function statOrUndefined(fs: FileSystem, path: string): Promise<{ ino: number; mtimeMs?: number } | undefined> {
  try {
    return await fs.stat(path);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return undefined;
    throw new JournalWriteError(path, 'stat lock', error);
  }
}

/**
 * Acquires the lock file `path` for `subject` (the journal it guards, named in errors). The lock is created
 * exclusively; when it exists, a holder that runs (or that cannot be proved dead: another host, an unreadable lock)
 * makes this fail with {@link JournalLockedError} (TJ-DUR-018, TJ-DUR-020), and a holder proved dead is taken over
 * (TJ-DUR-019). Take-over is serialised by a second lock file, `<path>.takeover`, so that when several processes find
 * the same stale lock exactly one of them removes it and the others see the new holder: the stale lock is removed
 * only by the take-over lock's holder, and only after it re-reads the lock and finds the same stale token. (A
 * take-over lock itself left by a killed process is removed without that guard; two processes would have to find
 * that one at the same instant for both to proceed.)
 */
export async function acquireLock(
  fs: FileSystem,
  path: string,
  subject: string,
  options: AcquireLockOptions = {},
): Promise<HeldLock> {
  const statusOf = options.statusOf ?? lockStatusOf;
  const attempts = options.takeoverAttempts ?? 50;
  const touch = fs.touch?.bind(fs);
  const leaseMs = touch === undefined ? undefined : (options.leaseMs ?? DEFAULT_LEASE_MS);
  const holder = newHolder(leaseMs);
  let tookOver = false;
  let tookOverExpiredLease = false;
  for (let round = 0; round < attempts; round++) {
    const ino = await createLockFile(fs, path, holder);
    if (ino !== false) {
      // Temporary lock files of writers that crashed while creating theirs are now nobody's: remove them. One that
      // belongs to a writer racing us is harmless to remove: its link fails as if the lock existed.
      await removeStaleTemporaries(fs, path).catch(() => undefined);
      const lease = touch === undefined || leaseMs === undefined ? undefined : new Lease(fs, touch, path, ino, leaseMs);
      if (lease !== undefined) renewPeriodically(lease);
      return heldLock(fs, path, holder, ino, lease, tookOver, tookOverExpiredLease);
    }
    const text = await attempt(path, 'read lock', () => readText(fs, path));
    if (text === undefined) continue; // released between our create and our read: try again
    // An empty lock is one another implementation created with O_EXCL and has not written yet: give it a moment.
    if (text.trim() === '' && round < attempts - 1) {
      await new Promise((resolve) => setTimeout(resolve, TAKEOVER_RETRY_MS));
      continue;
    }
    const status = isAbandoned(text) ? 'stale' : statusOf(text, await leaseOf(fs, path));
    if (status === 'live') throw new JournalLockedError(subject, holderOf(text), 'the holder is running');
    if (status === 'unproven')
      throw new JournalLockedError(
        subject,
        holderOf(text),
        'the holder cannot be proved dead (another host, another PID namespace with no lease, or an unreadable lock file); remove the lock by hand once it is',
      );
    if (status === 'expired') {
      const leaseOfHolder = safeParseLockHolder(text)?.lease_ms ?? DEFAULT_LEASE_MS;
      if (!(await leaseRunsOut(fs, path, leaseOfHolder))) continue; // renewed, or taken: judge the lock again
    }
    if (await removeStaleLock(fs, path, text, statusOf, leaseMs)) {
      tookOver = true;
      if (status === 'expired') tookOverExpiredLease = true;
      const token = safeParseLockHolder(text)?.token;
      if (token !== undefined) abandonedTokens.delete(token);
    } else await new Promise((resolve) => setTimeout(resolve, TAKEOVER_RETRY_MS));
  }
  throw new JournalLockedError(
    subject,
    holderOf(await readText(fs, path).catch(() => undefined)),
    'another process kept taking over the same lock',
  );
}

/** Removes the stale lock whose text is `staleText`, under the take-over lock. False when another process is at it. */
async function removeStaleLock(
  fs: FileSystem,
  path: string,
  staleText: string,
  statusOf: (text: string | undefined, lease?: LockLease) => LockStatus,
  leaseMs: number | undefined,
): Promise<boolean> {
  const breakerPath = `${path}.takeover`;
  // A take-over lock is held for milliseconds and never renewed: once older than its lease, a writer of another PID
  // namespace may remove it (one of this namespace is judged by its pid).
  const breaker = newHolder(leaseMs);
  if ((await createLockFile(fs, breakerPath, breaker)) === false) {
    const breakerText = await attempt(breakerPath, 'read lock', () => readText(fs, breakerPath));
    const status = breakerText === undefined ? 'none' : statusOf(breakerText, await leaseOf(fs, breakerPath));
    if (status === 'stale' || status === 'expired')
      await removeIfPresent(fs, breakerPath, 'remove stale take-over lock');
    return false;
  }
  try {
    const current = await attempt(path, 'read lock', () => readText(fs, path));
    if (current === staleText) {
      await attempt(path, 'remove stale lock', () => fs.unlink(path));
      await attempt(dirname(path), 'fsync directory', () => fs.fsyncDirectory(dirname(path)));
    }
    return true;
  } finally {
    await fs.unlink(breakerPath).catch(() => undefined);
  }
}

function heldLock(
  fs: FileSystem,
  path: string,
  holder: OwnHolder,
  ino: number,
  lease: Lease | undefined,
  tookOver: boolean,
  tookOverExpiredLease: boolean,
): HeldLock {
  let released = false;
  let lost = false;
  return {
    path,
    holder,
    tookOver,
    tookOverExpiredLease,
    ino,
    get lost() {
      return lost || lease?.lost === true;
    },
    markLost() {
      lost = true;
      lease?.markLost();
    },
    async release() {
      if (released) return;
      released = true;
      lease?.end();
      try {
        const text = await readText(fs, path);
        if (text !== undefined && safeParseLockHolder(text)?.token === holder.token) {
          await fs.unlink(path);
          await fs.fsyncDirectory(dirname(path));
        }
      } catch {
        // A lock that cannot be removed is left behind: a writer in another process takes it over once this process
        // has exited, and the next open in this one at once (see `abandonedTokens`).
        abandonedTokens.add(holder.token);
      }
    },
  };
}

/** Removes `path`; one already gone (another writer removed it first) is what was wanted. Other failures throw. */
async function removeIfPresent(fs: FileSystem, path: string, operation: string): Promise<void> {
  try {
    await fs.unlink(path);
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw new JournalWriteError(path, operation, error);
  }
}
