import { closeSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { openRegularSync } from '../framing/open-regular.js';

/**
 * Who holds a journal's writer lock (`<file>.lock`, spec §11.4):
 * - `none`: no lock file;
 * - `live`: a process on this host with the recorded pid runs;
 * - `stale`: the recorded process is gone (the lock can be taken over, `stale_lock`);
 * - `unproven`: the lock names another host or cannot be read; nobody may treat it as dead (TJ-DUR-020).
 */
export type LockStatus = 'none' | 'live' | 'stale' | 'unproven';

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
}

/** Parses a lock file's text; undefined when it is not a lock object with a positive integer `pid` and a `host`. */
export function safeParseLockHolder(text: string): LockHolder | undefined {
  let holder: unknown;
  try {
    holder = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof holder !== 'object' || holder === null) return undefined;
  const { pid, host } = holder as { pid?: unknown; host?: unknown };
  if (typeof pid !== 'number' || !Number.isSafeInteger(pid) || pid <= 0 || typeof host !== 'string') return undefined;
  return holder as LockHolder;
}

let cachedBootId: string | null | undefined;

/** This machine's boot id (Linux), or null where the system has none. */
export function currentBootId(): string | null {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId;
}

/**
 * The status of a lock given the text of its lock file (undefined: no lock file). A holder is proved dead only on
 * this host: when its pid does not run, or when the lock records a boot id and the machine has booted since.
 */
export function lockStatusOf(text: string | undefined): LockStatus {
  if (text === undefined) return 'none';
  const holder = safeParseLockHolder(text);
  if (holder === undefined || holder.host !== hostname()) return 'unproven';
  const bootId = currentBootId();
  if (typeof holder.boot_id === 'string' && bootId !== null && holder.boot_id !== bootId) return 'stale';
  return isProcessAlive(holder.pid) ? 'live' : 'stale';
}

/** Reads the status of the writer lock of a journal file. Never throws. */
export function readLockStatus(file: string): LockStatus {
  let text: string;
  try {
    // Most journals have no lock: asking first spares the error object a failed read builds (a store scan asks this
    // of every file). A lock removed in between is still ENOENT below.
    if (statSync(`${file}.lock`, { throwIfNoEntry: false }) === undefined) return 'none';
    // A lock that is a FIFO or a device would hang or never end the read: only a regular file is read (TJ-FAM-024),
    // anything else is a lock that proves nothing ('unproven').
    const { fd } = openRegularSync(`${file}.lock`);
    try {
      text = readFileSync(fd, 'utf8');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'none' : 'unproven';
  }
  return lockStatusOf(text);
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
  } catch {
    return false; // no /proc (not Linux), or the process just went: the answer stands as "alive"
  }
  // The command name in parentheses may itself contain ") ": the state follows the last one.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
}
