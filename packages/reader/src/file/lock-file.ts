import { closeSync, fstatSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { openRegularSync } from './open-regular.js';

/**
 * Who holds a journal's writer lock (`<file>.lock`, spec §11.4):
 * - `none`: no lock file;
 * - `live`: the holder runs: a process with the recorded pid in this PID namespace, or a holder in another PID
 *   namespace of this machine whose lease is fresh (TJ-DUR-038);
 * - `stale`: the recorded process is gone (the lock can be taken over, `stale_lock`);
 * - `expired`: the holder runs in another PID namespace of this machine (another container) and its lease has not
 *   been renewed for longer than its `lease_ms`: presumed dead, taken over once a writer has watched it for `lease_ms`
 *   without a renewal (TJ-DUR-039);
 * - `unproven`: the lock names another machine or cannot be read; nobody may treat it as dead (TJ-DUR-020).
 */
export type LockStatus = 'none' | 'live' | 'stale' | 'expired' | 'unproven';

/**
 * Who holds a writer lock, as its lock file `<file>.lock` records it (spec §11.4): the one lock-file format that
 * writers write and readers (audits, take-over) read. `token` and `boot_id` are written by every reference writer;
 * a lock written by another implementation may lack them.
 */
export interface LockHolder {
  /** Process id of the holder. */
  readonly pid: number;
  /** Host name of the holder. */
  readonly host: string;
  /** Random token of the acquisition. */
  readonly token?: string;
  /** Linux boot id when the lock was taken; a different current boot id proves the holder dead. */
  readonly boot_id?: string;
  /**
   * The holder's PID namespace (Linux: the target of `/proc/self/ns/pid`, e.g. `pid:[4026531836]`). Its `pid` proves
   * nothing in another namespace: two containers on one kernel each have a pid 1 (TJ-DUR-038).
   */
  readonly pid_ns?: string;
  /**
   * How long the holder's lease lasts, in milliseconds: the holder renews it by setting the lock file's modification
   * time well within that period, so that a writer in another PID namespace can tell a live holder from a dead one.
   */
  readonly lease_ms?: number;
}

/** Parses a lock file's text; undefined when it is not a lock object with a positive integer `pid` and a `host`. */
export function safeParseLockHolder(text: string): LockHolder | undefined {
  let holder: unknown;
  try {
    holder = JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return undefined;
  }
  if (typeof holder !== 'object' || holder === null) return undefined;
  const { pid, host } = holder as { pid?: unknown; host?: unknown };
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0 || typeof host !== 'string') return undefined;
  // A lease or namespace of the wrong type is a lock that cannot be judged: it proves nothing either way.
  const { pid_ns, lease_ms } = holder as { pid_ns?: unknown; lease_ms?: unknown };
  if (pid_ns !== undefined && typeof pid_ns !== 'string') return undefined;
  if (lease_ms !== undefined && (typeof lease_ms !== 'number' || !Number.isSafeInteger(lease_ms) || lease_ms <= 0))
    return undefined;
  return holder as LockHolder;
}

let cachedBootId: string | null | undefined;

/** This machine's boot id (Linux), or null where the system has none. */
export function currentBootId(): string | null {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch (error) {
      // No /proc (not Linux, or not mounted): locks then record no boot id, and hosts are judged by name alone.
      if (!isErrnoCode(error, ['ENOENT', 'EACCES', 'EPERM', 'ENOTDIR'])) throw error;
      cachedBootId = null;
    }
  }
  return cachedBootId;
}

let cachedPidNamespace: string | null | undefined;

/** This process's PID namespace (Linux: `pid:[<inode>]`), or null where the system has none. */
export function currentPidNamespace(): string | null {
  if (cachedPidNamespace === undefined) {
    try {
      cachedPidNamespace = readlinkSync('/proc/self/ns/pid') || null;
    } catch (error) {
      // No /proc (not Linux, or not mounted): the lock then records no namespace, and pids are judged as before.
      if (!isErrnoCode(error, ['ENOENT', 'EACCES', 'EPERM', 'ENOTDIR'])) throw error;
      cachedPidNamespace = null;
    }
  }
  return cachedPidNamespace;
}

function isErrnoCode(error: unknown, codes: readonly string[]): boolean {
  return codes.includes((error as NodeJS.ErrnoException | undefined)?.code ?? '');
}

/** What is known of a lock file besides its text: when it was last modified (its lease renewed) and the time now. */
export interface LockLease {
  /** The lock file's modification time, in milliseconds since the epoch. */
  readonly modifiedMs: number;
  /** The current time on the same clock, in milliseconds since the epoch. */
  readonly nowMs: number;
}

/**
 * How far a lease's renewal may seem to lie in the future before it is doubted: clocks of one machine agree, but a
 * modification time is rounded to the file system's granularity.
 */
const LEASE_SKEW_MS = 1000;

/**
 * The longest lease a writer watches before a take-over (TJ-DUR-039): five minutes. A lock promising a longer one is
 * unproven, so that a lock file naming a lease of years cannot hold an open waiting for ever.
 */
export const MAX_LEASE_MS = 300_000;

/**
 * The status of a lock given the text of its lock file (undefined: no lock file) and, for a lock with a lease, its
 * modification time (see {@link LockLease}). A holder on this machine (its host, or its boot id: containers on one
 * kernel may have other host names) is judged by its pid when it runs in this PID namespace or names none
 * (TJ-DUR-019), and by its lease when it runs in another (TJ-DUR-038): live while the lease was renewed within
 * `lease_ms`, `expired` after. A lease renewed in the future by more than a second is not trusted either way: the
 * wall clock stepped back since, and only watching the lease (TJ-DUR-039) can tell. A lock of another machine, or of
 * another namespace with no lease or one longer than {@link MAX_LEASE_MS}, is `unproven`.
 */
export function lockStatusOf(text: string | undefined, lease?: LockLease): LockStatus {
  if (text === undefined) return 'none';
  const holder = safeParseLockHolder(text);
  if (holder === undefined) return 'unproven';
  const bootId = currentBootId();
  const sameHost = holder.host === hostname();
  const sameBoot = typeof holder.boot_id === 'string' && bootId !== null && holder.boot_id === bootId;
  if (!sameHost && !sameBoot) return 'unproven';
  if (sameHost && typeof holder.boot_id === 'string' && bootId !== null && !sameBoot) return 'stale';
  const namespace = currentPidNamespace();
  const pidProves = holder.pid_ns === undefined ? sameHost : namespace !== null && holder.pid_ns === namespace;
  if (pidProves) return isProcessAlive(holder.pid) ? 'live' : 'stale';
  if (holder.lease_ms === undefined || holder.lease_ms > MAX_LEASE_MS || lease === undefined) return 'unproven';
  const age = lease.nowMs - lease.modifiedMs;
  return age >= -LEASE_SKEW_MS && age <= holder.lease_ms ? 'live' : 'expired';
}

/** Reads the status of the writer lock of a journal file. Never throws. */
export function readLockStatus(file: string): LockStatus {
  let text: string;
  let modifiedMs: number;
  try {
    // Most journals have no lock: asking first spares the error object a failed read builds (a store scan asks this
    // of every file). A lock removed in between is still ENOENT below.
    if (statSync(`${file}.lock`, { throwIfNoEntry: false }) === undefined) return 'none';
    // A lock that is a FIFO or a device would hang or never end the read: only a regular file is read (TJ-FAM-024),
    // anything else is a lock that proves nothing ('unproven').
    const { fd } = openRegularSync(`${file}.lock`);
    try {
      text = readFileSync(fd, 'utf8');
      modifiedMs = fstatSync(fd).mtimeMs;
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'none' : 'unproven';
  }
  return lockStatusOf(text, { modifiedMs, nowMs: Date.now() });
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/**
 * True when the process has exited and only waits for its parent to reap it (Linux state `Z`): `kill(pid, 0)` still
 * succeeds for it, but it holds nothing. A writer killed under a shell that has not reaped it yet looks like this.
 */
function isZombie(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    // No /proc (not Linux), or the process just went (ESRCH on some kernels): the answer stands as "alive".
    if (!isErrnoCode(error, ['ENOENT', 'ESRCH', 'EACCES', 'EPERM', 'ENOTDIR'])) throw error;
    return false;
  }
  // The command name in parentheses may itself contain ") ": the state follows the last one.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
}
