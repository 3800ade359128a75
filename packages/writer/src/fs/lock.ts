import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import {
  currentBootId,
  type LockHolder,
  type LockStatus,
  lockStatusOf,
  safeParseLockHolder,
} from '@turnjournal/reader/store-format';
import { JournalLockedError, JournalWriteError } from '../errors.js';

/** The holder this process writes: every member of the lock-file format, the token always. */
type OwnHolder = LockHolder & { readonly token: string };

import { attempt, removeStaleTemporaries, temporaryName, writeAll } from './durable-ops.js';
import type { FileSystem } from './file-system.js';

/** A held lock file (spec §11.4). */
export interface HeldLock {
  /** The lock file. */
  readonly path: string;
  /** What this acquisition wrote into it. */
  readonly holder: OwnHolder;
  /** True when the lock was taken over from a dead holder (TJ-DUR-019). */
  readonly tookOver: boolean;
  /** Removes the lock file if it is still this acquisition's (compared by token). Never throws. */
  release(): Promise<void>;
}

/** Options of `acquireLock`. */
export interface AcquireLockOptions {
  /** What a lock file's status is, from its text; the real check by default (tests substitute it). */
  readonly statusOf?: (text: string | undefined) => LockStatus;
  /** How many times to retry while another process is taking over the same stale lock; 50 by default. */
  readonly takeoverAttempts?: number;
}

const TAKEOVER_RETRY_MS = 10;

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
async function createLockFile(fs: FileSystem, path: string, holder: LockHolder): Promise<boolean> {
  const temporary = temporaryName(path);
  const fd = await attempt(temporary, 'create lock', () => fs.open(temporary, 'create-exclusive'));
  let linked = false;
  try {
    try {
      await attempt(temporary, 'write lock', () =>
        writeAll(fs, fd, new TextEncoder().encode(JSON.stringify(holder)), 0, { awaited: true }),
      );
      await attempt(temporary, 'fsync lock', () => fs.fsync(fd));
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
    return true;
  } catch (error) {
    if (linked) await fs.unlink(path).catch(() => undefined);
    throw error;
  } finally {
    await fs.unlink(temporary).catch(() => undefined);
  }
}

function newHolder(): OwnHolder {
  const bootId = currentBootId();
  return {
    pid: process.pid,
    host: hostname(),
    token: randomBytes(16).toString('hex'),
    ...(bootId === null ? {} : { boot_id: bootId }),
  };
}

function holderOf(text: string | undefined): LockHolder | undefined {
  const parsed = text === undefined ? undefined : safeParseLockHolder(text);
  return parsed === undefined ? undefined : { pid: parsed.pid, host: parsed.host, token: parsed.token };
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
  const holder = newHolder();
  let tookOver = false;
  for (let round = 0; round < attempts; round++) {
    if (await createLockFile(fs, path, holder)) {
      // Temporary lock files of writers that crashed while creating theirs are now nobody's: remove them. One that
      // belongs to a writer racing us is harmless to remove: its link fails as if the lock existed.
      await removeStaleTemporaries(fs, path).catch(() => undefined);
      return heldLock(fs, path, holder, tookOver);
    }
    const text = await attempt(path, 'read lock', () => readText(fs, path));
    if (text === undefined) continue; // released between our create and our read: try again
    // An empty lock is one another implementation created with O_EXCL and has not written yet: give it a moment.
    if (text.trim() === '' && round < attempts - 1) {
      await new Promise((resolve) => setTimeout(resolve, TAKEOVER_RETRY_MS));
      continue;
    }
    const status = isAbandoned(text) ? 'stale' : statusOf(text);
    if (status === 'live') throw new JournalLockedError(subject, holderOf(text), 'the holder is running');
    if (status === 'unproven')
      throw new JournalLockedError(
        subject,
        holderOf(text),
        'the holder cannot be proved dead (another host, or an unreadable lock file); remove the lock by hand once it is',
      );
    if (await removeStaleLock(fs, path, text, statusOf)) {
      tookOver = true;
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
  statusOf: (text: string | undefined) => LockStatus,
): Promise<boolean> {
  const breakerPath = `${path}.takeover`;
  const breaker = newHolder();
  if (!(await createLockFile(fs, breakerPath, breaker))) {
    const breakerText = await attempt(breakerPath, 'read lock', () => readText(fs, breakerPath));
    if (breakerText !== undefined && statusOf(breakerText) === 'stale')
      await fs.unlink(breakerPath).catch(() => undefined);
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

function heldLock(fs: FileSystem, path: string, holder: OwnHolder, tookOver: boolean): HeldLock {
  let released = false;
  return {
    path,
    holder,
    tookOver,
    async release() {
      if (released) return;
      released = true;
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
