import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Who holds a journal's writer lock (`<file>.lock`, spec §11.4):
 * - `none`: no lock file;
 * - `live`: a process on this host with the recorded pid runs;
 * - `stale`: the recorded process is gone (the lock can be taken over, `stale_lock`);
 * - `unproven`: the lock names another host or cannot be read; nobody may treat it as dead (TJ-DUR-020).
 */
export type LockStatus = 'none' | 'live' | 'stale' | 'unproven';

/** Reads the status of the writer lock of a journal file. Never throws. */
export function readLockStatus(file: string): LockStatus {
  let text: string;
  try {
    text = readFileSync(`${file}.lock`, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'none' : 'unproven';
  }
  let holder: { pid?: unknown; host?: unknown };
  try {
    holder = JSON.parse(text) as { pid?: unknown; host?: unknown };
  } catch {
    return 'unproven';
  }
  if (
    typeof holder.pid !== 'number' ||
    !Number.isSafeInteger(holder.pid) ||
    holder.pid <= 0 ||
    holder.host !== hostname()
  ) {
    return 'unproven';
  }
  return isProcessAlive(holder.pid) ? 'live' : 'stale';
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
